//! Unit tests of wordings added in session 14: retyped and shouted messages, the reporter's
//! words for the allocator's error, guesses that are not reports, and the kills that are the
//! host's memory. Every line is synthetic.

use super::tests::{mib, one};
use super::*;

/// PyTorch's sentence retyped with an article slipped in keeps its figure.
#[test]
fn a_retyped_message_with_an_article_is_still_the_allocators() {
    let message = one("RuntimeError: CUDA out of the memory. Tried to allocate 128.00 MiB");
    assert!(message.is_gpu_oom);
    assert_eq!(message.figures.tried_to_allocate_bytes, mib(128.0));
}

/// `CUDA OUT OF MEMORY` written in capitals in a sentence, and `a CUDA memory error`.
#[test]
fn shouted_and_named_device_errors_are_mentions() {
    for text in [
        "训练模型时，控制台显示CUDA OUT OF MEMORY，怎么办",
        "When I start the app it fails with CUDA OUT OF MEMORY",
        "the app starts but then stops because of a CUDA memory error.",
        "Got a GPU memory error when the second model loads",
    ] {
        let messages = parse_text(text);
        assert_eq!(messages.len(), 1, "{text}: {messages:#?}");
        assert!(messages[0].is_gpu_oom, "{text}");
    }
    // Not advice, and not the host's memory.
    for text in [
        "to avoid a CUDA memory error, lower the batch size",
        "a GPU memory error or a RAM shortage, not sure",
    ] {
        assert!(
            parse_text(text).iter().all(|m| !m.is_gpu_oom),
            "{text}: {:#?}",
            parse_text(text)
        );
    }
}

/// A reply's guess (`probably an OOM`, checked with `dmesg`) is not a report of a GPU OOM.
#[test]
fn a_guess_at_an_oom_is_not_a_report() {
    for text in [
        "There's probably an OOM here. Check the log for this error.",
        "Maybe OOM? Please run dmesg and look for the error.",
        "Check with `dmesg -T` whether an OOM occurred after this error.",
    ] {
        assert!(
            parse_text(text).iter().all(|m| !m.is_gpu_oom),
            "{text}: {:#?}",
            parse_text(text)
        );
    }
    assert!(one("The A100 run OOMs at step 10 with this error.").is_gpu_oom);
}

/// PyTorch's DataLoader reports a worker killed by SIGKILL: the host's kill.
#[test]
fn a_dataloader_worker_killed_by_sigkill_is_the_hosts() {
    let message = one("RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.");
    assert!(!message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::KilledBySignal);
    // A bus error is the shared-memory case, not this.
    assert!(
        parse_text("DataLoader worker (pid 4242) is killed by signal: Bus error.")
            .iter()
            .all(|m| m.kind != OomKind::KilledBySignal)
    );
}

/// A title naming an OOM, then a JAX traceback cut before its message: the job ran on an
/// accelerator, so the title's OOM is the accelerator's.
#[test]
fn a_title_oom_over_a_jax_traceback_is_a_gpu_oom() {
    let text = "OOM with gradient accumulation\n\nTraceback (most recent call last):\n  File \"/opt/app/train.py\", line 10, in main\n    step = jax.jit(train_step)\n  File \"/usr/lib/python3/site-packages/jax/_src/pjit.py\", line 200, in compile\n    return lowered.compile()\n";
    let messages = parse_text(text);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].is_gpu_oom);
}

/// The reporter's words, then vLLM's warm-up error, then the allocator's message it wraps: the
/// words give way, and the warm-up error (the first GPU failure) has the allocator's figures.
#[test]
fn a_mention_gives_way_to_a_held_warmup_error() {
    let text = "It always fails with some CUDA memory error.\n\nRuntimeError: CUDA out of memory occurred when warming up sampler with 128 dummy requests.\n\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 7.50 GiB of which 20.00 MiB is free. Of the allocated memory 6.00 GiB is allocated by PyTorch, and 10.00 MiB is reserved by PyTorch but unallocated.\n";
    let messages = parse_text(text);
    assert_eq!(messages[0].kind, OomKind::VllmWarmupOom, "{messages:#?}");
    assert_eq!(messages[0].figures.tried_to_allocate_bytes, mib(64.0));
}

/// A title quoting PyTorch's class and the device's words without the message keeps the class.
#[test]
fn a_mention_quoting_torchs_class_keeps_it() {
    let message = one("nn/functional.py torch.OutOfMemoryError: HIP out of memory");
    assert!(message.is_gpu_oom);
    assert_eq!(message.exception.as_deref(), Some("torch.OutOfMemoryError"));
    assert_eq!(one("GPU OOM when training with two cards").exception, None);
}

/// The allocation statuses of the other CUDA libraries, OpenCV's CUDA error, RMM's device pool
/// and MindSpore's device allocator are GPU OOMs (synthetic lines in each library's wording).
#[test]
fn library_allocation_failures_are_gpu_ooms() {
    for text in [
        "RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED",
        "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`",
        "cupy_backends.cuda.libs.cusparse.CuSparseError: CUSPARSE_STATUS_ALLOC_FAILED",
        "curand error: CURAND_STATUS_ALLOCATION_FAILED",
        "cv2.error: OpenCV(4.8.0) /src/modules/core/src/cuda/gpu_mat.cu:116: error: (-217:Gpu API call) out of memory in function 'allocate'",
        "MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/env/include/rmm/mr/device/pool_memory_resource.hpp:200: Maximum pool size exceeded",
        // `RMM_CUDA_TRY_ALLOC`, the CUDA error text cut by the paste (session 29, cuML UMAP).
        "MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /env/include/rmm/mr/device/cuda_memory_resource.hpp",
    ] {
        let message = one(text);
        assert!(message.is_gpu_oom, "{text}: {message:#?}");
    }
    let mindspore = one("RuntimeError: Device(id:1) memory isn't enough and alloc failed, kernel name: Default/Conv2D-op7, alloc size: 536870912B.");
    assert!(mindspore.is_gpu_oom);
    assert_eq!(mindspore.figures.tried_to_allocate_bytes, mib(512.0));
    assert_eq!(
        mindspore.figures.gpu_index,
        Some(crate::model::gpu::CudaOrdinal(1))
    );
    // The host's side of each stays the host's.
    for text in [
        "RuntimeError: Memory isn't enough and alloc failed, kernel name: Default/Add-op1, alloc size: 64B.",
        "MemoryError: std::bad_alloc",
    ] {
        assert!(parse_text(text).iter().all(|m| !m.is_gpu_oom), "{text}");
    }
}

/// A title naming an out-of-memory on a network's backward pass is a GPU job's.
#[test]
fn out_of_memory_on_the_backward_pass_is_a_gpu_oom() {
    let messages = parse_text(
        "Fine-tuning runs out of memory on the backward pass of epoch 3\n\nLoading data: 100%\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].is_gpu_oom);
    let host = parse_text("Training runs out of memory on the backward pass, RAM usage climbs\n");
    assert!(host.iter().all(|m| !m.is_gpu_oom), "{host:#?}");
}

/// llama.cpp's `--mlock` warning names errno 12 but is the lock limit, not a failure.
#[test]
fn an_mlock_warning_is_not_a_host_oom() {
    let text = "warning: failed to mlock 268435456-byte buffer (after previously locking 0 bytes): Cannot allocate memory\nTry increasing RLIMIT_MEMLOCK ('ulimit -l' as root).\n";
    assert!(parse_text(text).is_empty(), "{:#?}", parse_text(text));
    assert!(!one("OSError: [Errno 12] Cannot allocate memory").is_gpu_oom);
}
