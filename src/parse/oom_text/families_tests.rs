//! Unit tests of the other engines' and libraries' OOM families (JAX/XLA, TensorFlow, ROCm,
//! cuDNN, NCCL, TensorRT, CuPy, ggml, the kernel's OOM killer), with exact byte values.

use super::tests::{gib, mib, one};
use super::*;
use crate::model::bytes::GIB;
use crate::model::gpu::CudaOrdinal;
#[test]
fn jax_xla_resource_exhausted() {
    let message = one("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.");
    assert_eq!(message.kind, OomKind::XlaResourceExhausted);
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.exception.as_deref(),
        Some("jaxlib.xla_extension.XlaRuntimeError")
    );
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(4770354232))
    );
    assert!(message
        .text
        .starts_with("RESOURCE_EXHAUSTED: Out of memory"));

    // Old jaxlib: `Resource exhausted:`; newer XLA prints a human size.
    let message = one("RuntimeError: Resource exhausted: Out of memory while trying to allocate 5520758552 bytes.");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(5520758552))
    );
    let message = one(
        "XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 16.00GiB.",
    );
    assert_eq!(message.figures.tried_to_allocate_bytes, gib(16.0));

    // The size printed twice: the exact bytes win; the device ordinal is the GPU index.
    let message = one("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 1.00GiB (1073741825B) on device ordinal 3");
    assert_eq!(message.kind, OomKind::XlaResourceExhausted);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(1073741825))
    );
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(3)));
}

#[test]
fn jax_cumemallocasync_free_and_total() {
    let text = "E1103 18:23:55.103160 3413767 gpu_cudamallocasync_allocator.cc:361] gpu_async_1 cuMemAllocAsync failed to allocate 1225195446464 bytes: RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory\n Reported by CUDA: Free memory/Total memory: 22635544576/85095874560\nE1103 18:23:55.103186 3413767 gpu_cudamallocasync_allocator.cc:366] Stats: Limit: 0\n";
    let message = one(text);
    assert_eq!(message.kind, OomKind::XlaResourceExhausted);
    let f = &message.figures;
    assert_eq!(f.tried_to_allocate_bytes, Some(Bytes(1225195446464)));
    assert_eq!(f.free_bytes, Some(Bytes(22635544576)));
    assert_eq!(f.total_capacity_bytes, Some(Bytes(85095874560)));
    assert_eq!(message.end_line, 2);
}

#[test]
fn tensorflow_tensor_and_bfc() {
    let message = one("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[16,112,112,147] and type float on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc");
    assert_eq!(message.kind, OomKind::TensorflowOomTensor);
    assert!(message.is_gpu_oom);
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(1)));
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(16 * 112 * 112 * 147 * 4))
    );
    assert_eq!(
        message.figures.derived_fields,
        vec!["tried_to_allocate_bytes".to_string()]
    );
    assert_eq!(
        message.exception.as_deref(),
        Some("tensorflow.python.framework.errors_impl.ResourceExhaustedError")
    );

    // Hard-wrapped inside the shape.
    let message = one("ResourceExhaustedError: OOM when allocating tensor with shape[1\n6,1024] and type half on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(16 * 1024 * 2))
    );

    let message = one("2021-03-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:456] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.20GiB (rounded to 1289748480)requested by op Conv2D");
    assert_eq!(message.kind, OomKind::TensorflowBfc);
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(1289748480))
    );
    assert!(message.text.starts_with("Allocator (GPU_0_bfc)"));
    // The caller retries (TSL `bfc_allocator.cc`): a warning, not the failure.
    assert!(parse_text("W bfc_allocator.cc:211] Allocator (GPU_2_bfc) ran out of memory trying to allocate 3.52GiB. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.").is_empty());
    // TensorFlow 0.x wording, without the allocator's name.
    let old = one("W tensorflow/core/common_runtime/bfc_allocator.cc:275] Ran out of memory trying to allocate 39.81MiB.  See logs for memory state.");
    assert_eq!(old.kind, OomKind::TensorflowBfc);
    assert!(old.figures.tried_to_allocate_bytes.is_some());
    let message = one("W bfc_allocator.cc:598] Allocator (GPU_2_bfc) ran out of memory trying to allocate 3.52GiB. Current allocation summary follows.");
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(2)));
    assert_eq!(message.figures.tried_to_allocate_bytes, gib(3.52));
}

#[test]
fn rocm_cudnn_nccl_tensorrt_cupy_tinygrad() {
    let cases: [(&str, OomKind); 12] = [
        ("RuntimeError: HIP error: out of memory", OomKind::HipRuntimeOutOfMemory),
        ("HIP runtime returned hipErrorOutOfMemory (out of memory) at device 1", OomKind::HipRuntimeOutOfMemory),
        ("rocBLAS error: HIP_ERROR_OutOfMemory", OomKind::HipRuntimeOutOfMemory),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED", OomKind::CudnnAlloc),
        ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED", OomKind::CudnnAlloc),
        ("node1:123:456 [3] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'", OomKind::NcclCudaFailure),
        ("NCCL WARN Cuda failure 2 'out of memory'", OomKind::NcclCudaFailure),
        ("[TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)", OomKind::TensorrtAlloc),
        ("[W] Requested amount of GPU memory (1073741824 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.", OomKind::TensorrtAlloc),
        ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes).", OomKind::CupyOutOfMemory),
        ("RuntimeError: CUDA Error 2, out of memory", OomKind::CudaErrorOutOfMemory),
        ("RuntimeError: [TM][ERROR] CUDA runtime error: out of memory /lmdeploy/src/turbomind/utils/allocator.h:231", OomKind::CudaErrorOutOfMemory),
    ];
    for (text, kind) in cases {
        let messages = parse_text(text);
        assert_eq!(messages.len(), 1, "{text}: {messages:#?}");
        assert_eq!(messages[0].kind, kind, "{text}");
        assert!(messages[0].is_gpu_oom, "{text}");
        assert!(
            OOM_MARKERS.iter().any(|m| text.contains(m)),
            "no marker: {text}"
        );
    }
    let trt = one("[W] Requested amount of GPU memory (1073741824 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.");
    assert_eq!(trt.figures.tried_to_allocate_bytes, Some(Bytes(GIB)));
    let cupy = one("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes).");
    assert_eq!(cupy.figures.tried_to_allocate_bytes, Some(Bytes(GIB)));
    assert_eq!(
        cupy.figures.allocated_by_pytorch_bytes,
        Some(Bytes(2 * GIB))
    );
    assert_eq!(
        cupy.exception.as_deref(),
        Some("cupy.cuda.memory.OutOfMemoryError")
    );
    let cntk = one("RuntimeError: CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ;");
    assert_eq!(cntk.kind, OomKind::CublasAlloc);
    assert_eq!(cntk.figures.gpu_index, Some(CudaOrdinal(0)));
    let hip = one("HIP runtime returned hipErrorOutOfMemory (out of memory) at device 1");
    assert_eq!(hip.figures.gpu_index, Some(CudaOrdinal(1)));
    // The stream executor prints the exact request in bytes beside the rounded size.
    let rocm = one("2023-11-01 16:19:17.812101: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate 127.99TiB (140729850295296 bytes) from device: HIP_ERROR_OutOfMemory");
    assert_eq!(
        rocm.figures.tried_to_allocate_bytes,
        Some(Bytes(140_729_850_295_296))
    );
    // NCCL's `host:pid:tid [dev]` prefix names the CUDA device; a torchrun `[rank5]:` does not.
    let nccl =
        one("VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'");
    assert_eq!(nccl.kind, OomKind::NcclCudaFailure);
    assert_eq!(nccl.figures.gpu_index, Some(CudaOrdinal(2)));
    let ranked = one("[rank5]: NCCL WARN Cuda failure 'out of memory'");
    assert_eq!(ranked.figures.gpu_index, None);
    let cudnn = one("cuDNN failure 2: CUDNN_STATUS_ALLOC_FAILED ; GPU=3 ; hostname=h ; expr=finder(calgo, algoPerf)");
    assert_eq!(cudnn.kind, OomKind::CudnnAlloc);
    assert_eq!(cudnn.figures.gpu_index, Some(CudaOrdinal(3)));
}

#[test]
fn not_gpu_families_are_named_for_what_they_are() {
    let cases: [(&str, OomKind); 14] = [
        ("MemoryError", OomKind::HostMemory),
        ("MemoryError: Unable to allocate array", OomKind::HostMemory),
        ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.12 GiB for an array with shape (100000, 4189) and data type float64", OomKind::HostMemory),
        ("terminate called after throwing an instance of 'std::bad_alloc'", OomKind::HostMemory),
        ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).", OomKind::SharedMemory),
        ("OSError: [Errno 28] No space left on device: '/dev/shm/torch_123'", OomKind::SharedMemory),
        ("OSError: [Errno 28] No space left on device", OomKind::DiskFull),
        ("RuntimeError: CUDA error: device-side assert triggered", OomKind::DeviceAssert),
        ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. Reducing block sizes or `num_stages` may help.", OomKind::TritonOutOfResources),
        ("torch._inductor.exc.InductorError: out of resource: shared memory, Required: 131072, Hardware limit: 101376.", OomKind::TritonOutOfResources),
        ("  what():  std::bad_alloc", OomKind::HostMemory),
        ("kubectl: Last State: Terminated Reason: OOMKilled Exit Code: 137", OomKind::HostMemory),
        ("(raylet) node_manager.cc:3007: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons", OomKind::HostMemory),
        ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", OomKind::HostMemory),
    ];
    for (text, kind) in cases {
        let messages = parse_text(text);
        assert_eq!(messages.len(), 1, "{text}: {messages:#?}");
        assert_eq!(messages[0].kind, kind, "{text}");
        assert!(!messages[0].is_gpu_oom, "{text}");
        assert!(
            OOM_MARKERS.iter().any(|m| text.contains(m)),
            "no marker: {text}"
        );
    }
    let numpy = one("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.12 GiB for an array with shape (100000, 4189) and data type float64");
    assert_eq!(numpy.details.host_required_bytes, gib(3.12));
    let bare_point = one("MemoryError: Unable to allocate 201. GiB for an array with shape (2999, 2999, 2999) and data type int64");
    assert_eq!(
        bare_point.details.host_required_bytes,
        Some(Bytes(201 * GIB))
    );
    // Not starts: the CUDA boilerplate about device-side assertions, an `except` clause,
    // PyTorch's own OutOfMemoryError class name alone, prose.
    for text in [
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "    except MemoryError:",
        "from torch.cuda import OutOfMemoryError",
        "we hit a MemoryError sometimes",
    ] {
        assert!(parse_text(text).is_empty(), "{text}");
    }
}

#[test]
fn pytorch_after_prefixes_blank_lines_and_repr() {
    const TAIL: &str = "Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Of the allocated memory 22.81 GiB is allocated by PyTorch, and 369.58 MiB is reserved by PyTorch but unallocated.";
    // A trainer's or a logger's own words before the message.
    for prefix in [
        "[2024-05-01 12:00:00,123] ERROR trainer.py:88 - Training failed: ",
        "OOM during step 12 -> ",
        "> torch.OutOfMemoryError: ",
        "E   ",
    ] {
        let message = one(&format!("{prefix}CUDA out of memory. {TAIL}"));
        assert_eq!(message.kind, OomKind::PytorchTotalCapacity, "{prefix}");
        assert_eq!(message.figures.tried_to_allocate_bytes, mib(20.0));
        assert_eq!(message.figures.free_bytes, mib(3.06));
    }
    // A console paste split over blank lines (and Windows line ends).
    let text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free.\r\n\r\nOf the allocated memory 22.81 GiB is allocated by PyTorch, and 369.58 MiB is reserved by PyTorch but unallocated.\r\n";
    let message = one(text);
    assert_eq!(message.figures.reserved_unallocated_bytes, mib(369.58));
    assert_eq!(message.end_line, 3);
    // repr with escaped newlines inside a JSON-ish dump.
    let message = one(
        "{\"error\": \"OutOfMemoryError('CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free.\\nOf the allocated memory 22.81 GiB is allocated by PyTorch, and 369.58 MiB is reserved by PyTorch but unallocated.')\"}",
    );
    assert_eq!(message.figures.allocated_by_pytorch_bytes, gib(22.81));
    // A blank line then prose does not join the message.
    let messages = parse_text("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 2.00 GiB total capacity;\n\nthanks for any help\n");
    assert_eq!(messages.len(), 1);
    assert!(!messages[0].text.contains("thanks"));
}

mod family_properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn framework_texts_never_panic(
            text in "(RESOURCE_EXHAUSTED: |Out of memory while trying to allocate |Failed to allocate request for |\\(|[0-9]{1,12}|B\\)| bytes\\.|GiB| on device ordinal |OOM when allocating tensor with shape\\[|,|\\] and type |float|half| by allocator GPU_0_bfc|Allocator \\(GPU_0_bfc\\) ran out of memory trying to allocate |\\(rounded to |hipErrorOutOfMemory|CUDNN_STATUS_ALLOC_FAILED|Cuda failure '|out of memory'|Requested amount of GPU memory \\(|Out of memory allocating |allocated so far: |MemoryError|_ArrayMemoryError: Unable to allocate |std::bad_alloc|No space left on device|/dev/shm|device-side assert triggered|OutOfResources: out of resource: |cuMemAllocAsync failed to allocate |Free memory/Total memory: |/|\n|\r\n|\\\\n|'|\"|> |[ \t]){0,40}"
        ) {
            for message in parse_text(&text) {
                prop_assert!(message.end_line >= message.line);
            }
        }

        /// A numeric figure survives any prefix before the message.
        #[test]
        fn xla_bytes_after_any_prefix(prefix in "[ -~]{0,40}", bytes in 1u64..u64::MAX / 2) {
            prop_assume!(!prefix.contains("Out of memory") && !prefix.contains("RESOURCE"));
            let text = format!("{prefix}RESOURCE_EXHAUSTED: Out of memory while trying to allocate {bytes} bytes.");
            let messages = parse_text(&text);
            let xla = messages.iter().find(|m| m.kind == OomKind::XlaResourceExhausted);
            prop_assert!(xla.is_some(), "{messages:#?}");
            prop_assert_eq!(xla.unwrap().figures.tried_to_allocate_bytes, Some(Bytes(bytes)));
        }

        #[test]
        fn tf_shape_bytes_are_exact(dims in proptest::collection::vec(1u64..5000, 1..5)) {
            let shape = dims.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
            let text = format!("ResourceExhaustedError: OOM when allocating tensor with shape[{shape}] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc");
            let message = one(&text);
            let expected = dims.iter().try_fold(4u64, |acc, d| acc.checked_mul(*d));
            prop_assert_eq!(message.figures.tried_to_allocate_bytes, expected.map(Bytes));
        }
    }
}

#[test]
fn ggml_vulkan_and_metal_failures() {
    let message = one("ggml_vulkan: Device memory allocation of size 369827840 failed.\nggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\nalloc_tensor_range: failed to allocate Vulkan0 buffer of size 369827840\nllama_model_load: error loading model: unable to allocate Vulkan0 buffer");
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::LlamacppAlloc);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(369_827_840))
    );
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(0)));
    let message = one("ggml_vulkan: Device memory allocation of size 1610612736 failed.");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(1_610_612_736))
    );
    assert!(one("Error allocating memory ErrorOutOfDeviceMemory").is_gpu_oom);
    assert!(
        one("error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)")
            .is_gpu_oom
    );
    assert!(one("libc++abi: terminating: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)").is_gpu_oom);
    // Prose that names the error is not a message.
    assert!(parse_text("Loading fails with `ErrorOutOfDeviceMemory` during warm-up, see `kIOGPUCommandBufferCallbackErrorOutOfMemory`.").is_empty());
    // ggml's pinned-memory warning falls back to pageable memory: not a failure.
    assert!(parse_text(
        "ggml_cuda_host_malloc: failed to allocate 335445.83 MiB of pinned memory: out of memory"
    )
    .is_empty());
    // A cortex log's source-location lines stay inside the chain; the exact bytes win.
    let message = one("ERROR ggml_backend_cuda_buffer_type_alloc_buffer: allocating 7203.17 MiB on device 0: cudaMalloc failed: out of memory\n - llama_engine.cc:533\nERROR alloc_tensor_range: failed to allocate CUDA0 buffer of size 7553073280\n - llama_engine.cc:533");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(7_553_073_280))
    );
}

#[test]
fn ggml_cuda_error_n_at_and_rocm_error_name_the_device() {
    let message =
        one("CUDA error 2 at /src/llama.cpp/ggml-cuda.cu:7641: out of memory\ncurrent device: 1");
    assert_eq!(message.kind, OomKind::CudaErrorOutOfMemory);
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(1)));
    let message = one("ROCm error: out of memory\n  current device: 0, in function alloc at ggml/src/ggml-cuda/ggml-cuda.cu:420");
    assert_eq!(message.kind, OomKind::HipRuntimeOutOfMemory);
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(0)));
    // Another CUDA error at a source line is not an OOM.
    assert!(
        parse_text("CUDA error 700 at ggml-cuda.cu:100: an unspecified launch failure").is_empty()
    );
}

#[test]
fn pytorch_cut_and_fragmentary_messages() {
    // cudaMallocAsync's message cut at the raw device byte (ComfyUI).
    let message = one("torch.OutOfMemoryError: Allocation on device \u{0}");
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::CudaMallocAsync);
    assert!(one("!!! Exception during processing !!! Allocation on device ").is_gpu_oom);
    // DataParallel's relay names the replica's device (session 29, a SageMaker log).
    let relay = parse_text(
        "torch.cuda.OutOfMemoryError: Caught OutOfMemoryError in replica 0 on device 1.",
    );
    assert_eq!(relay[0].figures.gpu_index, Some(CudaOrdinal(1)));
    // Quoted after its class, with the reporter's words on the same line.
    let quoted = one("torch.OutOfMemoryError: Allocation on device on 2x4090. Because this code");
    assert_eq!(quoted.kind, OomKind::CudaMallocAsync);
    assert!(parse_text("Allocation on device 0 on 2x4090 works again").is_empty());
    assert!(
        parse_text("Allocation on device 0 succeeded after retry with smaller blocks").is_empty()
    );
    // A markdown-bold fragment from "Tried to allocate" on.
    let message = one("**Tried to allocate 298.00 MiB. GPU**");
    assert!(message.is_gpu_oom);
    assert_eq!(message.figures.tried_to_allocate_bytes, mib(298.0));
    // A message wrapped right before "Tried to allocate" stays one message.
    let message = one("torch.OutOfMemoryError: CUDA out of memory.\nTried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.19 GiB of which 1.00 GiB is free. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 2.00 GiB is reserved by PyTorch but unallocated.");
    assert_eq!(message.figures.tried_to_allocate_bytes, mib(20.0));
    assert_eq!(message.figures.total_capacity_bytes, gib(79.19));
    // Cut inside a phrase: the figure before it is still named.
    let message = one("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacty of 14.58 GiB of which 635.56 MiB is free. Of the allocated memory 11.23 GiB is allocated by PyTorch, and 2.51 GiB is reserv");
    assert_eq!(message.figures.reserved_unallocated_bytes, gib(2.51));
    let message = one("CUDA out of memory. Tried to allocate 42.00 MiB. GPU 0 has a total capacty of 39.39 GiB of which 31.94 MiB is free. Of the allocated memory 37.21 GiB is allo`");
    assert_eq!(message.figures.allocated_by_pytorch_bytes, gib(37.21));
    // A prefixed rank line wrapped inside a number: the rest has no prefix.
    let message = one("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.36 GiB. GPU 1 has a total capacity of 47.50 GiB of which 1.52 GiB is free. Of the allocated memory 4\n0.30 GiB is allocated by PyTorch, and 4.91 GiB is reserved by PyTorch but unallocated.");
    assert_eq!(message.figures.allocated_by_pytorch_bytes, gib(40.30));
    assert_eq!(message.figures.reserved_unallocated_bytes, gib(4.91));
}

#[test]
fn cupy_tensorrt_xla_vllm_accelerate_wordings() {
    let message = one("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes, limit set to: 4,000,000,000 bytes).");
    assert_eq!(message.kind, OomKind::CupyOutOfMemory);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(25_600_000))
    );
    assert_eq!(
        message.figures.allocated_by_pytorch_bytes,
        Some(Bytes(3_635_267_072))
    );
    assert_eq!(message.figures.allowed_bytes, Some(Bytes(4_000_000_000)));
    let message = one(
        "OutOfMemoryError: out of memory to allocate 1200000000 bytes (total 7204800000 bytes)",
    );
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(1_200_000_000))
    );
    assert_eq!(
        message.figures.reserved_total_bytes,
        Some(Bytes(7_204_800_000))
    );

    let message = one("[TensorRT] ERROR: Requested amount of memory (150994944 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.");
    assert_eq!(message.kind, OomKind::TensorrtAlloc);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(150_994_944))
    );
    let message = one("[TRT] [E] [virtualMemoryBuffer.cpp::resizePhysical::151] Error Code 2: OutOfMemory (Requested size was 16654532608 bytes.)");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(16_654_532_608))
    );
    assert!(one("[TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation failed due to insufficient GPU memory.").is_gpu_oom);
    // The executor report names the component on a later line, after a blank one.
    for component in ["KV cache", "Model", "Sampler"] {
        let message = one(&format!("[TRT-LLM] [E] Failed to initialize executor on rank 0: Executor creation failed due to insufficient GPU memory.\n\nThe following component could not be created: {component}\nTotal GPU memory (GiB): 140.06"));
        assert!(message.text.ends_with(component), "{}", message.text);
    }

    // Old XLA, wrapped inside the wording.
    let message = one("E local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out\nof memory while trying to allocate 5520758552 bytes.");
    assert_eq!(message.kind, OomKind::XlaResourceExhausted);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(5_520_758_552))
    );
    // A human size is not cut at its decimal point.
    let message = one("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 12.00GiB with allocator GPU_0_bfc on device 0.");
    assert_eq!(message.figures.tried_to_allocate_bytes, gib(12.0));
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(0)));
    // Retried allocations are logged, not failures.
    assert!(parse_text("W bfc_allocator.cc:371] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.05GiB from the lower end with freed_by_count=0. The caller indicates that this is not a failure, but this may mean that there could be performance gains if more memory were available.").is_empty());
    assert!(parse_text("E cuda_executor.cc:1365] [0] Failed to allocate device memory of 104.85GiB (112583507968 bytes): RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory").is_empty());
    let message = one("W bfc_allocator.cc:598] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.05GiB from the lower end requested by op ");
    assert_eq!(message.figures.tried_to_allocate_bytes, gib(1.05));

    let message = one("(EngineCore_DP0 pid=563) INFO 12-23 23:34:23 [gpu_worker.py:298] Available KV cache memory: -2.77 GiB");
    assert_eq!(message.kind, OomKind::VllmNoCacheBlocks);
    assert!(parse_text("INFO [gpu_worker.py:298] Available KV cache memory: 52.77 GiB").is_empty());

    let message = one("RuntimeError: No executable batch size found, reached zero.");
    assert!(message.is_gpu_oom);
    // The `raise` line above it (accelerate `utils/memory.py`) adds no message of its own.
    let message = one("    raise RuntimeError(\"No executable batch size found, reached zero.\")\nRuntimeError: No executable batch size found, reached zero.");
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::OtherGpuOom);
}

/// The kernel's OOM-killer lines (Linux `mm/oom_kill.c`, `mm/memcontrol.c`), a cgroup v1 kill
/// as dmesg prints it, with the dump between the lines skipped.
#[test]
fn kernel_oom_killer_lines_give_the_kill_and_the_cgroup_limit() {
    let text = "\
[81234.000100] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
[81234.000200] CPU: 3 PID: 4242 Comm: python3 Not tainted 5.15.0-91-generic #101-Ubuntu
[81234.000300] memory: usage 16777216kB, limit 16777216kB, failcnt 4521
[81234.000400] memory+swap: usage 16777216kB, limit 9007199254740988kB, failcnt 0
[81234.000500] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=abc,mems_allowed=0,oom_memcg=/kubepods/burstable/pod1234,task_memcg=/kubepods/burstable/pod1234/abc,task=python3,pid=4242,uid=0
[81234.000600] Memory cgroup out of memory: Killed process 4242 (python3) total-vm:25165824kB, anon-rss:16515072kB, file-rss:65536kB, shmem-rss:0kB, UID:0 pgtables:33000kB oom_score_adj:969
";
    let messages = parse_text(text);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    let kill = &messages[0];
    assert_eq!(kill.kind, OomKind::HostMemory);
    assert!(!kill.is_gpu_oom);
    assert_eq!((kill.line, kill.end_line), (1, 6));
    let details = &kill.details;
    assert_eq!(details.killed_pid, Some(4242));
    assert_eq!(details.killed_process.as_deref(), Some("python3"));
    assert_eq!(
        details.killed_anon_rss_bytes,
        Some(Bytes(16_515_072 * 1024))
    );
    assert_eq!(
        details.killed_rss_bytes,
        Some(Bytes((16_515_072 + 65_536) * 1024))
    );
    assert_eq!(details.host_usage_bytes, Some(Bytes(16 * GIB)));
    assert_eq!(details.host_limit_bytes, Some(Bytes(16 * GIB)));
    assert_eq!(details.oom_constraint.as_deref(), Some("CONSTRAINT_MEMCG"));
    assert_eq!(
        details.memory_cgroup.as_deref(),
        Some("/kubepods/burstable/pod1234/abc")
    );
    // No limit: PAGE_COUNTER_MAX is not a limit.
    let unlimited =
        one("[1.0] memory: usage 1024kB, limit 9007199254740988kB, failcnt 0 oom-kill:constraint=CONSTRAINT_NONE");
    assert_eq!(unlimited.details.host_limit_bytes, None);
}

/// Kubernetes and docker say `OOMKilled` only for a memory-limit kill; an exit code 137 or a
/// shell's `Killed` alone is a kill by signal whose cause the text does not show.
#[test]
fn kills_are_host_memory_only_with_evidence() {
    for text in [
        "      Reason:       OOMKilled",
        "        reason: OOMKilled",
        "my-pod-7d9f   0/1     OOMKilled   3          5m",
        "            \"OOMKilled\": true,",
    ] {
        assert_eq!(one(text).kind, OomKind::HostMemory, "{text}");
    }
    for (text, code) in [
        ("      Exit Code:    137", Some(137)),
        ("        exitCode: 137", Some(137)),
        ("            \"ExitCode\": 137,", Some(137)),
        ("vllm-1 exited with code 137", Some(137)),
        ("Killed", Some(-9)),
        ("Killed: 9", Some(-9)),
        ("[1]+  Killed                  python train.py", Some(-9)),
        // The shell of a script gives its killed command the status 128 + 9.
        ("/bin/sh: line 1:  4242 Killed                  python train.py", Some(137)),
        ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 4 (pid: 899509)", Some(-9)),
        ("Loading checkpoint shards:  75%|███████▌  | 3/4 [00:08<00:02,  2.83s/it]Killed", Some(-9)),
        ("[2024-07-18 10:00:00 +0000] [1] [ERROR] Worker (pid:25134) was sent SIGKILL! Perhaps out of memory?", Some(-9)),
    ] {
        let message = one(text);
        assert_eq!(message.kind, OomKind::KilledBySignal, "{text}");
        assert_eq!(message.details.exit_code, code, "{text}");
        assert!(!message.is_gpu_oom);
    }
    for text in [
        "            \"OOMKilled\": false,",
        "the process got Killed by someone",
        "Killed the old workers, restarting",
        "processed 137 requests",
    ] {
        assert!(parse_text(text).is_empty(), "{text}");
    }
}
