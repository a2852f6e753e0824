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
