//! Host memory beside the GPU for `oomdoc run`: a [`HostSampler`] on the child's process tree
//! and the cgroup oomdoc and its child share, started before the child (the cgroup's OOM-kill
//! count before), stopped after it (the count after), and the record's `host` section with
//! the peaks by phase and the host out-of-memory verdict (`analyze::host_oom`).

use std::path::PathBuf;
use std::time::Duration;

use crate::analyze::host_oom::{self, PhaseStart};
use crate::model::host::{ChildEnd, HostOomFinding, HostTimeline};
use crate::model::run::{HostPeakRecord, HostRecord, PhaseSpan};
use crate::source::host_memory::{
    HostError, HostMemorySource, HostSampler, ProcHost, ReplayHost, DEFAULT_INTERVAL,
};
use crate::source::process::RunClock;

/// How `oomdoc run` samples host memory.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// Whether to sample at all (`--no-host-memory` turns it off).
    pub enabled: bool,
    /// Time between two readings.
    pub interval: Duration,
    /// A recorded host timeline (or `run.json`) to play instead of `/proc`.
    pub replay: Option<PathBuf>,
}

impl Default for HostOptions {
    /// On, at 10 Hz, from `/proc`.
    fn default() -> Self {
        HostOptions {
            enabled: true,
            interval: DEFAULT_INTERVAL,
            replay: None,
        }
    }
}

/// A running host sampler and where its readings come from.
pub(crate) struct HostRecorder {
    sampler: HostSampler,
    source: &'static str,
}

impl HostRecorder {
    /// Starts sampling before the child exists (oomdoc's own cgroup is the child's). `Ok(None)`
    /// when sampling is off; an unreadable replay file is an error (a usage error: the run
    /// has not started).
    pub(crate) fn start(options: &HostOptions, clock: RunClock) -> Result<Option<Self>, HostError> {
        if !options.enabled {
            return Ok(None);
        }
        let (source, name): (Box<dyn HostMemorySource>, &'static str) = match options
            .replay
            .as_deref()
            .filter(|p| !p.as_os_str().is_empty())
        {
            Some(path) => (Box::new(ReplayHost::open(path)?), "replay"),
            None => (Box::new(ProcHost::default()), "proc"),
        };
        let sampler = HostSampler::start(source, clock, options.interval, std::process::id());
        Ok(Some(HostRecorder {
            sampler,
            source: name,
        }))
    }

    /// Names the child: its tree is sampled from now on.
    pub(crate) fn set_child(&self, pid: u32) {
        self.sampler.set_root(pid);
    }

    /// The section as it stands while the child runs (no verdict yet).
    pub(crate) fn snapshot(&self, phases: &[PhaseSpan]) -> HostRecord {
        host_record(self.source, self.sampler.snapshot(), phases, None)
    }

    /// Stops sampling (reading the cgroup once more) and judges the child's end.
    pub(crate) fn finish(
        self,
        phases: &[PhaseSpan],
        end: ChildEnd,
        interrupted: bool,
    ) -> HostRecord {
        let timeline = self.sampler.stop();
        let mut finding = host_oom::judge(end, &timeline, &phase_starts(phases));
        if interrupted {
            if let HostOomFinding::KilledBySignal {
                not_shown_because, ..
            } = &mut finding
            {
                not_shown_because.push(
                    "oomdoc was interrupted and passed the signals on (a third interrupt sends SIGKILL itself)"
                        .to_owned(),
                );
            }
        }
        host_record(self.source, timeline, phases, Some(finding))
    }
}

fn phase_starts(phases: &[PhaseSpan]) -> Vec<PhaseStart> {
    phases
        .iter()
        .map(|span| PhaseStart {
            name: span.phase.as_str().to_owned(),
            start_ms: span.start_t_ms,
        })
        .collect()
}

/// The record's `host` section from a timeline, the run's phases and the verdict.
pub(crate) fn host_record(
    source: &str,
    timeline: HostTimeline,
    phases: &[PhaseSpan],
    finding: Option<HostOomFinding>,
) -> HostRecord {
    let starts = phase_starts(phases);
    let phase_of = |t_ms: u64| {
        starts
            .iter()
            .filter(|phase| phase.start_ms <= t_ms)
            .max_by_key(|phase| phase.start_ms)
            .map(|phase| phase.name.clone())
    };
    let before = timeline.cgroup_before.as_ref();
    let after = timeline.cgroup_after.as_ref();
    HostRecord {
        source: source.to_owned(),
        limit_bytes: after
            .and_then(|memory| memory.limit_bytes)
            .or_else(|| before.and_then(|memory| memory.limit_bytes)),
        oom_kills_before: before.and_then(|memory| memory.oom_kill_count),
        oom_kills_after: after.and_then(|memory| memory.oom_kill_count),
        peak: timeline.peak_rss().map(|reading| HostPeakRecord {
            phase: phase_of(reading.t_ms),
            reading,
        }),
        peaks_by_phase: host_oom::rss_peaks_by_phase(&timeline, &starts)
            .into_iter()
            .map(|(phase, reading)| HostPeakRecord {
                phase: Some(phase),
                reading,
            })
            .collect(),
        finding,
        timeline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::explain::Phase;
    use crate::model::host::{CgroupMemory, HostSample};
    use crate::model::Bytes;

    const MIB: u64 = 1 << 20;

    fn span(phase: &str, start_t_ms: u64) -> PhaseSpan {
        PhaseSpan {
            phase: Phase::from_name(phase),
            start_t_ms,
            ..PhaseSpan::default()
        }
    }

    #[test]
    fn the_section_has_the_limit_counts_and_peaks_by_phase() {
        let cgroup = |oom_kills: u64| CgroupMemory {
            limit_bytes: Some(Bytes(512 * MIB)),
            oom_kill_count: Some(oom_kills),
            ..CgroupMemory::default()
        };
        let mut timeline = HostTimeline {
            cgroup_before: Some(cgroup(2)),
            cgroup_after: Some(cgroup(3)),
            ..HostTimeline::default()
        };
        for (t_ms, rss) in [
            (0, 5),
            (100, 9),
            (200, 300),
            (300, 250),
            (400, 500),
            (500, 20),
        ] {
            timeline.push_bounded(
                HostSample {
                    t_ms,
                    tree_rss_bytes: Bytes(rss * MIB),
                    processes: 2,
                    cgroup_current_bytes: None,
                },
                2048,
            );
        }
        let phases = [
            span("startup", 50),
            span("weights_load", 150),
            span("inference", 450),
        ];
        let record = host_record("proc", timeline, &phases, None);
        assert_eq!(record.limit_bytes, Some(Bytes(512 * MIB)));
        assert_eq!(
            (record.oom_kills_before, record.oom_kills_after),
            (Some(2), Some(3))
        );
        let peak = record.peak.clone().unwrap();
        assert_eq!(
            (peak.phase.as_deref(), peak.reading.t_ms),
            (Some("weights_load"), 400)
        );
        let by_phase: Vec<(String, u64)> = record
            .peaks_by_phase
            .iter()
            .map(|peak| {
                (
                    peak.phase.clone().unwrap_or_default(),
                    peak.reading.tree_rss_bytes.get() / MIB,
                )
            })
            .collect();
        // The reading before the first phase counts under it.
        assert_eq!(
            by_phase,
            [
                ("startup".to_owned(), 9),
                ("weights_load".to_owned(), 500),
                ("inference".to_owned(), 20)
            ]
        );
        let text = serde_json::to_string(&record).unwrap();
        let back: HostRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, record, "the section reads back as written");
    }
}
