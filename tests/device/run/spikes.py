"""Device test for `oomdoc run` (H200): N spikes of SIZE GiB held HOLD ms each, at known times.

Each spike is cudaMalloc'd and given back (empty_cache) so NVML sees it. The wall-clock start and
end of each spike go to --times (JSON) for the checker, which compares them with oomdoc's memory
timeline and with `nvidia-smi -lms 100` run beside it.
"""
import argparse
import json
import time

import torch

GIB = 1 << 30

parser = argparse.ArgumentParser()
parser.add_argument("--count", type=int, default=40)
parser.add_argument("--size-gib", type=int, default=2)
parser.add_argument("--hold-ms", type=float, default=10.0)
parser.add_argument("--gap-ms", type=float, default=250.0)
parser.add_argument("--times", required=True)
args = parser.parse_args()

device = torch.device("cuda:0")
torch.zeros(1, device=device)
torch.cuda.synchronize()
time.sleep(0.5)
spikes = []
busy_start = time.process_time()
for index in range(args.count):
    alloc = time.time()
    block = torch.empty(args.size_gib * GIB, dtype=torch.uint8, device=device)
    torch.cuda.synchronize()
    start = time.time()
    deadline = time.monotonic() + args.hold_ms / 1000.0
    while time.monotonic() < deadline:
        pass
    end = time.time()
    del block
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    freed = time.time()
    spikes.append({"alloc": alloc, "start": start, "end": end, "freed": freed})
    time.sleep(args.gap_ms / 1000.0)
print("spikes done: %d x %d GiB held %.0f ms" % (args.count, args.size_gib, args.hold_ms), flush=True)
with open(args.times, "w") as handle:
    json.dump({"spikes": spikes, "size_gib": args.size_gib, "hold_ms": args.hold_ms}, handle)
