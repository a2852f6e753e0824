//! `oomdoc fit`.

use clap::Args;

use crate::cli::args::OutputArgs;
use crate::cli::output::Output;
use crate::cli::ExitStatus;

/// Arguments of `oomdoc fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `oomdoc fit`.
pub fn run(_args: FitArgs, _output: &mut Output) -> anyhow::Result<ExitStatus> {
    anyhow::bail!("`oomdoc fit` is not built yet")
}
