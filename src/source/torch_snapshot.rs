//! Opening a PyTorch memory snapshot (`torch.cuda.memory._dump_snapshot()`, plain or gzip, or
//! stdin) for the data-only decoder in `parse::torch_snapshot`, with a memory budget scaled to
//! the file's stored size. Nothing here interprets the snapshot.

use std::io::Read;
use std::path::Path;

use anyhow::Context;

use crate::model::snapshot::Snapshot;
use crate::parse::pickle::{Parallel, SCAN_SPLIT_BYTES};
use crate::parse::torch_snapshot;
use crate::source::file;

/// Plain pickle files from this size up are decoded on several threads.
pub const PARALLEL_MIN_BYTES: u64 = 32 << 20;

/// Most threads the decoder uses.
const MAX_THREADS: usize = 64;

/// Threads for decoding one large snapshot (and analysing its trace): `OOMDOC_THREADS` when
/// set (`0`: every core, up to 16), else one (the sequential decoder). More threads are faster on a machine with free
/// cores but hold more memory at once (each thread's memo and tables, and what the allocator
/// keeps of them once freed: about 0.64 of the file on 4 to 8 threads and 0.77 on 16, against
/// 0.40 on one and 0.44 on two, `scripts/bench_snapshot.sh`), so they are asked for, not
/// assumed. Never more than the cores less one: this thread works beside the others (the
/// file's head while the chunks decode, the segments' summary while the trace replays on
/// shards), and one busy thread too many puts two on a core, so the slowest chunk, which every
/// later step waits for, gets half of one (a 16-core host at 16 threads: the head's thread ran
/// 0.062 s of CPU in 0.108 s, a chunk 0.088 s in 0.140 s against 0.10 s for the others).
pub fn decode_threads() -> usize {
    let Some(threads) = std::env::var("OOMDOC_THREADS")
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
    else {
        return 1;
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = if threads == 0 {
        cores.min(16)
    } else {
        threads.min(MAX_THREADS)
    };
    threads.min(cores.saturating_sub(1).max(1))
}

/// Reads one snapshot from `path` (`-`: stdin), each error naming where it came from.
pub fn read(path: &Path) -> anyhow::Result<Snapshot> {
    if path.as_os_str() == "-" {
        return torch_snapshot::read(file::stdin())
            .context("failed to read a memory snapshot from stdin");
    }
    let stored = std::fs::metadata(path).ok().map(|metadata| metadata.len());
    let limits = torch_snapshot::limits_for(stored);
    let threads = decode_threads();
    if threads > 1 && stored.is_some_and(|size| size >= PARALLEL_MIN_BYTES) {
        let file = file::open_regular(path)?;
        let mut first = [0u8; 1];
        // A plain pickle starts with PROTO (0x80); anything else (gzip) is read as a stream.
        if (&file).read_exact(&mut first).is_ok() && first[0] == 0x80 {
            let parallel = Parallel {
                threads,
                chunks: threads,
                scan_split_bytes: SCAN_SPLIT_BYTES,
            };
            return torch_snapshot::read_file(&file, limits, parallel)
                .with_context(|| format!("failed to read memory snapshot `{}`", path.display()));
        }
    }
    let reader = file::open_file(path)?;
    torch_snapshot::read_with_limits(reader, limits)
        .with_context(|| format!("failed to read memory snapshot `{}`", path.display()))
}
