//! The verdict and the owner summary (hardware limit or configuration error, with the card
//! class that would fit), the host out-of-memory verdict included.

use super::*;

pub(super) fn verdict(
    record: &RecordRead,
    status: &RunEnd,
    failure: &FailureFacts,
    checked: bool,
) -> RunVerdict {
    let explained = record.explain().map(|explain| &explain.verdict);
    let cause_kind = record
        .explain_cause()
        .map(|cause| cause.as_str().to_owned());
    // The headline, else the cause class's word.
    let cause = explained
        .and_then(|verdict| non_empty(&verdict.headline))
        .or_else(|| cause_kind.clone());
    match (explained, cause) {
        (Some(verdict), Some(cause)) if status.failed => RunVerdict {
            cause,
            cause_kind,
            evidence: verdict.evidence.clone(),
            next_steps: verdict.next_steps.clone(),
            source: "`oomdoc explain` on the run's log".to_owned(),
        },
        (_, cause) if !status.failed => RunVerdict {
            cause: "no failure recorded".to_owned(),
            cause_kind: None,
            evidence: std::iter::once(status.summary.clone())
                .chain(cause.map(|cause| format!("log diagnosis: {cause}")))
                .collect(),
            next_steps: vec![if checked {
                "keep this configuration within its stated limit; record it next to the failing run (`oomdoc diff`)".to_owned()
            } else {
                "check a short request and the next real scenario before calling it fit (`oomdoc probe`)".to_owned()
            }],
            source: "run record".to_owned(),
        },
        _ => RunVerdict {
            cause: match failure.failed_in {
                Some(phase) => format!(
                    "failed in `{}`; the record has no diagnosis",
                    phase.as_str()
                ),
                None => "failed; the record has no diagnosis".to_owned(),
            },
            cause_kind: None,
            evidence: vec![status.summary.clone()],
            next_steps: vec!["run `oomdoc explain` on the run's log".to_owned()],
            source: "run record".to_owned(),
        },
    }
}

/// Share of a card the weights may take and leave room for KV cache, activations and CUDA
/// graphs (an oomdoc rule of thumb, stated wherever it is used).
pub const WEIGHTS_SHARE: f64 = 0.8;

/// The smallest class of the card table (`model::cards`) whose memory total holds the weights
/// within [`WEIGHTS_SHARE`], named by its marketed memory and its cards.
pub(super) fn card_class_for(weights: u64) -> Option<String> {
    let needed = weights as f64 / WEIGHTS_SHARE;
    let smallest = CARDS
        .iter()
        .filter(|card| card.total_bytes.0 as f64 >= needed)
        .min_by_key(|card| card.total_bytes)?;
    let names: Vec<&str> = CARDS
        .iter()
        .filter(|card| card.memory_gb == smallest.memory_gb)
        .map(|card| card.name)
        .collect();
    Some(format!(
        "{} GB class ({})",
        smallest.memory_gb,
        names.join(", ")
    ))
}

pub(super) fn billions(params: f64) -> String {
    if params >= 10e9 {
        format!("{:.0}B", params / 1e9)
    } else {
        format!("{:.1}B", params / 1e9)
    }
}

/// The host side of a run's end (issue 17): a host out-of-memory kill replaces a verdict
/// that could not see it (the log of a SIGKILLed process ends without an error); a SIGKILL
/// without evidence is said as such, never guessed.
pub(super) fn host_verdict(
    finding: &HostOomFinding,
    gpu_oom_in_log: bool,
    status: &mut RunEnd,
    verdict: &mut RunVerdict,
    owner: &mut OwnerSummary,
) {
    match finding {
        HostOomFinding::NotKilled => {}
        HostOomFinding::KilledBySignal {
            not_shown_because, ..
        } => {
            status
                .summary
                .push_str("; killed by a signal (cause not shown)");
            verdict.evidence.push(format!(
                "killed by a signal (cause not shown): {}",
                not_shown_because.join("; ")
            ));
        }
        HostOomFinding::HostOomKill(kill) => {
            status
                .summary
                .push_str("; host out-of-memory kill (the kernel's OOM killer)");
            let lines = crate::analyze::host_oom::describe(kill);
            // A GPU OOM the log also shows stays in sight (a process can hit both).
            let gpu_verdict = gpu_oom_in_log.then(|| verdict.cause.clone());
            *verdict = RunVerdict {
                cause: "host out-of-memory kill: the kernel's OOM killer ended the process (host RAM, not GPU)".to_owned(),
                cause_kind: Some("host_oom_kill".to_owned()),
                evidence: lines.evidence,
                next_steps: lines.next_steps,
                source: "host memory recorded by `oomdoc run` (`/proc` and the memory cgroup)"
                    .to_owned(),
            };
            if let Some(cause) = gpu_verdict {
                verdict
                    .evidence
                    .push(format!("the log also shows a GPU out-of-memory: {cause}"));
            }
            *owner = OwnerSummary {
                from_explain: owner.from_explain.take(),
                kind: OwnerKind::NotAGpuOom,
                action: verdict.next_steps.first().cloned(),
                text: format!(
                    "This run did not fail on the GPU: the host ran out of memory and the kernel killed the process{}. {}",
                    kill.limit_bytes.map_or_else(
                        || " (no cgroup limit: the whole machine ran out)".to_owned(),
                        |limit| format!(" at its {limit} memory limit"),
                    ),
                    verdict
                        .next_steps
                        .first()
                        .map_or_else(String::new, |step| format!("First change: {step}.")),
                ),
            };
        }
    }
}

pub(super) fn owner_summary(
    record: &RecordRead,
    status: &RunEnd,
    failure: &FailureFacts,
    fit: &FitVsMeasured,
    gpus: &[GpuAtStart],
    readiness: &Readiness,
) -> OwnerSummary {
    let from_explain = record
        .explain()
        .and_then(|explain| non_empty(&explain.verdict.owner_summary));
    let capacity = fit.capacity.as_ref().map(|figure| figure.bytes);
    let weights = fit
        .lower_bound
        .as_ref()
        .or(fit.weights_loaded.as_ref())
        .map(|figure| figure.bytes);
    let card = gpus
        .iter()
        .find(|gpu| gpu.visible_to_run)
        .and_then(|gpu| non_empty(&gpu.device.name))
        .unwrap_or_else(|| "this card".to_owned());
    if !status.failed {
        return OwnerSummary {
            kind: OwnerKind::WorkingConfiguration,
            action: None,
            text: format!(
                "No new hardware is indicated by this run: it did not fail on {card}. {}{}{}",
                capitalise(&readiness.summary),
                if readiness.unverified.is_empty() {
                    ".".to_owned()
                } else {
                    format!("; still unverified: {}.", readiness.unverified.join(", "))
                },
                readiness
                    .stated_limit
                    .as_ref()
                    .map_or_else(String::new, |limit| format!(" Its limit as run: {limit}."))
            ),
            // A log without a failure has nothing to add for the owner.
            from_explain: None,
        };
    }
    if failure.is_gpu_oom == Some(false) {
        return OwnerSummary {
            kind: OwnerKind::NotAGpuOom,
            action: None,
            text: "The failure is not a GPU out-of-memory: more GPU memory would not fix it. See the verdict.".to_owned(),
            from_explain,
        };
    }
    if let (Some(weights), Some(capacity)) = (weights, capacity) {
        let bf16_params = capacity as f64 * WEIGHTS_SHARE / 2.0;
        let int4_params = capacity as f64 * WEIGHTS_SHARE / 0.5;
        if weights as f64 >= capacity as f64 * 0.9 {
            let class = card_class_for(weights).map_or_else(
                || {
                    format!(
                        "several GPUs with tensor parallelism, {} in total or more",
                        Bytes((weights as f64 / WEIGHTS_SHARE) as u64)
                    )
                },
                |class| format!("a card of the {class} or larger"),
            );
            return OwnerSummary {
                kind: OwnerKind::HardwareLimit,
                action: Some(class.clone()),
                text: format!(
                    "Hardware limit: the weights alone need {} and {card} has {}; no setting fixes that. For models of this class, get {class}. Or change the model: on {card}, 16-bit models up to about {} parameters fit, 4-bit quantised ones up to about {} (weights at most {:.0}% of the card, the rest for KV cache and activations).",
                    Bytes(weights),
                    Bytes(capacity),
                    billions(bf16_params),
                    billions(int4_params),
                    WEIGHTS_SHARE * 100.0
                ),
                from_explain,
            };
        }
    }
    let failed_in = failure.failed_in.unwrap_or_default();
    let phase = failed_in.as_str();
    let change = match failed_in {
        Phase::CudaGraphCapture => Some("`--enforce-eager`, or a lower `--gpu-memory-utilization` so CUDA graphs have room"),
        Phase::KvCacheAlloc => Some("a lower `--max-model-len` (or `--max-num-seqs`), or a higher `--gpu-memory-utilization` when the card is not shared"),
        Phase::Profiling => Some("a lower `--max-num-seqs` / `--max-num-batched-tokens`, or a lower `--gpu-memory-utilization`"),
        Phase::FormatConversion => Some("a checkpoint already in the target format (pre-quantised), so no conversion peak is needed at load"),
        Phase::Startup => Some("free the card (other processes hold memory) or lower `--gpu-memory-utilization`"),
        Phase::Inference => Some("a lower `--max-num-seqs` or `--max-model-len`, or limits on request length"),
        _ => None,
    };
    let others_hold = gpus.iter().filter(|gpu| gpu.visible_to_run).any(|gpu| {
        let memory = &gpu.device.memory;
        (memory.free_bytes.get() as f64) < memory.total_bytes.get() as f64 * 0.9
    });
    let weights_fit =
        matches!((weights, capacity), (Some(w), Some(c)) if (w as f64) < c as f64 * 0.9);
    let after_weights = !matches!(
        failed_in,
        Phase::WeightsLoad | Phase::Startup | Phase::Unknown
    );
    if others_hold {
        return OwnerSummary {
            kind: OwnerKind::ConfigurationError,
            action: Some("free the card before start, or run on a card nobody else uses".to_owned()),
            text: format!(
                "Configuration error, not a hardware limit: other processes held memory on {card} before the start. Free the card or pick an idle one and run again; if it still fails, the report of that run names the next change. No new hardware is indicated yet."
            ),
            from_explain,
        };
    }
    if let (Some(change), true) = (change, weights_fit || after_weights) {
        return OwnerSummary {
            kind: OwnerKind::ConfigurationError,
            action: Some(change.to_owned()),
            text: format!(
                "Configuration error, not a hardware limit: {} failed in `{phase}`, after the weights were placed{}. Change: {change}. No new hardware is needed for this model on {card}.",
                if weights_fit { "the model fits and the launch" } else { "the launch" },
                weights.map_or(String::new(), |w| format!(" ({})", Bytes(w)))
            ),
            from_explain,
        };
    }
    // Not decided from measured figures: take the log diagnosis's class when it has one.
    let explained = record.explain().map(|explain| &explain.verdict);
    let explained_kind = match explained.map(|verdict| verdict.owner_class) {
        Some(OwnerClass::HardwareLimit) => Some(OwnerKind::HardwareLimit),
        Some(OwnerClass::Configuration) => Some(OwnerKind::ConfigurationError),
        Some(OwnerClass::NotGpuMemory) => Some(OwnerKind::NotAGpuOom),
        _ => None,
    };
    if let (Some(kind), Some(text)) = (explained_kind, from_explain.clone()) {
        return OwnerSummary {
            kind,
            action: explained.and_then(|v| v.next_steps.first().cloned()),
            text: format!(
                "{text} (from the log diagnosis; the report could not check it against a weights lower bound: give `--checkpoint`)"
            ),
            from_explain: None,
        };
    }
    OwnerSummary {
        kind: OwnerKind::Undetermined,
        action: Some("run `oomdoc fit` on the checkpoint to compare its lower bound with the card".to_owned()),
        text: format!(
            "Not yet decided between a hardware limit and a configuration error: it failed in `{phase}` and the weights lower bound is unknown. Give `--checkpoint` so the report can compare the model with {card}."
        ),
        from_explain,
    }
}

pub(super) fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
