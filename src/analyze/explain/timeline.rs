//! The timeline `explain` builds while it reads: events pushed and merged when they repeat,
//! request and stats lines counted as repeats, stretches searched for failures only, and the
//! start of a new run.

use super::*;

/// Counts `count` more request/stats lines of `kind` (the last one is line `last_line`) as
/// repeats of the timeline event or pending entry before them, when that is all they can be
/// (the same kind). Returns false, doing nothing, otherwise: the lines must be taken one by
/// one. The same for one line or a whole run.
pub(super) fn count_repeats(
    collected: &mut Collected,
    kind: EventKind,
    count: u64,
    last_line: u64,
) -> bool {
    if collected.eager {
        match collected.segment.last_mut() {
            Some(event) if event.kind == kind => {
                event.count += count;
                event.last_line = Some(last_line);
                collected
                    .progress
                    .observe(kind, Phase::Inference, last_line);
                true
            }
            _ => false,
        }
    } else {
        match collected.pending.last_mut() {
            Some(PendingLine::Repeat {
                kind: pending_kind,
                last,
                count: pending_count,
                ..
            }) if *pending_kind == kind => {
                *last = last_line;
                *pending_count += count;
                collected.pending.progressed = true;
                true
            }
            _ => false,
        }
    }
}

/// Records lines `first..=last` (`bytes` long) as searched for failure messages only: one
/// timeline row for adjacent stretches, kept in order with the run's pending lines.
pub(super) fn note_failures_only(collected: &mut Collected, first: u64, last: u64, bytes: u64) {
    collected.failures_only_lines += last + 1 - first;
    match collected.unseen.back_mut() {
        Some(stretch) if stretch.1 + 1 == first => stretch.1 = last,
        _ => {
            if collected.unseen.len() >= MAX_UNSEEN {
                collected.unseen.pop_front();
            }
            collected.unseen.push_back((first, last));
        }
    }
    let latest = if collected.eager {
        collected.segment.last_mut()
    } else {
        match collected.pending.last_mut() {
            Some(PendingLine::FailuresOnly(event)) => Some(event),
            _ => None,
        }
    };
    if let Some(event) = latest {
        if event.kind == EventKind::FailuresOnly
            && event.last_line.is_some_and(|line| line + 1 == first)
        {
            event.last_line = Some(last);
            let total = event.figures.bytes.map_or(0, |bytes| bytes.0) + bytes;
            event.figures.bytes = Some(Bytes(total));
            describe_failures_only(event);
            return;
        }
    }
    let mut event = TimelineEvent {
        kind: EventKind::FailuresOnly,
        phase: Phase::Unknown,
        line: first,
        timestamp: None,
        seconds_since_start: None,
        stream: None,
        figures: EventFigures {
            bytes: Some(Bytes(bytes)),
            ..EventFigures::default()
        },
        count: 1,
        last_line: Some(last),
        text: String::new(),
        t_ms: None,
    };
    describe_failures_only(&mut event);
    if collected.eager {
        collected.segment.push(event);
    } else {
        collected.pending.push(PendingLine::FailuresOnly(event));
    }
}

/// The text of a [`EventKind::FailuresOnly`] event, from its lines and bytes.
fn describe_failures_only(event: &mut TimelineEvent) {
    event.text = format!(
        "lines {}-{} ({}) were searched for failure messages only: stages, requests and \
         restarts there are not in this timeline",
        event.line,
        event.last_line.unwrap_or(event.line),
        event.figures.bytes.unwrap_or_default()
    );
}

/// Counts engine starts: a start marker begins a run when nothing happened yet or the
/// current run already progressed.
pub(super) fn begin_run_if_starting(collected: &mut Collected, markers: &[usize]) {
    let starts = markers
        .iter()
        .any(|m| engine_log::marker_role(*m) == MarkerRole::Start);
    if !starts {
        return;
    }
    let empty = collected.segment.head.is_empty() && collected.pending.is_empty();
    let progressed = collected.segment.progressed || collected.pending.progressed;
    if empty || progressed {
        collected.engine_starts += 1;
    }
    if progressed && !collected.eager {
        // A run that ended without a failure: drop it unparsed.
        collected.pending = Pending::default();
        let id = collected.segment.id + 1;
        collected.segment = Segment {
            id,
            ..Segment::default()
        };
        collected.progress = Progress::default();
    }
}

/// Events merged when they repeat back to back (requests, progress bars, stats lines).
fn coalesces(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Request
            | EventKind::ServingStats
            | EventKind::WeightsLoadProgress
            | EventKind::CudaGraphCaptureStart
            | EventKind::TrainingStep
            | EventKind::Evaluation
            | EventKind::KvPressure
            | EventKind::Compile
    )
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename them"
)]
pub(super) fn push_event(
    collected: &mut Collected,
    kind: EventKind,
    phase: Phase,
    figures: EventFigures,
    line: u64,
    timestamp: Option<engine_log::Timestamp>,
    stream: Option<&str>,
    cleaned: &str,
) {
    if kind == EventKind::EngineStart && collected.segment.progressed {
        // A new run of the engine (a restart, or the next launch in a concatenated log).
        let old = std::mem::take(&mut collected.segment);
        let keeps_failure = [&collected.first_gpu_failure, &collected.first_failure]
            .into_iter()
            .flatten()
            .next()
            .is_some_and(|point| point.segment == old.id);
        if keeps_failure && collected.saved_segment.is_none() {
            collected.saved_segment = Some(old.clone());
        }
        collected.segment.id = old.id + 1;
        collected.progress = Progress::default();
    }
    if !matches!(
        kind,
        EventKind::EngineStart
            | EventKind::DeviceInit
            | EventKind::DownloadStart
            | EventKind::DownloadDone
    ) {
        collected.segment.progressed = true;
    }
    collected.progress.observe(kind, phase, line);
    if kind == EventKind::WeightsLoadProgress && is_loader_metadata(cleaned) {
        collected.progress.loader_metadata = Some(line);
    }
    if coalesces(kind) {
        if let Some(last) = collected.segment.last_mut() {
            if last.kind == kind {
                last.count += 1;
                last.last_line = Some(line);
                if !figures.is_empty() {
                    last.figures = figures;
                }
                return;
            }
        }
    }
    let (timestamp, seconds) = match timestamp {
        Some(stamp) => (Some(stamp.text), stamp.seconds),
        None => (None, None),
    };
    collected.segment.push(TimelineEvent {
        kind,
        phase,
        line,
        timestamp,
        seconds_since_start: seconds,
        stream: stream.map(str::to_string),
        figures,
        count: 1,
        last_line: None,
        text: engine_log::shorten(cleaned, 200),
        t_ms: None,
    });
}
