#!/usr/bin/env bash
# Benchmark (not a test): `oomdoc explain` on a ~1 GiB engine log whose lines vary as real ones do
# should take at most 2x the wall time of `grep -c 'out of memory'` on the same file (the baseline,
# run alternately on the same warm page cache) and stay under 64 MiB RSS.
#
# Figures (2026-12-01, the project's 2-core build VM shared with other jobs, load 5-11, RUNS=3,
# best of 3 by wall; 1 GiB logs; CPU = user+sys seconds). "before" = the full parse of every
# line (now `explain --every-line`, EVERY_LINE=1); "after" = the default: a log over 8 MiB is
# parsed at its start (4 MiB), its end (4 MiB) and around each failure or engine restart (4 MiB
# before, 1 MiB after); the rest is searched for failure and engine-start markers only
# (src/analyze/explain/stream.rs `Tiers`):
#   input            grep wall/cpu     explain wall/cpu before -> after        ratio after (wall, cpu)
#   varied           0.44 s / 0.43 s   6.42 s / 3.33 s -> 0.67 s / 0.98 s      1.52x, 2.28x  (load 4.7)
#   varied (loaded)  0.98 s / 0.45 s                   -> 2.05 s / 1.09 s      2.09x, 2.42x  (load 8.3)
#   varied-vllm-v1   1.07 s / 0.53 s   5.93 s / 3.02 s -> 1.80 s / 1.00 s      1.68x, 1.89x  (load 7.2)
#   serving          0.53 s / 0.26 s   2.28 s / 1.18 s -> 0.75 s / 0.49 s      1.42x, 1.88x  (load 6.5)
#   h200             0.61 s / 0.36 s   2.27 s / 2.20 s -> 0.86 s / 1.04 s      1.41x, 2.89x  (load 5.8)
# The same binary on an idle machine (final tree of 2026-12-01, RUNS=3): this 2-core VM at load
# 0.9, varied: grep 0.34 s / 0.34 s, explain 0.72 s / 1.04 s: 2.12x wall, 3.06x CPU, one core
# 2.79x (the goal is missed by 6 %: two cores give only 1.3x over one); the H200 host (16
# cores, RUNS=2): grep 0.34 s / 0.33 s, explain 0.46 s / 1.20 s: 1.35x wall, 3.64x CPU.
# One core (taskset): varied 2.30x, varied-vllm-v1 1.97x, serving 1.32x, h200 2.34x grep's wall.
# Max RSS 18-24 MiB. Failure, phase, figures and engine are the same as with every line parsed
# (checked on varied and h200; the device test checks a 256 MiB stream). Where the CPU goes
# (perf, varied): the failure-marker Teddy search 33 %, the kernel's read copy 18 % (grep pays
# it too), counting newlines 6 %, the parsed head/tail/windows ~25 %. Earlier (every line
# parsed, 64 MiB cut): known-line shape test 29 %, Teddy over ~300 anchors 25 %, per-line
# candidate work 10 %, read copy 5 %.
# The H200 run: SIZE_MIB=1024 RUNS=2 OOMDOC=target/release/oomdoc bash scripts/bench_explain.sh varied
#
# Usage: scripts/bench_explain.sh [SOURCE_LOG | serving | h200 | varied | varied-ENGINE]
#   SOURCE_LOG  a real log whose last line is the failure (default: the bundled vLLM example)
#   varied      a generated serving log whose lines vary as real ones do (IPv4/IPv6 clients and
#               ports, request ids, prompts, figures, timestamps of varying precision):
#               vLLM V0, SGLang, TGI, llama.cpp and vLLM V1 sections, a CUDA OOM at the end
#               (scripts/gen_serving_log.py; varied-vllm-v1, varied-sglang, … one engine only)
#   serving     a generated vLLM 0.6 serving log: startup, then ~1 GiB of uvicorn access lines
#               (`"POST /v1/completions HTTP/1.1" 200 OK`) and `Avg prompt throughput` metric
#               lines, then one CUDA OOM traceback near the end
#   h200        the real H200 training output of tests/fixtures/h200-torch2.11/oom_cases.json
#               (STEP lines, memory summaries, tracebacks) repeated, a CUDA OOM at the end
#   SIZE_MIB    size of the generated log (default 1024)
#   EVERY_LINE  when set, also time `explain --every-line` once (every line parsed)
#   OOMDOC      the binary (default: $CARGO_TARGET_DIR/release/oomdoc or target/release/oomdoc)
#
# `explain` reads, scans and explains on several threads; the "1 core" line is the same run
# pinned to one CPU (taskset), for machines with one core.
#
# The log is the source without its last line, repeated to SIZE_MIB, then the whole source
# (so the failure comes at the very end, after ~1 GiB of engine lines). Both commands run
# once to warm up, then RUNS times (default 3) alternately on a warm page cache; the fastest
# run of each is reported.
set -euo pipefail
cd "$(dirname "$0")/.."

SOURCE=${1:-examples/vllm-0.6.4-kv-cache-too-small.log}
SIZE_MIB=${SIZE_MIB:-1024}
BIN=${OOMDOC:-${CARGO_TARGET_DIR:-target}/release/oomdoc}
LOG=${TMPDIR:-/tmp}/oomdoc-bench-$(basename "$SOURCE" .log)-${SIZE_MIB}MiB.log


if [ ! -x "$BIN" ]; then
    echo "error: no binary at \`$BIN\`; run \`cargo build --release\` first" >&2
    exit 2
fi

gen_sources() { # writes the generated sources (serving, h200) into directory $1
    python3 - "$1" tests/fixtures/h200-torch2.11/oom_cases.json <<'PY'
import json, random, sys
out, cases = sys.argv[1], json.load(open(sys.argv[2]))
rng = random.Random(7)
# serving: header / body (1 MiB, repeated by the caller) / tail
header = """INFO 11-29 10:00:01 api_server.py:585] vLLM API server version 0.6.4
INFO 11-29 10:00:01 api_server.py:586] args: Namespace(model='meta-llama/Llama-3.1-8B-Instruct', max_model_len=32768, gpu_memory_utilization=0.9)
INFO 11-29 10:00:09 llm_engine.py:249] Initializing an LLM engine (v0.6.4) with config: model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1
INFO 11-29 10:00:12 model_runner.py:1072] Starting to load model meta-llama/Llama-3.1-8B-Instruct...
INFO 11-29 10:00:41 model_runner.py:1077] Loading model weights took 14.9888 GB
INFO 11-29 10:00:44 worker.py:232] Memory profiling results: total_gpu_memory=79.15GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=52.89GiB gpu_memory_utilization=0.90
INFO 11-29 10:00:44 gpu_executor.py:113] # GPU blocks: 27078, # CPU blocks: 2048
INFO 11-29 10:00:44 gpu_executor.py:117] Maximum concurrency for 32768 tokens per request: 13.22x
INFO 11-29 10:00:47 model_runner.py:1400] Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static.
INFO 11-29 10:01:02 model_runner.py:1528] Graph capturing finished in 15 secs, took 0.53 GiB
INFO 11-29 10:01:03 launcher.py:19] Available routes are:
INFO:     Started server process [1]
INFO:     Waiting for application startup.
INFO:     Application startup complete.
INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)
"""
body, size, second = [], 0, 0
while size < 1 << 20:
    for _ in range(rng.randint(5, 60)):
        line = 'INFO:     127.0.0.1:%d - "POST /v1/completions HTTP/1.1" 200 OK\n' % rng.randint(32768, 60999)
        body.append(line); size += len(line)
    second += 5
    line = ("INFO 11-29 %02d:%02d:%02d metrics.py:349] Avg prompt throughput: %.1f tokens/s, "
            "Avg generation throughput: %.1f tokens/s, Running: %d reqs, Swapped: 0 reqs, "
            "Pending: %d reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: 0.0%%.\n"
            % (11 + second // 3600 % 12, second // 60 % 60, second % 60, rng.uniform(100, 9000),
               rng.uniform(50, 900), rng.randint(1, 64), rng.randint(0, 9), rng.uniform(1, 99)))
    body.append(line); size += len(line)
oom = cases[0]["result"]["traceback"].strip().split("\n")[-1].split(": ", 1)[1]
tail = """ERROR 11-29 12:00:00 async_llm_engine.py:64] Engine background task failed
ERROR 11-29 12:00:00 async_llm_engine.py:64] Traceback (most recent call last):
ERROR 11-29 12:00:00 async_llm_engine.py:64]   File "/usr/local/lib/python3.12/dist-packages/vllm/worker/model_runner.py", line 1654, in execute_model
ERROR 11-29 12:00:00 async_llm_engine.py:64]     hidden_or_intermediate_states = model_executable(
ERROR 11-29 12:00:00 async_llm_engine.py:64] torch.OutOfMemoryError: %s
INFO:     Shutting down
INFO:     Finished server process [1]
""" % oom
for name, text in (("header", header), ("body", "".join(body)), ("tail", tail)):
    open("%s/serving-%s.log" % (out, name), "w").write(text)
# h200: every case's output (memory summaries unfolded), the first case's OOM last
parts = []
for case in cases[1:] + cases[:1]:
    parts.append(case["stdout"].split("RESULT_JSON")[0])
    result = case.get("result") or {}
    parts.append(result.get("memory_summary", ""))
    parts.append(result.get("traceback", ""))
text = "\n".join(p.strip("\n") for p in parts if p) + "\n"
open("%s/h200.log" % out, "w").write(text)
PY
}

if [[ "$SOURCE" == varied* ]]; then
    engine=${SOURCE#varied}
    engine=${engine#-}
    if [ ! -s "$LOG" ] || [ scripts/gen_serving_log.py -nt "$LOG" ]; then
        python3 scripts/gen_serving_log.py --engine "${engine:-mixed}" --size-mib "$SIZE_MIB" "$LOG"
    fi
elif [ "$SOURCE" = serving ] && { [ ! -s "$LOG" ] || [ "$0" -nt "$LOG" ]; }; then
    dir=$(mktemp -d)
    gen_sources "$dir"
    { cat "$dir/serving-header.log"
      for _ in $(seq "$SIZE_MIB"); do cat "$dir/serving-body.log"; done
      cat "$dir/serving-tail.log"; } > "$LOG"
    rm -rf "$dir"
elif [ "$SOURCE" = h200 ]; then
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    gen_sources "$dir"
    SOURCE=$dir/h200.log
    if [ -s "$LOG" ] && [ "$LOG" -nt "$0" ]; then
        touch -d '2000-01-01' "$SOURCE" # keep the log built earlier
    else
        rm -f "$LOG"
    fi
fi

if [ "$SOURCE" != serving ] && [[ "$SOURCE" != varied* ]] && { [ ! -s "$LOG" ] || [ "$SOURCE" -nt "$LOG" ]; }; then
    body=$(mktemp)
    chunk=$(mktemp)
    # The body must not hold the failure itself: drop the last line and any failure line.
    head -n -1 "$SOURCE" | grep -v -E 'out of memory|OutOfMemory|Free memory on device|max seq len|No available memory|Not enough memory|cudaMalloc failed' > "$body"
    : > "$chunk"
    while [ "$(stat -c %s "$chunk")" -lt 1048576 ]; do cat "$body" >> "$chunk"; done
    for _ in $(seq "$SIZE_MIB"); do cat "$chunk"; done > "$LOG"
    cat "$SOURCE" >> "$LOG"
    rm -f "$body" "$chunk"
fi

measure() { # prints "wall_seconds cpu_seconds max_rss_kib"
    local report out
    report=$(mktemp)
    out=$(mktemp)
    # stdout goes to a file, not /dev/null: GNU grep stops at the first match when its
    # output is /dev/null.
    /usr/bin/time -v "$@" > "$out" 2> "$report" || true
    rm -f "$out"
    local wall rss user sys
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$report")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$report")
    user=$(awk -F': ' '/User time/ {print $2}' "$report")
    sys=$(awk -F': ' '/System time/ {print $2}' "$report")
    rm -f "$report"
    # wall is [h:]m:ss.cc
    awk -v t="$wall" -v r="$rss" -v u="$user" -v y="$sys" 'BEGIN { n = split(t, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f %.2f %d\n", s, u + y, r }'
}

cat "$LOG" > /dev/null # warm the page cache
# Shared machines are noisy: RUNS runs of each, alternated, the fastest (by wall) kept.
RUNS=${RUNS:-3}
best() { # keeps the run with the least wall time of "wall cpu rss" lines on stdin
    sort -n | head -n 1
}
measure grep -c 'out of memory' "$LOG" > /dev/null
measure "$BIN" explain --json "$LOG" > /dev/null
grep_runs= oom_runs=
for _ in $(seq "$RUNS"); do
    grep_runs+="$(measure grep -c 'out of memory' "$LOG")"$'\n'
    oom_runs+="$(measure "$BIN" explain --json "$LOG")"$'\n'
done
read -r grep_s grep_cpu grep_rss < <(printf '%s' "$grep_runs" | best)
read -r oom_s oom_cpu oom_rss < <(printf '%s' "$oom_runs" | best)
# The same on one core (explain reads, scans and explains on several threads).
one_s=
if command -v taskset > /dev/null; then
    read -r one_s _ _ < <(measure taskset -c 0 "$BIN" explain --json "$LOG")
fi

size=$(stat -L -c %s "$LOG")
lines=$(wc -l < "$LOG")
echo "log:      $LOG ($((size / 1048576)) MiB, $lines lines, from $SOURCE)"
echo "cpu:      $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
echo "baseline: grep -c 'out of memory' ($(grep --version | head -n 1)), same file, same page cache"
echo "machine:  $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, load $(cut -d' ' -f1-3 /proc/loadavg), locale ${LC_ALL:-${LC_CTYPE:-${LANG:-POSIX}}}"
echo "grep -c:  ${grep_s} s wall, ${grep_cpu} s cpu, max RSS $((grep_rss / 1024)) MiB"
echo "explain:  ${oom_s} s wall, ${oom_cpu} s cpu, max RSS $((oom_rss / 1024)) MiB"
awk -v a="$oom_s" -v b="$grep_s" -v c="$oom_cpu" -v d="$grep_cpu" 'BEGIN { if (b > 0 && d > 0) printf "ratio:    %.2fx wall, %.2fx cpu (goal: 2x wall)\n", a / b, c / d }'
if [ -n "$one_s" ]; then
    awk -v a="$one_s" -v b="$grep_s" 'BEGIN { if (b > 0) printf "1 core:   %s s wall, %.2fx grep\n", a, a / b }'
fi
awk -v r="$oom_rss" 'BEGIN { printf "rss:      %s (limit 64 MiB)\n", (r < 65536) ? "ok" : "OVER" }'
if [ -n "${EVERY_LINE:-}" ]; then
    # The same log with every line parsed (`--every-line`), once: what the tiers save.
    read -r full_s full_cpu full_rss < <(measure "$BIN" explain --every-line --json "$LOG")
    echo "every line: ${full_s} s wall, ${full_cpu} s cpu, max RSS $((full_rss / 1024)) MiB (explain --every-line)"
fi
