//! Unit tests of wordings added in session 32: TensorRT's plugin scratch space, Xinference's
//! model actor and Detectron2's retry on the CPU. Every line is synthetic.

use super::tests::one;

#[test]
fn tensorrts_plugin_scratch_space_is_the_gpus_with_both_sizes() {
    let message = one(
        "[01/08/2024-17:57:31] [TRT] [E] 4: [pluginV2Builder.cpp::makeRunner::519] Error Code 4: \
         Internal Error (Internal error: plugin node model/layers/0/mlp/PLUGIN_V2_MoE_0 requires \
         2547452477568 bytes of scratch space, but only 84987740160 is available. Try increasing \
         the workspace size with IBuilderConfig::setMemoryPoolLimit().",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.tried_to_allocate_bytes.map(|b| b.get()),
        Some(2_547_452_477_568)
    );
    assert_eq!(
        message.figures.free_bytes.map(|b| b.get()),
        Some(84_987_740_160)
    );
}

#[test]
fn an_apps_words_for_a_gpu_oom_it_caught() {
    for line in [
        "2024-01-18 21:27:53,300 xinference.core.model 35043 ERROR    Model actor is out of \
         memory.",
        "[04/19 09:58:05 d2.utils.memory]: Attempting to copy inputs of <function \
         paste_masks_in_image at 0x7fcfef44fef0> to CPU due to CUDA OOM",
    ] {
        assert!(one(line).is_gpu_oom, "{line}");
    }
}

#[test]
fn a_dataloader_worker_killed_names_its_pid() {
    let message = one("RuntimeError: DataLoader worker (pid 34801) is killed by signal: Killed.");
    assert!(!message.is_gpu_oom);
    assert_eq!(message.details.killed_pid, Some(34801));
}

/// PyTorch 2.x's MPS allocator prints the refused size in binary units (`Invalid buffer size:
/// 437.81 GiB`, transformers' `caching_allocator_warmup` on a Mac): the same GPU OOM of one
/// request as with the older `GB`.
#[test]
fn mps_invalid_buffer_size_in_binary_units() {
    let messages = crate::parse::oom_text::parse_text(
        "then got the error message: \"RuntimeError: Invalid buffer size: 437.81 GiB\"",
    );
    let message = messages.iter().find(|m| m.is_gpu_oom).expect("a GPU OOM");
    assert_eq!(message.kind, crate::model::failure::OomKind::MpsOutOfMemory);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        // 437.81 × 2^30 = 470,094,907,965.44, rounded.
        Some(crate::model::bytes::Bytes(470_094_907_965))
    );
}

/// NCCL's own warning of a failed device allocation, relayed by PyTorch under `Last error:`
/// with no `Cuda failure 'out of memory'` line before it, is a GPU OOM of that request.
#[test]
fn nccls_failed_calloc_relayed_alone_is_a_gpu_oom() {
    let text = "  torch.distributed.DistBackendError: NCCL error in: \
                ../torch/csrc/distributed/c10d/NCCLUtils.hpp:340, unhandled cuda error (run with \
                NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n  \
                ncclUnhandledCudaError: Call to CUDA function failed.\n  Last error:\n  \
                Failed to CUDA calloc 8388608 bytes\n";
    let messages = crate::parse::oom_text::parse_text(text);
    let message = messages.iter().find(|m| m.is_gpu_oom).expect("a GPU OOM");
    assert_eq!(
        message.kind,
        crate::model::failure::OomKind::NcclCudaFailure
    );
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(crate::model::bytes::Bytes(8_388_608))
    );
    // A sentence about it is no message.
    let words = crate::parse::oom_text::parse_text("Failed to CUDA-enable the build on Windows");
    assert!(words.iter().all(|m| !m.is_gpu_oom), "{words:#?}");
}
