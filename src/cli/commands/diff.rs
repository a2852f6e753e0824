//! `oomdoc diff`: a failing and a working run compared field by field, inputs apart from
//! outcomes. Records are redacted before they are compared.

use std::path::PathBuf;

use clap::Args;

use crate::analyze::compare::compare;
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::record::runs::{redact_run, redactor_for};
use crate::render::diff as render;
use crate::render::style::Style;
use crate::source::run_dir::load_run;

/// Arguments of `oomdoc diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Run A (usually the failure): a directory written by `oomdoc run`
    #[arg(value_name = "RUN_A")]
    pub run_a: PathBuf,
    /// Run B (usually the working configuration)
    #[arg(value_name = "RUN_B")]
    pub run_b: PathBuf,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `oomdoc diff`.
pub fn run(args: DiffArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let raw = [load_run(&args.run_a)?, load_run(&args.run_b)?];
    let redactor = redactor_for(&raw);
    let a = redact_run(&raw[0], &redactor)?;
    let b = redact_run(&raw[1], &redactor)?;
    let mut comparison = compare(&a.label, &a.record, None, &b.label, &b.record, None);
    // A field ignored for its shape reads as absent: say so, or it passes for a changed input.
    for (name, run) in [("A", &a), ("B", &b)] {
        for problem in &run.record.problems {
            let note = format!("run {name} (`{}`): {problem}", run.label);
            output.warn_unless_in_document(&args.output, &note);
            comparison.notes.push(note);
        }
    }
    if let Some(warning) = &comparison.warning {
        output.warn_unless_in_document(&args.output, warning);
    }
    let bytes = match args.output.format() {
        Format::Text => {
            render::render_text(&comparison, &Style::new(output.color_for(&args.output)))
        }
        Format::Markdown => render::render_markdown(&comparison),
        Format::Json => render::render_json(&comparison)?,
        Format::Html => render::render_html(&comparison),
    };
    output.report(&args.output, &bytes)?;
    Ok(ExitStatus::Success)
}
