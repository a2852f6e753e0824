//! GPU memory failures of scientific and rendering codes that print neither a framework's
//! nor the CUDA runtime's wording: cryo-EM refinement, molecular dynamics, path tracers,
//! MATLAB's GPU arrays and ArrayFire's (under Flashlight).
//!
//! Sources (wording as the code builds it):
//! * RELION `src/acc/cuda/custom_allocator.cuh` (and its HIP twin `src/acc/hip/
//!   custom_allocator.hpp`, 3.1–5.0): `CudaCustomAllocator out of memory` (`HipCustomAllocator
//!   …`, older `cudaCustomAllocator …`), then `[requestedSpace: N B]`,
//!   `[largestContinuousFreeSpace: N B]` and `[totalFreeSpace: N B]` on their own lines, and
//!   `ERROR: You ran out of memory on the GPU(s).` with its advice on MPI ranks per GPU.
//! * LAMMPS `src/GPU/gpu_extra.h` (`gpu_ready`, the GPU package's device init status -3):
//!   `ERROR: Insufficient memory on accelerator (src/GPU/gpu_extra.h:38)`.
//! * Blender Cycles `intern/cycles/device/cuda/device_impl.cpp` (and the HIP, OptiX and Metal
//!   devices after it): `set_error("System is out of GPU and shared host memory")` when a
//!   buffer could go neither on the device nor to mapped host memory, `System is out of GPU
//!   memory` when host mapping is off.
//! * Mitsuba 2's Enoki (`enoki/src/cuda/common.cpp` `cuda_malloc`: `cuda_malloc(): out of
//!   memory!`) and Mitsuba 3's Dr.Jit (`drjit-core/src/malloc.cpp` `jitc_malloc`:
//!   `jit_malloc(): out of memory! Could not allocate %zu bytes of device memory.`), as the
//!   renderer prints them after `Caught a critical exception:`.
//! * MATLAB's Parallel Computing Toolbox (`parallel.gpu` errors, as `gpuArray` and the Deep
//!   Learning Toolbox raise them): `Out of memory on device. To view more detail about
//!   available memory on the GPU, use 'gpuDevice()'.` (R2013b on) and the older `The GPU failed
//!   to allocate memory. To continue, reset the GPU by running 'gpuDevice(1)'.`, MatConvNet's
//!   training scripts among their callers.
//! * ArrayFire `src/api/c/memory.cpp` (`AF_ERR_NO_MEM`, 101: `ArrayFire Exception (Device out of
//!   memory:101)`) and Flashlight's memory manager above it (`fl/memory/
//!   MemoryManagerInstaller.cpp`: `Failed to allocate memory of size 1.27 GiB (Device: 0,
//!   Capacity: 31.74 GiB, Allocated: 29.98 GiB, Cached: 994.36 MiB) with error '…'`).

use super::{find, integer_of, Continuation, Family, FrameworkKind, Parsed};
use crate::model::failure::OomKind;
use crate::model::Bytes;

const SCIENCE: Family = Family::Framework(FrameworkKind::Science);

/// Where one of these codes' GPU memory failures starts on this line.
pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    if let Some(found) = regex!(r"(?i)\b(?:cuda|hip)CustomAllocator out of memory").find(text) {
        return Some((SCIENCE, found.start()));
    }
    if let Some(found) =
        regex!(r"Failed to allocate memory of size [\d.]+ \w+ \(Device: \d+, Capacity:").find(text)
    {
        return Some((SCIENCE, found.start()));
    }
    if let Some(position) = find(text, "Device out of memory:101") {
        return Some((
            SCIENCE,
            super::back_to(text, position, "ArrayFire Exception"),
        ));
    }
    if let Some(position) = find(text, "You ran out of memory on the GPU") {
        return Some((SCIENCE, position));
    }
    for needle in [
        "Insufficient memory on accelerator",
        "System is out of GPU and shared host memory",
        "System is out of GPU memory",
        "Out of memory on device. To view more detail",
        "The GPU failed to allocate memory",
    ] {
        if let Some(position) = find(text, needle) {
            return Some((SCIENCE, position));
        }
    }
    if let Some(found) = regex!(r"\b(?:cuda|jit)_malloc\(\): out of memory").find(text) {
        return Some((SCIENCE, found.start()));
    }
    None
}

/// Whether the message has been read completely: RELION's sizes come on the lines after its
/// first.
pub(super) fn is_complete(squeezed: &str) -> bool {
    !regex!(r"(?i)CustomAllocatoroutofmemory").is_match(squeezed)
        || squeezed.contains("totalFreeSpace:")
}

/// RELION's bracketed size lines after its first line.
pub(super) fn continuation(text: &str) -> Continuation {
    let line = text.trim();
    if line.starts_with('[') && line.contains("Space") {
        Continuation::Append
    } else {
        Continuation::Close
    }
}

/// The request and free memory the message prints, in bytes.
pub(super) fn parse(squeezed: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::OtherGpuOom, true);
    parsed.figures.tried_to_allocate_bytes =
        integer_of(regex!(r"\[requestedSpace:(\d+)B"), squeezed)
            .or_else(|| {
                integer_of(
                    regex!(r"jit_malloc\(\):outofmemory!Couldnotallocate(\d+)bytes"),
                    squeezed,
                )
            })
            .map(Bytes);
    parsed.figures.free_bytes = integer_of(regex!(r"\[totalFreeSpace:(\d+)B"), squeezed).map(Bytes);
    // Flashlight: the request, then the device's figures as its memory manager keeps them
    // (`Allocated` in use by arrays, `Cached` held by the pool but free).
    if let Some(caps) = regex!(concat!(
        r"Failedtoallocatememoryofsize",
        size!(),
        r"\(Device:(\d{1,3}),Capacity:",
        size!(),
        r",Allocated:",
        size!(),
        r",Cached:",
        size!(),
        r"\)"
    ))
    .captures(squeezed)
    {
        let size = |i: usize| caps.get(i).and_then(|m| super::parse_size(m.as_str()));
        parsed.figures.tried_to_allocate_bytes = size(1);
        parsed.figures.gpu_index = caps
            .get(2)
            .and_then(|m| m.as_str().parse::<u64>().ok())
            .and_then(|index| crate::model::gpu::CudaOrdinal::try_from(index).ok());
        parsed.figures.total_capacity_bytes = size(3);
        parsed.figures.allocated_by_pytorch_bytes = size(4);
        parsed.figures.reserved_unallocated_bytes = size(5);
    }
    parsed
}
