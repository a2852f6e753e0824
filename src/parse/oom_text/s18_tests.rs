//! Unit tests of wordings added in session 18: old PaddlePaddle's enforce, a Vulkan title, HIP's
//! allocation in a title, `OOM` in the reporter's lower case and sentences. Every line is
//! synthetic.

use super::tests::one;
use super::*;

/// PaddlePaddle Fluid's enforce of a chunk against CUDA's free memory: the request and the
/// free memory, in bytes.
#[test]
fn paddle_fluid_enforce_allocating_available_reads_both_figures() {
    let message = one(
        "paddle.fluid.core.EnforceNotMet: enforce allocating <= available failed, 10513462067 > \
         1369702144",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(10_513_462_067))
    );
    assert_eq!(message.figures.free_bytes, Some(Bytes(1_369_702_144)));
}

/// A title quoting Vulkan's error in brackets after the failure is a GPU OOM; the error's name
/// in prose is not.
#[test]
fn a_vulkan_title_quoting_the_error_in_brackets_is_a_gpu_oom() {
    let title = parse_text("Vulkan Device memory allocation failed (ErrorOutOfDeviceMemory )");
    assert!(title.iter().any(|m| m.is_gpu_oom), "{title:#?}");
    let prose = parse_text("the docs list `ErrorOutOfDeviceMemory` among Vulkan's results");
    assert!(prose.iter().all(|m| !m.is_gpu_oom), "{prose:#?}");
}

/// HIP's allocation named failing in a title, as CUDA's is; not a question or advice.
#[test]
fn hip_malloc_failing_in_a_title_is_a_gpu_oom() {
    let title = parse_text("[Issue]: hipMalloc fails even though there is enough memory");
    assert!(title.iter().any(|m| m.is_gpu_oom), "{title:#?}");
    let question = parse_text("Can hipMalloc fail when the pointer is not aligned?");
    assert!(question.iter().all(|m| !m.is_gpu_oom), "{question:#?}");
}

/// `oom` in lower case right after a verb that hits it is the reporter's OOM; the end of
/// another word, the host's killer, and lower case without such a verb are not.
#[test]
fn lower_case_oom_after_a_verb_is_a_mention() {
    let got =
        parse_text("i tested many optimizers with the new commit on my 3060 but still getting oom");
    assert!(got.iter().any(|m| m.is_gpu_oom), "{got:#?}");
    for line in [
        "the zoom on the 3060 preview is broken",
        "the process was killed by the oom-killer on the GPU node",
        "set a larger batch on the GPU, oom is unlikely",
    ] {
        let messages = parse_text(line);
        assert!(
            messages.iter().all(|m| !m.is_gpu_oom),
            "{line}: {messages:#?}"
        );
    }
}

/// TensorFlow's OOM status in the reporter's words is a GPU OOM; advice about it is not.
#[test]
fn resource_exhausted_error_in_a_sentence_is_a_mention() {
    let got =
        parse_text("while training with Tensorflow GPU i am getting resource exhausted error");
    assert!(got.iter().any(|m| m.is_gpu_oom), "{got:#?}");
    let advice = parse_text("lower the batch size to avoid a resource exhausted error on the GPU");
    assert!(advice.iter().all(|m| !m.is_gpu_oom), "{advice:#?}");
}

/// The host's words count in the sentence that says `OOM`: a run fine on a large-RAM CPU then
/// an OOM on the GPU is the GPU's; RAM in the OOM's own sentence keeps it the host's.
#[test]
fn host_words_count_in_the_ooms_own_sentence() {
    let gpu = parse_text(
        "The script works well on a large-RAM CPU. However, on GPU (V100 16GB) I got an OOM \
         error related to constant folding.",
    );
    assert!(gpu.iter().any(|m| m.is_gpu_oom), "{gpu:#?}");
    let host = parse_text("On the GPU box with 16GB RAM I got an OOM error while tokenizing.");
    assert!(host.iter().all(|m| !m.is_gpu_oom), "{host:#?}");
}

/// HIP's pinned host allocation failing with `hipErrorOutOfMemory` is the host's page-locked
/// memory, as CUDA's is; the same error after a device allocation stays the GPU's.
#[test]
fn hip_pinned_host_allocation_is_not_the_gpus_memory() {
    let pinned = parse_text(
        "On MI-25, hipMalloc is OK, but I see hipHostRegister returns 2:\nhipErrorOutOfMemory",
    );
    assert!(pinned.iter().all(|m| !m.is_gpu_oom), "{pinned:#?}");
    let device = parse_text("hipMalloc(&ptr, size) returned:\nhipErrorOutOfMemory");
    assert!(device.iter().any(|m| m.is_gpu_oom), "{device:#?}");
}

/// A status code's definition pasted from a runtime's header names the error without
/// reporting it.
#[test]
fn a_status_definition_from_a_header_is_no_message() {
    for line in [
        "    hipErrorOutOfMemory = 2,",
        "    cudaErrorMemoryAllocation = 2,  ///< The API call failed because it was unable to",
    ] {
        let messages = parse_text(line);
        assert!(
            messages.iter().all(|m| !m.is_gpu_oom),
            "{line}: {messages:#?}"
        );
    }
    let reported = parse_text("hipMalloc returned hipErrorOutOfMemory = 2 on the second call");
    assert!(reported.iter().any(|m| m.is_gpu_oom), "{reported:#?}");
}

/// Caffe's CUDA check, MIOpen's buffer and TensorFlow 1.x's root error without a shape are GPU
/// OOMs; MIOpen's gives its request in bytes.
#[test]
fn caffe_miopen_and_tensorflow_root_errors_are_gpu_ooms() {
    let caffe = one(
        "F1109 18:20:40.511134 28312 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. \
         0)  out of memory",
    );
    assert!(caffe.is_gpu_oom);
    let other_status = parse_text(
        "F1109 18:20:40.511134 28312 math_functions.cu:79] Check failed: error == cudaSuccess (9 \
         vs. 0)  invalid configuration argument",
    );
    assert!(
        other_status.iter().all(|m| !m.is_gpu_oom),
        "{other_status:#?}"
    );
    let miopen = one(
        "MIOpen Error: /data/repo/MIOpen/src/hip/handlehip.cpp:70: Memory not available to \
         allocate buffer: 655360000",
    );
    assert!(miopen.is_gpu_oom);
    assert_eq!(
        miopen.figures.tried_to_allocate_bytes,
        Some(Bytes(655_360_000))
    );
    let tf = one("(0) Resource exhausted: failed to allocate memory");
    assert!(tf.is_gpu_oom);
}

/// TensorFlow's `OOM when allocating tensor` on the CPU device is the host's memory; on a GPU
/// it stays the GPU's.
#[test]
fn tensorflow_oom_on_the_cpu_device_is_the_hosts() {
    let cpu = parse_text(
        "ResourceExhaustedError: OOM when allocating tensor with shape[1024,50257] and type float \
         on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
    );
    assert!(cpu.iter().all(|m| !m.is_gpu_oom), "{cpu:#?}");
    let gpu = one(
        "ResourceExhaustedError: OOM when allocating tensor with shape[1024,50257] and type float \
         on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
    );
    assert!(gpu.is_gpu_oom);
}

/// SGLang's profiled KV-cache budget below zero is its `Not enough memory` failure; a positive
/// one is only its warning.
#[test]
fn sglang_negative_profiled_value_is_its_memory_failure() {
    let negative = one(
        "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value \
         -561981. Use the profiled value instead.",
    );
    assert!(negative.is_gpu_oom);
    assert_eq!(negative.kind, OomKind::SglangMemory);
    let positive = parse_text(
        "[2025-07-02 07:41:59 TP0] max_total_tokens=131072 is larger than the profiled value \
         90112. Use the profiled value instead.",
    );
    assert!(positive.iter().all(|m| !m.is_gpu_oom), "{positive:#?}");
}

/// `oom` in lower case glued to the Chinese verb before it is a report; inside a Latin word it
/// is not.
#[test]
fn lower_case_oom_glued_to_a_chinese_verb_is_a_mention() {
    let got = parse_text(
        "自定义loss进行训练的时候，训练中途报oom错误。\n[rank1]: Traceback (most recent call last):",
    );
    assert!(got.iter().any(|m| m.is_gpu_oom), "{got:#?}");
    let word = parse_text("训练时出现zoom效果");
    assert!(word.iter().all(|m| !m.is_gpu_oom), "{word:#?}");
}
