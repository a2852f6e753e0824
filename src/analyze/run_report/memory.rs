//! The memory timeline (peaks by phase, the OOM's time, a chart's reduced series) and the
//! checkpoint's lower bound against what was measured.

use super::*;

/// Reduces a series to at most `limit` points, keeping each time bucket's minimum and
/// maximum in time order so a 10 ms spike survives.
pub fn reduce_samples(samples: &[(u64, u64)], limit: usize) -> Vec<(u64, u64)> {
    if samples.len() <= limit || limit < 4 {
        return samples.to_vec();
    }
    let buckets = limit / 2;
    let first = samples.first().map_or(0, |s| s.0);
    let last = samples.last().map_or(0, |s| s.0);
    let span = last.saturating_sub(first).max(1);
    let mut reduced: Vec<(u64, u64)> = Vec::with_capacity(limit + 2);
    let mut bucket_points: Vec<(u64, u64)> = Vec::new();
    let mut current_bucket = 0u64;
    let flush = |points: &mut Vec<(u64, u64)>, out: &mut Vec<(u64, u64)>| {
        if points.is_empty() {
            return;
        }
        let mut min = points[0];
        let mut max = points[0];
        for point in points.iter() {
            if point.1 < min.1 {
                min = *point;
            }
            if point.1 > max.1 {
                max = *point;
            }
        }
        let (early, late) = if min.0 <= max.0 {
            (min, max)
        } else {
            (max, min)
        };
        out.push(early);
        if late != early {
            out.push(late);
        }
        points.clear();
    };
    for sample in samples {
        let bucket = (sample.0 - first) as u128 * buckets as u128 / span as u128;
        let bucket = bucket.min(buckets as u128 - 1) as u64;
        if bucket != current_bucket {
            flush(&mut bucket_points, &mut reduced);
            current_bucket = bucket;
        }
        bucket_points.push(*sample);
    }
    flush(&mut bucket_points, &mut reduced);
    if let Some(last_sample) = samples.last() {
        if reduced.last() != Some(last_sample) {
            reduced.push(*last_sample);
        }
    }
    reduced
}

/// When the OOM happened: an OOM event of the timeline, else the end of the failing phase,
/// else the end of the run.
pub(super) fn oom_time(
    record: &RecordRead,
    events: &[TimelineEvent],
    failure: &FailureFacts,
) -> (Option<u64>, Option<String>) {
    if failure.is_gpu_oom != Some(true) {
        return (None, None);
    }
    if let Some(t_ms) = record.run.ooms.iter().find_map(|oom| oom.t_ms) {
        return (
            Some(t_ms),
            Some("arrival of the OOM line in the log, recorded by `oomdoc run`".to_owned()),
        );
    }
    let from_timeline = events
        .iter()
        .filter(|event| event.text.to_ascii_lowercase().contains("out of memory"))
        .find_map(event_t_ms);
    if let Some(t_ms) = from_timeline {
        return (Some(t_ms), Some("engine log timeline".to_owned()));
    }
    let failing_span = failure.failed_in.and_then(|failed_in| {
        record
            .run
            .phases
            .iter()
            .rev()
            .find(|span| span.phase == failed_in)
    });
    if let Some(end) = failing_span.and_then(|span| span.end_t_ms) {
        return (
            Some(end),
            Some("end of the failing phase (approximate)".to_owned()),
        );
    }
    record.run.duration_ms.map_or((None, None), |end| {
        (Some(end), Some("end of the run (approximate)".to_owned()))
    })
}

pub(super) fn memory(
    record: &RecordRead,
    events: &[TimelineEvent],
    failure: &FailureFacts,
    limitations: &mut Vec<String>,
) -> MemoryFacts {
    let phases = record.run.phases.clone();
    let (oom_t_ms, oom_t_source) = oom_time(record, events, failure);
    let oom_device_uuid = record
        .run
        .ooms
        .iter()
        .find_map(|oom| oom.device_uuid.as_ref().map(ToString::to_string))
        .filter(|_| oom_t_ms.is_some());
    let Some(view) = record.memory() else {
        limitations.push("the record has no memory timeline".to_owned());
        return MemoryFacts {
            duration_ms: record.run.duration_ms,
            oom_t_ms,
            oom_t_source,
            oom_device_uuid: oom_device_uuid.clone(),
            phases,
            ..MemoryFacts::default()
        };
    };
    let available = view.available;
    if !available
        && !limitations
            .iter()
            .any(|l| l.starts_with("no memory timeline"))
    {
        limitations.push(format!(
            "no memory timeline: {}",
            view.reason
                .clone()
                .unwrap_or_else(|| "the recorder did not say why".to_owned())
        ));
    }
    let devices = view
        .devices
        .iter()
        .map(|device| {
            let mut peaks: Vec<(Phase, Bytes)> = device
                .peaks_by_phase
                .iter()
                .map(|(phase, bytes)| (*phase, *bytes))
                .collect();
            peaks.sort_by_key(|(phase, _)| {
                let first_span = phases
                    .iter()
                    .position(|span| span.phase == *phase)
                    .unwrap_or(usize::MAX);
                (first_span, *phase)
            });
            let mut samples: Vec<(u64, u64)> = device
                .samples
                .iter()
                .map(|[t_ms, used]| (*t_ms, *used))
                .collect();
            samples.sort_by_key(|sample| sample.0);
            let samples = reduce_samples(&samples, CHART_POINTS)
                .into_iter()
                .map(|(t_ms, used)| [t_ms, used])
                .collect();
            DeviceMemory {
                timeline: DeviceTimeline {
                    samples,
                    ..device.clone()
                },
                peaks_by_phase: peaks,
            }
        })
        .collect();
    MemoryFacts {
        available,
        reason: view.reason.clone(),
        source: view.source.map(source_name),
        // A record that did not say reads 0: no rate.
        sample_rate_hz: (view.sample_rate_hz > 0.0).then_some(view.sample_rate_hz),
        duration_ms: record.run.duration_ms,
        oom_t_ms,
        oom_t_source,
        oom_device_uuid: oom_device_uuid.clone(),
        phases,
        devices,
    }
}

pub(super) fn fit_vs_measured(
    input: &RunInput,
    events: &[TimelineEvent],
    memory: &MemoryFacts,
    gpus: &[GpuAtStart],
) -> FitVsMeasured {
    let lower_bound = input.checkpoint.as_ref().and_then(|checkpoint| {
        checkpoint.weights_total_bytes.map(|bytes| Figure {
            name: "weights lower bound".to_owned(),
            bytes,
            source: checkpoint.source.clone(),
        })
    });
    let weights_from_log = events
        .iter()
        .filter(|event| {
            matches!(
                event.kind,
                EventKind::WeightsLoadStart
                    | EventKind::WeightsLoadProgress
                    | EventKind::WeightsLoaded
            )
        })
        .find_map(|event| event.figures.bytes.map(Bytes::get));
    let weights_loaded = weights_from_log.map(|bytes| Figure {
        name: "weights as loaded".to_owned(),
        bytes,
        source: "engine log".to_owned(),
    });
    let peak_device = memory
        .devices
        .iter()
        .map(|device| &device.timeline)
        .filter(|device| device.peak_used_bytes.is_some())
        .max_by_key(|device| device.peak_used_bytes);
    let measured_peak = peak_device.and_then(|device| {
        device.peak_used_bytes.map(|bytes| Figure {
            name: match &device.peak_phase {
                Some(phase) => format!("peak used on the device (in `{}`)", phase.as_str()),
                None => "peak used on the device".to_owned(),
            },
            bytes: bytes.get(),
            source: memory
                .source
                .clone()
                .map_or_else(|| "memory timeline".to_owned(), |s| s.to_uppercase()),
        })
    });
    let capacity = peak_device
        .map(|device| device.total_bytes.get())
        .or_else(|| {
            gpus.iter()
                .find(|gpu| gpu.visible_to_run)
                .map(|gpu| gpu.device.memory.total_bytes.get())
        })
        .map(|bytes| Figure {
            name: "device total".to_owned(),
            bytes,
            source: "NVML".to_owned(),
        })
        .or_else(|| {
            // Without NVML, the framework's own "total capacity" (cudaMemGetInfo's total).
            input
                .record
                .explain()
                .and_then(|explain| explain.oom.as_ref())
                .and_then(|oom| oom.total_capacity_bytes)
                .map(|bytes| Figure {
                    name: "total capacity".to_owned(),
                    bytes: bytes.get(),
                    source: "framework error text".to_owned(),
                })
        });
    let note = match (&lower_bound, &weights_loaded, &capacity) {
        (Some(bound), _, Some(total)) if bound.bytes >= total.bytes => format!(
            "the weights alone ({}) do not fit in the device ({}): no setting changes that",
            Bytes(bound.bytes),
            Bytes(total.bytes)
        ),
        (Some(bound), _, Some(total)) => format!(
            "the weights lower bound ({}) is {:.0}% of the device ({}); KV cache, activations and CUDA graphs come on top of it",
            Bytes(bound.bytes),
            bound.bytes as f64 * 100.0 / total.bytes.max(1) as f64,
            Bytes(total.bytes)
        ),
        (None, Some(loaded), Some(total)) => format!(
            "the engine reports {} of weights on a {} device ({:.0}%); give `--checkpoint` for the lower bound from the headers",
            Bytes(loaded.bytes),
            Bytes(total.bytes),
            loaded.bytes as f64 * 100.0 / total.bytes.max(1) as f64
        ),
        _ => "no weights figure: give `--checkpoint PATH` for the lower bound from the checkpoint's headers".to_owned(),
    };
    // The engine's own weights figure should be close to the headers' sum (quantisation scales,
    // tied embeddings and padding make a few percent); far apart means another checkpoint.
    let mut note = note;
    if let (Some(bound), Some(loaded)) = (&lower_bound, &weights_loaded) {
        let (low, high) = (bound.bytes.min(loaded.bytes), bound.bytes.max(loaded.bytes));
        if high as f64 > low as f64 * 1.1 {
            note.push_str(&format!(
                "; the engine loaded {} but the checkpoint's headers sum to {}: is `--checkpoint` the model this run loaded?",
                Bytes(loaded.bytes),
                Bytes(bound.bytes)
            ));
        }
    }
    FitVsMeasured {
        lower_bound,
        weights_loaded,
        measured_peak,
        capacity,
        note,
    }
}
