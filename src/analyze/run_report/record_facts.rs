//! Facts read from the record: how the run ended, versions, GPUs before start, the failure
//! phase, explain's timeline and OOM figures.

use super::*;

/// The snapshot file `--torch-snapshot` produced, when there is one.
pub(super) fn torch_snapshot_file(record: &RecordRead) -> Option<String> {
    let snapshot = record.run.torch_snapshot.as_ref()?;
    snapshot
        .file
        .clone()
        .or_else(|| snapshot.files.first().cloned())
}

pub(super) fn run_end(record: &RecordRead) -> RunEnd {
    let failed = run_failed(record);
    let phase = record.explain().map(|explain| &explain.phase);
    let side = crate::analyze::compare::OutcomeSide {
        status: record.status(),
        exit_code: record.run.exit_code.map(i64::from),
        failed,
        is_gpu_oom: record.is_gpu_oom(),
        failed_in: phase.map(|phase| phase.failed_in),
        server_was_ready: phase.and_then(|phase| phase.server_was_ready),
        ..Default::default()
    };
    let mut summary = describe_outcome(&side);
    summary = format!("{}{}", summary[..1].to_uppercase(), &summary[1..]);
    let mut how = Vec::new();
    if let Some(code) = record.run.exit_code {
        how.push(format!("exit code {code}"));
    }
    if let Some(signal) = record.run.signal {
        how.push(format!("signal {signal}"));
    }
    if record.interrupted() == Some(true) {
        how.push("stopped by the user (SIGINT/SIGTERM forwarded)".to_owned());
    }
    if record.is_running() {
        how.push("record unfinished: `status` is still `running`".to_owned());
    }
    if let Some(duration) = record.run.duration_ms {
        how.push(format!("after {}", human_duration(duration)));
    }
    if !how.is_empty() {
        summary = format!("{summary} ({})", how.join(", "));
    }
    RunEnd {
        status: record.status(),
        exit_code: record.run.exit_code.map(i64::from),
        signal: record.run.signal.map(i64::from),
        interrupted: record.interrupted(),
        started_at: Some(record.run.started_at.clone()).filter(|at| !at.is_empty()),
        ended_at: record.run.ended_at.clone(),
        duration_ms: record.run.duration_ms,
        failed,
        summary,
    }
}

pub(super) fn versions(record: &RecordRead) -> Vec<Fact> {
    let mut facts = Vec::new();
    if let Some(inventory) = &record.run.preflight.inventory {
        let source = inventory
            .source
            .map_or_else(|| "GPU inventory".to_owned(), source_name);
        if let Some(driver) = &inventory.driver_version {
            facts.push(Fact {
                name: "driver".to_owned(),
                value: driver.clone(),
                source: source.clone(),
            });
        }
        if let Some(cuda) = &inventory.cuda_version {
            facts.push(Fact {
                name: "CUDA (driver supports)".to_owned(),
                value: cuda.clone(),
                source: source.clone(),
            });
        }
        if let Some(nvml) = &inventory.nvml_version {
            facts.push(Fact {
                name: "NVML".to_owned(),
                value: nvml.clone(),
                source,
            });
        }
    }
    if let Some(explain) = record.explain() {
        if let Some(version) = &explain.engine.version {
            facts.push(Fact {
                name: json_word(&explain.engine.name),
                value: version.clone(),
                source: "engine log".to_owned(),
            });
        }
        for (name, text) in &explain.versions {
            // `pytorch` is the engine name of plain PyTorch; its version is `torch`'s.
            let alias =
                |fact_name: &str| fact_name == name || (fact_name == "pytorch" && name == "torch");
            if let Some(fact) = facts.iter_mut().find(|fact| alias(&fact.name)) {
                if fact.name == "pytorch" && fact.value == *text {
                    fact.name = "torch".to_owned();
                }
            } else {
                facts.push(Fact {
                    name: name.clone(),
                    value: text.clone(),
                    source: "engine log".to_owned(),
                });
            }
        }
    }
    if let Some(version) = Some(&record.run.oomdoc_version).filter(|v| !v.is_empty()) {
        facts.push(Fact {
            name: "oomdoc (recorder)".to_owned(),
            value: version.clone(),
            source: "run.json".to_owned(),
        });
    }
    facts
}

pub(super) fn gpus(record: &RecordRead, limitations: &mut Vec<String>) -> Vec<GpuAtStart> {
    if let Some(error) = &record.run.preflight.inventory_error {
        limitations.push(format!("no GPU inventory before start: {error}"));
    }
    let at_oom_inventory = record
        .memory()
        .and_then(|memory| memory.inventory_at_oom.as_ref());
    let at_oom = |device: &Device| {
        at_oom_inventory.and_then(|inventory| {
            inventory
                .devices
                .iter()
                .find(|candidate| !candidate.uuid.is_empty() && candidate.uuid == device.uuid)
        })
    };
    let Some(inventory) = &record.run.preflight.inventory else {
        if record.run.preflight.inventory_error.is_none() {
            limitations.push(
                "the record has no GPU inventory: GPUs and free memory before start are unknown"
                    .to_owned(),
            );
        }
        return Vec::new();
    };
    limitations.extend(inventory.limitations.iter().cloned());
    let source = format!(
        "{} before start",
        inventory
            .source
            .map_or_else(|| "GPU inventory".to_owned(), source_name)
    );
    let any_ordinal = inventory.devices.iter().any(|d| d.cuda_ordinal.is_some());
    inventory
        .devices
        .iter()
        .map(|device| GpuAtStart {
            device: device.clone(),
            visible_to_run: !any_ordinal || device.cuda_ordinal.is_some(),
            at_oom: at_oom(device).cloned(),
            source: source.clone(),
        })
        .collect()
}

/// A text field of the record: empty (absent in an old record) is `None`.
pub(super) fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// The JSON name of a source (`nvml`, `replay`), as the record writes it.
pub(super) fn source_name(source: Source) -> String {
    json_word(&source)
}

pub(super) fn failure(record: &RecordRead, status: &RunEnd) -> FailureFacts {
    let phase = record.explain().map(|explain| &explain.phase);
    let failed_in = phase.map(|phase| phase.failed_in);
    let server_was_ready = phase.and_then(|phase| phase.server_was_ready);
    let note = if status.failed {
        match (failed_in, server_was_ready) {
            (Some(failed_in), ready) if failed_in.is_startup() && ready != Some(true) => Some(format!(
                "nothing was serving requests yet when it failed in `{}`: a user prompt cannot be the cause",
                failed_in.as_str()
            )),
            (Some(Phase::Unknown), _) => Some(
                "the log does not show the phase; it is reported as `unknown` rather than guessed".to_owned(),
            ),
            (_, Some(true)) => Some("the server was ready and serving when it failed: look at the request that was in flight".to_owned()),
            _ => None,
        }
    } else {
        None
    };
    FailureFacts {
        is_gpu_oom: record.is_gpu_oom(),
        failed_in,
        last_completed: phase.and_then(|phase| phase.last_completed),
        server_was_ready,
        note,
    }
}

pub(super) fn timeline(events: &[TimelineEvent]) -> Vec<TimelineEntry> {
    events
        .iter()
        .map(|event| TimelineEntry {
            t_ms: event_t_ms(event),
            phase: event.phase,
            event: json_word(&event.kind),
            detail: non_empty(&event.text),
        })
        .collect()
}

pub(super) fn oom_figures(record: &RecordRead) -> (Vec<Figure>, Vec<Figure>) {
    let Some(explain) = record.explain() else {
        return (Vec::new(), Vec::new());
    };
    let Some(oom) = &explain.oom else {
        return (Vec::new(), Vec::new());
    };
    let source = format!(
        "framework error text (in the {} log)",
        json_word(&explain.engine.name)
    );
    let gpu = oom
        .gpu_index
        .map(|index| format!(" (GPU {index} as the process numbers it)"))
        .unwrap_or_default();
    let figures = [
        ("tried to allocate", oom.tried_to_allocate_bytes),
        ("total capacity", oom.total_capacity_bytes),
        ("free", oom.free_bytes),
        // NVML's N/A sentinel (`u64::MAX`, printed as 17179869184.00 GiB) is no figure.
        ("this process has in use", oom.process_in_use_reported()),
        ("allocated by PyTorch", oom.allocated_by_pytorch_bytes),
        (
            "reserved by PyTorch but unallocated",
            oom.reserved_unallocated_bytes,
        ),
        ("reserved in total by PyTorch", oom.reserved_total_bytes),
        ("allocated in private pools", oom.private_pools_bytes),
    ]
    .into_iter()
    .filter_map(|(name, bytes)| {
        bytes.map(|bytes| Figure {
            bytes: bytes.get(),
            name: format!(
                "{name}{}",
                if name == "total capacity" {
                    gpu.as_str()
                } else {
                    ""
                }
            ),
            source: source.clone(),
        })
    })
    .collect();
    let others = oom
        .other_processes
        .iter()
        .filter_map(|process| {
            process.in_use_bytes.map(|bytes| Figure {
                name: format!("process {} has in use", process.pid),
                bytes: bytes.get(),
                source: source.clone(),
            })
        })
        .collect();
    (figures, others)
}

/// A training run: the log or the phases show training steps, and nothing was served (no
/// request, no server ready, no serving statistics) nor probed.
pub(super) fn is_training(
    record: &RecordRead,
    timeline: &[TimelineEvent],
    failure: &FailureFacts,
    probed: bool,
) -> bool {
    let trains = failure.failed_in == Some(Phase::TrainingStep)
        || record
            .run
            .phases
            .iter()
            .any(|span| span.phase == Phase::TrainingStep)
        || timeline
            .iter()
            .any(|event| event.kind == EventKind::TrainingStep);
    let serves = timeline.iter().any(|event| {
        matches!(
            event.kind,
            EventKind::Request | EventKind::ServerReady | EventKind::ServingStats
        )
    });
    trains && !serves && !probed
}
