//! Phase markers of engines without a module of their own: TensorRT-LLM's runtime lines
//! (`cpp/tensorrt_llm/batch_manager/trtGptModelInflightBatching.cpp`,
//! `cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp`, as quoted in TensorRT-LLM's
//! `docs/source/reference/memory.md`), diffusers' pipeline loading bar
//! (`src/diffusers/pipelines/pipeline_utils.py` `DiffusionPipeline.from_pretrained`) and
//! ComfyUI's model loading (`comfy/model_management.py` `load_models_gpu`), the web UI's
//! loading lines, failed jobs, API errors and queue. They add timeline events or say which stage
//! a failure is in; which engine a text belongs to is decided elsewhere.

use super::{rule, Certainty, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};
use crate::model::failure::EngineName;

pub(super) const RULES: &[Rule] = &[
    // TensorRT-LLM: `[TensorRT-LLM][INFO] Loaded engine size: 6695 MiB`.
    rule("Loaded engine size:", trtllm_engine_loaded),
    // A TensorRT engine's deserialization failing (session 40): the serialized engine (its
    // weights) was being loaded onto the device.
    rule("eserializ", tensorrt_deserialization_failed),
    // `ollama create`'s progress status while it converts a safetensors model (session 40).
    // Isaac Sim's PhysX tensor API failing to build the simulation view (session 40, f4).
    rule(
        "Failed to create simulation view backend",
        physx_view_failed,
    ),
    // ggml's scheduler re-reserving a graph it is about to compute (session 40, f4).
    rule("failed to allocate graph, reserving", ggml_graph_rereserved),
    rule("converting model", ollama_converting),
    rule("converting adapter", ollama_converting),
    // TensorRT-LLM's checkpoint converters (`examples/*/convert_checkpoint.py`
    // `convert_and_save_rank`, 0.9+): `Total time of reading and converting: 52.127 s` after
    // the Hugging Face weights were read and converted, then the converted checkpoint is saved.
    rule("Total time of reading and converting", trtllm_converted),
    // `[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, available: 70.48 GiB`.
    rule(
        "Memory usage when calculating max tokens in paged kv cache",
        trtllm_kv_sizing,
    ),
    // `[TensorRT-LLM][INFO] [MemUsageChange] Allocated 63.44 GiB for max tokens in paged KV cache (259840).`
    rule("for max tokens in paged KV cache", trtllm_kv_allocated),
    // diffusers: `Loading pipeline components...:  43%|████▎     | 3/7 [00:01<00:01,  2.31it/s]`.
    rule("Loading pipeline components", pipeline_loading),
    // CompVis latent diffusion's model factory, as ControlNet's `cldm/model.py` `create_model`
    // prints it (`print(f'Loaded model config from [{config_path}]')`), then builds the model
    // from the config and reads its checkpoint: the load has begun.
    rule("Loaded model config from [", ldm_create_model),
    // transformers' `from_pretrained` fetching a sharded checkpoint (`utils/hub.py`
    // `get_checkpoint_shard_files`: `tqdm(shard_filenames, desc="Downloading shards")`):
    // `Downloading shards: 100%|████| 2/2 [01:57<00:00, 58.91s/it]`; the shards are loaded next.
    rule("Downloading shards:", shards_downloaded),
    // === Session 37 (p2): one part of a model's load done; handlers at the end of this file. ===
    // torch's `Module.load_state_dict` result printed by the app (`torch/nn/modules/module.py`
    // `_IncompatibleKeys.__repr__`: `<All keys matched successfully>`): a module got its
    // weights. huggingface_hub's `snapshot_download` bar (`_snapshot_download.py`:
    // `desc=f"Fetching {len(filtered_repo_files)} files"`) at 100 %: a folder's files are on
    // disk for its `from_pretrained` to read. Neither opens a stage (an app goes on to other
    // work after them without a line oomdoc reads); a kill right after one is the load's.
    rule("<All keys matched successfully>", load_part),
    rule("Fetching ", load_part),
    // ComfyUI: `Requested to load SDXL`, `loaded completely 9.5 4897.05 True`, `loaded partially …`.
    rule("Requested to load ", comfy_loading),
    // ComfyUI / Fooocus creating a diffusion model before its weights are read (session 40).
    rule("model weight dtype ", comfy_model_created),
    rule("model_type ", comfy_model_created),
    rule("adm ", comfy_model_created),
    rule("loaded completely", comfy_loaded),
    rule("loaded partially", comfy_loaded),
    // ComfyUI's dynamic VRAM loader (2026, `comfy-aimdo`): `Model MiniMaxH3 prepared for dynamic
    // VRAM loading. 19995MB Staged. 208 patches attached.` in place of `loaded completely`.
    rule("prepared for dynamic VRAM loading", comfy_loaded),
    // ComfyUI's `comfy/ops.py` `pick_operations` building a model with scaled fp8 weights.
    rule("Using scaled fp8: ", comfy_model_created),
    // === Triton Inference Server's model loading (issue 13, second blind batch); handlers at
    // the end of this file. ===
    rule("loading: ", triton_loading),
    rule("successfully loaded '", triton_loaded),
    rule("failed to load '", triton_loading),
    // Triton's gRPC handler taking a request (session 47).
    rule("for ModelInferHandler", triton_infer_request),
    // The backend API's model and instance set-up (every backend, e.g.
    // triton-inference-server/tensorflow_backend `src/tensorflow.cc`, onnxruntime_backend,
    // python_backend: `TRITONBACKEND_ModelInitialize: bert (version 1)`,
    // `TRITONBACKEND_ModelInstanceInitialize: bert_0 (GPU device 0)`): the model being loaded.
    rule("TRITONBACKEND_ModelInitialize: ", triton_backend_loading),
    rule(
        "TRITONBACKEND_ModelInstanceInitialize: ",
        triton_backend_loading,
    ),
    rule("] warmup error: ", triton_warmup_failed),
    rule("failed to run warmup sample '", triton_warmup_failed),
    rule(
        "allocation in engine deserialization",
        tensorrt_deserialized,
    ),
    // === AUTOMATIC1111 (and Forge) model loading and failed UI jobs (thirteenth session);
    // handlers at the end of this file. ===
    rule("Loading weights [", a1111_loading),
    rule("Creating model from config: ", a1111_loading),
    rule("Model loaded in ", a1111_loaded),
    rule("Arguments: ('task(", a1111_failed_job),
    rule("txt2img: ", a1111_console_prompt),
    rule("img2img: ", a1111_console_prompt),
    // === The web UI's API and its job queue (session 14); handlers at the end of this file. ===
    rule("API error: ", webui_api_error),
    rule("[AgentScheduler] Task ", agent_scheduler_task_failed),
    // === text-generation-webui's model loading (session 15); handlers at the end of this
    // file. ===
    rule("Loading ", textgen_loading),
    rule("Loaded the model in ", textgen_loaded),
    rule("Loaded \"", textgen_loaded),
    // === PhysX on the GPU (Isaac Gym `gym.create_sim`, Isaac Sim/Lab's Kit plugins; session
    // 27); handlers at the end of this file. ===
    rule("Using GPU PhysX", physx_start),
    rule(
        "Unable to create PxCudaContextManager",
        physx_context_failed,
    ),
    // === A request answered with the error (session 23); handlers at the end of this file. ===
    rule("\"object\":\"error\"", request_error),
    rule("\"object\": \"error\"", request_error),
    rule("mistralrs_core::engine", mistralrs_step),
    // === A quantizer at work on the model's layers (session 43); handlers at the end of this
    // file. ===
    rule("Applying in-situ quantization", quantizing),
    rule("Start quantizing layer", quantizing),
    rule(" in layer ", quantizing_module),
    rule("Quantizing ", quantizing_with_samples),
    rule("Quantizing ", quantizing_bar),
    rule("): Calibrating", sequential_pipeline_bar),
    rule("): Propagating", sequential_pipeline_bar),
    // === Apps that name the stage of their own failure (session 28); handlers at the end of
    // this file. ===
    rule("Not Enough GPU memory? ", colabfold_predict),
    rule("updater_gpu_hist", xgboost_boosting),
    rule("dispatched on the CPU or the disk", quantized_dispatch),
    // === stable-diffusion.cpp's generation (session 34); handler at the end of this file. ===
    rule("stable-diffusion.cpp:", sdcpp_generation),
    // === Session 38 (p3): an app's own line that it loads a model from a weights file or
    // folder, as the message of its line: the original Stable Diffusion scripts
    // (CompVis/stable-diffusion `scripts/txt2img.py` `load_model_from_config`:
    // `print(f"Loading model from {ckpt}")`), InvokeAI 2.x (`ldm/invoke/model_manager.py`:
    // `>> Loading {model_name} from {weights}`), MiniGPT-4 (`minigpt4/models/mini_gpt4.py`:
    // `print("Load BLIP2-LLM Checkpoint: {}".format(ckpt_path))`), PandaGPT and its forks
    // (`model/openllama.py`: `print(f'Initializing language decoder from {vicuna_ckpt_path}
    // ...')`), mmengine (`runner.py` `load_checkpoint`: `Load checkpoint from {filename}`).
    // A status message, capitalized: a lowercase `loading … from …` is a sub-step's trace
    // (kohya's `loading U-Net from checkpoint`, stable-diffusion.cpp's `loading 138/244 tensors
    // from …`), read by the engines' own rules. Handlers at the end of this file. ===
    rule("Loading ", weights_from_path),
    rule("Load ", weights_from_path),
    rule("Initializing ", weights_from_path),
    rule("Initialising ", weights_from_path),
    // The same apps' line that the loaded checkpoint is converted (InvokeAI 2.3
    // `ldm/invoke/model_manager.py` with `--ckpt_convert`: `>> Converting legacy checkpoint
    // {model_name} into a diffusers model...`; sherpa's Whisper TensorRT-LLM script:
    // `Converting encoder checkpoints...`): format conversion.
    rule("Converting ", checkpoint_converting),
];

fn event(facts: &mut LineFacts, kind: EventKind, phase: Phase) {
    facts.event(kind, phase, EventFigures::default());
}

fn shards_downloaded(text: &str, facts: &mut LineFacts) {
    // Only the finished bar: every shard is on disk and `from_pretrained` goes on to read
    // them into the model (its `Loading checkpoint shards` bar, when the paste keeps it).
    let done = text
        .split("Downloading shards:")
        .nth(1)
        .is_some_and(|rest| rest.trim_start().starts_with("100%"));
    if done {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
    }
}

fn trtllm_engine_loaded(text: &str, facts: &mut LineFacts) {
    if text.contains("TensorRT-LLM") {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    }
}

/// The converter's own line: the conversion ran and its checkpoint is being saved, still the
/// conversion's job. NIM's engine builder prints the same words per rank (`build_utils.py`:
/// `Total time of reading and converting rank0 checkpoint: 0.18 s`) and then builds an engine:
/// not this.
fn trtllm_converted(text: &str, facts: &mut LineFacts) {
    if !text.contains(" checkpoint:") {
        event(facts, EventKind::FormatConversion, Phase::FormatConversion);
    }
}

fn trtllm_kv_sizing(_text: &str, facts: &mut LineFacts) {
    event(facts, EventKind::ProfilingDone, Phase::Profiling);
}

fn trtllm_kv_allocated(_text: &str, facts: &mut LineFacts) {
    event(facts, EventKind::KvCacheAllocated, Phase::KvCacheAlloc);
}

fn ldm_create_model(text: &str, facts: &mut LineFacts) {
    if let Some(at) = text.find("Loaded model config from [") {
        if is_log_prefix(&text[..at]) {
            event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
        }
    }
}

fn pipeline_loading(text: &str, facts: &mut LineFacts) {
    // diffusers' own bar (`DiffusionPipeline.from_pretrained`: `logging.tqdm(…, desc="Loading
    // pipeline components...")`): a diffusers pipeline, whose text encoders print transformers'
    // `Loading checkpoint shards` bar beside it.
    facts.engine(EngineName::Diffusers, Certainty::Strong);
    let done = text.contains("100%|");
    if done {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    } else {
        event(facts, EventKind::WeightsLoadProgress, Phase::WeightsLoad);
    }
}

fn comfy_loading(text: &str, facts: &mut LineFacts) {
    // `Requested to load SDXL` / `Requested to load AutoencoderKL`: one word, a class name.
    let rest = text.split("Requested to load ").nth(1).unwrap_or("").trim();
    if !rest.is_empty() && !rest.contains(' ') {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
    }
}

/// ComfyUI's `comfy/model_base.py` `BaseModel.__init__` (and Fooocus' `ldm_patched/modules/
/// model_base.py`, Forge's copy) logs `model weight dtype torch.float16, manual cast: None` once
/// the diffusion model's modules exist, then `model_type EPS` (`FLOW`, `V_PREDICTION`, …, the
/// `ModelType` enum's name); `comfy/sd.py` `load_state_dict_guess_config` /
/// `load_diffusion_model_state_dict` then reads the checkpoint's weights into it
/// (`load_model_weights`); Fooocus also prints the `adm 2816` ComfyUI logs at debug level.
/// Each line alone, after a log prefix at most: a part of a model's load (`load_part`), not a
/// stage opened in the log (ComfyUI loads lazily: its sampler runs after these lines with no
/// line of its own).
fn comfy_model_created(text: &str, facts: &mut LineFacts) {
    let created = |marker: &str, rest_ok: &dyn Fn(&str) -> bool| {
        text.find(marker).is_some_and(|at| {
            is_log_prefix(&text[..at]) && rest_ok(text[at + marker.len()..].trim_end())
        })
    };
    let dtype = created("model weight dtype ", &|rest| {
        rest.contains(", manual cast: ")
    });
    let model_type = created("model_type ", &|rest| {
        !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    });
    let adm = created("adm ", &|rest| {
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
    });
    // `comfy/ops.py` `pick_operations`, choosing the layers of a model being built from scaled
    // fp8 weights (a diffusion model or a text encoder): `Using scaled fp8: fp8 matrix mult:
    // False, scale input: False` (session 49). Its weights are read into it next, and the
    // model's first use prints `Requested to load …` of its own: a load opened.
    if created("Using scaled fp8: ", &|rest| {
        rest.starts_with("fp8 matrix mult: ")
    }) {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
        return;
    }
    if dtype || model_type || adm {
        facts.load_part = true;
    }
}

fn comfy_loaded(text: &str, facts: &mut LineFacts) {
    if comfy_load_finished(text) {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    }
}

/// Whether a line is ComfyUI's word that a model's load finished (`comfy/model_management.py`
/// `LoadedModel.model_load`): `loaded completely 9.5 4897.05 True` / `loaded partially …`
/// starting the message, after a log prefix at most (`[INFO] loaded partially; …`,
/// `2024-09-11 11:51:35,123 - root - INFO - loaded …`).
pub fn comfy_load_finished(text: &str) -> bool {
    ["loaded completely", "loaded partially"]
        .iter()
        .any(|phrase| {
            text.find(phrase)
                .is_some_and(|at| is_log_prefix(&text[..at]))
        })
        || comfy_dynamic_vram_staged(text)
}

/// ComfyUI's dynamic VRAM loader's word that a model is placed (2026: `Model MiniMaxH3 prepared
/// for dynamic VRAM loading. 19995MB Staged. 208 patches attached.`, `Model ZImageTEModel_
/// prepared for dynamic VRAM loading. 7671MB Staged.`): `Model`, one class name, the phrase,
/// after a log prefix at most.
fn comfy_dynamic_vram_staged(text: &str) -> bool {
    let Some(at) = text.find(" prepared for dynamic VRAM loading") else {
        return false;
    };
    text[..at].rfind("Model ").is_some_and(|model| {
        let name = &text[model + "Model ".len()..at];
        is_log_prefix(&text[..model]) && !name.is_empty() && !name.contains(char::is_whitespace)
    })
}

/// Whether text is a log line's prefix at most (nothing, a timestamp, `[INFO]`, `root - INFO -`).
pub fn is_log_prefix(text: &str) -> bool {
    let head = text.trim_end();
    head.is_empty() || head.ends_with([']', '-', ':', '|'])
}

/// Triton Inference Server's gRPC inference handler at verbose level (`src/grpc_server.cc`, 2.x;
/// `src/grpc/infer_handler.cc` later: `New request handler for ModelInferHandler, 0`, `Process
/// for ModelInferHandler, rpc_ok=1, 0 step START`): a request came in and is being run.
fn triton_infer_request(text: &str, facts: &mut LineFacts) {
    if text.contains("New request handler for ModelInferHandler")
        || text.contains("Process for ModelInferHandler, rpc_ok=")
    {
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

/// Triton Inference Server (`core/src/model_lifecycle.cc` `ModelLifeCycle::AsyncLoad` /
/// `OnLoadComplete`, 2.x): `loading: llama:1` when a model version starts loading (the backend
/// builds its instances: a TensorRT engine is deserialized, a PyTorch model loaded), then
/// `successfully loaded 'llama' version 1`, or `failed to load 'llama' version 1: <error>`.
fn triton_loading(text: &str, facts: &mut LineFacts) {
    let loading = text
        .split("loading: ")
        .nth(1)
        .map(str::trim_end)
        .and_then(|rest| rest.rsplit_once(':'))
        .is_some_and(|(name, version)| {
            !name.is_empty()
                && !name.contains(char::is_whitespace)
                && !version.is_empty()
                && version.bytes().all(|b| b.is_ascii_digit())
        });
    let failed = text.contains("failed to load '") && text.contains("' version ");
    if loading || failed {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
    }
}

/// Triton Inference Server runs a model's configured warm-up samples (`model_warmup` in its
/// `config.pbtxt`) on each instance as it loads, before the model serves: an error of a sample
/// was logged as `warmup error: <error>` (`core/src/triton_model_instance.cc`
/// `WarmupResponseComplete`, `LOG_TRITONSERVER_ERROR(…, "warmup error")`, to 22.05) and is
/// returned as `failed to run warmup sample '<name>': <error>` since (`core/src/
/// backend_model_instance.cc` `TritonModelInstance::WarmUp`, 22.06 on). The failure is the
/// warm-up's run, a profiling pass of the list (as TGI's warm-up).
fn triton_warmup_failed(text: &str, facts: &mut LineFacts) {
    let glog = text
        .split_once("] warmup error: ")
        .is_some_and(|(location, _)| {
            location.rsplit_once(".cc:").is_some_and(|(_, line)| {
                !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())
            })
        });
    if glog || text.contains("failed to run warmup sample '") {
        facts.failed_phase_hint = Some(Phase::Profiling);
    }
}

/// `TRITONBACKEND_ModelInitialize: <model> (version <n>)`, `TRITONBACKEND_ModelInstanceInitialize:
/// <instance> (<kind> device <n>)`: a backend initialising the model a `loading: ` line
/// started (see `RULES`).
fn triton_backend_loading(text: &str, facts: &mut LineFacts) {
    let named = ["ModelInitialize: ", "ModelInstanceInitialize: "]
        .iter()
        .filter_map(|key| text.split_once(key).map(|(_, rest)| rest))
        .any(|rest| {
            rest.split_once(" (")
                .is_some_and(|(name, _)| !name.is_empty() && !name.contains(' '))
        });
    if named {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
    }
}

fn triton_loaded(text: &str, facts: &mut LineFacts) {
    if text.contains("' version ") {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    }
}

/// `ollama create` from a safetensors directory: the server streams its progress and the CLI
/// prints each status on its own line (`transferring model data 100%`, then `converting model`
/// or `converting adapter`), ollama 0.3–0.12 `server/create.go` `convertFromSafetensors`:
/// `fn(api.ProgressResponse{Status: "converting model"})` right before `convert.ConvertModel`
/// writes the GGUF (`fp16…` temp file). The status alone on its line (a spinner glyph allowed),
/// not a sentence that uses the words.
fn ollama_converting(text: &str, facts: &mut LineFacts) {
    let status = text
        .trim()
        .trim_matches(|c: char| ('\u{2800}'..='\u{28ff}').contains(&c) || c.is_whitespace());
    if status == "converting model" || status == "converting adapter" {
        event(facts, EventKind::FormatConversion, Phase::FormatConversion);
    }
}

/// Isaac Sim's PhysX tensor API that could not build the simulation view: omni.physics.tensors
/// `impl/api.py` `create_simulation_view` (`backend = tensor_api.create_simulation_view(stage_id)`;
/// `if backend is None: raise Exception("Failed to create simulation view backend")`), called
/// when the simulation is set up (Isaac Sim `SimulationContext` / Isaac Lab / OmniIsaacGymEnvs
/// on the first reset), before any step: start-up. The error as raised or quoted (`raise
/// Exception(…)` in a title), not a sentence around other words.
fn physx_view_failed(text: &str, facts: &mut LineFacts) {
    if text.contains("Exception(\"Failed to create simulation view backend")
        || text.contains("Exception: Failed to create simulation view backend")
        || text.trim().trim_start_matches('#').trim() == "Failed to create simulation view backend"
    {
        facts.failed_phase_hint = Some(Phase::Startup);
    }
}

/// ggml's scheduler finding that the graph it is about to compute does not fit the buffers
/// reserved for it: ggml `src/ggml-backend.cpp` `ggml_backend_sched_alloc_splits` (called by
/// `ggml_backend_sched_alloc_graph` from `ggml_backend_sched_graph_compute_async`) logs
/// `"%s: failed to allocate graph, reserving (backend_ids_changed = %d)"` and calls
/// `ggml_gallocr_reserve_n` again: a graph being evaluated (a decode, a transcription), not the
/// reservation at context creation (`ggml_backend_sched_reserve`, which prints no such line).
fn ggml_graph_rereserved(text: &str, facts: &mut LineFacts) {
    if text.contains("sched_alloc_splits: failed to allocate graph, reserving") {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// A TensorRT engine's deserialization that failed: TensorRT's own error of its loader
/// (`[deserialize.cpp::load::572] Error Code 2: OutOfMemory (…)`, 8.6+ `[safeDeserialize.cpp::
/// load::269]`, `[runtime.cpp::deserializeCudaEngine::…]`), TensorRT-LLM's check after
/// `IRuntime::deserializeCudaEngine` returned null (`cpp/tensorrt_llm/runtime/tllmRuntime.cpp`
/// `TllmRuntime::TllmRuntime`: `TLLM_CHECK_WITH_INFO(mEngine != nullptr, "Failed to deserialize
/// cuda engine.")`), the same words of the apps that load an engine file (`Failed to
/// deserialize CUDA engine`) and Polygraphy's `Could not deserialize engine`: the engine file
/// (its weights and layers) was being loaded onto the device.
fn tensorrt_deserialization_failed(text: &str, facts: &mut LineFacts) {
    let lower = text.to_ascii_lowercase();
    let loader_error = ["deserialize.cpp::", "deserializecudaengine::"]
        .iter()
        .any(|marker| lower.contains(marker))
        && lower.contains("error code");
    let failed = [
        "failed to deserialize",
        "could not deserialize",
        "unable to deserialize",
    ]
    .iter()
    .any(|words| {
        lower.split(words).nth(1).is_some_and(|rest| {
            let rest = rest.trim_start();
            rest.starts_with("cuda engine")
                || rest.starts_with("engine")
                || rest.starts_with("the engine")
        })
    });
    if loader_error || failed {
        facts.failed_phase_hint = Some(Phase::WeightsLoad);
    }
}

/// TensorRT 8.x–10.x after deserializing an engine (`[MemUsageChange] TensorRT-managed
/// allocation in engine deserialization: CPU +0, GPU +244, now: CPU 0, GPU 244 (MiB)`): its
/// weights are on the GPU; the execution context is created next.
fn tensorrt_deserialized(text: &str, facts: &mut LineFacts) {
    if text.contains("MemUsageChange") {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    }
}

/// AUTOMATIC1111 stable-diffusion-webui 1.x (`modules/sd_models.py`): `load_model` prints
/// `Creating model from config: <yaml>` and `load_model_weights` `Loading weights [<hash>] from
/// <file>` when a checkpoint starts loading.
fn a1111_loading(text: &str, facts: &mut LineFacts) {
    let weights = text
        .split("Loading weights [")
        .nth(1)
        .is_some_and(|rest| rest.contains("] from "));
    let config = text
        .split("Creating model from config: ")
        .nth(1)
        .is_some_and(|rest| !rest.trim().is_empty() && !rest.trim().contains(' '));
    if weights || config {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
    }
}

/// `Model loaded in 21.7s (calculate hash: 13.4s, load weights from disk: 0.3s, …).`:
/// AUTOMATIC1111 and Forge `modules/sd_models.py` `load_model` print `Model loaded in
/// {timer.summary()}.` once the checkpoint is on the device; a sampler's bar after it is a
/// generation, not the load.
fn a1111_loaded(text: &str, facts: &mut LineFacts) {
    let timed = text.split("Model loaded in ").nth(1).is_some_and(|rest| {
        let number = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        number > 0 && rest[number..].trim_start().starts_with('s')
    });
    if timed {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    }
}

/// AUTOMATIC1111 1.x `modules/call_queue.py` `wrap_gradio_call`: when a UI job raises, it
/// prints `Error completing request`, then `Arguments: {args} {kwargs}`; a job started from the
/// UI's buttons carries the task id `javascript/ui.js` `randomId()` makes (`task(…)`) as its
/// first argument: txt2img, img2img, extras. Printed under a failure, the failure happened
/// inside that job, as the generation footer (`Torch active/reserved:`) shows for a job that
/// finished.
fn a1111_failed_job(text: &str, facts: &mut LineFacts) {
    // 1.6 on prints its error records with `*** ` before each line (`modules/errors.py`
    // `report`: `*** Error completing request`, `*** Arguments: ('task(…)', …)`).
    let record = text.trim_start().trim_start_matches('*').trim_start();
    if record.starts_with("Arguments: ('task(") {
        facts.late_phase = Some(Phase::Inference);
    }
}

/// AUTOMATIC1111's console prompt (`modules/txt2img.py` `txt2img`, `modules/img2img.py`
/// `img2img`, 1.0–1.10, with `enable_console_prompts`: `print(f"\ntxt2img: {prompt}")` before
/// the job runs): a generation the UI was asked for began (session 45).
fn a1111_console_prompt(text: &str, facts: &mut LineFacts) {
    if text.starts_with("txt2img: ") || text.starts_with("img2img: ") {
        event(facts, EventKind::Request, Phase::Inference);
    }
}

/// AUTOMATIC1111 1.x `modules/api/api.py` `api_middleware` → `handle_exception` (kept by Forge
/// and SD.Next `modules/api/middleware.py`): a request that raised is printed as `API error:
/// {request.method}: {request.url} {err}`, the error's text inside `err`. The request names what
/// ran: `/sdapi/v1/txt2img` and `/sdapi/v1/img2img` generate (`text2imgapi`, `img2imgapi`),
/// `/sdapi/v1/extra-single-image` and `/sdapi/v1/extra-batch-images` upscale and restore faces
/// (`extras_*_api`), `/sdapi/v1/interrogate` captions with CLIP or DeepBooru: the models run on
/// inputs; `/sdapi/v1/reload-checkpoint` (`reloadapi`) loads the checkpoint again. Other routes
/// (`/internal/progress`, `/sdapi/v1/options`) name no stage. The server's own line for a route
/// of its API (`/sdapi/v1/…`, `modules/api/api.py` `Api.__init__` `add_api_route`) names the web
/// UI (AUTOMATIC1111, or the forks that kept its API: Forge, SD.Next).
fn webui_api_error(text: &str, facts: &mut LineFacts) {
    let Some((_, rest)) = text.split_once("API error: ") else {
        return;
    };
    let url = rest
        .split_whitespace()
        .find(|word| word.starts_with("http"))
        .unwrap_or("");
    let route = url.split_once("/sdapi/v1/").map_or("", |(_, route)| route);
    if url.contains("/sdapi/v1/") {
        facts.engine(EngineName::Automatic1111, Certainty::Strong);
    }
    let route = route.split(['?', '/', ' ']).next().unwrap_or("");
    let phase = match route {
        "txt2img" | "img2img" | "extra-single-image" | "extra-batch-images" | "interrogate" => {
            Some(Phase::Inference)
        }
        "reload-checkpoint" => Some(Phase::WeightsLoad),
        _ => None,
    };
    if phase.is_some() {
        facts.failed_phase_hint = phase;
    }
}

/// The web UI's queue extension (ArtVentureX/sd-webui-agent-scheduler 0.x,
/// `agent_scheduler/task_runner.py` `TaskRunner.execute_pending_tasks`) runs each queued txt2img
/// or img2img task and logs a failed one as `[AgentScheduler] Task {task_id} failed: {res}` (`…
/// failed: CUDA OOM. Queue will be paused.` for an out-of-memory error): an image was being
/// generated.
fn agent_scheduler_task_failed(text: &str, facts: &mut LineFacts) {
    let failed = text
        .split_once("[AgentScheduler] Task ")
        .and_then(|(_, rest)| rest.split_once(' '))
        .is_some_and(|(id, rest)| !id.is_empty() && rest.starts_with("failed: "));
    if failed {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// text-generation-webui (oobabooga, `modules/models.py` `load_model`) announces the model it
/// loads before dispatching to its loader (transformers, ExLlama, GPTQ-for-LLaMa, llama.cpp…):
/// `print(f"Loading {model_name}...")` (Feb.–May 2023), then through its logger
/// `logger.info(f"Loading {model_name}...")` (`INFO:Loading …`, `2023-10-01 12:00:00
/// INFO:Loading …`), `Loading {model_name}` (Dec. 2023) and `Loading "{model_name}"` (Feb.
/// 2024 on, Rich's `12:00:00-123456 INFO     Loading "…"`). The name is one word (the
/// folder under `models/`) that looks like a model's (a digit or one of `-_/.`), alone after the
/// prefix; the bare form needs the logger's level before it.
fn textgen_loading(text: &str, facts: &mut LineFacts) {
    let line = text.trim();
    let Some(at) = line.find("Loading ") else {
        return;
    };
    let prefix = line[..at].trim_end();
    let logged = prefix.ends_with("INFO:") || prefix.ends_with("INFO");
    if !prefix.is_empty() && !logged {
        return;
    }
    let rest = line[at + "Loading ".len()..].trim_end();
    let name = if let Some(quoted) = rest.strip_prefix('"') {
        quoted.strip_suffix('"')
    } else if let Some(stem) = rest.strip_suffix("...") {
        Some(stem)
    } else if logged {
        Some(rest)
    } else {
        None
    };
    let model_like = |name: &str| {
        let lower = name.to_ascii_lowercase();
        !name.is_empty()
            && !name.contains(char::is_whitespace)
            && !name.contains(['"', '\'', ':'])
            && !name.starts_with('.')
            && name
                .bytes()
                .any(|b| b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'/' | b'.'))
            && ![
                ".json", ".jsonl", ".txt", ".csv", ".yaml", ".yml", ".parquet", ".py",
            ]
            .iter()
            .any(|ext| lower.ends_with(ext))
    };
    if name.is_some_and(model_like) {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
    }
}

/// text-generation-webui's `load_model` once the loader returned: `Loaded the model in {t:.2f}
/// seconds.` (2023), `Loaded "{model_name}" in {t:.2f} seconds.` (May 2024 on).
fn textgen_loaded(text: &str, facts: &mut LineFacts) {
    let rest = if let Some(rest) = text.split("Loaded the model in ").nth(1) {
        rest
    } else if let Some(quoted) = text.split("Loaded \"").nth(1) {
        match quoted.split_once("\" in ") {
            Some((name, rest)) if !name.is_empty() && !name.contains(' ') => rest,
            _ => return,
        }
    } else {
        return;
    };
    let digits = rest
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    if digits > 0 && rest[digits..].trim_start().starts_with("seconds") {
        event(facts, EventKind::WeightsLoaded, Phase::WeightsLoad);
    }
}

/// ColabFold's `run` (`colabfold/batch.py`) catches a failed prediction of one query and logs
/// `Could not predict {jobname}. Not Enough GPU memory? {e}` before going on to the next: the
/// structure prediction, the model run on that input, failed.
fn colabfold_predict(text: &str, facts: &mut LineFacts) {
    if text.contains("Could not predict") || text.contains("RESOURCE_EXHAUSTED") {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// transformers' refusal of a quantized model's device map (`Some modules are dispatched on the
/// CPU or the disk. Make sure you have enough GPU RAM to fit the quantized model.`,
/// `quantizers/quantizer_bnb_4bit.py` `validate_environment`, run by `from_pretrained`): the
/// weights did not fit while the model was being loaded.
fn quantized_dispatch(text: &str, facts: &mut LineFacts) {
    if text.contains("Some modules are dispatched") {
        facts.failed_phase_hint = Some(Phase::WeightsLoad);
    }
}

/// XGBoost's GPU histogram tree updater (`src/tree/updater_gpu_hist.cu`, `Exception in
/// gpu_hist: …`) grows the trees of each boosting round: training (prediction runs in
/// `gpu_predictor.cu`).
fn xgboost_boosting(text: &str, facts: &mut LineFacts) {
    if text.contains("updater_gpu_hist.cu") {
        facts.failed_phase_hint = Some(Phase::TrainingStep);
    }
}

/// leejet/stable-diffusion.cpp (`src/stable-diffusion.cpp`, 2024–2026; `[INFO ]
/// stable-diffusion.cpp:4197 - decoding 1 latents`): a generation's passes announced as they
/// start, `generating image: 1/1 - seed 42` (`generate_image`), `sampling using Euler A method`
/// (`sample`) and `decoding 1 latents` (`decode_first_stage` for each latent: the VAE's
/// decode, whose compute buffer `vae compute buffer size: …` it allocates next): the model
/// applied to the user's prompt. Each runs after the models are loaded.
fn sdcpp_generation(text: &str, facts: &mut LineFacts) {
    let Some((_, message)) = text.split_once("stable-diffusion.cpp:") else {
        return;
    };
    let Some((_, message)) = message.split_once(" - ") else {
        return;
    };
    let message = message.trim();
    let decoding = message.strip_prefix("decoding ").is_some_and(|rest| {
        let mut words = rest.split_whitespace();
        words
            .next()
            .is_some_and(|count| count.bytes().all(|b| b.is_ascii_digit()))
            && matches!(words.next(), Some("latents" | "latent"))
    });
    if decoding
        || message.starts_with("generating image: ")
        || message.starts_with("sampling using ")
    {
        event(facts, EventKind::Request, Phase::Inference);
    }
}

#[cfg(test)]
mod textgen_tests {
    use super::super::event_kinds as kinds;
    use crate::model::explain::EventKind;

    #[test]
    fn the_web_uis_load_lines_open_and_close_the_load() {
        for line in [
            "Loading acme-7b-GPTQ-4bit-32g...",
            "INFO:Loading Acme_Model-13B-GPTQ...",
            "2023-10-01 12:00:00 INFO:Loading Acme_Model-13B-GPTQ",
            "12:00:00-123456 INFO     Loading \"acme_model-7b\"",
        ] {
            assert_eq!(kinds(line), vec![EventKind::WeightsLoadStart], "{line}");
        }
        for line in [
            "Loaded the model in 12.34 seconds.",
            "12:00:09-123456 INFO     Loaded \"acme_model-7b\" in 9.87 seconds.",
        ] {
            assert_eq!(kinds(line), vec![EventKind::WeightsLoaded], "{line}");
        }
        for line in [
            "Loading dataset...",
            "Loading data from disk...",
            "Loading config.json...",
            "Loading acme-7b",
            "Now Loading acme-7b...",
            "Loaded the model in memory",
            "Loaded \"the model\" in 3 seconds.",
        ] {
            assert!(kinds(line).is_empty(), "{line}");
        }
    }
}

#[cfg(test)]
mod webui_api_tests {
    use super::super::parse_line_scan;
    use crate::model::explain::Phase;

    #[test]
    fn the_api_route_and_the_queue_name_the_job() {
        let hint = |line: &str| parse_line_scan(line).failed_phase_hint;
        assert_eq!(
            hint(
                "12:00:01-123456 ERROR    API error: POST: http://127.0.0.1:7860/sdapi/v1/txt2img \
                  {'error': 'OutOfMemoryError', 'detail': ''}"
            ),
            Some(Phase::Inference)
        );
        assert_eq!(
            hint(
                "API error: POST: http://localhost:7861/sdapi/v1/extra-single-image {'error': 'x'}"
            ),
            Some(Phase::Inference)
        );
        assert_eq!(
            hint(
                "API error: POST: http://localhost:7861/sdapi/v1/reload-checkpoint {'error': 'x'}"
            ),
            Some(Phase::WeightsLoad)
        );
        assert_eq!(
            hint("API error: GET: http://127.0.0.1:7860/internal/progress {'error': 'x'}"),
            None
        );
        assert_eq!(hint("API error: the txt2img call failed"), None);
        // The web UI's API route names it; another server's failed request does not.
        let engine = |line: &str| parse_line_scan(line).engine.map(|(name, _)| name);
        assert_eq!(
            engine("API error: POST: http://127.0.0.1:7860/sdapi/v1/img2img {'error': 'x'}"),
            Some(crate::model::failure::EngineName::Automatic1111)
        );
        assert_eq!(
            engine("API error: POST: http://127.0.0.1:8000/v1/chat/completions {'error': 'x'}"),
            None
        );
        assert_eq!(
            hint("[AgentScheduler] Task 1f2e3d failed: CUDA OOM. Queue will be paused."),
            Some(Phase::Inference)
        );
        assert_eq!(hint("[AgentScheduler] Task 1f2e3d finished"), None);
    }
}

#[cfg(test)]
mod a1111_tests {
    use super::super::{event_kinds as kinds, parse_line_scan};
    use crate::model::explain::{EventKind, Phase};

    #[test]
    fn webui_loading_lines_and_a_failed_job() {
        assert_eq!(
            kinds("Loading weights [6ce0161689] from /sd/models/Stable-diffusion/v1-5.safetensors"),
            vec![EventKind::WeightsLoadStart]
        );
        assert_eq!(
            kinds("Creating model from config: /sd/configs/v1-inference.yaml"),
            vec![EventKind::WeightsLoadStart]
        );
        assert_eq!(
            kinds("Model loaded in 5.2s (load weights from disk: 0.4s, create model: 1.1s)."),
            vec![EventKind::WeightsLoaded]
        );
        assert!(kinds("Loading weights [skipped] because of a flag").is_empty());
        assert!(kinds("Model loaded in memory, starting the server").is_empty());
        assert!(kinds("Creating model from config: see the docs for details").is_empty());
        let job = parse_line_scan("Arguments: ('task(abc123def)', 'a cat', '', [], 20) {}");
        assert_eq!(job.late_phase, Some(Phase::Inference));
        let other = parse_line_scan("Arguments: (1, 2) {}");
        assert_eq!(other.late_phase, None);
    }
}

#[cfg(test)]
mod triton_tests {
    use super::super::event_kinds as kinds;
    use crate::model::explain::EventKind;

    #[test]
    fn triton_model_loading_lines() {
        assert_eq!(
            kinds("I0501 10:00:00.000000 1 model_lifecycle.cc:469] loading: llama:1"),
            vec![EventKind::WeightsLoadStart]
        );
        assert_eq!(
            kinds("I0501 10:00:09.000000 1 model_lifecycle.cc:835] successfully loaded 'llama' version 1"),
            vec![EventKind::WeightsLoaded]
        );
        assert_eq!(
            kinds("E0501 10:00:09.000000 1 model_lifecycle.cc:638] failed to load 'llama' version 1: Internal: out of memory"),
            vec![EventKind::WeightsLoadStart]
        );
        assert!(kinds("loading: please wait").is_empty());
        assert!(kinds("Downloading: 100%").is_empty());
        assert!(kinds("failed to load 'config.json'").is_empty());
        let hint = |line: &str| super::super::parse_line_scan(line).failed_phase_hint;
        assert_eq!(
            hint("E0504 19:31:21.415679 91 backend_model_instance.cc:99] warmup error: Internal - OOM"),
            Some(crate::model::explain::Phase::Profiling)
        );
        assert_eq!(
            hint(
                "E0601 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'm' version 1: \
                  Invalid argument: failed to run warmup sample 'zeros': out of memory"
            ),
            Some(crate::model::explain::Phase::Profiling)
        );
        assert_eq!(hint("The docs say: ] warmup error: see below"), None);
        assert_eq!(
            kinds("[TRT] [I] [MemUsageChange] TensorRT-managed allocation in engine deserialization: CPU +0, GPU +244, now: CPU 0, GPU 244 (MiB)"),
            vec![EventKind::WeightsLoaded]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::event_kinds as kinds;
    use crate::model::explain::EventKind;

    #[test]
    fn trtllm_diffusers_comfyui_lines() {
        assert_eq!(
            kinds("[TensorRT-LLM][INFO] Loaded engine size: 6695 MiB"),
            vec![EventKind::WeightsLoaded]
        );
        assert_eq!(
            kinds("[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, available: 70.48 GiB"),
            vec![EventKind::ProfilingDone]
        );
        assert_eq!(
            kinds("[TensorRT-LLM][INFO] [MemUsageChange] Allocated 63.44 GiB for max tokens in paged KV cache (259840)."),
            vec![EventKind::KvCacheAllocated]
        );
        assert_eq!(
            kinds("Loading pipeline components...:  43%|████▎     | 3/7 [00:01<00:01,  2.31it/s]"),
            vec![EventKind::WeightsLoadProgress]
        );
        assert_eq!(
            kinds("Requested to load SDXL"),
            vec![EventKind::WeightsLoadStart]
        );
        assert_eq!(
            kinds("loaded completely 9.5 4897.05 True"),
            vec![EventKind::WeightsLoaded]
        );
        assert!(kinds("Requested to load the page again").is_empty());
    }
}

/// A request answered with the failure: an OpenAI-compatible server's error object
/// (`{"object":"error","message":"CUDA out of memory. …"}`: vLLM's `ErrorResponse`
/// (`vllm/entrypoints/openai/protocol.py`), FastChat's `openai_api_server.py`
/// `create_error_response`, whose message holds the worker's `SERVER_ERROR_MSG` ("**NETWORK
/// ERROR DUE TO HIGH TRAFFIC. …**", `fastchat/constants.py`) and the CUDA error that
/// `model_worker.py` `generate_stream_gate` caught): the request was being generated when
/// memory ran out.
fn request_error(text: &str, facts: &mut LineFacts) {
    let lower = text.to_ascii_lowercase();
    if lower.contains("out of memory") || lower.contains("outofmemory") {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// mistral.rs's engine loop (`mistralrs_core::engine`, the module its log target names): a
/// step of the running sequences failed, `ERROR mistralrs_core::engine: step - Model failed with error: …`.
fn mistralrs_step(text: &str, facts: &mut LineFacts) {
    if text.contains("step - Model failed") {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// A quantizer rewriting the model's weights: mistral.rs's in-situ quantization
/// (`mistralrs-core/src/pipeline/isq.rs`: `Applying in-situ quantization into {dtype:?} to
/// {n} tensors.`), AutoGPTQ's and GPTQ-for-LLaMa's per-layer loop (`auto_gptq/modeling/_base.py`
/// `quantize`: `Start quantizing layer {i + 1}/{len(layers)}`): the conversion, which a failure
/// after it is part of.
fn quantizing(_text: &str, facts: &mut LineFacts) {
    event(facts, EventKind::FormatConversion, Phase::FormatConversion);
}

/// AutoGPTQ's line for each module of a layer (`auto_gptq/modeling/_base.py` `quantize`:
/// `Quantizing {name} in layer {i + 1}/{len(layers)}...`): the conversion, as
/// [`quantizing`]. The words `Quantizing` and a layer's count `N/M` must both be there.
fn quantizing_module(text: &str, facts: &mut LineFacts) {
    let Some(at) = text.find("Quantizing ") else {
        return;
    };
    let Some(rest) = text[at..].split(" in layer ").nth(1) else {
        return;
    };
    let count = rest
        .split(|c: char| !(c.is_ascii_digit() || c == '/'))
        .next()
        .unwrap_or("");
    let mut parts = count.split('/');
    let counted = parts.clone().count() == 2 && parts.all(|part| !part.is_empty());
    if counted {
        event(facts, EventKind::FormatConversion, Phase::FormatConversion);
    }
}

/// llm-compressor's GPTQ and SparseGPT modifiers on each module (`llmcompressor/modifiers/
/// quantization/gptq/base.py` `compress_modules`: `Quantizing {name} using {num_samples}
/// samples`, 0.4–0.8, logged by loguru as `… | on_sequential_batch_end | INFO - Quantizing
/// model.layers.39.mlp.down_proj using 128 samples`): the conversion, as [`quantizing`].
fn quantizing_with_samples(text: &str, facts: &mut LineFacts) {
    let Some(at) = text.find("Quantizing ") else {
        return;
    };
    let rest = &text[at + "Quantizing ".len()..];
    let Some((_, count)) = rest.split_once(" using ") else {
        return;
    };
    let digits = count.len() - count.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 && count[digits..].starts_with(" samples") {
        event(facts, EventKind::FormatConversion, Phase::FormatConversion);
    }
}

/// A quantizer's own progress bar over the model's layers or weights (AutoRound 0.5+
/// `autoround.py` `quantize`: `tqdm(…, desc=f"Quantizing {block_name}")`, `Quantizing
/// model.layers.0:   0%|`; AutoFP8 `quantize.py` `quantize_weights`: `Quantizing weights:
/// 9%|`): the conversion, as [`quantizing`]. The bar's description must open the line (after
/// a log prefix at most) and be followed by its percentage.
fn quantizing_bar(text: &str, facts: &mut LineFacts) {
    let Some(at) = text.find("Quantizing ") else {
        return;
    };
    let Some((description, rest)) = text[at..].split_once(':') else {
        return;
    };
    let percent = rest.trim_start();
    let digits = percent.len()
        - percent
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    let bar = digits > 0 && percent[digits..].starts_with("%|");
    if bar && !description.contains("  ") && is_log_prefix(&text[..at]) {
        event(facts, EventKind::FormatConversion, Phase::FormatConversion);
    }
}

/// llm-compressor's sequential calibration pipeline, one subgraph (a layer) at a time
/// (`llmcompressor/pipelines/sequential/pipeline.py`: tqdm bars `({i}/{n}): Calibrating` and
/// `({i}/{n}): Propagating`): a quantizer's calibration, the conversion.
fn sequential_pipeline_bar(text: &str, facts: &mut LineFacts) {
    let counted = text.split("): ").next().and_then(|head| {
        let (done, total) = head.rsplit_once('(')?.1.split_once('/')?;
        Some(
            !done.is_empty()
                && !total.is_empty()
                && done.bytes().all(|b| b.is_ascii_digit())
                && total.bytes().all(|b| b.is_ascii_digit()),
        )
    });
    if counted == Some(true) {
        event(facts, EventKind::FormatConversion, Phase::FormatConversion);
    }
}

/// Isaac Gym's `gym.create_sim` with the GPU pipeline (`+++ Using GPU PhysX`, then `Physics
/// Engine: PhysX`, `Physics Device: cuda:0`, `GPU Pipeline: enabled`): the simulation and its
/// PhysX device memory being created, before any environment step: start-up.
fn physx_start(_text: &str, facts: &mut LineFacts) {
    event(facts, EventKind::DeviceInit, Phase::Startup);
}

/// Isaac Sim/Lab's PhysX plugin (`[omni.physx.plugin] Unable to create PxCudaContextManager!`)
/// printed under the CUDA errors of the Kit's start: PhysX's CUDA context was being made, so a
/// failure above it is the app's start-up.
fn physx_context_failed(_text: &str, facts: &mut LineFacts) {
    facts.late_phase = Some(Phase::Startup);
}

/// See the rules: one part of a model's load done.
fn load_part(text: &str, facts: &mut LineFacts) {
    if text.contains("<All keys matched successfully>") || fetched_files(text) {
        facts.load_part = true;
    }
}

/// huggingface_hub's finished snapshot bar: `Fetching 2 files: 100%|██| 2/2 [..]`.
fn fetched_files(text: &str) -> bool {
    text.split("Fetching ").nth(1).is_some_and(|rest| {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits > 0
            && rest[digits..]
                .strip_prefix(" files:")
                .is_some_and(|bar| bar.trim_start().starts_with("100%"))
    })
}

/// See the rules: `Loading model from ./sd-v1-4.ckpt`, `>> Loading inpainting-1.5 from
/// /…/sd-v1-5-inpainting.ckpt`, `Load BLIP2-LLM Checkpoint: pretrained/ckpt/x.pth`,
/// `Initializing language decoder from ../vicuna_ckpt/7b_v0/ ...`: the verb opens the message
/// (after a log prefix or a `>>` marker at most), what is loaded is a model's part (no data,
/// configuration or tokenizer) in a few words, and where it comes from is a weights file
/// (its extension) or a folder path that names weights.
fn weights_from_path(text: &str, facts: &mut LineFacts) {
    let told = facts
        .events
        .iter()
        .any(|event| event.phase == Phase::WeightsLoad);
    if !told && loads_weights_from_path(text) {
        event(facts, EventKind::WeightsLoadStart, Phase::WeightsLoad);
    }
}

fn loads_weights_from_path(text: &str) -> bool {
    const VERBS: &[&str] = &["Loading ", "Load ", "Initializing ", "Initialising "];
    let Some(rest) = message_after(text, VERBS) else {
        return false;
    };
    let split = [" from ", " Checkpoint: ", " checkpoint: "]
        .iter()
        .filter_map(|word| rest.find(word).map(|at| (at, word.len())))
        .min_by_key(|(at, _)| *at);
    let Some((object_end, word_len)) = split else {
        return false;
    };
    let object = rest[..object_end].to_ascii_lowercase();
    // The line ends with the path (a separate ` ...` or `…` at most).
    let mut words = rest[object_end + word_len..].split_whitespace();
    let source = words
        .next()
        .unwrap_or_default()
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`'));
    let ends_at_path = words.all(|word| word.chars().all(|c| c == '.' || c == '…'));
    // A1111's `Loading weights [6ce0161689] from …` is its own rule's (`a1111_loading`).
    let few_words = ends_at_path
        && !object.contains('[')
        && object.split_whitespace().count() <= 4
        && !object.starts_with(|c: char| c.is_ascii_digit());
    let data_like = [
        "data",
        "config",
        "token",
        "vocab",
        "image",
        "prompt",
        "cache",
        "label",
        "sample",
        "file list",
        "annotation",
        "index",
        "embedding",
    ]
    .iter()
    .any(|word| object.contains(word));
    few_words && !data_like && weights_source(source)
}

/// A weights file (by its extension) or a folder or file path that names weights.
fn weights_source(source: &str) -> bool {
    let lower = source.to_ascii_lowercase();
    let path_like = lower.contains('/') || lower.contains('\\');
    let weights_file = [
        ".ckpt",
        ".pth",
        ".pt",
        ".bin",
        ".safetensors",
        ".gguf",
        ".h5",
        ".npz",
        ".msgpack",
        ".pdparams",
        ".caffemodel",
    ]
    .iter()
    .any(|ext| lower.ends_with(ext));
    let leaf = lower
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default();
    let other_file = leaf.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric()) && ext.len() <= 5
    }) && !weights_file;
    let names_weights = ["ckpt", "checkpoint", "weight", "pretrained", "model"]
        .iter()
        .any(|word| lower.contains(word));
    weights_file || (path_like && !other_file && names_weights)
}

/// The message of a line that opens with one of `verbs` after a log prefix at most (a
/// timestamp, `[INFO]`, `… - INFO - `, `>>`): the words after the verb.
fn message_after<'a>(text: &'a str, verbs: &[&str]) -> Option<&'a str> {
    let line = text.trim();
    let (at, verb) = verbs
        .iter()
        .filter_map(|verb| line.find(verb).map(|at| (at, *verb)))
        .min_by_key(|(at, _)| *at)?;
    let prefix = line[..at].trim_end();
    let log_prefix = !prefix.chars().any(char::is_alphabetic)
        || [']', ':', '-', '|']
            .iter()
            .any(|end| prefix.ends_with(*end))
        || prefix.ends_with("INFO");
    log_prefix.then(|| &line[at + verb.len()..])
}

/// See the rules: `>> Converting legacy checkpoint sd15 into a diffusers model...`,
/// `Converting encoder checkpoints...`: a checkpoint (or model) converted, named in a few words.
fn checkpoint_converting(text: &str, facts: &mut LineFacts) {
    let Some(rest) = message_after(text, &["Converting "]) else {
        return;
    };
    let object = rest
        .split(" into ")
        .next()
        .unwrap_or_default()
        .split(" to ")
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let few_words = object.split_whitespace().count() <= 4;
    if few_words && object.contains("checkpoint") {
        event(facts, EventKind::FormatConversion, Phase::FormatConversion);
    }
}
