//! Named ranges of a snapshot's trace, from `external_annotations` (#19).
//!
//! While memory history is recorded, PyTorch (2.5 or later) adds one annotation at the start
//! and one at the end of every `record_function` range of user scope (`{name, stage: START |
//! END, device, time_us}`, `torch/csrc/cuda/memory_snapshot.cpp`): the optimizer's
//! `Optimizer.step#Adam.step`, `Optimizer.zero_grad#…`, and the user's own
//! `torch.profiler.record_function("…")` blocks. Here they become ranges (a `START` paired
//! with the next `END` of the same name, innermost first, per device) and can say which
//! ranges were open at any time. Pure.

use std::collections::HashMap;

use crate::model::snapshot::{NamedRange, Snapshot};

/// The named ranges of a snapshot, in start order (ties in recorded order). A `START`
/// without an `END` stays open (`end_us` `None`); an `END` without a `START` (the range
/// began before recording did) starts at the first annotation of its device.
pub fn ranges(snapshot: &Snapshot) -> Vec<NamedRange> {
    let mut ranges: Vec<NamedRange> = Vec::new();
    // (device) → indices of open ranges, outermost first.
    let mut open: HashMap<i64, Vec<usize>> = HashMap::new();
    let mut first: HashMap<i64, i64> = HashMap::new();
    for annotation in &snapshot.annotations {
        first.entry(annotation.device).or_insert(annotation.time_us);
        let stack = open.entry(annotation.device).or_default();
        match annotation.stage.as_str() {
            "END" => {
                if let Some(position) = stack
                    .iter()
                    .rposition(|&index| ranges[index].name == annotation.name)
                {
                    let index = stack.remove(position);
                    ranges[index].end_us = Some(annotation.time_us);
                } else {
                    let start_us = first[&annotation.device];
                    ranges.push(NamedRange {
                        device: annotation.device,
                        name: annotation.name.clone(),
                        start_us,
                        end_us: Some(annotation.time_us),
                        depth: 0,
                    });
                }
            }
            "START" => {
                ranges.push(NamedRange {
                    device: annotation.device,
                    name: annotation.name.clone(),
                    start_us: annotation.time_us,
                    end_us: None,
                    depth: stack.len() as u32,
                });
                stack.push(ranges.len() - 1);
            }
            _ => ranges.push(NamedRange {
                device: annotation.device,
                name: annotation.name.clone(),
                start_us: annotation.time_us,
                end_us: Some(annotation.time_us),
                depth: stack.len() as u32,
            }),
        }
    }
    ranges.sort_by_key(|range| (range.device, range.start_us));
    ranges
}

/// The ranges of `device` open at `time_us` (start ≤ time, and time before the end or no
/// end), outermost first, as `name`s.
pub fn open_at(ranges: &[NamedRange], device: i64, time_us: i64) -> Vec<String> {
    let mut open: Vec<&NamedRange> = ranges
        .iter()
        .filter(|range| {
            range.device == device
                && range.start_us <= time_us
                && range.end_us.is_none_or(|end| time_us < end)
        })
        .collect();
    open.sort_by_key(|range| (range.start_us, range.depth));
    open.into_iter().map(|range| range.name.clone()).collect()
}

/// The group key of the ranges open at some time: their names, outermost first, joined by
/// ` > `; `(no named range)` when none.
pub fn key(open: &[String]) -> String {
    if open.is_empty() {
        "(no named range)".to_string()
    } else {
        open.join(" > ")
    }
}

/// Answers [`open_at`] for many times in increasing order, in one sweep.
pub struct Sweep<'r> {
    /// This device's ranges, by start.
    ranges: Vec<&'r NamedRange>,
    next: usize,
    /// Ranges started so far and not yet ended (at the last time asked).
    started: Vec<&'r NamedRange>,
    last: i64,
}

impl<'r> Sweep<'r> {
    /// A sweep over `device`'s ranges.
    pub fn new(ranges: &'r [NamedRange], device: i64) -> Self {
        let mut ranges: Vec<&NamedRange> = ranges.iter().filter(|r| r.device == device).collect();
        ranges.sort_by_key(|range| (range.start_us, range.depth));
        Sweep {
            ranges,
            next: 0,
            started: Vec::new(),
            last: i64::MIN,
        }
    }

    /// The ranges open at `time_us`, outermost first; times must not decrease (an earlier
    /// time is answered by a slow scan).
    pub fn open_at(&mut self, time_us: i64) -> Vec<String> {
        if time_us < self.last {
            let owned: Vec<NamedRange> = self.ranges.iter().map(|r| (*r).clone()).collect();
            return open_at(&owned, self.ranges.first().map_or(0, |r| r.device), time_us);
        }
        self.last = time_us;
        while let Some(range) = self.ranges.get(self.next) {
            if range.start_us > time_us {
                break;
            }
            self.started.push(range);
            self.next += 1;
        }
        self.started
            .retain(|range| range.end_us.is_none_or(|end| time_us < end));
        self.started
            .iter()
            .map(|range| range.name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snapshot::Annotation;

    fn annotation(name: &str, stage: &str, time_us: i64) -> Annotation {
        Annotation {
            device: 0,
            time_us,
            name: name.to_string(),
            stage: stage.to_string(),
        }
    }

    #[test]
    fn starts_and_ends_pair_by_name_and_nest() {
        let snapshot = Snapshot {
            annotations: vec![
                annotation("step", "END", 5),
                annotation("train", "START", 10),
                annotation("forward", "START", 11),
                annotation("forward", "END", 20),
                annotation("Optimizer.step#Adam.step", "START", 30),
                annotation("Optimizer.step#Adam.step", "END", 40),
                annotation("train", "END", 50),
                annotation("eval", "START", 60),
            ],
            ..Snapshot::default()
        };
        let ranges = ranges(&snapshot);
        let names: Vec<(&str, i64, Option<i64>, u32)> = ranges
            .iter()
            .map(|r| (r.name.as_str(), r.start_us, r.end_us, r.depth))
            .collect();
        assert_eq!(
            names,
            [
                ("step", 5, Some(5), 0),
                ("train", 10, Some(50), 0),
                ("forward", 11, Some(20), 1),
                ("Optimizer.step#Adam.step", 30, Some(40), 1),
                ("eval", 60, None, 0),
            ]
        );
        assert_eq!(open_at(&ranges, 0, 15), ["train", "forward"]);
        assert_eq!(open_at(&ranges, 0, 20), ["train"]);
        assert_eq!(open_at(&ranges, 0, 1000), ["eval"]);
        assert!(open_at(&ranges, 1, 15).is_empty());
        let mut sweep = Sweep::new(&ranges, 0);
        for time in [0, 11, 15, 20, 35, 45, 55, 70] {
            assert_eq!(sweep.open_at(time), open_at(&ranges, 0, time), "{time}");
        }
        assert_eq!(sweep.open_at(12), open_at(&ranges, 0, 12));
        assert_eq!(
            key(&open_at(&ranges, 0, 35)),
            "train > Optimizer.step#Adam.step"
        );
        assert_eq!(key(&[]), "(no named range)");
    }
}
