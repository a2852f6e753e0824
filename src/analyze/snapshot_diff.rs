//! `oomdoc snapshot diff A B`: where allocated memory changed between two snapshots (#19).
//!
//! For each device, the allocated blocks of each snapshot are taken at two moments, by the
//! backward replay of `fragmentation` (the peak of the trace window, and the first OOM or
//! else the snapshot itself), then summed by allocation site (the first user frame), by
//! category ([`category`], rules in [`rules`]) and by pool and stream, and compared: largest
//! change first, exact bytes. Pure: no I/O, no formatting.

use std::collections::{BTreeMap, HashMap};

use crate::analyze::fragmentation::{self, LiveBlock, Sites};
use crate::model::snapshot::{CategoryRule, DiffMoment, DiffRow, Frame, Snapshot, SnapshotDiff};
use crate::model::{Bytes, Source};

/// What a block of memory is, from its allocation stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// In a private pool (CUDA graph capture or a `MemPool`).
    CudaGraphPool,
    /// Optimizer state.
    OptimizerState,
    /// Gradients.
    Gradients,
    /// Parameters (and buffers).
    Parameters,
    /// Activations (anything allocated under a forward).
    Activations,
    /// Anything else, or no stack recorded.
    Other,
}

impl Category {
    /// The name shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::CudaGraphPool => "cuda graph pools",
            Category::OptimizerState => "optimizer state",
            Category::Gradients => "gradients",
            Category::Parameters => "parameters",
            Category::Activations => "activations",
            Category::Other => "other",
        }
    }
}

/// The classification rules, in the order they are tried (first match wins).
pub fn rules() -> Vec<CategoryRule> {
    [
        (Category::CudaGraphPool, "the block's segment is in a private pool (`segment_pool_id` other than (0, 0)): CUDA graph capture or a `MemPool`"),
        (Category::OptimizerState, "a frame is `_init_group`, or `step` in `torch/optim/`, or any frame of `torch/optim/`"),
        (Category::Gradients, "a frame is `backward` or `_engine_run_backward` (autograd), or an autograd engine / `AccumulateGrad` C++ frame"),
        (Category::Parameters, "a frame is `load_state_dict`, `_apply`, `to`, `cuda` or `reset_parameters` in `torch/nn/`, or `__init__` of a module (`torch/nn/modules/`)"),
        (Category::Activations, "a frame is `forward`, `_call_impl` or `_wrapped_call_impl` (a module's forward)"),
        (Category::Other, "everything else, including blocks with no recorded stack"),
    ]
    .into_iter()
    .map(|(category, rule)| CategoryRule {
        category: category.as_str().to_string(),
        rule: rule.to_string(),
    })
    .collect()
}

fn in_torch(frame: &Frame, part: &str) -> bool {
    frame.filename.contains(part)
}

/// The category of a stack's frames (innermost first), not counting pools (see [`rules`]).
pub fn category(frames: &[&Frame]) -> Category {
    let any = |test: &dyn Fn(&Frame) -> bool| frames.iter().any(|frame| test(frame));
    if any(&|frame| {
        frame.name == "_init_group"
            || in_torch(frame, "/torch/optim/")
            || frame.name.contains("optim::")
    }) {
        return Category::OptimizerState;
    }
    if any(&|frame| {
        ((frame.name == "backward" || frame.name == "_engine_run_backward")
            && (in_torch(frame, "/torch/autograd/") || in_torch(frame, "/torch/_tensor.py")))
            || frame.name.contains("AccumulateGrad")
            || frame.name.contains("accumulate_grad")
            || frame.name.contains("autograd::Engine")
    }) {
        return Category::Gradients;
    }
    if any(&|frame| {
        let nn = in_torch(frame, "/torch/nn/");
        frame.name == "load_state_dict"
            || (nn
                && matches!(
                    frame.name.as_str(),
                    "_apply" | "to" | "cuda" | "reset_parameters" | "_load_from_state_dict"
                ))
            || (frame.name == "__init__" && in_torch(frame, "/torch/nn/modules/"))
    }) {
        return Category::Parameters;
    }
    if any(&|frame| {
        matches!(
            frame.name.as_str(),
            "forward" | "_call_impl" | "_wrapped_call_impl"
        )
    }) {
        return Category::Activations;
    }
    Category::Other
}

/// Classifies blocks of one snapshot, caching per stack.
struct Classifier<'s> {
    snapshot: &'s Snapshot,
    by_stack: HashMap<u32, Category>,
    /// Segment start → (end, pool id, stream), at the snapshot.
    segments: BTreeMap<u64, (u64, (i64, i64), u64)>,
    sites: Sites<'s>,
}

impl<'s> Classifier<'s> {
    fn new(snapshot: &'s Snapshot, device: u32) -> Self {
        let segments = snapshot
            .segments
            .iter()
            .filter(|segment| segment.device == device)
            .map(|segment| {
                (
                    segment.address,
                    (
                        segment.address.saturating_add(segment.total_size.0),
                        segment.pool_id,
                        segment.stream,
                    ),
                )
            })
            .collect();
        Classifier {
            snapshot,
            by_stack: HashMap::new(),
            segments,
            sites: Sites::new(snapshot),
        }
    }

    fn segment(&self, address: u64) -> Option<((i64, i64), u64)> {
        let (_, &(end, pool, stream)) = self.segments.range(..=address).next_back()?;
        (address < end).then_some((pool, stream))
    }

    fn category(&mut self, block: &LiveBlock) -> Category {
        if let Some((pool, _)) = self.segment(block.address) {
            if pool != (0, 0) {
                return Category::CudaGraphPool;
            }
        }
        if let Some(&category) = self.by_stack.get(&block.stack) {
            return category;
        }
        let frames: Vec<&Frame> = self
            .snapshot
            .stacks
            .get(block.stack as usize)
            .map(|ids| {
                ids.iter()
                    .filter_map(|&id| self.snapshot.frames.get(id as usize))
                    .collect()
            })
            .unwrap_or_default();
        let category = category(&frames);
        self.by_stack.insert(block.stack, category);
        category
    }

    fn pool(&self, block: &LiveBlock) -> String {
        match self.segment(block.address) {
            Some((pool, stream)) => format!("pool ({}, {}) stream {stream}", pool.0, pool.1),
            None => "segment released before the snapshot".to_string(),
        }
    }
}

#[derive(Default)]
struct Side {
    bytes: u64,
    blocks: u64,
}

/// Group → (A, B, frames).
type Groups = BTreeMap<String, (Side, Side, Vec<String>)>;

fn add(groups: &mut Groups, key: String, frames: Vec<String>, side_b: bool, size: u64) {
    let entry = groups
        .entry(key)
        .or_insert_with(|| (Side::default(), Side::default(), frames));
    let side = if side_b { &mut entry.1 } else { &mut entry.0 };
    side.bytes = side.bytes.saturating_add(size);
    side.blocks += 1;
}

fn change(a: u64, b: u64) -> i64 {
    (i128::from(b) - i128::from(a)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

fn rows(groups: Groups, top: usize) -> Vec<DiffRow> {
    let mut rows: Vec<DiffRow> = groups
        .into_iter()
        .map(|(key, (a, b, frames))| DiffRow {
            key,
            a_bytes: Bytes(a.bytes),
            b_bytes: Bytes(b.bytes),
            change_bytes: change(a.bytes, b.bytes),
            a_blocks: a.blocks,
            b_blocks: b.blocks,
            frames,
        })
        .collect();
    rows.sort_by(|x, y| {
        y.change_bytes
            .unsigned_abs()
            .cmp(&x.change_bytes.unsigned_abs())
            .then(y.b_bytes.cmp(&x.b_bytes))
            .then(x.key.cmp(&y.key))
    });
    rows.truncate(top);
    rows
}

/// Options of the diff.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rows kept per grouping.
    pub top: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { top: 10 }
    }
}

fn devices(snapshot: &Snapshot) -> Vec<u32> {
    let mut devices: Vec<u32> = snapshot.segments.iter().map(|s| s.device).collect();
    for (device, trace) in snapshot.traces.iter().enumerate() {
        if !trace.is_empty() {
            devices.push(device as u32);
        }
    }
    devices
}

/// Compares snapshot `a` with snapshot `b` (labels as given by the user).
pub fn diff(
    a: &Snapshot,
    a_label: &str,
    b: &Snapshot,
    b_label: &str,
    options: &Options,
) -> SnapshotDiff {
    let mut all = devices(a);
    all.extend(devices(b));
    all.sort_unstable();
    all.dedup();
    let mut moments = Vec::new();
    let mut traced = true;
    for device in all {
        let a_moments = fragmentation::moments(a, device);
        let b_moments = fragmentation::moments(b, device);
        traced &= a_moments.peak.is_some() && b_moments.peak.is_some();
        let mut a_classifier = Classifier::new(a, device);
        let mut b_classifier = Classifier::new(b, device);
        let last_at = |m: &fragmentation::Moments| if m.last_is_oom { "oom" } else { "end" };
        let pairs = [
            (
                "peak",
                a_moments.peak.as_ref().map(|(_, blocks)| blocks.as_slice()),
                b_moments.peak.as_ref().map(|(_, blocks)| blocks.as_slice()),
                "peak",
                "peak",
            ),
            (
                "oom or end",
                Some(a_moments.last.1.as_slice()),
                Some(b_moments.last.1.as_slice()),
                last_at(&a_moments),
                last_at(&b_moments),
            ),
        ];
        for (moment, a_blocks, b_blocks, a_at, b_at) in pairs {
            if a_blocks.is_none() && b_blocks.is_none() {
                continue;
            }
            let mut by_site = Groups::new();
            let mut by_category = Groups::new();
            let mut by_pool = Groups::new();
            let mut totals = [0u64; 2];
            for (side_b, blocks, classifier) in [
                (false, a_blocks, &mut a_classifier),
                (true, b_blocks, &mut b_classifier),
            ] {
                for block in blocks.unwrap_or(&[]) {
                    totals[usize::from(side_b)] =
                        totals[usize::from(side_b)].saturating_add(block.size);
                    let (site, frames) = classifier.sites.of(block.stack);
                    add(&mut by_site, site, frames, side_b, block.size);
                    let category = classifier.category(block).as_str().to_string();
                    add(&mut by_category, category, Vec::new(), side_b, block.size);
                    add(
                        &mut by_pool,
                        classifier.pool(block),
                        Vec::new(),
                        side_b,
                        block.size,
                    );
                }
            }
            moments.push(DiffMoment {
                device,
                moment: moment.to_string(),
                a_at: if a_blocks.is_some() { a_at } else { "absent" }.to_string(),
                b_at: if b_blocks.is_some() { b_at } else { "absent" }.to_string(),
                a_allocated_bytes: Bytes(totals[0]),
                b_allocated_bytes: Bytes(totals[1]),
                change_bytes: change(totals[0], totals[1]),
                by_site: rows(by_site, options.top),
                by_category: rows(by_category, usize::MAX),
                by_pool: rows(by_pool, options.top),
            });
        }
    }
    let mut limitations = Vec::new();
    if !traced {
        limitations.push(
            "a snapshot without an allocation trace has no peak: only the state at the snapshot is compared".to_string(),
        );
    }
    limitations.push(
        "the peak is the peak within each trace window (`max_entries` is a ring buffer); blocks freed before the snapshot are sized from the trace, rounded up to 512 bytes".to_string(),
    );
    limitations.push(
        "categories come from allocation stacks, not from how tensors were used later: a tensor made in a forward and kept as a parameter counts as activations".to_string(),
    );
    SnapshotDiff {
        source: Source::Snapshot,
        a: a_label.to_string(),
        b: b_label.to_string(),
        category_rules: rules(),
        moments,
        limitations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str, filename: &str) -> Frame {
        Frame {
            name: name.to_string(),
            filename: filename.to_string(),
            line: 1,
        }
    }

    #[test]
    fn categories_follow_the_stated_rules() {
        let torch = "/usr/lib/python3/site-packages/torch";
        let cases = [
            (
                vec![
                    frame("_init_group", &format!("{torch}/optim/adam.py")),
                    frame("step", &format!("{torch}/optim/adam.py")),
                ],
                Category::OptimizerState,
            ),
            (
                vec![
                    frame("backward", &format!("{torch}/_tensor.py")),
                    frame("train", "train.py"),
                ],
                Category::Gradients,
            ),
            (
                vec![
                    frame("_apply", &format!("{torch}/nn/modules/module.py")),
                    frame("main", "train.py"),
                ],
                Category::Parameters,
            ),
            (
                vec![
                    frame("__init__", &format!("{torch}/nn/modules/linear.py")),
                    frame("main", "train.py"),
                ],
                Category::Parameters,
            ),
            (
                vec![
                    frame("forward", "model.py"),
                    frame("_call_impl", &format!("{torch}/nn/modules/module.py")),
                ],
                Category::Activations,
            ),
            (vec![frame("main", "train.py")], Category::Other),
            (vec![], Category::Other),
        ];
        for (frames, expected) in cases {
            let refs: Vec<&Frame> = frames.iter().collect();
            assert_eq!(category(&refs), expected, "{frames:?}");
        }
    }
}
