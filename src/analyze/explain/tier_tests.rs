//! The tiered reading of a long input (`stream::Tiers`): the middle searched for failure
//! markers only must find every failure the full parse finds, with the same phase and
//! figures when what shows the phase lies within the window parsed before the failure.

use super::stream::{feed_file, feed_with, Tiers};
use super::*;
use proptest::prelude::*;

/// A small deterministic generator (xorshift64).
struct Noise(u64);

impl Noise {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }

    /// `digits` to `digits + spread - 1` hex digits.
    fn hex(&mut self, digits: usize, spread: u64) -> String {
        let digits = digits + self.below(spread) as usize;
        (0..digits)
            .map(|_| char::from(b"0123456789abcdef"[self.below(16) as usize]))
            .collect()
    }
}

/// vLLM 0.6 startup: banner, model, weights, profiling, KV cache, graphs, server ready.
const HEAD: &str = "\
INFO 11-29 10:00:01 api_server.py:585] vLLM API server version 0.6.4
INFO 11-29 10:00:09 llm_engine.py:249] Initializing an LLM engine (v0.6.4) with config: model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=32768
INFO 11-29 10:00:12 model_runner.py:1072] Starting to load model meta-llama/Llama-3.1-8B-Instruct...
INFO 11-29 10:00:41 model_runner.py:1077] Loading model weights took 14.9888 GB
INFO 11-29 10:00:44 gpu_executor.py:113] # GPU blocks: 27078, # CPU blocks: 2048
INFO 11-29 10:01:02 model_runner.py:1528] Graph capturing finished in 15 secs, took 0.53 GiB
INFO:     Application startup complete.
INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)
";

/// A line of the middle of a serving log, varied as real ones are: IPv4 and IPv6 clients and
/// ports of any length, request ids, metrics with figures, JSON lines, warnings. None holds a
/// failure marker.
fn filler_line(noise: &mut Noise) -> String {
    match noise.below(7) {
        0 | 1 => format!(
            "INFO:     {}.{}.{}.{}:{} - \"POST /v1/completions HTTP/1.1\" 200 OK\n",
            noise.below(256),
            noise.below(256),
            noise.below(256),
            noise.below(256),
            noise.below(65536)
        ),
        2 => format!(
            "INFO:     [2001:db8:{}::{}]:{} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
            noise.hex(1, 4),
            noise.hex(1, 4),
            noise.below(65536)
        ),
        3 => format!(
            "INFO 11-29 10:{:02}:{:02} metrics.py:349] Avg prompt throughput: {}.{} tokens/s, \
             Running: {} reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: {}.{}%\n",
            noise.below(60),
            noise.below(60),
            noise.below(9000),
            noise.below(10),
            noise.below(64),
            noise.below(100),
            noise.below(10)
        ),
        4 => format!(
            "INFO 11-29 10:{:02}:{:02} logger.py:37] Received request chatcmpl-{}: prompt: \
             'tell me about the {} of {} words', params: SamplingParams(n=1, temperature=0.7)\n",
            noise.below(60),
            noise.below(60),
            noise.hex(16, 17),
            noise.hex(3, 1),
            noise.below(100_000)
        ),
        5 => format!(
            "{{\"ts\": \"2025-11-29T10:02:{:02}.{}Z\", \"level\": \"info\", \"msg\": \"done\", \
             \"duration\": 0.{}, \"user\": \"u-{}\"}}\n",
            noise.below(60),
            noise.below(1000),
            noise.below(1000),
            noise.below(100_000)
        ),
        _ => format!(
            "WARNING 11-29 10:{:02}:{:02} serving_chat.py:{}] the chat template of request {} \
             ignores the system prompt\n",
            noise.below(60),
            noise.below(60),
            noise.below(999),
            noise.hex(8, 1)
        ),
    }
}

/// Failure blocks, each showing its own phase: (text, phase).
fn failure_block(which: u8) -> (&'static str, Phase) {
    match which % 4 {
        // Serving: the traceback names the stage.
        0 => (
            "ERROR 11-29 12:00:00 async_llm_engine.py:64] Engine background task failed
ERROR 11-29 12:00:00 async_llm_engine.py:64] Traceback (most recent call last):
ERROR 11-29 12:00:00 async_llm_engine.py:64]   File \"/usr/lib/python3.12/site-packages/vllm/worker/model_runner.py\", line 1654, in execute_model
ERROR 11-29 12:00:00 async_llm_engine.py:64]     hidden_or_intermediate_states = model_executable(
ERROR 11-29 12:00:00 async_llm_engine.py:64] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 78.02 GiB memory in use. Of the allocated memory 75.20 GiB is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but unallocated.
",
            Phase::Inference,
        ),
        // A restart that fails while reading the weights: only the log lines show the stage.
        1 => (
            "INFO 11-29 13:00:01 api_server.py:585] vLLM API server version 0.6.4
INFO 11-29 13:00:09 llm_engine.py:249] Initializing an LLM engine (v0.6.4) with config: model='meta-llama/Llama-3.1-70B-Instruct', dtype=torch.bfloat16, max_seq_len=32768
INFO 11-29 13:00:12 model_runner.py:1072] Starting to load model meta-llama/Llama-3.1-70B-Instruct...
ERROR 11-29 13:00:30 engine.py:366] CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 120.19 MiB is free.
",
            Phase::WeightsLoad,
        ),
        // A restart that fails in the profiling run (traceback frames).
        2 => (
            "INFO 11-29 14:00:01 api_server.py:585] vLLM API server version 0.6.4
INFO 11-29 14:00:12 model_runner.py:1072] Starting to load model meta-llama/Llama-3.1-8B-Instruct...
INFO 11-29 14:00:41 model_runner.py:1077] Loading model weights took 14.9888 GB
Traceback (most recent call last):
  File \"/usr/lib/python3.12/site-packages/vllm/worker/worker.py\", line 195, in determine_num_available_blocks
    self.model_runner.profile_run()
  File \"/usr/lib/python3.12/site-packages/vllm/worker/model_runner.py\", line 1331, in profile_run
    self.execute_model(model_input, kv_caches, intermediate_tensors)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 3.50 GiB is free. Including non-PyTorch memory, this process has 75.64 GiB memory in use. Of the allocated memory 70.10 GiB is allocated by PyTorch, and 4.30 GiB is reserved by PyTorch but unallocated.
",
            Phase::Profiling,
        ),
        // Host memory: the kernel killed the server while it served.
        _ => (
            "/bin/sh: line 1:  4242 Killed                  python3 -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-8B-Instruct
",
            Phase::Inference,
        ),
    }
}

/// A log: the head, `before` filler lines, the failure block, `after` filler lines.
fn build_log(seed: u64, before: usize, block: &str, after: usize) -> Vec<u8> {
    let mut noise = Noise(seed | 1);
    let mut log = String::from(HEAD);
    for _ in 0..before {
        log.push_str(&filler_line(&mut noise));
    }
    log.push_str(block);
    for _ in 0..after {
        log.push_str(&filler_line(&mut noise));
    }
    log.into_bytes()
}

/// Every line parsed, fed in pieces like a reader's.
fn full(log: &[u8]) -> ExplainReport {
    let mut explainer = Explainer::new();
    explainer.start_input("log");
    for piece in log.chunks(64 * 1024) {
        explainer.push_bytes(piece);
    }
    explainer.finish()
}

/// The log read in tiers from a stream, and from a file by offset (which must say the same).
fn tiered(log: &[u8], tiers: Tiers) -> ExplainReport {
    let mut explainer = Explainer::new();
    let read = feed_with(
        &mut explainer,
        Box::new(std::io::Cursor::new(log.to_vec())),
        "log",
        tiers,
    );
    assert_eq!(read.ok(), Some(log.len() as u64));
    let streamed = explainer.finish();
    let mut file = tempfile::tempfile().expect("a temporary file");
    std::io::Write::write_all(&mut file, log).expect("the log written");
    let mut explainer = Explainer::new();
    let read = feed_file(&mut explainer, &file, 0, "log", tiers);
    assert_eq!(read.ok(), Some(log.len() as u64));
    assert_eq!(explainer.finish(), streamed, "read from a file by offset");
    streamed
}

/// What must not change: the failures, their figures, the phase and the engine (and the
/// context lines, when the window holds them).
fn assert_same_failure(fast: &ExplainReport, slow: &ExplainReport) {
    assert_same_failure_but_context(fast, slow);
    assert_eq!(fast.context, slow.context);
}

fn assert_same_failure_but_context(fast: &ExplainReport, slow: &ExplainReport) {
    assert_eq!(fast.is_gpu_oom, slow.is_gpu_oom);
    assert_eq!(fast.ooms, slow.ooms);
    assert_eq!(fast.ooms_total, slow.ooms_total);
    assert_eq!(fast.oom, slow.oom);
    assert_eq!(fast.phase.failed_in, slow.phase.failed_in);
    assert_eq!(fast.phase.server_was_ready, slow.phase.server_was_ready);
    assert_eq!(fast.engine.name, slow.engine.name);
    assert_eq!(fast.engine.version, slow.engine.version);
    assert_eq!(fast.input.lines, slow.input.lines);
    assert_eq!(fast.input.bytes, slow.input.bytes);
}

/// Small tiers for test-sized logs: 16 KiB chunks, one chunk of head.
const SMALL: Tiers = Tiers {
    chunk_bytes: 16 * 1024,
    head_chunks: 1,
    window_chunks: 2,
    follow_chunks: 1,
    restart_window_chunks: 1,
};

/// An engine restart with no failure marker far from the head: only the last chunk before it
/// is parsed (the previous run's last lines), not the whole window a failure gets; the failure
/// that comes later is read as the full parse reads it.
#[test]
fn a_restart_without_a_failure_parses_a_shorter_window() {
    let restart = "INFO 11-29 13:00:01 api_server.py:585] vLLM API server version 0.6.4
INFO 11-29 13:00:09 llm_engine.py:249] Initializing an LLM engine (v0.6.4) with config: model='meta-llama/Llama-3.1-70B-Instruct', dtype=torch.bfloat16, max_seq_len=32768
";
    let (failure, phase) = failure_block(0);
    let mut log = build_log(11, 6_000, restart, 6_000);
    log.extend_from_slice(&build_log(12, 0, failure, 2_000)[HEAD.len()..]);
    let slow = full(&log);
    let short = tiered(&log, SMALL);
    let whole = tiered(
        &log,
        Tiers {
            restart_window_chunks: SMALL.window_chunks,
            ..SMALL
        },
    );
    // No window, and the restart's chunk parsed from the engine start's line (the default).
    let none = tiered(
        &log,
        Tiers {
            restart_window_chunks: 0,
            ..SMALL
        },
    );
    assert_same_failure_but_context(&short, &slow);
    assert_same_failure_but_context(&whole, &slow);
    assert_same_failure_but_context(&none, &slow);
    assert_eq!(short.phase.failed_in, phase);
    assert_eq!(none.phase, short.phase);
    // The run that failed is read the same; the two runs are counted.
    assert_eq!(none.timeline, short.timeline);
    assert_eq!(none.input.engine_starts, slow.input.engine_starts);
    assert_eq!(short.input.engine_starts, slow.input.engine_starts);
    // One chunk fewer parsed before the restart: more lines searched for failures only.
    assert!(
        short.input.failures_only_lines > whole.input.failures_only_lines,
        "{} vs {}",
        short.input.failures_only_lines,
        whole.input.failures_only_lines
    );
    assert!(
        none.input.failures_only_lines > short.input.failures_only_lines,
        "{} vs {}",
        none.input.failures_only_lines,
        short.input.failures_only_lines
    );
}

/// A restart's engine start at any place of its chunk, the chunk after the head or later: the
/// lines of that chunk before it are counted, not parsed (no window before a restart), and
/// the run that follows and fails is read as with the window and as the full parse reads it.
#[test]
fn a_restart_is_parsed_from_its_engine_start() {
    let restart = "INFO 11-29 13:00:01 api_server.py:585] vLLM API server version 0.6.4
INFO 11-29 13:00:09 llm_engine.py:249] Initializing an LLM engine (v0.6.4) with config: model='meta-llama/Llama-3.1-70B-Instruct', dtype=torch.bfloat16, max_seq_len=32768
INFO 11-29 13:00:12 model_runner.py:1072] Starting to load model meta-llama/Llama-3.1-70B-Instruct...
INFO 11-29 13:00:41 model_runner.py:1077] Loading model weights took 14.9888 GB
INFO:     Application startup complete.
";
    for (at, before) in [
        (0u64, 150usize),
        (1, 700),
        (2, 1_500),
        (3, 2_333),
        (4, 3_100),
    ] {
        let (failure, phase) = failure_block(0);
        let mut log = build_log(at + 20, before, restart, 900);
        log.extend_from_slice(&build_log(at + 40, 0, failure, 300)[HEAD.len()..]);
        let slow = full(&log);
        let none = tiered(
            &log,
            Tiers {
                restart_window_chunks: 0,
                ..SMALL
            },
        );
        let one = tiered(&log, SMALL);
        assert_same_failure_but_context(&none, &slow);
        assert_eq!(none.phase.failed_in, phase, "{before}");
        assert_eq!(none.phase, one.phase, "{before}");
        assert_eq!(none.timeline, one.timeline, "{before}");
        assert_eq!(
            none.input.engine_starts, slow.input.engine_starts,
            "{before}"
        );
        assert!(
            none.input.failures_only_lines >= one.input.failures_only_lines,
            "{before}"
        );
    }
}

#[test]
fn a_failure_far_from_the_head_is_found_with_its_phase() {
    for which in 0..4u8 {
        let (block, phase) = failure_block(which);
        // About 3 MiB before the failure, 1 MiB after it.
        let log = build_log(u64::from(which) + 7, 24_000, block, 8_000);
        assert!(log.len() > 3 << 20);
        let slow = full(&log);
        let fast = tiered(&log, SMALL);
        assert_same_failure(&fast, &slow);
        assert_eq!(fast.phase.failed_in, phase, "block {which}");
        assert_eq!(fast.ooms.len(), 1);
        // The middle was searched for failures only, and the report says so.
        assert!(
            fast.input.failures_only_lines > 20_000,
            "{}",
            fast.input.failures_only_lines
        );
        assert_eq!(slow.input.failures_only_lines, 0);
        if which == 0 {
            // One row before the failure (the lines after it, before the tail, have another).
            let skipped: Vec<&TimelineEvent> = fast
                .timeline
                .iter()
                .filter(|event| event.kind == EventKind::FailuresOnly)
                .filter(|event| event.line < fast.ooms[0].line)
                .collect();
            assert_eq!(skipped.len(), 1, "{:?}", fast.timeline);
            let skipped = skipped[0];
            let last = skipped.last_line.unwrap_or_default();
            assert!(skipped.line > 8 && last < fast.ooms[0].line, "{skipped:?}");
            assert!(skipped.text.contains("searched for failure messages only"));
            // The row holds the lines it stands for, and their bytes.
            assert!(skipped.figures.bytes.is_some_and(|bytes| bytes.0 > 1 << 20));
            // Requests on both sides of it, the failure after.
            let kinds: Vec<EventKind> = fast.timeline.iter().map(|event| event.kind).collect();
            let at = kinds
                .iter()
                .position(|&kind| kind == EventKind::FailuresOnly);
            assert!(at.is_some_and(|at| kinds[..at].contains(&EventKind::ServerReady)));
            assert!(at.is_some_and(|at| kinds[at..].contains(&EventKind::Failure)));
        }
    }
}

#[test]
fn a_small_input_is_parsed_whole() {
    let (block, _) = failure_block(0);
    let log = build_log(3, 2_000, block, 500);
    let fast = tiered(&log, Tiers::DEFAULT);
    assert_eq!(fast, full(&log));
    assert_eq!(fast.input.failures_only_lines, 0);
}

#[test]
fn a_stage_older_than_the_lines_searched_for_failures_only_decides_nothing() {
    // The head shows the weights loading; then only lines without any marker; then an OOM
    // without a traceback. What ran in between is not known: not `weights_load`.
    let mut log = String::from(
        "INFO 11-29 10:00:01 api_server.py:585] vLLM API server version 0.6.4\n\
         INFO 11-29 10:00:12 model_runner.py:1072] Starting to load model m...\n",
    );
    let mut n = 0u64;
    while log.len() < 1 << 20 {
        n += 1;
        log.push_str(&format!(
            "debug: tick {n} of the watchdog, nothing to report\n"
        ));
    }
    log.push_str("RuntimeError: CUDA error: out of memory\n");
    let fast = tiered(log.as_bytes(), SMALL);
    assert!(fast.input.failures_only_lines > 0);
    assert_eq!(fast.ooms.len(), 1);
    assert_eq!(fast.phase.failed_in, Phase::Unknown);
    assert!(
        fast.phase
            .evidence
            .iter()
            .any(|line| line.contains("searched for failure messages only")),
        "{:?}",
        fast.phase.evidence
    );
    // The full parse sees the loading stage never ended.
    assert_eq!(full(log.as_bytes()).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn a_marker_cut_by_a_chunk_boundary_is_found() {
    let (block, _) = failure_block(0);
    let head = build_log(5, 3_000, "", 0);
    // Put the boundary inside "out of memory" for every cut of the marker.
    let marker = block.find("out of memory").unwrap_or_default();
    for cut in 1.."out of memory".len() {
        let mut log = head.clone();
        let chunk = 16 * 1024;
        let start = log.len() - log.len() % chunk + 4 * chunk;
        let mut noise = Noise(11);
        while log.len() + 400 + marker + cut < start {
            log.extend_from_slice(filler_line(&mut noise).as_bytes());
        }
        // Pad the last filler line so that the marker starts `cut` bytes before the boundary.
        let pad = start - (log.len() + marker + cut);
        log.pop();
        log.extend(std::iter::repeat_n(b' ', pad));
        log.push(b'\n');
        log.extend_from_slice(block.as_bytes());
        for _ in 0..3_000 {
            log.extend_from_slice(filler_line(&mut noise).as_bytes());
        }
        let tiers = Tiers {
            chunk_bytes: chunk,
            head_chunks: 1,
            window_chunks: 1,
            restart_window_chunks: 1,
            follow_chunks: 1,
        };
        let fast = tiered(&log, tiers);
        assert_eq!(fast.ooms.len(), 1, "cut {cut}");
        assert_same_failure(&fast, &full(&log));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any placement of any failure, any chunk size and window: the same failure, phase and
    /// figures as the full parse (the failure block is shorter than the window).
    #[test]
    fn the_tiered_scan_finds_what_the_full_scan_finds(
        seed in any::<u64>(),
        before in 0usize..6_000,
        after in 0usize..2_000,
        which in any::<u8>(),
        chunk_kib in 2usize..16,
        head_chunks in 1u64..3,
        window_chunks in 1usize..4,
        follow_chunks in 0u64..3,
        restart_window_chunks in 0usize..2,
        twice in any::<bool>(),
    ) {
        let (block, _) = failure_block(which);
        let mut log = build_log(seed, before, block, after);
        if twice {
            // A second failure later on.
            let (second, _) = failure_block(which.wrapping_add(1));
            log.extend_from_slice(second.as_bytes());
            log.extend_from_slice(&build_log(seed ^ 5, 0, "", after)[HEAD.len()..]);
        }
        let tiers = Tiers {
            chunk_bytes: chunk_kib * 1024,
            head_chunks,
            window_chunks,
            restart_window_chunks,
            follow_chunks,
        };
        let fast = tiered(&log, tiers);
        let slow = full(&log);
        // A window of a few KiB may hold fewer than the 40 lines of context.
        assert_same_failure_but_context(&fast, &slow);
    }

    /// The failure search agrees with an automaton over the same markers.
    #[test]
    fn the_failure_search_agrees_with_the_automaton(
        pieces in proptest::collection::vec(
            prop_oneof![
                proptest::sample::select(OOM_MARKERS.to_vec()).prop_map(str::to_string),
                // A marker cut short.
                proptest::sample::select(OOM_MARKERS.to_vec())
                    .prop_map(|marker| {
                        // At a character boundary (the Chinese markers are several bytes each).
                        let cut = marker.char_indices().last().map_or(0, |(at, _)| at);
                        marker[..cut].to_string()
                    }),
                Just("vLLM API server version".to_string()),
                Just("LLM engine (".to_string()),
                // A memory summary's counter of past OOMs, whole or cut.
                Just("|  CUDA OOMs: 0  |".to_string()),
                Just("CUDA OOMs".to_string()),
                Just("s: 1".to_string()),
                "[ -~]{0,40}",
                "[0-9a-f:.\\[\\] ]{0,20}",
            ],
            0..12,
        ),
    ) {
        let hay = pieces.concat();
        let markers = super::candidates::failure_markers();
        let automaton = aho_corasick::AhoCorasick::new(&markers).unwrap();
        // Every occurrence but a counter label (`OOMs:`) counts.
        let expected = automaton.find_overlapping_iter(&hay).any(|found| {
            let pattern = markers[found.pattern().as_usize()];
            !candidates::is_oom_counter(hay.as_bytes(), found.start(), pattern)
        });
        prop_assert_eq!(candidates::failure_scan().finds(hay.as_bytes()), expected);
    }
}

/// A restart whose chunk ends with the new run's requests and stats lines (its startup over):
/// the chunk after it is searched for failures only, not parsed (no follow chunk), and the
/// failure that comes later is read as the full parse reads it.
#[test]
fn a_restart_in_its_serving_loop_gets_no_follow_chunk() {
    let restart = "INFO 11-29 13:00:01 api_server.py:585] vLLM API server version 0.6.4
INFO 11-29 13:00:09 llm_engine.py:249] Initializing an LLM engine (v0.6.4) with config: model='meta-llama/Llama-3.1-70B-Instruct', dtype=torch.bfloat16, max_seq_len=32768
INFO 11-29 13:00:41 model_runner.py:1077] Loading model weights took 14.9888 GB
INFO:     Application startup complete.
";
    let (failure, phase) = failure_block(0);
    for before in [400usize, 1_100, 2_600] {
        let mut log = build_log(before as u64, before, restart, 6_000);
        log.extend_from_slice(&build_log(before as u64 + 1, 0, failure, 300)[HEAD.len()..]);
        let text = String::from_utf8_lossy(&log).into_owned();
        let Some(start) = text.find("13:00:01 api_server") else {
            panic!("no restart");
        };
        let restart_line = text[..start].matches('\n').count() as u64 + 1;
        let tiers = Tiers {
            restart_window_chunks: 0,
            ..SMALL
        };
        let fast = tiered(&log, tiers);
        let slow = full(&log);
        assert_same_failure_but_context(&fast, &slow);
        assert_eq!(fast.phase.failed_in, phase);
        assert_eq!(fast.input.engine_starts, slow.input.engine_starts);
        // The stretch searched for failures only starts within a chunk of the restart.
        let Some(skipped) = (fast.timeline.iter())
            .find(|event| event.kind == EventKind::FailuresOnly && event.line > restart_line)
        else {
            panic!("no stretch searched for failures only: {:?}", fast.timeline);
        };
        let offset = |line: u64| {
            (text.split_inclusive('\n').take(line as usize - 1))
                .map(str::len)
                .sum::<usize>()
        };
        assert!(
            offset(skipped.line) - start < tiers.chunk_bytes,
            "{before}: lines {restart_line}..{}",
            skipped.line
        );
    }
}

/// The reach of a marker cut by a chunk boundary, known without building the failure search
/// (a one-chunk input never builds it), covers every marker the search holds, the longest
/// whole.
#[test]
fn the_seam_reaches_across_every_failure_marker() {
    let reach = candidates::failure_marker_reach();
    let patterns = &candidates::failure_scan().patterns;
    assert!(patterns.iter().all(|pattern| pattern.len() <= reach + 1));
    let longest = candidates::failure_markers()
        .into_iter()
        .map(str::len)
        .max();
    assert_eq!(longest, Some(reach + 1));
}

/// A user's prompt that quotes an OOM, echoed by vLLM's request logger in the middle of a long
/// log, is content (`oom_text::echo`): the failure search passes over it, so no window is
/// parsed for it, and the full parse reads no failure there either; the real failure after it
/// is read the same by both.
#[test]
fn a_prompt_quoting_an_oom_in_the_middle_parses_no_window() {
    let prompt = "INFO 11-29 11:00:00 logger.py:37] Received request chatcmpl-9f2a: prompt: \
                  'is torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB a \
                  bug?', params: SamplingParams(n=1, temperature=0.7), prompt_token_ids: [1, 2].\n";
    // The same words in a line that is not an echo: a warning the search must stop at.
    let warning = "WARNING 11-29 11:00:00 scheduler.py:1089] CUDA out of memory. Tried to \
                   allocate 2.00 GiB (recovered)\n";
    let (failure, phase) = failure_block(0);
    let with = |line: &str| {
        let mut log = build_log(21, 6_000, line, 6_000);
        log.extend_from_slice(&build_log(22, 0, failure, 2_000)[HEAD.len()..]);
        log
    };
    let echoed = with(prompt);
    let slow = full(&echoed);
    let fast = tiered(&echoed, SMALL);
    assert_same_failure_but_context(&fast, &slow);
    assert_eq!(fast.phase.failed_in, phase);
    assert_eq!(fast.ooms.len(), 1, "{:?}", fast.ooms);
    // The warning's window is parsed; the prompt's is not.
    let warned = tiered(&with(warning), SMALL);
    assert!(
        fast.input.failures_only_lines > warned.input.failures_only_lines,
        "{} vs {}",
        fast.input.failures_only_lines,
        warned.input.failures_only_lines
    );
}
