//! The NVML source of a build without the `nvml` feature: it accepts every call and says
//! clearly that this build cannot read GPUs (ripgrep `crates/core/index/disabled.rs` style).

use super::{GpuError, GpuSource};
use crate::model::gpu::GpuUuid;
use crate::model::machine::{Inventory, MemorySample};

/// Stand-in for the NVML source; never constructed.
#[derive(Debug)]
pub struct NvmlGpu {
    _never: (),
}

impl NvmlGpu {
    /// Always fails: this build has no NVML support.
    pub fn open() -> Result<NvmlGpu, GpuError> {
        Err(GpuError::NotBuilt)
    }
}

impl GpuSource for NvmlGpu {
    fn inventory(&mut self) -> Result<Inventory, GpuError> {
        Err(GpuError::NotBuilt)
    }

    fn memory(&mut self, _uuid: &GpuUuid) -> Result<MemorySample, GpuError> {
        Err(GpuError::NotBuilt)
    }
}
