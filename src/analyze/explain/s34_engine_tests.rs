//! Whole-text checks of the engine rules session 34's blind batches showed missing. The
//! excerpts are short copies of the lines each rule reads, with the failure they came with.

use super::whole_text::engine;
use crate::model::failure::EngineName;

const TORCH_OOM: &str =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB. \
    GPU 0 has a total capacity of 94.97 GiB of which 52.00 MiB is free. Of the allocated memory \
    90.12 GiB is allocated by PyTorch, and 133.00 MiB is reserved by PyTorch but unallocated.\n";

const ILLEGAL_ACCESS: &str = "RuntimeError: CUDA error: an illegal memory access was encountered\n\
    CUDA kernel errors might be asynchronously reported at some other API call, so the \
    stacktrace below might be incorrect.\n\
    For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n\
    Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n";

#[test]
fn mlc_llms_python_modules_name_it() {
    let text = "# [Bug] KVCache takes up too much memory when running mlc_llm.serve.server\n\
                Start Rest API server by\n\
                python -m mlc_llm.serve.server --model ./dist/Llama-2-7b-chat-hf-q4f16_1-MLC \
                --device opencl:0\n\
                [2024-03-25 15:35:00] INFO engine.py:243: Estimated total single GPU memory \
                usage: 14361.14 MB (Parameters: 3615.13 MB. KVCache: 10689.56 MB. Temporary \
                buffer: 56.44 MB)\n";
    assert_eq!(engine(text), EngineName::MlcLlm);
    // Its shared library or a path is no module named.
    let text = format!("loading /opt/libmlc_llm.so failed\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Pytorch);
}

#[test]
fn vllm_rs_is_not_vllm() {
    // guoqingbao/vllm.rs: a Rust engine on candle, in a compose service named after it.
    let text = "vllm-rs-med0  | 2026-01-14T22:50:42.122819Z  WARN vllm_rs::utils: Allocating 8192 \
                KV blocks (131072 MB) for [2 seqs x 262144 tokens]\n\
                vllm-rs-med0  | Error: DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")\n\
                vllm-rs-med0  |    0: candle_core::error::Error::bt\n\
                vllm-rs-med0  |    4: vllm_rs::core::runner::ModelRunner::init_kv_cache\n";
    assert_eq!(engine(text), EngineName::Other);
    // vLLM's own compose service still names vLLM.
    let text = format!("vllm-1  | {TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Vllm);
}

#[test]
fn vllms_images_and_flags_name_it() {
    let text = format!(
        "Environment\n\n    Image: voipmonitor/vllm:jovian-judgement-cu133-torch213-r4 \
         (local-inference.vllm.package-version = 0.26.1rc0)\n\n\
         Both TP workers raise {TORCH_OOM}"
    );
    assert_eq!(engine(&text), EngineName::Vllm);
    let text = format!("docker run --device /dev/kfd rocm/vllm:latest\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Vllm);
    let text = format!(
        "    Key flags: --max-model-len 1048576 --gpu-memory-utilization 0.975 \
         --speculative-config {{method: dspark, num_spec_tokens: 3}}\n{TORCH_OOM}"
    );
    assert_eq!(engine(&text), EngineName::Vllm);
    // A folder named vllm is no image; vllm.rs's images are another engine's.
    let text = format!("cd /opt/vllm: permission denied\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Pytorch);
    let text = format!("docker run guoqingbao/vllm-rs:latest\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Pytorch);
}

#[test]
fn comfyui_set_against_a_web_ui_is_a_comparison() {
    let text = format!(
        "webui上报以下错误，在2080ti上：\n{ILLEGAL_ACCESS}\n\
         在comfyui上因2080ti的cuda不支持bf16，可以选择fp16模式，在webui上没有地方做此修改\n"
    );
    assert_ne!(engine(&text), EngineName::Comfyui);
    let text =
        format!("In ComfyUI I can choose fp16, but the webui has no such option:\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Pytorch);
    // ComfyUI's own web UI, or ComfyUI named alone, is ComfyUI.
    let text = format!("the comfyui web ui shows this:\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Comfyui);
    let text = format!("在comfyui上运行时出现以下错误\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Comfyui);
}

#[test]
fn invokeais_config_file_and_bug_form_name_it() {
    // The form's answers, and its "Python dependencies" list naming diffusers.
    let text = "[bug]: `force_tiled_decode: true` apparently ignored\n\n\
                ### GPU vendor\n\nAMD (ROCm)\n\n### GPU model\n\nRadeon RX 7600Xt\n\n\
                ### Python dependencies\n\naccelerate 1.0.1\ndiffusers 0.31.0\n\
                torch 2.7.0.dev20250216+rocm6.3\n\n### What happened\n\n\
                I have identical OOM error with and without; in both case 9.0GiB were \
                requested.\n";
    assert_eq!(engine(text), EngineName::Invokeai);
    let text =
        format!("My current `invokeai.yaml` is:\n```\nforce_tiled_decode: true\n```\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Invokeai);
    let text = format!("### Install method\n\nInvoke's Launcher\n\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Invokeai);
    // The answer inside a sentence is no form.
    let text = format!("My GPU vendor is Nvidia (CUDA) on Linux.\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Pytorch);
}

#[test]
fn stable_diffusion_cpps_logger_names_it_over_ggmls_lines() {
    let text = "[INFO ] stable-diffusion.cpp:4197 - decoding 1 latents\n\
                [DEBUG] ggml_extend.hpp:2061 - vae compute buffer size: 14978.25 MB(VRAM)\n\
                [DEBUG] ggml_extend.hpp:61   - ROCm pool[0]: alloc of 1209.60 MiB failed, \
                flushing 935.90 MiB of cached buffers and retrying\n\
                [ERROR] ggml_extend.hpp:70   - ROCm error: out of memory\n\
                [ERROR] ggml_extend.hpp:70   -   current device: 0, in function alloc at \
                ggml/src/ggml-cuda/ggml-cuda.cu:449\n";
    assert_eq!(engine(text), EngineName::Other);
    // ggml's own lines printed after it are its library's.
    let text = "[INFO ] stable-diffusion.cpp:846  - attempting to apply 1 LoRAs\n\
                ggml_vulkan: Device memory allocation of size 5365186568 failed.\n\
                ggml_vulkan: Requested buffer size exceeds device memory allocation limit: \
                ErrorOutOfDeviceMemory\n\
                ggml_gallocr_reserve_n: failed to allocate Vulkan0 buffer of size 5365186568\n";
    assert_eq!(engine(text), EngineName::Other);
    // Without it, ggml's lines are llama.cpp's.
    let text = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: \
                cudaMalloc failed: out of memory\n";
    assert_eq!(engine(text), EngineName::Llamacpp);
}

#[test]
fn transformers_explicit_log_format_names_it() {
    let text = "[INFO|tokenization_utils_base.py:2194] 2023-09-15 14:50:06,318 >> tokenizer \
                config file saved in ../output_dir/sft_lora_model/tokenizer_config.json\n\
                Traceback (most recent call last):\n  \
                File \"run_clm_sft_with_peft.py\", line 529, in <module>\n    main()\n\
                RuntimeError: CUDA error: out of memory\n";
    assert_eq!(engine(text), EngineName::Transformers);
}

#[test]
fn trl_named_and_frameworks_named_beside_pytorch() {
    let text = "This meant I would need to compile PyTorch and TensorFlow specifically for this \
                architecture.\n\
                I encountered yet another error—this time, a straightforward \"out of memory\" \
                issue.\n\
                My immediate suspicion: a memory leak in the GRPO trainer from the TRL library.\n";
    assert_eq!(engine(text), EngineName::Transformers);
    // TensorFlow named alone still names it.
    let text = "while training with Tensorflow GPU I get\nCUDA out of memory\n";
    assert_eq!(engine(text), EngineName::Tensorflow);
}

#[test]
fn training_arguments_fields_and_torch_xlas_client() {
    let text = "3. run trainer.train() with evaluate_during_training\n\
                2020-06-14 21:45:53.187694: E tensorflow/compiler/xla/xla_client/xla_util.cc:76] \
                (1) Resource exhausted: Attempting to reserve 2.78G at the bottom of memory. \
                That was not possible. There\n";
    assert_eq!(engine(text), EngineName::Transformers);
    // PyTorch/XLA's client alone is PyTorch on a TPU.
    let text = "2020-06-14 21:45:53.187694: E tensorflow/compiler/xla/xla_client/xla_util.cc:76] \
                (1) Resource exhausted: Attempting to reserve 2.78G at the bottom of memory.\n";
    assert_eq!(engine(text), EngineName::Pytorch);
}

#[test]
fn ultralytics_and_detectron2_named_in_a_sentence() {
    let text = "When I use YOLO11 for training on Linux, with batch 17 I get\n\
                ultralytics        8.3.173\n\
                RuntimeError: CUDA error: out of memory\n";
    assert_eq!(engine(text), EngineName::Ultralytics);
    let text = format!("COCO evaluation with detectron2 runs out of memory:\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Detectron2);
    // A YOLO model run by another program names the model, not Ultralytics.
    let text = format!("| Model | YOLOv8 PPE-detector, exported to TensorRT engine |\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Pytorch);
}

#[test]
fn transformers_classes_loaded_in_pasted_code() {
    let text = "model = LlamaForCausalLM.from_pretrained(\n\
                在这步加载模型的时候就报了： RuntimeError: CUDA error: out of memory\n";
    assert_eq!(engine(text), EngineName::Transformers);
    let text = format!("tok = AutoTokenizer.from_pretrained(path)\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Transformers);
    // A diffusers pipeline is diffusers'; a user's class is no transformers class.
    let text = format!("pipe = AutoPipelineForText2Image.from_pretrained(path)\n{TORCH_OOM}");
    assert_ne!(engine(&text), EngineName::Transformers);
    let text = format!("net = MyNet.from_pretrained(path)\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Pytorch);
}

#[test]
fn trls_trainers_named() {
    let text = format!(
        "I am encountering an out-of-memory (OOM) issue while using the DPOTrainer even though \
         I am running it on an A100 GPU.\n{TORCH_OOM}"
    );
    assert_eq!(engine(&text), EngineName::Transformers);
    // Another library's PPO trainer, or a longer class name, is not TRL's.
    let text = format!("trainer = RayPPOTrainer(config)\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Pytorch);
}

#[test]
fn candle_vllm_is_not_vllm() {
    let text = "Runtime CUDA Memory Ballooning to OOM in Mistralrs while Candle-vllm is Stable\n\n\
                When a model can be run by candle vllm, its memory profile is stable and no \
                additional use occurs when passing data.\n";
    assert_ne!(engine(text), EngineName::Vllm);
    let text = format!("This happens with vllm 0.6.3 on 2x A100\n{TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Vllm);
}

#[test]
fn the_frameworks_own_images_name_them() {
    let text = "FROM tensorflow/tensorflow:2.1.0-py3\n\
                2020-03-01 10:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1655] OP_REQUIRES \
                failed at random_op.cc:76 : Resource exhausted: OOM when allocating tensor with \
                shape[1024,1024]\n";
    assert_eq!(engine(text), EngineName::Tensorflow);
    let text = "FROM tensorflow/tensorflow:2.1.0-py3\nInternal: Failed to allocate memory \
                (out of memory)\n";
    assert_eq!(engine(text), EngineName::Tensorflow);
    // An application on PyTorch's image names itself.
    let text = format!("FROM nvcr.io/nvidia/pytorch:24.01-py3\nvllm-1  | {TORCH_OOM}");
    assert_eq!(engine(&text), EngineName::Vllm);
}
