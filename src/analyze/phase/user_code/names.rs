//! The stage a name says: a function of the caller's (`train_one_epoch`, `evaluate`,
//! `load_model`), a library's, an app's node (`KSampler`, `VAEDecode`), or free words next to a
//! failure (`request 7f3a failed while running the model`).

use crate::model::explain::Phase;

/// The words of an identifier: `train_one_epoch` → train, one, epoch; `trainStep` → train, step.
pub(in crate::analyze::phase) fn words(name: &str) -> Vec<String> {
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

pub(in crate::analyze::phase) const TRAINING_WORDS: &[&str] = &[
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
    // The fine-tuning methods by their names (TRL's `GRPOTrainer`, `DPOTrainer`, `PPOTrainer`,
    // `SFTTrainer`; `grpo_step`, `dpo_loss`).
    "grpo",
    "dpo",
    "ppo",
    "sft",
];
pub(in crate::analyze::phase) const INFERENCE_WORDS: &[&str] = &[
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
    // A language model's evaluation by its figure (`perplexity`, `compute_ppl`).
    "perplexity",
    "ppl",
    // Speakers told apart in a recording (`process_diarization`, `diarize`).
    "diarization",
    "diarize",
    // A track's stems separated (`demix_demucs`, Ultimate Vocal Remover's `seperate` as it
    // spells it), text translated or read off pages (`translate_batch`, `run_ocr`).
    "separate",
    "seperate",
    "demix",
    "translate",
    "ocr",
];
/// Words of start-up stages (`_capture_generation_cuda_graphs`, `warmup_generate`,
/// `profile_run`, `compile_train_step`): a name with one of them says a start-up stage the
/// other words do not name, so it decides nothing here.
pub(in crate::analyze::phase) const STARTUP_WORDS: &[&str] = &[
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
pub(in crate::analyze::phase) const LOAD_VERBS: &[&str] = &[
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
pub(in crate::analyze::phase) const LOAD_OBJECTS: &[&str] = &[
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
pub(in crate::analyze::phase) const BUILT_TENSORS: &[&str] = &[
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
pub(in crate::analyze::phase) fn builds_a_tensor(words: &[String]) -> bool {
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
    if builds_a_train_state(&words) {
        return Some(Phase::WeightsLoad);
    }
    if gan_update(&words) {
        return Some(Phase::TrainingStep);
    }
    let training = has(TRAINING_WORDS);
    let inference = has(INFERENCE_WORDS);
    let load = (has(LOAD_VERBS) && has(LOAD_OBJECTS))
        || (has(COMPONENT_VERBS) && has(COMPONENT_OBJECTS))
        || words.iter().any(|w| w == "restore");
    one_stage(training, inference, load)
}

/// A model's parts a loader is named for (`load_ideogram4_text_encoder`, `load_vae`,
/// `build_unet`, session 49), with a verb that makes or reads one; not `get` or `prepare`,
/// which name an encoder's inputs or outputs as often (`get_encoder_output`).
const COMPONENT_VERBS: &[&str] = &[
    "load",
    "restore",
    "init",
    "initialize",
    "build",
    "create",
    "instantiate",
    "setup",
];
const COMPONENT_OBJECTS: &[&str] = &[
    "encoder",
    "encoders",
    "vae",
    "unet",
    "transformer",
    "backbone",
    "lora",
    "adapter",
];

/// A GAN's or a pix2pix-style trainer's update of its networks: SPADE's and its followers'
/// `run_generator_one_step` / `run_discriminator_one_step` (`trainers/pix2pix_trainer.py`),
/// CycleGAN's and pix2pix's `optimize_parameters` (`models/*_model.py`), `update_generator`,
/// `generator_step`: a training step of one of the networks.
pub(in crate::analyze::phase) fn gan_update(words: &[String]) -> bool {
    let has = |word: &str| words.iter().any(|w| w == word);
    let network = has("generator") || has("discriminator");
    (network && (has("step") || has("update")))
        || words
            .windows(2)
            .any(|pair| pair[0] == "optimize" && pair[1] == "parameters")
}

/// A training's state built before its first step: Flax's `TrainState` (the model's
/// parameters, the optimizer and its state) as its examples make it (`create_train_state`,
/// flax `examples/*/train.py`; `init_train_state` in openpi and big_vision): the parameters
/// are initialised or restored and placed, a load of the weights, not a step.
pub(in crate::analyze::phase) fn builds_a_train_state(words: &[String]) -> bool {
    words.windows(3).any(|three| {
        LOAD_VERBS.contains(&three[0].as_str())
            && matches!(three[1].as_str(), "train" | "training")
            && three[2] == "state"
    })
}

/// A training loop named with the evaluation it runs between its steps: `train_and_evaluate`
/// (VITS and its forks, `jaywalnut310/vits` `train.py`: each epoch trains, and every
/// `eval_interval` steps rank 0 calls `evaluate`), `train_and_eval`, `train_and_validate`,
/// `fit_and_evaluate`. The evaluation is a call of its own, which a deeper frame names when the
/// failure is in it; the frame of the loop itself is the training.
pub(in crate::analyze::phase) fn trains_then_evaluates(words: &[String]) -> bool {
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
    if builds_a_train_state(&words) {
        return Some(Phase::WeightsLoad);
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
    // (`inference_one_epoch`, ai2cm/ace's inference pass inside its trainer; session 45.)
    const SHORT: &[&str] = &[
        "eval",
        "val",
        "test",
        "testing",
        "predict",
        "prediction",
        "inference",
        "infer",
    ];
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
        // A bar or a line named for a fine-tuning method (`grpo: 0/200`, `dpo epoch 1`).
        "grpo",
        "dpo",
        "ppo",
        "sft",
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
        // A reranker's and an upscaler's work on inputs (`rerank failed`, `upscale done`).
        "rerank",
        "reranking",
        "upscale",
        "upscaling",
        // An app's model at work on a page, an image or a text (`Nanonets OCR extraction
        // failed:`, `Flux inpainting error:`, `Recognizing Text:` above surya's bar,
        // `Translating 2 bubbles`, `Captioning images`): the activities, not the tasks' nouns
        // (`detection`, `segmentation` also name what a training learns).
        "ocr",
        "inpaint",
        "inpainting",
        "recognizing",
        "detecting",
        "segmenting",
        "captioning",
        "translating",
        "synthesizing",
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
    // A quantizer's pass named alone (llm-awq's `Running AWQ...` bar, `quantizing layers`,
    // GPTQ's calibration): the weights being converted (session 52). With a training's,
    // an inference's or a load's words it names one of those (quantization-aware training).
    const CONVERTING: &[&str] = &[
        "quantize",
        "quantizing",
        "quantising",
        "quantization",
        "awq",
        "gptq",
        "calibrating",
    ];
    if has(CONVERTING) && !training && !inference && !load {
        return Some(Phase::FormatConversion);
    }
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
    // A node that loads an encoder (`DownloadAndLoadHyVideoTextEncoder`, `CLIPVisionEncoderLoader`)
    // names the model it loads, not an encoding (session 47).
    let loads_encoder = lower.contains("load") && lower.contains("encoder");
    let inference = !loads_encoder
        && (RUNS.iter().any(|part| lower.contains(part)) || word("l2i") || word("i2l"));
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
        "encoder",
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

/// The stage of a workflow app's node named at its failure (ComfyUI's `Error occurred when
/// executing DynamiCrafterI2V:`, its error report's `Node Type: ToonCrafterInterpolation`, or the
/// node's method right under ComfyUI's `execution.py` dispatch: `encode`, `process`,
/// `loadmodel`): the stage [`node_phase`] reads, else a generation. A workflow's nodes, custom
/// ones included, apply models to its inputs (samplers, interpolators, upscalers, detailers,
/// face swappers, text encoders); ComfyUI loads models inside its loader nodes or lazily under
/// a sampler, whose frames then decide. Not a node that reads, writes or shows files, trains,
/// or frees memory, or joins images: those apply no model (`SaveImage`, `PreviewImage`,
/// `LoadImage`, `TrainLoraNode`, `UnloadAllModels`, `ImageConcatMulti`).
pub fn workflow_node_phase(name: &str) -> Option<Phase> {
    if let Some(phase) = node_phase(name) {
        return Some(phase);
    }
    let lower = name.to_ascii_lowercase();
    const NO_MODEL: &[&str] = &[
        "load", "save", "preview", "show", "train", "download", "upload", "cache", "clear", "free",
        "unload", "purge", "cleanup", "print", "display", "note", "concat",
    ];
    (!NO_MODEL.iter().any(|word| lower.contains(word))).then_some(Phase::Inference)
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

/// The stage when exactly one of training, inference and loading is named; two or none decide
/// nothing.
pub(in crate::analyze::phase) fn one_stage(
    training: bool,
    inference: bool,
    load: bool,
) -> Option<Phase> {
    match (training, inference, load) {
        (true, false, false) => Some(Phase::TrainingStep),
        (false, true, false) => Some(Phase::Inference),
        (false, false, true) => Some(Phase::WeightsLoad),
        _ => None,
    }
}
