//! Was a child that died by SIGKILL killed by the kernel's OOM killer? Pure: takes how the
//! child ended, the host timeline and the phases, returns a [`HostOomFinding`].
//!
//! A SIGKILL (signal 9, or exit code 137 from a shell or a container runtime) is an OOM kill
//! only with evidence: the cgroup's `oom_kill` count rose while the child ran, the tree's
//! resident memory reached the cgroup limit, or v1 `under_oom` is set. Without it the end
//! stays "killed by a signal (cause not shown)": another process, a job scheduler or a user
//! may have sent it, and a machine-wide OOM kill (no cgroup limit) is only in the kernel log.

use crate::model::host::{
    advice_text, evidence_text, peak_figure_text, ChildEnd, HostAdvice, HostOomEvidence,
    HostOomFinding, HostOomKill, HostPeak, HostSample, HostTimeline,
};
use crate::model::Bytes;

/// SIGKILL on Linux.
const SIGKILL: i32 = 9;

/// Tree RSS within this fraction of the limit counts as "at the limit".
const AT_LIMIT_FRACTION: f64 = 0.90;

/// A phase of the run and when it started, in milliseconds since the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseStart {
    /// The phase's name, e.g. `weights loading`.
    pub name: String,
    /// Its start.
    pub start_ms: u64,
}

/// The phase running at `t_ms`: the last one started at or before it.
fn phase_at(phases: &[PhaseStart], t_ms: u64) -> Option<String> {
    phases
        .iter()
        .filter(|phase| phase.start_ms <= t_ms)
        .max_by_key(|phase| phase.start_ms)
        .map(|phase| phase.name.clone())
}

/// The highest tree RSS reading of each phase, in phase order (phases without a reading are
/// left out; readings before the first phase go under the first). Loading is where host RAM
/// usually peaks (safetensors mmap, `low_cpu_mem_usage`, format conversion on the CPU).
pub fn rss_peaks_by_phase(
    timeline: &HostTimeline,
    phases: &[PhaseStart],
) -> Vec<(String, HostSample)> {
    let mut ordered: Vec<&PhaseStart> = phases.iter().collect();
    ordered.sort_by_key(|phase| phase.start_ms);
    let mut peaks: Vec<(String, HostSample)> = Vec::new();
    for sample in &timeline.samples {
        let Some(phase) = ordered
            .iter()
            .rev()
            .find(|phase| phase.start_ms <= sample.t_ms)
            .or(ordered.first())
        else {
            return Vec::new();
        };
        match peaks.iter_mut().find(|(name, _)| *name == phase.name) {
            Some((_, best)) if sample.tree_rss_bytes > best.tree_rss_bytes => *best = *sample,
            Some(_) => {}
            None => peaks.push((phase.name.clone(), *sample)),
        }
    }
    peaks
}

/// Judges the child's end against the host timeline.
pub fn judge(end: ChildEnd, timeline: &HostTimeline, phases: &[PhaseStart]) -> HostOomFinding {
    let killed = end.signal == Some(SIGKILL) || (end.signal.is_none() && end.code == Some(137));
    if !killed {
        return HostOomFinding::NotKilled;
    }
    let before = timeline.cgroup_before.as_ref();
    let after = timeline.cgroup_after.as_ref();
    let limit = after
        .and_then(|memory| memory.limit_bytes)
        .or_else(|| before.and_then(|memory| memory.limit_bytes));
    let mut evidence = Vec::new();
    let mut not_shown = Vec::new();
    match (
        before.and_then(|m| m.oom_kill_count),
        after.and_then(|m| m.oom_kill_count),
    ) {
        (Some(before), Some(after)) if after > before => {
            evidence.push(HostOomEvidence::OomKillCountRose { before, after });
        }
        (Some(count), Some(_)) => not_shown.push(format!(
            "the cgroup's OOM-kill count did not change ({count})"
        )),
        _ => not_shown.push(match (before, after) {
            (None, _) | (_, None) => {
                "the memory cgroup could not be read before and after the run".to_string()
            }
            _ => "the cgroup has no OOM-kill count (kernel older than 4.13)".to_string(),
        }),
    }
    let peak_rss = timeline.peak_rss();
    match (limit, peak_rss) {
        (Some(limit), Some(peak)) if at_limit(peak.tree_rss_bytes, limit) => {
            evidence.push(HostOomEvidence::RssAtLimit {
                rss_bytes: peak.tree_rss_bytes,
                limit_bytes: limit,
            });
        }
        (Some(limit), Some(peak)) => not_shown.push(format!(
            "the sampled RSS peak ({}) stayed below the cgroup limit ({})",
            peak.tree_rss_bytes, limit
        )),
        (None, _) => not_shown.push(
            "the cgroup has no memory limit: a machine-wide OOM kill shows only in the kernel log (`dmesg`: `Out of memory: Killed process`)"
                .to_string(),
        ),
        (Some(_), None) => not_shown.push("no host memory reading was taken".to_string()),
    }
    if after.and_then(|m| m.under_oom) == Some(true) {
        evidence.push(HostOomEvidence::UnderOom);
    }
    if evidence.is_empty() {
        return HostOomFinding::KilledBySignal {
            signal: SIGKILL,
            not_shown_because: not_shown,
        };
    }
    let peak = cgroup_or_rss_peak(timeline, phases);
    let phase_at_kill = timeline
        .samples
        .last()
        .and_then(|sample| phase_at(phases, sample.t_ms));
    // Processes at the peak, not the most ever seen: a launcher's short-lived helpers at
    // start are not workers holding memory.
    let processes = timeline.peak_rss().map_or(0, |sample| sample.processes);
    let mut advice = Vec::new();
    if let Some(limit) = limit {
        advice.push(HostAdvice::RaiseMemoryLimit {
            limit_bytes: limit,
            peak_bytes: peak.as_ref().map(|peak| peak.bytes),
        });
    }
    advice.push(HostAdvice::LowMemoryLoading);
    advice.push(HostAdvice::SmallerHostBuffers);
    if processes > 1 {
        advice.push(HostAdvice::FewerWorkers { processes });
    }
    advice.push(HostAdvice::Swap);
    HostOomFinding::HostOomKill(HostOomKill {
        evidence,
        limit_bytes: limit,
        peak,
        phase_at_kill,
        advice,
    })
}

fn at_limit(rss: Bytes, limit: Bytes) -> bool {
    rss.get() as f64 >= limit.get() as f64 * AT_LIMIT_FRACTION
}

/// The best peak figure: the cgroup's own peak counter, else the largest sampled charge,
/// else the largest sampled tree RSS.
fn cgroup_or_rss_peak(timeline: &HostTimeline, phases: &[PhaseStart]) -> Option<HostPeak> {
    let sampled = |bytes: Bytes, figure: &str, t_ms: u64| HostPeak {
        bytes,
        figure: figure.to_string(),
        t_ms: Some(t_ms),
        phase: phase_at(phases, t_ms),
    };
    let cgroup_current = timeline.peak_cgroup().and_then(|sample| {
        sample
            .cgroup_current_bytes
            .map(|bytes| sampled(bytes, "cgroup_current", sample.t_ms))
    });
    let rss = timeline
        .peak_rss()
        .filter(|sample| sample.tree_rss_bytes > Bytes::ZERO)
        .map(|sample| sampled(sample.tree_rss_bytes, "tree_rss", sample.t_ms));
    let counter = timeline
        .cgroup_after
        .as_ref()
        .and_then(|memory| memory.peak_bytes)
        // A v1 `max_usage_in_bytes` counts from the cgroup's creation: it is this run's peak
        // only when it grew during the run.
        .filter(|peak| {
            timeline
                .cgroup_before
                .as_ref()
                .and_then(|memory| memory.peak_bytes)
                .is_none_or(|before| peak > &before)
        })
        .map(|bytes| HostPeak {
            bytes,
            figure: "cgroup_peak".to_string(),
            // When it happened is the sampled peak's time, if a sample saw it.
            t_ms: cgroup_current.as_ref().and_then(|peak| peak.t_ms),
            phase: cgroup_current.as_ref().and_then(|peak| peak.phase.clone()),
        });
    counter.or(cgroup_current).or(rss)
}

/// A host out-of-memory kill as sentences: the evidence (with the limit and the peak) and
/// what to change, for a report's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillSentences {
    /// What shows the kill, then the limit, the peak and the phase.
    pub evidence: Vec<String>,
    /// What to change, most direct first.
    pub next_steps: Vec<String>,
}

/// The sentences of a host out-of-memory kill.
pub fn describe(kill: &HostOomKill) -> KillSentences {
    let mut evidence: Vec<String> = kill.evidence.iter().map(evidence_text).collect();
    evidence.push(match kill.limit_bytes {
        Some(limit) => format!(
            "limit: {limit} ({} B, the cgroup's `memory.max` / `memory.limit_in_bytes`)",
            limit.get()
        ),
        None => "limit: none on the cgroup (the whole machine ran out)".to_owned(),
    });
    if let Some(peak) = &kill.peak {
        let mut line = format!(
            "peak: {} ({} B, {})",
            peak.bytes,
            peak.bytes.get(),
            peak_figure_text(&peak.figure)
        );
        if let Some(phase) = &peak.phase {
            line.push_str(&format!(" during {phase}"));
        }
        evidence.push(line);
    }
    if let Some(phase) = &kill.phase_at_kill {
        evidence.push(format!("killed during: {phase}"));
    }
    KillSentences {
        evidence,
        next_steps: kill.advice.iter().map(advice_text).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::host::{CgroupMemory, CgroupVersion};

    const MIB: u64 = 1 << 20;

    fn cgroup(oom_kills: u64, peak: u64, under_oom: bool) -> CgroupMemory {
        CgroupMemory {
            version: Some(CgroupVersion::V1),
            path: "/job".into(),
            current_bytes: Some(Bytes(MIB)),
            limit_bytes: Some(Bytes(64 * MIB)),
            peak_bytes: Some(Bytes(peak)),
            oom_kill_count: Some(oom_kills),
            under_oom: Some(under_oom),
            ..CgroupMemory::default()
        }
    }

    /// RSS climbing 8 MiB per reading to `top` MiB; 4 processes at start (a launcher's
    /// helpers), then 3.
    fn timeline(top: u64, before: CgroupMemory, after: CgroupMemory) -> HostTimeline {
        HostTimeline {
            root_pid: 7,
            interval_ms: 100,
            samples: (1..=top / 8)
                .map(|n| HostSample {
                    t_ms: n * 100,
                    tree_rss_bytes: Bytes(n * 8 * MIB),
                    processes: if n > 3 { 3 } else { 4 },
                    cgroup_current_bytes: Some(Bytes(n * 8 * MIB)),
                })
                .collect(),
            cgroup_before: Some(before),
            cgroup_after: Some(after),
            ..HostTimeline::default()
        }
    }

    fn phases() -> Vec<PhaseStart> {
        vec![
            PhaseStart {
                name: "process start".into(),
                start_ms: 0,
            },
            PhaseStart {
                name: "weights loading".into(),
                start_ms: 250,
            },
        ]
    }

    const KILLED: ChildEnd = ChildEnd {
        code: None,
        signal: Some(9),
    };

    #[test]
    fn oom_kill_count_rise_is_a_host_oom_kill_with_limit_peak_and_phase() {
        let finding = judge(
            KILLED,
            &timeline(64, cgroup(0, 300_000, false), cgroup(1, 64 * MIB, false)),
            &phases(),
        );
        let HostOomFinding::HostOomKill(kill) = finding else {
            panic!("{finding:?}")
        };
        assert_eq!(
            kill.evidence,
            vec![
                HostOomEvidence::OomKillCountRose {
                    before: 0,
                    after: 1
                },
                HostOomEvidence::RssAtLimit {
                    rss_bytes: Bytes(64 * MIB),
                    limit_bytes: Bytes(64 * MIB)
                }
            ]
        );
        assert_eq!(kill.limit_bytes, Some(Bytes(64 * MIB)));
        assert_eq!(
            kill.peak,
            Some(HostPeak {
                bytes: Bytes(64 * MIB),
                figure: "cgroup_peak".into(),
                t_ms: Some(800),
                phase: Some("weights loading".into())
            })
        );
        assert_eq!(kill.phase_at_kill.as_deref(), Some("weights loading"));
        assert_eq!(
            kill.advice,
            vec![
                HostAdvice::RaiseMemoryLimit {
                    limit_bytes: Bytes(64 * MIB),
                    peak_bytes: Some(Bytes(64 * MIB))
                },
                HostAdvice::LowMemoryLoading,
                HostAdvice::SmallerHostBuffers,
                HostAdvice::FewerWorkers { processes: 3 },
                HostAdvice::Swap
            ]
        );
    }

    #[test]
    fn exit_code_137_counts_as_sigkill() {
        let end = ChildEnd {
            code: Some(137),
            signal: None,
        };
        let finding = judge(
            end,
            &timeline(16, cgroup(2, MIB, false), cgroup(3, 64 * MIB, false)),
            &[],
        );
        assert!(matches!(finding, HostOomFinding::HostOomKill(ref kill)
            if kill.evidence == vec![HostOomEvidence::OomKillCountRose { before: 2, after: 3 }]
                && kill.phase_at_kill.is_none()));
    }

    #[test]
    fn sigkill_without_evidence_stays_cause_not_shown() {
        let finding = judge(
            KILLED,
            &timeline(16, cgroup(0, MIB, false), cgroup(0, 17 * MIB, false)),
            &phases(),
        );
        assert_eq!(
            finding,
            HostOomFinding::KilledBySignal {
                signal: 9,
                not_shown_because: vec![
                    "the cgroup's OOM-kill count did not change (0)".into(),
                    "the sampled RSS peak (16.00 MiB) stayed below the cgroup limit (64.00 MiB)"
                        .into()
                ]
            }
        );
    }

    #[test]
    fn no_cgroup_means_no_guess() {
        let mut bare = timeline(120, cgroup(0, 0, false), cgroup(0, 0, false));
        bare.cgroup_before = None;
        bare.cgroup_after = None;
        let HostOomFinding::KilledBySignal {
            not_shown_because, ..
        } = judge(KILLED, &bare, &[])
        else {
            panic!("guessed")
        };
        assert_eq!(not_shown_because.len(), 2);
        assert!(not_shown_because[1].contains("dmesg"));
    }

    #[test]
    fn rss_at_limit_alone_is_evidence_and_other_ends_are_not_kills() {
        let finding = judge(
            KILLED,
            &timeline(64, cgroup(0, MIB, false), cgroup(0, 64 * MIB, true)),
            &[],
        );
        let HostOomFinding::HostOomKill(kill) = finding else {
            panic!("{finding:?}")
        };
        assert_eq!(kill.evidence.len(), 2);
        assert_eq!(kill.evidence[1], HostOomEvidence::UnderOom);
        let t = timeline(64, cgroup(0, MIB, false), cgroup(1, 64 * MIB, false));
        for end in [
            ChildEnd {
                code: Some(1),
                signal: None,
            },
            ChildEnd {
                code: None,
                signal: Some(15),
            },
            ChildEnd {
                code: Some(0),
                signal: None,
            },
        ] {
            assert_eq!(judge(end, &t, &[]), HostOomFinding::NotKilled, "{end:?}");
        }
    }

    #[test]
    fn peaks_per_phase_keep_the_highest_reading_of_each() {
        let t = timeline(64, cgroup(0, MIB, false), cgroup(0, MIB, false));
        let peaks = rss_peaks_by_phase(&t, &phases());
        let summary: Vec<(&str, u64, u64)> = peaks
            .iter()
            .map(|(name, sample)| {
                (
                    name.as_str(),
                    sample.t_ms,
                    sample.tree_rss_bytes.get() / MIB,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![("process start", 200, 16), ("weights loading", 800, 64)]
        );
        assert!(rss_peaks_by_phase(&t, &[]).is_empty());
    }
}
