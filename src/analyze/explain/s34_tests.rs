//! Whole-text checks of what session 34's blind batches showed missing: short excerpts of the
//! texts (names and sizes as printed), and the cases each rule must leave alone.

use super::whole_text::{phase, TORCH_OOM};
use crate::model::explain::Phase;

#[test]
fn llama_cpps_graph_reserve_follows_the_contexts_state_buffers() {
    // A context memory's state buffer is no weights; `sched_reserve: reserving ...` starts the
    // compute buffers' allocation.
    let text = "0.11.112.692 I llama_dsv4_comp_state:      CUDA0 DSV4 lid state buffer size =     \
                0.33 MiB\n\
                0.11.118.576 I sched_reserve: reserving ...\n\
                0.11.236.370 I resolve_fused_ops: fused Gated Delta Net (autoregressive) enabled\n\
                0.11.257.162 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 14656.12 MiB \
                on device 0: cudaMalloc failed: out of memory\n";
    assert_eq!(phase(text), Phase::Profiling);
}

#[test]
fn a_compute_buffer_reserved_from_a_decode_is_the_requests() {
    let text = "On b9426, `llama-server` loads the model, passes `/health`, and prints `server is \
                listening` — but the first real completion request crashes the process. The crash \
                happens when the MTP draft path runs its first decode and tries to reserve the \
                prompt-processing compute buffer (~983 MiB): `cudaMalloc failed: out of memory` → \
                `failed to allocate compute pp buffers` → `std::terminate` (backtrace below, \
                through `common_speculative_impl_draft_mtp::process` → `llama_decod\n";
    assert_eq!(phase(text), Phase::Inference);
    // At the context's creation the same failure is the graph reserve's.
    let text = "llama_init_from_model: failed to allocate compute pp buffers\n\
                ggml_backend_cuda_buffer_type_alloc_buffer: allocating 983.00 MiB on device 0: \
                cudaMalloc failed: out of memory\n";
    assert_eq!(phase(text), Phase::Profiling);
}

#[test]
fn comfyuis_node_title_in_the_reporters_words() {
    let text = "# ROCM HIP out of memory\n\nAMD Radeon RX 7900 XTX 24GB\nrocm-7.2.0\n\n\
                OOM while VAE Decode\n";
    assert_eq!(phase(text), Phase::Inference);
}

#[test]
fn k_diffusions_samplers_and_the_memory_monitor_thread() {
    let text = "  File \"/content/stable-diffusion-webui-forge/modules/sd_samplers_kdiffusion.py\", \
                line 238, in <lambda>\n    \
                samples = self.launch_sampling(steps, lambda: self.func(self.model_wrap_cfg, x))\n  \
                File \"/usr/local/lib/python3.10/dist-packages/torch/utils/_contextlib.py\", line \
                116, in decorate_context\n    return func(*args, **kwargs)\n  \
                File \"/content/stable-diffusion-webui-forge/k_diffusion/sampling.py\", line 124, in \
                sample_euler\n    \
                gamma = min(s_churn / (len(sigmas) - 1), 2 ** 0.5 - 1)\n\
                RuntimeError: CUDA error: an illegal memory access was encountered\n";
    assert_eq!(phase(text), Phase::Inference);
    // The web UI's memory monitor polls in its own thread during any GPU job: no stage.
    let text = "# 更新后遇到这个报错\n\nTraceback (most recent call last):\n  \
                File \"D:\\sd-webui-forge-neo\\modules\\memmon.py\", line 53, in run\n    \
                free, total = self.cuda_mem_get_info()\n  \
                File \"D:\\sd-webui-forge-neo\\modules\\memmon.py\", line 34, in cuda_mem_get_info\n    \
                return torch.cuda.mem_get_info(index)\n\
                torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n";
    assert_eq!(phase(text), Phase::Unknown);
}

#[test]
fn stable_diffusion_cpps_decode_of_the_latents() {
    let text = "[INFO ] stable-diffusion.cpp:4512 - sampling completed, taking 131.77s\n\
                [INFO ] stable-diffusion.cpp:4197 - decoding 1 latents\n\
                [DEBUG] ggml_extend.hpp:2061 - vae compute buffer size: 14978.25 MB(VRAM)\n\
                [ERROR] ggml_extend.hpp:70   - ROCm error: out of memory\n\
                [ERROR] ggml_extend.hpp:70   -   current device: 0, in function alloc at \
                ggml/src/ggml-cuda/ggml-cuda.cu:449\n";
    assert_eq!(phase(text), Phase::Inference);
}

#[test]
fn a_video_labelled_by_a_model() {
    let text = "# SAM2VideoPredictor, run out of memory\n\n\
                SAM2VideoPredictor, running to labeling video source, gpu memery will increase, \
                and finally stop because of run out of memory\n";
    assert_eq!(phase(text), Phase::Inference);
}

#[test]
fn a_fine_tune_run_and_code_named_as_where_it_failed() {
    let text = format!("OOM when running fine-tune in 4 A100\n\nstill encountered \"{TORCH_OOM}\"");
    assert_eq!(phase(&text), Phase::TrainingStep);
    // A script run is the job's command.
    let text = format!("OOM when running finetune.py\n\n{TORCH_OOM}");
    assert_ne!(phase(&text), Phase::TrainingStep);
    let text =
        "[OOM Error] sft.py crashes at optimizer.step() with 48MB allocation failure on 16GB \
                GPU (RTX 5060 Ti) due to AdamW states\n\n问题已经解决，请关闭了吧。\n";
    assert_eq!(phase(text), Phase::TrainingStep);
    let text = format!(
        "{TORCH_OOM}Sound familiar?\n\n\
         The traceback also tells you where it happened—in my case, during \
         _get_per_token_logps_and_entropies when computing logits = \
         model(**model_inputs).logits. This is the forward pass comp\n"
    );
    assert_eq!(phase(&text), Phase::TrainingStep);
}

#[test]
fn chinese_sampling_runs_and_saves() {
    let text = "在跑CIN的代码时,将batch_size从10一路降到2,依然每执行sample就爆显存.请教师兄后,\
                发现问题出在这一句上:\n";
    assert_eq!(phase(text), Phase::Inference);
    let text =
        "单卡T4显存16G，之前按默认参数训练出现OOM错误，把load_in_kbit改成8之后，可以进行训练，\
                但是在保存模型参数的时候出现OOM错误。\n";
    assert_eq!(phase(text), Phase::Unknown);
    let text = "模型精调训练完成，但是在保存的那一步出现OOM错误\n";
    assert_eq!(phase(text), Phase::Unknown);
}

#[test]
fn another_model_tried_is_no_stage() {
    let text = "```\nGGML_ASSERT: /home/circleci/project/gpt4all-backend/llama.cpp-230511/\
                ggml.c:4411: ctx->mem_buffer != NULL\nAborted\n```\n\
                I tried to load another model with no luck.\n";
    assert_eq!(phase(text), Phase::Unknown);
}

#[test]
fn vllm_rs_allocates_its_kv_cache() {
    let text =
        "vllm-rs-med0  | 2026-01-14T22:50:42.122819Z  WARN vllm_rs::utils: Allocating 8192 KV \
                blocks (131072 MB) for [2 seqs x 262144 tokens]\n\
                vllm-rs-med0  | Error: DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")\n\
                vllm-rs-med0  |    0: candle_core::error::Error::bt\n\
                vllm-rs-med0  |    2: candle_core::device::Device::zeros\n\
                vllm-rs-med0  |    4: vllm_rs::core::runner::ModelRunner::init_kv_cache\n\
                vllm-rs-med0  |    5: vllm_rs::core::runner::ModelRunner::new\n";
    assert_eq!(phase(text), Phase::KvCacheAlloc);
}

#[test]
fn a_containers_kill_with_its_log_tail_as_message() {
    let text = "```\n      lastFailureInfo:\n        exitCode: 137\n        message: |\n          \
                I0730 13:42:15.149560 1 tensorflow.cc:1895] 'tensorflow' TRITONBACKEND API \
                version: 1.0\n          \
                I0730 13:42:15.149796 1 tensorflow.cc:1978] TRITONBACKEND_ModelInitialize: \
                bert_tf_v2_large_fp16_128_v2 (version 1)\n```\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
}

#[test]
fn a_load_interrupted_half_way() {
    let text = "# Disable Ray's memory monitor: it kills workers mid-load on UMA Sparks\n\n\
                ```\nray.exceptions.OutOfMemoryError: 1 worker(s) were killed due to the node\n\
                running low on memory. Memory on the node (IP: 10.99.0.2) was\n\
                113.76GB / 119.70GB (0.950345)\n```\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
}

#[test]
fn a_method_named_with_its_class_and_a_prefill_with_its_size() {
    let text = format!(
        "{TORCH_OOM}\n1. With the sidecar holding ~92% of free VRAM, the heavy multimodal probe \
         OOMs inside the thinker stage's `EngineCore.run_busy_loop` (vLLM V1 treats busy-loop \
         exceptions as fatal).\n"
    );
    assert_eq!(phase(&text), Phase::Inference);
    let text = "# DGX Spark GB10 head hard-resets during 128K-token vLLM prefill after \
                NV_ERR_NO_MEMORY\n\n```text\nNVRM: nvCheckOkFailedNoLog: Check failed: Out of \
                memory [NV_ERR_NO_MEMORY]\n```\n";
    assert_eq!(phase(text), Phase::Inference);
    // Words qualifying a generation of something else than a model's output.
    let text = format!("Out Of Memory issue during neighbor list generation\n\n{TORCH_OOM}");
    assert_eq!(phase(&text), Phase::Unknown);
}

#[test]
fn a_request_as_what_failed() {
    let text = format!(
        "# worker dies in fused_kv_rope_quant_insert with opaque error; same request family \
         also OOMs at 0.975 gpu-me\n\n{TORCH_OOM}"
    );
    assert_eq!(phase(&text), Phase::Inference);
    let text = format!("This pull request also OOMs on the CI runner:\n\n{TORCH_OOM}");
    assert_ne!(phase(&text), Phase::Inference);
}

#[test]
fn a_model_load_named_as_a_compound() {
    let text = "When most VRAM is occupied by a non-LM-Studio CUDA process, LM Studio's REST \
                model-load endpoint proceeds with a load even with model-loading guardrails set \
                to `high`. The bundled llama.cpp engine fails its first projector allocation.\n\n\
                the loss of the actionable inner error (`cudaMalloc failed: out of memory`)\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
}
