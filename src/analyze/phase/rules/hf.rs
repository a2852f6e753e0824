//! The frame rules of the Hugging Face family: transformers, accelerate, PEFT, TRL, diffusers,
//! sentence-transformers.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Move, Offload, Serve, Stage};
use crate::model::explain::Phase::{
    FormatConversion as F, Inference as I, TrainingStep as T, WeightsLoad as W,
};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_HF: &[FrameRule] = &[
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
    // GRPO's per-token log-probabilities (`_get_per_token_logps`, 0.14–0.18;
    // `_get_per_token_logps_and_entropies`, 0.19+; Unsloth's `UnslothGRPOTrainer` copies both):
    // the policy's forward on the completions, for the old and reference log-probabilities of
    // the rollout and for the loss, all inside `training_step` (session 34).
    r("_get_per_token_logps", "", T, Stage, "trl"),
    r("_get_per_token_logps_and_entropies", "", T, Stage, "trl"),
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
    // --- PEFT 0.6–0.18 `tuners/lora/model.py` `LoraModel.add_weighted_adapter` (also
    // `tuners/ia3/model.py`): a new adapter made of existing ones (`svd`, `cat`, `linear`,
    // `ties`, `dare_*`, `magnitude_prune*` combinations), through
    // `_svd_generalized_task_arithmetic_weighted_adapter` / `_generalized_task_arithmetic_
    // weighted_adapter`: the adapters' weights are converted into another one, as a merge. ---
    r("add_weighted_adapter", "peft/", F, Stage, "peft"),
    r(
        "_svd_generalized_task_arithmetic_weighted_adapter",
        "peft/",
        F,
        Stage,
        "peft",
    ),
    r(
        "_generalized_task_arithmetic_weighted_adapter",
        "peft/",
        F,
        Stage,
        "peft",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_DIFFUSERS: &[FrameRule] = &[
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
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const TRANSFORMERS_ACCELERATE_PEFT: &[FrameRule] = &[
    // --- transformers (modeling_utils.py, trainer.py, generation/utils.py, pipelines) ---
    r(
        "from_pretrained",
        "",
        W,
        Stage,
        "transformers/peft/diffusers",
    ),
    r("_from_config", "", W, Stage, "transformers"),
    // `PreTrainedModel.resize_token_embeddings` (`modeling_utils.py`): a new embedding matrix
    // (`_get_resized_embeddings` builds an `nn.Embedding` and copies the old rows in), the
    // weights rewritten for a new vocabulary.
    r(
        "resize_token_embeddings",
        "transformers/modeling_utils.py",
        F,
        Stage,
        "transformers",
    ),
    r(
        "_resize_token_embeddings",
        "transformers/modeling_utils.py",
        F,
        Stage,
        "transformers",
    ),
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
    // accelerate's prepared data loader (`data_loader.py` `DataLoaderShard.__iter__`:
    // `current_batch = send_to_device(current_batch, self.device)`) moves each batch, not
    // weights: the loop iterating it (a training's or an evaluation's) is the stage.
    r(
        "__iter__",
        "accelerate/data_loader.py",
        W,
        Offload,
        "accelerate",
    ),
    r("send_to_device", "accelerate/", W, Move, "accelerate"),
    // --- PEFT ---
    r("merge_and_unload", "", F, Stage, "peft"),
    r("_unload_and_optionally_merge", "", F, Stage, "peft"),
    r("merge_adapter", "", F, Stage, "peft"),
    r("prepare_model_for_kbit_training", "", F, Stage, "peft"),
    r("load_adapter", "", W, Stage, "peft"),
    r("set_peft_model_state_dict", "", W, Stage, "peft"),
    r("get_peft_model", "", W, Stage, "peft"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const SENTENCE_TRANSFORMERS: &[FrameRule] = &[
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
];
