"""Real GPU-failure texts for the labelled corpus (tests/fixtures/corpus/h200/), made on an H200.

Usage:
  python3 gen.py SCENARIO                 run one scenario the way a user's script would and let
                                          its error reach the console unhandled, so that run.sh
                                          keeps exactly what a user sees (traceback, logs, bars)
  python3 gen.py _setup                   write the random-weight Llama checkpoint (~1 GiB bf16,
                                          no download) that the transformers scenarios load
  python3 gen.py _hold LEAVE_GIB READY    another process that holds all of the card but
                                          LEAVE_GIB (0: every byte it can get), writes READY, sleeps

A scenario that ends without an error prints `NO-ERROR: ...` on stderr and exits 3.

The card has ~140 GiB, so to fail quickly and deterministically most scenarios first take all
but a few GiB of it with one filler tensor (`fill_gpu`), standing in for the rest of the job's
memory; the figures in the message then show that this process holds nearly the whole card.
"""
import ctypes
import os
import sys
import time

GIB = 1 << 30
MIB = 1 << 20
CKPT = os.environ.get("OOMDOC_CORPUS_CKPT", "/tmp/oomdoc-corpus/llama-550m")
WORK = os.path.dirname(CKPT)


def memory_cgroup(scenario, name, limit):
    """A cgroup v2 memory group `name` under /sys/fs/cgroup limited to `limit` bytes, no swap
    (the memory controller enabled first when it is not); returns its path and a function that
    moves the calling process into it. Exits naming `scenario` when the machine cannot."""
    root = "/sys/fs/cgroup"
    if not os.path.exists(os.path.join(root, "cgroup.controllers")):
        sys.exit(f"no cgroup v2 hierarchy at /sys/fs/cgroup: {scenario} cannot run")
    with open(os.path.join(root, "cgroup.subtree_control")) as fh:
        enabled = fh.read().split()
    if "memory" not in enabled:
        try:
            with open(os.path.join(root, "cgroup.subtree_control"), "w") as fh:
                fh.write("+memory")
        except OSError as error:
            sys.exit(f"cannot enable the memory controller ({error}): cannot run")
    group = os.path.join(root, name)
    try:
        os.mkdir(group)
        with open(os.path.join(group, "memory.max"), "w") as fh:
            fh.write(str(limit))
        if os.path.exists(os.path.join(group, "memory.swap.max")):
            with open(os.path.join(group, "memory.swap.max"), "w") as fh:
                fh.write("0")
    except OSError as error:
        sys.exit(f"cannot make a memory cgroup ({error}): cannot run")

    def enter_group():
        with open(os.path.join(group, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))

    return group, enter_group

NAME = sys.argv[1] if len(sys.argv) > 1 else ""

_FILLER = []  # tensors and raw pointers kept alive to hold memory


def fill_gpu(leave_bytes):
    """Take all of the card's free memory but `leave_bytes` with one PyTorch tensor."""
    import torch

    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    free, _total = torch.cuda.mem_get_info()
    size = (free - int(leave_bytes)) // (2 * MIB) * (2 * MIB)
    if size > 0:
        _FILLER.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
    torch.cuda.synchronize()


def fill_all():
    """Take every byte of the card this process can get: PyTorch tensors, then raw driver
    allocations for what is below PyTorch's 2 MiB granularity."""
    import torch

    torch.zeros(1, device="cuda")
    for size in (8 * GIB, GIB, 128 * MIB, 16 * MIB, MIB):
        while True:
            try:
                _FILLER.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
            except torch.OutOfMemoryError:
                break
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        alloc = libcuda.cuMemAlloc_v2
        alloc.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        alloc.restype = ctypes.c_int
        ptr = ctypes.c_uint64()
        for size in (8 * MIB, MIB, 64 << 10, 4 << 10):
            while alloc(ctypes.byref(ptr), size) == 0:
                _FILLER.append(ptr.value)
    except OSError:
        pass
    torch.cuda.synchronize()


def mlp(d_in=4096, d_hidden=16384):
    import torch.nn as nn

    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(), nn.Linear(d_hidden, d_in))


# --------------------------------------------------------------------------- helpers' modes


def setup():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    if os.path.exists(os.path.join(CKPT, "config.json")):
        print("checkpoint already there:", CKPT)
        return
    config = LlamaConfig(
        vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=8,
        num_attention_heads=16, num_key_value_heads=16, max_position_embeddings=4096,
        tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=0,
    )
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    model = LlamaForCausalLM(config)
    torch.set_default_dtype(torch.float32)
    model = model.to(torch.bfloat16)
    start = time.time()
    model.save_pretrained(CKPT, max_shard_size="20GB")
    params = sum(p.numel() for p in model.parameters())
    print(f"saved {params / 1e6:.0f}M params to {CKPT} in {time.time() - start:.1f} s:",
          sorted(os.listdir(CKPT)))


def hold(leave_gib, ready):
    import torch

    if leave_gib <= 0:
        fill_all()
    else:
        fill_gpu(leave_gib * GIB)
    free, total = torch.cuda.mem_get_info()
    with open(ready, "w") as fh:
        fh.write(f"{os.getpid()} free={free} total={total}\n")
    while True:
        time.sleep(1)


# --------------------------------------------------------------------------- transformers


def hf_from_pretrained():
    import torch
    from transformers import AutoModelForCausalLM

    fill_gpu(600 * MIB)  # the policy model and its optimizer already sit on this card
    ref_model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    return ref_model


def hf_generate():
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    model.eval()
    fill_gpu(3 * GIB)
    prompts = torch.randint(3, 32000, (256, 1024), device="cuda")
    attention_mask = torch.ones_like(prompts)
    print(f"generating for {prompts.shape[0]} prompts of {prompts.shape[1]} tokens")
    outputs = model.generate(input_ids=prompts, attention_mask=attention_mask,
                             max_new_tokens=128, do_sample=False, pad_token_id=0)
    print(outputs.shape)


def hf_trainer():
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    class RandomTokens(torch.utils.data.Dataset):
        def __len__(self):
            return 640

        def __getitem__(self, index):
            ids = torch.randint(3, 32000, (1024,))
            return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.float32).to("cuda")
    fill_gpu(5 * GIB)
    args = TrainingArguments(
        output_dir=os.path.join(WORK, "trainer-out"), per_device_train_batch_size=16,
        max_steps=40, logging_steps=5, learning_rate=1e-4, bf16=True, report_to="none",
        save_strategy="no", dataloader_num_workers=0, disable_tqdm=False,
    )
    trainer = Trainer(model=model, args=args, train_dataset=RandomTokens())
    trainer.train()


def hf_half():
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.float32, device_map="cuda")
    torch.cuda.empty_cache()
    fill_gpu(96 * MIB)
    model = model.half()
    print(next(model.parameters()).dtype)


def hf_to_cuda():
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16)
    fill_gpu(512 * MIB)
    model.to("cuda")
    print(model.device)


# --------------------------------------------------------------------------- accelerate


def accelerate_load_checkpoint_and_dispatch():
    import torch
    from accelerate import init_empty_weights, load_checkpoint_and_dispatch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(CKPT)
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(config)
    fill_gpu(512 * MIB)
    model = load_checkpoint_and_dispatch(model, CKPT, device_map={"": 0}, dtype=torch.bfloat16)
    print(model.hf_device_map)


def accelerate_dispatch_model():
    import torch
    from accelerate import dispatch_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16)
    fill_gpu(512 * MIB)
    model = dispatch_model(model, device_map={"": 0})
    print(model.device)


def accelerate_find_batch_size():
    import torch
    import torch.nn.functional as F
    from accelerate import Accelerator
    from accelerate.utils import find_executable_batch_size

    accelerator = Accelerator()
    fill_gpu(256 * MIB)

    @find_executable_batch_size(starting_batch_size=16)
    def inner_training_loop(batch_size):
        accelerator.free_memory()
        accelerator.print(f"Trying batch size: {batch_size}")
        model = mlp()  # 0.5 GiB of fp32 weights
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        model, optimizer = accelerator.prepare(model, optimizer)
        for _ in range(10):
            x = torch.randn(batch_size, 4096, device=accelerator.device)
            loss = F.mse_loss(model(x), x)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()

    inner_training_loop()


# --------------------------------------------------------------------------- PEFT, Lightning


def peft_lora():
    import torch
    from peft import LoraConfig, get_peft_model
    from tqdm.auto import tqdm
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=["q_proj", "v_proj"],
                      task_type="CAUSAL_LM")
    model = get_peft_model(model, lora)
    model.print_trainable_parameters()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)
    fill_gpu(4 * GIB)
    model.train()
    progress = tqdm(range(200), desc="lora")
    for step in progress:
        batch = torch.randint(3, 32000, (16, 2048), device="cuda")
        outputs = model(input_ids=batch, labels=batch)
        outputs.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        progress.set_postfix(loss=f"{outputs.loss.item():.4f}")


def lightning_fit():
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class LitRegressor(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = mlp(8192, 32768)  # 2 GiB of fp32 weights

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.mse_loss(self.net(x), y)
            self.log("train_loss", loss, prog_bar=True)
            return loss

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    data = TensorDataset(torch.randn(16384, 8192), torch.randn(16384, 8192))
    loader = DataLoader(data, batch_size=4096)
    fill_gpu(2560 * MIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                        enable_checkpointing=False)
    trainer.fit(LitRegressor(), loader)


# --------------------------------------------------------------------------- compile, graphs, cuBLAS


def torch_compile():
    import torch
    import torch.nn.functional as F

    model = mlp().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    compiled = torch.compile(model)

    def train_step(x, y):
        loss = F.mse_loss(compiled(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    x = torch.randn(65536, 4096, device="cuda")
    y = torch.randn(65536, 4096, device="cuda")
    fill_gpu(3 * GIB)
    for step in range(10):
        loss = train_step(x, y)
        print(f"step {step} loss {loss.item():.4f}")


def cuda_graph_capture():
    import torch

    model = mlp().cuda().eval()
    # warm up on a side stream, as the CUDA graphs notes say
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            model(torch.randn(64, 4096, device="cuda"))
    torch.cuda.current_stream().wait_stream(side)

    static_x = torch.randn(65536, 4096, device="cuda")
    fill_gpu(2 * GIB)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_y = model(static_x)
    graph.replay()
    print(static_y.sum().item())


def cublas_alloc():
    import torch

    layer = torch.nn.Linear(4096, 4096).cuda()
    x = torch.randn(8, 4096, device="cuda")
    fill_all()  # the rest of the card is taken before the first matmul
    y = layer(x)
    print(y.sum().item())


def context_startup():
    # Run while another process holds every byte of the card (run.sh starts the holder).
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"using {device}")
    model = torch.nn.Linear(1024, 1024).to(device)
    print(model.weight.device)


# --------------------------------------------------------------------------- JAX


def jax_jit():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.08 (run.sh): JAX may use ~11 GiB of the card.
    import jax
    import jax.numpy as jnp

    def loss_fn(params, x, y):
        h = jax.nn.gelu(x @ params["w1"])
        return jnp.mean((h @ params["w2"] - y) ** 2)

    @jax.jit
    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        params = jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)
        return params, loss

    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {"w1": jax.random.normal(k1, (4096, 16384)) * 0.01,
              "w2": jax.random.normal(k2, (16384, 4096)) * 0.01}
    x = jax.random.normal(k3, (65536, 4096))
    y = x
    for step in range(10):
        params, loss = train_step(params, x, y)
        print(f"step {step}: loss {float(loss):.4f}")


def jax_prealloc():
    # Run while another process holds all but 20 GiB (run.sh). JAX preallocates 75% of the card
    # by default; when that fails it logs the failures and settles for what it can get (~19 GiB
    # here, seen on the H200), and the job fails later on an allocation that would have fit.
    import jax

    print(jax.devices())
    key = jax.random.PRNGKey(0)
    data = jax.random.normal(key, (98304, 32768))  # 12 GiB of features
    normed = (data - data.mean(axis=0)) / data.std(axis=0)
    print(float(normed[0, 0]))


def jax_init_full():
    # Run while another process holds every byte of the card (run.sh): JAX's first use.
    import jax.numpy as jnp

    x = jnp.ones((1024, 1024))
    print(x.devices(), float(x.sum()))


# --------------------------------------------------------------------------- plain PyTorch


def pytorch_other_process():
    # Run while another process holds all but 4 GiB of the card (run.sh starts the holder).
    import torch

    model = mlp(8192, 32768).cuda()  # 2 GiB
    x = torch.randn(16384, 8192, device="cuda")
    with torch.no_grad():
        y = model(x)
    print(y.shape)


def pytorch_fragmentation():
    import torch

    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(16 * GIB / total)  # share the card: 16 GiB each
    # a long recording, loaded onto the GPU in 6 MiB chunks
    chunks = [torch.randn(1536, 1024, device="cuda") for _ in range(2400)]
    # decimate: keep one chunk in three, then stack them for the model
    chunks = chunks[::3]
    batch = torch.stack(chunks)
    print(batch.shape)


def run_inference(model, sizes):
    import torch

    with torch.inference_mode():
        for batch_size in sizes:
            x = torch.randn(batch_size, 4096, device="cuda")
            y = model(x)
            print(f"batch {batch_size}: output {tuple(y.shape)}")


def pytorch_expandable_segments():
    # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (run.sh)
    model = mlp().cuda().eval()
    fill_gpu(2 * GIB)
    run_inference(model, (1024, 4096, 16384, 65536))


def train_epoch(model, optimizer, sizes, log_every=10):
    import torch
    import torch.nn.functional as F
    from tqdm import tqdm

    progress = tqdm(sizes, desc="epoch 1")
    for step, batch_size in enumerate(progress):
        x = torch.randn(batch_size, 4096, device="cuda")
        y = torch.randn(batch_size, 4096, device="cuda")
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        progress.set_postfix(loss=f"{loss.item():.4f}", bs=batch_size)
        if step % log_every == 0:
            tqdm.write(f"step {step}: loss {loss.item():.4f} batch {batch_size}")


def pytorch_no_caching():
    # PYTORCH_NO_CUDA_MEMORY_CACHING=1 (run.sh)
    import torch

    model = mlp().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fill_gpu(4 * GIB)
    train_epoch(model, optimizer, [2048 * (1 + i // 4) for i in range(64)], log_every=4)


def pytorch_malloc_async():
    # PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (run.sh)
    import torch

    model = mlp().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fill_gpu(4 * GIB)
    train_epoch(model, optimizer, [2048 * (1 + i // 4) for i in range(64)], log_every=4)


def pytorch_absurd():
    import torch

    lengths = torch.tensor([512, 384, 1 << 30, 407])  # one corrupt length field in the batch
    max_len = int(lengths.max())
    mask = torch.ones(max_len, max_len, device="cuda").tril()
    print(mask.shape)


def pytorch_train_loop():
    import torch

    model = mlp().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fill_gpu(6 * GIB)
    # batches bucketed by sequence length: they grow through the epoch
    train_epoch(model, optimizer, [2048 * (1 + i // 8) for i in range(160)])


# --------------------------------------------------------------------------- not GPU OOMs


def host_numpy():
    import numpy as np

    n = 10_000_000
    points = np.random.rand(1000, 3)
    dist = np.zeros((n, n), dtype=np.float32)  # pairwise distances, n points
    print(points.shape, dist.shape)


def device_assert():
    import torch

    embedding = torch.nn.Embedding(32000, 512).cuda()  # tokenizer grew to 32008 tokens, not resized
    ids = torch.randint(0, 32000, (8, 128))
    ids[3, 17] = 32005
    hidden = embedding(ids.cuda())
    print(hidden.mean().item())


if NAME == "illegal_access":
    # Triton needs its kernel at module level (it reads the globals of the function).
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def scale_rows_kernel(x_ptr, out_ptr, n, row_offset, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + row_offset + offs, mask=mask)  # bug: offset in bytes, not elements
        tl.store(out_ptr + offs, x * 2.0, mask=mask)


def illegal_access():
    x = torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    scale_rows_kernel[(1024,)](x, out, x.numel(), 1 << 40, BLOCK=1024)
    torch.cuda.synchronize()
    print(out.sum().item())


# --------------------------------------------------------------------------- second batch (more
# variety: optimizer step, gradient checkpointing, checkpoint loading without transformers,
# offloaded inference, compiled inference, Lightning loops, logger-wrapped errors, Triton)


def hf_optimizer_step():
    # Forward and backward fit; Adam's state (2 x fp32 weights) created at the first step does not.
    import torch
    import torch.nn.functional as F
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM

    accelerator = Accelerator()
    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.float32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    model, optimizer = accelerator.prepare(model, optimizer)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    fill_gpu(params + 3 * GIB)
    for step in range(3):
        batch = torch.randint(3, 32000, (4, 512), device=accelerator.device)
        logits = model(input_ids=batch).logits
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), batch[:, 1:].reshape(-1))
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        accelerator.print(f"step {step}: loss {loss.item():.4f}")


def hf_gradient_checkpointing():
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.config.use_cache = False
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    fill_gpu(6 * GIB)
    for step in range(4):
        batch = torch.randint(3, 32000, (32, 4096), device="cuda")
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step} loss {loss.item():.3f}")


def torch_load_map_location():
    import torch

    path = os.path.join(WORK, "encoder-state.pt")
    if not os.path.exists(path):
        torch.manual_seed(0)
        state = {f"layers.{i}.weight": torch.randn(8192, 8192) for i in range(8)}  # 2 GiB fp32
        torch.save(state, path)
    fill_gpu(1 * GIB)
    state = torch.load(path, map_location="cuda:0", weights_only=True)
    print(len(state))


def safetensors_load_file():
    import glob

    from safetensors.torch import load_file

    shard = sorted(glob.glob(os.path.join(CKPT, "*.safetensors")))[0]
    fill_gpu(256 * MIB)
    weights = load_file(shard, device="cuda:0")
    print(len(weights))


def accelerate_offload_generate():
    # device_map="auto" with a 2 GiB GPU budget: part of the model stays on the CPU and
    # accelerate's hooks move it in for every forward; the GPU is nearly full by then.
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        CKPT, dtype=torch.bfloat16, device_map="auto", max_memory={0: "600MiB", "cpu": "30GiB"})
    print(model.hf_device_map)
    fill_gpu(700 * MIB)
    prompts = torch.randint(3, 32000, (64, 2048), device="cuda")
    out = model.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts),
                         max_new_tokens=16, do_sample=False, pad_token_id=0)
    print(out.shape)


def hf_generate_static_cache():
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    model.eval()
    fill_gpu(4 * GIB)
    prompts = torch.randint(3, 32000, (64, 512), device="cuda")
    out = model.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts),
                         max_new_tokens=3584, do_sample=False, pad_token_id=0,
                         cache_implementation="static")
    print(out.shape)


def compiled_evaluate():
    import torch

    model = mlp().cuda().eval()
    compiled = torch.compile(model)

    @torch.no_grad()
    def evaluate(batches):
        total = 0.0
        for x in batches:
            total += compiled(x).float().pow(2).mean().item()
        return total / len(batches)

    fill_gpu(3 * GIB)
    batches = [torch.randn(n, 4096, device="cuda") for n in (256, 256, 49152)]
    print("eval loss", evaluate(batches))


def compile_reduce_overhead():
    # mode="reduce-overhead" records CUDA graphs (cudagraph trees); a new batch shape means a new
    # compile and a new recording, with the card nearly full by then.
    import torch

    model = mlp().cuda().eval()
    compiled = torch.compile(model, mode="reduce-overhead")
    with torch.no_grad():
        for _ in range(3):
            compiled(torch.randn(512, 4096, device="cuda"))
        fill_gpu(512 * MIB)
        x = torch.randn(20480, 4096, device="cuda")
        for _ in range(3):
            y = compiled(x)
    print(y.sum().item())


def make_graphed_callables():
    import torch

    model = mlp().cuda()
    sample = torch.randn(32768, 4096, device="cuda", requires_grad=True)
    fill_gpu(2 * GIB)
    graphed = torch.cuda.make_graphed_callables(model, (sample,))
    print(graphed(sample).sum().item())


def lightning_optimizer_step():
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class Autoencoder(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = mlp(8192, 32768)  # 2 GiB of fp32 weights

        def training_step(self, batch, batch_idx):
            (x,) = batch
            loss = F.mse_loss(self.net(x), x)
            self.log("loss", loss, prog_bar=True)
            return loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=1e-4)

    data = TensorDataset(torch.randn(2048, 8192))
    torch.zeros(1, device="cuda")
    free, _ = torch.cuda.mem_get_info()
    # weights + grads + a little for activations: Adam's 4 GiB of state at the first step won't fit
    fill_gpu(5 * GIB + 512 * MIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                        enable_checkpointing=False)
    trainer.fit(Autoencoder(), DataLoader(data, batch_size=256))


def lightning_predict():
    import lightning as L
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    class Scorer(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = mlp(8192, 32768)

        def predict_step(self, batch, batch_idx):
            (x,) = batch
            return self.net(x).mean(dim=1)

    data = TensorDataset(torch.randn(65536, 8192))
    fill_gpu(6 * GIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, logger=False)
    preds = trainer.predict(Scorer(), DataLoader(data, batch_size=32768))
    print(len(preds))


def logged_oom():
    # A training script that catches the error and logs one line, as many do; no traceback.
    import logging

    import torch
    import torch.nn.functional as F

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        level=logging.INFO)
    log = logging.getLogger("train")
    model = mlp().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fill_gpu(4 * GIB)
    for step, batch_size in enumerate([4096, 8192, 16384, 65536]):
        try:
            x = torch.randn(batch_size, 4096, device="cuda")
            loss = F.mse_loss(model(x), x)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            log.info("step %d batch %d loss %.4f", step, batch_size, loss.item())
        except torch.OutOfMemoryError as error:
            log.error("OOM at step %d (batch %d): %s", step, batch_size, error)
            sys.exit(1)


def logged_exception():
    # The same, logged with logger.exception: a prefixed message, then the traceback.
    import logging

    import torch

    logging.basicConfig(format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s",
                        level=logging.INFO)
    log = logging.getLogger("inference_server")
    model = mlp().cuda().eval()
    fill_gpu(2 * GIB)
    try:
        with torch.inference_mode():
            out = model(torch.randn(131072, 4096, device="cuda"))
        print(out.shape)
    except Exception:
        log.exception("request 7f3a failed while running the model")
        sys.exit(1)


def jax_eager():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): an eager op with no stage in sight.
    import jax.numpy as jnp

    a = jnp.ones((65536, 65536), dtype=jnp.float32)  # 16 GiB
    print(float(a[0, 0]))


def triton_shared_memory():
    import torch

    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, 4096, device="cuda")
    c = torch.empty(4096, 4096, device="cuda")
    grid = (4096 // 256, 4096 // 256)
    # 256x256x128 fp32 tiles with 4 pipeline stages: far more shared memory than an SM has
    _matmul_kernel[grid](a, b, c, 4096, BLOCK_M=256, BLOCK_N=256, BLOCK_K=128, num_stages=4)
    print(c.sum().item())


if NAME == "triton_shared_memory":
    import triton
    import triton.language as tl

    @triton.jit
    def _matmul_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, n, BLOCK_K):
            a = tl.load(a_ptr + rm[:, None] * n + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * n + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc)


# --------------------------------------------------------------------------- sixth batch


def _single_process_group():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("LOCAL_RANK", "0")


def hf_trainer_evaluate():
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    class RandomTokens(torch.utils.data.Dataset):
        def __len__(self):
            return 256

        def __getitem__(self, index):
            ids = torch.randint(3, 32000, (2048,))
            return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    fill_gpu(4 * GIB)
    args = TrainingArguments(
        output_dir=os.path.join(WORK, "eval-out"), per_device_eval_batch_size=64,
        report_to="none", bf16=True, dataloader_num_workers=0,
    )
    trainer = Trainer(model=model, args=args, eval_dataset=RandomTokens())
    print(trainer.evaluate())


def ddp_train_step():
    # Launched the way users launch DDP: torchrun, whose own failure summary follows the error.
    import subprocess

    if "LOCAL_RANK" not in os.environ:
        rc = subprocess.call(["torchrun", "--nproc_per_node=1", "--master_port=29518",
                              os.path.abspath(__file__), NAME])
        sys.exit(rc)
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = DDP(mlp(8192, 32768).cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fill_gpu(8 * GIB)
    for step in range(100):
        x = torch.randn(4096 * (step + 1), 8192, device="cuda")
        loss = F.mse_loss(model(x), x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if dist.get_rank() == 0:
            print(f"[rank0] step {step} loss {loss.item():.4f}", flush=True)


def fsdp_wrap():
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from transformers import AutoModelForCausalLM

    _single_process_group()
    dist.init_process_group("nccl")
    torch.cuda.set_device(0)
    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.float32)
    fill_gpu(1 * GIB)
    model = FSDP(model, device_id=torch.cuda.current_device())
    print(model)


def lightning_validate():
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class Regressor(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = mlp(8192, 32768)

        def validation_step(self, batch, batch_idx):
            x, y = batch
            loss = F.mse_loss(self.net(x), y)
            self.log("val_loss", loss, prog_bar=True)

    data = TensorDataset(torch.randn(65536, 8192), torch.randn(65536, 8192))
    fill_gpu(5 * GIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, logger=False)
    trainer.validate(Regressor(), DataLoader(data, batch_size=32768))


def generate_in_thread():
    # A chat app runs generate() on a worker thread; the thread dies, the app reports it.
    import threading

    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    fill_gpu(3 * GIB)
    failed = []
    original = threading.excepthook

    def hook(args):
        failed.append(args.exc_type.__name__)
        original(args)

    threading.excepthook = hook
    prompts = torch.randint(3, 32000, (192, 2048), device="cuda")
    worker = threading.Thread(target=model.generate,
                              kwargs=dict(input_ids=prompts, max_new_tokens=256, do_sample=False,
                                          pad_token_id=0))
    worker.start()
    worker.join()
    if failed:
        print(f"chat worker crashed: {failed[0]}; closing the session", file=sys.stderr)
        sys.exit(1)


def no_grad_embed():
    import torch

    encoder = mlp(4096, 16384).cuda().eval()

    @torch.no_grad()
    def embed_corpus(chunks):
        return [encoder(chunk) for chunk in chunks]

    fill_gpu(2 * GIB)
    chunks = [torch.randn(8192, 4096, device="cuda") for _ in range(4)]
    chunks.append(torch.randn(98304, 4096, device="cuda"))
    vectors = embed_corpus(chunks)
    print(len(vectors))


def accelerate_prepare():
    import torch
    from accelerate import Accelerator

    accelerator = Accelerator(mixed_precision="bf16")
    model = mlp(8192, 65536)  # 4 GiB of fp32 weights, still on the CPU
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fill_gpu(2 * GIB)
    model, optimizer = accelerator.prepare(model, optimizer)
    print(accelerator.device)


def jax_predict():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): batch inference under jit.
    import jax
    import jax.numpy as jnp

    @jax.jit
    def predict(params, x):
        return jax.nn.softmax(jax.nn.gelu(x @ params["w1"]) @ params["w2"], axis=-1)

    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = {"w1": jax.random.normal(k1, (4096, 16384)) * 0.01,
              "w2": jax.random.normal(k2, (16384, 1000)) * 0.01}
    for batch in (1024, 8192, 131072):
        x = jnp.ones((batch, 4096), dtype=jnp.float32)
        print(batch, float(predict(params, x).sum()))


def compiled_train_backward():
    import torch
    import torch.nn.functional as F

    model = mlp().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    @torch.compile
    def forward_loss(x):
        return F.mse_loss(model(x), x)

    fill_gpu(14 * GIB)
    for epoch in range(3):
        for batch in (16384, 32768, 98304):
            x = torch.randn(batch, 4096, device="cuda")
            loss = forward_loss(x)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            print(f"epoch {epoch} batch {batch} loss {loss.item():.4f}")


def nccl_barrier_startup():
    import torch
    import torch.distributed as dist

    _single_process_group()
    torch.cuda.set_device(0)
    fill_all()
    dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
    dist.barrier()
    print("group ready")


def host_torch_cpu():
    import torch

    features = torch.empty((1 << 20, 1 << 22), dtype=torch.float32)  # 16 TiB on the host
    print(features.shape)


# --------------------------------------------------------------------------- session 7 (blind)


def run_user_script(name, source):
    """Write `source` as the user's own script `WORK/<name>.py` and run it as `python3 <name>.py`
    would, so the traceback is exactly that script's (module-level frames and all)."""
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, f"{name}.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(source)
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(WORK)
    os.execv(sys.executable, [sys.executable, path])


def hf_pipeline_batch():
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, pipeline

    # The random checkpoint has no tokenizer: a word-level one over 32000 made-up words.
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    vocab.update({f"w{i}": i for i in range(3, 32000)})
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>",
                                        bos_token="<s>", eos_token="</s>", pad_token="<unk>",
                                        padding_side="left")
    pipe = pipeline("text-generation", model=CKPT, tokenizer=tokenizer, dtype=torch.bfloat16,
                    device=0)
    fill_gpu(2 * GIB)
    prompts = [" ".join(f"w{(i * 7 + j) % 31000 + 3}" for j in range(1500)) for i in range(64)]
    out = pipe(prompts, batch_size=64, max_new_tokens=256, do_sample=True,
               num_return_sequences=4)
    print(len(out))


def peft_prepare_kbit():
    import torch
    from peft import prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    fill_gpu(1 * GIB)
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
    print(model.dtype)


def lightning_test():
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class Classifier(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = mlp(8192, 32768)

        def test_step(self, batch, batch_idx):
            x, y = batch
            self.log("test_mse", F.mse_loss(self.net(x), y))

    data = TensorDataset(torch.randn(49152, 8192), torch.randn(49152, 8192))
    fill_gpu(4 * GIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, logger=False)
    trainer.test(Classifier(), DataLoader(data, batch_size=24576))


def accelerate_forward_loop():
    import torch
    import torch.nn.functional as F
    from accelerate import Accelerator

    def train_one_epoch(accelerator, model, optimizer, batches):
        model.train()
        for step, (x, y) in enumerate(batches):
            x, y = x.to(accelerator.device), y.to(accelerator.device)
            pred = model(x)
            loss = F.mse_loss(pred, y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            accelerator.print(f"step {step} loss {loss.item():.4f}")

    accelerator = Accelerator(mixed_precision="bf16")
    model = mlp(8192, 32768)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = accelerator.prepare(model, optimizer)
    fill_gpu(12 * GIB)
    batches = [(torch.randn(n, 8192), torch.randn(n, 8192)) for n in (2048, 4096, 65536)]
    train_one_epoch(accelerator, model, optimizer, batches)


def script_module_loop():
    run_user_script("finetune", """import torch
import torch.nn as nn
import torch.nn.functional as F

GIB = 1 << 30
device = "cuda"
model = nn.Sequential(nn.Linear(8192, 32768), nn.GELU(), nn.Linear(32768, 8192)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
ballast = torch.empty(free - 6 * GIB, dtype=torch.uint8, device=device)
train_loader = [(torch.randn(512 * (i + 1) ** 2, 8192), torch.randn(512 * (i + 1) ** 2, 8192))
                for i in range(8)]

for epoch in range(3):
    for step, (x, y) in enumerate(train_loader):
        x, y = x.to(device), y.to(device)
        pred = model(x)
        loss = F.mse_loss(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
""")


def trainer_eval_accumulate():
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    class RandomTokens(torch.utils.data.Dataset):
        def __len__(self):
            return 512

        def __getitem__(self, index):
            ids = torch.randint(3, 32000, (1024,))
            return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}

    def compute_metrics(prediction):
        return {"n": len(prediction.predictions)}

    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    fill_gpu(8 * GIB)
    args = TrainingArguments(
        output_dir=os.path.join(WORK, "eval-acc-out"), per_device_eval_batch_size=8,
        report_to="none", bf16=True, dataloader_num_workers=0,
    )
    trainer = Trainer(model=model, args=args, eval_dataset=RandomTokens(),
                      compute_metrics=compute_metrics)
    print(trainer.evaluate())


def jax_fit_update():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.06 (run.sh).
    run_user_script("jax_regression", """import jax
import jax.numpy as jnp


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


@jax.jit
def update(params, x, y):
    grads = jax.grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)


def fit(params, batches):
    for i, (x, y) in enumerate(batches):
        params = update(params, x, y)
        print(f"batch {i} done", flush=True)
    return params


key = jax.random.PRNGKey(0)
k1, k2 = jax.random.split(key)
params = {"w1": jax.random.normal(k1, (4096, 8192)) * 0.01,
          "w2": jax.random.normal(k2, (8192, 4096)) * 0.01}
batches = [(jnp.ones((n, 4096)), jnp.ones((n, 4096))) for n in (1024, 8192, 131072)]
params = fit(params, batches)
""")


def user_evaluate_nograd():
    run_user_script("evaluate", """import torch
import torch.nn as nn


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        out = model(x.cuda())
        total += (out.argmax(-1) == y.cuda()).float().sum().item()
    return total


model = nn.Sequential(nn.Linear(4096, 65536), nn.ReLU(), nn.Linear(65536, 1000)).cuda()
free, _ = torch.cuda.mem_get_info()
reserve = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
loader = [(torch.randn(256 * 4 ** i, 4096), torch.randint(0, 1000, (256 * 4 ** i,)))
          for i in range(6)]
print("accuracy", evaluate(model, loader))
""")


def accelerate_launch_cli():
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "train_accel.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("""import torch
import torch.nn.functional as F
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Sequential(torch.nn.Linear(8192, 32768), torch.nn.GELU(),
                            torch.nn.Linear(32768, 8192))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = accelerator.prepare(model, optimizer)
free, _ = torch.cuda.mem_get_info()
hold = torch.empty(free - 5 * (1 << 30), dtype=torch.uint8, device=accelerator.device)
for step in range(10):
    x = torch.randn(8192 * (step + 1), 8192, device=accelerator.device)
    loss = F.mse_loss(model(x), x)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    accelerator.print(f"step {step}: loss {loss.item():.4f}")
""")
    sys.stdout.flush()
    rc = subprocess.call(["accelerate", "launch", "--num_processes", "1",
                          "--mixed_precision", "no", "--dynamo_backend", "no", path], cwd=WORK)
    sys.exit(rc)


def cdist_similarity():
    import torch

    def similarity_matrix(a, b):
        return torch.cdist(a, b)

    fill_gpu(2 * GIB)
    queries = torch.randn(65536, 256, device="cuda")
    keys = torch.randn(65536, 256, device="cuda")
    scores = similarity_matrix(queries, keys)
    print(scores.shape)


def lightning_fit_model_to_device():
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class BigRegressor(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = mlp(16384, 65536)  # 8 GiB of fp32 weights

        def training_step(self, batch, batch_idx):
            x, y = batch
            return F.mse_loss(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=1e-3)

    data = TensorDataset(torch.randn(64, 16384), torch.randn(64, 16384))
    fill_gpu(3 * GIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                        enable_checkpointing=False)
    trainer.fit(BigRegressor(), DataLoader(data, batch_size=32))


def caught_message_only():
    import torch

    fill_gpu(1 * GIB)
    try:
        grid = torch.randn(32768, 32768, device="cuda")
        print(grid.sum())
    except Exception as e:  # the app prints the message only and exits
        print(f"Error: {e}")
        sys.exit(1)



# --------------------------------------------------------------------------- session 8 (blind):
# other people's call shapes: user scripts with module-level loops, classes, callbacks, loggers,
# warnings before the failure, mixed precision, gradient accumulation, worker processes


def _another_job_takes_the_card(leave_gib=0):
    """Start a second process (`gen.py _hold`) that takes the card's free memory but `leave_gib`
    while this one is running, as a second job landing on a shared card does; it is killed when
    this process exits (atexit, and the parent-death signal if this one is killed)."""
    import atexit
    import signal
    import subprocess

    ready = os.path.join(WORK, f".second-job-{os.getpid()}.ready")
    if os.path.exists(ready):
        os.remove(ready)

    def die_with_parent():
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    os.makedirs(WORK, exist_ok=True)
    job = subprocess.Popen([sys.executable, os.path.abspath(__file__), "_hold", str(leave_gib),
                            ready], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           preexec_fn=die_with_parent)

    def stop():
        job.kill()
        job.wait()
        if os.path.exists(ready):
            os.remove(ready)

    atexit.register(stop)
    for _ in range(480):
        if os.path.exists(ready) and os.path.getsize(ready) > 0:
            return
        if job.poll() is not None:
            sys.exit(f"the second job exited early (exit {job.returncode})")
        time.sleep(0.25)
    sys.exit("the second job did not take the card within 120 s")


def autocast_accum_script():
    # fp16 autocast + GradScaler + accumulation; a (n, 1) prediction against an (n,) target warns
    # about broadcasting, then the broadcast (n, n) loss of the large micro-batches is 4 GiB.
    run_user_script("pretrain_mlp", """import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

GIB = 1 << 30
ACCUM_STEPS = 4

model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 1)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
scaler = torch.amp.GradScaler("cuda")
free, _ = torch.cuda.mem_get_info()
prefetched = torch.empty(free - 5 * GIB, dtype=torch.uint8, device="cuda")  # next shards

sizes = [2048] * 8 + [4096] * 8 + [32768] * 8
bar = tqdm(sizes, desc="pretrain", unit="micro-batch")
for i, n in enumerate(bar):
    x = torch.randn(n, 4096, device="cuda")
    y = torch.randn(n, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        pred = model(x)
        loss = F.mse_loss(pred, y) / ACCUM_STEPS
    scaler.scale(loss).backward()
    if (i + 1) % ACCUM_STEPS == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        bar.set_postfix(loss=f"{loss.item() * ACCUM_STEPS:.4f}", scale=scaler.get_scale())
""")


def hf_auto_max_memory():
    # device_map="auto" trusts max_memory: all of the reward model goes to GPU 0, where the
    # policy's buffers leave 600 MiB.
    run_user_script("load_reward_model", """import torch
from transformers import AutoModelForCausalLM

MIB = 1 << 20
free, total = torch.cuda.mem_get_info()
policy_buffers = torch.empty(free - 600 * MIB, dtype=torch.uint8, device="cuda")
print(f"policy buffers: {policy_buffers.numel() / 2**30:.1f} GiB of {total / 2**30:.1f} GiB",
      flush=True)

reward_model = AutoModelForCausalLM.from_pretrained(
    "@CKPT@",
    dtype=torch.bfloat16,
    device_map="auto",
    max_memory={0: "24GiB", "cpu": "64GiB"},
)
reward_model.eval()
print(reward_model.hf_device_map)
""".replace("@CKPT@", CKPT))


def peft_merge_unload():
    # merge_and_unload on a GPU model: each merged layer needs a fresh delta weight (B @ A).
    run_user_script("export_merged", """import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

base = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
config = LoraConfig(r=64, lora_alpha=128, task_type="CAUSAL_LM",
                    target_modules=["q_proj", "k_proj", "v_proj", "o_proj",
                                    "gate_proj", "up_proj", "down_proj"])
model = get_peft_model(base, config)
model.print_trainable_parameters()
with torch.no_grad():  # check that the adapter runs before exporting it
    probe = torch.randint(3, 32000, (1, 16), device="cuda")
    print("probe logits", tuple(model(input_ids=probe).logits.shape), flush=True)

torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
eval_cache = torch.empty(free - 4 * (1 << 20), dtype=torch.uint8, device="cuda")
merged = model.merge_and_unload(progressbar=True)
merged.save_pretrained("merged-out")
""".replace("@CKPT@", CKPT))


def lightning_sanity_bf16():
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class Forecaster(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = mlp(8192, 32768)  # 2 GiB of fp32 weights

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.mse_loss(self.net(x), y)
            self.log("train_mse", loss, prog_bar=True)
            return loss

        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.log("val_mse", F.mse_loss(self.net(x), y), prog_bar=True)

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    class PrintingCallback(L.Callback):
        def on_fit_start(self, trainer, pl_module):
            params = sum(p.numel() for p in pl_module.parameters())
            print(f"fit start: {params / 1e6:.0f}M parameters on {pl_module.device}")

        def on_sanity_check_start(self, trainer, pl_module):
            print("running the validation sanity check")

    train = TensorDataset(torch.randn(4096, 8192), torch.randn(4096, 8192))
    val = TensorDataset(torch.randn(65536, 8192), torch.randn(65536, 8192))
    fill_gpu(5 * GIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, precision="bf16-mixed",
                        logger=False, enable_checkpointing=False, callbacks=[PrintingCallback()])
    trainer.fit(Forecaster(), DataLoader(train, batch_size=512),
                DataLoader(val, batch_size=32768))


def lightning_callback_probe():
    # A monitoring callback runs the network on a fixed probe set every 10 batches; the training
    # batches are small, the probe forward is not.
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class Denoiser(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = mlp(4096, 16384)

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.mse_loss(self.net(x), y)
            self.log("loss", loss, prog_bar=True)
            return loss

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    class ProbeMonitor(L.Callback):
        def __init__(self, every=10):
            self.every = every
            self.probe = None

        def on_fit_start(self, trainer, pl_module):
            self.probe = torch.randn(65536, 4096, device=pl_module.device)

        @torch.no_grad()
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if (batch_idx + 1) % self.every:
                return
            features = pl_module.net(self.probe)
            pl_module.log("probe_norm", features.norm(dim=1).mean(), prog_bar=True)

    data = TensorDataset(torch.randn(40960, 4096), torch.randn(40960, 4096))
    fill_gpu(5 * GIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                        enable_checkpointing=False, log_every_n_steps=5,
                        callbacks=[ProbeMonitor()])
    trainer.fit(Denoiser(), DataLoader(data, batch_size=2048))


def accelerate_accumulate():
    import torch
    import torch.nn.functional as F
    from accelerate import Accelerator

    class Runner:
        def __init__(self, accelerator, model, optimizer):
            self.accelerator = accelerator
            self.model = model
            self.optimizer = optimizer
            self.updates = 0

        def _micro_step(self, x, y):
            with self.accelerator.accumulate(self.model):
                loss = F.mse_loss(self.model(x), y)
                self.accelerator.backward(loss)
                self.optimizer.step()
                self.optimizer.zero_grad()
            return loss

        def run_epoch(self, batches):
            self.model.train()
            for i, (x, y) in enumerate(batches):
                x, y = x.to(self.accelerator.device), y.to(self.accelerator.device)
                loss = self._micro_step(x, y)
                if self.accelerator.sync_gradients:
                    self.updates += 1
                    self.accelerator.print(f"update {self.updates} (micro-batch {i}, "
                                           f"{x.shape[0]} rows): loss {loss.item():.4f}")

    accelerator = Accelerator(gradient_accumulation_steps=4, mixed_precision="bf16")
    model = mlp(8192, 32768)  # 2 GiB of fp32 weights
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = accelerator.prepare(model, optimizer)
    fill_gpu(10 * GIB)
    sizes = [1024] * 4 + [2048] * 4 + [4096] * 4 + [16384] * 4
    batches = [(torch.randn(n, 8192), torch.randn(n, 8192)) for n in sizes]
    Runner(accelerator, model, optimizer).run_epoch(batches)


def compile_dynamic_rerank():
    # A reranking service: one torch.compile(dynamic=True) scoring function, requests of any
    # size; one request scores 4096 queries against 400k documents (a 6 GiB score matrix).
    run_user_script("rerank_server", """import logging

import torch

logging.basicConfig(format="%(asctime)s %(levelname)s [%(name)s] %(message)s", level=logging.INFO)
log = logging.getLogger("rerank")


class Reranker:
    def __init__(self, dim=256, top_k=10):
        torch.manual_seed(0)
        self.proj = torch.randn(dim, dim, device="cuda") / dim ** 0.5
        self.top_k = top_k
        self._score = torch.compile(self._score_impl, dynamic=True)

    def _score_impl(self, queries, docs):
        q = torch.nn.functional.normalize(queries @ self.proj, dim=-1)
        d = torch.nn.functional.normalize(docs @ self.proj, dim=-1)
        weights = torch.softmax(q @ d.T * 20.0, dim=-1)
        return weights.topk(self.top_k, dim=-1)

    def handle(self, request_id, queries, docs):
        log.info("request %s: %d queries x %d documents", request_id, len(queries), len(docs))
        with torch.inference_mode():
            scores, ids = self._score(queries, docs)
        return ids.cpu()


free, _ = torch.cuda.mem_get_info()
other_models = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
reranker = Reranker()
requests = [("a1", 8, 1000), ("a2", 16, 5000), ("b7", 64, 20000), ("c3", 4096, 400000)]
for request_id, n_queries, n_docs in requests:
    queries = torch.randn(n_queries, 256, device="cuda")
    docs = torch.randn(n_docs, 256, device="cuda")
    top = reranker.handle(request_id, queries, docs)
    log.info("request %s done: top ids %s", request_id, top[0, :3].tolist())
""")


def cuda_graph_buckets():
    # An inference server captures one CUDA graph per batch-size bucket (smallest first, each
    # in its own pool); the graphs' memory adds up until a capture does not fit.
    run_user_script("graph_server", """import logging

import torch
import torch.nn as nn
from tqdm import tqdm

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("graph_server")
GIB = 1 << 30


class GraphRunner:
    def __init__(self, model, hidden, buckets):
        self.model = model
        self.hidden = hidden
        self.buckets = sorted(buckets)
        self.graphs, self.inputs, self.outputs = {}, {}, {}

    @torch.no_grad()
    def warm_up(self):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.model(torch.zeros(1, self.hidden, device="cuda"))
        torch.cuda.current_stream().wait_stream(side)

    @torch.no_grad()
    def _record(self, batch_size):
        static_in = torch.zeros(batch_size, self.hidden, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = self.model(static_in)
        self.graphs[batch_size] = graph
        self.inputs[batch_size] = static_in
        self.outputs[batch_size] = static_out

    def capture_all(self):
        log.info("capturing CUDA graphs for batch sizes %s", self.buckets)
        for batch_size in tqdm(self.buckets, desc="Capturing CUDA graphs"):
            self._record(batch_size)
        log.info("captured %d graphs", len(self.graphs))

    def run(self, x):
        size = next(b for b in self.buckets if b >= x.shape[0])
        self.inputs[size][: x.shape[0]].copy_(x)
        self.graphs[size].replay()
        return self.outputs[size][: x.shape[0]]


model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda().eval()
free, _ = torch.cuda.mem_get_info()
kv_pool = torch.empty(free - 8 * GIB, dtype=torch.uint8, device="cuda")
log.info("KV pool: %.1f GiB", kv_pool.numel() / GIB)
runner = GraphRunner(model, 4096, [256, 512, 1024, 2048, 4096, 8192, 16384, 32768])
runner.warm_up()
runner.capture_all()
log.info("serving")
for step in range(100):
    out = runner.run(torch.randn(300, 4096, device="cuda"))
""")


def jax_pmap_eval():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): pmap over the one local device.
    run_user_script("eval_pmap", """import jax
import jax.numpy as jnp

n_dev = jax.local_device_count()


def forward(params, x):
    h = jax.nn.relu(x @ params["w1"])
    return jax.nn.log_softmax(h @ params["w2"])


p_forward = jax.pmap(forward)
k1, k2 = jax.random.split(jax.random.PRNGKey(0))
params = {"w1": jax.random.normal(k1, (4096, 16384)) * 0.01,
          "w2": jax.random.normal(k2, (16384, 1000)) * 0.01}
replicated = jax.tree.map(lambda a: jnp.stack([a] * n_dev), params)
for i, batch in enumerate([1024, 4096, 131072]):
    x = jnp.ones((n_dev, batch, 4096))
    log_probs = p_forward(replicated, x)
    print(f"eval batch {i}: {batch} examples, mean log-prob {float(log_probs.mean()):.4f}",
          flush=True)
""")


def jax_device_put_restore():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX, a 10 GiB checkpoint.
    run_user_script("restore_params", """import time

import jax
import numpy as np

print("restoring checkpoint step 12000 (40 x 8192x8192 float32 arrays, numpy)", flush=True)
start = time.time()
host_params = {f"block_{i:02d}": np.full((8192, 8192), 0.01, dtype=np.float32) for i in range(40)}
print(f"read {sum(a.nbytes for a in host_params.values()) / 2**30:.1f} GiB in "
      f"{time.time() - start:.1f} s; moving to {jax.devices()[0]}", flush=True)
params = jax.device_put(host_params)
jax.block_until_ready(params)
print("restored", len(params), "arrays")
""")


def jax_donate_learner():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.06 (run.sh): a jitted update with donated arguments; the
    # donated batch cannot be reused (a warning), then the large batch does not fit.
    run_user_script("learner", """from functools import partial

import jax
import jax.numpy as jnp


def loss_fn(params, x, y):
    h = jax.nn.gelu(x @ params["w1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


class Learner:
    def __init__(self, key, lr=1e-3):
        k1, k2 = jax.random.split(key)
        self.lr = lr
        self.params = {"w1": jax.random.normal(k1, (4096, 16384)) * 0.01,
                       "w2": jax.random.normal(k2, (16384, 4096)) * 0.01}

    @partial(jax.jit, static_argnums=0, donate_argnums=(1, 2, 3))
    def _apply(self, params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree.map(lambda p, g: p - self.lr * g, params, grads), loss

    def fit(self, batches):
        for i, (x, y) in enumerate(batches):
            rows = x.shape[0]
            self.params, loss = self._apply(self.params, x, y)
            print(f"learner step {i}: {rows} rows, loss {float(loss):.5f}", flush=True)


learner = Learner(jax.random.PRNGKey(0))
batches = [(jnp.ones((n, 4096)), jnp.zeros((n, 4096))) for n in (2048, 8192, 131072)]
learner.fit(batches)
""")


def cublas_second_job():
    # An embedding service loads its index; another job then takes the rest of the card before
    # the first query, whose matmul is this process's first cuBLAS call.
    import torch

    torch.manual_seed(0)
    index = torch.nn.functional.normalize(torch.randn(262144, 1024, device="cuda"), dim=1)
    print(f"index ready: {index.shape[0]} vectors of {index.shape[1]} dims", flush=True)
    _another_job_takes_the_card(0)
    query = torch.nn.functional.normalize(torch.randn(32, 1024, device="cuda"), dim=1)
    scores = torch.einsum("qd,nd->qn", query, index)
    print(scores.topk(5, dim=1).indices.tolist())


def lightning_context_holder():
    # Run while another process holds every byte of the card (run.sh starts the holder): the
    # first CUDA use of this process is Lightning moving the model to the GPU.
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class TinyClassifier(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                           torch.nn.Linear(512, 10))

        def training_step(self, batch, batch_idx):
            x, y = batch
            return F.cross_entropy(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    data = TensorDataset(torch.randn(1024, 256), torch.randint(0, 10, (1024,)))
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, precision="bf16-mixed",
                        logger=False, enable_checkpointing=False)
    trainer.fit(TinyClassifier(), DataLoader(data, batch_size=64))


def hf_beam_search_logged():
    # A batch summarization job logs a failed batch in one line (no traceback) and stops.
    import logging

    import torch
    from tqdm import tqdm
    from transformers import AutoModelForCausalLM

    logging.basicConfig(format="%(asctime)s - %(name)s - %(levelname)s - %(message)s",
                        level=logging.INFO)
    logger = logging.getLogger("batch_summarize")
    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    model.eval()
    logger.info("AutoModelForCausalLM from %s loaded on %s", CKPT, model.device)
    fill_gpu(6 * GIB)
    torch.manual_seed(0)
    documents = [torch.randint(3, 32000, (1536,)) for _ in range(512)]
    summaries = []
    for start in tqdm(range(0, len(documents), 64), desc="summarize"):
        batch = torch.stack(documents[start:start + 64]).cuda()
        try:
            out = model.generate(input_ids=batch, attention_mask=torch.ones_like(batch),
                                 num_beams=4, early_stopping=True, max_new_tokens=128,
                                 pad_token_id=0)
        except torch.OutOfMemoryError as err:
            logger.error("generate() failed for documents %d-%d: %s", start, start + 63, err)
            sys.exit(1)
        summaries.extend(out[:, batch.shape[1]:].tolist())


def pool_worker_cdist():
    # Near-duplicate search over shards in a process pool: the worker's error comes back to
    # the parent as a _RemoteTraceback, then is raised again at future.result().
    run_user_script("dedup_shards", """import concurrent.futures as cf
import multiprocessing as mp

import torch


def _pairwise(shard_id, n_rows):
    torch.manual_seed(shard_id)
    x = torch.randn(n_rows, 256, device="cuda")
    d = torch.cdist(x, x)
    return shard_id, int((d < 12.0).sum()) - n_rows


if __name__ == "__main__":
    shards = [20000, 40000, 400000]
    with cf.ProcessPoolExecutor(max_workers=2, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(_pairwise, i, n) for i, n in enumerate(shards)]
        for future in cf.as_completed(futures):
            shard_id, pairs = future.result()
            print(f"shard {shard_id}: {pairs} near-duplicate pairs", flush=True)
""")


def host_collate_worker():
    # Not a GPU OOM: a corrupt length field in one utterance makes the collate function ask the
    # host for 640 TiB in a DataLoader worker (more than the address space: it fails even where
    # the host overcommits).
    run_user_script("train_asr", """import torch
from torch.utils.data import DataLoader, Dataset


class Utterances(Dataset):
    def __len__(self):
        return 1024

    def __getitem__(self, i):
        frames = 400 + (i * 37) % 1200
        header_frames = 1 << 36 if i == 37 else frames  # utterance 37: a corrupt header
        return {"feats": torch.randn(frames, 80), "num_frames": header_frames}


def collate(batch):
    longest = max(item["num_frames"] for item in batch)
    feats = torch.zeros(len(batch), longest, 80)
    for row, item in enumerate(batch):
        feats[row, : item["feats"].shape[0]] = item["feats"]
    return feats, torch.tensor([item["num_frames"] for item in batch])


encoder = torch.nn.LSTM(80, 512, num_layers=3, batch_first=True).cuda()
loader = DataLoader(Utterances(), batch_size=32, num_workers=2, collate_fn=collate)
for step, (feats, lengths) in enumerate(loader):
    out, _ = encoder(feats.cuda(non_blocking=True))
    print(f"step {step}: {tuple(out.shape)}", flush=True)
""")


def ce_label_assert():
    # Not a GPU OOM: 1-based class labels (1..10) for a 10-way head under bf16 autocast; the
    # device-side assert surfaces at the next synchronizing call.
    run_user_script("finetune_classifier", """import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_CLASSES = 10
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, NUM_CLASSES)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(100):
    x = torch.randn(256, 512, device="cuda")
    y = torch.randint(1, NUM_CLASSES + 1, (256,), device="cuda")  # labels from the CSV, 1-based
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.4f}", flush=True)
""")


def triton_int32_overflow():
    # Not a GPU OOM: a hand-written Triton RMSNorm computes `row * stride` in int32; past row
    # 2**18 of an 8192-wide tensor the offset wraps negative and the loads leave the tensor.
    run_user_script("fused_rmsnorm", """import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride + cols, (x / rms * w).to(tl.bfloat16), mask=mask)


def rmsnorm(x, weight, eps=1e-6):
    out = torch.empty_like(x)
    rmsnorm_kernel[(x.shape[0],)](x, weight, out, x.stride(0), x.shape[1], eps,
                                  BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


weight = torch.ones(8192, dtype=torch.bfloat16, device="cuda")
small = torch.randn(64, 8192, dtype=torch.bfloat16, device="cuda")
print("small batch ok:", rmsnorm(small, weight).float().pow(2).mean().item(), flush=True)
hidden = torch.randn(1 << 19, 8192, dtype=torch.bfloat16, device="cuda")  # 8 GiB of activations
normed = rmsnorm(hidden, weight)
torch.cuda.synchronize()
print("normed", tuple(normed.shape))
""")


# --------------------------------------------------------------------------- session 9 (blind):
# more call shapes: Trainer resume / in-training evaluation, beam search with scores, a
# classification pipeline, Lightning manual optimization and validation-epoch hooks, max-autotune
# serving, graphed encoder training, DataParallel + torch.utils.checkpoint, a conv net under
# cudnn.benchmark, torch.fft printed as str(e), JAX scan, PEFT under accelerate, cuBLAS and
# context creation while another job holds the card, and look-alikes (host MemoryError, gather
# assert, Triton autotune running out of shared memory)

_WORD_TOKENIZER = """from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast


def word_tokenizer():
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    vocab.update({f"w{i}": i for i in range(3, 32000)})
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", pad_token="<unk>")
"""

RESUME_RUN = os.path.join(WORK, "sft-run")


def _random_token_dataset_source(length, seq):
    return f"""

class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, length={length}, seq={seq}, seed=0):
        self.length, self.seq, self.seed = length, seq, seed

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(self.seed * 100003 + index)
        ids = torch.randint(3, 32000, (self.seq,), generator=g)
        return {{"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}}
"""


def resume_checkpoint():
    """`gen.py _resume_ckpt`: a short Trainer run that leaves RESUME_RUN/checkpoint-2 (model,
    optimizer and scheduler state) for trainer_resume_optimizer; its output is not a text."""
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    if os.path.exists(os.path.join(RESUME_RUN, "checkpoint-2", "optimizer.pt")):
        print("checkpoint already there")
        return
    scope = {"torch": torch}
    exec(_random_token_dataset_source(64, 256), scope)
    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16, device_map="cuda")
    args = TrainingArguments(output_dir=RESUME_RUN, per_device_train_batch_size=2, max_steps=2,
                             save_strategy="steps", save_steps=2, learning_rate=1e-5,
                             report_to="none", bf16=True, dataloader_num_workers=0,
                             disable_tqdm=True)
    Trainer(model=model, args=args, train_dataset=scope["RandomTokens"]()).train()
    print("saved", sorted(os.listdir(os.path.join(RESUME_RUN, "checkpoint-2"))))


def trainer_resume_optimizer():
    # Resuming a fine-tune on a card that a frozen teacher now shares: the model fits, the
    # AdamW state restored from checkpoint-2 (moved to the parameters' GPU) does not.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "resume-prep.log"), "w") as log:
        rc = subprocess.call([sys.executable, os.path.abspath(__file__), "_resume_ckpt"],
                             stdout=log, stderr=subprocess.STDOUT)
    if rc != 0:
        sys.exit(f"preparing the checkpoint failed (exit {rc}); see {WORK}/resume-prep.log")
    run_user_script("resume_sft", """import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
""" + _random_token_dataset_source(4096, 256) + """

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
free, total = torch.cuda.mem_get_info()
teacher_cache = torch.empty(free - (1 << 30), dtype=torch.uint8, device="cuda")
print(f"teacher logits cache: {teacher_cache.numel() / 2**30:.1f} GiB", flush=True)

args = TrainingArguments(
    output_dir="sft-run-resumed",
    per_device_train_batch_size=2,
    max_steps=200,
    learning_rate=1e-5,
    logging_steps=10,
    save_strategy="no",
    bf16=True,
    report_to="none",
    dataloader_num_workers=0,
)
trainer = Trainer(model=model, args=args, train_dataset=RandomTokens())
trainer.train(resume_from_checkpoint="@RUN@/checkpoint-2")
""".replace("@CKPT@", CKPT).replace("@RUN@", RESUME_RUN))


def trainer_eval_steps():
    # Trainer with eval_strategy="steps": the small training batches fit, the first in-training
    # evaluation (96 x 1024 tokens, prediction_loss_only) does not.
    run_user_script("sft_with_eval", """import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
""" + _random_token_dataset_source(512, 1024) + """

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
free, _ = torch.cuda.mem_get_info()
rollout_buffer = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")

args = TrainingArguments(
    output_dir="sft-eval-out",
    per_device_train_batch_size=2,
    per_device_eval_batch_size=96,
    eval_strategy="steps",
    eval_steps=3,
    prediction_loss_only=True,
    max_steps=30,
    logging_steps=1,
    learning_rate=2e-5,
    save_strategy="no",
    bf16=True,
    report_to="none",
    dataloader_num_workers=0,
)
trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(512, 1024, seed=0),
                  eval_dataset=RandomTokens(384, 1024, seed=1))
trainer.train()
""".replace("@CKPT@", CKPT))


def hf_generate_beams_scores():
    # Beam search with 6 returned sequences per prompt and the scores kept: 48 prompts become
    # 288 beams whose prefill does not fit.
    run_user_script("rank_candidates", """import torch
from transformers import AutoModelForCausalLM, GenerationConfig

MIB = 1 << 20
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
free, _ = torch.cuda.mem_get_info()
kv_reserve = torch.empty(free - 4096 * MIB, dtype=torch.uint8, device="cuda")

torch.manual_seed(0)
input_ids = torch.randint(3, 32000, (48, 1024), device="cuda")
gen_config = GenerationConfig(num_beams=6, num_return_sequences=6, max_new_tokens=64,
                              length_penalty=1.0, early_stopping=True, output_scores=True,
                              return_dict_in_generate=True, pad_token_id=0, eos_token_id=2)
with torch.no_grad():
    result = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                            generation_config=gen_config)
ranked = result.sequences_scores.view(48, 6).argsort(dim=1, descending=True)
print(ranked[:4].tolist())
""".replace("@CKPT@", CKPT))


def hf_pipeline_classify():
    # A text-classification pipeline over the Llama checkpoint (a new, randomly initialized
    # score head: the load report says so) scoring long documents 128 at a time.
    run_user_script("score_documents", _WORD_TOKENIZER + """
import torch
from transformers import pipeline

classifier = pipeline("text-classification", model="@CKPT@", tokenizer=word_tokenizer(),
                      dtype=torch.bfloat16, device=0)
free, _ = torch.cuda.mem_get_info()
index_shards = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device="cuda")

documents = [" ".join(f"w{(d * 131 + t * 7) % 31000 + 3}" for t in range(2000))
             for d in range(256)]
print(f"scoring {len(documents)} documents", flush=True)
results = classifier(documents, batch_size=128, truncation=True, max_length=2048)
print(sum(r["label"] == "LABEL_1" for r in results), "positive")
""".replace("@CKPT@", CKPT))


def lightning_manual_backward():
    # Manual optimization under 16-mixed; a feature bank the module allocates at train start
    # leaves room for the forward but not for the gradients of manual_backward.
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class TwoViewModel(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.automatic_optimization = False
            self.net = mlp(8192, 32768)  # 2 GiB of fp32 weights
            self.bank = None

        def on_train_start(self):
            free, _ = torch.cuda.mem_get_info()
            self.bank = torch.empty(free - 2 * GIB, dtype=torch.uint8, device=self.device)
            print(f"feature bank: {self.bank.numel() / GIB:.1f} GiB")

        def training_step(self, batch, batch_idx):
            opt = self.optimizers()
            x, y = batch
            loss = F.smooth_l1_loss(self.net(x), y)
            opt.zero_grad()
            self.manual_backward(loss)
            self.clip_gradients(opt, gradient_clip_val=1.0, gradient_clip_algorithm="norm")
            opt.step()
            self.log("loss", loss, prog_bar=True)

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    data = TensorDataset(torch.randn(4096, 8192), torch.randn(4096, 8192))
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, precision="16-mixed",
                        logger=False, enable_checkpointing=False)
    trainer.fit(TwoViewModel(), DataLoader(data, batch_size=512))


def lightning_val_epoch_end():
    # Retrieval metric at the end of each validation epoch: all validation embeddings are kept
    # on the GPU and compared all-against-all (65536^2 in bf16); the 2-batch sanity check fits.
    import lightning as L
    import torch
    import torch.nn.functional as F
    from lightning.pytorch.callbacks import EarlyStopping
    from torch.utils.data import DataLoader, TensorDataset

    class DualEncoder(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.encoder = mlp(1024, 4096)
            self.val_embeddings = []

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = 1 - F.cosine_similarity(self.encoder(x), y).mean()
            self.log("train_loss", loss, prog_bar=True)
            return loss

        def validation_step(self, batch, batch_idx):
            x, _ = batch
            self.val_embeddings.append(F.normalize(self.encoder(x), dim=-1))

        def on_validation_epoch_end(self):
            embeddings = torch.cat(self.val_embeddings)
            sims = embeddings @ embeddings.T
            sims.fill_diagonal_(-1)
            recall = (sims.argmax(dim=1) // 2 == torch.arange(len(sims), device=sims.device) // 2)
            self.log("val_recall", recall.float().mean(), prog_bar=True)
            self.val_embeddings.clear()

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=3e-4)

    train = TensorDataset(torch.randn(16384, 1024), torch.randn(16384, 1024))
    val = TensorDataset(torch.randn(65536, 1024), torch.randn(65536, 1024))
    fill_gpu(5 * GIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=3, precision="bf16-mixed",
                        accumulate_grad_batches=2, gradient_clip_val=1.0, logger=False,
                        enable_checkpointing=False,
                        callbacks=[EarlyStopping(monitor="val_recall", mode="max", patience=2)])
    trainer.fit(DualEncoder(), DataLoader(train, batch_size=1024, shuffle=True),
                DataLoader(val, batch_size=4096))


def compile_autotune_serve():
    # A scoring service compiled with mode="max-autotune-no-cudagraphs" (autotuning the matmuls
    # at the first request); after warm-up a second model is loaded onto the card and the next
    # request's buffers no longer fit. The service logs the failure with logger.exception.
    run_user_script("score_service", """import logging
import sys

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s [%(levelname)s] %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("score_service")
MIB = 1 << 20


class Scorer(nn.Module):
    def __init__(self, dim=4096, hidden=16384):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        return self.head(torch.relu(self.down(torch.nn.functional.gelu(self.up(x))) + x))


model = Scorer().cuda().eval()
scorer = torch.compile(model, mode="max-autotune-no-cudagraphs")


def handle(request_id, features):
    with torch.inference_mode():
        scores = scorer(features)
    return scores.squeeze(-1).topk(5).indices.tolist()


log.info("warming up (autotuning)")
batch = torch.randn(8192, 4096, device="cuda")
log.info("warm-up top-5: %s", handle("warmup", batch))
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
embedder = torch.empty(free - 256 * MIB, dtype=torch.uint8, device="cuda")
log.info("embedder loaded next to the scorer (%.1f GiB)", embedder.numel() / 2**30)
for i in range(3):
    request = torch.randn(8192, 4096, device="cuda") if i else batch
    try:
        log.info("request %d: top-5 %s", i, handle(i, request))
    except Exception:
        log.exception("request %d failed", i)
        sys.exit(1)
""")


def graphed_encoder_train():
    # Whole-network CUDA graphs for training (make_graphed_callables) of two encoder layers;
    # the graphed callables' warm-up and capture need the activations of the sample batch.
    run_user_script("graphed_encoder", """import torch
import torch.nn as nn

GIB = 1 << 30
torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, d_model=1024, layers=2):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, 16, 4 * d_model, dropout=0.0, batch_first=True)
            for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


encoder = Encoder().cuda()
head = nn.Linear(1024, 1024).cuda()
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
shard_cache = torch.empty(free - 3 * GIB, dtype=torch.uint8, device="cuda")

sample = torch.randn(32, 4096, 1024, device="cuda", requires_grad=True)
sample_h = torch.randn(32, 4096, 1024, device="cuda", requires_grad=True)
print("graphing encoder and head for batch (32, 4096, 1024)", flush=True)
encoder, head = torch.cuda.make_graphed_callables((encoder, head), ((sample,), (sample_h,)))
for step in range(10):
    x = torch.randn(32, 4096, 1024, device="cuda")
    loss = head(encoder(x)).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=False)
    print(f"step {step} loss {loss.item():.4f}", flush=True)
""")


def dataparallel_checkpoint():
    # nn.DataParallel (one visible GPU) around a stack of blocks run with
    # torch.utils.checkpoint and gradient accumulation: the forward keeps only block inputs,
    # the backward recomputes each block and adds 512 MiB of gradients per block.
    run_user_script("train_deep_mlp", """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

GIB = 1 << 30
ACCUMULATE = 4


class Block(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class DeepMLP(nn.Module):
    def __init__(self, dim=4096, hidden=16384, depth=8):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, hidden) for _ in range(depth))
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.out(x).squeeze(-1)


model = nn.DataParallel(DeepMLP()).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
print(f"{torch.cuda.device_count()} GPU(s), "
      f"{sum(p.numel() for p in model.parameters()) / 1e9:.2f}B parameters", flush=True)
free, _ = torch.cuda.mem_get_info()
pinned_batches = torch.empty(free - 2 * GIB, dtype=torch.uint8, device="cuda")

for step in range(64):
    x = torch.randn(4096, 4096, device="cuda")
    y = torch.randn(4096, device="cuda")
    loss = F.mse_loss(model(x), y) / ACCUMULATE
    loss.backward()
    if (step + 1) % ACCUMULATE == 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"update {(step + 1) // ACCUMULATE}: loss {loss.item() * ACCUMULATE:.4f}",
              flush=True)
""")


def conv_full_res_validation():
    # A segmentation net trained on 256x256 crops under fp16 autocast with cudnn.benchmark;
    # validation on full-resolution 4096x4096 scans needs a 32 GiB first feature map.
    run_user_script("segment_scans", """import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)-8s %(message)s", level=logging.INFO)
torch.backends.cudnn.benchmark = True
GIB = 1 << 30


def conv_block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out),
                         nn.ReLU(inplace=True))


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1, self.enc2 = conv_block(3, 64), conv_block(64, 128)
        self.dec1 = conv_block(192, 64)
        self.head = nn.Conv2d(64, 2, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        up = F.interpolate(e2, scale_factor=2, mode="nearest")
        return self.head(self.dec1(torch.cat([up, e1], dim=1)))


net = TinyUNet().cuda()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
free, _ = torch.cuda.mem_get_info()
augment_cache = torch.empty(free - 6 * GIB, dtype=torch.uint8, device="cuda")

for epoch in range(2):
    net.train()
    for it in range(5):
        crops = torch.randn(16, 3, 256, 256, device="cuda")
        masks = torch.randint(0, 2, (16, 256, 256), device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(net(crops), masks)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    logging.info("epoch %d train loss %.4f", epoch, loss.item())
    logging.info("epoch %d: validating on 16 full-resolution scans (4096x4096)", epoch)
    net.eval()
    scans = torch.randn(16, 3, 4096, 4096, device="cuda")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
        pred = net(scans).argmax(dim=1)
    logging.info("epoch %d foreground %.3f", epoch, pred.float().mean().item())
""")


def fft_notebook_print():
    # Notebook-style cell: spectral features of a batch of images with torch.fft; the except
    # clause prints str(e) and nothing else.
    run_user_script("spectra_cell", """import sys

import torch

GIB = 1 << 30
free, _ = torch.cuda.mem_get_info()
images_on_gpu = torch.empty(free - 3 * GIB, dtype=torch.uint8, device="cuda")


def power_spectrum(batch):
    spec = torch.fft.rfft2(batch, norm="ortho")
    return torch.log1p(spec.abs() ** 2)


try:
    imgs = torch.rand(128, 2048, 2048, device="cuda")
    feats = power_spectrum(imgs)
    print(feats.shape)
except Exception as e:
    print(e)
    sys.exit(1)
""")


def jax_scan_epochs():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A jitted epoch scans
    # value_and_grad over stacked micro-batches; the scan keeps every step's residuals for the
    # backward pass, so the 96-step epoch needs ~12 GiB more than the 4-step one.
    run_user_script("scan_epochs", """from functools import partial

import jax
import jax.numpy as jnp


def mse(params, x):
    h = jnp.tanh(x @ params["w1"])
    return jnp.mean((h @ params["w2"] - x) ** 2)


@partial(jax.jit, donate_argnums=0)
def run_epoch(params, xs):
    def total(params):
        def step(acc, x):
            return acc + mse(params, x), None

        loss, _ = jax.lax.scan(step, jnp.zeros((), jnp.float32), xs)
        return loss / xs.shape[0]

    loss, grads = jax.value_and_grad(total)(params)
    params = jax.tree.map(lambda p, g: p - 1e-2 * g, params, grads)
    return params, loss


k1, k2 = jax.random.split(jax.random.PRNGKey(0))
params = {"w1": jax.random.normal(k1, (4096, 16384)) * 0.01,
          "w2": jax.random.normal(k2, (16384, 4096)) * 0.01}
for epoch, steps in enumerate([4, 4, 96]):
    xs = jnp.full((steps, 2048, 4096), 0.5, dtype=jnp.float32)
    params, loss = run_epoch(params, xs)
    print(f"epoch {epoch}: {steps} micro-batches, loss {float(loss):.5f}", flush=True)
""")


def peft_accelerate_accumulate():
    # LoRA (get_peft_model on a GPU model) trained with accelerate: bf16 mixed precision,
    # gradient accumulation, prepared DataLoader; ~2 GiB left for 8 x 2048-token batches.
    run_user_script("lora_accelerate", """import torch
from accelerate import Accelerator
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM
""" + _random_token_dataset_source(256, 2048) + """

accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=2)
base = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16,
                                            device_map={"": accelerator.process_index})
config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=["q_proj", "v_proj"],
                    task_type="CAUSAL_LM")
model = get_peft_model(base, config)
model.print_trainable_parameters()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)
loader = DataLoader(RandomTokens(), batch_size=8, shuffle=True)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
free, _ = torch.cuda.mem_get_info()
reference_logps = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device=accelerator.device)

model.train()
for step, batch in enumerate(loader):
    with accelerator.accumulate(model):
        loss = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                     labels=batch["labels"]).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    if step % 4 == 0:
        accelerator.print(f"step {step}: loss {loss.item():.4f}")
""".replace("@CKPT@", CKPT))


def cublas_shared_card_train():
    # A classifier's data is normalized on the GPU (no matmul yet); a second job then lands on
    # the card and takes every free byte, and the first training forward (the first cuBLAS
    # call of this process) cannot create its cuBLAS handle.
    import torch
    import torch.nn.functional as F
    from tqdm import tqdm

    torch.manual_seed(0)
    features = torch.randn(200000, 512, device="cuda")
    features = (features - features.mean(0)) / features.std(0)
    labels = torch.randint(0, 100, (200000,), device="cuda")
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 100)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    print(f"features on {features.device}: {tuple(features.shape)}", flush=True)
    _another_job_takes_the_card(0)
    bar = tqdm(range(0, 200000, 1024), desc="train epoch 0")
    for start in bar:
        x, y = features[start:start + 1024], labels[start:start + 1024]
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        bar.set_postfix(loss=f"{loss.item():.3f}")


def hf_pipeline_context_holder():
    # Run while another process holds every byte of the card (run.sh starts the holder): the
    # pipeline's move of the model to device 0 is this process's first CUDA use.
    run_user_script("chat_cli", _WORD_TOKENIZER + """
import torch
from transformers import pipeline

print("cuda available:", torch.cuda.is_available(), "devices:", torch.cuda.device_count(),
      flush=True)
generator = pipeline("text-generation", model="@CKPT@", tokenizer=word_tokenizer(),
                     dtype=torch.bfloat16, device=0)
print(generator("w5 w17 w230", max_new_tokens=16)[0]["generated_text"])
""".replace("@CKPT@", CKPT))


def host_vocab_memoryerror():
    # Not a GPU OOM: a corrupt vocab_size in a tokenizer stats file (2**50) makes a plain
    # Python list allocation fail before anything touches the GPU.
    run_user_script("build_vocab_stats", """import json
import os

import torch

os.makedirs("vocab-stats", exist_ok=True)
with open("vocab-stats/meta.json", "w") as fh:
    json.dump({"vocab_size": 1125899906842624, "num_docs": 1200000}, fh)  # a corrupt export

with open("vocab-stats/meta.json") as fh:
    meta = json.load(fh)
print(f"vocab_size={meta['vocab_size']} docs={meta['num_docs']}", flush=True)
embedding = torch.nn.Embedding(32000, 256).cuda()
counts = [0] * meta["vocab_size"]
print(len(counts))
""")


def gather_index_assert():
    # Not a GPU OOM: message passing over an edge list whose node ids come from a graph with
    # more nodes than the feature matrix; CUDA_LAUNCH_BLOCKING=1 set by the script, so the
    # device-side assert is reported at the gathering line.
    run_user_script("gnn_node_classify", """import os

os.environ["CUDA_LAUNCH_BLOCKING"] = "1"

import torch
import torch.nn as nn
import torch.nn.functional as F


class MeanConv(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.lin = nn.Linear(c_in, c_out)

    def forward(self, h, edge_index):
        src, dst = edge_index
        msgs = h[src]
        agg = torch.zeros_like(h).index_add_(0, dst, msgs)
        deg = torch.bincount(dst, minlength=h.shape[0]).clamp(min=1).unsqueeze(1)
        return self.lin(agg / deg)


class GNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = MeanConv(128, 256), MeanConv(256, 16)

    def forward(self, h, edge_index):
        return self.conv2(F.relu(self.conv1(h, edge_index)), edge_index)


def run_batch(model, feats, edge_index):
    logits = model(feats, edge_index)
    return logits.argmax(dim=1)


torch.manual_seed(0)
num_nodes = 50000
feats = torch.randn(num_nodes, 128, device="cuda")
edge_index = torch.randint(0, num_nodes, (2, 400000), device="cuda")
model = GNN().cuda()
print("subgraph 0:", run_batch(model, feats, edge_index).bincount().tolist()[:4], flush=True)
edge_index_full = torch.randint(0, 52000, (2, 400000), device="cuda")  # ids of the full graph
print("subgraph 1:", run_batch(model, feats, edge_index_full).bincount().tolist()[:4])
""")


def triton_autotune_smem():
    # Not a GPU OOM: a hand-written Triton matmul with @triton.autotune whose every config needs
    # more shared memory than an H100/H200 SM has; the autotuner skips them all, then the chosen
    # config fails at launch with OutOfResources.
    run_user_script("fused_matmul", """import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128}, num_stages=4, num_warps=8),
        triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 128}, num_stages=5, num_warps=8),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, dtype=torch.float16, device=a.device)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    matmul_kernel[grid](a, b, c, M, N, K)
    return c


a = torch.randn(4096, 4096, dtype=torch.float16, device="cuda")
b = torch.randn(4096, 4096, dtype=torch.float16, device="cuda")
c = matmul(a, b)
print("max error", (c - a @ b).abs().max().item())
""")


# --------------------------------------------------------------------------- session 10 (blind):
# Trainer compute_loss override (distillation), SWA copies, torch.func per-sample gradients,
# a LightningDataModule's on-GPU augmentation, accelerate gather_for_metrics, PEFT LoRA on a conv
# net, a JAX attention service, a compiled optimizer step, whole-step CUDA graph capture, a worker
# thread's cuBLAS handle, context creation under torchrun, generate with TextIteratorStreamer, a
# notebook cell printing repr(e), and look-alikes (host RLIMIT_AS, a vocabulary device-side
# assert in a transformers forward, a checkpoint written to a full disk)


def trainer_distill_compute_loss():
    # A Trainer subclass overrides compute_loss for logit distillation from a frozen teacher on
    # the same card: the student's forward and loss (~10 GiB) fit in the 12 GiB left, the
    # teacher's logits and the fp32 KL over the 32000-word vocabulary for 8 x 1024 tokens do not.
    run_user_script("distill_sft", """import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
""" + _random_token_dataset_source(2048, 1024) + """

class DistillationTrainer(Trainer):
    def __init__(self, *args, teacher=None, temperature=2.0, alpha=0.5, **kwargs):
        super().__init__(*args, **kwargs)
        self.teacher = teacher.eval()
        self.temperature = temperature
        self.alpha = alpha

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        with torch.no_grad():
            teacher_logits = self.teacher(input_ids=inputs["input_ids"],
                                          attention_mask=inputs["attention_mask"]).logits
        t = self.temperature
        kd = F.kl_div(F.log_softmax(outputs.logits.float() / t, dim=-1),
                      F.softmax(teacher_logits.float() / t, dim=-1),
                      reduction="batchmean") * t * t
        loss = self.alpha * outputs.loss + (1 - self.alpha) * kd
        return (loss, outputs) if return_outputs else loss


student = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
teacher = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
free, _ = torch.cuda.mem_get_info()
replay_shards = torch.empty(free - 12 * (1 << 30), dtype=torch.uint8, device="cuda")

args = TrainingArguments(
    output_dir="distill-out",
    per_device_train_batch_size=8,
    max_steps=100,
    learning_rate=5e-5,
    warmup_steps=10,
    logging_steps=1,
    save_strategy="no",
    bf16=True,
    report_to="none",
    dataloader_num_workers=0,
)
trainer = DistillationTrainer(model=student, teacher=teacher, args=args,
                              train_dataset=RandomTokens())
trainer.train()
""".replace("@CKPT@", CKPT))


def swa_averaged_copy():
    # Stochastic weight averaging starts after epoch 2: AveragedModel deep-copies the 2 GiB
    # model on the GPU, where the training has left less than a GiB.
    run_user_script("train_swa", """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import SWALR, AveragedModel

GIB = 1 << 30
SWA_START = 2
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8192, 32768), nn.GELU(), nn.Linear(32768, 8192)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
free, _ = torch.cuda.mem_get_info()
shard_cache = torch.empty(free - 5 * GIB, dtype=torch.uint8, device="cuda")

swa_model, swa_scheduler = None, None
for epoch in range(6):
    model.train()
    for step in range(8):
        x = torch.randn(1024, 8192, device="cuda")
        loss = F.mse_loss(model(x), x)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}", flush=True)
    if epoch >= SWA_START:
        if swa_model is None:
            print("starting SWA", flush=True)
            swa_model = AveragedModel(model)
            swa_scheduler = SWALR(optimizer, swa_lr=0.005)
        swa_model.update_parameters(model)
        swa_scheduler.step()
""")


def func_per_sample_grads():
    # DP-SGD with torch.func: per-sample gradients by vmap(grad(...)) cost batch x parameters
    # (84 MB per example); the first logical batch of 128 needs ~10.5 GiB.
    run_user_script("dp_sgd", """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

GIB = 1 << 30
MAX_GRAD_NORM = 1.0
NOISE_MULTIPLIER = 1.1
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                      nn.Linear(4096, 10)).cuda()
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def loss_one(params, buffers, x, y):
    out = functional_call(model, (params, buffers), (x.unsqueeze(0),))
    return F.cross_entropy(out, y.unsqueeze(0))


sample_grads = vmap(grad(loss_one), in_dims=(None, None, 0, 0))


def private_step(x, y, lr=0.05):
    grads = sample_grads(params, buffers, x, y)
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    scale = (MAX_GRAD_NORM / (norms + 1e-6)).clamp(max=1.0)
    for name, g in grads.items():
        g.mul_(scale.view(-1, *([1] * (g.dim() - 1))))
        noisy = g.sum(0) + torch.randn_like(params[name]) * NOISE_MULTIPLIER * MAX_GRAD_NORM
        params[name].sub_(lr * noisy / x.shape[0])


free, _ = torch.cuda.mem_get_info()
public_features = torch.empty(free - 6 * GIB, dtype=torch.uint8, device="cuda")
batch_sizes = [16] * 5 + [128] * 5
for step, n in enumerate(batch_sizes):
    x = torch.randn(n, 1024, device="cuda")
    y = torch.randint(0, 10, (n,), device="cuda")
    private_step(x, y)
    print(f"step {step}: batch {n}, epsilon spent so far ~{0.05 * (step + 1):.2f}", flush=True)
""")


def lightning_gpu_augment():
    # A LightningDataModule augments on the GPU in on_after_batch_transfer: 16x upsampling of
    # 64 x 3 x 128 x 128 crops is a 3 GiB tensor, with ~2 GiB free.
    import lightning as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    class SuperResData(L.LightningDataModule):
        def __init__(self, batch_size=64, scale=16):
            super().__init__()
            self.batch_size = batch_size
            self.scale = scale

        def setup(self, stage):
            self.train_set = TensorDataset(torch.rand(1024, 3, 128, 128))

        def train_dataloader(self):
            return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True)

        def on_after_batch_transfer(self, batch, dataloader_idx):
            (low,) = batch
            high = F.interpolate(low, scale_factor=self.scale, mode="bilinear",
                                 align_corners=False)
            high = (high + 0.02 * torch.randn_like(high)).clamp_(0, 1)
            return low, high

    class Upsampler(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(
                torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.ReLU(),
                torch.nn.Conv2d(64, 3 * 16 * 16, 3, padding=1), torch.nn.PixelShuffle(16))

        def training_step(self, batch, batch_idx):
            low, high = batch
            loss = F.l1_loss(self.body(low), high)
            self.log("l1", loss, prog_bar=True)
            return loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=2e-4)

    fill_gpu(2 * GIB)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=2, logger=False,
                        enable_checkpointing=False)
    trainer.fit(Upsampler(), datamodule=SuperResData())


def accelerate_gather_eval():
    # Perplexity evaluation under accelerate: every batch's fp32 logits (32 x 512 x 32000, 2 GiB)
    # are gathered with gather_for_metrics and kept on the GPU until the end.
    run_user_script("eval_perplexity", """import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM
""" + _random_token_dataset_source(512, 512) + """

accelerator = Accelerator(mixed_precision="bf16")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16)
loader = DataLoader(RandomTokens(), batch_size=32)
model, loader = accelerator.prepare(model, loader)
free, _ = torch.cuda.mem_get_info()
retrieval_index = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device=accelerator.device)

model.eval()
all_logits, all_labels = [], []
for batch in tqdm(loader, desc="eval", disable=not accelerator.is_local_main_process):
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    logits, labels = accelerator.gather_for_metrics((logits, batch["labels"]))
    all_logits.append(logits)
    all_labels.append(labels)

logits = torch.cat(all_logits)[:, :-1]
labels = torch.cat(all_labels)[:, 1:]
nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1))
accelerator.print(f"perplexity {nll.exp().item():.2f}")
""".replace("@CKPT@", CKPT))


def peft_conv_lora():
    # LoRA on the conv layers of a small denoiser (PEFT on a plain nn.Module), progressive
    # resizing: the 256 px epochs fit, the first 1024 px batch under bf16 autocast does not.
    run_user_script("lora_denoiser", """import torch
import torch.nn as nn
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model

GIB = 1 << 30


class Denoiser(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.conv_in = nn.Conv2d(3, width, 3, padding=1)
        self.block1 = nn.Conv2d(width, width, 3, padding=1)
        self.block2 = nn.Conv2d(width, width, 3, padding=1)
        self.conv_out = nn.Conv2d(width, 3, 3, padding=1)

    def forward(self, x):
        h = F.silu(self.conv_in(x))
        h = F.silu(self.block1(h)) + h
        h = F.silu(self.block2(h)) + h
        return x - self.conv_out(h)


torch.manual_seed(0)
base = Denoiser().cuda()
config = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                    target_modules=["conv_in", "block1", "block2"])
model = get_peft_model(base, config)
model.print_trainable_parameters()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
free, _ = torch.cuda.mem_get_info()
clean_images = torch.empty(free - 8 * GIB, dtype=torch.uint8, device="cuda")

for epoch, size in enumerate([256, 256, 1024]):
    for it in range(4):
        clean = torch.rand(16, 3, size, size, device="cuda")
        noisy = clean + 0.1 * torch.randn_like(clean)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(noisy), clean)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    print(f"epoch {epoch} ({size}px): loss {loss.item():.5f}", flush=True)
""")


def jax_attention_server():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A jitted full attention
    # serving requests; a 8 x 16384-token request needs a 64 GiB score tensor.
    run_user_script("attention_service", """import logging

import jax
import jax.numpy as jnp

logging.basicConfig(format="%(asctime)s %(levelname)s [%(name)s] %(message)s", level=logging.INFO)
log = logging.getLogger("attention_service")


@jax.jit
def attend(q, k, v):
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(jnp.float32(q.shape[-1]))
    probs = jax.nn.softmax(scores, axis=-1)
    peak = probs.max(axis=-1).mean()  # attention sharpness, for the service's metrics
    return jnp.einsum("bhqk,bhkd->bhqd", probs, v), peak


log.info("devices: %s", jax.devices())
requests = [("req-7f01", 1, 1024), ("req-7f02", 2, 2048), ("req-7f03", 4, 2048),
            ("req-7f04", 8, 16384)]
for request_id, batch, seq_len in requests:
    log.info("%s: batch=%d seq_len=%d", request_id, batch, seq_len)
    q = jnp.full((batch, 16, seq_len, 64), 0.01, dtype=jnp.bfloat16)
    k = jnp.full((batch, 16, seq_len, 64), 0.02, dtype=jnp.bfloat16)
    v = jnp.full((batch, 16, seq_len, 64), 0.03, dtype=jnp.bfloat16)
    out, peak = attend(q, k, v)
    out.block_until_ready()
    log.info("%s: done, mean %.4f, attention peak %.4f", request_id, float(out.mean()), float(peak))
""")


def compiled_optimizer_step():
    # The compiled-optimizer pattern: torch.compile around opt.step(); forward and backward fit,
    # Adam's state (2 x 2 GiB) created at the first compiled step does not.
    run_user_script("compiled_adam", """import torch
import torch.nn as nn

GIB = 1 << 30
torch.manual_seed(0)
model = nn.Sequential(*[nn.Linear(8192, 8192) for _ in range(8)]).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


@torch.compile(fullgraph=False)
def opt_step():
    opt.step()


free, _ = torch.cuda.mem_get_info()
activation_cache = torch.empty(free - 3 * GIB, dtype=torch.uint8, device="cuda")
for step in range(10):
    x = torch.randn(1024, 8192, device="cuda")
    out = model(x)
    out.pow(2).mean().backward()
    opt_step()
    opt.zero_grad(set_to_none=True)
    print(f"step {step} done", flush=True)
""")


def graph_full_train_step():
    # Whole-step CUDA graph capture for training (forward, backward and optimizer.step in one
    # graph, as the CUDA graphs notes show). After the warm-up (~9 GiB, given back with
    # empty_cache) the replay buffer leaves 3 GiB; the capture's private pool needs ~8 GiB.
    run_user_script("graphed_train_step", """import torch
import torch.nn as nn

GIB = 1 << 30
N, D, H = 32768, 4096, 16384
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(D, H), nn.GELU(), nn.Linear(H, D)).cuda()
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
static_input = torch.randn(N, D, device="cuda")
static_target = torch.randn(N, D, device="cuda")

side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for i in range(3):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(static_input), static_target)
        loss.backward()
        optimizer.step()
torch.cuda.current_stream().wait_stream(side)
print(f"warm-up done, loss {loss.item():.4f}", flush=True)

torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
replay_buffer = torch.empty(free - 3 * GIB, dtype=torch.uint8, device="cuda")
graph = torch.cuda.CUDAGraph()
optimizer.zero_grad(set_to_none=True)
with torch.cuda.graph(graph):
    static_pred = model(static_input)
    static_loss = loss_fn(static_pred, static_target)
    static_loss.backward()
    optimizer.step()

for step in range(100):
    static_input.copy_(torch.randn(N, D, device="cuda"))
    graph.replay()
    if step % 10 == 0:
        print(f"step {step}: loss {static_loss.item():.4f}", flush=True)
""")


def cublas_thread_worker():
    # A feature service: the main thread builds the index (its matmul creates the main thread's
    # cuBLAS handle), another job then takes every free byte of the card, and the first request
    # served on a worker thread needs that thread's own cuBLAS handle; the worker logs the error
    # with logger.exception and the service stops.
    import concurrent.futures
    import logging

    import torch

    logging.basicConfig(format="%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s",
                        level=logging.INFO)
    log = logging.getLogger("feature_service")
    torch.manual_seed(0)
    proj = torch.randn(1024, 256, device="cuda") / 32
    index = torch.nn.functional.normalize(torch.randn(200000, 1024, device="cuda") @ proj, dim=1)
    log.info("index built: %d x %d", index.shape[0], index.shape[1])

    def score_request(request_id, n_queries):
        log.info("request %s: %d queries", request_id, n_queries)
        try:
            queries = torch.randn(n_queries, 1024, device="cuda")
            emb = torch.nn.functional.normalize(queries @ proj, dim=1)
            return emb @ index.T
        except Exception:
            log.exception("request %s failed", request_id)
            raise

    log.info("self-test: top score %.3f", score_request("selftest", 16).max().item())
    _another_job_takes_the_card(0)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="worker") as pool:
        for i in range(4):
            future = pool.submit(score_request, f"r{i:04d}", 16)
            if future.exception() is not None:
                log.error("stopping the service after a failed request")
                sys.exit(1)
            log.info("request r%04d: top score %.3f", i, future.result().max().item())


def torchrun_context_holder():
    # Run while another process holds every byte of the card (run.sh starts the holder): a DDP
    # script under torchrun --nproc_per_node=1; its first CUDA use (setting the device or moving
    # the model) creates the CUDA context, which does not fit.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "train_ddp.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("""import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def setup_distributed():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def main():
    local_rank = setup_distributed()
    model = DDP(nn.Linear(1024, 1024).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x = torch.randn(64, 1024, device=local_rank)
        loss = F.mse_loss(model(x), x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if dist.get_rank() == 0:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
""")
    sys.stdout.flush()
    rc = subprocess.call(["torchrun", "--nproc_per_node=1", "--master_port=29533", path],
                         cwd=WORK)
    sys.exit(rc)


def hf_streamer_thread():
    # A chat CLI streams tokens: generate() runs on a thread with a TextIteratorStreamer (batch 1,
    # a 4000-token history); the prefill does not fit, the thread dies and the main loop times
    # out waiting for the first token.
    run_user_script("chat_stream", _WORD_TOKENIZER + """
from threading import Thread

import torch
from transformers import AutoModelForCausalLM, TextIteratorStreamer

tokenizer = word_tokenizer()
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
speculative_cache = torch.empty(free - 48 * (1 << 20), dtype=torch.uint8, device="cuda")

history = " ".join(f"w{(t * 131) % 31000 + 3}" for t in range(4000))
enc = tokenizer(history, return_tensors="pt")
input_ids = enc["input_ids"].to("cuda")
print(f"history: {input_ids.shape[1]} tokens", flush=True)
streamer = TextIteratorStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True, timeout=20)
thread = Thread(target=model.generate,
                kwargs=dict(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                            streamer=streamer, max_new_tokens=256, do_sample=True, top_p=0.9,
                            pad_token_id=0))
thread.start()
print("assistant: ", end="", flush=True)
for piece in streamer:
    print(piece, end="", flush=True)
thread.join()
print()
""".replace("@CKPT@", CKPT))


def notebook_repr_bar():
    # A notebook cell exported as a script: a bare tqdm bar over chunks, then the except clause
    # prints repr(e) and nothing else.
    run_user_script("cell_12", """import sys

import torch
from tqdm.auto import tqdm

free, _ = torch.cuda.mem_get_info()
cached = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device="cuda")
w = torch.randn(4096, 4096, device="cuda")
chunks = [4096] * 10 + [262144]
norms = []
try:
    for n in tqdm(chunks):
        x = torch.randn(n, 4096, device="cuda")
        norms.append((x @ w).norm(dim=1).cpu())
except Exception as e:
    print(repr(e))
    sys.exit(1)
print(torch.cat(norms).mean())
""")


def host_rlimit_features():
    # Not a GPU OOM: a feature-export job on a shared node caps its own address space
    # (RLIMIT_AS = current + 16 GiB) after a GPU warm-up; the 30.5 GiB host array for
    # the features cannot be allocated.
    run_user_script("export_features", """import resource

import numpy as np
import torch
from tqdm import tqdm

GIB = 1 << 30
encoder = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                              torch.nn.Linear(4096, 4096)).cuda().eval()
with torch.no_grad():
    for i in tqdm(range(8), desc="warm-up batches"):
        encoder(torch.randn(4096, 1024, device="cuda"))
torch.cuda.synchronize()

with open("/proc/self/status") as fh:
    vm_bytes = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:")) * 1024
limit = vm_bytes + 16 * GIB
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # stay polite on the shared node
print(f"address-space limit {limit / GIB:.1f} GiB", flush=True)

n_items = 2_000_000
features = np.zeros((n_items, 4096), dtype=np.float32)
with torch.no_grad():
    for start in tqdm(range(0, n_items, 65536), desc="export"):
        x = torch.randn(min(65536, n_items - start), 1024, device="cuda")
        features[start:start + x.shape[0]] = encoder(x).cpu().numpy()
np.save("features.npy", features)
""")


def hf_vocab_assert():
    # Not a GPU OOM: tool tokens added to the tokenizer (ids 32000..32063) without
    # resize_token_embeddings; the Llama embedding lookup trips a device-side assert.
    run_user_script("tool_tokens", _WORD_TOKENIZER + """
import torch
from transformers import AutoModelForCausalLM

tokenizer = word_tokenizer()
added = tokenizer.add_tokens([f"<tool_{i}>" for i in range(64)])
print(f"added {added} tool tokens, tokenizer size {len(tokenizer)}", flush=True)
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")

texts = ["w5 w17 <tool_3> w230 <tool_12> w99 w4"] * 8
enc = tokenizer(texts, return_tensors="pt", return_token_type_ids=False)
input_ids = enc["input_ids"].to("cuda")
print("max id", int(input_ids.max()), "embedding rows", model.get_input_embeddings().num_embeddings,
      flush=True)
out = model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), labels=input_ids)
print(f"loss {out.loss.item():.4f}")
""".replace("@CKPT@", CKPT))


def save_disk_full():
    # Not a GPU OOM: after training, the checkpoint (GPU state dicts) is written to a disk with
    # no space left (the scenario points checkpoints/step_200.pt at /dev/full beforehand; the
    # user's script only sees the path).
    if not os.path.exists("/dev/full"):
        sys.exit("/dev/full is missing on this machine: save_disk_full cannot run")
    ckpt_dir = os.path.join(WORK, "checkpoints")
    os.makedirs(ckpt_dir, exist_ok=True)
    target = os.path.join(ckpt_dir, "step_200.pt")
    if os.path.lexists(target):
        os.remove(target)
    os.symlink("/dev/full", target)
    run_user_script("train_then_save", """import os

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(1, 201):
    x = torch.randn(256, 4096, device="cuda")
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 50 == 0:
        print(f"step {step}: loss {loss.item():.4f}", flush=True)

os.makedirs("checkpoints", exist_ok=True)
path = os.path.join("checkpoints", f"step_{step}.pt")
print(f"saving {path}", flush=True)
with open(path, "wb") as fh:
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, fh)
print("saved")
""")


def safetensors_safe_open():
    # A hand-written loader: the model skeleton on the meta device, every tensor of every shard
    # read with safetensors' safe_open(device="cuda:0"), then load_state_dict(assign=True); a
    # model already serving on the card leaves 400 MiB.
    run_user_script("load_shards", """import glob
import json
import os

import torch
from safetensors import safe_open
from tqdm import tqdm
from transformers import AutoConfig, AutoModelForCausalLM

CKPT = "@CKPT@"
free, total = torch.cuda.mem_get_info()
serving_model = torch.empty(free - 400 * (1 << 20), dtype=torch.uint8, device="cuda")
print(f"serving model: {serving_model.numel() / 2**30:.1f} GiB of {total / 2**30:.1f} GiB",
      flush=True)

config = AutoConfig.from_pretrained(CKPT)
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(config)

state = {}
shards = sorted(glob.glob(os.path.join(CKPT, "*.safetensors")))
for shard in shards:
    with safe_open(shard, framework="pt", device="cuda:0") as f:
        for name in tqdm(list(f.keys()), desc=os.path.basename(shard)):
            state[name] = f.get_tensor(name)
missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
print(json.dumps({"missing": missing, "unexpected": unexpected}))
""".replace("@CKPT@", CKPT))


def hf_assisted_generate():
    # Assisted (speculative) generation: the checkpoint is both the target and the draft model;
    # a 3000-token prompt with 64 MiB left on the card.
    run_user_script("speculative_answer", """import torch
from transformers import AutoModelForCausalLM

MIB = 1 << 20
target = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
draft = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
target.eval()
draft.eval()
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
retriever = torch.empty(free - 64 * MIB, dtype=torch.uint8, device="cuda")

torch.manual_seed(0)
prompt = torch.randint(3, 32000, (1, 3000), device="cuda")
with torch.no_grad():
    out = target.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt),
                          assistant_model=draft, max_new_tokens=128, do_sample=False,
                          pad_token_id=0)
print(out[0, prompt.shape[1]:].tolist())
""".replace("@CKPT@", CKPT))


# --------------------------------------------------------------------------- session 11 (blind):
# Seq2SeqTrainer predict_with_generate, embedding resize after added tokens, a long sampled
# decode, DDP wrapping under a single-process gloo group, a plain optimizer resume, a
# hand-written int8 quantizer, torch.utils.checkpoint recomputation in backward, SDPA with a
# boolean padding mask, a cuDNN LSTM, JAX growing on demand beside another job, a vmapped JAX
# ensemble, `raise ... from e` in user code, rich tracebacks, a per-process memory fraction,
# torchrun --tee line prefixes, Lightning's DDP strategy on one device, and look-alikes (a
# DataLoader worker in a 64 MiB /dev/shm, binary_cross_entropy without a sigmoid, NaN sampling
# probabilities in generate, a Triton gather with unreduced hashed ids)


def seq2seq_predict_generate():
    # Seq2SeqTrainer.predict with predict_with_generate, 8 beams and batch 64 for a random-weight
    # T5 summarizer (built from its config, no download): the beams' cross-attention caches
    # (12 layers x 512 x 512 x 1024 x 2) do not fit in the ~2 GiB left.
    run_user_script("predict_summaries", """import torch
from transformers import (Seq2SeqTrainer, Seq2SeqTrainingArguments, T5Config,
                          T5ForConditionalGeneration)

GIB = 1 << 30


class Articles(torch.utils.data.Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        ids = torch.randint(3, 32000, (512,), generator=g)
        ids[-1] = 1  # </s>
        labels = torch.randint(3, 32000, (64,), generator=g)
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}


config = T5Config(vocab_size=32128, d_model=1024, d_kv=64, d_ff=4096, num_layers=12,
                  num_decoder_layers=12, num_heads=16, decoder_start_token_id=0, pad_token_id=0,
                  eos_token_id=1)
torch.manual_seed(0)
model = T5ForConditionalGeneration(config).to("cuda", torch.bfloat16)
model.eval()
free, _ = torch.cuda.mem_get_info()
doc_index = torch.empty(free - 2 * GIB, dtype=torch.uint8, device="cuda")

args = Seq2SeqTrainingArguments(
    output_dir="summaries-out",
    per_device_eval_batch_size=64,
    predict_with_generate=True,
    generation_max_length=128,
    generation_num_beams=8,
    report_to="none",
    dataloader_num_workers=0,
)
trainer = Seq2SeqTrainer(model=model, args=args)
result = trainer.predict(Articles())
print(result.metrics)
print(result.predictions.shape)
""")


def hf_resize_embeddings():
    # 256 new special tokens, then resize_token_embeddings(pad_to_multiple_of=64) of the bf16
    # Llama already on the card, where an index of this process leaves 96 MiB: the new
    # embedding matrix (and the mean-resizing statistics) do not fit.
    run_user_script("add_special_tokens", _WORD_TOKENIZER + """
import torch
from transformers import AutoModelForCausalLM

MIB = 1 << 20
tokenizer = word_tokenizer()
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
retrieval_index = torch.empty(free - 96 * MIB, dtype=torch.uint8, device="cuda")

new_tokens = [f"<|cell_{i}|>" for i in range(256)]
added = tokenizer.add_tokens(new_tokens, special_tokens=True)
print(f"added {added} tokens, tokenizer size {len(tokenizer)}", flush=True)
embeddings = model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=64)
print("embedding rows:", embeddings.num_embeddings)
""".replace("@CKPT@", CKPT))


def hf_generate_long_decode():
    # Sampled generation of long continuations (min_new_tokens = max_new_tokens = 3500) for 32
    # prompts: the prefill fits, the KV cache grows ~2 MiB a step and runs out mid-decode.
    run_user_script("long_stories", """import time

import torch
from transformers import AutoModelForCausalLM

GIB = 1 << 30
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
reward_model_buffers = torch.empty(free - 1 * GIB, dtype=torch.uint8, device="cuda")

torch.manual_seed(0)
prompts = torch.randint(3, 32000, (32, 256), device="cuda")
start = time.time()
print(f"sampling 3500 tokens for {prompts.shape[0]} prompts", flush=True)
with torch.inference_mode():
    stories = model.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts),
                             do_sample=True, temperature=0.8, top_k=50, max_new_tokens=3500,
                             min_new_tokens=3500, pad_token_id=0)
print(f"{stories.shape} in {time.time() - start:.1f} s")
""".replace("@CKPT@", CKPT))


def ddp_wrap_gloo():
    # A single-process "distributed" run (gloo, world size 1, started with plain python): the
    # 2 GiB model is on the card, a feature cache leaves 1 GiB, and DistributedDataParallel's
    # gradient buckets (as large as the parameters) do not fit.
    run_user_script("train_ddp_single", """import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

GIB = 1 << 30
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29541")
dist.init_process_group("gloo", rank=0, world_size=1)
torch.cuda.set_device(0)
print(f"rank {dist.get_rank()} of {dist.get_world_size()} ({dist.get_backend()})", flush=True)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8192, 32768), nn.GELU(), nn.Linear(32768, 8192)).cuda()
free, _ = torch.cuda.mem_get_info()
feature_cache = torch.empty(free - 1 * GIB, dtype=torch.uint8, device="cuda")
model = DDP(model, device_ids=[0])
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(100):
    x = torch.randn(256, 8192, device="cuda")
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
""")


def _resume_state(path):
    """The checkpoint that resume_optimizer_state resumes from: a 134M-parameter MLP and its
    AdamW state after one step, made on the CPU (no GPU memory)."""
    import torch
    import torch.nn as nn

    if os.path.exists(path):
        return
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(8, 4096)
    nn.functional.mse_loss(model(x), x).backward()
    optimizer.step()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 4},
               path + ".tmp")
    os.replace(path + ".tmp", path)


def resume_optimizer_state():
    # A plain PyTorch resume: the model goes to the card and loads its weights; a hard-negative
    # bank leaves 600 MiB; optimizer.load_state_dict moves AdamW's 1 GiB of state to the
    # parameters' device and does not fit.
    _resume_state(os.path.join(WORK, "checkpoints-mlp", "last.pt"))
    run_user_script("resume_training", """import os

import torch
import torch.nn as nn
import torch.nn.functional as F

MIB = 1 << 20
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
start_epoch = 0
free, _ = torch.cuda.mem_get_info()
negatives = torch.empty(free - 600 * MIB, dtype=torch.uint8, device="cuda")  # hard negatives

path = os.path.join("checkpoints-mlp", "last.pt")
if os.path.exists(path):
    ckpt = torch.load(path, map_location="cpu")
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    start_epoch = ckpt["epoch"] + 1
    print(f"resumed from {path} at epoch {start_epoch}", flush=True)

for epoch in range(start_epoch, 10):
    x = torch.randn(512, 4096, device="cuda")
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"epoch {epoch}: loss {loss.item():.4f}", flush=True)
""")


def naive_int8_quantize():
    # A hand-written weight-only int8 quantizer (no bitsandbytes): per-row absmax scales computed
    # in fp32 on the GPU; a 1 GiB fp32 copy of a 16384 x 16384 weight plus its abs() do not fit
    # in the 1.5 GiB left.
    run_user_script("quantize_int8", """import torch
import torch.nn as nn
from tqdm import tqdm

GIB = 1 << 30


def quantize_linear(layer):
    w = layer.weight.data.float()
    scale = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127.0
    q = torch.round(w / scale).clamp_(-128, 127).to(torch.int8)
    return q, scale.to(torch.float16)


torch.manual_seed(0)
model = nn.Sequential(*[nn.Linear(16384, 16384, bias=False, device="cuda", dtype=torch.bfloat16)
                        for _ in range(6)])
free, _ = torch.cuda.mem_get_info()
kv_pool = torch.empty(free - 3 * GIB // 2, dtype=torch.uint8, device="cuda")  # serving KV pool
print(f"model: {sum(p.numel() for p in model.parameters()) / 1e9:.2f}B params (bf16)",
      flush=True)

quantized = {}
for name, module in tqdm(list(model.named_modules()), desc="quantize"):
    if isinstance(module, nn.Linear):
        quantized[name] = quantize_linear(module)
        module.weight = None
torch.save(quantized, "model-int8.pt")
""")


def checkpoint_recompute_backward():
    # torch.utils.checkpoint (non-reentrant) around each residual MLP block: the forward keeps
    # only the blocks' inputs and fits in the ~8.5 GiB left; the backward's recomputation of the
    # last block plus its gradients (~10 GiB) does not.
    run_user_script("train_ckpt_blocks", """import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

GIB = 1 << 30


class Block(nn.Module):
    def __init__(self, d=4096, hidden=16384):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.fc2(nn.functional.gelu(self.fc1(x)))


class Net(nn.Module):
    def __init__(self, n_blocks=4):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(n_blocks))

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return x


torch.manual_seed(0)
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
token_cache = torch.empty(free - 17 * GIB // 2, dtype=torch.uint8, device="cuda")

for step in range(20):
    x = torch.randn(32768, 4096, device="cuda")
    loss = model(x).pow(2).mean()
    print(f"step {step}: forward done, loss {loss.item():.4f}", flush=True)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
""")


def sdpa_bool_mask():
    # A long-document encoder passes a boolean padding-and-causal mask to
    # F.scaled_dot_product_attention; documents of 2048 and 4096 tokens fit, at 16384 tokens the
    # (4, 1, L, L) mask and the additive float mask SDPA makes from it do not (3 GiB left).
    run_user_script("longdoc_encode", """import torch
import torch.nn as nn
import torch.nn.functional as F

GIB = 1 << 30


class SelfAttention(nn.Module):
    def __init__(self, d=1024, heads=16):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x, lengths):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        pos = torch.arange(n, device=x.device)
        keep = pos[None, :] < lengths[:, None]
        mask = keep[:, None, None, :] & (pos[None, None, :, None] >= pos[None, None, None, :])
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, n, d))


torch.manual_seed(0)
layer = SelfAttention().cuda().to(torch.bfloat16).eval()
free, _ = torch.cuda.mem_get_info()
doc_store = torch.empty(free - 3 * GIB, dtype=torch.uint8, device="cuda")

with torch.no_grad():
    for n in [2048, 4096, 16384]:
        x = torch.randn(4, n, 1024, device="cuda", dtype=torch.bfloat16)
        lengths = torch.tensor([n, n - 100, n // 2, n // 3], device="cuda")
        y = layer(x, lengths)
        print(f"{n} tokens: out norm {y.float().norm():.1f}", flush=True)
""")


def lstm_cudnn_train():
    # A 4-layer cuDNN LSTM trained on 64 x 4096-step sequences: the training forward's reserve
    # space and outputs are far more than the ~6 GiB left.
    run_user_script("train_lstm_lm", """import torch
import torch.nn as nn
import torch.nn.functional as F

GIB = 1 << 30
torch.backends.cudnn.benchmark = True


class LstmLM(nn.Module):
    def __init__(self, vocab=8192, d=1024, hidden=2048, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out)


torch.manual_seed(0)
model = LstmLM().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
corpus_on_gpu = torch.empty(free - 6 * GIB, dtype=torch.uint8, device="cuda")

for step, seq_len in enumerate([64, 128, 4096]):
    tokens = torch.randint(0, 8192, (64, seq_len + 1), device="cuda")
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step} (seq {seq_len}): loss {loss.item():.3f}", flush=True)
""")


def jax_on_demand_shared():
    # run.sh: another process holds all of the card but 6 GiB, and XLA_PYTHON_CLIENT_PREALLOCATE
    # =false makes JAX grow on demand; the jitted train step's batch grows until its buffers
    # cannot be had from the driver.
    run_user_script("jax_grow_batch", """import jax
import jax.numpy as jnp


def init(key, d=4096, hidden=16384):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (d, hidden)) * 0.01,
            "w2": jax.random.normal(k2, (hidden, d)) * 0.01}


def loss_fn(params, x):
    h = jax.nn.gelu(x @ params["w1"])
    return jnp.mean((h @ params["w2"] - x) ** 2)


@jax.jit
def train_step(params, x):
    loss, grads = jax.value_and_grad(loss_fn)(params, x)
    return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads), loss


print("backend:", jax.default_backend(), jax.devices(), flush=True)
params = init(jax.random.PRNGKey(0))
for batch in [1024, 4096, 16384, 65536]:
    x = jnp.ones((batch, 4096), dtype=jnp.float32)
    params, loss = train_step(params, x)
    print(f"batch {batch}: loss {float(loss):.5f}", flush=True)
""")


def jax_vmap_ensemble():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A deep ensemble of 64 MLPs
    # evaluated with jit(vmap(...)) over one shared batch: the parameters (2 GiB) fit, the
    # ensemble's hidden activations (64 x 8192 x 4096 floats, 8 GiB) do not.
    run_user_script("ensemble_uncertainty", """import jax
import jax.numpy as jnp

N_MEMBERS = 64


def init_member(key, d=1024, hidden=4096):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (d, hidden)) * 0.02,
            "w2": jax.random.normal(k2, (hidden, d)) * 0.02}


def predict(params, x):
    return jnp.tanh(x @ params["w1"]) @ params["w2"]


params = jax.vmap(init_member)(jax.random.split(jax.random.PRNGKey(0), N_MEMBERS))
print("ensemble parameters:", sum(p.size for p in jax.tree_util.tree_leaves(params)), flush=True)
ensemble_predict = jax.jit(jax.vmap(predict, in_axes=(0, None)))

x = jnp.ones((8192, 1024), dtype=jnp.float32)
preds = ensemble_predict(params, x)
mean, std = preds.mean(axis=0), preds.std(axis=0)
print(f"mean {float(mean.mean()):.4f}, epistemic std {float(std.mean()):.4f}")
""")


def raise_from_user():
    # An embedding job wraps each shard's failure in its own exception, `raise ... from e`:
    # the traceback shows the OOM, "The above exception was the direct cause", then the user's
    # ShardFailed with its own message.
    run_user_script("embed_corpus", """import logging

import torch
import torch.nn as nn

GIB = 1 << 30
logging.basicConfig(format="%(asctime)s | %(levelname)-8s | %(name)s - %(message)s",
                    level=logging.INFO)
log = logging.getLogger("embed_corpus")


class ShardFailed(RuntimeError):
    pass


encoder = nn.Sequential(nn.Linear(1024, 8192), nn.GELU(), nn.Linear(8192, 768)).cuda().eval()
free, _ = torch.cuda.mem_get_info()
faiss_staging = torch.empty(free - 2 * GIB, dtype=torch.uint8, device="cuda")


def embed_shard(shard_id, n_rows):
    try:
        with torch.no_grad():
            x = torch.randn(n_rows, 1024, device="cuda")
            return nn.functional.normalize(encoder(x), dim=-1).cpu()
    except torch.OutOfMemoryError as e:
        raise ShardFailed(f"shard {shard_id:05d} ({n_rows} rows) could not be embedded; "
                          "lower --rows-per-shard") from e


shards = [(i, 8192) for i in range(4)] + [(4, 131072)]
for shard_id, n_rows in shards:
    log.info("embedding shard %05d (%d rows)", shard_id, n_rows)
    emb = embed_shard(shard_id, n_rows)
    log.info("shard %05d done: %s", shard_id, tuple(emb.shape))
""")


def rich_traceback_train():
    # A training script with rich's traceback handler installed: the OOM is printed as rich's
    # boxed traceback, the message wrapped to the console width.
    run_user_script("train_autoencoder", """import torch
import torch.nn as nn
import torch.nn.functional as F
from rich.console import Console
from rich.traceback import install

install(show_locals=False)
console = Console()
GIB = 1 << 30

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2048, 8192), nn.ReLU(), nn.Linear(8192, 256), nn.ReLU(),
                      nn.Linear(256, 8192), nn.ReLU(), nn.Linear(8192, 2048)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
augment_buffers = torch.empty(free - 4 * GIB, dtype=torch.uint8, device="cuda")

for epoch, batch in enumerate([4096, 8192, 65536]):
    x = torch.randn(batch, 2048, device="cuda")
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    console.log(f"epoch {epoch}: batch {batch}, loss {loss.item():.4f}")
""")


def memory_fraction_cap():
    # The card is shared by convention: the script caps itself with
    # set_per_process_memory_fraction(0.05) (~7 GiB of 140); the card has ~130 GiB free when its
    # 8 GiB batch is refused.
    run_user_script("capped_infer", """import torch
import torch.nn as nn

torch.cuda.set_per_process_memory_fraction(0.05, device=0)  # our share of the team's card
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda().eval()

with torch.no_grad():
    for batch in [1024, 8192, 65536]:
        x = torch.randn(batch, 4096, device="cuda")
        y = model(x)
        print(f"batch {batch}: {tuple(y.shape)}, "
              f"{torch.cuda.max_memory_allocated() / 2**30:.2f} GiB peak", flush=True)
""")


def torchrun_tee_prefix():
    # A single-GPU fine-tune started with `torchrun --nproc_per_node=1 --tee 3`: every line of
    # the worker's output carries torchrun's prefix; a plain training loop with a tqdm bar OOMs
    # at a long batch, and torchrun's ChildFailedError summary follows.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "finetune_tee.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("""import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

GIB = 1 << 30
local_rank = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local_rank)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
free, _ = torch.cuda.mem_get_info()
teacher_outputs = torch.empty(free - 4 * GIB, dtype=torch.uint8, device="cuda")

lengths = [2048] * 20 + [65536]
for step, n in enumerate(tqdm(lengths, desc=f"rank {local_rank}", mininterval=0)):
    x = torch.randn(n, 4096, device="cuda")
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print("done")
""")
    sys.stdout.flush()
    rc = subprocess.call(["torchrun", "--nproc_per_node=1", "--tee", "3",
                          "--master_port=29547", path], cwd=WORK)
    sys.exit(rc)


def lightning_ddp_one_device():
    # Lightning with strategy="ddp" on one GPU (what a multi-GPU config gives on a one-GPU box):
    # the process group is set up in-process, and the DDP-wrapped training_step's forward of a
    # 32768-row batch does not fit in the ~4 GiB left.
    run_user_script("train_lit_ddp", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

GIB = 1 << 30


class Vectors(Dataset):
    def __len__(self):
        return 32768 * 8

    def __getitem__(self, i):
        return torch.randn(4096)


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096))

    def training_step(self, batch, batch_idx):
        loss = F.mse_loss(self.net(batch), batch)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    free, _ = torch.cuda.mem_get_info()
    pinned_cache = torch.empty(free - 4 * GIB, dtype=torch.uint8, device="cuda")
    trainer = L.Trainer(accelerator="gpu", devices=1, strategy="ddp", max_epochs=1,
                        logger=False, enable_checkpointing=False)
    trainer.fit(Regressor(), DataLoader(Vectors(), batch_size=32768, num_workers=0))
""")


# --------------------------------------------------------------------------- look-alikes


def dataloader_shm_bus():
    # Not a GPU OOM: the job runs with a 64 MiB /dev/shm, as a container started without
    # --shm-size has (this wrapper mounts one in a private mount namespace, leaving the machine's
    # /dev/shm alone); the DataLoader workers' 384 MiB batches cannot be put in shared memory:
    # a worker dies of SIGBUS and the main process reports it.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "train_images.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("""import torch
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        return torch.rand(3, 512, 512) * 255


model = torch.nn.Conv2d(3, 16, 3, padding=1).cuda()
loader = DataLoader(Frames(), batch_size=128, num_workers=4, shuffle=True)
for step, frames in enumerate(loader):
    out = model(frames.cuda(non_blocking=True) / 255)
    print(f"step {step}: {tuple(out.shape)}", flush=True)
""")
    if not hasattr(os, "unshare"):
        sys.exit("os.unshare needs Python 3.12: dataloader_shm_bus cannot run")
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                           ctypes.c_char_p]
    ms_rec, ms_private = 16384, 262144
    try:
        os.unshare(os.CLONE_NEWNS)
    except OSError as error:
        sys.exit(f"unshare(CLONE_NEWNS) failed ({error}): dataloader_shm_bus cannot run")
    if libc.mount(b"none", b"/", None, ms_rec | ms_private, None) != 0:
        sys.exit(f"making / private failed (errno {ctypes.get_errno()})")
    if libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", 0, b"size=64m,mode=1777") != 0:
        sys.exit(f"mounting a 64 MiB /dev/shm failed (errno {ctypes.get_errno()})")
    st = os.statvfs("/dev/shm")
    if st.f_blocks * st.f_frsize > 128 * MIB:
        sys.exit("the private /dev/shm is not the 64 MiB one")
    sys.stdout.flush()
    sys.exit(subprocess.call([sys.executable, path], cwd=WORK))


def bce_no_sigmoid_assert():
    # Not a GPU OOM: binary_cross_entropy on raw logits (the sigmoid was left out of the head);
    # the CUDA kernel's input range assert fires and surfaces at loss.item().
    run_user_script("train_multilabel", """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(768, 1024), nn.ReLU(), nn.Linear(1024, 40)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(50):
    x = torch.randn(512, 768, device="cuda")
    targets = (torch.rand(512, 40, device="cuda") > 0.8).float()
    probs = model(x)  # the head's sigmoid is applied by the loss... isn't it?
    loss = F.binary_cross_entropy(probs, targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step}: loss {loss.item():.4f}", flush=True)
""")


def hf_generate_nan_sampling():
    # Not a GPU OOM: a "task vector" merge divides by the norm of a zero difference (the
    # fine-tuned weights are the base weights), so the merged weights are NaN; sampling in
    # generate fails on the NaN probabilities.
    run_user_script("merge_and_sample", """import torch
from transformers import AutoModelForCausalLM

base = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
tuned = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")

with torch.no_grad():
    for (name, p), q in zip(base.named_parameters(), tuned.parameters()):
        if "mlp" in name:
            delta = q - p
            p.add_(0.5 * delta / delta.norm())  # normalized task vector
del tuned
base.eval()
prompt = torch.randint(3, 32000, (4, 32), device="cuda")
out = base.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt), do_sample=True,
                    top_p=0.95, max_new_tokens=64, pad_token_id=0)
print(out.shape)
""".replace("@CKPT@", CKPT))


def triton_hash_gather_illegal():
    # Not a GPU OOM: a hand-written Triton embedding-bag gathers rows by hashed feature ids that
    # were never reduced modulo the table size; the loads land far outside the table.
    run_user_script("hashed_features", """import torch
import triton
import triton.language as tl


@triton.jit
def gather_rows_kernel(table_ptr, ids_ptr, out_ptr, dim, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < dim
    idx = tl.load(ids_ptr + row)
    vals = tl.load(table_ptr + idx * dim + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * dim + cols, vals, mask=mask)


def gather_rows(table, ids):
    out = torch.empty(ids.numel(), table.shape[1], device=table.device, dtype=table.dtype)
    gather_rows_kernel[(ids.numel(),)](table, ids, out, table.shape[1],
                                       BLOCK=triton.next_power_of_2(table.shape[1]))
    return out


NUM_BUCKETS = 1 << 20
table = torch.randn(NUM_BUCKETS, 128, device="cuda")
raw = torch.randint(0, NUM_BUCKETS, (4096,), device="cuda")
print("bucketed ids ok:", gather_rows(table, raw).sum().item(), flush=True)
hashed = torch.randint(1 << 40, 1 << 50, (4096,), device="cuda")  # user ids, hashed
features = gather_rows(table, hashed)  # forgot: hashed % NUM_BUCKETS
print("features", features.mean().item())
""")



# --------------------------------------------------------------------------- session 12 (blind):
# a Trainer callback that exports an fp32 copy at every save, Lightning's learning-rate finder, a
# custom loop failing in its loss over a 256k vocabulary, a FlexAttention block mask built per
# length bucket, an image upscaler at 4K under inference_mode, JAX shard_map over a one-device
# mesh, JAX's platform allocator beside another job, FSDP2 fully_shard (world size 1),
# except-handlers that print torch.cuda.memory_summary() or nvidia-smi before re-raising, a
# logging + tqdm recommender failing in backward (dense embedding gradient), a whole dataset
# copied to the card, a WGAN-GP gradient penalty (autograd.grad with create_graph), a PEFT adapter
# loaded onto a GPU model, nn.MultiheadAttention returning its weights, and look-alikes (two NCCL
# ranks on one GPU, NaN policy logits in torch.distributions, a DataLoader worker killed by a
# memory cgroup)


def trainer_save_callback():
    # A Trainer run with save_steps=5 and a callback that writes an fp32 EMA-style export of the
    # weights next to every checkpoint: the SGD steps fit in the ~1.8 GiB left, the fp32 copy of
    # the 550M-parameter model (2 GiB) made in on_save does not.
    run_user_script("sft_with_export", """import torch
from transformers import AutoModelForCausalLM, Trainer, TrainerCallback, TrainingArguments
""" + _random_token_dataset_source(4096, 256) + """

class Fp32Export(TrainerCallback):
    \"\"\"Writes an fp32 copy of the weights next to every checkpoint (for the eval cluster).\"\"\"

    def on_save(self, args, state, control, model=None, **kwargs):
        export = {name: t.detach().float().clone() for name, t in model.state_dict().items()}
        torch.save(export, f"{args.output_dir}/fp32-export-{state.global_step}.pt")
        print(f"exported fp32 weights at step {state.global_step}", flush=True)


model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
free, total = torch.cuda.mem_get_info()
reward_model_stub = torch.empty(free - 1843 * (1 << 20), dtype=torch.uint8, device="cuda")

args = TrainingArguments(
    output_dir="sft-export-run",
    per_device_train_batch_size=2,
    max_steps=30,
    learning_rate=1e-5,
    optim="sgd",
    logging_steps=5,
    save_strategy="steps",
    save_steps=5,
    bf16=True,
    report_to="none",
    dataloader_num_workers=0,
)
trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(), callbacks=[Fp32Export()])
trainer.train()
""".replace("@CKPT@", CKPT))


def lightning_lr_find():
    # Lightning's learning-rate finder (Tuner.lr_find) runs training steps before fit: the first
    # one, a 32768-row batch through a 4096x16384 MLP, does not fit in the ~3.5 GiB left.
    run_user_script("tune_lr", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.tuner import Tuner
from torch.utils.data import DataLoader, TensorDataset


class Denoiser(L.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096))

    def training_step(self, batch, batch_idx):
        (x,) = batch
        noisy = x + 0.1 * torch.randn_like(x)
        loss = F.mse_loss(self.net(noisy), x)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


if __name__ == "__main__":
    data = TensorDataset(torch.randn(65536, 4096))
    loader = DataLoader(data, batch_size=32768, shuffle=True)
    free, _ = torch.cuda.mem_get_info()
    replay_cache = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
    model = Denoiser()
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=5, logger=False,
                        enable_checkpointing=False)
    tuner = Tuner(trainer)
    lr_finder = tuner.lr_find(model, train_dataloaders=loader, min_lr=1e-6, max_lr=1e-1)
    print("suggested lr:", lr_finder.suggestion())
    trainer.fit(model, loader)
""")


def train_loop_ce_vocab():
    # A custom training loop of a small LM with a 256k vocabulary under bf16 autocast: the short
    # warm-up batches pass; at 16 x 2048 tokens the 16 GiB bf16 logits fit, the loss's fp32
    # log-softmax over them does not. Only the user's frames and torch's loss modules show.
    run_user_script("train_lm", """import torch
import torch.nn as nn

VOCAB = 256000


class TinyLM(nn.Module):
    def __init__(self, d=1024):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.mix = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB, bias=False)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = h + self.mix(h)
        return self.head(self.norm(h))


torch.manual_seed(0)
model = TinyLM().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
loss_fn = nn.CrossEntropyLoss()
free, _ = torch.cuda.mem_get_info()
prefetched_shards = torch.empty(free - 30 * (1 << 30), dtype=torch.uint8, device="cuda")

schedule = [(4, 512), (4, 512), (16, 2048)]  # (batch, seq): warm-up, then the full length
for step, (batch, seq) in enumerate(schedule):
    tokens = torch.randint(0, VOCAB, (batch, seq + 1), device="cuda")
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(inputs)
        loss = loss_fn(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step} ({batch}x{seq}): loss {loss.item():.3f}", flush=True)
""")


def flex_block_mask():
    # FlexAttention masks precomputed per length bucket with create_block_mask (not compiled, the
    # default): the mask function is evaluated densely over Q x KV; at 262144 tokens the 64 GiB
    # boolean grid does not fit in the ~8 GiB left.
    run_user_script("build_doc_masks", """import torch
from torch.nn.attention.flex_attention import create_block_mask

BUCKETS = [4096, 16384, 262144]
free, _ = torch.cuda.mem_get_info()
kv_pool = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")

masks = {}
for seq_len in BUCKETS:
    # packed documents of 1024 tokens: attend causally within one's own document
    doc_ids = torch.arange(seq_len, device="cuda") // 1024

    def doc_causal(b, h, q_idx, kv_idx):
        return (doc_ids[q_idx] == doc_ids[kv_idx]) & (q_idx >= kv_idx)

    masks[seq_len] = create_block_mask(doc_causal, B=None, H=None, Q_LEN=seq_len,
                                       KV_LEN=seq_len, device="cuda")
    print(f"bucket {seq_len}: sparsity {masks[seq_len].sparsity():.1f}%", flush=True)
""")


def upscale_inference_mode():
    # A 4x image upscaler (residual conv blocks + PixelShuffle) in fp16 under
    # torch.inference_mode over images of growing size; the 2160x3840 input's activations
    # (1 GiB per 64-channel map, 4 GiB before the first shuffle) do not fit in the ~6 GiB left.
    run_user_script("upscale_frames", """import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, c=64):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.LeakyReLU(0.2),
                                  nn.Conv2d(c, c, 3, padding=1))

    def forward(self, x):
        return x + self.body(x)


class Upscaler4x(nn.Module):
    def __init__(self, c=64, blocks=8):
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(c) for _ in range(blocks)])
        self.up = nn.Sequential(nn.Conv2d(c, 4 * c, 3, padding=1), nn.PixelShuffle(2),
                                nn.LeakyReLU(0.2), nn.Conv2d(c, 4 * c, 3, padding=1),
                                nn.PixelShuffle(2), nn.LeakyReLU(0.2))
        self.tail = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, x):
        feat = self.head(x)
        feat = feat + self.body(feat)
        return self.tail(self.up(feat)).clamp(0, 1)


model = Upscaler4x().cuda().half().eval()
free, _ = torch.cuda.mem_get_info()
decoded_frames = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")

with torch.inference_mode():
    for h, w in [(256, 256), (540, 960), (2160, 3840)]:
        frame = torch.rand(1, 3, h, w, device="cuda", dtype=torch.float16)
        out = model(frame)
        print(f"{h}x{w} -> {out.shape[-2]}x{out.shape[-1]}", flush=True)
""")


def jax_shard_map_mesh():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A data-parallel loss written
    # with shard_map over a Mesh of the local devices (one here), jitted; at 262144 rows the
    # 8 GiB hidden activation does not fit.
    run_user_script("sharded_eval", """import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

try:
    from jax import shard_map
except ImportError:
    from jax.experimental.shard_map import shard_map

mesh = Mesh(np.array(jax.devices()), ("data",))
print("mesh:", mesh.shape, jax.devices(), flush=True)


def local_loss(w, x):
    h = jnp.tanh(x @ w)
    return jax.lax.pmean(jnp.mean(h * h), "data")


sharded_loss = jax.jit(shard_map(local_loss, mesh=mesh, in_specs=(P(), P("data")),
                                 out_specs=P()))
w = jax.random.normal(jax.random.PRNGKey(0), (4096, 8192)) * 0.01
for rows in [4096, 16384, 262144]:
    x = jax.device_put(jnp.ones((rows, 4096), dtype=jnp.float32),
                       NamedSharding(mesh, P("data")))
    print(f"{rows} rows: loss {float(sharded_loss(w, x)):.6f}", flush=True)
""")


def jax_platform_allocator():
    # run.sh: another process holds all of the card but 6 GiB, and
    # XLA_PYTHON_CLIENT_ALLOCATOR=platform makes JAX allocate exactly what it needs from the
    # driver; a jitted pairwise-distance matrix of 65536 points (16 GiB) cannot be had.
    run_user_script("dedup_embeddings", """import jax
import jax.numpy as jnp


@jax.jit
def pairwise_sq_dists(x):
    sq = jnp.sum(x * x, axis=1)
    return sq[:, None] + sq[None, :] - 2.0 * (x @ x.T)


print("backend:", jax.default_backend(), jax.devices(), flush=True)
key = jax.random.PRNGKey(0)
for n in [4096, 16384, 65536]:
    emb = jax.random.normal(key, (n, 256), dtype=jnp.float32)
    d = pairwise_sq_dists(emb)
    near_dupes = int(jnp.sum(d < 1e-3)) - n
    print(f"{n} embeddings: {near_dupes} near-duplicate pairs", flush=True)
""")


def fsdp2_fully_shard():
    # FSDP2 (torch.distributed.fsdp.fully_shard) on a single-process NCCL group, started with
    # plain python: the warm-up steps fit, the forward of a 131072-row batch (4 GiB hidden
    # activation) does not fit in what is left.
    run_user_script("train_fsdp2", """import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import fully_shard

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29563")
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")


class Block(nn.Module):
    def __init__(self, d=2048, hidden=8192):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


torch.cuda.set_device(0)
dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
rank = dist.get_rank()
model = nn.Sequential(*[Block() for _ in range(4)]).cuda()
for block in model:
    fully_shard(block)
fully_shard(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
free, _ = torch.cuda.mem_get_info()
activation_offload_pool = torch.empty(free - 5 * (1 << 30), dtype=torch.uint8, device="cuda")

for step, rows in enumerate([2048, 4096, 131072]):
    x = torch.randn(rows, 2048, device="cuda")
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if rank == 0:
        print(f"step {step} ({rows} rows): loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
""")


def memory_summary_reraise():
    # A training script's except-handler prints torch.cuda.memory_summary() (abbreviated) to
    # stderr and re-raises: the allocator's table comes before the traceback.
    run_user_script("train_encoder", """import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096,
                                   batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=6).cuda()
head = nn.Linear(1024, 1024).cuda()
optimizer = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-4)
free, _ = torch.cuda.mem_get_info()
feature_store = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")

step = 0
try:
    for step, seq in enumerate([512, 1024, 16384]):
        x = torch.randn(8, seq, 1024, device="cuda")
        loss = F.mse_loss(head(model(x)), x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step} (seq {seq}): loss {loss.item():.4f}", flush=True)
except torch.OutOfMemoryError:
    print(f"OOM at step {step}; allocator state:", file=sys.stderr)
    print(torch.cuda.memory_summary(device=0, abbreviated=True), file=sys.stderr)
    raise
""")


def nvidia_smi_in_handler():
    # A batch image-inference script whose except-handler runs nvidia-smi when the error says
    # "out of memory", then re-raises: the nvidia-smi table comes before the traceback.
    run_user_script("batch_infer", """import subprocess

import torch
import torch.nn as nn

model = nn.Sequential(
    nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
    nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 1000),
).cuda().eval()
free, _ = torch.cuda.mem_get_info()
results_buffer = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")

try:
    with torch.no_grad():
        for batch in [32, 128, 4096]:
            images = torch.rand(batch, 3, 224, 224, device="cuda")
            top1 = model(images).argmax(dim=1)
            print(f"batch {batch}: {top1.shape[0]} predictions", flush=True)
except RuntimeError as e:
    if "out of memory" in str(e):
        print("=== GPU state at failure ===", flush=True)
        subprocess.run(["nvidia-smi"])
    raise
""")


def logging_tqdm_backward():
    # A two-tower recommender logged with `logging` (timestamps) and a tqdm bar: the item table
    # (4M x 256 fp32, 3.8 GiB) is a dense nn.Embedding, so backward needs a dense 3.8 GiB
    # gradient; the forward fits in the ~3 GiB left, the backward does not.
    run_user_script("train_recsys", """import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)
logger = logging.getLogger("train_recsys")


class TwoTower(nn.Module):
    def __init__(self, n_users=100_000, n_items=4_000_000, d=256):
        super().__init__()
        self.users = nn.Embedding(n_users, d)
        self.items = nn.Embedding(n_items, d)

    def forward(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1)


model = TwoTower().cuda()
logger.info("model: %.1fM parameters", sum(p.numel() for p in model.parameters()) / 1e6)
free, _ = torch.cuda.mem_get_info()
interaction_cache = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
logger.info("interaction cache: %.1f GiB on the card", interaction_cache.numel() / 2**30)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

logger.info("***** Running training *****")
logger.info("  Num steps = %d, batch size = %d", 1000, 8192)
for step in tqdm(range(1000), desc="train"):
    u = torch.randint(0, 100_000, (8192,), device="cuda")
    i = torch.randint(0, 4_000_000, (8192,), device="cuda")
    clicked = torch.randint(0, 2, (8192,), device="cuda").float()
    loss = F.binary_cross_entropy_with_logits(model(u, i), clicked)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 100 == 0:
        logger.info("step %d: loss %.4f", step, loss.item())
""")


def preload_dataset_gpu():
    # A tabular script copies its whole feature matrix (1.5M x 1024 float32, 5.7 GiB) to the card
    # before training, where a frozen teacher already takes all but ~4 GiB.
    run_user_script("train_tabular", """import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
features = rng.random((1_500_000, 1024), dtype=np.float32)
labels = rng.integers(0, 2, 1_500_000)
print(f"loaded features {features.shape} ({features.nbytes / 2**30:.2f} GiB)", flush=True)

student = nn.Sequential(nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 2)).cuda()
free, _ = torch.cuda.mem_get_info()
teacher_weights = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")

X = torch.tensor(features, device="cuda")
y = torch.tensor(labels, device="cuda")
optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
for epoch in range(10):
    perm = torch.randperm(X.shape[0], device="cuda")
    for start in range(0, X.shape[0], 4096):
        idx = perm[start:start + 4096]
        loss = nn.functional.cross_entropy(student(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    print(f"epoch {epoch}: loss {loss.item():.4f}", flush=True)
""")


def gradient_penalty_double_backward():
    # WGAN-GP: the critic's gradient penalty takes torch.autograd.grad(..., create_graph=True);
    # the small batches pass; at 65536 the three critic forwards (about 15 GiB kept, a 17 GiB
    # peak) fit in the ~18 GiB left, the penalty's graph-building gradient (2 GiB buffers) does
    # not.
    run_user_script("train_wgan_gp", """import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(4096, 8192), nn.ReLU(), nn.Linear(8192, 8192), nn.ReLU(),
                       nn.Linear(8192, 1)).cuda()
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.shape[0], 1, device=real.device)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interp)
    grads = torch.autograd.grad(outputs=scores, inputs=interp,
                                grad_outputs=torch.ones_like(scores), create_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def critic_step(batch):
    real = torch.randn(batch, 4096, device="cuda")
    fake = torch.randn(batch, 4096, device="cuda")
    loss = critic(fake).mean() - critic(real).mean() + 10 * gradient_penalty(critic, real, fake)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


print(f"warm-up critic loss {critic_step(256):.4f}", flush=True)
free, _ = torch.cuda.mem_get_info()
generator_and_samples = torch.empty(free - 18 * (1 << 30), dtype=torch.uint8, device="cuda")
for it, batch in enumerate([2048, 8192, 65536]):
    print(f"iter {it} (batch {batch}): critic loss {critic_step(batch):.4f}", flush=True)
""")


ADAPTER = os.path.join(WORK, "lora-r256")


def _make_adapter():
    """A LoRA adapter (r=256 on every projection of the checkpoint) saved from the CPU, for
    peft_load_adapter; its output is not part of the text."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    if os.path.exists(os.path.join(ADAPTER, "adapter_config.json")):
        return
    base = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16)
    lora = LoraConfig(r=256, lora_alpha=512, task_type="CAUSAL_LM",
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                      "up_proj", "down_proj"])
    get_peft_model(base, lora).save_pretrained(ADAPTER)


def peft_load_adapter():
    # PeftModel.from_pretrained loads a rank-256 LoRA adapter (~80M parameters, fp32 by PEFT's
    # default adapter dtype) onto the bf16 model already on the card, with ~128 MiB free.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "adapter-prep.log"), "w") as log:
        rc = subprocess.call([sys.executable, os.path.abspath(__file__), "_adapter"],
                             stdout=log, stderr=subprocess.STDOUT)
    if rc != 0:
        sys.exit(f"preparing the adapter failed (exit {rc}); see {WORK}/adapter-prep.log")
    run_user_script("chat_with_adapter", """import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM

base = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
free, _ = torch.cuda.mem_get_info()
kv_cache_pool = torch.empty(free - 128 * (1 << 20), dtype=torch.uint8, device="cuda")
model = PeftModel.from_pretrained(base, "@ADAPTER@")
model.eval()
prompt = torch.randint(3, 32000, (1, 16), device="cuda")
print(model.generate(input_ids=prompt, max_new_tokens=8, pad_token_id=0))
""".replace("@CKPT@", CKPT).replace("@ADAPTER@", ADAPTER))


def mha_need_weights():
    # nn.MultiheadAttention called with its default need_weights=True (the maps are kept for a
    # visualisation): the fast path is off and the (4*16, L, L) fp32 weights are materialized;
    # at 8192 tokens (16 GiB) they do not fit in the ~6 GiB left.
    run_user_script("attention_maps", """import torch
import torch.nn as nn

torch.manual_seed(0)
mha = nn.MultiheadAttention(embed_dim=1024, num_heads=16, batch_first=True).cuda().eval()
free, _ = torch.cuda.mem_get_info()
token_cache = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")

maps = []
with torch.no_grad():
    for seq in [512, 1024, 8192]:
        x = torch.randn(4, seq, 1024, device="cuda")
        out, weights = mha(x, x, x)
        maps.append(weights[:, :64, :64].cpu())
        print(f"seq {seq}: out {tuple(out.shape)}, maps {tuple(weights.shape)}", flush=True)
""")


# --------------------------------------------------------------------------- look-alikes


def nccl_duplicate_gpu():
    # Not a GPU OOM: `torchrun --nproc_per_node=2` on a one-GPU machine with the script's
    # `LOCAL_RANK % device_count()`: both ranks land on cuda:0 and NCCL refuses the communicator
    # at the first all_reduce (duplicate GPU); torchrun's ChildFailedError summary follows.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "sync_stats.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("""import os

import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
device = torch.device("cuda", local_rank % torch.cuda.device_count())
torch.cuda.set_device(device)
dist.init_process_group("nccl")
print(f"rank {dist.get_rank()}/{dist.get_world_size()} on {device}", flush=True)
stats = torch.ones(1024, device=device) * (dist.get_rank() + 1)
dist.all_reduce(stats)
print(f"rank {dist.get_rank()}: reduced {stats[0].item()}", flush=True)
dist.destroy_process_group()
""")
    sys.stdout.flush()
    rc = subprocess.call(["torchrun", "--nproc_per_node=2", "--master_port=29565", path],
                         cwd=WORK)
    sys.exit(rc)


def policy_nan_categorical():
    # Not a GPU OOM: a policy-gradient update normalizes advantages by their std, which is 0 while
    # every reward is 0: NaN loss, NaN weights after Adam's step, and the next rollout's
    # torch.distributions.Categorical rejects the NaN logits (ValueError).
    run_user_script("train_policy", """import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(64, 256), nn.Tanh(), nn.Linear(256, 8)).cuda()
optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)


def rollout(n=2048):
    obs = torch.randn(n, 64, device="cuda")
    pi = Categorical(logits=policy(obs))
    actions = pi.sample()
    rewards = torch.zeros(n, device="cuda")  # sparse reward: no episode reached the goal yet
    return pi.log_prob(actions), rewards


for update in range(100):
    log_probs, returns = rollout()
    advantages = (returns - returns.mean()) / returns.std()
    loss = -(log_probs * advantages).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"update {update}: loss {loss.item():.4f}", flush=True)
""")


def dataloader_worker_cgroup_killed():
    # Not a GPU OOM: the job runs in a memory cgroup of 6 GiB (as a container or a Slurm job with
    # a memory limit); one volume's corrupt header makes a DataLoader worker fill an 8 GiB array,
    # the kernel's OOM killer kills the worker, and the main process reports it. The cgroup is
    # made here (cgroup v2) and removed afterwards; without one the scenario cannot run.
    import subprocess

    group, enter_group = memory_cgroup(
        "dataloader_worker_cgroup_killed", f"oomdoc-corpus-{os.getpid()}", 6 * GIB)

    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "train_volumes.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("""import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Volumes(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        depth, height, width = (32, 256, 256) if i != 37 else (2048, 2048, 2048)  # header
        vol = np.full((depth, height, width), 7, dtype=np.uint8)  # decode into the buffer
        return torch.from_numpy(vol[:32, :256, :256].astype(np.float32) / 255)[None]


model = nn.Conv3d(1, 8, 3, padding=1).cuda()
loader = DataLoader(Volumes(), batch_size=4, num_workers=2)
for step, vols in enumerate(loader):
    out = model(vols.cuda(non_blocking=True))
    print(f"step {step}: {tuple(out.shape)}", flush=True)
""")
    sys.stdout.flush()
    try:
        rc = subprocess.call([sys.executable, path], cwd=WORK, preexec_fn=enter_group)
    finally:
        time.sleep(0.5)
        try:
            os.rmdir(group)
        except OSError:
            pass
    sys.exit(rc)


# --------------------------------------------------------------------------- session 13 (blind):
# Lightning outputs kept with their graphs and the batch-size finder before a length curriculum,
# a hand-written DPO step (policy + reference on one card), eager attention over packed 4096-token
# blocks, a CLIP-style loss under accelerate, a LoRA of rank 1024 (Adam states), cuSOLVER and
# cuDNN handles made after another job took the card, JAX errors logged as one line and a deep
# jit without rematerialization, an allocator config already tuned, per-session KV caches kept
# by a chat server, embeddings gathered on the card, a full-batch GNN, a torch.multiprocessing
# worker, OOMs skipped then given up on, a 3D segmentation net under cudnn.benchmark, a manual
# attention with empty_cache per batch, a running loss holding graphs, SDPA's math backend, an
# EMA deepcopy, a perplexity loss's fp32 upcast, a runner printing only stderr's tail, and
# look-alikes (a missing device, mixed devices, disk offload without a folder, bitsandbytes
# absent, a shape error after memory_summary)


def s13_lightning_outputs_leak():
    # A LightningModule keeps each step's features, logits and loss (not detached, not moved to
    # the CPU) for an epoch-end metric and prototype update: ~72 MiB a step under 16-mixed, until
    # the ~4 GiB left run out mid-epoch (progress bar, AMP lines).
    run_user_script("train_classifier", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class FeatureBatches(Dataset):
    \"\"\"Precomputed backbone features, one shard (4096 rows) per item.\"\"\"

    def __len__(self):
        return 200

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(4096, 4096, generator=g), torch.randint(0, 1000, (4096,), generator=g)


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4096, 8192), nn.ReLU())
        self.head = nn.Linear(8192, 1000)
        self.step_outputs = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        features = self.backbone(x)
        logits = self.head(features)
        loss = F.cross_entropy(logits, y)
        self.step_outputs.append({"loss": loss, "logits": logits, "features": features, "y": y})
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        logits = torch.cat([o["logits"] for o in self.step_outputs])
        y = torch.cat([o["y"] for o in self.step_outputs])
        features = torch.cat([o["features"] for o in self.step_outputs])
        self.prototypes = torch.stack([features[y == c].mean(0) for c in range(1000)])
        self.log("train_acc", (logits.argmax(-1) == y).float().mean())
        self.step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.9)


if __name__ == "__main__":
    free, _ = torch.cuda.mem_get_info()
    feature_cache = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
    loader = DataLoader(FeatureBatches(), batch_size=None, shuffle=True)
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="16-mixed", max_epochs=3,
                        logger=False, enable_checkpointing=False)
    trainer.fit(Classifier(), loader)
""")


def s13_lightning_batch_finder_curriculum():
    # Tuner.scale_batch_size (power mode) finds the largest batch at the first epoch's 256 tokens;
    # the model's length curriculum quadruples the sequence at epoch 1 and that batch no longer
    # fits. The finder's own lines ("Batch size N succeeded, trying batch size 2N") come first.
    run_user_script("train_curriculum", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.tuner import Tuner
from torch.utils.data import DataLoader, Dataset

VOCAB = 32000


class Tokens(Dataset):
    def __len__(self):
        return 2048

    def __getitem__(self, i):
        return torch.randint(0, VOCAB, (1025,))


class CurriculumLM(L.LightningModule):
    def __init__(self, batch_size=2):
        super().__init__()
        self.batch_size = batch_size
        self.embed = nn.Embedding(VOCAB, 1024)
        layer = nn.TransformerEncoderLayer(1024, 16, 4096, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=4)
        self.head = nn.Linear(1024, VOCAB)

    def seq_len(self):
        return 256 * 4 ** self.current_epoch  # 256, 1024 tokens

    def training_step(self, batch, batch_idx):
        seq = self.seq_len()
        tokens = batch[:, : seq + 1]
        mask = nn.Transformer.generate_square_subsequent_mask(seq, device=self.device)
        h = self.encoder(self.embed(tokens[:, :-1]), mask=mask, is_causal=True)
        loss = F.cross_entropy(self.head(h).flatten(0, 1), tokens[:, 1:].flatten())
        self.log("loss", loss, prog_bar=True)
        self.log("seq", float(seq), prog_bar=True)
        return loss

    def train_dataloader(self):
        return DataLoader(Tokens(), batch_size=self.batch_size, shuffle=True, drop_last=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)


if __name__ == "__main__":
    free, _ = torch.cuda.mem_get_info()
    teacher_logits_cache = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device="cuda")
    model = CurriculumLM()
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=3, logger=False,
                        enable_checkpointing=False)
    tuner = Tuner(trainer)
    tuner.scale_batch_size(model, mode="power", steps_per_trial=3, init_val=2)
    print(f"training with batch size {model.batch_size}", flush=True)
    trainer.fit(model)
""")


def s13_dpo_reference_forward():
    # A hand-written DPO loop: policy and frozen reference copies of the same 550M model on one
    # card, chosen/rejected pairs; the short warm-up pairs pass, the first 2048-token pair does
    # not fit in what the two models and AdamW leave.
    run_user_script("dpo_train", """import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM

BETA = 0.1
policy = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
reference = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16,
                                                 device_map="cuda")
reference.eval().requires_grad_(False)
optimizer = torch.optim.AdamW(policy.parameters(), lr=5e-7)
free, _ = torch.cuda.mem_get_info()
rollout_buffer = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")


def sequence_logps(model, ids):
    logits = model(input_ids=ids).logits[:, :-1].float()
    return torch.gather(logits.log_softmax(-1), 2, ids[:, 1:, None]).squeeze(-1).sum(-1)


for step, seq in enumerate([256, 256, 256, 2048]):
    chosen = torch.randint(3, 32000, (4, seq), device="cuda")
    rejected = torch.randint(3, 32000, (4, seq), device="cuda")
    pair = torch.cat([chosen, rejected])
    with torch.no_grad():
        ref_chosen, ref_rejected = sequence_logps(reference, pair).chunk(2)
    pol_chosen, pol_rejected = sequence_logps(policy, pair).chunk(2)
    margin = BETA * ((pol_chosen - ref_chosen) - (pol_rejected - ref_rejected))
    loss = -F.logsigmoid(margin).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step} (pairs of {seq} tokens): loss {loss.item():.4f} "
          f"reward acc {(margin > 0).float().mean().item():.2f}", flush=True)
""".replace("@CKPT@", CKPT))


def s13_eager_attention_packing():
    # An SFT loop written by hand that packs documents into 4096-token blocks and loads the model
    # with attn_implementation="eager" (for a custom mask it once needed): the 16 x 4096 x 4096
    # attention probabilities of every layer are kept for backward and do not fit in ~12 GiB.
    run_user_script("sft_packed", """import random

import torch
from tqdm import tqdm
from transformers import AutoModelForCausalLM

BLOCK = 4096
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda",
                                             attn_implementation="eager")
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
free, _ = torch.cuda.mem_get_info()
eval_cache = torch.empty(free - 12 * (1 << 30), dtype=torch.uint8, device="cuda")


def packed_blocks(n_blocks, batch):
    rng = random.Random(0)
    buffer = []
    for _ in range(n_blocks * batch):
        while len(buffer) < BLOCK:
            doc = [rng.randrange(3, 32000) for _ in range(rng.randrange(64, 1500))]
            buffer.extend(doc + [2])
        yield buffer[:BLOCK]
        buffer = buffer[BLOCK:]


blocks = list(packed_blocks(8, 4))
bar = tqdm(range(0, len(blocks), 4), desc="sft", unit="step")
for i in bar:
    ids = torch.tensor(blocks[i:i + 4], device="cuda")
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    bar.set_postfix(loss=f"{loss.item():.3f}")
""".replace("@CKPT@", CKPT))


def s13_accelerate_clip_backward():
    # A CLIP-style contrastive loss trained with accelerate (bf16), logged through
    # accelerate.logging with timestamps: the symmetric cross-entropy over a 32768 x 32768
    # similarity matrix fits forward in fp32 but its backward does not.
    run_user_script("train_clip_head", """import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.logging import get_logger

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)
logger = get_logger(__name__)


class Tower(nn.Module):
    def __init__(self, d_in):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(d_in, 4096), nn.GELU(), nn.Linear(4096, 512))

    def forward(self, x):
        return F.normalize(self.proj(x), dim=-1)


accelerator = Accelerator(mixed_precision="bf16")
image_tower, text_tower = Tower(1024), Tower(768)
logit_scale = nn.Parameter(torch.tensor(2.659, device=accelerator.device))
params = list(image_tower.parameters()) + list(text_tower.parameters()) + [logit_scale]
optimizer = torch.optim.AdamW(params, lr=1e-4)
image_tower, text_tower, optimizer = accelerator.prepare(image_tower, text_tower, optimizer)
free, _ = torch.cuda.mem_get_info()
feature_bank = torch.empty(free - 20 * (1 << 30), dtype=torch.uint8, device=accelerator.device)
logger.info("feature bank on %s, global batch 32768", accelerator.device)

for step in range(10):
    images = torch.randn(32768, 1024, device=accelerator.device)
    texts = torch.randn(32768, 768, device=accelerator.device)
    logits = image_tower(images) @ text_tower(texts).t() * logit_scale.exp()
    labels = torch.arange(logits.shape[0], device=logits.device)
    loss_i = F.cross_entropy(logits.float(), labels)
    loss_t = F.cross_entropy(logits.t().float(), labels)
    loss = (loss_i + loss_t) / 2
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    logger.info("step %d: loss %.4f", step, loss.item())
""")


def s13_peft_high_rank_adam():
    # LoRA of rank 1024 on every linear layer of the 550M model: ~300M fp32 adapter parameters;
    # forward and backward fit, AdamW's first step (two fp32 states per parameter) does not.
    run_user_script("lora_high_rank", """import torch
from peft import LoraConfig, get_peft_model
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM

base = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
config = LoraConfig(r=1024, lora_alpha=2048, lora_dropout=0.0, task_type="CAUSAL_LM",
                    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                    "up_proj", "down_proj"])
model = get_peft_model(base, config)
model.print_trainable_parameters()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
free, _ = torch.cuda.mem_get_info()
dataset_on_gpu = torch.empty(free - 3584 * (1 << 20), dtype=torch.uint8, device="cuda")

for step in tqdm(range(100), desc="lora"):
    ids = torch.randint(3, 32000, (2, 256), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
""".replace("@CKPT@", CKPT))


def s13_cusolver_eigh_shared():
    # PCA whitening: the feature covariance is computed on the card, then another job takes the
    # rest of it before the first torch.linalg.eigh, whose cuSOLVER handle and workspace are
    # this process's first: a CUSOLVER status or an OOM, as the driver answers.
    import torch

    torch.manual_seed(0)
    feats = torch.randn(262144, 8192, device="cuda")
    cov = feats.T @ feats / feats.shape[0]
    scratch = torch.empty(256 * MIB, dtype=torch.uint8, device="cuda")
    del scratch  # freed into this process's cache
    print(f"covariance {tuple(cov.shape)} from {feats.shape[0]} features", flush=True)
    _another_job_takes_the_card(0)
    eigvals, eigvecs = torch.linalg.eigh(cov)
    whitening = eigvecs / eigvals.clamp_min(1e-6).sqrt()
    print("whitening ready", tuple(whitening.shape))


def s13_cudnn_handle_full_card():
    # A segmentation service preprocesses its first image on the card, then another job takes
    # the rest of it before the model's first convolution (cudnn.benchmark on): this process's
    # first cuDNN handle and the conv outputs past the cached 1 GiB cannot be had.
    import torch
    import torch.nn as nn

    torch.backends.cudnn.benchmark = True
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 2, 1),
    ).cuda().eval()
    image = torch.rand(1, 3, 2048, 2048, device="cuda")
    staging = torch.empty(GIB, dtype=torch.uint8, device="cuda")
    del staging  # the resize buffer, freed into this process's cache
    print(f"model ready, first image {tuple(image.shape)}", flush=True)
    _another_job_takes_the_card(0)
    with torch.no_grad():
        mask = model(image).argmax(1)
    print(mask.shape)


def s13_jax_logged_one_line():
    # A JAX scoring job catches each batch's failure and logs str(e) on one line, then exits 1:
    # a jitted pairwise-distance kernel over a growing batch runs past a 5% memory fraction.
    run_user_script("score_pairs", """import logging
import sys

import jax
import jax.numpy as jnp

logging.basicConfig(format="[%(asctime)s] %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("score_pairs")


@jax.jit
def nearest(x):
    d = jnp.sum(x * x, 1)[:, None] + jnp.sum(x * x, 1)[None, :] - 2 * x @ x.T
    return jnp.argsort(d, axis=1)[:, 1:11]


key = jax.random.PRNGKey(0)
for n in [4096, 16384, 65536]:
    try:
        x = jax.random.normal(key, (n, 256))
        idx = nearest(x).block_until_ready()
        log.info("batch of %d: neighbours %s", n, idx.shape)
    except Exception as e:
        log.error("batch of %d failed: %s: %s", n, type(e).__name__, e)
        sys.exit(1)
""")


def s13_jax_no_remat_layers():
    # A 24-layer residual MLP trained with jax.value_and_grad under jit and no jax.checkpoint:
    # all layers' activations of a 16384-row batch are kept for the backward pass (~12 GiB)
    # beyond a 5% memory fraction.
    run_user_script("train_deep_mlp", """import time

import jax
import jax.numpy as jnp

D, LAYERS = 4096, 24


def init(key):
    keys = jax.random.split(key, LAYERS)
    return [jax.random.normal(k, (D, D), jnp.float32) * D ** -0.5 for k in keys]


def loss_fn(params, x):
    h = x
    for w in params:
        h = h + jax.nn.gelu(h @ w)
    return jnp.mean(h ** 2)


@jax.jit
def train_step(params, x):
    loss, grads = jax.value_and_grad(loss_fn)(params, x)
    return [w - 1e-3 * g for w, g in zip(params, grads)], loss


params = init(jax.random.PRNGKey(0))
print("devices:", jax.devices(), flush=True)
for step, batch in enumerate([256, 256, 16384]):
    t0 = time.time()
    x = jax.random.normal(jax.random.PRNGKey(step), (batch, D))
    params, loss = train_step(params, x)
    print(f"step {step} batch {batch}: loss {float(loss):.4f} ({time.time() - t0:.2f} s)",
          flush=True)
""")


def s13_alloc_conf_tuned():
    # The user already followed the message's advice (max_split_size_mb, a GC threshold, set at
    # the top of the script) and still runs out: bucketed batches of growing length in a loop
    # with timestamped logging; the longest bucket does not fit in the ~6 GiB left.
    run_user_script("train_buckets", """import os

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF",
                      "max_split_size_mb:128,garbage_collection_threshold:0.8")

import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s [%(name)s] %(message)s", level=logging.INFO)
log = logging.getLogger("train_buckets")
log.info("PYTORCH_CUDA_ALLOC_CONF=%s", os.environ["PYTORCH_CUDA_ALLOC_CONF"])

model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 4096), nn.GELU(),
                      nn.Linear(4096, 1024)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
free, _ = torch.cuda.mem_get_info()
replay = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")

buckets = [(64, 128), (32, 512), (64, 256), (16, 2048), (32, 4096), (64, 8192)]
for step, (batch, length) in enumerate(buckets):
    x = torch.randn(batch, length, 1024, device="cuda")
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    log.info("step %d bucket %dx%d loss %.4f reserved %.2f GiB", step, batch, length, loss.item(),
             torch.cuda.memory_reserved() / 2**30)
""")


def s13_kv_cache_sessions():
    # A small chat server keeps each session's KV cache (past_key_values) on the card between
    # turns and never evicts: each 2048-token session holds ~130 MiB, and a new session's
    # prefill fails once ~4 GiB are used up.
    run_user_script("chat_server", """import logging

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("chat_server")

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
free, _ = torch.cuda.mem_get_info()
other_tenants = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
sessions = {}


@torch.no_grad()
def chat_turn(session_id, prompt_ids, max_new_tokens=16):
    past = sessions.get(session_id)
    out = model(input_ids=prompt_ids, past_key_values=past, use_cache=True)
    past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
    reply = [token]
    for _ in range(max_new_tokens - 1):
        out = model(input_ids=token, past_key_values=past, use_cache=True)
        past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
        reply.append(token)
    sessions[session_id] = past
    return torch.cat(reply, 1)


for n in range(200):
    prompt = torch.randint(3, 32000, (1, 2048), device="cuda")
    reply = chat_turn(f"user-{n:04d}", prompt)
    log.info("session user-%04d: replied %d tokens; %d sessions, %.2f GiB allocated", n,
             reply.shape[1], len(sessions), torch.cuda.memory_allocated() / 2**30)
""".replace("@CKPT@", CKPT))


def s13_embed_corpus_cat():
    # An embedding job keeps every batch's embeddings on the card in a list (no .cpu()) and
    # concatenates them at the end: the loop's tqdm bar finishes, torch.cat needs as much again.
    run_user_script("embed_all", """import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

encoder = nn.Sequential(nn.Linear(768, 4096), nn.GELU(), nn.Linear(4096, 4096)).cuda().eval()
free, _ = torch.cuda.mem_get_info()
index_shards = torch.empty(free - 20 * (1 << 30), dtype=torch.uint8, device="cuda")

all_embeddings = []
with torch.no_grad():
    for i in tqdm(range(200), desc="Batches", unit="batch"):
        x = torch.randn(4096, 768, device="cuda")
        all_embeddings.append(F.normalize(encoder(x), dim=-1))
embeddings = torch.cat(all_embeddings)
torch.save(embeddings.cpu(), "embeddings.pt")
print("saved", tuple(embeddings.shape))
""")


def s13_gnn_full_batch_edges():
    # Full-batch training of a two-layer message-passing GNN written with index_add_ over a graph
    # of 2M nodes and 40M edges: the first layer's 64-wide messages (10 GiB) fit, the second
    # layer's 256-wide messages (40 GiB) do not.
    run_user_script("train_gnn", """import torch
import torch.nn as nn
import torch.nn.functional as F

N_NODES, N_EDGES = 2_000_000, 40_000_000


class MessagePassing(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, edge_index):
        src, dst = edge_index
        messages = x[src]  # one row per edge
        agg = torch.zeros_like(x).index_add_(0, dst, messages)
        return self.lin(agg)


class GNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = MessagePassing(64, 256)
        self.conv2 = MessagePassing(256, 16)

    def forward(self, x, edge_index):
        return self.conv2(F.relu(self.conv1(x, edge_index)), edge_index)


torch.manual_seed(0)
x = torch.randn(N_NODES, 64, device="cuda")
edge_index = torch.randint(0, N_NODES, (2, N_EDGES), device="cuda")
y = torch.randint(0, 16, (N_NODES,), device="cuda")
model = GNN().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
free, _ = torch.cuda.mem_get_info()
neighbor_cache = torch.empty(free - 24 * (1 << 30), dtype=torch.uint8, device="cuda")
print(f"graph: {N_NODES} nodes, {N_EDGES} edges", flush=True)
for epoch in range(100):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x, edge_index), y)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch:03d} loss {loss.item():.4f}", flush=True)
""")


def s13_mp_spawn_worker():
    # torch.multiprocessing.spawn with one worker: the worker's OOM reaches the parent as
    # ProcessRaisedException, whose message carries the worker's whole traceback.
    run_user_script("spawn_train", """import torch
import torch.multiprocessing as mp
import torch.nn as nn


def worker(rank, world_size):
    torch.cuda.set_device(rank)
    model = nn.Sequential(nn.Linear(8192, 8192), nn.ReLU(), nn.Linear(8192, 8192)).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    free, _ = torch.cuda.mem_get_info()
    shard = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
    for step in range(10):
        x = torch.randn(65536, 8192, device="cuda")
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"[rank {rank}] step {step} loss {loss.item():.4f}", flush=True)


if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    print(f"spawning {world_size} worker(s)", flush=True)
    mp.spawn(worker, args=(world_size,), nprocs=world_size, join=True)
""")


def s13_skip_oom_batches():
    # fairseq-style recovery: an OOM batch is logged as a warning and skipped (gradients dropped,
    # cache emptied); after 3 such batches the loop gives up with its own error raised inside
    # the handler ("During handling of the above exception, another exception occurred").
    run_user_script("train_skip_oom", """import logging
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
                    level=logging.INFO)
log = logging.getLogger("trainer")

model = nn.Sequential(nn.Linear(2048, 8192), nn.GELU(), nn.Linear(8192, 2048)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
free, _ = torch.cuda.mem_get_info()
encoder_states = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")

rng = random.Random(0)
max_tokens = [8192] * 20 + [262144] * 10
rng.shuffle(max_tokens)
ooms = 0
for step, tokens in enumerate(max_tokens):
    try:
        x = torch.randn(tokens, 2048, device="cuda")
        loss = F.mse_loss(model(x), x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        log.info("step %d: %d tokens, loss %.4f", step, tokens, loss.item())
    except torch.OutOfMemoryError as e:
        ooms += 1
        log.warning("attempting to recover from OOM in forward/backward pass (step %d, %d tokens)",
                    step, tokens)
        optimizer.zero_grad(set_to_none=True)
        x = loss = None
        torch.cuda.empty_cache()
        if ooms >= 3:
            raise RuntimeError(f"{ooms} OOMs in {step + 1} steps; lower --max-tokens")
""")


def s13_conv3d_benchmark_volume():
    # A 3D segmentation net (fp16 autocast, cudnn.benchmark) validated on whole CT volumes
    # instead of the 128^3 training patches: at 512 x 512 x 256 each 32-channel feature map is
    # 4 GiB in fp16 and the ~10 GiB left run out in the first blocks.
    run_user_script("validate_volumes", """import time

import torch
import torch.nn as nn

torch.backends.cudnn.benchmark = True


def block(c_in, c_out):
    return nn.Sequential(nn.Conv3d(c_in, c_out, 3, padding=1), nn.InstanceNorm3d(c_out),
                         nn.LeakyReLU(inplace=True))


model = nn.Sequential(block(1, 32), block(32, 32), block(32, 64), nn.Conv3d(64, 3, 1)).cuda()
model.eval()
free, _ = torch.cuda.mem_get_info()
cached_patches = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device="cuda")

volumes = [("patch", (128, 128, 128)), ("patch", (128, 128, 128)), ("case_0007", (256, 512, 512))]
with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
    for name, shape in volumes:
        t0 = time.time()
        vol = torch.randn(1, 1, *shape, device="cuda")
        seg = model(vol).argmax(1)
        print(f"{name} {shape}: {seg.float().mean().item():.3f} in {time.time() - t0:.1f} s",
              flush=True)
""")


def s13_manual_attention_empty_cache():
    # A document-tagging service with a hand-written attention (q @ k^T, softmax) calls
    # torch.cuda.empty_cache() after every batch and logs memory; one 32768-token document's
    # 16 x 32768 x 32768 fp16 scores (32 GiB) do not fit in the ~16 GiB left.
    run_user_script("tag_documents", """import logging
import math

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s [%(levelname)s] %(message)s", datefmt="%H:%M:%S",
                    level=logging.INFO)
log = logging.getLogger(__name__)


class SelfAttention(nn.Module):
    def __init__(self, d=1024, heads=16):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        return self.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))


tagger = nn.Sequential(SelfAttention(), nn.Linear(1024, 9)).cuda().half().eval()
free, _ = torch.cuda.mem_get_info()
other_models = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")

for doc_id, length in enumerate([512, 2048, 4096, 32768]):
    with torch.no_grad():
        x = torch.randn(1, length, 1024, device="cuda", dtype=torch.float16)
        tags = tagger(x).argmax(-1)
    torch.cuda.empty_cache()
    log.info("doc %d (%d tokens): %d tags, allocated %.1f GiB, reserved %.1f GiB", doc_id, length,
             tags.numel(), torch.cuda.memory_allocated() / 2**30,
             torch.cuda.memory_reserved() / 2**30)
""")


# look-alikes (session 13)


def s13_invalid_device_ordinal():
    # Not a GPU OOM: a config written for a 2-GPU box puts the model on cuda:1; this machine has
    # one GPU: "CUDA error: invalid device ordinal".
    run_user_script("serve_ranker", """import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda:1", help="GPU for the ranker (cuda:0 is the LLM)")
args = parser.parse_args()

print(f"{torch.cuda.device_count()} GPU(s) visible; ranker on {args.device}", flush=True)
ranker = nn.Sequential(nn.Linear(768, 768), nn.Tanh(), nn.Linear(768, 1))
ranker.to(args.device)
scores = ranker(torch.randn(32, 768, device=args.device))
print(scores.squeeze(-1).tolist())
""")


def s13_device_mismatch():
    # Not a GPU OOM: the model is on the card but its forward builds the position ids on the CPU:
    # "Expected all tensors to be on the same device".
    run_user_script("train_tagger", """import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab=30000, d=512, max_len=2048, tags=17):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.head = nn.Linear(d, tags)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1])  # on the CPU
        return self.head(self.tok(ids) + self.pos(positions))


model = Tagger().cuda()
ids = torch.randint(0, 30000, (8, 128), device="cuda")
print(model(ids).shape)
""")


def _bin_checkpoint():
    """A copy of the random-weight checkpoint as an older pytorch_model.bin (no safetensors):
    transformers needs an offload_folder for disk offload only when the weights are not
    safetensors (modeling_utils, the disk-offload check)."""
    import shutil

    import torch
    from safetensors.torch import load_file

    path = os.path.join(WORK, "llama-550m-bin")
    if not os.path.exists(os.path.join(path, "pytorch_model.bin")):
        os.makedirs(path, exist_ok=True)
        shutil.copy(os.path.join(CKPT, "config.json"), path)
        state = {}
        for name in sorted(os.listdir(CKPT)):
            if name.endswith(".safetensors"):
                state.update(load_file(os.path.join(CKPT, name)))
        torch.save(state, os.path.join(path, "pytorch_model.bin"))
    return path


def s13_hf_offload_folder():
    # Not a GPU OOM: an older .bin checkpoint loaded with device_map="auto" and a max_memory too
    # small for the GPU and the CPU: the rest goes to disk and from_pretrained refuses without
    # an offload_folder (a ValueError).
    run_user_script("load_low_memory", """import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained(
    "@CKPT@",
    dtype=torch.bfloat16,
    device_map="auto",
    max_memory={0: "300MiB", "cpu": "400MiB"},
)
print(model.hf_device_map)
""".replace("@CKPT@", _bin_checkpoint()))


def s13_bnb_missing():
    # Not a GPU OOM (on a machine without bitsandbytes): 4-bit loading, the usual answer to an
    # OOM, fails because the quantization library is not installed (an ImportError). Where
    # bitsandbytes is installed this loads and the scenario reports no error.
    run_user_script("load_4bit", """import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16,
                           bnb_4bit_quant_type="nf4")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", quantization_config=quant,
                                             device_map={"": 0})
print(model.get_memory_footprint() / 2**30, "GiB")
""".replace("@CKPT@", CKPT))


def s13_shape_error_after_summary():
    # Not a GPU OOM: a training script prints torch.cuda.memory_summary() at start-up (its table
    # has "CUDA OOMs: 0" and "cudaMalloc retries: 0" rows) and then fails on a shape mismatch
    # between a 1024-wide encoder output and a 768-wide head.
    run_user_script("finetune_head", """import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 1024)).cuda()
head = nn.Linear(768, 10).cuda()
warm = torch.randn(4096, 512, device="cuda")
encoder(warm)
print(torch.cuda.memory_summary(abbreviated=True), flush=True)

optimizer = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()))
for step in range(10):
    x = torch.randn(64, 512, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    loss = nn.functional.cross_entropy(head(encoder(x)), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step}: loss {loss.item():.4f}")
""")


def s13_total_loss_graph_leak():
    # The classic running-loss bug: `running_loss += loss` (not loss.item()) keeps every step's
    # autograd graph, and with it the activations, alive; a tqdm bar shows the loss until the
    # ~5 GiB left run out a few dozen steps into the epoch.
    run_user_script("train_regressor", """import torch
import torch.nn as nn
from tqdm import tqdm

model = nn.Sequential(nn.Linear(1024, 8192), nn.Tanh(), nn.Linear(8192, 1)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()
free, _ = torch.cuda.mem_get_info()
validation_set = torch.empty(free - 5 * (1 << 30), dtype=torch.uint8, device="cuda")

for epoch in range(3):
    running_loss = 0.0
    bar = tqdm(range(500), desc=f"epoch {epoch}")
    for step in bar:
        x = torch.randn(8192, 1024, device="cuda")
        y = x[:, :1].sin()
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward(retain_graph=True)
        optimizer.step()
        running_loss += loss
        bar.set_postfix(loss=f"{running_loss.item() / (step + 1):.4f}")
""")


def s13_sdpa_math_forced():
    # F.scaled_dot_product_attention pinned to the math backend (sdpa_kernel(SDPBackend.MATH),
    # set once for bit-exact comparisons) materialises the 16 x 16384 x 16384 scores and their
    # softmax (8 GiB each in bf16) past the ~12 GiB left; the flash kernel needs neither.
    run_user_script("long_context_eval", """import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

free, _ = torch.cuda.mem_get_info()
kv_store = torch.empty(free - 12 * (1 << 30), dtype=torch.uint8, device="cuda")

with sdpa_kernel(SDPBackend.MATH), torch.no_grad():
    for seq in [1024, 4096, 16384]:
        q, k, v = (torch.randn(1, 16, seq, 128, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        print(f"seq {seq}: out {tuple(out.shape)} norm {out.float().norm().item():.1f}",
              flush=True)
""")



def s13_ema_deepcopy():
    # An EMA of the model made with copy.deepcopy once the warm-up ends (the timm ModelEma
    # pattern), before zero_grad: weights, gradients and momentum (3 x 1.6 GiB) fit in the 4 GiB
    # left beside the model, the copy (weights and .grad) does not; the OOM is raised inside
    # copy.deepcopy / Tensor.__deepcopy__.
    run_user_script("train_with_ema", """import copy

import torch
import torch.nn as nn

WARMUP = 5


def make_model():
    return nn.Sequential(*[nn.Sequential(nn.Linear(4096, 4096), nn.GELU()) for _ in range(24)])


model = make_model().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
free, _ = torch.cuda.mem_get_info()
prefetch = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
ema = None
for step in range(20):
    x = torch.randn(64, 4096, device="cuda")
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    if step == WARMUP:
        ema = copy.deepcopy(model).eval().requires_grad_(False)
        print("EMA started", flush=True)
    elif ema is not None:
        with torch.no_grad():
            for e, p in zip(ema.parameters(), model.parameters()):
                e.lerp_(p, 1e-3)
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step}: loss {loss.item():.5f}", flush=True)
""")


def s13_perplexity_eval_loss():
    # A perplexity evaluation passes labels to the model at 8 x 4096 tokens: the logits fit in
    # bf16, the loss's fp32 upcast inside transformers' causal-LM loss (plus its log-softmax)
    # does not fit in the ~5 GiB left; transformers' loss frames show.
    run_user_script("eval_ppl", """import math

import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained(
    "@CKPT@", dtype=torch.bfloat16, device_map="cuda"
)
model.eval()
free, _ = torch.cuda.mem_get_info()
retrieval_index = torch.empty(free - 5 * (1 << 30), dtype=torch.uint8, device="cuda")

total_nll, total_tokens = 0.0, 0
with torch.no_grad():
    for batch, seq in [(8, 512), (8, 1024), (8, 4096)]:
        ids = torch.randint(3, 32000, (batch, seq), device="cuda")
        loss = model(input_ids=ids, labels=ids).loss
        total_nll += loss.item() * batch * (seq - 1)
        total_tokens += batch * (seq - 1)
        print(f"context {seq}: ppl so far {math.exp(total_nll / total_tokens):.1f}", flush=True)
""".replace("@CKPT@", CKPT))


def s13_job_stderr_tail():
    # A job runner (a CI step or a sweep driver) runs the training as a subprocess and, when it
    # fails, prints only the exit status and the last 4 lines of its stderr: what the user sees
    # is the OOM message's tail without the traceback above it.
    run_user_script("sweep_driver", """import subprocess
import sys

TRIAL = '''
import torch
import torch.nn as nn
free, _ = torch.cuda.mem_get_info()
held = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device="cuda")
model = nn.Sequential(nn.Linear(4096, 16384), nn.ReLU(), nn.Linear(16384, 4096)).cuda()
for step in range(5):
    x = torch.randn(int(sys.argv[1]), 4096, device="cuda")
    model(x).sum().backward()
    print("step", step, flush=True)
'''

for batch in [256, 65536]:
    print(f"[sweep] trial batch_size={batch}", flush=True)
    proc = subprocess.run([sys.executable, "-c", "import sys\\n" + TRIAL, str(batch)],
                          capture_output=True, text=True)
    print(proc.stdout, end="", flush=True)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-4:]
        print(f"[sweep] trial batch_size={batch} failed with exit code {proc.returncode}; "
              "last lines of stderr:", flush=True)
        for line in tail:
            print("    " + line, flush=True)
        sys.exit(f"[sweep] aborting: trial batch_size={batch} failed")
    print(f"[sweep] trial batch_size={batch} ok", flush=True)
""")
# --------------------------------------------------------------------------- session 14 (blind):
# Lightning callbacks (an EMA weight swap at validation, SWA, an fp32 export on save),
# trainer.test / trainer.predict / a rich-bar validation check, Trainer.evaluate with
# preprocess_logits_for_metrics, a sampling pipeline over a generator, generate keeping scores and
# logits, accelerate's fp32 output conversion, many LoRA adapters on one base, torch.compile's
# first call, GradScaler's first step, a bag-of-words prep on the card, JAX eval and optimizer
# state, torch.export, JSON logs, a cache-less decode loop, and 5 look-alikes


def s14_lightning_ema_validation_swap():
    # A hand-written EMA callback keeps a shadow state dict on the card and, at each validation
    # check (val_check_interval=20), clones the live weights (1 GiB) as a backup before loading
    # the EMA ones: training fits, the backup clone at the first check does not (~0.7 GiB left).
    run_user_script("train_ema_callback", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(256, 8192, generator=g), torch.randint(0, 1000, (256,), generator=g)


class EMA(L.Callback):
    def __init__(self, decay=0.999):
        self.decay = decay
        self.shadow = None
        self.backup = None

    @torch.no_grad()
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if self.shadow is None:
            self.shadow = {k: v.detach().clone() for k, v in pl_module.state_dict().items()}
            return
        for k, v in pl_module.state_dict().items():
            self.shadow[k].mul_(self.decay).add_(v, alpha=1 - self.decay)

    def on_validation_start(self, trainer, pl_module):
        self.backup = {k: v.detach().clone() for k, v in pl_module.state_dict().items()}
        pl_module.load_state_dict(self.shadow)

    def on_validation_end(self, trainer, pl_module):
        pl_module.load_state_dict(self.backup)
        self.backup = None


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8192, 16384), nn.GELU(), nn.Linear(16384, 8192),
                                 nn.GELU(), nn.Linear(8192, 1000))

    def on_train_batch_start(self, batch, batch_idx):
        if batch_idx == 1:
            free, _ = torch.cuda.mem_get_info()
            self.replay = torch.empty(free - 700 * (1 << 20), dtype=torch.uint8,
                                      device=self.device)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.net(x), y), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, val_check_interval=20,
                        limit_val_batches=4, num_sanity_val_steps=0, logger=False,
                        enable_checkpointing=False, callbacks=[EMA()])
    trainer.fit(Classifier(), DataLoader(Shards(100), batch_size=None),
                DataLoader(Shards(8), batch_size=None))
""")


def s14_lightning_swa_callback():
    # Lightning's StochasticWeightAveraging callback deep-copies the module at setup (on the CPU)
    # and moves the copy to the card when SWA starts (swa_epoch_start=2): the 1 GiB average model
    # does not fit in the ~0.6 GiB that are left after the first epoch.
    run_user_script("train_swa", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.callbacks import StochasticWeightAveraging
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return torch.randn(512, 8192, generator=torch.Generator().manual_seed(i))


class Denoiser(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8192, 16384), nn.GELU(), nn.Linear(16384, 8192))

    def training_step(self, batch, batch_idx):
        loss = F.mse_loss(self.net(batch + 0.1 * torch.randn_like(batch)), batch)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        if self.current_epoch == 0:
            free, _ = torch.cuda.mem_get_info()
            self.noise_bank = torch.empty(free - 600 * (1 << 20), dtype=torch.uint8,
                                          device=self.device)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=4, logger=False,
                        enable_checkpointing=False,
                        callbacks=[StochasticWeightAveraging(swa_lrs=1e-4, swa_epoch_start=2)])
    trainer.fit(Denoiser(), DataLoader(Frames(), batch_size=None))
""")


def s14_lightning_test_confusion():
    # trainer.test of a segmentation net: test_step builds a 150-class confusion matrix from
    # one-hot predictions and targets over 16 x 512 x 512 pixels; F.one_hot's int64 output (4.7 GiB)
    # does not fit beside the logits in the ~6 GiB left.
    run_user_script("test_segmenter", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

NUM_CLASSES = 150


class Tiles(Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return (torch.rand(16, 3, 512, 512, generator=g),
                torch.randint(0, NUM_CLASSES, (16, 512, 512), generator=g))


class Segmenter(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(64, NUM_CLASSES, 1))
        self.register_buffer("confusion", torch.zeros(NUM_CLASSES, NUM_CLASSES))

    def on_test_start(self):
        free, _ = torch.cuda.mem_get_info()
        self.tile_cache = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device=self.device)

    def test_step(self, batch, batch_idx):
        x, y = batch
        preds = self.net(x).argmax(1)
        onehot_pred = F.one_hot(preds.flatten(), NUM_CLASSES).float()
        onehot_true = F.one_hot(y.flatten(), NUM_CLASSES).float()
        self.confusion += onehot_true.T @ onehot_pred

    def on_test_epoch_end(self):
        iou = self.confusion.diag() / (self.confusion.sum(0) + self.confusion.sum(1)
                                       - self.confusion.diag()).clamp_min(1)
        self.log("test_miou", iou.mean())


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=1, logger=False)
    trainer.test(Segmenter(), DataLoader(Tiles(), batch_size=None))
""")


def s14_lightning_predict_mc_dropout():
    # trainer.predict with Monte-Carlo dropout: predict_step stacks 64 stochastic passes of a
    # 50k-class head over a 4096-row batch before averaging (~780 MiB a pass); a prediction
    # writer callback would save each batch, but the stack runs out of the ~12 GiB left first.
    run_user_script("predict_uncertainty", """import os

import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.callbacks import BasePredictionWriter
from torch.utils.data import DataLoader, Dataset


class Features(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.randn(4096, 4096, generator=torch.Generator().manual_seed(i))


class Writer(BasePredictionWriter):
    def __init__(self, out_dir):
        super().__init__(write_interval="batch")
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx,
                           dataloader_idx):
        torch.save({k: v.cpu() for k, v in prediction.items()},
                   os.path.join(self.out_dir, f"batch_{batch_idx:05d}.pt"))


class Tagger(L.LightningModule):
    def __init__(self, samples=64):
        super().__init__()
        self.samples = samples
        self.body = nn.Sequential(nn.Linear(4096, 4096), nn.GELU(), nn.Dropout(0.2))
        self.head = nn.Linear(4096, 50000)

    def on_predict_start(self):
        free, _ = torch.cuda.mem_get_info()
        self.label_index = torch.empty(free - 12 * (1 << 30), dtype=torch.uint8,
                                       device=self.device)

    def predict_step(self, batch, batch_idx):
        self.body.train()  # keep dropout on for MC sampling
        probs = torch.stack([self.head(self.body(batch)).softmax(-1)
                             for _ in range(self.samples)])
        mean = probs.mean(0)
        return {"label": mean.argmax(-1), "confidence": mean.max(-1).values,
                "entropy": -(mean * mean.clamp_min(1e-9).log()).sum(-1)}


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=1, logger=False,
                        callbacks=[Writer("predictions")])
    trainer.predict(Tagger(), DataLoader(Features(), batch_size=None), return_predictions=False)
""")


def s14_lightning_rich_val_check():
    # Lightning with RichProgressBar (16-mixed): validation every 10 training batches scores the
    # queries against a 4M-passage embedding matrix on the card; the 1024 x 4M score matrix
    # (8 GiB in fp16) of the first validation check does not fit in the ~6 GiB left.
    run_user_script("train_retriever", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.callbacks import RichProgressBar
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(1024, 768, generator=g), torch.randint(0, 4_000_000, (1024,),
                                                                   generator=g)


class Retriever(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(768, 2048), nn.GELU(), nn.Linear(2048, 1024))

    def on_train_start(self):
        self.passages = torch.randn(4_000_000, 1024, device=self.device, dtype=torch.float16)
        self.passages /= self.passages.norm(dim=-1, keepdim=True)
        free, _ = torch.cuda.mem_get_info()
        self.hard_negatives = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8,
                                          device=self.device)

    def training_step(self, batch, batch_idx):
        q, pos = batch
        qe = F.normalize(self.encoder(q), dim=-1)
        loss = -(qe * self.passages[pos]).sum(-1).mean()
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        q, pos = batch
        qe = F.normalize(self.encoder(q), dim=-1).half()
        scores = qe @ self.passages.T
        top = scores.topk(100, dim=-1).indices
        self.log("val_recall@100", (top == pos[:, None]).any(-1).float().mean(), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="16-mixed", max_epochs=1,
                        val_check_interval=10, limit_val_batches=5, num_sanity_val_steps=0,
                        logger=False, enable_checkpointing=False, callbacks=[RichProgressBar()])
    trainer.fit(Retriever(), DataLoader(Pairs(200), batch_size=None),
                DataLoader(Pairs(5), batch_size=None))
""")


def s14_lightning_checkpoint_fp32_export():
    # ModelCheckpoint every 10 steps of a bf16-true run; the module's on_save_checkpoint adds an
    # fp32 copy of every weight for export. Training fits in the ~2 GiB left (1 GiB of bf16
    # gradients); the fp32 copies made inside trainer.save_checkpoint at step 10 (2 GiB) do not.
    run_user_script("train_bf16_export", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, Dataset


class Batches(Dataset):
    def __len__(self):
        return 50

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(512, 8192, generator=g)


class AutoEncoder(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8192, 16384), nn.GELU(), nn.Linear(16384, 16384),
                                 nn.GELU(), nn.Linear(16384, 8192))

    def on_train_start(self):
        torch.cuda.empty_cache()
        free, _ = torch.cuda.mem_get_info()
        self.sample_bank = torch.empty(free - 2048 * (1 << 20), dtype=torch.uint8,
                                       device=self.device)

    def training_step(self, batch, batch_idx):
        loss = F.mse_loss(self.net(batch), batch)
        self.log("loss", loss, prog_bar=True)
        return loss

    def on_save_checkpoint(self, checkpoint):
        checkpoint["fp32_weights"] = {k: v.detach().float().clone()
                                      for k, v in self.state_dict().items()}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    checkpoint = ModelCheckpoint(dirpath="ckpt-bf16", every_n_train_steps=10, save_top_k=-1)
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="bf16-true", max_epochs=1,
                        logger=False, callbacks=[checkpoint])
    trainer.fit(AutoEncoder(), DataLoader(Batches(), batch_size=None))
""")


def s14_hf_trainer_preprocess_logits():
    # Trainer.evaluate with compute_metrics and a preprocess_logits_for_metrics that computes
    # fp32 probabilities and a per-token entropy: the eval forward and its loss fit in the ~12 GiB
    # left, the entropy's fp32 copies of a batch's logits (4 GiB each, 32 x 1024 x 32000) do not.
    run_user_script("eval_lm", """import logging

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)
transformers.utils.logging.set_verbosity_info()
logger = logging.getLogger("eval_lm")


class HeldOut(torch.utils.data.Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        ids = torch.randint(3, 32000, (1024,), generator=torch.Generator().manual_seed(i))
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


def preprocess_logits_for_metrics(logits, labels):
    probs = logits.float().softmax(dim=-1)
    entropy = -(probs * probs.clamp_min(1e-12).log()).sum(-1)
    return probs.argmax(-1), entropy


def compute_metrics(eval_pred):
    (preds, entropy), labels = eval_pred.predictions, eval_pred.label_ids
    acc = (preds[:, :-1] == labels[:, 1:]).mean()
    return {"token_accuracy": float(acc), "mean_entropy": float(np.mean(entropy))}


model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.config.use_cache = False
free, _ = torch.cuda.mem_get_info()
teacher_cache = torch.empty(free - 12 * (1 << 30), dtype=torch.uint8, device="cuda")
args = TrainingArguments(output_dir="eval-out", per_device_eval_batch_size=32, bf16=True,
                         report_to="none", dataloader_num_workers=0)
trainer = Trainer(model=model, args=args, eval_dataset=HeldOut(), compute_metrics=compute_metrics,
                  preprocess_logits_for_metrics=preprocess_logits_for_metrics)
metrics = trainer.evaluate()
logger.info("eval metrics: %s", metrics)
""".replace("@CKPT@", CKPT))


def s14_hf_pipeline_sampling_generator():
    # A text-generation pipeline fed by a generator (batch_size=16, 8 sampled continuations per
    # prompt of ~1000 words, 512 new tokens): the prefill of 128 expanded sequences (KV cache
    # ~8 GiB) runs past the ~4 GiB left, under a tqdm bar over the pipeline's outputs.
    run_user_script("augment_corpus", _WORD_TOKENIZER + """
import json

import torch
from tqdm import tqdm
from transformers import pipeline

tokenizer = word_tokenizer()
tokenizer.padding_side = "left"
generator = pipeline("text-generation", model="@CKPT@", tokenizer=tokenizer,
                     dtype=torch.bfloat16, device=0)
free, _ = torch.cuda.mem_get_info()
reward_model_slot = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")


def prompts(n=256):
    for i in range(n):
        yield " ".join(f"w{(i * 13 + j) % 31000 + 3}" for j in range(1000))


with open("augmented.jsonl", "w") as out:
    for result in tqdm(generator(prompts(), batch_size=16, num_return_sequences=8, do_sample=True,
                                 top_p=0.95, max_new_tokens=512, min_new_tokens=512,
                                 return_full_text=False),
                       total=256):
        out.write(json.dumps([r["generated_text"] for r in result]) + "\\n")
""".replace("@CKPT@", CKPT))


def s14_hf_generate_output_scores():
    # generate(..., output_scores=True, output_logits=True, return_dict_in_generate=True) for a
    # 64-prompt batch and 2048 new tokens: every step keeps a fp32 scores and a logits row per
    # sequence (16 MiB a step) on the card, beside the KV cache, until the ~16 GiB left run out
    # (some 800 steps in).
    run_user_script("score_continuations", """import logging

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("score_continuations")

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
free, _ = torch.cuda.mem_get_info()
judge_slot = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")
prompts = torch.randint(3, 32000, (64, 256), device="cuda")
log.info("decoding %d prompts x %d new tokens with scores", prompts.shape[0], 2048)
out = model.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts), do_sample=True,
                     max_new_tokens=2048, min_new_tokens=2048, output_scores=True,
                     output_logits=True, return_dict_in_generate=True, pad_token_id=0)
transition = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
log.info("mean logprob %.3f", transition.mean().item())
""".replace("@CKPT@", CKPT))


def s14_accelerate_eval_fp32_outputs():
    # An accelerate evaluation loop (bf16 mixed precision): the prepared model's forward is wrapped
    # to convert its outputs to fp32, so a 32 x 2048 batch's bf16 logits (4 GiB) are copied to
    # fp32 (8 GiB) before gather_for_metrics; the ~9 GiB left do not hold both.
    run_user_script("eval_accelerate", """import logging

import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from torch.utils.data import DataLoader, Dataset
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)
logger = get_logger(__name__)


class Docs(Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        return torch.randint(3, 32000, (2048,), generator=torch.Generator().manual_seed(i))


accelerator = Accelerator(mixed_precision="bf16")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16)
model, loader = accelerator.prepare(model, DataLoader(Docs(), batch_size=32))
model.eval()
free, _ = torch.cuda.mem_get_info()
retrieval_index = torch.empty(free - 9 * (1 << 30), dtype=torch.uint8, device=accelerator.device)
logger.info("evaluating %d documents on %s", len(loader.dataset), accelerator.device)

correct = total = 0
for ids in tqdm(loader, disable=not accelerator.is_local_main_process):
    with torch.no_grad():
        logits = model(input_ids=ids, use_cache=False).logits
    preds = logits[:, :-1].argmax(-1)
    preds, targets = accelerator.gather_for_metrics((preds, ids[:, 1:]))
    correct += (preds == targets).sum().item()
    total += targets.numel()
logger.info("next-token accuracy %.4f", correct / total)
""".replace("@CKPT@", CKPT))


def s14_peft_multi_adapter_server():
    # A multi-tenant LoRA server loads one rank-256 adapter per tenant onto one bf16 base with
    # load_adapter (~320 MiB of fp32 adapter weights each, read onto the card first): a few
    # tenants' adapters load, the next does not fit in the ~2 GiB left.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "adapter-prep.log"), "w") as log:
        rc = subprocess.call([sys.executable, os.path.abspath(__file__), "_adapter"],
                             stdout=log, stderr=subprocess.STDOUT)
    if rc != 0:
        sys.exit(f"preparing the adapter failed (exit {rc}); see {WORK}/adapter-prep.log")
    run_user_script("lora_server", """import logging

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s [%(levelname)s] %(name)s - %(message)s",
                    level=logging.INFO)
log = logging.getLogger("lora_server")

TENANTS = [f"tenant-{i:02d}" for i in range(12)]
base = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
free, _ = torch.cuda.mem_get_info()
kv_pool = torch.empty(free - 2048 * (1 << 20), dtype=torch.uint8, device="cuda")
model = PeftModel.from_pretrained(base, "@ADAPTER@", adapter_name=TENANTS[0])
log.info("base model and adapter %s ready", TENANTS[0])
for tenant in TENANTS[1:]:
    model.load_adapter("@ADAPTER@", adapter_name=tenant)
    log.info("loaded adapter for %s (%.2f GiB allocated)", tenant,
             torch.cuda.memory_allocated() / 2**30)
log.info("serving %d adapters", len(TENANTS))
""".replace("@CKPT@", CKPT).replace("@ADAPTER@", ADAPTER))


def s14_compile_first_call():
    # torch.compile (default mode) of an inference MLP: the first call compiles (Dynamo, Inductor)
    # and then runs the generated code on a 262144-row batch, whose 16384-wide fp16 hidden
    # activation (8 GiB) does not fit in the ~6 GiB left: the OOM is raised from Inductor's code.
    run_user_script("serve_compiled", """import logging
import time

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s | %(message)s", level=logging.INFO)
log = logging.getLogger("serve_compiled")


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(4096, 16384)
        self.down = nn.Linear(16384, 4096)
        self.out = nn.Linear(4096, 1)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x))
        return self.out(torch.relu(self.down(h))).squeeze(-1)


model = Scorer().cuda().half().eval()
scorer = torch.compile(model)
free, _ = torch.cuda.mem_get_info()
feature_store = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
batch = torch.randn(262144, 4096, device="cuda", dtype=torch.float16)
log.info("warming up the compiled scorer on %d rows", batch.shape[0])
t0 = time.time()
with torch.inference_mode():
    scores = scorer(batch)
log.info("first call took %.1f s, top score %.3f", time.time() - t0, scores.max().item())
""")


def s14_amp_gradscaler_first_step():
    # fp16 AMP with GradScaler: unscale_, clip_grad_norm_, then scaler.step(optimizer): forward
    # and backward of a 537M-parameter MLP stack fit, Adam's first step (two fp32 states per
    # weight, 4 GiB) inside GradScaler.step does not fit in what is left.
    run_user_script("train_amp", """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(*[nn.Sequential(nn.Linear(8192, 8192), nn.ReLU()) for _ in range(8)]).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
scaler = torch.amp.GradScaler("cuda")
free, _ = torch.cuda.mem_get_info()
activation_cache = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")

for step in range(100):
    x = torch.randn(256, 8192, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step}: loss={loss.item():.5f} grad_norm={grad_norm.item():.3f} "
          f"scale={scaler.get_scale():.0f}", flush=True)
""")


def s14_bow_onehot_prep():
    # Data preparation on the card before any model: bag-of-words counts by summing F.one_hot of
    # 2048 documents x 512 token ids over a 50257-word vocabulary; the int64 one-hot tensor asks
    # for ~393 GiB at the first chunk.
    run_user_script("build_features", """import torch
import torch.nn.functional as F
from tqdm import tqdm

VOCAB = 50257
torch.manual_seed(0)
print("tokenized corpus: 200000 documents x 512 tokens", flush=True)
token_ids = torch.randint(0, VOCAB, (200000, 512), device="cuda")
features = []
for start in tqdm(range(0, token_ids.shape[0], 2048)):
    chunk = token_ids[start:start + 2048]
    counts = F.one_hot(chunk, num_classes=VOCAB).sum(dim=1).float()
    features.append(torch.log1p(counts).to_sparse())
torch.save(features, "bow_features.pt")
""")


def s14_torch_export_run():
    # A model exported with torch.export (dynamic batch) and run through ExportedProgram.module():
    # the exported graph's forward on a 131072-row batch asks for its 16384-wide fp32 hidden
    # activation (8 GiB) with ~6 GiB left; the traceback runs through the generated graph code.
    run_user_script("run_exported", """import torch
import torch.nn as nn
from torch.export import Dim, export


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4096, 16384)
        self.fc2 = nn.Linear(16384, 256)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))).logsumexp(-1)


model = Ranker().cuda().eval()
example = torch.randn(8, 4096, device="cuda")
program = export(model, (example,), dynamic_shapes={"x": {0: Dim("batch", min=2, max=1 << 20)}})
print(program.graph_signature.user_inputs, "->", program.graph_signature.user_outputs)
runner = program.module()
free, _ = torch.cuda.mem_get_info()
candidate_pool = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
with torch.no_grad():
    for n in (1024, 16384, 131072):
        scores = runner(torch.randn(n, 4096, device="cuda"))
        print(f"ranked {n} candidates, best {scores.max().item():.3f}", flush=True)
""")


def s14_json_log_oom():
    # A training service logs JSON lines; its except-handler logs the error as one JSON object
    # (type and str(e), no traceback) and exits 1: an 8-layer transformer encoder over growing
    # token counts (batch 8) whose 4096-token step (~28 GiB of activations) does not fit in the
    # ~12 GiB left.
    run_user_script("train_service", """import json
import logging
import sys
import time

import torch
import torch.nn as nn


class JsonFormatter(logging.Formatter):
    def format(self, record):
        entry = {"ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname,
                 "logger": record.name, "msg": record.getMessage()}
        entry.update(getattr(record, "extra_fields", {}))
        return json.dumps(entry)


handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(JsonFormatter())
log = logging.getLogger("train_service")
log.addHandler(handler)
log.setLevel(logging.INFO)

layer = nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=8).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
free, _ = torch.cuda.mem_get_info()
frame_buffer = torch.empty(free - 12 * (1 << 30), dtype=torch.uint8, device="cuda")
try:
    for step, tokens in enumerate([256, 576, 1024, 4096]):
        t0 = time.time()
        x = torch.randn(8, tokens, 1024, device="cuda")
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        log.info("step done", extra={"extra_fields": {"step": step, "tokens": tokens,
                                                      "loss": round(loss.item(), 5),
                                                      "secs": round(time.time() - t0, 3)}})
except Exception as e:
    log.error("training failed", extra={"extra_fields": {"error_type": type(e).__name__,
                                                         "error": str(e), "step": step}})
    sys.exit(1)
""")


def s14_decode_no_cache_argmax():
    # A hand-written greedy decode without a KV cache: every step re-runs the whole sequence and
    # takes `.logits[:, -1].argmax(-1)`; the full-sequence logits grow with each token until,
    # some 20 steps in, they no longer fit (a bare tqdm bar over the new tokens, no stage word).
    run_user_script("greedy_decode", """import torch
from tqdm import tqdm
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
ids = torch.randint(3, 32000, (64, 1024), device="cuda")
with torch.no_grad():
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    first = model(ids, use_cache=False).logits[:, -1].argmax(-1)
    need = torch.cuda.max_memory_allocated() - base
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    prefetch = torch.empty(free - int(need * 1.02), dtype=torch.uint8, device="cuda")
    ids = torch.cat([ids, first[:, None]], dim=1)
    for _ in tqdm(range(255)):
        next_ids = model(ids, use_cache=False).logits[:, -1].argmax(-1)
        ids = torch.cat([ids, next_ids[:, None]], dim=1)
print(ids.shape)
""".replace("@CKPT@", CKPT))


def s14_jax_eval_full_valset():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A jitted train step on
    # 256-row batches fits; the jitted eval step over the whole 65536-row validation set at once
    # needs its 65536 x 32000 fp32 logits (7.8 GiB): RESOURCE_EXHAUSTED after the train lines.
    run_user_script("train_jax_classifier", """import time

import jax
import jax.numpy as jnp

D, H, C = 512, 2048, 32000


def init(key):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (D, H)) * D ** -0.5,
            "w2": jax.random.normal(k2, (H, C)) * H ** -0.5}


def logits_fn(params, x):
    return jax.nn.relu(x @ params["w1"]) @ params["w2"]


def loss_fn(params, x, y):
    logp = jax.nn.log_softmax(logits_fn(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


@jax.jit
def eval_step(params, x, y):
    logits = logits_fn(params, x)
    return jnp.mean(jnp.argmax(logits, -1) == y), jnp.mean(jax.nn.logsumexp(logits, -1))


key = jax.random.PRNGKey(0)
params = init(key)
for step in range(20):
    kx, ky, key = jax.random.split(key, 3)
    x = jax.random.normal(kx, (256, D))
    y = jax.random.randint(ky, (256,), 0, C)
    t0 = time.time()
    params, loss = train_step(params, x, y)
    if step % 5 == 4:
        print(f"epoch 0 step {step + 1}: loss {float(loss):.4f} ({time.time() - t0:.3f}s)",
              flush=True)
kx, ky = jax.random.split(key)
x_val = jax.random.normal(kx, (65536, D))
y_val = jax.random.randint(ky, (65536,), 0, C)
print(f"evaluating on {x_val.shape[0]} examples", flush=True)
acc, lse = eval_step(params, x_val, y_val)
print(f"val acc {float(acc):.4f} logsumexp {float(lse):.3f}")
""")


def s14_jax_adam_state_init():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A hand-written Adam (the optax
    # pattern: init = two tree_map(jnp.zeros_like, params)) for a 40-layer, 671M-parameter fp32
    # MLP: the parameters (2.5 GiB) and the first moment fit, the second moment does not.
    run_user_script("train_jax_adam", """import jax
import jax.numpy as jnp

D, LAYERS = 4096, 40


def init_params(key):
    keys = jax.random.split(key, LAYERS)
    return [{"w": jax.random.normal(k, (D, D)) * D ** -0.5, "b": jnp.zeros((D,))} for k in keys]


def adam_init(params):
    return {"step": jnp.zeros((), jnp.int32),
            "mu": jax.tree_util.tree_map(jnp.zeros_like, params),
            "nu": jax.tree_util.tree_map(jnp.zeros_like, params)}


def forward(params, x):
    for layer in params:
        x = x + jax.nn.gelu(x @ layer["w"] + layer["b"])
    return x


params = init_params(jax.random.PRNGKey(0))
n_params = sum(p.size for p in jax.tree_util.tree_leaves(params))
print(f"model: {LAYERS} layers, {n_params / 1e6:.0f}M parameters on {jax.devices()[0]}", flush=True)
opt_state = adam_init(params)
print("optimizer state ready", flush=True)
""")


def s14_pandas_get_dummies_memoryerror():
    # Not a GPU OOM: a recommender's feature prep one-hot encodes 12M user ids with
    # pandas.get_dummies before the GPU model is built; numpy cannot allocate the 12M x 12M
    # dummy matrix (MemoryError "Unable to allocate ... TiB", past the address space, so no
    # overcommit). Without pandas on the machine, the same job written with numpy fails the same.
    import importlib.util

    if importlib.util.find_spec("pandas") is None:
        run_user_script("prep_features", """import numpy as np
import torch

n_users = 12_000_000
user_ids = np.random.randint(0, n_users, size=n_users)
print(f"cuda: {torch.cuda.get_device_name(0)}; {user_ids.size} interactions", flush=True)
one_hot = np.eye(n_users, dtype=np.float32)[user_ids]
features = torch.from_numpy(one_hot).float().cuda()
""")
    run_user_script("prep_features", """import numpy as np
import pandas as pd
import torch

n_users = 12_000_000
df = pd.DataFrame({"user_id": np.arange(n_users), "clicks": np.random.poisson(3, n_users)})
print(f"cuda: {torch.cuda.get_device_name(0)}; interactions: {df.shape}", flush=True)
X = pd.get_dummies(df["user_id"], prefix="user", dtype=np.float32)
features = torch.tensor(X.values, device="cuda")
""")


def s14_dist_store_timeout():
    # Not a GPU OOM: rank 0 of a 2-node NCCL job (RANK=0, WORLD_SIZE=2 from run.sh's env) starts
    # alone; init_process_group's TCPStore waits for the other rank and gives up after its 20 s
    # timeout (DistStoreError "Timed out after ... waiting for clients. 1/2 clients joined").
    run_user_script("train_multinode", """import datetime
import logging
import os

import torch
import torch.distributed as dist

RANK = os.environ.get("RANK", "0")
logging.basicConfig(format=f"%(asctime)s %(levelname)s [rank{RANK}] %(message)s",
                    level=logging.INFO)
log = logging.getLogger("train")

local_rank = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local_rank)
log.info("connecting to %s:%s, world size %s", os.environ["MASTER_ADDR"],
         os.environ["MASTER_PORT"], os.environ["WORLD_SIZE"])
dist.init_process_group(backend="nccl", timeout=datetime.timedelta(seconds=20))
log.info("process group ready")
""")


def s14_no_cuda_visible():
    # Not a GPU OOM: CUDA_VISIBLE_DEVICES is empty (run.sh), as a scheduler that gave the job no
    # GPU leaves it; the script moves its model to "cuda" anyway: RuntimeError "No CUDA GPUs are
    # available" from CUDA initialization.
    run_user_script("finetune_head", """import torch
import torch.nn as nn

print(f"torch {torch.__version__}; cuda available: {torch.cuda.is_available()}", flush=True)
device = torch.device("cuda")
model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 10)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(64, 1024, device=device)
loss = model(x).logsumexp(-1).mean()
loss.backward()
optimizer.step()
""")


def s14_storage_size_overflow():
    # Not a GPU OOM (an absurd size that never reaches the allocator): a per-pixel relative
    # position bias for 16384 x 16384 images asks for 8 x 16 x 2^28 x 2^28 elements; the size
    # computation overflows and PyTorch refuses ("Storage size calculation overflowed").
    run_user_script("superres_attention", """import torch

H = W = 16384
tokens = H * W
heads, batch = 16, 8
print(f"image {H}x{W}: {tokens} tokens, {heads} heads, batch {batch}", flush=True)
bias = torch.zeros(batch, heads, tokens, tokens, device="cuda")
print(bias.shape)
""")


def s14_graph_capture_sync():
    # Not a GPU OOM: a NaN guard (`if not torch.isfinite(y).all()`) inside torch.cuda.graph capture
    # synchronizes the capturing stream: "CUDA error: operation not permitted when stream is
    # capturing", then the capture's own error while the first is handled.
    run_user_script("graph_infer", """import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda().eval()
static_x = torch.randn(64, 1024, device="cuda")

side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side), torch.no_grad():
    for _ in range(3):
        model(static_x)
torch.cuda.current_stream().wait_stream(side)
print("warm-up done, capturing", flush=True)

graph = torch.cuda.CUDAGraph()
with torch.no_grad(), torch.cuda.graph(graph):
    static_y = model(static_x)
    if not torch.isfinite(static_y).all():
        raise FloatingPointError("non-finite output during capture")
for step in range(10):
    static_x.copy_(torch.randn(64, 1024, device="cuda"))
    graph.replay()
    print(step, static_y.norm().item())
""")


# --------------------------------------------------------------------------- session 15 (blind):
# plain user code running a model on inputs (embeddings, retrieval top-k, segmentation argmax,
# candidate scoring, a feature-extraction pipeline), loss statements of hand-written loops
# (label smoothing, in-batch contrastive), loading cut mid-way (fp32 from shards), weights
# converted in place (fp8 by hand, a float upcast, DoRA's init), start-up (NCCL init on a full
# card), Lightning's configure_model and Fabric's backward, a JAX sampler, an NCCL gather, audio
# features, a custom error raised `from None`, and 3 look-alikes (pinned host memory, anomaly
# NaN, a truncated safetensors file)

SHARDS = os.path.join(WORK, "llama-550m-shards")
PARTIAL = os.path.join(WORK, "llama-550m-partial")


def _make_shards():
    """The checkpoint re-saved in ~150 MB shards (from the CPU), for s15_hf_sharded_fp32_load."""
    import torch
    from transformers import AutoModelForCausalLM

    if os.path.exists(os.path.join(SHARDS, "config.json")):
        return
    model = AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16)
    model.save_pretrained(SHARDS, max_shard_size="150MB")


def s15_hf_embed_mean_pool():
    # Plain user code embeds documents with the base model (AutoModel, no LM head), mean-pools the
    # last hidden state and logs each length bucket's embeddings: buckets of 64 docs at 128, 512
    # and 2048 tokens fit in the ~8 GiB left, the 8192-token bucket's MLP activations do not.
    run_user_script("embed_docs", """import logging

import torch
import torch.nn.functional as F
from transformers import AutoModel

logging.basicConfig(format="%(asctime)s | %(levelname)-8s | %(name)s | %(message)s",
                    level=logging.INFO)
log = logging.getLogger("embed_docs")

encoder = AutoModel.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda").eval()
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
ann_index = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
log.info("encoder ready: %d layers, hidden %d", encoder.config.num_hidden_layers,
         encoder.config.hidden_size)
for bucket, seq in enumerate([128, 512, 2048, 8192]):
    ids = torch.randint(3, 32000, (64, seq), device="cuda")
    mask = torch.ones_like(ids)
    with torch.no_grad():
        hidden = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    emb = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
    emb = F.normalize(emb.float(), dim=-1)
    log.info("bucket %d (len %d): %d embeddings, dim %d, first: %s", bucket, seq, emb.shape[0],
             emb.shape[1], [round(v, 4) for v in emb[0, :4].tolist()])
""".replace("@CKPT@", CKPT))


def s15_retrieval_topk_scores():
    # Dense retrieval by hand: 8M normalized fp16 document vectors on the card, query batches
    # scored with one matmul and torch.topk; batches of 64 and 256 queries (4 GiB of scores) fit
    # in the ~10 GiB left, the 4096-query batch's score matrix (64 GiB) does not.
    run_user_script("search_index", """import time

import torch
import torch.nn.functional as F

torch.manual_seed(0)
n_docs, dim = 8_000_000, 768
doc_vecs = F.normalize(torch.randn(n_docs, dim, device="cuda", dtype=torch.float16), dim=-1)
print(f"index: {n_docs} docs x {dim} dims ({doc_vecs.numel() * 2 / 2**30:.1f} GiB)", flush=True)
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
reranker_slot = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device="cuda")
for n_queries in [64, 256, 4096]:
    t0 = time.time()
    queries = F.normalize(torch.randn(n_queries, dim, device="cuda", dtype=torch.float16), dim=-1)
    scores = queries @ doc_vecs.T
    top_scores, top_ids = torch.topk(scores, k=100, dim=-1)
    print(f"{n_queries} queries in {time.time() - t0:.2f} s: q0 top-3 ids "
          f"{top_ids[0, :3].tolist()} scores {[round(s, 3) for s in top_scores[0, :3].tolist()]}",
          flush=True)
    del scores
""")


def s15_segmentation_argmax_fullres():
    # Semantic segmentation of tiles at growing resolution (torchvision's FCN-ResNet50 with random
    # weights, or a plain conv net where torchvision is missing) under inference_mode, argmax per
    # pixel, a tqdm bar with per-tile class counts: 512 and 1024 tiles fit in the ~6 GiB left, a
    # batch of 4096 x 4096 tiles does not.
    run_user_script("segment_tiles", """import torch
import torch.nn as nn
from tqdm import tqdm

try:
    from torchvision.models.segmentation import fcn_resnet50

    net = fcn_resnet50(weights=None, weights_backbone=None, num_classes=21)
except Exception as error:
    print(f"torchvision unavailable ({type(error).__name__}); using the plain segmenter")

    def stage(c_in, c_out):
        return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out),
                             nn.ReLU(inplace=True))

    net = nn.Sequential(stage(3, 16), stage(16, 32), stage(32, 32), nn.Conv2d(32, 21, 1))

net = net.cuda().eval()
free, _ = torch.cuda.mem_get_info()
tile_cache = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
sizes = [512, 1024, 4096]
for i, side in enumerate(tqdm(sizes, desc="tiles")):
    images = torch.rand(8, 3, side, side, device="cuda")
    with torch.inference_mode():
        out = net(images)
        logits = out["out"] if isinstance(out, dict) else out
        mask = logits.argmax(1)
    counts = torch.bincount(mask.flatten(), minlength=21)
    tqdm.write(f"tile batch {i} ({side}x{side}): top classes {counts.topk(3).indices.tolist()}")
""")


def s15_hf_score_candidates():
    # Plain user code scores candidate continuations by their summed token log-probabilities
    # (`logits.float().log_softmax(-1)` then gather): 8 and 32 candidates of 1024 tokens fit in
    # the ~14 GiB left, the fp32 copy of 128 candidates' logits (16 GiB) does not.
    run_user_script("rank_candidates", """import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
prompt_cache = torch.empty(free - 14 * (1 << 30), dtype=torch.uint8, device="cuda")
for n_cand in [8, 32, 128]:
    ids = torch.randint(3, 32000, (n_cand, 1024), device="cuda")
    with torch.no_grad():
        logits = model(ids).logits
        logprobs = logits.float().log_softmax(-1)
        token_lp = logprobs[:, :-1].gather(-1, ids[:, 1:, None]).squeeze(-1)
    scores = token_lp.sum(-1)
    best = scores.argmax().item()
    print(f"{n_cand} candidates: best #{best} logprob {scores[best].item():.1f}, "
          f"worst {scores.min().item():.1f}", flush=True)
    del logits, logprobs, token_lp
""".replace("@CKPT@", CKPT))


def s15_label_smoothing_loss_line():
    # A hand-written LM training loop computes a label-smoothed loss by hand: a dense smoothed
    # target (fp32, 64 x 1024 x 50257 = 12 GiB) and log_softmax of the logits; the logits and the
    # target fit in the ~30 GiB left, log_softmax inside the loss statement does not (step 0).
    run_user_script("train_smoothed", """import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

V, EPS = 50257, 0.1
torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(V, 1024), nn.Linear(1024, 1024), nn.GELU(),
                      nn.Linear(1024, V)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
free, _ = torch.cuda.mem_get_info()
teacher = torch.empty(free - 30 * (1 << 30), dtype=torch.uint8, device="cuda")

for epoch in range(3):
    bar = tqdm(range(200), desc=f"epoch {epoch}")
    for step in bar:
        tokens = torch.randint(0, V, (64, 1025), device="cuda")
        x, y = tokens[:, :-1], tokens[:, 1:]
        logits = model(x)
        smooth = torch.full_like(logits, EPS / V).scatter_(-1, y[..., None], 1 - EPS + EPS / V)
        loss = -(smooth * F.log_softmax(logits, dim=-1)).sum(-1).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        bar.set_postfix(loss=f"{loss.item():.4f}")
""")


def s15_contrastive_inbatch_loss():
    # In-batch contrastive (InfoNCE) training by hand with a batch-size warm-up schedule: the loss
    # statement `F.cross_entropy(q @ k.T / tau, labels)` at 65536 pairs makes 16 GiB similarity
    # matrices; 4096 and 16384 fit in the ~24 GiB left, the third step does not.
    run_user_script("train_contrastive", """import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="[%(asctime)s] %(levelname)s %(message)s", datefmt="%H:%M:%S",
                    level=logging.INFO)
log = logging.getLogger(__name__)

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).cuda()
optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-4)
free, _ = torch.cuda.mem_get_info()
queue = torch.empty(free - 24 * (1 << 30), dtype=torch.uint8, device="cuda")
TAU = 0.05
for step, n in enumerate([4096, 16384, 65536, 65536]):
    x = torch.randn(n, 1024, device="cuda")
    q = F.normalize(encoder(x), dim=-1)
    k = F.normalize(encoder(x + 0.1 * torch.randn_like(x)), dim=-1)
    loss = F.cross_entropy(q @ k.T / TAU, torch.arange(n, device="cuda"))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    log.info("step %d batch %d loss %.4f", step, n, loss.item())
""")


def s15_hf_sharded_fp32_load():
    # from_pretrained of a checkpoint in ~150 MB shards with dtype=torch.float32 onto a card with
    # ~1.5 GiB free: the fp32 model (2.2 GiB) stops fitting part-way through the shards.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "shards-prep.log"), "w") as log:
        rc = subprocess.call([sys.executable, os.path.abspath(__file__), "_shards"],
                             stdout=log, stderr=subprocess.STDOUT)
    if rc != 0:
        sys.exit(f"preparing the shards failed (exit {rc}); see {WORK}/shards-prep.log")
    run_user_script("load_fp32", """import logging
import os

import torch
import transformers
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
transformers.utils.logging.set_verbosity_info()
log = logging.getLogger("load_fp32")

path = "@SHARDS@"
log.info("checkpoint %s: %d shards", path,
         len([f for f in os.listdir(path) if f.endswith(".safetensors")]))
torch.zeros(1, device="cuda")
free, _ = torch.cuda.mem_get_info()
vision_tower = torch.empty(free - 1536 * (1 << 20), dtype=torch.uint8, device="cuda")
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, device_map="cuda")
log.info("loaded %.2f B params in fp32", sum(p.numel() for p in model.parameters()) / 1e9)
""".replace("@SHARDS@", SHARDS))


def s15_hf_fp8_quantize():
    # Weights converted in place by hand: every nn.Linear's weight is upcast to fp32, given a
    # per-row scale and cast to float8_e4m3fn, and the fp32 copy is kept on the card to report
    # the quantization error later; the copies (1.5x the bf16 weights freed) outgrow the ~600 MiB
    # left some layers in.
    run_user_script("quantize_fp8", """import logging

import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("quantize_fp8")

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
kv_pool = torch.empty(free - 600 * (1 << 20), dtype=torch.uint8, device="cuda")
FP8_MAX = torch.finfo(torch.float8_e4m3fn).max


@torch.no_grad()
def quantize_linear(module):
    w = module.weight.float()
    scale = w.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / FP8_MAX
    module.weight = nn.Parameter((w / scale).to(torch.float8_e4m3fn), requires_grad=False)
    module.register_buffer("weight_scale", scale.to(torch.bfloat16))
    return w


n = 0
originals = {}
for name, module in model.named_modules():
    if isinstance(module, nn.Linear):
        originals[name] = quantize_linear(module)
        n += 1
        if name.endswith("down_proj"):
            log.info("quantized %s (%d linears so far, %.2f GiB allocated)", name, n,
                     torch.cuda.memory_allocated() / 2**30)
log.info("quantized %d linear layers to fp8", n)
for name, w in originals.items():
    module = model.get_submodule(name)
    err = (module.weight.float() * module.weight_scale.float() - w).abs().max().item()
    log.info("%s: max abs error %.5f", name, err)
""".replace("@CKPT@", CKPT))


def s15_hf_upcast_float_eval():
    # A bf16 model on the card is upcast in place with model.float() for a "stable" fp32
    # evaluation; the fp32 copies (2.2 GiB) do not fit in the ~0.5 GiB left: the OOM is raised in
    # Module._apply part-way through the parameters.
    run_user_script("eval_fp32", """import logging
import warnings

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s [%(levelname)s] %(message)s", level=logging.INFO)
log = logging.getLogger("eval_fp32")

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
draft_model = torch.empty(free - 500 * (1 << 20), dtype=torch.uint8, device="cuda")
log.info("model loaded in bf16 (%.2f GiB allocated)", torch.cuda.memory_allocated() / 2**30)
warnings.warn("bf16 perplexities differ from the paper's; evaluating in fp32")
log.info("casting the model to float32")
model = model.float()
ids = torch.randint(3, 32000, (4, 1024), device="cuda")
with torch.no_grad():
    loss = model(ids, labels=ids).loss
log.info("fp32 perplexity %.2f", loss.exp().item())
""".replace("@CKPT@", CKPT))


def s15_dist_init_card_full():
    # Start-up with another process holding the whole card (run.sh's holder, 0 GiB left): a
    # one-process NCCL job sets its device and initializes the process group; creating the CUDA
    # context (or NCCL's buffers) fails with "out of memory" before any model exists.
    run_user_script("train_dist", """import datetime
import logging
import os

import torch
import torch.distributed as dist

logging.basicConfig(format="%(asctime)s %(levelname)s [rank0] %(name)s: %(message)s",
                    level=logging.INFO)
log = logging.getLogger("train_dist")

local_rank = int(os.environ.get("LOCAL_RANK", 0))
log.info("torch %s, %d visible device(s)", torch.__version__, torch.cuda.device_count())
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29541", rank=0, world_size=1,
                        timeout=datetime.timedelta(seconds=30),
                        device_id=torch.device("cuda", local_rank))
log.info("process group ready: world size %d", dist.get_world_size())
flag = torch.ones(1, device="cuda")
dist.all_reduce(flag)
log.info("all_reduce ok: %s", flag.item())
""")


def s15_lightning_configure_model():
    # Lightning builds the model in the LightningModule's configure_model hook, directly on the
    # card (precision="bf16-true"): a 262144-word embedding (4 GiB in bf16) fits in the ~6 GiB
    # left, the tied-size output layer does not; the OOM comes from configure_model in fit's setup.
    run_user_script("train_configure_model", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

VOCAB, DIM = 262144, 8192


class BigVocabLM(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = None

    def configure_model(self):
        if self.net is not None:
            return
        self.net = nn.Sequential(nn.Embedding(VOCAB, DIM), nn.LayerNorm(DIM),
                                 nn.Linear(DIM, VOCAB, bias=False))

    def training_step(self, batch, batch_idx):
        (ids,) = batch
        logits = self.net(ids[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1).float(), ids[:, 1:].flatten())
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    torch.zeros(1, device="cuda")
    free, _ = torch.cuda.mem_get_info()
    retrieval_index = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
    data = TensorDataset(torch.randint(0, VOCAB, (256, 129)))
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="bf16-true", max_epochs=1,
                        logger=False, enable_checkpointing=False)
    trainer.fit(BigVocabLM(), DataLoader(data, batch_size=8))
""")


def s15_fabric_backward():
    # Lightning Fabric (bf16-mixed) with a hand-written loop over a classifier with a 1M-token
    # embedding (its dense fp32 gradient is 4 GiB): two steps are measured, then a replay buffer
    # takes the card down to halfway between the forward's peak and the backward's, so the next
    # step's forward fits and fabric.backward(loss) does not (in the embedding's backward).
    run_user_script("train_fabric", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, vocab=1_000_000, dim=1024, classes=1000):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 16, 4 * dim, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=4)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)).mean(1))


fabric = L.Fabric(accelerator="cuda", devices=1, precision="bf16-mixed")
fabric.launch()
model = Classifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
fabric.print(f"parameters: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M")

for step in range(6):
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    ids = torch.randint(0, 1_000_000, (16, 1024), device=fabric.device)
    labels = torch.randint(0, 1000, (16,), device=fabric.device)
    loss = F.cross_entropy(model(ids).float(), labels)
    fwd = torch.cuda.max_memory_allocated()
    fabric.backward(loss)
    bwd = torch.cuda.max_memory_allocated()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    fabric.print(f"step {step}: loss {loss.item():.4f} (forward peak "
                 f"+{(fwd - base) / 2**30:.2f} GiB, backward peak +{(bwd - base) / 2**30:.2f} GiB)")
    del loss, ids, labels
    if step == 1:
        torch.cuda.empty_cache()
        free, _ = torch.cuda.mem_get_info()
        replay = torch.empty(free - ((fwd + bwd) // 2 - base), dtype=torch.uint8,
                             device=fabric.device)
""")


def s15_jax_sample_categorical():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A jitted sampler (hidden
    # states @ vocabulary matrix, jax.random.categorical at temperature 0.8, logsumexp) prints the
    # first tokens of batches of 1024 and 8192 rows; the 65536-row batch's fp32 logits (8 GiB)
    # are RESOURCE_EXHAUSTED.
    run_user_script("sample_tokens", """import jax
import jax.numpy as jnp
import numpy as np

print("devices:", jax.devices(), flush=True)
key = jax.random.PRNGKey(0)
w_key, h_key = jax.random.split(key)
W = jax.random.normal(w_key, (2048, 32000), dtype=jnp.float32) * 0.02


@jax.jit
def sample(W, h, key):
    logits = h @ W
    tokens = jax.random.categorical(key, logits / 0.8, axis=-1)
    return tokens, jax.nn.logsumexp(logits, axis=-1)


for i, batch in enumerate([1024, 8192, 65536]):
    h_key, sub = jax.random.split(h_key)
    h = jax.random.normal(sub, (batch, 2048), dtype=jnp.float32)
    tokens, lse = sample(W, h, sub)
    print(f"batch {batch}: first tokens {np.asarray(tokens[:8]).tolist()}, "
          f"mean logsumexp {float(lse.mean()):.3f}", flush=True)
""")


def s15_dist_nccl_gather_logits():
    # A one-process NCCL evaluation gathers every shard's logits with dist.all_gather into a list
    # the user allocates with torch.empty_like: shards of 4096 and 16384 rows fit in the ~10 GiB
    # left (NCCL's own buffers included), the 49152-row shard's receive buffer (6 GiB) does not.
    run_user_script("eval_gather", """import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn

RANK = int(os.environ.get("RANK", 0))
logging.basicConfig(format=f"%(asctime)s %(levelname)s [rank{RANK}] %(message)s",
                    level=logging.INFO)
log = logging.getLogger("eval")
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29543", rank=RANK, world_size=1)
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
head = nn.Sequential(nn.Linear(4096, 4096), nn.GELU(), nn.Linear(4096, 32000)).cuda().eval()
free, _ = torch.cuda.mem_get_info()
embedding_cache = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device="cuda")
preds = []
for shard, n in enumerate([4096, 16384, 49152]):
    x = torch.randn(n, 4096, device="cuda")
    with torch.no_grad():
        logits = head(x)
    gathered = [torch.empty_like(logits) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, logits)
    preds.append(torch.cat(gathered).argmax(-1).cpu())
    log.info("shard %d: %d rows gathered, first preds %s", shard, n, preds[-1][:5].tolist())
    del x, logits, gathered
dist.destroy_process_group()
""")


def s15_pinned_host_pool():
    # Not a GPU OOM (host memory): a video loader pre-allocates a pinned (page-locked) host pool
    # for 100M frames (~1.2 PB, past the address space); cudaHostAlloc fails and PyTorch's
    # caching host allocator reports it as a CUDA "out of memory" error. No card memory is used.
    run_user_script("video_loader", """import torch

n_frames, shape = 100_000_000, (3, 1024, 1024)
print(f"cuda: {torch.cuda.get_device_name(0)}; free {torch.cuda.mem_get_info()[0] / 2**30:.1f} GiB",
      flush=True)
print(f"allocating a pinned staging pool for {n_frames} frames of {shape}", flush=True)
pool = torch.empty((n_frames, *shape), dtype=torch.float32, pin_memory=True)
print(pool.shape)
""")


def s15_anomaly_nan_backward():
    # Not a GPU OOM: a heteroscedastic regression takes sqrt of a raw linear output as its std;
    # with torch.autograd.set_detect_anomaly(True) the backward stops at the first function that
    # returns NaN gradients ("Function '...Backward0' returned nan values in its ...th output"),
    # after the anomaly mode's warnings and the forward call's traceback.
    run_user_script("train_gaussian", """import torch
import torch.nn as nn

torch.autograd.set_detect_anomaly(True)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(100):
    x = torch.randn(512, 64, device="cuda")
    y = x[:, :1].sum(-1) * 3.0
    out = model(x)
    mu, std = out[:, 0], torch.sqrt(out[:, 1])
    loss = (((y - mu) / std) ** 2 / 2 + torch.log(std)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: nll {loss.item():.4f}", flush=True)
""")


def s15_hf_truncated_safetensors():
    # Not a GPU OOM (loading cut mid-way by a copy that stopped): the checkpoint's
    # model.safetensors is cut to half its size; from_pretrained fails reading it (a safetensors
    # header / incomplete-buffer error), before any weight reaches the card.
    import shutil

    os.makedirs(PARTIAL, exist_ok=True)
    for entry in os.listdir(CKPT):
        src, dst = os.path.join(CKPT, entry), os.path.join(PARTIAL, entry)
        if entry.endswith(".safetensors"):
            size = os.path.getsize(src)
            with open(src, "rb") as fin, open(dst, "wb") as fout:
                left = size // 2
                while left > 0:
                    chunk = fin.read(min(left, 64 * MIB))
                    if not chunk:
                        break
                    fout.write(chunk)
                    left -= len(chunk)
        elif os.path.isfile(src):
            shutil.copyfile(src, dst)
    run_user_script("serve_model", """import logging

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("serve_model")
log.info("loading model from %s", "@PARTIAL@")
model = AutoModelForCausalLM.from_pretrained("@PARTIAL@", dtype=torch.bfloat16,
                                             device_map="cuda")
log.info("model ready")
""".replace("@PARTIAL@", PARTIAL))


def s15_audio_melspec_batch():
    # Audio feature extraction on the card: log-mel spectrograms (torchaudio's MelSpectrogram, or
    # torch.stft plus a mel matrix where torchaudio is missing) of 64 recordings per batch; 2- and
    # 6-minute batches fit in the ~24 GiB left, the 1-hour batch's padded copy and STFT do not.
    run_user_script("extract_features", """import math

import torch

SR, N_FFT, HOP, N_MELS = 16000, 400, 160, 80
try:
    import torchaudio

    mel = torchaudio.transforms.MelSpectrogram(SR, n_fft=N_FFT, hop_length=HOP,
                                               n_mels=N_MELS).cuda()
except Exception as error:
    print(f"torchaudio unavailable ({type(error).__name__}); using torch.stft", flush=True)
    fb = torch.rand(N_FFT // 2 + 1, N_MELS, device="cuda")
    window = torch.hann_window(N_FFT, device="cuda")

    def mel(wav):
        spec = torch.stft(wav, N_FFT, HOP, window=window, return_complex=True).abs() ** 2
        return torch.einsum("bft,fm->bmt", spec, fb)

free, _ = torch.cuda.mem_get_info()
asr_model = torch.empty(free - 24 * (1 << 30), dtype=torch.uint8, device="cuda")
for minutes in [2, 6, 60]:
    wav = torch.randn(64, minutes * 60 * SR, device="cuda")
    feats = torch.log(mel(wav) + 1e-6)
    print(f"{minutes} min x 64: features {tuple(feats.shape)}, "
          f"mean {feats.mean().item():.3f}", flush=True)
    del feats
""")


def s15_peft_dora_init():
    # get_peft_model with use_dora=True on the bf16 model already on the card: DoRA's init
    # computes each target's weight norm on the card from W + scale * B @ A in fp32; the
    # attention projections' temporaries (~48 MiB) fit in the ~96 MiB left, the first MLP
    # projection's (~138 MiB) do not, so get_peft_model fails part-way through the layers.
    run_user_script("dora_finetune", """import logging

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
log = logging.getLogger("dora_finetune")

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
reference_model = torch.empty(free - 96 * (1 << 20), dtype=torch.uint8, device="cuda")
config = LoraConfig(r=64, lora_alpha=128, lora_dropout=0.05, use_dora=True, task_type="CAUSAL_LM",
                    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                    "up_proj", "down_proj"])
log.info("wrapping the model with DoRA (r=%d)", config.r)
model = get_peft_model(model, config)
model.print_trainable_parameters()
""".replace("@CKPT@", CKPT))


def s15_rerank_error_from_none():
    # A reranking service wraps the model call and re-raises the OOM as its own error class
    # `from None`, so only RerankError shows, its message carrying str(e): a cross-encoder
    # (nn.TransformerEncoder, eval fast path) over 512-token pairs; batches of 16 and 64 pairs fit
    # in the ~4 GiB left, 4096 pairs do not.
    run_user_script("rerank_service", """import logging

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s %(message)s", level=logging.INFO)
log = logging.getLogger("rerank")


class RerankError(RuntimeError):
    pass


class CrossEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30522, 768)
        layer = nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=12)
        self.score = nn.Linear(768, 1)

    def forward(self, ids):
        return self.score(self.encoder(self.embed(ids))[:, 0]).squeeze(-1)


model = CrossEncoder().cuda().eval()
free, _ = torch.cuda.mem_get_info()
doc_store = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")


def rerank(pairs):
    try:
        with torch.no_grad():
            return model(pairs)
    except torch.OutOfMemoryError as e:
        raise RerankError(f"rerank failed for {pairs.shape[0]} pairs: {e}") from None


for query_id, n_pairs in enumerate([16, 64, 4096]):
    pairs = torch.randint(0, 30522, (n_pairs, 512), device="cuda")
    scores = rerank(pairs)
    log.info("query %d: %d pairs, best %d (%.3f)", query_id, n_pairs, scores.argmax().item(),
             scores.max().item())
""")


def s15_jax_train_logged_str():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A jitted MLP train step (Optax
    # AdamW when installed, else Adam by hand) over growing batches; the except-handler logs
    # "train step failed: <str(e)>" and exits 1: batches of 4096 and 16384 fit, the 262144-row
    # batch's 8192-wide activations (8 GiB) are RESOURCE_EXHAUSTED.
    run_user_script("train_jax", """import logging
import sys

import jax
import jax.numpy as jnp

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("train_jax")

try:
    import optax

    tx = optax.adamw(1e-3)
    init_opt, update_opt = tx.init, tx.update
    apply_updates = optax.apply_updates
except ImportError:
    log.warning("optax not installed: using a hand-written Adam")

    def init_opt(params):
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return (zeros, zeros, jnp.zeros((), jnp.int32))

    def update_opt(grads, state, params=None):
        m, v, t = state
        t = t + 1
        m = jax.tree_util.tree_map(lambda a, g: 0.9 * a + 0.1 * g, m, grads)
        v = jax.tree_util.tree_map(lambda a, g: 0.999 * a + 0.001 * g * g, v, grads)
        upd = jax.tree_util.tree_map(
            lambda a, b: -1e-3 * (a / (1 - 0.9**t)) / (jnp.sqrt(b / (1 - 0.999**t)) + 1e-8),
            m, v)
        return upd, (m, v, t)

    def apply_updates(params, updates):
        return jax.tree_util.tree_map(lambda p, u: p + u, params, updates)

k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
params = {"w1": jax.random.normal(k1, (1024, 8192)) * 0.02,
          "w2": jax.random.normal(k2, (8192, 1024)) * 0.02}
opt_state = init_opt(params)


def loss_fn(params, x):
    h = jax.nn.gelu(x @ params["w1"])
    return jnp.mean((h @ params["w2"] - x) ** 2)


@jax.jit
def train_step(params, opt_state, x):
    loss, grads = jax.value_and_grad(loss_fn)(params, x)
    updates, opt_state = update_opt(grads, opt_state, params)
    return apply_updates(params, updates), opt_state, loss


try:
    for step, batch in enumerate([4096, 16384, 262144]):
        x = jax.random.normal(jax.random.fold_in(k3, step), (batch, 1024))
        params, opt_state, loss = train_step(params, opt_state, x)
        log.info("step %d batch %d loss %.5f", step, batch, float(loss))
except Exception as e:
    log.error("train step failed: %s", e)
    sys.exit(1)
""")



def s15_hf_generate_streamer_long_context():
    # generate with a TextStreamer (batch 1): a short chat turn streams its tokens to stdout, then
    # a 65536-token document is summarized; the prefill's KV cache (4 GiB in bf16) and MLP
    # activations do not fit in the ~3 GiB left (after the max-length reminder warning).
    run_user_script("chat_stream", _WORD_TOKENIZER + """
import torch
from transformers import AutoModelForCausalLM, TextStreamer

tokenizer = word_tokenizer()
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
streamer = TextStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
speech_model = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")

turns = [" ".join(f"w{(7 * j) % 31000 + 3}" for j in range(64)),
         " ".join(f"w{(13 * j) % 31000 + 3}" for j in range(65536))]
for turn, text in enumerate(turns):
    inputs = tokenizer(text, return_tensors="pt").to("cuda")
    print(f"\\n[turn {turn}] user: {inputs.input_ids.shape[1]} tokens\\nassistant:", flush=True)
    model.generate(input_ids=inputs.input_ids, attention_mask=inputs.attention_mask,
                   streamer=streamer, max_new_tokens=32, do_sample=False, pad_token_id=0)
""".replace("@CKPT@", CKPT))


def s15_subprocess_last_line():
    # A sweep driver runs each trial as a child process with capture_output and, when a trial
    # fails, raises its own error carrying only the last line of the child's stderr: the child's
    # OOM (a 16384-wide MLP over 131072 rows with ~4 GiB left) shows as that one quoted line.
    run_user_script("sweep", """import subprocess
import sys
import textwrap

TRIAL = textwrap.dedent('''
    import sys
    import torch
    import torch.nn as nn

    width, rows = int(sys.argv[1]), int(sys.argv[2])
    model = nn.Sequential(nn.Linear(4096, width), nn.GELU(), nn.Linear(width, 4096)).cuda()
    free, _ = torch.cuda.mem_get_info()
    other_trials = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
    x = torch.randn(rows, 4096, device="cuda")
    loss = model(x).pow(2).mean()
    loss.backward()
    print(f"trial ok: loss {loss.item():.4f}")
''')


class TrialFailed(Exception):
    pass


for width, rows in [(4096, 8192), (16384, 131072)]:
    proc = subprocess.run([sys.executable, "-c", TRIAL, str(width), str(rows)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "(no stderr)"
        raise TrialFailed(f"trial width={width} rows={rows} exited {proc.returncode}: {last}")
    print(f"width={width} rows={rows}: {proc.stdout.strip()}", flush=True)
""")


def s15_accelerate_cpu_offload_forward():
    # accelerate's cpu_offload keeps the weights on the CPU and moves each module's weights to
    # the card in its pre-forward hook: with ~64 MiB free (another model holds the rest), moving
    # the 32000 x 2048 embedding (125 MiB) in the first hook fails inside accelerate's hooks.
    run_user_script("offload_infer", """import logging

import torch
from accelerate import cpu_offload
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
log = logging.getLogger("offload_infer")

torch.zeros(1, device="cuda")
free, _ = torch.cuda.mem_get_info()
vision_encoder = torch.empty(free - 64 * (1 << 20), dtype=torch.uint8, device="cuda")
log.info("%.1f GiB free on the card: offloading the language model to the CPU",
         torch.cuda.mem_get_info()[0] / 2**30)
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16)
model = cpu_offload(model, execution_device=torch.device("cuda", 0))
ids = torch.randint(3, 32000, (1, 256), device="cuda")
with torch.no_grad():
    logits = model(ids).logits
log.info("next token %d", logits[0, -1].argmax().item())
""".replace("@CKPT@", CKPT))


# --------------------------------------------------------------------------- session 16 (blind):
# inference by plain user code (a diffusion-style sampler and its decode, a ViT at high resolution,
# sentence embeddings with JSON logs, test-time augmentation, mask post-processing, vocabulary
# similarity, attention probes), library helpers (generate's num_return_sequences,
# Trainer.predict, accelerate's load_checkpoint_in_model, PEFT's SVD adapter merge), evaluation
# after logged training steps, loading (meta-device to_empty, torch.load without map_location),
# start-up (a preallocated KV cache), Lightning's long padded batch, JAX conv and SVD, error
# shapes (an OOM inside the OOM handler, only a traceback's last lines, JSON logs), and 5
# look-alikes (OOMs recovered from then a save error, CUDA in a forked worker, ENOMEM from mmap, a
# low-memory warning then a dtype error, a child killed by SIGKILL)


def s16_diffusion_sample_decode():
    # A diffusion-style sampler written by hand: 30 denoising steps over 16 fp16 latents of
    # 128 x 128 (tqdm bar) fit easily; the final decode upsamples them 8x to 1024 x 1024 with
    # 512/256-channel convs, and its activations (2-8 GiB each) outgrow the ~6 GiB left.
    run_user_script("sample_images", """import torch
import torch.nn as nn
from tqdm import tqdm

torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(4, 128, 3, padding=1), nn.SiLU(),
                                 nn.Conv2d(128, 128, 3, padding=1), nn.SiLU(),
                                 nn.Conv2d(128, 4, 3, padding=1))

    def forward(self, x, t):
        return self.net(x) * (1.0 - t)


def up(c_in, c_out):
    return nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                         nn.Conv2d(c_in, c_out, 3, padding=1), nn.SiLU())


decoder = nn.Sequential(nn.Conv2d(4, 512, 3, padding=1), up(512, 512), up(512, 256),
                        up(256, 128), nn.Conv2d(128, 3, 3, padding=1))
unet = Denoiser().cuda().half().eval()
vae_decoder = decoder.cuda().half().eval()
free, _ = torch.cuda.mem_get_info()
text_encoder = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")

latents = torch.randn(16, 4, 128, 128, device="cuda", dtype=torch.float16)
timesteps = torch.linspace(1.0, 0.0, 30)
with torch.inference_mode():
    for t in tqdm(timesteps, desc="sampling"):
        latents = latents - 0.02 * unet(latents, float(t))
    print(f"latents ready: {tuple(latents.shape)}, std {latents.float().std().item():.3f}")
    images = vae_decoder(latents / 0.18215)
    images = (images.clamp(-1, 1) + 1) / 2
print(f"decoded {images.shape[0]} images of {images.shape[-1]} px")
""")


def s16_vit_highres_attention():
    # A ViT-B/16 written by hand (explicit q @ k.T attention, fp16, no_grad) run on images of
    # growing size: 224, 512 and 1024 px fit in the ~16 GiB left; at 2048 px the 16384 tokens'
    # attention scores (8 x 12 x 16384^2 fp16 = 48 GiB) do not.
    run_user_script("vit_features", """import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim=768, heads=12):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        B, N, D = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(B, N, 3, self.heads, D // self.heads).permute(
            2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1)) * (D // self.heads) ** -0.5
        attn = attn.softmax(dim=-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(B, N, D))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, depth=12):
        super().__init__()
        self.patch = nn.Conv2d(3, 768, 16, stride=16)
        self.blocks = nn.Sequential(*[Block() for _ in range(depth)])
        self.norm = nn.LayerNorm(768)

    def forward(self, images):
        x = self.patch(images).flatten(2).transpose(1, 2)
        return self.norm(self.blocks(x)).mean(1)


model = ViT().cuda().half().eval()
free, _ = torch.cuda.mem_get_info()
feature_bank = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")
for side in [224, 512, 1024, 2048]:
    images = torch.randn(8, 3, side, side, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        feats = model(images)
    tokens = (side // 16) ** 2
    print(f"{side}px ({tokens} tokens): features {tuple(feats.shape)}, "
          f"norm {feats.float().norm(dim=-1).mean().item():.2f}")
""")


def s16_sentence_embed_json_logs():
    # A sentence-embedding job (nn.TransformerEncoder in eval, fp16, no_grad) that logs one JSON
    # object per line; batches of 512 sentences bucketed by length: 32-512 tokens fit in the
    # ~12 GiB left, the 4096-token bucket does not; the handler logs str(e) as a JSON error
    # record and exits 1.
    run_user_script("embed_sentences", """import json
import sys
import time

import torch
import torch.nn as nn


def log(level, event, **fields):
    print(json.dumps({"ts": round(time.time(), 3), "level": level, "event": event, **fields}),
          flush=True)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30522, 1024)
        layer = nn.TransformerEncoderLayer(1024, 16, 4096, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=12)

    def forward(self, ids):
        return nn.functional.normalize(self.encoder(self.embed(ids)).mean(1), dim=-1)


model = Encoder().cuda().half().eval()
free, _ = torch.cuda.mem_get_info()
faiss_gpu_index = torch.empty(free - 12 * (1 << 30), dtype=torch.uint8, device="cuda")
log("INFO", "model_ready", params=sum(p.numel() for p in model.parameters()),
    free_bytes=torch.cuda.mem_get_info()[0])
done = 0
for bucket, seq_len in enumerate([32, 128, 512, 4096]):
    ids = torch.randint(0, 30522, (512, seq_len), device="cuda")
    t0 = time.time()
    try:
        with torch.no_grad():
            emb = model(ids)
    except RuntimeError as e:
        log("ERROR", "embed_failed", bucket=bucket, seq_len=seq_len, batch=512,
            error_type=type(e).__name__, error=str(e))
        sys.exit(1)
    done += emb.shape[0]
    log("INFO", "batch_done", bucket=bucket, seq_len=seq_len, batch=emb.shape[0], done=done,
        secs=round(time.time() - t0, 3))
""")


def s16_train_then_eval_large_batch():
    # A hand-written LM training loop logs 30 steps (batch 8 x 1024 tokens), then evaluates with
    # an eval batch 16x larger under no_grad: the eval batch's fp32 logits (128 x 1024 x 32000 =
    # 16 GiB) do not fit in the ~16 GiB left (with the Adam state), where training's peak did.
    run_user_script("train_lm", """import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("train_lm")
V, D, T = 32000, 1024, 1024
TRAIN_BS, EVAL_BS = 8, 128


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        layer = nn.TransformerEncoderLayer(D, 16, 4 * D, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers=4)
        self.head = nn.Linear(D, V)

    def forward(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device)
        return self.head(self.blocks(self.embed(ids), mask=mask, is_causal=True))


torch.manual_seed(0)
model = LM().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
free, _ = torch.cuda.mem_get_info()
replay_buffer = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")
log.info("model: %.1fM params; train batch %d, eval batch %d",
         sum(p.numel() for p in model.parameters()) / 1e6, TRAIN_BS, EVAL_BS)
t0 = time.time()
for step in range(1, 31):
    ids = torch.randint(0, V, (TRAIN_BS, T + 1), device="cuda")
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 10 == 0:
        log.info("step %d/30 loss %.4f (%.3f s/step)", step, loss.item(), (time.time() - t0) / step)
del logits, loss

log.info("running evaluation on 2048 held-out sequences")
model.eval()
total, n = 0.0, 0
with torch.no_grad():
    for i in range(2048 // EVAL_BS):
        ids = torch.randint(0, V, (EVAL_BS, T + 1), device="cuda")
        logits = model(ids[:, :-1])
        total += F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten()).item()
        n += 1
log.info("eval loss %.4f", total / n)
""")


def s16_meta_to_empty_load():
    # Loading by hand: a 48-layer 8192-wide MLP (12 GiB in fp32) is built on the meta device and
    # materialized with model.to_empty(device="cuda") before its weights are read; the ~8 GiB left
    # run out part-way through the layers (Module._apply), before any checkpoint is opened.
    run_user_script("restore_mlp", """import logging

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s | %(levelname)s | %(message)s", level=logging.INFO)
log = logging.getLogger("restore")

torch.zeros(1, device="cuda")
free, _ = torch.cuda.mem_get_info()
serving_model = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
with torch.device("meta"):
    model = nn.Sequential(*[nn.Sequential(nn.Linear(8192, 8192), nn.GELU()) for _ in range(48)])
n_params = sum(p.numel() for p in model.parameters())
log.info("built %.2fB params on the meta device (%.1f GiB in fp32)", n_params / 1e9,
         n_params * 4 / 2**30)
log.info("materializing on cuda:0")
model.to_empty(device="cuda")
state = torch.load("checkpoints/mlp-48x8192.pt", map_location="cuda", mmap=True)
model.load_state_dict(state)
log.info("restored")
""")


def s16_accelerate_load_checkpoint_in_model():
    # accelerate by hand: init_empty_weights, then load_checkpoint_in_model with
    # device_map={"": 0} puts every weight of the checkpoint on the card, where another model
    # leaves ~600 MiB: the 1.1 GB bf16 checkpoint stops fitting part-way through.
    run_user_script("load_reference", """import torch
from accelerate import init_empty_weights, load_checkpoint_in_model
from transformers import AutoConfig, AutoModelForCausalLM

config = AutoConfig.from_pretrained("@CKPT@")
with init_empty_weights():
    model = AutoModelForCausalLM.from_config(config)
print(f"empty model: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M params", flush=True)
torch.zeros(1, device="cuda")
free, _ = torch.cuda.mem_get_info()
policy_model = torch.empty(free - 600 * (1 << 20), dtype=torch.uint8, device="cuda")
print(f"free on cuda:0: {torch.cuda.mem_get_info()[0] / 2**20:.0f} MiB", flush=True)
load_checkpoint_in_model(model, "@CKPT@", device_map={"": 0}, dtype=torch.bfloat16)
model.eval()
print("reference model ready", flush=True)
""".replace("@CKPT@", CKPT))


def s16_peft_svd_weighted_adapter():
    # PEFT: two LoRA adapters on the fp32 model, combined with add_weighted_adapter(...,
    # combination_type="svd"), which forms each target's delta weight on the card and takes its
    # SVD (torch.linalg.svd); with ~64 MiB left the deltas / SVD workspace do not fit.
    run_user_script("merge_adapters", """import logging

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
log = logging.getLogger("merge_adapters")

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.float32, device_map="cuda")


def lora():
    return LoraConfig(r=64, lora_alpha=128, target_modules=["q_proj", "v_proj", "down_proj"],
                      task_type="CAUSAL_LM")


model = get_peft_model(model, lora(), adapter_name="math")
model.add_adapter("code", lora())
log.info("adapters: %s", list(model.peft_config))
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
eval_cache = torch.empty(free - 64 * (1 << 20), dtype=torch.uint8, device="cuda")
log.info("combining adapters with SVD (%.0f MiB free)", torch.cuda.mem_get_info()[0] / 2**20)
model.add_weighted_adapter(["math", "code"], [0.6, 0.4], "math_code", combination_type="svd")
model.set_adapter("math_code")
log.info("combined adapter ready")
""".replace("@CKPT@", CKPT))


def s16_hf_generate_return_sequences():
    # generate with do_sample=True and num_return_sequences=32 for 8 prompts of 512 tokens: the
    # batch grows to 256 sequences; their prefill KV cache (~8 GiB) does not fit in the ~4 GiB
    # left. Logged with timestamps.
    run_user_script("sample_candidates", """import logging

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s [%(levelname)s] %(name)s: %(message)s",
                    level=logging.INFO)
log = logging.getLogger("sample_candidates")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
reward_model = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
prompts = torch.randint(3, 32000, (8, 512), device="cuda")
log.info("sampling 32 continuations for each of %d prompts (%d tokens)", *prompts.shape)
out = model.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts), do_sample=True,
                     top_p=0.95, temperature=0.8, num_return_sequences=32, max_new_tokens=256,
                     pad_token_id=0)
log.info("got %d candidates of %d tokens", *out.shape)
""".replace("@CKPT@", CKPT))


def s16_hf_trainer_predict_seqcls():
    # Trainer.predict with a sequence-classification head on the Llama checkpoint (the load report
    # warns that `score.weight` is newly initialized): eval batches of 64 x 2048 tokens; the
    # MLP activations of one batch (~1.4 GiB each) do not fit in the ~3 GiB left.
    run_user_script("predict_labels", """import torch
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


class Documents(torch.utils.data.Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        ids = torch.randint(3, 32000, (2048,), generator=g)
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


model = AutoModelForSequenceClassification.from_pretrained("@CKPT@", num_labels=3,
                                                           dtype=torch.bfloat16)
model.config.pad_token_id = 0
args = TrainingArguments(output_dir="@WORK@/predict-out", per_device_eval_batch_size=64,
                         bf16=True, report_to="none", dataloader_num_workers=0)
trainer = Trainer(model=model, args=args)
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
embedding_index = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
output = trainer.predict(Documents())
print(output.predictions.argmax(-1)[:20])
""".replace("@CKPT@", CKPT).replace("@WORK@", WORK))


def s16_hf_output_attentions_probe():
    # An interpretability probe: the model loaded with attn_implementation="eager" and run with
    # output_attentions=True on documents of 1024, 2048 and 4096 tokens, printing each layer's
    # attention entropy; at 4096 tokens the 8 layers' kept attention maps (512 MiB each, plus the
    # fp32 softmax) outgrow the ~3 GiB left.
    run_user_script("attention_probe", """import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda",
                                             attn_implementation="eager")
model.eval()
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
sae_weights = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
for length in [1024, 2048, 4096]:
    ids = torch.randint(3, 32000, (1, length), device="cuda")
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    entropy = [-(a.float() * a.float().clamp_min(1e-9).log()).sum(-1).mean().item()
               for a in out.attentions]
    print(f"{length} tokens: attention entropy per layer "
          f"{[round(e, 2) for e in entropy]}", flush=True)
    del out
""".replace("@CKPT@", CKPT))


def s16_hf_vocab_similarity():
    # Plain user code over a loaded model's input embeddings: nearest neighbours of probe tokens by
    # cosine similarity of the whole vocabulary against itself (32000^2 fp32 = 3.8 GiB), with
    # ~2 GiB left after the model.
    run_user_script("embedding_neighbours", """import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
other_runs = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device="cuda")
emb = F.normalize(model.get_input_embeddings().weight.float(), dim=-1)
print(f"embeddings: {tuple(emb.shape)}", flush=True)
sim = emb @ emb.T
sim.fill_diagonal_(-1)
scores, neighbours = sim.topk(5, dim=-1)
for token in [3, 100, 1000, 31999]:
    print(token, neighbours[token].tolist(), [round(s, 3) for s in scores[token].tolist()])
""".replace("@CKPT@", CKPT))


def s16_lightning_long_sample_batch():
    # Lightning fit (TQDM bar, train_loss on the bar) of a small LM over a dataset whose samples
    # are 512 tokens but one of 16384; batches are padded to their longest sample, so batch 12's
    # activations and logits (16 x 16384 x 32000 fp32 = 32 GiB) fail in training_step where the
    # ~16 GiB left held the first 12 batches.
    run_user_script("train_lightning_lm", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

V = 32000


class Texts(Dataset):
    def __len__(self):
        return 400

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randint(1, V, (16384 if i == 200 else 512,), generator=g)


def collate(batch):
    return pad_sequence(batch, batch_first=True, padding_value=0)


class LM(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, 1024)
        layer = nn.TransformerEncoderLayer(1024, 16, 4096, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=6)
        self.head = nn.Linear(1024, V)

    def training_step(self, batch, batch_idx):
        logits = self.head(self.encoder(self.embed(batch[:, :-1])))
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten(), ignore_index=0)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)


if __name__ == "__main__":
    torch.zeros(1, device="cuda")
    free, _ = torch.cuda.mem_get_info()
    teacher = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                        enable_checkpointing=False, log_every_n_steps=5)
    trainer.fit(LM(), DataLoader(Texts(), batch_size=16, collate_fn=collate))
""")


def s16_jax_conv_resolution():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A jitted 3-layer conv net
    # (lax.conv_general_dilated, NHWC, 64 channels) over batches of 16 images, tqdm bar over
    # resolutions: 256 and 512 px fit, the 2048 px batch's activations (16 GiB each) are
    # RESOURCE_EXHAUSTED.
    run_user_script("jax_conv_features", """import jax
import jax.numpy as jnp
from tqdm import tqdm

key = jax.random.PRNGKey(0)
keys = jax.random.split(key, 4)
weights = [jax.random.normal(k, (3, 3, c_in, 64), dtype=jnp.float32) * 0.05
           for k, c_in in zip(keys[:3], [3, 64, 64])]


@jax.jit
def features(weights, x):
    for w in weights:
        x = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        x = jax.nn.relu(x)
    return x.mean(axis=(1, 2))


bar = tqdm([256, 512, 2048], desc="resolutions")
for side in bar:
    x = jax.random.normal(keys[3], (16, side, side, 3), dtype=jnp.float32)
    f = features(weights, x).block_until_ready()
    bar.set_postfix(side=side, norm=f"{float(jnp.linalg.norm(f, axis=-1).mean()):.3f}")
""")


def s16_jax_pca_svd():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. PCA of feature matrices by a
    # jitted center + jnp.linalg.svd(full_matrices=False), logged: 16384 x 1024 and 32768 x 2048
    # fit; the 131072 x 8192 matrix (4 GiB) with its centered copy and U is RESOURCE_EXHAUSTED.
    run_user_script("pca_whiten", """import logging

import jax
import jax.numpy as jnp

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("pca")


@jax.jit
def pca(x):
    xc = x - x.mean(axis=0)
    u, s, vt = jnp.linalg.svd(xc, full_matrices=False)
    return s, vt


key = jax.random.PRNGKey(0)
for n_rows, dim in [(16384, 1024), (32768, 2048), (131072, 8192)]:
    base = jax.random.normal(key, (8192, dim), dtype=jnp.float32)
    x = jnp.tile(base, (n_rows // 8192, 1))
    log.info("features %s (%.2f GiB)", x.shape, x.size * 4 / 2**30)
    s, vt = pca(x)
    explained = s[:16] ** 2 / (s ** 2).sum()
    log.info("top-16 components explain %.3f of the variance", float(explained.sum()))
""")


def s16_sparse_adjacency_dense():
    # Graph preprocessing by hand: a symmetric-normalized adjacency built as a sparse COO tensor
    # on the card and made dense with to_dense(): Cora- and PubMed-sized graphs fit in the ~24 GiB
    # left, an arxiv-sized one (169343^2 fp32 = 107 GiB) does not.
    run_user_script("prep_graphs", """import torch

torch.manual_seed(0)
free, _ = torch.cuda.mem_get_info()
node_features = torch.empty(free - 24 * (1 << 30), dtype=torch.uint8, device="cuda")
for name, n in [("cora", 2708), ("pubmed", 19717), ("arxiv", 169343)]:
    edges = torch.randint(0, n, (2, 12 * n), device="cuda")
    edges = torch.cat([edges, edges.flip(0)], dim=1)
    values = torch.ones(edges.shape[1], device="cuda")
    adj = torch.sparse_coo_tensor(edges, values, (n, n)).coalesce()
    dense = adj.to_dense() + torch.eye(n, device="cuda")
    d = dense.sum(1).pow(-0.5)
    norm_adj = d[:, None] * dense * d[None, :]
    print(f"{name}: {n} nodes, {adj._nnz()} edges, mean degree {dense.sum(1).mean().item():.1f}")
    del dense, norm_adj
""")


def s16_mask_upsample_postprocess():
    # Instance-segmentation post-processing by hand: each image's 256 x 256 mask logits are
    # upsampled with F.interpolate(bilinear) to the 4000 x 6000 photo and thresholded; images with
    # 12 and 35 instances fit in the ~10 GiB left, one with 300 instances (27 GiB) does not.
    run_user_script("postprocess_masks", """import torch
import torch.nn.functional as F
from tqdm import tqdm

free, _ = torch.cuda.mem_get_info()
detector = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device="cuda")
H, W = 4000, 6000
results = []
for image_id, n_instances in enumerate(tqdm([12, 35, 300], desc="images")):
    mask_logits = torch.randn(n_instances, 1, 256, 256, device="cuda")
    masks = F.interpolate(mask_logits, size=(H, W), mode="bilinear", align_corners=False)
    binary = masks.sigmoid_() > 0.5
    areas = binary.flatten(1).sum(1)
    results.append(areas.cpu())
    tqdm.write(f"image {image_id}: {n_instances} instances, "
               f"mean area {areas.float().mean():.0f} px")
    del masks, binary
""")


def s16_oom_recovered_then_save_error():
    # Look-alike (the OOMs were recovered from): a loop catches torch.OutOfMemoryError, logs a
    # warning with the message's first line and halves the batch until it fits, trains 20 steps,
    # then fails saving to a directory that does not exist (RuntimeError: Parent directory ...
    # does not exist). The last error is not an OOM.
    run_user_script("auto_batch_train", """import logging

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("train")
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
other_job = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device="cuda")
batch_size, step = 262144, 0
while step < 20:
    oom = False
    try:
        x = torch.randn(batch_size, 4096, device="cuda")
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
    except torch.OutOfMemoryError as e:
        oom = True
        log.warning("OOM at batch size %d: %s", batch_size, str(e).splitlines()[0][:160])
    optimizer.zero_grad(set_to_none=True)
    x = loss = None
    if oom:
        torch.cuda.empty_cache()
        batch_size //= 2
        log.warning("retrying with batch size %d", batch_size)
        continue
    step += 1
    if step % 5 == 0:
        log.info("step %d batch %d ok", step, batch_size)
log.info("training done; saving to /checkpoints/run-17/final.pt")
torch.save(model.state_dict(), "/checkpoints/run-17/final.pt")
""")


def s16_fork_worker_cuda_init():
    # Look-alike (not an OOM): a Dataset that makes its crops on the card, read by DataLoader
    # workers started with fork after the parent has initialized CUDA: worker 0 fails with
    # "Cannot re-initialize CUDA in forked subprocess", re-raised by the DataLoader.
    run_user_script("train_crops", """import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class GpuCrops(Dataset):
    def __len__(self):
        return 1024

    def __getitem__(self, i):
        image = torch.rand(3, 256, 256, device="cuda")
        return image[:, 16:240, 16:240], i % 10


model = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(32, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(GpuCrops(), batch_size=32, num_workers=4, multiprocessing_context="fork")
for images, labels in tqdm(loader, desc="epoch 0"):
    loss = nn.functional.cross_entropy(model(images), labels.cuda())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""")


def s16_mmap_replay_buffer_enomem():
    # Look-alike (host memory, not the card): a replay buffer for 10 billion 84 x 84 x 4 frames
    # mapped with mmap.mmap(-1, size) (~257 TiB, past the process's address space) fails with
    # OSError: [Errno 12] Cannot allocate memory; the card is named in the log but never filled.
    run_user_script("replay_buffer", """import logging
import mmap

import torch

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("replay")
log.info("learner on %s (%.1f GiB free)", torch.cuda.get_device_name(0),
         torch.cuda.mem_get_info()[0] / 2**30)
capacity, frame_bytes = 10_000_000_000, 84 * 84 * 4
log.info("allocating a shared replay buffer: %d frames x %d bytes", capacity, frame_bytes)
buffer = mmap.mmap(-1, capacity * frame_bytes)
log.info("replay buffer ready")
""")


def s16_low_memory_warning_dtype_error():
    # Look-alike: the script warns that the card is nearly full and that "CUDA out of memory"
    # errors are likely, then fails on a dtype mismatch (a float32 batch into a bf16 model:
    # "mat1 and mat2 must have the same dtype").
    run_user_script("score_batch", """import logging

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("score")
model = nn.Sequential(nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1)).cuda()
model = model.to(torch.bfloat16).eval()
free, total = torch.cuda.mem_get_info()
index = torch.empty(free - 1800 * (1 << 20), dtype=torch.uint8, device="cuda")
free, total = torch.cuda.mem_get_info()
if free < 4 * (1 << 30):
    log.warning("only %.1f GiB of %.1f GiB free on cuda:0; CUDA out of memory errors are likely "
                "with batch_size=%d", free / 2**30, total / 2**30, 256)
x = torch.randn(256, 4096, device="cuda")
with torch.no_grad():
    scores = model(x)
log.info("scores: %s", scores[:4].flatten().tolist())
""")


def s16_child_killed_sigkill():
    # Look-alike (a "Killed" exit, as the host's OOM killer leaves): a driver runs a featurizing
    # worker through bash; the worker prints its progress and dies by SIGKILL; bash prints
    # "... Killed ..." and the driver's subprocess.run(check=True) raises CalledProcessError
    # (exit status 137). No CUDA memory is involved.
    run_user_script("run_featurize", """import subprocess
import sys
import textwrap

WORKER = textwrap.dedent('''
    import os
    import signal
    import numpy as np

    print("[featurize] loading 64 shards", flush=True)
    tables = []
    for shard in range(4):
        tables.append(np.ones((64, 1 << 20), dtype=np.float32))
        print(f"[featurize] shard {shard}: rss {len(tables) * 256} MiB", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
''')
with open("featurize_worker.py", "w") as fh:
    fh.write(WORKER)
print("starting featurize_worker.py", flush=True)
cmd = f"{sys.executable} featurize_worker.py --shards 64; status=$?; exit $status"
subprocess.run(["bash", "-c", cmd], check=True)
print("features ready")
""")


def s16_oom_inside_oom_handler():
    # The OOM handler itself runs out of memory: a training step of an 8-layer 8192-wide MLP
    # (2 GiB of fp32 weights) fails in the forward (2 GiB activations, ~8 GiB left); the except
    # block logs and clones the state dict on the card for an emergency checkpoint, which needs
    # 2 GiB more than is free: two chained OOM tracebacks ("During handling of the above
    # exception, another exception occurred").
    run_user_script("train_safe", """import logging

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("train_safe")
model = nn.Sequential(*[nn.Sequential(nn.Linear(8192, 8192), nn.GELU()) for _ in range(8)]).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
data_cache = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
for step, batch in enumerate([1024, 4096, 65536]):
    try:
        x = torch.randn(batch, 8192, device="cuda")
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        log.info("step %d (batch %d): loss %.5f", step, batch, loss.item())
    except torch.OutOfMemoryError:
        log.error("OOM at step %d (batch %d); writing an emergency checkpoint", step, batch)
        snapshot = {k: v.detach().clone() for k, v in model.state_dict().items()}
        torch.save(snapshot, "emergency.pt")
        raise
""")


def s16_runner_last_lines():
    # Output shape: a job runner catches the failure and prints only the last 3 lines of the
    # traceback with a prefix, then exits 1. The workload: a Conv1d(64 -> 256) over 16 series of
    # 2M steps, whose output (32 GiB) does not fit in the ~24 GiB left.
    run_user_script("forecast_runner", """import sys
import traceback

import torch
import torch.nn as nn


def run_task():
    model = nn.Sequential(nn.Conv1d(64, 256, 9, padding=4), nn.GELU(),
                          nn.Conv1d(256, 1, 1)).cuda().eval()
    free, _ = torch.cuda.mem_get_info()
    history = torch.empty(free - 24 * (1 << 30), dtype=torch.uint8, device="cuda")
    series = torch.randn(16, 64, 2 * 1024 * 1024, device="cuda")
    with torch.no_grad():
        return model(series)


print("[runner] task forecast-7 started", flush=True)
try:
    out = run_task()
    print(f"[runner] task forecast-7 done: {tuple(out.shape)}")
except Exception:
    lines = traceback.format_exc().rstrip().splitlines()
    print("[runner] task forecast-7 FAILED; last lines of its traceback:")
    for line in lines[-3:]:
        print("[runner]   " + line)
    sys.exit(1)
""")


def s16_kv_cache_prealloc_startup():
    # Start-up of a hand-written inference server: after the weights (standing in: all but
    # ~40 GiB of the card), it preallocates a paged KV cache layer by layer (32 layers x 2 GiB for
    # 64 sequences x 8192 tokens); layer ~19's blocks do not fit, before any request is served.
    run_user_script("serve_llm", """import logging

import torch

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("server")
LAYERS, KV_HEADS, HEAD_DIM, MAX_SEQS, MAX_LEN = 32, 8, 128, 64, 8192
torch.zeros(1, device="cuda")
free, _ = torch.cuda.mem_get_info()
weights = torch.empty(free - 40 * (1 << 30), dtype=torch.uint8, device="cuda")
log.info("weights loaded; %.1f GiB free", torch.cuda.mem_get_info()[0] / 2**30)
per_layer = 2 * MAX_SEQS * KV_HEADS * MAX_LEN * HEAD_DIM * 2
log.info("allocating KV cache: %d layers x %.1f GiB (%d seqs x %d tokens)", LAYERS,
         per_layer / 2**30, MAX_SEQS, MAX_LEN)
kv_cache = []
for layer in range(LAYERS):
    k = torch.empty(MAX_SEQS, KV_HEADS, MAX_LEN, HEAD_DIM, dtype=torch.bfloat16, device="cuda")
    v = torch.empty_like(k)
    kv_cache.append((k, v))
log.info("KV cache ready; serving on :8000")
""")


def s16_tta_flip_ensemble():
    # Test-time augmentation by hand: 8 flipped / rotated copies of each batch are stacked and run
    # through a fp16 conv classifier under no_grad; 32 images at 512 px fit in the ~16 GiB left,
    # at 1024 px the first conv's output (256 x 32 x 1024^2 fp16 = 16 GiB) does not.
    run_user_script("predict_tta", """import torch
import torch.nn as nn


def tta(x):
    views = [x, x.flip(-1), x.flip(-2), x.flip(-1, -2)]
    views += [v.transpose(-1, -2) for v in views]
    return torch.cat(views)


model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, stride=2),
                      nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(64, 1000)).cuda().half().eval()
free, _ = torch.cuda.mem_get_info()
gallery = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")
for batch_idx, side in enumerate([512, 512, 1024]):
    images = torch.rand(32, 3, side, side, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        logits = model(tta(images)).float()
    probs = logits.softmax(-1).view(8, 32, -1).mean(0)
    print(f"batch {batch_idx} ({side}px): mean max-prob {probs.max(-1).values.mean().item():.4f}")
""")


def s16_torch_load_default_device():
    # Resuming by hand without map_location: the checkpoint was saved from the card (weights and
    # Adam state, 3 GiB), so torch.load puts every tensor back on cuda:0, beside the freshly
    # built model, where ~2 GiB are left.
    run_user_script("resume_train", """import os

import torch
import torch.nn as nn


def build():
    return nn.Sequential(*[nn.Sequential(nn.Linear(8192, 8192), nn.GELU()) for _ in range(4)])


if not os.path.exists("mlp-ckpt.pt"):
    model = build().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    model(torch.randn(64, 8192, device="cuda")).mean().backward()
    optimizer.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 1},
               "mlp-ckpt.pt")
    print("saved mlp-ckpt.pt", flush=True)
    del model, optimizer
    torch.cuda.empty_cache()

model = build().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
free, _ = torch.cuda.mem_get_info()
prefetch = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device="cuda")
print("resuming from mlp-ckpt.pt", flush=True)
ckpt = torch.load("mlp-ckpt.pt")
model.load_state_dict(ckpt["model"])
optimizer.load_state_dict(ckpt["optimizer"])
print(f"resumed at step {ckpt['step']}")
""")


def s17_hf_export_fp32_state_dict():
    # Conversion with stage logs: a bf16 checkpoint loaded on the card is exported as fp32; each
    # tensor of the state dict is cast with .to(torch.float32) on the card (2.2 GB in all), where
    # another job leaves ~1 GiB: the cast runs out part-way through the tensors.
    run_user_script("export_fp32", """import logging

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("export")
log.info("[1/4] loading shards from @CKPT@")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
n = sum(p.numel() for p in model.parameters())
log.info("[2/4] loaded %.0fM params (%s) on %s", n / 1e6, model.dtype, model.device)
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
eval_job = torch.empty(free - (1 << 30), dtype=torch.uint8, device="cuda")
log.info("[3/4] casting the state dict to float32 for export")
fp32 = {}
for name, tensor in model.state_dict().items():
    fp32[name] = tensor.to(torch.float32)
log.info("[4/4] writing model.fp32.safetensors (%d tensors)", len(fp32))
save_file({k: v.cpu() for k, v in fp32.items()}, "model.fp32.safetensors")
log.info("export done")
""".replace("@CKPT@", CKPT))


def s17_peft_lora_train_sampling_pass():
    # A hand-written LoRA fine-tune (PEFT, bf16, tqdm bar, loss lines) of the Llama checkpoint
    # with batches of 4 x 256 tokens fits in the ~6 GiB left; at step 20 it samples 8 completions
    # for each of 64 eval prompts of 1024 tokens with generate: the 512 expanded sequences'
    # prefill (MLP activations ~6 GiB, KV cache 32 GiB) does not fit.
    run_user_script("lora_sft", """import torch
from peft import LoraConfig, get_peft_model
from tqdm import tqdm
from transformers import AutoModelForCausalLM

torch.manual_seed(0)
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05,
                                         target_modules=["q_proj", "v_proj"],
                                         task_type="CAUSAL_LM"))
model.print_trainable_parameters()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
reward_model = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
bar = tqdm(range(1, 41), desc="train")
for step in bar:
    ids = torch.randint(3, 32000, (4, 256), device="cuda")
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    bar.set_postfix(loss=f"{loss.item():.4f}")
    if step % 10 == 0:
        tqdm.write(f"step {step}: loss {loss.item():.4f}")
    if step == 20:
        tqdm.write("sampling 8 completions for each of 64 eval prompts (1024 tokens)")
        model.eval()
        prompts = torch.randint(3, 32000, (64, 1024), device="cuda")
        with torch.no_grad():
            samples = model.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts),
                                     do_sample=True, top_p=0.9, num_return_sequences=8,
                                     max_new_tokens=128, pad_token_id=0)
        tqdm.write(f"samples: {tuple(samples.shape)}")
        model.train()
""".replace("@CKPT@", CKPT))


def s17_torchrun_record_summary():
    # torchrun --nproc_per_node=1 of a script whose main() is wrapped in torch.distributed.elastic's
    # @record: training steps of an MLP fit in the ~6 GiB left; the evaluation of 131072 rows at
    # once (hidden activations 8 GiB) does not; @record writes the error file and torchrun's
    # ChildFailedError summary carries the child's traceback as its root cause.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "train_ddp_record.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("""import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda()
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    free, _ = torch.cuda.mem_get_info()
    prefetch_buffer = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
    for step in range(1, 31):
        x = torch.randn(2048, 4096, device="cuda")
        loss = F.mse_loss(model(x), x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 10 == 0 and rank == 0:
            print(f"[rank{rank}] step {step} loss {loss.item():.5f}", flush=True)
    if rank == 0:
        print(f"[rank{rank}] evaluating on 131072 validation rows", flush=True)
    model.eval()
    val_x = torch.randn(131072, 4096, device="cuda")
    with torch.no_grad():
        val_loss = F.mse_loss(model(val_x), val_x)
    print(f"[rank{rank}] val loss {val_loss.item():.5f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
""")
    sys.stdout.flush()
    rc = subprocess.call(["torchrun", "--nproc_per_node=1", "--master_port=29571", path], cwd=WORK)
    sys.exit(rc)


def s17_ulimit_v_cuda_init():
    # Look-alike shape (a host limit, not the card): a job script caps the virtual address space
    # with `ulimit -v` (as some clusters do) and starts training; the CUDA driver cannot reserve
    # its address range at the first CUDA call, so the error (an "out of memory" CUDA error, or a
    # driver initialization failure) comes from the cap, with the card empty. The wrapper prints
    # the child's exit status.
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "train_small.py"), "w", encoding="utf-8") as fh:
        fh.write("""import torch
import torch.nn as nn

print(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}", flush=True)
model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 10)).to("cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    x = torch.randn(256, 1024, device="cuda")
    loss = model(x).logsumexp(-1).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print(f"final loss {loss.item():.4f}")
""")
    script = os.path.join(WORK, "job_ulimit.sh")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write("""#!/usr/bin/env bash
# job script: the cluster's per-job memory cap, then training
set -u
ulimit -v 12000000
echo "[job] virtual memory limit: $(ulimit -v) KiB"
echo "[job] starting train_small.py"
python3 train_small.py
status=$?
echo "[job] train_small.py exited with status $status"
exit $status
""")
    sys.stdout.flush()
    os.chdir(WORK)
    os.execv("/bin/bash", ["bash", script])


def s17_bash_rss_guard_killed():
    # Look-alike (host memory, a "Killed" exit): a wrapper shell script runs an indexing job in the
    # background under a resident-memory guard (3 GiB, polled from /proc, logged to a file only);
    # the job encodes shards on the card but keeps every shard's embeddings in host memory, and the
    # guard kills it with SIGKILL: bash reports "Killed" and the wrapper exits 137.
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "build_index.py"), "w", encoding="utf-8") as fh:
        fh.write("""import time

import torch

encoder = torch.nn.Linear(1024, 1024).cuda().half()
print(f"encoder on {torch.cuda.get_device_name(0)}", flush=True)
shards = []
for shard in range(32):
    x = torch.randn(131072, 1024, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        emb = encoder(x).float().cpu()
    shards.append(emb)
    print(f"shard {shard:02d}: {emb.shape[0]} vectors, {len(shards) * 512} MiB in host memory",
          flush=True)
    time.sleep(0.5)
torch.save(torch.cat(shards), "index.pt")
print("index written")
""")
    script = os.path.join(WORK, "run_index.sh")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write("""#!/usr/bin/env bash
set -u
LIMIT_KB=$((3 * 1024 * 1024))
echo "$(date -u +%FT%TZ) run_index: starting build_index.py (memory limit ${LIMIT_KB} kB)"
python3 build_index.py &
pid=$!
while kill -0 "$pid" 2> /dev/null; do
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2> /dev/null)
  if [ -n "$rss" ] && [ "$rss" -gt "$LIMIT_KB" ]; then
    echo "$(date -u +%FT%TZ) rss ${rss} kB over ${LIMIT_KB} kB: kill -9 $pid" >> guard.log
    kill -9 "$pid"
  fi
  sleep 0.1
done
wait "$pid"
status=$?
echo "$(date -u +%FT%TZ) run_index: build_index.py exit status $status"
exit $status
""")
    sys.stdout.flush()
    os.chdir(WORK)
    os.execv("/bin/bash", ["bash", script])


def s17_subprocess_died_sigkill():
    # Look-alike (host memory, a child killed by SIGKILL): a pipeline driver (timestamped logging)
    # runs its tokenize stage as a child with subprocess; the child keeps every shard in host
    # memory (tqdm bar) and a resident-memory watchdog in the driver kills it (SIGKILL) past
    # 3 GiB without a word; the driver raises CalledProcessError ("died with <Signals.SIGKILL:
    # 9>"). No CUDA at all.
    run_user_script("pipeline", """import logging
import subprocess
import sys
import textwrap
import threading
import time

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("pipeline")
CHILD = textwrap.dedent('''
    import time
    import numpy as np
    from tqdm import tqdm

    shards = []
    for shard in tqdm(range(48), desc="tokenize", mininterval=0):
        shards.append(np.ones((128, 1 << 20), dtype=np.float32))
        time.sleep(0.3)
    np.save("tokens.npy", np.concatenate(shards))
''')
with open("tokenize_stage.py", "w") as fh:
    fh.write(CHILD)


def watchdog(proc, limit_kb):
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as fh:
                rss = next(int(l.split()[1]) for l in fh if l.startswith("VmRSS"))
        except (OSError, StopIteration):
            rss = 0
        if rss > limit_kb:
            proc.kill()
            return
        time.sleep(0.1)


for stage in ["tokenize"]:
    log.info("stage 1/3 %s: starting", stage)
    cmd = [sys.executable, "tokenize_stage.py", "--shards", "48"]
    proc = subprocess.Popen(cmd)
    threading.Thread(target=watchdog, args=(proc, 3 * 1024 * 1024), daemon=True).start()
    rc = proc.wait()
    if rc != 0:
        raise subprocess.CalledProcessError(rc, cmd)
    log.info("stage 1/3 %s: done", stage)
""")


def s17_compile_recompile_card_full():
    # torch.compile of a small MLP: the first call (batch 64) compiles and runs; then the script
    # takes every byte the caching allocator can get for a feature cache (in 1 GiB / 64 MiB /
    # 2 MiB blocks until it is refused); the next call with batch 96 recompiles (dynamic shapes)
    # and its kernels' load or buffers fail with nothing left on the card.
    run_user_script("compiled_scoring", """import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(2048, 8192), nn.GELU(), nn.Linear(8192, 2048)).cuda().eval()
scorer = torch.compile(model)
with torch.no_grad():
    warm = scorer(torch.randn(64, 2048, device="cuda"))
print(f"compiled and warmed up: {tuple(warm.shape)}", flush=True)
batch = torch.randn(96, 2048, device="cuda")
cache = []
for block in (1 << 30, 64 << 20, 2 << 20):
    while True:
        try:
            cache.append(torch.empty(block, dtype=torch.uint8, device="cuda"))
        except torch.OutOfMemoryError:
            break
print(f"feature cache: {sum(t.numel() for t in cache) / 2**30:.1f} GiB in {len(cache)} blocks",
      flush=True)
with torch.no_grad():
    scores = scorer(batch)
print(f"scores {tuple(scores.shape)}")
""")


def s17_jax_knn_topk_json():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. Retrieval by hand, no grad: a
    # jitted squared-distance + lax.top_k of query batches against 262144 database vectors, one
    # JSON log line per batch; 256 and 1024 queries fit, 16384 queries' distance matrix (16 GiB)
    # is RESOURCE_EXHAUSTED.
    run_user_script("knn_search", """import json
import time

import jax
import jax.numpy as jnp


def log(level, event, **fields):
    print(json.dumps({"ts": round(time.time(), 3), "level": level, "event": event, **fields}),
          flush=True)


@jax.jit
def search(q, db):
    d = (q ** 2).sum(1)[:, None] - 2.0 * q @ db.T + (db ** 2).sum(1)[None, :]
    return jax.lax.top_k(-d, 10)


key_db, key_q = jax.random.split(jax.random.PRNGKey(0))
db = jax.random.normal(key_db, (262144, 256), dtype=jnp.float32)
log("INFO", "index_loaded", vectors=db.shape[0], dim=db.shape[1], device=str(db.devices()))
for batch, n_queries in enumerate([256, 1024, 16384]):
    q = jax.random.normal(jax.random.fold_in(key_q, batch), (n_queries, 256), dtype=jnp.float32)
    t0 = time.time()
    scores, ids = search(q, db)
    ids.block_until_ready()
    log("INFO", "batch_done", batch=batch, queries=n_queries, top1_mean=float(-scores[:, 0].mean()),
        secs=round(time.time() - t0, 3))
""")


def s17_jax_grad_mlp_batches():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A jitted jax.value_and_grad
    # train step of a 4096-16384-4096 MLP with plain SGD; print lines per 10 steps; batches of 256
    # and 1024 fit, a batch of 131072 rows (hidden activations 8 GiB, kept for the backward) is
    # RESOURCE_EXHAUSTED.
    run_user_script("jax_regress", """import jax
import jax.numpy as jnp


def init(key):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (4096, 16384)) * 0.01,
            "w2": jax.random.normal(k2, (16384, 4096)) * 0.01}


def loss_fn(params, x, y):
    h = jax.nn.gelu(x @ params["w1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads), loss


key = jax.random.PRNGKey(0)
params = init(key)
schedule = [256] * 10 + [1024] * 10 + [131072]
for step, batch in enumerate(schedule, start=1):
    x = jax.random.normal(jax.random.fold_in(key, step), (batch, 4096))
    params, loss = train_step(params, x, x)
    if step % 10 == 0 or batch > 1024:
        print(f"step {step} batch {batch} loss {float(loss):.6f}")
""")


def s17_tts_vocoder_long_utterance():
    # A TTS vocoder loop written by hand (HiFi-GAN-like ConvTranspose1d upsampling x256, fp16,
    # inference_mode, timestamped logging): utterances of 400-1200 mel frames fit in the ~4 GiB
    # left; a 240000-frame one (a whole chapter, ~46 min) needs 1-4 GiB per activation and fails;
    # the script wraps the error in its own SynthesisError (raise ... from e).
    run_user_script("synthesize", """import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("tts")
HOP, SR = 256, 22050


class SynthesisError(RuntimeError):
    pass


class Vocoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Conv1d(80, 512, 7, padding=3)
        chans = [512, 256, 128, 64]
        self.ups = nn.ModuleList([nn.ConvTranspose1d(chans[0], chans[1], 16, 8, 4),
                                  nn.ConvTranspose1d(chans[1], chans[2], 16, 8, 4),
                                  nn.ConvTranspose1d(chans[2], chans[3], 8, 4, 2)])
        self.res = nn.ModuleList([nn.Conv1d(c, c, 3, padding=1) for c in chans[1:]])
        self.post = nn.Conv1d(64, 1, 7, padding=3)

    def forward(self, mel):
        x = self.pre(mel)
        for up, res in zip(self.ups, self.res):
            x = F.leaky_relu(up(F.leaky_relu(x, 0.1)), 0.1)
            x = x + res(x)
        return torch.tanh(self.post(x)).squeeze(1)


vocoder = Vocoder().cuda().half().eval()
free, _ = torch.cuda.mem_get_info()
acoustic_model = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
utterances = [("utt_0001", 400), ("utt_0002", 860), ("utt_0003", 1200), ("chapter_07", 240000)]
log.info("synthesizing %d utterances", len(utterances))
for uid, frames in utterances:
    mel = torch.randn(1, 80, frames, device="cuda", dtype=torch.float16)
    t0 = time.time()
    try:
        with torch.inference_mode():
            wav = vocoder(mel)
    except RuntimeError as e:
        raise SynthesisError(f"vocoder failed on {uid} ({frames} frames)") from e
    secs = wav.shape[-1] / SR
    log.info("%s: %d frames -> %.1f s of audio (RTF %.4f)", uid, frames, secs,
             (time.time() - t0) / secs)
""")


def s17_detection_pairwise_iou_nms():
    # Detection post-processing by hand: a "fast NMS" over each image's candidate boxes builds the
    # full pairwise IoU matrix on the card; 1200 and 5000 boxes fit in the ~8 GiB left, 60000
    # boxes (the N x N x 2 corner tensors are 29 GB) do not; the loop logs str(e) on one line and
    # exits 1.
    run_user_script("postprocess_boxes", """import logging
import sys

import torch

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("nms")


def box_iou(a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def fast_nms(boxes, scores, threshold=0.5):
    order = scores.argsort(descending=True)
    boxes = boxes[order]
    iou = box_iou(boxes, boxes).triu_(diagonal=1)
    keep = iou.max(dim=0).values < threshold
    return order[keep]


free, _ = torch.cuda.mem_get_info()
detector = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
torch.manual_seed(0)
for name, n in [("img_000117.jpg", 1200), ("img_000118.jpg", 5000), ("img_000119.jpg", 60000)]:
    xy = torch.rand(n, 2, device="cuda") * 4000
    wh = torch.rand(n, 2, device="cuda") * 300 + 10
    boxes = torch.cat([xy, xy + wh], dim=1)
    scores = torch.rand(n, device="cuda")
    try:
        keep = fast_nms(boxes, scores)
    except RuntimeError as e:
        log.error("%s: NMS failed on %d boxes: %s", name, n, e)
        sys.exit(1)
    log.info("%s: %d candidate boxes, %d kept", name, n, keep.numel())
""")


def s17_hf_caption_inputs_embeds():
    # Captioning by hand, LLaVA-style: a conv patch encoder + projector make 576 image tokens per
    # image, prepended to a prompt's embeddings and passed to generate(inputs_embeds=...) of the
    # Llama checkpoint; batches of 8 and 16 images fit in the ~4 GiB left, 256 images' prefill
    # (KV cache 9 GiB) do not. One print line per batch.
    run_user_script("caption_images", """import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM

torch.manual_seed(0)
lm = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
lm.eval()
vision = nn.Sequential(nn.Conv2d(3, 1024, 14, stride=14), nn.GELU()).cuda().to(torch.bfloat16)
projector = nn.Linear(1024, 2048).cuda().to(torch.bfloat16)
prompt = torch.randint(3, 32000, (1, 10), device="cuda")
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
image_cache = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
for batch_idx, n_images in enumerate([8, 16, 256]):
    images = torch.rand(n_images, 3, 336, 336, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        prefix = projector(vision(images).flatten(2).transpose(1, 2))
        text = lm.get_input_embeddings()(prompt).expand(n_images, -1, -1)
        embeds = torch.cat([prefix, text], dim=1)
        mask = torch.ones(embeds.shape[:2], dtype=torch.long, device="cuda")
        captions = lm.generate(inputs_embeds=embeds, attention_mask=mask, max_new_tokens=32,
                               do_sample=False, pad_token_id=0)
    print(f"batch {batch_idx}: {n_images} images ({embeds.shape[1]} input tokens each) -> "
          f"captions of {captions.shape[1]} tokens")
""".replace("@CKPT@", CKPT))


def s17_hf_reward_hidden_states():
    # Reward scoring by hand: AutoModelForSequenceClassification (num_labels=1; the load warns
    # that score.weight is newly initialized) run with output_hidden_states=True to also keep a
    # last-token feature; one JSON line per batch; 32 x 512 tokens fit in the ~4 GiB left, the
    # 32 x 4096 batch's nine kept hidden states (4.5 GiB) do not.
    run_user_script("score_rewards", """import json

import torch
from transformers import AutoModelForSequenceClassification

model = AutoModelForSequenceClassification.from_pretrained("@CKPT@", num_labels=1,
                                                           dtype=torch.bfloat16,
                                                           device_map="cuda")
model.config.pad_token_id = 0
model.eval()
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
policy = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
features = []
for batch_idx, seq_len in enumerate([512, 512, 1024, 4096]):
    ids = torch.randint(3, 32000, (32, seq_len), device="cuda")
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True)
    features.append(out.hidden_states[-1][:, -1].float().cpu())
    rewards = out.logits.squeeze(-1).float()
    print(json.dumps({"batch": batch_idx, "seq_len": seq_len, "n": ids.shape[0],
                      "reward_mean": round(rewards.mean().item(), 4),
                      "reward_std": round(rewards.std().item(), 4)}), flush=True)
""".replace("@CKPT@", CKPT))


def s17_hf_compile_loaded_model():
    # Conversion for serving: the Llama checkpoint is wrapped in torch.compile and warmed up at
    # the serving shape (16 x 4096 tokens, no_grad); the compiled graph's logits buffer
    # (16 x 4096 x 32000 bf16 = 4 GiB) does not fit in the ~2 GiB left: the OOM comes from
    # inside Inductor's generated code. Stage lines printed by the script.
    run_user_script("compile_server", """import time

import torch
from transformers import AutoModelForCausalLM

print("[serve] loading model", flush=True)
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
print("[serve] compiling model (torch.compile, mode=default)", flush=True)
compiled = torch.compile(model)
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
kv_pool = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device="cuda")
ids = torch.randint(3, 32000, (16, 4096), device="cuda")
print(f"[serve] warm-up at the serving shape {tuple(ids.shape)}", flush=True)
t0 = time.time()
with torch.no_grad():
    logits = compiled(input_ids=ids).logits
print(f"[serve] warm-up done in {time.time() - t0:.1f} s; ready", flush=True)
""".replace("@CKPT@", CKPT))


def s17_lightning_sample_callback():
    # Lightning fit (TQDM bar with train_loss) of a small LM with batches of 8 x 512; a user
    # Callback's on_train_batch_end samples at batch 20 by running the model on 256 prompts of
    # 2048 tokens: the fp32 logits (64 GiB) do not fit in the ~16 GiB left.
    run_user_script("train_with_samples", """import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

V = 32000


class Texts(Dataset):
    def __len__(self):
        return 800

    def __getitem__(self, i):
        return torch.randint(1, V, (513,), generator=torch.Generator().manual_seed(i))


class LM(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, 512)
        layer = nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=4)
        self.head = nn.Linear(512, V)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)))

    def training_step(self, batch, batch_idx):
        logits = self(batch[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)


class SampleTable(L.Callback):
    def __init__(self, every=20, n=256, length=2048):
        self.every, self.n, self.length = every, n, length

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if batch_idx == 0 or batch_idx % self.every:
            return
        pl_module.print(f"sampling {self.n} sequences of {self.length} tokens for the table")
        with torch.no_grad():
            prompts = torch.randint(1, V, (self.n, self.length), device=pl_module.device)
            tokens = pl_module(prompts).argmax(-1)
        pl_module.print(f"sampled {tuple(tokens.shape)}")


if __name__ == "__main__":
    torch.zeros(1, device="cuda")
    free, _ = torch.cuda.mem_get_info()
    teacher = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                        enable_checkpointing=False, log_every_n_steps=5,
                        callbacks=[SampleTable()])
    trainer.fit(LM(), DataLoader(Texts(), batch_size=8))
""")


def s17_accelerate_init_card_held():
    # Start-up with another process holding every byte of the card (run.sh's holder, 0 GiB left):
    # an accelerate script logs its start, builds Accelerator(mixed_precision="bf16") and
    # prepares a model; the first CUDA call (context creation) fails.
    run_user_script("accel_train", """import logging

import torch
import torch.nn as nn
from accelerate import Accelerator
from accelerate.logging import get_logger

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
logger = get_logger(__name__)
accelerator = Accelerator(mixed_precision="bf16")
logger.info(accelerator.state, main_process_only=False)
model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
logger.info("preparing model and optimizer")
model, optimizer = accelerator.prepare(model, optimizer)
for step in range(100):
    x = torch.randn(64, 1024, device=accelerator.device)
    loss = model(x).pow(2).mean()
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
logger.info("done")
""")


def s17_dataloader_too_many_open_files():
    # Look-alike (file descriptors, not memory): a job script lowers the open-file limit
    # (`ulimit -n 256`, as some clusters set it); the training script caches every decoded batch
    # from a 4-worker DataLoader for later epochs; with the default file_descriptor sharing
    # strategy each cached tensor keeps a descriptor open, and receiving the next batch fails
    # ("received 0 items of ancdata" / "Too many open files").
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "train_cached.py"), "w", encoding="utf-8") as fh:
        fh.write("""import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class Features(Dataset):
    def __len__(self):
        return 100000

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return {f"field_{k}": torch.randn(16, generator=g) for k in range(8)} | {"label": i % 2}


model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 1)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(Features(), batch_size=64, num_workers=4)
cache = []
for batch in tqdm(loader, desc="epoch 0 (caching)"):
    cache.append(batch)
    x = torch.cat([batch[f"field_{k}"] for k in range(8)], dim=1).cuda()
    y = batch["label"].float().cuda()
    loss = nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(1), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print(f"cached {len(cache)} batches")
""")
    script = os.path.join(WORK, "job_nofile.sh")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write("""#!/usr/bin/env bash
set -u
ulimit -n 256
echo "[job] open files limit: $(ulimit -n)"
python3 train_cached.py
status=$?
echo "[job] train_cached.py exited with status $status"
exit $status
""")
    sys.stdout.flush()
    os.chdir(WORK)
    os.execv("/bin/bash", ["bash", script])


def s17_nan_loss_after_memory_report():
    # Look-alike (memory is fine; the loss is not): a training loop logs the card's memory every
    # 10 steps (allocated / reserved / total near the card's size, with a "high memory usage"
    # warning); a corrupt sample (an inf feature) at iteration 37 makes the loss NaN and the loop
    # raises FloatingPointError("Loss became infinite or NaN at iteration=37!").
    run_user_script("train_detector", """import logging
import math

import torch
import torch.nn as nn

logging.basicConfig(format="[%(asctime)s] %(name)s %(levelname)s: %(message)s", level=logging.INFO)
log = logging.getLogger("trainer")
model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 80)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
free, total = torch.cuda.mem_get_info()
feature_cache = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
for it in range(1, 101):
    x = torch.randn(256, 1024, device="cuda")
    if it == 37:
        x[3, 17] = float("inf")
    y = torch.randint(0, 80, (256,), device="cuda")
    loss = nn.functional.cross_entropy(model(x), y)
    if not math.isfinite(loss.item()):
        raise FloatingPointError(f"Loss became infinite or NaN at iteration={it}!\\n"
                                 f"loss_dict = {{'loss_cls': {loss.item()}}}")
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if it % 10 == 0:
        alloc, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
        log.info("iter: %d  loss: %.4f  max_mem: %.0fM  reserved: %.0fM  total: %.0fM", it,
                 loss.item(), torch.cuda.max_memory_allocated() / 2**20, reserved / 2**20,
                 total / 2**20)
        if reserved / total > 0.9:
            log.warning("high GPU memory usage: %.0f%% of the card reserved",
                        100 * reserved / total)
""")


def s17_asr_long_file_manual_attention():
    # ASR by hand: a small conformer-like encoder (conv subsampling x4, manual softmax(q k^T)
    # attention, fp16, inference_mode) and greedy CTC decoding per file, with timestamped logs;
    # 30 s and 5 min files fit in the ~8 GiB left; a 2-hour lecture sent whole (180000 frames:
    # attention scores 4 x 180000^2 fp16 = 241 GiB) does not.
    run_user_script("transcribe", """import logging

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("asr")


class Block(nn.Module):
    def __init__(self, d=256, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))

    def forward(self, x):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(self.norm1(x)).view(1, T, 3, self.heads, D // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / (D // self.heads) ** 0.5
        x = x + self.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(1, T, D))
        return x + self.ff(self.norm2(x))


class Encoder(nn.Module):
    def __init__(self, vocab=128):
        super().__init__()
        self.subsample = nn.Sequential(nn.Conv1d(80, 256, 3, stride=2, padding=1), nn.SiLU(),
                                       nn.Conv1d(256, 256, 3, stride=2, padding=1), nn.SiLU())
        self.blocks = nn.Sequential(*[Block() for _ in range(6)])
        self.ctc = nn.Linear(256, vocab)

    def forward(self, feats):
        return self.ctc(self.blocks(self.subsample(feats).transpose(1, 2)))


model = Encoder().cuda().half().eval()
free, _ = torch.cuda.mem_get_info()
lm_rescorer = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
files = [("call_0412.wav", 30.0), ("meeting_0019.wav", 300.0), ("lecture_02.wav", 7200.0)]
for name, seconds in files:
    frames = int(seconds * 100)
    log.info("decoding %s (%.1f s, %d feature frames)", name, seconds, frames)
    feats = torch.randn(1, 80, frames, device="cuda", dtype=torch.float16)
    with torch.inference_mode():
        ids = model(feats).argmax(-1)[0]
    tokens = torch.unique_consecutive(ids)
    log.info("%s: %d tokens after CTC collapse", name, int((tokens != 0).sum()))
""")


def s17_video_frames_float_cast():
    # Video features by hand (tqdm over videos): frames decoded on the card as uint8 (stand-in for
    # a GPU decoder), converted with .float().div(255) and run through a frame encoder; 300 and 600
    # frames of 720p fit in the ~16 GiB left; 1200 frames of 1080p (7.5 GB as uint8) fit, but
    # their float32 copy (30 GB) does not.
    run_user_script("video_embed", """import torch
import torch.nn as nn
from tqdm import tqdm

encoder = nn.Sequential(nn.Conv2d(3, 16, 7, stride=4, padding=3), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 128)).cuda().eval()
free, _ = torch.cuda.mem_get_info()
clip_model = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")


def decode(n_frames, height, width):
    return torch.randint(0, 256, (n_frames, 3, height, width), dtype=torch.uint8, device="cuda")


videos = [("v_0001.mp4", 300, 720, 1280), ("v_0002.mp4", 600, 720, 1280),
          ("v_0003.mp4", 1200, 1080, 1920)]
for name, n, h, w in tqdm(videos, desc="videos"):
    frames = decode(n, h, w)
    clip = frames.float().div_(255)
    with torch.no_grad():
        emb = torch.cat([encoder(chunk) for chunk in clip.split(64)]).mean(0)
    tqdm.write(f"{name}: {n} frames {w}x{h}, embedding norm {emb.norm().item():.3f}")
    del frames, clip
""")


def s17_train_mid_epoch_eval_cat():
    # A hand-written multi-label training loop (tqdm bar with loss) that evaluates mid-epoch at
    # step 50: it keeps every eval batch's logits on the card (48 x 4096 x 20000 fp32 = 15.7 GB,
    # which fits in the ~20 GiB left) and then torch.cat's them for the metric, which needs
    # another 15.7 GB.
    run_user_script("train_multilabel", """import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

LABELS = 20000
model = nn.Sequential(nn.Linear(2048, 4096), nn.ReLU(), nn.Linear(4096, LABELS)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
free, _ = torch.cuda.mem_get_info()
text_encoder = torch.empty(free - 20 * (1 << 30), dtype=torch.uint8, device="cuda")


def evaluate():
    model.eval()
    all_logits = []
    with torch.no_grad():
        for _ in tqdm(range(48), desc="eval", leave=False):
            x = torch.randn(4096, 2048, device="cuda")
            all_logits.append(model(x))
    logits = torch.cat(all_logits)
    model.train()
    return (logits > 0).float().mean().item()


bar = tqdm(range(1, 201), desc="train")
for step in bar:
    x = torch.randn(256, 2048, device="cuda")
    y = (torch.rand(256, LABELS, device="cuda") < 0.001).float()
    loss = F.binary_cross_entropy_with_logits(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    bar.set_postfix(loss=f"{loss.item():.4f}")
    if step % 50 == 0:
        tqdm.write(f"step {step}: starting evaluation")
        tqdm.write(f"step {step}: eval accuracy {evaluate():.4f}")
""")


def s17_hf_gptq_calibration_hooks():
    # Quantization by hand (GPTQ-like): forward hooks on every nn.Linear of the Llama checkpoint
    # cache each layer's calibration input upcast to fp32 (for the X^T X statistics) while 32 x
    # 2048 calibration tokens run through the model; the cached inputs (~4.9 GiB a layer: q, k and
    # v each keep their own fp32 copy) outgrow the ~6 GiB left in the second layer, inside the
    # hooked forward. Stage logs.
    run_user_script("quantize_gptq", """import logging
from collections import defaultdict

import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("gptq")
log.info("loading @CKPT@")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
other_model = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
inputs = defaultdict(list)


def cache_input(name):
    def hook(module, args):
        inputs[name].append(args[0].detach().flatten(0, -2).float())
    return hook


linears = {n: m for n, m in model.named_modules()
           if isinstance(m, nn.Linear) and n.startswith("model.layers.")}
handles = [m.register_forward_pre_hook(cache_input(n)) for n, m in linears.items()]
calib = torch.randint(3, 32000, (32, 2048), device="cuda")
log.info("calibrating: collecting the inputs of %d linear layers on %d x %d tokens",
         len(linears), *calib.shape)
with torch.no_grad():
    model(input_ids=calib)
for h in handles:
    h.remove()
log.info("quantizing %d layers to 4 bits", len(inputs))
for name, xs in inputs.items():
    x = torch.cat(xs)
    hessian = x.T @ x / x.shape[0]
    log.info("%s: H %s", name, tuple(hessian.shape))
""".replace("@CKPT@", CKPT))


def s17_amp_deprecated_warnings_backward():
    # Warnings above the error: a training script with the deprecated torch.cuda.amp.autocast /
    # GradScaler spellings (FutureWarnings printed first) trains a conv net on 256 px crops, then
    # switches to 1024 px crops (batch 16) at step 11, whose fp16 activations (2 GiB each, kept
    # for the backward) do not fit in the ~6 GiB left: the forward under autocast fails.
    run_user_script("train_denoiser", """import torch
import torch.nn as nn

model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
                      nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
                      nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
                      nn.Conv2d(64, 3, 3, padding=1)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
scaler = torch.cuda.amp.GradScaler()
free, _ = torch.cuda.mem_get_info()
dataset_cache = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
for step in range(1, 31):
    crop = 256 if step <= 10 else 1024
    clean = torch.rand(16, 3, crop, crop, device="cuda")
    noisy = clean + 0.1 * torch.randn_like(clean)
    with torch.cuda.amp.autocast():
        loss = nn.functional.mse_loss(model(noisy), clean)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step:3d} crop {crop} loss {loss.item():.5f}")
""")


def s17_dist_flat_grad_allreduce():
    # A hand-written data-parallel step (NCCL process group, world size 1, env:// in-process,
    # rank-prefixed logging): the gradients of an 8-layer 8192-wide MLP (2 GiB) are flattened
    # with torch.cat for one all_reduce; the flat copy needs 2 GiB more than the ~1 GiB left
    # after the backward.
    run_user_script("ddp_by_hand", """import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29583")
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")
rank = int(os.environ["RANK"])
logging.basicConfig(format=f"%(asctime)s [rank{rank}] %(levelname)s: %(message)s",
                    level=logging.INFO)
log = logging.getLogger("ddp")
torch.cuda.set_device(0)
dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
dist.barrier()
log.info("process group ready: world size %d", dist.get_world_size())
model = nn.Sequential(*[nn.Sequential(nn.Linear(8192, 8192), nn.GELU()) for _ in range(8)]).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
activation_cache = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
for step in range(1, 11):
    x = torch.randn(64, 8192, device="cuda")
    loss = model(x).pow(2).mean()
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    flat = torch.cat([g.flatten() for g in grads])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    log.info("step %d loss %.6f", step, loss.item())
dist.destroy_process_group()
""")


def s17_recsys_embedding_tables():
    # Start-up of a recommender (rich traceback installed): embedding tables are built directly
    # on the card with nn.EmbeddingBag(..., device="cuda"); tables of 1M, 5M and 10M rows x 128
    # fit in the ~16 GiB left, the 40M-row user_id table (19 GiB) does not.
    run_user_script("build_recsys", """import logging

import torch
import torch.nn as nn
from rich.traceback import install

install(show_locals=False)
logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("recsys")
torch.zeros(1, device="cuda")
free, _ = torch.cuda.mem_get_info()
dense_tower = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")
TABLES = {"category_id": 1_000_000, "item_id": 5_000_000, "seller_id": 10_000_000,
          "user_id": 40_000_000}
DIM = 128
tables = nn.ModuleDict()
for name, rows in TABLES.items():
    log.info("allocating embedding table %s: %d x %d (%.1f GiB)", name, rows, DIM,
             rows * DIM * 4 / 2**30)
    tables[name] = nn.EmbeddingBag(rows, DIM, mode="sum", device="cuda")
log.info("model ready: %.1fB embedding parameters",
         sum(p.numel() for p in tables.parameters()) / 1e9)
""")


def s17_jax_dpsgd_per_example_grads():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. DP-SGD by hand: per-example
    # gradients with jax.vmap(jax.grad(loss)) of a 4096 x 4096 layer, clipped and averaged, in a
    # jitted step; batches of 16 fit (1 GiB of per-example grads), a batch of 512 (32 GiB) is
    # RESOURCE_EXHAUSTED. Logged with timestamps.
    run_user_script("dp_train", """import logging

import jax
import jax.numpy as jnp

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("dpsgd")


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


@jax.jit
def dp_step(w, xs, ys, key):
    grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    norms = jnp.sqrt((grads ** 2).sum(axis=(1, 2), keepdims=True))
    grads = grads / jnp.maximum(1.0, norms / 1.0)
    noise = jax.random.normal(key, w.shape) * 1.1 / xs.shape[0]
    return w - 0.1 * (grads.mean(0) + noise), norms.mean()


key = jax.random.PRNGKey(0)
w = jax.random.normal(key, (4096, 4096)) * 0.01
for step, batch in enumerate([16] * 5 + [512], start=1):
    k1, k2, k3 = jax.random.split(jax.random.fold_in(key, step), 3)
    xs = jax.random.normal(k1, (batch, 1, 4096))
    ys = jax.random.normal(k2, (batch, 1, 4096))
    w, mean_norm = dp_step(w, xs, ys, k3)
    log.info("step %d batch %d mean grad norm %.4f", step, batch, float(mean_norm))
""")


# --------------------------------------------------------------------------- session 19 (blind):
# a uvicorn-style embedding server and a paged KV pool that grows, a feature-extraction pipeline,
# PEFT with modules_to_save, Trainer's eval_on_start, a pinned-memory DataLoader with progressive
# resizing (expandable segments), a best-weights deepcopy, timm and torchvision models, CuPy and
# Numba allocations, Flax and Equinox under JAX, a torch.func Hessian, a Lightning resume on a
# card another job holds, sentence-transformers' encode, fp32 master weights, an OOM logged by a
# gradient-accumulation loop, a collapsed MoE router, and 5 look-alikes (a gloo collective
# timeout, a kernel launch out of registers, a host MemoryError in scikit-learn, torch.quantile's
# size limit, a donated JAX buffer)


def s19_uvicorn_embed_request_log():
    # An embedding service logged the way uvicorn logs (level prefix, access lines), replaying a
    # request log: small requests answer 200; a request of 32 texts x 4096 tokens makes the
    # model's attention scores (16 GiB fp16) with ~6 GiB left, logged as "Exception in ASGI
    # application" with a 500 line; the replay then shuts down and exits 1.
    run_user_script("serve_embed", '''import logging
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class LevelPrefix(logging.Filter):
    def filter(self, record):
        record.levelprefix = f"{record.levelname}:".ljust(10)
        return True


handler = logging.StreamHandler(sys.stdout)
handler.addFilter(LevelPrefix())
handler.setFormatter(logging.Formatter("%(levelprefix)s%(message)s"))
logging.basicConfig(level=logging.INFO, handlers=[handler])
log = logging.getLogger("uvicorn.error")
access = logging.getLogger("uvicorn.access")


class Encoder(nn.Module):
    def __init__(self, vocab=32000, dim=1024, heads=16):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, ids):
        x = self.embed(ids)
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) / (d // self.heads) ** 0.5
        x = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)
        return F.normalize(self.out(x).mean(1), dim=-1)


model = None
response_cache = None


def startup():
    global model, response_cache
    log.info("Waiting for application startup.")
    model = Encoder().cuda().half().eval()
    free, _ = torch.cuda.mem_get_info()
    response_cache = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
    log.info("Application startup complete.")
    log.info("Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)")


@torch.inference_mode()
def embed_texts(request):
    ids = torch.randint(3, 32000, (request["n"], request["tokens"]), device="cuda")
    return model(ids).float().cpu()


def handle(client, request):
    try:
        vectors = embed_texts(request)
        status = "200 OK"
    except Exception:
        log.exception("Exception in ASGI application\\n")
        status = "500 Internal Server Error"
    access.info('%s - "POST /v1/embeddings HTTP/1.1" %s', client, status)
    return status


REPLAY = [("127.0.0.1:53122", {"n": 8, "tokens": 512}),
          ("127.0.0.1:53124", {"n": 32, "tokens": 512}),
          ("10.0.3.17:41876", {"n": 16, "tokens": 1024}),
          ("127.0.0.1:53130", {"n": 8, "tokens": 2048}),
          ("10.0.3.17:41880", {"n": 32, "tokens": 4096}),
          ("127.0.0.1:53136", {"n": 8, "tokens": 512})]

if __name__ == "__main__":
    log.info("Started server process [%d]", os.getpid())
    startup()
    failed = sum(handle(client, request) != "200 OK" for client, request in REPLAY)
    log.info("Shutting down")
    log.info("Waiting for application shutdown.")
    log.info("Application shutdown complete.")
    log.info("Finished server process [%d]", os.getpid())
    sys.exit(1 if failed else 0)
''')


def s19_paged_kv_pool_grow():
    # A hand-written paged KV cache for a serving loop: a pool of 4096 blocks (2 MiB each, 8 GiB)
    # beside the weights; requests are admitted (logged) until the pool is full, and the loop
    # doubles the pool: the new 16 GiB pool does not fit in the ~12 GiB left.
    run_user_script("kvserve", '''import logging
import random

import torch

logging.basicConfig(format="%(asctime)s %(levelname)s kvserve: %(message)s", level=logging.INFO)
log = logging.getLogger("kvserve")
LAYERS, KV_HEADS, HEAD_DIM, BLOCK = 32, 8, 128, 16
BLOCK_BYTES = 2 * LAYERS * BLOCK * KV_HEADS * HEAD_DIM * 2


def new_pool(n_blocks):
    return torch.empty((n_blocks, 2, LAYERS, BLOCK, KV_HEADS, HEAD_DIM), dtype=torch.float16,
                       device="cuda")


def grow_pool(pool):
    n = pool.shape[0]
    log.info("KV pool full (%d blocks in use), growing to %d blocks (%.1f GiB)", n, 2 * n,
             2 * n * BLOCK_BYTES / 2**30)
    bigger = new_pool(2 * n)
    bigger[:n].copy_(pool)
    return bigger


free, total = torch.cuda.mem_get_info()
weights = torch.empty(free - 20 * (1 << 30), dtype=torch.uint8, device="cuda")
log.info("model weights resident: %.1f GiB of %.1f GiB", weights.numel() / 2**30, total / 2**30)
pool = new_pool(4096)
log.info("KV pool: %d blocks of %d tokens (%.1f GiB)", pool.shape[0], BLOCK,
         pool.shape[0] * BLOCK_BYTES / 2**30)
rng = random.Random(7)
used = 0
for i in range(40):
    prompt = rng.randint(500, 7000)
    need = -(-(prompt + 256) // BLOCK)
    if used + need > pool.shape[0]:
        pool = grow_pool(pool)
    used += need
    log.info("request r-%04d admitted: prompt %d tokens, %d blocks (pool %d/%d)", i, prompt, need,
             used, pool.shape[0])
''')


def s19_hf_pipeline_feature_extraction():
    # A feature-extraction pipeline (LlamaModel from the causal-LM checkpoint: the load report
    # names the unused lm_head) embeds 512 passages of 2000 words 64 at a time, with ~1.5 GiB
    # left beside an index buffer: the first batch's MLP does not fit.
    run_user_script("embed_passages", _WORD_TOKENIZER + '''
import torch
from transformers import pipeline

extractor = pipeline("feature-extraction", model="@CKPT@", tokenizer=word_tokenizer(),
                     dtype=torch.bfloat16, device=0)
free, _ = torch.cuda.mem_get_info()
index_buffer = torch.empty(free - 1536 * (1 << 20), dtype=torch.uint8, device="cuda")
passages = [" ".join(f"w{(i * 13 + j) % 31990 + 3}" for j in range(2000)) for i in range(512)]
print(f"embedding {len(passages)} passages with {type(extractor.model).__name__}", flush=True)
features = extractor(passages, batch_size=64, return_tensors=True,
                     tokenize_kwargs={"truncation": True, "max_length": 2048})
print(len(features), features[0].shape)
'''.replace("@CKPT@", CKPT))


def s19_peft_modules_to_save_first_step():
    # LoRA with modules_to_save=["embed_tokens", "lm_head"] (131M trainable parameters, full
    # copies of both matrices); with ~700 MiB left the forward and backward fit, the first AdamW
    # step (state and foreach temporaries for 131M bf16 parameters) does not.
    run_user_script("lora_new_tokens", '''import torch
from peft import LoraConfig, get_peft_model
from tqdm import tqdm
from transformers import AutoModelForCausalLM

torch.manual_seed(0)
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
config = LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                    modules_to_save=["embed_tokens", "lm_head"], task_type="CAUSAL_LM")
model = get_peft_model(model, config)
model.print_trainable_parameters()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
teacher_cache = torch.empty(free - 700 * (1 << 20), dtype=torch.uint8, device="cuda")
bar = tqdm(range(1, 201), desc="sft")
for step in bar:
    ids = torch.randint(3, 32000, (1, 256), device="cuda")
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    bar.set_postfix(loss=f"{loss.item():.4f}")
'''.replace("@CKPT@", CKPT))


def s19_hf_trainer_eval_on_start():
    # Trainer with eval_on_start=True: the evaluation before the first training step runs eval
    # batches of 64 x 2048 tokens; their logits (8 GiB bf16) do not fit in the ~6 GiB left.
    run_user_script("sft_eval_first", '''import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, seq, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(3, 32000, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16)
args = TrainingArguments(output_dir="sft-eval-first", per_device_train_batch_size=4,
                         per_device_eval_batch_size=64, eval_strategy="steps", eval_steps=50,
                         eval_on_start=True, max_steps=200, logging_steps=10, bf16=True,
                         save_strategy="no", report_to="none")
trainer = Trainer(model=model, args=args, train_dataset=Tokens(1024, 512, 0),
                  eval_dataset=Tokens(512, 2048, 1))
free, _ = torch.cuda.mem_get_info()
reference_logprobs = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
trainer.train()
'''.replace("@CKPT@", CKPT))


def s19_dataloader_pin_memory_progressive():
    # Progressive resizing with a pinned-memory DataLoader (2 workers, whole batches of float
    # images made on the CPU) and expandable segments set by the script; the batch at 1536 px
    # (1.7 GiB) cannot be copied to the card with ~1.5 GiB left: the OOM is the `.to("cuda",
    # non_blocking=True)` line under a tqdm bar.
    run_user_script("train_progressive", '''import os

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

SIZES = [256, 320, 384, 512, 640, 768, 1024, 1536, 2048]


class ProgressiveImages(Dataset):
    def __len__(self):
        return len(SIZES)

    def __getitem__(self, i):
        s = SIZES[i]
        images = torch.empty(64, 3, s, s)
        masks = torch.randint(0, 21, (64, s // 8, s // 8))
        return images, masks


model = nn.Sequential(nn.Conv2d(3, 8, 8, stride=8), nn.ReLU(), nn.Conv2d(8, 21, 1)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loader = DataLoader(ProgressiveImages(), batch_size=None, num_workers=2, pin_memory=True)
free, _ = torch.cuda.mem_get_info()
feature_store = torch.empty(free - 1536 * (1 << 20), dtype=torch.uint8, device="cuda")
print(f"progressive resizing {SIZES[0]} -> {SIZES[-1]} px, pin_memory=True", flush=True)
for images, masks in tqdm(loader, desc="epoch 0"):
    images = images.to("cuda", non_blocking=True)
    masks = masks.to("cuda", non_blocking=True)
    loss = F.cross_entropy(model(images), masks)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    tqdm.write(f"size {images.shape[-1]}: loss {loss.item():.4f}")
''')


def s19_best_state_deepcopy():
    # Keeping the best weights and optimizer state in memory with copy.deepcopy of the state
    # dicts after a validation: the card holds the training set, the 2 GiB model, fused Adam's
    # 4 GiB state and the last gradients; the GPU-side copy does not fit in what is left.
    run_user_script("train_keep_best", '''import copy
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="[%(asctime)s] %(levelname)s - %(message)s", level=logging.INFO)
log = logging.getLogger("train")
model = nn.Sequential(nn.Linear(8192, 32768), nn.GELU(), nn.Linear(32768, 8192)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4, fused=True)
free, _ = torch.cuda.mem_get_info()
rows = (free - 8 * (1 << 30)) // (8192 * 4)
train_x = torch.randn(rows, 8192, device="cuda")
log.info("train set on GPU: %d rows x 8192 (%.1f GiB)", rows, train_x.numel() * 4 / 2**30)
best_loss, best_state = float("inf"), None
for epoch in range(3):
    model.train()
    for step in range(20):
        x = train_x[torch.randint(0, rows, (256,), device="cuda")]
        loss = F.mse_loss(model(x), x)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val_loss = F.mse_loss(model(train_x[:4096]), train_x[:4096]).item()
    log.info("epoch %d: train_loss %.5f val_loss %.5f", epoch, loss.item(), val_loss)
    if val_loss < best_loss:
        best_loss = val_loss
        log.info("new best val_loss %.5f: keeping a copy of the model and optimizer state",
                 val_loss)
        best_state = copy.deepcopy({"model": model.state_dict(),
                                    "optimizer": optimizer.state_dict()})
torch.save(best_state, "best.pt")
''')


def s19_timm_vit_train():
    # timm's vit_base_patch16_384 trained from scratch under bf16 autocast with batches of 256;
    # ~10 GiB are left beside a prefetch buffer: the first forward's saved activations do not fit.
    run_user_script("train_vit", '''import timm
import torch
import torch.nn.functional as F
from tqdm import tqdm

model = timm.create_model("vit_base_patch16_384", pretrained=False, num_classes=1000).cuda()
print(f"vit_base_patch16_384: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params",
      flush=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
free, _ = torch.cuda.mem_get_info()
prefetch = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device="cuda")
for step in tqdm(range(100), desc="train"):
    x = torch.randn(256, 3, 384, 384, device="cuda")
    y = torch.randint(0, 1000, (256,), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
''')


def s19_torchvision_maskrcnn_tiles():
    # torchvision's Mask R-CNN (random weights) with min_size=2048 on 16 aerial tiles of
    # 2048x3072 at once under inference_mode: the backbone's first conv output (6 GiB) does not
    # fit in the ~3.5 GiB left after the transform.
    run_user_script("detect_tiles", '''import torch
from torchvision.models.detection import maskrcnn_resnet50_fpn

model = maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=5, min_size=2048,
                              max_size=4096).cuda().eval()
tiles = [torch.rand(3, 2048, 3072, device="cuda") for _ in range(16)]
free, _ = torch.cuda.mem_get_info()
tile_cache = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
print(f"scanning {len(tiles)} tiles of 2048x3072 (site_0412)", flush=True)
with torch.inference_mode():
    detections = model(tiles)
print(sum(len(d["boxes"]) for d in detections), "objects")
''')


def s19_cupy_stft_archive():
    # CuPy spectrograms (strided frames x window, rfft) of recordings, beside an archive of
    # decoded audio that leaves ~8 GiB: a 60 s and a 120 s file work, the 3600 s file's frames
    # (44 GB) do not: CuPy's OutOfMemoryError with "allocated so far".
    run_user_script("spectrograms", '''import logging

import cupy as cp

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("stft")
SR, N_FFT, HOP = 48000, 4096, 64
free, total = cp.cuda.runtime.memGetInfo()
archive = cp.empty(free - 8 * (1 << 30), dtype=cp.uint8)
log.info("decoded audio archive on the GPU: %.1f GiB", archive.nbytes / 2**30)
window = cp.hanning(N_FFT).astype(cp.float32)
for name, seconds in [("call_001.flac", 60), ("call_002.flac", 120), ("board_meeting.flac", 3600)]:
    signal = cp.random.standard_normal(seconds * SR, dtype=cp.float32)
    n_frames = 1 + (signal.size - N_FFT) // HOP
    frames = cp.lib.stride_tricks.as_strided(signal, shape=(n_frames, N_FFT), strides=(HOP * 4, 4))
    spec = cp.abs(cp.fft.rfft(frames * window, axis=-1)) ** 2
    log.info("%s: %d frames, power spectrogram %s", name, n_frames, spec.shape)
    del spec
''')


def s19_numba_density_grid():
    # Numba CUDA device arrays for a particle-mesh code: particles and a halo catalogue leave
    # ~6 GiB; a 1024^3 float32 grid (4 GiB) is allocated, the 2048^3 grid (32 GiB) is refused by
    # cuMemAlloc (CUDA_ERROR_OUT_OF_MEMORY through numba's CudaAPIError).
    run_user_script("pm_density", '''import logging

import numpy as np
from numba import cuda

logging.basicConfig(format="%(asctime)s [%(levelname)s] pm: %(message)s", level=logging.INFO)
log = logging.getLogger("pm")
ctx = cuda.current_context()
free, total = ctx.get_memory_info()
log.info("CUDA context ready: %.1f GiB free of %.1f GiB", free / 2**30, total / 2**30)
particles = cuda.to_device(np.zeros((2_000_000, 8), dtype=np.float32))
free, _ = ctx.get_memory_info()
halo_catalog = cuda.device_array(free - 6 * (1 << 30), dtype=np.uint8)
log.info("particles: 2000000 x 8 float32; halo catalogue %.1f GiB", halo_catalog.nbytes / 2**30)
for n in (1024, 2048):
    log.info("allocating density grid %d^3 float32 (%.1f GiB)", n, n ** 3 * 4 / 2**30)
    density = cuda.device_array((n, n, n), dtype=np.float32)
    log.info("density grid %d^3 ready", n)
''')


def s19_flax_trainstate_curriculum():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A Flax linen MLP in a
    # TrainState with optax.adamw, a jitted train step and a batch-size curriculum; batches of
    # 1024 and 8192 fit, 65536 x 8192 hidden activations do not.
    run_user_script("flax_curriculum", '''import logging

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("train")


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.gelu(nn.Dense(8192)(x))
        x = nn.gelu(nn.Dense(8192)(x))
        return nn.Dense(10)(x)


@jax.jit
def train_step(state, x, y):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


key = jax.random.PRNGKey(0)
model = MLP()
params = model.init(key, jnp.ones((1, 1024)))["params"]
state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adamw(1e-3))
log.info("params: %d", sum(p.size for p in jax.tree_util.tree_leaves(params)))
step = 0
for stage, batch in enumerate([1024, 8192, 65536, 262144]):
    for _ in range(5):
        step += 1
        k1, k2 = jax.random.split(jax.random.fold_in(key, step))
        x = jax.random.normal(k1, (batch, 1024))
        y = jax.random.randint(k2, (batch,), 0, 10)
        state, loss = train_step(state, x, y)
    log.info("stage %d: batch %d, step %d, loss %.4f", stage, batch, step, float(loss))
''')


def s19_equinox_field_eval_logged():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh). An Equinox MLP (a neural field) evaluated with
    # eqx.filter_jit over point sets; the loop logs errors and exits, so the text has only the
    # log lines and the XLA error string (no traceback).
    run_user_script("eval_field", '''import logging
import sys

import equinox as eqx
import jax

logging.basicConfig(format="%(asctime)s %(name)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("eval")
key = jax.random.PRNGKey(0)
model = eqx.nn.MLP(in_size=3, out_size=1, width_size=4096, depth=4, activation=jax.nn.softplus,
                   key=key)


@eqx.filter_jit
def predict(model, points):
    return jax.vmap(model)(points)


log.info("loaded field model (depth 4, width 4096)")
for name, n in [("val_coarse", 65536), ("val_fine", 131072), ("val_dense", 8_388_608)]:
    points = jax.random.uniform(jax.random.fold_in(key, n), (n, 3))
    try:
        sdf = predict(model, points)
        sdf.block_until_ready()
    except Exception as error:
        log.error("evaluation on %s (%d points) failed: %s", name, n, error)
        sys.exit(1)
    log.info("%s: %d points, mean sdf %.4f", name, n, float(sdf.mean()))
''')


def s19_func_hessian_influence():
    # Influence analysis: torch.func.hessian of a classifier head's loss w.r.t. its 61560
    # flattened parameters; jacfwd's basis / batched products need far more than the ~8 GiB left.
    run_user_script("influence", '''import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import hessian

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512)).cuda().eval()
head = nn.Linear(512, 120).cuda()
x = torch.randn(4096, 512, device="cuda")
y = torch.randint(0, 120, (4096,), device="cuda")
with torch.no_grad():
    feats = backbone(x)
free, _ = torch.cuda.mem_get_info()
feature_cache = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
flat = torch.cat([head.weight.detach().flatten(), head.bias.detach()])
n = flat.numel()
print(f"influence: head has {n} parameters; computing the {n}x{n} Hessian of the training loss",
      flush=True)


def loss_fn(theta):
    w, b = theta[: 512 * 120].view(120, 512), theta[512 * 120:]
    return F.cross_entropy(feats @ w.T + b, y)


H = hessian(loss_fn)(flat)
print("eigenvalues:", torch.linalg.eigvalsh(H)[-5:])
''')


_LIGHTNING_RESUME = '''import argparse

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8192, 8192), nn.GELU(), nn.Linear(8192, 8192))

    def training_step(self, batch, batch_idx):
        (x,) = batch
        loss = F.mse_loss(self.net(x), x)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--accelerator", default="gpu")
    parser.add_argument("--max-steps", type=int, default=2000)
    parser.add_argument("--resume", default=None)
    args = parser.parse_args()
    torch.manual_seed(0)
    data = DataLoader(TensorDataset(torch.randn(4096, 8192)), batch_size=32)
    checkpoint = ModelCheckpoint(dirpath="resume_run/checkpoints", every_n_train_steps=2,
                                 save_last=True)
    trainer = L.Trainer(accelerator=args.accelerator, devices=1, max_steps=args.max_steps,
                        logger=False, default_root_dir="resume_run", callbacks=[checkpoint])
    trainer.fit(Regressor(), data, ckpt_path=args.resume)
'''


def s19_lightning_resume_card_shared():
    # run.sh's holder leaves 2 GiB of the card to this job. A Lightning run resumed with
    # fit(ckpt_path=...last.ckpt): the checkpoint was written by an earlier short run on the CPU
    # (made here first, its output not shown); the model (512 MiB) fits, moving AdamW's restored
    # state (1 GiB) to the card does not. The memory is held by another process.
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "train_regressor.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(_LIGHTNING_RESUME)
    subprocess.run([sys.executable, path, "--accelerator", "cpu", "--max-steps", "2"], cwd=WORK,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    sys.stdout.flush()
    os.chdir(WORK)
    os.execv(sys.executable, [sys.executable, path, "--resume", "resume_run/checkpoints/last.ckpt"])


def s19_hf_sentence_transformers_encode():
    # sentence-transformers over the Llama checkpoint (fp32, mean pooling, a word-level tokenizer
    # saved beside it): encode() of 1024 long passages 128 at a time with ~2 GiB left; the first
    # batch's MLP (fp32) does not fit, under the "Batches" bar.
    run_user_script("encode_corpus", _WORD_TOKENIZER + '''
import torch
from sentence_transformers import SentenceTransformer, models

word_tokenizer().save_pretrained("word-tokenizer")
word = models.Transformer("@CKPT@", max_seq_length=2048, tokenizer_name_or_path="word-tokenizer")
pooling = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
encoder = SentenceTransformer(modules=[word, pooling], device="cuda")
free, _ = torch.cuda.mem_get_info()
ann_index = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device="cuda")
passages = [" ".join(f"w{(i * 31 + j) % 31990 + 3}" for j in range(1800)) for i in range(1024)]
embeddings = encoder.encode(passages, batch_size=128, show_progress_bar=True,
                            convert_to_tensor=True)
print(embeddings.shape)
'''.replace("@CKPT@", CKPT))


def s19_fp16_master_weights():
    # Hand-written mixed precision in the old apex "O2" way: a 1.6B-parameter fp32 stack made on
    # the card, cast to fp16 in place, then fp32 master copies of every weight (6.4 GB) with only
    # ~5 GiB free.
    run_user_script("amp_o2_by_hand", '''import logging

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s - %(name)s - %(levelname)s - %(message)s",
                    level=logging.INFO)
log = logging.getLogger("amp")
model = nn.Sequential(*[nn.Linear(8192, 8192, device="cuda") for _ in range(24)])
n_params = sum(p.numel() for p in model.parameters())
log.info("model built on cuda: %.2fB parameters (float32)", n_params / 1e9)
free, _ = torch.cuda.mem_get_info()
activation_arena = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device="cuda")
log.info("casting model to float16")
model.half()
log.info("keeping float32 master weights for %d tensors", len(list(model.parameters())))
master_params = [p.detach().clone().float() for p in model.parameters()]
for p in master_params:
    p.requires_grad_(True)
optimizer = torch.optim.SGD(master_params, lr=1e-3, momentum=0.9)
log.info("ready")
''')


def s19_grad_accum_logged_only():
    # Gradient accumulation over 8 micro-batches of a 12-layer TransformerEncoder; the loop
    # catches torch.OutOfMemoryError and logs it in one line before exiting: micro-batch 6 of
    # step 4 is 4 x 8192 tokens and its saved activations do not fit in the ~8 GiB left.
    run_user_script("pretrain_accum", '''import logging
import sys

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s | %(levelname)-8s | %(message)s", level=logging.INFO)
log = logging.getLogger("train")
ACCUM = 8
layer = nn.TransformerEncoderLayer(1024, 16, 4096, batch_first=True)
model = nn.TransformerEncoder(layer, 12, enable_nested_tensor=False).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
free, _ = torch.cuda.mem_get_info()
token_buffer = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
for step in range(1, 11):
    total = 0.0
    for micro in range(ACCUM):
        seq = 8192 if (step, micro) == (4, 5) else 512
        try:
            x = torch.randn(4, seq, 1024, device="cuda")
            loss = model(x).pow(2).mean() / ACCUM
            loss.backward()
        except torch.OutOfMemoryError as error:
            log.error("step %d micro-batch %d/%d (4 x %d tokens): %s", step, micro + 1, ACCUM,
                      seq, error)
            sys.exit(1)
        total += loss.item()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    log.info("step %d | loss %.4f | micro-batches %d", step, total, ACCUM)
''')


def s19_moe_router_collapse():
    # A hand-written mixture of experts (64 experts, capacity = the busiest expert's load, no
    # token dropping); after a new data shard the router sends almost every token to one expert
    # (logged load), and the dispatch buffer of 64 x capacity x 1024 (16 GB) does not fit.
    run_user_script("train_moe", '''import torch
import torch.nn as nn
import torch.nn.functional as F


class MoE(nn.Module):
    def __init__(self, experts=64, dim=1024, hidden=2048):
        super().__init__()
        self.experts = experts
        self.router = nn.Linear(dim, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, dim, hidden) * dim ** -0.5)
        self.w2 = nn.Parameter(torch.randn(experts, hidden, dim) * hidden ** -0.5)

    def forward(self, x):
        tokens = x.shape[0]
        expert = self.router(x).argmax(-1)
        load = torch.bincount(expert, minlength=self.experts)
        capacity = int(load.max())
        order = torch.argsort(expert, stable=True)
        sorted_expert = expert[order]
        start = torch.cumsum(load, 0) - load
        slot = torch.arange(tokens, device=x.device) - start[sorted_expert]
        dispatch = x.new_zeros(self.experts, capacity, x.shape[1])
        dispatch[sorted_expert, slot] = x[order]
        y = torch.bmm(F.gelu(torch.bmm(dispatch, self.w1)), self.w2)
        out = torch.empty_like(x)
        out[order] = y[sorted_expert, slot]
        return out, load


torch.manual_seed(0)
moe = MoE().cuda()
optimizer = torch.optim.AdamW([moe.w1, moe.w2], lr=1e-4)
free, _ = torch.cuda.mem_get_info()
attention_stack = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
shift = 16 * moe.router.weight[17].detach() / moe.router.weight[17].detach().norm()
for step in range(1, 61):
    if step == 31:
        print("loading shard 2 (source: code)", flush=True)
    x = torch.randn(65536, 1024, device="cuda")
    if step > 30:
        x = x + shift
    out, load = moe(x)
    loss = F.mse_loss(out, x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 10 == 0 or step > 30:
        print(f"step {step} loss {loss.item():.4f} max expert load "
              f"{100 * load.max().item() / x.shape[0]:.1f}%", flush=True)
''')


# ---- session 19 look-alikes


def s19_gloo_allreduce_timeout():
    # Not a memory failure: two processes (mp.spawn, gloo, 5 s timeout) all-reduce gradients;
    # rank 1 stalls reading a shard at step 3 and rank 0's all_reduce times out; mp.spawn
    # re-raises rank 0's error.
    run_user_script("ddp_gloo", '''import datetime
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29593"
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=5))
    grads = torch.randn(1 << 20)
    for step in range(1, 6):
        if rank == 1 and step == 3:
            print(f"[rank{rank}] step {step}: reading /data/shards/shard-00003.bin", flush=True)
            time.sleep(60)
        dist.all_reduce(grads)
        print(f"[rank{rank}] step {step}: all_reduce ok", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
''')


def s19_cupy_launch_out_of_resources():
    # Not a memory failure: a CuPy RawKernel keeping 160 accumulators per thread in registers is
    # launched with 1024 threads a block: too many registers for one block, so the launch fails
    # with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ("too many resources requested for launch").
    run_user_script("smooth_channels", '''import cupy as cp

SOURCE = r"""
extern "C" __global__ void smooth(const float* x, float* y, int n) {
    float acc[160];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < 160; ++k) acc[k] = x[(i + k) % n];
    for (int it = 0; it < 64; ++it) {
        #pragma unroll
        for (int k = 0; k < 160; ++k) acc[k] = acc[k] * 0.999f + x[(i + it * 160 + k) % n] * 0.001f;
    }
    float s = 0.0f;
    #pragma unroll
    for (int k = 0; k < 160; ++k) s += acc[k] * (k + 1);
    if (i < n) y[i] = s;
}
"""
smooth = cp.RawKernel(SOURCE, "smooth")
for channel in range(4):
    x = cp.random.standard_normal(1 << 22, dtype=cp.float32)
    y = cp.empty_like(x)
    print(f"channel {channel}: smoothing {x.size} samples, block 1024", flush=True)
    smooth(((x.size + 1023) // 1024,), (1024,), (x, y, cp.int32(x.size)))
    print(f"channel {channel}: mean {float(y.mean()):.4f}", flush=True)
''')


def s19_sklearn_pairwise_memoryerror():
    # Not a GPU OOM: passages are encoded on the card shard by shard, then deduplicated on the host
    # with scikit-learn's pairwise_distances over 12M vectors: numpy cannot allocate the 12M x 12M
    # float32 matrix (past the address space): MemoryError "Unable to allocate ... TiB".
    run_user_script("dedup_passages", '''import logging

import numpy as np
import torch
from sklearn.metrics import pairwise_distances

logging.basicConfig(format="%(asctime)s %(levelname)s dedup: %(message)s", level=logging.INFO)
log = logging.getLogger("dedup")
encoder = torch.nn.Linear(768, 64).cuda().half()
embeddings = []
for shard in range(8):
    x = torch.randn(1_500_000, 768, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        embeddings.append(encoder(x).float().cpu().numpy())
    log.info("encoded shard %d: %d passages on %s", shard, x.shape[0],
             torch.cuda.get_device_name(0))
embeddings = np.concatenate(embeddings)
log.info("deduplicating %d passages (pairwise cosine distances)", len(embeddings))
distances = pairwise_distances(embeddings, metric="cosine", n_jobs=1)
duplicates = (distances < 0.05).sum() - len(embeddings)
log.info("%d near-duplicate pairs", duplicates // 2)
''')


def s19_quantile_input_too_large():
    # Not a memory failure: anomaly scores of a validation set (6144 x 64 x 64 on the card) and a
    # threshold taken with torch.quantile, which refuses inputs over 2**24 elements.
    run_user_script("anomaly_threshold", '''import torch
import torch.nn as nn

model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 3, 3, padding=1))
model = model.cuda().eval()
scores = []
with torch.no_grad():
    for batch in range(24):
        x = torch.rand(256, 3, 64, 64, device="cuda")
        scores.append((model(x) - x).pow(2).mean(1))
scores = torch.cat(scores)
print(f"collected anomaly scores: {tuple(scores.shape)} ({scores.numel()} pixels)", flush=True)
threshold = torch.quantile(scores.flatten(), 0.995)
print(f"threshold at 99.5%: {threshold.item():.5f}")
''')


def s19_jax_donated_buffer_reuse():
    # Not a memory failure: a jitted SGD update donates its params argument (donate_argnums) and
    # an EMA still refers to the donated arrays: "Array has been deleted".
    run_user_script("jax_ema", '''from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, donate_argnums=(0,))
def sgd_update(params, grads):
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


@jax.jit
def grad_fn(params, x):
    return jax.grad(lambda p: jnp.mean((x @ p["w"] + p["b"]) ** 2))(params)


key = jax.random.PRNGKey(0)
params = {"w": jax.random.normal(key, (1024, 1024)) * 0.02, "b": jnp.zeros((1024,))}
ema = params
for step in range(1, 4):
    x = jax.random.normal(jax.random.fold_in(key, step), (256, 1024))
    params = sgd_update(params, grad_fn(params, x))
    ema = jax.tree_util.tree_map(lambda e, p: 0.99 * e + 0.01 * p, ema, params)
    print(f"step {step}: |w| {float(jnp.linalg.norm(params['w'])):.4f}", flush=True)
''')


# --------------------------------------------------------------------------- session 20 (blind):
# a reward model loaded next to another job, beam search in an IPython cell, a Trainer logged by
# a logging callback, `accelerate launch` of a LoRA run whose merge fails, Lightning's validation
# inside fit with plain logs, a weight-normed vocoder under FutureWarnings, torchrun without
# @record, an OOM handler that raises NameError, JAX with unfiltered tracebacks and a tqdm eval,
# cuBLAS at a serving warm-up, context creation in Trainer, and 4 look-alikes (a killed DataLoader
# worker under Lightning, a logged-and-recovered OOM before a shape error, an embedding assert in
# Lightning, gRPC's RESOURCE_EXHAUSTED)


def s20_hf_reward_load_card_shared():
    # run.sh's holder leaves 1 GiB of the card: an RLHF script logs that the policy's rollout
    # workers share GPU 0, then loads the reward model with from_pretrained(torch_dtype=float32,
    # device_map="cuda:0") (the deprecation line shows); 2.2 GB of fp32 weights do not fit: weights_load.
    run_user_script("load_reward", '''import logging

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
logger = logging.getLogger("rlhf.reward")
logger.info("rollout workers use GPU 0 for the policy; loading the reward model on the same GPU")
free, total = torch.cuda.mem_get_info()
logger.info("GPU 0: %.2f GiB free of %.2f GiB", free / 2**30, total / 2**30)
reward_model = AutoModelForCausalLM.from_pretrained("@CKPT@", torch_dtype=torch.float32,
                                                    device_map="cuda:0")
reward_model.eval()
logger.info("reward model ready: %s", type(reward_model).__name__)
'''.replace("@CKPT@", CKPT))


def s20_hf_ipython_generate_beams():
    # A notebook session replayed through IPython's InteractiveShell (no colours): cell 1 loads
    # the model, cell 2 builds an embedding cache leaving ~4 GiB, cell 3 runs generate with
    # num_beams=8, num_return_sequences=8 on 16 prompts of 2048 tokens; the 128-sequence prefill's
    # KV cache does not fit: the traceback is IPython's "Cell In[3], line 2" style (inference).
    # Without IPython it prints NO-ERROR and exits 3.
    run_user_script("notebook_session", '''import os
import sys

os.environ.setdefault("IPYTHONDIR", os.path.join(os.getcwd(), ".ipython"))
try:
    from IPython.core.interactiveshell import InteractiveShell
except ImportError:
    print("NO-ERROR: IPython is not installed: s20_hf_ipython_generate_beams cannot run",
          file=sys.stderr)
    sys.exit(3)

CELLS = [
    """import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
print(model.config.num_hidden_layers, "layers on", model.device)""",
    """free, total = torch.cuda.mem_get_info()
embedding_cache = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
print(f"{torch.cuda.mem_get_info()[0] / 2**30:.1f} GiB free")""",
    """prompts = torch.randint(3, 32000, (16, 2048), device="cuda")
out = model.generate(prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=64,
                     num_beams=8, num_return_sequences=8, early_stopping=True, pad_token_id=0)
out.shape""",
]
shell = InteractiveShell.instance()
for colors in ("NoColor", "nocolor"):
    try:
        shell.colors = colors
        break
    except Exception:
        pass
for cell in CELLS:
    result = shell.run_cell(cell, store_history=True)
    if not result.success:
        sys.exit(1)
'''.replace("@CKPT@", CKPT))


def s20_hf_trainer_logging_long_doc():
    # Trainer fine-tune (bf16 weights, batches of 8 padded to the longest) with a TrainerCallback
    # that logs "Epoch 0.03 step 12 loss=..." through the logging module beside the tqdm bar; ~8
    # GiB are left; 2% of the documents are 4096 tokens and the first batch holding one does not
    # fit: training_step.
    run_user_script("finetune_docs", '''import logging

import torch
from transformers import AutoModelForCausalLM, Trainer, TrainerCallback, TrainingArguments

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
logger = logging.getLogger(__name__)


class Documents(torch.utils.data.Dataset):
    def __init__(self, n=2000, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.lengths = [4096 if i % 50 == 7 else int(torch.randint(128, 384, (1,), generator=g))
                        for i in range(n)]

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        return {"input_ids": torch.randint(3, 32000, (self.lengths[i],))}


def collate(features):
    longest = max(len(f["input_ids"]) for f in features)
    ids = torch.zeros(len(features), longest, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, f in enumerate(features):
        ids[row, : len(f["input_ids"])] = f["input_ids"]
        mask[row, : len(f["input_ids"])] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": ids.masked_fill(mask == 0, -100)}


class LogCallback(TrainerCallback):
    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            logger.info("Epoch %.2f step %d loss=%.4f lr=%.2e", state.epoch or 0.0,
                        state.global_step, logs["loss"], logs.get("learning_rate", 0.0))


model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16)
args = TrainingArguments(output_dir="finetune-docs", per_device_train_batch_size=8,
                         max_steps=300, logging_steps=2, learning_rate=2e-5, bf16=True,
                         save_strategy="no", report_to="none", dataloader_num_workers=0)
trainer = Trainer(model=model, args=args, train_dataset=Documents(), data_collator=collate,
                  callbacks=[LogCallback()])
free, _ = torch.cuda.mem_get_info()
retrieval_index = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
logger.info("starting training: %d documents, %d of them 4096 tokens", len(trainer.train_dataset),
            sum(n == 4096 for n in trainer.train_dataset.lengths))
trainer.train()
'''.replace("@CKPT@", CKPT))


def s20_accelerate_launch_lora_merge():
    # `accelerate launch --num_processes 1 --mixed_precision bf16` of a LoRA (r=64, all linear
    # layers) fine-tune: 20 steps train and log; then the script merges the adapter on the GPU
    # beside a cache that leaves ~4 MiB; merge_and_unload's first delta weight does not fit
    # (format_conversion) and the launcher adds its subprocess.CalledProcessError.
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "finetune_lora.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('''import logging

import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
logger = get_logger(__name__)
accelerator = Accelerator()
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16)
config = LoraConfig(r=64, lora_alpha=128, lora_dropout=0.05, task_type="CAUSAL_LM",
                    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                    "up_proj", "down_proj"])
model = get_peft_model(model, config)
model.print_trainable_parameters()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)
model, optimizer = accelerator.prepare(model, optimizer)
for step in range(1, 21):
    ids = torch.randint(3, 32000, (4, 256), device=accelerator.device)
    loss = model(input_ids=ids, labels=ids).loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    if step % 5 == 0:
        logger.info("step %d: loss %.4f", step, loss.item())
logger.info("training done, merging the LoRA weights into the base model")
model = accelerator.unwrap_model(model)
del optimizer
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
eval_cache = torch.empty(free - 4 * (1 << 20), dtype=torch.uint8, device=accelerator.device)
merged = model.merge_and_unload(progressbar=True)
merged.save_pretrained("lora-merged")
logger.info("saved lora-merged")
'''.replace("@CKPT@", CKPT))
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(WORK)
    os.execvp("accelerate", ["accelerate", "launch", "--num_processes", "1", "--num_machines", "1",
                             "--mixed_precision", "bf16", "--dynamo_backend", "no", path])


def s20_lightning_fit_plain_logs_val():
    # Lightning fit of a small segmentation net with the progress bar off and the module logging
    # "Epoch 0 step 20 loss=..." lines; a feature bank made in on_fit_start leaves ~6 GiB; after
    # epoch 0's 30 training batches of 256 px, the first validation batch (16 x 2048 px) does not
    # fit in validation_step: the validation loop inside fit.
    run_user_script("train_segmenter", '''import logging

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(message)s", level=logging.INFO)
log = logging.getLogger("segmenter")


class Tiles(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(0, 21, (self.size, self.size))


class Segmenter(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 21, 1))

    def on_fit_start(self):
        free, _ = torch.cuda.mem_get_info()
        self.feature_bank = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8,
                                        device=self.device)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        if batch_idx % 10 == 0:
            log.info("Epoch %d step %d loss=%.4f", self.current_epoch, self.global_step,
                     loss.item())
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        miou_proxy = (logits.argmax(1) == y).float().mean()
        self.log("val_acc", miou_proxy)

    def on_validation_epoch_end(self):
        log.info("Epoch %d validation done", self.current_epoch)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


train = DataLoader(Tiles(480, 256), batch_size=16, shuffle=True)
val = DataLoader(Tiles(64, 2048), batch_size=16)
trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=3, enable_progress_bar=False,
                    logger=False, enable_checkpointing=False, num_sanity_val_steps=0,
                    limit_train_batches=30)
trainer.fit(Segmenter(), train, val)
''')


def s20_vocoder_weight_norm_warnings():
    # A HiFi-GAN-like vocoder built with torch.nn.utils.weight_norm and trained under the old
    # torch.cuda.amp.autocast: the FutureWarning lines come first, then 5 steps of 16 x 32-frame
    # segments; step 6 is a bucket of 32 whole utterances (2000 frames, 512k samples) whose
    # upsampled activations do not fit in the ~6 GiB left: training_step (forward).
    run_user_script("train_vocoder", '''import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm


class ResBlock(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(ch, ch, 7, padding=3 * dilation, dilation=dilation))

    def forward(self, x):
        return x + self.conv(F.leaky_relu(x, 0.1))


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = weight_norm(nn.Conv1d(80, 512, 7, padding=3))
        layers, ch = [], 512
        for factor in (8, 8, 2, 2):
            layers.append(weight_norm(nn.ConvTranspose1d(ch, ch // 2, 2 * factor, factor,
                                                         padding=factor // 2)))
            ch //= 2
            layers += [ResBlock(ch, d) for d in (1, 3, 5)]
        self.ups = nn.Sequential(*layers)
        self.post = weight_norm(nn.Conv1d(ch, 1, 7, padding=3))

    def forward(self, mel):
        return torch.tanh(self.post(F.leaky_relu(self.ups(self.pre(mel)), 0.1)))


generator = Generator().cuda()
optimizer = torch.optim.AdamW(generator.parameters(), lr=2e-4, betas=(0.8, 0.99))
free, _ = torch.cuda.mem_get_info()
discriminator_buffers = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
schedule = [(16, 32)] * 5 + [(32, 2000)]
for step, (batch, frames) in enumerate(schedule, 1):
    mel = torch.randn(batch, 80, frames, device="cuda")
    audio = torch.randn(batch, 1, frames * 256, device="cuda")
    with torch.cuda.amp.autocast(dtype=torch.bfloat16):
        fake = generator(mel)
        loss = F.l1_loss(fake.float(), audio)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step}: batch {batch} x {frames} frames, l1 {loss.item():.4f}", flush=True)
''')


def s20_torchrun_ddp_no_record():
    # `torchrun --standalone --nproc_per_node=1` of a DDP (NCCL) MLP fine-tune without @record:
    # the worker's traceback on its own stderr, then torchrun's ChildFailedError summary with
    # "error_file: <N/A>" and the "To enable traceback" link; steps of 1024-4096 rows fit, the
    # step of 65536 rows (8 GiB hidden activations) does not: training_step.
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "ddp_finetune.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('''import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8192, 32768), nn.GELU(), nn.Linear(32768, 8192)).cuda()
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    free, _ = torch.cuda.mem_get_info()
    replay = torch.empty(free - 16 * (1 << 30), dtype=torch.uint8, device="cuda")
    for step, rows in enumerate([1024, 2048, 4096, 4096, 65536, 4096], 1):
        x = torch.randn(rows, 8192, device="cuda")
        loss = F.mse_loss(model(x), x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if rank == 0:
            print(f"[rank{rank}] step {step} rows {rows} loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
''')
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(WORK)
    os.execvp("torchrun", ["torchrun", "--standalone", "--nproc_per_node=1", path])


def s20_oom_handler_nameerror():
    # A batched scoring loop under a tqdm bar catches torch.OutOfMemoryError to report the batch,
    # but the handler names an undefined variable: the OOM traceback (131072 rows, ~3 GiB left),
    # "During handling of the above exception, another exception occurred:", then a NameError.
    # The job's real failure is the OOM in the no_grad forward: inference.
    run_user_script("score_shards", '''import torch
import torch.nn as nn
from tqdm import tqdm

encoder = nn.Sequential(nn.Linear(1024, 16384), nn.GELU(), nn.Linear(16384, 1024)).cuda().eval()
free, _ = torch.cuda.mem_get_info()
ann_index = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
batch_sizes = [4096] * 12 + [131072] + [4096] * 8
scores = []
for batch_idx, rows in enumerate(tqdm(batch_sizes, desc="scoring")):
    try:
        with torch.no_grad():
            x = torch.randn(rows, 1024, device="cuda")
            scores.append(encoder(x).norm(dim=1).cpu())
    except torch.OutOfMemoryError:
        print(f"OOM in shard {shard_name}, batch {batch_idx} ({rows} rows)")
        raise
print(torch.cat(scores).mean())
''')


def s20_jax_scan_accum_unfiltered():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 and JAX_TRACEBACK_FILTERING=off (run.sh): ~7 GiB for
    # JAX and the full traceback with JAX's internal frames. A jitted train step scans
    # value_and_grad over 4 micro-batches; "Epoch 1 step 20 loss=..." logging lines; epoch 3's
    # micro-batch of 262144 rows needs 8 GiB of hidden activations: training_step.
    run_user_script("jax_accum", '''import logging

import jax
import jax.numpy as jnp

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(message)s", level=logging.INFO)
log = logging.getLogger("train")
D, H, ACCUM = 512, 8192, 4


def init(key):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (D, H)) * D ** -0.5,
            "w2": jax.random.normal(k2, (H, D)) * H ** -0.5}


def loss_fn(params, x):
    h = jax.nn.gelu(x @ params["w1"])
    return jnp.mean((h @ params["w2"] - x) ** 2)


@jax.jit
def train_step(params, batch):
    def micro_step(grads, x):
        loss, g = jax.value_and_grad(loss_fn)(params, x)
        return jax.tree_util.tree_map(jnp.add, grads, g), loss

    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    grads, losses = jax.lax.scan(micro_step, zeros, batch)
    params = jax.tree_util.tree_map(lambda p, g: p - 1e-2 * g / ACCUM, params, grads)
    return params, losses.mean()


key = jax.random.PRNGKey(0)
params = init(key)
step = 0
for epoch, micro in enumerate([8192, 32768, 262144], 1):
    log.info("Epoch %d: micro-batch %d rows x %d accumulation steps", epoch, micro, ACCUM)
    for _ in range(20):
        step += 1
        batch = jax.random.normal(jax.random.fold_in(key, step), (ACCUM, micro, D))
        params, loss = train_step(params, batch)
        if step % 10 == 0:
            log.info("Epoch %d step %d loss=%.4f", epoch, step, float(loss))
''')


def s20_jax_eval_tqdm_logits():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A jitted eval step over 64
    # validation batches under a tqdm bar keeps every batch's 1024 x 32000 fp32 logits on the
    # device "for calibration later"; around batch 50 the next logits do not fit: inference.
    run_user_script("jax_eval_calibration", '''import jax
import jax.numpy as jnp
from tqdm import tqdm

D, H, C = 512, 2048, 32000


def init(key):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (D, H)) * D ** -0.5,
            "w2": jax.random.normal(k2, (H, C)) * H ** -0.5}


@jax.jit
def eval_step(params, x):
    return jax.nn.relu(x @ params["w1"]) @ params["w2"]


key = jax.random.PRNGKey(0)
params = init(key)
all_logits = []
for i in tqdm(range(64), desc="eval"):
    x = jax.random.normal(jax.random.fold_in(key, i), (1024, D))
    all_logits.append(eval_step(params, x))
logits = jnp.concatenate(all_logits)
probs = jax.nn.softmax(logits, axis=-1)
print("mean max prob", float(probs.max(-1).mean()))
''')


def s20_hf_first_forward_cublas():
    # A serving script loads the bf16 model, reserves every remaining byte of the card for its
    # KV pool (torch tensors, then raw cuMemAlloc for what is below 2 MiB; the small-block pool
    # keeps its free room), then runs a warm-up forward of 8 tokens: the first q_proj matmul
    # cannot create its cuBLAS handle (CUBLAS_STATUS_ALLOC_FAILED or an OOM): warm-up at start-up.
    run_user_script("serve_warmup", '''import ctypes
import logging

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s [serve] %(message)s", level=logging.INFO)
log = logging.getLogger("serve")


def reserve_kv_pool():
    pool = []
    for size in (8 << 30, 1 << 30, 128 << 20, 16 << 20, 2 << 20):
        while True:
            try:
                pool.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
            except torch.OutOfMemoryError:
                break
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        alloc = libcuda.cuMemAlloc_v2
        alloc.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        alloc.restype = ctypes.c_int
        ptr = ctypes.c_uint64()
        for size in (1 << 20, 64 << 10, 4 << 10):
            while alloc(ctypes.byref(ptr), size) == 0:
                pool.append(ptr.value)
    except OSError:
        pass
    return pool


log.info("loading model")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
kv_pool = reserve_kv_pool()
log.info("KV pool reserved: %.1f GiB", sum(t.numel() for t in kv_pool if torch.is_tensor(t)) / 2**30)
log.info("warming up")
with torch.no_grad():
    warmup_ids = torch.tensor([[1, 450, 4996, 17354, 1701, 432, 17204, 975]], device="cuda")
    logits = model(input_ids=warmup_ids, use_cache=False).logits
log.info("warm-up done: %s", tuple(logits.shape))
'''.replace("@CKPT@", CKPT))


def s20_hf_trainer_init_card_held():
    # Start-up with another process holding every byte of the card (run.sh's holder, 0 GiB
    # left): the script prints that CUDA is available, loads the model on the CPU and builds a
    # bf16 Trainer; the first CUDA call (bf16 check or moving the model to cuda:0 in Trainer)
    # fails at context creation: startup.
    run_user_script("sft_train", '''import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 1024

    def __getitem__(self, i):
        ids = torch.randint(3, 32000, (512,))
        return {"input_ids": ids, "labels": ids}


print(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}, "
      f"devices: {torch.cuda.device_count()}", flush=True)
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16)
args = TrainingArguments(output_dir="sft-out", per_device_train_batch_size=8, bf16=True,
                         max_steps=100, logging_steps=10, save_strategy="no", report_to="none")
trainer = Trainer(model=model, args=args, train_dataset=Tokens())
trainer.train()
'''.replace("@CKPT@", CKPT))


# ---- session 20 look-alikes


def s20_lightning_worker_killed():
    # Not a GPU OOM: Lightning fit (tqdm bar) with 2 DataLoader workers; the worker decoding
    # sample 300 is SIGKILLed (standing in for the kernel's OOM killer on host RAM), and the main
    # process raises "DataLoader worker (pid N) is killed by signal: Killed." then "exited
    # unexpectedly".
    run_user_script("train_scans", '''import os
import signal

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Scans(Dataset):
    def __len__(self):
        return 2048

    def __getitem__(self, i):
        if i == 300:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.randn(1, 64, 64), torch.tensor(float(i % 2))


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.binary_cross_entropy_with_logits(self.net(x).squeeze(1), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


loader = DataLoader(Scans(), batch_size=32, num_workers=2, shuffle=False)
trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                    enable_checkpointing=False)
trainer.fit(Classifier(), loader)
''')


def s20_oom_logged_then_shape_mismatch():
    # Not a GPU OOM at the end: a hand-written batch-size search logs three full
    # torch.OutOfMemoryError messages as WARNING lines while halving the batch (recovered), trains
    # 10 steps, and then a linear probe built for 1024 features gets 4096: "mat1 and mat2 shapes
    # cannot be multiplied".
    run_user_script("probe_train", '''import logging

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(message)s", level=logging.INFO)
log = logging.getLogger("probe")
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda()
head = nn.Linear(1024, 10).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
shared_cache = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device="cuda")
batch_size = 262144
while True:
    try:
        x = torch.randn(batch_size, 4096, device="cuda")
        loss = model(x).pow(2).mean()
        loss.backward()
        break
    except torch.OutOfMemoryError as error:
        log.warning("batch size %d does not fit, halving: %s", batch_size, error)
        x = loss = None
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()
        batch_size //= 2
optimizer.zero_grad(set_to_none=True)
log.info("using batch size %d", batch_size)
for step in range(1, 11):
    x = torch.randn(batch_size, 4096, device="cuda")
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    log.info("step %d loss %.5f", step, loss.item())
log.info("fitting the linear probe")
with torch.no_grad():
    features = model(torch.randn(512, 4096, device="cuda"))
predictions = head(features).argmax(-1)
log.info("probe predictions: %s", predictions[:8].tolist())
''')


def s20_lightning_embedding_assert():
    # Not a GPU OOM: a Lightning recommender (user and item nn.Embedding tables, 50000 items)
    # trained on interactions whose later rows come from a refreshed catalogue with item ids up
    # to 60000: the index_select kernel's assertion lines, then "device-side assert triggered"
    # surfacing at a later synchronising call under the progress bar.
    run_user_script("train_recsys", '''import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Interactions(Dataset):
    def __init__(self, n=4096):
        g = torch.Generator().manual_seed(0)
        self.users = torch.randint(0, 100000, (n,), generator=g)
        self.items = torch.cat([torch.randint(0, 50000, (640,), generator=g),
                                torch.randint(0, 60000, (n - 640,), generator=g)])
        self.clicks = torch.randint(0, 2, (n,), generator=g).float()

    def __len__(self):
        return len(self.users)

    def __getitem__(self, i):
        return self.users[i], self.items[i], self.clicks[i]


class Recommender(L.LightningModule):
    def __init__(self, n_users=100000, n_items=50000, dim=256):
        super().__init__()
        self.users = nn.Embedding(n_users, dim)
        self.items = nn.Embedding(n_items, dim)

    def training_step(self, batch, batch_idx):
        u, i, y = batch
        logits = (self.users(u) * self.items(i)).sum(-1)
        loss = F.binary_cross_entropy_with_logits(logits, y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                    enable_checkpointing=False)
trainer.fit(Recommender(), DataLoader(Interactions(), batch_size=32))
''')


def s20_grpc_resource_exhausted():
    # Not a GPU OOM: embeddings computed on the GPU are pushed to a feature store over gRPC (an
    # in-process server with the default 4 MiB receive limit); the 2048-row shard (6 MiB) is
    # refused: grpc's _InactiveRpcError with StatusCode.RESOURCE_EXHAUSTED "Received message
    # larger than max". Without grpcio it prints NO-ERROR and exits 3.
    run_user_script("push_embeddings", '''import logging
import sys
from concurrent import futures

try:
    import grpc
except ImportError:
    print("NO-ERROR: grpcio is not installed: s20_grpc_resource_exhausted cannot run",
          file=sys.stderr)
    sys.exit(3)
import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("push_embeddings")

server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
    "featurestore.FeatureStore",
    {"PutEmbeddings": grpc.unary_unary_rpc_method_handler(lambda request, context: b"ok")}),))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
channel = grpc.insecure_channel(f"127.0.0.1:{port}")
put_embeddings = channel.unary_unary("/featurestore.FeatureStore/PutEmbeddings")

encoder = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 768)).cuda().eval()
log.info("encoder on %s, %.2f GiB allocated", torch.cuda.get_device_name(0),
         torch.cuda.memory_allocated() / 2**30)
for shard, rows in enumerate([256, 512, 1024, 2048, 4096]):
    with torch.no_grad():
        vectors = encoder(torch.randn(rows, 1024, device="cuda")).float().cpu().numpy()
    payload = vectors.tobytes()
    log.info("shard %d: %d vectors, %.1f MiB", shard, rows, len(payload) / 2**20)
    put_embeddings(payload, timeout=30)
    log.info("shard %d stored", shard)
server.stop(None)
''')


# --------------------------------------------------------------------------- session 21 (blind):
# an L-BFGS inverse problem, a training loop that dumps a memory-history snapshot, a
# torch.utils.benchmark sweep, torch.profiler's memory table before a bigger batch, a
# side-stream batch prefetcher, ZeroRedundancyOptimizer's first step, a sweep building models
# under `with torch.device("cuda")`, a BERT MLM Trainer, accelerate's notebook_launcher, PEFT
# with gradient checkpointing and logits_to_keep, Lightning's SimpleProfiler under 16-mixed and a
# DataModule's transfer_batch_to_device hook, JAX GP regression and a Flax NNX init, n-gram dedup
# with torch.unique, and 3 look-alikes (a too-small max_split_size_mb, a memory fraction above
# 1, a Triton grid over 65535 rows)


def s21_lbfgs_field_fit():
    # An inverse problem: a 16384 x 16384 fp32 field (1 GiB) fitted to observations with
    # torch.optim.LBFGS(history_size=100, line_search_fn="strong_wolfe"); the closure prints each
    # evaluation's loss; a solver cache leaves ~14 GiB; the L-BFGS state (flat gradients, the
    # direction, two new 1 GiB curvature vectors per iteration) outgrows it inside the first
    # optimizer.step(closure).
    run_user_script("invert_field", '''import time

import torch

torch.manual_seed(0)
N = 16384
observed = torch.randn(N, N, device="cuda")
field = torch.zeros(N, N, device="cuda", requires_grad=True)
free, _ = torch.cuda.mem_get_info()
solver_cache = torch.empty(free - 14 * (1 << 30), dtype=torch.uint8, device="cuda")
optimizer = torch.optim.LBFGS([field], lr=1.0, max_iter=50, history_size=100,
                              line_search_fn="strong_wolfe")
evals = 0
start = time.time()


def closure():
    global evals
    optimizer.zero_grad()
    misfit = (field - observed).pow(2).mean()
    smoothness = (field[1:] - field[:-1]).pow(2).mean() + (field[:, 1:] - field[:, :-1]).pow(2).mean()
    loss = misfit + 0.1 * smoothness
    loss.backward()
    evals += 1
    print(f"eval {evals:3d}  loss {loss.item():.6f}  ({time.time() - start:.1f} s)", flush=True)
    return loss


for outer in range(10):
    loss = optimizer.step(closure)
    print(f"outer step {outer}: loss {loss.item():.6f}", flush=True)
''')


def s21_memory_history_snapshot():
    # The user debugs an earlier OOM: _record_memory_history(stacks="python") at the top, a
    # 12-layer nn.TransformerEncoder trained under bf16 autocast on a growing sequence length with
    # timestamped log lines; a feature store leaves ~11 GiB; at seq_len 2048 the step does not
    # fit; the except block dumps the snapshot, logs its path and re-raises.
    run_user_script("train_encoder_debug", '''import logging
import os

import torch
import torch.nn as nn

logging.basicConfig(format="[%(asctime)s] %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger(__name__)
SNAPSHOT = os.path.abspath("oom_snapshot.pickle")

torch.cuda.memory._record_memory_history(max_entries=100000, stacks="python")
layer = nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True,
                                   norm_first=True)
model = nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False).cuda()
head = nn.Linear(1024, 1).cuda()
optimizer = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=3e-4)
free, _ = torch.cuda.mem_get_info()
feature_store = torch.empty(free - 11 * (1 << 30), dtype=torch.uint8, device="cuda")
try:
    for step, seq_len in enumerate([256, 512, 1024, 2048, 4096, 8192], 1):
        x = torch.randn(8, seq_len, 1024, device="cuda")
        y = torch.randn(8, 1, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pooled = model(x).mean(dim=1)
            loss = nn.functional.mse_loss(head(pooled).float(), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        log.info("step %d seq_len %d loss %.4f max allocated %.2f GiB", step, seq_len, loss.item(),
                 torch.cuda.max_memory_allocated() / 2**30)
except torch.OutOfMemoryError:
    torch.cuda.memory._dump_snapshot(SNAPSHOT)
    log.error("CUDA OOM at seq_len %d; memory snapshot written to %s "
              "(drag it onto https://pytorch.org/memory_viz)", seq_len, SNAPSHOT)
    raise
finally:
    torch.cuda.memory._record_memory_history(enabled=None)
''')


def s21_benchmark_attention_sweep():
    # A torch.utils.benchmark sweep, SDPA against a naive softmax(QK^T)V, fp16, 4 x 16 heads,
    # sequence 1024..16384, each Measurement printed as it comes; the model under test leaves
    # ~24 GiB; naive attention at 16384 needs 32 GiB of scores: the OOM comes from inside
    # Timer.blocked_autorange (the <timeit-src> frame).
    run_user_script("bench_attention", '''import torch
import torch.nn.functional as F
from torch.utils import benchmark


def naive_attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v


def sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
free, _ = torch.cuda.mem_get_info()
model_under_test = torch.empty(free - 24 * (1 << 30), dtype=torch.uint8, device="cuda")
results = []
for seq_len in [1024, 2048, 4096, 8192, 16384]:
    q, k, v = (torch.randn(4, 16, seq_len, 128, device="cuda", dtype=torch.float16)
               for _ in range(3))
    for label, fn in [("sdpa", sdpa), ("naive", naive_attention)]:
        timer = benchmark.Timer(stmt="fn(q, k, v)", globals={"fn": fn, "q": q, "k": k, "v": v},
                                label="attention forward", sub_label=f"seq_len={seq_len}",
                                description=label)
        measurement = timer.blocked_autorange(min_run_time=0.2)
        print(measurement, flush=True)
        results.append(measurement)
benchmark.Compare(results).print()
''')


def s21_profiler_memory_table():
    # torch.profiler with profile_memory=True and schedule(wait=1, warmup=1, active=3) around an
    # MLP's training steps; on_trace_ready prints key_averages() sorted by self CUDA memory (a
    # table full of memory columns) after step 5; a data cache leaves ~8 GiB; step 7's 262144-row
    # batch does not fit, inside the `with profile(...)` block.
    run_user_script("profile_train", '''import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule


def print_table(prof):
    print(prof.key_averages().table(sort_by="self_cuda_memory_usage", row_limit=10), flush=True)


model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 4096), nn.GELU(),
                      nn.Linear(4096, 1024)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
free, _ = torch.cuda.mem_get_info()
data_cache = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
batches = [8192] * 6 + [262144] + [8192] * 3
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True,
             record_shapes=True, schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
             on_trace_ready=print_table) as prof:
    for step, rows in enumerate(batches, 1):
        x = torch.randn(rows, 1024, device="cuda")
        with record_function("train_step"):
            loss = F.mse_loss(model(x), x)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        print(f"step {step}: {rows} rows, loss {loss.item():.4f}", flush=True)
        prof.step()
''')


def s21_stream_prefetcher_fullres():
    # The apex-style data prefetcher: the next batch's pinned uint8 images are copied with
    # .cuda(non_blocking=True) on a side stream and normalised there; 20 iterations at 224 px log
    # loss and img/s; the full-resolution stage's first batch (64 x 3 x 4096^2 uint8, 3 GiB)
    # does not fit in the ~2 GiB a feature cache leaves: the OOM is in the prefetcher's preload,
    # reached from next() in the training loop.
    run_user_script("train_prefetch", '''import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class CUDAPrefetcher:
    """Overlaps the next batch's host-to-device copy with the current step."""

    def __init__(self, loader, mean, std):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.mean = torch.tensor(mean, device="cuda").view(1, 3, 1, 1) * 255
        self.std = torch.tensor(std, device="cuda").view(1, 3, 1, 1) * 255
        self.preload()

    def preload(self):
        try:
            self.next_images, self.next_labels = next(self.loader)
        except StopIteration:
            self.next_images = self.next_labels = None
            return
        with torch.cuda.stream(self.stream):
            self.next_images = self.next_images.cuda(non_blocking=True)
            self.next_labels = self.next_labels.cuda(non_blocking=True)
            self.next_images = self.next_images.float().sub_(self.mean).div_(self.std)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        images, labels = self.next_images, self.next_labels
        if images is not None:
            images.record_stream(torch.cuda.current_stream())
            labels.record_stream(torch.cuda.current_stream())
        self.preload()
        return images, labels


def loader(batch_size=64):
    for it in range(200):
        size = 224 if it < 20 else 4096  # stage 2: fine-tune at full resolution
        images = torch.empty(batch_size, 3, size, size, dtype=torch.uint8).pin_memory()
        labels = torch.randint(0, 1000, (batch_size,)).pin_memory()
        yield images, labels


model = nn.Sequential(nn.Conv2d(3, 64, 16, stride=16), nn.GELU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(64, 1000)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
free, _ = torch.cuda.mem_get_info()
feature_cache = torch.empty(free - 2 * (1 << 30), dtype=torch.uint8, device="cuda")
prefetcher = CUDAPrefetcher(loader(), mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
images, labels = prefetcher.next()
it, start = 0, time.time()
while images is not None:
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    it += 1
    if it % 5 == 0:
        print(f"iter {it:4d}  loss {loss.item():.4f}  {it * images.shape[0] / (time.time() - start):.0f} img/s",
              flush=True)
    images, labels = prefetcher.next()
''')


def s21_zero_redundancy_adamw():
    # DDP (NCCL, world size 1 through a file:// init) with torch.distributed.optim's
    # ZeroRedundancyOptimizer over AdamW for an 8192 <-> 32768 MLP (537M fp32 params); a
    # replay buffer leaves ~4.5 GiB; forward and backward fit, the first optimizer.step()'s AdamW
    # state (4 GiB) does not.
    run_user_script("zero_finetune", '''import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

rank = int(os.environ.get("RANK", 0))
world_size = int(os.environ.get("WORLD_SIZE", 1))
init_file = os.path.join(tempfile.gettempdir(), f"zero_finetune.{os.getpid()}.init")
torch.cuda.set_device(rank)
dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank,
                        world_size=world_size)
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(8192, 32768), nn.GELU(), nn.Linear(32768, 8192)).cuda()
model = DDP(net, device_ids=[rank])
optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW,
                                    lr=1e-4, weight_decay=0.01)
n_params = sum(p.numel() for p in net.parameters())
print(f"[rank{rank}] ZeroRedundancyOptimizer(AdamW) over {n_params / 1e6:.0f}M parameters, "
      f"world size {world_size}", flush=True)
free, _ = torch.cuda.mem_get_info()
replay = torch.empty(free - 9 * (1 << 29), dtype=torch.uint8, device="cuda")
for step in range(1, 101):
    x = torch.randn(256, 8192, device="cuda")
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 10 == 0:
        print(f"[rank{rank}] step {step} loss {loss.item():.5f}", flush=True)
dist.destroy_process_group()
''')


def s21_device_context_sweep():
    # A width sweep that builds each 12-layer MLP directly on the card with
    # `with torch.device("cuda"):` and keeps every trained model in a dict for a later ensemble;
    # cached validation features leave ~11 GiB; widths 2048, 4096, 8192 train 20 SGD steps and
    # print a result line; building width 16384 (10 GiB of weights) fails in nn.Linear's
    # constructor under the device context.
    run_user_script("width_sweep", '''import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_mlp(width, depth, d_in=1024):
    layers = [nn.Linear(d_in, width), nn.ReLU()]
    for _ in range(depth - 2):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, d_in))
    return nn.Sequential(*layers)


torch.manual_seed(0)
torch.zeros(1, device="cuda")
free, _ = torch.cuda.mem_get_info()
val_features = torch.empty(free - 11 * (1 << 30), dtype=torch.uint8, device="cuda")
trained = {}
print(f"{'trial':>5} {'width':>6} {'params':>8} {'loss':>8} {'time':>6}", flush=True)
for trial, width in enumerate([2048, 4096, 8192, 16384, 32768]):
    start = time.time()
    with torch.device("cuda"):
        model = make_mlp(width, depth=12)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, nesterov=True)
    for step in range(20):
        x = torch.randn(512, 1024, device="cuda")
        loss = F.mse_loss(model(x), x)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{trial:>5} {width:>6} {n_params / 1e6:>7.0f}M {loss.item():>8.4f} "
          f"{time.time() - start:>5.1f}s", flush=True)
    del optimizer
    model.zero_grad(set_to_none=True)
    trained[width] = model
''')


def s21_hf_bert_mlm_trainer():
    # MLM pre-training from scratch: a BertForMaskedLM built from a BertConfig (no download), a
    # word-level tokenizer made in the script, DataCollatorForLanguageModeling and a bf16
    # Trainer with batches of 256 sequences up to 512 tokens; an embedding cache leaves ~6 GiB;
    # the first training step does not fit.
    run_user_script("pretrain_mlm", '''import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (BertConfig, BertForMaskedLM, DataCollatorForLanguageModeling,
                          PreTrainedTokenizerFast, Trainer, TrainingArguments)

VOCAB = 30522
vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
vocab.update({f"w{i}": i for i in range(5, VOCAB)})
backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]",
                                    cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


class Corpus(torch.utils.data.Dataset):
    def __init__(self, n=4000, max_len=512):
        g = torch.Generator().manual_seed(0)
        lengths = torch.randint(64, max_len - 1, (n,), generator=g)
        self.examples = [torch.randint(5, VOCAB, (int(k),), generator=g).tolist() for k in lengths]

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return {"input_ids": [2] + self.examples[i][:510] + [3]}


config = BertConfig(vocab_size=VOCAB, hidden_size=768, num_hidden_layers=12,
                    num_attention_heads=12, intermediate_size=3072, max_position_embeddings=512)
model = BertForMaskedLM(config)
print(f"BertForMaskedLM: {model.num_parameters() / 1e6:.1f}M parameters", flush=True)
collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm_probability=0.15,
                                           pad_to_multiple_of=8)
args = TrainingArguments(output_dir="mlm-out", per_device_train_batch_size=256, learning_rate=1e-4,
                         warmup_steps=100, max_steps=2000, logging_steps=10, bf16=True,
                         save_strategy="no", report_to="none", dataloader_num_workers=0)
trainer = Trainer(model=model, args=args, train_dataset=Corpus(), data_collator=collator)
free, _ = torch.cuda.mem_get_info()
embedding_cache = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
trainer.train()
''')


def s21_accelerate_notebook_launcher():
    # A notebook exported to a script: accelerate's notebook_launcher(training_function,
    # num_processes=1) prints "Launching training on one GPU." and calls the function, which
    # prepares a ViT-B-like patch classifier with bf16 mixed precision, prints the free memory,
    # takes all but ~10 GiB for a replay cache and trains on 64 images of 512 px (1024 tokens):
    # the first forward does not fit.
    run_user_script("train_vit_notebook", '''# exported from train_vit.ipynb
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator, notebook_launcher
from accelerate.utils import set_seed


class PatchClassifier(nn.Module):
    def __init__(self, patch=16, dim=768, depth=12, classes=1000):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(3 * patch * patch, dim)
        layer = nn.TransformerEncoderLayer(dim, 12, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(dim, classes)

    def forward(self, images):
        p = self.patch
        patches = images.unfold(2, p, p).unfold(3, p, p).permute(0, 2, 3, 1, 4, 5)
        tokens = self.embed(patches.flatten(3).flatten(1, 2))
        return self.head(self.blocks(tokens).mean(dim=1))


def training_function(image_size, batch_size, epochs):
    set_seed(42)
    accelerator = Accelerator(mixed_precision="bf16")
    model = PatchClassifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    model, optimizer = accelerator.prepare(model, optimizer)
    free, _ = torch.cuda.mem_get_info()
    accelerator.print(f"{free / 2**30:.1f} GiB free on {accelerator.device}")
    replay_cache = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device=accelerator.device)
    for epoch in range(epochs):
        model.train()
        for step in range(50):
            images = torch.randn(batch_size, 3, image_size, image_size, device=accelerator.device)
            labels = torch.randint(0, 1000, (batch_size,), device=accelerator.device)
            loss = F.cross_entropy(model(images), labels)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            if step % 10 == 0:
                accelerator.print(f"epoch {epoch} step {step}: loss {loss.item():.4f}")


notebook_launcher(training_function, args=(512, 64, 3), num_processes=1)
''')


def s21_peft_gc_logits_to_keep():
    # A GRPO-like LoRA step written by hand: gradient_checkpointing_enable(use_reentrant=True)
    # plus enable_input_require_grads, get_peft_model (q_proj, v_proj), a tqdm loop over groups of
    # 4 completions of 512 tokens after 15872-token prompts, forward with logits_to_keep=513 and
    # a policy-gradient loss on the completion's log-probs; a reference-logprob cache leaves
    # ~6 GiB; the first step (forward under checkpointing, then backward recomputing each layer)
    # does not fit.
    run_user_script("grpo_lora_step", '''import torch
from peft import LoraConfig, get_peft_model
from tqdm import trange
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
model.enable_input_require_grads()
model.config.use_cache = False
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05,
                                         target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
model.print_trainable_parameters()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
free, _ = torch.cuda.mem_get_info()
ref_logprob_cache = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device="cuda")
PROMPT, COMPLETION, GROUP = 15872, 512, 4
bar = trange(200, desc="grpo")
for step in bar:
    ids = torch.randint(3, 32000, (GROUP, PROMPT + COMPLETION), device="cuda")
    logits = model(input_ids=ids, logits_to_keep=COMPLETION + 1).logits[:, :-1]
    logps = torch.log_softmax(logits.float(), dim=-1)
    logps = logps.gather(-1, ids[:, -COMPLETION:, None]).squeeze(-1)
    advantages = torch.randn(GROUP, 1, device="cuda")
    loss = -(logps * advantages).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    bar.set_postfix(loss=f"{loss.item():.4f}")
'''.replace("@CKPT@", CKPT))


def s21_lightning_simple_profiler_fp16():
    # Lightning fit with precision="16-mixed", profiler="simple", a CSVLogger,
    # accumulate_grad_batches=4 and gradient clipping; a text classifier (embedding + 6-layer
    # encoder) on batches sorted by length (2 each of 128, 256, 512, then 4096 tokens x 32); a
    # label-embedding bank made in on_fit_start leaves ~6 GiB; the first 4096-token batch does
    # not fit.
    run_user_script("train_textcls", '''import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.loggers import CSVLogger
from torch.utils.data import DataLoader, Dataset


class SortedByLength(Dataset):
    """Pre-bucketed batches, shortest first (less padding)."""

    def __init__(self, batch_size=32):
        self.batches = [(batch_size, length) for length in (128, 128, 256, 256, 512, 512, 4096, 4096)]

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, i):
        b, length = self.batches[i]
        return torch.randint(1, 50000, (b, length)), torch.randint(0, 20, (b,))


class TextClassifier(L.LightningModule):
    def __init__(self, vocab=50000, dim=512, depth=6, classes=20):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 8, 4 * dim, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def on_fit_start(self):
        free, _ = torch.cuda.mem_get_info()
        self.label_bank = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8, device=self.device)

    def training_step(self, batch, batch_idx):
        tokens, labels = batch
        logits = self.head(self.encoder(self.embed(tokens)).mean(dim=1))
        loss = F.cross_entropy(logits, labels)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=5e-4)


trainer = L.Trainer(accelerator="gpu", devices=1, precision="16-mixed", profiler="simple",
                    logger=CSVLogger("logs", name="textcls"), accumulate_grad_batches=4,
                    gradient_clip_val=1.0, max_epochs=2, enable_checkpointing=False,
                    log_every_n_steps=1)
trainer.fit(TextClassifier(), DataLoader(SortedByLength(), batch_size=None, shuffle=False))
''')


def s21_lightning_transfer_batch_mask():
    # A LightningDataModule overrides transfer_batch_to_device to move a protein-like batch and
    # build the (B, heads, L, L) fp32 key-padding bias on the device; batches of 16 crops of 256,
    # 512 then 2048 residues; a template cache made in setup leaves ~3 GiB; the 2048-residue
    # batch's 4 GiB bias does not fit inside the hook.
    run_user_script("train_pairformer", '''import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

HEADS = 16


class Crops(Dataset):
    def __init__(self):
        self.lengths = [256] * 12 + [512] * 12 + [2048] * 12

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        length = self.lengths[i]
        residues = torch.randint(0, 21, (16, length))
        mask = torch.ones(16, length, dtype=torch.bool)
        mask[:, length - length // 8:] = False
        return {"residues": residues, "mask": mask, "target": torch.randn(16, length, 3)}


class CropData(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(Crops(), batch_size=None, num_workers=0)

    def transfer_batch_to_device(self, batch, device, dataloader_idx):
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        n = batch["mask"].shape[1]
        pair = batch["mask"][:, None, :].expand(-1, n, -1)  # padded keys get -inf
        bias = torch.zeros(pair.shape[0], HEADS, pair.shape[1], pair.shape[2], device=device)
        batch["pair_bias"] = bias.masked_fill_(~pair[:, None], float("-inf"))
        return batch


class PairFormer(L.LightningModule):
    def __init__(self, dim=256):
        super().__init__()
        self.embed = nn.Embedding(21, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, 3)

    def setup(self, stage):
        free, _ = torch.cuda.mem_get_info()
        self.template_cache = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")

    def training_step(self, batch, batch_idx):
        h = self.embed(batch["residues"])
        b, n, d = h.shape
        q, k, v = self.qkv(h).view(b, n, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=batch["pair_bias"])
        coords = self.out(attn.transpose(1, 2).reshape(b, n, d))
        loss = F.mse_loss(coords[batch["mask"]], batch["target"][batch["mask"]])
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                    enable_checkpointing=False)
trainer.fit(PairFormer(), datamodule=CropData())
''')


def s21_jax_gp_cholesky():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. Exact GP regression: a jitted
    # log marginal likelihood builds the n x n RBF kernel and its Cholesky factor; n=4000 and
    # n=16000 print their values, n=48000's 9 GiB kernel matrix does not fit.
    run_user_script("gp_regression", '''import time

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl


def rbf(x1, x2, lengthscale, variance):
    sq = jnp.sum(x1 ** 2, 1)[:, None] + jnp.sum(x2 ** 2, 1)[None, :] - 2 * x1 @ x2.T
    return variance * jnp.exp(-0.5 * sq / lengthscale ** 2)


@jax.jit
def log_marginal_likelihood(x, y, lengthscale, variance, noise):
    n = x.shape[0]
    K = rbf(x, x, lengthscale, variance) + noise * jnp.eye(n)
    L = jnp.linalg.cholesky(K)
    alpha = jsl.cho_solve((L, True), y)
    return -0.5 * y @ alpha - jnp.sum(jnp.log(jnp.diag(L))) - 0.5 * n * jnp.log(2 * jnp.pi)


key = jax.random.PRNGKey(0)
print("devices:", jax.devices(), flush=True)
for n in (4000, 16000, 48000):
    kx, ky = jax.random.split(jax.random.fold_in(key, n))
    x = jax.random.uniform(kx, (n, 8))
    y = jnp.sin(x.sum(1)) + 0.1 * jax.random.normal(ky, (n,))
    start = time.time()
    lml = log_marginal_likelihood(x, y, 0.5, 1.0, 1e-2)
    print(f"n={n}: log marginal likelihood {float(lml):.2f} ({time.time() - start:.1f} s)",
          flush=True)
''')


def s21_flax_nnx_embedding_init():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A Flax NNX two-tower
    # recommender is constructed eagerly with nnx.Rngs(0): 6M users x 256 and 3M items x 256
    # fp32 embedding tables (5.7 + 2.9 GiB); initialising the tables does not fit. Without flax
    # (or without nnx) it prints NO-ERROR and exits 3.
    run_user_script("two_tower_nnx", '''import sys

import jax
import jax.numpy as jnp

try:
    from flax import nnx
except ImportError:
    print("NO-ERROR: flax.nnx is not importable: s21_flax_nnx_embedding_init cannot run",
          file=sys.stderr)
    sys.exit(3)


class TwoTower(nnx.Module):
    def __init__(self, n_users, n_items, dim, *, rngs: nnx.Rngs):
        self.user_tower = nnx.Linear(dim, dim, rngs=rngs)
        self.item_tower = nnx.Linear(dim, dim, rngs=rngs)
        self.user_emb = nnx.Embed(n_users, dim, rngs=rngs)
        self.item_emb = nnx.Embed(n_items, dim, rngs=rngs)

    def __call__(self, users, items):
        u = self.user_tower(self.user_emb(users))
        v = self.item_tower(self.item_emb(items))
        return jnp.sum(u * v, axis=-1)


N_USERS, N_ITEMS, DIM = 6_000_000, 3_000_000, 256
print(f"jax {jax.__version__} on {jax.devices()[0]}", flush=True)
print(f"building TwoTower: {N_USERS:,} users, {N_ITEMS:,} items, dim {DIM} "
      f"({(N_USERS + N_ITEMS) * DIM * 4 / 2**30:.1f} GiB of fp32 embeddings)", flush=True)
model = TwoTower(N_USERS, N_ITEMS, DIM, rngs=nnx.Rngs(0))
scores = model(jnp.arange(8), jnp.arange(8))
print("smoke test scores:", scores)
''')


def s21_ngram_dedup_unique():
    # Corpus dedup on the GPU with loguru-like log lines: 8 shards of 128M int32 tokens are made
    # under a tqdm bar and concatenated (4 GiB), 13-gram rolling hashes are computed in place
    # (int64, 8 GiB), then torch.unique(return_inverse=True, return_counts=True) over 1G hashes
    # needs far more than the ~24 GiB an embedding model's workspace leaves.
    run_user_script("dedup_ngrams", '''import logging
import time

import torch
from tqdm import tqdm

logging.basicConfig(format="%(asctime)s | %(levelname)-8s | %(name)s:%(lineno)d - %(message)s",
                    level=logging.INFO)
log = logging.getLogger("dedup")
N_SHARDS, SHARD_TOKENS, NGRAM, P = 8, 128 * 2**20, 13, 1_000_003

torch.zeros(1, device="cuda")
free, _ = torch.cuda.mem_get_info()
embedder_workspace = torch.empty(free - 32 * (1 << 30), dtype=torch.uint8, device="cuda")
log.info("semantic embedder loaded; %.1f GiB free for exact dedup", torch.cuda.mem_get_info()[0] / 2**30)
shards = []
for i in tqdm(range(N_SHARDS), desc="loading shards", unit="shard"):
    g = torch.Generator(device="cuda").manual_seed(i)
    shards.append(torch.randint(0, 50257, (SHARD_TOKENS,), dtype=torch.int32, device="cuda",
                                generator=g))
tokens = torch.cat(shards)
del shards
n = tokens.numel() - NGRAM + 1
log.info("%d tokens, hashing %d %d-grams", tokens.numel(), n, NGRAM)
start = time.time()
hashes = torch.zeros(n, dtype=torch.int64, device="cuda")
for k in range(NGRAM):
    hashes.mul_(P).add_(tokens[k:k + n])
torch.cuda.synchronize()
log.info("hashed in %.2f s", time.time() - start)
del tokens
unique_hashes, inverse, counts = torch.unique(hashes, return_inverse=True, return_counts=True)
duplicates = (counts[inverse] > 1).sum().item()
log.info("%d unique 13-grams, %d positions inside a duplicated 13-gram", unique_hashes.numel(), duplicates)
''')


# ---- session 21 look-alikes


def s21_alloc_conf_split_too_small():
    # Not a GPU OOM: after an earlier OOM the user sets PYTORCH_CUDA_ALLOC_CONF to
    # "max_split_size_mb:16" at the top of the script (below the allocator's 20 MiB minimum);
    # the first CUDA allocation (moving the model) fails parsing the option: "CachingAllocator
    # option max_split_size_mb too small".
    run_user_script("finetune_lowmem", '''import os

# fix for "CUDA out of memory ... try setting max_split_size_mb to avoid fragmentation"
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:16"

import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("finetune")
log.info("PYTORCH_CUDA_ALLOC_CONF=%s", os.environ["PYTORCH_CUDA_ALLOC_CONF"])
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name(0))
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).to("cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(1, 101):
    x = torch.randn(1024, 4096, device="cuda")
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 20 == 0:
        log.info("step %d loss %.5f", step, loss.item())
''')


def s21_memory_fraction_over_one():
    # Not a GPU OOM: a serving script caps its share of the card with
    # set_per_process_memory_fraction(budget / total), but takes the "150 GB" budget as GiB
    # (161 GB) against the H200's 150.1 GB total: ValueError "Invalid fraction value: 1.07...
    # Allowed range: 0~1", after log lines full of GPU memory figures.
    run_user_script("serve_budget", '''import logging
import os

import torch

logging.basicConfig(format="%(asctime)s [%(process)d] %(levelname)s %(name)s: %(message)s",
                    level=logging.INFO)
log = logging.getLogger("serve.memory")
budget_gb = float(os.environ.get("GPU_MEMORY_BUDGET_GB", "150"))
props = torch.cuda.get_device_properties(0)
free, total = torch.cuda.mem_get_info()
log.info("GPU 0: %s, %.1f GB total, %.1f GB free", props.name, total / 1e9, free / 1e9)
fraction = budget_gb * 2**30 / props.total_memory
log.info("memory budget %.0f GB -> per-process memory fraction %.3f", budget_gb, fraction)
torch.cuda.set_per_process_memory_fraction(fraction, 0)
log.info("allocator capped; starting workers")
''')


def s21_triton_grid_y_invalid():
    # Not a GPU OOM: a hand-written Triton kernel that scales rows launches one program per
    # (column block, row) with the rows on the grid's second axis; batches of 4096 and 32768 rows
    # work, 131072 rows exceed CUDA's 65535 limit for grid dimension y and the launch fails with
    # "Triton Error [CUDA]: invalid argument".
    run_user_script("row_scale_triton", '''import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows_kernel(x_ptr, scale_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    pid_col = tl.program_id(0)
    row = tl.program_id(1)
    cols = pid_col * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    s = tl.load(scale_ptr + row)
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, x * s, mask=mask)


def scale_rows(x, scale, block=1024):
    out = torch.empty_like(x)
    n_rows, n_cols = x.shape
    grid = (triton.cdiv(n_cols, block), n_rows)
    scale_rows_kernel[grid](x, scale, out, n_cols, BLOCK=block)
    return out


for n_rows in (4096, 32768, 131072):
    x = torch.randn(n_rows, 1024, device="cuda")
    scale = torch.rand(n_rows, device="cuda")
    out = scale_rows(x, scale)
    err = (out - x * scale[:, None]).abs().max().item()
    print(f"{n_rows:>7} rows: max abs error {err:.2e}", flush=True)
''')


# --------------------------------------------------------------------------- session 22 (blind):
# a GPU test file under pytest, an asyncio micro-batching server, PEFT's PiSSA init, Lightning
# with detect_anomaly and with strategy="fsdp" on one device, torchmetrics' AUROC state,
# PyTorch Geometric's GATConv on a full graph, GPyTorch prediction on a grid, torchdiffeq with a
# finer fixed step, NumPyro's Predictive, JAX's preallocation beside a PyTorch encoder in one
# process, a JAX Newton step in float64 after memory_analysis(), CUDA tensors held by a consumer
# process through a torch.multiprocessing queue, a batch sized from the card's total memory while
# another job holds it, an all-pairs optical-flow correlation, and 3 look-alikes (a truncated
# torch.save archive, the cuBLAS determinism check, PIL's decompression-bomb limit in a worker)


def s22_hf_pytest_prefill_batches():
    # A serving repo's GPU tests run as `python -m pytest -v`: a module fixture loads the bf16
    # checkpoint, another reserves 90% of the free memory for the engine's KV pool (~14 GiB left);
    # a greedy-decode test and the prefill cases up to 32 x 2048 tokens pass, the [64-4096] case's
    # logits (15.6 GiB in bf16) do not fit: pytest's E-prefixed traceback and "1 failed, 5
    # passed". Without pytest it prints NO-ERROR and exits 3.
    import importlib.util

    if importlib.util.find_spec("pytest") is None:
        print("NO-ERROR: pytest is not installed: s22_hf_pytest_prefill_batches cannot run",
              file=sys.stderr)
        sys.exit(3)
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "test_lm_serving.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('''import pytest
import torch
from transformers import AutoModelForCausalLM

CHECKPOINT = "@CKPT@"
VOCAB = 32000


@pytest.fixture(scope="module")
def model():
    model = AutoModelForCausalLM.from_pretrained(CHECKPOINT, dtype=torch.bfloat16,
                                                 device_map="cuda")
    model.eval()
    return model


@pytest.fixture(scope="module")
def kv_pool(model):
    # what the engine reserves at start-up: gpu_memory_utilization=0.9 of the free memory
    free, _ = torch.cuda.mem_get_info()
    pool = torch.empty(int(free * 0.9) // (2 << 20) * (2 << 20), dtype=torch.uint8, device="cuda")
    yield pool
    del pool


def test_weights_on_gpu(model):
    assert all(p.is_cuda for p in model.parameters())
    assert next(model.parameters()).dtype == torch.bfloat16


def test_greedy_decode_is_deterministic(model, kv_pool):
    prompt = torch.tensor([[1, 450, 4996, 17354, 1701, 432, 17204, 975]], device="cuda")
    mask = torch.ones_like(prompt)
    first = model.generate(prompt, attention_mask=mask, max_new_tokens=16, do_sample=False,
                           pad_token_id=0)
    second = model.generate(prompt, attention_mask=mask, max_new_tokens=16, do_sample=False,
                            pad_token_id=0)
    assert torch.equal(first, second)


@pytest.mark.parametrize("batch,seq_len", [(1, 128), (8, 1024), (32, 2048), (64, 4096)])
def test_prefill_logits_finite(model, kv_pool, batch, seq_len):
    ids = torch.randint(3, VOCAB, (batch, seq_len), device="cuda")
    with torch.inference_mode():
        logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
    assert logits.shape == (batch, seq_len, VOCAB)
    assert torch.isfinite(logits).all()
'''.replace("@CKPT@", CKPT))
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(WORK)
    os.execv(sys.executable, [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                              "test_lm_serving.py"])


def s22_hf_asyncio_microbatcher():
    # An asyncio scoring server: requests are queued, a batcher task groups whatever arrived
    # within 5 ms (up to 128) and runs the bf16 checkpoint (logits_to_keep=1) on a one-thread
    # executor; a prefix cache leaves ~8 GiB. Waves of 48 x 256, 96 x 512 and 96 x 1024 tokens
    # are logged; the batch of 128 x ~4096 tokens does not fit, the batcher hands the error to
    # every waiting request and asyncio.gather re-raises it out of asyncio.run.
    run_user_script("score_server", '''import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("score_server")
MAX_BATCH = 128
MAX_WAIT_S = 0.005

log.info("loading model")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
free, _ = torch.cuda.mem_get_info()
prefix_cache = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
gpu = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpu")


@dataclass
class Request:
    tokens: list
    future: asyncio.Future = field(repr=False)


def next_token_logprobs(token_lists):
    longest = max(len(t) for t in token_lists)
    ids = torch.zeros(len(token_lists), longest, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, tokens in enumerate(token_lists):
        ids[row, longest - len(tokens):] = torch.tensor(tokens)
        mask[row, longest - len(tokens):] = 1
    with torch.inference_mode():
        out = model(input_ids=ids.cuda(), attention_mask=mask.cuda(), logits_to_keep=1)
        top = torch.log_softmax(out.logits[:, -1].float(), dim=-1).topk(5, dim=-1)
    return list(zip(top.indices.tolist(), top.values.tolist()))


async def batcher(queue):
    loop = asyncio.get_running_loop()
    while True:
        batch = [await queue.get()]
        await asyncio.sleep(MAX_WAIT_S)  # let concurrent requests join the batch
        while len(batch) < MAX_BATCH and not queue.empty():
            batch.append(queue.get_nowait())
        start = time.perf_counter()
        try:
            results = await loop.run_in_executor(gpu, next_token_logprobs,
                                                 [r.tokens for r in batch])
        except Exception as exc:
            for request in batch:
                request.future.set_exception(exc)
            continue
        for request, result in zip(batch, results):
            request.future.set_result(result)
        log.info("batch of %d requests (longest %d tokens) in %.1f ms", len(batch),
                 max(len(r.tokens) for r in batch), 1000 * (time.perf_counter() - start))


async def score(queue, tokens):
    future = asyncio.get_running_loop().create_future()
    await queue.put(Request(tokens, future))
    return await future


async def main():
    queue = asyncio.Queue()
    worker = asyncio.create_task(batcher(queue))
    g = torch.Generator().manual_seed(0)
    traffic = [(48, 256), (96, 512), (96, 1024), (128, 4096)]
    for wave, (n_requests, n_tokens) in enumerate(traffic, 1):
        lengths = (n_tokens - torch.randint(0, 32, (n_requests,), generator=g)).tolist()
        prompts = [torch.randint(3, 32000, (n,), generator=g).tolist() for n in lengths]
        log.info("wave %d: %d concurrent requests of ~%d tokens", wave, n_requests, n_tokens)
        results = await asyncio.gather(*(score(queue, p) for p in prompts))
        log.info("wave %d done: %d responses", wave, len(results))
    worker.cancel()


asyncio.run(main())
'''.replace("@CKPT@", CKPT))


def s22_peft_pissa_init():
    # PEFT's PiSSA initialisation (init_lora_weights="pissa", r=64, all linear layers) of the bf16
    # model already on the card, beside a cache that leaves ~24 MiB (after empty_cache): the
    # first target's 16 MiB fp32 copy fits, its torch.linalg.svd (a column-major copy, U, Vh and
    # cuSOLVER's workspace) does not, inside get_peft_model.
    run_user_script("pissa_finetune", '''import logging

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
logger = logging.getLogger("pissa")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
logger.info("base model on %s: %.2f GiB allocated", model.device,
            torch.cuda.memory_allocated() / 2**30)
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
reference_logits = torch.empty(free - 24 * (1 << 20), dtype=torch.uint8, device="cuda")
config = LoraConfig(r=64, lora_alpha=64, lora_dropout=0.0, init_lora_weights="pissa",
                    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                    "up_proj", "down_proj"],
                    task_type="CAUSAL_LM")
logger.info("initializing PiSSA adapters (r=%d) from the principal singular vectors", config.r)
model = get_peft_model(model, config)
model.print_trainable_parameters()
logger.info("residual model ready for fine-tuning")
'''.replace("@CKPT@", CKPT))


def s22_lightning_detect_anomaly_embedding():
    # Lightning fit of a two-tower recommender with Trainer(detect_anomaly=True) (left on to
    # chase an old NaN): the item table (2M x 128 fp32, 1 GiB) is a dense nn.Embedding; a
    # hard-negative cache made in on_fit_start leaves ~600 MiB; the forward fits, the table's
    # dense gradient does not: torch's "Error detected in EmbeddingBackward0. Traceback of
    # forward call that caused the error" warning comes before the OOM traceback.
    run_user_script("train_two_tower_debug", '''import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

N_USERS, N_ITEMS, DIM = 500_000, 2_000_000, 128


class Clicks(Dataset):
    def __init__(self, n=262_144):
        g = torch.Generator().manual_seed(0)
        self.users = torch.randint(0, N_USERS, (n,), generator=g)
        self.items = torch.randint(0, N_ITEMS, (n,), generator=g)
        self.clicked = torch.randint(0, 2, (n,), generator=g).float()

    def __len__(self):
        return len(self.users)

    def __getitem__(self, i):
        return self.users[i], self.items[i], self.clicked[i]


class TwoTower(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.users = nn.Embedding(N_USERS, DIM)
        self.items = nn.Embedding(N_ITEMS, DIM)
        self.user_mlp = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, DIM))

    def on_fit_start(self):
        free, _ = torch.cuda.mem_get_info()
        self.hard_negatives = torch.empty(free - 600 * (1 << 20), dtype=torch.uint8,
                                          device=self.device)

    def training_step(self, batch, batch_idx):
        u, i, y = batch
        logits = (self.user_mlp(self.users(u)) * self.items(i)).sum(-1)
        loss = F.binary_cross_entropy_with_logits(logits, y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                    enable_checkpointing=False,
                    detect_anomaly=True)  # still on from chasing the NaN loss of run 41
trainer.fit(TwoTower(), DataLoader(Clicks(), batch_size=4096, shuffle=True))
''')


def s22_lightning_fsdp_one_device():
    # Lightning with strategy="fsdp" and precision="bf16-mixed" on the one GPU (a multi-GPU
    # config run as is): a small causal LM (8 encoder layers, 32000-word head) trains on packed
    # blocks of 512 tokens in the ~8 GiB a prefetch buffer leaves; the last blocks were packed at
    # 8192 tokens and their batch does not fit in the FSDP-wrapped forward.
    run_user_script("train_lm_fsdp", '''import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

VOCAB = 32000


class PackedBlocks(Dataset):
    def __init__(self):
        self.lengths = [512] * 40 + [8192] * 8  # the last shard was packed for long context

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        return torch.randint(0, VOCAB, (self.lengths[i] + 1,))


class TinyLM(L.LightningModule):
    def __init__(self, dim=1024, depth=8):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        layer = nn.TransformerEncoderLayer(dim, 16, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(dim, VOCAB, bias=False)

    def on_fit_start(self):
        free, _ = torch.cuda.mem_get_info()
        self.prefetch = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device=self.device)

    def training_step(self, batch, batch_idx):
        x, y = batch[:, :-1], batch[:, 1:]
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=self.device)
        h = self.blocks(self.embed(x), mask=mask, is_causal=True)
        loss = F.cross_entropy(self.head(h).flatten(0, 1), y.flatten())
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)


trainer = L.Trainer(accelerator="gpu", devices=1, strategy="fsdp", precision="bf16-mixed",
                    max_epochs=1, logger=False, enable_checkpointing=False)
trainer.fit(TinyLM(), DataLoader(PackedBlocks(), batch_size=8))
''')


def s22_torchmetrics_auroc_compute():
    # Evaluation with torchmetrics on the card: MulticlassAUROC(num_classes=1000,
    # thresholds=None) keeps every batch's probabilities as list state on the card; 400 batches
    # of 4096 x 1000 (6.1 GiB) fit beside the cached features, which leave ~10 GiB; compute()
    # concatenates the state (dim_zero_cat) and that second 6.1 GiB does not fit.
    run_user_script("eval_classifier", '''import torch
import torch.nn as nn
from torchmetrics.classification import MulticlassAccuracy, MulticlassAUROC
from tqdm import tqdm

NUM_CLASSES, N_BATCHES, BATCH = 1000, 400, 4096
torch.manual_seed(0)
head = nn.Sequential(nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, NUM_CLASSES)).cuda().eval()
accuracy = MulticlassAccuracy(num_classes=NUM_CLASSES).cuda()
auroc = MulticlassAUROC(num_classes=NUM_CLASSES, average="macro", thresholds=None).cuda()
free, _ = torch.cuda.mem_get_info()
val_features = torch.empty(free - 10 * (1 << 30), dtype=torch.uint8, device="cuda")
with torch.no_grad():
    for step in tqdm(range(N_BATCHES), desc="eval"):
        feats = torch.randn(BATCH, 2048, device="cuda")
        labels = torch.randint(0, NUM_CLASSES, (BATCH,), device="cuda")
        probs = head(feats).softmax(dim=-1)
        accuracy.update(probs, labels)
        auroc.update(probs, labels)
print(f"top-1 accuracy: {accuracy.compute().item():.4f}", flush=True)
print(f"macro AUROC: {auroc.compute().item():.4f}", flush=True)
''')


def s22_pyg_gat_full_batch():
    # PyTorch Geometric: full-batch GAT (GATConv, 8 heads x 32) on a synthetic graph of
    # ogbn-products' size (2.45M nodes, 124M edges) moved whole to the card; the script prints
    # the Data object; the first conv's per-edge messages (x_j, ~120 GiB in fp32) do not fit.
    run_user_script("train_gat_products", '''import time

import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.nn import GATConv

N_NODES, N_EDGES, N_FEATURES, N_CLASSES = 2_449_029, 123_718_280, 100, 47


class GAT(torch.nn.Module):
    def __init__(self, hidden=32, heads=8):
        super().__init__()
        self.conv1 = GATConv(N_FEATURES, hidden, heads=heads, dropout=0.2)
        self.conv2 = GATConv(hidden * heads, N_CLASSES, heads=1, dropout=0.2)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.2, training=self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.2, training=self.training)
        return self.conv2(x, edge_index)


torch.manual_seed(0)
data = Data(x=torch.randn(N_NODES, N_FEATURES), edge_index=torch.randint(0, N_NODES, (2, N_EDGES)),
            y=torch.randint(0, N_CLASSES, (N_NODES,)))
data.train_mask = torch.rand(N_NODES) < 0.08
print(data, flush=True)
device = torch.device("cuda")
data = data.to(device)
model = GAT().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
for epoch in range(1, 101):
    start = time.time()
    model.train()
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)
    loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
    loss.backward()
    optimizer.step()
    print(f"Epoch: {epoch:03d}, Loss: {loss.item():.4f}, Time: {time.time() - start:.1f}s",
          flush=True)
''')


def s22_gpytorch_grid_predict():
    # GPyTorch exact GP (RBF + ScaleKernel, Cholesky up to 10000 points): 30 iterations on 8000
    # spatial points print the tutorial's "Iter n/30 - Loss ... lengthscale ... noise" lines; then
    # the posterior is evaluated on a 1024 x 1024 grid in one call: the 1M x 8000 test-train
    # kernel (31 GiB in fp32) does not fit in the ~24 GiB that the covariate rasters leave.
    run_user_script("gp_field_map", '''import torch
import gpytorch


class ExactGPModel(gpytorch.models.ExactGP):
    def __init__(self, train_x, train_y, likelihood):
        super().__init__(train_x, train_y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


torch.manual_seed(0)
train_x = torch.rand(8000, 2, device="cuda")
train_y = (torch.sin(6 * train_x[:, 0]) * torch.cos(4 * train_x[:, 1])
           + 0.1 * torch.randn(8000, device="cuda"))
likelihood = gpytorch.likelihoods.GaussianLikelihood().cuda()
model = ExactGPModel(train_x, train_y, likelihood).cuda()
free, _ = torch.cuda.mem_get_info()
covariate_rasters = torch.empty(free - 24 * (1 << 30), dtype=torch.uint8, device="cuda")

model.train()
likelihood.train()
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
with gpytorch.settings.max_cholesky_size(10000):
    for i in range(30):
        optimizer.zero_grad()
        loss = -mll(model(train_x), train_y)
        loss.backward()
        print(f"Iter {i + 1}/30 - Loss: {loss.item():.3f}   "
              f"lengthscale: {model.covar_module.base_kernel.lengthscale.item():.3f}   "
              f"noise: {model.likelihood.noise.item():.3f}", flush=True)
        optimizer.step()

    model.eval()
    likelihood.eval()
    side = 1024
    gx, gy = torch.meshgrid(torch.linspace(0, 1, side), torch.linspace(0, 1, side), indexing="ij")
    test_x = torch.stack([gx.flatten(), gy.flatten()], dim=-1).cuda()
    print(f"predicting the field on a {side} x {side} grid ({test_x.shape[0]:,} points)",
          flush=True)
    with torch.no_grad(), gpytorch.settings.fast_pred_var():
        observed_pred = likelihood(model(test_x))
        field = observed_pred.mean.reshape(side, side).cpu()
        lower, upper = observed_pred.confidence_region()
print("field range", field.min().item(), field.max().item())
''')


def s22_torchdiffeq_rk4_refine():
    # A neural ODE (torchdiffeq.odeint, fixed-step rk4, backprop through the solver) trains 20
    # iterations with step_size 0.1 (40 function evaluations each, logged with NFE); phase 2
    # refines the step to 0.01: 400 evaluations whose saved activations (~45 MiB each) outgrow
    # the ~8 GiB that the cached trajectories leave, inside the solver's forward.
    run_user_script("train_neural_ode", '''import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchdiffeq import odeint


class ODEFunc(nn.Module):
    def __init__(self, dim=512, hidden=2048):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, dim))
        self.nfe = 0

    def forward(self, t, y):
        self.nfe += 1
        return self.net(y)


torch.manual_seed(0)
func = ODEFunc().cuda()
optimizer = torch.optim.Adam(func.parameters(), lr=1e-3)
t = torch.tensor([0.0, 1.0], device="cuda")
free, _ = torch.cuda.mem_get_info()
trajectory_cache = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
step_size = 0.1
for it in range(1, 41):
    if it == 21:
        step_size = 0.01
        print("phase 2: refining the solver step to 0.01", flush=True)
    y0 = torch.randn(4096, 512, device="cuda")
    target = torch.roll(y0, 1, dims=1)
    func.nfe = 0
    start = time.time()
    y1 = odeint(func, y0, t, method="rk4", options={"step_size": step_size})[-1]
    loss = F.mse_loss(y1, target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"iter {it:3d}  step_size {step_size}  NFE {func.nfe}  loss {loss.item():.5f}  "
          f"({time.time() - start:.2f} s)", flush=True)
''')


def s22_numpyro_predictive_draws():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. NumPyro: Bayesian linear
    # regression fitted with SVI (AutoNormal, 2000 steps, its tqdm bar with init and average
    # loss), then Predictive(..., num_samples=1000) over 2M test rows: the stacked "obs" draws
    # (1000 x 2M fp32, 8 GB) do not fit: RESOURCE_EXHAUSTED. Without numpyro: NO-ERROR, exit 3.
    run_user_script("bayes_regression", '''import sys

import jax
import jax.numpy as jnp

try:
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import SVI, Predictive, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal
except ImportError:
    print("NO-ERROR: numpyro is not installed: s22_numpyro_predictive_draws cannot run",
          file=sys.stderr)
    sys.exit(3)

D = 200


def model(X, y=None):
    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([X.shape[1]]).to_event(1))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", X.shape[0]):
        numpyro.sample("obs", dist.Normal(X @ w + b, sigma), obs=y)


key = jax.random.PRNGKey(0)
k_w, k_x, k_noise, k_test, k_svi, k_pred = jax.random.split(key, 6)
true_w = jax.random.normal(k_w, (D,))
X_train = jax.random.normal(k_x, (100_000, D))
y_train = X_train @ true_w + 0.3 + 0.5 * jax.random.normal(k_noise, (100_000,))
X_test = jax.random.normal(k_test, (2_000_000, D))
print(f"train {X_train.shape}, test {X_test.shape} on {jax.devices()[0]}", flush=True)

guide = AutoNormal(model)
svi = SVI(model, guide, numpyro.optim.Adam(step_size=5e-3), Trace_ELBO())
svi_result = svi.run(k_svi, 2000, X_train, y_train)
params = svi_result.params
print("posterior mean of b:", float(params["b_auto_loc"]), flush=True)

predictive = Predictive(model, guide=guide, params=params, num_samples=1000)
draws = predictive(k_pred, X_test)["obs"]
lo, hi = jnp.percentile(draws, jnp.array([5.0, 95.0]), axis=0)
print("mean 90% interval width:", float((hi - lo).mean()))
''')


def s22_jax_prealloc_torch_encoder():
    # JAX and PyTorch in one process with JAX's defaults (run.sh sets no XLA variable): the JAX
    # ranker's first arrays make JAX preallocate 75% of the card; then a PyTorch item encoder
    # embeds a 393216-item catalogue in one no_grad call: its 24 GiB hidden activation fits in
    # what is left, the 24 GiB GELU output does not (a torch OutOfMemoryError in which "this
    # process" holds ~130 GiB but PyTorch has allocated ~25 GiB).
    run_user_script("rank_catalogue", '''import time

import jax
import torch
import torch.nn as nn

D_ITEM, D_EMB = 1024, 256
key = jax.random.PRNGKey(0)
k_user, k_item = jax.random.split(key)
ranker = {"user": jax.random.normal(k_user, (D_EMB, D_EMB)) * 0.05,
          "item": jax.random.normal(k_item, (D_EMB, D_EMB)) * 0.05}
print(f"jax {jax.__version__}: ranker on {jax.devices()[0]}", flush=True)


@jax.jit
def scores(params, users, items):
    return (users @ params["user"]) @ (items @ params["item"]).T


encoder = nn.Sequential(nn.Linear(D_ITEM, 16384), nn.GELU(), nn.Linear(16384, D_EMB)).cuda().eval()
print(f"torch {torch.__version__}: item encoder on {torch.cuda.get_device_name(0)}", flush=True)
catalogue = torch.randn(393_216, D_ITEM, device="cuda")
start = time.time()
with torch.no_grad():
    item_vecs = encoder(catalogue)
print(f"encoded {item_vecs.shape[0]} items in {time.time() - start:.1f} s", flush=True)
items = jax.dlpack.from_dlpack(item_vecs)
users = jax.random.normal(key, (1024, D_EMB))
top = jax.lax.top_k(scores(ranker, users, items), 100)[1]
print(top.shape)
''')


def s22_jax_newton_hessian_x64():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. float64 (jax_enable_x64)
    # logistic regression by Newton's method: jax.hessian inside a jitted step, compiled ahead of
    # time and its memory_analysis() printed before running; 1024 and 4096 features converge, at
    # 32768 features the 8.6 GB Hessian alone is over the limit: RESOURCE_EXHAUSTED.
    run_user_script("newton_logreg", '''import time

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
N = 8192


def nll(w, X, y):
    z = X @ w
    return jnp.sum(jnp.logaddexp(0.0, z) - y * z) + 0.5e-3 * (w @ w)


@jax.jit
def newton_step(w, X, y):
    g = jax.grad(nll)(w, X, y)
    H = jax.hessian(nll)(w, X, y)
    return w - jnp.linalg.solve(H, g), jnp.linalg.norm(g)


key = jax.random.PRNGKey(0)
for d in (1024, 4096, 32768):
    kx, kw = jax.random.split(jax.random.fold_in(key, d))
    X = jax.random.normal(kx, (N, d)) / jnp.sqrt(d)
    y = (X @ jax.random.normal(kw, (d,)) > 0).astype(jnp.float64)
    w = jnp.zeros(d)
    compiled = newton_step.lower(w, X, y).compile()
    stats = compiled.memory_analysis()
    if stats is not None:
        print(f"d={d}: arguments {stats.argument_size_in_bytes / 2**20:.1f} MiB, "
              f"temporaries {stats.temp_size_in_bytes / 2**20:.1f} MiB, "
              f"outputs {stats.output_size_in_bytes / 2**20:.1f} MiB", flush=True)
    start = time.time()
    for it in range(5):
        w, gnorm = compiled(w, X, y)
        print(f"d={d} iter {it}: |grad| = {float(gnorm):.3e}", flush=True)
    print(f"d={d}: 5 Newton steps in {time.time() - start:.2f} s", flush=True)
''')


def s22_mp_queue_cuda_ipc_writer():
    # Embedding export with a writer process: the main process encodes batches on the card and
    # puts each 32 MiB CUDA tensor on a torch.multiprocessing (spawn) queue; the writer keeps
    # them in a list until its shard is full (2048 batches). Shared CUDA tensors stay allocated
    # in the producer while the consumer holds them, so the producer's allocated memory grows
    # (logged) until the ~4 GiB that the corpus leaves run out after ~120 batches.
    run_user_script("export_embeddings", '''import logging
import os

import torch
import torch.multiprocessing as mp
import torch.nn as nn

logging.basicConfig(format="%(asctime)s [%(processName)s] %(levelname)s %(message)s",
                    level=logging.INFO)
log = logging.getLogger("export")
SHARD_BATCHES = 2048


def writer(queue, ready, out_dir):
    torch.cuda.set_device(0)
    torch.zeros(1, device="cuda")
    os.makedirs(out_dir, exist_ok=True)
    ready.put(os.getpid())
    shard, n_shards = [], 0
    while True:
        emb = queue.get()
        if emb is None:
            break
        shard.append(emb)
        if len(shard) == SHARD_BATCHES:
            torch.save(torch.cat(shard).cpu(), os.path.join(out_dir, f"shard_{n_shards:04d}.pt"))
            shard, n_shards = [], n_shards + 1


def main():
    ctx = mp.get_context("spawn")
    queue, ready = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=writer, args=(queue, ready, "embeddings"), name="writer", daemon=True)
    proc.start()
    log.info("writer process %d ready", ready.get(timeout=120))
    encoder = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda().eval()
    free, _ = torch.cuda.mem_get_info()
    corpus_tokens = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
    for batch_idx in range(1, 100_001):
        x = torch.randn(8192, 1024, device="cuda")
        with torch.no_grad():
            emb = encoder(x)
        queue.put(emb)
        if batch_idx % 25 == 0:
            log.info("batch %d queued, %.2f GiB allocated", batch_idx,
                     torch.cuda.memory_allocated() / 2**30)
    queue.put(None)
    proc.join()


if __name__ == "__main__":
    main()
''')


def s22_embed_batch_from_total_memory():
    # run.sh's holder leaves 6 GiB of the card: an image-embedding job sizes its batch from
    # get_device_properties(0).total_memory ("80% of the card", logged: ~4770 images of 224 px
    # for a ResNet-50 in fp16) instead of the free memory; the first convolution's output
    # (7 GiB) does not fit in what the other job leaves.
    run_user_script("embed_images", '''import logging

import torch
import torchvision

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("embed_images")
ACTIVATION_MIB_PER_IMAGE = 24  # measured at 224 px, fp16, ResNet-50
props = torch.cuda.get_device_properties(0)
batch_size = int(0.8 * props.total_memory / (ACTIVATION_MIB_PER_IMAGE * 2**20))
log.info("GPU 0: %s, %.1f GiB; batch size %d (80%% of the card)", props.name,
         props.total_memory / 2**30, batch_size)
model = torchvision.models.resnet50(weights=None)
model.fc = torch.nn.Identity()
model = model.cuda().half().eval()
for shard in range(4):
    images = torch.rand(batch_size, 3, 224, 224, device="cuda", dtype=torch.half)
    with torch.inference_mode():
        embeddings = model(images)
    log.info("shard %d: %s", shard, tuple(embeddings.shape))
''')


def s22_optical_flow_corr_volume():
    # A RAFT-like optical-flow pass by hand: a stride-8 conv encoder and the all-pairs
    # correlation volume (bmm of the two frames' features) with a 4-level pooled pyramid; clips of
    # 8 frame pairs at 540p fit; the first 1080p clip's volume (8 x 32640^2 fp32 = 34 GB) does
    # not fit in the ~24 GiB that the decoded frames leave.
    run_user_script("flow_clips", '''import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


class Encoder(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 64, 7, stride=2, padding=3), nn.ReLU(inplace=True),
            nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(128, dim, 3, stride=2, padding=1))

    def forward(self, x):
        return self.net(x)


def correlation_pyramid(f1, f2, levels=4):
    b, c, h, w = f1.shape
    corr = torch.bmm(f1.flatten(2).transpose(1, 2), f2.flatten(2)) / c ** 0.5
    corr = corr.reshape(b * h * w, 1, h, w)
    pyramid = [corr]
    for _ in range(levels - 1):
        pyramid.append(F.avg_pool2d(pyramid[-1], 2, stride=2))
    return pyramid


encoder = Encoder().cuda().eval()
free, _ = torch.cuda.mem_get_info()
decoded_frames = torch.empty(free - 24 * (1 << 30), dtype=torch.uint8, device="cuda")
clips = [("clip_0001", 544, 960)] * 3 + [("clip_0004", 1088, 1920)] + [("clip_0005", 544, 960)]
for name, height, width in tqdm(clips, desc="flow"):
    start = time.time()
    frames = torch.rand(9, 3, height, width, device="cuda")
    with torch.no_grad():
        feats = encoder(frames)
        pyramid = correlation_pyramid(feats[:-1], feats[1:])
        volume_gib = sum(p.numel() for p in pyramid) * 4 / 2**30
    tqdm.write(f"{name} {width}x{height}: correlation pyramid {volume_gib:.2f} GiB, "
               f"{time.time() - start:.2f} s")
''')


# ---- session 22 look-alikes


def s22_torch_load_truncated_checkpoint():
    # Not a GPU OOM: a resume script finds checkpoints/last.pt, which the previous job (killed
    # while saving) left cut at 60% of its size; torch.load(map_location="cuda") fails reading
    # the zip archive ("PytorchStreamReader failed reading zip archive: failed finding central
    # directory") before anything reaches the card.
    import torch
    import torch.nn as nn

    ckpt_dir = os.path.join(WORK, "checkpoints")
    os.makedirs(ckpt_dir, exist_ok=True)
    path = os.path.join(ckpt_dir, "last.pt")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model(torch.randn(8, 1024)).sum().backward()
    optimizer.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 7,
                "step": 5600}, path)
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        fh.truncate(size * 6 // 10)
    run_user_script("resume_training", '''import logging
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("train")
model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
start_epoch = 0
path = os.path.join("checkpoints", "last.pt")
if os.path.exists(path):
    log.info("found %s (%.1f MB), resuming", path, os.path.getsize(path) / 1e6)
    state = torch.load(path, map_location="cuda")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    start_epoch = state["epoch"] + 1
for epoch in range(start_epoch, 20):
    for step in range(100):
        x = torch.randn(512, 1024, device="cuda")
        loss = F.mse_loss(model(x), x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    log.info("epoch %d: loss %.4f", epoch, loss.item())
''')


def s22_deterministic_cublas_workspace():
    # Not a GPU OOM: a reproducibility setup calls torch.use_deterministic_algorithms(True) and
    # logs the card's memory, but CUBLAS_WORKSPACE_CONFIG is not set (the scenario clears it);
    # the first nn.Linear on the card raises the "uses CuBLAS ... CUBLAS_WORKSPACE_CONFIG=:4096:8"
    # RuntimeError.
    os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
    run_user_script("train_reproducible", '''import logging
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("repro")


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True)


seed_everything(1234)
free, total = torch.cuda.mem_get_info()
log.info("seed 1234, deterministic algorithms on; GPU memory %.1f / %.1f GiB free", free / 2**30,
         total / 2**30)
model = nn.Sequential(nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(1, 501):
    x = torch.randn(256, 784, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 100 == 0:
        log.info("step %d loss %.4f", step, loss.item())
''')


def _png_header_only(path, width, height):
    """A PNG whose header says width x height (its pixel data is a stub): PIL's open() reads the
    header and checks the size before decoding anything."""
    import struct
    import zlib

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    with open(path, "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n")
        fh.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        fh.write(chunk(b"IDAT", zlib.compress(b"\x00" * 64)))
        fh.write(chunk(b"IEND", b""))


def s22_pil_decompression_bomb_worker():
    # Not a GPU OOM: a tile classifier trains on PNG tiles read with PIL in 2 DataLoader
    # workers; tile 41 is a 20000 x 20000 mosaic exported by mistake, and PIL refuses it at
    # open() ("Image size (400000000 pixels) exceeds limit of 178956970 pixels, could be
    # decompression bomb DOS attack"), re-raised by the DataLoader as "Caught
    # DecompressionBombError in DataLoader worker process 0".
    from PIL import Image

    tiles = os.path.join(WORK, "tiles")
    os.makedirs(tiles, exist_ok=True)
    for i in range(96):
        path = os.path.join(tiles, f"tile_{i:05d}.png")
        if i == 41:
            _png_header_only(path, 20000, 20000)
        elif not os.path.exists(path):
            colour = ((i * 37) % 256, (i * 91) % 256, (i * 13) % 256)
            Image.new("RGB", (128, 128), colour).save(path)
    run_user_script("train_tiles", '''import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision.transforms.functional import pil_to_tensor
from tqdm import tqdm


class Tiles(Dataset):
    def __init__(self, root):
        self.paths = sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith(".png"))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        image = Image.open(self.paths[i]).convert("RGB").resize((128, 128))
        return pil_to_tensor(image).float() / 255, i % 4


model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(64, 4)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(Tiles("tiles"), batch_size=16, shuffle=False, num_workers=2)
for epoch in range(3):
    bar = tqdm(loader, desc=f"epoch {epoch}")
    for images, labels in bar:
        loss = F.cross_entropy(model(images.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        bar.set_postfix(loss=f"{loss.item():.3f}")
''')


# --------------------------------------------------------------------------- session 22, second
# H200 batch (blind): beam search keeping its scores, a Trainer's in-training evaluation with
# compute_metrics, torch.compile's max-autotune at the first call, a PEFT model upcast to fp32
# before merging, a server's KV pool sized from max batch x max length beside another job, DDP
# (NCCL, world size 1) at the first backward, per-example gradients for data scoring and an
# empirical NTK in JAX, a Lightning prediction writer buffering on the card, a UNet on a whole
# 8192 x 8192 scene, a CTC loss on a long-utterance bucket, and 3 look-alikes (a device-side
# assert from an index_put_ with a void label, a host MemoryError for a dense adjacency matrix, a
# rendezvous port already in use)


def s22e_hf_beam_scores_backtranslate():
    # Back-translation for data augmentation: generate() with num_beams=8,
    # num_return_sequences=4, max_new_tokens=512, output_scores=True and
    # return_dict_in_generate=True (for compute_transition_scores) on shards of 16 prompts of
    # ~320-384 tokens (128 beams); a dedup index leaves ~8 GiB. The prefill's KV cache (~3 GiB)
    # fits; each step keeps a 128 x 32000 fp32 scores row (16 MiB) and grows the cache (8 MiB),
    # until the memory runs out some 150 steps into the first shard.
    run_user_script("backtranslate", '''import logging
import time

import torch
from transformers import AutoModelForCausalLM, GenerationConfig

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("backtranslate")
N_SEGMENTS, N_SHARDS = 16, 24

start = time.time()
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
log.info("reverse model loaded in %.1f s (%.2f GiB)", time.time() - start,
         torch.cuda.memory_allocated() / 2**30)
free, _ = torch.cuda.mem_get_info()
dedup_index = torch.empty(free - 8 * (1 << 30), dtype=torch.uint8, device="cuda")
gen_config = GenerationConfig(num_beams=8, num_return_sequences=4, max_new_tokens=512,
                              do_sample=False, length_penalty=1.0, early_stopping=False,
                              output_scores=True, return_dict_in_generate=True,
                              bos_token_id=1, eos_token_id=2, pad_token_id=0)
log.info("generation: %s beams, %s returned, up to %s new tokens", gen_config.num_beams,
         gen_config.num_return_sequences, gen_config.max_new_tokens)

g = torch.Generator().manual_seed(0)
kept = 0
for shard in range(N_SHARDS):
    lengths = (384 - torch.randint(0, 64, (N_SEGMENTS,), generator=g)).tolist()
    longest = max(lengths)
    ids = torch.zeros(N_SEGMENTS, longest, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, n in enumerate(lengths):
        ids[row, longest - n:] = torch.randint(3, 32000, (n,), generator=g)
        mask[row, longest - n:] = 1
    log.info("shard %d/%d: %d segments, longest %d tokens", shard + 1, N_SHARDS, N_SEGMENTS,
             longest)
    t0 = time.time()
    with torch.inference_mode():
        out = model.generate(input_ids=ids.cuda(), attention_mask=mask.cuda(),
                             generation_config=gen_config)
        transition = model.compute_transition_scores(out.sequences, out.scores, out.beam_indices,
                                                     normalize_logits=False)
    avg_logprob = transition.sum(-1) / (transition < 0).sum(-1).clamp_min(1)
    keep = avg_logprob > -6.0
    kept += int(keep.sum())
    log.info("shard %d: %d candidates, %d kept (%.1f s)", shard + 1, len(avg_logprob),
             int(keep.sum()), time.time() - t0)
log.info("done: %d synthetic sources", kept)
'''.replace("@CKPT@", CKPT))


def s22e_hf_trainer_eval_logits_midtrain():
    # Trainer.train with eval_strategy="steps" (eval_steps=10) and a compute_metrics that needs
    # the logits (token accuracy), eval_accumulation_steps unset: the first in-training
    # evaluation keeps every eval batch's logits (8 x 512 x 32000 bf16, 250 MiB) on the card and
    # concatenates them; a kNN datastore leaves ~14 GiB, training uses about half of it, and the
    # accumulated logits of the 512-block eval set (16 GiB) do not fit, some 20 batches in.
    run_user_script("finetune_lm", '''import logging

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)
transformers.utils.logging.set_verbosity_warning()
logger = logging.getLogger("finetune_lm")


class Blocks(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        self.n, self.seed = n, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed + i)
        ids = torch.randint(3, 32000, (512,), generator=g)
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


def compute_metrics(eval_pred):
    logits, labels = eval_pred.predictions, eval_pred.label_ids
    preds = logits[:, :-1].argmax(-1)
    targets = labels[:, 1:]
    valid = targets != -100
    return {"token_accuracy": float((preds[valid] == targets[valid]).mean())}


model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
logger.info("model: %.0fM parameters", sum(p.numel() for p in model.parameters()) / 1e6)
free, _ = torch.cuda.mem_get_info()
knn_datastore = torch.empty(free - 14 * (1 << 30), dtype=torch.uint8, device="cuda")
args = TrainingArguments(
    output_dir="lm-finetune", per_device_train_batch_size=4, per_device_eval_batch_size=8,
    max_steps=300, learning_rate=2e-5, warmup_steps=10, eval_strategy="steps", eval_steps=10,
    logging_steps=5, save_strategy="no", bf16=True, report_to="none", dataloader_num_workers=0,
)
trainer = Trainer(model=model, args=args, train_dataset=Blocks(20000, 0),
                  eval_dataset=Blocks(512, 10**6), compute_metrics=compute_metrics)
trainer.train()
logger.info("final eval: %s", trainer.evaluate())
'''.replace("@CKPT@", CKPT))


def s22e_compile_max_autotune_ffn():
    # torch.compile(model, mode="max-autotune") of a 4-block fp16 feed-forward scorer, first
    # called with the production batch of 131072 rows; a cache leaves ~4 GiB. Inductor
    # autotunes the matmuls on example buffers of the real shapes (the up projection's output
    # alone is 4 GiB) and then runs them: either way the memory runs out in the first call.
    run_user_script("score_offline", '''import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("score_offline")
BATCH, DIM, HIDDEN = 131072, 4096, 16384


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Scorer(nn.Module):
    def __init__(self, depth=4):
        super().__init__()
        self.blocks = nn.Sequential(*[FeedForward(DIM, HIDDEN) for _ in range(depth)])
        self.head = nn.Linear(DIM, 1)

    def forward(self, x):
        return self.head(self.blocks(x)).squeeze(-1)


torch.manual_seed(0)
model = Scorer().cuda().half().eval()
log.info("scorer: %.0fM parameters on %s", sum(p.numel() for p in model.parameters()) / 1e6,
         torch.cuda.get_device_name(0))
free, _ = torch.cuda.mem_get_info()
candidate_cache = torch.empty(free - 4 * (1 << 30), dtype=torch.uint8, device="cuda")
compiled = torch.compile(model, mode="max-autotune")
for shard in range(64):
    x = torch.randn(BATCH, DIM, device="cuda", dtype=torch.half)
    start = time.time()
    with torch.no_grad():
        scores = compiled(x)
    torch.cuda.synchronize()
    log.info("shard %d: %d rows, mean score %.4f (%.2f s)", shard, BATCH, scores.float().mean(),
             time.time() - start)
''')


def s22e_peft_fp32_upcast_merge():
    # A LoRA fine-tune (r=16 on q_proj/v_proj) of the bf16 checkpoint trains 20 steps (logged);
    # the script then keeps the base model's reference logits on the card (all but ~600 MiB
    # after empty_cache) and upcasts the PEFT model with model.float() "for an exact merge"
    # before merge_and_unload: the fp32 copies of the weights (+1.1 GiB) run out mid-way
    # through nn.Module._apply.
    run_user_script("lora_merge_fp32", '''import logging
import time

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
logger = logging.getLogger("lora")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=["q_proj", "v_proj"],
                    task_type="CAUSAL_LM")
model = get_peft_model(model, config)
model.print_trainable_parameters()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)
g = torch.Generator().manual_seed(0)
start = time.time()
for step in range(1, 21):
    ids = torch.randint(3, 32000, (4, 512), generator=g).cuda()
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 5 == 0:
        logger.info("step %d: loss %.4f (%.1f s)", step, loss.item(), time.time() - start)
del optimizer
torch.cuda.empty_cache()
free, _ = torch.cuda.mem_get_info()
reference_logits = torch.empty(free - 600 * (1 << 20), dtype=torch.uint8, device="cuda")
logger.info("upcasting to float32 before merging the adapter")
model = model.float()
merged = model.merge_and_unload()
merged.save_pretrained("merged-fp32")
logger.info("saved merged model to merged-fp32")
'''.replace("@CKPT@", CKPT))


def s22e_hf_kv_pool_server_start():
    # run.sh's holder leaves 40 GiB of the card (another job). A hand-written LM server starts:
    # argparse defaults --max-num-seqs 256 --max-model-len 4096, the weights load (1 GiB), and
    # the KV pool is allocated in one torch.zeros from the config (layers x 2 x seqs x kv heads
    # x len x head_dim, bf16 = 64 GiB), logged "allocating KV cache for 256 sequences": that
    # single allocation does not fit.
    run_user_script("lm_server", '''import argparse
import logging
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM

parser = argparse.ArgumentParser(description="LM completion server")
parser.add_argument("--model", default="@CKPT@")
parser.add_argument("--host", default="0.0.0.0")
parser.add_argument("--port", type=int, default=8080)
parser.add_argument("--max-num-seqs", type=int, default=256)
parser.add_argument("--max-model-len", type=int, default=4096)
args = parser.parse_args()

logging.basicConfig(format="%(asctime)s | %(levelname)-7s | %(name)s | %(message)s",
                    level=logging.INFO)
log = logging.getLogger("lm_server")
log.info("args: %s", vars(args))
config = AutoConfig.from_pretrained(args.model)
start = time.time()
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, device_map="cuda")
model.eval()
log.info("weights loaded in %.1f s: %.2f GiB on %s", time.time() - start,
         torch.cuda.memory_allocated() / 2**30, torch.cuda.get_device_name(0))
head_dim = config.hidden_size // config.num_attention_heads
shape = (config.num_hidden_layers, 2, args.max_num_seqs, config.num_key_value_heads,
         args.max_model_len, head_dim)
size_gib = torch.Size(shape).numel() * 2 / 2**30
log.info("allocating KV cache for %d sequences x %d tokens (%.1f GiB)", args.max_num_seqs,
         args.max_model_len, size_gib)
kv_cache = torch.zeros(shape, dtype=torch.bfloat16, device="cuda")
free_slots = list(range(args.max_num_seqs))
log.info("KV cache ready: %d slots", len(free_slots))
log.info("listening on http://%s:%d", args.host, args.port)
'''.replace("@CKPT@", CKPT))


def s22e_ddp_nccl_first_backward():
    # A DDP script run with plain python (NCCL, tcp:// init, rank 0 of 1): a 16-layer 8192-wide
    # MLP (4.3 GB fp32) is wrapped by DistributedDataParallel (its buckets take as much again),
    # a feature store leaves ~3 GiB, the first forward fits and the first backward's parameter
    # gradients (4.3 GB, gradient_as_bucket_view off) do not: the OOM comes out of
    # loss.backward().
    run_user_script("train_ddp", '''import datetime
import logging
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("train_ddp")


def main():
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29611", rank=rank,
                            world_size=world_size, timeout=datetime.timedelta(minutes=10))
    log.info("[rank %d/%d] process group ready (%s)", rank, world_size, dist.get_backend())
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = nn.Sequential(*[nn.Sequential(nn.Linear(8192, 8192), nn.ReLU())
                                for _ in range(16)], nn.Linear(8192, 1000))
    n_params = sum(p.numel() for p in model.parameters())
    model = DDP(model, device_ids=[local_rank], bucket_cap_mb=100)
    log.info("[rank %d] DDP model: %.2fB parameters", rank, n_params / 1e9)
    free, _ = torch.cuda.mem_get_info()
    feature_store = torch.empty(free - 3 * (1 << 30), dtype=torch.uint8, device="cuda")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    start = time.time()
    for step in range(1, 1001):
        x = torch.randn(256, 8192, device="cuda")
        y = torch.randint(0, 1000, (256,), device="cuda")
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 50 == 0 and rank == 0:
            log.info("step %d: loss %.4f (%.1f s)", step, loss.item(), time.time() - start)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
''')


def s22e_jax_per_example_grad_scores():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. A training loop in plain JAX
    # (3072-4096-4096-100 MLP, jitted SGD steps, logged) scores the training set every 100 steps
    # for data pruning by per-example gradient norms: jit(vmap(grad)) returns the per-example
    # gradients of a chunk of 128 examples (128 x 119 MB = 15 GB), which is RESOURCE_EXHAUSTED
    # at the first scoring pass.
    run_user_script("grand_pruning", '''import time

import jax
import jax.numpy as jnp

SIZES = (3072, 4096, 4096, 100)
N_TRAIN, BATCH, SCORE_CHUNK = 16384, 256, 128


def init(key):
    params = []
    for k, (d_in, d_out) in zip(jax.random.split(key, len(SIZES) - 1), zip(SIZES, SIZES[1:])):
        params.append((jax.random.normal(k, (d_in, d_out)) * jnp.sqrt(2.0 / d_in),
                       jnp.zeros(d_out)))
    return params


def forward(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, y):
    logits = forward(params, x)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[..., None], axis=-1))


@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads), loss


def example_loss(params, x, y):
    return loss_fn(params, x[None], y[None])


per_example_grads = jax.jit(jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0)))


@jax.jit
def grad_norms(grads):
    leaves = jax.tree_util.tree_leaves(grads)
    return jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in leaves))


key = jax.random.PRNGKey(0)
k_params, k_x, k_y = jax.random.split(key, 3)
params = init(k_params)
X = jax.random.normal(k_x, (N_TRAIN, SIZES[0]))
Y = jax.random.randint(k_y, (N_TRAIN,), 0, SIZES[-1])
print(f"{N_TRAIN} examples, {sum(p.size for p in jax.tree_util.tree_leaves(params)) / 1e6:.1f}M "
      f"parameters on {jax.devices()[0]}", flush=True)
start = time.time()
for step in range(1, 1001):
    idx = jax.random.randint(jax.random.fold_in(key, step), (BATCH,), 0, N_TRAIN)
    params, loss = train_step(params, X[idx], Y[idx])
    if step % 25 == 0:
        print(f"step {step}: loss {float(loss):.4f} ({time.time() - start:.1f} s)", flush=True)
    if step % 100 == 0:
        scores = []
        for lo in range(0, N_TRAIN, SCORE_CHUNK):
            grads = per_example_grads(params, X[lo:lo + SCORE_CHUNK], Y[lo:lo + SCORE_CHUNK])
            scores.append(grad_norms(grads))
        scores = jnp.concatenate(scores)
        keep = jnp.argsort(scores)[N_TRAIN // 4:]
        print(f"step {step}: GraNd scores mean {float(scores.mean()):.3f}, "
              f"keeping {keep.shape[0]} examples", flush=True)
''')


def s22e_jax_empirical_ntk():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. The empirical neural tangent
    # kernel by Jacobian contraction (the JAX cookbook's way): jit of jax.jacrev of a
    # 3072-2048-2048-10 MLP for both inputs, then einsum. A probe of 2 x 2 images prints its
    # kernel; the 64-train x 16-test kernel needs the 64 x 10 x 10.5M-parameter Jacobian
    # (27 GB): RESOURCE_EXHAUSTED.
    run_user_script("ntk_analysis", '''import time

import jax
import jax.numpy as jnp

SIZES = (3072, 2048, 2048, 10)


def init(key):
    params = []
    for k, (d_in, d_out) in zip(jax.random.split(key, len(SIZES) - 1), zip(SIZES, SIZES[1:])):
        params.append({"w": jax.random.normal(k, (d_in, d_out)) / jnp.sqrt(d_in),
                       "b": jnp.zeros(d_out)})
    return params


def f(params, x):
    for layer in params[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


@jax.jit
def empirical_ntk(params, x1, x2):
    jac1 = jax.tree_util.tree_leaves(jax.jacrev(f)(params, x1))
    jac2 = jax.tree_util.tree_leaves(jax.jacrev(f)(params, x2))
    jac1 = [j.reshape(j.shape[0], j.shape[1], -1) for j in jac1]
    jac2 = [j.reshape(j.shape[0], j.shape[1], -1) for j in jac2]
    return sum(jnp.einsum("Naf,Mbf->NMab", a, b) for a, b in zip(jac1, jac2))


key = jax.random.PRNGKey(0)
k_p, k_train, k_test = jax.random.split(key, 3)
params = init(k_p)
x_train = jax.random.normal(k_train, (50000, 3072))
x_test = jax.random.normal(k_test, (10000, 3072))
n_params = sum(p.size for p in jax.tree_util.tree_leaves(params))
print(f"MLP {SIZES}: {n_params / 1e6:.1f}M parameters on {jax.devices()[0]}", flush=True)
for n_train, n_test in ((2, 2), (64, 16), (512, 128)):
    start = time.time()
    kernel = empirical_ntk(params, x_train[:n_train], x_test[:n_test])
    trace = jnp.trace(kernel, axis1=2, axis2=3)
    print(f"NTK {n_train} x {n_test}: shape {kernel.shape}, mean trace {float(trace.mean()):.2f} "
          f"({time.time() - start:.1f} s)", flush=True)
''')


def s22e_lightning_prediction_writer_buffer():
    # Lightning trainer.predict(..., return_predictions=False) with a BasePredictionWriter
    # (write_interval="batch") that buffers each batch's prediction in a list and saves a shard
    # every 256 batches: the predictions (4096 x 8192 fp32, 128 MiB a batch) stay on the card,
    # and with ~6 GiB left by a cache made in on_predict_start they run out some 40 batches
    # into the predict loop.
    run_user_script("embed_catalogue", '''import os

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.callbacks import BasePredictionWriter
from torch.utils.data import DataLoader, TensorDataset


class ShardWriter(BasePredictionWriter):
    def __init__(self, out_dir, batches_per_shard=256):
        super().__init__(write_interval="batch")
        self.out_dir = out_dir
        self.batches_per_shard = batches_per_shard
        self.buffer = []
        self.shard = 0
        os.makedirs(out_dir, exist_ok=True)

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx,
                           dataloader_idx):
        self.buffer.append(prediction)
        if len(self.buffer) == self.batches_per_shard:
            self.flush()

    def on_predict_epoch_end(self, trainer, pl_module):
        if self.buffer:
            self.flush()

    def flush(self):
        path = os.path.join(self.out_dir, f"embeddings_{self.shard:05d}.pt")
        torch.save(torch.cat(self.buffer).cpu(), path)
        self.buffer.clear()
        self.shard += 1


class Encoder(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(512, 4096), nn.GELU(), nn.Linear(4096, 8192))

    def on_predict_start(self):
        free, _ = torch.cuda.mem_get_info()
        self.item_cache = torch.empty(free - 6 * (1 << 30), dtype=torch.uint8,
                                      device=self.device)

    def predict_step(self, batch, batch_idx):
        (x,) = batch
        return F.normalize(self.net(x), dim=-1)


torch.manual_seed(0)
items = TensorDataset(torch.randn(400_000, 512))
trainer = L.Trainer(accelerator="gpu", devices=1, logger=False,
                    callbacks=[ShardWriter("catalogue_embeddings")])
trainer.predict(Encoder(), DataLoader(items, batch_size=4096), return_predictions=False)
print("wrote", len(os.listdir("catalogue_embeddings")), "shards")
''')


def s22e_unet_whole_scene_nograd():
    # Land-cover inference with a UNet-like net (additive skips, widths 16-128, fp32) under
    # torch.no_grad(): scenes up to MAX_SIDE=8192 px are run whole, larger ones in tiles; the
    # 2048 and 4096 px scenes pass (logged with tqdm), the 8192 x 8192 mosaic's full-resolution
    # decoder maps (4 GiB each for 16 channels) do not fit in the ~12 GiB a scene cache leaves.
    run_user_script("landcover_infer", '''import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

MAX_SIDE = 8192  # scenes up to this size are run whole, larger ones in tiles
TILE = 4096


def block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out),
                         nn.ReLU(inplace=True), nn.Conv2d(c_out, c_out, 3, padding=1),
                         nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, in_ch=4, n_classes=9, widths=(16, 32, 64, 128)):
        super().__init__()
        self.stem = block(in_ch, widths[0])
        self.downs = nn.ModuleList(block(widths[i], widths[i + 1]) for i in range(3))
        self.ups = nn.ModuleList(nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2)
                                 for i in reversed(range(3)))
        self.decs = nn.ModuleList(block(widths[i], widths[i]) for i in reversed(range(3)))
        self.head = nn.Conv2d(widths[0], n_classes, 1)

    def forward(self, x):
        skips = [self.stem(x)]
        for down in self.downs:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        h = skips.pop()
        for up, dec in zip(self.ups, self.decs):
            h = dec(up(h) + skips.pop())
        return self.head(h)


def predict(model, scene):
    side = max(scene.shape[-2:])
    if side <= MAX_SIDE:
        return model(scene).argmax(1)
    out = torch.empty(scene.shape[0], *scene.shape[-2:], dtype=torch.long, device=scene.device)
    for top in range(0, scene.shape[-2], TILE):
        for left in range(0, scene.shape[-1], TILE):
            tile = scene[..., top:top + TILE, left:left + TILE]
            out[..., top:top + TILE, left:left + TILE] = model(tile).argmax(1)
    return out


model = UNet().cuda().eval()
free, _ = torch.cuda.mem_get_info()
scene_cache = torch.empty(free - 12 * (1 << 30), dtype=torch.uint8, device="cuda")
scenes = [("S2A_T31TCJ_20240612_r2048", 2048), ("S2B_T31TCJ_20240617_r4096", 4096),
          ("S2A_T31TCJ_20240622_r4096", 4096), ("mosaic_T31TCJ_2024Q2", 8192),
          ("S2B_T31TDJ_20240627_r4096", 4096)]
bar = tqdm(scenes, desc="scenes", unit="scene")
for name, side in bar:
    start = time.time()
    scene = torch.rand(1, 4, side, side, device="cuda")
    with torch.no_grad():
        classes = predict(model, scene)
    counts = torch.bincount(classes.flatten(), minlength=9)
    bar.write(f"{name}: {side}x{side}, dominant class {int(counts.argmax())} "
              f"({time.time() - start:.2f} s)")
''')


def s22e_asr_ctc_sortagrad_buckets():
    # An ASR model (strided 1-D conv front end and conv blocks, 32 output symbols) trained with
    # F.ctc_loss; the first epoch runs length buckets shortest first (SortaGrad): 10 s, 20 s and
    # 40 s buckets of 32 utterances train (tqdm bar); at the 160 s bucket (8000 frames, targets
    # up to 2600 symbols) the activations (~5.5 GiB) and CTC's alpha table (32 x 8000 x 5201
    # fp32, 5 GiB) fit in the ~13 GiB a feature cache leaves, and the backward's beta table of
    # the same size does not.
    run_user_script("train_ctc", '''import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

VOCAB = 32  # blank, space, apostrophe, a-z, 3 punctuation marks
N_MELS, BATCH = 80, 32


class ConvCTC(nn.Module):
    def __init__(self, channels=256, depth=5):
        super().__init__()
        self.front = nn.Conv1d(N_MELS, channels, 11, stride=2, padding=5)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv1d(channels, channels, 11, padding=5, groups=channels),
                          nn.Conv1d(channels, channels, 1), nn.BatchNorm1d(channels), nn.GELU())
            for _ in range(depth))
        self.out = nn.Conv1d(channels, VOCAB, 1)

    def forward(self, mels):
        x = F.gelu(self.front(mels))
        for block in self.blocks:
            x = x + block(x)
        return self.out(x).permute(2, 0, 1).log_softmax(-1)  # (T, B, V)


model = ConvCTC().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
free, _ = torch.cuda.mem_get_info()
feature_cache = torch.empty(free - 13 * (1 << 30), dtype=torch.uint8, device="cuda")
# SortaGrad: the first epoch goes through the length buckets shortest first
buckets = ([(10, 500, 150)] * 4 + [(20, 1000, 300)] * 4 + [(40, 2000, 650)] * 4
           + [(160, 8000, 2600)] * 4)
g = torch.Generator(device="cuda").manual_seed(0)
bar = tqdm(buckets, desc="epoch 0 (sortagrad)")
for seconds, frames, max_target in bar:
    start = time.time()
    mels = torch.randn(BATCH, N_MELS, 2 * frames, device="cuda", generator=g)
    targets = torch.randint(1, VOCAB, (BATCH, max_target), device="cuda", generator=g)
    target_lengths = torch.randint(max_target * 3 // 4, max_target + 1, (BATCH,), device="cuda",
                                   generator=g)
    log_probs = model(mels)
    input_lengths = torch.full((BATCH,), log_probs.shape[0], dtype=torch.long, device="cuda")
    loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
                      zero_infinity=True)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    optimizer.step()
    bar.set_postfix(sec=seconds, loss=f"{loss.item():.2f}", it_s=f"{time.time() - start:.2f}")
''')


# ---- session 22, second H200 batch: look-alikes


def s22e_dice_onehot_void_label_assert():
    # Not a GPU OOM: run.sh sets CUDA_LAUNCH_BLOCKING=1. A segmentation training loop with a Dice
    # loss builds its one-hot targets by advanced-index assignment (onehot[rows, labels] = 1,
    # an index_put_ on the card); from step 24 the batches come from a shard whose annotation
    # tool marked the image borders with the void label 255, out of range for 19 classes: the
    # index kernel's "index out of bounds" assertion and "CUDA error: device-side assert
    # triggered" at that line.
    run_user_script("train_seg_dice", '''import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

N_CLASSES = 19
VOID = 255  # pixels the annotators left unlabeled


def one_hot_pixels(labels, n_classes):
    flat = labels.reshape(-1)
    onehot = torch.zeros(flat.numel(), n_classes, device=labels.device)
    onehot[torch.arange(flat.numel(), device=labels.device), flat] = 1.0
    return onehot.reshape(*labels.shape, n_classes).permute(0, 3, 1, 2)


def dice_loss(logits, labels, eps=1.0):
    probs = logits.softmax(dim=1)
    target = one_hot_pixels(labels, N_CLASSES)
    inter = (probs * target).sum(dim=(0, 2, 3))
    union = probs.sum(dim=(0, 2, 3)) + target.sum(dim=(0, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1),
                      nn.ReLU(), nn.Conv2d(64, N_CLASSES, 1)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(0)
bar = tqdm(range(1, 201), desc="train")
for step in bar:
    images = torch.rand(8, 3, 256, 256, generator=g)
    labels = torch.randint(0, N_CLASSES, (8, 256, 256), generator=g)
    if step >= 24:  # the "fine" shard: borders are void
        labels[:, :6, :] = VOID
        labels[:, :, :6] = VOID
    images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
    logits = model(images)
    loss = F.cross_entropy(logits, labels, ignore_index=VOID) + dice_loss(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    bar.set_postfix(loss=f"{loss.item():.4f}")
''')


def s22e_citation_graph_dense_adjacency():
    # Not a GPU OOM: data preparation for a GCN on a citation graph (1.2M papers, 5.4M
    # citations) builds a dense adjacency with numpy.zeros((n, n)) before converting to torch:
    # numpy's host allocation of 5.24 TiB fails (_ArrayMemoryError "Unable to allocate ...")
    # after the model is already on the card.
    run_user_script("prepare_gcn", '''import logging
import time

import numpy as np
import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("prepare_gcn")
N_PAPERS, N_CITATIONS, N_FEATURES, N_FIELDS = 1_200_000, 5_400_000, 128, 40

start = time.time()
rng = np.random.default_rng(0)
src = rng.integers(0, N_PAPERS, N_CITATIONS)
dst = rng.integers(0, N_PAPERS, N_CITATIONS)
features = rng.standard_normal((N_PAPERS, N_FEATURES), dtype=np.float32)
log.info("citation graph: %d papers, %d citations, %d features (%.1f s)", N_PAPERS, N_CITATIONS,
         N_FEATURES, time.time() - start)


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1 = nn.Linear(N_FEATURES, 256)
        self.lin2 = nn.Linear(256, N_FIELDS)

    def forward(self, adj, x):
        x = torch.relu(torch.sparse.mm(adj, self.lin1(x)))
        return torch.sparse.mm(adj, self.lin2(x))


device = torch.device("cuda")
model = GCN().to(device)
log.info("model on %s", torch.cuda.get_device_name(device))
log.info("building normalized adjacency")
adj = np.zeros((N_PAPERS, N_PAPERS), dtype=np.float32)
adj[src, dst] = 1.0
adj[dst, src] = 1.0
adj += np.eye(N_PAPERS, dtype=np.float32)
deg = adj.sum(axis=1)
adj = adj / np.sqrt(deg)[:, None] / np.sqrt(deg)[None, :]
adj_t = torch.from_numpy(adj).to_sparse().to(device)
log.info("adjacency: %d non-zeros", adj_t._nnz())
''')


_PORT_SQUATTER = """import os
import socket
import sys
import time

parent, port = int(sys.argv[1]), int(sys.argv[2])
held = []
for family, host in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
        sock.listen(16)
        held.append(sock)
    except OSError:
        pass
print(len(held), flush=True)
while os.getppid() == parent:
    time.sleep(0.2)
"""


def s22e_dist_port_in_use():
    # Not a GPU OOM: a single-node training script run by hand (RANK=0, WORLD_SIZE=1 defaults,
    # MASTER_PORT 29500) loads its model onto the card, then init_process_group("nccl") finds
    # the rendezvous port still held by an earlier job (here a small process of this scenario
    # that listens on 29500 until the script exits): the TCPStore server cannot listen
    # (DistNetworkError, EADDRINUSE / address already in use).
    import subprocess

    squatter = subprocess.Popen([sys.executable, "-c", _PORT_SQUATTER, str(os.getpid()), "29500"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    squatter.stdout.readline()  # listening (or the port was taken already)
    run_user_script("train_single_node", '''import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("train")
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29500")
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")
rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda()
log.info("rank %d/%d: model on %s, %.1f MiB allocated", rank, world_size,
         torch.cuda.get_device_name(0), torch.cuda.memory_allocated() / 2**20)
log.info("init_process_group(nccl) at %s:%s", os.environ["MASTER_ADDR"],
         os.environ["MASTER_PORT"])
dist.init_process_group("nccl")
model = nn.parallel.DistributedDataParallel(model)
log.info("ready")
''')


# --------------------------------------------------------------------------- session 23 (blind):
# packing-free SFT through DataCollatorWithFlattening, a pairwise reward model under accelerate,
# Lightning's ddp_spawn (the child's error re-raised by the parent), GPU augmentation inside
# spawned DataLoader workers, a hand-written decode loop growing its KV cache with torch.cat,
# nucleus sampling over a 256k vocabulary, a diffrax ensemble saving every step, an e3nn
# interatomic potential on a large radius graph, all_gather_object of the predictions under NCCL,
# a NeRF validation render with a too-large chunk, BoTorch's optimize_acqf on a 40k-point GP,
# CuPy k-means codebook sweeps, optax's L-BFGS on a large image, and 5 look-alikes (multinomial
# over more than 2^24 items, save_pretrained on a full disk, a CUDA graph replayed with a larger
# batch, torch.load's weights_only refusal, a negative tensor size from an int32 overflow)


def s23_hf_flattening_collator_sft():
    # run.sh's holder leaves 16 GiB (another job on the card). Packing-free SFT: the Trainer gets
    # DataCollatorWithFlattening, which concatenates the whole batch of 24 instruction documents
    # (256-4096 tokens each) into one row of ~50k tokens with restarting position_ids; the bf16
    # model's activations and logits for that row do not fit in the first training step.
    run_user_script("sft_flatten", '''import logging
import sys

import torch
import transformers
from transformers import (AutoModelForCausalLM, DataCollatorWithFlattening, Trainer,
                          TrainingArguments)

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    datefmt="%m/%d/%Y %H:%M:%S", handlers=[logging.StreamHandler(sys.stdout)],
                    level=logging.INFO)
transformers.utils.logging.set_verbosity_warning()
logger = logging.getLogger("sft")
MODEL = "@CKPT@"


class InstructionDocs(torch.utils.data.Dataset):
    """Pre-tokenized prompt+response documents; no padding, the collator flattens them."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.lengths = torch.randint(256, 4097, (n,), generator=g).tolist()
        self.seed = seed

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        ids = torch.randint(3, 32000, (self.lengths[i],), generator=g).tolist()
        prompt = min(128, len(ids) // 4)
        return {"input_ids": ids, "labels": [-100] * prompt + ids[prompt:]}


train = InstructionDocs(48_000, seed=1)
logger.info("train docs: %d, mean length %.0f tokens", len(train),
            sum(train.lengths) / len(train.lengths))
model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.bfloat16)
logger.info("attention implementation: %s", model.config._attn_implementation)
args = TrainingArguments(
    output_dir="sft-flatten", per_device_train_batch_size=24, gradient_accumulation_steps=1,
    learning_rate=1e-5, lr_scheduler_type="cosine", warmup_steps=100, num_train_epochs=1,
    logging_steps=10, save_strategy="steps", save_steps=500, bf16=True, report_to="none",
    remove_unused_columns=False, dataloader_num_workers=0,
)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithFlattening())
trainer.train()
trainer.save_model("sft-flatten/final")
'''.replace("@CKPT@", CKPT))


def s23_accelerate_reward_pairwise():
    # run.sh's holder leaves 20 GiB. A reward model (the bf16 checkpoint as
    # AutoModelForSequenceClassification, num_labels=1: the new score head is reported) trained
    # with a Bradley-Terry loss under accelerate (bf16, gradient accumulation 4): each step runs
    # 16 chosen + 16 rejected responses padded to ~2048 tokens in one forward; the activations of
    # the 32 x 2048 batch do not fit in the first step.
    run_user_script("train_reward", '''import logging
import time

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.logging import get_logger
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForSequenceClassification

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)
logger = get_logger(__name__)
MAX_LEN, PAD = 2048, 0


class Preferences(Dataset):
    def __init__(self, n=20_000):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        prompt = torch.randint(3, 32000, (int(torch.randint(64, 1024, (1,), generator=g)),),
                               generator=g)
        chosen = torch.randint(3, 32000, (int(torch.randint(256, 1024, (1,), generator=g)),),
                               generator=g)
        rejected = torch.randint(3, 32000, (int(torch.randint(256, 1024, (1,), generator=g)),),
                                 generator=g)
        return (torch.cat([prompt, chosen])[:MAX_LEN], torch.cat([prompt, rejected])[:MAX_LEN])


def collate(pairs):
    seqs = [c for c, _ in pairs] + [r for _, r in pairs]
    longest = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), longest), PAD, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, s in enumerate(seqs):
        ids[row, :len(s)] = s
        mask[row, :len(s)] = 1
    return {"input_ids": ids, "attention_mask": mask}


accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=4)
model = AutoModelForSequenceClassification.from_pretrained("@CKPT@", num_labels=1,
                                                           dtype=torch.bfloat16)
model.config.pad_token_id = PAD
optimizer = torch.optim.AdamW(model.parameters(), lr=9e-6, weight_decay=0.0)
loader = DataLoader(Preferences(), batch_size=16, shuffle=True, collate_fn=collate)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
logger.info("reward model on %s, %d pairs per micro-batch, %d processes", accelerator.device,
            16, accelerator.num_processes)
model.train()
start = time.time()
for step, batch in enumerate(loader):
    with accelerator.accumulate(model):
        rewards = model(**batch).logits.squeeze(-1).float()
        chosen, rejected = rewards.chunk(2)
        loss = -F.logsigmoid(chosen - rejected).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    if step % 20 == 0:
        acc = (chosen > rejected).float().mean()
        logger.info("step %d loss %.4f acc %.3f (%.1f s)", step, loss.item(), acc.item(),
                    time.time() - start)
'''.replace("@CKPT@", CKPT))


def s23_lightning_ddp_spawn_oom():
    # run.sh's holder leaves 8 GiB. A Lightning image classifier (torchvision ResNet-50,
    # 16-mixed) is fit with strategy="ddp_spawn" on devices=1 (the multi-GPU config run as is):
    # the training step of 192 images at 448 px runs out of memory inside the spawned process,
    # and the parent re-raises it as torch.multiprocessing's ProcessRaisedException with the
    # child's traceback as text.
    run_user_script("train_classifier", '''import lightning as L
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset

IMAGE_SIZE, N_CLASSES = 448, 200


class RandomBirds(Dataset):
    def __len__(self):
        return 6000

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, IMAGE_SIZE, IMAGE_SIZE, generator=g), i % N_CLASSES


class Classifier(L.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = torchvision.models.resnet50(weights=None, num_classes=N_CLASSES)
        self.net = self.net.to(memory_format=torch.channels_last)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x.to(memory_format=torch.channels_last)), y)
        self.log("train/loss", loss, prog_bar=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9,
                              weight_decay=1e-4)
        return [opt], [torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=30)]


def main():
    trainer = L.Trainer(accelerator="gpu", devices=1, strategy="ddp_spawn",
                        precision="16-mixed", max_epochs=30, logger=False,
                        enable_checkpointing=False, log_every_n_steps=10)
    loader = DataLoader(RandomBirds(), batch_size=192, shuffle=True, num_workers=0)
    trainer.fit(Classifier(), loader)


if __name__ == "__main__":
    main()
''')


def s23_dataloader_worker_cuda_augment():
    # run.sh's holder leaves 3 GiB. A 3D segmentation loader does its augmentation on the GPU
    # inside 4 DataLoader workers (multiprocessing_context="spawn", since workers touch CUDA):
    # each worker makes its own CUDA context at its first .cuda() and then a resampling grid of
    # ~1 GiB. On the H200 (2026-12) worker 0's first .cuda() failed ("CUDA error: out of memory",
    # a torch.AcceleratorError) and the main process re-raised it as "Caught AcceleratorError in
    # DataLoader worker process 0"; an OutOfMemoryError from the grid is the other outcome.
    run_user_script("train_ct_seg", '''import logging
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

logging.basicConfig(format="%(asctime)s %(levelname)s %(processName)s %(message)s",
                    level=logging.INFO)
log = logging.getLogger("train_ct_seg")
PATCH = (96, 512, 512)
OUT = (128, 640, 640)


class CTVolumes(Dataset):
    """Decoded on the CPU, augmented on the GPU (random rotation + rescale via grid_sample)."""

    def __len__(self):
        return 400

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        volume = torch.randint(-1024, 3072, (1, 1, *PATCH), generator=g, dtype=torch.int16)
        x = volume.cuda().float().div_(1024.0)
        angle = float(torch.rand(1, generator=g)) * 0.3
        scale = 0.9 + 0.2 * float(torch.rand(1, generator=g))
        theta = torch.tensor([[[scale * math.cos(angle), -math.sin(angle), 0.0, 0.0],
                               [math.sin(angle), scale * math.cos(angle), 0.0, 0.0],
                               [0.0, 0.0, scale, 0.0]]], device="cuda")
        grid = F.affine_grid(theta, (1, 1, *OUT), align_corners=False)
        x = F.grid_sample(x, grid, mode="bilinear", align_corners=False)
        label = (x > 0.2).to(torch.uint8)
        return x[0].half().cpu(), label[0, 0].cpu()


def main():
    model = nn.Sequential(nn.Conv3d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv3d(16, 2, 1)).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    loader = DataLoader(CTVolumes(), batch_size=1, shuffle=True, num_workers=4,
                        multiprocessing_context="spawn", persistent_workers=True,
                        pin_memory=True, prefetch_factor=2)
    log.info("model on %s, %d workers", torch.cuda.get_device_name(0), loader.num_workers)
    for epoch in range(100):
        for step, (x, y) in enumerate(loader):
            x, y = x.cuda(non_blocking=True).float(), y.cuda(non_blocking=True).long()
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if step % 10 == 0:
                log.info("epoch %d step %d loss %.4f", epoch, step, loss.item())


if __name__ == "__main__":
    main()
''')


def s23_manual_kv_cat_decode():
    # run.sh's holder leaves 10 GiB. A nanoGPT-style fp16 model (24 layers, d=1536) samples 96
    # stories in parallel with a hand-written decode loop whose per-layer KV cache grows by
    # torch.cat each token; the cache and the copies torch.cat makes use up the memory some
    # hundreds of tokens in (tqdm bar), in the torch.cat of one layer.
    run_user_script("sample_stories", '''import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

N_LAYER, D, N_HEAD, VOCAB, BLOCK = 24, 1536, 16, 50304, 8192


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * D, D))

    def forward(self, x, cache=None):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (z.view(b, t, N_HEAD, D // N_HEAD).transpose(1, 2) for z in (q, k, v))
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, D))
        x = x + self.mlp(self.ln2(x))
        return x, (k, v)


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, D), nn.Embedding(BLOCK, D)
        self.blocks = nn.ModuleList(Block() for _ in range(N_LAYER))
        self.ln_f = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx, caches=None, start=0):
        pos = torch.arange(start, start + idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        new_caches = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, None if caches is None else caches[i])
            new_caches.append(kv)
        return self.lm_head(self.ln_f(x[:, -1])), new_caches


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=0.9):
    logits, caches = model(prompt)
    out = [prompt]
    pos = prompt.shape[1]
    for _ in tqdm(range(max_new_tokens), desc="sampling", unit="tok", mininterval=0.5):
        probs = F.softmax(logits.float() / temperature, dim=-1)
        nxt = torch.multinomial(probs, 1)
        out.append(nxt)
        logits, caches = model(nxt, caches, start=pos)
        pos += 1
    return torch.cat(out, dim=1)


torch.manual_seed(1337)
model = GPT().cuda().half().eval()
print(f"number of parameters: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M")
prompts = torch.randint(0, VOCAB, (96, 256), device="cuda")
start = time.time()
samples = generate(model, prompts, max_new_tokens=4096)
print(f"sampled {samples.shape} in {time.time() - start:.1f} s")
torch.save(samples.cpu(), "samples.pt")
''')


def s23_topp_sort_large_vocab():
    # run.sh's holder leaves 6 GiB. Synthetic-data generation with a recurrent LM over a 256k
    # SentencePiece vocabulary: 1024 sequences sampled in parallel with a hand-written top-p
    # (nucleus) sampler that softmaxes in fp32 and sorts the whole vocabulary; the first step's
    # sort (values + int64 indices, ~3 GiB) does not fit beside the fp32 probabilities.
    run_user_script("synth_generate", '''import argparse
import logging
import time

import torch
import torch.nn as nn
from tqdm import tqdm

parser = argparse.ArgumentParser()
parser.add_argument("--num-samples", type=int, default=1024)
parser.add_argument("--max-new-tokens", type=int, default=512)
parser.add_argument("--top-p", type=float, default=0.95)
parser.add_argument("--temperature", type=float, default=0.8)
args = parser.parse_args()
logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("synth")
VOCAB, DIM = 256_000, 2048


class RecurrentLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.rnn = nn.GRU(DIM, DIM, num_layers=2, batch_first=True)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens, state=None):
        h, state = self.rnn(self.embed(tokens), state)
        return self.head(h[:, -1]), state


def sample_top_p(logits, top_p, temperature):
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    sorted_probs, sorted_idx = torch.sort(probs, dim=-1, descending=True)
    cumulative = torch.cumsum(sorted_probs, dim=-1)
    sorted_probs[cumulative - sorted_probs > top_p] = 0.0
    sorted_probs.div_(sorted_probs.sum(dim=-1, keepdim=True))
    choice = torch.multinomial(sorted_probs, num_samples=1)
    return torch.gather(sorted_idx, -1, choice)


log.info("args: %s", vars(args))
model = RecurrentLM().cuda().half().eval()
log.info("model: %.0fM parameters, %.2f GiB allocated", sum(p.numel() for p in model.parameters())
         / 1e6, torch.cuda.memory_allocated() / 2**30)
tokens = torch.full((args.num_samples, 1), 2, dtype=torch.long, device="cuda")  # <bos>
state, out = None, []
start = time.time()
with torch.inference_mode():
    for _ in tqdm(range(args.max_new_tokens), desc="generating", unit="tok"):
        logits, state = model(tokens, state)
        tokens = sample_top_p(logits, args.top_p, args.temperature)
        out.append(tokens)
log.info("generated %d x %d tokens in %.1f s", args.num_samples, len(out), time.time() - start)
''')


def s23_diffrax_saveat_steps():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. An ensemble forecast of the
    # Lorenz-96 system with diffrax: diffeqsolve under jax.vmap with an adaptive Tsit5 step and
    # SaveAt(steps=True), which preallocates max_steps=16384 saved states per member; 256 members
    # run, the 8192-member ensemble's output buffers (~21 GB) do not fit: RESOURCE_EXHAUSTED.
    run_user_script("l96_ensemble", '''import time

import diffrax
import jax
import jax.numpy as jnp

DIM, FORCING = 40, 8.0


def lorenz96(t, y, args):
    return (jnp.roll(y, -1) - jnp.roll(y, 2)) * jnp.roll(y, 1) - y + FORCING


term = diffrax.ODETerm(lorenz96)
solver = diffrax.Tsit5()
controller = diffrax.PIDController(rtol=1e-5, atol=1e-7)


@jax.jit
def forecast(y0s):
    def member(y0):
        sol = diffrax.diffeqsolve(term, solver, t0=0.0, t1=10.0, dt0=0.01, y0=y0,
                                  saveat=diffrax.SaveAt(steps=True),
                                  stepsize_controller=controller, max_steps=16384)
        return sol.ts, sol.ys, sol.stats["num_accepted_steps"]

    return jax.vmap(member)(y0s)


key = jax.random.PRNGKey(0)
print(f"diffrax {diffrax.__version__} on {jax.devices()[0]}", flush=True)
for members in (256, 8192):
    y0s = FORCING + 0.01 * jax.random.normal(jax.random.fold_in(key, members), (members, DIM))
    start = time.time()
    ts, ys, steps = forecast(y0s)
    ys.block_until_ready()
    print(f"{members} members: {int(steps.max())} steps max, saved {ys.shape} "
          f"({ys.nbytes / 2**30:.2f} GiB) in {time.time() - start:.1f} s", flush=True)
''')


def s23_e3nn_tensor_product_edges():
    # run.sh's holder leaves 20 GiB. An equivariant interatomic potential with e3nn (NequIP-like
    # interaction: spherical harmonics of the edge vectors, a radial MLP giving per-edge weights,
    # FullyConnectedTensorProduct with shared_weights=False) trains on energies and forces;
    # two batches of ~100k edges train (logged with their peak memory), then a batch of ~770k
    # edges (32 neighbours per atom) does not fit: on the H200 the first layer's per-edge
    # weights (the radial MLP's last matmul in e3nn's FullyConnectedNet, 8 GiB) ran out.
    run_user_script("train_potential", '''import logging
import time

import torch
import torch.nn as nn
from e3nn import o3
from e3nn.math import soft_one_hot_linspace
from e3nn.nn import FullyConnectedNet

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("potential")
CUTOFF, N_BASIS, N_SPECIES = 6.0, 8, 10


class Interaction(nn.Module):
    def __init__(self, irreps_node, irreps_sh):
        super().__init__()
        self.tp = o3.FullyConnectedTensorProduct(irreps_node, irreps_sh, irreps_node,
                                                 shared_weights=False)
        self.radial = FullyConnectedNet([N_BASIS, 64, 64, self.tp.weight_numel],
                                        torch.nn.functional.silu)

    def forward(self, x, src, dst, sh, emb):
        msg = self.tp(x[src], sh, self.radial(emb))
        return x + torch.zeros_like(x).index_add_(0, dst, msg) / 40.0


class Potential(nn.Module):
    def __init__(self, layers=3):
        super().__init__()
        self.irreps_node = o3.Irreps("16x0e + 16x1o + 16x2e")
        self.irreps_sh = o3.Irreps.spherical_harmonics(2)
        self.embed = nn.Embedding(N_SPECIES, self.irreps_node.dim)
        self.layers = nn.ModuleList(Interaction(self.irreps_node, self.irreps_sh)
                                    for _ in range(layers))
        self.readout = o3.Linear(self.irreps_node, "1x0e")

    def forward(self, species, pos, src, dst):
        vec = pos[dst] - pos[src]
        sh = o3.spherical_harmonics(self.irreps_sh, vec, normalize=True,
                                    normalization="component")
        emb = soft_one_hot_linspace(vec.norm(dim=-1), 0.0, CUTOFF, N_BASIS,
                                    basis="smooth_finite", cutoff=True) * N_BASIS ** 0.5
        x = self.embed(species)
        for layer in self.layers:
            x = layer(x, src, dst, sh, emb)
        return self.readout(x).sum()


def radius_graph(n_atoms, avg_neighbors, g):
    src = torch.arange(n_atoms).repeat_interleave(avg_neighbors)
    dst = (src + torch.randint(1, 400, (len(src),), generator=g)) % n_atoms
    return src, dst


device = torch.device("cuda")
model = Potential().to(device)
log.info("%s tensor product weights per edge: %d", model.irreps_node,
         model.layers[0].tp.weight_numel)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
g = torch.Generator().manual_seed(0)
for step, (n_atoms, neighbors) in enumerate([(12_000, 8), (12_000, 8), (24_000, 32),
                                             (24_500, 32)]):
    start = time.time()
    src, dst = radius_graph(n_atoms, neighbors, g)
    species = torch.randint(0, N_SPECIES, (n_atoms,), generator=g).to(device)
    pos = (torch.rand(n_atoms, 3, generator=g) * 80.0).to(device).requires_grad_(True)
    src, dst = src.to(device), dst.to(device)
    energy = model(species, pos, src, dst)
    forces = -torch.autograd.grad(energy, pos, create_graph=True)[0]
    loss = (energy / n_atoms) ** 2 + forces.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    log.info("batch %d: %d atoms, %d edges (cutoff %.1f A), loss %.4f, %.1f s, peak %.1f GiB",
             step, n_atoms, len(src), CUTOFF, loss.item(), time.time() - start,
             torch.cuda.max_memory_allocated() / 2**30)
''')


def s23_dist_all_gather_object_preds():
    # run.sh's holder leaves 3 GiB. A retrieval evaluation script run as rank 0 of 1 (NCCL,
    # env:// defaults) scores 2M queries against a passage index on the card, keeps the top-100
    # ids and scores as numpy arrays, then collects them with dist.all_gather_object: the
    # pickled predictions (~2.4 GB) are copied into a CUDA byte tensor for NCCL, which does not
    # fit in what the other job leaves.
    run_user_script("eval_retrieval", '''import logging
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")
os.environ.setdefault("LOCAL_RANK", "0")
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
log = logging.getLogger(f"eval.rank{rank}")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
log.info("process group ready: world size %d, backend %s", world, dist.get_backend())

N_QUERIES, N_PASSAGES, DIM, TOPK = 2_000_000, 200_000, 256, 100
g = torch.Generator(device="cuda").manual_seed(0)
passages = F.normalize(torch.randn(N_PASSAGES, DIM, device="cuda", generator=g), dim=-1).half()
my_queries = range(rank, N_QUERIES, world)
ids = np.empty((len(my_queries), TOPK), dtype=np.int64)
scores = np.empty((len(my_queries), TOPK), dtype=np.float32)
start = time.time()
for lo in range(0, len(my_queries), 2_000):
    hi = min(lo + 2_000, len(my_queries))
    q = F.normalize(torch.randn(hi - lo, DIM, device="cuda", generator=g), dim=-1).half()
    top = (q @ passages.T).topk(TOPK, dim=-1)
    ids[lo:hi] = top.indices.cpu().numpy()
    scores[lo:hi] = top.values.float().cpu().numpy()
log.info("scored %d queries in %.1f s", len(my_queries), time.time() - start)
predictions = {"rank": rank, "query_ids": np.arange(rank, N_QUERIES, world), "ids": ids,
               "scores": scores}
gathered = [None] * world
dist.all_gather_object(gathered, predictions)
if rank == 0:
    all_ids = np.concatenate([p["ids"] for p in gathered])
    log.info("gathered %d rankings", len(all_ids))
dist.destroy_process_group()
''')


def s23_nerf_render_chunk():
    # run.sh's holder leaves 16 GiB. A NeRF-style training script (8 x 256 MLP with positional
    # encoding, 192 samples per ray) trains 300 steps on 1024-ray batches (tqdm), then renders a
    # validation view in chunks of --chunk 131072 rays (meant as points): one chunk is 25M points
    # and the first hidden layer's output (~24 GiB fp32) does not fit under torch.no_grad().
    run_user_script("run_nerf", '''import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import trange

parser = argparse.ArgumentParser()
parser.add_argument("--N_rand", type=int, default=1024, help="rays per training batch")
parser.add_argument("--N_samples", type=int, default=192)
parser.add_argument("--chunk", type=int, default=1024 * 128, help="points sent through the net at once")
parser.add_argument("--i_val", type=int, default=300)
parser.add_argument("--H", type=int, default=800)
parser.add_argument("--W", type=int, default=800)
args = parser.parse_args()


def posenc(x, n_freqs):
    out = [x]
    for i in range(n_freqs):
        out += [torch.sin(2.0 ** i * x), torch.cos(2.0 ** i * x)]
    return torch.cat(out, dim=-1)


class NeRF(nn.Module):
    def __init__(self, width=256):
        super().__init__()
        self.pts = nn.ModuleList([nn.Linear(63, width)] + [nn.Linear(width, width) for _ in range(3)]
                                 + [nn.Linear(width + 63, width)]
                                 + [nn.Linear(width, width) for _ in range(3)])
        self.sigma = nn.Linear(width, 1)
        self.feat = nn.Linear(width, width)
        self.rgb = nn.Sequential(nn.Linear(width + 27, width // 2), nn.ReLU(),
                                 nn.Linear(width // 2, 3))

    def forward(self, x, d):
        px, pd = posenc(x, 10), posenc(d, 4)
        h = px
        for i, layer in enumerate(self.pts):
            if i == 4:
                h = torch.cat([h, px], dim=-1)
            h = F.relu(layer(h))
        return torch.sigmoid(self.rgb(torch.cat([self.feat(h), pd], -1))), F.relu(self.sigma(h))


def render_rays(model, rays_o, rays_d, n_samples):
    t = torch.linspace(2.0, 6.0, n_samples, device=rays_o.device).expand(len(rays_o), n_samples)
    pts = rays_o[:, None] + rays_d[:, None] * t[..., None]
    dirs = F.normalize(rays_d, dim=-1)[:, None].expand_as(pts)
    rgb, sigma = model(pts.reshape(-1, 3), dirs.reshape(-1, 3))
    rgb, sigma = rgb.view(*pts.shape[:2], 3), sigma.view(*pts.shape[:2])
    delta = torch.full_like(sigma, 4.0 / n_samples)
    alpha = 1.0 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], -1), -1)
    return ((alpha * trans[:, :-1])[..., None] * rgb).sum(1)


def rays(n, g):
    o = torch.randn(n, 3, device="cuda", generator=g) * 0.1 + torch.tensor([0.0, 0.0, 4.0], device="cuda")
    d = F.normalize(torch.randn(n, 3, device="cuda", generator=g) * 0.3 - torch.tensor([0.0, 0.0, 1.0], device="cuda"), dim=-1)
    return o, d


model = NeRF().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
g = torch.Generator(device="cuda").manual_seed(0)
for i in trange(1, args.i_val + 1):
    o, d = rays(args.N_rand, g)
    target = torch.rand(args.N_rand, 3, device="cuda", generator=g)
    loss = F.mse_loss(render_rays(model, o, d, args.N_samples), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if i % 100 == 0:
        psnr = -10.0 * torch.log10(loss)
        tqdm_msg = f"[TRAIN] Iter: {i} Loss: {loss.item():.5f}  PSNR: {psnr.item():.2f}"
        print(tqdm_msg, flush=True)

print(f"[VAL] rendering view 0 ({args.H}x{args.W}), chunk {args.chunk}", flush=True)
start = time.time()
o, d = rays(args.H * args.W, g)
with torch.no_grad():
    frame = torch.cat([render_rays(model, o[j:j + args.chunk], d[j:j + args.chunk], args.N_samples)
                       for j in range(0, len(o), args.chunk)])
print(f"[VAL] done in {time.time() - start:.1f} s: {tuple(frame.shape)}")
''')


def s23_botorch_optimize_acqf():
    # run.sh's holder leaves 10 GiB. A Bayesian-optimisation loop with BoTorch: a SingleTaskGP in
    # float64 on the card over all 40000 evaluations collected so far (12 parameters), and
    # optimize_acqf of qLogExpectedImprovement (q=8, 4096 raw samples): evaluating the
    # acquisition needs the dense 40000 x 40000 train covariance (12.8 GB), which does not fit.
    run_user_script("bo_round", '''import logging
import math
import time
import warnings

import torch
from botorch.acquisition.logei import qLogExpectedImprovement
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("bo")
tkwargs = {"device": torch.device("cuda"), "dtype": torch.double}
D, Q = 12, 8


def objective(x):
    return -(x - 0.3).pow(2).sum(-1, keepdim=True) + 0.1 * torch.sin(6 * math.pi * x).sum(-1, keepdim=True)


torch.manual_seed(0)
train_x = torch.rand(40_000, D, **tkwargs)
train_y = objective(train_x) + 0.01 * torch.randn(len(train_x), 1, **tkwargs)
log.info("round 51: %d observations, best %.4f", len(train_x), train_y.max().item())
model = SingleTaskGP(train_x, train_y)
model.eval()
acqf = qLogExpectedImprovement(model, best_f=train_y.max())
bounds = torch.stack([torch.zeros(D, **tkwargs), torch.ones(D, **tkwargs)])
start = time.time()
candidates, value = optimize_acqf(acqf, bounds=bounds, q=Q, num_restarts=16, raw_samples=4096,
                                  options={"batch_limit": 8, "maxiter": 200})
log.info("proposed %d candidates (acq value %.4f) in %.1f s", Q, value.item(), time.time() - start)
''')


def s23_cupy_kmeans_distances():
    # run.sh's holder leaves 8 GiB. Product-quantisation codebook sweep in CuPy: Lloyd's k-means
    # over 1M 256-d embeddings, distances computed for 65536 rows at a time; k=1024 and k=4096
    # run (their distance blocks are 0.25 and 1 GiB), the k=16384 blocks (4 GiB each, several
    # alive at once in the expression) do not fit:
    # cupy.cuda.memory.OutOfMemoryError, after the memory pool's figures are logged.
    run_user_script("pq_codebooks", '''import time

import cupy as cp

N, DIM, ROWS = 1_000_000, 256, 65_536
pool = cp.get_default_memory_pool()


def kmeans(x, k, iters=5, seed=0):
    rs = cp.random.RandomState(seed)
    centroids = x[rs.permutation(len(x))[:k]].copy()
    x_sq = (x * x).sum(axis=1)
    for it in range(iters):
        assign = cp.empty(len(x), dtype=cp.int32)
        c_sq = (centroids * centroids).sum(axis=1)
        for lo in range(0, len(x), ROWS):
            block = x[lo:lo + ROWS]
            dist = x_sq[lo:lo + ROWS, None] - 2.0 * block @ centroids.T + c_sq[None, :]
            assign[lo:lo + ROWS] = dist.argmin(axis=1)
            del dist
        sums = cp.zeros_like(centroids)
        cp.add.at(sums, assign, x)
        counts = cp.bincount(assign, minlength=k).astype(cp.float32)
        centroids = sums / cp.maximum(counts, 1.0)[:, None]
    return centroids, assign


x = cp.random.standard_normal((N, DIM), dtype=cp.float32)
print(f"embeddings: {x.shape}, {x.nbytes / 2**30:.2f} GiB; device {cp.cuda.Device().id}: "
      f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
for k in (1024, 4096, 16384):
    start = time.time()
    centroids, assign = kmeans(x, k)
    cp.cuda.Stream.null.synchronize()
    print(f"k={k}: {time.time() - start:.1f} s, empty clusters "
          f"{int((cp.bincount(assign, minlength=k) == 0).sum())}, pool used "
          f"{pool.used_bytes() / 2**30:.2f} GiB / total {pool.total_bytes() / 2**30:.2f} GiB",
          flush=True)
''')


def s23_optax_lbfgs_deblur():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. Image deconvolution with
    # optax.lbfgs (memory_size=10) on an 8192 x 8192 RGB image (0.8 GB of parameters): a
    # 1024-px crop runs 20 iterations, then the full image's L-BFGS state (two 10-deep
    # histories, 8 GB each) cannot be allocated: RESOURCE_EXHAUSTED. On the H200 (2026-12) it did
    # not reproduce within 60 s: XLA's BFC allocator logged the 7.5 GiB failure (after a ~10 s
    # retry) and the process had not exited when the time limit ran out (run.sh now gives it
    # twice the limit).
    run_user_script("deblur_lbfgs", '''import time

import jax
import jax.numpy as jnp
import optax


def blur(img, kernel_fft):
    return jnp.fft.irfft2(jnp.fft.rfft2(img, axes=(0, 1)) * kernel_fft[..., None],
                          s=img.shape[:2], axes=(0, 1))


def make_kernel_fft(h, w, sigma=3.0):
    y = jnp.fft.fftfreq(h)[:, None] * h
    x = jnp.fft.fftfreq(w)[None, :] * w
    k = jnp.exp(-(x ** 2 + y ** 2) / (2 * sigma ** 2))
    return jnp.fft.rfft2(k / k.sum())


def deblur(observed, iters=20):
    kernel_fft = make_kernel_fft(*observed.shape[:2])

    def loss(img):
        tv = jnp.abs(jnp.diff(img, axis=0)).mean() + jnp.abs(jnp.diff(img, axis=1)).mean()
        return jnp.mean((blur(img, kernel_fft) - observed) ** 2) + 1e-3 * tv

    opt = optax.lbfgs(memory_size=10)
    value_and_grad = optax.value_and_grad_from_state(loss)

    @jax.jit
    def step(img, state):
        value, grad = value_and_grad(img, state=state)
        updates, state = opt.update(grad, state, img, value=value, grad=grad, value_fn=loss)
        return optax.apply_updates(img, updates), state, value

    img, state = observed, opt.init(observed)
    for it in range(iters):
        img, state, value = step(img, state)
    return img, float(value)


key = jax.random.PRNGKey(0)
for side in (1024, 8192):
    observed = jax.random.uniform(jax.random.fold_in(key, side), (side, side, 3))
    start = time.time()
    restored, final = deblur(observed)
    print(f"{side}x{side}: final loss {final:.6f} after 20 L-BFGS iterations "
          f"({time.time() - start:.1f} s)", flush=True)
''')


# ---- session 23 look-alikes


def s23_multinomial_negative_sampling_categories():
    # Not a GPU OOM: a two-tower recommender samples popularity-weighted negatives with
    # torch.multinomial on the card; epoch 0 runs on a 12M-item catalogue, the catalogue refresh
    # before epoch 1 brings it to 20.1M items, and torch.multinomial refuses more than 2^24
    # categories ("number of categories cannot exceed 2^24"), after a memory log line.
    run_user_script("train_two_tower_negatives", '''import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("two_tower")
DIM, BATCH, N_NEG = 64, 4096, 64


def load_catalogue(snapshot):
    n_items = {"2024-11-30": 12_000_000, "2024-12-07": 20_100_000}[snapshot]
    g = torch.Generator().manual_seed(len(snapshot))
    counts = torch.randint(1, 10_000, (n_items,), generator=g).float()
    return n_items, counts.cuda()


class Tower(nn.Module):
    def __init__(self, n, dim=DIM):
        super().__init__()
        self.emb = nn.Embedding(n, dim, sparse=True)

    def forward(self, ids):
        return F.normalize(self.emb(ids), dim=-1)


users = Tower(2_000_000).cuda()
for epoch, snapshot in enumerate(["2024-11-30", "2024-12-07"]):
    n_items, counts = load_catalogue(snapshot)
    items = Tower(n_items).cuda()
    optimizer = torch.optim.SparseAdam(list(users.parameters()) + list(items.parameters()), lr=1e-3)
    sampling_weights = counts.pow(0.75)
    log.info("epoch %d: catalogue %s, %d items; %.2f GiB allocated", epoch, snapshot, n_items,
             torch.cuda.memory_allocated() / 2**30)
    start = time.time()
    for step in range(200):
        u = torch.randint(0, 2_000_000, (BATCH,), device="cuda")
        pos = torch.randint(0, n_items, (BATCH,), device="cuda")
        neg = torch.multinomial(sampling_weights, BATCH * N_NEG, replacement=True).view(BATCH, N_NEG)
        uv = users(u)
        logits = torch.cat([(uv * items(pos)).sum(-1, keepdim=True),
                            torch.einsum("bd,bnd->bn", uv, items(neg))], dim=1) / 0.05
        loss = F.cross_entropy(logits, torch.zeros(BATCH, dtype=torch.long, device="cuda"))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    log.info("epoch %d done: loss %.4f (%.1f s)", epoch, loss.item(), time.time() - start)
''')


def s23_hf_save_pretrained_disk_full():
    # Not a GPU OOM: a short fine-tune of the bf16 checkpoint on the card, then
    # model.save_pretrained("exports/...") onto a volume that is too small (the scenario mounts a
    # 512 MB tmpfs on exports/, or, where it cannot mount, points the weights file at /dev/full):
    # safetensors fails writing ("No space left on device", os error 28).
    import subprocess

    exports = os.path.join(WORK, "exports")
    os.makedirs(exports, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", exports],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    target_dir = os.path.join(exports, "llama-550m-sft-step200")
    os.makedirs(target_dir, exist_ok=True)
    if not mounted:
        weights = os.path.join(target_dir, "model.safetensors")
        if os.path.lexists(weights):
            os.remove(weights)
        os.symlink("/dev/full", weights)
    run_user_script("finetune_and_export", '''import logging
import time

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    level=logging.INFO)
logger = logging.getLogger("finetune")
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
g = torch.Generator().manual_seed(0)
start = time.time()
for step in range(1, 201):
    ids = torch.randint(3, 32000, (8, 512), generator=g).cuda()
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 50 == 0:
        logger.info("step %d loss %.4f (%.1f s, %.2f GiB peak)", step, loss.item(),
                    time.time() - start, torch.cuda.max_memory_allocated() / 2**30)
out = "exports/llama-550m-sft-step200"
logger.info("saving to %s", out)
model.save_pretrained(out)
logger.info("saved")
'''.replace("@CKPT@", CKPT))


def s23_cuda_graph_replay_grown_batch():
    # Not a GPU OOM: a ranking service captures its scorer in a CUDA graph at the configured
    # max batch of 64 (static input, private memory pool, logged); traffic is padded up to the
    # static batch, until a burst batch of 96 requests arrives and static_input.copy_(batch)
    # fails with a size mismatch ("The size of tensor a (64) must match the size of tensor b (96)").
    run_user_script("rank_service", '''import logging
import time

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("rank_service")
MAX_BATCH, FEATURES = 64, 1024

model = nn.Sequential(nn.Linear(FEATURES, 4096), nn.GELU(), nn.Linear(4096, 4096), nn.GELU(),
                      nn.Linear(4096, 1)).cuda().half().eval()
static_input = torch.zeros(MAX_BATCH, FEATURES, device="cuda", dtype=torch.half)
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side), torch.no_grad():
    for _ in range(3):  # warm-up before capture
        model(static_input)
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph), torch.no_grad():
    static_output = model(static_input)
log.info("captured CUDA graph for batch %d; %.1f MiB reserved", MAX_BATCH,
         torch.cuda.memory_reserved() / 2**20)


def score(batch):
    n = batch.shape[0]
    if n < MAX_BATCH:
        batch = torch.cat([batch, batch.new_zeros(MAX_BATCH - n, FEATURES)])
    static_input.copy_(batch)
    graph.replay()
    return static_output[:n].float().squeeze(-1).clone()


g = torch.Generator().manual_seed(0)
traffic = [17, 64, 40, 5, 64, 63, 96, 12]
for i, n in enumerate(traffic):
    start = time.perf_counter()
    requests = torch.randn(n, FEATURES, generator=g).cuda().half()
    scores = score(requests)
    log.info("request batch %d: %d items, top score %.3f, %.2f ms", i, n, scores.max().item(),
             1000 * (time.perf_counter() - start))
''')


def s23_torch_load_weights_only_numpy():
    # Not a GPU OOM: a fine-tuning script resumes from a checkpoint an older training script
    # wrote with numpy values in it (best metric as np.float64, the numpy RNG state); since
    # PyTorch 2.6, torch.load(map_location="cuda") defaults to weights_only=True and refuses the
    # numpy globals ("Weights only load failed ... Unsupported global"), after the model is on
    # the card.
    import numpy as np
    import torch
    import torch.nn as nn

    ckpt_dir = os.path.join(WORK, "runs", "resnet-ft")
    os.makedirs(ckpt_dir, exist_ok=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2048, 1024), nn.ReLU(), nn.Linear(1024, 100))
    torch.save({"epoch": 11, "model": model.state_dict(), "best_acc": np.float64(0.8132),
                "numpy_rng": np.random.get_state(), "val_history": np.linspace(0.4, 0.81, 12)},
               os.path.join(ckpt_dir, "checkpoint_best.pth"))
    run_user_script("finetune_head", '''import argparse
import logging
import os

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--resume", default="runs/resnet-ft/checkpoint_best.pth")
parser.add_argument("--epochs", type=int, default=30)
args = parser.parse_args()
logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("finetune_head")
device = torch.device("cuda")
model = nn.Sequential(nn.Linear(2048, 1024), nn.ReLU(), nn.Linear(1024, 100)).to(device)
log.info("model on %s (%.1f MiB allocated)", torch.cuda.get_device_name(device),
         torch.cuda.memory_allocated() / 2**20)
start_epoch, best_acc = 0, 0.0
if args.resume and os.path.isfile(args.resume):
    log.info("=> loading checkpoint '%s'", args.resume)
    checkpoint = torch.load(args.resume, map_location=device)
    model.load_state_dict(checkpoint["model"])
    start_epoch, best_acc = checkpoint["epoch"] + 1, float(checkpoint["best_acc"])
    log.info("=> loaded checkpoint (epoch %d, best acc %.4f)", checkpoint["epoch"], best_acc)
for epoch in range(start_epoch, args.epochs):
    pass
''')


def s23_negative_dim_int32_overflow():
    # Not a GPU OOM: a feature-extraction job preallocates its output buffer on the card from
    # sizes read out of an int32 .npy index (n_videos x frames_per_video); the numpy int32
    # product overflows (RuntimeWarning), and torch.empty refuses the negative row count
    # ("Trying to create tensor with negative dimension").
    import numpy as np

    os.makedirs(os.path.join(WORK, "index"), exist_ok=True)
    np.save(os.path.join(WORK, "index", "shard_meta.npy"),
            np.array([1_310_720, 2_048, 768], dtype=np.int32))
    run_user_script("extract_clip_features", '''import logging

import numpy as np
import torch

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("extract")
n_videos, frames_per_video, dim = np.load("index/shard_meta.npy")
free, total = torch.cuda.mem_get_info()
log.info("shard: %d videos x %d frames, dim %d; GPU %.1f GiB free of %.1f GiB", n_videos,
         frames_per_video, dim, free / 2**30, total / 2**30)
n_rows = n_videos * frames_per_video
log.info("preallocating feature buffer: %d rows", n_rows)
features = torch.empty((n_rows, dim), dtype=torch.float16, device="cuda")
log.info("buffer ready: %.1f GiB", features.numel() * 2 / 2**30)
''')


# --------------------------------------------------------------------------- session 23, second
# H200 batch (blind): a ViT throughput eval under no_grad with a huge batch, truncated BPTT with
# the hidden state never detached (backward(retain_graph=True)), torch.utils.checkpoint over a
# 16k-token hand-written attention, a custom autograd Function for a symmetric InfoNCE under
# GradScaler, speculative decoding written by hand, an unrolled log-domain Sinkhorn loss, a
# patch-MLP denoiser through F.unfold on 4K frames, a JAX wave-equation inversion (lax.scan under
# value_and_grad), CuPy starting on a card another job holds (most beside another job's holder),
# and 3 look-alikes (numpy padding a manifest into a float64 array, a DataLoader worker whose
# sample cache is killed with SIGKILL, an illegal address from a Triton voxel scatter under
# CUDA_LAUNCH_BLOCKING=1)


def s23e_vit_eval_nograd_batch():
    # run.sh's holder leaves 10 GiB. A throughput/accuracy eval of torchvision's ViT-B/16 under
    # torch.no_grad() and bf16 autocast with --batch-size 4096 ("no grad, so a big batch is
    # fine"): the 4096 x 197 x 768 activations (fp32 after the class-token cat and the LayerNorm)
    # and the qkv / MLP projections of the first encoder block do not fit.
    run_user_script("eval_vit", '''import argparse
import time

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

parser = argparse.ArgumentParser(description="ViT-B/16 ImageNet-val throughput and top-1")
parser.add_argument("--batch-size", type=int, default=4096)
parser.add_argument("--workers", type=int, default=0)
parser.add_argument("--amp", action="store_true", default=True)
args = parser.parse_args()


class PreprocessedVal(Dataset):
    """Val images already resized to 256, center-cropped to 224 and normalized (cached tensors)."""

    def __init__(self, n=50_000, cache=256):
        g = torch.Generator().manual_seed(0)
        self.n = n
        self.cache = torch.randn(cache, 3, 224, 224, generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.cache[i % len(self.cache)], i % 1000


torch.backends.cuda.matmul.allow_tf32 = True
device = torch.device("cuda")
model = torchvision.models.vit_b_16(weights=None).to(device).eval()
print(f"vit_b_16: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params, "
      f"batch {args.batch_size}, amp={args.amp}")
loader = DataLoader(PreprocessedVal(), batch_size=args.batch_size, shuffle=False,
                    num_workers=args.workers, pin_memory=True)
correct = seen = 0
start = time.time()
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
    for images, labels in tqdm(loader, desc="eval", unit="batch"):
        images = images.to(device, non_blocking=True)
        logits = model(images)
        correct += (logits.argmax(dim=-1).cpu() == labels).sum().item()
        seen += labels.numel()
elapsed = time.time() - start
print(f"top-1 {100 * correct / seen:.2f}% on {seen} images, {seen / elapsed:.0f} img/s")
''')


def s23e_tbptt_hidden_retain_graph():
    # run.sh's holder leaves 12 GiB. pytorch/examples' word-language-model loop (2-layer LSTM,
    # 1500 hidden, bptt 140, batch 80, 33k vocabulary) with the repackage_hidden() call removed
    # and backward(retain_graph=True) put in to silence "Trying to backward through the graph a
    # second time": every batch's LSTM graph (cuDNN reserve, saved inputs) stays reachable
    # through the hidden state, memory grows each batch, and a batch some steps in runs out
    # (the log lines before show the batches that went through).
    import numpy as np

    os.makedirs(os.path.join(WORK, "data", "wikitext-2"), exist_ok=True)
    rng = np.random.default_rng(0)
    ids = rng.zipf(1.3, size=2_088_628) % 33278
    np.save(os.path.join(WORK, "data", "wikitext-2", "train.ids.npy"), ids.astype(np.int64))
    run_user_script("word_lm_main", '''# coding: utf-8
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser(description="PyTorch Wikitext-2 RNN/LSTM Language Model")
parser.add_argument("--data", type=str, default="./data/wikitext-2")
parser.add_argument("--emsize", type=int, default=1500)
parser.add_argument("--nhid", type=int, default=1500)
parser.add_argument("--nlayers", type=int, default=2)
parser.add_argument("--lr", type=float, default=20)
parser.add_argument("--clip", type=float, default=0.25)
parser.add_argument("--epochs", type=int, default=40)
parser.add_argument("--batch_size", type=int, default=80)
parser.add_argument("--bptt", type=int, default=140)
parser.add_argument("--dropout", type=float, default=0.65)
parser.add_argument("--seed", type=int, default=1111)
parser.add_argument("--log-interval", type=int, default=2)
args = parser.parse_args()
torch.manual_seed(args.seed)
device = torch.device("cuda")
NTOKENS = 33278


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous().to(device)


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


train_data = batchify(torch.from_numpy(np.load(f"{args.data}/train.ids.npy")), args.batch_size)
model = RNNModel(NTOKENS, args.emsize, args.nhid, args.nlayers, args.dropout).to(device)
criterion = nn.NLLLoss()
lr = args.lr


def train(epoch):
    model.train()
    total_loss = 0.0
    start_time = time.time()
    hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        # hidden = repackage_hidden(hidden)  # TODO: breaks the gradient flow between batches?
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward(retain_graph=True)
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            elapsed = time.time() - start_time
            print("| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | ms/batch {:5.2f} | "
                  "loss {:5.2f} | ppl {:8.2f}".format(
                      epoch, batch, len(train_data) // args.bptt, lr,
                      elapsed * 1000 / args.log_interval, cur_loss, math.exp(cur_loss)))
            total_loss = 0
            start_time = time.time()


for epoch in range(1, args.epochs + 1):
    epoch_start_time = time.time()
    train(epoch)
    print("-" * 89)
    print("| end of epoch {:3d} | time: {:5.2f}s".format(epoch, time.time() - epoch_start_time))
    print("-" * 89)
''')


def s23e_checkpoint_long_dna_attention():
    # run.sh's holder leaves 20 GiB. A nanoGPT-style DNA language model in pure bf16 with the
    # hand-written attention path (att = q @ k^T, masked_fill, softmax) on 16384-bp windows, each
    # block wrapped in torch.utils.checkpoint (use_reentrant=False) "so the long context fits".
    # Planned: the OOM in the backward's recomputation. On the H200 (2026-12) it came in the
    # first forward instead, inside checkpoint(): each of the 8 blocks keeps its own 16384^2
    # causal-mask buffer (512 MiB in bf16, 4 GiB in all), so the second 8 GiB score tensor
    # (q @ k^T, then * scale) did not fit beside them.
    run_user_script("train_dna_lm", '''import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from tqdm import tqdm

parser = argparse.ArgumentParser()
parser.add_argument("--block-size", type=int, default=16384)
parser.add_argument("--n-layer", type=int, default=8)
parser.add_argument("--n-head", type=int, default=16)
parser.add_argument("--n-embd", type=int, default=1024)
parser.add_argument("--batch-size", type=int, default=1)
parser.add_argument("--grad-ckpt", action="store_true", default=True)
args = parser.parse_args()
VOCAB = 16  # A C G T N + specials


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.c_proj = nn.Linear(n_embd, n_embd, bias=False)
        self.n_head, self.dropout = n_head, dropout
        self.attn_dropout = nn.Dropout(dropout)
        # kept on the manual path: the motif probes read the attention maps
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        if self.training and self.dropout > 0:
            att = self.attn_dropout(att)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd, bias=False), nn.GELU(),
                                 nn.Linear(4 * n_embd, n_embd, bias=False))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class DNALM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, args.n_embd)
        self.wpe = nn.Embedding(args.block_size, args.n_embd)
        self.h = nn.ModuleList(Block(args.n_embd, args.n_head, args.block_size)
                               for _ in range(args.n_layer))
        self.ln_f = nn.LayerNorm(args.n_embd)
        self.lm_head = nn.Linear(args.n_embd, VOCAB, bias=False)

    def forward(self, idx, targets):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            if args.grad_ckpt and self.training:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, VOCAB).float(), targets.view(-1))


def windows(n_steps, g):
    genome = torch.randint(0, 5, (50_000_000,), generator=g, dtype=torch.uint8)
    for _ in range(n_steps):
        starts = torch.randint(0, genome.numel() - args.block_size - 1, (args.batch_size,),
                               generator=g)
        chunk = torch.stack([genome[s:s + args.block_size + 1] for s in starts.tolist()]).long()
        yield chunk[:, :-1], chunk[:, 1:]


torch.manual_seed(0)
model = DNALM().cuda().to(torch.bfloat16)
n_params = sum(p.numel() for p in model.parameters())
print(f"number of parameters: {n_params / 1e6:.2f}M, context {args.block_size} bp, "
      f"gradient checkpointing={args.grad_ckpt}, dtype=bfloat16")
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
model.train()
t0 = time.time()
bar = tqdm(windows(20_000, torch.Generator().manual_seed(1)), total=20_000, desc="train")
for it, (x, y) in enumerate(bar):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if it % 10 == 0:
        bar.set_postfix(loss=f"{loss.item():.4f}", mem=f"{torch.cuda.max_memory_allocated() / 2**30:.1f}G")
''')


def s23e_clip_custom_function_backward():
    # run.sh's holder leaves 15 GiB. Contrastive image-text alignment of frozen features with a
    # global batch of 32768 pairs, fp16 autocast and GradScaler; the symmetric InfoNCE is a
    # hand-written torch.autograd.Function (custom_fwd casting to fp32) that saves both N x N
    # softmax matrices (4 GiB each) for its backward. The forward fits; the Function's
    # backward clones them into gradient matrices and runs out at the second clone, inside
    # scaler.scale(loss).backward().
    run_user_script("train_clip_heads", '''import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.amp import custom_bwd, custom_fwd

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("clip_heads")
BATCH, IMG_DIM, TXT_DIM, EMB = 32768, 1024, 768, 512


class SymmetricInfoNCE(torch.autograd.Function):
    """InfoNCE over rows and columns with a hand-derived backward (saves the two softmaxes
    instead of letting autograd keep logits, exp and the log-softmax buffers)."""

    @staticmethod
    @custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, img, txt, temperature):
        logits = img @ txt.t() / temperature
        p_rows = torch.softmax(logits, dim=1)
        p_cols = torch.softmax(logits, dim=0)
        loss = -0.5 * (p_rows.diagonal().log().mean() + p_cols.diagonal().log().mean())
        ctx.save_for_backward(img, txt, p_rows, p_cols)
        ctx.temperature = temperature
        return loss

    @staticmethod
    @custom_bwd(device_type="cuda")
    def backward(ctx, grad_out):
        img, txt, p_rows, p_cols = ctx.saved_tensors
        n = p_rows.shape[0]
        g_rows = p_rows.clone()
        g_rows.diagonal().sub_(1.0)
        g_cols = p_cols.clone()
        g_cols.diagonal().sub_(1.0)
        g = (g_rows + g_cols).mul_(0.5 * grad_out / (n * ctx.temperature))
        return g @ txt, g.t() @ img, None


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.img = nn.Sequential(nn.Linear(IMG_DIM, 2048), nn.GELU(), nn.Linear(2048, EMB))
        self.txt = nn.Sequential(nn.Linear(TXT_DIM, 2048), nn.GELU(), nn.Linear(2048, EMB))

    def forward(self, img_feats, txt_feats):
        return F.normalize(self.img(img_feats), dim=-1), F.normalize(self.txt(txt_feats), dim=-1)


def feature_batches(steps, g):
    for _ in range(steps):
        yield (torch.randn(BATCH, IMG_DIM, generator=g).half(),
               torch.randn(BATCH, TXT_DIM, generator=g).half())


device = torch.device("cuda")
heads = Heads().to(device)
optimizer = torch.optim.AdamW(heads.parameters(), lr=5e-4, weight_decay=0.2)
scaler = torch.amp.GradScaler("cuda")
log.info("global batch %d pairs, temperature 0.07, fp16 autocast + GradScaler", BATCH)
start = time.time()
for step, (img_feats, txt_feats) in enumerate(feature_batches(10_000, torch.Generator().manual_seed(0))):
    img_feats = img_feats.to(device, non_blocking=True)
    txt_feats = txt_feats.to(device, non_blocking=True)
    with torch.autocast("cuda", dtype=torch.float16):
        img_emb, txt_emb = heads(img_feats, txt_feats)
        loss = SymmetricInfoNCE.apply(img_emb, txt_emb, 0.07)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    if step % 50 == 0:
        log.info("step %d loss %.4f scale %.0f (%.1f s)", step, loss.item(), scaler.get_scale(),
                 time.time() - start)
''')


def s23e_speculative_decode_verify():
    # run.sh's holder leaves 12 GiB. Speculative sampling written by hand (draft GPT of 6 layers,
    # target GPT of ~1B params, fp16, no KV cache: each call re-runs the whole sequence, as in
    # the from-scratch tutorials) for 64 documents of 1024 prompt tokens: the draft proposes 4
    # tokens, and the target's verification takes softmax over the full-sequence logits in fp32
    # (64 x 1028 x 50304). On the H200 (2026-12) the first round's target lm_head (6.17 GiB of
    # fp16 logits) did not fit: 6.09 GiB sat reserved but unallocated, the draft's freed logits.
    run_user_script("speculative_sampling", '''import argparse
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


@dataclass
class GPTConfig:
    n_layer: int
    n_head: int
    n_embd: int
    vocab_size: int = 50304
    block_size: int = 2048


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(cfg.n_embd), nn.LayerNorm(cfg.n_embd)
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.mlp = nn.Sequential(nn.Linear(cfg.n_embd, 4 * cfg.n_embd), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * cfg.n_embd, cfg.n_embd))
        self.n_head = cfg.n_head

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


@torch.inference_mode()
def speculative_generate(target, draft, x, max_new_tokens, k=4, temperature=1.0):
    accepted_total = proposed_total = 0
    bar = tqdm(total=max_new_tokens, desc="speculative", unit="tok")
    while bar.n < max_new_tokens:
        draft_x, q_probs = x, []
        for _ in range(k):
            q = F.softmax(draft(draft_x)[:, -1, :].float() / temperature, dim=-1)
            q_probs.append(q)
            draft_x = torch.cat([draft_x, torch.multinomial(q, 1)], dim=1)
        p = F.softmax(target(draft_x).float() / temperature, dim=-1)
        n_prefix = x.shape[1]
        n_accept = k
        for i in range(k):
            tok = draft_x[:, n_prefix + i]
            p_tok = p[:, n_prefix + i - 1].gather(1, tok[:, None]).squeeze(1)
            q_tok = q_probs[i].gather(1, tok[:, None]).squeeze(1)
            if (torch.rand_like(p_tok) > (p_tok / q_tok).clamp(max=1.0)).any():
                n_accept = i
                break
        residual = (p[:, n_prefix + n_accept - 1] - (q_probs[n_accept] if n_accept < k else 0)).clamp(min=0)
        nxt = torch.multinomial(residual / residual.sum(-1, keepdim=True), 1)
        x = torch.cat([draft_x[:, :n_prefix + n_accept], nxt], dim=1)
        accepted_total += n_accept
        proposed_total += k
        bar.update(n_accept + 1)
        bar.set_postfix(acceptance=f"{accepted_total / proposed_total:.2f}")
    bar.close()
    return x


parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=64)
parser.add_argument("--prompt-len", type=int, default=1024)
parser.add_argument("--max-new-tokens", type=int, default=256)
parser.add_argument("--k", type=int, default=4)
args = parser.parse_args()

torch.manual_seed(0)
torch.set_default_dtype(torch.float16)
with torch.device("cuda"):
    target = GPT(GPTConfig(n_layer=16, n_head=16, n_embd=2048)).eval()
    draft = GPT(GPTConfig(n_layer=6, n_head=12, n_embd=768)).eval()
for name, m in (("target", target), ("draft", draft)):
    print(f"{name}: {sum(p.numel() for p in m.parameters()) / 1e6:.1f}M params")
prompts = torch.randint(0, 50257, (args.batch, args.prompt_len), device="cuda")
start = time.time()
out = speculative_generate(target, draft, prompts, args.max_new_tokens, k=args.k)
print(f"generated {out.shape[1] - args.prompt_len} tokens x {args.batch} in {time.time() - start:.1f} s")
''')


def s23e_sinkhorn_unrolled_da_loss():
    # run.sh's holder leaves 16 GiB. Unsupervised domain adaptation with an optimal-transport
    # loss between 20000 source and 20000 target features: a hand-written log-domain Sinkhorn
    # (100 iterations, eps 0.05) unrolled under autograd, so every iteration keeps its 20000 x
    # 20000 fp32 logsumexp input for the backward; memory runs out a few iterations into the
    # first step's forward.
    run_user_script("train_ot_adapt", '''import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="[%(asctime)s] %(levelname)s - %(message)s", level=logging.INFO)
log = logging.getLogger(__name__)
N_SRC = N_TGT = 20_000
FEAT, EMB, N_CLASSES = 2048, 256, 65


def sinkhorn_loss(x, y, eps=0.05, n_iters=100):
    """Entropic OT cost between two uniform point clouds, log-domain Sinkhorn iterations."""
    C = torch.cdist(x, y, p=2) ** 2
    n, m = C.shape
    log_a = torch.full((n,), -math.log(n), device=x.device)
    log_b = torch.full((m,), -math.log(m), device=x.device)
    f = torch.zeros(n, device=x.device)
    g = torch.zeros(m, device=x.device)
    for _ in range(n_iters):
        f = -eps * torch.logsumexp((g[None, :] - C) / eps + log_b[None, :], dim=1)
        g = -eps * torch.logsumexp((f[:, None] - C) / eps + log_a[:, None], dim=0)
    P = torch.exp((f[:, None] + g[None, :] - C) / eps + log_a[:, None] + log_b[None, :])
    return (P * C).sum()


class Adapter(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(FEAT, 1024), nn.ReLU(), nn.Linear(1024, EMB))
        self.classifier = nn.Linear(EMB, N_CLASSES)

    def forward(self, x):
        z = self.encoder(x)
        return z, self.classifier(z)


device = torch.device("cuda")
g = torch.Generator().manual_seed(0)
src_x = torch.randn(N_SRC, FEAT, generator=g).to(device)  # Office-Home Art features (ResNet-50)
src_y = torch.randint(0, N_CLASSES, (N_SRC,), generator=g).to(device)
tgt_x = (torch.randn(N_TGT, FEAT, generator=g) * 1.3 + 0.2).to(device)  # Real World, unlabelled
model = Adapter().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-4)
log.info("source %s target %s, Sinkhorn eps=0.05, 100 iterations, full-batch OT",
         tuple(src_x.shape), tuple(tgt_x.shape))
for epoch in range(200):
    start = time.time()
    zs, logits = model(src_x)
    zt, _ = model(tgt_x)
    ce = F.cross_entropy(logits, src_y)
    ot = sinkhorn_loss(F.normalize(zs, dim=1), F.normalize(zt, dim=1))
    loss = ce + 0.1 * ot
    opt.zero_grad()
    loss.backward()
    opt.step()
    log.info("epoch %d: ce %.4f ot %.4f (%.1f s)", epoch, ce.item(), ot.item(), time.time() - start)
''')


def s23e_unfold_patch_denoise_4k():
    # run.sh's holder leaves 16 GiB. A patch-MLP video denoiser (9x9 patches -> centre pixel,
    # fp16, torch.inference_mode) applied to whole 3840x2160 frames through F.unfold: the 243 x
    # 8.3M patch matrix (4 GB), its transposed copy and the first Linear's 512-wide output do not
    # fit, on the first frame (tqdm bar at 0).
    run_user_script("denoise_clip", '''import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

parser = argparse.ArgumentParser(description="patch-MLP denoiser over a 4K clip")
parser.add_argument("--input", default="footage/A012_C007_night.mov")
parser.add_argument("--patch", type=int, default=9)
parser.add_argument("--frames", type=int, default=240)
args = parser.parse_args()
P = args.patch


class PatchMLP(nn.Module):
    def __init__(self, patch):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3 * patch * patch, 512), nn.GELU(),
                                 nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 3))

    def forward(self, x):
        return self.net(x)


def read_frames(path, n, h=2160, w=3840):
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, size=(h, w, 3), dtype=np.uint8)
    for i in range(n):
        noise = rng.normal(0, 12, size=(h // 8, w // 8, 3)).repeat(8, 0).repeat(8, 1)
        yield np.clip(base + noise, 0, 255).astype(np.uint8)


@torch.inference_mode()
def denoise(model, frame):
    h, w = frame.shape[-2:]
    padded = F.pad(frame, (P // 2, P // 2, P // 2, P // 2), mode="reflect")
    patches = F.unfold(padded, kernel_size=P)                 # 1 x 3P^2 x HW
    x = patches.transpose(1, 2).reshape(-1, 3 * P * P)         # HW x 3P^2
    out = model(x)                                             # HW x 3
    return out.t().reshape(1, 3, h, w).clamp_(0, 1)


device = torch.device("cuda")
model = PatchMLP(P).to(device).half().eval()
print(f"denoising {args.input}: {args.frames} frames 3840x2160, patch {P}x{P}")
start = time.time()
for i, rgb in enumerate(tqdm(read_frames(args.input, args.frames), total=args.frames, unit="frame")):
    frame = torch.from_numpy(rgb).to(device).permute(2, 0, 1)[None].half().div_(255)
    clean = denoise(model, frame)
    out = (clean[0].permute(1, 2, 0) * 255).byte().cpu().numpy()
print(f"done in {time.time() - start:.1f} s")
''')


def s23e_jax_fwi_scan_grad():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (run.sh): ~7 GiB for JAX. Full-waveform inversion of a
    # 2D acoustic model (1024 x 1024 grid, 3000 time steps) with jax.lax.scan under
    # jax.value_and_grad: the forward modelling of the observed shot runs, the gradient needs
    # the scan's residuals for every time step (~12 GB per saved wavefield stack):
    # RESOURCE_EXHAUSTED at the first gradient.
    run_user_script("fwi_marmousi", '''import time

import jax
import jax.numpy as jnp
import numpy as np

NZ, NX, NT = 1024, 1024, 3000
DX, DT, F0 = 10.0, 1e-3, 8.0
SRC_Z, REC_Z = 4, 4


def ricker(f0, nt, dt):
    t = jnp.arange(nt) * dt - 1.2 / f0
    a = (jnp.pi * f0 * t) ** 2
    return (1 - 2 * a) * jnp.exp(-a)


def model_shot(vel, src_x, wavelet):
    c2 = (vel * DT / DX) ** 2

    def step(carry, amp):
        p_prev, p = carry
        lap = (jnp.roll(p, 1, 0) + jnp.roll(p, -1, 0) + jnp.roll(p, 1, 1) + jnp.roll(p, -1, 1)
               - 4.0 * p)
        p_next = 2.0 * p - p_prev + c2 * lap
        p_next = p_next.at[SRC_Z, src_x].add(amp)
        return (p, p_next), p_next[REC_Z, :]

    zero = jnp.zeros((NZ, NX), jnp.float32)
    _, traces = jax.lax.scan(step, (zero, zero), wavelet)
    return traces


def misfit(vel, src_x, wavelet, observed):
    return 0.5 * jnp.sum((model_shot(vel, src_x, wavelet) - observed) ** 2)


forward = jax.jit(model_shot)
grad_fn = jax.jit(jax.value_and_grad(misfit))

z = np.linspace(0, 1, NZ)[:, None]
true_vel = jnp.asarray(1500.0 + 3000.0 * z + 200.0 * np.sin(np.linspace(0, 12, NX))[None, :] * z,
                       dtype=jnp.float32)
init_vel = jnp.asarray(1500.0 + 3000.0 * z * np.ones((1, NX)), dtype=jnp.float32)
wavelet = ricker(F0, NT, DT)
print(f"devices: {jax.devices()}; grid {NZ}x{NX}, {NT} steps, dt={DT}", flush=True)
vel = init_vel
for it in range(30):
    for shot, src_x in enumerate(range(32, NX, 128)):
        start = time.time()
        observed = forward(true_vel, src_x, wavelet)
        observed.block_until_ready()
        print(f"iter {it} shot {shot}: observed data {observed.shape} in {time.time() - start:.1f} s",
              flush=True)
        loss, g = grad_fn(vel, src_x, wavelet, observed)
        vel = vel - 1e3 * g / jnp.abs(g).max()
        print(f"iter {it} shot {shot}: misfit {float(loss):.4e}", flush=True)
''')


def s23e_cupy_tiles_card_held():
    # run.sh's holder takes every byte of the card (another job). A CuPy preprocessing job for
    # microscopy tiles logs the CuPy/CUDA versions and the device count (no context needed),
    # then its first cp.asarray must create the CUDA context and allocate: it fails at once.
    run_user_script("preprocess_tiles", '''import logging
import time

import cupy as cp
import numpy as np
from cupyx.scipy import ndimage as cndi

logging.basicConfig(format="%(asctime)s [%(levelname)s] %(message)s", level=logging.INFO)
log = logging.getLogger("tiles")
N_TILES, SIDE = 1200, 4096

log.info("CuPy %s, CUDA runtime %d, %d GPU(s) visible", cp.__version__,
         cp.cuda.runtime.runtimeGetVersion(), cp.cuda.runtime.getDeviceCount())
rng = np.random.default_rng(0)
start = time.time()
for i in range(N_TILES):
    tile = rng.random((SIDE, SIDE), dtype=np.float32)
    g = cp.asarray(tile)
    background = cndi.gaussian_filter(g, sigma=64)
    flat = (g - background) / (background.std() + 1e-6)
    mask = cndi.binary_opening(flat > 2.5, iterations=2)
    labels, n = cndi.label(mask)
    if i % 50 == 0:
        log.info("tile %d: %d objects (%.1f s)", i, n, time.time() - start)
''')


# ---- session 23, second H200 batch: look-alikes


def s23e_audio_manifest_pad_memoryerror():
    # Not a GPU OOM: an ASR fine-tuning script puts its conformer-like encoder on the card
    # (logged), then pads the whole training manifest into one numpy array to compute
    # normalisation statistics; one entry is a 10-hour recording, and np.zeros (default float64)
    # of 120000 x 575M samples is refused on the host ("Unable to allocate ... TiB").
    import json
    import random

    os.makedirs(os.path.join(WORK, "manifests"), exist_ok=True)
    rnd = random.Random(0)
    with open(os.path.join(WORK, "manifests", "train_clean_other.jsonl"), "w") as fh:
        for i in range(120_000):
            duration = 35_940.2 if i == 81_337 else round(rnd.uniform(1.2, 19.8), 2)
            fh.write(json.dumps({"audio_filepath": f"/data/asr/train/{i // 1000:03d}/utt{i:06d}.flac",
                                 "duration": duration, "text": "placeholder transcript"}) + "\n")
    run_user_script("prepare_and_train_asr", '''import json
import logging

import numpy as np
import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s %(levelname)s [%(name)s] %(message)s", level=logging.INFO)
log = logging.getLogger("asr")
SAMPLE_RATE = 16_000
MANIFEST = "manifests/train_clean_other.jsonl"


class ConvSubsampling(nn.Module):
    def __init__(self, d_model=512):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(80, d_model, 3, stride=2), nn.GELU(),
                                  nn.Conv1d(d_model, d_model, 3, stride=2), nn.GELU())

    def forward(self, x):
        return self.conv(x)


model = nn.ModuleDict({
    "subsampling": ConvSubsampling(),
    "encoder": nn.TransformerEncoder(nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True),
                                     num_layers=12, enable_nested_tensor=False),
    "ctc_head": nn.Linear(512, 1025),
}).cuda()
log.info("model on %s: %.1fM params", torch.cuda.get_device_name(0),
         sum(p.numel() for p in model.parameters()) / 1e6)

with open(MANIFEST) as fh:
    entries = [json.loads(line) for line in fh]
durations = np.array([e["duration"] for e in entries])
log.info("manifest %s: %d utterances, %.1f h total, max %.1f s", MANIFEST, len(entries),
         durations.sum() / 3600, durations.max())
max_len = int(durations.max() * SAMPLE_RATE)
log.info("padding all utterances to %d samples for global mean/std", max_len)
audio = np.zeros((len(entries), max_len))
lengths = np.zeros(len(entries), dtype=np.int64)
for i, e in enumerate(entries):
    n = int(e["duration"] * SAMPLE_RATE)
    audio[i, :n] = np.random.default_rng(i).normal(0, 0.1, n)
    lengths[i] = n
mean, std = audio.sum() / lengths.sum(), audio.std()
log.info("global mean %.5f std %.5f", mean, std)
''')


def _rss_watchdog(root, grow_limit):
    """A stand-in for the kernel's OOM killer on a memory-limited host: SIGKILL any child of
    `root` whose resident memory has grown by more than `grow_limit` bytes since first seen.
    Prints nothing (the OOM killer writes only to the kernel log). Exits with its parent."""
    import signal

    page = os.sysconf("SC_PAGE_SIZE")
    me = os.getpid()
    baseline = {}
    while os.getppid() == root:
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == me:
                continue
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
                if ppid != root:
                    continue
                with open(f"/proc/{entry}/statm") as fh:
                    rss = int(fh.read().split()[1]) * page
            except (OSError, ValueError, IndexError):
                continue
            first = baseline.setdefault(entry, rss)
            if rss - first > grow_limit:
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(0.1)
    os._exit(0)


def s23e_dataloader_cache_worker_killed():
    # Not a GPU OOM: a segmentation training loop (small UNet-ish net on the card, tqdm bar)
    # whose Dataset memoizes every decoded 3 x 1024 x 1024 float32 image in a dict, so each of
    # the 4 fork-started DataLoader workers grows by 12 MB a sample; a memory watchdog standing in
    # for the host's OOM killer (started here, silent) SIGKILLs the first worker that grows by
    # 2 GiB, and the main process raises "DataLoader worker (pid N) is killed by signal:
    # Killed." then "exited unexpectedly".
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        try:
            _rss_watchdog(parent, 2 * GIB)
        finally:
            os._exit(0)
    run_user_script("train_seg", '''import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class AerialTiles(Dataset):
    """Decodes a 1024x1024 RGB tile + mask; decoded tiles are memoized (decoding is slow)."""

    def __init__(self, n=20_000, crop=512):
        self.n, self.crop = n, crop
        self._cache = {}

    def __len__(self):
        return self.n

    def _decode(self, i):
        g = torch.Generator().manual_seed(i)
        image = torch.rand(3, 1024, 1024, generator=g)
        mask = (image[0] > 0.7).long()
        return image, mask

    def __getitem__(self, i):
        if i not in self._cache:
            self._cache[i] = self._decode(i)
        image, mask = self._cache[i]
        y, x = torch.randint(0, 1024 - self.crop, (2,)).tolist()
        return image[:, y:y + self.crop, x:x + self.crop], mask[y:y + self.crop, x:x + self.crop]


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


model = nn.Sequential(block(3, 32), block(32, 64), block(64, 64), nn.Conv2d(64, 2, 1)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
loader = DataLoader(AerialTiles(), batch_size=16, shuffle=True, num_workers=4, pin_memory=True,
                    persistent_workers=True)
for epoch in range(50):
    start = time.time()
    bar = tqdm(loader, desc=f"epoch {epoch}", unit="batch")
    for image, mask in bar:
        image, mask = image.cuda(non_blocking=True), mask.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(image), mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        bar.set_postfix(loss=f"{loss.item():.4f}")
    print(f"epoch {epoch} done in {time.time() - start:.0f} s")
''')


def s23e_triton_voxel_scatter_illegal():
    # Not a GPU OOM: a LiDAR preprocessing job voxelizes point-cloud frames on the card with a
    # hand-written Triton scatter kernel (atomic counts per voxel, no bounds check: "the driver
    # crops to the ROI"); frame 37 carries a few glitched returns at 3e7 m, whose int64 voxel
    # index lands far outside the grid: an illegal memory access, reported at the launch or
    # the next call under CUDA_LAUNCH_BLOCKING=1 (run.sh sets it, as a user debugging would).
    run_user_script("voxelize_frames", '''import logging
import os

import torch
import triton
import triton.language as tl
from tqdm import tqdm

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("voxelize")
X_RANGE, Y_RANGE, Z_RANGE, VOXEL = (-51.2, 51.2), (-51.2, 51.2), (-5.0, 3.0), 0.1
NX = round((X_RANGE[1] - X_RANGE[0]) / VOXEL)
NY = round((Y_RANGE[1] - Y_RANGE[0]) / VOXEL)
NZ = round((Z_RANGE[1] - Z_RANGE[0]) / VOXEL)


@triton.jit
def voxel_count_kernel(pts_ptr, grid_ptr, n_points, x0, y0, z0, inv_voxel, nx, ny,
                       BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_points
    x = tl.load(pts_ptr + offs * 4 + 0, mask=m, other=0.0)
    y = tl.load(pts_ptr + offs * 4 + 1, mask=m, other=0.0)
    z = tl.load(pts_ptr + offs * 4 + 2, mask=m, other=0.0)
    ix = ((x - x0) * inv_voxel).to(tl.int64)
    iy = ((y - y0) * inv_voxel).to(tl.int64)
    iz = ((z - z0) * inv_voxel).to(tl.int64)
    idx = (iz * ny + iy) * nx + ix  # points are cropped to the ROI by the driver
    tl.atomic_add(grid_ptr + idx, 1, mask=m)


def voxelize(points, grid):
    grid.zero_()
    n = points.shape[0]
    voxel_count_kernel[(triton.cdiv(n, 1024),)](points, grid, n, X_RANGE[0], Y_RANGE[0], Z_RANGE[0],
                                                1.0 / VOXEL, NX, NY, BLOCK=1024)
    return grid


def load_frame(i, g):
    n = 120_000
    pts = torch.empty(n, 4)
    pts[:, 0].uniform_(X_RANGE[0], X_RANGE[1] - 0.01, generator=g)
    pts[:, 1].uniform_(Y_RANGE[0], Y_RANGE[1] - 0.01, generator=g)
    pts[:, 2].uniform_(Z_RANGE[0], Z_RANGE[1] - 0.01, generator=g)
    pts[:, 3].uniform_(0, 1, generator=g)
    if i == 37:  # sensor glitch in this drive: a few returns at absurd range
        pts[1000:1004, :3] = 3.0e7
    return pts


log.info("CUDA_LAUNCH_BLOCKING=%s; grid %d x %d x %d voxels", os.environ.get("CUDA_LAUNCH_BLOCKING"),
         NX, NY, NZ)
grid = torch.zeros(NZ * NY * NX, dtype=torch.int32, device="cuda")
g = torch.Generator().manual_seed(0)
occupancy = []
for i in tqdm(range(200), desc="drive_0042", unit="frame"):
    pts = load_frame(i, g).cuda()
    counts = voxelize(pts, grid)
    occupancy.append((counts > 0).sum().item())
log.info("mean occupied voxels per frame: %.0f", sum(occupancy) / len(occupancy))
''')


# --------------------------------------------------------------------------- session 24 (blind)
# Loading a Lightning checkpoint with map_location="cuda" (optimizer state comes along), a model
# soup averaged on the card, a serving engine's profile run, a DQN replay buffer on the device, a
# batch summarization job with one outlier request, a timm ViT's periodic evaluation, optax's
# MultiSteps in JAX, GRPO group log-probs, second-order MAML, a hand-written Shampoo's first step
# (most beside another job's holder), and 4 look-alikes (a Rust tokenizer aborting under a
# ulimit, a learned positional table indexed past its end, torch.compile on a full cache
# volume, a GP's Cholesky on duplicated sites)

_S24_LITMODELS = '''import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F


class TicketClassifier(L.LightningModule):
    """Routes support tickets to one of the queues (transformer encoder over word pieces)."""

    def __init__(self, vocab_size=50_000, d_model=1024, n_layers=12, n_heads=16, n_queues=48,
                 max_len=512, lr=2e-4, weight_decay=0.01):
        super().__init__()
        self.save_hyperparameters()
        self.embed = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.1,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_queues)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        h = self.encoder(self.embed(ids) + self.pos(positions), src_key_padding_mask=ids.eq(0))
        return self.head(self.norm(h[:, 0]))

    def training_step(self, batch, batch_idx):
        loss = F.cross_entropy(self(batch["ids"]), batch["queue"])
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr,
                                 weight_decay=self.hparams.weight_decay)
'''


def s24_lightning_load_ckpt_map_location():
    # run.sh's holder leaves 2 GiB. An inference script restores a Lightning classifier with
    # TicketClassifier.load_from_checkpoint(last.ckpt, map_location="cuda"): the .ckpt written by
    # ModelCheckpoint holds the 202M fp32 weights and AdamW's exp_avg / exp_avg_sq (3x the
    # weights); torch.load puts every tensor of it on the card before the model is even built,
    # and the optimizer state does not fit beside the other job.
    import torch

    os.makedirs(os.path.join(WORK, "checkpoints"), exist_ok=True)
    with open(os.path.join(WORK, "litmodels.py"), "w", encoding="utf-8") as fh:
        fh.write(_S24_LITMODELS)
    ckpt = os.path.join(WORK, "checkpoints", "epoch=7-step=42000.ckpt")
    if not os.path.exists(ckpt):
        sys.path.insert(0, WORK)
        import lightning
        from litmodels import TicketClassifier

        torch.manual_seed(0)
        model = TicketClassifier()
        params = list(model.parameters())
        state = {i: {"step": torch.tensor(42000.0), "exp_avg": torch.zeros_like(p),
                     "exp_avg_sq": torch.zeros_like(p)} for i, p in enumerate(params)}
        groups = [{"lr": 2e-4, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01,
                   "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                   "differentiable": False, "fused": None, "decoupled_weight_decay": True,
                   "params": list(range(len(params)))}]
        torch.save({
            "epoch": 7, "global_step": 42000, "pytorch-lightning_version": lightning.__version__,
            "state_dict": model.state_dict(), "loops": {}, "callbacks": {},
            "optimizer_states": [{"state": state, "param_groups": groups}],
            "lr_schedulers": [], "hparams_name": "kwargs",
            "hyper_parameters": dict(model.hparams),
        }, ckpt)
        del model, params, state
    run_user_script("predict_tickets", '''import argparse
import json
import time

import torch

from litmodels import TicketClassifier

parser = argparse.ArgumentParser()
parser.add_argument("--ckpt", default="checkpoints/epoch=7-step=42000.ckpt")
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--out", default="predictions.jsonl")
args = parser.parse_args()

print(f"[predict] restoring {args.ckpt}", flush=True)
start = time.time()
model = TicketClassifier.load_from_checkpoint(args.ckpt, map_location="cuda")
model.eval()
print(f"[predict] model ready in {time.time() - start:.1f} s: {dict(model.hparams)}", flush=True)
g = torch.Generator().manual_seed(0)
with torch.inference_mode(), open(args.out, "w") as out:
    for b in range(40):
        ids = torch.randint(1, model.hparams.vocab_size, (args.batch_size, 256), generator=g)
        queues = model(ids.cuda()).argmax(-1).tolist()
        for i, q in enumerate(queues):
            out.write(json.dumps({"ticket": b * args.batch_size + i, "queue": q}) + "\\n")
print("[predict] done", flush=True)
''')


def s24_hf_model_soup_average():
    # run.sh's holder leaves 6 GiB. A "model soup" script loads four fine-tuned runs' bf16
    # safetensors straight onto the card (load_file(device="cuda"), ~1 GiB each), then averages
    # them key by key in float32 (torch.stack of the four upcast copies): the first large key,
    # the 32000 x 2048 output embedding, needs ~2 GiB of fp32 temporaries beside the four loaded
    # states and the other job.
    runs = os.path.join(WORK, "runs")
    for seed in range(4):
        d = os.path.join(runs, f"sft-lr2e-5-seed{seed}", "checkpoint-3000")
        os.makedirs(d, exist_ok=True)
        link = os.path.join(d, "model.safetensors")
        if not os.path.lexists(link):
            os.symlink(os.path.join(CKPT, "model.safetensors"), link)
    run_user_script("make_soup", '''import glob
import logging
import os

import torch
from safetensors.torch import load_file, save_file
from tqdm import tqdm

logging.basicConfig(format="%(asctime)s | %(levelname)s | %(message)s", level=logging.INFO)
log = logging.getLogger("soup")

paths = sorted(glob.glob("runs/sft-lr2e-5-seed*/checkpoint-3000/model.safetensors"))
log.info("uniform soup of %d runs", len(paths))
states = []
for path in paths:
    states.append(load_file(path, device="cuda"))
    log.info("loaded %s (%d tensors)", path, len(states[-1]))

soup = {}
for key in tqdm(list(states[0]), desc="averaging", unit="tensor"):
    stacked = torch.stack([s[key].float() for s in states])
    soup[key] = stacked.mean(dim=0).to(torch.bfloat16)
    del stacked
os.makedirs("runs/soup-uniform", exist_ok=True)
save_file({k: v.cpu() for k, v in soup.items()}, "runs/soup-uniform/model.safetensors",
          metadata={"format": "pt"})
log.info("wrote runs/soup-uniform/model.safetensors")
''')


def s24_hf_engine_profile_run():
    # run.sh's holder leaves 16 GiB. A small home-made serving engine starts: loads the bf16
    # checkpoint, then "profiles" peak memory with a dummy batch of max_num_seqs x max_model_len
    # (64 x 4096 = 262144 tokens) in one forward, to size its KV cache afterwards; that warm-up
    # forward runs out in a decoder layer's MLP (a 2.75 GiB gate/up activation, with ~3.5 GiB
    # reserved but unallocated), before it would reach the 15.6 GiB logits.
    run_user_script("engine", '''import argparse
import logging
import time

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(levelname)s %(asctime)s %(name)s:%(lineno)d] %(message)s",
                    datefmt="%m-%d %H:%M:%S", level=logging.INFO)
logger = logging.getLogger("engine")


class LLMEngine:
    def __init__(self, model, max_model_len, max_num_seqs, gpu_memory_utilization):
        self.max_model_len, self.max_num_seqs = max_model_len, max_num_seqs
        self.gpu_memory_utilization = gpu_memory_utilization
        start = time.time()
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch.bfloat16,
                                                          device_map="cuda").eval()
        logger.info("Loading model weights took %.2f GiB and %.2f seconds",
                    torch.cuda.memory_allocated() / 2**30, time.time() - start)
        self.num_gpu_blocks = self.determine_num_blocks()

    @torch.inference_mode()
    def profile_run(self):
        ids = torch.randint(3, 32000, (self.max_num_seqs, self.max_model_len), device="cuda")
        self.model(input_ids=ids, use_cache=False)
        torch.cuda.synchronize()

    def determine_num_blocks(self, block_size=16):
        torch.cuda.reset_peak_memory_stats()
        self.profile_run()
        free, total = torch.cuda.mem_get_info()
        peak = torch.cuda.max_memory_allocated()
        cfg = self.model.config
        per_block = 2 * cfg.num_hidden_layers * block_size * cfg.hidden_size * 2
        blocks = int((total * self.gpu_memory_utilization - peak) // per_block)
        logger.info("# GPU blocks: %d, peak %.2f GiB", blocks, peak / 2**30)
        return blocks


parser = argparse.ArgumentParser()
parser.add_argument("--model", default="@CKPT@")
parser.add_argument("--max-model-len", type=int, default=4096)
parser.add_argument("--max-num-seqs", type=int, default=64)
parser.add_argument("--gpu-memory-utilization", type=float, default=0.90)
args = parser.parse_args()
logger.info("Initializing engine with config: model=%r, max_model_len=%d, max_num_seqs=%d, "
            "gpu_memory_utilization=%.2f", args.model, args.max_model_len, args.max_num_seqs,
            args.gpu_memory_utilization)
engine = LLMEngine(args.model, args.max_model_len, args.max_num_seqs, args.gpu_memory_utilization)
logger.info("engine ready")
'''.replace("@CKPT@", CKPT))


def s24_dqn_replay_buffer_device():
    # run.sh's holder leaves 40 GiB. A DQN learner keeps its 1M-transition replay buffer on the
    # card (obs and next_obs as uint8 1M x 4 x 84 x 84, 26.3 GiB each); obs fits beside the other
    # job, next_obs does not. main() is wrapped in the user's try/except that logs only
    # "training aborted: <message>" and exits 1: no traceback, no stage in the log.
    run_user_script("dqn_atari", '''import argparse
import logging
import random
import sys

import numpy as np
import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s [%(name)s] %(levelname)s: %(message)s", level=logging.INFO)
log = logging.getLogger("dqn")


class QNetwork(nn.Module):
    def __init__(self, n_actions):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten(),
            nn.Linear(3136, 512), nn.ReLU(), nn.Linear(512, n_actions))

    def forward(self, x):
        return self.net(x / 255.0)


class ReplayBuffer:
    def __init__(self, capacity, obs_shape, device):
        self.capacity, self.pos, self.full = capacity, 0, False
        self.obs = torch.zeros((capacity, *obs_shape), dtype=torch.uint8, device=device)
        self.next_obs = torch.zeros((capacity, *obs_shape), dtype=torch.uint8, device=device)
        self.actions = torch.zeros(capacity, dtype=torch.long, device=device)
        self.rewards = torch.zeros(capacity, dtype=torch.float32, device=device)
        self.dones = torch.zeros(capacity, dtype=torch.bool, device=device)


def main(args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    q = QNetwork(args.n_actions).to(device)
    target = QNetwork(args.n_actions).to(device)
    target.load_state_dict(q.state_dict())
    optimizer = torch.optim.Adam(q.parameters(), lr=args.lr, eps=1.5e-4)
    rb = ReplayBuffer(args.buffer_size, (4, 84, 84), device)
    log.info("learning starts after %d steps", args.learning_starts)
    for step in range(args.total_timesteps):
        pass


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--env-id", default="BreakoutNoFrameskip-v4")
    p.add_argument("--total-timesteps", type=int, default=10_000_000)
    p.add_argument("--buffer-size", type=int, default=1_000_000)
    p.add_argument("--learning-starts", type=int, default=80_000)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--n-actions", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    log.info("run dqn_atari__%s__%d: %s", args.env_id, args.seed, vars(args))
    try:
        main(args)
    except Exception as e:
        log.error("training aborted: %s", e)
        sys.exit(1)
''')


def s24_hf_batch_summarize_outlier():
    # run.sh's holder leaves 12 GiB. A nightly batch job summarizes a JSONL of support threads in
    # fixed batches of 16 in arrival order (left padding, generate with max_new_tokens=64); the
    # first two batches go through, the third holds one 24000-word thread, so all 16 rows are
    # padded to ~24k tokens and the prefill's 4-D SDPA mask (16 x 24k x 24k bool, 8.6 GiB) does
    # not fit. The script catches the OOM and raises its own BatchFailed from it.
    import json
    import random

    os.makedirs(os.path.join(WORK, "inbox"), exist_ok=True)
    rng = random.Random(7)
    with open(os.path.join(WORK, "inbox", "threads-2026-12-03.jsonl"), "w") as fh:
        for i in range(96):
            n = 24_000 if i == 37 else rng.randint(250, 900)
            text = " ".join(f"w{rng.randint(3, 31999)}" for _ in range(n))
            fh.write(json.dumps({"id": f"T-{81200 + i}", "text": text}) + "\n")
    run_user_script("summarize_threads", _WORD_TOKENIZER + '''
import json
import logging
import sys
import time

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO,
                    stream=sys.stdout)
log = logging.getLogger("summarize")
BATCH = 16


class BatchFailed(RuntimeError):
    pass


def summarize(model, tokenizer, batch):
    enc = tokenizer([r["text"] for r in batch], return_tensors="pt", padding=True).to("cuda")
    try:
        with torch.inference_mode():
            out = model.generate(**enc, max_new_tokens=64, do_sample=False,
                                 pad_token_id=tokenizer.pad_token_id)
    except torch.cuda.OutOfMemoryError as e:
        ids = [r["id"] for r in batch]
        raise BatchFailed(f"summarization failed for batch {ids[0]}..{ids[-1]}") from e
    return tokenizer.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)


tokenizer = word_tokenizer()
tokenizer.padding_side = "left"
model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
model.eval()
with open("inbox/threads-2026-12-03.jsonl") as fh:
    requests = [json.loads(line) for line in fh]
log.info("%d threads to summarize, batch size %d", len(requests), BATCH)
with open("summaries.jsonl", "w") as out:
    for start in range(0, len(requests), BATCH):
        batch = requests[start:start + BATCH]
        t0 = time.time()
        for r, summary in zip(batch, summarize(model, tokenizer, batch)):
            out.write(json.dumps({"id": r["id"], "summary": summary}) + "\\n")
        log.info("batch %d/%d done in %.1f s", start // BATCH + 1,
                 (len(requests) + BATCH - 1) // BATCH, time.time() - t0)
log.info("all done")
'''.replace("@CKPT@", CKPT))


def s24_timm_vit_periodic_eval():
    # run.sh's holder leaves 20 GiB. A timm ViT-S/16 fine-tune (bf16 autocast) trains 40 steps
    # fine, then its periodic evaluation runs the val loader in model.eval() but without
    # torch.no_grad(), appending each batch's logits (with their autograd graph) to a list for the
    # metrics: every val batch's activations stay alive and the evaluation runs out in the
    # second val batch of 256 (the bars show 39 train steps and 1 of 40 val batches).
    run_user_script("finetune_vit", '''import time

import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class CachedImages(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.n = n
        self.bank = torch.randn(64, 3, 224, 224, generator=g)
        self.labels = torch.randint(0, 200, (n,), generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.bank[i % 64], self.labels[i]


def evaluate(model, loader):
    model.eval()
    all_logits, all_labels = [], []
    for images, labels in tqdm(loader, desc="val", leave=False):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(images.cuda(non_blocking=True))
        all_logits.append(logits)
        all_labels.append(labels.cuda())
    logits, labels = torch.cat(all_logits), torch.cat(all_labels)
    model.train()
    return F.cross_entropy(logits.float(), labels).item(), (logits.argmax(-1) == labels).float().mean().item()


model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=200).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.05)
train_loader = DataLoader(CachedImages(100_000, 0), batch_size=128, shuffle=True, num_workers=0,
                          drop_last=True)
val_loader = DataLoader(CachedImages(10_000, 1), batch_size=256, num_workers=0)
EVAL_EVERY = 40
step, start = 0, time.time()
for epoch in range(30):
    for images, labels in tqdm(train_loader, desc=f"epoch {epoch}"):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(images.cuda(non_blocking=True)), labels.cuda())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        if step % EVAL_EVERY == 0:
            val_loss, val_acc = evaluate(model, val_loader)
            print(f"step {step}: train_loss {loss.item():.4f} val_loss {val_loss:.4f} "
                  f"val_acc {val_acc:.4f} ({time.time() - start:.0f} s)")
''')


def s24_jax_optax_multisteps():
    # JAX with a 5% memory fraction (~7 GiB, run.sh sets it). A plain-JAX language model of 332M
    # fp32 parameters trained with optax.MultiSteps(adamw, every_k_schedule=8) for gradient
    # accumulation: params + Adam's mu and nu + MultiSteps' accumulated gradients (4 x 1.3 GB) fit
    # at init; the first call of the jitted update fails while XLA compiles it: the GEMM
    # autotuner cannot get its profiling buffers from the nearly full pool (bfc_allocator
    # warnings, every config RESOURCE_EXHAUSTED), and JAX raises JaxRuntimeError NOT_FOUND
    # "Failed to get configs" listing those failures.
    run_user_script("train_lm_jax", '''import time

import jax
import jax.numpy as jnp
import optax

VOCAB, D, FF, LAYERS, SEQ, BATCH = 32000, 2048, 8192, 6, 1024, 8


def init(key):
    keys = jax.random.split(key, 2 * LAYERS + 2)
    params = {"embed": jax.random.normal(keys[0], (VOCAB, D)) * 0.02,
              "head": jax.random.normal(keys[1], (D, VOCAB)) * 0.02, "layers": []}
    for i in range(LAYERS):
        params["layers"].append({
            "w_in": jax.random.normal(keys[2 + 2 * i], (D, FF)) * 0.02,
            "w_out": jax.random.normal(keys[3 + 2 * i], (FF, D)) * 0.02,
            "scale": jnp.ones((D,)),
        })
    return params


def forward(params, tokens):
    x = params["embed"][tokens]
    for layer in params["layers"]:
        h = x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * layer["scale"]
        x = x + jax.nn.gelu(h @ layer["w_in"]) @ layer["w_out"]
    return x @ params["head"]


def loss_fn(params, tokens):
    logits = forward(params, tokens[:, :-1])
    return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()


tx = optax.MultiSteps(optax.adamw(3e-4, weight_decay=0.1), every_k_schedule=8)


@jax.jit
def train_step(params, opt_state, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


params = init(jax.random.PRNGKey(0))
print(f"devices: {jax.devices()}")
print(f"params: {sum(x.size for x in jax.tree_util.tree_leaves(params)) / 1e6:.1f}M")
opt_state = tx.init(params)
key = jax.random.PRNGKey(1)
start = time.time()
for step in range(2000):
    key, sub = jax.random.split(key)
    tokens = jax.random.randint(sub, (BATCH, SEQ + 1), 0, VOCAB)
    params, opt_state, loss = train_step(params, opt_state, tokens)
    if step % 50 == 0:
        print(f"step {step} loss {float(loss):.4f} ({time.time() - start:.1f} s)")
''')


def s24_hf_grpo_group_logprobs():
    # run.sh's holder leaves 20 GiB. A hand-written GRPO step: 8 prompts x 16 sampled completions
    # (128 x 640 tokens) from the policy, the reference model's log-probs under no_grad, then the
    # policy's forward with grad over the whole group in one batch (82k tokens): its saved
    # activations do not fit beside the two models and the other job.
    run_user_script("grpo_step", '''import logging
import time

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("grpo")
MODEL, GROUP, PROMPTS, PROMPT_LEN, NEW = "@CKPT@", 16, 8, 512, 128

policy = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.bfloat16, device_map="cuda")
ref = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.bfloat16, device_map="cuda").eval()
ref.requires_grad_(False)
optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-6)


def token_logps(model, seqs, n_prompt):
    logits = model(input_ids=seqs).logits[:, n_prompt - 1:-1]
    logps = F.log_softmax(logits.float(), dim=-1)
    return torch.gather(logps, 2, seqs[:, n_prompt:, None]).squeeze(-1)


g = torch.Generator().manual_seed(0)
for it in range(200):
    t0 = time.time()
    prompts = torch.randint(3, 32000, (PROMPTS, PROMPT_LEN), generator=g).cuda()
    with torch.no_grad():
        seqs = policy.generate(prompts.repeat_interleave(GROUP, 0), do_sample=True,
                               temperature=1.0, max_new_tokens=NEW, min_new_tokens=NEW,
                               pad_token_id=0)
    rewards = torch.rand(PROMPTS, GROUP, device="cuda")
    adv = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4))
    log.info("iter %d: sampled %s in %.1f s, mean reward %.3f", it, tuple(seqs.shape),
             time.time() - t0, rewards.mean().item())
    with torch.no_grad():
        ref_logps = token_logps(ref, seqs, PROMPT_LEN)
    logps = token_logps(policy, seqs, PROMPT_LEN)
    ratio = torch.exp(logps - logps.detach())
    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    loss = (-(ratio * adv.reshape(-1, 1)) + 0.04 * kl).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    log.info("iter %d: loss %.4f kl %.4f", it, loss.item(), kl.mean().item())
'''.replace("@CKPT@", CKPT))


def s24_maml_inner_loop():
    # run.sh's holder leaves 16 GiB. Second-order MAML on miniImageNet-sized tasks (5-way 5-shot,
    # 15 queries, 84 x 84, a Conv-4 with 128 channels) with 5 inner steps under
    # torch.autograd.grad(create_graph=True) and a meta-batch of 8 tasks whose query losses are
    # summed before one outer backward: every task's unrolled inner loop stays in the graph and
    # the first meta-iteration runs out in an inner step's forward (batch_norm) a few tasks in,
    # before any progress line.
    run_user_script("maml_train", '''import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

parser = argparse.ArgumentParser()
parser.add_argument("--ways", type=int, default=5)
parser.add_argument("--shots", type=int, default=5)
parser.add_argument("--queries", type=int, default=15)
parser.add_argument("--meta-batch", type=int, default=8)
parser.add_argument("--inner-steps", type=int, default=5)
parser.add_argument("--inner-lr", type=float, default=0.01)
parser.add_argument("--hidden", type=int, default=128)
parser.add_argument("--first-order", action="store_true")
args = parser.parse_args()


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout, track_running_stats=False),
                         nn.ReLU(), nn.MaxPool2d(2))


net = nn.Sequential(conv_block(3, args.hidden), conv_block(args.hidden, args.hidden),
                    conv_block(args.hidden, args.hidden), conv_block(args.hidden, args.hidden),
                    nn.Flatten(), nn.Linear(args.hidden * 5 * 5, args.ways)).cuda()
meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(0)


def sample_task():
    n_s, n_q = args.ways * args.shots, args.ways * args.queries
    xs = torch.randn(n_s, 3, 84, 84, generator=g).cuda()
    xq = torch.randn(n_q, 3, 84, 84, generator=g).cuda()
    ys = torch.arange(args.ways).repeat_interleave(args.shots).cuda()
    yq = torch.arange(args.ways).repeat_interleave(args.queries).cuda()
    return xs, ys, xq, yq


print(f"MAML {args.ways}-way {args.shots}-shot, meta-batch {args.meta_batch}, "
      f"{args.inner_steps} inner steps, second order: {not args.first_order}", flush=True)
for it in range(60000):
    t0 = time.time()
    meta_loss, accs = 0.0, []
    for t in range(args.meta_batch):
        xs, ys, xq, yq = sample_task()
        fast = dict(net.named_parameters())
        for _ in range(args.inner_steps):
            loss = F.cross_entropy(functional_call(net, fast, (xs,)), ys)
            grads = torch.autograd.grad(loss, list(fast.values()), create_graph=not args.first_order)
            fast = {n: p - args.inner_lr * g_ for (n, p), g_ in zip(fast.items(), grads)}
        logits = functional_call(net, fast, (xq,))
        meta_loss = meta_loss + F.cross_entropy(logits, yq)
        accs.append((logits.argmax(-1) == yq).float().mean().item())
    meta_opt.zero_grad()
    (meta_loss / args.meta_batch).backward()
    meta_opt.step()
    if it % 10 == 0:
        print(f"it {it}: meta loss {meta_loss.item() / args.meta_batch:.4f} "
              f"acc {sum(accs) / len(accs):.3f} ({time.time() - t0:.2f} s/it)", flush=True)
''')


def s24_shampoo_first_step():
    # run.sh's holder leaves 10 GiB. A language model (8 x 2048-wide encoder layers, 32000-word
    # embedding and head, fp32) trained with a hand-written Shampoo optimizer: forward and
    # backward go through, and the first optimizer.step() lazily creates each parameter's
    # Kronecker preconditioners and their inverse roots, dim x dim for every dimension (32000 x
    # 32000 fp32 for the embedding and the head); the states do not fit.
    run_user_script("train_shampoo", '''import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Shampoo(torch.optim.Optimizer):
    """Shampoo (Gupta et al. 2018): one preconditioner per tensor dimension."""

    def __init__(self, params, lr=1e-3, momentum=0.9, eps=1e-6, update_freq=20):
        super().__init__(params, dict(lr=lr, momentum=momentum, eps=eps, update_freq=update_freq))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad, state = p.grad, self.state[p]
                if not state:
                    state["step"] = 0
                    state["momentum"] = torch.zeros_like(p)
                    for dim, size in enumerate(grad.shape):
                        state[f"precond_{dim}"] = group["eps"] * torch.eye(size, device=p.device)
                        state[f"inv_precond_{dim}"] = torch.eye(size, device=p.device)
                state["momentum"].mul_(group["momentum"]).add_(grad)
                g = state["momentum"]
                order = grad.ndimension()
                for dim, size in enumerate(grad.shape):
                    precond, inv = state[f"precond_{dim}"], state[f"inv_precond_{dim}"]
                    g = g.transpose(0, dim).contiguous()
                    shape = g.shape
                    g = g.view(size, -1)
                    precond.add_(g @ g.T)
                    if state["step"] % group["update_freq"] == 0:
                        eigvals, eigvecs = torch.linalg.eigh(precond)
                        inv.copy_(eigvecs @ torch.diag(eigvals.clamp_min(1e-12).pow(-1 / (2 * order))) @ eigvecs.T)
                    g = (inv @ g).view(shape).transpose(0, dim)
                state["step"] += 1
                p.add_(g, alpha=-group["lr"])


class LM(nn.Module):
    def __init__(self, vocab=32000, d=2048, layers=8, heads=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device)
        return self.head(self.blocks(self.embed(ids), mask=mask, is_causal=True))


model = LM().cuda()
print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters", flush=True)
optimizer = Shampoo(model.parameters(), lr=3e-4)
g = torch.Generator().manual_seed(0)
start = time.time()
for step in range(10000):
    ids = torch.randint(0, 32000, (8, 513), generator=g).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.3f} ppl {math.exp(loss.item()):.1f} "
              f"({time.time() - start:.1f} s)", flush=True)
''')


def s24_tokenize_corpus_job():
    # Not a GPU OOM: a batch job (prep_job.sh, with the cluster's `ulimit -v 8388608`, 8 GiB of
    # address space) tokenizes a 1 GiB raw text dump by reading it into one string and calling
    # the Rust tokenizer's encode() on it; the tokenizer's per-byte alignment vector outgrows the
    # address-space limit and Rust aborts the process ("memory allocation of N bytes failed");
    # bash reports "Aborted" and the job exits 134. No GPU is touched.
    import random

    from tokenizers import Tokenizer, models, pre_tokenizers

    raw = os.path.join(WORK, "data", "raw")
    os.makedirs(raw, exist_ok=True)
    vocab = {"[UNK]": 0, "[BOS]": 1, "[EOS]": 2}
    vocab.update({f"w{i}": i for i in range(3, 32000)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(os.path.join(WORK, "data", "tokenizer.json"))
    rng = random.Random(0)
    block = (" ".join(f"w{rng.randint(3, 31999)}" for _ in range(200_000)) + "\n").encode()
    for part in range(4):
        path = os.path.join(raw, f"crawl-2026-11-part-{part:05d}.txt")
        if os.path.exists(path) and os.path.getsize(path) >= 256 * MIB:
            continue
        with open(path, "wb") as fh:
            written = 0
            while written < 256 * MIB:
                fh.write(block)
                written += len(block)
    with open(os.path.join(WORK, "prepare_corpus.py"), "w", encoding="utf-8") as fh:
        fh.write('''import argparse
import glob
import time

import numpy as np
from tokenizers import Tokenizer

parser = argparse.ArgumentParser()
parser.add_argument("--raw", default="data/raw")
parser.add_argument("--tokenizer", default="data/tokenizer.json")
parser.add_argument("--out", default="data/tokens.bin")
args = parser.parse_args()

tokenizer = Tokenizer.from_file(args.tokenizer)
files = sorted(glob.glob(f"{args.raw}/*.txt"))
start = time.time()
text = "\\n".join(open(f, encoding="utf-8").read() for f in files)
print(f"read {len(files)} files, {len(text) / 2**30:.2f} GiB of text in {time.time() - start:.1f} s",
      flush=True)
enc = tokenizer.encode(text)
ids = np.asarray(enc.ids, dtype=np.uint16)
ids.tofile(args.out)
print(f"wrote {ids.size} tokens to {args.out}", flush=True)
''')
    with open(os.path.join(WORK, "prep_job.sh"), "w", encoding="utf-8") as fh:
        fh.write('''#!/bin/bash
# tokenize the raw crawl dump before pretraining (per-job memory limit: 8 GiB of address space)
ulimit -c 0
ulimit -v 8388608
echo "[$(date -u +%FT%TZ)] job $$ on $(hostname): tokenizing data/raw"
python3 prepare_corpus.py --raw data/raw --out data/tokens.bin
status=$?
echo "[$(date -u +%FT%TZ)] prepare_corpus.py exited with status $status"
exit $status
''')
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(WORK)
    os.execv("/bin/bash", ["bash", "prep_job.sh"])


def s24_audio_encoder_long_clip():
    # Not a GPU OOM: a batch transcription script runs a CTC speech encoder whose learned
    # positional table has 1500 rows (30 s at 50 frames/s); the 10th clip of the manifest is
    # 41.7 s long, so the position lookup indexes past the table: the index kernel's
    # assertion lines and "CUDA error: device-side assert triggered", reported at the next
    # synchronising call (no CUDA_LAUNCH_BLOCKING).
    import json

    os.makedirs(os.path.join(WORK, "manifests"), exist_ok=True)
    durations = [12.3, 28.0, 7.5, 19.9, 3.2, 25.6, 14.1, 9.8, 22.4, 41.7, 5.5, 17.0]
    with open(os.path.join(WORK, "manifests", "call_center_dec.jsonl"), "w") as fh:
        for i, d in enumerate(durations):
            fh.write(json.dumps({"audio": f"audio/call_{1000 + i}.flac", "duration": d}) + "\n")
    run_user_script("transcribe_calls", '''import json
import logging

import torch
import torch.nn as nn
import torchaudio

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("transcribe")
SR, MAX_FRAMES = 16_000, 1500
VOCAB = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [" ", "'"]


class SpeechEncoder(nn.Module):
    def __init__(self, n_mels=80, d=512, layers=6, heads=8):
        super().__init__()
        self.subsample = nn.Sequential(nn.Conv1d(n_mels, d, 3, padding=1), nn.GELU(),
                                       nn.Conv1d(d, d, 3, stride=2, padding=1), nn.GELU())
        self.pos = nn.Embedding(MAX_FRAMES, d)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, norm_first=True), layers,
            enable_nested_tensor=False)
        self.ctc = nn.Linear(d, len(VOCAB) + 1)

    def forward(self, mels):
        x = self.subsample(mels).transpose(1, 2)
        x = x + self.pos(torch.arange(x.shape[1], device=x.device))
        return self.ctc(self.encoder(x))


def greedy_ctc(logits):
    ids = logits.argmax(-1).tolist()
    out, prev = [], None
    for i in ids:
        if i != prev and i != 0:
            out.append(VOCAB[i - 1])
        prev = i
    return "".join(out)


device = torch.device("cuda")
model = SpeechEncoder().to(device).eval()
mel = torchaudio.transforms.MelSpectrogram(SR, n_fft=400, hop_length=160, n_mels=80).to(device)
with open("manifests/call_center_dec.jsonl") as fh:
    clips = [json.loads(line) for line in fh]
log.info("%d clips to transcribe", len(clips))
g = torch.Generator().manual_seed(0)
with torch.inference_mode():
    for clip in clips:
        wav = torch.randn(int(clip["duration"] * SR), generator=g).mul_(0.05).to(device)
        feats = (mel(wav) + 1e-6).log()[None]
        logits = model(feats)[0]
        text = greedy_ctc(logits)
        log.info("%s %.1f s -> %d chars", clip["audio"], clip["duration"], len(text))
''')


def s24_compile_shared_node_tmp():
    # Not a GPU OOM: a torch.compile'd model on a node whose inductor cache directory
    # (/tmp/torchinductor_<user>) sits on a small volume that is already full (the scenario
    # mounts a 4 MiB tmpfs there in a private mount namespace and fills it, leaving the machine's
    # /tmp alone); the first compiled call fails writing the generated code: "[Errno 28] No
    # space left on device", wrapped by dynamo/inductor.
    import getpass

    if not hasattr(os, "unshare"):
        sys.exit("os.unshare needs Python 3.12: s24_compile_shared_node_tmp cannot run")
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                           ctypes.c_char_p]
    ms_rec, ms_private = 16384, 262144
    try:
        os.unshare(os.CLONE_NEWNS)
    except OSError as error:
        sys.exit(f"unshare(CLONE_NEWNS) failed ({error}): s24_compile_shared_node_tmp cannot run")
    if libc.mount(b"none", b"/", None, ms_rec | ms_private, None) != 0:
        sys.exit(f"making / private failed (errno {ctypes.get_errno()})")
    cache = f"/tmp/torchinductor_{getpass.getuser()}"
    os.makedirs(cache, exist_ok=True)
    if libc.mount(b"tmpfs", cache.encode(), b"tmpfs", 0, b"size=4m,mode=0755") != 0:
        sys.exit(f"mounting a 4 MiB tmpfs on {cache} failed (errno {ctypes.get_errno()})")
    try:
        with open(os.path.join(cache, ".stale-autotune-results"), "wb") as fh:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
    except OSError:
        pass
    run_user_script("bench_compiled", '''import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d=1024):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.ff(self.norm(x))


model = nn.Sequential(*[Block() for _ in range(4)]).cuda().eval()
compiled = torch.compile(model)
x = torch.randn(64, 512, 1024, device="cuda")
print(f"torch {torch.__version__}, compiling {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M "
      "param model", flush=True)
with torch.inference_mode():
    t0 = time.time()
    compiled(x)
    torch.cuda.synchronize()
    print(f"first call (compile) {time.time() - t0:.1f} s", flush=True)
    t0 = time.time()
    for _ in range(50):
        compiled(x)
    torch.cuda.synchronize()
    print(f"{(time.time() - t0) / 50 * 1e3:.2f} ms/iter", flush=True)
''')


def s24_gpytorch_duplicate_sites():
    # Not a GPU OOM: an exact GP (gpytorch, float32 on the card) fitted to 100 monitoring sites
    # measured 5 times each (duplicated inputs), targets in raw units (variance ~1e8), the noise
    # pinned near zero ("the simulator is deterministic") and the output scale set to the
    # targets' variance: the 500 x 500 kernel matrix is numerically singular, and the first
    # marginal-likelihood evaluation fails with linear_operator's NotPSDError after adding
    # jitter up to 1e-4 (NumericalWarnings first).
    run_user_script("fit_gp_sites", '''import gpytorch
import torch


class SiteGP(gpytorch.models.ExactGP):
    def __init__(self, x, y, likelihood):
        super().__init__(x, y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=2))

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


g = torch.Generator().manual_seed(0)
sites = torch.rand(100, 2, generator=g)
train_x = sites.repeat_interleave(5, 0).cuda()  # 5 measurement campaigns per site
train_y = (2e4 * torch.sin(6 * sites[:, 0]) * torch.cos(4 * sites[:, 1]) + 5e4).repeat_interleave(5).cuda()
print(f"{train_x.shape[0]} observations at {sites.shape[0]} sites, y variance {train_y.var().item():.3e}")

likelihood = gpytorch.likelihoods.GaussianLikelihood(
    noise_constraint=gpytorch.constraints.GreaterThan(1e-10)).cuda()
likelihood.noise = 1e-8  # deterministic simulator output
model = SiteGP(train_x, train_y, likelihood).cuda()
model.covar_module.outputscale = train_y.var()
model.mean_module.constant.data.fill_(train_y.mean())
model.train()
likelihood.train()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
for i in range(200):
    optimizer.zero_grad()
    loss = -mll(model(train_x), train_y)
    loss.backward()
    optimizer.step()
    if i % 20 == 0:
        print(f"iter {i}: loss {loss.item():.3f} lengthscale "
              f"{model.covar_module.base_kernel.lengthscale.squeeze().tolist()}")
''')


# --------------------------------------------------------------------------- session 25 (blind):
# a Lightning UNet whose example_input_array is an inference-sized batch, a Mamba LM trained with
# the pure-PyTorch reference selective scan, a bf16 pretraining loop with an fp32 EMA, a
# lottery-ticket run's global magnitude pruning, a width x lr sweep in one process, integrated
# gradients for a ViT, a JAX particle-mesh N-body step, a guided DDIM upsampler that keeps its
# intermediates, a logit-lens probe, a resume through torch.distributed.checkpoint's state-dict
# helpers, and 3 look-alikes (Arrow's allocator under `ulimit -v`, the kernel's OOM killer in a
# memory cgroup, a GCN over 1-based edge ids)


def s25_lightning_landcover_tiles():
    # run.sh's holder leaves 6 GiB. A Lightning land-cover UNet trains on 256 x 256 crops in
    # batches of 8, but its example_input_array is the inference service's batch (16 full
    # 1024 x 1024 tiles, 4 bands): Lightning's ModelSummary runs it through the model at the
    # start of fit (no_grad, eval mode), before the sanity check, and the first block's 4 GiB
    # activations do not fit.
    run_user_script("train_landcover", '''import argparse

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CLASSES = ["water", "trees", "grass", "flooded_veg", "crops", "shrub", "built", "bare", "snow"]


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, in_ch=4, n_classes=len(CLASSES), widths=(64, 128, 256, 512)):
        super().__init__()
        self.downs = nn.ModuleList()
        ch = in_ch
        for w in widths:
            self.downs.append(double_conv(ch, w))
            ch = w
        self.bottleneck = double_conv(ch, 2 * ch)
        ch = 2 * ch
        self.ups, self.up_convs = nn.ModuleList(), nn.ModuleList()
        for w in reversed(widths):
            self.ups.append(nn.ConvTranspose2d(ch, w, 2, stride=2))
            self.up_convs.append(double_conv(2 * w, w))
            ch = w
        self.head = nn.Conv2d(ch, n_classes, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottleneck(x)
        for up, conv, skip in zip(self.ups, self.up_convs, reversed(skips)):
            x = conv(torch.cat([up(x), skip], dim=1))
        return self.head(x)


class LandCoverModule(L.LightningModule):
    def __init__(self, lr=1e-3, tile=1024, serve_batch=16):
        super().__init__()
        self.save_hyperparameters()
        self.net = UNet()
        self.example_input_array = torch.zeros(serve_batch, 4, tile, tile)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val/loss", F.cross_entropy(logits, y), prog_bar=True)
        self.log("val/acc", (logits.argmax(1) == y).float().mean(), prog_bar=True)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=1e-4)
        return {"optimizer": opt,
                "lr_scheduler": torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=50)}


class Crops(Dataset):
    """Random 256 x 256 crops of the Sentinel-2 mosaics (RGB + NIR, int16 reflectance / 1e4)."""

    def __init__(self, n, seed):
        self.n, self.seed = n, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        x = torch.rand(4, 256, 256, generator=g)
        y = torch.randint(0, len(CLASSES), (256, 256), generator=g)
        return x, y


parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=50)
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--lr", type=float, default=1e-3)
args = parser.parse_args()

L.seed_everything(42)
model = LandCoverModule(lr=args.lr)
train = DataLoader(Crops(4000, 0), batch_size=args.batch_size, shuffle=True, num_workers=4)
val = DataLoader(Crops(400, 1), batch_size=args.batch_size, num_workers=4)
trainer = L.Trainer(max_epochs=args.epochs, accelerator="gpu", devices=1, log_every_n_steps=20)
trainer.fit(model, train, val)
''')


def s25_mamba_reference_lm():
    # run.sh's holder leaves 16 GiB. A Mamba language model (24 blocks, d_model 1024) trained in
    # fp32 with the pure-PyTorch reference selective scan (no CUDA kernels installed): each block
    # materialises deltaA and deltaB_u as (batch, d_inner, seqlen, d_state) and keeps every
    # step's state for backward, ~8 GiB a block at 4 x 4096 tokens, so the first forward runs
    # out a couple of blocks in.
    run_user_script("train_mamba", '''import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat
from tqdm import tqdm


def selective_scan_ref(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False):
    """u, delta, z: (b, d, l); A: (d, n); B, C: (b, n, l); D: (d,). Reference implementation."""
    dtype_in = u.dtype
    u, delta = u.float(), delta.float()
    if delta_bias is not None:
        delta = delta + delta_bias[..., None].float()
    if delta_softplus:
        delta = F.softplus(delta)
    batch, dim, dstate = u.shape[0], A.shape[0], A.shape[1]
    B, C = B.float(), C.float()
    x = A.new_zeros((batch, dim, dstate))
    ys = []
    deltaA = torch.exp(torch.einsum("bdl,dn->bdln", delta, A))
    deltaB_u = torch.einsum("bdl,bnl,bdl->bdln", delta, B, u)
    for i in range(u.shape[2]):
        x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
        ys.append(torch.einsum("bdn,bn->bd", x, C[:, :, i]))
    y = torch.stack(ys, dim=2)
    out = y if D is None else y + u * rearrange(D, "d -> d 1")
    if z is not None:
        out = out * F.silu(z.float())
    return out.to(dtype=dtype_in)


class Mixer(nn.Module):
    def __init__(self, d_model, d_state=16, d_conv=4, expand=2):
        super().__init__()
        self.d_inner, self.d_state = expand * d_model, d_state
        self.dt_rank = math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner, bias=False)
        self.conv1d = nn.Conv1d(self.d_inner, self.d_inner, d_conv, groups=self.d_inner,
                                padding=d_conv - 1)
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner, bias=True)
        A = repeat(torch.arange(1, d_state + 1, dtype=torch.float32), "n -> d n", d=self.d_inner)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(self.d_inner))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def forward(self, hidden_states):
        seqlen = hidden_states.shape[1]
        xz = rearrange(self.in_proj(hidden_states), "b l d -> b d l")
        x, z = xz.chunk(2, dim=1)
        x = F.silu(self.conv1d(x)[..., :seqlen])
        x_dbl = self.x_proj(rearrange(x, "b d l -> (b l) d"))
        dt, B, C = torch.split(x_dbl, [self.dt_rank, self.d_state, self.d_state], dim=-1)
        dt = rearrange(self.dt_proj.weight @ dt.t(), "d (b l) -> b d l", l=seqlen)
        B = rearrange(B, "(b l) n -> b n l", l=seqlen).contiguous()
        C = rearrange(C, "(b l) n -> b n l", l=seqlen).contiguous()
        A = -torch.exp(self.A_log.float())
        y = selective_scan_ref(x, dt, A, B, C, self.D.float(), z=z,
                               delta_bias=self.dt_proj.bias.float(), delta_softplus=True)
        return self.out_proj(rearrange(y, "b d l -> b l d"))


class Block(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.norm = nn.RMSNorm(d_model)
        self.mixer = Mixer(d_model)

    def forward(self, x):
        return x + self.mixer(self.norm(x))


class MambaLM(nn.Module):
    def __init__(self, vocab_size=50280, d_model=1024, n_layer=24):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.layers = nn.ModuleList(Block(d_model) for _ in range(n_layer))
        self.norm_f = nn.RMSNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.embedding.weight

    def forward(self, input_ids):
        h = self.embedding(input_ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(self.norm_f(h))


SEQ, BATCH, STEPS = 4096, 4, 20000
torch.manual_seed(0)
model = MambaLM().cuda()
print(f"MambaLM: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params, "
      f"{len(model.layers)} layers, selective scan: reference (pure PyTorch)", flush=True)
print(f"seq_len {SEQ}, batch {BATCH}, {SEQ * BATCH} tokens/step", flush=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
data = torch.randint(0, 50280, (2_000_000,))
start = time.time()
for step in tqdm(range(STEPS), desc="train", dynamic_ncols=True):
    ix = torch.randint(0, data.numel() - SEQ - 1, (BATCH,))
    batch = torch.stack([data[i:i + SEQ + 1] for i in ix]).cuda()
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 50 == 0:
        tqdm.write(f"step {step}: loss {loss.item():.4f} ({time.time() - start:.0f} s)")
''')


def s25_ema_bf16_pretrain():
    # run.sh's holder leaves 13 GiB. A 0.94B-parameter causal LM pretrained in pure bf16
    # (AdamW with foreach=False, states bf16) keeps an fp32 EMA of its weights; the EMA update
    # after each optimizer step builds fp32 copies of every parameter in one list before
    # torch._foreach_lerp_: forward, backward and the first step fit, the EMA update of step 0
    # does not.
    run_user_script("pretrain", '''import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("pretrain")
VOCAB, D, LAYERS, HEADS, SEQ, BATCH = 32000, 2048, 16, 16, 1024, 2


class CausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device,
                                                              dtype=torch.bfloat16)
        return self.head(self.norm(self.blocks(self.embed(ids), mask=mask, is_causal=True)))


class EMA:
    def __init__(self, model, decay=0.9999):
        self.decay = decay
        self.shadow = [p.detach().float().clone() for p in model.parameters()]

    @torch.no_grad()
    def update(self, model):
        params = [p.detach().float() for p in model.parameters()]
        torch._foreach_lerp_(self.shadow, params, 1.0 - self.decay)


torch.manual_seed(0)
with torch.device("cuda"):
    model = CausalLM()
model.to(torch.bfloat16)
n_params = sum(p.numel() for p in model.parameters())
log.info("model: %.2fB parameters (bf16)", n_params / 1e9)
ema = EMA(model)
log.info("EMA: decay %.4f, fp32 shadow of %.2f GB", ema.decay, 4 * n_params / 1e9)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1,
                              foreach=False)
g = torch.Generator().manual_seed(0)
start = time.time()
for step in range(100_000):
    ids = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=g).cuda()
    optimizer.zero_grad(set_to_none=True)
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    ema.update(model)
    if step % 20 == 0:
        log.info("step %d loss %.4f ppl %.1f (%.1f s)", step, loss.item(), math.exp(loss.item()),
                 time.time() - start)
''')


def s25_lottery_ticket_rounds():
    # run.sh's holder leaves 10 GiB. A lottery-ticket experiment: a BERT-large-sized encoder
    # (24 layers, d 1024, SGD with momentum) trains a few steps of masked-LM, then round 1 prunes
    # 20% of all linear weights by global magnitude with torch.nn.utils.prune.global_unstructured:
    # its flat importance and mask vectors, the boolean indexing and topk over 302M weights do not
    # fit beside the model, its gradients and momentum.
    run_user_script("lottery_ticket", '''import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune

VOCAB, D, LAYERS, HEADS = 30522, 1024, 24, 16
ROUNDS, PRUNE_PER_ROUND, STEPS_PER_ROUND = 10, 0.2, 30


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(512, D)
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.1, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.mlm = nn.Linear(D, VOCAB)

    def forward(self, ids):
        h = self.embed(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        return self.mlm(self.encoder(h))


def prunable(model):
    out = []
    for m in model.encoder.modules():
        if isinstance(m, nn.MultiheadAttention):
            out.append((m, "in_proj_weight"))
        elif isinstance(m, nn.Linear):
            out.append((m, "weight"))
    return out


def sparsity(params):
    zeros = sum(int((getattr(m, n) == 0).sum()) for m, n in params)
    return zeros / sum(getattr(m, n).numel() for m, n in params)


def train(model, optimizer, steps, g):
    model.train()
    for step in range(steps):
        ids = torch.randint(5, VOCAB, (16, 128), generator=g).cuda()
        labels = ids.clone()
        masked = torch.rand(ids.shape, generator=g).cuda() < 0.15
        ids = ids.masked_fill(masked, 4)
        labels = labels.masked_fill(~masked, -100)
        loss = F.cross_entropy(model(ids).flatten(0, 1), labels.flatten(), ignore_index=-100)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = Encoder().cuda()
init_state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
params = prunable(model)
print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters, "
      f"{sum(getattr(m, n).numel() for m, n in params) / 1e6:.0f}M prunable in {len(params)} tensors",
      flush=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
g = torch.Generator().manual_seed(0)
for r in range(ROUNDS):
    t0 = time.time()
    loss = train(model, optimizer, STEPS_PER_ROUND, g)
    print(f"round {r}: trained {STEPS_PER_ROUND} steps, loss {loss:.4f} ({time.time() - t0:.1f} s)",
          flush=True)
    prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=PRUNE_PER_ROUND)
    print(f"round {r}: global sparsity {sparsity(params):.1%}", flush=True)
    with torch.no_grad():
        for name, p in model.named_parameters():
            key = name.replace("_orig", "")
            if key in init_state:
                p.copy_(init_state[key])
''')


def s25_width_lr_sweep():
    # run.sh's holder leaves 12 GiB. A width x learning-rate sweep runs every trial in one
    # process and keeps each trial's model and optimizer in the results list (to save the best at
    # the end): the first trials finish, and a later one runs out once the earlier trials'
    # weights, gradients and Adam states have piled up (1.75 GiB for each d_model 1024 trial,
    # 3.7 GiB for each 1536 one).
    run_user_script("sweep", '''import itertools
import json
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="[%(asctime)s] [%(levelname)s] %(message)s", level=logging.INFO)
log = logging.getLogger("sweep")
VOCAB, SEQ, LAYERS, STEPS = 16000, 256, 8, 15


class LM(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        layer = nn.TransformerEncoderLayer(d_model, d_model // 64, 4 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, VOCAB, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(self.blocks(self.embed(ids), is_causal=True,
                                     mask=nn.Transformer.generate_square_subsequent_mask(
                                         ids.shape[1], device=ids.device)))


def run_trial(cfg, g):
    model = LM(cfg["d_model"]).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for step in range(STEPS):
        ids = torch.randint(0, VOCAB, (16, SEQ + 1), generator=g).cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids[:, :-1])
        loss = F.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        ids = torch.randint(0, VOCAB, (16, SEQ + 1), generator=g).cuda()
        val = F.cross_entropy(model(ids[:, :-1]).float().flatten(0, 1), ids[:, 1:].flatten())
    return model, optimizer, val.item()


grid = [{"d_model": d, "lr": lr} for d, lr in itertools.product([1024, 1536, 2048], [1e-4, 3e-4, 1e-3])]
log.info("sweep over %d configurations: %s", len(grid), json.dumps(grid))
results, g = [], torch.Generator().manual_seed(0)
for trial, cfg in enumerate(grid):
    t0 = time.time()
    model, optimizer, val = run_trial(cfg, g)
    results.append({"trial": trial, "cfg": cfg, "val_loss": val, "model": model, "optimizer": optimizer})
    best = min(results, key=lambda r: r["val_loss"])
    log.info("Trial %d finished with value: %.4f and parameters: %s in %.1f s. Best is trial %d with "
             "value: %.4f.", trial, val, cfg, time.time() - t0, best["trial"], best["val_loss"])
best = min(results, key=lambda r: r["val_loss"])
torch.save(best["model"].state_dict(), f"best_d{best['cfg']['d_model']}.pt")
''')


def s25_vit_attributions():
    # No holder: the whole card. An explainability script computes integrated-gradients maps for
    # a ViT-B/16 (timm, random weights), 64 interpolation steps for a batch of 32 images, and
    # puts all 2048 interpolated images through the model in one forward with grad w.r.t. the
    # inputs: the forward's saved activations exceed the card in the middle of the blocks.
    run_user_script("explain_vit", '''import argparse
import os

import timm
import torch
from tqdm import tqdm


def integrated_gradients(model, images, targets, steps=64):
    baseline = torch.zeros_like(images)
    alphas = torch.linspace(0, 1, steps, device=images.device).view(steps, 1, 1, 1, 1)
    path = (baseline[None] + alphas * (images - baseline)[None]).flatten(0, 1)
    path.requires_grad_(True)
    logits = model(path)
    picked = logits.gather(1, targets.repeat(steps)[:, None]).sum()
    (grads,) = torch.autograd.grad(picked, path)
    avg = grads.view(steps, *images.shape).mean(0)
    return ((images - baseline) * avg).sum(1)


parser = argparse.ArgumentParser()
parser.add_argument("--model", default="vit_base_patch16_224")
parser.add_argument("--images", type=int, default=512)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--steps", type=int, default=64)
parser.add_argument("--out", default="attributions")
args = parser.parse_args()

model = timm.create_model(args.model, pretrained=False, num_classes=1000).cuda().eval()
cfg = model.pretrained_cfg
print(f"{args.model}: input {cfg['input_size']}, mean {cfg['mean']}, std {cfg['std']}")
os.makedirs(args.out, exist_ok=True)
g = torch.Generator().manual_seed(0)
for b in tqdm(range(args.images // args.batch_size), desc="IG batches"):
    images = torch.randn(args.batch_size, 3, 224, 224, generator=g).cuda()
    with torch.no_grad():
        targets = model(images).argmax(-1)
    maps = integrated_gradients(model, images, targets, steps=args.steps)
    torch.save({"maps": maps.cpu(), "targets": targets.cpu()}, f"{args.out}/batch_{b:04d}.pt")
''')


def s25_jax_pm_nbody():
    # JAX with a 5% memory fraction (~7 GiB, run.sh sets it). A particle-mesh N-body run: 512^3
    # particles on a 512^3 mesh; the initial conditions (positions and velocities, 3.2 GB) fit,
    # and the first jitted leapfrog step (CIC painting, FFT Poisson solve, three force meshes
    # read back at the particles) cannot get its buffers.
    run_user_script("pm_nbody", '''import time

import jax
import jax.numpy as jnp

MESH, NSIDE, BOX = 512, 512, 1000.0  # cells, particles per side, Mpc/h
OMEGA_M, A_INIT, A_FINAL, N_STEPS = 0.3, 0.02, 1.0, 40


def cic_weights(pos):
    i0 = jnp.floor(pos).astype(jnp.int32)
    f = pos - i0
    for dx in (0, 1):
        for dy in (0, 1):
            for dz in (0, 1):
                w = ((f[:, 0] if dx else 1 - f[:, 0]) * (f[:, 1] if dy else 1 - f[:, 1])
                     * (f[:, 2] if dz else 1 - f[:, 2]))
                idx = (i0 + jnp.array([dx, dy, dz], dtype=jnp.int32)) % MESH
                yield idx, w


def cic_paint(pos):
    mesh = jnp.zeros((MESH, MESH, MESH), jnp.float32)
    for idx, w in cic_weights(pos):
        mesh = mesh.at[idx[:, 0], idx[:, 1], idx[:, 2]].add(w)
    return mesh


def cic_read(grid, pos):
    out = jnp.zeros(pos.shape[0], jnp.float32)
    for idx, w in cic_weights(pos):
        out = out + grid[idx[:, 0], idx[:, 1], idx[:, 2]] * w
    return out


def pm_accel(pos):
    delta = cic_paint(pos) * (MESH ** 3 / NSIDE ** 3) - 1.0
    delta_k = jnp.fft.rfftn(delta)
    k = 2 * jnp.pi * jnp.fft.fftfreq(MESH)
    kz = 2 * jnp.pi * jnp.fft.rfftfreq(MESH)
    kx, ky, kz = k[:, None, None], k[None, :, None], kz[None, None, :]
    k2 = kx ** 2 + ky ** 2 + kz ** 2
    phi_k = jnp.where(k2 > 0, -delta_k / jnp.where(k2 > 0, k2, 1.0), 0.0)
    acc = [cic_read(jnp.fft.irfftn(-1j * ki * phi_k, s=(MESH, MESH, MESH)), pos)
           for ki in (kx, ky, kz)]
    return jnp.stack(acc, axis=-1)


@jax.jit
def initial_conditions(key):
    q = (jnp.arange(NSIDE, dtype=jnp.float32) + 0.5) * (MESH / NSIDE)
    lattice = jnp.stack(jnp.meshgrid(q, q, q, indexing="ij"), axis=-1).reshape(-1, 3)
    disp = 0.2 * jax.random.normal(key, lattice.shape, jnp.float32)
    return (lattice + disp) % MESH, disp * 0.05


@jax.jit
def leapfrog(pos, vel, a, da):
    vel = vel + 1.5 * OMEGA_M / a ** 2 * pm_accel(pos) * da
    pos = (pos + vel * da) % MESH
    return pos, vel


print(f"jax {jax.__version__} on {jax.devices()}")
print(f"{NSIDE}^3 particles, {MESH}^3 mesh, box {BOX} Mpc/h, a = {A_INIT} -> {A_FINAL} "
      f"in {N_STEPS} steps")
t0 = time.time()
pos, vel = initial_conditions(jax.random.PRNGKey(2026))
pos.block_until_ready()
print(f"initial conditions: {pos.shape[0]:,} particles in {time.time() - t0:.1f} s")
a_grid = jnp.linspace(A_INIT, A_FINAL, N_STEPS + 1)
for i in range(N_STEPS):
    t0 = time.time()
    a, da = a_grid[i], a_grid[i + 1] - a_grid[i]
    pos, vel = leapfrog(pos, vel, a, da)
    pos.block_until_ready()
    print(f"step {i + 1}/{N_STEPS}: a = {float(a_grid[i + 1]):.3f} ({time.time() - t0:.2f} s)")
''')


def s25_ddim_guided_upsampler():
    # run.sh's holder leaves 12 GiB. A cascaded-diffusion super-resolution stage (256 -> 1024,
    # patchified UNet under bf16 autocast) samples 8 images with DDIM and classifier-free
    # guidance (the batch doubled for the unconditional half) and keeps, for a progress video,
    # x_t, pred_x0 and both guidance branches' eps of every step on the card in fp32 (400 MB a
    # step): sampling runs out part-way through the 50 steps.
    run_user_script("sample_sr", '''import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


class ResBlock(nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.emb = nn.Linear(temb, cout)
        self.norm2, self.conv2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x))) + self.emb(emb)[:, :, None, None]
        return self.conv2(F.silu(self.norm2(h))) + self.skip(x)


class SRUNet(nn.Module):
    """Super-resolution stage: noisy 1024^2 image + bicubic-upsampled 256^2 image, pixel-unshuffled by 4."""

    def __init__(self, widths=(128, 256, 256), n_classes=1000, temb=512):
        super().__init__()
        self.temb = temb
        self.t_mlp = nn.Sequential(nn.Linear(temb, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.label = nn.Embedding(n_classes + 1, temb)
        self.inp = nn.Sequential(nn.PixelUnshuffle(4), nn.Conv2d(6 * 16, widths[0], 3, padding=1))
        self.down, self.up = nn.ModuleList(), nn.ModuleList()
        ch = widths[0]
        for w in widths:
            self.down.append(ResBlock(ch, w, temb))
            ch = w
        self.mid = ResBlock(ch, ch, temb)
        for w in reversed(widths):
            self.up.append(ResBlock(ch + w, w, temb))
            ch = w
        self.out = nn.Sequential(nn.GroupNorm(32, ch), nn.SiLU(), nn.Conv2d(ch, 3 * 16, 3, padding=1),
                                 nn.PixelShuffle(4))

    def timestep_embedding(self, t):
        half = self.temb // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
        args = t.float()[:, None] * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    def forward(self, x, low_res_up, t, y):
        emb = self.t_mlp(self.timestep_embedding(t)) + self.label(y)
        h = self.inp(torch.cat([x, low_res_up], dim=1))
        skips = []
        for i, block in enumerate(self.down):
            h = block(h, emb)
            skips.append(h)
            if i < len(self.down) - 1:
                h = F.avg_pool2d(h, 2)
        h = self.mid(h, emb)
        for i, block in enumerate(self.up):
            skip = skips.pop()
            if h.shape[-1] != skip.shape[-1]:
                h = F.interpolate(h, size=skip.shape[-2:], mode="nearest")
            h = block(torch.cat([h, skip], dim=1), emb)
        return self.out(h)


def cosine_alphas_cumprod(T=1000, s=0.008):
    t = torch.linspace(0, T, T + 1, dtype=torch.float64)
    f = torch.cos((t / T + s) / (1 + s) * math.pi / 2) ** 2
    return (f[1:] / f[0]).clamp(1e-5, 1.0).float()


@torch.no_grad()
def ddim_sample(model, low_res, labels, steps=50, guidance=4.0, return_intermediates=False):
    b, device = low_res.shape[0], low_res.device
    cond = F.interpolate(low_res, scale_factor=4, mode="bicubic", align_corners=False)
    ac = cosine_alphas_cumprod().to(device)
    ts = torch.linspace(999, 0, steps, device=device).long()
    x = torch.randn(b, 3, cond.shape[2], cond.shape[3], device=device)
    null = torch.full_like(labels, 1000)
    inter = {"x_t": [], "pred_x0": [], "eps_cond": [], "eps_uncond": []}
    for i, t in enumerate(tqdm(ts, desc="DDIM Sampler", total=steps)):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            eps = model(torch.cat([x, x]), torch.cat([cond, cond]), t.repeat(2 * b),
                        torch.cat([labels, null]))
        eps_c, eps_u = eps.float().chunk(2)
        eps = eps_u + guidance * (eps_c - eps_u)
        a_t = ac[t]
        a_prev = ac[ts[i + 1]] if i + 1 < steps else torch.ones((), device=device)
        pred_x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-1, 1)
        x = a_prev.sqrt() * pred_x0 + (1 - a_prev).sqrt() * eps
        if return_intermediates:
            inter["x_t"].append(x)
            inter["pred_x0"].append(pred_x0)
            inter["eps_cond"].append(eps_c)
            inter["eps_uncond"].append(eps_u)
    return x, inter


parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--steps", type=int, default=50)
parser.add_argument("--guidance", type=float, default=4.0)
parser.add_argument("--save-video", action="store_true", default=True)
parser.add_argument("--out", default="samples/sr1024")
args = parser.parse_args()

torch.manual_seed(0)
model = SRUNet().cuda().eval()
print(f"SR stage: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params, "
      f"256 -> 1024, guidance {args.guidance}, {args.steps} DDIM steps", flush=True)
os.makedirs(args.out, exist_ok=True)
low_res = torch.rand(args.batch_size, 3, 256, 256, device="cuda") * 2 - 1
labels = torch.randint(0, 1000, (args.batch_size,), device="cuda")
t0 = time.time()
images, inter = ddim_sample(model, low_res, labels, steps=args.steps, guidance=args.guidance,
                            return_intermediates=args.save_video)
print(f"sampled {images.shape[0]} images in {time.time() - t0:.1f} s", flush=True)
torch.save({"images": images.cpu(), **{k: torch.stack(v).cpu() for k, v in inter.items()}},
           f"{args.out}/batch0.pt")
''')


def s25_hf_logit_lens_probe():
    # run.sh's holder leaves 12 GiB. An interpretability script loads the bf16 checkpoint, runs 8
    # prompts of 2048 tokens with output_hidden_states=True under no_grad, then projects every
    # layer's hidden state through the final norm and lm_head and keeps each layer's fp32
    # log-softmax over the 32000-word vocabulary (2 GiB a layer) in a list to stack: it runs out
    # a few layers into the list.
    run_user_script("logit_lens", _WORD_TOKENIZER + '''
import argparse
import logging
import random

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
log = logging.getLogger("logit_lens")

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="@CKPT@")
parser.add_argument("--n-prompts", type=int, default=8)
parser.add_argument("--length", type=int, default=2048)
args = parser.parse_args()

tokenizer = word_tokenizer()
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, device_map="cuda")
model.eval()
log.info("loaded %s: %d layers, vocab %d", args.model, model.config.num_hidden_layers,
         model.config.vocab_size)
rng = random.Random(0)
prompts = [" ".join(f"w{rng.randint(3, 31999)}" for _ in range(args.length))
           for _ in range(args.n_prompts)]
enc = tokenizer(prompts, return_tensors="pt", truncation=True, max_length=args.length).to("cuda")
log.info("batch %s", tuple(enc["input_ids"].shape))
with torch.no_grad():
    out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                output_hidden_states=True)
    log.info("%d hidden states, final logits %s", len(out.hidden_states), tuple(out.logits.shape))
    lens = torch.stack([F.log_softmax(model.lm_head(model.model.norm(h)).float(), dim=-1)
                        for h in out.hidden_states])
    target = enc["input_ids"][:, 1:]
    nll = -lens[:, :, :-1].gather(-1, target[None, :, :, None].expand(lens.shape[0], -1, -1, 1))
    for layer, value in enumerate(nll.mean(dim=(1, 2, 3)).tolist()):
        log.info("layer %2d: next-token NLL %.3f", layer, value)
'''.replace("@CKPT@", CKPT))


def s25_dcp_resume_run():
    # run.sh's holder leaves 10 GiB. A training script (single-process NCCL group, 1.14B fp32
    # parameters built on the card, fused AdamW) resumes through torch.distributed.checkpoint:
    # get_state_dict(model, optimizer) first initialises the still-empty optimizer state with a
    # zero-gradient step (zero grads for every parameter, then AdamW's exp_avg / exp_avg_sq), and
    # that does not fit beside the other job before anything is read from the checkpoint.
    os.makedirs(os.path.join(WORK, "checkpoints", "step_00012000"), exist_ok=True)
    run_user_script("train_dcp", '''import argparse
import glob
import logging
import os
import time

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

logging.basicConfig(format="%(asctime)s [rank0] %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("train")
VOCAB, D, LAYERS, HEADS, SEQ = 32000, 2048, 20, 16, 2048


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device)
        return self.head(self.blocks(self.embed(ids), mask=mask, is_causal=True))


parser = argparse.ArgumentParser()
parser.add_argument("--ckpt-dir", default="checkpoints")
parser.add_argument("--batch-size", type=int, default=4)
parser.add_argument("--lr", type=float, default=2e-4)
args = parser.parse_args()

if not dist.is_initialized():
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29531", world_size=1, rank=0)
torch.cuda.set_device(0)
with torch.device("cuda"):
    model = LM()
log.info("model: %.2fB parameters", sum(p.numel() for p in model.parameters()) / 1e9)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1, fused=True)
step = 0
ckpts = sorted(glob.glob(os.path.join(args.ckpt_dir, "step_*")))
if ckpts:
    log.info("resuming from %s", ckpts[-1])
    t0 = time.time()
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=ckpts[-1])
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    step = int(ckpts[-1].rsplit("_", 1)[1])
    log.info("resumed at step %d in %.1f s", step, time.time() - t0)
g = torch.Generator().manual_seed(step)
while step < 200_000:
    ids = torch.randint(0, VOCAB, (args.batch_size, SEQ + 1), generator=g).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(ids[:, :-1]).float().flatten(0, 1), ids[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    step += 1
    if step % 100 == 0:
        log.info("step %d loss %.4f", step, loss.item())
    if step % 2000 == 0:
        model_sd, optim_sd = get_state_dict(model, optimizer)
        dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=f"{args.ckpt_dir}/step_{step:08d}")
dist.destroy_process_group()
''')


def s25_events_parquet_merge():
    # Not a GPU OOM: a data-preparation job (merge_events.sh, `ulimit -v 5242880`, 5 GiB of
    # address space) reads 6 Parquet shards of click events (96M rows, 2.6 GiB in memory) to
    # combine and sort them by user: under the limit Arrow's allocator fails while the shards are
    # still being read (seen on the H200 machine; combine_chunks() would need a second copy) and
    # pyarrow raises ArrowMemoryError. No GPU is touched.
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = 16_000_000
    rng = np.random.default_rng(0)
    columns = {
        "user_id": pa.array(rng.integers(0, 40_000_000, rows, dtype=np.int64)),
        "item_id": pa.array(rng.integers(0, 5_000_000, rows, dtype=np.int64)),
        "dwell_ms": pa.array(rng.integers(0, 600_000, rows, dtype=np.int32)),
        "clicked": pa.array(rng.random(rows) < 0.05),
    }
    for day in range(6):
        d = os.path.join(WORK, "data", "events", f"day=2026-11-{day + 21:02d}")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "part-00000.parquet")
        if os.path.exists(path):
            continue
        start = 1_795_000_000_000 + day * 86_400_000
        ts = pa.array(start + np.arange(rows, dtype=np.int64) * 5, pa.timestamp("ms"))
        table = pa.table({"user_id": columns["user_id"], "item_id": columns["item_id"], "ts": ts,
                          "dwell_ms": columns["dwell_ms"], "clicked": columns["clicked"]})
        pq.write_table(table, path, compression="snappy", use_dictionary=False,
                       row_group_size=2_000_000)
        del table, ts
    with open(os.path.join(WORK, "merge_events.py"), "w", encoding="utf-8") as fh:
        fh.write('''import glob
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

files = sorted(glob.glob("data/events/day=*/part-*.parquet"))
t0 = time.time()
table = pa.concat_tables([pq.read_table(f) for f in files])
print(f"read {len(files)} shards: {table.num_rows:,} rows, {table.nbytes / 2**30:.2f} GiB "
      f"in {time.time() - t0:.1f} s", flush=True)
table = table.combine_chunks()
order = pc.sort_indices(table, sort_keys=[("user_id", "ascending"), ("ts", "ascending")])
table = table.take(order)
pq.write_table(table, "data/events_by_user.parquet", row_group_size=1_000_000)
print(f"wrote data/events_by_user.parquet ({time.time() - t0:.1f} s)", flush=True)
''')
    with open(os.path.join(WORK, "merge_events.sh"), "w", encoding="utf-8") as fh:
        fh.write('''#!/bin/bash
# merge the daily click-event shards into one file sorted by user (job limit: 5 GiB of address space)
ulimit -c 0
ulimit -v 5242880
echo "[$(date -u +%FT%TZ)] merge_events: $(ls data/events/day=*/part-*.parquet | wc -l) shards"
python3 merge_events.py
status=$?
echo "[$(date -u +%FT%TZ)] merge_events.py exited with status $status"
exit $status
''')
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(WORK)
    os.execv("/bin/bash", ["bash", "merge_events.sh"])


def s25_embedding_feature_job():
    # Not a GPU OOM: a feature-extraction job runs in a memory cgroup of 4 GiB (as a container or
    # a batch job with a memory limit; made here under cgroup v2 and removed afterwards). It
    # encodes images with a ResNet-50 on the card and keeps every batch's un-pooled layer4 maps
    # (256 x 2048 x 7 x 7 fp32, 98 MiB) in a host list; the kernel's OOM killer kills python3,
    # bash reports "Killed", and the wrapper prints the kernel log's OOM lines.
    import subprocess

    group, enter_group = memory_cgroup(
        "s25_embedding_feature_job", f"features-job-{os.getpid()}", 4 * GIB)

    os.makedirs(os.path.join(WORK, "features"), exist_ok=True)
    with open(os.path.join(WORK, "extract_features.py"), "w", encoding="utf-8") as fh:
        fh.write('''import argparse
import time

import numpy as np
import torch
import torchvision
from torch.utils.data import DataLoader, Dataset


class Catalog(Dataset):
    """Product photos, already resized to 224 x 224 and normalised."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(3, 224, 224, generator=g)


parser = argparse.ArgumentParser()
parser.add_argument("--split", default="train")
parser.add_argument("--out", default="features/train.npy")
parser.add_argument("--batch-size", type=int, default=256)
args = parser.parse_args()

model = torchvision.models.resnet50(weights=None).cuda().eval()
backbone = torch.nn.Sequential(*list(model.children())[:-2])
loader = DataLoader(Catalog(120_000), batch_size=args.batch_size, num_workers=0)
print(f"{args.split}: {len(loader.dataset)} images, {len(loader)} batches on "
      f"{torch.cuda.get_device_name(0)}", flush=True)
feats, t0 = [], time.time()
with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
    for i, images in enumerate(loader):
        fmap = backbone(images.cuda(non_blocking=True))
        feats.append(fmap.float().cpu().numpy())
        if i % 5 == 0:
            held = sum(f.nbytes for f in feats) / 2**30
            print(f"batch {i}/{len(loader)}: {held:.2f} GiB of features ({time.time() - t0:.1f} s)",
                  flush=True)
np.save(args.out, np.concatenate(feats))
print(f"saved {args.out}")
''')
    with open(os.path.join(WORK, "run_features.sh"), "w", encoding="utf-8") as fh:
        fh.write('''#!/usr/bin/env bash
set -u
echo "[$(date -u +%FT%TZ)] extract_features: split=train (job $$)"
python3 extract_features.py --split train --out features/train.npy
status=$?
echo "[$(date -u +%FT%TZ)] extract_features.py exited with status $status"
if [ "$status" -ne 0 ]; then
  echo "---- kernel log ----"
  dmesg 2> /dev/null | grep -iE "oom|killed process" | tail -n 8
fi
exit $status
''')
    sys.stdout.flush()
    try:
        rc = subprocess.call(["bash", "run_features.sh"], cwd=WORK, preexec_fn=enter_group)
    finally:
        time.sleep(0.5)
        try:
            os.rmdir(group)
        except OSError:
            pass
    sys.exit(rc)


def s25_pyg_citation_gcn():
    # Not a GPU OOM: a two-layer GCN (torch_geometric) on a 50000-node citation graph whose edge
    # list was exported with 1-based node ids, so the largest id equals the node count: the
    # scatter / index kernels in GCNConv's normalisation and message passing index past the node
    # table, the device-side assertion fires, and the error surfaces at the next synchronising
    # call (no CUDA_LAUNCH_BLOCKING).
    import numpy as np

    d = os.path.join(WORK, "data", "citations")
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(3)
    n, m = 50_000, 400_000
    np.save(os.path.join(d, "features.npy"), rng.standard_normal((n, 128), dtype=np.float32))
    np.save(os.path.join(d, "labels.npy"), rng.integers(0, 40, n))
    src = rng.integers(1, n + 1, m)
    dst = rng.integers(1, n + 1, m)
    with open(os.path.join(d, "edges.csv"), "w") as fh:
        fh.write("citing_paper,cited_paper\n")
        fh.write("\n".join(f"{a},{b}" for a, b in zip(src.tolist(), dst.tolist())))
        fh.write("\n")
    run_user_script("train_gcn", '''import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.nn import GCNConv


class GCN(torch.nn.Module):
    def __init__(self, dim_in, hidden, n_classes):
        super().__init__()
        self.conv1 = GCNConv(dim_in, hidden)
        self.conv2 = GCNConv(hidden, n_classes)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.conv2(x, edge_index)


x = torch.from_numpy(np.load("data/citations/features.npy"))
y = torch.from_numpy(np.load("data/citations/labels.npy"))
edges = np.loadtxt("data/citations/edges.csv", delimiter=",", skiprows=1, dtype=np.int64)
edge_index = torch.from_numpy(edges.T.copy())
g = torch.Generator().manual_seed(0)
perm = torch.randperm(x.shape[0], generator=g)
train_mask = torch.zeros(x.shape[0], dtype=torch.bool)
train_mask[perm[:20_000]] = True
data = Data(x=x, edge_index=edge_index, y=y, train_mask=train_mask, val_mask=~train_mask)
print(data)
device = torch.device("cuda")
data = data.to(device)
model = GCN(data.num_features, 256, int(y.max()) + 1).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
t0 = time.time()
for epoch in range(1, 201):
    model.train()
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)
    loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
    loss.backward()
    optimizer.step()
    if epoch % 10 == 0:
        model.eval()
        with torch.no_grad():
            pred = model(data.x, data.edge_index).argmax(-1)
        acc = (pred[data.val_mask] == data.y[data.val_mask]).float().mean()
        print(f"Epoch: {epoch:03d}, Loss: {loss.item():.4f}, Val: {acc.item():.4f} ({time.time() - t0:.1f} s)")
''')


# --------------------------------------------------------------------------- session 26 (blind)
# Session 26's H200 batch (helper H26D): a checkpoint converter fusing QKV / gate-up into fp32 on
# the card, a log-likelihood eval harness scoring its longest requests first, a notebook-style
# LoRA fine-tune with gradient checkpointing, a Lightning MoCo run whose negative queue is never
# trimmed, a JAX sampler at full resolution, a torchrun job killed by a memory cgroup while it
# reads its token file, a CuPy histogram kernel whose int32 pixel index overflows, a service
# loading three fp32 models at startup, an accelerate fine-tune's first optimizer step, a ViT
# fine-tune whose own batch-size finder leaves no room for AdamW's state, a shard worker that logs
# only the exception, a JAX sweep harness that prints a summary table, and numba's context
# creation on a card another job holds.


def s26_hf_qkv_fuse_export():
    # run.sh's holder leaves 3 GiB. A conversion script reads every tensor of the bf16 Llama
    # checkpoint onto the card with safetensors' safe_open(device="cuda"), then builds the serving
    # engine's layout (fused wqkv and w13) in float32 while the bf16 originals stay in the dict:
    # a few layers in, the float32 copies no longer fit.
    run_user_script("convert_to_engine", '''"""Convert a Hugging Face Llama checkpoint to the engine's layout (fused QKV, fused gate/up).

The engine calibrates its fp8 scales from a float32 master copy, so everything is written as
float32.
"""
import argparse
import json
import os
import time

import torch
from safetensors import safe_open
from safetensors.torch import save_file

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--src", default="@CKPT@")
parser.add_argument("--dst", default="engine-ckpt")
parser.add_argument("--device", default="cuda")
parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
args = parser.parse_args()

with open(os.path.join(args.src, "config.json")) as fh:
    cfg = json.load(fh)
n_layers = cfg["num_hidden_layers"]
print(f"[convert] src={args.src}", flush=True)
print(f"[convert] llama: {n_layers} layers, hidden {cfg['hidden_size']}, heads "
      f"{cfg['num_attention_heads']}/{cfg['num_key_value_heads']}, vocab {cfg['vocab_size']}", flush=True)
print(f"[convert] target dtype={args.dtype} device={args.device}", flush=True)

t0 = time.time()
tensors = {}
for name in sorted(f for f in os.listdir(args.src) if f.endswith(".safetensors")):
    with safe_open(os.path.join(args.src, name), framework="pt", device=args.device) as fh:
        for key in fh.keys():
            tensors[key] = fh.get_tensor(key)
size = sum(t.numel() * t.element_size() for t in tensors.values())
print(f"[convert] read {len(tensors)} tensors ({size / 2**30:.2f} GiB) in {time.time() - t0:.1f} s", flush=True)

dtype = getattr(torch, args.dtype)
out = {"tok_embeddings.weight": tensors["model.embed_tokens.weight"].to(dtype)}
for i in range(n_layers):
    p = f"model.layers.{i}."
    q = tensors[p + "self_attn.q_proj.weight"]
    k = tensors[p + "self_attn.k_proj.weight"]
    v = tensors[p + "self_attn.v_proj.weight"]
    out[f"layers.{i}.attention.wqkv.weight"] = torch.cat([q, k, v], dim=0).to(dtype)
    out[f"layers.{i}.attention.wo.weight"] = tensors[p + "self_attn.o_proj.weight"].to(dtype)
    gate = tensors[p + "mlp.gate_proj.weight"]
    up = tensors[p + "mlp.up_proj.weight"]
    out[f"layers.{i}.feed_forward.w13.weight"] = torch.cat([gate, up], dim=0).to(dtype)
    out[f"layers.{i}.feed_forward.w2.weight"] = tensors[p + "mlp.down_proj.weight"].to(dtype)
    out[f"layers.{i}.attention_norm.weight"] = tensors[p + "input_layernorm.weight"].to(dtype)
    out[f"layers.{i}.ffn_norm.weight"] = tensors[p + "post_attention_layernorm.weight"].to(dtype)
    print(f"[convert] layer {i + 1}/{n_layers} fused "
          f"({torch.cuda.memory_allocated() / 2**30:.2f} GiB on {args.device})", flush=True)
out["norm.weight"] = tensors["model.norm.weight"].to(dtype)
out["output.weight"] = tensors["lm_head.weight"].to(dtype)
os.makedirs(args.dst, exist_ok=True)
save_file({k: v.contiguous().cpu() for k, v in out.items()}, os.path.join(args.dst, "model.safetensors"))
print(f"[convert] wrote {args.dst}/model.safetensors in {time.time() - t0:.1f} s")
'''.replace("@CKPT@", CKPT))


def s26_hf_loglik_harness():
    # run.sh's holder leaves 8 GiB. A log-likelihood evaluation harness (multiple-choice tasks
    # scored by summing the continuation's token log-probabilities) sorts its requests longest
    # first, as such harnesses do, and scores them in batches of 32: the first batch's logits of
    # 32 x 2048 x 32000 in bf16 fit, their float32 log_softmax does not.
    run_user_script("eval_loglik", _WORD_TOKENIZER + '''
import argparse
import random
import time

import torch
import torch.nn.functional as F
from tqdm import tqdm
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="@CKPT@")
parser.add_argument("--tasks", default="piqa_synth,arc_synth,hella_synth")
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--max-length", type=int, default=2048)
args = parser.parse_args()

tokenizer = word_tokenizer()
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, device_map="cuda")
model.eval()
print(f"model: {args.model} ({sum(p.numel() for p in model.parameters()) / 1e6:.0f}M params, bf16)")

rng = random.Random(1234)
requests = []
for task in args.tasks.split(","):
    n_docs = 150
    for doc in range(n_docs):
        ctx_len = rng.randint(64, args.max_length - 16)
        context = " ".join(f"w{rng.randint(3, 31999)}" for _ in range(ctx_len))
        for choice in range(4):
            cont = " ".join(f"w{rng.randint(3, 31999)}" for _ in range(rng.randint(2, 12)))
            requests.append((task, doc, choice, context, cont))
    print(f"Task: {task}; number of docs: {n_docs}; number of requests: {n_docs * 4}")

encoded = []
for task, doc, choice, context, cont in requests:
    ctx_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
    cont_ids = tokenizer(cont, add_special_tokens=False)["input_ids"]
    ids = (ctx_ids + cont_ids)[-args.max_length:]
    encoded.append((task, doc, choice, ids, len(cont_ids)))
encoded.sort(key=lambda r: -len(r[3]))
print(f"Running loglikelihood requests ({len(encoded)} total, longest {len(encoded[0][3])} tokens)")

results = []
start = time.time()
with torch.no_grad():
    for i in tqdm(range(0, len(encoded), args.batch_size), desc="Running loglikelihood requests"):
        chunk = encoded[i:i + args.batch_size]
        width = max(len(r[3]) for r in chunk)
        batch = torch.zeros(len(chunk), width, dtype=torch.long)
        for row, r in enumerate(chunk):
            batch[row, :len(r[3])] = torch.tensor(r[3])
        batch = batch.cuda()
        logits = model(batch).logits
        logprobs = F.log_softmax(logits.float(), dim=-1)
        for row, (task, doc, choice, ids, n_cont) in enumerate(chunk):
            n = len(ids)
            target = batch[row, n - n_cont:n]
            lp = logprobs[row, n - n_cont - 1:n - 1].gather(-1, target[:, None]).sum().item()
            results.append((task, doc, choice, lp))
print(f"scored {len(results)} requests in {time.time() - start:.1f} s")
'''.replace("@CKPT@", CKPT))


def s26_peft_notebook_lora_backward():
    # run.sh's holder leaves 15 GiB. A notebook exported as a script (cells printing as they go)
    # fine-tunes the bf16 checkpoint with LoRA on all linear layers, gradient checkpointing on,
    # 8 x 4096-token sequences: the forward fits, the backward of the float32 loss over the
    # 32000-word vocabulary is planned to run out.
    run_user_script("lora_finetune_notebook", '''# Exported from lora_finetune.ipynb
# %% [markdown]
# # LoRA fine-tune on the support-ticket corpus (long context)

# %%
import math
import time

import torch
from peft import LoraConfig, get_peft_model
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM

MODEL = "@CKPT@"
SEQ_LEN, BATCH, STEPS, LR = 4096, 8, 300, 2e-4
print(torch.__version__, torch.cuda.get_device_name(0))

# %%
model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.bfloat16, device_map={"": 0})
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
model.config.use_cache = False
config = LoraConfig(r=64, lora_alpha=128, lora_dropout=0.05, target_modules="all-linear",
                    task_type="CAUSAL_LM")
model = get_peft_model(model, config)
model.print_trainable_parameters()

# %%
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LR)
g = torch.Generator().manual_seed(0)


def get_batch():
    ids = torch.randint(3, 32000, (BATCH, SEQ_LEN), generator=g)
    return ids.cuda(), torch.ones(BATCH, SEQ_LEN, dtype=torch.long, device="cuda")


print(f"memory after setup: {torch.cuda.memory_allocated() / 2**30:.2f} GiB allocated")

# %%
model.train()
bar = tqdm(range(STEPS), desc="lora")
t0 = time.time()
for step in bar:
    input_ids, attention_mask = get_batch()
    out = model(input_ids=input_ids, attention_mask=attention_mask, labels=input_ids)
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    bar.set_postfix(loss=f"{out.loss.item():.3f}", ppl=f"{math.exp(min(out.loss.item(), 20)):.1f}")
print(f"done in {time.time() - t0:.0f} s")
'''.replace("@CKPT@", CKPT))


def s26_lightning_moco_queue_growth():
    # run.sh's holder leaves 6 GiB. A Lightning MoCo-style contrastive run over precomputed
    # 512-d features (batch 8192) concatenates each step's keys onto its negative queue but never
    # trims it, so the q @ queue.T logits grow by 256 MiB a step: a few steps into epoch 0 the
    # training step's forward/backward runs out, under Lightning's progress bar.
    run_user_script("train_moco_features", '''import copy

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class MoCo(L.LightningModule):
    def __init__(self, dim_in=512, dim=128, queue_size=8192, momentum=0.999, temperature=0.07,
                 lr=0.03):
        super().__init__()
        self.save_hyperparameters()
        self.encoder_q = nn.Sequential(nn.Linear(dim_in, 2048), nn.BatchNorm1d(2048), nn.ReLU(),
                                       nn.Linear(2048, dim))
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(queue_size, dim), dim=1))

    @torch.no_grad()
    def _momentum_update(self):
        m = self.hparams.momentum
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.mul_(m).add_(pq.detach(), alpha=1 - m)

    def training_step(self, batch, batch_idx):
        (x,) = batch
        view1 = x + 0.1 * torch.randn_like(x)
        view2 = x + 0.1 * torch.randn_like(x)
        q = F.normalize(self.encoder_q(view1), dim=1)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(view2), dim=1)
        l_pos = (q * k).sum(dim=1, keepdim=True)
        l_neg = q @ self.queue.T
        logits = torch.cat([l_pos, l_neg], dim=1) / self.hparams.temperature
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=self.device)
        loss = F.cross_entropy(logits, labels)
        self.queue = torch.cat([self.queue, k], dim=0)  # enqueue
        self.log("train/loss", loss, prog_bar=True)
        self.log("queue", float(self.queue.shape[0]), prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.encoder_q.parameters(), lr=self.hparams.lr, momentum=0.9,
                               weight_decay=1e-4)


if __name__ == "__main__":
    L.seed_everything(7)
    features = torch.randn(200_000, 512)
    loader = DataLoader(TensorDataset(features), batch_size=8192, shuffle=True, drop_last=True)
    trainer = L.Trainer(max_epochs=100, accelerator="gpu", devices=1, log_every_n_steps=5,
                        enable_checkpointing=False, logger=False)
    trainer.fit(MoCo(), loader)
''')


def s26_jax_score_sampler():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (about 7 GiB). A pure-JAX score-based sampler (a small
    # convolutional score network, Euler-Maruyama steps in lax.fori_loop, jitted) is asked for 64
    # samples at 512 x 512: one 128-channel activation alone is 8 GiB, and the jitted sampler's
    # first call fails with RESOURCE_EXHAUSTED.
    run_user_script("sample_sde", '''import argparse
import logging
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

logging.basicConfig(format="%(asctime)s %(levelname)s [sample_sde] %(message)s", level=logging.INFO)
log = logging.getLogger("sample_sde")


def conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def init_params(key, channels=128, depth=4):
    params = []
    cin = 4  # image + noise-level channel
    for i in range(depth):
        key, sub = jax.random.split(key)
        params.append(jax.random.normal(sub, (3, 3, cin, channels)) * (2 / (9 * cin)) ** 0.5)
        cin = channels
    key, sub = jax.random.split(key)
    params.append(jax.random.normal(sub, (3, 3, channels, 3)) * 1e-3)
    return params


def score_fn(params, x, sigma):
    h = jnp.concatenate([x, jnp.broadcast_to(jnp.log(sigma), x.shape[:3] + (1,))], axis=-1)
    for w in params[:-1]:
        h = jax.nn.silu(conv(h, w))
    return conv(h, params[-1]) / sigma


@partial(jax.jit, static_argnames=("steps",))
def sample(params, key, x_init, steps=500, sigma_min=0.01, sigma_max=50.0):
    def body(i, carry):
        x, key = carry
        t = 1.0 - i / steps
        sigma = sigma_min * (sigma_max / sigma_min) ** t
        g2 = sigma ** 2 * 2 * jnp.log(sigma_max / sigma_min)
        key, sub = jax.random.split(key)
        x = x + g2 * score_fn(params, x, sigma) / steps
        x = x + jnp.sqrt(g2 / steps) * jax.random.normal(sub, x.shape)
        return x, key

    x, _ = jax.lax.fori_loop(0, steps, body, (x_init, key))
    return x


parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=64)
parser.add_argument("--size", type=int, default=512)
parser.add_argument("--steps", type=int, default=500)
args = parser.parse_args()

log.info("devices: %s", jax.devices())
key = jax.random.PRNGKey(0)
params = init_params(key)
log.info("score net: %d conv layers, %d parameters", len(params),
         sum(int(np.prod(p.shape)) for p in params))
x_init = 50.0 * jax.random.normal(jax.random.PRNGKey(1), (args.n, args.size, args.size, 3))
log.info("sampling %d images at %dx%d, %d steps", args.n, args.size, args.size, args.steps)
t0 = time.time()
images = sample(params, jax.random.PRNGKey(2), x_init, steps=args.steps)
images.block_until_ready()
log.info("done in %.1f s", time.time() - t0)
np.save("samples.npy", np.asarray(images))
''')


def s26_host_torchrun_tokens_cgroup():
    # Not a GPU OOM: a pretraining job runs in a memory cgroup of 4 GiB (a container's limit;
    # made here under cgroup v2 and removed afterwards) and is started through torchrun
    # (--standalone, one process). Rank 0 reads its 8 GiB uint16 token file with np.load (not
    # mmap) before building the model: the kernel's OOM killer sends SIGKILL to the worker and
    # torchrun reports the child's exit code -9.
    import subprocess

    import numpy as np

    group, enter_group = memory_cgroup(
        "s26_host_torchrun_tokens_cgroup", f"pretrain-job-{os.getpid()}", 4 * GIB)
    data = os.path.join(WORK, "data")
    os.makedirs(data, exist_ok=True)
    path = os.path.join(data, "tokens_train.npy")
    if not os.path.exists(path):
        # a sparse file: only the header is written, the 8 GiB of tokens read back as zeros
        np.lib.format.open_memmap(path, mode="w+", dtype=np.uint16, shape=(4 * GIB,)).flush()
    with open(os.path.join(WORK, "pretrain.py"), "w", encoding="utf-8") as fh:
        fh.write('''import argparse
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn


def log(msg):
    print(f"[rank{os.environ.get('RANK', '0')}] {time.strftime('%H:%M:%S')} {msg}", flush=True)


parser = argparse.ArgumentParser()
parser.add_argument("--data", default="data/tokens_train.npy")
parser.add_argument("--seq-len", type=int, default=2048)
parser.add_argument("--batch-size", type=int, default=8)
args = parser.parse_args()

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
log(f"world size {dist.get_world_size()}, device {torch.cuda.get_device_name(local_rank)}")
t0 = time.time()
log(f"loading {args.data} ({os.path.getsize(args.data) / 2**30:.1f} GiB)")
tokens = np.load(args.data)
log(f"{tokens.size:,} tokens in {time.time() - t0:.1f} s")
model = nn.Transformer(d_model=1024, nhead=16, num_encoder_layers=12, batch_first=True).cuda()
model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
log("model ready")
''')
    with open(os.path.join(WORK, "launch_pretrain.sh"), "w", encoding="utf-8") as fh:
        fh.write('''#!/usr/bin/env bash
set -u
echo "[$(date -u +%FT%TZ)] launch_pretrain: 1 node x 1 GPU"
python3 -m torch.distributed.run --standalone --nnodes=1 --nproc_per_node=1 pretrain.py \\
  --data data/tokens_train.npy --seq-len 2048 --batch-size 8
status=$?
echo "[$(date -u +%FT%TZ)] torchrun exited with status $status"
exit $status
''')
    sys.stdout.flush()
    try:
        rc = subprocess.call(["bash", "launch_pretrain.sh"], cwd=WORK, preexec_fn=enter_group)
    finally:
        time.sleep(0.5)
        try:
            os.rmdir(group)
        except OSError:
            pass
    sys.exit(rc)


def s26_cupy_mosaic_hist_int32_illegal():
    # Not an OOM: a CuPy RawKernel builds the histogram of a 60000 x 60000 8-bit orthomosaic
    # from per-row start offsets computed with numpy in int32 (y * width wraps silently past row
    # 35791 to negative offsets): the kernel reads up to 2 GiB before the image, and the next
    # synchronising call reports an illegal memory access.
    run_user_script("mosaic_equalize", '''import sys
import time

import cupy as cp
import numpy as np

HIST = cp.RawKernel(r"""
extern "C" __global__
void hist_u8(const unsigned char* img, const int* row_offset, int width, int height,
             unsigned int* hist) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= width || y >= height) return;
    atomicAdd(&hist[img[row_offset[y] + x]], 1u);
}
""", "hist_u8")


def equalize_lut(img):
    h, w = img.shape
    # start of each row in the flat image, computed once per mosaic size
    row_offset = cp.asarray(np.arange(h, dtype=np.int32) * np.int32(w))
    hist = cp.zeros(256, dtype=cp.uint32)
    threads = 256
    HIST(((w + threads - 1) // threads, h), (threads,),
         (img, row_offset, np.int32(w), np.int32(h), hist))
    cdf = cp.cumsum(hist.astype(cp.float64))
    cdf = (cdf - cdf[0]) / (cdf[-1] - cdf[0])
    return (cdf * 255).astype(cp.uint8)


name = sys.argv[1] if len(sys.argv) > 1 else "mosaic_2026-11-30_red.tif"
t0 = time.time()
height, width = 60000, 60000
print(f"{name}: {width} x {height} px, uint8 ({width * height / 2**30:.2f} GiB)", flush=True)
img = cp.zeros((height, width), dtype=cp.uint8)
img += cp.arange(width, dtype=cp.uint16).astype(cp.uint8)[None, :]
print(f"decoded to the device in {time.time() - t0:.1f} s; computing histogram", flush=True)
lut = equalize_lut(img)
print("LUT:", cp.asnumpy(lut[:8]), "...", flush=True)
out = lut[img]
print(f"equalized in {time.time() - t0:.1f} s", flush=True)
''')


def s26_hf_service_startup_models():
    # run.sh's holder leaves 5 GiB. An inference service's startup loads its three models onto the
    # card in float32 as its config says (a generator, a safety classifier and a query rewriter,
    # all from the same base checkpoint here): the first fits, the next one runs out while its
    # weights are loaded. Timestamped logs, then the unhandled traceback.
    run_user_script("serve_app", '''import logging
import os
import sys
import time

import torch
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

logging.basicConfig(format="%(asctime)s | %(levelname)-7s | %(name)s | %(message)s",
                    level=logging.INFO, stream=sys.stdout)
log = logging.getLogger("app.startup")

BASE = "@CKPT@"
CONFIG = {
    "generator": {"path": BASE, "kind": "causal-lm", "dtype": "float32"},
    "safety": {"path": BASE, "kind": "classifier", "dtype": "float32", "num_labels": 3},
    "rewriter": {"path": BASE, "kind": "causal-lm", "dtype": "float32"},
}
MODELS = {}


def load(name, spec):
    t0 = time.time()
    dtype = getattr(torch, spec["dtype"])
    log.info("loading %s from %s (%s, %s) on cuda:0", name, spec["path"], spec["kind"], spec["dtype"])
    if spec["kind"] == "classifier":
        model = AutoModelForSequenceClassification.from_pretrained(
            spec["path"], num_labels=spec["num_labels"], dtype=dtype, device_map="cuda:0")
    else:
        model = AutoModelForCausalLM.from_pretrained(spec["path"], dtype=dtype, device_map="cuda:0")
    model.eval()
    log.info("%s ready in %.1f s (%.2f GiB allocated on cuda:0)", name, time.time() - t0,
             torch.cuda.memory_allocated() / 2**30)
    return model


def startup():
    log.info("starting worker pid=%d, torch %s, %s", os.getpid(), torch.__version__,
             torch.cuda.get_device_name(0))
    for name, spec in CONFIG.items():
        MODELS[name] = load(name, spec)
    log.info("all %d models loaded; listening on 0.0.0.0:8080", len(MODELS))


if __name__ == "__main__":
    startup()
'''.replace("@CKPT@", CKPT))


def s26_accelerate_first_optimizer_step():
    # run.sh's holder leaves 9 GiB. A full fine-tune under accelerate (mixed_precision="bf16",
    # float32 weights, torch AdamW): the first forward and backward fit beside the other job,
    # then optimizer.step() creates AdamW's two float32 states for 0.55B parameters and its
    # foreach temporaries, and that does not fit.
    run_user_script("finetune_accelerate", '''import argparse
import math

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, Dataset
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM, get_cosine_schedule_with_warmup


class Chunks(Dataset):
    def __init__(self, n, seq, seed=0):
        self.n, self.seq, self.seed = n, seq, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 7919 + i)
        return torch.randint(3, 32000, (self.seq,), generator=g)


parser = argparse.ArgumentParser()
parser.add_argument("--model", default="@CKPT@")
parser.add_argument("--seq-len", type=int, default=1024)
parser.add_argument("--batch-size", type=int, default=2)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--lr", type=float, default=1e-5)
args = parser.parse_args()

accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=1)
set_seed(17)
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
loader = DataLoader(Chunks(20_000, args.seq_len), batch_size=args.batch_size, shuffle=True)
scheduler = get_cosine_schedule_with_warmup(optimizer, 100, args.epochs * len(loader))
model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
accelerator.print(f"params {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M, "
                  f"mixed precision {accelerator.mixed_precision}, {len(loader)} steps/epoch")
bar = tqdm(total=args.epochs * len(loader), disable=not accelerator.is_local_main_process)
for epoch in range(args.epochs):
    model.train()
    for ids in loader:
        with accelerator.accumulate(model):
            logits = model(input_ids=ids).logits
            loss = F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())
            accelerator.backward(loss)
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        bar.update(1)
        bar.set_postfix(epoch=epoch, loss=f"{loss.item():.3f}", ppl=f"{math.exp(loss.item()):.0f}")
'''.replace("@CKPT@", CKPT))


def s26_vit_autobatch_then_adamw():
    # run.sh's holder leaves 16 GiB. A ViT-L/16 fine-tuning CLI picks its batch size with its own
    # finder (forward + backward probes, doubling then bisecting, OOMs caught), before AdamW
    # exists: step 1 trains at the found size, optimizer.step() then adds 2.4 GB of AdamW state
    # that the probes never held, and step 2 runs out of memory.
    run_user_script("vitft", '''import argparse
import time

import torch
import torch.nn.functional as F
import torchvision

VERSION = "0.4.1"


def probe(model, bs, size):
    x = torch.randn(bs, 3, size, size, device="cuda")
    y = torch.randint(0, 1000, (bs,), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    model.zero_grad(set_to_none=True)


def fits(model, bs, size):
    torch.cuda.reset_peak_memory_stats()
    try:
        probe(model, bs, size)
        ok = True
    except torch.OutOfMemoryError:
        ok = False
    peak = torch.cuda.max_memory_allocated() / 2**30
    torch.cuda.empty_cache()
    print(f"  auto-batch: bs={bs:<4d} {'ok ' if ok else 'OOM'} (peak {peak:.1f} GiB)", flush=True)
    return ok


def find_batch_size(model, size, start=8, limit=1024):
    lo, hi = 0, None
    bs = start
    while bs <= limit:
        if fits(model, bs, size):
            lo, bs = bs, bs * 2
        else:
            hi = bs
            break
    if hi is None:
        return lo
    while hi - lo > 4:
        mid = (lo + hi) // 2
        if fits(model, mid, size):
            lo = mid
        else:
            hi = mid
    return lo


parser = argparse.ArgumentParser(prog="vitft", description="fine-tune a ViT on an image folder")
parser.add_argument("--arch", default="vit_l_16")
parser.add_argument("--image-size", type=int, default=224)
parser.add_argument("--batch-size", default="auto")
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--lr", type=float, default=5e-5)
args = parser.parse_args()

print("=" * 56)
print(f" vitft {VERSION} | {args.arch} @ {args.image_size}px | torch {torch.__version__}")
print(f" device: {torch.cuda.get_device_name(0)}")
print("=" * 56, flush=True)
model = getattr(torchvision.models, args.arch)(weights=None).cuda()
model.train()
print(f"model: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params", flush=True)
if args.batch_size == "auto":
    print("auto-batch: probing forward+backward ...", flush=True)
    batch_size = find_batch_size(model, args.image_size)
    print(f"auto-batch: using batch size {batch_size}", flush=True)
else:
    batch_size = int(args.batch_size)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
steps_per_epoch = 1_281_167 // batch_size
t0 = time.time()
for epoch in range(args.epochs):
    for step in range(steps_per_epoch):
        x = torch.randn(batch_size, 3, args.image_size, args.image_size, device="cuda")
        y = torch.randint(0, 1000, (batch_size,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"epoch {epoch + 1}/{args.epochs} step {step + 1}/{steps_per_epoch} "
              f"loss {loss.item():.4f} ({time.time() - t0:.1f} s)", flush=True)
''')


def s26_shard_worker_logged_error():
    # run.sh's holder leaves 6 GiB. A batch worker processes document shards with a transformer
    # encoder on the card; its error handler logs only "shard N failed: <type>: <message>", goes
    # on with the next shards (which fail the same way) and exits 1 with a count. Nothing in the
    # text shows which operation ran out.
    run_user_script("shard_worker", '''import logging
import sys
import time

import torch
import torch.nn as nn

logging.basicConfig(format="[%(asctime)s] %(processName)s %(levelname)s %(message)s",
                    level=logging.INFO, stream=sys.stdout)
log = logging.getLogger("worker")


class Encoder(nn.Module):
    def __init__(self, vocab=50000, d=1024, layers=12, heads=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, ids):
        return self.encoder(self.embed(ids)).mean(dim=1)


def process_shard(model, shard_id, n_docs=256, doc_len=4096):
    g = torch.Generator().manual_seed(shard_id)
    ids = torch.randint(0, 50000, (n_docs, doc_len), generator=g).cuda()
    with torch.no_grad():
        vectors = model(ids)
    return vectors.cpu()


def main():
    model = Encoder().cuda().eval()
    shards = [17, 18, 19, 20]
    log.info("worker up: %d shards queued", len(shards))
    failed = 0
    for shard in shards:
        t0 = time.time()
        try:
            out = process_shard(model, shard)
            log.info("shard %d done: %s in %.1f s", shard, tuple(out.shape), time.time() - t0)
        except Exception as e:
            failed += 1
            log.error("shard %d failed: %s: %s", shard, type(e).__name__, e)
    if failed:
        log.error("%d of %d shards failed", failed, len(shards))
        sys.exit(1)


if __name__ == "__main__":
    main()
''')


def s26_jax_sweep_summary_table():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (about 7 GiB). A hyperparameter sweep harness trains a
    # JAX MLP per trial in one process, catches each trial's exception and keeps only its first
    # line; at the end it prints a results table and exits with "1 of 5 trials failed". The
    # failed trial's row shows RESOURCE_EXHAUSTED and nothing about where.
    run_user_script("sweep", '''import itertools
import time

import jax
import jax.numpy as jnp
import numpy as np

TRIALS = [
    {"width": 1024, "depth": 4, "batch": 512, "lr": 1e-3},
    {"width": 2048, "depth": 4, "batch": 2048, "lr": 1e-3},
    {"width": 4096, "depth": 6, "batch": 4096, "lr": 3e-4},
    {"width": 8192, "depth": 8, "batch": 65536, "lr": 3e-4},
    {"width": 1024, "depth": 8, "batch": 1024, "lr": 3e-3},
]


def init(key, width, depth, d_in=256, d_out=10):
    sizes = [d_in] + [width] * depth + [d_out]
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (a, b)) * (2 / a) ** 0.5, jnp.zeros(b)))
    return params


def loss_fn(params, x, y):
    for w, b in params[:-1]:
        x = jax.nn.gelu(x @ w + b)
    w, b = params[-1]
    logits = x @ w + b
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


def run_trial(cfg, steps=20):
    key = jax.random.PRNGKey(0)
    params = init(key, cfg["width"], cfg["depth"])

    @jax.jit
    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - cfg["lr"] * g, params, grads), loss

    rng = np.random.default_rng(0)
    for _ in range(steps):
        x = jnp.asarray(rng.standard_normal((cfg["batch"], 256), dtype=np.float32))
        y = jnp.asarray(rng.integers(0, 10, cfg["batch"]))
        params, loss = step(params, x, y)
    return float(loss)


results = []
for i, cfg in enumerate(TRIALS):
    t0 = time.time()
    try:
        loss = run_trial(cfg)
        results.append((i, cfg, "ok", f"{loss:.4f}", time.time() - t0))
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else ""
        results.append((i, cfg, "FAILED", f"{type(e).__name__}: {first}", time.time() - t0))

print(f"{'trial':>5}  {'width':>6}  {'depth':>5}  {'batch':>6}  {'lr':>7}  {'time':>6}  status  result")
for i, cfg, status, result, secs in results:
    print(f"{i:>5}  {cfg['width']:>6}  {cfg['depth']:>5}  {cfg['batch']:>6}  {cfg['lr']:>7.0e}  "
          f"{secs:>5.1f}s  {status:<6}  {result}")
n_failed = sum(r[2] != "ok" for r in results)
if n_failed:
    raise SystemExit(f"{n_failed} of {len(results)} trials failed")
''')


def s26_numba_context_card_held():
    # run.sh's holder takes every byte of the card. A numba.cuda particle simulation starts while
    # another job holds the whole card: creating numba's CUDA context fails before any of the
    # simulation's arrays exist.
    run_user_script("sph_sim", '''import math
import sys
import time

import numpy as np
from numba import cuda


@cuda.jit
def density(pos, mass, h, rho):
    i = cuda.grid(1)
    if i >= pos.shape[0]:
        return
    acc = 0.0
    for j in range(pos.shape[0]):
        dx = pos[i, 0] - pos[j, 0]
        dy = pos[i, 1] - pos[j, 1]
        dz = pos[i, 2] - pos[j, 2]
        r2 = dx * dx + dy * dy + dz * dz
        q = math.sqrt(r2) / h
        if q < 1.0:
            acc += mass[j] * (1.0 - q) ** 3
    rho[i] = acc


n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
print(f"sph: {n} particles, numba {__import__('numba').__version__}", flush=True)
rng = np.random.default_rng(0)
pos = rng.random((n, 3), dtype=np.float32)
mass = np.full(n, 1.0 / n, dtype=np.float32)
t0 = time.time()
d_pos = cuda.to_device(pos)
d_mass = cuda.to_device(mass)
d_rho = cuda.device_array(n, dtype=np.float32)
threads = 256
density[(n + threads - 1) // threads, threads](d_pos, d_mass, np.float32(0.02), d_rho)
rho = d_rho.copy_to_host()
print(f"density: mean {rho.mean():.3e} in {time.time() - t0:.1f} s")
''')


# --------------------------------------------------------------------------- session 26 b (H26E)


def s26b_unet_cfg_sampler():
    # run.sh's holder leaves 6 GiB. A hand-written latent-diffusion sampler (a small UNet with
    # spatial self-attention written out as q @ k^T, fp16, inference_mode) draws 8 images at
    # 1024 x 1024 (128 x 128 latents) with classifier-free guidance: the conditional and
    # unconditional halves go through the UNet as one batch of 16, and the first step's
    # attention over the 64 x 64 = 4096 tokens of the middle resolution (16 x 8 heads x 4096^2
    # scores, 4 GiB in fp16) plus its softmax do not fit.
    run_user_script("sample_cfg", r'''import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.emb = nn.Linear(temb, cout)
        self.norm2 = nn.GroupNorm(32, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb(emb)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class SpatialAttention(nn.Module):
    def __init__(self, ch, heads=8):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(32, ch)
        self.qkv = nn.Linear(ch, 3 * ch)
        self.proj = nn.Linear(ch, ch)

    def forward(self, x):
        b, c, h, w = x.shape
        tokens = self.norm(x).flatten(2).transpose(1, 2)
        q, k, v = self.qkv(tokens).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, h * w, self.heads, c // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) * (c // self.heads) ** -0.5
        attn = scores.softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, h * w, c)
        return x + self.proj(out).transpose(1, 2).reshape(b, c, h, w)


class UNet(nn.Module):
    def __init__(self, ch=320, cond_dim=768, temb=1280):
        super().__init__()
        self.temb = nn.Sequential(nn.Linear(ch, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.cond = nn.Linear(cond_dim, temb)
        self.conv_in = nn.Conv2d(4, ch, 3, padding=1)
        self.down1 = ResBlock(ch, ch, temb)
        self.pool1 = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.down2 = ResBlock(ch, 2 * ch, temb)
        self.attn2 = SpatialAttention(2 * ch)
        self.pool2 = nn.Conv2d(2 * ch, 2 * ch, 3, stride=2, padding=1)
        self.mid = ResBlock(2 * ch, 4 * ch, temb)
        self.mid_attn = SpatialAttention(4 * ch)
        self.up2 = ResBlock(4 * ch + 2 * ch, 2 * ch, temb)
        self.up_attn2 = SpatialAttention(2 * ch)
        self.up1 = ResBlock(2 * ch + ch, ch, temb)
        self.conv_out = nn.Sequential(nn.GroupNorm(32, ch), nn.SiLU(), nn.Conv2d(ch, 4, 3, padding=1))
        self.ch = ch

    def forward(self, x, t, cond):
        emb = self.temb(timestep_embedding(t, self.ch).to(x.dtype)) + self.cond(cond)
        h0 = self.down1(self.conv_in(x), emb)
        h1 = self.attn2(self.down2(self.pool1(h0), emb))
        h = self.mid_attn(self.mid(self.pool2(h1), emb))
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        h = self.up_attn2(self.up2(torch.cat([h, h1], dim=1), emb))
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        h = self.up1(torch.cat([h, h0], dim=1), emb)
        return self.conv_out(h)


parser = argparse.ArgumentParser(description="sample images with classifier-free guidance")
parser.add_argument("--prompts", default="prompts/showcase.txt")
parser.add_argument("--n", type=int, default=8)
parser.add_argument("--height", type=int, default=1024)
parser.add_argument("--width", type=int, default=1024)
parser.add_argument("--steps", type=int, default=50)
parser.add_argument("--guidance-scale", type=float, default=7.5)
parser.add_argument("--seed", type=int, default=42)
args = parser.parse_args()

device = "cuda"
torch.manual_seed(args.seed)
unet = UNet().to(device, torch.float16).eval()
text_encoder = nn.Embedding(49408, 768).to(device, torch.float16)
print(f"unet: {sum(p.numel() for p in unet.parameters()) / 1e6:.1f}M params (fp16)")
prompt_ids = torch.randint(0, 49408, (args.n, 77), device=device)
null_ids = torch.zeros_like(prompt_ids)

betas = torch.linspace(0.00085 ** 0.5, 0.012 ** 0.5, 1000, device=device) ** 2
alphas_cumprod = torch.cumprod(1 - betas, dim=0)
timesteps = torch.linspace(999, 0, args.steps, device=device).long()

latents = torch.randn(args.n, 4, args.height // 8, args.width // 8, device=device, dtype=torch.float16)
print(f"sampling {args.n} images at {args.width}x{args.height} "
      f"(latents {tuple(latents.shape)}), {args.steps} DDIM steps, guidance {args.guidance_scale}")
t0 = time.time()
with torch.inference_mode():
    cond = text_encoder(prompt_ids).mean(dim=1)
    uncond = text_encoder(null_ids).mean(dim=1)
    for i, t in enumerate(tqdm(timesteps, desc="sampling")):
        latent_in = torch.cat([latents, latents])
        tt = t.expand(latent_in.shape[0])
        eps = unet(latent_in, tt, torch.cat([uncond, cond]))
        eps_uncond, eps_cond = eps.chunk(2)
        eps = eps_uncond + args.guidance_scale * (eps_cond - eps_uncond)
        a_t = alphas_cumprod[t]
        a_prev = alphas_cumprod[timesteps[i + 1]] if i + 1 < len(timesteps) else torch.tensor(1.0, device=device)
        x0 = (latents - (1 - a_t).sqrt() * eps) / a_t.sqrt()
        latents = (a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps).half()
print(f"done in {time.time() - t0:.1f} s")
torch.save(latents.cpu(), "latents.pt")
''')


def s26b_graph_capture_decode_server():
    # run.sh's holder leaves 6 GiB. A hand-written decode server (a small Llama-like model in
    # plain PyTorch, greedy decode over a static KV cache) sizes its KV cache as 75% of the
    # memory free after the weights, then captures one CUDA graph per decode batch size, largest
    # first, each after two warm-up runs on a side stream. Batch 512 is warmed up and captured
    # (its graph keeps ~670 MiB in the graphs' private pool beside the warm-up's cached blocks);
    # on the H200 the warm-up of the next size, 384, then runs out in the lm_head.
    run_user_script("decode_server", r'''import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(levelname)s %(asctime)s.%(msecs)03d [%(name)s] %(message)s",
                    datefmt="%m-%d %H:%M:%S", level=logging.INFO)
log = logging.getLogger("engine")


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.ln1 = nn.RMSNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.ln2 = nn.RMSNorm(d)
        self.up = nn.Linear(d, 4 * d, bias=False)
        self.down = nn.Linear(4 * d, d, bias=False)

    def forward(self, x, k_cache, v_cache):
        b = x.shape[0]
        q = self.q(self.ln1(x)).view(b, 1, self.heads, self.hd).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k_cache, v_cache)
        x = x + self.o(a.transpose(1, 2).reshape(b, 1, -1))
        return x + self.down(F.silu(self.up(self.ln2(x))))


class Model(nn.Module):
    def __init__(self, vocab=128256, d=2048, layers=8, heads=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.norm = nn.RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)


def decode_step(model, ids, k_cache, v_cache, temperature):
    bs = ids.shape[0]
    x = model.embed(ids)
    for i, blk in enumerate(model.blocks):
        x = blk(x, k_cache[i, :bs], v_cache[i, :bs])
    logits = model.lm_head(model.norm(x))[:, -1].float()
    return torch.argmax(logits / temperature, dim=-1)


parser = argparse.ArgumentParser()
parser.add_argument("--max-num-seqs", type=int, default=512)
parser.add_argument("--gpu-memory-utilization", type=float, default=0.75)
parser.add_argument("--capture-sizes", default="512,384,256,192,128,96,64,48,32,16,8,4,2,1")
parser.add_argument("--temperature", type=float, default=0.7)
args = parser.parse_args()

log.info("initializing engine: max_num_seqs=%d gpu_memory_utilization=%.2f", args.max_num_seqs,
         args.gpu_memory_utilization)
torch.set_default_dtype(torch.bfloat16)
with torch.device("cuda"):
    model = Model().eval()
torch.set_default_dtype(torch.float32)
log.info("model weights: %.2f GiB", sum(p.numel() * p.element_size() for p in model.parameters()) / 2**30)

free, total = torch.cuda.mem_get_info()
n_layers, heads, hd = len(model.blocks), model.blocks[0].heads, model.blocks[0].hd
per_token = 2 * n_layers * heads * hd * 2
tokens = int(free * args.gpu_memory_utilization) // per_token
max_len = tokens // args.max_num_seqs
log.info("free memory %.2f GiB of %.2f GiB; KV cache: %d tokens (%d per sequence)",
         free / 2**30, total / 2**30, max_len * args.max_num_seqs, max_len)
k_cache = torch.zeros(n_layers, args.max_num_seqs, heads, max_len, hd, dtype=torch.bfloat16, device="cuda")
v_cache = torch.zeros_like(k_cache)

static_ids = torch.zeros(args.max_num_seqs, 1, dtype=torch.long, device="cuda")
graphs, outputs = {}, {}
pool = torch.cuda.graph_pool_handle()
sizes = [int(s) for s in args.capture_sizes.split(",")]
log.info("capturing CUDA graphs for decode, batch sizes %s", sizes)
t0 = time.time()
with torch.inference_mode():
    for bs in sizes:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                decode_step(model, static_ids[:bs], k_cache, v_cache, args.temperature)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            outputs[bs] = decode_step(model, static_ids[:bs], k_cache, v_cache, args.temperature)
        graphs[bs] = g
        log.info("captured batch size %d (%.2f GiB reserved)", bs, torch.cuda.memory_reserved() / 2**30)
log.info("graph capture finished in %.1f s; serving on :8000", time.time() - t0)
''')


def s26b_hf_kv_block_server():
    # run.sh's holder leaves 8 GiB. A hand-written LLM server loads the bf16 checkpoint, then
    # sizes its paged KV cache from the card's total memory times gpu_memory_utilization minus
    # what this process has reserved (as if it had the card to itself), logs "allocating KV
    # cache for N blocks" and allocates it layer by layer: the first layer's 15 GiB do not fit
    # beside the other job.
    run_user_script("llm_server", r'''import argparse
import logging
import os
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM

logging.basicConfig(format="%(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s",
                    datefmt="%m-%d %H:%M:%S", level=logging.INFO)
logger = logging.getLogger("llm_server")

parser = argparse.ArgumentParser(description="minimal paged-attention LLM server")
parser.add_argument("--model", default="@CKPT@")
parser.add_argument("--port", type=int, default=8000)
parser.add_argument("--block-size", type=int, default=16)
parser.add_argument("--gpu-memory-utilization", type=float, default=0.92)
parser.add_argument("--max-num-seqs", type=int, default=256)
args = parser.parse_args()

logger.info("args: %s", vars(args))
config = AutoConfig.from_pretrained(args.model)
t0 = time.time()
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, device_map="cuda")
model.eval()
logger.info("loading weights took %.2f s; model weights take %.2f GiB", time.time() - t0,
            torch.cuda.memory_allocated() / 2**30)

n_layers = config.num_hidden_layers
kv_heads = config.num_key_value_heads
head_dim = config.hidden_size // config.num_attention_heads
block_bytes = 2 * args.block_size * kv_heads * head_dim * 2  # K and V, bf16, per layer
total = torch.cuda.get_device_properties(0).total_memory
budget = total * args.gpu_memory_utilization - torch.cuda.memory_reserved()
num_blocks = int(budget // (block_bytes * n_layers))
logger.info("# GPU blocks: %d, # CPU blocks: 0", num_blocks)
logger.info("maximum concurrency for %d tokens per request: %.2fx", config.max_position_embeddings,
            num_blocks * args.block_size / config.max_position_embeddings)
logger.info("allocating KV cache for %d blocks (%.2f GiB over %d layers)", num_blocks,
            num_blocks * block_bytes * n_layers / 2**30, n_layers)
kv_caches = []
for layer in range(n_layers):
    kv_caches.append(torch.zeros(2, num_blocks, args.block_size, kv_heads, head_dim,
                                 dtype=torch.bfloat16, device="cuda"))
logger.info("KV cache ready; starting server on http://0.0.0.0:%d", args.port)
'''.replace("@CKPT@", CKPT))


def s26b_seg_service_warmup_max_batch():
    # run.sh's holder leaves 12 GiB. A segmentation service (torchvision DeepLabV3-ResNet50,
    # fp16, inference_mode) warms up with dummy inputs at its configured maximum batch (128 x
    # 1024 x 1024) before it accepts requests, logging through Rich: the warm-up forward runs
    # out in the dilated backbone.
    run_user_script("seg_service", r'''import logging
import os
import time

import torch
import torchvision
from rich.logging import RichHandler

logging.basicConfig(level=logging.INFO, format="%(message)s", datefmt="[%X]",
                    handlers=[RichHandler(show_path=True, markup=False)])
log = logging.getLogger("seg_service")

CONFIG = {
    "model": "deeplabv3_resnet50",
    "num_classes": 21,
    "max_batch_size": 128,
    "input_size": [1024, 1024],
    "dtype": "float16",
    "warmup_iters": 3,
}


def build_model(cfg):
    model = getattr(torchvision.models.segmentation, cfg["model"])(
        weights=None, weights_backbone=None, num_classes=cfg["num_classes"], aux_loss=False)
    return model.to("cuda", getattr(torch, cfg["dtype"])).eval()


def warmup(model, cfg):
    h, w = cfg["input_size"]
    dummy = torch.zeros(cfg["max_batch_size"], 3, h, w, device="cuda", dtype=getattr(torch, cfg["dtype"]))
    log.info("warming up with %d dummy batches of shape %s", cfg["warmup_iters"], tuple(dummy.shape))
    with torch.inference_mode():
        for i in range(cfg["warmup_iters"]):
            t0 = time.time()
            out = model(dummy)["out"]
            torch.cuda.synchronize()
            log.info("warmup %d/%d: %.1f ms", i + 1, cfg["warmup_iters"], (time.time() - t0) * 1e3)


def main():
    log.info("seg_service starting (pid %d, torch %s, %s)", os.getpid(), torch.__version__,
             torch.cuda.get_device_name(0))
    log.info("config: %s", CONFIG)
    model = build_model(CONFIG)
    log.info("model %s loaded: %.1fM params", CONFIG["model"], sum(p.numel() for p in model.parameters()) / 1e6)
    warmup(model, CONFIG)
    log.info("ready: listening on 0.0.0.0:9000")


if __name__ == "__main__":
    main()
''')


def s26b_ddp_single_process_wrap():
    # run.sh's holder leaves 10 GiB. A pretraining script run by hand as a single process (rank
    # 0 of world size 1, env set in the script, NCCL) builds a 3.3B-parameter bf16 transformer
    # directly on the card, then wraps it in DistributedDataParallel: DDP's construction
    # (parameter broadcast and its gradient buckets, one more copy of every parameter) does not
    # fit in what is left.
    run_user_script("pretrain_ddp", r'''import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class LM(nn.Module):
    def __init__(self, vocab, d, layers, heads):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, norm_first=True,
                                           activation="gelu", dropout=0.0)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        return self.head(self.blocks(self.embed(ids), is_causal=True,
                                     mask=nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device)))


parser = argparse.ArgumentParser()
parser.add_argument("--d-model", type=int, default=4096)
parser.add_argument("--layers", type=int, default=16)
parser.add_argument("--heads", type=int, default=32)
parser.add_argument("--vocab", type=int, default=50304)
parser.add_argument("--seq-len", type=int, default=2048)
parser.add_argument("--micro-batch", type=int, default=4)
parser.add_argument("--lr", type=float, default=3e-4)
args = parser.parse_args()

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")
os.environ.setdefault("LOCAL_RANK", "0")

print("-" * 60)
for k, v in vars(args).items():
    print(f"  {k:<12} {v}")
print("-" * 60, flush=True)

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
print(f"[rank {rank}/{world}] process group up (nccl), device cuda:{local_rank}", flush=True)

t0 = time.time()
torch.set_default_dtype(torch.bfloat16)
with torch.device("cuda"):
    model = LM(args.vocab, args.d_model, args.layers, args.heads)
torch.set_default_dtype(torch.float32)
n_params = sum(p.numel() for p in model.parameters())
print(f"[rank {rank}] built model: {n_params / 1e9:.2f}B params (bf16) in {time.time() - t0:.1f} s; "
      f"{torch.cuda.memory_allocated() / 2**30:.2f} GiB allocated", flush=True)
model = DDP(model, device_ids=[local_rank], bucket_cap_mb=100)
print(f"[rank {rank}] wrapped in DDP", flush=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), fused=True)
''')


def s26b_hf_trainer_evaluate_only():
    # run.sh's holder leaves 10 GiB. An evaluation script (no training) loads the bf16 checkpoint
    # and runs Trainer.evaluate() on a held-out set of 2048-token documents with
    # per_device_eval_batch_size=32: the first evaluation batch's logits (32 x 2048 x 32000, 4 GiB
    # in bf16) and the loss's float32 upcast of them do not fit beside the other job.
    run_user_script("eval_ckpt", r'''import argparse
import json
import math

import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


class HeldOut(torch.utils.data.Dataset):
    def __init__(self, n=640, seq=2048):
        self.n, self.seq = n, seq

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(100_000 + i)
        ids = torch.randint(3, 32000, (self.seq,), generator=g)
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


parser = argparse.ArgumentParser(description="evaluate a checkpoint on the held-out split")
parser.add_argument("--checkpoint", default="@CKPT@")
parser.add_argument("--eval-batch-size", type=int, default=32)
parser.add_argument("--output", default="eval_results.json")
args = parser.parse_args()

model = AutoModelForCausalLM.from_pretrained(args.checkpoint, dtype=torch.bfloat16)
training_args = TrainingArguments(
    output_dir="eval-out",
    per_device_eval_batch_size=args.eval_batch_size,
    bf16_full_eval=True,
    dataloader_num_workers=2,
    report_to="none",
)
trainer = Trainer(model=model, args=training_args, eval_dataset=HeldOut())
metrics = trainer.evaluate()
metrics["eval_perplexity"] = math.exp(metrics["eval_loss"])
print(json.dumps(metrics, indent=2))
with open(args.output, "w") as fh:
    json.dump(metrics, fh)
'''.replace("@CKPT@", CKPT))


def s26b_peft_merge_save_verify():
    # run.sh's holder leaves 6 GiB. A LoRA export script loads the bf16 base onto the card, loads
    # the rank-256 adapter, merge_and_unload()s it, saves the merged model with save_pretrained,
    # then checks the merged model's loss on a verification batch of 16 x 4096 tokens: that
    # forward does not fit (on the H200 it ran out in a decoder layer's MLP).
    import subprocess

    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "adapter-prep.log"), "w") as log:
        rc = subprocess.call([sys.executable, os.path.abspath(__file__), "_adapter"],
                             stdout=log, stderr=subprocess.STDOUT)
    if rc != 0:
        sys.exit(f"preparing the adapter failed (exit {rc}); see {WORK}/adapter-prep.log")
    run_user_script("merge_lora", r'''"""Merge a LoRA adapter into its base model and export the result."""
import argparse
import os
import time

import torch
import torch.nn.functional as F
from peft import PeftModel
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--base", default="@CKPT@")
parser.add_argument("--adapter", default="@ADAPTER@")
parser.add_argument("--out", default="merged-model")
parser.add_argument("--verify-batch", type=int, default=16)
parser.add_argument("--verify-len", type=int, default=4096)
args = parser.parse_args()

t0 = time.time()
print(f"==> loading base model {args.base}", flush=True)
base = AutoModelForCausalLM.from_pretrained(args.base, dtype=torch.bfloat16, device_map="cuda")
print(f"==> loading adapter {args.adapter}", flush=True)
model = PeftModel.from_pretrained(base, args.adapter)
print("==> merging", flush=True)
model = model.merge_and_unload()
model.eval()
print(f"==> saving merged model to {args.out}", flush=True)
model.save_pretrained(args.out)
size = sum(os.path.getsize(os.path.join(args.out, f)) for f in os.listdir(args.out))
print(f"    wrote {size / 2**30:.2f} GiB in {time.time() - t0:.1f} s", flush=True)

print(f"==> verifying merged model on {args.verify_batch} x {args.verify_len} tokens", flush=True)
g = torch.Generator().manual_seed(0)
ids = torch.randint(3, 32000, (args.verify_batch, args.verify_len), generator=g).cuda()
with torch.no_grad():
    logits = model(input_ids=ids).logits
    loss = F.cross_entropy(logits[:, :-1].float().flatten(0, 1), ids[:, 1:].flatten())
print(f"    verification loss {loss.item():.4f}")
print("==> done")
'''.replace("@CKPT@", CKPT).replace("@ADAPTER@", ADAPTER))


def s26b_grad_accum_big_vocab_ce():
    # run.sh's holder leaves 26 GiB. A from-scratch LM with a 256k-token vocabulary trains with
    # gradient accumulation (8 micro-batches of 4 x 2048 tokens, bf16 autocast); the loss is
    # computed on logits.float(): the first micro-batch's forward fits, its backward through the
    # float32 log-softmax of 4 x 2048 x 256000 (7.8 GiB per copy) does not.
    run_user_script("train_bigvocab", r'''import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab, d, layers, heads):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, norm_first=True, dropout=0.0)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device)
        return self.head(self.norm(self.blocks(self.embed(ids), mask=mask, is_causal=True)))


parser = argparse.ArgumentParser()
parser.add_argument("--vocab", type=int, default=256000)
parser.add_argument("--d-model", type=int, default=1024)
parser.add_argument("--layers", type=int, default=4)
parser.add_argument("--micro-batch", type=int, default=4)
parser.add_argument("--seq-len", type=int, default=2048)
parser.add_argument("--grad-accum", type=int, default=8)
parser.add_argument("--steps", type=int, default=10000)
args = parser.parse_args()

model = TinyLM(args.vocab, args.d_model, args.layers, 16).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
print(f"model: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M params, vocab {args.vocab}")
print(f"tokens/step: {args.micro_batch} x {args.seq_len} x {args.grad_accum} = "
      f"{args.micro_batch * args.seq_len * args.grad_accum:,}")
g = torch.Generator().manual_seed(0)
t0 = time.time()
for step in range(args.steps):
    total = 0.0
    for micro in range(args.grad_accum):
        ids = torch.randint(0, args.vocab, (args.micro_batch, args.seq_len + 1), generator=g).cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, args.vocab), ids[:, 1:].reshape(-1))
        (loss / args.grad_accum).backward()
        total += loss.item() / args.grad_accum
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    print(f"step {step:>5} | loss {total:.4f} | {time.time() - t0:.1f}s", flush=True)
''')


def s26b_flax_pmap_train_step():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (about 7 GiB). A Flax (linen) image classifier trains
    # with a pmap'd `train_step` (axis_name="batch", pmean'd gradients, optax), the usual
    # multi-device layout run on this one GPU: with 256 images of 224 x 224 per device, the
    # first call of the pmapped step cannot get its activations' buffers (XLA's rematerialization
    # and allocator warnings first); the error is dispatched asynchronously and surfaces where
    # the script first reads a metric, float(x[0]).
    run_user_script("train_flax", r'''import logging
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn
from flax.training import train_state

logging.basicConfig(format="I%(asctime)s.%(msecs)03d %(process)d %(filename)s:%(lineno)d] %(message)s",
                    datefmt="%m%d %H:%M:%S", level=logging.INFO)

CFG = dict(per_device_batch=256, image_size=224, num_classes=1000, lr=0.1, epochs=90, widths=(64, 128, 256, 512))


class ConvNet(nn.Module):
    widths: tuple
    num_classes: int

    @nn.compact
    def __call__(self, x):
        for i, w in enumerate(self.widths):
            x = nn.Conv(w, (3, 3))(x)
            x = nn.relu(x)
            x = nn.Conv(w, (3, 3))(x)
            x = nn.relu(x)
            if i < len(self.widths) - 1:
                x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = jnp.mean(x, axis=(1, 2))
        return nn.Dense(self.num_classes)(x)


def create_state(rng):
    model = ConvNet(CFG["widths"], CFG["num_classes"])
    params = model.init(rng, jnp.ones((1, CFG["image_size"], CFG["image_size"], 3)))["params"]
    tx = optax.sgd(CFG["lr"], momentum=0.9, nesterov=True)
    return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=tx)


def train_step(state, images, labels):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, images)
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, logits

    (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    grads = jax.lax.pmean(grads, axis_name="batch")
    state = state.apply_gradients(grads=grads)
    metrics = {"loss": jax.lax.pmean(loss, "batch"),
               "accuracy": jax.lax.pmean(jnp.mean(jnp.argmax(logits, -1) == labels), "batch")}
    return state, metrics


def main():
    n_dev = jax.local_device_count()
    logging.info("JAX %s, %d local device(s): %s", jax.__version__, n_dev, jax.local_devices())
    logging.info("config: %s", CFG)
    state = create_state(jax.random.PRNGKey(0))
    n_params = sum(x.size for x in jax.tree_util.tree_leaves(state.params))
    logging.info("model: %.1fM params", n_params / 1e6)
    state = jax.tree_util.tree_map(lambda x: jnp.stack([x] * n_dev), state)  # replicate
    p_train_step = jax.pmap(train_step, axis_name="batch", donate_argnums=(0,))
    rng = np.random.default_rng(0)
    steps_per_epoch = 1_281_167 // (CFG["per_device_batch"] * n_dev)
    t0 = time.time()
    for epoch in range(CFG["epochs"]):
        for step in range(steps_per_epoch):
            images = rng.standard_normal((n_dev, CFG["per_device_batch"], CFG["image_size"], CFG["image_size"], 3),
                                         dtype=np.float32)
            labels = rng.integers(0, CFG["num_classes"], (n_dev, CFG["per_device_batch"]))
            state, metrics = p_train_step(state, images, labels)
            if step % 50 == 0:
                m = jax.tree_util.tree_map(lambda x: float(x[0]), metrics)
                logging.info("epoch %d step %d: loss=%.4f acc=%.3f (%.1f s)", epoch, step, m["loss"],
                             m["accuracy"], time.time() - t0)


if __name__ == "__main__":
    main()
''')


def s26b_lightning_h5_setup_cgroup():
    # Not a GPU OOM: a Lightning segmentation run inside a 3 GiB memory cgroup (a container's
    # limit; made here under cgroup v2 and removed afterwards), started by a shell wrapper. Its
    # DataModule.setup() reads the whole training array of an HDF5 file (9 GiB of uint8 tiles)
    # into host memory; the kernel's OOM killer kills python during trainer.fit's setup and the
    # wrapper's shell reports "Killed".
    import subprocess

    group, enter_group = memory_cgroup(
        "s26b_lightning_h5_setup_cgroup", f"seg-train-{os.getpid()}", 3 * GIB)
    data = os.path.join(WORK, "data")
    os.makedirs(data, exist_ok=True)
    path = os.path.join(data, "tiles_train.h5")
    if not os.path.exists(path):
        import h5py
        import numpy as np

        # no data written: the file is small and the tiles read back as the fill value
        with h5py.File(path, "w") as fh:
            fh.create_dataset("images", shape=(48_000, 3, 256, 256), dtype=np.uint8)
            fh.create_dataset("masks", shape=(48_000, 256, 256), dtype=np.uint8)
    with open(os.path.join(WORK, "train_seg.py"), "w", encoding="utf-8") as fh:
        fh.write(r'''import argparse

import h5py
import lightning as L
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class TilesDataModule(L.LightningDataModule):
    def __init__(self, path, batch_size=32):
        super().__init__()
        self.path, self.batch_size = path, batch_size

    def setup(self, stage=None):
        with h5py.File(self.path, "r") as f:
            print(f"reading {self.path}: images {f['images'].shape}, masks {f['masks'].shape}", flush=True)
            images = f["images"][:]
            masks = f["masks"][:]
        n_val = len(images) // 10
        self.train = TensorDataset(torch.from_numpy(images[n_val:]), torch.from_numpy(masks[n_val:]))
        self.val = TensorDataset(torch.from_numpy(images[:n_val]), torch.from_numpy(masks[:n_val]))

    def train_dataloader(self):
        return DataLoader(self.train, batch_size=self.batch_size, shuffle=True, num_workers=4)

    def val_dataloader(self):
        return DataLoader(self.val, batch_size=self.batch_size, num_workers=4)


class SegNet(L.LightningModule):
    def __init__(self, classes=6):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1),
                                 nn.ReLU(), nn.Conv2d(64, classes, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x.float() / 255), y.long())
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.net(x.float() / 255), y.long()))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/tiles_train.h5")
    parser.add_argument("--epochs", type=int, default=50)
    args = parser.parse_args()
    L.seed_everything(0)
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="gpu", devices=1, precision="bf16-mixed",
                        logger=False, enable_checkpointing=False)
    trainer.fit(SegNet(), datamodule=TilesDataModule(args.data))
''')
    with open(os.path.join(WORK, "train.sh"), "w", encoding="utf-8") as fh:
        fh.write('''#!/usr/bin/env bash
set -u
echo "== $(date -u +%FT%TZ) seg-train on $(hostname -s): $(nproc) cpus"
python3 train_seg.py --data data/tiles_train.h5 --epochs 50
rc=$?
echo "== $(date -u +%FT%TZ) train_seg.py exited with $rc"
exit $rc
''')
    sys.stdout.flush()
    try:
        rc = subprocess.call(["bash", "train.sh"], cwd=WORK, preexec_fn=enter_group)
    finally:
        time.sleep(0.5)
        try:
            os.rmdir(group)
        except OSError:
            pass
    sys.exit(rc)


def s26b_cublas_query_after_index_reserve():
    # No holder. A vector-search service moves its small query encoder to the card, then
    # reserves the vector index's storage from torch.cuda.mem_get_info() leaving an 8 MiB
    # headroom and copies the first shard in (copies only, no kernels yet). The warm-up query's
    # first Linear needs cuBLAS (its handle and workspace) for the first time: there is no room.
    run_user_script("vector_service", r'''import argparse
import logging
import time

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s | %(levelname)-7s | %(name)s | %(message)s", level=logging.INFO)
log = logging.getLogger("vector_service")

parser = argparse.ArgumentParser()
parser.add_argument("--dim", type=int, default=1024)
parser.add_argument("--headroom-mb", type=int, default=8)
parser.add_argument("--shard-rows", type=int, default=250_000)
parser.add_argument("--topk", type=int, default=10)
args = parser.parse_args()

encoder = nn.Sequential(nn.Linear(768, 3072), nn.GELU(), nn.Linear(3072, args.dim)).to("cuda", torch.bfloat16).eval()
log.info("query encoder on cuda:0 (%.1fM params)", sum(p.numel() for p in encoder.parameters()) / 1e6)

free, total = torch.cuda.mem_get_info()
row_bytes = args.dim * 2
capacity = (free - args.headroom_mb * 2**20) // row_bytes
log.info("reserving index storage: %d vectors x %d dims bf16 (%.2f GiB of %.2f GiB free, headroom %d MiB)",
         capacity, args.dim, capacity * row_bytes / 2**30, free / 2**30, args.headroom_mb)
index = torch.empty(capacity, args.dim, dtype=torch.bfloat16, device="cuda")
t0 = time.time()
shard = torch.randn(args.shard_rows, args.dim, dtype=torch.bfloat16).pin_memory()
index[: args.shard_rows].copy_(shard)
n_vectors = args.shard_rows
log.info("loaded shard 0: %d vectors in %.1f s", n_vectors, time.time() - t0)

log.info("warm-up query")
query = torch.randn(1, 768, dtype=torch.bfloat16).cuda()
with torch.inference_mode():
    q = encoder(query)
    scores = q @ index[:n_vectors].T
    top = torch.topk(scores.float(), args.topk)
log.info("warm-up done: top score %.3f; serving", top.values[0, 0].item())
''')


def s26b_pool_worker_reraise_message():
    # run.sh's holder leaves 6 GiB. An image-embedding job hands shards to a spawn Pool worker
    # that runs a ViT-B/16 under no_grad with batch 2048; the worker catches every exception and
    # returns only f"{type}: {message}", and the parent raises a bare RuntimeError with that
    # text: the traceback shows the parent's raise, not the operation that ran out.
    run_user_script("embed_images", r'''import multiprocessing as mp
import sys
import time

import torch
import torchvision

_model = None


def _init_worker():
    global _model
    torch.backends.cuda.matmul.allow_tf32 = True
    _model = torchvision.models.vit_b_16(weights=None).cuda().eval()


def embed_shard(job):
    shard, n_images, batch_size = job
    try:
        g = torch.Generator().manual_seed(shard)
        out = []
        with torch.no_grad():
            for start in range(0, n_images, batch_size):
                x = torch.randn(min(batch_size, n_images - start), 3, 224, 224, generator=g).cuda()
                out.append(_model(x).cpu())
        return {"shard": shard, "ok": True, "n": sum(len(o) for o in out)}
    except Exception as e:
        return {"shard": shard, "ok": False, "error": f"{type(e).__name__}: {e}"}


def main():
    jobs = [(shard, 8192, 2048) for shard in range(12)]
    print(f"embedding {len(jobs)} shards with 1 GPU worker", flush=True)
    t0 = time.time()
    ctx = mp.get_context("spawn")
    with ctx.Pool(1, initializer=_init_worker) as pool:
        for res in pool.imap(embed_shard, jobs):
            if not res["ok"]:
                raise RuntimeError(f"shard {res['shard']} failed in worker: {res['error']}")
            print(f"shard {res['shard']:>3}: {res['n']} embeddings ({time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
''')


def s26b_json_log_job_failed():
    # run.sh's holder leaves 4 GiB. A scheduled job logs JSON lines only; its top-level handler
    # catches any exception and logs one "job_failed" record with the exception's type and
    # message, then exits 1. The job (a ResNet-152 at batch 512 x 320 px) fails somewhere after
    # its "job_started" record; no line says which part of it was running.
    run_user_script("jobrunner", r'''import json
import os
import sys
import time
import traceback
from datetime import datetime, timezone

import torch
import torch.nn.functional as F
import torchvision

JOB = {"job_id": "task-4471", "model": "resnet152", "batch_size": 512, "image_size": 320,
       "num_classes": 1000, "lr": 0.2, "epochs": 30}


def emit(level, event, **fields):
    rec = {"ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds"), "level": level,
           "logger": "jobrunner", "event": event, "pid": os.getpid()}
    rec.update(fields)
    print(json.dumps(rec), flush=True)


def run(job):
    model = getattr(torchvision.models, job["model"])(num_classes=job["num_classes"]).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=job["lr"], momentum=0.9, weight_decay=1e-4)
    for epoch in range(job["epochs"]):
        for step in range(2502):
            x = torch.randn(job["batch_size"], 3, job["image_size"], job["image_size"], device="cuda")
            y = torch.randint(0, job["num_classes"], (job["batch_size"],), device="cuda")
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)


def main():
    emit("info", "job_started", job=JOB, torch=torch.__version__, device=torch.cuda.get_device_name(0))
    t0 = time.time()
    try:
        run(JOB)
    except Exception as e:
        emit("error", "job_failed", job_id=JOB["job_id"], error_type=type(e).__name__, error=str(e),
             elapsed_s=round(time.time() - t0, 2))
        sys.exit(1)
    emit("info", "job_finished", job_id=JOB["job_id"], elapsed_s=round(time.time() - t0, 2))


if __name__ == "__main__":
    main()
''')


# --------------------------------------------------------------------------- session 26 c (blind)


def s26c_hf_http_handler_generate():
    # run.sh's holder leaves 5 GiB. A small stdlib HTTP server (BaseHTTPRequestHandler) serves
    # the bf16 checkpoint; its --selftest posts one request (a 3968-token prompt, 16 samples,
    # 1024 new tokens). The handler logs the request and calls model.generate, which runs out in
    # the prefill of 16 x 3968 tokens; socketserver prints the handler's traceback and the
    # client sees the connection closed without a response.
    run_user_script("app", r'''"""Minimal text-generation HTTP service (POST /v1/generate)."""
import argparse
import json
import logging
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(levelname)s:     %(message)s", level=logging.INFO)
log = logging.getLogger("app")

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--model", default="@CKPT@")
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--selftest", action="store_true", default=True)
args = parser.parse_args()

log.info("loading %s", args.model)
MODEL = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, device_map="cuda").eval()
log.info("model ready on %s (%.2f GiB allocated)", MODEL.device, torch.cuda.memory_allocated() / 2**30)


def encode(text):
    return [sum(map(ord, w)) * 7919 % 31997 + 3 for w in text.split()]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        if self.path != "/v1/generate":
            self.send_error(404)
            return
        rid = uuid.uuid4().hex[:12]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ids = encode(body["prompt"])
        log.info("%s:%d - rid=%s POST /v1/generate prompt_tokens=%d n=%d max_new_tokens=%d temperature=%.2f",
                 *self.client_address, rid, len(ids), body.get("n", 1), body["max_new_tokens"],
                 body.get("temperature", 1.0))
        t0 = time.time()
        input_ids = torch.tensor([ids], device="cuda")
        with torch.inference_mode():
            out = MODEL.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                 do_sample=True, temperature=body.get("temperature", 1.0),
                                 num_return_sequences=body.get("n", 1),
                                 max_new_tokens=body["max_new_tokens"], pad_token_id=0)
        payload = json.dumps({"id": rid, "choices": [o[len(ids):].tolist() for o in out],
                              "latency_s": round(time.time() - t0, 3)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


server = HTTPServer(("127.0.0.1", args.port), Handler)
host, port = server.server_address
threading.Thread(target=server.serve_forever, daemon=True).start()
log.info("serving on http://%s:%d (Press CTRL+C to quit)", host, port)

if args.selftest:
    prompt = " ".join(f"tok{i % 997}" for i in range(3968))
    req = urllib.request.Request(f"http://{host}:{port}/v1/generate",
                                 data=json.dumps({"prompt": prompt, "n": 16, "max_new_tokens": 1024,
                                                  "temperature": 0.8}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        result = json.loads(resp.read())
    log.info("selftest ok: %d choices in %.2f s", len(result["choices"]), result["latency_s"])
'''.replace("@CKPT@", CKPT))


def s26c_jax_keras_fit_progressive():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.05 (about 7 GiB). A Keras-like `Trainer.fit` written in
    # JAX/Flax prints one progress line per epoch; progressive resizing trains epochs 1-2 at
    # 64 px and switches to 224 px at epoch 3: the recompiled train step's activations for 256
    # images of 224 x 224 do not fit.
    run_user_script("fit_flax", r'''import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn
from flax.training import train_state


class Net(nn.Module):
    widths: tuple = (64, 128, 256, 512)
    classes: int = 100

    @nn.compact
    def __call__(self, x):
        for i, w in enumerate(self.widths):
            x = nn.relu(nn.Conv(w, (3, 3))(x))
            x = nn.relu(nn.Conv(w, (3, 3))(x))
            if i < len(self.widths) - 1:
                x = nn.max_pool(x, (2, 2), strides=(2, 2))
        return nn.Dense(self.classes)(jnp.mean(x, axis=(1, 2)))


@jax.jit
def train_step(state, x, y):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), logits

    (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    return state.apply_gradients(grads=grads), loss, jnp.mean(jnp.argmax(logits, -1) == y)


class Trainer:
    def __init__(self, model, lr=1e-3, seed=0):
        params = model.init(jax.random.PRNGKey(seed), jnp.ones((1, 32, 32, 3)))["params"]
        self.state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adamw(lr))

    def fit(self, batches, epochs, steps_per_epoch, size_schedule):
        for epoch in range(1, epochs + 1):
            size = size_schedule(epoch)
            print(f"Epoch {epoch}/{epochs}  (image size {size})", flush=True)
            t0 = time.time()
            losses, accs = [], []
            for step in range(steps_per_epoch):
                x, y = batches(size)
                self.state, loss, acc = train_step(self.state, x, y)
                losses.append(loss)
                accs.append(acc)
            loss = float(jnp.mean(jnp.stack(losses)))
            acc = float(jnp.mean(jnp.stack(accs)))
            dt = time.time() - t0
            print(f"{steps_per_epoch}/{steps_per_epoch} [==============================] - {dt:.0f}s "
                  f"{1000 * dt / steps_per_epoch:.0f}ms/step - loss: {loss:.4f} - accuracy: {acc:.4f}", flush=True)


rng = np.random.default_rng(0)


def batches(size, batch=256):
    x = rng.standard_normal((batch, size, size, 3), dtype=np.float32)
    y = rng.integers(0, 100, (batch,))
    return jnp.asarray(x), jnp.asarray(y)


print(f"devices: {jax.devices()}")
trainer = Trainer(Net())
trainer.fit(batches, epochs=12, steps_per_epoch=15, size_schedule=lambda e: 64 if e <= 2 else 224)
''')


def s26c_lightning_validate_retrieval():
    # run.sh's holder leaves 8 GiB. A retrieval model is checked with `trainer.validate()` alone
    # (no fit): validation_step keeps every query and document embedding, and
    # on_validation_epoch_end scores all 81920 queries against all 81920 documents at once for
    # recall@10; the 81920 x 81920 float32 score matrix (25 GiB) does not fit.
    run_user_script("validate_retriever", r'''import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __init__(self, n=81920, dim=768):
        self.n, self.dim = n, dim

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        q = torch.randn(self.dim, generator=g)
        return q, q + 0.1 * torch.randn(self.dim, generator=g)


class DualEncoder(L.LightningModule):
    def __init__(self, dim=768, out=256):
        super().__init__()
        self.q = nn.Sequential(nn.Linear(dim, 1024), nn.GELU(), nn.Linear(1024, out))
        self.d = nn.Sequential(nn.Linear(dim, 1024), nn.GELU(), nn.Linear(1024, out))
        self._qs, self._ds = [], []

    def validation_step(self, batch, batch_idx):
        q, d = batch
        self._qs.append(F.normalize(self.q(q), dim=-1))
        self._ds.append(F.normalize(self.d(d), dim=-1))

    def on_validation_epoch_end(self):
        q = torch.cat(self._qs).float()
        d = torch.cat(self._ds).float()
        scores = q @ d.T
        top = scores.topk(10, dim=1).indices
        target = torch.arange(len(q), device=q.device)[:, None]
        self.log("val/recall@10", (top == target).any(1).float().mean())
        self._qs.clear()
        self._ds.clear()


if __name__ == "__main__":
    L.seed_everything(7)
    trainer = L.Trainer(accelerator="gpu", devices=1, logger=False, precision="bf16-mixed")
    trainer.validate(DualEncoder(), DataLoader(Pairs(), batch_size=4096, num_workers=4))
''')


def s26c_hf_pipeline_chunk_loop():
    # run.sh's holder leaves 5 GiB. A batch-generation script feeds a text-generation pipeline
    # chunk by chunk (32 prompts each, batch_size=32) and prints a line per chunk; chunks 1-2
    # hold short prompts, chunk 3 the long documents (3800 words each): its prefill does not fit.
    run_user_script("batch_generate", r'''import time

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, pipeline

vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
vocab.update({f"w{i}": i for i in range(3, 32000)})
backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", bos_token="<s>",
                                    eos_token="</s>", pad_token="<unk>", padding_side="left")
generator = pipeline("text-generation", model="@CKPT@", tokenizer=tokenizer, dtype=torch.bfloat16, device=0)


def prompt(i, words):
    return " ".join(f"w{(i * 131 + j * 17) % 31000 + 3}" for j in range(words))


records = [prompt(i, 180) for i in range(64)] + [prompt(i, 3800) for i in range(64, 96)] + \
          [prompt(i, 200) for i in range(96, 320)]
chunk = 32
n_chunks = (len(records) + chunk - 1) // chunk
t0 = time.time()
for c in range(n_chunks):
    part = records[c * chunk:(c + 1) * chunk]
    outs = generator(part, batch_size=32, max_new_tokens=128, do_sample=True, top_p=0.95,
                     return_full_text=False)
    print(f"chunk {c + 1}/{n_chunks}: {len(outs)} completions, "
          f"{sum(len(o[0]['generated_text'].split()) for o in outs)} words, {time.time() - t0:.1f} s", flush=True)
print("done")
'''.replace("@CKPT@", CKPT))


def s26c_accelerate_device_map_gpu0():
    # run.sh's holder leaves 2 GiB. A conversion script plans a device map with
    # infer_auto_device_map and max_memory={0: "40GiB", "cpu": "96GiB"} (the card's budget written
    # by hand, not measured), so every module lands on GPU 0, then load_checkpoint_and_dispatch
    # loads the checkpoint in float32 (2.2 GiB): loading runs out part way through.
    run_user_script("dispatch_fp32", r'''import collections

import torch
from accelerate import infer_auto_device_map, init_empty_weights, load_checkpoint_and_dispatch
from transformers import AutoConfig, AutoModelForCausalLM

CKPT = "@CKPT@"
MAX_MEMORY = {0: "40GiB", "cpu": "96GiB"}

config = AutoConfig.from_pretrained(CKPT)
with init_empty_weights():
    model = AutoModelForCausalLM.from_config(config)
device_map = infer_auto_device_map(model, max_memory=MAX_MEMORY, dtype=torch.float32,
                                   no_split_module_classes=["LlamaDecoderLayer"])
print("device map:", dict(collections.Counter(device_map.values())))
for name, dev in list(device_map.items())[:4]:
    print(f"  {name:<28} -> {dev}")
print(f"  ... ({len(device_map)} entries)")
model = load_checkpoint_and_dispatch(model, CKPT, device_map=device_map, dtype=torch.float32)
print("loaded; hf_device_map:", model.hf_device_map)
'''.replace("@CKPT@", CKPT))


def s26c_compile_first_call_larger_shape():
    # run.sh's holder leaves 10 GiB. An inference module wraps a bf16 encoder (hand-written
    # attention that materialises the scores) in torch.compile; the warm-up at (4, 256) compiles
    # and runs, the first real request at (64, 4096) recompiles (a new shape) and its attention
    # scores (64 x 16 x 4096 x 4096 bf16, 32 GiB) do not fit.
    run_user_script("compiled_infer", r'''import logging
import math
import time

import torch
import torch.nn as nn

logging.basicConfig(format="%(asctime)s [%(name)s] %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("infer")


class Block(nn.Module):
    def __init__(self, d=1024, h=16):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.h)
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self, layers=2, d=1024):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(layers))
        self.out = nn.Linear(d, 256)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.out(x.mean(1))


model = Encoder().to("cuda", torch.bfloat16).eval()
encode = torch.compile(model)

t0 = time.time()
with torch.inference_mode():
    encode(torch.randn(4, 256, 1024, device="cuda", dtype=torch.bfloat16))
torch.cuda.synchronize()
log.info("warm-up (4, 256) compiled and ran in %.1f s", time.time() - t0)

requests = [(64, 4096), (64, 4096), (32, 2048)]
for i, (b, s) in enumerate(requests):
    t0 = time.time()
    with torch.inference_mode():
        emb = encode(torch.randn(b, s, 1024, device="cuda", dtype=torch.bfloat16))
    torch.cuda.synchronize()
    log.info("request %d (%d, %d) -> %s in %.2f s", i, b, s, tuple(emb.shape), time.time() - t0)
''')


def s26c_peft_kbit_prepare_first_step():
    # run.sh's holder leaves 6 GiB. A QLoRA-style recipe run without quantization: the bf16 base
    # goes through prepare_model_for_kbit_training (which casts every bf16 weight to float32 and
    # turns on gradient checkpointing), gets a rank-64 LoRA on all projections, and the first step
    # (8 x 4096 tokens) runs out in the forward's logits / loss.
    run_user_script("qlora_style", r'''import torch
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from tqdm import tqdm
from transformers import AutoModelForCausalLM

BASE = "@CKPT@"
model = AutoModelForCausalLM.from_pretrained(BASE, dtype=torch.bfloat16, device_map={"": 0})
model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
lora = LoraConfig(r=64, lora_alpha=16, lora_dropout=0.05, bias="none", task_type="CAUSAL_LM",
                  target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
model = get_peft_model(model, lora)
model.print_trainable_parameters()
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)

g = torch.Generator().manual_seed(0)
model.train()
for step in tqdm(range(500), desc="train", dynamic_ncols=True):
    ids = torch.randint(3, 32000, (8, 4096), generator=g).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if step % 10 == 0:
        tqdm.write(f"step {step} loss {loss.item():.4f}")
'''.replace("@CKPT@", CKPT))


def s26c_hf_kd_distill_logged_error():
    # run.sh's holder leaves 8 GiB. Knowledge distillation: the bf16 teacher (the checkpoint)
    # runs under no_grad, a float32 student (4 layers, 1024 wide) forward + KL(T=2) over the full
    # 32000 vocabulary in float32, then backward, for 16 x 2048 tokens. The script's top-level
    # handler logs only the exception's message and exits 1: the text does not show which part
    # of the step ran out.
    run_user_script("distill", r'''import logging
import sys
import time

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

logging.basicConfig(format="[%(asctime)s] %(levelname)s %(message)s", datefmt="%Y-%m-%d %H:%M:%S", level=logging.INFO)
log = logging.getLogger("kd")
TEACHER = "@CKPT@"
T, ALPHA, BATCH, SEQ = 2.0, 0.9, 16, 2048


def train():
    teacher = AutoModelForCausalLM.from_pretrained(TEACHER, dtype=torch.bfloat16, device_map="cuda").eval()
    cfg = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                      num_attention_heads=16, num_key_value_heads=16, tie_word_embeddings=False)
    student = LlamaForCausalLM(cfg).cuda().train()
    opt = torch.optim.AdamW(student.parameters(), lr=3e-4)
    log.info("teacher %.0fM / student %.0fM params; T=%.1f alpha=%.2f batch %dx%d",
             sum(p.numel() for p in teacher.parameters()) / 1e6, sum(p.numel() for p in student.parameters()) / 1e6,
             T, ALPHA, BATCH, SEQ)
    g = torch.Generator().manual_seed(0)
    t0 = time.time()
    for step in range(20000):
        ids = torch.randint(3, 32000, (BATCH, SEQ), generator=g).cuda()
        with torch.no_grad():
            t_logits = teacher(input_ids=ids).logits
        s_logits = student(input_ids=ids).logits
        kd = F.kl_div(F.log_softmax(s_logits.float() / T, -1), F.log_softmax(t_logits.float() / T, -1),
                      log_target=True, reduction="batchmean") * T * T
        ce = F.cross_entropy(s_logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())
        loss = ALPHA * kd + (1 - ALPHA) * ce
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 50 == 0:
            log.info("step %d loss %.4f kd %.4f ce %.4f (%.0f s)", step, loss.item(), kd.item(), ce.item(), time.time() - t0)


if __name__ == "__main__":
    log.info("distillation run starting")
    try:
        train()
    except Exception as exc:
        log.error("run failed: %s", exc)
        sys.exit(1)
'''.replace("@CKPT@", CKPT))


def s26c_hf_ckpt_average_export():
    # run.sh's holder leaves 5 GiB. A checkpoint-averaging export tool loads the last four
    # checkpoints' model.safetensors straight onto the card (load_file(device="cuda")), keeps each
    # for a per-checkpoint drift report, and sums them into a float32 average before writing
    # averaged/model.safetensors; it runs out while loading. It prints only its header and
    # `error: <message>`: the text does not show where it failed.
    src = os.path.join(CKPT, "model.safetensors")
    run = os.path.join(WORK, "run-7b2")
    for step in (7000, 7500, 8000, 8500):
        d = os.path.join(run, f"checkpoint-{step}")
        os.makedirs(d, exist_ok=True)
        link = os.path.join(d, "model.safetensors")
        if not os.path.lexists(link):
            os.symlink(src, link)
    run_user_script("avg_ckpt", r'''import glob
import os
import sys

import torch
from safetensors.torch import load_file, save_file


def main(run_dir, last=4, out="averaged"):
    paths = sorted(glob.glob(os.path.join(run_dir, "checkpoint-*", "model.safetensors")),
                   key=lambda p: int(p.split("checkpoint-")[1].split("/")[0]))[-last:]
    print(f"avg_ckpt 0.4.1  run={os.path.basename(run_dir)}  inputs={len(paths)}  out={out}", flush=True)
    states, avg = [], None
    for p in paths:
        sd = load_file(p, device="cuda")
        states.append(sd)
        if avg is None:
            avg = {k: v.float().clone() for k, v in sd.items()}
        else:
            for k, v in sd.items():
                avg[k] += v.float()
    avg = {k: (v / len(states)).to(torch.bfloat16).contiguous() for k, v in avg.items()}
    drift = [sum((sd[k].float() - avg[k].float()).norm().item() ** 2 for k in avg) ** 0.5 for sd in states]
    os.makedirs(out, exist_ok=True)
    save_file({k: v.cpu() for k, v in avg.items()}, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    print("drift:", " ".join(f"{d:.3f}" for d in drift))
    print(f"wrote {out}/model.safetensors")


if __name__ == "__main__":
    try:
        main("run-7b2")
    except Exception as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
''')


def s26c_dataloader_worker_segfault():
    # Not a GPU OOM. A training loop (tqdm) reads samples through 4 DataLoader workers whose
    # "native decoder" (here a ctypes call) crashes on one corrupt record: the worker dies of
    # SIGSEGV, PyTorch prints "Unexpected segmentation fault encountered in worker" and the main
    # process raises "DataLoader worker (pid(s) N) exited unexpectedly".
    # Session 26 c's run of it finished without an error: ctypes.string_at(0, 16) does not read
    # address 0 (a NULL pointer gives 16 uninitialised bytes); it now reads address 8 (not yet
    # run on the device).
    run_user_script("train_decode", r'''import ctypes

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

CORRUPT = {1337}


def native_decode(index, size=64):
    # stands in for a C decoder reading a record's header; a corrupt record has a null offset
    offset = 8 if index in CORRUPT else None
    if offset is not None:
        ctypes.string_at(offset, 16)
    g = torch.Generator().manual_seed(index)
    return torch.randint(0, 256, (3, size, size), dtype=torch.uint8, generator=g)


class Records(Dataset):
    def __len__(self):
        return 50_000

    def __getitem__(self, i):
        return native_decode(i), i % 10


model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(32, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(Records(), batch_size=64, num_workers=4, pin_memory=True)
for epoch in range(3):
    for x, y in tqdm(loader, desc=f"epoch {epoch}"):
        x, y = x.cuda(non_blocking=True).float() / 255, y.cuda(non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
''')



def s26d_clip_contrastive_step():
    # run.sh's holder leaves 10 GiB. Locked-image-style contrastive tuning on precomputed
    # embeddings: two projection towers, a 65536 x 65536 similarity matrix under bf16 autocast
    # (8 GiB), then the symmetric cross-entropy in float32. On the H200 (torch 2.11) it ran out at
    # the similarity matmul itself.
    run_user_script("train_contrastive", r'''import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

GLOBAL_BATCH, IMG_DIM, TXT_DIM, EMBED = 65536, 1024, 768, 512
torch.manual_seed(0)


def tower(d_in):
    return nn.Sequential(nn.Linear(d_in, 2048), nn.GELU(), nn.Linear(2048, EMBED))


img_tower, txt_tower = tower(IMG_DIM).cuda(), tower(TXT_DIM).cuda()
logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07), device="cuda"))
params = list(img_tower.parameters()) + list(txt_tower.parameters()) + [logit_scale]
opt = torch.optim.AdamW(params, lr=5e-4, weight_decay=0.2)
print(f"contrastive tuning: batch {GLOBAL_BATCH}, embed {EMBED}, "
      f"{sum(p.numel() for p in params) / 1e6:.1f}M trainable params")

for step in tqdm(range(2000), desc="train", dynamic_ncols=True):
    img = torch.randn(GLOBAL_BATCH, IMG_DIM, device="cuda")
    txt = torch.randn(GLOBAL_BATCH, TXT_DIM, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        zi = F.normalize(img_tower(img), dim=-1)
        zt = F.normalize(txt_tower(txt), dim=-1)
        logits = logit_scale.exp() * zi @ zt.t()
        labels = torch.arange(GLOBAL_BATCH, device="cuda")
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
''')


def s26d_rl_rollout_policy_graph():
    # run.sh's holder leaves 4 GiB. A PPO-style rollout over 4096 vectorised GPU environments
    # calls the policy once per environment step without torch.no_grad(), keeping each step's
    # log-prob and value (and so every step's activations); it prints episode returns every 8
    # steps and runs out in the policy's forward a few dozen steps in.
    run_user_script("ppo_rollout", r'''import time

import torch
import torch.nn as nn

N_ENVS, OBS, ACT, HORIZON = 4096, 512, 18, 512
torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.torso = nn.Sequential(nn.Linear(OBS, 2048), nn.Tanh(), nn.Linear(2048, 2048), nn.Tanh())
        self.pi = nn.Linear(2048, ACT)
        self.v = nn.Linear(2048, 1)

    def forward(self, obs):
        h = self.torso(obs)
        return self.pi(h), self.v(h).squeeze(-1)


class VecEnv:
    def __init__(self, n):
        self.n = n
        self.obs = torch.randn(n, OBS, device="cuda")
        self.t = torch.zeros(n, device="cuda")

    def step(self, action):
        reward = (action == 3).float() + 0.1 * torch.rand(self.n, device="cuda")
        self.t += 1
        done = (torch.rand(self.n, device="cuda") < 0.04) | (self.t >= 200)
        self.t[done] = 0
        self.obs = torch.randn(self.n, OBS, device="cuda")
        return self.obs, reward, done


def collect_rollout(env, policy, update):
    logps, values, rewards, dones = [], [], [], []
    ep_ret = torch.zeros(env.n, device="cuda")
    finished = []
    obs = env.obs
    t0 = time.time()
    for t in range(HORIZON):
        logits, value = policy(obs)
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        logps.append(dist.log_prob(action))
        values.append(value)
        obs, reward, done = env.step(action)
        rewards.append(reward)
        dones.append(done)
        ep_ret += reward
        finished.extend(ep_ret[done].tolist())
        ep_ret[done] = 0
        if (t + 1) % 8 == 0:
            recent = finished[-500:]
            print(f"update {update} step {t + 1}/{HORIZON} episodes {len(finished)} "
                  f"mean_return {sum(recent) / max(len(recent), 1):.2f} "
                  f"fps {int(N_ENVS * (t + 1) / (time.time() - t0))}")
    return logps, values, rewards, dones


env = VecEnv(N_ENVS)
policy = Policy().cuda()
opt = torch.optim.Adam(policy.parameters(), lr=2.5e-4)
print(f"PPO: {N_ENVS} envs x {HORIZON} steps per update")
for update in range(1, 1001):
    logps, values, rewards, dones = collect_rollout(env, policy, update)
    returns = torch.stack(rewards).flip(0).cumsum(0).flip(0)
    adv = returns - torch.stack(values).detach()
    loss = -(torch.stack(logps) * adv).mean() + 0.5 * (torch.stack(values) - returns).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
''')


def s26d_superres_8k_tiles():
    # run.sh's holder leaves 12 GiB. A 4x super-resolution script (an ESRGAN-like conv net in
    # fp16) upscales a 7680 x 4320 frame tile by tile into a float32 output canvas (and its
    # weight map) kept on the card, ~7.9 GiB; the first 1024 px tile's high-resolution
    # activations do not fit in what is left. tqdm bar over the tiles.
    run_user_script("upscale", r'''import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

SCALE, TILE, PAD = 4, 1024, 32


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(c, c, 3, 1, 1), nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        return x + 0.2 * self.c2(F.leaky_relu(self.c1(x), 0.2))


class SRNet(nn.Module):
    def __init__(self, c=64, blocks=8):
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, 1, 1)
        self.body = nn.Sequential(*[ResBlock(c) for _ in range(blocks)])
        self.up1, self.up2 = nn.Conv2d(c, c * 4, 3, 1, 1), nn.Conv2d(c, c * 4, 3, 1, 1)
        self.hr, self.tail = nn.Conv2d(c, c, 3, 1, 1), nn.Conv2d(c, 3, 3, 1, 1)

    def forward(self, x):
        f = self.head(x)
        f = f + self.body(f)
        f = F.leaky_relu(F.pixel_shuffle(self.up1(f), 2), 0.2)
        f = F.leaky_relu(F.pixel_shuffle(self.up2(f), 2), 0.2)
        return self.tail(F.leaky_relu(self.hr(f), 0.2))


model = SRNet().cuda().half().eval()
frame = np.random.default_rng(0).integers(0, 256, (4320, 7680, 3), dtype=np.uint8)
img = torch.from_numpy(frame).cuda().permute(2, 0, 1)[None].half() / 255
_, _, H, W = img.shape
print(f"input {W}x{H} -> output {W * SCALE}x{H * SCALE}, tile {TILE} pad {PAD}")
out = torch.zeros(1, 3, H * SCALE, W * SCALE, device="cuda")
weight = torch.zeros(1, 1, H * SCALE, W * SCALE, device="cuda")
tiles = [(y, x) for y in range(0, H, TILE) for x in range(0, W, TILE)]
with torch.inference_mode():
    for y, x in tqdm(tiles, desc="upscaling", unit="tile"):
        y0, x0 = max(y - PAD, 0), max(x - PAD, 0)
        y1, x1 = min(y + TILE + PAD, H), min(x + TILE + PAD, W)
        sr = model(img[:, :, y0:y1, x0:x1]).float()
        out[:, :, y0 * SCALE:y1 * SCALE, x0 * SCALE:x1 * SCALE] += sr
        weight[:, :, y0 * SCALE:y1 * SCALE, x0 * SCALE:x1 * SCALE] += 1
result = (out / weight).clamp(0, 1)
print("done", tuple(result.shape))
''')


def s26d_conformer_long_audio_batch():
    # run.sh's holder leaves 20 GiB. A batch transcription script runs a hand-written fp16
    # conformer (full self-attention, 4x subsampling) over a manifest of three recordings; the
    # second is a one-hour meeting whose attention scores (4 x 90k x 90k) cannot fit. The loop's
    # handler prints only `ERROR <file>: <type>: <message>`, goes on, and exits 1 at the end:
    # the text does not show where it failed.
    run_user_script("transcribe_batch", r'''import math
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SR, N_FFT, HOP, N_MELS, D, HEADS, LAYERS, VOCAB = 16000, 400, 160, 80, 256, 4, 12, 1024


def log(msg):
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} | {msg}", flush=True)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, 4 * D), nn.SiLU(), nn.Linear(4 * D, D))

    def forward(self, x):
        return self.net(x)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm, self.qkv, self.out = nn.LayerNorm(D), nn.Linear(D, 3 * D), nn.Linear(D, D)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.qkv(self.norm(x)).view(B, T, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(D // HEADS)
        att = att.softmax(dim=-1)
        return self.out((att @ v).transpose(1, 2).reshape(B, T, D))


class ConvModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.pw1, self.dw = nn.Conv1d(D, 2 * D, 1), nn.Conv1d(D, D, 31, padding=15, groups=D)
        self.bn, self.pw2 = nn.BatchNorm1d(D), nn.Conv1d(D, D, 1)

    def forward(self, x):
        y = F.glu(self.pw1(self.norm(x).transpose(1, 2)), dim=1)
        return self.pw2(F.silu(self.bn(self.dw(y)))).transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ff1, self.mhsa, self.conv, self.ff2 = FeedForward(), SelfAttention(), ConvModule(), FeedForward()
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        x = x + self.mhsa(x)
        x = x + self.conv(x)
        return self.norm(x + 0.5 * self.ff2(x))


class ConformerCTC(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = nn.Sequential(nn.Conv1d(N_MELS, D, 3, 2, 1), nn.SiLU(), nn.Conv1d(D, D, 3, 2, 1), nn.SiLU())
        self.blocks = nn.ModuleList([ConformerBlock() for _ in range(LAYERS)])
        self.ctc = nn.Linear(D, VOCAB)

    def forward(self, mel):
        x = self.sub(mel).transpose(1, 2)
        for block in self.blocks:
            x = block(x)
        return self.ctc(x)


def log_mel(wav, fbank):
    spec = torch.stft(wav, N_FFT, HOP, window=torch.hann_window(N_FFT, device=wav.device), return_complex=True)
    return torch.log(fbank @ spec.abs().pow(2) + 1e-6)


fbank = torch.from_numpy(np.abs(np.random.default_rng(1).normal(size=(N_MELS, N_FFT // 2 + 1))).astype(np.float32)).cuda()
model = ConformerCTC().cuda().half().eval()
log(f"conformer-ctc: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params, fp16, cuda")
manifest = [("standup_2026-03-02.wav", 42.0), ("allhands_2026-03-05.wav", 3605.3), ("interview_0412.wav", 610.0)]
ok, failed = 0, 0
rng = np.random.default_rng(0)
for path, seconds in manifest:
    wav = torch.from_numpy(rng.standard_normal(int(seconds * SR), dtype=np.float32) * 0.05).cuda()
    log(f"transcribing {path} ({seconds:.1f} s)")
    t0 = time.time()
    try:
        with torch.inference_mode():
            logits = model(log_mel(wav, fbank).half()[None])
            ids = torch.unique_consecutive(logits.argmax(-1)[0])
            ids = ids[ids != 0]
        ok += 1
        log(f"done {path}: {ids.numel()} tokens, rtf {(time.time() - t0) / seconds:.4f}")
    except Exception as e:
        failed += 1
        log(f"ERROR {path}: {type(e).__name__}: {e}")
log(f"finished: {ok} transcribed, {failed} failed")
sys.exit(1 if failed else 0)
''')


def s26d_hf_trainer_predict_lm_logits():
    # run.sh's holder leaves 6 GiB. Trainer.predict() over 512 sequences of 1024 tokens with the
    # bf16 causal LM and no eval_accumulation_steps: the Trainer keeps every batch's 8 x 1024 x
    # 32000 logits on the card and concatenates them; a few batches in, it runs out (on the H200
    # in the loss's float32 upcast of the logits inside the model's forward).
    run_user_script("predict_logits", r'''import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


class TokenDataset(torch.utils.data.Dataset):
    def __init__(self, n, length):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(3, 32000, (n, length), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16)
args = TrainingArguments(output_dir="predict-out", per_device_eval_batch_size=8, bf16=True,
                         report_to="none", dataloader_num_workers=0)
trainer = Trainer(model=model, args=args)
out = trainer.predict(TokenDataset(512, 1024))
print(out.metrics)
torch.save(torch.from_numpy(out.predictions), "token_logits.pt")
'''.replace("@CKPT@", CKPT))


def s26d_checkpoint_stages_reentrant_vit():
    # run.sh's holder leaves 8 GiB. A ViT-L-sized classifier on 1024 x 1024 images (4096
    # tokens, batch 16, bf16 autocast) wraps each of its two 8-block stages in
    # torch.utils.checkpoint(use_reentrant=True): the forward keeps only the stages' inputs and
    # fits; in backward, CheckpointFunction recomputes the last stage with grad enabled, keeping
    # all eight blocks' activations, and runs out inside that recomputation.
    run_user_script("train_vit_ckpt", r'''import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

IMG, PATCH, D, HEADS, DEPTH, STAGES, BATCH, CLASSES = 1024, 16, 1024, 16, 16, 2, 16, 62


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.qkv, self.proj = nn.LayerNorm(D), nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.norm2, self.fc1, self.fc2 = nn.LayerNorm(D), nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        B, N, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, N, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, N, D))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class ViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, D, PATCH, PATCH)
        self.pos = nn.Parameter(torch.zeros(1, (IMG // PATCH) ** 2, D))
        per = DEPTH // STAGES
        self.stages = nn.ModuleList([nn.Sequential(*[Block() for _ in range(per)]) for _ in range(STAGES)])
        self.norm, self.head = nn.LayerNorm(D), nn.Linear(D, CLASSES)

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2) + self.pos
        for stage in self.stages:
            x = checkpoint(stage, x, use_reentrant=True)
        return self.head(self.norm(x.mean(1)))


model = ViT().cuda().train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)
log(f"ViT {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M params, {(IMG // PATCH) ** 2} tokens, "
    f"batch {BATCH}, activation checkpointing per stage ({STAGES} stages)")
for step in range(10000):
    imgs = torch.randn(BATCH, 3, IMG, IMG, device="cuda")
    labels = torch.randint(0, CLASSES, (BATCH,), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(imgs), labels)
    log(f"step {step} forward done, loss {loss.item():.4f}, "
        f"allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
''')


def s26d_vae_decode_memory_summary():
    # run.sh's holder leaves 6 GiB. A latent-decoding script (a hand-written VAE decoder whose mid
    # block has single-head attention over the 128 x 128 latent, 16384 tokens) decodes 8 latents
    # at once; the attention scores (8 x 16384 x 16384 fp16, 4 GiB) and their softmax do not fit.
    # Its handler prints torch.cuda.memory_summary() to stderr and re-raises. On the H200 (torch
    # 2.11, session 26 d) the first bmm failed with CUBLAS_STATUS_ALLOC_FAILED at cublasCreate
    # (not an OutOfMemoryError, so the handler did not run); run.sh left a note and no text.
    run_user_script("decode_latents", r'''import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class ResnetBlock(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, c_in), nn.Conv2d(c_in, c_out, 3, 1, 1)
        self.n2, self.c2 = nn.GroupNorm(32, c_out), nn.Conv2d(c_out, c_out, 3, 1, 1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x):
        h = self.c1(F.silu(self.n1(x)))
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class AttnBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm, self.qkv, self.out = nn.GroupNorm(32, c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

    def forward(self, x):
        B, C, H, W = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(B, 3, C, H * W).unbind(1)
        w = torch.bmm(q.transpose(1, 2), k) * C ** -0.5
        w = w.softmax(dim=-1)
        h = torch.bmm(v, w.transpose(1, 2)).reshape(B, C, H, W)
        return x + self.out(h)


class Decoder(nn.Module):
    def __init__(self, ch=(512, 512, 256, 128)):
        super().__init__()
        self.conv_in = nn.Conv2d(4, ch[0], 3, 1, 1)
        self.mid = nn.Sequential(ResnetBlock(ch[0], ch[0]), AttnBlock(ch[0]), ResnetBlock(ch[0], ch[0]))
        ups = []
        for a, b in zip(ch, ch[1:] + (ch[-1],)):
            ups += [ResnetBlock(a, b), nn.Upsample(scale_factor=2), nn.Conv2d(b, b, 3, 1, 1)]
        self.up = nn.Sequential(*ups[:-2])
        self.conv_out = nn.Sequential(nn.GroupNorm(32, ch[-1]), nn.SiLU(), nn.Conv2d(ch[-1], 3, 3, 1, 1))

    def forward(self, z):
        return self.conv_out(self.up(self.mid(self.conv_in(z / 0.18215))))


decoder = Decoder().cuda().half().eval()
latents = torch.randn(8, 4, 128, 128, device="cuda", dtype=torch.float16)
print(f"decoding {latents.shape[0]} latents {tuple(latents.shape[1:])} -> {latents.shape[-1] * 8}px images")
try:
    with torch.no_grad():
        images = decoder(latents)
except torch.OutOfMemoryError:
    print("CUDA OOM while decoding; allocator state:", file=sys.stderr)
    print(torch.cuda.memory_summary(), file=sys.stderr)
    raise
images = ((images.float().clamp(-1, 1) + 1) * 127.5).byte().cpu()
print("decoded", tuple(images.shape))
''')


def s26d_hf_beam8_batch_summaries():
    # run.sh's holder leaves 5 GiB. A summarisation job runs generate(num_beams=8) over
    # batches of 4 documents; batch 1 (short documents) works, batches 2 and 3 (3100-token
    # documents, 32 beams' KV cache) run out in the prefill. The loop prints
    # `batch i/n: FAILED (<type>: <message>)`, goes on, and exits 1 with a count: the text does
    # not show where it failed.
    run_user_script("summarize_beams", r'''import sys
import time

import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda").eval()
g = torch.Generator().manual_seed(0)
lengths = [480, 512, 455, 500] + [3100, 3050, 2990, 3100] + [3080, 2900, 3010, 3100]
docs = [torch.randint(3, 32000, (n,), generator=g) for n in lengths]
batches = [docs[i:i + 4] for i in range(0, len(docs), 4)]
done, failed = 0, 0
print(f"summarizing {len(docs)} documents in {len(batches)} batches (num_beams=8, max_new_tokens=48)")
for bi, batch in enumerate(batches, 1):
    width = max(len(d) for d in batch)
    ids = torch.zeros(len(batch), width, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, d in enumerate(batch):
        ids[r, width - len(d):] = d
        mask[r, width - len(d):] = 1
    t0 = time.time()
    try:
        with torch.inference_mode():
            out = model.generate(input_ids=ids.cuda(), attention_mask=mask.cuda(), num_beams=8,
                                 max_new_tokens=48, early_stopping=True, length_penalty=1.0,
                                 pad_token_id=0, eos_token_id=2)
        done += len(batch)
        print(f"batch {bi}/{len(batches)}: ok, {out.shape[1] - width} new tokens, {time.time() - t0:.1f} s")
    except Exception as e:
        failed += len(batch)
        print(f"batch {bi}/{len(batches)}: FAILED ({type(e).__name__}: {e})")
        torch.cuda.empty_cache()
print(f"summarized {done}/{len(docs)} documents, {failed} failed")
sys.exit(1 if failed else 0)
'''.replace("@CKPT@", CKPT))


def s26d_hf_resume_torch_load_cuda():
    # run.sh's holder leaves 3 GiB. A plain-PyTorch fine-tune resumes: it loads the base model
    # on the card, then torch.load(last.pth, map_location="cuda", weights_only=True) of a
    # checkpoint holding the model and its EMA copy (2.2 GB of bf16): torch.load runs out part
    # way through. Timestamped logging.
    import torch
    from safetensors.torch import load_file

    run_dir = os.path.join(WORK, "runs", "sft-7")
    os.makedirs(run_dir, exist_ok=True)
    last = os.path.join(run_dir, "last.pth")
    if not os.path.exists(last):
        sd = load_file(os.path.join(CKPT, "model.safetensors"))
        torch.save({"step": 12000, "model": sd, "ema": {k: v.clone() for k, v in sd.items()},
                    "lr": 1.2e-5}, last)
        del sd
    run_user_script("finetune", r'''import argparse
import logging

import torch
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s %(name)s %(levelname)s: %(message)s", level=logging.INFO)
log = logging.getLogger("finetune")
parser = argparse.ArgumentParser()
parser.add_argument("--base", default="@CKPT@")
parser.add_argument("--resume", default="runs/sft-7/last.pth")
args = parser.parse_args()

log.info("loading base model %s", args.base)
model = AutoModelForCausalLM.from_pretrained(args.base, dtype=torch.bfloat16, device_map="cuda")
log.info("base model on %s, %.2f GiB allocated", model.device, torch.cuda.memory_allocated() / 2**30)
log.info("resuming from %s", args.resume)
state = torch.load(args.resume, map_location="cuda", weights_only=True)
model.load_state_dict(state["model"])
ema = {k: v for k, v in state["ema"].items()}
log.info("resumed at step %d (lr %.2e)", state["step"], state["lr"])
'''.replace("@CKPT@", CKPT))


def s27_tv_retinanet_dense_gt_train():
    # run.sh's holder leaves 10 GiB. A torchvision RetinaNet (ResNet-50 FPN, random weights,
    # 2 classes) trained on 1024 x 1024 microscopy tiles with 3000-6000 nuclei boxes each, batch 2
    # through a custom collate (tuple(zip(*batch))), printed in the style of torchvision's
    # detection references. The loss matches every ground-truth box against all 196416 anchors
    # (box_iou: a gt x anchors x 2 float32 intermediate of several GiB per image) after the
    # training forward; it runs out in the first iteration.
    run_user_script("train_nuclei_retinanet", r'''import datetime
import time

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import retinanet_resnet50_fpn

EPOCHS, BATCH, WORKERS, LR, PRINT_FREQ = 26, 2, 4, 0.01, 20


class NucleiTiles(Dataset):
    """1024 px tiles; boxes come from the instance masks (3000-6000 nuclei per tile)."""

    def __init__(self, n, size=1024, seed=0):
        self.n, self.size, self.seed = n, size, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed + i)
        img = torch.rand(3, self.size, self.size, generator=g)
        k = int(torch.randint(3000, 6000, (1,), generator=g))
        centers = torch.rand(k, 2, generator=g) * (self.size - 24) + 12
        wh = torch.rand(k, 2, generator=g) * 14 + 6
        boxes = torch.cat([centers - wh / 2, centers + wh / 2], dim=1)
        target = {"boxes": boxes, "labels": torch.ones(k, dtype=torch.int64), "image_id": torch.tensor(i)}
        return img, target


def collate_fn(batch):
    return tuple(zip(*batch))


def main():
    device = torch.device("cuda")
    print("Loading data")
    train_set = NucleiTiles(500)
    print("Creating data loaders")
    loader = DataLoader(train_set, batch_size=BATCH, shuffle=True, num_workers=WORKERS, collate_fn=collate_fn)
    print("Creating model")
    model = retinanet_resnet50_fpn(weights=None, weights_backbone=None, num_classes=2, min_size=1024,
                                   max_size=1024, detections_per_img=3000)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=LR, momentum=0.9, weight_decay=1e-4)
    print("Start training")
    start = time.time()
    for epoch in range(EPOCHS):
        model.train()
        t0 = time.time()
        for i, (images, targets) in enumerate(loader):
            images = [img.to(device) for img in images]
            targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
            loss_dict = model(images, targets)
            losses = sum(loss for loss in loss_dict.values())
            optimizer.zero_grad()
            losses.backward()
            optimizer.step()
            if i % PRINT_FREQ == 0:
                eta = datetime.timedelta(seconds=int((time.time() - t0) / (i + 1) * (len(loader) - i)))
                parts = "  ".join(f"{k}: {v.item():.4f}" for k, v in loss_dict.items())
                print(f"Epoch: [{epoch}]  [{i:>3}/{len(loader)}]  eta: {eta}  lr: {LR:.6f}  loss: {losses.item():.4f}  "
                      f"{parts}  max mem: {torch.cuda.max_memory_allocated() // 2**20:.0f}")
    print(f"Training time {datetime.timedelta(seconds=int(time.time() - start))}")


if __name__ == "__main__":
    main()
''')


def s27_vocoder_jsonl_worker():
    # run.sh's holder leaves 4 GiB. A vocoder worker (a hand-written HiFi-GAN-like generator in
    # fp16 under inference_mode) drains a spool of JSON requests, one JSON response per line on
    # stdout and logging on stderr. Two short requests work; the third, a 20-minute audiobook
    # chapter (103k mel frames) rendered in one pass, runs out in the upsampling stages; its
    # handler answers {"status": "error", "error": "<type>: <message>"} and goes on; the worker
    # exits 1 at the end because a request failed.
    spool = os.path.join(WORK, "spool")
    os.makedirs(spool, exist_ok=True)
    requests = [
        {"id": "req-5c01", "voice": "narrator-en-f2", "mel_frames": 431, "sample_rate": 22050},
        {"id": "req-5c02", "voice": "narrator-en-f2", "mel_frames": 2584, "sample_rate": 22050},
        {"id": "req-5c03", "voice": "narrator-en-m1", "mel_frames": 103359, "sample_rate": 22050,
         "meta": {"book": "b-88213", "chapter": 7}},
        {"id": "req-5c04", "voice": "narrator-en-f2", "mel_frames": 1207, "sample_rate": 22050},
    ]
    import json

    with open(os.path.join(spool, "requests.jsonl"), "w") as fh:
        for request in requests:
            fh.write(json.dumps(request) + "\n")
    run_user_script("vocoder_worker", r'''import json
import logging
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(format="%(asctime)s %(levelname)-7s %(name)s: %(message)s", level=logging.INFO, stream=sys.stderr)
log = logging.getLogger("vocoder.worker")
SR, HOP, N_MELS = 22050, 256, 80


class ResBlock(nn.Module):
    def __init__(self, c, k, dilations=(1, 3, 5)):
        super().__init__()
        self.convs1 = nn.ModuleList([nn.Conv1d(c, c, k, 1, dilation=d, padding=d * (k - 1) // 2) for d in dilations])
        self.convs2 = nn.ModuleList([nn.Conv1d(c, c, k, 1, padding=(k - 1) // 2) for _ in dilations])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            x = x + c2(F.leaky_relu(c1(F.leaky_relu(x, 0.1)), 0.1))
        return x


class Generator(nn.Module):
    def __init__(self, ch=512, rates=(8, 8, 2, 2), kernels=(16, 16, 4, 4)):
        super().__init__()
        self.pre = nn.Conv1d(N_MELS, ch, 7, 1, 3)
        self.ups, self.mrf = nn.ModuleList(), nn.ModuleList()
        for i, (r, k) in enumerate(zip(rates, kernels)):
            c_in, c_out = ch // 2 ** i, ch // 2 ** (i + 1)
            self.ups.append(nn.ConvTranspose1d(c_in, c_out, k, r, (k - r) // 2))
            self.mrf.append(nn.ModuleList([ResBlock(c_out, k) for k in (3, 7, 11)]))
        self.post = nn.Conv1d(c_out, 1, 7, 1, 3)

    def forward(self, mel):
        x = self.pre(mel)
        for up, blocks in zip(self.ups, self.mrf):
            x = up(F.leaky_relu(x, 0.1))
            x = sum(block(x) for block in blocks) / len(blocks)
        return torch.tanh(self.post(F.leaky_relu(x)))


def handle(model, req):
    t0 = time.time()
    # the acoustic model's mel frames arrive through the feature store; random here
    mel = torch.randn(1, N_MELS, req["mel_frames"], device="cuda", dtype=torch.float16)
    with torch.inference_mode():
        audio = model(mel).float().clamp_(-1, 1)
    pcm = (audio[0, 0] * 32767).to(torch.int16).cpu()
    seconds = pcm.numel() / SR
    return {"id": req["id"], "status": "ok", "audio_seconds": round(seconds, 2),
            "rtf": round((time.time() - t0) / seconds, 4)}


def main(spool="spool/requests.jsonl"):
    model = Generator().cuda().half().eval()
    log.info("generator ready: %.1fM params, fp16, %s", sum(p.numel() for p in model.parameters()) / 1e6,
             torch.cuda.get_device_name(0))
    ok = failed = 0
    with open(spool) as fh:
        for line in fh:
            req = json.loads(line)
            log.info("request %s voice=%s frames=%d", req["id"], req["voice"], req["mel_frames"])
            try:
                resp = handle(model, req)
                ok += 1
            except Exception as e:
                failed += 1
                resp = {"id": req["id"], "status": "error", "code": 500, "error": f"{type(e).__name__}: {e}"}
                torch.cuda.empty_cache()
            print(json.dumps(resp), flush=True)
    log.info("spool drained: %d ok, %d failed", ok, failed)
    if failed:
        log.error("exiting with status 1 (%d failed request(s))", failed)
        sys.exit(1)


if __name__ == "__main__":
    main()
''')


def s27_video_cv2_sliding_clips():
    # run.sh's holder leaves 16 GiB. An action-recognition script decodes a 10 s 720p clip with
    # OpenCV (tqdm over frames), moves all frames to the card as float, cuts them into 59
    # overlapping 16-frame windows (unfold + contiguous, ~10 GiB) and runs torchvision's r3d_18
    # (random weights) on all windows at once under no_grad: the stem's output for 59 windows at
    # full resolution does not fit.
    import numpy as np

    import cv2

    path = os.path.join(WORK, "videos", "cam03_2026-02-11_0815.mp4")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"mp4v"), 25.0, (1280, 720))
        if not writer.isOpened():
            sys.exit(f"cv2.VideoWriter cannot write {path}: s27_video_cv2_sliding_clips cannot run")
        yy, xx = np.mgrid[0:720, 0:1280]
        base = np.stack([(xx // 5) % 256, (yy // 3) % 256, ((xx + yy) // 7) % 256], -1).astype(np.uint8)
        for t in range(250):
            writer.write(np.ascontiguousarray(np.roll(base, 4 * t, axis=1)))
        writer.release()
    run_user_script("classify_clip", r'''import sys
import time

import cv2
import numpy as np
import torch
import torchvision
from tqdm import tqdm

CLIP, STRIDE = 16, 4
MEAN = torch.tensor([0.43216, 0.394666, 0.37645]).view(3, 1, 1, 1)
STD = torch.tensor([0.22803, 0.22145, 0.216989]).view(3, 1, 1, 1)


def read_frames(path):
    cap = cv2.VideoCapture(path)
    if not cap.isOpened():
        raise RuntimeError(f"cannot open {path}")
    n, fps = int(cap.get(cv2.CAP_PROP_FRAME_COUNT)), cap.get(cv2.CAP_PROP_FPS)
    frames = []
    for _ in tqdm(range(n), desc="decoding", unit="frame"):
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    cap.release()
    return np.stack(frames), fps


path = sys.argv[1] if len(sys.argv) > 1 else "videos/cam03_2026-02-11_0815.mp4"
frames, fps = read_frames(path)
print(f"{path}: {len(frames)} frames, {frames.shape[2]}x{frames.shape[1]} @ {fps:.1f} fps")
model = torchvision.models.video.r3d_18(weights=None, num_classes=400).cuda().eval()
video = torch.from_numpy(frames).cuda().permute(3, 0, 1, 2).float().div_(255)  # C, T, H, W
video = (video - MEAN.cuda()) / STD.cuda()
clips = video.unfold(1, CLIP, STRIDE).permute(1, 0, 4, 2, 3).contiguous()  # N, C, CLIP, H, W
print(f"scoring {clips.shape[0]} windows of {CLIP} frames (stride {STRIDE})")
t0 = time.time()
with torch.no_grad():
    logits = model(clips)
probs = logits.softmax(-1).mean(0)
top = probs.topk(5)
print("top-5:", [(int(i), round(float(p), 4)) for p, i in zip(top.values, top.indices)], f"{time.time() - t0:.1f} s")
''')


def s27_jax_spectral_ns_rk4():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.10 (run.sh): ~14 GiB for JAX. A pseudo-spectral
    # incompressible Navier-Stokes solver (Taylor-Green start, 768^3 grid, velocity kept as three
    # rfftn'd complex64 components, 5.4 GiB) whose jitted RK4 step evaluates the rotational
    # nonlinear term with 9 inverse and 3 forward FFTs per stage; the initial condition fits, the
    # first RK4 step does not. On the H200 (jax 0.11.2, session 27) XLA warned that
    # rematerialization could not bring the step below 37.39 GiB, the BFC allocator logged its
    # failure, and the RESOURCE_EXHAUSTED error surfaced at step 50's float(energy(state)) (async
    # dispatch), naming jit_energy. (Session 27's first run stopped earlier on an OverflowError
    # from N ** 6 as a Python int; it divides by float(N) ** 6 since.)
    run_user_script("dns_taylor_green", r'''import math
import time

import jax
import jax.numpy as jnp

N, NU, DT, STEPS = 768, 1.0 / 1600, 2e-3, 5000
L = 2 * math.pi
x = jnp.linspace(0.0, L, N, endpoint=False, dtype=jnp.float32)
k1d = jnp.fft.fftfreq(N, 1.0 / N).astype(jnp.float32)
kr = jnp.fft.rfftfreq(N, 1.0 / N).astype(jnp.float32)


def wavenumbers():
    kx, ky, kz = k1d[:, None, None], k1d[None, :, None], kr[None, None, :]
    k2 = kx * kx + ky * ky + kz * kz
    return kx, ky, kz, jnp.where(k2 == 0, 1.0, k2)


@jax.jit
def taylor_green():
    X, Y, Z = x[:, None, None], x[None, :, None], x[None, None, :]
    u = jnp.sin(X) * jnp.cos(Y) * jnp.cos(Z)
    v = -jnp.cos(X) * jnp.sin(Y) * jnp.cos(Z)
    return jnp.fft.rfftn(u), jnp.fft.rfftn(v), jnp.zeros((N, N, N // 2 + 1), jnp.complex64)


def rhs(uh, vh, wh):
    kx, ky, kz, k2 = wavenumbers()
    irf = lambda a: jnp.fft.irfftn(a, s=(N, N, N))
    u, v, w = irf(uh), irf(vh), irf(wh)
    ox = irf(1j * (ky * wh - kz * vh))
    oy = irf(1j * (kz * uh - kx * wh))
    oz = irf(1j * (kx * vh - ky * uh))
    nx, ny, nz = jnp.fft.rfftn(v * oz - w * oy), jnp.fft.rfftn(w * ox - u * oz), jnp.fft.rfftn(u * oy - v * ox)
    div = (kx * nx + ky * ny + kz * nz) / k2
    return (nx - kx * div - NU * k2 * uh, ny - ky * div - NU * k2 * vh, nz - kz * div - NU * k2 * wh)


@jax.jit
def rk4_step(state):
    def axpy(a, ks):
        return tuple(s + a * k for s, k in zip(state, ks))

    k1 = rhs(*state)
    k2 = rhs(*axpy(0.5 * DT, k1))
    k3 = rhs(*axpy(0.5 * DT, k2))
    k4 = rhs(*axpy(DT, k3))
    return tuple(s + DT / 6 * (a + 2 * b + 2 * c + d) for s, a, b, c, d in zip(state, k1, k2, k3, k4))


@jax.jit
def energy(state):
    return 0.5 * sum(jnp.sum(jnp.abs(c) ** 2) for c in state) / float(N) ** 6


print(f"DNS Taylor-Green: N={N}^3, nu={NU:.2e}, dt={DT}, devices={jax.devices()}")
state = taylor_green()
print(f"initial energy {float(energy(state)):.6f}")
t0 = time.time()
for step in range(1, STEPS + 1):
    state = rk4_step(state)
    if step % 50 == 0:
        print(f"step {step:5d} t={step * DT:.3f} E={float(energy(state)):.6f} ({time.time() - t0:.0f} s)")
''')


def s27_moe_dense_dispatch_einsum():
    # No holder: the card is empty. A switch-style MoE LM (64 experts, capacity factor 1.25,
    # bf16) routes 32 x 4096 tokens with DeepSpeed-style dense gating tensors: combine weights
    # einsum("se,sc->sec") in float32 (80 GiB for 131072 tokens x 64 experts x 2560 slots), its
    # .bool() dispatch mask, then the mask cast to bf16 for the dispatch einsum: together more
    # than the whole 140 GiB card, in the first forward.
    run_user_script("train_switch_moe", r'''import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, D, HEADS, LAYERS, EXPERTS, CAPACITY_FACTOR = 32000, 1024, 16, 2, 64, 1.25
BATCH, SEQ = 32, 4096
TOKENS = BATCH * SEQ
CAPACITY = int(CAPACITY_FACTOR * TOKENS / EXPERTS)


def top1gating(logits):
    gates = logits.float().softmax(dim=-1)                              # [S, E]
    gate, expert = gates.max(dim=-1)
    mask1 = F.one_hot(expert, EXPERTS).float()                          # [S, E]
    locations1 = torch.cumsum(mask1, dim=0) - 1
    mask1 = mask1 * (locations1 < CAPACITY).float()                     # drop over-capacity tokens
    locations1_s = (locations1 * mask1).sum(dim=1).long()
    gates1_s = gate * mask1.sum(dim=1)
    locations1_sc = F.one_hot(locations1_s, CAPACITY).float()           # [S, C]
    combine_weights = torch.einsum("se,sc->sec", gates1_s[:, None] * mask1, locations1_sc)
    dispatch_mask = combine_weights.bool()
    return combine_weights, dispatch_mask


class SwitchFFN(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(D, EXPERTS, bias=False)
        self.w1 = nn.Parameter(torch.randn(EXPERTS, D, 4 * D) * D ** -0.5)
        self.w2 = nn.Parameter(torch.randn(EXPERTS, 4 * D, D) * (4 * D) ** -0.5)

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, D)
        combine_weights, dispatch_mask = top1gating(self.router(x))
        dispatched = torch.einsum("sec,sm->ecm", dispatch_mask.type_as(x), x)    # [E, C, D]
        h = torch.bmm(F.gelu(torch.bmm(dispatched, self.w1)), self.w2)
        out = torch.einsum("sec,ecm->sm", combine_weights.type_as(x), h)
        return out.reshape(shape)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.qkv, self.proj = nn.LayerNorm(D), nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.ln2, self.moe = nn.LayerNorm(D), SwitchFFN()

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, D))
        return x + self.moe(self.ln2(x))


class MoELM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids):
        x = self.emb(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


torch.manual_seed(0)
model = MoELM().cuda().to(torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
print(f"switch-moe: {sum(p.numel() for p in model.parameters()) / 1e9:.2f}B params, {EXPERTS} experts, "
      f"capacity {CAPACITY} tokens/expert, {TOKENS} tokens/batch ({BATCH}x{SEQ})")
t0 = time.time()
for step in range(100000):
    ids = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device="cuda")
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1).float(), ids[:, 1:].flatten())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f} {TOKENS * (step + 1) / (time.time() - t0):.0f} tok/s")
''')


def s27_transformer_fastpath_eval():
    # run.sh's holder leaves 6 GiB. A document classifier built on nn.TransformerEncoder
    # (12 layers, d=1024, batch_first, enable_nested_tensor) scores a corpus in fp16 under
    # inference_mode with a src_key_padding_mask, 512 documents (64-2048 tokens) a batch, tqdm
    # bar: PyTorch's encoder fast path converts the padded batch to a nested tensor and runs
    # torch._transformer_encoder_layer_fwd, which runs out in the first batch.
    run_user_script("score_documents", r'''import time

import torch
import torch.nn as nn
from tqdm import tqdm

VOCAB, D, HEADS, LAYERS, MAXLEN, CLASSES = 50000, 1024, 16, 12, 2048, 20
BATCH, N_DOCS = 512, 200_000


class DocClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D, padding_idx=0)
        self.pos = nn.Embedding(MAXLEN, D)
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.1, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=True)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, ids):
        pad = ids.eq(0)
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        h = self.encoder(x, src_key_padding_mask=pad)
        h = h.masked_fill(pad[..., None], 0).sum(1) / (~pad).sum(1, keepdim=True)
        return self.head(h)


def batches(g):
    for start in range(0, N_DOCS, BATCH):
        lengths = torch.randint(64, MAXLEN + 1, (min(BATCH, N_DOCS - start),), generator=g)
        ids = torch.randint(1, VOCAB, (len(lengths), int(lengths.max())), generator=g)
        ids[torch.arange(ids.shape[1])[None, :] >= lengths[:, None]] = 0
        yield ids


model = DocClassifier().cuda().half().eval()
print(f"classifier: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M params, fp16, batch {BATCH}")
g = torch.Generator().manual_seed(0)
labels = []
with torch.inference_mode():
    for ids in tqdm(batches(g), total=(N_DOCS + BATCH - 1) // BATCH, desc="scoring", unit="batch"):
        labels.append(model(ids.cuda(non_blocking=True)).argmax(-1).cpu())
labels = torch.cat(labels)
print("class histogram:", torch.bincount(labels, minlength=CLASSES).tolist())
''')


def s27_numba_knn_kernel_numpy_attr():
    # Not a GPU OOM. A numba.cuda kernel that averages node features over a k-NN graph (meant to
    # read through a uint32 -1 sentinel: see s27_cupy_uint32_sentinel_illegal). On the H200 image
    # (numba-cuda with numpy 2.5, session 27) the kernel never compiles: numba-cuda's typing
    # registry calls np.row_stack, which numpy 2.5 no longer has (AttributeError); the arrays were
    # already on the card, and numba's INFO logging prints its "add pending dealloc: cuMemFree
    # <bytes> bytes" lines after the traceback.
    run_user_script("knn_mean_features", r'''import logging
import time

import numpy as np
from numba import cuda

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("features")
N_NODES, K, DIM = 2_000_000, 32, 64


@cuda.jit
def mean_aggregate(neighbors, features, out):
    i = cuda.grid(1)
    if i >= neighbors.shape[0]:
        return
    for d in range(features.shape[1]):
        acc = 0.0
        for j in range(neighbors.shape[1]):
            acc += features[neighbors[i, j], d]
        out[i, d] = acc / neighbors.shape[1]


rng = np.random.default_rng(0)
knn = rng.integers(0, N_NODES, (N_NODES, K), dtype=np.int64)
isolated = rng.choice(N_NODES, 5000, replace=False)
knn[isolated, K // 2:] = -1           # the index returns -1 where a node has fewer than K neighbours
knn = knn.astype(np.uint32)           # halve the graph's memory
features = rng.standard_normal((N_NODES, DIM), dtype=np.float32)
log.info("knn graph %s %s, features %s %s", knn.shape, knn.dtype, features.shape, features.dtype)
t0 = time.time()
d_knn, d_feat = cuda.to_device(knn), cuda.to_device(features)
d_out = cuda.device_array((N_NODES, DIM), dtype=np.float32)
threads = 256
blocks = (N_NODES + threads - 1) // threads
log.info("launching mean_aggregate<<<%d, %d>>>", blocks, threads)
mean_aggregate[blocks, threads](d_knn, d_feat, d_out)
smoothed = d_out.copy_to_host()
log.info("aggregated in %.2f s; writing features_smoothed.npy", time.time() - t0)
np.save("features_smoothed.npy", smoothed)
''')


def s27_cupy_uint32_sentinel_illegal():
    # Not a GPU OOM. A CuPy RawKernel averages node features over a k-NN graph whose neighbour ids
    # were stored as uint32 "to halve memory": the -1 padding of nodes with fewer than k
    # neighbours became 4294967295, and the kernel reads feat[4294967295 * 64 + d], ~1 TB past the
    # array: an illegal address, reported at cp.asnumpy (cudaErrorIllegalAddress), then CuPy's
    # module unload at exit prints the driver's CUDA_ERROR_ILLEGAL_ADDRESS twice more.
    run_user_script("knn_mean_features_cupy", r'''import logging
import time

import cupy as cp
import numpy as np

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("features")
N_NODES, K, DIM = 2_000_000, 32, 64

mean_aggregate = cp.RawKernel(r"""
extern "C" __global__
void mean_aggregate(const unsigned int* nbr, const float* feat, float* out, long long n, int k, int dim) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int d = 0; d < dim; ++d) {
        float acc = 0.f;
        for (int j = 0; j < k; ++j)
            acc += feat[(long long)nbr[i * k + j] * dim + d];
        out[i * dim + d] = acc / k;
    }
}
""", "mean_aggregate")

rng = np.random.default_rng(0)
knn = rng.integers(0, N_NODES, (N_NODES, K), dtype=np.int64)
isolated = rng.choice(N_NODES, 5000, replace=False)
knn[isolated, K // 2:] = -1           # the index returns -1 where a node has fewer than K neighbours
knn = knn.astype(np.uint32)           # halve the graph's memory
features = rng.standard_normal((N_NODES, DIM), dtype=np.float32)
log.info("knn graph %s %s, features %s %s", knn.shape, knn.dtype, features.shape, features.dtype)
t0 = time.time()
d_knn, d_feat = cp.asarray(knn), cp.asarray(features)
d_out = cp.empty((N_NODES, DIM), dtype=cp.float32)
threads = 256
blocks = (N_NODES + threads - 1) // threads
log.info("launching mean_aggregate<<<%d, %d>>>", blocks, threads)
mean_aggregate((blocks,), (threads,), (d_knn, d_feat, d_out, np.int64(N_NODES), np.int32(K), np.int32(DIM)))
smoothed = cp.asnumpy(d_out)
log.info("aggregated in %.2f s; writing features_smoothed.npy", time.time() - t0)
np.save("features_smoothed.npy", smoothed)
''')


def s27_lightning_summary_example_input():
    # run.sh's holder leaves 4 GiB. A Lightning segmentation module sets example_input_array to
    # a full training batch (32 x 3 x 1024 x 1024) so that the model summary shows in/out sizes;
    # at fit start the ModelSummary callback runs that forward (eval, no_grad) on the card and it
    # runs out there, before the first training step.
    run_user_script("train_seg", r'''import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BATCH, SIZE, CLASSES = 32, 1024, 6


def double_conv(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
                         nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, c_in=3, classes=CLASSES, widths=(64, 128, 256, 512)):
        super().__init__()
        self.downs, self.ups, self.dec = nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        c = c_in
        for w in widths:
            self.downs.append(double_conv(c, w))
            c = w
        self.bottleneck = double_conv(c, 2 * c)
        c = 2 * c
        for w in reversed(widths):
            self.ups.append(nn.ConvTranspose2d(c, w, 2, 2))
            self.dec.append(double_conv(2 * w, w))
            c = w
        self.out = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottleneck(x)
        for up, dec, skip in zip(self.ups, self.dec, reversed(skips)):
            x = dec(torch.cat([up(x), skip], dim=1))
        return self.out(x)


class Tiles(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, SIZE, SIZE, generator=g), torch.randint(0, CLASSES, (SIZE, SIZE), generator=g)


class SegModule(L.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = UNet()
        self.example_input_array = torch.zeros(BATCH, 3, SIZE, SIZE)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val/loss", F.cross_entropy(self(x), y), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


if __name__ == "__main__":
    L.seed_everything(42)
    trainer = L.Trainer(max_epochs=30, accelerator="gpu", devices=1, precision="32-true", logger=False,
                        enable_checkpointing=False, log_every_n_steps=10)
    trainer.fit(SegModule(), DataLoader(Tiles(800), batch_size=BATCH, shuffle=True, num_workers=4),
                DataLoader(Tiles(96), batch_size=BATCH, num_workers=4))
''')


def s27_als_interactions_toarray():
    # Not a GPU OOM. A recommender script builds a 5M users x 40M items scipy CSR matrix of
    # implicit interactions and calls .toarray() to put it on the card for a dense ALS step:
    # numpy cannot allocate the 728 TiB float32 array on the host (past the address space):
    # MemoryError "Unable to allocate ... TiB", before anything reaches the GPU.
    run_user_script("als_gpu", r'''import logging
import time

import numpy as np
import scipy.sparse as sp
import torch

logging.basicConfig(format="%(asctime)s %(name)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("als")
N_USERS, N_ITEMS, N_EVENTS, FACTORS, ALPHA = 5_000_000, 40_000_000, 5_000_000, 128, 40.0

free, total = torch.cuda.mem_get_info()
log.info("device %s: %.1f GiB free of %.1f GiB", torch.cuda.get_device_name(0), free / 2**30, total / 2**30)
rng = np.random.default_rng(0)
t0 = time.time()
users = rng.integers(0, N_USERS, N_EVENTS)
items = (rng.zipf(1.2, N_EVENTS) - 1) % N_ITEMS
R = sp.coo_matrix((np.ones(N_EVENTS, dtype=np.float32), (users, items)), shape=(N_USERS, N_ITEMS)).tocsr()
R.sum_duplicates()
log.info("interactions: %d users x %d items, nnz=%d (%.1f s)", R.shape[0], R.shape[1], R.nnz, time.time() - t0)
C = torch.from_numpy(R.toarray()).cuda().mul_(ALPHA).add_(1.0)    # confidence matrix
P = (C > 1).float()
X = torch.randn(N_USERS, FACTORS, device="cuda") * 0.01
Y = torch.randn(N_ITEMS, FACTORS, device="cuda") * 0.01
log.info("starting ALS: %d factors", FACTORS)
''')


def s27_joblib_loky_trials():
    # run.sh's holder leaves 10 GiB. A hyper-parameter sweep runs its trials with joblib
    # (Parallel(n_jobs=4), loky processes, verbose=10), each trial training an MLP on the same
    # card; the wider and deeper trials, running beside the others, run out inside a loky worker
    # (on the H200: a width-8192 trial's Adam step, 256 MiB), and joblib re-raises the worker's
    # error in the parent with the worker's traceback as _RemoteTraceback text.
    run_user_script("sweep_mlp", r'''import itertools
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from joblib import Parallel, delayed


def run_trial(trial, width, depth, batch, lr):
    torch.manual_seed(trial)
    dev = torch.device("cuda")
    layers, d = [], 1024
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.GELU()]
        d = width
    model = nn.Sequential(*layers, nn.Linear(d, 100)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    t0 = time.time()
    for step in range(40):
        x = torch.randn(batch, 1024, device=dev)
        y = torch.randint(0, 100, (batch,), device=dev)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return {"trial": trial, "width": width, "depth": depth, "batch": batch, "lr": lr,
            "loss": round(loss.item(), 4), "seconds": round(time.time() - t0, 1)}


if __name__ == "__main__":
    grid = list(itertools.product((2048, 8192, 16384), (4, 8), (4096,), (1e-3,)))
    print(f"sweep: {len(grid)} trials on {torch.cuda.get_device_name(0)}")
    results = Parallel(n_jobs=4, verbose=10)(delayed(run_trial)(i, *cfg) for i, cfg in enumerate(grid))
    for r in sorted(results, key=lambda r: r["loss"]):
        print(r)
''')


# --------------------------------------------------------------------------- session 27 b (blind,
# helper H27G2): a chat REPL fed a pasted log file, a uvicorn-style /v1/completions replay with
# logprobs, a PEFT DPO step using disable_adapter() for the reference, a run_clm_no_trainer-style
# accelerate loop whose length-grouped sampler puts the longest batch first, a perplexity eval
# that falls back to float32 without bitsandbytes, a retrieval-head probe with eager attention
# logging JSON, a Flax LM with remat switched off, a DeepLabV3 multi-scale + flip TTA eval, and
# look-alikes (gloo all_gather over uneven shards, a ProcessPoolExecutor worker killed in a memory
# cgroup, F.one_hot of a high-cardinality column printed as a one-line summary)


def s27b_hf_chat_repl_paste_file():
    # run.sh's holder leaves 6 GiB. A terminal chat REPL (input() loop, history re-encoded each
    # turn, no KV reuse) is driven from a file on stdin, as `python chat.py < turns.txt`; two
    # short turns work, then the user /pastes a 118k-token log file and asks about it: the
    # prefill of the whole conversation (KV cache ~7 GiB) runs out inside generate() (on the H200,
    # session 27 b: in a decoder layer's RMSNorm, 920 MiB).
    import random

    logs = os.path.join(WORK, "logs")
    os.makedirs(logs, exist_ok=True)
    rnd = random.Random(11)
    path = os.path.join(logs, "ingest-2026-02-10.log")
    if not os.path.exists(path):
        with open(path, "w") as fh:
            for _ in range(9800):
                fh.write(" ".join(f"w{rnd.randrange(3, 32000)}" for _ in range(12)) + "\n")
    turns = os.path.join(WORK, "turns.txt")
    with open(turns, "w") as fh:
        fh.write(" ".join(f"w{rnd.randrange(3, 32000)}" for _ in range(9)) + "\n")
        fh.write(" ".join(f"w{rnd.randrange(3, 32000)}" for _ in range(23)) + "\n")
        fh.write("/paste logs/ingest-2026-02-10.log\n")
        fh.write(" ".join(f"w{rnd.randrange(3, 32000)}" for _ in range(14)) + "\n")
        fh.write("/quit\n")
    fd = os.open(turns, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    run_user_script("chat", _WORD_TOKENIZER + r'''
import argparse
import sys
import time

import torch
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser(description="terminal chat with a local checkpoint")
parser.add_argument("--model", default="@CKPT@")
parser.add_argument("--max-new-tokens", type=int, default=48)
parser.add_argument("--temperature", type=float, default=0.7)
args = parser.parse_args()

tok = word_tokenizer()
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, device_map="cuda").eval()
print(f"loaded {args.model} ({model.num_parameters() / 1e6:.0f}M params, bf16) on {model.device}")
print("commands: /paste FILE  /reset  /quit")
history = []
interactive = sys.stdin.isatty()
while True:
    try:
        line = input("you> ")
    except EOFError:
        print()
        break
    if not interactive:
        print(line)
    line = line.strip()
    if not line:
        continue
    if line == "/quit":
        break
    if line == "/reset":
        history.clear()
        print("(history cleared)")
        continue
    if line.startswith("/paste "):
        path = line.split(maxsplit=1)[1]
        with open(path) as fh:
            text = fh.read()
        ids = tok(text, add_special_tokens=False)["input_ids"]
        history.append(ids)
        print(f"(pasted {path}: {len(text):,} chars, {len(ids):,} tokens; "
              f"context now {sum(len(t) + 1 for t in history):,} tokens)")
        continue
    history.append(tok(line, add_special_tokens=False)["input_ids"])
    ctx = [t for turn in history for t in turn + [tok.eos_token_id]]
    input_ids = torch.tensor([ctx], device=model.device)
    t0 = time.time()
    with torch.inference_mode():
        out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids),
                             max_new_tokens=args.max_new_tokens, do_sample=True,
                             temperature=args.temperature, top_p=0.9,
                             pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    reply = out[0, input_ids.shape[1]:].tolist()
    history.append(reply)
    print(f"assistant> {tok.decode(reply, skip_special_tokens=True)}")
    print(f"  [{len(reply)} tokens in {time.time() - t0:.1f} s, context {len(ctx) + len(reply):,} tokens]")
print("bye")
'''.replace("@CKPT@", CKPT))


def s27b_hf_completions_logprobs_replay():
    # run.sh's holder leaves 4 GiB. A traffic-replay harness drives an OpenAI-style
    # /v1/completions app in-process and logs the way uvicorn does (level prefix, access lines,
    # "Exception in ASGI application" with the traceback). Three requests work; a request with
    # n=20, max_tokens=1500 and logprobs=5 runs generate(output_scores=True,
    # return_dict_in_generate=True): 20 sequences' KV cache and the float32 scores of every step
    # grow until one runs out; the app answers 500, the harness exits 1.
    import json
    import random

    rnd = random.Random(5)

    def prompt(n):
        return " ".join(f"w{rnd.randrange(3, 32000)}" for _ in range(n))

    reqs = [
        {"model": "llama-550m-sft", "prompt": prompt(40), "max_tokens": 32, "temperature": 0.2},
        {"model": "llama-550m-sft", "prompt": prompt(220), "max_tokens": 64, "n": 2, "logprobs": 1},
        {"model": "llama-550m-sft", "prompt": prompt(90), "max_tokens": 16, "temperature": 0.0},
        {"model": "llama-550m-sft", "prompt": prompt(700), "max_tokens": 1500, "n": 20, "logprobs": 5,
         "temperature": 0.9, "top_p": 0.95},
        {"model": "llama-550m-sft", "prompt": prompt(60), "max_tokens": 24},
    ]
    os.makedirs(os.path.join(WORK, "replay"), exist_ok=True)
    with open(os.path.join(WORK, "replay", "completions-2026-02-10.jsonl"), "w") as fh:
        for i, req in enumerate(reqs):
            fh.write(json.dumps({"client": f"10.0.3.{17 + i}:{51230 + 7 * i}", "body": req}) + "\n")
    run_user_script("replay_traffic", _WORD_TOKENIZER + r'''
import json
import logging
import os
import sys
import time
import uuid

import torch
from transformers import AutoModelForCausalLM

class LevelPrefix(logging.Formatter):
    def format(self, record):
        text = f"{(record.levelname + ':').ljust(9)} {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


_h = logging.StreamHandler(sys.stdout)
_h.setFormatter(LevelPrefix())
logging.basicConfig(level=logging.INFO, handlers=[_h])
logging.getLogger("transformers").setLevel(logging.ERROR)
log = logging.getLogger("uvicorn.error")
access = logging.getLogger("uvicorn.access")
MODEL_PATH = os.environ.get("MODEL_PATH", "@CKPT@")


class App:
    def startup(self):
        self.tok = word_tokenizer()
        self.model = AutoModelForCausalLM.from_pretrained(MODEL_PATH, dtype=torch.bfloat16,
                                                          device_map="cuda").eval()
        log.info("model %s loaded on %s", MODEL_PATH, self.model.device)

    def completions(self, body):
        n, logprobs = body.get("n", 1), body.get("logprobs")
        ids = self.tok(body["prompt"], add_special_tokens=False, return_tensors="pt")["input_ids"].cuda()
        temperature = body.get("temperature", 1.0)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=body.get("max_tokens", 16),
                do_sample=temperature > 0, temperature=temperature or None, top_p=body.get("top_p", 1.0),
                num_return_sequences=n, output_scores=logprobs is not None, return_dict_in_generate=True,
                pad_token_id=self.tok.pad_token_id, eos_token_id=self.tok.eos_token_id)
            new = out.sequences[:, ids.shape[1]:]
            choices = [{"index": i, "text": self.tok.decode(new[i], skip_special_tokens=True),
                        "finish_reason": "length"} for i in range(n)]
            if logprobs is not None:
                lp = torch.stack(out.scores, 1).float().log_softmax(-1)
                top = lp.topk(logprobs, dim=-1)
                for i, c in enumerate(choices):
                    c["logprobs"] = {"token_logprobs": lp[i].gather(-1, new[i, :, None]).squeeze(-1).tolist(),
                                     "top_logprobs": top.values[i].tolist()}
        usage = {"prompt_tokens": ids.shape[1], "completion_tokens": int(new.numel())}
        return {"id": f"cmpl-{uuid.uuid4().hex[:24]}", "object": "text_completion", "created": int(time.time()),
                "model": body["model"], "choices": choices, "usage": usage}

    def __call__(self, client, method, path, body):
        try:
            result, status = self.completions(body), "200 OK"
        except Exception:
            log.exception("Exception in ASGI application")
            result, status = {"error": {"message": "Internal Server Error", "type": "server_error"}}, "500 Internal Server Error"
            torch.cuda.empty_cache()
        access.info('%s - "%s %s HTTP/1.1" %s', client, method, path, status)
        return status, result


app = App()
log.info("Started server process [%d]", os.getpid())
log.info("Waiting for application startup.")
app.startup()
log.info("Application startup complete.")
log.info("Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)")
ok = failed = 0
with open("replay/completions-2026-02-10.jsonl") as fh:
    for line in fh:
        rec = json.loads(line)
        status, _ = app(rec["client"], "POST", "/v1/completions", rec["body"])
        if status.startswith("200"):
            ok += 1
        else:
            failed += 1
log.info("Shutting down")
log.info("Finished server process [%d]", os.getpid())
print(f"replay: {ok + failed} requests, {ok} ok, {failed} failed", file=sys.stderr)
sys.exit(1 if failed else 0)
'''.replace("@CKPT@", CKPT))


def s27b_peft_dpo_disable_adapter_ref():
    # run.sh's holder leaves 16 GiB. A hand-written DPO loop on a LoRA model: the reference
    # log-probs come from the same model under `with model.disable_adapter():` (no_grad), then
    # the policy forward over chosen+rejected concatenated (16 x 2048 tokens) keeps its
    # activations and the float32 log_softmax of its logits for backward, and runs out. The
    # script logs through a loguru-like format and its handler logs the traceback, exits 1.
    run_user_script("dpo_lora", r'''import logging
import sys
import time

import torch
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

logging.basicConfig(format="%(asctime)s.%(msecs)03d | %(levelname)-8s | %(name)s:%(funcName)s:%(lineno)d - %(message)s",
                    datefmt="%Y-%m-%d %H:%M:%S", level=logging.INFO, stream=sys.stderr)
logger = logging.getLogger("__main__")
BASE, BETA, PAIRS, PROMPT, RESPONSE, LR = "@CKPT@", 0.1, 8, 512, 1536, 5e-6


def sequence_logps(logits, labels, mask):
    logps = logits.float().log_softmax(-1)
    return (logps.gather(-1, labels.unsqueeze(-1)).squeeze(-1) * mask).sum(-1)


def make_batch(step, device):
    g = torch.Generator().manual_seed(step)
    prompt = torch.randint(3, 32000, (PAIRS, PROMPT), generator=g)
    chosen = torch.randint(3, 32000, (PAIRS, RESPONSE), generator=g)
    rejected = torch.randint(3, 32000, (PAIRS, RESPONSE), generator=g)
    ids = torch.cat([torch.cat([prompt, chosen], 1), torch.cat([prompt, rejected], 1)], 0).to(device)
    mask = torch.zeros_like(ids, dtype=torch.float32)
    mask[:, PROMPT:] = 1
    return ids, mask


def train():
    model = AutoModelForCausalLM.from_pretrained(BASE, dtype=torch.bfloat16, device_map="cuda")
    cfg = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, task_type="CAUSAL_LM",
                     target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    model = get_peft_model(model, cfg)
    trainable, total = model.get_nb_trainable_parameters()
    logger.info(f"LoRA r={cfg.r}: {trainable:,} trainable of {total:,} parameters")
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LR)
    logger.info(f"beta={BETA} pairs/step={PAIRS} seq={PROMPT + RESPONSE} reference=base model via disable_adapter()")
    for step in range(1, 501):
        t0 = time.time()
        ids, mask = make_batch(step, model.device)
        labels, mask = ids[:, 1:], mask[:, 1:]
        with torch.no_grad(), model.disable_adapter():
            ref = sequence_logps(model(input_ids=ids).logits[:, :-1], labels, mask)
        logger.debug(f"step {step}: reference log-probs done")
        pol = sequence_logps(model(input_ids=ids).logits[:, :-1], labels, mask)
        margin = (pol[:PAIRS] - ref[:PAIRS]) - (pol[PAIRS:] - ref[PAIRS:])
        loss = -F.logsigmoid(BETA * margin).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        logger.info(f"step {step} | loss {loss.item():.4f} | reward margin {margin.mean().item():.3f} | "
                    f"{time.time() - t0:.1f}s")


if __name__ == "__main__":
    try:
        train()
    except Exception:
        logger.exception("An error has been caught in function 'train', process 'MainProcess', thread 'MainThread':")
        sys.exit(1)
'''.replace("@CKPT@", CKPT))


def s27b_accelerate_clm_no_trainer_grouped():
    # run.sh's holder leaves 24 GiB. A run_clm_no_trainer-style script (accelerate, bf16 mixed
    # precision, gradient_accumulation_steps=4, its usual logging and tqdm bar) with a
    # length-grouped sampler that, like Transformers', puts the longest batch first: the very
    # first batch is 16 x 4096 tokens and the fp32 model's step runs out (on the H200, session
    # 27 b: in the forward, before any backward).
    run_user_script("run_clm_no_trainer", r'''import json
import logging
import math
import random

import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, Dataset, Sampler
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM, get_scheduler

logger = get_logger(__name__)
MODEL, BATCH, ACCUM, EPOCHS, LR, MAX_LEN = "@CKPT@", 16, 4, 2, 2e-5, 4096


class Packed(Dataset):
    def __init__(self, n=4000, seed=0):
        rnd = random.Random(seed)
        self.lengths = [min(MAX_LEN, max(32, int(rnd.lognormvariate(6.2, 0.9)))) for _ in range(n)]
        self.seed = seed

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 100003 + i)
        return torch.randint(3, 32000, (self.lengths[i],), generator=g)


class LengthGroupedSampler(Sampler):
    """Megabatches sorted by length; the longest batch goes first so an OOM shows up at once."""

    def __init__(self, lengths, batch_size, mega=50, seed=0):
        self.lengths, self.bs, self.mega, self.seed = lengths, batch_size, mega * batch_size, seed

    def __len__(self):
        return len(self.lengths)

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed)
        idx = torch.randperm(len(self.lengths), generator=g).tolist()
        megas = [sorted(idx[i:i + self.mega], key=lambda j: -self.lengths[j]) for i in range(0, len(idx), self.mega)]
        heads = [max(m[:self.bs], key=lambda j: self.lengths[j]) for m in megas]
        top = max(range(len(megas)), key=lambda k: self.lengths[heads[k]])
        megas[0][:self.bs], megas[top][:self.bs] = megas[top][:self.bs], megas[0][:self.bs]
        return iter([j for m in megas for j in m])


def collate(batch):
    width = max(len(x) for x in batch)
    ids = torch.zeros(len(batch), width, dtype=torch.long)
    labels = torch.full_like(ids, -100)
    mask = torch.zeros_like(ids)
    for r, x in enumerate(batch):
        ids[r, :len(x)], labels[r, :len(x)], mask[r, :len(x)] = x, x, 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def main():
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=ACCUM)
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                        datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)
    logger.info(accelerator.state, main_process_only=False)
    set_seed(42)
    model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.float32)
    train = Packed()
    loader = DataLoader(train, batch_size=BATCH, sampler=LengthGroupedSampler(train.lengths, BATCH),
                        collate_fn=collate)
    no_decay = ["bias", "norm.weight"]
    groups = [{"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.1},
              {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=LR)
    steps_per_epoch = math.ceil(len(loader) / ACCUM)
    max_steps = EPOCHS * steps_per_epoch
    scheduler = get_scheduler("cosine", optimizer, num_warmup_steps=int(0.03 * max_steps), num_training_steps=max_steps)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    total = BATCH * accelerator.num_processes * ACCUM
    logger.info("***** Running training *****")
    logger.info(f"  Num examples = {len(train)}")
    logger.info(f"  Num Epochs = {EPOCHS}")
    logger.info(f"  Instantaneous batch size per device = {BATCH}")
    logger.info(f"  Total train batch size (w. parallel, distributed & accumulation) = {total}")
    logger.info(f"  Gradient Accumulation steps = {ACCUM}")
    logger.info(f"  Total optimization steps = {max_steps}")
    bar = tqdm(range(max_steps), disable=not accelerator.is_local_main_process)
    step = 0
    for epoch in range(EPOCHS):
        model.train()
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                bar.update(1)
                step += 1
                if step % 10 == 0:
                    accelerator.print(json.dumps({"epoch": epoch, "step": step, "loss": round(loss.item(), 4),
                                                  "lr": scheduler.get_last_lr()[0]}))


if __name__ == "__main__":
    main()
'''.replace("@CKPT@", CKPT))


def s27b_hf_bnb_missing_fp32_ppl():
    # run.sh's holder leaves 6 GiB. A perplexity evaluation asks for 8-bit weights; where
    # bitsandbytes is not installed it logs a warning and loads the model in float32 instead
    # (where it is, it loads 8-bit in fp16). Batches of 16 x 2048 tokens: the float32 logits and
    # their shifted copy for the loss do not fit. Rich-like log lines written by the script. On the
    # H200 (session 27 b, no bitsandbytes) the float32 forward ran out earlier, in an MLP.
    run_user_script("eval_ppl", r'''import logging
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, BitsAndBytesConfig


class RichLike(logging.Formatter):
    WIDTH = 118

    def format(self, record):
        left = f"[{time.strftime('%X', time.localtime(record.created))}] {record.levelname:<8} {record.getMessage()}"
        right = f"{os.path.basename(record.pathname)}:{record.lineno}"
        line = left.ljust(self.WIDTH - len(right)) + right if len(left) < self.WIDTH - len(right) - 1 else f"{left} {right}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(RichLike())
logging.basicConfig(level=logging.INFO, handlers=[handler])
log = logging.getLogger("eval_ppl")
MODEL, DOCS, SEQ, BATCH = "@CKPT@", 256, 2048, 16

try:
    import bitsandbytes  # noqa: F401
    quant, dtype = BitsAndBytesConfig(load_in_8bit=True), torch.float16
    log.info("loading %s in 8-bit (bitsandbytes %s)", MODEL, bitsandbytes.__version__)
except ImportError:
    quant, dtype = None, torch.float32
    log.warning("bitsandbytes is not installed: loading %s in float32 instead of 8-bit", MODEL)
model = AutoModelForCausalLM.from_pretrained(MODEL, quantization_config=quant, dtype=dtype, device_map="cuda").eval()
log.info("model footprint %.2f GiB, %s", model.get_memory_footprint() / 2**30, model.dtype)
g = torch.Generator().manual_seed(0)
docs = torch.randint(3, 32000, (DOCS, SEQ), generator=g)
nll, count = 0.0, 0
t0 = time.time()
for i in range(0, DOCS, BATCH):
    ids = docs[i:i + BATCH].cuda()
    with torch.no_grad():
        logits = model(input_ids=ids).logits
        shift = logits[:, :-1].contiguous()
        loss = F.cross_entropy(shift.view(-1, shift.size(-1)).float(), ids[:, 1:].reshape(-1), reduction="sum")
    nll += loss.item()
    count += ids[:, 1:].numel()
    log.info("docs %d-%d: running ppl %.2f", i, i + ids.shape[0], math.exp(nll / count))
log.info("perplexity %.3f over %d tokens in %.1f s", math.exp(nll / count), count, time.time() - t0)
'''.replace("@CKPT@", CKPT))


def s27b_hf_needle_eager_attn_jsonl():
    # run.sh's holder leaves 16 GiB. A retrieval-head probe (needle in a haystack) loads the
    # model with attn_implementation="eager" to get output_attentions=True and sweeps context
    # lengths 1k..16k; 1k-4k work, at 8192 every layer's 16 x 8192 x 8192 attention map is kept
    # (plus the float32 softmax) and it runs out. Logs are JSON lines; the error is logged with
    # log.exception (the traceback inside a JSON field) and the script exits 1.
    run_user_script("needle_heads", r'''import json
import logging
import sys
import time

import torch
from transformers import AutoModelForCausalLM


class JsonFormatter(logging.Formatter):
    def format(self, r):
        rec = {"ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(r.created)) + f".{int(r.msecs):03d}Z",
               "level": r.levelname.lower(), "logger": r.name, "msg": r.getMessage()}
        rec.update(getattr(r, "fields", {}))
        if r.exc_info:
            rec["exc_type"] = r.exc_info[0].__name__
            rec["exc_info"] = self.formatException(r.exc_info)
        return json.dumps(rec)


h = logging.StreamHandler(sys.stdout)
h.setFormatter(JsonFormatter())
logging.basicConfig(level=logging.INFO, handlers=[h])
log = logging.getLogger("needle")
MODEL, DEPTH, NEEDLE, QUESTION = "@CKPT@", 0.5, 24, 16

model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.bfloat16, device_map="cuda",
                                             attn_implementation="eager").eval()
cfg = model.config
log.info("model loaded", extra={"fields": {"model": MODEL, "layers": cfg.num_hidden_layers,
                                           "heads": cfg.num_attention_heads, "attn": "eager"}})
g = torch.Generator().manual_seed(3)
needle = torch.randint(3, 32000, (NEEDLE,), generator=g)
question = torch.randint(3, 32000, (QUESTION,), generator=g)
for ctx in (1024, 2048, 4096, 8192, 16384):
    t0 = time.time()
    hay = torch.randint(3, 32000, (ctx - NEEDLE - QUESTION,), generator=g)
    at = int(len(hay) * DEPTH)
    ids = torch.cat([hay[:at], needle, hay[at:], question]).unsqueeze(0).cuda()
    try:
        with torch.inference_mode():
            out = model(input_ids=ids, output_attentions=True, logits_to_keep=1)
        scores = torch.stack([a[0, :, -QUESTION:, at:at + NEEDLE].sum(-1).mean(-1) for a in out.attentions])
        best = scores.flatten().topk(5)
        heads = [[int(i) // cfg.num_attention_heads, int(i) % cfg.num_attention_heads] for i in best.indices]
        log.info("retrieval scores", extra={"fields": {"ctx": ctx, "depth": DEPTH, "top_heads": heads,
                                                       "top_scores": [round(float(v), 4) for v in best.values],
                                                       "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
                                                       "secs": round(time.time() - t0, 2)}})
        del out, scores
    except Exception:
        log.exception("probe failed", extra={"fields": {"ctx": ctx, "depth": DEPTH}})
        sys.exit(1)
log.info("sweep done")
'''.replace("@CKPT@", CKPT))


def s27b_flax_lm_remat_off():
    # XLA_PYTHON_CLIENT_MEM_FRACTION=.06 (run.sh): ~8.5 GiB for JAX. A Flax linen decoder LM
    # (8 blocks, d=1024, hand-written causal attention) whose config has remat switched off
    # (a TODO in the config): the jitted train step on 8 x 2048 tokens keeps every block's
    # 8 x 16 x 2048 x 2048 float32 attention for backward and cannot get its buffers:
    # RESOURCE_EXHAUSTED. Logs in absl's format, written by the script. On the H200 (jax 0.11.2,
    # session 27 b) XLA's rematerialization got the step only to 40.44 GiB and a 38.45 GiB
    # buffer failed.
    run_user_script("train_lm_flax", r'''import logging
import os
import sys
import threading
import time

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


class AbslFormatter(logging.Formatter):
    def format(self, r):
        t = time.localtime(r.created)
        head = "%s%02d%02d %02d:%02d:%02d.%06d %7d %s:%d]" % (
            r.levelname[0], t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, int((r.created % 1) * 1e6),
            threading.get_native_id(), os.path.basename(r.pathname), r.lineno)
        return f"{head} {r.getMessage()}"


_h = logging.StreamHandler(sys.stderr)
_h.setFormatter(AbslFormatter())
logging.basicConfig(level=logging.INFO, handlers=[_h])
log = logging.getLogger("train")

CONFIG = dict(vocab=32000, d_model=1024, heads=16, layers=8, seq_len=2048, batch_size=8, lr=3e-4,
              warmup=2000, steps=100000,
              remat=False)  # TODO: re-enable once the nn.scan refactor lands


class Block(nn.Module):
    d: int
    heads: int

    @nn.compact
    def __call__(self, x):
        B, L, _ = x.shape
        hd = self.d // self.heads
        h = nn.LayerNorm()(x)
        qkv = nn.Dense(3 * self.d, use_bias=False)(h).reshape(B, L, 3, self.heads, hd)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(hd).astype(x.dtype)
        s = jnp.where(jnp.tril(jnp.ones((L, L), bool)), s, jnp.finfo(s.dtype).min)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v).reshape(B, L, self.d)
        x = x + nn.Dense(self.d)(o)
        return x + nn.Dense(self.d)(nn.gelu(nn.Dense(4 * self.d)(nn.LayerNorm()(x))))


class LM(nn.Module):
    vocab: int
    d: int
    heads: int
    layers: int
    remat: bool

    @nn.compact
    def __call__(self, ids):
        x = nn.Embed(self.vocab, self.d)(ids)
        block = nn.remat(Block) if self.remat else Block
        for i in range(self.layers):
            x = block(self.d, self.heads, name=f"block_{i}")(x)
        return nn.Dense(self.vocab, use_bias=False)(nn.LayerNorm()(x))


@jax.jit
def train_step(state, batch):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, batch[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch[:, 1:]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def main():
    c = CONFIG
    log.info("JAX %s, devices: %s", jax.__version__, jax.devices())
    for k, v in c.items():
        log.info("config.%s = %r", k, v)
    model = LM(c["vocab"], c["d_model"], c["heads"], c["layers"], c["remat"])
    rng = jax.random.PRNGKey(0)
    params = jax.jit(model.init)(rng, jnp.ones((1, 16), jnp.int32))["params"]
    log.info("parameters: %.1fM", sum(p.size for p in jax.tree_util.tree_leaves(params)) / 1e6)
    sched = optax.warmup_cosine_decay_schedule(0.0, c["lr"], c["warmup"], c["steps"])
    state = train_state.TrainState.create(apply_fn=model.apply, params=params,
                                          tx=optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(sched, weight_decay=0.1)))
    log.info("compiling train_step for batch (%d, %d)", c["batch_size"], c["seq_len"] + 1)
    t0 = time.time()
    for step in range(1, c["steps"] + 1):
        rng, k = jax.random.split(rng)
        batch = jax.random.randint(k, (c["batch_size"], c["seq_len"] + 1), 0, c["vocab"])
        state, loss = train_step(state, batch)
        if step == 1 or step % 50 == 0:
            log.info("step %d loss %.4f (%.2f s/step)", step, float(loss), (time.time() - t0) / step)


if __name__ == "__main__":
    main()
''')


def s27b_tv_deeplab_multiscale_tta():
    # run.sh's holder leaves 12 GiB. A Cityscapes-style evaluation of torchvision's
    # DeepLabV3-ResNet50 (random weights, 19 classes) with multi-scale (0.5-1.75) + flip
    # test-time augmentation over batches of 4 images of 1024 x 2048: each scale runs the image
    # and its flip together (8 images) in fp32 at output stride 8; a larger scale runs out.
    # mmengine-like log lines written by the script and a tqdm bar. On the H200 (session 27 b) it
    # ran out in the first batch, in a backbone batch_norm (3.12 GiB).
    run_user_script("eval_cityscapes_tta", r'''import logging
import sys
import time

import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

logging.basicConfig(format="%(asctime)s - mmengine - %(levelname)s - %(message)s", datefmt="%Y/%m/%d %H:%M:%S",
                    level=logging.INFO, stream=sys.stdout)
log = logging.getLogger("eval")
SCALES, FLIP, BATCH, CLASSES, IGNORE = (0.5, 0.75, 1.0, 1.25, 1.5, 1.75), True, 4, 19, 255
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


class CityscapesVal(Dataset):
    def __len__(self):
        return 500

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, 1024, 2048, generator=g), torch.randint(0, CLASSES, (1024, 2048), generator=g)


@torch.no_grad()
def tta_logits(model, x):
    B, _, H, W = x.shape
    acc = torch.zeros(B, CLASSES, H, W, device=x.device)
    for s in SCALES:
        xs = F.interpolate(x, scale_factor=s, mode="bilinear", align_corners=False)
        if FLIP:
            xs = torch.cat([xs, xs.flip(-1)])
        out = model(xs)["out"]
        if FLIP:
            out = out[:B] + out[B:].flip(-1)
        acc += F.interpolate(out, size=(H, W), mode="bilinear", align_corners=False)
    return acc / (len(SCALES) * (2 if FLIP else 1))


def main():
    model = torchvision.models.segmentation.deeplabv3_resnet50(weights=None, weights_backbone=None,
                                                               num_classes=CLASSES, aux_loss=False)
    log.info("Load checkpoint from work_dirs/deeplabv3_r50-d8_cityscapes/iter_80000.pth (dry run: random init)")
    model = model.cuda().eval()
    log.info(f"test-time augmentation: scales={list(SCALES)} flip={FLIP}")
    loader = DataLoader(CityscapesVal(), batch_size=BATCH, num_workers=2)
    inter = torch.zeros(CLASSES, device="cuda")
    union = torch.zeros(CLASSES, device="cuda")
    t0 = time.time()
    for i, (img, gt) in enumerate(tqdm(loader, desc="eval", unit="batch")):
        x = ((img - MEAN) / STD).cuda(non_blocking=True)
        gt = gt.cuda(non_blocking=True)
        pred = tta_logits(model, x).argmax(1)
        valid = gt != IGNORE
        for c in range(CLASSES):
            p, t = (pred == c) & valid, (gt == c) & valid
            inter[c] += (p & t).sum()
            union[c] += (p | t).sum()
        if (i + 1) % 25 == 0:
            log.info(f"Iter(test) [{i + 1}/{len(loader)}]  mIoU so far: {(inter / union.clamp(min=1)).mean() * 100:.2f}")
    log.info(f"Iter(test) [{len(loader)}/{len(loader)}]  mIoU: {(inter / union.clamp(min=1)).mean() * 100:.2f}  "
             f"time: {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
''')


def s27b_gloo_allgather_uneven_shards():
    # Not a memory failure: a two-process evaluation (mp.spawn, gloo, one card shared) shards
    # 10001 samples as indices[rank::2] (5001 and 5000), then dist.all_gather()s the predictions
    # into buffers sized from each rank's own count: the sizes differ between the ranks and gloo
    # fails (or times out); mp.spawn re-raises the failing rank's error. On the H200 (session 27
    # b) gloo's EnforceNotMet (preamble length 20004 vs 20000) aborted rank 1 and mp.spawn raised
    # ProcessExitedException (SIGABRT).
    run_user_script("eval_ddp_gloo", r'''import datetime
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def evaluate(rank, world, n):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=20))
    torch.cuda.set_device(0)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10)).cuda().eval()
    g = torch.Generator().manual_seed(1)
    X, y = torch.randn(n, 512, generator=g), torch.randint(0, 10, (n,), generator=g)
    idx = torch.arange(rank, n, world)
    with torch.no_grad():
        preds = model(X[idx].cuda()).argmax(-1)
    print(f"[rank {rank}] scored {len(idx)} samples", flush=True)
    gathered = [torch.empty_like(preds) for _ in range(world)]
    dist.all_gather(gathered, preds)
    if rank == 0:
        order = torch.cat([torch.arange(r, n, world) for r in range(world)])
        acc = (torch.cat(gathered).cpu() == y[order]).float().mean()
        print(f"accuracy: {acc:.4f} over {len(order)} samples", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(evaluate, args=(2, 10001), nprocs=2)
''')


def s27b_host_pool_broken_cgroup():
    # Not a GPU OOM: a feature-extraction stage inside a memory cgroup of 3 GiB (a container's
    # limit; made here under cgroup v2 and removed afterwards) runs 4 ProcessPoolExecutor workers,
    # each materialising a 400k x 512 float64 matrix (1.5 GiB); the kernel's OOM killer sends one
    # SIGKILL and the parent gets concurrent.futures' BrokenProcessPool, which names no memory.
    import subprocess

    group, enter_group = memory_cgroup(
        "s27b_host_pool_broken_cgroup", f"featurize-{os.getpid()}", 3 * GIB)
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "featurize.py"), "w", encoding="utf-8") as fh:
        fh.write(r'''import logging
import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np
import torch

logging.basicConfig(format="%(asctime)s [%(processName)s] %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("featurize")
SHARDS = [f"shards/clicks-{i:05d}.parquet" for i in range(16)]
ROWS, COLS = 400_000, 512


def featurize(shard):
    t0 = time.time()
    rng = np.random.default_rng(int(shard[-13:-8]))
    X = np.empty((ROWS, COLS), dtype=np.float64)  # hashed feature crosses, dense
    for c in range(0, COLS, 64):
        X[:, c:c + 64] = rng.standard_normal((ROWS, 64))
    mean, std = X.mean(0), X.std(0)
    log.info("%s: %d x %d in %.1f s", shard, ROWS, COLS, time.time() - t0)
    return shard, mean.astype(np.float32), std.astype(np.float32)


def main():
    log.info("CUDA available: %s; featurizing %d shards with 4 workers", torch.cuda.is_available(), len(SHARDS))
    stats = {}
    with ProcessPoolExecutor(max_workers=4, mp_context=mp.get_context("fork")) as ex:
        futures = {ex.submit(featurize, s): s for s in SHARDS}
        for fut in as_completed(futures):
            shard, mean, std = fut.result()
            stats[shard] = (mean, std)
            log.info("done %d/%d", len(stats), len(SHARDS))
    np.savez("feature_stats.npz", **{k: np.stack(v) for k, v in stats.items()})
    log.info("wrote feature_stats.npz; next: train.py --features feature_stats.npz")


if __name__ == "__main__":
    main()
''')
    sys.stdout.flush()
    try:
        rc = subprocess.call([sys.executable, "featurize.py"], cwd=WORK, preexec_fn=enter_group)
    finally:
        time.sleep(0.5)
        try:
            os.rmdir(group)
        except OSError:
            pass
    sys.exit(rc)


def s27b_tabular_gpu_one_hot():
    # A fraud model's feature step one-hot encodes its categorical columns on the card with
    # F.one_hot (int64): hour and the rest are small, merchant_id (183k categories x 2M rows,
    # ~2.7 TiB) is not. The script catches everything and prints one line naming the stage
    # and the error, then exits 1.
    run_user_script("fraud_mlp", r'''import sys
import time

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

STAGE = "load"
TAG = "[fraud-mlp]"


def main():
    global STAGE
    rng = np.random.default_rng(7)
    n = 2_000_000
    df = pd.DataFrame({
        "amount": rng.gamma(2.0, 40.0, n).astype(np.float32),
        "hour": rng.integers(0, 24, n),
        "device": rng.choice(["ios", "android", "web", "pos", "atm"], n),
        "country": rng.integers(0, 196, n),
        "mcc": rng.integers(0, 412, n),
        "merchant_id": rng.integers(0, 183_211, n),
        "is_fraud": rng.random(n) < 0.002,
    })
    print(f"{TAG} loaded {len(df):,} transactions ({df.is_fraud.mean():.3%} fraud)")
    STAGE = "encode"
    parts = [torch.log1p(torch.as_tensor(df["amount"].to_numpy(), device="cuda")).unsqueeze(1)]
    for col in ["hour", "device", "country", "mcc", "merchant_id"]:
        codes = torch.as_tensor(pd.Categorical(df[col]).codes.astype(np.int64), device="cuda")
        parts.append(F.one_hot(codes).float())
        print(f"{TAG} encoded {col}: {parts[-1].shape[1]} columns")
    X = torch.cat(parts, 1)
    y = torch.as_tensor(df["is_fraud"].to_numpy(), device="cuda").float()
    STAGE = "train"
    model = torch.nn.Sequential(torch.nn.Linear(X.shape[1], 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for i in range(0, len(X), 65536):
            loss = F.binary_cross_entropy_with_logits(model(X[i:i + 65536]).squeeze(1), y[i:i + 65536])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"{TAG} epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    t0 = time.time()
    try:
        main()
    except Exception as e:
        print(f"{TAG} FAILED in stage '{STAGE}' after {time.time() - t0:.1f}s: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
''')


# --------------------------------------------------------------------------- session 27 c (blind,
# helper H27G3): the same kinds of failure reported in different ways: a loader that re-raises
# `RuntimeError(...) from e`, a multiprocessing.Pool worker's error re-raised in the parent, an
# IPython cell, a rich traceback, logging.exception with a formatter that prefixes every line, a
# warnings-heavy log, a torch.distributed.elastic launcher of the user's own, a click CLI that
# prints only `Error: <message>`, an OOM retried with half the batch in its except block, a
# benchmark table with OOM rows; look-alikes: a device-side assert (added tokens, no resize), a
# MemoryError under RLIMIT_AS, a gloo timeout while rank 0 evaluates


def _run_user_command(name, source, args):
    """run_user_script, with command-line arguments: `python3 <name>.py ARGS...`."""
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, f"{name}.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(source)
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(WORK)
    os.execv(sys.executable, [sys.executable, f"{name}.py"] + list(args))


def s27c_hf_load_reraise_from():
    # run.sh's holder leaves 1 GiB (about half of it goes to this process's CUDA context). A
    # prompt-scoring job loads its model through a small registry helper that wraps any loading
    # error as `raise RuntimeError(f"failed to load model ...") from e`: from_pretrained(...,
    # device_map="cuda") of the 1 GiB bf16 checkpoint runs out, and Python prints the OOM's
    # traceback, "The above exception was the direct cause of the following exception:", then the
    # RuntimeError's, whose message names no memory. On the H200 (session 27 c) it ran out in
    # transformers' caching_allocator_warmup (1.01 GiB).
    run_user_script("score_prompts", r'''import json
import sys
import time

import torch
from transformers import AutoModelForCausalLM

REGISTRY = {
    "llama-550m-sft": {"path": "@CKPT@", "dtype": "bfloat16", "revision": "sft-2026-02-03"},
    "llama-550m-base": {"path": "@CKPT@", "dtype": "bfloat16", "revision": "base"},
}


def load_model(name, device="cuda"):
    spec = REGISTRY[name]
    t0 = time.time()
    try:
        model = AutoModelForCausalLM.from_pretrained(spec["path"], dtype=getattr(torch, spec["dtype"]),
                                                     device_map=device)
    except Exception as e:
        raise RuntimeError(f"failed to load model {name!r} (revision {spec['revision']}) on {device}") from e
    print(f"[score] loaded {name} in {time.time() - t0:.1f}s", flush=True)
    return model.eval()


@torch.no_grad()
def score(model, batch):
    ids = torch.tensor(batch, device=model.device)
    logits = model(input_ids=ids).logits[:, :-1].float()
    return logits.log_softmax(-1).gather(-1, ids[:, 1:, None]).squeeze(-1).sum(-1).tolist()


def main():
    print(f"[score] torch {torch.__version__} on {torch.cuda.get_device_name(0)}", flush=True)
    g = torch.Generator().manual_seed(0)
    prompts = torch.randint(3, 32000, (256, 128), generator=g).tolist()
    model = load_model("llama-550m-sft")
    scores = []
    for i in range(0, len(prompts), 32):
        scores += score(model, prompts[i:i + 32])
    with open("scores.json", "w") as fh:
        json.dump(scores, fh)
    print(f"[score] wrote {len(scores)} scores")


if __name__ == "__main__":
    main()
'''.replace("@CKPT@", CKPT))


def s27c_hf_generate_pool_worker():
    # run.sh's holder leaves 5 GiB. A batch-generation driver runs generate() in a one-process
    # multiprocessing.Pool (spawn; the model is loaded by the pool's initializer) so that the
    # parent never touches CUDA; two small jobs work, the "long-reports" job (48 prompts of ~3000
    # tokens x 4 samples each) runs out in the worker, and pool.imap re-raises it in the parent:
    # the worker's traceback as a multiprocessing.pool.RemoteTraceback, "The above exception was
    # the direct cause of the following exception:", then the parent's. On the H200 (session 27 c)
    # the prefill ran out in the rotary embedding (282 MiB).
    run_user_script("batch_generate", _WORD_TOKENIZER + r'''
import json
import multiprocessing as mp
import os
import random
import time

import torch

MODEL = "@CKPT@"
_model = _tok = None


def init_worker(model_path):
    global _model, _tok
    from transformers import AutoModelForCausalLM

    torch.cuda.set_device(0)
    _tok = word_tokenizer()
    _tok.padding_side = "left"
    _model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.bfloat16, device_map="cuda").eval()
    print(f"[worker {os.getpid()}] model ready on {_model.device}", flush=True)


def generate_job(job):
    name, prompts, params = job
    t0 = time.time()
    enc = _tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to("cuda")
    with torch.inference_mode():
        out = _model.generate(**enc, do_sample=True, temperature=0.8, top_p=0.95,
                              pad_token_id=_tok.pad_token_id, eos_token_id=_tok.eos_token_id, **params)
    texts = _tok.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    with open(f"out/{name}.jsonl", "w") as fh:
        for t in texts:
            fh.write(json.dumps({"text": t}) + "\n")
    return name, len(texts), time.time() - t0


def make_jobs():
    rnd = random.Random(3)

    def prompts(n, words):
        return [" ".join(f"w{rnd.randrange(3, 32000)}" for _ in range(words)) for _ in range(n)]

    return [
        ("faq-answers", prompts(8, 64), {"max_new_tokens": 32}),
        ("product-descriptions", prompts(16, 200), {"max_new_tokens": 64}),
        ("long-reports", prompts(48, 3000), {"max_new_tokens": 256, "num_return_sequences": 4}),
        ("titles", prompts(64, 40), {"max_new_tokens": 16}),
    ]


def main():
    os.makedirs("out", exist_ok=True)
    jobs = make_jobs()
    print(f"[main] {len(jobs)} jobs, {sum(len(j[1]) for j in jobs)} prompts; starting 1 GPU worker", flush=True)
    t0 = time.time()
    ctx = mp.get_context("spawn")
    with ctx.Pool(processes=1, initializer=init_worker, initargs=(MODEL,)) as pool:
        for name, n, secs in pool.imap(generate_job, jobs):
            print(f"[main] {name}: {n} completions in {secs:.1f}s", flush=True)
    print(f"[main] all jobs done in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
'''.replace("@CKPT@", CKPT))


def s27c_peft_ipython_lora_step():
    # run.sh's holder leaves 8 GiB. A notebook session replayed through IPython's InteractiveShell
    # (no colours): cell 1 loads the checkpoint and wraps it with a LoRA adapter (all linear
    # layers, r=64), cell 2 builds one batch of 16 x 2048 tokens, cell 3 runs the first training
    # step, whose forward/backward runs out: IPython's "Cell In[3], line 2" traceback. IPython is
    # not in the device image: run.sh puts OOMDOC_CORPUS_IPYTHON_SITE (carried wheels unpacked
    # there) on PYTHONPATH when set; without IPython it prints NO-ERROR and exits 3. On the H200
    # (session 27 c, IPython 9.18.1 carried) the forward ran out in a LoRA dropout (704 MiB).
    run_user_script("notebook_lora", '''import os
import sys

os.environ.setdefault("IPYTHONDIR", os.path.join(os.getcwd(), ".ipython"))
try:
    from IPython.core.interactiveshell import InteractiveShell
except ImportError:
    print("NO-ERROR: IPython is not installed: s27c_peft_ipython_lora_step cannot run",
          file=sys.stderr)
    sys.exit(3)

CELLS = [
    """import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

base = AutoModelForCausalLM.from_pretrained("@CKPT@", dtype=torch.bfloat16, device_map="cuda")
config = LoraConfig(r=64, lora_alpha=128, lora_dropout=0.05, target_modules="all-linear", task_type="CAUSAL_LM")
model = get_peft_model(base, config)
model.print_trainable_parameters()""",
    """opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)
g = torch.Generator().manual_seed(0)
input_ids = torch.randint(3, 32000, (16, 2048), generator=g)
batch = {"input_ids": input_ids.cuda(), "labels": input_ids.clone().cuda()}
{k: tuple(v.shape) for k, v in batch.items()}""",
    """model.train()
out = model(**batch)
out.loss.backward()
opt.step()
opt.zero_grad()
print(f"step 1 loss {out.loss.item():.4f}")""",
]
shell = InteractiveShell.instance()
for colors in ("NoColor", "nocolor"):
    try:
        shell.colors = colors
        break
    except Exception:
        pass
for cell in CELLS:
    result = shell.run_cell(cell, store_history=True)
    if not result.success:
        sys.exit(1)
'''.replace("@CKPT@", CKPT))


def s27c_compile_warmup_rich():
    # run.sh's holder leaves 6 GiB. An embedding service compiles its 4-layer fp16 encoder with
    # torch.compile(dynamic=True) and warms it up bucket by bucket before accepting requests,
    # logging through rich's Console and with rich's traceback handler installed (plain prints and
    # Python's own traceback where rich is missing); the largest bucket (512 x 2048 tokens) runs
    # out inside the compiled graph (on the H200, session 27 c: in the Inductor module's call,
    # 6 GiB, after a 12 s first compile).
    run_user_script("embed_service", r'''import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from rich.console import Console
    from rich.traceback import install as install_rich_traceback
except ImportError:
    Console = None

if Console is not None:
    install_rich_traceback(show_locals=False)
    _console = Console(stderr=True)

    def log(msg):
        _console.log(msg)
else:
    def log(msg):
        print(time.strftime("[%H:%M:%S]"), msg, file=sys.stderr, flush=True)

VOCAB, D, HEADS, FFN, LAYERS, OUT = 50000, 1024, 16, 4096, 4, 768
BUCKETS = [(4, 64), (16, 256), (64, 512), (128, 1024), (512, 2048)]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.up, self.down = nn.Linear(D, FFN), nn.Linear(FFN, D)

    def forward(self, x):
        B, L, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, L, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(B, L, D))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, OUT)

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x)
        return F.normalize(self.head(self.ln(x).mean(1)), dim=-1)


def main():
    log(f"embed-service starting: torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    model = Encoder().cuda().half().eval()
    log(f"encoder: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M params, fp16; compiling (dynamic=True)")
    model = torch.compile(model, dynamic=True)
    with torch.inference_mode():
        for bs, seq in BUCKETS:
            t0 = time.time()
            ids = torch.randint(0, VOCAB, (bs, seq), device="cuda")
            model(ids)
            torch.cuda.synchronize()
            log(f"warm-up bucket batch={bs} seq={seq}: {time.time() - t0:.2f}s, "
                f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
    log("ready: listening on 0.0.0.0:8080")


if __name__ == "__main__":
    main()
''')


def s27c_hf_eval_logging_prefixed_tb():
    # run.sh's holder leaves 4 GiB. A perplexity harness over three validation splits logs
    # through a formatter that repeats the record's header (time, level, logger, pid) on every
    # line, the traceback's lines included, so a log shipper keeps them together; the first two
    # splits work, the long-document split (8 x 4096 tokens) runs out (planned: on the float32
    # logits; on the H200, session 27 c: earlier, in an MLP's SiLU, 352 MiB), and the handler's
    # log.exception() prints the prefixed traceback; exits 1.
    run_user_script("eval_ppl", r'''import json
import logging
import math
import sys
import time

import torch
from transformers import AutoModelForCausalLM


class EveryLineFormatter(logging.Formatter):
    """Repeat the header on every line so multi-line records (tracebacks) stay together."""

    def format(self, record):
        text = super().format(record)
        head = (f"{self.formatTime(record, '%Y-%m-%dT%H:%M:%S')}.{int(record.msecs):03d} "
                f"{record.levelname:<5} {record.name} [{record.process}]")
        return "\n".join(f"{head} | {line}" for line in text.splitlines())


handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(EveryLineFormatter("%(message)s"))
log = logging.getLogger("evalharness")
log.addHandler(handler)
log.setLevel(logging.INFO)
log.propagate = False

MODEL = "@CKPT@"
SPLITS = [("wiki-val", 64, 512, 8), ("code-val", 32, 1024, 4), ("longdoc-val", 32, 4096, 8)]


@torch.no_grad()
def perplexity(model, n, seq, bs):
    nll = tokens = 0.0
    for i in range(0, n, bs):
        g = torch.Generator().manual_seed(i)
        ids = torch.randint(3, 32000, (bs, seq), generator=g).cuda()
        loss = model(input_ids=ids, labels=ids).loss
        nll += loss.item() * bs * (seq - 1)
        tokens += bs * (seq - 1)
    return math.exp(nll / tokens)


def main():
    model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.bfloat16, device_map="cuda").eval()
    log.info("model %s loaded (%s, %.0fM params)", MODEL, model.dtype, model.num_parameters() / 1e6)
    results, failed = {}, []
    for name, n, seq, bs in SPLITS:
        t0 = time.time()
        try:
            ppl = perplexity(model, n, seq, bs)
        except Exception:
            log.exception("split %s failed (seq_len=%d, batch_size=%d)", name, seq, bs)
            failed.append(name)
            continue
        results[name] = round(ppl, 2)
        log.info("split %s: ppl=%.2f (%d x %d tokens, %.1fs)", name, ppl, n, seq, time.time() - t0)
    log.info("summary: %s", json.dumps({"results": results, "failed": failed}))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
'''.replace("@CKPT@", CKPT))


def s27c_hf_full_ft_warnings():
    # run.sh's holder leaves 10 GiB. A full fine-tune written against older APIs, so its log is
    # mostly warnings before anything happens: torch_dtype, the old TF32 flags,
    # torch.cuda.amp.GradScaler/autocast and torch.backends.cuda.sdp_kernel (FutureWarnings),
    # a DataLoader with more workers than CPUs (UserWarning); fp32 master weights with bf16
    # autocast at 8 x 2048 tokens then run out in the first step (on the H200, session 27 c: in
    # the forward, an MLP up_proj, 176 MiB).
    run_user_script("full_finetune", r'''import os
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, get_cosine_schedule_with_warmup

MODEL, BATCH, SEQ, LR, STEPS = "@CKPT@", 8, 2048, 1e-5, 5000
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


class Chunks(Dataset):
    def __len__(self):
        return 40000

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randint(3, 32000, (SEQ,), generator=g)


def main():
    model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.float32).cuda()
    model.config.use_cache = False
    print(f"full fine-tune: {model.num_parameters() / 1e6:.0f}M params, fp32 master weights, "
          f"bf16 autocast, batch {BATCH} x {SEQ}", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.1, betas=(0.9, 0.95))
    sched = get_cosine_schedule_with_warmup(opt, 100, STEPS)
    scaler = torch.cuda.amp.GradScaler()
    loader = DataLoader(Chunks(), batch_size=BATCH, shuffle=True, num_workers=24, pin_memory=True,
                        drop_last=True)
    model.train()
    t0 = time.time()
    for step, ids in enumerate(loader, 1):
        ids = ids.cuda(non_blocking=True)
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
                loss = model(input_ids=ids, labels=ids).loss
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if step % 10 == 0:
            print(f"step {step}/{STEPS} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.2e} "
                  f"{(time.time() - t0) / step:.2f}s/step", flush=True)
        if step == STEPS:
            break


if __name__ == "__main__":
    main()
'''.replace("@CKPT@", CKPT))


def s27c_elastic_launcher_summary():
    # A hyper-parameter sweep driven by the user's own launcher, which starts each trial through
    # torch.distributed.launcher.api.elastic_launch (what torchrun uses; one worker, c10d
    # rendezvous, max_restarts=0). The worker (@record) keeps a 128 GiB replay buffer on the card
    # and trains a behaviour-cloning MLP; the first trial's batch (131072) runs out in the first
    # step. The launcher logs the failure and lets ChildFailedError propagate: the worker's
    # traceback, elastic's logs, then the launcher's traceback ending in the "Root Cause (first
    # observed failure)" summary. On the H200 (session 27 c): 4 GiB in the first Linear.
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "train_trial.py"), "w", encoding="utf-8") as fh:
        fh.write(r'''import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--replay-gib", type=float, default=128)
    p.add_argument("--steps", type=int, default=2000)
    args = p.parse_args()
    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    replay = torch.empty(int(args.replay_gib * 2**30) // 2, dtype=torch.float16, device="cuda")
    model = nn.Sequential(nn.Linear(1024, 8192), nn.GELU(), nn.Linear(8192, 8192), nn.GELU(),
                          nn.Linear(8192, 18)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    print(f"[trial rank{rank}] lr={args.lr} batch={args.batch_size} replay buffer {args.replay_gib:.0f} GiB "
          f"on cuda:{local_rank}", flush=True)
    t0 = time.time()
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, replay.numel() // 1024, (args.batch_size,), device="cuda")
        obs = replay.view(-1, 1024)[idx].float()
        target = torch.randint(0, 18, (args.batch_size,), device="cuda")
        loss = F.cross_entropy(model(obs), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"[trial rank{rank}] step {step} loss {loss.item():.4f} ({time.time() - t0:.1f}s)", flush=True)


if __name__ == "__main__":
    main()
''')
    run_user_script("launch_sweep", r'''import logging
import sys

from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
from torch.distributed.launcher.api import LaunchConfig, elastic_launch

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("launch_sweep")
TRIALS = [{"lr": 3e-4, "batch_size": 131072}, {"lr": 1e-4, "batch_size": 65536}, {"lr": 3e-5, "batch_size": 32768}]


def main():
    for i, trial in enumerate(TRIALS):
        config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=1, run_id=f"bc-sweep-t{i}",
                              rdzv_backend="c10d", rdzv_endpoint=f"127.0.0.1:{29591 + i}",
                              max_restarts=0, monitor_interval=0.5)
        log.info("trial %d/%d: %s", i + 1, len(TRIALS), trial)
        args = ["-u", "train_trial.py", "--lr", str(trial["lr"]), "--batch-size", str(trial["batch_size"])]
        try:
            elastic_launch(config, sys.executable)(*args)
        except ChildFailedError:
            log.error("trial %d failed; stopping the sweep (fail_fast=True)", i + 1)
            raise
        log.info("trial %d finished", i + 1)


if __name__ == "__main__":
    main()
''')


def s27c_cli_error_only():
    # run.sh's holder leaves 3 GiB. `python embedctl.py encode --input docs.jsonl ...`: a click
    # CLI that turns every exception into click.ClickException, so the user sees only
    # `Error: <message>` (the OOM's message) and exit status 1; the 6-layer encoder runs out on
    # the first 512 x 512 batch (an argparse fallback prints the same where click is missing).
    import json
    import random

    os.makedirs(WORK, exist_ok=True)
    rnd = random.Random(17)
    with open(os.path.join(WORK, "docs.jsonl"), "w") as fh:
        for i in range(3000):
            words = " ".join(f"w{rnd.randrange(3, 30000)}" for _ in range(rnd.randrange(200, 700)))
            fh.write(json.dumps({"id": f"doc-{i:05d}", "text": words}) + "\n")
    _run_user_command("embedctl", r'''import json
import sys
import zlib

import torch
import torch.nn as nn

VOCAB, D = 30522, 768


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D, padding_idx=0)
        self.pos = nn.Embedding(512, D)
        layer = nn.TransformerEncoderLayer(D, 12, 3072, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)

    def forward(self, ids):
        pad = ids == 0
        x = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        h = self.enc(x, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        return (h * keep).sum(1) / keep.sum(1).clamp(min=1)


def tokenize(text, max_length):
    ids = [zlib.crc32(w.encode()) % (VOCAB - 1) + 1 for w in text.split()][:max_length]
    return ids + [0] * (max_length - len(ids))


def run_encode(input_path, output, batch_size, max_length, device):
    docs = [json.loads(line) for line in open(input_path)]
    model = Encoder().to(device).eval()
    out = []
    with torch.inference_mode():
        for i in range(0, len(docs), batch_size):
            ids = torch.tensor([tokenize(d["text"], max_length) for d in docs[i:i + batch_size]], device=device)
            out.append(model(ids).cpu())
    torch.save({"ids": [d["id"] for d in docs], "emb": torch.cat(out)}, output)
    return len(docs)


try:
    import click
except ImportError:
    click = None

if click is not None:
    @click.group()
    def cli():
        """embedctl: batch embedding tool."""

    @cli.command()
    @click.option("--input", "input_path", required=True, type=click.Path(exists=True))
    @click.option("--output", required=True)
    @click.option("--batch-size", default=512, show_default=True)
    @click.option("--max-length", default=512, show_default=True)
    @click.option("--device", default="cuda", show_default=True)
    def encode(input_path, output, batch_size, max_length, device):
        """Embed every document of a JSONL file."""
        try:
            n = run_encode(input_path, output, batch_size, max_length, device)
        except Exception as e:
            raise click.ClickException(str(e))
        click.echo(f"wrote {n} embeddings to {output}")
else:
    import argparse

    def cli():
        p = argparse.ArgumentParser(prog="embedctl")
        sub = p.add_subparsers(dest="cmd", required=True)
        e = sub.add_parser("encode")
        e.add_argument("--input", dest="input_path", required=True)
        e.add_argument("--output", required=True)
        e.add_argument("--batch-size", type=int, default=512)
        e.add_argument("--max-length", type=int, default=512)
        e.add_argument("--device", default="cuda")
        a = p.parse_args()
        try:
            n = run_encode(a.input_path, a.output, a.batch_size, a.max_length, a.device)
        except Exception as e:
            print(f"Error: {e}", file=sys.stderr)
            sys.exit(1)
        print(f"wrote {n} embeddings to {a.output}")

if __name__ == "__main__":
    cli()
''', ["encode", "--input", "docs.jsonl", "--output", "docs.emb.pt", "--batch-size", "512"])


def s27c_retry_halved_batch_fails():
    # run.sh's holder leaves 6 GiB. A depth-estimation batch job catches torch.OutOfMemoryError,
    # prints a warning, empties the cache and retries with half the batch inside its except
    # block; batch 8 of 1024 x 1024 images at 128 channels (4 GiB an activation) still does not
    # fit, so Python prints both OOMs joined by "During handling of the above exception, another
    # exception occurred:".
    run_user_script("predict_depth", r'''import sys
import time

import torch
import torch.nn as nn


def conv(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(conv(3, 128), conv(128, 128))
        self.down = nn.Sequential(conv(128, 256, 2), conv(256, 256), conv(256, 512, 2), conv(512, 512))
        self.up = nn.Sequential(nn.Upsample(scale_factor=4, mode="bilinear", align_corners=False), conv(512, 128))
        self.head = nn.Conv2d(128, 1, 1)

    def forward(self, x):
        s = self.stem(x)
        return self.head(self.up(self.down(s)) + s)


def predict(model, images, batch_size):
    out = []
    for i in range(0, len(images), batch_size):
        x = images[i:i + batch_size].cuda(non_blocking=True)
        out.append(model(x).cpu())
        print(f"  batch {i // batch_size + 1}: {len(x)} images", flush=True)
    return torch.cat(out)


def main():
    model = DepthNet().cuda().eval()
    images = torch.rand(32, 3, 1024, 1024)
    batch_size = 16
    print(f"predicting depth for {len(images)} frames at 1024x1024, batch size {batch_size}", flush=True)
    t0 = time.time()
    with torch.inference_mode():
        try:
            depth = predict(model, images, batch_size)
        except torch.OutOfMemoryError:
            print(f"WARNING: CUDA OOM at batch size {batch_size}; retrying with batch size {batch_size // 2}",
                  file=sys.stderr, flush=True)
            torch.cuda.empty_cache()
            depth = predict(model, images, batch_size // 2)
    torch.save(depth, "depth.pt")
    print(f"done in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
''')


def s27c_bench_attention_table():
    # A benchmark harness times eager attention (float32 softmax) against SDPA, fp16, B=4 H=32
    # D=128, at sequence lengths 1024-32768 on the empty card; eager runs out from 16384 on (its
    # scores alone are 64 GiB in fp16, then 128 GiB in fp32). The harness prints a Markdown table
    # with OOM in those cells, then a failures section with each error's message, and exits 1.
    run_user_script("bench_attention", r'''import sys
import time

import torch
import torch.nn.functional as F

B, H, D = 4, 32, 128
LENGTHS = [1024, 2048, 4096, 8192, 16384, 32768]
DTYPE = torch.float16


def eager(q, k, v):
    s = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
    p = s.float().softmax(-1).to(q.dtype)
    return p @ v


def sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


IMPLS = {"eager": eager, "sdpa": sdpa}


def bench(fn, L, warmup=2, iters=5):
    q, k, v = (torch.randn(B, H, L, D, device="cuda", dtype=DTYPE) for _ in range(3))
    torch.cuda.reset_peak_memory_stats()
    for _ in range(warmup):
        fn(q, k, v)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn(q, k, v)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters * 1e3, torch.cuda.max_memory_allocated() / 2**30


def main():
    print(f"# attention benchmark: torch {torch.__version__}, {torch.cuda.get_device_name(0)}, "
          f"{str(DTYPE).split('.')[-1]}, B={B} H={H} D={D}\n")
    print("| seq_len | " + " | ".join(f"{n} ms | {n} peak GiB" for n in IMPLS) + " |")
    print("|---:|" + "---:|---:|" * len(IMPLS))
    failures = []
    for L in LENGTHS:
        cells = []
        for name, fn in IMPLS.items():
            try:
                ms, peak = bench(fn, L)
                cells += [f"{ms:.2f}", f"{peak:.1f}"]
            except torch.OutOfMemoryError as e:
                cells += ["OOM", "-"]
                failures.append((name, L, str(e)))
            torch.cuda.empty_cache()
        print(f"| {L} | " + " | ".join(cells) + " |", flush=True)
    if failures:
        print(f"\n{len(failures)} of {len(LENGTHS) * len(IMPLS)} configurations failed:", file=sys.stderr)
        for name, L, msg in failures:
            print(f"  {name} seq_len={L}: {msg}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
''')


def s27c_hf_added_tokens_device_assert():
    # Not an OOM: an SFT script adds ChatML tokens to the tokenizer (ids 32000 and 32001) and
    # does not call model.resize_token_embeddings(), so the first batch's embedding lookup (and
    # the loss's targets) index past the 32000-row table: CUDA's device-side assert, reported
    # asynchronously, on the empty card.
    run_user_script("sft_chatml", _WORD_TOKENIZER + r'''
import random

import torch
from transformers import AutoModelForCausalLM

MODEL, SEQ, BATCH = "@CKPT@", 512, 8


def chat(rnd):
    turns = []
    for role in ("system", "user", "assistant", "user", "assistant"):
        words = " ".join(f"w{rnd.randrange(3, 32000)}" for _ in range(rnd.randrange(10, 60)))
        turns.append(f"<|im_start|> w{rnd.randrange(3, 32000)} {words} <|im_end|>")
    return " ".join(turns)


def main():
    tok = word_tokenizer()
    added = tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    print(f"added {added} ChatML tokens")
    model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.bfloat16, device_map="cuda")
    # model.resize_token_embeddings(len(tok))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    rnd = random.Random(0)
    model.train()
    for step in range(1, 101):
        enc = tok([chat(rnd) for _ in range(BATCH)], padding="max_length", truncation=True, max_length=SEQ,
                  return_tensors="pt").to("cuda")
        labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
        loss = model(**enc, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
'''.replace("@CKPT@", CKPT))


def s27c_host_rlimit_as_memoryerror():
    # Not a GPU OOM: a preprocessing pipeline runs each stage as a subprocess with an
    # address-space cap (resource.setrlimit(RLIMIT_AS), as `ulimit -v` in a job script would);
    # the co-occurrence stage allocates a 120000 x 120000 float32 matrix (53.6 GiB) under its
    # 24 GiB cap: numpy's MemoryError ("Unable to allocate"), and the driver reports the stage's
    # exit status, on a machine with far more free memory than that.
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "build_vocab.py"), "w", encoding="utf-8") as fh:
        fh.write(r'''import json
import random

rnd = random.Random(0)
vocab = {f"w{i}": rnd.randrange(5, 100000) for i in range(120000)}
with open("vocab.json", "w") as fh:
    json.dump(vocab, fh)
print(f"vocab: {len(vocab)} words (min_count=5) -> vocab.json")
''')
    with open(os.path.join(WORK, "build_cooc.py"), "w", encoding="utf-8") as fh:
        fh.write(r'''import argparse
import json

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("--vocab", required=True)
p.add_argument("--window", type=int, default=5)
args = p.parse_args()
with open(args.vocab) as fh:
    vocab = json.load(fh)
V = len(vocab)
print(f"co-occurrence counts: {V} x {V} float32, window {args.window}", flush=True)
counts = np.zeros((V, V), dtype=np.float32)
rng = np.random.default_rng(0)
for _ in range(100):
    i, j = rng.integers(0, V, (2, 1_000_000))
    np.add.at(counts, (i, j), 1.0 / args.window)
np.save("cooc.npy", counts)
''')
    run_user_script("pipeline", r'''import resource
import subprocess
import sys
import time

STAGES = [
    ("vocab", ["build_vocab.py"], 8),
    ("cooc", ["build_cooc.py", "--vocab", "vocab.json", "--window", "5"], 24),
    ("glove", ["train_glove.py", "--cooc", "cooc.npy", "--dim", "300"], 48),
]


def cap(gib):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
    return apply


for name, argv, gib in STAGES:
    print(f"[pipeline] stage {name}: {' '.join(argv)} (address space <= {gib} GiB)", flush=True)
    t0 = time.time()
    rc = subprocess.call([sys.executable] + argv, preexec_fn=cap(gib))
    if rc != 0:
        print(f"[pipeline] stage {name} failed with exit status {rc} after {time.time() - t0:.1f}s", flush=True)
        sys.exit(rc)
    print(f"[pipeline] stage {name} ok ({time.time() - t0:.1f}s)", flush=True)
''')


def s27c_gloo_ddp_timeout_rank0_eval():
    # Not a memory failure: a two-process DDP run on one card over gloo (mp.spawn,
    # init_process_group(timeout=15 s), set short while debugging hangs); rank 0 runs the
    # validation pass after step 5 (its loader decodes slowly: a 50 ms sleep an item stands in
    # for the decoding) while rank 1 goes on to step 6, whose gradient all-reduce waits on rank 0
    # and times out in gloo; mp.spawn re-raises rank 1's error.
    run_user_script("train_ddp_gloo", r'''import datetime
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset

EVAL_EVERY = 5


class ValImages(Dataset):
    def __len__(self):
        return 400

    def __getitem__(self, i):
        time.sleep(0.05)  # JPEG decode + resize
        g = torch.Generator().manual_seed(i)
        return torch.randn(3 * 64 * 64, generator=g), i % 100


def evaluate(model):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in DataLoader(ValImages(), batch_size=50):
            pred = model(x.cuda()).argmax(-1).cpu()
            correct += (pred == y).sum().item()
            total += len(y)
    model.train()
    return correct / total


def run(rank, world):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29627")
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=15))
    torch.cuda.set_device(0)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3 * 64 * 64, 2048), nn.ReLU(), nn.Linear(2048, 100)).cuda()
    model = DDP(net, device_ids=[0])
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(1, 1001):
        x = torch.randn(256, 3 * 64 * 64, device="cuda")
        y = torch.randint(0, 100, (256,), device="cuda")
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"[rank {rank}] step {step} loss {loss.item():.4f}", flush=True)
        if rank == 0 and step % EVAL_EVERY == 0:
            print(f"[rank 0] evaluating after step {step}", flush=True)
            print(f"[rank 0] val acc {evaluate(model.module):.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2)
''')


SCENARIOS = {
    "hf_from_pretrained": hf_from_pretrained,
    "hf_generate": hf_generate,
    "hf_trainer": hf_trainer,
    "hf_half": hf_half,
    "hf_to_cuda": hf_to_cuda,
    "accelerate_load_checkpoint_and_dispatch": accelerate_load_checkpoint_and_dispatch,
    "accelerate_dispatch_model": accelerate_dispatch_model,
    "accelerate_find_batch_size": accelerate_find_batch_size,
    "peft_lora": peft_lora,
    "lightning_fit": lightning_fit,
    "torch_compile": torch_compile,
    "cuda_graph_capture": cuda_graph_capture,
    "cublas_alloc": cublas_alloc,
    "context_startup": context_startup,
    "jax_jit": jax_jit,
    "jax_prealloc": jax_prealloc,
    "jax_init_full": jax_init_full,
    "pytorch_other_process": pytorch_other_process,
    "pytorch_fragmentation": pytorch_fragmentation,
    "pytorch_expandable_segments": pytorch_expandable_segments,
    "pytorch_no_caching": pytorch_no_caching,
    "pytorch_malloc_async": pytorch_malloc_async,
    "pytorch_absurd": pytorch_absurd,
    "pytorch_train_loop": pytorch_train_loop,
    "host_numpy": host_numpy,
    "device_assert": device_assert,
    "illegal_access": illegal_access,
    "hf_optimizer_step": hf_optimizer_step,
    "hf_gradient_checkpointing": hf_gradient_checkpointing,
    "torch_load_map_location": torch_load_map_location,
    "safetensors_load_file": safetensors_load_file,
    "accelerate_offload_generate": accelerate_offload_generate,
    "hf_generate_static_cache": hf_generate_static_cache,
    "compiled_evaluate": compiled_evaluate,
    "compile_reduce_overhead": compile_reduce_overhead,
    "make_graphed_callables": make_graphed_callables,
    "lightning_optimizer_step": lightning_optimizer_step,
    "lightning_predict": lightning_predict,
    "logged_oom": logged_oom,
    "logged_exception": logged_exception,
    "jax_eager": jax_eager,
    "triton_shared_memory": triton_shared_memory,
    "hf_trainer_evaluate": hf_trainer_evaluate,
    "ddp_train_step": ddp_train_step,
    "fsdp_wrap": fsdp_wrap,
    "lightning_validate": lightning_validate,
    "generate_in_thread": generate_in_thread,
    "no_grad_embed": no_grad_embed,
    "accelerate_prepare": accelerate_prepare,
    "jax_predict": jax_predict,
    "compiled_train_backward": compiled_train_backward,
    "nccl_barrier_startup": nccl_barrier_startup,
    "host_torch_cpu": host_torch_cpu,
    "hf_pipeline_batch": hf_pipeline_batch,
    "peft_prepare_kbit": peft_prepare_kbit,
    "lightning_test": lightning_test,
    "accelerate_forward_loop": accelerate_forward_loop,
    "script_module_loop": script_module_loop,
    "trainer_eval_accumulate": trainer_eval_accumulate,
    "jax_fit_update": jax_fit_update,
    "user_evaluate_nograd": user_evaluate_nograd,
    "accelerate_launch_cli": accelerate_launch_cli,
    "cdist_similarity": cdist_similarity,
    "lightning_fit_model_to_device": lightning_fit_model_to_device,
    "caught_message_only": caught_message_only,
    "autocast_accum_script": autocast_accum_script,
    "hf_auto_max_memory": hf_auto_max_memory,
    "peft_merge_unload": peft_merge_unload,
    "lightning_sanity_bf16": lightning_sanity_bf16,
    "lightning_callback_probe": lightning_callback_probe,
    "accelerate_accumulate": accelerate_accumulate,
    "compile_dynamic_rerank": compile_dynamic_rerank,
    "cuda_graph_buckets": cuda_graph_buckets,
    "jax_pmap_eval": jax_pmap_eval,
    "jax_device_put_restore": jax_device_put_restore,
    "jax_donate_learner": jax_donate_learner,
    "cublas_second_job": cublas_second_job,
    "lightning_context_holder": lightning_context_holder,
    "hf_beam_search_logged": hf_beam_search_logged,
    "pool_worker_cdist": pool_worker_cdist,
    "host_collate_worker": host_collate_worker,
    "ce_label_assert": ce_label_assert,
    "triton_int32_overflow": triton_int32_overflow,
    "trainer_resume_optimizer": trainer_resume_optimizer,
    "trainer_eval_steps": trainer_eval_steps,
    "hf_generate_beams_scores": hf_generate_beams_scores,
    "hf_pipeline_classify": hf_pipeline_classify,
    "lightning_manual_backward": lightning_manual_backward,
    "lightning_val_epoch_end": lightning_val_epoch_end,
    "compile_autotune_serve": compile_autotune_serve,
    "graphed_encoder_train": graphed_encoder_train,
    "dataparallel_checkpoint": dataparallel_checkpoint,
    "conv_full_res_validation": conv_full_res_validation,
    "fft_notebook_print": fft_notebook_print,
    "jax_scan_epochs": jax_scan_epochs,
    "peft_accelerate_accumulate": peft_accelerate_accumulate,
    "cublas_shared_card_train": cublas_shared_card_train,
    "hf_pipeline_context_holder": hf_pipeline_context_holder,
    "host_vocab_memoryerror": host_vocab_memoryerror,
    "gather_index_assert": gather_index_assert,
    "triton_autotune_smem": triton_autotune_smem,
    "trainer_distill_compute_loss": trainer_distill_compute_loss,
    "swa_averaged_copy": swa_averaged_copy,
    "func_per_sample_grads": func_per_sample_grads,
    "lightning_gpu_augment": lightning_gpu_augment,
    "accelerate_gather_eval": accelerate_gather_eval,
    "peft_conv_lora": peft_conv_lora,
    "jax_attention_server": jax_attention_server,
    "compiled_optimizer_step": compiled_optimizer_step,
    "graph_full_train_step": graph_full_train_step,
    "cublas_thread_worker": cublas_thread_worker,
    "torchrun_context_holder": torchrun_context_holder,
    "hf_streamer_thread": hf_streamer_thread,
    "notebook_repr_bar": notebook_repr_bar,
    "host_rlimit_features": host_rlimit_features,
    "hf_vocab_assert": hf_vocab_assert,
    "save_disk_full": save_disk_full,
    "safetensors_safe_open": safetensors_safe_open,
    "hf_assisted_generate": hf_assisted_generate,
    "seq2seq_predict_generate": seq2seq_predict_generate,
    "hf_resize_embeddings": hf_resize_embeddings,
    "hf_generate_long_decode": hf_generate_long_decode,
    "ddp_wrap_gloo": ddp_wrap_gloo,
    "resume_optimizer_state": resume_optimizer_state,
    "naive_int8_quantize": naive_int8_quantize,
    "checkpoint_recompute_backward": checkpoint_recompute_backward,
    "sdpa_bool_mask": sdpa_bool_mask,
    "lstm_cudnn_train": lstm_cudnn_train,
    "jax_on_demand_shared": jax_on_demand_shared,
    "jax_vmap_ensemble": jax_vmap_ensemble,
    "raise_from_user": raise_from_user,
    "rich_traceback_train": rich_traceback_train,
    "memory_fraction_cap": memory_fraction_cap,
    "torchrun_tee_prefix": torchrun_tee_prefix,
    "lightning_ddp_one_device": lightning_ddp_one_device,
    "dataloader_shm_bus": dataloader_shm_bus,
    "bce_no_sigmoid_assert": bce_no_sigmoid_assert,
    "hf_generate_nan_sampling": hf_generate_nan_sampling,
    "triton_hash_gather_illegal": triton_hash_gather_illegal,
    "trainer_save_callback": trainer_save_callback,
    "lightning_lr_find": lightning_lr_find,
    "train_loop_ce_vocab": train_loop_ce_vocab,
    "flex_block_mask": flex_block_mask,
    "upscale_inference_mode": upscale_inference_mode,
    "jax_shard_map_mesh": jax_shard_map_mesh,
    "jax_platform_allocator": jax_platform_allocator,
    "fsdp2_fully_shard": fsdp2_fully_shard,
    "memory_summary_reraise": memory_summary_reraise,
    "nvidia_smi_in_handler": nvidia_smi_in_handler,
    "logging_tqdm_backward": logging_tqdm_backward,
    "preload_dataset_gpu": preload_dataset_gpu,
    "gradient_penalty_double_backward": gradient_penalty_double_backward,
    "peft_load_adapter": peft_load_adapter,
    "mha_need_weights": mha_need_weights,
    "nccl_duplicate_gpu": nccl_duplicate_gpu,
    "policy_nan_categorical": policy_nan_categorical,
    "dataloader_worker_cgroup_killed": dataloader_worker_cgroup_killed,
    "s13_lightning_outputs_leak": s13_lightning_outputs_leak,
    "s13_lightning_batch_finder_curriculum": s13_lightning_batch_finder_curriculum,
    "s13_dpo_reference_forward": s13_dpo_reference_forward,
    "s13_eager_attention_packing": s13_eager_attention_packing,
    "s13_accelerate_clip_backward": s13_accelerate_clip_backward,
    "s13_peft_high_rank_adam": s13_peft_high_rank_adam,
    "s13_cusolver_eigh_shared": s13_cusolver_eigh_shared,
    "s13_cudnn_handle_full_card": s13_cudnn_handle_full_card,
    "s13_jax_logged_one_line": s13_jax_logged_one_line,
    "s13_jax_no_remat_layers": s13_jax_no_remat_layers,
    "s13_alloc_conf_tuned": s13_alloc_conf_tuned,
    "s13_kv_cache_sessions": s13_kv_cache_sessions,
    "s13_embed_corpus_cat": s13_embed_corpus_cat,
    "s13_gnn_full_batch_edges": s13_gnn_full_batch_edges,
    "s13_mp_spawn_worker": s13_mp_spawn_worker,
    "s13_skip_oom_batches": s13_skip_oom_batches,
    "s13_conv3d_benchmark_volume": s13_conv3d_benchmark_volume,
    "s13_manual_attention_empty_cache": s13_manual_attention_empty_cache,
    "s13_invalid_device_ordinal": s13_invalid_device_ordinal,
    "s13_device_mismatch": s13_device_mismatch,
    "s13_hf_offload_folder": s13_hf_offload_folder,
    "s13_bnb_missing": s13_bnb_missing,
    "s13_shape_error_after_summary": s13_shape_error_after_summary,
    "s13_total_loss_graph_leak": s13_total_loss_graph_leak,
    "s13_sdpa_math_forced": s13_sdpa_math_forced,
    "s13_ema_deepcopy": s13_ema_deepcopy,
    "s13_perplexity_eval_loss": s13_perplexity_eval_loss,
    "s13_job_stderr_tail": s13_job_stderr_tail,
    "s14_lightning_ema_validation_swap": s14_lightning_ema_validation_swap,
    "s14_lightning_swa_callback": s14_lightning_swa_callback,
    "s14_lightning_test_confusion": s14_lightning_test_confusion,
    "s14_lightning_predict_mc_dropout": s14_lightning_predict_mc_dropout,
    "s14_lightning_rich_val_check": s14_lightning_rich_val_check,
    "s14_lightning_checkpoint_fp32_export": s14_lightning_checkpoint_fp32_export,
    "s14_hf_trainer_preprocess_logits": s14_hf_trainer_preprocess_logits,
    "s14_hf_pipeline_sampling_generator": s14_hf_pipeline_sampling_generator,
    "s14_hf_generate_output_scores": s14_hf_generate_output_scores,
    "s14_accelerate_eval_fp32_outputs": s14_accelerate_eval_fp32_outputs,
    "s14_peft_multi_adapter_server": s14_peft_multi_adapter_server,
    "s14_compile_first_call": s14_compile_first_call,
    "s14_amp_gradscaler_first_step": s14_amp_gradscaler_first_step,
    "s14_bow_onehot_prep": s14_bow_onehot_prep,
    "s14_torch_export_run": s14_torch_export_run,
    "s14_json_log_oom": s14_json_log_oom,
    "s14_decode_no_cache_argmax": s14_decode_no_cache_argmax,
    "s14_jax_eval_full_valset": s14_jax_eval_full_valset,
    "s14_jax_adam_state_init": s14_jax_adam_state_init,
    "s14_pandas_get_dummies_memoryerror": s14_pandas_get_dummies_memoryerror,
    "s14_dist_store_timeout": s14_dist_store_timeout,
    "s14_no_cuda_visible": s14_no_cuda_visible,
    "s14_storage_size_overflow": s14_storage_size_overflow,
    "s14_graph_capture_sync": s14_graph_capture_sync,
    "s15_hf_embed_mean_pool": s15_hf_embed_mean_pool,
    "s15_retrieval_topk_scores": s15_retrieval_topk_scores,
    "s15_segmentation_argmax_fullres": s15_segmentation_argmax_fullres,
    "s15_hf_score_candidates": s15_hf_score_candidates,
    "s15_label_smoothing_loss_line": s15_label_smoothing_loss_line,
    "s15_contrastive_inbatch_loss": s15_contrastive_inbatch_loss,
    "s15_hf_sharded_fp32_load": s15_hf_sharded_fp32_load,
    "s15_hf_fp8_quantize": s15_hf_fp8_quantize,
    "s15_hf_upcast_float_eval": s15_hf_upcast_float_eval,
    "s15_dist_init_card_full": s15_dist_init_card_full,
    "s15_lightning_configure_model": s15_lightning_configure_model,
    "s15_fabric_backward": s15_fabric_backward,
    "s15_jax_sample_categorical": s15_jax_sample_categorical,
    "s15_dist_nccl_gather_logits": s15_dist_nccl_gather_logits,
    "s15_pinned_host_pool": s15_pinned_host_pool,
    "s15_anomaly_nan_backward": s15_anomaly_nan_backward,
    "s15_hf_truncated_safetensors": s15_hf_truncated_safetensors,
    "s15_audio_melspec_batch": s15_audio_melspec_batch,
    "s15_peft_dora_init": s15_peft_dora_init,
    "s15_rerank_error_from_none": s15_rerank_error_from_none,
    "s15_jax_train_logged_str": s15_jax_train_logged_str,
    "s15_hf_generate_streamer_long_context": s15_hf_generate_streamer_long_context,
    "s15_subprocess_last_line": s15_subprocess_last_line,
    "s15_accelerate_cpu_offload_forward": s15_accelerate_cpu_offload_forward,
    "s16_diffusion_sample_decode": s16_diffusion_sample_decode,
    "s16_vit_highres_attention": s16_vit_highres_attention,
    "s16_sentence_embed_json_logs": s16_sentence_embed_json_logs,
    "s16_train_then_eval_large_batch": s16_train_then_eval_large_batch,
    "s16_meta_to_empty_load": s16_meta_to_empty_load,
    "s16_accelerate_load_checkpoint_in_model": s16_accelerate_load_checkpoint_in_model,
    "s16_peft_svd_weighted_adapter": s16_peft_svd_weighted_adapter,
    "s16_hf_generate_return_sequences": s16_hf_generate_return_sequences,
    "s16_hf_trainer_predict_seqcls": s16_hf_trainer_predict_seqcls,
    "s16_hf_output_attentions_probe": s16_hf_output_attentions_probe,
    "s16_hf_vocab_similarity": s16_hf_vocab_similarity,
    "s16_lightning_long_sample_batch": s16_lightning_long_sample_batch,
    "s16_jax_conv_resolution": s16_jax_conv_resolution,
    "s16_jax_pca_svd": s16_jax_pca_svd,
    "s16_sparse_adjacency_dense": s16_sparse_adjacency_dense,
    "s16_mask_upsample_postprocess": s16_mask_upsample_postprocess,
    "s16_oom_recovered_then_save_error": s16_oom_recovered_then_save_error,
    "s16_fork_worker_cuda_init": s16_fork_worker_cuda_init,
    "s16_mmap_replay_buffer_enomem": s16_mmap_replay_buffer_enomem,
    "s16_low_memory_warning_dtype_error": s16_low_memory_warning_dtype_error,
    "s16_child_killed_sigkill": s16_child_killed_sigkill,
    "s16_oom_inside_oom_handler": s16_oom_inside_oom_handler,
    "s16_runner_last_lines": s16_runner_last_lines,
    "s16_kv_cache_prealloc_startup": s16_kv_cache_prealloc_startup,
    "s16_tta_flip_ensemble": s16_tta_flip_ensemble,
    "s16_torch_load_default_device": s16_torch_load_default_device,
    "s17_hf_export_fp32_state_dict": s17_hf_export_fp32_state_dict,
    "s17_peft_lora_train_sampling_pass": s17_peft_lora_train_sampling_pass,
    "s17_torchrun_record_summary": s17_torchrun_record_summary,
    "s17_ulimit_v_cuda_init": s17_ulimit_v_cuda_init,
    "s17_bash_rss_guard_killed": s17_bash_rss_guard_killed,
    "s17_subprocess_died_sigkill": s17_subprocess_died_sigkill,
    "s17_compile_recompile_card_full": s17_compile_recompile_card_full,
    "s17_jax_knn_topk_json": s17_jax_knn_topk_json,
    "s17_jax_grad_mlp_batches": s17_jax_grad_mlp_batches,
    "s17_tts_vocoder_long_utterance": s17_tts_vocoder_long_utterance,
    "s17_detection_pairwise_iou_nms": s17_detection_pairwise_iou_nms,
    "s17_hf_caption_inputs_embeds": s17_hf_caption_inputs_embeds,
    "s17_hf_reward_hidden_states": s17_hf_reward_hidden_states,
    "s17_hf_compile_loaded_model": s17_hf_compile_loaded_model,
    "s17_lightning_sample_callback": s17_lightning_sample_callback,
    "s17_accelerate_init_card_held": s17_accelerate_init_card_held,
    "s17_dataloader_too_many_open_files": s17_dataloader_too_many_open_files,
    "s17_nan_loss_after_memory_report": s17_nan_loss_after_memory_report,
    "s17_asr_long_file_manual_attention": s17_asr_long_file_manual_attention,
    "s17_video_frames_float_cast": s17_video_frames_float_cast,
    "s17_train_mid_epoch_eval_cat": s17_train_mid_epoch_eval_cat,
    "s17_hf_gptq_calibration_hooks": s17_hf_gptq_calibration_hooks,
    "s17_amp_deprecated_warnings_backward": s17_amp_deprecated_warnings_backward,
    "s17_dist_flat_grad_allreduce": s17_dist_flat_grad_allreduce,
    "s17_recsys_embedding_tables": s17_recsys_embedding_tables,
    "s17_jax_dpsgd_per_example_grads": s17_jax_dpsgd_per_example_grads,
    "s19_uvicorn_embed_request_log": s19_uvicorn_embed_request_log,
    "s19_paged_kv_pool_grow": s19_paged_kv_pool_grow,
    "s19_hf_pipeline_feature_extraction": s19_hf_pipeline_feature_extraction,
    "s19_peft_modules_to_save_first_step": s19_peft_modules_to_save_first_step,
    "s19_hf_trainer_eval_on_start": s19_hf_trainer_eval_on_start,
    "s19_dataloader_pin_memory_progressive": s19_dataloader_pin_memory_progressive,
    "s19_best_state_deepcopy": s19_best_state_deepcopy,
    "s19_timm_vit_train": s19_timm_vit_train,
    "s19_torchvision_maskrcnn_tiles": s19_torchvision_maskrcnn_tiles,
    "s19_cupy_stft_archive": s19_cupy_stft_archive,
    "s19_numba_density_grid": s19_numba_density_grid,
    "s19_flax_trainstate_curriculum": s19_flax_trainstate_curriculum,
    "s19_equinox_field_eval_logged": s19_equinox_field_eval_logged,
    "s19_func_hessian_influence": s19_func_hessian_influence,
    "s19_lightning_resume_card_shared": s19_lightning_resume_card_shared,
    "s19_hf_sentence_transformers_encode": s19_hf_sentence_transformers_encode,
    "s19_fp16_master_weights": s19_fp16_master_weights,
    "s19_grad_accum_logged_only": s19_grad_accum_logged_only,
    "s19_moe_router_collapse": s19_moe_router_collapse,
    "s19_gloo_allreduce_timeout": s19_gloo_allreduce_timeout,
    "s19_cupy_launch_out_of_resources": s19_cupy_launch_out_of_resources,
    "s19_sklearn_pairwise_memoryerror": s19_sklearn_pairwise_memoryerror,
    "s19_quantile_input_too_large": s19_quantile_input_too_large,
    "s19_jax_donated_buffer_reuse": s19_jax_donated_buffer_reuse,
    "s20_hf_reward_load_card_shared": s20_hf_reward_load_card_shared,
    "s20_hf_ipython_generate_beams": s20_hf_ipython_generate_beams,
    "s20_hf_trainer_logging_long_doc": s20_hf_trainer_logging_long_doc,
    "s20_accelerate_launch_lora_merge": s20_accelerate_launch_lora_merge,
    "s20_lightning_fit_plain_logs_val": s20_lightning_fit_plain_logs_val,
    "s20_vocoder_weight_norm_warnings": s20_vocoder_weight_norm_warnings,
    "s20_torchrun_ddp_no_record": s20_torchrun_ddp_no_record,
    "s20_oom_handler_nameerror": s20_oom_handler_nameerror,
    "s20_jax_scan_accum_unfiltered": s20_jax_scan_accum_unfiltered,
    "s20_jax_eval_tqdm_logits": s20_jax_eval_tqdm_logits,
    "s20_hf_first_forward_cublas": s20_hf_first_forward_cublas,
    "s20_hf_trainer_init_card_held": s20_hf_trainer_init_card_held,
    "s20_lightning_worker_killed": s20_lightning_worker_killed,
    "s20_oom_logged_then_shape_mismatch": s20_oom_logged_then_shape_mismatch,
    "s20_lightning_embedding_assert": s20_lightning_embedding_assert,
    "s20_grpc_resource_exhausted": s20_grpc_resource_exhausted,
    "s21_lbfgs_field_fit": s21_lbfgs_field_fit,
    "s21_memory_history_snapshot": s21_memory_history_snapshot,
    "s21_benchmark_attention_sweep": s21_benchmark_attention_sweep,
    "s21_profiler_memory_table": s21_profiler_memory_table,
    "s21_stream_prefetcher_fullres": s21_stream_prefetcher_fullres,
    "s21_zero_redundancy_adamw": s21_zero_redundancy_adamw,
    "s21_device_context_sweep": s21_device_context_sweep,
    "s21_hf_bert_mlm_trainer": s21_hf_bert_mlm_trainer,
    "s21_accelerate_notebook_launcher": s21_accelerate_notebook_launcher,
    "s21_peft_gc_logits_to_keep": s21_peft_gc_logits_to_keep,
    "s21_lightning_simple_profiler_fp16": s21_lightning_simple_profiler_fp16,
    "s21_lightning_transfer_batch_mask": s21_lightning_transfer_batch_mask,
    "s21_jax_gp_cholesky": s21_jax_gp_cholesky,
    "s21_flax_nnx_embedding_init": s21_flax_nnx_embedding_init,
    "s21_ngram_dedup_unique": s21_ngram_dedup_unique,
    "s21_alloc_conf_split_too_small": s21_alloc_conf_split_too_small,
    "s21_memory_fraction_over_one": s21_memory_fraction_over_one,
    "s21_triton_grid_y_invalid": s21_triton_grid_y_invalid,
    "s22_hf_pytest_prefill_batches": s22_hf_pytest_prefill_batches,
    "s22_hf_asyncio_microbatcher": s22_hf_asyncio_microbatcher,
    "s22_peft_pissa_init": s22_peft_pissa_init,
    "s22_lightning_detect_anomaly_embedding": s22_lightning_detect_anomaly_embedding,
    "s22_lightning_fsdp_one_device": s22_lightning_fsdp_one_device,
    "s22_torchmetrics_auroc_compute": s22_torchmetrics_auroc_compute,
    "s22_pyg_gat_full_batch": s22_pyg_gat_full_batch,
    "s22_gpytorch_grid_predict": s22_gpytorch_grid_predict,
    "s22_torchdiffeq_rk4_refine": s22_torchdiffeq_rk4_refine,
    "s22_numpyro_predictive_draws": s22_numpyro_predictive_draws,
    "s22_jax_prealloc_torch_encoder": s22_jax_prealloc_torch_encoder,
    "s22_jax_newton_hessian_x64": s22_jax_newton_hessian_x64,
    "s22_mp_queue_cuda_ipc_writer": s22_mp_queue_cuda_ipc_writer,
    "s22_embed_batch_from_total_memory": s22_embed_batch_from_total_memory,
    "s22_optical_flow_corr_volume": s22_optical_flow_corr_volume,
    "s22_torch_load_truncated_checkpoint": s22_torch_load_truncated_checkpoint,
    "s22_deterministic_cublas_workspace": s22_deterministic_cublas_workspace,
    "s22_pil_decompression_bomb_worker": s22_pil_decompression_bomb_worker,
    "s22e_hf_beam_scores_backtranslate": s22e_hf_beam_scores_backtranslate,
    "s22e_hf_trainer_eval_logits_midtrain": s22e_hf_trainer_eval_logits_midtrain,
    "s22e_compile_max_autotune_ffn": s22e_compile_max_autotune_ffn,
    "s22e_peft_fp32_upcast_merge": s22e_peft_fp32_upcast_merge,
    "s22e_hf_kv_pool_server_start": s22e_hf_kv_pool_server_start,
    "s22e_ddp_nccl_first_backward": s22e_ddp_nccl_first_backward,
    "s22e_jax_per_example_grad_scores": s22e_jax_per_example_grad_scores,
    "s22e_jax_empirical_ntk": s22e_jax_empirical_ntk,
    "s22e_lightning_prediction_writer_buffer": s22e_lightning_prediction_writer_buffer,
    "s22e_unet_whole_scene_nograd": s22e_unet_whole_scene_nograd,
    "s22e_asr_ctc_sortagrad_buckets": s22e_asr_ctc_sortagrad_buckets,
    "s22e_dice_onehot_void_label_assert": s22e_dice_onehot_void_label_assert,
    "s22e_citation_graph_dense_adjacency": s22e_citation_graph_dense_adjacency,
    "s22e_dist_port_in_use": s22e_dist_port_in_use,
    "s23_hf_flattening_collator_sft": s23_hf_flattening_collator_sft,
    "s23_accelerate_reward_pairwise": s23_accelerate_reward_pairwise,
    "s23_lightning_ddp_spawn_oom": s23_lightning_ddp_spawn_oom,
    "s23_dataloader_worker_cuda_augment": s23_dataloader_worker_cuda_augment,
    "s23_manual_kv_cat_decode": s23_manual_kv_cat_decode,
    "s23_topp_sort_large_vocab": s23_topp_sort_large_vocab,
    "s23_diffrax_saveat_steps": s23_diffrax_saveat_steps,
    "s23_e3nn_tensor_product_edges": s23_e3nn_tensor_product_edges,
    "s23_dist_all_gather_object_preds": s23_dist_all_gather_object_preds,
    "s23_nerf_render_chunk": s23_nerf_render_chunk,
    "s23_botorch_optimize_acqf": s23_botorch_optimize_acqf,
    "s23_cupy_kmeans_distances": s23_cupy_kmeans_distances,
    "s23_optax_lbfgs_deblur": s23_optax_lbfgs_deblur,
    "s23_multinomial_negative_sampling_categories": s23_multinomial_negative_sampling_categories,
    "s23_hf_save_pretrained_disk_full": s23_hf_save_pretrained_disk_full,
    "s23_cuda_graph_replay_grown_batch": s23_cuda_graph_replay_grown_batch,
    "s23_torch_load_weights_only_numpy": s23_torch_load_weights_only_numpy,
    "s23_negative_dim_int32_overflow": s23_negative_dim_int32_overflow,
    "s23e_vit_eval_nograd_batch": s23e_vit_eval_nograd_batch,
    "s23e_tbptt_hidden_retain_graph": s23e_tbptt_hidden_retain_graph,
    "s23e_checkpoint_long_dna_attention": s23e_checkpoint_long_dna_attention,
    "s23e_clip_custom_function_backward": s23e_clip_custom_function_backward,
    "s23e_speculative_decode_verify": s23e_speculative_decode_verify,
    "s23e_sinkhorn_unrolled_da_loss": s23e_sinkhorn_unrolled_da_loss,
    "s23e_unfold_patch_denoise_4k": s23e_unfold_patch_denoise_4k,
    "s23e_jax_fwi_scan_grad": s23e_jax_fwi_scan_grad,
    "s23e_cupy_tiles_card_held": s23e_cupy_tiles_card_held,
    "s23e_audio_manifest_pad_memoryerror": s23e_audio_manifest_pad_memoryerror,
    "s23e_dataloader_cache_worker_killed": s23e_dataloader_cache_worker_killed,
    "s23e_triton_voxel_scatter_illegal": s23e_triton_voxel_scatter_illegal,
    "s24_lightning_load_ckpt_map_location": s24_lightning_load_ckpt_map_location,
    "s24_hf_model_soup_average": s24_hf_model_soup_average,
    "s24_hf_engine_profile_run": s24_hf_engine_profile_run,
    "s24_dqn_replay_buffer_device": s24_dqn_replay_buffer_device,
    "s24_hf_batch_summarize_outlier": s24_hf_batch_summarize_outlier,
    "s24_timm_vit_periodic_eval": s24_timm_vit_periodic_eval,
    "s24_jax_optax_multisteps": s24_jax_optax_multisteps,
    "s24_hf_grpo_group_logprobs": s24_hf_grpo_group_logprobs,
    "s24_maml_inner_loop": s24_maml_inner_loop,
    "s24_shampoo_first_step": s24_shampoo_first_step,
    "s24_tokenize_corpus_job": s24_tokenize_corpus_job,
    "s24_audio_encoder_long_clip": s24_audio_encoder_long_clip,
    "s24_compile_shared_node_tmp": s24_compile_shared_node_tmp,
    "s24_gpytorch_duplicate_sites": s24_gpytorch_duplicate_sites,
    "s25_lightning_landcover_tiles": s25_lightning_landcover_tiles,
    "s25_mamba_reference_lm": s25_mamba_reference_lm,
    "s25_ema_bf16_pretrain": s25_ema_bf16_pretrain,
    "s25_lottery_ticket_rounds": s25_lottery_ticket_rounds,
    "s25_width_lr_sweep": s25_width_lr_sweep,
    "s25_vit_attributions": s25_vit_attributions,
    "s25_jax_pm_nbody": s25_jax_pm_nbody,
    "s25_ddim_guided_upsampler": s25_ddim_guided_upsampler,
    "s25_hf_logit_lens_probe": s25_hf_logit_lens_probe,
    "s25_dcp_resume_run": s25_dcp_resume_run,
    "s25_events_parquet_merge": s25_events_parquet_merge,
    "s25_embedding_feature_job": s25_embedding_feature_job,
    "s25_pyg_citation_gcn": s25_pyg_citation_gcn,
    "s26_hf_qkv_fuse_export": s26_hf_qkv_fuse_export,
    "s26_hf_loglik_harness": s26_hf_loglik_harness,
    "s26_peft_notebook_lora_backward": s26_peft_notebook_lora_backward,
    "s26_lightning_moco_queue_growth": s26_lightning_moco_queue_growth,
    "s26_jax_score_sampler": s26_jax_score_sampler,
    "s26_host_torchrun_tokens_cgroup": s26_host_torchrun_tokens_cgroup,
    "s26_cupy_mosaic_hist_int32_illegal": s26_cupy_mosaic_hist_int32_illegal,
    "s26_hf_service_startup_models": s26_hf_service_startup_models,
    "s26_accelerate_first_optimizer_step": s26_accelerate_first_optimizer_step,
    "s26_vit_autobatch_then_adamw": s26_vit_autobatch_then_adamw,
    "s26_shard_worker_logged_error": s26_shard_worker_logged_error,
    "s26_jax_sweep_summary_table": s26_jax_sweep_summary_table,
    "s26_numba_context_card_held": s26_numba_context_card_held,
    "s26b_unet_cfg_sampler": s26b_unet_cfg_sampler,
    "s26b_graph_capture_decode_server": s26b_graph_capture_decode_server,
    "s26b_hf_kv_block_server": s26b_hf_kv_block_server,
    "s26b_seg_service_warmup_max_batch": s26b_seg_service_warmup_max_batch,
    "s26b_ddp_single_process_wrap": s26b_ddp_single_process_wrap,
    "s26b_hf_trainer_evaluate_only": s26b_hf_trainer_evaluate_only,
    "s26b_peft_merge_save_verify": s26b_peft_merge_save_verify,
    "s26b_grad_accum_big_vocab_ce": s26b_grad_accum_big_vocab_ce,
    "s26b_flax_pmap_train_step": s26b_flax_pmap_train_step,
    "s26b_lightning_h5_setup_cgroup": s26b_lightning_h5_setup_cgroup,
    "s26b_cublas_query_after_index_reserve": s26b_cublas_query_after_index_reserve,
    "s26b_pool_worker_reraise_message": s26b_pool_worker_reraise_message,
    "s26b_json_log_job_failed": s26b_json_log_job_failed,
    "s26c_hf_http_handler_generate": s26c_hf_http_handler_generate,
    "s26c_jax_keras_fit_progressive": s26c_jax_keras_fit_progressive,
    "s26c_lightning_validate_retrieval": s26c_lightning_validate_retrieval,
    "s26c_hf_pipeline_chunk_loop": s26c_hf_pipeline_chunk_loop,
    "s26c_accelerate_device_map_gpu0": s26c_accelerate_device_map_gpu0,
    "s26c_compile_first_call_larger_shape": s26c_compile_first_call_larger_shape,
    "s26c_peft_kbit_prepare_first_step": s26c_peft_kbit_prepare_first_step,
    "s26c_hf_kd_distill_logged_error": s26c_hf_kd_distill_logged_error,
    "s26c_hf_ckpt_average_export": s26c_hf_ckpt_average_export,
    "s26c_dataloader_worker_segfault": s26c_dataloader_worker_segfault,
    "s26d_clip_contrastive_step": s26d_clip_contrastive_step,
    "s26d_rl_rollout_policy_graph": s26d_rl_rollout_policy_graph,
    "s26d_superres_8k_tiles": s26d_superres_8k_tiles,
    "s26d_conformer_long_audio_batch": s26d_conformer_long_audio_batch,
    "s26d_hf_trainer_predict_lm_logits": s26d_hf_trainer_predict_lm_logits,
    "s26d_checkpoint_stages_reentrant_vit": s26d_checkpoint_stages_reentrant_vit,
    "s26d_vae_decode_memory_summary": s26d_vae_decode_memory_summary,
    "s26d_hf_beam8_batch_summaries": s26d_hf_beam8_batch_summaries,
    "s26d_hf_resume_torch_load_cuda": s26d_hf_resume_torch_load_cuda,
    "s27_tv_retinanet_dense_gt_train": s27_tv_retinanet_dense_gt_train,
    "s27_vocoder_jsonl_worker": s27_vocoder_jsonl_worker,
    "s27_video_cv2_sliding_clips": s27_video_cv2_sliding_clips,
    "s27_jax_spectral_ns_rk4": s27_jax_spectral_ns_rk4,
    "s27_moe_dense_dispatch_einsum": s27_moe_dense_dispatch_einsum,
    "s27_transformer_fastpath_eval": s27_transformer_fastpath_eval,
    "s27_numba_knn_kernel_numpy_attr": s27_numba_knn_kernel_numpy_attr,
    "s27_cupy_uint32_sentinel_illegal": s27_cupy_uint32_sentinel_illegal,
    "s27_lightning_summary_example_input": s27_lightning_summary_example_input,
    "s27_als_interactions_toarray": s27_als_interactions_toarray,
    "s27_joblib_loky_trials": s27_joblib_loky_trials,
    "s27b_hf_chat_repl_paste_file": s27b_hf_chat_repl_paste_file,
    "s27b_hf_completions_logprobs_replay": s27b_hf_completions_logprobs_replay,
    "s27b_peft_dpo_disable_adapter_ref": s27b_peft_dpo_disable_adapter_ref,
    "s27b_accelerate_clm_no_trainer_grouped": s27b_accelerate_clm_no_trainer_grouped,
    "s27b_hf_bnb_missing_fp32_ppl": s27b_hf_bnb_missing_fp32_ppl,
    "s27b_hf_needle_eager_attn_jsonl": s27b_hf_needle_eager_attn_jsonl,
    "s27b_flax_lm_remat_off": s27b_flax_lm_remat_off,
    "s27b_tv_deeplab_multiscale_tta": s27b_tv_deeplab_multiscale_tta,
    "s27b_gloo_allgather_uneven_shards": s27b_gloo_allgather_uneven_shards,
    "s27b_host_pool_broken_cgroup": s27b_host_pool_broken_cgroup,
    "s27b_tabular_gpu_one_hot": s27b_tabular_gpu_one_hot,
    "s27c_hf_load_reraise_from": s27c_hf_load_reraise_from,
    "s27c_hf_generate_pool_worker": s27c_hf_generate_pool_worker,
    "s27c_peft_ipython_lora_step": s27c_peft_ipython_lora_step,
    "s27c_compile_warmup_rich": s27c_compile_warmup_rich,
    "s27c_hf_eval_logging_prefixed_tb": s27c_hf_eval_logging_prefixed_tb,
    "s27c_hf_full_ft_warnings": s27c_hf_full_ft_warnings,
    "s27c_elastic_launcher_summary": s27c_elastic_launcher_summary,
    "s27c_cli_error_only": s27c_cli_error_only,
    "s27c_retry_halved_batch_fails": s27c_retry_halved_batch_fails,
    "s27c_bench_attention_table": s27c_bench_attention_table,
    "s27c_hf_added_tokens_device_assert": s27c_hf_added_tokens_device_assert,
    "s27c_host_rlimit_as_memoryerror": s27c_host_rlimit_as_memoryerror,
    "s27c_gloo_ddp_timeout_rank0_eval": s27c_gloo_ddp_timeout_rank0_eval,
}


def main():
    if NAME == "_setup":
        setup()
    elif NAME == "_resume_ckpt":
        resume_checkpoint()
    elif NAME == "_adapter":
        _make_adapter()
    elif NAME == "_shards":
        _make_shards()
    elif NAME == "_hold":
        hold(int(sys.argv[2]), sys.argv[3])
    elif NAME == "_list":
        print("\n".join(SCENARIOS))
    elif NAME in SCENARIOS:
        SCENARIOS[NAME]()
        print(f"NO-ERROR: scenario {NAME} finished without failing", file=sys.stderr)
        sys.exit(3)
    else:
        sys.exit(f"unknown scenario {NAME!r}; one of: {', '.join(SCENARIOS)}")


if __name__ == "__main__":
    main()
