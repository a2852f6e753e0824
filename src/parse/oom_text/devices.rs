//! GPU memory failures of device runtimes other than CUDA's and HIP's: DirectML (torch-directml
//! on AMD and Intel cards under Windows), oneAPI's Level Zero and Unified Runtime (Intel XPUs,
//! llama.cpp's SYCL backend), Vulkan, and Apple's Metal through MLX.
//!
//! Sources (wording as the code builds it):
//! * torch-directml (`DmlAllocator`, 0.2.x): "Could not allocate tensor with %d bytes. There is
//!   not enough GPU video memory available!" (quoted in lshqqytiger/stable-diffusion-webui-amdgpu
//!   issue 291 and ComfyUI's `model_management.is_oom`).
//! * oneAPI Unified Runtime `ur_api.h` (`UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`, 39 in its enum)
//!   as SYCL prints it (`Native API failed. Native API returns: 39
//!   (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)`, `level_zero backend failed with error: 39
//!   (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)`), Level Zero `ze_api.h`
//!   (`ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`), Vulkan `vulkan_core.h`
//!   (`VK_ERROR_OUT_OF_DEVICE_MEMORY`). Their `…_OUT_OF_HOST_MEMORY` twins are the host's.
//! * DirectML's `E_OUTOFMEMORY` (`0x8007000E`) as onnxruntime's DML execution provider
//!   (`DmlExecutionProvider/src/BucketizedBufferAllocator.cpp`, `MLOperatorAuthorImpl.cpp`) and
//!   torch-directml (`dml_heap_allocator.cc`) report a failed heap/buffer allocation: `…
//!   Exception(1) tid(4790) 8007000E Not enough memory resources are available to complete this
//!   operation.` (huggingface/diffusers#791, #552). Only with DirectML named on the line: the
//!   code alone is any Windows allocation.
//! * OpenCL `CL/cl.h` (Khronos): `CL_MEM_OBJECT_ALLOCATION_FAILURE` (-4), "a failure to
//!   allocate memory for data store associated with image or buffer objects" (the device's),
//!   as pyopencl prints it without the prefix (`clEnqueueNDRangeKernel failed:
//!   MEM_OBJECT_ALLOCATION_FAILURE`, its class `pyopencl._cl.MemoryError`); `CL_OUT_OF_HOST_MEMORY`
//!   is the host's.
//! * Huawei Ascend's CANN runtime, error code EL0004 (`Memory_Allocation_Failure(EL0004): Failed
//!   to allocate memory.` then `Possible Cause: Available memory is insufficient.`, as torch_npu
//!   and MindSpore relay the runtime's recent error message; its inner lines name the device's
//!   `allocate device memory failed`, `MemoryPoolManager`, the `GE module`), and MindSpore's
//!   device memory pool (`mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc`,
//!   2.x: `TotalUsedMemStatistics : U plus TotalUsedByEventMemStatistics : E and plus alloc size
//!   : S is more than total mem size : T.`; its `memory isn't enough and alloc failed` is read
//!   in `cuda.rs`).
//! * ncnn `src/allocator.cpp` (`vkAllocateMemory failed %d`; `-2` is
//!   `VK_ERROR_OUT_OF_DEVICE_MEMORY`), as the ncnn-vulkan apps print it.
//! * MLX `mlx/backend/metal/allocator.cpp` (`MetalAllocator::malloc`, 0.x): "[metal::malloc]
//!   Attempting to allocate %zu bytes which is greater than the maximum allowed buffer size of
//!   %zu bytes."
//! * Intel Gaudi's PyTorch bridge (HPU): `FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for
//!   size::N (M)MB`, the request in bytes (accelerate `src/accelerate/utils/memory.py`,
//!   `should_reduce_batch_size`, matches it as the HPU's out-of-memory).

use super::{back_to, find, integer_of, Family, FrameworkKind, Parsed};
use crate::model::failure::OomKind;
use crate::model::Bytes;

/// First non-blank byte of the line.
fn line_start(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

/// Where a device runtime's failure starts on this line: the GPU's, or the host's twin status.
pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    if let Some(position) = find(text, "There is not enough GPU video memory") {
        let begin = back_to(text, position, "Could not allocate tensor");
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    // The same message cut to its first sentence, or retyped with the size hidden (`Could not
    // allocate tensor with XXXXXXXXX bytes.` in a title): torch-directml's alone.
    if let Some(found) = regex!(r"Could not allocate tensor with (?:\d+|[Xx]+) bytes").find(text) {
        return Some((
            Family::Framework(FrameworkKind::DeviceRuntime),
            found.start(),
        ));
    }
    // Milvus 0.x (`core/src/scheduler/task/SearchTask.cpp` copying an index with faiss's
    // `index_cpu_to_gpu`; its client prints the server's status): `out of memory: CPU2GPU:1`,
    // the device's memory when the index was copied to GPU 1 for a query.
    if let Some(position) = find(text, "out of memory: CPU2GPU") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    if find(text, "8007000E").is_some() {
        let lower = text.to_ascii_lowercase();
        if lower.contains("dml") || lower.contains("directml") {
            return Some((
                Family::Framework(FrameworkKind::DeviceRuntime),
                line_start(text),
            ));
        }
    }
    if let Some(position) = find(text, "MEM_OBJECT_ALLOCATION_FAILURE") {
        // From the failing call (`clCreateBuffer failed: …`), else the status.
        let begin = text[..position]
            .rfind(" failed")
            .and_then(|failed| text[..failed].rfind(|c: char| c.is_whitespace() || c == ':'))
            .map_or(position, |at| crate::parse::text::after_char_at(text, at));
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    // Intel's runtimes also answer an allocation the device cannot serve with
    // `UR_RESULT_ERROR_OUT_OF_RESOURCES` (40) or, before Unified Runtime, `PI_ERROR_OUT_OF_RESOURCES`
    // (-5) (intel/torch-xpu-ops#1324: a tensor past the card's memory; ipex-llm and
    // llama.cpp's SYCL backend report full cards so). (OpenCL's word for a kernel fault on
    // some cards too, so the report says what it rests on.) CUDA's
    // `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES` is a launch's registers, not memory: not read.
    for status in [
        "OUT_OF_DEVICE_MEMORY",
        "OUT_OF_HOST_MEMORY",
        "OUT_OF_RESOURCES",
    ] {
        if let Some(position) = find(text, status) {
            // The status's own name (`UR_RESULT_ERROR_…`, `ZE_RESULT_ERROR_…`, `VK_ERROR_…`),
            // not a word that holds it.
            let name_start = text[..position]
                .rfind(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                .map_or(0, |at| crate::parse::text::after_char_at(text, at));
            let name = &text[name_start..position];
            let names: &[&str] = if status == "OUT_OF_RESOURCES" {
                &["UR_RESULT_ERROR_", "PI_ERROR_", "CL_"]
            } else {
                &[
                    "UR_RESULT_ERROR_",
                    "ZE_RESULT_ERROR_",
                    "VK_ERROR_",
                    "PI_ERROR_",
                    "CL_",
                ]
            };
            // (Omniverse Kit's Vulkan plugin names the result without its prefix:
            // `[carb.graphics-vulkan.plugin] VkResult: ERROR_OUT_OF_DEVICE_MEMORY`.)
            let kit = name == "ERROR_" && text[..name_start].trim_end().ends_with("VkResult:");
            if !kit && !names.contains(&name) {
                continue;
            }
            let begin = text[..name_start]
                .rfind("Native API failed")
                .or_else(|| text[..name_start].rfind("level_zero backend failed"))
                .or_else(|| text[..name_start].rfind("Due to the driver bug"))
                .or_else(|| text[..name_start].rfind("[GPU]"))
                .unwrap_or(name_start);
            return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
        }
    }
    // OpenVINO's GPU plugin when OpenCL refuses a buffer (`src/plugins/intel_gpu/src/runtime/
    // ocl/ocl_engine.cpp` `ocl_engine::allocate_memory`: `CL_MEM_OBJECT_ALLOCATION_FAILURE`,
    // `CL_OUT_OF_RESOURCES`, `CL_OUT_OF_HOST_MEMORY` or `CL_INVALID_BUFFER_SIZE` from the
    // allocation is thrown as `OPENVINO_THROW("[GPU] out of GPU resources")`): the device's
    // memory, as the plugin words it (immich's and Frigate's OpenVINO execution provider relay
    // it). Only with the plugin's tag: `ran out of GPU resources` in prose is a scheduler's.
    // llama.cpp's OpenCL back end of 2023 (`ggml-opencl.cpp` `CL_CHECK`: "ggml_opencl: %s error
    // %d at %s:%d", the call and OpenCL's status) and CLBlast under it (koboldcpp: "CLBlast:
    // OpenCL error: clEnqueueNDRangeKernel: -4"): -4 is `CL_MEM_OBJECT_ALLOCATION_FAILURE`, -5
    // `CL_OUT_OF_RESOURCES` (`cl.h`), the device's memory refused (llama.cpp#2829, koboldcpp#100;
    // session 52).
    if let Some(found) =
        regex!(r"(?:ggml_opencl: .* error -[45] at \S*ggml-opencl|OpenCL error: \w+: -[45]\b)")
            .find(text)
    {
        let begin = back_to(text, found.start(), "ggml_opencl:");
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    if let Some(position) = find(text, "[GPU] out of GPU resources") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // OpenVINO's GPU plugin (Intel GPUs through OpenCL): a buffer larger than one allocation
    // may be (`[GPU] Exceeded max size of memory object allocation: requested N bytes, but max
    // alloc size supported by device is M bytes`, `cldnn` `engine.cpp`), and its word for an
    // OpenCL `CL_OUT_OF_RESOURCES` (`… reduce memory consumption (use smaller batch size, …) to
    // avoid CL_OUT_OF_RESOURCES exception`, `ocl_stream.cpp`): the device's memory.
    // Intel Extension for PyTorch (and ipex-llm, BigDL-LLM on it) when SYCL reports
    // `OUT_OF_RESOURCES` for an allocation (`csrc/gpu/runtime/Exception.h`, 2.x: `throw
    // std::runtime_error("Allocation is out of device memory on current platform.")`): the XPU's
    // memory (accelerate and axolotl's docs match it as the XPU's out-of-memory).
    if let Some(position) = find(
        text,
        "Allocation is out of device memory on current platform",
    ) {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    if let Some(position) = find(text, "Exceeded max size of memory object allocation") {
        let begin = back_to(text, position, "[GPU]");
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    if let Some(position) = find(text, "to avoid CL_OUT_OF_RESOURCES") {
        let begin = back_to(text, position, "Due to the driver bug");
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    if let Some(position) = find(text, "Memory_Allocation_Failure") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // The same error under its bare code, as CANN 8.x's error manager prints it (`EL0004: [PID:
    // 5536] 2025-11-10-01:25:11.770.501 Failed to allocate memory.`, relayed by vllm-ascend's
    // workers and torch_npu).
    if let Some(position) = find(text, "EL0004: ") {
        if find(&text[position..], "Failed to allocate memory").is_some() {
            return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
        }
    }
    if let Some(position) = find(text, "TotalUsedMemStatistics") {
        if find(text, "is more than total mem size").is_some() {
            return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
        }
    }
    // ncnn's Vulkan allocator (`src/allocator.cpp` `VkAllocator::allocate_memory`: `NCNN_LOGE(
    // "vkAllocateMemory failed %d", ret)`), under the ncnn-vulkan apps (Upscayl, Real-ESRGAN,
    // waifu2x, RIFE): `-2` is `VK_ERROR_OUT_OF_DEVICE_MEMORY` (`vulkan_core.h`), the device's;
    // `-1`, the host's, is not read as the GPU's.
    if let Some(position) = find(text, "vkAllocateMemory failed") {
        let code = text[position + "vkAllocateMemory failed".len()..]
            .trim_start()
            .split(|c: char| !(c.is_ascii_digit() || c == '-'))
            .next();
        if code == Some("-2") {
            return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
        }
    }
    // Qualcomm Adreno's graphics driver on Android (`libgsl.so`, logcat tag `Adreno-GSL`):
    // `<gsl_memory_alloc_pure:2209>: GSL MEM ERROR: kgsl_sharedmem_alloc ioctl failed.`, after
    // `sharedmem_gpumem_alloc: mmap failed errno 12 Out of memory`: the kernel's GPU memory
    // (KGSL, carved from the phone's RAM) refused an allocation of the GPU's, as a TFLite GPU
    // delegate or a game asks for buffers.
    if let Some(position) = find(text, "GSL MEM ERROR: kgsl_sharedmem_alloc") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // MLX's Metal allocator when Metal returns no buffer: "[metal::malloc] Unable to allocate N
    // bytes." (as MLX callers' OOM checks quote it; its CPU twin `[malloc] Unable to
    // allocate` is the host's and is not this).
    // Intel Gaudi's PyTorch bridge (HPU device memory): `RuntimeError: [Rank:0] FATAL ERROR ::
    // MODULE:PT_DEVMEM Allocation failed for size::939524096 (896)MB`, the exact request in
    // bytes, then in MiB (the words accelerate's `utils/memory.py` `should_reduce_batch_size`
    // matches as the HPU's OOM; HabanaAI/vllm-fork's README quotes the line).
    // (Its older bridge and the Synapse helper say the same of the device's memory: `MODULE:DEVMEM
    // Allocation failed for size::1646821376`, huggingface/optimum-habana#52; `MODULE:SYNHELPER
    // workspace Allocation of size ::14493510400 failed!`, HabanaAI/Model-References#10.)
    if let Some(position) = find(text, "DEVMEM Allocation failed")
        .or_else(|| find(text, "workspace Allocation of size"))
    {
        let begin = back_to(text, position, "FATAL ERROR");
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    if let Some(position) = find(text, "[metal::malloc] Unable to allocate") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // MLX's Metal allocator refusing one buffer past the device's `maxBufferLength`
    // (`mlx/backend/metal/allocator.cpp` `MetalAllocator::malloc`): `[metal::malloc] Attempting
    // to allocate N bytes which is greater than the maximum allowed buffer size of M bytes.`;
    // MLX 0.1x threw the same sentence without the `[metal::malloc]` tag (`std::runtime_error:
    // Attempting to allocate …`, as `libc++abi: terminating due to uncaught exception` prints
    // it). The sentence is MLX's alone; the tag only says where it came from.
    if let Some(found) =
        regex!(r"Attempting to allocate \d+ bytes which is greater than the maximum allowed buffer")
            .find(text)
    {
        let begin = back_to(text, found.start(), "[metal::malloc]");
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    if let Some(position) = find(text, "[metal::malloc] Attempting to allocate") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // MLX's Metal allocator past the device's count of live buffers (`mlx/backend/metal/
    // allocator.cpp` `MetalAllocator::malloc`: `"[metal::malloc] Resource limit (" <<
    // resource_limit_ << ") exceeded."`, 499000 on macOS): an allocation the GPU's allocator
    // refused, counted in buffers, not bytes (no figure read).
    if let Some(position) = find(text, "[metal::malloc] Resource limit (") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // MLX 0.x's allocation that waited for running tasks and still got no buffer (`mlx/
    // allocator.cpp` `malloc_or_wait`: `"[malloc_or_wait] Unable to allocate " << size << "
    // bytes."`), from the Metal allocator of the Apple GPU.
    if let Some(position) = find(text, "[malloc_or_wait] Unable to allocate") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // tinygrad's AMD device (`tinygrad/runtime/ops_amd.py` `KFDIface.alloc`: `if e.errno ==
    // errno.ENOMEM: raise MemoryError(f"Cannot allocate {size} bytes: no memory is
    // available.")`), the kernel driver refusing GPU memory (`AMDKFD_IOC_ALLOC_MEMORY_OF_GPU`):
    // the device's memory, though Python's class is `MemoryError`.
    if let Some(found) = regex!(r"Cannot allocate \d+ bytes: no memory is available").find(text) {
        let begin = back_to(text, found.start(), "MemoryError");
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    // Triton Inference Server's CUDA memory pool (`core/src/cuda_memory_manager.cc`
    // `CudaMemoryManager::Alloc`: `RETURN_IF_CNMEM_ERROR(err, "Failed to allocate CUDA memory
    // with byte size " + size + " on GPU " + device_id)`, which appends CNMeM's status): the
    // pool on the GPU (`--cuda-memory-pool-byte-size`) had no room for the request.
    if let Some(position) = find(text, "Failed to allocate CUDA memory with byte size") {
        if find(text, "CNMEM_STATUS_OUT_OF_MEMORY").is_some() {
            return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
        }
    }
    // boost.compute's name for OpenCL's `CL_MEM_OBJECT_ALLOCATION_FAILURE` (`boost/compute/
    // exception/opencl_error.hpp` `opencl_error::to_string`: `"Memory Object Allocation
    // Failure"`), the `what()` of a `boost::compute::opencl_error` (LightGBM's GPU trainer).
    // (Also the lowercase description OpenCL error tables print for status -4: `[ERROR] memory
    // object allocation failure`, ArchProbe and clinfo-style wrappers.)
    if let Some(found) = regex!(r"(?i)\bmemory object allocation failure").find(text) {
        return Some((
            Family::Framework(FrameworkKind::DeviceRuntime),
            found.start(),
        ));
    }
    // OpenGL's `GL_OUT_OF_MEMORY` (0x0505 in `GL/gl.h`), as a GL error check prints its code
    // (MediaPipe's `GlContext::CheckForGlErrors` / Android's `GLES20` wrappers: `glActiveTexture:
    // GL error: 0x505`) or the specification's description of it ("There is not enough memory
    // left to execute the command", OpenGL 4.6 §2.3.1, surfaced by MediaPipe's tasks): the
    // driver found no memory for the call, the GPU's on a phone's shared-memory SoC.
    if let Some(found) = regex!(r"\bGL error:? 0x0?505\b|\bGL_OUT_OF_MEMORY\b").find(text) {
        return Some((
            Family::Framework(FrameworkKind::DeviceRuntime),
            found.start(),
        ));
    }
    if let Some(position) = find(
        text,
        "There is not enough memory left to execute the command",
    ) {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // Metal Performance Shaders' command-buffer cache (`MPSCore/Utility/MPSCommandBufferImageCache
    // .mm`: failed assertion `Failed to allocate private MTLBuffer for size 2717908992`), Core ML
    // and Apple's ml-stable-diffusion on an iPhone's or iPad's GPU: the request in bytes.
    // NVIDIA Warp (`warp/context.py` `Device.allocator` → `alloc`: `raise RuntimeError("Memory
    // allocation failed on device: {} for {} bytes".format(device, num_bytes))`) on a CUDA
    // device, as ManiSkill's soft-body scenes surface it; CubeCL's memory management under
    // Burn (`No memory pool big enough to reserve N bytes.`) and its wgpu server (`can't
    // allocate buffer of size: N`).
    if let Some(found) =
        regex!(r"Memory allocation failed on device: cuda(?::\d+)? for \d+ bytes").find(text)
    {
        return Some((
            Family::Framework(FrameworkKind::DeviceRuntime),
            found.start(),
        ));
    }
    for needle in [
        "No memory pool big enough to reserve",
        "can't allocate buffer of size:",
    ] {
        if let Some(position) = find(text, needle) {
            return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
        }
    }
    if let Some(position) = find(text, "Failed to allocate private MTLBuffer for size") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // tinygrad's LRU allocator (`tinygrad/runtime/lib.py` `LRUAllocator._alloc_buffer`, 0.7–0.8:
    // `assert (curr_free := self._get_cur_free_space(device)) > space_to_free, f"out of memory -
    // requested: {space_to_free/1e9:5.2f} GB, available: {curr_free/1e9:5.2f} GB"`) on a Metal,
    // CUDA or OpenCL device: the request and what the device had free.
    if let Some(found) =
        regex!(r"out of memory - requested: *[\d.]+ GB, available: *[\d.]+ GB").find(text)
    {
        let begin = text[..found.start()]
            .rfind("AssertionError")
            .filter(|at| found.start() - at <= 20)
            .unwrap_or(found.start());
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    // NVIDIA's video encoder refusing a session or its buffers for want of device memory, as
    // FFmpeg's `libavcodec/nvenc.c` `nvenc_print_error` prints it (`"%s: %s (%d)"` with
    // `NV_ENC_ERR_OUT_OF_MEMORY`'s "out of memory", status 10): `[h264_nvenc @ 0x…]
    // OpenEncodeSessionEx failed: out of memory (10): (no details)`, `InitializeEncoder failed:
    // out of memory (10)`.
    if let Some(found) = regex!(r"\w+ failed: out of memory \(10\)").find(text) {
        return Some((
            Family::Framework(FrameworkKind::DeviceRuntime),
            found.start(),
        ));
    }
    // Julia's CUDA.jl (`src/pool.jl` `OutOfGPUMemoryError`, shown as `Out of GPU memory trying
    // to allocate 146.250 MiB` over the lines `Effective GPU memory usage: 99.50% (3.792 GiB/
    // 3.810 GiB)` and `Memory pool usage: 960.548 MiB (2.688 GiB reserved)`; CuArrays 1.x/2.x
    // printed `SplittingPool usage: …` instead).
    if let Some(position) = find(text, "Out of GPU memory trying to allocate") {
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
    }
    // Theano's old CUDA back end (`theano/sandbox/cuda/cuda_ndarray.cu` `device_malloc`:
    // `"Error allocating %llu bytes of device memory (%s). Driver report %llu bytes free and
    // %llu bytes total"`, the status being `cudaGetErrorString`'s `out of memory`).
    if let Some(position) = find(text, "bytes of device memory (out of memory)") {
        let begin = back_to(text, position, "Error allocating");
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    // CNMeM, NVIDIA's pool of GPU memory that Theano (`lib.cnmem`) and others carve the card
    // from (`cnmem.h`: `CNMEM_STATUS_OUT_OF_MEMORY`); Theano's start-up prints `initCnmem:
    // cnmemInit call failed! Reason=CNMEM_STATUS_OUT_OF_MEMORY` when the pool asked does not fit.
    if let Some(position) = find(text, "CNMEM_STATUS_OUT_OF_MEMORY") {
        let begin = back_to(text, position, "initCnmem");
        return Some((Family::Framework(FrameworkKind::DeviceRuntime), begin));
    }
    // NVIDIA DALI's device allocation (`dali/core/error_handling.h` `CUDABadAlloc::what`:
    // `"CUDA allocation failed"`, or with its size `"Can't allocate %zu bytes on device %d."`;
    // the host's is `"… bytes on host."`) and nvJPEG's status 5 from DALI's decoders
    // (`NVJPEG_STATUS_ALLOCATOR_FAILURE`, its description "The user-provided allocator functions,
    // for either memory allocation or for releasing the memory, returned a non-zero code."):
    // the decoder's device buffers could not be allocated.
    if let Some(found) = regex!(r"Can't allocate \d+ bytes on device \d+").find(text) {
        return Some((
            Family::Framework(FrameworkKind::DeviceRuntime),
            found.start(),
        ));
    }
    for words in [
        "CUDA allocation failed",
        "NVJPEG_STATUS_ALLOCATOR_FAILURE",
        "NVJPEG error \"5\"",
        "nvJPEG error (5)",
        "The user-provided allocator functions, for either memory allocation",
    ] {
        if let Some(position) = find(text, words) {
            return Some((Family::Framework(FrameworkKind::DeviceRuntime), position));
        }
    }
    faiss_start(text)
}

/// Faiss's GPU allocations (`faiss/gpu/utils/MemorySpace.cpp` `allocMemorySpace`: `"Failed to
/// cudaMalloc %zu bytes"`, 1.5+ `"failed to cudaMalloc %zu bytes (error %d %s)"`;
/// 1.7's `"Failed to cudaMalloc %zu bytes on device %d (error %d %s)"`;
/// `faiss/gpu/StandardGpuResources.cpp` `StandardGpuResourcesImpl::allocMemory`:
/// `"StandardGpuResources: alloc fail " << req.toString() << " (cudaMalloc error " <<
/// cudaGetErrorString(err) << " [" << err << "])"`, `AllocRequest::toString` printing `type T
/// dev D space S stream P size N bytes`). Not the logged retry of a temporary allocation
/// (`… (no temp space); retrying as MemorySpace::Device`), nor a cudaMalloc that failed with
/// another status than 2 (`cudaErrorMemoryAllocation`).
fn faiss_start(text: &str) -> Option<(Family, usize)> {
    if let Some(found) = regex!(r"(?:F|\bf)ailed to cudaMalloc \d+ bytes").find(text) {
        let status = regex!(r"^(?: on device \d+)? \(error (\d+)")
            .captures(&text[found.end()..])
            .and_then(|caps| caps.get(1));
        if status.is_none_or(|code| code.as_str() == "2") {
            return Some((Family::Framework(FrameworkKind::Faiss), found.start()));
        }
    }
    // The temporary-memory stack of Faiss 1.x (`faiss/gpu/utils/StackDeviceMemory.cpp`
    // `Stack::getAlloc`: `FAISS_ASSERT_FMT(err == cudaSuccess, "cudaMalloc error %d on alloc
    // size %zu %s", …)`): status 2 is `cudaErrorMemoryAllocation`.
    if let Some(found) = regex!(r"cudaMalloc error 2 on alloc size \d+").find(text) {
        let begin = back_to(text, found.start(), "Faiss assertion");
        return Some((Family::Framework(FrameworkKind::Faiss), begin));
    }
    // (A console that wraps the message right after `alloc` leaves ` fail type …` to the next
    // line, which continues it.)
    let position = find(text, "StandardGpuResources: alloc fail").or_else(|| {
        let trimmed = text.trim_end();
        trimmed
            .ends_with("StandardGpuResources: alloc")
            .then(|| trimmed.len() - "StandardGpuResources: alloc".len())
    })?;
    if find(text, "no temp space").is_some() || find(text, "retrying").is_some() {
        return None;
    }
    let error = regex!(r"cudaMalloc error (.*?) \[(\d+)\]").captures(text);
    if error
        .and_then(|caps| caps.get(2))
        .is_some_and(|code| code.as_str() != "2")
    {
        return None;
    }
    Some((Family::Framework(FrameworkKind::Faiss), position))
}

/// Whether Faiss's message has been read to its status (`StandardGpuResources: alloc fail …`
/// wraps before `… size N bytes (cudaMalloc error out of memory [2])`).
pub(super) fn faiss_complete(squeezed: &str) -> bool {
    !squeezed.contains("StandardGpuResources:alloc") || squeezed.contains("cudaMallocerror")
}

/// Faiss's GPU out-of-memory: the request and the device when printed.
pub(super) fn parse_faiss(squeezed: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::CudaErrorOutOfMemory, true);
    parsed.figures.tried_to_allocate_bytes =
        integer_of(regex!(r"ailedtocudaMalloc(\d+)bytes"), squeezed)
            .or_else(|| integer_of(regex!(r"size(\d+)bytes\(cudaMallocerror"), squeezed))
            .or_else(|| integer_of(regex!(r"cudaMallocerror2onallocsize(\d+)"), squeezed))
            .map(Bytes);
    parsed.figures.gpu_index = integer_of(regex!(r"allocfailtype\w+dev(\d{1,3})space"), squeezed)
        .or_else(|| {
            integer_of(
                regex!(r"ailedtocudaMalloc\d+bytesondevice(\d{1,3})\("),
                squeezed,
            )
        })
        .and_then(|index| crate::model::gpu::CudaOrdinal::try_from(index).ok());
    parsed
}

/// A device runtime's failure: the GPU's memory, unless the status is the host's.
pub(super) fn parse(squeezed: &str) -> Parsed {
    if squeezed.contains("OUT_OF_HOST_MEMORY") && !squeezed.contains("OUT_OF_DEVICE_MEMORY") {
        return Parsed::new(OomKind::HostMemory, false);
    }
    let mut parsed = Parsed::new(OomKind::OtherGpuOom, true);
    parsed.figures.tried_to_allocate_bytes = integer_of(
        regex!(r"(?:Couldnotallocatetensorwith|\[metal::malloc\](?:Attempting|Unable)toallocate|\[malloc_or_wait\]Unabletoallocate|Cannotallocate)(\d+)bytes"),
        squeezed,
    )
    .or_else(|| {
        integer_of(
            regex!(r"Attemptingtoallocate(\d+)byteswhichisgreaterthanthemaximumallowedbuffer"),
            squeezed,
        )
    })
    .or_else(|| integer_of(regex!(r"plusallocsize:(\d+)ismorethantotalmemsize"), squeezed))
    .or_else(|| integer_of(regex!(r"DEVMEMAllocationfailedforsize::(\d+)"), squeezed))
    .or_else(|| integer_of(regex!(r"workspaceAllocationofsize::(\d+)failed"), squeezed))
    .or_else(|| integer_of(regex!(r"FailedtoallocateCUDAmemorywithbytesize(\d+)"), squeezed))
    .or_else(|| integer_of(regex!(r"Errorallocating(\d+)bytesofdevicememory"), squeezed))
    .or_else(|| integer_of(regex!(r"Can'tallocate(\d+)bytesondevice"), squeezed))
    .or_else(|| integer_of(regex!(r"FailedtoallocateprivateMTLBufferforsize(\d+)"), squeezed))
    .or_else(|| integer_of(regex!(r"Memoryallocationfailedondevice:cuda(?::\d+)?for(\d+)bytes"), squeezed))
    .or_else(|| integer_of(regex!(r"Nomemorypoolbigenoughtoreserve(\d+)bytes"), squeezed))
    .or_else(|| integer_of(regex!(r"can'tallocatebufferofsize:(\d+)"), squeezed))
    .or_else(|| {
        integer_of(
            regex!(r"Exceededmaxsizeofmemoryobjectallocation:requested(\d+)bytes"),
            squeezed,
        )
    })
    .map(Bytes);
    parsed.figures.total_capacity_bytes =
        integer_of(regex!(r"ismorethantotalmemsize:(\d+)"), squeezed)
            .or_else(|| integer_of(regex!(r"bytesfreeand(\d+)bytestotal"), squeezed))
            .map(Bytes);
    parsed.figures.free_bytes =
        integer_of(regex!(r"Driverreport(\d+)bytesfreeand"), squeezed).map(Bytes);
    // tinygrad's sizes, printed in GB with two decimals.
    if let Some(caps) =
        regex!(r"outofmemory-requested:([\d.]+GB),available:([\d.]+GB)").captures(squeezed)
    {
        parsed.figures.tried_to_allocate_bytes =
            caps.get(1).and_then(|m| super::parse_size(m.as_str()));
        parsed.figures.free_bytes = caps.get(2).and_then(|m| super::parse_size(m.as_str()));
    }
    // CUDA.jl's request in Julia's units, then its usage lines: the device's used/total, its
    // pool's used and reserved.
    if squeezed.contains("OutofGPUmemorytryingtoallocate") {
        parsed.figures.tried_to_allocate_bytes = super::size_of(
            regex!(concat!(r"OutofGPUmemorytryingtoallocate", size!())),
            squeezed,
        );
        if let Some(caps) = regex!(concat!(
            r"EffectiveGPUmemoryusage:[\d.]+%\(",
            size!(),
            r"/",
            size!(),
            r"\)"
        ))
        .captures(squeezed)
        {
            parsed.figures.total_capacity_bytes =
                caps.get(2).and_then(|m| super::parse_size(m.as_str()));
        }
        if let Some(caps) = regex!(concat!(
            r"Memorypoolusage:",
            size!(),
            r"\(",
            size!(),
            r"reserved\)"
        ))
        .captures(squeezed)
        {
            parsed.figures.allocated_by_pytorch_bytes =
                caps.get(1).and_then(|m| super::parse_size(m.as_str()));
            parsed.figures.reserved_total_bytes =
                caps.get(2).and_then(|m| super::parse_size(m.as_str()));
        }
    }
    parsed.figures.gpu_index = integer_of(
        regex!(r"FailedtoallocateCUDAmemorywithbytesize\d+onGPU(\d{1,3})"),
        squeezed,
    )
    .or_else(|| integer_of(regex!(r"Can'tallocate\d+bytesondevice(\d{1,3})"), squeezed))
    .and_then(|index| crate::model::gpu::CudaOrdinal::try_from(index).ok());
    parsed
}
