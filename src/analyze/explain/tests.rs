//! Tests of the explainer: whole logs in, the timeline, failures and report out.

use super::*;

const LOG: &str = "INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\n\
INFO 04-02 21:42:59 model_runner.py:1] Starting to load model meta-llama/Llama-2-7b...\n\
INFO 04-02 21:43:10 model_runner.py:2] Loading model weights took 12.5523 GB\n\
Traceback (most recent call last):\n\
  File \"/x/vllm/worker/worker.py\", line 10, in determine_num_available_blocks\n\
  File \"/x/vllm/worker/model_runner.py\", line 20, in profile_run\n\
  File \"/x/model.py\", line 30, in forward\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n";

#[test]
fn chunking_does_not_change_the_report() {
    let whole = explain_text(LOG);
    for size in [1, 2, 3, 7, 64] {
        let mut explainer = Explainer::new();
        for chunk in LOG.as_bytes().chunks(size) {
            explainer.push_bytes(chunk);
        }
        assert_eq!(explainer.finish(), whole, "chunk size {size}");
    }
    assert_eq!(whole.phase.failed_in, Phase::Profiling);
    assert_eq!(whole.phase.last_completed, Some(Phase::WeightsLoad));
    assert_eq!(whole.engine.name, EngineName::Vllm);
    assert_eq!(whole.engine.version.as_deref(), Some("0.6.3"));
    assert!(whole.is_gpu_oom);
    assert_eq!(whole.context[0].lines.len(), 8);
}

/// A serving log: two runs (the first ends without failure), request and stats lines in
/// runs, an OOM traceback in the middle of a run of requests, requests after it.
fn serving_log() -> String {
    let mut log = String::new();
    for run in 0..2 {
        log.push_str("INFO 11-29 10:00:01 api_server.py:585] vLLM API server version 0.6.4\n");
        log.push_str(
            "INFO 11-29 10:00:41 model_runner.py:1077] Loading model weights took 14.9888 GB\n",
        );
        log.push_str("INFO:     Application startup complete.\n");
        for second in 0..30 {
            for request in 0..(second % 7) {
                log.push_str(&format!(
                    "INFO:     127.0.0.1:{} - \"POST /v1/completions HTTP/1.1\" 200 OK\n",
                    40000 + request
                ));
            }
            if second % 5 == 0 {
                log.push_str("INFO 11-29 10:01:02 metrics.py:349] Avg prompt throughput: 1.0 tokens/s, Running: 3 reqs\n");
            }
            log.push_str("INFO:     127.0.0.1:5 - \"POST /generate HTTP/1.1\" 200 OK\n");
            if run == 1 && second == 20 {
                log.push_str("ERROR 11-29 12:00:00 async_llm_engine.py:64] Traceback (most recent call last):\n");
                log.push_str("ERROR 11-29 12:00:00 async_llm_engine.py:64]   File \"/x/vllm/worker/model_runner.py\", line 1654, in execute_model\n");
                log.push_str("ERROR 11-29 12:00:00 async_llm_engine.py:64] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.12 GiB is free.\n");
            }
        }
    }
    log.push_str("INFO:     127.0.0.1:6 - \"POST /v1/completions HTTP/1.1\" 200 OK");
    log
}

/// The report with every line taken on its own (chunks of one byte make every line a
/// block of its own: no runs, no known lines), checked against the whole text at once.
fn line_by_line(log: &str) -> ExplainReport {
    let mut single = Explainer::new();
    for byte in log.as_bytes().chunks(1) {
        single.push_bytes(byte);
    }
    let single = single.finish();
    assert_eq!(explain_text(log), single);
    single
}

#[test]
fn runs_of_requests_count_as_single_lines_would() {
    let log = serving_log();
    let single = line_by_line(&log);
    let requests: u64 = single
        .timeline
        .iter()
        .filter(|event| event.kind == EventKind::Request)
        .map(|event| event.count)
        .sum();
    assert!(requests > 100, "{requests}");
    assert_eq!(single.phase.failed_in, Phase::Inference);
    assert_eq!(single.ooms.len(), 1);
    // Scanned chunks (as the reader threads make them), with right and wrong hints.
    for size in [1, 5, 64, 333, 4096] {
        for hint in [None, Some(true), Some(false)] {
            let mut explainer = Explainer::new();
            let mut ends_line = true;
            for chunk in log.as_bytes().chunks(size) {
                let starts_line = hint.unwrap_or(ends_line);
                ends_line = chunk.ends_with(b"\n");
                let mut scanned = ScannedChunk::new();
                scanned.bytes_mut().extend_from_slice(chunk);
                scanned.scan(starts_line);
                explainer.push_scanned(&scanned);
            }
            assert_eq!(
                explainer.finish(),
                single,
                "chunk size {size}, hint {hint:?}"
            );
        }
    }
}

/// Checks what `find_candidates` found against a search of every line on its own.
fn check_candidates(block: &[u8]) {
    let mut found = Candidates::default();
    find_candidates(block, &mut found);
    let lines: Vec<&[u8]> = block.split(|&byte| byte == b'\n').collect();
    assert_eq!(found.total_lines as usize, lines.len() - 1);
    let mut candidates = found.lines.iter().peekable();
    let mut run: Option<(EventKind, u64)> = None;
    for (index, line) in (0u64..).zip(&lines[..lines.len() - 1]) {
        let (oom, markers) = line_markers(line);
        let text = String::from_utf8_lossy(line);
        if let Some(candidate) = candidates.next_if(|candidate| candidate.line == index) {
            assert_eq!(candidate.oom, oom, "{text}");
            assert_eq!(found.markers_of(candidate), markers, "{text}");
            assert_eq!(&block[candidate.start..candidate.end], *line);
            run = candidate.run.map(|(kind, last, _)| (kind, last));
        } else if let Some((kind, last)) = run.filter(|&(_, last)| index <= last) {
            assert!(!oom, "{text}");
            assert_eq!(repeat_kind_of(&markers), Some(kind), "{text}");
            let _ = last;
        } else {
            assert!(!oom && markers.is_empty(), "line {index} missed: {text}");
        }
    }
    assert!(candidates.next().is_none());
}

/// The vLLM example's lines again and again with other numbers, then an OOM.
fn periodic_log() -> String {
    let example = include_str!("../../../examples/vllm-0.6.4-kv-cache-too-small.log");
    let mut log = String::new();
    for round in 0..200 {
        for line in example.lines() {
            let line: String = line
                .chars()
                .map(|c| match c.to_digit(10) {
                    Some(digit) => char::from(b'0' + ((digit + round) % 10) as u8),
                    None => c,
                })
                .collect();
            log.push_str(&line);
            log.push('\n');
        }
        if round % 17 == 0 {
            log.push_str("exit code 137\nexit code 139\nstatus: 1\nstatus: 2\n");
        }
    }
    log.push_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
    log
}

#[test]
fn candidates_are_what_a_search_of_each_line_finds() {
    let whole = serving_log();
    check_candidates(&whole.as_bytes()[..=whole.rfind('\n').unwrap()]);
    check_candidates(periodic_log().as_bytes());
    for mut text in fixture_texts() {
        if text.last().is_some_and(|&byte| byte != b'\n') {
            text.push(b'\n');
        }
        // In blocks of fewer lines than one go's candidates (the corpus's citation list has
        // more lines than that, nearly each a candidate; the driver takes such a block in
        // parts, see `a_block_of_many_candidates_is_taken_in_parts`).
        let mut rest = text.as_slice();
        while !rest.is_empty() {
            let end = memchr::memchr_iter(b'\n', rest)
                .nth(MAX_CANDIDATES / 2 - 1)
                .map_or(rest.len(), |newline| newline + 1);
            check_candidates(&rest[..end]);
            rest = &rest[end..];
        }
    }
}

#[test]
fn a_block_of_many_candidates_is_taken_in_parts() {
    let mut log = String::new();
    for line in 0..(2 * MAX_CANDIDATES + 100) {
        // Lines of other lengths, so none is recognised from a known line.
        log.push_str(&format!(
            "  File \"/x/{}.py\", line {line}, in forward\n",
            "y".repeat(line % 7)
        ));
    }
    log.push_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
    let mut found = Candidates::default();
    find_candidates(log.as_bytes(), &mut found);
    assert_eq!(found.lines.len(), MAX_CANDIDATES);
    assert!(found.scanned < log.len());
    assert_eq!(log.as_bytes()[found.scanned - 1], b'\n');
    let mut single = Explainer::new();
    for line in log.split_inclusive('\n') {
        single.push_bytes(line.as_bytes());
    }
    let single = single.finish();
    assert_eq!(explain_text(&log), single);
    let mut scanned = ScannedChunk::new();
    scanned.bytes_mut().extend_from_slice(log.as_bytes());
    scanned.scan(true);
    let mut explainer = Explainer::new();
    explainer.push_scanned(&scanned);
    assert_eq!(explainer.finish(), single);
    assert_eq!(single.input.lines, log.lines().count() as u64);
}

#[test]
fn the_first_gpu_oom_after_many_other_failures_is_the_one_explained() {
    let mut log = String::new();
    for step in 0..(MAX_MESSAGES + 30) {
        log.push_str(&format!("step {step}\n"));
        log.push_str(&format!("RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate {} bytes.\n", 1000 + step));
    }
    log.push_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.12 GiB is free.\n");
    for step in 0..30 {
        log.push_str(&format!("step {step}\n"));
        log.push_str(&format!("RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate {} bytes.\n", 5000 + step));
    }
    let report = line_by_line(&log);
    assert!(report.is_gpu_oom);
    assert_eq!(report.ooms_total, MAX_MESSAGES as u64 + 61);
    assert_eq!(report.ooms.len(), MAX_MESSAGES + 1);
    let oom = report.oom.expect("figures of the GPU OOM");
    assert_eq!(
        oom.free_bytes,
        crate::parse::oom_text::parse_size("1.12 GiB")
    );
    assert!(oom.free_bytes.is_some());
}

#[test]
fn recognised_lines_explain_as_searched_lines_would() {
    let single = line_by_line(&periodic_log());
    assert!(single.is_gpu_oom);
}

#[test]
fn the_automaton_finds_the_same_candidates() {
    let whole = serving_log();
    let log = &whole.as_bytes()[..=whole.rfind('\n').unwrap()];
    let scanner = scanner();
    let automaton = AhoCorasick::new(&scanner.patterns).unwrap();
    let mut anchored = Candidates::default();
    find_candidates(log, &mut anchored);
    let mut listed = Candidates::default();
    collect_candidates(scanner, log, Hits::listed(&automaton, log), &mut listed);
    assert_eq!(
        format!("{:?}", anchored.lines),
        format!("{:?}", listed.lines)
    );
    assert_eq!(anchored.markers, listed.markers);
    assert_eq!(anchored.total_lines, listed.total_lines);
}

#[test]
fn digit_contexts_come_from_the_markers() {
    let contexts = DigitContexts::new(&["plain", "code 137", "a1b22c"]);
    assert!(!contexts.any);
    assert_eq!(contexts.before, [&b"code "[..], b"a", b"a1b"]);
    assert!(contexts.may_cover(b"exit code 1", 10));
    assert!(!contexts.may_cover(b"exit kode 1", 10));
    assert!(!contexts.may_cover(b"1", 0));
    assert!(DigitContexts::new(&["404 page"]).may_cover(b"x 1", 2));
}

#[test]
fn candidates_merge_runs_of_one_kind_only() {
    let whole = serving_log();
    let log = &whole[..=whole.rfind('\n').unwrap()];
    let mut found = Candidates::default();
    find_candidates(log.as_bytes(), &mut found);
    assert_eq!(found.total_lines, log.matches('\n').count() as u64);
    let runs: Vec<_> = found.lines.iter().filter_map(|line| line.run).collect();
    assert!(runs.iter().any(|&(_, last, _)| last > 0));
    for line in &found.lines {
        if let Some((kind, last, end)) = line.run {
            assert!(!line.oom);
            // Every line of the run holds only markers of that kind.
            let lines: Vec<&str> = log.split('\n').collect();
            for index in line.line..=last {
                let (oom, markers) = line_markers(lines[index as usize].as_bytes());
                assert!(!oom);
                assert_eq!(repeat_kind_of(&markers), Some(kind));
            }
            assert_eq!(log.as_bytes()[end], b'\n');
        }
    }
    // The OOM line is a candidate of its own.
    assert_eq!(found.lines.iter().filter(|line| line.oom).count(), 1);
}

#[test]
fn report_mid_stream_sees_the_deferred_run() {
    let mut explainer = Explainer::new();
    let (head, tail) = LOG.split_at(LOG.find("Traceback").unwrap());
    explainer.push_bytes(head.as_bytes());
    let early = explainer.report();
    assert!(early.ooms.is_empty());
    assert_eq!(early.phase.last_completed, Some(Phase::WeightsLoad));
    assert_eq!(early.timeline.len(), 3);
    explainer.push_bytes(tail.as_bytes());
    // The message may still be open (it could continue on the next line) until more
    // lines come or the input ends.
    let done = explainer.finish();
    assert_eq!(done.ooms.len(), 1);
    assert_eq!(done.phase.failed_in, Phase::Profiling);
}

#[test]
fn runs_without_failure_are_dropped_and_counted() {
    let run = "INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\n\
INFO 04-02 21:43:10 model_runner.py:2] Loading model weights took 12.5523 GB\n";
    let mut text = run.repeat(3);
    text.push_str(LOG);
    let report = explain_text(&text);
    assert_eq!(report.input.engine_starts, 4);
    assert_eq!(report.timeline.first().map(|e| e.line), Some(7));
    assert_eq!(report.phase.failed_in, Phase::Profiling);
}

/// A V1 run built from the templates in vLLM V1's log templates (`vllm/v1/`): startup
/// completes, the server serves, then a request fails.
#[test]
fn vllm_v1_failure_after_ready_is_inference() {
    let log = "(APIServer pid=1) INFO 08-29 06:40:11 [api_server.py:1] vLLM API server version 0.10.2\n\
(EngineCore_DP0 pid=7) INFO 08-29 06:40:20 [core.py:1] Initializing a V1 LLM engine (v0.10.2) with config: model='Qwen/Qwen2.5-7B', max_seq_len=32768\n\
(EngineCore_DP0 pid=7) INFO 08-29 06:40:41 [gpu_model_runner.py:1] Model loading took 14.2488 GiB and 15.012 seconds\n\
(EngineCore_DP0 pid=7) INFO 08-29 06:41:07 [kv_cache_utils.py:1] GPU KV cache size: 941,024 tokens\n\
(EngineCore_DP0 pid=7) INFO 08-29 06:41:20 [gpu_model_runner.py:1] Graph capturing finished in 13 secs, took 0.53 GiB\n\
(APIServer pid=1) INFO:     Application startup complete.\n\
(APIServer pid=1) INFO:     127.0.0.1:50000 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n\
(APIServer pid=1) INFO:     127.0.0.1:50000 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n\
(EngineCore_DP0 pid=7) ERROR 08-29 06:43:00 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 2.10 GiB is free. Including non-PyTorch memory, this process has 77.08 GiB memory in use. Of the allocated memory 75.20 GiB is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but unallocated.\n";
    let report = explain_text(log);
    assert_eq!(report.engine.version.as_deref(), Some("0.10.2"));
    assert_eq!(report.phase.failed_in, Phase::Inference);
    assert_eq!(report.phase.last_completed, Some(Phase::CudaGraphCapture));
    assert_eq!(report.phase.server_was_ready, Some(true));
    assert_eq!(report.phase.prompt_can_be_cause, Some(true));
    let requests = report
        .timeline
        .iter()
        .find(|event| event.kind == EventKind::Request)
        .unwrap();
    assert_eq!((requests.count, requests.last_line), (2, Some(8)));
    assert_eq!(
        report.timeline.last().and_then(|e| e.seconds_since_start),
        Some(169.0)
    );
}

#[test]
fn invalid_utf8_and_long_lines_are_tolerated() {
    let mut explainer = Explainer::new();
    explainer.push_bytes(b"\xff\xfe garbage \xc3\n");
    explainer.push_bytes(&vec![b'a'; 200_000]);
    explainer.push_bytes(b"\nCUDA error: out of memory\n");
    let report = explainer.finish();
    assert_eq!(report.input.lines, 3);
    assert_eq!(report.ooms.len(), 1);
    assert_eq!(report.ooms[0].line, 3);
}

#[test]
fn context_crosses_block_boundaries() {
    let mut explainer = Explainer::new();
    for index in 1..=100 {
        explainer.push_bytes(format!("line {index}\n").as_bytes());
    }
    explainer.push_bytes(b"RuntimeError: CUDA error: out of memory\n");
    let report = explainer.finish();
    let context = &report.context[0];
    assert_eq!(context.failure_line, 101);
    assert_eq!(context.lines.first().map(|l| l.line), Some(61));
    assert_eq!(context.lines.len(), 41);
    assert_eq!(context.lines[0].text, "line 61");
}

/// A traceback cut right after the statement that calls a stage (a paste that stops at
/// `self.load_model()`), with a rank prefix on every line.
const CUT_AT_A_CALL: &str = "[rank0]: Traceback (most recent call last):\n\
[rank0]:   File \"/x/sglang/srt/model_executor/model_runner.py\", line 180, in initialize\n\
[rank0]:     self.load_model()\n\
[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n";

#[test]
fn the_statement_under_a_cut_tracebacks_last_frame_names_the_stage() {
    let report = explain_text(CUT_AT_A_CALL);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
    assert!(
        report.phase.evidence[0].contains("calls `load_model`"),
        "{:?}",
        report.phase.evidence
    );
    // Chunked anywhere, the call is read the same (or, cut between the two lines, not at all:
    // never something else).
    for size in [1, 5, 64] {
        let mut explainer = Explainer::new();
        for chunk in CUT_AT_A_CALL.as_bytes().chunks(size) {
            explainer.push_bytes(chunk);
        }
        assert!(matches!(
            explainer.finish().phase.failed_in,
            Phase::WeightsLoad | Phase::Unknown
        ));
    }
}

#[test]
fn a_printed_deeper_frame_replaces_the_call_read_from_the_statement() {
    // The statement calls `load_model`, but the frames below show a forward in serving.
    let log = "Traceback (most recent call last):\n  \
File \"/x/app.py\", line 3, in main\n    \
self.load_model()\n  \
File \"/x/vllm/v1/engine/core.py\", line 9, in step\n    \
out = self.model(x)\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n";
    let report = explain_text(log);
    assert_eq!(report.phase.failed_in, Phase::Inference);
    // A call only counts when a rule names it: `compute_stuff` says nothing.
    let unnamed = CUT_AT_A_CALL.replace("self.load_model()", "self.compute_stuff()");
    assert_eq!(explain_text(&unnamed).phase.failed_in, Phase::Unknown);
}

/// An issue whose title states the failure, then the log that shows the stage and the
/// engine's error line stating it again (no traceback frames).
const TITLE_FIRST: &str = "# [Bug]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n\
\n\
### Your current environment\n\
vllm 0.6.3 on one L4\n\
\n\
```\n\
INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\n\
INFO 04-02 21:43:10 model_runner.py:2] Loading model weights took 12.5523 GB\n\
INFO 04-02 21:43:20 model_runner.py:3] Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static.\n\
ERROR 04-02 21:43:21 engine.py:4] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n\
```\n";

#[test]
fn a_failure_stated_first_in_a_title_is_read_where_it_is_stated_again() {
    let report = explain_text(TITLE_FIRST);
    assert_eq!(report.phase.failed_in, Phase::CudaGraphCapture);
    assert!(
        report.phase.evidence[0].starts_with("line 10: the failure is stated again"),
        "{:?}",
        report.phase.evidence
    );
    // The figures are still those of the first statement.
    assert_eq!(report.ooms[0].line, 1);
    // Alone, the title shows no stage.
    let title = TITLE_FIRST.lines().next().unwrap();
    assert_eq!(explain_text(title).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_failure_of_another_run_is_not_a_restatement() {
    // The first run fails with no stage shown; the engine restarts, gets further and fails
    // in another stage: that stage is not the first failure's.
    let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 \
               has a total capacity of 23.65 GiB of which 1.12 GiB is free.";
    let log = format!(
        "INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\n\
         INFO 04-02 21:43:10 model_runner.py:2] Loading model weights took 12.5523 GB\n\
         ERROR 04-02 21:43:21 engine.py:4] {oom}\n\
         INFO 04-02 21:44:50 api_server.py:1] vLLM API server version 0.6.3\n\
         INFO 04-02 21:45:10 model_runner.py:2] Loading model weights took 12.5523 GB\n\
         INFO 04-02 21:45:20 model_runner.py:3] Capturing cudagraphs for decoding.\n\
         ERROR 04-02 21:45:21 engine.py:4] {oom}\n"
    );
    let report = explain_text(&log);
    assert_ne!(report.phase.failed_in, Phase::CudaGraphCapture);
    // The same log without the restart: the second statement is the same run's.
    let same_run: String = log
        .lines()
        .enumerate()
        .filter(|(index, _)| *index != 3 && *index != 4)
        .map(|(_, line)| format!("{}\n", line.trim_start()))
        .collect();
    assert_eq!(
        explain_text(&same_run).phase.failed_in,
        Phase::CudaGraphCapture
    );
    // A restatement that shows no stage either leaves it unknown.
    let twice = format!("{oom}\nsome words\n{oom}\n");
    assert_eq!(explain_text(&twice).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_failure_stated_before_its_log_takes_the_stage_the_log_ends_in() {
    let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 \
               has a total capacity of 23.65 GiB of which 1.12 GiB is free.";
    let head = format!("# {oom}\n\nThe server log:\n");
    let capture = "INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\n\
                   INFO 04-02 21:43:10 model_runner.py:2] Loading model weights took 12.5 GB\n\
                   INFO 04-02 21:43:20 model_runner.py:3] Capturing cudagraphs for decoding.\n";
    let report = explain_text(&format!("{head}{capture}"));
    assert_eq!(report.phase.failed_in, Phase::CudaGraphCapture);
    assert!(
        report.phase.evidence[0].contains("stated before the log of its run"),
        "{:?}",
        report.phase.evidence
    );
    // A log that ends with nothing running shows no stage of the failure.
    let done = "INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\n\
                INFO 04-02 21:43:10 model_runner.py:2] Loading model weights took 12.5 GB\n";
    let report = explain_text(&format!("{head}{done}"));
    assert_eq!(report.phase.failed_in, Phase::Unknown);
    // A log shown before the statement is read as usual, not at its end.
    let report = explain_text(&format!("{done}{oom}\n{capture}"));
    assert_ne!(report.phase.failed_in, Phase::CudaGraphCapture);
    // A log cut in start-up (a banner only) does not show where the failure happened.
    let banner = "INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\n";
    let report = explain_text(&format!("{head}{banner}"));
    assert_eq!(report.phase.failed_in, Phase::Unknown);
}

/// A llama.cpp loader prints every metadata key and hyper-parameter on a line of its own: the
/// load is one timeline row (its lines merged), and the stage is still the weights load.
#[test]
fn llama_cpp_loader_lines_are_one_timeline_row() {
    let mut log = String::from(
        "llama_model_loader: loaded meta data with 30 key-value pairs and 291 tensors from /models/x.gguf (version GGUF V3 (latest))\n",
    );
    for index in 0..30 {
        log.push_str(&format!(
            "llama_model_loader: - kv {index:3}:   general.key_{index} str = value {index}\n"
        ));
    }
    for index in 0..40 {
        log.push_str(&format!("print_info: n_param_{index}          = {index}\n"));
    }
    log.push_str("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory\n");
    let report = explain_text(&log);
    let rows = report
        .timeline
        .iter()
        .filter(|event| event.kind == EventKind::WeightsLoadProgress)
        .count();
    assert_eq!(rows, 1, "{:#?}", report.timeline);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
}

/// PyTorch's allocator message on ROCm without the `torch.` class, and a title quoting the
/// class before a HIP mention: PyTorch either way.
#[test]
fn pytorchs_hip_wordings_name_pytorch() {
    let report = explain_text("RuntimeError: HIP out of memory. Tried to allocate 64.00 MiB (GPU 0; 15.98 GiB total capacity; 15.00 GiB already allocated; 10.00 MiB free; 15.50 GiB reserved in total by PyTorch)\n");
    assert!(report.is_gpu_oom);
    assert_eq!(report.engine.name, EngineName::Pytorch);
    let report = explain_text(
        "layers.py torch.OutOfMemoryError: HIP out of memory\n\nI am on a 16GB card\n",
    );
    assert!(report.is_gpu_oom);
    assert_eq!(report.engine.name, EngineName::Pytorch);
}

/// AUTOMATIC1111's line naming its attention code (`InvokeAI` there is an implementation, not
/// the app) shows the webui.
#[test]
fn a1111_attention_optimization_line_names_the_webui() {
    let report = explain_text("Applying optimization: InvokeAI... done.\nModel loaded in 5.1s\nRuntimeError: Could not allocate tensor with 52428800 bytes. There is not enough GPU video memory available!\n");
    assert!(report.is_gpu_oom);
    assert_eq!(report.engine.name, EngineName::Automatic1111);
    let report = explain_text("Applying attention optimization: Doggettx... done.\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 7.79 GiB of which 1.00 GiB is free.\n");
    assert_eq!(report.engine.name, EngineName::Automatic1111);
}

/// An error oomdoc does not name (a dtype mismatch): the caller's statement of its traceback
/// still says the stage, as it would for an OOM; a bare call says nothing.
#[test]
fn the_stage_of_an_unnamed_error_is_read_from_its_traceback() {
    let traceback = |statement: &str| {
        format!(
            "Traceback (most recent call last):\n  File \"/work/score_batch.py\", line 18, in \
             <module>\n    {statement}\n  File \"/venv/lib/python3.12/site-packages/torch/nn/\
             modules/module.py\", line 1779, in _wrapped_call_impl\n    return \
             self._call_impl(*args, **kwargs)\n  File \"/venv/lib/python3.12/site-packages/torch/\
             nn/modules/linear.py\", line 134, in forward\n    return F.linear(input, \
             self.weight, self.bias)\nRuntimeError: mat1 and mat2 must have the same dtype, but \
             got Float and BFloat16\n"
        )
    };
    let report = explain_text(&traceback("scores = model(x)"));
    assert!(!report.is_gpu_oom);
    assert_eq!(
        report.phase.failed_in,
        Phase::Inference,
        "{:#?}",
        report.phase
    );
    let report = explain_text(&traceback("y = model(x)"));
    assert_eq!(
        report.phase.failed_in,
        Phase::Unknown,
        "{:#?}",
        report.phase
    );
}
