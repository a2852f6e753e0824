#!/usr/bin/env bash
# Device test of `oomdoc run` around a 2-process torchrun/NCCL job on the 2-GPU kind
# (nvidia-h200-x2, issue 9): rank 1 runs out of memory on GPU 1, rank 0 does not. Checks that the
# record names the failing rank's device by UUID, has a memory timeline per device, and has the
# OOM text of rank 1 among the interleaved output. Uses target/release/oomdoc; results in $OUT.
set -u
cd "$(dirname "$0")/../../.."
OOMDOC=${OOMDOC:-target/release/oomdoc}
HERE=tests/device/run
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
# NVLink multicast stays off on these machines (device README).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# nvidia-smi numbers by PCI bus; make CUDA number the same way so "GPU 1" is nvidia-smi index 1.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
nvidia-smi --query-gpu=index,uuid,memory.used --format=csv,noheader | tee "$OUT/gpus.csv"
"$OOMDOC" run --out "$OUT/multi" -- python3 -m torch.distributed.run --nproc-per-node 2 \
  --master-port 29533 "$HERE/multi_gpu_oom.py" > "$OUT/multi.stdout" 2> "$OUT/multi.stderr"
echo "exit $?"
tail -n 12 "$OUT/multi.stderr"
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
gpus = [line.split(", ") for line in open(os.path.join(out, "gpus.csv")) if line.strip()]
uuid_of = {int(index): uuid.strip() for index, uuid, _ in gpus}
record = json.load(open(os.path.join(out, "multi", "run.json")))
failures = []
def check(ok, text):
    print(("ok   " if ok else "FAIL ") + text)
    if not ok:
        failures.append(text)
print("exit_code", record["exit_code"], "status", record["status"])
check(record["exit_code"] != 0, "the job fails")
ooms = record.get("ooms", [])
print("ooms:", json.dumps(ooms))
check(any(o.get("device_uuid") == uuid_of.get(1) for o in ooms), "an OOM is attributed to GPU 1 by UUID %s" % uuid_of.get(1))
check(not any(o.get("device_uuid") == uuid_of.get(0) for o in ooms), "no OOM attributed to GPU 0")
print("ranks named in OOM lines:", sorted({o.get("rank") for o in ooms if o.get("rank") is not None}))
log = open(os.path.join(out, "multi", "log.txt")).read()
check("rank 0: finished without OOM" in log or "rank 0" in log, "rank 0 output is in the log")
check("CUDA out of memory" in log, "rank 1's OOM text is in the log")
devices = record["memory"]["devices"]
check(record["memory"]["available"] and len(devices) == 2, "two per-device timelines")
for device in devices:
    print("device %s index %s: baseline used %.2f GiB, peak %.2f GiB at %s ms in %s, %d readings, processes %s" % (
        device["uuid"], device["index"], (device["baseline_used_bytes"] or 0) / 2**30, (device["peak_used_bytes"] or 0) / 2**30,
        device["peak_t_ms"], device["peak_phase"], device["sample_count"],
        [(p["pid"], round((p["peak_used_bytes"] or 0) / 2**30, 2), p["is_child"]) for p in device["processes"]]))
by_uuid = {d["uuid"]: d for d in devices}
if uuid_of.get(0) in by_uuid and uuid_of.get(1) in by_uuid:
    check((by_uuid[uuid_of[1]]["peak_used_bytes"] or 0) > (by_uuid[uuid_of[0]]["peak_used_bytes"] or 0),
          "GPU 1 (rank 1, 8 GiB held) peaks above GPU 0 (4 GiB held)")
json.dump({"failures": failures, "ooms": ooms}, open(os.path.join(out, "multi_summary.json"), "w"), indent=1)
print("all checks passed" if not failures else "%d check(s) failed" % len(failures))
sys.exit(1 if failures else 0)
PY
