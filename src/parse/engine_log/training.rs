//! Lines that are not one serving engine's: Python tracebacks (frames decide the phase),
//! transformers / accelerate / DeepSpeed / torchrun markers, training progress, and the
//! version lines of `python -m torch.utils.collect_env`, `transformers-cli env`, `pip freeze`
//! and `nvidia-smi`.

use super::common::{after, has, word_after};
use super::{rule, Certainty, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};
use crate::model::failure::EngineName;

mod native;
use native::{backtrace_frame, dmlc_frame, gdb_frame, native_frame, rust_frame, tvm_frame};
mod notebook;
pub use native::{GDB, NATIVE};
pub(super) use notebook::jupyter_call;
use notebook::{colab_frame, ipython7_frame, ipython_frame, notebook_function_frame};

pub(super) const RULES: &[Rule] = &[
    rule("Traceback (most recent call last)", traceback),
    rule("File \"", frame),
    rule("File \u{201c}", curly_quoted_frame),
    rule("\", line ", wrapped_frame),
    rule("File /", ipython_frame),
    rule("File ~", ipython_frame),
    rule("File [", ipython_frame),
    rule(".py in ", ipython7_frame),
    rule(".py](", colab_frame),
    rule(".lua:", lua_frame),
    rule("Error in ", matlab_frame),
    rule("--> ", jupyter_call),
    rule("<ipython-input-", notebook_function_frame),
    rule("Cell In[", notebook_function_frame),
    rule("Input In [", notebook_function_frame),
    rule("frame #", native_frame),
    rule("[bt] (", dmlc_frame),
    rule(" tensorrt_llm::", backtrace_frame),
    // gdb's backtrace (`#15 0x… in server_context::update_slots (this=…) at …/server.cpp:2339`,
    // `#5  0x… in llama_decode () from …`): a frame's arguments close before its file or end it.
    rule(") at ", gdb_frame),
    rule(" ()", gdb_frame),
    rule(": mistralrs_", rust_frame),
    rule(": <mistralrs_", rust_frame),
    rule(": candle_", rust_frame),
    rule(": <candle_", rust_frame),
    // vllm.rs (guoqingbao/vllm.rs): `   4: vllm_rs::core::runner::ModelRunner::init_kv_cache`.
    rule(": vllm_rs::", rust_frame),
    rule(": <vllm_rs::", rust_frame),
    rule(": mlc::llm::", tvm_frame),
    rule("In call to configurable '", gin_configurable),
    rule("RayTaskError(", ray_task),
    rule("\u{2502} ", rich_frame),
    // A rich frame whose padding a narrow console dropped: `│/path/x.py:187 in func`.
    rule("\u{2502}/", rich_frame),
    rule("loss=", progress_bar_step),
    rule(" - loss: ", progress_bar_step),
    rule("it/s]", detection_bar_step),
    rule("s/it]", detection_bar_step),
    rule("executable_name='", xla_executable),
    rule("[[{{node ", keras_training_node),
    rule("[[Node: ", keras_training_node),
    rule("[[node ", keras_training_node),
    rule("training/", keras_training_node),
    rule("DeepSpeed info: version=", deepspeed),
    rule("[deepspeed]", deepspeed),
    // DeepSpeed's engine set-up (`deepspeed.initialize` → `DeepSpeedEngine.__init__`): ZeRO's
    // `Before initializing optimizer states` (`stage_1_and_2.py`), ZeRO-3's `Creating fp16
    // partitions` / `DeepSpeedZeRoOffload initialize` (`stage3.py`, `parameter_offload.py`).
    rule("initializing optimizer states", deepspeed_setup),
    rule("fp16 partitions", deepspeed_setup),
    rule("DeepSpeedZeRoOffload initialize", deepspeed_setup),
    // Session 37 (p2): ZeRO stage 1/2 partitioning the model's groups
    // (`runtime/zero/stage_1_and_2.py` `DeepSpeedZeroOptimizer.__init__`: `print(f"Rank: {rank}
    // partition count {self.partition_count} and sizes{…} ")`, before it makes the fp32
    // partitions and the optimizer's states) and the engine choosing its optimizer
    // (`runtime/engine.py` `_configure_optimizer`: `Using DeepSpeed Optimizer param name
    // {name} as basic optimizer`): both inside `deepspeed.initialize`.
    rule(" partition count [", deepspeed_setup),
    rule("Using DeepSpeed Optimizer param name", deepspeed_setup),
    // The DeepSpeed launcher's records (`deepspeed/launcher/launch.py`, format
    // `[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s]`): `[launch.py:315:
    // sigkill_handler] Killing subprocess …`, `[launch.py:138:main] WORLD INFO DICT`.
    rule("[launch.py:", deepspeed_launcher),
    rule("torch.distributed.elastic", torchrun),
    rule("'loss': ", training_step),
    rule(": loss ", litgpt_step),
    rule(" loss ", logged_step),
    rule(" loss: ", logged_step),
    rule("-loss ", logged_step),
    rule("_loss: ", logged_step),
    rule(" Loss ", logged_step),
    rule(" Loss: ", logged_step),
    // MXNet's `Speedometer` (session 38).
    rule("] Batch [", mxnet_speedometer),
    // The per-batch line of the PyTorch examples' loops and the VITS family (session 39).
    rule("Train Epoch: ", train_epoch_line),
    rule("(epoch: ", visualizer_losses),
    rule("PyTorch version", versions),
    rule("Torch version", versions),
    rule("torch==", versions),
    rule("transformers==", versions),
    rule("vllm==", versions),
    rule("` version:", versions),
    rule("Driver Version:", versions),
    rule("CUDA Version:", versions),
    rule("CUDA used to build PyTorch:", versions),
    // === Stage lines of training frameworks read from their sources (issue 13, second blind
    // batch); handlers at the end of this file. ===
    rule("| consumed samples:", megatron_iteration),
    rule("Exception during training", detectron2_exception),
    rule("GPU_mem", yolo_epoch_header),
    rule("gpu_mem", yolo_epoch_header),
    rule("Computing optimal batch size", autobatch_start),
    rule("Closing dataloader mosaic", ultralytics_close_mosaic),
    rule("succeeded, trying batch size", lightning_batch_size_trial),
    rule("AutoBatch: Using batch-size", autobatch_done),
    rule("; acc:", opennmt_step),
    rule("Found device ", tensorflow_device),
    rule("Creating TensorFlow device", tensorflow_device),
    rule("Created TensorFlow device", tensorflow_device),
    rule("***** Running training *****", trainer_loop_start),
    rule("begin training epoch ", fairseq_epoch_start),
    // A loop's own line as an epoch begins (XLM `train.py`: `logger.info("============ Starting
    // epoch %i ... ============")`; NVIDIA's Tacotron 2 family; many scripts' `Start epoch 3`).
    rule("Starting epoch ", epoch_start),
    // Keras' `ProgbarLogger.on_epoch_begin` (`Epoch 1/10` alone on its line) and the scripts
    // that print the same as an epoch begins (session 47).
    rule("Epoch ", epoch_of_epochs),
    rule("Starting Epoch", epoch_start),
    rule("Start epoch ", epoch_start),
    rule("start epoch ", epoch_start),
    rule("Skipping batch", fairseq_train_oom),
    rule(
        "recover from OOM in forward/backward pass",
        fairseq_train_oom,
    ),
    rule("ran out of memory in validation step", fairseq_valid_oom),
    rule("OOM: Ran out of memory with exception", fairseq_logged_oom),
    rule("Num examples = ", unsloth_training_banner),
    // TPUEstimator's loops (also run on GPUs: google-research BERT's `run_classifier.py`)
    // recording their end or their error (session 45).
    rule("_loop marked as finished", tpu_estimator_loop),
    rule("Error recorded from ", tpu_estimator_loop),
    // PySlowFast's per-iteration statistics (and the video repositories built on it).
    rule("json_stats: {", slowfast_stats),
    rule("-- GLOBAL_STEP: ", coqui_step),
    rule("Booster init max CUDA memory: ", colossalai_boosted),
    // === Training progress lines of more trainers (session 15); handlers at the end. ===
    rule("  iter: ", detectron2_metrics),
    rule("loss\": ", json_step),
    rule("/loss/", train_loss_metric),
    // transformers' `WandbCallback.setup` (`integrations/integration_utils.py`, 4.3x–4.5x),
    // called from `on_train_begin` as `_inner_training_loop` starts its epochs, warns
    // `The \`run_name\` is currently set to the same value as \`TrainingArguments.output_dir\``:
    // the loop has begun (as `***** Running training *****`).
    rule(
        "is currently set to the same value as `TrainingArguments.output_dir`",
        trainer_loop_start,
    ),
];

fn traceback(_text: &str, facts: &mut LineFacts) {
    facts.event(
        EventKind::Traceback,
        Phase::Unknown,
        EventFigures::default(),
    );
}

/// `  File "/usr/lib/python3/dist-packages/vllm/worker/worker.py", line 123, in determine_num_available_blocks`,
/// anywhere in the line (log prefixes `[rank3]:`, `(VllmWorkerProcess pid=1) ERROR …]`,
/// `ERROR:root:`, markdown `> `, loguru `> File`), Windows paths included.
fn frame(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "File \"") else {
        return;
    };
    let Some(end) = rest.find('"') else {
        return;
    };
    let file = &rest[..end];
    let tail = &rest[end..];
    if !tail.contains(", line ") {
        return;
    }
    let function = after(tail, ", in ").and_then(function_name).or_else(|| {
        // CPython's faulthandler (`Python/traceback.c` `dump_frame`: `  File "%s", line %d in
        // %s`, no comma before `in`), dumped on a fatal signal, most recent call first.
        let rest = after(tail, ", line ")?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0)
            .then(|| rest[digits..].strip_prefix(" in "))
            .flatten()
            .and_then(function_name)
    });
    let Some(function) = function else {
        return;
    };
    push_frame(facts, function, file);
}

/// A frame whose quotes a web page or a word processor turned typographic (`File
/// “/app/x.py”, line 754, in create_nlp_backbone backbone = model_class.from_pretrained(`),
/// its statement often joined onto the line when the paste lost its line breaks: read as the
/// plain frame, the words after the function as its statement.
fn curly_quoted_frame(text: &str, facts: &mut LineFacts) {
    let plain = text.replace(['\u{201c}', '\u{201d}'], "\"");
    frame(&plain, facts);
    let Some((function, _)) = facts.frame.as_ref() else {
        return;
    };
    let statement = after(&plain, ", in ")
        .and_then(|rest| rest.trim_start().strip_prefix(function.as_str()))
        .map(str::trim)
        .filter(|rest| !rest.is_empty());
    if let Some(statement) = statement {
        facts.frame_code = Some(statement.to_string());
    }
}

/// The function gin-config names under an error raised inside a configurable function: gin
/// appends `In call to configurable 'train' (<function train at 0x…>)` to the exception's
/// message (`gin/config.py` `_decorate_fn_or_cls` → `utils.augment_exception_message_and_reraise`),
/// so a paste of the message alone still names the function that was running.
fn gin_configurable(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "In call to configurable '") else {
        return;
    };
    let Some((name, _)) = rest.split_once('\'') else {
        return;
    };
    let name = name.rsplit(['.', '/']).next().unwrap_or(name);
    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        facts.frame = Some((name.to_string(), GIN_CONFIGURABLE.to_string()));
    }
}

/// The file of a frame read from gin-config's line (no path is printed).
const GIN_CONFIGURABLE: &str = "<gin configurable>";

/// The remote task or actor method a Ray exception was raised in (`ray/exceptions.py`
/// `RayTaskError`: `ray.exceptions.RayTaskError(OutOfMemoryError): ray::WorkerDict.
/// actor_rollout_generate_sequences() (pid=3334785, ip=…)`, then that task's own traceback):
/// the method is the frame that ran on the worker, below the caller's frames that waited on it
/// (`ray.get` in verl's `fit`), so it reads as the next frame in (session 49).
fn ray_task(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "): ray::") else {
        return;
    };
    let name = rest
        .split(|c: char| c == '(' || c.is_whitespace())
        .next()
        .unwrap_or("");
    let method = name.rsplit('.').next().unwrap_or(name);
    if !method.is_empty()
        && method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        facts.frame = Some((method.to_string(), RAY_TASK.to_string()));
    }
}

/// The file of a frame read from a Ray task's name (the worker's path is in its own traceback).
pub const RAY_TASK: &str = "<ray task>";

/// The second line of a frame a console wrapped after `File` (Rich's traceback through a
/// logger at 80 columns, as TabbyAPI prints it in docker: `ERROR:      File` then
/// `"/usr/local/lib/python3.10/dist-packages/exllamav2/linear.py", line 138, in load`). When
/// the function name went to a third line too, the frame is not read.
///
/// Also a frame whose start a paste cut off (`/miniconda3/envs/x/lib/python3.6/site-packages/
/// torch/nn/modules/module.py", line 605, in convert`, the first line of a quoted excerpt): an
/// absolute or home path to a `.py` file, then the frame's own `", line N, in name`.
fn wrapped_frame(text: &str, facts: &mut LineFacts) {
    let trimmed = text.trim_start();
    let Some(rest) = trimmed
        .strip_prefix('"')
        .or_else(|| cut_frame_start(trimmed))
    else {
        return;
    };
    let Some(end) = rest.find('"') else {
        return;
    };
    let (file, tail) = (&rest[..end], &rest[end..]);
    if !tail.starts_with("\", line ") || !(file.contains('/') || file.contains('\\')) {
        return;
    }
    if let Some(function) = after(tail, ", in ").and_then(function_name) {
        push_frame(facts, function, file);
    }
}

/// A frame line cut before its `File "`: the path itself, absolute (`/…`, `~/…`, `C:\…`) or cut
/// inside it, to a `.py` file, with no quote before the frame's own `", line `.
fn cut_frame_start(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let drive = bytes.len() > 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && (bytes[2] == b'\\' || bytes[2] == b'/');
    let end = text.find("\", line ")?;
    let path = &text[..end];
    // Or cut inside the path (`s/transformers_modules/ModelScope-Agent-7B/modeling.py", line
    // 1208, in forward`, a paste that starts mid-line): a relative path of folders, no spaces.
    let relative = bytes[0].is_ascii_alphanumeric()
        && (path.contains('/') || path.contains('\\'))
        && !path.contains(char::is_whitespace);
    if !(text.starts_with('/') || text.starts_with("~/") || drive || relative) {
        return None;
    }
    (path.ends_with(".py") && !path.contains('"')).then_some(text)
}

/// A Lua traceback's frame (Torch7 and its `luajit`, `stack traceback:`): `/usr/local/share/
/// lua/5.1/torch/File.lua:351: in function 'readObject'`, a method as `in method 'forward'`
/// (Lua 5.2+), an anonymous one as `in function <file:line>` (no name: no frame).
fn lua_frame(text: &str, facts: &mut LineFacts) {
    let trimmed = text.trim_start();
    let Some(at) = trimmed.find(".lua:") else {
        return;
    };
    let file = &trimmed[..at + ".lua".len()];
    let rest = &trimmed[at + ".lua:".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(rest) = rest[digits..].strip_prefix(": in ").filter(|_| digits > 0) else {
        return;
    };
    let named = ["function '", "method '", "upvalue '", "local '", "field '"]
        .iter()
        .find_map(|kind| rest.strip_prefix(kind));
    let Some(name) = named
        .and_then(|name| name.split_once('\''))
        .map(|(name, _)| name)
    else {
        return;
    };
    // Torch7's files (`…/lua/5.1/torch/File.lua`) name no engine of this tool's: PyTorch's
    // paths are Python's.
    let whole = function_name(name).filter(|function| function.len() == name.len());
    if let Some(function) = whole.filter(|_| !file.contains(' ')) {
        facts.frame = Some((function.to_string(), file.to_string()));
    }
}

/// A MATLAB stack's frame, as an uncaught error prints them innermost first (`Error in
/// vl_nnconv`, `Error in dagnn.Conv/forward (line 11)`, `Error in cnn_train>process_epoch (line
/// 286)`): a file's function, a local function after `>`, a class's method after `/`. The
/// function counts as a frame of the file it is named with (`cnn_train.m`); MATLAB's own
/// toolboxes and MatConvNet's layers (`vl_nn…`) are frames as any other, their names read by
/// the same rules.
fn matlab_frame(text: &str, facts: &mut LineFacts) {
    let Some(rest) = text.trim_start().strip_prefix("Error in ") else {
        return;
    };
    let Some((name, line)) = rest.trim_end().split_once(" (line ") else {
        return;
    };
    let numbered = line
        .strip_suffix(')')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '>' | '/' | '@');
    if !numbered || name.is_empty() || !name.chars().all(word) {
        return;
    }
    let (file, function) = match name.rsplit_once(['>', '/']) {
        Some((file, function)) => (file, function),
        None => (name, name),
    };
    if !function.is_empty() && !file.is_empty() {
        facts.frame = Some((function.to_string(), format!("{file}.m")));
    }
}

/// Rich tracebacks (Lightning, Typer): `│ /path/x.py:123 in func   │`. A path that fills the
/// box's width leaves the function for the next line (`│ /opt/…/torch/nn/modules/sparse.py:403 │`
/// then `│ in __init__ │`): the frame is kept without it and the next line names it.
fn rich_frame(text: &str, facts: &mut LineFacts) {
    if let Some(code) = rich_arrow(text) {
        facts.arrow_code = Some(code.to_string());
        return;
    }
    let Some(at) = memchr::memmem::find(text.as_bytes(), b".py:") else {
        let inner = text.trim().trim_matches('\u{2502}').trim();
        // A line number the box cut too (`…/module.py:177 │` then `│ 9 in _wrapped_call_impl │`).
        let inner = inner
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        if let Some(function) = inner.strip_prefix("in ").and_then(function_name) {
            if inner.len() == "in ".len() + function.len() {
                facts.frame_function = Some(function.to_string());
            }
        }
        return;
    };
    let head = &text[..at + ".py".len()];
    let file = head.rsplit(['\u{2502}', ' ']).next().unwrap_or(head);
    let rest = &text[at + ".py:".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || file.is_empty() {
        return;
    }
    // (The line holds a box-drawing bar: the rule's markers.)
    let wrapped = rest[digits..]
        .trim()
        .trim_end_matches('\u{2502}')
        .trim()
        .is_empty();
    if wrapped {
        push_frame(facts, "", file);
        return;
    }
    let Some(after_line) = rest[digits..].strip_prefix(" in ") else {
        return;
    };
    if let Some(function) = function_name(after_line) {
        push_frame(facts, function, file);
    }
}

/// The statement on a rich traceback's arrow line (`│ ❱ 51 │   │   masks = model(x) │`): the
/// source line the frame above it was running, without the box, the arrow, the line number and
/// the indent guides.
fn rich_arrow(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once('\u{2771}')?;
    let rest = rest.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let code = rest[digits..]
        .trim_start_matches(|c: char| c == '\u{2502}' || c.is_whitespace())
        .trim_end()
        .trim_end_matches('\u{2502}')
        .trim_end();
    (!code.is_empty()).then_some(code)
}

/// The identifier at the start of `text` (`<module>`, `<lambda>` and `<genexpr>` included).
fn function_name(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '<' | '>' | '.')))
        .unwrap_or(text.len());
    let name = text[..end].trim_end_matches('.');
    (!name.is_empty()).then_some(name)
}

fn push_frame(facts: &mut LineFacts, function: &str, file: &str) {
    let engine = super::engines::engine_of_path(file);
    if let Some(engine) = engine {
        facts.engine(engine, Certainty::Weak);
    }
    // IPython 8 prints qualified names (`Module._call_impl`); the rules match the last part.
    let function = function.rsplit('.').next().unwrap_or(function);
    facts.frame = Some((function.to_string(), file.to_string()));
}

/// A tqdm/Keras progress line with a loss (`45%|████▌ | 450/1000 [02:15<02:45, 3.32it/s,
/// loss=0.523]`, Lightning's `Epoch 0: … v_num=0, train_loss=1.23]`, Keras `- loss: 2.30`):
/// a training step ran. Evaluation bars are left out.
fn progress_bar_step(text: &str, facts: &mut LineFacts) {
    if super::stages::stage_bar(text.split('%').next().unwrap_or(text), facts) {
        return;
    }
    let bar = has(text, "it/s") || has(text, "s/it") || tqdm_rate(text) || has(text, " - loss: ");
    let evaluation = [
        "Validation",
        "Evaluating",
        "Testing",
        "Predicting",
        "Sanity Checking",
    ]
    .iter()
    .any(|word| has(text, word));
    if bar && !evaluation {
        step(facts);
    }
}

/// tqdm's rate field with any unit (`unit=` is the caller's: `35.84micro-batch/s`,
/// `1.2s/batch`, `?tok/s`), read inside the bar's `[elapsed<remaining, rate, postfix]` bracket so
/// prose with a slash is not a bar (tqdm `std/tqdm.py` `format_meter`: `{rate_fmt}` is
/// `{n:5.2f}{unit}/s`, or `{1/n:5.2f}s/{unit}` below one per second).
fn tqdm_rate(text: &str) -> bool {
    let Some(open) = text.rfind('[') else {
        return false;
    };
    let inside = &text[open + 1..];
    let inside = inside.split(']').next().unwrap_or(inside);
    let mut fields = inside.split(',').map(str::trim);
    let timing = fields.next().is_some_and(|f| f.contains('<'));
    let rate = |field: &str| {
        let number_end = field
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '?'))
            .unwrap_or(field.len());
        let (number, unit) = field.split_at(number_end);
        !number.is_empty()
            && !unit.is_empty()
            && !unit.contains(char::is_whitespace)
            && (unit.ends_with("/s") || unit.starts_with("s/"))
    };
    timing && fields.next().is_some_and(rate)
}

/// A training step ran; printed under a failure, it is the step that failed (tqdm redraws
/// its bar when the exception closes it, after the traceback). One line is one step, however
/// many of the step rules it matches (`iter 3 step 1: loss 2.5` is LitGPT's and a logged step).
pub(super) fn step(facts: &mut LineFacts) {
    if facts
        .events
        .iter()
        .any(|event| event.kind == EventKind::TrainingStep)
    {
        return;
    }
    facts.event(
        EventKind::TrainingStep,
        Phase::TrainingStep,
        EventFigures::default(),
    );
    facts.late_phase = Some(Phase::TrainingStep);
}

/// The training bar of the YOLO trainers: ultralytics 8.x `engine/trainer.py` `_do_train`
/// sets the tqdm description to `("%11s" * 2 + "%11.4g" * (2 + n_losses)) % (f"{epoch + 1}/
/// {self.epochs}", f"{mem:.3g}G", *losses, batch_size, img_size)`, and YOLOv3/v5 `train.py` to
/// `(epoch/epochs, "<mem>G", *mean_losses, targets, img_size)`: `  0/299  15.8G  3.99  0.358 …
/// 608:  63% 34/54 [00:42<00:25,  1.26s/it]`. An epoch counter, a GPU-memory column and a loss
/// value, in that order, are a training batch; the validation bar (`Class Images Instances …`)
/// has none of them.
fn detection_bar_step(text: &str, facts: &mut LineFacts) {
    if !text.contains('%') {
        return;
    }
    if framework_bar(text, facts) {
        return;
    }
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let counter = |token: &str| {
        token.split_once('/').is_some_and(|(done, total)| {
            !done.is_empty()
                && !total.is_empty()
                && done.bytes().all(|b| b.is_ascii_digit())
                && total.bytes().all(|b| b.is_ascii_digit())
        })
    };
    let number = |token: &str| token.parse::<f64>().is_ok();
    let memory = |token: &str| token.strip_suffix('G').is_some_and(number);
    let batch = tokens
        .windows(3)
        .any(|w| counter(w[0]) && memory(w[1]) && number(w[2]));
    if batch {
        step(facts);
    }
}

/// Progress bars whose description names the stage, read from the frameworks' sources (the
/// bars reach here through their tqdm rate, `it/s]` / `s/it]`; no marker of their own):
/// * evaluation bars: Lightning 2.x `callbacks/progress/tqdm_progress.py` (`Sanity Checking
///   DataLoader 0:`, `Validation DataLoader 0:`, `Testing DataLoader 0:`, `Predicting
///   DataLoader 0:`; `Validation:` before a dataloader is named; 1.x `callbacks/progress.py`
///   `ProgressBar.init_validation_tqdm` / `init_test_tqdm` / `init_predict_tqdm`: `Validating:`,
///   `Testing:`, `Predicting:`, the descriptions scripts' own evaluation bars use too) and the
///   ultralytics validator's
///   header bar (`engine/validator.py` `get_desc`: `Class  Images  Instances  Box(P  R  mAP50 …`).
///   Before the failure they are an evaluation pass (`Evaluation`, not a served request);
///   printed under it (redrawn as the exception closes them), they show an evaluation running;
/// * torchtune's recipe bar (`recipes/*_finetune_*.py` `train`: `pbar.set_description(f"{epoch
///   + 1}|{global_step}|Loss: {loss}")`, 0.2–0.6): a training step;
/// * AUTOMATIC1111's and Forge's generation bar (`modules/shared_total_tqdm.py` `TotalTQDM`,
///   `desc="Total progress"`): a generation request is running.
///
/// Returns whether the bar was one of them.
fn framework_bar(text: &str, facts: &mut LineFacts) -> bool {
    let description = text.split('%').next().unwrap_or(text);
    let lightning_eval = [
        "Sanity Checking DataLoader ",
        "Validation DataLoader ",
        "Testing DataLoader ",
        "Predicting DataLoader ",
        "Sanity Checking: ",
        "Validation: ",
        "Validating: ",
        "Testing: ",
        "Predicting: ",
    ]
    .iter()
    .any(|word| description.contains(word));
    let yolo_val = {
        let mut words = description.split_whitespace();
        words.next() == Some("Class")
            && words.next() == Some("Images")
            && description.contains("mAP50")
    };
    if lightning_eval || yolo_val {
        super::stages::evaluation(facts);
        facts.late_phase = Some(Phase::Inference);
        return true;
    }
    if super::stages::stage_bar(description, facts) {
        return true;
    }
    let torchtune = description
        .split_once("|Loss: ")
        .is_some_and(|(counts, _)| {
            let counts = counts.trim_start();
            counts.split_once('|').is_some_and(|(epoch, done)| {
                !epoch.is_empty()
                    && !done.is_empty()
                    && epoch.bytes().all(|b| b.is_ascii_digit())
                    && done.bytes().all(|b| b.is_ascii_digit())
            })
        });
    if torchtune {
        step(facts);
        return true;
    }
    if description.trim_start().starts_with("Total progress:") {
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
        return true;
    }
    false
}

/// The stage a running XLA program's name shows (`[executable_name='jit_train_step']` in JAX's
/// `RESOURCE_EXHAUSTED` errors: PjRt names the executable after the jitted function), wherever
/// the line stands: a train step, or a generation/sampling.
pub fn xla_executable_phase(text: &str) -> Option<Phase> {
    let name = text
        .split("executable_name='")
        .nth(1)?
        .split('\'')
        .next()?
        .to_ascii_lowercase();
    // A jitted function named for a step or an update alone (`@jax.jit def step(params,
    // opt_state, batch)`, optax's `update`): the training step of JAX's own examples and of
    // most hand-written loops; a sampler's step names its sampling (`jit_sample_step`).
    let bare = name
        .trim_start_matches("jit_")
        .trim_start_matches("pmap_")
        .trim_start_matches('_');
    let step = matches!(
        bare,
        "step" | "update" | "step_fn" | "update_fn" | "sgd_step" | "opt_step" | "grad_step"
    ) || name.contains("apply_gradients");
    if name.contains("train") || name.contains("update_step") || step {
        Some(Phase::TrainingStep)
    } else if ["generate", "sample", "decode", "predict", "infer"]
        .iter()
        .any(|word| name.contains(word))
    {
        Some(Phase::Inference)
    } else {
        None
    }
}

/// An XLA error naming its program printed under an allocator's warning (TSL's BFC allocator
/// logs `ran out of memory trying to allocate …` before the runtime raises the error that names
/// the executable): the program's stage, counted for the failure above it.
fn xla_executable(text: &str, facts: &mut LineFacts) {
    if let Some(phase) = xla_executable_phase(text) {
        facts.late_phase = Some(phase);
    }
}

/// A TensorFlow graph node named in an error (`[[{{node …}}]]`, `[[…]]`, TF 1.x `[[Node: … = Op[…]]]`)
/// that lies in Keras's training scope: Keras 2 `engine/training.py` `_make_train_function`
/// builds the optimizer's updates under `K.name_scope('training')` and the optimizer's class name
/// (`training/Adam/…`, `training_1/SGD/…`, also inside a group such as
/// `GroupCrossDeviceControlEdges_0/training/Adam/…`). A node there is part of a training step,
/// unless it initialises a variable; a node of GPT-2's sampler is generation.
fn keras_training_node(text: &str, facts: &mut LineFacts) {
    // TF 1.x `[[{{node x}} = …]]` / `[[Node: x = …]]`, TF 2.0–2.3 `[[node x (defined at …) ]]`.
    fn node_name(rest: &str) -> &str {
        let rest = rest
            .trim_start_matches("{{node ")
            .trim_start_matches("Node: ")
            .trim_start_matches("node ");
        rest.split(['}', ' ', ']']).next().unwrap_or("")
    }
    let names: Vec<&str> = text.split("[[").skip(1).map(node_name).collect();
    // OpenAI's GPT-2 sampler (`src/sample.py` `sample_sequence`: `with
    // tf.name_scope('sample_sequence')`), kept by gpt-2-simple and its forks: text generation.
    if names
        .iter()
        .any(|name| name.split('/').next() == Some("sample_sequence"))
    {
        facts.late_phase = Some(Phase::Inference);
        return;
    }
    // An optimizer's slot variable being initialised (`training/Adam/Variable_30/Assign`, a
    // `…/adam_m/Initializer/zeros` feeding an `Assign`): Keras and TF 1.x run these once,
    // when the session initialises its variables, before any step.
    let initialising = |name: &str| {
        let segments: Vec<&str> = name.split('/').collect();
        let last = segments.last().copied().unwrap_or("");
        let variable = segments.len() >= 2 && {
            let owner = segments[segments.len() - 2];
            owner.starts_with("Variable") || owner.ends_with("_m") || owner.ends_with("_v")
        };
        (last == "Assign" && variable) || segments.contains(&"Initializer")
    };
    // `training`, or `training_N` for the N-th model built in the same graph (TF uniquifies
    // name scopes), then the optimizer's class name.
    let training = names.iter().filter(|name| !initialising(name)).any(|name| {
        name.match_indices("training").any(|(at, word)| {
            let starts = at == 0 || name.as_bytes()[at - 1] == b'/';
            let mut rest = &name[at + word.len()..];
            if let Some(numbered) = rest.strip_prefix('_') {
                rest = numbered.trim_start_matches(|c: char| c.is_ascii_digit());
                if rest.len() == numbered.len() {
                    return false;
                }
            }
            // The optimizer's class (`Adam`), or its name lowercased as a retyped or
            // lowercased paste shows it (`training/adam/mul_73`).
            let optimizer = rest.strip_prefix('/').is_some_and(|scope| {
                let class = scope.split(['/', '_']).next().unwrap_or("");
                scope.starts_with(|c: char| c.is_ascii_uppercase())
                    || KERAS_OPTIMIZERS.contains(&class)
            });
            starts && optimizer
        })
    });
    // The gradient computation's own scopes: TF 2.x `tf.GradientTape.gradient` builds the
    // backward ops under `gradient_tape/` (`python/eager/backprop.py`; Keras 2.2+
    // `Model.train_step` → `optimizer.minimize(loss, vars, tape=tape)`), TF 1.x
    // `tf.gradients` under `gradients/` or `gradients_N/` (`python/ops/gradients_util.py`
    // `_GradientsHelper`, `ops.name_scope(name, "gradients", …)`): a backward pass, i.e. a
    // training step (`gradient_tape/model/conv2d/Conv2D/Conv2DBackpropInput`).
    // `tf.gradients` opens its scope inside the caller's (`ops.name_scope` nests), so the
    // scope may stand under the model's own (`network/train-operation/gradients/AddN_14`): any
    // segment but the last.
    let gradient = names.iter().any(|name| {
        let segments: Vec<&str> = name.split('/').collect();
        let scopes = &segments[..segments.len().saturating_sub(1)];
        scopes.iter().any(|scope| {
            let numbered = scope
                .strip_prefix("gradients_")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            *scope == "gradient_tape" || *scope == "gradients" || numbered
        })
    });
    if training || gradient {
        facts.late_phase = Some(Phase::TrainingStep);
    }
}

/// Keras optimizers' class names, lowercased (`keras/optimizers.py`, Keras 2.x: `SGD`,
/// `RMSprop`, `Adagrad`, `Adadelta`, `Adam`, `Adamax`, `Nadam`; TF's `Ftrl`, `AdamW`).
const KERAS_OPTIMIZERS: &[&str] = &[
    "sgd", "rmsprop", "adagrad", "adadelta", "adam", "adamax", "nadam", "ftrl", "adamw",
];

/// LitGPT's fine-tuning and pre-training scripts (`litgpt/finetune/*.py`, `litgpt/pretrain.py`
/// `fit`): `iter 3436 step 53: loss 2.9911, iter time: 400.10ms` (newer: `iter 5 | step 1: loss`).
fn litgpt_step(text: &str, facts: &mut LineFacts) {
    let Some(at) = text.find("iter ") else {
        return;
    };
    let rest = &text[at + "iter ".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let rest = rest[digits..].trim_start_matches(" |");
    if digits == 0 || !rest.starts_with(" step ") {
        return;
    }
    let rest = &rest[" step ".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && rest[digits..].starts_with(": loss ") {
        step(facts);
    }
}

/// A training loop's own log line: a step (or iteration/epoch/batch) number, then a loss with
/// its value, as hand-written loops print them with `print`/`logging` (`step 12 batch 4096 loss
/// 1.0394`, `Epoch 3 Step 120: loss: 0.52`, `[iter 800] Loss 2.31`, `batch 7: 12000 atoms, loss
/// 0.41`). An evaluation's loss has its own name (`val_loss`, `eval_loss`). Keras and the progress bars
/// have their own rules; a line without both parts is not a step.
fn logged_step(text: &str, facts: &mut LineFacts) {
    if has(text, " - loss: ") || has(text, "val_loss") || has(text, "eval_loss") {
        return;
    }
    let lower = text.to_ascii_lowercase();
    // `loss` as a word, or the last part of a name (`total-loss 0.5882`, `regular_loss:
    // 0.2487`: FastMaskRCNN's `train.py` prints both per iteration).
    let Some(loss_at) = [" loss", "-loss", "_loss"]
        .iter()
        .filter_map(|word| lower.find(word))
        .min()
    else {
        return;
    };
    let value = lower[loss_at + " loss".len()..].trim_start_matches([':', '=', ' ']);
    if !value.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-') {
        return;
    }
    let before = &lower[..loss_at];
    let counted = ["step", "iter", "iteration", "epoch", "batch"]
        .iter()
        .any(|word| {
            before.match_indices(word).any(|(at, _)| {
                let starts_word = at == 0 || !before.as_bytes()[at - 1].is_ascii_alphabetic();
                let rest = before[at + word.len()..].trim_start_matches([' ', ':', '=', '#', '[']);
                starts_word && rest.starts_with(|c: char| c.is_ascii_digit())
            })
        });
    if counted {
        step(facts);
    }
}

/// MXNet's training-progress callback (`python/mxnet/callback.py` `Speedometer.__call__`, 0.x–1.x:
/// `'Epoch[%d] Batch [%d]\tSpeed: %.2f samples/sec'` then `'\t%s=%f'` per metric, the metric
/// names prefixed `Train-` by `BaseModule.fit`; 1.x writes the batch range, `Batch [20-40]`),
/// passed as `batch_end_callback` to `Module.fit` / `mx.model.FeedForward.fit`, and copied by
/// Gluon training scripts: a batch of an epoch was trained. (`Iter[%d] Batch [%d]` when no
/// epoch is known.)
fn mxnet_speedometer(text: &str, facts: &mut LineFacts) {
    let counted = ["Epoch[", "Iter["].iter().any(|head| {
        text.split_once(head).is_some_and(|(_, rest)| {
            rest.starts_with(|c: char| c.is_ascii_digit()) && has(rest, "] Batch [")
        })
    });
    if counted && has(text, "samples/sec") && !has(text, "Validation-") {
        step(facts);
    }
}

/// The per-batch line of a training loop written after the PyTorch examples (pytorch/examples
/// `mnist/main.py` `train`: `print('Train Epoch: {} [{}/{} ({:.0f}%)]\\tLoss: {:.6f}'.format(…))`,
/// copied by countless scripts) and of the VITS family (jaywalnut310/vits `train.py`
/// `train_and_evaluate`: `logger.info('Train Epoch: {} [{:.0f}%]'.format(epoch, 100. * batch_idx
/// / len(train_loader)))`, kept by so-vits-svc, Bert-VITS2 and GPT-SoVITS `s2_train.py`): an
/// epoch number, then ` [` and the batch's place: a training batch ran (session 39).
fn train_epoch_line(text: &str, facts: &mut LineFacts) {
    if number_between(text, "Train Epoch: ", " [") {
        step(facts);
    }
}

/// Whether `text` holds `head`, a number, then `tail` (`Train Epoch: 3 [`).
fn number_between(text: &str, head: &str, tail: &str) -> bool {
    let Some((_, rest)) = text.split_once(head) else {
        return false;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    digits > 0 && rest[digits..].starts_with(tail)
}

/// The losses line of the pix2pix family's visualizer (junyanz/pytorch-CycleGAN-and-pix2pix
/// `util/visualizer.py` `print_current_losses`: `'(epoch: %d, iters: %d, time: %.3f, data:
/// %.3f) '` then `'%s: %.3f '` per loss; pix2pixHD and SPADE print `'(epoch: %d, iters: %d,
/// time: %.3f) '`): an iteration of the training ran.
fn visualizer_losses(text: &str, facts: &mut LineFacts) {
    if number_between(text, "(epoch: ", ", iters: ") {
        step(facts);
    }
}

/// A warning raised from `torch/cuda/graphs.py` (`/…/torch/cuda/graphs.py:126: UserWarning: The
/// CUDA Graph is empty…`): only `CUDAGraph.capture_begin`/`capture_end` and the `graph` context
/// manager live there (torch 2.x), so a capture was running.
pub(super) fn torch_graphs_warning(text: &str, facts: &mut LineFacts) {
    let Some(at) = memchr::memmem::find(text.as_bytes(), b"torch/cuda/graphs.py:") else {
        return;
    };
    let rest = &text[at + "torch/cuda/graphs.py:".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && rest[digits..].starts_with(": ") && has(&rest[digits..], "Warning") {
        facts.event(
            EventKind::CudaGraphCaptureStart,
            Phase::CudaGraphCapture,
            EventFigures::default(),
        );
    }
}

/// A pytest frame: `.venv/lib/python3.14/site-packages/transformers/trainer.py:1412: in train`
/// (pytest's `--tb=long`/`auto` report; the location line precedes the source lines).
pub(super) fn pytest_frame(text: &str, facts: &mut LineFacts) {
    let Some(at) = memchr::memmem::find(text.as_bytes(), b": in ") else {
        return;
    };
    let head = text[..at].trim_start();
    let Some((file, line)) = head.rsplit_once(':') else {
        return;
    };
    if line.is_empty() || !line.bytes().all(|b| b.is_ascii_digit()) || !file.ends_with(".py") {
        return;
    }
    if file.contains(char::is_whitespace) {
        return;
    }
    let rest = &text[at + ": in ".len()..];
    if let Some(function) = function_name(rest) {
        if function.len() == rest.trim_end().len() {
            push_frame(facts, function, file);
        }
    }
}

fn deepspeed(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Deepspeed, Certainty::Strong);
    if let Some(version) = word_after(text, "DeepSpeed info: version=") {
        facts.engine_version = Some(version.to_string());
    }
}

/// DeepSpeed's engine set-up lines (see the rules): the engine partitions the model and makes
/// the optimizer's states before any step, start-up. `After initializing optimizer states`
/// reports that part done.
fn deepspeed_setup(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Deepspeed, Certainty::Weak);
    if !has(text, "After initializing") {
        facts.event(
            EventKind::DeviceInit,
            Phase::Startup,
            EventFigures::default(),
        );
    }
}

fn deepspeed_launcher(text: &str, facts: &mut LineFacts) {
    let function = after(text, "[launch.py:")
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, rest)| rest);
    if function
        .is_some_and(|rest| rest.starts_with("sigkill_handler]") || rest.starts_with("main]"))
    {
        facts.engine(EngineName::Deepspeed, Certainty::Weak);
    }
}

fn torchrun(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Pytorch, Certainty::Weak);
}

/// transformers `Trainer` log dicts: `{'loss': 1.2345, 'grad_norm': …, 'learning_rate': …, 'epoch': 0.1}`.
fn training_step(text: &str, facts: &mut LineFacts) {
    if has(text, "'epoch'") || has(text, "'learning_rate'") {
        facts.engine(EngineName::Transformers, Certainty::Weak);
        step(facts);
    }
}

fn versions(text: &str, facts: &mut LineFacts) {
    let pairs: [(&str, &'static str); 10] = [
        ("PyTorch version (GPU?):", "torch"),
        ("PyTorch version:", "torch"),
        ("Torch version:", "torch"),
        ("torch==", "torch"),
        ("transformers==", "transformers"),
        ("`transformers` version:", "transformers"),
        ("vllm==", "vllm"),
        ("CUDA used to build PyTorch:", "cuda (torch build)"),
        ("Driver Version:", "nvidia driver"),
        ("CUDA Version:", "cuda (driver)"),
    ];
    for (key, name) in pairs {
        if let Some(version) = word_after(text, key) {
            let known = facts.versions.iter().any(|(existing, _)| *existing == name);
            if !known && version.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                facts.versions.push((name, version.to_string()));
            }
        }
    }
}

#[cfg(test)]
mod native_tests;
#[cfg(test)]
mod tests;

// === Stage lines of training frameworks read from their sources (issue 13, second blind
// batch). Each handler names the project, file and version read. ===

/// Megatron-LM's iteration line (`megatron/training/training.py` `training_log`, 2.x–core 0.x;
/// NeMo's Megatron trainers print the same): ` iteration      200/   10000 | consumed samples:
/// 51200 | elapsed time per iteration (ms): …`. It is printed after an iteration's step; the
/// next one is running. The number must follow `iteration`.
fn megatron_iteration(text: &str, facts: &mut LineFacts) {
    let Some(at) = text.find("iteration") else {
        return;
    };
    let rest = text[at + "iteration".len()..].trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && rest[digits..].trim_start().starts_with('/') {
        step(facts);
    }
}

/// detectron2's trainer (`detectron2/engine/train_loop.py` `TrainerBase.train`, 0.1–0.6:
/// `except Exception: logger.exception("Exception during training:")`), printed with the logger
/// name `d2.engine.train_loop` just above the traceback of an error raised by the training
/// loop.
fn detectron2_exception(text: &str, facts: &mut LineFacts) {
    if has(text, "d2.engine.train_loop") || has(text, "train_loop.py") {
        step(facts);
    }
}

/// The header of the YOLO training table, printed when an epoch's loop starts (ultralytics
/// 8.x `engine/trainer.py` `_do_train` → `progress_string`: `Epoch GPU_mem box_loss cls_loss
/// dfl_loss Instances Size`; YOLOv5 7.0 `train.py`: `Epoch GPU_mem box_loss obj_loss cls_loss
/// Instances Size`, older `Epoch gpu_mem box obj cls labels img_size`): the batches run next.
fn yolo_epoch_header(text: &str, facts: &mut LineFacts) {
    let mut tokens = text.split_whitespace();
    let epoch = tokens.next() == Some("Epoch");
    let memory = tokens
        .next()
        .is_some_and(|t| t == "GPU_mem" || t == "gpu_mem");
    let loss = tokens
        .next()
        .is_some_and(|t| t.ends_with("loss") || t == "box");
    if epoch && memory && loss {
        step(facts);
    }
}

/// Lightning's batch-size finder (`tuner/batch_size_scaling.py` `_run_power_scaling` /
/// `_run_binary_scaling`, 1.x–2.x: `Batch size {N} succeeded, trying batch size {M}`), which
/// fits a few training steps at each size: the next trial runs training steps.
fn lightning_batch_size_trial(text: &str, facts: &mut LineFacts) {
    if has(text, "Batch size ") {
        step(facts);
    }
}

/// ultralytics' trainer turning its mosaic augmentation off for the last epochs
/// (`ultralytics/engine/trainer.py` `BaseTrainer._do_train`, 8.x: `if epoch == (self.epochs -
/// self.args.close_mosaic): self._close_dataloader_mosaic()`, which logs `Closing dataloader
/// mosaic`, at the start of an epoch inside the training loop): the training runs.
fn ultralytics_close_mosaic(text: &str, facts: &mut LineFacts) {
    if text.trim_end().ends_with("Closing dataloader mosaic") {
        step(facts);
    }
}

/// ultralytics AutoBatch (`ultralytics/utils/autobatch.py` `autobatch`, 8.x; YOLOv5
/// `utils/autobatch.py`): `AutoBatch: Computing optimal batch size for imgsz=640 at 60.0% CUDA
/// memory utilization.`, then forward/backward passes at growing batch sizes to measure memory,
/// then `AutoBatch: Using batch-size 16 for CUDA:0 …`.
fn autobatch_start(text: &str, facts: &mut LineFacts) {
    if has(text, "AutoBatch") {
        facts.event(
            EventKind::ProfilingStart,
            Phase::Profiling,
            EventFigures::default(),
        );
    }
}

fn autobatch_done(_text: &str, facts: &mut LineFacts) {
    facts.event(
        EventKind::ProfilingDone,
        Phase::Profiling,
        EventFigures::default(),
    );
}

/// OpenNMT-py's training report (`onmt/utils/statistics.py` `Statistics.output`, 1.x–3.x):
/// `Step 1000/200000; acc: 45.12; ppl: 32.10; xent: 3.47; lr: 0.00100; …`. Validation is
/// reported as `Validation perplexity:` / `Validation accuracy:` instead.
fn opennmt_step(text: &str, facts: &mut LineFacts) {
    let Some(at) = text.find("Step ") else {
        return;
    };
    let rest = &text[at + "Step ".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && has(rest, "; acc:") && has(rest, "; ppl:") {
        step(facts);
    }
}

/// TensorFlow 1.x–2.x creating its GPU device (`tensorflow/core/common_runtime/gpu/
/// gpu_device.cc`): `Found device 0 with properties:` (with `Total memory:`/`totalMemory:`),
/// `Creating TensorFlow device (/gpu:0) -> (device: 0, name: …)` (≤1.12) and `Created TensorFlow
/// device (/job:localhost/replica:0/task:0/device:GPU:0 with 7000 MB memory)`. TF then reserves
/// the memory the device may use (`failed to allocate 7.50G … from device` when it cannot).
fn tensorflow_device(text: &str, facts: &mut LineFacts) {
    let found = has(text, "Found device ") && has(text, "with properties");
    let created = has(text, "TensorFlow device (");
    if found || created {
        facts.event(
            EventKind::DeviceInit,
            Phase::Startup,
            EventFigures::default(),
        );
    }
}

/// The transformers `Trainer` starting its loop (`trainer.py` `_inner_training_loop`, 4.x:
/// `logger.info("***** Running training *****")`, then `Num examples`, `Num Epochs`, `Total
/// optimization steps`): the optimizer is built and the model wrapped; the batches run next.
fn trainer_loop_start(_text: &str, facts: &mut LineFacts) {
    step(facts);
}

/// fairseq's and metaseq's training loop (`fairseq_cli/train.py` `train`, 0.9–0.12; metaseq
/// `metaseq_cli/train.py`: `logger.info("begin training epoch {}")`, then `Start iterating over
/// samples`): the epoch's batches run next.
fn fairseq_epoch_start(text: &str, facts: &mut LineFacts) {
    let rest = text
        .split_once("begin training epoch ")
        .map_or("", |(_, rest)| rest.trim());
    if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
        step(facts);
    }
}

/// An epoch said to begin, its number next (`============ Starting epoch 0 ... ============`,
/// `Starting Epoch: 0 Iteration: 0`, `Start epoch 3`): the epoch's batches run next. Not an
/// epoch of another loop (`Start epoch evaluation`), whose number does not follow.
fn epoch_start(text: &str, facts: &mut LineFacts) {
    let lower = text.to_ascii_lowercase();
    let rest = ["starting epoch", "start epoch"]
        .iter()
        .find_map(|words| lower.split_once(words).map(|(_, rest)| rest))
        .unwrap_or("");
    let number = rest.trim_start_matches([':', ' ', '#', '[']);
    let digits = number.bytes().take_while(u8::is_ascii_digit).count();
    let after = number[digits..].trim_start();
    let ends = after.is_empty()
        || after.starts_with(['.', '/', '=', ',', ']', '('])
        || after.starts_with("iteration")
        || after.starts_with("of ");
    if digits > 0 && ends {
        step(facts);
    }
}

/// An epoch's count alone on its line, `Epoch 1/10` (after a log prefix at most): Keras'
/// `callbacks.py` `ProgbarLogger.on_epoch_begin` (2.x: `print("Epoch %d/%d" % (epoch + 1,
/// self.epochs))`; 3.x `io_utils.print_msg(f"Epoch {epoch + 1}/{self.epochs}")`), printed as
/// `fit` begins an epoch, before its batches' bar, and the training scripts that announce their
/// epochs the same way (`print(f"Epoch {epoch}/{num_epochs - 1}")` then a dashed rule in the
/// PyTorch transfer-learning tutorial's `train_model`). A line that goes on (`Epoch 1/10 loss
/// 0.3`, `Epoch 1/10 done`) is another's.
fn epoch_of_epochs(text: &str, facts: &mut LineFacts) {
    let line = text.trim_end();
    let Some(at) = line.rfind("Epoch ") else {
        return;
    };
    let head = &line[..at];
    let Some((done, of)) = line[at + "Epoch ".len()..].split_once('/') else {
        return;
    };
    let number = |s: &str| !s.is_empty() && s.len() <= 6 && s.bytes().all(|b| b.is_ascii_digit());
    if number(done) && number(of) && (head.trim().is_empty() || super::is_log_prefix(head)) {
        step(facts);
    }
}

/// fairseq's trainer catching an OOM in a training step (`fairseq/trainer.py` `train_step`: 0.6–0.8
/// `print("| WARNING: ran out of memory with exception: {};\n Skipping batch")`, 0.9+
/// `logger.warning("attempting to recover from OOM in forward/backward pass")`; metaseq's copy):
/// the failure happened in the training step. Its validation step says `ran out of memory in
/// validation step, retrying batch` instead (below).
fn fairseq_train_oom(text: &str, facts: &mut LineFacts) {
    // Pasted as markdown the line may keep the italics' underscores (`Skipping batch_`).
    let skipping =
        text.trim().trim_matches(['_', '*']) == "Skipping batch" || has(text, "; Skipping batch");
    if skipping
        || has(
            text,
            "attempting to recover from OOM in forward/backward pass",
        )
    {
        facts.failed_phase_hint = Some(Phase::TrainingStep);
    }
}

/// TensorFlow's `TPUEstimator` (`tensorflow_estimator/python/estimator/tpu/tpu_estimator.py`,
/// TF 1.x `tensorflow/contrib/tpu`), which google-research BERT's scripts use on GPUs too:
/// `train`, `evaluate` and `predict` record an error under their loop's name and mark the loop
/// done in a `finally` (`error_handling.py` `ErrorRendezvous`: `logging.error('Error recorded
/// from %s: %s', …)`, `logging.info('%s marked as finished', …)`, sources `training_loop`,
/// `evaluation_loop`, `prediction_loop`), so the lines around the failure name the loop it
/// ended.
fn tpu_estimator_loop(text: &str, facts: &mut LineFacts) {
    let phase = if has(text, "training_loop") {
        Phase::TrainingStep
    } else if has(text, "prediction_loop") || has(text, "evaluation_loop") {
        Phase::Inference
    } else {
        return;
    };
    facts.failed_phase_hint = Some(phase);
}

/// PySlowFast's per-iteration statistics (`slowfast/utils/logging.py` `log_json_stats`:
/// `json_stats: {"_type": "train_iter", …}`; before 2020 `"split": "test_iter"`), written by
/// its meters after each iteration of the training, validation or test loop (`train_iter`,
/// `val_iter`, `test_iter`; the epochs' summaries `train_epoch`, …): a training step ran, or
/// the model was evaluated on a batch.
fn slowfast_stats(text: &str, facts: &mut LineFacts) {
    if has(text, "\"train_iter\"") {
        step(facts);
    } else if has(text, "\"test_iter\"") || has(text, "\"val_iter\"") {
        super::stages::evaluation(facts);
    }
}

/// fairseq's `valid_step` catching an OOM (`fairseq/trainer.py`: `ran out of memory in
/// validation step, retrying batch`): an evaluation pass.
fn fairseq_valid_oom(_text: &str, facts: &mut LineFacts) {
    facts.failed_phase_hint = Some(Phase::Inference);
}

/// fairseq's trainer logging an OOM it caught (`fairseq/trainer.py` `_log_oom`, 0.10+:
/// `logger.warning("OOM: Ran out of memory with exception: {}")` under the `fairseq.trainer`
/// logger, then the memory summary of each device). `train_step` calls it for an OOM of the
/// forward/backward pass and of the optimizer's step, `valid_step` for one of the validation
/// pass (which then says `ran out of memory in validation step` under the summary). Read as
/// the training step, the trainer's common case; the first hint near a failure is the one
/// read, so a validation OOM pasted whole also reads as training (limit, docs/phases.md).
fn fairseq_logged_oom(text: &str, facts: &mut LineFacts) {
    if has(text, "fairseq.trainer") || has(text, "metaseq.trainer") {
        facts.failed_phase_hint = Some(Phase::TrainingStep);
    }
}

/// Unsloth's banner printed in place of the `Trainer`'s when its patched training loop starts
/// (`unsloth/models/llama.py` / `unsloth_zoo` `_fast_inner_training_loop`, 2024.x–2025.x):
/// `\\   /|    Num examples = 1,000 | Num Epochs = 3 | Total steps = 60`. The banner printed
/// when Unsloth loads a model (`FastLanguageModel.from_pretrained`) names the GPU and versions
/// instead, without these counts.
fn unsloth_training_banner(text: &str, facts: &mut LineFacts) {
    if has(text, "Num Epochs = ") {
        step(facts);
    }
}

/// Coqui TTS's (and Mozilla TTS's) console logger (`TTS/utils/console_logger.py` /
/// coqui-ai Trainer `trainer/logging/console_logger.py` `print_train_step`, 0.x):
/// `   --> STEP: 10/13 -- GLOBAL_STEP: 25` above the step's losses; its evaluation steps
/// (`print_eval_step`) print `--> STEP: 3` without the global step.
fn coqui_step(text: &str, facts: &mut LineFacts) {
    if has(text, "--> STEP: ") {
        step(facts);
    }
}

/// ColossalAI's training scripts (hpcaitech/ColossalAI `examples/language/llama/benchmark.py`,
/// `pretrain.py`, `applications/ColossalChat/examples/training_scripts/train_*.py`, 0.3–0.4)
/// print `Booster init max CUDA memory: 3770.59 MB` once `booster.boost(model, optimizer, …)`
/// returned, then enter their training loop (`for step in tqdm(…, desc="Step")`, `booster.
/// backward`, `optimizer.step()`): the model is placed, the batches run next.
fn colossalai_boosted(text: &str, facts: &mut LineFacts) {
    if text
        .split("Booster init max CUDA memory: ")
        .nth(1)
        .is_some_and(|rest| rest.trim_end().ends_with("MB"))
    {
        step(facts);
    }
}

#[cfg(test)]
mod colossalai_tests;

#[cfg(test)]
mod framework_stage_tests;

/// detectron2's metrics line (`detectron2/utils/events.py` `CommonMetricPrinter.write`, 0.1–0.6:
/// `" {eta}iter: {iter}  {losses}  {time}{data_time}lr: {lr}  {memory}"`, the losses as
/// `total_loss: 3.513  loss_cls: 1.88 …`), written every 20 iterations of
/// `SimpleTrainer.run_step` and once more when the loop ends (`PeriodicWriter.after_train`): an
/// iteration count, then a loss with its value. The `TrainingStep` it marks is the loop running.
fn detectron2_metrics(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "iter: ") else {
        return;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return;
    }
    let losses = rest[digits..].trim_start();
    let loss = losses.split_once(": ").is_some_and(|(name, value)| {
        !name.contains(char::is_whitespace)
            && name.contains("loss")
            && !name.starts_with("val")
            && !name.starts_with("eval")
            && value.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
    });
    if loss {
        step(facts);
    }
}

/// A training log record written as JSON, one object a line: mmengine's `LocalVisBackend`
/// (`mmengine/visualization/vis_backend.py` `add_scalars`, `scalars.json`: `{"lr": 0.01, "loss":
/// 0.61, "epoch": 1, "iter": 50, "step": 50}`), transformers' `trainer_state.json`
/// `log_history` entries (`trainer_callback.py` `TrainerState`: `{"epoch": 0.1, "loss": 1.2,
/// "step": 10}`) and JSON loggers of hand-written loops. A loss key (`"loss"`, `"train/loss"`,
/// `"train_loss"`; not an evaluation's `eval_loss` / `val_loss`) with a number, and a counter
/// key (`step`, `global_step`, `iter`, `iteration`, `epoch`) with a number: a training step ran.
fn json_step(text: &str, facts: &mut LineFacts) {
    let number = |value: &str| {
        value
            .trim_start()
            .starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
    };
    let keys = text.split('"').collect::<Vec<_>>();
    // `"key": value`: a key is followed by a piece that starts with `:`.
    let pairs = keys.windows(2).filter_map(|pair| {
        let value = pair[1].strip_prefix(':')?;
        Some((pair[0], value))
    });
    let mut loss = false;
    let mut counter = false;
    for (key, value) in pairs {
        if !number(value) {
            continue;
        }
        let name = key.rsplit('/').next().unwrap_or(key);
        let evaluation = ["eval", "val", "test"]
            .iter()
            .any(|word| key.starts_with(word) || name.starts_with(word));
        if !evaluation && (name == "loss" || name == "train_loss" || name == "total_loss") {
            loss = true;
        }
        if matches!(
            name,
            "step" | "global_step" | "iter" | "iteration" | "epoch"
        ) {
            counter = true;
        }
    }
    if loss && counter {
        step(facts);
    }
}

/// A training metric printed with its value, its key namespaced `train/loss/…` (`train/loss/dyn
/// 5.41`, `train/loss/total: 0.52`; the marker is `/loss/`, which the log scanner's anchors
/// take cheaply, where `train/loss` alone shared a busy bucket) (a metrics logger: DreamerV3's
/// `embodied/core/logger.py` `TerminalOutput` prints `key value / key value …`; TensorBoard- and
/// W&B-style keys printed by hand-written loops). An evaluation's keys (`eval/loss`, `val/loss`)
/// are not under `train/`.
fn train_loss_metric(text: &str, facts: &mut LineFacts) {
    let found = text.match_indices("train/loss").any(|(at, key)| {
        let starts = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '/'));
        let rest = &text[at + key.len()..];
        // A sub-key (`/dyn`) may follow.
        let rest = rest
            .strip_prefix('/')
            .map(|sub| sub.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest);
        let value = rest.trim_start_matches([':', '=', ' ']);
        starts
            && rest.len() > value.len()
            && value.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
    });
    if found {
        step(facts);
    }
}

#[cfg(test)]
mod progress_line_tests;
#[cfg(test)]
mod s39a_tests;
