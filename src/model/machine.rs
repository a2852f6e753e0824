//! The machine: GPUs, their memory and processes, at one instant (R9, R10).
//!
//! Produced by a `source::gpu::GpuSource` (NVML or replay); field names of [`Device`] and
//! [`DeviceMemory`] are a JSON contract (`oomdoc gpus --json`).

use serde::{Deserialize, Serialize};

use super::{Bytes, Source};

/// Every visible device and its processes at one instant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Inventory {
    /// Where these facts came from (NVML, nvidia-smi XML, replayed recording).
    pub source: Option<Source>,
    /// Milliseconds since the Unix epoch when the inventory was taken.
    pub taken_at_ms: Option<u64>,
    /// Driver version, e.g. `580.159.04`.
    pub driver_version: Option<String>,
    /// CUDA version the driver supports, e.g. `13.0`.
    pub cuda_version: Option<String>,
    /// NVML library version, when read through NVML.
    pub nvml_version: Option<String>,
    /// The devices, in NVML index order.
    pub devices: Vec<Device>,
    /// What could not be read and why.
    pub limitations: Vec<String>,
}

/// One GPU (or MIG instance).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// NVML / nvidia-smi index.
    pub index: u32,
    /// `GPU-…` UUID (or `MIG-…` for an instance).
    pub uuid: String,
    /// PCI bus id as NVML prints it, e.g. `00000000:00:06.0`.
    pub pci_bus_id: String,
    /// Product name, e.g. `NVIDIA H200`.
    pub name: String,
    /// The ordinal CUDA gives this device under the current `CUDA_VISIBLE_DEVICES`/`CUDA_DEVICE_ORDER`;
    /// `None` when not visible to CUDA.
    pub cuda_ordinal: Option<u32>,
    /// Memory, exact bytes.
    pub memory: DeviceMemory,
    /// Compute (and graphics) processes on this device.
    pub processes: Vec<GpuProcess>,
    /// MIG mode, when known (`enabled`/`disabled`).
    pub mig_mode: Option<String>,
    /// GPU utilisation percent, when known.
    pub utilization_percent: Option<u32>,
}

/// Device memory, exact bytes. `used + free ≠ total`: the driver reserves `reserved_bytes`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceMemory {
    /// NVML total (nvidia-smi "Total").
    pub total_bytes: Bytes,
    /// Driver-reserved (NVML v2 `reserved`; nvidia-smi "Reserved"); `None` on drivers without v2.
    pub reserved_bytes: Option<Bytes>,
    /// Used (NVML v2 `used`, which excludes reserved).
    pub used_bytes: Bytes,
    /// Free.
    pub free_bytes: Bytes,
}

/// A process using a GPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuProcess {
    /// Host PID as NVML reports it.
    pub pid: u32,
    /// Process name or command line, when it can be read.
    pub name: Option<String>,
    /// Bytes used; `None` when NVML cannot say (N/A, `u64::MAX` sentinel) — see `unavailable_reason`.
    pub used_bytes: Option<Bytes>,
    /// Why `used_bytes` is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    /// `compute`, `graphics` or `compute+graphics`.
    pub process_type: Option<String>,
}

/// A cheap memory reading of one device, for fast sampling (R8, R13).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySample {
    /// Used bytes (NVML v2 `used`).
    pub used_bytes: Bytes,
    /// Free bytes.
    pub free_bytes: Bytes,
    /// Total bytes.
    pub total_bytes: Bytes,
}
