//! The frame rules of training frameworks: Lightning, DeepSpeed, Megatron/NeMo, torchtune,
//! ultralytics, detectron2, OpenMMLab, OpenNMT, RL trainers, and the bare names of training
//! scripts.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Move, Serve, Stage};
use crate::model::explain::Phase::{
    Inference as I, Profiling as P, Startup as S, TrainingStep as T, WeightsLoad as W,
};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_LIGHTNING: &[FrameRule] = &[
    // --- Lightning 2.x `loops/evaluation_loop.py` `_EvaluationLoop.run` → `_evaluation_step`,
    // `on_run_end` → `_on_evaluation_epoch_end` (the `on_validation_epoch_end` hooks); 1.x
    // `loops/dataloader/evaluation_loop.py` `EvaluationLoop.advance` and
    // `loops/epoch/evaluation_epoch_loop.py` `_evaluation_step`; `loops/prediction_loop.py`
    // `_PredictionLoop.run` → `_predict_step`; the fit loop's `run`s and the optimization loops
    // (`loops/optimization/automatic.py`, `manual.py`: `run`, `_training_step`,
    // `_optimizer_step`), which only train. Validation inside `fit` runs below
    // `training_epoch_loop.on_advance_end`, so its deeper frames decide. ---
    r("run", "loops/evaluation_loop", I, Serve, "lightning"),
    // --- Lightning 1.5–2.x `utilities/model_summary/model_summary.py` (`ModelSummary.
    // _forward_example_input`, called by the `ModelSummary` callback's `on_fit_start`): the
    // model run once on its `example_input_array` to record the layers' input and output
    // sizes, before the sanity check or any step: a dummy pass that sizes the model. ---
    r(
        "_forward_example_input",
        "model_summary",
        P,
        Stage,
        "lightning",
    ),
    // --- Lightning 2.1+ `trainer/call.py` `_call_configure_model` runs the LightningModule's
    // `configure_model` hook, where the model's layers are created (in the strategy's and
    // precision's init context: `Trainer._run`, before the loops): its weights made. ---
    r(
        "_call_configure_model",
        "lightning/pytorch/trainer/call.py",
        W,
        Stage,
        "lightning",
    ),
    r("on_run_end", "loops/evaluation_loop", I, Serve, "lightning"),
    r("_on_evaluation_epoch_end", "loops/", I, Serve, "lightning"),
    r("_evaluation_step", "loops/", I, Serve, "lightning"),
    r(
        "advance",
        "loops/dataloader/evaluation_loop",
        I,
        Serve,
        "lightning",
    ),
    r(
        "advance",
        "loops/epoch/evaluation_epoch_loop",
        I,
        Serve,
        "lightning",
    ),
    r("run", "loops/prediction_loop", I, Serve, "lightning"),
    r("_predict_step", "loops/", I, Serve, "lightning"),
    r("run", "loops/fit_loop", T, Serve, "lightning"),
    // Lightning 1.0–1.5 `trainer/trainer.py`, before the loops moved out: 1.2 `run_train`
    // (restore, sanity check, then the epochs), `run_evaluation`, `run_test`, `run_predict`,
    // `run_sanity_check`; 1.4–1.5 `_run_train`, `_run_evaluate`, `_run_predict`. The sanity
    // check runs inside `run_train`, so its deeper frame decides.
    r("run_train", "trainer/trainer.py", T, Serve, "lightning"),
    r("_run_train", "trainer/trainer.py", T, Serve, "lightning"),
    r(
        "run_evaluation",
        "trainer/trainer.py",
        I,
        Serve,
        "lightning",
    ),
    r("_run_evaluate", "trainer/trainer.py", I, Serve, "lightning"),
    r("run_test", "trainer/trainer.py", I, Serve, "lightning"),
    r("run_predict", "trainer/trainer.py", I, Serve, "lightning"),
    r("_run_predict", "trainer/trainer.py", I, Serve, "lightning"),
    r(
        "run_sanity_check",
        "trainer/trainer.py",
        I,
        Serve,
        "lightning",
    ),
    r("run", "loops/training_epoch_loop", T, Serve, "lightning"),
    r("", "loops/optimization/", T, Serve, "lightning"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_DEEPSPEED: &[FrameRule] = &[
    // --- DeepSpeed 0.1x: `__init__.py` `init_inference` → `inference/engine.py`
    // `InferenceEngine.__init__` (kernel injection, TP sharding, weights to the GPU);
    // `runtime/engine.py` `load_checkpoint` / `_load_checkpoint` (resume);
    // `runtime/pipe/engine.py` `PipelineEngine.train_batch` / `eval_batch`. ---
    r("init_inference", "deepspeed/", W, Stage, "deepspeed"),
    r(
        "__init__",
        "deepspeed/inference/engine.py",
        W,
        Stage,
        "deepspeed",
    ),
    r(
        "load_checkpoint",
        "deepspeed/runtime/engine.py",
        W,
        Stage,
        "deepspeed",
    ),
    r(
        "_load_checkpoint",
        "deepspeed/runtime/engine.py",
        W,
        Stage,
        "deepspeed",
    ),
    r(
        "train_batch",
        "deepspeed/runtime/pipe/",
        T,
        Serve,
        "deepspeed",
    ),
    r(
        "eval_batch",
        "deepspeed/runtime/pipe/",
        I,
        Serve,
        "deepspeed",
    ),
    // --- DeepSpeed-Inference's injected layers: 0.9+ `model_implementations/transformers/
    // ds_transformer.py` `DeepSpeedTransformerInference.forward` (0.5–0.8 `ops/transformer/
    // inference/transformer_inference.py`), which sizes its kernel workspace on the first call
    // (`allocate_workspace`): a forward of the inference engine. ---
    r(
        "forward",
        "deepspeed/model_implementations/",
        I,
        Serve,
        "deepspeed",
    ),
    r(
        "forward",
        "deepspeed/ops/transformer/inference/",
        I,
        Serve,
        "deepspeed",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_MEGATRON_TO_MMENGINE: &[FrameRule] = &[
    // --- Megatron-LM / NeMo: `megatron/training/training.py` (`megatron/training.py` before
    // core 0.5) `setup_model_and_optimizer`, `checkpointing.py` `load_checkpoint`,
    // `evaluate_and_print_results` (evaluation between iterations); NeMo
    // `core/classes/modelPT.py` `restore_from` and the ASR models' `transcribe`
    // (`collections/asr/`). ---
    r(
        "setup_model_and_optimizer",
        "megatron/",
        W,
        Stage,
        "megatron",
    ),
    r("load_checkpoint", "megatron/", W, Stage, "megatron"),
    // `megatron/core/transformer/spec_utils.py` `build_module` (core 0.4+): each module of the
    // model built from its spec, its parameters made on the device (`torch.empty` in the
    // layers' `__init__`, Transformer Engine's too): the weights created, as a load is.
    r(
        "build_module",
        "megatron/core/transformer/spec_utils.py",
        W,
        Stage,
        "megatron",
    ),
    r(
        "evaluate_and_print_results",
        "megatron/",
        I,
        Serve,
        "megatron",
    ),
    r("restore_from", "nemo/", W, Stage, "nemo"),
    r("transcribe", "nemo/collections/asr/", I, Serve, "nemo"),
    // --- torchtune 0.3–0.6 recipes (`recipes/full_finetune_*.py`, `lora_finetune_*.py`):
    // `setup` → `_setup_model` loads the checkpoint onto the device;
    // `training/checkpointing/_checkpointer.py` `load_checkpoint`. ---
    r("_setup_model", "recipes/", W, Stage, "torchtune"),
    r("load_checkpoint", "torchtune/", W, Stage, "torchtune"),
    // --- ultralytics 8.x `engine/trainer.py` (`yolo/engine/trainer.py` in 8.0)
    // `BaseTrainer._do_train` (the epoch loop), `validate` → `engine/validator.py`
    // `BaseValidator.__call__` (validation inside training, or `model.val()`),
    // `engine/predictor.py` `BasePredictor.__call__` / `stream_inference`,
    // `engine/model.py` `Model.val`;
    // `utils/loss.py` (`v8DetectionLoss.__call__` and its kin: the training loss, which the
    // validator also computes only while training) and `utils/tal.py` (`TaskAlignedAssigner`,
    // which only the loss calls to match predictions to targets). ---
    r(
        "__call__",
        "ultralytics/utils/loss.py",
        T,
        Stage,
        "ultralytics",
    ),
    r("", "ultralytics/utils/tal.py", T, Stage, "ultralytics"),
    // (8.0.x kept them under `ultralytics/yolo/utils/`.)
    r(
        "__call__",
        "ultralytics/yolo/utils/loss.py",
        T,
        Stage,
        "ultralytics",
    ),
    r("", "ultralytics/yolo/utils/tal.py", T, Stage, "ultralytics"),
    // --- EveryDream2 (victorchall/EveryDream2trainer `train.py` `main` →
    // `get_model_prediction_and_target`: the batch's latents encoded and the UNet's
    // prediction made, inside the training loop). ---
    r(
        "get_model_prediction_and_target",
        "",
        T,
        Stage,
        "everydream2",
    ),
    r("_do_train", "ultralytics/", T, Serve, "ultralytics"),
    r("validate", "ultralytics/", I, Serve, "ultralytics"),
    r("__call__", "engine/validator.py", I, Serve, "ultralytics"),
    r("__call__", "engine/predictor.py", I, Serve, "ultralytics"),
    r("stream_inference", "ultralytics/", I, Serve, "ultralytics"),
    r(
        "val",
        "ultralytics/engine/model.py",
        I,
        Serve,
        "ultralytics",
    ),
    // --- detectron2 `evaluation/evaluator.py` `inference_on_dataset`, `engine/defaults.py`
    // `DefaultTrainer.test` and `DefaultPredictor.__call__`, `engine/hooks.py` `EvalHook._do_eval`
    // (evaluation inside training), `DefaultTrainer.resume_or_load`. (`build_model` is not a
    // rule: it moves the model with `Module.to`, which decides.) ---
    r(
        "inference_on_dataset",
        "detectron2/",
        I,
        Serve,
        "detectron2",
    ),
    r(
        "test",
        "detectron2/engine/defaults.py",
        I,
        Serve,
        "detectron2",
    ),
    r(
        "__call__",
        "detectron2/engine/defaults.py",
        I,
        Serve,
        "detectron2",
    ),
    r(
        "_do_eval",
        "detectron2/engine/hooks.py",
        I,
        Serve,
        "detectron2",
    ),
    r("resume_or_load", "detectron2/", W, Stage, "detectron2"),
    // --- mmengine 0.x `runner/runner.py` `Runner.val` / `Runner.test` (`Runner.train` runs its
    // validation below `EpochBasedTrainLoop.run_epoch`'s caller, and `val_step` decides);
    // mmcv 1.x `runner/hooks/evaluation.py` `EvalHook._do_evaluate`. ---
    r("val", "mmengine/runner/runner.py", I, Serve, "mmengine"),
    r("test", "mmengine/runner/runner.py", I, Serve, "mmengine"),
    r("_do_evaluate", "", I, Serve, "mmcv"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_OPENNMT_RL: &[FrameRule] = &[
    // --- OpenNMT-py 2.x–3.x: `onmt/trainer.py` `Trainer.train` → `_gradient_accumulation`
    // (`validate` is its evaluation), `onmt/translate/translator.py` `translate` →
    // `translate_batch` → `_translate_batch_with_strategy`. ---
    r("_gradient_accumulation", "onmt/", T, Serve, "opennmt"),
    r("translate", "onmt/", I, Serve, "opennmt"),
    r(
        "_translate_batch_with_strategy",
        "onmt/",
        I,
        Serve,
        "opennmt",
    ),
    // --- RL trainers: a rollout (generation, environment steps) is part of a training step.
    // stable-baselines3 2.x `common/on_policy_algorithm.py` `learn` → `collect_rollouts`;
    // verl 0.3–0.5 `workers/fsdp_workers.py` `ActorRolloutRefWorker.init_model` (builds the
    // actor and the rollout engine), `update_actor`, `compute_log_prob`,
    // `compute_ref_log_prob`. verl's `generate_sequences` (its Ray fused method
    // `actor_rollout_generate_sequences`) hands the prompts to an inference engine (vLLM's or
    // SGLang's `generate` in `workers/rollout/`): the corpus's labellers read the LLM rollout as
    // inference, three of three. OpenRLHF 0.5–0.8
    // `trainer/ppo_utils/experience_maker.py` `make_experience_list` (rollout),
    // `trainer/ppo_trainer.py` `ppo_train`. ---
    r("learn", "stable_baselines3/", T, Serve, "stable-baselines3"),
    r(
        "collect_rollouts",
        "stable_baselines3/",
        T,
        Serve,
        "stable-baselines3",
    ),
    r("init_model", "verl/", W, Stage, "verl"),
    r("generate_sequences", "verl/", I, Stage, "verl"),
    r("actor_rollout_generate_sequences", "", I, Stage, "verl"),
    r("update_actor", "verl/", T, Serve, "verl"),
    r("compute_log_prob", "verl/", T, Serve, "verl"),
    r("compute_ref_log_prob", "verl/", T, Serve, "verl"),
    r("make_experience_list", "openrlhf/", T, Stage, "openrlhf"),
    r("ppo_train", "openrlhf/", T, Serve, "openrlhf"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_MEGATRON_HAIKU_INIT: &[FrameRule] = &[
    // --- Megatron-LM `megatron/training/initialize.py` (`megatron/initialize.py` before core
    // 0.5) `initialize_megatron`: distributed set-up and fused-kernel loading, before any model;
    // Haiku `haiku/_src/transform.py` `init_fn` (parameters created, as Flax's `init`). ---
    r("initialize_megatron", "megatron/", S, Stage, "megatron"),
    r("init_fn", "haiku/_src/transform.py", W, Stage, "haiku"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const LIGHTNING: &[FrameRule] = &[
    // --- Lightning (trainer/trainer.py, loops/, strategies/) ---
    r("validation_step", "", I, Serve, "lightning"),
    r("test_step", "", I, Serve, "lightning"),
    r("predict_step", "", I, Serve, "lightning"),
    // The caller's own loop, named as training and evaluation code is conventionally named
    // (`def train_epoch(...)`, `def evaluate(model, loader)`): decides only when no library
    // frame below it does.
    r("train_epoch", "", T, Serve, "user code"),
    r("train_one_epoch", "", T, Serve, "user code"),
    r("train_loop", "", T, Serve, "user code"),
    r("training_loop", "", T, Serve, "user code"),
    // The VITS family's epoch (jaywalnut310/vits `train.py` `train_and_evaluate`, copied by
    // so-vits-svc, Bert-VITS2, GPT-SoVITS `s2_train.py` and RVC `train/train.py`): the batches
    // of one epoch, calling `evaluate(…)` every `eval_interval` steps (a deeper frame, which then
    // decides); TensorFlow's `tf.estimator.train_and_evaluate` likewise trains.
    r("train_and_evaluate", "", T, Serve, "user code"),
    r("evaluate", "", I, Serve, "user code"),
    r("evaluation_step", "", I, Serve, "user code"),
    r("eval_step", "", I, Serve, "user code"),
    r("run_inference", "", I, Serve, "user code"),
    // `predict(params, x)`: a model's prediction function (a jitted JAX `predict`, Keras and
    // scikit-style `model.predict`); the library rules above come first.
    r("predict", "", I, Serve, "user code"),
    r("inference", "", I, Serve, "user code"),
    r("_run_sanity_check", "", I, Serve, "lightning"),
    r("advance", "loops/evaluation_loop", I, Serve, "lightning"),
    r("advance", "loops/prediction_loop", I, Serve, "lightning"),
    r(
        "advance",
        "loops/training_epoch_loop",
        T,
        Serve,
        "lightning",
    ),
    r("advance", "loops/fit_loop", T, Serve, "lightning"),
    r("run_training_epoch", "", T, Serve, "lightning"),
    r("run_training_batch", "", T, Serve, "lightning"),
    r("fit_loop", "", T, Serve, "lightning"),
    r("model_to_device", "", W, Move, "lightning"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const DEEPSPEED: &[FrameRule] = &[
    // --- DeepSpeed (runtime/engine.py, runtime/zero/) ---
    r("_configure_distributed_model", "", W, Move, "deepspeed"),
    // `deepspeed.initialize` builds the engine: optimizer (ZeRO partitions and fp32 master
    // copies of the weights) before any step runs.
    r("_configure_optimizer", "deepspeed/", W, Stage, "deepspeed"),
    r("_configure_zero_optimizer", "", W, Stage, "deepspeed"),
    r(
        "_configure_basic_optimizer",
        "deepspeed/",
        W,
        Stage,
        "deepspeed",
    ),
    r("initialize", "deepspeed/__init__.py", W, Stage, "deepspeed"),
    r("_post_init_method", "deepspeed/", W, Stage, "deepspeed"),
    r("step", "deepspeed/runtime", T, Serve, "deepspeed"),
    r("_take_model_step", "", T, Serve, "deepspeed"),
    r("allreduce_gradients", "", T, Serve, "deepspeed"),
    // ZeRO's gradient hooks (0.3–0.16 `deepspeed/runtime/zero/stage_1_and_2.py` and
    // `stage3.py`): `reduce_partition_and_remove_grads` is the hook on each parameter's
    // gradient accumulation, which fires in the backward pass and reduces the ready buckets
    // (`reduce_ready_partitions_and_remove_grads` → `reduce_independent_p_g_buckets_and_
    // remove_grads` → `reduce_ipg_grads`): a training step's backward.
    r(
        "reduce_partition_and_remove_grads",
        "deepspeed/runtime/zero/",
        T,
        Serve,
        "deepspeed",
    ),
    r(
        "reduce_ready_partitions_and_remove_grads",
        "deepspeed/runtime/zero/",
        T,
        Serve,
        "deepspeed",
    ),
    r(
        "reduce_ipg_grads",
        "deepspeed/runtime/zero/",
        T,
        Serve,
        "deepspeed",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const DEEPSPEED_ZERO3_STEP: &[FrameRule] = &[
    // --- DeepSpeed ZeRO-3 (0.9–0.16 `deepspeed/runtime/zero/stage3.py`): `step` runs
    // `_optimizer_step(sub_group_id)` per sub-group, which calls the wrapped `optimizer.step()` ---
    r(
        "_optimizer_step",
        "deepspeed/runtime/zero/",
        T,
        Serve,
        "deepspeed",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const OPENMMLAB_DETECTRON2: &[FrameRule] = &[
    // --- OpenMMLab: mmcv 1.x runners (`mmcv/runner/epoch_based_runner.py` /
    // `iter_based_runner.py` `train` → `run_iter` → the model's `train_step`; `val` runs the
    // validation) and mmengine 0.x loops (`mmengine/runner/loops.py` `EpochBasedTrainLoop.run_epoch`,
    // `IterBasedTrainLoop.run_iter`; the model's `train_step` in `mmengine/model/`); the
    // downstream `train_detector`/`train_segmentor` (`mmdet|mmseg/apis/train.py`) call them. ---
    r("train", "mmcv/runner/", T, Serve, "mmcv"),
    r("val", "mmcv/runner/", I, Serve, "mmcv"),
    r("train_step", "mmcv/", T, Serve, "mmcv"),
    r("val_step", "mmcv/", I, Serve, "mmcv"),
    r(
        "run_epoch",
        "mmengine/runner/loops.py",
        T,
        Serve,
        "mmengine",
    ),
    r("train_step", "mmengine/", T, Serve, "mmengine"),
    // mmengine's strategies (`mmengine/_strategy/base.py` `BaseStrategy.build_model`, called by
    // `DeepSpeedStrategy.prepare` / `FSDPStrategy.prepare` before the loop; `FlexibleRunner.train`
    // runs `strategy.prepare` first) and `Runner.build_model` (`runner/runner.py`): the model
    // built from its config, its parameters made (on the GPU under ZeRO-3's `zero.Init`); XTuner
    // and the other mmengine trainers build theirs here.
    r("build_model", "mmengine/", W, Stage, "mmengine"),
    r("val_step", "mmengine/", I, Serve, "mmengine"),
    r("test_step", "mmengine/", I, Serve, "mmengine"),
    r("train_detector", "", T, Serve, "mmdet"),
    // MMDetection 2.x's split forward (`mmdet/models/detectors/base.py` `BaseDetector.forward`:
    // `forward_train` when `return_loss`, else `forward_test` → `simple_test` / `aug_test`),
    // kept by MMSegmentation, MMDetection3D, MMRotate and the forks built on them; the label
    // assigners (`mmdet/core/bbox/assigners/`, 3.x `models/task_modules/assigners/`) match
    // anchors to ground truth for the training loss only.
    r("forward_train", "", T, Serve, "mmdet"),
    r("forward_test", "", I, Serve, "mmdet"),
    r("simple_test", "", I, Serve, "mmdet"),
    r("aug_test", "", I, Serve, "mmdet"),
    r("assign", "/assigners/", T, Serve, "mmdet"),
    r("train_segmentor", "", T, Serve, "mmseg"),
    // --- detectron2 (`detectron2/engine/train_loop.py`: `TrainerBase.train` → `run_step`, the
    // SimpleTrainer/AMPTrainer step: data, forward, `losses.backward()`, optimizer step) ---
    r("run_step", "detectron2/engine/", T, Serve, "detectron2"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const DEEPSPEED_ZERO3_SETUP: &[FrameRule] = &[
    // --- DeepSpeed ZeRO-3 parameter set-up (0.9–0.16 `deepspeed/runtime/zero/
    // parameter_offload.py` `DeepSpeedZeRoOffload.__init__` → `_convert_to_zero_parameters`,
    // and `partition_parameters.py` `zero.Init`'s `_post_init_method` →
    // `_convert_to_deepspeed_param`): each module's weights are turned into partitioned ZeRO
    // parameters when the model is built or wrapped. (`_partition_param` and the gathers also
    // run during steps, so they are not listed.) ---
    r(
        "__init__",
        "deepspeed/runtime/zero/parameter_offload.py",
        W,
        Stage,
        "deepspeed",
    ),
    r(
        "_convert_to_zero_parameters",
        "deepspeed/runtime/zero/",
        W,
        Stage,
        "deepspeed",
    ),
    r(
        "_convert_to_deepspeed_param",
        "deepspeed/runtime/zero/",
        W,
        Stage,
        "deepspeed",
    ),
    r(
        "_post_init_method",
        "deepspeed/runtime/zero/",
        W,
        Stage,
        "deepspeed",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const BARE_NAMES: &[FrameRule] = &[
    // --- Bare names of the tenth session's block (after every path-qualified rule): unsloth's
    // patched trainer loop (`unsloth/models/_utils.py` rewrites `Trainer._inner_training_loop`
    // as `_fast_inner_training_loop`, 2024.x–2025.x; `unsloth_train` in `unsloth/trainer.py`);
    // the validation functions of training scripts (`validate` in pytorch/examples
    // `imagenet/main.py` and timm `train.py`; `validate_one_epoch`, `val_one_epoch`,
    // `valid_one_epoch`; diffusers' example scripts' `log_validation`); Detectron2's demo
    // `VisualizationDemo.run_on_image` (`demo/predictor.py`). ---
    r("_fast_inner_training_loop", "", T, Serve, "unsloth"),
    r("unsloth_train", "", T, Serve, "unsloth"),
    r("validate", "", I, Serve, "user code"),
    r("validate_one_epoch", "", I, Serve, "user code"),
    r("val_one_epoch", "", I, Serve, "user code"),
    r("valid_one_epoch", "", I, Serve, "user code"),
    r("log_validation", "", I, Serve, "diffusers"),
    r("run_on_image", "", I, Serve, "detectron2"),
    // --- fastai's training entry points, which a notebook's traceback often keeps alone
    // (`----> 1 learn.lr_find()`): `Learner.lr_find` (v2 `callback/schedule.py`, v1
    // `train.py`) runs training iterations at rising learning rates; `fit_one_cycle`,
    // `fit_flat_cos` and `fit_sgdr` (v2 `callback/schedule.py`, v1 `train.py`) run the
    // training loop (session 45). ---
    r("lr_find", "", T, Serve, "fastai"),
    r("fit_one_cycle", "", T, Serve, "fastai"),
    r("fit_flat_cos", "", T, Serve, "fastai"),
    r("fit_sgdr", "", T, Serve, "fastai"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const ULTRALYTICS_PREDICTOR: &[FrameRule] = &[
    // --- ultralytics 8.x `engine/predictor.py` `BasePredictor.stream_inference` (a rule
    // above) first runs `setup_model` (`nn/autobackend.py` `AutoBackend`: the weights loaded
    // and moved to the device), then `AutoBackend.warmup` (a forward on a dummy image), then the
    // model on each input; `engine/model.py` `Model.track` runs `predict` with a tracker. ---
    r("setup_model", "ultralytics/", W, Stage, "ultralytics"),
    r("warmup", "ultralytics/", P, Stage, "ultralytics"),
    r("track", "ultralytics/", I, Serve, "ultralytics"),
];
