//! Memory timeline of a launch: attribute each peak of the sampler's readings (compacted by
//! `model::timeline::SampleCompactor`) to the phase the log was in at that moment.
//!
//! Pure: readings arrive as `(t_ms, used_bytes)` pairs from `source::sampler`, log lines as
//! `(line, t_ms)` pairs from `record` (the recorder of `oomdoc run`); nothing here reads a clock or a GPU.

use std::collections::BTreeMap;

use crate::model::explain::Phase;
use crate::model::run::PhaseSpan;
use crate::model::Bytes;

/// When each log line arrived: a step function (line → ms since start), stored only where the
/// time changes, so a burst of a million lines in one millisecond costs one entry.
#[derive(Debug, Clone, Default)]
pub struct LineClock {
    steps: Vec<(u64, u64)>,
}

impl LineClock {
    /// An empty clock.
    pub fn new() -> Self {
        LineClock::default()
    }

    /// Line `line` (1-based, increasing) arrived at `t_ms`.
    pub fn push(&mut self, line: u64, t_ms: u64) {
        if self.steps.last().is_none_or(|(_, last)| *last != t_ms) {
            self.steps.push((line, t_ms));
        }
    }

    /// When `line` arrived; `None` before the first line.
    pub fn t_ms(&self, line: u64) -> Option<u64> {
        let after = self.steps.partition_point(|(start, _)| *start <= line);
        after.checked_sub(1).map(|index| self.steps[index].1)
    }
}

/// Whether a log line opens or closes a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boundary {
    /// The phase starts (e.g. `Starting to load model`).
    Begin,
    /// The phase completed (e.g. `Loading weights took 12.00 seconds`).
    End,
}

/// A phase boundary found in the log, by line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseMark {
    /// 1-based line in the log.
    pub line: u64,
    /// The phase.
    pub phase: Phase,
    /// Opens or closes.
    pub boundary: Boundary,
}

/// Turns boundaries into spans with times. A `Begin` closes the open span (cut short, not
/// completed); an `End` closes the open span of that phase, or makes a span from the previous
/// boundary when none was open (a completion line without a start line, e.g. only `Model loading
/// took …`). The last open span stays open (`end_t_ms: None`) unless `end_t_ms` is given.
pub fn phase_spans(
    marks: &[PhaseMark],
    clock: &LineClock,
    end_t_ms: Option<u64>,
) -> Vec<PhaseSpan> {
    let mut spans: Vec<PhaseSpan> = Vec::new();
    let mut open: Option<usize> = None;
    let mut previous_end: (u64, u64) = (0, 0);
    for mark in marks {
        let t_ms = clock.t_ms(mark.line).unwrap_or(0);
        match mark.boundary {
            Boundary::Begin => {
                if let Some(index) = open.take() {
                    if spans[index].phase == mark.phase {
                        // A repeated start line (progress bars, several shards): same span.
                        open = Some(index);
                        continue;
                    }
                    spans[index].end_t_ms = Some(t_ms);
                }
                spans.push(PhaseSpan {
                    phase: mark.phase,
                    start_t_ms: t_ms,
                    end_t_ms: None,
                    start_line: mark.line,
                    end_line: None,
                    completed: false,
                });
                open = Some(spans.len() - 1);
            }
            Boundary::End => {
                match open.take() {
                    Some(index) if spans[index].phase == mark.phase => {
                        spans[index].end_t_ms = Some(t_ms);
                        spans[index].end_line = Some(mark.line);
                        spans[index].completed = true;
                    }
                    other => {
                        if let Some(index) = other {
                            spans[index].end_t_ms = Some(t_ms);
                        }
                        spans.push(PhaseSpan {
                            phase: mark.phase,
                            start_t_ms: previous_end.1,
                            end_t_ms: Some(t_ms),
                            start_line: previous_end.0 + 1,
                            end_line: Some(mark.line),
                            completed: true,
                        });
                    }
                }
                previous_end = (mark.line, t_ms);
            }
        }
    }
    if let (Some(index), Some(end)) = (open, end_t_ms) {
        spans[index].end_t_ms = Some(end.max(spans[index].start_t_ms));
    }
    spans
}

/// The phase the log was in at `t_ms`: the latest-starting span that contains it (start
/// inclusive, end exclusive; an open span extends to the end of time).
pub fn phase_at(spans: &[PhaseSpan], t_ms: u64) -> Option<Phase> {
    spans
        .iter()
        .filter(|span| span.start_t_ms <= t_ms && span.end_t_ms.is_none_or(|end| t_ms < end))
        .max_by_key(|span| span.start_t_ms)
        .map(|span| span.phase)
}

/// A device's peak and its phase, and the highest reading inside each phase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeakAttribution {
    /// The phase at the exact peak.
    pub peak_phase: Option<Phase>,
    /// Highest kept point inside each phase (phase name → bytes).
    pub peaks_by_phase: BTreeMap<Phase, Bytes>,
}

/// Attributes the peak (`peak` = `(t_ms, used)`, exact) and the kept points to phases. The kept
/// points are a step function: inside a span the value carried in at its start counts too, so a
/// phase with flat memory still gets its level. Per-phase maxima come from the kept points, so a
/// phase shorter than a window can miss a maximum that fell just outside it in the same window.
pub fn attribute(
    points: &[[u64; 2]],
    peak: Option<(u64, u64)>,
    spans: &[PhaseSpan],
) -> PeakAttribution {
    let mut peaks_by_phase: BTreeMap<Phase, Bytes> = BTreeMap::new();
    for span in spans {
        let contains =
            |t_ms: u64| span.start_t_ms <= t_ms && span.end_t_ms.is_none_or(|end| t_ms < end);
        let first_inside = points.partition_point(|point| point[0] < span.start_t_ms);
        let carried_in = first_inside
            .checked_sub(1)
            .map(|index| points[index][1])
            .filter(|_| span.end_t_ms.is_none_or(|end| end > span.start_t_ms));
        let inside = points[first_inside..]
            .iter()
            .take_while(|point| contains(point[0]))
            .map(|point| point[1]);
        let exact = peak
            .filter(|(t_ms, _)| contains(*t_ms))
            .map(|(_, used)| used);
        let highest = carried_in.into_iter().chain(inside).chain(exact).max();
        if let Some(highest) = highest {
            let entry = peaks_by_phase.entry(span.phase).or_insert(Bytes(highest));
            if highest > entry.0 {
                *entry = Bytes(highest);
            }
        }
    }
    PeakAttribution {
        peak_phase: peak.and_then(|(t_ms, _)| phase_at(spans, t_ms)),
        peaks_by_phase,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::timeline::SampleCompactor;

    const GIB: u64 = 1 << 30;

    fn mark(line: u64, phase: &str, boundary: Boundary) -> PhaseMark {
        PhaseMark {
            line,
            phase: serde_json::from_value(serde_json::Value::from(phase)).unwrap(),
            boundary,
        }
    }

    #[test]
    fn line_clock_is_a_step_function() {
        let mut clock = LineClock::new();
        clock.push(1, 0);
        clock.push(2, 0);
        clock.push(3, 40);
        clock.push(4, 40);
        clock.push(5, 900);
        assert_eq!(clock.t_ms(1), Some(0));
        assert_eq!(clock.t_ms(2), Some(0));
        assert_eq!(clock.t_ms(4), Some(40));
        assert_eq!(clock.t_ms(5), Some(900));
        assert_eq!(clock.t_ms(99), Some(900));
        assert_eq!(clock.t_ms(0), None);
    }

    fn clock_of(times: &[(u64, u64)]) -> LineClock {
        let mut clock = LineClock::new();
        for (line, t) in times {
            clock.push(*line, *t);
        }
        clock
    }

    #[test]
    fn spans_from_begin_and_end() {
        let clock = clock_of(&[
            (1, 0),
            (10, 1000),
            (20, 5000),
            (21, 5100),
            (30, 5200),
            (40, 9000),
        ]);
        let marks = [
            mark(10, "weights_load", Boundary::Begin),
            mark(20, "weights_load", Boundary::End),
            mark(21, "format_conversion", Boundary::Begin),
            mark(30, "format_conversion", Boundary::End),
            mark(40, "profiling", Boundary::Begin),
        ];
        let spans = phase_spans(&marks, &clock, Some(9500));
        let summary: Vec<_> = spans
            .iter()
            .map(|s| (s.phase.as_str(), s.start_t_ms, s.end_t_ms, s.completed))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("weights_load", 1000, Some(5000), true),
                ("format_conversion", 5100, Some(5200), true),
                ("profiling", 9000, Some(9500), false),
            ]
        );
        assert_eq!(phase_at(&spans, 999), None);
        assert_eq!(
            phase_at(&spans, 1000).map(Phase::as_str),
            Some("weights_load")
        );
        assert_eq!(
            phase_at(&spans, 5150).map(Phase::as_str),
            Some("format_conversion")
        );
        assert_eq!(phase_at(&spans, 6000), None);
    }

    #[test]
    fn end_without_begin_and_cut_short_begin() {
        let clock = clock_of(&[(1, 0), (5, 100), (9, 700), (12, 800)]);
        let marks = [
            mark(5, "weights_load", Boundary::End),
            mark(9, "profiling", Boundary::Begin),
            mark(9, "profiling", Boundary::Begin),
            mark(12, "cuda_graph_capture", Boundary::Begin),
        ];
        let spans = phase_spans(&marks, &clock, None);
        assert_eq!(spans.len(), 3);
        assert_eq!((spans[0].start_t_ms, spans[0].end_t_ms), (0, Some(100)));
        assert_eq!((spans[1].end_t_ms, spans[1].completed), (Some(800), false));
        assert_eq!(spans[2].end_t_ms, None);
        assert_eq!(
            phase_at(&spans, 10_000).map(Phase::as_str),
            Some("cuda_graph_capture")
        );
    }

    #[test]
    fn transient_peak_is_attributed_to_conversion() {
        // Injected samples: 20 GiB after loading, a 30 ms 10 GiB transient during conversion,
        // then the steady state; the OOM attempt comes later in profiling.
        let clock = clock_of(&[
            (1, 0),
            (2, 1000),
            (3, 4000),
            (4, 4100),
            (5, 4300),
            (6, 5000),
        ]);
        let marks = [
            mark(2, "weights_load", Boundary::Begin),
            mark(3, "weights_load", Boundary::End),
            mark(4, "format_conversion", Boundary::Begin),
            mark(5, "format_conversion", Boundary::End),
            mark(6, "profiling", Boundary::Begin),
        ];
        let spans = phase_spans(&marks, &clock, Some(6000));
        let mut compactor = SampleCompactor::new(50);
        for t in 0..6000u64 {
            let used = match t {
                0..1000 => GIB / 2,
                1000..4000 => GIB / 2 + (t - 1000) * 20 * GIB / 3000,
                4150..4180 => 30 * GIB + GIB / 2,
                _ => 20 * GIB + GIB / 2,
            };
            compactor.push(t, used);
        }
        let attribution = attribute(&compactor.points(), compactor.peak(), &spans);
        assert_eq!(compactor.peak(), Some((4150, 30 * GIB + GIB / 2)));
        assert_eq!(
            attribution.peak_phase.map(Phase::as_str),
            Some("format_conversion")
        );
        assert_eq!(
            attribution.peaks_by_phase.get(&Phase::FormatConversion),
            Some(&Bytes(30 * GIB + GIB / 2))
        );
        assert!(attribution.peaks_by_phase[&Phase::WeightsLoad].0 <= 20 * GIB + GIB / 2);
        assert_eq!(
            attribution.peaks_by_phase.get(&Phase::Profiling),
            Some(&Bytes(20 * GIB + GIB / 2))
        );
    }

    #[test]
    fn no_phases_no_attribution() {
        let attribution = attribute(&[[0, 5]], Some((0, 5)), &[]);
        assert_eq!(attribution, PeakAttribution::default());
    }
}
