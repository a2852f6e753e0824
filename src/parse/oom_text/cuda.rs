//! Raw CUDA runtime/driver errors: `CUDA error: out of memory`, `CUDA driver error: out of
//! memory`, cuBLAS allocation failures, and the memory-access bugs that are not OOM at all.
//!
//! Sources: `c10/cuda/CUDAException.h` (`C10_CUDA_CHECK`), `aten/src/ATen/cuda/Exceptions.h`
//! (`TORCH_CUDABLAS_CHECK`: "CUDA error: " + status + " when calling `" #EXPR "`"), ggml
//! `src/ggml-cuda/ggml-cuda.cu` (`ggml_cuda_error`: "CUDA error: %s" then
//! "  current device: %d, in function %s at %s:%d"); CUDA runtime and ggml-cuda sources.

use super::{back_to, Continuation, Family, Parsed};
use crate::model::failure::{EngineName, OomKind};

/// PyTorch's caching allocator failing while it writes its out-of-memory message: the
/// per-process report of that message (`c10/cuda/CUDACachingAllocator.cpp`
/// `reportProcessMemoryInfo`, 2.1+, called from `DeviceCachingAllocator::malloc` only when no
/// block can be had) asserts each NVML call, `TORCH_INTERNAL_ASSERT(NVML_SUCCESS ==
/// DriverAPI::get()->nvmlInit_v2_())`, `…nvmlDeviceGetHandleByPciBusId_v2_(pci_id,
/// &nvml_device))` and `TORCH_INTERNAL_ASSERT(NVML_SUCCESS == r)` (the process list), so a
/// container or a Jetson whose NVML fails prints `NVML_SUCCESS == r INTERNAL ASSERT FAILED at
/// ".../c10/cuda/CUDACachingAllocator.cpp":844, please report a bug to PyTorch.` in place of
/// the OOM message (its line number moves with each version: 838, 844, 963, 1154, …). A GPU
/// OOM without figures. The assert's condition with `INTERNAL ASSERT FAILED` after it on the
/// line, or at the line's end (a console wrapped before `INTERNAL ASSERT FAILED at`); not the
/// source's own `TORCH_INTERNAL_ASSERT(` line, and not an assert of another file. The position
/// of `NVML_SUCCESS`.
fn nvml_report_assert(text: &str) -> Option<usize> {
    let found = regex!(
        r"NVML_SUCCESS ?== ?(?:r\b|DriverAPI::get\(\)->nvml(?:Init_v2_|DeviceGetHandleByPciBusId_v2_)\b)"
    )
    .find(text)?;
    let before = &text[..found.start()];
    if before.contains("TORCH_INTERNAL_ASSERT") || before.trim_end().ends_with('(') {
        return None;
    }
    let rest = &text[found.end()..];
    let asserted = super::find(rest, "INTERNAL ASSERT FAILED").is_some()
        || regex!(r"^[^A-Za-z]*$").is_match(rest);
    let elsewhere = regex!(r"\.(?:cpp|cu|h|py)\b").find(rest).is_some()
        && super::find(rest, "CUDACachingAllocator").is_none();
    (asserted && !elsewhere).then_some(found.start())
}

/// tiny-cuda-nn (instant-ngp, nerfstudio's `tcnn` fields): `CUDA_CHECK_THROW(x)` in
/// `include/tiny-cuda-nn/common.h` throws `"CUDA Error: " #x " failed with error " +
/// cudaGetErrorString(result)` (newer releases put the source line first, `FILE_LINE " " #x`),
/// and `GPUMemory::resize` (`gpu_memory.h`) wraps it as `Could not allocate memory: …`: the
/// runtime call's own text, `cudaMalloc(&rawptr, n_bytes+DEBUG_GUARD_SIZE*2) failed with error
/// out of memory` (also cut after `out of memor` by a paste). A `cuda…(…)` call, then the
/// CUDA runtime's out-of-memory string. The position of `Could not allocate memory` on the
/// line, else of the call.
fn tcnn_check_throw(text: &str) -> Option<usize> {
    let found =
        regex!(r"\bcuda[A-Z]\w*\([^\n]{0,200}?\) failed with error out of memor").find(text)?;
    let line = text[..found.start()].rfind('\n').map_or(0, |at| at + 1);
    let head = &text[line..found.start()];
    Some(
        head.find("Could not allocate memory")
            .map_or(found.start(), |at| line + at),
    )
}

/// Lines that start one of this module's families, with the offset where the message starts.
pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    for needle in [
        "CUDA driver error: out of memory",
        "CUDA_ERROR_OUT_OF_MEMORY",
    ] {
        if let Some(position) = super::find(text, needle) {
            let begin = if needle.starts_with("CUDA_ERROR") {
                line_begin(text, position)
            } else {
                position
            };
            return Some((Family::CudaDriver, begin));
        }
    }
    // PyCUDA's guarded driver calls (`src/cpp/cuda.hpp` `CUDAPP_CALL_GUARDED`: the call's name
    // and the driver's status text, `cuMemAlloc failed: out of memory`, raised as
    // `pycuda._driver.MemoryError` for `CUDA_ERROR_OUT_OF_MEMORY`): the device's memory, not the
    // host's, whatever the class is called.
    if let Some(found) = regex!(r"\bcuMem\w* failed: out of memory").find(text) {
        let begin = back_to(text, found.start(), "pycuda.");
        return Some((Family::CudaDriver, begin));
    }
    if let Some(position) = nvml_report_assert(text) {
        return Some((Family::OtherGpu, position));
    }
    // CTranslate2 (faster-whisper, whisper-ctranslate2): `RuntimeError: CUDA failed with error out
    // of memory` (`include/ctranslate2/utils.h` `THROW_RUNTIME_ERROR("CUDA failed with error " +
    // cudaGetErrorString(status))` in its `CUDA_CHECK`).
    if let Some(position) = super::find(text, "CUDA failed with error out of memory") {
        return Some((Family::CudaError, error_begin(text, position)));
    }
    if let Some(position) = tcnn_check_throw(text) {
        return Some((Family::CudaError, position));
    }
    // The same check with the status number, any case (spconv/cumm's tensorview:
    // `cuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 …`). Status 2 is
    // `cudaErrorMemoryAllocation` in `driver_types.h`, `hipErrorOutOfMemory` in HIP.
    if let Some(found) =
        regex!(r"(?i)\b(?:cuda|hip) failed with error (?:2 |code 2:? )?:? ?out of memory")
            .find(text)
    {
        return Some((Family::CudaError, found.start()));
    }
    // Caffe's `CUDA_CHECK` (`include/caffe/util/device_alternate.hpp`: `CHECK_EQ(error,
    // cudaSuccess) << " " << cudaGetErrorString(error)`), printed by glog as `Check failed:
    // error == cudaSuccess (2 vs. 0)  out of memory` (status 2, `cudaErrorMemoryAllocation`).
    if let Some(found) =
        regex!(r"Check failed: \w+ == cudaSuccess \(2 vs\. 0\)\s+out of memory").find(text)
    {
        return Some((Family::CudaError, found.start()));
    }
    // MXNet's GPU storage managers (`src/storage/pooled_storage_manager.h`,
    // `GPUPooledStorageManager::Alloc`: `LOG(FATAL) << "cudaMalloc failed: " <<
    // cudaGetErrorString(e)`, raised as `mxnet.base.MXNetError`): the CUDA runtime's status, as
    // ggml-cuda words it (read there, with its size, when the line is ggml's).
    if let Some(at) = mxnet_storage_failure(text)
        .filter(|&at| regex!(r"cudaMalloc failed: ?out of memory").is_match(&text[at..]))
    {
        return Some((Family::CudaError, line_begin(text, at)));
    }
    // bitsandbytes' `CUDA_CHECK_RETURN` (`csrc/ops.cuh`, 0.3x–0.4x): "Error %s at line %d in
    // file %s" with `cudaGetErrorString` (`Error out of memory at line 529 in file
    // /src/csrc/ops.cu`), then `exit(1)`.
    if let Some(found) = regex!(r"\bError out of memory at line \d+ in file ").find(text) {
        return Some((Family::CudaError, found.start()));
    }
    // PhysX's GPU memory allocator (Isaac Gym, Isaac Sim/Lab, legged_gym: `PhysX/source/
    // gpucommon` `PxgCudaDeviceMemoryAllocator::allocate`: `PxgCudaDeviceMemoryAllocator fail to
    // allocate memory %zu bytes!! Result = %d`, the CUDA status: 2 is
    // `cudaErrorMemoryAllocation`, the driver's `CUDA_ERROR_OUT_OF_MEMORY`).
    if let Some(found) =
        regex!(r"PxgCudaDeviceMemoryAllocator fail to allocate memory \d+ bytes!+ Result = 2\b")
            .find(text)
    {
        return Some((Family::CudaError, found.start()));
    }
    // Thrust's device allocator (`thrust/system/cuda/detail/malloc_and_free.h`: a failed
    // `cudaMalloc` throws `thrust::system::detail::bad_alloc`, whose `what()` adds the CUDA
    // status, `std::bad_alloc: cudaErrorMemoryAllocation: out of memory`), as XGBoost's,
    // h2o4gpu's and cuML's kernels report it: the device's memory, not the host's `bad_alloc`.
    if let Some(position) = super::find(text, "thrust::system::detail::bad_alloc") {
        let begin = back_to(text, position, "terminate called");
        return Some((Family::CudaError, begin));
    }
    // Thrust's scratch space (`thrust/detail/temporary_allocator.inl`: a failed allocation of
    // the temporary buffer a sort or scan asks its device system for throws `bad_alloc(
    // "temporary_buffer::allocate: get_temporary_buffer failed")`), as MinkowskiEngine's and
    // PyG's CUDA kernels surface it through pybind11 (`MemoryError: std::bad_alloc: …`).
    if let Some(position) = super::find(text, "get_temporary_buffer failed") {
        return Some((Family::CudaError, error_begin(text, position)));
    }
    // DeepSpeed's inference kernels (`csrc/transformer/inference/includes/inference_context.h`
    // `InferenceContext::GenWorkSpace`: the workspace is sized against `cudaMemGetInfo`'s free
    // memory, `throw std::runtime_error("Workspace can't be allocated, no enough memory.")`).
    if let Some(position) = super::find(text, "Workspace can't be allocated, no enough memory") {
        return Some((Family::OtherGpu, error_begin(text, position)));
    }
    // nvdiffrast's `NVDR_CHECK_CUDA_ERROR` (`nvdiffrast/common/framework.h`: `TORCH_CHECK(!err,
    // "Cuda error: ", cudaGetLastError(), "[", #CUDA_CALL, ";]")`, and `HIP error: ` on ROCm):
    // the status as a number and the call that failed, `Cuda error: 2[cudaMalloc(&m_gpuPtr,
    // bytes);]`. Status 2 is `cudaErrorMemoryAllocation` (`hipErrorOutOfMemory` in HIP).
    if let Some(found) = regex!(r"\b(?:Cuda|HIP) error: 2\[").find(text) {
        return Some((Family::CudaError, found.start()));
    }
    // TensorRT 5-7's runtime allocator (`runtime.cpp (16) - Cuda Error in allocate: 2`, the
    // `nvinfer1::CudaError` its default `IGpuAllocator::allocate` throws when `cudaMalloc`
    // fails): status 2 is `cudaErrorMemoryAllocation`.
    if let Some(found) = regex!(r"Cuda Error in allocate: 2\b").find(text) {
        return Some((Family::CudaError, found.start()));
    }
    // spconv 1.x's `TV_CHECK_CUDA_ERR` (`include/tensorview/tensorview.h`: the file and line,
    // then `"cuda execution failed with error " << cudaGetLastError()`, later versions adding
    // `cudaGetErrorString`), vendored by mmdetection3d, OpenPCDet, Det3D and BEVFusion: status
    // 2 is `cudaErrorMemoryAllocation` (other statuses are other failures).
    if let Some(found) = regex!(r"(?i)\bcuda execution failed with error 2\b").find(text) {
        return Some((Family::CudaError, found.start()));
    }
    // TensorRT-LLM's Python runtime (`tensorrt_llm/runtime/generation.py` `CUASSERT`, 0.5–0.1x:
    // `RuntimeError(f"CUDA ERROR: {err}, error code reference: …cudaError_t")` with the
    // cuda-python status as a number): 2 is `cudaErrorMemoryAllocation`
    // (NVIDIA/TensorRT-LLM#788, session 52).
    if let Some(found) = regex!(r"\bCUDA ERROR: 2, error code reference").find(text) {
        return Some((Family::CudaError, found.start()));
    }
    if let Some(position) = wrapped_runtime_error(text) {
        return Some((Family::CudaError, position));
    }
    // `CUDA error: out of memory` (also pasted as `CUDA error:out of memory`), ROCm's
    // `HIP error: …`, and the pre-1.0 THC `cuda runtime error (2) : out of memory at …`.
    // tinygrad/cuda-python `CUDA Error 2, out of memory` (tinygrad `runtime/ops_cuda.py`:
    // `f"CUDA Error {status}, {message}"`), TurboMind `CUDA runtime error: out of memory`.
    for needle in [
        "CUDA error:",
        "HIP error:",
        "cuda runtime error (2) :",
        "CUDA runtime error:",
        "CUDA Error ",
        "CUDA error ",
        "ROCm error:",
    ] {
        if let Some(position) = super::find(text, needle) {
            let rest = text[position + needle.len()..].trim_start();
            let rest = match needle {
                "CUDA Error " => rest
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .trim_start_matches([',', ':'])
                    .trim_start(),
                // Older ggml `CUDA_CHECK`: "CUDA error %d at %s:%d: %s" then
                // "current device: %d" (`ggml-cuda.cu`, 2023).
                "CUDA error " => {
                    let after = rest.trim_start_matches(|c: char| c.is_ascii_digit());
                    if after.len() < rest.len() && after.starts_with(" at ") {
                        after
                            .find(": out of memory")
                            .map_or("", |at| &after[at + 2..])
                    } else if after.len() < rest.len() && rest.starts_with("2 ") {
                        // Its place elided by the reporter (`CUDA error 2 [...] out of
                        // memory`, status 2 = `cudaErrorMemoryAllocation`).
                        let elided = after.trim_start();
                        ["[...]", "[…]", "...", "…"]
                            .iter()
                            .find_map(|mark| elided.strip_prefix(mark))
                            .map_or("", str::trim_start)
                    } else {
                        ""
                    }
                }
                _ => rest,
            };
            if rest.starts_with("out of memory") {
                return Some((Family::CudaError, position));
            }
        }
    }
    // TVM's runtime (MLC-LLM): `Failed to allocate 1073741824 bytes with alignment 16 bytes`
    // on a device whose allocator is out of memory; only beside TVM's own words, since host
    // allocators print the same sentence.
    if let Some(found) = regex!(r"Failed to allocate \d+ bytes with alignment \d+ bytes").find(text)
    {
        let lower = text.to_ascii_lowercase();
        if lower.contains("tvm") || lower.contains("mlc") {
            return Some((Family::OtherGpu, line_begin(text, found.start())));
        }
    }
    if let Some(position) = super::find(text, "cudaErrorMemoryAllocation") {
        // The torch boilerplate "Search for `cudaErrorMemoryAllocation' in …" is a continuation.
        if !text[..position].contains("Search for") {
            return Some((Family::CudaError, error_begin(text, position)));
        }
    }
    // (hipBLAS's twin on ROCm: `HIPBLAS_STATUS_ALLOC_FAILED`, its workspace or handle.)
    if let Some(position) = super::find(text, "CUBLAS_STATUS_ALLOC_FAILED")
        .or_else(|| super::find(text, "HIPBLAS_STATUS_ALLOC_FAILED"))
    {
        return Some((Family::Cublas, error_begin(text, position)));
    }
    if let Some(position) = super::find(text, "CUBLAS_STATUS_NOT_INITIALIZED") {
        // Usually an OOM when it comes from creating the handle (`c10/cuda` and the CUDA runtime's error strings).
        if text.contains("cublasCreate") {
            return Some((Family::Cublas, error_begin(text, position)));
        }
    }
    // The other CUDA libraries' allocation statuses, as PyTorch and CuPy print them: cuFFT
    // (`aten/src/ATen/native/cuda/CuFFTUtils.h` `CUFFT_CHECK`: `cuFFT error: CUFFT_ALLOC_FAILED`;
    // CuPy `CuFFTError: CUFFT_ALLOC_FAILED`), cuSOLVER (`aten/src/ATen/cuda/Exceptions.h`
    // `TORCH_CUSOLVER_CHECK`: `cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling …`),
    // cuSPARSE (`TORCH_CUDASPARSE_CHECK`), cuRAND (`CURAND_STATUS_ALLOCATION_FAILED`) and cuTENSOR:
    // each library's handle or workspace could not get device memory (`cufft.h`, `cusolver_common.h`,
    // `cusparse.h`, `curand.h`, `cutensor/types.h`: "resource allocation failed").
    // Also Apple's Metal when a command buffer could not get the GPU's memory:
    // `MTLCommandBufferErrorDomain Code=8 "Insufficient Memory (IOAF code 8)"` (older macOS),
    // MLX's `[METAL] Command buffer execution failed: Insufficient Memory`
    // (`mlx/backend/metal/eval.cpp`, `kIOGPUCommandBufferCallbackErrorOutOfMemory` after it when
    // not cut).
    for needle in [
        "CUFFT_ALLOC_FAILED",
        "CUSOLVER_STATUS_ALLOC_FAILED",
        "CUSPARSE_STATUS_ALLOC_FAILED",
        "CURAND_STATUS_ALLOCATION_FAILED",
        "CUTENSOR_STATUS_ALLOC_FAILED",
        "Insufficient Memory (IOAF code 8)",
        "Command buffer execution failed: Insufficient Memory",
    ] {
        if let Some(position) = super::find(text, needle) {
            return Some((Family::OtherGpu, line_begin(text, position)));
        }
    }
    // OpenCV's CUDA modules (`modules/core/include/opencv2/core/private.cuda.hpp`
    // `checkCudaError` → `cv::error(Error::GpuApiCallError, cudaGetErrorString(err), …)`, 3.x–4.x):
    // `error: (-217:Gpu API call) out of memory in function 'copy'`.
    if let Some(position) = super::find(text, "(-217:Gpu API call) out of memory") {
        return Some((Family::CudaError, line_begin(text, position)));
    }
    // RAPIDS RMM's device memory resources (`rmm/detail/error.hpp` `RMM_CUDA_TRY_ALLOC`:
    // `out_of_memory: CUDA error at: <file>:<line>: cudaErrorMemoryAllocation out of memory`;
    // `pool_memory_resource.hpp` / `arena.hpp`: `RMM_FAIL("Maximum pool size exceeded", …)` →
    // `RMM failure at: <file>:<line>: Maximum pool size exceeded`), raised in Python by cuDF,
    // cuML and XGBoost as `MemoryError: std::bad_alloc: …`: the GPU's memory, not the host's.
    if let Some(position) = super::find(text, "RMM failure at") {
        if text.contains("Maximum pool size exceeded") || text.contains("out_of_memory") {
            return Some((Family::OtherGpu, line_begin(text, position)));
        }
    }
    // RMM's own exception for a refused device allocation (`rmm::out_of_memory`, a
    // `std::bad_alloc`: `MemoryError: std::bad_alloc: out_of_memory: CUDA error at: …`), even
    // with its name cut by the paste (`std::bad_alloc: out_of_m`, NVIDIA/cuml#5936).
    if let Some(position) = super::find(text, "bad_alloc: out_of_m") {
        return Some((Family::OtherGpu, line_begin(text, position)));
    }
    // RMM's `bad_alloc` raised from a device memory resource with its CUDA error cut off by the
    // paste (`MemoryError: std::bad_alloc: CUDA error at: /conda/…/librmm_…/include/rmm/mr/`): an
    // allocation of RMM's that CUDA refused; not one naming another CUDA error
    // (`cudaErrorIllegalAddress`), which is that error's.
    if let Some(position) = super::find(text, "bad_alloc: CUDA error at:") {
        let rest = &text[position..];
        let rmm = rest.contains("/rmm/") || rest.contains("librmm");
        let other_error = rest.contains("cudaError") && !rest.contains("cudaErrorMemoryAllocation");
        if rmm && !other_error {
            return Some((Family::OtherGpu, line_begin(text, position)));
        }
    }
    // CatBoost's GPU memory pool (`catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h`:
    // `CB_ENSURE_TYPE(…, TOutOfMemoryError, "Error: Out of memory. Requested " << size / MB <<
    // " MB; Free " << free / MB << " MB")`, raised as `NCudaLib::TOutOfMemoryError`).
    if let Some(position) = super::find(text, "Out of memory. Requested ") {
        if text.contains(" MB; Free ") {
            return Some((Family::OtherGpu, line_begin(text, position)));
        }
    }
    // `RMM_CUDA_TRY_ALLOC`'s own message, its CUDA error text often cut by the paste; RMM 23.x
    // and later name the size first (`out_of_memory: CUDA error (failed to allocate 88577278284
    // bytes) at: …`).
    if let Some(position) = super::find(text, "out_of_memory: CUDA error") {
        return Some((Family::OtherGpu, line_begin(text, position)));
    }
    // RMM before 0.11 (`include/rmm/rmm.h` `RMM_CHECK_CUDA`, `rmmError_t`: `ERROR: RMM call in
    // line 68of file …/managed_allocator.cuh failed with result RMM_ERROR_OUT_OF_MEMORY (4)
    // Attempted to allocate: 4000000000 bytes.`), cuDF's allocator then.
    if let Some(position) = super::find(text, "RMM_ERROR_OUT_OF_MEMORY") {
        return Some((Family::OtherGpu, line_begin(text, position)));
    }
    // MindSpore's runtime (`mindspore/ccsrc/runtime/graph_scheduler/actor/*.cc`, 2.x):
    // `Device(id:0) memory isn't enough and alloc failed, kernel name: …, alloc size: 1024B.`,
    // older `Device memory isn't enough and alloc failed, alloc size:1024`; its CPU device writes
    // `Memory isn't enough …` without `Device`.
    if let Some(found) =
        regex!(r"Device(?:\(id:\d+\))? memory isn't enough and alloc failed").find(text)
    {
        return Some((Family::OtherGpu, line_begin(text, found.start())));
    }
    // transformers refusing to load a bitsandbytes-quantized model that does not fit
    // (`quantizers/quantizer_bnb_4bit.py` / `quantizer_bnb_8bit.py` `validate_environment`, and
    // `modeling_utils.py` before 4.36): `ValueError: Some modules are dispatched on the CPU or
    // the disk. Make sure you have enough GPU RAM to fit the quantized model. …`: the device map
    // left modules off the GPU, which a quantized model cannot have.
    if let Some(position) = super::find(text, "Some modules are dispatched on the CPU or the disk")
    {
        if !text[..position].contains("raise ") {
            return Some((Family::OtherGpu, line_begin(text, position)));
        }
    }
    // accelerate `find_executable_batch_size`: every batch size down to 1 failed with an OOM
    // (`should_reduce_batch_size`), then `RuntimeError("No executable batch size found, reached
    // zero.")`.
    if let Some(position) = super::find(text, "No executable batch size found") {
        if !text[..position].contains("raise ") {
            return Some((Family::OtherGpu, line_begin(text, position)));
        }
    }
    // `cudaErrorLaunchFailure` ("unspecified launch failure"): a kernel faulted on the device
    // (a bad access the hardware reports without details), a fault like the two above.
    for needle in [
        "an illegal memory access was encountered",
        "misaligned address",
        "CUDA error: unspecified launch failure",
    ] {
        if let Some(position) = super::find(text, needle) {
            return Some((Family::IllegalAccess, error_begin(text, position)));
        }
    }
    None
}

/// TensorRT-LLM's `check_cuda_error` (`cpp/include/tensorrt_llm/common/cudaUtils.h` `check`,
/// 0.x–1.x): "[TensorRT-LLM][ERROR] CUDA runtime error in %s: %s" with the call and
/// `cudaGetErrorString` (also the copies in TensorRT's samples and vLLM's kernels, `CUDA runtime
/// error in %s: %s`), cut by a console's fixed width inside the status word (`…
/// cudaMallocAsync(ptr, n, mCudaStream->get()): out of memo` / `ry (/home/…/tllmBuffers.h:125)`).
/// The whole status is read by [`start_fallback`]; here only a status that is a cut `out of
/// memory` (at least `out of m`) ending the line, whose rest the next line carries
/// ([`cuda_error_continuation`]). The position of the wording.
fn wrapped_runtime_error(text: &str) -> Option<usize> {
    let position = super::find(text, "CUDA runtime error in ")?;
    let rest = &text[position..];
    let status = &rest[rest.find("): ")? + 3..];
    let status = status.trim_end();
    (status.len() >= "out of m".len() && status.len() < STATUS.len() && STATUS.starts_with(status))
        .then(|| back_to(text, position, "[TensorRT-LLM][ERROR]"))
}

/// CUDA's string for `cudaErrorMemoryAllocation` (`cudaGetErrorString`).
const STATUS: &str = "out of memory";

/// The rest of a status word that a console cut at the line's end ([`wrapped_runtime_error`]):
/// `ry (/home/…)` after `…: out of memo`.
fn completes_status(open_text: &str, text: &str) -> bool {
    let cut = open_text.trim_end();
    let Some(at) = cut.rfind(": ") else {
        return false;
    };
    let status = &cut[at + 2..];
    if status.len() < "out of m".len() || !STATUS.starts_with(status) || status == STATUS {
        return false;
    }
    text.trim_start().starts_with(&STATUS[status.len()..])
}

/// Any other "out of memory" that names a GPU and reads like an error (NCCL's
/// `Cuda failure 'out of memory'`, cupy, triton …). Tried after every precise family.
pub(super) fn start_fallback(text: &str) -> Option<(Family, usize)> {
    let lower_position =
        super::find(text, "out of memory").or_else(|| super::find(text, "Out of memory"))?;
    // Only an error's own wording: `…: out of memory`, `'out of memory'`, `(out of memory)`;
    // not prose such as "I get a CUDA out of memory error" (sglang-0.4.3-… fixture).
    // `ggml_cuda_host_malloc: failed to allocate … of pinned memory: out of memory` is a
    // warning: ggml falls back to pageable host memory.
    if text.contains("of pinned memory") {
        return None;
    }
    let before = text[..lower_position].trim_end();
    if !(before.is_empty() || before.ends_with([':', '\'', '"', '(', '`'])) {
        return None;
    }
    const GPU_WORDS: [&str; 9] = [
        "CUDA", "cuda", "Cuda", "GPU", "gpu", "NCCL", "HIP", "ROCm", "cuMem",
    ];
    const ERROR_WORDS: [&str; 6] = ["rror", "failed", "Failed", "failure", "Exception", "ERROR"];
    let gpu = GPU_WORDS.iter().any(|w| text.contains(w));
    // A check's source location before the status is an error's own wording too (ggml's
    // `CUDA_CHECK`: `CUDA error 2 at ggml-cuda.cu:5048: out of memory`, quoted from the file on:
    // `ggml-cuda.cu:5048: out of memory`).
    let located = regex!(r"\.(?:cu|cuh|cpp|cc|c|h|hpp):\d+:$").is_match(before);
    let error = located || ERROR_WORDS.iter().any(|w| text.contains(w));
    // Advice such as "If out-of-memory error occurs" is hyphenated and never matches.
    (gpu && error).then(|| (Family::OtherGpu, line_begin(text, lower_position)))
}

/// Start of the error wording: at `CUDA error:` if it precedes the status, else at `position`.
fn error_begin(text: &str, position: usize) -> usize {
    let before = &text[..position];
    before
        .rfind("CUDA error:")
        .or_else(|| before.rfind("CUDA error "))
        .unwrap_or(position)
}

/// Start of the exception (`RuntimeError: …`) holding `position`, else the line start.
/// Where MXNet's storage manager reports a failed `cudaMalloc` after its own source location
/// (`src/storage/./pooled_storage_manager.h:157: cudaMalloc failed: out of memory`, `storage.cc`):
/// the CUDA runtime's status, which ggml-cuda words the same way (`llama_cpp` leaves it here).
pub(super) fn mxnet_storage_failure(text: &str) -> Option<usize> {
    regex!(r"storage(?:_manager)?\.(?:h|cc):\d+\]?:? ?cudaMalloc failed")
        .find(text)
        .map(|found| found.start())
}

fn line_begin(text: &str, position: usize) -> usize {
    let before = &text[..position];
    let trimmed = text.len() - text.trim_start().len();
    before
        .rfind("Error: ")
        .and_then(|end| {
            before[..end]
                .rfind(|c: char| c.is_whitespace())
                .map(|s| crate::parse::text::after_char_at(before, s))
        })
        .unwrap_or(trimmed)
        .min(position)
}

/// Lines after `CUDA error: out of memory`: torch's boilerplate is skipped; ggml's
/// `current device: N, in function …` and the call line after it are kept.
pub(super) fn cuda_error_continuation(open_text: &str, lines: u32, text: &str) -> Continuation {
    const BOILERPLATE: [&str; 5] = [
        "CUDA kernel errors might be asynchronously reported",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING",
        "Compile with `TORCH_USE_CUDA_DSA`",
        "Search for `cudaErrorMemoryAllocation'",
        "Device-side assertions",
    ];
    if BOILERPLATE.iter().any(|b| text.contains(b)) {
        return Continuation::Skip;
    }
    if text.contains("current device:") || (lines == 1 && completes_status(open_text, text)) {
        return Continuation::Append;
    }
    // XGBoost's allocator (`src/common/device_helpers.cuh` `ThrowOOMError`): `Memory allocation
    // error on worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory`, then `- Free
    // memory: 8126464` and `- Requested memory: 33554432` on lines of their own.
    let trimmed = text.trim_start();
    if lines <= 2
        && (trimmed.starts_with("- Free memory:") || trimmed.starts_with("- Requested memory:"))
    {
        return Continuation::Append;
    }
    let after_device = open_text.contains("current device:");
    // ggml's `ggml_cuda_error` lines (`CUDA error: …`, `  current device: N, in function …`,
    // `  <call>`) pasted double-spaced: a blank line between them does not end the error.
    if text.trim().is_empty() && (lines == 1 || (after_device && lines <= 3)) {
        return Continuation::Skip;
    }
    if after_device && lines <= 3 && text.starts_with([' ', '\t']) {
        return Continuation::Append;
    }
    Continuation::Close
}

/// Whether a message (whitespace squeezed out) is RAPIDS RMM's (`RMM failure at: …`,
/// `out_of_memory: CUDA error …`), whose raiser may print figures on the lines under it.
pub(super) fn is_rmm(squeezed: &str) -> bool {
    squeezed.contains("RMMfailureat") || squeezed.contains("out_of_memory")
}

/// The size RMM names (23.x and later, `rmm/detail/error.hpp`: `out_of_memory: CUDA error
/// (failed to allocate 88577278284 bytes) at: …`; `RMM failure at: …arena_memory_resource.hpp:
/// 171: Maximum pool size exceeded (failed to allocate 5.985840 GiB): No room in arena.`), of its
/// message read as a CUDA error (its head cut at `CUDA error`) or as another GPU allocator's.
fn rmm_request(text: &str, parsed: &mut Parsed) {
    if let Some(size) =
        regex!(r"\(failed to allocate ([0-9][0-9.,]* ?[KMGT]?i?B|[0-9]+ bytes)\)(?: at:|:)")
            .captures(text)
            .and_then(|caps| caps.get(1))
            .and_then(|m| super::size::parse_size(m.as_str()))
    {
        parsed.figures.tried_to_allocate_bytes = Some(size);
    }
}

/// XGBoost's figures under its message (see `cuda_error_continuation`): exact byte counts
/// before 2.0, then `common::HumanMemUnit` (`src/common/common.cc`: the bytes over powers of
/// 1024 with `GB`, `MB`, `KB` or `B`, `53.1098GB`), also inside the repr of an exception Dask
/// relays (`…out of memory\\n- Free memory: 53.1098GB\\n- …`). Of a CUDA error or of RMM's.
fn xgboost_figures(squeezed: &str, parsed: &mut Parsed) {
    let count = |re: &regex::Regex| {
        let caps = re.captures(squeezed)?;
        let number = caps.get(1)?.as_str();
        let power = match caps.get(2).map(|unit| unit.as_str()) {
            Some("GB") => 3,
            Some("MB") => 2,
            Some("KB") => 1,
            Some("B") => 0,
            _ => return number.parse().ok().map(crate::model::Bytes),
        };
        let value: f64 = number.parse().ok()?;
        Some(crate::model::Bytes(
            (value * 1024f64.powi(power)).round() as u64
        ))
    };
    if let Some(free) = count(regex!(
        r"-Freememory:(\d+(?:\.\d+)?)(GB|MB|KB|B)?(?:-|\\|$)"
    )) {
        parsed.figures.free_bytes = Some(free);
    }
    if let Some(tried) = count(regex!(
        r"-Requestedmemory:(\d+(?:\.\d+)?)(GB|MB|KB|B)?(?:-|\\|$)"
    )) {
        parsed.figures.tried_to_allocate_bytes = Some(tried);
    }
}

pub(super) fn parse(family: Family, text: &str, squeezed: &str) -> Parsed {
    match family {
        Family::CudaError => {
            let kind = if text.starts_with("HIP error") || text.starts_with("ROCm error") {
                OomKind::HipRuntimeOutOfMemory
            } else {
                OomKind::CudaErrorOutOfMemory
            };
            let mut parsed = Parsed::new(kind, true);
            if let Some(caps) = regex!(r"currentdevice:(\d+)").captures(squeezed) {
                parsed.figures.gpu_index = caps.get(1).and_then(|m| m.as_str().parse().ok());
                parsed.engine_hint = Some(EngineName::Llamacpp);
            }
            if text.to_ascii_lowercase().contains("ggml") {
                parsed.engine_hint = Some(EngineName::Llamacpp);
            }
            xgboost_figures(squeezed, &mut parsed);
            rmm_request(text, &mut parsed);
            // PhysX prints the size it asked for (see `start`).
            if let Some(caps) =
                regex!(r"PxgCudaDeviceMemoryAllocatorfailtoallocatememory(\d+)bytes")
                    .captures(squeezed)
            {
                parsed.figures.tried_to_allocate_bytes = caps
                    .get(1)
                    .and_then(|m| m.as_str().parse().ok())
                    .map(crate::model::Bytes);
            }
            parsed
        }
        Family::CudaDriver => {
            let mut parsed = Parsed::new(OomKind::CudaDriverOutOfMemory, true);
            // TensorFlow's and XLA's stream executor (`stream_executor/cuda/cuda_driver.cc`
            // `GpuDriver::DeviceAllocate`: "failed to allocate %s (%d bytes) from device: %s"):
            // `failed to allocate 17.79G (19104890880 bytes) from device:
            // CUDA_ERROR_OUT_OF_MEMORY: out of memory`. The exact count, not the rounded size.
            parsed.figures.tried_to_allocate_bytes =
                regex!(r"(?i:f)ailedtoallocate[^()]*\((\d+)bytes\)fromdevice")
                    .captures(squeezed)
                    .and_then(|caps| caps.get(1))
                    .and_then(|m| m.as_str().parse().ok())
                    .map(crate::model::Bytes);
            parsed
        }
        Family::Cublas => {
            let mut parsed = Parsed::new(OomKind::CublasAlloc, true);
            // CNTK: `CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ;`.
            parsed.figures.gpu_index = regex!(r"GPU=(\d+)")
                .captures(text)
                .and_then(|caps| caps.get(1))
                .and_then(|m| m.as_str().parse().ok());
            parsed
        }
        Family::IllegalAccess => Parsed::new(OomKind::IllegalMemoryAccess, false),
        _ => {
            let mut parsed = Parsed::new(OomKind::OtherGpuOom, true);
            if super::pytorch::is_expandable_map(squeezed) {
                super::pytorch::expandable_map_figures(squeezed, &mut parsed.figures);
                return parsed;
            }
            // ONNX Runtime's `CUDA_CALL`/`HIP_CALL` (`core/providers/cuda/cuda_call.cc`):
            // `CUDA failure 2: out of memory ; GPU=0 ; hostname=… ; file=… ; expr=…`.
            parsed.figures.tried_to_allocate_bytes =
                regex!(r"Failedtoallocate(\d+)byteswithalignment")
                    .captures(squeezed)
                    .and_then(|caps| caps.get(1))
                    .and_then(|m| m.as_str().parse().ok())
                    .map(crate::model::Bytes);
            parsed.figures.gpu_index = regex!(r"failure\d+:outofmemory;GPU=(\d{1,3});")
                .captures(squeezed)
                .and_then(|caps| caps.get(1))
                .and_then(|m| m.as_str().parse().ok());
            rmm_request(text, &mut parsed);
            // CatBoost's pool: `Requested 8880 MB; Free 5902.061425 MB` (MB = 2^20 bytes).
            if let Some(caps) =
                regex!(r"Outofmemory\.Requested(\d+(?:\.\d+)?)MB;Free(\d+(?:\.\d+)?)MB")
                    .captures(squeezed)
            {
                let mib = |at: usize| {
                    caps.get(at)
                        .and_then(|m| super::size::parse_size(&format!("{} MiB", m.as_str())))
                };
                parsed.figures.tried_to_allocate_bytes = mib(1);
                parsed.figures.free_bytes = mib(2);
            }
            // XGBoost on RMM: its own figures under RMM's message (the request RMM names is the
            // exact one when both print it).
            if text.contains("RMM failure at") || text.contains("out_of_memory") {
                let tried = parsed.figures.tried_to_allocate_bytes;
                xgboost_figures(squeezed, &mut parsed);
                parsed.figures.tried_to_allocate_bytes =
                    tried.or(parsed.figures.tried_to_allocate_bytes);
            }
            // TensorRT 8.x's builder skipping a tactic it could not get a workspace for (`[W]
            // Skipping tactic 0x0000000000000000 due to exception autotuning: CUDA error 2
            // allocating 2147747325-byte buffer: out of memory`, session 48).
            if let Some(bytes) = regex!(r"allocating(\d+)-bytebuffer:outofmemory")
                .captures(squeezed)
                .and_then(|caps| caps.get(1))
                .and_then(|m| m.as_str().parse().ok())
            {
                parsed.figures.tried_to_allocate_bytes = Some(crate::model::Bytes(bytes));
            }
            // Old RMM: `… RMM_ERROR_OUT_OF_MEMORY (4)  Attempted to allocate: 4000000000 bytes.`
            if let Some(bytes) =
                regex!(r"RMM_ERROR_OUT_OF_MEMORY\(\d+\)Attemptedtoallocate:(\d+)bytes")
                    .captures(squeezed)
                    .and_then(|caps| caps.get(1))
                    .and_then(|m| m.as_str().parse().ok())
            {
                parsed.figures.tried_to_allocate_bytes = Some(crate::model::Bytes(bytes));
            }
            // MindSpore: `Device(id:0) memory isn't enough and alloc failed, …, alloc size: NB.`
            if let Some(caps) = regex!(
                r"Device(?:\(id:(\d{1,3})\))?memoryisn'tenoughandallocfailed.*?allocsize:(\d+)"
            )
            .captures(squeezed)
            {
                parsed.figures.gpu_index = caps
                    .get(1)
                    .and_then(|m| m.as_str().parse().ok())
                    .or(parsed.figures.gpu_index);
                parsed.figures.tried_to_allocate_bytes = caps
                    .get(2)
                    .and_then(|m| m.as_str().parse().ok())
                    .map(crate::model::Bytes);
            }
            parsed
        }
    }
}
