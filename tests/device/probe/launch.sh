#!/usr/bin/env bash
# Device test of `oomdoc probe --launch --repeat 3` (issue 18) on a GPU machine: oomdoc starts
# tests/device/probe/server.py (a real PyTorch server holding real GPU memory) three times from a
# clean start, probes it through NVML, stops it, and checks GPU memory came back. Two variants:
# clean (want `plateau`) and `--leak` (16 MiB per request kept on the GPU: want `growth`).
# Strict checks, each printed as PASS/FAIL with the numbers behind it; exit 1 on any FAIL.
# Builds nothing: uses target/release/oomdoc. Results in $OUT/launch-<variant>/.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$(mktemp -d)}
BIN=${OOMDOC:-target/release/oomdoc}
PORT=${PORT:-18432}
HERE=tests/device/probe
failures=0

gpu_used_mib() {
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | awk '{s += $1} END {print s}'
}

run_variant() {
  local name=$1; shift
  local dir="$OUT/launch-$name"
  local before; before=$(gpu_used_mib)
  local code=0
  "$BIN" probe "http://127.0.0.1:$PORT" --launch --repeat 3 --memory-from nvml --gpu 0 \
    --ready-timeout 120 --stop-grace 20 --time-limit 120 --out "$dir" --color never \
    -- python3 "$HERE/server.py" --port "$PORT" "$@" \
    > "$OUT/launch-$name.txt" 2> "$OUT/launch-$name.err" || code=$?
  local after; after=$(gpu_used_mib)
  echo "$name: oomdoc exit $code; GPU used before ${before} MiB, after ${after} MiB"
  sed -n '1,12p' "$OUT/launch-$name.txt"
  grep -A8 '^Repeats' "$OUT/launch-$name.txt" || true
  python3 - "$dir" "$name" "$code" "$before" "$after" <<'PY'
import json, os, sys
directory, name, code, before, after = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
want = {"clean": "plateau", "leak": "growth"}[name]
bad = 0
def check(ok, what):
    global bad
    print(f"{name}: {'PASS' if ok else 'FAIL'}: {what}")
    bad += 0 if ok else 1
check(code == 0, f"exit code {code} (want 0)")
try:
    doc = json.load(open(os.path.join(directory, "probe.json")))
except (OSError, ValueError) as error:
    check(False, f"DIR/probe.json readable ({error})")
    sys.exit(1)
check(doc["verdict"] == want, f"verdict {doc['verdict']} (want {want}); {doc['trend']['reason']}")
launches = doc.get("launches", [])
check(len(launches) == 3, f"{len(launches)} launches (want 3)")
check(len({l['pid'] for l in launches}) == len(launches), "a new process each repeat")
for l in launches:
    n = l["repeat"] + 1
    check(l["gpu_release"] == "released", f"repeat {n}: GPU memory {l['gpu_release']}: {l['gpu_release_detail']}")
    check(l["stop"] == "SIGTERM", f"repeat {n}: stopped by {l['stop']} in {l['stop_ms']} ms ({l['exit']})")
    check(not l["exited_on_its_own"], f"repeat {n}: did not exit on its own")
    check(l["time_to_ready_ms"] > 0, f"repeat {n}: ready in {l['time_to_ready_ms']} ms via {l['ready_path']}")
    rdir = os.path.join(directory, f"repeat-{n}")
    try:
        run = json.load(open(os.path.join(rdir, "run.json")))
        samples = sum(len(d.get("samples", [])) for d in run["memory"].get("devices", []))
        check(run["memory"]["available"] and samples > 0, f"repeat {n}: run.json memory timeline, {samples} samples")
        check(run["preflight"].get("inventory") is not None, f"repeat {n}: run.json preflight inventory")
    except (OSError, ValueError, KeyError) as error:
        check(False, f"repeat {n}: run.json ({error})")
    check(os.path.exists(os.path.join(rdir, "probe.json")), f"repeat {n}: probe.json")
    check(os.path.getsize(os.path.join(rdir, "log.txt")) > 0, f"repeat {n}: log.txt")
levels = [r.get("after_identical_bytes") for r in doc["trend"].get("repeats", [])]
print(f"{name}: levels after the identical phase (MiB): {[None if v is None else round(v / 2**20) for v in levels]}")
host = [q.get("host_memory_bytes") for q in doc["requests"]]
check(all(h for h in host), f"host memory (process-tree RSS) read at each of {len(host)} points")
check(after - before <= 256, f"GPU used after all stops {after} MiB vs {before} MiB before (at most +256 MiB)")
sys.exit(1 if bad else 0)
PY
  return $?
}

run_variant clean || failures=$((failures + 1))
run_variant leak --leak || failures=$((failures + 1))
if [ "$failures" -eq 0 ]; then
  echo "PASS: probe --launch clean=plateau leak=growth, memory released after every stop"
else
  echo "FAIL: $failures variant(s) of probe --launch failed (see above)"
  exit 1
fi
