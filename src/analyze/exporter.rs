//! The exporter's state (issue 20): one explain stream per followed log, failures counted
//! once each, the startup breakdown of each engine, and the last failures for `/events`.
//!
//! Pure: the caller feeds decoded log bytes and the time; nothing here reads files or clocks.
//!
//! Counting rule: a log counts one failure per engine run, when `explain` first reports a
//! completed failure message (GPU OOM, host OOM kill and the other failures `explain` knows),
//! labelled with the verdict's cause and the failed phase. The messages that repeat the same
//! failure (a worker's traceback re-raised by the API server) are not counted again. When
//! the engine starts again in the same file (`input.engine_starts` grows), the stream begins
//! a fresh explain, so the next run's failure is counted and explained on its own; the
//! engine name carries over when the new run's banner was read by the old stream.

use std::collections::{BTreeMap, VecDeque};

use crate::analyze::explain::Explainer;
use crate::model::explain::{EventKind, ExplainReport};
use crate::model::exporter::{
    EngineLabels, ExporterMetrics, FailureEvent, LogLabels, OomEventLabels, StartupBreakdown,
};
use crate::model::failure::EngineName;
use crate::model::gpu::GpuUuid;
use crate::model::machine::Inventory;
use crate::model::Source;

/// The explain stream of one followed log.
#[derive(Debug)]
pub struct LogStream {
    explainer: Explainer,
    origin: LogLabels,
    counted: bool,
    starts_when_counted: u64,
    engine: EngineName,
    dirty: bool,
}

/// A failure the stream just completed.
#[derive(Debug, Clone)]
pub struct CountedFailure {
    /// The series it counts in (UUID still empty: see [`failure_gpu`]).
    pub labels: OomEventLabels,
    /// The explain report of the run that failed.
    pub report: ExplainReport,
}

impl LogStream {
    /// A stream for a log from `origin`.
    pub fn new(origin: LogLabels) -> Self {
        LogStream {
            explainer: Explainer::new(),
            origin,
            counted: false,
            starts_when_counted: 0,
            engine: EngineName::Other,
            dirty: false,
        }
    }

    /// Where the log comes from.
    pub fn origin(&self) -> &LogLabels {
        &self.origin
    }

    /// Feeds decoded log text (cut anywhere).
    pub fn push(&mut self, text: &[u8]) {
        if !text.is_empty() {
            self.explainer.push_bytes(text);
            self.dirty = true;
        }
    }

    /// Looks at what was fed since the last call: the failure completed meanwhile, if any,
    /// and the startup breakdown so far. Cheap when nothing was fed.
    pub fn check(
        &mut self,
    ) -> (
        Option<CountedFailure>,
        Option<(EngineLabels, StartupBreakdown)>,
    ) {
        if !self.dirty {
            return (None, None);
        }
        self.dirty = false;
        let report = self.explainer.report();
        if report.engine.name != EngineName::Other {
            self.engine = report.engine.name;
        }
        if self.counted && report.input.engine_starts > self.starts_when_counted {
            // The engine started again: explain its run from here on.
            self.explainer = Explainer::new();
            self.counted = false;
            return (None, None);
        }
        let breakdown = startup_breakdown(&report);
        let startup = (!breakdown.is_empty()).then(|| {
            (
                EngineLabels {
                    engine: engine_label(self.engine),
                    origin: self.origin.clone(),
                },
                breakdown,
            )
        });
        if self.counted || report.ooms.is_empty() {
            return (None, startup);
        }
        self.counted = true;
        self.starts_when_counted = report.input.engine_starts.max(1);
        let labels = OomEventLabels {
            cause: report.verdict.cause.as_str(),
            phase: report.phase.failed_in.as_str(),
            engine: engine_label(self.engine),
            uuid: GpuUuid::default(),
            origin: self.origin.clone(),
        };
        (Some(CountedFailure { labels, report }), startup)
    }
}

/// The engine as a label value: its snake_case JSON name (`vllm`, `tensorrt_llm`).
pub fn engine_label(engine: EngineName) -> String {
    serde_json::to_value(engine)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_else(|| "other".to_string())
}

/// Weights, KV cache, CUDA graphs, profiling peak (from the engine's own figures in the
/// accounting) and the KV capacity in tokens (the last KV-cache line of the timeline).
pub fn startup_breakdown(report: &ExplainReport) -> StartupBreakdown {
    let engine_figure = |key: &str| {
        report
            .accounting
            .iter()
            .find(|line| line.key == key && line.source == Source::EngineLog)
            .map(|line| line.bytes)
    };
    StartupBreakdown {
        weights_bytes: engine_figure("weights"),
        kv_cache_bytes: engine_figure("kv_cache"),
        cuda_graphs_bytes: engine_figure("cuda_graphs"),
        activation_peak_bytes: engine_figure("activation_peak"),
        kv_cache_capacity_tokens: report
            .timeline
            .iter()
            .rev()
            .filter(|event| {
                matches!(
                    event.kind,
                    EventKind::KvCacheAllocated | EventKind::KvCachePlanned
                )
            })
            .find_map(|event| event.figures.tokens),
    }
}

/// The GPU a failure happened on, when the inventory can tell: the machine's only GPU, or the
/// one GPU that processes of the same pod use now.
pub fn failure_gpu(
    inventory: Option<&Inventory>,
    origin: &LogLabels,
    process_origins: &BTreeMap<u32, LogLabels>,
) -> Option<GpuUuid> {
    let inventory = inventory?;
    if let [device] = &inventory.devices[..] {
        return Some(device.uuid.clone());
    }
    if origin.pod.is_empty() {
        return None;
    }
    let mut used: Vec<&GpuUuid> = inventory
        .devices
        .iter()
        .filter(|device| {
            device.processes.iter().any(|process| {
                process_origins.get(&process.pid).is_some_and(|labels| {
                    labels.pod == origin.pod && labels.namespace == origin.namespace
                })
            })
        })
        .map(|device| &device.uuid)
        .collect();
    used.dedup();
    match used[..] {
        [uuid] => Some(uuid.clone()),
        _ => None,
    }
}

/// Counters, gauges and the last failures, shared by the log thread and the HTTP thread.
#[derive(Debug, Default)]
pub struct ExporterState {
    oom_events: BTreeMap<OomEventLabels, u64>,
    last_oom_timestamp_seconds: Option<f64>,
    startup: BTreeMap<EngineLabels, StartupBreakdown>,
    events: VecDeque<FailureEvent>,
    events_kept: usize,
    /// Files followed now.
    pub followed_files: u64,
    /// Bytes read from followed files.
    pub log_bytes_read: u64,
}

impl ExporterState {
    /// A state that keeps the last `events_kept` failure documents.
    pub fn new(events_kept: usize) -> Self {
        ExporterState {
            events_kept,
            ..ExporterState::default()
        }
    }

    /// Counts a failure at `timestamp_seconds` and keeps its document (already redacted).
    pub fn record_failure(
        &mut self,
        labels: OomEventLabels,
        timestamp_seconds: f64,
        document: Option<FailureEvent>,
    ) {
        *self.oom_events.entry(labels).or_insert(0) += 1;
        self.last_oom_timestamp_seconds = Some(
            self.last_oom_timestamp_seconds
                .map_or(timestamp_seconds, |last| last.max(timestamp_seconds)),
        );
        if let Some(document) = document.filter(|_| self.events_kept > 0) {
            if self.events.len() >= self.events_kept {
                self.events.pop_back();
            }
            self.events.push_front(document);
        }
    }

    /// Sets the startup breakdown of one engine log (the latest wins for equal labels).
    pub fn record_startup(&mut self, labels: EngineLabels, breakdown: StartupBreakdown) {
        self.startup.insert(labels, breakdown);
    }

    /// The failure documents kept, newest first.
    pub fn events(&self) -> impl Iterator<Item = &FailureEvent> {
        self.events.iter()
    }

    /// What `/metrics` shows, with the GPU facts of this scrape.
    pub fn metrics(
        &self,
        hostname: &str,
        inventory: Option<Inventory>,
        process_origins: BTreeMap<u32, LogLabels>,
    ) -> ExporterMetrics {
        ExporterMetrics {
            hostname: hostname.to_string(),
            inventory,
            process_origins,
            oom_events: self.oom_events.clone(),
            last_oom_timestamp_seconds: self.last_oom_timestamp_seconds,
            startup: self.startup.clone(),
            followed_files: self.followed_files,
            log_bytes_read: self.log_bytes_read,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VLLM_OOM: &str =
        include_str!("../../tests/fixtures/engine_log/vllm-0.10.1-v0-oom-after-weights-load.log");

    #[test]
    fn a_failure_is_counted_once_when_its_message_completes() {
        let mut stream = LogStream::new(LogLabels {
            namespace: "inference".into(),
            pod: "vllm-0".into(),
            container: "vllm".into(),
        });
        let mut counted = Vec::new();
        // Fed in small pieces, checked after each, as the exporter does.
        for piece in VLLM_OOM.as_bytes().chunks(97) {
            stream.push(piece);
            if let (Some(failure), _) = stream.check() {
                counted.push(failure.labels);
            }
        }
        // And again, as a repeat of the same log in the same run.
        assert_eq!(counted.len(), 1, "{counted:?}");
        let labels = &counted[0];
        assert_eq!(labels.engine, "vllm");
        assert_eq!(labels.origin.pod, "vllm-0");
        assert_ne!(labels.cause, "");
    }

    /// A vLLM run that starts (banner), loads weights and fails in profiling.
    const VLLM_RUN: &str = "INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\n\
INFO 04-02 21:42:59 model_runner.py:1] Starting to load model meta-llama/Llama-2-7b...\n\
INFO 04-02 21:43:10 model_runner.py:2] Loading model weights took 12.5523 GB\n\
Traceback (most recent call last):\n\
  File \"/x/vllm/worker/worker.py\", line 10, in determine_num_available_blocks\n\
  File \"/x/vllm/worker/model_runner.py\", line 20, in profile_run\n\
  File \"/x/model.py\", line 30, in forward\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n\
INFO 04-02 21:44:00 launcher.py:1] Shutting down\n";

    #[test]
    fn a_restarted_engine_counts_again() {
        let mut stream = LogStream::new(LogLabels::default());
        let mut count = 0;
        let mut phases = Vec::new();
        for _ in 0..2 {
            for line in VLLM_RUN.split_inclusive('\n') {
                stream.push(line.as_bytes());
                if let (Some(failure), _) = stream.check() {
                    count += 1;
                    phases.push((failure.labels.engine, failure.labels.phase));
                }
            }
        }
        assert_eq!(count, 2);
        assert_eq!(
            phases,
            [
                ("vllm".to_string(), "profiling"),
                ("vllm".to_string(), "profiling")
            ]
        );
    }

    /// A failure document seen at `at`: the explain report of the vLLM log.
    fn event(at: f64) -> FailureEvent {
        let mut stream = LogStream::new(LogLabels::default());
        stream.push(VLLM_OOM.as_bytes());
        let (Some(failure), _) = stream.check() else {
            panic!("the vLLM log holds a failure");
        };
        FailureEvent {
            labels: (&failure.labels).into(),
            observed_at_seconds: at,
            report: failure.report,
        }
    }

    #[test]
    fn events_keep_the_newest_first_and_are_bounded() {
        let mut state = ExporterState::new(2);
        for index in 0..3 {
            state.record_failure(
                OomEventLabels::default(),
                f64::from(index),
                Some(event(f64::from(index))),
            );
        }
        let kept: Vec<f64> = state.events().map(|e| e.observed_at_seconds).collect();
        assert_eq!(kept, [2.0, 1.0]);
        let metrics = state.metrics("node", None, BTreeMap::new());
        assert_eq!(metrics.oom_events[&OomEventLabels::default()], 3);
        assert_eq!(metrics.last_oom_timestamp_seconds, Some(2.0));
    }
}
