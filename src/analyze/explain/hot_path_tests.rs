//! What the hot path of a long log holds, counted rather than timed: the markers and anchors
//! of the scanner of a long log's parsed parts (`candidates::log_scanner`) and of the failure
//! search of its middle (`candidates::failure_scan`), and how often their anchors occur in
//! excerpts of busy logs ([`EXCERPTS`]). A change that puts more markers on the hot path, a
//! marker that busy lines hold, or an anchor on a piece of busy lines fails here first, with
//! the marker and the anchor named: raise a budget only with a benchmark figure
//! (scripts/bench_explain.sh) beside the commit.

use super::stream::{feed_with, Tiers};
use super::*;

/// Lines of the five engines of scripts/gen_serving_log.py (vLLM V0 and V1, SGLang, TGI,
/// llama.cpp), none holding a failure.
const VARIED: &[u8] = include_bytes!("../../../tests/fixtures/bench/varied-serving-excerpt.log");

/// Excerpts of busy logs, none holding a failure (tests/fixtures/bench; the README there says
/// how each was made): (name, text). Each stands for lines a long log holds by the million.
const EXCERPTS: &[(&str, &[u8])] = &[
    (
        "varied-serving (vLLM V0 and V1, SGLang, TGI, llama.cpp)",
        VARIED,
    ),
    (
        "vllm-metrics (uvicorn access lines, Avg prompt throughput)",
        include_bytes!("../../../tests/fixtures/bench/vllm-metrics-excerpt.log"),
    ),
    (
        "ollama ([GIN] access lines, sched.go debug lines)",
        include_bytes!("../../../tests/fixtures/bench/ollama-excerpt.log"),
    ),
    (
        "trainer (Trainer, Lightning, DeepSpeed and Megatron step lines)",
        include_bytes!("../../../tests/fixtures/bench/trainer-excerpt.log"),
    ),
    (
        "h200-training (STEP lines, torch.cuda.memory_summary tables)",
        include_bytes!("../../../tests/fixtures/bench/h200-training-excerpt.log"),
    ),
];

/// Per MiB of a text of `length` bytes.
fn per_mib(count: usize, length: usize) -> usize {
    count * (1 << 20) / length.max(1)
}

/// Anchor hits per MiB of `VARIED`: (hits, markers found).
fn hits_per_mib(anchored: &Anchored, patterns: &[&str]) -> (usize, usize) {
    let (hits, found) = anchored.count_hits(patterns, VARIED);
    (per_mib(hits, VARIED.len()), per_mib(found, VARIED.len()))
}

/// The anchors of `anchored` that occur more than `budget` times per MiB of an excerpt
/// without finding a marker there (each a stop of the SIMD pass for nothing), one line each,
/// naming the anchor, its markers and the excerpt.
fn busy_anchors(search: &str, anchored: &Anchored, patterns: &[&str], budget: usize) -> String {
    let mut over = String::new();
    for (name, text) in EXCERPTS {
        for (anchor, hits, found, markers) in anchored.hits_by_anchor(patterns, text) {
            let idle = per_mib(hits.saturating_sub(found), text.len());
            if idle > budget {
                over.push_str(&format!(
                    "\n  {search}: anchor {anchor:?} of {markers:?}: {idle} hits per MiB of \
                     {name} that find no marker"
                ));
            }
        }
    }
    over
}

/// How often each marker of `patterns` occurs per MiB of an excerpt, where more than
/// `budget` times: (excerpt, marker, per MiB, a line holding it). `keep` passes over
/// occurrences that are not the marker's (a counter of past OOMs).
fn busy_markers(
    patterns: &[&str],
    budget: usize,
    keep: impl Fn(&[u8], usize, &str) -> bool,
) -> Vec<(&'static str, String, usize, String)> {
    let Ok(automaton) = AhoCorasick::new(patterns) else {
        return vec![("(no automaton)", String::new(), usize::MAX, String::new())];
    };
    let mut busy = Vec::new();
    for &(name, text) in EXCERPTS {
        let mut counts = vec![(0usize, 0usize); patterns.len()];
        for found in automaton.find_overlapping_iter(text) {
            let pattern = found.pattern().as_usize();
            if keep(text, found.start(), patterns[pattern]) {
                counts[pattern].0 += 1;
                counts[pattern].1 = found.start();
            }
        }
        for (pattern, (count, at)) in counts.into_iter().enumerate() {
            let rate = per_mib(count, text.len());
            if count > 0 && rate > budget {
                let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |newline| newline + 1);
                let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |end| at + end);
                let line = String::from_utf8_lossy(&text[start..end]);
                let line = line.chars().take(160).collect();
                busy.push((name, patterns[pattern].to_string(), rate, line));
            }
        }
    }
    busy
}
#[test]
fn the_log_scanner_holds_every_marker_but_the_reporters_words() {
    let (full, log) = (scanner(), log_scanner());
    assert_eq!(full.patterns, log.patterns, "the same marker indices");
    let (Some(anchored), Some(_)) = (&log.anchored, &full.anchored) else {
        return; // no SIMD Teddy on this CPU: both scan with the automaton
    };
    let mut held = 0;
    for (index, pattern) in log.patterns.iter().enumerate() {
        let reports_only = match index.checked_sub(log.oom_markers) {
            // The reporter's words that other programs held the memory.
            None => crate::parse::oom_text::oom_marker_role(index)
                .is_some_and(|role| !role.in_long_logs()),
            Some(marker) => engine_log::marker_for_reports_only(marker),
        };
        let mut found = Vec::new();
        anchored.scan(&log.patterns, pattern.as_bytes(), &mut found);
        let finds = found.iter().any(|&(_, at)| at == index);
        assert_eq!(finds, !reports_only, "{pattern:?}");
        held += usize::from(finds);
    }
    assert_eq!(held, anchored.markers());
    assert_eq!(
        full.anchored.as_ref().map(Anchored::markers),
        Some(full.patterns.len())
    );
    // The reporter's stage words and an engine named in a sentence are not on the hot path;
    // every OOM marker and the lines of programs (stages, figures, engines, frames) are.
    let marker = |text: &str| {
        let index = engine_log::markers().iter().position(|m| *m == text);
        index.unwrap_or_else(|| panic!("no marker {text:?}"))
    };
    for words in ["training", "inferenc", "vLLM", "comfy"] {
        assert!(
            engine_log::marker_for_reports_only(marker(words)),
            "{words}"
        );
    }
    for line in [
        "Starting to load model",
        "Loading model weights took",
        "Avg prompt throughput:",
        "Traceback (most recent call last)",
        "File \"",
        "server_args=ServerArgs(",
        "llm_load_print_meta",
        "got prompt",
    ] {
        assert!(!engine_log::marker_for_reports_only(marker(line)), "{line}");
    }
}

#[test]
fn the_hot_path_stays_within_its_budget() {
    let (log, failures) = (log_scanner(), failure_scan());
    let (Some(log_anchored), Some(failure_anchored)) = (&log.anchored, &failures.anchored) else {
        return; // no SIMD Teddy on this CPU
    };
    let (log_hits, log_found) = hits_per_mib(log_anchored, &log.patterns);
    let (failure_hits, failure_found) = hits_per_mib(failure_anchored, &failures.patterns);
    let counts = format!(
        "log scanner: {} of {} markers, {} anchors, {} searchers, {log_hits} anchor hits and \
         {log_found} markers per MiB; failure search: {} markers, {} anchors, {} searchers, \
         {failure_hits} anchor hits and {failure_found} markers per MiB",
        log_anchored.markers(),
        log.patterns.len(),
        log_anchored.anchors(),
        log_anchored.searchers(),
        failures.patterns.len(),
        failure_anchored.anchors(),
        failure_anchored.searchers(),
    );
    let noisiest = |anchored: &Anchored, patterns: &[&str]| {
        let by_anchor = anchored.hits_by_anchor(patterns, VARIED);
        (by_anchor.into_iter().take(12))
            .map(|(anchor, hits, found, markers)| {
                format!("\n  {anchor:?}: {hits} hits, {found} markers found ({markers:?})")
            })
            .collect::<String>()
    };
    // The failure search reads every byte of a long log, whatever its engine.
    let mut failure_most = 0;
    let mut each = String::new();
    for (name, text) in EXCERPTS {
        let (hits, found) = failure_anchored.count_hits(&failures.patterns, text);
        let (hits, found) = (per_mib(hits, text.len()), per_mib(found, text.len()));
        each.push_str(&format!("\n  {name}: {hits} hits, {found} markers per MiB"));
        failure_most = failure_most.max(hits);
    }
    let counts = format!(
        "{counts}\nlog scanner's noisiest anchors (in the excerpt):{}\nfailure search's:{}\n\
         failure search on each excerpt:{each}",
        noisiest(log_anchored, &log.patterns),
        noisiest(failure_anchored, &failures.patterns)
    );
    eprintln!("{counts}");
    // Each searcher is one more SIMD pass over every parsed byte; each hit, a stop of the
    // pass and a check; the failure search reads every byte of a long log.
    assert!(log_anchored.searchers() <= BUDGET_LOG_SEARCHERS, "{counts}");
    assert!(log_hits <= BUDGET_LOG_HITS_PER_MIB, "{counts}");
    assert!(failure_anchored.searchers() <= 1, "{counts}");
    assert!(
        failure_anchored.anchors() <= BUDGET_FAILURE_ANCHORS,
        "{counts}"
    );
    assert!(failure_hits <= BUDGET_FAILURE_HITS_PER_MIB, "{counts}");
    assert!(failure_most <= BUDGET_FAILURE_HITS_PER_MIB, "{counts}");
    assert_eq!(failure_found, 0, "the excerpt holds no failure: {counts}");
}

/// The budgets: the counts of 2026-12-02 with some room (log scanner: 453 of 570 markers, 223
/// anchors, 5 searchers, 5,338 anchor hits per MiB of which 4,086 find a marker; failure
/// search: 83 markers, 35 anchors, one searcher, 278 hits per MiB). Before the log scanner
/// and the anchor text's serving-log pieces: every marker, 6 searchers, 12,307 hits per MiB.
/// Since anchors are chosen against a sample of busy lines of ten kinds of logs, costed by the
/// bytes Teddy tests first, and with the fewest searchers that pay (2026-12-02, eleventh
/// session): log scanner 456 of 573 markers, 218 anchors, 5 searchers, 4,850 hits per MiB;
/// failure search 86 markers, 56 anchors, one searcher, 201 hits per MiB of the varied
/// excerpt and at most 289 of any (the `CUDA OOMs:` counters of memory summaries). One
/// searcher holds at most 64 anchors. Session 38 (2026-12-05): 836 of 1,671 markers need 308
/// anchors, more than five searchers of 64 hold, so a sixth pass over the parsed parts; on the
/// 2-core VM the same wall and CPU within the spread as the five-searcher build (varied 0.32 s
/// best both, 0.57 against 0.58 s CPU; h200 0.45 against 0.49 s), the parsed parts being a few
/// MiB of a 1 GiB log.
const BUDGET_LOG_SEARCHERS: usize = 6;
const BUDGET_LOG_HITS_PER_MIB: usize = 6_000;
const BUDGET_FAILURE_ANCHORS: usize = 64;
const BUDGET_FAILURE_HITS_PER_MIB: usize = 400;

/// Anchor hits per MiB of any excerpt that find no marker, at most, per anchor: the failure
/// search's (at most 85 per MiB, `woul` of `would exceed allowed memory` in English prompts, on
/// 2026-12-02 when a budget was first set per anchor) and the log scanner's (at most 470,
/// `torc` in a training log).
const BUDGET_FAILURE_IDLE_HITS_PER_ANCHOR: usize = 150;
const BUDGET_LOG_IDLE_HITS_PER_ANCHOR: usize = 1_000;
/// Occurrences per MiB of any excerpt, at most, of a log-scanner marker that does not start a
/// run of repeat lines (`engine_log::repeat_kind`): each occurrence makes its line a candidate,
/// found, parsed and kept.
const BUDGET_MARKER_PER_MIB: usize = 300;

#[test]
fn no_anchor_stops_the_scans_often_on_busy_lines() {
    let (log, failures) = (log_scanner(), failure_scan());
    let (Some(log_anchored), Some(failure_anchored)) = (&log.anchored, &failures.anchored) else {
        return; // no SIMD Teddy on this CPU
    };
    let over = busy_anchors(
        "failure search",
        failure_anchored,
        &failures.patterns,
        BUDGET_FAILURE_IDLE_HITS_PER_ANCHOR,
    ) + &busy_anchors(
        "log scanner",
        log_anchored,
        &log.patterns,
        BUDGET_LOG_IDLE_HITS_PER_ANCHOR,
    );
    assert!(
        over.is_empty(),
        "anchors that stop a scan of busy lines for nothing (a new or changed marker moved the \
         anchor choice: add the busy lines to src/analyze/explain/typical_lines.log so that \
         anchors avoid them, or word the marker as the program does, longer):{over}"
    );
}

#[test]
fn no_failure_marker_occurs_in_busy_lines() {
    // Every chunk holding one is parsed whole by the scanner of every marker.
    let failures = failure_scan();
    let busy = busy_markers(&failures.patterns, 0, |text, start, pattern| {
        !is_oom_counter(text, start, pattern)
    });
    let listed: String = (busy.iter())
        .map(|(excerpt, marker, rate, line)| {
            format!("\n  {marker:?}: {rate} per MiB of {excerpt}, as in {line:?}")
        })
        .collect();
    assert!(
        busy.is_empty(),
        "failure or engine-start markers that busy lines hold (each makes the middle of a long \
         log parsed; keep such a marker to the program's own longer wording):{listed}"
    );
}

/// The markers of the log scanner that the excerpts' busy lines hold more than
/// [`BUDGET_MARKER_PER_MIB`] times per MiB, though they start no run of repeat lines: the
/// progress lines of training and serving the phase reader needs (a step, an epoch, a
/// request), and a traceback's frames. Their lines are candidates, found and parsed; most are
/// recognised unsearched as lines like a recent one (`shape::like_shape`). A marker added to
/// this list is a cost on every busy line of its kind: a benchmark figure belongs beside it.
const BUSY_MARKERS: &[&str] = &[
    "update_slots",
    "llama runner",
    "llama runner started in",
    "source=server.go",
    "loss=",
    " loss ",
    " loss: ",
    "'loss': ",
    "it/s]",
    "Epoch ",
    "| consumed samples:",
    // DeepSpeed's step line (`[Rank 0] step=665, skipped=0, lr=[…]`), a training step as
    // Megatron's is.
    ", skipped=",
    "File \"",
    "\", line ",
];

#[test]
fn busy_lines_hold_only_the_known_busy_markers() {
    // A line holding a marker of the log scanner is a candidate line: found, parsed and
    // kept. The markers of busy lines (`Avg prompt throughput:`, `Decode batch.`) start runs
    // of repeat lines, joined unsearched while the lines are alike; the others are listed.
    let log = log_scanner();
    let Some(anchored) = &log.anchored else {
        return; // no SIMD Teddy on this CPU
    };
    let held: Vec<&str> = (log.patterns.iter().enumerate())
        .filter(|&(index, _)| {
            let mut found = Vec::new();
            anchored.scan(&log.patterns, log.patterns[index].as_bytes(), &mut found);
            found.iter().any(|&(_, at)| at == index)
        })
        .map(|(_, pattern)| *pattern)
        .collect();
    let busy = busy_markers(&held, BUDGET_MARKER_PER_MIB, |_, _, _| true);
    let starts_runs = |marker: &str| {
        let index = engine_log::markers().iter().position(|m| *m == marker);
        index.is_some_and(|index| engine_log::repeat_kind(index).is_some())
    };
    let listed: String = (busy.iter())
        .filter(|(_, marker, _, _)| !starts_runs(marker) && !BUSY_MARKERS.contains(&&**marker))
        .map(|(excerpt, marker, rate, line)| {
            format!("\n  {marker:?}: {rate} per MiB of {excerpt}, as in {line:?}")
        })
        .collect();
    assert!(
        listed.is_empty(),
        "markers of the log scanner that busy lines hold, starting no run of repeat lines \
         (word them as the program's rarer lines do, or give them a repeat kind):{listed}"
    );
    // The list holds no marker that is gone or no longer busy.
    for marker in BUSY_MARKERS {
        assert!(
            busy.iter().any(|(_, busy, _, _)| busy == marker),
            "{marker:?} is not busy"
        );
    }
}

#[test]
fn new_markers_get_anchors_off_busy_lines() {
    // Markers other engines' code prints, not among the failure search's: added to it (as a
    // new OOM marker or engine start would be), the anchors chosen still avoid busy lines.
    // The anchor choice of the tenth session put `ion ` of `generation throughput` in the
    // failure search after a few markers more.
    let extra = [
        "Engine core initialization failed",
        "EngineDeadError",
        "ChildFailedError",
        "ncclUnhandledCudaError",
        "Loading safetensors checkpoint shards",
        "Uvicorn running on",
        "Starting vLLM API server",
        "llama runner started",
        "Connected to the model server",
        "Warming up model",
        "Initializing an LLM engine",
        "init_distributed",
    ];
    let mut patterns = failure_scan().patterns.clone();
    for count in [1, 4, extra.len()] {
        patterns.truncate(failure_scan().patterns.len());
        patterns.extend_from_slice(&extra[..count]);
        let Some(anchored) = Anchored::for_any(&patterns) else {
            return; // no SIMD Teddy on this CPU
        };
        let over = busy_anchors(
            "failure search",
            &anchored,
            &patterns,
            BUDGET_FAILURE_IDLE_HITS_PER_ANCHOR,
        );
        assert!(over.is_empty(), "with {:?}:{over}", &extra[..count]);
        // Nor do they let Teddy pass many more positions to its check.
        for (name, text) in EXCERPTS {
            let (passed, named) = teddy_passes(&anchored, &patterns, text);
            assert!(
                passed <= BUDGET_FAILURE_PASSED_PER_MIB,
                "with {:?}: {passed} positions per MiB of {name}{named}",
                &extra[..count]
            );
        }
        // Still one pass over the text: more anchors would need a second.
        assert_eq!(anchored.searchers(), 1, "with {:?}", &extra[..count]);
    }
}

/// Positions per MiB of an excerpt that Teddy's filter passes to its exact check
/// ([`Anchored::teddy_candidates`]), summed over the buckets of every searcher: what the search
/// costs beyond its fixed cost per byte (each position passed is a stop of the SIMD loop and a
/// compare per anchor of the bucket), and the buckets passing the most, each line naming the
/// anchors (with how often their first bytes, the ones Teddy tests, occur in the excerpt) and
/// their markers.
fn teddy_passes(anchored: &Anchored, patterns: &[&str], text: &[u8]) -> (usize, String) {
    let mut buckets = anchored.teddy_candidates(text);
    let total = per_mib(buckets.iter().map(|bucket| bucket.2).sum(), text.len());
    buckets.sort_by_key(|bucket| std::cmp::Reverse(bucket.2));
    let mut named = String::new();
    for (searcher, members, passed) in buckets.into_iter().take(3) {
        named.push_str(&format!(
            "\n    searcher {searcher}, a bucket passing {} positions per MiB:",
            per_mib(passed, text.len())
        ));
        for member in members {
            let (anchor, markers) = anchored.anchor(patterns, member);
            let start = &anchor.as_bytes()[..anchor.len().min(3)];
            let occurs = text.windows(start.len()).filter(|w| w == &start).count();
            named.push_str(&format!(
                "\n      {anchor:?} (its start {:?} {} times per MiB) of {markers:?}",
                String::from_utf8_lossy(start),
                per_mib(occurs, text.len())
            ));
        }
    }
    (total, named)
}

/// Positions per MiB of any excerpt that Teddy's filter passes to its check, at most. The
/// failure search's: one Fat searcher over 47 anchors tested on 3-byte starts, on 2026-12-02
/// when first counted, 8,409 per MiB of the varied excerpt (0.8 % of its positions), 8,174 of
/// h200-training, 6,104 of trainer, 3,041 of ollama, 1,104 of vllm-metrics. Each passed
/// position costs about 55 instructions (callgrind, 1 GiB varied serving log: 0.47 M per MiB
/// beyond the searcher's 2.2 per byte with none passed). The log scanner's, its five
/// searchers' summed: 34,031 per MiB of varied, 31,528 of trainer, 31,478 of vllm-metrics,
/// 28,168 of ollama, 15,118 of h200-training. Since the buckets are packed against the windows
/// of the typical lines counted, not only their byte frequencies (`scan::bucket_order`,
/// 2026-12-03, 907 markers): log scanner 40,760 -> 10,960 per MiB of varied, 40,438 -> 15,525
/// of trainer, 18,396 -> 14,522 of vllm-metrics, 36,750 -> 9,442 of ollama, 13,527 -> 6,655 of
/// h200-training (a marker more had packed a bucket passing every `=` of its memory summaries:
/// 78,125); failure search 8,396 -> 3,615 of varied, 8,174 -> 2,712 of h200-training. With
/// only the windows seen more than once counted (the count over all doubled the time of
/// building the scanners for a short text, 17 -> 36 ms of CPU; now 26 ms), 915 markers: log
/// scanner 17,444 of varied, 14,538 of vllm-metrics, 21,528 of ollama, 22,729 of trainer,
/// 14,431 of h200-training; failure search 3,374, 64, 2,340, 1,657, 1,880.
const BUDGET_FAILURE_PASSED_PER_MIB: usize = 12_000;
const BUDGET_LOG_PASSED_PER_MIB: usize = 48_000;

#[test]
fn teddy_passes_few_positions_to_its_check() {
    let (log, failures) = (log_scanner(), failure_scan());
    let (Some(log_anchored), Some(failure_anchored)) = (&log.anchored, &failures.anchored) else {
        return; // no SIMD Teddy on this CPU
    };
    let mut over = String::new();
    let mut counts = String::new();
    for (name, text) in EXCERPTS {
        let (failure, failure_named) = teddy_passes(failure_anchored, &failures.patterns, text);
        let (log_passed, log_named) = teddy_passes(log_anchored, &log.patterns, text);
        counts.push_str(&format!(
            "\n  {name}: failure search {failure}, log scanner {log_passed} per MiB"
        ));
        if failure > BUDGET_FAILURE_PASSED_PER_MIB {
            over.push_str(&format!(
                "\n  failure search: {failure} per MiB of {name}{failure_named}"
            ));
        }
        if log_passed > BUDGET_LOG_PASSED_PER_MIB {
            over.push_str(&format!(
                "\n  log scanner: {log_passed} per MiB of {name}{log_named}"
            ));
        }
    }
    eprintln!("positions Teddy passes to its check:{counts}");
    assert!(
        over.is_empty(),
        "Teddy passes many positions of busy lines to its check (a new marker's anchor, or one \
         it moved, shares a bucket with unlike anchors or starts with common bytes: word the \
         marker as the program does, longer, or add the busy lines to \
         src/analyze/explain/typical_lines.log):{over}"
    );
}

/// Small tiers for test-sized logs: 16 KiB chunks, one chunk of head.
const SMALL: Tiers = Tiers {
    chunk_bytes: 16 * 1024,
    head_chunks: 1,
    window_chunks: 2,
    restart_window_chunks: 2,
    follow_chunks: 1,
};

/// A line of no marker (a loader's progress).
fn quiet_line(at: usize) -> String {
    format!(
        "DEBUG 11-29 13:{:02}:{:02} loader.py:88] read shard {at} of 9000 ({} bytes)\n",
        at / 60 % 60,
        at % 60,
        at * 7919
    )
}

#[test]
fn a_stage_line_in_a_window_of_a_long_log_decides_the_phase() {
    for line in [quiet_line(1), quiet_line(4321)] {
        let (oom, markers) = line_markers(line.as_bytes());
        assert!(!oom && markers.is_empty(), "{line}");
    }
    // Past the head, in a window before the failure's chunk: vLLM starts loading the weights
    // (scanned by the log scanner), and fails 20 KiB later with no traceback.
    let mut log =
        String::from("INFO 11-29 13:00:01 api_server.py:585] vLLM API server version 0.6.4\n");
    for at in 0..1_000 {
        log.push_str(&quiet_line(at));
    }
    log.push_str(
        "INFO 11-29 13:00:12 model_runner.py:1072] Starting to load model \
         meta-llama/Llama-3.1-70B-Instruct...\n",
    );
    let load = log.len();
    for at in 1_000..1_300 {
        log.push_str(&quiet_line(at));
    }
    let failure = log.len();
    log.push_str(
        "ERROR 11-29 13:00:30 engine.py:366] CUDA out of memory. Tried to allocate 448.00 MiB. \
         GPU 0 has a total capacity of 79.15 GiB of which 120.19 MiB is free.\n",
    );
    for at in 1_300..1_400 {
        log.push_str(&quiet_line(at));
    }
    let chunk = |at: usize| at / SMALL.chunk_bytes;
    assert!(
        chunk(load) >= 1 && chunk(load) < chunk(failure),
        "{load} {failure}"
    );
    let log = log.into_bytes();
    let mut explainer = Explainer::new();
    let read = feed_with(
        &mut explainer,
        Box::new(std::io::Cursor::new(log.clone())),
        "log",
        SMALL,
    );
    assert_eq!(read.ok(), Some(log.len() as u64));
    let fast = explainer.finish();
    assert_eq!(fast.phase.failed_in, Phase::WeightsLoad, "{:?}", fast.phase);
    assert_eq!(fast.engine.name, EngineName::Vllm);
    let mut slow = Explainer::new();
    slow.start_input("log");
    slow.push_bytes(&log);
    let slow = slow.finish();
    assert_eq!(fast.phase.failed_in, slow.phase.failed_in);
    assert_eq!(fast.ooms, slow.ooms);
}
