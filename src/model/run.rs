//! The record of one launch under `oomdoc run` (`DIR/run.json`).
//!
//! The format is documented in `docs/run-record.md`; `report` and `diff` read it back, so the
//! types derive `Deserialize` too and every field that may be missing has a default. Field names
//! listed in the issue (`command`, `exit_code`, `interrupted`, `started_at`, `ended_at`,
//! `preflight`, `explain`, `memory`, `limitations`) are a contract.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::explain::{ExplainReport, Phase};
use super::gpu::{CudaOrdinal, GpuUuid, NvmlIndex};
use super::host::{HostOomFinding, HostSample, HostTimeline};
use super::machine::Inventory;
use super::{Bytes, Source};

/// File name of the record inside the run directory.
pub const RECORD_FILE: &str = "run.json";
/// File name of the child's log (stdout and stderr, lines whole) inside the run directory.
pub const LOG_FILE: &str = "log.txt";
/// File name of the PyTorch snapshot `--torch-snapshot` asks for (one process).
pub const TORCH_SNAPSHOT_FILE: &str = "torch_snapshot.pickle";

/// How the launch ended (or that it has not yet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The child is still running (the record is an intermediate state).
    #[default]
    Running,
    /// The child exited by itself with `exit_code`.
    Exited,
    /// The child was killed by `signal` (not forwarded by oomdoc).
    Signaled,
    /// oomdoc got SIGINT/SIGTERM/SIGHUP/SIGQUIT, passed it on, and the child ended.
    Interrupted,
    /// The command could not be started (not found, not executable).
    SpawnFailed,
}

/// A duration of the run for people: `850 ms`, `12.3 s`, `1m 12.3s`.
pub fn human_duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        let minutes = ms / 60_000;
        let seconds = (ms % 60_000) as f64 / 1000.0;
        format!("{minutes}m {seconds:04.1}s")
    }
}

impl RunStatus {
    /// The JSON name (`exited`, `spawn_failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Exited => "exited",
            RunStatus::Signaled => "signaled",
            RunStatus::Interrupted => "interrupted",
            RunStatus::SpawnFailed => "spawn_failed",
        }
    }
}

/// `DIR/run.json` (without `schema_version`, which `render::json::to_document` adds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunRecord {
    /// The oomdoc version that wrote the record.
    pub oomdoc_version: String,
    /// How the launch ended.
    pub status: RunStatus,
    /// The command line, redacted.
    pub command: Vec<String>,
    /// The working directory, home replaced by `~`.
    pub cwd: Option<String>,
    /// The child's exit code; 128+N when killed by signal N; 127/126 when it could not start;
    /// `None` while running.
    pub exit_code: Option<i32>,
    /// The signal that killed the child, if one did.
    pub signal: Option<i32>,
    /// oomdoc got SIGINT/SIGTERM (or SIGHUP/SIGQUIT) during the run and passed it on.
    pub interrupted: bool,
    /// The signals oomdoc received, in order, and whether each was forwarded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signals_received: Vec<ReceivedSignal>,
    /// RFC 3339 UTC with milliseconds, just before the child was spawned.
    pub started_at: String,
    /// RFC 3339 UTC with milliseconds; `None` while running.
    pub ended_at: Option<String>,
    /// Milliseconds from `started_at` to the end (or to the last update while running).
    pub duration_ms: Option<u64>,
    /// What the machine and environment looked like before the start.
    pub preflight: Preflight,
    /// The child's log next to the record.
    pub log: LogInfo,
    /// The `oomdoc explain --json` document (minus `schema_version`) of the child's log, with
    /// `t_ms` added to timeline entries that carry a line number.
    pub explain: Option<ExplainReport>,
    /// The memory timeline per device.
    pub memory: MemoryRecord,
    /// The phases seen in the log, with their times.
    pub phases: Vec<PhaseSpan>,
    /// OOM messages seen in the log, with the time their line arrived and the device by UUID.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ooms: Vec<OomEvent>,
    /// The PyTorch memory snapshot(s) `--torch-snapshot` produced.
    pub torch_snapshot: Option<TorchSnapshotRecord>,
    /// What could not be measured, and why.
    pub limitations: Vec<String>,
    /// Host memory beside the GPU: the RSS of the child's process tree, its memory cgroup
    /// before, during and after, and the host out-of-memory verdict. Absent when sampling was
    /// off (`--no-host-memory`) and in records written before it existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostRecord>,
}

/// Host memory of a run (`run.json` `host`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostRecord {
    /// Where the readings came from: `proc` (this machine's `/proc` and cgroup files) or
    /// `replay` (a recorded timeline, `--host-from`).
    pub source: String,
    /// The cgroup's memory limit (after the run, else before); `None`: no limit (or no
    /// cgroup memory controller readable).
    pub limit_bytes: Option<super::Bytes>,
    /// The cgroup's OOM-kill count before the child started.
    pub oom_kills_before: Option<u64>,
    /// The cgroup's OOM-kill count after the child ended.
    pub oom_kills_after: Option<u64>,
    /// The highest sampled tree RSS, its time, processes and phase.
    pub peak: Option<HostPeakRecord>,
    /// The highest sampled tree RSS within each phase, in phase order.
    pub peaks_by_phase: Vec<HostPeakRecord>,
    /// The verdict on the child's end (`not_killed`, `host_oom_kill`, `killed_by_signal`);
    /// `None` while the child runs.
    pub finding: Option<HostOomFinding>,
    /// The readings and the cgroup before and after.
    #[serde(flatten)]
    pub timeline: HostTimeline,
}

/// A tree RSS peak with its phase.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostPeakRecord {
    /// The phase (the record's `phases` vocabulary); `None` outside every known phase.
    pub phase: Option<String>,
    /// The reading.
    #[serde(flatten)]
    pub reading: HostSample,
}

/// A signal oomdoc received during the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReceivedSignal {
    /// Signal number (2 SIGINT, 15 SIGTERM, …).
    pub signal: i32,
    /// Milliseconds since `started_at`.
    pub t_ms: u64,
    /// Whether oomdoc sent it on to the child; a signal from the terminal (Ctrl-C) already
    /// reached the child, which shares oomdoc's process group, and is not sent twice.
    pub forwarded: bool,
    /// `terminal` (sent by the kernel: Ctrl-C, hang-up) or `process` (sent with `kill`).
    pub origin: String,
}

/// The state before the child started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Preflight {
    /// GPU inventory: devices, free memory, processes, UUIDs, CUDA ordinals.
    pub inventory: Option<Inventory>,
    /// Why there is no inventory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inventory_error: Option<String>,
    /// The environment variables that shape GPU memory use, secrets redacted.
    pub environment: BTreeMap<String, String>,
    /// Every other variable (shell-session ones aside) by name, with a digest of its redacted
    /// value instead of the value: `diff` names a variable that changed.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub other_environment: BTreeMap<String, String>,
    /// The host, without its name.
    pub host: HostInfo,
}

/// The host, without identifying it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostInfo {
    /// Always true: the host name is never recorded.
    pub hostname_redacted: bool,
    /// Whether oomdoc ran inside a container (`/.dockerenv`, `/run/.containerenv`).
    pub in_container: bool,
    /// `linux`, `macos`, …
    pub os: String,
}

/// The log file next to the record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogInfo {
    /// File name relative to the run directory.
    pub file: String,
    /// Bytes written.
    pub bytes: u64,
    /// Lines written.
    pub lines: u64,
    /// Lines from the child's stdout.
    pub stdout_lines: u64,
    /// Lines from the child's stderr.
    pub stderr_lines: u64,
}

/// The memory timeline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryRecord {
    /// Whether device memory was sampled.
    pub available: bool,
    /// Why not, when `available` is false.
    pub reason: Option<String>,
    /// Where the readings came from (NVML live, or a replayed file).
    pub source: Option<Source>,
    /// Sampling rate asked for.
    pub sample_rate_hz: f64,
    /// Width of the compaction window: within each window the minimum, the maximum and the last
    /// reading are kept (when they differ from the previous kept point).
    pub window_ms: u64,
    /// One timeline per sampled device.
    pub devices: Vec<DeviceTimeline>,
    /// How the sampler kept up.
    pub sampler: Option<SamplerStats>,
    /// CPU time oomdoc itself used during the run (all its threads), ms.
    pub oomdoc_cpu_ms: Option<f64>,
    /// Inventory taken when the first OOM line appeared in the log ("at the moment of
    /// failure"); per-process memory at that instant.
    pub inventory_at_oom: Option<Inventory>,
}

/// Cost and regularity of the sampler thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SamplerStats {
    /// Sampling rounds completed (one reading of every device each).
    pub rounds: u64,
    /// Rounds that started later than one period after their due time.
    pub late_rounds: u64,
    /// Rounds per second actually achieved.
    pub achieved_rate_hz: f64,
    /// CPU time the sampler thread used, milliseconds (`/proc/thread-self/schedstat`).
    pub cpu_ms: Option<f64>,
    /// Mean time of one device reading, microseconds.
    pub mean_read_us: Option<f64>,
}

/// The memory timeline of one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceTimeline {
    /// `GPU-…` UUID: measurements are matched by UUID, never by ordinal.
    pub uuid: GpuUuid,
    /// NVML index.
    pub index: NvmlIndex,
    /// The ordinal the child sees under its `CUDA_VISIBLE_DEVICES`.
    pub cuda_ordinal: Option<CudaOrdinal>,
    /// Product name.
    pub name: String,
    /// Total memory.
    pub total_bytes: Bytes,
    /// Used memory just before the child started.
    pub baseline_used_bytes: Option<Bytes>,
    /// Free memory just before the child started ("initial free VRAM").
    pub baseline_free_bytes: Option<Bytes>,
    /// Highest used memory seen.
    pub peak_used_bytes: Option<Bytes>,
    /// When the peak was first seen, ms since start.
    pub peak_t_ms: Option<u64>,
    /// The phase the log was in at the peak; `None` outside any known phase.
    pub peak_phase: Option<Phase>,
    /// Highest used memory inside each phase.
    pub peaks_by_phase: BTreeMap<Phase, Bytes>,
    /// `[t_ms, used_bytes]`: changes only, plus min/max within each window.
    pub samples: Vec<[u64; 2]>,
    /// The compaction window of `samples` (it doubles when a long run would keep too many points).
    pub window_ms: u64,
    /// Readings taken.
    pub sample_count: u64,
    /// Readings that failed.
    pub read_errors: u64,
    /// The last reading error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Highest memory per process on this device, from the slower inventory reads.
    pub processes: Vec<ProcessPeak>,
}

/// Highest memory of one process on one device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProcessPeak {
    /// Host PID.
    pub pid: u32,
    /// Process name, redacted.
    pub name: Option<String>,
    /// Highest used memory seen for it.
    pub peak_used_bytes: Option<Bytes>,
    /// When, ms since start.
    pub peak_t_ms: Option<u64>,
    /// Whether it is the child or one of its descendants.
    pub is_child: bool,
}

/// A phase of the launch with its times.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhaseSpan {
    /// One of the explain vocabulary: `startup`, `weights_load`, `format_conversion`,
    /// `profiling`, `kv_cache_alloc`, `cuda_graph_capture`, `inference`, `training_step`.
    pub phase: Phase,
    /// When its first line arrived, ms since start.
    pub start_t_ms: u64,
    /// When it ended (its completion line, the next phase, or the end of the run); `None` while open.
    pub end_t_ms: Option<u64>,
    /// Log line (1-based) that opened it.
    pub start_line: u64,
    /// Log line that closed it, when a completion line did.
    pub end_line: Option<u64>,
    /// Whether a completion line was seen (`false`: cut short by the next phase or the end).
    pub completed: bool,
}

/// An OOM line of the log, with its time and device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OomEvent {
    /// 1-based line in `log.txt`.
    pub line: u64,
    /// When it arrived, ms since start.
    pub t_ms: Option<u64>,
    /// The rank that printed it (torchrun's `[rankN]:` prefix), when shown.
    pub rank: Option<u32>,
    /// The CUDA ordinal in the message (`GPU 1 has a total capacity …`), as the failing process saw it.
    pub gpu_index: Option<CudaOrdinal>,
    /// The device by UUID: the inventory device with that CUDA ordinal under oomdoc's own
    /// `CUDA_VISIBLE_DEVICES` (wrong if the launcher changed it per process).
    pub device_uuid: Option<GpuUuid>,
}

/// The snapshot file(s) `--torch-snapshot` produced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TorchSnapshotRecord {
    /// The first (or only) snapshot file, relative to the run directory.
    pub file: Option<String>,
    /// Every snapshot file (one per rank under torchrun).
    pub files: Vec<String>,
    /// Whether the hook enabled memory history in at least one process.
    pub history_enabled: bool,
    /// Notes the hook wrote (which processes enabled history, failures).
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(human_duration(850), "850 ms");
        assert_eq!(human_duration(12_345), "12.3 s");
        assert_eq!(human_duration(72_300), "1m 12.3s");
        assert_eq!(human_duration(3_605_000), "60m 05.0s");
    }
}
