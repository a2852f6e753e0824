//! `oomdoc exporter`: OOMs as fleet telemetry through Prometheus. Opens the GPU source and
//! hands the rest to `crate::exporter`, which follows the logs and serves `/metrics` and
//! `/events` until SIGTERM or SIGINT.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crate::analyze::devices;
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::exporter::{Exporter, ExporterOptions};
use crate::source::gpu;

/// Arguments of `oomdoc exporter`.
#[derive(Debug, Args)]
pub struct ExporterArgs {
    /// Address to serve `/metrics` and `/events` on (port 0 picks a free port; the address
    /// bound is printed on stderr)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9835")]
    pub listen: SocketAddr,
    /// Follow log files matching GLOB as they grow (repeatable; `*`, `?`, `[…]` per path
    /// component), e.g. `/var/log/pods/*/*/*.log`
    #[arg(long, value_name = "GLOB", num_args = 1..)]
    pub follow: Vec<String>,
    /// Read GPU facts from FILE instead of NVML (as `oomdoc gpus --gpu-from`)
    #[arg(long, value_name = "FILE", env = "OOMDOC_GPU_FROM")]
    pub gpu_from: Option<PathBuf>,
    /// Read the followed files from their start instead of their end
    #[arg(long)]
    pub from_start: bool,
    /// How many failures `/events` keeps
    #[arg(long, value_name = "N", default_value_t = 50,
          value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub events: u16,
    /// Milliseconds between two reads of the followed files
    #[arg(long, value_name = "MS", default_value_t = 500, hide = true)]
    pub poll_ms: u64,
}

/// Runs `oomdoc exporter` until SIGTERM or SIGINT.
pub fn run(args: ExporterArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let from = args
        .gpu_from
        .as_deref()
        .filter(|path| !path.as_os_str().is_empty());
    let source = match gpu::open(from, devices::analyze) {
        Ok(source) => Some(source),
        Err(error) if from.is_some() => {
            return Err(error).context("cannot read the GPU replay file");
        }
        Err(error) => {
            output.warn(&format!(
                "serving no GPU metrics: {error} (`oomdoc_gpu_source_up` is 0)"
            ));
            None
        }
    };
    let options = ExporterOptions {
        listen: args.listen,
        follow: args.follow,
        from_start: args.from_start,
        events: args.events,
        poll_ms: args.poll_ms,
    };
    let exporter = Exporter::bind(options, source)?;
    output.note(&format!(
        "oomdoc exporter listening on http://{}/metrics",
        exporter.address()
    ));
    exporter.serve()?;
    output.note("oomdoc exporter stopped");
    Ok(ExitStatus::Success)
}
