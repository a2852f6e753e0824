#!/usr/bin/env bash
# Speed of `oomdoc snapshot` on a machine with free cores (issue 19's target: 20x Python's
# pickle.load on the same ~600 MB snapshot, peak RSS at most half the file), with builds
# compared in alternated rounds on the same warm machine. Needs no GPU; it lives here because
# the figure that decides is the lent host's (16 cores), not a 2-core VM's.
#
#   BINS="base=/path/to/old cand=target/release/oomdoc" ROUNDS=10 PYRUNS=3 \
#       bash tests/device/snapshot_speed/run.sh          # figures in $OUT
#
# BINS: name=binary pairs, the first the baseline (default: cand=target/release/oomdoc; a
# `.gz` binary is unpacked first). SHAPES (default "varied real"), TARGET_MIB (690: about 577
# and 525 MiB) and SEED (19) are passed to scripts/gen_snapshot.py. Each round runs every build
# once per shape in a rotated order, and Python's pickle.load in the first PYRUNS rounds; wall
# from bash's EPOCHREALTIME, CPU and peak RSS from /usr/bin/time -v. Before timing, every
# build's report (JSON and text, default threads and one thread) must equal the baseline's
# default one byte for byte; PROFILES runs of each build with OOMDOC_PROFILE=1 are kept in
# $OUT/profiles.txt (where each phase began and how long it ran). Writes $OUT/summary.txt: per
# build the range and median of wall seconds, median CPU, peak RSS against the file, the ratio
# to Python (best against best, median against median) and the paired difference from the
# baseline, round by round.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${OUT:-$root/out-snapshot-speed}
mkdir -p "$out"
work=${WORK:-$(mktemp -d)}
rounds=${ROUNDS:-6}
pyruns=${PYRUNS:-2}
profiles=${PROFILES:-2}
target_mib=${TARGET_MIB:-690}
seed=${SEED:-19}
read -r -a shapes <<< "${SHAPES:-varied real}"
read -r -a pairs <<< "${BINS:-cand=$root/target/release/oomdoc}"

names=()
for pair in "${pairs[@]}"; do
    name=${pair%%=*}
    path=${pair#*=}
    [ -f "$path" ] || { echo "FAIL: no binary $path for $name"; exit 1; }
    if [[ $path == *.gz ]]; then
        gzip -dc "$path" > "$work/$name.bin"
    else
        cp "$path" "$work/$name.bin"
    fi
    chmod +x "$work/$name.bin"
    names+=("$name")
done
{
    echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
    for name in "${names[@]}"; do echo "build $name: $(sha256sum "$work/$name.bin" | cut -c1-16)"; done
} > "$out/host.txt"
cat "$out/host.txt"

times=$out/times.tsv
: > "$times"
: > "$out/profiles.txt"
for shape in "${shapes[@]}"; do
    file=$work/bench-$target_mib-$seed-$shape.pickle
    [ -s "$file" ] || python3 "$root/scripts/gen_snapshot.py" "$file" "$target_mib" "$seed" "$shape" >&2
    size=$(stat -c %s "$file")
    echo "$shape: $size bytes"
    cat "$file" > /dev/null
    # Identity first: a faster build that says something else is no result.
    first=${names[0]}
    "$work/$first.bin" snapshot "$file" --json > "$work/ref.json"
    "$work/$first.bin" snapshot "$file" > "$work/ref.txt"
    for name in "${names[@]}"; do
        for threads in default 1; do
            env_threads=()
            [ "$threads" = default ] || env_threads=(OOMDOC_THREADS=1)
            env "${env_threads[@]}" "$work/$name.bin" snapshot "$file" --json > "$work/got.json"
            env "${env_threads[@]}" "$work/$name.bin" snapshot "$file" > "$work/got.txt"
            if cmp -s "$work/got.json" "$work/ref.json" && cmp -s "$work/got.txt" "$work/ref.txt"; then
                echo "$shape $name threads=$threads: report identical to $first's"
            else
                echo "FAIL: $shape $name threads=$threads: report differs from $first's"
                diff "$work/ref.txt" "$work/got.txt" | head -20 || true
                exit 1
            fi
        done
        for run in $(seq "$profiles"); do
            echo "### $shape $name run $run" >> "$out/profiles.txt"
            OOMDOC_PROFILE=1 "$work/$name.bin" snapshot "$file" --json 2>> "$out/profiles.txt" > /dev/null
        done
    done
    timed() { # label, then the command
        local label=$1
        shift
        local start end
        start=$EPOCHREALTIME
        /usr/bin/time -v "$@" > /dev/null 2> "$work/time.txt"
        end=$EPOCHREALTIME
        python3 - "$work/time.txt" "$shape" "$round" "$label" "$start" "$end" "$size" >> "$times" <<'PY'
import sys
path, shape, rnd, label, start, end, size = sys.argv[1:]
fields = {}
for line in open(path):
    key, _, value = line.strip().rpartition(": ")
    fields[key] = value
cpu = float(fields["User time (seconds)"]) + float(fields["System time (seconds)"])
rss = int(fields["Maximum resident set size (kbytes)"]) * 1024
print(f"{shape}\t{rnd}\t{label}\t{float(end) - float(start):.4f}\t{cpu:.2f}\t{rss}\t{size}")
PY
    }
    for round in $(seq "$rounds"); do
        if [ "$round" -le "$pyruns" ]; then
            timed python python3 -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' "$file"
        fi
        count=${#names[@]}
        for index in $(seq 0 $((count - 1))); do
            name=${names[$(((index + round) % count))]}
            timed "$name" "$work/$name.bin" snapshot "$file" --json
        done
    done
    [ -n "${WORK:-}" ] || rm -f "$file"
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/host.txt"

python3 - "$times" "${names[@]}" > "$out/summary.txt" <<'PY'
import statistics, sys
from collections import defaultdict
rows = [line.split("\t") for line in open(sys.argv[1]) if line.strip()]
first = sys.argv[2]
order = ["python"] + sys.argv[2:]
by = defaultdict(list)
for shape, rnd, label, wall, cpu, rss, size in rows:
    by[shape, label].append((int(rnd), float(wall), float(cpu), int(rss), int(size)))
mib = 2 ** 20
for shape in dict.fromkeys(row[0] for row in rows):
    labels = [label for label in order if (shape, label) in by]
    python = by.get((shape, "python"), [])
    size = by[shape, labels[-1]][0][4]
    print(f"{shape}: {size / mib:.1f} MiB")
    py_walls = sorted(r[1] for r in python)
    for label in labels:
        runs = by[shape, label]
        walls = sorted(r[1] for r in runs)
        cpus = sorted(r[2] for r in runs)
        rss = max(r[3] for r in runs)
        line = (f"  {label:8} wall {walls[0]:.3f}-{walls[-1]:.3f} median {statistics.median(walls):.3f} s"
                f", CPU median {statistics.median(cpus):.2f} s, peak RSS {rss / mib:.1f} MiB"
                f" ({rss / size:.3f} of the file), {len(runs)} runs")
        if label != "python" and py_walls:
            line += (f"; Python/this {py_walls[0] / walls[0]:.1f}x best, "
                     f"{statistics.median(py_walls) / statistics.median(walls):.1f}x median")
        if label not in ("python", first) and (shape, first) in by:
            base = {r[0]: r[1] for r in by[shape, first]}
            diffs = [r[1] - base[r[0]] for r in runs if r[0] in base]
            if diffs:
                faster = sum(d < 0 for d in diffs)
                line += (f"; paired minus {first}: median {statistics.median(diffs):+.4f} s, "
                         f"faster in {faster} of {len(diffs)}")
        print(line)
PY
cat "$out/summary.txt"
