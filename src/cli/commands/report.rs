//! `oomdoc report`: the machine report of one or more recorded runs (R16–R19).
//!
//! Reads each run directory (`run.json`, the log next to it, a `probe.json` if present),
//! redacts everything before analysis (R16), builds the report model and writes it in the
//! format asked. The loading code is shared with `oomdoc diff`.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use serde_json::Value;

use crate::analyze::fit::{self, FitInput, FitOptions, KvCacheDtype};
use crate::analyze::report::{self as analysis, scan_log, CheckpointFacts, RunInput};
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::env_vars;
use crate::error::HintedError;
use crate::model::cards;
use crate::model::report::{value_text, ProbeView, RunRecordView};
use crate::parse::bounded_json;
use crate::redact::Redactor;
use crate::render::report as render;
use crate::render::style::Style;
use crate::source::checkpoint;
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

/// Arguments of `oomdoc report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directories written by `oomdoc run` (each holds `run.json`); two give a comparison
    #[arg(value_name = "RUN_DIR", required = true)]
    pub runs: Vec<PathBuf>,
    /// The model's checkpoint (directory, `.safetensors`, `.gguf`): adds the weights lower bound
    /// from its headers next to what was measured
    #[arg(long, value_name = "PATH")]
    pub checkpoint: Option<PathBuf>,
    /// A probe document (`oomdoc probe URL --json`) of the last RUN_DIR's server; a
    /// `probe.json` inside a run directory is read without this option
    #[arg(long, value_name = "FILE")]
    pub probe: Option<PathBuf>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// A run directory read from disk, not yet redacted.
#[derive(Debug)]
pub struct RawRun {
    /// The directory as the user gave it.
    pub directory: PathBuf,
    /// `run.json`, parsed.
    pub record: Value,
    /// The log (or its last [`LOG_SCAN_LIMIT_BYTES`]), when it could be read.
    pub log: Option<(String, bool)>,
    /// Why the log could not be read.
    pub log_problem: Option<String>,
    /// A probe document: its path and content.
    pub probe: Option<(PathBuf, Value)>,
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

fn read_json(path: &Path, what: &str) -> anyhow::Result<Value> {
    let bytes = read_limited(path, RECORD_LIMIT_BYTES)
        .with_context(|| format!("failed to read {what} `{}`", path.display()))?;
    bounded_json::from_slice(&bytes, RECORD_JSON_LIMITS).map_err(|error| {
        anyhow::Error::new(HintedError::new(
            format!("`{}` is not valid JSON: {error}", path.display()),
            format!("{what} must be the JSON document oomdoc wrote; was the file cut short?"),
        ))
    })
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
    let record = read_json(&record_path, "run record")?;
    match record.get("schema_version").and_then(Value::as_u64) {
        Some(1) => {}
        Some(other) => {
            return Err(HintedError::new(
                format!(
                    "`{}` has `schema_version` {other}; this oomdoc reads version 1",
                    record_path.display()
                ),
                "use the oomdoc version that wrote the record",
            )
            .into())
        }
        None => {
            return Err(HintedError::new(
                format!("`{}` has no `schema_version` 1", record_path.display()),
                "is this a `run.json` written by `oomdoc run`?",
            )
            .into())
        }
    }
    // The log file named by the record, and only a plain name inside the run directory.
    let log_name = record
        .pointer("/log/file")
        .and_then(Value::as_str)
        .and_then(|name| Path::new(name).file_name().map(|n| n.to_os_string()))
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
        Some((
            probe_path.clone(),
            read_json(&probe_path, "probe document")?,
        ))
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

/// Redacts a raw run (record, log, probe, paths) and reads it into the analysis input (R16:
/// nothing unredacted reaches analysis or rendering).
pub fn redact_run(raw: &RawRun, redactor: &Redactor) -> RunInput {
    let mut record_value = raw.record.clone();
    redactor.value(&mut record_value);
    let (record, record_problems) = RunRecordView::from_value(&record_value);
    let log = raw
        .log
        .as_ref()
        .map(|(text, partial)| scan_log(&redactor.text(text), *partial));
    let probe = raw.probe.as_ref().map(|(path, value)| {
        let mut value = value.clone();
        redactor.value(&mut value);
        let view: ProbeView = serde_json::from_value(value).unwrap_or_default();
        (redactor.text(&path.display().to_string()), view)
    });
    RunInput {
        label: redactor.text(&raw.directory.display().to_string()),
        record,
        record_problems,
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

/// Hugging Face caches where a model id given to `--checkpoint` is looked up (as `oomdoc fit`
/// does).
fn hub_caches() -> Vec<PathBuf> {
    let non_empty = |name| std::env::var_os(name).filter(|value| !value.is_empty());
    let mut caches = Vec::new();
    if let Some(cache) = non_empty(env_vars::HF_HUB_CACHE) {
        caches.push(PathBuf::from(cache));
    }
    if let Some(home) = non_empty(env_vars::HF_HOME) {
        caches.push(PathBuf::from(home).join("hub"));
    }
    if let Some(home) = non_empty(env_vars::HOME) {
        caches.push(PathBuf::from(home).join(".cache/huggingface/hub"));
    }
    caches
}

/// The weights lower bound of `--checkpoint` from its own headers (R11), through `oomdoc fit`'s
/// reader and analysis; the facts are read back from fit's serialised report so a field added
/// there does not break the report.
pub fn read_checkpoint(given: &Path, redactor: &Redactor) -> anyhow::Result<CheckpointFacts> {
    let given_text = given.to_string_lossy().into_owned();
    let path = checkpoint::locate(&given_text, &hub_caches())?;
    let read = checkpoint::read(&path, &given_text)?;
    let input = FitInput {
        path: given_text.clone(),
        kind: read.kind,
        safetensors: read.safetensors,
        gguf: read.gguf,
        config: read.config,
        index: read.index,
        names: read.names,
        limitations: read.notes,
    };
    let options = FitOptions {
        kv_cache_dtype: KvCacheDtype::Auto,
        gpu: None,
        gpu_memory_utilization: 0.9,
        max_model_len: None,
        tensor_parallel_size: 1,
        max_num_seqs: 256,
        max_num_batched_tokens: fit::DEFAULT_BATCHED_TOKENS,
        cards: cards::CARDS,
    };
    fit::check_config(&input).map_err(|error| {
        HintedError::new(
            format!("the checkpoint's config is not a real model: {error}"),
            "check `config.json` (or the GGUF metadata) of this checkpoint",
        )
    })?;
    let report = serde_json::to_value(fit::analyze(&input, &options))?;
    let bytes = |pointer: &str| report.pointer(pointer).and_then(Value::as_u64);
    Ok(CheckpointFacts {
        path: Some(redactor.text(&given_text)),
        format: report.get("kind").and_then(value_text),
        weights_total_bytes: bytes("/weights/total_bytes"),
        by_dtype: report
            .pointer("/weights/by_dtype")
            .and_then(Value::as_object)
            .map(|map| {
                map.iter()
                    .filter_map(|(dtype, bytes)| Some((dtype.clone(), bytes.as_u64()?)))
                    .collect()
            })
            .unwrap_or_default(),
        parameters: bytes("/parameters"),
        source: "checkpoint headers (`oomdoc fit`)".to_owned(),
    })
}

/// Runs `oomdoc report`.
pub fn run(args: ReportArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let mut raw_runs = Vec::with_capacity(args.runs.len());
    for path in &args.runs {
        raw_runs.push(load_run(path)?);
    }
    if let Some(probe_path) = &args.probe {
        let probe = read_json(probe_path, "probe document")?;
        if let Some(last) = raw_runs.last_mut() {
            last.probe = Some((probe_path.clone(), probe));
        }
    }
    let redactor = redactor_for(&raw_runs, &[]);
    let mut inputs: Vec<RunInput> = raw_runs
        .iter()
        .map(|raw| redact_run(raw, &redactor))
        .collect();
    if let Some(checkpoint) = &args.checkpoint {
        let facts = read_checkpoint(checkpoint, &redactor)?;
        for input in &mut inputs {
            input.checkpoint = Some(facts.clone());
        }
    }
    let report = analysis::build(&inputs);
    if let Some(warning) = report.comparison.as_ref().and_then(|c| c.warning.as_ref()) {
        output.warn(warning);
    }
    let bytes = match args.output.format() {
        Format::Text => render::render_text(&report, &Style::new(output.color_for(&args.output))),
        Format::Markdown => render::render_markdown(&report),
        Format::Json => render::render_json(&report)?,
        Format::Html => render::render_html(&report),
    };
    output.report(&args.output, &bytes)?;
    Ok(ExitStatus::Success)
}
