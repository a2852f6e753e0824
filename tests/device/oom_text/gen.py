"""Produce one real failure text per OOM family on this GPU (R1 device check).

Usage: python3 gen.py SCENARIO  — prints the exception as Python prints it (traceback on stderr).
Each scenario runs in its own process: a CUDA error can poison the context.
"""
import os
import sys

name = sys.argv[1]
import torch  # noqa: E402

total = torch.cuda.get_device_properties(0).total_memory if torch.cuda.is_available() else 0
huge = 400 << 30  # more than any single GPU

if name == "caching_allocator":
    torch.empty(huge, dtype=torch.uint8, device="cuda")
elif name == "fraction_allowed":
    torch.cuda.set_per_process_memory_fraction(0.5)
    torch.empty(int(total * 0.6), dtype=torch.uint8, device="cuda")
elif name == "private_pools":
    x = torch.zeros(1 << 20, device="cuda")
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph):
            tmp = torch.empty(5 << 20, device="cuda")
            y = x * 2
            del tmp
    torch.cuda.current_stream().wait_stream(stream)
    torch.empty(huge, dtype=torch.uint8, device="cuda")
elif name == "malloc_async":  # PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
    torch.empty(huge, dtype=torch.uint8, device="cuda")
elif name == "expandable_segments":  # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    torch.empty(huge, dtype=torch.uint8, device="cuda")
elif name == "no_caching":  # PYTORCH_NO_CUDA_MEMORY_CACHING=1
    torch.empty(huge, dtype=torch.uint8, device="cuda")
elif name == "absurd":
    torch.empty(1 << 61, dtype=torch.uint8, device="cuda")
elif name == "host_ram":
    torch.empty(1 << 50, dtype=torch.uint8)
else:
    sys.exit(f"unknown scenario {name}")
print("no error", file=sys.stderr)
