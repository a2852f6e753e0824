//! Unit tests of wordings added in session 42: RMM's `bad_alloc` with its CUDA error cut off,
//! and the caching allocator's warning of a block it could not allocate (PyTorch 2.8 and later).

use super::*;

#[test]
fn rmms_bad_alloc_cut_after_its_path_is_the_gpus() {
    let cut = "MemoryError: std::bad_alloc: CUDA error at: /conda/conda-bld/librmm_1590822440331/\
               work/include/rmm/mr/\n";
    let messages = parse_text(cut);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].is_gpu_oom);
    // Another CUDA error named is that error's, not a memory failure of the GPU.
    let illegal = "MemoryError: std::bad_alloc: CUDA error at: /opt/rmm/include/rmm/mr/device/\
                   managed_memory_resource.hpp:70: cudaErrorIllegalAddress an illegal memory \
                   access was encountered\n";
    assert!(parse_text(illegal)
        .iter()
        .all(|message| !message.is_gpu_oom));
    // A host `bad_alloc` without RMM stays the host's.
    let host = "MemoryError: std::bad_alloc\n";
    assert!(parse_text(host).iter().all(|message| !message.is_gpu_oom));
}

#[test]
fn the_allocators_block_warning_gives_exact_figures() {
    let warning = "[W906 15:02:06.204334026 CUDACachingAllocator.cpp:3934] memory allocation \
                   failed with OOM on device 2 while trying to allocate 1000341504 bytes (free: \
                   916848640, total: 25243287552).\n";
    let messages = parse_text(warning);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    let figures = &messages[0].figures;
    assert_eq!(figures.gpu_index.map(|index| index.0), Some(2));
    assert_eq!(
        figures.tried_to_allocate_bytes.map(|b| b.0),
        Some(1000341504)
    );
    assert_eq!(figures.free_bytes.map(|b| b.0), Some(916848640));
    assert_eq!(figures.total_capacity_bytes.map(|b| b.0), Some(25243287552));
}

#[test]
fn slurms_oom_kill_event_is_the_hosts() {
    let slurm = "slurmstepd-gpu20-15: error: Detected 1 oom-kill event(s) in StepId=9411285.0. \
                 Some of your processes may have been killed by the cgroup out-of-memory handler.\n";
    let messages = parse_text(slurm);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(!messages[0].is_gpu_oom);
    // Not a line that only names the killer's words in passing.
    assert!(parse_text("the oom-kill events are counted by slurm\n")
        .iter()
        .all(|message| !message.is_gpu_oom));
}
