//! Unit tests of wordings added in session 55: scientific and rendering codes (RELION, LAMMPS,
//! Blender Cycles, Mitsuba, MATLAB, ArrayFire/Flashlight), vLLM's Mamba state cache too small
//! for `max_num_seqs`, hipBLAS's allocation status, a Vulkan title, Chromium's crashed tab.

use super::*;
use crate::model::failure::{OomKind, OomMessage};
use crate::model::Bytes;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

#[test]
fn relions_custom_allocator_reads_its_request_and_free_space() {
    let text = " Expectation iteration 9\n\
        000/??? sec ~~(,_,\">          [oo]ERROR: CudaCustomAllocator out of memory\n \
        [requestedSpace:             803059200 B]\n \
        [largestContinuousFreeSpace: 524288000 B]\n \
        [totalFreeSpace:             612368384 B]\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(803_059_200))
    );
    assert_eq!(message.figures.free_bytes, Some(Bytes(612_368_384)));
    // The HIP build's twin, with a request that is an overflow.
    let hip = "ERROR: HipCustomAllocator out of memory\n\
        [requestedSpace:             9223372036854775808 B]\n\
        [largestContinuousFreeSpace: 16273066496 B]\n\
        [totalFreeSpace:             16273066496 B]\n";
    let message = first(hip).expect("a message");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(9_223_372_036_854_775_808))
    );
    // Cut after its first size line: still the message, with the request.
    let cut = "ERROR: CudaCustomAllocator out of memory\n [requestedSpace: 803059200 B]\n [larg";
    let message = first(cut).expect("a message");
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(803_059_200))
    );
}

#[test]
fn scientific_and_rendering_codes_wordings_are_gpu_ooms() {
    for text in [
        "ERROR: Insufficient memory on accelerator (src/GPU/gpu_extra.h:38)\n",
        "System is out of GPU and shared host memory\n",
        "Error: System is out of GPU memory\n",
        "Caught a critical exception: cuda_malloc(): out of memory!\n",
        "Out of memory on device. To view more detail about available memory on the GPU, use \
         'gpuDevice()'. If the problem persists, reset the GPU by calling 'gpuDevice(1)'.\n",
        "Error using gpuArray\nThe GPU failed to allocate memory. To continue, reset the GPU by \
         running 'gpuDevice(1)'.\n",
        "terminate called after throwing an instance of 'af::exception'\n  what():  ArrayFire \
         Exception (Device out of memory:101):\n",
    ] {
        let message = first(text).expect("a message");
        assert!(message.is_gpu_oom, "{text}: {message:#?}");
    }
    let drjit = "Caught a critical exception: jit_malloc(): out of memory! Could not allocate 512 \
                 bytes of device memory.\n";
    let message = first(drjit).expect("a message");
    assert_eq!(message.figures.tried_to_allocate_bytes, Some(Bytes(512)));
    // Prose about a GPU's memory is not a message.
    assert!(first("The system is out of GPU budget this quarter, sadly.\n").is_none());
}

#[test]
fn flashlights_report_gives_the_devices_figures() {
    let text = "Failed to allocate memory of size 1.27 GiB (Device: 0, Capacity: 31.74 GiB, \
                Allocated: 29.98 GiB, Cached: 994.36 MiB) with error 'ArrayFire Exception \
                (Device out of memory:101):\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
    let figures = &message.figures;
    assert!(figures.tried_to_allocate_bytes.is_some());
    assert!(figures.total_capacity_bytes.is_some());
    assert!(figures.allocated_by_pytorch_bytes.is_some());
    assert!(figures.reserved_unallocated_bytes.is_some());
    assert_eq!(figures.gpu_index.map(|index| index.get()), Some(0));
}

#[test]
fn vllms_mamba_cache_blocks_below_max_num_seqs_is_the_cache_budget() {
    let text = "(EngineCore_DP0 pid=10078) ValueError: max_num_seqs (1024) exceeds available \
                Mamba cache blocks (969). Each decode sequence requires one Mamba cache block, \
                so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 969 \
                or increase gpu_memory_utilization.\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::VllmNoCacheBlocks);
    assert_eq!(message.details.max_num_seqs, Some(1024));
    assert_eq!(message.details.mamba_cache_blocks, Some(969));
}

#[test]
fn hipblas_allocation_status_is_a_gpu_oom() {
    let text = "RuntimeError: HIPBLAS_STATUS_ALLOC_FAILED when calling `hipblasCreate(handle)`\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
}

#[test]
fn a_vulkan_allocation_failure_titled_with_its_error_is_a_gpu_oom() {
    let text =
        "# Vulkan Memory Allocation Failure on Large Buffer Request (ErrorOutOfDeviceMemory)\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
}

#[test]
fn chromiums_crashed_tab_is_the_hosts_memory() {
    let text = "Aw, Snap! Out of memory when ORT session create started.\n";
    let message = first(text).expect("a message");
    assert!(!message.is_gpu_oom, "{message:#?}");
}
