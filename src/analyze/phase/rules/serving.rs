//! The frame rules of serving engines and inference runtimes: vLLM, SGLang, TGI, LMDeploy,
//! TensorRT-LLM, TensorRT, ONNX Runtime.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Serve, Stage, Wrapper};
use crate::model::explain::Phase::{
    CudaGraphCapture as G, FormatConversion as F, Inference as I, KvCacheAlloc as K,
    Profiling as P, Startup as S, WeightsLoad as W,
};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_VLLM_SGLANG_LMDEPLOY: &[FrameRule] = &[
    // --- vLLM V1 0.10–0.11+: `v1/worker/gpu_worker.py` `execute_dummy_batch` (a
    // data-parallel rank with no requests runs `_dummy_run(1)` in step with the others, while
    // serving); `sample_tokens` (0.11+, `gpu_model_runner.py`, the second half of a step). ---
    r("execute_dummy_batch", "vllm/", I, Serve, "vllm"),
    // --- vLLM-Omni 0.x `vllm_omni/diffusion/diffusion_engine.py`: `DiffusionEngine.__init__`
    // runs `_dummy_run` (a generation on a dummy request, `Dummy run failed: …` when it
    // fails) to warm the pipeline up before it serves. ---
    r("_dummy_run", "vllm_omni/diffusion/", P, Stage, "vllm"),
    r("sample_tokens", "vllm/", I, Serve, "vllm"),
    // --- vLLM V1 0.10+ `vllm/model_executor/warmup/` (`kernel_warmup` → `deep_gemm_warmup`,
    // `flashinfer_autotune`): the worker's `compile_or_warm_up_model` runs the kernels on dummy
    // inputs at start-up, before any request: a warm-up, read as profiling as the sampler's
    // warm-up is. ---
    r("", "vllm/model_executor/warmup/", P, Stage, "vllm"),
    // --- vLLM V0 0.4–0.10 sampler (`model_executor/layers/sampler.py` `Sampler.forward` →
    // `_init_sampling_tensors` → `model_executor/sampling_metadata.py`
    // `SamplingTensors.from_sampling_metadata` → `from_lists`): the tokens of a step are
    // sampled from its logits. `ModelRunner.execute_model` calls it (`self.model.sample`), so
    // it serves as that frame does: `profile_run` (which runs `execute_model` on dummy
    // sequences) encloses it when the traceback shows it. ---
    r(
        "forward",
        "vllm/model_executor/layers/sampler.py",
        I,
        Serve,
        "vllm",
    ),
    // `get_logprobs` (the same module, 0.5–0.10: the sampled and prompt tokens' logprobs,
    // `logprobs[query_indices_gpu]`) runs under `Sampler.forward` too.
    r(
        "get_logprobs",
        "vllm/model_executor/layers/sampler.py",
        I,
        Serve,
        "vllm",
    ),
    r(
        "_init_sampling_tensors",
        "vllm/model_executor/layers/sampler.py",
        I,
        Serve,
        "vllm",
    ),
    r(
        "from_sampling_metadata",
        "vllm/model_executor/sampling_metadata.py",
        I,
        Serve,
        "vllm",
    ),
    r(
        "from_lists",
        "vllm/model_executor/sampling_metadata.py",
        I,
        Serve,
        "vllm",
    ),
    // --- vLLM V1 0.8–0.11+ `v1/engine/core_client.py` `EngineCoreClient.make_async_mp_client`
    // (the API server's `AsyncLLM.__init__`; traced as the "Overall Loading" span from 0.11) and
    // `make_client` (`LLMEngine.__init__`): they start the engine core processes and wait for
    // them to be ready (`MPClient.__init__` → `launch_core_engines` → `wait_for_engine_startup`),
    // so the core's load, profiling, KV-cache sizing and graph capture all run under them. A
    // wrapper: the core's own frames or log lines, when shown, name the stage. ---
    r(
        "make_async_mp_client",
        "vllm/v1/engine/core_client.py",
        S,
        Wrapper,
        "vllm",
    ),
    r(
        "make_client",
        "vllm/v1/engine/core_client.py",
        S,
        Wrapper,
        "vllm",
    ),
    // --- vLLM V1 0.8–0.11+ engine core start-up: `v1/engine/core.py` `EngineCore.__init__` (and
    // `EngineCoreProc.__init__`, which calls it) builds the executor (load), then
    // `_initialize_kv_caches` (profiling, KV-cache sizing and allocation, graph capture); the
    // client waits for it in `MPClient._wait_for_engine_startup` (0.8, `core_client.py`) or
    // `v1/engine/utils.py` `launch_core_engines` → `wait_for_engine_startup` (0.9+), which raise
    // `Engine core initialization failed` when a core dies starting. Wrappers: start-up, unless a
    // deeper frame or a log line names the stage. `EngineCore.execute_model_with_error_logging`
    // (0.10+) runs a scheduled step (`step`, `step_with_batch_queue`). ---
    r("__init__", "vllm/v1/engine/core.py", S, Wrapper, "vllm"),
    // --- vLLM 0.2–0.11 `model_executor/layers/` and `model_executor/models/` constructors:
    // the model is built (`model_loader` `initialize_model` / `_initialize_model` under
    // `load_model`), each layer creating its parameters on the GPU (`torch.empty(…)` under the
    // default-device context: `VocabParallelEmbedding.__init__`, `ColumnParallelLinear.
    // create_weights`), before the checkpoint is read into them. ---
    r("__init__", "vllm/model_executor/layers/", W, Stage, "vllm"),
    r("__init__", "vllm/model_executor/models/", W, Stage, "vllm"),
    // --- vLLM 0.4–0.11 `distributed/device_communicators/pynccl.py`
    // `PyNcclCommunicator.__init__`: creates the NCCL communicator, then runs "a small
    // all_reduce for warmup" (`data = torch.zeros(1, device=device); self.all_reduce(data)`)
    // while the workers start, before any weight is loaded. ---
    r(
        "__init__",
        "vllm/distributed/device_communicators/pynccl.py",
        S,
        Stage,
        "vllm",
    ),
    r("_wait_for_engine_startup", "vllm/", S, Wrapper, "vllm"),
    r("wait_for_engine_startup", "vllm/", S, Wrapper, "vllm"),
    r("launch_core_engines", "vllm/", S, Wrapper, "vllm"),
    r(
        "execute_model_with_error_logging",
        "vllm/",
        I,
        Serve,
        "vllm",
    ),
    // --- SGLang 0.3–0.5 `srt/model_executor/model_runner.py`: `init_cublas` (a small matmul at
    // start-up creating the cuBLAS handle), `forward_extend` / `forward_decode` /
    // `forward_idle` (a batch). ---
    r("init_cublas", "sglang/", S, Stage, "sglang"),
    r(
        "forward_extend",
        "sglang/srt/model_executor/",
        I,
        Serve,
        "sglang",
    ),
    r(
        "forward_decode",
        "sglang/srt/model_executor/",
        I,
        Serve,
        "sglang",
    ),
    r(
        "forward_idle",
        "sglang/srt/model_executor/",
        I,
        Serve,
        "sglang",
    ),
    // --- LMDeploy 0.4–0.6 `turbomind/turbomind.py` `TurboMind._from_hf` /
    // `_from_workspace` (build the engine and load weights). ---
    r("_from_hf", "lmdeploy/", W, Stage, "lmdeploy"),
    r("_from_workspace", "lmdeploy/", W, Stage, "lmdeploy"),
    // --- LMDeploy TurboMind (thirteenth session): `turbomind/turbomind.py`
    // `TurboMind._create_weight` (the weight buffers on each device, 0.4+). Not
    // `TurboMindInstance._create_model_instance` (0.1–0.6) nor `TurboMind._create_engine`
    // (0.7+): each builds the batch with its KV-cache pool and its working buffers, and a
    // failure there does not say which of them (the corpus labels it `unknown`). ---
    r(
        "_create_weight",
        "lmdeploy/turbomind/",
        W,
        Stage,
        "lmdeploy",
    ),
    // Its 0.1–0.2 form (`TurboMind._create_weight_func(device_id, …)` calls
    // `model_comm.create_shared_weights(device_id, rank)`, the C++ weights of one device).
    r(
        "_create_weight_func",
        "lmdeploy/turbomind/",
        W,
        Stage,
        "lmdeploy",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const NATIVE_BACKTRACES: &[FrameRule] = &[
    // --- The `Type::method` of C++ and Rust backtrace frames (`parse::engine_log`). TensorRT-LLM
    // 0.12–1.x `cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp`: `KVCacheManager::
    // allocatePools` → `BlockManager::allocatePools` → `WindowBlockManager::allocatePools` make
    // the KV cache's block pools (`BufferManager::gpuSync`), when the executor or
    // `ModelRunnerCpp` is created. mistral.rs 0.4–0.6 `mistralrs-core/src/pipeline/`: the
    // `Loader` trait's `load_model_from_hf` (download, then) `load_model_from_path` read the
    // weights, and `DeviceMappedModelLoader::get_device_layers` places the layers on the devices
    // first (`loaders/mod.rs`, automatic device mapping). ---
    r(
        "KVCacheManager::allocatePools",
        "",
        K,
        Stage,
        "tensorrt_llm",
    ),
    r("BlockManager::allocatePools", "", K, Stage, "tensorrt_llm"),
    r(
        "WindowBlockManager::allocatePools",
        "",
        K,
        Stage,
        "tensorrt_llm",
    ),
    // TensorRT-LLM 0.9–0.1x C++ batch manager (`cpp/tensorrt_llm/batch_manager/
    // trtGptModelInflightBatching.cpp` `TrtGptModelInflightBatching::forwardAsync` →
    // `runtimeBuffers.cpp` `RuntimeBuffers::prepareStep`): the buffers of the step the
    // in-flight batch runs next (`Encountered an error in forwardAsync function`,
    // NVIDIA/TensorRT-LLM#2335).
    r(
        "TrtGptModelInflightBatching::forwardAsync",
        "",
        I,
        Serve,
        "tensorrt_llm",
    ),
    r("RuntimeBuffers::prepareStep", "", I, Serve, "tensorrt_llm"),
    r("Loader::load_model_from_path", "", W, Stage, "mistralrs"),
    r("Loader::load_model_from_hf", "", W, Stage, "mistralrs"),
    r(
        "DeviceMappedModelLoader::get_device_layers",
        "",
        W,
        Stage,
        "mistralrs",
    ),
    // mistral.rs 0.1–0.6 serving: the engine's loop (`mistralrs-core/src/engine/mod.rs`
    // `Engine::run`) schedules the requests and runs a step of the pipeline on them
    // (`pipeline/mod.rs` `Pipeline::step` → the model's `forward_inputs`), as the backtrace of
    // mistral.rs#651 shows them (session 52).
    r(
        "Pipeline::forward_inputs",
        "<native>",
        I,
        Serve,
        "mistralrs",
    ),
    r("Pipeline::step", "<native>", I, Serve, "mistralrs"),
    r("Engine::run", "<native>", I, Serve, "mistralrs"),
    // vllm.rs (guoqingbao/vllm.rs, Rust on candle, 2025–2026) `src/core/runner.rs`:
    // `ModelRunner::new` builds the model, then `ModelRunner::init_kv_cache` allocates the
    // cache's key and value tensors (`Tensor::zeros` per layer) for the blocks the engine
    // logged (`Allocating 8192 KV blocks (131072 MB) for …`, `src/utils/mod.rs`) (session 34).
    r("ModelRunner::init_kv_cache", "", K, Stage, "vllm.rs"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_TRTLLM_CONVERSION: &[FrameRule] = &[
    // --- TensorRT-LLM checkpoint conversion (0.8–0.1x `examples/*/convert_checkpoint.py`
    // `convert_and_save_hf` → `models/*/model.py` `from_hugging_face`; `quantization/
    // quantize_by_modelopt.py` `quantize_and_export`, calibration included). ---
    r("convert_and_save_hf", "", F, Stage, "tensorrt_llm"),
    r(
        "from_hugging_face",
        "tensorrt_llm/",
        F,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "quantize_and_export",
        "tensorrt_llm/",
        F,
        Stage,
        "tensorrt_llm",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_TRTLLM_PYTORCH_ORT: &[FrameRule] = &[
    // --- TensorRT-LLM PyTorch backend (0.17–1.x `_torch/pyexecutor/model_engine.py`):
    // `PyTorchModelEngine.__init__` → `_load_model` (builds the model and loads its weights). ---
    r(
        "_load_model",
        "tensorrt_llm/_torch/",
        W,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "__init__",
        "tensorrt_llm/_torch/pyexecutor/model_engine.py",
        W,
        Stage,
        "tensorrt_llm",
    ),
    // --- ONNX Runtime (`onnxruntime/capi/onnxruntime_inference_collection.py`):
    // `InferenceSession.__init__` → `_create_inference_session` (initializers placed on the
    // device), `run` (a request). ---
    r(
        "_create_inference_session",
        "onnxruntime/",
        W,
        Stage,
        "onnxruntime",
    ),
    r("run", "onnxruntime/capi/", I, Serve, "onnxruntime"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_TENSORRT_BUILDER: &[FrameRule] = &[
    // --- TensorRT's builder (8.x–10.x `IBuilder.build_serialized_network`, ≤ 8.x
    // `build_engine`): a native call, so any file; an engine build times tactics on the GPU, as
    // TensorRT-LLM's `build_engine` above. ---
    r("build_serialized_network", "", G, Stage, "tensorrt"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const VLLM_SGLANG_TGI: &[FrameRule] = &[
    // --- vLLM (V0 worker/model_runner/llm_engine, V1 gpu_worker/gpu_model_runner/core) ---
    r("init_device", "vllm/", S, Stage, "vllm"),
    // vLLM 0.1–0.2 `engine/llm_engine.py` `LLMEngine._init_workers` (`_init_workers_ray` under
    // Ray) and `worker/worker.py` `Worker.init_model`: the workers and their devices set up,
    // before the weights are loaded (a traceback cut there has not reached them).
    r("_init_workers", "vllm/", S, Stage, "vllm"),
    r("_init_workers_ray", "vllm/", S, Stage, "vllm"),
    r("init_model", "vllm/worker/", S, Stage, "vllm"),
    r("init_worker_distributed_environment", "", S, Stage, "vllm"),
    r("init_distributed_environment", "", S, Stage, "vllm"),
    r("ensure_model_parallel_initialized", "", S, Stage, "vllm"),
    r("initialize_model_parallel", "", S, Stage, "vllm"),
    r("load_model", "", W, Stage, "vllm/sglang/transformers"),
    r("get_model", "", W, Stage, "vllm/tgi"),
    r("load_weights", "", W, Stage, "vllm/sglang"),
    r("_initialize_model", "", W, Stage, "vllm"),
    r("initialize_model", "", W, Stage, "vllm"),
    r("create_weights", "vllm/", W, Stage, "vllm"),
    r("weight_loader", "", W, Stage, "vllm"),
    r("weight_loader_v2", "", W, Stage, "vllm"),
    r("default_weight_loader", "", W, Stage, "vllm"),
    r("load_model_weights", "", W, Stage, "vllm"),
    r("_load_weights", "", W, Stage, "vllm"),
    r("safetensors_weights_iterator", "", W, Stage, "vllm"),
    r("pt_weights_iterator", "", W, Stage, "vllm"),
    r("np_cache_weights_iterator", "", W, Stage, "vllm"),
    r("fastsafetensors_weights_iterator", "", W, Stage, "vllm"),
    r("process_weights_after_loading", "", F, Stage, "vllm"),
    r("_process_weights_after_loading", "", F, Stage, "vllm"),
    r("gptq_marlin_repack", "", F, Stage, "vllm"),
    r("awq_marlin_repack", "", F, Stage, "vllm"),
    r("gptq_marlin_moe_repack", "", F, Stage, "vllm"),
    r("prepare_fp8_layer_for_marlin", "", F, Stage, "vllm"),
    r("prepare_moe_fp8_layer_for_marlin", "", F, Stage, "vllm"),
    r("prepare_fp4_layer_for_marlin", "", F, Stage, "vllm"),
    r("marlin_permute_scales", "", F, Stage, "vllm"),
    r("requantize_with_max_scale", "", F, Stage, "vllm"),
    r("normalize_e4m3fn_to_e4m3fnuz", "", F, Stage, "vllm"),
    r("convert_to_channelwise", "", F, Stage, "vllm"),
    r("repack", "", F, Stage, "vllm"),
    r("quantize_", "", F, Stage, "torchao"),
    r("convert_to_fp8", "", F, Stage, "vllm"),
    r("profile_run", "", P, Stage, "vllm"),
    r("_dummy_sampler_run", "", P, Stage, "vllm"),
    // The V2 model runner's start-up warm-up (`vllm/v1/worker/gpu/warmup.py` `warmup_kernels`:
    // "Run two execute_model + sample_tokens iterations to JIT compile triton kernels").
    r("warmup_kernels", "vllm/", P, Stage, "vllm"),
    r("_dummy_pooler_run", "", P, Stage, "vllm"),
    r("determine_num_available_blocks", "", P, Stage, "vllm"),
    r("determine_available_memory", "", P, Stage, "vllm"),
    r("_initialize_kv_caches", "", K, Wrapper, "vllm"),
    r("initialize_cache", "", K, Stage, "vllm"),
    r("_init_cache", "", K, Stage, "vllm"),
    r("_init_cache_engine", "", K, Stage, "vllm"),
    r("__init__", "cache_engine", K, Stage, "vllm/lmdeploy"),
    r("_allocate_kv_cache", "", K, Stage, "vllm"),
    r("raise_if_cache_size_invalid", "", K, Stage, "vllm"),
    r("initialize_from_config", "vllm/", K, Stage, "vllm"),
    r("initialize_kv_cache", "", K, Stage, "vllm"),
    r("initialize_kv_cache_tensors", "", K, Stage, "vllm"),
    r("_allocate_kv_cache_tensors", "", K, Stage, "vllm"),
    r("_reshape_kv_cache_tensors", "", K, Stage, "vllm"),
    r("get_kv_cache_config", "", K, Stage, "vllm"),
    r("get_kv_cache_configs", "", K, Stage, "vllm"),
    r("check_enough_kv_cache_memory", "", K, Stage, "vllm"),
    r("_check_enough_kv_cache_memory", "", K, Stage, "vllm"),
    r("allocate_kv_cache", "", K, Stage, "vllm"),
    r("compile_or_warm_up_model", "", G, Stage, "vllm"),
    r("capture_model", "", G, Stage, "vllm"),
    r("_capture_cudagraphs", "", G, Stage, "vllm"),
    r("capture", "", G, Stage, "vllm/sglang"),
    r("_capture", "", G, Stage, "vllm"),
    r("capture_cuda_graph", "", G, Stage, "vllm"),
    r("__init__", "cuda_graph_runner", G, Stage, "sglang"),
    r("execute_model", "", I, Serve, "vllm"),
    r("execute_model_async", "", I, Serve, "vllm"),
    r("step", "llm_engine", I, Serve, "vllm"),
    r("step", "engine/core.py", I, Serve, "vllm"),
    r("step_with_batch_queue", "", I, Serve, "vllm"),
    // V0 `worker/worker_base.py` `LocalOrDistributedWorkerBase.start_worker_execution_loop`: the
    // decode loop of the non-driver workers; V1 `v1/engine/async_llm.py` `AsyncLLM.output_handler`:
    // the API server's task pulling outputs of running requests from EngineCore.
    r("start_worker_execution_loop", "", I, Serve, "vllm"),
    r("output_handler", "vllm/v1/engine/", I, Serve, "vllm"),
    // V1 `v1/engine/core_client.py` `AsyncMPClient.get_output_async`: read only by that
    // output handler, which `AsyncLLM` starts with the first request.
    r("get_output_async", "vllm/v1/engine/", I, Serve, "vllm"),
    r("step_async", "", I, Serve, "vllm"),
    r("engine_step", "", I, Serve, "vllm"),
    r("run_engine_loop", "", I, Serve, "vllm"),
    r("run_busy_loop", "", I, Serve, "vllm"),
    r("_process_engine_step", "", I, Serve, "vllm"),
    r("_run_engine", "", I, Serve, "vllm"),
    r("create_chat_completion", "", I, Serve, "vllm"),
    r("create_completion", "", I, Serve, "vllm"),
    r("chat_completion_stream_generator", "", I, Serve, "vllm"),
    r("chat_completion_full_generator", "", I, Serve, "vllm"),
    r("chat", "entrypoints/llm.py", I, Serve, "vllm"),
    r("encode", "entrypoints/llm.py", I, Serve, "vllm"),
    r("embed", "entrypoints/llm.py", I, Serve, "vllm"),
    r("score", "entrypoints/llm.py", I, Serve, "vllm"),
    r("beam_search", "entrypoints/llm.py", I, Serve, "vllm"),
    // --- SGLang (model_runner.py, cuda_graph_runner.py, scheduler.py, tp_worker.py) ---
    r("init_torch_distributed", "", S, Stage, "sglang"),
    r("profile_max_num_token", "", P, Stage, "sglang"),
    r("kernel_warmup", "", P, Stage, "sglang"),
    r("init_memory_pool", "", K, Stage, "sglang"),
    r("_create_buffers", "mem_cache", K, Stage, "sglang"),
    // (The Ascend NPU's pools of 0.5.x, `srt/hardware_backend/npu/memory_pool_npu.py`, make
    // theirs in the same method: gpustack/gpustack#4761.)
    r(
        "_create_buffers",
        "sglang/srt/hardware_backend/",
        K,
        Stage,
        "sglang",
    ),
    r("init_cuda_graphs", "", G, Stage, "sglang"),
    r("init_device_graphs", "", G, Stage, "sglang"),
    r("capture_one_batch_size", "", G, Stage, "sglang"),
    r("event_loop_normal", "", I, Serve, "sglang"),
    r("event_loop_overlap", "", I, Serve, "sglang"),
    r("event_loop_pp", "", I, Serve, "sglang"),
    // (Only SGLang's own: `scheduler.py` `Scheduler.run_batch`; other code's `run_batch` is a
    // training harness's as often, netharn `fit_harn.py` `FitHarn.run_batch`.)
    r("run_batch", "sglang/", I, Serve, "sglang"),
    r("forward_thread_func", "", I, Serve, "sglang"),
    r("forward_thread_func_", "", I, Serve, "sglang"),
    r("forward_batch_generation", "", I, Serve, "sglang"),
    r("generate_request", "", I, Serve, "sglang"),
    // --- TGI (server/text_generation_server) ---
    r("init_kv_cache", "", K, Stage, "tgi"),
    // TGI 1.x–2.0 (and its fork LoRAX) `models/cache_manager.py` `set_cache_manager`, called by
    // `FlashCausalLM.warmup`: it builds `CacheManager`, whose `__init__` allocates the KV-cache
    // blocks (`self.kv_cache = [(torch.empty(…), torch.empty(…)) for _ in range(num_layers)]`).
    r("set_cache_manager", "", K, Stage, "tgi"),
    r("cuda_graph_warmup", "", G, Stage, "tgi"),
    r("tunableop_warmup", "", P, Stage, "tgi"),
    r("Warmup", "", P, Stage, "tgi"),
    r("warmup", "", P, Stage, "tgi/lmdeploy"),
    r("_warmup", "", P, Stage, "vllm"),
    r("warmup_model", "", P, Stage, "vllm"),
    r("get_tensor", "text_generation_server", W, Stage, "tgi"),
    r("get_sharded", "text_generation_server", W, Stage, "tgi"),
    r(
        "get_multi_weights_col",
        "text_generation_server",
        W,
        Stage,
        "tgi",
    ),
    r("get_weights_col", "text_generation_server", W, Stage, "tgi"),
    r("get_weights_row", "text_generation_server", W, Stage, "tgi"),
    r("Prefill", "", I, Serve, "tgi"),
    r("Decode", "", I, Serve, "tgi"),
    r("generate_token", "", I, Serve, "tgi"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const LMDEPLOY: &[FrameRule] = &[
    // --- LMDeploy (turbomind/turbomind.py, pytorch/engine) ---
    r("allocate_gpu_cache", "", K, Stage, "lmdeploy"),
    r("_build_model", "lmdeploy/", W, Stage, "lmdeploy"),
    // The PyTorch engine's tensor-parallel build (0.2–0.4 `pytorch/engine/model_agent.py`
    // `_tp_build_model` → `_dist_model`, logged `distribute model parameters.`): the weights
    // split to the ranks.
    r("_tp_build_model", "lmdeploy/", W, Stage, "lmdeploy"),
    r("_dist_model", "lmdeploy/", W, Stage, "lmdeploy"),
    r("_load_weights", "lmdeploy/", W, Stage, "lmdeploy"),
    r("stream_infer", "lmdeploy/", I, Serve, "lmdeploy"),
    r("async_stream_infer", "lmdeploy/", I, Serve, "lmdeploy"),
    // --- Xinference 0.x–1.x `xinference/core/model.py` `ModelActor._call_wrapper` (under
    // `@oom_check`, which logs `Model actor is out of memory`): every request's call of the
    // model (`chat`, `generate`, `create_embedding`, `rerank`, `text_to_image`, …) goes through
    // it, after the model was loaded (`ModelActor.load` calls the model's `load` directly). ---
    r(
        "_call_wrapper",
        "xinference/core/model.py",
        I,
        Serve,
        "xinference",
    ),
    // Its REST handlers (`xinference/api/restful_api.py` `RESTfulAPI.create_embedding`,
    // `rerank`, `create_completion`, `create_chat_completion`, 0.x–1.x): a request served.
    r(
        "create_embedding",
        "xinference/api/",
        I,
        Serve,
        "xinference",
    ),
    r("rerank", "xinference/api/", I, Serve, "xinference"),
    r(
        "create_completion",
        "xinference/api/",
        I,
        Serve,
        "xinference",
    ),
    r(
        "create_chat_completion",
        "xinference/api/",
        I,
        Serve,
        "xinference",
    ),
    // --- LightLLM (ModelTC/LightLLM 1.x `common/basemodel/basemodel.py` `TpPartBaseModel.
    // __init__`: `_init_weights`, `_init_mem_manager` (the KV pool), `_check_max_len_infer` (a
    // dummy prefill of `batch_max_tokens`, logged "begin check max_len infer", to find an OOM
    // before serving), `_init_cudagraph`; the router's RPC to each rank,
    // `server/router/model_infer/model_rpc.py` `exposed_init_model`, `exposed_prefill_batch`,
    // `exposed_decode_batch`). ---
    r("_init_weights", "lightllm/", W, Stage, "lightllm"),
    r("_init_mem_manager", "lightllm/", K, Stage, "lightllm"),
    r("_check_max_len_infer", "lightllm/", P, Stage, "lightllm"),
    r("_init_cudagraph", "lightllm/", G, Stage, "lightllm"),
    r("exposed_init_model", "", W, Stage, "lightllm"),
    r("exposed_prefill_batch", "", I, Serve, "lightllm"),
    r("exposed_decode_batch", "", I, Serve, "lightllm"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const TRTLLM: &[FrameRule] = &[
    // --- TensorRT-LLM (runtime/model_runner*.py, runtime/generation.py, _torch/pyexecutor) ---
    r("from_dir", "tensorrt_llm/", W, Stage, "tensorrt_llm"),
    // The PyTorch back end's concurrent module load (`_torch/models/modeling_utils.py`
    // `load_weights` → `run_concurrently(load_single_module, …)`, 0.21 → 1.x).
    r(
        "load_single_module",
        "tensorrt_llm/",
        W,
        Stage,
        "tensorrt_llm",
    ),
    r("from_engine", "tensorrt_llm/", W, Stage, "tensorrt_llm"),
    // The Python session (`runtime/generation.py` 0.5–0.1x `GenerationSession.__init__` →
    // `_Runtime.__init__` → `__prepare`: the engine deserialised onto the GPU and its device
    // memory taken), as the examples' `run.py` build one per engine (NVIDIA/TensorRT-LLM#788).
    r(
        "__prepare",
        "tensorrt_llm/runtime/generation.py",
        W,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "setup",
        "tensorrt_llm/runtime/generation.py",
        K,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "_setup",
        "tensorrt_llm/runtime/generation.py",
        K,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "estimate_max_tokens",
        "tensorrt_llm/",
        P,
        Stage,
        "tensorrt_llm",
    ),
    r("build_managers", "tensorrt_llm/", K, Stage, "tensorrt_llm"),
    // The LLM API's executor worker (`tensorrt_llm/executor/worker.py` `worker_main` →
    // `GenerationExecutorWorker.__init__` → `base_worker.py` `setup_engine` →
    // `_create_py_executor`, 0.20–1.x): the PyTorch executor built when the server or `LLM`
    // starts (model, KV cache and warm-up inside it, which deeper frames or log lines name).
    r(
        "_create_py_executor",
        "tensorrt_llm/executor/",
        S,
        Wrapper,
        "tensorrt_llm",
    ),
    r(
        "setup_engine",
        "tensorrt_llm/executor/",
        S,
        Wrapper,
        "tensorrt_llm",
    ),
    r(
        "_create_kv_cache_manager",
        "tensorrt_llm/",
        K,
        Stage,
        "tensorrt_llm",
    ),
    r("build", "tensorrt_llm/builder.py", G, Stage, "tensorrt_llm"),
    r("build_engine", "tensorrt_llm/", G, Stage, "tensorrt_llm"),
    // The PyTorch backend (`tensorrt_llm/_torch/pyexecutor/model_engine.py`, 0.19–1.x):
    // `warmup` → `_run_cuda_graph_warmup` → `_capture_generation_cuda_graphs` /
    // `_capture_piecewise_cuda_graphs` capture the decode graphs before serving;
    // `py_executor.py` `_executor_loop` / `_executor_loop_overlap` → `_forward_step` serve.
    r(
        "_run_cuda_graph_warmup",
        "tensorrt_llm/_torch/",
        G,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "_capture_generation_cuda_graphs",
        "tensorrt_llm/_torch/",
        G,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "_capture_piecewise_cuda_graphs",
        "tensorrt_llm/_torch/",
        G,
        Stage,
        "tensorrt_llm",
    ),
    r(
        "_executor_loop",
        "tensorrt_llm/_torch/",
        I,
        Serve,
        "tensorrt_llm",
    ),
    r(
        "_executor_loop_overlap",
        "tensorrt_llm/_torch/",
        I,
        Serve,
        "tensorrt_llm",
    ),
    r(
        "_forward_step",
        "tensorrt_llm/_torch/",
        I,
        Serve,
        "tensorrt_llm",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const SGLANG_DISAGGREGATION: &[FrameRule] = &[
    // --- SGLang disaggregated serving (0.4.6–0.5 `srt/disaggregation/decode.py`
    // `event_loop_normal_disagg_decode` / `event_loop_overlap_disagg_decode`,
    // `srt/disaggregation/prefill.py` `event_loop_*_disagg_prefill`) and the scheduler's result
    // handling (`srt/managers/scheduler_output_processor_mixin.py` `process_batch_result_decode`
    // / `_prefill`); before 0.2 the worker was `srt/managers/router/model_rpc.py`
    // (`forward_prefill_batch`, 0.1's `forward_fill_batch`, `forward_decode_batch`,
    // `ScheduleBatch.sample` in `infer_batch.py`). All run requests. ---
    r(
        "",
        "sglang/srt/disaggregation/decode.py",
        I,
        Serve,
        "sglang",
    ),
    r(
        "",
        "sglang/srt/disaggregation/prefill.py",
        I,
        Serve,
        "sglang",
    ),
    r(
        "process_batch_result",
        "sglang/srt/managers/",
        I,
        Serve,
        "sglang",
    ),
    r(
        "process_batch_result_decode",
        "sglang/srt/managers/",
        I,
        Serve,
        "sglang",
    ),
    r(
        "process_batch_result_prefill",
        "sglang/srt/managers/",
        I,
        Serve,
        "sglang",
    ),
    r("forward_decode_batch", "sglang/", I, Serve, "sglang"),
    r("forward_prefill_batch", "sglang/", I, Serve, "sglang"),
    // (0.1.x named the prefill `forward_fill_batch`, run from the RPC's `exposed_step` →
    // `forward_step`.)
    r("forward_fill_batch", "sglang/", I, Serve, "sglang"),
    r(
        "exposed_step",
        "sglang/srt/managers/router/model_rpc.py",
        I,
        Serve,
        "sglang",
    ),
    r("sample", "sglang/srt/managers/", I, Serve, "sglang"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const TENSORRT_RUNTIME: &[FrameRule] = &[
    // --- TensorRT's Python API (8.x–10.x `tensorrt.Runtime.deserialize_cuda_engine`): it puts a
    // built engine's weights on the GPU. A native method, so it shows as the call under the last
    // Python frame, from any file. ---
    r("deserialize_cuda_engine", "", W, Stage, "tensorrt"),
];
