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

/// Most threads chosen by default. Peak RSS grows with the threads (each keeps its memo and
/// tables, and the allocator keeps what they freed): on the 16-core H200 host, a 577 MiB
/// snapshot read on 12 / 13 / 14 / 15 threads took 0.55 / 0.54 / 0.51 / 0.51 s at best with a
/// peak of 0.47 / 0.48 / 0.49 / 0.50 of the file (twenty-second session); once the serial path
/// had shrunk, 15 threads read it faster than 14 (median 0.336 s against 0.350-0.368 s, peak
/// 0.48 of the file; `scripts/bench_snapshot.sh`, thirty-first session).
const DEFAULT_MAX_THREADS: usize = 15;

/// Threads for decoding one large snapshot (and analysing its trace): `requested` (the
/// command's `--threads`) when given, else `OOMDOC_THREADS` when set, else every core less
/// one, up to 15; `0` asks for that default too. One thread is the sequential decoder, the
/// least memory at once (about 0.40 of a large file's size against about 0.48 on 15 threads,
/// `scripts/bench_snapshot.sh`). Never more than the cores less one: this thread works beside
/// the others (the file's head while the chunks decode, the segments' summary while the trace
/// replays on shards), and one busy thread too many puts two on a core, so the slowest chunk,
/// which every later step waits for, gets half of one (a 16-core host at 16 threads: the
/// head's thread ran 0.062 s of CPU in 0.108 s, a chunk 0.088 s in 0.140 s against 0.10 s for
/// the others).
pub fn decode_threads(requested: Option<usize>) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let requested = requested.or_else(|| {
        std::env::var("OOMDOC_THREADS")
            .ok()
            .and_then(|value| value.trim().parse::<usize>().ok())
    });
    threads_for(requested, cores)
}

/// The choice of `decode_threads` on a machine of `cores` cores.
fn threads_for(requested: Option<usize>, cores: usize) -> usize {
    let threads = match requested {
        None | Some(0) => cores.min(DEFAULT_MAX_THREADS),
        Some(threads) => threads.min(MAX_THREADS),
    };
    threads.min(cores.saturating_sub(1).max(1))
}

/// Reads one snapshot from `path` (`-`: stdin), each error naming where it came from.
/// `threads` as `decode_threads` chose them.
pub fn read(path: &Path, threads: usize) -> anyhow::Result<Snapshot> {
    if path.as_os_str() == "-" {
        return torch_snapshot::read(file::stdin())
            .context("failed to read a memory snapshot from stdin");
    }
    let stored = std::fs::metadata(path).ok().map(|metadata| metadata.len());
    let limits = torch_snapshot::limits_for(stored);
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

#[cfg(test)]
mod tests {
    use super::threads_for;

    #[test]
    fn threads_default_to_the_cores_less_one_up_to_fifteen() {
        assert_eq!(threads_for(None, 1), 1);
        assert_eq!(threads_for(None, 2), 1);
        assert_eq!(threads_for(None, 8), 7);
        assert_eq!(threads_for(None, 16), 15);
        assert_eq!(threads_for(None, 128), 15);
        assert_eq!(threads_for(Some(0), 128), 15);
    }

    #[test]
    fn asked_threads_are_capped_by_the_cores_less_one() {
        assert_eq!(threads_for(Some(1), 64), 1);
        assert_eq!(threads_for(Some(4), 64), 4);
        assert_eq!(threads_for(Some(32), 16), 15);
        assert_eq!(threads_for(Some(1000), 256), 64);
        assert_eq!(threads_for(Some(8), 2), 1);
    }
}
