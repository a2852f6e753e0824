//! Host-RAM failures that people mistake for GPU OOM: PyTorch's CPU allocator, errno 12,
//! Python's `MemoryError` and numpy's `_ArrayMemoryError`, C++ `std::bad_alloc`,
//! the Linux OOM killer, exit code 137 / SIGKILL, and ollama's "requires more system memory".
//! All have `is_gpu_oom = false`.
//!
//! Sources: `c10/core/impl/alloc_cpu.cpp` (`DefaultCPUAllocator: can't allocate memory: you
//! tried to allocate %d bytes. Error code 12 (Cannot allocate memory)`; older `not enough
//! memory: you tried to allocate`), `libc10.so` string `C10 Out of Memory. Trying to allocate `
//! (formats.md §1.5), Linux `mm/oom_kill.c` (`Out of memory: Killed process %d (%s)`), ollama
//! `llm/server.go` (`model requires more system memory (%s) than is available (%s)`), numpy
//! `numpy/core/_exceptions.py` (`_ArrayMemoryError`: `Unable to allocate {} for an array with
//! shape {} and data type {}`), libstdc++ (`terminate called after throwing an instance of
//! 'std::bad_alloc'` / `what():  std::bad_alloc`).

use super::{size_of, Continuation, Family, HostKind, Parsed};
use crate::model::failure::{EngineName, OomKind};
use crate::model::Bytes;

pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    if let Some(position) = super::find(text, "DefaultCPUAllocator") {
        let begin = text[..position].rfind("[enforce fail").unwrap_or(position);
        return Some((Family::Host(HostKind::CpuAllocator), begin));
    }
    if let Some(position) = super::find(text, "C10 Out of Memory") {
        return Some((Family::Host(HostKind::C10), position));
    }
    if let Some(position) = super::find(text, "requires more system memory") {
        let begin = text[..position].rfind("model ").unwrap_or(position);
        return Some((Family::Host(HostKind::SystemMemory), begin));
    }
    for needle in [
        "Out of memory: Kill",
        "out of memory: Kill",
        "Killed process",
        "invoked oom-killer",
        "oom-kill:",
        "OOMKilled",
    ] {
        if let Some(position) = super::find(text, needle) {
            let begin = text[..position].rfind("Memory cgroup").unwrap_or(position);
            return Some((Family::Host(HostKind::OomKiller), begin));
        }
    }
    if let Some(position) = super::find(text, "Cannot allocate memory") {
        let begin = text[..position]
            .rfind("[Errno")
            .or_else(|| text[..position].rfind("OSError"))
            .unwrap_or(position);
        return Some((Family::Host(HostKind::Errno), begin));
    }
    if let Some(position) = find_memory_error(text) {
        return Some((Family::Host(HostKind::MemoryError), position));
    }
    if let Some(position) = super::find(text, "bad_alloc") {
        let before = &text[..position];
        let begin = before
            .rfind("terminate called")
            .or_else(|| before.rfind("std::"))
            .unwrap_or(position);
        return Some((Family::Host(HostKind::BadAlloc), begin));
    }
    if text.trim() == "Killed" {
        return Some((
            Family::Host(HostKind::Killed),
            text.len() - text.trim_start().len(),
        ));
    }
    if text.contains("137") || text.contains("SIGKILL") {
        let found = regex!(
            r"(?i)(?:exit(?:ed)?(?: with)?(?: code| status)|exitcode|return ?code|status)\s*[:=]?\s*\(?(?:137|-9)\b|Signal 9 \(SIGKILL\)"
        )
        .find(text)?;
        return Some((Family::Host(HostKind::Killed), found.start()));
    }
    None
}

/// Python's `MemoryError` or numpy's `_ArrayMemoryError` raised (not quoted in an `except`
/// clause, not part of `OutOfMemoryError`): the start of the class name (`numpy.core.…`).
fn find_memory_error(text: &str) -> Option<usize> {
    let position = super::find(text, "MemoryError")?;
    let before = &text[..position];
    let statement = before.trim_start();
    if before.ends_with("OutOf")
        || statement.starts_with("except")
        || statement.starts_with("import ")
        || statement.starts_with("from ")
    {
        return None;
    }
    let after = &text[position + "MemoryError".len()..];
    if !(after.is_empty() || after.starts_with([':', '('])) {
        return None;
    }
    // Only `MemoryError`, `_ArrayMemoryError` and their module paths.
    let class_start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |index| index + 1);
    let own = &before[class_start..];
    let class = own.rsplit('.').next().unwrap_or("");
    (class.is_empty() || class == "_Array").then_some(class_start)
}

/// The kernel prints the kill over several lines (`oom-kill:…`, `Out of memory: Killed process`,
/// `oom_reaper: reaped process`): read them as one message.
pub(super) fn oom_killer_continuation(text: &str) -> Continuation {
    let lower = text.to_ascii_lowercase();
    if lower.contains("oom") || lower.contains("killed process") || lower.contains("out of memory")
    {
        Continuation::Append
    } else {
        Continuation::Close
    }
}

pub(super) fn is_complete(kind: HostKind, squeezed: &str) -> bool {
    match kind {
        HostKind::CpuAllocator => regex!(r"allocate(\d+)bytes").is_match(squeezed),
        HostKind::C10 => regex!(r"allocate(\d+)").is_match(squeezed),
        _ => true,
    }
}

pub(super) fn parse(kind: HostKind, text: &str, squeezed: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::HostMemory, false);
    let details = &mut parsed.details;
    match kind {
        HostKind::CpuAllocator | HostKind::C10 => {
            details.host_required_bytes = regex!(r"allocate(\d+)(?:bytes)?")
                .captures(squeezed)
                .and_then(|caps| caps.get(1))
                .and_then(|m| m.as_str().parse().ok())
                .map(Bytes);
        }
        HostKind::SystemMemory => {
            parsed.engine_hint = Some(EngineName::Ollama);
            details.host_required_bytes =
                size_of(regex!(concat!(r"systemmemory\(", size!(), r"\)")), squeezed);
            details.host_available_bytes =
                size_of(regex!(concat!(r"available\(", size!(), r"\)")), squeezed);
        }
        HostKind::OomKiller => {
            details.killed_pid = regex!(r"Killed process (\d+)")
                .captures(text)
                .and_then(|caps| caps.get(1))
                .and_then(|m| m.as_str().parse().ok());
        }
        HostKind::Killed => {
            details.exit_code = if text.contains("137") {
                Some(137)
            } else if text.contains("-9") || text.contains("SIGKILL") {
                Some(-9)
            } else {
                None
            };
        }
        HostKind::MemoryError => {
            // numpy: `Unable to allocate 3.12 GiB for an array with shape (…) and data type …`.
            details.host_required_bytes = size_of(
                regex!(concat!(r"Unabletoallocate", size!(), r"for")),
                squeezed,
            );
        }
        HostKind::Errno | HostKind::BadAlloc => {}
    }
    parsed
}
