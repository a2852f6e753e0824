//! Unit tests of the wordings added for blind batch s40 (helper f1): OpenVINO's GPU plugin and
//! OpenCL's `CL_OUT_OF_RESOURCES`, MLX's untagged buffer-size refusal, PyTorch's message with
//! its middle elided, a device status quoted in the reporter's sentence, Ray's node-memory
//! sentence alone, and the reporter's or a maintainer's words that the card is too small.

use super::holders::capacity_said;
use super::*;
use crate::model::failure::{OomKind, OomMessage};

fn first(text: &str) -> OomMessage {
    let messages = parse_text(text);
    assert!(!messages.is_empty(), "no message in {text:?}");
    messages
        .into_iter()
        .next()
        .unwrap_or_else(|| unreachable!())
}

/// OpenVINO's plugin (`ocl_engine.cpp`, `ocl_common.hpp`, `OCL_ERR_MSG_FMT`) and oneDNN's
/// verbose line name OpenCL's `CL_OUT_OF_RESOURCES`: the Intel GPU's memory.
#[test]
fn openvino_and_opencl_out_of_resources_are_gpu_ooms() {
    for text in [
        "Exception from src/plugins/intel_gpu/src/runtime/ocl/ocl_engine.cpp:185:\n[GPU] out of GPU resources\n",
        "[GPU] CL_OUT_OF_RESOURCES exception.\n",
        "RuntimeError: Exception from src\\plugins\\intel_gpu\\src\\runtime\\ocl\\ocl_memory.cpp:149:\n[GPU] clEnqueueWriteBuffer, error code: -5 CL_OUT_OF_RESOURCES\n",
        "onednn_verbose,v1,primitive,error,ocl,errcode -5,CL_OUT_OF_RESOURCES,src/gpu/intel/ocl/ocl_gpu_kernel.cpp:250\n",
    ] {
        let message = first(text);
        assert!(message.is_gpu_oom, "{text}");
        assert_eq!(message.kind, OomKind::OtherGpuOom, "{text}");
    }
}

/// CUDA's launch failure shares the words, and a scheduler's `out of GPU resources` in prose
/// has no plugin tag: neither is read.
#[test]
fn launch_out_of_resources_and_prose_gpu_resources_are_not() {
    for text in [
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch\n",
        "The cluster may run out of GPU resources and labs won't be launched\n",
    ] {
        assert!(
            parse_text(text).iter().all(|message| !message.is_gpu_oom),
            "{text}"
        );
    }
}

/// MLX 0.1x threw the buffer-size refusal without `[metal::malloc]`.
#[test]
fn mlx_buffer_size_refusal_without_its_tag_is_read() {
    let message = first(
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: Attempting \
         to allocate 19081554496 bytes which is greater than the maximum allowed buffer size of \
         17179869184 bytes.\n",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(crate::model::Bytes(19_081_554_496))
    );
    // XLA's TPU wording shares the verb, not the sentence.
    let tpu = parse_text("Attempting to allocate 15.65G. That was not possible.\n");
    assert!(tpu.iter().all(|message| message
        .figures
        .tried_to_allocate_bytes
        .is_none_or(|bytes| bytes.0 != 19_081_554_496)));
}

/// PyTorch's 2.1+ message with its middle elided keeps its device and free size.
#[test]
fn elided_pytorch_message_keeps_device_and_free() {
    let message = first(
        "tvm.error.InternalError: CUDA out of memory. Tried to allocate 73.65 GiB. GPU 1 ... \
         50.40 GiB is free.\n",
    );
    assert_eq!(message.figures.gpu_index.map(|index| index.0), Some(1));
    assert!(message.figures.free_bytes.is_some());
    // Without the elision, a size before `is free` is not the clause's.
    let whole = first("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 is busy\n");
    assert_eq!(whole.figures.gpu_index, None);
    assert_eq!(whole.figures.free_bytes, None);
}

/// A Level Zero status in the reporter's sentence gives way to ggml-sycl's own lines below.
#[test]
fn a_device_status_told_in_a_sentence_gives_way_to_the_log() {
    let messages = parse_text(
        "Every USM device allocation returns `UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`, regardless \
         of size.\n```\nggml_backend_sycl_buffer_type_alloc_buffer: can't allocate 427970304 \
         Bytes of memory on device\nalloc_tensor_range: failed to allocate SYCL0 buffer of size \
         427970304\n```\n",
    );
    assert_eq!(
        messages[0].figures.tried_to_allocate_bytes,
        Some(crate::model::Bytes(427_970_304)),
        "{messages:#?}"
    );
    // The status on a log line of its own is the message.
    let log = first("RuntimeError: Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)\n");
    assert!(log.is_gpu_oom);
}

/// Ray's memory monitor's sentence kept alone is the node's memory.
#[test]
fn ray_node_memory_sentence_alone_is_host_memory() {
    let message = first(
        "Memory on the node (IP: 10.0.0.1, ID: ba65c80c) where the task (task ID: d221d262, \
         name=head, rank=0,, pid=4503, memory used\n",
    );
    assert!(!message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::HostMemory);
    assert!(parse_text("Memory on the node is fine, GPU usage is low\n").is_empty());
}

/// The card's size said to be too small, a bigger card as the way out, or more of the job at
/// once: capacity in words. A question, a guess, or other memory is not.
#[test]
fn capacity_in_words() {
    for text in [
        "I see. 4Gb is a little too low - might be still possible with batch size 1",
        "8 GB of VRAM is not enough for this model",
        "no solution for the out of memory pb than getting a bigger gpu...",
        "I tried increasing the number of envs and camera width/height to large values",
    ] {
        assert!(capacity_said(text), "{text}");
    }
    for text in [
        "Is 4Gb too low?",
        "maybe 8 GB is not enough",
        "I got a bigger monitor",
        "I tried increasing the number of workers",
    ] {
        assert!(!capacity_said(text), "{text}");
    }
}
