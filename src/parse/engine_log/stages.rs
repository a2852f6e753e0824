//! Stage lines of training frameworks and apps, read from their sources (each handler names the
//! project, file, function and version read): the evaluation passes of a training job, its
//! checkpoint saves, the start of its loop, its distributed set-up, and llama.cpp's warm-up.
//! A training job's evaluation is an `Evaluation` event (the model runs without a backward
//! pass: inference), a save a `CheckpointSave` (no GPU stage: the phase is not shown).

use super::common::has;
use super::training::step;
use super::{rule, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};

pub(super) const RULES: &[Rule] = &[
    rule("Running Evaluation *****", trainer_evaluation),
    rule("Running Prediction *****", trainer_evaluation),
    rule("Saving model checkpoint to ", checkpoint_save),
    rule("Saving checkpoint to ", checkpoint_save),
    rule("is about to be saved!", deepspeed_save),
    rule("saving checkpoint: ", checkpoint_save),
    rule("Start saving model checkpoint", checkpoint_save),
    rule("Executing training step for epoch ", burn_epoch_step),
    rule("Executing validation step for epoch ", burn_epoch_step),
    rule(", saving model to ", lightning_checkpoint),
    rule("Saving checkpoint at ", openmmlab_checkpoint),
    rule(", skipped=", deepspeed_step),
    rule("Starting training from iteration ", training_start),
    rule("Start inference on ", detectron2_inference),
    rule("Epoch(train)", openmmlab_train),
    rule("Iter(train)", openmmlab_train),
    rule("Epoch(val)", openmmlab_evaluation),
    rule("Epoch(test)", openmmlab_evaluation),
    rule("Iter(val)", openmmlab_evaluation),
    rule("Iter(test)", openmmlab_evaluation),
    rule("Epoch [", mmcv_train),
    rule("Starting training for ", yolo_training_start),
    rule(".pt...", ultralytics_final_validation),
    rule(": GLOBAL_RANK: ", lightning_distributed),
    rule("Distributed environment: ", accelerate_state),
    rule("warming up the model", llama_warmup),
    rule("Starting training...", training_start_dots),
    rule("Start training", training_announced),
    rule("start training", training_announced),
    rule("Starting Training", training_announced),
    rule("Running training", training_announced),
    rule("running training", training_announced),
    rule("Training...", training_announced),
    rule("training...", training_announced),
    rule("Training started", training_announced),
    rule("training started", training_announced),
    rule("ready to train", training_announced),
    rule("Ready to train", training_announced),
    rule("evaluating on ", evaluation_announced),
    rule("Evaluating on ", evaluation_announced),
    rule("validating on ", evaluation_announced),
    rule("Validating on ", evaluation_announced),
    rule("[VAL]", validation_tag),
    rule("Loading model modules", tabby_modules),
    rule("Loading draft modules", tabby_modules),
    rule("Modules |", tabby_modules),
    rule("Loading with autosplit", tabby_load_lines),
    rule("Loading with tensor parallel", tabby_load_lines),
    rule("Loading with a manual GPU split", tabby_load_lines),
    rule("Model successfully loaded.", tabby_load_lines),
    rule("OP_REQUIRES failed at ", tensorflow_kernel),
    rule("[Memory Management] Target", forge_model_moves),
    rule("Moving model(s) has taken ", forge_model_moves),
    // TensorFlow's eager footer: a traced function's name or an op's.
    rule("[Op:", eager_op),
    // The same traced function named by a graph or XLA compilation error (`Resource exhausted:
    // {{function_node __inference_train_function_453721}} Compilation failure: Ran out of
    // memory in memory space hbm.`, TPU and GPU alike).
    rule("{{function_node __inference_", keras_function_op),
    rule("Generation failed", stage_failed),
    rule("generation failed", stage_failed),
    rule("Inference failed", stage_failed),
    rule("inference failed", stage_failed),
    rule("Prediction failed", stage_failed),
    rule("prediction failed", stage_failed),
    rule("Error processing image", stage_failed),
    rule("Error processing frame", stage_failed),
    rule(
        "Enabling checkpointing to reduce memory usage",
        unet_training_retry,
    ),
];

/// Pytorch-UNet's `train.py` (milesial/Pytorch-UNet, 2022+): `train_model` runs in `try:`, and
/// `except torch.cuda.OutOfMemoryError:` logs `Detected OutOfMemoryError! Enabling checkpointing
/// to reduce memory usage, but this slows down training. …` and trains again: the failure came
/// from the training.
fn unet_training_retry(text: &str, facts: &mut LineFacts) {
    if text.contains("Detected OutOfMemoryError") {
        facts.late_phase = Some(Phase::TrainingStep);
    }
}

/// `[Op:…]`, TensorFlow's eager error footer: a traced function ([`keras_function_op`]) or an
/// op ([`eager_backward_op`]).
fn eager_op(text: &str, facts: &mut LineFacts) {
    if text.contains("[Op:__inference_") {
        keras_function_op(text, facts);
    } else {
        eager_backward_op(text, facts);
    }
}

/// TensorFlow's eager error footer names the op that failed (`tensorflow/python/eager/
/// execute.py` `quick_execute` raises with `[Op:{op_name}]`): an op of the backward pass (a
/// gradient kernel, `Conv2DBackpropInput`, `Conv2DBackpropFilter`, `MaxPoolGrad`,
/// `FusedBatchNormGradV3`, as `tf.GradientTape.gradient` runs them) or an optimizer's update
/// (`ResourceApplyAdam`): a training step.
fn eager_backward_op(text: &str, facts: &mut LineFacts) {
    let Some(at) = text.find("[Op:") else {
        return;
    };
    let op = text[at + "[Op:".len()..]
        .split(']')
        .next()
        .unwrap_or_default();
    if !op.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return;
    }
    let gradient = op.contains("Backprop")
        || op.ends_with("Grad")
        || op.ends_with("GradV2")
        || op.ends_with("GradV3");
    if gradient || op.starts_with("ResourceApply") {
        facts.late_phase = Some(Phase::TrainingStep);
    }
}

/// TensorFlow's eager error footer names the traced function whose op failed (`0 derived
/// errors ignored. [Op:__inference_train_function_1394299]`; `tensorflow/python/eager/
/// execute.py` `quick_execute` raises with `[Op:{op_name}]`, and `tf.function` names a traced
/// function's graph `__inference_<name>_<uid>`). Keras 2.x/3.x `Model.fit` traces its step as
/// `train_function`, `evaluate` as `test_function` and `predict` as `predict_function`
/// (`keras/engine/training.py` `make_train_function`/`make_test_function`/
/// `make_predict_function`; Keras 3 names all three `one_step_on_iterator`, which says
/// nothing): under the failure, the training step or a prediction pass was running.
fn keras_function_op(text: &str, facts: &mut LineFacts) {
    let Some((at, head)) = ["[Op:__inference_", "{{function_node __inference_"]
        .into_iter()
        .find_map(|head| text.find(head).map(|at| (at, head)))
    else {
        return;
    };
    let name = &text[at + head.len()..];
    let name = name.split([']', '}']).next().unwrap_or_default();
    let name = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_');
    facts.late_phase = match name {
        "train_function" => Some(Phase::TrainingStep),
        "predict_function" | "test_function" => Some(Phase::Inference),
        _ => None,
    };
}

/// An app's own line reporting the stage that failed, printed under the error it caught (`Job
/// job_17…: Generation failed Error: No audio files generated`, `ERROR inference failed for
/// request 12`, `Prediction failed: CUDA out of memory`): under a failure, that stage was
/// running. The stage's noun opens the message (after the logger's prefix or the job's name
/// and a colon), so a sentence that only mentions it (`if generation failed, retry`) is not
/// read.
fn stage_failed(text: &str, facts: &mut LineFacts) {
    let lower = text.to_ascii_lowercase();
    // (Also an app's loop over its inputs reporting the one that failed: `ERROR - Error
    // processing image 27: CUDA out of memory.`, `Error processing frame 12: …`.)
    let Some(at) = [
        "generation failed",
        "inference failed",
        "prediction failed",
        "error processing image",
        "error processing frame",
    ]
    .iter()
    .filter_map(|phrase| lower.find(phrase))
    .min() else {
        return;
    };
    let before = lower[..at].trim_end();
    let opens = before.is_empty()
        || before.ends_with([':', ']', '-', '|', '!'])
        || ["error", "info", "warning"]
            .iter()
            .any(|level| before.ends_with(level));
    if opens {
        facts.late_phase = Some(Phase::Inference);
    }
}

fn event(facts: &mut LineFacts, kind: EventKind, phase: Phase) {
    facts.event(kind, phase, EventFigures::default());
}

/// An evaluation pass of a training job is running (the model's forward without a backward).
pub(super) fn evaluation(facts: &mut LineFacts) {
    if !facts.events.iter().any(|e| e.kind == EventKind::Evaluation) {
        event(facts, EventKind::Evaluation, Phase::Inference);
    }
}

fn save(facts: &mut LineFacts) {
    event(facts, EventKind::CheckpointSave, Phase::Unknown);
}

/// transformers `Trainer.evaluation_loop` / `prediction_loop` (`trainer.py`, 4.x:
/// `logger.info(f"\n***** Running {description} *****")` with `Evaluation` or `Prediction`),
/// run by `evaluate()` (also from `_maybe_log_save_evaluate` inside `train()`) and `predict()`.
fn trainer_evaluation(text: &str, facts: &mut LineFacts) {
    if has(text, "***** Running ") {
        evaluation(facts);
    }
}

/// A program's own line announcing an evaluation it starts (`[rank0] evaluating on 131072
/// validation rows`, `INFO epoch 0: validating on 16 full-resolution scans`, `Evaluating on the
/// dev split`): a progressive verb opening the message after the logger's prefix (a
/// timestamp, a level, a logger's or rank's tag, the loop's counter) is written before the work
/// it names (`analyze::phase::stage_line`, session 17). An evaluation event, so that a
/// training's last step line before it no longer holds the stage open.
fn evaluation_announced(text: &str, facts: &mut LineFacts) {
    if text.starts_with([' ', '\t']) {
        return;
    }
    let finished: &[&str] = &["done", "finished", "complete", "took", "failed", "error"];
    if opens_the_message(text, &["evaluating on ", "validating on "], finished) {
        evaluation(facts);
    }
}

/// Whether one of `words` opens the message of `text` (nothing before it but the logger's
/// prefix: a timestamp, a level, a tag) and what follows it, at most 160 bytes, holds none of
/// `ended` (the pass reported done, or its result).
fn opens_the_message(text: &str, words: &[&str], ended: &[&str]) -> bool {
    let lower = text.to_ascii_lowercase();
    let Some(at) = words.iter().filter_map(|word| lower.find(word)).min() else {
        return false;
    };
    let before = lower[..at].trim_end();
    let prefixed = before.is_empty()
        || before.ends_with([':', ']', '-', '|'])
        || ["info", "debug"]
            .iter()
            .any(|level| before.ends_with(level));
    let after = &lower[at..];
    prefixed && !ended.iter().any(|word| after.contains(word)) && after.len() <= 160
}

/// A program's own line tagged as its validation's (`[VAL] rendering view 0 (800x800)`), as
/// hand-written loops tag their phases beside `[TRAIN]`: the evaluation runs, unless the line
/// reports it done or its result (`[VAL] loss 0.31`, `[VAL] done in 3.2 s`).
fn validation_tag(text: &str, facts: &mut LineFacts) {
    let ended: &[&str] = &[
        "done", "finished", "complete", "took", "failed", "error", "loss", "acc", "psnr", "score",
        "metric", "=",
    ];
    if opens_the_message(text, &["[val]"], ended) {
        evaluation(facts);
    }
}

/// Checkpoint saves that print where they write: transformers `Trainer._save` (`trainer.py`,
/// 4.x: `Saving model checkpoint to {output_dir}`, from `_save_checkpoint` / `save_model`),
/// fvcore's `Checkpointer.save` as detectron2 runs it (`fvcore/common/checkpoint.py`: `Saving
/// checkpoint to {save_file}`), kohya sd-scripts (`train_network.py` `save_model`: `saving
/// checkpoint: {ckpt_file}`).
fn checkpoint_save(text: &str, facts: &mut LineFacts) {
    let kohya = text
        .split("saving checkpoint: ")
        .nth(1)
        .is_some_and(|rest| !rest.trim().is_empty() && !rest.contains(' '));
    // ColossalAI's Colossal-LLaMA-2 `train.py`: `coordinator.print_on_master("\nStart saving
    // model checkpoint with running states")` before `save_checkpoint` (session 47).
    let colossal = has(text, "Start saving model checkpoint");
    if has(text, "Saving model checkpoint to ")
        || has(text, "Saving checkpoint to ")
        || kohya
        || colossal
    {
        save(facts);
    }
}

/// burn's learner (`burn-train/src/learner/epoch.rs`, 0.9–0.16: `log::info!("Executing training
/// step for epoch {}", …)` in `TrainEpoch::run`, `"Executing validation step for epoch {}"` in
/// `ValidEpoch::run`), logged by its `tracing` subscriber as `INFO burn_train::learner::epoch:
/// Executing training step for epoch 1`: the epoch's steps run next (a validation pass is the
/// model run without a backward pass).
fn burn_epoch_step(text: &str, facts: &mut LineFacts) {
    let numbered = |words: &str| {
        text.split(words)
            .nth(1)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    };
    if numbered("Executing training step for epoch ") {
        step(facts);
    } else if numbered("Executing validation step for epoch ") {
        evaluation(facts);
    }
}

/// DeepSpeed's torch checkpoint engine (`deepspeed/runtime/checkpoint_engine/
/// torch_checkpoint_engine.py` `create`, 0.9–0.16: `[Torch] Checkpoint {tag} is about to be
/// saved!`), from `DeepSpeedEngine.save_checkpoint`.
fn deepspeed_save(text: &str, facts: &mut LineFacts) {
    if has(text, "Checkpoint ") {
        save(facts);
    }
}

/// Lightning's `ModelCheckpoint` with `verbose=True` (`callbacks/model_checkpoint.py`
/// `_update_best_and_save`, 1.x–2.x: `Epoch 3, global step 400: 'val_loss' reached 0.51 (best
/// 0.51), saving model to '/ckpt/epoch=3.ckpt' as top 1`).
fn lightning_checkpoint(text: &str, facts: &mut LineFacts) {
    if has(text, "global step ") && has(text, ", saving model to '") {
        save(facts);
    }
}

/// MMEngine's `CheckpointHook._save_checkpoint` (`mmengine/hooks/checkpoint_hook.py`, 0.x:
/// `Saving checkpoint at 12 epochs` / `… iterations`); mmcv 1.x's hook prints the same.
fn openmmlab_checkpoint(text: &str, facts: &mut LineFacts) {
    let Some(rest) = text.split("Saving checkpoint at ").nth(1) else {
        return;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let unit = rest[digits..].trim_start();
    if digits > 0 && (unit.starts_with("epochs") || unit.starts_with("iterations")) {
        save(facts);
    }
}

/// DeepSpeed's step report (`deepspeed/runtime/engine.py` `DeepSpeedEngine._take_model_step` →
/// `report_progress`, 0.5–0.16: `[Rank 0] step=10, skipped=0, lr=[0.0001], mom=[…]`): a
/// training step ran.
fn deepspeed_step(text: &str, facts: &mut LineFacts) {
    let Some(at) = text.find("step=") else {
        return;
    };
    let rest = &text[at + "step=".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && rest[digits..].starts_with(", skipped=") && has(rest, "lr=") {
        step(facts);
    }
}

/// detectron2's `TrainerBase.train` (`detectron2/engine/train_loop.py`, 0.1–0.6: `Starting
/// training from iteration {start_iter}`): the loop starts.
fn training_start(text: &str, facts: &mut LineFacts) {
    let rest = text
        .split("Starting training from iteration ")
        .nth(1)
        .unwrap_or("");
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        step(facts);
    }
}

/// detectron2's `inference_on_dataset` (`detectron2/evaluation/evaluator.py`, 0.1–0.6: `Start
/// inference on {N} batches`; earlier `… images`), run by `DefaultTrainer.test` (also from the
/// `EvalHook` inside training).
fn detectron2_inference(text: &str, facts: &mut LineFacts) {
    let Some(rest) = text.split("Start inference on ").nth(1) else {
        return;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let unit = rest[digits..].trim_start();
    if digits > 0 && (unit.starts_with("batches") || unit.starts_with("images")) {
        evaluation(facts);
    }
}

/// MMEngine's `LogProcessor.get_log_after_iter` (`mmengine/runner/log_processor.py`, 0.x):
/// `Epoch(train)  [1][ 50/500]  lr: … loss: …` by epoch, `Iter(train) [ 50/1000]` by
/// iteration; `Epoch(val)`, `Epoch(test)`, `Iter(val)`, `Iter(test)` for the evaluation loops
/// (mmcv 1.x's `TextLoggerHook` prints `Epoch(val) [1][500]` too).
fn openmmlab_train(text: &str, facts: &mut LineFacts) {
    if openmmlab_counter(text, "(train)") {
        step(facts);
    }
}

fn openmmlab_evaluation(text: &str, facts: &mut LineFacts) {
    if openmmlab_counter(text, "(val)") || openmmlab_counter(text, "(test)") {
        evaluation(facts);
    }
}

/// `(mode)` followed by a bracketed counter (`[1][ 50/500]`, `[ 50/1000]`, `[1][500]`).
fn openmmlab_counter(text: &str, mode: &str) -> bool {
    text.split(mode).skip(1).any(|rest| {
        let rest = rest.trim_start();
        rest.strip_prefix('[')
            .is_some_and(|inner| inner.trim_start().starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// mmcv 1.x's `TextLoggerHook._log_info` (`mmcv/runner/hooks/logger/text.py`): a training
/// iteration reads `Epoch [3][50/500]\tlr: 1.000e-02, eta: …, loss: 0.6`.
fn mmcv_train(text: &str, facts: &mut LineFacts) {
    let Some(rest) = text.split("Epoch [").nth(1) else {
        return;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(counter) = rest[digits..].strip_prefix("][") else {
        return;
    };
    let done = counter.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && done > 0 && counter[done..].starts_with('/') {
        step(facts);
    }
}

/// ultralytics' `BaseTrainer._do_train` (`ultralytics/engine/trainer.py`, 8.x: `Starting
/// training for {epochs} epochs...`) and YOLOv5's `train.py` (`Starting training for {epochs}
/// epochs...`): the epochs start.
fn yolo_training_start(text: &str, facts: &mut LineFacts) {
    let rest = text.split("Starting training for ").nth(1).unwrap_or("");
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let epochs = digits > 0 && rest[digits..].trim_start().starts_with("epochs");
    if epochs || rest.trim_start().starts_with("hours") {
        step(facts);
    }
}

/// ultralytics' `BaseTrainer.final_eval` (`ultralytics/engine/trainer.py`, 8.x: `Validating
/// runs/detect/train/weights/best.pt...`): the best checkpoint is evaluated after training.
fn ultralytics_final_validation(text: &str, facts: &mut LineFacts) {
    if text.trim_start().starts_with("Validating ") && text.trim_end().ends_with(".pt...") {
        evaluation(facts);
    }
}

/// Lightning setting up its process group (1.x `plugins/training_type/ddp.py`
/// `init_ddp_connection`: `initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4`; 2.x
/// `fabric/utilities/distributed.py` `_init_dist_connection`: `Initializing distributed:
/// GLOBAL_RANK: 0, MEMBER: 1/4`): start-up, before any step.
fn lightning_distributed(text: &str, facts: &mut LineFacts) {
    let lower = text.to_ascii_lowercase();
    let setup = has(&lower, "initializing ddp: ") || has(&lower, "initializing distributed: ");
    if setup && has(text, "MEMBER: ") {
        event(facts, EventKind::DeviceInit, Phase::Startup);
    }
}

/// accelerate's `AcceleratorState.__repr__` (`accelerate/state.py`, 0.x–1.x: `Distributed
/// environment: MULTI_GPU  Backend: nccl`), which training scripts log once the `Accelerator`
/// is built (diffusers' and accelerate's examples: `logger.info(accelerator.state)`).
fn accelerate_state(text: &str, facts: &mut LineFacts) {
    let rest = text.split("Distributed environment: ").nth(1).unwrap_or("");
    let kind = rest.split_whitespace().next().unwrap_or("");
    if !kind.is_empty()
        && kind
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit())
    {
        event(facts, EventKind::DeviceInit, Phase::Startup);
    }
}

/// llama.cpp's warm-up after creating the context (`common/common.cpp`
/// `common_init_from_params`, earlier `llama_init_from_gpt_params`: `warming up the model with
/// an empty run - please wait ... (--no-warmup to disable)`): one decode through the compute
/// buffers.
fn llama_warmup(text: &str, facts: &mut LineFacts) {
    if has(text, "warming up the model with an empty run") {
        event(facts, EventKind::ProfilingStart, Phase::Profiling);
    }
}

/// A training loop announcing its start with these words: MMF (`mmf/trainers/core/
/// training_loop.py` `TrainerTrainingLoopMixin.training_loop`: `Starting training...`) and
/// hand-written loops alike; the batches run next.
fn training_start_dots(text: &str, facts: &mut LineFacts) {
    let rest = text.split("Starting training...").nth(1).unwrap_or("");
    if rest.trim().is_empty() {
        step(facts);
    }
}

/// The words a training script prints, alone on their line, right before its loop runs the first
/// batch: `Start training` (maskrcnn-benchmark `engine/trainer.py` `do_train`: `logger.info("Start
/// training")`; torchvision's `references/*/train.py`), `Start training from …`, `Starting
/// Training` in a banner (MindSpore's model-zoo `train.py`: `============== Starting Training
/// ==============`), `Running training` (FaceNet `train_softmax.py`), `Training...`, `Training
/// started.`, `ready to train!` (NVIDIA DOPE `train.py`). Only the words after a log prefix or a
/// banner's `=` / `*` / `#` / `-`, and nothing after them but such marks (or `from …` after
/// `Start training`): a sentence that says them (`when I start training it fails`) is the
/// reporter's, read by the prose rules. transformers' `***** Running training *****` is its
/// trainer's own rule (`training.rs`).
fn training_announced(text: &str, facts: &mut LineFacts) {
    const PHRASES: &[&str] = &[
        "start training",
        "starting training",
        "running training",
        "training...",
        "training started",
        "ready to train",
    ];
    let decoration = |c: char| matches!(c, '=' | '*' | '#' | '-' | '.' | '!' | ':') || c == ' ';
    if text.contains("***** Running training *****") {
        return;
    }
    let lower = text.to_ascii_lowercase();
    let announced = PHRASES.iter().any(|phrase| {
        lower.match_indices(phrase).any(|(at, _)| {
            let head = &text[..at];
            let tail = lower[at + phrase.len()..].trim_matches(decoration);
            let led = super::is_log_prefix(head) || head.chars().all(decoration);
            let from = *phrase == "start training" && tail.starts_with("from");
            led && (tail.is_empty() || from)
        })
    });
    if announced {
        step(facts);
    }
}

/// TabbyAPI's ExLlamaV2 / ExLlamaV3 back-ends (`backends/exllamav2/model.py` and
/// `backends/exllamav3/model.py` `load_model_sync`, 0.0.x–2026) log how they place the layers
/// before loading them: `Loading with autosplit` (the cache is created first, lazily, and filled
/// as the layers go on the GPUs), `Loading with tensor parallel`, `Loading with a manual GPU
/// split (or a one GPU setup)`; `load_gen` logs `Model successfully loaded.` once the layers, the
/// cache, the warm-up forward and the generator are done. Each phrase ends the logger's line.
fn tabby_load_lines(text: &str, facts: &mut LineFacts) {
    let line = text.trim_end();
    let placing = [
        "Loading with autosplit",
        "Loading with tensor parallel",
        "Loading with a manual GPU split (or a one GPU setup)",
    ]
    .iter()
    .any(|phrase| line.ends_with(phrase));
    if placing {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
    } else if line.ends_with("Model successfully loaded.") {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    }
}

/// Stable Diffusion WebUI Forge moving models onto the GPU (lllyasviel/stable-diffusion-webui-
/// forge 2024–2025 `backend/memory_management.py` `load_models_gpu`): for each model it prints
/// `[Memory Management] Target: KModel, Free GPU: … MB, Model Require: … MB, Previously Loaded:
/// … MB, Inference Require: … MB, Remaining: … MB, ` with no newline, then loads it
/// (`loaded_model.model_load`), and once all are on the GPU prints `Moving model(s) has taken
/// N seconds`, usually on the same console line. A failure printed after the target line
/// without that ending came while the weights went to the GPU.
fn forge_model_moves(text: &str, facts: &mut LineFacts) {
    if has(text, "Moving model(s) has taken ") && has(text, " seconds") {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    } else if has(text, "[Memory Management] Target: ") && has(text, ", Model Require: ") {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
    }
}

/// TabbyAPI's module loading bar: 0.0.x `main.py` (`IncrementalBar("Modules", max=…)` of the
/// `progress` package: `Modules |████████| 163/163`), later `common/model.py` `load_model_gen`
/// (a rich bar `Loading model modules ━━━━ 100% 163/163`, `Loading draft modules` for the
/// draft model). Complete (`N/N`), the weights are on the GPU and TabbyAPI's warm-up forward
/// comes next; before that, the weights are loading.
fn tabby_modules(text: &str, facts: &mut LineFacts) {
    let trimmed = text.trim_start();
    let own = trimmed.starts_with("Modules |")
        || trimmed.contains("Loading model modules")
        || trimmed.contains("Loading draft modules");
    let counter = text.split_whitespace().rev().find_map(|token| {
        let (done, total) = token.split_once('/')?;
        let done = done.trim_start_matches('|').parse::<u64>().ok()?;
        let total = total.parse::<u64>().ok()?;
        Some((done, total))
    });
    let Some((done, total)) = counter.filter(|_| own) else {
        return;
    };
    if done == total && total > 0 {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    } else {
        event(facts, EventKind::WeightsLoadProgress, Phase::WeightsLoad);
    }
}

/// A TensorFlow kernel failing its allocation (`tensorflow/core/framework/op_kernel.cc`:
/// `OP_REQUIRES failed at conv_grad_input_ops.cc:408 : RESOURCE_EXHAUSTED: OOM when allocating
/// tensor …`) names the kernel's source file. The backward kernels have files of their own
/// (`tensorflow/core/kernels/`: `conv_grad_input_ops.cc`, `conv_grad_filter_ops.cc`,
/// `conv_grad_ops_3d.cc`, `depthwise_conv_grad_op.cc`, …) and the optimizers' update kernels
/// live in `training_ops.cc` (`ResourceApplyAdam`, …): either is a training step.
fn tensorflow_kernel(text: &str, facts: &mut LineFacts) {
    let Some(rest) = text.split("OP_REQUIRES failed at ").nth(1) else {
        return;
    };
    let file = rest.split(':').next().unwrap_or("");
    let file = file.rsplit('/').next().unwrap_or(file);
    if !file.ends_with(".cc") {
        return;
    }
    let stem = file.trim_end_matches(".cc");
    let backward = stem.contains("_grad_") || stem.ends_with("_grad") || stem.ends_with("_grad_op");
    if backward || stem == "training_ops" {
        facts.late_phase = Some(Phase::TrainingStep);
    }
}

/// Progress bars of training frameworks whose description names the stage (called from the
/// tqdm bar handler with the text before the bar's percentage); returns whether it was one:
/// * catalyst's `TqdmCallback` (`catalyst/callbacks/tqdm.py` / `core/callbacks/verbose.py`,
///   20.x–22.x: `desc=f"{epoch}/{num_epochs} * Epoch ({loader_key})"`): a loader whose key
///   starts with `train` trains (`runner.is_train_loader`), any other evaluates;
/// * super-gradients' `Trainer` (`super_gradients/training/sg_trainer/sg_trainer.py`, 3.x:
///   `Train epoch {epoch}`, `Validating epoch {epoch}`, `Testing`);
/// * kohya sd-scripts (`train_network.py`, `train_db.py`: `tqdm(…, desc="steps")`).
pub(super) fn stage_bar(description: &str, facts: &mut LineFacts) -> bool {
    if let Some(rest) = description.split("* Epoch (").nth(1) {
        let key = rest.split(')').next().unwrap_or("");
        if !key.is_empty() {
            if key.starts_with("train") {
                step(facts);
            } else {
                evaluation(facts);
                facts.late_phase = Some(Phase::Inference);
            }
            return true;
        }
    }
    let description = description.trim_start();
    let numbered = |prefix: &str| {
        description
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    };
    if numbered("Train epoch ") || description.starts_with("steps: ") {
        step(facts);
        return true;
    }
    if numbered("Validating epoch ") || numbered("Validation epoch ") {
        evaluation(facts);
        facts.late_phase = Some(Phase::Inference);
        return true;
    }
    // A training's preview images made between its steps: sd_dreambooth_extension's `tqdm(…,
    // desc="Generating Samples")` (`dreambooth/train_dreambooth.py`), redrawn over the training
    // bar whose postfix (`loss=…`) stays on the line. (Not `Generating train split`, a
    // dataset's preparation by HF datasets.)
    if [
        "Generating Samples",
        "Generating samples",
        "Generating images",
    ]
    .iter()
    .any(|desc| description.starts_with(desc))
    {
        evaluation(facts);
        facts.late_phase = Some(Phase::Inference);
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::{event_kinds as kinds, parse_line_scan};
    use crate::model::explain::{EventKind, Phase};

    #[test]
    fn evaluation_passes_of_training_jobs() {
        for line in [
            "[INFO|trainer.py:3512] 2024-05-01 >> ***** Running Evaluation *****",
            "***** Running Prediction *****",
            "[06/09 11:05:25 d2.evaluation.evaluator]: Start inference on 500 batches",
            "2023/05/01 10:00:00 - mmengine - INFO - Epoch(val)  [1][ 50/500]    eta: 0:01:00",
            "2023/05/01 10:00:00 - mmengine - INFO - Iter(test) [ 20/100]",
            "Validating runs/detect/train/weights/best.pt...",
            // A program's own line announcing its evaluation (session 18).
            "[rank0] evaluating on 131072 validation rows",
            "2026-12-02 04:19:42,778 INFO     epoch 0: validating on 16 scans (4096x4096)",
            "Evaluating on the dev split (1200 examples)",
        ] {
            assert_eq!(kinds(line), vec![EventKind::Evaluation], "{line}");
        }
        for line in [
            "Start inference on the server",
            "Epoch(val) was skipped",
            "Validating the config.pt... file",
            "Running Evaluation ***** on a slide",
            // A sentence, a result, indented code.
            "I keep evaluating on the test set and it fails",
            "[rank0] evaluating on 4096 rows done in 3.1 s",
            "    evaluating on = True",
        ] {
            assert!(!kinds(line).contains(&EventKind::Evaluation), "{line}");
        }
    }

    #[test]
    fn tensorflow_footers_name_the_keras_function() {
        let late = |line: &str| parse_line_scan(line).late_phase;
        assert_eq!(
            late("0 derived errors ignored. [Op:__inference_train_function_1394299]"),
            Some(Phase::TrainingStep)
        );
        assert_eq!(
            late(" [[{{node dense/MatMul}}]] [Op:__inference_predict_function_8812]"),
            Some(Phase::Inference)
        );
        assert_eq!(
            late("[Op:__inference_test_function_77]"),
            Some(Phase::Inference)
        );
        // Keras 3's step functions and a user's own tf.function name no stage.
        assert_eq!(late("[Op:__inference_one_step_on_iterator_4811]"), None);
        assert_eq!(late("[Op:__inference_my_step_12]"), None);
    }

    #[test]
    fn an_apps_line_reporting_its_stage_failed() {
        let late = |line: &str| parse_line_scan(line).late_phase;
        for line in [
            "Job job_1777397675540_3kfy6mq: Generation failed Error: No audio files generated",
            "2026-01-02 10:00:00 ERROR inference failed for request 12",
            "[server] Prediction failed: CUDA out of memory",
        ] {
            assert_eq!(late(line), Some(Phase::Inference), "{line}");
        }
        for line in [
            "if generation failed, the job is retried",
            "The model's generation failed after 3 tries, why?",
        ] {
            assert_eq!(late(line), None, "{line}");
        }
    }

    #[test]
    fn checkpoint_saves() {
        for line in [
            "[INFO|trainer.py:3067] 2024-05-01 >> Saving model checkpoint to out/checkpoint-500",
            "[06/09 11:05:25 fvcore.common.checkpoint]: Saving checkpoint to ./output/model_0004999.pth",
            "[2024-01-01 10:00:00,000] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Checkpoint global_step100 is about to be saved!",
            "saving checkpoint: /out/last-000002.safetensors",
            "Epoch 3, global step 400: 'val_loss' reached 0.51000 (best 0.51000), saving model to '/c/epoch=3.ckpt' as top 1",
            "2023/05/01 10:00:00 - mmengine - INFO - Saving checkpoint at 12 epochs",
        ] {
            assert_eq!(kinds(line), vec![EventKind::CheckpointSave], "{line}");
        }
        for line in [
            "saving checkpoint: failed because the disk is full",
            "Saving checkpoint at the end",
            "The file is about to be saved!",
        ] {
            assert!(kinds(line).is_empty(), "{line}");
        }
    }

    #[test]
    fn training_starts_and_steps() {
        for line in [
            "[2023-07-04 17:31:27,755] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]",
            "[06/09 11:05:25 d2.engine.train_loop]: Starting training from iteration 0",
            "2023/05/01 10:00:00 - mmengine - INFO - Epoch(train)  [1][ 50/500]  lr: 1.0e-02  loss: 0.61",
            "2023/05/01 10:00:00 - mmengine - INFO - Iter(train) [  50/1000]  lr: 1.0e-02",
            "2021-03-01 10:00:00,000 - mmdet - INFO - Epoch [3][50/500]\tlr: 1.000e-02, eta: 1:00:00",
            "Starting training for 300 epochs...",
        ] {
            assert_eq!(kinds(line), vec![EventKind::TrainingStep], "{line}");
        }
        for line in [
            "step=abc, skipped=0",
            "Starting training from iteration counts",
            "Epoch [3] done",
            "Starting training for a while",
        ] {
            assert!(kinds(line).is_empty(), "{line}");
        }
    }

    #[test]
    fn a_training_start_announced_alone() {
        for line in [
            "2019-12-11 05:25:21,147 maskrcnn_benchmark.trainer INFO: Start training",
            "============== Starting Training ==============",
            "Running training",
            "Training...",
            "Training started.",
            "ready to train!",
            "2020-01-16 16:31:19,461 - root - INFO - Start training from",
        ] {
            assert_eq!(kinds(line), vec![EventKind::TrainingStep], "{line}");
        }
        for line in [
            "When I start training the model it fails",
            "I restart training",
            "Start training: the config is below",
            "Training... not yet",
            "Epoch 1 Training...",
            "ready to training data",
        ] {
            assert!(kinds(line).is_empty(), "{line}");
        }
    }

    #[test]
    fn set_up_and_warm_up() {
        for line in [
            "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4",
            "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4",
            "05/01/2024 10:00:00 - INFO - __main__ - Distributed environment: MULTI_GPU  Backend: nccl",
        ] {
            assert_eq!(kinds(line), vec![EventKind::DeviceInit], "{line}");
        }
        assert_eq!(
            kinds("common_init_from_params: warming up the model with an empty run - please wait ... (--no-warmup to disable)"),
            vec![EventKind::ProfilingStart]
        );
        assert!(kinds("Distributed environment: unknown to me").is_empty());
        assert!(kinds("GLOBAL_RANK: 0").is_empty());
    }

    #[test]
    fn training_loop_words_and_tensorflow_backward_kernels() {
        assert_eq!(
            kinds("2020-08-03T10:20:25 | mmf.trainers.core.training_loop: Starting training..."),
            vec![EventKind::TrainingStep]
        );
        assert!(kinds("Starting training... failed, see below").is_empty());
        assert_eq!(
            kinds("Modules |████████████████████████████████| 163/163"),
            vec![EventKind::WeightsLoaded]
        );
        assert_eq!(
            kinds("Loading model modules ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━  41% 67/163 0:00:12"),
            vec![EventKind::WeightsLoadProgress]
        );
        assert!(kinds("Loading model modules from disk").is_empty());
        for line in [
            "INFO:     Loading with autosplit",
            "2026-01-02 10:00:00.000 INFO:     Loading with tensor parallel",
            "INFO:     Loading with a manual GPU split (or a one GPU setup)",
        ] {
            assert_eq!(kinds(line), vec![EventKind::WeightsLoadStart], "{line}");
        }
        assert_eq!(
            kinds("INFO:     Model successfully loaded."),
            vec![EventKind::WeightsLoaded]
        );
        assert!(kinds("Loading with autosplit fails on my two GPUs").is_empty());
        assert!(kinds("Model successfully loaded. Then the first request failed").is_empty());
        assert!(kinds("see the Modules | table 3/4").is_empty());
        // Forge's model moves: the target line opens a load; its ending closes it.
        let target = "[Memory Management] Target: JointTextEncoder, Free GPU: 7011.20 MB, Model \
                      Require: 1559.68 MB, Previously Loaded: 0.00 MB, Inference Require: 1024.00 \
                      MB, Remaining: 4427.52 MB, ";
        assert_eq!(kinds(target), vec![EventKind::WeightsLoadStart]);
        assert_eq!(
            kinds(&format!("{target}Moving model(s) has taken 0.52 seconds")),
            vec![EventKind::WeightsLoaded]
        );
        assert_eq!(
            kinds("Moving model(s) has taken 3.10 seconds"),
            vec![EventKind::WeightsLoaded]
        );
        assert!(kinds("what does [Memory Management] Target mean in the console?").is_empty());
        let late = |line: &str| parse_line_scan(line).late_phase;
        for line in [
            "W tensorflow/core/framework/op_kernel.cc:1745] OP_REQUIRES failed at conv_grad_input_ops.cc:408 : RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[128,256,28,28]",
            "W tensorflow/core/framework/op_kernel.cc:1502] OP_REQUIRES failed at training_ops.cc:3271 : Resource exhausted: OOM",
            "OP_REQUIRES failed at depthwise_conv_grad_op.cc:12 : RESOURCE_EXHAUSTED",
        ] {
            assert_eq!(late(line), Some(Phase::TrainingStep), "{line}");
        }
        for line in [
            "OP_REQUIRES failed at conv_ops.cc:1068 : RESOURCE_EXHAUSTED: OOM",
            "OP_REQUIRES failed at gradient_checker.py:3 : x",
        ] {
            assert_eq!(late(line), None, "{line}");
        }
    }

    #[test]
    fn stage_bars_of_training_frameworks() {
        let facts = parse_line_scan(
            "0/10 * Epoch (valid):   3% 1/32 [00:01<00:46,  1.50s/it, _fps=21.531, loss=1.656]",
        );
        assert_eq!(facts.late_phase, Some(Phase::Inference));
        assert!(facts.events.iter().all(|e| e.kind == EventKind::Evaluation));
        assert_eq!(
            kinds("0/10 * Epoch (train): 100% 32/32 [00:41<00:00,  2.39s/it, _fps=11.486, loss=0.898]"),
            vec![EventKind::TrainingStep]
        );
        assert_eq!(
            kinds("Train epoch 0:   0%|          | 0/20 [00:00<?, ?it/s]"),
            vec![EventKind::TrainingStep]
        );
        assert_eq!(
            kinds("steps:  12%|█▏        | 120/1000 [01:00<07:20,  2.00it/s, avr_loss=0.1]"),
            vec![EventKind::TrainingStep]
        );
        assert_eq!(
            kinds("Validating epoch 3:  40%|████      | 8/20 [00:01<00:02,  5.00it/s]"),
            vec![EventKind::Evaluation]
        );
        assert_eq!(
            kinds("Validation DataLoader 0:  45%|████▌     | 9/20 [00:03<00:04,  2.61it/s]"),
            vec![EventKind::Evaluation]
        );
    }
}
