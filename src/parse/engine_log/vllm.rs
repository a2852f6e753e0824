//! vLLM log lines (V0 and V1, 0.4 → 0.33). Texts from `vllm-project/vllm`:
//! `vllm/entrypoints/openai/api_server.py` (banner, args), `vllm/engine/llm_engine.py` and
//! `vllm/v1/engine/core.py` (engine config, init time), `vllm/worker/model_runner.py` and
//! `vllm/v1/worker/gpu_model_runner.py` (load, CUDA graphs), `vllm/worker/worker.py` and
//! `vllm/v1/worker/gpu_worker.py` (memory profiling), `vllm/v1/core/kv_cache_utils.py` (KV size),
//! `vllm/executor/*` (V0 blocks), uvicorn `server.py`/`lifespan/on.py` (ready).

use super::common::{
    after, has, integer_after, number_after, setting, setting_bool, setting_integer,
    setting_number, size_after, word_after,
};
use super::{rule, Certainty, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};
use crate::model::failure::EngineName;
use crate::model::Bytes;

pub(super) const RULES: &[Rule] = &[
    rule("vLLM API server version", banner),
    rule("vLLM server version", banner),
    rule("LLM engine (v", engine_config),
    rule("non-default args:", args),
    rule("args: Namespace(", args),
    rule("Resolved architecture:", architecture),
    rule("Using max model len", max_model_len),
    rule("max_num_batched_tokens=", chunked_prefill),
    rule("vLLM is using nccl==", nccl),
    rule("Automatically detected platform", platform),
    rule("Starting to load model", load_start),
    // The speculative decoder's draft model (`v1/worker/gpu_model_runner.py` `load_model`,
    // 0.8+: `Loading drafter model...` after the target's weights).
    rule("Loading drafter model", load_start),
    rule("checkpoint shards:", shards),
    rule("Loading weights took", weights_read),
    rule("Loading model weights took", weights_loaded),
    rule("Model loading took", weights_loaded),
    rule(
        "Starting profile run for multi-modal models",
        multimodal_profiling,
    ),
    rule("of the maximum feature size", multimodal_profiling),
    rule(
        "The sequence length used for profiling",
        multimodal_profiling,
    ),
    rule("Memory profiling takes", profiling),
    rule("Memory profiling results:", profiling),
    rule("x gpu_memory_utilization (", profiling),
    rule("the rest of the memory reserved for KV Cache", profiling),
    rule("Available KV cache memory:", profiling),
    rule("Profiling CUDA graph memory:", cudagraph_memory_profiling),
    rule("padding layers, may waste at most", kv_padding_layers),
    rule("on startup. Desired GPU memory utilization", startup_memory),
    rule("GiB) on startup", startup_memory),
    rule("# GPU blocks:", blocks),
    rule("# cuda blocks:", blocks),
    rule("# CUDA blocks:", blocks),
    rule("KV cache size:", kv_tokens),
    rule("before init cache memory allocated:", verl_init_cache),
    rule("after init cache memory allocated:", verl_init_cache),
    rule("Maximum concurrency for", kv_tokens),
    rule("Capturing cudagraphs", graph_start),
    rule("Capturing the model for CUDA graphs", graph_start),
    rule("Capturing CUDA graph", graph_start),
    rule("Graph capturing finished in", graph_done),
    rule("torch.compile take", compile),
    rule("torch.compile took", compile),
    rule("Dynamo bytecode transform time", compile),
    rule("Compiling a graph for", compile),
    rule("Compile and warming up model", compile),
    rule(
        "init engine (profile, create kv cache, warmup model) took",
        engine_ready,
    ),
    rule("Starting vLLM API server", api_starting),
    rule("Starting vLLM server on", api_starting),
    rule("Application startup complete", server_ready),
    rule("Uvicorn running on", server_ready),
    rule("Application startup failed", shutdown),
    rule("EngineCore failed to start", shutdown),
    rule("Engine core initialization failed", engine_core_failed),
    rule("WorkerProc failed to start", shutdown),
    rule("Failed to load model - not enough GPU memory", load_failed),
    rule("Error in memory profiling. ", profiling_check_failed),
    // V0's multiprocessing client (`engine/multiprocessing/client.py` `MQLLMEngineClient.dead_error`:
    // "Engine loop is not running. Inspect the stacktrace to find the original error: {repr}"),
    // raised to a request (`generate`, `encode`) after the engine loop died (session 38).
    rule("Engine loop is not running", engine_loop_dead),
    // V0 `executor/multiproc_worker_utils.py` `_run_worker_process`: "Exception in worker %s
    // while processing method %s." — the worker method that raised.
    rule("while processing method load_model", worker_method_failed),
    rule(
        "while processing method determine_num_available_blocks",
        worker_method_failed,
    ),
    // Any worker method that raised, by the same lines and by the Ray/driver wrapper
    // (`worker/worker_base.py` `execute_method`: "Error executing method %r. This might cause
    // deadlock in distributed execution."; Aphrodite keeps both): the method counts as a
    // traceback frame (file `<worker method>`, so only rules without a path match it), which
    // the frame rules then map (`load_model`, `determine_num_available_blocks`,
    // `start_worker_execution_loop`, …).
    rule("Error executing method", worker_method_frame),
    rule("while processing method", worker_method_frame),
    rule("input of failed execution to", failed_execution_dump),
    rule("Dumping input data", v1_execution_dump),
    rule(
        "Dumping scheduler output for model execution",
        v1_execution_dump,
    ),
    rule("Dumping scheduler stats", v1_execution_dump),
    rule("\"POST /v1/", request),
    rule("\"POST /generate", request),
    rule("Received request ", request),
    // A request ended by the engine (`engine/async_llm_engine.py` `_abort`: `Aborted request
    // %s.`) and the OpenAI server's streamed reply that raised (`entrypoints/openai/
    // serving_chat.py` `chat_completion_stream_generator`: `logger.exception("Error in chat
    // completion stream generator.")`): requests were being served (session 47).
    rule("Aborted request ", request),
    rule("Error in chat completion stream generator", request),
    rule("Added request ", request),
    rule("Processed prompts:", request),
    rule("Avg prompt throughput:", stats),
    rule("is preempted by", preempted),
    rule("vLLM Version:", collect_env),
];

fn banner(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Banner);
    if let Some(version) = word_after(text, "version") {
        facts.engine_version = Some(version.to_string());
    }
    if let Some(model) = word_after(text, "serving model") {
        facts.model.name = Some(model.to_string());
    }
    facts.event(
        EventKind::EngineStart,
        Phase::Startup,
        EventFigures::default(),
    );
}

fn engine_config(text: &str, facts: &mut LineFacts) {
    // V0: `Initializing an LLM engine (v0.6.3) with config: model='…', …`
    // V1: `Initializing a V1 LLM engine (v0.8.5) with config: model='…', …`
    if !has(text, "Initializing") {
        return;
    }
    facts.engine(EngineName::Vllm, Certainty::Banner);
    if let Some(version) = after(text, "LLM engine (v") {
        let version = version.split(')').next().unwrap_or("");
        if !version.is_empty() {
            facts.engine_version = Some(version.to_string());
        }
    }
    facts.generation = Some(if has(text, "V1 LLM engine") {
        "v1"
    } else {
        "v0"
    });
    config_settings(text, facts);
    facts.event(
        EventKind::EngineStart,
        Phase::Startup,
        EventFigures::default(),
    );
}

fn config_settings(text: &str, facts: &mut LineFacts) {
    if let Some(model) = setting(text, "model") {
        facts.model.name = Some(model.to_string());
    }
    if let Some(dtype) = setting(text, "dtype") {
        facts.model.dtype = Some(dtype.to_string());
    }
    if let Some(quantization) = setting(text, "quantization") {
        facts.model.quantization = Some(quantization.to_string());
    }
    let config = &mut facts.config;
    config.max_model_len = setting_integer(text, "max_model_len")
        .or_else(|| setting_integer(text, "max_seq_len"))
        .or(config.max_model_len);
    config.tensor_parallel_size =
        setting_integer(text, "tensor_parallel_size").or(config.tensor_parallel_size);
    config.pipeline_parallel_size =
        setting_integer(text, "pipeline_parallel_size").or(config.pipeline_parallel_size);
    config.gpu_memory_utilization =
        setting_number(text, "gpu_memory_utilization").or(config.gpu_memory_utilization);
    config.kv_cache_dtype = setting(text, "kv_cache_dtype")
        .map(str::to_string)
        .or(config.kv_cache_dtype.take());
    config.enforce_eager = setting_bool(text, "enforce_eager").or(config.enforce_eager);
    config.max_num_seqs = setting_integer(text, "max_num_seqs").or(config.max_num_seqs);
    config.max_num_batched_tokens =
        setting_integer(text, "max_num_batched_tokens").or(config.max_num_batched_tokens);
    config.cpu_offload_gb = setting_number(text, "cpu_offload_gb").or(config.cpu_offload_gb);
}

/// `non-default args: {…}` (V1 0.8+ `entrypoints/utils.py` `log_non_default_args`) and the
/// older servers' `args: Namespace(…)` (`entrypoints/openai/api_server.py`, 0.2–0.7:
/// `logger.info("args: %s", args)`). Any argparse script prints `args: Namespace(…)`: only one
/// holding vLLM's own engine settings (`vllm/engine/arg_utils.py` `EngineArgs`) is vLLM's.
fn args(text: &str, facts: &mut LineFacts) {
    if has(text, "args: Namespace(") && !has(text, "non-default args:") {
        let own = [
            ", gpu_memory_utilization=",
            "(gpu_memory_utilization=",
            ", swap_space=",
            ", max_num_seqs=",
        ]
        .iter()
        .any(|key| has(text, key));
        if !own {
            return;
        }
    }
    facts.engine(EngineName::Vllm, Certainty::Strong);
    config_settings(text, facts);
}

fn architecture(text: &str, facts: &mut LineFacts) {
    if let Some(architecture) = word_after(text, "Resolved architecture:") {
        facts.model.architecture = Some(architecture.to_string());
    }
}

fn max_model_len(text: &str, facts: &mut LineFacts) {
    facts.config.max_model_len = integer_after(text, "Using max model len");
}

fn chunked_prefill(text: &str, facts: &mut LineFacts) {
    if has(text, "Chunked prefill is enabled") {
        facts.config.max_num_batched_tokens = integer_after(text, "max_num_batched_tokens=");
    }
}

fn nccl(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    if let Some(version) = word_after(text, "nccl==") {
        facts.versions.push(("nccl", version.to_string()));
    }
}

fn platform(text: &str, facts: &mut LineFacts) {
    if has(text, "platform") {
        facts.engine(EngineName::Vllm, Certainty::Weak);
        facts.event(
            EventKind::DeviceInit,
            Phase::Startup,
            EventFigures::default(),
        );
    }
}

fn load_start(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    if let Some(model) = word_after(text, "Starting to load model") {
        let model = model.trim_end_matches('.');
        if !model.is_empty() {
            facts.model.name = Some(model.to_string());
        }
    }
    facts.event(
        EventKind::WeightsLoadStart,
        Phase::WeightsLoad,
        EventFigures::default(),
    );
}

/// `Loading safetensors checkpoint shards:  50% Completed | 1/2 [..]` (vLLM) and
/// `Loading checkpoint shards: 100%|██████████| 4/4 [..]` (transformers).
fn shards(text: &str, facts: &mut LineFacts) {
    if !has(text, "Loading") {
        return;
    }
    // vLLM's loader bar is also printed by SGLang (it reuses vLLM's weight utilities).
    if has(text, "Loading checkpoint shards:") {
        facts.engine(EngineName::Transformers, Certainty::Weak);
    } else {
        facts.engine(EngineName::Vllm, Certainty::Weak);
    }
    let complete = after(text, "shards:")
        .and_then(super::common::leading_number)
        .is_some_and(|percent| percent >= 100.0);
    // vLLM's bar counts a shard once its tensors were all handed to the model's `load_weights`
    // (`model_executor/model_loader/weight_utils.py` `safetensors_weights_iterator`: tqdm counts
    // a file after the loop's body, which yields its tensors): at 100 % every weight was read,
    // as its later `Loading weights took` says, and what runs next is not shown.
    let kind = if complete && has(text, "Loading checkpoint shards:") {
        EventKind::WeightsLoaded
    } else if complete {
        EventKind::WeightsRead
    } else {
        EventKind::WeightsLoadProgress
    };
    facts.event(kind, Phase::WeightsLoad, EventFigures::default());
}

fn weights_read(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    let figures = EventFigures {
        seconds: number_after(text, "Loading weights took"),
        ..EventFigures::default()
    };
    facts.event(EventKind::WeightsRead, Phase::WeightsLoad, figures);
}

/// `Loading model weights took 14.9595 GB` (≤0.7.3), `Model loading took 6.0160 GB and
/// 533.85 seconds` (0.8.0–0.8.4), `… GiB and … seconds` (0.8.5–0.11), `… GiB memory and … seconds` (≥0.14).
fn weights_loaded(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    let bytes = size_after(text, "took", true);
    let seconds = after(text, "took")
        .and_then(|rest| after(rest, " and "))
        .and_then(super::common::leading_number);
    facts.memory.weights = bytes;
    facts.event(
        EventKind::WeightsLoaded,
        Phase::WeightsLoad,
        EventFigures {
            bytes,
            seconds,
            ..EventFigures::default()
        },
    );
}

fn gib(text: &str, key: &str) -> Option<Bytes> {
    let value = number_after(text, key)?;
    (value >= 0.0).then(|| Bytes::from_gib_f64(value))
}

/// The profiling run of a multi-modal model begins: V0 0.6.x `worker/enc_dec_model_runner.py`
/// `EncoderDecoderModelRunner.profile_run` logs `Starting profile run for multi-modal models.`
/// before its dummy batch; V1 0.7–0.11 `v1/worker/gpu_model_runner.py` `profile_run` logs
/// `Encoder cache will be initialized with a budget of N tokens, and profiled with K image
/// items of the maximum feature size.` before it runs the encoder on dummy items, then the
/// dummy forward (where torch.compile compiles) that the memory profiling measures. 0.7–0.9
/// `multimodal/profiling.py` `MultiModalProfiler.get_decoder_dummy_data` warns while it builds
/// that dummy batch when the profiled sequence cannot hold the worst-case multi-modal
/// embeddings (`The sequence length used for profiling (max_num_batched_tokens / max_num_seqs =
/// N) is too short to hold the multi-modal embeddings in the worst case …`).
fn multimodal_profiling(text: &str, facts: &mut LineFacts) {
    let v1 = has(text, "Encoder cache will be initialized") && has(text, ", and profiled with ");
    let dummy = has(text, "The sequence length used for profiling (")
        && has(text, "is too short to hold the multi-modal embeddings");
    if has(text, "Starting profile run for multi-modal models") || v1 || dummy {
        facts.engine(EngineName::Vllm, Certainty::Strong);
        facts.event(
            EventKind::ProfilingStart,
            Phase::Profiling,
            EventFigures::default(),
        );
    }
}

/// vLLM V1 (0.21+) `gpu_model_runner.py` `profile_cudagraph_memory`: "Profiling CUDA graph
/// memory: PIECEWISE=4 (largest=8)", logged as the worker captures the graphs into a temporary
/// pool to measure them (after `_init_minimal_kv_cache_for_profiling`), inside
/// `determine_available_memory`: profiling, ended by `Available KV cache memory`.
fn cudagraph_memory_profiling(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    facts.event(
        EventKind::ProfilingStart,
        Phase::Profiling,
        EventFigures::default(),
    );
}

/// vLLM V1 `v1/core/kv_cache_utils.py` (`_get_kv_cache_groups_uniform_page_size`, reached from
/// `get_kv_cache_configs`): "Add %d padding layers, may waste at most %.2f%% KV cache memory",
/// logged while the KV cache is grouped and sized for the memory the profiling left (and for the
/// minimal profiling cache, before `Profiling CUDA graph memory`, which then opens profiling):
/// the KV cache is planned, its tensors come next.
fn kv_padding_layers(text: &str, facts: &mut LineFacts) {
    if has(text, "Add ") && has(text, "KV cache memory") {
        facts.engine(EngineName::Vllm, Certainty::Strong);
        facts.event(
            EventKind::KvCachePlanned,
            Phase::KvCacheAlloc,
            EventFigures::default(),
        );
    }
}

fn profiling(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    let memory = &mut facts.memory;
    if has(text, "Memory profiling results:") {
        // 0.6.4: total_gpu_memory=79.15GiB initial_memory_usage=… peak_torch_memory=… kv_cache_size=…GiB
        memory.total_gpu = gib(text, "total_gpu_memory=");
        memory.non_torch = gib(text, "non_torch_memory=");
        memory.kv_cache = gib(text, "kv_cache_size=");
        facts.config.gpu_memory_utilization = number_after(text, "gpu_memory_utilization=");
        let figures = EventFigures {
            bytes: memory.kv_cache,
            ..EventFigures::default()
        };
        facts.event(EventKind::ProfilingDone, Phase::Profiling, figures);
        return;
    }
    if has(text, "x gpu_memory_utilization (") {
        memory.total_gpu = gib(text, "total_gpu_memory (");
        facts.config.gpu_memory_utilization = number_after(text, "x gpu_memory_utilization (");
        return;
    }
    if has(text, "the rest of the memory reserved for KV Cache") {
        memory.weights = gib(text, "model weights take");
        memory.non_torch = gib(text, "non_torch_memory takes");
        memory.activation_peak = gib(text, "activation peak memory takes");
        // K can be negative: then nothing is left for the KV cache.
        memory.kv_cache =
            number_after(text, "KV Cache is").map(|value| Bytes::from_gib_f64(value.max(0.0)));
        let figures = EventFigures {
            bytes: memory.kv_cache,
            ..EventFigures::default()
        };
        facts.event(EventKind::ProfilingDone, Phase::Profiling, figures);
        return;
    }
    if has(text, "Available KV cache memory:") {
        memory.kv_cache = gib(text, "Available KV cache memory:");
        let figures = EventFigures {
            bytes: memory.kv_cache,
            ..EventFigures::default()
        };
        facts.event(EventKind::ProfilingDone, Phase::Profiling, figures);
        return;
    }
    // `Memory profiling takes 5.12 seconds` (V0 0.6.6–0.10, first of three lines) or the V1
    // DEBUG line with `weights memory: …GiB`.
    memory.weights = gib(text, "weights memory:");
    memory.activation_peak = gib(text, "torch peak memory increase:");
    let figures = EventFigures {
        seconds: number_after(text, "Memory profiling takes"),
        ..EventFigures::default()
    };
    facts.event(EventKind::ProfilingDone, Phase::Profiling, figures);
}

/// `Free memory on device (F/T GiB) on startup. Desired GPU memory utilization is (u, R GiB).
/// Actual usage is W GiB for weight, A GiB for peak activation, N GiB for non-torch memory, and
/// G GiB for CUDAGraph memory. …` (0.10.2 INFO, 0.11–0.24 DEBUG).
fn startup_memory(text: &str, facts: &mut LineFacts) {
    if !has(text, "on startup") {
        return;
    }
    facts.engine(EngineName::Vllm, Certainty::Strong);
    let memory = &mut facts.memory;
    memory.free_at_start = gib(text, "Free memory on device (");
    memory.total_gpu = after(text, "Free memory on device (")
        .and_then(|rest| after(rest, "/"))
        .and_then(super::common::leading_number)
        .map(Bytes::from_gib_f64);
    memory.weights = after(text, "Actual usage is").and_then(|rest| {
        has(rest, "for weight")
            .then(|| super::common::leading_number(rest))
            .flatten()
            .map(Bytes::from_gib_f64)
    });
    memory.cuda_graphs = after(text, "non-torch memory, and")
        .or_else(|| after(text, "peak activation, and"))
        .and_then(super::common::leading_number)
        .map(Bytes::from_gib_f64);
    facts.config.gpu_memory_utilization = number_after(text, "Desired GPU memory utilization is (");
}

/// `# GPU blocks: 2048, # CPU blocks: 512` (≤0.6) / `# cuda blocks: 5102, # CPU blocks: 4681`.
/// V0 `LLMEngine._initialize_kv_caches` logs it, then calls `initialize_cache`, which builds the
/// `CacheEngine`s (GPU cache, then the CPU swap cache): the allocation comes after the line.
fn blocks(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    let blocks = integer_after(text, "blocks:");
    facts.event(
        EventKind::KvCachePlanned,
        Phase::KvCacheAlloc,
        EventFigures {
            blocks,
            ..EventFigures::default()
        },
    );
}

/// verl's SPMD executor of vLLM (`verl/third_party/vllm/vllm_v_0_6_3/spmd_gpu_executor.py`
/// `initialize_cache`): `before init cache memory allocated: 5.96926464GB, reserved: …` printed
/// on rank 0 just before `self.worker.initialize_cache(num_gpu_blocks=…)` builds the rollout
/// engine's KV cache, and `after init cache memory allocated: …` once it has. The program is
/// verl's trainer, not vLLM's server: no engine is named.
fn verl_init_cache(text: &str, facts: &mut LineFacts) {
    let kind = if has(text, "after init cache memory allocated:") {
        EventKind::KvCacheAllocated
    } else {
        EventKind::KvCachePlanned
    };
    facts.event(kind, Phase::KvCacheAlloc, EventFigures::default());
}

/// `GPU KV cache size: 442,160 tokens` and `Maximum concurrency for 8,192 tokens per request:
/// 53.98x` (0.8–0.24, two lines; 0.33 one line). V1 `get_kv_cache_config(s)`
/// (`v1/core/kv_cache_utils.py`) logs them while sizing the cache, before
/// `initialize_from_config` allocates it.
fn kv_tokens(text: &str, facts: &mut LineFacts) {
    if has(text, "KV cache size:") && has(text, "tokens") {
        facts.engine(EngineName::Vllm, Certainty::Strong);
        facts.event(
            EventKind::KvCachePlanned,
            Phase::KvCacheAlloc,
            EventFigures {
                tokens: integer_after(text, "KV cache size:"),
                ..EventFigures::default()
            },
        );
    }
    if has(text, "Maximum concurrency for") {
        facts.engine(EngineName::Vllm, Certainty::Strong);
        let per_request = integer_after(text, "Maximum concurrency for");
        if per_request.is_some() {
            facts.config.max_model_len = per_request;
        }
        facts.event(
            EventKind::KvConcurrency,
            Phase::KvCacheAlloc,
            EventFigures {
                tokens: per_request,
                ratio: number_after(text, "tokens per request:"),
                ..EventFigures::default()
            },
        );
    }
}

fn graph_start(text: &str, facts: &mut LineFacts) {
    if has(text, "Skipping CUDA graph") {
        return;
    }
    // vLLM's own wordings name it: V0's `Capturing the model for CUDA graphs` / `Capturing
    // cudagraphs for decoding`, V1's bar `Capturing CUDA graph shapes` (0.7-0.9
    // `gpu_model_runner.capture_model`) and `Capturing CUDA graphs (decode, FULL)` /
    // `(mixed prefill-decode, PIECEWISE)` (0.10+). A bare `Capturing CUDA graphs` bar is
    // printed by other engines and by people's own scripts alike: the stage, not the engine.
    let generic = has(text, "Capturing CUDA graph")
        && !has(text, "Capturing CUDA graph shapes")
        && !has(text, "Capturing CUDA graphs (");
    if !generic {
        facts.engine(EngineName::Vllm, Certainty::Strong);
    }
    facts.event(
        EventKind::CudaGraphCaptureStart,
        Phase::CudaGraphCapture,
        EventFigures::default(),
    );
}

/// `Graph capturing finished in 13 secs, took 0.53 GiB` (≥0.6.4; ≤0.6.3 without the size).
fn graph_done(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    let bytes = size_after(text, "took", true);
    facts.memory.cuda_graphs = bytes;
    facts.event(
        EventKind::CudaGraphCaptureDone,
        Phase::CudaGraphCapture,
        EventFigures {
            bytes,
            seconds: number_after(text, "finished in"),
            ..EventFigures::default()
        },
    );
}

fn compile(text: &str, facts: &mut LineFacts) {
    let seconds = number_after(text, "takes")
        .or_else(|| number_after(text, "took"))
        .or_else(|| number_after(text, "time:"));
    facts.event(
        EventKind::Compile,
        Phase::CudaGraphCapture,
        EventFigures {
            seconds,
            ..EventFigures::default()
        },
    );
}

fn engine_ready(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    facts.event(
        EventKind::EngineReady,
        Phase::CudaGraphCapture,
        EventFigures {
            seconds: number_after(text, "took"),
            ..EventFigures::default()
        },
    );
}

fn api_starting(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    facts.event(
        EventKind::EngineReady,
        Phase::CudaGraphCapture,
        EventFigures::default(),
    );
}

fn server_ready(_text: &str, facts: &mut LineFacts) {
    facts.event(
        EventKind::ServerReady,
        Phase::Inference,
        EventFigures::default(),
    );
}

fn shutdown(_text: &str, facts: &mut LineFacts) {
    facts.event(EventKind::Shutdown, Phase::Unknown, EventFigures::default());
}

/// V1 0.8–0.11+: the client's `RuntimeError: Engine core initialization failed. See root cause
/// above.` (`v1/engine/core_client.py` `MPClient._wait_for_engine_startup` in 0.8,
/// `v1/engine/utils.py` `wait_for_engine_startup` from 0.9), raised when an engine core process
/// dies before its start-up handshake completes. It names vLLM, and ends the run; which stage
/// the core was in is for its own frames and log lines to say (the client's frames are start-up
/// wrappers, `analyze::phase` rules): after the weights loaded, "start-up" would say less than
/// the log.
fn engine_core_failed(text: &str, facts: &mut LineFacts) {
    shutdown(text, facts);
    facts.engine(EngineName::Vllm, Certainty::Strong);
}

/// V0's `MQLLMEngineClient.dead_error` (0.6–0.10, `vllm/engine/multiprocessing/client.py`):
/// the client answers a request with `MQEngineDeadError("Engine loop is not running. Inspect
/// the stacktrace to find the original error: {self._errored_with!r}")` once the engine
/// process's loop (`MQLLMEngine.run_engine_loop` → `engine_step`) has raised. The loop runs only
/// after start-up (a start-up failure is answered by `RPCStartupResponse`, not by this), and its
/// steps run the requests' batches: the error it carries came while requests were served.
fn engine_loop_dead(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    if has(text, "original error") {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

fn worker_method_failed(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    if has(text, "method load_model") {
        facts.failed_phase_hint = Some(Phase::WeightsLoad);
    } else if has(text, "method determine_num_available_blocks") {
        facts.failed_phase_hint = Some(Phase::Profiling);
    }
}

fn worker_method_frame(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "executing method ").or_else(|| after(text, "processing method "))
    else {
        return;
    };
    let name: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if !name.is_empty() {
        facts.frame = Some((name, WORKER_METHOD.to_string()));
    }
}

/// The file of a frame read from a worker's "Error executing method X" line.
const WORKER_METHOD: &str = "<worker method>";

/// The file of a frame read from the input dump of a failed execution (below).
const FAILED_EXECUTION_DUMP: &str = "<input dump of a failed execution>";

/// V0 0.6.4–0.6.6 `worker/model_runner_base.py` `dump_input_when_exception` wraps
/// `ModelRunner.execute_model` (`worker/model_runner.py`): when it raises, the wrapper logs
/// `Writing input of failed execution to /tmp/err_{func.__name__}_input_{timestamp}.pkl...`,
/// pickles the inputs (`Failed to pickle inputs of failed execution: …` when the device is
/// broken; `Completed writing input of failed execution to ….` when done) and re-raises. The
/// file name names the function that failed: it counts as a traceback frame of it, which the
/// frame rules read (`execute_model`: a serving step, unless the traceback shows the
/// `profile_run` that also calls it, or the worker line names `determine_num_available_blocks`).
fn failed_execution_dump(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "Writing input of failed execution to ")
        .or_else(|| after(text, "Completed writing input of failed execution to "))
    else {
        return;
    };
    let Some(name) = rest
        .split_once("/err_")
        .and_then(|(_, name)| name.split_once("_input_"))
        .map(|(name, _)| name)
        .filter(|name| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    else {
        return;
    };
    facts.engine(EngineName::Vllm, Certainty::Strong);
    facts.frame = Some((name.to_string(), FAILED_EXECUTION_DUMP.to_string()));
}

/// V1's dump of the step that raised (`v1/engine/core.py`
/// `EngineCore.execute_model_with_error_logging` calls `logging_utils/dump_input.py`
/// `dump_engine_exception` when the model's execution raises, 0.9 → 0.11: `Dumping input data for
/// V1 LLM engine (v…) with config: …`, `Dumping scheduler output for model execution: …`,
/// `Dumping scheduler stats: …`; 0.8.5 logs `Dumping input data` alone, then the engine line):
/// the failure came in `execute_model`, serving the scheduled requests.
fn v1_execution_dump(text: &str, facts: &mut LineFacts) {
    let ours = has(text, "dump_input.py")
        || has(text, "Dumping input data for V1 LLM engine")
        || has(text, "Dumping scheduler output for model execution")
        || has(text, "Dumping scheduler stats: SchedulerStats(");
    if !ours {
        return;
    }
    facts.engine(EngineName::Vllm, Certainty::Strong);
    facts.frame = Some((
        "execute_model".to_string(),
        FAILED_EXECUTION_DUMP.to_string(),
    ));
}

fn load_failed(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    facts.failed_phase_hint = Some(Phase::WeightsLoad);
}

/// vLLM's check after its profiling run that the run used memory: V0 `worker/worker.py`
/// `Worker.determine_num_available_blocks` (0.4–0.10: `assert peak_memory > 0, "Error in memory
/// profiling. Initial free memory …, current free memory …. This happens when the GPU memory was
/// not properly cleaned up before initializing the vLLM instance."`), V1 `v1/worker/gpu_worker.py`
/// `Worker.determine_available_memory` (0.8–0.11: `… This happens when other processes sharing
/// the same container release GPU memory while vLLM is profiling during initialization.`).
/// The assertion fails in the profiling pass (as when TRL or MS-Swift start a vLLM engine next to
/// a training job that frees memory meanwhile).
fn profiling_check_failed(text: &str, facts: &mut LineFacts) {
    let figures = after(text, "Error in memory profiling. ")
        .is_some_and(|rest| has(rest, "Initial free memory") || has(rest, "Initial used memory"));
    if figures {
        facts.failed_phase_hint = Some(Phase::Profiling);
    }
}

fn request(text: &str, facts: &mut LineFacts) {
    if has(text, "Processed prompts:") {
        facts.engine(EngineName::Vllm, Certainty::Weak);
    }
    facts.event(
        EventKind::Request,
        Phase::Inference,
        EventFigures::default(),
    );
}

fn stats(_text: &str, facts: &mut LineFacts) {
    facts.event(
        EventKind::ServingStats,
        Phase::Inference,
        EventFigures::default(),
    );
}

fn preempted(text: &str, facts: &mut LineFacts) {
    if has(text, "not enough KV cache space") {
        facts.event(
            EventKind::KvPressure,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

/// `collect_env` output: `vLLM Version: 0.6.1.post2`.
fn collect_env(text: &str, facts: &mut LineFacts) {
    if let Some(version) = word_after(text, "vLLM Version:") {
        facts.engine(EngineName::Vllm, Certainty::Weak);
        facts.engine_version = Some(version.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_line_scan;
    use super::*;

    #[test]
    fn the_profiling_check_names_its_stage() {
        let hint = |line: &str| parse_line_scan(line).failed_phase_hint;
        assert_eq!(
            hint(
                "AssertionError: Error in memory profiling. Initial free memory 41.19 GiB, \
                  current free memory 41.64 GiB. This happens when other processes sharing the \
                  same container release GPU memory while vLLM is profiling during initialization."
            ),
            Some(Phase::Profiling)
        );
        assert_eq!(
            hint("AssertionError: Error in memory profiling. Initial free memory 7340032, current \
                  free memory 8388608. This happens when the GPU memory was not properly cleaned up"),
            Some(Phase::Profiling)
        );
        assert_eq!(
            hint("See also: Error in memory profiling. (a known issue)"),
            None
        );
    }

    #[test]
    fn a_failed_executions_dump_names_the_function_and_the_engine() {
        let facts = parse_line_scan(
            "INFO 03-01 10:00:00 model_runner_base.py:120] Writing input of failed execution to \
             /tmp/err_execute_model_input_20250301-100000.pkl...",
        );
        assert_eq!(facts.engine, Some((EngineName::Vllm, Certainty::Strong)));
        assert_eq!(
            facts.frame,
            Some((
                "execute_model".to_string(),
                FAILED_EXECUTION_DUMP.to_string()
            ))
        );
        let done = parse_line_scan(
            "(VllmWorkerProcess pid=7) INFO 03-01 10:00:00 model_runner_base.py:149] Completed \
             writing input of failed execution to /tmp/err_execute_model_input_20250301-1.pkl.",
        );
        assert_eq!(
            done.frame.map(|(name, _)| name).as_deref(),
            Some("execute_model")
        );
        // The pickling failure names no function; a sentence about the feature names none.
        for line in [
            "WARNING 03-01 10:00:00 model_runner_base.py:143] Failed to pickle inputs of failed \
             execution: CUDA error: an illegal memory access was encountered",
            "Is there a way to stop writing input of failed execution to disk?",
            "Writing input of failed execution to /tmp/err_ä_input_1.pkl",
        ] {
            assert_eq!(parse_line_scan(line).frame, None, "{line}");
        }
    }

    #[test]
    fn v1s_dump_of_a_failed_step_names_execute_model() {
        for line in [
            "(EngineCore_DP0 pid=2647451) ERROR 05-20 10:42:56 [dump_input.py:81] Dumping \
             scheduler stats: SchedulerStats(num_running_reqs=809, num_waiting_reqs=0)",
            "(EngineCore pid=176) ERROR 04-23 21:09:12 [dump_input.py:79] Dumping scheduler \
             output for model execution: SchedulerOutput(scheduled_new_reqs=[])",
            "ERROR 04-01 10:00:00 [dump_input.py:69] Dumping input data for V1 LLM engine \
             (v0.9.1) with config: model='m'",
        ] {
            let facts = parse_line_scan(line);
            assert_eq!(
                facts.engine,
                Some((EngineName::Vllm, Certainty::Strong)),
                "{line}"
            );
            assert_eq!(
                facts.frame.map(|(name, _)| name).as_deref(),
                Some("execute_model"),
                "{line}"
            );
        }
        // Another program's words about dumping input data name no stage.
        assert_eq!(parse_line_scan("Dumping input data to disk").frame, None);
    }

    #[test]
    fn a_core_that_died_starting_names_vllm() {
        let facts = parse_line_scan(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core \
             proc(s): {'EngineCore_DP0': 1}",
        );
        assert_eq!(facts.engine, Some((EngineName::Vllm, Certainty::Strong)));
        assert_eq!(facts.events[0].kind, EventKind::Shutdown);
        assert_eq!(facts.late_phase, None);
    }

    #[test]
    fn only_a_namespace_of_vllms_settings_names_vllm() {
        let engine = |line: &str| parse_line_scan(line).engine.map(|(name, _)| name);
        assert_eq!(
            engine(
                "INFO 01-01 00:00:00 api_server.py:1] args: Namespace(host=None, port=8000, \
                 model='m', tensor_parallel_size=2, gpu_memory_utilization=0.9, swap_space=4)"
            ),
            Some(EngineName::Vllm)
        );
        // Any script's argparse namespace, even one passing settings on to vLLM.
        assert_eq!(
            engine(
                "args: Namespace(config='7b', plugin='gemini', batch_size=16, tp=4, pp=2, \
                 vllm_gpu_memory_utilization=0.5)"
            ),
            None
        );
    }

    #[test]
    fn v1_engine_config() {
        let facts = parse_line_scan("INFO 04-28 10:00:00 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with config: model='Qwen/Qwen2.5-7B', speculative_config=None, dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, quantization=None, enforce_eager=False, kv_cache_dtype=auto");
        assert_eq!(facts.engine, Some((EngineName::Vllm, Certainty::Banner)));
        assert_eq!(facts.engine_version.as_deref(), Some("0.8.5"));
        assert_eq!(facts.generation, Some("v1"));
        assert_eq!(facts.model.name.as_deref(), Some("Qwen/Qwen2.5-7B"));
        assert_eq!(facts.config.max_model_len, Some(32768));
        assert_eq!(facts.config.kv_cache_dtype.as_deref(), Some("auto"));
    }

    #[test]
    fn only_vllms_own_graph_capture_wording_names_vllm() {
        let capture = |line: &str| {
            let facts = parse_line_scan(line);
            let started = facts
                .events
                .iter()
                .any(|event| event.kind == EventKind::CudaGraphCaptureStart);
            (started, facts.engine.map(|(name, _)| name))
        };
        for line in [
            "Capturing CUDA graph shapes:  40%|████      | 27/67 [00:10<00:15,  2.6it/s]",
            "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  12%|█▏ | 8/67 [00:01<00:09]",
            "INFO 01-01 00:00:00 model_runner.py:1 Capturing the model for CUDA graphs. This may lead",
        ] {
            assert_eq!(capture(line), (true, Some(EngineName::Vllm)), "{line}");
        }
        // SGLang, LMDeploy, TensorRT-LLM's PyTorch backend and people's own scripts print this
        // bar too: the stage is shown, the engine is not.
        let (started, engine) =
            capture("Capturing CUDA graphs:  88%|████████▊ | 7/8 [00:00<00:00]");
        assert!(started);
        assert_ne!(engine, Some(EngineName::Vllm));
    }

    #[test]
    fn weights_and_kv() {
        let facts = parse_line_scan("INFO 04-02 21:43:10 model_runner.py:1099] Model loading took 15.5083 GiB and 7.123 seconds");
        let event = &facts.events[0];
        assert_eq!(event.kind, EventKind::WeightsLoaded);
        assert_eq!(event.figures.seconds, Some(7.123));
        assert_eq!(event.figures.bytes, Some(Bytes::from_gib_f64(15.5083)));
        let facts = parse_line_scan(
            "INFO 01-01 00:00:00 [kv_cache_utils.py:634] GPU KV cache size: 442,160 tokens",
        );
        assert_eq!(facts.events[0].figures.tokens, Some(442160));
        let facts = parse_line_scan("INFO 01-01 00:00:00 [kv_cache_utils.py:637] Maximum concurrency for 8,192 tokens per request: 53.98x");
        assert_eq!(facts.config.max_model_len, Some(8192));
        assert_eq!(facts.events[0].figures.ratio, Some(53.98));
        let facts = parse_line_scan("INFO 01-01 00:00:00 worker.py:1] model weights take 14.99GiB; non_torch_memory takes 0.13GiB; PyTorch activation peak memory takes 1.26GiB; the rest of the memory reserved for KV Cache is -0.5GiB.");
        assert_eq!(facts.memory.kv_cache, Some(Bytes(0)));
        assert_eq!(facts.memory.weights, Some(Bytes::from_gib_f64(14.99)));
    }

    #[test]
    fn graph_capture() {
        let facts = parse_line_scan("INFO 07-01 12:00:00 [gpu_model_runner.py:2] Graph capturing finished in 13 secs, took 0.53 GiB");
        assert_eq!(facts.events[0].kind, EventKind::CudaGraphCaptureDone);
        assert_eq!(facts.events[0].figures.seconds, Some(13.0));
        assert_eq!(facts.memory.cuda_graphs, Some(Bytes::from_gib_f64(0.53)));
    }
}
