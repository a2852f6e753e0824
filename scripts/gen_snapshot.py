#!/usr/bin/env python3
"""Write a large synthetic PyTorch memory snapshot with the shape and variety of a real one.

Usage: gen_snapshot.py OUT.pickle TARGET_MIB [SEED [SHAPE]]

SHAPE is `varied` (the default, described below) or `real`: the frame sharing of a real
training snapshot, as in the H200 fixtures (tests/fixtures/h200-torch2.11/snap/): about 200
distinct frames (real: 195 in `model_forward`), 300 call sites, stacks 30 to 90 frames deep
(real: 55 on average), so every trace entry is a list of references to a few frame dicts
shared through the pickle memo and the same stacks recur over and over.

For benchmarks (scripts/bench_snapshot.sh) and for the huge-input tests. Needs only the
Python standard library. The pickle is laid out as `torch.cuda.memory._dump_snapshot()`
writes it (protocol 4, the dict of `_snapshot()`; docs/formats.md in the repository):

* frames are dicts `{name, filename, line}`, one dict object per distinct frame, shared
  by every stack that contains it (PyTorch's `py_symbolize` builds one dict per distinct
  frame), each with string objects of its own (so repeated file names are written again,
  as in real files: a 2.11 training snapshot repeats `??` 132 times);
* every trace entry has a list of frames of its own (a new list object per traceback),
  except `free_completed`, which shares its `free_requested` entry's traceback;
* `compile_context` is a new `'N/A'` string per entry, as in real snapshots;
* thousands of distinct frames (Python model code in dozens of files, C++ frames), stacks
  20 to 90 frames deep, thousands of call sites, many segments with many blocks, and
  `external_annotations` (optimizer step ranges).

The trace follows a training loop (forward activations, backward gradients and
temporaries, optimizer state once, optimizer step temporaries) over a simple allocator
model, so alloc/free pairs, addresses and sizes are consistent. One site
(`ActivationCache.remember` in model/cache.py) allocates 2 MiB every iteration and never
frees it: a planted growth for the growth-by-site analysis.
"""
import pickle
import random
import sys

MIB = 1 << 20


def fresh(text):
    """A new str object with this text (pickle writes it again, as PyTorch's do)."""
    return (text + ".")[:-1]


def make_frames(rng, real):
    """Distinct frame dicts: C++ allocator/dispatch frames and Python model frames."""
    cpp_files = ["??", "", "RegisterCUDA_0.cpp", "VariableType_0.cpp", "VariableType_2.cpp",
                 "TensorImpl.cpp", "python_variable.cpp", "CUDACachingAllocator.cpp",
                 "memory_snapshot.cpp", "RegisterCompositeExplicitAutograd_0.cpp",
                 "Functions.cpp", "engine.cpp", "python_engine.cpp", "Blas.cpp",
                 "Activation.cu", "Normalization.cu", "Loss.cu", "Copy.cu"]
    ops = ["add", "mul", "matmul", "addmm", "bmm", "gelu", "silu", "softmax", "layer_norm",
           "native_layer_norm", "embedding", "dropout", "cat", "transpose", "contiguous",
           "empty", "empty_strided", "zeros_like", "ones_like", "copy_", "to", "_to_copy",
           "scaled_dot_product_attention", "_efficient_attention_forward", "mm", "sum",
           "mean", "rsqrt", "pow", "div", "sub", "neg", "exp", "log_softmax", "nll_loss",
           "cross_entropy", "where", "masked_fill", "view", "reshape", "expand", "index",
           "index_select", "scatter_add", "_foreach_add", "_foreach_mul", "_foreach_lerp",
           "_foreach_sqrt", "_foreach_div", "_fused_adamw"]
    namespaces = ["at::native", "at::_ops", "at::(anonymous namespace)", "torch::autograd",
                  "c10::impl", "at::cuda", "torch::autograd::generated",
                  "at::functionalization", "c10::Dispatcher"]
    cpp = []
    kinds = ("", "_out", "_impl", "::call", "::redispatch")
    if real:
        ops, namespaces, kinds = ops[:10], namespaces[:3], kinds[:2]
    for op in ops:
        for ns in namespaces:
            for kind in kinds:
                name = f"{ns}::{op}{kind}(at::Tensor const&, c10::ArrayRef<long>, " \
                       f"std::optional<c10::ScalarType>)"
                cpp.append({"name": fresh(name), "filename": fresh(rng.choice(cpp_files)),
                            "line": 0})
    unwind = [
        {"name": fresh("torch::unwind::unwind()"), "filename": fresh("??"), "line": 0},
        {"name": fresh("torch::CapturedTraceback::gather(bool, bool, bool)"),
         "filename": fresh("??"), "line": 0},
        {"name": fresh("torch::cuda::(anonymous namespace)::gather_with_cpp()"),
         "filename": fresh("memory_snapshot.cpp"), "line": 0},
    ]
    alloc = {"name": fresh("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::"
                           "malloc(signed char, unsigned long, CUstream_st*)"),
             "filename": fresh("CUDACachingAllocator.cpp"), "line": 0}
    free = {"name": fresh("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::"
                          "free(c10::cuda::CUDACachingAllocator::Native::(anonymous "
                          "namespace)::Block*)"),
            "filename": fresh("CUDACachingAllocator.cpp"), "line": 0}
    venv = "/opt/torch/.venv/lib/python3.12/site-packages/"
    library = [venv + "torch/nn/modules/" + name + ".py" for name in
               ("module", "linear", "normalization", "activation", "sparse", "dropout",
                "container", "loss")]
    library += [venv + "torch/nn/functional.py", venv + "torch/optim/optimizer.py",
                venv + "torch/optim/adamw.py", venv + "torch/autograd/__init__.py",
                venv + "torch/_tensor.py", venv + "torch/utils/checkpoint.py",
                venv + "torch/amp/autocast_mode.py", venv + "torch/autograd/graph.py"]
    user = [f"/home/alice/projects/llm/model/{name}.py" for name in
            ("attention", "mlp", "block", "embedding", "rope", "norm", "moe", "router",
             "head", "loss", "cache")]
    user += [f"/home/alice/projects/llm/train/{name}.py" for name in
             ("loop", "step", "data", "schedule", "ema", "eval")]
    python = {}
    for path in library + user:
        functions = rng.randint(2, 4) if real else rng.randint(20, 90)
        stem = path.rsplit("/", 1)[1][:-3]
        entries = []
        for k in range(functions):
            name = rng.choice(["forward", "_call_impl", "_wrapped_call_impl", "step",
                               "backward", "_init_group", "apply", "__call__", "run",
                               f"{stem}_{k}", f"_{stem}_helper_{k}", f"compute_{k}"])
            for _ in range(rng.randint(1, 2) if real else rng.randint(1, 4)):
                entries.append({"name": fresh(name), "filename": fresh(path),
                                "line": rng.randint(10, 4000)})
        python[path] = entries
    return cpp, unwind, alloc, free, python, user, library


def make_sites(rng, count, cpp, unwind, alloc, free, python, user, library, real):
    """Call sites: a stack of frames (innermost first) and the phase it belongs to."""
    sites = []
    train = [p for p in user if "/train/" in p]
    model = [p for p in user if "/model/" in p]
    for index in range(count):
        phase = rng.choices(["forward", "backward", "optimizer", "data"], [5, 4, 1, 1])[0]
        frames = list(unwind) + [alloc]
        frames += rng.sample(cpp, rng.randint(4, 22))
        if phase == "backward":
            frames += rng.sample(cpp, rng.randint(4, 12))
        else:
            depth = rng.randint(20, 60) if real else rng.randint(4, 40)
            files = model if phase == "forward" else (train if phase == "data" else [])
            pool = [f for path in files + library for f in python[path]]
            if phase == "optimizer":
                pool = [f for path in library if "optim" in path for f in python[path]]
            frames += [rng.choice(pool) for _ in range(depth)]
            frames += rng.sample(python[rng.choice(train)], 2)
        sites.append((phase, frames))
    free_sites = []
    for _ in range(max(8, count // 20)):
        frames = list(unwind) + [free] + rng.sample(cpp, rng.randint(6, 18))
        free_sites.append(frames)
    return sites, free_sites


def main():
    out, target_mib = sys.argv[1], int(sys.argv[2])
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 19)
    shape = sys.argv[4] if len(sys.argv) > 4 else "varied"
    if shape not in ("varied", "real"):
        sys.exit(f"gen_snapshot.py: SHAPE is `varied` or `real`, not `{shape}`")
    real = shape == "real"
    cpp, unwind, alloc, free, python, user, library = make_frames(rng, real)
    sites, free_sites = make_sites(rng, 300 if real else 4000, cpp, unwind, alloc, free,
                                   python, user, library, real)
    leak_frames = list(unwind) + [alloc] + rng.sample(cpp, 6) + [
        {"name": fresh("remember"), "filename": fresh("/home/alice/projects/llm/model/cache.py"),
         "line": 88},
        {"name": fresh("forward"), "filename": fresh("/home/alice/projects/llm/model/block.py"),
         "line": 141},
    ] + rng.sample(python[user[-1]], 2)
    by_phase = {}
    for site in sites:
        by_phase.setdefault(site[0], []).append(site[1])

    # Segments: a mix of 2 MiB small-pool segments and large segments of 20 MiB to 2 GiB.
    segments, blocks_for = [], []
    address = 0x7F0000000000
    for index in range(2500):
        small = index % 3 == 0
        total = 2 * MIB if small else rng.choice([20, 64, 128, 256, 512, 1024, 2048]) * MIB
        seg = {"device": 0, "address": address, "total_size": total, "allocated_size": 0,
               "active_size": 0, "requested_size": 0, "stream": 0,
               "segment_type": "small" if small else "large", "segment_pool_id": (0, 0),
               "is_expandable": False, "frames": list(rng.choice(sites)[1]), "blocks": []}
        offset, parts = 0, rng.randint(4, 40)
        for part in range(parts):
            size = total - offset if part == parts - 1 else \
                max(512, (total // parts) // 512 * 512)
            if size <= 0:
                break
            active = rng.random() < 0.6
            block = {"address": address + offset, "size": size,
                     "requested_size": size - (rng.randint(0, 511) if active else 0),
                     "state": "active_allocated" if active else "inactive",
                     "frames": list(rng.choice(sites)[1]) if active else []}
            if active:
                seg["allocated_size"] += size
                seg["active_size"] += size
                seg["requested_size"] += block["requested_size"]
            seg["blocks"].append(block)
            offset += size
        segments.append(seg)
        address += total + (1 << 30)

    # The trace: a training loop over a bump allocator inside a 1 TiB address range.
    trace, annotations = [], []
    estimate, target = 0, target_mib * MIB
    now = 1_795_969_298_000_000
    heap = 0x7E0000000000
    stream = 0
    actions = {name: name for name in ("alloc", "free_requested", "free_completed",
                                       "segment_alloc", "segment_free")}
    empty = ""

    def entry(action, addr, size, frames):
        nonlocal now, estimate
        now += rng.randint(1, 40)
        trace.append({"action": actions[action], "addr": addr, "size": size,
                      "stream": stream, "time_us": now, "compile_context": fresh("N/A"),
                      "user_metadata": empty, "frames": frames})
        estimate += 75 + 5 * len(frames)

    iteration = 0
    while estimate < target:
        iteration += 1
        live = []
        if iteration % 50 == 1:
            size = rng.choice([64, 256, 1024]) * MIB
            entry("segment_alloc", heap, size, list(rng.choice(by_phase["forward"])))
        # forward: activations
        for _ in range(rng.randint(150, 260)):
            size = rng.choice([512, 4096, 65536, MIB, 2 * MIB, 8 * MIB, 64 * MIB, 256 * MIB])
            size = size + 512 * rng.randint(0, 3)
            entry("alloc", heap, size, list(rng.choice(by_phase["forward"])))
            live.append((heap, size))
            heap += size
        entry("alloc", heap, 2 * MIB, list(leak_frames))
        heap += 2 * MIB
        # backward: gradients and temporaries, activations freed
        rng.shuffle(live)
        grads = []
        for addr, size in live:
            if rng.random() < 0.5:
                grad = rng.choice([4096, MIB, 16 * MIB])
                entry("alloc", heap, grad, list(rng.choice(by_phase["backward"])))
                grads.append((heap, grad))
                heap += grad
            frames = list(rng.choice(free_sites))
            entry("free_requested", addr, size, frames)
            entry("free_completed", addr, size, frames)
        # optimizer step
        annotations.append({"stage": fresh("START"), "name": fresh("Optimizer.step#AdamW.step"),
                            "device": 0, "time_us": now})
        for _ in range(rng.randint(20, 60)):
            size = rng.choice([MIB, 16 * MIB, 64 * MIB])
            entry("alloc", heap, size, list(rng.choice(by_phase["optimizer"])))
            frames = list(rng.choice(free_sites))
            entry("free_requested", heap, size, frames)
            entry("free_completed", heap, size, frames)
            heap += size
        annotations.append({"stage": fresh("END"), "name": fresh("Optimizer.step#AdamW.step"),
                            "device": 0, "time_us": now})
        for addr, size in grads:
            frames = list(rng.choice(free_sites))
            entry("free_requested", addr, size, frames)
            entry("free_completed", addr, size, frames)
        if heap > 0x7EFF00000000:
            heap = 0x7E0000000000

    snapshot = {
        "segments": segments,
        "device_traces": [trace],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                               "garbage_collection_threshold": 0.0,
                               "expandable_segments": False},
        "external_annotations": annotations,
    }
    with open(out, "wb") as f:
        pickle.dump(snapshot, f, protocol=4)
    frames = len({id(f) for site in sites for f in site[1]})
    blocks = sum(len(s["blocks"]) for s in segments)
    print(f"{out}: {len(trace)} trace entries, {iteration} iterations, {len(segments)} "
          f"segments, {blocks} blocks, {len(sites)} sites, {frames} distinct frames")


if __name__ == "__main__":
    main()
