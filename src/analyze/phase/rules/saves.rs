//! The frame rules of checkpoint saves of every library: no stage of the run, and deeper than the
//! loops that call them.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::Stage;
use crate::model::explain::Phase::Unknown as U;

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const CHECKPOINT_SAVES: &[FrameRule] = &[
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
];
