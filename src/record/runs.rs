//! Recorded runs read back for `report` and `diff`: one redactor for every document of the
//! command, and each run redacted (record, log, probe, paths) into the analysis input, so that
//! nothing unredacted reaches analysis or rendering.

use serde_json::Value;

use crate::analyze::run_report::{scan_log, RunInput};
use crate::parse::run_record;
use crate::redact::Redactor;
use crate::source::run_dir::RawRun;

/// A redactor for every document of the command, so a user name found in one run's paths is
/// hidden in the other's too.
pub fn redactor_for(runs: &[RawRun], extra: &[&Value]) -> Redactor {
    let mut values: Vec<&Value> = runs.iter().map(|run| &run.record).collect();
    values.extend(
        runs.iter()
            .filter_map(|run| run.probe.as_ref().map(|(_, probe)| probe)),
    );
    values.extend(extra.iter().copied());
    let paths: Vec<Value> = runs
        .iter()
        .map(|run| Value::from(run.directory.display().to_string()))
        .collect();
    values.extend(paths.iter());
    let mut redactor = Redactor::for_values(&values);
    // The log is the child's output unredacted: its home paths name users too.
    for (log, _) in runs.iter().filter_map(|run| run.log.as_ref()) {
        redactor.add_users_from_text(log);
    }
    redactor
}

/// Redacts a raw run (record, log, probe, paths) and reads it into the analysis input:
/// nothing unredacted reaches analysis or rendering.
pub fn redact_run(raw: &RawRun, redactor: &Redactor) -> RunInput {
    let mut record_value = raw.record.clone();
    redactor.value(&mut record_value);
    let record = run_record::read(&record_value);
    let log = raw
        .log
        .as_ref()
        .map(|(text, partial)| scan_log(&redactor.text(text), *partial));
    let probe = raw.probe.as_ref().map(|(path, value)| {
        let mut value = value.clone();
        redactor.value(&mut value);
        (
            redactor.text(&path.display().to_string()),
            run_record::read_probe(&value),
        )
    });
    RunInput {
        label: redactor.text(&raw.directory.display().to_string()),
        record,
        log,
        log_problem: raw
            .log_problem
            .as_ref()
            .map(|problem| redactor.text(problem)),
        probe,
        checkpoint: None,
        checkpoint_problem: None,
    }
}
