#!/usr/bin/env bash
# Device test for issue 19 (speed and HTML on a real large snapshot), for a lent GPU machine
# with torch 2.11. Builds nothing: uses target/release/oomdoc from the repository root.
#
#   AREA_TIMEOUT=600 bash tests/device/run_all.sh snapshot_big     # results in $OUT
#
# Trains a small transformer (AdamW, bf16 autocast) with
# torch.cuda.memory._record_memory_history(max_entries=STEPS_ENTRIES, stacks="all") until the
# trace holds about 3M entries (ENTRIES; at most 240 s of training), dumps the snapshot (several hundred MB: real frames, real C++
# stacks), then measures side by side, as scripts/bench_snapshot.sh does: Python's
# pickle.load alone against `oomdoc snapshot --json` (full analysis), wall and CPU seconds and
# peak RSS (/usr/bin/time -v), and `oomdoc snapshot --format html` (time, page size). Checks:
# oomdoc reads it (exit 0), its trace entry count equals the pickle's, and prints the ratios
# (target: 20x Python's CPU time, peak RSS at most half the file). Then the same file from
# stdin (read in place, no read-ahead thread: the read-ahead's effect), gzip -1 from a file
# (inflated on the read-ahead thread), and the file on 16 threads (OOMDOC_THREADS=16: the
# pre-scan and the trace split over threads): each must give the report of the default run
# (one thread). Keeps figures, not the snapshot, in $OUT.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
oomdoc=$root/target/release/oomdoc
out=${OUT:-$root/out-snapshot-big}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x "$oomdoc" ] || { echo "FAIL: no $oomdoc (build it first)"; exit 1; }
entries=${ENTRIES:-3000000}

python3 - "$work/big.pickle" "$entries" <<'PY'
import sys, time, torch, torch.nn as nn
path, entries = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
torch.cuda.memory._record_memory_history(max_entries=entries, stacks="all")
layer = nn.TransformerEncoderLayer(1024, 16, 4096, batch_first=True)
model = nn.TransformerEncoder(layer, 12).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
def step():
    x = torch.randn(8, 512, 1024, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
step()
per_step = len(torch.cuda.memory._snapshot()["device_traces"][0])  # once: it symbolizes
start, steps = time.time(), 1
while steps * per_step < entries and time.time() - start < 240:
    step()
    steps += 1
torch.cuda.synchronize()
n = min(entries, steps * per_step)
torch.cuda.memory._dump_snapshot(path)
print(f"steps {steps}, about {per_step} trace entries each, ~{n} kept")
PY

size=$(stat -c %s "$work/big.pickle")
echo "snapshot: $size bytes"
cat "$work/big.pickle" > /dev/null
/usr/bin/time -v python3 -c 'import pickle, sys; s = pickle.load(open(sys.argv[1], "rb")); print(len(s["device_traces"][0]))' \
    "$work/big.pickle" > "$out/python.entries" 2> "$out/python.time"
/usr/bin/time -v "$oomdoc" snapshot "$work/big.pickle" --json > "$work/oomdoc.json" 2> "$out/oomdoc.time"
/usr/bin/time -v "$oomdoc" snapshot "$work/big.pickle" --format html -o "$out/big.html" 2> "$out/html.time"
# A file is read ahead by a thread of its own; stdin is read in place on the decoder's thread:
# the same decoder both ways, so these two runs measure the read-ahead. Then gzip -1 (inflated on
# the read-ahead thread; stdin does not take gzip).
/usr/bin/time -v "$oomdoc" snapshot - --json < "$work/big.pickle" > "$work/stdin.json" 2> "$out/stdin.time"
# 16 threads (OOMDOC_THREADS=16): the parallel decoder on the same file.
OOMDOC_THREADS=16 /usr/bin/time -v "$oomdoc" snapshot "$work/big.pickle" --json > "$work/threads16.json" \
    2> "$out/threads16.time"
gzip -1 -c "$work/big.pickle" > "$work/big.pickle.gz"
/usr/bin/time -v "$oomdoc" snapshot "$work/big.pickle.gz" --json > "$work/gz.json" 2> "$out/gz.time"
python3 - "$size" "$out" "$work/oomdoc.json" <<'PY'
import json, sys
size, out, report = int(sys.argv[1]), sys.argv[2], json.load(open(sys.argv[3]))
def measure(path):
    f = {}
    for line in open(path):
        k, _, v = line.strip().rpartition(": ")
        f[k] = v
    clock = [float(p) for p in f["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":")]
    wall = sum(p * 60 ** i for i, p in enumerate(reversed(clock)))
    return wall, float(f["User time (seconds)"]) + float(f["System time (seconds)"]), int(f["Maximum resident set size (kbytes)"]) * 1024
py, oo, html = (measure(f"{out}/{n}.time") for n in ("python", "oomdoc", "html"))
entries = report["devices"][0]["trace"]["entries"]
python_entries = int(open(f"{out}/python.entries").read())
mib = 2 ** 20
lines = [
    f"file {size / mib:.1f} MiB, {entries} trace entries (pickle.load: {python_entries})",
    f"python pickle.load   wall {py[0]:.2f} s  cpu {py[1]:.2f} s  rss {py[2] / mib:.1f} MiB",
    f"oomdoc snapshot      wall {oo[0]:.2f} s  cpu {oo[1]:.2f} s  rss {oo[2] / mib:.1f} MiB",
    f"oomdoc --format html wall {html[0]:.2f} s  cpu {html[1]:.2f} s  rss {html[2] / mib:.1f} MiB",
] + [
    f"oomdoc {label:13} wall {f[0]:.2f} s  cpu {f[1]:.2f} s  rss {f[2] / mib:.1f} MiB"
    for label, f in (
        (name, measure(f"{out}/{name}.time")) for name in ("stdin", "gz", "threads16")
    )
] + [
    f"speed-up cpu {py[1] / oo[1]:.1f}x wall {py[0] / oo[0]:.1f}x (target 20x); rss/file {oo[2] / size:.2f} (target 0.5)",
    "16 threads: speed-up wall {:.1f}x; rss/file {:.2f}".format(
        py[0] / measure(f"{out}/threads16.time")[0], measure(f"{out}/threads16.time")[2] / size
    ),
]
print("\n".join(lines))
open(f"{out}/figures.txt", "w").write("\n".join(lines) + "\n")
same = [json.load(open(f"{sys.argv[3].rsplit('/', 1)[0]}/{name}.json")) == report
        for name in ("stdin", "gz", "threads16")]
print("PASS: stdin, gzip and 16 threads give the same report" if all(same) else f"FAIL: same report {same}")
ok = entries == python_entries and all(same)
print("PASS: oomdoc read every trace entry" if ok else f"FAIL: {entries} != {python_entries}")
sys.exit(0 if ok else 1)
PY
