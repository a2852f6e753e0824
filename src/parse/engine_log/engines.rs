//! Which engine, application or framework a line shows, beyond the per-engine progress
//! markers: error sentences (vLLM's `EngineDeadError`), log prefixes (SGLang's `[… TP1]`,
//! vLLM's logger format and process tags, docker-compose service names), the
//! footers and status lines of image apps, and the path of a traceback frame
//! (`site-packages/<engine>/`, `dist-packages`, Windows `\site-packages\`, conda envs,
//! editable installs such as `/vllm/vllm/…`).
//!
//! It also holds the precedence between engines (`layer`): the application the user ran wins
//! over the libraries under it (ComfyUI over torch, PEFT over the transformers `Trainer`,
//! vLLM over transformers). Nothing here decides figures or phases; only names.
//!
//! Every marker holds one of the four-byte anchors of `analyze::explain` (a unit test there
//! checks; Teddy takes at most 64), so markers here are the engine's sentences that already hold
//! an anchor (`Engine building failed` → `buil`, `Graph stats:` → `raph`); only `-pac` (for
//! `site-packages` paths) was added. Engines whose error text is their own (TensorRT-LLM's
//! `[TensorRT-LLM][ERROR]`, TurboMind's `[TM][ERROR]`) are also named from the failure message
//! itself (`engine_of_message`), which needs no marker.

use super::common::{has, word_after};
use super::{name, rule, Certainty, LineFacts, Rule};
use crate::model::explain::Phase;
use crate::model::failure::EngineName;

/// Whether `at` starts an identifier in `text`: no letter, digit or `_` just before it
/// (`LLM(` but not `VLLM(`, `lorax_server/` but not `my_lorax_server/`).
fn identifier_start(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
}

mod apps;
mod handlers;
mod own;
mod pasted;
mod paths;
mod vocab;

use handlers::*;

pub use paths::engine_of_path;

pub(super) const RULES: &[Rule] = &[
    // vLLM's dead-engine errors, by the sentence after them (`vllm/engine/multiprocessing/
    // __init__.py` MQEngineDeadError "Engine loop is not running. Inspect the stacktrace to
    // find the original error"; `vllm/v1/engine/exceptions.py` EngineDeadError "EngineCore
    // encountered an issue. See stack trace (above) for the root cause.").
    rule("Inspect the stacktrace to find the original error", vllm),
    rule("EngineCore encountered an issue. See stack trace", vllm),
    // TensorRT-LLM: the banner of `import tensorrt_llm` ("[TensorRT-LLM] TensorRT-LLM version:
    // 0.12.0"), the builder's "[TRT-LLM] [E] Engine building failed" (`tensorrt_llm/commands/
    // build.py`), the C++ runtime's "[TensorRT-LLM][INFO] MPI size: 1".
    // vLLM's container image, as a deployment names it (`image: vllm/vllm-openai:v0.8.5`,
    // `repository: "vllm/vllm-openai"`; the Docker Hub name of vLLM's docs): the image is the
    // engine that ran.
    rule("vllm/vllm-openai", vllm_image),
    rule("TensorRT-LLM version", tensorrt_llm),
    rule("Engine building failed", tensorrt_llm),
    rule("[TensorRT-LLM][INFO] MPI size", tensorrt_llm),
    // LMDeploy prints its engine config (`lmdeploy/messages.py` TurbomindEngineConfig,
    // PytorchEngineConfig: `… max_batch_size=128, cache_max_entry_count=0.8, …`).
    rule("max_batch_size=", lmdeploy),
    // InvokeAI's per-session table ("[InvokeAI]::INFO --> Graph stats: <session id>",
    // `invokeai/app/services/invocation_stats`).
    rule("Graph stats:", invokeai),
    // InvokeAI 2.x's console (`>>` lines of `ldm/generate.py` and `ldm/invoke/model_manager.py`):
    // ">> InvokeAI, version 2.3.0", ">> Max VRAM used to load
    // the model: 3.38G", and ">> Could not generate image." printed when a generation failed.
    rule(">> InvokeAI, version", invokeai_console),
    rule(">> Max VRAM used to load the model", invokeai_console),
    rule(">> Could not generate image", invokeai_console),
    // ComfyUI (`comfy/model_management.py`: "Requested to load …", "loaded completely",
    // "loaded partially"; `execution.py`: "Got an OOM, unloading all loaded models.").
    rule("Requested to load ", comfyui),
    rule("loaded completely", comfyui),
    rule("loaded partially", comfyui),
    rule("prepared for dynamic VRAM loading", comfyui),
    rule("Got an OOM, unloading all loaded models", comfyui),
    // AUTOMATIC1111 stable-diffusion-webui: the generation footer of `modules/ui_common.py` /
    // `modules/memmon.py` ("Torch active/reserved: …, Sys VRAM: …") and
    // `modules/sd_models.py` / `webui.py` ("Stable diffusion model failed to load").
    rule("Torch active/reserved:", automatic1111),
    // text-generation-webui `modules/text_generation.py` (`generate_reply_HF` and the other
    // loaders' `generate_reply`): `Output generated in 6.34 seconds (0.32 tokens/s, 2 tokens,
    // context 1200, seed 42)`, printed in a `finally` after a generation, also one that failed.
    rule("Output generated in", textgen_output),
    rule("Stable diffusion model failed to load", automatic1111),
    // AUTOMATIC1111 1.x footer under a generation (`modules/call_queue.py` `wrap_gradio_call`,
    // `modules/memmon.py`): "Time taken: 9.1 sec." then "A: 2.82 GB, R: 2.90 GB, Sys: 3.8/3.8125
    // GB (99.7%)" (active, reserved peaks, system VRAM).
    rule(" GB, Sys: ", automatic1111_vram),
    // ComfyUI's error report (the frontend's `## ComfyUI Error Report`, `- **Node Type:**
    // KSampler`) and the older dialog (`Error occurred when executing KSampler:`): the node
    // that raised says the stage (`nodes.py` NODE_CLASS_MAPPINGS: samplers and VAE
    // decode/encode generate, `…Loader` nodes load weights).
    rule("Node Type:", comfyui_node),
    rule("Error occurred when executing ", comfyui_node),
    // TensorFlow's BFC allocator (`tensorflow/core/common_runtime/bfc_allocator.cc`); XLA (JAX)
    // has its own copy under `xla/tsl/framework/bfc_allocator.cc`.
    rule("bfc_allocator", bfc_allocator),
    // TensorFlow Serving's server (`tensorflow_serving/model_servers/main.cc`, the binary
    // `tensorflow_model_server`), which vendors TensorFlow as `external/org_tensorflow` too.
    rule("tensorflow_model_server", tf_serving),
    rule("tensorflow_serving/", tf_serving),
    // DeepSpeed-MII and DeepSpeed named in text (`DeepSpeed-MII`, `[DeepSpeed]`).
    rule("DeepSpeed", deepspeed),
    // An installed package's path outside a `File "…"` frame: a warning's location, a pytest
    // frame (`.venv/lib/python3.14/site-packages/transformers/trainer.py:1412: in train`), a
    // frame wrapped by a log collector, Windows `\site-packages\`.
    rule("-packages", package_path),
    // A Python import pasted with the failure (`from vllm import LLM`, `from lmdeploy import
    // pipeline`, `import pytorch_lightning as pl`): the package names the engine the script runs.
    rule("import ", python_import),
    // Lightning's training bar (`TQDMProgressBar`: "Epoch 0:  62%|██████▏   | 878/1417 [00:15<00:09,
    // 56.28it/s, v_num=0]"), which may be all a pasted Lightning run shows.
    rule("Epoch ", lightning_bar),
    // The progress line of the ImageNet-style training loops (pytorch/examples `imagenet/main.py`
    // `ProgressMeter`: "Epoch: [0][ 10/5005]\tTime … Loss …", fb.resnet.torch `train.lua`:
    // " | Epoch: [1][10003/10010]    Time … Err …"), and CNTK's "Starting minibatch loop."
    // (`SGD.cpp`, printed when an epoch's training starts).
    // A diffusers pipeline in the pasted script: its classes end in `Pipeline`
    // (`StableDiffusionXLPipeline.from_pretrained(`, `DiffusionPipeline.from_pretrained(`) and
    // its offload switches are its own (`pipelines/pipeline_utils.py`
    // `enable_model_cpu_offload`, `enable_sequential_cpu_offload`).
    rule("Pipeline.from_pretrained(", diffusers_code),
    rule("enable_model_cpu_offload(", diffusers_code),
    rule("enable_sequential_cpu_offload(", diffusers_code),
    rule("Epoch: [", epoch_meter),
    rule("Starting minibatch loop", cntk_minibatch_loop),
    // ComfyUI's hint after an OOM (`execution.py`: "This error means you ran out of memory on your
    // GPU.") and the flag of its Windows portable build (`run_nvidia_gpu.bat`: `main.py
    // --windows-standalone-build`).
    rule(
        "This error means you ran out of memory on your GPU",
        comfyui_own,
    ),
    rule("--windows-standalone-build", comfyui_own),
    // SGLang's launcher when a scheduler or detokenizer process dies (`srt/entrypoints/engine.py`
    // `sigquit_handler`: "Received sigquit from a child process. It usually means the child
    // failed.").
    rule("Received sigquit from a child process", sglang_own),
    // MLC-LLM's `mlc_chat_cli` (`cpp/cli_main.cc`): "Use MLC config: …", "Use model weights: …".
    rule("Use MLC config:", mlc_llm_own),
    // Unsloth's training banner ("==((====))==  Unsloth …", "O^O/ \_/ \    Batch size per device
    // = 2 | …"): Unsloth drives the transformers `Trainer` (TRL's `SFTTrainer`).
    rule("Batch size per device =", unsloth_banner),
    // `outputs = model.generate(**inputs, …)`: the transformers generation API.
    rule("model.generate(", transformers_generate),
    // Applications named by their own strings (issue 13's blind batch): Aphrodite's logger
    // prefix (`aphrodite_engine.py:72]`, `aphrodite/endpoints/…`) and its name; AUTOMATIC1111
    // and its Forge fork by their launchers (`webui-user.bat`, `webui.sh`), extension prefix
    // (`sd-webui-`), Forge's `modules_forge/main_thread.py` logger and the UI's "Hires. fix"
    // feature (`modules/processing.py` `StableDiffusionProcessingTxt2Img.enable_hr`); ComfyUI
    // and InvokeAI by name, in any language's sentence (`Relatório de erro do ComfyUI`);
    // SGLang by its memory pools (`srt/mem_cache/memory_pool.py` `ReqToTokenPool`,
    // `req_to_token_pool`, `token_to_kv_pool`).
    name("aphrodite", aphrodite_named),
    name("Aphrodite", aphrodite_named),
    name("webui-user", automatic1111_named),
    name("webui.sh", automatic1111_named),
    name("webui.bat", automatic1111_named),
    name("sd-webui", automatic1111_named),
    name("AUTOMATIC1111", automatic1111_named),
    name("main_thread.py", automatic1111_named),
    name("ires fix", automatic1111_named),
    name("ires. fix", automatic1111_named),
    name("igh res fix", automatic1111_named),
    name("ighres fix", automatic1111_named),
    name("ComfyUI", comfyui_named),
    name("InvokeAI", invokeai_named),
    name("req_to_token_pool", sglang_own),
    name("token_to_kv_pool", sglang_own),
    // Fooocus (lllyasviel/Fooocus 2.x): its progress lines (`modules/async_worker.py`
    // `progressbar`: `print(f'[Fooocus] {text}')`; `[Fooocus Model Management] Moving model(s)
    // has taken …` of `modules/patch.py`), its launcher (`entry_with_update.py`) and its
    // version line (`launch.py`: "Fooocus version: 2.1.865"); Fooocus-API's queue
    // (mrhan1993/Fooocus-API `fooocusapi/worker.py`: "[Task Queue] Finish task with error");
    // the name as a word.
    rule("[Fooocus", apps::fooocus_own),
    rule("Fooocus version", apps::fooocus_own),
    rule("entry_with_update", apps::fooocus_own),
    rule("[Task Queue] Finish task", apps::fooocus_own),
    name("Fooocus", apps::fooocus_named),
    // Fooocus's web UI at the end of each task, failed or not (`webui.py` `generate_clicked`:
    // `print(f'Total time: {execution_time:.2f} seconds')`, 2.x, and its forks).
    rule("Total time: ", apps::fooocus_total_time),
    // Ultralytics YOLO: the banner `select_device` prints (`ultralytics/utils/torch_utils.py`:
    // "Ultralytics 8.3.0 🚀 Python-3.11.4 torch-2.4.0 CUDA:0 (…)"; 8.0.x "Ultralytics
    // YOLOv8.0.57 🚀 …") and AutoBatch's lines (`ultralytics/utils/autobatch.py`: "AutoBatch:
    // Computing optimal batch size for imgsz=640").
    rule("Ultralytics ", apps::ultralytics_banner),
    rule("AutoBatch: ", apps::ultralytics_own),
    // Detectron2's loggers, abbreviated to `d2` (`detectron2/utils/logger.py` `setup_logger`:
    // "[06/09 11:05:25 d2.engine.train_loop]: Starting training from iteration 0").
    rule("d2.engine.", apps::detectron2_own),
    rule("d2.data.", apps::detectron2_own),
    rule("d2.checkpoint.", apps::detectron2_own),
    rule("d2.evaluation.", apps::detectron2_own),
    rule("d2.utils.events", apps::detectron2_own),
    // OpenMMLab's loggers: MMEngine's `MMLogger` ("12/09 06:49:23 - mmengine - INFO - Epoch(train)
    // [1][50/7330] …", `mmengine/logging/logger.py`) and the older mmcv-based loggers
    // ("2022-01-01 12:00:00,000 - mmdet - INFO - Epoch [1][50/7330] …").
    rule(" - mm", apps::openmmlab_logger),
    // faster-whisper's model class in pasted code (`faster_whisper/transcribe.py`
    // `WhisperModel(model_size_or_path, device=…, compute_type=…)`) and its name as a word.
    rule("WhisperModel(", ctranslate2_code),
    name("faster-whisper", ctranslate2_named),
    name("faster_whisper", ctranslate2_named),
    name("Faster Whisper", ctranslate2_named),
    name("Faster-Whisper", ctranslate2_named),
    name("CTranslate2", ctranslate2_named),
    name("whisper-ctranslate2", ctranslate2_named),
    name("openai-whisper", whisper_named),
    // ExLlamaV2 by name in a sentence ("I like to test the exllamav2 or exllamav2_hf model
    // loaders"): the library has no other meaning.
    name("exllamav2", exllamav2_named),
    // vLLM's offline API in pasted code (`vllm/entrypoints/llm.py` `LLM.__init__(…,
    // gpu_memory_utilization=0.9, …)`): the keyword is vLLM's (SGLang's is
    // `mem_fraction_static`, TensorRT-LLM's `free_gpu_memory_fraction`).
    name("gpu_memory_utilization=", vllm_llm_code),
    name("ExLlamaV2", exllamav2_named),
    // ExLlamaV2's quantizer (`exllamav2/conversion/measure.py`: " -- {desc:30} {bpw:2.2f} bpw
    // rfn_error: {err:2.5f}" for each option it measures; `quantize.py`: " -- Module quantized,
    // rfn_error: …"): a checkpoint being converted to EXL2.
    // accelerate's launcher (`accelerate/commands/launch.py`) starting the job
    // (`accelerate launch --num_cpu_threads_per_process=2 "train_db.py" …`): the job runs under
    // accelerate, whatever script it starts (an app's package named there says more).
    rule("accelerate launch ", own::accelerate_launch),
    // Session 37 (p2): the launcher's own warning when it fills in defaults
    // (`accelerate/commands/launch.py` `_validate_launch_command`: "The following values were
    // not passed to `accelerate launch` and had defaults used instead:"), printed before the
    // script starts.
    rule(
        "not passed to `accelerate launch`",
        own::accelerate_defaults,
    ),
    rule("rfn_error: ", own::exllamav2_conversion),
    // Its `convert.py` job header (" -- Target bits per weight: 4.25 (decoder), 6 (head)").
    rule(" -- Target bits per weight: ", own::exllamav2_conversion),
    // AUTOMATIC1111's footer (`modules/ui.py` `versions_html`: "version: v1.10.1 • python:
    // 3.10.6 • torch: 2.1.2+cu121 • xformers: … • gradio: 3.41.2 • checkpoint: …"), kept by
    // its Forge forks ("version: [neo] • python: 3.13.13 • torch: …"); the web UI's folder in
    // any path (`/home/me/stable-diffusion-webui-forge/models/…` in a dumped dict).
    rule("gradio: ", own::automatic1111_versions),
    rule("stable-diffusion-webui", own::automatic1111_folder),
    // Forge's model selection (`modules_forge/main_entry.py` "Model selected: {…}", and
    // "Loading Model: {'checkpoint_info': {'filename': …}, 'additional_modules': […]}" when it
    // reloads): the dict of its checkpoint record.
    rule("{'checkpoint_info': ", own::forge_checkpoint_record),
    // PyTorch's caching allocator by its class or source (`INTERNAL ASSERT FAILED at
    // "…/c10/cuda/CUDACachingAllocator.cpp":1154`).
    rule("CUDACachingAllocator", pytorch_named),
    // `torch.cuda.memory_summary()`'s table head (`torch/cuda/memory.py`: "PyTorch CUDA memory
    // summary, device ID {device}"), pasted with the failure (session 48).
    rule("PyTorch CUDA memory summary", pytorch_named),
    // An NCCL line of a Kubernetes pod: its host name is the pod's, named after the deployment
    // (`lmdeploy-7666548865-hbpt4:1:1 [0] NCCL INFO Bootstrap : …`).
    rule(" NCCL INFO ", own::nccl_pod_host),
    rule("Allocating KV-cache ", own::deepspeed_kv_cache),
    rule("AnalysisPredictor::", own::paddle_predictor_run),
    // Fooocus's parameter and prompt-expansion lines (`modules/async_worker.py`: "[Parameters]
    // Adaptive CFG = 7", "[Parameters] Seed = 123"; `extras/expansion.py`: "[Prompt Expansion]
    // …").
    rule("[Parameters] ", apps::fooocus_parameters),
    rule("[Prompt Expansion]", apps::fooocus_own),
    // Ultralytics' training table header (`ultralytics/models/yolo/detect/train.py`
    // `progress_string`: "Epoch GPU_mem box_loss cls_loss dfl_loss Instances Size"; YOLOv5's
    // own repository prints `obj_loss` instead of `dfl_loss`) and its CLI (`yolo detect train
    // data=coco8.yaml model=yolov8n.pt`, `ultralytics/cfg/__init__.py` `entrypoint`).
    rule("GPU_mem", apps::ultralytics_table),
    rule("Box(P", apps::ultralytics_table),
    rule("yolo ", apps::ultralytics_cli),
    // Detectron2's environment table (`detectron2/utils/collect_env.py`: "detectron2   0.6
    // @/usr/local/lib/python3.8/dist-packages/detectron2").
    rule("detectron2 ", apps::detectron2_env),
    // CTranslate2's own logger (spdlog: "[2024-01-01 12:00:00.000] [ctranslate2] [thread 1234]
    // [warning] …").
    rule("[ctranslate2]", ctranslate2_logger),
    // OpenMMLab's environment table (`mmengine/utils/dl_utils/collect_env.py` "MMEngine:
    // 0.10.3"; MMDetection's `mmdet/utils/collect_env.py` adds "MMDetection: 3.3.0+44ebd17";
    // every key in `OPENMMLAB_ENV_KEYS`).
    rule("MMEngine: ", apps::openmmlab_env),
    rule("MMCV: ", apps::openmmlab_env),
    rule("MMDetection: ", apps::openmmlab_env),
    rule("MMSegmentation: ", apps::openmmlab_env),
    rule("MMPose: ", apps::openmmlab_env),
    rule("MMPretrain: ", apps::openmmlab_env),
    rule("MMClassification: ", apps::openmmlab_env),
    rule("MMOCR: ", apps::openmmlab_env),
    rule("MMRotate: ", apps::openmmlab_env),
    rule("MMAction2: ", apps::openmmlab_env),
    rule("MMDetection3D: ", apps::openmmlab_env),
    rule("MMYOLO: ", apps::openmmlab_env),
    rule("MMagic: ", apps::openmmlab_env),
    rule("MMEditing: ", apps::openmmlab_env),
    // ComfyUI's executor when a node raises (`execution.py`: `logging.error(f"!!! Exception
    // during processing !!! {ex}")`).
    rule("!!! Exception during processing", comfyui_own),
    // InvokeAI 2.x's web server before a generation (`invokeai/backend/invoke_ai_web_server.py`:
    // ">> Image Generation Parameters:", ">> ESRGAN Parameters: …", ">> Facetool Parameters: …").
    rule(">> Image Generation Parameters", invokeai_console),
    rule(">> ESRGAN Parameters", invokeai_console),
    rule(">> Facetool Parameters", invokeai_console),
    // TensorFlow's C++ log location (`tensorflow/core/common_runtime/gpu/gpu_device.cc:885]`,
    // `…\tensorflow\stream_executor\cuda\cuda_blas.cc:372]`, TF's ROCm build
    // `tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606]`).
    rule(".cc:", tensorflow_cpp_location),
    // PyTorch's distributed errors (`torch.distributed.DistBackendError`, `ProcessGroupNCCL`,
    // the C++ source `torch/csrc/distributed/c10d/NCCLUtils.hpp`) and a torch call in code
    // (`torch.randn(2, 2).cuda()`, `torch.zeros(…, device="cuda")`).
    rule("DistBackendError", pytorch_named),
    rule("ProcessGroupNCCL", pytorch_named),
    rule("torch/csrc/", pytorch_named),
    // PyTorch's legacy CUDA back end (THC, 0.1–1.x: `RuntimeError: cuda runtime error (2) : out
    // of memory at /pytorch/aten/src/THC/THCTensorRandom.cu:25`, `THCudaCheck FAIL
    // file=…/torch/lib/THC/generic/THCStorage.cu`); Lua Torch's cutorch built THC too (from
    // `luarocks_cutorch-…/lib/THC/`), which is not PyTorch.
    rule("/THC/", pytorch_thc),
    // ATen's cuDNN check (`aten/src/ATen/cudnn/Exceptions.h` `AT_CUDNN_CHECK`: `cuDNN error: `
    // and the status, a `RuntimeError` in Python), also retyped in lower case.
    rule("cuDNN error", pytorch_cudnn),
    rule("cudnn error", pytorch_cudnn),
    rule("torch.", torch_call),
    // PyTorch's idioms in pasted code (`model = model.to(device)`, `x.cuda()`), and a Lightning
    // module or trainer (`class M(pl.LightningModule):`, `pl.Trainer(gpus=1)`).
    name(".to(device)", pytorch_idiom),
    name(".cuda()", pytorch_idiom),
    name("LightningModule)", lightning_code),
    name("LightningDataModule)", lightning_code),
    name(".Trainer(", lightning_code),
    // PyTorch/XLA's C++ bindings raise an XLA status as `RuntimeError: Bad StatusOr access:
    // RESOURCE_EXHAUSTED: …` (JAX raises `XlaRuntimeError`).
    rule("Bad StatusOr access", torch_xla_status),
    // XLA's buffer listing names the JAX transformation that made each buffer
    // (`op_name="pjit(train_step)/jit(main)/…"`); TensorFlow's ops are named by their graph.
    rule("op_name=\"pjit(", jax_op_name),
    rule("op_name=\"jit(", jax_op_name),
    rule("op_name=\"pmap(", jax_op_name),
    // AutoTrain's loguru location (`autotrain.trainers.common:wrapper:121 - …`).
    rule("autotrain.", autotrain_logger),
    // TensorFlow's device creation (`tensorflow/core/common_runtime/gpu/gpu_device.cc`
    // `BaseGPUDeviceFactory::CreateGPUDevice`: "Created device /job:localhost/replica:0/task:0/
    // device:GPU:0 with 21458 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, …"):
    // the memory TF could take when it started, against the card it names.
    name("Created device /job:", vocab::tensorflow_device_created),
    name("github.com/", vocab::engine_repository),
    name("ShardCannotStart", vocab::tgi_launcher_error),
    name("ShardFailed", vocab::tgi_launcher_error),
    name("WebserverCannotStart", vocab::tgi_launcher_error),
    name("invoke.py", vocab::invokeai_launcher),
    name("invokeai-web", vocab::invokeai_launcher),
    name("llama runner", vocab::ollama_runner),
    name("comfy", vocab::engine_in_prose),
    name("TGI", vocab::engine_in_prose),
    name("text-generation-inference", vocab::engine_in_prose),
    name("TabbyAPI", vocab::engine_in_prose),
    name("tabbyAPI", vocab::engine_in_prose),
    name("ExLlama", vocab::engine_in_prose),
    name("tensorrt-llm", vocab::engine_in_prose),
    name("A1111", vocab::engine_in_prose),
    name("Automatic1111", vocab::engine_in_prose),
    name("automatic1111", vocab::engine_in_prose),
    name("SD Forge", vocab::engine_in_prose),
    name("WebUI Forge", vocab::engine_in_prose),
    name("Forge UI", vocab::engine_in_prose),
    name("diffusers", vocab::engine_in_prose),
    name("Diffusers", vocab::engine_in_prose),
    name("PyTorch Lightning", vocab::engine_in_prose),
    name("TensorFlow", vocab::engine_in_prose),
    name("Tensorflow", vocab::engine_in_prose),
    name("JAX", vocab::engine_in_prose),
    name("Flax", vocab::engine_in_prose),
    name("pytorch-lightning", vocab::engine_in_prose),
    name("Comfy", vocab::engine_in_prose),
    name("DeepSpeed", vocab::engine_in_prose),
    name("deepspeed", vocab::engine_in_prose),
    name("Deepspeed", vocab::engine_in_prose),
    name("accelerate", vocab::engine_in_prose),
    name("Accelerate", vocab::engine_in_prose),
    name("PEFT", vocab::engine_in_prose),
    name("TRL", vocab::engine_in_prose),
    // Ultralytics' and Detectron2's names, listed in `vocab::PROSE` but read only when a line
    // held another marker until session 34 (`ultralytics        8.3.173` under "When I use
    // YOLO11 for training on Linux").
    name("ultralytics", vocab::engine_in_prose),
    name("Ultralytics", vocab::engine_in_prose),
    name("YOLOv5", vocab::engine_in_prose),
    name("detectron2", vocab::engine_in_prose),
    name("Detectron2", vocab::engine_in_prose),
    // OpenMMLab's toolboxes by name (`vocab::OPENMMLAB_NAMES`).
    name("OpenMMLab", vocab::engine_in_prose),
    name("mmdetection", vocab::engine_in_prose),
    name("MMDetection", vocab::engine_in_prose),
    name("mmsegmentation", vocab::engine_in_prose),
    name("MMSegmentation", vocab::engine_in_prose),
    name("mmpretrain", vocab::engine_in_prose),
    name("MMPretrain", vocab::engine_in_prose),
    name("mmpose", vocab::engine_in_prose),
    name("MMPose", vocab::engine_in_prose),
    name("mmocr", vocab::engine_in_prose),
    name("MMOCR", vocab::engine_in_prose),
    name("mmrotate", vocab::engine_in_prose),
    name("MMRotate", vocab::engine_in_prose),
    name("mmaction2", vocab::engine_in_prose),
    name("MMAction2", vocab::engine_in_prose),
    name("mmdet3d", vocab::engine_in_prose),
    name("mmyolo", vocab::engine_in_prose),
    name("MMYOLO", vocab::engine_in_prose),
    name("mmengine", vocab::engine_in_prose),
    name("MMEngine", vocab::engine_in_prose),
    name("mmcv", vocab::engine_in_prose),
    name("MMCV", vocab::engine_in_prose),
    // … and by their error-report form and their configs' words (`vocab::openmmlab_form`).
    name("What command or script did you run?", vocab::openmmlab_form),
    name(
        "Did you make any modifications on the code or config?",
        vocab::openmmlab_form,
    ),
    name("samples_per_gpu", vocab::openmmlab_form),
    // Engines and apps shown only by their own vocabulary (`engines/vocab.rs` cites each).
    name("got prompt", vocab::comfyui_got_prompt),
    name("Prompt executed in ", vocab::comfyui_executed),
    name(vocab::COMFYUI_NODES[0], vocab::comfyui_node_name),
    name(vocab::COMFYUI_NODES[1], vocab::comfyui_node_name),
    name(vocab::COMFYUI_NODES[2], vocab::comfyui_node_name),
    name(vocab::COMFYUI_NODES[3], vocab::comfyui_node_name),
    name(vocab::COMFYUI_NODES[4], vocab::comfyui_node_name),
    name(vocab::COMFYUI_NODES[5], vocab::comfyui_node_name),
    name(vocab::COMFYUI_NODES[6], vocab::comfyui_node_name),
    name(vocab::COMFYUI_NODES[7], vocab::comfyui_node_name),
    name(
        "Launching Web UI with arguments",
        vocab::automatic1111_launch,
    ),
    name("ptimization: ", vocab::automatic1111_optimization),
    name("[GPU Setting] You will use", vocab::forge_own),
    name("[Memory Management] Target", vocab::forge_own),
    name("[Unload] Trying to free", vocab::forge_own),
    name("Never OOM", vocab::forge_own),
    name("GPU Weights", vocab::forge_own),
    name("--medvram", vocab::automatic1111_flags),
    name("COMMANDLINE_ARGS", vocab::automatic1111_flags),
    name("--per_device_", vocab::transformers_training_flag),
    name("XLA_PYTHON_CLIENT_", vocab::jax_allocator_env),
    name("PyTorch Lightning Version", vocab::lightning_form),
    name("--reserve-vram", vocab::comfyui_flags),
    name("--disable-smart-memory", vocab::comfyui_flags),
    name(
        "What browsers do you use to access",
        vocab::automatic1111_form,
    ),
    name("llm_load_print_meta", vocab::llamacpp_own),
    name("llama_new_context_with_model", vocab::llamacpp_own),
    name("ggml_backend_cuda_buffer_type", vocab::ggml_cuda_buffer),
    name("Welcome to KoboldCpp", vocab::llamacpp_own),
    name("llama-cli", vocab::llamacpp_binary),
    name("llama-server", vocab::llamacpp_binary),
    name("llama-bench", vocab::llamacpp_binary),
    name("llama-embedding", vocab::llamacpp_binary),
    name("llama-perplexity", vocab::llamacpp_binary),
    name("KoboldCpp", vocab::koboldcpp_named),
    name("koboldcpp", vocab::koboldcpp_named),
    name("KoboldCPP", vocab::koboldcpp_named),
    name("ollama ", vocab::ollama_cli),
    name("OLLAMA_", vocab::ollama_cli),
    name("num_gpu", vocab::ollama_cli),
    name("[TM][", vocab::lmdeploy_own),
    name("lmdeploy ", vocab::lmdeploy_own),
    name("turbomind", vocab::lmdeploy_own),
    name("TurboMind", vocab::lmdeploy_own),
    name("trtllm-", vocab::tensorrt_llm_own),
    name("[TRT-LLM]", vocab::tensorrt_llm_own),
    // Session 34's blind batches (`engines/vocab.rs` cites each): vLLM's container images by
    // their repository (`rocm/vllm:latest`) and its own flags; stable-diffusion.cpp's logger;
    // MLC-LLM's Python modules (`python -m mlc_llm.serve.server`); InvokeAI's config file and
    // its bug-report form's answers; transformers' explicit log format and its
    // `TrainingArguments`-only fields.
    name("/vllm:", vocab::vllm_named_image),
    // Session 37 (p1): vLLM's documentation and recipe sites linked in a report (its issue
    // forms' checklist links `docs.vllm.ai`); ComfyUI's issue form (`Custom Node Testing`) and
    // its nodes by their display names (`VAE Decode node`).
    name("docs.vllm.ai", vocab::vllm_site),
    name("recipes.vllm.ai", vocab::vllm_site),
    name("Custom Node Testing", vocab::comfyui_form),
    name("Decode node", vocab::comfyui_node_display),
    name("decode node", vocab::comfyui_node_display),
    name("Encode node", vocab::comfyui_node_display),
    name("encode node", vocab::comfyui_node_display),
    // Session 38 (p2): LoRAX (predibase/lorax), a fork of TGI that renamed its parts: the
    // launcher's tracing target (`launcher/src/main.rs`, `lorax_launcher`), the router's gRPC
    // client (`router/client`, `lorax_client`), the Python shard's package
    // (`server/lorax_server/`) and its image (`ghcr.io/predibase/lorax`). It prints TGI's
    // sentences (`Method Warmup encountered an error.`), so its own name must outrank them.
    // Session 39: the RL post-training frameworks (verl, OpenRLHF, NeMo-RL) by their packages.
    name("verl/trainer/", own::rl_framework_own),
    name("verl/workers/", own::rl_framework_own),
    name("verl/single_controller/", own::rl_framework_own),
    name("verl.trainer.", own::rl_framework_own),
    name("verl.single_controller.", own::rl_framework_own),
    name("openrlhf/", own::rl_framework_own),
    name("openrlhf.cli", own::rl_framework_own),
    name("nemo_rl/", own::rl_framework_own),
    name("nemo_rl.", own::rl_framework_own),
    name("WorkerDict.", own::rl_framework_own),
    name("DTensorPolicyWorker", own::rl_framework_own),
    name("lorax_launcher", own::lorax_own),
    name("lorax_client", own::lorax_own),
    name("lorax_server/", own::lorax_own),
    name("predibase/lorax", own::lorax_own),
    name("tensorflow/tensorflow:", vocab::framework_image),
    name("nvidia/tensorflow:", vocab::framework_image),
    name("pytorch/pytorch:", vocab::framework_image),
    name("nvidia/pytorch:", vocab::framework_image),
    name("--gpu-memory-utilization", vocab::vllm_flags),
    name("--speculative-config", vocab::vllm_flags),
    name("stable-diffusion.cpp:", vocab::sdcpp_logger),
    name("ggml_extend.hpp:", vocab::sdcpp_logger),
    name("ggml submodule", vocab::ggml_as_submodule),
    name("whisper_init_", vocab::whisper_cpp_line),
    name("whisper_model_load:", vocab::whisper_cpp_line),
    name("whisper_backend_init", vocab::whisper_cpp_line),
    name("whisper_rs::", vocab::whisper_cpp_line),
    name("Aborting and saving the final best model", own::spacy_own),
    name("= Training pipeline =", own::spacy_own),
    name(":onnxruntime:", own::onnxruntime_own),
    name("onnxruntime_pybind11_state", own::onnxruntime_own),
    name("vad_model=", own::funasr_keywords),
    name("punc_model=", own::funasr_keywords),
    name("spk_model=", own::funasr_keywords),
    name("batch_size_s=", own::funasr_keywords),
    name("whisper.cpp", vocab::engine_in_prose),
    name("stable-diffusion.cpp", vocab::engine_in_prose),
    name("whisper-rs", vocab::engine_in_prose),
    name("mlc_llm.", vocab::mlc_llm_module),
    name("invokeai.yaml", vocab::invokeai_config),
    name("Nvidia (CUDA)", vocab::invokeai_form),
    name("AMD (ROCm)", vocab::invokeai_form),
    name("Apple Silicon (MPS)", vocab::invokeai_form),
    name("None (CPU)", vocab::invokeai_form),
    name("Invoke's Launcher", vocab::invokeai_form),
    name("[INFO|", vocab::transformers_explicit_log),
    name("[WARNING|", vocab::transformers_explicit_log),
    name(
        "evaluate_during_training",
        vocab::transformers_training_field,
    ),
    name("evaluation_strategy", vocab::transformers_training_field),
    name("eval_strategy", vocab::transformers_training_field),
    name(".from_pretrained(", vocab::transformers_model_class),
    name(vocab::TRL_CLASSES[0], vocab::trl_class),
    name(vocab::TRL_CLASSES[1], vocab::trl_class),
    name(vocab::TRL_CLASSES[2], vocab::trl_class),
    name(vocab::TRL_CLASSES[3], vocab::trl_class),
    name(vocab::TRL_CLASSES[4], vocab::trl_class),
    name(vocab::TRL_CLASSES[5], vocab::trl_class),
    name(vocab::TRL_CLASSES[6], vocab::trl_class),
    name(vocab::TRL_CLASSES[7], vocab::trl_class),
    name(vocab::TRL_CLASSES[8], vocab::trl_class),
    name("mlc::llm::", vocab::mlc_llm_own),
    name("mlc_llm ", vocab::mlc_llm_own),
    name("mlc_chat", vocab::mlc_llm_own),
    name("llamafactory", vocab::trainer_cli),
    name("LlamaFactory", vocab::trainer_cli),
    name("LLaMA-Factory", vocab::trainer_cli),
    name("axolotl", vocab::trainer_cli),
    name("Axolotl", vocab::trainer_cli),
    name("swift ", vocab::trainer_cli),
    name("Unsloth", vocab::trainer_cli),
    name("unsloth", vocab::trainer_cli),
    name("finetuning_type", vocab::trainer_cli),
    name("sample_packing", vocab::trainer_cli),
    name("lora_target_linear", vocab::trainer_cli),
    name("vLLM", vocab::engine_in_prose),
    name("vllm", vocab::engine_in_prose),
    name("VLLM", vocab::engine_in_prose),
    name("SGLang", vocab::engine_in_prose),
    name("sglang", vocab::engine_in_prose),
    name("Sglang", vocab::engine_in_prose),
    name("Ollama", vocab::engine_in_prose),
    name("ollama", vocab::engine_in_prose),
    name("llama.cpp", vocab::engine_in_prose),
    name("llama-cpp-python", vocab::engine_in_prose),
    name("llama_cpp_python", vocab::engine_in_prose),
    name("TensorRT-LLM", vocab::engine_in_prose),
    name("TRT-LLM", vocab::engine_in_prose),
    name("trt-llm", vocab::engine_in_prose),
    name("TensorRT LLM", vocab::engine_in_prose),
    name("LMDeploy", vocab::engine_in_prose),
    name("lmdeploy", vocab::engine_in_prose),
    name("MLC-LLM", vocab::engine_in_prose),
    name("MLC LLM", vocab::engine_in_prose),
    name("mlc-llm", vocab::engine_in_prose),
    // Session 40 (f3, `engines/pasted.rs` cites each): JAX's pip extras (`"jax[cuda12]"`,
    // `jax[rocm]`), DeepSpeed's launcher command (`deepspeed --num_gpus 8 src/train.py …`),
    // Apple's MLX by name (`MLX`, `mlx_lm`, `mlx-vlm`, `mlx.core`).
    name("jax[", pasted::jax_install_extra),
    name("deepspeed ", pasted::deepspeed_launcher),
    name("MLX", pasted::mlx_named),
    name("mlx_lm", pasted::mlx_named),
    name("mlx-lm", pasted::mlx_named),
    name("mlx_vlm", pasted::mlx_named),
    name("mlx-vlm", pasted::mlx_named),
    name("mlx.core", pasted::mlx_named),
];

/// Whether a ggml line is relayed by another program's logger (stable-diffusion.cpp's
/// `[ERROR] ggml_extend.hpp:70 - ggml_backend_cuda_buffer_type_alloc_buffer: …`): that program
/// is what ran, not llama.cpp.
pub(super) fn relayed_ggml_line(text: &str) -> bool {
    vocab::sdcpp_logged(text)
}

/// Whether `handler`'s markers matter only in short reports and a long log's head, which the
/// scanner of every marker reads (`super::marker_for_reports_only`): handlers of what a reporter
/// writes, not of a program's log lines (the engine named in a sentence, an issue form's
/// answers, the launch command, image, config or code the report quotes), and of lines that only name
/// the program and that it prints from its start (stable-diffusion.cpp's logger, transformers'
/// explicit log format while it loads the config and tokenizer), which the head of a long log
/// shows. Kept off the scanner of a long log's middle, they cost its busy lines nothing.
pub(super) fn reads_a_report(handler: super::Handler) -> bool {
    [
        vocab::engine_in_prose as super::Handler,
        vocab::invokeai_form,
        vocab::invokeai_config,
        vocab::transformers_training_field,
        vocab::mlc_llm_module,
        vocab::vllm_named_image,
        vocab::vllm_site,
        vocab::comfyui_form,
        vocab::comfyui_node_display,
        vocab::vllm_flags,
        vocab::sdcpp_logger,
        vocab::ggml_as_submodule,
        vocab::transformers_explicit_log,
        vocab::transformers_model_class,
        pytorch_idiom,
        lightning_code,
        vocab::trl_class,
        vocab::framework_image,
        pasted::jax_install_extra,
        pasted::deepspeed_launcher,
        pasted::mlx_named,
    ]
    .iter()
    .any(|own| std::ptr::fn_addr_eq(handler, *own))
}

/// How high an engine sits in the stack a user runs: an application or serving engine (4–5)
/// over a training wrapper (3) over a model library (2) over a framework (1). At equal
/// certainty the higher layer wins, so a ComfyUI traceback through torch is ComfyUI, a PEFT
/// LoRA run through the `Trainer` is PEFT, and vLLM's traceback through transformers is vLLM.
pub fn layer(name: EngineName) -> u8 {
    match name {
        EngineName::Other => 0,
        EngineName::Pytorch | EngineName::Jax | EngineName::Tensorflow => 1,
        EngineName::Transformers | EngineName::Accelerate | EngineName::Diffusers => 2,
        // Training frameworks and task libraries: ComfyUI running an Ultralytics detector or a
        // Whisper node stays ComfyUI, and their own runs stay theirs over torch/transformers.
        EngineName::Peft
        | EngineName::Lightning
        | EngineName::Deepspeed
        | EngineName::Ultralytics
        | EngineName::Detectron2
        | EngineName::Openmmlab
        | EngineName::Whisper
        | EngineName::Ctranslate2 => 3,
        EngineName::Vllm
        | EngineName::Sglang
        | EngineName::Tgi
        | EngineName::Llamacpp
        | EngineName::TensorrtLlm
        | EngineName::Lmdeploy
        | EngineName::Exllamav2
        | EngineName::MlcLlm
        | EngineName::Comfyui
        | EngineName::Automatic1111
        | EngineName::Invokeai => 4,
        // Wrappers of another engine: ollama runs llama.cpp, Aphrodite forked vLLM, Fooocus
        // runs its own copy of ComfyUI's model management (`ldm_patched`).
        EngineName::Ollama | EngineName::Aphrodite | EngineName::Fooocus => 5,
    }
}

/// Whether `new` should replace `old` as the engine of a run: the surer claim wins, then the
/// higher layer; ties keep the first.
pub fn outranks(new: (EngineName, Certainty), old: (EngineName, Certainty)) -> bool {
    // A wrapper's lines, however weak (a compose service `ollama  | `), make the wrapped
    // engine's lines its own: ollama's runner prints llama.cpp's, Aphrodite vLLM's.
    if wraps(old.0, new.0) {
        return false;
    }
    if wraps(new.0, old.0) {
        return true;
    }
    // A reporter's sentence naming the engine ("with vLLM") says more than a torch frame or a
    // torch message of that engine's run; any library or app the text shows says more than it.
    if new.1 == Certainty::Prose && old.1 == Certainty::Weak && layer(old.0) <= 1 {
        return true;
    }
    if old.1 == Certainty::Prose && new.1 == Certainty::Weak && layer(new.0) <= 1 {
        return false;
    }
    (new.1, layer(new.0)) > (old.1, layer(old.0))
}

/// Whether `outer` runs `inner` and prints its lines.
fn wraps(outer: EngineName, inner: EngineName) -> bool {
    matches!(
        (outer, inner),
        (EngineName::Ollama, EngineName::Llamacpp)
            | (EngineName::Aphrodite, EngineName::Vllm)
            | (EngineName::Fooocus, EngineName::Comfyui)
    )
}

/// The engine a stream prefix names: vLLM's process tags (`(VllmWorkerProcess pid=123)`,
/// `(EngineCore_DP0 pid=7)`, `(APIServer pid=1)`, `(RayWorkerWrapper pid=9)`) for sure; a
/// docker-compose service named after its engine (`tabbyapi-1  | `, `vllm-1  | `) weakly.
pub fn engine_of_stream(stream: &str) -> Option<(EngineName, Certainty)> {
    // (V1's multiprocess executor tags its workers `(Worker_TP0 pid=…)`, `(Worker_PP1_TP0
    // pid=…)`, `multiproc_executor.py` `WorkerProc`.)
    const VLLM: [&str; 7] = [
        "Worker_TP",
        "Worker_PP",
        "VllmWorker",
        "EngineCore",
        "APIServer",
        "RayWorkerWrapper",
        "AsyncLLM",
    ];
    if VLLM.iter().any(|name| stream.contains(name)) {
        return Some((EngineName::Vllm, Certainty::Strong));
    }
    let service = stream.to_ascii_lowercase();
    // vllm.rs (guoqingbao/vllm.rs: the `vllm-rs` binary and images, the `vllm_rs` crate) is
    // another engine, in Rust on candle: a service named after it (`vllm-rs-med0  | `) is not
    // vLLM's.
    if ["vllm-rs", "vllm_rs", "vllm.rs"]
        .iter()
        .any(|name| service.contains(name))
    {
        return None;
    }
    const SERVICES: &[(&str, EngineName)] = &[
        ("aphrodite", EngineName::Aphrodite),
        ("vllm", EngineName::Vllm),
        ("sglang", EngineName::Sglang),
        ("text-generation-inference", EngineName::Tgi),
        ("tgi", EngineName::Tgi),
        ("ollama", EngineName::Ollama),
        ("llama-server", EngineName::Llamacpp),
        ("llamacpp", EngineName::Llamacpp),
        // TabbyAPI, not TabbyML (a llama.cpp-based coding assistant).
        ("tabbyapi", EngineName::Exllamav2),
        ("exllama", EngineName::Exllamav2),
        ("lmdeploy", EngineName::Lmdeploy),
        ("trtllm", EngineName::TensorrtLlm),
        ("tensorrt-llm", EngineName::TensorrtLlm),
        ("comfyui", EngineName::Comfyui),
        ("invokeai", EngineName::Invokeai),
    ];
    SERVICES
        .iter()
        .find(|(name, _)| service.contains(name))
        .map(|(_, engine)| (*engine, Certainty::Weak))
}

/// Whether a raw line carries vLLM's logger prefix, `INFO 03-13 09:00:43 [core.py:330] ` (≥ 0.8)
/// or `ERROR 11-29 12:00:00 async_llm_engine.py:64] ` (older): `vllm/logger.py` `_FORMAT =
/// "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s"`, `_DATE_FORMAT =
/// "%m-%d %H:%M:%S"`.
pub fn has_vllm_prefix(line: &str) -> bool {
    let line = crate::parse::text::after_transport_timestamp(line);
    let mut words = line.trim_start().splitn(4, ' ');
    let (Some(level), Some(date), Some(time), Some(rest)) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return false;
    };
    let levels = ["INFO", "WARNING", "ERROR", "DEBUG", "CRITICAL"];
    let date_ok = date.len() == 5
        && date.as_bytes()[2] == b'-'
        && date.bytes().filter(u8::is_ascii_digit).count() == 4;
    let time_ok = time.len() >= 8 && time.as_bytes()[2] == b':' && time.as_bytes()[5] == b':';
    let location = rest.split(' ').next().unwrap_or("");
    let location_ok = location.ends_with(']')
        && location.contains(".py:")
        && location
            .trim_start_matches('[')
            .trim_end_matches(']')
            .rsplit(':')
            .next()
            .is_some_and(|number| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()));
    levels.contains(&level) && date_ok && time_ok && location_ok
}

/// Whether a raw line starts with SGLang's prefix `[2025-01-01 12:00:00 TP1] ` (also
/// `DP0 TP1`, `TP0 EP0`, `PP0 TP1`; `sglang/srt/utils.py` `configure_logger` with
/// `prefix=f" TP{tp_rank}"`).
pub fn has_sglang_prefix(raw: &str) -> bool {
    let raw = crate::parse::text::after_transport_timestamp(raw);
    let bytes = raw.trim_start().as_bytes();
    if bytes.first() != Some(&b'[') {
        return false;
    }
    let Some(close) = memchr::memchr(b']', &bytes[..bytes.len().min(48)]) else {
        return false;
    };
    let inside = &raw.trim_start()[1..close];
    // A date and a time first, then rank tags.
    let mut words = inside.split(' ');
    let (Some(date), Some(time)) = (words.next(), words.next()) else {
        return false;
    };
    let dated = date.len() == 10 && date.as_bytes().get(4) == Some(&b'-') && time.contains(':');
    let mut tags = words.peekable();
    dated
        && tags.peek().is_some()
        && tags.all(|tag| {
            let (name, number) = tag.split_at(tag.len().min(2));
            matches!(name, "TP" | "DP" | "PP" | "EP" | "CP")
                && !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
        })
        && inside.contains(" TP")
}

/// Whether a failure message is TVM's runtime error (`tvm.error.InternalError: …`,
/// `tvm._ffi.base.TVMError`, a `tvm/src/runtime/…` location): MLC-LLM's runtime, but also
/// TVM-FFI (apache/tvm-ffi), the calling convention of FlashInfer's, SGLang's `sgl-kernel` JIT
/// and CuTe DSL's kernels, whose errors are raised as TVM's. It names MLC-LLM only where nothing
/// else in the text names an engine (`analyze::explain::engine_choice`): SGLang's own lines,
/// image or frames win over it.
pub fn tvm_runtime_error(text: &str, exception: Option<&str>) -> bool {
    has(text, "tvm/src/runtime") || has(text, "tvm.error") || has(exception.unwrap_or(""), "tvm.")
}

/// The engine a failure message's own text or exception shows, for engines whose error is
/// not PyTorch's: TensorRT-LLM's `[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync`,
/// TurboMind's `[TM][ERROR] CUDA runtime error: out of memory /lmdeploy/src/turbomind/…`, the TVM
/// runtime of MLC-LLM, XLA's `XlaRuntimeError: RESOURCE_EXHAUSTED`, TensorFlow's
/// `ResourceExhaustedError` / `OOM when allocating tensor`.
pub fn engine_of_message(text: &str, exception: Option<&str>) -> Option<EngineName> {
    let exception = exception.unwrap_or("");
    // An optional back end an app could not import (MinerU's `import tensorrt_llm failed, if do
    // not use tensorrt, ignore this message`, session 52) did not run.
    let import_failed = text.match_indices("import ").any(|(at, _)| {
        let rest = &text[at + "import ".len()..];
        let name = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        name > 0 && rest[name..].starts_with(" failed")
    });
    if import_failed {
        return None;
    }
    if has(text, "[TensorRT-LLM]") || has(text, "tensorrt_llm") || has(text, "[TRT-LLM]") {
        return Some(EngineName::TensorrtLlm);
    }
    if has(text, "[TM][") || has(text, "turbomind") || has(text, "lmdeploy") {
        return Some(EngineName::Lmdeploy);
    }
    if has(text, "mlc-llm") || has(text, "mlc_llm") || has(text, "mlc_chat") {
        return Some(EngineName::MlcLlm);
    }
    // TVM's runtime error without MLC-LLM's name is left to `tvm_runtime_error`: TVM's FFI
    // now runs other engines' kernels too.
    if has(exception, "XlaRuntimeError")
        || has(exception, "jaxlib")
        || has(text, "XlaRuntimeError")
        || has(text, "jaxlib.")
    {
        return Some(EngineName::Jax);
    }
    // PaddlePaddle raises its allocator's "Out of memory error on GPU %d. …" as its own
    // `ResourceExhaustedError` (`paddle/fluid/platform/enforce.h` `PADDLE_THROW_BAD_ALLOC(
    // errors::ResourceExhausted(…))`, `cuda_allocator.cc`): the class is not TensorFlow's.
    // Its host allocator too (`paddle/fluid/memory/detail/system_allocator.cc`: "Fail to
    // alloc memory of N size, error code is 12."), by its wording or its source path.
    if has(text, "Out of memory error on GPU")
        || has(text, "PaddlePaddle")
        || has(text, "Fail to alloc memory of")
        || has(text, "paddle/fluid/")
    {
        return None;
    }
    // TensorFlow's ROCm stream executor in the releases that print the HIP status as a number
    // (hipTensorFlow, TF-ROCm 1.x `stream_executor/rocm/rocm_driver.cc` `GpuDriver::
    // DeviceAllocate`: "failed to allocate 8.00G from device: hipError_t(1002)"); XLA's later
    // copy (JAX on ROCm) prints the status by name.
    if has(text, "from device: hipError_t(") {
        return Some(EngineName::Tensorflow);
    }
    if has(exception, "ResourceExhaustedError")
        || has(exception, "tensorflow")
        || has(text, "ResourceExhaustedError")
        || has(text, "OOM when allocating tensor")
        // (Its errors module, however the class is quoted: `_tensorflow.python.framework.
        // errors_impl.InternalError: …_` in a reporter's italics; its device set-up's own
        // words, `gpu_device.cc`.)
        || has(text, "tensorflow.python.framework.errors_impl")
        || has(text, "CUDA runtime implicit initialization on GPU")
    {
        return Some(EngineName::Tensorflow);
    }
    // XRT's `Attempting to reserve … at the bottom of memory` is the TPU runtime of TensorFlow
    // and PyTorch/XLA 1.x (`xla_client/xla_util.cc`); JAX never ran on XRT: no engine from it.
    if has(text, "Attempting to reserve") {
        return None;
    }
    // CTranslate2's `CUDA_CHECK` (`src/cuda/utils.h`: `THROW_RUNTIME_ERROR("CUDA failed with
    // error " + cudaGetErrorString(code))`), the error faster-whisper users see.
    if has(text, "CUDA failed with error") {
        return Some(EngineName::Ctranslate2);
    }
    if has(text, "Out of memory while trying to allocate") || has(text, "RESOURCE_EXHAUSTED") {
        // PyTorch/XLA raises XLA's status as a `RuntimeError: Bad StatusOr access:
        // RESOURCE_EXHAUSTED: …` (torch_xla's C++ bindings; JAX raises `XlaRuntimeError`,
        // TensorFlow `ResourceExhaustedError`);
        // IREE's runtime prints the same status code for its own HAL (`…; while invoking native
        // function hal.device.queue.alloca; …`): neither is JAX.
        if has(text, "Bad StatusOr access") {
            return Some(EngineName::Pytorch);
        }
        if has(text, "native function hal.") {
            return None;
        }
        return Some(EngineName::Jax);
    }
    None
}

#[cfg(test)]
mod tests;
