//! Building the report once the input is read: the failure that is explained, its phase (the
//! frames, hints and progress weighed by `analyze::phase`), its engine, the timeline and the
//! context blocks, from what [`Collected`] gathered.

use super::engine_choice::choose_engine;
use super::*;
use crate::analyze::phase::{
    decide as decide_phase, details_stage, name_phase, node_phase, read_frames, reports_error,
    stage_line_phase, statement_phase, words_phase, workflow_node_phase, wrapping_phrase,
};
use crate::model::explain::PhaseReport;

mod nearby;
use nearby::{nearby_words, APP_NODE, RAY_LARGEST_USER, RAY_TASK};

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
    // The same failure printed again later may complete its figures (exact bytes, a size).
    let completed = primary.and_then(|point| {
        let mut message = collected.ooms.get(point.message_index)?.clone();
        message.figures =
            crate::parse::oom_text::completed_figures(&collected.ooms, point.message_index);
        Some(message)
    });
    let failure = completed.as_ref();

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

    let (mut phase, mut unseen) = read_phase(collected, primary, failure);
    // The same failure stated again further down (a title or summary first, then the log and
    // the traceback that show the stage; another rank's complete traceback under a cut one):
    // when the first statement shows no stage, the later statements of the same run are read,
    // the last first.
    // A failure that is no GPU OOM (an illegal memory access, the host's kill) quoted in a title
    // over the log of its run is read the same way.
    if phase.failed_in == Phase::Unknown && primary.is_some() {
        if let Some((restated, point)) = restated_phase(collected, primary) {
            phase = restated;
            unseen = None;
            phase.evidence.insert(
                0,
                format!(
                    "line {}: the failure is stated again here, with the lines that show its \
                     stage (the first statement shows none)",
                    point.line
                ),
            );
        } else if let Some(summary) = summary_phase(collected, primary, failure) {
            // Of a failure that is no GPU OOM, only a run serving or training at the end of its
            // log: a kernel's fault or a kill is told in a title over a log often cut long
            // before it (a load's bar), where no allocation ties it to the stage.
            let gpu = collected.first_gpu_failure.is_some();
            if gpu
                || matches!(summary.failed_in, Phase::Inference | Phase::TrainingStep)
                || termination_message_follows(collected, failure)
                || launcher_traceback_follows(collected, failure)
            {
                phase = summary;
            }
        } else if let Some(why) = killed_in_load_tail(collected, failure) {
            phase.failed_in = Phase::WeightsLoad;
            phase.evidence = vec![why];
        }
    }
    if phase.failed_in == Phase::Unknown {
        if let Some(why) = killed_right_after_load_part(collected, failure) {
            phase.failed_in = Phase::WeightsLoad;
            phase.evidence = vec![why];
        }
    }
    // A model being run on inputs, told by the lines around the failure (a request, a sampler's
    // bar, a finished start-up, the entry script's name): below every frame and engine line,
    // above the reporter's prose (`phase::inference`).
    if phase.failed_in == Phase::Unknown && unseen.is_none() {
        inference_reading(collected, primary, failure, &timeline, &mut phase);
        // An error that is no failure oomdoc names (a dtype mismatch, a shape error): the
        // caller's statement of its last traceback is read the same way.
        if primary.is_none() && phase.failed_in == Phase::Unknown {
            traceback_reading(collected, &timeline, &mut phase);
        }
    }
    // The reporter's words, when no frame or log line decides the stage (`phase::prose`): of a
    // GPU OOM, or of another failure inside a run (a DataLoader worker's bus error, an illegal
    // memory access, the host's OOM killer, or a failure told only in words); not of a full
    // disk, which fails a write (a checkpoint, a cache), no stage of the run.
    let inside_a_run = failure.is_none_or(|message| message.kind != OomKind::DiskFull);
    if collected.first_gpu_failure.is_some() || inside_a_run {
        let raw_cuda_error = failure.is_some_and(|message| {
            message.kind == OomKind::CudaErrorOutOfMemory
                && message.text.contains("CUDA error: out of memory")
        });
        crate::analyze::phase::prose::fill_first_cuda_work(
            &mut phase,
            &collected.prose,
            raw_cuda_error,
        );
        // An engine build the log shows running is none of the stages (`Progress::observe`):
        // the reporter's words about the commands before it (a converter they ran first) do
        // not name what failed.
        let building = collected
            .progress
            .in_progress
            .is_some_and(|(running, _)| running == Phase::Unknown);
        if !building {
            // A host kill that cut a running bar (`331/1063 [01:06<03:59,  3.06it/s]Killed`, or
            // the bar on the line above): the loop had made progress, so the reporter's words
            // name its stage as of a GPU failure.
            let cut_a_bar = failure.is_some_and(|message| {
                (message.line.saturating_sub(1)..=message.line)
                    .filter_map(|line| kept_text(collected, line))
                    .any(|text| {
                        bar_counts(text).is_some_and(|(done, total)| done > 0 && done < total)
                    })
            });
            crate::analyze::phase::prose::fill_unknown(
                &mut phase,
                &collected.prose,
                host_memory(failure) && !cut_a_bar,
            );
        }
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
        .and(failure)
        .map(|message| {
            let mut figures = message.figures.clone();
            own_process_figure(message, &mut figures);
            figures
        })
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
        holders_said: collected.holders_said,
        capacity_said: collected.capacity_said,
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

/// A message with no `this process has` clause whose `Process N has …` figure is most likely
/// this process's own (it holds at least PyTorch's whole reserve; inside a container NVML names
/// processes by host PIDs, which PyTorch does not recognise as its own:
/// `accounting::own_process_guess`): the reported figures give that figure as this process's
/// in-use memory, marked derived, and list the others alone.
fn own_process_figure(message: &OomMessage, figures: &mut crate::model::failure::OomFigures) {
    if figures.process_in_use_bytes.is_some() {
        return;
    }
    let Some(pid) = crate::analyze::accounting::own_process_guess(message) else {
        return;
    };
    let Some(at) = figures.other_processes.iter().position(|p| p.pid == pid) else {
        return;
    };
    if let Some(bytes) = figures.other_processes[at].in_use_bytes {
        figures.process_in_use_bytes = Some(bytes);
        figures.other_processes.remove(at);
        figures.derived_fields.push("process_in_use_bytes".into());
    }
}

/// The phase read at one statement of the failure: the progress of the run when it was
/// printed, its traceback's frames, the hint, late and nearby lines around it (not the
/// reporter's prose). Also returns the stretch searched for failures only that hides the
/// stage, if any.
fn read_phase(
    collected: &Collected,
    primary: Option<&FailurePoint>,
    failure: Option<&OomMessage>,
) -> (PhaseReport, Option<(u64, u64)>) {
    let progress = primary.map_or(&collected.progress, |point| &point.progress);
    // An OOM named without its message (an issue's title, the reporter's sentence) above the
    // log they pasted, which shows nothing of the run before it: when that log runs past its
    // start (a stage completed, or one after the start-up begun), the paste is the run that
    // failed, cut where it failed, so its progress at its end is the failure's. A log of the
    // start-up alone (an engine's arguments) may be only the head of a longer run. Words on the
    // naming line itself that say the stage (`OOM during inference`) still decide first.
    let after_the_mention = |seen: Option<(Phase, u64)>, point: &FailurePoint| {
        seen.filter(|&(_, line)| line > point.line)
    };
    let progress = match (primary, failure) {
        (Some(point), Some(message))
            if message.kind == OomKind::NamedWithoutMessage
                && crate::analyze::phase::prose::line_stage(&message.text).is_none()
                && point.progress.in_progress.is_none()
                && point.progress.last_completed.is_none()
                && (after_the_mention(collected.progress.last_completed, point).is_some()
                    || after_the_mention(collected.progress.in_progress, point)
                        .is_some_and(|(phase, _)| phase != Phase::Startup)
                        && !collected.progress.cut_in_loader_metadata()) =>
        {
            &collected.progress
        }
        _ => progress,
    };
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
    // A worker's failure logged before its driver's traceback (vLLM's multiprocessing
    // executor prints the worker's `torch.OutOfMemoryError` under its own prefix, then the
    // driver's `[rank0]:` traceback through `determine_num_available_blocks`): when the
    // failure's own frames show no stage, the frames printed just under it do.
    if let Some(message) = failure {
        if read_frames(&frames).decided.is_none()
            && crate::analyze::phase::user_code_phase(&frames).is_none()
        {
            if let Some(below) = driver_frames_below(collected, message) {
                frames = below;
            }
        }
    }
    // A traceback chained under the failure (`During handling of the above exception, another
    // exception occurred:`, `The above exception was the direct cause of the following
    // exception:`): its frames are the callers the error went through before it was caught, so
    // they show the stage when the failure's own frames do not.
    if let Some(message) = failure {
        if read_frames(&frames).decided.is_none()
            && crate::analyze::phase::user_code_phase(&frames).is_none()
        {
            if let Some(chained) = chained_handler_frames(collected, message) {
                frames = chained;
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
    // A failure stated without a traceback above it (an issue's title, a summary line) whose
    // run's log goes on past that line (a stage line further down: the bar redrawn to a later
    // count, the next stage) was stated before the log: the line is the log's, not one printed
    // under the failure. (Under a traceback, a footer or a bar redrawn below it is the
    // failure's, even when the program runs on and logs more.)
    let under_a_traceback =
        primary.is_some_and(|point| frames.iter().any(|frame| frame.line < point.line));
    let late = late.filter(|(line, _)| {
        let last = [
            collected.progress.in_progress.map(|(_, at)| at),
            collected.progress.last_completed.map(|(_, at)| at),
        ];
        under_a_traceback || last.into_iter().flatten().all(|at| at <= *line)
    });
    // Words naming a training's job without its progress (and, of a host-memory failure, any
    // training without its progress) show the job, not the stage (`prose::words_unshown`).
    let nearby = failure
        .and_then(|message| nearby_words(collected, message, &frames))
        .filter(|(_, phase, what, words)| {
            // (The task a kill names is what the killed process ran, not words about the job;
            // a program's own line announcing a model applied to its inputs, `Creating
            // embeddings. May take some minutes...` above `Killed`, is its log, not a
            // reporter's words: the inputs read and batched are that stage's too.)
            // (And a workflow's node named by the app at the failure: the node ran when the
            // host's memory ran out, as when the GPU's did.)
            *what == RAY_TASK
                || *what == RAY_LARGEST_USER
                || *what == APP_NODE
                || (*phase == Phase::Inference
                    && what.starts_with("the program's log line announcing"))
                || !crate::analyze::phase::prose::words_unshown(host_memory(failure), *phase, words)
        })
        // A training announced as it starts (`Start training for 300 epochs`) and then a kill
        // or the host's allocator failing: its data loader's workers take host memory as its
        // first steps do, so the start shows the job, not the stage (the rule of
        // `words_unshown` for a training's words without its progress).
        .filter(|(_, phase, what, _)| {
            !(host_memory(failure)
                && *phase == Phase::TrainingStep
                && what.starts_with("the program's log line announcing"))
        });
    let training_step_shown = training_step_shown(collected, progress);
    let mut progress = progress.clone();
    progress.training_ended = training_ended(collected, &progress);
    progress.lazy_loads =
        crate::analyze::phase::inference::image_app(choose_engine(collected, failure));
    progress.bar_after_load = bar_after_load(collected, &progress, failure);
    // A log pasted under the failure's statement and cut in the model loader's header dump
    // does not show where the failure happened (see `Progress::loader_metadata`).
    if progress.cut_in_loader_metadata()
        && progress
            .in_progress
            .is_some_and(|(_, line)| primary.is_none_or(|point| point.line < line))
    {
        progress.in_progress = None;
    }
    let phase = decide_phase(PhaseInputs {
        failure,
        progress: &progress,
        frames: &frames,
        hint,
        late,
        nearby,
        training_step_shown,
    });
    (phase, unseen)
}

/// The frames printed under a failure (within [`DRIVER_LINES`] of its end) when a library
/// frame among them names one of the engine's start-up stages: the driver process that sent
/// the failing worker its task, its traceback printed after the worker's error.
fn driver_frames_below(collected: &Collected, message: &OomMessage) -> Option<Vec<Frame>> {
    let end = message.end_line.max(message.line);
    let below: Vec<Frame> = collected
        .frames
        .iter()
        .filter(|frame| frame.line > end && frame.line <= end + DRIVER_LINES)
        .cloned()
        .collect();
    let (frame, rule) = read_frames(&below).decided?;
    let start_up = matches!(
        rule.phase,
        Phase::Profiling
            | Phase::KvCacheAlloc
            | Phase::CudaGraphCapture
            | Phase::WeightsLoad
            | Phase::FormatConversion
    );
    let library = {
        let file = frame.file.replace('\\', "/");
        file.contains("site-packages/") || file.contains("dist-packages/")
    };
    // The message logged with its own traceback right under it (`logger.exception("Model
    // actor is out of memory.")` in Xinference's model actor): those frames are the failure's,
    // whatever stage they show.
    // A logger's line (its level word), not a traceback's own last line followed by another
    // rank's traceback.
    let logged = kept_text(collected, message.line).is_some_and(|line| {
        line.split_whitespace()
            .any(|word| matches!(word.trim_matches(['[', ']', ':']), "ERROR" | "CRITICAL"))
    });
    let logged_with_it = logged
        && kept_text(collected, end + 1).is_some_and(|next| {
            next.trim_start()
                .starts_with("Traceback (most recent call last)")
        });
    ((start_up || logged_with_it) && library).then_some(below)
}

/// The frames of the traceback Python chains under a failure it was handling (see the call
/// site), when they show a stage (a deciding frame or a wrapper's): the chaining line within a
/// few lines of the failure's end, the traceback right after it, up to the next traceback.
fn chained_handler_frames(collected: &Collected, message: &OomMessage) -> Option<Vec<Frame>> {
    let end = message.end_line.max(message.line);
    let chained = (end + 1..=end + CHAIN_LINES).find(|&line| {
        kept_text(collected, line).is_some_and(|text| {
            text.contains("During handling of the above exception")
                || text.contains("The above exception was the direct cause")
        })
    })?;
    let below = super::frames::traceback_frames_after(collected, chained, CHAIN_LINES)?;
    let verdict = read_frames(&below);
    (verdict.decided.is_some() || verdict.wrapper.is_some()).then_some(below)
}

/// Lines between a failure's end and Python's chaining line, and between that line and the
/// chained traceback's head ([`chained_handler_frames`]).
const CHAIN_LINES: u64 = 4;

/// Lines under a failure searched for its driver's traceback ([`driver_frames_below`]).
const DRIVER_LINES: u64 = 120;

/// The run's last training line, when it is still the stage in progress and its text is a
/// progress bar drawn at its total (`Train epoch [3/3]: 100%|██| 8/8`): the loop had ended.
fn training_ended(collected: &Collected, progress: &Progress) -> Option<u64> {
    let (Phase::TrainingStep, line) = progress.in_progress? else {
        return None;
    };
    let text = kept_text(collected, line)?;
    let (_, done, total) = last_progress_bar(text)?;
    (total > 0 && done == total).then_some(line)
}

/// Whether a counted progress bar (labelled or not: a diffusers pipeline draws its denoising
/// steps bare) was drawn after the last completed weights' load and before the failure: the
/// run had gone on past its load (see `Progress::bar_after_load`).
fn bar_after_load(
    collected: &Collected,
    progress: &Progress,
    failure: Option<&OomMessage>,
) -> bool {
    let (Some((Phase::WeightsLoad, load)), Some(message)) = (progress.last_completed, failure)
    else {
        return false;
    };
    collected
        .context
        .iter()
        .flat_map(|block| &block.lines)
        .filter(|line| line.line > load && line.line < message.line)
        .any(|line| bar_counts(&line.text).is_some_and(|(_, total)| total > 0))
}

/// The text of a line kept around a failure or above a traceback.
fn kept_text(collected: &Collected, line: u64) -> Option<&str> {
    collected
        .context
        .iter()
        .flat_map(|block| &block.lines)
        .chain(&collected.above_tracebacks)
        .find(|context| context.line == line)
        .map(|context| context.text.as_str())
}

/// Reads the lines around the failure's statements (the first, then its restatements in the
/// same run) for a model being run on inputs (`phase::inference`).
fn inference_reading(
    collected: &Collected,
    primary: Option<&FailurePoint>,
    failure: Option<&OomMessage>,
    timeline: &[crate::model::explain::TimelineEvent],
    phase: &mut PhaseReport,
) {
    let Some(first) = primary else {
        return;
    };
    let engine = choose_engine(collected, failure);
    // The host's kill quoted in a title, then the log of its run ending in it: restated.
    let later = restatements(collected, first);
    for point in std::iter::once(first).chain(later) {
        let mut lines: Vec<&ContextLine> = collected
            .context
            .iter()
            // The block of this statement, or the one of an earlier statement whose lines
            // run over it (a block is not kept twice for the same lines).
            .filter(|block| {
                block.failure_line == point.line
                    || block.lines.iter().any(|line| line.line == point.line)
            })
            .flat_map(|block| &block.lines)
            .chain(&collected.above_tracebacks)
            .collect();
        lines.sort_by_key(|line| line.line);
        lines.dedup_by_key(|line| line.line);
        let frames = failure_frames(collected, Some(point.line));
        let inputs = crate::analyze::phase::inference::InferenceInputs {
            failure_line: point.line,
            lines: &lines,
            events: timeline,
            frames: &frames,
            engine,
            host_memory: host_memory(failure),
        };
        crate::analyze::phase::inference::fill_unknown(phase, &inputs);
        if phase.failed_in != Phase::Unknown {
            return;
        }
    }
}

/// [`inference_reading`] of the last traceback when no failure was found: its error line is
/// taken to follow its innermost frame's statement.
fn traceback_reading(
    collected: &Collected,
    timeline: &[crate::model::explain::TimelineEvent],
    phase: &mut PhaseReport,
) {
    let Some(last) = collected.frames.back() else {
        return;
    };
    if !collected.tracebacks.iter().any(|start| *start < last.line) {
        return;
    }
    // The line after the innermost frame and the statement (and carets) printed under it.
    let failure_line = last.line + 3;
    let frames = failure_frames(collected, Some(failure_line));
    if frames.is_empty() {
        return;
    }
    let mut lines: Vec<&ContextLine> = collected.above_tracebacks.iter().collect();
    lines.sort_by_key(|line| line.line);
    let inputs = crate::analyze::phase::inference::InferenceInputs {
        failure_line,
        lines: &lines,
        events: timeline,
        frames: &frames,
        engine: choose_engine(collected, None),
        host_memory: false,
    };
    crate::analyze::phase::inference::fill_from_statement(phase, &inputs);
}

/// Whether the run's last training line shows a step done (`phase::shows_a_completed_step`);
/// a line whose text was not kept counts as one (what the report said before it was read).
fn training_step_shown(collected: &Collected, progress: &Progress) -> bool {
    let Some((Phase::TrainingStep, line)) = progress.last_completed else {
        return true;
    };
    let kept = collected
        .context
        .iter()
        .flat_map(|block| &block.lines)
        .chain(&collected.above_tracebacks)
        .find(|context| context.line == line)
        .map(|context| context.text.as_str());
    let event = || {
        [collected.saved_segment.as_ref(), Some(&collected.segment)]
            .into_iter()
            .flatten()
            .flat_map(|segment| segment.events())
            .find(|event| event.line == line && event.kind == EventKind::TrainingStep)
            .map(|event| event.text)
    };
    match kept {
        Some(text) => crate::analyze::phase::shows_a_completed_step(text),
        None => event().is_none_or(|text| crate::analyze::phase::shows_a_completed_step(&text)),
    }
}

/// The later statements of the first failure in the same run (no engine restart between), in
/// the order of the GPU failures then the others: the later GPU failures, and, when the first
/// is no GPU OOM, the later failures of its kind (a title quoting a DataLoader worker's bus
/// error or the host's kill, then the run's log printing it).
fn restatements<'a>(
    collected: &'a Collected,
    first: &FailurePoint,
) -> impl Iterator<Item = &'a FailurePoint> + 'a {
    let (segment, line) = (first.segment, first.line);
    let kind = collected
        .ooms
        .get(first.message_index)
        .map(|message| message.kind);
    let same_kind = collected.later_failures.iter().filter(move |later| {
        collected.first_gpu_failure.is_none()
            && collected
                .ooms
                .get(later.message_index)
                .map(|message| message.kind)
                == kind
    });
    collected
        .later_gpu_failures
        .iter()
        .chain(same_kind)
        .filter(move |later| later.segment == segment && later.line > line)
}

/// The phase shown at a later statement of the first GPU failure (see `build_report`): the
/// last of the later GPU failures of the same run (no engine restart between) whose own
/// traceback, log or nearby lines decide the stage.
fn restated_phase<'a>(
    collected: &'a Collected,
    primary: Option<&FailurePoint>,
) -> Option<(PhaseReport, &'a FailurePoint)> {
    let first = primary?;
    restatements(collected, first)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .find_map(|later| {
            let message = collected.ooms.get(later.message_index)?;
            let (phase, unseen) = read_phase(collected, Some(later), Some(message));
            (phase.failed_in != Phase::Unknown && unseen.is_none()).then_some((phase, later))
        })
}

/// The phase of a failure stated before the log of its run (an issue's title or summary
/// quoting the error, then the log pasted under it) and not stated again: the stage that log
/// shows running where it ends. Only when nothing of the run was shown before the statement,
/// the run did not restart after it, no stretch of it was searched for failures only, and a
/// stage was still running at the end. Start-up open at the end is not such a stage: a banner,
/// a download or a device line opens it in any run (TensorFlow prints its device lines again for
/// each session), so a log cut there does not show where the failure happened. Nor is a load
/// last shown by the model loader's metadata lines (a log cut in llama.cpp's header dump).
fn summary_phase(
    collected: &Collected,
    primary: Option<&FailurePoint>,
    failure: Option<&OomMessage>,
) -> Option<PhaseReport> {
    let first = primary?;
    let (running, line) = collected.progress.in_progress?;
    if first.progress != Progress::default()
        || collected.segment.id != first.segment
        || collected.unseen.iter().any(|&(_, last)| last > first.line)
        || line <= first.line
        || running == Phase::Startup
        || collected.progress.cut_in_loader_metadata()
    {
        return None;
    }
    let mut progress = collected.progress.clone();
    progress.training_ended = training_ended(collected, &progress);
    progress.lazy_loads =
        crate::analyze::phase::inference::image_app(choose_engine(collected, failure));
    let mut phase = decide_phase(PhaseInputs {
        failure,
        progress: &progress,
        frames: &[],
        hint: None,
        late: None,
        nearby: None,
        training_step_shown: training_step_shown(collected, &collected.progress),
    });
    if phase.failed_in != running {
        return None;
    }
    phase.evidence.insert(
        0,
        format!(
            "line {}: the failure is stated before the log of its run; the stage is the one that \
             log shows running where it ends",
            first.line
        ),
    );
    Some(phase)
}

/// Session 37 (p2): a kill stated in a title, over a log whose last stage line is followed at
/// once (within [`TRACEBACK_GAP`] lines) by the head of a traceback and nothing of a later stage:
/// the launcher's traceback reporting its child's death (accelerate's `simple_launcher` raising
/// `subprocess.CalledProcessError`, torchrun's `ChildFailedError`), so the log runs up to the
/// kill and is not a paste cut long before it: the stage it shows running is the one killed.
fn launcher_traceback_follows(collected: &Collected, failure: Option<&OomMessage>) -> bool {
    const TRACEBACK_GAP: u64 = 3;
    let Some((_, line)) = collected.progress.in_progress else {
        return false;
    };
    failure.is_some_and(|message| message.kind == OomKind::KilledBySignal)
        && collected
            .tracebacks
            .back()
            .is_some_and(|&head| head > line && head - line <= TRACEBACK_GAP)
}

/// Session 37 (p2): a kill stated before the log of its run (a title), whose log ends in the
/// launcher's traceback right under a line of a model's load: a part of the model loaded (torch's
/// `load_state_dict` result printed, `<All keys matched successfully>`: `torch/nn/modules/
/// module.py` `_IncompatibleKeys.__repr__`), a snapshot's files fetched (`Fetching 2 files:
/// 100%`: huggingface_hub `_snapshot_download.py`, run by every `from_pretrained` before it
/// reads them) or a load's own completed bar. A model's load has several parts (the U-Net, the
/// VAE, the text encoders; a transformer's shards then the pipeline's other folders): a kill
/// right after one part, with only the next part's lines or nothing between, is the load's.
/// Any other line between (a step, a bar, a dataset line, a blank line) leaves it unread.
fn killed_in_load_tail(collected: &Collected, failure: Option<&OomMessage>) -> Option<String> {
    let message = failure.filter(|message| message.kind == OomKind::KilledBySignal)?;
    let head = *collected.tracebacks.back()?;
    if head <= message.line || collected.first_gpu_failure.is_some() {
        return None;
    }
    let completed_load = match collected.progress.last_completed {
        Some((Phase::WeightsLoad, line)) => Some(line),
        _ => None,
    };
    if collected.progress.in_progress.is_some()
        || collected.progress.server_ready.is_some()
        || collected.progress.first_request.is_some()
    {
        return None;
    }
    // The line just above the traceback's head.
    let at = head - 1;
    let load_part = collected.load_parts.contains(&at) || completed_load == Some(at);
    (at > message.line && load_part).then(|| {
        format!(
            "line {at}: the process was killed (stated at line {}) right after a line of a \
             model's load, with no line of a later stage between: the memory it filled is the \
             load's",
            message.line
        )
    })
}

/// A kill printed right under a line of a model's load (ComfyUI's `model_type FLOW`, a load
/// part's `<All keys matched successfully>`; `LineFacts::load_part`): the shell's `Killed` (or
/// the `line 21: 116 Killed  python3 main.py` of a script) on the next line, no GPU failure and
/// no stage of the log open after the load (a request, a step) → the load filled the memory.
fn killed_right_after_load_part(
    collected: &Collected,
    failure: Option<&OomMessage>,
) -> Option<String> {
    let message = failure.filter(|message| message.kind == OomKind::KilledBySignal)?;
    if collected.first_gpu_failure.is_some()
        || collected.progress.server_ready.is_some()
        || collected.progress.first_request.is_some()
        || collected
            .progress
            .in_progress
            .is_some_and(|(running, _)| running != Phase::WeightsLoad)
    {
        return None;
    }
    let above = message.line.checked_sub(1)?;
    collected.load_parts.contains(&above).then(|| {
        format!(
            "line {above}: the process was killed (line {}) right under a line of a model's \
             load: the memory it filled is the load's",
            message.line
        )
    })
}

/// A container's exit code stated by Kubernetes (`exitCode: 137` of a `lastState: terminated:`
/// block, or KServe's `lastFailureInfo:`) with its `message:` field just under it: with
/// `terminationMessagePolicy: FallbackToLogsOnError` the message is the tail of the killed
/// container's log (the kubelet keeps its last lines), so that log's end is where the kill came,
/// not a log cut long before it.
fn termination_message_follows(collected: &Collected, failure: Option<&OomMessage>) -> bool {
    let Some(message) = failure.filter(|message| message.kind == OomKind::KilledBySignal) else {
        return false;
    };
    if !message.text.trim_start().starts_with("exitCode:") {
        return false;
    }
    (message.line + 1..=message.line + 3).any(|line| {
        kept_text(collected, line).is_some_and(|text| text.trim_start().starts_with("message:"))
    })
}

/// Whether the failure is of the host's memory: its allocator, the kernel's OOM killer, a kill
/// by a signal.
fn host_memory(failure: Option<&OomMessage>) -> bool {
    failure.is_some_and(|message| {
        matches!(message.kind, OomKind::HostMemory | OomKind::KilledBySignal)
    })
}

/// How far above a failure (or its traceback's head) the program's last status line is looked
/// for, over lines of library noise only (the labelled corpus: an evaluation line 20 lines of
/// XLA allocator warnings and a program dump above its error).
const STATUS_SEARCH_LINES: u64 = 48;

/// A line a library prints between a program's own output and its error, saying nothing of what
/// the program was doing: a warning (Python's `…Warning:` and the `warnings.warn(` line under
/// it, a `WARNING`/`[W …]` level, TensorRT's `[TRT] [I]` lines, glog's and absl's `W1202 01:33:04.004 … file.cc:371]` lines
/// of any level), an indented line (code under a warning, a dump's body, frames), a line of
/// symbols (a dump's brackets, `%name = …` lines, rules of dashes), or a short header that
/// introduces the error list (`Failures (18):`).
fn is_library_noise(text: &str) -> bool {
    if text.starts_with([' ', '\t']) {
        return true;
    }
    let trimmed = text.trim();
    let Some(first) = trimmed.chars().next() else {
        return true;
    };
    // (A program's own arrow or bullet before its words announcing a stage, `==> verifying
    // merged model on 16 x 4096 tokens`, is the program's line.)
    // (A Markdown heading, `**Logs**` or `### Expected behavior`, is the reporter's: what
    // stands above it is not the program's output.)
    let heading = (trimmed.len() > 4 && trimmed.starts_with("**") && trimmed.ends_with("**"))
        || trimmed.starts_with("# ")
        || trimmed.starts_with("## ")
        || trimmed.starts_with("### ");
    if heading {
        return false;
    }
    if !(first.is_alphanumeric() || first == '[') {
        return stage_line_phase(trimmed).is_none();
    }
    // glog / absl: a level letter, MMDD, a time, a thread id, `file.cc:line]`.
    if crate::parse::text::is_glog_line(trimmed) {
        return true;
    }
    // The error's own head as a CUDA extension prints it on the line above (the 3D Gaussian
    // Splatting rasterizer's `CHECK_CUDA` of `diff_gaussian_rasterization`, copied by its forks:
    // `[CUDA ERROR] in cuda_rasterizer/rasterizer_impl.cu`, then `Line 336: an illegal memory
    // access was encountered`; session 52).
    if trimmed.starts_with("[CUDA ERROR] in ") {
        return true;
    }
    // TensorFlow's own log lines between a program's (session 45).
    if crate::parse::text::is_tensorflow_log_line(trimmed) {
        return true;
    }
    // A tqdm bar with neither a description nor a total (`0it [00:05, ?it/s]`, over an
    // iterable of unknown length): it names no stage, and the line announcing the work it
    // counts stands above it.
    let digits = trimmed.len()
        - trimmed
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    if digits > 0
        && trimmed[digits..].starts_with("it [")
        && (trimmed.ends_with("it/s]") || trimmed.ends_with("s/it]"))
    {
        return true;
    }
    let warning = trimmed.contains("Warning:")
        || trimmed.contains("WARNING")
        || trimmed.contains("[W ")
        || trimmed.starts_with("warnings.warn(")
        // A compiler's lower-case warning: LLVM's, as XLA's GPU back end links its kernels
        // (`warning: Linking two modules of different target triples: …`).
        || trimmed.starts_with("warning: ")
        || trimmed.contains(" WARN ")
        || trimmed.starts_with("WARN ")
        // TensorRT's logger below a Python program (`[04/25/2022-11:25:21] [TRT] [I]
        // [MemUsageChange] Init cuDNN …`): its informational, verbose and warning levels.
        || ["[TRT] [I]", "[TRT] [V]", "[TRT] [W]"]
            .iter()
            .any(|level| trimmed.contains(level));
    if warning {
        return true;
    }
    // (Or the reporter's sentence between two pasted blocks introducing the error below,
    // `and I get the below error:`, `Then I got this error:`.)
    trimmed.ends_with(':')
        && (trimmed.split_whitespace().count() <= 3 || introduces_the_error(trimmed))
}

/// A short sentence ending in a colon that introduces the error pasted under it (`and I get
/// the below error:`, `then it fails with the following error:`): it names no stage.
fn introduces_the_error(trimmed: &str) -> bool {
    let lower = trimmed.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    words.len() <= 10
        && words.iter().any(|word| matches!(*word, "error" | "errors"))
        && words
            .iter()
            .any(|word| matches!(*word, "below" | "following" | "this" | "the"))
        && crate::analyze::phase::prose::line_stage(trimmed).is_none()
}

/// Whether a line reports one input of a run done with more to come: a count short of its
/// total (`Predicted structure for hipAB-750 with length 765, … 1 / 5 completed.`, ESMFold's
/// `esm/scripts/fold.py`; `[3/10] done`), not a loss, an epoch or a step of training. Under
/// an announced prediction (`Starting Predictions`) such lines are its run's progress: the
/// next input is running.
fn item_done_short_of_total(text: &str) -> bool {
    if text.starts_with([' ', '\t']) || text.len() > 300 {
        return false;
    }
    let lower = text.to_ascii_lowercase();
    if ["loss", "epoch", "step", "lr", "grad"].iter().any(|word| {
        lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == *word)
    }) {
        return false;
    }
    // `N/M` or `N / M`, neither side part of a date, a time, a path or a version.
    let bytes = lower.as_bytes();
    let joins = |b: u8| b.is_ascii_digit() || matches!(b, b'/' | b'.' | b':' | b'-');
    lower.match_indices('/').any(|(at, _)| {
        let mut end = at;
        if end > 0 && bytes[end - 1] == b' ' {
            end -= 1;
        }
        let start = bytes[..end]
            .iter()
            .rposition(|b| !b.is_ascii_digit())
            .map_or(0, |p| p + 1);
        let mut begin = at + 1;
        if bytes.get(begin) == Some(&b' ') {
            begin += 1;
        }
        let stop = bytes[begin..]
            .iter()
            .position(|b| !b.is_ascii_digit())
            .map_or(bytes.len(), |p| begin + p);
        if start == end || begin == stop {
            return false;
        }
        let before_ok = start == 0 || !joins(bytes[start - 1]);
        // (A colon after the count ends a counter's label: `batch 1/3: ok`.)
        let after_ok = stop == bytes.len() || (bytes[stop] == b':' || !joins(bytes[stop]));
        let done = lower[start..end].parse::<u64>().ok();
        let total = lower[begin..stop].parse::<u64>().ok();
        before_ok
            && after_ok
            && matches!((done, total), (Some(done), Some(total)) if done > 0 && done < total)
    })
}

/// The stage a program's own status line names when it is the last line printed before a
/// failure (`eval batch 1: 4096 examples`, `INFO [rerank] request c3: 4096 queries`, `Epoch 3
/// step 120 loss 1.92`): a line of output, not code (not indented, no call) and not a sentence
/// introducing the error (ending with `:`, or in the first person), that counts its progress
/// (`3/50`, `batch 1`, `step 120`) and whose words name one stage (`user_code::words_phase`). A line that reports a
/// stage finished (`loaded`, `done`, `took`) shows what ran before, not what failed; a command
/// line (`$ …`, `… --flag`) shows what was asked, not where it failed.
fn status_line_phase(text: &str) -> Option<Phase> {
    let trimmed = text.trim();
    if text.starts_with([' ', '\t'])
        || trimmed.len() > 200
        || trimmed.ends_with(':')
        // A call (`generate(prompt)`), not words in parentheses (`Generating forecasts for
        // ETTh (4 time series)`).
        || trimmed.match_indices('(').any(|(at, _)| {
            trimmed[..at]
                .chars()
                .next_back()
                .is_none_or(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })
        || trimmed.starts_with(['#', '>', '`', '*', '-'])
        || !trimmed.bytes().any(|b| b.is_ascii_digit())
        || trimmed.contains(" --")
        || trimmed.starts_with('$')
    {
        return None;
    }
    const PERSON: &[&str] = &["i", "i'm", "i've", "my", "we", "our", "you", "when", "if"];
    const FINISHED: &[&str] = &[
        "loaded",
        "done",
        "finished",
        "completed",
        "complete",
        "took",
        "saved",
        "saving",
    ];
    let lower = trimmed.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|word| !word.is_empty())
        .collect();
    if words
        .iter()
        .any(|word| PERSON.contains(word) || FINISHED.contains(word))
    {
        return None;
    }
    // A count of progress: `3/50`, or a counted unit with its number (`batch 1`, `step 120`,
    // `request c3`); not a count of what was asked (`for 300 epochs`) or a timestamp.
    const UNITS: &[&str] = &[
        "batch",
        "step",
        "iter",
        "iteration",
        "epoch",
        "request",
        "req",
        "sample",
        "example",
        "prompt",
        "image",
    ];
    let counted = words
        .windows(2)
        .any(|pair| UNITS.contains(&pair[0]) && pair[1].bytes().any(|b| b.is_ascii_digit()))
        || trimmed.split_whitespace().any(|token| {
            token
                .trim_matches(|c: char| !c.is_ascii_digit())
                .split_once('/')
                .is_some_and(|(done, total)| {
                    !done.is_empty()
                        && !total.is_empty()
                        && done.bytes().all(|b| b.is_ascii_digit())
                        && total.bytes().all(|b| b.is_ascii_digit())
                })
        });
    if !counted {
        return None;
    }
    words_phase(trimmed)
}

/// The frame of the node ComfyUI's `execution.py` dispatch called (the first frame of another
/// file under its `map_node_over_list` / `_map_node_over_list` / `process_inputs`), and the stage
/// its method's name shows (`workflow_node_phase`).
fn comfyui_node_frame(frames: &[Frame]) -> Option<(&Frame, Phase)> {
    const DISPATCH: [&str; 4] = [
        "map_node_over_list",
        "_map_node_over_list",
        "_async_map_node_over_list",
        "process_inputs",
    ];
    let execution = |frame: &Frame| {
        let file = frame.file.replace('\\', "/");
        file == "execution.py" || file.ends_with("/execution.py")
    };
    let at = frames
        .iter()
        .rposition(|frame| execution(frame) && DISPATCH.contains(&frame.function.as_str()))?;
    let node = frames[at + 1..].iter().find(|frame| !execution(frame))?;
    workflow_node_phase(&node.function).map(|phase| (node, phase))
}

/// How many words a CamelCase name joins (`ToonCrafterInterpolation` → 3, `Logs` → 1).
fn camel_case_words(name: &str) -> usize {
    name.chars().filter(char::is_ascii_uppercase).count()
}

/// The node or invocation type an app names when one fails: InvokeAI `Error while invoking
/// session …, invocation … (denoise_latents): …` (`session_processor_default.py`), ComfyUI
/// `Error occurred when executing VAEDecode:` (`execution.py` before 0.2), its error report's
/// `Node Type: KSampler`, and the node's class alone on the line above the message (the UI's
/// error dialog: `NunchakuQwenImageDiTLoader` then `CUDA error: out of memory`; not on the
/// error's own line).
/// With the name, whether the app's own words name it (`when executing X`, `Node Type: X`,
/// `invocation … (x)`) rather than a bare class name alone on its line.
fn node_named(text: &str, error_line: bool) -> Option<(&str, bool)> {
    fn identifier(token: &str) -> Option<&str> {
        let token = token.trim_matches(|c: char| matches!(c, '*' | ':' | '`' | '\'' | '"' | ','));
        (token.len() >= 3
            && token.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && token.starts_with(|c: char| c.is_ascii_alphabetic()))
        .then_some(token)
    }
    let after = |marker: &str| {
        let (_, rest) = text.split_once(marker)?;
        rest.split_whitespace()
            .find(|token| token.chars().any(|c| c.is_ascii_alphanumeric()))
            .and_then(identifier)
    };
    if let Some((_, rest)) = text.split_once("invocation ") {
        let inside = rest.split_once('(')?.1.split_once(')')?.0;
        return identifier(inside).map(|name| (name, true));
    }
    if let Some(name) = after("when executing ").or_else(|| after("Node Type:")) {
        return Some((name, true));
    }
    let alone = text.trim().trim_start_matches(['-', '#', '>', ' ']);
    // A reporter's words of their own language before the title (`显存不足，Propainter_Sampler`:
    // "out of VRAM, <node>"): the title after the words' last comma or colon.
    let alone = alone
        .rsplit_once(['，', '：', ',', ':'])
        .filter(|(words, _)| !words.is_empty() && !words.is_ascii())
        .map_or(alone, |(_, title)| title.trim());
    if error_line || alone.contains(char::is_whitespace) {
        return None;
    }
    // A class name (`VAEDecode`, `UNETLoader`), not an exception's (`RuntimeError`).
    identifier(alone)
        .filter(|name| {
            name.starts_with(|c: char| c.is_ascii_uppercase())
                && !name.ends_with("Error")
                && !name.ends_with("Exception")
        })
        .map(|name| (name, false))
}

/// The last tqdm bar drawn on a line (a line holds every redraw when `\r` is dropped):
/// `Generating:  40%|████      | 2/5 [00:19<00:30, 6.1s/it]` → (`Generating`, 2, 5). tqdm
/// prints the description followed by `: ` before the percentage; a bar without one is not
/// read.
fn last_progress_bar(text: &str) -> Option<(&str, u64, u64)> {
    let at = text.rfind("%|")?;
    let head = text[..at].trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let description = head.trim_end().strip_suffix(':')?;
    // The previous redraw ends with its `]`.
    let description = description
        .rsplit_once(']')
        .map_or(description, |(_, after)| after)
        .trim();
    let (done, total) = bar_counts(text)?;
    Some((description, done, total))
}

/// The counts of the last tqdm bar drawn on a line, with or without a label (`
/// 31%|█████     | 331/1063 [01:06<03:59,  3.06it/s]` → (331, 1063)).
fn bar_counts(text: &str) -> Option<(u64, u64)> {
    let rest = &text[text.rfind("%|")? + 2..];
    let counts = rest[rest.find('|')? + 1..].trim_start();
    let (done, total) = counts.split([' ', '[']).next()?.split_once('/')?;
    Some((done.parse().ok()?, total.parse().ok()?))
}

/// The words of a log line after its bracketed prefix (`[2026-12-01 17:13:31][server][ERROR] -
/// request 7f3a failed` → `request 7f3a failed`), to quote them; the whole line when the words
/// after it do not name the same stage.
fn after_log_prefix(text: &str, phase: Phase) -> &str {
    let Some(at) = text
        .get(..100.min(text.len()))
        .and_then(|head| head.rfind(']'))
    else {
        return text;
    };
    let words = text[at + 1..].trim_start_matches([' ', '-', ':', '*']);
    if words_phase(words) == Some(phase) {
        words
    } else {
        text
    }
}

#[cfg(test)]
mod tests;
