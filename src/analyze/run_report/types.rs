//! The report's typed facts, one struct per section; built by this module, laid out by
//! `render::run_report`.

use super::*;
pub use crate::model::run::{DeviceTimeline, PhaseSpan};

/// Everything known about one run, redacted, before analysis.
#[derive(Debug, Clone, Default)]
pub struct RunInput {
    /// The run directory as given (redacted).
    pub label: String,
    /// The record, with the problems found while reading it.
    pub record: RecordRead,
    /// The log scan, when the log could be read.
    pub log: Option<LogScan>,
    /// Why the log could not be read.
    pub log_problem: Option<String>,
    /// Probe document path (redacted) and the parts of it a report uses.
    pub probe: Option<(String, ProbeRead)>,
    /// The checkpoint's lower bound.
    pub checkpoint: Option<CheckpointFacts>,
    /// Why the checkpoint could not be read.
    pub checkpoint_problem: Option<String>,
}

/// The whole report (`oomdoc report --format json` body).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// One section per run, in the order given.
    pub runs: Vec<RunReport>,
    /// With exactly two runs: the first compared with the second.
    pub comparison: Option<Comparison>,
}

/// A value with the source it came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Fact {
    /// What it is.
    pub name: String,
    /// Its value as text.
    pub value: String,
    /// Where it came from.
    pub source: String,
}

/// A byte figure with its source.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figure {
    /// What it is, in the framework's own words.
    pub name: String,
    /// Exact bytes.
    pub bytes: u64,
    /// Where it came from.
    pub source: String,
}

/// How the run ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunEnd {
    /// `exited`, `interrupted`, …; `None` when the record does not say.
    pub status: Option<RunStatus>,
    /// Exit code.
    pub exit_code: Option<i64>,
    /// Signal.
    pub signal: Option<i64>,
    /// Whether oomdoc forwarded SIGINT/SIGTERM.
    pub interrupted: Option<bool>,
    /// Start time.
    pub started_at: Option<String>,
    /// End time.
    pub ended_at: Option<String>,
    /// Duration.
    pub duration_ms: Option<u64>,
    /// Whether the run failed.
    pub failed: bool,
    /// One sentence.
    pub summary: String,
}

/// The model.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelFacts {
    /// Name or path.
    pub name: Option<String>,
    /// Weights format.
    pub format: Option<String>,
    /// dtype.
    pub dtype: Option<String>,
    /// Quantization.
    pub quantization: Option<String>,
    /// Maximum context length.
    pub max_model_len: Option<String>,
    /// Where these came from.
    pub source: Option<String>,
    /// The checkpoint's own headers, when `--checkpoint` was given.
    pub checkpoint: Option<CheckpointFacts>,
}

/// One GPU before start: the device as the inventory before the start read it, and the same
/// device in the inventory taken when the first OOM line appeared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuAtStart {
    /// The device before start.
    pub device: Device,
    /// Whether the run could see it (its CUDA numbering includes it).
    pub visible_to_run: bool,
    /// The same device (by UUID) when the first OOM line appeared.
    pub at_oom: Option<Device>,
    /// Source of these figures.
    pub source: String,
}

/// A process in the report's JSON: its PID, name and memory (the inventory's other fields are
/// in `run.json`).
#[derive(Serialize)]
struct ProcessJson<'a> {
    pid: u32,
    name: &'a Option<String>,
    used_bytes: Option<Bytes>,
    unavailable_reason: &'a Option<String>,
}

fn processes_json(processes: &[GpuProcess]) -> Vec<ProcessJson<'_>> {
    processes
        .iter()
        .map(|process| ProcessJson {
            pid: process.pid,
            name: &process.name,
            used_bytes: process.used_bytes,
            unavailable_reason: &process.unavailable_reason,
        })
        .collect()
}

/// The report's JSON of a GPU (unchanged since the report had its own copy of the type).
impl Serialize for GpuAtStart {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let device = &self.device;
        let non_empty = |text: &'_ str| (!text.is_empty()).then(|| text.to_owned());
        let memory = &device.memory;
        let at_oom = self.at_oom.as_ref();
        let mut gpu = serializer.serialize_struct("GpuAtStart", 14)?;
        gpu.serialize_field("index", &device.index)?;
        gpu.serialize_field("uuid", &non_empty(&device.uuid))?;
        gpu.serialize_field("name", &non_empty(&device.name))?;
        gpu.serialize_field("pci_bus_id", &non_empty(&device.pci_bus_id))?;
        gpu.serialize_field("cuda_ordinal", &device.cuda_ordinal)?;
        gpu.serialize_field("visible_to_run", &self.visible_to_run)?;
        gpu.serialize_field("total_bytes", &memory.total_bytes)?;
        gpu.serialize_field("reserved_bytes", &memory.reserved_bytes)?;
        gpu.serialize_field("used_before_bytes", &memory.used_bytes)?;
        gpu.serialize_field("free_before_bytes", &memory.free_bytes)?;
        gpu.serialize_field("processes_before", &processes_json(&device.processes))?;
        gpu.serialize_field("free_at_oom_bytes", &at_oom.map(|d| d.memory.free_bytes))?;
        let processes_at_oom = at_oom.map_or_else(Vec::new, |d| processes_json(&d.processes));
        gpu.serialize_field("processes_at_oom", &processes_at_oom)?;
        gpu.serialize_field("source", &self.source)?;
        gpu.end()
    }
}

/// Failure phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FailureFacts {
    /// Whether the failure is a GPU OOM.
    pub is_gpu_oom: Option<bool>,
    /// Phase in progress.
    pub failed_in: Option<Phase>,
    /// Last completed phase.
    pub last_completed: Option<Phase>,
    /// Whether the server accepted requests.
    pub server_was_ready: Option<bool>,
    /// What that means, in one sentence.
    pub note: Option<String>,
}

/// One timeline entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TimelineEntry {
    /// ms since start, when known.
    pub t_ms: Option<u64>,
    /// Phase.
    pub phase: Phase,
    /// Event.
    pub event: String,
    /// Detail.
    pub detail: Option<String>,
}

/// The report's JSON of the record's phase spans: phase, start and end on the run's clock
/// (the log lines that opened and closed them are in `run.json`).
fn spans_json<S: serde::Serializer>(spans: &[PhaseSpan], serializer: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Span {
        phase: Phase,
        start_t_ms: u64,
        end_t_ms: Option<u64>,
    }
    serializer.collect_seq(spans.iter().map(|span| Span {
        phase: span.phase,
        start_t_ms: span.start_t_ms,
        end_t_ms: span.end_t_ms,
    }))
}

/// One device's memory over time as the report shows it: the record's own timeline (its
/// samples sorted by time and reduced to at most [`CHART_POINTS`] points, min and max per time
/// bucket kept so short peaks survive) and its peaks by phase in launch order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceMemory {
    /// The record's timeline of the device.
    pub timeline: DeviceTimeline,
    /// Peaks per phase, in the order the launch went through the phases.
    pub peaks_by_phase: Vec<(Phase, Bytes)>,
}

/// The report's JSON of a device (unchanged since the report had its own copy of the type):
/// the timeline's figures, with `peaks_by_phase` as a list in launch order.
impl Serialize for DeviceMemory {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        #[derive(Serialize)]
        struct PhasePeak {
            phase: Phase,
            peak_used_bytes: Bytes,
        }
        let timeline = &self.timeline;
        let non_empty = |text: &'_ str| (!text.is_empty()).then(|| text.to_owned());
        let peaks: Vec<PhasePeak> = self
            .peaks_by_phase
            .iter()
            .map(|&(phase, peak_used_bytes)| PhasePeak {
                phase,
                peak_used_bytes,
            })
            .collect();
        let mut device = serializer.serialize_struct("DeviceMemory", 12)?;
        device.serialize_field("uuid", &non_empty(&timeline.uuid))?;
        device.serialize_field("name", &non_empty(&timeline.name))?;
        device.serialize_field("index", &timeline.index)?;
        device.serialize_field("total_bytes", &timeline.total_bytes)?;
        device.serialize_field("baseline_used_bytes", &timeline.baseline_used_bytes)?;
        device.serialize_field("peak_used_bytes", &timeline.peak_used_bytes)?;
        device.serialize_field("peak_t_ms", &timeline.peak_t_ms)?;
        device.serialize_field("peak_phase", &timeline.peak_phase)?;
        device.serialize_field("peaks_by_phase", &peaks)?;
        device.serialize_field("samples", &timeline.samples)?;
        device.serialize_field("sample_count", &timeline.sample_count)?;
        device.serialize_field("processes", &timeline.processes)?;
        device.end()
    }
}

/// The memory section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MemoryFacts {
    /// Whether there is a timeline.
    pub available: bool,
    /// Why not.
    pub reason: Option<String>,
    /// Source (`nvml`).
    pub source: Option<String>,
    /// Sampling rate.
    pub sample_rate_hz: Option<f64>,
    /// Run length, for the time axis.
    pub duration_ms: Option<u64>,
    /// When the OOM happened on the run's clock.
    pub oom_t_ms: Option<u64>,
    /// How that time was found.
    pub oom_t_source: Option<String>,
    /// The device the OOM message named, by UUID (`oomdoc run` maps its CUDA ordinal).
    pub oom_device_uuid: Option<String>,
    /// The record's phase spans.
    #[serde(serialize_with = "spans_json")]
    pub phases: Vec<PhaseSpan>,
    /// Per device.
    pub devices: Vec<DeviceMemory>,
}

/// `fit`'s lower bound next to what was measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FitVsMeasured {
    /// Weights lower bound.
    pub lower_bound: Option<Figure>,
    /// Weights as loaded, from the engine log.
    pub weights_loaded: Option<Figure>,
    /// Peak used on the device.
    pub measured_peak: Option<Figure>,
    /// Device capacity.
    pub capacity: Option<Figure>,
    /// What the comparison says.
    pub note: String,
}

/// The minimal reproducing request.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Reproduction {
    /// Whether a request is needed at all to reproduce the failure.
    pub request_needed: Option<bool>,
    /// The request, when known.
    pub request: Option<String>,
    /// Where it came from.
    pub source: Option<String>,
    /// Explanation.
    pub note: String,
}

/// One check.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Check {
    /// Whether it was checked and passed.
    pub checked: bool,
    /// What shows it (or why not).
    pub evidence: String,
}

/// Does the configuration only load, or was it shown to serve?
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Readiness {
    /// `failed`, `not_loaded`, `loads_unverified`, `short_request_only`, `checked`.
    pub state: String,
    /// Whether the configuration loaded.
    pub loaded: bool,
    /// A short request served.
    pub short_request: Check,
    /// The next real scenario (long inputs, concurrency) checked.
    pub next_scenario: Check,
    /// What remains unverified.
    pub unverified: Vec<String>,
    /// One sentence.
    pub summary: String,
    /// For a configuration that did not fail: the limit it was run with (a working
    /// configuration with its stated limit), from the command line, the log and the timeline.
    pub stated_limit: Option<String>,
}

/// The run's verdict and next steps (from the engine-log diagnosis or the record).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunVerdict {
    /// Cause.
    pub cause: String,
    /// The cause's class word from explain (`transient_peak`, `weights_do_not_fit`, …).
    pub cause_kind: Option<String>,
    /// Evidence.
    pub evidence: Vec<String>,
    /// Next steps.
    pub next_steps: Vec<String>,
    /// Where the verdict came from.
    pub source: String,
}

/// Whether new hardware is needed, in one word.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnerKind {
    /// The card is too small for the model: no setting fixes it.
    HardwareLimit,
    /// A setting (or another process on the card) is the problem.
    ConfigurationError,
    /// The run did not fail.
    WorkingConfiguration,
    /// The failure is not a GPU out-of-memory.
    NotAGpuOom,
    /// Not yet decided.
    #[default]
    Undetermined,
}

impl OwnerKind {
    /// The JSON word (`hardware_limit`).
    pub fn as_str(self) -> &'static str {
        match self {
            OwnerKind::HardwareLimit => "hardware_limit",
            OwnerKind::ConfigurationError => "configuration_error",
            OwnerKind::WorkingConfiguration => "working_configuration",
            OwnerKind::NotAGpuOom => "not_a_gpu_oom",
            OwnerKind::Undetermined => "undetermined",
        }
    }

    /// Words for a person (`hardware limit`).
    pub fn label(self) -> &'static str {
        match self {
            OwnerKind::HardwareLimit => "hardware limit",
            OwnerKind::ConfigurationError => "configuration error",
            OwnerKind::WorkingConfiguration => "working configuration",
            OwnerKind::NotAGpuOom => "not a GPU out-of-memory",
            OwnerKind::Undetermined => "undetermined",
        }
    }
}

/// What the owner should do.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OwnerSummary {
    /// Hardware limit, configuration error, working configuration, not a GPU OOM, undetermined.
    pub kind: OwnerKind,
    /// The change to make (configuration) or the card class to get (hardware).
    pub action: Option<String>,
    /// Plain-language paragraph.
    pub text: String,
    /// The engine-log diagnosis's own summary, when explain gave one.
    pub from_explain: Option<String>,
}

/// One run's section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunReport {
    /// Run directory (redacted).
    pub run: String,
    /// How it ended.
    pub status: RunEnd,
    /// Command line (redacted).
    pub command: Vec<String>,
    /// Working directory (redacted).
    pub cwd: Option<String>,
    /// Model.
    pub model: ModelFacts,
    /// Engine.
    pub engine: Option<Fact>,
    /// Versions: driver, CUDA, torch, engine, …
    pub versions: Vec<Fact>,
    /// GPUs before start.
    pub gpus: Vec<GpuAtStart>,
    /// Relevant environment (redacted).
    pub environment: BTreeMap<String, String>,
    /// Failure phase.
    pub failure: FailureFacts,
    /// Timeline.
    pub timeline: Vec<TimelineEntry>,
    /// OOM figures.
    pub oom: Vec<Figure>,
    /// Other processes named in the OOM text.
    pub oom_other_processes: Vec<Figure>,
    /// Number of OOM messages in the log.
    pub oom_count: usize,
    /// Log lines before the failure.
    pub log_context: Vec<String>,
    /// Memory over time.
    pub memory: MemoryFacts,
    /// Lower bound vs measured.
    pub fit: FitVsMeasured,
    /// A training run (training steps, no request served, no probe): the serving-only
    /// sections (reproducing request, concurrency, probe) are left out of its report.
    pub training: bool,
    /// Minimal reproducing request.
    pub reproduction: Reproduction,
    /// Concurrency facts.
    pub concurrency: Vec<Fact>,
    /// Probe summary, when a probe was given.
    pub probe: Option<ProbeSummary>,
    /// Whether the configuration was shown to serve, not only to load.
    pub readiness: Readiness,
    /// Verdict.
    pub verdict: RunVerdict,
    /// What the owner should do.
    pub owner_summary: OwnerSummary,
    /// What could not be measured or read.
    pub limitations: Vec<String>,
    /// Host memory (without its samples) and the host out-of-memory verdict, when the run
    /// sampled it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::model::run::HostRecord>,
}

/// What a probe showed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProbeSummary {
    /// Probe document (redacted path).
    pub file: String,
    /// Verdict word.
    pub verdict: Option<String>,
    /// Requests per phase: (phase, succeeded, total).
    pub phases: Vec<(String, u64, u64)>,
    /// Plateau level.
    pub plateau_bytes: Option<u64>,
}
