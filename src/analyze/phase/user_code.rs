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
    loss_forward.filter(|_| !no_grad)
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
        if called_name(code).is_some_and(lossy) {
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
    parts.windows(2).any(|pair| {
        // `…/lib/python3.10/runpy.py`, `C:\Python310\lib\runpy.py`, `…/bin/torchrun`.
        (pair[0] == "lib" && pair[1].starts_with("python"))
            || (pair[0].starts_with("python") && pair[1] == "lib")
            || pair[0] == "bin"
    })
}

/// The words of an identifier: `train_one_epoch` → train, one, epoch; `trainStep` → train, step.
pub(super) fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

const TRAINING_WORDS: &[&str] = &[
    "train",
    "training",
    "fit",
    "finetune",
    "finetuning",
    "pretrain",
    "pretraining",
    "epoch",
    "backward",
    "learn",
];
const INFERENCE_WORDS: &[&str] = &[
    "eval",
    "evaluate",
    "evaluation",
    "evaluating",
    "val",
    "valid",
    "validate",
    "validation",
    "test",
    "testing",
    "predict",
    "prediction",
    "infer",
    "inference",
    "generate",
    "generation",
    "transcribe",
    "detect",
    "chat",
];
/// Words of start-up stages (`_capture_generation_cuda_graphs`, `warmup_generate`,
/// `profile_run`, `compile_train_step`): a name with one of them says a start-up stage the
/// other words do not name, so it decides nothing here.
const STARTUP_WORDS: &[&str] = &[
    "capture",
    "graph",
    "graphs",
    "warmup",
    "warm",
    "profile",
    "profiling",
    "compile",
    "dummy",
];
const LOAD_VERBS: &[&str] = &[
    "load",
    "build",
    "setup",
    "init",
    "initialize",
    "create",
    "get",
    "prepare",
    "instantiate",
    "make",
    "restore",
];
const LOAD_OBJECTS: &[&str] = &[
    "model",
    "models",
    "weights",
    "checkpoint",
    "ckpt",
    "pipeline",
    "pipe",
    "network",
    "net",
    "llm",
    "pretrained",
];

/// Objects of `generate` that are tensors a forward builds, not a generation's output
/// (`generate_qkv` in an attention patch, `generate_mask`, detectron2's `generate_anchors`).
const BUILT_TENSORS: &[&str] = &[
    "qkv",
    "mask",
    "masks",
    "anchor",
    "anchors",
    "grid",
    "grids",
    "noise",
    "positions",
    "indices",
    "boxes",
    "coords",
    "kernel",
    "kernels",
];

/// `generate` with a tensor as its object (see [`BUILT_TENSORS`]).
fn builds_a_tensor(words: &[String]) -> bool {
    words.windows(2).any(|pair| {
        matches!(pair[0].as_str(), "generate" | "gen") && BUILT_TENSORS.contains(&pair[1].as_str())
    })
}

/// The stage a function's name says, when it says exactly one.
pub fn name_phase(function: &str) -> Option<Phase> {
    let words = words(function);
    let has = |list: &[&str]| words.iter().any(|word| list.contains(&word.as_str()));
    if has(STARTUP_WORDS) {
        return None;
    }
    if builds_a_tensor(&words) {
        return None;
    }
    if trains_then_evaluates(&words) {
        return Some(Phase::TrainingStep);
    }
    let training = has(TRAINING_WORDS);
    let inference = has(INFERENCE_WORDS);
    let load = (has(LOAD_VERBS) && has(LOAD_OBJECTS)) || words.iter().any(|w| w == "restore");
    one_stage(training, inference, load)
}

/// A training loop named with the evaluation it runs between its steps: `train_and_evaluate`
/// (VITS and its forks, `jaywalnut310/vits` `train.py`: each epoch trains, and every
/// `eval_interval` steps rank 0 calls `evaluate`), `train_and_eval`, `train_and_validate`,
/// `fit_and_evaluate`. The evaluation is a call of its own, which a deeper frame names when the
/// failure is in it; the frame of the loop itself is the training.
fn trains_then_evaluates(words: &[String]) -> bool {
    words.windows(3).any(|three| {
        matches!(three[0].as_str(), "train" | "training" | "fit" | "finetune")
            && three[1] == "and"
            && matches!(
                three[2].as_str(),
                "eval" | "evaluate" | "evaluation" | "val" | "valid" | "validate" | "test"
            )
    })
}

/// The stage a library function's name says (a library without frame rules). Fewer words than
/// for the caller's code: libraries `validate` and `test` their arguments, `detect` formats,
/// `build` and `get` many things; loading needs `load` or `restore` with the weights named.
pub fn library_name_phase(function: &str) -> Option<Phase> {
    const INFERENCE: &[&str] = &[
        "eval",
        "evaluate",
        "evaluation",
        "predict",
        "prediction",
        "infer",
        "inference",
        "generate",
        "generation",
        "transcribe",
    ];
    const LOADED: &[&str] = &[
        "model",
        "weights",
        "checkpoint",
        "ckpt",
        "pretrained",
        "state",
    ];
    let words = words(function);
    let has = |list: &[&str]| words.iter().any(|word| list.contains(&word.as_str()));
    // `register_full_backward_hook`: set-up for a stage, not the stage.
    if has(STARTUP_WORDS) || has(&["register"]) || builds_a_tensor(&words) {
        return None;
    }
    if trains_then_evaluates(&words) {
        return Some(Phase::TrainingStep);
    }
    let training = has(TRAINING_WORDS);
    let inference = has(INFERENCE);
    let load = has(&["load", "restore"]) && has(LOADED);
    one_stage(training, inference, load)
}

/// Whether a frame's function is named for an evaluation pass (read only inside a training
/// frame: see `read_frames`). Training loops run their evaluation from inside the loop
/// (Lightning `fit_loop` → `val_loop.run` → `_evaluation_step` / `on_validation_epoch_end`,
/// a script's `train()` → `validate(model, loader)`): the innermost frame says the stage. The
/// words of the loop that run it (`epoch`, `step`, `end`) name no other stage there. A
/// library's name needs an unambiguous word (`evaluation`, `validation`, `sanity`) or a short
/// word with a loop word (`val_loop`, `test_step`, `predict_step`); `predict` alone is also a
/// training loss's helper (`predict_noise`, `predict_start_from_noise` in diffusion training),
/// `validate` alone a check of arguments.
pub fn evaluation_name(function: &str, library: bool) -> bool {
    const ALWAYS: &[&str] = &[
        "evaluate",
        "evaluation",
        "evaluating",
        "validation",
        "sanity",
    ];
    const SHORT: &[&str] = &["eval", "val", "test", "testing", "predict", "prediction"];
    const CALLER: &[&str] = &["validate", "validating", "valid", "eval", "val", "test"];
    const LOOP: &[&str] = &[
        "step",
        "loop",
        "epoch",
        "batch",
        "dataloader",
        "impl",
        "run",
    ];
    const OTHER: &[&str] = &[
        "train",
        "training",
        "fit",
        "finetune",
        "backward",
        "learn",
        "load",
        "loss",
        "noise",
        "grad",
        "gradient",
        "optimizer",
    ];
    let words = words(function);
    let has = |list: &[&str]| words.iter().any(|word| list.contains(&word.as_str()));
    if has(OTHER) || has(STARTUP_WORDS) {
        return false;
    }
    has(ALWAYS) || (has(SHORT) && has(LOOP)) || (!library && has(CALLER))
}

/// The stage free words name (an app's message around an error, the message logged with a
/// traceback): `request 7f3a failed while running the model` → inference, `Error in training
/// loop` → training_step, `Failed to load model` → weights_load. Bracketed parts (`[train.py:88]`,
/// `[inference_server]`: logger names and places) and file names are left out; one stage or none.
pub fn words_phase(text: &str) -> Option<Phase> {
    const TRAINING: &[&str] = &[
        "train",
        "training",
        "epoch",
        "finetune",
        "finetuning",
        "backward",
    ];
    const INFERENCE: &[&str] = &[
        "request",
        "requests",
        "generate",
        "generating",
        "generation",
        "inference",
        "infer",
        "predict",
        "predicting",
        "prediction",
        "sampling",
        "transcribe",
        "transcribing",
        "transcription",
        "denoise",
        "denoising",
        "chat",
        "completion",
        "completions",
        "eval",
        "evaluation",
        "evaluating",
        "validation",
        // The verb of a model at work on sentences or images (sentence-transformers
        // `encode`, an embeddings endpoint's `embed`; the noun `embedding` also names a layer).
        "embed",
    ];
    const LOADING: &[&str] = &["load", "loading", "loaded"];
    const LOADED: &[&str] = &[
        "model",
        "models",
        "weights",
        "checkpoint",
        "ckpt",
        "shards",
        "pretrained",
        "pipeline",
    ];
    let mut kept = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth = depth.saturating_sub(1),
            _ if depth == 0 => kept.push(c),
            _ => {}
        }
    }
    let words: Vec<String> = kept
        .split_whitespace()
        .filter(|token| !token.contains(".py") && !token.contains('/') && !token.contains('\\'))
        .flat_map(words)
        .collect();
    let has = |list: &[&str]| words.iter().any(|word| list.contains(&word.as_str()));
    if has(STARTUP_WORDS) || has(&["compiling", "capturing"]) {
        return None;
    }
    let training = has(TRAINING);
    let inference = has(INFERENCE);
    let load = has(LOADING) && has(LOADED);
    one_stage(training, inference, load)
}

/// The stage an app's node or invocation type is named for: ComfyUI's node classes
/// (`nodes.py`: `KSampler`, `VAEDecode`, `CLIPTextEncode`, `CheckpointLoaderSimple`,
/// `UNETLoader`, `LoraLoader`; custom nodes follow them: `NunchakuQwenImageDiTLoader`,
/// `SamplerCustomAdvanced`) and InvokeAI's invocation types (`invokeai/app/invocations/`:
/// `denoise_latents`, `l2i`, `i2l`, `main_model_loader`). A sampler, a denoise, a VAE/text
/// encode or decode runs a generation → inference; a loader of a model (not of an image, a mask,
/// a latent or a video: `LoadImage`, `ImageLoader`) → weights_load; both or neither → nothing.
pub fn node_phase(name: &str) -> Option<Phase> {
    let lower = name.to_ascii_lowercase();
    let words = words(name);
    let word = |w: &str| words.iter().any(|x| x == w);
    const RUNS: &[&str] = &[
        "sampler", "sample", "sampling", "denoise", "decode", "encode",
    ];
    let inference = RUNS.iter().any(|part| lower.contains(part)) || word("l2i") || word("i2l");
    const MEDIA: &[&str] = &[
        "image", "mask", "latent", "video", "audio", "text", "prompt",
    ];
    const MODELS: &[&str] = &[
        "model",
        "checkpoint",
        "ckpt",
        "unet",
        "clip",
        "vae",
        "lora",
        "dit",
        "diffusion",
        "weights",
        "controlnet",
        "gguf",
    ];
    let loader = lower.contains("loader")
        || (lower.contains("load") && MODELS.iter().any(|model| lower.contains(model)));
    // `LoadImage`, `ImageLoader`, `LoadLatent`: a file read, no model.
    let media = MEDIA.iter().any(|media| {
        let joined = lower.replace('_', "");
        joined.contains(&format!("load{media}")) || joined.contains(&format!("{media}loader"))
    });
    let load = loader && !media;
    one_stage(false, inference, load)
}

/// Whether a log line reports an error (the message `logger.exception` prints above its
/// traceback says so in its own words).
pub fn reports_error(text: &str) -> bool {
    words(text).iter().any(|word| {
        matches!(
            word.as_str(),
            "error" | "errors" | "exception" | "failed" | "fail" | "failure" | "crashed"
        )
    })
}

/// Receivers that name a model (or a part of one) rather than its input: `model`, `self.unet`,
/// `text_encoder`, `resnet`, `MyNet(...)`.
pub(super) fn module_like(receiver: &str) -> bool {
    const MODULES: &[&str] = &[
        "model",
        "models",
        "net",
        "network",
        "module",
        "pipe",
        "pipeline",
        "unet",
        "vae",
        "encoder",
        "decoder",
        "transformer",
        "llm",
        "backbone",
        "classifier",
        "generator",
        "discriminator",
        "teacher",
        "student",
    ];
    words(receiver).iter().any(|word| {
        MODULES.contains(&word.as_str())
            || (word.len() > 3 && (word.ends_with("net") || word.ends_with("model")))
    })
}

/// The expression a method is called on: `self.model.half()` before `.to(` → `self.model`
/// (calls that only change a dtype or mode are skipped); a constructor call `Linear(…)` is kept
/// as `Linear(`.
fn receiver(before: &str) -> String {
    let mut expr = before.trim_end();
    loop {
        let stripped = [
            ".half()",
            ".float()",
            ".bfloat16()",
            ".eval()",
            ".train()",
            ".cpu()",
        ]
        .iter()
        .find_map(|call| expr.strip_suffix(call));
        match stripped {
            Some(rest) => expr = rest,
            None => break,
        }
    }
    if let Some(open) = expr.strip_suffix(')').and_then(|_| matching_open(expr)) {
        // A call's result: keep the callee's name with its `(`.
        let callee = last_path(&expr[..open]);
        return format!("{callee}(");
    }
    last_path(expr).to_string()
}

/// The `(` that opens the call ending `expr`.
fn matching_open(expr: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in expr.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// The trailing dotted name of an expression: `x = self.model` → `self.model`.
fn last_path(expr: &str) -> &str {
    let start = expr
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |at| at + 1);
    &expr[start..]
}

/// The last identifier of a dotted name: `self.model` → `model`.
pub(super) fn last_name(path: &str) -> &str {
    path.trim_end_matches('(')
        .rsplit('.')
        .next()
        .unwrap_or_default()
}

/// Where `code` calls `.method(`.
fn calls(code: &str, method: &str) -> Option<usize> {
    let pattern = format!(".{method}(");
    code.find(&pattern)
}

/// The stage a statement runs, with what in it shows that.
pub fn statement_phase(code: &str) -> Option<(Phase, &'static str)> {
    let code = code.trim();
    // `for i, (x, y) in enumerate(train_loader):` — a loop over the training (or evaluation)
    // data.
    if let Some(iterable) = code
        .strip_prefix("for ")
        .and_then(|rest| rest.split_once(" in "))
        .map(|(_, iterable)| iterable)
    {
        let train = words(iterable)
            .iter()
            .any(|w| w == "train" || w == "training");
        let eval = words(iterable)
            .iter()
            .any(|w| INFERENCE_WORDS.contains(&w.as_str()));
        return match (train, eval) {
            (true, false) => Some((Phase::TrainingStep, "a loop over the training data")),
            (false, true) => Some((Phase::Inference, "a loop over evaluation data")),
            _ => None,
        };
    }
    let found: Vec<(Phase, &'static str)> = [
        (
            callees(code).any(|name| name.ends_with("backward")),
            Phase::TrainingStep,
            "a backward pass",
        ),
        (
            calls(code, "step").is_some_and(|at| {
                let name = last_name(&receiver(&code[..at])).to_ascii_lowercase();
                name.contains("optim") || name.contains("scaler") || name == "opt"
            }),
            Phase::TrainingStep,
            "an optimizer step",
        ),
        (
            calls(code, "fit").is_some() || calls(code, "learn").is_some(),
            Phase::TrainingStep,
            "a training run",
        ),
        (
            calls(code, "train")
                .is_some_and(|at| words(&receiver(&code[..at])).iter().any(|w| w == "trainer")),
            Phase::TrainingStep,
            "a trainer's training run",
        ),
        (
            // (`chat`: vLLM's `LLM.chat` (vllm/entrypoints/llm.py) and the chat models'
            // `model.chat(tokenizer, query)` / `stream_chat` (ChatGLM's and Qwen's modeling
            // files) generate a reply.)
            [
                "generate",
                "predict",
                "transcribe",
                "infer",
                "evaluate",
                "chat",
                "stream_chat",
            ]
            .iter()
            .any(|method| calls(code, method).is_some()),
            Phase::Inference,
            "a generation, prediction or evaluation",
        ),
        (
            // Lightning's `Trainer.test` / `Trainer.validate` (lightning `trainer/trainer.py`)
            // run the test and validation loops: the model forward, no step.
            ["test", "validate"].iter().any(|method| {
                calls(code, method)
                    .is_some_and(|at| words(&receiver(&code[..at])).iter().any(|w| w == "trainer"))
            }),
            Phase::Inference,
            "a trainer's test or validation loop",
        ),
        (
            // A pipeline or generator object called on its inputs (`images = pipe(prompt)`,
            // `predictions = generator(prompts, …)`, transformers' `pipeline` objects, outlines'
            // generators).
            // (The object itself, not a module attribute: `self.proposal_generator(images)` and
            // a GAN's `self.generator(z)` run a network's forward.)
            called_name(code).is_some_and(|name| words(name).iter().any(|w| w == "pipe"))
                || called_path(code).is_some_and(|path| {
                    matches!(
                        path,
                        "pipeline"
                            | "generator"
                            | "predictor"
                            | "summarizer"
                            | "translator"
                            | "transcriber"
                            | "captioner"
                    )
                }),
            Phase::Inference,
            "a pipeline run",
        ),
        (
            // `with torch.cuda.graph(g):` (torch `torch/cuda/graphs.py` `class graph`:
            // `capture_begin` on enter, `capture_end` on exit; an error raised on exit is shown
            // at the `with` line), `torch.cuda.make_graphed_callables(…)` and the `CUDAGraph`
            // methods capture a CUDA graph.
            captures_graph(code),
            Phase::CudaGraphCapture,
            "a CUDA graph capture",
        ),
        (
            converts_weights(code),
            Phase::FormatConversion,
            "a conversion of the model's weights",
        ),
        (
            reads_safetensors(code),
            Phase::WeightsLoad,
            "a tensor read from a checkpoint file",
        ),
        (
            ["from_pretrained", "from_single_file", "from_preset"]
                .iter()
                .any(|method| calls(code, method).is_some())
                || code.contains("load_state_dict(")
                || code.contains("torch.load("),
            Phase::WeightsLoad,
            "a weights load",
        ),
        (
            // JAX has no module to move: a model's parameters reach the GPU through
            // `jax.device_put` (`params = jax.device_put(restored)`, Flax's `variables`);
            // a batch put on the device (`jax.device_put(batch)`) names no weights.
            calls(code, "device_put").is_some()
                && words(code).iter().any(|w| {
                    [
                        "params",
                        "parameters",
                        "weights",
                        "variables",
                        "checkpoint",
                        "ckpt",
                    ]
                    .contains(&w.as_str())
                }),
            Phase::WeightsLoad,
            "parameters put on the device",
        ),
        (
            [".to(", ".cuda("].iter().any(|call| {
                code.match_indices(call).any(|(at, _)| {
                    let receiver = receiver(&code[..at]);
                    let callee_class = receiver.ends_with('(')
                        && last_name(&receiver).starts_with(|c: char| c.is_ascii_uppercase());
                    callee_class || (!receiver.ends_with('(') && module_like(&receiver))
                })
            }),
            Phase::WeightsLoad,
            "a model moved to the device",
        ),
    ]
    .into_iter()
    .filter(|(hit, _, _)| *hit)
    .map(|(_, phase, what)| (phase, what))
    .chain(named_calls(code))
    .collect();
    let first = *found.first()?;
    found
        .iter()
        .all(|(phase, _)| *phase == first.0)
        .then_some(first)
}

/// Whether a statement captures a CUDA graph (see `statement_phase`).
fn captures_graph(code: &str) -> bool {
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    [
        "cuda.graph(",
        "make_graphed_callables(",
        ".capture_begin(",
        ".capture_end(",
    ]
    .iter()
    .any(|call| compact.contains(call))
}

/// Whether a statement converts a model's weights after loading: transformers'
/// `PreTrainedModel.resize_token_embeddings` (`modeling_utils.py`: a new embedding matrix, the
/// old rows copied in), a function named for quantizing any object (`quantize_int8(w)`,
/// `dequantize_layer(l)`), or one named for converting, casting or repacking the weights
/// themselves (`convert_to_fp8(layer.weight)`, `repack_weights(sd)`; not
/// `convert_tokens_to_ids`).
fn converts_weights(code: &str) -> bool {
    const WEIGHTS: &[&str] = &[
        "weight",
        "weights",
        "state",
        "params",
        "parameters",
        "layer",
        "layers",
        "linear",
        "tensor",
        "tensors",
    ];
    let weights = words(code)
        .iter()
        .any(|word| WEIGHTS.contains(&word.as_str()));
    callees(code).any(|name| {
        let words = words(name);
        let verb = words.first().map(String::as_str).unwrap_or_default();
        name == "resize_token_embeddings"
            || matches!(verb, "quantize" | "quantise" | "dequantize" | "requantize")
            || (matches!(verb, "convert" | "cast" | "repack" | "pack") && weights)
    })
}

/// Whether a statement reads tensors from a safetensors checkpoint: `safe_open(path,
/// framework="pt", device="cuda")` and the handle's `get_tensor` / `get_slice`
/// (`safetensors` `safe_open`), `safetensors.torch.load_file(path, device=…)`. A TFLite
/// interpreter's `get_tensor` reads an output, not a checkpoint.
fn reads_safetensors(code: &str) -> bool {
    let handle = [".get_tensor(", ".get_slice("].iter().any(|call| {
        code.match_indices(call).any(|(at, _)| {
            let receiver = last_name(&receiver(&code[..at])).to_ascii_lowercase();
            !receiver.is_empty() && !receiver.contains("interp")
        })
    });
    handle
        || code.contains("safe_open(")
        || (code.contains("safetensors") && code.contains("load_file("))
}

/// The stages the functions a statement calls are named for (`inner_training_loop()`,
/// `run_evaluation(model)`, `pipe.load_lora_weights(p)`), with a library's plainer words (a
/// callee may be anyone's); `model.train()` / `model.eval()` only switch a mode.
fn named_calls(code: &str) -> impl Iterator<Item = (Phase, &'static str)> + '_ {
    code.match_indices('(').filter_map(move |(paren, _)| {
        let start = code[..paren]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |at| at + 1);
        let name = &code[start..paren];
        let mode_switch = matches!(name, "train" | "eval") && code[paren..].starts_with("()");
        if name.is_empty() || mode_switch {
            return None;
        }
        library_name_phase(name).map(|phase| (phase, "a call of a function named for it"))
    })
}

/// The names a statement calls: `Variable._execution_engine.run_backward(` → `run_backward`.
fn callees(code: &str) -> impl Iterator<Item = &str> {
    code.match_indices('(').filter_map(|(paren, _)| {
        let start = code[..paren]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |at| at + 1);
        let name = &code[start..paren];
        (!name.is_empty()).then_some(name)
    })
}

/// The dotted name a statement calls first at its top level: `x = self.pipe(p)` → `self.pipe`.
pub(super) fn called_path(code: &str) -> Option<&str> {
    let value = code
        .split_once('=')
        .filter(|(target, _)| !target.contains('(') && !target.ends_with(['=', '!', '<', '>']))
        .map_or(code, |(_, value)| value)
        .trim_start()
        .trim_start_matches("return ")
        .trim_start_matches("await ");
    let name = &value[..value.find('(')?];
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.'))
    .then_some(name)
}

/// The name a statement calls first at its top level: `images = pipe(prompt).images` → `pipe`.
fn called_name(code: &str) -> Option<&str> {
    called_path(code).map(last_name)
}

/// The stage when exactly one of training, inference and loading is named; two or none decide
/// nothing.
fn one_stage(training: bool, inference: bool, load: bool) -> Option<Phase> {
    match (training, inference, load) {
        (true, false, false) => Some(Phase::TrainingStep),
        (false, true, false) => Some(Phase::Inference),
        (false, false, true) => Some(Phase::WeightsLoad),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(line: u64, function: &str, file: &str, code: Option<&str>) -> Frame {
        Frame {
            line,
            function: function.to_string(),
            file: file.to_string(),
            called: false,
            code: code.map(str::to_string),
        }
    }

    #[test]
    fn a_chat_call_generates() {
        assert_eq!(
            statement_phase("response, history = model.chat(tokenizer, query, history=[])")
                .map(|(p, _)| p),
            Some(Phase::Inference)
        );
        assert_eq!(
            statement_phase("outs = llm.chat(messages, sampling_params)").map(|(p, _)| p),
            Some(Phase::Inference)
        );
        assert_eq!(statement_phase("chat = build_chat(x)"), None);
    }

    #[test]
    fn a_training_loop_named_with_its_evaluation() {
        assert_eq!(name_phase("train_and_evaluate"), Some(Phase::TrainingStep));
        assert_eq!(
            statement_phase("train_and_eval(rank, epoch, hps, [net_g, net_d])").map(|(p, _)| p),
            Some(Phase::TrainingStep)
        );
        // Both words without the loop's `and`: neither decides.
        assert_eq!(name_phase("train_eval_split"), None);
        assert_eq!(name_phase("evaluate_and_train"), None);
    }

    #[test]
    fn library_files_are_told_from_the_callers() {
        for file in [
            "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py",
            "/usr/local/lib/python3.8/dist-packages/vllm/worker.py",
            "/usr/lib/python3.10/runpy.py",
            "C:\\Python310\\lib\\runpy.py",
            "C:\\Users\\a\\venv\\Lib\\site-packages\\torch\\_tensor.py",
            "/opt/conda/bin/torchrun",
            "<frozen importlib._bootstrap>",
            "<string>",
            "/x/torch/lib/libtorch_cuda.so",
        ] {
            assert!(is_library_file(file), "{file}");
        }
        for file in [
            "train.py",
            "/home/me/project/train.py",
            "<stdin>",
            "<ipython-input-3-5d1f>",
            "/tmp/ipykernel_1234/3301.py",
            "<call>",
            "C:\\work\\ComfyUI\\execution.py",
        ] {
            assert!(!is_library_file(file), "{file}");
        }
    }

    #[test]
    fn names_say_one_stage_or_none() {
        use Phase::*;
        for (name, phase) in [
            ("train_one_epoch", Some(TrainingStep)),
            ("trainEpoch", Some(TrainingStep)),
            ("run_epoch", Some(TrainingStep)),
            ("finetune", Some(TrainingStep)),
            ("validate", Some(Inference)),
            ("val_step", Some(Inference)),
            ("test_loop", Some(Inference)),
            ("generate_images", Some(Inference)),
            ("transcribe_file", Some(Inference)),
            ("load_model", Some(WeightsLoad)),
            ("build_model", Some(WeightsLoad)),
            ("setupModel", Some(WeightsLoad)),
            ("restore", Some(WeightsLoad)),
            // A training loop named with the evaluation it runs between steps.
            ("train_and_evaluate", Some(TrainingStep)),
            // Two stages at once, or none.
            ("val_epoch", None),
            ("load_model_for_training", None),
            ("forward", None),
            ("main", None),
            ("<module>", None),
            ("load_data", None),
            ("latest", None),
            ("sample_batch", None),
            ("encode", None),
            ("warmup_generate", None),
            ("compile_train_step", None),
            // A tensor built in a forward, not a generation.
            ("generate_qkv", None),
            ("generateMask", None),
            ("generate_text", Some(Inference)),
        ] {
            assert_eq!(name_phase(name), phase, "{name}");
        }
    }

    #[test]
    fn free_words_name_one_stage_or_none() {
        use Phase::*;
        for (text, phase) in [
            (
                "request 7f3a failed while running the model",
                Some(Inference),
            ),
            ("Exception in thread Thread-3 (generate):", None),
            ("Error during generation:", Some(Inference)),
            ("Error in training loop at epoch 3:", Some(TrainingStep)),
            ("Failed to load model weights:", Some(WeightsLoad)),
            ("[train.py:88] ERROR: something broke", None),
            ("[inference_server][ERROR] - worker died", None),
            ("Error in src/train/loop.py:", None),
            ("error while capturing CUDA graphs for generation", None),
            ("failed to load the model during training", None),
            ("Finish task with error:", None),
        ] {
            assert_eq!(words_phase(text), phase, "{text}");
        }
        assert!(reports_error("request 7f3a failed while running the model"));
        assert!(reports_error("ERROR - Exception in worker"));
        assert!(!reports_error("Loading checkpoint shards: 100%"));
    }

    #[test]
    fn library_names_need_plainer_words() {
        use Phase::*;
        for (name, phase) in [
            ("_do_train", Some(TrainingStep)),
            ("_engine_run_backward", Some(TrainingStep)),
            ("generate_with_fallback", Some(Inference)),
            ("_prepare_attention_mask_for_generation", Some(Inference)),
            ("_load_state_dict_into_meta_model", Some(WeightsLoad)),
            ("_load_pretrained_model", Some(WeightsLoad)),
            // Argument checks, format detection, builders and start-up stages say nothing.
            ("_validate_args", None),
            ("validate_environment", None),
            ("test_device", None),
            ("detect_format", None),
            ("build_model", None),
            ("_capture_generation_cuda_graphs", None),
            ("_dummy_sampler_run", None),
        ] {
            assert_eq!(library_name_phase(name), phase, "{name}");
        }
    }

    #[test]
    fn statements_say_the_stage_they_run() {
        use Phase::*;
        for (code, phase) in [
            ("loss.backward()", Some(TrainingStep)),
            ("scaler.scale(loss).backward()", Some(TrainingStep)),
            ("accelerator.backward(loss)", Some(TrainingStep)),
            (
                "return Variable._execution_engine.run_backward(  # Calls into the C++ engine",
                Some(TrainingStep),
            ),
            ("model.register_full_backward_hook(hook)", None),
            ("self.optimizer.step()", Some(TrainingStep)),
            ("scaler.step(optimizer)", Some(TrainingStep)),
            (
                "for i, (x, y) in enumerate(train_loader):",
                Some(TrainingStep),
            ),
            ("for batch in tqdm(val_dataloader):", Some(Inference)),
            ("history = model.fit(x, y, epochs=3)", Some(TrainingStep)),
            (
                "trainer.train(resume_from_checkpoint=ckpt)",
                Some(TrainingStep),
            ),
            ("out = model.generate(**inputs)", Some(Inference)),
            ("print(trainer.evaluate())", Some(Inference)),
            (
                "image = pipe(prompt, num_inference_steps=30).images[0]",
                Some(Inference),
            ),
            (
                "predictions = generator(formatted_prompts, max_tokens=8)",
                Some(Inference),
            ),
            ("summary = summarizer(text)[0]", Some(Inference)),
            // A network's forward named like one (a GAN's generator, a detector's proposals).
            ("fake = self.generator(z)", None),
            (
                "proposals, losses = self.proposal_generator(images, features)",
                None,
            ),
            ("model = AutoModel.from_pretrained(path)", Some(WeightsLoad)),
            ("params = jax.device_put(host_params)", Some(WeightsLoad)),
            (
                "variables = jax.device_put(restored, sharding)",
                Some(WeightsLoad),
            ),
            ("batch = jax.device_put(batch)", None),
            ("x, y = jax.device_put((x, y), sharding)", None),
            ("model.load_state_dict(torch.load(p))", Some(WeightsLoad)),
            ("model = model.to(device)", Some(WeightsLoad)),
            ("self.unet.half().cuda()", Some(WeightsLoad)),
            ("net = MyNet(cfg).to(device)", Some(WeightsLoad)),
            // An input moved to the device, a forward, a scheduler: no stage of their own.
            ("x = x.to(device)", None),
            ("batch = {k: v.to(device) for k, v in batch.items()}", None),
            (
                "inputs = tokenizer(text, return_tensors='pt').to('cuda')",
                None,
            ),
            ("images = images.cuda(non_blocking=True)", None),
            ("t = torch.randn(8, 8).to(device)", None),
            ("out = model(x)", None),
            ("lr_scheduler.step()", None),
            ("model.train()", None),
            ("inner_training_loop()", Some(TrainingStep)),
            ("metrics = run_evaluation(model, loader)", Some(Inference)),
            ("pipe.load_lora_weights(path)", Some(WeightsLoad)),
            ("check = validate_args(cfg)", None),
            ("for epoch in range(epochs):", None),
            // Two stages in one statement decide nothing.
            ("loss = model(x).backward(); model.generate(x)", None),
        ] {
            assert_eq!(
                statement_phase(code).map(|(phase, _)| phase),
                phase,
                "{code}"
            );
        }
    }

    #[test]
    fn innermost_user_frame_decides_statement_first() {
        let frames = [
            frame(1, "<module>", "train.py", Some("main()")),
            frame(3, "main", "train.py", Some("train(model, loader)")),
            frame(5, "train", "train.py", Some("evaluate(model, val_loader)")),
            frame(7, "evaluate", "train.py", Some("out = model(x)")),
            frame(
                9,
                "_call_impl",
                "/v/lib/python3.11/site-packages/torch/nn/modules/module.py",
                Some("return forward_call(*args, **kwargs)"),
            ),
        ];
        let (phase, why) = user_code_phase(&frames).unwrap();
        assert_eq!(phase, Phase::Inference);
        assert!(why.contains("your function `evaluate` (train.py)"), "{why}");

        let frames = [
            frame(1, "main", "/home/me/run.py", Some("run(cfg)")),
            frame(3, "run", "/home/me/run.py", Some("loss.backward()")),
        ];
        let (phase, why) = user_code_phase(&frames).unwrap();
        assert_eq!(phase, Phase::TrainingStep);
        assert!(
            why.starts_with("line 4: your code (me/run.py) runs `loss.backward()`"),
            "{why}"
        );
    }

    #[test]
    fn a_loss_computed_is_a_training_step_unless_a_frame_says_otherwise() {
        let phase = |frames: &[Frame]| user_code_phase(frames).map(|(phase, _)| phase);
        let torch = |line: u64| {
            frame(
                line,
                "_call_impl",
                "/v/lib/python3.12/site-packages/torch/nn/modules/module.py",
                Some("return forward_call(*args, **kwargs)"),
            )
        };
        for code in [
            "loss = loss_fn(model, x.cuda(), y.cuda())",
            "l = criterion(out, target)",
            "total = self.compute_loss(batch)",
            "loss = ctc_loss(logits, labels)",
        ] {
            let frames = [frame(1, "<module>", "fit_me.py", Some(code)), torch(5)];
            assert_eq!(phase(&frames), Some(Phase::TrainingStep), "{code}");
            let (_, why) = user_code_phase(&frames).unwrap();
            assert!(why.contains("a loss computed"), "{why}");
        }
        // A function named for a loss, a module of a loss package.
        let named = [
            frame(4, "getLoss", "my/job.py", Some("h = net(x)")),
            torch(8),
        ];
        assert_eq!(phase(&named), Some(Phase::TrainingStep));
        let package = [
            frame(
                2,
                "forward",
                "/src/proj/losses/perceptual/vgg.py",
                Some("y = self.f(x)"),
            ),
            torch(6),
        ];
        assert_eq!(phase(&package), Some(Phase::TrainingStep));
        // An evaluation computes a loss too: its name decides; so does `no_grad`.
        let evaluation = [
            frame(1, "validate", "job.py", Some("run(x)")),
            frame(3, "step", "job.py", Some("val = criterion(out, y)")),
        ];
        assert_eq!(phase(&evaluation), Some(Phase::Inference));
        // Not a loss: a list of losses appended to, the losses read for logging.
        let logged = [frame(
            5,
            "get_current_losses",
            "models/base_model.py",
            Some("errors[name] = float(getattr(self, 'loss_' + name))"),
        )];
        assert_eq!(phase(&logged), None);
        let other = [frame(
            1,
            "<module>",
            "job.py",
            Some("losses.append(x.mean())"),
        )];
        assert_eq!(phase(&other), None);
    }

    #[test]
    fn a_librarys_prediction_module_is_inference() {
        let frames = [
            frame(1, "<module>", "ocr_test.py", Some("result = ocr.ocr(path)")),
            frame(
                3,
                "__call__",
                r"C:\Python38\lib\site-packages\paddleocr\tools\infer\predict_system.py",
                Some("rec = self.text_recognizer(crops)"),
            ),
            frame(
                5,
                "__call__",
                "/v/lib/python3.10/site-packages/somepkg/predict_rec.py",
                Some("self.predictor.run([batch])"),
            ),
        ];
        let (phase, why) = user_code_phase(&frames).unwrap();
        assert_eq!(phase, Phase::Inference);
        assert!(why.contains("prediction module"), "{why}");
        assert!(inference_module("/x/site-packages/pkg/infer.py"));
        assert!(!inference_module(
            "/x/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py"
        ));
        assert!(!inference_module("/x/site-packages/pkg/predictions.py"));
    }

    #[test]
    fn a_trainers_test_loop_is_inference() {
        assert_eq!(
            statement_phase("results = trainer.test(model, datamodule=dm)").map(|(p, _)| p),
            Some(Phase::Inference)
        );
        assert_eq!(
            statement_phase("trainer.validate(model)").map(|(p, _)| p),
            Some(Phase::Inference)
        );
        // A test of something else names no stage.
        assert_eq!(statement_phase("suite.test(x)"), None);
    }

    #[test]
    fn a_forward_given_the_labels_is_a_training_step_unless_a_frame_says_otherwise() {
        let script = |function: &str, code: &str| {
            vec![
                frame(1, "<module>", "run.py", Some("main()")),
                frame(3, function, "run.py", Some(code)),
            ]
        };
        let phase = |frames: &[Frame]| user_code_phase(frames).map(|(phase, _)| phase);
        for code in [
            "outputs = model(input_ids=batch, labels=batch)",
            "out = self.net(x, labels=y)",
            "loss = model(**inputs, labels = labels).loss",
            "return model.forward(ids, labels=ids)",
        ] {
            let frames = script("run_lora", code);
            assert_eq!(phase(&frames), Some(Phase::TrainingStep), "{code}");
            let (_, why) = user_code_phase(&frames).unwrap();
            assert!(why.contains("a forward given the labels"), "{why}");
        }
        // An evaluation computes the same loss: its name decides.
        assert_eq!(
            phase(&script(
                "evaluate",
                "outputs = model(input_ids=b, labels=b)"
            )),
            Some(Phase::Inference)
        );
        let mut nested = script("step", "outputs = model(input_ids=b, labels=b)");
        nested.insert(1, frame(2, "run_validation", "run.py", Some("step(b)")));
        assert_eq!(phase(&nested), Some(Phase::Inference));
        // Under a no_grad decorator's wrapper: an evaluation's loss, nothing decided.
        let mut decorated = script("run_lora", "outputs = model(input_ids=b, labels=b)");
        decorated.insert(
            1,
            frame(
                2,
                "decorate_context",
                "/venv/lib/python3.12/site-packages/torch/utils/_contextlib.py",
                Some("return func(*args, **kwargs)"),
            ),
        );
        assert_eq!(phase(&decorated), None);
        // A generation says its own stage.
        assert_eq!(
            phase(&script("run_lora", "out = model.generate(ids, labels=ids)")),
            Some(Phase::Inference)
        );
        // Not a forward given labels: a constructor, a comparison, data handling, no labels.
        for code in [
            "model = MyModel(config, labels=classes)",
            "if labels == None: model(x)",
            "batch = collate(samples, labels=labels)",
            "outputs = model(input_ids=batch)",
            "x = tokenizer(text, labels=y)",
        ] {
            assert_eq!(phase(&script("run_lora", code)), None, "{code}");
        }
    }

    #[test]
    fn app_node_names_say_their_stage() {
        use Phase::*;
        for (name, phase) in [
            ("KSampler", Some(Inference)),
            ("SamplerCustomAdvanced", Some(Inference)),
            ("VAEDecode", Some(Inference)),
            ("VAEEncodeForInpaint", Some(Inference)),
            ("CLIPTextEncode", Some(Inference)),
            ("denoise_latents", Some(Inference)),
            ("anima_denoise", Some(Inference)),
            ("l2i", Some(Inference)),
            ("CheckpointLoaderSimple", Some(WeightsLoad)),
            ("UNETLoader", Some(WeightsLoad)),
            ("NunchakuQwenImageDiTLoader", Some(WeightsLoad)),
            ("main_model_loader", Some(WeightsLoad)),
            ("LoadCheckpoint", Some(WeightsLoad)),
            // A file read, no model; neither stage; both.
            ("LoadImage", None),
            ("ImageLoader", None),
            ("LoadLatent", None),
            ("SaveImage", None),
            ("ImageScale", None),
            ("SamplerLoader", None),
        ] {
            assert_eq!(node_phase(name), phase, "{name}");
        }
    }

    #[test]
    fn the_node_an_app_names_at_the_failure_decides_last() {
        const OOM: &str =
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.";
        let phase_of = |text: &str| crate::analyze::explain::explain_text(text).phase;
        let invoke = format!(
            "[2026-09-19 21:45:44,454]::[InvokeAI]::ERROR --> Error while invoking session c39, \
             invocation 6d4 (denoise_latents): {OOM}\n"
        );
        let report = phase_of(&invoke);
        assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
        assert!(
            report.evidence[0].contains("the app's node that raised it, `denoise_latents`"),
            "{report:?}"
        );
        let comfy = format!("Error occurred when executing CheckpointLoaderSimple:\n\n{OOM}\n");
        assert_eq!(phase_of(&comfy).failed_in, Phase::WeightsLoad);
        let report_form = format!("- **Node Type:** KSampler\n- **Exception Type:** x\n{OOM}\n");
        assert_eq!(phase_of(&report_form).failed_in, Phase::Inference);
        // An app's line naming the failure without its message, and the stage with it.
        let forge = "Encountered Out of Memory during Sampling; Unloading all Models...\n";
        assert_eq!(phase_of(forge).failed_in, Phase::Inference);
        let dialog = format!("UNETLoader\n{OOM}\n");
        assert_eq!(phase_of(&dialog).failed_in, Phase::WeightsLoad);
        // An image loader, an exception's class, a name far above: nothing.
        for text in [
            format!("LoadImage\n{OOM}\n"),
            format!("RuntimeError\n{OOM}\n"),
            format!("UNETLoader\none\ntwo\nthree\nfour\n{OOM}\n"),
        ] {
            assert_eq!(phase_of(&text).failed_in, Phase::Unknown, "{text}");
        }
    }

    #[test]
    fn the_code_shown_above_an_error_without_frames_names_its_stage() {
        const OOM: &str =
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.";
        let phase_of = |text: &str| crate::analyze::explain::explain_text(text).phase;
        let snippet = format!(
            "If run this code:\n```python\noutputs = model.generate(**inputs, num_beams=2)\n```\n\
             Then OutofMemoryError occurs:\n```bash\n{OOM}\n```\n"
        );
        let report = phase_of(&snippet);
        assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
        assert!(
            report.evidence[0].contains("the code shown just above the error"),
            "{report:?}"
        );
        let load =
            format!("```python\nm = keras_nlp.models.X.from_preset(\"gemma\")\n\n{OOM}\n```\n");
        assert_eq!(phase_of(&load).failed_in, Phase::WeightsLoad);
        // A sentence naming another stage in between stops the reading (the reporter's words
        // decide then).
        let between = format!(
            "model = AutoModel.from_pretrained(p)\nthen when I run inference I get\n{OOM}\n"
        );
        assert_eq!(phase_of(&between).failed_in, Phase::Inference);
        // A whole training run shows no stage by itself; code far above is not read.
        for text in [
            format!("trainer.fit(model, train_loader, val_loader)\n```\n\n```\n{OOM}\n"),
            format!("out = model.generate(x)\na\nb\nc\nd\ne\nf\n{OOM}\n"),
        ] {
            assert_eq!(phase_of(&text).failed_in, Phase::Unknown, "{text}");
        }
    }

    #[test]
    fn pytest_test_functions_are_named_for_what_they_check() {
        let test = [frame(
            4,
            "test_set_memory_fraction",
            "test/test_xpu.py",
            Some("f(x)"),
        )];
        assert_eq!(user_code_phase(&test), None);
        let evaluation = [frame(4, "test_loop", "/home/me/tutorial.py", Some("f(x)"))];
        assert_eq!(
            user_code_phase(&evaluation).map(|(phase, _)| phase),
            Some(Phase::Inference)
        );
        // Its statement still counts.
        let backward = [frame(
            4,
            "test_grad",
            "test_autograd.py",
            Some("y.backward()"),
        )];
        assert_eq!(
            user_code_phase(&backward).map(|(phase, _)| phase),
            Some(Phase::TrainingStep)
        );
    }

    #[test]
    fn an_input_move_leaves_the_stage_to_the_callers() {
        let moved = [frame(3, "step", "loop.py", Some("x = x.to(device)"))];
        assert_eq!(user_code_phase(&moved), None);
        let frames = [
            frame(1, "train_one_epoch", "loop.py", Some("step(x)")),
            frame(3, "step", "loop.py", Some("x = x.to(device)")),
        ];
        assert_eq!(
            user_code_phase(&frames).map(|(phase, _)| phase),
            Some(Phase::TrainingStep)
        );
    }

    #[test]
    fn library_frames_and_called_frames_are_not_the_callers() {
        let frames = [
            frame(
                1,
                "run",
                "/v/lib/python3.11/site-packages/some_lib/loop.py",
                Some("loss.backward()"),
            ),
            Frame {
                called: true,
                ..frame(3, "train_epoch", "x.py", None)
            },
        ];
        assert_eq!(user_code_phase(&frames), None);
    }

    /// The statement under a printed frame reaches the decision through the explainer, under a
    /// log prefix. (Like the calls read from it, a statement is read only when the frame's line
    /// and the next one arrive in the same chunk of input.)
    #[test]
    fn the_explainer_keeps_the_statement_under_each_frame() {
        let text = "Traceback (most recent call last):\n\
[rank0]:   File \"/home/me/proj/train.py\", line 40, in <module>\n\
[rank0]:     main()\n\
[rank0]:   File \"/home/me/proj/train.py\", line 31, in main\n\
[rank0]:     loss.backward()\n\
[rank0]:   File \"/v/lib/python3.11/site-packages/torch/_tensor.py\", line 626, in _run_hooks\n\
[rank0]:     return handle(self)\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total \
capacity of 23.65 GiB of which 1.12 GiB is free.\n";
        let whole = crate::analyze::explain::explain_text(text);
        assert_eq!(
            whole.phase.failed_in,
            Phase::TrainingStep,
            "{:?}",
            whole.phase
        );
        assert!(
            whole
                .phase
                .evidence
                .iter()
                .any(|e| e.starts_with("line 5: your code (proj/train.py) runs `loss.backward()`")),
            "{:?}",
            whole.phase.evidence
        );
        // The same traceback moving an input: nothing shows the stage.
        let input = text.replace("loss.backward()", "x = x.to(device)");
        let report = crate::analyze::explain::explain_text(&input);
        assert_eq!(report.phase.failed_in, Phase::Unknown, "{:?}", report.phase);
    }

    /// The words next to a failure (read by `explain`'s report) when nothing else shows the
    /// stage.
    #[test]
    fn the_words_next_to_the_failure_name_the_stage_last() {
        const OOM: &str =
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.";
        let phase_of = |text: &str| crate::analyze::explain::explain_text(text).phase;

        // `logger.exception`: the message above the traceback.
        let logged = format!(
            "[2026-12-01 17:13:31][server][ERROR] - request 7f3a failed while running the \
             model\nTraceback (most recent call last):\n  File \"/srv/app.py\", line 9, in \
             handle\n    out = model(x)\n{OOM}\n"
        );
        let report = phase_of(&logged);
        assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
        assert!(
            report.evidence[0].starts_with(
                "line 1: the message logged with the traceback, `request 7f3a failed while \
                 running the model`"
            ),
            "{report:?}"
        );
        // A line above the traceback that reports no error is not its message; when it is a
        // status line counting a stage's progress (a request and its id), that stage was
        // running (read as such, see `status_line_phase` in explain/assemble.rs).
        let info = logged
            .replace("[ERROR]", "[INFO]")
            .replace("request 7f3a failed while", "request 7f3a started");
        let report = phase_of(&info);
        assert_eq!(report.failed_in, Phase::Inference, "{report:?}");
        assert!(
            report.evidence[0].contains("status line printed just before it failed"),
            "{report:?}"
        );
        let info = logged.replace("[ERROR]", "[INFO]").replace(
            "request 7f3a failed while running the model",
            "cache of 3 blocks cleared",
        );
        assert_eq!(phase_of(&info).failed_in, Phase::Unknown);

        // A thread's target function, as `threading.excepthook` names it.
        let thread = format!(
            "Exception in thread Thread-3 (generate_reply):\nTraceback (most recent call \
             last):\n  File \"/srv/app.py\", line 9, in run\n    out = model(x)\n{OOM}\n"
        );
        assert_eq!(phase_of(&thread).failed_in, Phase::Inference);
        let plain = thread.replace("(generate_reply)", "(worker)");
        assert_eq!(phase_of(&plain).failed_in, Phase::Unknown);

        // The app's words introducing the error on its line; prose around it is not.
        let wrapped = format!("RuntimeError: Error during generation: {OOM}\n");
        assert_eq!(phase_of(&wrapped).failed_in, Phase::Inference);
        let prose = format!("when I send a chat request it fails with {OOM}\n");
        assert_eq!(phase_of(&prose).failed_in, Phase::Unknown);

        // A traceback pasted from its last statement: the statement above the error.
        let cut = format!(
            "    return Variable._execution_engine.run_backward(\n           ^^^^^^^^^^^^\n{OOM}\n"
        );
        assert_eq!(phase_of(&cut).failed_in, Phase::TrainingStep);
        let forward = cut.replace("Variable._execution_engine.run_backward(", "self.fc(x)");
        assert_eq!(phase_of(&forward).failed_in, Phase::Unknown);
    }

    /// A stage's progress bar left unfinished right above the traceback names the stage; a
    /// finished one, or one whose description names no stage, does not.
    #[test]
    fn an_unfinished_progress_bar_above_the_traceback_names_the_stage() {
        let text = |bar: &str| {
            format!(
                "{bar}\nTraceback (most recent call last):\n  File \"/srv/x.py\", line 3, in run\n    \
                 y = f(x)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 \
                 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n"
            )
        };
        let phase_of = |bar: &str| crate::analyze::explain::explain_text(&text(bar)).phase;
        let running = phase_of("Generating:   0%|          | 0/3 [00:19<?, ?it/s]");
        assert_eq!(running.failed_in, Phase::Inference, "{running:?}");
        assert!(running.evidence[0]
            .starts_with("line 1: the progress bar running when it failed, `Generating`"));
        assert_eq!(
            phase_of("Epoch 2:  40%|████      | 40/100 [00:19<00:30, 2.1it/s]").failed_in,
            Phase::TrainingStep
        );
        assert_eq!(
            phase_of("Loading checkpoint shards: 100%|██████████| 4/4 [00:06<00:00]").failed_in,
            Phase::Unknown
        );
        assert_eq!(
            phase_of("Map:  40%|████      | 40/100 [00:19<00:30, 2.1it/s]").failed_in,
            Phase::Unknown
        );
    }

    #[test]
    fn statements_that_name_a_start_up_stage() {
        use Phase::*;
        for (code, phase) in [
            (
                "with torch.cuda.graph(g, pool=pool):",
                Some(CudaGraphCapture),
            ),
            (
                "step = torch.cuda.make_graphed_callables(step, (x,))",
                Some(CudaGraphCapture),
            ),
            ("g.capture_end()", Some(CudaGraphCapture)),
            (
                "model.resize_token_embeddings(len(tokenizer))",
                Some(FormatConversion),
            ),
            ("q, s = quantize_int8(layer.weight)", Some(FormatConversion)),
            ("sd[k] = convert_to_fp8(v.weight)", Some(FormatConversion)),
            ("ids = tokenizer.convert_tokens_to_ids(toks)", None),
            ("img = convert_rgb(img)", None),
            ("tensors[k] = f.get_tensor(k)", Some(WeightsLoad)),
            (
                "with safe_open(p, framework=\"pt\", device=\"cuda\") as f:",
                Some(WeightsLoad),
            ),
            (
                "sd = safetensors.torch.load_file(p, device=\"cuda\")",
                Some(WeightsLoad),
            ),
            ("out = interpreter.get_tensor(idx)", None),
            (
                "optimizer.load_state_dict(ckpt[\"optimizer\"])",
                Some(WeightsLoad),
            ),
            ("y = model(x)", None),
        ] {
            assert_eq!(statement_phase(code).map(|(p, _)| p), phase, "{code}");
        }
    }
}
