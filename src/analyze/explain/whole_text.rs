//! What the sessions' whole-text tests read of a report: the phase (printing the phase report
//! when a check fails), the engine, whether it is a GPU OOM; and the PyTorch message their
//! excerpts end with.

use super::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

/// The phase of a text, with its evidence on failure.
pub(super) fn phase(text: &str) -> Phase {
    let report = explain_text(text).phase;
    eprintln!("{report:?}");
    report.failed_in
}

/// The engine a text is read as.
pub(super) fn engine(text: &str) -> EngineName {
    explain_text(text).engine.name
}

/// Whether the text is read as a GPU out-of-memory failure.
pub(super) fn gpu_oom(text: &str) -> bool {
    explain_text(text).is_gpu_oom
}

/// A PyTorch 2.x message, the failure line the excerpts end with.
pub(super) const TORCH_OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate \
    64.00 MiB. GPU 0 has a total capacity of 24.00 GiB of which 0 bytes is free.\n";
