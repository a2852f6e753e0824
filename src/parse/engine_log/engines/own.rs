//! Engines and apps named by their own lines and commands:
//! ExLlamaV2's quantizer, AUTOMATIC1111's footer, Forge's checkpoint record and the web UI's
//! folder, a Kubernetes pod's host name on an NCCL line, accelerate's launcher, DeepSpeed's
//! KV cache, Paddle Inference's predictor; ONNX Runtime's logger, FunASR's `AutoModel` keywords
//! and spaCy's training loop.

use super::super::common::has;
use super::super::{Certainty, LineFacts};
use crate::model::explain::{EventFigures, EventKind, Phase};
use crate::model::failure::EngineName;

pub(super) fn exllamav2_conversion(text: &str, facts: &mut LineFacts) {
    if has(text, " bpw ") || has(text, "Module quantized") || has(text, "(decoder)") {
        facts.engine(EngineName::Exllamav2, Certainty::Strong);
        facts.event(
            EventKind::FormatConversion,
            Phase::FormatConversion,
            EventFigures::default(),
        );
    }
}

pub(super) fn automatic1111_versions(text: &str, facts: &mut LineFacts) {
    if ["version: ", "python: ", "torch: ", "gradio: "]
        .iter()
        .all(|field| has(text, field))
    {
        facts.engine(EngineName::Automatic1111, Certainty::Banner);
    }
}

/// The web UI's folder in a path (`/home/me/stable-diffusion-webui-forge/extensions/…`), not a
/// model kept in its `models/` folder (`accelerate launch train_db.py
/// --pretrained_model_name_or_path="E:/stable-diffusion-webui/models/…"`, `load StableDiffusion
/// checkpoint: /sd/stable-diffusion-webui/models/…`: other programs read models kept there).
pub(super) fn automatic1111_folder(text: &str, facts: &mut LineFacts) {
    let folder = text.match_indices("stable-diffusion-webui").any(|(at, _)| {
        let rest = text[at + "stable-diffusion-webui".len()..]
            .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        text[..at].ends_with(['/', '\\'])
            && rest.starts_with(['/', '\\'])
            && !rest[1..].starts_with("models")
    });
    if folder {
        facts.engine(EngineName::Automatic1111, Certainty::Weak);
    }
}

/// The engine a pod's host name starts with (`vllm-…`, `sglang-…`, `lmdeploy-…`): Kubernetes
/// names a deployment's pods `<deployment>-<hash>-<id>`, and NCCL starts its lines with the
/// host name (`<host>:<pid>:<tid> [<device>] NCCL INFO …`).
pub(super) fn nccl_pod_host(text: &str, facts: &mut LineFacts) {
    let host = text.trim_start().split(':').next().unwrap_or("");
    let Some((first, _)) = host.split_once('-') else {
        return;
    };
    let engine = match first.to_ascii_lowercase().as_str() {
        "vllm" => EngineName::Vllm,
        "sglang" => EngineName::Sglang,
        "lmdeploy" => EngineName::Lmdeploy,
        "tgi" => EngineName::Tgi,
        "ollama" => EngineName::Ollama,
        "trtllm" | "tensorrt" => EngineName::TensorrtLlm,
        _ => return,
    };
    facts.engine(engine, Certainty::Weak);
}

pub(super) fn accelerate_launch(text: &str, facts: &mut LineFacts) {
    // A command: the launcher first on the line, after a shell prompt or variables set for it
    // (`$ `, `!`, `CUDA_VISIBLE_DEVICES=0 `), not the words in a sentence.
    let command = text
        .trim_start()
        .trim_start_matches(['$', '!', '>', '`', ' '])
        .split_whitespace()
        .skip_while(|word| word.contains('=') && !word.starts_with('-'))
        .take(2)
        .eq(["accelerate", "launch"]);
    if command {
        facts.engine(EngineName::Accelerate, Certainty::Weak);
    }
}

/// accelerate's launcher warning of its defaults (see the rule): the job runs under it.
pub(super) fn accelerate_defaults(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Accelerate, Certainty::Weak);
}

pub(super) fn forge_checkpoint_record(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Automatic1111, Certainty::Strong);
}

/// DeepSpeed's ragged inference engine (DeepSpeed-MII's v2 pipelines) sizing its KV cache in its
/// logger's format (`[INFO] [kv_cache.py:135:__init__] Allocating KV-cache 0 with shape: (32,
/// 6352, 64, 2, 16, 96) consisting of 6352 blocks.`, `deepspeed/inference/v2/ragged/
/// kv_cache.py` `BlockedKVCache.__init__`): the cache's tensors are allocated right after.
pub(super) fn deepspeed_kv_cache(text: &str, facts: &mut LineFacts) {
    if has(text, "kv_cache.py") && has(text, " blocks") {
        facts.engine(EngineName::Deepspeed, Certainty::Strong);
        facts.event(
            EventKind::KvCachePlanned,
            Phase::KvCacheAlloc,
            EventFigures::default(),
        );
    }
}

/// Paddle Inference's predictor running the model in a C++ stack (`0
/// paddle::AnalysisPredictor::ZeroCopyRun()`, `paddle::AnalysisPredictor::Run(…)`:
/// `paddle/fluid/inference/api/analysis_predictor.cc`, what PaddleOCR's and PaddleDetection's
/// deployed models call per input): the failure came while the model ran on an input.
pub(super) fn paddle_predictor_run(text: &str, facts: &mut LineFacts) {
    if has(text, "AnalysisPredictor::ZeroCopyRun") || has(text, "AnalysisPredictor::Run(") {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

/// LoRAX (predibase/lorax), TGI's fork, by the names it gave TGI's parts: `lorax_launcher`
/// (the launcher's tracing target, `launcher/src/main.rs`), `lorax_client` (the router's gRPC
/// client, `router/client/src/lib.rs`), `lorax_server/` (the Python shard,
/// `server/lorax_server/models/flash_causal_lm.py`) and its image `ghcr.io/predibase/lorax`.
/// It is none of the named engines (`other`); its lines keep TGI's sentences (`Method Warmup
/// encountered an error.`, `Webserver Crashed`), which name TGI strongly, so its own name is
/// taken as a banner: TGI itself never prints it.
pub(super) fn lorax_own(text: &str, facts: &mut LineFacts) {
    let own = [
        "lorax_launcher",
        "lorax_client",
        "lorax_server/",
        "predibase/lorax",
    ];
    if names_any(text, &own) {
        facts.engine(EngineName::Other, Certainty::Banner);
    }
}

/// The RL post-training frameworks by their own packages and Ray actors: verl
/// (volcengine/verl, forked by EasyR1: `verl/trainer/main_ppo.py`, `verl/workers/fsdp_workers.py`,
/// `verl/single_controller/ray/base.py`, the colocated actor `ray::WorkerDict` of
/// `single_controller/ray/base.py` `create_colocated_worker_cls`), OpenRLHF (`openrlhf/cli/
/// train_ppo_ray.py`, `openrlhf/trainer/`) and NeMo-RL (NVIDIA-NeMo/RL: `nemo_rl/algorithms/
/// grpo.py`, `nemo_rl/models/policy/dtensor_policy_worker.py`, its actor
/// `DTensorPolicyWorker`). The user ran one of them, none of the named engines (`other`); the
/// vLLM or SGLang engine they start for rollouts and the torch they train with are theirs.
/// Strong, not a banner: where vLLM's or SGLang's own lines show the failure, that engine's
/// flags are the advice.
pub(super) fn rl_framework_own(text: &str, facts: &mut LineFacts) {
    let own = [
        "verl/trainer/",
        "verl/workers/",
        "verl/single_controller/",
        "verl.trainer.",
        "verl.single_controller.",
        "openrlhf/",
        "openrlhf.cli",
        "nemo_rl/",
        "nemo_rl.",
        "WorkerDict.",
        "DTensorPolicyWorker",
    ];
    if names_any(text, &own) {
        facts.engine(EngineName::Other, Certainty::Strong);
    }
}

/// Whether `text` holds one of `names` where an identifier starts (`lorax_server/`, not
/// `my_lorax_server/`).
fn names_any(text: &str, names: &[&str]) -> bool {
    names
        .iter()
        .any(|name| (text.match_indices(name)).any(|(at, _)| super::identifier_start(text, at)))
}

/// ONNX Runtime's own lines: its default logger's `[E:onnxruntime:, sequential_executor.cc:514
/// ExecuteKernel] Non-zero status code returned while running …` (severity letter, logger id
/// `onnxruntime`) and its Python binding's exceptions (`onnxruntime.capi.
/// onnxruntime_pybind11_state.Fail`): the program ran its model on ONNX Runtime, none of the
/// named engines (`other`); a `torch` import beside it made the inputs only (session 48).
pub(super) fn onnxruntime_own(text: &str, facts: &mut LineFacts) {
    let logged = ["[E:onnxruntime:", "[W:onnxruntime:", "[F:onnxruntime:"]
        .iter()
        .any(|prefix| text.contains(prefix));
    if logged || text.contains("onnxruntime_pybind11_state") {
        facts.engine(EngineName::Other, Certainty::Strong);
    }
}

/// FunASR's (modelscope/FunASR) `AutoModel` by the keywords only it takes: `AutoModel(model=…,
/// vad_model=…, punc_model=…, spk_model=…)` and `model.generate(input=…, batch_size_s=…,
/// hotword=…)` (`funasr/auto/auto_model.py`). Its `generate` is not transformers'; the program
/// is none of the named engines (`other`), session 48.
pub(super) fn funasr_keywords(text: &str, facts: &mut LineFacts) {
    let keyword = ["vad_model=", "punc_model=", "spk_model=", "batch_size_s="]
        .iter()
        .any(|word| {
            text.match_indices(word)
                .any(|(at, _)| super::identifier_start(text, at))
        });
    if keyword {
        facts.engine(EngineName::Other, Certainty::Strong);
    }
}

/// spaCy's training loop by its own lines (`spacy/training/loop.py`: the divider `msg.divider(
/// "Training pipeline")` and, when an exception stops it, `msg.warn("Aborting and saving the
/// final best model. Encountered exception: {repr(e)}")`): the program is none of the named
/// engines (`other`), and its tqdm bar `Epoch 1:  15%|…` is its own, not Lightning's (session
/// 48).
pub(super) fn spacy_own(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Other, Certainty::Strong);
}
