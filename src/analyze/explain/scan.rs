//! Finding every marker occurrence in a block of log text, fast.
//!
//! The markers (OOM markers and engine-log markers, a few hundred literals) are too many for
//! one SIMD search. Instead each marker is given an *anchor*: a substring of [`ANCHOR_LEN`]
//! bytes, chosen at startup so that anchors are rare in ordinary log text (by a table of byte
//! frequencies, [`byte_frequencies`]) and shared by several markers where that costs little.
//! SIMD Teddy searchers (aho-corasick's packed searcher, up to [`ANCHORS_PER_SEARCHER`]
//! anchors each) find the anchors; each hit is checked against the markers anchored on it.
//! Adding a marker needs nothing here: it gets an anchor like every other, and more anchors
//! only mean one more searcher.

use aho_corasick::packed::{Config, MatchKind, Searcher};
use aho_corasick::Span;

/// The length of an anchor (of every anchor of a marker at least this long; a shorter marker
/// is its own anchor). Teddy tells apart at most four bytes per position.
pub(super) const ANCHOR_LEN: usize = 4;

/// Anchors per Teddy searcher: aho-corasick builds Teddy for at most 64 (the "fat" variant,
/// 16 buckets, above 32). One fat searcher costs fewer instructions per byte than two slim
/// ones (measured with callgrind on a generated serving log, scripts/gen_serving_log.py).
const ANCHORS_PER_SEARCHER: usize = 64;

/// A search for any marker ([`Anchored::for_any`]) over more anchors than this uses Fat Teddy.
const FAT_ABOVE: usize = 16;

/// What one more anchor costs, in expected hits per MiB of log text: an anchor shared by
/// several markers is preferred to a slightly rarer anchor per marker (each anchor makes
/// the SIMD search less selective, and more anchors need more searchers). Each is tried; the
/// anchors kept are those of least [`PASS_COST`] per searcher plus expected hits (0.01 alone
/// gave the fewest instructions per byte while the markers fitted in as many searchers).
const COSTS_PER_ANCHOR: [f64; 6] = [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0];

/// What one more searcher (one more SIMD pass over the text) costs, in anchor hits per MiB:
/// a Teddy pass reads a MiB in about 0.2 ms, a hit (a restart of the search and a check of
/// its markers) takes about 50 ns.
const PASS_COST: f64 = 4000.0;

/// The most searchers the anchors are chosen for while fewer will do: a pass reads every byte
/// of the log once more, which the hit counts of [`PASS_COST`] understate on a long log (a
/// sixth searcher of the log scanner, chosen for 171 fewer hits per MiB, failed the hot path's
/// budget in the twenty-fifth session). Above it each pass costs [`OVER_PASS_COST`] more.
const MOST_PASSES: usize = 5;
const OVER_PASS_COST: f64 = 100_000.0;

/// What one more anchor costs a searcher whose Teddy filter is shorter than an anchor (the
/// failure search, 3 bytes, as it shares its searcher with `OOM`), in hits per MiB of any
/// text: Teddy tests each position against bucket masks that are the unions of their anchors'
/// first bytes, so more anchors per bucket let more positions through to the exact check,
/// whatever the anchors' own hits (56 anchors against 35 took 30 % more time in the failure
/// search's Teddy on a varied 1 GiB serving log, measured with perf on one core).
const ANCHOR_COST: f64 = 400.0;

/// Lines like the bulk of serving and training logs, for [`byte_frequencies`] and for the
/// counts of [`choose_anchors`]: the busiest lines of the engines and trainers this tool reads,
/// written as their code prints them (vLLM's request, access and `Avg prompt throughput`
/// metrics lines, V0 and V1; SGLang's `Prefill batch` / `Decode batch`; TGI's request spans;
/// Ollama's `[GIN]` access and `level=` lines; llama.cpp's `slot` and timing lines; the
/// Trainer's and Lightning's progress bars and loss dicts; DeepSpeed's and Megatron's step
/// lines; `torch.cuda.memory_summary()` and `nvidia-smi` tables), with timestamps, client
/// addresses, ids and prompts. A piece of these lines is a poor anchor however rare its bytes:
/// `code` (of `exit code 137`) once had 1.1 M hits per GiB of SGLang and TGI lines, `ion thro`
/// of vLLM's metrics lines stopped the failure search on each, and ` GPU` every line of a
/// memory summary. It holds none of the failure markers: it stands for the lines the scan
/// must pass over quickly (the few log-scanner markers it holds, `Decode batch.`,
/// `Avg prompt throughput:`, are on every other line of a busy server). Add the busy lines of
/// a new engine here; `hot_path_tests` counts what the anchors cost on longer excerpts.
const TYPICAL_LOG: &str = include_str!("typical_lines.log");

/// The estimated frequency of each byte in log text: its share of [`TYPICAL_LOG`], every
/// byte counted once more so that none is estimated never to occur.
pub(super) fn byte_frequencies() -> [f64; 256] {
    let mut counts = [1.0f64; 256];
    for &byte in TYPICAL_LOG.as_bytes() {
        counts[usize::from(byte)] += 1.0;
    }
    let total: f64 = counts.iter().sum();
    counts.map(|count| count / total)
}

/// Expected hits of `anchor` per MiB of log text whose bytes occur with `frequencies`
/// (bytes taken as independent).
fn expected_hits(anchor: &[u8], frequencies: &[f64; 256]) -> f64 {
    anchor
        .iter()
        .map(|&byte| frequencies[usize::from(byte)])
        .product::<f64>()
        * (1u64 << 20) as f64
}

/// A window of at most [`ANCHOR_LEN`] bytes as one number (its length, then its bytes): the
/// key of the maps of [`choose_anchors`], hashed by [`WindowHasher`].
fn window_key(window: &[u8]) -> u64 {
    (window.iter()).fold(window.len() as u64, |key, &byte| key << 8 | u64::from(byte))
}

/// The hasher of [`window_key`]s: one multiply, the high half folded into the low (the map
/// takes its buckets from the low bits). Building the scanners hashes every window of every
/// marker and of [`TYPICAL_LOG`] several times: with the default SipHash that was about a
/// fifth of the instructions of `oomdoc explain` on a short text (callgrind). The maps are
/// only looked up, never iterated, so the hasher changes no choice.
#[derive(Default)]
struct WindowHasher(u64);

impl std::hash::Hasher for WindowHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        let mixed = (self.0 ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = mixed ^ (mixed >> 32);
    }
}

/// A map keyed by [`window_key`].
type WindowMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<WindowHasher>>;

/// Chooses the anchors of `patterns`: returns the anchors and, for each pattern, the index
/// of its anchor. A greedy weighted set cover: the next anchor is the one whose cost (see
/// below) plus a cost per anchor ([`COSTS_PER_ANCHOR`]), per pattern it newly anchors, is
/// least; `passes` tells how many searchers some anchors need. Deterministic.
///
/// The cost of an anchor is its expected hits per MiB plus those of its first `filter` bytes:
/// Teddy tests the first bytes of its shortest anchor at every position (`filter`: 3 when a
/// 3-byte anchor shares the searcher) and checks each anchor starting there, so an anchor whose
/// start is common (`ion ` of `generation throughput`) stops the SIMD loop often though it
/// rarely occurs whole. Expected hits are the greater of the byte-frequency estimate and the
/// count in [`TYPICAL_LOG`]: whatever occurs in a busy line costs at least one occurrence there.
pub(super) fn choose_anchors(
    patterns: &[&str],
    frequencies: &[f64; 256],
    filter: usize,
    passes: impl Fn(&[Vec<u8>]) -> usize,
) -> (Vec<Vec<u8>>, Vec<usize>) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    // Every substring of anchor length (the whole of a shorter pattern), numbered in order
    // of first appearance, with the patterns holding it, and the reverse.
    let mut number: WindowMap<usize> = WindowMap::default();
    let mut windows: Vec<&[u8]> = Vec::new();
    let mut holders: Vec<Vec<usize>> = Vec::new();
    let mut held: Vec<Vec<usize>> = vec![Vec::new(); patterns.len()];
    for (index, pattern) in patterns.iter().enumerate() {
        let bytes = pattern.as_bytes();
        for window in bytes.windows(ANCHOR_LEN.min(bytes.len()).max(1)) {
            let id = *number.entry(window_key(window)).or_insert_with(|| {
                windows.push(window);
                holders.push(Vec::new());
                windows.len() - 1
            });
            if holders[id].last() != Some(&index) {
                holders[id].push(index);
                held[index].push(id);
            }
        }
    }
    // A substring of the typical text is common whatever its bytes ("HTTP", "POST" in every
    // access line): its hits are estimated from its count there too.
    let filter = filter.clamp(1, ANCHOR_LEN);
    let mut typical: WindowMap<f64> = WindowMap::default();
    // The sample mixes the lines of about ten kinds of logs; a long log is mostly one kind,
    // whose pieces then occur about ten times as often as in the sample.
    let per_occurrence = 10.0 * (1u64 << 20) as f64 / TYPICAL_LOG.len() as f64;
    for length in [filter, ANCHOR_LEN] {
        for window in TYPICAL_LOG.as_bytes().windows(length) {
            *typical.entry(window_key(window)).or_default() += per_occurrence;
        }
        if filter == ANCHOR_LEN {
            break;
        }
    }
    let hits = |bytes: &[u8]| {
        let seen = typical.get(&window_key(bytes)).copied().unwrap_or_default();
        expected_hits(bytes, frequencies).max(seen)
    };
    let costs: Vec<f64> = windows
        .iter()
        .map(|window| {
            let start = &window[..filter.min(window.len())];
            let start_hits = match start.len() < window.len() {
                true => hits(start),
                false => 0.0,
            };
            hits(window) + start_hits
        })
        .collect();
    let cover = |per_anchor: f64| {
        // For each window, the patterns holding it that have no anchor yet.
        let mut new: Vec<usize> = holders.iter().map(Vec::len).collect();
        let mut anchor_of = vec![usize::MAX; patterns.len()];
        let mut anchors = Vec::new();
        let mut hits = 0.0;
        // The cost per newly anchored pattern (positive: its bits order as the numbers do),
        // the window, its id. A window's cost only grows as its patterns get anchors, so the
        // least in the heap is the least of all when it is up to date ("lazy" greedy: the
        // same choice as a search of every window each time, at a fraction of the work).
        let cost = |id: usize, new: &[usize]| ((costs[id] + per_anchor) / new[id] as f64).to_bits();
        let mut heap: BinaryHeap<Reverse<(u64, &[u8], usize)>> = (0..windows.len())
            .map(|id| Reverse((cost(id, &new), windows[id], id)))
            .collect();
        while let Some(Reverse((stored, window, best))) = heap.pop() {
            if new[best] == 0 {
                continue;
            }
            let now = cost(best, &new);
            if now != stored {
                heap.push(Reverse((now, window, best)));
                continue;
            }
            for &index in &holders[best] {
                if anchor_of[index] == usize::MAX {
                    anchor_of[index] = anchors.len();
                    for &id in &held[index] {
                        new[id] -= 1;
                    }
                }
            }
            anchors.push(windows[best].to_vec());
            hits += costs[best];
        }
        let per_anchor_cost = if filter < ANCHOR_LEN {
            ANCHOR_COST
        } else {
            0.0
        };
        let searchers = passes(&anchors);
        // Past MOST_PASSES, a pass costs as much as all the hits a scan can have: fewer
        // anchors with more hits are chosen first (each pass reads every byte once more).
        let over = searchers.saturating_sub(MOST_PASSES) as f64 * OVER_PASS_COST;
        let cost =
            searchers as f64 * PASS_COST + over + anchors.len() as f64 * per_anchor_cost + hits;
        (cost, anchors, anchor_of)
    };
    let mut best: Option<(f64, Vec<Vec<u8>>, Vec<usize>)> = None;
    for per_anchor in COSTS_PER_ANCHOR {
        let chosen = cover(per_anchor);
        if best.as_ref().is_none_or(|best| chosen.0 < best.0) {
            best = Some(chosen);
        }
    }
    best.map(|(_, anchors, anchor_of)| (anchors, anchor_of))
        .unwrap_or_default()
}

/// How many searchers `anchors` need when grouped by `group` (of their lengths), at most
/// [`ANCHORS_PER_SEARCHER`] each.
fn searchers_needed(anchors: &[Vec<u8>], group: impl Fn(usize) -> usize) -> usize {
    let mut lengths: Vec<usize> = anchors.iter().map(|anchor| group(anchor.len())).collect();
    lengths.sort_unstable();
    (lengths.chunk_by(|a, b| a == b))
        .map(|same| same.len().div_ceil(ANCHORS_PER_SEARCHER))
        .sum()
}

/// Finds every occurrence of every pattern: Teddy searches for the anchors, and a check of
/// the patterns anchored on each hit.
#[derive(Debug)]
pub(super) struct Anchored {
    /// The searchers, each over anchors of one length.
    searchers: Vec<Pass>,
    /// For each searcher, the index of its first anchor (its anchors are consecutive).
    first_anchor: Vec<usize>,
    /// For each anchor: (pattern index, offset of the anchor in the pattern).
    verify: Vec<Vec<(usize, usize)>>,
    /// The anchors, in the order the searchers were given them (for the counts of the tests).
    #[cfg(test)]
    anchors: Vec<Vec<u8>>,
    /// For each searcher, Teddy's buckets (8 Slim, 16 Fat; 0 for memmem).
    #[cfg(test)]
    buckets: Vec<usize>,
}

/// One pass over the text for the anchors of one searcher.
#[derive(Debug)]
enum Pass {
    /// Teddy, for several anchors.
    Teddy(Searcher),
    /// memchr's `memmem`, for one anchor alone ("OOM", the one 3-byte marker, when every
    /// occurrence is wanted): about twice as fast as Teddy over one anchor.
    One(memchr::memmem::Finder<'static>),
}

/// How anchors of different lengths are grouped into Teddy searchers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grouping {
    /// One length per searcher: at most one anchor of a searcher starts at any position, so
    /// every occurrence of every pattern is found ([`Anchored::scan`]).
    OneLength,
    /// Anchors of three bytes or more share searchers: one pass over the text instead of one
    /// per length (Teddy then tests 3-byte prefixes; with Fat Teddy's 16 buckets few positions
    /// pass). Teddy reports one anchor per position: an anchor that another one of its
    /// searcher starts with is verified with it. For [`Anchored::finds_any`] only.
    Mixed,
}

impl Anchored {
    /// `None` when a pattern is empty or Teddy is unavailable (no SIMD on this CPU).
    #[cfg(test)]
    pub(super) fn new(patterns: &[&str]) -> Option<Anchored> {
        Anchored::build(patterns, None, Grouping::OneLength)
    }

    /// An [`Anchored`] that finds only the patterns whose indices are in `held` (every
    /// occurrence, reported with its index in `patterns`). `None` when a pattern is empty or Teddy is unavailable.
    pub(super) fn holding(patterns: &[&str], held: &[usize]) -> Option<Anchored> {
        Anchored::build(patterns, Some(held), Grouping::OneLength)
    }

    /// An [`Anchored`] for [`Anchored::finds_any`] alone, with fewer passes over the text:
    /// anchors of three bytes or more share searchers. `None` when a pattern is empty or Teddy is unavailable.
    pub(super) fn for_any(patterns: &[&str]) -> Option<Anchored> {
        Anchored::build(patterns, None, Grouping::Mixed)
    }

    fn build(patterns: &[&str], held: Option<&[usize]>, grouping: Grouping) -> Option<Anchored> {
        // The patterns searched for, by their index in `patterns`.
        let held: Vec<usize> = match held {
            Some(held) => held.to_vec(),
            None => (0..patterns.len()).collect(),
        };
        let searched: Vec<&str> = held
            .iter()
            .map(|&index| patterns.get(index).copied())
            .collect::<Option<_>>()?;
        if searched.iter().any(|pattern| pattern.is_empty()) {
            return None;
        }
        // The Teddy mask length of a searcher is its shortest anchor's: a group of 1- or
        // 2-byte anchors would pass most positions, so those keep their own searchers.
        let group = |length: usize| match grouping {
            Grouping::OneLength => length,
            Grouping::Mixed => length.min(3),
        };
        let frequencies = byte_frequencies();
        // What Teddy tests at every position: the first bytes of the shortest anchor of the
        // searcher (3 when a 3-byte marker, "OOM", shares the search for any marker).
        let filter = match grouping {
            Grouping::OneLength => ANCHOR_LEN,
            Grouping::Mixed => (searched.iter())
                .map(|pattern| pattern.len().min(ANCHOR_LEN))
                .filter(|&length| length >= 3)
                .min()
                .unwrap_or(ANCHOR_LEN),
        };
        let passes = |anchors: &[Vec<u8>]| searchers_needed(anchors, group);
        let (mut anchors, anchor_of) = choose_anchors(&searched, &frequencies, filter, passes);
        let mut verify = vec![Vec::new(); anchors.len()];
        for ((pattern, &index), &anchor) in searched.iter().zip(&held).zip(&anchor_of) {
            let offset = memchr::memmem::find(pattern.as_bytes(), anchors.get(anchor)?)?;
            verify[anchor].push((index, offset));
        }
        // Anchors of one length per searcher: then at most one anchor of a searcher starts at
        // any position, and Teddy (leftmost-first) reports it. (Mixed: see below.)
        let mut order: Vec<usize> = (0..anchors.len()).collect();
        order.sort_by_key(|&anchor| (group(anchors[anchor].len()), anchors[anchor].len()));
        anchors = order
            .iter()
            .map(|&anchor| anchors[anchor].clone())
            .collect();
        verify = order.iter().map(|&anchor| verify[anchor].clone()).collect();
        let mut searchers = Vec::new();
        let mut first_anchor = Vec::new();
        #[cfg(test)]
        let mut teddy_buckets = Vec::new();
        let mut first = 0;
        while first < anchors.len() {
            let length = group(anchors[first].len());
            let end = (first..anchors.len())
                .take(ANCHORS_PER_SEARCHER)
                .take_while(|&anchor| group(anchors[anchor].len()) == length)
                .last()
                .map_or(first + 1, |last| last + 1);
            if end - first == 1 {
                let finder = memchr::memmem::Finder::new(&anchors[first]).into_owned();
                searchers.push(Pass::One(finder));
                first_anchor.push(first);
                #[cfg(test)]
                teddy_buckets.push(0);
                first = end;
                continue;
            }
            // Fat Teddy (16 buckets, half the bytes per step) for a failure search over many
            // anchors: fewer anchors share a bucket, so far fewer positions pass its test and
            // need checking (measured on the generated serving log, scripts/gen_serving_log.py:
            // the failure search over 1 GiB takes 0.75x the time of two Slim passes, one per
            // anchor length; one Slim pass over 3-byte prefixes was no faster than two).
            let fat = grouping == Grouping::Mixed && end - first > FAT_ABOVE;
            let buckets = if fat || end - first > 32 { 16 } else { 8 };
            let order = bucket_order(&anchors[first..end], &frequencies, buckets);
            let ordered: Vec<Vec<u8>> = order
                .iter()
                .map(|&at| anchors[first + at].clone())
                .collect();
            let checks: Vec<Vec<(usize, usize)>> =
                order.iter().map(|&at| verify[first + at].clone()).collect();
            anchors.splice(first..end, ordered);
            verify.splice(first..end, checks);
            if grouping == Grouping::Mixed {
                // Two anchors of a searcher start at one position only when one starts with
                // the other; Teddy then reports one of them: its check covers both.
                let group = &anchors[first..end];
                let extra: Vec<Vec<(usize, usize)>> = (0..group.len())
                    .map(|at| {
                        (0..group.len())
                            .filter(|&other| other != at)
                            .filter(|&other| {
                                group[at].starts_with(&group[other])
                                    || group[other].starts_with(&group[at])
                            })
                            .flat_map(|other| verify[first + other].clone())
                            .collect()
                    })
                    .collect();
                for (at, extra) in extra.into_iter().enumerate() {
                    verify[first + at].extend(extra);
                }
            }
            let searcher = Config::new()
                .only_teddy_fat(fat.then_some(true))
                .match_kind(MatchKind::LeftmostFirst)
                .builder()
                .extend(&anchors[first..end])
                .build()?;
            searchers.push(Pass::Teddy(searcher));
            first_anchor.push(first);
            #[cfg(test)]
            teddy_buckets.push(buckets);
            first = end;
        }
        Some(Anchored {
            searchers,
            first_anchor,
            verify,
            #[cfg(test)]
            anchors,
            #[cfg(test)]
            buckets: teddy_buckets,
        })
    }

    /// The Teddy searchers (more than one when the markers need more anchors than one takes).
    #[cfg(test)]
    pub(super) fn searchers(&self) -> usize {
        self.searchers.len()
    }

    /// The anchors searched for.
    #[cfg(test)]
    pub(super) fn anchors(&self) -> usize {
        self.verify.len()
    }

    /// The markers checked at the hits (each once, for an [`Anchored::holding`]).
    #[cfg(test)]
    pub(super) fn markers(&self) -> usize {
        self.verify.iter().map(Vec::len).sum()
    }

    /// How many times the anchors occur in `hay` (each a stop of the search and a check of
    /// the markers anchored there), and how many markers the checks find: what a scan of
    /// `hay` costs beyond the SIMD pass, counted rather than timed.
    #[cfg(test)]
    pub(super) fn count_hits(&self, patterns: &[&str], hay: &[u8]) -> (usize, usize) {
        let by_anchor = self.hits_by_anchor(patterns, hay);
        let hits = by_anchor.iter().map(|anchor| anchor.1).sum();
        (hits, by_anchor.iter().map(|anchor| anchor.2).sum())
    }

    /// [`Anchored::count_hits`] per anchor: (the anchor, its hits, the markers found at them,
    /// the markers anchored on it), the most frequent first.
    #[cfg(test)]
    pub(super) fn hits_by_anchor<'p>(
        &self,
        patterns: &[&'p str],
        hay: &[u8],
    ) -> Vec<(String, usize, usize, Vec<&'p str>)> {
        let mut counts = vec![(0, 0); self.verify.len()];
        let mut found = Vec::new();
        for which in 0..self.searchers.len() {
            let mut at = 0;
            while let Some(hit) = self.next_hit(which, hay, at) {
                found.clear();
                self.verify(patterns, hay, hit, &mut found);
                counts[hit.1].0 += 1;
                counts[hit.1].1 += found.len();
                at = hit.0 + 1;
            }
        }
        let mut by_anchor: Vec<_> = (self.verify.iter().zip(counts))
            .map(|(checks, (hits, found))| {
                let markers: Vec<&str> = checks.iter().map(|&(index, _)| patterns[index]).collect();
                let anchor = checks.first().map_or(String::new(), |&(index, offset)| {
                    let pattern = patterns[index];
                    let end = (offset + ANCHOR_LEN).min(pattern.len());
                    String::from_utf8_lossy(&pattern.as_bytes()[offset..end]).into_owned()
                });
                (anchor, hits, found, markers)
            })
            .collect();
        by_anchor.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        by_anchor
    }

    /// The positions of `hay` that Teddy's filter passes to its exact check, per bucket of each
    /// Teddy searcher (memmem passes have none): what a search of `hay` costs beyond Teddy's
    /// fixed cost per byte and beyond the anchor hits ([`Anchored::hits_by_anchor`]), counted
    /// rather than timed. Teddy tests at each position, for each bucket, whether each of the
    /// first `mask` bytes there (`mask`: the shortest anchor of the searcher, at most 4) has
    /// both halves (nibbles) among the halves of that byte in some anchor of the bucket; a
    /// position passing for a bucket is checked against each anchor of the bucket. The buckets
    /// are those aho-corasick's Teddy gives (packed/teddy/generic.rs, `Teddy::new`, 1.1):
    /// anchors whose first `mask` bytes have the same low nibbles share one, the others go to
    /// bucket `buckets - 1 - i % buckets` for the `i`th anchor. Returns, per bucket with
    /// anchors: (the searcher, its anchors (indices), the positions passed).
    #[cfg(test)]
    pub(super) fn teddy_candidates(&self, hay: &[u8]) -> Vec<(usize, Vec<usize>, usize)> {
        use std::collections::HashMap;
        let mut out = Vec::new();
        for (which, &buckets) in self.buckets.iter().enumerate() {
            let first = self.first_anchor[which];
            let end = (self.first_anchor.get(which + 1).copied()).unwrap_or(self.anchors.len());
            let anchors = &self.anchors[first..end];
            let mask = anchors
                .iter()
                .map(Vec::len)
                .min()
                .unwrap_or(0)
                .min(ANCHOR_LEN);
            if buckets == 0 || mask == 0 {
                continue;
            }
            let mut bucket_of = Vec::with_capacity(anchors.len());
            let mut by_low: HashMap<Vec<u8>, usize> = HashMap::new();
            for (id, anchor) in anchors.iter().enumerate() {
                let low: Vec<u8> = anchor[..mask].iter().map(|byte| byte & 15).collect();
                bucket_of.push(*by_low.entry(low).or_insert(buckets - 1 - id % buckets));
            }
            // Per byte of the mask and nibble: the buckets admitting it (bit sets).
            let mut low = vec![[0u16; 16]; mask];
            let mut high = vec![[0u16; 16]; mask];
            for (anchor, &bucket) in anchors.iter().zip(&bucket_of) {
                for (at, &byte) in anchor[..mask].iter().enumerate() {
                    low[at][usize::from(byte & 15)] |= 1 << bucket;
                    high[at][usize::from(byte >> 4)] |= 1 << bucket;
                }
            }
            let mut passed = vec![0usize; buckets];
            for position in 0..(hay.len() + 1).saturating_sub(mask) {
                let mut set = u16::MAX;
                for at in 0..mask {
                    let byte = hay[position + at];
                    set &= low[at][usize::from(byte & 15)] & high[at][usize::from(byte >> 4)];
                    if set == 0 {
                        break;
                    }
                }
                while set != 0 {
                    passed[set.trailing_zeros() as usize] += 1;
                    set &= set - 1;
                }
            }
            for (bucket, passed) in passed.into_iter().enumerate() {
                let members: Vec<usize> = (0..anchors.len())
                    .filter(|&id| bucket_of[id] == bucket)
                    .map(|id| first + id)
                    .collect();
                if !members.is_empty() {
                    out.push((which, members, passed));
                }
            }
        }
        out
    }

    /// The anchor `index` (its bytes, as text) and the markers anchored on it.
    #[cfg(test)]
    pub(super) fn anchor<'p>(&self, patterns: &[&'p str], index: usize) -> (String, Vec<&'p str>) {
        let anchor = self
            .anchors
            .get(index)
            .map(|anchor| String::from_utf8_lossy(anchor));
        let markers = (self.verify.get(index).into_iter().flatten())
            .map(|&(pattern, _)| patterns[pattern])
            .collect();
        (anchor.unwrap_or_default().into_owned(), markers)
    }

    /// The next hit of searcher `which` at or after `at`: (position, anchor).
    fn next_hit(&self, which: usize, hay: &[u8], at: usize) -> Option<(usize, usize)> {
        if at >= hay.len() {
            return None;
        }
        match &self.searchers[which] {
            Pass::Teddy(searcher) => {
                searcher
                    .find_in(hay, Span::from(at..hay.len()))
                    .map(|found| {
                        (
                            found.start(),
                            self.first_anchor[which] + found.pattern().as_usize(),
                        )
                    })
            }
            Pass::One(finder) => finder
                .find(&hay[at..])
                .map(|found| (at + found, self.first_anchor[which])),
        }
    }

    /// Appends (start, pattern) for the patterns anchored on `anchor` that occur at the hit.
    pub(super) fn verify(
        &self,
        patterns: &[&str],
        hay: &[u8],
        (hit, anchor): (usize, usize),
        out: &mut Vec<(usize, usize)>,
    ) {
        let Some(candidates) = self.verify.get(anchor) else {
            return;
        };
        for &(pattern, anchor_offset) in candidates {
            let Some(start) = hit.checked_sub(anchor_offset) else {
                continue;
            };
            let text = patterns[pattern].as_bytes();
            // First and last bytes reject most candidates without a `memcmp` call.
            let end = start + text.len();
            if end <= hay.len()
                && hay[start] == text[0]
                && hay[end - 1] == text[text.len() - 1]
                && &hay[start..end] == text
            {
                out.push((start, pattern));
            }
        }
    }

    /// Appends (start, pattern) for every occurrence of every pattern in `part`, ordered as
    /// aho-corasick's overlapping search orders them (by end, longer first at the same end).
    pub(super) fn scan(&self, patterns: &[&str], part: &[u8], out: &mut Vec<(usize, usize)>) {
        let first = out.len();
        let mut hits = self.hits();
        hits.take_until(self, patterns, part, part.len(), out);
        sort_matches(patterns, &mut out[first..]);
    }

    /// Whether any pattern occurs in `hay` (stops at the first).
    #[cfg(test)]
    pub(super) fn finds_any(&self, patterns: &[&str], hay: &[u8]) -> bool {
        self.finds_any_where(patterns, hay, |_, _| true)
    }

    /// Whether any pattern occurs in `hay` at a place `keep(start, pattern)` accepts (stops at
    /// the first accepted).
    pub(super) fn finds_any_where(
        &self,
        patterns: &[&str],
        hay: &[u8],
        keep: impl Fn(usize, usize) -> bool,
    ) -> bool {
        let mut hits = self.hits();
        let mut found = Vec::new();
        while let Some((which, hit)) = hits.next(self, hay) {
            self.verify(patterns, hay, hit, &mut found);
            if found.drain(..).any(|(start, pattern)| keep(start, pattern)) {
                return true;
            }
            hits.ahead[which] = Ahead::Unknown { from: hit.0 + 1 };
        }
        false
    }

    /// A cursor over the hits of a block, from its start.
    pub(super) fn hits(&self) -> HitCursor {
        HitCursor {
            ahead: vec![Ahead::Unknown { from: 0 }; self.searchers.len()],
        }
    }
}

/// What a searcher has found ahead of a [`HitCursor`].
#[derive(Debug, Clone, Copy)]
enum Ahead {
    /// Not searched yet: the next search starts at `from`.
    Unknown { from: usize },
    /// The next hit: (position, anchor).
    Hit((usize, usize)),
    /// No hit up to the end of the block.
    Done,
}

/// Where the hits of an [`Anchored`] search of one block are: hits are searched for as
/// they are needed, so that a stretch the caller skips ([`HitCursor::skip_to`]) is never
/// searched.
#[derive(Debug)]
pub(super) struct HitCursor {
    /// For each searcher.
    ahead: Vec<Ahead>,
}

impl HitCursor {
    /// Where the next hit is.
    pub(super) fn peek(&mut self, anchored: &Anchored, hay: &[u8]) -> Option<usize> {
        self.next(anchored, hay).map(|(_, (hit, _))| hit)
    }

    /// The searcher with the next hit, and the hit.
    fn next(&mut self, anchored: &Anchored, hay: &[u8]) -> Option<(usize, (usize, usize))> {
        let mut best: Option<(usize, (usize, usize))> = None;
        for (which, ahead) in self.ahead.iter_mut().enumerate() {
            if let Ahead::Unknown { from } = *ahead {
                *ahead = match anchored.next_hit(which, hay, from) {
                    Some(hit) => Ahead::Hit(hit),
                    None => Ahead::Done,
                };
            }
            if let Ahead::Hit(hit) = *ahead {
                if best.is_none_or(|(_, (position, _))| hit.0 < position) {
                    best = Some((which, hit));
                }
            }
        }
        best
    }

    /// Verifies the hits before `end` (appending the matches to `out`, unsorted) and moves
    /// past them.
    pub(super) fn take_until(
        &mut self,
        anchored: &Anchored,
        patterns: &[&str],
        hay: &[u8],
        end: usize,
        out: &mut Vec<(usize, usize)>,
    ) {
        while let Some((which, hit)) = self.next(anchored, hay) {
            if hit.0 >= end {
                break;
            }
            anchored.verify(patterns, hay, hit, out);
            // Anchors may overlap each other in the text: resume one byte on.
            self.ahead[which] = Ahead::Unknown { from: hit.0 + 1 };
        }
    }

    /// Forgets the hits before `position` (text known without searching it).
    pub(super) fn skip_to(&mut self, position: usize) {
        for ahead in &mut self.ahead {
            match *ahead {
                Ahead::Unknown { from } if from < position => {
                    *ahead = Ahead::Unknown { from: position };
                }
                Ahead::Hit((hit, _)) if hit < position => {
                    *ahead = Ahead::Unknown { from: position };
                }
                _ => {}
            }
        }
    }
}

/// The windows of `length` bytes that [`TYPICAL_LOG`] holds more than once (the repeated
/// pieces of busy lines: borders, runs of one byte, common words), each once, with their
/// expected occurrences per MiB of a long log of that kind (as [`choose_anchors`] counts them).
/// A piece seen once is left to the byte-frequency estimate: with them, the count took twice
/// the time of building the scanners for a short text (4,597 windows of 4 bytes, against
/// 1,573 seen more than once).
fn typical_windows(length: usize) -> Vec<([u8; ANCHOR_LEN], f64)> {
    let length = length.clamp(1, ANCHOR_LEN);
    let per_occurrence = 10.0 * (1u64 << 20) as f64 / TYPICAL_LOG.len() as f64;
    let mut number: WindowMap<usize> = WindowMap::default();
    let mut windows: Vec<([u8; ANCHOR_LEN], f64)> = Vec::new();
    for window in TYPICAL_LOG.as_bytes().windows(length) {
        let id = *number.entry(window_key(window)).or_insert_with(|| {
            let mut bytes = [0u8; ANCHOR_LEN];
            bytes[..length].copy_from_slice(window);
            windows.push((bytes, 0.0));
            windows.len() - 1
        });
        windows[id].1 += per_occurrence;
    }
    windows.retain(|&(_, weight)| weight > 1.5 * per_occurrence);
    windows
}

/// The order to hand `anchors` to one Teddy searcher in so that similar anchors share a
/// bucket, and what Teddy tests at each position lets few positions through.
///
/// How Teddy buckets its patterns (BurntSushi/aho-corasick 1.1 `src/packed/teddy/generic.rs`,
/// `Teddy::new`): it tests the first `mask` bytes at each position (`mask`: the shortest
/// pattern, at most 4); patterns whose first `mask` bytes have the same low nibbles share a
/// bucket, the bucket of the first of them; the first of each such group, the `i`th pattern
/// given, goes to bucket `buckets - 1 - i % buckets` (`buckets`: 8 Slim, 16 Fat). A position
/// passes a bucket's test when, for each of the `mask` bytes there, both halves (nibbles) of
/// the byte are among the halves of that byte in some pattern of the bucket: a bucket of
/// unlike anchors (`lm==`, `=137`, `(137`, `y_wi`) passes bytes none of them holds at that
/// place (`=` is `3D`: the `3` of a digit and the `D` of `m` or `=`).
///
/// The pass rate of a bucket is estimated twice, and the greater taken: from the byte
/// frequencies ([`byte_frequencies`], each byte independent of the next), and by counting the
/// windows of [`TYPICAL_LOG`] that pass it. The first alone misses runs of one byte (the
/// `|====|` borders of a memory summary, dashes, spaces), which pass a bucket at every
/// position of the run once it admits the byte at each place, though the product of the
/// byte's frequency over four places is tiny. Greedy: the groups of anchors that share their
/// low nibbles (one bucket each, as Teddy makes them), the most frequent first, each into the
/// bucket with room whose estimated pass rate grows least. The first anchor of each group is
/// given first (its position picks the bucket), the others after every group's first.
fn bucket_order(anchors: &[Vec<u8>], frequencies: &[f64; 256], buckets: usize) -> Vec<usize> {
    const ALL: u16 = u16::MAX;
    let count = anchors.len();
    let length = anchors
        .iter()
        .map(Vec::len)
        .min()
        .unwrap_or(0)
        .min(ANCHOR_LEN);
    if count == 0 || length == 0 {
        return (0..count).collect();
    }
    // The groups Teddy makes: anchors of the same low nibbles, in the order given.
    let low_key = |anchor: &[u8]| -> u32 {
        (anchor[..length].iter()).fold(0, |key, &byte| key << 4 | u32::from(byte & 15))
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of_key: std::collections::HashMap<u32, usize> = Default::default();
    for (id, anchor) in anchors.iter().enumerate() {
        let group = *group_of_key.entry(low_key(anchor)).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[group].push(id);
    }
    // The first anchor of each group takes positions 0.. (its position picks the bucket).
    let heads = groups.len();
    let mut room = vec![0usize; buckets];
    for id in 0..heads {
        room[buckets - 1 - id % buckets] += 1;
    }
    // Per bucket and byte of the anchors: the set of low and of high nibbles (bit sets).
    let mut low = vec![vec![0u16; length]; buckets];
    let mut high = vec![vec![0u16; length]; buckets];
    // Per byte of the anchors and nibble: the set of buckets admitting it (Teddy's tables).
    let mut low_buckets = vec![[0u16; 16]; length];
    let mut high_buckets = vec![[0u16; 16]; length];
    // How often a byte passes a bucket's test at one offset.
    let passes = |low: u16, high: u16| -> f64 {
        let mut sum = 0.0;
        for h in (0..16).filter(|h| high >> h & 1 == 1) {
            for l in (0..16).filter(|l| low >> l & 1 == 1) {
                sum += frequencies[h << 4 | l];
            }
        }
        sum
    };
    let rate = |low: &[u16], high: &[u16]| -> f64 {
        let product: f64 = low.iter().zip(high).map(|(&l, &h)| passes(l, h)).product();
        product * (1u64 << 20) as f64
    };
    let windows = typical_windows(length);
    // Per bucket: the estimate from the byte frequencies, and the windows counted.
    let mut rates = vec![0.0f64; buckets];
    let mut counted = vec![0.0f64; buckets];
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); buckets];
    let group_hits = |group: &[usize]| -> f64 {
        (group.iter())
            .map(|&id| expected_hits(&anchors[id], frequencies))
            .sum()
    };
    let mut by_frequency: Vec<usize> = (0..heads).collect();
    by_frequency.sort_by(|&a, &b| group_hits(&groups[b]).total_cmp(&group_hits(&groups[a])));
    let mut growth_counted = vec![0.0f64; buckets];
    for &group in &by_frequency {
        // The nibbles the group adds at each byte: one low nibble, its high nibbles.
        let first = &anchors[groups[group][0]];
        let added_low: Vec<u8> = first[..length].iter().map(|byte| byte & 15).collect();
        let mut added_high = vec![0u16; length];
        for &id in &groups[group] {
            for (at, &byte) in anchors[id][..length].iter().enumerate() {
                added_high[at] |= 1 << (byte >> 4);
            }
        }
        // The windows of the sample that the group would newly let through, per bucket.
        growth_counted.fill(0.0);
        for (window, weight) in &windows {
            let (mut now, mut with) = (ALL, ALL);
            for at in 0..length {
                let (l, h) = (usize::from(window[at] & 15), usize::from(window[at] >> 4));
                let (in_low, in_high) = (low_buckets[at][l], high_buckets[at][h]);
                now &= in_low & in_high;
                let in_low = if added_low[at] == window[at] & 15 {
                    ALL
                } else {
                    in_low
                };
                let in_high = match added_high[at] >> h & 1 {
                    1 => ALL,
                    _ => in_high,
                };
                with &= in_low & in_high;
                if with == 0 {
                    break;
                }
            }
            let mut new = with & !now;
            while new != 0 {
                let bucket = new.trailing_zeros() as usize;
                if bucket < buckets {
                    growth_counted[bucket] += weight;
                }
                new &= new - 1;
            }
        }
        let mut best: Option<(f64, usize)> = None;
        for bucket in (0..buckets).filter(|&bucket| members[bucket].len() < room[bucket]) {
            let (mut l, mut h) = (low[bucket].clone(), high[bucket].clone());
            for at in 0..length {
                l[at] |= 1 << added_low[at];
                h[at] |= added_high[at];
            }
            let before = rates[bucket].max(counted[bucket]);
            let after = rate(&l, &h).max(counted[bucket] + growth_counted[bucket]);
            let growth = after - before;
            if best.is_none_or(|(least, _)| growth < least) {
                best = Some((growth, bucket));
            }
        }
        let Some((_, bucket)) = best else {
            break;
        };
        for at in 0..length {
            low[bucket][at] |= 1 << added_low[at];
            high[bucket][at] |= added_high[at];
            low_buckets[at][usize::from(added_low[at])] |= 1 << bucket;
            for h in (0..16).filter(|h| added_high[at] >> h & 1 == 1) {
                high_buckets[at][h] |= 1 << bucket;
            }
        }
        rates[bucket] = rate(&low[bucket], &high[bucket]);
        counted[bucket] += growth_counted[bucket];
        members[bucket].push(group);
    }
    // The heads at positions 0.., each where Teddy gives its bucket; the rest after them.
    let mut taken = vec![0usize; buckets];
    let mut order: Vec<usize> = (0..heads)
        .filter_map(|id| {
            let bucket = buckets - 1 - id % buckets;
            taken[bucket] += 1;
            members[bucket]
                .get(taken[bucket] - 1)
                .map(|&group| groups[group][0])
        })
        .collect();
    order.extend(groups.iter().flat_map(|group| group[1..].iter().copied()));
    // Every anchor once, whatever happened above.
    let mut seen = vec![false; count];
    order.retain(|&id| !std::mem::replace(&mut seen[id], true));
    order.extend((0..count).filter(|&id| !seen[id]));
    order
}

/// Puts the matches of one line in the order of aho-corasick's overlapping search (by end,
/// longer first at the same end): the order the engine-log parsers see markers in.
pub(super) fn sort_matches(patterns: &[&str], matches: &mut [(usize, usize)]) {
    let key = |&(start, pattern): &(usize, usize)| {
        let length = patterns[pattern].len();
        (start + length, std::cmp::Reverse(length), pattern)
    };
    // Usually one match per line, already in order.
    if !matches.is_sorted_by_key(key) {
        matches.sort_by_key(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_gets_an_anchor_it_holds() {
        let patterns = ["out of memory", "Out of memory", "abc", "POST /v1/", "xyzw"];
        let (anchors, anchor_of) =
            choose_anchors(&patterns, &byte_frequencies(), ANCHOR_LEN, |_| 1);
        for (pattern, &anchor) in patterns.iter().zip(&anchor_of) {
            let anchor = &anchors[anchor];
            assert!(anchor.len() == ANCHOR_LEN.min(pattern.len()), "{anchor:?}");
            assert!(memchr::memmem::find(pattern.as_bytes(), anchor).is_some());
        }
        // Shared where it costs little: both "…t of memory" markers share one anchor.
        assert_eq!(anchor_of[0], anchor_of[1]);
    }

    #[test]
    fn rare_bytes_make_cheap_anchors() {
        let frequencies = byte_frequencies();
        assert!(expected_hits(b"QZXJ", &frequencies) < expected_hits(b"romp", &frequencies));
        let (anchors, _) = choose_anchors(&["Received request "], &frequencies, ANCHOR_LEN, |_| 1);
        assert_eq!(anchors, [b"Rece".to_vec()]);
        // Common in typical text though made of rarer bytes: an access line's "HTTP".
        let (anchors, _) = choose_anchors(&["HTTP/1.1\" 503"], &frequencies, ANCHOR_LEN, |_| 1);
        assert!(!anchors.contains(&b"HTTP".to_vec()), "{anchors:?}");
    }

    #[test]
    fn a_search_for_any_takes_one_pass_over_three_and_four_byte_anchors() {
        // "abcd" anchors the six longer patterns; "abc" is its own anchor and starts it.
        let patterns = [
            "abc", "abcd1", "abcd2", "abcd3", "abcd4", "abcd5", "abcd6", "xy",
        ];
        let (anchors, _) = choose_anchors(&patterns, &byte_frequencies(), ANCHOR_LEN, |_| 1);
        assert!(anchors.contains(&b"abcd".to_vec()), "{anchors:?}");
        let (Some(every), Some(any)) = (Anchored::new(&patterns), Anchored::for_any(&patterns))
        else {
            return; // no SIMD Teddy on this CPU
        };
        // Every occurrence: one searcher per anchor length (2, 3, 4); any: 2, and 3 with 4.
        assert_eq!((every.searchers(), any.searchers()), (3, 2));
        let finds = |text: &str| any.finds_any(&patterns, text.as_bytes());
        // Where "abcd" occurs but none of its patterns does, "abc" still counts, whichever
        // anchor Teddy reports there.
        assert!(finds("--abcdX--"));
        assert!(finds("--abcd4--"));
        assert!(finds("abc"));
        assert!(finds("x y xy"));
        assert!(!finds("ab cd, a bcd, x y"));
    }

    #[test]
    fn an_anchor_alone_in_its_length_is_searched_for_with_memmem() {
        // "OOM" is the only 3-byte anchor: its pass is memmem, the others' Teddy; a search
        // for any marker takes it into the Teddy pass.
        let patterns = ["OOM", "OOMKilled", "out of memory", "Out of memory", "xyzw"];
        let (Some(every), Some(any)) = (Anchored::new(&patterns), Anchored::for_any(&patterns))
        else {
            return; // no SIMD Teddy on this CPU
        };
        let passes = |anchored: &Anchored| {
            (anchored.searchers.iter())
                .map(|pass| matches!(pass, Pass::One(_)))
                .collect::<Vec<_>>()
        };
        assert_eq!(passes(&every), [true, false]);
        assert_eq!(passes(&any), [false]);
        let text = "OOMOOMKilled: CUDA out of memory, OOM; Out of memory xyzwOOM";
        let automaton = aho_corasick::AhoCorasick::new(patterns).unwrap();
        let expected: Vec<(usize, usize)> = automaton
            .find_overlapping_iter(text)
            .map(|found| (found.start(), found.pattern().as_usize()))
            .collect();
        let mut found = Vec::new();
        every.scan(&patterns, text.as_bytes(), &mut found);
        assert_eq!(found, expected);
        for text in ["a CUDA OOM", "OOM", "out of memory", "xyzw"] {
            assert!(any.finds_any(&patterns, text.as_bytes()), "{text}");
        }
        for text in ["", "OO M", "out of mem", "xyz w", "Out Of Memory"] {
            assert!(!any.finds_any(&patterns, text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn a_searcher_testing_three_bytes_takes_anchors_of_rare_starts() {
        // Teddy over "OOM" and 4-byte anchors tests 3-byte starts: `ion ` of `generation
        // throughput` would pass it on every `…ion …` of a log though rare whole.
        let count = |piece: &[u8]| {
            (TYPICAL_LOG.as_bytes().windows(piece.len()))
                .filter(|window| *window == piece)
                .count()
        };
        let patterns = ["OOM", "generation throughput was low"];
        let (anchors, anchor_of) = choose_anchors(&patterns, &byte_frequencies(), 3, |_| 1);
        let anchor = &anchors[anchor_of[1]];
        assert!(
            count(&anchor[..3]) <= 1,
            "{:?}",
            String::from_utf8_lossy(anchor)
        );
        assert!(count(b"ion") > 10 && count(b"thr") > 1);
    }

    #[test]
    fn a_run_of_one_byte_passes_no_bucket_of_unlike_anchors() {
        // The 64 anchors of one searcher of the log scanner (2026-12-03). Each is rare, but
        // together they hold the nibbles of `=` (3D) at every place (the `D` of `m`, `-`, `]`,
        // `=`; the `3` of digits): packed by byte frequencies alone, one bucket (`lm==`,
        // `=137`, `(137`, `y_wi`) let every position of a `|====|` border through.
        let patterns = [
            "ive/", "d_al", "[ctr", "yolo", "Mode", "l_nu", "d2.d", "ch [", "lm==", "llm-", "ate(",
            "vide", "och:", "rigg", "d2.u", "ng l", "ing/", "dvra", "Batc", "quir", "m-ki", "loc]",
            "Dist", "ama[", "=137", "ploy", "Args", "Outp", "_gpu", "king", "/it]", "; ac", "gqui",
            "Conn", "Ultr", "woul", "back", "-of-", "Sys:", "h.py", "(137", "xlla", "hub.", "xitc",
            "TTP ", "_inf", "Dyna", "MMPo", "MMag", "Comm", "Cann", "Webs", "f-ck", " OOM", "CTra",
            "tOfM", "y_wi", "swif", "aph(", "xamp", "MMPr", "[Par", "MMSe", "Queu",
        ];
        let Some(anchored) = Anchored::new(&patterns) else {
            return; // no SIMD Teddy on this CPU
        };
        let border = format!("|{}|\n", "=".repeat(75)).repeat(40);
        let passed: usize = (anchored.teddy_candidates(border.as_bytes()).iter())
            .map(|bucket| bucket.2)
            .sum();
        assert!(passed * 100 < border.len(), "{passed} of {}", border.len());
        // Every occurrence is still found.
        let text = format!("{border} lm== =137 (137 y_wi Queu");
        let automaton = aho_corasick::AhoCorasick::new(patterns).unwrap();
        let expected: Vec<(usize, usize)> = automaton
            .find_overlapping_iter(&text)
            .map(|found| (found.start(), found.pattern().as_usize()))
            .collect();
        let mut found = Vec::new();
        anchored.scan(&patterns, text.as_bytes(), &mut found);
        assert_eq!(found, expected);
    }

    #[test]
    fn anchors_sharing_low_nibbles_share_the_bucket_planned() {
        // `OOM!` and `oom!` (and `Oom!`) have the same low nibbles: Teddy puts them in one
        // bucket, that of the first given; the order keeps each group's first ahead of it.
        let mut patterns: Vec<String> = ["OOM!", "oom!", "Oom!"].map(String::from).to_vec();
        for n in 0..40u8 {
            // Distinct low nibbles: `0`..`?` are 30..3F.
            patterns.push(format!(
                "Z{}{}k",
                char::from(b'0' + n % 16),
                char::from(b'0' + n / 16)
            ));
        }
        let owned: Vec<Vec<u8>> = patterns.iter().map(|p| p.as_bytes().to_vec()).collect();
        let order = bucket_order(&owned, &byte_frequencies(), 16);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..owned.len()).collect::<Vec<_>>());
        let at = |id: usize| order.iter().position(|&o| o == id).unwrap();
        // One of the three comes before every anchor not its own group's first.
        let first = [0, 1, 2].into_iter().map(at).min().unwrap();
        let heads = owned.len() - 2;
        assert!(first < heads, "{order:?}");
        assert!(
            [0, 1, 2]
                .into_iter()
                .map(at)
                .filter(|&p| p >= heads)
                .count()
                == 2
        );
    }

    #[test]
    fn many_patterns_take_several_searchers_and_short_ones_their_own() {
        // 100 patterns with nothing in common need 100 anchors: two searchers, and one
        // more for the anchors of the three-byte patterns.
        let owned: Vec<String> = (0..100u32)
            .map(|n| format!("{}{}{}{}", n % 10, n / 10 % 10, n / 10 % 10, n % 10))
            .chain(["ab!", "<|>"].map(String::from))
            .collect();
        let patterns: Vec<&str> = owned.iter().map(String::as_str).collect();
        let Some(anchored) = Anchored::new(&patterns) else {
            return; // no SIMD Teddy on this CPU
        };
        assert_eq!(anchored.searchers(), 3);
        let text = owned.join(" ");
        let automaton = aho_corasick::AhoCorasick::new(&patterns).unwrap();
        let expected: Vec<(usize, usize)> = automaton
            .find_overlapping_iter(&text)
            .map(|found| (found.start(), found.pattern().as_usize()))
            .collect();
        let mut found = Vec::new();
        anchored.scan(&patterns, text.as_bytes(), &mut found);
        assert_eq!(found, expected);
    }
}
