//! A device's memory timeline kept small while it is sampled: within each window only the
//! minimum, the maximum and the last reading (the sampler in `source` fills it; the recorder
//! writes its points into `run.json`).

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

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

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
}
