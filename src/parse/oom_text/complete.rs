//! One failure printed twice: a summary line and the allocator's own line, or a rounded size and
//! the exact bytes. The first GPU-OOM message is the one explained; a later message of the same
//! kind on the same device completes its figures:
//!
//! - **exact bytes beat a rounded size.** ggml prints the request rounded to 0.01 MiB by
//!   `ggml_backend_cuda_buffer_type_alloc_buffer` (`allocating 8574.52 MiB on device 3:
//!   cudaMalloc failed: out of memory`, ggml `src/ggml-cuda/ggml-cuda.cu`) and then exact by
//!   `ggml_gallocr_reserve_n`/`alloc_tensor_range` (`failed to allocate CUDA3 buffer of size
//!   8991031296`, `src/ggml-alloc.c`). When a reporter quotes the first line above the log, the
//!   first message has only the rounded figure.
//! - **a size the summary does not print.** ollama relays the runner's last words (`Error: llama
//!   runner process has terminated: error loading model: unable to allocate CUDA0 buffer`,
//!   `llm/server.go`) and its log holds the line with the size.
//! - **what a title cut short leaves out.** A title quotes the message up to its size, the body
//!   pastes it whole: the same size, the other figures from the body. A title `CUDA error: out
//!   of memory` takes its device from ggml's `current device: 0` under the same error.
//!
//! Pure: no I/O.

use super::find;
use crate::model::bytes::GIB;
use crate::model::failure::{OomFigures, OomMessage};
use crate::model::Bytes;

/// The figures of `messages[primary]`, completed from the first later GPU-OOM message of the
/// same kind on the same device (see the module doc). Unchanged when there is none.
pub fn completed_figures(messages: &[OomMessage], primary: usize) -> OomFigures {
    let Some(first) = messages.get(primary) else {
        return OomFigures::default();
    };
    let mut figures = first.figures.clone();
    // The same failure is the same kind of message, or one of another kind (the allocator's
    // whole message under a sentence that quoted its head) asking for exactly the same size.
    let same_size = |message: &OomMessage| {
        first.figures.tried_to_allocate_bytes.is_some()
            && message.figures.tried_to_allocate_bytes == first.figures.tried_to_allocate_bytes
    };
    let later = messages.iter().skip(primary + 1).find(|message| {
        message.is_gpu_oom
            && (message.kind == first.kind || same_size(message))
            && message.figures.tried_to_allocate_bytes.is_some()
            && match (first.figures.gpu_index, message.figures.gpu_index) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    });
    let Some(later) = later else {
        device_of_summary(&mut figures, first, &messages[primary + 1..]);
        return figures;
    };
    let exact = later.figures.tried_to_allocate_bytes;
    match (figures.tried_to_allocate_bytes, exact) {
        (None, Some(_)) if figures == summary_of(&figures) => fill_missing(&mut figures, later),
        (Some(rounded), Some(exact)) if rounded == exact => fill_missing(&mut figures, later),
        (Some(rounded), Some(exact))
            if within_rounding(rounded, exact)
                && printed_exactly(&later.text, exact)
                && !printed_exactly(&first.text, rounded) =>
        {
            figures.tried_to_allocate_bytes = Some(exact);
            fill_missing(&mut figures, later);
        }
        _ => {}
    }
    figures
}

/// The device of a summary without figures, from a later message of its kind that has no
/// size either (`CUDA error: out of memory` in a title, `current device: 0` under the same
/// error in the log).
fn device_of_summary(figures: &mut OomFigures, first: &OomMessage, messages: &[OomMessage]) {
    if figures.gpu_index.is_some() || *figures != OomFigures::default() {
        return;
    }
    figures.gpu_index = messages
        .iter()
        .filter(|message| message.is_gpu_oom && message.kind == first.kind)
        .find_map(|message| message.figures.gpu_index);
}

/// Every figure `figures` lacks, from `later` (the same failure printed whole: a title cut
/// after its size, then the message).
fn fill_missing(figures: &mut OomFigures, later: &OomMessage) {
    let from = &later.figures;
    // A figure derived in `later` stays marked derived only where it is taken from there.
    let taken: Vec<&String> = from
        .derived_fields
        .iter()
        .filter(|name| match name.as_str() {
            "reserved_total_bytes" => figures.reserved_total_bytes.is_none(),
            "reserved_unallocated_bytes" => figures.reserved_unallocated_bytes.is_none(),
            "allocated_by_pytorch_bytes" => figures.allocated_by_pytorch_bytes.is_none(),
            "free_bytes" => figures.free_bytes.is_none(),
            _ => false,
        })
        .collect();
    let fields = [
        (&mut figures.total_capacity_bytes, from.total_capacity_bytes),
        (&mut figures.free_bytes, from.free_bytes),
        (&mut figures.process_in_use_bytes, from.process_in_use_bytes),
        (
            &mut figures.allocated_by_pytorch_bytes,
            from.allocated_by_pytorch_bytes,
        ),
        (
            &mut figures.reserved_unallocated_bytes,
            from.reserved_unallocated_bytes,
        ),
        (&mut figures.reserved_total_bytes, from.reserved_total_bytes),
        (&mut figures.private_pools_bytes, from.private_pools_bytes),
        (&mut figures.allowed_bytes, from.allowed_bytes),
        (
            &mut figures.tried_to_allocate_bytes,
            from.tried_to_allocate_bytes,
        ),
    ];
    for (field, value) in fields {
        if field.is_none() {
            *field = value;
        }
    }
    figures.gpu_index = figures.gpu_index.or(from.gpu_index);
    if figures.other_processes.is_empty() {
        figures.other_processes = from.other_processes.clone();
    }
    for name in taken {
        if !figures.derived_fields.contains(name) {
            figures.derived_fields.push(name.clone());
        }
    }
}

/// The figures a summary line carries at most: the device, nothing measured.
fn summary_of(figures: &OomFigures) -> OomFigures {
    OomFigures {
        gpu_index: figures.gpu_index,
        ..OomFigures::default()
    }
}

/// Whether `rounded` can be `exact` printed with two decimals of MiB or GiB: within 0.005 GiB
/// and 0.1 % of each other.
fn within_rounding(rounded: Bytes, exact: Bytes) -> bool {
    let difference = rounded.get().abs_diff(exact.get());
    difference <= GIB / 200 && difference.saturating_mul(1000) <= exact.get()
}

/// Whether `text` prints `bytes` as an integer (`buffer of size 8991031296`), not a word of a
/// longer number.
fn printed_exactly(text: &str, bytes: Bytes) -> bool {
    let digits = bytes.get().to_string();
    let mut from = 0;
    while let Some(at) = text.get(from..).and_then(|rest| find(rest, &digits)) {
        let start = from + at;
        let end = start + digits.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        if before.is_none_or(|c| !c.is_ascii_digit() && c != '.' && c != ',')
            && after.is_none_or(|c| !c.is_ascii_digit() && c != '.' && c != ',')
        {
            return true;
        }
        from = end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::oom_text::parse_text;

    fn completed(text: &str) -> OomFigures {
        let messages = parse_text(text);
        let primary = messages
            .iter()
            .position(|message| message.is_gpu_oom)
            .unwrap();
        completed_figures(&messages, primary)
    }

    /// ollama issue 7146: the reporter quotes ggml's rounded line above the journal that
    /// holds the exact bytes; ollama issue 8964: the relayed summary has no size.
    #[test]
    fn exact_bytes_and_a_missing_size_come_from_the_same_failure() {
        let quoted = completed("I don't understand why, allocating 8574.52 MiB on device 3: cudaMalloc failed: out of memory.\n\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 8574.52 MiB on device 3: cudaMalloc failed: out of memory\nggml_gallocr_reserve_n: failed to allocate CUDA3 buffer of size 8991031296\nllama_new_context_with_model: failed to allocate compute buffers");
        assert_eq!(quoted.tried_to_allocate_bytes, Some(Bytes(8_991_031_296)));
        assert_eq!(quoted.gpu_index.map(|index| index.0), Some(3));

        let summary = completed("Error: llama runner process has terminated: error loading model: unable to allocate CUDA0 buffer\n\nin the server log:\n\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 28426.68 MiB on device 0: cudaMalloc failed: out of memory");
        assert_eq!(
            summary.tried_to_allocate_bytes,
            Some(Bytes((28426.68f64 * 1048576.0).round() as u64))
        );
        assert_eq!(summary.gpu_index.map(|index| index.0), Some(0));
    }

    /// A later failure on another device, of another size or of another kind is a failure of
    /// its own and lends nothing.
    #[test]
    fn another_failure_lends_nothing() {
        let other_device = completed("Error: llama runner process has terminated: error loading model: unable to allocate CUDA0 buffer\n\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 1024.00 MiB on device 1: cudaMalloc failed: out of memory");
        assert_eq!(other_device.tried_to_allocate_bytes, None);

        let retry = completed("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8574.52 MiB on device 0: cudaMalloc failed: out of memory\nsome other line\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 4287.26 MiB on device 0: cudaMalloc failed: out of memory\nggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 4495515648");
        assert_eq!(
            retry.tried_to_allocate_bytes,
            Some(Bytes((8574.52f64 * 1048576.0).round() as u64))
        );

        let torch = completed("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.00 GiB of which 1.00 MiB is free.\n\nalloc_tensor_range: failed to allocate CUDA0 buffer of size 20971000");
        assert_eq!(torch.tried_to_allocate_bytes, Some(Bytes(20 << 20)));
    }

    /// A title cut after its size, then the message whole; a title naming the error, then
    /// ggml's lines with the device (ollama issue 3405).
    #[test]
    fn a_title_takes_the_rest_from_the_body() {
        let cut = completed("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 6.00 GiB total\n\nthe log:\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 6.00 GiB total capacity; 5.29 GiB already allocated; 0 bytes free; 5.33 GiB reserved in total by PyTorch)");
        assert_eq!(cut.tried_to_allocate_bytes, Some(Bytes(20 << 20)));
        assert_eq!(cut.free_bytes, Some(Bytes(0)));
        assert!(cut.reserved_total_bytes.is_some());

        let title = completed("API server stops responding - CUDA error: out of memory\n\nIn the log:\n```\nCUDA error: out of memory\n  current device: 0, in function alloc at ggml-cuda.cu:532\n  cuMemSetAccess(pool_addr + pool_size, reserve_size, &access, 1)\n```");
        assert_eq!(title.gpu_index.map(|index| index.0), Some(0));

        let other_size = completed("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 6.00 GiB total\n\nRuntimeError: CUDA out of memory. Tried to allocate 40.00 MiB (GPU 0; 6.00 GiB total capacity; 5.29 GiB already allocated; 0 bytes free; 5.33 GiB reserved in total by PyTorch)");
        assert_eq!(other_size.free_bytes, None);
    }

    #[test]
    fn exact_printing_is_a_whole_number() {
        assert!(printed_exactly(
            "buffer of size 8991031296",
            Bytes(8_991_031_296)
        ));
        assert!(!printed_exactly("size 89910312960", Bytes(8_991_031_296)));
        assert!(!printed_exactly("1.8991031296", Bytes(8_991_031_296)));
        assert!(within_rounding(Bytes(8_991_035_884), Bytes(8_991_031_296)));
        assert!(!within_rounding(Bytes(8_991_035_884), Bytes(4_495_515_648)));
    }
}
