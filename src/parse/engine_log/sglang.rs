//! SGLang log lines (0.4.6 → 0.5.x). Texts from `sgl-project/sglang`:
//! `python/sglang/srt/model_executor/model_runner.py` (weights, KV pool, CUDA graphs),
//! `srt/managers/scheduler.py` (`max_total_num_tokens=…`, retract), `srt/entrypoints/http_server.py`
//! (ready), `srt/server_args.py` (`server_args=ServerArgs(…)`). "GB" in SGLang means GiB
//! (`get_available_gpu_memory` divides by `1 << 30`).

use super::common::{
    after, has, number_after, setting, setting_integer, setting_number, size_after,
};
use super::{rule, Certainty, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};
use crate::model::failure::EngineName;
use crate::model::Bytes;

pub(super) const RULES: &[Rule] = &[
    rule("server_args=ServerArgs(", server_args),
    rule("Init torch distributed begin", device_init),
    rule("Load weight begin", load_begin),
    rule("Load weight end", load_end),
    rule("is allocated. ", kv_allocated),
    rule("Memory pool end", memory_pool_end),
    rule("max_total_num_tokens=", scheduler_config),
    rule("uda graph begin", graph_begin),
    rule("UDA graph begin", graph_begin),
    // The capture's progress bar (`cuda_graph_runner.py` `CudaGraphRunner.capture`:
    // `Capturing batches (bs=160 avail_mem=70.44 GB)`, 0.4.x without `bs=`;
    // `piecewise_cuda_graph_runner.py`: `Capturing num tokens (num_tokens=3968 avail_mem=0.05
    // GB)`), whose begin line a paste often leaves out.
    rule("Capture cuda graph failed", graph_failed),
    rule("Capture CUDA graph failed", graph_failed),
    rule("Capturing batches (", graph_bar),
    rule("Capturing num tokens (", graph_bar),
    rule("uda graph end", graph_end),
    rule("UDA graph end", graph_end),
    rule("The server is fired up and ready to roll", ready),
    rule("Prefill batch.", batch),
    rule("Decode batch.", batch),
    rule("#retracted_reqs", retract),
    rule("KV cache pool is full. Retract requests", retract),
    rule("Scheduler hit an exception", scheduler_exception),
    rule("sglang==", version),
];

fn gib(text: &str, key: &str) -> Option<Bytes> {
    size_after(text, key, true).or_else(|| {
        number_after(text, key)
            .filter(|v| *v >= 0.0)
            .map(Bytes::from_gib_f64)
    })
}

fn server_args(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Banner);
    if let Some(model) = setting(text, "model_path") {
        facts.model.name = Some(model.to_string());
    }
    if let Some(dtype) = setting(text, "dtype") {
        facts.model.dtype = Some(dtype.to_string());
    }
    if let Some(quantization) = setting(text, "quantization") {
        facts.model.quantization = Some(quantization.to_string());
    }
    let config = &mut facts.config;
    config.tensor_parallel_size = setting_integer(text, "tp_size");
    config.mem_fraction_static = setting_number(text, "mem_fraction_static");
    config.max_model_len = setting_integer(text, "context_length");
    config.max_num_batched_tokens = setting_integer(text, "chunked_prefill_size");
    config.max_num_seqs = setting_integer(text, "max_running_requests");
    config.kv_cache_dtype = setting(text, "kv_cache_dtype").map(str::to_string);
    config.enforce_eager = match setting(text, "disable_cuda_graph") {
        Some("True") => Some(true),
        Some("False") => Some(false),
        _ => None,
    };
    facts.event(
        EventKind::EngineStart,
        Phase::Startup,
        EventFigures::default(),
    );
}

fn device_init(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    facts.event(
        EventKind::DeviceInit,
        Phase::Startup,
        EventFigures::default(),
    );
}

fn load_begin(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    let available = gib(text, "avail mem=");
    facts.memory.free_at_start = available;
    facts.event(
        EventKind::WeightsLoadStart,
        Phase::WeightsLoad,
        EventFigures {
            available_bytes: available,
            ..EventFigures::default()
        },
    );
}

/// `Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.52 GB, mem usage=14.96 GB.`
fn load_end(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    if let Some(architecture) = setting(text, "type") {
        facts.model.architecture = Some(architecture.to_string());
    }
    if let Some(dtype) = setting(text, "dtype") {
        facts.model.dtype = Some(dtype.to_string());
    }
    let bytes = gib(text, "mem usage=");
    facts.memory.weights = bytes;
    facts.event(
        EventKind::WeightsLoaded,
        Phase::WeightsLoad,
        EventFigures {
            bytes,
            seconds: number_after(text, "elapsed="),
            available_bytes: gib(text, "avail mem="),
            ..EventFigures::default()
        },
    );
}

/// `KV Cache is allocated. #tokens: 413420, K size: 23.66 GB, V size: 23.66 GB` (or `KV size:`).
fn kv_allocated(text: &str, facts: &mut LineFacts) {
    if !has(text, "#tokens") {
        return;
    }
    facts.engine(EngineName::Sglang, Certainty::Strong);
    let k = gib(text, "K size:");
    let v = gib(text, "V size:");
    let bytes = match (k, v) {
        (Some(k), Some(v)) => Some(k + v),
        _ => gib(text, "KV size:"),
    };
    facts.memory.kv_cache = bytes;
    facts.event(
        EventKind::KvCacheAllocated,
        Phase::KvCacheAlloc,
        EventFigures {
            bytes,
            tokens: number_after(text, "#tokens:").map(|t| t as u64),
            ..EventFigures::default()
        },
    );
}

fn memory_pool_end(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    facts.event(
        EventKind::KvCacheAllocated,
        Phase::KvCacheAlloc,
        EventFigures {
            available_bytes: gib(text, "avail mem="),
            ..EventFigures::default()
        },
    );
}

/// `max_total_num_tokens=413420, chunked_prefill_size=8192, max_prefill_tokens=16384,
/// max_running_requests=4097, context_len=131072`.
fn scheduler_config(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    let config = &mut facts.config;
    config.max_model_len = setting_integer(text, "context_len");
    config.max_num_seqs = setting_integer(text, "max_running_requests");
    config.max_num_batched_tokens = setting_integer(text, "chunked_prefill_size");
}

fn graph_begin(text: &str, facts: &mut LineFacts) {
    if !has(text, "Capture") {
        return;
    }
    capture_started(facts, gib(text, "avail mem="));
}

/// SGLang's CUDA-graph capture started, with the free memory its line printed.
fn capture_started(facts: &mut LineFacts, available: Option<Bytes>) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    facts.event(
        EventKind::CudaGraphCaptureStart,
        Phase::CudaGraphCapture,
        EventFigures {
            available_bytes: available,
            ..EventFigures::default()
        },
    );
}

/// The capture's own error (`cuda_graph_runner.py` `CudaGraphRunner.__init__`: `raise
/// Exception(f"Capture cuda graph failed: {e}\n{CUDA_GRAPH_CAPTURE_FAILED_MSG}")`, 0.4 → 0.5;
/// later `Capture CUDA graph failed`): whatever it wraps failed in the capture.
fn graph_failed(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    facts.failed_phase_hint = Some(Phase::CudaGraphCapture);
}

/// A capture bar's line; a console keeps every update of the bar on one line, the last is the
/// latest (its free memory the nearest to a failure).
fn graph_bar(text: &str, facts: &mut LineFacts) {
    let Some(at) = text
        .rfind("Capturing batches (")
        .max(text.rfind("Capturing num tokens ("))
    else {
        return;
    };
    capture_started(facts, gib(&text[at..], "avail_mem="));
}

fn graph_end(text: &str, facts: &mut LineFacts) {
    if !has(text, "Capture") {
        return;
    }
    facts.engine(EngineName::Sglang, Certainty::Strong);
    let bytes = gib(text, "mem usage=");
    facts.memory.cuda_graphs = bytes;
    let seconds = number_after(text, "Time elapsed:").or_else(|| number_after(text, "elapsed="));
    facts.event(
        EventKind::CudaGraphCaptureDone,
        Phase::CudaGraphCapture,
        EventFigures {
            bytes,
            seconds,
            available_bytes: gib(text, "avail mem="),
            ..EventFigures::default()
        },
    );
}

fn ready(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    facts.event(
        EventKind::ServerReady,
        Phase::Inference,
        EventFigures::default(),
    );
}

fn batch(text: &str, facts: &mut LineFacts) {
    if has(text, "#running-req") || has(text, "#new-seq") || has(text, "#new-token") {
        facts.engine(EngineName::Sglang, Certainty::Strong);
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

fn retract(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    facts.event(
        EventKind::KvPressure,
        Phase::Inference,
        EventFigures::default(),
    );
}

fn scheduler_exception(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    facts.event(EventKind::Shutdown, Phase::Unknown, EventFigures::default());
}

fn version(text: &str, facts: &mut LineFacts) {
    if let Some(version) = after(text, "sglang==") {
        let version = version.split_whitespace().next().unwrap_or("");
        if !version.is_empty() {
            facts.versions.push(("sglang", version.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_line_scan;
    use super::*;

    #[test]
    fn the_captures_own_error_names_the_capture() {
        for line in [
            "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB.",
            "[2025-08-01 10:00:00 TP0] Exception: Capture CUDA graph failed: unsupported size",
        ] {
            let facts = parse_line_scan(line);
            assert_eq!(facts.engine, Some((EngineName::Sglang, Certainty::Strong)));
            assert_eq!(facts.failed_phase_hint, Some(Phase::CudaGraphCapture));
        }
    }

    #[test]
    fn a_capture_bar_is_the_capture() {
        for (line, free) in [
            (
                "Capturing batches (bs=160 avail_mem=70.44 GB):  12%|#  | 3/23 [00:01<00:09]",
                70.44,
            ),
            (
                "Capturing num tokens (num_tokens=8192 avail_mem=40.62 GB):   0%|  | 0/58 \
                 [00:00<?, ?it/s]Capturing num tokens (num_tokens=3968 avail_mem=0.05 GB):   2%|\
                 | 1/58 [00:00<00:56,  1.01it/s]Traceback (most re",
                0.05,
            ),
        ] {
            let facts = parse_line_scan(line);
            assert_eq!(facts.engine, Some((EngineName::Sglang, Certainty::Strong)));
            assert_eq!(facts.events[0].phase, Phase::CudaGraphCapture);
            assert_eq!(
                facts.events[0].figures.available_bytes,
                Some(Bytes::from_gib_f64(free))
            );
        }
    }

    #[test]
    fn load_and_kv() {
        let facts = parse_line_scan("[2025-03-01 10:00:05 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.52 GB, mem usage=14.96 GB.");
        assert_eq!(facts.engine, Some((EngineName::Sglang, Certainty::Strong)));
        assert_eq!(
            facts.events[0].figures.bytes,
            Some(Bytes::from_gib_f64(14.96))
        );
        let facts = parse_line_scan("[2025-03-01 10:00:06 TP0] KV Cache is allocated. #tokens: 413420, K size: 23.66 GB, V size: 23.66 GB");
        assert_eq!(facts.events[0].figures.tokens, Some(413420));
        assert_eq!(facts.events[0].kind, EventKind::KvCacheAllocated);
        let facts = parse_line_scan("[2025-03-01 10:00:07 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=14.07 GB");
        assert_eq!(facts.events[0].kind, EventKind::CudaGraphCaptureStart);
    }
}
