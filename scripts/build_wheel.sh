#!/usr/bin/env bash
# Builds the Python wheel of oomdoc (maturin `bindings = "bin"`: the wheel holds only the
# `oomdoc` binary, as ruff's and uv's do), installs it into a fresh virtual environment and
# prints `oomdoc --version` from there.
#
# Usage: scripts/build_wheel.sh
#   PYTHON            the interpreter for the throwaway venvs (default: python3)
#   CARGO_TARGET_DIR  honoured; the venvs and the wheel go under it, in wheel-build/
#                     (default: target/wheel-build, git-ignored)
#
# Needs Python 3.8+ with `venv`, and PyPI (or a pip mirror) for maturin. maturin is installed
# into its own venv, never into the interpreter's site-packages. The elapsed time of the
# compile is printed; with an empty target directory it is the cold build time.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
WORK=${CARGO_TARGET_DIR:-target}/wheel-build
rm -rf "$WORK"
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

echo "build_wheel: maturin into $WORK/build-venv" >&2
"$PYTHON" -m venv "$WORK/build-venv"
"$WORK/build-venv/bin/python" -m pip install --quiet 'maturin>=1,<2'

echo "build_wheel: building the wheel (release)" >&2
started=$(date +%s)
"$WORK/build-venv/bin/maturin" build --release --out "$WORK/dist"
elapsed=$(( $(date +%s) - started ))
wheel=$(ls "$WORK"/dist/oomdoc-*.whl)

echo "build_wheel: installing $wheel into $WORK/test-venv" >&2
"$PYTHON" -m venv "$WORK/test-venv"
"$WORK/test-venv/bin/python" -m pip install --quiet "$wheel"

echo "build_wheel: wheel $wheel ($(du -k "$wheel" | cut -f1) KiB), built in ${elapsed}s on $(nproc 2>/dev/null || echo '?') cores" >&2
"$WORK/test-venv/bin/oomdoc" --version
