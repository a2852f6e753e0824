#!/usr/bin/env python3
"""Regenerates the frame-rule table of docs/phases.md from src/analyze/phase/rules.rs (the order
of the segments, `SEGMENTS`) and src/analyze/phase/rules/*.rs (the segments' rules).

Usage: python3 scripts/phase_table.py [--check]
  --check  exit 1 (writing nothing) when docs/phases.md is not up to date
The table sits between the `## Frame rules` heading and the next `## ` heading.
"""
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "src/analyze/phase/rules.rs"
DOC = ROOT / "docs/phases.md"
PHASES = {"S": "startup", "W": "weights_load", "F": "format_conversion", "P": "profiling",
          "K": "kv_cache_alloc", "G": "cuda_graph_capture", "I": "inference",
          "T": "training_step", "U": "unknown"}

RULE = re.compile(
    r'\br\(\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,\s*([A-Z])\s*,\s*(\w+)\s*,\s*"([^"]*)"\s*,?\s*\)')


def without_comments(path):
    return re.sub(r"//[^\n]*", "", path.read_text())


def block(code, opening):
    start = code.index(opening)
    return code[start:code.index("\n];", start)]


order = block(without_comments(RULES), "const SEGMENTS:")
rules = []
for module, name in re.findall(r"\b(\w+)::(\w+)\s*,", order):
    segment = block(without_comments(RULES.parent / "rules" / f"{module}.rs"),
                    f"const {name}: &[FrameRule]")
    rules += RULE.findall(segment)
if not rules:
    sys.exit(f"error: no rules found in {RULES}")
count = Counter()
for *_, library in rules:
    for part in library.split("/"):
        count[part] += 1
per_library = ", ".join(f"{name} {n}" for name, n in count.items())
lines = [f"## Frame rules ({len(rules)} rules; per library, a rule shared by several counted for "
         f"each: {per_library})", ""]
doc = DOC.read_text()
start = doc.index("## Frame rules")
end = doc.index("\n## ", start + 1) + 1
old = doc[start:end]
# keep the prose between the heading and the table
prose = old.split("\n", 1)[1]
intro = prose[:prose.index("| function |")]
lines = [lines[0]] + [intro.rstrip("\n"), "",
                      "| function | path must contain | phase | role | library |",
                      "|---|---|---|---|---|"]
for function, path, phase, role, library in rules:
    shown_path = f"`{path}`" if path else "(any)"
    shown_function = f"`{function}`" if function else "`(any)`"
    if role == "Offload":  # an offload hook: moves below it belong to the forward
        shown_phase, shown_role = "— (moves below it belong to the forward)", "offload hook"
    else:
        shown_phase, shown_role = PHASES[phase], role.lower()
    lines.append(f"| {shown_function} | {shown_path} | {shown_phase} | {shown_role} | {library} |")
new = doc[:start] + "\n".join(lines) + "\n\n" + doc[end:]
if "--check" in sys.argv:
    sys.exit(0 if new == doc else "docs/phases.md is out of date: run scripts/phase_table.py")
DOC.write_text(new)
print(f"{len(rules)} rules written to {DOC.relative_to(ROOT)}")
