"""Device test helper for `oomdoc explain`: make PyTorch fail on a real GPU in a known phase or
for a known cause, and print the traceback exactly as a user would see it (stderr).

Usage: python3 gen.py SCENARIO
"""
import os
import subprocess
import sys
import time
import traceback

import torch

GIB = 1 << 30


def total():
    return torch.cuda.mem_get_info()[1]


def capacity():
    # One allocation larger than the card → request_larger_than_gpu.
    torch.empty(int(total() * 1.5), dtype=torch.uint8, device="cuda")


def train_step(model, batch):
    # A frame named like a training loop's step → phase training_step.
    loss = model(batch).float().pow(2).mean()
    loss.backward()


def training():
    free = torch.cuda.mem_get_info()[0]
    width = 8192
    model = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(4)]).cuda()
    rows = int(free * 0.5) // (width * 4)  # activations alone take half of what is free
    train_step(model, torch.randn(rows, width, device="cuda"))


def fragmentation():
    # One big cached segment carved into 1 GiB tensors; freeing every other one leaves 1 GiB
    # holes that cannot be released (the segment is still partly used), so a 2 GiB request
    # fails although half the segment is free (as in the H200 fixture).
    free = torch.cuda.mem_get_info()[0]
    count = int(free // GIB) - 1
    big = torch.empty(count * GIB, dtype=torch.uint8, device="cuda")
    del big
    blocks = [torch.empty(GIB, dtype=torch.uint8, device="cuda") for _ in range(count)]
    for index in range(0, len(blocks), 2):
        blocks[index] = None
    torch.empty(2 * GIB, dtype=torch.uint8, device="cuda")


def other_process():
    # A second process holds 80% of the card; this one then asks for 40%.
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import torch,time;f,t=torch.cuda.mem_get_info();x=torch.empty(int(t*0.8),dtype=torch.uint8,device='cuda');print('held',flush=True);time.sleep(60)"],
        stdout=subprocess.PIPE,
    )
    holder.stdout.readline()
    try:
        torch.empty(int(total() * 0.4), dtype=torch.uint8, device="cuda")
    finally:
        holder.kill()


SCENARIOS = {
    "capacity": capacity,
    "training": training,
    "fragmentation": fragmentation,
    "other_process": other_process,
}

if __name__ == "__main__":
    name = sys.argv[1]
    print(f"PyTorch version: {torch.__version__}", flush=True)
    try:
        SCENARIOS[name]()
        print("no error", file=sys.stderr)
    except Exception:  # the whole traceback, as printed by Python
        traceback.print_exc()
        sys.exit(1)
