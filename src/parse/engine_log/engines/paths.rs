//! The engine a source path belongs to: a traceback frame's file, a warning's path, a C++
//! source path.

use super::*;

/// The engine a source path belongs to (a traceback frame, a warning's path, a C++ source
/// path): `…/site-packages/peft/tuners/lora/layer.py` → PEFT. Windows separators and case
/// do not matter (`C:\ComfyUI_windows_portable\ComfyUI\comfy\model_management.py`).
pub fn engine_of_path(path: &str) -> Option<EngineName> {
    let mut normal = String::with_capacity(path.len() + 1);
    normal.push('/');
    normal.extend(path.chars().map(|c| {
        if c == '\\' {
            '/'
        } else {
            c.to_ascii_lowercase()
        }
    }));
    let path = normal.as_str();
    // An installed package's path: the package is what follows `site-packages/` (or
    // `dist-packages/`). The folders above it are the environment's: an application's own
    // (`stable-diffusion-webui/venv/…`, `kohya_ss/venv/…`) names the application, but a
    // framework's name there (`/opt/torch/.venv/lib/…`) only names the environment, not the
    // code that ran (`numba_cuda/…`).
    let package = match path.rfind("-packages/") {
        Some(at) => &path[at + "-packages".len()..],
        None => path,
    };
    let framework = |name: EngineName| {
        matches!(
            name,
            EngineName::Pytorch | EngineName::Jax | EngineName::Tensorflow
        )
    };
    // The most specific first: applications, then wrappers, then libraries, then frameworks.
    const TABLE: &[(&[&str], EngineName)] = &[
        (&["/aphrodite/"], EngineName::Aphrodite),
        (&["/ollama/"], EngineName::Ollama),
        // vLLM's hardware plug-ins (`vllm_ascend`, `vllm_gaudi`, `vllm_spyre`) and vLLM-Omni (its
        // multimodal stages, `vllm_omni`) run its engine.
        (
            &[
                "/vllm/",
                "/vllm_ascend/",
                "/vllm_gaudi/",
                "/vllm_spyre/",
                "/vllm_omni/",
            ],
            EngineName::Vllm,
        ),
        (&["/sglang/"], EngineName::Sglang),
        (&["text_generation_server"], EngineName::Tgi),
        (
            &["/tensorrt_llm/", "/tensorrtllm/"],
            EngineName::TensorrtLlm,
        ),
        (&["/lmdeploy/"], EngineName::Lmdeploy),
        (
            &[
                "/exllamav2/",
                "/exllamav2_hf",
                "/exllamav2.py",
                "/tabbyapi/",
            ],
            EngineName::Exllamav2,
        ),
        (
            &["/mlc_llm/", "/mlc_chat/", "/mlc-llm/"],
            EngineName::MlcLlm,
        ),
        (&["/invokeai/"], EngineName::Invokeai),
        // Fooocus by its folder (`Fooocus_win64_2-1-791/Fooocus/…`, Fooocus-API's
        // `fooocusapi/`); its `ldm_patched` copy of ComfyUI below, after Forge's.
        (&["/fooocus"], EngineName::Fooocus),
        (
            &["/comfyui", "/comfy/", "/comfy_extras/", "/comfy_execution/"],
            EngineName::Comfyui,
        ),
        (
            &[
                "stable-diffusion-webui",
                "/modules/sd_models.py",
                "/modules/sd_samplers",
                "/modules/sd_hijack",
                "/modules/processing.py",
                "/modules/txt2img.py",
                "/modules/img2img.py",
                "/modules/call_queue.py",
            ],
            EngineName::Automatic1111,
        ),
        // Fooocus's own modules: `ldm_patched/` (2.1.8+; Forge's early builds carried a copy,
        // matched above by its folder), `backend/headless/fcbh/` (2.1 before `ldm_patched`),
        // `modules/async_worker.py` and `modules/default_pipeline.py`.
        (
            &[
                "/ldm_patched/",
                "/backend/headless/fcbh/",
                "/modules/async_worker.py",
                "/modules/default_pipeline.py",
            ],
            EngineName::Fooocus,
        ),
        (&["/ultralytics/"], EngineName::Ultralytics),
        // Detectron2 by its subpackages: a folder or conda env named `detectron2` holds
        // anything.
        (
            &[
                "/detectron2/engine/",
                "/detectron2/modeling/",
                "/detectron2/data/",
                "/detectron2/layers/",
                "/detectron2/structures/",
                "/detectron2/evaluation/",
                "/detectron2/checkpoint/",
                "/detectron2/solver/",
                "/detectron2/utils/",
                "/detectron2/config/",
                "/detectron2/export/",
                "/detectron2/model_zoo/",
            ],
            EngineName::Detectron2,
        ),
        (
            &[
                "/mmengine/",
                "/mmdet/",
                "/mmdet3d/",
                "/mmcv/",
                "/mmseg/",
                "/mmpose/",
                "/mmocr/",
                "/mmcls/",
                "/mmpretrain/",
                "/mmaction/",
                "/mmrotate/",
                "/mmyolo/",
            ],
            EngineName::Openmmlab,
        ),
        // faster-whisper and whisper-ctranslate2 run on CTranslate2 (its own CUDA allocator).
        (
            &["/faster_whisper/", "/ctranslate2/", "/whisper_ctranslate2/"],
            EngineName::Ctranslate2,
        ),
        // openai-whisper by its modules (a user's `whisper/` folder or `my_whisper.py` is not).
        (
            &[
                "-packages/whisper/",
                "/whisper/transcribe.py",
                "/whisper/decoding.py",
                "/whisper/model.py",
                "/whisper/audio.py",
                "/whisper/timing.py",
            ],
            EngineName::Whisper,
        ),
        (&["/mii/"], EngineName::Deepspeed),
        (&["/peft/"], EngineName::Peft),
        (
            &[
                "/lightning/pytorch/",
                "/lightning/fabric/",
                "/pytorch_lightning/",
                "/lightning_fabric/",
            ],
            EngineName::Lightning,
        ),
        (&["/deepspeed/"], EngineName::Deepspeed),
        (&["/diffusers/"], EngineName::Diffusers),
        // Fine-tuning wrappers not in the engine list, named by what they run on: kohya-ss
        // sd-scripts under `accelerate launch`; axolotl, LLaMA-Factory (once `llmtuner`),
        // ms-swift, Unsloth and AutoTrain on the transformers `Trainer`.
        (&["/kohya_ss/", "/sd-scripts/"], EngineName::Accelerate),
        (
            &[
                "/axolotl/",
                "/llamafactory/",
                "/llama-factory/",
                "/llmtuner/",
                "/ms-swift/",
                "/swift/llm/",
                "/swift/trainers/",
                "/swift/cli/",
                "/unsloth/",
                "/unsloth_zoo/",
                "/autotrain/",
            ],
            EngineName::Transformers,
        ),
        (&["/accelerate/"], EngineName::Accelerate),
        // TRL's trainers subclass the transformers Trainer. A model's own code fetched from
        // the Hub (`trust_remote_code=True`) is loaded by transformers as the package
        // `transformers_modules` (`dynamic_module_utils.py` `TRANSFORMERS_DYNAMIC_MODULE_NAME`,
        // under `~/.cache/huggingface/modules/`).
        (
            &["/transformers/", "/trl/", "/transformers_modules/"],
            EngineName::Transformers,
        ),
        // T5X and Pax run on JAX.
        (
            &[
                "/jax/", "/jaxlib/", "/flax/", "/t5x/", "/paxml/", "/praxis/",
            ],
            EngineName::Jax,
        ),
        // Keras 3 runs on the backend it was given: its torch backend's frames
        // (`keras/src/backend/torch/`) are PyTorch's work (its JAX backend's hold `/jax/`).
        (&["/keras/src/backend/torch/"], EngineName::Pytorch),
        (
            &["/tensorflow/", "/keras/", "/tf_keras/"],
            EngineName::Tensorflow,
        ),
        // Triton's compiler and launcher come with PyTorch (its dependency, inductor's back end)
        // and run on its tensors.
        (&["/torch/", "/triton/"], EngineName::Pytorch),
    ];
    TABLE
        .iter()
        .find(|(needles, name)| {
            let within = if framework(*name) { package } else { path };
            needles.iter().any(|needle| has(within, needle))
        })
        .map(|(_, name)| *name)
}
