//! The live GPU source: NVML through nvml-wrapper, loaded at run time (`libnvidia-ml.so.1`
//! through libloading), so oomdoc starts and explains itself on machines without a driver.
//!
//! `Nvml::init` runs once per process and is kept in a `OnceLock` (bottom does the same in
//! `src/collection/nvidia.rs`). Memory comes from `nvmlDeviceGetMemoryInfo_v2`, whose
//! `used` excludes the driver-reserved memory (measured on driver 580);
//! processes from `nvmlDeviceGetComputeRunningProcesses_v3` and the graphics variant, with
//! `NVML_VALUE_NOT_AVAILABLE` (`u64::MAX`) kept as unavailable, never zero.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::ProcessInfo;
use nvml_wrapper::{Device as NvmlDevice, Nvml};

use super::{host, GpuError, GpuSource};
use crate::model::gpu::{GpuUuid, NvmlIndex};
use crate::model::machine::{
    Device, DeviceMemory, GpuProcess, Inventory, MemorySample, MigInstance,
};
use crate::model::{Bytes, Source};

/// `NVML_DEVICE_MIG_ENABLE` (nvml.h).
const MIG_ENABLED: u32 = 1;

/// Why `Nvml::init` failed, kept so every later call answers the same.
#[derive(Debug, Clone)]
enum InitFailure {
    Library(String),
    Driver,
    Mismatch,
    NoPermission,
    Other(String),
}

static NVML: OnceLock<Result<Nvml, InitFailure>> = OnceLock::new();

fn nvml() -> Result<&'static Nvml, GpuError> {
    let result = NVML.get_or_init(|| {
        Nvml::init().map_err(|error| match error {
            NvmlError::LibloadingError(error) => InitFailure::Library(error.to_string()),
            NvmlError::LibraryNotFound => {
                InitFailure::Library("`NVML_ERROR_LIBRARY_NOT_FOUND`".to_string())
            }
            NvmlError::DriverNotLoaded => InitFailure::Driver,
            NvmlError::LibRmVersionMismatch => InitFailure::Mismatch,
            NvmlError::NoPermission => InitFailure::NoPermission,
            other => InitFailure::Other(other.to_string()),
        })
    });
    match result {
        Ok(nvml) => Ok(nvml),
        Err(InitFailure::Library(detail)) => Err(GpuError::LibraryNotFound {
            detail: detail.clone(),
        }),
        Err(InitFailure::Driver) => Err(GpuError::DriverNotLoaded),
        Err(InitFailure::Mismatch) => Err(GpuError::LibRmVersionMismatch),
        Err(InitFailure::NoPermission) => Err(GpuError::NoPermission {
            what: "initialisation".to_string(),
        }),
        Err(InitFailure::Other(reason)) => Err(GpuError::NvmlUnavailable {
            reason: reason.clone(),
        }),
    }
}

/// Maps an NVML error of one call to its meaning; `what` names the call for the message.
fn map(error: NvmlError, what: &str, device: &str) -> GpuError {
    match error {
        NvmlError::NoPermission => GpuError::NoPermission {
            what: format!("{what} of GPU `{device}`"),
        },
        NvmlError::GpuLost => GpuError::GpuLost {
            device: device.to_string(),
        },
        NvmlError::DriverNotLoaded => GpuError::DriverNotLoaded,
        NvmlError::LibRmVersionMismatch => GpuError::LibRmVersionMismatch,
        NvmlError::NotFound => GpuError::UnknownDevice {
            uuid: device.to_string(),
        },
        other => GpuError::Other(format!(
            "NVML failed to read {what} of GPU `{device}`: {other}"
        )),
    }
}

/// NVML, with device handles cached by UUID for fast memory sampling.
pub struct NvmlGpu {
    nvml: &'static Nvml,
    handles: Vec<(String, NvmlDevice<'static>)>,
}

impl std::fmt::Debug for NvmlGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvmlGpu")
            .field("devices", &self.handles.len())
            .finish()
    }
}

impl NvmlGpu {
    /// Loads and initialises NVML (once per process).
    pub fn open() -> Result<NvmlGpu, GpuError> {
        Ok(NvmlGpu {
            nvml: nvml()?,
            handles: Vec::new(),
        })
    }

    fn handle(&mut self, uuid: &str) -> Result<&NvmlDevice<'static>, GpuError> {
        let position = match self.handles.iter().position(|(known, _)| known == uuid) {
            Some(position) => position,
            None => {
                let handle = self
                    .nvml
                    .device_by_uuid(uuid)
                    .map_err(|error| map(error, "the handle", uuid))?;
                self.handles.push((uuid.to_string(), handle));
                self.handles.len() - 1
            }
        };
        self.handles
            .get(position)
            .map(|(_, handle)| handle)
            .ok_or_else(|| GpuError::UnknownDevice {
                uuid: uuid.to_string(),
            })
    }
}

impl GpuSource for NvmlGpu {
    fn inventory(&mut self) -> Result<Inventory, GpuError> {
        let started = Instant::now();
        let nvml = self.nvml;
        let taken_at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .and_then(|elapsed| u64::try_from(elapsed.as_millis()).ok());
        let mut limitations = Vec::new();
        let count = nvml
            .device_count()
            .map_err(|error| map(error, "the device count", "*"))?;
        let mut devices = Vec::new();
        let mut handles = Vec::new();
        for index in 0..count {
            let label = index.to_string();
            let handle = match nvml.device_by_index(index) {
                Ok(handle) => handle,
                Err(error) => {
                    limitations.push(map(error, "the handle", &label).to_string());
                    continue;
                }
            };
            match read_device(&handle, index, &mut limitations) {
                Ok(device) => {
                    handles.push((device.uuid.to_string(), handle));
                    devices.push(device);
                }
                Err(error) => limitations.push(error.to_string()),
            }
        }
        self.handles = handles;
        let host = host::context();
        if host.container.is_some() && devices.iter().any(|d| !d.processes.is_empty()) {
            limitations.push(
                "oomdoc runs in a container: NVML gives host PIDs, so names read from this container's `/proc` may belong to other processes".to_string(),
            );
        }
        let cuda_version = nvml
            .sys_cuda_driver_version()
            .ok()
            .map(|version| format!("{}.{}", version / 1000, (version % 1000) / 10));
        Ok(Inventory {
            source: Some(Source::Nvml),
            taken_at_ms,
            driver_version: nvml.sys_driver_version().ok(),
            cuda_version,
            nvml_version: nvml.sys_nvml_version().ok(),
            devices,
            limitations,
            host,
            cuda: None,
            cuda_numbering_from: None,
            elapsed_us: u64::try_from(started.elapsed().as_micros()).ok(),
        })
    }

    fn memory(&mut self, uuid: &GpuUuid) -> Result<MemorySample, GpuError> {
        let uuid = uuid.as_str();
        let handle = self.handle(uuid)?;
        let info = handle
            .memory_info()
            .map_err(|error| map(error, "memory", uuid))?;
        Ok(MemorySample {
            used_bytes: Bytes(info.used),
            free_bytes: Bytes(info.free),
            total_bytes: Bytes(info.total),
        })
    }
}

/// Everything about one device; only the UUID is required.
fn read_device(
    handle: &NvmlDevice<'static>,
    index: u32,
    limitations: &mut Vec<String>,
) -> Result<Device, GpuError> {
    let label = index.to_string();
    let uuid = handle
        .uuid()
        .map_err(|error| map(error, "the UUID", &label))?;
    let mut note = |what: &str, error: NvmlError| {
        limitations.push(format!("{uuid}: {}", map(error, what, &label)));
    };
    let pci_bus_id = match handle.pci_info() {
        Ok(info) => info.bus_id,
        Err(error) => {
            note("the PCI bus id", error);
            String::new()
        }
    };
    let name = handle.name().unwrap_or_else(|error| {
        note("the name", error);
        String::new()
    });
    let memory = match handle.memory_info() {
        Ok(info) => DeviceMemory {
            total_bytes: Bytes(info.total),
            reserved_bytes: Some(Bytes(info.reserved)),
            used_bytes: Bytes(info.used),
            free_bytes: Bytes(info.free),
        },
        Err(error) => {
            // nvml-wrapper only calls `_v2` (R510+); older drivers have no reserved figure.
            note("memory (`nvmlDeviceGetMemoryInfo_v2`)", error);
            DeviceMemory::default()
        }
    };
    let mig_enabled = handle
        .mig_mode()
        .ok()
        .map(|mode| mode.current == MIG_ENABLED);
    let mig_mode =
        mig_enabled.map(|enabled| if enabled { "enabled" } else { "disabled" }.to_string());
    let mig_instances = if mig_enabled == Some(true) {
        read_mig(handle)
    } else {
        Vec::new()
    };
    let utilization_percent = handle.utilization_rates().ok().map(|rates| rates.gpu);
    let compute_capability = handle
        .cuda_compute_capability()
        .ok()
        .map(|capability| format!("{}.{}", capability.major, capability.minor));
    let (processes, processes_unavailable_reason) = match read_processes(handle) {
        Ok(processes) => (processes, None),
        Err(error) => {
            let reason = map(error, "the process list", &uuid).to_string();
            limitations.push(format!("{uuid}: {reason}"));
            (Vec::new(), Some(reason))
        }
    };
    Ok(Device {
        index: NvmlIndex(index),
        uuid: GpuUuid(uuid),
        pci_bus_id,
        name,
        cuda_ordinal: None,
        memory,
        processes,
        mig_mode,
        utilization_percent,
        mig_instances,
        compute_capability,
        processes_unavailable_reason,
        flags: Vec::new(),
    })
}

fn read_mig(handle: &NvmlDevice<'static>) -> Vec<MigInstance> {
    let slots = handle.mig_device_count().unwrap_or(0);
    let mut instances = Vec::new();
    for slot in 0..slots {
        // Empty slots answer NotFound.
        let Ok(mig) = handle.mig_device_by_index(slot) else {
            continue;
        };
        let Ok(uuid) = mig.uuid() else {
            continue;
        };
        let memory = mig.memory_info().ok().map(|info| DeviceMemory {
            total_bytes: Bytes(info.total),
            reserved_bytes: Some(Bytes(info.reserved)),
            used_bytes: Bytes(info.used),
            free_bytes: Bytes(info.free),
        });
        instances.push(MigInstance {
            index: slot,
            uuid,
            name: mig.name().ok(),
            gpu_instance_id: None,
            compute_instance_id: None,
            memory,
            cuda_ordinal: None,
        });
    }
    instances
}

/// Compute and graphics processes merged by PID, described from `/proc`.
fn read_processes(handle: &NvmlDevice<'static>) -> Result<Vec<GpuProcess>, NvmlError> {
    let compute = handle.running_compute_processes()?;
    // Graphics processes are a separate list; drivers without it answer NotSupported.
    let graphics = handle.running_graphics_processes().unwrap_or_default();
    let mut by_pid: BTreeMap<u32, GpuProcess> = BTreeMap::new();
    let mut add = |info: ProcessInfo, kind: &str| {
        let entry = by_pid.entry(info.pid).or_insert_with(|| GpuProcess {
            pid: info.pid,
            gpu_instance_id: info.gpu_instance_id,
            compute_instance_id: info.compute_instance_id,
            ..GpuProcess::default()
        });
        entry.process_type = Some(match entry.process_type.as_deref() {
            None => kind.to_string(),
            Some(existing) if existing == kind => existing.to_string(),
            Some(_) => "compute+graphics".to_string(),
        });
        match info.used_gpu_memory {
            UsedGpuMemory::Used(bytes) => {
                let bytes = Bytes(bytes);
                entry.used_bytes = Some(entry.used_bytes.map_or(bytes, |known| known.max(bytes)));
                entry.unavailable_reason = None;
            }
            UsedGpuMemory::Unavailable => {
                if entry.used_bytes.is_none() {
                    entry.unavailable_reason = Some(
                        "NVML gives `NVML_VALUE_NOT_AVAILABLE` (the u64::MAX sentinel) for this process".to_string(),
                    );
                }
            }
        }
    };
    for info in compute {
        add(info, "compute");
    }
    for info in graphics {
        add(info, "graphics");
    }
    let mut processes: Vec<GpuProcess> = by_pid.into_values().collect();
    for process in &mut processes {
        host::describe(process);
    }
    Ok(processes)
}
