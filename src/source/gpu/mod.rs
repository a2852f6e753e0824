//! Where GPU facts come from: NVML through nvml-wrapper (loaded at run time, so
//! oomdoc starts without a driver) or a replay file (`--gpu-from`, `OOMDOC_GPU_FROM`).
//!
//! The `nvml` feature is checked here and nowhere else (ripgrep's switch file
//! `crates/core/index/mod.rs`): `nvml.rs` when on, `disabled.rs` when off. Both sources
//! return inventories numbered for CUDA under the *current* `CUDA_VISIBLE_DEVICES` and
//! `CUDA_DEVICE_ORDER` (also when replaying a recording made elsewhere), by the numbering
//! the caller hands [`open`] (`analyze::devices::analyze`: this layer reads, it does not
//! analyse).

#[cfg(feature = "nvml")]
mod host;
pub mod replay;

#[cfg(feature = "nvml")]
#[path = "nvml.rs"]
mod backend;

#[cfg(not(feature = "nvml"))]
#[path = "disabled.rs"]
mod backend;

use std::path::{Path, PathBuf};

use crate::env_vars;
use crate::error::Hint;
use crate::model::gpu::GpuUuid;
use crate::model::machine::{CudaEnvironment, Inventory, MemorySample};

pub use backend::NvmlGpu;
pub use replay::ReplayGpu;

/// Errors of a GPU source. Each NVML failure keeps its own meaning.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No NVML, for a reason without a variant of its own.
    #[error("NVML is not available: {reason}")]
    NvmlUnavailable {
        /// Why.
        reason: String,
    },
    /// `libnvidia-ml.so.1` could not be loaded: no NVIDIA driver installed (or not mounted
    /// into this container).
    #[error("NVML is absent: the NVIDIA management library `libnvidia-ml.so.1` could not be loaded ({detail})")]
    LibraryNotFound {
        /// The loader's message.
        detail: String,
    },
    /// The library loaded but the kernel driver is not running.
    #[error("NVML is absent: the library loaded but the NVIDIA kernel driver is not loaded")]
    DriverNotLoaded,
    /// The user-space library and the kernel driver have different versions.
    #[error("NVML library and NVIDIA kernel driver versions differ (`NVML_ERROR_LIB_RM_VERSION_MISMATCH`)")]
    LibRmVersionMismatch,
    /// NVML refused an operation.
    #[error("NVML refused {what}: no permission")]
    NoPermission {
        /// What was refused.
        what: String,
    },
    /// A GPU fell off the bus.
    #[error("GPU `{device}` is lost (fell off the bus or is otherwise inaccessible)")]
    GpuLost {
        /// Index or UUID.
        device: String,
    },
    /// This build has no NVML support.
    #[error("this build of oomdoc has no NVML support")]
    NotBuilt,
    /// No device with this UUID.
    #[error("no GPU has UUID `{uuid}`")]
    UnknownDevice {
        /// The UUID asked for.
        uuid: String,
    },
    /// A replay file could not be read or understood.
    #[error("cannot replay GPU facts from `{path}`: {message}")]
    Replay {
        /// The file.
        path: PathBuf,
        /// What is wrong, with where.
        message: String,
    },
    /// Another NVML failure, with the call and NVML's words.
    #[error("{0}")]
    Other(String),
}

impl GpuError {
    /// Whether the error means "no NVML on this machine" (other commands then record a
    /// limitation and go on without GPU facts).
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            GpuError::NvmlUnavailable { .. }
                | GpuError::LibraryNotFound { .. }
                | GpuError::DriverNotLoaded
                | GpuError::LibRmVersionMismatch
                | GpuError::NotBuilt
        )
    }
}

const REPLAY_HINT: &str = "to read GPU facts recorded elsewhere, pass `--gpu-from FILE` (or set `OOMDOC_GPU_FROM`) with an `nvidia-smi -q -x` file or an `oomdoc gpus --record` recording";

impl Hint for GpuError {
    fn hint(&self) -> Option<String> {
        match self {
            GpuError::LibraryNotFound { .. } => Some(format!(
                "this machine has no NVIDIA driver, or it is not mounted into this container (run it with `--gpus all` / the NVIDIA runtime); {REPLAY_HINT}"
            )),
            GpuError::DriverNotLoaded => Some(format!(
                "check `nvidia-smi` and `lsmod | grep nvidia`; load the driver (`sudo modprobe nvidia`) or reboot after installing it; {REPLAY_HINT}"
            )),
            GpuError::LibRmVersionMismatch => Some(
                "the driver was upgraded without reloading the kernel module: reboot, or unload and reload `nvidia`".to_string(),
            ),
            GpuError::NoPermission { .. } => Some(
                "run as a user allowed to query the GPU (often root, or a member of the `video` group); inside a container, processes of other PID namespaces may be hidden: run `oomdoc gpus` on the host".to_string(),
            ),
            GpuError::GpuLost { .. } => Some(
                "look for `Xid` lines in `dmesg`; the GPU usually needs a reset or a reboot".to_string(),
            ),
            GpuError::NotBuilt => Some(format!(
                "rebuild with `cargo build --features nvml`; {REPLAY_HINT}"
            )),
            GpuError::UnknownDevice { .. } => {
                Some("list the devices with `oomdoc gpus`".to_string())
            }
            GpuError::NvmlUnavailable { .. } => Some(REPLAY_HINT.to_string()),
            GpuError::Replay { .. } | GpuError::Other(_) => None,
        }
    }
}

/// Where GPU facts come from. Real: NVML. Replay: a recorded file.
pub trait GpuSource: Send {
    /// Every visible device and its processes, at one instant.
    fn inventory(&mut self) -> Result<Inventory, GpuError>;
    /// Memory of one device (by UUID), cheap enough to sample fast.
    fn memory(&mut self, uuid: &GpuUuid) -> Result<MemorySample, GpuError>;
    /// Whether every reading is the same recorded moment (a replayed `nvidia-smi -q -x` file, or
    /// a recording without samples): such a source gives no timeline and no peak.
    fn is_static(&self) -> bool {
        false
    }
}

/// What a source does to each inventory it reads: number the devices for CUDA under an
/// environment and flag them (the caller passes `analyze::devices::analyze`).
pub type Numbering = fn(&mut Inventory, &CudaEnvironment);

/// Opens the GPU source: the replay file when `from` is given (the cli resolves
/// `--gpu-from` and `OOMDOC_GPU_FROM`), else NVML. Inventories come back numbered by
/// `numbering` under the current environment.
pub fn open(from: Option<&Path>, numbering: Numbering) -> Result<Box<dyn GpuSource>, GpuError> {
    let environment = cuda_environment();
    match from {
        Some(path) => Ok(Box::new(Numbered {
            inner: ReplayGpu::open(path)?,
            environment,
            numbering,
        })),
        None => Ok(Box::new(Numbered {
            inner: NvmlGpu::open()?,
            environment,
            numbering,
        })),
    }
}

/// The replay path from `OOMDOC_GPU_FROM` when the command line gave none (for verbs that
/// do not declare `--gpu-from` with clap's `env`).
pub fn replay_path(flag: Option<&Path>) -> Option<PathBuf> {
    flag.map(Path::to_path_buf).or_else(|| {
        std::env::var_os(env_vars::OOMDOC_GPU_FROM)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    })
}

/// `CUDA_VISIBLE_DEVICES` and `CUDA_DEVICE_ORDER` of this process's environment.
pub fn cuda_environment() -> CudaEnvironment {
    let var = |name: &str| std::env::var_os(name).map(|value| value.to_string_lossy().into_owned());
    CudaEnvironment {
        visible_devices: var(env_vars::CUDA_VISIBLE_DEVICES),
        device_order: var(env_vars::CUDA_DEVICE_ORDER),
    }
}

/// A source whose inventories get the CUDA numbering and the flags.
struct Numbered<S> {
    inner: S,
    environment: CudaEnvironment,
    numbering: Numbering,
}

impl<S: GpuSource> GpuSource for Numbered<S> {
    fn inventory(&mut self) -> Result<Inventory, GpuError> {
        let mut inventory = self.inner.inventory()?;
        (self.numbering)(&mut inventory, &self.environment);
        Ok(inventory)
    }

    fn memory(&mut self, uuid: &GpuUuid) -> Result<MemorySample, GpuError> {
        self.inner.memory(uuid)
    }

    fn is_static(&self) -> bool {
        self.inner.is_static()
    }
}

/// Measures a live source: one inventory's latency (first, then `runs` more) and how many
/// `memory()` calls per second it sustains on the first device for `duration` (sampling
/// needs 1 kHz).
pub fn benchmark(
    source: &mut dyn GpuSource,
    duration: std::time::Duration,
    runs: u32,
) -> Result<crate::model::machine::SamplingBenchmark, GpuError> {
    use std::time::Instant;
    let micros =
        |elapsed: std::time::Duration| u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
    let started = Instant::now();
    let inventory = source.inventory()?;
    let inventory_first_us = micros(started.elapsed());
    let mut timings = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        source.inventory()?;
        timings.push(micros(started.elapsed()));
    }
    timings.sort_unstable();
    let uuid = inventory
        .devices
        .first()
        .map(|device| device.uuid.clone())
        .ok_or_else(|| GpuError::Other("no GPU to sample".to_string()))?;
    let mut memory_calls = 0u64;
    let mut memory_call_max_us = 0u64;
    let started = Instant::now();
    while started.elapsed() < duration {
        let call = Instant::now();
        source.memory(&uuid)?;
        memory_call_max_us = memory_call_max_us.max(micros(call.elapsed()));
        memory_calls += 1;
    }
    let elapsed = started.elapsed();
    Ok(crate::model::machine::SamplingBenchmark {
        uuid,
        duration_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        memory_calls,
        memory_calls_per_second: memory_calls as f64 / elapsed.as_secs_f64().max(1e-9),
        memory_call_max_us,
        inventory_first_us,
        inventory_median_us: timings
            .get(timings.len() / 2)
            .copied()
            .unwrap_or(inventory_first_us),
        inventory_max_us: timings.last().copied().unwrap_or(inventory_first_us),
        inventory_runs: runs,
    })
}
