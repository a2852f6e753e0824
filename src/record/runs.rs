//! Recorded runs read back for `report` and `diff`: one redactor for every document of the
//! command, and each run redacted (record, log, probe, paths) into the analysis input, so that
//! nothing unredacted reaches analysis or rendering.

use anyhow::Context;

use crate::analyze::run_report::{scan_log, RunInput};
use crate::parse::run_record::{ProbeRead, RecordRead};
use crate::redact::Redactor;
use crate::source::run_dir::RawRun;

/// A redactor for every document of the command, so a user name found in one run's paths is
/// hidden in the other's too.
pub fn redactor_for(runs: &[RawRun]) -> Redactor {
    let mut redactor = Redactor::default();
    for run in runs {
        redactor.add_users_from_typed(&run.record.run);
        redactor.add_users_from_typed(&run.record.problems);
        if let Some((path, probe)) = &run.probe {
            redactor.add_users_from_typed(&path.display().to_string());
            redactor.add_users_from_typed(&probe.requests);
            redactor.add_users_from_typed(&probe.limitations);
            redactor.add_users_from_typed(&probe.problems);
        }
        redactor.add_users_from_typed(&run.directory.display().to_string());
    }
    // The log is the child's output unredacted: its home paths name users too.
    for (log, _) in runs.iter().filter_map(|run| run.log.as_ref()) {
        redactor.add_users_from_text(log);
    }
    redactor
}

fn texts(redactor: &Redactor, lines: &[String]) -> Vec<String> {
    lines.iter().map(|line| redactor.text(line)).collect()
}

fn redact_record(record: &RecordRead, redactor: &Redactor) -> anyhow::Result<RecordRead> {
    Ok(RecordRead {
        run: redactor
            .typed(&record.run)
            .context("the run record could not be redacted; it is not shown")?,
        present: record.present,
        problems: texts(redactor, &record.problems),
    })
}

fn redact_probe(probe: &ProbeRead, redactor: &Redactor) -> anyhow::Result<ProbeRead> {
    Ok(ProbeRead {
        verdict: probe.verdict,
        requests: redactor
            .typed(&probe.requests)
            .context("the probe document could not be redacted; it is not shown")?,
        plateau_bytes: probe.plateau_bytes,
        limitations: texts(redactor, &probe.limitations),
        problems: texts(redactor, &probe.problems),
    })
}

/// Redacts a raw run (record, log, probe, paths) into the analysis input: nothing unredacted
/// reaches analysis or rendering. Fails only when a redacted string no longer reads back in
/// its type, and then shows nothing of it.
pub fn redact_run(raw: &RawRun, redactor: &Redactor) -> anyhow::Result<RunInput> {
    let record = redact_record(&raw.record, redactor)?;
    let log = raw
        .log
        .as_ref()
        .map(|(text, partial)| scan_log(&redactor.text(text), *partial));
    let probe = match &raw.probe {
        Some((path, probe)) => Some((
            redactor.text(&path.display().to_string()),
            redact_probe(probe, redactor)?,
        )),
        None => None,
    };
    Ok(RunInput {
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
    })
}
