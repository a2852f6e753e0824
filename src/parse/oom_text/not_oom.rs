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
//! `num_stages` may help.`).

use super::{find, Family, NotOomKind, Parsed};
use crate::model::failure::OomKind;

pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    if let Some(position) = find(text, "insufficient shared memory") {
        let begin = text[..position].rfind("ERROR:").unwrap_or(position);
        return Some((Family::NotOom(NotOomKind::Shm), begin));
    }
    if let Some(position) = find(text, "No space left on device") {
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
        let begin = text[..position].rfind("CUDA error:").unwrap_or(position);
        return Some((Family::NotOom(NotOomKind::DeviceAssert), begin));
    }
    for needle in ["OutOfResources", "out of resource:"] {
        if let Some(position) = find(text, needle) {
            return Some((Family::NotOom(NotOomKind::Triton), position));
        }
    }
    None
}

pub(super) fn parse(kind: NotOomKind) -> Parsed {
    let kind = match kind {
        NotOomKind::Shm => OomKind::SharedMemory,
        NotOomKind::Disk => OomKind::DiskFull,
        NotOomKind::DeviceAssert => OomKind::DeviceAssert,
        NotOomKind::Triton => OomKind::TritonOutOfResources,
    };
    Parsed::new(kind, false)
}
