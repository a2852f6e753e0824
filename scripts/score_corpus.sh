#!/usr/bin/env bash
# Scores `oomdoc explain` on the labelled corpus (tests/fixtures/corpus/, schema in its README):
# per group, per engine, per family and overall, for the six measures (GPU OOM yes/no, every
# figure exact, phase where the text shows it, engine, `unknown` kept, cause).
# Usage: scripts/score_corpus.sh [--misses]   (--misses lists every miss, with expected and got)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--misses" ]; then export OOMDOC_CORPUS_MISSES=1; fi
# The scores are printed even when a floor is missed (the test then fails after printing).
cargo test --test tests corpus_scores_meet_the_floors -- --nocapture 2>&1 \
    | sed -n '/^corpus: /,/^test result\|^failures:/p' | grep -v '^test result\|^failures:'
