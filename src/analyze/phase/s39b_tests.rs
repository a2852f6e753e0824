//! Session 39 (f39b): a loss computed by a program named for evaluation
//! (`user_code::evaluation_script`), and a notebook cell's listing kept under a traceback's head
//! (`explain.rs` `keep_cell_listing`), with the caller's statement not taken from a library
//! frame's IPython arrow (`inference/statement.rs` `library_arrow`).

use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 0 \
has a total capacity of 79.19 GiB of which 1.38 GiB is free. Including non-PyTorch memory, this \
process has 77.79 GiB memory in use. Of the allocated memory 76.50 GiB is allocated by PyTorch, \
and 20.00 MiB is reserved by PyTorch but unallocated.";

fn labelled_forward_in(script: &str) -> String {
    format!(
        "Traceback (most recent call last):\n  File \"/home/u/{script}\", line 17, in <module>\n    \
         loss = model(input_ids=ids, labels=ids).loss\n  File \"/venv/lib/python3.12/site-packages/\
         torch/nn/modules/module.py\", line 1779, in _wrapped_call_impl\n    return \
         self._call_impl(*args, **kwargs)\n{OOM}\n"
    )
}

#[test]
fn a_loss_computed_by_a_program_named_for_evaluation_is_the_evaluation() {
    for script in [
        "eval_ppl.py",
        "evaluate.py",
        "run_eval.py",
        "perplexity_wikitext.py",
    ] {
        assert_eq!(
            phase(&labelled_forward_in(script)),
            Phase::Inference,
            "{script}"
        );
    }
}

#[test]
fn a_loss_computed_by_a_training_or_test_program_stays_a_training_step() {
    for script in ["finetune.py", "train_eval.py", "run.py", "test_eval.py"] {
        assert_ne!(
            phase(&labelled_forward_in(script)),
            Phase::Inference,
            "{script}"
        );
    }
}

fn notebook(cell: &str) -> String {
    format!(
        "---------------------------------------------------------------------------\n\
         OutOfMemoryError                          Traceback (most recent call last)\n\
         Cell In[3], line 2\n{cell}\n\
         File /venv/lib/python3.12/site-packages/torch/nn/modules/module.py:1779, in \
         Module._wrapped_call_impl(self, *args, **kwargs)\n\
         -> 1779     return self._call_impl(*args, **kwargs)\n\n\
         File /venv/lib/python3.12/site-packages/torch/nn/modules/dropout.py:73, in \
         Dropout.forward(self, input)\n\
         ---> 73 return F.dropout(input, self.p, self.training, self.inplace)\n\n\
         {OOM}\n"
    )
}

#[test]
fn a_notebook_cell_listing_a_backward_after_the_forward_is_a_training_step() {
    let cell = "      1 model.train()\n----> 2 out = model(**batch)\n      3 out.loss.backward()\n      4 opt.step()\n";
    assert_eq!(phase(&notebook(cell)), Phase::TrainingStep);
}

#[test]
fn a_notebook_cell_without_a_backward_is_no_training_step() {
    let cell =
        "      1 model.eval()\n----> 2 out = model(**batch)\n      3 print(out.logits.shape)\n";
    assert_ne!(phase(&notebook(cell)), Phase::TrainingStep);
}
