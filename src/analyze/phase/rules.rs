//! The frame rules: traceback functions (and the path they must be in) mapped to the phase
//! they show, read from each engine's and library's source (docs/phases.md lists them with
//! files and versions).

use super::{FrameRule, Role};
use crate::model::explain::Phase;

const fn r(
    function: &'static str,
    path: &'static str,
    phase: Phase,
    role: Role,
    engine: &'static str,
) -> FrameRule {
    FrameRule {
        function,
        path,
        phase,
        role,
        engine,
    }
}

use Phase::{
    CudaGraphCapture as G, FormatConversion as F, Inference as I, KvCacheAlloc as K,
    Profiling as P, Startup as S, TrainingStep as T, Unknown as U, WeightsLoad as W,
};
use Role::{Move, Offload, Serve, Stage, Wrapper};

/// Traceback functions and the phase each shows, read from the engines' sources (see
/// docs/phases.md for file, function and version of each). The first rule that matches a
/// frame applies, so path-qualified rules come before bare names. `forward`, `__call__`,
/// `_dummy_run` (vLLM V1 runs it from both `profile_run` and `capture_model`), `_apply`,
/// `convert` and torch.compile's frames are not listed: their caller decides.
pub static FRAME_RULES: &[FrameRule] = &[
    // === Checkpoint saves: no GPU stage (the phase is not shown, as a save's failure is no
    // stage's), and deeper than the training loop that calls them (`Trainer.train` →
    // `_maybe_log_save_evaluate` → `_save_checkpoint`). transformers 4.x `trainer.py`
    // `_save_checkpoint`, `save_model`, `modeling_utils.py` `save_pretrained` (PEFT's and
    // diffusers' of the same name); torch `serialization.py` `save`; safetensors `torch.py`
    // `save_file`; DeepSpeed `runtime/engine.py` `save_checkpoint`; Lightning
    // `callbacks/model_checkpoint.py` `_save_checkpoint` and `trainer/trainer.py`
    // `save_checkpoint`; MMEngine `hooks/checkpoint_hook.py` and mmcv 1.x
    // `runner/hooks/checkpoint.py` (`CheckpointHook`: `after_train_epoch` / `after_train_iter`
    // → `_save_checkpoint`, the whole file is the saving hook). ===
    r(
        "_save_checkpoint",
        "transformers/trainer.py",
        U,
        Stage,
        "transformers",
    ),
    r(
        "save_model",
        "transformers/trainer.py",
        U,
        Stage,
        "transformers",
    ),
    r(
        "save_pretrained",
        "",
        U,
        Stage,
        "transformers/peft/diffusers",
    ),
    r("save", "torch/serialization.py", U, Stage, "torch"),
    r("save_file", "safetensors/torch.py", U, Stage, "safetensors"),
    r(
        "save_checkpoint",
        "deepspeed/runtime/engine.py",
        U,
        Stage,
        "deepspeed",
    ),
    r(
        "_save_checkpoint",
        "callbacks/model_checkpoint.py",
        U,
        Stage,
        "lightning",
    ),
    r(
        "save_checkpoint",
        "trainer/trainer.py",
        U,
        Stage,
        "lightning",
    ),
    r(
        "",
        "mmengine/hooks/checkpoint_hook.py",
        U,
        Stage,
        "mmengine",
    ),
    r("", "mmcv/runner/hooks/checkpoint.py", U, Stage, "mmcv"),
    // TabbyAPI 0.0.x `model.py` `ModelContainer.load_gen`: loads the modules (exllamav2's
    // `load_gen`/`load_autosplit_gen`, deeper rules), builds the cache (`ExLlamaV2Cache`), then
    // runs a warm-up forward (`self.model.forward(input_ids, cache=self.cache,
    // preprocess_only=True)`); what no deeper rule reads is that warm-up.
    r("load_gen", "tabbyAPI/model.py", P, Stage, "exllamav2"),
    // === Frameworks' and apps' stages, read from their sources (issue 13, tenth session;
    // docs/phases.md "Sources" lists file, function and version of each). Path-qualified, so
    // they come before the bare names below (`generate`, `train`, `evaluate`, `predict`). ===
    // --- Lightning 2.x `loops/evaluation_loop.py` `_EvaluationLoop.run` → `_evaluation_step`,
    // `on_run_end` → `_on_evaluation_epoch_end` (the `on_validation_epoch_end` hooks); 1.x
    // `loops/dataloader/evaluation_loop.py` `EvaluationLoop.advance` and
    // `loops/epoch/evaluation_epoch_loop.py` `_evaluation_step`; `loops/prediction_loop.py`
    // `_PredictionLoop.run` → `_predict_step`; the fit loop's `run`s and the optimization loops
    // (`loops/optimization/automatic.py`, `manual.py`: `run`, `_training_step`,
    // `_optimizer_step`), which only train. Validation inside `fit` runs below
    // `training_epoch_loop.on_advance_end`, so its deeper frames decide. ---
    r("run", "loops/evaluation_loop", I, Serve, "lightning"),
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
    r("run", "loops/training_epoch_loop", T, Serve, "lightning"),
    r("", "loops/optimization/", T, Serve, "lightning"),
    // --- transformers 4.3x–4.5x `trainer.py`: resuming and the best model are loads
    // (`_load_from_checkpoint`, `_load_optimizer_and_scheduler`, `_load_best_model`);
    // `_evaluate` (4.4x, from `_maybe_log_save_evaluate`) runs `evaluate`; the `pipeline()`
    // factory's `base.py` `infer_framework_load_model` loads the model (the factory itself is
    // not a rule: its `Pipeline.__init__` moves the model with `Module.to`, where a raw CUDA
    // error is the context's creation); `pt_utils.py` `PipelineIterator.__next__` runs a batch
    // of a pipeline. ---
    r("_load_best_model", "trainer", W, Stage, "transformers"),
    r("_load_from_checkpoint", "trainer", W, Stage, "transformers"),
    r(
        "_load_optimizer_and_scheduler",
        "trainer",
        W,
        Stage,
        "transformers",
    ),
    r("_evaluate", "trainer", I, Serve, "transformers"),
    r(
        "infer_framework_load_model",
        "transformers/pipelines/",
        W,
        Stage,
        "transformers",
    ),
    r(
        "__next__",
        "transformers/pipelines/pt_utils.py",
        I,
        Serve,
        "transformers",
    ),
    // --- TRL: GRPO/RLOO `_generate_and_score_completions` (0.14–0.2x, `trainer/grpo_trainer.py`,
    // run by `_prepare_inputs` inside `training_step`) and its `_generate` /
    // `_generate_single_turn` (0.2x) are the rollout of a training step: the generation below
    // them belongs to the step. Old PPO (≤ 0.11 `trainer/ppo_trainer.py`): `generate` is the
    // rollout, `step` the optimisation (`batched_forward_pass`, `train_minibatch`). ---
    r("_generate_and_score_completions", "", T, Stage, "trl"),
    r("_generate", "trl/trainer/", T, Stage, "trl"),
    r("_generate_single_turn", "trl/trainer/", T, Stage, "trl"),
    r("generate", "trl/trainer/ppo_trainer.py", T, Stage, "trl"),
    r("step", "trl/trainer/ppo_trainer.py", T, Serve, "trl"),
    r("batched_forward_pass", "trl/", T, Serve, "trl"),
    r("train_minibatch", "trl/", T, Serve, "trl"),
    // --- accelerate 0.2x–1.x `accelerator.py`: `_prepare_deepspeed` (runs
    // `deepspeed.initialize`), `_prepare_fsdp2` (shards and places the model), `load_state`
    // (resume). `prepare` / `prepare_model` are not rules: the model's move below them decides,
    // and DDP's constructor there builds its reducer, which is no load. `big_modeling.py`
    // `cpu_offload`, `cpu_offload_with_hook`, `disk_offload` place a model;
    // `gather_for_metrics` is an evaluation loop's. ---
    r("_prepare_deepspeed", "accelerate/", W, Stage, "accelerate"),
    r("_prepare_fsdp2", "accelerate/", W, Stage, "accelerate"),
    r(
        "load_state",
        "accelerate/accelerator.py",
        W,
        Stage,
        "accelerate",
    ),
    r(
        "cpu_offload",
        "accelerate/big_modeling.py",
        W,
        Stage,
        "accelerate",
    ),
    r(
        "cpu_offload_with_hook",
        "accelerate/big_modeling.py",
        W,
        Stage,
        "accelerate",
    ),
    r(
        "disk_offload",
        "accelerate/big_modeling.py",
        W,
        Stage,
        "accelerate",
    ),
    r("gather_for_metrics", "accelerate/", I, Serve, "accelerate"),
    // --- PEFT 0.x: `utils/save_and_load.py` `load_peft_weights`, `tuners/tuners_utils.py`
    // `inject_adapter`, `peft_model.py` `add_adapter` create or load adapter weights; the LoRA
    // layers' `merge` / `unmerge` (`tuners/lora/layer.py`, `bnb.py`) and
    // `utils/integrations.py` `dequantize_bnb_weight` convert the base weights. ---
    r("load_peft_weights", "peft/", W, Stage, "peft"),
    r("inject_adapter", "peft/", W, Stage, "peft"),
    r("add_adapter", "peft/", W, Stage, "peft"),
    r("merge", "peft/tuners/", F, Stage, "peft"),
    r("unmerge", "peft/tuners/", F, Stage, "peft"),
    r("dequantize_bnb_weight", "peft/", F, Stage, "peft"),
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
    // --- FSDP2 (torch 2.4 `distributed/_composable/fsdp/fully_shard.py`, 2.6+
    // `distributed/fsdp/_fully_shard/_fully_shard.py`): `fully_shard` shards and places the
    // parameters; ColossalAI `booster/booster.py` `Booster.boost` does the same. ---
    r("fully_shard", "torch/distributed/", W, Stage, "torch"),
    r("boost", "colossalai/booster/", W, Stage, "colossalai"),
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
    // `engine/model.py` `Model.val`. ---
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
    // --- diffusers 0.2x–0.3x (`DiffusionPipeline.to` is not a rule: the `Module.to` below it
    // decides): `loaders/single_file.py` `from_single_file`, `loaders/lora_pipeline.py`
    // `load_lora_weights` load, `fuse_lora` merges; the VAE's `decode` / `_decode` /
    // `tiled_decode` (`models/autoencoders/autoencoder_kl.py`, `models/autoencoder_kl.py` before
    // 0.26) decode a generated latent. ---
    r("from_single_file", "diffusers/", W, Stage, "diffusers"),
    r("load_lora_weights", "diffusers/", W, Stage, "diffusers"),
    r("fuse_lora", "diffusers/", F, Stage, "diffusers"),
    r("decode", "diffusers/models/", I, Serve, "diffusers"),
    r("_decode", "diffusers/models/", I, Serve, "diffusers"),
    r("tiled_decode", "diffusers/models/", I, Serve, "diffusers"),
    // --- kohya-ss sd-scripts `library/train_util.py` `sample_images_common` (sample images
    // during training), `load_target_model` (`train_util.py`, `sdxl_train_util.py`). ---
    r("sample_images_common", "", I, Serve, "kohya-ss"),
    r(
        "sample_images",
        "library/train_util.py",
        I,
        Serve,
        "kohya-ss",
    ),
    r("load_target_model", "", W, Stage, "kohya-ss"),
    // --- ComfyUI `comfy/sd.py`: `load_checkpoint_guess_config`, `load_diffusion_model`,
    // `load_unet`, `load_clip` (checkpoint loaders), `CLIP.encode_from_tokens` (text encode),
    // `VAE.decode_tiled` / `encode_tiled`; `comfy_extras/nodes_upscale_model.py`
    // `ImageUpscaleWithModel.upscale`. ---
    r(
        "load_checkpoint_guess_config",
        "comfy/",
        W,
        Stage,
        "comfyui",
    ),
    r("load_diffusion_model", "comfy/", W, Stage, "comfyui"),
    r("load_unet", "comfy/", W, Stage, "comfyui"),
    r("load_clip", "comfy/", W, Stage, "comfyui"),
    r("encode_from_tokens", "comfy/sd.py", I, Serve, "comfyui"),
    r("decode_tiled", "comfy/sd.py", I, Serve, "comfyui"),
    r("encode_tiled", "comfy/sd.py", I, Serve, "comfyui"),
    r(
        "upscale",
        "comfy_extras/nodes_upscale_model.py",
        I,
        Serve,
        "comfyui",
    ),
    // --- InvokeAI 3.x–5.x: an invocation's `invoke` (`app/invocations/*.py`: denoise, latents
    // to image, …) runs the model; loading it onto the GPU happens inside, in the model
    // cache's `lock` (`backend/model_manager/load/model_cache/`, `_load_locked_model` in 5.x)
    // and `LoadedModel.model_on_device`. ---
    r("invoke", "invokeai/app/invocations/", I, Serve, "invokeai"),
    r(
        "lock",
        "invokeai/backend/model_manager/",
        W,
        Stage,
        "invokeai",
    ),
    r("_load_locked_model", "invokeai/", W, Stage, "invokeai"),
    r("model_on_device", "invokeai/", W, Stage, "invokeai"),
    // --- Forge (lllyasviel/stable-diffusion-webui-forge 2024+) `modules/sd_models.py`
    // `forge_model_reload`. ---
    r(
        "forge_model_reload",
        "modules/sd_models.py",
        W,
        Stage,
        "automatic1111",
    ),
    // --- vLLM V1 0.10–0.11+: `v1/worker/gpu_worker.py` `execute_dummy_batch` (a
    // data-parallel rank with no requests runs `_dummy_run(1)` in step with the others, while
    // serving); `sample_tokens` (0.11+, `gpu_model_runner.py`, the second half of a step). ---
    r("execute_dummy_batch", "vllm/", I, Serve, "vllm"),
    r("sample_tokens", "vllm/", I, Serve, "vllm"),
    // --- SGLang 0.3–0.5 `srt/model_executor/model_runner.py`: `init_cublas` (a small matmul at
    // start-up creating the cuBLAS handle), `forward_extend` / `forward_decode` /
    // `forward_idle` (a batch). ---
    r("init_cublas", "sglang/", S, Stage, "sglang"),
    r(
        "forward_extend",
        "sglang/srt/model_executor/",
        I,
        Serve,
        "sglang",
    ),
    r(
        "forward_decode",
        "sglang/srt/model_executor/",
        I,
        Serve,
        "sglang",
    ),
    r(
        "forward_idle",
        "sglang/srt/model_executor/",
        I,
        Serve,
        "sglang",
    ),
    // --- LMDeploy 0.4–0.6 `turbomind/turbomind.py` `TurboMind._from_hf` /
    // `_from_workspace` (build the engine and load weights). ---
    r("_from_hf", "lmdeploy/", W, Stage, "lmdeploy"),
    r("_from_workspace", "lmdeploy/", W, Stage, "lmdeploy"),
    // --- ExLlamaV2 0.1–0.2 `generator/dynamic.py` `ExLlamaV2DynamicGenerator.iterate`. ---
    r("iterate", "exllamav2/generator/", I, Serve, "exllamav2"),
    // --- Flax `training/train_state.py` `TrainState.apply_gradients`, `training/checkpoints.py`
    // `restore_checkpoint`, `jax_utils.py` `replicate`; orbax `checkpoint/` `restore`. ---
    r("apply_gradients", "flax/training/", T, Serve, "flax"),
    r("restore_checkpoint", "flax/training/", W, Stage, "flax"),
    r("replicate", "flax/jax_utils.py", W, Move, "flax"),
    r("restore", "orbax/checkpoint/", W, Stage, "orbax"),
    // --- Keras 2.x `engine/training.py` (`train_function`, `test_function`, `predict_function`
    // built by `make_*_function`; `train_on_batch`, `fit_generator`, …), 2.2
    // `engine/training_arrays.py` (`test_loop`, `predict_loop`), Keras 3
    // `src/backend/tensorflow/trainer.py`; `Model.load_weights` (`engine/training.py`,
    // `src/models/model.py`). ---
    r("train_function", "keras", T, Serve, "keras"),
    r("test_function", "keras", I, Serve, "keras"),
    r("predict_function", "keras", I, Serve, "keras"),
    r("train_on_batch", "keras", T, Serve, "keras"),
    r("test_on_batch", "keras", I, Serve, "keras"),
    r("predict_on_batch", "keras", I, Serve, "keras"),
    r("fit_generator", "keras", T, Serve, "keras"),
    r("evaluate_generator", "keras", I, Serve, "keras"),
    r("predict_generator", "keras", I, Serve, "keras"),
    r("test_loop", "keras", I, Serve, "keras"),
    r("predict_loop", "keras", I, Serve, "keras"),
    r("load_weights", "keras", W, Stage, "keras"),
    // --- TensorFlow Estimator (`tensorflow_estimator/python/estimator/estimator.py`, TF 1.x
    // `tensorflow/python/estimator/estimator.py`): `train` → `_train_model` →
    // `_train_with_estimator_spec`; `evaluate` → `_actual_eval`. ---
    r("_train_model", "estimator", T, Serve, "tensorflow"),
    r(
        "_train_with_estimator_spec",
        "estimator",
        T,
        Serve,
        "tensorflow",
    ),
    r("_actual_eval", "estimator", I, Serve, "tensorflow"),
    // --- MLX LM (ml-explore/mlx-examples `llms/mlx_lm`, then ml-explore/mlx-lm 0.1x–0.2x):
    // `utils.py` `load`, `generate.py` `generate_step` / `stream_generate`,
    // `tuner/trainer.py` `train` → `step`. ---
    r("load", "mlx_lm/", W, Stage, "mlx"),
    r("generate_step", "mlx_lm/", I, Serve, "mlx"),
    r("stream_generate", "mlx_lm/", I, Serve, "mlx"),
    r("step", "mlx_lm/tuner/", T, Serve, "mlx"),
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
    // actor and the rollout engine), `generate_sequences` (rollout), `update_actor`,
    // `compute_log_prob`, `compute_ref_log_prob`; OpenRLHF 0.5–0.8
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
    r("generate_sequences", "verl/", T, Stage, "verl"),
    r("update_actor", "verl/", T, Serve, "verl"),
    r("compute_log_prob", "verl/", T, Serve, "verl"),
    r("compute_ref_log_prob", "verl/", T, Serve, "verl"),
    r("make_experience_list", "openrlhf/", T, Stage, "openrlhf"),
    r("ppo_train", "openrlhf/", T, Serve, "openrlhf"),
    // --- TensorRT-LLM checkpoint conversion (0.8–0.1x `examples/*/convert_checkpoint.py`
    // `convert_and_save_hf` → `models/*/model.py` `from_hugging_face`; `quantization/
    // quantize_by_modelopt.py` `quantize_and_export`, calibration included). ---
    r("convert_and_save_hf", "", F, Stage, "tensorrt_llm"),
    r(
        "from_hugging_face",
        "tensorrt_llm/",
        F,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "quantize_and_export",
        "tensorrt_llm/",
        F,
        Stage,
        "tensorrt_llm",
    ),
    // --- Whisper wrappers: jianfch/stable-ts `stable_whisper/` `transcribe_stable` and
    // `load_faster_whisper`; linto-ai/whisper-timestamped `transcribe_timestamped`. ---
    r("transcribe_stable", "", I, Serve, "whisper"),
    r("transcribe_timestamped", "", I, Serve, "whisper"),
    r(
        "load_faster_whisper",
        "stable_whisper/",
        W,
        Stage,
        "whisper",
    ),
    // CTranslate2's `Translator.translate_batch` (a native method, so any file) and
    // OpenNMT-py's `Translator.translate_batch`: translating a batch.
    r("translate_batch", "", I, Serve, "ctranslate2"),
    // --- TensorRT-LLM PyTorch backend (0.17–1.x `_torch/pyexecutor/model_engine.py`):
    // `PyTorchModelEngine.__init__` → `_load_model` (builds the model and loads its weights). ---
    r(
        "_load_model",
        "tensorrt_llm/_torch/",
        W,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "__init__",
        "tensorrt_llm/_torch/pyexecutor/model_engine.py",
        W,
        Stage,
        "tensorrt_llm",
    ),
    // --- ONNX Runtime (`onnxruntime/capi/onnxruntime_inference_collection.py`):
    // `InferenceSession.__init__` → `_create_inference_session` (initializers placed on the
    // device), `run` (a request). ---
    r(
        "_create_inference_session",
        "onnxruntime/",
        W,
        Stage,
        "onnxruntime",
    ),
    r("run", "onnxruntime/capi/", I, Serve, "onnxruntime"),
    // --- AUTOMATIC1111 1.6+: `modules/sd_samplers_timesteps.py` (DDIM/PLMS/UniPC) and
    // `modules/sd_samplers_compvis.py` (≤ 1.5) `sample`; `modules/upscaler.py`
    // `Upscaler.upscale` (hires fix, extras), `modules/postprocessing.py` `run_postprocessing`,
    // `modules/face_restoration.py` `restore_faces`; Forge `backend/sampling/
    // sampling_function.py` `sampling_function`. ---
    r(
        "sample",
        "modules/sd_samplers_timesteps.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "sample",
        "modules/sd_samplers_compvis.py",
        I,
        Serve,
        "automatic1111",
    ),
    r("upscale", "modules/upscaler.py", I, Serve, "automatic1111"),
    r(
        "run_postprocessing",
        "modules/postprocessing.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "restore_faces",
        "modules/face_restoration.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "sampling_function",
        "backend/sampling/",
        I,
        Serve,
        "automatic1111",
    ),
    // --- Whisper apps and diarization: jhj0517/Whisper-WebUI `modules/whisper/*_inference.py`
    // `transcribe` and `update_model` (loads the model); pyannote.audio 3.x
    // `pipelines/speaker_diarization.py` `SpeakerDiarization.apply`, `core/inference.py`
    // `Inference.infer`. ---
    r("transcribe", "modules/whisper/", I, Serve, "whisper"),
    r("update_model", "modules/whisper/", W, Stage, "whisper"),
    r("apply", "pyannote/audio/pipelines/", I, Serve, "pyannote"),
    r(
        "infer",
        "pyannote/audio/core/inference.py",
        I,
        Serve,
        "pyannote",
    ),
    // --- Megatron-LM `megatron/training/initialize.py` (`megatron/initialize.py` before core
    // 0.5) `initialize_megatron`: distributed set-up and fused-kernel loading, before any model;
    // Haiku `haiku/_src/transform.py` `init_fn` (parameters created, as Flax's `init`). ---
    r("initialize_megatron", "megatron/", S, Stage, "megatron"),
    r("init_fn", "haiku/_src/transform.py", W, Stage, "haiku"),
    // --- TensorRT's builder (8.x–10.x `IBuilder.build_serialized_network`, ≤ 8.x
    // `build_engine`): a native call, so any file; an engine build times tactics on the GPU, as
    // TensorRT-LLM's `build_engine` above. ---
    r("build_serialized_network", "", G, Stage, "tensorrt"),
    // --- torch ---
    r("_lazy_init", "torch/cuda/", S, Stage, "torch"),
    // torch ≤ 1.4 `torch/cuda/__init__.py`: the first `torch.cuda.*Tensor` runs `_lazy_new`,
    // which runs `_lazy_init` (context creation).
    r("_lazy_new", "torch/cuda/", S, Stage, "torch"),
    r("set_device", "torch/cuda/", S, Stage, "torch"),
    r("init_process_group", "torch/distributed", S, Stage, "torch"),
    r("to", "torch/nn/modules/module.py", W, Move, "torch"),
    // `convert` is the closure of `Module.to` (`.half()`/`.float()` pass lambdas).
    r("convert", "torch/nn/modules/module.py", W, Move, "torch"),
    r("to", "bitsandbytes/", W, Move, "bitsandbytes"),
    r("cuda", "torch/nn/modules/module.py", W, Move, "torch"),
    r("half", "torch/nn/modules/module.py", F, Stage, "torch"),
    r("float", "torch/nn/modules/module.py", F, Stage, "torch"),
    r("bfloat16", "torch/nn/modules/module.py", F, Stage, "torch"),
    r("double", "torch/nn/modules/module.py", F, Stage, "torch"),
    r("type", "torch/nn/modules/module.py", F, Stage, "torch"),
    r(
        "load_state_dict",
        "torch/nn/modules/module.py",
        W,
        Stage,
        "torch",
    ),
    r("load", "torch/serialization.py", W, Stage, "torch"),
    r("capture_begin", "torch/cuda/graphs.py", G, Stage, "torch"),
    r("capture_end", "torch/cuda/graphs.py", G, Stage, "torch"),
    r("__enter__", "torch/cuda/graphs.py", G, Stage, "torch"),
    r("__exit__", "torch/cuda/graphs.py", G, Stage, "torch"),
    r("make_graphed_callables", "", G, Stage, "torch"),
    // torch.compile(mode="reduce-overhead") records CUDA graphs through inductor's CUDA-graph
    // trees (`torch/_inductor/cudagraph_trees.py`): `cudagraphify` / `deferred_cudagraphify`
    // build a graph for a new shape, `record_function` records it and `run_eager` is its
    // warm-up run before recording (torch 2.1+; older releases: `compile_fx.py
    // cudagraphify_impl`).
    r("cudagraphify", "torch/_inductor/", G, Stage, "torch"),
    r(
        "deferred_cudagraphify",
        "torch/_inductor/",
        G,
        Stage,
        "torch",
    ),
    r("cudagraphify_impl", "torch/_inductor/", G, Stage, "torch"),
    r(
        "record_function",
        "torch/_inductor/cudagraph_trees.py",
        G,
        Stage,
        "torch",
    ),
    r(
        "run_eager",
        "torch/_inductor/cudagraph_trees.py",
        G,
        Stage,
        "torch",
    ),
    // Activation checkpointing (`torch/utils/checkpoint.py`: `checkpoint`,
    // `checkpoint_sequential`, the recomputation in backward `recompute_fn`/`unpack_hook`)
    // saves memory for backward: it runs in training.
    r("checkpoint", "torch/utils/checkpoint.py", T, Serve, "torch"),
    r(
        "checkpoint_sequential",
        "torch/utils/checkpoint.py",
        T,
        Serve,
        "torch",
    ),
    r(
        "recompute_fn",
        "torch/utils/checkpoint.py",
        T,
        Serve,
        "torch",
    ),
    r(
        "unpack_hook",
        "torch/utils/checkpoint.py",
        T,
        Serve,
        "torch",
    ),
    // safetensors `torch.py`: `load_file(filename, device="cuda:0")` / `load(...)` put a
    // checkpoint's tensors straight on the GPU.
    r("load_file", "safetensors/", W, Stage, "safetensors"),
    r("backward", "", T, Serve, "torch"),
    r("_engine_run_backward", "", T, Serve, "torch"),
    r("run_backward", "", T, Serve, "torch"),
    r("step", "/optim/", T, Serve, "torch"),
    r("_use_grad", "/optim/", T, Serve, "torch"),
    // Any function of torch.optim (`adamw`, `_single_tensor_adamw`, `_multi_tensor_adam`, …).
    r("", "torch/optim/", T, Serve, "torch"),
    r("clip_grad_norm_", "", T, Serve, "torch"),
    // --- vLLM (V0 worker/model_runner/llm_engine, V1 gpu_worker/gpu_model_runner/core) ---
    r("init_device", "vllm/", S, Stage, "vllm"),
    r("init_worker_distributed_environment", "", S, Stage, "vllm"),
    r("init_distributed_environment", "", S, Stage, "vllm"),
    r("ensure_model_parallel_initialized", "", S, Stage, "vllm"),
    r("initialize_model_parallel", "", S, Stage, "vllm"),
    r("load_model", "", W, Stage, "vllm/sglang/transformers"),
    r("get_model", "", W, Stage, "vllm/tgi"),
    r("load_weights", "", W, Stage, "vllm/sglang"),
    r("_initialize_model", "", W, Stage, "vllm"),
    r("initialize_model", "", W, Stage, "vllm"),
    r("create_weights", "vllm/", W, Stage, "vllm"),
    r("weight_loader", "", W, Stage, "vllm"),
    r("weight_loader_v2", "", W, Stage, "vllm"),
    r("default_weight_loader", "", W, Stage, "vllm"),
    r("load_model_weights", "", W, Stage, "vllm"),
    r("_load_weights", "", W, Stage, "vllm"),
    r("safetensors_weights_iterator", "", W, Stage, "vllm"),
    r("pt_weights_iterator", "", W, Stage, "vllm"),
    r("np_cache_weights_iterator", "", W, Stage, "vllm"),
    r("fastsafetensors_weights_iterator", "", W, Stage, "vllm"),
    r("process_weights_after_loading", "", F, Stage, "vllm"),
    r("_process_weights_after_loading", "", F, Stage, "vllm"),
    r("gptq_marlin_repack", "", F, Stage, "vllm"),
    r("awq_marlin_repack", "", F, Stage, "vllm"),
    r("gptq_marlin_moe_repack", "", F, Stage, "vllm"),
    r("prepare_fp8_layer_for_marlin", "", F, Stage, "vllm"),
    r("prepare_moe_fp8_layer_for_marlin", "", F, Stage, "vllm"),
    r("prepare_fp4_layer_for_marlin", "", F, Stage, "vllm"),
    r("marlin_permute_scales", "", F, Stage, "vllm"),
    r("requantize_with_max_scale", "", F, Stage, "vllm"),
    r("normalize_e4m3fn_to_e4m3fnuz", "", F, Stage, "vllm"),
    r("convert_to_channelwise", "", F, Stage, "vllm"),
    r("repack", "", F, Stage, "vllm"),
    r("quantize_", "", F, Stage, "torchao"),
    r("convert_to_fp8", "", F, Stage, "vllm"),
    r("profile_run", "", P, Stage, "vllm"),
    r("_dummy_sampler_run", "", P, Stage, "vllm"),
    r("_dummy_pooler_run", "", P, Stage, "vllm"),
    r("determine_num_available_blocks", "", P, Stage, "vllm"),
    r("determine_available_memory", "", P, Stage, "vllm"),
    r("_initialize_kv_caches", "", K, Wrapper, "vllm"),
    r("initialize_cache", "", K, Stage, "vllm"),
    r("_init_cache", "", K, Stage, "vllm"),
    r("_init_cache_engine", "", K, Stage, "vllm"),
    r("__init__", "cache_engine", K, Stage, "vllm/lmdeploy"),
    r("_allocate_kv_cache", "", K, Stage, "vllm"),
    r("raise_if_cache_size_invalid", "", K, Stage, "vllm"),
    r("initialize_from_config", "vllm/", K, Stage, "vllm"),
    r("initialize_kv_cache", "", K, Stage, "vllm"),
    r("initialize_kv_cache_tensors", "", K, Stage, "vllm"),
    r("_allocate_kv_cache_tensors", "", K, Stage, "vllm"),
    r("_reshape_kv_cache_tensors", "", K, Stage, "vllm"),
    r("get_kv_cache_config", "", K, Stage, "vllm"),
    r("get_kv_cache_configs", "", K, Stage, "vllm"),
    r("check_enough_kv_cache_memory", "", K, Stage, "vllm"),
    r("_check_enough_kv_cache_memory", "", K, Stage, "vllm"),
    r("allocate_kv_cache", "", K, Stage, "vllm"),
    r("compile_or_warm_up_model", "", G, Stage, "vllm"),
    r("capture_model", "", G, Stage, "vllm"),
    r("_capture_cudagraphs", "", G, Stage, "vllm"),
    r("capture", "", G, Stage, "vllm/sglang"),
    r("_capture", "", G, Stage, "vllm"),
    r("capture_cuda_graph", "", G, Stage, "vllm"),
    r("__init__", "cuda_graph_runner", G, Stage, "sglang"),
    r("execute_model", "", I, Serve, "vllm"),
    r("execute_model_async", "", I, Serve, "vllm"),
    r("step", "llm_engine", I, Serve, "vllm"),
    r("step", "engine/core.py", I, Serve, "vllm"),
    r("step_with_batch_queue", "", I, Serve, "vllm"),
    // V0 `worker/worker_base.py` `LocalOrDistributedWorkerBase.start_worker_execution_loop`: the
    // decode loop of the non-driver workers; V1 `v1/engine/async_llm.py` `AsyncLLM.output_handler`:
    // the API server's task pulling outputs of running requests from EngineCore.
    r("start_worker_execution_loop", "", I, Serve, "vllm"),
    r("output_handler", "vllm/v1/engine/", I, Serve, "vllm"),
    r("step_async", "", I, Serve, "vllm"),
    r("engine_step", "", I, Serve, "vllm"),
    r("run_engine_loop", "", I, Serve, "vllm"),
    r("run_busy_loop", "", I, Serve, "vllm"),
    r("_process_engine_step", "", I, Serve, "vllm"),
    r("_run_engine", "", I, Serve, "vllm"),
    r("create_chat_completion", "", I, Serve, "vllm"),
    r("create_completion", "", I, Serve, "vllm"),
    r("chat_completion_stream_generator", "", I, Serve, "vllm"),
    r("chat_completion_full_generator", "", I, Serve, "vllm"),
    r("chat", "entrypoints/llm.py", I, Serve, "vllm"),
    r("encode", "entrypoints/llm.py", I, Serve, "vllm"),
    r("embed", "entrypoints/llm.py", I, Serve, "vllm"),
    r("score", "entrypoints/llm.py", I, Serve, "vllm"),
    r("beam_search", "entrypoints/llm.py", I, Serve, "vllm"),
    // --- SGLang (model_runner.py, cuda_graph_runner.py, scheduler.py, tp_worker.py) ---
    r("init_torch_distributed", "", S, Stage, "sglang"),
    r("profile_max_num_token", "", P, Stage, "sglang"),
    r("kernel_warmup", "", P, Stage, "sglang"),
    r("init_memory_pool", "", K, Stage, "sglang"),
    r("_create_buffers", "mem_cache", K, Stage, "sglang"),
    r("init_cuda_graphs", "", G, Stage, "sglang"),
    r("init_device_graphs", "", G, Stage, "sglang"),
    r("capture_one_batch_size", "", G, Stage, "sglang"),
    r("event_loop_normal", "", I, Serve, "sglang"),
    r("event_loop_overlap", "", I, Serve, "sglang"),
    r("event_loop_pp", "", I, Serve, "sglang"),
    r("run_batch", "", I, Serve, "sglang"),
    r("forward_thread_func", "", I, Serve, "sglang"),
    r("forward_thread_func_", "", I, Serve, "sglang"),
    r("forward_batch_generation", "", I, Serve, "sglang"),
    r("generate_request", "", I, Serve, "sglang"),
    // --- TGI (server/text_generation_server) ---
    r("init_kv_cache", "", K, Stage, "tgi"),
    r("cuda_graph_warmup", "", G, Stage, "tgi"),
    r("tunableop_warmup", "", P, Stage, "tgi"),
    r("Warmup", "", P, Stage, "tgi"),
    r("warmup", "", P, Stage, "tgi/lmdeploy"),
    r("_warmup", "", P, Stage, "vllm"),
    r("warmup_model", "", P, Stage, "vllm"),
    r("get_tensor", "text_generation_server", W, Stage, "tgi"),
    r("get_sharded", "text_generation_server", W, Stage, "tgi"),
    r(
        "get_multi_weights_col",
        "text_generation_server",
        W,
        Stage,
        "tgi",
    ),
    r("get_weights_col", "text_generation_server", W, Stage, "tgi"),
    r("get_weights_row", "text_generation_server", W, Stage, "tgi"),
    r("Prefill", "", I, Serve, "tgi"),
    r("Decode", "", I, Serve, "tgi"),
    r("generate_token", "", I, Serve, "tgi"),
    // --- transformers (modeling_utils.py, trainer.py, generation/utils.py, pipelines) ---
    r(
        "from_pretrained",
        "",
        W,
        Stage,
        "transformers/peft/diffusers",
    ),
    r("_from_config", "", W, Stage, "transformers"),
    r("_load_pretrained_model", "", W, Stage, "transformers"),
    r("load_state_dict", "", W, Stage, "transformers"),
    r("_load_state_dict_into_model", "", W, Stage, "transformers"),
    r(
        "_load_state_dict_into_meta_model",
        "",
        W,
        Stage,
        "transformers",
    ),
    r("load_shard_file", "", W, Stage, "transformers"),
    r("_load_parameter_into_model", "", W, Stage, "transformers"),
    r("caching_allocator_warmup", "", W, Stage, "transformers"),
    r("_move_model_to_device", "", W, Move, "transformers"),
    r(
        "_process_model_after_weight_loading",
        "",
        F,
        Stage,
        "transformers",
    ),
    r("dequantize", "transformers/", F, Stage, "transformers"),
    r("generate", "", I, Serve, "transformers/vllm"),
    r("_sample", "generation/", I, Serve, "transformers"),
    r("sample", "generation/", I, Serve, "transformers"),
    r("greedy_search", "", I, Serve, "transformers"),
    r("_greedy_search", "", I, Serve, "transformers"),
    r("beam_search", "generation/", I, Serve, "transformers"),
    r("_beam_search", "", I, Serve, "transformers"),
    r("_assisted_decoding", "", I, Serve, "transformers"),
    r("_contrastive_search", "", I, Serve, "transformers"),
    r("_generate", "", I, Serve, "vllm"),
    r("_forward", "/pipelines/", I, Serve, "transformers"),
    r("forward", "/pipelines/", I, Serve, "transformers"),
    r("run_single", "/pipelines/", I, Serve, "transformers"),
    r(
        "__call__",
        "/pipelines/",
        I,
        Serve,
        "transformers/diffusers",
    ),
    r("evaluate", "trainer", I, Serve, "transformers"),
    r("evaluation_loop", "", I, Serve, "transformers"),
    r("prediction_step", "", I, Serve, "transformers"),
    r("predict", "trainer", I, Serve, "transformers/lightning"),
    r("validate", "trainer/trainer.py", I, Serve, "lightning"),
    r("test", "trainer/trainer.py", I, Serve, "lightning"),
    r("fit", "trainer/trainer.py", T, Serve, "lightning"),
    r("training_step", "", T, Serve, "transformers/lightning"),
    r("train_step", "", T, Serve, "deepspeed"),
    r("_inner_training_loop", "", T, Serve, "transformers"),
    // accelerate's `find_executable_batch_size` (utils/memory.py) decorates the training loop;
    // its documentation and examples name the decorated function `inner_training_loop`.
    r("inner_training_loop", "", T, Serve, "accelerate"),
    r("train", "", T, Serve, "transformers"),
    // Keras `Model.fit` (keras 2 `engine/training.py`, keras 3 `src/backend/*/trainer.py`), also
    // as a notebook arrow (`----> 9 model.fit(ds, epochs=…)`); its `evaluate`/`predict` match the
    // `trainer` rules above.
    r("fit", "", T, Serve, "keras"),
    r("optimizer_step", "", T, Serve, "lightning"),
    // --- accelerate (big_modeling.py, utils/modeling.py, hooks.py, accelerator.py) ---
    r("pre_forward", "accelerate/", W, Offload, "accelerate"),
    r("new_forward", "accelerate/", W, Offload, "accelerate"),
    r("load_checkpoint_and_dispatch", "", W, Stage, "accelerate"),
    r("load_checkpoint_in_model", "", W, Stage, "accelerate"),
    r("dispatch_model", "", W, Stage, "accelerate"),
    r("set_module_tensor_to_device", "", W, Move, "accelerate"),
    r("send_to_device", "accelerate/", W, Move, "accelerate"),
    // --- PEFT ---
    r("merge_and_unload", "", F, Stage, "peft"),
    r("_unload_and_optionally_merge", "", F, Stage, "peft"),
    r("merge_adapter", "", F, Stage, "peft"),
    r("prepare_model_for_kbit_training", "", F, Stage, "peft"),
    r("load_adapter", "", W, Stage, "peft"),
    r("set_peft_model_state_dict", "", W, Stage, "peft"),
    r("get_peft_model", "", W, Stage, "peft"),
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
    // --- FSDP: wrapping a module moves its parameters to the GPU (torch 2.x
    // `torch/distributed/fsdp/_init_utils.py` `_init_param_handle_from_module` →
    // `_move_module_to_device` → `_move_states_to_device`; FSDP2's `fully_shard` calls
    // `_move_states_to_device` in `_fully_shard/_fsdp_init.py`) ---
    r(
        "_move_module_to_device",
        "torch/distributed/fsdp/",
        W,
        Move,
        "torch",
    ),
    r(
        "_move_states_to_device",
        "torch/distributed/fsdp/",
        W,
        Move,
        "torch",
    ),
    // FSDP1's `FlatParamHandle._init_flat_param` (`torch/distributed/fsdp/flat_param.py`, run
    // once from the handle's constructor while wrapping) flattens the module's parameters into
    // one tensor on the device; the name is FSDP's alone, so a Rich box that wrapped its path
    // (`…/fsdp/fla` │ `t_param.py:462 in _init_flat_param`) is still read.
    r("_init_flat_param", "", W, Move, "torch"),
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
    // --- LMDeploy (turbomind/turbomind.py, pytorch/engine) ---
    r("allocate_gpu_cache", "", K, Stage, "lmdeploy"),
    r("_build_model", "lmdeploy/", W, Stage, "lmdeploy"),
    r("_load_weights", "lmdeploy/", W, Stage, "lmdeploy"),
    r("stream_infer", "lmdeploy/", I, Serve, "lmdeploy"),
    r("async_stream_infer", "lmdeploy/", I, Serve, "lmdeploy"),
    // --- ExLlamaV2 (model.py, cache.py, generator/) ---
    r("load", "exllamav2/", W, Stage, "exllamav2"),
    r("load_autosplit", "", W, Stage, "exllamav2"),
    r("load_gen", "exllamav2/", W, Stage, "exllamav2"),
    r("__init__", "exllamav2/cache.py", K, Stage, "exllamav2"),
    r("generate_simple", "", I, Serve, "exllamav2"),
    // ExLlamaV3 (`exllamav3/model/model.py` `prefill`, `model_tp.py` `prefill_tp`: a prompt
    // being prefilled, tensor-parallel or not).
    r("prefill", "exllamav3/", I, Serve, "exllamav2"),
    r("prefill_tp", "exllamav3/", I, Serve, "exllamav2"),
    // --- text-generation-webui (modules/ui_model_menu.py, modules/models.py) ---
    r("load_model_wrapper", "", W, Stage, "text-generation-webui"),
    // --- MLC-LLM (python/mlc_chat/chat_module.py: `_reload` loads the model library and weights) ---
    r("_reload", "mlc_chat/", W, Stage, "mlc_llm"),
    r("_reload", "mlc_llm/", W, Stage, "mlc_llm"),
    // --- TensorRT-LLM (runtime/model_runner*.py, runtime/generation.py, _torch/pyexecutor) ---
    r("from_dir", "tensorrt_llm/", W, Stage, "tensorrt_llm"),
    r("from_engine", "tensorrt_llm/", W, Stage, "tensorrt_llm"),
    r(
        "setup",
        "tensorrt_llm/runtime/generation.py",
        K,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "_setup",
        "tensorrt_llm/runtime/generation.py",
        K,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "estimate_max_tokens",
        "tensorrt_llm/",
        P,
        Stage,
        "tensorrt_llm",
    ),
    r("build_managers", "tensorrt_llm/", K, Stage, "tensorrt_llm"),
    r(
        "_create_kv_cache_manager",
        "tensorrt_llm/",
        K,
        Stage,
        "tensorrt_llm",
    ),
    r("build", "tensorrt_llm/builder.py", G, Stage, "tensorrt_llm"),
    r("build_engine", "tensorrt_llm/", G, Stage, "tensorrt_llm"),
    // The PyTorch backend (`tensorrt_llm/_torch/pyexecutor/model_engine.py`, 0.19–1.x):
    // `warmup` → `_run_cuda_graph_warmup` → `_capture_generation_cuda_graphs` /
    // `_capture_piecewise_cuda_graphs` capture the decode graphs before serving;
    // `py_executor.py` `_executor_loop` / `_executor_loop_overlap` → `_forward_step` serve.
    r(
        "_run_cuda_graph_warmup",
        "tensorrt_llm/_torch/",
        G,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "_capture_generation_cuda_graphs",
        "tensorrt_llm/_torch/",
        G,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "_capture_piecewise_cuda_graphs",
        "tensorrt_llm/_torch/",
        G,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "_executor_loop",
        "tensorrt_llm/_torch/",
        I,
        Serve,
        "tensorrt_llm",
    ),
    r(
        "_executor_loop_overlap",
        "tensorrt_llm/_torch/",
        I,
        Serve,
        "tensorrt_llm",
    ),
    r(
        "_forward_step",
        "tensorrt_llm/_torch/",
        I,
        Serve,
        "tensorrt_llm",
    ),
    // --- diffusers (pipelines/pipeline_utils.py) and ComfyUI (comfy/model_management.py) ---
    r("enable_model_cpu_offload", "", W, Stage, "diffusers"),
    r("enable_sequential_cpu_offload", "", W, Stage, "diffusers"),
    r("__call__", "diffusers/pipelines/", I, Serve, "diffusers"),
    r("load_models_gpu", "", W, Stage, "comfyui"),
    r("model_load", "comfy/", W, Stage, "comfyui"),
    r("partially_load", "comfy/", W, Stage, "comfyui"),
    r("load_model_gpu", "comfy/", W, Stage, "comfyui"),
    r("common_ksampler", "", I, Serve, "comfyui"),
    r("sample", "comfy/", I, Serve, "comfyui"),
    r("decode", "comfy/sd.py", I, Serve, "comfyui"),
    r("encode", "comfy/sd.py", I, Serve, "comfyui"),
    // comfy/model_patcher.py: `ModelPatcher.load` / `patch_model` move (and patch) the weights
    // onto the GPU; `patch_weight_to_device` one weight. ComfyUI loads lazily, so these run
    // under a sampler node and decide over it.
    r("patch_weight_to_device", "", W, Stage, "comfyui"),
    r("load", "comfy/model_patcher.py", W, Stage, "comfyui"),
    r("patch_model", "comfy/model_patcher.py", W, Stage, "comfyui"),
    // ComfyUI's root `nodes.py`: `KSampler.sample` / `KSamplerAdvanced.sample` (which call
    // `common_ksampler`), `VAEDecode.decode`, `VAEEncode.encode` generate. `execution.py`'s own
    // frames (`execute`, `get_output_data`, `_map_node_over_list`) run every node, loaders
    // included, and show no stage by themselves.
    r("sample", "ComfyUI/nodes.py", I, Serve, "comfyui"),
    r("decode", "ComfyUI/nodes.py", I, Serve, "comfyui"),
    r("encode", "ComfyUI/nodes.py", I, Serve, "comfyui"),
    // `comfy/ldm/` holds the model architectures (`comfy/ldm/wan/model.py`, `flux/model.py`,
    // `modules/diffusionmodules/openaimodel.py`): their `forward` runs only when a node samples
    // or encodes/decodes; loading builds them without running it.
    r("forward", "comfy/ldm/", I, Serve, "comfyui"),
    // --- AUTOMATIC1111 (modules/devices.py `first_time_calculation`, run by
    // `modules/initialize.py` before the model loads: a 1x1 linear and conv "the first time this
    // is done it allocates about 700MB of memory", i.e. the CUDA context and cuBLAS/cuDNN
    // handles) ---
    r(
        "first_time_calculation",
        "modules/devices.py",
        S,
        Stage,
        "automatic1111",
    ),
    // --- DeepSpeed ZeRO-3 (0.9–0.16 `deepspeed/runtime/zero/stage3.py`): `step` runs
    // `_optimizer_step(sub_group_id)` per sub-group, which calls the wrapped `optimizer.step()` ---
    r(
        "_optimizer_step",
        "deepspeed/runtime/zero/",
        T,
        Serve,
        "deepspeed",
    ),
    // --- JAX: backend (client, stream executors) creation at the first device use
    // (jax 0.4–0.8 `jax/_src/xla_bridge.py` `backends` → `_init_backend` →
    // `make_pjrt_c_api_client`; jaxlib `xla_client.py` `make_c_api_client`) ---
    r("backends", "jax/_src/xla_bridge.py", S, Stage, "jax"),
    r("_init_backend", "jax/_src/xla_bridge.py", S, Stage, "jax"),
    r(
        "make_pjrt_c_api_client",
        "jax/_src/xla_bridge.py",
        S,
        Stage,
        "jax",
    ),
    r("make_c_api_client", "jaxlib/xla_client.py", S, Stage, "jax"),
    // --- Chainer (v5–v7): `Trainer.run` is the training loop; `StandardUpdater.update` →
    // `update_core` → `Optimizer.update(lossfun)` runs forward, backward and the update ---
    r("run", "chainer/training/trainer.py", T, Serve, "chainer"),
    r("update", "chainer/training/updaters/", T, Serve, "chainer"),
    r(
        "update_core",
        "chainer/training/updaters/",
        T,
        Serve,
        "chainer",
    ),
    r("update", "chainer/optimizer.py", T, Serve, "chainer"),
    // --- Speech: openai-whisper (20231117 `whisper/transcribe.py` `transcribe` →
    // `decode_with_fallback` → `whisper/decoding.py` `decode` → `DecodingTask.run`) and
    // faster-whisper (1.x `faster_whisper/transcribe.py` `WhisperModel.transcribe` →
    // `generate_segments` → `encode` / `generate_with_fallback`): transcribing audio. Loading is
    // `whisper.load_model` / `WhisperModel.__init__`, matched by the load rules above. ---
    r("transcribe", "whisper/transcribe.py", I, Serve, "whisper"),
    r("decode_with_fallback", "whisper/", I, Serve, "whisper"),
    r("decode", "whisper/decoding.py", I, Serve, "whisper"),
    r("transcribe", "faster_whisper/", I, Serve, "faster-whisper"),
    r(
        "generate_segments",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
    r(
        "generate_with_fallback",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
    r("encode", "faster_whisper/", I, Serve, "faster-whisper"),
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
    r("val_step", "mmengine/", I, Serve, "mmengine"),
    r("test_step", "mmengine/", I, Serve, "mmengine"),
    r("train_detector", "", T, Serve, "mmdet"),
    r("train_segmentor", "", T, Serve, "mmseg"),
    // --- detectron2 (`detectron2/engine/train_loop.py`: `TrainerBase.train` → `run_step`, the
    // SimpleTrainer/AMPTrainer step: data, forward, `losses.backward()`, optimizer step) ---
    r("run_step", "detectron2/engine/", T, Serve, "detectron2"),
    // Fooocus `modules/default_pipeline.py`: `refresh_everything` (re)loads the base and
    // refiner checkpoints, LoRAs and text encoder (`refresh_base_model`, `prepare_text_encoder`
    // → `load_models_gpu`) when a task changes them or at start.
    r(
        "refresh_everything",
        "modules/default_pipeline.py",
        W,
        Stage,
        "fooocus",
    ),
    r(
        "refresh_base_model",
        "modules/default_pipeline.py",
        W,
        Stage,
        "fooocus",
    ),
    r(
        "prepare_text_encoder",
        "modules/default_pipeline.py",
        W,
        Stage,
        "fooocus",
    ),
    // Fooocus ships ComfyUI's backend renamed (`backend/headless/fcbh/`, later `ldm_patched/`).
    r("decode", "fcbh/sd.py", I, Serve, "fooocus"),
    r("encode", "fcbh/sd.py", I, Serve, "fooocus"),
    r("decode", "ldm_patched/modules/sd.py", I, Serve, "fooocus"),
    r("encode", "ldm_patched/modules/sd.py", I, Serve, "fooocus"),
    // --- Frames of reports outside the rule set's own corpus (issue 13's blind batch) ---
    // Keras 2 with the TF1 session (`keras/backend/tensorflow_backend.py`, and tf.keras's copy
    // `tensorflow/python/keras/backend.py`): `get_session` runs
    // `session.run(tf.variables_initializer(uninitialized_vars))` the first time a model is
    // used, which allocates the model's variables on the GPU; a step's own work runs later, in
    // `Function.__call__`'s `session.run(fetches, …)`.
    r("get_session", "keras/backend", W, Stage, "keras"),
    // A TorchScript module's serialized code (`torch.jit.load` keeps it under `code/__torch__/`
    // and its frames name that file): a scripted model shipped to run inputs through it.
    r("forward", "code/__torch__/", I, Serve, "torchscript"),
    // === Frames of frameworks and apps read from their sources (issue 13, second blind batch).
    // Each block names the project, the file and the version read. ===
    // --- AUTOMATIC1111 web UI (1.0–1.10 `modules/processing.py`: `process_images` →
    // `process_images_inner` → `p.sample` (txt2img: `StableDiffusionProcessingTxt2Img.sample`,
    // hires fix `sample_hr_pass`), then `decode_latent_batch` → `sd_samplers_common.
    // decode_first_stage` (the VAE decode); `modules/sd_samplers_kdiffusion.py` `sample` /
    // `sample_img2img`). `modules/sd_hijack_optimizations.py` holds only the attention forwards
    // the web UI swaps into the UNet and VAE (`split_cross_attention_forward`,
    // `xformers_attention_forward`, `sub_quad_attention_forward`, `cross_attention_attnblock_
    // forward`…): they run while a picture is generated. Its own training tabs
    // (`modules/textual_inversion/textual_inversion.py` `train_embedding`,
    // `modules/hypernetworks/hypernetwork.py` `train_hypernetwork`) run the same UNet, so they
    // are stages that keep the forward below them a training step. Forge and SD.Next keep these
    // files and names. ---
    r(
        "train_embedding",
        "modules/textual_inversion/",
        T,
        Stage,
        "automatic1111",
    ),
    r(
        "train_hypernetwork",
        "modules/hypernetworks/",
        T,
        Stage,
        "automatic1111",
    ),
    r(
        "process_images",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "process_images_inner",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
    r("sample", "modules/processing.py", I, Serve, "automatic1111"),
    r(
        "sample_hr_pass",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "decode_latent_batch",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "decode_first_stage",
        "modules/sd_samplers_common.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "sample",
        "modules/sd_samplers_kdiffusion.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "sample_img2img",
        "modules/sd_samplers_kdiffusion.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "",
        "modules/sd_hijack_optimizations.py",
        I,
        Serve,
        "automatic1111",
    ),
    // --- Speech apps. whisperX 3.x (`whisperx/asr.py`: `load_model` builds the faster-whisper
    // pipeline, `FasterWhisperPipeline.transcribe` → `generate_segment_batched`;
    // `whisperx/alignment.py` `load_align_model` / `align`; `whisperx/diarize.py`
    // `DiarizationPipeline.__init__` loads pyannote, `__call__` diarizes). faster-whisper 1.x
    // `faster_whisper/transcribe.py` `WhisperModel.__init__` builds the CTranslate2 model on the
    // device (its weights load). faster-whisper-GUI 0.5–0.8 (`faster_whisper_GUI/transcribe.py`
    // `TranscribeWorker.run`: the worker thread that transcribes the chosen files; loading is
    // `modelLoad.py`). ---
    r(
        "__init__",
        "faster_whisper/transcribe.py",
        W,
        Stage,
        "faster-whisper",
    ),
    r("load_align_model", "whisperx/", W, Stage, "whisperx"),
    r("__init__", "whisperx/diarize.py", W, Stage, "whisperx"),
    r("transcribe", "whisperx/asr.py", I, Serve, "whisperx"),
    r(
        "generate_segment_batched",
        "whisperx/",
        I,
        Serve,
        "whisperx",
    ),
    r("align", "whisperx/alignment.py", I, Serve, "whisperx"),
    r("__call__", "whisperx/diarize.py", I, Serve, "whisperx"),
    r(
        "run",
        "faster_whisper_GUI/transcribe.py",
        I,
        Serve,
        "faster-whisper-gui",
    ),
    // ESPnet: espnet2 0.9–202x `espnet2/bin/asr_inference.py` (`inference`, `Speech2Text.
    // __call__`) and the beam searches `espnet/nets/beam_search.py`, `batch_beam_search.py`
    // decode (recipes' decoding stage); `espnet2/train/trainer.py` `train_one_epoch` is a
    // training epoch, `validate_one_epoch` its validation.
    r("", "espnet2/bin/asr_inference.py", I, Serve, "espnet"),
    r("", "espnet/nets/beam_search.py", I, Serve, "espnet"),
    r("", "espnet/nets/batch_beam_search.py", I, Serve, "espnet"),
    r("train_one_epoch", "espnet2/train/", T, Serve, "espnet"),
    r("validate_one_epoch", "espnet2/train/", I, Serve, "espnet"),
    // --- SGLang disaggregated serving (0.4.6–0.5 `srt/disaggregation/decode.py`
    // `event_loop_normal_disagg_decode` / `event_loop_overlap_disagg_decode`,
    // `srt/disaggregation/prefill.py` `event_loop_*_disagg_prefill`) and the scheduler's result
    // handling (`srt/managers/scheduler_output_processor_mixin.py` `process_batch_result_decode`
    // / `_prefill`); before 0.2 the worker was `srt/managers/router/model_rpc.py`
    // (`forward_prefill_batch`, `forward_decode_batch`, `ScheduleBatch.sample` in
    // `infer_batch.py`). All run requests. ---
    r(
        "",
        "sglang/srt/disaggregation/decode.py",
        I,
        Serve,
        "sglang",
    ),
    r(
        "",
        "sglang/srt/disaggregation/prefill.py",
        I,
        Serve,
        "sglang",
    ),
    r(
        "process_batch_result",
        "sglang/srt/managers/",
        I,
        Serve,
        "sglang",
    ),
    r(
        "process_batch_result_decode",
        "sglang/srt/managers/",
        I,
        Serve,
        "sglang",
    ),
    r(
        "process_batch_result_prefill",
        "sglang/srt/managers/",
        I,
        Serve,
        "sglang",
    ),
    r("forward_decode_batch", "sglang/", I, Serve, "sglang"),
    r("forward_prefill_batch", "sglang/", I, Serve, "sglang"),
    r("sample", "sglang/srt/managers/", I, Serve, "sglang"),
    // --- sentence-transformers 2.x–3.x (`sentence_transformers/SentenceTransformer.py`
    // `encode`: embeddings under `torch.no_grad()`; its `fit` is matched by the training rules
    // above). ---
    r(
        "encode",
        "sentence_transformers/",
        I,
        Serve,
        "sentence-transformers",
    ),
    // --- Fooocus 2.x (`modules/async_worker.py` `process_task` runs one image task;
    // `modules/default_pipeline.py` `process_diffusion` samples and decodes; `modules/core.py`
    // `ksampler`, `decode_vae`, `encode_vae`). Its loaders are matched above. ---
    r(
        "process_task",
        "modules/async_worker.py",
        I,
        Serve,
        "fooocus",
    ),
    r(
        "process_diffusion",
        "modules/default_pipeline.py",
        I,
        Serve,
        "fooocus",
    ),
    r("ksampler", "modules/core.py", I, Serve, "fooocus"),
    r("decode_vae", "modules/core.py", I, Serve, "fooocus"),
    r("encode_vae", "modules/core.py", I, Serve, "fooocus"),
    // --- gpt-oss reference implementations (`gpt_oss/torch|triton/model.py`: `Transformer.
    // from_checkpoint` loads the weights, `TokenGenerator.generate` and the model's `forward`
    // generate; the repository has no training code). ---
    r("from_checkpoint", "gpt_oss/", W, Stage, "gpt-oss"),
    r("forward", "gpt_oss/", I, Serve, "gpt-oss"),
    // --- FSDP1 wrapping (torch 2.0–2.6 `torch/distributed/fsdp/fully_sharded_data_parallel.py`
    // `FullyShardedDataParallel.__init__` → `_wrap_utils.py` `_auto_wrap` → `wrap.py`
    // `_recursive_wrap`, and `_init_utils.py` `_init_param_handle_from_module` →
    // `_sync_module_params_and_buffers` → `torch/distributed/utils.py`
    // `_sync_params_and_buffers`, which broadcasts rank 0's weights): the model is being
    // sharded onto the GPUs before any step. DDP's constructor (`torch/nn/parallel/
    // distributed.py` `__init__`) is not listed: besides broadcasting the weights
    // (`_sync_module_states`, listed) it builds the gradient buckets of its reducer, which is
    // set-up for training rather than a load. ---
    r(
        "__init__",
        "torch/distributed/fsdp/fully_sharded_data_parallel.py",
        W,
        Stage,
        "torch",
    ),
    r("_auto_wrap", "torch/distributed/fsdp/", W, Stage, "torch"),
    r(
        "_recursive_wrap",
        "torch/distributed/fsdp/",
        W,
        Stage,
        "torch",
    ),
    r(
        "_init_param_handle_from_module",
        "torch/distributed/fsdp/",
        W,
        Stage,
        "torch",
    ),
    r(
        "_sync_module_params_and_buffers",
        "torch/distributed/",
        W,
        Stage,
        "torch",
    ),
    r(
        "_sync_params_and_buffers",
        "torch/distributed/",
        W,
        Stage,
        "torch",
    ),
    r(
        "_sync_module_states",
        "torch/distributed/",
        W,
        Stage,
        "torch",
    ),
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
    // --- Flax linen (0.6–0.10 `flax/linen/module.py` `Module.init` → `init_with_output`):
    // creating the model's parameters on the device, before any step; `apply` runs them. ---
    r("init", "flax/linen/module.py", W, Stage, "flax"),
    r("init_with_output", "flax/linen/module.py", W, Stage, "flax"),
    // --- AUTOMATIC1111 loading and low-VRAM mode (1.0–1.10 `modules/sd_models.py`:
    // `reload_model_weights` / `load_model_weights` read a checkpoint into the model,
    // `send_model_to_device` moves it; `modules/sd_vae.py` `reload_vae_weights` / `load_vae`;
    // `modules/lowvram.py` `send_me_to_gpu` is the forward pre-hook of `--medvram`/`--lowvram`
    // that moves each part onto the GPU when the forward needs it; `modules/txt2img.py`
    // `txt2img` and `modules/img2img.py` `img2img` are the generate buttons; before 1.6
    // `decode_first_stage` lived in `modules/processing.py`). ---
    r(
        "reload_model_weights",
        "modules/sd_models.py",
        W,
        Stage,
        "automatic1111",
    ),
    r(
        "load_model_weights",
        "modules/sd_models.py",
        W,
        Stage,
        "automatic1111",
    ),
    r(
        "send_model_to_device",
        "modules/sd_models.py",
        W,
        Move,
        "automatic1111",
    ),
    r(
        "reload_vae_weights",
        "modules/sd_vae.py",
        W,
        Stage,
        "automatic1111",
    ),
    r("load_vae", "modules/sd_vae.py", W, Stage, "automatic1111"),
    r(
        "send_me_to_gpu",
        "modules/lowvram.py",
        W,
        Offload,
        "automatic1111",
    ),
    r("txt2img", "modules/txt2img.py", I, Serve, "automatic1111"),
    r("img2img", "modules/img2img.py", I, Serve, "automatic1111"),
    r(
        "decode_first_stage",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
    // --- faster-whisper 1.1 batched transcription (`faster_whisper/transcribe.py`
    // `BatchedInferencePipeline.transcribe` → `_batched_segments_generator` →
    // `generate_segment_batched`; `WhisperModel.detect_language`). ---
    r(
        "_batched_segments_generator",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
    r(
        "generate_segment_batched",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
    r(
        "detect_language",
        "faster_whisper/",
        I,
        Serve,
        "faster-whisper",
    ),
    // --- TensorRT's Python API (8.x–10.x `tensorrt.Runtime.deserialize_cuda_engine`): it puts a
    // built engine's weights on the GPU. A native method, so it shows as the call under the last
    // Python frame, from any file. ---
    r("deserialize_cuda_engine", "", W, Stage, "tensorrt"),
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
];

/// A native frame of autograd's backward pass (a C++ frame of a PyTorch error, see
/// `parse::engine_log`): torch's engine (`torch/csrc/autograd/engine.cpp`
/// `Engine::evaluate_function`, `Engine::thread_main`), a generated autograd node
/// (`tools/autograd/gen_autograd_functions.py` names them `<Op>Backward<N>`, e.g.
/// `ConvolutionBackward0::apply`), or an ATen backward kernel (`native_functions.yaml` names them
/// `<op>_backward…`, e.g. `slow_conv_transpose3d_backward_out_cuda_template`).
pub(super) static NATIVE_BACKWARD: FrameRule = r("backward", "torch/lib/", T, Serve, "torch");

#[cfg(test)]
mod tests;
