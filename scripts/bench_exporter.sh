#!/usr/bin/env bash
# Benchmark for issue 20's bound: `oomdoc exporter` with 8 GPUs (replay) and 100 followed
# files, scraped once per 15 s, must hold <= 32 MiB RSS and < 1 % of a core; a flood of log
# lines into one file must not grow its memory without bound.
#
#   cargo build --release && scripts/bench_exporter.sh
#
# Environment: OOMDOC (binary; default $CARGO_TARGET_DIR/release/oomdoc), DURATION (seconds of
# the steady phase, default 120), SCRAPE (seconds between scrapes, default 15), FILES (default
# 100), FLOOD (seconds of the flood, default 20), FLOOD_MIB_S (flood rate cap, default 64 MiB/s).
# Figures: VmHWM/VmRSS from /proc/PID/status, CPU = utime+stime from /proc/PID/stat.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
oomdoc=${OOMDOC:-${CARGO_TARGET_DIR:-$root/target}/release/oomdoc}
duration=${DURATION:-120}
scrape=${SCRAPE:-15}
nfiles=${FILES:-100}
flood=${FLOOD:-20}
flood_rate=${FLOOD_MIB_S:-64}
gpus=$root/tests/fixtures/gpus/synthetic-8xh200.json
[ -x "$oomdoc" ] || { echo "no oomdoc binary at $oomdoc (cargo build --release)" >&2; exit 2; }

tmp=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# 100 pod-log-shaped files (CRI format), each with some history (not read: start at the end).
for i in $(seq 1 "$nfiles"); do
    dir=$tmp/pods/ns_pod-${i}_uid-${i}/engine
    mkdir -p "$dir"
    for _ in $(seq 20); do
        echo "2026-12-01T12:00:00.000000000Z stderr F INFO 12-01 12:00:00 [engine.py:100] Avg prompt throughput: 0.0 tokens/s"
    done >"$dir/0.log"
done

"$oomdoc" exporter --listen 127.0.0.1:0 --gpu-from "$gpus" \
    --follow "$tmp/pods/*/*/*.log" 2>"$tmp/exporter.err" &
pid=$!
pids+=("$pid")
addr=""
for _ in $(seq 100); do
    addr=$(sed -n 's#.*listening on http://\([^/]*\)/metrics.*#\1#p' "$tmp/exporter.err")
    [ -n "$addr" ] && break
    sleep 0.1
done
[ -n "$addr" ] || { cat "$tmp/exporter.err" >&2; exit 1; }

status() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; } # kB
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
mib() { awk -v kb="$1" 'BEGIN { printf "%.1f", kb / 1024 }'; }

echo "machine: $(uname -srm); $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)); $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "binary:  $oomdoc ($("$oomdoc" --version))"
echo "inputs:  $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$gpus" 2>/dev/null || echo 8) GPUs replayed from ${gpus#$root/}, $nfiles followed files (CRI), one scrape per ${scrape} s for ${duration} s, one line per second appended, round-robin over the files"

sleep 6 # past the first glob expansion (every 5 s) and start-up
curl -fsS "http://$addr/metrics" >"$tmp/first.prom"
echo "metrics: $(grep -c '^oomdoc_gpu_memory_total_bytes' "$tmp/first.prom") GPU series, followed files $(awk '/^oomdoc_followed_files/ {print $2}' "$tmp/first.prom"), $(wc -c <"$tmp/first.prom") bytes per scrape"

# Steady phase: a scrape every $scrape s, a line per second into one of the files.
t0=$(date +%s.%N); c0=$(cpu_ticks)
end=$(( $(date +%s) + duration )); next_scrape=0; i=0
while [ "$(date +%s)" -lt "$end" ]; do
    now=$(date +%s)
    if [ "$now" -ge "$next_scrape" ]; then
        curl -fsS "http://$addr/metrics" >/dev/null
        next_scrape=$(( now + scrape ))
    fi
    i=$(( i % nfiles + 1 ))
    echo "2026-12-01T12:00:01.000000000Z stderr F INFO 12-01 12:00:01 [engine.py:100] Avg prompt throughput: 1.0 tokens/s" \
        >>"$tmp/pods/ns_pod-${i}_uid-${i}/engine/0.log"
    sleep 1
done
t1=$(date +%s.%N); c1=$(cpu_ticks)
steady_cpu=$(awk -v c="$((c1 - c0))" -v hz="$hz" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", 100 * c / hz / (b - a) }')
steady_hwm=$(status VmHWM); steady_rss=$(status VmRSS)
echo "steady:  ${duration} s, CPU $steady_cpu % of one core ($((c1 - c0)) ticks at $hz Hz), VmRSS $(mib "$steady_rss") MiB, VmHWM $(mib "$steady_hwm") MiB"

# Flood: one file written as fast as allowed (cap $flood_rate MiB/s) for $flood s.
floodfile=$tmp/pods/ns_pod-1_uid-1/engine/0.log
python3 - "$floodfile" "$flood" "$flood_rate" <<'PY' &
import sys, time
path, seconds, rate = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]) * 2**20
line = b"2026-12-01T12:00:02.000000000Z stderr F INFO 12-01 12:00:02 [engine.py:100] Avg prompt throughput: 2.0 tokens/s, running: 3 reqs\n"
chunk = line * 512
start = time.time(); written = 0
with open(path, "ab", buffering=0) as f:
    while (now := time.time()) - start < seconds:
        if written > rate * (now - start):
            time.sleep(0.001); continue
        f.write(chunk); written += len(chunk)
print(f"{written / 2**20:.0f} MiB in {seconds:.0f} s ({written // len(line)} lines)", file=open(path + ".flood", "w"))
PY
writer=$!
pids+=("$writer")
f0=$(cpu_ticks); ft0=$(date +%s.%N)
samples=()
for _ in $(seq "$flood"); do
    sleep 1
    samples+=("$(mib "$(status VmRSS)")")
done
wait "$writer" || true
sleep 3
ft1=$(date +%s.%N); f1=$(cpu_ticks)
curl -fsS "http://$addr/metrics" >"$tmp/after.prom"
flood_cpu=$(awk -v c="$((f1 - f0))" -v hz="$hz" -v a="$ft0" -v b="$ft1" 'BEGIN { printf "%.1f", 100 * c / hz / (b - a) }')
echo "flood:   $(cat "$floodfile.flood"), CPU $flood_cpu % of one core; VmRSS each second (MiB): ${samples[*]}"
echo "after:   VmRSS $(mib "$(status VmRSS)") MiB, VmHWM $(mib "$(status VmHWM)") MiB, read $(awk '/^oomdoc_log_read_bytes_total/ {printf "%.0f MiB", $2/1048576}' "$tmp/after.prom")"
kill -TERM "$pid"; wait "$pid" && echo "SIGTERM: exited 0" || echo "SIGTERM: exit status $?"
pids=("${pids[@]/$pid}")

verdict=ok
awk -v kb="$steady_hwm" 'BEGIN { exit !(kb > 32 * 1024) }' && { echo "bound:   FAIL VmHWM > 32 MiB"; verdict=fail; }
awk -v p="$steady_cpu" 'BEGIN { exit !(p >= 1) }' && { echo "bound:   FAIL CPU >= 1 % of a core"; verdict=fail; }
[ "$verdict" = ok ] && echo "bound:   ok (steady VmHWM <= 32 MiB, CPU < 1 % of a core)"
