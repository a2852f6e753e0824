#!/usr/bin/env bash
# Device test of `oomdoc run` on one H200 (issue 6). Builds nothing: uses target/release/oomdoc.
#   1. load ~20 GiB of "weights", convert them (a +10 GiB transient for 30 ms), then OOM:
#      the record must show the phase, the transient peak in format_conversion, the free memory
#      before start, and an inventory at the OOM;
#   2. 40 spikes of 2 GiB held 10 ms: the fraction oomdoc catches at its default 1 kHz, against
#      `nvidia-smi --query-gpu=memory.used -lms 100` beside it; the sampler's CPU cost;
#   3. --torch-snapshot on the OOM program (smaller): the snapshot exists and `oomdoc snapshot`
#      reads it.
# Results and a summary go to $OUT (a temporary directory if unset). Takes about a minute.
set -u
cd "$(dirname "$0")/../../.."
OOMDOC=${OOMDOC:-target/release/oomdoc}
HERE=tests/device/run
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
echo "results in $OUT"
"$OOMDOC" --version
nvidia-smi --query-gpu=index,uuid,name,memory.used,memory.total --format=csv

echo "== 1. load, convert, OOM"
"$OOMDOC" run --out "$OUT/run1" -- python3 "$HERE/load_convert_oom.py" --times "$OUT/run1_times.json" \
  > "$OUT/run1.stdout" 2> "$OUT/run1.stderr"
echo "exit $?"; tail -n 12 "$OUT/run1.stderr"

echo "== 2. 10 ms spikes"
nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader,nounits -i 0 -lms 100 > "$OUT/nvidia_smi.csv" 2>/dev/null &
SMI=$!
sleep 1
"$OOMDOC" run --out "$OUT/run2" -- python3 "$HERE/spikes.py" --times "$OUT/run2_times.json" \
  > "$OUT/run2.stdout" 2> "$OUT/run2.stderr"
echo "exit $?"; tail -n 6 "$OUT/run2.stderr"
sleep 0.5
kill "$SMI" 2>/dev/null; wait "$SMI" 2>/dev/null

echo "== 3. --torch-snapshot"
"$OOMDOC" run --torch-snapshot --out "$OUT/run3" -- python3 "$HERE/load_convert_oom.py" --weights-gib 4 --transient-gib 2 \
  > "$OUT/run3.stdout" 2> "$OUT/run3.stderr"
echo "exit $?"; tail -n 6 "$OUT/run3.stderr"
cat "$OUT/run3/torch_snapshot.notes.txt" 2>/dev/null
if [ -f "$OUT/run3/torch_snapshot.pickle" ] && "$OOMDOC" snapshot --help >/dev/null 2>&1; then
  "$OOMDOC" snapshot "$OUT/run3/torch_snapshot.pickle" > "$OUT/run3_snapshot.txt" 2>&1
  STATUS=$?
  # An unbuilt `snapshot` verb says so; then there is nothing to check yet.
  grep -q "is not built yet" "$OUT/run3_snapshot.txt" || echo "$STATUS" > "$OUT/run3_snapshot_status.txt"
  head -n 20 "$OUT/run3_snapshot.txt"
fi

echo "== checks"
python3 "$HERE/check.py" "$OUT"
