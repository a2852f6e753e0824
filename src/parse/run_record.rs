//! The one reader of `run.json` for `report` and `diff`: the schema check, then every section
//! read through the types `oomdoc run` writes ([`RunRecord`] and its parts), with a note for
//! each section that is not in their shape. Pure: the caller reads the file.
//!
//! Records written before a field existed read it as its default (the types are
//! `#[serde(default)]`); [`Present`] keeps which sections were written at all, where absent and
//! default mean different things (no `status`, no `memory`). A section of the wrong shape is
//! dropped with a note instead of failing the whole record, so a report can still be written
//! from a partial or older record. The `explain` section is also kept as the report reads it
//! ([`ExplainView`]): records older than the current explain document hold a different shape.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::model::explain::ExplainReport;
use crate::model::record_view::ExplainView;
use crate::model::run::{MemoryRecord, RunRecord, RunStatus};

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
}

/// A `run.json` read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordRead {
    /// The record in the writer's types; `explain` is set when the section is in the current
    /// explain shape.
    pub run: RunRecord,
    /// The explain section as the report reads it, whatever explain version wrote it.
    pub explain: Option<ExplainView>,
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
}

/// Reads one field of an object; a field of the wrong shape is reported in `problems` and
/// read as `None`.
fn field<T: DeserializeOwned>(
    object: &Map<String, Value>,
    key: &str,
    problems: &mut Vec<String>,
) -> Option<T> {
    match object.get(key) {
        None | Some(Value::Null) => None,
        Some(value) => match serde_json::from_value(value.clone()) {
            Ok(parsed) => Some(parsed),
            Err(error) => {
                problems.push(format!(
                    "field `{key}` is not in the expected shape and was ignored: {error}"
                ));
                None
            }
        },
    }
}

/// Reads a parsed `run.json` (already redacted). Never fails: what cannot be read is a note.
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
    let explain_view = match object.get("explain") {
        Some(Value::Object(explain)) => Some(ExplainView::from_object(explain, p)),
        _ => None,
    };
    // The current explain document, typed; an older shape stays in the view only.
    let explain = object
        .get("explain")
        .and_then(|value| serde_json::from_value::<ExplainReport>(value.clone()).ok());
    let present = Present {
        status: status.is_some(),
        interrupted: interrupted.is_some(),
        memory: memory.is_some(),
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
        explain: explain_view,
        present,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::explain::Phase;

    #[test]
    fn wrong_shaped_section_is_dropped_with_a_note() {
        let value = serde_json::json!({
            "schema_version": 1,
            "command": ["vllm", "serve", "m"],
            "memory": "not an object",
            "phases": null,
            "explain": {"phase": {"failed_in": "weights_load"}, "verdict": {"evidence": "one line"}},
        });
        let read = read(&value);
        assert_eq!(read.run.command, ["vllm", "serve", "m"]);
        assert!(read.memory().is_none());
        assert!(read.run.phases.is_empty());
        assert_eq!(read.problems.len(), 1, "{:?}", read.problems);
        assert!(read.problems[0].contains("`memory`"));
        // An old explain shape: no typed report, the view still reads it.
        assert!(read.run.explain.is_none());
        let explain = read.explain.unwrap_or_default();
        assert_eq!(
            explain.phase.and_then(|p| p.failed_in).as_deref(),
            Some("weights_load")
        );
        assert_eq!(explain.verdict.unwrap_or_default().evidence, ["one line"]);
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
        let mut typed_explains = 0;
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
            assert!(read.explain.is_some(), "{}", path.display());
            typed_explains += usize::from(read.run.explain.is_some());
            read_count += 1;
        }
        assert!(read_count >= 7, "{read_count}");
        // Two fixtures hold an explain section older than the current document.
        assert_eq!(typed_explains, read_count - 2);
    }
}
