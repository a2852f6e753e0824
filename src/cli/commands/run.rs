//! `oomdoc run [--out DIR] [--sample-rate HZ] [--gpu-from FILE] [--torch-snapshot] -- CMD ARGS…`:
//! run a command and record its launch end to end (the recorder is `crate::record`).
//!
//! oomdoc exits with the child's code (128+N when killed by signal N; 127/126 when it could
//! not start, like a shell). Format: `docs/run-record.md`.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::error::HintedError;
use crate::model::run::RunStatus;
use crate::record::{record_with_host, Diagnostics, HostOptions, RecordOptions};
use crate::render::run::Markup;
use crate::source::process;

/// Arguments of `oomdoc run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Directory for the record (`run.json`, `log.txt`) [default: `oomdoc-run-<UTC time>`]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Reuse `--out DIR` when it holds an earlier oomdoc run (its files are replaced)
    #[arg(long)]
    pub force: bool,
    /// Device memory readings per second (per device); 1000 catches a 10 ms spike
    #[arg(long, value_name = "HZ", default_value_t = 1000.0)]
    pub sample_rate: f64,
    /// Read GPU facts from a recording (`nvidia-smi -q -x` XML or an oomdoc JSON) instead of NVML
    #[arg(long, value_name = "FILE", env = "OOMDOC_GPU_FROM")]
    pub gpu_from: Option<PathBuf>,
    /// For Python children: record PyTorch memory history and dump a snapshot on OOM into DIR
    #[arg(long)]
    pub torch_snapshot: bool,
    /// Do not sample host memory (by default the RSS of the command's process tree and its
    /// memory cgroup are read at 10 Hz, to tell a host out-of-memory kill from other ends)
    #[arg(long)]
    pub no_host_memory: bool,
    /// Replay host memory from a recorded host timeline or `run.json` instead of `/proc`
    #[arg(long, value_name = "FILE", env = "OOMDOC_HOST_FROM", hide = true)]
    pub host_from: Option<PathBuf>,
    /// Log lines kept before each OOM in the record
    #[arg(long, value_name = "N", default_value_t = crate::analyze::explain::CONTEXT_BEFORE)]
    pub context_lines: u64,
    /// Output options of the closing summary (text on stderr by default; stdout is the child's)
    #[command(flatten)]
    pub output: OutputArgs,
    /// The command to run and its arguments (after `--`)
    #[arg(
        value_name = "CMD",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}

impl Diagnostics for Output {
    fn warn(&mut self, message: &str) {
        Output::warn(self, message);
    }

    fn error(&mut self, error: &anyhow::Error) {
        Output::error(self, error);
    }
}

/// Runs `oomdoc run`.
pub fn run(args: RunArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    if args.output.format() == Format::Html {
        return Err(HintedError::new(
            "`oomdoc run` writes no HTML summary",
            "run `oomdoc report DIR --format html` on the run directory afterwards",
        )
        .into());
    }
    // A write past `ulimit -f` must fail (and be reported), not kill oomdoc with its child
    // still running and the record saying `running`.
    if let Err(error) = process::survive_file_size_limit() {
        output.warn(&format!("cannot handle `SIGXFSZ`: {error}"));
    }
    let options = RecordOptions {
        out: args.out,
        force: args.force,
        sample_rate: args.sample_rate,
        gpu_from: args.gpu_from,
        torch_snapshot: args.torch_snapshot,
        context_lines: args.context_lines,
        command: args.command,
        detached: false,
        on_spawn: None,
    };
    let host = HostOptions {
        enabled: !args.no_host_memory,
        replay: args.host_from,
        ..HostOptions::default()
    };
    let recorded = record_with_host(options, &host, output)?;
    let code = recorded.code;
    if recorded.record().status == RunStatus::SpawnFailed {
        return Ok(ExitStatus::Code(u8::try_from(code).unwrap_or(127)));
    }
    match args.output.format() {
        Format::Json => {
            // stdout is the child's: without `-o FILE` (or `-o -`) the document goes to stderr,
            // so that it is never mixed with the child's output.
            let bytes = recorded.document()?;
            match args.output.output.as_deref() {
                Some(_) => output.report(&args.output, &bytes)?,
                None => output.note(String::from_utf8_lossy(&bytes).trim_end()),
            }
        }
        format => {
            let markup = if format == Format::Markdown {
                Markup::Markdown
            } else {
                Markup::Text
            };
            let text = recorded.summary(markup);
            match args.output.output.as_deref() {
                Some(path) if path != Path::new("-") => {
                    output.report(&args.output, text.as_bytes())?
                }
                _ => output.note(text.trim_end()),
            }
        }
    }
    Ok(ExitStatus::Code(
        u8::try_from(code.clamp(0, 255)).unwrap_or(255),
    ))
}
