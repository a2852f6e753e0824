//! A raw CUDA out-of-memory raised by a pinned (page-locked) HOST allocation: not the GPU's
//! memory. PyTorch pins host memory through its caching host allocator
//! (`aten/src/ATen/cuda/CachingHostAllocator.cpp` `allocate_host_memory_slowpath`, 2.x:
//! `C10_CUDA_CHECK(cudaHostAlloc(ptr, size, cudaHostAllocDefault))`, or `cudaHostRegister`
//! with `pinned_use_cuda_host_register`; 1.x `THCCachingHostAllocator.cpp` the same call), so
//! a failure there prints the runtime's `CUDA error: out of memory` (`cudaErrorMemoryAllocation`)
//! like a device allocation would. What shows it: the call that pinned (`tensor.pin_memory()`,
//! `torch.empty(…, pin_memory=True)`), the DataLoader's pin thread (`torch/utils/data/
//! _utils/pin_memory.py`, whose `ExceptionWrapper` says `Caught RuntimeError in pin memory
//! thread for device 0.`), the allocator's own frames (`CachingHostAllocator`,
//! `at::native::_pin_memory`), or CuPy's pinned pool (`cupy/cuda/pinned_memory.pyx`
//! `alloc_pinned_memory` → `runtime.hostAlloc`). HIP's twins fail the same way with
//! `hipErrorOutOfMemory` (`hipHostMalloc`, `hipHostRegister`, `hipHostAlloc`, `hipMallocHost` of
//! `hip_runtime_api.h`), as does the page-locked `Mem.HostBuffer` of AMDGPU.jl and CUDA.jl.
//! TensorFlow's and XLA's stream executor say it on the line (`cuda_driver.cc`
//! `GpuDriver::HostAllocate`: "failed to alloc 1073741824 bytes on host:
//! CUDA_ERROR_OUT_OF_MEMORY", then `device_host_allocator.h` "could not allocate pinned host
//! memory of size: …").

/// A line showing a pinned host allocation: the innermost frame's call, or the allocator's
/// frames. Not prose that names the setting (`set pin_memory=False`), which needs a call or a
/// frame around it: only a code-like use (`.pin_memory(`, `pin_memory=True)` inside a call).
pub(super) fn pinned_frame(text: &str) -> bool {
    regex!(r"\.pin_memory\(|\bpin_memory\.py\b|\b_pin_memory\b|\(.*\bpin_memory\s*=\s*True|\bcudaHostAlloc\b|\bcudaMallocHost\b|\bcudaHostRegister\b|\bhipHost(?:Malloc|Register|Alloc)\b|\bhipMallocHost\b|\bMem\.HostBuffer\b|CachingHostAllocator|HostAllocator::|getPinnedMemoryAllocator|\bpinned_memory\.pyx\b|\balloc_pinned_memory\b|\bbytes on host: |pinned host memory of size")
        .is_match(text)
}

/// The DataLoader's pin thread re-raising its error (`torch/utils/data/_utils/pin_memory.py`
/// `_pin_memory_loop`: `ExceptionWrapper(where=f"in pin memory thread for device
/// {device_id}")`, printed by `ExceptionWrapper.reraise` as `Caught RuntimeError in pin memory
/// thread for device 0.`): the traceback after it is the pin thread's.
pub(super) fn pin_thread(text: &str) -> bool {
    text.contains("in pin memory thread")
}

/// How many lines before a raw CUDA error the innermost frame's call may stand (the `File …`
/// line, the call, a caret line, a blank).
pub(super) const FRAME_LINES: u64 = 4;

/// How many lines before a raw CUDA error the pin thread's header may stand (its `Original
/// Traceback` and the frames of the thread's loop come between).
pub(super) const THREAD_LINES: u64 = 40;
