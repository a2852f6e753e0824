//! `oomdoc report`: the machine report of one or more recorded runs.
//!
//! Reads each run directory (`run.json`, the log next to it, a `probe.json` if present,
//! through `source::run_dir`), redacts everything before analysis (`record::runs`), builds the
//! report model and writes it in the format asked.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::analyze::fit;
use crate::analyze::run_report::{self as analysis, CheckpointFacts, RunInput};
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::record::runs::{redact_run, redactor_for};
use crate::redact::Redactor;
use crate::render::run_report as render;
use crate::render::style::Style;
use crate::source::checkpoint;
use crate::source::run_dir::{load_run, read_probe};

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

/// The weights lower bound of `--checkpoint` from its own headers, through `oomdoc fit`'s
/// reader and analysis.
pub fn read_checkpoint(given: &Path, redactor: &Redactor) -> anyhow::Result<CheckpointFacts> {
    let given_text = given.to_string_lossy().into_owned();
    let input = checkpoint::open(&given_text)?;
    Ok(fit::checkpoint_facts(&input, redactor.text(&given_text))?)
}

/// Runs `oomdoc report`.
pub fn run(args: ReportArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let mut raw_runs = Vec::with_capacity(args.runs.len());
    for path in &args.runs {
        raw_runs.push(load_run(path)?);
    }
    if let Some(probe_path) = &args.probe {
        let probe = read_probe(probe_path)?;
        if let Some(last) = raw_runs.last_mut() {
            last.probe = Some((probe_path.clone(), probe));
        }
    }
    let redactor = redactor_for(&raw_runs);
    let mut inputs: Vec<RunInput> = raw_runs
        .iter()
        .map(|raw| redact_run(raw, &redactor))
        .collect::<anyhow::Result<_>>()?;
    if let Some(checkpoint) = &args.checkpoint {
        let facts = read_checkpoint(checkpoint, &redactor)?;
        for input in &mut inputs {
            input.checkpoint = Some(facts.clone());
        }
    }
    let report = analysis::build(&inputs);
    if let Some(warning) = report.comparison.as_ref().and_then(|c| c.warning.as_ref()) {
        output.warn_unless_in_document(&args.output, warning);
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
