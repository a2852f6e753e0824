#!/usr/bin/env bash
# Multi-GPU checks (issue 9) for a machine with 2 or more GPUs (nvidia-h200-x2):
#   1. `oomdoc gpus` under CUDA_VISIBLE_DEVICES=1,0 and with UUIDs: CUDA ordinals map to the right
#      UUIDs (checked against torch), a PyTorch process on each GPU shows on the right device;
#   2. `oomdoc run` around a 2-process torchrun/NCCL job where rank 1 runs out of memory on GPU 1.
# Not part of run_all.sh's default list (it needs two GPUs): `bash tests/device/run_all.sh multi_gpu`.
set -u
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-$(mktemp -d)}
failed=0
echo "== gpus: CUDA numbering on $(nvidia-smi -L | wc -l) GPUs"
OUT="$OUT" bash tests/device/gpus/multi_gpu.sh || failed=$((failed + 1))
echo "== run: torchrun, rank 1 OOMs on GPU 1"
mkdir -p "$OUT/run"
OUT="$OUT/run" bash tests/device/run/multi_gpu.sh || failed=$((failed + 1))
echo "multi_gpu: failed parts $failed"
exit "$failed"
