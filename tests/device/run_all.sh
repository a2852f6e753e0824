#!/usr/bin/env bash
# Runs the device-only tests of the given areas (default: every tests/device/<area>/run.sh) on a
# GPU machine, one after another, each under its own time limit. Builds nothing: needs
# target/release/oomdoc in the repository root (build it with `cargo build --release`).
# Results: each area's files under $OUT/<area>/ (its own $OUT), packed into $OUT/device-results.tar.gz
# (the device tool returns at most 8 files), and a summary in $OUT/summary.txt.
# Usage: bash tests/device/run_all.sh [AREA ...]   (env AREA_TIMEOUT, default 200 s)
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT="${OUT:-$(mktemp -d)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
areas=("$@")
if [ ${#areas[@]} -eq 0 ]; then
    for script in tests/device/*/run.sh; do
        area="$(basename "$(dirname "$script")")"
        [ "$area" = multi_gpu ] || areas+=("$area")   # needs two GPUs: name it explicitly
    done
fi
[ -x target/release/oomdoc ] || { echo "target/release/oomdoc is missing: run cargo build --release"; exit 2; }
summary="$ROOT/summary.txt"
: > "$summary"
for area in "${areas[@]}"; do
    script="tests/device/$area/run.sh"
    [ -f "$script" ] || { echo "$area: no $script" | tee -a "$summary"; continue; }
    echo "################ $area"
    start=$(date +%s)
    mkdir -p "$ROOT/$area"
    OUT="$ROOT/$area" timeout --kill-after=10 "${AREA_TIMEOUT:-200}" bash "$script" > "$ROOT/$area.log" 2>&1
    rc=$?
    tail -n 60 "$ROOT/$area.log"
    echo "$area: exit $rc in $(( $(date +%s) - start )) s" | tee -a "$summary"
done
# Small files only (logs, JSON, small pickles): checkpoints and big dumps stay behind.
(cd "$ROOT" && find . -type f -size -4M ! -name device-results.tar.gz ! -name '*.safetensors' -print0 \
    | tar czf device-results.tar.gz --null -T - 2>/dev/null; true)
# The device tool brings back at most 8 files: keep the archive and the summary.
find "$ROOT" -mindepth 1 -maxdepth 1 ! -name device-results.tar.gz ! -name summary.txt -exec rm -rf {} +
cat "$summary"
