//! The frame rules: traceback functions (and the path they must be in) mapped to the phase
//! they show, read from each engine's and library's source (docs/phases.md lists them with
//! files and versions).

use super::{FrameRule, Role};
use crate::model::explain::Phase;

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

mod apps;
mod conversion;
mod hf;
mod image;
mod local;
mod markdown;
mod others;
mod probes;
mod pytorch;
mod saves;
mod serving;
mod speech;
mod startup;
mod training;

use Phase::TrainingStep as T;
use Role::Serve;

/// Traceback functions and the phase each shows, read from the engines' sources (see
/// docs/phases.md for file, function and version of each). The first rule that matches a
/// frame applies, so path-qualified rules come before bare names. `forward`, `__call__`,
/// `_dummy_run` (vLLM V1 runs it from both `profile_run` and `capture_model`), `_apply`,
/// `convert` and torch.compile's frames are not listed: their caller decides.
///
/// The table is kept by ecosystem in `rules/*.rs` (`saves`, `conversion`, `startup`, `probes`,
/// `pytorch`, `hf`, `training`, `serving`, `local`, `image`, `speech`, `others`, `apps`,
/// `markdown`); `SEGMENTS` lists their segments in the order the table reads them, and
/// `FRAME_RULES` is their concatenation.
const SEGMENTS: &[&[FrameRule]] = &[
    saves::CHECKPOINT_SAVES,
    local::TABBY_LOAD,
    // Conversions and quantizers run as their own job (session 15), before the libraries'
    // bare names (`load` of ExLlamaV2, `forward`, `generate`) they call.
    conversion::CONVERSIONS,
    startup::DISTRIBUTED_SETUP,
    probes::BATCH_SIZE_PROBES,
    // === Frameworks' and apps' stages, read from their sources (issue 13, tenth session;
    // docs/phases.md "Sources" lists file, function and version of each). Path-qualified, so
    // they come before the bare names below (`generate`, `train`, `evaluate`, `predict`). ===
    training::QUALIFIED_LIGHTNING,
    hf::QUALIFIED_HF,
    training::QUALIFIED_DEEPSPEED,
    pytorch::QUALIFIED_FSDP2,
    training::QUALIFIED_MEGATRON_TO_MMENGINE,
    hf::QUALIFIED_DIFFUSERS,
    image::QUALIFIED_KOHYA_TO_FORGE,
    apps::QUALIFIED_APPS,
    serving::QUALIFIED_VLLM_SGLANG_LMDEPLOY,
    local::QUALIFIED_EXLLAMAV2,
    others::QUALIFIED_FLAX_KERAS_TF,
    local::QUALIFIED_MLX_LM,
    training::QUALIFIED_OPENNMT_RL,
    serving::QUALIFIED_TRTLLM_CONVERSION,
    serving::NATIVE_BACKTRACES,
    local::LLAMA_CPP_GDB,
    others::XGBOOST,
    speech::QUALIFIED_WHISPER_WRAPPERS,
    serving::QUALIFIED_TRTLLM_PYTORCH_ORT,
    image::QUALIFIED_A1111_SAMPLERS,
    speech::QUALIFIED_WHISPER_APPS,
    training::QUALIFIED_MEGATRON_HAIKU_INIT,
    serving::QUALIFIED_TENSORRT_BUILDER,
    pytorch::TORCH,
    serving::VLLM_SGLANG_TGI,
    hf::TRANSFORMERS_ACCELERATE_PEFT,
    training::LIGHTNING,
    pytorch::FSDP,
    training::DEEPSPEED,
    serving::LMDEPLOY,
    local::EXLLAMAV2_TGWEBUI_MLC,
    serving::TRTLLM,
    image::DIFFUSERS_COMFYUI_A1111,
    training::DEEPSPEED_ZERO3_STEP,
    others::JAX_CHAINER,
    speech::WHISPER,
    training::OPENMMLAB_DETECTRON2,
    image::FOOOCUS_PIPELINE,
    others::KERAS_SESSION,
    pytorch::TORCHSCRIPT,
    // === Frames of frameworks and apps read from their sources (issue 13, second blind batch).
    // Each block names the project, the file and the version read. ===
    image::A1111_WEBUI,
    speech::SPEECH_APPS,
    speech::AUDIO_SEPARATION,
    serving::SGLANG_DISAGGREGATION,
    hf::SENTENCE_TRANSFORMERS,
    image::FOOOCUS_WORKER,
    pytorch::GPT_OSS_FSDP1,
    training::DEEPSPEED_ZERO3_SETUP,
    others::FLAX_LINEN,
    image::A1111_LOADING,
    speech::FASTER_WHISPER_BATCHED,
    serving::TENSORRT_RUNTIME,
    // === Apps' frames read from their sources for reports of apps and runtimes. ===
    others::AI_MODELS,
    training::ULTRALYTICS_PREDICTOR,
    training::BARE_NAMES,
    // === A web server's worker boot (gunicorn, uvicorn's gunicorn worker). ===
    startup::WORKER_BOOT,
    // === Special methods whose underscores Markdown ate (`in init` for `in __init__`). ===
    markdown::EATEN_DUNDERS,
];

/// The frame rules in the order they are tried: the segments of `SEGMENTS`, one after another.
pub static FRAME_RULES: &[FrameRule] = &ALL_RULES;

static ALL_RULES: [FrameRule; rule_count(SEGMENTS)] = concatenate(SEGMENTS);

/// The number of rules of all segments.
const fn rule_count(segments: &[&[FrameRule]]) -> usize {
    let mut count = 0;
    let mut segment = 0;
    while segment < segments.len() {
        count += segments[segment].len();
        segment += 1;
    }
    count
}

/// The rules of all segments, in order (`N` is their `rule_count`).
const fn concatenate<const N: usize>(segments: &[&[FrameRule]]) -> [FrameRule; N] {
    let mut all = [NATIVE_BACKWARD; N];
    let mut at = 0;
    let mut segment = 0;
    while segment < segments.len() {
        let mut index = 0;
        while index < segments[segment].len() {
            all[at] = segments[segment][index];
            at += 1;
            index += 1;
        }
        segment += 1;
    }
    all
}

/// A native frame of autograd's backward pass (a C++ frame of a PyTorch error, see
/// `parse::engine_log`): torch's engine (`torch/csrc/autograd/engine.cpp`
/// `Engine::evaluate_function`, `Engine::thread_main`), a generated autograd node
/// (`tools/autograd/gen_autograd_functions.py` names them `<Op>Backward<N>`, e.g.
/// `ConvolutionBackward0::apply`), or an ATen backward kernel (`native_functions.yaml` names them
/// `<op>_backward…`, e.g. `slow_conv_transpose3d_backward_out_cuda_template`).
pub(super) const NATIVE_BACKWARD: FrameRule = r("backward", "torch/lib/", T, Serve, "torch");

#[cfg(test)]
mod tests;
