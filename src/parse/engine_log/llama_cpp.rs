//! llama.cpp and ollama log lines. Texts from `ggml-org/llama.cpp` (`src/llama-model-loader.cpp`,
//! `src/llama-model.cpp`, `src/llama-context.cpp`, `src/llama-kv-cache*.cpp`,
//! `tools/server/server.cpp`, `common/common.cpp` `build:` line) across the versions vendored
//! in `ollama/ollama` `llama/llama.cpp/`, and ollama's own `server/routes.go`,
//! `llm/server.go` (`msg="starting llama server"`, `llama runner started in`).

use super::common::{after, has, integer_after, leading_size, size_after, word_after};
use super::{rule, Certainty, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};
use crate::model::failure::EngineName;

pub(super) const RULES: &[Rule] = &[
    rule("loaded meta data with", loader),
    rule("general.name", general),
    rule("general.architecture", general),
    rule("file type   =", file_type),
    rule("file type =", file_type),
    rule("layers to GPU", offloaded),
    rule(" buffer size =", buffer),
    rule("KV self size", kv_size),
    rule("llama_kv_cache: size =", kv_size),
    rule("llama_kv_cache_unified: size =", kv_size),
    rule("n_ctx ", context),
    rule("_new_context_with_model: n_ctx", context_start),
    rule("llama_context: n_ctx", context_start),
    rule("n_batch ", context),
    rule("server is listening on", listening),
    rule("HTTP server listening", listening),
    rule("main: model loaded", model_loaded),
    rule("build: ", build),
    // The examples' banner (`examples/main/main.cpp`, 2023: `LOG_TEE("%s: build = %d (%s)\n",
    // __func__, …)` then `main: seed  = …`), printed before ggml initialises the GPU and
    // before the model loader's first line.
    rule(": build = ", build),
    rule("launch_slot_", slot),
    // A slot evaluating its task's prompt (`tools/server/server.cpp` `update_slots`:
    // `SLT_INF(slot, "prompt processing progress, n_tokens = %d, batch.n_tokens = %d, progress =
    // %f\n", …)`): a request being served.
    rule("prompt processing progress", slot),
    // The server picking a slot for a request that arrived (`tools/server/server.cpp`
    // `get_available_slot`: `SLT_INF(*ret, "selected slot by LCP similarity, sim_best = %.3f (>
    // %.3f thold), f_keep = %.3f\n", …)`, earlier `selected slot by lcs similarity, …`, and
    // `selected slot by LRU, t_last = %" PRId64 "\n"`): a request being served.
    rule("selected slot by ", slot),
    // llama-cli's timings after each answer of its chat loop (`tools/cli/cli.cpp`:
    // `console::log("[ Prompt: %.1f t/s | Generation: %.1f t/s ]\n", …)`): a turn was
    // answered, the chat is being served.
    rule("[ Prompt: ", cli_turn_timings),
    // llava's image encoder finished for a request (`examples/llava/llava.cpp`
    // `encode_image_with_clip`: "%s: image encoded in %8.2f ms by CLIP"), also in ollama's
    // vendored copy: a multimodal request is being evaluated.
    rule("image encoded in", image_encoded),
    // The server's multimodal path evaluating a request's image (`tools/server/utils.hpp`
    // `server_tokens::process_chunk`: `SRV_INF("%s\n", "processing image...")`, printed as
    // `srv  process_chun: processing image...`): a request being served.
    rule("processing image...", image_processing),
    // ollama's runner loading a cache slot for a request's prompt (`runner/llamarunner/cache.go`
    // `LoadCacheSlot`: `slog.Debug("loading cache slot", "id", …, "prompt", …)`).
    rule("msg=\"loading cache slot\"", ollama_cache_slot),
    rule("ggml_cuda_init: found", device_init),
    // ollama's Go runner panics with its goroutine stack:
    // `github.com/ollama/ollama/runner/ollamarunner.(*Server).reserveWorstCaseGraph(0xc…)`.
    rule(").reserveWorstCaseGraph(", ollama_reserve_frame),
    // koboldcpp (`gpttype_adapter.cpp`): `Processing Prompt [BLAS] (3584 / 5525 tokens)`.
    rule("Processing Prompt", kobold_prompt),
    // koboldcpp's token loop (`gpttype_adapter.cpp` `gpttype_generate`): `Generating (12 / 512
    // tokens)`.
    rule("Generating (", kobold_prompt),
    rule("msg=\"starting llama server\"", ollama_start),
    rule("msg=\"Listening on ", ollama_listening),
    rule("llama runner started in", ollama_runner_started),
    rule("msg=\"offload to ", ollama_offload),
    rule("msg=load request=", ollama_load_request),
    rule("| POST ", gin_request),
    rule(": failed to allocate compute buffers", compute_failed),
    // ggml-cuda's `CUDA_CHECK` names the function it failed in (`ggml_cuda_error`: `current
    // device: 0, in function alloc at …/ggml-cuda.cu:424`).
    rule(", in function ", ggml_cuda_function),
    // The scheduler's worst-case graph reserve at the context's creation (`src/llama-context.cpp`
    // `llama_context::sched_reserve`, 2026: `LLAMA_LOG_INFO("%s: reserving ...\n", __func__)`,
    // then the compute buffers' sizes): the compute buffers are being allocated.
    rule("sched_reserve: reserving", graph_reserve_start),
    rule("failed to allocate buffer for kv cache", kv_cache_failed),
    // A batch's decode failed: `llama_decode: failed to decode, ret = -3` (llama-context.cpp
    // `llama_decode`), ollama's runner `panic: failed to decode batch: llama_decode failed
    // with code -3` (`runner/llamarunner/runner.go` `processBatch`), the server's
    // `update_slots: failed to decode the batch` (`tools/server/server.cpp`).
    rule("failed to decode", decode_failed),
    rule("llama_kv_cache_init() failed", kv_cache_failed),
    rule(": failed to allocate compute pp buffers", compute_failed),
    rule("load_tensors: loading model tensors", load_tensors),
    // The loader placing each tensor (`src/llama-model-loader.cpp`: `create_tensor: loading
    // tensor blk.35.attn_v.weight` at debug level, `done_getting_tensors: tensor
    // 'token_embd.weight' (q4_K) (and 0 others) cannot be used with preferred buffer type
    // CUDA_Host, using CPU instead`): the weights being loaded.
    rule("done_getting_tensors:", load_tensors),
    rule("create_tensor: loading tensor", load_tensors),
    rule("llama_model_loader: - ", model_metadata),
    rule("llm_load_print_meta: ", model_metadata),
    rule("print_info: ", model_metadata),
    // Function prefixes only llama.cpp (and the ollama runner built from it) prints: the model
    // loader and context set-up across versions.
    rule("llama_model_load", llama_function),
    rule("llama_load_model_from_file", llama_function),
    rule("llm_load_tensors", llama_function),
    rule("load_tensors:", llama_function),
    rule("llama_init_from_model", llama_function),
    rule("llama_init_from_gpt_params", llama_function),
    rule("common_init_from_params", llama_function),
    // ggml's own lines, which every program on ggml prints (llama.cpp and ollama's runner, but
    // also stable-diffusion.cpp, whisper.cpp): the Metal and Vulkan backends and the dynamic
    // backend loader (`load_backend: loaded CUDA backend from …/libggml-cuda.so`). llama.cpp
    // weakly, as `ggml_cuda_init: found` is: the program's own lines say which.
    rule("ggml_metal_init", ggml_function),
    rule("ggml_metal_graph_compute", ggml_function),
    rule("ggml_vulkan: Device memory allocation", ggml_function),
    rule("load_backend: loaded", ggml_function),
    // ollama's own logfmt lines (`time=… level=INFO source=server.go:592 msg="…"`) and its
    // runner binary (`…/runners/cuda_v12/ollama_llama_server`).
    rule("source=server.go", ollama_line),
    // … from the files of its start-up (0.1.x `source=dyn_ext_server.go:90 msg="Loading Dynamic
    // llm server: …"`, the GPU discovery's `source=gpu.go:…`): Go's `slog` text format with the
    // source file, as ollama's server prints every line (session 45; not its busy request and
    // scheduler lines).
    rule("source=dyn_ext_server.go", ollama_slog),
    rule("source=gpu.go", ollama_slog),
    // (… and the layer fitting of a model's load, `source=memory.go:…`.)
    rule("source=memory.go", ollama_slog),
    rule("ollama_llama_server", ollama_line),
    // ollama's client errors: the runner it started died (`llm/server.go`: "llama runner
    // process has terminated: %v"), or the CLI lost its server on the default address
    // (`envconfig` OLLAMA_HOST `127.0.0.1:11434`: `Error: Post "http://127.0.0.1:11434/api/chat":
    // EOF`); systemd's journal names the unit's process `ollama[PID]:`.
    rule("llama runner process has terminated", ollama_line),
    rule("/api/chat\":", ollama_api),
    rule("/api/generate\":", ollama_api),
    rule("ollama[", ollama_journal),
    // llama.cpp's server loop (`tools/server/server.cpp` `update_slots`, older
    // `examples/server/server.cpp`), also inside ollama's runner before 0.4.
    rule("update_slots", server_loop),
    // The server binary's name (`tools/server`, built as `llama-server` since b3000), as
    // supervisors and users print it (`llama-server exited with code 139`).
    rule("llama-server", server_loop),
];

/// `Error: Post "http://127.0.0.1:11434/api/chat": EOF`: the CLI's request to its server on
/// ollama's default port. (The marker holds no digit: the scan's shortcut for lines that
/// differ only in digits, such as client ports, must not see one.)
fn ollama_api(text: &str, facts: &mut LineFacts) {
    if has(text, ":11434/api/") {
        ollama(facts);
    }
}

/// `Jun 18 22:16:41 host ollama[116408]: …`: the journal's tag of the ollama service.
fn ollama_journal(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "ollama[") else {
        return;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && rest[digits..].starts_with("]:") {
        ollama(facts);
    }
}

/// `update_slots : failed to …` (2023–24) / `srv  update_slots: …`: the server's slot loop;
/// `llama-server`: its binary.
fn server_loop(text: &str, facts: &mut LineFacts) {
    if has(text, "update_slots :") || has(text, "update_slots:") || has(text, "llama-server") {
        facts.engine(EngineName::Llamacpp, Certainty::Weak);
    }
    // The slot loop's line of a slot that holds a task (`tools/server/server.cpp`: `#define
    // SLT_INF(slot, fmt, ...) LOG_INF("slot %12.*s: id %2d | task %d | " fmt, …)`, as `slot
    // update_slots: id  2 | task 10391 | prompt …`): a request being served. (`task -1` is a
    // slot without one.)
    if has(text, "update_slots:") {
        slot_task(text, facts);
    }
}

/// A llama.cpp function's line: llama.cpp, unless the line shows it runs inside ollama (a
/// model under `~/.ollama/models`, a backend under `lib/ollama/`).
fn llama_function(text: &str, facts: &mut LineFacts) {
    if has(text, "/.ollama/")
        || has(text, "/ollama/")
        || has(text, "\\ollama\\")
        || has(text, ".ollama\\")
    {
        facts.engine(EngineName::Ollama, Certainty::Strong);
    } else {
        llama(facts);
    }
}

/// A line of ggml, the library (see [`RULES`]): ollama's by its path, else llama.cpp weakly;
/// nothing when another program's logger relays it (stable-diffusion.cpp's
/// `[ERROR] ggml_extend.hpp:70 - …`).
fn ggml_function(text: &str, facts: &mut LineFacts) {
    if has(text, "/.ollama/")
        || has(text, "/ollama/")
        || has(text, "\\ollama\\")
        || has(text, ".ollama\\")
    {
        facts.engine(EngineName::Ollama, Certainty::Strong);
    } else if !super::engines::relayed_ggml_line(text) {
        facts.engine(EngineName::Llamacpp, Certainty::Weak);
    }
}

fn ollama_line(_text: &str, facts: &mut LineFacts) {
    ollama(facts);
}

/// `time=2024-03-07T10:19:15.234+03:00 level=INFO source=dyn_ext_server.go:90 msg="…"`: a Go
/// `slog` text line with its source file, as ollama's server prints every line.
fn ollama_slog(text: &str, facts: &mut LineFacts) {
    let go_source = after(text, " source=").is_some_and(|rest| {
        let file = rest.split(' ').next().unwrap_or_default();
        file.split_once(".go:")
            .is_some_and(|(_, line)| !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()))
    });
    if go_source && has(text, "level=") && has(text, " msg=") {
        ollama(facts);
    }
}

fn llama(facts: &mut LineFacts) {
    facts.engine(EngineName::Llamacpp, Certainty::Strong);
}

/// `llama_model_loader: loaded meta data with 30 key-value pairs and 291 tensors from /models/x.gguf (version GGUF V3 (latest))`.
fn loader(text: &str, facts: &mut LineFacts) {
    llama(facts);
    if let Some(path) = after(text, " tensors from ") {
        let path = path.split(" (version").next().unwrap_or(path).trim();
        if !path.is_empty() {
            facts.model.name = Some(path.to_string());
        }
    }
    facts.event(
        EventKind::WeightsLoadStart,
        Phase::WeightsLoad,
        EventFigures::default(),
    );
}

/// `llama_model_loader: - kv   2:  general.name  str = Meta Llama 3.1 8B Instruct`.
fn general(text: &str, facts: &mut LineFacts) {
    let Some(value) = after(text, "str = ").map(str::trim) else {
        return;
    };
    if value.is_empty() {
        return;
    }
    llama(facts);
    if has(text, "general.architecture") {
        facts.model.architecture = Some(value.to_string());
    } else if has(text, "general.name") && facts.model.name.is_none() {
        facts.model.name = Some(value.to_string());
    }
}

/// `print_info: file type   = Q4_K - Medium`.
fn file_type(text: &str, facts: &mut LineFacts) {
    if let Some(value) = after(text, "=").map(str::trim) {
        if !value.is_empty() && !has(text, "general.file_type") {
            facts.model.dtype = Some(value.to_string());
        }
    }
}

/// `load_tensors: offloaded 33/33 layers to GPU`.
fn offloaded(text: &str, facts: &mut LineFacts) {
    if let Some(layers) = word_after(text, "offloaded") {
        llama(facts);
        facts.config.gpu_layers = Some(layers.to_string());
    }
}

fn is_device_buffer(name: &str) -> bool {
    !name.starts_with("CPU") && !name.is_empty() && !name.contains("Host")
}

/// `load_tensors:        CUDA0 model buffer size =  4403.49 MiB`, `llama_kv_cache_init:  CUDA0 KV buffer size = …`,
/// `llama_context:  CUDA0 compute buffer size = …` (older: `llm_load_tensors: CUDA0 buffer size = …`).
/// A model buffer's line is printed once the buffers are allocated and before their data is
/// read into them (`llama_model::load_tensors` in `src/llama-model.cpp`, 2025, and
/// `llm_load_tensors` in `llama.cpp`, 2024: the sizes, then `load_all_data`): the weights are
/// still being loaded after it, until the context's creation starts.
fn buffer(text: &str, facts: &mut LineFacts) {
    let Some(colon) = text.find(": ") else {
        return;
    };
    let rest = &text[colon + 2..];
    let name = rest.split_whitespace().next().unwrap_or("");
    let Some(bytes) = size_after(rest, "buffer size =", false) else {
        return;
    };
    llama(facts);
    if !is_device_buffer(name) {
        return;
    }
    let figures = EventFigures {
        bytes: Some(bytes),
        ..EventFigures::default()
    };
    if has(rest, "KV buffer") {
        facts.memory.kv_cache = Some(bytes);
        facts.event(EventKind::KvCacheAllocated, Phase::KvCacheAlloc, figures);
    } else if has(rest, "compute buffer") {
        facts.memory.compute_buffers = Some(bytes);
        facts.event(EventKind::ProfilingDone, Phase::Profiling, figures);
    } else if has(rest, "output buffer") || has(rest, "RS buffer") || has(rest, "state buffer") {
        // small, not a milestone: the output buffer, and the per-sequence state a context's
        // memory module allocates with its KV cache (`RS buffer` of a recurrent model's cache,
        // `src/llama-memory-recurrent.cpp`; a compressor's `… state buffer size =`, as
        // `llama_dsv4_comp_state: CUDA0 DSV4 lid state buffer size = 0.33 MiB`), none of
        // them the model's weights
    } else {
        facts.memory.weights = Some(bytes);
        facts.event(EventKind::WeightsLoadProgress, Phase::WeightsLoad, figures);
    }
}

/// `llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB, V (f16):  512.00 MiB`
/// or older `KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, …`.
fn kv_size(text: &str, facts: &mut LineFacts) {
    llama(facts);
    let bytes = size_after(text, "size =", false).or_else(|| size_after(text, "size  =", false));
    if let Some(kind) = after(text, "K (") {
        let kind = kind.split(')').next().unwrap_or("");
        if !kind.is_empty() {
            facts.config.kv_cache_dtype = Some(kind.to_string());
        }
    }
    let tokens = after(text, "(").and_then(|rest| {
        has(rest, "cells")
            .then(|| super::common::leading_number(rest))
            .flatten()
    });
    facts.memory.kv_cache = bytes;
    facts.event(
        EventKind::KvCacheAllocated,
        Phase::KvCacheAlloc,
        EventFigures {
            bytes,
            tokens: tokens.map(|t| t as u64),
            ..EventFigures::default()
        },
    );
}

/// The context's creation prints its settings first and then allocates, the KV cache before
/// the compute buffers (`src/llama.cpp` `llama_new_context_with_model`, 2023-2024: `n_ctx`,
/// `n_batch`, `freq_base` then `llama_kv_cache_init`; `src/llama-context.cpp`
/// `llama_context::llama_context`, 2025: `n_ctx` … then the memory module and
/// `graph_reserve`): a context's `n_ctx` line (`llama_new_context_with_model: n_ctx = 16384`,
/// or cut after its key) starts the KV cache's allocation, which its `KV self size` /
/// `llama_kv_cache…: size =` line ends.
fn context_start(_text: &str, facts: &mut LineFacts) {
    llama(facts);
    facts.event(
        EventKind::KvCachePlanned,
        Phase::KvCacheAlloc,
        EventFigures::default(),
    );
}

/// `llama_context: n_ctx         = 4096` / `llama_new_context_with_model: n_batch    = 2048`.
fn context(text: &str, facts: &mut LineFacts) {
    for (key, is_ctx) in [("n_ctx ", true), ("n_batch ", false)] {
        let Some(rest) = after(text, key) else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(value) = rest.strip_prefix('=') else {
            continue;
        };
        let Some(number) = super::common::leading_number(value) else {
            continue;
        };
        if is_ctx {
            facts.config.max_model_len = Some(number as u64);
        } else {
            facts.config.batch_size = Some(number as u64);
        }
    }
}

fn listening(_text: &str, facts: &mut LineFacts) {
    llama(facts);
    facts.event(
        EventKind::ServerReady,
        Phase::Inference,
        EventFigures::default(),
    );
}

fn model_loaded(_text: &str, facts: &mut LineFacts) {
    llama(facts);
    facts.event(
        EventKind::EngineReady,
        Phase::Profiling,
        EventFigures::default(),
    );
}

/// `build: 4369 (2e2f8f09) with cc (GCC) 13.2.0 for x86_64-linux-gnu`.
fn build(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "build: ").or_else(|| after(text, ": build = ")) else {
        return;
    };
    let mut words = rest.split_whitespace();
    let (Some(number), Some(commit)) = (words.next(), words.next()) else {
        return;
    };
    if number.chars().all(|c| c.is_ascii_digit()) && commit.starts_with('(') {
        facts.engine(EngineName::Llamacpp, Certainty::Banner);
        facts.engine_version = Some(format!("b{number} {commit}"));
        facts.event(
            EventKind::EngineStart,
            Phase::Startup,
            EventFigures::default(),
        );
    }
}

fn slot(_text: &str, facts: &mut LineFacts) {
    llama(facts);
    facts.event(
        EventKind::Request,
        Phase::Inference,
        EventFigures::default(),
    );
}

/// `slot update_slots: id  2 | task 10391 | …`: a slot's line with its task's number.
fn slot_task(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "| task ") else {
        return;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    // (After a timestamp or a level tag: `0.11.118 I slot update_slots: id …`.)
    let slot_line = match (text.find("slot "), text.find(": id "), text.find("| task ")) {
        (Some(slot), Some(id), Some(task)) => slot < id && id < task,
        _ => false,
    };
    if digits > 0 && slot_line {
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

/// `[ Prompt: 81.3 t/s | Generation: 27.3 t/s ]`: llama-cli's timings of an answered turn.
fn cli_turn_timings(text: &str, facts: &mut LineFacts) {
    if !(has(text, " t/s | Generation: ") && has(text, " t/s ]")) {
        return;
    }
    llama_cpp_answered(facts);
}

/// A line only llama.cpp prints while it serves a request (weakly llama.cpp: its tools and
/// forks print it too).
fn llama_cpp_answered(facts: &mut LineFacts) {
    facts.engine(EngineName::Llamacpp, Certainty::Weak);
    facts.event(
        EventKind::Request,
        Phase::Inference,
        EventFigures::default(),
    );
}

fn image_encoded(text: &str, facts: &mut LineFacts) {
    if !has(text, "by CLIP") {
        return;
    }
    llama_cpp_answered(facts);
}

fn image_processing(text: &str, facts: &mut LineFacts) {
    if has(text, "process_chun") {
        slot(text, facts);
    }
}

fn ollama_cache_slot(_text: &str, facts: &mut LineFacts) {
    ollama(facts);
    facts.event(
        EventKind::Request,
        Phase::Inference,
        EventFigures::default(),
    );
}

fn device_init(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Llamacpp, Certainty::Weak);
    facts.event(
        EventKind::DeviceInit,
        Phase::Startup,
        EventFigures::default(),
    );
}

fn ollama(facts: &mut LineFacts) {
    facts.engine(EngineName::Ollama, Certainty::Banner);
}

/// `msg="starting llama server" cmd="/usr/lib/ollama/runners/cuda_v12/ollama_llama_server --model /root/.ollama/models/blobs/sha256-… --ctx-size 8192 --batch-size 512 --n-gpu-layers 33 …"`.
fn ollama_start(text: &str, facts: &mut LineFacts) {
    ollama(facts);
    let flag = |name: &str| word_after(text, name).map(|v| v.trim_matches('"').to_string());
    if let Some(model) = flag("--model ") {
        facts.model.name = Some(model);
    }
    facts.config.max_model_len = flag("--ctx-size ").and_then(|v| v.parse().ok());
    facts.config.batch_size = flag("--batch-size ").and_then(|v| v.parse().ok());
    if let Some(layers) = flag("--n-gpu-layers ") {
        facts.config.gpu_layers = Some(layers);
    }
    if let Some(parallel) = flag("--parallel ") {
        facts.config.max_num_seqs = parallel.parse().ok();
    }
    facts.event(
        EventKind::EngineStart,
        Phase::Startup,
        EventFigures::default(),
    );
}

/// `msg="Listening on 127.0.0.1:11434 (version 0.5.7)"`.
fn ollama_listening(text: &str, facts: &mut LineFacts) {
    ollama(facts);
    if let Some(version) = after(text, "(version ") {
        let version = version.split(')').next().unwrap_or("");
        if !version.is_empty() {
            facts.engine_version = Some(version.to_string());
        }
    }
    facts.event(
        EventKind::ServerReady,
        Phase::Inference,
        EventFigures::default(),
    );
}

fn ollama_runner_started(text: &str, facts: &mut LineFacts) {
    ollama(facts);
    let seconds = after(text, "started in").and_then(super::common::leading_number);
    facts.event(
        EventKind::EngineReady,
        Phase::Profiling,
        EventFigures {
            seconds,
            ..EventFigures::default()
        },
    );
}

/// `msg="offload to cuda" layers.requested=-1 layers.model=33 layers.offload=33 … memory.required.full="5.0 GiB" …`.
fn ollama_offload(text: &str, facts: &mut LineFacts) {
    ollama(facts);
    let model = integer_after(text, "layers.model=");
    let offload = integer_after(text, "layers.offload=");
    if let (Some(model), Some(offload)) = (model, offload) {
        facts.config.gpu_layers = Some(format!("{offload}/{model}"));
    }
    if let Some(weights) =
        after(text, "memory.weights.total=\"").and_then(|v| leading_size(v, true))
    {
        facts.memory.weights = Some(weights);
    }
    if let Some(kv) = after(text, "memory.required.kv=\"").and_then(|v| leading_size(v, true)) {
        facts.memory.kv_cache = Some(kv);
    }
    if let Some(available) = after(text, "memory.available=\"[").and_then(|v| leading_size(v, true))
    {
        facts.memory.free_at_start = Some(available);
    }
}

/// ollama's runner placing the model (`runner/ollamarunner/runner.go` `load`, 0.11+: `msg="load
/// request" request="{Operation:fit …}"`, then `Operation:alloc` to allocate the weights' and the
/// cache's buffers and `Operation:commit` to read the weights into them): the model is being
/// loaded.
fn ollama_load_request(text: &str, facts: &mut LineFacts) {
    if ["{Operation:fit", "{Operation:alloc", "{Operation:commit"]
        .iter()
        .any(|operation| has(text, operation))
    {
        ollama(facts);
        facts.event(
            EventKind::WeightsLoadStart,
            Phase::WeightsLoad,
            EventFigures::default(),
        );
    }
}

/// ollama's GIN access log: `[GIN] 2024/05/01 - 12:00:00 | 200 | 1.2s | 127.0.0.1 | POST "/api/chat"`.
fn gin_request(text: &str, facts: &mut LineFacts) {
    if has(text, "[GIN]") && (has(text, "/api/") || has(text, "/v1/")) {
        ollama(facts);
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

/// `graph_reserve: failed to allocate compute buffers` (the function before the colon says
/// when): the worst-case graph reserve at context creation (`graph_reserve`, `sched_reserve`,
/// `llama_init_from_model`, `llama_new_context_with_model`: llama-context.cpp) is profiling;
/// the KV-cache update run from `llama_decode` while serving (`llama_kv_cache_update_impl`,
/// `kv_self_update`: llama-context.cpp / llama.cpp) is inference.
fn compute_failed(text: &str, facts: &mut LineFacts) {
    llama(facts);
    let Some(colon) = text.find(": failed to allocate compute") else {
        return;
    };
    let function = text[..colon].rsplit([' ', '|', ']']).next().unwrap_or("");
    let phase = match function {
        "graph_reserve"
        | "sched_reserve"
        | "llama_init_from_model"
        | "llama_new_context_with_model"
        | "llama_context" => Phase::Profiling,
        "llama_kv_cache_update_impl"
        | "llama_kv_cache_update"
        | "kv_self_update"
        | "llama_decode_impl"
        | "decode" => Phase::Inference,
        _ => return,
    };
    facts.failed_phase_hint = Some(phase);
}

/// The function ggml-cuda's error names (`ggml/src/ggml-cuda/ggml-cuda.cu` `ggml_cuda_error`:
/// `  current device: %d, in function %s at %s:%d`) when it is the device pool's allocation of
/// an op's temporaries (`ggml_cuda_pool_leg::alloc` with its `look_ahead_size`,
/// `ggml_cuda_pool_vmm::alloc` / older `ggml_cuda_pool_malloc_vmm` reserving address space):
/// a batch being evaluated (session 49). Not the buffers a model or a context allocates at load
/// (`ggml_backend_cuda_buffer_type_alloc_buffer`); not the op dispatch
/// (`ggml_cuda_compute_forward`), where a missing kernel fails as often as memory; and
/// `ggml_cuda_graph_evaluate_and_capture`'s CUDA graph is its own stage.
fn ggml_cuda_function(text: &str, facts: &mut LineFacts) {
    let Some(rest) = text.split(", in function ").nth(1) else {
        return;
    };
    let Some((function, location)) = rest.split_once(" at ") else {
        return;
    };
    if !location.contains("ggml-cuda") {
        return;
    }
    facts.failed_phase_hint = Some(match function {
        "ggml_cuda_graph_evaluate_and_capture" => Phase::CudaGraphCapture,
        "alloc" | "ggml_cuda_pool_malloc" | "ggml_cuda_pool_malloc_vmm" => Phase::Inference,
        _ => return,
    });
}

/// `sched_reserve: reserving ...`: the context's graph reserve started (see `RULES`).
fn graph_reserve_start(_text: &str, facts: &mut LineFacts) {
    llama(facts);
    facts.event(
        EventKind::ProfilingStart,
        Phase::Profiling,
        EventFigures::default(),
    );
}

/// `llama_decode: failed to decode, ret = -3` and the callers' words for it: a batch of a
/// prompt or of generated tokens was being evaluated.
fn decode_failed(text: &str, facts: &mut LineFacts) {
    if text.contains("llama_decode")
        || text.contains("failed to decode batch")
        || text.contains("failed to decode the batch")
    {
        llama(facts);
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// The KV cache's allocation failed, in llama.cpp's words: `llama_kv_cache_init: failed to
/// allocate buffer for kv cache` and `llama_new_context_with_model: llama_kv_cache_init() failed
/// for self-attention cache` (`src/llama.cpp` 2024, `llama_kv_cache_init` /
/// `llama_new_context_with_model`), `failed to allocate buffer for kv cache` thrown by the
/// unified cache's constructor since 2025 (`src/llama-kv-cache*.cpp`). The buffer that failed
/// just before (`ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size
/// …`, which names no purpose) was the KV cache's, on whichever device.
fn kv_cache_failed(_text: &str, facts: &mut LineFacts) {
    llama(facts);
    facts.failed_phase_hint = Some(Phase::KvCacheAlloc);
}

/// The model loader reading the file before its tensors are placed (`src/llama.cpp`
/// `llama_model_load`, 2023–2024: the `llama_model_loader` constructor prints each metadata key
/// (`llama_model_loader: - kv  24: tokenizer.ggml.merges …`) and the tensor types (`- type
/// f32:   66 tensors`), then `llm_load_print_meta` the hyper-parameters; 2025+
/// `src/llama-model.cpp` `llama_model::print_info` prints them as `print_info: n_layer = 32`):
/// the model is being loaded. A loader prints a hundred such lines: each is progress of the
/// load (one merged timeline row), not a new start.
/// The prefixes of the model loader's metadata lines (see [`model_metadata`]).
pub const LOADER_METADATA: [&str; 3] = [
    "llama_model_loader: - ",
    "llm_load_print_meta: ",
    "print_info: ",
];

fn model_metadata(text: &str, facts: &mut LineFacts) {
    let line = text.trim_start();
    let prefix = LOADER_METADATA
        .iter()
        .find_map(|prefix| line.find(prefix).map(|at| &line[at + prefix.len()..]));
    // `name = value` (or the loader's `kv N: key type = value`, `type f32: N tensors`).
    let shaped = prefix.is_some_and(|rest| rest.contains(" = ") || rest.starts_with("type "));
    if shaped {
        llama(facts);
        facts.event(
            EventKind::WeightsLoadProgress,
            Phase::WeightsLoad,
            EventFigures::default(),
        );
    }
}

/// `load_tensors: loading model tensors, this can take a while... (mmap = true)`
/// (llama-model.cpp `llama_model::load_tensors`): the weights are being placed.
fn load_tensors(_text: &str, facts: &mut LineFacts) {
    llama(facts);
    facts.event(
        EventKind::WeightsLoadStart,
        Phase::WeightsLoad,
        EventFigures::default(),
    );
}

/// A frame of the panicking goroutine in ollama's runner (`runner/ollamarunner/runner.go`
/// `reserveWorstCaseGraph`: builds and reserves the worst-case compute graph at load).
fn ollama_reserve_frame(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Ollama, Certainty::Strong);
    facts.failed_phase_hint = Some(Phase::Profiling);
}

/// koboldcpp's prompt-processing progress: a generate request is being served.
fn kobold_prompt(text: &str, facts: &mut LineFacts) {
    if text.contains(" tokens)") {
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_line_scan;
    use super::*;
    use crate::model::Bytes;

    #[test]
    fn bare_llama_functions_and_ollama_lines() {
        let engine = |line: &str| parse_line_scan(line).engine.map(|e| e.0);
        for line in [
            "ggml_metal_graph_compute: command buffer 0 failed with status 5",
            "ggml_vulkan: Device memory allocation of size 1073741824 failed.",
            "llama_model_load: error loading model: unable to allocate ROCm0 buffer",
            "common_init_from_params: failed to create context with model 'x.gguf'",
        ] {
            assert_eq!(engine(line), Some(EngineName::Llamacpp), "{line}");
        }
        for line in [
            "llama_init_from_gpt_params: error: failed to create context with model '/home/u/.ollama/models/blobs/sha256-1'",
            "load_backend: loaded ROCm backend from /usr/lib/ollama/libggml-hip.so",
            "time=2025-02-15T22:31:07.028-05:00 level=INFO source=server.go:592 msg=\"waiting for server to become available\"",
        ] {
            assert_eq!(engine(line), Some(EngineName::Ollama), "{line}");
        }
    }

    #[test]
    fn buffers() {
        let facts = parse_line_scan("load_tensors:        CUDA0 model buffer size =  4403.49 MiB");
        assert_eq!(facts.events[0].kind, EventKind::WeightsLoadProgress);
        assert_eq!(
            facts.memory.weights,
            Some(Bytes((4403.49f64 * 1048576.0).round() as u64))
        );
        let facts = parse_line_scan("load_tensors:   CPU_Mapped model buffer size =   281.81 MiB");
        assert!(facts.events.is_empty());
        let facts = parse_line_scan("llama_context:      CUDA0 compute buffer size =   560.00 MiB");
        assert_eq!(facts.events[0].phase, Phase::Profiling);
        let facts = parse_line_scan("llama_kv_cache:      CUDA0 KV buffer size =  1024.00 MiB");
        assert_eq!(facts.events[0].phase, Phase::KvCacheAlloc);
        let facts = parse_line_scan("llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB, V (f16):  512.00 MiB");
        assert_eq!(facts.events[0].figures.tokens, Some(8192));
        assert_eq!(facts.config.kv_cache_dtype.as_deref(), Some("f16"));
        // A context memory's state buffers are no weights.
        let facts = parse_line_scan(
            "llama_dsv4_comp_state:      CUDA0 DSV4 lid state buffer size =     0.33 MiB",
        );
        assert!(facts.events.is_empty());
        assert_eq!(facts.memory.weights, None);
        let facts = parse_line_scan("0.11.118.576 I sched_reserve: reserving ...");
        assert_eq!(facts.events[0].kind, EventKind::ProfilingStart);
        let facts = parse_line_scan("llama_context: n_ctx         = 4096");
        assert_eq!(facts.config.max_model_len, Some(4096));
        let facts =
            parse_line_scan("build: 4369 (2e2f8f09) with cc (GCC) 13.2.0 for x86_64-linux-gnu");
        assert_eq!(facts.engine_version.as_deref(), Some("b4369 (2e2f8f09)"));
    }

    #[test]
    fn ollama_goroutine_and_kobold_prompt() {
        use crate::model::explain::{EventKind, Phase};
        let facts = parse_line_scan(
            "github.com/ollama/ollama/runner/ollamarunner.(*Server).reserveWorstCaseGraph(0xc00054e000)",
        );
        assert_eq!(facts.failed_phase_hint, Some(Phase::Profiling));
        let facts = parse_line_scan("Processing Prompt [BLAS] (3584 / 5525 tokens)");
        assert!(facts.events.iter().any(|e| e.kind == EventKind::Request));
    }

    #[test]
    fn kv_cache_allocation_failure_names_its_stage() {
        for line in [
            "llama_kv_cache_init: failed to allocate buffer for kv cache",
            "llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache",
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
        ] {
            assert_eq!(
                parse_line_scan(line).failed_phase_hint,
                Some(Phase::KvCacheAlloc),
                "{line}"
            );
        }
        assert_eq!(
            parse_line_scan("llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB")
                .failed_phase_hint,
            None
        );
    }
}
