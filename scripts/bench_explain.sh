#!/usr/bin/env bash
# Benchmark (not a test) for issue 2: `oomdoc explain` on a ~1 GiB engine log must take at most
# 3x the time of `grep -c 'out of memory'` on the same file and stay under 64 MiB RSS.
#
# Usage: scripts/bench_explain.sh [SOURCE_LOG]
#   SOURCE_LOG  a real log whose last line is the failure (default: the bundled vLLM example)
#   SIZE_MIB    size of the generated log (default 1024)
#   OOMDOC      the binary (default: $CARGO_TARGET_DIR/release/oomdoc or target/release/oomdoc)
#
# The log is the source without its last line, repeated to SIZE_MIB, then the whole source
# (so the failure comes at the very end, after ~1 GiB of engine lines). Both commands run
# twice on a warm page cache; the second run is reported.
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

if [ ! -s "$LOG" ] || [ "$SOURCE" -nt "$LOG" ]; then
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
measure grep -c 'out of memory' "$LOG" > /dev/null
read -r grep_s grep_cpu grep_rss < <(measure grep -c 'out of memory' "$LOG")
measure "$BIN" explain --json "$LOG" > /dev/null
read -r oom_s oom_cpu oom_rss < <(measure "$BIN" explain --json "$LOG")

size=$(stat -c %s "$LOG")
lines=$(wc -l < "$LOG")
echo "log:      $LOG ($((size / 1048576)) MiB, $lines lines, from $SOURCE)"
echo "machine:  $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM"
echo "grep -c:  ${grep_s} s wall, ${grep_cpu} s cpu, max RSS $((grep_rss / 1024)) MiB"
echo "explain:  ${oom_s} s wall, ${oom_cpu} s cpu, max RSS $((oom_rss / 1024)) MiB"
awk -v a="$oom_s" -v b="$grep_s" -v c="$oom_cpu" -v d="$grep_cpu" 'BEGIN { if (b > 0 && d > 0) printf "ratio:    %.2fx wall, %.2fx cpu (limit 3x)\n", a / b, c / d }'
awk -v r="$oom_rss" 'BEGIN { printf "rss:      %s (limit 64 MiB)\n", (r < 65536) ? "ok" : "OVER" }'
