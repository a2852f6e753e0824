//! Failures that are not GPU memory shortages and are named for what they are: `/dev/shm`
//! exhaustion, a full disk, a device-side assert and Triton's `OutOfResources`. All have
//! `is_gpu_oom = false`.
//!
//! Sources: PyTorch `torch/utils/data/_utils/signal_handling.py` and `dataloader.py`
//! (`ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient
//! shared memory (shm).`), errno 28 `ENOSPC` (`[Errno 28] No space left on device`; a path under
//! `/dev/shm` makes it shared memory), `c10/cuda/CUDAException.cpp` (`CUDA error: device-side
//! assert triggered`), Triton `python/triton/runtime/errors.py` (`OutOfResources`: `out of
//! resource: shared memory, Required: N, Hardware limit: M. Reducing block sizes or
//! `num_stages` may help.`), llama.cpp's decode finding no free KV cells: `llama_decode` returns
//! 1 and the server (`tools/server/server.cpp` `update_slots`) logs `failed to find free space
//! in the KV cache, retrying with smaller n_batch` (2023–24; later `… retrying with smaller
//! batch size - try increasing it via the context size`), then `failed to decode the batch, n_batch
//! = 1, ret = 1` / `failed to decode the batch: KV cache is full - try increasing it via the
//! context size`; `src/llama-context.cpp` `decode: failed to find a memory slot for batch of
//! size N` (older `llama_decode_internal: failed to find KV cache slot for ubatch of size N`).
//! The cells are the context (`n_ctx`, shared by the server's slots): it is full, the GPU is not.

use super::{back_to, find, Family, NotOomKind, Parsed};
use crate::model::failure::{EngineName, OomKind};

pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    if let Some(position) = find(text, "insufficient shared memory") {
        let begin = back_to(text, position, "ERROR:");
        return Some((Family::NotOom(NotOomKind::Shm), begin));
    }
    // NCCL's shared-memory transport (`src/misc/shmutils.cc` `ncclShmOpen`: "Error while
    // creating shared memory segment %s (size %zu)"): `/dev/shm` too small for it (docker's
    // default 64 MB).
    if let Some(position) = find(text, "Error while creating shared memory segment") {
        return Some((Family::NotOom(NotOomKind::Shm), line_start(text, position)));
    }
    // The C library's `strerror(ENOSPC)`; Go's and Rust's errors write it in lower case
    // (`write /tmp/ollama…/libggml.so: no space left on device`).
    if let Some(position) =
        find(text, "No space left on device").or_else(|| find(text, "no space left on device"))
    {
        let before = &text[..position];
        let begin = before
            .rfind("OSError")
            .or_else(|| before.rfind("[Errno"))
            .unwrap_or(position);
        let kind = if text.contains("/dev/shm") {
            NotOomKind::Shm
        } else {
            NotOomKind::Disk
        };
        return Some((Family::NotOom(kind), begin));
    }
    if let Some(position) = find(text, "device-side assert triggered") {
        let begin = back_to(text, position, "CUDA error:");
        return Some((Family::NotOom(NotOomKind::DeviceAssert), begin));
    }
    for needle in [
        "failed to find free space in the KV cache",
        "failed to find a memory slot for batch",
        "failed to find KV cache slot",
        "KV cache is full",
    ] {
        if let Some(position) = find(text, needle) {
            return Some((Family::NotOom(NotOomKind::ContextFull), position));
        }
    }
    for needle in ["OutOfResources", "out of resource:"] {
        if let Some(position) = find(text, needle) {
            return Some((Family::NotOom(NotOomKind::Triton), position));
        }
    }
    None
}

pub(super) fn parse(kind: NotOomKind, squeezed: &str) -> Parsed {
    let context_full = kind == NotOomKind::ContextFull;
    let kind = match kind {
        NotOomKind::Shm => OomKind::SharedMemory,
        NotOomKind::Disk => OomKind::DiskFull,
        NotOomKind::DeviceAssert => OomKind::DeviceAssert,
        NotOomKind::Triton => OomKind::TritonOutOfResources,
        NotOomKind::ContextFull => OomKind::ContextFull,
    };
    let mut parsed = Parsed::new(kind, false);
    // llama.cpp's own wording (`src/llama-context.cpp` `llama_context::decode`: "failed to find
    // free space in the KV cache, retrying with smaller batch size", `llama_decode`: "failed to
    // find a memory slot for batch of size N"): the engine is llama.cpp, or an app over it
    // that names itself elsewhere (ollama's runner prints the same lines).
    if context_full
        && (squeezed.contains("failedtofindfreespaceintheKVcache")
            || squeezed.contains("failedtofindamemoryslotforbatch"))
    {
        parsed.engine_hint = Some(EngineName::Llamacpp);
    }
    parsed
}

/// Where the line holding `position` starts.
fn line_start(text: &str, position: usize) -> usize {
    text[..position].rfind('\n').map_or(0, |at| at + 1)
}
