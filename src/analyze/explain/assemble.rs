//! Building the report once the input is read: the failure that is explained, its phase (the
//! frames, hints and progress weighed by `analyze::phase`), its engine, the timeline and the
//! context blocks, from what [`Collected`] gathered.

use super::*;
use crate::analyze::phase::{decide as decide_phase, read_frames, wrapping_phrase};

/// How far under a failure's message a line may report its stage (see `Collected::late`).
const LATE_LINES: u64 = 40;

pub(super) fn build_report(
    collected: &Collected,
    names: &[String],
    lines: u64,
    bytes: u64,
) -> ExplainReport {
    let primary = collected
        .first_gpu_failure
        .as_ref()
        .or(collected.first_failure.as_ref());
    let failure = primary.and_then(|point| collected.ooms.get(point.message_index));

    let segment = match (primary, &collected.saved_segment) {
        (Some(point), Some(saved)) if saved.id == point.segment => saved,
        _ => &collected.segment,
    };
    let mut timeline = segment.events();
    let start = timeline.iter().find_map(|event| event.seconds_since_start);
    for event in &mut timeline {
        event.seconds_since_start = match (event.seconds_since_start, start) {
            (Some(seconds), Some(start)) => Some(((seconds - start) * 1000.0).round() / 1000.0),
            _ => None,
        };
    }

    let progress = primary.map_or(&collected.progress, |point| &point.progress);
    // Lines searched for failures only after the last line that showed the run's progress:
    // what ran at the failure may have changed there (a restart, the server becoming ready),
    // so the progress seen before them decides nothing.
    let unseen = primary.and_then(|point| {
        let seen = [
            progress.in_progress.map(|(_, line)| line),
            progress.last_completed.map(|(_, line)| line),
            progress.server_ready,
            progress.engine_ready,
            progress.first_request,
            progress.started,
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0);
        collected
            .unseen
            .iter()
            .copied()
            .find(|&(first, last)| first > seen && last < point.line)
    });
    let stale;
    let progress = match unseen {
        Some(_) => {
            stale = Progress {
                last_completed: progress.last_completed,
                completed_before: progress.completed_before,
                ..Progress::default()
            };
            &stale
        }
        None => progress,
    };
    let mut frames = failure_frames(collected, primary.map(|point| point.line));
    // An app that re-raises with the cause's text inside its own message (`raise
    // RuntimeError(f"Error transcribing mic: {e}") from e`) and logs the cause's traceback under
    // it: the frames above are the app's wrapper, those of the traceback below show the stage.
    if let Some(message) = failure {
        if read_frames(&frames).decided.is_none() {
            if let Some(below) = rewrapped_cause_frames(collected, message) {
                frames = below;
            }
        }
    }
    let hint = collected
        .hints
        .iter()
        .copied()
        .find(|(line, _)| primary.is_none_or(|point| line.abs_diff(point.line) <= 400))
        .or_else(|| {
            // The engine's own words around the error on its line (TGI `Unable to warmup
            // model: …`, SGLang `Capture cuda graph failed: …`), when no frame names the
            // stage more precisely.
            if read_frames(&frames).decided.is_some() {
                return None;
            }
            let line = failure?.line;
            collected
                .context
                .iter()
                .flat_map(|block| &block.lines)
                .find(|context| context.line == line)
                .and_then(|context| wrapping_phrase(&context.text))
                .map(|(phase, _)| (line, phase))
        });
    // A line printed under the failure (within its block: at most LATE_LINES after it) that
    // shows the stage running: the tqdm bar of the step that failed, a router span or a
    // webui footer reporting the error.
    let late = primary.and_then(|point| {
        let end = failure.map_or(point.line, |message| message.end_line.max(point.line));
        collected
            .late
            .iter()
            .copied()
            .find(|(line, _)| *line >= point.line && *line <= end + LATE_LINES)
    });
    let mut phase = decide_phase(PhaseInputs {
        failure,
        progress,
        frames: &frames,
        hint,
        late,
    });
    // The reporter's words, when no frame or log line decides the stage of a GPU OOM
    // (`phase::prose`).
    if collected.first_gpu_failure.is_some() {
        crate::analyze::phase::prose::fill_unknown(&mut phase, &collected.prose);
    }
    if let Some((first, last)) = unseen {
        phase.evidence.push(format!(
            "lines {first}-{last} were searched for failure messages only: the stages and \
             requests there are not known"
        ));
    }

    let engine_name = choose_engine(collected, failure);
    let engine = EngineInfo {
        name: engine_name,
        version: collected
            .engine_versions
            .get(&engine_name)
            .cloned()
            .or_else(|| {
                // `vllm==0.6.3` in a pip list or collect_env output.
                (engine_name == EngineName::Vllm)
                    .then(|| collected.versions.get("vllm").cloned())
                    .flatten()
            }),
        generation: (engine_name == EngineName::Vllm)
            .then(|| collected.generation.map(str::to_string))
            .flatten(),
        evidence_line: collected.engine.map(|(_, _, line)| line),
    };

    let is_gpu_oom = collected.first_gpu_failure.is_some();
    let oom = collected
        .first_gpu_failure
        .as_ref()
        .and_then(|point| collected.ooms.get(point.message_index))
        .map(|message| message.figures.clone())
        .filter(|figures| figures != &Default::default());

    let model = (collected.model != ModelInfo::default()).then(|| collected.model.clone());
    let accounting = crate::analyze::accounting::lines(failure, &collected.memory);
    let verdict = crate::analyze::verdict::decide(&crate::analyze::verdict::VerdictInputs {
        failure,
        messages: &collected.ooms,
        engine: &engine,
        config: &collected.config,
        model: model.as_ref(),
        memory: &collected.memory,
        versions: &collected.versions,
        phase: &phase,
        timeline: &timeline,
        shutdown_line: collected.shutdown_line,
    });

    ExplainReport {
        is_gpu_oom,
        engine,
        model,
        config: collected.config.clone(),
        oom,
        ooms: collected.ooms.clone(),
        ooms_total: collected.ooms_total,
        phase,
        timeline,
        accounting,
        verdict,
        versions: collected.versions.clone(),
        context: collected.context.clone(),
        input: InputSummary {
            names: names.to_vec(),
            lines,
            bytes,
            engine_starts: collected.engine_starts,
            failures_only_lines: collected.failures_only_lines,
        },
    }
}

/// The engine of the report: the best evidence of the log lines (`collected.engine`), weighed
/// against what the failure messages themselves show (TensorRT-LLM's or TurboMind's error
/// prefix, XLA's or TensorFlow's exception, the oom_text engine hint). A traceback whose only
/// library frames are torch is PyTorch; a torch exception with nothing else, too.
fn choose_engine(collected: &Collected, failure: Option<&OomMessage>) -> EngineName {
    let mut best: Option<(EngineName, Certainty)> = collected
        .engine
        .map(|(name, certainty, _)| (name, certainty));
    let mut offer = |name: EngineName, certainty: Certainty| {
        if best.is_none_or(|existing| engines::outranks((name, certainty), existing)) {
            best = Some((name, certainty));
        }
    };
    for message in collected.ooms.iter() {
        if let Some(name) = engines::engine_of_message(&message.text, message.exception.as_deref())
        {
            offer(name, Certainty::Strong);
        }
        if let Some((name, certainty)) = message
            .stream
            .as_deref()
            .and_then(engines::engine_of_stream)
        {
            offer(name, certainty);
        }
    }
    if let Some(hint) = failure.and_then(|message| message.engine_hint) {
        offer(hint, Certainty::Weak);
    }
    // A later message of the same failure may name the engine the first one does not (TGI's
    // router relays the shard's "Server error: CUDA out of memory" after the shard's traceback).
    for message in collected.ooms.iter() {
        if let Some(hint) = message.engine_hint {
            offer(hint, Certainty::Weak);
        }
    }
    if let Some((name, _)) = best {
        return name;
    }
    // PyTorch's own wording: its exception classes, the caching allocator's message families
    // and the `TORCH_USE_CUDA_DSA` / `PYTORCH_…_ALLOC_CONF` hints it appends.
    let torch = collected.ooms.iter().any(|m| {
        m.exception.as_deref().is_some_and(|e| e.contains("torch"))
            || matches!(
                m.kind,
                OomKind::PytorchCached
                    | OomKind::PytorchReservedInTotal
                    | OomKind::PytorchTotalCapacity
                    | OomKind::PytorchAbsurdSize
                    | OomKind::PytorchFractionRejected
                    | OomKind::CudaMallocAsync
                    // PyTorch's other device allocators: `c10/xpu/XPUCachingAllocator.cpp`
                    // ("XPU out of memory") and `aten/src/ATen/mps/MPSAllocator.mm` ("MPS backend
                    // out of memory … PYTORCH_MPS_HIGH_WATERMARK_RATIO").
                    | OomKind::XpuOutOfMemory
                    | OomKind::MpsOutOfMemory
            )
            || m.text.contains("TORCH_USE_CUDA_DSA")
            // c10's host allocator (`[enforce fail at alloc_cpu.cpp:73] . DefaultCPUAllocator`).
            || m.text.contains("DefaultCPUAllocator")
            || m.text.contains("_ALLOC_CONF")
    });
    if torch {
        EngineName::Pytorch
    } else {
        EngineName::Other
    }
}
