#!/usr/bin/env python3
"""Holds GPU memory for the oomdoc device tests: allocates GIB GiB on cuda:DEVICE, writes a
JSON line {pid, device, uuid, reserved_bytes, allocated_bytes} to READY, then sleeps until
killed (at most 90 s)."""
import json
import os
import sys
import time

import torch

gib = float(sys.argv[1])
device = int(sys.argv[2])
ready = sys.argv[3]
torch.cuda.set_device(device)
block = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device=f"cuda:{device}")
block.fill_(1)
torch.cuda.synchronize()
info = {
    "pid": os.getpid(),
    "device": device,
    "uuid": "GPU-" + str(torch.cuda.get_device_properties(device).uuid),
    "reserved_bytes": torch.cuda.memory_reserved(device),
    "allocated_bytes": torch.cuda.memory_allocated(device),
    "mem_get_info": list(torch.cuda.mem_get_info(device)),
}
with open(ready + ".tmp", "w") as f:
    json.dump(info, f)
os.rename(ready + ".tmp", ready)
time.sleep(90)
