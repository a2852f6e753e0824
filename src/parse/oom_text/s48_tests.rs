//! Unit tests of wordings added in session 48: an OOM encountered in lower case, PyTorch's class
//! as the object of a verb, `memory` mistyped after `out of`, and the card's `GPU RAM`.

use super::*;
use crate::model::failure::OomMessage;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

fn gpu(text: &str) -> bool {
    first(text).is_some_and(|message| message.is_gpu_oom)
}

#[test]
fn an_oom_encountered_is_a_report() {
    assert!(gpu(
        "I tested the model on videoMME using a 4-card GPU with 96GB video memory and \
         encountered oom. I only loaded 20 weight files before encountering oom\n"
    ));
    // Advice and a negation stay what they are.
    assert!(!gpu("If you encounter OOM, reduce the batch size\n"));
    assert!(!gpu(
        "we did not encounter oom with the same configuration\n"
    ));
}

#[test]
fn the_class_as_the_object_of_a_verb_is_a_report() {
    assert!(gpu(
        "I am trying to do video inference using Nvidia 4090 under Sa2VA-1B config, but got \
         OutOfMemoryError.\n"
    ));
    assert!(!gpu("If you get OutOfMemoryError, lower the batch\n"));
}

#[test]
fn memory_mistyped_after_out_of_is_memory() {
    for typo in [
        "they both out of mermory using 8*4090.\n",
        "CUDA out of memoty when training\n",
        "GPU out of memery on the second step\n",
    ] {
        assert!(gpu(typo), "{typo}");
    }
    // Other words after `out of` are not.
    assert!(!gpu("GPU out of members\n"));
    assert!(!gpu("GPU ran out of memes\n"));
}

#[test]
fn the_cards_ram_is_not_the_hosts() {
    assert!(gpu(
        "# OOM error where ~50% of the GPU RAM cannot be utilised/reserved\n"
    ));
    assert!(!gpu("OOM error, the RAM is full\n"));
}

#[test]
fn a_figure_printed_in_full_before_the_cut_is_read() {
    // The ≤2.0 message cut where a paste or an index ends: after `free;`, then after `total
    // capacity;`, then inside the figure's own digits (`6.7` of `6.79 GiB`, not read).
    const HEAD: &str =
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.92 \
                        GiB total capacity; ";
    let figures = |tail: &str| {
        first(&format!("{HEAD}{tail}\n"))
            .expect("the cut message")
            .figures
    };
    let reserved = figures("6.78 GiB already allocated; 24.44 MiB free; 6.79 GiB reser");
    assert_eq!(reserved.reserved_total_bytes, Some(Bytes(7_290_706_985)));
    let allocated = figures("12.91 GiB a");
    assert_eq!(
        allocated.allocated_by_pytorch_bytes,
        Some(Bytes(13_862_006_948))
    );
    let cut = figures("6.78 GiB already allocated; 24.44 MiB free; 6.7");
    assert_eq!(cut.reserved_total_bytes, None);
}

#[test]
fn gpu_memory_overflowing_with_an_adverb_is_a_report() {
    assert!(gpu("3090的24GB显存会溢出呢\n"));
    assert!(gpu("显存直接爆了\n"));
    assert!(!gpu("显存不会溢出\n"));
    assert!(!gpu("显存会占用很多\n"));
}

#[test]
fn tcmallocs_large_alloc_is_the_hosts() {
    assert!(!gpu(
        "Hi, I'm currently using the GAN on Colab, but I'm running out of memory. Colab warns: \
         _tcmalloc: large alloc 2617409536 bytes_\n"
    ));
}

#[test]
fn tensorrts_skipped_tactic_names_its_buffer() {
    let message = first(
        "[W] Skipping tactic 0x0000000000000000 due to exception autotuning: CUDA error 2 \
         allocating 2147747325-byte buffer: out of memory\n",
    )
    .expect("the builder's warning");
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(2_147_747_325))
    );
}
