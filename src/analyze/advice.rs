//! Next steps: what to change, in the flags and settings of the engine that failed and of its
//! version (the "what to do" half of the verdict; `verdict.rs` decides the cause). Every flag
//! named here exists in that engine; the sources are cited beside each engine.

use std::collections::BTreeMap;

use super::verdict::{at_least, Builder};
use crate::model::explain::{Cause, EngineConfig, Phase};
use crate::model::failure::{EngineName, OomKind, OomMessage};
use crate::model::Bytes;

fn allocator_step(builder: &mut Builder<'_>, failure: &OomMessage) {
    // torch_npu's caching allocator reads a variable of its own (`PYTORCH_NPU_ALLOC_CONF`, with
    // `expandable_segments`, `max_split_size_mb` and `garbage_collection_threshold` as CUDA's).
    if failure.kind == OomKind::NpuOutOfMemory {
        builder.step(
            "set `PYTORCH_NPU_ALLOC_CONF=expandable_segments:True` (torch_npu reads this name, not `PYTORCH_CUDA_ALLOC_CONF`) so freed blocks can be remapped instead of stranded; on older torch_npu `max_split_size_mb:128`",
        );
        return;
    }
    let torch = torch_from_wording(failure, builder.inputs.versions);
    match torch.as_deref() {
        Some(version) if at_least(Some(version), &[2, 10], false) => builder.step(
            "set `PYTORCH_ALLOC_CONF=expandable_segments:True` (PyTorch 2.10+ reads this name and the older `PYTORCH_CUDA_ALLOC_CONF`) so freed blocks can be remapped instead of stranded",
        ),
        Some(version) if at_least(Some(version), &[2, 1], false) => builder.step(
            "set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (PyTorch ≥ 2.1) so freed blocks can be remapped instead of stranded",
        ),
        Some(_) => builder.step(
            "this PyTorch predates expandable segments (2.1): set `PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128` to limit splitting of large blocks, or upgrade PyTorch",
        ),
        None => builder.step(
            "if PyTorch ≥ 2.1, set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`; on older versions `max_split_size_mb:128`",
        ),
    }
}

pub(super) fn next_steps(builder: &mut Builder<'_>, cause: Cause, failure: &OomMessage) {
    let inputs = builder.inputs;
    let engine = inputs.engine.name;
    let version = inputs.engine.version.as_deref();
    let phase = inputs.phase.failed_in;
    let config = inputs.config;

    match cause {
        Cause::OtherProcessesHoldMemory => {
            builder.step("stop the other processes on this GPU, or move this job to a free GPU (`oomdoc gpus` lists every process by GPU UUID)");
        }
        Cause::FreeMemoryBelowRequested => {
            builder.step("check what else holds memory on the GPU (`oomdoc gpus`), including a previous instance still shutting down");
        }
        // CTranslate2 has its own allocator: PyTorch's snapshot and settings do not reach it.
        Cause::FragmentationPlausible if engine != EngineName::Ctranslate2 => {
            builder.step("confirm with a memory snapshot: `torch.cuda.memory._record_memory_history()` then `_dump_snapshot()`, and `oomdoc snapshot FILE`");
            allocator_step(builder, failure);
        }
        Cause::RequestLargerThanGpu => {
            builder.step("find the allocation in the traceback: one tensor of this size cannot exist on this card; reduce the batch size, sequence length or the dimension that makes it this large, or shard it over several GPUs");
        }
        Cause::SizeOverflow if failure.details.usage_with_request_bytes.is_some() => {
            // HAMi-core's wrapped usage counter: the sharing layer's count, not the program.
            builder.step("restart the pod (or the processes sharing the GPU) to reset HAMi-core's usage count, and update HAMi-core (`libvgpu.so`): its counter went below zero and wrapped, so every allocation is refused");
            return;
        }
        Cause::SizeOverflow => {
            // An overflowed size: smaller batches do not fix it (rule 2).
            builder.step("find the allocation in the traceback and print the shape and dtype it was computed from: a size this large comes from an overflowed, negative or uninitialised dimension (or a wrong element size), so lowering the batch size will not help");
            builder.step("check the inputs that set that dimension (an empty or corrupt sample, a `-1` length, a mismatched config value) and the versions of the library that computes it; rerun with `CUDA_LAUNCH_BLOCKING=1` if the traceback looks unrelated");
            return;
        }
        _ => {}
    }

    // ncnn's Vulkan allocator (the ncnn-vulkan upscalers and interpolators: Upscayl,
    // Real-ESRGAN, waifu2x, RIFE) runs no PyTorch: its tiles are what fit.
    if engine == EngineName::Other && failure.text.contains("vkAllocateMemory failed") {
        builder.step("lower the tile size (`-t` of the realesrgan/waifu2x/rife `-ncnn-vulkan` programs, Upscayl's tile size setting) or the scale: each tile's buffers must fit the GPU's memory");
        builder.step("close other programs that use the GPU; on an integrated GPU, raise the memory the firmware gives it (the BIOS's UMA frame buffer size)");
        return;
    }
    match engine {
        EngineName::Vllm | EngineName::Aphrodite => {
            vllm_steps(builder, cause, phase, config, version, failure)
        }
        EngineName::Sglang => sglang_steps(builder, cause, phase, failure),
        EngineName::Tgi => tgi_steps(builder, cause, phase),
        EngineName::Llamacpp => llama_steps(builder, cause, phase, false),
        EngineName::Ollama => llama_steps(builder, cause, phase, true),
        EngineName::TensorrtLlm => tensorrt_llm_steps(builder, cause),
        EngineName::Lmdeploy => lmdeploy_steps(builder, cause, phase),
        EngineName::Exllamav2 => exllamav2_steps(builder, cause, phase),
        EngineName::MlcLlm => mlc_llm_steps(builder, cause),
        EngineName::Comfyui
        | EngineName::Automatic1111
        | EngineName::Invokeai
        | EngineName::Fooocus
        | EngineName::Diffusers => image_app_steps(builder, cause, engine),
        EngineName::Ultralytics => ultralytics_steps(builder, cause, phase),
        EngineName::Detectron2 => detectron2_steps(builder, cause, phase),
        EngineName::Openmmlab => openmmlab_steps(builder, cause, phase),
        EngineName::Whisper => whisper_steps(builder, cause, phase),
        EngineName::Ctranslate2 => ctranslate2_steps(builder, cause, phase),
        EngineName::Jax => jax_steps(builder, cause),
        EngineName::Tensorflow => tensorflow_steps(builder, cause),
        EngineName::Transformers
        | EngineName::Accelerate
        | EngineName::Peft
        | EngineName::Lightning
        | EngineName::Deepspeed
        | EngineName::Pytorch
        | EngineName::Other => torch_steps(builder, cause, phase, failure, engine),
    }
}

/// TensorRT-LLM: the engine build (TensorRT sizes activations for the largest shapes at build
/// time) and the runtime's KV-cache share of the free memory. Sources: "Memory Usage of
/// TensorRT-LLM" (https://nvidia.github.io/TensorRT-LLM/reference/memory.html), `KvCacheConfig`
/// (https://nvidia.github.io/TensorRT-LLM/llm-api/reference/KvCacheConfig.html, default
/// `free_gpu_memory_fraction=0.9`), the Triton backend's `kv_cache_free_gpu_mem_fraction`.
fn tensorrt_llm_steps(builder: &mut Builder<'_>, cause: Cause) {
    let building = builder.inputs.messages.iter().any(|m| {
        [
            "resizePhysical",
            "makeResizableGpuMemory",
            "Engine building failed",
            "Requested amount of GPU memory",
        ]
        .iter()
        .any(|needle| m.text.contains(needle))
    });
    if building {
        builder.step("the engine build ran out of memory: TensorRT sizes activation memory for the largest shapes at build time, so rebuild with smaller limits (`trtllm-build --max_batch_size`, `--max_num_tokens`, `--max_seq_len` / `--max_input_len`)");
        builder.step("or build on a larger GPU, or split the model: convert the checkpoint with `--tp_size N` / `--pp_size N` so each rank's engine holds a part");
        return;
    }
    match cause {
        Cause::OtherProcessesHoldMemory | Cause::FreeMemoryBelowRequested => builder.step("or lower the KV-cache share of free memory (`kv_cache_free_gpu_mem_fraction` in the Triton `config.pbtxt` or `--kv_cache_free_gpu_mem_fraction`; `KvCacheConfig(free_gpu_memory_fraction=…)` in the LLM API / `trtllm-serve`)"),
        _ => {
            builder.step("lower the KV-cache share of free memory (default 0.9): `kv_cache_free_gpu_mem_fraction` in the Triton `config.pbtxt` or benchmark flags, `KvCacheConfig(free_gpu_memory_fraction=…)` or `max_tokens` in the LLM API / `trtllm-serve`, so activations and other buffers keep room");
            builder.step("rebuild (or restart the PyTorch backend) with smaller `max_batch_size` and `max_num_tokens`: the runtime's activation buffers are sized for them");
            builder.step("or use more GPUs (`--tp_size`) or FP8/INT4 weights and an FP8 KV cache");
        }
    }
}

/// LMDeploy: `cache_max_entry_count` is the share of the free memory (after the weights) taken
/// by the KV cache, default 0.8 (https://lmdeploy.readthedocs.io/en/latest/api/pipeline.html,
/// `TurbomindEngineConfig` / `PytorchEngineConfig`; CLI `--cache-max-entry-count`).
fn lmdeploy_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase) {
    if cause == Cause::WeightsDoNotFit || phase == Phase::WeightsLoad {
        builder.step("use more GPUs (`--tp N`) or a 4-bit AWQ model (`--model-format awq`)");
    }
    builder.step("lower `--cache-max-entry-count` (`cache_max_entry_count` in `TurbomindEngineConfig` / `PytorchEngineConfig`; default 0.8 of the memory free after the weights) to leave room for activations, a vision encoder or other processes");
    builder.step("lower `--session-len` and `--max-batch-size`, or quantize the KV cache with `--quant-policy 8` (or 4)");
}

/// ExLlamaV2 and TabbyAPI: the cache is allocated up front for `max_seq_len` (× batch), the
/// weights are placed by `gpu_split` or autosplit (turboderp/exllamav2 `exllamav2/cache.py`,
/// `model.load(gpu_split=…)`; theroyallab/tabbyAPI `config_sample.yml`: `max_seq_len`,
/// `cache_size`, `cache_mode`, `gpu_split_auto`, `gpu_split`, `autosplit_reserve`).
fn exllamav2_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase) {
    if cause == Cause::WeightsDoNotFit || phase == Phase::WeightsLoad {
        builder.step("place the weights by hand with `gpu_split` (GiB per GPU, e.g. `[20, 24]`; TabbyAPI `gpu_split_auto: false` + `gpu_split`, text-generation-webui `--gpu-split`), leaving headroom on each card, or load a lower-bpw quant");
    }
    builder.step("shrink the cache: a smaller `max_seq_len` / `cache_size`, or a quantized cache (`ExLlamaV2Cache_Q4` / `Q8`; TabbyAPI `cache_mode: Q4`)");
    builder.step("with autosplit, reserve more per GPU (TabbyAPI `autosplit_reserve`) so activations and the cache still fit after the weights");
}

/// MLC-LLM: `mlc_llm serve --mode local|interactive|server` and `--overrides` with
/// `gpu_memory_utilization`, `context_window_size`, `max_num_sequence`, `prefill_chunk_size`
/// (https://llm.mlc.ai/docs/deploy/rest.html).
fn mlc_llm_steps(builder: &mut Builder<'_>, cause: Cause) {
    if cause == Cause::WeightsDoNotFit {
        builder.step("use a smaller quantization (e.g. `q4f16_1`) or more GPUs (`--overrides \"tensor_parallel_shards=N\"`)");
    }
    builder.step("shrink the KV cache and buffers: `mlc_llm serve … --mode local` (or `interactive`), or `--overrides \"context_window_size=…;max_num_sequence=…;prefill_chunk_size=…;gpu_memory_utilization=0.8\"`");
}

/// Image apps and diffusers pipelines. Sources: diffusers "Reduce memory usage"
/// (https://huggingface.co/docs/diffusers/optimization/memory); ComfyUI `comfy/cli_args.py`
/// (`--lowvram`, `--novram`, `--reserve-vram`, `--disable-smart-memory`); AUTOMATIC1111
/// `modules/cmd_args.py` (`--medvram`, `--medvram-sdxl`, `--lowvram`); InvokeAI "Low-VRAM mode"
/// (https://invoke-ai.github.io/InvokeAI/features/low-vram/: `enable_partial_loading`,
/// `device_working_mem_gb`).
fn image_app_steps(builder: &mut Builder<'_>, cause: Cause, engine: EngineName) {
    if cause.memory_held_elsewhere() {
        builder.step("close other GPU programs (another UI, a game, a second generation backend) before generating");
    }
    match engine {
        EngineName::Comfyui => {
            builder.step("start ComfyUI with `--lowvram` (loads the model in parts), or `--novram` on very small cards; `--reserve-vram 1.0` keeps room for the OS and other apps");
            builder.step("decode with the `VAE Decode (Tiled)` node for large images or videos, and lower the resolution, frame count or batch size");
        }
        EngineName::Automatic1111 => {
            builder.step("add `--medvram` (or `--medvram-sdxl` for SDXL models only) to `COMMANDLINE_ARGS`; `--lowvram` on cards of 4 GiB or less");
            builder.step("use a memory-efficient attention (`--xformers` or `--opt-sdp-attention`), lower the resolution or batch size, and use tiled VAE decoding for large images");
            // Forge (lllyasviel/stable-diffusion-webui-forge) manages memory itself: the "GPU
            // Weights (MB)" slider of its top bar (`modules_forge/main_entry.py`) and the built-in
            // "Never OOM Integrated" script (`extensions-builtin/sd_forge_neveroom`: UNet always
            // offloaded, VAE always tiled).
            builder.step("on the Forge fork, which manages memory itself: lower the \"GPU Weights\" slider to leave more for computation, or turn on \"Never OOM Integrated\" (UNet offloaded, VAE always tiled)");
        }
        EngineName::Invokeai => {
            builder.step("turn on low-VRAM mode in `invokeai.yaml`: `enable_partial_loading: true` (InvokeAI 5.6+), and raise `device_working_mem_gb` if the failure is in VAE decode");
            builder.step("lower the resolution or the number of images per batch");
        }
        EngineName::Fooocus => {
            builder.step("start Fooocus with `--always-low-vram` (loads the model in parts; `--always-no-vram` on very small cards) and `--always-offload-from-vram` so models leave the GPU after each use");
            builder.step("generate fewer images per run (Image Number) or at a smaller aspect ratio; `--unet-in-fp8-e4m3fn` stores the diffusion model in 8 bits");
        }
        _ => {
            builder.step("load the pipeline in half precision (`torch_dtype=torch.float16` or `bfloat16`) and offload idle parts: `pipe.enable_model_cpu_offload()` (or `enable_sequential_cpu_offload()` for the least memory, much slower)");
            builder.step("for large images decode in tiles: `pipe.vae.enable_tiling()`; `pipe.enable_attention_slicing()` trades speed for a smaller attention peak");
        }
    }
}

/// Host RAM and shared memory in the applications' own settings: the dataset cache and the
/// data-loading workers (Ultralytics `cache`, `workers` in `ultralytics/cfg/default.yaml`;
/// Detectron2 `DATALOADER.NUM_WORKERS` in `detectron2/config/defaults.py`; MMEngine
/// `train_dataloader.num_workers`).
pub(super) fn host_steps(builder: &mut Builder<'_>, cause: Cause) {
    let host = cause == Cause::HostMemory;
    let shm = cause == Cause::SharedMemory;
    if !(host || shm) {
        return;
    }
    match builder.inputs.engine.name {
        EngineName::Ultralytics => {
            if host {
                builder.step("Ultralytics: `cache=False` (or `cache='disk'`): `cache=True` / `'ram'` loads the whole decoded dataset into RAM");
            }
            builder.step("Ultralytics: fewer data-loading workers, `workers=2` (8 per GPU by default)");
        }
        EngineName::Detectron2 => builder.step(
            "Detectron2: fewer data-loading workers, `DATALOADER.NUM_WORKERS 2` (each holds batches in RAM and /dev/shm)",
        ),
        EngineName::Openmmlab => builder.step("OpenMMLab: fewer data-loading workers, `--cfg-options train_dataloader.num_workers=2` (`data.workers_per_gpu` in MMCV 1.x configs)"),
        _ => {}
    }
}

/// Whether the failure is in training (by the phase or the cause).
fn training(cause: Cause, phase: Phase) -> bool {
    cause == Cause::TrainingMemory || phase == Phase::TrainingStep
}

/// Ultralytics YOLO: `ultralytics/cfg/default.yaml` (8.3: `batch` "batch size as int, or float
/// 0.0–1.0 for AutoBatch fraction of GPU memory", -1 for AutoBatch at the default 60 %;
/// `imgsz`, `amp`, `half`), `ultralytics/utils/autobatch.py`.
fn ultralytics_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase) {
    if training(cause, phase) {
        builder.step("lower `batch=` (`yolo train … batch=8`, `model.train(batch=8)`), or let AutoBatch pick the largest batch that fits: `batch=-1` (60 % of the GPU) or a fraction such as `batch=0.70`");
        builder.step("lower `imgsz=` (memory grows with its square) and keep `amp=True` (mixed precision, the default)");
    } else {
        builder.step("lower `batch=` and `imgsz=` of `predict` / `val` (`model.predict(…, batch=1, imgsz=640)`), and use `half=True` for FP16 inference");
    }
}

/// Detectron2: `detectron2/config/defaults.py` (`SOLVER.IMS_PER_BATCH` = 16 images per step over
/// all GPUs, `INPUT.MIN_SIZE_TRAIN` = (800,), `INPUT.MAX_SIZE_TRAIN` = 1333,
/// `MODEL.ROI_HEADS.BATCH_SIZE_PER_IMAGE` = 512, `SOLVER.AMP.ENABLED`, `INPUT.MIN_SIZE_TEST`,
/// `INPUT.MAX_SIZE_TEST`, `TEST.DETECTIONS_PER_IMAGE`).
fn detectron2_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase) {
    if training(cause, phase) {
        builder.step("lower `SOLVER.IMS_PER_BATCH` (images per step over all GPUs; scale `SOLVER.BASE_LR` with it) and the training size `INPUT.MIN_SIZE_TRAIN` / `INPUT.MAX_SIZE_TRAIN`");
        builder.step("lower `MODEL.ROI_HEADS.BATCH_SIZE_PER_IMAGE` (RoIs sampled per image, default 512) and train in mixed precision with `SOLVER.AMP.ENABLED True`");
    } else {
        builder.step("lower the test size `INPUT.MIN_SIZE_TEST` / `INPUT.MAX_SIZE_TEST` and `TEST.DETECTIONS_PER_IMAGE`, and run one image at a time");
    }
}

/// OpenMMLab on MMEngine (MMDetection 3.x `tools/train.py` `--amp`, `--cfg-options`;
/// `mmengine/optim/optimizer/optimizer_wrapper.py` `accumulative_counts`, `AmpOptimWrapper`);
/// MMCV 1.x configs name the batch `data.samples_per_gpu`.
fn openmmlab_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase) {
    if training(cause, phase) {
        builder.step("lower `train_dataloader.batch_size` (per GPU; `tools/train.py CONFIG --cfg-options train_dataloader.batch_size=2`, `data.samples_per_gpu` in MMCV 1.x configs) and the image scale of the pipeline's `Resize`");
        builder.step("train in mixed precision (`tools/train.py --amp`, `optim_wrapper.type='AmpOptimWrapper'`) and keep the effective batch with `optim_wrapper.accumulative_counts=N`");
    } else {
        builder.step("lower `test_dataloader.batch_size` / `val_dataloader.batch_size` and the test pipeline's `Resize` scale");
    }
}

/// openai-whisper: `whisper/transcribe.py` (CLI `--model`, `--fp16` default True, `--beam_size`
/// and `--best_of` default 5) and the README's model table (required VRAM: large ~10 GB, turbo
/// ~6 GB, medium ~5 GB, small ~2 GB, base and tiny ~1 GB).
fn whisper_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase) {
    if cause == Cause::WeightsDoNotFit || phase == Phase::WeightsLoad {
        builder.step("load a smaller model (`--model turbo`, `medium` or `small`; `whisper.load_model(\"small\")`): large needs about 10 GB of GPU memory, turbo 6, medium 5, small 2");
    }
    builder.step("keep FP16 (`--fp16 True`, the default on GPU) and lower `--beam_size` / `--best_of` (5 each in the CLI)");
    builder.step("or transcribe with faster-whisper (CTranslate2) and `compute_type=\"int8_float16\"`, which needs far less memory for the same model");
}

/// CTranslate2 and faster-whisper: SYSTRAN/faster-whisper `faster_whisper/transcribe.py`
/// (`WhisperModel(…, compute_type="default")`, `transcribe(…, beam_size=5)`,
/// `BatchedInferencePipeline.transcribe(…, batch_size=…)`), CTranslate2 "Quantization" docs
/// (`int8_float16`, `int8`) and `translate_batch` / `generate_batch(max_batch_size=…)`; whisper-ctranslate2
/// `--compute_type`. Its memory is its own allocator's, not PyTorch's.
fn ctranslate2_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase) {
    builder.step("load the model in 8 bits: `WhisperModel(…, compute_type=\"int8_float16\")` (or `\"int8\"`; whisper-ctranslate2 `--compute_type int8_float16`, any CTranslate2 model `compute_type=`)");
    if cause == Cause::WeightsDoNotFit || phase == Phase::WeightsLoad {
        builder.step("or a smaller model (`distil-large-v3`, `medium`, `small`)");
    } else {
        builder.step("lower `beam_size` (5 by default) and, with `BatchedInferencePipeline`, `batch_size`; a CTranslate2 `Translator` / `Generator` splits a large input with `max_batch_size`; feed an `Encoder` smaller batches");
    }
    builder.step("CTranslate2 keeps freed GPU memory in its own cache (not PyTorch's): a PyTorch model in the same process competes with it, so load one at a time or on separate GPUs");
}

/// JAX preallocates 75 % of the GPU on first use (https://docs.jax.dev/en/latest/gpu_memory_allocation.html).
fn jax_steps(builder: &mut Builder<'_>, cause: Cause) {
    if cause.memory_held_elsewhere() {
        builder.step("JAX takes 75 % of the GPU when it starts: with a second JAX (or PyTorch / TensorFlow) process on the card set `XLA_PYTHON_CLIENT_PREALLOCATE=false` or `XLA_PYTHON_CLIENT_MEM_FRACTION=.45` in each");
        return;
    }
    builder.step(
        "lower the batch size, or rematerialise activations with `jax.checkpoint` (`jax.remat`)",
    );
    builder.step("if other GPU programs run beside it, set `XLA_PYTHON_CLIENT_PREALLOCATE=false` (or `XLA_PYTHON_CLIENT_MEM_FRACTION`) so JAX does not take 75 % of the card up front");
}

/// TensorFlow maps nearly all GPU memory at start unless memory growth is on
/// (https://www.tensorflow.org/guide/gpu#limiting_gpu_memory_growth).
fn tensorflow_steps(builder: &mut Builder<'_>, cause: Cause) {
    if cause.memory_held_elsewhere() {
        builder.step("TensorFlow maps almost the whole GPU at start: turn on memory growth (`tf.config.experimental.set_memory_growth(gpu, True)` or `TF_FORCE_GPU_ALLOW_GROWTH=true`) in every TensorFlow process sharing the card, or cap it with `tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=…)])`");
        return;
    }
    builder.step(
        "lower the batch size (the tensor shape in the error shows which dimension is large)",
    );
    builder.step("use mixed precision (`tf.keras.mixed_precision.set_global_policy(\"mixed_float16\")`) and, against fragmentation of the BFC allocator, `TF_GPU_ALLOCATOR=cuda_malloc_async`");
}

fn vllm_steps(
    builder: &mut Builder<'_>,
    cause: Cause,
    phase: Phase,
    config: &EngineConfig,
    version: Option<&str>,
    failure: &OomMessage,
) {
    let util = config
        .gpu_memory_utilization
        .map(|u| format!(" (now {u})"))
        .unwrap_or_default();
    let max_len = config
        .max_model_len
        .map(|l| format!(" (now {l})"))
        .unwrap_or_default();
    let tp = config.tensor_parallel_size.unwrap_or(1);
    match cause {
        Cause::OtherProcessesHoldMemory | Cause::FreeMemoryBelowRequested => {
            let fits = match (
                failure.figures.free_bytes,
                failure.figures.total_capacity_bytes,
            ) {
                (Some(free), Some(total)) if total > Bytes::ZERO => {
                    format!(
                        " (free/total = {:.2} here)",
                        free.get() as f64 / total.get() as f64
                    )
                }
                _ => String::new(),
            };
            builder.step(format!("or lower `--gpu-memory-utilization`{util} to at most the fraction of the card that is actually free{fits}"));
        }
        Cause::WeightsDoNotFit => {
            builder.step(format!(
                "shard the weights over more GPUs: `--tensor-parallel-size {}`",
                (tp * 2).max(2)
            ));
            builder.step("use a quantized checkpoint (AWQ/GPTQ/FP8; `--quantization fp8` quantizes on load on supported GPUs)");
            if builder.inputs.engine.name == EngineName::Vllm && at_least(version, &[0, 5, 3], true)
            {
                builder.step(
                    "or offload part of the weights to CPU RAM with `--cpu-offload-gb N` (slow)",
                );
            }
        }
        Cause::KvCacheBudget if failure.details.mamba_cache_blocks.is_some() => {
            let blocks = failure.details.mamba_cache_blocks.unwrap_or_default();
            builder.step(format!(
                "lower `--max-num-seqs` to at most {blocks}: each decode sequence needs one Mamba state block"
            ));
            builder.step(format!("or raise `--gpu-memory-utilization`{util} (default 0.9) if nothing else uses this GPU, so more blocks fit"));
            builder.step(format!(
                "or add GPUs: `--tensor-parallel-size {}` splits the state cache too",
                (tp * 2).max(2)
            ));
        }
        Cause::KvCacheBudget => {
            let target = failure
                .details
                .estimated_max_model_len
                .or(failure.details.kv_cache_capacity_tokens)
                .map(|tokens| format!(" (at most {tokens})"))
                .unwrap_or_default();
            builder.step(format!(
                "lower `--max-model-len`{max_len} to what the KV cache can hold{target}"
            ));
            builder.step(format!("raise `--gpu-memory-utilization`{util} (default 0.9) if nothing else uses this GPU"));
            builder.step("halve the KV cache per token with `--kv-cache-dtype fp8`");
            builder.step(format!(
                "or add GPUs: `--tensor-parallel-size {}` splits the KV cache too",
                (tp * 2).max(2)
            ));
        }
        Cause::TransientPeak if phase == Phase::CudaGraphCapture => {
            builder
                .step("skip CUDA graphs with `--enforce-eager` (slower decoding, no capture peak)");
            builder.step(format!("or lower `--gpu-memory-utilization`{util} to leave room for the graph pools, or lower `--max-num-seqs` (fewer capture sizes)"));
        }
        Cause::TransientPeak => {
            builder.step(format!("lower `--gpu-memory-utilization`{util}: the conversion peak happens before the KV cache is sized"));
            builder.step("use a checkpoint already in the target format (pre-quantized), so no repack is needed at load");
        }
        Cause::WarmupPeak => {
            builder.step("lower `--max-num-seqs` and `--max-num-batched-tokens`: profiling runs a batch of that size");
            builder.step(format!("or lower `--max-model-len`{max_len}"));
        }
        Cause::InferenceLoad
        | Cause::CapacityExhausted
        | Cause::FragmentationPlausible
        | Cause::LargeAllocation
        | Cause::Unknown => {
            builder.step("lower `--max-num-seqs` / `--max-num-batched-tokens` to cap the activations of one step");
            builder.step(format!("lower `--gpu-memory-utilization`{util} to leave more headroom for activations beside the KV cache"));
        }
        _ => {}
    }
}

fn sglang_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase, failure: &OomMessage) {
    // The scheduler's KV-cache token pool ran out for the batch (`alloc_token_slots`): the
    // pool is the size `--mem-fraction-static` gave it; the batch is what the limits let in.
    if crate::parse::oom_text::sglang_token_pool_exhausted(&failure.text) {
        builder.step("the KV cache's token pool ran out for the running batch: lower `--max-running-requests` and `--chunked-prefill-size`, or raise `--mem-fraction-static` for a larger pool if the GPU has room");
        return;
    }
    match cause {
        Cause::KvCacheBudget => {
            builder.step("raise `--mem-fraction-static` if nothing else uses the GPU, or lower `--context-length`");
            builder.step("use `--kv-cache-dtype fp8_e5m2`, or more GPUs with `--tp`");
        }
        Cause::WeightsDoNotFit => builder
            .step("use more GPUs with `--tp N` or a quantized checkpoint (`--quantization fp8`)"),
        Cause::TransientPeak if phase == Phase::CudaGraphCapture => {
            builder.step("lower `--cuda-graph-max-bs`, or disable graphs with `--disable-cuda-graph`, or lower `--mem-fraction-static`");
        }
        Cause::OtherProcessesHoldMemory | Cause::FreeMemoryBelowRequested => {
            builder.step("or lower `--mem-fraction-static` to what is actually free");
        }
        _ => {
            builder.step("lower `--mem-fraction-static` to leave more room for activations, and `--chunked-prefill-size` / `--max-running-requests` to shrink one step");
        }
    }
}

fn tgi_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase) {
    match cause {
        Cause::WarmupPeak => builder.step("lower `--max-batch-prefill-tokens` (the warm-up batch size)"),
        Cause::KvCacheBudget => builder.step("lower `--max-total-tokens` and `--max-input-tokens`, or `--max-batch-prefill-tokens`"),
        Cause::WeightsDoNotFit => builder.step("shard with `--num-shard N` or load a quantized model with `--quantize` (awq, gptq, bitsandbytes-nf4, fp8)"),
        Cause::TransientPeak if phase == Phase::CudaGraphCapture => builder.step("capture fewer CUDA graphs with `--cuda-graphs 1,2,4` or none with `--cuda-graphs 0`"),
        Cause::OtherProcessesHoldMemory | Cause::FreeMemoryBelowRequested => builder.step("or lower `--cuda-memory-fraction`"),
        _ => builder.step("lower `--max-batch-prefill-tokens` and `--max-total-tokens`, or `--cuda-memory-fraction` to leave headroom"),
    }
}

fn llama_steps(builder: &mut Builder<'_>, cause: Cause, phase: Phase, ollama: bool) {
    if ollama {
        match phase {
            Phase::KvCacheAlloc => builder.step("lower the context: `num_ctx` (Modelfile `PARAMETER num_ctx` or the request's `options`), and `OLLAMA_NUM_PARALLEL=1`"),
            Phase::Profiling => builder.step("lower `num_batch` or `num_ctx`; set `OLLAMA_GPU_OVERHEAD` to reserve headroom"),
            _ => builder.step("offload fewer layers: `num_gpu` (Modelfile `PARAMETER num_gpu` or request `options`), or a smaller quantization of the model"),
        }
        builder.step(
            "quantize the KV cache: `OLLAMA_FLASH_ATTENTION=1` with `OLLAMA_KV_CACHE_TYPE=q8_0`",
        );
        return;
    }
    match (cause, phase) {
        (_, Phase::KvCacheAlloc) | (Cause::KvCacheBudget, _) => {
            builder.step("lower the context with `-c N`");
            builder.step("quantize the KV cache: `--cache-type-k q8_0 --cache-type-v q8_0` (V needs `-fa`)");
        }
        (_, Phase::Profiling) => builder.step("shrink the compute buffers with smaller `-b` / `-ub` (batch / micro-batch), or `-c`"),
        _ => builder.step("offload fewer layers with `-ngl N` (the rest runs on CPU), or use a smaller quantization (e.g. Q4_K_M)"),
    }
}

fn torch_steps(
    builder: &mut Builder<'_>,
    cause: Cause,
    phase: Phase,
    failure: &OomMessage,
    engine: EngineName,
) {
    let transformers = matches!(engine, EngineName::Transformers | EngineName::Peft);
    // Intel GPUs (Level Zero) refuse one allocation above 4 GiB unless it asks for relaxed
    // limits (intel/compute-runtime `programmers-guide/ALLOCATIONS_GREATER_THAN_4GB.md`; the
    // oneAPI Unified Runtime's Level Zero adapter turns them on with
    // `UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1`, as llama.cpp's SYCL docs say since PR 17566):
    // free memory larger than the request is then no contradiction.
    if failure.kind == OomKind::XpuOutOfMemory
        && failure
            .figures
            .tried_to_allocate_bytes
            .is_some_and(|tried| tried.get() >= 4 << 30)
    {
        builder.step("an Intel GPU refuses a single allocation of 4 GiB or more by default: set `UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1`, or split the tensor (smaller batch or chunks)");
    }
    match (cause, phase) {
        (Cause::WeightsDoNotFit, _) => {
            if transformers || engine == EngineName::Accelerate {
                builder.step("load in half precision (`torch_dtype=torch.bfloat16`) or 4/8-bit (`BitsAndBytesConfig(load_in_4bit=True)`)");
                builder.step("spread over GPUs and CPU with `device_map=\"auto\"` and `max_memory={0: \"…GiB\", \"cpu\": \"…GiB\"}`");
            } else {
                builder.step("load the weights in bf16/fp16 or quantized, or shard them over GPUs (FSDP, tensor parallel)");
            }
        }
        (Cause::TrainingMemory, _) | (_, Phase::TrainingStep) => {
            // Lightning: https://lightning.ai/docs/pytorch/stable/advanced/training_tricks.html
            // (accumulate_grad_batches, precision, Tuner.scale_batch_size); DeepSpeed ZeRO:
            // https://www.deepspeed.ai/docs/config-json/ (offload_optimizer, offload_param);
            // PEFT QLoRA: https://huggingface.co/docs/peft/developer_guides/quantization.
            if engine == EngineName::Lightning {
                builder.step("lower the DataLoader `batch_size` and keep the effective batch with `Trainer(accumulate_grad_batches=N)`; `Tuner(trainer).scale_batch_size(model)` finds the largest that fits");
                builder.step("train in `Trainer(precision=\"bf16-mixed\")` and checkpoint activations; shard with `strategy=\"fsdp\"` or `\"deepspeed_stage_2_offload\"` across GPUs");
            } else if engine == EngineName::Deepspeed {
                builder.step("lower `train_micro_batch_size_per_gpu` and raise `gradient_accumulation_steps` in the DeepSpeed config");
                builder.step("move to ZeRO stage 3 and offload to CPU: `\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": {\"device\": \"cpu\"}, \"offload_param\": {\"device\": \"cpu\"}}`; turn on activation checkpointing");
            } else if engine == EngineName::Accelerate {
                builder.step("lower the per-device batch size and accumulate with `Accelerator(gradient_accumulation_steps=N)`; `accelerate.utils.find_executable_batch_size` retries with halved batches");
                builder.step("use `mixed_precision=\"bf16\"` (`accelerate config`) and gradient checkpointing in the model");
            } else if transformers {
                builder.step("lower `per_device_train_batch_size` and raise `gradient_accumulation_steps` to keep the effective batch");
                builder.step("enable `gradient_checkpointing=True` and `bf16=True`; an 8-bit optimizer (`optim=\"adamw_bnb_8bit\"`) shrinks optimizer state");
                if engine == EngineName::Peft {
                    builder.step("for LoRA on a large base, load the base in 4-bit (QLoRA: `BitsAndBytesConfig(load_in_4bit=True)` then `prepare_model_for_kbit_training`) and shorten `max_seq_length`: the adapters are small, the base and the activations are not");
                }
            } else {
                builder.step("lower the batch size (accumulate gradients over steps to keep the effective batch)");
                builder.step("use activation checkpointing (`torch.utils.checkpoint`) and mixed precision (`torch.autocast(\"cuda\", dtype=torch.bfloat16)`)");
            }
            builder.step("shard optimizer state and gradients across GPUs (FSDP or DeepSpeed ZeRO-2/3, with CPU offload if needed)");
        }
        (Cause::InferenceLoad, _) => {
            builder.step("lower the batch size or sequence length of the request");
            builder.step("run inference under `torch.inference_mode()` so no activations are kept for backward");
        }
        (_, _) if failure.kind == OomKind::MpsOutOfMemory => {
            builder.step("on Apple silicon the GPU shares system RAM: close other memory-hungry apps and lower the batch size or resolution");
            builder.step("`PYTORCH_MPS_HIGH_WATERMARK_RATIO` raises the allocation cap (0.0 removes it, at the risk of system instability)");
        }
        (_, _)
            if matches!(
                failure.kind,
                OomKind::CudaErrorOutOfMemory
                    | OomKind::CudaDriverOutOfMemory
                    | OomKind::CublasAlloc
            ) =>
        {
            builder.step("check what already holds memory on the GPU (`oomdoc gpus`): a raw CUDA/cuBLAS allocation failure often happens while creating the CUDA context or a cuBLAS workspace on a card another process has filled");
            builder.step("then lower the batch size or sequence length of the step that failed");
        }
        (_, _) if failure.kind == OomKind::XlaResourceExhausted => {
            builder.step("JAX preallocates 75% of the GPU: other JAX or PyTorch processes on the card get little; set `XLA_PYTHON_CLIENT_MEM_FRACTION` or `XLA_PYTHON_CLIENT_PREALLOCATE=false` when sharing it");
            builder.step("then lower the batch size, or rematerialize (`jax.checkpoint`) the largest intermediate buffers");
        }
        (_, _)
            if matches!(
                failure.kind,
                OomKind::TensorflowOomTensor | OomKind::TensorflowBfc
            ) =>
        {
            builder.step("TensorFlow takes nearly all GPU memory at start: with other processes on the card enable memory growth (`tf.config.experimental.set_memory_growth`) or set a memory limit");
            builder.step("then lower the batch size; the tensor shape in the message shows which dimension is large");
        }
        (Cause::CapacityExhausted | Cause::Unknown | Cause::LargeAllocation, _) => {
            builder.step("lower the batch size or sequence length; run inference under `torch.inference_mode()`");
            builder.step("print `torch.cuda.memory_summary()` (`torch.xpu.memory_summary()` on Intel GPUs) at the failure, or record a memory snapshot and run `oomdoc snapshot FILE`, to see which tensors hold the memory");
        }
        _ => {}
    }
    if matches!(
        cause,
        Cause::CapacityExhausted
            | Cause::TrainingMemory
            | Cause::InferenceLoad
            | Cause::LargeAllocation
    ) {
        let figures = &failure.figures;
        if let (Some(unallocated), Some(tried), true) = (
            figures.reserved_unallocated_bytes,
            figures.tried_to_allocate_bytes,
            super::accounting::is_caching_allocator(failure.kind),
        ) {
            if unallocated.as_gib() >= 1.0 && unallocated.get() * 4 >= tried.get() {
                allocator_step(builder, failure);
            }
        }
    }
}

/// The PyTorch version range the message wording proves (`c10/cuda/CUDACachingAllocator.cpp`, by version).
fn torch_from_wording(failure: &OomMessage, versions: &BTreeMap<String, String>) -> Option<String> {
    if let Some(version) = versions.get("torch") {
        return Some(version.clone());
    }
    match failure.kind {
        OomKind::PytorchCached => Some("1.3".to_string()),
        OomKind::PytorchReservedInTotal => Some("2.0".to_string()),
        OomKind::PytorchTotalCapacity if failure.text.contains("capacty") => {
            Some("2.1".to_string())
        }
        OomKind::PytorchTotalCapacity if failure.text.contains("PYTORCH_ALLOC_CONF=") => {
            Some("2.10".to_string())
        }
        OomKind::PytorchTotalCapacity => Some("2.2".to_string()),
        _ => None,
    }
}
