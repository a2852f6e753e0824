#!/usr/bin/env bash
# Device test of `oomdoc probe` (R13, R14) on a GPU machine: a real PyTorch server doing GPU
# inference, probed once clean and once with a deliberate leak; NVML memory must give
# `plateau` for the first and `growth` for the second. Builds nothing: uses
# target/release/oomdoc from the repository root. Results on stdout and in $OUT.
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$(mktemp -d)}
BIN=${OOMDOC:-target/release/oomdoc}
PORT=${PORT:-18431}
HERE=tests/device/probe
nvidia-smi --query-gpu=index,uuid,name,memory.used,memory.total --format=csv > "$OUT/gpus.csv" 2>&1 || true

run_case() {
  local name=$1; shift
  python3 "$HERE/server.py" --port "$PORT" "$@" > "$OUT/server-$name.log" 2>&1 &
  local server=$!
  for _ in $(seq 1 240); do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=1)" 2>/dev/null; then break; fi
    if ! kill -0 "$server" 2>/dev/null; then echo "server $name died:"; cat "$OUT/server-$name.log"; return 1; fi
    sleep 0.5
  done
  local code=0
  "$BIN" probe "http://127.0.0.1:$PORT" --json --memory-from nvml --time-limit 100 \
    > "$OUT/probe-$name.json" 2> "$OUT/probe-$name.err" || code=$?
  "$BIN" probe "http://127.0.0.1:$PORT" --memory-from nvml --time-limit 100 --color never \
    > "$OUT/probe-$name-second-run.txt" 2>&1 || true
  kill "$server"; wait "$server" 2>/dev/null || true
  echo "$name: oomdoc exit $code"
  python3 - "$OUT/probe-$name.json" "$name" <<'PY'
import json, sys
path, name = sys.argv[1], sys.argv[2]
try:
    r = json.load(open(path))
except ValueError:
    print(f"{name}: no JSON report"); sys.exit(0)
w = r["trend"].get("window") or {}
mib = lambda b: "none" if b is None else f"{b / 2**20:.1f} MiB"
print(f"{name}: verdict={r['verdict']} plateau={mib(r['plateau_bytes'])} "
      f"slope={w.get('slope_bytes_per_request', 0) / 2**20:.2f} MiB/request p={w.get('p_value')} "
      f"warmup_growth={mib(r['warmup']['warmup_growth_bytes'])} "
      f"total_growth={mib(r['warmup']['total_growth_bytes'])} steps={len(r['steps'])}")
print(f"{name}: reason: {r['trend']['reason']}")
print(f"{name}: memory: {[None if q['memory_bytes'] is None else round(q['memory_bytes'] / 2**20) for q in r['requests']]}")
PY
}

run_case clean | tee "$OUT/summary.txt"
run_case leak --leak | tee -a "$OUT/summary.txt"
clean=$(python3 -c "import json;print(json.load(open('$OUT/probe-clean.json'))['verdict'])" 2>/dev/null || echo none)
leak=$(python3 -c "import json;print(json.load(open('$OUT/probe-leak.json'))['verdict'])" 2>/dev/null || echo none)
status=0
if [ "$clean" = plateau ] && [ "$leak" = growth ]; then
  echo "PASS: clean=$clean leak=$leak" | tee -a "$OUT/summary.txt"
else
  echo "FAIL: clean=$clean (want plateau) leak=$leak (want growth)" | tee -a "$OUT/summary.txt"
  status=1
fi
# `probe --launch --repeat 3`: clean starts by oomdoc itself (needs AREA_TIMEOUT of about 500 s).
OUT="$OUT" bash tests/device/probe/launch.sh 2>&1 | tee -a "$OUT/summary.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status
