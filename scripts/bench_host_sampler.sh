#!/usr/bin/env bash
# Benchmark for issue 17's bound: the host-memory sampler (RSS of a process tree from /proc and
# the memory cgroup's files, `src/source/host_memory.rs`) at its default 10 Hz must cost < 1 %
# of one core.
#
#   cargo build --release --example host_watch && scripts/bench_host_sampler.sh
#
# Runs `host_watch` (examples/host_watch.rs: the sampler around a child) over a tree of N
# sleeping processes for DURATION seconds, at 100 ms (the default) and at 10 ms (10x the rate,
# to show the headroom), and once with sampling off (one reading at start: the baseline of a
# process that only waits for its child). CPU = utime+stime of host_watch from /proc/self/stat
# (its own report), over the wall time. Also prints how many processes /proc lists: each
# reading lists them all (and reads `stat` of the ones not seen at the previous reading).
# Environment: HOST_WATCH (binary; default $CARGO_TARGET_DIR/release/examples/host_watch),
# DURATION (seconds per case, default 20), TREES (tree sizes, default "1 16 64").
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
watch=${HOST_WATCH:-${CARGO_TARGET_DIR:-$root/target}/release/examples/host_watch}
duration=${DURATION:-20}
trees=${TREES:-"1 16 64"}
[ -x "$watch" ] || { echo "no host_watch at $watch (cargo build --release --example host_watch)" >&2; exit 2; }

echo "machine: $(nproc) CPUs, $(uname -sr), $(ls /proc | grep -c '^[0-9]') processes in /proc"
echo "case                                       samples  wall s   CPU ms  CPU % of one core"

verdict=ok
for n in $trees; do
    for interval in 1000000 100 10; do
        # The child: a shell holding N sleeping children for DURATION seconds.
        report=$("$watch" --interval-ms "$interval" -- bash -c \
            "for i in \$(seq $n); do sleep $duration & done; wait")
        read -r samples wall cpu < <(python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
print(r["sample_count"], r["wall_ms"] / 1000, r["host_watch_cpu_ms"])' <<<"$report")
        percent=$(awk -v c="$cpu" -v w="$wall" 'BEGIN { printf "%.3f", c / 10 / w }')
        case $interval in
            1000000) label="tree of $((n + 1)), sampling off" ;;
            *) label="tree of $((n + 1)), every $interval ms" ;;
        esac
        printf "%-42s %7s  %6.1f  %7.0f  %s\n" "$label" "$samples" "$wall" "$cpu" "$percent"
        if [ "$interval" = 100 ] && awk -v p="$percent" 'BEGIN { exit !(p >= 1) }'; then
            verdict=fail
        fi
    done
done
[ "$verdict" = ok ] && echo "bound: ok (< 1 % of one core at 100 ms)" || echo "bound: FAIL (>= 1 % of one core at 100 ms)"
echo "(CPU time is counted in 10 ms ticks: over ${duration} s one tick is $(awk -v d="$duration" 'BEGIN { printf "%.3f", 1 / d }') %)"
