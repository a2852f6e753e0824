//! Message assembly: a closed message parsed by its family, with the exception class, the
//! quote and the engine read around it.

use super::detector::Open;
use super::{
    cuda, frameworks, host, llama_cpp, not_oom, pytorch, sglang, tgi, vllm, Family, Parsed,
};
use crate::model::failure::{EngineName, OomKind, OomMessage};
use crate::parse::text::CleanLine;

/// The last message parsed, reused for an identical one: a crash loop or a retrying job
/// prints the same message again and again, and parsing one costs microseconds.
#[derive(Debug, Default)]
pub(super) struct ParseMemo {
    /// (family, text, squeezed text) of the message, and what parsing it gave.
    last: Option<(Family, String, String, Parsed)>,
}

impl ParseMemo {
    /// [`parse_family`], reusing the last result for the same message.
    fn parse(&mut self, open: &Open) -> Option<Parsed> {
        if let Some((family, text, squeezed, parsed)) = &self.last {
            if *family == open.family && *squeezed == open.squeezed && *text == open.text {
                return Some(parsed.clone());
            }
        }
        let parsed = parse_family(open)?;
        self.last = Some((
            open.family,
            open.text.clone(),
            open.squeezed.clone(),
            parsed.clone(),
        ));
        Some(parsed)
    }
}

/// The exception class printed before the message on its first line (`torch.OutOfMemoryError:`,
/// `RuntimeError: Worker failed with error '`, `OutOfMemoryError('`): the last identifier ending in
/// `Error`/`Exception` that is followed by `:` or `(`.
pub(super) fn exception_class(prefix: &str) -> Option<String> {
    let bytes = prefix.as_bytes();
    let mut best: Option<&str> = None;
    let mut start: Option<usize> = None;
    for (index, &byte) in bytes
        .iter()
        .enumerate()
        .chain(std::iter::once((bytes.len(), &b' ')))
    {
        let ident = byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.';
        match (ident, start) {
            (true, None) => start = Some(index),
            (false, Some(begin)) => {
                let word = prefix[begin..index].trim_matches('.');
                let followed = matches!(byte, b':' | b'(');
                let class_like = word.ends_with("Error")
                    || word.ends_with("Exception")
                    || word.ends_with("Exhausted");
                if followed && class_like && word.len() > 5 {
                    best = Some(word);
                }
                start = None;
            }
            _ => {}
        }
    }
    best.map(str::to_string)
}

/// The quote right before the message (`'` or `"`), when the message sits in a repr or string.
pub(super) fn opening_quote(prefix: &str) -> Option<char> {
    match prefix.trim_end().chars().next_back() {
        Some(quote @ ('\'' | '"')) => Some(quote),
        _ => None,
    }
}

/// An engine named by the wording of a message line.
pub(super) fn engine_from_wording(text: &str) -> Option<EngineName> {
    const VLLM: [&str; 7] = [
        "gpu_memory_utilization",
        "gpu-memory-utilization",
        "vllm",
        "vLLM",
        "VLLM",
        "EngineCore",
        "Worker failed with error",
    ];
    // Aphrodite forked vLLM and kept its flags (`aphrodite run … --gpu-memory-utilization 0.7`).
    if text.contains("aphrodite") || text.contains("Aphrodite") {
        return Some(EngineName::Aphrodite);
    }
    // vllm.rs and candle-vllm are other engines (Rust, on candle) whose names hold vLLM's.
    let other_engine = |text: &str| {
        let lower = text.to_ascii_lowercase();
        [
            "vllm.rs",
            "vllm-rs",
            "vllm_rs",
            "candle-vllm",
            "candle vllm",
        ]
        .iter()
        .any(|name| lower.contains(name))
    };
    if VLLM.iter().any(|w| text.contains(w)) && !other_engine(text) {
        return Some(EngineName::Vllm);
    }
    if text.contains("text_generation")
        || text.contains("max-batch-prefill-tokens")
        || text.contains("Unable to warmup model")
    {
        return Some(EngineName::Tgi);
    }
    if text.contains("mem-fraction-static") || text.contains("sglang") {
        return Some(EngineName::Sglang);
    }
    // (A word of its own: not the end of a model's name, `VideoLLaMA3`, `videollama3-7b`.)
    let ollama = text.match_indices("ollama").any(|(at, _)| {
        text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
    });
    if ollama
        || text.contains("llama runner")
        || text.contains("memory layout cannot be allocated")
        || text.contains("Memory layout cannot be allocated")
    {
        return Some(EngineName::Ollama);
    }
    // The other programs on ggml, named in the message's line (`I tried to transcribe with
    // whisper.cpp … it's out of memory with [model](…/whisper-v2-d4-ggml/…)`): their ggml is
    // not llama.cpp (session 48); the line's name is read as the reporter's.
    if [
        "whisper.cpp",
        "stable-diffusion.cpp",
        "whisper_rs",
        "whisper-rs",
    ]
    .iter()
    .any(|name| text.contains(name))
    {
        return None;
    }
    // llama.cpp's server loop (`tools/server/server.cpp` `update_slots`, `llama_decode`).
    if text.contains("ggml")
        || text.contains("GGML")
        || text.contains("llama.cpp")
        || text.contains("update_slots")
        || text.contains("llama_decode")
    {
        return Some(EngineName::Llamacpp);
    }
    None
}

/// PyTorch named by its own wording of a GPU OOM raised as Python's `RuntimeError`, when
/// nothing more specific names the engine (a weak hint: an application or library seen
/// elsewhere in the text outranks it): the caching allocator's `CUDA out of memory`
/// (`c10/cuda/CUDACachingAllocator.cpp`, `"CUDA out of memory. Tried to allocate "`, raised as
/// `RuntimeError` before 1.13), cut before its figures; or the CUDA runtime's `CUDA error: out
/// of memory`, which is c10's check of a CUDA call (`c10/cuda/CUDAException.cpp` `c10_cuda_check_implementation`: `"CUDA error: "`
/// and `cudaGetErrorString`; ggml and darknet print theirs from C, CuPy raises
/// `CUDARuntimeError: cudaErrorMemoryAllocation`).
fn torch_wording(text: &str, exception: Option<&str>) -> Option<EngineName> {
    let raised = exception == Some("RuntimeError");
    let allocator = text.starts_with("CUDA out of memory");
    // (Pasted without its space too: `RuntimeError: CUDA error:out of memory`.)
    let checked = text
        .strip_prefix("CUDA error:")
        .is_some_and(|rest| rest.trim_start().starts_with("out of memory"));
    // The allocator's own sentence retyped without its class, its full stop dropped (`the
    // problem of "CUDA out of memory Tried to allocate 38.49 GiB" still occurs`, session 48).
    // (With the full stop, TVM's copy of the wording, `tvm.error.InternalError: CUDA out of
    // memory. Tried to allocate …`, is MLC-LLM's.)
    let quoted = regex!(r"out of memory\s+Tried to allocate \d").is_match(text);
    ((raised && (allocator || checked)) || quoted).then_some(EngineName::Pytorch)
}

/// vLLM's process prefixes name the engine (`(EngineCore_DP0 pid=…)`, `(VllmWorker rank=…)`).
pub(super) fn engine_from_stream(line: &CleanLine<'_>) -> Option<EngineName> {
    let stream = line.stream.as_deref()?;
    const VLLM: [&str; 4] = ["EngineCore", "VllmWorker", "APIServer", "RayWorkerWrapper"];
    VLLM.iter()
        .any(|w| stream.contains(w))
        .then_some(EngineName::Vllm)
}

/// Cuts a repr-wrapped message at its closing quote (`…unallocated.')` → `…unallocated.`).
fn cut_at_closing_quote(text: &mut String, quote: char) {
    let bytes = text.as_bytes();
    let mut cut = None;
    for (index, &byte) in bytes.iter().enumerate() {
        if byte as char == quote {
            let next = bytes.get(index + 1).copied();
            if matches!(next, None | Some(b')' | b',' | b']' | b'}' | b'"' | b'\'')) {
                cut = Some(index);
            }
        }
    }
    if let Some(index) = cut {
        text.truncate(index);
        let trimmed = text.trim_end().len();
        text.truncate(trimmed);
    }
}

/// What the family's parser makes of a closed message (a function of its family, text and
/// squeezed text only).
fn parse_family(open: &Open) -> Option<Parsed> {
    let squeezed = open.squeezed.as_str();
    match open.family {
        Family::TorchAllocator(_) | Family::MallocAsync | Family::Mps => {
            Some(pytorch::parse(open.family, squeezed))
        }
        Family::CudaError
        | Family::CudaDriver
        | Family::Cublas
        | Family::IllegalAccess
        | Family::OtherGpu => Some(cuda::parse(open.family, &open.text, squeezed)),
        Family::Host(kind) => Some(host::parse(kind, &open.text, squeezed)),
        Family::VllmStartupFree
        | Family::VllmNoCacheBlocks
        | Family::VllmMaxSeqLen
        | Family::VllmWarmup => vllm::parse(open.family, squeezed),
        Family::Tgi => Some(tgi::parse(squeezed)),
        Family::Sglang => Some(sglang::parse(squeezed)),
        Family::LlamaChain => Some(llama_cpp::parse(&open.text, squeezed)),
        Family::Framework(kind) => Some(frameworks::parse(kind, squeezed)),
        Family::NotOom(kind) => Some(not_oom::parse(kind, squeezed)),
    }
}

pub(super) fn build(mut open: Open, memo: &mut ParseMemo) -> Option<OomMessage> {
    let mut parsed = memo.parse(&open)?;
    if open.quoted {
        if !parsed.is_gpu_oom {
            return None;
        }
        parsed.kind = OomKind::NamedWithoutMessage;
    }
    if let Some(quote) = open.quote {
        cut_at_closing_quote(&mut open.text, quote);
    }
    let wording = engine_from_wording(&open.text)
        .or(open.prefix_hint)
        .or_else(|| torch_wording(&open.text, open.exception.as_deref()));
    // ollama runs llama.cpp: its wording wins over the llama.cpp shape of the message.
    let engine_hint = match (parsed.engine_hint, wording) {
        (Some(EngineName::Llamacpp), Some(EngineName::Ollama)) => Some(EngineName::Ollama),
        (parsed, wording) => parsed.or(wording),
    };
    Some(OomMessage {
        kind: parsed.kind,
        is_gpu_oom: parsed.is_gpu_oom,
        engine_hint,
        figures: parsed.figures,
        line: open.start_line,
        stream: open.stream,
        exception: open.exception,
        text: open.text,
        end_line: open.end_line,
        details: parsed.details,
        t_ms: None,
    })
}
