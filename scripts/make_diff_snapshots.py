#!/usr/bin/env python3
"""Writes two synthetic training-step memory snapshots shaped like PyTorch's
(`torch.cuda.memory._snapshot()`, docs/formats.md §2.2) with the standard library's pickle:
A and B are equal except that B's forward keeps 2 GiB more activations (one more 2 GiB block
at the same site). The backward also makes a 256 MiB autograd temporary (freed within it) and
frees the activations; `zero_grad` frees the 512 MiB gradient at the end; named ranges
(`external_annotations`, as `record_function` makes them) cover the step, the forward, the
optimizer step and `zero_grad`. Fixtures for `oomdoc snapshot diff` (#19):

    python3 scripts/make_diff_snapshots.py tests/fixtures/snapshot
"""
import os
import pickle
import sys

GiB = 2**30
MiB = 2**20
TORCH = "/usr/lib/python3.12/site-packages/torch"
BASE = 0x7F0000000000
SEGMENT = 16 * GiB
STREAM = 0


def frame(name, filename, line):
    return {"name": name, "filename": filename, "line": line}


MALLOC = frame("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc", "??", 0)
STACKS = {
    "parameters": [MALLOC, frame("reset_parameters", f"{TORCH}/nn/modules/linear.py", 117),
                   frame("__init__", f"{TORCH}/nn/modules/linear.py", 106), frame("build", "/work/train.py", 10)],
    "activations": [MALLOC, frame("forward", "/work/model.py", 42),
                    frame("_call_impl", f"{TORCH}/nn/modules/module.py", 1747),
                    frame("train_step", "/work/train.py", 20)],
    "gradients": [MALLOC, frame("_engine_run_backward", f"{TORCH}/autograd/graph.py", 823),
                  frame("backward", f"{TORCH}/autograd/__init__.py", 347),
                  frame("backward", f"{TORCH}/_tensor.py", 648), frame("train_step", "/work/train.py", 21)],
    "temporary": [MALLOC, frame("autograd::Engine::evaluate_function", "??", 0),
                  frame("_engine_run_backward", f"{TORCH}/autograd/graph.py", 823),
                  frame("backward", f"{TORCH}/autograd/__init__.py", 347),
                  frame("backward", f"{TORCH}/_tensor.py", 648), frame("train_step", "/work/train.py", 21)],
    "optimizer": [MALLOC, frame("_init_group", f"{TORCH}/optim/adam.py", 160),
                  frame("step", f"{TORCH}/optim/adam.py", 220), frame("train_step", "/work/train.py", 22)],
    "zero_grad": [frame("zero_grad", f"{TORCH}/optim/optimizer.py", 990), frame("train_step", "/work/train.py", 19)],
}


def snapshot(extra_activation):
    time = 1_795_969_164_000_000
    trace, live, cursor, annotations = [], {}, BASE, []

    def entry(action, addr, size, stack, **more):
        nonlocal time
        time += 1000
        trace.append(dict({"action": action, "addr": addr, "size": size, "stream": STREAM,
                           "time_us": time, "frames": STACKS.get(stack, []),
                           "compile_context": "N/A", "user_metadata": ""}, **more))

    def alloc(size, stack):
        nonlocal cursor
        address = cursor
        cursor += size
        entry("alloc", address, size, stack)
        live[address] = (size, stack)
        return address

    def free(address, by=None):
        size, stack = live.pop(address)
        entry("free_requested", address, size, by or stack)
        entry("free_completed", address, size, by or stack)

    def mark(name, stage):
        annotations.append({"name": name, "stage": stage, "device": 0, "time_us": time + 500})

    entry("segment_alloc", BASE, SEGMENT, None)
    alloc(1 * GiB, "parameters")
    alloc(512 * MiB, "parameters")
    mark("train_step", "START")
    mark("## forward ##", "START")
    activations = [alloc(1 * GiB, "activations"), alloc(2 * GiB, "activations")]
    if extra_activation:
        activations.append(alloc(2 * GiB, "activations"))
    mark("## forward ##", "END")
    alloc(1 * GiB, "gradients")
    temporary = alloc(256 * MiB, "temporary")
    gradient = alloc(512 * MiB, "gradients")
    free(temporary, by="temporary")
    for address in activations:
        free(address, by="gradients")
    mark("Optimizer.step#Adam.step", "START")
    alloc(2 * GiB, "optimizer")
    alloc(1 * GiB, "optimizer")
    mark("Optimizer.step#Adam.step", "END")
    mark("Optimizer.zero_grad#Adam.zero_grad", "START")
    free(gradient, by="zero_grad")
    mark("Optimizer.zero_grad#Adam.zero_grad", "END")
    mark("train_step", "END")

    blocks, position = [], BASE
    for address in sorted(live):
        if address > position:
            blocks.append({"address": position, "size": address - position, "requested_size": 0,
                           "state": "inactive", "frames": []})
        size, stack = live[address]
        blocks.append({"address": address, "size": size, "requested_size": size,
                       "state": "active_allocated", "frames": STACKS[stack]})
        position = address + size
    if position < BASE + SEGMENT:
        blocks.append({"address": position, "size": BASE + SEGMENT - position, "requested_size": 0,
                       "state": "inactive", "frames": []})
    allocated = sum(size for size, _ in live.values())
    segment = {"device": 0, "address": BASE, "total_size": SEGMENT, "stream": STREAM,
               "segment_type": "large", "segment_pool_id": (0, 0), "allocated_size": allocated,
               "active_size": allocated, "requested_size": allocated, "is_expandable": False,
               "frames": [], "blocks": blocks}
    return {"segments": [segment], "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                   "garbage_collection_threshold": 0.0, "expandable_segments": False},
            "external_annotations": annotations}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, extra in (("synthetic-train-step-a.pickle", False), ("synthetic-train-step-b.pickle", True)):
        with open(os.path.join(out, name), "wb") as file:
            pickle.dump(snapshot(extra), file, protocol=4)


if __name__ == "__main__":
    main()
