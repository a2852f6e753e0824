//! The reading pipeline of `oomdoc explain` for one input: scan threads find the markers in
//! chunks of it, and the caller's thread explains the scanned chunks in order. A stream (stdin,
//! a pipe, gzip, converted text) is read by a reader thread that hands the chunks out; a plain
//! file is read by the scan threads themselves, each its own chunks by offset, so that a chunk
//! is scanned while it is still in the cache of the core that read it. Past the head of a long
//! input, chunks are searched for failure markers only and parsed only near a failure and at
//! the end (see [`Tiers`]). The input arrives opened (files and stdin are opened in
//! `source::file`); nothing here knows about paths or the terminal.

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::mpsc;

use anyhow::Context;

use super::candidates::{failure_marker_reach, failure_scan, ScannerTier};
use super::{Explainer, ScannedChunk};
use crate::error::HintedError;
use crate::parse::read_at::read_full_at;

/// How much of the start of an input is checked for binary content.
const SNIFF_BYTES: usize = 8192;

/// Whether the start of an input looks like binary data rather than a log: a NUL byte, or
/// more than 10% of the bytes not valid UTF-8.
fn looks_binary(start: &[u8]) -> bool {
    let start = &start[..start.len().min(SNIFF_BYTES)];
    if start.contains(&0) {
        return true;
    }
    let mut invalid = 0usize;
    let mut rest = start;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(_) => break,
            Err(error) => {
                let valid = error.valid_up_to();
                let bad = error.error_len().unwrap_or(rest.len() - valid);
                // A sequence cut at the end of the sniffed window is not an error.
                if error.error_len().is_none() && rest.len() - valid < 4 {
                    break;
                }
                invalid += bad;
                rest = &rest[valid + bad..];
            }
        }
    }
    invalid * 10 > start.len()
}

/// Bytes read per chunk handed to a scan thread.
const CHUNK_BYTES: usize = 1024 * 1024;

/// How much of a long input is parsed line by line. The head (startup: the engine, model,
/// settings and the stages before serving) and the tail are; the middle (a serving or
/// training loop, most of a large log) is searched for failure markers only, which costs
/// about what `grep` does. A chunk holding a failure marker is parsed with the window of
/// chunks before it (the stages and requests that led to the failure, the traceback) and the
/// chunks after it (the rest of the message, what the engine did next). The report's
/// timeline shows each stretch searched for failures only as one row, and the input summary
/// counts its lines, so nothing unseen is claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiers {
    /// Bytes per chunk.
    pub chunk_bytes: usize,
    /// Chunks at the start parsed whole.
    pub head_chunks: u64,
    /// Chunks kept before the current one, parsed when a failure marker turns up (and at
    /// the end of the input: the tail). Memory holds them: `window_chunks * chunk_bytes`.
    pub window_chunks: usize,
    /// Chunks parsed whole after a chunk with a failure marker or an engine start (none
    /// after a restart whose chunk ends with the new run's requests or stats lines: its
    /// startup is over, what follows is more of the same).
    pub follow_chunks: u64,
    /// Chunks of the window parsed before a chunk that holds engine starts only (a restart,
    /// no failure marker): the previous run's last lines, not the failure's context. With 0,
    /// the lines of that chunk before its first engine start are not parsed either: a run's
    /// timeline, phase and failures start at its engine start (`Explainer`'s
    /// `begin_run_if_starting` drops the run before it unparsed), so those lines only end a
    /// run that has no failure.
    pub restart_window_chunks: usize,
}

impl Tiers {
    /// The defaults: 4 MiB of head, a 4 MiB window before a failure (and tail: about 25,000
    /// lines of a serving log), nothing before an engine start that no failure marker comes
    /// with (from the line of the engine start on), 1 MiB after a failure or an engine start
    /// (none after a restart already serving, see [`Tiers::follow_chunks`]). Each parsed MiB
    /// costs about twenty times what a searched one does (callgrind: about 50 instructions a
    /// byte against 2.7), so on a 1 GiB log with a few restarts and failures the parsed part
    /// stays a few percent.
    pub const DEFAULT: Tiers = Tiers {
        chunk_bytes: CHUNK_BYTES,
        head_chunks: 4,
        window_chunks: 4,
        follow_chunks: 1,
        restart_window_chunks: 0,
    };

    /// Every line parsed, however long the input.
    pub const FULL: Tiers = Tiers {
        chunk_bytes: CHUNK_BYTES,
        head_chunks: u64::MAX,
        window_chunks: 0,
        follow_chunks: 0,
        restart_window_chunks: 0,
    };
}
/// Most scan threads: the explainer takes the chunks in order on one thread, so more
/// scanners than this only hold memory (each keeps up to three chunks in flight).
const MAX_SCAN_THREADS: usize = 4;

/// Threads that scan chunks for markers while the main thread explains them.
fn scan_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .clamp(1, MAX_SCAN_THREADS)
}

/// Feeds one input into the explainer; returns the bytes read.
///
/// A pipeline: a reader thread reads chunks, scan threads find the markers in them (the
/// costly part on a large log) and this thread takes the scanned chunks in order. Memory
/// stays bounded: every channel holds at most one chunk, and buffers are reused.
pub fn feed(
    explainer: &mut Explainer,
    reader: Box<dyn BufRead + Send>,
    name: &str,
) -> anyhow::Result<u64> {
    feed_with(explainer, reader, name, Tiers::DEFAULT)
}

/// [`feed`] with the given [`Tiers`].
pub fn feed_with(
    explainer: &mut Explainer,
    mut reader: Box<dyn BufRead + Send>,
    name: &str,
    tiers: Tiers,
) -> anyhow::Result<u64> {
    explainer.start_input(name);
    let start = loop {
        match reader.fill_buf() {
            Ok(chunk) => break chunk,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => {
                return Err(error).with_context(|| format!("failed to read `{name}`"));
            }
        }
    };
    if start.is_empty() {
        return Ok(0);
    }
    if looks_binary(start) {
        return Err(binary_input(name));
    }
    let threads = scan_threads();
    std::thread::scope(|scope| {
        let (recycle, recycled) = mpsc::channel::<ScannedChunk>();
        let mut to_scanners = Vec::with_capacity(threads);
        let mut from_scanners = Vec::with_capacity(threads);
        let mut scanners = Vec::with_capacity(threads);
        for _ in 0..threads {
            let (to_scanner, chunks) = mpsc::sync_channel::<(ScannedChunk, bool)>(1);
            let (scanned, from_scanner) = mpsc::sync_channel::<ScannedChunk>(1);
            let scanner = std::thread::Builder::new()
                .name("oomdoc-scan".into())
                .spawn_scoped(scope, move || {
                    for (mut chunk, starts_line) in chunks {
                        chunk.scan(starts_line);
                        if scanned.send(chunk).is_err() {
                            break;
                        }
                    }
                })
                .context("failed to start a thread")?;
            scanners.push(scanner);
            to_scanners.push(to_scanner);
            from_scanners.push(from_scanner);
        }
        let reader = std::thread::Builder::new()
            .name("oomdoc-read".into())
            .spawn_scoped(scope, move || {
                read_chunks(&mut reader, &to_scanners, &recycled, tiers)
            })
            .context("failed to start a thread")?;
        take_in_order(explainer, from_scanners, recycle, tiers);
        let read = reader.join();
        let scanned_all = scanners.into_iter().all(|scanner| scanner.join().is_ok());
        match read {
            Ok(Ok(total)) if scanned_all => Ok(total),
            Ok(Err(error)) => Err(error).with_context(|| format!("failed to read `{name}`")),
            _ => Err(anyhow::anyhow!(
                "internal error: a thread reading `{name}` stopped unexpectedly"
            )),
        }
    })
}

/// Takes the scanned chunks in order (chunk `i` from scanner `i % threads`) into the
/// explainer, up to the first chunk shorter than a whole one (the input's end) or until a
/// scanner stops sending; returns the bytes taken. The scanners' channels are closed on
/// return, so a scanner still holding a chunk stops.
fn take_in_order(
    explainer: &mut Explainer,
    from_scanners: Vec<mpsc::Receiver<ScannedChunk>>,
    recycle: mpsc::Sender<ScannedChunk>,
    tiers: Tiers,
) -> u64 {
    let mut tiered = Tiered::new(tiers);
    let mut taken = 0u64;
    for from_scanner in from_scanners.iter().cycle() {
        let Ok(chunk) = from_scanner.recv() else {
            break;
        };
        let len = chunk.bytes.len();
        taken += len as u64;
        tiered.take(explainer, chunk, &recycle);
        if len < tiers.chunk_bytes.max(1) {
            break;
        }
    }
    tiered.finish(explainer, &recycle);
    taken
}

/// [`feed_with`] for a regular file read in place from `start` (past a byte-order mark, say):
/// each scan thread reads its own chunks by offset and scans them while they are still in its
/// core's cache, with no reader thread copying every byte across to another core. A file
/// that grows meanwhile (a live log) is read up to the first chunk found short.
pub fn feed_file(
    explainer: &mut Explainer,
    file: &std::fs::File,
    start: u64,
    name: &str,
    tiers: Tiers,
) -> anyhow::Result<u64> {
    let read_error = || format!("failed to read `{name}`");
    explainer.start_input(name);
    let mut head = vec![0; SNIFF_BYTES];
    let sniffed = read_full_at(file, &mut head, start).with_context(read_error)?;
    if sniffed == 0 {
        return Ok(0);
    }
    if looks_binary(&head[..sniffed]) {
        return Err(binary_input(name));
    }
    let threads = scan_threads();
    let chunk_bytes = tiers.chunk_bytes.max(1);
    let (recycle, recycled) = mpsc::channel::<ScannedChunk>();
    let recycled = std::sync::Mutex::new(recycled);
    let recycled = &recycled;
    std::thread::scope(|scope| {
        let mut from_scanners = Vec::with_capacity(threads);
        let mut scanners = Vec::with_capacity(threads);
        for first in 0..threads {
            let (scanned, from_scanner) = mpsc::sync_channel::<ScannedChunk>(1);
            let scanner = std::thread::Builder::new()
                .name("oomdoc-scan".into())
                .spawn_scoped(scope, move || -> std::io::Result<()> {
                    for index in (first as u64..).step_by(threads) {
                        let reused = recycled.lock().ok().and_then(|r| r.try_recv().ok());
                        let mut chunk = reused.unwrap_or_default();
                        chunk.failures_only = index >= tiers.head_chunks;
                        let offset = start + index * chunk_bytes as u64;
                        let starts_line = index == 0 || {
                            let mut before = [0u8];
                            read_full_at(file, &mut before, offset - 1)? == 1 && before[0] == b'\n'
                        };
                        let buffer = chunk.bytes_mut();
                        buffer.resize(chunk_bytes, 0);
                        let filled = read_full_at(file, buffer, offset)?;
                        buffer.truncate(filled);
                        if filled == 0 {
                            break;
                        }
                        chunk.scan(starts_line);
                        if scanned.send(chunk).is_err() || filled < chunk_bytes {
                            break;
                        }
                    }
                    Ok(())
                })
                .context("failed to start a thread")?;
            scanners.push(scanner);
            from_scanners.push(from_scanner);
        }
        let taken = take_in_order(explainer, from_scanners, recycle, tiers);
        let mut outcome = Ok(taken);
        for scanner in scanners {
            match scanner.join() {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    if outcome.is_ok() {
                        outcome = Err(anyhow::Error::new(error).context(read_error()));
                    }
                }
                Err(_) => {
                    outcome = Err(anyhow::anyhow!(
                        "internal error: a thread reading `{name}` stopped unexpectedly"
                    ));
                }
            }
        }
        outcome
    })
}

/// The error for an input that is not text.
fn binary_input(name: &str) -> anyhow::Error {
    HintedError::new(
        format!("`{name}` looks like binary data, not a text log"),
        "pass the log or the error text itself (plain text or .gz); `oomdoc snapshot` reads memory snapshots",
    )
    .into()
}

/// The explaining side of [`feed_with`]: takes the scanned chunks in order and decides, by
/// the [`Tiers`], which are parsed and which are only counted.
struct Tiered {
    tiers: Tiers,
    /// Chunks after a failure still to parse whole.
    follow: u64,
    /// Chunks searched for failures only (none found) and not yet handed to the explainer,
    /// each with whether the chunk before it ended a line.
    window: VecDeque<(ScannedChunk, bool)>,
    /// Whether the last chunk taken ended a line (the input's start does).
    ends_line: bool,
    /// The last bytes of the previous chunk, to find a marker cut by a chunk boundary.
    seam: Vec<u8>,
}

impl Tiered {
    fn new(tiers: Tiers) -> Self {
        Tiered {
            tiers,
            follow: 0,
            window: VecDeque::with_capacity(tiers.window_chunks + 1),
            ends_line: true,
            seam: Vec::new(),
        }
    }

    /// Whether a failure marker crosses from the previous chunk into `bytes`; remembers the
    /// end of `bytes` for the next chunk.
    fn marker_across_seam(&mut self, bytes: &[u8]) -> bool {
        // The failure search is built only for a second chunk: a short input (one chunk, a
        // pasted error) never needs it (building it was a fifth of the instructions of
        // `oomdoc explain` on a short text, callgrind).
        let reach = failure_marker_reach();
        let across = !self.seam.is_empty() && {
            let mut joined = std::mem::take(&mut self.seam);
            joined.extend_from_slice(&bytes[..bytes.len().min(reach)]);
            let found = failure_scan().finds(&joined);
            self.seam = joined;
            found
        };
        self.seam.clear();
        if bytes.len() >= reach {
            self.seam.extend_from_slice(&bytes[bytes.len() - reach..]);
        } else {
            // A short chunk is the last one: nothing follows it.
            self.seam.extend_from_slice(bytes);
        }
        across
    }

    /// Hands the chunks kept in the window to the explainer, parsed (with the scanner of
    /// program logs: see `candidates::log_scanner`). The scan threads wait meanwhile (their
    /// channels are full), so the window's chunks are scanned on threads of their own, the
    /// first on this one, which explains it while the others are scanned.
    fn parse_window(&mut self, explainer: &mut Explainer, recycle: &mpsc::Sender<ScannedChunk>) {
        explainer.set_tier(ScannerTier::Log);
        let mut chunks: Vec<(ScannedChunk, bool)> = self.window.drain(..).collect();
        let first_len = chunks.len().min(1);
        let (first, rest) = chunks.split_at_mut(first_len);
        std::thread::scope(|scope| {
            for (chunk, starts_line) in rest.iter_mut() {
                let starts_line = *starts_line;
                // Not started (no thread to be had): the chunk is scanned as it is explained.
                let _ = std::thread::Builder::new()
                    .name("oomdoc-window".into())
                    .spawn_scoped(scope, move || chunk.scan_as(starts_line, ScannerTier::Log));
            }
            for (chunk, starts_line) in first.iter_mut() {
                chunk.scan_as(*starts_line, ScannerTier::Log);
                explainer.push_scanned(chunk);
            }
        });
        for (chunk, _) in rest.iter() {
            explainer.push_scanned(chunk);
        }
        for (chunk, _) in chunks {
            let _ = recycle.send(chunk);
        }
    }

    /// Drops the oldest chunks of the window, searched only, until at most `keep` remain.
    fn trim_window(
        &mut self,
        explainer: &mut Explainer,
        recycle: &mpsc::Sender<ScannedChunk>,
        keep: usize,
    ) {
        while self.window.len() > keep {
            if let Some((old, _)) = self.window.pop_front() {
                explainer.set_tier(ScannerTier::Log);
                explainer.skip_chunk(&old.bytes, old.newlines);
                let _ = recycle.send(old);
            }
        }
    }

    /// Takes the next chunk of the input.
    fn take(
        &mut self,
        explainer: &mut Explainer,
        chunk: ScannedChunk,
        recycle: &mpsc::Sender<ScannedChunk>,
    ) {
        let across = self.marker_across_seam(&chunk.bytes);
        let starts_line = self.ends_line;
        self.ends_line = chunk.bytes.last() == Some(&b'\n');
        if !chunk.failures_only || chunk.holds_failure || across {
            let restart = chunk.failures_only && chunk.start_only && !across;
            if restart {
                // A restart without a failure: only the previous run's last lines.
                self.trim_window(explainer, recycle, self.tiers.restart_window_chunks);
            }
            // The head, or a failure: parse the window before it, then the chunk (scanned
            // with every marker, as a short text is).
            self.parse_window(explainer, recycle);
            if restart {
                self.push_restart(explainer, &chunk);
            } else {
                explainer.set_tier(ScannerTier::Full);
                explainer.push_scanned(&chunk);
            }
            if chunk.failures_only {
                // After a restart whose chunk ends in the new run's serving or training loop,
                // the chunks that follow hold more of the same: searched for failures only
                // (kept in the window, parsed if one comes).
                let started = restart && explainer.run_is_repeating();
                self.follow = if started { 0 } else { self.tiers.follow_chunks };
            }
        } else if self.follow > 0 || explainer.wants_more() {
            self.follow = self.follow.saturating_sub(1);
            self.parse_window(explainer, recycle);
            explainer.set_tier(ScannerTier::Log);
            explainer.push_bytes(&chunk.bytes);
        } else {
            self.window.push_back((chunk, starts_line));
            self.trim_window(explainer, recycle, self.tiers.window_chunks);
            return;
        }
        // The reader may have stopped (an error): a chunk nobody takes is dropped.
        let _ = recycle.send(chunk);
    }

    /// Hands a chunk holding engine starts and no failure marker (a restart) to the explainer.
    /// Its candidate lines were found from the line of its first engine start
    /// ([`ScannedChunk::run_start`]); the lines before it end the previous run: with no
    /// window before a restart ([`Tiers::restart_window_chunks`] 0) they are counted only,
    /// as the window's chunks are, else parsed here.
    fn push_restart(&mut self, explainer: &mut Explainer, chunk: &ScannedChunk) {
        let cut = chunk.run_start;
        let (before, run) = chunk.bytes.split_at(cut.min(chunk.bytes.len()));
        if !before.is_empty() {
            if self.tiers.restart_window_chunks == 0 {
                explainer.set_tier(ScannerTier::Log);
                let newlines = memchr::memchr_iter(b'\n', before).count() as u64;
                explainer.skip_chunk(before, newlines);
            } else {
                explainer.set_tier(ScannerTier::Full);
                explainer.push_bytes(before);
            }
        }
        explainer.set_tier(ScannerTier::Full);
        let scanned = (chunk.region.clone())
            .filter(|region| region.start >= cut)
            .map(|region| {
                (
                    region.start - cut..region.end - cut,
                    &chunk.found,
                    chunk.tier,
                )
            });
        explainer.push_chunk(run, scanned);
    }

    /// The end of the input: the window is its tail, parsed.
    fn finish(&mut self, explainer: &mut Explainer, recycle: &mpsc::Sender<ScannedChunk>) {
        self.parse_window(explainer, recycle);
    }
}

/// The reader thread of [`feed`]: reads `tiers.chunk_bytes` at a time and hands the chunks to
/// the scan threads in turn, marking those past the head as failures-only. Returns the bytes
/// read.
fn read_chunks(
    reader: &mut dyn BufRead,
    to_scanners: &[mpsc::SyncSender<(ScannedChunk, bool)>],
    recycled: &mpsc::Receiver<ScannedChunk>,
    tiers: Tiers,
) -> std::io::Result<u64> {
    let mut total = 0u64;
    let mut starts_line = true;
    let chunk_bytes = tiers.chunk_bytes.max(1);
    for (index, to_scanner) in (0u64..).zip(to_scanners.iter().cycle()) {
        let mut chunk = recycled.try_recv().unwrap_or_default();
        chunk.failures_only = index >= tiers.head_chunks;
        let buffer = chunk.bytes_mut();
        buffer.resize(chunk_bytes, 0);
        let mut filled = 0;
        while filled < buffer.len() {
            match reader.read(&mut buffer[filled..]) {
                Ok(0) => break,
                Ok(read) => filled += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        if filled == 0 {
            break;
        }
        buffer.truncate(filled);
        total += filled as u64;
        let ends_line = buffer.last() == Some(&b'\n');
        let full = filled == chunk_bytes;
        if to_scanner.send((chunk, starts_line)).is_err() || !full {
            break;
        }
        starts_line = ends_line;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_sniffing() {
        assert!(!looks_binary(b"INFO 04-02 21:42:59 hello\n"));
        assert!(looks_binary(b"\x80\x04\x95\x00\x00PK"));
        assert!(looks_binary(&[0xff; 100]));
        assert!(!looks_binary("caf\u{e9} \u{2014} ok".as_bytes()));
        // a multi-byte character cut at the end of the window
        assert!(!looks_binary(&"é".as_bytes()[..1]));
    }

    /// A log of several chunks: request runs across chunk ends, a line longer than a chunk,
    /// a failure in the middle, no newline at the end.
    fn large_log() -> Vec<u8> {
        let mut log = Vec::new();
        log.extend_from_slice(
            b"INFO 11-29 10:00:01 api_server.py:585] vLLM API server version 0.6.4\n",
        );
        let mut port = 0;
        while log.len() < 3 * CHUNK_BYTES {
            port += 1;
            log.extend_from_slice(
                format!("INFO:     127.0.0.1:{port} - \"POST /v1/completions HTTP/1.1\" 200 OK\n")
                    .as_bytes(),
            );
            if port % 97 == 0 {
                log.extend_from_slice(
                    b"INFO 11-29 10:01:02 metrics.py:349] Avg prompt throughput: 1.0 tokens/s\n",
                );
            }
            if port == 20_000 {
                log.extend_from_slice(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.12 GiB is free.\n");
            }
            if port == 30_000 {
                log.extend(std::iter::repeat_n(b'x', CHUNK_BYTES + 17));
                log.extend_from_slice(b" CUDA out of memory\n");
            }
        }
        log.extend_from_slice(b"INFO:     Shutting down");
        log
    }

    /// The log explained on this thread, every line parsed, in pieces as a reader hands them.
    fn explained_in_one_thread(log: &[u8]) -> crate::model::explain::ExplainReport {
        let mut sequential = Explainer::new();
        sequential.start_input("log");
        for chunk in log.chunks(4096) {
            sequential.push_bytes(chunk);
        }
        sequential.finish()
    }

    #[test]
    fn the_pipeline_explains_as_one_thread_does() {
        let log = large_log();
        let sequential = explained_in_one_thread(&log);
        assert!(sequential.is_gpu_oom);
        let mut piped = Explainer::new();
        let read = feed(
            &mut piped,
            Box::new(std::io::Cursor::new(log.clone())),
            "log",
        );
        assert_eq!(read.ok(), Some(log.len() as u64));
        assert_eq!(piped.finish(), sequential);
    }

    #[test]
    fn a_file_read_by_offset_explains_as_one_thread_does() {
        let log = large_log();
        let sequential = explained_in_one_thread(&log);
        // A byte-order mark before the text: read from past it.
        let mut file = tempfile::tempfile().expect("a temporary file");
        std::io::Write::write_all(&mut file, b"\xEF\xBB\xBF").expect("written");
        std::io::Write::write_all(&mut file, &log).expect("written");
        for tiers in [Tiers::DEFAULT, Tiers::FULL] {
            let mut explainer = Explainer::new();
            let read = feed_file(&mut explainer, &file, 3, "log", tiers);
            assert_eq!(read.ok(), Some(log.len() as u64));
            let report = explainer.finish();
            if tiers == Tiers::FULL {
                assert_eq!(report, sequential);
            } else {
                assert_eq!(report.oom, sequential.oom);
                assert_eq!(report.input.lines, sequential.input.lines);
            }
        }
    }

    #[test]
    fn an_empty_or_binary_file_read_by_offset() {
        let file = tempfile::tempfile().expect("a temporary file");
        let mut explainer = Explainer::new();
        let read = feed_file(&mut explainer, &file, 0, "empty.log", Tiers::DEFAULT);
        assert_eq!(read.ok(), Some(0));
        let mut file = tempfile::tempfile().expect("a temporary file");
        std::io::Write::write_all(&mut file, b"\x80\x04\x95\x00\x00PK\x00\x00").expect("written");
        let error = feed_file(&mut explainer, &file, 0, "snap.pickle", Tiers::DEFAULT).err();
        let text = error.map(|error| format!("{error:#}")).unwrap_or_default();
        assert!(
            text.contains("`snap.pickle` looks like binary data"),
            "{text}"
        );
    }

    /// A reader that fails after some bytes.
    struct Failing(std::io::Cursor<Vec<u8>>);

    impl std::io::Read for Failing {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buffer)? {
                0 => Err(std::io::Error::other("disk on fire")),
                read => Ok(read),
            }
        }
    }

    #[test]
    fn a_read_error_in_the_pipeline_is_reported() {
        let reader = std::io::BufReader::new(Failing(std::io::Cursor::new(large_log())));
        let mut explainer = Explainer::new();
        let error = feed(&mut explainer, Box::new(reader), "big.log").err();
        let text = error.map(|error| format!("{error:#}")).unwrap_or_default();
        assert!(
            text.contains("failed to read `big.log`: disk on fire"),
            "{text}"
        );
    }
}
