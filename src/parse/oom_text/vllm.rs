//! vLLM's own memory errors (`vllm/worker/`, `vllm/v1/core/kv_cache_utils.py`): the startup free-memory check, "No available
//! memory for the cache blocks", max seq len larger than the KV cache (V0 and V1 wordings), and
//! the sampler/pooler warm-up OOM.
//!
//! Sources: `vllm/worker/worker.py` (V0 `raise_if_cache_size_invalid`), `vllm/v1/worker/gpu_worker.py`
//! and `vllm/v1/worker/utils.py` (`request_memory`), `vllm/v1/core/kv_cache_utils.py`
//! (`check_enough_kv_cache_memory`), `vllm/v1/worker/gpu_model_runner.py` (`_dummy_sampler_run`).
//! vLLM prints GiB values with `round(x, 2)` through f-strings (`16.5`, `70.0`), so sizes are
//! read as decimal numbers of GiB; 0.7.3 writes `GB` for the same 2^30 unit.

use super::{integer_of, parse_size, Family, Parsed};
use crate::model::failure::{EngineName, OomKind};
use crate::model::Bytes;

pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    if text.contains("when warming up sampler") || text.contains("when warming up pooler") {
        let begin = super::find(text, "CUDA out of memory occurred").unwrap_or(0);
        return Some((Family::VllmWarmup, begin));
    }
    // (Or retyped short in a report: `Free memory on cuda:0 (38.74/121.63 GiB) < desired
    // utilization (0.35, 42.57 GiB)`.)
    if let Some(position) = super::find(text, "Free memory on device")
        .or_else(|| super::find(text, "Free memory on cuda:"))
    {
        return Some((Family::VllmStartupFree, position));
    }
    // (Retyped in lower case in a report: `received the error no available memory for the
    // cache blocks during allocation`.)
    // V1 hybrid (Mamba/linear-attention) models: the state cache holds one block per decode
    // sequence, and fewer blocks fit in the KV budget than `max_num_seqs` asks for
    // (`ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (969). Each decode
    // sequence requires one Mamba cache block, so CUDA graph capture cannot proceed. …`): the
    // cache is sized too small for the configuration, as when no block fits at all.
    if let Some(position) = super::find(text, "exceeds available Mamba cache blocks") {
        let begin = text[..position].rfind("max_num_seqs").unwrap_or(position);
        return Some((Family::VllmNoCacheBlocks, begin));
    }
    if let Some(position) = super::find(text, "No available memory for the cache blocks")
        .or_else(|| super::find(text, "no available memory for the cache blocks"))
    {
        return Some((Family::VllmNoCacheBlocks, position));
    }
    // V1 `gpu_worker.py` logs "Available KV cache memory: -2.77 GiB" when the profiled peak
    // leaves less than nothing of the budget: the same failure before its error is raised.
    // V0 `worker.py` `determine_num_available_blocks` logs the same shortfall as "… the rest
    // of the memory reserved for KV Cache is -1.05GiB." (0.7–0.8) or, in 0.6.x, "Memory
    // profiling results: … kv_cache_size=-1.99GiB …"; `raise_if_cache_size_invalid` then
    // raises "No available memory for the cache blocks" (often cut from a paste).
    for needle in [
        "Available KV cache memory: -",
        "reserved for KV Cache is -",
        "kv_cache_size=-",
    ] {
        if let Some(position) = super::find(text, needle) {
            let begin = if needle == "Available KV cache memory: -" {
                position
            } else {
                text.len() - text.trim_start().len()
            };
            return Some((Family::VllmNoCacheBlocks, begin));
        }
    }

    // V1 `kv_cache_utils.py` `check_enough_kv_cache_memory`: "To serve at least one request
    // with the models's max seq len (N), (X GiB KV cache is needed, which is larger than the
    // available KV cache memory (Y GiB). …", met also without its head (a title, a cut paste).
    // vLLM's own words, `max seq len (N)`: not a reporter's `max seq length of 2048`.
    let max_seq_len = text.match_indices("max seq len").find_map(|(at, found)| {
        let after = text[at + found.len()..].chars().next();
        after.is_none_or(|c| !c.is_alphabetic()).then_some(at)
    });
    if max_seq_len.is_none() {
        if let Some(position) = super::find(
            text,
            "KV cache is needed, which is larger than the available",
        ) {
            let begin = text[..position].rfind('(').unwrap_or(position);
            return Some((Family::VllmMaxSeqLen, begin));
        }
    }
    if let Some(position) = max_seq_len {
        let before = &text[..position];
        let begin = before
            .rfind("The model's")
            .or_else(|| before.rfind("To serve at least one request"))
            .unwrap_or(position);
        return Some((Family::VllmMaxSeqLen, begin));
    }
    None
}

pub(super) fn is_complete(family: Family, s: &str) -> bool {
    match family {
        Family::VllmWarmup => s.contains("initializingtheengine"),
        Family::VllmStartupFree => {
            // The INFO advice "Free memory on device (…) on startup. Desired GPU memory
            // utilization is …" is complete (and discarded) as soon as it is recognised.
            s.contains("onstartup.Desired") || regex!(r"GiB\)\.").is_match(s)
        }
        Family::VllmNoCacheBlocks => true,
        Family::VllmMaxSeqLen => s.contains("Tryincreasing") || s.contains("Pleaseincrease"),
        _ => true,
    }
}

/// Sizes in GiB printed by Python (`16.5`, `79.19`) or with `GB`/`GiB` units.
fn gib(number: &str) -> Option<Bytes> {
    parse_size(&format!("{number} GiB"))
}

pub(super) fn parse(family: Family, s: &str) -> Option<Parsed> {
    let mut parsed = match family {
        Family::VllmWarmup => {
            let mut parsed = Parsed::new(OomKind::VllmWarmupOom, true);
            parsed.details.warmup_requests =
                integer_of(regex!(r"warmingup(?:sampler|pooler)with(\d+)"), s);
            parsed
        }
        Family::VllmStartupFree => {
            if !s.contains("islessthan") && !s.contains("<desired") {
                return None; // the INFO advice line, not an error
            }
            let mut parsed = Parsed::new(OomKind::VllmStartupFreeMemory, true);
            let caps = regex!(
                r"Freememoryon(?:device)?(?:cuda:(\d+))?\(([\d.]+)/([\d.]+)GiB\)(?:onstartupislessthan|<desired).*?\(([\d.]+),([\d.]+)GiB\)"
            )
            .captures(s);
            if let Some(caps) = caps {
                let group = |i: usize| caps.get(i).map(|m| m.as_str());
                parsed.figures.gpu_index = group(1).and_then(|v| v.parse().ok());
                parsed.figures.free_bytes = group(2).and_then(gib);
                parsed.figures.total_capacity_bytes = group(3).and_then(gib);
                parsed.details.gpu_memory_utilization = group(4).and_then(|v| v.parse().ok());
                parsed.details.requested_memory_bytes = group(5).and_then(gib);
            }
            parsed
        }
        Family::VllmNoCacheBlocks => {
            let mut parsed = Parsed::new(OomKind::VllmNoCacheBlocks, true);
            if let Some(caps) =
                regex!(r"max_num_seqs\((\d+)\)exceedsavailableMambacacheblocks\((\d+)\)")
                    .captures(s)
            {
                let number = |i: usize| caps.get(i).and_then(|m| m.as_str().parse().ok());
                parsed.details.max_num_seqs = number(1);
                parsed.details.mamba_cache_blocks = number(2);
            }
            parsed
        }
        Family::VllmMaxSeqLen => {
            // vLLM's CPU back end keeps its KV cache in the host's RAM, sized by
            // `VLLM_CPU_KVCACHE_SPACE` (`vllm/platforms/cpu.py`), which its error names in place
            // of `gpu_memory_utilization`: the host's memory, not a GPU's.
            let on_gpu = !s.contains("VLLM_CPU_KVCACHE_SPACE");
            let mut parsed = Parsed::new(OomKind::VllmMaxSeqLenTooLarge, on_gpu);
            let details = &mut parsed.details;
            details.max_model_len = integer_of(regex!(r"maxseqlen\((\d+)\)"), s);
            // V0: "… stored in KV cache (21264)."
            details.kv_cache_capacity_tokens = integer_of(regex!(r"storedinKVcache\((\d+)\)"), s);
            // V1: "(16.00 GiB KV cache is needed, which is larger than the available KV cache
            // memory (9.50 GiB)."
            if let Some(caps) = regex!(
                r"\(([\d.]+)G(?:i)?BKVcacheisneeded,whichislargerthantheavailableKVcachememory\(([\d.]+)G(?:i)?B\)"
            )
            .captures(s)
            {
                details.kv_cache_needed_bytes = caps.get(1).and_then(|m| gib(m.as_str()));
                details.kv_cache_available_bytes = caps.get(2).and_then(|m| gib(m.as_str()));
            }
            details.estimated_max_model_len =
                integer_of(regex!(r"estimatedmaximummodellengthis(\d+)"), s);
            parsed
        }
        _ => return None,
    };
    parsed.engine_hint = Some(EngineName::Vllm);
    Some(parsed)
}
