//! Session 54: the stages the first reading of the session's blind batches missed (IPython 7's
//! frames of a notebook's own functions and their arrow statements, DeepSpeed-Inference's
//! injected layers, accelerate's data loader moving a batch, a training's sample previews,
//! GPT-2's sampling graph in TensorFlow, an optimizer's slot variables initialised, MLC-LLM's
//! C++ chat module in TVM's traceback, an allocator's request read as a size).

use super::s42_tests::MESSAGE;
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

#[test]
fn ipython_7_frames_of_a_notebooks_function_give_its_statement() {
    let text = format!(
        "RuntimeError                              Traceback (most recent call last)\n\
         <ipython-input-21-e8a871a0e98d> in <module>()\n      \
         6 train(output_directory, log_directory, checkpoint_path,\n\
         ----> 7       warm_start, n_gpus, rank, group_name, hparams)\n\n\
         <ipython-input-7-e3d97036c5f7> in train(output_directory, log_directory)\n    \
         239 \n\
         --> 240     model = load_model(hparams)\n    \
         241     learning_rate = hparams.learning_rate\n\n\
         <ipython-input-7-e3d97036c5f7> in load_model(hparams)\n    \
         121 def load_model(hparams):\n\
         --> 122     model = Tacotron2(hparams).cuda()\n\n\
         {MESSAGE}\n"
    );
    assert_eq!(phase(&text), Phase::WeightsLoad);
    // A library frame's arrow (four digits) is that frame's statement, not the notebook's call.
    let library = format!(
        "<ipython-input-3-1c2d> in <module>\n\
         ----> 1 out = f(batch)\n\n\
         /usr/local/lib/python3.7/dist-packages/torch/nn/modules/module.py in \
         _call_impl(self, *input, **kwargs)\n   \
         1101             return forward_call(*input, **kwargs)\n\
         -> 1102         result = self.forward(*input, **kwargs)\n\n\
         {MESSAGE}\n"
    );
    assert_eq!(phase(&library), Phase::Unknown);
}

#[test]
fn deepspeed_inferences_injected_layer_runs_inference() {
    let text = "Traceback (most recent call last):\n  \
        File \"C:\\app\\src\\tortoise\\models\\autoregressive.py\", line 150, in forward\n    \
        hidden_states = self.transformer(inputs_embeds=emb)\n  \
        File \"C:\\app\\runtime\\lib\\site-packages\\deepspeed\\model_implementations\\\
        transformers\\ds_transformer.py\", line 141, in forward\n    \
        self.allocate_workspace(self.config.hidden_size, self.config.heads,\n\
        RuntimeError: Workspace can't be allocated, no enough memory.\n";
    assert_eq!(phase(text), Phase::Inference);
}

#[test]
fn a_batch_moved_by_accelerates_data_loader_belongs_to_the_loop() {
    let text = format!(
        "Traceback (most recent call last):\n  \
         File \"/app/dreambooth/train_dreambooth.py\", line 1047, in main\n    \
         for step, batch in enumerate(train_dataloader):\n  \
         File \"/venv/lib/site-packages/accelerate/data_loader.py\", line 383, in __iter__\n    \
         current_batch = send_to_device(current_batch, self.device)\n  \
         File \"/venv/lib/site-packages/accelerate/utils/operations.py\", line 123, in \
         _send_to_device\n    \
         return t.to(device, non_blocking=non_blocking)\n\
         {MESSAGE}\n"
    );
    assert_eq!(phase(&text), Phase::TrainingStep);
    // accelerate's move of a model's tensors is still a load.
    let load = format!(
        "Traceback (most recent call last):\n  \
         File \"/app/run.py\", line 9, in <module>\n    \
         model = prepare(model)\n  \
         File \"/venv/lib/site-packages/accelerate/utils/operations.py\", line 123, in \
         send_to_device\n    \
         return t.to(device, non_blocking=non_blocking)\n\
         {MESSAGE}\n"
    );
    assert_eq!(phase(&load), Phase::WeightsLoad);
}

#[test]
fn a_trainings_sample_previews_are_inference() {
    let text = format!(
        "Steps:  40%|████      | 1200/3000 [20:01<30:02, 1.00s/it, loss=0.0078, lr=2e-6]\n\
         Generating Samples:   0%| | 0/4 [00:00<?, ?it/s, loss=0.00784, loss_avg=0.101, \
         Exception saving sample: {MESSAGE}\n"
    );
    assert_eq!(phase(&text), Phase::Inference);
    // A dataset's preparation is no sampling.
    let split = format!(
        "Generating train split: 100%|██████████| 1000/1000 [00:00<00:00, 5000.00 \
         examples/s]\n{MESSAGE}\n"
    );
    assert_ne!(phase(&split), Phase::Inference);
}

const TF_OOM: &str = "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when \
                      allocating tensor with shape[20,25,2,16,999,64] and type float on \
                      /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc";

#[test]
fn gpt2s_sampling_graph_is_generation() {
    for node in [
        "\t [[{{node sample_sequence/while/concat}}]]",
        "\t [[node sample_sequence/while/concat (defined at /model/models/gpt2/sample.py:61) ]]",
    ] {
        let text = format!("{TF_OOM}\n{node}\n");
        assert_eq!(phase(&text), Phase::Inference, "{node}");
    }
}

#[test]
fn an_optimizers_slot_variable_initialised_is_no_step() {
    let text = format!(
        "{TF_OOM}\n\t [[node training/Adam/Variable_30/Assign (defined at \
         /keras/backend/tensorflow_backend.py:402) ]]\n"
    );
    assert_eq!(phase(&text), Phase::Unknown);
    let step = format!(
        "{TF_OOM}\n\t [[node training/Adam/gradients/conv2d/Conv2D_grad/Conv2DBackpropInput \
         (defined at /keras/backend/tensorflow_backend.py:3009) ]]\n"
    );
    assert_eq!(phase(&step), Phase::TrainingStep);
}

#[test]
fn mlc_llms_chat_module_reload_in_tvms_traceback_is_a_load() {
    let text = "Error: Traceback (most recent call last):\n  \
        8: mlc::llm::LLMChat::Reload(tvm::runtime::TVMArgValue, tvm::runtime::String, \
        tvm::runtime::String)\n        at /workspace/mlc-llm/cpp/llm_chat.cc:504\n  \
        7: LoadParams\n        at /workspace/mlc-llm/cpp/llm_chat.cc:237\n\
        TVMError: Check failed: (__e == VK_SUCCESS) is false: Vulkan Error, code=-2: \
        VK_ERROR_OUT_OF_DEVICE_MEMORY\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
}

#[test]
fn an_allocators_request_is_a_size_not_a_served_request() {
    let text = "RuntimeError: out of memory while requesting 68719476736 bytes; you can try \
                setting MGB_CUDA_RESERVE_MEMORY to reserve all memory.\n";
    assert_eq!(phase(text), Phase::Unknown);
}

#[test]
fn a_frame_in_typographic_quotes_with_its_statement_joined() {
    let text = format!(
        "Traceback (most recent call last):\n\n\
         File \u{201c}/srv/app/llm_studio/src/utils/modeling_utils.py\u{201d}, line 754, in \
         create_nlp_backbone backbone = model_class.from_pretrained(\n\n\
         File \u{201c}/venv/lib/python3.10/site-packages/transformers/modeling_utils.py\u{201d}, \
         line 3694, in from_pretrained ) = cls._load_pretrained_model(\n\n\
         {MESSAGE}\n"
    );
    assert_eq!(phase(&text), Phase::WeightsLoad);
}

#[test]
fn mmdetections_split_forward_and_its_assigners() {
    let frames = |function: &str, file: &str| {
        format!(
            "Traceback (most recent call last):\n  \
             File \"/srv/{file}\", line 77, in {function}\n    \
             x = self.f(y)\n\
             {MESSAGE}\n"
        )
    };
    for (function, file, stage) in [
        (
            "forward_train",
            "mmdet/models/detectors/two_stage.py",
            Phase::TrainingStep,
        ),
        (
            "assign",
            "mmdet/core/bbox/assigners/max_iou_assigner.py",
            Phase::TrainingStep,
        ),
        (
            "simple_test",
            "mmdet/models/detectors/two_stage.py",
            Phase::Inference,
        ),
        (
            "forward_test",
            "mmedit/models/restorers/basicvsr.py",
            Phase::Inference,
        ),
    ] {
        assert_eq!(phase(&frames(function, file)), stage, "{function}");
    }
    // An `assign` elsewhere is no assigner.
    assert_eq!(phase(&frames("assign", "app/config.py")), Phase::Unknown);
}

#[test]
fn lightllms_start_up_and_router_frames() {
    let frames = |function: &str, file: &str| {
        format!(
            "Traceback (most recent call last):\n  \
             File \"/opt/lightllm/{file}\", line 120, in {function}\n    \
             self.f()\n\
             {MESSAGE}\n"
        )
    };
    for (function, file, stage) in [
        (
            "_check_max_len_infer",
            "lightllm/common/basemodel/basemodel.py",
            Phase::Profiling,
        ),
        (
            "_init_mem_manager",
            "lightllm/common/basemodel/basemodel.py",
            Phase::KvCacheAlloc,
        ),
        (
            "exposed_prefill_batch",
            "lightllm/server/router/model_infer/model_rpc.py",
            Phase::Inference,
        ),
    ] {
        assert_eq!(phase(&frames(function, file)), stage, "{function}");
    }
}

#[test]
fn a_quantizers_bar_over_the_layers_is_the_conversion() {
    for bar in [
        "Quantizing model.language_model.layers.0:   0%|          | 0/36 [00:00<?, ?it/s]",
        "Quantizing weights:   9%|▉         | 160/1771 [00:00<00:01, 1008.71it/s]",
    ] {
        let text = format!("{bar}\n{MESSAGE}\n");
        assert_eq!(phase(&text), Phase::FormatConversion, "{bar}");
    }
}
