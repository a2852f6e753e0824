#!/usr/bin/env bash
# Multi-GPU device test of `oomdoc gpus` (issue 9) for the 2-GPU machine: CUDA_VISIBLE_DEVICES
# as indices (`1,0`), full UUIDs and UUID prefixes must give the ordinals torch sees, and a
# PyTorch process on each GPU must show on the right device. Builds nothing: uses
# target/release/oomdoc, nvidia-smi and python3 with torch. Writes to $OUT/gpus-multi (the
# recordings there become replay fixtures). Exit status: the number of failed steps.
set -uo pipefail
cd "$(dirname "$0")/../../.."
HERE=tests/device/gpus
BIN=target/release/oomdoc
O="${OUT:-$(mktemp -d)}/gpus-multi"
mkdir -p "$O"
failed=0
step() { echo "== $*"; }
check() { python3 "$HERE/check.py" "$@" | tee -a "$O/checks.txt" || failed=$((failed + 1)); }
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER OOMDOC_GPU_FROM
# NVLink multicast stays off on the lent machines (device README).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

step "1. inventory and nvidia-smi agree"
"$BIN" gpus --json > "$O/oomdoc-gpus.json" &
nvidia-smi -q -x > "$O/nvidia-smi-q.xml"
wait $! || failed=$((failed + 1))
check agree "$O/oomdoc-gpus.json" "$O/nvidia-smi-q.xml"
"$BIN" gpus | tee "$O/oomdoc-gpus.txt"
COUNT=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$O/oomdoc-gpus.json")
if [ "$COUNT" -lt 2 ]; then echo "FAIL: this test needs 2 GPUs, found $COUNT"; exit 1; fi
U0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["uuid"])' "$O/oomdoc-gpus.json")
U1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][1]["uuid"])' "$O/oomdoc-gpus.json")

step "2. CUDA ordinals under CUDA_VISIBLE_DEVICES match torch"
# Each case starts a python3 with torch (a few seconds): 9 cases keep the test under 2 minutes.
n=0
for case in "|1,0" "|0,1" "|1" "|$U1,$U0" "|${U1:0:12},${U0:0:12}" "|${U0:0:8}" "|0,7,1" \
            "PCI_BUS_ID|1,0" "PCI_BUS_ID|$U1,$U0"; do
    order=${case%%|*}
    visible=${case#*|}
    n=$((n + 1))
    env ${order:+CUDA_DEVICE_ORDER=$order} CUDA_VISIBLE_DEVICES="$visible" "$BIN" gpus --json > "$O/cvd-$n.json" || failed=$((failed + 1))
    env ${order:+CUDA_DEVICE_ORDER=$order} CUDA_VISIBLE_DEVICES="$visible" python3 -c 'import json, torch; print(json.dumps(["GPU-" + str(torch.cuda.get_device_properties(i).uuid) for i in range(torch.cuda.device_count())]))' > "$O/torch-$n.json" 2> "$O/torch-$n.stderr"
    echo "case $n: CUDA_DEVICE_ORDER=${order:-unset} CUDA_VISIBLE_DEVICES=$visible" | tee -a "$O/checks.txt"
    check ordinals "$O/cvd-$n.json" "$O/torch-$n.json"
done
CUDA_VISIBLE_DEVICES=1,0 "$BIN" gpus | tee "$O/cvd-1-0.txt"

step "3. one PyTorch process per GPU, started under CUDA_VISIBLE_DEVICES=1,0"
rm -f "$O/hold-a.json" "$O/hold-b.json"
CUDA_VISIBLE_DEVICES=1,0 python3 "$HERE/hold.py" 4 0 "$O/hold-a.json" & A=$!
CUDA_VISIBLE_DEVICES=1,0 python3 "$HERE/hold.py" 6 1 "$O/hold-b.json" & B=$!
for _ in $(seq 1 600); do [ -f "$O/hold-a.json" ] && [ -f "$O/hold-b.json" ] && break; sleep 0.1; done
"$BIN" gpus --json > "$O/oomdoc-holding.json" &
nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv > "$O/compute-apps.csv"
wait $! || failed=$((failed + 1))
# hold-a used cuda:0 under `1,0`, i.e. NVML GPU 1; hold-b used cuda:1, i.e. GPU 0.
check holder "$O/oomdoc-holding.json" "$O/compute-apps.csv" "$O/hold-a.json" "$O/hold-b.json"
python3 - "$O/hold-a.json" "$O/hold-b.json" "$U1" "$U0" <<'PY' | tee -a "$O/checks.txt" || failed=$((failed + 1))
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ok = a["uuid"] == sys.argv[3] and b["uuid"] == sys.argv[4]
print(("ok: " if ok else "FAIL: ") + f"cuda:0 under 1,0 is GPU 1 ({a['uuid']}), cuda:1 is GPU 0 ({b['uuid']})")
sys.exit(0 if ok else 1)
PY
"$BIN" gpus | tee "$O/oomdoc-holding.txt"
"$BIN" gpus --record "$O/2gpu-recording.json" > /dev/null || failed=$((failed + 1))
"$BIN" gpus --watch 0.2 --count 5 --record "$O/2gpu-watch-recording.json" > /dev/null || failed=$((failed + 1))
kill "$A" "$B" 2>/dev/null; wait "$A" "$B" 2>/dev/null

step "4. speed with two devices"
"$BIN" gpus --bench-sampling 2 --json > "$O/bench.json" || failed=$((failed + 1))
check bench "$O/bench.json"

echo "== failed steps: $failed (details in $O/checks.txt)"
exit "$failed"
