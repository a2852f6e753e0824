//! Unit tests of wordings added in session 53: fairseq's (and Boltz's) skipped batch, the CUDA
//! driver's description of its out-of-memory error, PyTorch 1.0's host allocator.

use super::*;
use crate::model::failure::OomMessage;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

#[test]
fn a_batch_skipped_after_an_oom_is_a_gpu_oom() {
    for text in [
        "| WARNING: ran out of memory, skipping batch\n",
        "Predicting DataLoader 0:   0%|          | 0/1 [00:00<?, ?it/s]| WARNING: ran out of \
         memory, skipping batch\n",
        "WARNING: ran out of memory, skipping batch\n...\nFileNotFoundError: [Errno 2] No such \
         file or directory: 'out/pre_affinity.npz'\n",
    ] {
        let message = first(text).expect("a message");
        assert!(message.is_gpu_oom, "{text}: {message:#?}");
    }
}

#[test]
fn the_cuda_drivers_description_of_its_oom_is_a_gpu_oom() {
    let text = "ManagedCuda.CudaException: ErrorOutOfMemory: The API call failed because it was \
                unable to allocate enough memory to perform the requested operation\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
}

#[test]
fn pytorch_1_0s_host_allocator_is_the_hosts_memory() {
    let text = "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: \
                TorchError { c_error: \"[enforce fail at CPUAllocator.cpp:56] \
                posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0\n";
    let message = first(text).expect("a message");
    assert!(!message.is_gpu_oom, "{message:#?}");
}

#[test]
fn cann_el0004_under_its_bare_code_is_the_devices_memory() {
    let text = "(Worker_TP0 pid=5536) ERROR 11-10 01:25:12 [multiproc_executor.py:671] EL0004: \
                [PID: 5536] 2025-11-10-01:25:11.770.501 Failed to allocate memory.\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
}

#[test]
fn xlas_stream_executor_request_before_its_status_is_read_exactly() {
    let text = "I0000 00:00:1764475170.359463  215300 cuda_executor.cc:533] failed to allocate \
                555.84MiB (582843136 bytes) from device: RESOURCE_EXHAUSTED: : \
                CUDA_ERROR_OUT_OF_MEMORY: out of memory\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(crate::model::Bytes(582_843_136))
    );
}

#[test]
fn a_titles_figureless_quote_gives_way_to_the_message_pasted_below() {
    let text = "# Llama fails to install Error allocating memory ErrorOutOfDeviceMemory\n\n\
                OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a \
                total capacty of 5.80 GiB of which 17.12 MiB is free.\n";
    let messages = parse_text(text);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].line, 3);
    assert_eq!(
        messages[0].figures.tried_to_allocate_bytes,
        Some(crate::model::Bytes(20 * 1024 * 1024))
    );
    // A raw CUDA error in the title stays over another failure below it.
    let raw = "# CUDA_ERROR_OUT_OF_MEMORY: out of memory Deepmd-kit V3.0.1\n\nlog\n\
               RuntimeError: CUDA error: an illegal memory access was encountered\n";
    let first = first(raw).expect("a message");
    assert!(first.is_gpu_oom, "{first:#?}");
}

#[test]
fn ggml_metals_named_buffer_of_2023_is_a_gpu_oom_with_its_size() {
    let text = "ggml_metal_add_buffer: error: failed to allocate 'data            ' buffer, size \
                = 19283.21 MiB\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        crate::parse::oom_text::size::parse_size("19283.21 MiB")
    );
}
