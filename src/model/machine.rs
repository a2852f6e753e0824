//! The machine: GPUs, their memory and processes, at one instant.
//!
//! Produced by a `source::gpu::GpuSource` (NVML or replay); field names of [`Device`] and
//! [`DeviceMemory`] are a JSON contract (`oomdoc gpus --json`, and `preflight.inventory` of
//! `run.json`). Plain data: the CUDA numbering and the flags are filled in by
//! `analyze::devices`, the text by `render::gpus`.

use serde::{Deserialize, Serialize};

use super::gpu::{CudaOrdinal, GpuUuid, NvmlIndex};
use super::host::ContainerIdentity;
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
    #[serde(default)]
    pub limitations: Vec<String>,
    /// The host the inventory was taken on: user, container, `NVIDIA_VISIBLE_DEVICES`.
    #[serde(default)]
    pub host: HostContext,
    /// How CUDA numbers these devices under the current `CUDA_VISIBLE_DEVICES` and
    /// `CUDA_DEVICE_ORDER`; `None` until `analyze::devices::resolve_cuda_ordinals` ran.
    #[serde(default)]
    pub cuda: Option<CudaNumbering>,
    /// Whose `CUDA_VISIBLE_DEVICES` and `CUDA_DEVICE_ORDER` gave `cuda` (set by `oomdoc gpus`;
    /// `None` elsewhere, where it is this shell's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_numbering_from: Option<NumberingFrom>,
    /// How long taking the inventory took, in microseconds (live sources only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_us: Option<u64>,
}

/// One GPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// NVML / nvidia-smi index.
    pub index: NvmlIndex,
    /// `GPU-…` UUID.
    pub uuid: GpuUuid,
    /// PCI bus id as NVML prints it, e.g. `00000000:00:06.0`.
    pub pci_bus_id: String,
    /// Product name, e.g. `NVIDIA H200`.
    pub name: String,
    /// The ordinal CUDA gives this device under the current `CUDA_VISIBLE_DEVICES`/`CUDA_DEVICE_ORDER`;
    /// `None` when not visible to CUDA.
    pub cuda_ordinal: Option<CudaOrdinal>,
    /// Memory, exact bytes.
    pub memory: DeviceMemory,
    /// Compute (and graphics) processes on this device.
    #[serde(default)]
    pub processes: Vec<GpuProcess>,
    /// MIG mode, when known (`enabled`/`disabled`).
    pub mig_mode: Option<String>,
    /// GPU utilisation percent, when known.
    pub utilization_percent: Option<u32>,
    /// MIG instances (empty when MIG is off).
    #[serde(default)]
    pub mig_instances: Vec<MigInstance>,
    /// CUDA compute capability, e.g. `9.0`, when known.
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// Whether the process list could be read; when not, `processes` is empty for that reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes_unavailable_reason: Option<String>,
    /// What deserves a look on this device (filled by `analyze::devices`).
    #[serde(default)]
    pub flags: Vec<DeviceFlag>,
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

impl DeviceMemory {
    /// What CUDA reports as the device's total (`cudaMemGetInfo`, PyTorch's "total capacity"):
    /// NVML total minus driver-reserved (measured on driver 580).
    pub fn cuda_total_bytes(&self) -> Option<Bytes> {
        self.reserved_bytes
            .map(|reserved| self.total_bytes.saturating_sub(reserved))
    }

    /// This reading as a memory sample (used, free, total).
    pub fn sample(&self) -> MemorySample {
        MemorySample {
            used_bytes: self.used_bytes,
            free_bytes: self.free_bytes,
            total_bytes: self.total_bytes,
        }
    }
}

/// One MIG instance of a GPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MigInstance {
    /// The MIG device index on its parent GPU.
    pub index: u32,
    /// `MIG-…` UUID.
    pub uuid: String,
    /// Name, e.g. `NVIDIA H200 MIG 1g.18gb`, when known.
    pub name: Option<String>,
    /// GPU instance id, when known.
    pub gpu_instance_id: Option<u32>,
    /// Compute instance id, when known.
    pub compute_instance_id: Option<u32>,
    /// Memory of this instance, when readable.
    pub memory: Option<DeviceMemory>,
    /// The ordinal CUDA gives this instance, when selected through `CUDA_VISIBLE_DEVICES`.
    pub cuda_ordinal: Option<CudaOrdinal>,
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
    /// Why `name` is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_unavailable_reason: Option<String>,
    /// The full command line, when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The owner's user id, when readable.
    #[serde(default)]
    pub user_id: Option<u32>,
    /// The parent PID, when readable.
    #[serde(default)]
    pub parent_pid: Option<u32>,
    /// The parent's name, when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_name: Option<String>,
    /// MIG GPU instance id, when the process runs on a MIG instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_instance_id: Option<u32>,
    /// MIG compute instance id, when the process runs on a MIG instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_instance_id: Option<u32>,
    /// Whether the PID exists in oomdoc's PID namespace (`None` when not checked, e.g. replay
    /// of nvidia-smi XML). NVML gives host PIDs; in a container they may not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_pid_namespace: Option<bool>,
    /// Its resident host memory (`VmRSS` of `/proc/PID/status`) when the inventory was taken;
    /// `None` when not measured: see `host_rss_unavailable_reason`.
    #[serde(default)]
    pub host_rss_bytes: Option<Bytes>,
    /// Why `host_rss_bytes` is missing (a replay of another machine, a PID of another
    /// namespace, an unreadable `/proc` file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_rss_unavailable_reason: Option<String>,
    /// The container and Kubernetes pod it runs in, from `/proc/PID/cgroup`; `None` when its
    /// cgroup names none (or it was not read: see `host_rss_unavailable_reason`).
    #[serde(default)]
    pub container: Option<ContainerIdentity>,
    /// What deserves a look about this process (filled by `analyze::devices`).
    #[serde(default)]
    pub flags: Vec<ProcessFlag>,
}

/// A cheap memory reading of one device, for fast sampling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySample {
    /// Used bytes (NVML v2 `used`).
    pub used_bytes: Bytes,
    /// Free bytes.
    pub free_bytes: Bytes,
    /// Total bytes.
    pub total_bytes: Bytes,
}

/// Facts about the host an inventory was taken on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostContext {
    /// The user id oomdoc ran as (other users' processes are flagged against it).
    pub user_id: Option<u32>,
    /// The container oomdoc ran in, if any.
    pub container: Option<Container>,
    /// `NVIDIA_VISIBLE_DEVICES`, when set.
    pub nvidia_visible_devices: Option<NvidiaVisibleDevices>,
}

/// How CUDA numbers the devices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CudaNumbering {
    /// `CUDA_VISIBLE_DEVICES`, parsed; `None` when unset (every device visible).
    pub visible_devices: Option<VisibleDevices>,
    /// `CUDA_DEVICE_ORDER` as applied.
    pub device_order: DeviceOrder,
    /// How many devices CUDA sees.
    pub visible_count: u32,
    /// Whether the ordinals are certain (false when `FASTEST_FIRST` may reorder unlike devices).
    pub ordinals_certain: bool,
    /// What may surprise a person about this numbering.
    pub warnings: Vec<CudaWarning>,
}

/// The CUDA variables of the environment that applies (the current one, also when replaying):
/// what `analyze::devices` numbers an [`Inventory`] under.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CudaEnvironment {
    /// `CUDA_VISIBLE_DEVICES`; `None` when unset.
    pub visible_devices: Option<String>,
    /// `CUDA_DEVICE_ORDER`; `None` when unset.
    pub device_order: Option<String>,
}

/// Whose CUDA environment numbered the devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NumberingFrom {
    /// The environment oomdoc runs in (a live inventory).
    ThisShell,
    /// The environment recorded with a replayed inventory (that machine's numbering).
    Recording,
    /// `--cuda-visible-devices` on the command line.
    CommandLine,
    /// A replay that recorded no environment (`nvidia-smi -q -x`): numbered as if
    /// `CUDA_VISIBLE_DEVICES` and `CUDA_DEVICE_ORDER` were unset there.
    NotRecorded,
}

/// A surprise in the CUDA numbering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CudaWarning {
    /// Devices differ and `CUDA_DEVICE_ORDER` is the default `FASTEST_FIRST`: CUDA ordinals
    /// may not follow NVML/nvidia-smi order.
    FastestFirstMayDiffer {
        /// The distinct device names.
        names: Vec<String>,
    },
    /// NVML indices do not follow PCI bus order, so NVML index ≠ CUDA ordinal.
    NvmlOrderNotPciOrder,
    /// An entry of `CUDA_VISIBLE_DEVICES` matches no device; CUDA stops reading there.
    UnmatchedEntry {
        /// The entry as written.
        entry: String,
        /// Why: `no device has this index`, `no device has this UUID`, `prefix matches N devices`.
        reason: String,
    },
    /// Entries CUDA ignores because an earlier entry ended the list.
    IgnoredEntries {
        /// The ignored entries, the one that ended the list first.
        entries: Vec<String>,
    },
    /// An entry is repeated: CUDA sees no GPU at all.
    DuplicateEntry {
        /// The repeated entry.
        entry: String,
    },
    /// `CUDA_VISIBLE_DEVICES` is set but empty: CUDA sees no GPU.
    EmptyVisibleDevices,
}

/// Something about a device that deserves a look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DeviceFlag {
    /// Memory is in use but no process is listed: processes of another PID namespace
    /// (container) or not visible to this user hold it.
    UsedWithoutVisibleProcess {
        /// Used bytes (excluding driver-reserved).
        used_bytes: Bytes,
    },
    /// Listed processes account for much less than the used memory.
    UnaccountedUsage {
        /// Used minus the sum of listed processes.
        unaccounted_bytes: Bytes,
    },
    /// MIG is enabled: CUDA sees MIG instances, not the whole GPU.
    MigEnabled,
    /// Not visible to CUDA under the current `CUDA_VISIBLE_DEVICES`.
    NotVisibleToCuda,
}

/// Something about a process that deserves a look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ProcessFlag {
    /// Owned by another user than the one running oomdoc.
    OtherUser {
        /// The owner's user id.
        user_id: u32,
    },
    /// A display server or desktop shell (Xorg, gnome-shell, …).
    DisplayServer,
    /// An inference-engine worker (vLLM `EngineCore`, `VllmWorker`, SGLang scheduler) whose
    /// parent is gone (re-parented to PID 1 or an init): likely left behind by a crash.
    LikelyOrphanedEngineWorker {
        /// Its parent PID now.
        parent_pid: Option<u32>,
    },
    /// The PID is not in oomdoc's PID namespace (NVML reports host PIDs; in a container they
    /// do not exist or name another process).
    ForeignPidNamespace,
}

/// One parsed entry of `CUDA_VISIBLE_DEVICES`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum VisibleEntry {
    /// An integer index in CUDA's enumeration order.
    Index(u32),
    /// A `GPU-…` UUID or a unique prefix of one.
    GpuUuid(String),
    /// A `MIG-…` identifier (`MIG-<uuid>`, or the R450/R460 form `MIG-GPU-<uuid>/<gi>/<ci>`).
    MigUuid(String),
}

impl std::fmt::Display for VisibleEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VisibleEntry::Index(index) => write!(f, "{index}"),
            VisibleEntry::GpuUuid(text) | VisibleEntry::MigUuid(text) => f.write_str(text),
        }
    }
}

/// `CUDA_VISIBLE_DEVICES`, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VisibleDevices {
    /// The raw value.
    pub raw: String,
    /// The entries CUDA keeps, in order (ordinal 0 first).
    pub entries: Vec<VisibleEntry>,
    /// The entry that ended the list and the ones after it (ignored by CUDA).
    pub ignored: Vec<String>,
    /// Why parsing stopped or hid every device, when it did.
    pub stopped: Option<VisibleStop>,
}

/// Why `CUDA_VISIBLE_DEVICES` parsing stopped early or hid every device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum VisibleStop {
    /// The value is empty: CUDA sees no GPU.
    Empty,
    /// An entry is not of the list's kind (negative, not a number, not a UUID): it and the
    /// entries after it are ignored.
    InvalidEntry {
        /// The entry as written.
        entry: String,
    },
    /// An entry is repeated: CUDA then sees no GPU at all.
    Duplicate {
        /// The entry as written.
        entry: String,
    },
}

/// `CUDA_DEVICE_ORDER`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceOrder {
    /// The default: fastest device first, ties broken by PCI bus id.
    #[default]
    FastestFirst,
    /// PCI bus id order, as nvidia-smi lists devices.
    PciBusId,
}

/// `NVIDIA_VISIBLE_DEVICES` (nvidia-container-toolkit), as seen inside a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum NvidiaVisibleDevices {
    /// `all`: every GPU of the host.
    All,
    /// `none`: no GPU, driver libraries still mounted.
    None,
    /// `void` or empty: behaves like plain runc (no GPU support injected).
    Void,
    /// A list of host indices or UUIDs; inside the container they are renumbered from 0.
    List(Vec<String>),
}

/// The kind of container oomdoc runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContainerKind {
    /// Docker (`/.dockerenv`, or `docker` in `/proc/1/cgroup`).
    Docker,
    /// Podman (`/run/.containerenv`, or `libpod` in `/proc/1/cgroup`).
    Podman,
    /// A Kubernetes pod (`kubepods` in `/proc/1/cgroup`).
    Kubernetes,
    /// containerd (`containerd` in `/proc/1/cgroup`).
    Containerd,
    /// LXC (`lxc` in `/proc/1/cgroup`).
    Lxc,
}

/// The container verdict with the evidence that gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Container {
    /// The kind.
    pub kind: ContainerKind,
    /// What showed it, e.g. `/.dockerenv exists`.
    pub evidence: String,
}

/// An `oomdoc gpus --record` recording: the `oomdoc gpus --json` document plus memory
/// readings per device UUID, replayed by `--gpu-from` (one reading per `memory()` call,
/// holding the last).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// The inventory, flattened (so the document is also a plain `gpus --json` document).
    #[serde(flatten)]
    pub inventory: Inventory,
    /// Memory readings per device UUID, oldest first.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub samples: std::collections::BTreeMap<String, Vec<RecordedSample>>,
}

impl Recording {
    /// A recording of `inventory` with the full readings taken so far, per device UUID.
    pub fn new(
        inventory: Inventory,
        samples: &std::collections::BTreeMap<String, Vec<MemorySample>>,
    ) -> Recording {
        Recording {
            inventory,
            samples: samples
                .iter()
                .map(|(uuid, list)| {
                    (
                        uuid.clone(),
                        list.iter().copied().map(RecordedSample::Full).collect(),
                    )
                })
                .collect(),
        }
    }
}

/// One recorded memory reading: a full sample, or just used bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RecordedSample {
    /// Used bytes only; free is derived as total − reserved − used.
    Used(u64),
    /// A full reading.
    Full(MemorySample),
}

/// What `oomdoc gpus --bench-sampling` measured on a live GPU (sampling needs 1 kHz).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingBenchmark {
    /// The device sampled.
    pub uuid: GpuUuid,
    /// How long `memory()` was called in a loop, in milliseconds.
    pub duration_ms: u64,
    /// Calls made.
    pub memory_calls: u64,
    /// Calls per second.
    pub memory_calls_per_second: f64,
    /// Slowest single call, in microseconds.
    pub memory_call_max_us: u64,
    /// The first inventory (NVML already initialised), in microseconds.
    pub inventory_first_us: u64,
    /// Median of the following inventories, in microseconds.
    pub inventory_median_us: u64,
    /// Slowest of the following inventories, in microseconds.
    pub inventory_max_us: u64,
    /// Inventories timed after the first.
    pub inventory_runs: u32,
}
