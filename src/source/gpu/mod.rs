//! Where GPU facts come from (R9, R10): NVML through nvml-wrapper (loaded at run time, so
//! oomdoc starts without a driver) or a replay file (`--gpu-from`, `OOMDOC_GPU_FROM`).
//!
//! The `nvml` feature is checked here and nowhere else.

use crate::model::machine::{Inventory, MemorySample};

/// Errors of a GPU source. Each NVML failure keeps its own meaning.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No NVML: library absent, driver not loaded, or a build without NVML.
    #[error("NVML is not available: {reason}")]
    NvmlUnavailable {
        /// Why.
        reason: String,
    },
    /// Another failure, with its reason.
    #[error("{0}")]
    Other(String),
}

/// Where GPU facts come from. Real: NVML. Replay: a recorded file.
pub trait GpuSource: Send {
    /// Every visible device and its processes, at one instant.
    fn inventory(&mut self) -> Result<Inventory, GpuError>;
    /// Memory of one device (by UUID), cheap enough to sample fast (R8, R13).
    fn memory(&mut self, uuid: &str) -> Result<MemorySample, GpuError>;
}
