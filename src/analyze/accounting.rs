//! Memory accounting layers: each figure of the failure message and of the engine
//! log, with the layer it belongs to and the source it comes from.
//!
//! The layers nest: *allocated* (live tensors) ⊂ *reserved* (what the caching allocator holds,
//! including reusable free blocks) ⊂ *this process has* (NVML: reserved plus CUDA context,
//! cuBLAS/cuDNN workspaces, NCCL buffers, other allocators) ⊂ the device total. So allocated
//! and reserved are never added as if they were separate costs.

use crate::model::explain::AccountingLine;
use crate::model::failure::{OomKind, OomMessage};
use crate::model::{Bytes, Source};
use crate::parse::engine_log::EngineMemory;

/// NVML reports `(unsigned long long)-1` as "not available", printed as `17179869184.00 GiB`
/// by PyTorch (`c10/cuda/CUDACachingAllocator.cpp`, by version); anything this large is not a real figure.
pub const NOT_AVAILABLE_THRESHOLD: Bytes = Bytes(1 << 60);

fn line(key: &str, bytes: Bytes, source: Source, derived: bool, meaning: &str) -> AccountingLine {
    AccountingLine {
        key: key.to_string(),
        bytes,
        source,
        derived,
        meaning: meaning.to_string(),
        lower_bound: false,
    }
}

/// The reserved total: printed (PyTorch 1.4–2.0) or composed of its parts, allocated +
/// reserved-but-unallocated (2.1+, where the printed "allocated" already includes the cached
/// blocks of private pools; `c10/cuda/CUDACachingAllocator.cpp`). Returns (bytes, derived).
pub fn reserved_total(message: &OomMessage) -> Option<(Bytes, bool)> {
    let figures = &message.figures;
    if let Some(reserved) = figures.reserved_total_bytes {
        let derived = figures
            .derived_fields
            .iter()
            .any(|field| field == "reserved_total_bytes");
        return Some((reserved, derived));
    }
    match (
        figures.allocated_by_pytorch_bytes,
        figures.reserved_unallocated_bytes,
    ) {
        (Some(allocated), Some(unallocated)) => Some((allocated + unallocated, true)),
        _ => None,
    }
}

/// Without a "this process has" clause (inside a container NVML reports host PIDs, so PyTorch
/// cannot recognise itself; `c10/cuda/CUDACachingAllocator.cpp`, by version), the `Process N` entry that holds at least this
/// process's whole PyTorch reserve, and the least above it, is most likely this process.
/// Without the reserve (a message cut before "Of the allocated memory"), a lone `Process N`
/// that holds all the card's used memory (total − free) is this process: the process that
/// raised has a CUDA context of its own, so it is in NVML's list.
pub fn own_process_guess(message: &OomMessage) -> Option<u32> {
    let figures = &message.figures;
    // Printed, even as NVML's N/A: PyTorch recognised this process, the `Process N` are others.
    if figures.process_in_use_bytes.is_some() {
        return None;
    }
    // When the reserve cannot be composed (a message cut before "reserved by PyTorch but
    // unallocated"), the live tensors are a lower bound of it.
    let Some(reserved) = reserved_total(message)
        .map(|(reserved, _)| reserved)
        .or(figures.allocated_by_pytorch_bytes)
    else {
        return lone_process_holding_all(message);
    };
    figures
        .other_processes
        .iter()
        .filter_map(|p| p.in_use_bytes.map(|bytes| (p.pid, bytes)))
        .filter(|(_, bytes)| *bytes >= reserved && *bytes < NOT_AVAILABLE_THRESHOLD)
        .min_by_key(|(_, bytes)| bytes.get() - reserved.get())
        .map(|(pid, _)| pid)
}

/// The only `Process N` of a message, when it holds the card's whole used memory (within 1 %
/// of the total or 256 MiB, NVML and cudaMemGetInfo round differently).
fn lone_process_holding_all(message: &OomMessage) -> Option<u32> {
    let figures = &message.figures;
    let [process] = figures.other_processes.as_slice() else {
        return None;
    };
    let in_use = process
        .in_use_bytes
        .filter(|bytes| *bytes < NOT_AVAILABLE_THRESHOLD)?;
    let (total, free) = (figures.total_capacity_bytes?, figures.free_bytes?);
    let used = total.get().checked_sub(free.get())?;
    let slack = (total.get() / 100).max(256 << 20);
    (in_use.get().abs_diff(used) <= slack).then_some(process.pid)
}

/// Whether a message family comes from PyTorch's caching allocator (its figures are
/// allocator blocks, its `free` is measured after the cache was released).
pub fn is_caching_allocator(kind: OomKind) -> bool {
    matches!(
        kind,
        OomKind::PytorchCached
            | OomKind::PytorchReservedInTotal
            | OomKind::PytorchTotalCapacity
            | OomKind::PytorchAbsurdSize
            | OomKind::PytorchFractionRejected
            | OomKind::HipOutOfMemory
            | OomKind::XpuOutOfMemory
            | OomKind::NpuOutOfMemory
    )
}

/// Every figure with its layer and source.
pub fn lines(failure: Option<&OomMessage>, memory: &EngineMemory) -> Vec<AccountingLine> {
    let mut lines = Vec::new();
    let framework = Source::FrameworkError;
    if let Some(message) = failure {
        let figures = &message.figures;
        // Only PyTorch's caching allocator rounds requests and retries after releasing its cache;
        // a ggml buffer (llama.cpp "allocating … MiB"), a TensorFlow/XLA BFC request or a raw
        // CUDA error is the size the engine asked for, as it printed it.
        let caching_allocator = is_caching_allocator(message.kind);
        if let Some(bytes) = figures.total_capacity_bytes {
            lines.push(line("total_capacity", bytes, framework, false,
                "the device's memory as CUDA reports it (cudaMemGetInfo total); it excludes what the driver reserves, so it is below nvidia-smi's total"));
        }
        if let Some(bytes) = figures.free_bytes {
            lines.push(line("free", bytes, framework, false,
                if caching_allocator {
                    "free on the whole device at the moment of failure (cudaMemGetInfo), after PyTorch released its cached blocks and retried"
                } else {
                    "free on the whole device at the moment of failure, as the message printed it"
                }));
        }
        if let Some(bytes) = figures.tried_to_allocate_bytes {
            lines.push(line("tried_to_allocate", bytes, framework, false,
                if message.kind == OomKind::PytorchAbsurdSize {
                    "a lower bound: PyTorch refuses any request of 1 EiB (2^60 bytes) or more and prints only `more than 1EB`, not the size"
                } else if caching_allocator {
                    "the block the caching allocator asked the driver for (rounded up to 2 MiB, 20 MiB or a multiple of 2 MiB), not necessarily one tensor's size"
                } else if message.kind == OomKind::LlamacppAlloc {
                    "the ggml buffer that could not be allocated (weights, KV cache or compute buffer), as llama.cpp printed it"
                } else {
                    "the size of the allocation that failed, as the message printed it"
                }));
            if let Some(last) = lines.last_mut() {
                last.lower_bound = figures.tried_to_allocate_is_lower_bound();
            }
        }
        if let Some(bytes) = figures.allowed_bytes {
            lines.push(line(
                "allowed",
                bytes,
                framework,
                false,
                "the cap set with torch.cuda.set_per_process_memory_fraction",
            ));
        }
        // NVML's N/A sentinel is no figure: the verdict's evidence says it was not reported.
        if let Some(bytes) = figures.process_in_use_reported() {
            lines.push(line("process_in_use", bytes, framework, false,
                "NVML's figure for this process (printed inside the error): all PyTorch reserved plus CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers and other allocators"));
        }
        // PyTorch's allocators (its caching allocator, MPS's, cudaMallocAsync's) print PyTorch's
        // figures; another framework's pool (CuPy's, CUDA.jl's) prints its own.
        let pytorch_pool = caching_allocator
            || matches!(
                message.kind,
                OomKind::MpsOutOfMemory | OomKind::CudaMallocAsync
            );
        let reserved = reserved_total(message);
        if let Some((bytes, derived)) = reserved {
            lines.push(line("reserved_total", bytes, framework, derived,
                if pytorch_pool {
                    "everything PyTorch's caching allocator holds (allocated + reserved-but-unallocated); it contains the allocated figure, never add the two"
                } else {
                    "everything the framework's memory pool holds, as its error printed it; it contains the allocated figure, never add the two"
                }));
        }
        if let Some(bytes) = figures.allocated_by_pytorch_bytes {
            let (key, what) = if pytorch_pool {
                (
                    "allocated_by_pytorch",
                    "live tensors (blocks handed out by the caching allocator); part of reserved",
                )
            } else {
                (
                    "allocated",
                    "live arrays (what the framework's memory pool had handed out, as its error printed it); part of reserved",
                )
            };
            lines.push(line(key, bytes, framework, false, what));
        }
        if let Some(bytes) = figures.private_pools_bytes {
            lines.push(line("private_pools", bytes, framework, false,
                "cached free blocks of CUDA-graph private pools, counted inside the allocated figure (PyTorch 2.4+)"));
        }
        if let Some(bytes) = figures.reserved_unallocated_bytes {
            lines.push(line("reserved_unallocated", bytes, framework, false,
                "held by the caching allocator but not used by tensors: reusable by this process only; large values make fragmentation plausible but do not prove it (a memory snapshot does)"));
        }
        if let (Some(process), Some((reserved, _))) = (figures.process_in_use_reported(), reserved)
        {
            if process >= reserved {
                lines.push(line("non_pytorch", process.saturating_sub(reserved), framework, true,
                    "this process's memory outside PyTorch's allocator: CUDA context, cuBLAS workspaces, NCCL, other libraries (process in use − reserved)"));
            }
        }
        let own = own_process_guess(message);
        for other in &figures.other_processes {
            match other.in_use_bytes {
                Some(bytes) if bytes < NOT_AVAILABLE_THRESHOLD => lines.push(line(
                    &format!("process_{}", other.pid),
                    bytes,
                    framework,
                    false,
                    if own == Some(other.pid) {
                        "probably this process itself: it holds at least PyTorch's whole reserve, and no `this process has` clause was printed (inside a container NVML shows host PIDs)"
                    } else {
                        "another process on the same GPU (NVML, host PID): memory this process cannot use"
                    },
                )),
                _ => {}
            }
        }
    }
    let log = Source::EngineLog;
    let engine_lines: [(&str, Option<Bytes>, &str); 8] = [
        (
            "engine_total_gpu",
            memory.total_gpu,
            "the GPU's total as the engine measured it at start",
        ),
        (
            "engine_free_at_start",
            memory.free_at_start,
            "free memory the engine saw before loading",
        ),
        (
            "weights",
            memory.weights,
            "model weights on the GPU, as the engine reported after loading",
        ),
        (
            "activation_peak",
            memory.activation_peak,
            "peak activation memory of the profiling pass",
        ),
        (
            "engine_non_torch",
            memory.non_torch,
            "non-torch memory the engine measured (CUDA context, NCCL)",
        ),
        (
            "kv_cache",
            memory.kv_cache,
            "the KV-cache budget or size the engine reserved",
        ),
        (
            "cuda_graphs",
            memory.cuda_graphs,
            "memory taken by CUDA-graph capture",
        ),
        (
            "compute_buffers",
            memory.compute_buffers,
            "llama.cpp compute buffers (scratch for one batch)",
        ),
    ];
    for (key, bytes, meaning) in engine_lines {
        if let Some(bytes) = bytes {
            lines.push(line(key, bytes, log, false, meaning));
        }
    }
    lines
}
