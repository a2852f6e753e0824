//! The frame rules of local inference: ExLlamaV2 and TabbyAPI, text-generation-webui, MLC-LLM,
//! MLX LM.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Serve, Stage};
use crate::model::explain::Phase::{
    Inference as I, KvCacheAlloc as K, Profiling as P, TrainingStep as T, WeightsLoad as W,
};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
/// llama.cpp's functions in gdb's backtrace (`parse::engine_log` `gdb_frame`; ggml's
/// `ggml_print_backtrace` prints it when an abort such as a CUDA error stops the program), read
/// from llama.cpp's sources of 2024–2025: the common start-up (`common/common.cpp`
/// `common_init_from_params`, before b3800 `llama_init_from_gpt_params`) loads the model, makes
/// the context and runs one warm-up decode; the model's load (`src/llama.cpp`
/// `llama_load_model_from_file` / `llama_model_load_from_file` → `llama_model_load` →
/// `llm_load_tensors`, `src/llama-model.cpp` `llama_model::load_tensors`,
/// `llama_model_loader::load_all_data`); the context (`llama_new_context_with_model`, since
/// b4500 `llama_init_from_model` → `llama_context::llama_context`) reserves its worst-case
/// compute graph (`graph_reserve`), as its `failed to allocate compute buffers` line is read,
/// and allocates the KV cache (`llama_kv_cache_init`, `llama_kv_cache_unified`'s constructor);
/// the server's loop (`examples/server/server.cpp`, `tools/server/server.cpp`
/// `server_context::update_slots`, earlier `llama_server_context::update_slots`) decodes the
/// requests' batches. Only gdb's frames (the path holds its mark, `parse::engine_log`
/// `GDB_FRAME_FILE`): llama-cpp-python's ctypes wrappers carry the same names.
pub(super) const LLAMA_CPP_GDB: &[FrameRule] = &[
    r("llama_kv_cache_init", "<gdb>", K, Stage, "llamacpp"),
    r(
        "llama_kv_cache_unified::llama_kv_cache_unified",
        "<gdb>",
        K,
        Stage,
        "llamacpp",
    ),
    r(
        "llama_context::graph_reserve",
        "<gdb>",
        P,
        Stage,
        "llamacpp",
    ),
    r(
        "llama_context::llama_context",
        "<gdb>",
        P,
        Stage,
        "llamacpp",
    ),
    r("llama_init_from_model", "<gdb>", P, Stage, "llamacpp"),
    r(
        "llama_new_context_with_model",
        "<gdb>",
        P,
        Stage,
        "llamacpp",
    ),
    r(
        "llama_model_loader::load_all_data",
        "<gdb>",
        W,
        Stage,
        "llamacpp",
    ),
    r("llama_model::load_tensors", "<gdb>", W, Stage, "llamacpp"),
    r("llm_load_tensors", "<gdb>", W, Stage, "llamacpp"),
    r("llama_model_load", "<gdb>", W, Stage, "llamacpp"),
    r("llama_model_load_from_file", "<gdb>", W, Stage, "llamacpp"),
    r("llama_load_model_from_file", "<gdb>", W, Stage, "llamacpp"),
    r("common_init_from_params", "<gdb>", P, Stage, "llamacpp"),
    r("llama_init_from_gpt_params", "<gdb>", P, Stage, "llamacpp"),
    r(
        "server_context::update_slots",
        "<gdb>",
        I,
        Serve,
        "llamacpp",
    ),
    r(
        "llama_server_context::update_slots",
        "<gdb>",
        I,
        Serve,
        "llamacpp",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const TABBY_LOAD: &[FrameRule] = &[
    // TabbyAPI 0.0.x `model.py` `ModelContainer.load_gen`: loads the modules (exllamav2's
    // `load_gen`/`load_autosplit_gen`, deeper rules), builds the cache (`ExLlamaV2Cache`), then
    // runs a warm-up forward (`self.model.forward(input_ids, cache=self.cache,
    // preprocess_only=True)`); what no deeper rule reads is that warm-up.
    r("load_gen", "tabbyAPI/model.py", P, Stage, "exllamav2"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_EXLLAMAV2: &[FrameRule] = &[
    // --- ExLlamaV2 0.1–0.2 `generator/dynamic.py` `ExLlamaV2DynamicGenerator.iterate`. ---
    r("iterate", "exllamav2/generator/", I, Serve, "exllamav2"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_MLX_LM: &[FrameRule] = &[
    // --- MLX LM (ml-explore/mlx-examples `llms/mlx_lm`, then ml-explore/mlx-lm 0.1x–0.2x):
    // `utils.py` `load`, `generate.py` `generate_step` / `stream_generate`,
    // `tuner/trainer.py` `train` → `step`. ---
    r("load", "mlx_lm/", W, Stage, "mlx"),
    r("generate_step", "mlx_lm/", I, Serve, "mlx"),
    r("stream_generate", "mlx_lm/", I, Serve, "mlx"),
    r("step", "mlx_lm/tuner/", T, Serve, "mlx"),
    // mlx-vlm (`mlx_vlm/generate.py`) keeps mlx-lm's generation loop (`generate_step`,
    // `stream_generate`); both batch requests in a `BatchGenerator` whose `_next` runs the
    // pending prompts' prefill, then a decode step. LM Studio's MLX engine (lmstudio-ai/mlx-engine
    // `mlx_engine/model_kit/batched_vision/batch_generator.py`, 2026) mirrors it: `_next` →
    // `PromptProcessingBatch.prompt_step` (a prompt's prefill, `mx.eval` of its cache), and
    // `mlx_engine/generate.py` `create_generator` streams a prediction's tokens.
    r("generate_step", "mlx_vlm/", I, Serve, "mlx"),
    r("stream_generate", "mlx_vlm/", I, Serve, "mlx"),
    r("prompt_step", "mlx_engine/", I, Serve, "mlx"),
    r("prompt_step", "mlx_vlm/", I, Serve, "mlx"),
    r("prompt_step", "mlx_lm/", I, Serve, "mlx"),
    r("_next", "mlx_engine/", I, Serve, "mlx"),
    r("_next", "mlx_lm/generate.py", I, Serve, "mlx"),
    r("_next", "mlx_vlm/generate.py", I, Serve, "mlx"),
    r("create_generator", "mlx_engine/", I, Serve, "mlx"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const EXLLAMAV2_TGWEBUI_MLC: &[FrameRule] = &[
    // --- gpt-fast `model.py` `Transformer.setup_caches` (a `KVCache` per layer, its
    // `k_cache`/`v_cache` buffers made with `torch.zeros`), copied by fish-speech's
    // `text2semantic/llama.py` and other TTS and LLM repositories; torchtune's
    // `TransformerDecoder.setup_caches` likewise builds the KV caches before generating. ---
    r("setup_caches", "", K, Stage, "gpt-fast"),
    // --- ExLlamaV2 (model.py, cache.py, generator/) ---
    r("load", "exllamav2/", W, Stage, "exllamav2"),
    r("load_autosplit", "", W, Stage, "exllamav2"),
    r("load_gen", "exllamav2/", W, Stage, "exllamav2"),
    r("__init__", "exllamav2/cache.py", K, Stage, "exllamav2"),
    r("generate_simple", "", I, Serve, "exllamav2"),
    // ExLlamaV3 (`exllamav3/model/model.py` `prefill`, `model_tp.py` `prefill_tp`: a prompt
    // being prefilled, tensor-parallel or not).
    r("prefill", "exllamav3/", I, Serve, "exllamav2"),
    r("prefill_tp", "exllamav3/", I, Serve, "exllamav2"),
    // (`model/model_tp_fn.py` `mp_model_forward`: each tensor-parallel worker's forward.)
    r("mp_model_forward", "exllamav3/", I, Serve, "exllamav2"),
    // --- text-generation-webui (modules/ui_model_menu.py, modules/models.py) ---
    r("load_model_wrapper", "", W, Stage, "text-generation-webui"),
    // --- MLC-LLM (python/mlc_chat/chat_module.py: `_reload` loads the model library and weights) ---
    r("_reload", "mlc_chat/", W, Stage, "mlc_llm"),
    r("_reload", "mlc_llm/", W, Stage, "mlc_llm"),
    // MLC-LLM 0.1's C++ chat module (`cpp/llm_chat.cc`, 2023): `LLMChat::Reload` loads the
    // model library and its parameters (`LoadParams`); `PrefillStep` / `DecodeStep` run the
    // prompt and each new token.
    r("LLMChat::Reload", "", W, Stage, "mlc_llm"),
    r("LLMChat::PrefillStep", "", I, Serve, "mlc_llm"),
    r("LLMChat::DecodeStep", "", I, Serve, "mlc_llm"),
];
