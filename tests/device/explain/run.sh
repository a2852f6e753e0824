#!/usr/bin/env bash
# Device test of `oomdoc explain` (issue 2): real PyTorch 2.11 failures on the GPU, each made to
# fail for a known cause or in a known phase, explained by the binary; plus the streaming
# figures on a 256 MiB log ending with one of them. Builds nothing: uses target/release/oomdoc.
# Runs in about a minute. Results (texts, JSON, summary) in $OUT.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$(mktemp -d)}
BIN=${OOMDOC:-target/release/oomdoc}
HERE=tests/device/explain
summary="$OUT/summary.txt"
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$summary"

check() { # name expected_cause expected_phase
  local name=$1 cause=$2 phase=$3
  timeout 90 python3 "$HERE/gen.py" "$name" > "$OUT/$name.stdout" 2> "$OUT/$name.txt"
  cat "$OUT/$name.stdout" "$OUT/$name.txt" > "$OUT/$name.log"
  "$BIN" explain --json "$OUT/$name.log" > "$OUT/$name.json" 2> "$OUT/$name.err"
  local rc=$?
  python3 - "$OUT/$name.json" "$name" "$cause" "$phase" "$rc" <<'PY' | tee -a "$summary"
import json, sys
path, name, cause, phase, rc = sys.argv[1:]
try:
    r = json.load(open(path))
except ValueError:
    print(f"FAIL {name}: no JSON (exit {rc})"); sys.exit(0)
got = (r["verdict"]["cause"], r["phase"]["failed_in"])
ok = got[0] == cause and got[1] == phase and rc == "0" and r["is_gpu_oom"]
print(f"{'PASS' if ok else 'FAIL'} {name}: cause={got[0]} (want {cause}) phase={got[1]} (want {phase}) exit={rc} torch={r['versions'].get('torch')}")
PY
}

check capacity request_larger_than_gpu unknown
check training training_memory training_step
check fragmentation fragmentation_plausible unknown
check other_process other_processes_hold_memory unknown

# Streaming: ~256 MiB of engine lines, the real capacity traceback at the end.
big="$OUT/big.log"
line='INFO 04-02 21:43:10 model_runner.py:2] Loading model weights took 12.5523 GB'
yes "$line" | head -c $((256 * 1024 * 1024)) > "$big"
cat "$OUT/capacity.txt" >> "$big"
/usr/bin/time -f "%e s wall, %U s user, %M KiB max RSS" grep -c 'out of memory' "$big" > /dev/null 2> "$OUT/big.grep.time"
/usr/bin/time -f "%e s wall, %U s user, %M KiB max RSS" "$BIN" explain --json "$big" > "$OUT/big.json" 2> "$OUT/big.explain.time"
echo "stream 256 MiB: grep $(tail -1 "$OUT/big.grep.time"); explain $(tail -1 "$OUT/big.explain.time")" | tee -a "$summary"
python3 -c "import json,sys; r=json.load(open('$OUT/big.json')); print('stream:', 'PASS' if r['verdict']['cause']=='request_larger_than_gpu' else 'FAIL', r['input']['lines'], 'lines')" | tee -a "$summary"
# The middle of the stream is searched for failures only: the same failure, phase and cause
# as with every line parsed.
"$BIN" explain --every-line --json "$big" > "$OUT/big.every-line.json" 2> /dev/null
python3 - "$OUT/big.json" "$OUT/big.every-line.json" <<'PY' | tee -a "$summary"
import json, sys
fast, full = (json.load(open(p)) for p in sys.argv[1:])
keys = lambda r: (r["ooms"], r["oom"], r["phase"]["failed_in"], r["verdict"]["cause"], r["input"]["lines"])
print("stream tiers:", "PASS" if keys(fast) == keys(full) else "FAIL",
      fast["input"].get("failures_only_lines", 0), "lines searched for failures only")
PY
rm -f "$big"
echo "done: results in $OUT" | tee -a "$summary"
