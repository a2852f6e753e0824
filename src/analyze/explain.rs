//! The streaming explain pipeline: bytes of a log → failure messages, timeline, phase,
//! accounting and verdict.
//!
//! [`Explainer`] takes arbitrary chunks (`oomdoc explain` reads files and stdin, `oomdoc run`
//! follows a live log) and never holds the input: lines are split with `memchr`, and a SIMD
//! search for short anchors, verified against the OOM and engine-log markers, picks the few lines
//! worth cleaning and parsing (plus the lines an open OOM message still wants). The lines before a
//! failure are kept as the last lines of the previous block. Memory stays bounded on any input:
//! timelines, message lists, frames and context are capped.
//!
//! Pure: no I/O besides the `BufRead` handed to [`explain_reader`].

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, BufRead};
use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use assemble::build_report;
use context::{gather_after, gather_context};
use frames::{
    code_line_after, failure_frames, push_called_frames, rewrapped_cause_frames, wrapped_frame_rest,
};
use scan::{sort_matches, Anchored, HitCursor};

use super::phase::{Frame, PhaseInputs, Progress, Role};
use crate::model::bytes::Bytes;
use crate::model::explain::{
    ContextBlock, ContextLine, EngineConfig, EngineInfo, EventFigures, EventKind, ExplainReport,
    InputSummary, ModelInfo, Phase, TimelineEvent,
};
use crate::model::failure::{EngineName, OomKind, OomMessage};
use crate::parse::engine_log::{self, engines, Certainty, EngineMemory, LineFacts, MarkerRole};

use crate::parse::oom_text::{OomDetector, OOM_MARKERS};
use crate::parse::text::clean_line;

mod assemble;
mod candidates;
mod chunk_bytes;
mod context;
mod engine_choice;
mod frames;
mod notebook;
mod scan;
mod shape;
mod timeline;
pub use candidates::ScannedChunk;
use candidates::*;
use timeline::{begin_run_if_starting, count_repeats, note_failures_only, push_event};
pub mod stream;
#[cfg(test)]
use shape::like_previous;
use shape::{compare_lines, like_but_run, like_shape, DigitContexts};

/// Lines of context kept before each failure (dozens, not one).
pub const CONTEXT_BEFORE: u64 = 40;
/// Lines of the failure message itself kept after its first line.
const CONTEXT_AFTER: u64 = 20;
/// Lines remembered from the previous block, for context that crosses a block boundary.
const TAIL_LINES: usize = 64;
/// Longest line processed; the rest of a longer line is skipped (binary or minified input).
const MAX_LINE_BYTES: usize = 64 * 1024;
/// Longest line kept as context text.
const MAX_CONTEXT_LINE_CHARS: usize = 2000;
/// Failure messages listed in full (`ooms_total` counts the rest).
const MAX_MESSAGES: usize = 50;
/// Failure messages that get a context block.
const MAX_CONTEXT_BLOCKS: usize = 5;
/// Timeline events kept from the start and from the end of one run.
const TIMELINE_HEAD: usize = 200;
const TIMELINE_TAIL: usize = 200;
/// Traceback frames remembered (the most recent).
const MAX_FRAMES: usize = 512;

/// The timeline of one engine run, bounded: the first and the last events.
#[derive(Debug, Clone, Default)]
struct Segment {
    id: u64,
    head: Vec<TimelineEvent>,
    tail: VecDeque<TimelineEvent>,
    dropped: u64,
    progressed: bool,
}

impl Segment {
    fn last_mut(&mut self) -> Option<&mut TimelineEvent> {
        if let Some(last) = self.tail.back_mut() {
            Some(last)
        } else {
            self.head.last_mut()
        }
    }

    fn push(&mut self, event: TimelineEvent) {
        if self.head.len() < TIMELINE_HEAD {
            self.head.push(event);
        } else {
            self.tail.push_back(event);
            if self.tail.len() > TIMELINE_TAIL {
                // A row saying which lines were searched for failures only always stays.
                let oldest = self
                    .tail
                    .iter()
                    .position(|event| event.kind != EventKind::FailuresOnly)
                    .unwrap_or(0);
                self.tail.remove(oldest);
                self.dropped += 1;
            }
        }
    }

    fn events(&self) -> Vec<TimelineEvent> {
        self.head.iter().chain(self.tail.iter()).cloned().collect()
    }
}

/// A failure seen, with the state of the run at that moment.
#[derive(Debug, Clone)]
struct FailurePoint {
    message_index: usize,
    line: u64,
    segment: u64,
    progress: Progress,
}

/// The lines above and below a pending line (see [`neighbours`]).
type Around = (Box<[u8]>, Box<[u8]>);

/// A line of the current run kept raw until the run turns out to matter.
#[derive(Debug, Clone)]
enum PendingLine {
    /// A line with engine markers, not parsed yet (`code`: the line under a traceback frame,
    /// see [`push_called_frames`]).
    Line {
        line: u64,
        text: Box<[u8]>,
        code: Option<Box<[u8]>>,
        /// The lines above and below a line of the reporter's words (see [`neighbours`]).
        around: Option<Box<Around>>,
    },
    /// Consecutive request/stats lines, counted only.
    Repeat {
        kind: EventKind,
        first: u64,
        last: u64,
        count: u64,
        sample: Box<[u8]>,
    },
    /// Lines searched for failure messages only (see [`Explainer::skip_chunk`]).
    FailuresOnly(TimelineEvent),
}

/// The unparsed lines of the current run: the first `PENDING_HEAD` and the last
/// `PENDING_TAIL` (the middle of a very long run is dropped, like the timeline's).
#[derive(Debug, Clone, Default)]
struct Pending {
    head: Vec<PendingLine>,
    tail: VecDeque<PendingLine>,
    /// Whether a line showing progress (not only settings) is pending.
    progressed: bool,
}

/// Pending lines kept from the start and from the end of one run.
const PENDING_HEAD: usize = 4096;
const PENDING_TAIL: usize = 4096;
/// Longest pending line kept (the parsers look at the start of a line).
const MAX_PENDING_LINE_BYTES: usize = 4096;

impl Pending {
    fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    fn last_mut(&mut self) -> Option<&mut PendingLine> {
        if let Some(last) = self.tail.back_mut() {
            Some(last)
        } else {
            self.head.last_mut()
        }
    }

    fn push(&mut self, entry: PendingLine) {
        if self.head.len() < PENDING_HEAD {
            self.head.push(entry);
        } else {
            self.tail.push_back(entry);
            if self.tail.len() > PENDING_TAIL {
                self.tail.pop_front();
            }
        }
    }

    fn take(&mut self) -> Vec<PendingLine> {
        let mut lines = std::mem::take(&mut self.head);
        lines.extend(std::mem::take(&mut self.tail));
        self.progressed = false;
        lines
    }
}

/// Everything gathered so far (bounded).
#[derive(Debug, Clone, Default)]
struct Collected {
    /// Engine lines of the current run not parsed yet (deferred until a failure, the end of
    /// the input or a report needs them; a run that ends without failure is dropped unparsed).
    pending: Pending,
    /// Parse engine lines as they come (the current run holds a failure).
    eager: bool,
    engine: Option<(EngineName, Certainty, u64)>,
    engine_versions: BTreeMap<EngineName, String>,
    generation: Option<&'static str>,
    model: ModelInfo,
    config: EngineConfig,
    memory: EngineMemory,
    versions: BTreeMap<String, String>,
    segment: Segment,
    saved_segment: Option<Segment>,
    engine_starts: u64,
    progress: Progress,
    frames: VecDeque<Frame>,
    tracebacks: VecDeque<u64>,
    /// The last lines that showed one part of a model's load done (`LineFacts::load_part`).
    load_parts: VecDeque<u64>,
    hints: Vec<(u64, Phase)>,
    /// Lines that show a stage running, for a failure printed just before them (the last 64).
    late: VecDeque<(u64, Phase)>,
    ooms: Vec<OomMessage>,
    ooms_total: u64,
    first_failure: Option<FailurePoint>,
    first_gpu_failure: Option<FailurePoint>,
    /// The GPU failures stated after the first one (the last [`MAX_LATER_FAILURES`]): the same
    /// failure restated by its traceback under a title, or by another rank.
    later_gpu_failures: VecDeque<FailurePoint>,
    /// The failures that are no GPU OOM stated after the first failure while no GPU OOM was
    /// seen (the last [`MAX_LATER_FAILURES`]): a title quoting a DataLoader worker's bus error,
    /// then the log of the run that printed it.
    later_failures: VecDeque<FailurePoint>,
    context: Vec<ContextBlock>,
    shutdown_line: Option<u64>,
    /// The first line where the reporter says other programs held the GPU's memory.
    holders_said: Option<u64>,
    /// The first line where the reporter or a maintainer says the GPU is too small for the job.
    capacity_said: Option<u64>,
    /// Lines searched for failure messages only.
    failures_only_lines: u64,
    /// The last stretches of lines searched for failure messages only: (first, last).
    unseen: VecDeque<(u64, u64)>,
    /// Lines that may name the stage in the reporter's words (`analyze::phase::prose`), the
    /// first [`MAX_PROSE_LINES`].
    prose: Vec<crate::analyze::phase::prose::ProseLine>,
    /// Lines just above the head of a failure's traceback that its context block does not
    /// reach (a traceback longer than [`CONTEXT_BEFORE`]): the program's last lines before it
    /// raised, read by the phase pass (`assemble::nearby_words`). Bounded: see
    /// [`ABOVE_TRACEBACK_LINES`].
    above_tracebacks: Vec<ContextLine>,
    /// The run's progress and segment when the message the detector holds open was printed:
    /// its continuation lines may hold log lines of a later moment (an issue's title quotes the
    /// error, the log of the run follows; a restart), which say nothing of where it failed. Set
    /// on the first line a pending message wants, cleared when messages are recorded.
    /// (The line it was taken on is kept: a message recorded with a first line below it began
    /// after the snapshot, whose pending statement was another, and is read with the progress
    /// of its own moment.)
    at_pending: Option<(Progress, u64, u64)>,
}

/// Lines kept above a failure's traceback head (see `Collected::above_tracebacks`), for a
/// traceback that starts at most [`MAX_TRACEBACK_LINES`] lines above the failure.
const ABOVE_TRACEBACK_LINES: u64 = 24;
/// The longest traceback whose head's lines are kept (the labelled corpus: up to 97 lines
/// from `Traceback (most recent call last):` to the message).
const MAX_TRACEBACK_LINES: u64 = 200;

/// Lines kept in `Collected::prose`: a title and the sentences of an issue come first.
const MAX_PROSE_LINES: usize = 32;

/// GPU failures remembered in `Collected::later_gpu_failures`.
const MAX_LATER_FAILURES: usize = 8;

/// Stretches remembered in `Collected::unseen`.
const MAX_UNSEEN: usize = 64;

/// Streaming explainer: feed bytes, ask for the report at any time.
pub struct Explainer {
    detector: OomDetector,
    pending: Vec<u8>,
    skipping_long_line: bool,
    /// Lines completed so far (the next line is `lines + 1`).
    lines: u64,
    bytes: u64,
    /// The last lines before the current block: (line number, text without `\n`).
    tail: VecDeque<(u64, Vec<u8>)>,
    names: Vec<String>,
    collected: Collected,
    /// Scratch: what the scan found in the current block.
    candidates: Candidates,
    /// The scanner of the blocks fed next (set by `stream` for the parts of a long log).
    tier: ScannerTier,
    /// The failures' contexts still wanting the lines under them: (the index in
    /// `collected.context`, the next line wanted, the last one).
    context_after: Vec<(usize, u64, u64)>,
    /// The last line the last context block read around its failure (not counting the lines
    /// read under it).
    context_gathered_to: u64,
}

impl Default for Explainer {
    fn default() -> Self {
        Explainer::new()
    }
}

impl std::fmt::Debug for Explainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Explainer")
            .field("lines", &self.lines)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl Explainer {
    /// An explainer that has read nothing.
    pub fn new() -> Self {
        Explainer {
            detector: OomDetector::new(),
            pending: Vec::new(),
            skipping_long_line: false,
            lines: 0,
            bytes: 0,
            tail: VecDeque::with_capacity(TAIL_LINES + 1),
            names: Vec::new(),
            collected: Collected::default(),
            candidates: Candidates::default(),
            tier: ScannerTier::Full,
            context_after: Vec::new(),
            context_gathered_to: 0,
        }
    }

    /// Scans the bytes fed next with the scanner of `tier` (see `candidates::log_scanner`).
    fn set_tier(&mut self, tier: ScannerTier) {
        self.tier = tier;
    }

    /// Names the input that the next bytes come from (`<stdin>`, a path). A partial last
    /// line of the previous input is finished first, so inputs never join mid-line.
    pub fn start_input(&mut self, name: &str) {
        self.flush_partial_line();
        self.names.push(name.to_string());
    }

    /// Feeds a chunk of the log. Chunk boundaries may fall anywhere (inside a line, inside a
    /// UTF-8 sequence); invalid UTF-8 is read lossily.
    pub fn push_bytes(&mut self, chunk: &[u8]) {
        self.push_chunk(chunk, None);
    }

    /// Feeds a chunk after [`ScannedChunk::scan`] (on another thread); the same as
    /// [`Explainer::push_bytes`] on its bytes.
    pub fn push_scanned(&mut self, chunk: &ScannedChunk) {
        let scanned = (chunk.region.clone()).map(|region| (region, &chunk.found, chunk.tier));
        self.push_chunk(&chunk.bytes, scanned);
    }

    /// [`Explainer::push_bytes`], with the marker matches of the chunk's complete lines when
    /// a worker found them already (`region` = the lines it assumed were complete; when that
    /// assumption was wrong the block is scanned here).
    fn push_chunk(
        &mut self,
        chunk: &[u8],
        scanned: Option<(Range<usize>, &Candidates, ScannerTier)>,
    ) {
        self.bytes += chunk.len() as u64;
        let mut from = 0;
        if !self.pending.is_empty() || self.skipping_long_line {
            match memchr::memchr(b'\n', chunk) {
                None => {
                    self.extend_pending(chunk);
                    return;
                }
                Some(newline) => {
                    self.extend_pending(&chunk[..newline]);
                    self.skipping_long_line = false;
                    let mut line = std::mem::take(&mut self.pending);
                    line.push(b'\n');
                    self.process_block(&line);
                    line.clear();
                    self.pending = line;
                    from = newline + 1;
                }
            }
        }
        let rest = &chunk[from..];
        match memchr::memrchr(b'\n', rest) {
            Some(last) => {
                let block = &rest[..=last];
                match scanned {
                    Some((region, found, tier))
                        if region.start == from && region.end == from + last + 1 =>
                    {
                        // The scan may have stopped early (`MAX_CANDIDATES`): scan the rest here.
                        let (scanned, rest) = block.split_at(found.scanned);
                        self.process_candidates(scanned, found, tier.scanner());
                        if !rest.is_empty() {
                            self.process_block(rest);
                        }
                    }
                    _ => self.process_block(block),
                }
                self.extend_pending(&rest[last + 1..]);
            }
            None => self.extend_pending(rest),
        }
    }

    fn extend_pending(&mut self, bytes: &[u8]) {
        if self.skipping_long_line {
            return;
        }
        let room = MAX_LINE_BYTES.saturating_sub(self.pending.len());
        if bytes.len() > room {
            self.pending.extend_from_slice(&bytes[..room]);
            self.skipping_long_line = true;
        } else {
            self.pending.extend_from_slice(bytes);
        }
    }

    fn flush_partial_line(&mut self) {
        if !self.pending.is_empty() || self.skipping_long_line {
            let mut line = std::mem::take(&mut self.pending);
            line.push(b'\n');
            self.skipping_long_line = false;
            self.process_block(&line);
        }
    }

    /// The report for what was read so far (cheap enough to call every second; open
    /// multi-line messages are not included until they complete or [`Explainer::finish`]).
    pub fn report(&self) -> ExplainReport {
        if self.collected.pending.is_empty() {
            build_report(&self.collected, &self.names, self.lines, self.bytes)
        } else {
            let mut collected = self.collected.clone();
            materialize(&mut collected);
            build_report(&collected, &self.names, self.lines, self.bytes)
        }
    }

    /// Ends the input: finishes the last line and any open message, returns the report.
    pub fn finish(mut self) -> ExplainReport {
        self.flush_partial_line();
        materialize(&mut self.collected);
        let messages = self.detector.finish();
        self.collected.ooms_total += self.detector.take_counted();
        let last_line = self.lines;
        for message in messages {
            self.record_message(message, &[], last_line + 1, 0, last_line);
        }
        // An OOM named in words that no line after it placed (`But it OOM, how should I
        // adjust parameters?` under a `trtllm-bench … --backend pytorch` command): a GPU OOM
        // when the text shows a GPU engine or framework at work, and no failure of its own.
        if let Some(mut weak) = self.detector.take_unresolved_weak() {
            let engine = self
                .collected
                .engine
                .is_some_and(|(name, _, _)| name != EngineName::Other);
            // (Nor the host's memory in the lines just above it: `signal: killed`, then `So I
            // think it's running out of memory`.)
            let host_above = self.tail.iter().any(|(line, text)| {
                *line < weak.line
                    && *line + CONTEXT_BEFORE >= weak.line
                    && crate::parse::oom_text::host_failure_shown(&String::from_utf8_lossy(text))
            });
            if engine && !host_above && self.collected.first_failure.is_none() {
                weak.is_gpu_oom = true;
                self.record_message(weak, &[], last_line + 1, 0, last_line);
            }
        }
        self.report()
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Whether an open failure message still wants the next lines (they must be fed, not
    /// skipped).
    pub fn wants_more(&self) -> bool {
        self.detector.wants_more()
    }

    /// Whether the last lines of the current run, kept unparsed (no failure in it yet), are
    /// its repeat lines (requests, stats: `engine_log::repeat_kind`): the run is in its
    /// serving or training loop, its startup over (for `stream::Tiers`).
    pub(super) fn run_is_repeating(&self) -> bool {
        let pending = &self.collected.pending;
        !self.collected.eager
            && matches!(
                pending.tail.back().or(pending.head.last()),
                Some(PendingLine::Repeat { .. })
            )
    }

    /// Passes over a chunk that holds no failure marker ([`ScannedChunk::holds_failure`]):
    /// its lines are counted, not parsed, and the timeline shows them as one
    /// [`EventKind::FailuresOnly`] row (adjacent chunks share it). A line that began in the
    /// previous chunk is finished and processed as usual; the part of a line at the end is
    /// kept for the next chunk, so chunk boundaries may fall anywhere. `newlines`: the
    /// chunk's count of `\n` bytes.
    pub fn skip_chunk(&mut self, chunk: &[u8], newlines: u64) {
        if self.wants_more() {
            self.push_bytes(chunk);
            return;
        }
        let mut from = 0;
        let mut newlines = newlines;
        if !self.pending.is_empty() || self.skipping_long_line {
            let Some(newline) = memchr::memchr(b'\n', chunk) else {
                self.push_bytes(chunk);
                return;
            };
            // The line begun in the previous chunk: counted with the others when it holds no
            // failure marker either, else processed.
            let mut line = std::mem::take(&mut self.pending);
            let begun = line.len();
            line.extend_from_slice(&chunk[..newline]);
            let quiet = !failure_scan().finds(&line);
            line.truncate(if quiet { 0 } else { begun });
            self.pending = line;
            if quiet {
                self.skipping_long_line = false;
            } else {
                self.push_bytes(&chunk[..=newline]);
                from = newline + 1;
                newlines = newlines.saturating_sub(1);
            }
        }
        let rest = &chunk[from..];
        if self.wants_more() {
            // An open message wants the next lines: none may be skipped.
            self.push_bytes(rest);
            return;
        }
        let Some(last) = memchr::memrchr(b'\n', rest) else {
            self.push_bytes(rest);
            return;
        };
        if newlines == 0 {
            // A wrong count: never lose lines, process them instead.
            self.push_bytes(rest);
            return;
        }
        self.bytes += (last + 1) as u64;
        let first = self.lines + 1;
        self.lines += newlines;
        self.tail.clear();
        note_failures_only(&mut self.collected, first, self.lines, (last + 1) as u64);
        self.push_bytes(&rest[last + 1..]);
    }

    /// Processes complete lines (`block` ends with `\n`).
    fn process_block(&mut self, mut block: &[u8]) {
        let mut found = std::mem::take(&mut self.candidates);
        let scanner = self.tier.scanner();
        while !block.is_empty() {
            find_candidates_with(scanner, block, &mut found);
            if found.scanned == 0 {
                // Unreachable (a scan covers at least one line); never loop forever.
                debug_assert!(false, "a scan covered nothing");
                break;
            }
            let (scanned, rest) = block.split_at(found.scanned);
            self.process_candidates(scanned, &found, scanner);
            block = rest;
        }
        self.candidates = found;
    }

    /// Processes complete lines (`block` ends with `\n`) with the lines the scan picked.
    ///
    /// Only candidate lines are looked at, plus the lines an open OOM message still wants
    /// (walked one by one). A run of request/stats lines is counted in one step when the
    /// state allows it (see [`count_repeats`]), else line by line.
    /// `scanner`: the one that found the candidates.
    fn process_candidates(&mut self, block: &[u8], found: &Candidates, scanner: &Scanner) {
        let first_line = self.lines + 1;
        if !self.context_after.is_empty() {
            let context = &mut self.collected.context;
            self.context_after.retain_mut(|(index, next, until)| {
                if *next != first_line {
                    return false;
                }
                let after = gather_after(block, 0, first_line, *until);
                *next += after.len() as u64;
                if let Some(block) = context.get_mut(*index) {
                    block.lines.extend(after);
                }
                *next <= *until
            });
        }
        // The start of the next line not processed yet, and its index in the block.
        let (mut position, mut index) = (0, 0);
        // The next candidate, and the run of the last one: (its kind, index of its last
        // line, end of that line).
        let mut next = 0;
        let mut run: Option<(EventKind, u64, usize)> = None;
        while position < block.len() {
            let in_run = run.filter(|&(_, last, _)| index <= last);
            if !self.detector.wants_more() {
                if let Some((kind, last, run_end)) = in_run {
                    if count_repeats(
                        &mut self.collected,
                        kind,
                        last - index + 1,
                        first_line + last,
                    ) {
                        position = run_end + 1;
                        index = last + 1;
                        continue;
                    }
                } else {
                    let Some(candidate) = found.lines.get(next) else {
                        break;
                    };
                    next += 1;
                    self.process_line(
                        block,
                        first_line,
                        candidate.start,
                        candidate.end,
                        first_line + candidate.line,
                        candidate.oom,
                        found.markers_of(candidate),
                    );
                    position = candidate.end + 1;
                    index = candidate.line + 1;
                    run = candidate.run;
                    continue;
                }
            }
            // One line at a time: an open message wants it, or a run must be taken apart.
            let end = memchr::memchr(b'\n', &block[position..])
                .map_or(block.len(), |offset| position + offset);
            let line_no = first_line + index;
            if let Some(candidate) = found.lines.get(next).filter(|c| c.line == index) {
                next += 1;
                run = candidate.run;
                let markers = found.markers_of(candidate);
                self.process_line(
                    block,
                    first_line,
                    position,
                    end,
                    line_no,
                    candidate.oom,
                    markers,
                );
            } else if in_run.is_some() {
                // A line of a run: the scan kept only its count, so find its markers again.
                let (oom, markers) = line_markers_with(scanner, &block[position..end]);
                self.process_line(block, first_line, position, end, line_no, oom, &markers);
            } else {
                self.process_line(block, first_line, position, end, line_no, false, &[]);
            }
            position = end + 1;
            index += 1;
        }
        self.lines = first_line - 1 + found.total_lines;
        self.remember_tail(block, first_line);
    }

    fn remember_tail(&mut self, block: &[u8], first_line: u64) {
        let mut lines = Vec::new();
        let mut end = block.len().saturating_sub(1); // the final `\n`
        let mut line_no = self.lines;
        while lines.len() < TAIL_LINES && line_no >= first_line {
            let start = memchr::memrchr(b'\n', &block[..end]).map_or(0, |offset| offset + 1);
            let text = &block[start..end];
            lines.push((
                line_no,
                text[..text.len().min(MAX_CONTEXT_LINE_CHARS * 2)].to_vec(),
            ));
            if start == 0 {
                break;
            }
            end = start - 1;
            line_no -= 1;
        }
        if lines.len() >= TAIL_LINES {
            self.tail.clear();
        }
        for line in lines.into_iter().rev() {
            self.tail.push_back(line);
        }
        while self.tail.len() > TAIL_LINES {
            self.tail.pop_front();
        }
    }

    /// Processes the line `block[start..end]` with the markers the block scan found in it.
    #[expect(
        clippy::too_many_arguments,
        reason = "the line and what the scan found in it"
    )]
    fn process_line(
        &mut self,
        block: &[u8],
        first_line: u64,
        start: usize,
        end: usize,
        line_no: u64,
        has_oom_marker: bool,
        engine_markers: &[usize],
    ) {
        let wants_more = self.detector.wants_more();
        // A line an open message wants comes after the message's first line: the run and its
        // progress so far are those of the moment the message was printed (this line may start
        // another run or show a later stage).
        if wants_more && self.collected.at_pending.is_none() {
            self.collected.at_pending = Some((
                self.collected.progress.clone(),
                self.collected.segment.id,
                line_no,
            ));
        }
        let mut raw = &block[start..end];
        if raw.last() == Some(&b'\r') {
            raw = &raw[..raw.len() - 1];
        }
        let mut raw = &raw[..raw.len().min(MAX_LINE_BYTES)];
        // A frame line a console wrapped before its function (`…", line 4` then `9, in
        // _init_executor`): read joined, with the statement under its second part.
        let joined: Vec<u8>;
        let mut code_after = end;
        if !engine_markers.is_empty() {
            if let Some((rest, next_end)) = wrapped_frame_rest(block, end, raw) {
                let head = raw.trim_ascii_end();
                let space: &[u8] = if head.ends_with(b",") { b" " } else { b"" };
                joined = [head, space, rest].concat();
                raw = &joined;
                code_after = next_end;
            }
        }
        if !has_oom_marker && !wants_more {
            if engine_markers.is_empty() {
                return;
            }
            begin_run_if_starting(&mut self.collected, engine_markers);
            if !self.collected.eager {
                let code = code_line_after(block, code_after, raw);
                let around = reports_words(engine_markers).then(|| neighbours(block, start, end));
                defer(
                    &mut self.collected,
                    engine_markers,
                    raw,
                    code,
                    around,
                    line_no,
                );
                return;
            }
            if repeat_kind_of(engine_markers)
                .is_some_and(|kind| count_repeats(&mut self.collected, kind, 1, line_no))
            {
                return;
            }
        } else if !engine_markers.is_empty() {
            begin_run_if_starting(&mut self.collected, engine_markers);
        }
        // This line is parsed now, so every earlier line of the run must be first.
        materialize(&mut self.collected);
        let text = String::from_utf8_lossy(raw);
        let clean = clean_line(&text);
        note_prefix_engine(&mut self.collected, &text, clean.stream.as_deref(), line_no);
        // A line without an OOM marker cannot start a message (the detector's contract), so
        // the detector only sees those lines and the continuations it asks for.
        let messages = if has_oom_marker || wants_more {
            let messages = self.detector.push(line_no, &clean);
            self.collected.ooms_total += self.detector.take_counted();
            if self.collected.holders_said.is_none() {
                self.collected.holders_said = self.detector.holders_said();
            }
            if self.collected.capacity_said.is_none() {
                self.collected.capacity_said = self.detector.capacity_said();
            }
            messages
        } else {
            Vec::new()
        };
        if !engine_markers.is_empty() {
            let cleaned: &str = &clean.text;
            let facts = engine_log::parse_line_raw(cleaned, &text, engine_markers);
            if !facts.is_empty() {
                let run = self.collected.segment.id;
                let frame_of = facts.frame.clone();
                let around = reports_words(engine_markers).then(|| neighbours(block, start, end));
                absorb(
                    &mut self.collected,
                    facts,
                    line_no,
                    cleaned,
                    &text,
                    clean.stream.as_deref(),
                    around,
                );
                if frame_of.as_ref().is_some_and(|(_, file)| file == "<call>") {
                    self.keep_cell_listing(block, first_line, end, line_no);
                }
                if let Some((function, file)) = frame_of {
                    if let Some(code) = code_line_after(block, code_after, raw) {
                        let caller = (function.as_str(), file.as_str());
                        push_called_frames(&mut self.collected, &text, code, caller, line_no);
                    }
                }
                if self.collected.segment.id != run {
                    // A new run began: it is deferred until it shows a failure.
                    self.collected.eager = false;
                }
            }
        }
        let recorded = !messages.is_empty();
        for message in messages {
            self.record_message(message, block, first_line, end, line_no);
        }
        if recorded || !self.detector.wants_more() {
            self.collected.at_pending = None;
        }
    }

    fn record_message(
        &mut self,
        mut message: OomMessage,
        block: &[u8],
        first_line: u64,
        end: usize,
        line_no: u64,
    ) {
        // A message both the GPU and the CPU back end print: the lines before it may show the
        // run on the CPU (`parse/oom_text/cpu_platform.rs`).
        if crate::parse::oom_text::cpu_platform::may_be_host(&message) {
            let from = message.line.saturating_sub(CONTEXT_BEFORE).max(1);
            let before = gather_context(
                &self.tail,
                block,
                first_line,
                end,
                line_no,
                from,
                message.line,
            );
            crate::parse::oom_text::cpu_platform::judge(
                &mut message,
                before.iter().map(|line| line.text.as_str()),
            );
        }
        let collected = &mut self.collected;
        collected.ooms_total += 1;
        // An OOM named without its message (an issue's title: `OOM on preprocessing dataset`),
        // in words that name no GPU, and the paste's own message under it is the host's
        // (`MemoryError` at the end of the traceback): the mention named that failure.
        if message.kind == OomKind::HostMemory && collected.later_gpu_failures.is_empty() {
            if let Some(point) = collected.first_gpu_failure.as_ref() {
                let mention = &collected.ooms[point.message_index];
                if mention.kind == OomKind::NamedWithoutMessage
                    && mention.end_line < message.line
                    && !crate::parse::oom_text::names_the_gpu(&mention.text)
                {
                    collected.ooms[point.message_index].is_gpu_oom = false;
                    collected.first_gpu_failure = None;
                }
            }
        }
        // The run holding a failure is parsed eagerly from here on (its earlier lines were
        // materialized before this line was processed).
        collected.eager = true;
        let first_gpu = message.is_gpu_oom && collected.first_gpu_failure.is_none();
        if collected.ooms.len() >= MAX_MESSAGES && !first_gpu {
            // Nothing of a later message is kept but its count, and whether it is the first
            // GPU OOM (a host-memory message never is).
            self.detector
                .count_only(collected.first_gpu_failure.is_some());
            return;
        }
        let index = collected.ooms.len();
        // A message completed on a later line than its first: the run and its progress when it
        // was printed.
        // (A snapshot taken before the message's first line was taken for another pending
        // statement, a reporter's sentence naming the error over the log: the run's progress
        // up to this message is its own, session 38.)
        let (progress, segment) = match collected.at_pending.as_ref() {
            Some((progress, segment, taken)) if message.line < line_no && *taken > message.line => {
                (progress.clone(), *segment)
            }
            _ => (collected.progress.clone(), collected.segment.id),
        };
        let point = FailurePoint {
            message_index: index,
            line: message.line,
            segment,
            progress,
        };
        if collected.first_failure.is_none() {
            collected.first_failure = Some(point.clone());
        } else if !message.is_gpu_oom && collected.first_gpu_failure.is_none() {
            if collected.later_failures.len() >= MAX_LATER_FAILURES {
                collected.later_failures.pop_front();
            }
            collected.later_failures.push_back(point.clone());
        }
        if message.is_gpu_oom && collected.first_gpu_failure.is_none() {
            collected.first_gpu_failure = Some(point);
        } else if message.is_gpu_oom {
            if collected.later_gpu_failures.len() >= MAX_LATER_FAILURES {
                collected.later_gpu_failures.pop_front();
            }
            collected.later_gpu_failures.push_back(point);
        }
        // (The lines read under the last block's failure do not count: a later statement
        // there gets its own block, as it did before they were read.)
        let overlaps = !collected.context.is_empty() && self.context_gathered_to >= message.line;
        let mut timestamp = None;
        if collected.context.len() < MAX_CONTEXT_BLOCKS && !overlaps {
            let from = message.line.saturating_sub(CONTEXT_BEFORE).max(1);
            let to = line_no.min(message.line + CONTEXT_AFTER);
            let mut lines = gather_context(&self.tail, block, first_line, end, line_no, from, to);
            // A message complete on its own line leaves the lines under it unread (the
            // scanner visits only lines with markers): those of the block at hand are taken
            // too (an access log's failed request, an app's footer).
            self.context_gathered_to = lines.last().map_or(0, |line| line.line);
            let until = message.line + CONTEXT_AFTER;
            let after = gather_after(block, end.saturating_add(1), line_no + 1, until);
            let next = line_no + 1 + after.len() as u64;
            lines.extend(after);
            // Lines the block did not hold are taken from the next blocks (the same lines,
            // however the input was cut into blocks).
            if next <= until {
                self.context_after
                    .push((collected.context.len(), next, until));
            }
            timestamp = lines
                .iter()
                .find(|line| line.line == message.line)
                .and_then(|line| engine_log::parse_timestamp(&line.text));
            collected.context.push(ContextBlock {
                failure_line: message.line,
                lines,
            });
            // The head of a long traceback lies above the context: keep the lines over it.
            if let Some(&head) = collected.tracebacks.back() {
                if head > 1 && head < from && message.line - head <= MAX_TRACEBACK_LINES {
                    let above = head.saturating_sub(ABOVE_TRACEBACK_LINES).max(1);
                    collected.above_tracebacks.extend(gather_context(
                        &self.tail,
                        block,
                        first_line,
                        end,
                        line_no,
                        above,
                        head.min(from - 1),
                    ));
                }
            }
        }
        if index < 20 {
            let text = engine_log::shorten(&message.text, 200);
            let (timestamp, seconds) = match timestamp {
                Some(stamp) => (Some(stamp.text), stamp.seconds),
                None => (None, None),
            };
            let event = TimelineEvent {
                kind: EventKind::Failure,
                phase: Phase::Unknown,
                line: message.line,
                timestamp,
                seconds_since_start: seconds,
                stream: message.stream.clone(),
                figures: EventFigures::default(),
                count: 1,
                last_line: None,
                text,
                t_ms: None,
            };
            collected.segment.push(event);
        }
        collected.ooms.push(message);
    }
}

/// Records evidence of an engine: the surer claim wins, then the application over the
/// libraries under it (`engine_log::engines::outranks`); ties keep the first.
fn note_engine(collected: &mut Collected, name: EngineName, certainty: Certainty, line_no: u64) {
    let replace = match collected.engine {
        None => true,
        Some((existing, existing_certainty, _)) => {
            engines::outranks((name, certainty), (existing, existing_certainty))
        }
    };
    if replace {
        collected.engine = Some((name, certainty, line_no));
    }
}

/// The engine a line's prefix names (vLLM's process tags, SGLang's `[… TP1]`), whatever
/// markers the line holds.
fn note_prefix_engine(collected: &mut Collected, raw: &str, stream: Option<&str>, line_no: u64) {
    let found = stream.and_then(engines::engine_of_stream).or_else(|| {
        if engines::has_sglang_prefix(raw) {
            Some((EngineName::Sglang, Certainty::Strong))
        } else if engines::has_vllm_prefix(raw) {
            Some((EngineName::Vllm, Certainty::Strong))
        } else {
            None
        }
    });
    if let Some((name, certainty)) = found {
        note_engine(collected, name, certainty, line_no);
    }
}

fn absorb(
    collected: &mut Collected,
    facts: LineFacts,
    line_no: u64,
    cleaned: &str,
    raw: &str,
    stream: Option<&str>,
    around: Option<(&[u8], &[u8])>,
) {
    let frozen = collected.first_gpu_failure.is_some();
    if let Some((name, certainty)) = facts.engine {
        note_engine(collected, name, certainty, line_no);
        if let Some(version) = facts.engine_version.clone() {
            collected.engine_versions.insert(name, version);
        }
    }
    if let Some(generation) = facts.generation {
        collected.generation = Some(generation);
    }
    for (name, version) in &facts.versions {
        collected
            .versions
            .insert((*name).to_string(), version.clone());
    }
    merge_model(&mut collected.model, &facts.model, frozen);
    merge_config(&mut collected.config, &facts.config, frozen);
    if !frozen {
        collected.memory.merge(&facts.memory);
    }
    let arrow = facts
        .frame
        .as_ref()
        .is_some_and(|(_, file)| file == "<call>");
    if arrow && frames::arrow_of_frame_above(collected, line_no, facts.frame_code.as_deref()) {
        // The statement of an IPython frame printed above: kept on it, no call of its own.
    } else if let Some((function, file)) = facts.frame {
        frames::note_printed(collected, line_no, function, file);
        if let Some(code) = facts.frame_code {
            if let Some(frame) = collected.frames.back_mut() {
                frame.code = Some(frames::kept_statement(&code));
            }
        }
    }
    if let Some(code) = facts.arrow_code {
        // A rich traceback's arrow line: the statement of the frame printed just above it.
        if let Some(frame) = collected
            .frames
            .iter_mut()
            .rev()
            .find(|frame| !frame.called)
        {
            if frame.code.is_none() && frame.line < line_no && line_no - frame.line <= 24 {
                frame.code = Some(frames::kept_statement(&code));
            }
        }
    }
    if let Some(function) = facts.frame_function {
        // A rich frame's function on the line under its path.
        if let Some(frame) = collected.frames.back_mut() {
            if frame.function.is_empty() && frame.line + 1 == line_no {
                frame.function = function;
            }
        }
    }
    if let Some(phase) = facts.failed_phase_hint {
        if collected.hints.len() < 16 {
            collected.hints.push((line_no, phase));
        }
    }
    if facts.stage_words && collected.prose.len() < MAX_PROSE_LINES {
        let text: String = cleaned.chars().take(MAX_CONTEXT_LINE_CHARS).collect();
        let line = |bytes: &[u8]| {
            let text: String = String::from_utf8_lossy(bytes)
                .chars()
                .take(MAX_CONTEXT_LINE_CHARS)
                .collect();
            (!text.trim().is_empty()).then_some(text)
        };
        collected
            .prose
            .push(crate::analyze::phase::prose::ProseLine {
                line: line_no,
                text,
                before: around.and_then(|(before, _)| line(before)),
                after: around.and_then(|(_, after)| line(after)),
            });
    }
    if let Some(phase) = facts.late_phase {
        if collected.late.len() >= 64 {
            collected.late.pop_front();
        }
        collected.late.push_back((line_no, phase));
    }
    if facts.load_part {
        if collected.load_parts.len() >= 16 {
            collected.load_parts.pop_front();
        }
        collected.load_parts.push_back(line_no);
    }
    let mut timestamp = None;
    for event in facts.events {
        if event.kind == EventKind::Traceback {
            collected.tracebacks.push_back(line_no);
            if collected.tracebacks.len() > 64 {
                collected.tracebacks.pop_front();
            }
            continue;
        }
        if event.kind == EventKind::Shutdown {
            collected.shutdown_line.get_or_insert(line_no);
        }
        if timestamp.is_none() {
            timestamp = Some(
                engine_log::parse_timestamp(cleaned).or_else(|| engine_log::parse_timestamp(raw)),
            );
        }
        let stamp = timestamp.clone().flatten();
        push_event(
            collected,
            event.kind,
            event.phase,
            event.figures,
            line_no,
            stamp,
            stream,
            cleaned,
        );
    }
}

/// The repeat kind all of a line's markers share, if its markers are request/stats markers only.
fn repeat_kind_of(markers: &[usize]) -> Option<EventKind> {
    let kind = engine_log::repeat_kind(*markers.first()?)?;
    markers
        .iter()
        .all(|m| engine_log::repeat_kind(*m) == Some(kind))
        .then_some(kind)
}

/// Keeps a line of the current run raw (or counts it, for requests/stats), while the run is
/// deferred (not eager).
fn defer(
    collected: &mut Collected,
    markers: &[usize],
    raw: &[u8],
    code: Option<&[u8]>,
    around: Option<(&[u8], &[u8])>,
    line_no: u64,
) {
    if let Some(kind) = repeat_kind_of(markers) {
        if count_repeats(collected, kind, 1, line_no) {
            return;
        }
        let pending = &mut collected.pending;
        pending.progressed = true;
        pending.push(PendingLine::Repeat {
            kind,
            first: line_no,
            last: line_no,
            count: 1,
            sample: raw[..raw.len().min(400)].into(),
        });
        return;
    }
    let pending = &mut collected.pending;
    if markers
        .iter()
        .any(|m| engine_log::marker_role(*m) == MarkerRole::Progress)
    {
        pending.progressed = true;
    }
    pending.push(PendingLine::Line {
        line: line_no,
        text: raw[..raw.len().min(MAX_PENDING_LINE_BYTES)].into(),
        code: code.map(|code| code[..code.len().min(MAX_PENDING_LINE_BYTES)].into()),
        around: around.map(|(before, after)| Box::new((before.into(), after.into()))),
    });
}

/// Whether a line's markers hold one of the reporter's words (`engine_log::prose`).
fn reports_words(markers: &[usize]) -> bool {
    markers
        .iter()
        .any(|&marker| engine_log::marker_for_reports_only(marker))
}

/// The lines above and below `block[start..end]` in the block (empty at the block's edge), at
/// most `MAX_PENDING_LINE_BYTES` each: a hard-wrapped sentence of the reporter's continues there.
fn neighbours(block: &[u8], start: usize, end: usize) -> (&[u8], &[u8]) {
    let trim = |line: &[u8]| line.len().min(MAX_PENDING_LINE_BYTES);
    let before = match start.checked_sub(1) {
        Some(newline) if block.get(newline) == Some(&b'\n') => {
            let from = memchr::memrchr(b'\n', &block[..newline]).map_or(0, |at| at + 1);
            let line = &block[from..newline];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            &line[line.len() - trim(line)..]
        }
        _ => &[],
    };
    let after = block
        .get(end..)
        .and_then(|rest| rest.strip_prefix(b"\n"))
        .map_or(&[][..], |rest| {
            let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            &line[..trim(line)]
        });
    (before, after)
}

/// Parses the pending lines of the current run, in order.
fn materialize(collected: &mut Collected) {
    if collected.pending.is_empty() {
        return;
    }
    let scanner = scanner();
    for entry in collected.pending.take() {
        match entry {
            PendingLine::FailuresOnly(event) => collected.segment.push(event),
            PendingLine::Line {
                line,
                text,
                code,
                around,
            } => {
                let mut found = Vec::new();
                scanner.scan(&text, &mut found);
                let markers: Vec<usize> = found
                    .into_iter()
                    .filter_map(|(_, index)| index.checked_sub(scanner.oom_markers))
                    .collect();
                if markers.is_empty() {
                    continue;
                }
                let raw = String::from_utf8_lossy(&text);
                let clean = clean_line(&raw);
                note_prefix_engine(collected, &raw, clean.stream.as_deref(), line);
                let cleaned: &str = &clean.text;
                let facts = engine_log::parse_line_raw(cleaned, &raw, &markers);
                if !facts.is_empty() {
                    let frame_of = facts.frame.clone();
                    absorb(
                        collected,
                        facts,
                        line,
                        cleaned,
                        &raw,
                        clean.stream.as_deref(),
                        around
                            .as_deref()
                            .map(|(before, after)| (&before[..], &after[..])),
                    );
                    if let (Some((function, file)), Some(code)) = (frame_of, code.as_deref()) {
                        push_called_frames(
                            collected,
                            &raw,
                            code,
                            (function.as_str(), file.as_str()),
                            line,
                        );
                    }
                }
            }
            PendingLine::Repeat {
                kind,
                first,
                last,
                count,
                sample,
            } => {
                let raw = String::from_utf8_lossy(&sample);
                let clean = clean_line(&raw);
                let stamp = engine_log::parse_timestamp(&clean.text);
                push_event(
                    collected,
                    kind,
                    Phase::Inference,
                    EventFigures::default(),
                    first,
                    stamp,
                    clean.stream.as_deref(),
                    &clean.text,
                );
                if let Some(event) = collected.segment.last_mut() {
                    if event.kind == kind && count > 1 {
                        event.count += count - 1;
                        event.last_line = Some(last);
                    }
                }
                collected.progress.observe(kind, Phase::Inference, last);
            }
        }
    }
}

/// A model loader's metadata line: llama.cpp's `llama_model_loader: - kv 12: …` / `- type
/// f32: 66 tensors`, `llm_load_print_meta: n_layer = 32`, `print_info: n_layer = 32`.
fn is_loader_metadata(text: &str) -> bool {
    engine_log::LOADER_METADATA
        .iter()
        .any(|prefix| text.contains(prefix))
}

fn merge_model(into: &mut ModelInfo, from: &ModelInfo, frozen: bool) {
    let take = |into: &mut Option<String>, from: &Option<String>| {
        if from.is_some() && (!frozen || into.is_none()) {
            into.clone_from(from);
        }
    };
    take(&mut into.name, &from.name);
    take(&mut into.architecture, &from.architecture);
    take(&mut into.dtype, &from.dtype);
    take(&mut into.quantization, &from.quantization);
}

fn merge_config(into: &mut EngineConfig, from: &EngineConfig, frozen: bool) {
    macro_rules! take {
        ($($field:ident),*) => {$(
            if from.$field.is_some() && (!frozen || into.$field.is_none()) {
                into.$field.clone_from(&from.$field);
            }
        )*};
    }
    take!(
        tensor_parallel_size,
        pipeline_parallel_size,
        max_model_len,
        gpu_memory_utilization,
        mem_fraction_static,
        kv_cache_dtype,
        enforce_eager,
        max_num_seqs,
        max_num_batched_tokens,
        cpu_offload_gb,
        gpu_layers,
        batch_size
    );
}

/// Reads a whole input and explains it.
pub fn explain_reader(mut reader: impl BufRead) -> io::Result<ExplainReport> {
    let mut explainer = Explainer::new();
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if chunk.is_empty() {
            break;
        }
        let length = chunk.len();
        explainer.push_bytes(chunk);
        reader.consume(length);
    }
    Ok(explainer.finish())
}

/// Explains a text held in memory (tests, small inputs).
pub fn explain_text(text: &str) -> ExplainReport {
    let mut explainer = Explainer::new();
    explainer.push_bytes(text.as_bytes());
    explainer.finish()
}

/// Whether a report found anything to diagnose (a failure message or an engine failure).
pub fn has_findings(report: &ExplainReport) -> bool {
    !report.ooms.is_empty()
        || report
            .timeline
            .iter()
            .any(|event| matches!(event.kind, EventKind::Shutdown | EventKind::Failure))
}

#[cfg(test)]
mod scanner_tests;
#[cfg(test)]
mod tests;

/// Every file under `tests/fixtures`.
#[cfg(test)]
fn fixture_texts() -> Vec<Vec<u8>> {
    let mut texts = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from("tests/fixtures")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                texts.push(std::fs::read(&path).unwrap());
            }
        }
    }
    texts
}

#[cfg(test)]
mod like_tests;

#[cfg(test)]
mod send_tests;

#[cfg(test)]
mod engine_line_tests;
#[cfg(test)]
mod hot_path_tests;
#[cfg(test)]
mod s21_tests;
#[cfg(test)]
mod s22_tests;
#[cfg(test)]
mod s23_tests;
#[cfg(test)]
mod s24_tests;
#[cfg(test)]
mod s25_tests;
#[cfg(test)]
mod s26_tests;
#[cfg(test)]
mod s27_tests;
#[cfg(test)]
mod s28_tests;
#[cfg(test)]
mod s29_tests;
#[cfg(test)]
mod s30_tests;
#[cfg(test)]
mod s31_tests;
#[cfg(test)]
mod s32_tests;
#[cfg(test)]
mod s33_tests;
#[cfg(test)]
mod s34_engine_tests;
#[cfg(test)]
mod s34_tests;
#[cfg(test)]
mod s35_phase_tests;
#[cfg(test)]
mod s35_tests;
#[cfg(test)]
mod s35g_tests;
#[cfg(test)]
mod s36_engine_tests;
#[cfg(test)]
mod s36_ray_tests;
#[cfg(test)]
mod s36p2_tests;
#[cfg(test)]
mod s36p3_tests;
#[cfg(test)]
mod s37p1_tests;
#[cfg(test)]
mod s37p2_tests;
#[cfg(test)]
mod s38_echo_tests;
#[cfg(test)]
mod s38p1_tests;
#[cfg(test)]
mod s38p2_tests;
#[cfg(test)]
mod s39rl_tests;
#[cfg(test)]
mod s40f3_tests;
#[cfg(test)]
mod tier_tests;
#[cfg(test)]
mod whole_text;
