#!/usr/bin/env bash
# Device test of the OOM text parser (R1): make PyTorch 2.11 on a real GPU print each failure
# family we parse (caching allocator, fraction `allowed;`, private pools,
# cudaMallocAsync, expandable segments, caching disabled → raw `CUDA error`, >1EB, host RAM),
# keep the texts in $OUT (new real fixtures for tests/fixtures/oom_text/), and, when the binary
# has `explain`, run `oomdoc explain --json` on each. Builds nothing. Runs in about a minute.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$(mktemp -d)}
BIN=${OOMDOC:-target/release/oomdoc}
HERE=tests/device/oom_text
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$OUT/summary.txt"

run() {
  local name=$1; shift
  env "$@" timeout 60 python3 "$HERE/gen.py" "$name" > "$OUT/$name.stdout" 2> "$OUT/$name.txt"
  local family
  family=$(grep -E -o "CUDA out of memory\. Tried to allocate [^.]*\.[0-9]+ [KMG]iB|more than 1EB|would exceed allowed memory|CUDA error: out of memory|DefaultCPUAllocator|allowed;|private pools|no error" "$OUT/$name.txt" | sort -u | tr '\n' '|')
  echo "$name: ${family:-NOTHING}" | tee -a "$OUT/summary.txt"
  if [ -x "$BIN" ] && "$BIN" explain --help > /dev/null 2>&1; then
    "$BIN" explain --json "$OUT/$name.txt" > "$OUT/$name.explain.json" 2> "$OUT/$name.explain.err"
    echo "$name: oomdoc explain exit $?" | tee -a "$OUT/summary.txt"
    python3 - "$OUT/$name.explain.json" "$name" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
path, name = sys.argv[1], sys.argv[2]
try:
    report = json.load(open(path))
except ValueError:
    print(f"{name}: no JSON"); sys.exit(0)
oom = report.get("oom") or {}
keys = ["tried_to_allocate_bytes", "total_capacity_bytes", "free_bytes", "process_in_use_bytes",
        "allocated_by_pytorch_bytes", "reserved_unallocated_bytes", "private_pools_bytes", "allowed_bytes"]
print(f"{name}: is_gpu_oom={report.get('is_gpu_oom')} " + " ".join(f"{k}={oom.get(k)}" for k in keys))
PY
  fi
}

run caching_allocator
run fraction_allowed
run private_pools
run malloc_async PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
run expandable_segments PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
run no_caching PYTORCH_NO_CUDA_MEMORY_CACHING=1
run absurd
run host_ram
echo "done: texts in $OUT" | tee -a "$OUT/summary.txt"
