#!/usr/bin/env python3
"""Device test for `oomdoc snapshot diff` categories (#19), on a lent GPU with torch.

Makes a reference training step (an MLP with Adam) under both
`torch.cuda.memory._record_memory_history()` and the profiler's memory profile, then compares
oomdoc's category totals at the snapshot's peak with `torch.profiler._memory_profiler`'s
categories at its own peak: each of parameters, gradients, optimizer state and activations
must agree within 5 % (of PyTorch's figure, or of the peak for a category under 1 % of it).

    python3 tests/device/snapshot/categories.py OOMDOC_BINARY OUT_DIR
"""
import json
import os
import subprocess
import sys

import torch
from torch.profiler import ProfilerActivity, profile
from torch.profiler import _memory_profiler as mp

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

# PyTorch's categories over the profiled step, at its peak.
profile_memory = prof._memory_profile()
categories = profile_memory._categories
live, best = {}, (-1, {})
Action = mp.Action
for _, action, (key, version), size in profile_memory.timeline:
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
    total = sum(totals.values())
    if total > best[0]:
        best = (total, totals)
reference_total, reference = best
names = {"PARAMETER": "parameters", "GRADIENT": "gradients", "OPTIMIZER_STATE": "optimizer state",
         "ACTIVATION": "activations"}
expected = {ours: reference.get(theirs, 0) for theirs, ours in names.items()}

report = subprocess.run([oomdoc, "snapshot", "diff", snapshot_path, snapshot_path, "--json"],
                        capture_output=True, text=True, check=True)
document = json.loads(report.stdout)
peak = next(m for m in document["moments"] if m["moment"] == "peak")
ours = {row["key"]: row["a_bytes"] for row in peak["by_category"]}

result = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
          "profiler_peak_bytes": reference_total, "profiler_categories": reference,
          "oomdoc_peak_bytes": peak["a_allocated_bytes"], "oomdoc_categories": ours, "checks": {}}
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
