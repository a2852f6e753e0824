//! Analyse the machine report model.
//!
//! Takes redacted run records (plus, when given, the log text, a probe document and the
//! checkpoint's lower bound) and builds the report: model, GPUs, free memory before start,
//! phase and timeline, OOM figures with their sources, reproduction, versions, memory peaks
//! per phase, readiness, verdict and owner summary, limitations.
//!
//! Pure: no I/O and no formatting for output; renderers only lay this model out.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::model::cards::CARDS;
use crate::model::explain::Phase;
use crate::model::host::HostOomFinding;
use crate::model::machine::{Device, GpuProcess};
use crate::model::report::{value_text, ProbeView};
use crate::model::{Bytes, Source};
use crate::parse::run_record::RecordRead;

use super::compare::{compare, describe_outcome, run_failed, Comparison};

/// Most points a device's memory series keeps for the chart (min and max per time bucket).
pub const CHART_POINTS: usize = 800;

pub use crate::model::report::CheckpointFacts;

/// What a scan of the child's log found (requests served, concurrency, the failing request).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LogScan {
    /// HTTP requests answered with 2xx, counted from access-log lines.
    pub requests_served: u64,
    /// Requests answered with an error status.
    pub requests_failed: u64,
    /// The last request line before the first out-of-memory line, when there is one.
    pub request_before_oom: Option<String>,
    /// vLLM `Maximum concurrency for N tokens per request: X` (as printed).
    pub max_concurrency: Option<String>,
    /// Highest `Running: N reqs` in the periodic stats lines.
    pub max_running_requests: Option<u64>,
    /// The lines before the first out-of-memory line and that line, at most
    /// [`CONTEXT_LINES`].
    pub lines_before_oom: Vec<String>,
    /// Whether the scan saw only part of the log.
    pub partial: bool,
}

/// Log lines kept before the failure (dozens, not one).
pub const CONTEXT_LINES: usize = 40;

/// Scans a (redacted) log for requests and concurrency. Lines are matched loosely: uvicorn
/// access lines (`"POST /v1/chat/completions HTTP/1.1" 200`), vLLM request lines
/// (`Received request …`), vLLM's KV sizing and periodic stats lines (`formats.md` §3.2, §3.4).
pub fn scan_log(text: &str, partial: bool) -> LogScan {
    let mut scan = LogScan {
        partial,
        ..LogScan::default()
    };
    let mut last_request: Option<String> = None;
    let mut seen_oom = false;
    let mut recent: std::collections::VecDeque<&str> = std::collections::VecDeque::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        let lower = line.to_ascii_lowercase();
        if !seen_oom {
            if recent.len() == CONTEXT_LINES - 1 {
                recent.pop_front();
            }
            recent.push_back(line);
        }
        if !seen_oom && (lower.contains("out of memory") || lower.contains("outofmemoryerror")) {
            seen_oom = true;
            scan.request_before_oom = last_request.clone();
            scan.lines_before_oom = recent.iter().map(|line| shorten(line, 400)).collect();
        }
        if let Some(status) = access_log_status(line) {
            if (200..300).contains(&status) {
                scan.requests_served += 1;
            } else {
                scan.requests_failed += 1;
            }
            last_request = Some(shorten(line.trim(), 300));
        } else if line.contains("Received request") || line.contains("Added request") {
            last_request = Some(shorten(line.trim(), 300));
        }
        if let Some(position) = line.find("Maximum concurrency for ") {
            scan.max_concurrency = Some(line[position..].trim().to_owned());
        }
        if let Some(position) = line.find("Running: ") {
            let rest = &line[position + "Running: ".len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(running) = digits.parse::<u64>() {
                if rest[digits.len()..].starts_with(" req") {
                    scan.max_running_requests =
                        Some(scan.max_running_requests.unwrap_or(0).max(running));
                }
            }
        }
    }
    scan
}

/// The status of an access-log line such as `INFO:  127.0.0.1:5 - "POST /v1/completions HTTP/1.1" 200 OK`.
fn access_log_status(line: &str) -> Option<u16> {
    let start = line.find("\"POST /").or_else(|| line.find("\"GET /v1/"))?;
    let rest = &line[start + 1..];
    let close = rest.find('"')?;
    let request = &rest[..close];
    if !(request.contains("/v1/") || request.contains("/generate")) {
        return None;
    }
    rest[close + 1..].split_whitespace().next()?.parse().ok()
}

fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(limit).collect();
        short.push('…');
        short
    }
}

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
    /// Probe document path (redacted) and content.
    pub probe: Option<(String, ProbeView)>,
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
pub struct RunStatus {
    /// `exited`, `interrupted`, …
    pub status: Option<String>,
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

/// A GPU process before start.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProcessFacts {
    /// PID.
    pub pid: Option<u32>,
    /// Name.
    pub name: Option<String>,
    /// Bytes used.
    pub used_bytes: Option<u64>,
    /// Why `used_bytes` is missing.
    pub unavailable_reason: Option<String>,
}

/// One GPU before start.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GpuFacts {
    /// NVML index.
    pub index: Option<u32>,
    /// UUID.
    pub uuid: Option<String>,
    /// Product name.
    pub name: Option<String>,
    /// PCI bus id.
    pub pci_bus_id: Option<String>,
    /// CUDA ordinal in the run's environment; `None` when hidden from the run.
    pub cuda_ordinal: Option<u32>,
    /// Whether the run could see it.
    pub visible_to_run: bool,
    /// Total.
    pub total_bytes: Option<u64>,
    /// Driver-reserved.
    pub reserved_bytes: Option<u64>,
    /// Used before start.
    pub used_before_bytes: Option<u64>,
    /// Free before start.
    pub free_before_bytes: Option<u64>,
    /// Processes before start.
    pub processes_before: Vec<ProcessFacts>,
    /// Free memory when the first OOM line appeared (an inventory taken then).
    pub free_at_oom_bytes: Option<u64>,
    /// Processes when the first OOM line appeared.
    pub processes_at_oom: Vec<ProcessFacts>,
    /// Source of these figures.
    pub source: String,
}

/// Failure phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FailureFacts {
    /// Whether the failure is a GPU OOM.
    pub is_gpu_oom: Option<bool>,
    /// Phase in progress.
    pub failed_in: Option<String>,
    /// Last completed phase.
    pub last_completed: Option<String>,
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
    pub phase: Option<String>,
    /// Event.
    pub event: String,
    /// Detail.
    pub detail: Option<String>,
}

/// A phase span on the run's clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PhaseSpan {
    /// Phase.
    pub phase: String,
    /// Start.
    pub start_t_ms: u64,
    /// End (`None` while in progress at the end of the record).
    pub end_t_ms: Option<u64>,
}

/// The peak of one phase on one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PhasePeak {
    /// Phase.
    pub phase: String,
    /// Peak used bytes.
    pub peak_used_bytes: u64,
}

/// Memory over time of one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DeviceTimeline {
    /// UUID.
    pub uuid: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// NVML index.
    pub index: Option<u32>,
    /// Total.
    pub total_bytes: Option<u64>,
    /// Used before the child started.
    pub baseline_used_bytes: Option<u64>,
    /// Peak.
    pub peak_used_bytes: Option<u64>,
    /// When.
    pub peak_t_ms: Option<u64>,
    /// In which phase.
    pub peak_phase: Option<String>,
    /// Peaks per phase, in launch order.
    pub peaks_by_phase: Vec<PhasePeak>,
    /// `[t_ms, used_bytes]`, reduced to at most [`CHART_POINTS`] points (min and max per
    /// time bucket kept, so short peaks survive).
    pub samples: Vec<(u64, u64)>,
    /// Samples taken.
    pub sample_count: Option<u64>,
    /// Highest memory of each process seen on this device during the run.
    pub processes: Vec<ProcessPeak>,
}

/// Highest memory of one process during the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProcessPeak {
    /// Host PID.
    pub pid: Option<u32>,
    /// Name (redacted).
    pub name: Option<String>,
    /// Highest used bytes.
    pub peak_used_bytes: Option<u64>,
    /// When.
    pub peak_t_ms: Option<u64>,
    /// Whether it is the launched command or one of its children.
    pub is_child: Option<bool>,
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
    /// Phase spans.
    pub phases: Vec<PhaseSpan>,
    /// Per device.
    pub devices: Vec<DeviceTimeline>,
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

/// Verdict and next steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Verdict {
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

/// What the owner should do.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OwnerSummary {
    /// `hardware_limit`, `configuration_error`, `working_configuration`, `not_a_gpu_oom`, `undetermined`.
    pub kind: String,
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
    pub status: RunStatus,
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
    pub gpus: Vec<GpuFacts>,
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
    pub verdict: Verdict,
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

/// Builds the report for the runs, with a comparison when there are exactly two.
pub fn build(inputs: &[RunInput]) -> Report {
    let mut runs: Vec<RunReport> = inputs.iter().map(run_report).collect();
    let comparison = match inputs {
        [a, b] => {
            let comparison = compare(
                &a.label,
                &a.record,
                a.checkpoint.as_ref(),
                &b.label,
                &b.record,
                b.checkpoint.as_ref(),
            );
            add_comparison_to_owner_summary(&mut runs, &comparison);
            Some(comparison)
        }
        _ => None,
    };
    Report { runs, comparison }
}

fn add_comparison_to_owner_summary(runs: &mut [RunReport], comparison: &Comparison) {
    let (a_failed, b_failed) = (comparison.outcome.a.failed, comparison.outcome.b.failed);
    if a_failed == b_failed {
        return;
    }
    let (failing, working_label) = if a_failed {
        (0, comparison.run_b.as_str())
    } else {
        (1, comparison.run_a.as_str())
    };
    let Some(run) = runs.get_mut(failing) else {
        return;
    };
    let sentence = match comparison.changes.as_slice() {
        [] => format!(
            " The working run `{working_label}` has the same recorded inputs, so the failure depends on something not recorded."
        ),
        [change] => {
            let describe = |value: &Value| value_text(value).unwrap_or_else(|| "absent".to_owned());
            let (from, to) = if a_failed {
                (&change.a, &change.b)
            } else {
                (&change.b, &change.a)
            };
            let action = format!("{}: {} → {}", change.field, describe(from), describe(to));
            if run.owner_summary.kind != "hardware_limit" {
                run.owner_summary.kind = "configuration_error".to_owned();
                run.owner_summary.action = Some(action.clone());
            }
            format!(
                " The working run `{working_label}` differs in one input only ({action}), which shows that change is enough on this hardware."
            )
        }
        many => format!(
            " The working run `{working_label}` differs in {} inputs at once, so it does not show which change is needed: change one thing at a time.",
            many.len()
        ),
    };
    run.owner_summary.text.push_str(&sentence);
}

fn object_text(value: &Value, keys: &[&str]) -> Option<String> {
    match value {
        Value::Object(map) => keys
            .iter()
            .find_map(|key| map.get(*key).and_then(value_text)),
        Value::String(text) if keys.contains(&"name") => Some(text.clone()),
        _ => None,
    }
}

/// An event's time on the run's clock: `t_ms` (added by `oomdoc run`), else explain's
/// `seconds_since_start` (the log's own clock, close to the run's).
fn event_t_ms(event: &Value) -> Option<u64> {
    object_u64(event, &["t_ms"]).or_else(|| {
        event
            .get("seconds_since_start")
            .and_then(Value::as_f64)
            .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
            .map(|seconds| (seconds * 1000.0).round() as u64)
    })
}

/// An event's byte figure: top-level or in explain's `figures`.
fn event_bytes(event: &Value) -> Option<u64> {
    object_u64(event, &["bytes", "weights_bytes", "memory_bytes"])
        .or_else(|| event.get("figures").and_then(|f| object_u64(f, &["bytes"])))
}

fn object_u64(value: &Value, keys: &[&str]) -> Option<u64> {
    match value {
        Value::Object(map) => keys
            .iter()
            .find_map(|key| map.get(*key).and_then(Value::as_u64)),
        _ => None,
    }
}

/// The model argument of a command line: `--model X`, or the positional after `serve`.
fn model_from_argv(argv: &[String]) -> Option<String> {
    let parsed = super::compare::parse_argv(argv);
    if let Some(model) = parsed
        .flags
        .get("--model")
        .or_else(|| parsed.flags.get("-m"))
    {
        return Some(model.clone());
    }
    let serve = parsed.positional.iter().position(|arg| arg == "serve")?;
    parsed.positional.get(serve + 1).cloned()
}

fn run_report(input: &RunInput) -> RunReport {
    let record = &input.record;
    let explain = record.explain.clone().unwrap_or_default();
    let mut limitations: Vec<String> = Vec::new();
    limitations.extend(input.record.problems.iter().cloned());
    limitations.extend(record.run.limitations.iter().cloned());
    if record.explain.is_none() {
        limitations.push(
            "the record has no `explain` result: phase, timeline and verdict are unknown"
                .to_owned(),
        );
    }
    if record.is_running() {
        limitations.push(
            "the record is unfinished (`status` is `running`): it was last written while the \
             command still ran (oomdoc is still running, or it was stopped before the end); \
             the outcome, exit code and later peaks are missing"
                .to_owned(),
        );
    }

    // Model and format: from the log, then the command line, and the checkpoint headers.
    let log_model = explain.model.clone().unwrap_or(Value::Null);
    let mut model = ModelFacts {
        name: object_text(&log_model, &["name", "id", "model", "path"]),
        format: object_text(&log_model, &["format", "weights_format", "load_format"]),
        dtype: object_text(&log_model, &["dtype", "torch_dtype"]),
        quantization: object_text(&log_model, &["quantization", "quant"]),
        max_model_len: object_text(
            &log_model,
            &["max_model_len", "max_seq_len", "context_length"],
        )
        .or_else(|| {
            explain
                .config
                .as_ref()
                .and_then(|config| object_text(config, &["max_model_len"]))
        }),
        source: (!log_model.is_null()).then(|| "engine log".to_owned()),
        checkpoint: input.checkpoint.clone(),
    };
    if model.name.is_none() {
        if let Some(name) = model_from_argv(&record.run.command) {
            model.name = Some(name);
            model.source = Some(match model.source {
                Some(_) => "engine log; name from the command line".to_owned(),
                None => "command line".to_owned(),
            });
        }
    }
    match (&input.checkpoint, &input.checkpoint_problem) {
        (_, Some(problem)) => limitations.push(problem.clone()),
        (None, None) => limitations.push(
            "no checkpoint given (`--checkpoint PATH`): no lower bound from the checkpoint's own headers".to_owned(),
        ),
        _ => {}
    }

    let status = run_status(record);
    let engine = explain.engine.clone().and_then(|engine| {
        engine.name.map(|name| Fact {
            name: "engine".to_owned(),
            value: match engine.version {
                Some(version) => format!("{name} {version}"),
                None => name,
            },
            source: "engine log".to_owned(),
        })
    });
    let versions = versions(record);
    let gpus = gpus(record, &mut limitations);
    let environment = record.run.preflight.environment.clone();
    let failure = failure(record, &status);
    let timeline = timeline(&explain.timeline);
    let (oom, oom_other_processes) = oom_figures(record);
    let memory = memory(record, &explain.timeline, &failure, &mut limitations);
    let fit = fit_vs_measured(input, &explain.timeline, &log_model, &memory, &gpus);
    let reproduction = reproduction(input, &status, &failure);
    let probe = input
        .probe
        .as_ref()
        .map(|(file, probe)| probe_summary(file, probe));
    let concurrency = concurrency(input);
    let readiness = readiness(input, &status, &failure);
    let mut verdict = verdict(record, &status, &failure, readiness.state == "checked");
    if let Some(file) = torch_snapshot_file(record) {
        verdict.next_steps.push(format!(
            "a PyTorch memory snapshot was recorded: `oomdoc snapshot {}/{file}` judges fragmentation on data",
            input.label
        ));
    }
    let mut owner_summary = owner_summary(record, &status, &failure, &fit, &gpus, &readiness);
    let mut status = status;
    if let Some(finding) = record
        .run
        .host
        .as_ref()
        .and_then(|host| host.finding.as_ref())
    {
        let gpu_oom_in_log = record
            .explain
            .as_ref()
            .and_then(|explain| explain.is_gpu_oom)
            == Some(true);
        host_verdict(
            finding,
            gpu_oom_in_log,
            &mut status,
            &mut verdict,
            &mut owner_summary,
        );
    }
    let host = record.run.host.clone().map(|mut host| {
        host.timeline.samples.clear();
        host
    });

    match (&input.log, &input.log_problem) {
        (_, Some(problem)) => limitations.push(problem.clone()),
        (Some(scan), None) if scan.partial => limitations.push(
            "the log is large: only its last part was scanned for requests and concurrency"
                .to_owned(),
        ),
        _ => {}
    }
    let training = is_training(record, &explain.timeline, &failure, input.probe.is_some());
    if input.probe.is_none() && !training {
        limitations.push(
            "no probe document (`--probe FILE`): growth under repeated and long requests was not measured".to_owned(),
        );
    }
    let limitations = merge_shared_reasons(limitations);

    RunReport {
        host,
        run: input.label.clone(),
        status,
        command: record.run.command.clone(),
        cwd: record.run.cwd.clone(),
        model,
        engine,
        versions,
        gpus,
        environment,
        failure,
        timeline,
        oom,
        oom_other_processes,
        oom_count: explain
            .ooms_total
            .map_or(0, |total| usize::try_from(total).unwrap_or(usize::MAX))
            .max(explain.ooms.len())
            .max(usize::from(explain.oom.is_some())),
        // explain's own context, unless the log scan kept more lines (dozens, not one).
        log_context: {
            let scanned = input
                .log
                .as_ref()
                .map(|scan| scan.lines_before_oom.clone())
                .unwrap_or_default();
            if scanned.len() > explain.context.len() {
                scanned
            } else {
                explain.context.clone()
            }
        },
        memory,
        fit,
        training,
        reproduction,
        concurrency,
        probe,
        readiness,
        verdict,
        owner_summary,
        limitations,
    }
}

/// `1m 12.3s`, `850 ms`.
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

/// The snapshot file `--torch-snapshot` produced, when there is one.
fn torch_snapshot_file(record: &RecordRead) -> Option<String> {
    let snapshot = record.run.torch_snapshot.as_ref()?;
    snapshot
        .file
        .clone()
        .or_else(|| snapshot.files.first().cloned())
}

fn run_status(record: &RecordRead) -> RunStatus {
    let failed = run_failed(record);
    let explain = record.explain.clone().unwrap_or_default();
    let phase = explain.phase.unwrap_or_default();
    let side = super::compare::OutcomeSide {
        status: record.status().map(|status| status.as_str().to_owned()),
        exit_code: record.run.exit_code.map(i64::from),
        failed,
        is_gpu_oom: explain.is_gpu_oom,
        failed_in: phase.failed_in,
        server_was_ready: phase.server_was_ready,
        ..Default::default()
    };
    let mut summary = describe_outcome(&side);
    summary = format!("{}{}", summary[..1].to_uppercase(), &summary[1..]);
    let mut how = Vec::new();
    if let Some(code) = record.run.exit_code {
        how.push(format!("exit code {code}"));
    }
    if let Some(signal) = record.run.signal {
        how.push(format!("signal {signal}"));
    }
    if record.interrupted() == Some(true) {
        how.push("stopped by the user (SIGINT/SIGTERM forwarded)".to_owned());
    }
    if record.is_running() {
        how.push("record unfinished: `status` is still `running`".to_owned());
    }
    if let Some(duration) = record.run.duration_ms {
        how.push(format!("after {}", human_duration(duration)));
    }
    if !how.is_empty() {
        summary = format!("{summary} ({})", how.join(", "));
    }
    RunStatus {
        status: record.status().map(|status| status.as_str().to_owned()),
        exit_code: record.run.exit_code.map(i64::from),
        signal: record.run.signal.map(i64::from),
        interrupted: record.interrupted(),
        started_at: Some(record.run.started_at.clone()).filter(|at| !at.is_empty()),
        ended_at: record.run.ended_at.clone(),
        duration_ms: record.run.duration_ms,
        failed,
        summary,
    }
}

fn versions(record: &RecordRead) -> Vec<Fact> {
    let mut facts = Vec::new();
    if let Some(inventory) = &record.run.preflight.inventory {
        let source = inventory
            .source
            .map_or_else(|| "GPU inventory".to_owned(), source_name);
        if let Some(driver) = &inventory.driver_version {
            facts.push(Fact {
                name: "driver".to_owned(),
                value: driver.clone(),
                source: source.clone(),
            });
        }
        if let Some(cuda) = &inventory.cuda_version {
            facts.push(Fact {
                name: "CUDA (driver supports)".to_owned(),
                value: cuda.clone(),
                source: source.clone(),
            });
        }
        if let Some(nvml) = &inventory.nvml_version {
            facts.push(Fact {
                name: "NVML".to_owned(),
                value: nvml.clone(),
                source,
            });
        }
    }
    if let Some(explain) = &record.explain {
        if let Some(engine) = &explain.engine {
            if let (Some(name), Some(version)) = (&engine.name, &engine.version) {
                facts.push(Fact {
                    name: name.clone(),
                    value: version.clone(),
                    source: "engine log".to_owned(),
                });
            }
        }
        for (name, value) in &explain.versions {
            if let Some(text) = value_text(value) {
                // `pytorch` is the engine name of plain PyTorch; its version is `torch`'s.
                let alias = |fact_name: &str| {
                    fact_name == name || (fact_name == "pytorch" && name == "torch")
                };
                if let Some(fact) = facts.iter_mut().find(|fact| alias(&fact.name)) {
                    if fact.name == "pytorch" && fact.value == text {
                        fact.name = "torch".to_owned();
                    }
                } else {
                    facts.push(Fact {
                        name: name.clone(),
                        value: text,
                        source: "engine log".to_owned(),
                    });
                }
            }
        }
    }
    if let Some(version) = Some(&record.run.oomdoc_version).filter(|v| !v.is_empty()) {
        facts.push(Fact {
            name: "oomdoc (recorder)".to_owned(),
            value: version.clone(),
            source: "run.json".to_owned(),
        });
    }
    facts
}

fn process_facts(processes: &[GpuProcess]) -> Vec<ProcessFacts> {
    processes
        .iter()
        .map(|process| ProcessFacts {
            pid: Some(process.pid),
            name: process.name.clone(),
            used_bytes: process.used_bytes.map(Bytes::get),
            unavailable_reason: process.unavailable_reason.clone(),
        })
        .collect()
}

fn gpus(record: &RecordRead, limitations: &mut Vec<String>) -> Vec<GpuFacts> {
    if let Some(error) = &record.run.preflight.inventory_error {
        limitations.push(format!("no GPU inventory before start: {error}"));
    }
    let at_oom_inventory = record
        .memory()
        .and_then(|memory| memory.inventory_at_oom.as_ref());
    let at_oom = |device: &Device| {
        at_oom_inventory.and_then(|inventory| {
            inventory
                .devices
                .iter()
                .find(|candidate| !candidate.uuid.is_empty() && candidate.uuid == device.uuid)
        })
    };
    let Some(inventory) = &record.run.preflight.inventory else {
        if record.run.preflight.inventory_error.is_none() {
            limitations.push(
                "the record has no GPU inventory: GPUs and free memory before start are unknown"
                    .to_owned(),
            );
        }
        return Vec::new();
    };
    limitations.extend(inventory.limitations.iter().cloned());
    let source = format!(
        "{} before start",
        inventory
            .source
            .map_or_else(|| "GPU inventory".to_owned(), source_name)
    );
    let any_ordinal = inventory.devices.iter().any(|d| d.cuda_ordinal.is_some());
    inventory
        .devices
        .iter()
        .map(|device| {
            let memory = device.memory;
            GpuFacts {
                index: Some(device.index),
                uuid: non_empty(&device.uuid),
                name: non_empty(&device.name),
                pci_bus_id: non_empty(&device.pci_bus_id),
                cuda_ordinal: device.cuda_ordinal,
                visible_to_run: !any_ordinal || device.cuda_ordinal.is_some(),
                total_bytes: Some(memory.total_bytes.get()),
                reserved_bytes: memory.reserved_bytes.map(Bytes::get),
                used_before_bytes: Some(memory.used_bytes.get()),
                free_before_bytes: Some(memory.free_bytes.get()),
                processes_before: process_facts(&device.processes),
                free_at_oom_bytes: at_oom(device).map(|d| d.memory.free_bytes.get()),
                processes_at_oom: at_oom(device)
                    .map_or_else(Vec::new, |d| process_facts(&d.processes)),
                source: source.clone(),
            }
        })
        .collect()
}

/// A text field of the record: empty (absent in an old record) is `None`.
fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// The JSON name of a source (`nvml`, `replay`), as the record writes it.
fn source_name(source: Source) -> String {
    serde_json::to_value(source)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| source.label().to_owned())
}

/// Phases before which no server accepts requests.
fn is_startup_phase(phase: &str) -> bool {
    Phase::from_name(phase).is_startup()
}

fn failure(record: &RecordRead, status: &RunStatus) -> FailureFacts {
    let explain = record.explain.clone().unwrap_or_default();
    let phase = explain.phase.unwrap_or_default();
    let note = if status.failed {
        match (&phase.failed_in, phase.server_was_ready) {
            (Some(failed_in), ready) if is_startup_phase(failed_in) && ready != Some(true) => Some(format!(
                "nothing was serving requests yet when it failed in `{failed_in}`: a user prompt cannot be the cause"
            )),
            (Some(failed_in), _) if failed_in == "unknown" => Some(
                "the log does not show the phase; it is reported as `unknown` rather than guessed".to_owned(),
            ),
            (_, Some(true)) => Some("the server was ready and serving when it failed: look at the request that was in flight".to_owned()),
            _ => None,
        }
    } else {
        None
    };
    FailureFacts {
        is_gpu_oom: explain.is_gpu_oom,
        failed_in: phase.failed_in,
        last_completed: phase.last_completed,
        server_was_ready: phase.server_was_ready,
        note,
    }
}

fn timeline(events: &[Value]) -> Vec<TimelineEntry> {
    events
        .iter()
        .map(|event| TimelineEntry {
            t_ms: event_t_ms(event),
            phase: object_text(event, &["phase"]),
            event: object_text(event, &["event", "kind", "stage", "name", "what"])
                .unwrap_or_else(|| "event".to_owned()),
            detail: object_text(
                event,
                &["detail", "text", "message", "summary", "line_text"],
            ),
        })
        .collect()
}

fn oom_figures(record: &RecordRead) -> (Vec<Figure>, Vec<Figure>) {
    let Some(oom) = record.explain.as_ref().and_then(|e| e.oom.clone()) else {
        return (Vec::new(), Vec::new());
    };
    let engine = record
        .explain
        .as_ref()
        .and_then(|e| e.engine.as_ref())
        .and_then(|e| e.name.clone());
    let source = match engine.as_deref() {
        Some(name) => format!("framework error text (in the {name} log)"),
        None => "framework error text".to_owned(),
    };
    let gpu = oom
        .gpu_index
        .map(|index| format!(" (GPU {index} as the process numbers it)"))
        .unwrap_or_default();
    let figures = [
        ("tried to allocate", oom.tried_to_allocate_bytes),
        ("total capacity", oom.total_capacity_bytes),
        ("free", oom.free_bytes),
        // NVML's N/A sentinel (`u64::MAX`, printed as 17179869184.00 GiB) is no figure.
        (
            "this process has in use",
            oom.process_in_use_bytes.filter(|bytes| *bytes != u64::MAX),
        ),
        ("allocated by PyTorch", oom.allocated_by_pytorch_bytes),
        (
            "reserved by PyTorch but unallocated",
            oom.reserved_unallocated_bytes,
        ),
        ("reserved in total by PyTorch", oom.reserved_total_bytes),
        ("allocated in private pools", oom.private_pools_bytes),
    ]
    .into_iter()
    .filter_map(|(name, bytes)| {
        bytes.map(|bytes| Figure {
            name: format!(
                "{name}{}",
                if name == "total capacity" {
                    gpu.as_str()
                } else {
                    ""
                }
            ),
            bytes,
            source: source.clone(),
        })
    })
    .collect();
    let others = oom
        .other_processes
        .iter()
        .filter_map(|process| {
            process.in_use_bytes.map(|bytes| Figure {
                name: match process.pid {
                    Some(pid) => format!("process {pid} has in use"),
                    None => "another process has in use".to_owned(),
                },
                bytes,
                source: source.clone(),
            })
        })
        .collect();
    (figures, others)
}

/// A training run: the log or the phases show training steps, and nothing was served (no
/// request, no server ready, no serving statistics) nor probed.
fn is_training(
    record: &RecordRead,
    timeline: &[Value],
    failure: &FailureFacts,
    probed: bool,
) -> bool {
    const TRAINING: &str = "training_step";
    let kinds: Vec<String> = timeline
        .iter()
        .filter_map(|event| object_text(event, &["kind"]))
        .collect();
    let trains = failure.failed_in.as_deref() == Some(TRAINING)
        || record
            .run
            .phases
            .iter()
            .any(|span| span.phase == Phase::TrainingStep)
        || kinds.iter().any(|kind| kind == TRAINING);
    let serves = kinds
        .iter()
        .any(|kind| matches!(kind.as_str(), "request" | "server_ready" | "serving_stats"));
    trains && !serves && !probed
}

/// Limitations with the same reason said once: `what: why` entries sharing `why` become one
/// (`no memory timeline and no GPU inventory before start: NVML is absent: …`), and an entry
/// whose `why` is the start of another entry takes that fuller one as its reason. Exact
/// repeats go; the order of first appearance stays.
pub fn merge_shared_reasons(limitations: Vec<String>) -> Vec<String> {
    let mut unique: Vec<String> = Vec::new();
    for limitation in limitations {
        if !unique.contains(&limitation) {
            unique.push(limitation);
        }
    }
    // `what: why` where `what` is a short label and `why` a reason worth matching.
    let parts: Vec<Option<(&str, &str)>> = unique
        .iter()
        .map(|limitation| {
            limitation
                .split_once(": ")
                .filter(|(what, why)| what.chars().count() <= 60 && why.chars().count() >= 12)
        })
        .collect();
    let mut absorbed = vec![false; unique.len()];
    let reasons: Vec<Option<&str>> = parts
        .iter()
        .enumerate()
        .map(|(index, part)| {
            let (_, why) = (*part)?;
            let fuller = unique.iter().enumerate().position(|(other, text)| {
                other != index && text.len() > why.len() && text.starts_with(why)
            });
            Some(match fuller {
                Some(other) => {
                    absorbed[other] = true;
                    unique[other].as_str()
                }
                None => why,
            })
        })
        .collect();
    let mut merged: Vec<String> = Vec::new();
    let mut emitted: Vec<&str> = Vec::new();
    for (index, limitation) in unique.iter().enumerate() {
        let (Some((_, _)), Some(reason)) = (parts[index], reasons[index]) else {
            if !absorbed[index] {
                merged.push(limitation.clone());
            }
            continue;
        };
        if absorbed[index] || emitted.contains(&reason) {
            continue;
        }
        emitted.push(reason);
        let mut whats: Vec<&str> = Vec::new();
        for (other, part) in parts.iter().enumerate() {
            if let (Some((what, _)), Some(other_reason)) = (part, reasons[other]) {
                if other_reason == reason && !absorbed[other] && !whats.contains(what) {
                    whats.push(what);
                }
            }
        }
        merged.push(format!("{}: {reason}", whats.join(" and ")));
    }
    merged
}

/// Reduces a series to at most `limit` points, keeping each time bucket's minimum and
/// maximum in time order so a 10 ms spike survives.
pub fn reduce_samples(samples: &[(u64, u64)], limit: usize) -> Vec<(u64, u64)> {
    if samples.len() <= limit || limit < 4 {
        return samples.to_vec();
    }
    let buckets = limit / 2;
    let first = samples.first().map_or(0, |s| s.0);
    let last = samples.last().map_or(0, |s| s.0);
    let span = last.saturating_sub(first).max(1);
    let mut reduced: Vec<(u64, u64)> = Vec::with_capacity(limit + 2);
    let mut bucket_points: Vec<(u64, u64)> = Vec::new();
    let mut current_bucket = 0u64;
    let flush = |points: &mut Vec<(u64, u64)>, out: &mut Vec<(u64, u64)>| {
        if points.is_empty() {
            return;
        }
        let mut min = points[0];
        let mut max = points[0];
        for point in points.iter() {
            if point.1 < min.1 {
                min = *point;
            }
            if point.1 > max.1 {
                max = *point;
            }
        }
        let (early, late) = if min.0 <= max.0 {
            (min, max)
        } else {
            (max, min)
        };
        out.push(early);
        if late != early {
            out.push(late);
        }
        points.clear();
    };
    for sample in samples {
        let bucket = (sample.0 - first) as u128 * buckets as u128 / span as u128;
        let bucket = bucket.min(buckets as u128 - 1) as u64;
        if bucket != current_bucket {
            flush(&mut bucket_points, &mut reduced);
            current_bucket = bucket;
        }
        bucket_points.push(*sample);
    }
    flush(&mut bucket_points, &mut reduced);
    if let Some(last_sample) = samples.last() {
        if reduced.last() != Some(last_sample) {
            reduced.push(*last_sample);
        }
    }
    reduced
}

/// When the OOM happened: an OOM event of the timeline, else the end of the failing phase,
/// else the end of the run.
fn oom_time(
    record: &RecordRead,
    events: &[Value],
    failure: &FailureFacts,
) -> (Option<u64>, Option<String>) {
    if failure.is_gpu_oom != Some(true) {
        return (None, None);
    }
    if let Some(t_ms) = record.run.ooms.iter().find_map(|oom| oom.t_ms) {
        return (
            Some(t_ms),
            Some("arrival of the OOM line in the log, recorded by `oomdoc run`".to_owned()),
        );
    }
    let from_timeline = events.iter().find_map(|event| {
        let name = object_text(event, &["event", "kind", "stage", "name", "what"])
            .unwrap_or_default()
            .to_ascii_lowercase();
        let detail = object_text(event, &["detail", "text", "message"])
            .unwrap_or_default()
            .to_ascii_lowercase();
        let is_oom = name.contains("oom")
            || name.contains("out_of_memory")
            || detail.contains("out of memory");
        if is_oom {
            event_t_ms(event)
        } else {
            None
        }
    });
    if let Some(t_ms) = from_timeline {
        return (Some(t_ms), Some("engine log timeline".to_owned()));
    }
    let failing_span = failure.failed_in.as_ref().and_then(|failed_in| {
        record
            .run
            .phases
            .iter()
            .rev()
            .find(|span| span.phase.as_str() == failed_in.as_str())
    });
    if let Some(end) = failing_span.and_then(|span| span.end_t_ms) {
        return (
            Some(end),
            Some("end of the failing phase (approximate)".to_owned()),
        );
    }
    record.run.duration_ms.map_or((None, None), |end| {
        (Some(end), Some("end of the run (approximate)".to_owned()))
    })
}

fn memory(
    record: &RecordRead,
    events: &[Value],
    failure: &FailureFacts,
    limitations: &mut Vec<String>,
) -> MemoryFacts {
    let phases: Vec<PhaseSpan> = record
        .run
        .phases
        .iter()
        .map(|span| PhaseSpan {
            phase: span.phase.as_str().to_owned(),
            start_t_ms: span.start_t_ms,
            end_t_ms: span.end_t_ms,
        })
        .collect();
    let (oom_t_ms, oom_t_source) = oom_time(record, events, failure);
    let oom_device_uuid = record
        .run
        .ooms
        .iter()
        .find_map(|oom| oom.device_uuid.clone())
        .filter(|_| oom_t_ms.is_some());
    let Some(view) = record.memory() else {
        limitations.push("the record has no memory timeline".to_owned());
        return MemoryFacts {
            duration_ms: record.run.duration_ms,
            oom_t_ms,
            oom_t_source,
            oom_device_uuid: oom_device_uuid.clone(),
            phases,
            ..MemoryFacts::default()
        };
    };
    let available = view.available;
    if !available
        && !limitations
            .iter()
            .any(|l| l.starts_with("no memory timeline"))
    {
        limitations.push(format!(
            "no memory timeline: {}",
            view.reason
                .clone()
                .unwrap_or_else(|| "the recorder did not say why".to_owned())
        ));
    }
    let devices = view
        .devices
        .iter()
        .map(|device| {
            let mut peaks: Vec<PhasePeak> = device
                .peaks_by_phase
                .iter()
                .map(|(phase, bytes)| PhasePeak {
                    phase: phase.as_str().to_owned(),
                    peak_used_bytes: bytes.get(),
                })
                .collect();
            peaks.sort_by_key(|peak| {
                let first_span = phases
                    .iter()
                    .position(|span| span.phase == peak.phase)
                    .unwrap_or(usize::MAX);
                (
                    first_span,
                    Phase::from_name(&peak.phase),
                    peak.phase.clone(),
                )
            });
            let mut samples: Vec<(u64, u64)> = device
                .samples
                .iter()
                .map(|[t_ms, used]| (*t_ms, *used))
                .collect();
            samples.sort_by_key(|sample| sample.0);
            DeviceTimeline {
                uuid: non_empty(&device.uuid),
                name: non_empty(&device.name),
                index: Some(device.index),
                total_bytes: Some(device.total_bytes.get()),
                baseline_used_bytes: device.baseline_used_bytes.map(Bytes::get),
                peak_used_bytes: device.peak_used_bytes.map(Bytes::get),
                peak_t_ms: device.peak_t_ms,
                peak_phase: device.peak_phase.map(|phase| phase.as_str().to_owned()),
                peaks_by_phase: peaks,
                samples: reduce_samples(&samples, CHART_POINTS),
                sample_count: Some(device.sample_count),
                processes: device
                    .processes
                    .iter()
                    .map(|process| ProcessPeak {
                        pid: Some(process.pid),
                        name: process.name.clone(),
                        peak_used_bytes: process.peak_used_bytes.map(Bytes::get),
                        peak_t_ms: process.peak_t_ms,
                        is_child: Some(process.is_child),
                    })
                    .collect(),
            }
        })
        .collect();
    MemoryFacts {
        available,
        reason: view.reason.clone(),
        source: view.source.map(source_name),
        // A record that did not say reads 0: no rate.
        sample_rate_hz: (view.sample_rate_hz > 0.0).then_some(view.sample_rate_hz),
        duration_ms: record.run.duration_ms,
        oom_t_ms,
        oom_t_source,
        oom_device_uuid: oom_device_uuid.clone(),
        phases,
        devices,
    }
}

fn fit_vs_measured(
    input: &RunInput,
    events: &[Value],
    log_model: &Value,
    memory: &MemoryFacts,
    gpus: &[GpuFacts],
) -> FitVsMeasured {
    let lower_bound = input.checkpoint.as_ref().and_then(|checkpoint| {
        checkpoint.weights_total_bytes.map(|bytes| Figure {
            name: "weights lower bound".to_owned(),
            bytes,
            source: checkpoint.source.clone(),
        })
    });
    let weights_from_log = object_u64(
        log_model,
        &["weights_bytes", "weights_loaded_bytes", "weight_bytes"],
    )
    .or_else(|| {
        events.iter().find_map(|event| {
            let name = object_text(event, &["event", "kind", "stage", "name"]).unwrap_or_default();
            if name == "weights_loaded" || (name.contains("weights") && name.contains("load")) {
                event_bytes(event)
            } else {
                None
            }
        })
    });
    let weights_loaded = weights_from_log.map(|bytes| Figure {
        name: "weights as loaded".to_owned(),
        bytes,
        source: "engine log".to_owned(),
    });
    let peak_device = memory
        .devices
        .iter()
        .filter(|device| device.peak_used_bytes.is_some())
        .max_by_key(|device| device.peak_used_bytes);
    let measured_peak = peak_device.and_then(|device| {
        device.peak_used_bytes.map(|bytes| Figure {
            name: match &device.peak_phase {
                Some(phase) => format!("peak used on the device (in `{phase}`)"),
                None => "peak used on the device".to_owned(),
            },
            bytes,
            source: memory
                .source
                .clone()
                .map_or_else(|| "memory timeline".to_owned(), |s| s.to_uppercase()),
        })
    });
    let capacity = peak_device
        .and_then(|device| device.total_bytes)
        .or_else(|| {
            gpus.iter()
                .find(|gpu| gpu.visible_to_run)
                .and_then(|gpu| gpu.total_bytes)
        })
        .map(|bytes| Figure {
            name: "device total".to_owned(),
            bytes,
            source: "NVML".to_owned(),
        })
        .or_else(|| {
            // Without NVML, the framework's own "total capacity" (cudaMemGetInfo's total).
            input
                .record
                .explain
                .as_ref()
                .and_then(|explain| explain.oom.as_ref())
                .and_then(|oom| oom.total_capacity_bytes)
                .map(|bytes| Figure {
                    name: "total capacity".to_owned(),
                    bytes,
                    source: "framework error text".to_owned(),
                })
        });
    let note = match (&lower_bound, &weights_loaded, &capacity) {
        (Some(bound), _, Some(total)) if bound.bytes >= total.bytes => format!(
            "the weights alone ({}) do not fit in the device ({}): no setting changes that",
            Bytes(bound.bytes),
            Bytes(total.bytes)
        ),
        (Some(bound), _, Some(total)) => format!(
            "the weights lower bound ({}) is {:.0}% of the device ({}); KV cache, activations and CUDA graphs come on top of it",
            Bytes(bound.bytes),
            bound.bytes as f64 * 100.0 / total.bytes.max(1) as f64,
            Bytes(total.bytes)
        ),
        (None, Some(loaded), Some(total)) => format!(
            "the engine reports {} of weights on a {} device ({:.0}%); give `--checkpoint` for the lower bound from the headers",
            Bytes(loaded.bytes),
            Bytes(total.bytes),
            loaded.bytes as f64 * 100.0 / total.bytes.max(1) as f64
        ),
        _ => "no weights figure: give `--checkpoint PATH` for the lower bound from the checkpoint's headers".to_owned(),
    };
    // The engine's own weights figure should be close to the headers' sum (quantisation scales,
    // tied embeddings and padding make a few percent); far apart means another checkpoint.
    let mut note = note;
    if let (Some(bound), Some(loaded)) = (&lower_bound, &weights_loaded) {
        let (low, high) = (bound.bytes.min(loaded.bytes), bound.bytes.max(loaded.bytes));
        if high as f64 > low as f64 * 1.1 {
            note.push_str(&format!(
                "; the engine loaded {} but the checkpoint's headers sum to {}: is `--checkpoint` the model this run loaded?",
                Bytes(loaded.bytes),
                Bytes(bound.bytes)
            ));
        }
    }
    FitVsMeasured {
        lower_bound,
        weights_loaded,
        measured_peak,
        capacity,
        note,
    }
}

fn reproduction(input: &RunInput, status: &RunStatus, failure: &FailureFacts) -> Reproduction {
    if !status.failed {
        return Reproduction {
            request_needed: None,
            request: None,
            source: None,
            note: "the run did not fail: nothing to reproduce".to_owned(),
        };
    }
    if let Some(phase) = &failure.failed_in {
        if is_startup_phase(phase) && failure.server_was_ready != Some(true) {
            return Reproduction {
                request_needed: Some(false),
                request: None,
                source: Some("phase of the failure".to_owned()),
                note: format!(
                    "no request is needed: it fails in `{phase}`, before any request is served; the command line above reproduces it"
                ),
            };
        }
        if phase == "training_step" {
            return Reproduction {
                request_needed: Some(false),
                request: None,
                source: Some("phase of the failure".to_owned()),
                note: "a training step failed: the command line above reproduces it; the smallest reproduction is the smallest batch that still fails".to_owned(),
            };
        }
    }
    if let Some((file, probe)) = &input.probe {
        let failing = probe
            .requests
            .iter()
            .filter(|request| !request.succeeded())
            .min_by_key(|request| request.prompt_chars.unwrap_or(u64::MAX));
        if let Some(request) = failing {
            return Reproduction {
                request_needed: Some(true),
                request: Some(format!(
                    "{} request #{} with a {}-character prompt (status {})",
                    request.phase.as_deref().unwrap_or("probe"),
                    request.index.unwrap_or(0),
                    request
                        .prompt_chars
                        .map_or_else(|| "?".to_owned(), |c| c.to_string()),
                    request
                        .status
                        .as_ref()
                        .and_then(value_text)
                        .unwrap_or_else(|| "none".to_owned())
                )),
                source: Some(format!("probe `{file}`")),
                note: "the smallest probe request that failed".to_owned(),
            };
        }
    }
    if let Some(line) = input
        .log
        .as_ref()
        .and_then(|scan| scan.request_before_oom.clone())
    {
        return Reproduction {
            request_needed: Some(true),
            request: Some(line),
            source: Some("engine log (last request before the OOM)".to_owned()),
            note: "the request in flight when it failed; it may not be the smallest one that fails"
                .to_owned(),
        };
    }
    Reproduction {
        request_needed: None,
        request: None,
        source: None,
        note: "not known: the log shows no request before the failure; run `oomdoc probe` against the server to find the smallest failing request".to_owned(),
    }
}

fn probe_summary(file: &str, probe: &ProbeView) -> ProbeSummary {
    let mut phases: Vec<(String, u64, u64)> = Vec::new();
    for request in &probe.requests {
        let phase = request
            .phase
            .clone()
            .unwrap_or_else(|| "unknown".to_owned());
        let index = match phases.iter().position(|(name, _, _)| *name == phase) {
            Some(index) => index,
            None => {
                phases.push((phase, 0, 0));
                phases.len() - 1
            }
        };
        phases[index].2 += 1;
        if request.succeeded() {
            phases[index].1 += 1;
        }
    }
    ProbeSummary {
        file: file.to_owned(),
        verdict: probe.verdict_text(),
        phases,
        plateau_bytes: probe.plateau_bytes,
    }
}

fn concurrency(input: &RunInput) -> Vec<Fact> {
    let mut facts = Vec::new();
    let argv = super::compare::parse_argv(&input.record.run.command);
    for flag in [
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--max-running-requests",
        "--max-concurrent-requests",
        "--parallel",
        "-np",
    ] {
        if let Some(value) = argv.flags.get(flag) {
            facts.push(Fact {
                name: format!("`{flag}`"),
                value: value.clone(),
                source: "command line".to_owned(),
            });
        }
    }
    // What the engine itself settled on (its defaults included), when explain read it.
    let config = input
        .record
        .explain
        .as_ref()
        .and_then(|explain| explain.config.clone())
        .unwrap_or(Value::Null);
    for (key, flag) in [
        ("max_num_seqs", "--max-num-seqs"),
        ("max_num_batched_tokens", "--max-num-batched-tokens"),
        ("batch_size", "--batch-size"),
    ] {
        if let Some(value) = object_text(&config, &[key]) {
            if !argv.flags.contains_key(flag) {
                facts.push(Fact {
                    name: format!("`{key}`"),
                    value,
                    source: "engine log".to_owned(),
                });
            }
        }
    }
    if let Some(scan) = &input.log {
        if let Some(line) = &scan.max_concurrency {
            facts.push(Fact {
                name: "KV cache capacity".to_owned(),
                value: line.clone(),
                source: "engine log".to_owned(),
            });
        }
        if let Some(running) = scan.max_running_requests {
            facts.push(Fact {
                name: "most requests running at once".to_owned(),
                value: running.to_string(),
                source: "engine log stats lines".to_owned(),
            });
        }
    }
    if let Some((_, probe)) = &input.probe {
        let concurrent: Vec<_> = probe
            .requests
            .iter()
            .filter(|request| request.phase.as_deref() == Some("concurrent"))
            .collect();
        if !concurrent.is_empty() {
            let ok = concurrent
                .iter()
                .filter(|request| request.succeeded())
                .count();
            facts.push(Fact {
                name: "parallel requests checked".to_owned(),
                value: format!("{ok} of {} succeeded", concurrent.len()),
                source: "probe".to_owned(),
            });
        }
    }
    facts
}

fn readiness(input: &RunInput, status: &RunStatus, failure: &FailureFacts) -> Readiness {
    // Requests served: access-log lines in the log, else explain's `request` timeline events.
    let events: &[Value] = input
        .record
        .explain
        .as_ref()
        .map_or(&[], |explain| explain.timeline.as_slice());
    let event_kind = |event: &Value| object_text(event, &["kind", "event"]).unwrap_or_default();
    let request_events: u64 = events
        .iter()
        .filter(|event| event_kind(event) == "request")
        .map(|event| object_u64(event, &["count"]).unwrap_or(1).max(1))
        .sum();
    let ready_event = events
        .iter()
        .any(|event| matches!(event_kind(event).as_str(), "server_ready" | "api_ready"));
    let served_in_log = input
        .log
        .as_ref()
        .map_or(0, |scan| scan.requests_served)
        .max(request_events);
    let probe = input.probe.as_ref().map(|(_, probe)| probe);
    let probe_ok = |phases: &[&str]| {
        probe.map_or(0, |probe| {
            probe
                .requests
                .iter()
                .filter(|r| {
                    r.succeeded() && r.phase.as_deref().is_some_and(|p| phases.contains(&p))
                })
                .count()
        })
    };
    let probe_failed = probe.map_or(0, |probe| {
        probe.requests.iter().filter(|r| !r.succeeded()).count()
    });
    let loaded = failure.server_was_ready == Some(true)
        || ready_event
        || served_in_log > 0
        || probe_ok(&["warmup", "identical", "alternating", "concurrent"]) > 0
        || (!status.failed && status.exit_code == Some(0));
    let short_ok = probe_ok(&["warmup", "identical"]);
    let short_request = if short_ok > 0 {
        Check {
            checked: true,
            evidence: format!("{short_ok} short probe requests succeeded (probe)"),
        }
    } else if served_in_log > 0 {
        Check {
            checked: true,
            evidence: format!("{served_in_log} requests answered with 2xx (engine log)"),
        }
    } else {
        Check {
            checked: false,
            evidence: "no request was served in the log and no probe was given".to_owned(),
        }
    };
    let long_ok = probe_ok(&["alternating"]);
    let concurrent_ok = probe_ok(&["concurrent"]);
    let next_scenario = if long_ok > 0 || concurrent_ok > 0 {
        let mut parts = Vec::new();
        if long_ok > 0 {
            parts.push(format!("{long_ok} alternating short/long requests"));
        }
        if concurrent_ok > 0 {
            parts.push(format!("{concurrent_ok} parallel requests"));
        }
        Check {
            checked: probe_failed == 0,
            evidence: if probe_failed == 0 {
                format!("{} succeeded (probe)", parts.join(" and "))
            } else {
                format!(
                    "{} succeeded, but {probe_failed} probe requests failed",
                    parts.join(" and ")
                )
            },
        }
    } else {
        Check {
            checked: false,
            evidence: "long inputs and parallel requests were not tried (`oomdoc probe` does both)"
                .to_owned(),
        }
    };
    let mut unverified = Vec::new();
    if !short_request.checked {
        unverified.push("a short request end to end".to_owned());
    }
    if long_ok == 0 {
        unverified.push("long inputs near the configured context length".to_owned());
    }
    if concurrent_ok == 0 {
        unverified.push("parallel requests at the expected concurrency".to_owned());
    }
    if probe.is_none() {
        unverified.push("memory over repeated requests (plateau or growth)".to_owned());
    }
    let (state, summary) = if status.failed {
        (
            "failed",
            "this configuration failed: it is not fit".to_owned(),
        )
    } else if !loaded {
        (
            "not_loaded",
            "the record does not show that this configuration loaded".to_owned(),
        )
    } else if !short_request.checked {
        (
            "loads_unverified",
            "this configuration loads, but loading is not yet being fit: no request was shown to succeed".to_owned(),
        )
    } else if !next_scenario.checked {
        (
            "short_request_only",
            "this configuration loads and served a short request; the next real scenario is not yet checked".to_owned(),
        )
    } else {
        (
            "checked",
            "this configuration loads, served a short request and passed the next scenario checked by the probe".to_owned(),
        )
    };
    Readiness {
        state: state.to_owned(),
        loaded,
        short_request,
        next_scenario,
        unverified,
        summary,
        stated_limit: (!status.failed && loaded)
            .then(|| stated_limit(input))
            .flatten(),
    }
}

/// The limits a working run was launched and measured with: context length, batch, memory
/// budget from the command line; KV capacity from the log; the peak from the timeline.
fn stated_limit(input: &RunInput) -> Option<String> {
    let argv = super::compare::parse_argv(&input.record.run.command);
    let mut parts = Vec::new();
    for flag in [
        "--max-model-len",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--gpu-memory-utilization",
        "--kv-cache-dtype",
        "--tensor-parallel-size",
        "--ctx-size",
        "-c",
        "--batch-size",
    ] {
        if let Some(value) = argv.flags.get(flag) {
            parts.push(format!("`{flag} {value}`"));
        }
    }
    if let Some(line) = input
        .log
        .as_ref()
        .and_then(|scan| scan.max_concurrency.clone())
    {
        parts.push(format!("KV cache: {line}"));
    }
    let peak = input.record.memory().and_then(|memory| {
        memory
            .devices
            .iter()
            .filter_map(|device| {
                Some((
                    device.peak_used_bytes?.get(),
                    Some(device.total_bytes.get()),
                ))
            })
            .max_by_key(|(peak, _)| *peak)
    });
    if let Some((peak, total)) = peak {
        parts.push(match total {
            Some(total) => format!("peak {} of {} (NVML)", Bytes(peak), Bytes(total)),
            None => format!("peak {} (NVML)", Bytes(peak)),
        });
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn verdict(
    record: &RecordRead,
    status: &RunStatus,
    failure: &FailureFacts,
    checked: bool,
) -> Verdict {
    let explained = record.explain.as_ref().and_then(|e| e.verdict.clone());
    match explained {
        Some(verdict) if verdict.cause.is_some() && status.failed => Verdict {
            cause: verdict.cause.unwrap_or_default(),
            cause_kind: verdict.cause_kind,
            evidence: verdict.evidence,
            next_steps: verdict.next_steps,
            source: "`oomdoc explain` on the run's log".to_owned(),
        },
        explained if !status.failed => Verdict {
            cause: "no failure recorded".to_owned(),
            cause_kind: None,
            evidence: std::iter::once(status.summary.clone())
                .chain(
                    explained
                        .and_then(|verdict| verdict.cause)
                        .map(|cause| format!("log diagnosis: {cause}")),
                )
                .collect(),
            next_steps: vec![if checked {
                "keep this configuration within its stated limit; record it next to the failing run (`oomdoc diff`)".to_owned()
            } else {
                "check a short request and the next real scenario before calling it fit (`oomdoc probe`)".to_owned()
            }],
            source: "run record".to_owned(),
        },
        _ => Verdict {
            cause: match &failure.failed_in {
                Some(phase) => format!("failed in `{phase}`; the record has no diagnosis"),
                None => "failed; the record has no diagnosis".to_owned(),
            },
            cause_kind: None,
            evidence: vec![status.summary.clone()],
            next_steps: vec!["run `oomdoc explain` on the run's log".to_owned()],
            source: "run record".to_owned(),
        },
    }
}

/// Share of a card the weights may take and leave room for KV cache, activations and CUDA
/// graphs (an oomdoc rule of thumb, stated wherever it is used).
pub const WEIGHTS_SHARE: f64 = 0.8;

/// The smallest class of the card table (`model::cards`) whose memory total holds the weights
/// within [`WEIGHTS_SHARE`], named by its marketed memory and its cards.
fn card_class_for(weights: u64) -> Option<String> {
    let needed = weights as f64 / WEIGHTS_SHARE;
    let smallest = CARDS
        .iter()
        .filter(|card| card.total_bytes.0 as f64 >= needed)
        .min_by_key(|card| card.total_bytes)?;
    let names: Vec<&str> = CARDS
        .iter()
        .filter(|card| card.memory_gb == smallest.memory_gb)
        .map(|card| card.name)
        .collect();
    Some(format!(
        "{} GB class ({})",
        smallest.memory_gb,
        names.join(", ")
    ))
}

fn billions(params: f64) -> String {
    if params >= 10e9 {
        format!("{:.0}B", params / 1e9)
    } else {
        format!("{:.1}B", params / 1e9)
    }
}

/// The host side of a run's end (issue 17): a host out-of-memory kill replaces a verdict
/// that could not see it (the log of a SIGKILLed process ends without an error); a SIGKILL
/// without evidence is said as such, never guessed.
fn host_verdict(
    finding: &HostOomFinding,
    gpu_oom_in_log: bool,
    status: &mut RunStatus,
    verdict: &mut Verdict,
    owner: &mut OwnerSummary,
) {
    match finding {
        HostOomFinding::NotKilled => {}
        HostOomFinding::KilledBySignal {
            not_shown_because, ..
        } => {
            status
                .summary
                .push_str("; killed by a signal (cause not shown)");
            verdict.evidence.push(format!(
                "killed by a signal (cause not shown): {}",
                not_shown_because.join("; ")
            ));
        }
        HostOomFinding::HostOomKill(kill) => {
            status
                .summary
                .push_str("; host out-of-memory kill (the kernel's OOM killer)");
            let lines = crate::analyze::host_oom::describe(kill);
            // A GPU OOM the log also shows stays in sight (a process can hit both).
            let gpu_verdict = gpu_oom_in_log.then(|| verdict.cause.clone());
            *verdict = Verdict {
                cause: "host out-of-memory kill: the kernel's OOM killer ended the process (host RAM, not GPU)".to_owned(),
                cause_kind: Some("host_oom_kill".to_owned()),
                evidence: lines.evidence,
                next_steps: lines.next_steps,
                source: "host memory recorded by `oomdoc run` (`/proc` and the memory cgroup)"
                    .to_owned(),
            };
            if let Some(cause) = gpu_verdict {
                verdict
                    .evidence
                    .push(format!("the log also shows a GPU out-of-memory: {cause}"));
            }
            *owner = OwnerSummary {
                from_explain: owner.from_explain.take(),
                kind: "not_a_gpu_oom".to_owned(),
                action: verdict.next_steps.first().cloned(),
                text: format!(
                    "This run did not fail on the GPU: the host ran out of memory and the kernel killed the process{}. {}",
                    kill.limit_bytes.map_or_else(
                        || " (no cgroup limit: the whole machine ran out)".to_owned(),
                        |limit| format!(" at its {limit} memory limit"),
                    ),
                    verdict
                        .next_steps
                        .first()
                        .map_or_else(String::new, |step| format!("First change: {step}.")),
                ),
            };
        }
    }
}

fn owner_summary(
    record: &RecordRead,
    status: &RunStatus,
    failure: &FailureFacts,
    fit: &FitVsMeasured,
    gpus: &[GpuFacts],
    readiness: &Readiness,
) -> OwnerSummary {
    let from_explain = record
        .explain
        .as_ref()
        .and_then(|e| e.verdict.as_ref())
        .and_then(|v| v.owner_summary.clone());
    let capacity = fit.capacity.as_ref().map(|figure| figure.bytes);
    let weights = fit
        .lower_bound
        .as_ref()
        .or(fit.weights_loaded.as_ref())
        .map(|figure| figure.bytes);
    let card = gpus
        .iter()
        .find(|gpu| gpu.visible_to_run)
        .and_then(|gpu| gpu.name.clone())
        .unwrap_or_else(|| "this card".to_owned());
    if !status.failed {
        return OwnerSummary {
            kind: "working_configuration".to_owned(),
            action: None,
            text: format!(
                "No new hardware is indicated by this run: it did not fail on {card}. {}{}{}",
                capitalise(&readiness.summary),
                if readiness.unverified.is_empty() {
                    ".".to_owned()
                } else {
                    format!("; still unverified: {}.", readiness.unverified.join(", "))
                },
                readiness
                    .stated_limit
                    .as_ref()
                    .map_or_else(String::new, |limit| format!(" Its limit as run: {limit}."))
            ),
            // A log without a failure has nothing to add for the owner.
            from_explain: None,
        };
    }
    if failure.is_gpu_oom == Some(false) {
        return OwnerSummary {
            kind: "not_a_gpu_oom".to_owned(),
            action: None,
            text: "The failure is not a GPU out-of-memory: more GPU memory would not fix it. See the verdict.".to_owned(),
            from_explain,
        };
    }
    if let (Some(weights), Some(capacity)) = (weights, capacity) {
        let bf16_params = capacity as f64 * WEIGHTS_SHARE / 2.0;
        let int4_params = capacity as f64 * WEIGHTS_SHARE / 0.5;
        if weights as f64 >= capacity as f64 * 0.9 {
            let class = card_class_for(weights).map_or_else(
                || {
                    format!(
                        "several GPUs with tensor parallelism, {} in total or more",
                        Bytes((weights as f64 / WEIGHTS_SHARE) as u64)
                    )
                },
                |class| format!("a card of the {class} or larger"),
            );
            return OwnerSummary {
                kind: "hardware_limit".to_owned(),
                action: Some(class.clone()),
                text: format!(
                    "Hardware limit: the weights alone need {} and {card} has {}; no setting fixes that. For models of this class, get {class}. Or change the model: on {card}, 16-bit models up to about {} parameters fit, 4-bit quantised ones up to about {} (weights at most {:.0}% of the card, the rest for KV cache and activations).",
                    Bytes(weights),
                    Bytes(capacity),
                    billions(bf16_params),
                    billions(int4_params),
                    WEIGHTS_SHARE * 100.0
                ),
                from_explain,
            };
        }
    }
    let phase = failure.failed_in.as_deref().unwrap_or("unknown");
    let change = match Phase::from_name(phase) {
        Phase::CudaGraphCapture => Some("`--enforce-eager`, or a lower `--gpu-memory-utilization` so CUDA graphs have room"),
        Phase::KvCacheAlloc => Some("a lower `--max-model-len` (or `--max-num-seqs`), or a higher `--gpu-memory-utilization` when the card is not shared"),
        Phase::Profiling => Some("a lower `--max-num-seqs` / `--max-num-batched-tokens`, or a lower `--gpu-memory-utilization`"),
        Phase::FormatConversion => Some("a checkpoint already in the target format (pre-quantised), so no conversion peak is needed at load"),
        Phase::Startup => Some("free the card (other processes hold memory) or lower `--gpu-memory-utilization`"),
        Phase::Inference => Some("a lower `--max-num-seqs` or `--max-model-len`, or limits on request length"),
        _ => None,
    };
    let others_hold = gpus.iter().filter(|gpu| gpu.visible_to_run).any(|gpu| {
        matches!((gpu.free_before_bytes, gpu.total_bytes), (Some(free), Some(total)) if (free as f64) < total as f64 * 0.9)
    });
    let weights_fit =
        matches!((weights, capacity), (Some(w), Some(c)) if (w as f64) < c as f64 * 0.9);
    let after_weights = !matches!(
        Phase::from_name(phase),
        Phase::WeightsLoad | Phase::Startup | Phase::Unknown
    );
    if others_hold {
        return OwnerSummary {
            kind: "configuration_error".to_owned(),
            action: Some("free the card before start, or run on a card nobody else uses".to_owned()),
            text: format!(
                "Configuration error, not a hardware limit: other processes held memory on {card} before the start. Free the card or pick an idle one and run again; if it still fails, the report of that run names the next change. No new hardware is indicated yet."
            ),
            from_explain,
        };
    }
    if let (Some(change), true) = (change, weights_fit || after_weights) {
        return OwnerSummary {
            kind: "configuration_error".to_owned(),
            action: Some(change.to_owned()),
            text: format!(
                "Configuration error, not a hardware limit: {} failed in `{phase}`, after the weights were placed{}. Change: {change}. No new hardware is needed for this model on {card}.",
                if weights_fit { "the model fits and the launch" } else { "the launch" },
                weights.map_or(String::new(), |w| format!(" ({})", Bytes(w)))
            ),
            from_explain,
        };
    }
    // Not decided from measured figures: take the log diagnosis's class when it has one.
    let explained = record.explain.as_ref().and_then(|e| e.verdict.as_ref());
    let explained_kind = match explained.and_then(|v| v.owner_class.as_deref()) {
        Some("hardware_limit") => Some("hardware_limit"),
        Some("configuration") | Some("configuration_error") => Some("configuration_error"),
        Some("not_gpu_memory") => Some("not_a_gpu_oom"),
        _ => None,
    };
    if let (Some(kind), Some(text)) = (explained_kind, from_explain.clone()) {
        return OwnerSummary {
            kind: kind.to_owned(),
            action: explained.and_then(|v| v.next_steps.first().cloned()),
            text: format!(
                "{text} (from the log diagnosis; the report could not check it against a weights lower bound: give `--checkpoint`)"
            ),
            from_explain: None,
        };
    }
    OwnerSummary {
        kind: "undetermined".to_owned(),
        action: Some("run `oomdoc fit` on the checkpoint to compare its lower bound with the card".to_owned()),
        text: format!(
            "Not yet decided between a hardware limit and a configuration error: it failed in `{phase}` and the weights lower bound is unknown. Give `--checkpoint` so the report can compare the model with {card}."
        ),
        from_explain,
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_keeps_a_short_spike() {
        let mut samples: Vec<(u64, u64)> = (0..10_000).map(|t| (t, 100)).collect();
        samples[5_003].1 = 900;
        let reduced = reduce_samples(&samples, 100);
        assert!(reduced.len() <= 102, "{}", reduced.len());
        assert!(reduced.contains(&(5_003, 900)));
        assert_eq!(reduced.last(), Some(&(9_999, 100)));
    }

    #[test]
    fn log_scan_counts_requests_and_finds_the_one_before_the_oom() {
        let log = "INFO:     127.0.0.1:1 - \"POST /v1/completions HTTP/1.1\" 200 OK\n\
                   INFO 11-29 17:00:01 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 7 reqs, Waiting: 0 reqs\n\
                   INFO:     127.0.0.1:2 - \"POST /v1/completions HTTP/1.1\" 500 Internal Server Error\n\
                   torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
        let scan = scan_log(log, false);
        assert_eq!(scan.requests_served, 1);
        assert_eq!(scan.requests_failed, 1);
        assert_eq!(scan.max_running_requests, Some(7));
        assert!(scan
            .request_before_oom
            .unwrap_or_default()
            .contains(" 500 "));
    }

    fn oom_run(weights: u64) -> RunInput {
        let value = serde_json::json!({
            "schema_version": 1,
            "command": ["vllm", "serve", "m"],
            "exit_code": 1,
            "preflight": {"inventory": {"devices": [{
                "index": 0, "uuid": "GPU-1", "name": "NVIDIA H200", "cuda_ordinal": 0,
                "pci_bus_id": "00000000:00:06.0",
                "memory": {"total_bytes": 150754820096u64, "free_bytes": 150109880320u64, "used_bytes": 0}
            }]}},
            "explain": {"is_gpu_oom": true, "phase": {"failed_in": "weights_load", "server_was_ready": false}},
        });
        let record = crate::parse::run_record::read(&value);
        assert!(record.problems.is_empty(), "{:?}", record.problems);
        RunInput {
            label: "run".to_owned(),
            record,
            checkpoint: Some(CheckpointFacts {
                path: Some("model".to_owned()),
                weights_total_bytes: Some(weights),
                source: "checkpoint headers".to_owned(),
                ..CheckpointFacts::default()
            }),
            ..RunInput::default()
        }
    }

    #[test]
    fn weights_beyond_the_card_are_a_hardware_limit_with_a_card_class() {
        let report = build(&[oom_run(300 << 30)]);
        let owner = &report.runs[0].owner_summary;
        assert_eq!(owner.kind, "hardware_limit");
        assert_eq!(
            owner.action.as_deref(),
            Some("several GPUs with tensor parallelism, 375.00 GiB in total or more")
        );
        let report = build(&[oom_run(140 << 30)]);
        let owner = &report.runs[0].owner_summary;
        assert_eq!(owner.kind, "hardware_limit");
        assert!(
            owner
                .action
                .as_deref()
                .unwrap_or_default()
                .contains("180 GB class (B200 180GB)"),
            "{owner:?}"
        );
        assert!(
            owner
                .text
                .contains("16-bit models up to about 60B parameters"),
            "{}",
            owner.text
        );
    }

    #[test]
    fn weights_that_fit_in_a_later_phase_are_a_configuration_error() {
        let mut input = oom_run(61 << 30);
        if let Some(explain) = input.record.explain.as_mut() {
            explain.phase = Some(crate::model::report::PhaseView {
                failed_in: Some("kv_cache_alloc".to_owned()),
                ..Default::default()
            });
        }
        let report = build(&[input]);
        let owner = &report.runs[0].owner_summary;
        assert_eq!(owner.kind, "configuration_error");
        assert!(owner
            .action
            .as_deref()
            .unwrap_or_default()
            .contains("--max-model-len"));
        assert_eq!(
            report.runs[0].fit.lower_bound.as_ref().map(|f| f.bytes),
            Some(61 << 30)
        );
    }

    #[test]
    fn a_shared_reason_is_said_once() {
        let absent = "NVML is absent: the NVIDIA management library could not be loaded";
        let merged = merge_shared_reasons(vec![
            format!("no memory timeline: {absent}"),
            "no checkpoint given (`--checkpoint PATH`): no lower bound".to_owned(),
            format!("no GPU inventory before start: {absent}"),
            format!("no memory timeline: {absent}"),
        ]);
        assert_eq!(
            merged,
            [
                format!("no memory timeline and no GPU inventory before start: {absent}"),
                "no checkpoint given (`--checkpoint PATH`): no lower bound".to_owned(),
            ]
        );
        // A short reason that starts a fuller entry takes the fuller one.
        let merged = merge_shared_reasons(vec![
            "no memory timeline: NVML library not found".to_owned(),
            "the log is large: only its last part was scanned".to_owned(),
            "NVML library not found: libnvidia-ml.so.1 could not be loaded".to_owned(),
        ]);
        assert_eq!(
            merged,
            [
                "no memory timeline: NVML library not found: libnvidia-ml.so.1 could not be loaded",
                "the log is large: only its last part was scanned",
            ]
        );
    }

    #[test]
    fn card_class_leaves_room_above_the_weights() {
        // 60 GiB / 0.8 = 75 GiB: an 80 GB card (H100: 81,559 MiB) holds it, a 48 GB one does not.
        let class = card_class_for(60 << 30).unwrap();
        assert!(class.starts_with("80 GB class ("), "{class}");
        assert!(class.contains("H100"), "{class}");
        // 140 GiB / 0.8 = 175 GiB: the B200 (183,359 MiB = 179 GiB) is the smallest that holds it.
        let class = card_class_for(140 << 30).unwrap();
        assert!(class.starts_with("180 GB class (B200"), "{class}");
        assert_eq!(card_class_for(400 << 30), None);
    }
}
