//! The arguments of `oomdoc gpus` and their checks.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::cli::args::{Format, OutputArgs};
use crate::error::HintedError;

/// Arguments of `oomdoc gpus`.
#[derive(Debug, Args)]
pub struct GpusArgs {
    /// Read GPU facts from FILE instead of NVML: `nvidia-smi -q -x` XML, an `oomdoc gpus --json`
    /// document or an `oomdoc gpus --record` recording
    #[arg(long, value_name = "FILE", env = "OOMDOC_GPU_FROM")]
    pub gpu_from: Option<PathBuf>,
    /// Refresh every SECS seconds (default 1) until interrupted
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "1")]
    pub watch: Option<f64>,
    /// Also write a recording to FILE, to replay with `--gpu-from FILE` (with `--watch`,
    /// rewritten at each refresh with the memory readings so far)
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Number the GPUs for CUDA as `CUDA_VISIBLE_DEVICES=VALUE` would (with `--gpu-from`, the
    /// default is the numbering recorded on that machine, not this shell's)
    #[arg(long, value_name = "VALUE")]
    pub cuda_visible_devices: Option<String>,
    /// Number the GPUs for CUDA as `CUDA_DEVICE_ORDER=ORDER` would (with `--gpu-from`, the
    /// default is the order recorded on that machine)
    #[arg(long, value_name = "ORDER", value_parser = ["FASTEST_FIRST", "PCI_BUS_ID"])]
    pub cuda_device_order: Option<String>,
    /// Stop `--watch` after N refreshes
    #[arg(long, value_name = "N", hide = true)]
    pub count: Option<u64>,
    /// Measure `memory()` calls per second for SECS seconds and one inventory's latency
    #[arg(long, value_name = "SECS", hide = true)]
    pub bench_sampling: Option<f64>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The usage error for `--watch` with a document format on stdout.
pub(super) fn watch_on_stdout(format: Format) -> HintedError {
    HintedError::new(
        format!(
            "`--watch` refreshes the report, and `--format {}` on stdout would hold one document per refresh",
            match format {
                Format::Json => "json",
                Format::Markdown => "markdown",
                Format::Html | Format::Text => "html",
            }
        ),
        "write the latest report to a file with `-o FILE`, or keep every reading with `--record FILE`",
    )
}

pub(super) fn positive_seconds(seconds: f64, flag: &str) -> anyhow::Result<Duration> {
    if seconds.is_finite() && seconds > 0.0 && seconds < 1e9 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        anyhow::bail!("`{flag}` needs a positive number of seconds, not `{seconds}`")
    }
}
