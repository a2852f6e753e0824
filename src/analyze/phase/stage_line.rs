//! A program's own log line announcing the stage it is starting, read when it is the last line
//! the program printed before its failure (`nearby_words` in `analyze::explain::assemble`):
//! `INFO server: allocating KV cache: 32 layers x 2.0 GiB` → kv_cache_alloc, `- INFO - merge -
//! combining adapters with SVD` → format_conversion, `INFO train: running evaluation on 2048
//! sequences` → inference, `Loading weights from ckpt/…` → weights_load.
//!
//! A general reading convention of program logs: a message that opens with a verb in its
//! progressive form (`Loading …`, `Allocating …`, `Running evaluation …`) is written before the
//! work it names (Python `logging`'s `logger.info("loading weights …")`, or a `print`), and one
//! that reports a result (`loaded`, `done`, `took 3.2 s`) after it. The message is read after
//! the logger's prefix: Python `logging`'s default and common formats (`%(asctime)s
//! %(levelname)s %(name)s: %(message)s`, `%(asctime)s - %(levelname)s - %(name)s -
//! %(message)s`, `lib/logging/__init__.py`), loguru's `time | LEVEL | module:function:line -
//! message` (`loguru/_defaults.py` `LOGURU_FORMAT`), or the whole line of a `print`.

use crate::model::explain::Phase;

/// Log levels a logger prints before its message; an error level reports a failure, not a
/// stage begun.
const LEVELS: &[&str] = &["INFO", "DEBUG", "NOTICE", "WARNING", "WARN"];

/// The message of a log line after the logger's prefix (see the module's notes), or the whole
/// line when it has none; `None` for an indented line (code, a frame, a dump).
fn message(text: &str) -> Option<&str> {
    if text.starts_with([' ', '\t']) {
        return None;
    }
    let trimmed = text.trim();
    // absl's and glog's prefix (`I1207 10:00:00.123456 140245 run_alphafold.py:198] Running
    // model model_1 on T1050`: the level's letter and the date, the time, the thread, the file
    // and its line, then `] `); an error's or a fatal's line (`E`, `F`) reports a failure.
    if crate::parse::text::is_glog_line(trimmed) {
        let (_, rest) = trimmed.split_once("] ")?;
        return trimmed
            .starts_with(['I', 'W'])
            .then(|| without_tag(rest.trim()));
    }
    let level = trimmed
        .match_indices(|c: char| c.is_ascii_uppercase())
        .find_map(|(at, _)| {
            let before_ok = at == 0
                || trimmed[..at].ends_with([' ', '|', '[', '-', ':'])
                || trimmed[..at].ends_with("] ");
            let rest = &trimmed[at..];
            LEVELS
                .iter()
                .find(|level| {
                    rest.starts_with(*level)
                        && !rest[level.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
                })
                .filter(|_| before_ok)
                .map(|level| at + level.len())
        });
    let Some(after) = level else {
        // A time and a separator with no level (`2026-12-04 15:51:24 | transcribing …`).
        let untimed = skip_stamps(trimmed);
        let message = if untimed.len() < trimmed.len() && untimed.starts_with(['|', '-']) {
            let message = untimed.trim_start_matches(['|', '-', ' ']);
            // A dotted logger's name before the message (`2021-04-15T13:01:41 |
            // mmf.trainers.core.evaluation_loop: Starting test inference predictions`).
            let first = message.split_whitespace().next().unwrap_or_default();
            let logger = first.len() > 1
                && first.ends_with(':')
                && first.contains(['.', '_'])
                && first[..first.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_'));
            if logger {
                &message[first.len()..]
            } else {
                message
            }
        } else {
            trimmed
        };
        return Some(without_tag(message));
    };
    // The level inside one bracketed prefix with the time and the source (`[01-23
    // 23:32:27|INFO|cosmos1/…/world_generation_pipeline.py:414:generate] Run generation`: NVIDIA
    // Cosmos's `log.py`): the message follows the bracket.
    if trimmed.starts_with('[') {
        if let Some(close) = trimmed.find("] ").filter(|close| *close > after) {
            return Some(without_tag(trimmed[close + 2..].trim()));
        }
    }
    // The time after the level (vLLM's `INFO 12-04 14:43:06.832 [engine] …`, glog-like
    // formats).
    let rest = skip_stamps(trimmed[after..].trim_start_matches([' ', '-', '|', ']', ':']));
    // A logger's name (`server:`, `merge_adapters -`, `module:function:12 -`, `[train]`, a
    // piped format's `lm_server | `). (Whitespace wider than a byte, an ideographic space,
    // trimmed first: the name is sliced off by its length.)
    let rest = rest.trim_start();
    let first = rest.split_whitespace().next().unwrap_or_default();
    let named = (first.len() > 1 && first.ends_with(':'))
        || (first.starts_with('[') && first.ends_with(']'));
    let after_name = rest[first.len()..].trim_start();
    let rest = if named {
        &rest[first.len()..]
    } else if after_name.starts_with("- ") {
        after_name.trim_start_matches('-')
    } else if after_name.starts_with("| ") {
        after_name.trim_start_matches('|')
    } else {
        rest
    };
    Some(without_tag(rest.trim()))
}

/// `text` after its leading tokens of digits and their separators (a date, a time: `2026-12-04
/// 15:51:24`, `12-04`, `14:43:06.832`), each followed by a space.
fn skip_stamps(text: &str) -> &str {
    let mut rest = text;
    while let Some((token, after_token)) = rest.split_once(' ') {
        // (ISO 8601 joins the date and the time with `T` and may end in `Z`.)
        let stamp = token.bytes().next().is_some_and(|b| b.is_ascii_digit())
            && token.bytes().all(|b| {
                b.is_ascii_digit() || matches!(b, b'-' | b':' | b'.' | b'/' | b',' | b'T' | b'Z')
            });
        if !stamp {
            break;
        }
        rest = after_token.trim_start();
    }
    rest
}

/// A section a program heads with the evaluation's noun (DINO's `eval_knn.py`:
/// `print("Evaluation: k-NN classification on ImageNet")`; `Validation: running 4 sets`): the
/// evaluation starts. Not a result printed after it (`Evaluation: acc=0.91`, `Validation:
/// {'loss': 0.3}`), whose words hold figures.
fn headed_stage(text: &str) -> Option<(Phase, &str)> {
    let line = text.trim();
    let (head, rest) = line.split_once(": ")?;
    if !matches!(
        head,
        "Evaluation" | "Validation" | "Inference" | "Prediction"
    ) {
        return None;
    }
    let words = rest.trim();
    let told = words.starts_with(|c: char| c.is_ascii_alphabetic())
        && !words.contains(['=', ':', '{', '%'])
        && words.split_whitespace().count() >= 2
        && !words
            .split_whitespace()
            .any(|word| word.contains('.') && word.trim_end_matches(',').parse::<f64>().is_ok());
    told.then_some((Phase::Inference, line))
}

/// A `print`ed line after its program's tag: a rank's (`[rank0] evaluating on …`, as torchrun's
/// `--log-line-prefix-template` / `--tee` and scripts' own `f"[rank{rank}] …"` write it) or
/// the loop's counter (`epoch 0: validating on …`, `step 30: …`) or Slurm's task label (`0: …`).
fn without_tag(line: &str) -> &str {
    let line = line.trim_start();
    // A bracketed time before the tags (ColBERT's `print_message`: `[Apr 26, 20:00:44] [0]
    // #> Encoding 57 passages..`), then the tag, then a program's arrow (`#>`, `>>`).
    // Tags one after another (`[ace-server] [VAE] Tiled decode: …`) are read past together.
    let line = bracketed_time(line).unwrap_or(line);
    if let Some(mut rest) = tag(line) {
        for _ in 0..2 {
            rest = tag(rest).unwrap_or(rest);
        }
        return rest
            .strip_prefix("#>")
            .or_else(|| rest.strip_prefix(">>"))
            .map_or(rest, str::trim_start);
    }
    // A program's or a library's name as its prefix (`Unsloth: Merging 4bit and LoRA weights
    // to 16bit...`; YOLOv5's and ultralytics' `colorstr` prefixes, `TensorRT: building FP32
    // engine in yolov5s.engine`, `ONNX: starting export with onnx 1.14.0...`).
    if let Some((name, rest)) = line.split_once(": ") {
        let named = (2..=16).contains(&name.len())
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && name.chars().all(|c| c.is_ascii_alphanumeric());
        if named && rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return rest;
        }
    }
    // Slurm's task label (`srun --label`: `0: Running validation on dev set`), the task's
    // number before a colon.
    if let Some((number, rest)) = line.split_once(": ") {
        let task = (1..=4).contains(&number.len()) && number.bytes().all(|b| b.is_ascii_digit());
        if task && rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return rest;
        }
    }
    let mut words = line.splitn(3, ' ');
    if let (Some(unit), Some(count), Some(rest)) = (words.next(), words.next(), words.next()) {
        let counter = matches!(
            unit.to_ascii_lowercase().as_str(),
            "epoch" | "step" | "iter" | "iteration" | "round"
        );
        let number = count
            .strip_suffix(':')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '/'));
        if counter && number {
            return rest.trim_start();
        }
    }
    line
}

/// The rest of a line after one tag in brackets (`[rank0]`, `[VAE]`): no space inside, at most
/// 16 bytes.
fn tag(line: &str) -> Option<&str> {
    line.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .filter(|(tag, _)| !tag.is_empty() && !tag.contains(' ') && tag.len() <= 16)
        .map(|(_, rest)| rest.trim_start_matches(':').trim_start())
}

/// The rest of a line after a bracketed time (`[Apr 26, 20:00:44] `, `[2024-05-01 10:00:00]
/// `): digits, a colon, and only the short words and the marks of a date inside the brackets.
fn bracketed_time(line: &str) -> Option<&str> {
    let (inside, rest) = line.strip_prefix('[')?.split_once(']')?;
    let timed = inside.len() <= 32
        && inside.contains(':')
        && inside.chars().any(|c| c.is_ascii_digit())
        && inside
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | ':' | ',' | '.' | '-' | '/'))
        // Words of a date are short (`Apr`, `Mon`, `PM`, `UTC`).
        && inside
            .split(|c: char| !c.is_ascii_alphabetic())
            .all(|word| word.len() <= 3);
    timed.then(|| rest.trim_start())
}

/// The verbs of a model being built (its parameters made where it runs).
const BUILDING: &[&str] = &[
    "building",
    "creating",
    "initializing",
    "initialising",
    "constructing",
    "instantiating",
];

/// A stage's verbs (progressive forms) and the objects that make them that stage; an empty list
/// of objects: the verb alone names it.
const STAGES: &[(Phase, &[&str], &[&str])] = &[
    (
        Phase::KvCacheAlloc,
        &[
            "allocating",
            "preallocating",
            "pre-allocating",
            "reserving",
            "initializing",
            "initialising",
            "creating",
            "building",
        ],
        &[
            "kv cache",
            "kv-cache",
            "kv_cache",
            "kvcache",
            "key-value cache",
            "kv blocks",
        ],
    ),
    (
        Phase::FormatConversion,
        &[
            "merging",
            "combining",
            "fusing",
            "converting",
            "quantizing",
            "quantising",
            "dequantizing",
            "repacking",
            // A dtype cast of the weights after the load (`casting the state dict to float32
            // for export`).
            "casting",
        ],
        &[
            "adapter",
            "adapters",
            "lora",
            "loras",
            "weights",
            "checkpoint",
            "checkpoints",
            "model",
            "models",
            "deltas",
            "state dict",
            "state_dict",
            "parameters",
            "params",
        ],
    ),
    // A model exported to another format: YOLOv5's `export.py` and ultralytics 8.x
    // `engine/exporter.py` (`TensorRT: building FP16 engine as yolov8n.engine`, every format's
    // `starting export with …`).
    (
        Phase::FormatConversion,
        &["building"],
        &["fp32 engine", "fp16 engine", "int8 engine"],
    ),
    (Phase::FormatConversion, &["starting"], &["export"]),
    // A quantizer's calibration pass (GPTQ's and AWQ's: the layers' inputs collected on
    // calibration samples before the weights are quantized; AutoGPTQ / GPTQModel `quantize`,
    // llm-compressor `oneshot`): part of converting the weights.
    (Phase::FormatConversion, &["calibrating"], &[]),
    // A model's weights quantized, its name as the object (`Quantizing Mistral`, `Quantizing
    // transformer`: ostris/ai-toolkit's `quantize_model` log line): only weights are quantized
    // by a stage a program announces.
    (Phase::FormatConversion, &["quantizing", "quantising"], &[]),
    (
        Phase::WeightsLoad,
        &["loading", "reading", "restoring"],
        &[
            "weights",
            "shards",
            "checkpoint",
            "checkpoints",
            // (t5x's `checkpoints.py`: `Restoring key from ckpt: target/token_embedder/…`.)
            "ckpt",
            "model",
            "state dict",
            "state_dict",
            "parameters",
            "params",
            "safetensors",
            // A model's parts read by their own loaders (`loading the VAE`, `Loading text
            // encoder ...`, `loading unet from ...`: diffusion apps' and pipelines' lines).
            "vae",
            "unet",
            "text encoder",
            "text encoders",
            "lora",
            "loras",
            "adapter",
            "adapters",
        ],
    ),
    // A load announced in the imperative and left open (`load speaker brain model...`,
    // `Load checkpoint from ckpt/…`): the verb first, the work to follow; a result would hold a
    // finished word or a time (`load model done`, `load time = 1.2 s`).
    (
        Phase::WeightsLoad,
        &["load"],
        &[
            "model",
            "models",
            "weights",
            "checkpoint",
            "ckpt",
            "state dict",
            "state_dict",
        ],
    ),
    // A model built, its parameters made where it runs (`Creating the model...`, `Initializing
    // Model..`, `building GPT model ...`): the weights' stage, as a constructor's frame is read.
    // Not the model's parallel groups (`initializing model parallel with size 1`) or its
    // settings (see `stage_line_phase`).
    (
        Phase::WeightsLoad,
        BUILDING,
        &[
            "model",
            "models",
            "network",
            "networks",
            // The parameters made where the model runs (t5x's `utils.py`: `Initializing
            // parameters from scratch.`).
            "parameters",
            "params",
        ],
    ),
    // ModelScope's loader (`modelscope/models/base/base_model.py` `Model.from_pretrained`:
    // `initiate model from <dir>`, then `initialize model from <dir>` as the model class is
    // built and its checkpoint read), and other projects' `Initialize model from <checkpoint>`:
    // the words name the source, so the weights are being read.
    (
        Phase::WeightsLoad,
        &["initialize", "initialise", "initiate"],
        &["model from"],
    ),
    // A server's warm-up before it serves (`INFO [serve] warming up`, `running warmup with 4
    // dummy batches`): the pass that sizes its memory with dummy inputs, as vLLM's and TGI's are
    // read (not a learning rate's warm-up: see `stage_line_phase`).
    (Phase::Profiling, &["warming"], &["up"]),
    // The warm-up named first (`INFO | vector_service | warm-up query`, `warmup: 4 dummy
    // batches`), not a learning rate's (see `stage_line_phase`).
    (Phase::Profiling, &["warm-up", "warmup"], &[]),
    // A CUDA graph capture announced (`[engine] capturing CUDA graphs for decode, batch sizes
    // [512, 384, …]`, as vLLM's `Capturing cudagraphs for decoding` and SGLang's `Capture cuda
    // graph begin` announce theirs): the capture of each batch size, its warm-up run included.
    (
        Phase::CudaGraphCapture,
        &["capturing"],
        &[
            "cuda graph",
            "cuda graphs",
            "cudagraph",
            "cudagraphs",
            "graphs",
        ],
    ),
    (
        Phase::Profiling,
        &["running", "starting", "doing", "performing"],
        &["warmup", "warm-up"],
    ),
    (
        Phase::Inference,
        &["running", "starting", "doing", "performing"],
        &[
            "evaluation",
            "eval",
            "inference",
            "inferencing",
            "prediction",
            "predictions",
            "validation",
            // A generation begun (`*** Starting to generate 50 tokens with bs=2`, `*** Running
            // generate`: DeepSpeed's and transformers' `bloom-inference-scripts`; session 45).
            "generate",
            "generation",
        ],
    ),
    // A harness's or a predictor's pass over its inputs (lm-evaluation-harness's `Running
    // loglikelihood requests` / `Running generate_until requests`, `evaluator.py`; AlphaFold's
    // `Running predict with shape(feat) = …`, `alphafold/model/model.py` `predict`).
    (Phase::Inference, &["running"], &["requests", "predict"]),
    // A renderer drawing what a trained scene or model shows (`Rendering test views`,
    // `Rendering 120 frames`: NeRF and Gaussian-splatting scripts' `render.py`): the model
    // applied to camera poses, no training step.
    (
        Phase::Inference,
        &["rendering"],
        &[
            "views",
            "view",
            "frames",
            "frame",
            "images",
            "image",
            "video",
            "videos",
            "test",
            "path",
            "trajectory",
            "novel",
            "gaussians",
        ],
    ),
    (
        Phase::Inference,
        &[
            "evaluating",
            "validating",
            "predicting",
            "inferring",
            "transcribing",
        ],
        &[],
    ),
    // Inputs run through an encoder for their embeddings (`embedding 12 shards with 1 GPU
    // worker`, `[1/5] Encoding prompt...`): not the word as a noun (`embedding dim: 768`, which
    // names none of these).
    (
        Phase::Inference,
        &["embedding", "encoding"],
        &[
            "shards",
            "shard",
            "documents",
            "docs",
            "images",
            "texts",
            "text",
            "queries",
            "passages",
            "chunks",
            "batches",
            "sentences",
            "corpus",
            "prompt",
            "prompts",
            "files",
            "frames",
        ],
    ),
    // Inputs run through a frozen encoder before a training loop starts, the results kept
    // (kohya-ss sd-scripts `train_network.py`: `caching latents...`, `caching text encoder
    // outputs...`: the VAE or the text encoders applied to the training set under `no_grad`).
    (
        Phase::Inference,
        &["caching"],
        &["latents", "text encoder outputs", "embeddings"],
    ),
    // Embeddings made for documents or inputs (privateGPT's `ingest.py`: `Creating embeddings.
    // May take some minutes...`; `Computing embeddings for 4420 chunks`): an embedding model
    // applied to them.
    (
        Phase::Inference,
        &[
            "creating",
            "computing",
            "calculating",
            "generating",
            "extracting",
        ],
        &["embeddings", "embedding vectors", "features"],
    ),
    // A similarity search over an index announced (`[utils.faiss_mat][INFO] - Finding nearest
    // neighbors.`, facebookresearch/faiss#3049; `searching nearest neighbours for 4096
    // queries`): the index queried, as a served search is read (session 52).
    (
        Phase::Inference,
        &["finding", "searching", "computing"],
        &[
            "nearest neighbors",
            "nearest neighbours",
            "nearest neighbor",
            "nearest neighbour",
        ],
    ),
    // A VAE's (or an audio codec's) decode of generated latents, done in tiles (`[VAE] Tiled
    // decode: 6 tiles (chunk=1024, overlap=64)`, `Decoding latents`): a generation's last pass.
    (Phase::Inference, &["tiled"], &["decode", "decoding"]),
    (
        Phase::Inference,
        &["decoding"],
        &["latents", "latent", "tiles"],
    ),
    // Documents run through a model that writes for each (`summarizing 12 documents in 3
    // batches (num_beams=8, max_new_tokens=48)`, `translating 500 sentences`).
    (
        Phase::Inference,
        &["summarizing", "summarising", "translating", "captioning"],
        &[
            "documents",
            "docs",
            "texts",
            "articles",
            "papers",
            "pages",
            "files",
            "batches",
            "sentences",
            "images",
            "inputs",
            "prompts",
        ],
    ),
    // A model checked by running it (`==> verifying merged model on 16 x 4096 tokens`).
    (
        Phase::Inference,
        &["verifying", "testing"],
        &["model", "outputs"],
    ),
    // A model's outputs made for the user: a diffusion or language model sampling or generating
    // what it is named for (`Sampling captions:` above a sampler's bar, `Generating 4 images`,
    // `generating the response`); not a data set's split (`Generating train split`, Hugging Face
    // `datasets`), which names none of these.
    (
        Phase::Inference,
        &[
            "sampling",
            "generating",
            "synthesizing",
            "synthesising",
            "denoising",
        ],
        &[
            "image",
            "images",
            "video",
            "videos",
            "frames",
            "sample",
            "samples",
            "audio",
            "speech",
            "text",
            "tokens",
            "response",
            "responses",
            "completion",
            "completions",
            "captions",
            "outputs",
            // A forecasting model's output (`Generating forecasts for ETTh (4 time series)`,
            // the Chronos evaluation scripts).
            "forecasts",
            "forecast",
            "predictions",
        ],
    ),
    // A surface or mesh taken from a trained field or scene (Neuralangelo's `extract_mesh.py`:
    // `Extracting surface at resolution 520 764 1028` above its bar over the blocks; `Extracting
    // mesh with marching cubes`): the trained model queried on a grid, no training step.
    (
        Phase::Inference,
        &["extracting", "exporting"],
        &["surface", "surfaces", "mesh", "meshes", "isosurface"],
    ),
    // An audio separation model applied to a recording (Demucs' `separate.py`: `Separating
    // track ben.mp3` above its bar over the track's chunks).
    (
        Phase::Inference,
        &["separating"],
        &[
            "track", "tracks", "audio", "file", "files", "sources", "vocals", "stems",
        ],
    ),
    // The training loop announced as it starts (`maskrcnn_benchmark.trainer INFO: Start
    // training`, `Starting training`, `Beginning fine-tuning`): its first step runs next. Not the
    // training data named after the word (`Starting training data preprocessing`: see
    // `stage_line_phase`).
    (
        Phase::TrainingStep,
        &["start", "starting", "begin", "beginning"],
        &["training", "fine-tuning", "finetuning"],
    ),
];

/// Words that report a stage finished or failed (the line comes after its work, not before).
const FINISHED: &[&str] = &[
    "done",
    "finished",
    "complete",
    "completed",
    "took",
    "loaded",
    "merged",
    "allocated",
    "failed",
    "error",
    "skipping",
    "skipped",
    // A pass reported run (`warm-up (4, 256) compiled and ran in 8.5 s`).
    "ran",
    "compiled",
    "succeeded",
    "passed",
];

/// How many words after the verb its object may come (`allocating the paged KV cache`,
/// `merging the LoRA weights`).
const OBJECT_WINDOW: usize = 4;

/// The stage a program's log line says it is starting (see the module's notes), with the
/// message read.
pub fn stage_line_phase(text: &str) -> Option<(Phase, &str)> {
    if let Some(found) = headed_stage(text) {
        return Some(found);
    }
    let message = message(text)?;
    // A stage reported done and the next announced on one line (`EPOCH 1 COMPLETE.
    // EVALUATING...`, `Model loaded. Starting training...`): the last sentence is the one
    // begun, read when the whole line names none.
    message_stage(message).or_else(|| {
        let last = last_sentence(message);
        (last.len() < message.len())
            .then(|| message_stage(last))
            .flatten()
    })
}

/// The stage a log line's message says it is starting (see [`stage_line_phase`]).
fn message_stage(message: &str) -> Option<(Phase, &str)> {
    if message.len() > 160 || message.ends_with('?') {
        return None;
    }
    let lower = message.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter(|word| !word.is_empty())
        .collect();
    let verb = *words.first()?;
    // A finished word before what it describes is an adjective (`verifying merged model`,
    // `testing the loaded weights`), not a result.
    let adjective = |at: usize| {
        words.get(at + 1).is_some_and(|next| {
            matches!(
                *next,
                "model" | "models" | "weights" | "checkpoint" | "adapter" | "adapters" | "lora"
            )
        })
    };
    if words
        .iter()
        .enumerate()
        .any(|(at, word)| FINISHED.contains(word) && !adjective(at))
    {
        return None;
    }
    // The training announced alone, its work to follow (`print("Training...")`, `Fine-tuning…`):
    // the word and an ellipsis, nothing else (`Training data: 5000 samples` names a data set).
    let alone = message
        .trim_end()
        .trim_end_matches(['.', '…'])
        .trim_end()
        .to_ascii_lowercase();
    if message.trim_end().ends_with(['.', '…'])
        && matches!(
            alone.as_str(),
            "training" | "fine-tuning" | "finetuning" | "training the model"
        )
    {
        return Some((Phase::TrainingStep, message));
    }
    // Real-ESRGAN's `inference_realesrgan.py` (`print('Testing', idx, imgname)`: `Testing 0
    // Kermit_T_Soviet`), the input's index then its name: the model applied to that input
    // (xinntao/Real-ESRGAN#437, session 52).
    if verb == "testing"
        && words
            .get(1)
            .is_some_and(|index| index.bytes().all(|b| b.is_ascii_digit()))
        && words.len() >= 3
    {
        return Some((Phase::Inference, message));
    }
    // The same stage begun in the imperative or the bare verb, its noun right after it (`Run
    // generation`: NVIDIA Cosmos's `world_generation_pipeline.py` `generate`; OpenCompass's
    // `Start inferencing [model/set]`, `icl_gen_inferencer.py`): the work follows the line. (Not
    // another noun between: `Start epoch evaluation` names no pass begun.)
    if matches!(verb, "run" | "start")
        && words.get(1).is_some_and(|noun| {
            matches!(
                *noun,
                "inference"
                    | "inferencing"
                    | "generation"
                    | "evaluation"
                    | "prediction"
                    | "predictions"
            )
        })
    {
        return Some((Phase::Inference, message));
    }
    let phase = STAGES.iter().find_map(|(phase, verbs, objects)| {
        if !verbs.contains(&verb) {
            return None;
        }
        if objects.is_empty() {
            return Some(*phase);
        }
        let window = words[1..]
            .iter()
            .take(OBJECT_WINDOW + 1)
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        objects
            .iter()
            .any(|object| {
                window
                    .match_indices(object)
                    .any(|(at, _)| word_bounded(&window, at, object.len()))
            })
            .then_some(*phase)
    });
    let phase = phase
        .or_else(|| builds_a_model_class(&words).then_some(Phase::WeightsLoad))
        .or_else(|| runs_a_model_on_inputs(&words).then_some(Phase::Inference))?;
    // The training's data or set named, not the loop (`Starting training data preprocessing`).
    if phase == Phase::TrainingStep
        && words.windows(2).any(|pair| {
            matches!(pair[0], "training" | "fine-tuning" | "finetuning")
                && matches!(
                    pair[1],
                    "data" | "dataset" | "datasets" | "set" | "split" | "samples"
                )
        })
    {
        return None;
    }
    // A model's parallel groups or settings, not its parameters (`initializing model parallel
    // with size 1`, `creating model config`); an imperative load's result (`load model: t = 3 s`).
    if phase == Phase::WeightsLoad
        && (words.windows(2).any(|pair| {
            matches!(pair[0], "model" | "models")
                && matches!(
                    pair[1],
                    "parallel"
                        | "parallelism"
                        | "config"
                        | "configuration"
                        | "card"
                        | "groups"
                        | "list"
                        | "registry"
                )
        }) || (verb == "load" && message.contains('=')))
    {
        return None;
    }
    // A learning rate's or a scheduler's warm-up is a training's.
    let training = words.iter().any(|word| {
        matches!(
            *word,
            "lr" | "learning" | "scheduler" | "epoch" | "epochs" | "steps" | "ratio"
        )
    });
    if phase == Phase::Profiling && training {
        return None;
    }
    Some((phase, message))
}

/// A model's class built by name (`[info] Initializing QuantizedFluxModel`, `Creating WanModel
/// from …`): a verb of building, then a class whose name ends in `Model`, its parameters made.
fn builds_a_model_class(words: &[&str]) -> bool {
    let [verb, rest @ ..] = words else {
        return false;
    };
    let building = BUILDING.contains(verb);
    let class = rest
        .iter()
        .find(|word| !matches!(**word, "the" | "a" | "an"))
        .is_some_and(|word| word.len() > "model".len() + 1 && word.ends_with("model"));
    building && class
}

/// The last sentence of a message of several (`EPOCH 1 COMPLETE. EVALUATING...` →
/// `EVALUATING...`); the message when it is one, or when what follows the last full stop is
/// not a sentence of words (`… on 1.5 GB`, an ellipsis, a version).
fn last_sentence(message: &str) -> &str {
    let trimmed = message.trim_end().trim_end_matches(['.', '…']);
    let Some(at) = trimmed.rfind(". ") else {
        return message;
    };
    let rest = message[at + 2..].trim_start();
    let words = rest.split_whitespace().next().is_some_and(|word| {
        let word = word.trim_end_matches(['.', '…', ':', ',']);
        word.chars().all(|c| c.is_alphabetic()) && word.len() > 2
    });
    if words {
        rest
    } else {
        message
    }
}

/// A named model run on a named input (AlphaFold's `run_alphafold.py` `predict_structure`:
/// `Running model model_1_pred_0 on T1050`; `running model unet on 12 tiles`): the model applied,
/// the preposition naming its input within the next words.
fn runs_a_model_on_inputs(words: &[&str]) -> bool {
    matches!(words, ["running", "model", ..])
        && words
            .iter()
            .skip(2)
            .take(OBJECT_WINDOW)
            .any(|word| *word == "on")
}

/// Whether `line` is a detail of the stage `announced` on a line before it: both from one
/// logger (the same prefix once its digits, the time, are set aside), and `line` neither reports
/// a result nor starts a stage of its own (`- amp - INFO - casting model to float16`, then `-
/// amp - INFO - keeping float32 master weights for 48 tensors`: still the cast).
pub fn details_stage(line: &str, announced: &str) -> bool {
    let (Some(message_line), Some(message_announced)) = (message(line), message(announced)) else {
        return false;
    };
    let prefix = |text: &'_ str, message: &str| -> Option<String> {
        let at = text.find(message)?;
        Some(text[..at].chars().filter(|c| !c.is_ascii_digit()).collect())
    };
    let (Some(a), Some(b)) = (
        prefix(line, message_line),
        prefix(announced, message_announced),
    ) else {
        return false;
    };
    // Only a logger's lines: a level word in the prefix (a bare `print` has no prefix); or a
    // bare `print` of what the stage uses, under a bare announcement (privateGPT's `ingest.py`:
    // `Creating embeddings. May take some minutes...`, then `Using embedded DuckDB with
    // persistence: data will be stored in: db`).
    let logged = LEVELS.iter().any(|level| a.contains(level));
    // What the stage uses, logged from another function of the same program (`…:414:generate]
    // Run generation`, then `…:313:_run_model_with_offload] Using input size of 9 frames`): a
    // setting reported, no stage of its own.
    let uses = message_line.starts_with("Using ")
        && ((a.is_empty() && b.is_empty())
            || (logged && LEVELS.iter().any(|level| b.contains(level))));
    let lower = message_line.to_ascii_lowercase();
    let result = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .any(|word| FINISHED.contains(&word));
    ((logged && a == b) || uses) && !result && stage_line_phase(line).is_none()
}

/// Whether `text[at..at + len]` stands as whole words.
fn word_bounded(text: &str, at: usize, len: usize) -> bool {
    let before = text[..at].chars().next_back();
    let after = text[at + len..].chars().next();
    before.is_none_or(|c| c == ' ') && after.is_none_or(|c| c == ' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(text: &str) -> Option<Phase> {
        stage_line_phase(text).map(|(phase, _)| phase)
    }

    #[test]
    fn embeddings_made_and_latents_decoded_are_inference() {
        for line in [
            "Creating embeddings. May take some minutes...",
            "Computing embeddings for 4420 chunks",
            "[ace-server] [VAE] Tiled decode: 6 tiles (chunk=1024, overlap=64, stride=896)",
            "Decoding latents",
            "[Apr 26, 20:00:44] [0]           #> Encoding 57 passages..",
            "[2024-05-01 10:00:00] [worker] >> Encoding 12 documents",
        ] {
            assert_eq!(phase(line), Some(Phase::Inference), "{line}");
        }
        // A time's brackets with words that are no date's, or a result: not read.
        assert_eq!(phase("[see the notes: 3] Encoding 57 passages"), None);
        assert_eq!(phase("Creating embeddings done"), None);
        assert_eq!(phase("Creating embedding layer"), None);
    }

    #[test]
    fn a_servers_warm_up_line_is_profiling() {
        for line in [
            "2026-12-03 19:06:56,222 INFO [serve] warming up",
            "INFO server: running warmup with 4 dummy batches",
        ] {
            assert_eq!(phase(line), Some(Phase::Profiling), "{line}");
        }
    }

    #[test]
    fn runs_renders_and_harness_passes_announced_are_inference() {
        for line in [
            "I1207 10:00:00.123456 140245 run_alphafold.py:198] Running model model_1 on T1050",
            "I1207 10:00:01.000000 140245 model.py:166] Running predict with shape(feat) = {}",
            "12/07 10:00:00 - OpenCompass - INFO - Start inferencing [phi3/tydiqa]",
            "[2025-01-08 10:00:00,000] [INFO] [world_generation_pipeline.py:414:generate] Run \
             generation",
            "Running loglikelihood requests",
            "[01-23 23:32:27|INFO|cosmos1/inference/world_generation_pipeline.py:414:generate] \
             Run generation",
            "Rendering test views",
            "Rendering 120 frames",
            "EPOCH 1 COMPLETE. EVALUATING...",
        ] {
            assert_eq!(phase(line), Some(Phase::Inference), "{line}");
        }
        // An error's glog line, a model run with no input named, a finished render: not read.
        assert_eq!(
            phase("E1207 10:00:00.123456 140245 run.py:12] Running model model_1 on T1050"),
            None
        );
        assert_eq!(phase("Running model conversion"), None);
        assert_eq!(phase("Rendering test views done"), None);
        // What the stage uses, logged from another function: a detail of it; an error is not.
        let announced = "[01-23 23:32:27|INFO|cosmos1/pipeline.py:414:generate] Run generation";
        assert!(details_stage(
            "[01-23 23:32:27|INFO|cosmos1/pipeline.py:313:_run_model_with_offload] Using input \
             size of 9 frames",
            announced
        ));
        assert!(!details_stage(
            "[01-23 23:32:27|INFO|cosmos1/pipeline.py:313:_offload] Offloading the tokenizer",
            announced
        ));
    }

    #[test]
    fn a_log_line_announcing_a_stage_names_it() {
        assert_eq!(
            phase("2025-01-02 10:00:01,001 INFO llm_server: allocating KV cache: 40 layers"),
            Some(Phase::KvCacheAlloc)
        );
        assert_eq!(
            phase("Pre-allocating the KV cache for 16 sequences..."),
            Some(Phase::KvCacheAlloc)
        );
        assert_eq!(
            phase("2025-01-02 10:00:01,001 - INFO - export - merging the LoRA weights into base"),
            Some(Phase::FormatConversion)
        );
        assert_eq!(
            phase("[12:00:01] INFO combining adapters ['a', 'b'] with ties"),
            Some(Phase::FormatConversion)
        );
        assert_eq!(
            phase("2025-01-02 10:00:01.123 | INFO     | app.main:run:40 - Loading weights from /m"),
            Some(Phase::WeightsLoad)
        );
        assert_eq!(
            phase("Running evaluation on 512 held-out documents ..."),
            Some(Phase::Inference)
        );
        assert_eq!(
            phase("INFO finetune: Evaluating on the dev split (1200 examples)"),
            Some(Phase::Inference)
        );
        // A cast of the weights, a quantizer's calibration.
        assert_eq!(
            phase("2026-12-03 12:18:46,861 INFO export: [3/4] casting the state dict to float32"),
            Some(Phase::FormatConversion)
        );
        assert_eq!(
            phase("2026-12-03 12:21:47,383 INFO gptq: calibrating: collecting the inputs of 56"),
            Some(Phase::FormatConversion)
        );
        // A rank's tag or the loop's counter before the message.
        assert_eq!(
            phase("[rank0] evaluating on 131072 validation rows"),
            Some(Phase::Inference)
        );
        assert_eq!(
            phase("2026-12-02 04:19:42,778 INFO     epoch 0: validating on 16 scans (4096x4096)"),
            Some(Phase::Inference)
        );
        // A sampler's or a generator's outputs; the training loop starting.
        assert_eq!(
            phase("[2025-01-12 09:47:20] INFO: Sampling captions:"),
            Some(Phase::Inference)
        );
        assert_eq!(phase("Generating 4 images ..."), Some(Phase::Inference));
        assert_eq!(phase("Separating track ben.mp3"), Some(Phase::Inference));
        assert_eq!(
            phase("Extracting surface at resolution 520 764 1028"),
            Some(Phase::Inference)
        );
        assert_eq!(
            phase("Extracting mesh with marching cubes"),
            Some(Phase::Inference)
        );
        assert_eq!(phase("Extracting files to /tmp/data"), None);
        assert_eq!(
            phase("I0620 01:00:21.223034 140533293238080 utils.py:1085] Initializing parameters from scratch."),
            Some(Phase::WeightsLoad)
        );
        assert_eq!(
            phase("Restoring key from ckpt: target/token_embedder/embedding"),
            Some(Phase::WeightsLoad)
        );
        assert_eq!(
            phase("2019-12-11 05:25:21,147 maskrcnn_benchmark.trainer INFO: Start training"),
            Some(Phase::TrainingStep)
        );
        assert_eq!(phase("Starting training..."), Some(Phase::TrainingStep));
        assert_eq!(phase("Quantizing Mistral"), Some(Phase::FormatConversion));
        // A warm-up named first, a graph capture, inputs embedded, a model checked.
        assert_eq!(
            phase("2026-12-04 14:45:20,561 | INFO    | vector_service | warm-up query"),
            Some(Phase::Profiling)
        );
        assert_eq!(
            phase("INFO 12-04 14:43:06.832 [engine] capturing CUDA graphs for decode, batch 512"),
            Some(Phase::CudaGraphCapture)
        );
        assert_eq!(
            phase("embedding 12 shards with 1 GPU worker"),
            Some(Phase::Inference)
        );
        assert_eq!(phase("[1/5] Encoding prompt..."), Some(Phase::Inference));
        assert_eq!(
            phase("2026-12-04 15:51:24 | transcribing allhands_2026-03-05.wav (3605.3 s)"),
            Some(Phase::Inference)
        );
        assert_eq!(
            phase("summarizing 12 documents in 3 batches (num_beams=8, max_new_tokens=48)"),
            Some(Phase::Inference)
        );
        assert_eq!(
            phase("==> verifying merged model on 16 x 4096 tokens"),
            Some(Phase::Inference)
        );
    }

    #[test]
    fn other_lines_name_no_stage() {
        // A stage reported finished, or failed.
        assert_eq!(phase("INFO server: loading weights took 3.2 s"), None);
        assert_eq!(
            phase("INFO trainer: warming up the learning rate for 500 steps"),
            None
        );
        assert_eq!(phase("allocating KV cache: done"), None);
        assert_eq!(phase("INFO merging adapters failed, retrying on CPU"), None);
        // No object of the stage.
        assert_eq!(phase("INFO data: merging the two datasets"), None);
        assert_eq!(phase("converting labels to one-hot"), None);
        assert_eq!(phase("casting the inputs to float16"), None);
        // A detail line of the same logger after the stage's announcement.
        let cast = "2026-12-03 16:18:48,529 - amp - INFO - casting model to float16";
        assert!(details_stage(
            "2026-12-03 16:18:48,541 - amp - INFO - keeping float32 master weights for 48 tensors",
            cast
        ));
        // Not a result, another logger, or a print.
        assert!(!details_stage(
            "2026-12-03 16:18:48,541 - amp - INFO - cast done in 0.2 s",
            cast
        ));
        assert!(!details_stage(
            "2026-12-03 16:18:48,541 - data - INFO - keeping 48 shards",
            cast
        ));
        assert!(!details_stage(
            "keeping float32 master weights",
            "casting model to float16"
        ));
        assert_eq!(phase("running sanity checks on 4 files"), None);
        // A data set's split generated, the training's data prepared, a training finished.
        assert_eq!(phase("Generating train split: 1000 examples"), None);
        assert_eq!(phase("Starting training data preprocessing"), None);
        assert_eq!(phase("Training finished, starting export"), None);
        assert_eq!(phase("sampling negatives from the queue"), None);
        assert_eq!(phase("warmup steps: 500"), None);
        assert_eq!(phase("warmup_ratio = 0.03"), None);
        assert_eq!(
            phase(
                "2026-12-04 15:37:35,212 [infer] INFO warm-up (4, 256) compiled and ran in 8.5 s"
            ),
            None
        );
        assert_eq!(phase("embedding dim: 768"), None);
        assert_eq!(phase("Summarizing metrics for run 3"), None);
        assert_eq!(
            phase("2026-12-04 15:51:23 | done standup.wav: 578 tokens"),
            None
        );
        assert_eq!(phase("encoding: utf-8"), None);
        // The verb not first: a sentence, code, an error.
        assert_eq!(phase("I am merging adapters and it fails"), None);
        assert_eq!(phase("    loading_model = True"), None);
        assert_eq!(
            phase("ERROR server: allocating KV cache: out of memory"),
            None
        );
        assert_eq!(phase("Why is loading the model so slow?"), None);
        assert_eq!(phase(""), None);
        assert_eq!(phase("INFO"), None);
        // A counter without its colon, a tag with words in it.
        assert_eq!(phase("epoch 0 validating loss 0.3"), None);
        assert_eq!(phase("[a long note] evaluating on 4 rows"), None);
    }
}
