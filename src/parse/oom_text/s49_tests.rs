//! Unit tests of wordings added in session 49: PyTorch's class line cut a few letters into its
//! message, TensorFlow's op status cut before `tensor`, ggml's buffer named without its size,
//! ggml-vulkan's allocation limit, and TensorFlow's class as the object of a verb.

use super::*;
use crate::model::failure::OomMessage;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

fn gpu(text: &str) -> bool {
    first(text).is_some_and(|message| message.is_gpu_oom)
}

#[test]
fn pytorchs_class_line_cut_into_its_message_is_the_devices() {
    for line in [
        "torch.cuda.OutOfMemoryError: Allocatio\n",
        "torch.OutOfMemoryError: CUDA out of me\n",
        "torch.OutOfMemoryError:\n",
        "    torch.OutOfMemoryError: HIP out\n",
    ] {
        assert!(gpu(line), "{line}");
    }
    // A message in other words is not cut, and the class in prose is not its line.
    assert!(!gpu(
        "torch.OutOfMemoryError: something unrelated happened here\n"
    ));
    assert!(!gpu("I think torch.OutOfMemoryError: is raised\n"));
}

#[test]
fn tensorflows_status_cut_before_its_tensor() {
    let text = "OP_REQUIRES failed at random_op.cc:77 : Resource exhausted: OOM when allocating\n";
    assert!(gpu(text));
    assert!(gpu("ResourceExhaustedError: OOM when allocating ten\n"));
    // The words alone in prose are no status.
    assert!(!gpu(
        "see the section about OOM when allocating in the docs\n"
    ));
}

#[test]
fn ggmls_buffer_named_without_its_size() {
    assert!(gpu(
        "# [gfx1151] failed to allocate ROCm0 buffer of size > b1240\n"
    ));
    // The host's pinned buffer is not the card's.
    assert!(!gpu("failed to allocate CUDA_Host buffer\n"));
}

#[test]
fn ggml_vulkans_allocation_limit_is_the_devices() {
    assert!(gpu(
        "# Eval bug: Vulkan: \"Requested buffer size exceeds device memory allocation limit\" \
         even with `-ngl 0`\n"
    ));
}

#[test]
fn tensorflows_class_after_advice_is_no_report() {
    // (The report itself is held until GPU work shows: analyze::phase::s49_tests.)
    assert!(!gpu("If you get ResourceExhaustedError, lower the batch\n"));
}

#[test]
fn an_oom_had_is_a_report() {
    assert!(gpu("Also having oom problems, even when using --t5_cpu.\n"));
    assert!(gpu("I have OOM when the batch is 8\n"));
    assert!(!gpu("we never had oom with the old version\n"));
}

#[test]
fn gpu_memory_with_its_character_typed_twice() {
    assert!(gpu(
        "GPU 4090：使用界面 gradio/t2v_1.3B_singleGPU.py 生成一个 480*832的视频， steps 50/50后显示显存存不够用\n"
    ));
}
