//! Which phase failed: the last stage the log shows completed plus the one in
//! progress, refined by the failure message itself and by the frames of its traceback.
//!
//! Never guesses: when neither the log nor the traceback shows the phase, it is
//! [`Phase::Unknown`]. Before the server accepted requests, a user prompt cannot be the cause.

use crate::model::explain::{EventKind, Phase, PhaseReport};
use crate::model::failure::{OomKind, OomMessage};

/// How far the startup got, updated event by event (cheap: no allocation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// The last completed phase and the line that shows it.
    pub last_completed: Option<(Phase, u64)>,
    /// The last completed phase before `last_completed`'s (for a failure inside that one:
    /// vLLM sizes the KV cache, logs it, then fails its check of the context length).
    pub completed_before: Option<(Phase, u64)>,
    /// The phase a start marker opened and nothing closed yet.
    pub in_progress: Option<(Phase, u64)>,
    /// The line where the API said it accepts requests.
    pub server_ready: Option<u64>,
    /// The line where the engine said it finished initialising.
    pub engine_ready: Option<u64>,
    /// The first request line.
    pub first_request: Option<u64>,
    /// The line of the engine start (banner/config) of this run.
    pub started: Option<u64>,
}

impl Progress {
    /// Takes one timeline event into account.
    pub fn observe(&mut self, kind: EventKind, phase: Phase, line: u64) {
        use EventKind as K;
        match kind {
            K::EngineStart | K::DeviceInit | K::DownloadStart | K::DownloadDone => {
                self.started.get_or_insert(line);
                if self.last_completed.is_none() {
                    self.in_progress = Some((Phase::Startup, line));
                }
            }
            K::WeightsLoadStart | K::WeightsLoadProgress | K::WeightsRead => {
                self.in_progress = Some((Phase::WeightsLoad, line));
            }
            K::FormatConversion => self.in_progress = Some((Phase::FormatConversion, line)),
            K::ProfilingStart => self.in_progress = Some((Phase::Profiling, line)),
            K::CudaGraphCaptureStart => {
                self.in_progress = Some((Phase::CudaGraphCapture, line));
            }
            // vLLM logs the KV-cache size (and the concurrency it allows) while sizing the
            // cache, before allocating it: the allocation is what runs next.
            K::KvCachePlanned | K::KvConcurrency => {
                if self
                    .in_progress
                    .is_some_and(|(phase, _)| phase == Phase::Profiling)
                {
                    self.complete(Phase::Profiling, line);
                }
                self.in_progress = Some((Phase::KvCacheAlloc, line));
            }
            K::WeightsLoaded | K::ProfilingDone | K::KvCacheAllocated | K::CudaGraphCaptureDone => {
                self.complete(phase, line);
                self.in_progress = None;
            }
            K::EngineReady => {
                self.engine_ready = Some(line);
                self.complete(phase, line);
                self.in_progress = None;
            }
            K::ServerReady => {
                self.server_ready.get_or_insert(line);
                self.in_progress = None;
            }
            K::Request | K::ServingStats | K::KvPressure => {
                self.first_request.get_or_insert(line);
                self.in_progress = Some((Phase::Inference, line));
            }
            K::TrainingStep => {
                self.complete(Phase::TrainingStep, line);
                self.in_progress = Some((Phase::TrainingStep, line));
            }
            K::Compile | K::Traceback | K::Failure | K::Shutdown => {}
        }
    }

    fn complete(&mut self, phase: Phase, line: u64) {
        if let Some(last) = self.last_completed.filter(|(last, _)| *last != phase) {
            self.completed_before = Some(last);
        }
        self.last_completed = Some((phase, line));
    }
}

/// One traceback frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Line number of the `File "…"` line.
    pub line: u64,
    /// Function name.
    pub function: String,
    /// File path as printed.
    pub file: String,
}

/// How a frame's phase counts when the frames of one traceback are read together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A stage of start-up (or a warm-up, a capture, a load): decides, and encloses the
    /// serving frames below it (vLLM's `profile_run` runs `execute_model`; TGI's `warmup` runs
    /// `generate_token`; SGLang's graph capture runs the model's forward).
    Stage,
    /// Serving a request or a training step: decides unless a stage frame encloses it.
    Serve,
    /// Moves weights onto the GPU (`Module.to`, accelerate's `set_module_tensor_to_device`):
    /// weights_load, unless an offload hook runs it inside a forward.
    Move,
    /// A hook that runs the forward of an offloaded model (accelerate `pre_forward`): moves
    /// below it belong to the forward, not to a load.
    Offload,
    /// Encloses several stages (vLLM `_initialize_kv_caches` profiles, then allocates): decides
    /// only when no deeper frame and no log line shows the stage.
    Wrapper,
}

/// One mapping of a traceback function to a phase, with where it comes from.
#[derive(Debug, Clone, Copy)]
pub struct FrameRule {
    /// The function name as the traceback prints it.
    pub function: &'static str,
    /// A fragment the path must contain (slashes normalised); empty for any file.
    pub path: &'static str,
    /// The phase it shows.
    pub phase: Phase,
    /// How it counts.
    pub role: Role,
    /// The library it comes from (docs/phases.md lists the source files and versions).
    pub engine: &'static str,
}

const fn r(
    function: &'static str,
    path: &'static str,
    phase: Phase,
    role: Role,
    engine: &'static str,
) -> FrameRule {
    FrameRule {
        function,
        path,
        phase,
        role,
        engine,
    }
}

use Phase::{
    CudaGraphCapture as G, FormatConversion as F, Inference as I, KvCacheAlloc as K,
    Profiling as P, Startup as S, TrainingStep as T, WeightsLoad as W,
};
use Role::{Move, Offload, Serve, Stage, Wrapper};

/// Traceback functions and the phase each shows, read from the engines' sources (see
/// docs/phases.md for file, function and version of each). The first rule that matches a
/// frame applies, so path-qualified rules come before bare names. `forward`, `__call__`,
/// `_dummy_run` (vLLM V1 runs it from both `profile_run` and `capture_model`), `_apply`,
/// `convert` and torch.compile's frames are not listed: their caller decides.
pub static FRAME_RULES: &[FrameRule] = &[
    // --- torch ---
    r("_lazy_init", "torch/cuda/", S, Stage, "torch"),
    // torch ≤ 1.4 `torch/cuda/__init__.py`: the first `torch.cuda.*Tensor` runs `_lazy_new`,
    // which runs `_lazy_init` (context creation).
    r("_lazy_new", "torch/cuda/", S, Stage, "torch"),
    r("set_device", "torch/cuda/", S, Stage, "torch"),
    r("init_process_group", "torch/distributed", S, Stage, "torch"),
    r("to", "torch/nn/modules/module.py", W, Move, "torch"),
    // `convert` is the closure of `Module.to` (`.half()`/`.float()` pass lambdas).
    r("convert", "torch/nn/modules/module.py", W, Move, "torch"),
    r("to", "bitsandbytes/", W, Move, "bitsandbytes"),
    r("cuda", "torch/nn/modules/module.py", W, Move, "torch"),
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
    r("_engine_run_backward", "", T, Serve, "torch"),
    r("run_backward", "", T, Serve, "torch"),
    r("step", "/optim/", T, Serve, "torch"),
    r("_use_grad", "/optim/", T, Serve, "torch"),
    // Any function of torch.optim (`adamw`, `_single_tensor_adamw`, `_multi_tensor_adam`, …).
    r("", "torch/optim/", T, Serve, "torch"),
    r("clip_grad_norm_", "", T, Serve, "torch"),
    // --- vLLM (V0 worker/model_runner/llm_engine, V1 gpu_worker/gpu_model_runner/core) ---
    r("init_device", "vllm/", S, Stage, "vllm"),
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
    r("init_cuda_graphs", "", G, Stage, "sglang"),
    r("init_device_graphs", "", G, Stage, "sglang"),
    r("capture_one_batch_size", "", G, Stage, "sglang"),
    r("event_loop_normal", "", I, Serve, "sglang"),
    r("event_loop_overlap", "", I, Serve, "sglang"),
    r("event_loop_pp", "", I, Serve, "sglang"),
    r("run_batch", "", I, Serve, "sglang"),
    r("forward_thread_func", "", I, Serve, "sglang"),
    r("forward_thread_func_", "", I, Serve, "sglang"),
    r("forward_batch_generation", "", I, Serve, "sglang"),
    r("generate_request", "", I, Serve, "sglang"),
    // --- TGI (server/text_generation_server) ---
    r("init_kv_cache", "", K, Stage, "tgi"),
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
    // --- transformers (modeling_utils.py, trainer.py, generation/utils.py, pipelines) ---
    r(
        "from_pretrained",
        "",
        W,
        Stage,
        "transformers/peft/diffusers",
    ),
    r("_from_config", "", W, Stage, "transformers"),
    r("_load_pretrained_model", "", W, Stage, "transformers"),
    r("load_state_dict", "", W, Stage, "transformers"),
    r("_load_state_dict_into_model", "", W, Stage, "transformers"),
    r(
        "_load_state_dict_into_meta_model",
        "",
        W,
        Stage,
        "transformers",
    ),
    r("load_shard_file", "", W, Stage, "transformers"),
    r("_load_parameter_into_model", "", W, Stage, "transformers"),
    r("caching_allocator_warmup", "", W, Stage, "transformers"),
    r("_move_model_to_device", "", W, Move, "transformers"),
    r(
        "_process_model_after_weight_loading",
        "",
        F,
        Stage,
        "transformers",
    ),
    r("dequantize", "transformers/", F, Stage, "transformers"),
    r("generate", "", I, Serve, "transformers/vllm"),
    r("_sample", "generation/", I, Serve, "transformers"),
    r("sample", "generation/", I, Serve, "transformers"),
    r("greedy_search", "", I, Serve, "transformers"),
    r("_greedy_search", "", I, Serve, "transformers"),
    r("beam_search", "generation/", I, Serve, "transformers"),
    r("_beam_search", "", I, Serve, "transformers"),
    r("_assisted_decoding", "", I, Serve, "transformers"),
    r("_contrastive_search", "", I, Serve, "transformers"),
    r("_generate", "", I, Serve, "vllm"),
    r("_forward", "/pipelines/", I, Serve, "transformers"),
    r("forward", "/pipelines/", I, Serve, "transformers"),
    r("run_single", "/pipelines/", I, Serve, "transformers"),
    r(
        "__call__",
        "/pipelines/",
        I,
        Serve,
        "transformers/diffusers",
    ),
    r("evaluate", "trainer", I, Serve, "transformers"),
    r("evaluation_loop", "", I, Serve, "transformers"),
    r("prediction_step", "", I, Serve, "transformers"),
    r("predict", "trainer", I, Serve, "transformers/lightning"),
    r("validate", "trainer/trainer.py", I, Serve, "lightning"),
    r("test", "trainer/trainer.py", I, Serve, "lightning"),
    r("fit", "trainer/trainer.py", T, Serve, "lightning"),
    r("training_step", "", T, Serve, "transformers/lightning"),
    r("train_step", "", T, Serve, "deepspeed"),
    r("_inner_training_loop", "", T, Serve, "transformers"),
    r("train", "", T, Serve, "transformers"),
    // Keras `Model.fit` (keras 2 `engine/training.py`, keras 3 `src/backend/*/trainer.py`), also
    // as a notebook arrow (`----> 9 model.fit(ds, epochs=…)`); its `evaluate`/`predict` match the
    // `trainer` rules above.
    r("fit", "", T, Serve, "keras"),
    r("optimizer_step", "", T, Serve, "lightning"),
    // --- accelerate (big_modeling.py, utils/modeling.py, hooks.py, accelerator.py) ---
    r("pre_forward", "accelerate/", W, Offload, "accelerate"),
    r("new_forward", "accelerate/", W, Offload, "accelerate"),
    r("load_checkpoint_and_dispatch", "", W, Stage, "accelerate"),
    r("load_checkpoint_in_model", "", W, Stage, "accelerate"),
    r("dispatch_model", "", W, Stage, "accelerate"),
    r("set_module_tensor_to_device", "", W, Move, "accelerate"),
    r("send_to_device", "accelerate/", W, Move, "accelerate"),
    // --- PEFT ---
    r("merge_and_unload", "", F, Stage, "peft"),
    r("_unload_and_optionally_merge", "", F, Stage, "peft"),
    r("merge_adapter", "", F, Stage, "peft"),
    r("prepare_model_for_kbit_training", "", F, Stage, "peft"),
    r("load_adapter", "", W, Stage, "peft"),
    r("set_peft_model_state_dict", "", W, Stage, "peft"),
    r("get_peft_model", "", W, Stage, "peft"),
    // --- Lightning (trainer/trainer.py, loops/, strategies/) ---
    r("validation_step", "", I, Serve, "lightning"),
    r("test_step", "", I, Serve, "lightning"),
    r("predict_step", "", I, Serve, "lightning"),
    // The caller's own loop, named as training and evaluation code is conventionally named
    // (`def train_epoch(...)`, `def evaluate(model, loader)`): decides only when no library
    // frame below it does.
    r("train_epoch", "", T, Serve, "user code"),
    r("train_one_epoch", "", T, Serve, "user code"),
    r("train_loop", "", T, Serve, "user code"),
    r("training_loop", "", T, Serve, "user code"),
    r("evaluate", "", I, Serve, "user code"),
    r("evaluation_step", "", I, Serve, "user code"),
    r("eval_step", "", I, Serve, "user code"),
    r("run_inference", "", I, Serve, "user code"),
    r("inference", "", I, Serve, "user code"),
    r("_run_sanity_check", "", I, Serve, "lightning"),
    r("advance", "loops/evaluation_loop", I, Serve, "lightning"),
    r("advance", "loops/prediction_loop", I, Serve, "lightning"),
    r(
        "advance",
        "loops/training_epoch_loop",
        T,
        Serve,
        "lightning",
    ),
    r("advance", "loops/fit_loop", T, Serve, "lightning"),
    r("run_training_epoch", "", T, Serve, "lightning"),
    r("run_training_batch", "", T, Serve, "lightning"),
    r("fit_loop", "", T, Serve, "lightning"),
    r("model_to_device", "", W, Move, "lightning"),
    // --- DeepSpeed (runtime/engine.py, runtime/zero/) ---
    r("_configure_distributed_model", "", W, Move, "deepspeed"),
    // `deepspeed.initialize` builds the engine: optimizer (ZeRO partitions and fp32 master
    // copies of the weights) before any step runs.
    r("_configure_optimizer", "deepspeed/", W, Stage, "deepspeed"),
    r("_configure_zero_optimizer", "", W, Stage, "deepspeed"),
    r(
        "_configure_basic_optimizer",
        "deepspeed/",
        W,
        Stage,
        "deepspeed",
    ),
    r("initialize", "deepspeed/__init__.py", W, Stage, "deepspeed"),
    r("_post_init_method", "deepspeed/", W, Stage, "deepspeed"),
    r("step", "deepspeed/runtime", T, Serve, "deepspeed"),
    r("_take_model_step", "", T, Serve, "deepspeed"),
    r("allreduce_gradients", "", T, Serve, "deepspeed"),
    // --- LMDeploy (turbomind/turbomind.py, pytorch/engine) ---
    r("allocate_gpu_cache", "", K, Stage, "lmdeploy"),
    r("_build_model", "lmdeploy/", W, Stage, "lmdeploy"),
    r("_load_weights", "lmdeploy/", W, Stage, "lmdeploy"),
    r("stream_infer", "lmdeploy/", I, Serve, "lmdeploy"),
    r("async_stream_infer", "lmdeploy/", I, Serve, "lmdeploy"),
    // --- ExLlamaV2 (model.py, cache.py, generator/) ---
    r("load", "exllamav2/", W, Stage, "exllamav2"),
    r("load_autosplit", "", W, Stage, "exllamav2"),
    r("load_gen", "exllamav2/", W, Stage, "exllamav2"),
    r("__init__", "exllamav2/cache.py", K, Stage, "exllamav2"),
    r("generate_simple", "", I, Serve, "exllamav2"),
    // --- text-generation-webui (modules/ui_model_menu.py, modules/models.py) ---
    r("load_model_wrapper", "", W, Stage, "text-generation-webui"),
    // --- MLC-LLM (python/mlc_chat/chat_module.py: `_reload` loads the model library and weights) ---
    r("_reload", "mlc_chat/", W, Stage, "mlc_llm"),
    r("_reload", "mlc_llm/", W, Stage, "mlc_llm"),
    // --- TensorRT-LLM (runtime/model_runner*.py, runtime/generation.py, _torch/pyexecutor) ---
    r("from_dir", "tensorrt_llm/", W, Stage, "tensorrt_llm"),
    r("from_engine", "tensorrt_llm/", W, Stage, "tensorrt_llm"),
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
    r(
        "_create_kv_cache_manager",
        "tensorrt_llm/",
        K,
        Stage,
        "tensorrt_llm",
    ),
    r("build", "tensorrt_llm/builder.py", G, Stage, "tensorrt_llm"),
    r("build_engine", "tensorrt_llm/", G, Stage, "tensorrt_llm"),
    // --- diffusers (pipelines/pipeline_utils.py) and ComfyUI (comfy/model_management.py) ---
    r("enable_model_cpu_offload", "", W, Stage, "diffusers"),
    r("enable_sequential_cpu_offload", "", W, Stage, "diffusers"),
    r("__call__", "diffusers/pipelines/", I, Serve, "diffusers"),
    r("load_models_gpu", "", W, Stage, "comfyui"),
    r("model_load", "comfy/", W, Stage, "comfyui"),
    r("partially_load", "comfy/", W, Stage, "comfyui"),
    r("load_model_gpu", "comfy/", W, Stage, "comfyui"),
    r("common_ksampler", "", I, Serve, "comfyui"),
    r("sample", "comfy/", I, Serve, "comfyui"),
    r("decode", "comfy/sd.py", I, Serve, "comfyui"),
    r("encode", "comfy/sd.py", I, Serve, "comfyui"),
    // comfy/model_patcher.py: `ModelPatcher.load` / `patch_model` move (and patch) the weights
    // onto the GPU; `patch_weight_to_device` one weight. ComfyUI loads lazily, so these run
    // under a sampler node and decide over it.
    r("patch_weight_to_device", "", W, Stage, "comfyui"),
    r("load", "comfy/model_patcher.py", W, Stage, "comfyui"),
    r("patch_model", "comfy/model_patcher.py", W, Stage, "comfyui"),
    // --- DeepSpeed ZeRO-3 (0.9–0.16 `deepspeed/runtime/zero/stage3.py`): `step` runs
    // `_optimizer_step(sub_group_id)` per sub-group, which calls the wrapped `optimizer.step()` ---
    r(
        "_optimizer_step",
        "deepspeed/runtime/zero/",
        T,
        Serve,
        "deepspeed",
    ),
    // --- JAX: backend (client, stream executors) creation at the first device use
    // (jax 0.4–0.8 `jax/_src/xla_bridge.py` `backends` → `_init_backend` →
    // `make_pjrt_c_api_client`; jaxlib `xla_client.py` `make_c_api_client`) ---
    r("backends", "jax/_src/xla_bridge.py", S, Stage, "jax"),
    r("_init_backend", "jax/_src/xla_bridge.py", S, Stage, "jax"),
    r(
        "make_pjrt_c_api_client",
        "jax/_src/xla_bridge.py",
        S,
        Stage,
        "jax",
    ),
    r("make_c_api_client", "jaxlib/xla_client.py", S, Stage, "jax"),
    // --- Chainer (v5–v7): `Trainer.run` is the training loop; `StandardUpdater.update` →
    // `update_core` → `Optimizer.update(lossfun)` runs forward, backward and the update ---
    r("run", "chainer/training/trainer.py", T, Serve, "chainer"),
    r("update", "chainer/training/updaters/", T, Serve, "chainer"),
    r(
        "update_core",
        "chainer/training/updaters/",
        T,
        Serve,
        "chainer",
    ),
    r("update", "chainer/optimizer.py", T, Serve, "chainer"),
    // Fooocus ships ComfyUI's backend renamed (`backend/headless/fcbh/`, later `ldm_patched/`).
    r("decode", "fcbh/sd.py", I, Serve, "fooocus"),
    r("encode", "fcbh/sd.py", I, Serve, "fooocus"),
    r("decode", "ldm_patched/modules/sd.py", I, Serve, "fooocus"),
    r("encode", "ldm_patched/modules/sd.py", I, Serve, "fooocus"),
];

/// A native frame of autograd's backward pass (a C++ frame of a PyTorch error, see
/// `parse::engine_log`): torch's engine (`torch/csrc/autograd/engine.cpp`
/// `Engine::evaluate_function`, `Engine::thread_main`), a generated autograd node
/// (`tools/autograd/gen_autograd_functions.py` names them `<Op>Backward<N>`, e.g.
/// `ConvolutionBackward0::apply`), or an ATen backward kernel (`native_functions.yaml` names them
/// `<op>_backward…`, e.g. `slow_conv_transpose3d_backward_out_cuda_template`).
static NATIVE_BACKWARD: FrameRule = r("backward", "torch/lib/", T, Serve, "torch");

fn is_native_backward(function: &str, file: &str) -> bool {
    let native = file.ends_with(".so")
        || file.contains(".so.")
        || file.ends_with(".dll")
        || file == crate::parse::engine_log::NATIVE_FRAME_FILE;
    if !native {
        return false;
    }
    let node = function.match_indices("Backward").any(|(at, word)| {
        function[at + word.len()..]
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit())
    });
    node || function.contains("_backward")
        || function == "Engine::evaluate_function"
        || function == "Engine::thread_main"
}

/// The rule for a frame, if any (paths are compared with `/` separators).
pub fn frame_rule(function: &str, file: &str) -> Option<&'static FrameRule> {
    if is_native_backward(function, file) {
        return Some(&NATIVE_BACKWARD);
    }
    let normalised;
    let file = if file.contains('\\') {
        normalised = file.replace('\\', "/");
        normalised.as_str()
    } else {
        file
    };
    // An empty function in a rule stands for any function of that path.
    FRAME_RULES.iter().find(|rule| {
        (rule.function == function || rule.function.is_empty())
            && (rule.path.is_empty() || file.contains(rule.path))
    })
}

/// The phase a traceback frame shows by itself, if any (offload hooks show none).
pub fn frame_phase(function: &str, file: &str) -> Option<Phase> {
    frame_rule(function, file)
        .filter(|rule| rule.role != Role::Offload)
        .map(|rule| rule.phase)
}

/// What the frames of one traceback show, read outermost first.
#[derive(Debug, Clone, Default)]
pub struct FramesVerdict<'a> {
    /// The deciding frame and its rule.
    pub decided: Option<(&'a Frame, &'static FrameRule)>,
    /// The deepest serving frame the deciding stage runs inside it (`execute_model` under
    /// `profile_run`).
    pub enclosed: Option<&'a Frame>,
    /// The training frame around an inference frame (evaluation inside training).
    pub around: Option<&'a Frame>,
    /// The deepest wrapper frame (used only when nothing else shows the stage).
    pub wrapper: Option<(&'a Frame, &'static FrameRule)>,
}

/// Reads the frames (outermost first): the deepest deciding frame wins, except that a serving
/// frame inside a start-up stage belongs to that stage (warm-ups and profiling run the
/// model's forward), and a weight move inside an offload hook belongs to the forward.
pub fn read_frames(frames: &[Frame]) -> FramesVerdict<'_> {
    let mut verdict = FramesVerdict::default();
    let mut offload = false;
    let mut training: Option<&Frame> = None;
    for frame in frames {
        let Some(rule) = frame_rule(&frame.function, &frame.file) else {
            continue;
        };
        let enclosing_stage = verdict
            .decided
            .is_some_and(|(_, decided)| matches!(decided.role, Role::Stage | Role::Move));
        match rule.role {
            Role::Wrapper => verdict.wrapper = Some((frame, rule)),
            Role::Offload => offload = true,
            Role::Move if offload => {}
            Role::Serve if enclosing_stage => verdict.enclosed = Some(frame),
            _ => {
                if rule.role == Role::Serve && rule.phase == Phase::TrainingStep {
                    training = Some(frame);
                }
                verdict.around = if rule.phase == Phase::Inference {
                    training
                } else {
                    None
                };
                verdict.decided = Some((frame, rule));
                verdict.enclosed = None;
            }
        }
    }
    verdict
}

/// The phase the failure message itself names, when its family is specific to one phase.
pub fn message_phase(message: &OomMessage) -> Option<Phase> {
    match message.kind {
        OomKind::VllmStartupFreeMemory => Some(Phase::Startup),
        OomKind::VllmNoCacheBlocks | OomKind::VllmMaxSeqLenTooLarge => Some(Phase::KvCacheAlloc),
        OomKind::VllmWarmupOom | OomKind::TgiWarmup => Some(Phase::Profiling),
        // TensorRT-LLM's executor report names the component whose creation failed
        // (`_ExecutorCreationStage` values in `_torch/pyexecutor/py_executor_creator.py`, 1.0):
        // `Model` / `Draft model for speculative decoding` (the `PyTorchModelEngine`, which loads
        // the weights), `KV cache` / `Initial KV cache (temporary for KV cache size estimation)`
        // (`KvCacheCreator.build_managers`); the other stages are left to other evidence.
        OomKind::TensorrtAlloc => {
            let component = message
                .text
                .split("could not be created:")
                .nth(1)?
                .trim_start();
            if component.starts_with("KV cache") || component.starts_with("Initial KV cache") {
                Some(Phase::KvCacheAlloc)
            } else if component.starts_with("Model")
                || component.starts_with("Draft model for speculative decoding")
            {
                Some(Phase::WeightsLoad)
            } else {
                None
            }
        }
        // A running XLA program names itself (`[executable_name='jit_train_step']`, PjRt's
        // executable name is the jitted function's): a train step, or a generation/sampling.
        OomKind::XlaResourceExhausted => {
            let name = message
                .text
                .split("executable_name='")
                .nth(1)?
                .split('\'')
                .next()?
                .to_ascii_lowercase();
            if name.contains("train") || name.contains("update_step") {
                Some(Phase::TrainingStep)
            } else if ["generate", "sample", "decode", "predict", "infer"]
                .iter()
                .any(|word| name.contains(word))
            {
                Some(Phase::Inference)
            } else {
                None
            }
        }
        OomKind::SglangMemory if message.text.contains("mem-fraction-static") => {
            Some(Phase::KvCacheAlloc)
        }
        // A ggml host buffer (`CPU`, `CUDA_Host` pinned memory) that could not be allocated: host
        // RAM, but its purpose says the stage as for a device buffer.
        OomKind::HostMemory => match message.details.buffer_purpose.as_deref() {
            Some("compute") => Some(Phase::Profiling),
            Some("kv cache") => Some(Phase::KvCacheAlloc),
            Some("model weights") => Some(Phase::WeightsLoad),
            _ => None,
        },
        OomKind::LlamacppAlloc => {
            match message.details.buffer_purpose.as_deref() {
                Some("compute") => return Some(Phase::Profiling),
                Some("kv cache") => return Some(Phase::KvCacheAlloc),
                Some("model weights") => return Some(Phase::WeightsLoad),
                _ => {}
            }
            let text = &message.text;
            if text.contains("kv cache") || text.contains("KV cache") || text.contains("kv_cache") {
                Some(Phase::KvCacheAlloc)
            } else if text.contains("compute") || text.contains("gallocr") {
                Some(Phase::Profiling)
            } else if text.contains("model buffer")
                || text.contains("alloc_tensor_range")
                || text.contains("loading model")
                || text.contains("unable to allocate")
            {
                Some(Phase::WeightsLoad)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// An engine's own words wrapping a memory error on the error's line: the stage that raised it.
/// (phrase, phase, where the engine writes it).
pub const WRAPPING_PHRASES: &[(&str, Phase, &str)] = &[
    (
        "Unable to warmup model",
        Phase::Profiling,
        "TGI router start-up, `router/src/main.rs` (0.9 panics there with it: `main.rs:216`)",
    ),
    (
        "Capture cuda graph failed",
        Phase::CudaGraphCapture,
        "SGLang `CudaGraphRunner.__init__` (`srt/model_executor/cuda_graph_runner.py`)",
    ),
    (
        "Request failed during generation",
        Phase::Inference,
        "TGI router `InferError::GenerationError` (`router/src/infer/mod.rs`, 0.9–3.x), relayed \
         by the router and its clients",
    ),
    (
        "[async_llm_engine.py:",
        Phase::Inference,
        "vLLM V0 `AsyncLLMEngine._log_task_completion` (`vllm/engine/async_llm_engine.py`): the \
         error that ended the engine's background loop (`run_engine_loop`)",
    ),
    (
        "could not be loaded:",
        Phase::WeightsLoad,
        "InvokeAI 2.x model manager (`ldm/invoke/model_manager.py`: `** model … could not be \
         loaded: …`)",
    ),
    (
        "Error merging checkpoints",
        Phase::FormatConversion,
        "AUTOMATIC1111 checkpoint merger (`modules/extras.py` `run_modelmerger`): the weights of \
         two checkpoints combined into a new one",
    ),
];

/// The phase an engine's wrapping words on the failure's own line name, with the phrase.
pub fn wrapping_phrase(line: &str) -> Option<(Phase, &'static str)> {
    WRAPPING_PHRASES
        .iter()
        .find(|(phrase, _, _)| line.contains(phrase))
        .map(|(phrase, phase, _)| (*phase, *phrase))
}

/// What the phase decision looks at.
#[derive(Debug, Clone, Copy)]
pub struct PhaseInputs<'a> {
    /// The failure that matters (first GPU OOM, else first failure).
    pub failure: Option<&'a OomMessage>,
    /// How far the run got when the failure was seen.
    pub progress: &'a Progress,
    /// Frames of the failure's traceback, outermost first.
    pub frames: &'a [Frame],
    /// An explicit phase line (vLLM ≥0.14 `Failed to load model - not enough GPU memory`).
    pub hint: Option<(u64, Phase)>,
    /// A line printed just under the failure that shows the stage running (a progress bar
    /// redrawn under the traceback, a router span, a footer); used when nothing before the
    /// failure shows it.
    pub late: Option<(u64, Phase)>,
}

/// Decides `failed_in`, `last_completed`, `server_was_ready` with evidence.
pub fn decide(inputs: PhaseInputs<'_>) -> PhaseReport {
    let progress = inputs.progress;
    let mut evidence = Vec::new();
    let server_was_ready = match (progress.server_ready, progress.first_request) {
        (Some(line), _) => {
            evidence.push(format!("line {line}: the server was accepting requests"));
            Some(true)
        }
        (None, Some(line)) => {
            evidence.push(format!("line {line}: a request was being served"));
            Some(true)
        }
        (None, None) if progress.started.is_some() || progress.last_completed.is_some() => {
            Some(false)
        }
        _ => None,
    };

    let from_message = inputs.failure.and_then(|message| {
        message_phase(message).map(|phase| {
            (
                phase,
                format!(
                    "line {}: the message itself is raised while {}",
                    message.line,
                    phase.describe()
                ),
            )
        })
    });
    let from_hint = inputs.hint.map(|(line, phase)| {
        (
            phase,
            format!(
                "line {line}: the engine says the failure happened while {}",
                phase.describe()
            ),
        )
    });
    let frames = read_frames(inputs.frames);
    let from_frames = frames.decided.map(|(frame, rule)| {
        let mut why = format!(
            "line {}: traceback frame `{}` ({}) is {}",
            frame.line,
            frame.function,
            short_path(&frame.file),
            rule.phase.describe()
        );
        if let Some(inner) = frames.enclosed {
            why.push_str(&format!(
                "; the deeper `{}` (line {}) runs inside it",
                inner.function, inner.line
            ));
        }
        if let Some(outer) = frames.around {
            why.push_str(&format!(
                "; evaluation inside training (`{}`, line {})",
                outer.function, outer.line
            ));
        }
        (rule.phase, why)
    });
    let from_wrapper = frames.wrapper.map(|(frame, rule)| {
        (
            rule.phase,
            format!(
                "line {}: traceback frame `{}` ({}) encloses {} (no deeper frame shows more)",
                frame.line,
                frame.function,
                short_path(&frame.file),
                rule.phase.describe()
            ),
        )
    });
    let from_progress = progress.in_progress.map(|(phase, line)| {
        (
            phase,
            format!(
                "line {line}: {} had started and the log shows no end of it",
                phase.as_str()
            ),
        )
    });
    let from_late = inputs.late.map(|(line, phase)| {
        (
            phase,
            format!(
                "line {line}: printed under the failure, it shows {} running",
                phase.as_str()
            ),
        )
    });
    let from_serving = match (server_was_ready, progress.in_progress) {
        (Some(true), None) => Some((
            Phase::Inference,
            "no startup stage was in progress after the server became ready".to_string(),
        )),
        _ => None,
    };

    // An explicit line of the engine beats the message family (llama.cpp's compute-buffer
    // failure is profiling at context creation, inference in `llama_kv_cache_update_impl`).
    let decided = from_hint
        .or(from_message)
        .or(from_frames)
        .or(from_progress)
        .or(from_late)
        .or(from_wrapper)
        .or(from_serving);
    let failed_in = match decided {
        Some((phase, why)) => {
            evidence.push(why);
            phase
        }
        None => {
            evidence
                .push("neither the log nor a traceback shows which stage was running".to_string());
            Phase::Unknown
        }
    };

    // A startup stage cannot be both done and the one that failed: the log showed part of it
    // (vLLM logs the KV-cache size, then its check of the context length fails).
    let mut completed = Vec::new();
    let last_completed = match progress.last_completed {
        Some((phase, line)) if phase == failed_in && phase.is_startup() => {
            completed.push(format!(
                "line {line}: {} had begun (the log shows part of it) and failed before it ended",
                phase.as_str()
            ));
            progress.completed_before.map(|(phase, line)| {
                completed.push(format!(
                    "line {line}: the log shows {} completed",
                    phase.as_str()
                ));
                phase
            })
        }
        Some((phase, line)) => {
            completed.push(format!(
                "line {line}: the log shows {} completed",
                phase.as_str()
            ));
            Some(phase)
        }
        None => None,
    };
    evidence.splice(0..0, completed);

    let prompt_can_be_cause = if failed_in.is_startup() || server_was_ready == Some(false) {
        Some(false)
    } else if failed_in == Phase::Inference {
        Some(true)
    } else {
        None
    };
    PhaseReport {
        failed_in,
        last_completed,
        server_was_ready,
        prompt_can_be_cause,
        evidence,
    }
}

/// The last two components of a path (`vllm/worker/worker.py` → `worker/worker.py`).
pub fn short_path(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit(['/', '\\']).take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(line: u64, function: &str, file: &str) -> Frame {
        Frame {
            line,
            function: function.to_string(),
            file: file.to_string(),
        }
    }

    #[test]
    fn deepest_mapped_frame_wins() {
        let frames = [
            frame(1, "_initialize_kv_caches", "/x/vllm/v1/engine/core.py"),
            frame(
                2,
                "determine_available_memory",
                "/x/vllm/v1/worker/gpu_worker.py",
            ),
            frame(3, "profile_run", "/x/vllm/v1/worker/gpu_model_runner.py"),
            frame(4, "_dummy_run", "/x/vllm/v1/worker/gpu_model_runner.py"),
            frame(5, "forward", "/x/vllm/model_executor/models/llama.py"),
        ];
        let report = decide(PhaseInputs {
            failure: None,
            progress: &Progress::default(),
            frames: &frames,
            hint: None,
            late: None,
        });
        assert_eq!(report.failed_in, Phase::Profiling);
        assert_eq!(report.prompt_can_be_cause, Some(false));
    }

    #[test]
    fn a_startup_stage_that_failed_is_not_the_last_completed() {
        let mut progress = Progress::default();
        progress.observe(EventKind::WeightsLoaded, Phase::WeightsLoad, 1);
        progress.observe(EventKind::ProfilingDone, Phase::Profiling, 2);
        progress.observe(EventKind::KvCacheAllocated, Phase::KvCacheAlloc, 3);
        progress.observe(EventKind::KvConcurrency, Phase::KvCacheAlloc, 4);
        // The KV cache was sized, then a frame of its allocation failed.
        let frames = [frame(5, "initialize_cache", "/x/vllm/worker/worker.py")];
        let report = decide(PhaseInputs {
            failure: None,
            progress: &progress,
            frames: &frames,
            hint: None,
            late: None,
        });
        assert_eq!(report.failed_in, Phase::KvCacheAlloc);
        assert_eq!(report.last_completed, Some(Phase::Profiling));
        assert!(report.evidence[0].contains("kv_cache_alloc had begun"));
        assert_eq!(
            report.evidence[1],
            "line 2: the log shows profiling completed"
        );
        // Steps repeat: a failing step comes after completed ones.
        let mut progress = Progress::default();
        progress.observe(EventKind::TrainingStep, Phase::TrainingStep, 7);
        let report = decide(PhaseInputs {
            failure: None,
            progress: &progress,
            frames: &[],
            hint: None,
            late: None,
        });
        assert_eq!(report.failed_in, Phase::TrainingStep);
        assert_eq!(report.last_completed, Some(Phase::TrainingStep));
    }

    #[test]
    fn nothing_shown_is_unknown() {
        let report = decide(PhaseInputs {
            failure: None,
            progress: &Progress::default(),
            frames: &[frame(1, "forward", "/x/model.py")],
            hint: None,
            late: None,
        });
        assert_eq!(report.failed_in, Phase::Unknown);
        assert_eq!(report.server_was_ready, None);
    }

    #[test]
    fn ready_server_then_failure_is_inference() {
        let mut progress = Progress::default();
        progress.observe(EventKind::EngineStart, Phase::Startup, 1);
        progress.observe(EventKind::WeightsLoaded, Phase::WeightsLoad, 5);
        progress.observe(EventKind::ServerReady, Phase::Inference, 9);
        let report = decide(PhaseInputs {
            failure: None,
            progress: &progress,
            frames: &[],
            hint: None,
            late: None,
        });
        assert_eq!(report.failed_in, Phase::Inference);
        assert_eq!(report.server_was_ready, Some(true));
        assert_eq!(report.last_completed, Some(Phase::WeightsLoad));
    }

    fn failed_in(frames: &[Frame]) -> (Phase, Vec<String>) {
        let report = decide(PhaseInputs {
            failure: None,
            progress: &Progress::default(),
            frames,
            hint: None,
            late: None,
        });
        (report.failed_in, report.evidence)
    }

    #[test]
    fn a_stage_encloses_the_forward_it_runs() {
        // vLLM V0: profile_run runs execute_model.
        let (phase, evidence) = failed_in(&[
            frame(
                1,
                "determine_num_available_blocks",
                "/x/vllm/worker/worker.py",
            ),
            frame(2, "profile_run", "/x/vllm/worker/model_runner.py"),
            frame(3, "execute_model", "/x/vllm/worker/model_runner.py"),
            frame(4, "forward", "/x/vllm/model_executor/models/llama.py"),
        ]);
        assert_eq!(phase, Phase::Profiling);
        assert!(evidence[0].contains("`profile_run`"), "{evidence:?}");
        assert!(evidence[0].contains("the deeper `execute_model` (line 3)"));
        // TGI: warmup runs generate_token, then sizes and allocates the KV cache.
        let tgi = "/x/text_generation_server/models/flash_causal_lm.py";
        assert_eq!(
            failed_in(&[
                frame(1, "Warmup", "/x/text_generation_server/server.py"),
                frame(2, "warmup", tgi),
                frame(3, "generate_token", tgi)
            ])
            .0,
            Phase::Profiling
        );
        assert_eq!(
            failed_in(&[frame(1, "warmup", tgi), frame(2, "init_kv_cache", tgi)]).0,
            Phase::KvCacheAlloc
        );
        // SGLang: graph capture runs the model.
        let sgl = "/x/sglang/srt/model_executor/cuda_graph_runner.py";
        assert_eq!(
            failed_in(&[
                frame(1, "__init__", sgl),
                frame(2, "capture", sgl),
                frame(3, "capture_one_batch_size", sgl),
                frame(4, "run_once", sgl),
                frame(5, "forward", "/x/sglang/srt/models/llama.py")
            ])
            .0,
            Phase::CudaGraphCapture
        );
    }

    #[test]
    fn vllm_v1_dummy_run_is_decided_by_its_caller() {
        let runner = "/x/vllm/v1/worker/gpu_model_runner.py";
        assert_eq!(
            failed_in(&[
                frame(
                    1,
                    "compile_or_warm_up_model",
                    "/x/vllm/v1/worker/gpu_worker.py"
                ),
                frame(2, "capture_model", runner),
                frame(3, "_dummy_run", runner)
            ])
            .0,
            Phase::CudaGraphCapture
        );
        assert_eq!(
            failed_in(&[
                frame(1, "profile_run", runner),
                frame(2, "_dummy_run", runner)
            ])
            .0,
            Phase::Profiling
        );
        assert_eq!(
            failed_in(&[frame(1, "_dummy_run", runner)]).0,
            Phase::Unknown
        );
        assert_eq!(
            failed_in(&[
                frame(1, "run_engine_core", "/x/vllm/v1/engine/core.py"),
                frame(2, "run_busy_loop", "/x/vllm/v1/engine/core.py"),
                frame(3, "step", "/x/vllm/v1/engine/core.py"),
                frame(4, "execute_model", runner)
            ])
            .0,
            Phase::Inference
        );
    }

    #[test]
    fn wrappers_decide_only_when_nothing_else_does() {
        let core = "/x/vllm/v1/engine/core.py";
        let (phase, evidence) = failed_in(&[
            frame(1, "_initialize_kv_caches", core),
            frame(2, "collective_rpc", "/x/vllm/executor/abstract.py"),
        ]);
        assert_eq!(phase, Phase::KvCacheAlloc);
        assert!(evidence[0].contains("encloses"));
        assert_eq!(
            failed_in(&[
                frame(1, "_initialize_kv_caches", core),
                frame(
                    2,
                    "determine_available_memory",
                    "/x/vllm/v1/executor/abstract.py"
                )
            ])
            .0,
            Phase::Profiling
        );
        // A log line that shows the stage beats the wrapper.
        let mut progress = Progress::default();
        progress.observe(EventKind::CudaGraphCaptureStart, Phase::CudaGraphCapture, 1);
        let frames = [frame(2, "_initialize_kv_caches", core)];
        let report = decide(PhaseInputs {
            failure: None,
            progress: &progress,
            frames: &frames,
            hint: None,
            late: None,
        });
        assert_eq!(report.failed_in, Phase::CudaGraphCapture);
    }

    #[test]
    fn offloaded_weights_moved_in_a_forward_are_not_a_load() {
        let hooks = "/x/accelerate/hooks.py";
        let (phase, _) = failed_in(&[
            frame(1, "generate", "/x/transformers/generation/utils.py"),
            frame(2, "_sample", "/x/transformers/generation/utils.py"),
            frame(3, "new_forward", hooks),
            frame(4, "pre_forward", hooks),
            frame(
                5,
                "set_module_tensor_to_device",
                "/x/accelerate/utils/modeling.py",
            ),
        ]);
        assert_eq!(phase, Phase::Inference);
        // Without the hook it is a load.
        assert_eq!(
            failed_in(&[
                frame(1, "dispatch_model", "/x/accelerate/big_modeling.py"),
                frame(
                    2,
                    "set_module_tensor_to_device",
                    "/x/accelerate/utils/modeling.py"
                )
            ])
            .0,
            Phase::WeightsLoad
        );
    }

    #[test]
    fn evaluation_inside_training_is_inference_and_says_so() {
        let trainer = "/x/transformers/trainer.py";
        let (phase, evidence) = failed_in(&[
            frame(1, "train", trainer),
            frame(2, "_inner_training_loop", trainer),
            frame(3, "_maybe_log_save_evaluate", trainer),
            frame(4, "evaluate", "/x/transformers/trainer_seq2seq.py"),
            frame(5, "prediction_step", "/x/transformers/trainer_seq2seq.py"),
            frame(6, "generate", "/x/transformers/generation/utils.py"),
        ]);
        assert_eq!(phase, Phase::Inference);
        assert!(
            evidence[0].contains("evaluation inside training (`_inner_training_loop`, line 2)"),
            "{evidence:?}"
        );
        assert_eq!(
            failed_in(&[
                frame(1, "train", trainer),
                frame(2, "_inner_training_loop", trainer),
                frame(3, "training_step", trainer),
                frame(4, "backward", "/x/torch/_tensor.py")
            ])
            .0,
            Phase::TrainingStep
        );
        // The model moved to the GPU when training starts is a load.
        assert_eq!(
            failed_in(&[
                frame(1, "train", trainer),
                frame(2, "_inner_training_loop", trainer),
                frame(3, "_wrap_model", "/x/transformers/trainer.py"),
                frame(4, "to", "/x/torch/nn/modules/module.py"),
                frame(5, "_apply", "/x/torch/nn/modules/module.py")
            ])
            .0,
            Phase::WeightsLoad
        );
    }

    #[test]
    fn module_moves_and_casts() {
        let module = "/x/torch/nn/modules/module.py";
        let (to, half, lazy) = (
            failed_in(&[
                frame(1, "to", module),
                frame(2, "_apply", module),
                frame(3, "convert", module),
            ])
            .0,
            failed_in(&[
                frame(1, "half", module),
                frame(2, "_apply", module),
                frame(3, "<lambda>", module),
            ])
            .0,
            failed_in(&[
                frame(1, "cuda", module),
                frame(2, "_apply", module),
                frame(3, "_lazy_init", "/x/torch/cuda/__init__.py"),
            ])
            .0,
        );
        assert_eq!(
            (to, half, lazy),
            (Phase::WeightsLoad, Phase::FormatConversion, Phase::Startup)
        );
        // Windows paths.
        let windows = r"C:\Users\u\miniconda3\Lib\site-packages\torch\nn\modules\module.py";
        assert_eq!(failed_in(&[frame(1, "to", windows)]).0, Phase::WeightsLoad);
        // A Jupyter call line (`---> 1 model.to(0)`) has no path: `to` alone proves nothing.
        assert_eq!(failed_in(&[frame(1, "to", "<call>")]).0, Phase::Unknown);
    }

    #[test]
    fn a_sized_kv_cache_is_being_allocated() {
        let mut progress = Progress::default();
        progress.observe(EventKind::ProfilingStart, Phase::Profiling, 1);
        progress.observe(EventKind::KvCachePlanned, Phase::KvCacheAlloc, 2);
        assert_eq!(progress.in_progress, Some((Phase::KvCacheAlloc, 2)));
        assert_eq!(progress.last_completed, Some((Phase::Profiling, 2)));
        progress.observe(EventKind::KvConcurrency, Phase::KvCacheAlloc, 3);
        assert_eq!(progress.in_progress, Some((Phase::KvCacheAlloc, 3)));
        progress.observe(EventKind::CudaGraphCaptureStart, Phase::CudaGraphCapture, 4);
        assert_eq!(progress.in_progress, Some((Phase::CudaGraphCapture, 4)));
        // An allocation that the log reports done closes the stage.
        let mut done = Progress::default();
        done.observe(EventKind::KvCacheAllocated, Phase::KvCacheAlloc, 1);
        assert_eq!(done.in_progress, None);
    }

    #[test]
    fn native_backward_frames_are_a_training_step() {
        let lib = "/x/site-packages/torch/lib/libtorch_cuda.so";
        for function in [
            "native::slow_conv_transpose3d_backward_out_cuda_template",
            "ConvolutionBackward0::apply",
            "Engine::evaluate_function",
        ] {
            assert_eq!(frame_phase(function, lib), Some(T), "{function}");
        }
        assert_eq!(frame_phase("native::conv2d", lib), None);
        assert_eq!(frame_phase("ConvolutionBackward::apply", lib), None);
        // A Python function of that name is not a native frame.
        assert_eq!(frame_phase("my_backward", "/x/model.py"), None);
    }

    #[test]
    fn every_rule_is_reachable() {
        for (index, rule) in FRAME_RULES.iter().enumerate() {
            let file = if rule.path.is_empty() {
                "/x/y.py".to_string()
            } else {
                format!("/x/{}/y.py", rule.path)
            };
            let found = frame_rule(rule.function, &file).map(|found| found as *const FrameRule);
            assert!(found.is_some(), "{}", rule.function);
            let first = FRAME_RULES
                .iter()
                .position(|other| std::ptr::eq(other, found.unwrap()))
                .unwrap();
            // An earlier rule may shadow a later one only when both say the same.
            if first != index {
                assert_eq!(
                    FRAME_RULES[first].phase, rule.phase,
                    "{} shadowed",
                    rule.function
                );
            }
        }
    }

    #[test]
    fn engine_words_around_the_error_name_the_stage() {
        let tgi = "thread 'main' panicked at 'Unable to warmup model: Generation(\"Allocation on device 0 would exceed allowed memory. (out of memory)";
        assert_eq!(
            wrapping_phrase(tgi),
            Some((Phase::Profiling, "Unable to warmup model"))
        );
        let sglang =
            "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB.";
        assert_eq!(
            wrapping_phrase(sglang).map(|(phase, _)| phase),
            Some(Phase::CudaGraphCapture)
        );
        assert_eq!(
            wrapping_phrase("torch.OutOfMemoryError: CUDA out of memory."),
            None
        );
    }

    #[test]
    fn backend_creation_and_chainer_loops() {
        let cases = [
            (
                "backends",
                "/venv/site-packages/jax/_src/xla_bridge.py",
                Phase::Startup,
            ),
            (
                "_init_backend",
                "/venv/site-packages/jax/_src/xla_bridge.py",
                Phase::Startup,
            ),
            (
                "make_c_api_client",
                "/venv/site-packages/jaxlib/xla_client.py",
                Phase::Startup,
            ),
            (
                "_lazy_new",
                "~/envs/py3/lib/python3.5/site-packages/torch/cuda/__init__.py",
                Phase::Startup,
            ),
            (
                "run",
                "/site-packages/chainer/training/trainer.py",
                Phase::TrainingStep,
            ),
            (
                "update_core",
                "/site-packages/chainer/training/updaters/standard_updater.py",
                Phase::TrainingStep,
            ),
            (
                "update",
                "/site-packages/chainer/optimizer.py",
                Phase::TrainingStep,
            ),
        ];
        for (function, file, phase) in cases {
            assert_eq!(
                frame_phase(function, file),
                Some(phase),
                "{function} {file}"
            );
        }
        // Not any `run` or `update`.
        assert_eq!(frame_phase("run", "/app/server.py"), None);
        assert_eq!(frame_phase("update", "/app/state.py"), None);
    }

    #[test]
    fn a_ggml_host_buffer_says_its_stage_too() {
        use crate::model::failure::{EngineFigures, OomFigures};
        let message = OomMessage {
            kind: OomKind::HostMemory,
            is_gpu_oom: false,
            engine_hint: None,
            figures: OomFigures::default(),
            line: 9,
            stream: None,
            exception: None,
            text: "error loading model: unable to allocate CUDA_Host buffer".to_string(),
            end_line: 9,
            t_ms: None,
            details: EngineFigures {
                buffer_type: Some("CUDA_Host".to_string()),
                buffer_purpose: Some("model weights".to_string()),
                ..EngineFigures::default()
            },
        };
        assert_eq!(message_phase(&message), Some(Phase::WeightsLoad));
        let plain = OomMessage {
            details: EngineFigures::default(),
            ..message
        };
        assert_eq!(message_phase(&plain), None);
    }

    #[test]
    fn issue13_wrapping_words_and_keras_fit() {
        for (line, phase) in [
            ("infer:send_error: router/src/infer.rs:554: Request failed during generation: Server error: CUDA out of memory.", Phase::Inference),
            ("ERROR 03-31 15:19:44 [async_llm_engine.py:68] torch.OutOfMemoryError: CUDA out of memory.", Phase::Inference),
            ("** model stable-diffusion-1.5 could not be loaded: CUDA out of memory.", Phase::WeightsLoad),
            ("Error merging checkpoints: CUDA out of memory.", Phase::FormatConversion),
        ] {
            assert_eq!(wrapping_phrase(line).map(|(p, _)| p), Some(phase), "{line}");
        }
        // Keras `Model.fit`, also as a notebook arrow.
        assert_eq!(frame_phase("fit", "<call>"), Some(Phase::TrainingStep));
    }
}
