//! The report as an ordered list of typed sections: which sections a run's report has and in
//! what order is decided here, once; the text, Markdown and HTML writers of
//! `render::run_report` walk the same list and only lay each section out.

use super::*;
use crate::model::run::{DeviceTimeline, HostRecord};

/// One part of the whole report, in the order written.
#[derive(Debug, Clone, PartialEq)]
pub enum ReportPart<'a> {
    /// One run (numbered from 1, in the order given) and its sections.
    Run {
        /// 1-based number of the run.
        number: usize,
        /// The run.
        run: &'a RunReport,
        /// Its sections, in order.
        sections: Vec<RunSection<'a>>,
    },
    /// With exactly two runs: the first compared with the second.
    Comparison(&'a Comparison),
}

/// One section of a run's report (or a block inside the memory section), holding the typed
/// facts it shows.
#[derive(Debug, Clone, PartialEq)]
pub enum RunSection<'a> {
    /// How the run ended, its command line, directory and times (under the run's heading).
    Outcome(&'a RunReport),
    /// The cause, its evidence and the next steps.
    Verdict(&'a RunVerdict),
    /// What the owner should do.
    OwnerSummary(&'a OwnerSummary),
    /// Whether the configuration was shown to serve.
    Readiness {
        /// The readiness facts.
        readiness: &'a Readiness,
        /// What remains unverified (empty for a run that failed: nothing was verified).
        unverified: &'a [String],
    },
    /// The model, its checkpoint and the engine.
    Model {
        /// The model.
        model: &'a ModelFacts,
        /// The engine, when known.
        engine: Option<&'a Fact>,
    },
    /// The GPUs before start.
    Gpus(&'a [GpuAtStart]),
    /// A list of facts with their sources: versions, or the concurrency of a serving run.
    Facts {
        /// Which list.
        kind: FactList,
        /// The facts (the section says so when there are none).
        facts: &'a [Fact],
    },
    /// The failure phase and the startup timeline.
    Failure {
        /// Whether the run failed.
        failed: bool,
        /// The phase facts.
        failure: &'a FailureFacts,
        /// The timeline.
        timeline: &'a [TimelineEntry],
    },
    /// The first OOM message's figures and the other processes it names.
    OomFigures {
        /// OOM messages in the log.
        messages: usize,
        /// The figures, the message's own first.
        figures: Vec<&'a Figure>,
    },
    /// Memory over time: the summary of every device and the OOM time.
    Memory(&'a MemoryFacts),
    /// One device's memory chart (an inline picture; only formats that draw write it).
    Chart {
        /// The device's timeline.
        device: &'a DeviceTimeline,
        /// The memory section (phases, OOM time, run length).
        memory: &'a MemoryFacts,
    },
    /// One device's peaks by phase.
    PhasePeaks {
        /// The device.
        device: &'a DeviceMemory,
        /// Where the timeline came from.
        source: Option<&'a str>,
    },
    /// The processes seen on one device during the run.
    ProcessPeaks(&'a DeviceTimeline),
    /// Where the memory timeline came from and its sampling rate.
    MemorySource {
        /// `nvml`, `replay`, …
        source: &'a str,
        /// Sampling rate.
        sample_rate_hz: Option<f64>,
    },
    /// Host memory: the tree RSS peak, the cgroup and the verdict on the end.
    Host(&'a HostRecord),
    /// The checkpoint's lower bound next to what was measured.
    FitVsMeasured {
        /// The figures that are known.
        figures: Vec<&'a Figure>,
        /// What the comparison says.
        note: &'a str,
    },
    /// The minimal reproducing request (a serving run) or how to reproduce the step (training).
    Reproduction {
        /// A training run.
        training: bool,
        /// The reproduction.
        reproduction: &'a Reproduction,
    },
    /// What the probe showed.
    Probe(&'a ProbeSummary),
    /// The relevant environment (redacted).
    Environment(&'a BTreeMap<String, String>),
    /// The log lines before the failure.
    LogContext(&'a [String]),
    /// What could not be measured or read.
    Limitations(&'a [String]),
}

/// Which list of facts a [`RunSection::Facts`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactList {
    /// Driver, CUDA, torch, engine versions.
    Versions,
    /// What bounds concurrent requests (serving runs only).
    Concurrency,
}

impl Report {
    /// The report's parts in the order every format writes them: the runs, then the
    /// comparison.
    pub fn parts(&self) -> Vec<ReportPart<'_>> {
        let mut parts: Vec<ReportPart<'_>> = self
            .runs
            .iter()
            .enumerate()
            .map(|(index, run)| ReportPart::Run {
                number: index + 1,
                run,
                sections: run.sections(),
            })
            .collect();
        parts.extend(self.comparison.as_ref().map(ReportPart::Comparison));
        parts
    }
}

impl RunReport {
    /// The sections of this run's report, in order; a section with nothing to show is left
    /// out here (where "nothing" is itself worth saying, the section stays and says it).
    pub fn sections(&self) -> Vec<RunSection<'_>> {
        let mut sections = vec![
            RunSection::Outcome(self),
            RunSection::Verdict(&self.verdict),
            RunSection::OwnerSummary(&self.owner_summary),
            RunSection::Readiness {
                readiness: &self.readiness,
                unverified: if self.status.failed {
                    &[]
                } else {
                    &self.readiness.unverified
                },
            },
            RunSection::Model {
                model: &self.model,
                engine: self.engine.as_ref(),
            },
            RunSection::Gpus(&self.gpus),
            RunSection::Facts {
                kind: FactList::Versions,
                facts: &self.versions,
            },
            RunSection::Failure {
                failed: self.status.failed,
                failure: &self.failure,
                timeline: &self.timeline,
            },
        ];
        if !self.oom.is_empty() {
            sections.push(RunSection::OomFigures {
                messages: self.oom_count,
                figures: self.oom.iter().chain(&self.oom_other_processes).collect(),
            });
        }
        sections.push(RunSection::Memory(&self.memory));
        for device in &self.memory.devices {
            if !device.timeline.samples.is_empty() {
                sections.push(RunSection::Chart {
                    device: &device.timeline,
                    memory: &self.memory,
                });
            }
            if !device.peaks_by_phase.is_empty() {
                sections.push(RunSection::PhasePeaks {
                    device,
                    source: self.memory.source.as_deref(),
                });
            }
            if !device.timeline.processes.is_empty() {
                sections.push(RunSection::ProcessPeaks(&device.timeline));
            }
        }
        if let Some(source) = &self.memory.source {
            sections.push(RunSection::MemorySource {
                source,
                sample_rate_hz: self.memory.sample_rate_hz,
            });
        }
        sections.extend(self.host.as_ref().map(RunSection::Host));
        sections.push(RunSection::FitVsMeasured {
            figures: [
                &self.fit.lower_bound,
                &self.fit.weights_loaded,
                &self.fit.measured_peak,
                &self.fit.capacity,
            ]
            .into_iter()
            .flatten()
            .collect(),
            note: &self.fit.note,
        });
        sections.push(RunSection::Reproduction {
            training: self.training,
            reproduction: &self.reproduction,
        });
        // A training run serves no request: the serving-only sections are left out.
        if !self.training {
            sections.push(RunSection::Facts {
                kind: FactList::Concurrency,
                facts: &self.concurrency,
            });
            sections.extend(self.probe.as_ref().map(RunSection::Probe));
        }
        if !self.environment.is_empty() {
            sections.push(RunSection::Environment(&self.environment));
        }
        if !self.log_context.is_empty() {
            sections.push(RunSection::LogContext(&self.log_context));
        }
        sections.push(RunSection::Limitations(&self.limitations));
        sections
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(run: &RunReport) -> Vec<&'static str> {
        run.sections()
            .iter()
            .map(|section| match section {
                RunSection::Facts {
                    kind: FactList::Concurrency,
                    ..
                } => "concurrency",
                RunSection::Probe(_) => "probe",
                RunSection::OomFigures { .. } => "oom",
                RunSection::Chart { .. } => "chart",
                RunSection::Host(_) => "host",
                RunSection::Limitations(_) => "limitations",
                _ => "",
            })
            .filter(|name| !name.is_empty())
            .collect()
    }

    #[test]
    fn a_training_run_has_no_serving_sections_and_empty_parts_are_left_out() {
        let probe = ProbeSummary::default();
        let mut run = RunReport {
            probe: Some(probe),
            ..RunReport::default()
        };
        assert_eq!(names(&run), ["concurrency", "probe", "limitations"]);
        run.training = true;
        assert_eq!(names(&run), ["limitations"]);
        run.oom.push(Figure::default());
        run.memory.devices.push(DeviceMemory {
            timeline: DeviceTimeline {
                samples: vec![[0, 1]],
                ..DeviceTimeline::default()
            },
            peaks_by_phase: Vec::new(),
        });
        assert_eq!(names(&run), ["oom", "chart", "limitations"]);
    }

    #[test]
    fn the_comparison_comes_after_the_runs() {
        let report = Report {
            runs: vec![RunReport::default(), RunReport::default()],
            comparison: Some(Comparison::default()),
        };
        let parts = report.parts();
        assert!(matches!(parts[0], ReportPart::Run { number: 1, .. }));
        assert!(matches!(parts[1], ReportPart::Run { number: 2, .. }));
        assert!(matches!(parts[2], ReportPart::Comparison(_)));
    }
}
