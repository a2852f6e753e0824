//! The frame rules of batch-size probes: a training framework runs a few trial forward and
//! backward passes at growing batch sizes to size the batch for the memory it has, before the
//! training proper: a profiling pass of the list (as an inference engine's warm-up).
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::Stage;
use crate::model::explain::Phase::Profiling as P;

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`). Stage frames:
/// the trial steps below them belong to the probe, not to training.
pub(super) const BATCH_SIZE_PROBES: &[FrameRule] = &[
    // --- ultralytics 8.x `ultralytics/utils/autobatch.py` `check_train_batch_size` →
    // `autobatch` (YOLOv5 `utils/autobatch.py`, the same functions), run by the trainer's
    // `_setup_train` when `batch=-1`: it profiles the model at batch sizes 1–16 and fits the
    // memory curve. ---
    r(
        "check_train_batch_size",
        "autobatch.py",
        P,
        Stage,
        "ultralytics",
    ),
    r("autobatch", "autobatch.py", P, Stage, "ultralytics"),
    // --- Lightning's batch-size finder (`BatchSizeFinder` callback, `Tuner.scale_batch_size`):
    // 1.x `pytorch_lightning/tuner/batch_size_scaling.py` (`scale_batch_size`,
    // `_run_power_scaling`, `_run_binsearch_scaling`), 2.x `lightning/pytorch/tuner/
    // batch_size_scaling.py` (`_scale_batch_size`, `_run_power_scaling`, `_run_binary_scaling`,
    // `_try_loop_run`): every function of the file runs the trial fits. ---
    r("", "tuner/batch_size_scaling.py", P, Stage, "lightning"),
];
