//! Text Generation Inference log lines. Texts from `huggingface/text-generation-inference`:
//! `launcher/src/main.rs` (download, shards, webserver), `backends/v3/src/lib.rs` (warm-up,
//! max batch total tokens), `router/src/server.rs` (`Connected`),
//! `server/text_generation_server/models/flash_causal_lm.py` (KV-cache blocks, CUDA graphs).

use super::common::{after, has, integer_after, setting, setting_integer, word_after};
use super::{rule, Certainty, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};
use crate::model::failure::EngineName;

pub(super) const RULES: &[Rule] = &[
    rule("text_generation_launcher: Args", args),
    rule("Starting check and download process", download_start),
    rule("Successfully downloaded weights", download_done),
    rule("Download: Downloading", download_start),
    rule("Starting shard", shard_start),
    rule("Shard ready in", shard_ready),
    rule("Starting Webserver", webserver),
    rule("Warming up model", warmup),
    // The router's warm-up, as its tracing span and its exit show it (TGI 1.x–2.x and LoRAX,
    // `router/src/main.rs` `warmup{max_input_length=… max_prefill_tokens=…}` span around
    // `sharded_client.warmup(…)`; `Error: Warmup(Generation("…"))` when it fails), session 47.
    rule("warmup{max_input_length=", router_warmup),
    rule("Error: Warmup(", router_warmup),
    rule("max batch total tokens to", max_batch_total_tokens),
    rule("Inferred max batch total tokens:", max_batch_total_tokens),
    rule("KV-cache blocks:", kv_blocks),
    rule("Cuda Graphs are enabled for sizes", cuda_graphs),
    rule("Decode cuda graph warmup failed", cuda_graph_warmup_failed),
    rule(": Connected", connected),
    rule("failed to start", failed),
    rule("Error: ShardCannotStart", failed),
    rule("Webserver Crashed", failed),
    rule("batch{batch_size=", router_span),
    rule("embed_pooled{", embedding_span),
    rule("embed_all{", embedding_span),
    rule("embed_sparse{", embedding_span),
    // The shard's gRPC interceptor (`server/text_generation_server/interceptor.py`
    // `ExceptionInterceptor`: "Method {Warmup,Prefill,Decode} encountered an error.") names
    // the call that raised.
    rule(" encountered an error", method_error),
    rule("Shard complete standard error output", failed),
    // The shard server (`server/text_generation_server/server.py` `serve_inner`: `try: model =
    // get_model(…) except Exception: logger.exception("Error when initializing model")`):
    // building the model, i.e. loading its weights onto the GPU, raised; no warm-up has run.
    rule("Error when initializing model", init_error),
    // The launcher polling a shard that has not reported ready (`launcher/src/main.rs`
    // "Waiting for shard to be ready..."): the model is still being built.
    rule("Waiting for shard to be ready", shard_waiting),
    rule("Commit sha:", runtime_env),
    rule("Docker label:", runtime_env),
    rule("text_generation_router::server", request),
];

fn tgi(facts: &mut LineFacts) {
    facts.engine(EngineName::Tgi, Certainty::Strong);
}

/// `Args { model_id: "…", … num_shard: Some(2), quantize: Some(Bitsandbytes), max_total_tokens: Some(4096), … }`
fn args(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Tgi, Certainty::Banner);
    if let Some(model) = setting(text, "model_id") {
        facts.model.name = Some(model.to_string());
    }
    if let Some(quantize) = setting(text, "quantize") {
        facts.model.quantization = Some(quantize.to_string());
    }
    if let Some(dtype) = setting(text, "dtype") {
        facts.model.dtype = Some(dtype.to_string());
    }
    let config = &mut facts.config;
    config.tensor_parallel_size = setting_integer(text, "num_shard");
    config.max_model_len = setting_integer(text, "max_total_tokens");
    config.max_num_batched_tokens = setting_integer(text, "max_batch_prefill_tokens");
    facts.event(
        EventKind::EngineStart,
        Phase::Startup,
        EventFigures::default(),
    );
}

fn download_start(_text: &str, facts: &mut LineFacts) {
    tgi(facts);
    facts.event(
        EventKind::DownloadStart,
        Phase::Startup,
        EventFigures::default(),
    );
}

fn download_done(_text: &str, facts: &mut LineFacts) {
    tgi(facts);
    facts.event(
        EventKind::DownloadDone,
        Phase::Startup,
        EventFigures::default(),
    );
}

fn shard_start(text: &str, facts: &mut LineFacts) {
    if has(text, "Starting shard") && !has(text, "Waiting") {
        tgi(facts);
        facts.event(
            EventKind::WeightsLoadStart,
            Phase::WeightsLoad,
            EventFigures::default(),
        );
    }
}

/// `Shard ready in 12.345678s` (Rust `Duration` Debug).
fn shard_ready(text: &str, facts: &mut LineFacts) {
    tgi(facts);
    let seconds = after(text, "Shard ready in").and_then(duration_seconds);
    facts.event(
        EventKind::WeightsLoaded,
        Phase::WeightsLoad,
        EventFigures {
            seconds,
            ..EventFigures::default()
        },
    );
}

fn duration_seconds(text: &str) -> Option<f64> {
    let text = text.trim();
    let number = super::common::leading_number(text)?;
    let unit = text.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if unit.starts_with("ms") {
        Some(number / 1000.0)
    } else if unit.starts_with("µs") {
        Some(number / 1e6)
    } else {
        Some(number)
    }
}

fn webserver(_text: &str, facts: &mut LineFacts) {
    tgi(facts);
}

fn warmup(_text: &str, facts: &mut LineFacts) {
    tgi(facts);
    facts.event(
        EventKind::ProfilingStart,
        Phase::Profiling,
        EventFigures::default(),
    );
}

/// The router's warm-up span or its failed exit: the warm-up (a profiling pass) ran. Not
/// TGI's alone (LoRAX keeps its router), so it names no engine.
fn router_warmup(text: &str, facts: &mut LineFacts) {
    if text.trim_start().starts_with("Error: Warmup(") {
        facts.failed_phase_hint = Some(Phase::Profiling);
    } else {
        facts.event(
            EventKind::ProfilingStart,
            Phase::Profiling,
            EventFigures::default(),
        );
    }
}

fn max_batch_total_tokens(text: &str, facts: &mut LineFacts) {
    tgi(facts);
    let tokens = integer_after(text, "tokens to").or_else(|| integer_after(text, "total tokens:"));
    facts.event(
        EventKind::ProfilingDone,
        Phase::Profiling,
        EventFigures {
            tokens,
            ..EventFigures::default()
        },
    );
}

fn kv_blocks(text: &str, facts: &mut LineFacts) {
    tgi(facts);
    facts.event(
        EventKind::KvCacheAllocated,
        Phase::KvCacheAlloc,
        EventFigures {
            blocks: integer_after(text, "KV-cache blocks:"),
            ..EventFigures::default()
        },
    );
}

fn cuda_graphs(_text: &str, facts: &mut LineFacts) {
    tgi(facts);
    facts.event(
        EventKind::CudaGraphCaptureStart,
        Phase::CudaGraphCapture,
        EventFigures::default(),
    );
}

/// TGI 2.x `server/text_generation_server/models/flash_causal_lm.py` `warmup`: an exception in
/// `cuda_graph_warmup` (the decode graphs captured for each batch size) is logged as "Decode
/// cuda graph warmup failed" before it is raised (huggingface/text-generation-inference#1695):
/// the capture failed.
fn cuda_graph_warmup_failed(_text: &str, facts: &mut LineFacts) {
    tgi(facts);
    facts.failed_phase_hint = Some(Phase::CudaGraphCapture);
}

fn connected(text: &str, facts: &mut LineFacts) {
    if text.trim_end().ends_with("Connected") {
        tgi(facts);
        facts.event(
            EventKind::ServerReady,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

fn failed(text: &str, facts: &mut LineFacts) {
    if has(text, "Shard") || has(text, "Webserver") {
        tgi(facts);
        facts.event(EventKind::Shutdown, Phase::Unknown, EventFigures::default());
    }
    // launcher/src/main.rs: `Shard {rank} failed to start` (`ShardCannotStart`): the shard
    // process died before it reported ready, i.e. during its start-up. The launcher's `main`
    // returns that error, which Rust prints as `Error: ShardCannotStart` when it exits
    // (`fn main() -> Result<(), LauncherError>`, 0.9–3.x; `spawn_shards` returns it for a shard
    // that exits or is signalled before `Shard ready`).
    let cannot_start =
        has(text, "Shard") && has(text, "failed to start") || has(text, "Error: ShardCannotStart");
    if cannot_start {
        facts.late_phase = Some(Phase::Startup);
    }
}

/// Router tracing spans of the batching task (`router/src/infer.rs` / `backends/v3/src/backend.rs`
/// `#[instrument] prefill` / `decode` inside `batch{batch_size=…}`): a served batch failed.
fn router_span(text: &str, facts: &mut LineFacts) {
    if has(text, "}:prefill") || has(text, "}:decode") {
        tgi(facts);
        facts.late_phase = Some(Phase::Inference);
    }
}

/// text-embeddings-inference's router spans (`router/src/http/server.rs` handlers `embed`,
/// `embed_all`, `embed_sparse` over `core/src/infer.rs` `Infer::embed_pooled` / `embed_all` /
/// `embed_sparse`, `#[instrument(skip_all)]` with the request's `inputs` as a field): an error
/// logged in one happened while a request's inputs were embedded.
fn embedding_span(text: &str, facts: &mut LineFacts) {
    if has(text, "ERROR") && (has(text, ":embed_") || text.trim_start().starts_with("embed_")) {
        facts.failed_phase_hint = Some(Phase::Inference);
    }
}

fn init_error(text: &str, facts: &mut LineFacts) {
    if has(text, "text_generation") || has(text, "shard-manager") || has(text, "ERROR") {
        tgi(facts);
        facts.failed_phase_hint = Some(Phase::WeightsLoad);
    }
}

fn shard_waiting(text: &str, facts: &mut LineFacts) {
    if has(text, "text_generation_launcher") || has(text, "shard-manager") {
        tgi(facts);
    }
}

fn method_error(text: &str, facts: &mut LineFacts) {
    let Some(method) = word_after(text, "Method ") else {
        return;
    };
    let phase = match method {
        "Prefill" | "Decode" => Phase::Inference,
        "Warmup" => Phase::Profiling,
        _ => return,
    };
    tgi(facts);
    facts.failed_phase_hint = Some(phase);
}

fn runtime_env(text: &str, facts: &mut LineFacts) {
    if let Some(label) = word_after(text, "Docker label:") {
        facts.versions.push(("tgi docker label", label.to_string()));
    } else if let Some(sha) = word_after(text, "Commit sha:") {
        facts.versions.push(("tgi commit", sha.to_string()));
    }
}

fn request(text: &str, facts: &mut LineFacts) {
    if has(text, "Success") || has(text, "generate") {
        tgi(facts);
        facts.event(
            EventKind::Request,
            Phase::Inference,
            EventFigures::default(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_line_scan;
    use super::*;

    #[test]
    fn warmup_and_ready() {
        let facts = parse_line_scan("2024-06-17T13:18:29.371622Z  INFO text_generation_router: router/src/main.rs:350: Warming up model");
        assert_eq!(facts.events[0].phase, Phase::Profiling);
        let facts = parse_line_scan("2024-06-17T13:18:40.000000Z  INFO text_generation_router::server: router/src/server.rs:1838: Connected");
        assert_eq!(facts.events[0].kind, EventKind::ServerReady);
        let facts = parse_line_scan("2024-06-17T13:18:29Z  INFO shard-manager: text_generation_launcher: Shard ready in 12.5s rank=0");
        assert_eq!(facts.events[0].figures.seconds, Some(12.5));
    }

    /// text-embeddings-inference's embedding spans under an error: a request being embedded.
    #[test]
    fn an_error_in_an_embedding_span_is_a_request() {
        let line = "2024-07-20T03:34:19.641538Z ERROR embed:embed_pooled{inputs=String(\"Dalam\") \
                    truncate=false}: text_embeddings_core::infer: core/src/infer.rs:330: \
                    Server error: CUDA error: out of memory";
        assert_eq!(
            parse_line_scan(line).failed_phase_hint,
            Some(Phase::Inference)
        );
        let info = "2024-07-20T03:34:19Z  INFO embed:embed_pooled{inputs=String(\"x\")}: done";
        assert_eq!(parse_line_scan(info).failed_phase_hint, None);
    }

    #[test]
    fn a_shard_that_cannot_start_shows_start_up_under_the_failure() {
        for line in [
            "2024-06-17T13:18:29Z ERROR text_generation_launcher: Shard 0 failed to start",
            "Error: ShardCannotStart",
            "Shard process was signaled to shutdown with signal 4 rank=0 Error: ShardCannotStart",
        ] {
            let facts = parse_line_scan(line);
            assert_eq!(facts.late_phase, Some(Phase::Startup), "{line}");
            assert_eq!(facts.engine.map(|(name, _)| name), Some(EngineName::Tgi));
        }
        // The webserver's failure, or the error named in code, is not a shard's start-up.
        assert_eq!(
            parse_line_scan("ERROR text_generation_launcher: Webserver Crashed").late_phase,
            None
        );
        assert_eq!(
            parse_line_scan("return Err(LauncherError::ShardCannotStart);").late_phase,
            None
        );
    }
}
