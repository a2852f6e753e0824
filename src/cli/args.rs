//! Command-line arguments (clap derive). Each verb's own arguments live beside its code in
//! `cli/commands/<verb>.rs`; the options every verb shares live here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::commands;

/// Tells you why a GPU ran out of memory and what to do about it.
#[derive(Debug, Parser)]
#[command(name = "oomdoc", version = version_string(), about, propagate_version = true)]
pub struct Cli {
    /// Options of every command.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The verb.
    #[command(subcommand)]
    pub command: Command,
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read an OOM error text or an engine log and say what failed, in which phase, and why
    Explain(commands::explain::ExplainArgs),
    /// List every GPU and process by UUID, with the CUDA numbering resolved
    Gpus(commands::gpus::GpusArgs),
    /// Will it fit? Weight bytes and KV cache from the checkpoint's own headers
    Fit(commands::fit::FitArgs),
    /// Analyse a PyTorch memory snapshot: fragmentation or capacity, who holds memory
    Snapshot(commands::snapshot::SnapshotArgs),
    /// Run a command and record its launch: preflight, log, memory timeline, phase
    Run(commands::run::RunArgs),
    /// Run the growth/leak protocol against a running OpenAI-compatible server
    Probe(commands::probe::ProbeArgs),
    /// Write the machine report for one or more recorded runs
    Report(commands::report::ReportArgs),
    /// Compare a failing and a working run, inputs apart from outcomes
    Diff(commands::diff::DiffArgs),
}

/// Options of every command.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// When to use colour in text output (NO_COLOR and FORCE_COLOR are honoured in `auto`)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal, `TERM` is not `dumb` and `NO_COLOR` is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Output options shared by the verbs that write a report.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Short for `--format json`: one JSON document on stdout (`schema_version` 1)
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Write the report to FILE instead of stdout (`-` is stdout)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    /// The format asked for, `--json` included.
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else {
            self.format
        }
    }
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Text for a terminal (the only format that may use colour).
    Text,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One JSON document.
    Json,
    /// One self-contained HTML file.
    Html,
}

fn version_string() -> &'static str {
    if cfg!(feature = "nvml") {
        concat!(env!("CARGO_PKG_VERSION"), " (+nvml)")
    } else {
        concat!(env!("CARGO_PKG_VERSION"), " (-nvml)")
    }
}
