//! Allocated memory over a snapshot's trace, stacked by allocation site and by category,
//! downsampled to a bounded number of points (#19: the HTML timeline, like memory_viz's
//! "Active Memory Timeline", that still opens quickly for a 1 GB snapshot).
//!
//! The trace is replayed forwards. Memory allocated before the trace window (the trace is a
//! ring buffer) is one group of its own, sized so that the end of the replay matches the
//! snapshot's allocated bytes. Each window of `entries / max_points` entries keeps one point:
//! the moment of its highest total, so no peak is lost to the downsampling. The groups are
//! the ones reaching the highest bytes; the rest are summed as `everything else`.

use crate::analyze::fragmentation::{AddressMap, Sites};
use crate::analyze::snapshot_diff::{self, Category};
use crate::model::snapshot::{
    Action, MemoryTimeline, Snapshot, TimelineGroup, TimelinePoint, Trace,
};
use crate::model::Bytes;

/// Points kept per timeline by default: about one per pixel column of the page.
pub const DEFAULT_POINTS: usize = 800;
/// Groups drawn by name; the others are summed as `everything else`.
pub const MAX_GROUPS: usize = 12;

const NOT_FREED: u32 = u32::MAX;

/// The timelines of one trace: by site, then by category. `allocated_at_end` is the
/// device's allocated bytes at snapshot time (what the replay must end at). Empty when the
/// trace is.
pub fn timelines(
    snapshot: &Snapshot,
    trace: &Trace,
    allocated_at_end: u64,
    max_points: usize,
) -> Vec<MemoryTimeline> {
    if trace.is_empty() {
        return Vec::new();
    }
    let lives = Lives::of(trace, allocated_at_end);

    // Sites.
    let mut sites = Sites::new(snapshot);
    let mut site_names: AddressMap<usize> = AddressMap::default();
    let mut site_groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut by_site = vec![0u32; trace.len()];
    for (index, entry) in trace.iter().enumerate() {
        if entry.action_code() != Action::Alloc.code() {
            continue;
        }
        let id = sites.id(entry.stack);
        let group = *site_names.entry(u64::from(id)).or_insert_with(|| {
            site_groups.push(sites.of(entry.stack));
            site_groups.len() - 1
        });
        by_site[index] = group as u32;
    }
    let site_timeline = build("site", trace, &lives, &by_site, site_groups, max_points);

    // Categories, a backward's blocks split by lifetime as `snapshot diff` does.
    let ends = backward_ends(snapshot, trace);
    let mut by_stack: AddressMap<Category> = AddressMap::default();
    let order = [
        Category::Parameters,
        Category::OptimizerState,
        Category::Gradients,
        Category::Activations,
        Category::AutogradTemporaries,
        Category::CudaGraphPool,
        Category::Other,
    ];
    let mut by_category = vec![0u32; trace.len()];
    for (index, entry) in trace.iter().enumerate() {
        if entry.action_code() != Action::Alloc.code() {
            continue;
        }
        let mut category = *by_stack
            .entry(u64::from(entry.stack))
            .or_insert_with(|| snapshot_diff::category(&snapshot.stack_frames(entry.stack)));
        if category == Category::Gradients {
            let free = lives.free_of[index];
            let end = ends.get(index + 1).copied().unwrap_or(NOT_FREED);
            if free != NOT_FREED && free < end {
                category = Category::AutogradTemporaries;
            }
        }
        by_category[index] = order.iter().position(|c| *c == category).unwrap_or(0) as u32;
    }
    let rules = snapshot_diff::rules();
    let category_groups = order
        .iter()
        .map(|category| {
            let rule = rules
                .iter()
                .find(|rule| rule.category == category.as_str())
                .map(|rule| vec![rule.rule.clone()])
                .unwrap_or_default();
            (category.as_str().to_string(), rule)
        })
        .collect();
    let category_timeline = build(
        "category",
        trace,
        &lives,
        &by_category,
        category_groups,
        max_points,
    );
    vec![site_timeline, category_timeline]
}

/// What the forward replay learns before drawing: which allocation each free ends, and
/// the bytes held from before the window.
struct Lives {
    /// For an `alloc` entry, the index of its `free_requested` (`NOT_FREED` if none).
    free_of: Vec<u32>,
    /// For a `free_requested` entry, the index of its `alloc` (`NOT_FREED` if it was
    /// allocated before the window, or for any other entry).
    alloc_of: Vec<u32>,
    /// Bytes allocated before the window and still allocated at its start.
    before_window: u64,
}

impl Lives {
    fn of(trace: &Trace, allocated_at_end: u64) -> Lives {
        let mut free_of = vec![NOT_FREED; trace.len()];
        let mut alloc_of = vec![NOT_FREED; trace.len()];
        let mut live: AddressMap<u32> = AddressMap::default();
        let mut freed_before = 0u64;
        for (index, entry) in trace.iter().enumerate() {
            match entry.action() {
                Action::Alloc => {
                    live.insert(entry.addr, index as u32);
                }
                Action::FreeRequested => match live.remove(&entry.addr) {
                    Some(alloc) => {
                        free_of[alloc as usize] = index as u32;
                        alloc_of[index] = alloc;
                    }
                    None => freed_before = freed_before.saturating_add(entry.size),
                },
                _ => {}
            }
        }
        let live_at_end: u64 = live
            .values()
            .map(|&alloc| trace[alloc as usize].size)
            .fold(0u64, u64::saturating_add);
        Lives {
            free_of,
            alloc_of,
            before_window: allocated_at_end
                .saturating_add(freed_before)
                .saturating_sub(live_at_end),
        }
    }

    /// Applies entry `index` to per-column bytes (column 0: before the window); `column`
    /// maps an `alloc` entry to its column. Returns the signed change of the total.
    fn apply(
        &self,
        trace: &Trace,
        index: usize,
        column: impl Fn(usize) -> usize,
        bytes: &mut [u64],
    ) -> i128 {
        let entry = &trace[index];
        match entry.action() {
            Action::Alloc => {
                let c = column(index);
                bytes[c] = bytes[c].saturating_add(entry.size);
                i128::from(entry.size)
            }
            Action::FreeRequested => {
                let alloc = self.alloc_of[index];
                let (c, size) = if alloc == NOT_FREED {
                    (0, entry.size)
                } else {
                    (column(alloc as usize), trace[alloc as usize].size)
                };
                let before = bytes[c];
                bytes[c] = before.saturating_sub(size);
                -i128::from(before - bytes[c])
            }
            _ => 0,
        }
    }
}

/// For each entry index `i`, the first index `≥ i` whose stack is outside a backward (or an
/// `oom`): where a backward that was running at `i` ended.
fn backward_ends(snapshot: &Snapshot, trace: &Trace) -> Vec<u32> {
    let mut in_backward: AddressMap<bool> = AddressMap::default();
    let mut ends = vec![trace.len() as u32; trace.len() + 1];
    for index in (0..trace.len()).rev() {
        let entry = &trace[index];
        let ends_here = entry.action_code() == Action::Oom.code()
            || (entry.stack != 0
                && !*in_backward
                    .entry(u64::from(entry.stack))
                    .or_insert_with(|| {
                        snapshot_diff::category(&snapshot.stack_frames(entry.stack))
                            == Category::Gradients
                    }));
        ends[index] = if ends_here {
            index as u32
        } else {
            ends[index + 1]
        };
    }
    ends
}

/// One timeline from each `alloc` entry's group (`group_of[i]` for entry `i`).
fn build(
    grouping: &str,
    trace: &Trace,
    lives: &Lives,
    group_of: &[u32],
    mut names: Vec<(String, Vec<String>)>,
    max_points: usize,
) -> MemoryTimeline {
    // Pass 1: each group's highest bytes, to choose the groups drawn by name (column g + 1
    // is group g here).
    let mut current = vec![0u64; names.len() + 1];
    let mut highest = vec![0u64; names.len() + 1];
    for index in 0..trace.len() {
        let column = |at: usize| group_of[at] as usize + 1;
        if lives.apply(trace, index, column, &mut current) > 0 {
            let c = column(index);
            highest[c] = highest[c].max(current[c]);
        }
    }
    let mut ranked: Vec<usize> = (0..names.len()).filter(|&g| highest[g + 1] > 0).collect();
    ranked.sort_by(|&a, &b| highest[b + 1].cmp(&highest[a + 1]).then(a.cmp(&b)));
    ranked.truncate(MAX_GROUPS);
    // Column 0: before the window; 1..=k the drawn groups; k + 1 everything else.
    let others = ranked.len() + 1;
    let mut column_of_group = vec![others; names.len()];
    for (position, &group) in ranked.iter().enumerate() {
        column_of_group[group] = position + 1;
    }

    // Pass 2: the series, one point per window, at the window's highest total.
    let window = trace.len().div_ceil(max_points.max(1)).max(1);
    let mut bytes = vec![0u64; others + 1];
    bytes[0] = lives.before_window;
    let mut total = i128::from(lives.before_window);
    let mut points = Vec::with_capacity(trace.len() / window + 1);
    let mut best: Option<(usize, i128)> = None;
    let mut best_bytes = bytes.clone();
    let mut peaks = vec![0u64; others + 1];
    for index in 0..trace.len() {
        let column = |at: usize| column_of_group[group_of[at] as usize];
        total += lives.apply(trace, index, column, &mut bytes);
        if best.is_none_or(|(_, best_total)| total > best_total) {
            best = Some((index, total));
            best_bytes.copy_from_slice(&bytes);
        }
        if (index + 1) % window == 0 || index + 1 == trace.len() {
            if let Some((at, _)) = best.take() {
                for (peak, value) in peaks.iter_mut().zip(&best_bytes) {
                    *peak = (*peak).max(*value);
                }
                points.push(TimelinePoint {
                    entry: at as u64,
                    time_us: trace[at].time_us,
                    bytes: best_bytes.clone(),
                });
            }
        }
    }

    let mut groups = Vec::with_capacity(others + 1);
    groups.push(TimelineGroup {
        name: "held before the trace".to_string(),
        frames: vec![
            "allocated before the trace's first entry (the trace is a ring buffer) and not yet freed"
                .to_string(),
        ],
        peak_bytes: Bytes(peaks[0]),
    });
    for (position, &group) in ranked.iter().enumerate() {
        let (name, frames) = std::mem::take(&mut names[group]);
        groups.push(TimelineGroup {
            name,
            frames,
            peak_bytes: Bytes(peaks[position + 1]),
        });
    }
    groups.push(TimelineGroup {
        name: "everything else".to_string(),
        frames: Vec::new(),
        peak_bytes: Bytes(peaks[others]),
    });
    MemoryTimeline {
        grouping: grouping.to_string(),
        entries: trace.len() as u64,
        groups,
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::fragmentation::{self, Options};
    use crate::parse::torch_snapshot;

    fn snapshot(name: &str) -> Snapshot {
        let path = format!(
            "{}/tests/fixtures/h200-torch2.11/snap/{name}.pickle",
            env!("CARGO_MANIFEST_DIR")
        );
        torch_snapshot::parse(&std::fs::read(path).unwrap()).unwrap()
    }

    /// The forward replay drawn on the timeline agrees with the analysis's backward replay
    /// from the snapshot: its highest total is the trace's peak (to within 1 MiB of rounding,
    /// out of 100 GiB), whatever the grouping, and downsampling to a handful of points keeps
    /// that peak.
    #[test]
    fn timeline_peak_is_the_trace_peak() {
        for name in [
            "model_forward",
            "leak_growing",
            "fragmentation",
            "leak_steady",
        ] {
            let snapshot = snapshot(name);
            let report = fragmentation::analyze(&snapshot, &Options::default());
            let device = &report.devices[0];
            let peak = device.trace.as_ref().unwrap().peak.as_ref().unwrap();
            for points in [DEFAULT_POINTS, 7] {
                let timelines = timelines(
                    &snapshot,
                    &snapshot.traces[0],
                    device.allocated_bytes.0,
                    points,
                );
                assert_eq!(timelines.len(), 2);
                for timeline in &timelines {
                    assert!(timeline.points.len() <= points, "{name}");
                    let highest = timeline
                        .points
                        .iter()
                        .map(|point| point.bytes.iter().sum::<u64>())
                        .max()
                        .unwrap();
                    // Within 1 MiB: the backward replay sizes live blocks from the snapshot's
                    // segments, this one from the trace entries' sizes.
                    let gap = highest.abs_diff(peak.allocated_bytes.0);
                    assert!(gap <= 1 << 20, "{name} {}: {gap}", timeline.grouping);
                    assert!(timeline.groups.len() <= MAX_GROUPS + 2);
                }
            }
        }
    }

    /// By category, a forward's blocks are activations and the model's construction is
    /// parameters (model_forward.py builds a transformer, then runs it out of memory).
    #[test]
    fn categories_name_what_was_allocated() {
        let snapshot = snapshot("model_forward");
        let report = fragmentation::analyze(&snapshot, &Options::default());
        let timelines = timelines(
            &snapshot,
            &snapshot.traces[0],
            report.devices[0].allocated_bytes.0,
            DEFAULT_POINTS,
        );
        let by_category = &timelines[1];
        let peak = |name: &str| {
            by_category
                .groups
                .iter()
                .find(|group| group.name == name)
                .map_or(0, |group| group.peak_bytes.0)
        };
        assert!(peak("activations") > 0);
        assert!(peak("parameters") > 0);
        assert!(by_category
            .groups
            .iter()
            .all(|g| g.name != "cuda graph pools"));
    }
}
