"""Device test for `oomdoc run` (H200): load weights, convert them (a transient peak), then OOM.

Prints vLLM-like phase lines (formats.md 3.2) so the explain machinery finds the phases:
  weights_load      "Starting to load model ..." ... "Loading weights took X seconds"
  format_conversion "Converting weights to fp8 ..." ... "Conversion took X seconds"
  profiling         "Memory profiling ..." then an allocation larger than free memory -> OOM
Writes the wall-clock times of each step to --times (JSON) for the checker.
"""
import argparse
import json
import sys
import time

import torch

GIB = 1 << 30

parser = argparse.ArgumentParser()
parser.add_argument("--weights-gib", type=int, default=20)
parser.add_argument("--transient-gib", type=int, default=10)
parser.add_argument("--transient-ms", type=float, default=30.0)
parser.add_argument("--times", default=None)
args = parser.parse_args()

times = {}
device = torch.device("cuda:0")
torch.cuda.init()
torch.zeros(1, device=device)  # CUDA context first, so the loading phase holds only weights
torch.cuda.synchronize()
time.sleep(0.3)

print("INFO Starting to load model demo/fake-20GiB...", flush=True)
times["load_start"] = time.time()
weights = []
start = time.monotonic()
for shard in range(args.weights_gib):
    weights.append(torch.empty(GIB, dtype=torch.uint8, device=device))
    torch.cuda.synchronize()
    print("Loading safetensors checkpoint shards: %d/%d" % (shard + 1, args.weights_gib), file=sys.stderr, flush=True)
    time.sleep(0.05)
print("INFO Loading weights took %.2f seconds" % (time.monotonic() - start), flush=True)
times["load_end"] = time.time()
time.sleep(0.5)

print("INFO Converting weights to fp8 (repack)", flush=True)
times["convert_start"] = time.time()
time.sleep(0.3)
start = time.monotonic()
scratch = torch.empty(args.transient_gib * GIB, dtype=torch.uint8, device=device)
torch.cuda.synchronize()
times["transient_start"] = time.time()
time.sleep(args.transient_ms / 1000.0)
del scratch
torch.cuda.empty_cache()  # give it back to the driver so NVML sees the drop
torch.cuda.synchronize()
times["transient_end"] = time.time()
time.sleep(0.3)
print("INFO Conversion took %.2f seconds" % (time.monotonic() - start), flush=True)
times["convert_end"] = time.time()
time.sleep(0.5)

print("INFO Memory profiling: dummy forward pass", flush=True)
times["profile_start"] = time.time()
if args.times:
    with open(args.times, "w") as handle:
        json.dump(times, handle)
free, total = torch.cuda.mem_get_info()
times["free_before_oom"] = free
if args.times:
    with open(args.times, "w") as handle:
        json.dump(times, handle)
# More than is free: the caching allocator raises torch.OutOfMemoryError (uncaught -> exit 1).
activations = torch.empty(free + 4 * GIB, dtype=torch.uint8, device=device)
print("unreachable", activations.shape)
