//! The frame rules of image apps: AUTOMATIC1111 and Forge, ComfyUI, Fooocus, InvokeAI, kohya-ss
//! sd-scripts.
//! `rules.rs` orders the segments into one table (the first rule that matches applies).

use super::r;
use crate::analyze::phase::FrameRule;
use crate::analyze::phase::Role::{Move, Offload, Serve, Stage};
use crate::model::explain::Phase::{
    Inference as I, Startup as S, TrainingStep as T, WeightsLoad as W,
};

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_KOHYA_TO_FORGE: &[FrameRule] = &[
    // --- kohya-ss sd-scripts `library/train_util.py` `sample_images_common` (sample images
    // during training), `load_target_model` (`train_util.py`, `sdxl_train_util.py`). ---
    r("sample_images_common", "", I, Serve, "kohya-ss"),
    r(
        "sample_images",
        "library/train_util.py",
        I,
        Serve,
        "kohya-ss",
    ),
    r("load_target_model", "", W, Stage, "kohya-ss"),
    // --- ComfyUI `comfy/sd.py`: `load_checkpoint_guess_config`, `load_diffusion_model`,
    // `load_unet`, `load_clip` (checkpoint loaders), `CLIP.encode_from_tokens` (text encode),
    // `VAE.decode_tiled` / `encode_tiled`; `comfy_extras/nodes_upscale_model.py`
    // `ImageUpscaleWithModel.upscale`. ---
    r(
        "load_checkpoint_guess_config",
        "comfy/",
        W,
        Stage,
        "comfyui",
    ),
    r("load_diffusion_model", "comfy/", W, Stage, "comfyui"),
    // ComfyUI's attention functions (`comfy/ldm/modules/attention.py`: `attention_pytorch`,
    // `attention_split`, `attention_sub_quad`, their `wrapper`) run only inside a model's
    // forward (sampling, encoding, decoding), as `forward` of `comfy/ldm/` does.
    r("", "comfy/ldm/modules/attention.py", I, Serve, "comfyui"),
    // ComfyUI's layers that cast their weights to the compute dtype and device at each call
    // (`comfy/ops.py` `CastWeightBiasOp` layers: `forward` → `forward_comfy_cast_weights` →
    // `cast_bias_weight`, 2023-2026): a forward of the model at work, not a conversion of
    // its stored weights (session 45).
    r(
        "forward_comfy_cast_weights",
        "comfy/ops.py",
        I,
        Serve,
        "comfyui",
    ),
    r("load_unet", "comfy/", W, Stage, "comfyui"),
    r("load_clip", "comfy/", W, Stage, "comfyui"),
    r("encode_from_tokens", "comfy/sd.py", I, Serve, "comfyui"),
    r("decode_tiled", "comfy/sd.py", I, Serve, "comfyui"),
    r("encode_tiled", "comfy/sd.py", I, Serve, "comfyui"),
    r(
        "upscale",
        "comfy_extras/nodes_upscale_model.py",
        I,
        Serve,
        "comfyui",
    ),
    // --- InvokeAI 3.x–5.x: an invocation's `invoke` (`app/invocations/*.py`: denoise, latents
    // to image, …) runs the model; loading it onto the GPU happens inside, in the model
    // cache's `lock` (`backend/model_manager/load/model_cache/`, `_load_locked_model` in 5.x)
    // and `LoadedModel.model_on_device`. ---
    r("invoke", "invokeai/app/invocations/", I, Serve, "invokeai"),
    r(
        "lock",
        "invokeai/backend/model_manager/",
        W,
        Stage,
        "invokeai",
    ),
    r("_load_locked_model", "invokeai/", W, Stage, "invokeai"),
    r("model_on_device", "invokeai/", W, Stage, "invokeai"),
    // --- Forge (lllyasviel/stable-diffusion-webui-forge 2024+) `modules/sd_models.py`
    // `forge_model_reload`. ---
    r(
        "forge_model_reload",
        "modules/sd_models.py",
        W,
        Stage,
        "automatic1111",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const QUALIFIED_A1111_SAMPLERS: &[FrameRule] = &[
    // --- AUTOMATIC1111 1.6+: `modules/sd_samplers_timesteps.py` (DDIM/PLMS/UniPC) and
    // `modules/sd_samplers_compvis.py` (≤ 1.5) `sample`; `modules/upscaler.py`
    // `Upscaler.upscale` (hires fix, extras), `modules/postprocessing.py` `run_postprocessing`,
    // `modules/face_restoration.py` `restore_faces`; Forge `backend/sampling/
    // sampling_function.py` `sampling_function`. ---
    r(
        "sample",
        "modules/sd_samplers_timesteps.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "sample",
        "modules/sd_samplers_compvis.py",
        I,
        Serve,
        "automatic1111",
    ),
    r("upscale", "modules/upscaler.py", I, Serve, "automatic1111"),
    r(
        "run_postprocessing",
        "modules/postprocessing.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "restore_faces",
        "modules/face_restoration.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "sampling_function",
        "backend/sampling/",
        I,
        Serve,
        "automatic1111",
    ),
    // --- CompVis latent diffusion's samplers (`ldm/models/diffusion/ddim.py` `DDIMSampler.
    // sample` → `ddim_sampling` → `p_sample_ddim`, `plms.py` `plms_sampling` →
    // `p_sample_plms`), copied by stable-diffusion, ControlNet, textual inversion and many
    // research repos, and the image logging of their training (`ldm/models/diffusion/ddpm.py`
    // and ControlNet's `cldm/cldm.py` `log_images` → `sample_log`, run by the logger callback
    // between steps): images sampled from the model, not a training step (session 45). ---
    r("ddim_sampling", "", I, Serve, "latent diffusion"),
    r("p_sample_ddim", "", I, Serve, "latent diffusion"),
    r("plms_sampling", "", I, Serve, "latent diffusion"),
    r("p_sample_plms", "", I, Serve, "latent diffusion"),
    r(
        "sample",
        "models/diffusion/ddim.py",
        I,
        Serve,
        "latent diffusion",
    ),
    r(
        "sample",
        "models/diffusion/plms.py",
        I,
        Serve,
        "latent diffusion",
    ),
    r(
        "log_images",
        "models/diffusion/ddpm.py",
        I,
        Serve,
        "latent diffusion",
    ),
    r("log_images", "cldm/", I, Serve, "latent diffusion"),
    r("sample_log", "", I, Serve, "latent diffusion"),
    // --- Session 34: AUTOMATIC1111 1.6+ and Forge `modules/sd_samplers_common.py`
    // `Sampler.launch_sampling` (called from `modules/sd_samplers_kdiffusion.py`
    // `KDiffusionSampler.sample` / `sample_img2img`, and the timestep samplers): runs the
    // sampler's denoising loop of a generation. crowsonkb/k-diffusion `k_diffusion/sampling.py`
    // (vendored by the web UI's `repositories/k-diffusion`, by Forge's `k_diffusion/` and by
    // ComfyUI's `comfy/k_diffusion/sampling.py`): the samplers (`sample_euler`,
    // `sample_dpmpp_2m`, …) and their helpers (`to_d`, `get_ancestral_step`, the noise
    // samplers), all run while the latents are denoised. ---
    r(
        "launch_sampling",
        "modules/sd_samplers_",
        I,
        Serve,
        "automatic1111",
    ),
    r("", "k_diffusion/sampling.py", I, Serve, "k-diffusion"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const DIFFUSERS_COMFYUI_A1111: &[FrameRule] = &[
    // --- diffusers (pipelines/pipeline_utils.py) and ComfyUI (comfy/model_management.py) ---
    r("enable_model_cpu_offload", "", W, Stage, "diffusers"),
    r("enable_sequential_cpu_offload", "", W, Stage, "diffusers"),
    r("__call__", "diffusers/pipelines/", I, Serve, "diffusers"),
    // The pipelines that video and image projects copy from diffusers keep its file names
    // (`cogvideox/pipeline/pipeline_cogvideox_inpaint.py`, `wan/pipeline/pipeline_wan.py`,
    // `animatediff/pipelines/pipeline_animation.py`) and its `decode_latents` step (latents to
    // pixels through the VAE, after the denoising loop): a pipeline called is a generation.
    r("__call__", "/pipeline_", I, Serve, "diffusers"),
    r("decode_latents", "", I, Serve, "diffusers"),
    r("load_models_gpu", "", W, Stage, "comfyui"),
    // `comfy/sampler_helpers.py` `prepare_sampling` (2024-2025; called first by
    // `comfy/samplers.py` `CFGGuider.sample` and `comfy/sample.py`): loads the sampler's
    // models onto the GPU through `load_models_gpu` before sampling starts.
    r("prepare_sampling", "comfy/", W, Stage, "comfyui"),
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
    // ComfyUI's root `nodes.py`: `KSampler.sample` / `KSamplerAdvanced.sample` (which call
    // `common_ksampler`), `VAEDecode.decode`, `VAEEncode.encode` generate. `execution.py`'s own
    // frames (`execute`, `get_output_data`, `_map_node_over_list`) run every node, loaders
    // included, and show no stage by themselves.
    r("sample", "ComfyUI/nodes.py", I, Serve, "comfyui"),
    r("decode", "ComfyUI/nodes.py", I, Serve, "comfyui"),
    r("encode", "ComfyUI/nodes.py", I, Serve, "comfyui"),
    // `comfy/ldm/` holds the model architectures (`comfy/ldm/wan/model.py`, `flux/model.py`,
    // `modules/diffusionmodules/openaimodel.py`): their `forward` runs only when a node samples
    // or encodes/decodes; loading builds them without running it.
    r("forward", "comfy/ldm/", I, Serve, "comfyui"),
    // --- AUTOMATIC1111 (modules/devices.py `first_time_calculation`, run by
    // `modules/initialize.py` before the model loads: a 1x1 linear and conv "the first time this
    // is done it allocates about 700MB of memory", i.e. the CUDA context and cuBLAS/cuDNN
    // handles) ---
    r(
        "first_time_calculation",
        "modules/devices.py",
        S,
        Stage,
        "automatic1111",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const FOOOCUS_PIPELINE: &[FrameRule] = &[
    // Fooocus `modules/default_pipeline.py`: `refresh_everything` (re)loads the base and
    // refiner checkpoints, LoRAs and text encoder (`refresh_base_model`, `prepare_text_encoder`
    // → `load_models_gpu`) when a task changes them or at start.
    r(
        "refresh_everything",
        "modules/default_pipeline.py",
        W,
        Stage,
        "fooocus",
    ),
    r(
        "refresh_base_model",
        "modules/default_pipeline.py",
        W,
        Stage,
        "fooocus",
    ),
    r(
        "prepare_text_encoder",
        "modules/default_pipeline.py",
        W,
        Stage,
        "fooocus",
    ),
    // Fooocus ships ComfyUI's backend renamed (`backend/headless/fcbh/`, later `ldm_patched/`).
    r("decode", "fcbh/sd.py", I, Serve, "fooocus"),
    r("encode", "fcbh/sd.py", I, Serve, "fooocus"),
    r("decode", "ldm_patched/modules/sd.py", I, Serve, "fooocus"),
    r("encode", "ldm_patched/modules/sd.py", I, Serve, "fooocus"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const A1111_WEBUI: &[FrameRule] = &[
    // --- AUTOMATIC1111 web UI (1.0–1.10 `modules/processing.py`: `process_images` →
    // `process_images_inner` → `p.sample` (txt2img: `StableDiffusionProcessingTxt2Img.sample`,
    // hires fix `sample_hr_pass`), then `decode_latent_batch` → `sd_samplers_common.
    // decode_first_stage` (the VAE decode); `modules/sd_samplers_kdiffusion.py` `sample` /
    // `sample_img2img`). `modules/sd_hijack_optimizations.py` holds only the attention forwards
    // the web UI swaps into the UNet and VAE (`split_cross_attention_forward`,
    // `xformers_attention_forward`, `sub_quad_attention_forward`, `cross_attention_attnblock_
    // forward`…): they run while a picture is generated. Its own training tabs
    // (`modules/textual_inversion/textual_inversion.py` `train_embedding`,
    // `modules/hypernetworks/hypernetwork.py` `train_hypernetwork`) run the same UNet, so they
    // are stages that keep the forward below them a training step. Forge and SD.Next keep these
    // files and names. ---
    r(
        "train_embedding",
        "modules/textual_inversion/",
        T,
        Stage,
        "automatic1111",
    ),
    r(
        "train_hypernetwork",
        "modules/hypernetworks/",
        T,
        Stage,
        "automatic1111",
    ),
    r(
        "process_images",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
    // The tabs' own entries (`modules/txt2img.py` `txt2img`, `modules/img2img.py` `img2img`,
    // which call `process_images`), and the UNet forward the web UI swaps in
    // (`modules/sd_unet.py` `UNetModel_forward`, 1.3+): a picture being generated.
    r("txt2img", "modules/txt2img.py", I, Serve, "automatic1111"),
    r("img2img", "modules/img2img.py", I, Serve, "automatic1111"),
    r(
        "UNetModel_forward",
        "modules/sd_unet.py",
        I,
        Serve,
        "automatic1111",
    ),
    // Forge's own model code (`backend/nn/flux.py`, `unet.py`, `chroma.py`, 2024+): Forge
    // trains nothing, so its models run to generate.
    r("", "backend/nn/", I, Serve, "automatic1111"),
    // Stability AI's generative-models demos (`scripts/demo/streamlit_helpers.py` `do_sample`,
    // SVD's and SDXL's sampling, then `model.decode_first_stage` of the latents).
    r(
        "do_sample",
        "scripts/demo/streamlit_helpers.py",
        I,
        Serve,
        "sgm",
    ),
    r(
        "process_images_inner",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
    r("sample", "modules/processing.py", I, Serve, "automatic1111"),
    r(
        "sample_hr_pass",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "decode_latent_batch",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "decode_first_stage",
        "modules/sd_samplers_common.py",
        I,
        Serve,
        "automatic1111",
    ),
    // --- SD.Next (vladmandic/sdnext, 2024–2025 `modules/processing_diffusers.py`:
    // `process_diffusers` runs a generation's passes, `process_base` the pipeline call of the
    // first, `process_hires` the hires-fix pass, `process_refine` the refiner and the decode;
    // its RuntimeError handler logs `Processing: …` through `errors.display`). ---
    r(
        "process_diffusers",
        "modules/processing_diffusers.py",
        I,
        Serve,
        "sdnext",
    ),
    r(
        "process_base",
        "modules/processing_diffusers.py",
        I,
        Serve,
        "sdnext",
    ),
    r(
        "process_hires",
        "modules/processing_diffusers.py",
        I,
        Serve,
        "sdnext",
    ),
    r(
        "process_refine",
        "modules/processing_diffusers.py",
        I,
        Serve,
        "sdnext",
    ),
    r(
        "sample",
        "modules/sd_samplers_kdiffusion.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "sample_img2img",
        "modules/sd_samplers_kdiffusion.py",
        I,
        Serve,
        "automatic1111",
    ),
    r(
        "",
        "modules/sd_hijack_optimizations.py",
        I,
        Serve,
        "automatic1111",
    ),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const FOOOCUS_WORKER: &[FrameRule] = &[
    // --- Fooocus 2.x (`modules/async_worker.py` `process_task` runs one image task;
    // `modules/default_pipeline.py` `process_diffusion` samples and decodes; `modules/core.py`
    // `ksampler`, `decode_vae`, `encode_vae`). Its loaders are matched above. ---
    r(
        "process_task",
        "modules/async_worker.py",
        I,
        Serve,
        "fooocus",
    ),
    r(
        "process_diffusion",
        "modules/default_pipeline.py",
        I,
        Serve,
        "fooocus",
    ),
    r("ksampler", "modules/core.py", I, Serve, "fooocus"),
    r("decode_vae", "modules/core.py", I, Serve, "fooocus"),
    r("encode_vae", "modules/core.py", I, Serve, "fooocus"),
];

/// A segment of the frame table (its place in the order: `rules.rs` `SEGMENTS`).
pub(super) const A1111_LOADING: &[FrameRule] = &[
    // --- AUTOMATIC1111 loading and low-VRAM mode (1.0–1.10 `modules/sd_models.py`:
    // `reload_model_weights` / `load_model_weights` read a checkpoint into the model,
    // `send_model_to_device` moves it; `modules/sd_vae.py` `reload_vae_weights` / `load_vae`;
    // `modules/lowvram.py` `send_me_to_gpu` is the forward pre-hook of `--medvram`/`--lowvram`
    // that moves each part onto the GPU when the forward needs it; `modules/txt2img.py`
    // `txt2img` and `modules/img2img.py` `img2img` are the generate buttons; before 1.6
    // `decode_first_stage` lived in `modules/processing.py`). ---
    r(
        "reload_model_weights",
        "modules/sd_models.py",
        W,
        Stage,
        "automatic1111",
    ),
    r(
        "load_model_weights",
        "modules/sd_models.py",
        W,
        Stage,
        "automatic1111",
    ),
    r(
        "send_model_to_device",
        "modules/sd_models.py",
        W,
        Move,
        "automatic1111",
    ),
    r(
        "reload_vae_weights",
        "modules/sd_vae.py",
        W,
        Stage,
        "automatic1111",
    ),
    r("load_vae", "modules/sd_vae.py", W, Stage, "automatic1111"),
    r(
        "send_me_to_gpu",
        "modules/lowvram.py",
        W,
        Offload,
        "automatic1111",
    ),
    r("txt2img", "modules/txt2img.py", I, Serve, "automatic1111"),
    r("img2img", "modules/img2img.py", I, Serve, "automatic1111"),
    r(
        "decode_first_stage",
        "modules/processing.py",
        I,
        Serve,
        "automatic1111",
    ),
];
