#!/usr/bin/env bash
# Device check of `oomdoc fit` (issue 4): random-initialised models are saved as safetensors,
# `target/release/oomdoc fit DIR --json` sizes them from the headers, then the files are
# loaded onto the GPU and torch.cuda.memory_allocated() is compared with weights.total_bytes.
# Builds nothing: needs target/release/oomdoc and python3 with torch, transformers, safetensors.
# Writes $OUT/fit_table.txt and $OUT/fit_results.json when OUT is set. Under 3 minutes.
set -euo pipefail
cd "$(dirname "$0")/../../.."
OOMDOC="${OOMDOC:-$PWD/target/release/oomdoc}"
if [ ! -x "$OOMDOC" ]; then
    echo "error: $OOMDOC not found; build it with \`cargo build --release\` first" >&2
    exit 2
fi
exec python3 tests/device/fit/fit_check.py "$OOMDOC"
