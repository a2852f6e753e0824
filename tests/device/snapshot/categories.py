#!/usr/bin/env python3
"""Device test for `oomdoc snapshot diff` categories (#19), on a lent GPU with torch.

Makes a reference training step (an MLP with Adam) under both
`torch.cuda.memory._record_memory_history()` and the profiler's memory profile, then compares
oomdoc's category totals at the snapshot's peak with `torch.profiler._memory_profiler`'s
categories at the same moment: the profiler's timeline state nearest oomdoc's peak `time_us`
(both clocks are Unix time; the largest total within +-WINDOW_US of it, since the peak is a
local maximum and the two clocks are read separately). When no profiler state lies that near,
or its total is more than 5 % away from oomdoc's, the profiler's own peak is used instead (the
same allocations peak at the same point) and the result says so.

Like with like: PARAMETER -> parameters, GRADIENT -> gradients, OPTIMIZER_STATE -> optimizer
state, ACTIVATION -> activations, AUTOGRAD_DETAIL + TEMPORARY -> autograd temporaries,
INPUT -> other. Each must agree within 5 % (of PyTorch's figure, or of the peak for a category
under 1 % of it). oomdoc also counts what the profiler never sees as a tensor (the cuBLAS
workspaces, about 32 MiB per stream/thread), within that tolerance.

    python3 tests/device/snapshot/categories.py OOMDOC_BINARY OUT_DIR
"""
import json
import os
import subprocess
import sys

import torch
from torch.profiler import ProfilerActivity, profile
from torch.profiler import _memory_profiler as mp

WINDOW_US = 200

oomdoc, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
snapshot_path = os.path.join(out, "categories-reference.pickle")

torch.manual_seed(0)
torch.cuda.memory._record_memory_history(max_entries=1_000_000)
width, depth, batch = 8192, 8, 16384
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU())
                              for _ in range(depth)]).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
data = torch.randn(batch, width, device="cuda")


def step():
    optimizer.zero_grad(set_to_none=True)
    loss = model(data).square().mean()
    loss.backward()
    optimizer.step()


step()  # optimizer state exists from here on, as in any later step
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
             profile_memory=True, with_stack=True) as prof:
    step()
    torch.cuda.synchronize()
torch.cuda.memory._dump_snapshot(snapshot_path)
torch.cuda.memory._record_memory_history(enabled=None)

report = subprocess.run([oomdoc, "snapshot", "diff", snapshot_path, snapshot_path, "--json"],
                        capture_output=True, text=True, check=True)
document = json.loads(report.stdout)
peak = next(m for m in document["moments"] if m["moment"] == "peak")
ours = {row["key"]: row["a_bytes"] for row in peak["by_category"]}
ours_total = peak["a_allocated_bytes"]
peak_time_us = peak.get("a_time_us")

# PyTorch's categories over the profiled step: the live CUDA tensors after each timeline event
# (times in ns, Unix epoch; PREEXISTING at -1).
profile_memory = prof._memory_profile()
categories = profile_memory._categories
live = {}
states = []  # (time_ns, total, totals by category)
Action = mp.Action
for time_ns, action, (key, version), size in profile_memory.timeline:
    if key.device.type != "cuda":
        continue
    if action in (Action.PREEXISTING, Action.CREATE):
        live[key] = (version, size)
    elif action == Action.INCREMENT_VERSION:
        live[key] = (version, live.get(key, (version, size))[1])
    elif action == Action.DESTROY:
        live.pop(key, None)
    totals = {}
    for tensor, (tensor_version, tensor_size) in live.items():
        category = categories.get(tensor, tensor_version)
        name = category.name if category is not None else "UNKNOWN"
        totals[name] = totals.get(name, 0) + tensor_size
    states.append((time_ns, sum(totals.values()), totals))

profiler_peak = max(states, key=lambda state: state[1]) if states else (0, 0, {})
moment, chosen = "profiler's own peak", profiler_peak
if peak_time_us is not None:
    near = [state for state in states
            if state[0] >= 0 and abs(state[0] / 1000 - peak_time_us) <= WINDOW_US]
    if near:
        candidate = max(near, key=lambda state: state[1])
        if abs(candidate[1] - ours_total) <= 0.05 * ours_total:
            moment, chosen = f"oomdoc's peak time_us {peak_time_us} (+-{WINDOW_US} us)", candidate
        else:
            moment += (f" (the profiler's state at oomdoc's peak time held {candidate[1]} B, "
                       f"oomdoc {ours_total} B: clocks not aligned)")
    else:
        moment += f" (no profiler event within {WINDOW_US} us of oomdoc's peak time_us {peak_time_us})"
reference_time_ns, reference_total, reference = chosen

names = {"PARAMETER": "parameters", "GRADIENT": "gradients", "OPTIMIZER_STATE": "optimizer state",
         "ACTIVATION": "activations", "AUTOGRAD_DETAIL": "autograd temporaries",
         "TEMPORARY": "autograd temporaries", "INPUT": "other"}
expected = {ours_name: 0 for ours_name in names.values()}
for theirs, ours_name in names.items():
    expected[ours_name] += reference.get(theirs, 0)
unmapped = {name: size for name, size in reference.items() if name not in names}

result = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
          "moment": moment, "oomdoc_peak_time_us": peak_time_us,
          "profiler_moment_time_ns": reference_time_ns,
          "profiler_bytes_at_moment": reference_total, "profiler_categories": reference,
          "profiler_peak_bytes": profiler_peak[1], "profiler_peak_time_ns": profiler_peak[0],
          "profiler_unmapped": unmapped,
          "oomdoc_peak_bytes": ours_total, "oomdoc_categories": ours, "checks": {}}
print(f"compared at {moment}: profiler {reference_total} B, oomdoc {ours_total} B")
if unmapped:
    print(f"note: profiler categories not compared: {unmapped}")
failed = False
for category, want in expected.items():
    got = ours.get(category, 0)
    scale = want if want >= reference_total / 100 else reference_total
    ok = abs(got - want) <= 0.05 * scale
    failed |= not ok
    result["checks"][category] = {"profiler": want, "oomdoc": got, "ok": ok}
    print(f"{'PASS' if ok else 'FAIL'}: {category}: oomdoc {got} B, profiler {want} B")
json.dump(result, open(os.path.join(out, "categories.json"), "w"), indent=1)
sys.exit(1 if failed else 0)
