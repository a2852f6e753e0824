//! The verdict: the likely cause with its evidence, the next steps (written by
//! `advice.rs` in the real flags of that engine and version), and a paragraph for the owner
//! saying whether this is a hardware limit or a configuration error.
//!
//! Rules, in order (the first that the figures prove wins):
//! 1. not a GPU failure (host RAM, illegal access) → say what it is;
//! 2. one allocation larger than the card's total;
//! 3. the engine's own memory error (vLLM start-up free memory, KV budget, warm-up; TGI; SGLang);
//! 4. other processes named in the text hold what was missing (free + theirs ≥ request);
//!    or less than half the card was free when the engine started (its own start-up line);
//! 5. free < request ≤ free + reserved-but-unallocated, the cache ≥ ¾ of the request and large
//!    against the live tensors ⇒ fragmentation plausible, never for an engine that pre-allocates
//!    its KV pool
//!    (confirmed only by a memory snapshot: `oomdoc snapshot`);
//! 6. the phase: weights, conversion/graph capture (transient peak), profiling (warm-up peak),
//!    KV cache, serving, training;
//! 7. otherwise the process filled the card, or nothing can be said.

use std::collections::BTreeMap;

use super::accounting::{own_process_guess, reserved_total, NOT_AVAILABLE_THRESHOLD};
use super::advice::next_steps;
use crate::model::explain::{
    Cause, EngineConfig, EngineInfo, EventKind, ModelInfo, OwnerClass, Phase, PhaseReport,
    TimelineEvent, Verdict,
};
use crate::model::failure::{EngineName, OomKind, OomMessage};
use crate::model::Bytes;
use crate::parse::engine_log::EngineMemory;

mod host;
#[cfg(test)]
use host::host_memory_steps;
use host::not_gpu;

/// What the verdict looks at.
#[derive(Debug, Clone, Copy)]
pub struct VerdictInputs<'a> {
    /// The failure that matters (first GPU OOM, else first failure).
    pub failure: Option<&'a OomMessage>,
    /// Every failure message.
    pub messages: &'a [OomMessage],
    /// Engine and version.
    pub engine: &'a EngineInfo,
    /// Settings seen.
    pub config: &'a EngineConfig,
    /// Model seen.
    pub model: Option<&'a ModelInfo>,
    /// Engine memory figures.
    pub memory: &'a EngineMemory,
    /// Versions seen.
    pub versions: &'a BTreeMap<String, String>,
    /// The phase decision.
    pub phase: &'a PhaseReport,
    /// The timeline of the failing run.
    pub timeline: &'a [TimelineEvent],
    /// A line where the engine said it failed (startup failed, shard crashed).
    pub shutdown_line: Option<u64>,
    /// A line where the reporter says other programs held the GPU's memory.
    pub holders_said: Option<u64>,
    /// A line where the reporter or a maintainer says the GPU has too little memory for the job.
    pub capacity_said: Option<u64>,
}

/// A dotted version as numbers (`0.6.3.post1` → [0, 6, 3]).
fn version_numbers(version: &str) -> Vec<u64> {
    version
        .trim_start_matches('v')
        .split(['.', '+', '-'])
        .map_while(|part| part.parse().ok())
        .collect()
}

/// Whether `version` (if known) is at least `minimum`; unknown counts as "yes" only when
/// `unknown_ok`.
pub(super) fn at_least(version: Option<&str>, minimum: &[u64], unknown_ok: bool) -> bool {
    match version {
        Some(version) => {
            let numbers = version_numbers(version);
            if numbers.is_empty() {
                return unknown_ok;
            }
            numbers.as_slice() >= minimum
        }
        None => unknown_ok,
    }
}

/// Whether the text logs the program at work (training steps, evaluations, served requests)
/// before its failure: JAX creates its client and preallocates its pool at the first array
/// operation (`jax/_src/xla_bridge.py` `backends()`, the pool in `xla/pjrt/gpu/se_gpu_pjrt_client.cc`
/// `CreateBFCAllocator`), so once steps ran, the start is behind. A later `Failed to allocate
/// device memory of …` is then the allocator growing at run time (`XLA_PYTHON_CLIENT_PREALLOCATE
/// =false` or a pool extended by TSL's `BFCAllocator::Extend`), not a start that failed.
fn jax_worked_before(inputs: &VerdictInputs<'_>, failure: &OomMessage) -> bool {
    inputs.timeline.iter().any(|event| {
        matches!(
            event.kind,
            EventKind::TrainingStep | EventKind::Evaluation | EventKind::Request
        ) && event.line < failure.line
    })
}

fn gib(bytes: Bytes) -> String {
    bytes.to_string()
}

pub(super) struct Builder<'a> {
    pub(super) inputs: &'a VerdictInputs<'a>,
    evidence: Vec<String>,
    steps: Vec<String>,
}

impl Builder<'_> {
    pub(super) fn step(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !self.steps.contains(&text) {
            self.steps.push(text);
        }
    }
    pub(super) fn fact(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !self.evidence.contains(&text) {
            self.evidence.push(text);
        }
    }
}

/// Decides cause, evidence, next steps and owner summary.
pub fn decide(inputs: &VerdictInputs<'_>) -> Verdict {
    let mut builder = Builder {
        inputs,
        evidence: Vec::new(),
        steps: Vec::new(),
    };
    let Some(failure) = inputs.failure else {
        return no_failure(inputs);
    };
    builder.fact(format!(
        "line {}: {}{}",
        failure.line,
        failure
            .exception
            .as_deref()
            .map(|e| format!("{e}: "))
            .unwrap_or_default(),
        shorten(&failure.text, 240)
    ));
    if !failure.is_gpu_oom {
        return not_gpu(builder, failure);
    }
    let cause = choose_cause(&mut builder, failure);
    phase_facts(&mut builder);
    timing_facts(&mut builder);
    next_steps(&mut builder, cause, failure);
    let (owner_class, owner_summary) = owner(&builder, cause, failure);
    Verdict {
        cause,
        headline: headline(cause, inputs, failure),
        evidence: builder.evidence,
        next_steps: builder.steps,
        owner_class,
        owner_summary,
    }
}

fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_string()
    } else {
        text.chars().take(limit).collect::<String>() + "…"
    }
}

fn no_failure(inputs: &VerdictInputs<'_>) -> Verdict {
    let (headline, evidence) = match inputs.shutdown_line {
        Some(line) => (
            "the engine failed, but the text shows no memory error".to_string(),
            vec![format!("line {line}: the engine reports a failure; its cause is not a memory message oomdoc knows")],
        ),
        None => (
            "no out-of-memory or other failure message found".to_string(),
            Vec::new(),
        ),
    };
    Verdict {
        cause: Cause::Unknown,
        headline,
        evidence,
        next_steps: vec![
            "pass the whole log (engine log and the traceback), not just the last line".to_string(),
        ],
        owner_class: OwnerClass::Undetermined,
        owner_summary: "The text does not show a GPU memory failure, so nothing can be said about hardware or configuration from it.".to_string(),
    }
}

fn other_processes_total(failure: &OomMessage) -> Option<Bytes> {
    let own = own_process_guess(failure);
    let total: Bytes = failure
        .figures
        .other_processes
        .iter()
        .filter(|p| Some(p.pid) != own)
        .filter_map(|p| p.in_use_bytes)
        .filter(|b| *b < NOT_AVAILABLE_THRESHOLD)
        .sum();
    (total > Bytes::ZERO).then_some(total)
}

fn choose_cause(builder: &mut Builder<'_>, failure: &OomMessage) -> Cause {
    let inputs = builder.inputs;
    let figures = &failure.figures;
    let tried = figures.tried_to_allocate_bytes;
    let total = figures.total_capacity_bytes;
    let free = figures.free_bytes;

    // 2. A size no GPU has: an overflow (a negative or uninitialised dimension wrapped to
    //    2^64, a wrong element size), not a shortage. A request merely above the card's total
    //    is a real (if too large) allocation and goes on to the rules below.
    // HAMi-core's `Device D OOM N / L` with N beyond any GPU: the container's usage counter
    // wrapped below zero (more freed than it counted), so every allocation is refused.
    if let Some(usage) = failure
        .details
        .usage_with_request_bytes
        .filter(|usage| *usage >= OVERFLOW_BYTES)
    {
        builder.fact(format!(
            "HAMi-core counts {} in use on the device plus the request, beyond any GPU made: its usage counter wrapped (a size near 2^64), so it refuses allocations that would fit; not a real need for memory",
            gib(usage)
        ));
        return Cause::SizeOverflow;
    }
    if is_overflow(failure) {
        let printed_size = !failure.figures.tried_to_allocate_is_lower_bound();
        builder.fact(match (tried.filter(|_| printed_size), total) {
            (Some(tried), Some(total)) => format!(
                "the request ({}) is far beyond the card's total capacity ({}) and beyond any GPU made: a size computed from an overflowed, negative or garbage dimension, not a real need for memory",
                gib(tried), gib(total)
            ),
            (Some(tried), None) => format!(
                "the request ({}) is beyond any GPU made: a size computed from an overflowed, negative or garbage dimension, not a real need for memory",
                gib(tried)
            ),
            _ => "PyTorch refused a request of more than 1 EB: a size computed from an overflowed, negative or garbage dimension, not a real need for memory".to_string(),
        });
        return Cause::SizeOverflow;
    }
    // A real size larger than the whole card: nothing on this card can serve it.
    if let (Some(tried), Some(total)) = (tried, total) {
        if tried > total {
            builder.fact(format!(
                "the request ({}) is larger than the card's total capacity ({}) (framework error text): no allocator setting or freed memory can satisfy it on this GPU",
                gib(tried), gib(total)
            ));
            return Cause::RequestLargerThanGpu;
        }
    }
    // The card's total not printed, but the request is more than any single GPU made has
    // ([`LARGEST_GPU_BYTES`]): no card could serve it, whichever this one is.
    if let (Some(tried), None) = (tried, total) {
        if tried > LARGEST_GPU_BYTES {
            builder.fact(format!(
                "the request ({}) is larger than any single GPU's memory (the largest cards hold 288 GB) (framework error text): no allocator setting or freed memory can satisfy it on one GPU",
                gib(tried)
            ));
            return Cause::RequestLargerThanGpu;
        }
    }

    // MLX on Apple's GPU refusing one buffer larger than Metal allows (`mlx/backend/metal/
    // allocator.cpp` `MetalAllocator::malloc`: "Attempting to allocate %zu bytes which is
    // greater than the maximum allowed buffer size of %zu bytes.", the device's
    // `maxBufferLength`): no freed memory or setting lets one buffer grow past it.
    let number_after = |marker: &str| -> Option<u64> {
        let rest = &failure.text[failure.text.find(marker)? + marker.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        rest[..digits].parse().ok()
    };
    if let (Some(request), Some(most)) = (
        number_after("Attempting to allocate "),
        number_after("greater than the maximum allowed buffer size of "),
    ) {
        if request > most {
            builder.fact(format!(
                "the request ({}) is larger than the largest buffer the device allows ({}) \
                 (framework error text): no freed memory or allocator setting can serve it as \
                 one buffer",
                gib(Bytes(request)),
                gib(Bytes(most))
            ));
            return Cause::RequestLargerThanGpu;
        }
    }
    // The allocator's own reading that its free memory is split: enough is free in total,
    // but its largest contiguous region is smaller than the request (the TPU runtime's
    // `There are 58.64M free. Due to fragmentation, the largest contiguous region of free
    // memory is 30.56M.`). That is fragmentation on data (largest free block < request), not
    // a guess from reserved figures.
    if let (Some(tried), Some(free), Some(largest)) =
        (tried, free, failure.details.largest_free_block_bytes)
    {
        if free >= tried && largest < tried {
            builder.fact(format!(
                "{} was free, but its largest contiguous region ({}) is smaller than the request ({}) (framework error text): the free memory is fragmented",
                gib(free), gib(largest), gib(tried)
            ));
            return Cause::FragmentationPlausible;
        }
    }

    // 3. Engine-specific memory errors.
    // JAX creates its CUDA context and preallocates 75 % of the card at start
    // (https://docs.jax.dev/en/latest/gpu_memory_allocation.html): when that fails, the
    // memory was already held by someone else (another JAX, PyTorch or TensorFlow process).
    let jax_start = inputs.engine.name == EngineName::Jax
        && inputs.messages.iter().chain([failure]).any(|m| {
            m.text.contains("Failed to create stream executor")
                || m.text.contains("Failed to allocate device memory of")
                // The executor's own cuMemAlloc (the preallocated pool), not a BFC request of
                // a computation ("while trying to allocate") or the async allocator.
                || (m.text.contains("CUDA_ERROR_OUT_OF_MEMORY")
                    && m.text.contains("stream_executor/cuda/cuda_")
                    && !m.text.contains("trying to allocate")
                    && !m.text.contains("cuMemAllocAsync"))
        });
    // XLA logged its start-up preallocation backing off (`Failed to allocate device memory of
    // …`, kept as the message's requested memory): the pool it got is smaller than it asked for
    // because the rest of the card was already held.
    let jax_start = jax_start
        || (failure.kind == OomKind::XlaResourceExhausted
            && failure.details.requested_memory_bytes.is_some());
    if jax_start && !jax_worked_before(inputs, failure) {
        builder.fact("JAX failed while creating its CUDA context or preallocating its memory pool (75 % of the card by default, `XLA_PYTHON_CLIENT_MEM_FRACTION`): that memory was already held by another process".to_string());
        return Cause::FreeMemoryBelowRequested;
    }
    // The TPU compiler's check of a program against the chip's HBM ("Ran out of memory in
    // memory space hbm. Used 9.08G of 7.48G hbm.", quoted in sokrypton/ColabFold#62): the
    // compiled program's own buffers need more than the chip has; a TPU is held by one
    // process, so no other program shares that memory. A phase the text shows names it
    // more closely (a training step's, an inference's memory), below.
    if failure.kind == OomKind::XlaResourceExhausted
        && failure
            .text
            .contains("Ran out of memory in memory space hbm")
        && inputs.phase.failed_in == Phase::Unknown
    {
        builder.fact("the TPU compiler found the program's own buffers larger than the chip's HBM (framework error text): the program needs more than the device has".to_string());
        return Cause::CapacityExhausted;
    }
    // A request of a running XLA program that its own pool cannot hold (TSL's BFC allocator, or
    // the TPU runtime): JAX/TensorFlow reserved that pool at start (75 % of the card by default),
    // so what fills it is this program's own buffers (`BufferAssignment` lists them), not
    // another process, whose memory would have made the start itself fail (above).
    if failure.kind == OomKind::XlaResourceExhausted
        && failure.figures.total_capacity_bytes.is_none()
        && (failure.text.contains("while trying to allocate")
            || failure.text.contains("Attempting to allocate"))
    {
        builder.fact("XLA's memory pool, reserved by this process when it started (75 % of the card by default, `XLA_PYTHON_CLIENT_MEM_FRACTION`), cannot hold the running program's buffers: the program needs more than the pool (framework error text)".to_string());
        return Cause::CapacityExhausted;
    }
    // TensorFlow's GPU allocator (the BFC allocator, `GPU_0_bfc`) reserves nearly all of the
    // card's free memory when the session starts, unless memory growth is on
    // (`allow_growth`, `TF_FORCE_GPU_ALLOW_GROWTH`): a tensor it cannot place does not fit the
    // pool this process already holds, filled by its own tensors.
    if matches!(
        failure.kind,
        OomKind::TensorflowOomTensor | OomKind::TensorflowBfc
    ) && failure.figures.total_capacity_bytes.is_none()
    {
        // Unless that pool was small from the start: TF's "Created device … with N MB memory"
        // far below the card.
        if let Some(outside) = held_before_start(builder, failure) {
            return outside;
        }
        builder.fact("TensorFlow's allocator reserved its pool of GPU memory when the session started (nearly all free memory unless memory growth is on): this process's own tensors fill it (framework error text)".to_string());
        return Cause::CapacityExhausted;
    }
    match failure.kind {
        OomKind::VllmStartupFreeMemory => {
            if let (Some(free), Some(total), Some(requested)) = (
                failure.figures.free_bytes,
                failure.figures.total_capacity_bytes,
                failure.details.requested_memory_bytes,
            ) {
                builder.fact(format!(
                    "free at start {} of {}, but gpu_memory_utilization{} asks for {} (framework error text)",
                    gib(free),
                    gib(total),
                    failure.details.gpu_memory_utilization.map(|u| format!(" {u}")).unwrap_or_default(),
                    gib(requested)
                ));
            }
            builder.fact("vLLM checks at start that free memory ≥ total × gpu_memory_utilization; it was not: another process (or a previous vLLM still running) holds memory, or the utilization is set higher than what is free".to_string());
            return Cause::FreeMemoryBelowRequested;
        }
        OomKind::VllmNoCacheBlocks | OomKind::VllmMaxSeqLenTooLarge => {
            kv_facts(builder, failure);
            return Cause::KvCacheBudget;
        }
        OomKind::VllmWarmupOom => {
            builder.fact("vLLM's warm-up runs the sampler with max_num_seqs dummy requests; that peak did not fit beside the weights and the KV cache".to_string());
            return Cause::WarmupPeak;
        }
        OomKind::TgiWarmup => {
            if failure.text.contains("max_total_tokens") {
                builder.fact("TGI could not fit max_total_tokens of KV cache beside the weights after warm-up".to_string());
                return Cause::KvCacheBudget;
            }
            builder.fact(format!(
                "TGI's warm-up runs one prefill batch of max_batch_prefill_tokens{}; its activations did not fit beside the weights",
                failure.details.prefill_tokens.map(|t| format!(" ({t} tokens)")).unwrap_or_default()
            ));
            return Cause::WarmupPeak;
        }
        OomKind::ExllamaSplit => {
            builder.fact("ExLlama's autosplit places the layers and their share of the cache on each allowed GPU in turn (keeping the reserve given per GPU); the last GPU filled before the model and its cache were placed: the cache size (context length, cache mode) or the model's size is more than the GPUs hold".to_string());
            return Cause::KvCacheBudget;
        }
        OomKind::SglangMemory
            if failure.text.contains("mem-fraction-static")
                || failure.text.contains("mem_fraction_static") =>
        {
            builder.fact("SGLang sizes the KV pool from --mem-fraction-static; after the weights, nothing (or too little) was left for it".to_string());
            kv_facts(builder, failure);
            return Cause::KvCacheBudget;
        }
        _ => {}
    }

    // 4. Other processes.
    let own = own_process_guess(failure);
    if let (Some(pid), Some((reserved, _))) = (own, reserved_total(failure)) {
        builder.fact(format!(
            "no `this process has` clause was printed, and PID {pid} holds at least PyTorch's whole reserve ({}): it is most likely this process itself, seen by NVML under its host PID from inside a container",
            gib(reserved)
        ));
    }
    if let Some(others) = other_processes_total(failure) {
        let pids: Vec<String> = figures
            .other_processes
            .iter()
            .filter(|p| Some(p.pid) != own)
            .filter(|p| p.in_use_bytes.is_some_and(|b| b < NOT_AVAILABLE_THRESHOLD))
            .map(|p| {
                format!(
                    "{} ({})",
                    p.pid,
                    p.in_use_bytes.map(gib).unwrap_or_default()
                )
            })
            .collect();
        builder.fact(format!(
            "other processes on this GPU hold {}: PID {} (NVML, printed in the error text; host PIDs)",
            gib(others),
            pids.join(", ")
        ));
        if let (Some(tried), Some(free)) = (tried, free) {
            if short_of(free, tried) && free + others >= tried {
                builder.fact(format!(
                    "free ({}) + other processes ({}) ≥ request ({}): without them the allocation would have had room",
                    gib(free), gib(others), gib(tried)
                ));
                return Cause::OtherProcessesHoldMemory;
            }
        }
    }

    // 4b. The message's own figures: this process holds far less than the card and nothing
    //     is free, so the rest is held outside it (other processes, a previous run still alive).
    if let Some(outside) = held_outside(builder, failure) {
        return outside;
    }

    // 4c. The engine's own start-up figure: less than half the card was free before this run
    //     loaded anything, so the rest was held by other processes from the start.
    if let Some(outside) = held_before_start(builder, failure) {
        return outside;
    }

    // 4d. The reporter's words: other programs held the memory (`solved, other programs occupy
    //     memory`, `a second process loads another model`), when no figure above decided it.
    //     Not when the message shows this process itself holding half the card or more.
    let own = held_by_process(failure)
        .map(|(bytes, _)| bytes)
        .or(figures.allocated_by_pytorch_bytes);
    let own_fills =
        matches!((own, total), (Some(own), Some(total)) if own.get() >= total.get() / 2);
    if let (Some(line), false) = (inputs.holders_said, own_fills) {
        builder.fact(format!(
            "line {line}: the reporter says other programs held the GPU's memory (their words, not a figure of the message)"
        ));
        return Cause::OtherProcessesHoldMemory;
    }

    // 5. Fragmentation: lead with it only when the cache PyTorch holds could take the request
    //    and is large against what the job holds (a training step at ~95 % of the card with a
    //    little cache is capacity first), and never for an engine that pre-allocates its KV
    //    pool (the cache there is the engine's budget, not stranded blocks).
    if let (Some(tried), Some(free), Some(unallocated)) =
        (tried, headroom(failure), figures.reserved_unallocated_bytes)
    {
        let allocated = figures
            .allocated_by_pytorch_bytes
            .or_else(|| reserved_total(failure).map(|(r, _)| r.saturating_sub(unallocated)));
        // Large against the request: the cache alone holds at least three quarters of it, and
        // with what is free all of it (a cache of half a request beside some free memory is
        // small against it, as an image pipeline's VAE decode or upscale asks for); and large
        // against the job: 15 % of its live tensors, which the next steps still need, or 10 %
        // when the cache alone could take the whole request.
        let cache_fits = free < tried
            && free.saturating_add(unallocated) >= tried
            && unallocated.get().saturating_mul(4) >= tried.get().saturating_mul(3);
        let share = if unallocated >= tried { 0.10 } else { 0.15 };
        let cache_is_large = allocated
            .is_none_or(|allocated| unallocated.get() as f64 >= share * allocated.get() as f64);
        let preallocating = preallocates_kv(inputs.engine.name);
        if cache_fits && cache_is_large && !preallocating {
            builder.fact(format!(
                "reserved-but-unallocated ({}){} could hold the request ({}) while free ({}) could not: PyTorch holds enough cached memory, but not as one block large enough — fragmentation is plausible",
                gib(unallocated),
                allocated.map(|a| format!(", against {} of live tensors,", gib(a))).unwrap_or_default(),
                gib(tried), gib(free)
            ));
            builder.fact("only a memory snapshot proves fragmentation (largest free block < request): `oomdoc snapshot`".to_string());
            return Cause::FragmentationPlausible;
        }
        if cache_fits && preallocating {
            builder.fact(format!(
                "reserved-but-unallocated ({}) ≥ what was missing, but {} pre-allocates its KV cache from a memory budget: the cause is that budget against the card, and fragmentation is at most a side note",
                gib(unallocated),
                inputs.engine.name.label()
            ));
        } else if cache_fits {
            builder.fact(format!(
                "reserved-but-unallocated ({}) could hold the request ({}), but it is small against the {} of live tensors: with the card this full the next steps need more than any defragmentation frees — capacity first, fragmentation at most a note",
                gib(unallocated),
                gib(tried),
                allocated.map(gib).unwrap_or_default()
            ));
        } else if free < tried && free + unallocated >= tried {
            builder.fact(format!(
                "free ({}) + reserved-but-unallocated ({}) ≥ request ({}), but neither alone: part of the cache is stranded in partly used segments",
                gib(free), gib(unallocated), gib(tried)
            ));
        }
    }
    if figures.process_in_use_not_reported() {
        builder.fact("NVML did not report this process's memory (PyTorch printed its N/A value, 17179869184.00 GiB): the allocator figures are the reliable ones".to_string());
    } else if figures.process_in_use_bytes == Some(Bytes::ZERO) {
        builder.fact("NVML reported 0 bytes for this process: typical inside a container, where NVML sees host PIDs; the allocator figures below are the reliable ones".to_string());
    } else if let (Some(process), Some(total)) = (figures.process_in_use_reported(), total) {
        builder.fact(format!(
            "this process holds {} of the card's {} (NVML figure printed in the error)",
            gib(process),
            gib(total)
        ));
    }
    if let Some((reserved, derived)) = reserved_total(failure) {
        if let Some(allocated) = figures.allocated_by_pytorch_bytes {
            builder.fact(format!(
                "PyTorch reserved {} ({}), of which {} are live tensors; the rest is cached and reusable by this process",
                gib(reserved),
                if derived { "allocated + reserved-but-unallocated" } else { "as printed" },
                gib(allocated)
            ));
        }
    }

    // 6. The phase.
    match inputs.phase.failed_in {
        Phase::WeightsLoad => {
            weights_facts(builder);
            Cause::WeightsDoNotFit
        }
        Phase::FormatConversion => {
            builder.fact("the failure came while weights were converted or repacked after loading: for a moment the old and the new form of a layer coexist".to_string());
            Cause::TransientPeak
        }
        Phase::CudaGraphCapture => {
            builder.fact("the failure came during CUDA-graph capture or compilation, which needs memory beyond the steady state (graph pools per batch size)".to_string());
            Cause::TransientPeak
        }
        Phase::Profiling => {
            builder.fact("the failure came in the profiling / warm-up pass, which runs the largest batch the settings allow".to_string());
            Cause::WarmupPeak
        }
        Phase::KvCacheAlloc => {
            kv_facts(builder, failure);
            Cause::KvCacheBudget
        }
        Phase::Inference => Cause::InferenceLoad,
        Phase::TrainingStep => Cause::TrainingMemory,
        Phase::Startup => startup_cause(builder, failure),
        Phase::Unknown => fallback_cause(builder, failure),
    }
}

/// At startup, little free memory means someone else holds the card, unless the message shows
/// this process itself holding most of it (a start that already loaded and then failed).
fn startup_cause(builder: &mut Builder<'_>, failure: &OomMessage) -> Cause {
    let figures = &failure.figures;
    let own = held_by_process(failure)
        .map(|(bytes, _)| bytes)
        .or(figures.allocated_by_pytorch_bytes);
    match (own, figures.total_capacity_bytes) {
        (Some(own), Some(total)) if total > Bytes::ZERO && own.get() >= total.get() / 2 => {
            builder.fact(format!(
                "this process itself holds {} of the card's {} (framework error text): it filled the card during start-up, no other process is needed to explain it",
                gib(own),
                gib(total)
            ));
            Cause::CapacityExhausted
        }
        _ => Cause::FreeMemoryBelowRequested,
    }
}

/// 288 GB, the most memory one GPU has in 2025 (NVIDIA B300 and AMD Instinct MI355X, 288 GB
/// HBM3E each, their datasheets), taken as binary GiB to stay on the safe side: a request above
/// it fits on no single card.
const LARGEST_GPU_BYTES: Bytes = Bytes(288 << 30);

/// 16 TiB: more than any GPU has, by far; a request this large is an overflowed size.
const OVERFLOW_BYTES: Bytes = Bytes(16 << 40);

/// Whether the request is a size no GPU has: PyTorch's "more than 1EB", ≥ 16 TiB, or ≥ 64×
/// the card (a 1 TiB XLA request on an 80 GiB card is a real, too large, allocation).
fn is_overflow(failure: &OomMessage) -> bool {
    if failure.kind == OomKind::PytorchAbsurdSize {
        return true;
    }
    let tried = failure.figures.tried_to_allocate_bytes;
    let total = failure.figures.total_capacity_bytes;
    match (tried, total) {
        (Some(tried), _) if tried >= OVERFLOW_BYTES => true,
        (Some(tried), Some(total)) => total > Bytes::ZERO && tried.get() / 64 >= total.get(),
        _ => false,
    }
}

/// Engines that size a KV pool up front from a memory budget (`gpu_memory_utilization`,
/// `mem_fraction_static`, `cuda_memory_fraction`, `cache_max_entry_count`,
/// `kv_cache_free_gpu_mem_fraction`, an ExLlamaV2 cache): a full card is their design.
fn preallocates_kv(engine: EngineName) -> bool {
    matches!(
        engine,
        EngineName::Vllm
            | EngineName::Sglang
            | EngineName::Tgi
            | EngineName::Aphrodite
            | EngineName::Lmdeploy
            | EngineName::TensorrtLlm
            | EngineName::Exllamav2
            | EngineName::MlcLlm
    )
}

/// What the process could still get: free on the device, or less when
/// `set_per_process_memory_fraction` capped it (`X allowed;`: allowed − reserved).
fn headroom(failure: &OomMessage) -> Option<Bytes> {
    let free = failure.figures.free_bytes?;
    match (failure.figures.allowed_bytes, reserved_total(failure)) {
        (Some(allowed), Some((reserved, _))) => Some(free.min(allowed.saturating_sub(reserved))),
        _ => Some(free),
    }
}

/// Whether the device-wide free memory could not hold the request: less than it, or within a
/// few MiB of it (the driver maps whole pages and keeps some for itself, so a 20 MiB segment
/// fails with 20.38 MiB "free").
fn short_of(free: Bytes, tried: Bytes) -> bool {
    const SLACK: u64 = 4 << 20;
    free.get() < tried.get().saturating_add(SLACK)
}

/// What this process holds by the message's figures: NVML's `this process has` (or its own
/// `Process N has` line inside a container), else PyTorch's reserve. The flag says NVML.
fn held_by_process(failure: &OomMessage) -> Option<(Bytes, bool)> {
    let figures = &failure.figures;
    let own = own_process_guess(failure);
    figures
        .process_in_use_reported()
        .filter(|bytes| *bytes > Bytes::ZERO && *bytes < NOT_AVAILABLE_THRESHOLD)
        .or_else(|| {
            figures
                .other_processes
                .iter()
                .find(|p| Some(p.pid) == own)
                .and_then(|p| p.in_use_bytes)
                .filter(|bytes| *bytes < NOT_AVAILABLE_THRESHOLD)
        })
        .map(|bytes| (bytes, true))
        .or_else(|| reserved_total(failure).map(|(bytes, _)| (bytes, false)))
}

/// Rule 4b: total − this process − free is memory held outside this process. Said only when
/// it is a large share of the card (≥ 25 %), covers what was missing, and — when only
/// PyTorch's reserve is known — exceeds what the process itself may hold outside PyTorch
/// (CUDA context, cuBLAS, NCCL: ≥ 2 GiB); never from the reserve alone for engines whose
/// memory is mostly outside PyTorch (TurboMind, TensorRT-LLM, MLC, ggml).
fn held_outside(builder: &mut Builder<'_>, failure: &OomMessage) -> Option<Cause> {
    let figures = &failure.figures;
    let total = figures.total_capacity_bytes?;
    let free = figures.free_bytes?;
    let tried = figures.tried_to_allocate_bytes?;
    if !short_of(free, tried) || total == Bytes::ZERO {
        return None;
    }
    let (held, nvml) = held_by_process(failure)?;
    let outside = total.saturating_sub(held).saturating_sub(free);
    let share = outside.get() as f64 / total.get() as f64;
    let engine = builder.inputs.engine.name;
    let outside_pytorch = matches!(
        engine,
        EngineName::Lmdeploy
            | EngineName::TensorrtLlm
            | EngineName::MlcLlm
            | EngineName::Llamacpp
            | EngineName::Ollama
            | EngineName::Ctranslate2
    );
    let enough = share >= 0.25
        && outside >= tried.saturating_sub(free)
        && (nvml || (outside >= Bytes(2 << 30) && !outside_pytorch));
    if !enough {
        return None;
    }
    builder.fact(format!(
        "this process holds {} ({}) of the card's {} and only {} is free: about {} ({:.0} %) is held {}",
        gib(held),
        if nvml { "NVML figure printed in the error" } else { "PyTorch's reserve; its CUDA context and libraries add well under that" },
        gib(total),
        gib(free),
        gib(outside),
        share * 100.0,
        if nvml {
            "by other processes (or an earlier run still alive)"
        } else {
            "outside PyTorch's allocator: other processes or ranks sharing this GPU, an earlier run still alive, or another allocator in this process"
        }
    ));
    Some(Cause::OtherProcessesHoldMemory)
}

/// What was free when the engine started, against the card: vLLM's "Free memory on device
/// (F/T GiB) on startup", SGLang's "Load weight begin. avail mem=F GB", Ollama's
/// `memory.available=[F]`, llama.cpp's per-device free figure, TensorFlow's "Created device … with
/// N MB memory" (all read by `parse::engine_log`). Under half the card free before anything was
/// loaded: other processes (or an earlier run still alive) held the rest.
fn held_before_start(builder: &mut Builder<'_>, failure: &OomMessage) -> Option<Cause> {
    let memory = builder.inputs.memory;
    let free = memory.free_at_start?;
    let total = failure.figures.total_capacity_bytes.or(memory.total_gpu)?;
    if total == Bytes::ZERO || free.get().saturating_mul(2) >= total.get() {
        return None;
    }
    let held = total.saturating_sub(free);
    builder.fact(format!(
        "when the engine started only {} of the card's {} was free (engine log): about {} ({:.0} %) was held before this run loaded anything, by other processes or an earlier run still alive",
        gib(free),
        gib(total),
        gib(held),
        held.get() as f64 * 100.0 / total.get() as f64
    ));
    Some(Cause::OtherProcessesHoldMemory)
}

/// Without a phase: did this process fill the card, or did one request exceed what was free?
fn fallback_cause(builder: &mut Builder<'_>, failure: &OomMessage) -> Cause {
    let figures = &failure.figures;
    let own = own_process_guess(failure);
    let held = figures
        .process_in_use_reported()
        .filter(|bytes| *bytes > Bytes::ZERO)
        .or_else(|| {
            figures
                .other_processes
                .iter()
                .find(|p| Some(p.pid) == own)
                .and_then(|p| p.in_use_bytes)
        })
        .or_else(|| reserved_total(failure).map(|(bytes, _)| bytes));
    match (
        held,
        figures.total_capacity_bytes,
        figures.free_bytes,
        figures.tried_to_allocate_bytes,
    ) {
        (Some(held), Some(total), _, _) if held.get() as f64 >= 0.8 * total.get() as f64 => {
            Cause::CapacityExhausted
        }
        // One large request on a card with room; with next to nothing free (< 5 % of the card)
        // and a modest request, the card was simply full.
        (_, Some(total), Some(free), Some(tried))
            if tried > free
                && (free.get().saturating_mul(20) >= total.get()
                    || tried.get().saturating_mul(4) >= total.get()) =>
        {
            builder.fact(format!(
                "the request ({}) exceeds what was free ({}) although the card ({}) was not full: one large allocation (an activation, a cache or a buffer sized by the settings), not a slow build-up",
                gib(tried), gib(free), gib(total)
            ));
            Cause::LargeAllocation
        }
        (Some(_), _, _, _) => Cause::CapacityExhausted,
        _ if figures.allocated_by_pytorch_bytes.is_some() => Cause::CapacityExhausted,
        // No figures, no other process named: an engine that takes most of the card for its
        // KV cache at start (vLLM `--gpu-memory-utilization`, SGLang `--mem-fraction-static`,
        // LMDeploy `cache_max_entry_count`, TensorRT-LLM `kv_cache_free_gpu_mem_fraction`…)
        // filled the card itself, by design; what is left is its budget against the card. Not
        // TensorRT's own allocator message: the engine builder and engine deserialisation print
        // it, before any KV cache exists.
        _ if preallocates_kv(builder.inputs.engine.name)
            && figures.other_processes.is_empty()
            && failure.kind != OomKind::TensorrtAlloc =>
        {
            builder.fact(format!(
                "{} takes most of the card for its KV cache when it starts, and the text names no other process: the engine itself filled the card, so its memory budget against the card is the cause",
                builder.inputs.engine.name.label()
            ));
            Cause::CapacityExhausted
        }
        // No figure decides, but the reporter or a maintainer says the card is too small for
        // the job (`your GPU doesn't have enough VRAM`), and nobody names another holder.
        _ if builder.inputs.capacity_said.is_some()
            && builder.inputs.holders_said.is_none()
            && figures.other_processes.is_empty() =>
        {
            builder.fact(format!(
                "line {}: the text says the GPU has too little memory for this job (their words, not a figure of the message)",
                builder.inputs.capacity_said.unwrap_or_default()
            ));
            Cause::CapacityExhausted
        }
        _ => Cause::Unknown,
    }
}

fn kv_facts(builder: &mut Builder<'_>, failure: &OomMessage) {
    let inputs = builder.inputs;
    let details = &failure.details;
    let max_len = details.max_model_len.or(inputs.config.max_model_len);
    if let (Some(seqs), Some(blocks)) = (details.max_num_seqs, details.mamba_cache_blocks) {
        builder.fact(format!(
            "the state cache holds {blocks} Mamba blocks, one per decode sequence, but max_num_seqs is {seqs} (framework error text)"
        ));
    } else if let (Some(max_len), Some(capacity)) = (max_len, details.kv_cache_capacity_tokens) {
        builder.fact(format!(
            "the KV cache holds {capacity} tokens but max_model_len is {max_len}: not even one full-length request fits (framework error text)"
        ));
    } else if let (Some(needed), Some(available)) = (
        details.kv_cache_needed_bytes,
        details.kv_cache_available_bytes,
    ) {
        builder.fact(format!(
            "one request of max_model_len{} needs {} of KV cache; {} is available (framework error text)",
            max_len.map(|l| format!(" ({l})")).unwrap_or_default(),
            gib(needed),
            gib(available)
        ));
    } else {
        let tokens = inputs
            .timeline
            .iter()
            .rev()
            .find(|e| {
                matches!(
                    e.kind,
                    EventKind::KvCacheAllocated | EventKind::KvCachePlanned
                ) && e.figures.tokens.is_some()
            })
            .and_then(|e| e.figures.tokens.map(|t| (t, e.line)));
        match (max_len, tokens) {
            (Some(max_len), Some((tokens, line))) => builder.fact(format!(
                "line {line}: the KV cache holds {tokens} tokens; max_model_len is {max_len}{}",
                if tokens < max_len {
                    " — not even one full-length request fits"
                } else {
                    ""
                }
            )),
            (Some(max_len), None) => builder.fact(format!("max_model_len is {max_len}")),
            _ => {}
        }
    }
    if let Some(estimated) = details.estimated_max_model_len {
        builder.fact(format!(
            "the engine estimates the largest max_model_len that fits at {estimated} (framework error text)"
        ));
    }
    if let Some(kv) = inputs.memory.kv_cache {
        builder.fact(format!(
            "KV-cache budget reported by the engine: {} (engine log)",
            gib(kv)
        ));
    }
    if let Some(weights) = inputs.memory.weights {
        builder.fact(format!("weights take {} (engine log)", gib(weights)));
    }
    if let Some(fraction) = details.mem_fraction_static {
        builder.fact(format!(
            "mem_fraction_static is {fraction} (framework error text)"
        ));
    }
}

fn weights_facts(builder: &mut Builder<'_>) {
    let inputs = builder.inputs;
    if let Some(weights) = inputs.memory.weights {
        builder.fact(format!(
            "weights loaded so far: {} (engine log)",
            gib(weights)
        ));
    }
    builder.fact("the failure came while weights were being placed on the GPU: the weights (for this dtype and sharding) do not fit in what was free; `oomdoc fit` computes their exact size from the checkpoint headers".to_string());
}

fn phase_facts(builder: &mut Builder<'_>) {
    let phase = builder.inputs.phase;
    if phase.prompt_can_be_cause == Some(false) {
        let during = if phase.failed_in == Phase::Unknown {
            String::new()
        } else {
            format!(" during {}", phase.failed_in.as_str())
        };
        builder.fact(format!(
            "the failure came{during} before the server accepted requests: a user prompt cannot be the cause"
        ));
    }
}

/// The load time tells a slow disk from a memory problem.
fn timing_facts(builder: &mut Builder<'_>) {
    let loaded = builder.inputs.timeline.iter().find(|e| {
        e.kind == EventKind::WeightsLoaded
            && e.figures.bytes.is_some()
            && e.figures.seconds.is_some()
    });
    if let Some(event) = loaded {
        if let (Some(bytes), Some(seconds)) = (event.figures.bytes, event.figures.seconds) {
            if seconds > 0.0 {
                let rate = bytes.as_gib() / seconds;
                builder.fact(format!(
                    "line {}: weights ({}) loaded in {seconds:.1} s = {rate:.2} GiB/s{}",
                    event.line,
                    gib(bytes),
                    if rate < 0.2 {
                        " — slow storage or network, which costs time but not GPU memory"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
}

fn headline(cause: Cause, inputs: &VerdictInputs<'_>, failure: &OomMessage) -> String {
    let phase = inputs.phase.failed_in;
    let where_ = if phase == Phase::Unknown {
        String::new()
    } else {
        format!(" while {}", phase.short())
    };
    // An Ascend NPU is named as its message names it (`NPU 2`).
    let device = if failure.kind == OomKind::NpuOutOfMemory {
        "NPU"
    } else {
        "GPU"
    };
    let gpu = failure
        .figures
        .gpu_index
        .map(|ordinal| format!("{device} {ordinal}"))
        .unwrap_or_else(|| format!("the {device}"));
    match cause {
        Cause::RequestLargerThanGpu => format!("one allocation asks for more than {gpu} has in total"),
        Cause::SizeOverflow if failure.details.usage_with_request_bytes.is_some() => format!("HAMi-core's usage counter for {gpu} wrapped to an impossible size, so it refuses allocations: not a lack of memory"),
        Cause::SizeOverflow => format!("one allocation asks for an impossible size on {gpu}: an overflowed or wrong shape, not a lack of memory"),
        Cause::OtherProcessesHoldMemory => format!("{gpu} ran out of memory{where_} because other processes hold the memory that was missing"),
        Cause::FragmentationPlausible => format!("{gpu} ran out of memory{where_}; enough is cached but not in one block — fragmentation is plausible"),
        Cause::WeightsDoNotFit => format!("the weights do not fit on {gpu}"),
        Cause::KvCacheBudget => "the KV cache does not fit the configured context length beside the weights".to_string(),
        Cause::FreeMemoryBelowRequested => format!("{gpu} had less free memory at start than the engine was told to take"),
        Cause::TransientPeak => format!("{gpu} ran out of memory{where_}: a transient peak above the steady state"),
        Cause::WarmupPeak => format!("{gpu} ran out of memory{where_}: the warm-up batch did not fit"),
        Cause::InferenceLoad => format!("{gpu} ran out of memory{where_}: a batch needed more than the headroom left"),
        Cause::TrainingMemory => format!("{gpu} ran out of memory{where_}"),
        Cause::CapacityExhausted => format!("{gpu} ran out of memory: this process filled it"),
        Cause::LargeAllocation => format!("{gpu} ran out of memory{where_}: one allocation asked for more than was free"),
        Cause::HostMemory | Cause::KilledBySignal | Cause::IllegalMemoryAccess | Cause::Unknown => format!("{gpu} ran out of memory{where_}"),
        Cause::SharedMemory | Cause::DiskFull | Cause::DeviceAssert | Cause::TritonResources | Cause::ContextFull => format!("{gpu} ran out of memory{where_}"),
    }
}

fn owner(builder: &Builder<'_>, cause: Cause, failure: &OomMessage) -> (OwnerClass, String) {
    let inputs = builder.inputs;
    let model = inputs
        .model
        .and_then(|m| m.name.clone())
        .map(|name| format!("`{name}`"))
        .unwrap_or_else(|| "the model".to_string());
    let total = failure
        .figures
        .total_capacity_bytes
        .or(inputs.memory.total_gpu)
        .map(|t| format!("{} ", gib(t)))
        .unwrap_or_default();
    let prompt = if inputs.phase.prompt_can_be_cause == Some(false) {
        " It failed before serving any request, so no user prompt caused it."
    } else {
        ""
    };
    match cause {
        Cause::WeightsDoNotFit => (
            OwnerClass::HardwareLimit,
            format!("Hardware limit: the weights of {model} do not fit on this {total}GPU as configured.{prompt} A setting cannot make them smaller: either spread the model over more GPUs, use a quantized version, or rent a card (or several) whose combined memory exceeds the weights plus about 20% for the KV cache and activations; `oomdoc fit` gives the exact weight size."),
        ),
        Cause::RequestLargerThanGpu => (
            OwnerClass::Configuration,
            format!("Configuration error: a single allocation is larger than the whole {total}GPU, so no card of this class could satisfy it.{prompt} The batch size, sequence length or tensor shape that produces it has to change; buying a bigger card only helps if a card exists that is larger than that one allocation."),
        ),
        Cause::SizeOverflow if failure.details.usage_with_request_bytes.is_some() => (
            OwnerClass::Configuration,
            format!("Not a hardware limit: HAMi-core, the GPU-sharing layer, counts an impossible usage on the device (its counter wrapped), so it refuses allocations that would fit.{prompt} Restart the pod to reset the count and update HAMi-core; no card and no batch size fixes it."),
        ),
        Cause::SizeOverflow => (
            OwnerClass::Configuration,
            format!("Not a hardware limit: a single allocation asks for a size far beyond the whole {total}GPU and beyond any GPU made, which is an overflowed or garbage tensor size.{prompt} No card and no batch size fixes it; the code or input that computes that shape has to be fixed."),
        ),
        Cause::OtherProcessesHoldMemory | Cause::FreeMemoryBelowRequested => (
            OwnerClass::Configuration,
            format!("Configuration error: the GPU is shared — other processes held the memory this job needed.{prompt} Run it on a free GPU or stop the other jobs; no new hardware is needed."),
        ),
        Cause::FragmentationPlausible => (
            OwnerClass::Configuration,
            format!("Probably a configuration issue, not a hardware limit: enough memory was cached by PyTorch, but in pieces too small for the request.{prompt} An allocator setting or a change in allocation pattern should fix it; confirm with a memory snapshot before buying hardware."),
        ),
        Cause::KvCacheBudget => (
            OwnerClass::Configuration,
            format!("Configuration error: {model} fits, but the context length configured needs more KV cache than is left beside the weights.{prompt} Lowering the maximum context length (or quantizing the KV cache) fixes it without new hardware; a larger card is only needed if that full context length is a requirement."),
        ),
        Cause::TransientPeak | Cause::WarmupPeak => (
            OwnerClass::Configuration,
            format!("Configuration error: {model} fits in steady state, but a start-up step needs a temporary peak above what was left.{prompt} Reserving less for the KV cache, turning off the step (e.g. CUDA graphs) or shrinking the warm-up batch fixes it; no new hardware is needed."),
        ),
        // A serving engine's batch is its concurrent requests beside a KV cache; an app or a
        // script (ComfyUI, faster-whisper, a user's evaluation loop) runs its own inputs.
        Cause::InferenceLoad
            if preallocates_kv(inputs.engine.name)
                || matches!(inputs.engine.name, EngineName::Llamacpp | EngineName::Ollama) =>
        {
            (
                OwnerClass::Configuration,
                "Configuration error: the server ran, and a batch of requests needed more memory than the headroom left beside weights and KV cache. Cap the batch (concurrent sequences, batched tokens) or leave more headroom; hardware is fine for smaller batches.".to_string(),
            )
        }
        Cause::InferenceLoad => (
            OwnerClass::Configuration,
            format!("Configuration error: the model loaded, and running it on a batch or input needed more memory than was left on this {total}GPU beside the weights. A smaller batch, a smaller input (resolution, length) or lower-precision weights fix it; hardware is fine for smaller inputs."),
        ),
        Cause::TrainingMemory => (
            OwnerClass::Configuration,
            format!("Probably a configuration issue: a training step (activations, gradients, optimizer state) needs more than this {total}GPU at the current batch size. Smaller batches with gradient accumulation, activation checkpointing, mixed precision or sharding usually fix it; only if the model's weights plus optimizer state alone exceed the card is more hardware needed."),
        ),
        Cause::LargeAllocation => (
            OwnerClass::Configuration,
            format!("Probably a configuration issue: the {total}GPU still had room, but one allocation (sized by batch, sequence length or an engine buffer) asked for more than was free.{prompt} Smaller batches, shorter sequences or engine limits fix it; a larger card only helps if that allocation is unavoidable."),
        ),
        Cause::CapacityExhausted | Cause::Unknown => (
            OwnerClass::Undetermined,
            format!("Undetermined: this process used up the {total}GPU, but the text does not show whether the model itself is too large for the card or the batch/context settings are.{prompt} Run `oomdoc fit` on the checkpoint: if the weights alone approach the card's size it is a hardware limit, otherwise reduce batch or context."),
        ),
        Cause::HostMemory | Cause::KilledBySignal | Cause::IllegalMemoryAccess => (OwnerClass::NotGpuMemory, String::new()),
        Cause::SharedMemory | Cause::DiskFull | Cause::DeviceAssert | Cause::TritonResources | Cause::ContextFull => (OwnerClass::NotGpuMemory, String::new()),
    }
}

#[cfg(test)]
mod tests;
