#!/usr/bin/env bash
# Device test for `oomdoc snapshot` (issue 5), for a lent GPU machine with torch 2.11.
# Builds nothing: uses target/release/oomdoc from the repository root.
#
#   tests/device/snapshot/run.sh            # results in $OUT (or ./out-snapshot)
#
# Makes real memory snapshots with torch.cuda.memory._record_memory_history(): a true
# fragmentation OOM and a capacity OOM, each with and without expandable segments, runs
# `oomdoc snapshot --json` on each and checks the cause. Copies the small pickles (at most 4,
# each under 1 MiB) to $OUT so they can become fixtures. Takes well under 2 minutes.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
oomdoc=$root/target/release/oomdoc
out=${OUT:-$root/out-snapshot}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x "$oomdoc" ] || { echo "FAIL: no $oomdoc (build it first)"; exit 1; }

python3 - "$work" <<'PY'
import os, subprocess, sys, textwrap
work = sys.argv[1]
prelude = """
import json, os, sys, torch
GiB = 2**30
torch.cuda.init()
torch.cuda.memory._record_memory_history(max_entries=100000)
free, total = torch.cuda.mem_get_info()
result = {'torch': torch.__version__, 'total': total, 'oom': None}
try:
"""
post = """
except torch.OutOfMemoryError as error:
    result['oom'] = str(error)
result['memory_stats'] = {k: v for k, v in torch.cuda.memory_stats().items() if k.endswith('.all.current')}
torch.cuda.memory._dump_snapshot(sys.argv[1] + '.pickle')
json.dump(result, open(sys.argv[1] + '.json', 'w'))
"""
fragment = """
n = int(free * 0.6) // GiB
big = torch.empty(n * GiB, dtype=torch.uint8, device='cuda'); del big   # one cached segment
parts = [torch.empty(GiB, dtype=torch.uint8, device='cuda') for _ in range(n)]
for i in range(0, n, 2): parts[i] = None                              # 1 GiB holes
free_now, _ = torch.cuda.mem_get_info()
fill = torch.empty(free_now - 512 * 2**20, dtype=torch.uint8, device='cuda')
x = torch.empty(2 * GiB, dtype=torch.uint8, device='cuda')            # needs 2 GiB in one piece
"""
capacity = """
small = torch.empty(GiB, dtype=torch.uint8, device='cuda')
x = torch.empty(int(total * 1.2), dtype=torch.uint8, device='cuda')
"""
scenarios = {
    'fragmentation': (fragment, {}),
    'fragmentation_expandable': (fragment, {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True'}),
    'capacity': (capacity, {}),
    'capacity_expandable': (capacity, {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True'}),
}
for name, (body, env) in scenarios.items():
    code = prelude + textwrap.indent(textwrap.dedent(body), '    ') + post
    run = subprocess.run([sys.executable, '-c', code, os.path.join(work, name)],
                         env=dict(os.environ, **env), capture_output=True, text=True, timeout=100)
    if run.returncode != 0:
        print(f'FAIL: scenario {name} crashed:\n{run.stderr[-3000:]}')
        sys.exit(1)
    print(f'made {name}')
PY

status=0
for name in fragmentation fragmentation_expandable capacity capacity_expandable; do
    total=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"])' "$work/$name.json")
    "$oomdoc" snapshot "$work/$name.pickle" --json --total-memory "${total}B" > "$work/$name.report.json"
    "$oomdoc" snapshot "$work/$name.pickle" --total-memory "${total}B" > "$out/$name.report.txt"
    cp "$work/$name.json" "$work/$name.report.json" "$out/"
    python3 - "$name" "$work/$name.json" "$work/$name.report.json" <<'PY' || status=1
import json, sys
name, scenario, report = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
causes = [oom['cause'] for oom in report['ooms']]
stats = scenario['memory_stats']
device = report['devices'][0] if report['devices'] else {'reserved_bytes': 0, 'allocated_bytes': 0}
expected = {
    'fragmentation': ['fragmentation'],
    # expandable segments let the same program succeed: no OOM at all
    'fragmentation_expandable': [],
    'capacity': ['capacity'],
    'capacity_expandable': ['capacity'],
}[name]
problems = []
if causes != expected:
    problems.append(f'causes {causes}, expected {expected}')
if (scenario['oom'] is None) != (expected == []):
    problems.append(f"torch OOM: {scenario['oom']!r}")
for key in ('reserved_bytes', 'allocated_bytes'):
    if device[key] != stats.get(f'{key}.all.current', 0):
        problems.append(f"{key} {device[key]} != memory_stats {stats.get(f'{key}.all.current')}")
print(('FAIL: ' if problems else 'PASS: ') + name + (': ' + '; '.join(problems) if problems else f' causes={causes}'))
sys.exit(1 if problems else 0)
PY
    size=$(stat -c %s "$work/$name.pickle")
    if [ "$size" -le 1048576 ]; then
        cp "$work/$name.pickle" "$out/torch-$name.pickle"
    else
        echo "note: $name.pickle is $size bytes, not copied"
    fi
done
# Issue 19: category totals against torch.profiler._memory_profiler, within 5 %.
python3 "$root/tests/device/snapshot/categories.py" "$oomdoc" "$out" || status=1
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))' | tee "$out/versions.txt"
"$oomdoc" --version | tee -a "$out/versions.txt"
[ "$status" -eq 0 ] && echo "ALL PASS" || echo "SOME FAILED"
exit "$status"
