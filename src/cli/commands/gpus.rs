//! `oomdoc gpus`.

use clap::Args;

use crate::cli::args::OutputArgs;
use crate::cli::output::Output;
use crate::cli::ExitStatus;

/// Arguments of `oomdoc gpus`.
#[derive(Debug, Args)]
pub struct GpusArgs {
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `oomdoc gpus`.
pub fn run(_args: GpusArgs, _output: &mut Output) -> anyhow::Result<ExitStatus> {
    anyhow::bail!("`oomdoc gpus` is not built yet")
}
