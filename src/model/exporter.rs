//! What `oomdoc exporter` serves (issue 20): GPU inventory, failures counted from followed
//! logs, and each engine's startup memory breakdown, as plain data.
//!
//! Label values here are bounded vocabularies (cause, phase, engine) or ids (UUID, pod,
//! namespace, container, pid): never free text. Produced by `analyze::exporter`, rendered by
//! `render::prometheus`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::explain::ExplainReport;
use super::gpu::GpuUuid;
use super::machine::Inventory;
use super::Bytes;

/// Where a followed log comes from (empty strings when the path does not say).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogLabels {
    /// Kubernetes namespace.
    pub namespace: String,
    /// Pod name.
    pub pod: String,
    /// Container name (Kubernetes) or short container id (docker).
    pub container: String,
}

/// The labels of one `oomdoc_oom_events_total` series.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OomEventLabels {
    /// `Cause::as_str` (`kv_cache_budget`, `host_memory`, …).
    pub cause: &'static str,
    /// `Phase::as_str` (`weights_load`, `inference`, …).
    pub phase: &'static str,
    /// The engine, snake_case as in the explain JSON (`vllm`, `llamacpp`, `other`).
    pub engine: String,
    /// The GPU's `GPU-…` UUID when known, else empty (the label is then `UUID=""`).
    pub uuid: GpuUuid,
    /// Where the log comes from.
    pub origin: LogLabels,
}

/// One failure as `/events` serves it: its series' labels, when it was seen, and the explain
/// report (already redacted). Fields in the order the document has always had.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureEvent {
    /// The labels of its `oomdoc_oom_events_total` series.
    pub labels: FailureEventLabels,
    /// Seconds since the Unix epoch when the exporter read it.
    pub observed_at_seconds: f64,
    /// `oomdoc explain --json` of the failure.
    pub report: ExplainReport,
}

/// [`OomEventLabels`] as `/events` writes them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureEventLabels {
    /// The GPU's UUID, or empty.
    #[serde(rename = "UUID")]
    pub uuid: GpuUuid,
    /// The cause class.
    pub cause: &'static str,
    /// Container name or short id.
    pub container: String,
    /// The engine.
    pub engine: String,
    /// Kubernetes namespace.
    pub namespace: String,
    /// The phase.
    pub phase: &'static str,
    /// Pod name.
    pub pod: String,
}

impl From<&OomEventLabels> for FailureEventLabels {
    fn from(labels: &OomEventLabels) -> Self {
        FailureEventLabels {
            uuid: labels.uuid.clone(),
            cause: labels.cause,
            container: labels.origin.container.clone(),
            engine: labels.engine.clone(),
            namespace: labels.origin.namespace.clone(),
            phase: labels.phase,
            pod: labels.origin.pod.clone(),
        }
    }
}

/// An engine's startup memory breakdown, as its log printed it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StartupBreakdown {
    /// Weights on the GPU.
    pub weights_bytes: Option<Bytes>,
    /// The KV-cache budget or size.
    pub kv_cache_bytes: Option<Bytes>,
    /// Memory taken by CUDA-graph capture.
    pub cuda_graphs_bytes: Option<Bytes>,
    /// Peak activation memory of the profiling pass.
    pub activation_peak_bytes: Option<Bytes>,
    /// KV-cache capacity in tokens.
    pub kv_cache_capacity_tokens: Option<u64>,
}

impl StartupBreakdown {
    /// Whether the log showed none of the figures.
    pub fn is_empty(&self) -> bool {
        self == &StartupBreakdown::default()
    }
}

/// The labels of an engine's startup gauges.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EngineLabels {
    /// The engine, snake_case (`vllm`).
    pub engine: String,
    /// Where the log comes from.
    pub origin: LogLabels,
}

/// Everything one scrape of `/metrics` shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExporterMetrics {
    /// The node name, as dcgm-exporter's `Hostname` label.
    pub hostname: String,
    /// The GPUs now; `None` when the GPU source failed (see `gpu_source_up`).
    pub inventory: Option<Inventory>,
    /// Containers of GPU processes by host PID, where known.
    pub process_origins: BTreeMap<u32, LogLabels>,
    /// Failures counted per label set.
    pub oom_events: BTreeMap<OomEventLabels, u64>,
    /// Seconds since the Unix epoch when the last failure was counted.
    pub last_oom_timestamp_seconds: Option<f64>,
    /// Startup breakdown per engine log.
    pub startup: BTreeMap<EngineLabels, StartupBreakdown>,
    /// Files followed now.
    pub followed_files: u64,
    /// Bytes read from followed files since start.
    pub log_bytes_read: u64,
}
