//! `oomdoc probe`: the reproducible growth test against an OpenAI-compatible server.
//! The arguments (`args.rs`) become a [`ProbeOptions`](crate::probe::ProbeOptions);
//! `crate::probe` runs the protocol (against a running server, from a clean start with
//! `--launch`, or as a soak with `--duration`); this file renders what comes back.
//!
//! Exit codes: 0 when the protocol ran (any verdict) or stopped at the time limit; 2 when the
//! server cannot be used at all (nothing on stdout), when it failed mid-protocol (the partial
//! report is still written: the readings taken are evidence a person wants to keep), or when a
//! launched server did not start (its log explained on stdout).

use crate::cli::args::Format;
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::model::probe::{GrowthVerdict, ProbeReport};
use crate::probe::launch::LaunchRun;
use crate::probe::{ProbeRun, Stop};
use crate::render;
use crate::render::style::Style;

mod args;

pub use args::{EndpointArg, ProbeArgs};

/// Runs `oomdoc probe`.
pub fn run(args: ProbeArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let options = args.options();
    let probed = if args.launch {
        match crate::probe::launch::run(&options, &args.launch_options())? {
            LaunchRun::Probed(probed) => *probed,
            LaunchRun::FailedToStart {
                repeat,
                error,
                explain,
            } => {
                let color = output.color_for(&args.output);
                let bytes = match args.output.format() {
                    Format::Json => render::explain::json(&explain)?,
                    Format::Markdown => render::explain::markdown(&explain, false),
                    Format::Text | Format::Html => {
                        render::explain::text(&explain, Style::new(color), false)
                    }
                };
                output.report(&args.output, &bytes)?;
                return Err(anyhow::Error::new(error).context(format!(
                    "the server did not start (repeat {} of {}): this is a failure at startup, not a probe result; `explain` of its log is above",
                    repeat + 1,
                    args.repeat
                )));
            }
        }
    } else {
        if !args.command.is_empty() {
            anyhow::bail!("a command after `--` is started only with `--launch`");
        }
        crate::probe::run(&options)?
    };
    let ProbeRun { report, stop } = probed;
    write_report(&report, &args, output)?;
    match stop {
        Some(Stop::Server(error)) => Err(anyhow::Error::new(error).context(format!(
            "the server failed during the protocol; the partial report has verdict `{}`",
            GrowthVerdict::Inconclusive.name()
        ))),
        Some(Stop::TimeLimit(seconds)) => {
            output.warn(&format!(
                "the time limit of {seconds} s was reached before the protocol ended"
            ));
            Ok(ExitStatus::Success)
        }
        Some(Stop::Interrupted) | None => Ok(ExitStatus::Success),
    }
}

fn write_report(report: &ProbeReport, args: &ProbeArgs, output: &mut Output) -> anyhow::Result<()> {
    let color = output.color_for(&args.output);
    let bytes = match args.output.format() {
        Format::Json => render::json::to_document(report)?,
        Format::Text => render::probe::text(report, Style::new(color)),
        Format::Markdown => render::probe::markdown(report),
        Format::Html => render::probe::html(report),
    };
    output.report(&args.output, &bytes)
}
