//! What the hot path of a long log holds, counted rather than timed: the markers and anchors
//! of the scanner of a long log's parsed parts (`candidates::log_scanner`) and of the failure
//! search of its middle (`candidates::failure_scan`), and how often their anchors occur in
//! lines like a real serving log's (tests/fixtures/bench/varied-serving-excerpt.log). A
//! change that puts more markers on the hot path, or noisier anchors, fails here first: raise
//! a budget only with a benchmark figure (scripts/bench_explain.sh) beside the commit.

use super::stream::{feed_with, Tiers};
use super::*;

/// Lines of the five engines of scripts/gen_serving_log.py (vLLM V0 and V1, SGLang, TGI,
/// llama.cpp), none holding a failure.
const VARIED: &[u8] = include_bytes!("../../../tests/fixtures/bench/varied-serving-excerpt.log");

/// Anchor hits per MiB of `VARIED`: (hits, markers found).
fn hits_per_mib(anchored: &Anchored, patterns: &[&str]) -> (usize, usize) {
    let (hits, found) = anchored.count_hits(patterns, VARIED);
    let per_mib = |count: usize| count * (1 << 20) / VARIED.len();
    (per_mib(hits), per_mib(found))
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
        let reports_only = index
            .checked_sub(log.oom_markers)
            .is_some_and(engine_log::marker_for_reports_only);
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
    let counts = format!(
        "{counts}\nlog scanner's noisiest anchors (in the excerpt):{}\nfailure search's:{}",
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
    assert_eq!(failure_found, 0, "the excerpt holds no failure: {counts}");
}

/// The budgets: the counts of 2026-12-02 with some room (log scanner: 453 of 570 markers, 223
/// anchors, 5 searchers, 5,338 anchor hits per MiB of which 4,086 find a marker; failure
/// search: 83 markers, 35 anchors, one searcher, 278 hits per MiB). Before the log scanner
/// and the anchor text's serving-log pieces: every marker, 6 searchers, 12,307 hits per MiB.
const BUDGET_LOG_SEARCHERS: usize = 5;
const BUDGET_LOG_HITS_PER_MIB: usize = 6_000;
const BUDGET_FAILURE_ANCHORS: usize = 40;
const BUDGET_FAILURE_HITS_PER_MIB: usize = 400;

/// Small tiers for test-sized logs: 16 KiB chunks, one chunk of head.
const SMALL: Tiers = Tiers {
    chunk_bytes: 16 * 1024,
    head_chunks: 1,
    window_chunks: 2,
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
