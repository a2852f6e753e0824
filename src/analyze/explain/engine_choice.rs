//! The engine a report names: the best evidence of the log lines weighed against what the
//! failure messages themselves show, and PyTorch's own wording when nothing else names one.

use super::*;

/// The engine of the report: the best evidence of the log lines (`collected.engine`), weighed
/// against what the failure messages themselves show (TensorRT-LLM's or TurboMind's error
/// prefix, XLA's or TensorFlow's exception, the oom_text engine hint). A traceback whose only
/// library frames are torch is PyTorch; a torch exception with nothing else, too.
pub(super) fn choose_engine(collected: &Collected, failure: Option<&OomMessage>) -> EngineName {
    let mut best: Option<(EngineName, Certainty)> = collected
        .engine
        .map(|(name, certainty, _)| (name, certainty));
    let mut offer = |name: EngineName, certainty: Certainty| {
        if best.is_none_or(|existing| engines::outranks((name, certainty), existing)) {
            best = Some((name, certainty));
        }
    };
    for message in collected.ooms.iter() {
        if let Some(name) = engines::engine_of_message(&message.text, message.exception.as_deref())
        {
            offer(name, Certainty::Strong);
        }
        if let Some((name, certainty)) = message
            .stream
            .as_deref()
            .and_then(engines::engine_of_stream)
        {
            offer(name, certainty);
        }
    }
    if let Some(hint) = failure.and_then(|message| message.engine_hint) {
        offer(hint, Certainty::Weak);
    }
    // A later message of the same failure may name the engine the first one does not (TGI's
    // router relays the shard's "Server error: CUDA out of memory" after the shard's traceback).
    for message in collected.ooms.iter() {
        if let Some(hint) = message.engine_hint {
            offer(hint, Certainty::Weak);
        }
    }
    if let Some((name, _)) = best {
        return name;
    }
    // TVM's runtime error with nothing else named: MLC-LLM's (see `engines::tvm_runtime_error`).
    let tvm = collected
        .ooms
        .iter()
        .any(|m| engines::tvm_runtime_error(&m.text, m.exception.as_deref()));
    if tvm {
        return EngineName::MlcLlm;
    }
    // PyTorch's own wording: its exception classes, the caching allocator's message families
    // and the `TORCH_USE_CUDA_DSA` / `PYTORCH_…_ALLOC_CONF` hints it appends.
    let torch = collected.ooms.iter().any(|m| {
        // An exception class of torch's (`torch.OutOfMemoryError`), not a path that holds
        // the word (Torch7's `…/torch/install/share/lua/5.1/cudnn/init.lua:118:` before a Lua
        // error).
        m.exception.as_deref().is_some_and(|e| e.contains("torch") && !e.contains('/'))
            || matches!(
                m.kind,
                OomKind::PytorchCached
                    | OomKind::PytorchReservedInTotal
                    | OomKind::PytorchTotalCapacity
                    | OomKind::PytorchAbsurdSize
                    | OomKind::PytorchFractionRejected
                    | OomKind::CudaMallocAsync
                    // PyTorch's other device allocators: `c10/xpu/XPUCachingAllocator.cpp`
                    // ("XPU out of memory") and `aten/src/ATen/mps/MPSAllocator.mm` ("MPS backend
                    // out of memory … PYTORCH_MPS_HIGH_WATERMARK_RATIO").
                    | OomKind::XpuOutOfMemory
                    | OomKind::NpuOutOfMemory
                    | OomKind::MpsOutOfMemory
                    // … and its ROCm build's (`HIP out of memory. Tried to allocate …`, the
                    // caching allocator hipified: `c10/hip/HIPCachingAllocator.cpp`).
                    | OomKind::HipOutOfMemory
            )
            || m.text.contains("TORCH_USE_CUDA_DSA")
            // The caching allocator's sentence cut before its figures (`CUDA out of memory.
            // Tried to allocate 7.41 GiB`): no other program words it so.
            || m.text.contains("out of memory. Tried to allocate")
            // c10's host allocator (`[enforce fail at alloc_cpu.cpp:73] . DefaultCPUAllocator`).
            || m.text.contains("DefaultCPUAllocator")
            || m.text.contains("_ALLOC_CONF")
            // ATen's cuBLAS check (`aten/src/ATen/cuda/Exceptions.h` `TORCH_CUDABLAS_CHECK`:
            // "CUDA error: " + status + " when calling `" #EXPR "`").
            || (m.text.contains("CUBLAS_STATUS_") && m.text.contains(" when calling `"))
            // The DataLoader's workers (`torch/csrc/DataLoader.cpp`: "ERROR: Unexpected bus error
            // encountered in worker. This might be caused by insufficient shared memory (shm).";
            // `torch/utils/data/dataloader.py`: "DataLoader worker (pid 1234) is killed by
            // signal").
            || m.text.contains("Unexpected bus error encountered in worker")
            || m.text.contains("DataLoader worker (pid")
            // `torch.compile` named beside a GPU OOM named without its message (a title's
            // `torch.compile with max-autotune … creates memory leak until OOM`): PyTorch's own
            // compiler. (The allocator's phrase alone, `CUDA out of memory`, is left: apps built
            // on PyTorch name it so, and the app is what the report is about.)
            || (m.kind == OomKind::NamedWithoutMessage && m.text.contains("torch.compile"))
    });
    // Or torch named with its version in the text (`torch==1.3.1` of a pip list, an
    // environment dump) and nothing else.
    let torch = torch || collected.versions.contains_key("torch");
    if torch {
        EngineName::Pytorch
    } else {
        EngineName::Other
    }
}
