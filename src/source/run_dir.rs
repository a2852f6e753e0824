//! A run directory written by `oomdoc run`, read back for `report` and `diff`: its `run.json`
//! (size- and shape-bounded, schema version checked by `parse::run_record`), the end of its log and a `probe.json`
//! beside it. Nothing here is redacted yet: the caller redacts before analysis.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::error::HintedError;
use crate::parse::bounded_json;
use crate::parse::run_record::{self, ProbeRead, RecordError, RecordRead, SchemaProblem};
use crate::source::file::open_regular;

/// Largest part of a log that is scanned (its end): requests and the failure are near it.
pub const LOG_SCAN_LIMIT_BYTES: u64 = 64 << 20;
/// Largest `run.json` or probe document read (a day of samples is a few MiB). A 254 MB
/// probe document exhausted memory at the former 256 MiB (issue 14).
pub const RECORD_LIMIT_BYTES: u64 = 64 << 20;
/// What a `run.json` or probe document may hold, checked while it is read: a `run.json` with
/// 3 million arguments took 877 MB (issue 14).
pub const RECORD_JSON_LIMITS: bounded_json::JsonLimits = bounded_json::JsonLimits {
    max_values: 2_000_000,
    max_length: 500_000,
};

/// A run directory read from disk, not yet redacted.
#[derive(Debug)]
pub struct RawRun {
    /// The directory as the user gave it.
    pub directory: PathBuf,
    /// `run.json`, read in its writer's types.
    pub record: RecordRead,
    /// The log (or its last [`LOG_SCAN_LIMIT_BYTES`]), when it could be read.
    pub log: Option<(String, bool)>,
    /// Why the log could not be read.
    pub log_problem: Option<String>,
    /// A probe document: its path and what it holds.
    pub probe: Option<(PathBuf, ProbeRead)>,
}

fn read_limited(path: &Path, limit: u64) -> anyhow::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let length = file.metadata()?.len();
    if length > limit {
        anyhow::bail!(
            "`{}` is {length} bytes, more than the {limit} bytes oomdoc reads",
            path.display()
        );
    }
    let mut bytes = Vec::with_capacity(length as usize);
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn not_json(path: &Path, what: &str, error: &serde_json::Error) -> anyhow::Error {
    anyhow::Error::new(HintedError::new(
        format!("`{}` is not valid JSON: {error}", path.display()),
        format!("{what} must be the JSON document oomdoc wrote; was the file cut short?"),
    ))
}

/// Reads a probe document oomdoc wrote (`oomdoc probe --json`), within the size and shape
/// limits above.
pub fn read_probe(path: &Path) -> anyhow::Result<ProbeRead> {
    let what = "probe document";
    let bytes = read_limited(path, RECORD_LIMIT_BYTES)
        .with_context(|| format!("failed to read {what} `{}`", path.display()))?;
    run_record::parse_probe(&bytes, RECORD_JSON_LIMITS)
        .map_err(|error| not_json(path, what, &error))
}

/// Reads the end of a log: the whole file when small, else its last [`LOG_SCAN_LIMIT_BYTES`].
fn read_log(path: &Path) -> anyhow::Result<(String, bool)> {
    let mut file = open_regular(path)?;
    let length = file.metadata()?.len();
    let partial = length > LOG_SCAN_LIMIT_BYTES;
    if partial {
        file.seek(SeekFrom::Start(length - LOG_SCAN_LIMIT_BYTES))?;
    }
    let mut bytes = Vec::new();
    file.take(LOG_SCAN_LIMIT_BYTES).read_to_end(&mut bytes)?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), partial))
}

/// Reads a run directory (or a `run.json` path): the record, checked for schema version 1,
/// its log and a `probe.json` beside it. Errors name the path.
pub fn load_run(path: &Path) -> anyhow::Result<RawRun> {
    let (directory, record_path) = if path.is_file() {
        // A bare `run.json` has the empty path as parent: that is the current directory.
        let parent = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        (parent.to_path_buf(), path.to_path_buf())
    } else {
        (path.to_path_buf(), path.join("run.json"))
    };
    if !directory.exists() {
        return Err(HintedError::new(
            format!("run directory `{}` does not exist", path.display()),
            "pass a directory written by `oomdoc run --out DIR -- …`",
        )
        .into());
    }
    if record_path.exists() && !record_path.is_file() {
        return Err(HintedError::new(
            format!("`{}` is not a file", record_path.display()),
            "pass a directory written by `oomdoc run --out DIR -- …`",
        )
        .into());
    }
    if !record_path.is_file() {
        return Err(HintedError::new(
            format!("`{}` has no `run.json`", directory.display()),
            "pass a directory written by `oomdoc run --out DIR -- …`",
        )
        .into());
    }
    let what = "run record";
    let bytes = read_limited(&record_path, RECORD_LIMIT_BYTES)
        .with_context(|| format!("failed to read {what} `{}`", record_path.display()))?;
    let record = match run_record::parse_record(&bytes, RECORD_JSON_LIMITS) {
        Ok(record) => record,
        Err(RecordError::Json(error)) => return Err(not_json(&record_path, what, &error)),
        Err(RecordError::Schema(SchemaProblem::Other(other))) => {
            return Err(HintedError::new(
                format!(
                    "`{}` has `schema_version` {other}; this oomdoc reads version {}",
                    record_path.display(),
                    run_record::SCHEMA_VERSION
                ),
                "use the oomdoc version that wrote the record",
            )
            .into())
        }
        Err(RecordError::Schema(SchemaProblem::Missing)) => {
            return Err(HintedError::new(
                format!(
                    "`{}` has no `schema_version` {}",
                    record_path.display(),
                    run_record::SCHEMA_VERSION
                ),
                "is this a `run.json` written by `oomdoc run`?",
            )
            .into())
        }
    };
    // The log file named by the record, and only a plain name inside the run directory.
    let log_name = Path::new(&record.run.log.file)
        .file_name()
        .map(|name| name.to_os_string())
        .unwrap_or_else(|| "log.txt".into());
    let log_path = directory.join(&log_name);
    let (log, log_problem) = match read_log(&log_path) {
        Ok(log) => (Some(log), None),
        Err(error) => (
            None,
            Some(format!(
                "the log `{}` could not be read ({error:#}): requests and concurrency in it are unknown",
                log_name.to_string_lossy()
            )),
        ),
    };
    let probe_path = directory.join("probe.json");
    let probe = if probe_path.is_file() {
        Some((probe_path.clone(), read_probe(&probe_path)?))
    } else {
        None
    };
    Ok(RawRun {
        directory,
        record,
        log,
        log_problem,
        probe,
    })
}
