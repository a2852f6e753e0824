use super::super::parse_line_scan;
use super::*;

fn engine(line: &str) -> Option<(EngineName, Certainty)> {
    parse_line_scan(line).engine
}

#[test]
fn wrappers_and_prefixes_name_the_engine() {
    let cases: &[(&str, EngineName)] = &[
        ("vllm.engine.multiprocessing.MQEngineDeadError: Engine loop is not running. Inspect the stacktrace to find the original error: RuntimeError('CUDA out of memory')", EngineName::Vllm),
        ("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.", EngineName::Vllm),
        ("[TensorRT-LLM] TensorRT-LLM version: 0.12.0.dev2024072300", EngineName::TensorrtLlm),
        ("[11/10/2023-06:30:40] [TRT-LLM] [E] Engine building failed, please check the error log.", EngineName::TensorrtLlm),
        ("[TensorRT-LLM][INFO] MPI size: 1, MPI local size: 1, rank: 0", EngineName::TensorrtLlm),
        ("2024-04-23 10:11:19,967 - lmdeploy - INFO - updated backend_config=TurbomindEngineConfig(model_name=None, tp=1, session_len=8192, max_batch_size=128, cache_max_entry_count=0.1)", EngineName::Lmdeploy),
        ("[2025-02-10 21:49:50,346]::[InvokeAI]::INFO --> Graph stats: 18f998d3", EngineName::Invokeai),
        ("2025-01-17T01:33:11.866832 - Requested to load HunyuanVideoClipModel_", EngineName::Comfyui),
        ("loaded completely 9.5 1639.4 True", EngineName::Comfyui),
        ("Time taken: 5.53sTorch active/reserved: 35120/35224 MiB, Sys VRAM: 38455/49140 MiB (78.26%)", EngineName::Automatic1111),
        ("Stable diffusion model failed to load", EngineName::Automatic1111),
        ("2023-01-01 W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.00GiB", EngineName::Tensorflow),
        ("DeepSpeed-MII: starting the inference server", EngineName::Deepspeed),
        ("from vllm import LLM, SamplingParams", EngineName::Vllm),
        (">>> from lmdeploy.messages import TurbomindEngineConfig", EngineName::Lmdeploy),
        ("import pytorch_lightning as pl", EngineName::Lightning),
        ("Epoch 0:  62%|██████▏   | 878/1417 [00:15<00:09, 56.28it/s]", EngineName::Lightning),
        ("This error means you ran out of memory on your GPU.", EngineName::Comfyui),
        ("G:/AI/ComfyUI/main.py --windows-standalone-build --cuda-malloc", EngineName::Comfyui),
        ("O^O/ \\_/ \\    Batch size per device = 2 | Gradient Accumulation steps = 4", EngineName::Transformers),
        ("outputs = model.generate(**inputs, max_new_tokens=10)", EngineName::Transformers),
        (">> InvokeAI, version 2.3.0", EngineName::Invokeai),
        (">> Could not generate image.", EngineName::Invokeai),
        ("A: 2.82 GB, R: 2.90 GB, Sys: 3.8/3.8125 GB (99.7%)", EngineName::Automatic1111),
        ("- **Node Type:** KSampler", EngineName::Comfyui),
        ("pipe = CogView3PlusPipeline.from_pretrained(", EngineName::Diffusers),
        ("pipe.enable_model_cpu_offload()", EngineName::Diffusers),
    ];
    for (line, expected) in cases {
        assert_eq!(engine(line).map(|e| e.0), Some(*expected), "{line}");
    }
    // The stage these lines name (issue 13).
    let facts = |line: &str| super::super::parse_line_scan(line);
    assert_eq!(
        facts(">> Could not generate image.").late_phase,
        Some(Phase::Inference)
    );
    assert_eq!(
        facts("[2025-01-01 10:00:00,000]::[InvokeAI]::INFO --> Graph stats: 0a1b2c").late_phase,
        Some(Phase::Inference)
    );
    assert_eq!(
        facts("A: 2.82 GB, R: 2.90 GB, Sys: 3.8/3.8125 GB (99.7%)").late_phase,
        Some(Phase::Inference)
    );
    assert_eq!(
        facts("- **Node Type:** KSampler").failed_phase_hint,
        Some(Phase::Inference)
    );
    assert_eq!(
        facts("Error occurred when executing CheckpointLoaderSimple:").failed_phase_hint,
        Some(Phase::WeightsLoad)
    );
    assert_eq!(facts("- **Node Type:** SaveImage").failed_phase_hint, None);
    assert!(facts(" | Epoch: [1][10003/10010]    Time 1.209")
        .events
        .iter()
        .any(|e| e.phase == Phase::TrainingStep));
    assert!(facts("Epoch: [3] done").events.is_empty());
    let tgi = "2023-07-19T21:02:09.363221Z ERROR text_generation_launcher: Method Prefill encountered an error.";
    assert_eq!(facts(tgi).failed_phase_hint, Some(Phase::Inference));
    let warmup = tgi.replace("Prefill", "Warmup");
    assert_eq!(facts(&warmup).failed_phase_hint, Some(Phase::Profiling));
    assert_eq!(engine("the model loaded completely fine"), None);
    assert_eq!(engine("Epoch 3/10 done"), None);
    assert_eq!(engine("we import the weights from disk"), None);
    assert_eq!(
        engine(".venv/lib/python3.14/site-packages/transformers/trainer.py:1412: in train"),
        Some((EngineName::Transformers, Certainty::Weak))
    );
    assert_eq!(
        engine(
            "\"/usr/local/lib/python3.10/dist-packages/exllamav2/linear.py\", line 138, in load"
        ),
        Some((EngineName::Exllamav2, Certainty::Weak))
    );
}

#[test]
fn paths_name_the_engine_on_any_platform() {
    let cases: &[(&str, Option<EngineName>)] = &[
        ("/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", Some(EngineName::Vllm)),
        ("/workspace/vllm/vllm/v1/worker/gpu_model_runner.py", Some(EngineName::Vllm)),
        ("C:\\ComfyUI_windows_portable\\ComfyUI\\comfy\\model_management.py", Some(EngineName::Comfyui)),
        ("C:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\torch\\nn\\modules\\module.py", Some(EngineName::Comfyui)),
        ("/opt/conda/envs/py311/lib/python3.11/site-packages/peft/tuners/lora/layer.py", Some(EngineName::Peft)),
        ("/usr/lib/python3/site-packages/lightning/pytorch/trainer/trainer.py", Some(EngineName::Lightning)),
        ("/usr/lib/python3/site-packages/pytorch_lightning/loops/fit_loop.py", Some(EngineName::Lightning)),
        ("/usr/lib/python3/site-packages/transformers/trainer.py", Some(EngineName::Transformers)),
        ("/root/.cache/huggingface/modules/transformers_modules/modeling_intern_vit.py", Some(EngineName::Transformers)),
        ("/usr/lib/python3/site-packages/accelerate/accelerator.py", Some(EngineName::Accelerate)),
        ("/usr/lib/python3/site-packages/diffusers/pipelines/pipeline_utils.py", Some(EngineName::Diffusers)),
        ("/usr/lib/python3/site-packages/jax/_src/interpreters/pxla.py", Some(EngineName::Jax)),
        ("/usr/lib/python3/site-packages/tensorflow/python/client/session.py", Some(EngineName::Tensorflow)),
        ("/usr/local/lib/python3.10/dist-packages/exllamav2/model.py", Some(EngineName::Exllamav2)),
        ("D:\\stable-diffusion-webui\\modules\\processing.py", Some(EngineName::Automatic1111)),
        ("/usr/lib/python3/site-packages/torch/nn/modules/module.py", Some(EngineName::Pytorch)),
        ("/home/me/train.py", None),
        ("/home/me/axolotl/src/axolotl/cli/train.py", Some(EngineName::Transformers)),
        ("/ws/LLaMA-Factory/src/llamafactory/train/tuner.py", Some(EngineName::Transformers)),
        ("/ws/ms-swift/swift/cli/rlhf.py", Some(EngineName::Transformers)),
        ("/data1/kohya_ss/venv/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", Some(EngineName::Accelerate)),
        // A framework's name in the environment's folders is not the package that ran.
        ("/opt/torch/.venv/lib/python3.12/site-packages/numba_cuda/numba/cuda/cudadrv/driver.py", None),
        ("/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py", Some(EngineName::Pytorch)),
        ("/home/me/jax/env/lib/python3.11/site-packages/sklearn/utils/extmath.py", None),
        ("/opt/torch/.venv/lib/python3.12/site-packages/triton/runtime/autotuner.py", Some(EngineName::Pytorch)),
    ];
    for (path, expected) in cases {
        assert_eq!(engine_of_path(path), *expected, "{path}");
    }
}

#[test]
fn applications_outrank_the_libraries_under_them() {
    let weak = Certainty::Weak;
    assert!(outranks(
        (EngineName::Peft, weak),
        (EngineName::Transformers, weak)
    ));
    assert!(outranks(
        (EngineName::Vllm, weak),
        (EngineName::Transformers, weak)
    ));
    assert!(outranks(
        (EngineName::Comfyui, weak),
        (EngineName::Pytorch, weak)
    ));
    assert!(outranks(
        (EngineName::Ollama, Certainty::Banner),
        (EngineName::Llamacpp, Certainty::Banner)
    ));
    assert!(!outranks(
        (EngineName::Llamacpp, Certainty::Strong),
        (EngineName::Ollama, weak)
    ));
    assert!(outranks(
        (EngineName::Aphrodite, weak),
        (EngineName::Vllm, Certainty::Strong)
    ));
    assert!(!outranks(
        (EngineName::Pytorch, weak),
        (EngineName::Lightning, weak)
    ));
    assert!(!outranks(
        (EngineName::Accelerate, weak),
        (EngineName::Transformers, weak)
    ));
    assert!(!outranks(
        (EngineName::Comfyui, weak),
        (EngineName::Vllm, Certainty::Strong)
    ));
}

#[test]
fn sglang_prefix_and_vllm_streams() {
    assert!(has_sglang_prefix(
        "[2025-01-01 12:00:00 TP1] Scheduler hit an exception"
    ));
    assert!(has_sglang_prefix(
        "[2025-04-02 01:02:03 DP0 TP3 EP3] Load weight begin"
    ));
    assert!(!has_sglang_prefix("[2025-01-01 12:00:00] INFO something"));
    assert!(!has_sglang_prefix("[rank0]: torch.OutOfMemoryError"));
    let strong = Some((EngineName::Vllm, Certainty::Strong));
    assert_eq!(engine_of_stream("VllmWorkerProcess pid=123"), strong);
    assert_eq!(engine_of_stream("EngineCore_DP0 pid=7"), strong);
    assert_eq!(
        engine_of_stream("tabbyapi-1"),
        Some((EngineName::Exllamav2, Certainty::Weak))
    );
    assert_eq!(engine_of_stream("rank0"), None);
    assert!(has_vllm_prefix(
        "ERROR 03-13 09:00:43 [core.py:330] torch.OutOfMemoryError: CUDA out of memory."
    ));
    assert!(has_vllm_prefix(
        "INFO 11-29 12:00:00 async_llm_engine.py:64] Traceback"
    ));
    assert!(!has_vllm_prefix(
        "ERROR 2024-01-01 12:00:00 something happened"
    ));
    assert!(!has_vllm_prefix(
        "INFO:     127.0.0.1:5 - \"POST /generate HTTP/1.1\" 200 OK"
    ));
}

#[test]
fn messages_of_non_pytorch_engines() {
    assert_eq!(
        engine_of_message("[TM][ERROR] CUDA runtime error: out of memory /lmdeploy/src/turbomind/utils/allocator.h:231", Some("RuntimeError")),
        Some(EngineName::Lmdeploy)
    );
    assert_eq!(
        engine_of_message(
            "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.",
            Some("jaxlib.xla_extension.XlaRuntimeError")
        ),
        Some(EngineName::Jax)
    );
    assert_eq!(
        engine_of_message("OOM when allocating tensor with shape[16,112,112,147] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", None),
        Some(EngineName::Tensorflow)
    );
    assert_eq!(
        engine_of_message(
            "train.py: failed to allocate 3.50G from device: hipError_t(2)",
            None
        ),
        Some(EngineName::Tensorflow)
    );
    assert_eq!(
        engine("llm = LLM(\"org/model-7b\", gpu_memory_utilization=0.85, max_model_len=8192)")
            .map(|e| e.0),
        Some(EngineName::Vllm)
    );
    assert_eq!(
        engine("cfg = MyLLM(gpu_memory_utilization=0.5)").map(|e| e.0),
        None
    );
    // PaddlePaddle's allocator raised as its own `ResourceExhaustedError` is not TensorFlow.
    assert_eq!(
        engine_of_message(
            "Out of memory error on GPU 1. Cannot allocate 256.000000MB memory on GPU 1",
            Some("ResourceExhaustedError")
        ),
        None
    );
    // XRT (TensorFlow, PyTorch/XLA 1.x) is not JAX.
    assert_eq!(
        engine_of_message(
            "RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at the bottom of memory. That \
             was not possible.",
            None
        ),
        None
    );
    assert_eq!(
        engine_of_message(
            "CUDA out of memory. Tried to allocate 2.00 GiB",
            Some("torch.OutOfMemoryError")
        ),
        None
    );
}

/// Applications named by their own strings, in prose or log prefixes (issue 13).
#[test]
fn applications_named_by_their_own_strings() {
    let cases: &[(&str, EngineName)] = &[
        (
            "INFO 10-27 21:53:48 aphrodite_engine.py:72] Initializing an LLM engine",
            EngineName::Aphrodite,
        ),
        (
            "i usually generate at 512x768 using high res fix.",
            EngineName::Automatic1111,
        ),
        ("Hires. fix: upscale by 2", EngineName::Automatic1111),
        (
            "venv \"C:\\sd\\venv\\Scripts\\Python.exe\" launched by webui-user.bat",
            EngineName::Automatic1111,
        ),
        (
            "2024-08-01 12:00:00,000 - main_thread.py :: ERROR - task failed",
            EngineName::Automatic1111,
        ),
        ("# Relatório de erro do ComfyUI", EngineName::Comfyui),
        // SwarmUI's relay of its ComfyUI backend (session 29).
        (
            "06:10:10.590 [Warning] [ComfyUI-0/STDERR] torch.OutOfMemoryError: CUDA out of memory.",
            EngineName::Comfyui,
        ),
        ("I run InvokeAI 5.6 on a 4090", EngineName::Invokeai),
        (
            "self.req_to_token_pool = ReqToTokenPool(",
            EngineName::Sglang,
        ),
    ];
    for (line, expected) in cases {
        assert_eq!(engine(line).map(|e| e.0), Some(*expected), "{line}");
    }
    assert_eq!(engine("/home/u/ComfyUI/.venv/lib/python3.11/site-packages/torch/cuda/__init__.py:641: UserWarning"), Some((EngineName::Pytorch, Certainty::Weak)));
    assert_eq!(engine("from threading import main_thread.py"), None);
    assert_eq!(
        engine_of_path("/opt/t5x/t5x/trainer.py"),
        Some(EngineName::Jax)
    );
}

/// Applications with memory settings of their own, by their paths, banners and loggers; and
/// the look-alikes that must not name them (docs/engines.md).
#[test]
fn applications_with_their_own_memory_settings() {
    let lines: &[(&str, EngineName)] = &[
        ("[Fooocus] Encoding positive #1 ...", EngineName::Fooocus),
        ("[Fooocus Model Management] Moving model(s) has taken 0.50 seconds", EngineName::Fooocus),
        ("Fooocus version: 2.1.865", EngineName::Fooocus),
        ("python entry_with_update.py --preset realistic", EngineName::Fooocus),
        ("ERROR    [Task Queue] Finish task with error: CUDA out of memory.", EngineName::Fooocus),
        ("just start Fooocus, installed on a venv", EngineName::Fooocus),
        ("Ultralytics YOLOv8.0.57 🚀 Python-3.9.12 torch-1.12.0 CUDA:0 (NVIDIA RTX A5000, 24564MiB)", EngineName::Ultralytics),
        ("Ultralytics 8.3.0 🚀 Python-3.11.4 torch-2.4.0+cu121 CUDA:0 (Tesla T4, 15095MiB)", EngineName::Ultralytics),
        ("AutoBatch: Computing optimal batch size for imgsz=640 at 60.0% CUDA memory utilization.", EngineName::Ultralytics),
        ("from ultralytics import YOLO", EngineName::Ultralytics),
        ("**ERROR [06/09 11:05:25 d2.engine.train_loop]**: Exception during training:", EngineName::Detectron2),
        ("[06/09 11:05:25 d2.engine.hooks]: Overall training speed: 22 iterations", EngineName::Detectron2),
        ("from detectron2.engine import DefaultTrainer", EngineName::Detectron2),
        ("12/09 06:49:23 - mmengine - INFO - Saving checkpoint at 14 epochs", EngineName::Openmmlab),
        ("2022-01-01 12:00:00,000 - mmdet - INFO - Epoch [1][50/7330]", EngineName::Openmmlab),
        ("model = WhisperModel(\"large-v3\", device=\"cuda\", compute_type=\"float16\")", EngineName::Ctranslate2),
        ("I use faster-whisper 1.0.3 with large-v3", EngineName::Ctranslate2),
        ("import whisper", EngineName::Whisper),
        ("pip install -U openai-whisper", EngineName::Whisper),
        ("I really like to test the exllamav2 or exllamav2_hf model loaders.", EngineName::Exllamav2),
        ("Running on CTranslate2 4.3.1 with cuDNN 9", EngineName::Ctranslate2),
        ("$ whisper-ctranslate2 talk.mp3 --model large-v2", EngineName::Ctranslate2),
        ("MMEngine: 0.10.3", EngineName::Openmmlab),
        ("[Parameters] Adaptive CFG = 7", EngineName::Fooocus),
        ("[Prompt Expansion] a cat, highly detailed", EngineName::Fooocus),
        ("      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size", EngineName::Ultralytics),
        ("!yolo detect train data=coco8.yaml model=yolov8n.pt epochs=3 imgsz=640", EngineName::Ultralytics),
        ("$ yolo task=detect mode=train model=yolov8s.pt batch=32", EngineName::Ultralytics),
        ("detectron2              0.6 @/usr/local/lib/python3.8/dist-packages/detectron2", EngineName::Detectron2),
        ("[2024-03-01 10:00:00.123] [ctranslate2] [thread 5150] [warning] The compute type inferred from the saved model is float16", EngineName::Ctranslate2),
        ("MMDetection: 3.3.0+44ebd17", EngineName::Openmmlab),
        ("MMCV: 2.1.0", EngineName::Openmmlab),
        ("MMSegmentation: 1.2.2+c685fe6", EngineName::Openmmlab),
        ("MMPretrain: 1.2.0+17a886c", EngineName::Openmmlab),
        ("!!! Exception during processing !!! Allocation on device", EngineName::Comfyui),
        (">> ESRGAN Parameters: False", EngineName::Invokeai),
        ("2023-11-01 16:19:17.812101: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate 127.99TiB", EngineName::Tensorflow),
        ("E c:\\tf_jenkins\\home\\workspace\\tensorflow\\stream_executor\\cuda\\cuda_blas.cc:372] failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED", EngineName::Tensorflow),
        ("[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275", EngineName::Pytorch),
        ("nums = torch.randn(2,2).cuda(), it show the above error", EngineName::Pytorch),
        ("Operator: op_name=\"pjit(train_step)/jit(main)/jvp(Transformer)\"", EngineName::Jax),
        ("ERROR    | 2024-08-21 22:56:04 | autotrain.trainers.common:wrapper:121 - HIP out of memory.", EngineName::Transformers),
    ];
    for (line, expected) in lines {
        assert_eq!(engine(line).map(|e| e.0), Some(*expected), "{line}");
    }
    let not_named: &[&str] = &[
        // Prose and other projects' words.
        "AutoBatch is a nice feature: AutoBatch: no",
        "we moved from d2.x to d3",
        "result - mmhmm - INFO - ok",
        "my_fooocus_clone is elsewhere",
        "I compared faster_whisper_benchmark.py results",
        "image: onerahmet/openai-whisper-asr-webservice:latest-gpu",
        // YOLOv5's own repository (other flags), and prose about YOLO.
        "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size",
        "I trained yolo train-style models last year",
        "we use yolo for detection = fun",
        "[Parameters] none given",
        "pip install exllamav2_kernels-0.1.whl",
        // jaxlib before 0.4 logged XLA from its TensorFlow checkout.
        "E external/org_tensorflow/tensorflow/compiler/xla/pjrt/pjrt_stream_executor_client.cc:2153] Execution failed",
        // A torch class named in a message is not code calling torch.
        "torch.cuda.OutOfMemoryError: CUDA out of memory.",
        "[TensorRT] ERROR: Out of memory error during getBestTactic: [FULLY_CONNECTED #1] torch.nn.functional.linear(tensor(shape=[1, 9216]))",
    ];
    for line in not_named {
        assert_eq!(engine(line), None, "{line}");
    }
    // The package named in a sentence is the reporter's words: no more than that.
    assert_eq!(
        engine("the Ultralytics package has a memory issue"),
        Some((EngineName::Ultralytics, Certainty::Prose))
    );
    assert_eq!(
        engine("detectron2 is great"),
        Some((EngineName::Detectron2, Certainty::Prose))
    );
    // An environment key without its version is the reporter's sentence naming the toolbox:
    // no stronger than that.
    assert_eq!(
        engine("MMEngine: see the docs"),
        Some((EngineName::Openmmlab, Certainty::Prose))
    );
    let paths: &[(&str, Option<EngineName>)] = &[
        ("X:\\AI\\Fooocus_win64_2-1-791\\Fooocus\\modules\\patch.py", Some(EngineName::Fooocus)),
        ("/content/Fooocus/ldm_patched/modules/model_management.py", Some(EngineName::Fooocus)),
        ("/app/repositories/Fooocus/backend/headless/fcbh/sd.py", Some(EngineName::Fooocus)),
        // Forge's early builds carried `ldm_patched` too: Forge is AUTOMATIC1111's.
        ("/sd/stable-diffusion-webui-forge/ldm_patched/modules/model_management.py", Some(EngineName::Automatic1111)),
        ("/work/AI/YOLOv8/ultralytics/ultralytics/yolo/engine/model.py", Some(EngineName::Ultralytics)),
        ("/usr/lib/python3.10/site-packages/detectron2/engine/train_loop.py", Some(EngineName::Detectron2)),
        // A conda env named after detectron2 runs torch's own files here.
        ("/home/lab/miniconda2/envs/detectron2/lib/python3.7/site-packages/torch/tensor.py", Some(EngineName::Pytorch)),
        ("/home/me/anaconda3/envs/yolox/lib/python3.8/site-packages/mmdet-3.3.0-py3.8.egg/mmdet/structures/bbox/bbox_overlaps.py", Some(EngineName::Openmmlab)),
        ("/envs/openmmlab/lib/python3.8/site-packages/mmengine/runner/loops.py", Some(EngineName::Openmmlab)),
        ("/home/coder/.local/lib/python3.8/site-packages/faster_whisper/transcribe.py", Some(EngineName::Ctranslate2)),
        ("faster_whisper\\transcribe.py", Some(EngineName::Ctranslate2)),
        ("D:\\anaconda3\\envs\\whisperTime\\lib\\site-packages\\whisper\\__init__.py", Some(EngineName::Whisper)),
        // A user's file or folder with `whisper` in its name is neither whisper package.
        ("/home/me/projects/whisper_tools/faster_whisper_run.py", None),
        ("/home/me/whisper/run_whisper.py", None),
        ("/Whisper-WebUI/modules/whisper/base_transcription_pipeline.py", None),
        ("C:\\Users\\me\\my_whisper\\transcribe.py", None),
    ];
    for (path, expected) in paths {
        assert_eq!(engine_of_path(path), *expected, "{path}");
    }
    // CTranslate2's own error wording.
    assert_eq!(
        engine_of_message("CUDA failed with error out of memory", Some("RuntimeError")),
        Some(EngineName::Ctranslate2)
    );
    // Fooocus prints ComfyUI's model-management lines from its `ldm_patched` copy.
    assert!(!outranks(
        (EngineName::Comfyui, Certainty::Strong),
        (EngineName::Fooocus, Certainty::Weak)
    ));
    // ComfyUI running an Ultralytics detector or a Whisper node stays ComfyUI.
    assert!(!outranks(
        (EngineName::Ultralytics, Certainty::Weak),
        (EngineName::Comfyui, Certainty::Weak)
    ));
    assert!(outranks(
        (EngineName::Detectron2, Certainty::Weak),
        (EngineName::Pytorch, Certainty::Weak)
    ));
}

#[test]
fn own_vocabulary_names_the_engine() {
    let strong: &[(&str, EngineName)] = &[
        ("2025-01-17T01:33:11.866832 - got prompt", EngineName::Comfyui),
        ("got prompt", EngineName::Comfyui),
        ("Prompt executed in 12.34 seconds", EngineName::Comfyui),
        ("Launching Web UI with arguments: --xformers --medvram", EngineName::Automatic1111),
        ("[GPU Setting] You will use 95.81% GPU memory (23438.00 MB) to load weights, and use 4.19% GPU memory (1024.00 MB) to do matrix computation.", EngineName::Automatic1111),
        ("[Memory Management] Target: KModel, Free GPU: 3150.27 MB, Model Require: 4897.05 MB", EngineName::Automatic1111),
        ("llm_load_print_meta: model size       = 4.58 GiB (5.01 BPW)", EngineName::Llamacpp),
        ("llama_new_context_with_model: n_ctx      = 32768", EngineName::Llamacpp),
        ("Welcome to KoboldCpp - Version 1.75.2", EngineName::Llamacpp),
        ("$ ollama run llama3:70b", EngineName::Ollama),
        ("ollama serve", EngineName::Ollama),
        ("[TM][WARNING] [LlamaTritonModel] `max_context_token_num` is not set, default to 8192.", EngineName::Lmdeploy),
        ("lmdeploy serve api_server internlm/internlm2-chat-7b --tp 2", EngineName::Lmdeploy),
        ("trtllm-build --checkpoint_dir ./ckpt --output_dir ./engine --max_batch_size 64", EngineName::TensorrtLlm),
        ("trtllm-serve meta-llama/Llama-3.1-8B --backend pytorch", EngineName::TensorrtLlm),
        ("  13: mlc::llm::serve::ThreadedEngineImpl::RunBackgroundLoop()", EngineName::MlcLlm),
        ("mlc_llm serve HF://mlc-ai/Llama-3-8B-Instruct-q4f16_1-MLC --mode server", EngineName::MlcLlm),
        ("C:\\work>mlc_chat_cli.exe --local-id demo-q4f16_0", EngineName::MlcLlm),
        ("from mlc_chat import ChatModule", EngineName::MlcLlm),
        ("python -m mlc_chat gen_config ./w --quantization q4f16_1", EngineName::MlcLlm),
        ("llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml", EngineName::Transformers),
        ("06/17/2024 10:00:00 - INFO - llamafactory.hparams.parser - Process rank: 0", EngineName::Transformers),
        ("accelerate launch -m axolotl.cli.train config.yml", EngineName::Transformers),
        ("axolotl train examples/llama-3/lora-1b.yml", EngineName::Transformers),
        ("CUDA_VISIBLE_DEVICES=0 swift sft --model_type qwen2-7b-instruct", EngineName::Transformers),
        ("🦥 Unsloth: Will patch your computer to enable 2x faster free finetuning.", EngineName::Transformers),
        ("Error: ShardCannotStart", EngineName::Tgi),
        ("(invokeai) C:\\stable-diffusion\\InvokeAI>python scripts\\invoke.py --web", EngineName::Invokeai),
        ("$ invokeai-web --root ~/invokeai", EngineName::Invokeai),
        ("time=2024-05-01T10:00:00.000Z level=INFO source=server.go:567 msg=\"waiting for llama runner to start responding\"", EngineName::Ollama),
    ];
    for (line, expected) in strong {
        let found = engine(line);
        assert_eq!(found.map(|e| e.0), Some(*expected), "{line}");
        assert!(found.is_some_and(|e| e.1 >= Certainty::Strong), "{line}");
    }
    let weak: &[(&str, EngineName)] = &[
        ("- **Node Type:** VAEDecodeTiled", EngineName::Comfyui),
        ("the KSampler node fails with a 1024x1024 latent", EngineName::Comfyui),
        ("I enabled Never OOM Integrated for the UNet", EngineName::Automatic1111),
        ("with GPU Weights at 7000 MB it still fails", EngineName::Automatic1111),
        ("set COMMANDLINE_ARGS=--xformers", EngineName::Automatic1111),
        ("./webui.sh --medvram-sdxl", EngineName::Automatic1111),
        ("### What browsers do you use to access the UI ?", EngineName::Automatic1111),
        ("OLLAMA_NUM_PARALLEL=4 OLLAMA_FLASH_ATTENTION=1", EngineName::Ollama),
        ("curl localhost:11434/api/generate -d '{\"options\": {\"num_gpu\": 20}}'", EngineName::Ollama),
        ("PARAMETER num_gpu 24", EngineName::Ollama),
        (">>> /set parameter num_gpu 10", EngineName::Ollama),
        ("Unable to allocate a buffer when num_gpu > 1", EngineName::Ollama),
        ("the turbomind backend crashes", EngineName::Lmdeploy),
        ("I run it with KoboldCpp on Windows", EngineName::Llamacpp),
        ("[rank1]:   File \"/home/owen/miniconda3/envs/axolotl/lib/python3.11/site-packages/torch/_tensor.py\",", EngineName::Transformers),
        ("Please use llamafactory v0.8.1", EngineName::Transformers),
        ("finetuning_type: lora", EngineName::Transformers),
        ("sample_packing: true", EngineName::Transformers),
        // ggml's own line: every program on ggml prints it, llama.cpp's own lines are strong.
        ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory", EngineName::Llamacpp),
        ("ggml_vulkan: Device memory allocation of size 5365186568 failed.", EngineName::Llamacpp),
        // PyTorch/XLA 1.x's XRT client, built in TensorFlow's tree (`third_party/xla_client/`).
        ("2022-04-04 00:27:49.642380: E tensorflow/compiler/xla/xla_client/xla_util.cc:88]   (1) RESOURCE_EXHAUSTED: Attempting to reserve 6.48G", EngineName::Pytorch),
        ("[INFO|trainer.py:2134] 2024-05-01 12:00:00,000 >> ***** Running training *****", EngineName::Transformers),
        ("Image: rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", EngineName::Vllm),
        ("    Key flags: --max-model-len 1048576 --gpu-memory-utilization 0.975", EngineName::Vllm),
        ("My current `invokeai.yaml` is:", EngineName::Invokeai),
        ("AMD (ROCm)", EngineName::Invokeai),
        ("KVCache takes up too much memory when running mlc_llm.serve.server", EngineName::MlcLlm),
    ];
    for (line, expected) in weak {
        assert_eq!(engine(line).map(|e| e.0), Some(*expected), "{line}");
    }
    // Look-alikes: another project's words, a file or a user's variable named alike.
    let none = [
        "I got prompted twice",
        "we got prompt injection in the logs",
        "MyKSampler_v2 is a custom class",
        "the swift language",
        "ollama_model_path = get_path()",
        "the mlc_llm_helper module",
        "my_mlc_chat_cli_wrapper --help",
        "see mlc_chat_notes.md",
        "my trtllm_utils.py script",
        "never oom again, I hope",
        "my_invoke.py --fast",
        "ShardFailedTest",
        // A program's own exception named like TGI's launcher errors is Python, not TGI.
        "    raise ShardFailed(f\"shard {i} failed\") from e",
        "__main__.ShardFailed: shard 3 could not be embedded",
        "class ShardFailed(RuntimeError):",
        // A training script's own flag named like Ollama's option.
        "flags.DEFINE_integer('num_gpu', 1, 'number of gpus for distributed training')",
        "python train.py --num_gpu 2",
        "trainer = Trainer(num_gpu=2)",
    ];
    for line in none {
        let found = engine(line);
        assert!(
            found.is_none_or(|e| e.1 == Certainty::Prose),
            "{line}: {found:?}"
        );
    }
}

#[test]
fn the_reporters_sentence_names_the_engine_weakly() {
    let cases: &[(&str, Option<EngineName>)] = &[
        ("I'm running vLLM 0.6.3 on 2x A100", Some(EngineName::Vllm)),
        // A numbered step is still the reporter's sentence; a timestamped line is a log's.
        (
            "1. I run vllm serve with the 70B model",
            Some(EngineName::Vllm),
        ),
        (
            "2025-11-29 10:02:36 the vllm scheduler sees 12 requests",
            None,
        ),
        ("[2025-11-29 10:02:36] serving with SGLang now", None),
        ("INFO 11-29 10:01:52 handing the batch to vllm", None),
        (
            "This happens with Ollama on a 3090",
            Some(EngineName::Ollama),
        ),
        ("用vllm部署qwen2-72b时显存不足", Some(EngineName::Vllm)),
        // A title's numbered name is no timestamp.
        (
            "04-GLM-4-9B-Chat vLLM 部署调用显存溢出问题",
            Some(EngineName::Vllm),
        ),
        ("2025-11-29T10:02:36Z vLLM engine started", None),
        (
            "SGLang crashes at startup with the 70B model",
            Some(EngineName::Sglang),
        ),
        (
            "Built llama.cpp from master today",
            Some(EngineName::Llamacpp),
        ),
        ("Same with TensorRT-LLM 0.9", Some(EngineName::TensorrtLlm)),
        ("trt-llm version: 0.7.1", Some(EngineName::TensorrtLlm)),
        (
            "I only have 3 nodes in comfy, loadimage and saveimage",
            Some(EngineName::Comfyui),
        ),
        (
            "Running TGI 2.0.4 in docker on 4xA10G",
            Some(EngineName::Tgi),
        ),
        (
            "In A1111 the same image renders fine",
            Some(EngineName::Automatic1111),
        ),
        (
            "with diffusers 0.27 and an SDXL pipeline",
            Some(EngineName::Diffusers),
        ),
        (
            "main branch (mmpretrain version)",
            Some(EngineName::Openmmlab),
        ),
        (
            "I train Mask R-CNN with mmdetection 3.x on my own dataset",
            Some(EngineName::Openmmlab),
        ),
        ("the lightning fast path", None),
        // A comparison names no one engine.
        ("It works in vLLM, fails in SGLang", None),
        // A URL, a path, a model tag, a module, code.
        ("see https://example.org/docs/vllm/serving.html", None),
        (
            "https://github.com/someone/my-app/blob/main/vllm_compat.py",
            None,
        ),
        ("the model ollama/llama3:8b from the hub", None),
        ("llama3-ollama-q4.gguf", None),
        ("from vllm.worker import Worker", Some(EngineName::Vllm)),
        ("engine = vllm.LLM(model=path)", None),
        ("  File \"/srv/vllm_test.py\", line 3, in <module>", None),
    ];
    for (line, expected) in cases {
        let found = engine(line);
        assert_eq!(found.map(|e| e.0), *expected, "{line}");
    }
    let prose = engine("I'm running vLLM 0.6.3").map(|e| e.1);
    assert_eq!(prose, Some(Certainty::Prose));
    // The sentence outranks a torch frame, never a library or app the text shows.
    let vllm = (EngineName::Vllm, Certainty::Prose);
    assert!(outranks(vllm, (EngineName::Pytorch, Certainty::Weak)));
    assert!(!outranks((EngineName::Pytorch, Certainty::Weak), vllm));
    assert!(!outranks(vllm, (EngineName::Transformers, Certainty::Weak)));
    assert!(outranks((EngineName::Transformers, Certainty::Weak), vllm));
    assert!(!outranks(vllm, (EngineName::Pytorch, Certainty::Strong)));
}

#[test]
fn tensorflow_device_creation_gives_the_memory_free_at_start() {
    let facts = |line: &str| super::super::parse_line_scan(line);
    let line = "2023-05-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1635] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 448 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6";
    let got = facts(line);
    assert_eq!(got.engine.map(|e| e.0), Some(EngineName::Tensorflow));
    assert_eq!(
        got.memory.free_at_start,
        Some(crate::model::Bytes(448 << 20))
    );
    assert!(got.memory.total_gpu.is_some_and(|t| t.get() > 20 << 30));
    // A limit the user set (a round figure), or a card not in the table: no start figure.
    let limit = line.replace("448 MB", "4096 MB");
    assert_eq!(facts(&limit).memory.free_at_start, None);
    let unknown = line.replace("NVIDIA GeForce RTX 3090", "Some Card 9000");
    assert_eq!(facts(&unknown).memory.free_at_start, None);
}

#[test]
fn a_link_to_the_engines_repository_names_it_weakly() {
    let cases: &[(&str, Option<EngineName>)] = &[
        ("same issue as https://github.com/NVIDIA/TensorRT-LLM/issues/1156", Some(EngineName::TensorrtLlm)),
        ("see https://github.com/vllm-project/vllm/blob/main/vllm/worker/worker.py#L120", Some(EngineName::Vllm)),
        ("git clone https://github.com/ggerganov/llama.cpp.git", Some(EngineName::Llamacpp)),
        // The repository decides, not the words of the path.
        ("https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/vllm_utils.py", Some(EngineName::Sglang)),
        // Not an engine's repository; two engines' repositories.
        ("![image](https://github.com/user-attachments/assets/ba031b64)", None),
        ("https://github.com/pytorch/pytorch/issues/1", None),
        ("same as https://github.com/open-mmlab/mmsegmentation/issues/3000", Some(EngineName::Openmmlab)),
        ("https://github.com/ultralytics/yolov5/issues/100", Some(EngineName::Ultralytics)),
        ("compare https://github.com/vllm-project/vllm/pull/1 and https://github.com/sgl-project/sglang/pull/2", None),
    ];
    for (line, expected) in cases {
        let found = engine(line);
        assert_eq!(found.map(|e| e.0), *expected, "{line}");
        assert!(found.is_none_or(|e| e.1 == Certainty::Prose), "{line}");
    }
}

/// OpenMMLab's error-report form and mmcv 1.x's config key name the toolboxes weakly; the same
/// words elsewhere do not.
#[test]
fn openmmlab_form_and_config_words_name_it_weakly() {
    for line in [
        "1. What command or script did you run?",
        "2. Did you make any modifications on the code or config? Did you understand what you have modified?",
        "2. samples_per_gpu = 4,num_workers=2, 2 gpus",
    ] {
        assert_eq!(
            engine(line),
            Some((EngineName::Openmmlab, Certainty::Prose)),
            "{line}"
        );
    }
    for line in [
        "What command did you run?",
        "per_device_train_batch_size=4, gradient_accumulation_steps=2",
    ] {
        assert_ne!(
            engine(line).map(|(name, _)| name),
            Some(EngineName::Openmmlab),
            "{line}"
        );
    }
}

/// The frameworks named capitalised in the reporter's sentence name them weakly; a longer word
/// holding the name and a framework the reporter only asks about do not.
#[test]
fn frameworks_named_in_a_sentence_name_them_weakly() {
    let cases: &[(&str, Option<EngineName>)] = &[
        (
            "while training with Tensorflow GPU i am getting an error",
            Some(EngineName::Tensorflow),
        ),
        (
            "It ran fine on TensorFlow 2.2 for 46 epochs",
            Some(EngineName::Tensorflow),
        ),
        ("[Flax] Add Textual Inversion", Some(EngineName::Jax)),
        ("the same model in JAX on a V100", Some(EngineName::Jax)),
        (
            "And if we reproduce this in TensorFlow will it be faster?",
            None,
        ),
        ("the TensorFlowLite converter's docs", None),
    ];
    for (line, expected) in cases {
        let found = engine(line);
        assert_eq!(found.map(|e| e.0), *expected, "{line}");
        assert!(found.is_none_or(|e| e.1 == Certainty::Prose), "{line}");
    }
    // faster-whisper as users spell it names CTranslate2.
    let whisper = engine("I've been using Faster Whisper from the start");
    assert_eq!(whisper.map(|e| e.0), Some(EngineName::Ctranslate2));
}

#[test]
fn pytorchs_legacy_thc_sources_name_it_and_lua_torchs_do_not() {
    for line in [
        "RuntimeError: cuda runtime error (2) : out of memory at C:/Users/a/win-wheel/pytorch/aten/src/THC/THCTensorRandom.cu:25",
        "RuntimeError: cuda runtime error (2) : out of memory at /opt/conda/conda-bld/pytorch_1513363039688/work/torch/lib/THC/generic/THCStorage.cu:58",
    ] {
        assert_eq!(engine(line), Some((EngineName::Pytorch, Certainty::Weak)), "{line}");
    }
    for line in [
        "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
        "RuntimeError cudnn error cudnn_status_alloc_failed",
    ] {
        assert_eq!(
            engine(line),
            Some((EngineName::Pytorch, Certainty::Weak)),
            "{line}"
        );
    }
    assert_eq!(
        engine("F0101 cudnn_conv_layer.cu:28] cuDNN error: CUDNN_STATUS_ALLOC_FAILED"),
        None
    );
    assert_eq!(
        engine("THCudaCheck FAIL file=/tmp/luarocks_cutorch-scm-1-1234/cutorch/lib/THC/generic/THCStorage.cu line=66 error=2 : out of memory"),
        None
    );
}

#[test]
fn every_name_of_a_sentence_has_its_marker() {
    // `engine_in_prose` runs only on a line holding one of its markers: each spelling it reads
    // must hold one.
    let markers: Vec<&str> = RULES
        .iter()
        .filter(|rule| {
            std::ptr::fn_addr_eq(
                rule.handler,
                vocab::engine_in_prose as super::super::Handler,
            )
        })
        .map(|rule| rule.marker)
        .collect();
    for (spellings, _) in vocab::PROSE {
        for spelling in *spellings {
            assert!(
                markers.iter().any(|marker| spelling.contains(marker)),
                "{spelling:?} has no `name(…, vocab::engine_in_prose)` marker"
            );
        }
    }
}
