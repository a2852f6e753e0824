//! Whole-text checks of what session 23's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use crate::model::explain::Phase;
use crate::model::failure::{EngineName, OomKind};

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 \
                   has a total capacity of 23.64 GiB of which 3.81 MiB is free.";

#[test]
fn a_failed_llama_decode_is_inference() {
    for line in [
        "llama_decode: failed to decode, ret = -3",
        "panic: failed to decode batch: llama_decode failed with code -3",
    ] {
        let text = format!(
            "ggml_metal_graph_compute: command buffer 0 failed with status 5\n\
             error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n\
             {line}\n"
        );
        let report = explain_text(&text);
        assert!(report.is_gpu_oom, "{text}");
        assert_eq!(report.phase.failed_in, Phase::Inference, "{text}");
    }
}

#[test]
fn a_log_cut_in_the_loaders_metadata_does_not_show_the_stage() {
    let head = "When trying to run llama-server it crashes with `ggml_vulkan: Device memory \
                allocation of size 3959422976 failed.`\n\n```\n\
                llama_model_loader: loaded meta data with 23 key-value pairs and 112 tensors \
                from model.gguf (version GGUF V3 (latest))\n";
    let cut = format!(
        "{head}llama_model_loader: - kv   0:                       general.architecture str    \
         = nomic-bert\nllama_model_loader: - kv   1:                               general.name \
         str              = nomic-embed-text-v1.5\n```\n"
    );
    assert_eq!(explain_text(&cut).phase.failed_in, Phase::Unknown);
    // A log that goes on to place the weights shows the load running.
    let placed = format!(
        "{head}llama_model_loader: - kv   0:                       general.architecture str    \
         = llama\nload_tensors: loading model tensors, this can take a while... (mmap = true)\n```\n"
    );
    assert_eq!(explain_text(&placed).phase.failed_in, Phase::WeightsLoad);
    // The failure printed after the metadata lines is the log's own: the load was running.
    let after = "llama_model_loader: - kv   0:                       general.architecture str    \
                 = llama\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 4000.00 MiB on \
                 device 0: cudaMalloc failed: out of memory\n";
    assert_eq!(explain_text(after).phase.failed_in, Phase::WeightsLoad);
}

#[test]
fn a_request_answered_with_the_error_is_inference() {
    let text =
        "And we get response like this:\n'{\"object\":\"error\",\"message\":\"**NETWORK ERROR \
                DUE TO HIGH TRAFFIC. PLEASE REGENERATE OR REFRESH THIS PAGE.**\\n\\n(CUDA out of \
                memory. Tried to allocate 42.00 MiB (GPU 0; 31.75 GiB total capacity; 30.70 GiB \
                already allocated; 13.69 MiB free; 30.87 GiB reserved in total by PyTorch))\",\
                \"code\":50002}'\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::Inference);
    // An error object about something else says nothing of the stage.
    let other = format!("{{\"object\":\"error\",\"message\":\"model not found\"}}\n{OOM}\n");
    assert_eq!(explain_text(&other).phase.failed_in, Phase::Unknown);
}

#[test]
fn a_mistralrs_step_that_failed_is_inference() {
    let text = "2025-06-06T22:33:13.344067Z  INFO mistralrs_core::engine::logger: Throughput \
                (T/s) 6.00, Prefix cache hitrate 0.00%, 0 running, 0 waiting\n\
                2025-06-07T01:01:16.617523Z ERROR mistralrs_core::engine: step - Model failed \
                with error: WithBacktrace { inner: Cuda(Cuda(DriverError(CUDA_ERROR_OUT_OF_MEMORY, \
                \"out of memory\"))) }\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::Inference);
}

#[test]
fn fairseqs_skipping_batch_in_markdown_italics_is_a_training_step() {
    let text = "_WARNING: ran out of memory with exception: CUDA out of memory. Tried to allocate \
                1.16 GiB (GPU 0; 10.91 GiB total capacity; 6.55 GiB already allocated; 1.05 GiB \
                free; 1.94 GiB cached);\nSkipping batch_\n";
    assert_eq!(explain_text(text).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_loops_batch_line_with_a_loss_is_a_training_step_and_a_val_tag_an_evaluation() {
    let train = format!(
        "2026-12-04 05:00:59,388 INFO batch 0: 12000 atoms, 96000 edges, loss 0.4675, 0.8 s\n\
         2026-12-04 05:00:59,580 INFO batch 1: 12000 atoms, 96000 edges, loss 0.4170, 0.2 s\n\
         Traceback (most recent call last):\n  File \"/work/train_potential.py\", line 69, in \
         <module>\n    energy = model(species, pos, src, dst)\n{OOM}\n"
    );
    assert_eq!(explain_text(&train).phase.failed_in, Phase::TrainingStep);
    let val = format!(
        "[TRAIN] Iter: 300 Loss: 0.0123 PSNR: 27.1\n[VAL] rendering view 0 (800x800), chunk \
         131072\nTraceback (most recent call last):\n  File \"/work/run_nerf.py\", line 88, in \
         render_rays\n    raw = network_fn(pts)\n{OOM}\n"
    );
    assert_eq!(explain_text(&val).phase.failed_in, Phase::Inference);
    // A validation's result line is no evaluation running.
    let result = format!(
        "[VAL] loss 0.31 psnr 28.4\n[TRAIN] Iter: 310 Loss: 0.0120 PSNR: 27.3\n\
         Traceback (most recent call last):\n  File \"/work/run_nerf.py\", line 60, in train\n    \
         loss.backward()\n{OOM}\n"
    );
    assert_eq!(explain_text(&result).phase.failed_in, Phase::TrainingStep);
}

#[test]
fn a_langchain_chain_answering_a_query_is_inference() {
    let text = format!(
        "Enter a query: Which indices are mentioned in the document?\n\
         Traceback (most recent call last):\n  File \"/app/privateGPT.py\", line 55, in main\n    \
         res = qa(query)\n  File \"/venv/lib/site-packages/langchain/chains/base.py\", line 243, \
         in __call__\n    raise e\n{OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn runs_counted_as_a_range_are_inference() {
    let text = format!("After 1 or 2 generations i always get this error on runpod.\n{OOM}\n");
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn old_rmm_out_of_memory_is_the_gpus_with_its_size() {
    let text = "ERROR: RMM call in line 68of file /conda/envs/gdf/work/cpp/src/hash/\
                managed_allocator.cuh failed with result RMM_ERROR_OUT_OF_MEMORY (4)  Attempted \
                to allocate: 4000000000 bytes.\n";
    let report = explain_text(text);
    assert!(report.is_gpu_oom);
    assert_eq!(
        report.ooms[0]
            .figures
            .tried_to_allocate_bytes
            .map(crate::model::Bytes::get),
        Some(4_000_000_000)
    );
}

#[test]
fn nccls_shared_memory_segment_is_dev_shm_and_a_vllm_image_names_vllm() {
    let text = "(VllmWorkerProcess pid=3184) ERROR 12-10 11:33:24 multiproc_worker_utils.py:229] \
                Error while creating shared memory segment /dev/shm/nccl-5vtTZG (size 5767520)\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.ooms[0].kind, OomKind::SharedMemory);
    assert_eq!(report.engine.name, EngineName::Vllm);
    let deployed = "modelSpec:\n  - name: opt125m\n    repository: \"vllm/vllm-openai\"\n    \
                    tag: \"latest\"\n`torch.distributed.DistBackendError: NCCL error: unhandled \
                    system error\nLast error:\nError while creating shared memory segment \
                    /dev/shm/nccl-F9ffgB (size 9637888)`\n";
    assert_eq!(explain_text(deployed).engine.name, EngineName::Vllm);
}

#[test]
fn a_fitted_gps_posterior_is_inference() {
    let text = format!(
        "Traceback (most recent call last):\n  File \"/work/bo_round.py\", line 30, in <module>\n    \
         candidates, value = optimize_acqf(acqf, bounds=bounds, q=Q)\n  File \
         \"/venv/lib/python3.12/site-packages/botorch/models/gpytorch.py\", line 585, in \
         posterior\n    mvn = self(X)\n  File \
         \"/venv/lib/python3.12/site-packages/gpytorch/models/exact_gp.py\", line 325, in \
         __call__\n    predictive_mean, predictive_covar = self.prediction_strategy.exact_prediction(\n  \
         File \"/venv/lib/python3.12/site-packages/gpytorch/models/\
         exact_prediction_strategies.py\", line 367, in exact_prediction\n    \
         self.exact_predictive_mean(test_mean, test_train_covar)\n{OOM}\n"
    );
    assert_eq!(explain_text(&text).phase.failed_in, Phase::Inference);
}

#[test]
fn a_checkpoint_converter_is_a_format_conversion() {
    // TensorRT-LLM's converter read and converted the weights; saving them was killed.
    let text = "```\n[TensorRT-LLM] TensorRT-LLM version: 0.12.0\n286it [00:50, 5.63it/s]\n\
                Total time of reading and converting 52.12702465057373 s\nKilled\n```\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.phase.failed_in, Phase::FormatConversion);
    // NIM's builder says the same per rank, then builds an engine: not a conversion running.
    let built = "INFO 2025-11-07 17:37:10.695 build_utils.py:239] Total time of reading and \
                 converting rank0 checkpoint: 32.43 s\n[11/07/2025-17:42:27] [TRT] [E] \
                 [resizingAllocator.cpp::allocate::78] Error Code 1: Cuda Runtime (out of \
                 memory)\n";
    assert_ne!(explain_text(built).phase.failed_in, Phase::FormatConversion);
    // The converter's script named in the reporter's command, and bash's `Killed` in Chinese.
    let script =
        "# 执行python scripts/convert_checkpoint.py --model_size 7B时，运行过程会被kill掉\n\
                  \x20 0%|          | 0/1 [00:00<?, ?it/s]已杀死\n";
    let report = explain_text(script);
    assert_eq!(report.ooms[0].kind, OomKind::KilledBySignal);
    assert_eq!(report.phase.failed_in, Phase::FormatConversion);
}

#[test]
fn a_full_disk_in_gos_lower_case_is_a_full_disk() {
    let text = "Sep 28 08:46:26 orangepi5 ollama[2563639]: time=2024-09-28T08:46:26.830+08:00 \
                level=ERROR source=common.go:214 msg=\"failed to extract files\" error=\"copy \
                payload linux/arm64/cuda_v12/libggml.so: write /tmp/ollama2127264499/runners/\
                cuda_v12/libggml.so: no space left on device\"\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    assert_eq!(report.ooms[0].kind, OomKind::DiskFull);
}

#[test]
fn metals_insufficient_memory_is_the_gpus() {
    for line in [
        "Fatal error: MetalExecutionError: Error Domain=MTLCommandBufferErrorDomain Code=8 \
         \"Insufficient Memory (IOAF code 8)\" UserInfo={NSLocalizedDescription=Insufficient \
         Memory (IOAF code 8)}",
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] \
         Command buffer execution failed: Insufficient Memory",
    ] {
        assert!(explain_text(&format!("{line}\n")).is_gpu_oom, "{line}");
    }
}
