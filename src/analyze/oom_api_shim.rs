//! TEMPORARY stand-in for the `oomtext` helper's API (`parse::text::clean_line`,
//! `parse::oom_text::{OOM_MARKERS, OomDetector}`) so the explain driver compiles before it
//! lands. Deleted when `oomtext` is merged; nothing else may use it.

use std::borrow::Cow;

use crate::model::failure::{OomFigures, OomKind, OomMessage};

/// Cleaned line (see `parse::text::CleanLine`).
pub struct CleanLine<'a> {
    /// Text.
    pub text: Cow<'a, str>,
    /// Stream.
    pub stream: Option<String>,
}

/// Minimal cleaning: ANSI, `\r`, `[rankN]:`.
pub fn clean_line(raw: &str) -> CleanLine<'_> {
    let mut text: Cow<'_, str> = Cow::Borrowed(raw.trim_end_matches('\r'));
    if text.contains('\x1b') {
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        text = Cow::Owned(out);
    }
    let mut stream = None;
    if let Some(rest) = text.strip_prefix("[rank") {
        if let Some(end) = rest.find("]:") {
            stream = Some(format!("rank{}", &rest[..end]));
            text = Cow::Owned(rest[end + 2..].trim_start().to_string());
        }
    }
    CleanLine { text, stream }
}

/// Markers.
pub const OOM_MARKERS: &[&str] = &[
    "out of memory",
    "Not enough memory",
    "No available memory for the cache blocks",
    "DefaultCPUAllocator",
    "illegal memory access",
    "failed to allocate",
];

/// Detector.
#[derive(Debug, Default)]
pub struct OomDetector;

impl OomDetector {
    /// New.
    pub fn new() -> Self {
        OomDetector
    }

    /// Push.
    pub fn push(&mut self, line_no: u64, line: &CleanLine<'_>) -> Vec<OomMessage> {
        let text: &str = &line.text;
        let (kind, is_gpu) = if text.contains("CUDA out of memory") {
            (OomKind::PytorchTotalCapacity, true)
        } else if text.contains("CUDA error: out of memory") {
            (OomKind::CudaErrorOutOfMemory, true)
        } else if text.contains("No available memory for the cache blocks") {
            (OomKind::VllmNoCacheBlocks, true)
        } else if text.contains("DefaultCPUAllocator") {
            (OomKind::HostMemory, false)
        } else if text.contains("illegal memory access") {
            (OomKind::IllegalMemoryAccess, false)
        } else if text.contains("failed to allocate") && text.contains("CUDA") {
            (OomKind::LlamacppAlloc, true)
        } else {
            return Vec::new();
        };
        let mut figures = OomFigures::default();
        let size = |key: &str| -> Option<crate::model::Bytes> {
            let rest = &text[text.find(key)? + key.len()..];
            let mut words = rest.split_whitespace();
            let number: f64 = words.next()?.parse().ok()?;
            let unit = words.next()?.trim_end_matches(['.', ';', ',']);
            let scale = match unit {
                "GiB" => 1073741824.0,
                "MiB" => 1048576.0,
                "KiB" => 1024.0,
                "bytes" => 1.0,
                _ => return None,
            };
            Some(crate::model::Bytes((number * scale).round() as u64))
        };
        figures.tried_to_allocate_bytes = size("Tried to allocate");
        figures.total_capacity_bytes = size("total capacity of");
        figures.free_bytes = size("of which");
        figures.process_in_use_bytes = size("this process has");
        figures.allocated_by_pytorch_bytes = size("Of the allocated memory");
        figures.reserved_unallocated_bytes = size("and");
        if text.contains("GPU 0 ") {
            figures.gpu_index = Some(0);
        }
        vec![OomMessage {
            kind,
            is_gpu_oom: is_gpu,
            engine_hint: None,
            figures,
            line: line_no,
            stream: line.stream.clone(),
            exception: text.split(": ").next().map(str::to_string),
            text: text.to_string(),
        }]
    }

    /// Wants more.
    pub fn wants_more(&self) -> bool {
        false
    }

    /// Finish.
    pub fn finish(&mut self) -> Vec<OomMessage> {
        Vec::new()
    }
}
