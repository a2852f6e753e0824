//! Inference told by what surrounds a failure, when nothing stronger names its stage: a model
//! was being RUN on inputs (a request served, an image sampled, a prompt generated, a script
//! named for prediction) when the memory ran out.
//!
//! Weighed below every traceback frame, engine line, hint, progress stage and nearby words that
//! name a stage (`phase::decide`): it only fills a phase left `unknown`, before the reporter's
//! prose is read. Four kinds of evidence, each from the programs' own sources or a general
//! reading convention (docs/phases.md, "Inference told by what surrounds the failure"):
//!
//! 1. **A request to an inference endpoint** on a line at or before the failure, or on an
//!    access/error line just under it that reports the failure (the path as the servers route
//!    it: AUTOMATIC1111 `modules/api/api.py` `Api.__init__` (`/sdapi/v1/txt2img`, `img2img`,
//!    `extra-single-image`, `extra-batch-images`, `interrogate`); vLLM
//!    `vllm/entrypoints/openai/api_server.py` (`/v1/chat/completions`, `/v1/completions`,
//!    `/v1/embeddings`, `/v1/audio/transcriptions`, `/v1/rerank`, `/v1/score`, `/pooling`,
//!    `/classify`); ollama `server/routes.go` `GenerateRoutes` (`/api/generate`, `/api/chat`,
//!    `/api/embed`, `/api/embeddings`); llama.cpp `tools/server/server.cpp` (`/completion`,
//!    `/completions`, `/embedding`, `/embeddings`, `/infill`, `/rerank`); TGI `router/src/server.rs`
//!    (`/generate`, `/generate_stream`); TEI `router/src/http/server.rs` (`/embed`, `/predict`,
//!    `/rerank`); SageMaker's `/invocations`; KServe/Triton's v2 `/v2/models/<m>/infer`).
//!    Paths that load, list or poll (`/sdapi/v1/options`, `/api/pull`, `/internal/progress`) are
//!    not read. ollama loads a model when the request for it comes, so its request lines count
//!    only when printed before the failure (a request answered before it: the model had loaded).
//! 2. **A generation's progress bar** printed before the failure, with no load and no training
//!    line after it: a tqdm bar whose label names a generation (`Sampling`, `Generating`,
//!    `Denoising`, `Transcribing`, `Upscaling`, `Interpolating`, AUTOMATIC1111's `Total
//!    progress`, `modules/shared_total_tqdm.py`), or, in an image app (AUTOMATIC1111/Forge/
//!    SD.Next, ComfyUI, Fooocus, InvokeAI, diffusers), a bare bar: k-diffusion's samplers
//!    (`k_diffusion/sampling.py`: `trange(len(sigmas) - 1, disable=disable)`) and diffusers'
//!    pipelines (`DiffusionPipeline.progress_bar`) draw their denoising steps without a label.
//! 3. **A run that had finished starting** in an app that only loads and then serves: the last
//!    stage line before the failure says the engine finished initialising or the API accepts
//!    requests (LLM servers), or that the model was loaded (an image app: AUTOMATIC1111's `Model
//!    loaded in …`, whose next work is a generation; ASR apps), and nothing started after it.
//! 4. **The entry script is named for running a model**: the traceback's outermost frame
//!    (`<module>`, `main`) is the caller's own file named `infer*.py`, `inference*.py`,
//!    `predict*.py`, `demo*.py`, `generate*.py`, `sample*.py`, `txt2img.py`, `img2img.py`,
//!    `eval*.py`, `test*.py` (not a pytest test), or the shell line above the failure runs such
//!    a script (`python infer.py …`), and no frame or statement shows training.
//!
//! 5. **The caller's failing statement runs a model for its outputs** (`statement.rs`): a model
//!    call with a prediction read off it, gradients off around it, or lines printing one result
//!    per input. When no inference reading holds, the same statement computing a loss (outside
//!    any evaluation shown) gives training_step.
//!
//! Any training shown around the failure (a training line in the timeline, a loss, an epoch, an
//! optimizer step, `backward`) cancels the inference readings.

use super::Frame;
use crate::model::explain::{ContextLine, EventKind, Phase, PhaseReport, TimelineEvent};
use crate::model::failure::EngineName;

/// What the inference reading looks at: the lines around one statement of the failure.
#[derive(Debug, Clone, Copy)]
pub struct InferenceInputs<'a> {
    /// The line the failure message starts at.
    pub failure_line: u64,
    /// The lines kept around the failure (before it and a few after), in line order.
    pub lines: &'a [&'a ContextLine],
    /// The run's timeline events.
    pub events: &'a [TimelineEvent],
    /// The failure's traceback frames, outermost first.
    pub frames: &'a [Frame],
    /// The engine or app the report names.
    pub engine: EngineName,
    /// Whether the failure is of the host's memory (its allocator, the OOM killer, a kill).
    pub host_memory: bool,
}

/// How far under the failure an access or error line may report the request that failed.
const AFTER_LINES: u64 = 40;

/// Fills a phase left `unknown` with inference when the lines around the failure show a model
/// being run on inputs (see the module's notes); leaves it alone otherwise.
pub fn fill_unknown(report: &mut PhaseReport, inputs: &InferenceInputs<'_>) {
    if report.failed_in != Phase::Unknown {
        return;
    }
    if let Some(why) = conversion_entry(inputs) {
        report.found(Phase::FormatConversion, why);
        return;
    }
    fill(report, evidence(inputs), inputs);
}

/// Words of a script's name that say it converts: `convert`, `export`, `merge` also name data
/// conversions (`convert_coco_to_yolo.py`, `export_embeddings.py`, `merge_events.py`), so they
/// need a word of a model's weights or format beside them; quantizing or fusing is done to
/// weights.
const CONVERSION_WORDS: &[&str] = &[
    "convert",
    "conversion",
    "converter",
    "export",
    "exporter",
    "merge",
];

/// Words of a script's name that say it converts a model's weights on their own.
const WEIGHTS_CONVERSION_WORDS: &[&str] = &["quantize", "quantise", "quantization", "fuse"];

/// Words of a script's name that name a model's weights or one of their formats.
const WEIGHTS_WORDS: &[&str] = &[
    "model",
    "models",
    "weights",
    "weight",
    "checkpoint",
    "checkpoints",
    "ckpt",
    "lora",
    "adapter",
    "adapters",
    "peft",
    "hf",
    "gguf",
    "ggml",
    "onnx",
    "trt",
    "tensorrt",
    "engine",
    "safetensors",
    "torchscript",
    "coreml",
    "tflite",
    "openvino",
    "awq",
    "gptq",
    "fp8",
    "int8",
    "int4",
    "qkv",
];

/// Whether a script's file name says it converts a model's weights: a word of
/// [`WEIGHTS_CONVERSION_WORDS`], or of [`CONVERSION_WORDS`] with a word of [`WEIGHTS_WORDS`]
/// in the stem, as its first or last word (`convert_checkpoint.py` of TensorRT-LLM's
/// examples, transformers' `convert_llama_weights_to_hf.py`, `merge_lora.py`,
/// `export_onnx.py`, `quantize.py`, `fuse_qkv.py`), and no training word in it.
pub fn conversion_script(file: &str) -> bool {
    named_script(file, |words| {
        let ends = [words.first(), words.last()];
        let alone = ends
            .iter()
            .flatten()
            .any(|word| WEIGHTS_CONVERSION_WORDS.contains(word));
        let with_weights = ends
            .iter()
            .flatten()
            .any(|word| CONVERSION_WORDS.contains(word))
            && words.iter().any(|word| WEIGHTS_WORDS.contains(word));
        alone || with_weights
    })
}

/// The stem of a Python or shell script's file name, in lower case (`…/Infer_SD.py` →
/// `infer_sd`); `None` for another file.
fn script_stem(file: &str) -> Option<String> {
    let base = file.rsplit(['/', '\\']).next().unwrap_or_default();
    let stem = base
        .strip_suffix(".py")
        .or_else(|| base.strip_suffix(".sh"))?;
    Some(stem.to_ascii_lowercase())
}

/// Whether a Python script's file name (`…/infer_sd.py`) passes `named` on the words of its
/// stem (lower case, digits trimmed from their ends: `demo2` → `demo`), is not a pytest module
/// (`test_*.py`, `*_test.py`: a suite's test, not a run) and holds no training word
/// (`demo_finetune.py`).
fn named_script(file: &str, named: impl Fn(&[&str]) -> bool) -> bool {
    let Some(lower) = script_stem(file) else {
        return false;
    };
    if lower.starts_with("test_") || lower.ends_with("_test") {
        return false;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| word.trim_end_matches(|c: char| c.is_ascii_digit()))
        .collect();
    named(&words) && !trains(&lower.replace(['-', '.'], "_").replace('_', " "))
}

/// The program's entry script (the outermost frame, `<module>` or `main`, outside any library)
/// is named for converting a model's weights, and nothing around the failure shows training:
/// the job is a conversion, whatever statement of it failed (reading, fusing, casting or
/// writing the tensors).
fn conversion_entry(inputs: &InferenceInputs<'_>) -> Option<String> {
    // Of the host's memory, a converter's reading of the checkpoint is its job as much as the
    // conversion (as of an inference script, `entry_script`).
    if inputs.host_memory || training_shown(inputs).is_some() {
        return None;
    }
    let entry = inputs.frames.iter().find(|frame| !frame.called)?;
    let named = matches!(entry.function.as_str(), "<module>" | "main")
        && !super::is_library_file(&entry.file)
        && conversion_script(&entry.file)
        && !pytest_run(inputs.frames);
    named.then(|| {
        format!(
            "line {}: the program's entry script {} is named for converting a model's weights \
             (no frame or statement shows training); line {}: the failure came under it: \
             format conversion",
            entry.line,
            super::short_path(&entry.file),
            inputs.failure_line
        )
    })
}

/// [`fill_unknown`] from the caller's failing statement alone (a forward run for its outputs,
/// a loss computed): for an error no failure message names, where the lines around a
/// traceback (the entry script's name, a request) do not tie it to the error.
pub fn fill_from_statement(report: &mut PhaseReport, inputs: &InferenceInputs<'_>) {
    if report.failed_in != Phase::Unknown {
        return;
    }
    let forward = training_shown(inputs)
        .is_none()
        .then(|| statement::forward_for_outputs(inputs))
        .flatten();
    fill(report, forward, inputs);
}

fn fill(report: &mut PhaseReport, inference: Option<String>, inputs: &InferenceInputs<'_>) {
    let Some((phase, why)) = inference
        .map(|why| (Phase::Inference, why))
        .or_else(|| statement::loss_for_evaluation(inputs).map(|why| (Phase::Inference, why)))
        .or_else(|| statement::loss_for_training(inputs).map(|why| (Phase::TrainingStep, why)))
    else {
        return;
    };
    report.found(phase, why);
    report.prompt_can_be_cause = if report.server_was_ready == Some(false) {
        Some(false)
    } else if phase == Phase::Inference {
        Some(true)
    } else {
        None
    };
}

/// The evidence that a model was being run on inputs when the failure happened, if any.
pub fn evidence(inputs: &InferenceInputs<'_>) -> Option<String> {
    if training_shown(inputs).is_some() {
        return None;
    }
    request(inputs)
        .or_else(|| generation_bar(inputs))
        .or_else(|| job_line(inputs))
        .or_else(|| served_after_start(inputs))
        .or_else(|| entry_script(inputs))
        .or_else(|| run_call(inputs))
        .or_else(|| statement::forward_for_outputs(inputs))
        .or_else(|| per_input_lines(inputs))
}

/// The line that shows training around the failure, if any: a training or evaluation event of
/// the timeline, a frame whose rule is a training step, a statement that runs `backward` or an
/// optimizer, a line before the failure that prints a loss or an epoch.
fn training_shown(inputs: &InferenceInputs<'_>) -> Option<u64> {
    let event = inputs
        .events
        .iter()
        .find(|event| matches!(event.kind, EventKind::TrainingStep | EventKind::Evaluation))
        .map(|event| event.line);
    let frame = inputs.frames.iter().find(|frame| {
        super::frame_rule(&frame.function, &frame.file)
            .is_some_and(|rule| rule.phase == Phase::TrainingStep)
            || frame.code.as_deref().is_some_and(trains)
    });
    let line = inputs
        .lines
        .iter()
        .filter(|line| line.line <= inputs.failure_line)
        .find(|line| trains(&line.text) || builds(&line.text));
    event
        .or(frame.map(|frame| frame.line))
        .or(line.map(|line| line.line))
}

/// Whether a line shows an inference engine being built (TensorRT's builder choosing tactics,
/// autotuning): no stage of the list, and no model run on inputs.
fn builds(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("tactic") || lower.contains("autotun") || lower.contains("building engine")
}

/// Whether a line or statement shows training: `backward`, an optimizer, a loss, an epoch, the
/// words train/training/finetune.
fn trains(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|word| {
            matches!(
                word,
                "backward"
                    | "optimizer"
                    | "loss"
                    | "train_loss"
                    | "epoch"
                    | "epochs"
                    | "train"
                    | "training"
                    | "finetune"
                    | "finetuning"
                    | "fine_tune"
                    | "lr_scheduler"
            ) || word.starts_with("train_")
                || word.ends_with("_loss")
                // PEFT's `print_trainable_parameters` ("trainable params: 1,048,576 || all
                // params: …"), and the fine-tuning methods by their names, alone or in a
                // script's or a bar's (`grpo_lora_step.py`, `dpo_train`, `sft`): TRL's
                // `GRPOTrainer`, `DPOTrainer`, `PPOTrainer`, `SFTTrainer`.
                || word
                    .split('_')
                    .any(|part| matches!(part, "trainable" | "grpo" | "dpo" | "ppo" | "sft" | "rlhf"))
        })
}

/// Paths that run a model on the request's inputs (see the module's notes for the sources).
const ENDPOINTS: &[&str] = &[
    "/sdapi/v1/txt2img",
    "/sdapi/v1/img2img",
    "/sdapi/v1/extra-single-image",
    "/sdapi/v1/extra-batch-images",
    "/sdapi/v1/interrogate",
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/embeddings",
    "/v1/audio/transcriptions",
    "/v1/audio/translations",
    "/v1/audio/speech",
    "/v1/images/generations",
    "/v1/rerank",
    "/v1/score",
    "/pooling",
    "/classify",
    "/api/generate",
    "/api/chat",
    "/api/embed",
    "/api/embeddings",
    "/completion",
    "/completions",
    "/chat/completions",
    "/embedding",
    "/embeddings",
    "/infill",
    "/rerank",
    "/generate",
    "/generate_stream",
    "/embed",
    "/predict",
    "/invocations",
];

/// The inference endpoint a request line names, if it is one: an HTTP `POST` followed by a path
/// or a URL whose path is one of [`ENDPOINTS`] (after any prefix: `/openai/v1/completions`) or
/// a KServe/Triton v2 `…/models/<m>/infer`.
pub fn request_endpoint(text: &str) -> Option<&str> {
    let at = text.find("POST")?;
    // A word on its own: not `POSTGRES`.
    let after = &text[at + 4..];
    if after.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return None;
    }
    let start = after.find('/')?;
    // The path follows within a few characters (`POST /x`, `POST: http://h/x`, `"POST /x`).
    if start > 12 {
        return None;
    }
    let rest = &after[start..];
    let rest = match rest.strip_prefix("//") {
        // `http://host:port/path`: skip the host.
        Some(host_and_path) => &host_and_path[host_and_path.find('/')?..],
        None => rest,
    };
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, '?' | '"' | '\'' | ',' | '}' | ')'))
        .unwrap_or(rest.len());
    let path = rest[..end].trim_end_matches('/');
    let known = ENDPOINTS.iter().any(|endpoint| {
        path.ends_with(endpoint)
            && path[..path.len() - endpoint.len()]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b'.'))
    });
    let v2_infer = path.contains("/models/") && path.ends_with("/infer");
    // An app's own endpoint named for running its model (a Flask app's `/translate`, a demo's
    // `/predict_batch`, a TTS server's `/synthesize`): read as a function's name is
    // (`user_code::name_phase`).
    let last = path.rsplit('/').next().unwrap_or("");
    let named = !last.is_empty()
        && last.len() <= 40
        && crate::analyze::phase::user_code::name_phase(last) == Some(Phase::Inference);
    (known || v2_infer || named).then_some(path)
}

/// Whether a request line is a program's (a server's access or error line, a client's log): it
/// carries an HTTP version, a log level, a time of day, a router's tag or starts with the method;
/// a person's sentence naming an endpoint (`a request to POST /v1/completions returns …`) is the
/// reporter's words, not the log's.
fn logged(text: &str) -> bool {
    let trimmed = text.trim_start_matches(|c: char| c.is_whitespace() || c == '"' || c == '`');
    let time = text.as_bytes().windows(5).any(|w| {
        w[0].is_ascii_digit()
            && w[1].is_ascii_digit()
            && w[2] == b':'
            && w[3].is_ascii_digit()
            && w[4].is_ascii_digit()
    });
    trimmed.starts_with("POST")
        || time
        || [
            "HTTP/",
            "INFO",
            "ERROR",
            "WARN",
            "DEBUG",
            "[GIN",
            "API error",
        ]
        .iter()
        .any(|sign| text.contains(sign))
}

/// Whether a line reports a failed response (an access line's 5xx status, an error line).
fn reports_failure(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("error")
        || lower.contains("exception")
        || lower.contains("fail")
        || lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| word.len() == 3 && word.starts_with('5') && word.parse::<u16>().is_ok())
}

/// Evidence 1: a request to an inference endpoint.
fn request(inputs: &InferenceInputs<'_>) -> Option<String> {
    let failure = inputs.failure_line;
    let before = inputs
        .lines
        .iter()
        .rev()
        .filter(|line| line.line <= failure)
        .filter(|line| logged(&line.text))
        .find_map(|line| request_endpoint(&line.text).map(|path| (line.line, path)));
    if let Some((line, path)) = before {
        let when = if line == failure {
            "on the failure's own line".to_string()
        } else {
            format!("line {failure}: the failure came after it")
        };
        return Some(format!(
            "line {line}: a request to `{path}` (an endpoint that runs the model on the \
             request's inputs); {when}, while serving it: inference"
        ));
    }
    // ollama loads the model a request asks for: its access line under the failure may be the
    // request that was loading it.
    if inputs.engine == EngineName::Ollama {
        return None;
    }
    let after = inputs
        .lines
        .iter()
        .filter(|line| line.line > failure && line.line <= failure + AFTER_LINES)
        .filter(|line| logged(&line.text))
        .find_map(|line| {
            request_endpoint(&line.text)
                .filter(|_| reports_failure(&line.text))
                .map(|path| (line.line, path))
        })?;
    Some(format!(
        "line {}: the request to `{}` (an endpoint that runs the model on the request's inputs) \
         is reported failed under the failure (line {failure}): it failed while serving it: \
         inference",
        after.0, after.1
    ))
}

/// Words of a progress bar's label that name a generation.
const GENERATION_WORDS: &[&str] = &[
    "sampling",
    "sampler",
    "generating",
    "generation",
    "denoising",
    "transcribing",
    "transcribe",
    "upscaling",
    "upscale",
    "interpolating",
    "interpolation",
    "inference",
    "inferencing",
    "predicting",
    "prediction",
    "decoding",
    "synthesizing",
    // A trained model applied to images, video or audio (`Batch Detection`, `Tracking`,
    // `Rendering test views`, `Separating`).
    "detection",
    "detecting",
    "tracking",
    "recognizing",
    "recognition",
    "separating",
    "separation",
    "rendering",
    "captioning",
    "translating",
    "translation",
];

/// A tqdm bar (`label: 40%|████   | 8/20 [00:05<00:07, 1.6it/s]`): its label (maybe empty)
/// and whether it shows a count.
fn progress_bar(text: &str) -> Option<&str> {
    let bar = text.find("%|")?;
    let head = &text[..bar];
    // The percentage's digits, then the label before them.
    let digits = head.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if digits.len() == head.len() {
        return None;
    }
    let counted = text[bar..].split(['|', ' ']).any(|part| {
        part.split_once('/').is_some_and(|(done, total)| {
            !done.is_empty()
                && done.bytes().all(|b| b.is_ascii_digit())
                && !total.is_empty()
                && total.bytes().all(|b| b.is_ascii_digit())
        })
    });
    counted.then(|| digits.trim().trim_end_matches(':').trim())
}

/// Whether the engine is an image app whose bare bars are a sampler's denoising steps (and
/// whose models are loaded as a generation needs them).
pub fn image_app(engine: EngineName) -> bool {
    matches!(
        engine,
        EngineName::Automatic1111
            | EngineName::Comfyui
            | EngineName::Fooocus
            | EngineName::Invokeai
            | EngineName::Diffusers
    )
}

/// Whether a line loads or moves a model (a generation's own loads, ComfyUI `Requested to load
/// …`/`Loading 1 new model`, Forge `Moving model(s)`, a checkpoint being read). A line that
/// unloads (ComfyUI's `Unloading models for lowram load.` while it places the model) does not.
fn loads(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    !lower.contains("unload")
        && lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| matches!(word, "load" | "loading" | "moving" | "reload" | "reloading"))
}

/// Whether a model's load is still in progress after `lines`: a load line with no line after
/// it saying the load finished.
fn load_pending(lines: &[&&ContextLine]) -> bool {
    let mut pending = false;
    for line in lines {
        if crate::parse::engine_log::comfy_load_finished(&line.text) {
            pending = false;
        } else if loads(&line.text) {
            pending = true;
        }
    }
    pending
}

/// Whether a ComfyUI prompt taken (see [`got_prompt`]) shows a model at work before its failure:
/// a model's load finished after it (`loaded completely …`), or the traceback runs a module's
/// forward or a functional op (`torch/nn/`). Its loader nodes read checkpoints without a line,
/// so a failure with neither may be a load.
fn prompt_ran_a_model(inputs: &InferenceInputs<'_>, after: &[&&ContextLine]) -> bool {
    after
        .iter()
        .any(|line| crate::parse::engine_log::comfy_load_finished(&line.text))
        || inputs
            .frames
            .iter()
            .any(|frame| frame.file.replace('\\', "/").contains("torch/nn/"))
}

/// ComfyUI's server taking a workflow to run (`server.py` `post_prompt`:
/// `logging.info("got prompt")`), after a log prefix at most: what runs next are its nodes.
fn got_prompt(text: &str) -> bool {
    let line = text.trim_end();
    line.strip_suffix("got prompt")
        .is_some_and(crate::parse::engine_log::is_log_prefix)
}

/// Evidence 2: a generation's progress bar before the failure, no load unfinished after it.
fn generation_bar(inputs: &InferenceInputs<'_>) -> Option<String> {
    let failure = inputs.failure_line;
    // The failure's own line counts where the bar was drawn on it before the error (tqdm's
    // last redraw, the app's error printed right after it without a newline).
    let bar_before_error = |text: &str| {
        let lower = text.to_ascii_lowercase();
        let error = ["out of memory", "error", "killed"]
            .iter()
            .filter_map(|word| lower.find(word))
            .min();
        matches!((text.find("%|"), error), (Some(bar), Some(error)) if bar < error)
    };
    let before: Vec<&&ContextLine> = inputs
        .lines
        .iter()
        .filter(|line| line.line < failure || line.line == failure && bar_before_error(&line.text))
        .collect();
    let (at, line, label) = before.iter().enumerate().rev().find_map(|(at, line)| {
        let label = progress_bar(&line.text)?;
        let lower = label.to_ascii_lowercase();
        let named = lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| GENERATION_WORDS.contains(&word))
            || lower.starts_with("total progress")
            // sentence-transformers `SentenceTransformer.encode` (`trange(…, desc="Batches")`):
            // texts embedded batch by batch.
            || lower == "batches";
        // A bare bar under a diffusers pipeline's load (`Loading pipeline components...`,
        // `DiffusionPipeline.from_pretrained`) is the pipeline's own `progress_bar` over its
        // denoising steps (`pipelines/pipeline_utils.py` `DiffusionPipeline.progress_bar`, drawn
        // by every pipeline's `__call__`), whatever app loaded it.
        let pipeline = || {
            before[..at]
                .iter()
                .any(|earlier| earlier.text.contains("Loading pipeline components"))
        };
        let bare = label.is_empty() && (image_app(inputs.engine) || pipeline());
        (named || bare).then_some((at, line, label))
    })?;
    if load_pending(&before[at + 1..]) {
        return None;
    }
    let what = if label.is_empty() {
        "a sampler's denoising steps (the app's bars without a label)".to_string()
    } else {
        format!("`{label}`, a model run on its inputs")
    };
    let when = if line.line == failure {
        "drawn just before the failure on its line".to_string()
    } else {
        format!("line {failure}: the failure came after it")
    };
    Some(format!(
        "line {}: a progress bar of {what}; {when} with no load unfinished in between: \
         inference",
        line.line
    ))
}

/// A line an app prints while it runs a model on one input, or when it has finished one, with
/// where it comes from; `true` when the run was in progress (`false`: one had completed).
const JOB_LINES: &[(&str, bool, &str)] = &[
    (
        "Processing audio with duration",
        true,
        "faster-whisper `WhisperModel.transcribe` (`faster_whisper/transcribe.py`)",
    ),
    (
        "Detecting language using up to the first 30 seconds",
        true,
        "openai-whisper `transcribe` (`whisper/transcribe.py`)",
    ),
    (
        "Detected language:",
        true,
        "openai-whisper `transcribe` (`whisper/transcribe.py`)",
    ),
    (
        "Prompt executed in",
        false,
        "ComfyUI's prompt worker (`main.py` `prompt_worker`)",
    ),
    (
        "Output generated in",
        false,
        "text-generation-webui `generate_reply_HF` (`modules/text_generation.py`)",
    ),
    (
        "Running on local URL:",
        false,
        "gradio `Blocks.launch`: the app's UI accepts inputs",
    ),
    (
        "To see the GUI go to:",
        false,
        "ComfyUI `server.py` start: the server accepts prompts",
    ),
    (
        "Uvicorn running on",
        false,
        "uvicorn's start: the API accepts requests",
    ),
    (
        "Application startup complete",
        false,
        "uvicorn/Starlette's start: the API accepts requests",
    ),
];

/// Ultralytics' line for one source it predicts on (`ultralytics/data/loaders.py`
/// `LoadImagesAndVideos.__next__`: `image 3/10 /p/a.jpg: `, `video 1/1 (frame 5/300) /p/v.mp4: `;
/// YOLOv5's `video 1/1 (5/300) …`).
fn prediction_line(text: &str) -> bool {
    let trimmed = text.trim_start();
    let Some(rest) = trimmed
        .strip_prefix("image ")
        .or_else(|| trimmed.strip_prefix("video "))
    else {
        return false;
    };
    let count = rest.split(' ').next().unwrap_or_default();
    count.split_once('/').is_some_and(|(done, total)| {
        !done.is_empty()
            && done.bytes().all(|b| b.is_ascii_digit())
            && !total.is_empty()
            && total.bytes().all(|b| b.is_ascii_digit())
    }) && rest.contains(": ")
}

/// Evidence: an app's line that it was running a model on an input, or had finished one (a
/// generation done, the UI or API up), before the failure with no load line after it.
fn job_line(inputs: &InferenceInputs<'_>) -> Option<String> {
    let failure = inputs.failure_line;
    let before: Vec<&&ContextLine> = inputs
        .lines
        .iter()
        .filter(|line| line.line < failure)
        .collect();
    let (at, line, running, what) = before.iter().enumerate().rev().find_map(|(at, line)| {
        if prediction_line(&line.text) {
            return Some((
                at,
                line,
                true,
                "Ultralytics' line for one source predicted on (`ultralytics/data/loaders.py`)",
            ));
        }
        if got_prompt(&line.text) && prompt_ran_a_model(inputs, &before[at + 1..]) {
            return Some((
                at,
                line,
                true,
                "ComfyUI's server took a workflow to run (`server.py` `post_prompt`)",
            ));
        }
        JOB_LINES
            .iter()
            .find(|(phrase, _, _)| line.text.contains(phrase))
            .map(|(_, running, source)| (at, line, *running, *source))
    })?;
    if load_pending(&before[at + 1..]) {
        return None;
    }
    // After a run done, models unloaded (ComfyUI `Got an OOM, unloading all loaded models.`) or
    // a new prompt taken (`got prompt`, whose loader nodes may read a checkpoint without a line)
    // may mean the next run loads again.
    let reloads = |text: &str| {
        let lower = text.to_ascii_lowercase();
        lower.contains("unload") || lower.contains("got prompt")
    };
    if !running && before[at..].iter().any(|later| reloads(&later.text)) {
        return None;
    }
    let said = if running {
        "a model was running on an input"
    } else {
        "the app was serving (a run done or its UI/API up)"
    };
    Some(format!(
        "line {}: {what}: {said}; line {failure}: the failure came after it with no load \
         unfinished in between, while running the model: inference",
        line.line
    ))
}

/// Words of a program's own line that name the inputs a model is run on, one line per input
/// or batch of them (`rerank query 1: 64 pairs, best 9`, `img_000118.jpg: 5000 candidate
/// boxes, 4195 kept`, `256 queries in 0.01 s: …`, `req-7f02: batch=2 seq_len=2048`).
const INPUT_WORDS: &[&str] = &[
    "query",
    "queries",
    "request",
    "requests",
    "req",
    "prompt",
    "prompts",
    "image",
    "images",
    "img",
    "jpg",
    "jpeg",
    "png",
    "frame",
    "frames",
    "video",
    "videos",
    "clip",
    "clips",
    "mp4",
    "tile",
    "tiles",
    "document",
    "documents",
    "doc",
    "docs",
    "page",
    "pages",
    "pair",
    "pairs",
    "sentence",
    "sentences",
    "utterance",
    "utterances",
    "audio",
    "wav",
    "tokens",
];

/// The words of a line, numbers and punctuation aside (a line's template: two lines a loop
/// printed for two inputs have the same words), lower-cased.
fn template(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The first word of [`INPUT_WORDS`] in `text` that a count or an id stands beside (`64
/// queries`, `query 1`, `img_000118.jpg`, `req-7f02`): a line about one input or a batch of
/// them, not a setting that names inputs (`max_total_tokens=131072`).
fn counted_input(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_alphabetic() {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_alphabetic() {
            at += 1;
        }
        let word = text[start..at].to_ascii_lowercase();
        if !INPUT_WORDS.contains(&word.as_str()) {
            continue;
        }
        let separator = |byte: u8| matches!(byte, b' ' | b'_' | b'-' | b'.' | b'#');
        let before = match start.checked_sub(1).map(|i| bytes[i]) {
            Some(byte) if separator(byte) => start.checked_sub(2).map(|i| bytes[i]),
            other => other,
        };
        let after = match bytes.get(at).copied() {
            Some(byte) if separator(byte) || byte == b':' => bytes.get(at + 1).copied(),
            other => other,
        };
        if before.is_some_and(|b| b.is_ascii_digit()) || after.is_some_and(|b| b.is_ascii_digit()) {
            return Some(word);
        }
    }
    None
}

/// Evidence: the program's own lines, one per input it ran on, right before the failure: the
/// last line it printed (progress bars, warnings and traceback lines aside) and an earlier one
/// of the same template (the same words, numbers aside) name inputs ([`INPUT_WORDS`]), and
/// nothing was loaded after them. A loop over inputs printing what each gave is a model run on
/// inputs; training prints losses, which cancel every inference reading.
fn per_input_lines(inputs: &InferenceInputs<'_>) -> Option<String> {
    let failure = inputs.failure_line;
    let printed: Vec<&&ContextLine> = inputs
        .lines
        .iter()
        .filter(|line| line.line < failure && program_line(&line.text))
        .collect();
    let (last, earlier) = printed.split_last()?;
    let named = counted_input(&last.text)?;
    let words = template(&last.text);
    let twin = earlier
        .iter()
        .rev()
        .take(12)
        .find(|line| template(&line.text) == words)?;
    if loads(&last.text) {
        return None;
    }
    Some(format!(
        "lines {} and {}: the program's own line for each input it ran on (the same words, \
         numbers aside, naming `{named}`); line {failure}: the failure came right after, with \
         nothing loaded in between, while running a model on inputs: inference",
        twin.line, last.line
    ))
}

/// Whether a line is one a program printed itself: not a traceback's frame or source line, a
/// progress bar, a log's warning or a blank line.
fn program_line(text: &str) -> bool {
    let trimmed = text.trim();
    !trimmed.is_empty()
        && !text.starts_with(' ')
        && !text.starts_with('\t')
        && !trimmed.starts_with("Traceback")
        && progress_bar(text).is_none()
        && !trimmed.contains('%')
        && !trimmed.contains("Warning")
        && !trimmed.to_ascii_lowercase().contains("out of memory")
        && !trimmed.contains("Error")
        && !trimmed.contains("failed")
        && !crate::parse::text::is_glog_line(trimmed)
}

/// Whether the engine only loads a model and then serves it: what fails after its start-up
/// runs the model on inputs.
fn serves_only(engine: EngineName) -> bool {
    engine != EngineName::Diffusers
        && (image_app(engine)
            || matches!(
                engine,
                EngineName::Vllm
                    | EngineName::Sglang
                    | EngineName::Tgi
                    | EngineName::Llamacpp
                    | EngineName::Ollama
                    | EngineName::TensorrtLlm
                    | EngineName::Lmdeploy
                    | EngineName::Exllamav2
                    | EngineName::MlcLlm
                    | EngineName::Aphrodite
                    | EngineName::Whisper
                    | EngineName::Ctranslate2
            ))
}

/// Evidence 3: the last stage line before the failure says the start-up completed, in an app
/// that only serves.
fn served_after_start(inputs: &InferenceInputs<'_>) -> Option<String> {
    let module = inputs
        .lines
        .iter()
        .filter(|line| line.line < inputs.failure_line)
        .find_map(|line| serving_module(&line.text).map(|module| (line.line, module)));
    if !serves_only(inputs.engine) && module.is_none() {
        return None;
    }
    let last = inputs
        .events
        .iter()
        .rev()
        .filter(|event| event.line < inputs.failure_line)
        .find(|event| {
            !matches!(
                event.kind,
                EventKind::Traceback | EventKind::Failure | EventKind::FailuresOnly
            )
        })?;
    let loaded_app = matches!(
        inputs.engine,
        EngineName::Automatic1111
            | EngineName::Comfyui
            | EngineName::Fooocus
            | EngineName::Invokeai
            | EngineName::Whisper
            | EngineName::Ctranslate2
    );
    let what = match (last.kind, module) {
        (EventKind::ServerReady, _) => "the API accepts requests".to_string(),
        (EventKind::EngineReady, _) => "the engine finished initialising".to_string(),
        (EventKind::WeightsLoaded, Some((line, module))) if line < last.line => format!(
            "the model is loaded by `{module}` (line {line}), a program that loads a model and \
             then answers prompts"
        ),
        (EventKind::WeightsLoaded, _) if loaded_app => {
            "the model is loaded (the app's start-up ends there)".to_string()
        }
        _ => return None,
    };
    Some(format!(
        "line {}: {what}, start-up completed; line {}: the failure came after it, with no stage \
         started in between, while running the model: inference",
        last.line, inputs.failure_line
    ))
}

/// Stems of scripts named for running a model.
const SCRIPT_WORDS: &[&str] = &[
    "infer",
    "inference",
    "predict",
    "prediction",
    "pred",
    "demo",
    "generate",
    "generation",
    "sample",
    "sampling",
    "txt2img",
    "img2img",
    "eval",
    "evaluate",
    "evaluation",
    "test",
    "transcribe",
    // A detector or a radiance field applied to inputs (YOLO's `detect.py`, NeRF's
    // `render.py`).
    "detect",
    "render",
    "interpolate",
    "upscale",
    // A benchmark of a model's speed runs it on inputs (`benchmark_throughput.py`,
    // `benchmark_serving.py`); one of training is named for it (`benchmark_training.py`: excluded).
    "benchmark",
    "throughput",
];

/// Whether a script's file name says it runs a model: one of [`SCRIPT_WORDS`] as the stem's first
/// or last word (`infer.py`, `infer_sd.py`, `run_inference.py`, `demo2.py`), and no training word
/// in it (`test_train.py`, `demo_finetune.py`).
pub fn inference_script(file: &str) -> bool {
    named_script(file, |words| {
        [words.first(), words.last()]
            .into_iter()
            .flatten()
            .any(|word| SCRIPT_WORDS.contains(word))
    })
}

/// A shell line running a Python script (`python infer.py …`, `python3 demo.py`, `accelerate
/// launch eval.py`, `torchrun … test.py`): the script's path.
fn shell_script(text: &str) -> Option<&str> {
    launched(text)?
        .take_while(|word| !word.contains("--do_train"))
        .find(|word| word.ends_with(".py") || word.ends_with(".sh"))
        .filter(|_| !trains(text))
}

/// The script a reporter's sentence says they ran (`When I run file infer_flux_regional.py. An
/// error appears:`, `after running the script predict.py`; the verb after `I`, `we`, `when`,
/// `while`, `after`, `once` or `trying to`): the word right after the verb, past
/// `file`, `the`, `my`, `script`, that ends in `.py` (the sentence's full stop removed).
fn told_script(text: &str) -> Option<&str> {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|word| word.trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | ',' | ':')))
        .collect();
    // The reporter as the verb's subject, a clause of time or an attempt (`I ran`, `when
    // running`, `when trying to run img2img.py`, `when I use detect.py`): not a title's `Not
    // able to run the text-generation.py example`, nor a run that ended before (`after running
    // train.py, i ran render.py`: the second is the one that failed, `after running the script
    // predict.py` only when no other is told).
    let told = |after: bool| (0..words.len()).find_map(|at| told_at(&words, at, after));
    told(false).or_else(|| told(true))
}

/// The script told with the verb at word `at` ([`told_script`]); `after`: the verb may follow
/// `after`.
fn told_at<'a>(words: &[&'a str], at: usize, after: bool) -> Option<&'a str> {
    let verb = words[at].to_ascii_lowercase();
    if !matches!(
        verb.as_str(),
        "run" | "running" | "ran" | "execute" | "executing" | "executed" | "use" | "using"
    ) {
        return None;
    }
    let word = |back: usize| {
        at.checked_sub(back)
            .map_or(String::new(), |i| words[i].to_ascii_lowercase())
    };
    let (before, two_before) = (word(1), word(2));
    let told = matches!(
        before.as_str(),
        "i" | "we" | "when" | "while" | "once" | "i'm" | "we're"
    ) || (after && before == "after")
        || (before == "to"
            && matches!(
                two_before.as_str(),
                "trying" | "try" | "tried" | "attempting" | "attempt"
            ));
    if !told {
        return None;
    }
    let script = words[at + 1..]
        .iter()
        .find(|word| !matches!(**word, "file" | "the" | "my" | "script" | "python" | "this"))?
        .trim_end_matches('.');
    (script.len() > 3 && script.ends_with(".py")).then_some(script)
}

/// The words after a launcher (`python`, `python3`, `torchrun`, `accelerate launch`,
/// `deepspeed`) on a shell line, quotes and backticks around them removed.
fn launched(text: &str) -> Option<impl Iterator<Item = &str>> {
    let mut words = text
        .split_whitespace()
        .map(|word| word.trim_matches(|c: char| matches!(c, '"' | '\'' | '`')));
    let launcher = words.by_ref().position(|word| {
        // A path's last part; a sentence's full-width punctuation before it, as CJK prose glues
        // the command to it (`部署完成，python inference/cli_demo.py 时报错`).
        let word = word
            .rsplit(['/', '\\', '，', '：', '；', '、', '。'])
            .next()
            .unwrap_or_default();
        word.starts_with("python")
            || matches!(word, "torchrun" | "launch" | "deepspeed" | "bash" | "sh")
    });
    launcher.map(|_| words)
}

/// A shell line running a Python module that serves or chats (`python3 -m fastchat.serve.cli`,
/// `python -m llava.serve.cli`, `python -m x.api_server`): the module's path. Such a program
/// loads a model and then answers prompts (FastChat `fastchat/serve/cli.py` `main` →
/// `chat_loop`: `load_model`, then a `Human:` / `USER:` prompt per turn).
fn serving_module(text: &str) -> Option<&str> {
    let mut words = launched(text)?;
    words.by_ref().find(|word| *word == "-m")?;
    let module = words.next()?;
    module
        .split('.')
        .any(|part| {
            matches!(
                part,
                "serve" | "server" | "serving" | "api_server" | "openai_api_server" | "chat"
            )
        })
        .then_some(module)
        .filter(|_| !trains(text))
}

/// Evidence 4: the entry script is named for running a model. Not of a host-memory failure: a
/// script's host memory is taken by reading its checkpoint and data as much as by running the
/// model (the rule the corpus audit applies to training scripts, `AUDIT.md`, session 13), so its
/// name does not show the stage.
fn entry_script(inputs: &InferenceInputs<'_>) -> Option<String> {
    if inputs.host_memory {
        return None;
    }
    let entry = inputs.frames.iter().find(|frame| !frame.called);
    if let Some(frame) = entry.filter(|frame| {
        matches!(frame.function.as_str(), "<module>" | "main")
            && !super::is_library_file(&frame.file)
            && inference_script(&frame.file)
            && !pytest_run(inputs.frames)
    }) {
        return Some(format!(
            "line {}: the program's entry script {} is named for running a model (no frame or \
             statement shows training); line {}: the failure came under it: inference",
            frame.line,
            super::short_path(&frame.file),
            inputs.failure_line
        ));
    }
    let (line, script, told) = inputs
        .lines
        .iter()
        .rev()
        .filter(|line| line.line < inputs.failure_line)
        .find_map(|line| {
            shell_script(&line.text)
                .map(|script| (line.line, script, false))
                .or_else(|| {
                    // Training words from the script on (`after running train.py, i ran
                    // render.py` names a training that ended before it).
                    told_script(&line.text)
                        .filter(|script| {
                            let from = line.text.find(script).unwrap_or(0);
                            !trains(&line.text[from..])
                        })
                        .map(|script| (line.line, script, true))
                })
        })?;
    let runs = if told {
        "the reporter's words say they ran"
    } else {
        "the command runs"
    };
    (inference_script(script) && inputs.frames.iter().all(|frame| !trains(&frame.function))).then(
        || {
            format!(
                "line {line}: {runs} `{}`, a script named for running a model (no frame or \
                 statement shows training); line {}: the failure came after it: inference",
                script.rsplit(['/', '\\']).next().unwrap_or(script),
                inputs.failure_line
            )
        },
    )
}

/// Methods that run a model on inputs, by the receiver's name they need (empty: any) and where
/// they come from.
const RUN_METHODS: &[(&str, &[&str], &str)] = &[
    (
        ".track(",
        &["model", "yolo", "detector", "tracker"],
        "Ultralytics `Model.track` (`ultralytics/engine/model.py`): prediction with tracking",
    ),
    (
        ".stream_chat(",
        &[],
        "a chat model's streaming answer (ChatGLM's `stream_chat` in its `modeling_chatglm.py`)",
    ),
    (
        ".chat(",
        &["model", "llm"],
        "a chat model's answer (`model.chat(tokenizer, query)` of ChatGLM/Qwen's \
         `modeling_*.py`)",
    ),
    (
        ".encode(",
        &["embed", "sbert", "sentence", "retriever"],
        "sentence-transformers `SentenceTransformer.encode` (`sentence_transformers/\
         SentenceTransformer.py`): embedding inputs",
    ),
    (
        ".embed_documents(",
        &[],
        "an embeddings client (LangChain `Embeddings.embed_documents`): embedding inputs",
    ),
    (
        ".embed_query(",
        &[],
        "an embeddings client (LangChain `Embeddings.embed_query`): embedding inputs",
    ),
];

/// Evidence: the caller's own statement (the innermost user frame's) runs a model on inputs
/// through a method no other reading names (`results = model.track(frame, persist=True)`,
/// `response, history = model.chat(tokenizer, query)`, `emb = embedder.encode(texts)`).
fn run_call(inputs: &InferenceInputs<'_>) -> Option<String> {
    let (frame, code, source) = inputs
        .frames
        .iter()
        .rev()
        .filter(|frame| !frame.called && !super::is_library_file(&frame.file))
        .find_map(|frame| {
            let code = frame.code.as_deref()?;
            RUN_METHODS.iter().find_map(|(method, receivers, source)| {
                let at = code.find(method)?;
                let receiver = code[..at]
                    .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                let named =
                    receivers.is_empty() || receivers.iter().any(|word| receiver.contains(word));
                let not_a_tokenizer = !["tokenizer", "vae", "autoencoder", "processor"]
                    .iter()
                    .any(|word| receiver.contains(word));
                (named && not_a_tokenizer && !receiver.is_empty()).then_some((frame, code, *source))
            })
        })?;
    Some(format!(
        "line {}: your code ({}) runs `{}`: {source}; line {}: the failure came under it: \
         inference",
        frame.line + 1,
        super::short_path(&frame.file),
        super::user_code::clip(code),
        inputs.failure_line
    ))
}

/// Whether the traceback runs under pytest (its frames in `_pytest/`): a test checks code, its
/// file name says nothing of a stage.
fn pytest_run(frames: &[Frame]) -> bool {
    frames
        .iter()
        .any(|frame| frame.file.replace('\\', "/").contains("/_pytest/"))
}

mod statement;

#[cfg(test)]
mod tests;
