//! `oomdoc snapshot FILE`: read a PyTorch memory snapshot safely and say whether an OOM was
//! fragmentation or a lack of memory.
//!
//! file (plain or gzip: `source::torch_snapshot`) → `parse::torch_snapshot` (data-only
//! pickle decoder, streamed) → `analyze::fragmentation` → `render::snapshot` → `Output`.
//!
//! `oomdoc snapshot diff A B` (#19): both files → `analyze::snapshot_diff` → `render::snapshot`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::analyze::fragmentation::{self, Options};
use crate::analyze::{snapshot_diff, snapshot_timeline};
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::model::bytes::parse_size_arg;
use crate::model::Bytes;
use crate::parse::pickle::profile;
use crate::render::snapshot as render;
use crate::render::style::Style;
use crate::source::torch_snapshot;

/// Arguments of `oomdoc snapshot`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SnapshotArgs {
    /// Compare two snapshots instead of reading one.
    #[command(subcommand)]
    pub command: Option<SnapshotCommand>,
    /// The snapshot written by `torch.cuda.memory._dump_snapshot()` (gzip accepted; `-` reads stdin)
    #[arg(value_name = "FILE", required = true)]
    pub file: Option<PathBuf>,
    /// The device's total memory, e.g. `139.80GiB` (the OOM message's `total capacity`): lets
    /// oomdoc tell memory held by other processes apart from a lack of capacity
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub total_memory: Option<Bytes>,
    /// How many allocation sites to list per table
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,
    /// How many threads read the snapshot.
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The threads a large snapshot is read on (both `oomdoc snapshot` and `snapshot diff`).
#[derive(Debug, Args)]
pub struct ThreadsArgs {
    /// Threads for reading a large snapshot (a plain file of 32 MiB or more): default every
    /// core less one, up to 15 (or `OOMDOC_THREADS`); `1` reads on one thread and holds the
    /// least memory at once
    #[arg(long = "threads", short = 'j', value_name = "N")]
    pub requested: Option<usize>,
}

impl ThreadsArgs {
    /// The threads `source::torch_snapshot::decode_threads` chooses for this request.
    fn chosen(&self) -> usize {
        torch_snapshot::decode_threads(self.requested)
    }
}

/// What `oomdoc snapshot` does besides reading one snapshot.
#[derive(Debug, Subcommand)]
pub enum SnapshotCommand {
    /// What changed between two snapshots, at the peak and at the OOM (or the end): by
    /// allocation site, by category and by pool and stream, largest change first
    Diff(SnapshotDiffArgs),
}

/// Arguments of `oomdoc snapshot diff`.
#[derive(Debug, Args)]
pub struct SnapshotDiffArgs {
    /// The first snapshot (A; gzip accepted)
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The second snapshot (B); changes read `B − A`
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// How many rows to list per grouping (categories are always all listed)
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Groupings to show, e.g. `--group-by annotation` or `--group-by site,category`
    /// (default: site, category, pool, and annotation when named ranges were recorded)
    #[arg(long, value_name = "GROUPING", value_enum, value_delimiter = ',')]
    pub group_by: Vec<snapshot_diff::Grouping>,
    /// How many threads read the snapshot.
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

fn run_diff(args: SnapshotDiffArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    if args.top == 0 {
        anyhow::bail!("`--top` must be at least 1");
    }
    let threads = args.threads.chosen();
    let a = torch_snapshot::read(&args.a, threads)?;
    let b = torch_snapshot::read(&args.b, threads)?;
    let diff = snapshot_diff::diff(
        &a,
        &args.a.display().to_string(),
        &b,
        &args.b.display().to_string(),
        &snapshot_diff::Options {
            top: args.top,
            group_by: args.group_by,
        },
    );
    let bytes = match args.output.format() {
        Format::Text => render::diff_text(&diff, Style::new(output.color_for(&args.output))),
        Format::Markdown => render::diff_markdown(&diff),
        Format::Json => render::diff_json(&diff)?,
        Format::Html => render::diff_html(&diff),
    };
    output.report(&args.output, &bytes)?;
    if diff.moments.is_empty() {
        return Ok(ExitStatus::NothingFound);
    }
    Ok(ExitStatus::Success)
}

/// Runs `oomdoc snapshot`.
pub fn run(args: SnapshotArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let path = match (args.command, &args.file) {
        (Some(SnapshotCommand::Diff(diff)), _) => return run_diff(diff, output),
        (None, Some(path)) => path,
        (None, None) => anyhow::bail!("give a snapshot `FILE`"),
    };
    if args.top == 0 {
        anyhow::bail!("`--top` must be at least 1");
    }
    let reading = profile::phase(|| "read the snapshot (all of it)".to_string());
    let threads = args.threads.chosen();
    let snapshot = torch_snapshot::read(path, threads)?;
    drop(reading);
    let options = Options {
        total_memory: args.total_memory,
        top_sites: args.top,
        timeline_points: match args.output.format() {
            Format::Html => snapshot_timeline::DEFAULT_POINTS,
            _ => 0,
        },
        threads,
        ..Options::default()
    };
    let analysis = profile::phase(|| "analysis".to_string());
    // A JSON report is redacted string by string as it is written: its patterns are compiled
    // beside the analysis, not on the path to the output ("render and write" took 0.010-0.012
    // s on the lent hosts; on the VM, varied 268 MB, 0.008 s with the compilation and
    // 0.002-0.006 s without). Where no thread can be made, they are compiled when first
    // used, as before.
    if args.output.format() == Format::Json {
        let _ = std::thread::Builder::new()
            .name("oomdoc-redact".to_string())
            .spawn(crate::redact::prepare);
    }
    let report = fragmentation::analyze(&snapshot, &options);
    drop(analysis);
    // Freeing a large snapshot's many small allocations takes a while: it is done beside the
    // rendering and the process's exit, on a thread of its own that nothing waits for (or
    // here, where none can be made). With `OOMDOC_PROFILE` it is waited for, and timed.
    let dropping = profile::phase(|| "drop the snapshot".to_string());
    let freeing = std::thread::Builder::new()
        .name("oomdoc-free".to_string())
        .spawn(move || drop(snapshot));
    drop(dropping);
    if let Some(total) = args.total_memory {
        fragmentation::check_total_memory(&report, total)?;
    }
    let rendering = profile::phase(|| "render and write".to_string());
    let bytes = match args.output.format() {
        Format::Text => render::text(&report, Style::new(output.color_for(&args.output))),
        Format::Markdown => render::markdown(&report),
        Format::Json => render::json(&report)?,
        Format::Html => render::html(&report),
    };
    output.report(&args.output, &bytes)?;
    drop(rendering);
    if profile::enabled() {
        let _waiting = profile::phase(|| "wait for the snapshot's drop".to_string());
        if let Ok(freeing) = freeing {
            let _ = freeing.join();
        }
    }
    profile::report();
    if report.devices.is_empty() {
        return Ok(ExitStatus::NothingFound);
    }
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use crate::analyze::fragmentation::{self, Options};
    use crate::parse::pickle::{profile, Parallel, SCAN_SPLIT_BYTES};
    use crate::parse::torch_snapshot;
    use crate::render::snapshot as render;
    use crate::render::style::Style;

    /// A large snapshot (`OOMDOC_COMPARE_SNAPSHOT`, e.g. from `scripts/gen_snapshot.py`) gives
    /// the same report decoded and analysed on 16 threads as on one, whatever the machine's
    /// cores (the CLI caps its threads at the cores less one). Writes both JSON reports beside
    /// the file, for a byte comparison with another build's `oomdoc snapshot --json`.
    #[test]
    #[ignore = "needs a large snapshot file: OOMDOC_COMPARE_SNAPSHOT"]
    fn a_large_snapshot_reads_the_same_on_16_threads() {
        let Ok(path) = std::env::var("OOMDOC_COMPARE_SNAPSHOT") else {
            return;
        };
        let report = |threads: usize| {
            let file = std::fs::File::open(&path).unwrap();
            let limits = torch_snapshot::limits_for(file.metadata().ok().map(|m| m.len()));
            // No threads: the sequential decoder.
            let decoders = if threads > 1 { threads } else { 0 };
            let parallel = Parallel {
                threads: decoders,
                chunks: decoders,
                scan_split_bytes: SCAN_SPLIT_BYTES,
            };
            let snapshot = torch_snapshot::read_file(&file, limits, parallel).unwrap();
            let parts = snapshot
                .traces
                .first()
                .map_or(0, |trace| trace.parts().count());
            let options = Options {
                threads,
                ..Options::default()
            };
            let report = fragmentation::analyze(&snapshot, &options);
            let json = render::json(&report).unwrap();
            let text = render::text(&report, Style::new(false));
            (json, text, parts)
        };
        let one = report(1);
        let many = report(16);
        // With OOMDOC_PROFILE=1, each phase of both reads (one thread, then 16).
        profile::report();
        assert!(many.2 > 1, "the trace was not decoded in parts");
        std::fs::write(format!("{path}.1.json"), &one.0).unwrap();
        std::fs::write(format!("{path}.16.json"), &many.0).unwrap();
        assert!(one.0 == many.0, "JSON differs");
        assert!(one.1 == many.1, "text differs");
    }
}
