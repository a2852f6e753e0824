//! The one reader of `run.json` for `report` and `diff`: the schema check, then every section
//! read through the types `oomdoc run` writes ([`RunRecord`] and its parts), with a note for
//! each section that is not in their shape. Pure: the caller reads the file.
//!
//! Records written before a field existed read it as its default (the types are
//! `#[serde(default)]`); [`Present`] keeps which sections were written at all, where absent and
//! default mean different things (no `status`, no `memory`). A section of the wrong shape is
//! dropped with a note instead of failing the whole record, so a report can still be written
//! from a partial or older record.
//!
//! The `explain` section is read part by part into explain's own document ([`ExplainReport`]).
//! Records written before that document was fixed hold other shapes, read here and nowhere
//! else: a `null` reads as absent, a verdict whose `cause` is a sentence (no `headline`) has
//! that sentence as its headline and no cause class, timeline events may name `kind` `event`
//! and `text` `detail`, and an OOM message in another shape is counted, not kept.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::model::explain::{
    Cause, EngineInfo, ExplainReport, PhaseReport, TimelineEvent, Verdict,
};
use crate::model::failure::{EngineName, OomMessage};
use crate::model::probe::{GrowthVerdict, ProbeRequest};
use crate::model::run::{MemoryRecord, RunRecord, RunStatus};
use crate::model::Bytes;

/// The `schema_version` this oomdoc reads and writes.
pub const SCHEMA_VERSION: u64 = 1;

/// Why a record's schema is not the one this oomdoc reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaProblem {
    /// `schema_version` is another number.
    Other(u64),
    /// No numeric `schema_version`.
    Missing,
}

/// Why a `run.json` could not be read at all.
#[derive(Debug)]
pub enum RecordError {
    /// Not JSON, or JSON beyond the limits.
    Json(serde_json::Error),
    /// Another schema.
    Schema(SchemaProblem),
}

/// Reads the bytes of a `run.json` (not redacted yet): JSON within `limits`, the schema
/// checked, every section in its writer's types (see [`read`]).
pub fn parse_record(
    bytes: &[u8],
    limits: super::bounded_json::JsonLimits,
) -> Result<RecordRead, RecordError> {
    let value = super::bounded_json::from_slice(bytes, limits).map_err(RecordError::Json)?;
    check_schema(&value).map_err(RecordError::Schema)?;
    Ok(read(&value))
}

/// Reads the bytes of a probe document (`oomdoc probe --json`): JSON within `limits`, then
/// its parts in the probe's types (see [`read_probe`]).
pub fn parse_probe(
    bytes: &[u8],
    limits: super::bounded_json::JsonLimits,
) -> Result<ProbeRead, serde_json::Error> {
    super::bounded_json::from_slice(bytes, limits).map(|value| read_probe(&value))
}

/// Checks `schema_version` of a parsed record.
pub fn check_schema(value: &Value) -> Result<(), SchemaProblem> {
    match value.get("schema_version").and_then(Value::as_u64) {
        Some(SCHEMA_VERSION) => Ok(()),
        Some(other) => Err(SchemaProblem::Other(other)),
        None => Err(SchemaProblem::Missing),
    }
}

/// Which sections the record holds (read well or not); absent ones read as their defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Present {
    /// `status`.
    pub status: bool,
    /// `interrupted`.
    pub interrupted: bool,
    /// `memory`, read well.
    pub memory: bool,
    /// `explain.verdict.cause` as a cause class (`transient_peak`, …); records before the
    /// current explain document give a sentence instead.
    pub explain_cause: bool,
}

/// A `run.json` read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordRead {
    /// The record in the writer's types; `explain` is set when the record holds the section.
    pub run: RunRecord,
    /// Which sections the record holds.
    pub present: Present,
    /// Sections dropped for their shape, one sentence each.
    pub problems: Vec<String>,
}

impl RecordRead {
    /// How the launch ended; `None` when the record does not say.
    pub fn status(&self) -> Option<RunStatus> {
        self.present.status.then_some(self.run.status)
    }

    /// Whether oomdoc passed a stop signal on; `None` when the record does not say.
    pub fn interrupted(&self) -> Option<bool> {
        self.present.interrupted.then_some(self.run.interrupted)
    }

    /// The memory section, when the record holds one in its shape.
    pub fn memory(&self) -> Option<&MemoryRecord> {
        self.present.memory.then_some(&self.run.memory)
    }

    /// Whether the record says the child is still running.
    pub fn is_running(&self) -> bool {
        self.status() == Some(RunStatus::Running)
    }

    /// explain's reading of the run's log, when the record holds one.
    pub fn explain(&self) -> Option<&ExplainReport> {
        self.run.explain.as_ref()
    }

    /// Whether explain found a GPU out-of-memory; `None` without an explain section.
    pub fn is_gpu_oom(&self) -> Option<bool> {
        self.explain().map(|explain| explain.is_gpu_oom)
    }

    /// explain's cause class, when its verdict names one.
    pub fn explain_cause(&self) -> Option<Cause> {
        self.present
            .explain_cause
            .then(|| self.explain().map(|explain| explain.verdict.cause))
            .flatten()
    }
}

/// Reads one field of an object; a field of the wrong shape is reported in `problems` and
/// read as `None`.
fn field<T: DeserializeOwned>(
    object: &Map<String, Value>,
    key: &str,
    problems: &mut Vec<String>,
) -> Option<T> {
    prefixed_field(object, "", key, problems)
}

/// [`field`] of a section, named `{prefix}{key}` in the note.
fn prefixed_field<T: DeserializeOwned>(
    object: &Map<String, Value>,
    prefix: &str,
    key: &str,
    problems: &mut Vec<String>,
) -> Option<T> {
    match object.get(key) {
        None | Some(Value::Null) => None,
        Some(value) => match serde_json::from_value(value.clone()) {
            Ok(parsed) => Some(parsed),
            Err(error) => {
                problems.push(format!(
                    "field `{prefix}{key}` is not in the expected shape and was ignored: {error}"
                ));
                None
            }
        },
    }
}

/// Reads a list field item by item: an item of another shape costs itself only (with a
/// note); a field that is no list reads as [`prefixed_field`] reads it.
fn items<T: DeserializeOwned>(
    object: &Map<String, Value>,
    prefix: &str,
    key: &str,
    problems: &mut Vec<String>,
) -> Vec<T> {
    let Some(Value::Array(values)) = object.get(key) else {
        return prefixed_field(object, prefix, key, problems).unwrap_or_default();
    };
    values
        .iter()
        .enumerate()
        .filter_map(|(index, value)| match serde_json::from_value(value.clone()) {
            Ok(item) => Some(item),
            Err(error) => {
                problems.push(format!(
                    "field `{prefix}{key}[{index}]` is not in the expected shape and was ignored: {error}"
                ));
                None
            }
        })
        .collect()
}

/// Removes the members whose value is `null`, at every depth: they read as absent.
fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, member| !member.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// Reads the `explain` section into explain's document (see the module notes for older
/// shapes); returns whether its verdict names a cause class.
fn read_explain(section: &Map<String, Value>, problems: &mut Vec<String>) -> (ExplainReport, bool) {
    let mut object = section.clone();
    object.retain(|_, member| !member.is_null());
    object.values_mut().for_each(drop_nulls);
    // A verdict whose `cause` is a sentence rather than a class: the sentence is the headline.
    let mut cause_named = false;
    if let Some(Value::Object(verdict)) = object.get_mut("verdict") {
        if let Some(cause) = verdict.get("cause").cloned() {
            cause_named = serde_json::from_value::<Cause>(cause.clone()).is_ok();
            if !cause_named && cause.is_string() && !verdict.contains_key("headline") {
                verdict.remove("cause");
                verdict.insert("headline".to_owned(), cause);
            }
        }
    }
    let p = problems;
    let x = "explain.";
    let verdict: Option<Verdict> = prefixed_field(&object, x, "verdict", p);
    cause_named &= verdict.is_some();
    // Timeline events and OOM messages one by one: one event of another shape costs itself only.
    let timeline: Vec<TimelineEvent> = items(&object, x, "timeline", p);
    let (ooms, ooms_seen) = match object.get("ooms") {
        Some(Value::Array(messages)) => (
            messages
                .iter()
                .filter_map(|message| serde_json::from_value::<OomMessage>(message.clone()).ok())
                .collect(),
            messages.len() as u64,
        ),
        _ => (prefixed_field(&object, x, "ooms", p).unwrap_or_default(), 0),
    };
    let ooms_total: u64 = prefixed_field(&object, x, "ooms_total", p).unwrap_or_default();
    let report = ExplainReport {
        is_gpu_oom: prefixed_field(&object, x, "is_gpu_oom", p).unwrap_or_default(),
        engine: prefixed_field(&object, x, "engine", p).unwrap_or(EngineInfo {
            name: EngineName::Other,
            version: None,
            generation: None,
            evidence_line: None,
        }),
        model: prefixed_field(&object, x, "model", p),
        config: prefixed_field(&object, x, "config", p).unwrap_or_default(),
        oom: prefixed_field(&object, x, "oom", p),
        ooms,
        ooms_total: ooms_total.max(ooms_seen),
        phase: prefixed_field::<PhaseReport>(&object, x, "phase", p).unwrap_or_default(),
        timeline,
        accounting: prefixed_field(&object, x, "accounting", p).unwrap_or_default(),
        verdict: verdict.unwrap_or_default(),
        versions: prefixed_field(&object, x, "versions", p).unwrap_or_default(),
        context: prefixed_field(&object, x, "context", p).unwrap_or_default(),
        input: prefixed_field(&object, x, "input", p).unwrap_or_default(),
    };
    (report, cause_named)
}

/// Reads a parsed `run.json`. Never fails: what cannot be read is a note.
pub fn read(value: &Value) -> RecordRead {
    let mut problems = Vec::new();
    let Some(object) = value.as_object() else {
        problems.push("run.json is not a JSON object".to_owned());
        return RecordRead {
            problems,
            ..RecordRead::default()
        };
    };
    let p = &mut problems;
    let memory = field::<MemoryRecord>(object, "memory", p).map(|mut memory| {
        // Records that did not say whether memory was sampled: sampled when a device was.
        let said = object
            .get("memory")
            .and_then(|m| m.get("available"))
            .is_some_and(Value::is_boolean);
        if !said {
            memory.available = !memory.devices.is_empty();
        }
        memory
    });
    let status: Option<RunStatus> = field(object, "status", p);
    let interrupted: Option<bool> = field(object, "interrupted", p);
    let (explain, explain_cause) = match object.get("explain") {
        Some(Value::Object(explain)) => {
            let (explain, cause) = read_explain(explain, p);
            (Some(explain), cause)
        }
        None | Some(Value::Null) => (None, false),
        Some(_) => {
            p.push(
                "field `explain` is not in the expected shape and was ignored: not an object"
                    .to_owned(),
            );
            (None, false)
        }
    };
    let present = Present {
        status: status.is_some(),
        interrupted: interrupted.is_some(),
        memory: memory.is_some(),
        explain_cause,
    };
    let run = RunRecord {
        oomdoc_version: field(object, "oomdoc_version", p).unwrap_or_default(),
        status: status.unwrap_or_default(),
        command: field(object, "command", p).unwrap_or_default(),
        cwd: field(object, "cwd", p),
        exit_code: field(object, "exit_code", p),
        signal: field(object, "signal", p),
        interrupted: interrupted.unwrap_or_default(),
        signals_received: field(object, "signals_received", p).unwrap_or_default(),
        started_at: field(object, "started_at", p).unwrap_or_default(),
        ended_at: field(object, "ended_at", p),
        duration_ms: field(object, "duration_ms", p),
        preflight: field(object, "preflight", p).unwrap_or_default(),
        log: field(object, "log", p).unwrap_or_default(),
        explain,
        memory: memory.unwrap_or_default(),
        phases: field(object, "phases", p).unwrap_or_default(),
        ooms: field(object, "ooms", p).unwrap_or_default(),
        torch_snapshot: field(object, "torch_snapshot", p),
        limitations: field(object, "limitations", p).unwrap_or_default(),
        host: field(object, "host", p),
    };
    RecordRead {
        run,
        present,
        problems,
    }
}

/// The parts of a probe document (`oomdoc probe --json`) a report uses, in the probe's own
/// types.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeRead {
    /// The growth verdict.
    pub verdict: Option<GrowthVerdict>,
    /// The requests sent, those in the probe's shape.
    pub requests: Vec<ProbeRequest>,
    /// The plateau level.
    pub plateau_bytes: Option<Bytes>,
    /// What the probe could not measure.
    pub limitations: Vec<String>,
    /// Parts dropped for their shape, one sentence each.
    pub problems: Vec<String>,
}

impl ProbeRead {
    /// The requests that got an HTTP 2xx answer.
    pub fn succeeded(request: &ProbeRequest) -> bool {
        request
            .status
            .is_some_and(|status| (200..300).contains(&status))
    }
}

/// Reads a parsed probe document. Never fails: a part of another shape is
/// a note, a request of another shape costs itself only.
pub fn read_probe(value: &Value) -> ProbeRead {
    let mut problems = Vec::new();
    let Some(object) = value.as_object() else {
        problems.push("the probe document is not a JSON object".to_owned());
        return ProbeRead {
            problems,
            ..ProbeRead::default()
        };
    };
    let p = &mut problems;
    let requests: Vec<ProbeRequest> = items(object, "", "requests", p);
    ProbeRead {
        verdict: prefixed_field(object, "", "verdict", p),
        requests,
        plateau_bytes: prefixed_field(object, "", "plateau_bytes", p),
        limitations: prefixed_field(object, "", "limitations", p).unwrap_or_default(),
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::explain::{EventKind, Phase};

    #[test]
    fn wrong_shaped_section_is_dropped_with_a_note() {
        let value = serde_json::json!({
            "schema_version": 1,
            "command": ["vllm", "serve", "m"],
            "memory": "not an object",
            "phases": null,
            "explain": {
                "phase": {"failed_in": "weights_load"},
                "verdict": {"evidence": "one line"},
                "timeline": [
                    {"kind": "weights_loaded", "phase": "weights_load", "line": 3, "count": 1, "text": "a"},
                    {"kind": "no_such_event", "phase": "weights_load", "text": "b"},
                ],
            },
        });
        let read = read(&value);
        assert_eq!(read.run.command, ["vllm", "serve", "m"]);
        assert!(read.memory().is_none());
        assert!(read.run.phases.is_empty());
        assert_eq!(read.problems.len(), 3, "{:?}", read.problems);
        assert!(read.problems[0].contains("`memory`"));
        assert!(read.problems[1].contains("`explain.verdict`"));
        assert!(read.problems[2].contains("`explain.timeline[1]`"));
        // The rest of the explain section reads.
        let explain = read.explain().unwrap();
        assert_eq!(explain.phase.failed_in, Phase::WeightsLoad);
        assert_eq!(explain.timeline.len(), 1);
        assert_eq!(explain.timeline[0].kind, EventKind::WeightsLoaded);
        assert_eq!(read.explain_cause(), None);
    }

    #[test]
    fn an_explain_section_of_the_first_hand_made_shape_reads() {
        let value = serde_json::json!({
            "schema_version": 1,
            "explain": {
                "is_gpu_oom": true,
                "engine": {"name": "pytorch", "version": "2.11"},
                "model": {"name": "m", "torch_dtype": "bfloat16"},
                "oom": {"gpu_index": 0, "free_bytes": 5, "reserved_total_bytes": null, "other_processes": []},
                "ooms": [{}, {}],
                "phase": {"failed_in": "training_step", "last_completed": "weights_load", "server_was_ready": null},
                "timeline": [{"t_ms": 8000, "phase": "training_step", "event": "training_start", "detail": "step 1"}],
                "verdict": {"cause": "another process holds 40 GiB", "evidence": ["e"], "next_steps": ["s"], "owner_summary": null},
                "versions": {"torch": "2.11"},
            },
        });
        let read = read(&value);
        assert!(read.problems.is_empty(), "{:?}", read.problems);
        let explain = read.explain().unwrap();
        assert_eq!(read.is_gpu_oom(), Some(true));
        assert_eq!(explain.engine.name, EngineName::Pytorch);
        assert_eq!(
            explain.model.as_ref().unwrap().dtype.as_deref(),
            Some("bfloat16")
        );
        assert_eq!(explain.oom.as_ref().unwrap().free_bytes, Some(Bytes(5)));
        // Messages of another shape are counted, not kept.
        assert!(explain.ooms.is_empty());
        assert_eq!(explain.ooms_total, 2);
        assert_eq!(explain.phase.last_completed, Some(Phase::WeightsLoad));
        assert_eq!(explain.timeline[0].kind, EventKind::TrainingStep);
        assert_eq!(explain.timeline[0].text, "step 1");
        assert_eq!(explain.timeline[0].t_ms, Some(8000));
        // The cause sentence is the headline; no cause class.
        assert_eq!(explain.verdict.headline, "another process holds 40 GiB");
        assert_eq!(read.explain_cause(), None);
        assert_eq!(explain.verdict.owner_summary, "");
        // The current shape names the class.
        let current = super::read(&serde_json::json!({
            "schema_version": 1,
            "explain": {"verdict": {"cause": "transient_peak", "headline": "graph capture peak"}},
        }));
        assert_eq!(current.explain_cause(), Some(Cause::TransientPeak));
    }

    #[test]
    fn a_probe_document_reads_in_the_probe_types() {
        let probe = read_probe(&serde_json::json!({
            "verdict": "plateau",
            "plateau_bytes": 7,
            "requests": [
                {"phase": "warmup", "index": 0, "prompt_chars": 64, "status": 200, "latency_ms": 5, "memory_bytes": 7},
                {"phase": "identical", "index": 0, "prompt_chars": 64, "status": null, "latency_ms": 5, "memory_bytes": null, "error": "refused"},
                {"phase": "nonsense", "index": 0},
            ],
        }));
        assert_eq!(probe.verdict, Some(GrowthVerdict::Plateau));
        assert_eq!(probe.plateau_bytes, Some(Bytes(7)));
        assert_eq!(probe.requests.len(), 2);
        assert!(ProbeRead::succeeded(&probe.requests[0]));
        assert!(!ProbeRead::succeeded(&probe.requests[1]));
        assert_eq!(probe.problems.len(), 1, "{:?}", probe.problems);
        assert!(probe.problems[0].contains("`requests[2]`"));
        let wrong = read_probe(&serde_json::json!({"verdict": {"x": 1}, "requests": []}));
        assert_eq!(wrong.verdict, None);
        assert!(wrong.problems[0].contains("`verdict`"));
    }

    #[test]
    fn absent_sections_are_told_apart_from_defaults() {
        let read = read(&serde_json::json!({"schema_version": 1}));
        assert_eq!(read.status(), None);
        assert_eq!(read.interrupted(), None);
        assert!(read.memory().is_none());
        assert!(read.problems.is_empty());
        let read = super::read(&serde_json::json!({
            "schema_version": 1,
            "status": "running",
            "interrupted": false,
            "memory": {"devices": [{"uuid": "GPU-1", "samples": [[0, 5]]}]},
            "phases": [{"phase": "weights_load", "start_t_ms": 3}],
        }));
        assert!(read.is_running());
        assert_eq!(read.interrupted(), Some(false));
        // `available` absent: sampled because a device was.
        assert!(read.memory().is_some_and(|memory| memory.available));
        assert_eq!(read.run.phases[0].phase, Phase::WeightsLoad);
        assert_eq!(read.run.phases[0].start_t_ms, 3);
    }

    #[test]
    fn schema_version_is_checked() {
        assert_eq!(
            check_schema(&serde_json::json!({"schema_version": 1})),
            Ok(())
        );
        assert_eq!(
            check_schema(&serde_json::json!({"schema_version": 2})),
            Err(SchemaProblem::Other(2))
        );
        assert_eq!(
            check_schema(&serde_json::json!({"schema_version": "1"})),
            Err(SchemaProblem::Missing)
        );
    }

    #[test]
    fn a_record_the_writer_wrote_reads_back_equal() {
        let mut record = RunRecord {
            status: RunStatus::Exited,
            command: vec!["python".to_owned(), "train.py".to_owned()],
            exit_code: Some(1),
            started_at: "2026-01-01T00:00:00.000Z".to_owned(),
            ..RunRecord::default()
        };
        record.memory.available = true;
        let mut value = serde_json::to_value(&record).unwrap();
        value["schema_version"] = 1.into();
        let read = read(&value);
        assert!(read.problems.is_empty(), "{:?}", read.problems);
        assert_eq!(read.run, record);
        assert_eq!(read.status(), Some(RunStatus::Exited));
    }
    #[test]
    fn every_run_fixture_reads_without_a_note() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
        let mut causes_named = 0;
        let mut read_count = 0;
        for entry in std::fs::read_dir(&root).unwrap() {
            let path = entry.unwrap().path().join("run.json");
            if !path.is_file() {
                continue;
            }
            let value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            assert_eq!(check_schema(&value), Ok(()), "{}", path.display());
            let read = read(&value);
            assert!(
                read.problems.is_empty(),
                "{}: {:?}",
                path.display(),
                read.problems
            );
            assert!(read.status().is_some(), "{}", path.display());
            assert!(read.explain().is_some(), "{}", path.display());
            // Every fixture but the two hand-made ones of the first shape names its cause.
            causes_named += usize::from(read.explain_cause().is_some());
            read_count += 1;
        }
        assert!(read_count >= 7, "{read_count}");
        assert_eq!(causes_named, read_count - 2);
        let probe: Value = serde_json::from_slice(
            &std::fs::read(root.join("probe-vllm-0.10-h200-util-0.90.json")).unwrap(),
        )
        .unwrap();
        let probe = read_probe(&probe);
        assert!(probe.problems.is_empty(), "{:?}", probe.problems);
        assert_eq!(probe.requests.len(), 39);
    }
}
