//! Unit tests of wordings added in session 31: RMM's message with its size first (and XGBoost's
//! figures under RMM's), CatBoost's GPU memory pool, ComfyUI's malloc-async dialog pasted with
//! blank lines and joined labels. Every line is synthetic.

use super::tests::one;
use super::*;

#[test]
fn rmms_size_first_message_is_the_gpus() {
    let message = one(
        "MemoryError: std::bad_alloc: out_of_memory: CUDA error (failed to allocate 88577278284 \
         bytes) at: /opt/conda/include/rmm/mr/device/cuda_memory_resource.hpp:62: \
         cudaErrorMemoryAllocation out of memory",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.tried_to_allocate_bytes.map(|b| b.get()),
        Some(88_577_278_284)
    );
}

#[test]
fn xgboosts_figures_under_rmms_message() {
    let messages = parse_text(
        "Memory allocation error on worker 0: std::bad_alloc: out_of_memory: RMM failure \
         at:/usr/include/rmm/mr/device/arena_memory_resource.hpp:171: Maximum pool size exceeded \
         (failed to allocate 5.985840 GiB): No room in arena.\n- Free memory: 1.95398GB\n\
         - Requested memory: 5.98584GB\n\nAdditional Context:\n",
    );
    assert_eq!(messages.len(), 1);
    let figures = &messages[0].figures;
    assert!(messages[0].is_gpu_oom);
    // RMM's exact request, XGBoost's free memory (HumanMemUnit: GB = 2^30).
    assert_eq!(
        figures.tried_to_allocate_bytes.map(|b| b.get()),
        Some(6_427_246_760)
    );
    assert_eq!(figures.free_bytes.map(|b| b.get()), Some(2_098_070_049));
}

#[test]
fn catboosts_pool_names_request_and_free() {
    let message = one(
        "_catboost.CatBoostError: (NCudaLib::TOutOfMemoryError) /src/catboost/catboost/cuda/\
         cuda_lib/memory_pool/stack_like_memory_pool.h:303: Error: Out of memory. Requested 8880 \
         MB; Free 5902.061425 MB",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.tried_to_allocate_bytes.map(|b| b.get()),
        Some(8880 << 20)
    );
    assert_eq!(
        message.figures.free_bytes.map(|b| b.get()),
        Some(6_188_759_961)
    );
}

#[test]
fn a_malloc_async_dialog_pasted_with_blank_lines() {
    let messages = parse_text(
        "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory.\n\n\
         (out of memory)Currently allocated     : 3.21 GiB\n\nRequested               : 1.53 GiB\n\n\
         Device limit            : 8.00 GiB\n\nFree (according to CUDA): 0 bytes\n\n\
         This error means you ran out of memory on your GPU.\n",
    );
    assert_eq!(messages.len(), 1);
    let figures = &messages[0].figures;
    assert_eq!(figures.total_capacity_bytes.map(|b| b.get()), Some(8 << 30));
    assert_eq!(figures.free_bytes.map(|b| b.get()), Some(0));
    assert!(figures.tried_to_allocate_bytes.is_some());
    assert!(figures.allocated_by_pytorch_bytes.is_some());
    // Two blank lines end it.
    let messages = parse_text(
        "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory.\n\n\n\
         Requested               : 1.53 GiB\n",
    );
    assert!(messages[0].figures.tried_to_allocate_bytes.is_none());
}
