//! `oomdoc snapshot`.

use clap::Args;

use crate::cli::args::OutputArgs;
use crate::cli::output::Output;
use crate::cli::ExitStatus;

/// Arguments of `oomdoc snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `oomdoc snapshot`.
pub fn run(_args: SnapshotArgs, _output: &mut Output) -> anyhow::Result<ExitStatus> {
    anyhow::bail!("`oomdoc snapshot` is not built yet")
}
