//! Unit tests of wordings added in session 52: ONNX Runtime's arena at its memory limit and
//! TensorRT-LLM's `CUASSERT` with the CUDA status as a number.

use super::*;
use crate::model::failure::OomMessage;
use crate::model::Bytes;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

#[test]
fn onnx_runtimes_arena_at_its_limit_is_a_gpu_oom_with_its_request() {
    let text = "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while \
                running Softmax node. Name:'/model.23/dfl/Softmax' Status Message: \
                /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* \
                onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, \
                bool, onnxruntime::WaitNotificationFn) Available memory of 0 is smaller than \
                requested bytes of 5505024\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(5_505_024))
    );
    // The CPU provider's arena is the host's.
    let host = "CPUExecutionProvider: bfc_arena.cc:376 Available memory of 1024 is smaller than \
                requested bytes of 17179869184\n";
    let message = first(host).expect("a message");
    assert!(!message.is_gpu_oom, "{message:#?}");
    assert_eq!(
        message.details.host_required_bytes,
        Some(Bytes(17_179_869_184))
    );
    assert_eq!(message.figures.tried_to_allocate_bytes, None);
    // The words without the arena's head are no message.
    assert!(first("the requested bytes of the file is smaller than expected\n").is_none());
}

#[test]
fn tensorrt_llms_cuassert_with_status_two_is_a_cuda_oom() {
    let text = "RuntimeError: CUDA ERROR: 2, error code reference: \
                https://nvidia.github.io/cuda-python/module/cudart.html#cuda.cudart.cudaError_t\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
    assert_eq!(message.kind, OomKind::CudaErrorOutOfMemory);
    // Another status is not an allocation failure.
    let other = "RuntimeError: CUDA ERROR: 700, error code reference: \
                 https://nvidia.github.io/cuda-python/module/cudart.html#cuda.cudart.cudaError_t\n";
    assert!(first(other).is_none_or(|message| !message.is_gpu_oom));
}

#[test]
fn opencls_allocation_statuses_of_llama_cpp_and_clblast_are_gpu_ooms() {
    for text in [
        "ggml_opencl: clCreateBuffer(context, CL_MEM_READ_WRITE, size, NULL, &err), err) error \
         -5 at ggml-opencl.cpp:1312\n",
        "CLBlast: OpenCL error: clEnqueueNDRangeKernel: -4\n",
    ] {
        let message = first(text).expect("a message");
        assert!(message.is_gpu_oom, "{message:#?}");
    }
    // Another status is no allocation failure.
    assert!(first("CLBlast: OpenCL error: clEnqueueNDRangeKernel: -54\n").is_none());
}

#[test]
fn gaudis_older_bridge_and_xlas_constants_are_device_ooms_with_their_sizes() {
    for (text, bytes) in [
        (
            "RuntimeError: FATAL ERROR :: MODULE:DEVMEM Allocation failed for size::1646821376\n",
            1_646_821_376,
        ),
        (
            "RuntimeError: FATAL ERROR :: MODULE:SYNHELPER workspace Allocation of size \
             ::14493510400 failed!\n",
            14_493_510_400,
        ),
        (
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to allocate 98697216 bytes \
             for new constant\n",
            98_697_216,
        ),
    ] {
        let message = first(text).expect("a message");
        assert!(message.is_gpu_oom, "{message:#?}");
        assert_eq!(message.figures.tried_to_allocate_bytes, Some(Bytes(bytes)));
    }
}
