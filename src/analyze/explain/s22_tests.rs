//! Whole-text checks of what session 22's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::OomKind;

#[test]
fn an_oom_verb_before_a_colon_or_in_mixed_case_is_a_report() {
    for text in [
        "When I load it with vLLM:\nllm = LLM(model=\"meta-llama/Llama-3.2-11B\")\n\nit OOMs:\n\
         Loading safetensors checkpoint shards: 20% Completed | 1/5\n",
        "If I try using just 2xA100s, then I end up with a CUDA OoM:\nNCCL INFO Init COMPLETE\n",
    ] {
        let report = explain_text(text);
        assert!(report.is_gpu_oom, "{text}");
        assert_eq!(report.ooms[0].kind, OomKind::NamedWithoutMessage, "{text}");
    }
    // A counter's label with its count is no report.
    assert!(!explain_text("|  CUDA OOMs: 0  |  cudaMalloc retries: 0  |\n").is_gpu_oom);
}

const OOM: &str = "RuntimeError: CUDA out of memory. Tried to allocate 1.88 GiB (GPU 0; 39.59 GiB \
                   total capacity; 36.94 GiB already allocated; 638.19 MiB free; 36.98 GiB \
                   reserved in total by PyTorch)";

#[test]
fn a_stage_verb_in_two_words_is_read_as_one() {
    let text =
        format!("I am facing problem when i am fine tuning GPTJ. I am getting error\n{OOM}\n");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_script_named_for_inference_by_its_last_word_is_inference() {
    for script in ["ssd_infer.py", "batch_predict.py"] {
        let text =
            format!("getting this error when i run python {script}. Any suggestions?\n{OOM}\n");
        assert_eq!(
            explain_text(&text).phase.failed_in,
            Phase::Inference,
            "{script}"
        );
    }
    // A training job's last stage is not.
    let text = format!("getting this error when i run python run_sft_and_eval.py.\n{OOM}\n");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_named_oom_above_a_pasted_log_takes_the_stage_the_log_was_in() {
    // llama.cpp's context creation cut after its first setting: the KV cache was being made.
    let text = "I updated Ollama and now I get an out of memory error on my 4090.\n\n```\n\
                llm_load_tensors: offloaded 65/65 layers to GPU\n\
                llm_load_tensors: VRAM used: 21741.89 MiB\n\
                ..........................\n\
                llama_new_context_with_model: n_ctx\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::KvCacheAlloc);
    // A log that ends on its weights loaded shows no next stage.
    let text = "I get an out of memory error on my 4090.\n\n```\n\
                llm_load_tensors: offloaded 65/65 layers to GPU\n\
                llm_load_tensors: VRAM used: 21741.89 MiB\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Unknown);
}

#[test]
fn deepspeeds_kv_cache_line_names_the_engine_and_its_stage() {
    let text = "If I try using just 2xA100s, then I end up with a CUDA OoM:\n```\n\
                [2025-03-13 18:29:53,201] [INFO] [kv_cache.py:135:__init__] Allocating KV-cache 0 \
                with shape: (32, 6352, 64, 2, 16, 96) consisting of 6352 blocks.\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(
        report.engine.name,
        crate::model::failure::EngineName::Deepspeed
    );
    assert_eq!(report.phase.failed_in, Phase::KvCacheAlloc);
}

#[test]
fn ggmls_pinned_host_buffer_refused_is_no_gpu_oom() {
    let text = "llm_load_tensors: ggml ctx size =    0.68 MiB\n\
                ggml_cuda_host_malloc: failed to allocate 31393.86 MiB of pinned memory: out of \
                memory\nllm_load_tensors: offloaded 17/81 layers to GPU\n";
    assert!(!explain_text(text).is_gpu_oom);
}

#[test]
fn paddles_memory_error_over_a_gpu_kernel_is_the_gpus() {
    let stack = "Exception has occurred: MemoryError\n\n\n\
                 --------------------------------------\n\
                 C++ Traceback (most recent call last):\n\
                 --------------------------------------\n\
                 0   paddle::AnalysisPredictor::ZeroCopyRun()\n\
                 1   paddle::framework::NaiveExecutor::Run()\n";
    let gpu = format!(
        "{stack}5   void phi::HardSwishKernel<float, phi::GPUContext>(phi::GPUContext const&, \
         phi::DenseTensor const&, phi::DenseTensor*)\n"
    );
    let report = explain_text(&gpu);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::Inference);
    // On the CPU it stays the host's.
    let cpu = format!(
        "{stack}5   void phi::ReluKernel<float, phi::CPUContext>(phi::CPUContext const&)\n"
    );
    assert!(!explain_text(&cpu).is_gpu_oom);
}

#[test]
fn jetson_utils_mapped_buffer_refused_is_a_gpu_oom() {
    let text = "    rgb_image = cudaAllocMapped(img_width,img_height,format=\"rgb8\")\n\
                Exception: jetson.utils -- cudaAllocMapped() failed to allocate memory\n";
    assert!(explain_text(text).is_gpu_oom);
}

#[test]
fn ollamas_load_request_is_the_models_load() {
    let text = "time=2025-10-23T15:54:36.417+08:00 level=INFO source=runner.go:1205 msg=load \
                request=\"{Operation:alloc LoraPath:[] Parallel:1 BatchSize:512 KvSize:8192}\"\n\
                ggml_backend_cuda_buffer_type_alloc_buffer: allocating 61223.74 MiB on device 0: \
                cudaMalloc failed: out of memory\n\
                alloc_tensor_range: failed to allocate ROCm0 buffer of size 64197741312\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn torch_compile_named_beside_a_named_oom_is_pytorch() {
    let text =
        "# torch.compile with max-autotune or reduce-overhead creates memory leak until OOM\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(
        report.engine.name,
        crate::model::failure::EngineName::Pytorch
    );
}

#[test]
fn an_encoders_output_named_as_vectors_is_inference() {
    let text = "Traceback (most recent call last):\n  File \"rank_catalogue.py\", line 25, in \
                <module>\n    item_vecs = encoder(catalogue)\n  File \"/usr/lib/python3/site-\
                packages/torch/nn/modules/module.py\", line 1776, in _wrapped_call_impl\n    \
                return self._call_impl(*args, **kwargs)\n\
                torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 24.00 GiB. GPU 0 \
                has a total capacity of 139.80 GiB of which 3.12 GiB is free.\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_pinned_host_allocator_on_the_failing_line_is_host_memory() {
    let text = "[ERROR] MD(14433,7fea2effd700,python):2021-12-12-14:13:43.932.181 \
                [mindspore/ccsrc/minddata/dataset/util/arena.cc:250] Init] cudaHostAlloc failed, \
                ret[2], out of memory\n";
    assert!(!explain_text(text).is_gpu_oom);
}

#[test]
fn lmdeploys_early_weight_creation_is_the_weights_load() {
    let text = "  File \"/env/lib/python3.10/site-packages/lmdeploy/turbomind/turbomind.py\", \
                line 199, in _create_weight_func\n    model_comm.create_shared_weights(device_id, \
                rank)\nRuntimeError: [TM][ERROR] CUDA runtime error: out of memory \
                /lmdeploy/src/turbomind/utils/memory_utils.cu:32\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn paddles_host_allocator_is_not_tensorflow() {
    let text =
        "ResourceExhaustedError: Fail to alloc memory of 564023296 size, error code is 12.\n  \
                [Hint: Expected error == 0, but received error:12 != 0:0.] (at \
                /paddle/paddle/fluid/memory/detail/system_allocator.cc:66)\n  [operator < conv2d \
                > error]\n";
    let report = explain_text(text);
    assert_ne!(
        report.engine.name,
        crate::model::failure::EngineName::Tensorflow
    );
}

#[test]
fn tensorrt_llm_named_in_lower_case_in_a_sentence_is_the_engine() {
    let text = "cannot load llama7b engine which is convert by tensorrt-llm, is that normal?\n\
                CUDA out of memory\n";
    let report = explain_text(text);
    assert_eq!(
        report.engine.name,
        crate::model::failure::EngineName::TensorrtLlm
    );
}

#[test]
fn a_piped_loggers_stage_line_over_the_traceback_is_read() {
    let text = "2026-12-04 02:20:28,437 | INFO    | lm_server | weights loaded in 0.7 s\n\
                2026-12-04 02:20:28,437 | INFO    | lm_server | allocating KV cache for 256 \
                sequences x 4096 tokens (64.0 GiB)\n\
                Traceback (most recent call last):\n  File \"lm_server.py\", line 32, in <module>\n\
                \x20   kv_cache = torch.zeros(shape, dtype=torch.bfloat16, device=\"cuda\")\n\
                torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 GiB. GPU 0 \
                has a total capacity of 139.80 GiB of which 39.12 GiB is free.\n";
    let report = explain_text(text);
    assert_eq!(report.phase.failed_in, Phase::KvCacheAlloc);
    assert!(report.phase.evidence[0].contains("announcing the stage"));
}
