//! Command-line arguments (clap derive). Each verb's own arguments live beside its code in
//! `cli/commands/<verb>.rs`; the options every verb shares live here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::commands;

/// Tells you why a GPU ran out of memory and what to do about it.
#[derive(Debug, Parser)]
#[command(
    name = "oomdoc",
    version = version_string(),
    about,
    propagate_version = true,
    // Help wraps to the terminal, but never wider than text reports are.
    max_term_width = crate::render::wrap::TEXT_WIDTH,
    after_help = examples::OOMDOC
)]
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
    #[command(after_help = examples::EXPLAIN)]
    Explain(commands::explain::ExplainArgs),
    /// List every GPU and process by UUID, with the CUDA numbering resolved
    #[command(after_help = examples::GPUS)]
    Gpus(commands::gpus::GpusArgs),
    /// Will it fit? Weight bytes and KV cache from the checkpoint's own headers
    #[command(after_help = examples::FIT)]
    Fit(commands::fit::FitArgs),
    /// Analyse a PyTorch memory snapshot: fragmentation or capacity, who holds memory
    #[command(after_help = examples::SNAPSHOT)]
    Snapshot(commands::snapshot::SnapshotArgs),
    /// Run a command and record its launch: preflight, log, memory timeline, phase
    #[command(after_help = examples::RUN)]
    Run(commands::run::RunArgs),
    /// Run the growth/leak protocol against a running OpenAI-compatible server
    #[command(after_help = examples::PROBE)]
    Probe(commands::probe::ProbeArgs),
    /// Write the machine report for one or more recorded runs
    #[command(after_help = examples::REPORT)]
    Report(commands::report::ReportArgs),
    /// Compare a failing and a working run, inputs apart from outcomes
    #[command(after_help = examples::DIFF)]
    Diff(commands::diff::DiffArgs),
    /// Serve GPU memory, OOMs found in followed logs and engine startup figures to Prometheus
    #[command(after_help = examples::EXPORTER)]
    Exporter(commands::exporter::ExporterArgs),
}

/// Options of every command.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// When to colour text output: `auto` (a terminal; honours NO_COLOR and FORCE_COLOR),
    /// `always` or `never`
    // Listed last, under its own heading, in every command's help: it is rarely the option
    // one looks for (issue 16).
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value_t = ColorChoice::Auto,
        hide_possible_values = true,
        display_order = 1000,
        help_heading = "Global options"
    )]
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

/// The examples that end each command's `--help`.
mod examples {
    pub const OOMDOC: &str = "\
Examples:
  oomdoc explain vllm.log                 Why did this launch run out of memory?
  oomdoc fit meta-llama/Llama-3.1-8B --gpu l4
                                          Will this model fit on that GPU?
  oomdoc gpus                             Who holds memory on this machine?";

    pub const EXPLAIN: &str = "\
Examples:
  oomdoc explain vllm.log                 Explain the failure in an engine log
  python train.py 2>&1 | oomdoc explain   Explain what a command printed
  oomdoc explain crash.txt --json         The same as one JSON document (docs/json.md)";

    pub const GPUS: &str = "\
Examples:
  oomdoc gpus                             Every GPU and process, with CUDA ordinals
  oomdoc gpus --watch 2 --record gpus.json
                                          Refresh every 2 s and keep a recording
  nvidia-smi -q -x > smi.xml && oomdoc gpus --gpu-from smi.xml
                                          Read another machine's nvidia-smi output";

    pub const FIT: &str = "\
Examples:
  oomdoc fit ./Llama-3.1-8B --gpu l4      A model directory on a GPU class
  oomdoc fit model.gguf --gpu-memory 24GiB
                                          A GGUF file in 24 GiB of GPU memory
  oomdoc fit org/name --gpu h100 --tensor-parallel-size 2 --max-model-len 32768
                                          A model from the Hugging Face cache, over two GPUs";

    pub const SNAPSHOT: &str = "\
Examples:
  oomdoc snapshot snapshot.pickle         Fragmentation or capacity, and who holds memory
  oomdoc snapshot snapshot.pickle --total-memory 79.15GiB
                                          Also tell other processes' memory apart
  oomdoc snapshot snapshot.pickle --format html -o snapshot.html
                                          One self-contained HTML page";

    pub const RUN: &str = "\
Examples:
  oomdoc run -- vllm serve meta-llama/Llama-3.1-8B
                                          Record a launch into oomdoc-run-<UTC time>/
  oomdoc run --out run-a --torch-snapshot -- python train.py
                                          Also dump a PyTorch memory snapshot on OOM
  oomdoc report run-a                     Then write its report";

    pub const PROBE: &str = "\
Examples:
  oomdoc probe http://127.0.0.1:8000      Does memory grow with requests?
  oomdoc probe http://127.0.0.1:8000 --concurrency 8 --repeat 3
                                          Add parallel requests, three rounds
  oomdoc probe http://gpu-host:8000 --memory-from prometheus:http://gpu-host:9400/metrics
                                          Read memory from dcgm-exporter";

    pub const REPORT: &str = "\
Examples:
  oomdoc report run-a                     The report of one recorded run
  oomdoc report run-a --checkpoint ./Llama-3.1-8B --format html -o report.html
                                          With the weights from the checkpoint, as HTML
  oomdoc report run-a run-b               Two runs side by side";

    pub const DIFF: &str = "\
Examples:
  oomdoc diff run-failed run-ok           What differs between the two launches
  oomdoc diff run-failed run-ok --format markdown
                                          As a GitHub comment
  oomdoc diff run-failed run-ok --json    As one JSON document";

    pub const EXPORTER: &str = "\
Examples:
  oomdoc exporter                         GPU memory on http://127.0.0.1:9835/metrics
  oomdoc exporter --listen 0.0.0.0:9835 --follow '/var/log/pods/*/*/*.log'
                                          Also count the OOMs of every pod on this node
  oomdoc exporter --follow vllm.log --from-start
                                          Count the failures already in a log, then follow it";
}
