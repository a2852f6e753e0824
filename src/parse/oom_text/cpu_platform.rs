//! An allocator message that both the GPU and the CPU back end print, judged by the lines before
//! it: a run the log shows on the CPU ran out of host memory, not the GPU's.
//!
//! * XLA's CPU client (`xla/pjrt/cpu/tracked_tfrt_cpu_device_buffer.h`
//!   `MaybeOwningCpuMemory::Allocate`: `ResourceExhausted("Out of memory allocating %d
//!   bytes.", size)` when `tsl::port::AlignedMalloc` returns null), raised by JAX as
//!   `XlaRuntimeError` / `JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating N
//!   bytes.` The head is CuPy's too (`cupy/cuda/memory.pyx`, which goes on with `(allocated so
//!   far: …)`), and a bare status says nothing of the device: the run must show the CPU platform
//!   (`JAX_PLATFORMS=cpu`, `CpuDevice(id=0)`, the device `TFRT_CPU_0`, JAX's `falling back to
//!   cpu` warning of `jax/_src/xla_bridge.py`, `CPU platform`).
//! * ONNX Runtime's BFC arena (`onnxruntime/core/framework/bfc_arena.cc`
//!   `BFCArena::AllocateRawInternal`: "Failed to allocate memory for requested buffer of size
//!   N"), the arena of the CUDA provider and of the CPU provider alike: a session the log shows
//!   with only `CPUExecutionProvider` (a providers list naming no GPU provider, or the Python
//!   API's warning `Specified provider 'CUDAExecutionProvider' is not in available provider
//!   names.` of `onnxruntime_inference_collection.py` `check_and_normalize_provider_args`) ran
//!   out of host memory.

use crate::model::failure::{EngineName, OomKind, OomMessage};
use crate::model::Bytes;

/// Whether `message` is one that only the lines before it can place on the host.
pub fn may_be_host(message: &OomMessage) -> bool {
    message.is_gpu_oom && (xla_cpu_wording(message) || ort_arena(message))
}

fn xla_cpu_wording(message: &OomMessage) -> bool {
    message.kind == OomKind::CupyOutOfMemory
        && message.text.contains("Out of memory allocating")
        && !message.text.contains("allocated so far")
}

/// The message's own line raised as XLA's status (the message's text starts at its wording).
fn xla_status(line: &str) -> bool {
    line.contains("Out of memory allocating")
        && ["RESOURCE_EXHAUSTED", "XlaRuntimeError", "JaxRuntimeError"]
            .iter()
            .any(|word| line.contains(word))
}

fn ort_arena(message: &OomMessage) -> bool {
    message.kind == OomKind::OtherGpuOom
        && super::frameworks::ORT_ARENA_WORDINGS
            .iter()
            .any(|wording| message.text.contains(wording))
}

/// JAX or XLA shown running on the CPU platform.
fn jax_on_cpu(text: &str) -> bool {
    regex!(r"(?i)\bJAX_PLATFORMS?(?:_NAME)?\s*[=:]\s*['\x22]?cpu\b|\bCpuDevice\(id=|\bTFRT_CPU_\d|falling back to cpu\b|\bcpu platform\b|\bplatform[=:]\s*['\x22]?cpu\b")
        .is_match(text)
}

/// GPU execution providers of ONNX Runtime.
const ORT_GPU_PROVIDERS: [&str; 6] = [
    "CUDAExecutionProvider",
    "TensorrtExecutionProvider",
    "ROCMExecutionProvider",
    "MIGraphXExecutionProvider",
    "DmlExecutionProvider",
    "NvTensorRTRTXExecutionProvider",
];

/// Turns `message` into a host-memory failure when `before` (the lines before it and its own
/// first line) shows the CPU back end. Returns whether it did.
pub fn judge<'a>(message: &mut OomMessage, before: impl Iterator<Item = &'a str>) -> bool {
    let mut lines: Vec<&str> = before.collect();
    lines.push(message.text.as_str());
    let xla = xla_cpu_wording(message);
    let host = if xla {
        lines.iter().any(|line| xla_status(line)) && lines.iter().any(|line| jax_on_cpu(line))
    } else if ort_arena(message) {
        let unavailable = |line: &str| line.contains("is not in available provider names");
        let cpu = lines.iter().any(|line| {
            unavailable(line)
                || (line.contains("CPUExecutionProvider")
                    && !ORT_GPU_PROVIDERS.iter().any(|gpu| line.contains(gpu)))
        });
        let gpu = lines.iter().any(|line| {
            !unavailable(line) && ORT_GPU_PROVIDERS.iter().any(|gpu| line.contains(gpu))
        });
        cpu && !gpu
    } else {
        false
    };
    if !host {
        return false;
    }
    let requested = message.figures.tried_to_allocate_bytes.or_else(|| {
        regex!(r"(?:Out of memory allocating|buffer of size) ([\d,]+)")
            .captures(&message.text)
            .and_then(|caps| caps.get(1)?.as_str().replace(',', "").parse().ok())
            .map(Bytes)
    });
    if xla {
        message.engine_hint = Some(EngineName::Jax);
    }
    message.kind = OomKind::HostMemory;
    message.is_gpu_oom = false;
    message.details.host_required_bytes = requested.or(message.details.host_required_bytes);
    true
}
