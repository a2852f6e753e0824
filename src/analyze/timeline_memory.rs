//! Memory timeline of a launch: compact the sampler's readings and attribute each peak to the
//! phase the log was in at that moment (R8).
//!
//! Pure: readings arrive as `(t_ms, used_bytes)` pairs from `source::sampler`, log lines as
//! `(line, t_ms)` pairs from `record` (the recorder of `oomdoc run`); nothing here reads a clock or a GPU.

use std::collections::BTreeMap;

use crate::model::run::PhaseSpan;
use crate::model::Bytes;

/// Keeps a timeline small: within each window only the minimum, the maximum and the last
/// reading, and only when they differ from the point kept before. A spike shorter than a window
/// survives as its maximum, with the time it was first seen; the exact peak is tracked apart.
#[derive(Debug, Clone)]
pub struct SampleCompactor {
    window_ms: u64,
    max_points: usize,
    window_start: Option<u64>,
    window: Option<Window>,
    points: Vec<[u64; 2]>,
    last_kept: Option<u64>,
    count: u64,
    peak: Option<(u64, u64)>,
}

#[derive(Debug, Clone, Copy)]
struct Window {
    min: (u64, u64),
    max: (u64, u64),
    last: (u64, u64),
}

impl SampleCompactor {
    /// A compactor with windows of `window_ms` (at least 1) and no cap on kept points.
    pub fn new(window_ms: u64) -> Self {
        SampleCompactor::with_cap(window_ms, usize::MAX)
    }

    /// A compactor that doubles its window (and re-compacts what it kept) whenever more than
    /// `max_points` points are kept, so a day-long run stays a few hundred KiB. Extremes
    /// survive every doubling; only their neighbours go.
    pub fn with_cap(window_ms: u64, max_points: usize) -> Self {
        SampleCompactor {
            window_ms: window_ms.max(1),
            max_points: max_points.max(16),
            window_start: None,
            window: None,
            points: Vec::new(),
            last_kept: None,
            count: 0,
            peak: None,
        }
    }

    /// Adds one reading. Times must not go backwards (a reading earlier than the current window
    /// is counted in it).
    pub fn push(&mut self, t_ms: u64, used: u64) {
        self.count += 1;
        if self.peak.is_none_or(|(_, peak)| used > peak) {
            self.peak = Some((t_ms, used));
        }
        let start = t_ms - t_ms % self.window_ms;
        if self.window_start.is_some_and(|current| start > current) {
            self.flush();
        }
        if self.window_start.is_none() {
            self.window_start = Some(start);
        }
        let reading = (t_ms, used);
        self.window = Some(match self.window {
            None => Window {
                min: reading,
                max: reading,
                last: reading,
            },
            Some(mut window) => {
                if used < window.min.1 {
                    window.min = reading;
                }
                if used > window.max.1 {
                    window.max = reading;
                }
                window.last = reading;
                window
            }
        });
    }

    fn flush(&mut self) {
        if let Some(window) = self.window.take() {
            let kept = window_points(window, self.last_kept);
            if let Some(last) = kept.last() {
                self.last_kept = Some(last[1]);
            }
            self.points.extend(kept);
        }
        self.window_start = None;
        while self.points.len() > self.max_points {
            self.coarsen();
        }
    }

    /// Doubles the window and compacts the kept points again with it.
    fn coarsen(&mut self) {
        let window_ms = self.window_ms.saturating_mul(2);
        let mut coarse = SampleCompactor::new(window_ms);
        for point in &self.points {
            coarse.push(point[0], point[1]);
        }
        coarse.flush();
        self.points = coarse.points;
        self.last_kept = coarse.last_kept;
        self.window_ms = window_ms;
    }

    /// The kept points so far, the open window included, `[t_ms, used_bytes]` in time order.
    pub fn points(&self) -> Vec<[u64; 2]> {
        let mut points = self.points.clone();
        if let Some(window) = self.window {
            points.extend(window_points(window, self.last_kept));
        }
        points
    }

    /// Readings taken.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The highest reading and when it was first seen.
    pub fn peak(&self) -> Option<(u64, u64)> {
        self.peak
    }

    /// The window width.
    pub fn window_ms(&self) -> u64 {
        self.window_ms
    }
}

fn window_points(window: Window, last_kept: Option<u64>) -> Vec<[u64; 2]> {
    let mut candidates = [window.min, window.max, window.last];
    candidates.sort_by_key(|(t, _)| *t);
    let mut kept: Vec<[u64; 2]> = Vec::with_capacity(3);
    let mut previous = last_kept;
    for (t, used) in candidates {
        if kept.last().is_some_and(|point| point[0] == t) {
            continue;
        }
        if previous != Some(used) {
            kept.push([t, used]);
            previous = Some(used);
        }
    }
    kept
}

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
    /// Phase name (explain's vocabulary).
    pub phase: String,
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
                    phase: mark.phase.clone(),
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
                            phase: mark.phase.clone(),
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
pub fn phase_at(spans: &[PhaseSpan], t_ms: u64) -> Option<&str> {
    spans
        .iter()
        .filter(|span| span.start_t_ms <= t_ms && span.end_t_ms.is_none_or(|end| t_ms < end))
        .max_by_key(|span| span.start_t_ms)
        .map(|span| span.phase.as_str())
}

/// A device's peak and its phase, and the highest reading inside each phase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeakAttribution {
    /// The phase at the exact peak.
    pub peak_phase: Option<String>,
    /// Highest kept point inside each phase (phase name → bytes).
    pub peaks_by_phase: BTreeMap<String, Bytes>,
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
    let mut peaks_by_phase: BTreeMap<String, Bytes> = BTreeMap::new();
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
            let entry = peaks_by_phase
                .entry(span.phase.clone())
                .or_insert(Bytes(highest));
            if highest > entry.0 {
                *entry = Bytes(highest);
            }
        }
    }
    PeakAttribution {
        peak_phase: peak.and_then(|(t_ms, _)| phase_at(spans, t_ms).map(str::to_owned)),
        peaks_by_phase,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn mark(line: u64, phase: &str, boundary: Boundary) -> PhaseMark {
        PhaseMark {
            line,
            phase: phase.to_owned(),
            boundary,
        }
    }

    #[test]
    fn compactor_keeps_changes_and_a_short_spike() {
        let mut compactor = SampleCompactor::new(100);
        // 1 kHz for 1 s: flat at 1 GiB, a step to 3 GiB at 300 ms, a 10 ms spike to 5 GiB at 612 ms.
        for t in 0..1000u64 {
            let used = if (612..622).contains(&t) {
                5 * GIB
            } else if t >= 300 {
                3 * GIB
            } else {
                GIB
            };
            compactor.push(t, used);
        }
        assert_eq!(compactor.count(), 1000);
        assert_eq!(compactor.peak(), Some((612, 5 * GIB)));
        assert_eq!(
            compactor.points(),
            vec![[0, GIB], [300, 3 * GIB], [612, 5 * GIB], [699, 3 * GIB]]
        );
    }

    #[test]
    fn compactor_cap_doubles_the_window_and_keeps_the_peak() {
        let mut compactor = SampleCompactor::with_cap(10, 64);
        // A saw-tooth that changes every reading, with one spike at 7777 ms.
        for t in 0..20_000u64 {
            let used = if t == 7777 { 1000 } else { t % 7 };
            compactor.push(t, used);
        }
        let points = compactor.points();
        assert!(points.len() <= 64 + 3, "{}", points.len());
        assert!(compactor.window_ms() > 10);
        assert!(points.contains(&[7777, 1000]));
        assert_eq!(compactor.peak(), Some((7777, 1000)));
        assert!(points.windows(2).all(|pair| pair[0][0] < pair[1][0]));
    }

    #[test]
    fn compactor_open_window_is_visible() {
        let mut compactor = SampleCompactor::new(100);
        compactor.push(5, 10);
        compactor.push(6, 30);
        assert_eq!(compactor.points(), vec![[5, 10], [6, 30]]);
        compactor.push(150, 30);
        assert_eq!(compactor.points(), vec![[5, 10], [6, 30]]);
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
        assert_eq!(phase_at(&spans, 1000), Some("weights_load"));
        assert_eq!(phase_at(&spans, 5150), Some("format_conversion"));
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
        assert_eq!(phase_at(&spans, 10_000), Some("cuda_graph_capture"));
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
        assert_eq!(attribution.peak_phase.as_deref(), Some("format_conversion"));
        assert_eq!(
            attribution.peaks_by_phase.get("format_conversion"),
            Some(&Bytes(30 * GIB + GIB / 2))
        );
        assert!(attribution.peaks_by_phase["weights_load"].0 <= 20 * GIB + GIB / 2);
        assert_eq!(
            attribution.peaks_by_phase.get("profiling"),
            Some(&Bytes(20 * GIB + GIB / 2))
        );
    }

    #[test]
    fn no_phases_no_attribution() {
        let attribution = attribute(&[[0, 5]], Some((0, 5)), &[]);
        assert_eq!(attribution, PeakAttribution::default());
    }
}
