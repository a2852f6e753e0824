//! SGLang memory errors (`sglang/srt/model_executor/model_runner.py`): `Not enough memory. Please try to increase
//! --mem-fraction-static.` (`srt/model_executor/model_runner.py`; 0.5 adds ` Current value:
//! mem_fraction_static={v}` from `pool_configurator.py`) and the scheduler's `Prefill out of
//! memory`, `Decode out of memory`, `Out of memory. Try to lower your batch size.`

use super::{float_of, Family, Parsed};
use crate::model::failure::{EngineName, OomKind};

pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    // 2026 wordings: `Not enough memory to allocate KV cache.` (sglang#23181) and
    // `Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=…`.
    // The scheduler's token pool (`managers/schedule_batch.py` `alloc_token_slots`): "{Prefill,
    // Decode} out of memory. Try to lower your batch size." (0.3–0.4, `phase_str` by the batch's
    // forward mode), "Out of memory. Try to lower your batch size." then "Try to allocate N
    // tokens." (0.5+, `mem_cache/common.py`): the KV cache's tokens ran out while serving.
    for needle in [
        "Not enough memory to allocate KV cache",
        "Loaded weights leave no GPU memory for the KV cache",
        "leave no GPU memory for the KV cache",
        "Prefill out of memory",
        "Decode out of memory",
        "Out of memory. Try to lower your batch size",
    ] {
        if let Some(position) = super::find(text, needle) {
            return Some((Family::Sglang, position));
        }
    }
    if let Some(position) = super::find(text, "Not enough memory.") {
        return Some((Family::Sglang, position));
    }
    if text.contains("mem-fraction-static") || text.contains("mem_fraction_static") {
        if let Some(position) = super::find(text, "not enough memory")
            .or_else(|| super::find(text, "Not enough memory"))
        {
            return Some((Family::Sglang, position));
        }
    }
    // `ModelRunner.init_memory_pool`: "max_total_tokens={…} is larger than the profiled value
    // {…}. Use the profiled value instead." then, when the profiled value is not positive,
    // `raise RuntimeError("Not enough memory. Please try to increase --mem-fraction-static.")`:
    // a negative profiled value is that failure, whether or not the paste reaches the raise.
    if let Some(found) = regex!(r"is larger than the profiled value -\d").find(text) {
        let begin = super::find(text, "max_total_tokens").unwrap_or(found.start());
        return Some((Family::Sglang, begin.min(found.start())));
    }
    None
}

/// Whether the message is the scheduler's: the KV cache's token pool ran out while requests
/// were served (see [`start`]).
pub fn is_token_pool_exhausted(text: &str) -> bool {
    text.contains("Prefill out of memory")
        || text.contains("Decode out of memory")
        || text.contains("ut of memory. Try to lower your batch size")
}

pub(super) fn is_complete(s: &str) -> bool {
    s.contains("mem-fraction-static")
        || s.contains("theprofiledvalue-")
        || s.contains("Prefilloutofmemory")
        || s.contains("Decodeoutofmemory")
        || s.contains("Trytoloweryourbatchsize")
        || s.contains("allocateKVcache.")
}

pub(super) fn parse(s: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::SglangMemory, true);
    parsed.engine_hint = Some(EngineName::Sglang);
    parsed.details.mem_fraction_static =
        float_of(regex!(r"mem[_-]fraction[_-]static=([\d.]*\d)"), s);
    parsed
}
