//! Unit tests of wordings added in session 20: PyTorch's class with its message cut off, cuDNN's
//! status retyped in lower case, the TPU runtime under TensorFlow's older status spelling.
//! Every line is synthetic.

use super::tests::one;
use super::*;

/// A traceback whose paste ends at the class: a PyTorch OOM without figures.
#[test]
fn the_class_alone_at_the_end_of_a_traceback_is_an_oom() {
    let text = "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    \
                y = f(x)\ntorch.OutOfMemoryError:";
    let message = one(text);
    assert!(message.is_gpu_oom);
    assert_eq!(message.figures.tried_to_allocate_bytes, None);
    let prefixed = one("[rank0]: torch.cuda.OutOfMemoryError:");
    assert!(prefixed.is_gpu_oom);
}

/// The class in code is no failure.
#[test]
fn an_except_clause_is_not_an_oom() {
    for text in [
        "except torch.cuda.OutOfMemoryError:",
        "    except torch.OutOfMemoryError:\n        torch.cuda.empty_cache()",
    ] {
        assert!(
            parse_text(text).iter().all(|message| !message.is_gpu_oom),
            "{text}"
        );
    }
}

#[test]
fn cudnns_status_in_lower_case_is_its_allocation_failure() {
    let message = one("RuntimeError cudnn error cudnn_status_alloc_failed");
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::CudnnAlloc);
}

#[test]
fn the_tpu_runtimes_reserve_under_tensorflows_old_spelling_is_xlas() {
    let message = one(
        "2021-11-10 17:01:24.065497: W tensorflow/core/framework/op_kernel.cc:1692] OP_REQUIRES \
         failed at tpu_execute_op.cc:266 : Resource exhausted: Attempting to reserve 5.88G at the \
         bottom of memory. That was not possible. There are 14.74G free, 0B reserve",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::XlaResourceExhausted);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(6_313_601_925))
    );
    assert_eq!(message.figures.free_bytes, Some(Bytes(15_826_954_486)));
    // Another program's reservation words are not XLA's.
    assert!(
        parse_text("Resource exhausted: Attempting to reserve a table at the restaurant")
            .iter()
            .all(|message| !message.is_gpu_oom)
    );
}

/// A guide's heading names a topic, not a failure.
#[test]
fn a_topic_heading_is_not_a_failure() {
    for text in [
        "### CUDA Out of Memory Solutions",
        "CUDA OOM error troubleshooting",
        "Out of memory tips: reduce the batch size",
    ] {
        assert!(parse_text(text).is_empty(), "{text}");
    }
    assert!(!parse_text("CUDA out of memory when training on 2 GPUs").is_empty());
}
