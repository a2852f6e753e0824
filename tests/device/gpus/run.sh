#!/usr/bin/env bash
# Device test of `oomdoc gpus` on one GPU (issue 3). Builds nothing: uses target/release/oomdoc
# in the repository root, nvidia-smi, and python3 with torch. Writes everything to $OUT/gpus
# (a temporary directory when OUT is unset); the recordings there replay anywhere with
# `oomdoc gpus --gpu-from FILE`. Exit status: the number of failed steps (0 = all passed).
set -uo pipefail
cd "$(dirname "$0")/../../.."
HERE=tests/device/gpus
BIN=target/release/oomdoc
O="${OUT:-$(mktemp -d)}/gpus"
mkdir -p "$O"
failed=0
step() { echo "== $*"; }
check() { python3 "$HERE/check.py" "$@" | tee -a "$O/checks.txt" || failed=$((failed + 1)); }
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER OOMDOC_GPU_FROM

step "1. NVML (oomdoc) and nvidia-smi -q -x at the same moment"
"$BIN" gpus --json > "$O/oomdoc-gpus.json" 2> "$O/oomdoc-gpus.stderr" &
nvidia-smi -q -x > "$O/nvidia-smi-q.xml"
wait $! || failed=$((failed + 1))
check agree "$O/oomdoc-gpus.json" "$O/nvidia-smi-q.xml"
"$BIN" gpus | tee "$O/oomdoc-gpus.txt"
# Our XML parser against NVML on the same host (R3).
"$BIN" gpus --gpu-from "$O/nvidia-smi-q.xml" --json > "$O/replay-xml.json" || failed=$((failed + 1))
python3 - "$O/oomdoc-gpus.json" "$O/replay-xml.json" <<'PY' | tee -a "$O/checks.txt" || failed=$((failed + 1))
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
bad = 0
for x, y in zip(a["devices"], b["devices"]):
    for key in ("uuid", "pci_bus_id", "name", "index"):
        ok = x[key] == y[key]; bad += not ok
        print(("ok: " if ok else "FAIL: ") + f"XML parse {key} {y[key]} == NVML {x[key]}")
    ok = abs(x["memory"]["total_bytes"] - y["memory"]["total_bytes"]) < 1 << 20; bad += not ok
    print(("ok: " if ok else "FAIL: ") + f"XML parse total {y['memory']['total_bytes']} ~ NVML {x['memory']['total_bytes']}")
sys.exit(1 if bad else 0)
PY

step "2. a PyTorch process holding 8 GiB shows with its bytes"
rm -f "$O/hold0.json"
python3 "$HERE/hold.py" 8 0 "$O/hold0.json" & HOLDER=$!
for _ in $(seq 1 600); do [ -f "$O/hold0.json" ] && break; sleep 0.1; done
"$BIN" gpus --json > "$O/oomdoc-holding.json" &
nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv > "$O/compute-apps.csv"
wait $! || failed=$((failed + 1))
check holder "$O/oomdoc-holding.json" "$O/compute-apps.csv" "$O/hold0.json"
check cudatotal "$O/oomdoc-holding.json" "$O/hold0.json"
"$BIN" gpus | tee "$O/oomdoc-holding.txt"

step "3. record here, replay anywhere"
"$BIN" gpus --record "$O/h200-recording.json" --json > "$O/recorded.json" || failed=$((failed + 1))
"$BIN" gpus --watch 0.2 --count 5 --record "$O/h200-watch-recording.json" > /dev/null || failed=$((failed + 1))
"$BIN" gpus --gpu-from "$O/h200-recording.json" --json > "$O/replayed.json" || failed=$((failed + 1))
check same "$O/recorded.json" "$O/replayed.json"
kill "$HOLDER" 2>/dev/null; wait "$HOLDER" 2>/dev/null

step "4. speed: memory() calls per second and one inventory's latency"
"$BIN" gpus --bench-sampling 3 --json > "$O/bench.json" || failed=$((failed + 1))
check bench "$O/bench.json"

step "5. CUDA_VISIBLE_DEVICES with a UUID prefix"
UUID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["uuid"])' "$O/oomdoc-gpus.json")
PREFIX=${UUID:0:12}
for visible in "$PREFIX" "$UUID" 0; do
  tag=$(echo "$visible" | tr -c 'A-Za-z0-9\n' _)
  CUDA_VISIBLE_DEVICES="$visible" "$BIN" gpus --json > "$O/cvd-$tag.json" || failed=$((failed + 1))
  CUDA_VISIBLE_DEVICES="$visible" python3 -c 'import json, torch; print(json.dumps(["GPU-" + str(torch.cuda.get_device_properties(i).uuid) for i in range(torch.cuda.device_count())]))' > "$O/torch-$tag.json"
  check ordinals "$O/cvd-$tag.json" "$O/torch-$tag.json"
done
CUDA_VISIBLE_DEVICES="$PREFIX" "$BIN" gpus | tee "$O/cvd-prefix.txt"
CUDA_VISIBLE_DEVICES=5 "$BIN" gpus | tee "$O/cvd-5.txt"

echo "== failed steps: $failed (details in $O/checks.txt)"
exit "$failed"
