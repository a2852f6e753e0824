//! The candidate scan of one block: the lines that hold a marker (an OOM marker or an
//! engine-log marker), found by the anchored search, with the known-line shortcut for lines
//! like a recent one; and [`ScannedChunk`], a block scanned on any thread.
//!
//! # Three scanners, and which markers each holds
//!
//! A long log (over 8 MiB, see `stream::Tiers`) is read by three searches; a short text (a
//! report, an issue, a paste) by the first alone. What each holds is its cost on every byte
//! it reads (`hot_path_tests` counts it; scripts/bench_explain.sh times it):
//!
//! - [`scanner`], every marker: short texts, the head of a long log (its first 4 MiB: startup,
//!   engine, model, settings) and the chunk holding a failure or an engine start. A new
//!   marker goes here, always.
//! - [`log_scanner`], the parsed parts of a long log past its head (the windows before a
//!   failure or restart, the chunk after one, the tail): every OOM marker but those of the
//!   `ReportOnly` role (`oom_text::OomMarkerRole`) and every marker of a program's log lines
//!   (stages, figures, engines, frames), but not the markers that matter only in a short
//!   report, `engine_log::marker_for_reports_only`: the reporter's stage words
//!   (`parse::engine_log::prose`) and an engine named in a sentence (`engines::vocab`'s
//!   `engine_in_prose`). Those are ordinary words (`training`, `inference`, `vllm`) that the
//!   lines of a busy server hold by chance, and their handlers pass over a program's log lines
//!   anyway. A marker added to `prose` stays out of this scanner without anything to do; a
//!   marker of a new handler of sentences should be added to `marker_for_reports_only` too.
//! - [`failure_scan`], the middle of a long log, every byte: the markers that start a
//!   failure message (the `Message` role of `oom_text::OOM_MARKER_TABLE`, not the reporter's
//!   words) and those of an engine start. Any OOM marker given the `Message` role or engine
//!   marker given the `Start` role lands here:
//!   keep it a program's own wording, at least four bytes, and rare in serving and training
//!   lines.

use super::chunk_bytes::ChunkBytes;
use super::*;
use crate::parse::oom_text::{self, OomMarkerRole};

pub(super) struct Scanner {
    /// Every marker: patterns `0..oom_markers` are OOM markers; the rest engine-log markers.
    pub(super) patterns: Vec<&'static str>,
    /// The fast path (see [`scan`]).
    pub(super) anchored: Option<Anchored>,
    /// `None` only if the automaton could not be built (then every line is a candidate).
    pub(super) automaton: Option<AhoCorasick>,
    /// Patterns `0..oom_markers` are OOM markers; the rest are engine-log markers.
    pub(super) oom_markers: usize,
    /// What a line must show before a run of digits for a marker to cover the run (see
    /// [`like_shape`]).
    pub(super) digits: DigitContexts,
}

impl Scanner {
    /// Every marker match in `part` as (position, pattern), in the order of aho-corasick's
    /// overlapping search.
    pub(super) fn scan(&self, part: &[u8], out: &mut Vec<(usize, usize)>) {
        if let Some(anchored) = &self.anchored {
            anchored.scan(&self.patterns, part, out);
        } else if let Some(automaton) = &self.automaton {
            out.extend(
                automaton
                    .find_overlapping_iter(part)
                    .map(|found| (found.start(), found.pattern().as_usize())),
            );
        }
    }
}

/// The scanner of short texts and of the head of a long log: every marker.
pub(super) fn scanner() -> &'static Scanner {
    static SCANNER: OnceLock<Scanner> = OnceLock::new();
    SCANNER.get_or_init(|| build_scanner(false))
}

/// The scanner of the parsed parts of a long log past its head (the windows before a failure
/// or an engine restart, the chunks after one, the tail): every marker but those that matter
/// only in a short report (`engine_log::marker_for_reports_only`: the reporter's stage words,
/// an engine named in a sentence). Those are most of the markers that ordinary serving and
/// training lines hold by chance (`inference`, `Training`, `vllm`), and their handlers pass
/// over a program's log lines anyway. Every OOM marker stays. The same marker indices as
/// [`scanner`]; the chunk holding a failure is scanned by [`scanner`].
pub(super) fn log_scanner() -> &'static Scanner {
    static SCANNER: OnceLock<Scanner> = OnceLock::new();
    SCANNER.get_or_init(|| build_scanner(true))
}

/// Which scanner reads a block (see [`scanner`] and [`log_scanner`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum ScannerTier {
    /// Every marker: a short text, the head of a long log, a chunk holding a failure.
    #[default]
    Full,
    /// The markers of program logs: the other parsed parts of a long log.
    Log,
}

impl ScannerTier {
    pub(super) fn scanner(self) -> &'static Scanner {
        match self {
            ScannerTier::Full => scanner(),
            ScannerTier::Log => log_scanner(),
        }
    }
}

fn build_scanner(long_logs: bool) -> Scanner {
    let mut patterns: Vec<&'static str> = OOM_MARKERS.to_vec();
    patterns.extend_from_slice(engine_log::markers());
    // The reporter's words that other programs held the memory matter in a report only.
    let held: Vec<usize> = (0..patterns.len())
        .filter(|&index| {
            !long_logs
                || match index.checked_sub(OOM_MARKERS.len()) {
                    None => {
                        oom_text::oom_marker_role(index).is_some_and(OomMarkerRole::in_long_logs)
                    }
                    Some(marker) => !engine_log::marker_for_reports_only(marker),
                }
        })
        .collect();
    let anchored = Anchored::holding(&patterns, &held);
    // Fallback: a full DFA (~330 literals leave no useful prefilter, and the DFA scans
    // several times faster than the default NFA).
    let automaton = if anchored.is_some() {
        None
    } else {
        AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::Standard)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .prefilter(false)
            .byte_classes(true)
            .build(&patterns)
            .or_else(|_| AhoCorasick::new(&patterns))
            .ok()
    };
    let digits = DigitContexts::new(&patterns);
    Scanner {
        patterns,
        anchored,
        automaton,
        oom_markers: OOM_MARKERS.len(),
        digits,
    }
}

/// The rare markers alone: those that start a failure message ([`OOM_MARKERS`]) and those
/// of an engine start (a restart: the banner and version of the run that follows). The search
/// that the middle of a long input gets (see `stream`): every failure message starts on a line
/// holding one of them, so a stretch without any holds no failure and no new run.
pub(super) struct FailureScan {
    /// The markers searched for: those that hold no other one (a marker holding another
    /// cannot occur without it: "OOMKilled" and "OOM").
    pub(super) patterns: Vec<&'static str>,
    /// The fast path; `None` without SIMD Teddy.
    pub(super) anchored: Option<Anchored>,
    /// The fallback: one automaton over the markers.
    automaton: Option<AhoCorasick>,
    /// Per pattern: whether it only marks an engine start (no failure message starts with
    /// it, and no failure marker holds it).
    start_only: Vec<bool>,
}

/// What the failure search found in a stretch of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FailureFind {
    /// No failure marker and no engine start.
    Nothing,
    /// Engine starts only (a restart): no failure marker. `first`: where the first engine
    /// start marker begins.
    StartOnly { first: usize },
    /// A failure marker (perhaps beside engine starts).
    Failure,
}

impl FailureScan {
    /// Whether `hay` holds a failure marker. Without any searcher, always true (the caller
    /// then reads every line). A counter of past OOMs (`CUDA OOMs: 0` in every
    /// `torch.cuda.memory_summary()`, printed every few steps by some training loops) starts
    /// no message: an occurrence of a marker followed by `s:` is not one.
    pub(super) fn finds(&self, hay: &[u8]) -> bool {
        self.any_where(hay, |start, index| {
            !is_oom_counter(hay, start, self.patterns[index])
                && (self.start_only.get(index).copied().unwrap_or(false)
                    || !in_echoed_request(hay, start))
        })
    }

    /// Whether any marker occurrence satisfies `keep(start, pattern index)`, with whichever
    /// searcher was built. Without any searcher, always true (the caller then reads every line).
    fn any_where(&self, hay: &[u8], keep: impl Fn(usize, usize) -> bool) -> bool {
        match (&self.anchored, &self.automaton) {
            (Some(anchored), _) => anchored.finds_any_where(&self.patterns, hay, keep),
            (None, Some(automaton)) => automaton
                .find_overlapping_iter(hay)
                .any(|found| keep(found.start(), found.pattern().as_usize())),
            (None, None) => true,
        }
    }

    /// Like [`FailureScan::finds`], telling a stretch that holds only engine starts from one
    /// that holds a failure marker (the search then reads on past the starts).
    pub(super) fn classify(&self, hay: &[u8]) -> FailureFind {
        let first_start = std::cell::Cell::new(None::<usize>);
        let failure = |start: usize, index: usize| {
            let pattern = self.patterns[index];
            if is_oom_counter(hay, start, pattern) {
                return false;
            }
            if self.start_only.get(index).copied().unwrap_or(false) {
                let first = first_start.get().map_or(start, |first| first.min(start));
                first_start.set(Some(first));
                return false;
            }
            !in_echoed_request(hay, start)
        };
        if self.any_where(hay, failure) {
            FailureFind::Failure
        } else if let Some(first) = first_start.get() {
            FailureFind::StartOnly { first }
        } else {
            FailureFind::Nothing
        }
    }
}

/// Whether the failure marker at `start` stands in an engine's echo of a request or a response
/// on its line (a user's prompt that quotes an error, `oom_text::echo`): the explainer reads no
/// failure there, so the search passes over it. A line cut by the start of `hay` is not judged
/// (its opener may be in the chunk before), nor one longer than [`ECHO_REACH`] before the
/// marker (each marker's look back stays bounded): the marker counts.
fn in_echoed_request(hay: &[u8], start: usize) -> bool {
    let before = &hay[..start.min(hay.len())];
    let before = &before[before.len().saturating_sub(ECHO_REACH)..];
    match memchr::memrchr(b'\n', before) {
        Some(newline) => oom_text::echo::content_start(&before[newline + 1..]).is_some(),
        None => false,
    }
}

/// How far back from a failure marker the search looks for its line's start.
const ECHO_REACH: usize = 64 * 1024;

/// Whether the occurrence of `pattern` at `start` is a counter label (`OOMs:`), not a message.
/// Only when the bytes after it are there to see: cut off, it counts as a marker.
pub(super) fn is_oom_counter(hay: &[u8], start: usize, pattern: &str) -> bool {
    pattern == "OOM" && hay.get(start + 3..start + 5) == Some(b"s:".as_slice())
}

/// The markers of the failure search: those that start a program's failure message (not the
/// reporter's words, see [`OomMarkerRole`]) and those of an engine start.
pub(super) fn failure_markers() -> Vec<&'static str> {
    let mut patterns = failure_oom_markers();
    patterns.extend(
        (engine_log::markers().iter().enumerate())
            .filter(|&(index, _)| engine_log::marker_role(index) == MarkerRole::Start)
            .map(|(_, marker)| *marker),
    );
    patterns
}

/// The OOM markers of a program's failure message: [`OOM_MARKERS`] without the reporter's
/// words (those whose [`OomMarkerRole`] keeps them out of the failure search).
fn failure_oom_markers() -> Vec<&'static str> {
    (oom_text::OOM_MARKER_TABLE.iter())
        .filter(|(_, role)| role.in_failure_search())
        .map(|&(marker, _)| marker)
        .collect()
}

/// How far a failure marker cut by a chunk boundary reaches into the chunk after it: the
/// longest marker of the failure search ([`failure_markers`]), less one byte; known without
/// building the search.
pub(super) fn failure_marker_reach() -> usize {
    static REACH: OnceLock<usize> = OnceLock::new();
    *REACH.get_or_init(|| {
        let longest = failure_markers().iter().map(|marker| marker.len()).max();
        longest.unwrap_or(0).saturating_sub(1)
    })
}

pub(super) fn failure_scan() -> &'static FailureScan {
    static SCAN: OnceLock<FailureScan> = OnceLock::new();
    SCAN.get_or_init(|| {
        let patterns = failure_markers();
        let patterns = without_holders(patterns);
        let oom = failure_oom_markers();
        let start_only = patterns
            .iter()
            .map(|pattern| !oom.iter().any(|marker| marker.contains(pattern)))
            .collect();
        let anchored = Anchored::for_any(&patterns);
        let automaton = match anchored {
            Some(_) => None,
            None => AhoCorasick::new(&patterns).ok(),
        };
        FailureScan {
            patterns,
            anchored,
            automaton,
            start_only,
        }
    })
}

/// `patterns` without those that hold another one (an occurrence of it holds the other's),
/// and without repeats: whether any occurs is the same, with fewer to search for.
fn without_holders(mut patterns: Vec<&'static str>) -> Vec<&'static str> {
    patterns.sort_unstable();
    patterns.dedup();
    let all = patterns.clone();
    patterns.retain(|pattern| {
        !all.iter()
            .any(|other| other.len() < pattern.len() && pattern.contains(other))
    });
    patterns
}

/// A line the scan found markers in, or the first line of a run of request/stats lines.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    /// The line is `block[start..end]` (without its `\n`).
    pub(super) start: usize,
    pub(super) end: usize,
    /// Index of the line in the block (0 = the first).
    pub(super) line: u64,
    /// Its engine markers: `Candidates::markers[markers]`.
    pub(super) markers: Range<usize>,
    /// Whether it holds an OOM marker.
    pub(super) oom: bool,
    /// When this line and the next ones hold only request/stats markers of one kind (see
    /// `engine_log::repeat_kind`): (that kind, index of the last line of the run, end of
    /// that line). The lines after this one are counted, not listed.
    pub(super) run: Option<(EventKind, u64, usize)>,
}

/// The lines of a block worth looking at, found by [`find_candidates`].
#[derive(Debug, Default)]
pub(super) struct Candidates {
    pub(super) lines: Vec<Candidate>,
    /// Engine markers of all candidate lines (indices into `engine_log::markers`).
    pub(super) markers: Vec<usize>,
    /// Bytes of the block the scan covered (complete lines): all of it, unless it stopped
    /// at `MAX_CANDIDATES`.
    pub(super) scanned: usize,
    /// Lines in the covered part.
    pub(super) total_lines: u64,
    /// Scratch: marker matches (position, pattern).
    pub(super) matches: Vec<(usize, usize)>,
}

impl Candidates {
    pub(super) fn markers_of(&self, candidate: &Candidate) -> &[usize] {
        self.markers
            .get(candidate.markers.clone())
            .unwrap_or_default()
    }
}

/// Where the marker matches of a block come from, line after line.
pub(super) enum Hits<'a> {
    /// Anchor hits searched for as the lines are reached, so that a line known without
    /// searching it (see [`like_shape`]) is skipped.
    Anchored {
        anchored: &'a Anchored,
        cursor: HitCursor,
    },
    /// Every match, found up front by the automaton (by end; the lines in order).
    Listed {
        matches: Vec<(usize, usize)>,
        next: usize,
    },
}

impl Hits<'_> {
    /// Every match of the automaton in `block`.
    pub(super) fn listed(automaton: &AhoCorasick, block: &[u8]) -> Hits<'static> {
        Hits::Listed {
            matches: automaton
                .find_overlapping_iter(block)
                .map(|found| (found.start(), found.pattern().as_usize()))
                .collect(),
            next: 0,
        }
    }

    /// Where the next hit is (a position inside the next line with a marker).
    pub(super) fn peek(&mut self, block: &[u8]) -> Option<usize> {
        match self {
            Hits::Anchored { anchored, cursor } => cursor.peek(anchored, block),
            Hits::Listed { matches, next } => matches.get(*next).map(|&(start, _)| start),
        }
    }

    /// Moves the matches of the hits before `end` (the end of the line) into `out`, in the
    /// order of aho-corasick's overlapping search.
    pub(super) fn take_line(
        &mut self,
        patterns: &[&str],
        block: &[u8],
        end: usize,
        out: &mut Vec<(usize, usize)>,
    ) {
        match self {
            Hits::Anchored { anchored, cursor } => {
                let first = out.len();
                cursor.take_until(anchored, patterns, block, end, out);
                sort_matches(patterns, &mut out[first..]);
            }
            Hits::Listed { matches, next } => {
                while let Some(&(start, pattern)) = matches.get(*next) {
                    if start >= end {
                        break;
                    }
                    out.push((start, pattern));
                    *next += 1;
                }
            }
        }
    }

    /// Forgets the hits before `position` (lines known without searching them).
    pub(super) fn skip_to(&mut self, position: usize) {
        match self {
            Hits::Anchored { cursor, .. } => cursor.skip_to(position),
            Hits::Listed { matches, next } => {
                while matches
                    .get(*next)
                    .is_some_and(|&(start, _)| start < position)
                {
                    *next += 1;
                }
            }
        }
    }
}

/// Finds the candidate lines of `block` (complete lines): every line with a marker (a line
/// may hold several, and an OOM marker may overlap an engine marker), consecutive lines of
/// one request/stats kind merged into runs. A line that differs from the last line of a run
/// only in digits that no marker can cover holds the same markers (see [`like_shape`])
/// and joins the run without being searched: on a serving log most lines are such. This is
/// the costly part of explaining a large log, and pure, so [`ScannedChunk::scan`] runs it on
/// other threads.
#[cfg(test)]
pub(super) fn find_candidates(block: &[u8], found: &mut Candidates) {
    find_candidates_with(scanner(), block, found);
}

/// [`find_candidates`] with the given scanner.
pub(super) fn find_candidates_with(scanner: &Scanner, block: &[u8], found: &mut Candidates) {
    found.lines.clear();
    found.markers.clear();
    let hits = match (&scanner.anchored, &scanner.automaton) {
        (Some(anchored), _) => Hits::Anchored {
            anchored,
            cursor: anchored.hits(),
        },
        (None, Some(automaton)) => Hits::listed(automaton, block),
        (None, None) => {
            // Without a scanner every line is a candidate for the OOM detector.
            let mut start = 0;
            for (line, newline) in (0u64..).zip(memchr::memchr_iter(b'\n', block)) {
                if found.lines.len() >= MAX_CANDIDATES {
                    break;
                }
                found.lines.push(Candidate {
                    start,
                    end: newline,
                    line,
                    markers: 0..0,
                    oom: true,
                    run: None,
                });
                start = newline + 1;
            }
            found.scanned = start;
            found.total_lines = found.lines.len() as u64;
            return;
        }
    };
    collect_candidates(scanner, block, hits, found);
}

/// A recent candidate line: a later line like it ([`like_shape`]) holds its markers.
#[derive(Debug, Clone)]
pub(super) struct KnownLine {
    /// The line in the block (the latest one seen of its kind).
    pub(super) line: Range<usize>,
    /// Its engine markers in `Candidates::markers`.
    pub(super) markers: Range<usize>,
    pub(super) oom: bool,
    pub(super) kind: Option<EventKind>,
}

/// Candidate lines found in one go, at most: memory stays bounded when every line of a
/// chunk is one (the scan stops at a line end; the rest is scanned next).
pub(super) const MAX_CANDIDATES: usize = 8192;

/// Recent candidate lines kept to recognise the next line (see [`like_shape`]).
pub(super) const KNOWN_LINES: usize = 16;
/// After this many failed tries in a row, the known lines are tried only every
/// `KNOWN_BACKOFF` candidate lines (a try costs a line-end search and a compare).
pub(super) const KNOWN_TRIES_BEFORE_BACKOFF: u32 = 4;
pub(super) const KNOWN_BACKOFF: u32 = 32;

/// [`find_candidates`] with the hits of a scanner.
pub(super) fn collect_candidates(
    scanner: &Scanner,
    block: &[u8],
    mut hits: Hits<'_>,
    found: &mut Candidates,
) {
    let mut line_matches = std::mem::take(&mut found.matches);
    let mut known: Vec<KnownLine> = Vec::with_capacity(KNOWN_LINES);
    let mut replace = 0; // the known line replaced next
    let mut last_known = 0; // the known line recognised last
    let mut start = 0; // of the line `index`: lines before it are counted
    let mut index = 0u64;
    // The line at `start` comes right after a candidate: try the known lines first.
    let mut after_candidate = false;
    // Tries that failed in a row, and tries skipped since: where lines rarely repeat, the
    // known lines are tried only now and then.
    let (mut failed, mut skipped) = (0u32, 0u32);
    loop {
        if found.lines.len() >= MAX_CANDIDATES {
            found.scanned = start;
            found.total_lines = index;
            found.matches = line_matches;
            return;
        }
        let try_known = after_candidate && {
            skipped += 1;
            failed < KNOWN_TRIES_BEFORE_BACKOFF || skipped >= KNOWN_BACKOFF
        };
        let recognised = match try_known {
            // The known line recognised last first: lines of one kind often follow each other.
            true => std::iter::once(last_known)
                .chain((0..known.len()).filter(|&which| which != last_known))
                .find_map(|which| {
                    let line = known.get(which)?.line.clone();
                    like_shape(&block[line], &block[start..], &scanner.digits)
                        .map(|length| (which, start + length))
                }),
            false => None,
        };
        if let Some((which, _)) = recognised {
            last_known = which;
        }
        if try_known {
            skipped = 0;
            failed = match recognised {
                Some(_) => 0,
                None => failed.saturating_add(1),
            };
        }
        let from = found.markers.len();
        let (end, oom, kind) = match recognised {
            Some((which, end)) => {
                let known = &known[which];
                found.markers.extend_from_within(known.markers.clone());
                (end, known.oom, known.kind)
            }
            None => {
                hits.skip_to(start);
                let Some(at) = hits.peek(block) else {
                    break;
                };
                if let Some(offset) = memchr::memrchr(b'\n', &block[start..at]) {
                    index +=
                        memchr::memchr_iter(b'\n', &block[start..=start + offset]).count() as u64;
                    start += offset + 1;
                }
                let end =
                    memchr::memchr(b'\n', &block[at..]).map_or(block.len(), |offset| at + offset);
                line_matches.clear();
                hits.take_line(&scanner.patterns, block, end, &mut line_matches);
                if line_matches.is_empty() {
                    // Anchors without a marker (a marker cut short): not a candidate, as
                    // for the automaton.
                    start = end + 1;
                    index += 1;
                    after_candidate = false;
                    continue;
                }
                let mut oom = false;
                for &(_, pattern) in &line_matches {
                    match pattern.checked_sub(scanner.oom_markers) {
                        Some(marker) => found.markers.push(marker),
                        None => oom = true,
                    }
                }
                let kind = match oom {
                    true => None,
                    false => repeat_kind_of(&found.markers[from..]),
                };
                (end, oom, kind)
            }
        };
        // A repeat line right after a run of its kind (a run starts at a repeat line).
        let extends = found.lines.last_mut().filter(|last| {
            last.run
                .zip(kind)
                .is_some_and(|((run_kind, run_last, _), kind)| {
                    run_kind == kind && run_last + 1 == index
                })
        });
        let candidate = match extends {
            Some(last) => {
                found.markers.truncate(from);
                last
            }
            None => {
                found.lines.push(Candidate {
                    start,
                    end,
                    line: index,
                    markers: from..found.markers.len(),
                    oom,
                    run: kind.map(|kind| (kind, index, end)),
                });
                let Some(last) = found.lines.last_mut() else {
                    break;
                };
                last
            }
        };
        let mut previous = start..end;
        start = end + 1;
        index += 1;
        if let Some(kind) = kind {
            // The next lines join the run unsearched while they are like the last one (of
            // the same length, so the line ends where the last one would).
            let mut changed: Option<Range<usize>> = None; // between the last two lines
            loop {
                let next_end = start + previous.len();
                let last = &block[previous.clone()];
                let alike = block.get(next_end) == Some(&b'\n') && {
                    let line = &block[start..next_end];
                    match changed.clone() {
                        Some(run) if like_but_run(last, line, run.clone()) => true,
                        _ => match compare_lines(last, line, &scanner.digits) {
                            Some(run) => {
                                changed = run;
                                true
                            }
                            None => false,
                        },
                    }
                };
                let next_end = match alike {
                    true => next_end,
                    // Runs of digits of other lengths (ports, counts, figures).
                    false => match like_shape(last, &block[start..], &scanner.digits) {
                        Some(length) => {
                            changed = None;
                            start + length
                        }
                        None => break,
                    },
                };
                previous = start..next_end;
                start = next_end + 1;
                index += 1;
            }
            candidate.run = Some((kind, index - 1, previous.end));
        }
        let line = KnownLine {
            line: previous,
            markers: candidate.markers.clone(),
            oom,
            kind,
        };
        match recognised.map(|(which, _)| which) {
            Some(which) => known[which] = line,
            None if known.len() < KNOWN_LINES => known.push(line),
            None => {
                known[replace] = line;
                replace = (replace + 1) % KNOWN_LINES;
            }
        }
        after_candidate = start < block.len();
    }
    index += memchr::memchr_iter(b'\n', block.get(start..).unwrap_or_default()).count() as u64;
    found.scanned = block.len();
    found.total_lines = index;
    found.matches = line_matches;
}

/// Whether `line` holds an OOM marker, and its engine markers (for a line of a run, whose
/// markers the block scan did not keep).
#[cfg(test)]
pub(super) fn line_markers(line: &[u8]) -> (bool, Vec<usize>) {
    line_markers_with(scanner(), line)
}

/// [`line_markers`] with the given scanner.
pub(super) fn line_markers_with(scanner: &Scanner, line: &[u8]) -> (bool, Vec<usize>) {
    let mut found = Vec::new();
    scanner.scan(line, &mut found);
    let oom = found
        .iter()
        .any(|&(_, pattern)| pattern < scanner.oom_markers);
    let markers = found
        .into_iter()
        .filter_map(|(_, pattern)| pattern.checked_sub(scanner.oom_markers))
        .collect();
    (oom, markers)
}

/// A chunk of input and the candidate lines of its complete lines: filled by a reader,
/// scanned on any thread ([`ScannedChunk::scan`]), taken in order by
/// [`Explainer::push_scanned`], then reused (its buffers keep their capacity).
#[derive(Debug, Default)]
pub struct ScannedChunk {
    pub(super) bytes: ChunkBytes,
    /// The complete lines that were scanned (`None`: not scanned).
    pub(super) region: Option<Range<usize>>,
    /// What the scan found in `region` (positions relative to its start).
    pub(super) found: Candidates,
    /// Search for failure markers only, and find the candidate lines only if there is one.
    pub(super) failures_only: bool,
    /// Whether the chunk holds a failure marker or an engine start (known only after a
    /// failures-only scan; otherwise true).
    pub(super) holds_failure: bool,
    /// Whether what the failures-only scan found is engine starts only (a restart, no
    /// failure marker); false otherwise.
    pub(super) start_only: bool,
    /// Where the line of the first engine start of a [`ScannedChunk::start_only`] chunk begins
    /// (0 when it began in the previous chunk, and for every other chunk): the candidate lines
    /// are found from there, the lines before it belonging to the run that ended.
    pub(super) run_start: usize,
    /// The chunk's `\n` bytes (counted by a failures-only scan).
    pub(super) newlines: u64,
    /// The scanner that found `found` (see [`log_scanner`]).
    pub(super) tier: ScannerTier,
}

impl ScannedChunk {
    /// An empty chunk.
    pub fn new() -> Self {
        ScannedChunk::default()
    }

    /// The bytes of the chunk, for a reader to fill (any earlier scan is forgotten).
    pub fn bytes_mut(&mut self) -> &mut ChunkBytes {
        self.region = None;
        &mut self.bytes
    }

    /// Scans the chunk for markers, the costly part of explaining, so that it can run on
    /// other threads while [`Explainer::push_scanned`] takes the chunks in order.
    /// `starts_line`: the previous chunk of this input ended with a newline (or this is the
    /// input's first chunk); when it did not, the chunk's first line is finished by the
    /// explainer itself. A wrong guess costs time (the explainer scans again), not results.
    pub fn scan(&mut self, starts_line: bool) {
        self.tier = ScannerTier::Full;
        self.start_only = false;
        self.run_start = 0;
        if self.failures_only {
            let find = failure_scan().classify(&self.bytes);
            self.holds_failure = find != FailureFind::Nothing;
            if let FailureFind::StartOnly { first } = find {
                self.start_only = true;
                let before = &self.bytes[..first.min(self.bytes.len())];
                self.run_start = memchr::memrchr(b'\n', before).map_or(0, |newline| newline + 1);
            }
            if !self.holds_failure {
                self.newlines = memchr::memchr_iter(b'\n', &self.bytes).count() as u64;
                self.region = None;
                return;
            }
        }
        self.holds_failure = true;
        self.find_candidates(starts_line);
    }

    /// Finds the candidate lines of the chunk's complete lines with the scanner of `tier`
    /// (for a chunk kept by a failures-only scan and parsed after all: a window before a
    /// failure, or the tail).
    pub(super) fn scan_as(&mut self, starts_line: bool, tier: ScannerTier) {
        self.tier = tier;
        self.find_candidates(starts_line);
    }

    fn find_candidates(&mut self, starts_line: bool) {
        let bytes = &self.bytes;
        let start = if self.run_start > 0 {
            // A line start: the byte before it is a newline.
            Some(self.run_start)
        } else if starts_line {
            Some(0)
        } else {
            memchr::memchr(b'\n', bytes).map(|newline| newline + 1)
        };
        let end = memchr::memrchr(b'\n', bytes).map(|newline| newline + 1);
        self.region = match (start, end) {
            (Some(start), Some(end)) if start < end => {
                find_candidates_with(self.tier.scanner(), &bytes[start..end], &mut self.found);
                Some(start..end)
            }
            _ => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_holding_another_is_not_searched_for() {
        let kept = without_holders(vec![
            "OOMKilled",
            "OOM",
            "Killed",
            "CUDA out of memory",
            "out of memory",
            "OOM",
        ]);
        assert_eq!(kept, ["Killed", "OOM", "out of memory"]);
        // Whether a failure marker occurs is unchanged.
        let scan = failure_scan();
        assert!(scan.finds(b"Memory cgroup out of memory: Killed process 4242 (python)"));
        assert!(scan.finds(b"Reason: OOMKilled"));
        assert!(!scan.finds(b"INFO: 127.0.0.1:5000 - \"GET /health HTTP/1.1\" 200 OK"));
        // A memory summary's counter of past OOMs starts no message; a marker cut at the end
        // of the bytes still counts.
        assert!(!scan.finds(b"|            CUDA OOMs: 0            |   cudaMalloc retries: 0 |"));
        assert!(
            scan.finds(b"|            CUDA OOMs: 0  | torch.OutOfMemoryError: CUDA out of memory.")
        );
        assert!(scan.finds(b"CUDA OOM"));
        assert!(scan.finds(b"CUDA OOMs"));
        assert!(scan.patterns.contains(&"OOM") && !scan.patterns.contains(&"OOMKilled"));
    }
}
