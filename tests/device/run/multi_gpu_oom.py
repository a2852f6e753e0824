"""Device test for `oomdoc run` on 2 GPUs (issue 9), launched by torchrun with NCCL.

Each rank takes GPU <LOCAL_RANK>, does an all_reduce, holds a few GiB; then rank 1 asks for more
than its GPU has free (torch.OutOfMemoryError) while rank 0 waits at a barrier and does not OOM.
Both print a few lines so their output interleaves.
"""
import os
import sys
import time

import torch
import torch.distributed as dist

GIB = 1 << 30
local_rank = int(os.environ["LOCAL_RANK"])
rank = int(os.environ["RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
device = torch.device("cuda", local_rank)
value = torch.ones(1, device=device) * (rank + 1)
dist.all_reduce(value)
print("rank %d: all_reduce gave %.0f" % (rank, value.item()), flush=True)
held = [torch.empty(GIB, dtype=torch.uint8, device=device) for _ in range(4 + 4 * rank)]
torch.cuda.synchronize()
for step in range(5):
    print("rank %d: step %d holds %d GiB" % (rank, step, len(held)), flush=True)
    time.sleep(0.1)
dist.barrier()
if rank == 1:
    free, total = torch.cuda.mem_get_info()
    print("rank 1: asking for %.2f GiB more than the %.2f GiB free" % (4.0, free / GIB), flush=True)
    too_much = torch.empty(free + 4 * GIB, dtype=torch.uint8, device=device)
else:
    time.sleep(3)
    print("rank 0: finished without OOM", flush=True)
dist.destroy_process_group()
