//! The stage read from the caller's own code, when no library frame names it: the frames of a
//! traceback that are not a library's (a script, a notebook cell, an app's own files), read
//! innermost first, by the statement each was running (`loss.backward()`, `for x in
//! train_loader:`, `model = AutoModel.from_pretrained(…)`) and then by the name it was given
//! (`def train_one_epoch`, `def evaluate`, `def load_model`).
//!
//! Conventions read (docs/phases.md, "The caller's own code"): Python installs libraries under
//! `site-packages`/`dist-packages` and keeps its standard library in `lib/pythonX.Y`; what lies
//! elsewhere is the caller's. Training and evaluation code is named after what it does (the
//! PyTorch tutorials' `train_loop`/`test_loop`, the examples' `train_one_epoch`/`evaluate`,
//! Lightning's `training_step`/`validation_step`); a training step calls `backward` and an
//! optimizer's `step`; weights come from `from_pretrained`, `load_state_dict`, `torch.load` and
//! `Module.to`/`.cuda()`. A name or statement that says two stages at once decides nothing.
//!
//! This file reads the frames; `names.rs` holds the stage a name or free words say (a function,
//! a library's function, an app's node, words next to a failure), `statement.rs` the stage a
//! statement says by what it calls and the pieces of a statement other readings use.

use super::Frame;
use crate::model::explain::Phase;

/// What the caller's code shows: the phase and the evidence line.
pub fn user_code_phase(frames: &[Frame]) -> Option<(Phase, String)> {
    // A forward given the labels (`model(input_ids=x, labels=x)`) computes the training loss;
    // it decides last, and only where no frame around it names another stage (an evaluation
    // loop computes the same loss).
    let mut loss_forward: Option<(Phase, String)> = None;
    for frame in frames.iter().rev() {
        if frame.called {
            continue;
        }
        if is_library_file(&frame.file) {
            // Gradio's event dispatch (`gradio/queueing.py` `call_prediction` in 3.x,
            // `route_utils.call_process_api`, `blocks.py` `process_api` / `call_function`) runs
            // whatever the app bound to a button, a model's load as much as its use: its
            // "prediction" is the handler's output, no stage.
            if frame.file.replace('\\', "/").contains("/gradio/") {
                continue;
            }
            if let Some(phase) = library_name_phase(&frame.function) {
                return Some((
                    phase,
                    format!(
                        "line {}: library function `{}` ({}) is named for {} (no rule names \
                         it; no frame below it shows the stage)",
                        frame.line,
                        frame.function,
                        super::short_path(&frame.file),
                        noun(phase)
                    ),
                ));
            }
            if inference_module(&frame.file) {
                return Some((
                    Phase::Inference,
                    format!(
                        "line {}: library file {} is a prediction module (no rule names `{}`; \
                         no frame below it shows the stage): {}",
                        frame.line,
                        super::short_path(&frame.file),
                        frame.function,
                        noun(Phase::Inference)
                    ),
                ));
            }
            continue;
        }
        let place = place(frame);
        if let Some((phase, what)) = frame.code.as_deref().and_then(statement_phase) {
            let code = frame.code.as_deref().unwrap_or_default();
            return Some((
                phase,
                format!(
                    "line {}: your code{place} runs `{}`, {what}: {}",
                    frame.line + 1,
                    clip(code),
                    noun(phase)
                ),
            ));
        }
        // pytest's test functions (`test_*` in `test_*.py` / `*_test.py`) are named for what
        // they check, not for a stage.
        if is_pytest_test(frame) {
            loss_forward = None;
            continue;
        }
        if loss_forward.is_none() {
            if let Some((what, shown)) = loss_computed(frame) {
                loss_forward = Some((
                    Phase::TrainingStep,
                    format!(
                        "line {}: your code{place} {what} `{}`, a loss computed (a training \
                         step's; no frame around it names another stage): {}",
                        frame.line + u64::from(what == "runs"),
                        clip(shown),
                        noun(Phase::TrainingStep)
                    ),
                ));
            }
        }
        if loss_forward.is_none() {
            if let Some(code) = frame.code.as_deref().filter(|code| labelled_forward(code)) {
                loss_forward = Some((
                    Phase::TrainingStep,
                    format!(
                        "line {}: your code{place} runs `{}`, a forward given the labels (it \
                         computes the training loss; no frame around it names another stage): \
                         {}",
                        frame.line + 1,
                        clip(code),
                        noun(Phase::TrainingStep)
                    ),
                ));
            }
        }
        if let Some(phase) = name_phase(&frame.function) {
            return Some((
                phase,
                format!(
                    "line {}: your function `{}`{place} is named for {} (no library frame \
                     below it shows the stage)",
                    frame.line,
                    frame.function,
                    noun(phase)
                ),
            ));
        }
    }
    // Under a `@torch.no_grad()` / `@torch.inference_mode()` decorator (its wrapper frame,
    // `decorate_context` in `torch/utils/_contextlib.py`, `autograd/grad_mode.py` before 2.0) no
    // gradient is kept: the loss is an evaluation's.
    let no_grad = frames.iter().any(|frame| {
        let file = frame.file.replace('\\', "/");
        frame.function == "decorate_context"
            && (file.contains("torch/utils/_contextlib.py")
                || file.contains("autograd/grad_mode.py"))
    });
    // A program named for evaluation (`eval_ppl.py`, `evaluate.py`, `perplexity_wikitext.py`):
    // the loss its forward computes is the evaluation's figure, no training step's (read as
    // such by `inference::statement::loss_for_evaluation`).
    let evaluation_program = frames.iter().any(|frame| {
        !frame.called && !is_library_file(&frame.file) && evaluation_script(&frame.file)
    });
    loss_forward.filter(|_| !no_grad && !evaluation_program)
}

/// Whether a script's name starts or ends with a word of evaluation (`eval_ppl.py`,
/// `evaluate.py`, `run_eval.py`, `perplexity.py`, `compute_ppl.py`), not a pytest module
/// (`test_eval.py`) and holding no word of training (`train_eval.py`).
pub(super) fn evaluation_script(file: &str) -> bool {
    let base = file.rsplit(['/', '\\']).next().unwrap_or_default();
    let Some(stem) = base.strip_suffix(".py") else {
        return false;
    };
    let lower = stem.to_ascii_lowercase();
    if lower.starts_with("test_") || lower.ends_with("_test") {
        return false;
    }
    let parts: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| word.trim_end_matches(|c: char| c.is_ascii_digit()))
        .collect();
    let evaluation = |word: &&str| {
        matches!(
            *word,
            "eval" | "evaluate" | "evaluation" | "ppl" | "perplexity"
        )
    };
    let training = parts.iter().any(|word| {
        matches!(
            *word,
            "train" | "training" | "finetune" | "finetuning" | "pretrain" | "sft"
        )
    });
    !training
        && [parts.first(), parts.last()]
            .into_iter()
            .flatten()
            .any(evaluation)
}

/// A library's module named for prediction (PaddleOCR's and PaddleDetection's
/// `tools/infer/predict_rec.py`, `deploy/python/infer.py`, a package's `inference.py` /
/// `predict.py`): its functions run a trained model on inputs. The name is the module's, whole
/// (`infer.py`, `predict_det.py`, a file under `infer/`), not a word inside another
/// (`onnxruntime_inference_collection.py`).
fn inference_module(file: &str) -> bool {
    let file = file.replace('\\', "/");
    let mut parts = file.rsplit('/');
    let Some(stem) = parts.next().and_then(|name| name.strip_suffix(".py")) else {
        return false;
    };
    let parent = parts.next().unwrap_or_default();
    matches!(stem, "infer" | "inference" | "predict" | "predictor")
        || stem.starts_with("predict_")
        || stem.starts_with("infer_")
        || matches!(parent, "infer" | "inference")
}

/// A loss computed in the caller's code: a statement calling a loss (`loss = loss_fn(model, x,
/// y)`, `criterion(out, y)`, `self.compute_loss(batch)`), a function named for one (`def
/// get_loss`, `def ocr_loss`), or a module of a loss package (`src/loss/ocr_loss/encoder.py`,
/// `losses.py`). The PyTorch tutorials' training loop computes `loss = loss_fn(pred, y)` before
/// `loss.backward()`; an evaluation loop computes one too, inside a function named for it, which
/// decides first. (What, shown.)
fn loss_computed(frame: &Frame) -> Option<(&'static str, &str)> {
    let lossy = |name: &str| {
        let lower = name.to_ascii_lowercase();
        let words = words(name);
        words
            .iter()
            .any(|w| matches!(w.as_str(), "loss" | "losses" | "criterion"))
            || lower == "loss_fn"
            || lower.ends_with("_loss")
            || lower.ends_with("loss_fn")
    };
    if let Some(code) = frame.code.as_deref() {
        // A loss kept as an evaluation's (`val_loss = F.mse_loss(model(val_x), val_x)`,
        // `eval_loss = criterion(out, y)`): the validation's forward, not a training step's.
        let evaluation_target = code.split_once('=').is_some_and(|(target, value)| {
            !value.starts_with('=')
                && words(target).iter().any(|w| {
                    matches!(
                        w.as_str(),
                        "val" | "valid" | "validation" | "eval" | "evaluation" | "test" | "ppl"
                    )
                })
        });
        if called_name(code).is_some_and(lossy) && !evaluation_target {
            return Some(("runs", code.trim()));
        }
    }
    // A function named for one loss (`get_loss`, `computeLoss`), not one reading the losses
    // kept for logging (`get_current_losses`, pix2pix's `BaseModel`).
    let one_loss = |name: &str| words(name).iter().any(|w| w == "loss") || name.ends_with("_loss");
    if frame.function != "<module>" && one_loss(&frame.function) {
        return Some(("is in the function", frame.function.as_str()));
    }
    let file = frame.file.replace('\\', "/");
    let mut parts = file.rsplit('/');
    let stem = parts.next()?.trim_end_matches(".py");
    let package = parts.take(3).any(|dir| matches!(dir, "loss" | "losses"));
    (package || matches!(stem, "loss" | "losses"))
        .then_some(("is in the loss module", frame.file.as_str()))
}

/// A forward of a model given the labels, outside generation: `outputs = model(input_ids=b,
/// labels=b)`, `out = self.net(x, labels=y)` (transformers' models compute the loss when
/// `labels` is passed; a training loop passes them to get the loss it back-propagates).
fn labelled_forward(code: &str) -> bool {
    let has_labels = code.match_indices("labels").any(|(at, word)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].trim_start();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            && after.starts_with('=')
            && !after.starts_with("==")
    });
    has_labels
        && called_name(code).is_some_and(|name| {
            let callee = code
                .split_once('=')
                .filter(|(target, _)| !target.contains('('))
                .map_or(code, |(_, value)| value)
                .trim_start()
                .trim_start_matches("return ")
                .trim_start_matches("await ");
            let path = callee.split('(').next().unwrap_or_default();
            !callee.starts_with(|c: char| c.is_ascii_uppercase())
                && module_like(path)
                && !words(name).iter().any(|word| {
                    INFERENCE_WORDS.contains(&word.as_str()) || LOAD_VERBS.contains(&word.as_str())
                })
        })
}

/// A test function pytest collects: `test*` in a file named `test_*.py` or `*_test.py`.
fn is_pytest_test(frame: &Frame) -> bool {
    let base = frame
        .file
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let test_file =
        base.ends_with(".py") && (base.starts_with("test_") || base.ends_with("_test.py"));
    test_file && frame.function.starts_with("test")
}

/// The stage in the caller's terms (a user's `evaluate` serves no request).
pub(super) fn noun(phase: Phase) -> &'static str {
    match phase {
        Phase::TrainingStep => "a training step",
        Phase::Inference => "inference (a forward pass outside training)",
        Phase::WeightsLoad => "loading weights",
        other => other.describe(),
    }
}

/// ` (train.py)`, or nothing for a frame without a file worth naming.
fn place(frame: &Frame) -> String {
    if frame.file == "<call>" || frame.file.is_empty() {
        String::new()
    } else {
        format!(" ({})", super::short_path(&frame.file))
    }
}

pub(super) fn clip(code: &str) -> String {
    const MAX: usize = 60;
    if code.chars().count() <= MAX {
        code.to_string()
    } else {
        let cut: String = code.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

/// Is the file a library's (an installed package, Python's standard library, a console-script
/// wrapper, generated or native code) rather than the caller's own?
pub fn is_library_file(file: &str) -> bool {
    let lower = file.replace('\\', "/").to_ascii_lowercase();
    // Pseudo-files: the caller's REPL and notebook cells, a notebook's call arrow.
    if lower.starts_with('<') {
        return !(lower == "<stdin>" || lower.starts_with("<ipython-input") || lower == "<call>");
    }
    if lower.contains("site-packages/")
        || lower.contains("dist-packages/")
        || lower.ends_with(".so")
        || lower.contains(".so.")
        || lower.ends_with(".dll")
        || lower.ends_with(".pyx")
        || file == crate::parse::engine_log::NATIVE_FRAME_FILE
    {
        return true;
    }
    let parts: Vec<&str> = lower.split('/').collect();
    // The code TorchInductor generates for a compiled graph, written to its cache directory
    // (`torch/_inductor/runtime/cache_dir_utils.py` `default_cache_dir`, PyTorch 2.5+:
    // `<tmp>/torchinductor_<user>/`, the `call` of each output module): PyTorch's code, not the
    // caller's.
    if parts.iter().any(|part| part.starts_with("torchinductor_")) {
        return true;
    }
    // PyTorch Geometric's `MessagePassing` writes each layer's `propagate` from a template to a
    // module of the temp directory (`torch_geometric/template.py` `module_from_template`:
    // `<tmp>/torch_geometric.nn.conv.gat_conv_GATConv_propagate_<random>.py`, 2.5+): PyG's code.
    if parts
        .last()
        .is_some_and(|name| name.starts_with("torch_geometric."))
    {
        return true;
    }
    // A source checkout of an engine or library run in place (`pip install -e`, a container's
    // `/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py`,
    // `/workspace/vllm/vllm/v1/engine/core.py`, `transformers/src/transformers/trainer.py`):
    // the package's directory with a folder of its own under it is the library's, not the
    // caller's (a project folder named like one, `~/vllm/serve.py`, is still the caller's).
    const CHECKOUTS: [&str; 12] = [
        "sglang",
        "vllm",
        "transformers",
        "diffusers",
        "peft",
        "accelerate",
        "deepspeed",
        "trl",
        "verl",
        "lmdeploy",
        "tensorrt_llm",
        "megatron",
    ];
    if parts.len() >= 3
        && parts[..parts.len() - 2]
            .iter()
            .any(|part| CHECKOUTS.contains(part))
    {
        return true;
    }
    parts.windows(2).any(|pair| {
        // `…/lib/python3.10/runpy.py`, `C:\Python310\lib\runpy.py`, `…/bin/torchrun`.
        (pair[0] == "lib" && pair[1].starts_with("python"))
            || (pair[0].starts_with("python") && pair[1] == "lib")
            || pair[0] == "bin"
    })
}

mod names;
mod statement;

use names::*;
use statement::*;

pub(super) use names::words;
pub use names::{
    evaluation_name, library_name_phase, name_phase, node_phase, reports_error, words_phase,
    workflow_node_phase,
};
pub use statement::statement_phase;
pub(super) use statement::{called_path, last_name, module_like};

#[cfg(test)]
mod tests;
