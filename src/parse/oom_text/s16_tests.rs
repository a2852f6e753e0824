//! Unit tests of wordings added in session 16: GPU OOMs named in titles and a Mac's own
//! allocator refusal. Every line is synthetic.

use super::tests::one;
use super::*;

/// PyTorch's MPS allocator refuses a buffer larger than the device's `maxBufferLength`: a GPU
/// OOM whose size is the request; a bare count of another program's buffer is not.
#[test]
fn mps_invalid_buffer_size_is_a_gpu_oom_with_its_request() {
    let message = one("RuntimeError: Invalid buffer size: 5.25 GB");
    assert!(message.is_gpu_oom, "{message:#?}");
    assert_eq!(message.kind, OomKind::MpsOutOfMemory);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes((5.25 * 1024.0 * 1024.0 * 1024.0) as u64))
    );
    for text in [
        "E/AudioTrack: Invalid buffer size: 4096",
        "warning: Invalid buffer size: -1, using the default",
    ] {
        assert!(parse_text(text).iter().all(|m| !m.is_gpu_oom), "{text}");
    }
}

/// llama.cpp's `unable to allocate CUDA0 buffer` retyped with a capital in a title is its
/// failure; numpy's host `Unable to allocate … for an array` is not a GPU OOM.
#[test]
fn a_title_unable_to_allocate_a_gpu_buffer_is_a_gpu_oom() {
    let message = one("Unable to allocate ROCm0 buffer after the update to 0.9");
    assert!(message.is_gpu_oom, "{message:#?}");
    let host = parse_text(
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 2.50 GiB for an array \
         with shape (1000, 335544) and data type float64",
    );
    assert!(host.iter().all(|m| !m.is_gpu_oom), "{host:#?}");
    assert!(parse_text("Unable to allocate CPU buffer")
        .iter()
        .all(|m| !m.is_gpu_oom));
}

/// PyTorch's OOM class quoted as code in a title, the quote closing it: a mention.
#[test]
fn a_quoted_torch_oom_class_in_a_title_is_a_mention() {
    let messages = parse_text("server fails on startup with `torch.cuda.OutOfMemoryError`");
    assert!(messages.iter().any(|m| m.is_gpu_oom), "{messages:#?}");
    // Advice to catch it is not a report.
    let advice = parse_text("you should handle 'torch.OutOfMemoryError' in the loop");
    assert!(advice.iter().all(|m| !m.is_gpu_oom), "{advice:#?}");
}

/// The bare class in a title is held until the lines after it show GPU work (a TGI launcher's
/// log); Java's class, or no GPU work after it, is not a GPU OOM.
#[test]
fn a_bare_oom_class_in_a_title_needs_gpu_work_after_it() {
    let text = "OutOfMemoryError with a 13b model on two cards\n\
                2024-01-01T00:00:00Z  INFO text_generation_launcher: Starting download process.\n\
                2024-01-01T00:00:01Z  INFO download: text_generation_launcher: Successfully \
                downloaded weights.\n";
    let messages = parse_text(text);
    assert!(messages.iter().any(|m| m.is_gpu_oom), "{messages:#?}");
    let alone = parse_text("OutOfMemoryError when indexing the documents\nthe index has 3M rows\n");
    assert!(alone.iter().all(|m| !m.is_gpu_oom), "{alone:#?}");
    let java = parse_text(
        "java.lang.OutOfMemoryError in the spark driver\nINFO text_generation_launcher: up\n",
    );
    assert!(java.iter().all(|m| !m.is_gpu_oom), "{java:#?}");
}
