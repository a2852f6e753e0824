#!/usr/bin/env bash
# Cost of `oomdoc probe --duration` (soak): oomdoc's own CPU time and peak RSS for soaks of
# two lengths against the fake engine (tests/fixtures/fake_servers/fake_engine.py, plateau),
# memory read from its /metrics. The fake answers at once, so the protocol runs back to back:
# this is the busiest a soak gets (a real engine spends seconds per request and oomdoc waits).
# Bounded memory shows as the same peak RSS for both lengths.
# Usage: bash scripts/bench_probe_soak.sh [SHORT_S LONG_S]   (release build: target/release/oomdoc
# or $CARGO_TARGET_DIR/release/oomdoc)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${OOMDOC:-${CARGO_TARGET_DIR:-target}/release/oomdoc}
SHORT=${1:-10}
LONG=${2:-40}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 tests/fixtures/fake_servers/fake_engine.py --port "$PORT" --variant plateau --ready-after 0.1 \
  > /dev/null 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/health', timeout=1)" \
    2>/dev/null && break
  sleep 0.1
done
for seconds in "$SHORT" "$LONG"; do
  out=$(mktemp)
  /usr/bin/time -f "%U %S %e %M" -o "$out.time" "$BIN" probe "http://127.0.0.1:$PORT" --json \
    --duration "${seconds}s" --memory-from "prometheus:http://127.0.0.1:$PORT/metrics" > "$out"
  read -r user sys wall rss_kib < "$out.time"
  python3 - "$out" "$seconds" "$user" "$sys" "$wall" "$rss_kib" <<'PY'
import json, sys
path, seconds, user, system, wall, rss = sys.argv[1:]
doc = json.load(open(path))
soak = doc["soak"]
cpu = float(user) + float(system)
print(f"soak {seconds} s: {soak['cycles']} cycles, {soak['readings']} readings, "
      f"{len(soak['slots'])} slots, verdict {soak['verdict']}; oomdoc CPU {cpu:.2f} s over "
      f"{float(wall):.1f} s = {100 * cpu / float(wall):.1f} % of a core "
      f"({1000 * cpu / max(soak['readings'], 1):.2f} ms per reading); peak RSS {int(rss) / 1024:.1f} MiB")
PY
  rm -f "$out" "$out.time"
done
