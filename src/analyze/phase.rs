//! Which phase failed (R5, R6): the last stage the log shows completed plus the one in
//! progress, refined by the failure message itself and by the frames of its traceback.
//!
//! Never guesses: when neither the log nor the traceback shows the phase, it is
//! [`Phase::Unknown`]. Before the server accepted requests, a user prompt cannot be the cause.

use crate::model::explain::{EventKind, Phase, PhaseReport};
use crate::model::failure::{OomKind, OomMessage};

/// How far the startup got, updated event by event (cheap: no allocation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// The last completed phase and the line that shows it.
    pub last_completed: Option<(Phase, u64)>,
    /// The last completed phase before `last_completed`'s (for a failure inside that one:
    /// vLLM sizes the KV cache, logs it, then fails its check of the context length).
    pub completed_before: Option<(Phase, u64)>,
    /// The phase a start marker opened and nothing closed yet.
    pub in_progress: Option<(Phase, u64)>,
    /// The line where the API said it accepts requests.
    pub server_ready: Option<u64>,
    /// The line where the engine said it finished initialising.
    pub engine_ready: Option<u64>,
    /// The first request line.
    pub first_request: Option<u64>,
    /// The line of the engine start (banner/config) of this run.
    pub started: Option<u64>,
}

impl Progress {
    /// Takes one timeline event into account.
    pub fn observe(&mut self, kind: EventKind, phase: Phase, line: u64) {
        use EventKind as K;
        match kind {
            K::EngineStart | K::DeviceInit | K::DownloadStart | K::DownloadDone => {
                self.started.get_or_insert(line);
                if self.last_completed.is_none() {
                    self.in_progress = Some((Phase::Startup, line));
                }
            }
            K::WeightsLoadStart | K::WeightsLoadProgress | K::WeightsRead => {
                self.in_progress = Some((Phase::WeightsLoad, line));
            }
            K::FormatConversion => self.in_progress = Some((Phase::FormatConversion, line)),
            K::ProfilingStart => self.in_progress = Some((Phase::Profiling, line)),
            K::CudaGraphCaptureStart => {
                self.in_progress = Some((Phase::CudaGraphCapture, line));
            }
            K::WeightsLoaded
            | K::ProfilingDone
            | K::KvCacheAllocated
            | K::KvConcurrency
            | K::CudaGraphCaptureDone => {
                self.complete(phase, line);
                self.in_progress = None;
            }
            K::EngineReady => {
                self.engine_ready = Some(line);
                self.complete(phase, line);
                self.in_progress = None;
            }
            K::ServerReady => {
                self.server_ready.get_or_insert(line);
                self.in_progress = None;
            }
            K::Request | K::ServingStats | K::KvPressure => {
                self.first_request.get_or_insert(line);
                self.in_progress = Some((Phase::Inference, line));
            }
            K::TrainingStep => {
                self.complete(Phase::TrainingStep, line);
                self.in_progress = Some((Phase::TrainingStep, line));
            }
            K::Compile | K::Traceback | K::Failure | K::Shutdown => {}
        }
    }

    fn complete(&mut self, phase: Phase, line: u64) {
        if let Some(last) = self.last_completed.filter(|(last, _)| *last != phase) {
            self.completed_before = Some(last);
        }
        self.last_completed = Some((phase, line));
    }
}

/// One traceback frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Line number of the `File "…"` line.
    pub line: u64,
    /// Function name.
    pub function: String,
    /// File path as printed.
    pub file: String,
}

/// The phase a traceback frame proves, if any. Function names from vLLM (`worker.py`,
/// `gpu_worker.py`, `model_runner.py`, `gpu_model_runner.py`, `model_loader/`), SGLang
/// (`model_runner.py`, `cuda_graph_runner.py`), TGI (`flash_causal_lm.py` `warmup`),
/// transformers/accelerate (`modeling_utils.py`, `big_modeling.py`) and torch (`_tensor.py`
/// `backward`, `optim/optimizer.py`). `forward` and `_dummy_run` prove nothing alone.
pub fn frame_phase(function: &str, file: &str) -> Option<Phase> {
    let phase = match function {
        "load_model"
        | "load_weights"
        | "get_model"
        | "initialize_model"
        | "_initialize_model"
        | "load_checkpoint_and_dispatch"
        | "_load_pretrained_model"
        | "load_state_dict"
        | "_load_state_dict_into_meta_model"
        | "set_module_tensor_to_device"
        | "weight_loader"
        | "default_weight_loader"
        | "load_checkpoint_in_model"
        | "dispatch_model"
        | "load_model_weights"
        | "_load_weights" => Phase::WeightsLoad,
        "process_weights_after_loading"
        | "_process_weights_after_loading"
        | "gptq_marlin_repack"
        | "awq_marlin_repack"
        | "prepare_fp8_layer_for_marlin"
        | "marlin_permute_scales"
        | "repack"
        | "quantize_"
        | "convert_to_fp8" => Phase::FormatConversion,
        "profile_run"
        | "_dummy_sampler_run"
        | "_dummy_pooler_run"
        | "determine_num_available_blocks"
        | "determine_available_memory"
        | "profile_max_num_token"
        | "warmup"
        | "_warmup"
        | "warmup_model" => Phase::Profiling,
        "initialize_kv_cache"
        | "_initialize_kv_caches"
        | "initialize_cache"
        | "_init_cache"
        | "_init_cache_engine"
        | "_allocate_kv_cache"
        | "_allocate_kv_cache_tensors"
        | "initialize_kv_cache_tensors"
        | "init_memory_pool"
        | "allocate_kv_cache"
        | "get_kv_cache_config"
        | "check_enough_kv_cache_memory"
        | "raise_if_cache_size_invalid"
        | "_check_enough_kv_cache_memory" => Phase::KvCacheAlloc,
        "capture_model"
        | "capture"
        | "_capture_cudagraphs"
        | "capture_one_batch_size"
        | "init_cuda_graphs"
        | "compile_or_warm_up_model"
        | "_capture"
        | "cuda_graph_warmup"
        | "capture_cuda_graph" => Phase::CudaGraphCapture,
        "generate"
        | "_run_engine"
        | "create_chat_completion"
        | "create_completion"
        | "Prefill"
        | "Decode"
        | "event_loop_normal"
        | "event_loop_overlap"
        | "run_batch"
        | "execute_model_async"
        | "_generate" => Phase::Inference,
        "backward"
        | "_engine_run_backward"
        | "run_backward"
        | "training_step"
        | "train_step"
        | "_inner_training_loop"
        | "train"
        | "optimizer_step"
        | "clip_grad_norm_" => Phase::TrainingStep,
        "__init__" if file.contains("cache_engine") => Phase::KvCacheAlloc,
        "__init__" if file.contains("cuda_graph_runner") => Phase::CudaGraphCapture,
        "step" if file.contains("/optim/") => Phase::TrainingStep,
        "_use_grad" if file.contains("/optim/") => Phase::TrainingStep,
        "step" if file.contains("llm_engine") => Phase::Inference,
        _ => return None,
    };
    Some(phase)
}

/// The phase the failure message itself names, when its family is specific to one phase.
pub fn message_phase(message: &OomMessage) -> Option<Phase> {
    match message.kind {
        OomKind::VllmStartupFreeMemory => Some(Phase::Startup),
        OomKind::VllmNoCacheBlocks | OomKind::VllmMaxSeqLenTooLarge => Some(Phase::KvCacheAlloc),
        OomKind::VllmWarmupOom | OomKind::TgiWarmup => Some(Phase::Profiling),
        OomKind::SglangMemory if message.text.contains("mem-fraction-static") => {
            Some(Phase::KvCacheAlloc)
        }
        OomKind::LlamacppAlloc => {
            match message.details.buffer_purpose.as_deref() {
                Some("compute") => return Some(Phase::Profiling),
                Some("kv cache") => return Some(Phase::KvCacheAlloc),
                Some("model weights") => return Some(Phase::WeightsLoad),
                _ => {}
            }
            let text = &message.text;
            if text.contains("kv cache") || text.contains("KV cache") || text.contains("kv_cache") {
                Some(Phase::KvCacheAlloc)
            } else if text.contains("compute") || text.contains("gallocr") {
                Some(Phase::Profiling)
            } else if text.contains("model buffer")
                || text.contains("alloc_tensor_range")
                || text.contains("loading model")
                || text.contains("unable to allocate")
            {
                Some(Phase::WeightsLoad)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// What the phase decision looks at.
#[derive(Debug, Clone, Copy)]
pub struct PhaseInputs<'a> {
    /// The failure that matters (first GPU OOM, else first failure).
    pub failure: Option<&'a OomMessage>,
    /// How far the run got when the failure was seen.
    pub progress: &'a Progress,
    /// Frames of the failure's traceback, outermost first.
    pub frames: &'a [Frame],
    /// An explicit phase line (vLLM ≥0.14 `Failed to load model - not enough GPU memory`).
    pub hint: Option<(u64, Phase)>,
}

/// Decides `failed_in`, `last_completed`, `server_was_ready` with evidence.
pub fn decide(inputs: PhaseInputs<'_>) -> PhaseReport {
    let progress = inputs.progress;
    let mut evidence = Vec::new();
    let server_was_ready = match (progress.server_ready, progress.first_request) {
        (Some(line), _) => {
            evidence.push(format!("line {line}: the server was accepting requests"));
            Some(true)
        }
        (None, Some(line)) => {
            evidence.push(format!("line {line}: a request was being served"));
            Some(true)
        }
        (None, None) if progress.started.is_some() || progress.last_completed.is_some() => {
            Some(false)
        }
        _ => None,
    };

    let from_message = inputs.failure.and_then(|message| {
        message_phase(message).map(|phase| {
            (
                phase,
                format!(
                    "line {}: the message itself is raised while {}",
                    message.line,
                    phase.describe()
                ),
            )
        })
    });
    let from_hint = inputs.hint.map(|(line, phase)| {
        (
            phase,
            format!(
                "line {line}: the engine says the failure happened while {}",
                phase.describe()
            ),
        )
    });
    let from_frames = inputs
        .frames
        .iter()
        .filter_map(|frame| frame_phase(&frame.function, &frame.file).map(|phase| (phase, frame)))
        .next_back()
        .map(|(phase, frame)| {
            (
                phase,
                format!(
                    "line {}: traceback frame `{}` ({}) is {}",
                    frame.line,
                    frame.function,
                    short_path(&frame.file),
                    phase.describe()
                ),
            )
        });
    let from_progress = progress.in_progress.map(|(phase, line)| {
        (
            phase,
            format!(
                "line {line}: {} had started and the log shows no end of it",
                phase.as_str()
            ),
        )
    });
    let from_serving = match (server_was_ready, progress.in_progress) {
        (Some(true), None) => Some((
            Phase::Inference,
            "no startup stage was in progress after the server became ready".to_string(),
        )),
        _ => None,
    };

    let decided = from_message
        .or(from_hint)
        .or(from_frames)
        .or(from_progress)
        .or(from_serving);
    let failed_in = match decided {
        Some((phase, why)) => {
            evidence.push(why);
            phase
        }
        None => {
            evidence
                .push("neither the log nor a traceback shows which stage was running".to_string());
            Phase::Unknown
        }
    };

    // A startup stage cannot be both done and the one that failed: the log showed part of it
    // (vLLM logs the KV-cache size, then its check of the context length fails).
    let mut completed = Vec::new();
    let last_completed = match progress.last_completed {
        Some((phase, line)) if phase == failed_in && phase.is_startup() => {
            completed.push(format!(
                "line {line}: {} had begun (the log shows part of it) and failed before it ended",
                phase.as_str()
            ));
            progress.completed_before.map(|(phase, line)| {
                completed.push(format!(
                    "line {line}: the log shows {} completed",
                    phase.as_str()
                ));
                phase
            })
        }
        Some((phase, line)) => {
            completed.push(format!(
                "line {line}: the log shows {} completed",
                phase.as_str()
            ));
            Some(phase)
        }
        None => None,
    };
    evidence.splice(0..0, completed);

    let prompt_can_be_cause = if failed_in.is_startup() || server_was_ready == Some(false) {
        Some(false)
    } else if failed_in == Phase::Inference {
        Some(true)
    } else {
        None
    };
    PhaseReport {
        failed_in,
        last_completed,
        server_was_ready,
        prompt_can_be_cause,
        evidence,
    }
}

/// The last two components of a path (`vllm/worker/worker.py` → `worker/worker.py`).
pub fn short_path(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit(['/', '\\']).take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(line: u64, function: &str, file: &str) -> Frame {
        Frame {
            line,
            function: function.to_string(),
            file: file.to_string(),
        }
    }

    #[test]
    fn deepest_mapped_frame_wins() {
        let frames = [
            frame(1, "_initialize_kv_caches", "/x/vllm/v1/engine/core.py"),
            frame(
                2,
                "determine_available_memory",
                "/x/vllm/v1/worker/gpu_worker.py",
            ),
            frame(3, "profile_run", "/x/vllm/v1/worker/gpu_model_runner.py"),
            frame(4, "_dummy_run", "/x/vllm/v1/worker/gpu_model_runner.py"),
            frame(5, "forward", "/x/vllm/model_executor/models/llama.py"),
        ];
        let report = decide(PhaseInputs {
            failure: None,
            progress: &Progress::default(),
            frames: &frames,
            hint: None,
        });
        assert_eq!(report.failed_in, Phase::Profiling);
        assert_eq!(report.prompt_can_be_cause, Some(false));
    }

    #[test]
    fn a_startup_stage_that_failed_is_not_the_last_completed() {
        let mut progress = Progress::default();
        progress.observe(EventKind::WeightsLoaded, Phase::WeightsLoad, 1);
        progress.observe(EventKind::ProfilingDone, Phase::Profiling, 2);
        progress.observe(EventKind::KvCacheAllocated, Phase::KvCacheAlloc, 3);
        progress.observe(EventKind::KvConcurrency, Phase::KvCacheAlloc, 4);
        // The KV cache was sized, then a frame of its allocation failed.
        let frames = [frame(5, "initialize_cache", "/x/vllm/worker/worker.py")];
        let report = decide(PhaseInputs {
            failure: None,
            progress: &progress,
            frames: &frames,
            hint: None,
        });
        assert_eq!(report.failed_in, Phase::KvCacheAlloc);
        assert_eq!(report.last_completed, Some(Phase::Profiling));
        assert!(report.evidence[0].contains("kv_cache_alloc had begun"));
        assert_eq!(
            report.evidence[1],
            "line 2: the log shows profiling completed"
        );
        // Steps repeat: a failing step comes after completed ones.
        let mut progress = Progress::default();
        progress.observe(EventKind::TrainingStep, Phase::TrainingStep, 7);
        let report = decide(PhaseInputs {
            failure: None,
            progress: &progress,
            frames: &[],
            hint: None,
        });
        assert_eq!(report.failed_in, Phase::TrainingStep);
        assert_eq!(report.last_completed, Some(Phase::TrainingStep));
    }

    #[test]
    fn nothing_shown_is_unknown() {
        let report = decide(PhaseInputs {
            failure: None,
            progress: &Progress::default(),
            frames: &[frame(1, "forward", "/x/model.py")],
            hint: None,
        });
        assert_eq!(report.failed_in, Phase::Unknown);
        assert_eq!(report.server_was_ready, None);
    }

    #[test]
    fn ready_server_then_failure_is_inference() {
        let mut progress = Progress::default();
        progress.observe(EventKind::EngineStart, Phase::Startup, 1);
        progress.observe(EventKind::WeightsLoaded, Phase::WeightsLoad, 5);
        progress.observe(EventKind::ServerReady, Phase::Inference, 9);
        let report = decide(PhaseInputs {
            failure: None,
            progress: &progress,
            frames: &[],
            hint: None,
        });
        assert_eq!(report.failed_in, Phase::Inference);
        assert_eq!(report.server_was_ready, Some(true));
        assert_eq!(report.last_completed, Some(Phase::WeightsLoad));
    }
}
