//! llama.cpp / ggml / ollama allocation failures (`ggml/src/ggml-backend.cpp`, `src/llama.cpp`). One failure prints a chain
//! of lines, read as one message:
//!
//! ```text
//! ggml_backend_cuda_buffer_type_alloc_buffer: allocating 6000.00 MiB on device 0: cudaMalloc failed: out of memory
//! alloc_tensor_range: failed to allocate CUDA0 buffer of size 6291456000
//! llama_model_load: error loading model: unable to allocate CUDA0 buffer
//! llama_model_load_from_file_impl: failed to load model
//! ```
//!
//! Sources: ggml `src/ggml-cuda/ggml-cuda.cu`, `src/ggml-alloc.c` (`alloc_tensor_range`,
//! `ggml_gallocr_reserve_n`), `src/ggml-backend.cpp`; llama.cpp `src/llama-model.cpp`,
//! `src/llama-context.cpp`, `src/llama-kv-cache*.cpp`; ollama `llm/server.go`.

use super::{integer_of, parse_size, Continuation, Family, Parsed};
use crate::model::failure::{EngineName, OomKind};
use crate::model::gpu::CudaOrdinal;
use crate::model::Bytes;

/// Lines that start (and continue) a chain.
fn is_failure_line(text: &str) -> bool {
    if text.contains("pinned memory") {
        // `ggml_cuda_host_malloc: failed to allocate … MiB of pinned memory`: a warning, ggml
        // falls back to pageable memory.
        return false;
    }
    is_ggml_cuda_malloc(text)
        || text.contains("hipMalloc failed")
        // ggml-vulkan `ggml_vk_create_buffer`: "ggml_vulkan: Device memory allocation of size N
        // failed." then "ggml_vulkan: " + `vk::SystemError::what()`
        // ("vk::Device::allocateMemory: ErrorOutOfDeviceMemory"); newer ggml words it in
        // `ggml_vk_create_buffer_check` ("ggml_vulkan: Memory allocation of size N failed.").
        || is_vulkan_allocation(text)
        // (the Kompute backend of older llama.cpp forks: "Error allocating memory
        // ErrorOutOfDeviceMemory"), or a title that quotes the error in brackets after the
        // failure (`Vulkan Device memory allocation failed (ErrorOutOfDeviceMemory )`, `Vulkan Memory
        // Allocation Failure on Large Buffer Request (ErrorOutOfDeviceMemory)`); not prose
        // that names the error in backticks.
        || regex!(r"(?::\s*|allocating memory |(?i:allocation fail)[^()\n]{0,60}\(\s*)ErrorOutOfDeviceMemory")
            .is_match(text)
        // ggml-metal: "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"
        // after "command buffer N failed with status 5"; not the code alone on a line of its own,
        // the wrapped tail of MLX's `[METAL] Command buffer execution failed: Insufficient Memory`.
        || (regex!(r"[:(]kIOGPUCommandBufferCallbackErrorOutOfMemory").is_match(text)
            && !text.trim_start().starts_with('('))
        // ggml-metal's buffer (`ggml-metal.m` `ggml_backend_metal_buffer_type_alloc_buffer`,
        // newer `ggml-metal-device.m` `ggml_metal_buffer_init` / `ggml_metal_buffer_map`):
        // "%s: error: failed to allocate buffer, size = %8.2f MiB" when `newBufferWithLength`
        // returns nil.
        || is_metal_buffer_failure(text)
        // Its 2023 form (`ggml-metal.m` `ggml_metal_add_buffer`: "%s: buffer '%s' size %zu is
        // larger than buffer maximum of %zu", the device's `maxBufferLength`): the model's
        // buffer could not be mapped into the GPU's memory.
        || is_metal_buffer_too_large(text)
        // ggml-sycl `ggml_backend_sycl_buffer_type_alloc_buffer`: "can't allocate %lu Bytes of
        // memory on device" (then `failed to allocate SYCL0 buffer`).
        || regex!(r"can't allocate \d+ Bytes of memory on device").is_match(text)
        // (ggml-alloc `ggml_gallocr_reserve_n`: "failed to allocate %s buffer of size %zu" with
        // `ggml_backend_buft_name`, which Vulkan sets to the device's name: `NVIDIA GeForce GT
        // 730`.)
        || regex!(r"failed to allocate (?:\S+ ){0,8}buffer of size \d+").is_match(text)
        || regex!(r"unable to allocate \S+ buffer").is_match(text)
        // The same line retyped in an issue title (`Unable to allocate CUDA0 buffer when …`,
        // llama.cpp `src/llama-model.cpp` `load_tensors`: `"unable to allocate %s buffer"`
        // with `ggml_backend_buft_name`): only a GPU backend's buffer, since numpy's host
        // `Unable to allocate 3.1 GiB for an array` starts the same way.
        || regex!(r"Unable to allocate (?:CUDA|ROCm|Vulkan|SYCL|Metal|MUSA|CANN)\d* buffer")
            .is_match(text)
        // ggml-alloc's line retyped without its size (a title `failed to allocate ROCm0 buffer
        // of size > b1240`, session 49): a GPU backend's buffer by its name.
        || regex!(r"failed to allocate (?:CUDA|ROCm|Vulkan|SYCL|Metal|MUSA|CANN)\d+ buffer")
            .is_match(text)
        // ggml-vulkan `ggml_vk_create_buffer`: a buffer larger than the device's largest
        // allocation is refused before Vulkan is asked (`throw vk::OutOfDeviceMemoryError(
        // "Requested buffer size exceeds device memory allocation limit")`), quoted so in a
        // title without the error's name (session 49).
        || text.contains("Requested buffer size exceeds device memory allocation limit")
        || text.contains("failed to allocate buffer for kv cache")
        || text.contains("llama_kv_cache_init() failed")
        || text.contains("failed to allocate compute")
        || text.contains("not enough space in the buffer")
}

/// ggml-vulkan's failed device allocation: `Device memory allocation of size N failed.`
/// (`ggml_vk_create_buffer`, 2024) or `ggml_vulkan: Memory allocation of size N failed.`
/// (`ggml_vk_create_buffer_check`, 2025: `std::cerr << "ggml_vulkan: Memory allocation of size
/// " << size << " failed." << std::endl`, before it rethrows Vulkan's error), as apps relay it
/// (Jan: `llamacpp error: Error: ggml_vulkan: Memory allocation of size 638668800 failed.`).
fn is_vulkan_allocation(text: &str) -> bool {
    text.contains("Device memory allocation of size")
        || regex!(r"ggml_vulkan: Memory allocation of size \d+").is_match(text)
}

/// ggml-metal's "…metal…: error: failed to allocate buffer, size = N MiB", and its mid-2023
/// form with the buffer's name (`ggml-metal.m` `ggml_metal_add_buffer`: "%s: error: failed to
/// allocate '%-16s' buffer, size = %8.2f MiB", the model's `data`, the `eval` or `kv` buffer).
fn is_metal_buffer_failure(text: &str) -> bool {
    regex!(r"metal\w*: error: failed to allocate (?:'[^']*' )?buffer, size =\s*[\d.]+ MiB")
        .is_match(text)
}

/// ggml-cuda's `cudaMalloc failed: out of memory`; not MXNet's storage manager, which prints
/// the same words after its own source location (`src/storage/./pooled_storage_manager.h:157:
/// cudaMalloc failed: out of memory`, `mxnet.base.MXNetError`): a CUDA runtime error there.
fn is_ggml_cuda_malloc(text: &str) -> bool {
    text.contains("cudaMalloc failed")
        && super::cuda::mxnet_storage_failure(text).is_none()
        && !text.contains("MXNetError")
}

/// ggml-metal's 2023 refusal of a buffer larger than the device's largest (see `start`).
fn is_metal_buffer_too_large(text: &str) -> bool {
    regex!(r"buffer '\w+' size \d+ is larger than buffer maximum").is_match(text)
}

/// The backend's allocation line that opens a failure (`…_buffer_type_alloc_buffer: …`).
fn is_chain_head(text: &str) -> bool {
    is_ggml_cuda_malloc(text)
        || text.contains("_buffer_type_alloc_buffer:")
        || is_vulkan_allocation(text)
        || is_metal_buffer_failure(text)
}

/// A line that only names the source location of the line before (`" - llama_engine.cc:533"`,
/// cortex/Jan logs): part of the chain, adds nothing.
fn is_source_suffix(text: &str) -> bool {
    regex!(r"^\s*-?\s*[\w./-]+\.(?:cc|cpp|c|h|go|rs):\d+\s*$").is_match(text)
}

pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    if !is_failure_line(text) {
        return None;
    }
    Some((Family::LlamaChain, text.len() - text.trim_start().len()))
}

/// The rest of the chain: further failure lines and the "failed to load model" epilogue. A
/// second `cudaMalloc failed` starts a new failure (a retry), so it closes the open one.
pub(super) fn continuation(open_text: &str, text: &str) -> Continuation {
    if is_chain_head(text) && is_chain_head(open_text) {
        return Continuation::Close;
    }
    if is_source_suffix(text) {
        return Continuation::Skip;
    }
    const EPILOGUE: [&str; 10] = [
        "failed to load model",
        "failed to initialize the context",
        "error loading model",
        "exiting due to model loading error",
        "failed to create context",
        "Failed to load model",
        "Failed to create llama_context",
        "unable to load model",
        "current device:",
        "retrying without pipeline parallelism",
    ];
    if is_failure_line(text) || EPILOGUE.iter().any(|e| text.contains(e)) {
        Continuation::Append
    } else {
        Continuation::Close
    }
}

pub(super) fn parse(text: &str, s: &str) -> Parsed {
    let buffer_type = regex!(r"(?:failed to|unable to) allocate (\S+) buffer")
        .captures(text)
        .and_then(|caps| caps.get(1))
        .map(|m| m.as_str().to_string())
        .filter(|name| name != "compute" && name != "buffer");
    // `ggml_backend_cpu_buffer_type_alloc_buffer` and `CPU`/`CUDA_Host` buffers are host RAM.
    let host_buffer = text.contains("ggml_backend_cpu_buffer_type")
        || buffer_type
            .as_deref()
            .is_some_and(|name| name.starts_with("CPU") || name.ends_with("_Host"));
    let gpu_failure = s.contains("cudaMallocfailed")
        || s.contains("Bytesofmemoryondevice")
        || s.contains("hipMallocfailed")
        || s.contains("ErrorOutOfDeviceMemory")
        || s.contains("Devicememoryallocationofsize")
        || s.contains("ggml_vulkan:Memoryallocationofsize")
        || s.contains("kIOGPUCommandBufferCallbackErrorOutOfMemory")
        || is_metal_buffer_failure(text)
        || is_metal_buffer_too_large(text);
    let mut parsed = if host_buffer && !gpu_failure {
        Parsed::new(OomKind::HostMemory, false)
    } else {
        Parsed::new(OomKind::LlamacppAlloc, true)
    };
    // A bare `cudaMalloc failed: out of memory` (a sentence or a title quoting it, with no
    // ggml function, buffer or size around it) is the CUDA runtime's words, which other
    // programs print too: no engine from it.
    let bare = text.contains("cudaMalloc failed")
        && !regex!(r"(?i)ggml|llama|buffer|allocating|on device|metal|sycl|vulkan|vk::")
            .is_match(text);
    // MLX raises Metal's refusal in its own words (`mlx/backend/metal/eval.cpp`: `[METAL] Command
    // buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallback
    // ErrorOutOfMemory)`): the same device error as ggml-metal's, another program.
    let mlx = text.contains("[METAL] Command buffer execution failed");
    parsed.engine_hint = if text.contains("ollama") || text.contains("llama runner") {
        Some(EngineName::Ollama)
    } else if bare || mlx {
        None
    } else {
        Some(EngineName::Llamacpp)
    };

    // Exact bytes from "buffer of size N" beat the rounded "allocating X MiB". ggml-vulkan's
    // device allocation that failed (`Device memory allocation of size N failed.`) is printed
    // before the buffer it was for (`failed to allocate Vulkan0 buffer of size M`, M larger
    // when the buffer spans several allocations): the first figure, the request that failed.
    let exact = integer_of(
        regex!(r"(?:Device memory|ggml_vulkan: Memory) allocation of size (\d+)"),
        text,
    )
    .or_else(|| integer_of(regex!(r"buffer of size (\d+)"), text))
    .or_else(|| {
        integer_of(
            regex!(r"buffer '\w+' size (\d+) is larger than buffer maximum"),
            text,
        )
    })
    .or_else(|| {
        integer_of(
            regex!(r"can't allocate (\d+) Bytes of memory on device"),
            text,
        )
    })
    .map(Bytes);
    let rounded = regex!(r"allocating ([\d.,]+) MiB on device|metal\w*: error: failed to allocate (?:'[^']*' )?buffer, size =\s*([\d.]+) MiB")
        .captures(text)
        .and_then(|caps| caps.get(1).or_else(|| caps.get(2)))
        .and_then(|m| parse_size(&format!("{} MiB", m.as_str())));
    let needed = regex!(r"needed (\d+), available")
        .captures(text)
        .and_then(|caps| caps.get(1))
        .and_then(|m| m.as_str().parse().ok())
        .map(Bytes);
    parsed.figures.tried_to_allocate_bytes = exact.or(rounded).or(needed);

    parsed.figures.gpu_index = integer_of(regex!(r"on device (\d+)"), text)
        .or_else(|| integer_of(regex!(r"current device: (\d+)"), text))
        .or_else(|| {
            buffer_type
                .as_deref()
                .and_then(|name| integer_of(regex!(r"^(?:CUDA|ROCm|MUSA|Vulkan|SYCL)(\d+)$"), name))
        })
        .and_then(|index| CudaOrdinal::try_from(index).ok());

    let lower = s.to_ascii_lowercase();
    parsed.details.buffer_purpose = if lower.contains("gallocr") || lower.contains("compute") {
        Some("compute".to_string())
    } else if lower.contains("kvcache") || lower.contains("kv_cache") {
        Some("kv cache".to_string())
    // `alloc_tensor_range` (ggml-alloc.c, under `ggml_backend_alloc_ctx_tensors_from_buft`)
    // places any context's tensors: the model's (`load_tensors`), the KV cache's
    // (`llama_kv_cache`), a LoRA adapter's; it names no purpose by itself.
    } else if lower.contains("loadingmodel")
        || lower.contains("load_tensors")
        || lower.contains("model_load")
    {
        Some("model weights".to_string())
    } else {
        None
    };
    parsed.details.buffer_type = buffer_type;
    if !parsed.is_gpu_oom {
        // Host RAM: the size is not a GPU figure.
        parsed.details.host_required_bytes = parsed.figures.tried_to_allocate_bytes.take();
        parsed.figures.gpu_index = None;
    }
    parsed
}
