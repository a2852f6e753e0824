//! `oomdoc run`.

use clap::Args;

use crate::cli::args::OutputArgs;
use crate::cli::output::Output;
use crate::cli::ExitStatus;

/// Arguments of `oomdoc run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `oomdoc run`.
pub fn run(_args: RunArgs, _output: &mut Output) -> anyhow::Result<ExitStatus> {
    anyhow::bail!("`oomdoc run` is not built yet")
}
