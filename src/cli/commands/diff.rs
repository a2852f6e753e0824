//! `oomdoc diff`.

use clap::Args;

use crate::cli::args::OutputArgs;
use crate::cli::output::Output;
use crate::cli::ExitStatus;

/// Arguments of `oomdoc diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `oomdoc diff`.
pub fn run(_args: DiffArgs, _output: &mut Output) -> anyhow::Result<ExitStatus> {
    anyhow::bail!("`oomdoc diff` is not built yet")
}
