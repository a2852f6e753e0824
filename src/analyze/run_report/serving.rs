//! What a serving run shows: the minimal reproducing request, the probe, concurrency and
//! readiness (is the configuration fit).

use super::*;

pub(super) fn reproduction(
    input: &RunInput,
    status: &RunEnd,
    failure: &FailureFacts,
) -> Reproduction {
    if !status.failed {
        return Reproduction {
            request_needed: None,
            request: None,
            source: None,
            note: "the run did not fail: nothing to reproduce".to_owned(),
        };
    }
    if let Some(phase) = failure.failed_in {
        if phase.is_startup() && failure.server_was_ready != Some(true) {
            return Reproduction {
                request_needed: Some(false),
                request: None,
                source: Some("phase of the failure".to_owned()),
                note: format!(
                    "no request is needed: it fails in `{}`, before any request is served; the command line above reproduces it",
                    phase.as_str()
                ),
            };
        }
        if phase == Phase::TrainingStep {
            return Reproduction {
                request_needed: Some(false),
                request: None,
                source: Some("phase of the failure".to_owned()),
                note: "a training step failed: the command line above reproduces it; the smallest reproduction is the smallest batch that still fails".to_owned(),
            };
        }
    }
    if let Some((file, probe)) = &input.probe {
        let failing = probe
            .requests
            .iter()
            .filter(|request| !ProbeRead::succeeded(request))
            .min_by_key(|request| request.prompt_chars);
        if let Some(request) = failing {
            return Reproduction {
                request_needed: Some(true),
                request: Some(format!(
                    "{} request #{} with a {}-character prompt (status {})",
                    request.phase.name(),
                    request.index,
                    request.prompt_chars,
                    request
                        .status
                        .map_or_else(|| "none".to_owned(), |status| status.to_string())
                )),
                source: Some(format!("probe `{file}`")),
                note: "the smallest probe request that failed".to_owned(),
            };
        }
    }
    if let Some(line) = input
        .log
        .as_ref()
        .and_then(|scan| scan.request_before_oom.clone())
    {
        return Reproduction {
            request_needed: Some(true),
            request: Some(line),
            source: Some("engine log (last request before the OOM)".to_owned()),
            note: "the request in flight when it failed; it may not be the smallest one that fails"
                .to_owned(),
        };
    }
    Reproduction {
        request_needed: None,
        request: None,
        source: None,
        note: "not known: the log shows no request before the failure; run `oomdoc probe` against the server to find the smallest failing request".to_owned(),
    }
}

pub(super) fn probe_summary(file: &str, probe: &ProbeRead) -> ProbeSummary {
    let mut phases: Vec<(String, u64, u64)> = Vec::new();
    for request in &probe.requests {
        let phase = request.phase.name().to_owned();
        let index = match phases.iter().position(|(name, _, _)| *name == phase) {
            Some(index) => index,
            None => {
                phases.push((phase, 0, 0));
                phases.len() - 1
            }
        };
        phases[index].2 += 1;
        if ProbeRead::succeeded(request) {
            phases[index].1 += 1;
        }
    }
    ProbeSummary {
        file: file.to_owned(),
        verdict: probe.verdict.map(|verdict| json_word(&verdict)),
        phases,
        plateau_bytes: probe.plateau_bytes.map(Bytes::get),
    }
}

pub(super) fn concurrency(input: &RunInput) -> Vec<Fact> {
    let mut facts = Vec::new();
    let argv = crate::analyze::compare::parse_argv(&input.record.run.command);
    for flag in [
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--max-running-requests",
        "--max-concurrent-requests",
        "--parallel",
        "-np",
    ] {
        if let Some(value) = argv.flags.get(flag) {
            facts.push(Fact {
                name: format!("`{flag}`"),
                value: value.clone(),
                source: "command line".to_owned(),
            });
        }
    }
    // What the engine itself settled on (its defaults included), when explain read it.
    let config = input.record.explain().map(|explain| &explain.config);
    for (key, flag, value) in [
        (
            "max_num_seqs",
            "--max-num-seqs",
            config.and_then(|config| config.max_num_seqs),
        ),
        (
            "max_num_batched_tokens",
            "--max-num-batched-tokens",
            config.and_then(|config| config.max_num_batched_tokens),
        ),
        (
            "batch_size",
            "--batch-size",
            config.and_then(|config| config.batch_size),
        ),
    ] {
        if let Some(value) = value.map(|value| value.to_string()) {
            if !argv.flags.contains_key(flag) {
                facts.push(Fact {
                    name: format!("`{key}`"),
                    value,
                    source: "engine log".to_owned(),
                });
            }
        }
    }
    if let Some(scan) = &input.log {
        if let Some(line) = &scan.max_concurrency {
            facts.push(Fact {
                name: "KV cache capacity".to_owned(),
                value: line.clone(),
                source: "engine log".to_owned(),
            });
        }
        if let Some(running) = scan.max_running_requests {
            facts.push(Fact {
                name: "most requests running at once".to_owned(),
                value: running.to_string(),
                source: "engine log stats lines".to_owned(),
            });
        }
    }
    if let Some((_, probe)) = &input.probe {
        let concurrent: Vec<_> = probe
            .requests
            .iter()
            .filter(|request| request.phase == ProbePhase::Concurrent)
            .collect();
        if !concurrent.is_empty() {
            let ok = concurrent
                .iter()
                .filter(|request| ProbeRead::succeeded(request))
                .count();
            facts.push(Fact {
                name: "parallel requests checked".to_owned(),
                value: format!("{ok} of {} succeeded", concurrent.len()),
                source: "probe".to_owned(),
            });
        }
    }
    facts
}

pub(super) fn readiness(input: &RunInput, status: &RunEnd, failure: &FailureFacts) -> Readiness {
    // Requests served: access-log lines in the log, else explain's `request` timeline events.
    let events: &[TimelineEvent] = input
        .record
        .explain()
        .map_or(&[], |explain| explain.timeline.as_slice());
    let request_events: u64 = events
        .iter()
        .filter(|event| event.kind == EventKind::Request)
        .map(|event| event.count.max(1))
        .sum();
    let ready_event = events
        .iter()
        .any(|event| event.kind == EventKind::ServerReady);
    let served_in_log = input
        .log
        .as_ref()
        .map_or(0, |scan| scan.requests_served)
        .max(request_events);
    let probe = input.probe.as_ref().map(|(_, probe)| probe);
    let probe_ok = |phases: &[&str]| {
        probe.map_or(0, |probe| {
            probe
                .requests
                .iter()
                .filter(|r| ProbeRead::succeeded(r) && phases.contains(&r.phase.name()))
                .count()
        })
    };
    let probe_failed = probe.map_or(0, |probe| {
        probe
            .requests
            .iter()
            .filter(|r| !ProbeRead::succeeded(r))
            .count()
    });
    let loaded = failure.server_was_ready == Some(true)
        || ready_event
        || served_in_log > 0
        || probe_ok(&["warmup", "identical", "alternating", "concurrent"]) > 0
        || (!status.failed && status.exit_code == Some(0));
    let short_ok = probe_ok(&["warmup", "identical"]);
    let short_request = if short_ok > 0 {
        Check {
            checked: true,
            evidence: format!("{short_ok} short probe requests succeeded (probe)"),
        }
    } else if served_in_log > 0 {
        Check {
            checked: true,
            evidence: format!("{served_in_log} requests answered with 2xx (engine log)"),
        }
    } else {
        Check {
            checked: false,
            evidence: "no request was served in the log and no probe was given".to_owned(),
        }
    };
    let long_ok = probe_ok(&["alternating"]);
    let concurrent_ok = probe_ok(&["concurrent"]);
    let next_scenario = if long_ok > 0 || concurrent_ok > 0 {
        let mut parts = Vec::new();
        if long_ok > 0 {
            parts.push(format!("{long_ok} alternating short/long requests"));
        }
        if concurrent_ok > 0 {
            parts.push(format!("{concurrent_ok} parallel requests"));
        }
        Check {
            checked: probe_failed == 0,
            evidence: if probe_failed == 0 {
                format!("{} succeeded (probe)", parts.join(" and "))
            } else {
                format!(
                    "{} succeeded, but {probe_failed} probe requests failed",
                    parts.join(" and ")
                )
            },
        }
    } else {
        Check {
            checked: false,
            evidence: "long inputs and parallel requests were not tried (`oomdoc probe` does both)"
                .to_owned(),
        }
    };
    let mut unverified = Vec::new();
    if !short_request.checked {
        unverified.push("a short request end to end".to_owned());
    }
    if long_ok == 0 {
        unverified.push("long inputs near the configured context length".to_owned());
    }
    if concurrent_ok == 0 {
        unverified.push("parallel requests at the expected concurrency".to_owned());
    }
    if probe.is_none() {
        unverified.push("memory over repeated requests (plateau or growth)".to_owned());
    }
    let (state, summary) = if status.failed {
        (
            "failed",
            "this configuration failed: it is not fit".to_owned(),
        )
    } else if !loaded {
        (
            "not_loaded",
            "the record does not show that this configuration loaded".to_owned(),
        )
    } else if !short_request.checked {
        (
            "loads_unverified",
            "this configuration loads, but loading is not yet being fit: no request was shown to succeed".to_owned(),
        )
    } else if !next_scenario.checked {
        (
            "short_request_only",
            "this configuration loads and served a short request; the next real scenario is not yet checked".to_owned(),
        )
    } else {
        (
            "checked",
            "this configuration loads, served a short request and passed the next scenario checked by the probe".to_owned(),
        )
    };
    Readiness {
        state: state.to_owned(),
        loaded,
        short_request,
        next_scenario,
        unverified,
        summary,
        stated_limit: (!status.failed && loaded)
            .then(|| stated_limit(input))
            .flatten(),
    }
}

/// The limits a working run was launched and measured with: context length, batch, memory
/// budget from the command line; KV capacity from the log; the peak from the timeline.
pub(super) fn stated_limit(input: &RunInput) -> Option<String> {
    let argv = crate::analyze::compare::parse_argv(&input.record.run.command);
    let mut parts = Vec::new();
    for flag in [
        "--max-model-len",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--gpu-memory-utilization",
        "--kv-cache-dtype",
        "--tensor-parallel-size",
        "--ctx-size",
        "-c",
        "--batch-size",
    ] {
        if let Some(value) = argv.flags.get(flag) {
            parts.push(format!("`{flag} {value}`"));
        }
    }
    if let Some(line) = input
        .log
        .as_ref()
        .and_then(|scan| scan.max_concurrency.clone())
    {
        parts.push(format!("KV cache: {line}"));
    }
    let peak = input.record.memory().and_then(|memory| {
        memory
            .devices
            .iter()
            .filter_map(|device| {
                Some((
                    device.peak_used_bytes?.get(),
                    Some(device.total_bytes.get()),
                ))
            })
            .max_by_key(|(peak, _)| *peak)
    });
    if let Some((peak, total)) = peak {
        parts.push(match total {
            Some(total) => format!("peak {} of {} (NVML)", Bytes(peak), Bytes(total)),
            None => format!("peak {} (NVML)", Bytes(peak)),
        });
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}
