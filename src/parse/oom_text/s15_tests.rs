//! Unit tests of wordings added in session 15: engines' refusals in their own words.
//! Every line is synthetic.

use super::tests::one;
use super::*;

/// TensorRT-LLM's KV-cache manager: the blocks that fit cannot hold one sequence.
#[test]
fn tensorrt_llm_paged_kv_cache_too_small_for_one_sequence_is_a_gpu_oom() {
    for text in [
        "[TensorRT-LLM][ERROR] maxTokensInPagedKvCache (2048) must be large enough to process \
         at least 1 sequence to completion (i.e. must be larger than beam_width (1) * \
         tokensPerBlock (64) * maxBlocksPerSeq (64))",
        "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: maxTokensInPagedKvCache must be \
         large enough to process at least 1 sequence to completion",
    ] {
        let message = one(text);
        assert!(message.is_gpu_oom, "{text}: {message:#?}");
    }
    // The option named in a sentence is not a failure.
    assert!(
        parse_text("set maxTokensInPagedKvCache to 4096 in the config")
            .iter()
            .all(|m| !m.is_gpu_oom)
    );
}

/// Ray re-raises a task's OutOfMemoryError as `RayTaskError(OutOfMemoryError)`: a GPU OOM, which
/// the worker's own message (when pasted) replaces.
#[test]
fn a_ray_task_error_of_an_out_of_memory_error_is_a_gpu_oom() {
    let message = one(
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::Worker.run_step() (pid=4321, \
         ip=10.1.2.3, actor_id=abc)",
    );
    assert!(message.is_gpu_oom, "{message:#?}");
    let messages = parse_text(
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::Trainer.fit() (pid=77)\n\
         Traceback (most recent call last):\n\
         torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a \
         total capacity of 23.64 GiB of which 10.81 MiB is free.\n",
    );
    assert!(messages.iter().any(
        |m| m.is_gpu_oom && m.figures.tried_to_allocate_bytes == Some(Bytes(64 * 1024 * 1024))
    ));
    // Another class wrapped is not this.
    assert!(
        parse_text("ray.exceptions.RayTaskError(ValueError): ray::f() (pid=1)")
            .iter()
            .all(|m| !m.is_gpu_oom)
    );
}

/// The TPU runtime's refusal without its `Error allocating device buffer:` head keeps its
/// figures; a sentence that only says `Attempting to allocate` is not it.
#[test]
fn tpu_runtime_attempting_to_allocate_without_its_head_keeps_its_figures() {
    let message = one(
        "RuntimeError: RESOURCE_EXHAUSTED: Attempting to allocate 12.50M. That was not \
         possible. There are 40.25M free. Due to fragmentation, the largest contiguous region \
         of free memory is 10.00M.; (0x0x0_HBM0)",
    );
    assert!(message.is_gpu_oom, "{message:#?}");
    assert_eq!(message.kind, OomKind::XlaResourceExhausted);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes((12.5 * 1024.0 * 1024.0) as u64))
    );
    assert_eq!(
        message.figures.free_bytes,
        Some(Bytes((40.25 * 1024.0 * 1024.0) as u64))
    );
    assert!(
        parse_text("INFO: Attempting to allocate the KV pool on startup")
            .iter()
            .all(|m| !m.is_gpu_oom)
    );
}
