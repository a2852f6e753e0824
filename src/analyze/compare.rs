//! Analyse a failing and a working run compared field by field.
//!
//! Inputs (checkpoint, model format, GPU by UUID, free memory before start, driver, engine and
//! library versions, command-line flags, relevant environment) are listed apart from outcomes
//! (status, exit, phase reached, peaks, OOM). The seeds: change one thing at a time, or a
//! success does not show which change helped — so more than one changed input is flagged.
//!
//! Pure: takes redacted records, returns the comparison. No I/O, no formatting of output.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::checkpoint::CheckpointFacts;
use crate::model::explain::Phase;
use crate::model::run::RunStatus;
use crate::model::Bytes;
use crate::parse::run_record::RecordRead;

/// Free memory before start differs between two launches by a few MiB even on an idle card;
/// only a difference above this many bytes, or above [`FREE_TOLERANCE_FRACTION`] of the card,
/// counts as a changed input.
pub const FREE_TOLERANCE_BYTES: u64 = 1 << 30;
/// See [`FREE_TOLERANCE_BYTES`].
pub const FREE_TOLERANCE_FRACTION: f64 = 0.02;

/// The snake_case word serde writes for a unit variant (`weights_loaded`, `vllm`, `nvml`).
pub fn json_word<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value)
        .map(|json| json.trim_matches('"').to_owned())
        .unwrap_or_default()
}

/// One side of a changed field, written in JSON as the bare value (`null` when absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum FieldValue {
    /// Absent on that side.
    Absent,
    /// Text: a flag's value, a name, a version, a phase.
    Text(String),
    /// A count or bytes.
    Unsigned(u64),
    /// An exit code.
    Signed(i64),
    /// Yes or no.
    Flag(bool),
}

impl FieldValue {
    /// The value as text; `None` when absent.
    pub fn text(&self) -> Option<String> {
        match self {
            FieldValue::Absent => None,
            FieldValue::Text(text) => Some(text.clone()),
            FieldValue::Unsigned(number) => Some(number.to_string()),
            FieldValue::Signed(number) => Some(number.to_string()),
            FieldValue::Flag(flag) => Some(flag.to_string()),
        }
    }
}

impl From<&str> for FieldValue {
    fn from(text: &str) -> Self {
        FieldValue::Text(text.to_owned())
    }
}

impl From<String> for FieldValue {
    fn from(text: String) -> Self {
        FieldValue::Text(text)
    }
}

impl From<u64> for FieldValue {
    fn from(number: u64) -> Self {
        FieldValue::Unsigned(number)
    }
}

impl From<i64> for FieldValue {
    fn from(number: i64) -> Self {
        FieldValue::Signed(number)
    }
}

impl From<bool> for FieldValue {
    fn from(flag: bool) -> Self {
        FieldValue::Flag(flag)
    }
}

impl From<Bytes> for FieldValue {
    fn from(bytes: Bytes) -> Self {
        FieldValue::Unsigned(bytes.get())
    }
}

impl From<RunStatus> for FieldValue {
    fn from(status: RunStatus) -> Self {
        FieldValue::Text(status.as_str().to_owned())
    }
}

impl From<Phase> for FieldValue {
    fn from(phase: Phase) -> Self {
        FieldValue::Text(phase.as_str().to_owned())
    }
}

impl<T: Into<FieldValue>> From<Option<T>> for FieldValue {
    fn from(value: Option<T>) -> Self {
        value.map_or(FieldValue::Absent, Into::into)
    }
}

/// One changed field: `a` and `b` are its values (`null` when absent on that side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Field name, e.g. `flag --max-model-len`, `env CUDA_VISIBLE_DEVICES`, `gpu[0]`.
    pub field: String,
    /// Value in run A.
    pub a: FieldValue,
    /// Value in run B.
    pub b: FieldValue,
}

/// How one run ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OutcomeSide {
    /// `exited`, `interrupted`, `signaled`, `running`, `spawn_failed`.
    pub status: Option<RunStatus>,
    /// Exit code.
    pub exit_code: Option<i64>,
    /// Whether the run failed (non-zero exit not caused by the user's interrupt after the
    /// server was ready, or a recorded GPU OOM).
    pub failed: bool,
    /// Whether the failure was a GPU out-of-memory.
    pub is_gpu_oom: Option<bool>,
    /// Phase in progress at the failure.
    pub failed_in: Option<Phase>,
    /// Last completed phase.
    pub last_completed: Option<Phase>,
    /// Whether the server accepted requests.
    pub server_was_ready: Option<bool>,
    /// Highest used bytes on any device (NVML).
    pub peak_used_bytes: Option<Bytes>,
    /// Phase of that peak.
    pub peak_phase: Option<Phase>,
    /// "Tried to allocate" of the first OOM.
    pub oom_tried_to_allocate_bytes: Option<Bytes>,
    /// Run time.
    pub duration_ms: Option<u64>,
    /// Highest sampled RSS of the child's process tree, when host memory was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_peak_rss_bytes: Option<Bytes>,
    /// Phase of that host peak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_peak_phase: Option<String>,
    /// Whether the child ended by a host out-of-memory kill, when host memory was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_oom_kill: Option<bool>,
}

/// Outcome of both runs and how they differ.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Outcome {
    /// Run A.
    pub a: OutcomeSide,
    /// Run B.
    pub b: OutcomeSide,
    /// Outcome fields that differ.
    pub differences: Vec<Change>,
    /// One sentence.
    pub summary: String,
}

/// The comparison (`oomdoc diff --json` body).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Comparison {
    /// Label of run A (its directory, redacted).
    pub run_a: String,
    /// Label of run B.
    pub run_b: String,
    /// Changed inputs only.
    pub changes: Vec<Change>,
    /// Outcomes.
    pub outcome: Outcome,
    /// Whether more than one input changed.
    pub more_than_one_change: bool,
    /// The warning to show when more than one input changed.
    pub warning: Option<String>,
    /// How the comparison was made (tolerances, what could not be compared).
    pub notes: Vec<String>,
}

/// A run's inputs as the comparison sees them.
#[derive(Debug, Clone, Default)]
struct Inputs {
    /// Ordered fields (name → value); flags and env are kept apart to suppress derived fields.
    fields: Vec<(String, FieldValue)>,
    argv: ParsedArgv,
    environment: BTreeMap<String, String>,
    /// Digests of the other variables (empty in older records).
    other_environment: BTreeMap<String, String>,
    gpus: Vec<GpuInput>,
}

#[derive(Debug, Clone, Default)]
struct GpuInput {
    identity: String,
    total_bytes: Option<u64>,
    free_bytes: Option<u64>,
}

/// A command line split into program, positional arguments and flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedArgv {
    /// `argv[0]`.
    pub program: Option<String>,
    /// Positional arguments, in order.
    pub positional: Vec<String>,
    /// Flags by normalised name (`--max_model_len` → `--max-model-len`); a flag without a
    /// value is `true`; a repeated flag keeps every value, joined by a space.
    pub flags: BTreeMap<String, String>,
}

/// Splits argv into flags and positionals, so `--max-model-len 4096` and
/// `--max-model-len=4096` are the same flag and reordered flags are no change.
///
/// A token starting with `-` (and not a negative number) is a flag; its value is the text
/// after `=`, else the next token when that token is not a flag. This cannot tell a boolean
/// flag followed by a positional argument from a flag with a value; the difference then
/// shows as a changed flag and argument.
pub fn parse_argv(argv: &[String]) -> ParsedArgv {
    let mut parsed = ParsedArgv {
        program: argv.first().cloned(),
        ..ParsedArgv::default()
    };
    let mut index = 1;
    while index < argv.len() {
        let token = &argv[index];
        index += 1;
        if token == "--" {
            parsed.positional.extend(argv[index..].iter().cloned());
            break;
        }
        if !is_flag(token) {
            parsed.positional.push(token.clone());
            continue;
        }
        let (name, value) = match token.split_once('=') {
            Some((name, value)) => (name.to_owned(), value.to_owned()),
            None => match argv.get(index) {
                Some(next) if !is_flag(next) => {
                    index += 1;
                    (token.clone(), next.clone())
                }
                _ => (token.clone(), "true".to_owned()),
            },
        };
        let name = normalise_flag(&name);
        parsed
            .flags
            .entry(name)
            .and_modify(|existing| {
                existing.push(' ');
                existing.push_str(&value);
            })
            .or_insert(value);
    }
    parsed
}

fn is_flag(token: &str) -> bool {
    token.len() > 1
        && token.starts_with('-')
        && !token[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

/// vLLM and most Python CLIs accept `_` and `-` alike in long flag names.
fn normalise_flag(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("--") {
        format!("--{}", rest.replace('_', "-"))
    } else {
        name.to_owned()
    }
}

/// Visible devices of a run: the inventory's devices that CUDA sees (`cuda_ordinal` set), in
/// CUDA order; all of them when the inventory does not say.
fn gpu_inputs(record: &RecordRead) -> Vec<GpuInput> {
    let Some(inventory) = record.run.preflight.inventory.as_ref() else {
        return Vec::new();
    };
    let any_ordinal = inventory.devices.iter().any(|d| d.cuda_ordinal.is_some());
    let mut devices: Vec<_> = inventory
        .devices
        .iter()
        .filter(|d| !any_ordinal || d.cuda_ordinal.is_some())
        .collect();
    devices.sort_by_key(|d| (d.cuda_ordinal, d.index));
    devices
        .iter()
        .map(|device| {
            let name = if device.name.is_empty() {
                "unknown GPU".to_owned()
            } else {
                device.name.clone()
            };
            let identity = if device.uuid.is_empty() {
                name
            } else {
                format!("{name} ({})", device.uuid)
            };
            GpuInput {
                identity,
                total_bytes: Some(device.memory.total_bytes.get()),
                free_bytes: Some(device.memory.free_bytes.get()),
            }
        })
        .collect()
}

fn inputs(record: &RecordRead, checkpoint: Option<&CheckpointFacts>) -> Inputs {
    let mut fields: Vec<(String, FieldValue)> = Vec::new();
    let mut push = |name: &str, value: FieldValue| {
        if value != FieldValue::Absent {
            fields.push((name.to_owned(), value));
        }
    };
    let explain = record.explain();
    let model = explain.and_then(|explain| explain.model.as_ref());
    push("checkpoint", checkpoint.and_then(|c| c.path.clone()).into());
    push(
        "checkpoint.weights_bytes",
        checkpoint.and_then(|c| c.weights_total_bytes).into(),
    );
    push("model", model.and_then(|m| m.name.clone()).into());
    push("dtype", model.and_then(|m| m.dtype.clone()).into());
    push(
        "quantization",
        model.and_then(|m| m.quantization.clone()).into(),
    );
    let inventory = record.run.preflight.inventory.clone().unwrap_or_default();
    push("driver_version", inventory.driver_version.into());
    push("cuda_version", inventory.cuda_version.into());
    if let Some(explain) = explain {
        push("engine", json_word(&explain.engine.name).into());
        push("engine.version", explain.engine.version.clone().into());
        for (name, text) in &explain.versions {
            push(&format!("versions.{name}"), text.as_str().into());
        }
    }
    let environment = record.run.preflight.environment.clone();
    Inputs {
        fields,
        argv: parse_argv(&record.run.command),
        other_environment: record.run.preflight.other_environment.clone(),
        environment,
        gpus: gpu_inputs(record),
    }
}

fn text_or_null(value: Option<&String>) -> FieldValue {
    value.map(String::as_str).into()
}

/// Fields derived from the log that a flag already explains (`--dtype`, `--quantization`,
/// `--load-format`, the model argument): listed once, as the flag.
fn explained_by_argv(field: &str, a: &FieldValue, b: &FieldValue, argv_changes: &[Change]) -> bool {
    let flag = match field {
        "dtype" => Some("--dtype"),
        "quantization" => Some("--quantization"),
        "format" => Some("--load-format"),
        _ => None,
    };
    if let Some(flag) = flag {
        if argv_changes
            .iter()
            .any(|change| change.field == format!("flag {flag}"))
        {
            return true;
        }
    }
    // A model (or checkpoint path) change that also shows in the command line.
    let mentions = |value: &FieldValue| {
        value.text().is_some_and(|text| {
            argv_changes.iter().any(|change| {
                [&change.a, &change.b]
                    .iter()
                    .filter_map(|v| v.text())
                    .any(|side| side.contains(&text) || text.contains(&side))
            })
        })
    };
    matches!(field, "model" | "checkpoint") && (mentions(a) || mentions(b))
}

/// Compares two redacted runs.
pub fn compare(
    label_a: &str,
    a: &RecordRead,
    checkpoint_a: Option<&CheckpointFacts>,
    label_b: &str,
    b: &RecordRead,
    checkpoint_b: Option<&CheckpointFacts>,
) -> Comparison {
    let inputs_a = inputs(a, checkpoint_a);
    let inputs_b = inputs(b, checkpoint_b);
    let mut notes = Vec::new();

    // Command line first: the change a person made on purpose.
    let mut argv_changes = Vec::new();
    if inputs_a.argv.program != inputs_b.argv.program {
        argv_changes.push(Change {
            field: "program".to_owned(),
            a: text_or_null(inputs_a.argv.program.as_ref()),
            b: text_or_null(inputs_b.argv.program.as_ref()),
        });
    }
    if inputs_a.argv.positional != inputs_b.argv.positional {
        argv_changes.push(Change {
            field: "arguments".to_owned(),
            a: inputs_a.argv.positional.join(" ").into(),
            b: inputs_b.argv.positional.join(" ").into(),
        });
    }
    let flag_names: std::collections::BTreeSet<&String> = inputs_a
        .argv
        .flags
        .keys()
        .chain(inputs_b.argv.flags.keys())
        .collect();
    for name in flag_names {
        let value_a = inputs_a.argv.flags.get(name);
        let value_b = inputs_b.argv.flags.get(name);
        if value_a != value_b {
            argv_changes.push(Change {
                field: format!("flag {name}"),
                a: text_or_null(value_a),
                b: text_or_null(value_b),
            });
        }
    }

    let mut changes = Vec::new();
    // Fields read from the log, the checkpoint and the inventory.
    let mut names: Vec<&String> = inputs_a.fields.iter().map(|(name, _)| name).collect();
    for (name, _) in &inputs_b.fields {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let lookup = |inputs: &Inputs, name: &str| {
        inputs
            .fields
            .iter()
            .find(|(field, _)| field == name)
            .map_or(FieldValue::Absent, |(_, value)| value.clone())
    };
    for name in names {
        let value_a = lookup(&inputs_a, name);
        let value_b = lookup(&inputs_b, name);
        if value_a != value_b && !explained_by_argv(name, &value_a, &value_b, &argv_changes) {
            changes.push(Change {
                field: name.clone(),
                a: value_a,
                b: value_b,
            });
        }
    }

    // GPUs by UUID and model, and their free memory before start.
    let gpu_count = inputs_a.gpus.len().max(inputs_b.gpus.len());
    for index in 0..gpu_count {
        let gpu_a = inputs_a.gpus.get(index);
        let gpu_b = inputs_b.gpus.get(index);
        let identity_a: FieldValue = gpu_a.map(|g| g.identity.as_str()).into();
        let identity_b: FieldValue = gpu_b.map(|g| g.identity.as_str()).into();
        if identity_a != identity_b {
            changes.push(Change {
                field: format!("gpu[{index}]"),
                a: identity_a,
                b: identity_b,
            });
        }
        let free_a = gpu_a.and_then(|g| g.free_bytes);
        let free_b = gpu_b.and_then(|g| g.free_bytes);
        if let (Some(free_a), Some(free_b)) = (free_a, free_b) {
            let total = gpu_a
                .and_then(|g| g.total_bytes)
                .or(gpu_b.and_then(|g| g.total_bytes))
                .unwrap_or(0);
            let tolerance =
                FREE_TOLERANCE_BYTES.max((total as f64 * FREE_TOLERANCE_FRACTION) as u64);
            if free_a.abs_diff(free_b) > tolerance {
                changes.push(Change {
                    field: format!("gpu[{index}].free_before_bytes"),
                    a: free_a.into(),
                    b: free_b.into(),
                });
            } else if free_a != free_b {
                notes.push(format!(
                    "free memory before start on gpu[{index}] differs by {} ({} → {}), within the tolerance of {}: not counted as a change",
                    Bytes(free_a.abs_diff(free_b)),
                    Bytes(free_a),
                    Bytes(free_b),
                    Bytes(tolerance)
                ));
            }
        } else if free_a.is_some() != free_b.is_some() {
            notes.push(format!(
                "free memory before start on gpu[{index}] is known for one run only: not compared"
            ));
        }
    }
    if inputs_a.gpus.is_empty() && inputs_b.gpus.is_empty() {
        notes.push(
            "neither record has a GPU inventory: GPUs and free memory not compared".to_owned(),
        );
    }

    changes.splice(0..0, argv_changes);

    // Relevant environment.
    let env_names: std::collections::BTreeSet<&String> = inputs_a
        .environment
        .keys()
        .chain(inputs_b.environment.keys())
        .collect();
    for name in env_names {
        let value_a = inputs_a.environment.get(name);
        let value_b = inputs_b.environment.get(name);
        if value_a != value_b {
            changes.push(Change {
                field: format!("env {name}"),
                a: text_or_null(value_a),
                b: text_or_null(value_b),
            });
        }
    }

    // Other variables: only digests are recorded, so the change is named, not its values.
    if !inputs_a.other_environment.is_empty() && !inputs_b.other_environment.is_empty() {
        let names: std::collections::BTreeSet<&String> = inputs_a
            .other_environment
            .keys()
            .chain(inputs_b.other_environment.keys())
            .collect();
        let shown = |digest: Option<&String>| match digest {
            Some(_) => "set (value not recorded)".into(),
            None => FieldValue::Absent,
        };
        for name in names {
            let digest_a = inputs_a.other_environment.get(name);
            let digest_b = inputs_b.other_environment.get(name);
            if digest_a != digest_b {
                let (a, b) = match (digest_a, digest_b) {
                    (Some(_), Some(_)) => (
                        "one value (not recorded)".into(),
                        "another value (not recorded)".into(),
                    ),
                    _ => (shown(digest_a), shown(digest_b)),
                };
                changes.push(Change {
                    field: format!("env {name}"),
                    a,
                    b,
                });
            }
        }
    } else if inputs_a.other_environment.is_empty() != inputs_b.other_environment.is_empty() {
        notes.push(
            "one record has no digests of the other environment variables (written by an older oomdoc): only the memory-relevant variables are compared".to_owned(),
        );
    }

    let outcome = outcome(a, b);
    let more_than_one_change = changes.len() > 1;
    let warning = more_than_one_change.then(|| {
        format!(
            "{} inputs changed between the runs: this comparison cannot show which change helped; change one thing at a time",
            changes.len()
        )
    });
    if changes.is_empty() {
        notes.push(if outcome.differences.is_empty() {
            "no recorded input differs and the outcomes agree".to_owned()
        } else {
            "no recorded input differs, yet the outcomes do: the cause lies outside what was recorded (another job on the card during the run, non-deterministic behaviour); repeat both runs".to_owned()
        });
    }
    Comparison {
        run_a: label_a.to_owned(),
        run_b: label_b.to_owned(),
        changes,
        outcome,
        more_than_one_change,
        warning,
        notes,
    }
}

/// Whether a run failed: a recorded GPU OOM, or a non-zero exit that is not the user
/// stopping a server that had become ready.
pub fn run_failed(record: &RecordRead) -> bool {
    if record.is_gpu_oom() == Some(true) {
        return true;
    }
    if record.status() == Some(RunStatus::SpawnFailed) {
        return true;
    }
    // The user stopping the run (a ready server, or a launch they gave up on) is not a
    // failure of the configuration; the outcome says which it was.
    if record.interrupted() == Some(true) {
        return false;
    }
    !matches!(record.run.exit_code, Some(0) | None)
}

fn outcome_side(record: &RecordRead) -> OutcomeSide {
    let explain = record.explain();
    let phase = explain.map(|explain| &explain.phase);
    let peak = record.memory().and_then(|memory| {
        memory
            .devices
            .iter()
            .filter(|device| device.peak_used_bytes.is_some())
            .max_by_key(|device| device.peak_used_bytes)
    });
    let host_peak = record.run.host.as_ref().and_then(|host| host.peak.as_ref());
    OutcomeSide {
        status: record.status(),
        exit_code: record.run.exit_code.map(i64::from),
        failed: run_failed(record),
        is_gpu_oom: record.is_gpu_oom(),
        // explain says `unknown` when nothing failed; a run that did not fail has no phase of failure.
        failed_in: phase
            .map(|phase| phase.failed_in)
            .filter(|_| run_failed(record)),
        last_completed: phase.and_then(|phase| phase.last_completed),
        server_was_ready: phase.and_then(|phase| phase.server_was_ready),
        peak_used_bytes: peak.and_then(|device| device.peak_used_bytes),
        peak_phase: peak.and_then(|device| device.peak_phase),
        oom_tried_to_allocate_bytes: explain
            .and_then(|explain| explain.oom.as_ref())
            .and_then(|oom| oom.tried_to_allocate_bytes),
        duration_ms: record.run.duration_ms,
        host_peak_rss_bytes: host_peak.map(|peak| peak.reading.tree_rss_bytes),
        host_peak_phase: host_peak.and_then(|peak| peak.phase.clone()),
        host_oom_kill: record
            .run
            .host
            .as_ref()
            .and_then(|host| host.finding.as_ref())
            .map(|finding| matches!(finding, crate::model::host::HostOomFinding::HostOomKill(_))),
    }
}

/// One sentence on how a run ended.
pub fn describe_outcome(side: &OutcomeSide) -> String {
    if side.failed {
        let what = if side.host_oom_kill == Some(true) {
            "was killed by the kernel's OOM killer (host memory)"
        } else if side.is_gpu_oom == Some(true) {
            "failed with a GPU out-of-memory"
        } else {
            "failed"
        };
        match (side.failed_in, side.exit_code) {
            (Some(phase), _) => format!("{what} in `{}`", phase.as_str()),
            (None, Some(code)) => format!("{what} (exit code {code})"),
            (None, None) => what.to_owned(),
        }
    } else if side.server_was_ready == Some(true) {
        "reached a ready server".to_owned()
    } else if side.status == Some(RunStatus::Interrupted) {
        "was interrupted by the user before the server was ready".to_owned()
    } else if side.exit_code == Some(0) {
        "exited with code 0".to_owned()
    } else if side.status == Some(RunStatus::Running) {
        "was still running when the record was read".to_owned()
    } else {
        "ended without a recorded failure".to_owned()
    }
}

fn outcome(a: &RecordRead, b: &RecordRead) -> Outcome {
    let side_a = outcome_side(a);
    let side_b = outcome_side(b);
    let mut differences = Vec::new();
    let mut differ = |field: &str, value_a: FieldValue, value_b: FieldValue| {
        if value_a != value_b {
            differences.push(Change {
                field: field.to_owned(),
                a: value_a,
                b: value_b,
            });
        }
    };
    differ("status", side_a.status.into(), side_b.status.into());
    differ(
        "exit_code",
        side_a.exit_code.into(),
        side_b.exit_code.into(),
    );
    differ("failed", side_a.failed.into(), side_b.failed.into());
    differ(
        "is_gpu_oom",
        side_a.is_gpu_oom.into(),
        side_b.is_gpu_oom.into(),
    );
    differ(
        "failed_in",
        side_a.failed_in.into(),
        side_b.failed_in.into(),
    );
    differ(
        "last_completed",
        side_a.last_completed.into(),
        side_b.last_completed.into(),
    );
    differ(
        "server_was_ready",
        side_a.server_was_ready.into(),
        side_b.server_was_ready.into(),
    );
    differ(
        "peak_used_bytes",
        side_a.peak_used_bytes.into(),
        side_b.peak_used_bytes.into(),
    );
    differ(
        "peak_phase",
        side_a.peak_phase.into(),
        side_b.peak_phase.into(),
    );
    differ(
        "oom_tried_to_allocate_bytes",
        side_a.oom_tried_to_allocate_bytes.into(),
        side_b.oom_tried_to_allocate_bytes.into(),
    );
    // Host memory only when both runs recorded it: an absent side is not a difference.
    if side_a.host_peak_rss_bytes.is_some() && side_b.host_peak_rss_bytes.is_some() {
        differ(
            "host_peak_rss_bytes",
            side_a.host_peak_rss_bytes.into(),
            side_b.host_peak_rss_bytes.into(),
        );
        differ(
            "host_peak_phase",
            side_a.host_peak_phase.clone().into(),
            side_b.host_peak_phase.clone().into(),
        );
    }
    if side_a.host_oom_kill.is_some() && side_b.host_oom_kill.is_some() {
        differ(
            "host_oom_kill",
            side_a.host_oom_kill.into(),
            side_b.host_oom_kill.into(),
        );
    }
    let summary = format!(
        "A {}; B {}",
        describe_outcome(&side_a),
        describe_outcome(&side_b)
    );
    Outcome {
        a: side_a,
        b: side_b,
        differences,
        summary,
    }
}

/// One part of a comparison (`oomdoc diff`, and the comparison in `oomdoc report`): which parts
/// there are, and in what order, is decided once here; each format's writer only lays them out.
#[derive(Debug, Clone, PartialEq)]
pub enum ComparisonPart<'a> {
    /// The two runs compared.
    Runs {
        /// Run A's label.
        a: &'a str,
        /// Run B's label.
        b: &'a str,
    },
    /// The inputs that changed; none: no recorded input differs.
    Inputs(&'a [Change]),
    /// More than one input changed: the comparison cannot say which one helped.
    Warning(&'a str),
    /// How each run ended, and the outcome fields that differ.
    Outcome {
        /// One sentence.
        summary: &'a str,
        /// The outcome fields that differ.
        differences: &'a [Change],
    },
    /// What was noticed but not counted as a change.
    Notes(&'a [String]),
}

impl Comparison {
    /// The comparison's parts in the order every format writes them.
    pub fn parts(&self) -> Vec<ComparisonPart<'_>> {
        let mut parts = vec![
            ComparisonPart::Runs {
                a: &self.run_a,
                b: &self.run_b,
            },
            ComparisonPart::Inputs(&self.changes),
        ];
        parts.extend(self.warning.as_deref().map(ComparisonPart::Warning));
        parts.push(ComparisonPart::Outcome {
            summary: &self.outcome.summary,
            differences: &self.outcome.differences,
        });
        if !self.notes.is_empty() {
            parts.push(ComparisonPart::Notes(&self.notes));
        }
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn flags_in_any_order_and_spelling_are_the_same() {
        let a = parse_argv(&argv(
            "vllm serve m --max-model-len 4096 --enforce-eager --dtype=bf16",
        ));
        let b = parse_argv(&argv(
            "vllm serve m --dtype bf16 --enforce-eager --max_model_len=4096",
        ));
        assert_eq!(a, b);
        assert_eq!(
            a.flags.get("--enforce-eager").map(String::as_str),
            Some("true")
        );
        assert_eq!(a.positional, ["serve", "m"]);
    }

    #[test]
    fn negative_numbers_are_values() {
        let parsed = parse_argv(&argv("llama-server -m x.gguf -ngl -1 --seed -5"));
        assert_eq!(parsed.flags.get("-ngl").map(String::as_str), Some("-1"));
        assert_eq!(parsed.flags.get("--seed").map(String::as_str), Some("-5"));
    }

    #[test]
    fn one_flag_value_is_one_change() {
        let mut a = RecordRead::default();
        a.run.command = argv("vllm serve m --max-model-len 4096");
        let mut b = RecordRead::default();
        b.run.command = argv("vllm serve m --max-model-len 8192");
        a.run.exit_code = Some(1);
        let comparison = compare("a", &a, None, "b", &b, None);
        assert_eq!(comparison.changes.len(), 1);
        assert_eq!(comparison.changes[0].field, "flag --max-model-len");
        assert_eq!(comparison.changes[0].a, FieldValue::from("4096"));
        assert!(!comparison.more_than_one_change);
        assert!(comparison.outcome.a.failed);
        assert!(!comparison.outcome.b.failed);
    }

    #[test]
    fn interrupt_of_a_ready_server_is_not_a_failure() {
        let record = crate::parse::run_record::read(&serde_json::json!({
            "exit_code": 130, "interrupted": true, "status": "interrupted",
            "explain": {"is_gpu_oom": false, "phase": {"server_was_ready": true}},
        }));
        assert!(!run_failed(&record));
    }
}
