//! Whole-text checks of what session 27's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use crate::model::explain::Phase;

use super::s26_tests::NEW_OOM;

#[test]
fn a_programs_line_for_each_input_is_inference() {
    let text = format!(
        "2026-01-02 10:00:01,100 INFO rerank query 0: 16 pairs, best 1 (0.673)\n\
         2026-01-02 10:00:01,200 INFO rerank query 1: 64 pairs, best 9 (0.871)\n\
         Traceback (most recent call last):\n  \
         File \"/srv/rerank_service.py\", line 41, in <module>\n    \
         scores = rerank(pairs)\n\
         {NEW_OOM}\n"
    );
    let report = explain_text(&text);
    assert_eq!(report.phase.failed_in, Phase::Inference);
    // One line alone is no loop over inputs.
    let text = format!(
        "INFO rerank query 0: 16 pairs, best 1 (0.673)\nTraceback (most recent call last):\n  \
         File \"/srv/rerank_service.py\", line 41, in <module>\n    scores = rerank(pairs)\n\
         {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Unknown);
    // Ranks repeating a setting that names inputs (`max_total_tokens=…`) are no inputs.
    let text = format!(
        "[DP0 TP0] max_total_tokens=131072 is larger than the profiled value 5000.\n\
         [DP1 TP1] max_total_tokens=131072 is larger than the profiled value 5000.\n\
         {NEW_OOM}\n"
    );
    assert_ne!(explain_text(&text).phase.failed_in, Phase::Inference);
    // A loss printed cancels it: training.
    let text = format!("batch 1: 64 images, loss 2.31\nbatch 2: 64 images, loss 2.12\n{NEW_OOM}\n");
    assert_ne!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_forward_in_a_script_named_for_training_is_a_training_step() {
    let text = format!(
        "Traceback (most recent call last):\n  \
         File \"/work/train_switch_moe.py\", line 80, in <module>\n    \
         logits = model(ids[:, :-1])\n  \
         File \"/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1779, in \
         _wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n\
         {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
    // The same forward in a script named for something else decides nothing here.
    let other = text.replace("train_switch_moe.py", "switch_moe.py");
    assert_ne!(explain_text(&other).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn c_plus_plus_and_rust_backtrace_frames_name_the_stage() {
    let text = "RuntimeError: \n[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMalloc(ptr, n): \
                out of memory (/src/tensorrt_llm/runtime/tllmBuffers.h:92)\n\
                1       0x7cb3c4fcd438 void tensorrt_llm::common::check<cudaError>(cudaError, \
                char const*, char const*, int) + 88\n\
                2       0x7cb3c528a6e3 tensorrt_llm::runtime::BufferManager::gpuSync(\
                nvinfer1::Dims64, nvinfer1::DataType) + 339\n\
                3       0x7cb3c5baf5bd tensorrt_llm::batch_manager::kv_cache_manager::\
                KVCacheManager::allocatePools(bool) + 61\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::KvCacheAlloc);
    let text = "Error: DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")\n   \
                0: candle_core::error::Error::bt\n   \
                1: <mistralrs_core::pipeline::normal::NormalLoader as \
                mistralrs_core::pipeline::loaders::Loader>::load_model_from_path\n   \
                2: mistralrs_server::main::{{closure}}\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn the_reporters_inference_or_too_large_input_is_inference() {
    let text = format!(
        "I ran the inference with model vjepa2 on igpu. But it terminated with the log \
         below.\n```\n{NEW_OOM}\n```\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
    let text = format!(
        "二種錯誤：\n1. 圖片尺寸太大(約 1mb左右)，導致OOM： 而相同的模型和圖片，使用VLLM \
         可以使用，錯誤如下\n```\n{NEW_OOM}\n```\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn ultralytics_loss_and_assigner_frames_are_the_training_step() {
    let text = format!(
        "[rank0]:   File \"/p/ultralytics/utils/loss.py\", line 234, in __call__\n\
         [rank0]:     _, target_bboxes, target_scores, fg_mask, _ = self.assigner(\n\
         [rank0]:   File \"/p/ultralytics/utils/tal.py\", line 206, in get_targets\n\
         [rank0]:     target_scores = torch.where(fg_scores_mask > 0, target_scores, 0)\n\
         [rank0]: {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn pygs_generated_propagate_module_is_library_code() {
    let text = format!(
        "Traceback (most recent call last):\n  \
         File \"/work/train_gat.py\", line 37, in <module>\n    \
         out = model(data.x, data.edge_index)\n  \
         File \"/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1779, in \
         _wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n  \
         File \"/work/train_gat.py\", line 19, in forward\n    \
         x = F.elu(self.conv1(x, edge_index))\n  \
         File \"/tmp/torch_geometric.nn.conv.gat_conv_GATConv_propagate_rilshtfc.py\", line 85, \
         in collect\n    x_j = self._index_select(_x_0, edge_index_j)\n\
         {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn physx_gpu_allocator_failures_are_gpu_ooms_at_start_up() {
    let text = "2025-03-15T15:07:10Z [job] +++ Using GPU PhysX\n\
                2025-03-15T15:07:10Z [job] Physics Device: cuda:0\n\
                2025-03-15T15:07:10Z [job] PxgCudaDeviceMemoryAllocator fail to allocate memory \
                100663296 bytes!! Result = 2\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::Startup);
    let first = report.ooms.first().expect("PhysX's failure");
    assert_eq!(
        first.figures.tried_to_allocate_bytes,
        Some(crate::model::Bytes(100663296))
    );
    // Another status than 2 is no out-of-memory.
    let text = "PxgCudaDeviceMemoryAllocator fail to allocate memory 1024 bytes!! Result = 700\n";
    assert!(!explain_text(text).is_gpu_oom);
    // Isaac Sim's Kit: the CUDA errors, then PhysX's context refused under them.
    let text = "2025-02-13 12:01:23 [10,436ms] [Error] [carb.cudainterop.plugin] CUDA error 2: \
                cudaErrorMemoryAllocation - out of memory)\n\
                2025-02-13 12:01:23 [10,476ms] [Error] [omni.physx.plugin] Unable to create \
                PxCudaContextManager!\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Startup);
}

#[test]
fn an_evaluation_bar_of_mmcv_is_inference_and_a_chinese_kill_after_it_is_the_hosts() {
    let text = "2020-12-18 19:52:04,960 - mmseg - INFO - Iter [3400/40000]\tlr: 9.240e-03, loss: \
                0.1608\n\
                2020-12-18 19:56:07,472 - mmseg - INFO - Saving checkpoint at 4000 iterations\n\
                [>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>> ] 3217/3849, 4.0 task/s, elapsed: 799s, \
                ETA: 157s已杀死\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::Inference);
}

#[test]
fn an_apps_words_for_a_training_retry_and_a_decode_in_chinese_name_their_stages() {
    let text = "# train Detected OutOfMemoryError\n\n\
                ERROR: Detected OutOfMemoryError! Enabling checkpointing to reduce memory usage, \
                but this slows down training. Consider enabling AMP (--amp) for fast and memory \
                efficient training\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::TrainingStep);
    let text = format!(
        "# 单卡生成并保存视频没问题，但是多卡推理完，decode视频的时候oom，怎么回事\n\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn vllms_logprobs_of_the_sampler_are_inference() {
    let text = format!(
        "[rank0]:   File \".../site-packages/vllm/model_executor/layers/sampler.py\", line 904, \
         in get_logprobs\n[rank0]:     logprobs[query_indices_gpu],\n[rank0]: {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_pass_announced_inside_a_trainers_generic_train_is_what_ran() {
    let text = format!(
        "caching latents...\nTraceback (most recent call last):\n  \
         File \"/content/sd_scripts/train_network.py\", line 446, in train\n    \
         train_dataset_group.new_cache_latents(vae)\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
    // A training line last: the step.
    let text = format!(
        "epoch 1/10\nTraceback (most recent call last):\n  \
         File \"/content/sd_scripts/train_network.py\", line 446, in train\n    \
         accelerator.backward(loss)\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn sizes_in_petabytes_are_read_and_an_absurd_one_is_an_overflow() {
    let text = "Out of memory error on GPU 0. Cannot allocate 937.335938PB memory on GPU 0, \
                3.078247GB memory has been allocated and available memory is only 7.823547GB.\n";
    let report = explain_text(text);
    let first = report.ooms.first().expect("Paddle's message");
    let tried = first.figures.tried_to_allocate_bytes.expect("the size").0;
    assert!(tried > 1_000_000_000_000_000_000, "{tried}");
    assert_eq!(
        crate::parse::oom_text::parse_size("2 PB"),
        Some(crate::model::Bytes(2 << 50))
    );
    assert_eq!(
        crate::parse::oom_text::parse_size("1 EiB"),
        Some(crate::model::Bytes(1 << 60))
    );
}

#[test]
fn a_sentence_quoting_the_messages_head_takes_the_figures_of_the_message_under_it() {
    let text = "使用load_model_on_gpus进行多显卡运行时，报错CUDA out of memory. Tried to allocate \
                134744072.03 GiB ，这个是怎么产生的？\n\n\
                torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 134744072.03 \
                GiB (GPU 1; 23.69 GiB total capacity; 5.64 GiB already allocated; 16.84 GiB free; \
                5.65 GiB reserved in total by PyTorch)\n";
    let report = explain_text(text);
    let figures = report.oom.as_ref().expect("the sentence");
    assert_eq!(figures.gpu_index.map(|gpu| gpu.0), Some(1));
    assert!(figures.total_capacity_bytes.is_some());
}

#[test]
fn a_command_glued_to_cjk_punctuation_and_korean_loading_words_name_their_stages() {
    let text = "我在昇腾910B上部署完成，python inference/cli_demo.py 时报错：\n\
                RuntimeError: NPU out of memory. Tried to allocate 35.31 GiB (NPU 0; 60.97 GiB \
                total capacity; 26.13 GiB already allocated; 33.81 GiB free; 26.61 GiB reserved \
                in total by PyTorch)\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
    let text = format!("Alpaca-polyglot 로드 하는 도중에 오류가 났습니다.\n```\n{NEW_OOM}\n```\n");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn xinferences_call_wrapper_serves_a_request() {
    let text = format!(
        "Traceback (most recent call last):\n  \
         File \"/usr/local/lib/python3.10/dist-packages/xinference/core/model.py\", line 653, in \
         _call_wrapper\n    ret = await asyncio.to_thread(fn, *args, **kwargs)\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_reporters_words_for_a_kill_are_the_hosts() {
    let text = "when run \"python text_generation_hf.py\", loading model was Killed\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(
        report.ooms.first().map(|message| message.kind),
        Some(crate::model::failure::OomKind::KilledBySignal)
    );
    let text = "程序在加载模型中被kill了，没有其他提示信息\n";
    assert_eq!(
        explain_text(text).ooms.first().map(|message| message.kind),
        Some(crate::model::failure::OomKind::KilledBySignal)
    );
    // A worker killed by another signal is not the host's kill.
    let text = "RuntimeError: DataLoader worker (pid 25902) is killed by signal: Bus error.\n";
    assert_ne!(
        explain_text(text).ooms.first().map(|message| message.kind),
        Some(crate::model::failure::OomKind::KilledBySignal)
    );
}

#[test]
fn a_loss_named_with_a_prefix_is_a_training_step_and_a_bold_kill_is_the_hosts() {
    let text = "111111111begin iter 2222222222\n\
                iter 144: image-id:0254212, time:1.722(sec), regular_loss: 0.248765, total-loss \
                0.5882(0.0360, 0.5233), instances: 3\n\
                labels\n\
                **Killed**\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::TrainingStep);
}

#[test]
fn the_reporter_trying_to_load_a_named_model_is_the_weights_load() {
    let text = format!(
        "When I try to load the Mistral Large 2407 exl2 3.0bpw it crashes after filling the \
         first 2 gpus.\n\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
    let text =
        format!("I get an OOM error when trying to load the recommended Q4 GGUF.\n\n{NEW_OOM}\n");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
    // Data is no model.
    let text = format!("When I try to load the dataset it crashes.\n\n{NEW_OOM}\n");
    assert_ne!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn vllms_kernel_warm_up_and_megatrons_module_build_name_their_stages() {
    let text = format!(
        "(EngineCore_0 pid=1)   File \"/usr/local/lib/python3.12/dist-packages/vllm/\
         model_executor/warmup/deep_gemm_warmup.py\", line 84, in _warmup\n\
         (EngineCore_0 pid=1)     out = fn(a, b)\n(EngineCore_0 pid=1) {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Profiling);
    let text = format!(
        "[rank97]:   File \"/usr/local/lib/python3.12/site-packages/megatron/core/transformer/\
         spec_utils.py\", line 119, in build_module\n[rank97]:     return module(*args, **kwargs)\n\
         [rank97]:   File \"/usr/local/lib/python3.12/site-packages/transformer_engine/pytorch/\
         module/grouped_linear.py\", line 696, in __init__\n[rank97]:     torch.empty(\n\
         [rank97]: {NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn an_oom_denied_in_a_comparison_is_no_failure() {
    let text = "For comparison, LLama3.3 70B climbs to 750 GB during checkpointing and \
                successfully checkpoints without OOMing.\n";
    assert!(explain_text(text).ooms.is_empty());
    let text = "The run OOMs at step 100 on the GPU.\n";
    assert!(!explain_text(text).ooms.is_empty());
}

#[test]
fn a_warm_up_named_as_what_ran_out_is_profiling() {
    let text = format!(
        "# [Bug]: Qwen3-Coder-480B-FP8 running on 8*H20, deepgemm warmup OOM\n\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Profiling);
}

#[test]
fn a_loss_an_evaluation_reports_is_inference_and_a_listed_backward_makes_a_step() {
    let text = format!(
        "INFO evalharness | split code-val: ppl=47678.31 (32 x 1024 tokens, 0.2s)\n\
         Traceback (most recent call last):\n  \
         File \"/work/eval_ppl.py\", line 38, in perplexity\n    \
         loss = model(input_ids=ids, labels=ids).loss\n  \
         File \"/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1779, in \
         _wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
    // The same loss in a training loop: a step.
    let text = text
        .replace("in perplexity", "in run")
        .replace("eval_ppl.py", "run.py")
        .replace("ppl=47678.31", "done");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
    // A forward whose listed code calls backward next.
    let text = format!(
        "      1 model.train()\n----> 2 out = model(**batch)\n      3 out.loss.backward()\n\
         Traceback (most recent call last):\n  \
         File \"/work/notebook_cell.py\", line 2, in <module>\n    \
         out = model(**batch)\n  \
         File \"/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1779, in \
         _wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn windows_commit_limit_is_the_hosts_memory() {
    for text in [
        "OSError: The paging file is too small for this operation to complete. (os error 1455)\n",
        "OSError: [WinError 1455] The paging file is too small for this operation to complete. \
         Error loading \"C:\\torch\\lib\\cudnn_adv_infer64_8.dll\" or one of its dependencies.\n",
        "OSError: [WinError 1455] 页面文件太小，无法完成操作。\n",
    ] {
        let report = explain_text(text);
        assert!(!report.is_gpu_oom, "{text}");
        assert_eq!(
            report.ooms.first().map(|message| message.kind),
            Some(crate::model::failure::OomKind::HostMemory),
            "{text}"
        );
    }
}

#[test]
fn the_malloc_async_message_cut_at_its_device_hints_comfyui() {
    let text = "!!! Exception during processing !!! Allocation on device \n\
                Traceback (most recent call last):\n  \
                File \"/x/site-packages/torch/nn/functional.py\", line 2, in linear\n    \
                return torch._C._nn.linear(input, weight, bias)\n\
                torch.OutOfMemoryError: Allocation on device \n";
    assert_eq!(
        explain_text(text).engine.name,
        crate::model::failure::EngineName::Comfyui
    );
    let text = "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out \
                of memory)\n";
    assert_ne!(
        explain_text(text).engine.name,
        crate::model::failure::EngineName::Comfyui
    );
}

#[test]
fn the_models_preparation_is_its_load() {
    let text = format!(
        "The error occurs during the model preparation phase when attempting to allocate \
         additional GPU memory.\n\n{NEW_OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn openvinos_gpu_plugin_failures_are_the_devices_memory() {
    let text = "[GPU] Exceeded max size of memory object allocation: requested 4831838208 bytes, \
                but max alloc size supported by device is 1073741824 bytes.Please try to reduce \
                the size of input or use CPU.\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(
        report
            .ooms
            .first()
            .and_then(|m| m.figures.tried_to_allocate_bytes),
        Some(crate::model::Bytes(4831838208))
    );
    let text = "\"Due to the driver bug any subsequent OpenCL API call will cause application \
                hang, so GPU plugin can't finish correctly. Please try to update the driver or \
                reduce memory consumption (use smaller batch size, less streams, lower precision, \
                etc)to avoid CL_OUT_OF_RESOURCES exception\"\n";
    assert!(explain_text(text).is_gpu_oom);
}

#[test]
fn tokens_coming_out_name_the_generation() {
    let text = "I get this error after the first token is emitted:\n\
                CUDA error: an illegal memory access was encountered\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Inference);
}

#[test]
fn deepspeeds_engine_set_up_is_start_up_and_a_predict_step_is_inference() {
    let text = "[2023-05-01 10:00:00,000] [INFO] [utils.py:785:see_memory_usage] Before \
                initializing optimizer states\n\
                [2023-05-01 10:00:01,000] [INFO] [launch.py:318:sigkill_handler] Killing \
                subprocess 4242\n\
                subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py']' \
                died with <Signals.SIGKILL: 9>.\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::Startup);
    let text = format!("I am having some problems when doing predict step.\n\n{NEW_OOM}\n");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn computing_vectors_in_chinese_is_inference() {
    let text = format!("# 使用bge-m3计算向量时爆显存\n\n错误信息如下所示：\n{NEW_OOM}\n");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn vllms_hardware_plug_ins_run_vllm() {
    let text = "(Worker_TP0 pid=911501) ERROR 02-07 18:18:59 [v1/executor/multiproc_executor.py:824]   \
                File \"/x/site-packages/vllm_ascend/worker/model_runner_v1.py\", line 2499, in \
                _allocate_kv_cache_tensors\n\
                RuntimeError: NPU out of memory. Tried to allocate 2.57 GiB (NPU 0; 60.96 GiB total \
                capacity; 57.49 GiB already allocated; 1.96 GiB free)\n";
    assert_eq!(
        explain_text(text).engine.name,
        crate::model::failure::EngineName::Vllm
    );
}

#[test]
fn mlxs_wrapped_metal_message_is_not_llama_cpps() {
    let text = "libc++abi: terminating due to uncaught exception of type std::runtime_error:\n\
                [METAL] Command buffer execution failed: Insufficient Memory\n\
                (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_ne!(
        report.engine.name,
        crate::model::failure::EngineName::Llamacpp
    );
    // ggml-metal's own line still is llama.cpp's.
    let text = "ggml_metal_graph_compute: command buffer 0 failed with status 5\n\
                error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n";
    assert_eq!(
        explain_text(text).engine.name,
        crate::model::failure::EngineName::Llamacpp
    );
}
