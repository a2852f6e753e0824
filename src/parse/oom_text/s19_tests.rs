//! Unit tests of wordings added in session 19: Ascend NPUs' caching allocator (`torch_npu`).
//! Every line is synthetic.

use super::tests::one;
use super::*;
use crate::model::gpu::CudaOrdinal;

/// torch_npu's message keeps PyTorch 2.0's layout with `(NPU n; …)` and a `current active`
/// figure: every figure is read, and the device is the NPU's ordinal.
#[test]
fn an_npu_out_of_memory_reads_every_figure() {
    let message = one(
        "RuntimeError: NPU out of memory. Tried to allocate 386.00 MiB (NPU 2; 60.97 GiB total \
         capacity; 59.57 GiB already allocated; 59.57 GiB current active; 16.54 MiB free; 60.06 \
         GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting \
         max_split_size_mb to avoid fragmentation.",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::NpuOutOfMemory);
    let figures = &message.figures;
    assert_eq!(figures.gpu_index, Some(CudaOrdinal(2)));
    assert_eq!(figures.tried_to_allocate_bytes, Some(Bytes(404_750_336)));
    assert_eq!(figures.total_capacity_bytes, Some(Bytes(65_466_039_009)));
    assert_eq!(figures.free_bytes, Some(Bytes(17_343_447)));
    assert_eq!(
        figures.allocated_by_pytorch_bytes,
        Some(Bytes(63_962_800_456))
    );
    assert_eq!(figures.reserved_total_bytes, Some(Bytes(64_488_933_949)));
}

/// The absurd-size refusal is the same bug on an NPU as on a GPU.
#[test]
fn an_npu_request_of_more_than_1eb_is_an_absurd_size() {
    let message = one("RuntimeError: NPU out of memory. Tried to allocate more than 1EB memory.");
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::PytorchAbsurdSize);
}

/// The words in advice are not a failure.
#[test]
fn npu_out_of_memory_in_advice_is_not_a_failure() {
    let text = "to avoid NPU out of memory set PYTORCH_NPU_ALLOC_CONF before the run";
    assert!(parse_text(text).iter().all(|m| !m.is_gpu_oom));
}

/// MXNet's storage manager prints the CUDA runtime's status after its own source location: a
/// raw CUDA error, not ggml's allocation chain (no llama.cpp engine from it).
#[test]
fn mxnet_storage_manager_cuda_malloc_is_a_cuda_error_not_ggml() {
    let message = one(
        "mxnet.base.MXNetError: [18:53:03] src/storage/./pooled_storage_manager.h:157: cudaMalloc \
         failed: out of memory",
    );
    assert!(message.is_gpu_oom);
    assert_ne!(message.kind, OomKind::LlamacppAlloc);
    assert_eq!(message.engine_hint, None);
    let ggml = one(
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 6000.00 MiB on device 0: \
         cudaMalloc failed: out of memory",
    );
    assert_eq!(ggml.kind, OomKind::LlamacppAlloc);
    assert_eq!(ggml.engine_hint, Some(EngineName::Llamacpp));
}

/// `cudaMalloc failed: out of memory` alone in a sentence names no engine.
#[test]
fn a_bare_cuda_malloc_failure_in_a_sentence_names_no_engine() {
    let message = one("After a cudaMalloc failed: out of memory error is raised nothing works");
    assert!(message.is_gpu_oom);
    assert_eq!(message.engine_hint, None);
}

/// A lower-case `oom` as the subject of a verb of happening is a report; as a word elsewhere
/// it is not.
#[test]
fn lower_case_oom_that_occurs_is_a_mention() {
    for text in [
        "When inference, batch size = 4 (input length = 2k for each query), **oom occurs**.",
        "the second epoch starts and oom happened again",
    ] {
        assert!(parse_text(text).iter().any(|m| m.is_gpu_oom), "{text}");
    }
    for text in [
        "the oom score of the process",
        "set oom_score_adj for the job",
    ] {
        assert!(parse_text(text).iter().all(|m| !m.is_gpu_oom), "{text}");
    }
}

/// vLLM's cache-block error retyped in lower case is still that error.
#[test]
fn vllm_no_cache_blocks_retyped_in_lower_case() {
    let message = one(
        "I ran train_s3.sh and received the error no available memory for the cache blocks \
         during allocation.",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::VllmNoCacheBlocks);
}

/// `Ray OOM` is Ray's memory monitor killing workers for the host's memory.
#[test]
fn ray_oom_in_a_title_is_host_memory() {
    let found = parse_text("ray OOM in tensor parallel");
    assert!(found.iter().all(|m| !m.is_gpu_oom), "{found:#?}");
}

/// A hypothetical `oom occurs` (after `whether`, `unless`, `if`) is not a report.
#[test]
fn a_hypothetical_oom_that_occurs_is_not_a_mention() {
    for text in [
        "to check whether an OOM occurs, run the script twice",
        "if oom occurs, lower the batch size",
        "it keeps going unless an OOM happens",
    ] {
        assert!(parse_text(text).iter().all(|m| !m.is_gpu_oom), "{text}");
    }
}

/// SGLang's scheduler running out of KV-cache tokens for a batch, in its three wordings.
#[test]
fn sglang_token_pool_exhaustion_in_every_wording() {
    for text in [
        "RuntimeError: Decode out of memory. Try to lower your batch size.",
        "Prefill out of memory. Try to lower your batch size.",
        "RuntimeError: Out of memory. Try to lower your batch size.",
    ] {
        let message = one(text);
        assert!(message.is_gpu_oom, "{text}");
        assert_eq!(message.kind, OomKind::SglangMemory, "{text}");
        assert!(sglang::is_token_pool_exhausted(&message.text), "{text}");
    }
    assert!(!sglang::is_token_pool_exhausted(
        "Not enough memory. Please try to increase --mem-fraction-static."
    ));
}

/// c10's CUDA check raised as `RuntimeError` names PyTorch, with or without the space after
/// the colon.
#[test]
fn a_runtime_error_of_cuda_error_without_its_space_names_pytorch() {
    for text in [
        "RuntimeError: CUDA error: out of memory",
        "RuntimeError: CUDA error:out of memory",
    ] {
        assert_eq!(one(text).engine_hint, Some(EngineName::Pytorch), "{text}");
    }
}

/// MLX's Metal refusal is a GPU OOM of the Apple GPU, not llama.cpp's.
#[test]
fn mlx_metal_insufficient_memory_names_no_llama_cpp() {
    let message = one(
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] \
         Command buffer execution failed: Insufficient Memory \
         (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(message.engine_hint, None);
}

/// PyCUDA raises the driver's out-of-memory status as its own `MemoryError`: the GPU's memory.
#[test]
fn pycuda_memory_error_of_cu_mem_alloc_is_the_gpus() {
    let message = one("pycuda._driver.MemoryError: cuMemAlloc failed: out of memory");
    assert!(message.is_gpu_oom, "{message:#?}");
    let host = one("MemoryError: Unable to allocate 3.1 GiB for an array");
    assert!(!host.is_gpu_oom);
}
