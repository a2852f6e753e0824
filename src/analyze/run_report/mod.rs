//! Analyse the machine report model.
//!
//! Takes redacted run records (plus, when given, the log text, a probe document and the
//! checkpoint's lower bound) and builds the report: model, GPUs, free memory before start,
//! phase and timeline, OOM figures with their sources, reproduction, versions, memory peaks
//! per phase, readiness, verdict and owner summary, limitations.
//!
//! Pure: no I/O and no formatting for output; renderers only lay this model out.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::cards::CARDS;
use crate::model::explain::{ContextBlock, EventKind, OwnerClass, Phase, TimelineEvent};
use crate::model::host::HostOomFinding;
use crate::model::machine::{Device, GpuProcess};
use crate::model::probe::ProbePhase;
use crate::model::run::{human_duration, RunStatus};
use crate::model::{Bytes, Source};
use crate::parse::run_record::{ProbeRead, RecordRead};

use crate::analyze::compare::{
    compare, describe_outcome, json_word, run_failed, Comparison, FieldValue,
};

/// Most points a device's memory series keeps for the chart (min and max per time bucket).
pub const CHART_POINTS: usize = 800;

pub use crate::model::checkpoint::CheckpointFacts;

mod log_scan;
mod memory;
mod record_facts;
mod sections;
mod serving;
mod types;
mod verdict;

pub use log_scan::{scan_log, LogScan, CONTEXT_LINES};
pub use memory::reduce_samples;
use memory::{fit_vs_measured, memory};
use record_facts::*;
pub use sections::{FactList, ReportPart, RunSection};
use serving::*;
pub use types::*;
pub use verdict::WEIGHTS_SHARE;
use verdict::*;

/// Builds the report for the runs, with a comparison when there are exactly two.
pub fn build(inputs: &[RunInput]) -> Report {
    let mut runs: Vec<RunReport> = inputs.iter().map(run_report).collect();
    let comparison = match inputs {
        [a, b] => {
            let comparison = compare(
                &a.label,
                &a.record,
                a.checkpoint.as_ref(),
                &b.label,
                &b.record,
                b.checkpoint.as_ref(),
            );
            add_comparison_to_owner_summary(&mut runs, &comparison);
            Some(comparison)
        }
        _ => None,
    };
    Report { runs, comparison }
}

fn add_comparison_to_owner_summary(runs: &mut [RunReport], comparison: &Comparison) {
    let (a_failed, b_failed) = (comparison.outcome.a.failed, comparison.outcome.b.failed);
    if a_failed == b_failed {
        return;
    }
    let (failing, working_label) = if a_failed {
        (0, comparison.run_b.as_str())
    } else {
        (1, comparison.run_a.as_str())
    };
    let Some(run) = runs.get_mut(failing) else {
        return;
    };
    let sentence = match comparison.changes.as_slice() {
        [] => format!(
            " The working run `{working_label}` has the same recorded inputs, so the failure depends on something not recorded."
        ),
        [change] => {
            let describe = |value: &FieldValue| value.text().unwrap_or_else(|| "absent".to_owned());
            let (from, to) = if a_failed {
                (&change.a, &change.b)
            } else {
                (&change.b, &change.a)
            };
            let action = format!("{}: {} → {}", change.field, describe(from), describe(to));
            if run.owner_summary.kind != OwnerKind::HardwareLimit {
                run.owner_summary.kind = OwnerKind::ConfigurationError;
                run.owner_summary.action = Some(action.clone());
            }
            format!(
                " The working run `{working_label}` differs in one input only ({action}), which shows that change is enough on this hardware."
            )
        }
        many => format!(
            " The working run `{working_label}` differs in {} inputs at once, so it does not show which change is needed: change one thing at a time.",
            many.len()
        ),
    };
    run.owner_summary.text.push_str(&sentence);
}

/// An event's time on the run's clock: `t_ms` (added by `oomdoc run`), else explain's
/// `seconds_since_start` (the log's own clock, close to the run's).
fn event_t_ms(event: &TimelineEvent) -> Option<u64> {
    event.t_ms.or_else(|| {
        event
            .seconds_since_start
            .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
            .map(|seconds| (seconds * 1000.0).round() as u64)
    })
}

/// explain's context blocks as lines, a `…` line between blocks.
fn context_lines(blocks: &[ContextBlock]) -> Vec<String> {
    let mut lines = Vec::new();
    for block in blocks {
        if !lines.is_empty() {
            lines.push("…".to_owned());
        }
        lines.extend(block.lines.iter().map(|line| line.text.clone()));
    }
    lines
}

/// The model argument of a command line: `--model X`, or the positional after `serve`.
fn model_from_argv(argv: &[String]) -> Option<String> {
    let parsed = crate::analyze::compare::parse_argv(argv);
    if let Some(model) = parsed
        .flags
        .get("--model")
        .or_else(|| parsed.flags.get("-m"))
    {
        return Some(model.clone());
    }
    let serve = parsed.positional.iter().position(|arg| arg == "serve")?;
    parsed.positional.get(serve + 1).cloned()
}

fn run_report(input: &RunInput) -> RunReport {
    let record = &input.record;
    let explain = record.explain();
    let events: &[TimelineEvent] = explain.map_or(&[], |explain| &explain.timeline);
    let mut limitations: Vec<String> = Vec::new();
    limitations.extend(input.record.problems.iter().cloned());
    limitations.extend(record.run.limitations.iter().cloned());
    if explain.is_none() {
        limitations.push(
            "the record has no `explain` result: phase, timeline and verdict are unknown"
                .to_owned(),
        );
    }
    if record.is_running() {
        limitations.push(
            "the record is unfinished (`status` is `running`): it was last written while the \
             command still ran (oomdoc is still running, or it was stopped before the end); \
             the outcome, exit code and later peaks are missing"
                .to_owned(),
        );
    }

    // Model and format: from the log, then the command line, and the checkpoint headers.
    let log_model = explain.and_then(|explain| explain.model.as_ref());
    let mut model = ModelFacts {
        name: log_model.and_then(|model| model.name.clone()),
        format: None,
        dtype: log_model.and_then(|model| model.dtype.clone()),
        quantization: log_model.and_then(|model| model.quantization.clone()),
        max_model_len: explain
            .and_then(|explain| explain.config.max_model_len)
            .map(|tokens| tokens.to_string()),
        source: log_model.map(|_| "engine log".to_owned()),
        checkpoint: input.checkpoint.clone(),
    };
    if model.name.is_none() {
        if let Some(name) = model_from_argv(&record.run.command) {
            model.name = Some(name);
            model.source = Some(match model.source {
                Some(_) => "engine log; name from the command line".to_owned(),
                None => "command line".to_owned(),
            });
        }
    }
    match (&input.checkpoint, &input.checkpoint_problem) {
        (_, Some(problem)) => limitations.push(problem.clone()),
        (None, None) => limitations.push(
            "no checkpoint given (`--checkpoint PATH`): no lower bound from the checkpoint's own headers".to_owned(),
        ),
        _ => {}
    }

    let status = run_end(record);
    let engine = explain.map(|explain| {
        let name = json_word(&explain.engine.name);
        Fact {
            name: "engine".to_owned(),
            value: match &explain.engine.version {
                Some(version) => format!("{name} {version}"),
                None => name,
            },
            source: "engine log".to_owned(),
        }
    });
    let versions = versions(record);
    let gpus = gpus(record, &mut limitations);
    let environment = record.run.preflight.environment.clone();
    let failure = failure(record, &status);
    let timeline = timeline(events);
    let (oom, oom_other_processes) = oom_figures(record);
    let memory = memory(record, events, &failure, &mut limitations);
    let fit = fit_vs_measured(input, events, &memory, &gpus);
    let reproduction = reproduction(input, &status, &failure);
    let probe = input
        .probe
        .as_ref()
        .map(|(file, probe)| probe_summary(file, probe));
    let concurrency = concurrency(input);
    let readiness = readiness(input, &status, &failure);
    let mut verdict = verdict(record, &status, &failure, readiness.state == "checked");
    if let Some(file) = torch_snapshot_file(record) {
        verdict.next_steps.push(format!(
            "a PyTorch memory snapshot was recorded: `oomdoc snapshot {}/{file}` judges fragmentation on data",
            input.label
        ));
    }
    let mut owner_summary = owner_summary(record, &status, &failure, &fit, &gpus, &readiness);
    let mut status = status;
    if let Some(finding) = record
        .run
        .host
        .as_ref()
        .and_then(|host| host.finding.as_ref())
    {
        let gpu_oom_in_log = record.is_gpu_oom() == Some(true);
        host_verdict(
            finding,
            gpu_oom_in_log,
            &mut status,
            &mut verdict,
            &mut owner_summary,
        );
    }
    let host = record.run.host.clone().map(|mut host| {
        host.timeline.samples.clear();
        host
    });

    match (&input.log, &input.log_problem) {
        (_, Some(problem)) => limitations.push(problem.clone()),
        (Some(scan), None) if scan.partial => limitations.push(
            "the log is large: only its last part was scanned for requests and concurrency"
                .to_owned(),
        ),
        _ => {}
    }
    if let Some((file, probe)) = &input.probe {
        limitations.extend(
            probe
                .problems
                .iter()
                .map(|problem| format!("probe `{file}`: {problem}")),
        );
    }
    let training = is_training(record, events, &failure, input.probe.is_some());
    if input.probe.is_none() && !training {
        limitations.push(
            "no probe document (`--probe FILE`): growth under repeated and long requests was not measured".to_owned(),
        );
    }
    let limitations = merge_shared_reasons(limitations);

    RunReport {
        host,
        run: input.label.clone(),
        status,
        command: record.run.command.clone(),
        cwd: record.run.cwd.clone(),
        model,
        engine,
        versions,
        gpus,
        environment,
        failure,
        timeline,
        oom,
        oom_other_processes,
        oom_count: explain.map_or(0, |explain| {
            usize::try_from(explain.ooms_total)
                .unwrap_or(usize::MAX)
                .max(explain.ooms.len())
                .max(usize::from(explain.oom.is_some()))
        }),
        // explain's own context, unless the log scan kept more lines (dozens, not one).
        log_context: {
            let scanned = input
                .log
                .as_ref()
                .map(|scan| scan.lines_before_oom.clone())
                .unwrap_or_default();
            let explained = context_lines(explain.map_or(&[], |explain| &explain.context));
            if scanned.len() > explained.len() {
                scanned
            } else {
                explained
            }
        },
        memory,
        fit,
        training,
        reproduction,
        concurrency,
        probe,
        readiness,
        verdict,
        owner_summary,
        limitations,
    }
}

/// Limitations with the same reason said once: `what: why` entries sharing `why` become one
/// (`no memory timeline and no GPU inventory before start: NVML is absent: …`), and an entry
/// whose `why` is the start of another entry takes that fuller one as its reason. Exact
/// repeats go; the order of first appearance stays.
pub fn merge_shared_reasons(limitations: Vec<String>) -> Vec<String> {
    let mut unique: Vec<String> = Vec::new();
    for limitation in limitations {
        if !unique.contains(&limitation) {
            unique.push(limitation);
        }
    }
    // `what: why` where `what` is a short label and `why` a reason worth matching.
    let parts: Vec<Option<(&str, &str)>> = unique
        .iter()
        .map(|limitation| {
            limitation
                .split_once(": ")
                .filter(|(what, why)| what.chars().count() <= 60 && why.chars().count() >= 12)
        })
        .collect();
    let mut absorbed = vec![false; unique.len()];
    let reasons: Vec<Option<&str>> = parts
        .iter()
        .enumerate()
        .map(|(index, part)| {
            let (_, why) = (*part)?;
            let fuller = unique.iter().enumerate().position(|(other, text)| {
                other != index && text.len() > why.len() && text.starts_with(why)
            });
            Some(match fuller {
                Some(other) => {
                    absorbed[other] = true;
                    unique[other].as_str()
                }
                None => why,
            })
        })
        .collect();
    let mut merged: Vec<String> = Vec::new();
    let mut emitted: Vec<&str> = Vec::new();
    for (index, limitation) in unique.iter().enumerate() {
        let (Some((_, _)), Some(reason)) = (parts[index], reasons[index]) else {
            if !absorbed[index] {
                merged.push(limitation.clone());
            }
            continue;
        };
        if absorbed[index] || emitted.contains(&reason) {
            continue;
        }
        emitted.push(reason);
        let mut whats: Vec<&str> = Vec::new();
        for (other, part) in parts.iter().enumerate() {
            if let (Some((what, _)), Some(other_reason)) = (part, reasons[other]) {
                if other_reason == reason && !absorbed[other] && !whats.contains(what) {
                    whats.push(what);
                }
            }
        }
        merged.push(format!("{}: {reason}", whats.join(" and ")));
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_keeps_a_short_spike() {
        let mut samples: Vec<(u64, u64)> = (0..10_000).map(|t| (t, 100)).collect();
        samples[5_003].1 = 900;
        let reduced = reduce_samples(&samples, 100);
        assert!(reduced.len() <= 102, "{}", reduced.len());
        assert!(reduced.contains(&(5_003, 900)));
        assert_eq!(reduced.last(), Some(&(9_999, 100)));
    }

    #[test]
    fn log_scan_counts_requests_and_finds_the_one_before_the_oom() {
        let log = "INFO:     127.0.0.1:1 - \"POST /v1/completions HTTP/1.1\" 200 OK\n\
                   INFO 11-29 17:00:01 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 7 reqs, Waiting: 0 reqs\n\
                   INFO:     127.0.0.1:2 - \"POST /v1/completions HTTP/1.1\" 500 Internal Server Error\n\
                   torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
        let scan = scan_log(log, false);
        assert_eq!(scan.requests_served, 1);
        assert_eq!(scan.requests_failed, 1);
        assert_eq!(scan.max_running_requests, Some(7));
        assert!(scan
            .request_before_oom
            .unwrap_or_default()
            .contains(" 500 "));
    }

    fn oom_run(weights: u64) -> RunInput {
        let value = serde_json::json!({
            "schema_version": 1,
            "command": ["vllm", "serve", "m"],
            "exit_code": 1,
            "preflight": {"inventory": {"devices": [{
                "index": 0, "uuid": "GPU-1", "name": "NVIDIA H200", "cuda_ordinal": 0,
                "pci_bus_id": "00000000:00:06.0",
                "memory": {"total_bytes": 150754820096u64, "free_bytes": 150109880320u64, "used_bytes": 0}
            }]}},
            "explain": {"is_gpu_oom": true, "phase": {"failed_in": "weights_load", "server_was_ready": false}},
        });
        let record = crate::parse::run_record::read(&value);
        assert!(record.problems.is_empty(), "{:?}", record.problems);
        RunInput {
            label: "run".to_owned(),
            record,
            checkpoint: Some(CheckpointFacts {
                path: Some("model".to_owned()),
                weights_total_bytes: Some(weights),
                source: "checkpoint headers".to_owned(),
                ..CheckpointFacts::default()
            }),
            ..RunInput::default()
        }
    }

    #[test]
    fn weights_beyond_the_card_are_a_hardware_limit_with_a_card_class() {
        let report = build(&[oom_run(300 << 30)]);
        let owner = &report.runs[0].owner_summary;
        assert_eq!(owner.kind, OwnerKind::HardwareLimit);
        assert_eq!(
            owner.action.as_deref(),
            Some("several GPUs with tensor parallelism, 375.00 GiB in total or more")
        );
        let report = build(&[oom_run(140 << 30)]);
        let owner = &report.runs[0].owner_summary;
        assert_eq!(owner.kind, OwnerKind::HardwareLimit);
        assert!(
            owner
                .action
                .as_deref()
                .unwrap_or_default()
                .contains("180 GB class (B200 180GB)"),
            "{owner:?}"
        );
        assert!(
            owner
                .text
                .contains("16-bit models up to about 60B parameters"),
            "{}",
            owner.text
        );
    }

    #[test]
    fn weights_that_fit_in_a_later_phase_are_a_configuration_error() {
        let mut input = oom_run(61 << 30);
        if let Some(explain) = input.record.run.explain.as_mut() {
            explain.phase = crate::model::explain::PhaseReport {
                failed_in: Phase::KvCacheAlloc,
                ..Default::default()
            };
        }
        let report = build(&[input]);
        let owner = &report.runs[0].owner_summary;
        assert_eq!(owner.kind, OwnerKind::ConfigurationError);
        assert!(owner
            .action
            .as_deref()
            .unwrap_or_default()
            .contains("--max-model-len"));
        assert_eq!(
            report.runs[0].fit.lower_bound.as_ref().map(|f| f.bytes),
            Some(61 << 30)
        );
    }

    #[test]
    fn a_shared_reason_is_said_once() {
        let absent = "NVML is absent: the NVIDIA management library could not be loaded";
        let merged = merge_shared_reasons(vec![
            format!("no memory timeline: {absent}"),
            "no checkpoint given (`--checkpoint PATH`): no lower bound".to_owned(),
            format!("no GPU inventory before start: {absent}"),
            format!("no memory timeline: {absent}"),
        ]);
        assert_eq!(
            merged,
            [
                format!("no memory timeline and no GPU inventory before start: {absent}"),
                "no checkpoint given (`--checkpoint PATH`): no lower bound".to_owned(),
            ]
        );
        // A short reason that starts a fuller entry takes the fuller one.
        let merged = merge_shared_reasons(vec![
            "no memory timeline: NVML library not found".to_owned(),
            "the log is large: only its last part was scanned".to_owned(),
            "NVML library not found: libnvidia-ml.so.1 could not be loaded".to_owned(),
        ]);
        assert_eq!(
            merged,
            [
                "no memory timeline: NVML library not found: libnvidia-ml.so.1 could not be loaded",
                "the log is large: only its last part was scanned",
            ]
        );
    }

    #[test]
    fn card_class_leaves_room_above_the_weights() {
        // 60 GiB / 0.8 = 75 GiB: an 80 GB card (H100: 81,559 MiB) holds it, a 48 GB one does not.
        let class = card_class_for(60 << 30).unwrap();
        assert!(class.starts_with("80 GB class ("), "{class}");
        assert!(class.contains("H100"), "{class}");
        // 140 GiB / 0.8 = 175 GiB: the B200 (183,359 MiB = 179 GiB) is the smallest that holds it.
        let class = card_class_for(140 << 30).unwrap();
        assert!(class.starts_with("180 GB class (B200"), "{class}");
        assert_eq!(card_class_for(400 << 30), None);
    }
}
