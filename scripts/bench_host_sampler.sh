#!/usr/bin/env bash
# Benchmark for issue 17's bound: host-memory sampling in `oomdoc run` (RSS of the child's
# process tree from /proc and the memory cgroup's charge, `src/source/host_memory.rs`) at its
# default 10 Hz must cost < 1 % of one core.
#
#   cargo build --release && scripts/bench_host_sampler.sh
#
# Runs `oomdoc run` on a tree of N sleeping processes for DURATION seconds, once with host
# sampling (the default) and once with `--no-host-memory`, REPEAT times each, alternating. The
# figure is oomdoc's own CPU time (`memory.oomdoc_cpu_ms` of run.json: utime + stime of all its
# threads from /proc/self/stat, 10 ms ticks) over the run's wall time (`duration_ms`); the
# difference between on and off is the sampler's cost. Without NVML (or with it) the GPU sampler
# is the same in both cases. Also prints how many processes /proc lists: each reading lists them
# all (and reads `stat` of the ones not seen at the previous reading).
# Environment: OOMDOC (binary; default target/release/oomdoc, else
# $CARGO_TARGET_DIR/release/oomdoc), DURATION (seconds per run, default 20), TREES (tree sizes,
# default "1 16 64"), REPEAT (default 2).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${OOMDOC:-}
for candidate in "$root/target/release/oomdoc" "${CARGO_TARGET_DIR:-$root/target}/release/oomdoc"; do
    [ -n "$bin" ] || { [ -x "$candidate" ] && bin=$candidate; }
done
[ -n "$bin" ] && [ -x "$bin" ] || { echo "no oomdoc binary (cargo build --release)" >&2; exit 2; }
duration=${DURATION:-20}
trees=${TREES:-"1 16 64"}
repeat=${REPEAT:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) CPUs, $(uname -sr), $(ls /proc | grep -c '^[0-9]') processes in /proc, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary: $bin ($("$bin" --version | head -n 1))"
echo "case                              runs  wall s  oomdoc CPU ms  CPU % of one core  host readings"

# One run: prints "wall_s cpu_ms readings".
one() {
    local directory="$work/run-$RANDOM$RANDOM"
    "$bin" run --out "$directory" "$@" -- bash -c \
        "for i in \$(seq $n); do sleep $duration & done; wait" > /dev/null 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["duration_ms"] / 1000, r["memory"]["oomdoc_cpu_ms"], (r.get("host") or {}).get("readings", 0))' \
        "$directory/run.json"
    rm -rf "$directory"
}

verdict=ok
for n in $trees; do
    declare -A wall=() cpu=() readings=()
    for _ in $(seq "$repeat"); do
        for mode in on off; do
            if [ "$mode" = on ]; then result=$(one); else result=$(one --no-host-memory); fi
            read -r w c r <<<"$result"
            wall[$mode]=$(awk -v a="${wall[$mode]:-0}" -v b="$w" 'BEGIN { print a + b }')
            cpu[$mode]=$(awk -v a="${cpu[$mode]:-0}" -v b="$c" 'BEGIN { print a + b }')
            readings[$mode]=$(( ${readings[$mode]:-0} + r ))
        done
    done
    for mode in on off; do
        percent=$(awk -v c="${cpu[$mode]}" -v w="${wall[$mode]}" 'BEGIN { printf "%.3f", c / 10 / w }')
        label="tree of $((n + 1)), host sampling $mode"
        printf "%-33s %4s  %6.1f  %13.0f  %17s  %13s\n" "$label" "$repeat" "${wall[$mode]}" \
            "${cpu[$mode]}" "$percent" "${readings[$mode]}"
    done
    added=$(awk -v a="${cpu[on]}" -v b="${cpu[off]}" -v wa="${wall[on]}" -v wb="${wall[off]}" \
        'BEGIN { printf "%.3f", (a / wa - b / wb) / 10 }')
    echo "  added by host sampling: $added % of one core"
    if awk -v p="$added" 'BEGIN { exit !(p >= 1) }'; then verdict=fail; fi
    unset wall cpu readings
done
[ "$verdict" = ok ] && echo "bound: ok (< 1 % of one core added at 10 Hz)" \
    || echo "bound: FAIL (>= 1 % of one core added at 10 Hz)"
echo "(CPU time is counted in 10 ms ticks: over ${duration} s x ${repeat} runs one tick is $(awk -v d="$duration" -v r="$repeat" 'BEGIN { printf "%.4f", 1 / d / r }') %)"
