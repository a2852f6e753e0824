//! Unit tests of engine wordings read since the eleventh session: PaddlePaddle's allocator,
//! ONNX Runtime's arena, bitsandbytes' CUDA check, TensorRT-LLM's runtime check cut by a console
//! inside a word, InvokeAI's model cache, CUDA's allocation named failing in a title, and the
//! look-alikes that must stay what they are (a quoted `Killed`, ggml's pinned host memory).

use super::*;
use crate::model::bytes::{GIB, MIB};
use crate::model::failure::OomMessage;
use crate::model::gpu::CudaOrdinal;

fn gpu(text: &str) -> Vec<OomMessage> {
    parse_text(text)
        .into_iter()
        .filter(|message| message.is_gpu_oom)
        .collect()
}

fn one_gpu(text: &str) -> OomMessage {
    let mut messages = gpu(text);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    messages.remove(0)
}

/// PaddlePaddle 2.x `cuda_allocator.cc` (`CUDAAllocator::AllocateImpl`): the sizes are
/// `string::HumanReadableSize` (`%f` of powers of 1024). Real line quoted in a ppdiffusers
/// write-up (`Cannot allocate 1.000000GB memory on GPU 0, 7.084717GB memory has been allocated
/// and available memory is only 716.750000MB.`).
#[test]
fn paddle_out_of_memory_error_on_gpu_with_its_figures() {
    let text = "ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate 1.000000GB memory on GPU 0, 7.084717GB memory has been allocated and available memory is only 716.750000MB.\n\nPlease check whether there is any other process using GPU 0.\n1. If yes, please stop them, or start PaddlePaddle on another GPU.\n2. If no, please decrease the batch size of your model.\n";
    let message = one_gpu(text);
    assert_eq!(message.kind, OomKind::OtherGpuOom);
    let figures = &message.figures;
    assert_eq!(figures.tried_to_allocate_bytes, Some(Bytes(GIB)));
    assert_eq!(figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(
        figures.reserved_total_bytes,
        Some(Bytes((7.084717f64 * GIB as f64).round() as u64))
    );
    assert_eq!(figures.free_bytes, Some(Bytes(716 * MIB + 3 * MIB / 4)));
    // The older wording without the allocated part, on GPU 3.
    let old = "Out of memory error on GPU 3. Cannot allocate 512.000000kB memory on GPU 3, available memory is only 0.000000B.";
    let message = one_gpu(old);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(512 * 1024))
    );
    assert_eq!(message.figures.free_bytes, Some(Bytes(0)));
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(3)));
    // Advice naming the error is not it.
    assert!(gpu("If you see an out of memory error on the CPU, lower the batch.").is_empty());
}

/// ONNX Runtime `bfc_arena.cc` (`BFCArena::Extend`), raised through the session's status
/// (microsoft/onnxruntime issue reports of the CUDA provider).
#[test]
fn onnxruntime_arena_failure_is_a_gpu_oom_with_its_request() {
    let text = "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'Conv_3' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 2081488896";
    let message = one_gpu(text);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(2081488896))
    );
    assert_eq!(
        message.exception.as_deref(),
        Some("onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException")
    );
    // The CPU provider's arena says the same: host memory when the line names it.
    let host = "CPUExecutionProvider: bfc_arena.cc:376 Failed to allocate memory for requested buffer of size 17179869184";
    assert!(gpu(host).is_empty());
    assert!(parse_text(host)
        .iter()
        .any(|message| message.kind == OomKind::HostMemory));
}

/// bitsandbytes `csrc/ops.cuh` `CUDA_CHECK_RETURN`: `Error %s at line %d in file %s` with
/// `cudaGetErrorString`.
#[test]
fn bitsandbytes_cuda_check_out_of_memory() {
    let message = one_gpu("Error out of memory at line 529 in file /src/csrc/ops.cu\n");
    assert_eq!(message.kind, OomKind::CudaErrorOutOfMemory);
    // Another status of the same check is no OOM.
    assert!(gpu("Error named symbol not found at line 529 in file /src/csrc/ops.cu\n").is_empty());
}

/// TensorRT-LLM `cudaUtils.h` `check`: `[TensorRT-LLM][ERROR] CUDA runtime error in %s: %s`,
/// hard-wrapped by a console inside `memory` (NVIDIA/TensorRT-LLM issue logs of
/// `tllmBuffers.h:125`).
#[test]
fn tensorrt_llm_runtime_error_cut_inside_the_status_word() {
    let text = "[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memo\nry (/home/jenkins/agent/workspace/LLM/main/L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:125)\n1       0x7f2f3c2e1b4e tensorrt_llm::common::throwRuntimeError(char const*, int, std::string const&) + 102\n";
    let message = one_gpu(text);
    assert_eq!(message.kind, OomKind::CudaErrorOutOfMemory);
    assert_eq!(message.end_line, 2);
    assert!(message
        .text
        .starts_with("[TensorRT-LLM][ERROR] CUDA runtime error in"));
    // The whole status on one line is read too.
    let whole = "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/src/tensorrt_llm/runtime/tllmBuffers.h:125)";
    assert_eq!(gpu(whole).len(), 1);
    // Another status cut the same way is not an OOM.
    let other = "[TensorRT-LLM][ERROR] CUDA runtime error in cudaMemcpyAsync(dst, src, n, kind, stream): an illeg\nal memory access was encountered";
    assert!(gpu(other).is_empty());
    // Too little of the word to tell (`out of`) starts nothing.
    assert!(
        gpu("[TensorRT-LLM][ERROR] CUDA runtime error in cudaMalloc(&p, n): out of\n").is_empty()
    );
}

/// InvokeAI `model_cache.py` `lock`: the warning before the re-raised `torch.cuda.
/// OutOfMemoryError`; alone it names the GPU OOM, and the error after it replaces it.
#[test]
fn invokeai_insufficient_gpu_memory_to_load_model() {
    let warning = "[2025-01-10 10:00:00,123]::[ModelManagerService]::WARNING --> Insufficient GPU memory to load model. Aborting";
    let message = one_gpu(warning);
    assert_eq!(message.kind, OomKind::NamedWithoutMessage);
    let with_error = format!("{warning}\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 3.06 MiB is free.\n");
    let message = one_gpu(&with_error);
    assert_eq!(message.kind, OomKind::PytorchTotalCapacity);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(20 * MIB))
    );
}

/// Titles naming CUDA's allocation failing (ollama/ollama issues 3711 and 8825), and their
/// negations.
#[test]
fn cuda_malloc_failing_in_a_title() {
    for title in [
        "CUDA malloc fails on newly supported models in 0.1.32 (dual-GPU setup with 72GB VRAM and 128GB RAM)",
        "Cuda malloc error",
    ] {
        let message = one_gpu(title);
        assert_eq!(message.kind, OomKind::NamedWithoutMessage, "{title}");
    }
    for not in [
        "How to avoid cuda malloc errors?",
        "There is no CUDA malloc failure anymore with 0.1.33",
    ] {
        assert!(gpu(not).is_empty(), "{not}");
    }
}

/// ComfyUI's popup title of PyTorch's cut cudaMallocAsync message (Comfy-Org/ComfyUI issue
/// 8336: `KSampler Allocation on device (ERROR Message)`), not prose about allocations.
#[test]
fn allocation_on_device_in_a_title_with_a_note() {
    let message = one_gpu("KSampler Allocation on device (ERROR Message)");
    assert_eq!(message.kind, OomKind::CudaMallocAsync);
    assert!(gpu("Allocation on device memory is slower than pinned host memory").is_empty());
}

/// A shell's `Killed` quoted in prose is the host's kill; it replaces the GPU reading of an
/// `OOM` named before it (NVIDIA/TensorRT-LLM issue 2690, a build on a 1 TB host).
#[test]
fn quoted_killed_is_the_host_and_replaces_a_mention() {
    let text = "(Memory leak) trtllm-build gets OOM without GPTAttentionPlugin\n\n- GPU name: NVIDIA A100-SXM4-40GB\n\n### actual behavior\n\nGetting out-of-memory (`Killed`) in a machine with over 1TB of RAM.\n";
    assert!(gpu(text).is_empty(), "{:#?}", parse_text(text));
    assert!(parse_text(text)
        .iter()
        .any(|message| message.kind == OomKind::KilledBySignal));
    // A GPU message later in the text is still the failure.
    let both = format!("{text}\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 39.39 GiB of which 1.06 GiB is free.\n");
    assert_eq!(gpu(&both).len(), 1);
}

/// A `Killed` between typographic quotes (`“Killed”`, three bytes each) starts after the quote
/// on a character boundary: a reporter's `**What does this mean “Killed”?**` under a
/// convert-hf-to-gguf kill made the reader slice inside `“` and panic (ggml-org/llama.cpp
/// issue 5156, in the corpus).
#[test]
fn killed_in_typographic_quotes_is_the_host_and_does_not_panic() {
    for text in [
        "python convert-hf-to-gguf.py Qwen-72B-Chat\nKilled\n\n**What does this mean “Killed”?**\n",
        "What does this mean “Killed”?",
        "it only prints ‘Killed’ and exits",
    ] {
        let messages = parse_text(text);
        assert!(gpu(text).is_empty(), "{messages:#?}");
        assert!(
            messages
                .iter()
                .any(|message| message.kind == OomKind::KilledBySignal),
            "{text:?}: {messages:#?}"
        );
    }
}

/// A title naming the machine as a pair (`GPU/CPU`) is not the host's memory
/// (hashemsellat/video-anomaly-detection issue 2); the host named alone still is.
#[test]
fn gpu_cpu_pair_is_not_the_host() {
    let message = one_gpu("OOM on \"slow\" GPU/CPU setup");
    assert_eq!(message.kind, OomKind::NamedWithoutMessage);
    assert!(gpu("OOM on the CPU when tokenizing").is_empty());
}

/// TensorFlow's ROCm stream executor in releases printing only the rounded size
/// (ROCmSoftwarePlatform/hiptensorflow issue 62).
#[test]
fn hip_tensorflow_rounded_request() {
    let message = one_gpu("mnist.py: failed to allocate 8.00G from device: hipError_t(1002)");
    assert_eq!(message.kind, OomKind::HipRuntimeOutOfMemory);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(8 * GIB))
    );
}

/// ggml's pinned host buffer falls back to pageable memory: a warning, not a GPU OOM.
#[test]
fn ggml_pinned_host_memory_stays_not_gpu() {
    assert!(gpu(
        "ggml_cuda_host_malloc: failed to allocate 0.00 MiB of pinned memory: out of memory\n"
    )
    .is_empty());
}

/// Device runtimes other than CUDA's: torch-directml, oneAPI Unified Runtime / Level Zero
/// (Intel XPUs, llama.cpp's SYCL backend), Vulkan, MLX's Metal allocator; and their host
/// twins.
#[test]
fn device_runtime_out_of_device_memory() {
    let directml = one_gpu("RuntimeError: Could not allocate tensor with 377487360 bytes. There is not enough GPU video memory available!");
    assert_eq!(
        directml.figures.tried_to_allocate_bytes,
        Some(Bytes(377487360))
    );
    for line in [
        "RuntimeError: Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
        "RuntimeError: level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
        "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        "vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY",
        // Intel's runtimes on a full card (session 29: ipex-llm, vLLM on XPU).
        "RuntimeError: Native API failed. Native API returns: 40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
        "RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 (PI_ERROR_OUT_OF_RESOURCES)",
    ] {
        assert_eq!(one_gpu(line).kind, OomKind::OtherGpuOom, "{line}");
    }
    // CUDA's launch-resources error is a kernel's registers, not memory.
    assert!(parse_text(
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch"
    )
    .iter()
    .all(|message| !message.is_gpu_oom));
    let mlx = one_gpu("libc++abi: terminating due to uncaught exception of type std::runtime_error: [metal::malloc] Attempting to allocate 137438953472 bytes which is greater than the maximum allowed buffer size of 77309411328 bytes.");
    assert_eq!(
        mlx.figures.tried_to_allocate_bytes,
        Some(Bytes(137438953472))
    );
    let host = "RuntimeError: Native API failed. Native API returns: 6 (UR_RESULT_ERROR_OUT_OF_HOST_MEMORY)";
    assert!(gpu(host).is_empty());
    assert!(parse_text(host)
        .iter()
        .any(|message| message.kind == OomKind::HostMemory));
    // A word that only holds the status's name is not it.
    assert!(gpu("MY_OUT_OF_DEVICE_MEMORY_COUNTER=0").is_empty());
    // ggml-sycl's buffer (`ggml_backend_sycl_buffer_type_alloc_buffer`).
    let sycl = one_gpu("ggml_backend_sycl_buffer_type_alloc_buffer: can't allocate 3503030272 Bytes of memory on device\nllama_model_load: error loading model: failed to allocate SYCL0 buffer");
    assert_eq!(
        sycl.figures.tried_to_allocate_bytes,
        Some(Bytes(3503030272))
    );
}

/// The GPU named in titles the mention readers missed: lower-case `oom` after its device,
/// a card by number or by memory, `VRAM OOM`, PyTorch's class in a sentence, CJK and Korean
/// wordings that qualify 内存/메모리 by the GPU; the host's stay out.
#[test]
fn gpu_named_in_more_title_wordings() {
    for title in [
        "cuda oom when training",
        "Cuda OOM with batch size 1",
        "GPU oom",
        "OOM on 4090 with flux dev",
        "OOM on 24GB card",
        "OOM with 2x3090",
        "VRAM OOM at 1024x1024",
        "Out of memory when training on T4 colab",
        "torch.cuda.OutOfMemoryError when generating long videos",
        "显卡内存不足",
        "CUDA内存不足",
        "GPUのメモリが不足しています",
        "GPU 메모리 부족",
    ] {
        assert_eq!(gpu(title).len(), 1, "{title}");
    }
    for not in [
        "RAM OOM while tokenizing",
        "CPU OOM when loading 70B",
        "内存不足",
        "GPU 부족",
        "How to avoid cuda oom?",
        "reduce gpu oom risk with gradient checkpointing",
        "except torch.cuda.OutOfMemoryError as e",
        // A program's pool named as what ran out, a card named after it (sgl-project/sglang
        // issue 10408).
        "It crashes with alloc_req_slots runs out of memory. This happens on 4× NVIDIA L4.",
    ] {
        assert!(gpu(not).is_empty(), "{not}");
    }
}

/// The TPU compiler's check of a program against the chip's HBM, in the wordings of its
/// releases (`RESOURCE_EXHAUSTED:`, the older `Resource exhausted:` and `Compilation failure:`)
/// and quoted alone in a title: a device-memory failure with the chip's HBM as the total.
#[test]
fn tpu_hbm_compile_check_is_a_device_oom_with_its_total() {
    let text = "XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 12.50G of 8.00G hbm. Exceeded hbm capacity by 4.50G.";
    let message = one_gpu(text);
    assert_eq!(message.kind, OomKind::XlaResourceExhausted);
    assert_eq!(message.figures.total_capacity_bytes, Some(Bytes(8 * GIB)));
    assert_eq!(message.figures.tried_to_allocate_bytes, None);
    let old = one_gpu("RuntimeError: Resource exhausted: Ran out of memory in memory space hbm. Used 9.50G of 16.00G hbm. Exceeded hbm capacity by 1.00G.");
    assert_eq!(old.figures.total_capacity_bytes, Some(Bytes(16 * GIB)));
    let compile = one_gpu(
        "  Compilation failure: Ran out of memory in memory space hbm. Used 3.00G of 2.00G hbm.",
    );
    assert_eq!(compile.figures.total_capacity_bytes, Some(Bytes(2 * GIB)));
    // A title quoting the first sentence only.
    let title = one_gpu("Model X: \"Ran out of memory in memory space hbm.\" on a TPU v3");
    assert_eq!(title.figures.total_capacity_bytes, None);
    // The core's scratchpad (vmem) is a compile limit, not the device's memory.
    assert!(gpu("Ran out of memory in memory space vmem while allocating on stack").is_empty());
}

/// CuPy's OOM class named in a title or sentence (`cupy/cuda/memory.pyx` raises it only for its
/// device pool); its message may not be pasted.
#[test]
fn cupy_class_named_in_a_sentence_is_a_gpu_oom() {
    let message = one_gpu("cupy.cuda.memory.OutOfMemoryError during the forward pass\n");
    assert!(message.is_gpu_oom);
    assert!(
        gpu("to avoid cupy.cuda.memory.OutOfMemoryError when batching, free the pool").is_empty()
    );
}

/// The allocator's message quoted after the reporter's own `out of memory` on one line: the
/// message's figures, not a figureless mention.
#[test]
fn allocator_message_after_a_sentence_keeps_its_figures() {
    let message = one_gpu(
        "My job runs out of memory at epoch 2 (CUDA out of memory. Tried to allocate 1.50 GiB)",
    );
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(3 * GIB / 2))
    );
    // The ≤2.0 message cut inside `already allocated` keeps that figure.
    let cut = one_gpu("RuntimeError: CUDA out of memory. Tried to allocate 32.00 MiB (GPU 1; 10.00 GiB total capacity; 9.50 GiB already allocate");
    assert_eq!(
        cut.figures.allocated_by_pytorch_bytes,
        Some(Bytes(9 * GIB + GIB / 2))
    );
}

/// 炸显存 (blew up the GPU memory), slang like 爆显存, in a title; not after a negation.
#[test]
fn chinese_blew_up_gpu_memory_is_a_gpu_oom() {
    assert!(one_gpu("[Bug] 升级之后推理命令炸显存\n").is_gpu_oom);
    assert!(gpu("这样设置就不会炸显存了\n").is_empty());
}

/// PaddlePaddle's host allocator (`cpu_allocator.cc`, `posix_memalign` failing) raises the
/// same `ResourceExhaustedError` class as its GPU allocator: its wording makes it the host's,
/// with the size it asked for; the GPU allocator's wording stays a GPU OOM.
#[test]
fn paddle_host_allocator_is_not_a_gpu_oom() {
    let host = parse_text("ResourceExhaustedError: Fail to alloc memory of 4294967296 size, error code is 12.\n  [Hint: Expected error == 0, but received error:12 != 0:0.]\n");
    assert_eq!(host.len(), 1, "{host:#?}");
    assert!(!host[0].is_gpu_oom);
    assert_eq!(host[0].kind, OomKind::HostMemory);
    assert_eq!(host[0].details.host_required_bytes, Some(Bytes(4 * GIB)));
    // Paddle 2.x prints the class, a blank line, then the message.
    let split = parse_text(
        "ResourceExhaustedError: \n\nFail to alloc memory of 1024 size, error code is 12.\n",
    );
    assert!(
        split.iter().all(|message| !message.is_gpu_oom),
        "{split:#?}"
    );
    assert!(!gpu("Out of memory error on GPU 0. Cannot allocate 1.000000GB memory on GPU 0, available memory is only 10.000000MB.").is_empty());
}

/// ggml-metal's buffer that Metal would not allocate: a device OOM with its rounded size; the
/// host's `posix_memalign` warning beside it is not one.
#[test]
fn ggml_metal_buffer_failure_is_a_gpu_oom() {
    let message =
        one_gpu("ggml_metal_buffer_init: error: failed to allocate buffer, size =  2048.00 MiB\n");
    assert_eq!(message.kind, OomKind::LlamacppAlloc);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(2 * GIB))
    );
    let old = one_gpu("ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size = 512.00 MiB\nllama_model_load: error loading model: unable to allocate Metal buffer\n");
    assert_eq!(old.figures.tried_to_allocate_bytes, Some(Bytes(512 * MIB)));
    assert!(gpu("the tokenizer failed to allocate buffer, size = 3 entries").is_empty());
}

/// OpenCL's buffer allocation failure is the device's memory, with or without its `CL_`
/// prefix (pyopencl drops it and names its class `MemoryError`, which is not the host's here);
/// `CL_OUT_OF_HOST_MEMORY` is the host's.
#[test]
fn opencl_buffer_allocation_failure_is_a_gpu_oom() {
    assert!(one_gpu("clCreateBuffer failed: CL_MEM_OBJECT_ALLOCATION_FAILURE").is_gpu_oom);
    let pyopencl = parse_text(
        "pyopencl._cl.MemoryError: clEnqueueNDRangeKernel failed: MEM_OBJECT_ALLOCATION_FAILURE\n",
    );
    assert_eq!(pyopencl.len(), 1, "{pyopencl:#?}");
    assert!(pyopencl[0].is_gpu_oom);
    let host = parse_text("clCreateCommandQueue failed: CL_OUT_OF_HOST_MEMORY\n");
    assert!(host.iter().all(|message| !message.is_gpu_oom), "{host:#?}");
}

/// MLX's Metal allocator with no buffer from Metal: a device OOM with its request; the CPU
/// allocator's `[malloc]` twin is not one.
#[test]
fn mlx_metal_malloc_unable_to_allocate() {
    let message = one_gpu("RuntimeError: [metal::malloc] Unable to allocate 1073741824 bytes.");
    assert_eq!(message.figures.tried_to_allocate_bytes, Some(Bytes(GIB)));
    assert!(gpu("RuntimeError: [malloc] Unable to allocate 1073741824 bytes.").is_empty());
}

/// DirectML's E_OUTOFMEMORY from onnxruntime's DML provider: a device OOM; the HRESULT without
/// DirectML on its line is not one.
#[test]
fn directml_e_outofmemory_is_a_gpu_oom() {
    let text = r"Status Message: C:\src\onnxruntime\core\providers\dml\DmlExecutionProvider\src\BucketizedBufferAllocator.cpp(122)\onnxruntime_pybind11_state.pyd!00007FF000000000: (caller: 00007FF000000001) Exception(1) tid(1a2b) 8007000E Not enough memory resources are available to complete this operation.";
    assert!(one_gpu(text).is_gpu_oom);
    assert!(gpu("CoCreateInstance returned 8007000E").is_empty());
}
