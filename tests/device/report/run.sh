#!/usr/bin/env bash
# Device test of `oomdoc report` and `oomdoc diff` on real recorded runs (H200, ~1 minute).
# Builds nothing: uses target/release/oomdoc and python3 with torch. Results go to $OUT.
#
# Three launches of a vLLM-like program under `oomdoc run`: --gpu-memory-utilization 0.98 runs out
# of memory in "CUDA graph capture"; 0.90 (one flag changed, flags reordered) and --enforce-eager
# (one flag added) load and serve. Then `oomdoc report` (text, HTML, JSON) and `oomdoc diff`.
set -uo pipefail
cd "$(dirname "$0")/../../.."
BIN=target/release/oomdoc
OUT=${OUT:-$(mktemp -d)}
FAKE=tests/device/report/fake_engine.py
mkdir -p "$OUT"

"$BIN" run --out "$OUT/fail" -- python3 "$FAKE" --gpu-memory-utilization 0.98 --max-model-len 32768 >"$OUT/fail.stdout" 2>&1
echo "fail run exit: $?"
"$BIN" run --out "$OUT/util090" -- python3 "$FAKE" --max-model-len 32768 --gpu-memory-utilization 0.90 >"$OUT/util090.stdout" 2>&1
echo "util 0.90 run exit: $?"
"$BIN" run --out "$OUT/eager" -- python3 "$FAKE" --gpu-memory-utilization 0.98 --enforce-eager --max-model-len 32768 >"$OUT/eager.stdout" 2>&1
echo "eager run exit: $?"

"$BIN" report "$OUT/fail" "$OUT/util090" >"$OUT/report.txt"; echo "report text exit: $?"
"$BIN" report "$OUT/fail" "$OUT/util090" --format html -o "$OUT/report.html"; echo "report html exit: $?"
"$BIN" report "$OUT/fail" "$OUT/eager" --format markdown >"$OUT/report.md"; echo "report markdown exit: $?"
"$BIN" report "$OUT/fail" --json >"$OUT/report-fail.json"; echo "report json exit: $?"
"$BIN" diff "$OUT/fail" "$OUT/util090" --json >"$OUT/diff.json"; echo "diff exit: $?"
"$BIN" diff "$OUT/fail" "$OUT/eager" >"$OUT/diff-eager.txt" 2>&1; echo "diff eager exit: $?"

python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
failures = 0
def check(name, ok, detail=""):
    global failures
    failures += 0 if ok else 1
    print(("PASS " if ok else "FAIL ") + name + (f"  [{detail}]" if detail else ""))
diff = json.load(open(f"{out}/diff.json"))
fields = [c["field"] for c in diff["changes"]]
check("diff: one change, the utilization flag", fields == ["flag --gpu-memory-utilization"], fields)
check("diff: more_than_one_change false", diff["more_than_one_change"] is False)
check("diff: A failed, B did not", diff["outcome"]["a"]["failed"] and not diff["outcome"]["b"]["failed"], diff["outcome"]["summary"])
run = json.load(open(f"{out}/report-fail.json"))["runs"][0]
check("report: GPU OOM", run["failure"]["is_gpu_oom"] is True)
check("report: failed in cuda_graph_capture", run["failure"]["failed_in"] == "cuda_graph_capture", run["failure"])
mem = run["memory"]
check("report: memory timeline present", mem["available"] and mem["devices"] and len(mem["devices"][0]["samples"]) > 10)
dev = mem["devices"][0] if mem["devices"] else {}
check("report: peak in cuda_graph_capture", dev.get("peak_phase") == "cuda_graph_capture", dev.get("peak_phase"))
check("report: OOM time known", mem["oom_t_ms"] is not None, mem.get("oom_t_source"))
check("report: GPU by UUID with free memory before start", run["gpus"] and run["gpus"][0]["uuid"].startswith("GPU-") and run["gpus"][0]["free_before_bytes"], run["gpus"][0]["uuid"] if run["gpus"] else None)
check("report: configuration error", run["owner_summary"]["kind"] == "configuration_error", run["owner_summary"]["kind"])
check("report: no request needed to reproduce", run["reproduction"]["request_needed"] is False)
html = open(f"{out}/report.html").read()
check("html: self-contained", not any(s in html for s in ["src=", "href=\"http", "@import", "url(", "<script"]))
check("html: chart with OOM marker", "<svg class=\"chart\"" in html and "oomlabel" in html)
print(f"peak {dev.get('peak_used_bytes')} B at {dev.get('peak_t_ms')} ms in {dev.get('peak_phase')}; "
      f"peaks by phase {[(p['phase'], p['peak_used_bytes']) for p in dev.get('peaks_by_phase', [])]}")
print(f"{failures} check(s) failed")
sys.exit(1 if failures else 0)
PY
status=$?
echo "outputs in $OUT: report.txt report.html report.md report-fail.json diff.json diff-eager.txt"
exit $status
