"""Device test for `oomdoc run` (H200): load weights, convert them (a transient peak), then OOM.

Prints vLLM's phase lines (formats.md 3.2) and uses vLLM's function names, so explain places the
phases from the log and from the OOM's traceback:
  weights_load      "Starting to load model ..." ... "Loading weights took", "Model loading took"
  format_conversion process_weights_after_loading(): "Converting weights ..." ... "Conversion took"
                    (plain lines that `oomdoc run` places; vLLM prints none here)
  profiling         profile_run(): an allocation larger than free memory -> torch.OutOfMemoryError
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

def load_weights():
    """vLLM's loader wording: `Starting to load model`, `Loading weights took`, `Model loading took`."""
    print("INFO Starting to load model demo/fake-%dGiB..." % args.weights_gib, flush=True)
    times["load_start"] = time.time()
    weights = []
    start = time.monotonic()
    for shard in range(args.weights_gib):
        weights.append(torch.empty(GIB, dtype=torch.uint8, device=device))
        torch.cuda.synchronize()
        time.sleep(0.05)
    seconds = time.monotonic() - start
    print("INFO Loading weights took %.2f seconds" % seconds, flush=True)
    print("INFO Model loading took %.4f GiB and %.6f seconds" % (float(args.weights_gib), seconds), flush=True)
    times["load_end"] = time.time()
    return weights


def process_weights_after_loading():
    """A repack (vLLM's name for post-load conversion): a transient copy of half the weights."""
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


def profile_run():
    """vLLM's dummy forward pass that sizes the KV cache: here it asks for more than is free."""
    print("INFO Memory profiling: dummy forward pass", flush=True)
    times["profile_start"] = time.time()
    free, total = torch.cuda.mem_get_info()
    times["free_before_oom"] = free
    if args.times:
        with open(args.times, "w") as handle:
            json.dump(times, handle)
    # More than is free: the caching allocator raises torch.OutOfMemoryError (uncaught -> exit 1).
    return torch.empty(free + 4 * GIB, dtype=torch.uint8, device=device)


weights = load_weights()
time.sleep(0.5)
process_weights_after_loading()
time.sleep(0.5)
profile_run()
print("unreachable")
