//! Unit tests of wordings added in session 39 (helper c): PyTorch's expandable-segment mapping
//! warning, read with its figures and held below any out-of-memory error of the same text.

use super::*;
use crate::model::failure::OomKind;
use crate::model::gpu::CudaOrdinal;
use crate::model::Bytes;

/// SimpleTuner issue 3176: the warning alone, its four figures in bytes.
#[test]
fn the_expandable_segment_warning_gives_its_figures() {
    let messages = parse_text(
        "[W831 10:32:25.255074645 CUDACachingAllocator.cpp:508] expandable_segments: memory \
         mapping failed with OOM on device 0 while trying to map 20971520 bytes (free: 15663104, \
         total: 33671348224).\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    let figures = &messages[0].figures;
    assert!(messages[0].is_gpu_oom);
    assert_eq!(figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(figures.tried_to_allocate_bytes, Some(Bytes(20_971_520)));
    assert_eq!(figures.free_bytes, Some(Bytes(15_663_104)));
    assert_eq!(figures.total_capacity_bytes, Some(Bytes(33_671_348_224)));
}

/// A `[rank0]:` log wrapped after `expandable_segments:` and before the figures; a release
/// that prints it without the prefix, wrapped once.
#[test]
fn the_wrapped_warning_is_read_whole() {
    let messages = parse_text(
        "[rank0]:[W905 00:28:47 CUDACachingAllocator.cpp:508] expandable_segments:\n\
         memory mapping failed with OOM on device 2 while trying to map 20971520 bytes\n\
         (free: 4521984, total: 101971460096)\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].figures.gpu_index, Some(CudaOrdinal(2)));
    assert_eq!(messages[0].figures.free_bytes, Some(Bytes(4_521_984)));
    assert_eq!(
        messages[0].figures.total_capacity_bytes,
        Some(Bytes(101_971_460_096))
    );
    let messages = parse_text(
        "CUDACachingAllocator.cpp:528] memory mapping failed with OOM on device 1\n\
         while trying to map 20971520 bytes (free: 13107200, total: 68099571712)\n\
         Epoch 3: loss 0.41\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].figures.gpu_index, Some(CudaOrdinal(1)));
    assert_eq!(
        messages[0].figures.tried_to_allocate_bytes,
        Some(Bytes(20_971_520))
    );
    assert!(!messages[0].text.contains("Epoch"), "{messages:#?}");
}

/// The allocator recovers from the warning, or raises its own error after it: that error,
/// not the warning, is the failure.
#[test]
fn the_warning_gives_way_to_the_allocator_error() {
    let messages = parse_text(
        "[W831 10:32:25 CUDACachingAllocator.cpp:508] expandable_segments: memory mapping failed \
         with OOM on device 3 while trying to map 20971520 bytes (free: 15663104, total: \
         33671348224).\n\
         Traceback (most recent call last):\n\
         \x20 File \"train.py\", line 10, in <module>\n\
         torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a \
         total capacity of 31.36 GiB of which 14.94 MiB is free.\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].kind, OomKind::PytorchTotalCapacity);
    // After the error, a later warning adds nothing.
    let messages = parse_text(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a \
         total capacity of 31.36 GiB of which 14.94 MiB is free.\n\
         [W831 10:32:29 CUDACachingAllocator.cpp:508] expandable_segments: memory mapping failed \
         with OOM on device 3 while trying to map 20971520 bytes (free: 15663104, total: \
         33671348224).\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].kind, OomKind::PytorchTotalCapacity);
    // The allocator's setting named in advice is no warning.
    let messages =
        parse_text("Try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to map memory.");
    assert!(
        messages.iter().all(|m| m.figures.free_bytes.is_none()),
        "{messages:#?}"
    );
}

/// ollama issue (qwen3-vl:235b): ollama's refusal capitalised at the head of the reporter's
/// quote is still ollama's GPU-memory refusal; other words about a layout are not.
#[test]
fn ollama_layout_refusal_capitalised_is_read() {
    let messages = parse_text(
        "We hope to deploy the model locally, but now we are encountering the issue of \
         \"Memory layout cannot be allocated\".\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].is_gpu_oom);
    assert_eq!(
        messages[0].engine_hint,
        Some(crate::model::failure::EngineName::Ollama)
    );
    let messages = parse_text("Memory layout of the struct cannot change between versions.\n");
    assert!(messages.iter().all(|m| !m.is_gpu_oom), "{messages:#?}");
}

/// ollama issue (llama3.3 70b, 96k context): ggml's CUDA error pasted double-spaced keeps its
/// device; a blank line and an unrelated line after the error still end it.
#[test]
fn ggml_cuda_error_double_spaced_keeps_its_device() {
    let messages = parse_text(
        "CUDA error: out of memory\n\n  current device: 2, in function alloc at \
         ggml-cuda.cu:445\n\n  cuMemCreate(&handle, reserve_size, &prop, 0)\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].figures.gpu_index, Some(CudaOrdinal(2)));
    let messages = parse_text("CUDA error: out of memory\n\nEpoch 2 device: 3 started\n");
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].figures.gpu_index, None);
}
