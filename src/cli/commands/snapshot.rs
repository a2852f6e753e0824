//! `oomdoc snapshot FILE`: read a PyTorch memory snapshot safely and say whether an OOM was
//! fragmentation or a lack of memory (R15).
//!
//! file (plain or gzip) → `parse::torch_snapshot` (data-only pickle decoder, streamed)
//! → `analyze::fragmentation` → `render::snapshot` → `Output`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crate::analyze::fragmentation::{self, Options};
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::error::HintedError;
use crate::model::bytes::parse_size_arg;
use crate::model::Bytes;
use crate::parse::torch_snapshot;
use crate::render::snapshot as render;
use crate::render::style::Style;
use crate::source::file;

/// Arguments of `oomdoc snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// The snapshot written by `torch.cuda.memory._dump_snapshot()` (gzip accepted; `-` reads stdin)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The device's total memory, e.g. `139.80GiB` (the OOM message's `total capacity`): lets
    /// oomdoc tell memory held by other processes apart from a lack of capacity
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub total_memory: Option<Bytes>,
    /// How many allocation sites to list per table
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `oomdoc snapshot`.
pub fn run(args: SnapshotArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    if args.top == 0 {
        anyhow::bail!("`--top` must be at least 1");
    }
    let snapshot = if args.file.as_os_str() == "-" {
        torch_snapshot::read(file::stdin())
            .context("failed to read a memory snapshot from stdin")?
    } else {
        let reader = file::open_file(&args.file)?;
        torch_snapshot::read(reader)
            .with_context(|| format!("failed to read memory snapshot `{}`", args.file.display()))?
    };
    let options = Options {
        total_memory: args.total_memory,
        top_sites: args.top,
        ..Options::default()
    };
    let report = fragmentation::analyze(&snapshot, &options);
    drop(snapshot);
    if let Some(total) = args.total_memory {
        // A device total below what PyTorch itself held cannot be that device's: every figure
        // derived from it (memory held outside the allocator, the verdict) would be wrong.
        if let Some(device) = report
            .devices
            .iter()
            .find(|device| device.reserved_bytes > total)
        {
            return Err(HintedError::new(
                format!(
                    "`--total-memory {total}` is less than the {} PyTorch had reserved on device {} in the snapshot",
                    device.reserved_bytes, device.device
                ),
                "give that GPU's total memory: the OOM message's `total capacity`, e.g. `139.80GiB`",
            )
            .into());
        }
    }
    let bytes = match args.output.format() {
        Format::Text => render::text(&report, Style::new(output.color_for(&args.output))),
        Format::Markdown => render::markdown(&report),
        Format::Json => render::json(&report)?,
        Format::Html => render::html(&report),
    };
    output.report(&args.output, &bytes)?;
    if report.devices.is_empty() {
        return Ok(ExitStatus::NothingFound);
    }
    Ok(ExitStatus::Success)
}
