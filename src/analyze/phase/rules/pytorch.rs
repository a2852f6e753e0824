//! The frame rules of PyTorch itself: CUDA initialisation, module moves, FSDP wrapping,
//! TorchScript, reference models.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Move, Serve, Stage};
use crate::model::explain::Phase::{
    CudaGraphCapture as G, FormatConversion as F, Inference as I, Startup as S, TrainingStep as T,
    WeightsLoad as W,
};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_FSDP2: &[FrameRule] = &[
    // --- FSDP2 (torch 2.4 `distributed/_composable/fsdp/fully_shard.py`, 2.6+
    // `distributed/fsdp/_fully_shard/_fully_shard.py`): `fully_shard` shards and places the
    // parameters; ColossalAI `booster/booster.py` `Booster.boost` does the same. ---
    r("fully_shard", "torch/distributed/", W, Stage, "torch"),
    r("boost", "colossalai/booster/", W, Stage, "colossalai"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const TORCH: &[FrameRule] = &[
    // --- torch ---
    r("_lazy_init", "torch/cuda/", S, Stage, "torch"),
    // torch ≤ 1.4 `torch/cuda/__init__.py`: the first `torch.cuda.*Tensor` runs `_lazy_new`,
    // which runs `_lazy_init` (context creation).
    r("_lazy_new", "torch/cuda/", S, Stage, "torch"),
    // Numba's CUDA target (numba 0.5x `numba/cuda/cudadrv/devices.py`, and the numba-cuda
    // package's `numba_cuda/numba/cuda/cudadrv/devices.py`): the first CUDA call of a program
    // (`cuda.to_device`, a kernel launch) runs `_require_cuda_context` → `ensure_context` →
    // `get_or_create_context`, which creates the device's primary context
    // (`driver.py` `Device.get_primary_context`): the process's CUDA start-up.
    r(
        "get_or_create_context",
        "numba/cuda/cudadrv/",
        S,
        Stage,
        "numba",
    ),
    // Numba's driver initialisation (`numba/cuda/cudadrv/driver.py` `Driver.ensure_initialized`:
    // `self.cuInit(0)`), run by the first use of the driver (cuDF's `import cudf` checks the
    // versions through it): the process's CUDA start-up.
    r(
        "ensure_initialized",
        "numba/cuda/cudadrv/",
        S,
        Stage,
        "numba",
    ),
    r(
        "get_primary_context",
        "numba/cuda/cudadrv/",
        S,
        Stage,
        "numba",
    ),
    r("set_device", "torch/cuda/", S, Stage, "torch"),
    // `torch.cuda.set_per_process_memory_fraction` (`cuda/memory.py`) caps the caching
    // allocator before the job allocates: the device's set-up (it raises `Invalid fraction
    // value: … Allowed range: 0~1` there).
    r(
        "set_per_process_memory_fraction",
        "torch/cuda/",
        S,
        Stage,
        "torch",
    ),
    r("init_process_group", "torch/distributed", S, Stage, "torch"),
    r("to", "torch/nn/modules/module.py", W, Move, "torch"),
    // `convert` is the closure of `Module.to` (`.half()`/`.float()` pass lambdas).
    r("convert", "torch/nn/modules/module.py", W, Move, "torch"),
    r("to", "bitsandbytes/", W, Move, "bitsandbytes"),
    // ipex-llm (formerly bigdl-llm) `transformers/low_bit_linear.py` `FP4Params.to`, its
    // bitsandbytes-like low-bit parameter: `new_param = FP4Params(super().to(device=device, …`
    // copies a quantized weight onto the XPU (`model.to("xpu")` after `from_pretrained(…,
    // load_in_low_bit=…)`).
    r(
        "to",
        "ipex_llm/transformers/low_bit_linear.py",
        W,
        Move,
        "ipex-llm",
    ),
    r(
        "to",
        "bigdl/llm/transformers/low_bit_linear.py",
        W,
        Move,
        "ipex-llm",
    ),
    r("cuda", "torch/nn/modules/module.py", W, Move, "torch"),
    // `Module.to_empty(device=…)` (torch 1.10+ `nn/modules/module.py`) gives a module built on
    // the meta device its parameters' storage on the device (`_apply` of `torch.empty_like`),
    // the placement step of a meta-device load before the state dict is copied in.
    r("to_empty", "torch/nn/modules/module.py", W, Move, "torch"),
    // A layer's constructor (`nn.Linear.__init__`, `nn.Embedding.__init__`, `nn.Conv2d`'s
    // `_ConvNd.__init__`: `torch.empty(…, **factory_kwargs)`) allocates its parameters where
    // the module is built: on the GPU under `with torch.device("cuda")` (`torch/utils/
    // _device.py` `__torch_function__`) or with `device="cuda"`: the weights created there.
    // As a serving frame, so that a stage around it keeps the failure (transformers
    // `resize_token_embeddings` builds the new `nn.Embedding`: a conversion of the weights).
    r("__init__", "torch/nn/modules/", W, Serve, "torch"),
    r("half", "torch/nn/modules/module.py", F, Stage, "torch"),
    r("float", "torch/nn/modules/module.py", F, Stage, "torch"),
    r("bfloat16", "torch/nn/modules/module.py", F, Stage, "torch"),
    r("double", "torch/nn/modules/module.py", F, Stage, "torch"),
    r("type", "torch/nn/modules/module.py", F, Stage, "torch"),
    r(
        "load_state_dict",
        "torch/nn/modules/module.py",
        W,
        Stage,
        "torch",
    ),
    r("load", "torch/serialization.py", W, Stage, "torch"),
    // `torch.load`'s inner frames, where a paste begins below `load` (torch 0.4–2.x
    // `serialization.py`: `_load` / `_legacy_load` → `persistent_load` → `load_tensor` →
    // `restore_location` → `default_restore_location` → `_cuda_deserialize`, which makes the
    // storage on the device it was saved from).
    r("_load", "torch/serialization.py", W, Stage, "torch"),
    r("_legacy_load", "torch/serialization.py", W, Stage, "torch"),
    r(
        "persistent_load",
        "torch/serialization.py",
        W,
        Stage,
        "torch",
    ),
    r("load_tensor", "torch/serialization.py", W, Stage, "torch"),
    r(
        "default_restore_location",
        "torch/serialization.py",
        W,
        Stage,
        "torch",
    ),
    r(
        "_cuda_deserialize",
        "torch/serialization.py",
        W,
        Stage,
        "torch",
    ),
    // Torch7 (Lua, 2014–2018) `torch/File.lua`: `torch.load` reads a saved object back
    // (`readObject`), a model's tensors onto the GPU when they were saved from it.
    r("readObject", "torch/File.lua", W, Stage, "torch7"),
    // Torch7's `optim` package (torch/optim: `adam.lua`, `lbfgs.lua`, `sgd.lua`, …, each
    // `optim.<name>(opfunc, x, config, state)` evaluating the loss and its gradient through
    // `opfunc`, then updating `x`): an optimisation step (neural-style optimises its image
    // this way, session 48).
    r("adam", "optim/adam.lua", T, Stage, "torch7"),
    r("lbfgs", "optim/lbfgs.lua", T, Stage, "torch7"),
    r("sgd", "optim/sgd.lua", T, Stage, "torch7"),
    r("rmsprop", "optim/rmsprop.lua", T, Stage, "torch7"),
    r("adagrad", "optim/adagrad.lua", T, Stage, "torch7"),
    r("capture_begin", "torch/cuda/graphs.py", G, Stage, "torch"),
    r("capture_end", "torch/cuda/graphs.py", G, Stage, "torch"),
    r("__enter__", "torch/cuda/graphs.py", G, Stage, "torch"),
    r("__exit__", "torch/cuda/graphs.py", G, Stage, "torch"),
    r("make_graphed_callables", "", G, Stage, "torch"),
    // torch.compile(mode="reduce-overhead") records CUDA graphs through inductor's CUDA-graph
    // trees (`torch/_inductor/cudagraph_trees.py`): `cudagraphify` / `deferred_cudagraphify`
    // build a graph for a new shape, `record_function` records it and `run_eager` is its
    // warm-up run before recording (torch 2.1+; older releases: `compile_fx.py
    // cudagraphify_impl`).
    r("cudagraphify", "torch/_inductor/", G, Stage, "torch"),
    r(
        "deferred_cudagraphify",
        "torch/_inductor/",
        G,
        Stage,
        "torch",
    ),
    r("cudagraphify_impl", "torch/_inductor/", G, Stage, "torch"),
    r(
        "record_function",
        "torch/_inductor/cudagraph_trees.py",
        G,
        Stage,
        "torch",
    ),
    r(
        "run_eager",
        "torch/_inductor/cudagraph_trees.py",
        G,
        Stage,
        "torch",
    ),
    // Activation checkpointing (`torch/utils/checkpoint.py`: `checkpoint`,
    // `checkpoint_sequential`, the recomputation in backward `recompute_fn`/`unpack_hook`)
    // saves memory for backward: it runs in training.
    r("checkpoint", "torch/utils/checkpoint.py", T, Serve, "torch"),
    r(
        "checkpoint_sequential",
        "torch/utils/checkpoint.py",
        T,
        Serve,
        "torch",
    ),
    r(
        "recompute_fn",
        "torch/utils/checkpoint.py",
        T,
        Serve,
        "torch",
    ),
    r(
        "unpack_hook",
        "torch/utils/checkpoint.py",
        T,
        Serve,
        "torch",
    ),
    // safetensors `torch.py`: `load_file(filename, device="cuda:0")` / `load(...)` put a
    // checkpoint's tensors straight on the GPU.
    r("load_file", "safetensors/", W, Stage, "safetensors"),
    r("backward", "", T, Serve, "torch"),
    // `torch.autograd.grad` (`torch/autograd/__init__.py` `grad`, 1.x–2.2: it calls the engine
    // from its own body, so its frame is the innermost printed; 2.3+ goes through
    // `_engine_run_backward`): gradients taken, a meta-learning inner step, a gradient penalty.
    r("grad", "torch/autograd/__init__.py", T, Serve, "torch"),
    r("_engine_run_backward", "", T, Serve, "torch"),
    r("run_backward", "", T, Serve, "torch"),
    r("step", "/optim/", T, Serve, "torch"),
    r("_use_grad", "/optim/", T, Serve, "torch"),
    // `Optimizer.load_state_dict` (torch `optim/optimizer.py`, 2.1 → 2.11: `_cast` →
    // `_process_value_according_to_param_policy` moves each saved state tensor to its
    // parameter's device) restores a checkpoint's optimizer state (Lightning's
    // `restore_optimizers`, a resumed Trainer) before any step: a load.
    r("load_state_dict", "torch/optim/", W, Stage, "torch"),
    r("_cast", "torch/optim/optimizer.py", W, Stage, "torch"),
    r(
        "_process_value_according_to_param_policy",
        "torch/optim/optimizer.py",
        W,
        Stage,
        "torch",
    ),
    // Any function of torch.optim (`adamw`, `_single_tensor_adamw`, `_multi_tensor_adam`, …).
    r("", "torch/optim/", T, Serve, "torch"),
    r("clip_grad_norm_", "", T, Serve, "torch"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const FSDP: &[FrameRule] = &[
    // --- FSDP: wrapping a module moves its parameters to the GPU (torch 2.x
    // `torch/distributed/fsdp/_init_utils.py` `_init_param_handle_from_module` →
    // `_move_module_to_device` → `_move_states_to_device`; FSDP2's `fully_shard` calls
    // `_move_states_to_device` in `_fully_shard/_fsdp_init.py`) ---
    r(
        "_move_module_to_device",
        "torch/distributed/fsdp/",
        W,
        Move,
        "torch",
    ),
    r(
        "_move_states_to_device",
        "torch/distributed/fsdp/",
        W,
        Move,
        "torch",
    ),
    // FSDP1's `FlatParamHandle._init_flat_param` (`torch/distributed/fsdp/flat_param.py`, run
    // once from the handle's constructor while wrapping) flattens the module's parameters into
    // one tensor on the device; the name is FSDP's alone, so a Rich box that wrapped its path
    // (`…/fsdp/fla` │ `t_param.py:462 in _init_flat_param`) is still read.
    r("_init_flat_param", "", W, Move, "torch"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const TORCHSCRIPT: &[FrameRule] = &[
    // A TorchScript module's serialized code (`torch.jit.load` keeps it under `code/__torch__/`
    // and its frames name that file): a scripted model shipped to run inputs through it.
    r("forward", "code/__torch__/", I, Serve, "torchscript"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const GPT_OSS_FSDP1: &[FrameRule] = &[
    // --- gpt-oss reference implementations (`gpt_oss/torch|triton/model.py`: `Transformer.
    // from_checkpoint` loads the weights, `TokenGenerator.generate` and the model's `forward`
    // generate; the repository has no training code). ---
    r("from_checkpoint", "gpt_oss/", W, Stage, "gpt-oss"),
    r("forward", "gpt_oss/", I, Serve, "gpt-oss"),
    // --- FSDP1 wrapping (torch 2.0–2.6 `torch/distributed/fsdp/fully_sharded_data_parallel.py`
    // `FullyShardedDataParallel.__init__` → `_wrap_utils.py` `_auto_wrap` → `wrap.py`
    // `_recursive_wrap`, and `_init_utils.py` `_init_param_handle_from_module` →
    // `_sync_module_params_and_buffers` → `torch/distributed/utils.py`
    // `_sync_params_and_buffers`, which broadcasts rank 0's weights): the model is being
    // sharded onto the GPUs before any step. DDP's constructor (`torch/nn/parallel/
    // distributed.py` `__init__`) is not listed: besides broadcasting the weights
    // (`_sync_module_states`, listed) it builds the gradient buckets of its reducer
    // (`_ddp_init_helper` → `dist.Reducer(…)`), which is set-up for training rather than a
    // load; the labels read a failure there as no stage the text shows (two public texts
    // against one made on the H200, session 26), so it stays unlisted. ---
    r(
        "__init__",
        "torch/distributed/fsdp/fully_sharded_data_parallel.py",
        W,
        Stage,
        "torch",
    ),
    r("_auto_wrap", "torch/distributed/fsdp/", W, Stage, "torch"),
    r(
        "_recursive_wrap",
        "torch/distributed/fsdp/",
        W,
        Stage,
        "torch",
    ),
    r(
        "_init_param_handle_from_module",
        "torch/distributed/fsdp/",
        W,
        Stage,
        "torch",
    ),
    r(
        "_sync_module_params_and_buffers",
        "torch/distributed/",
        W,
        Stage,
        "torch",
    ),
    r(
        "_sync_params_and_buffers",
        "torch/distributed/",
        W,
        Stage,
        "torch",
    ),
    r(
        "_sync_module_states",
        "torch/distributed/",
        W,
        Stage,
        "torch",
    ),
];
