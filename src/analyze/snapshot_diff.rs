//! `oomdoc snapshot diff A B`: where allocated memory changed between two snapshots (#19).
//!
//! For each device, the allocated blocks of each snapshot are taken at two moments, by the
//! backward replay of `fragmentation` (the peak of the trace window, and the first OOM or
//! else the snapshot itself), then summed by allocation site (the first user frame), by
//! category ([`category`], rules in [`rules`]) and by pool and stream, and compared: largest
//! change first, exact bytes. Pure: no I/O, no formatting.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::analyze::annotations::{self, Sweep};
use crate::analyze::fragmentation::{self, LiveBlock, Sites};
use crate::model::gpu::CudaOrdinal;
use crate::model::snapshot::{
    Action, CategoryRule, DiffMoment, DiffRow, Frame, NamedRange, Snapshot, SnapshotDiff, Trace,
};
use crate::model::{Bytes, Source};

/// What a block of memory is, from its allocation stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// In a private pool (CUDA graph capture or a `MemPool`).
    CudaGraphPool,
    /// Optimizer state.
    OptimizerState,
    /// Gradients: allocated under a backward and outliving it.
    Gradients,
    /// Allocated under a backward and freed before it ended (autograd's buffers).
    AutogradTemporaries,
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
            Category::AutogradTemporaries => "autograd temporaries",
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
        (Category::AutogradTemporaries, "a frame is `backward` or `_engine_run_backward` (autograd), or an autograd engine / `AccumulateGrad` C++ frame, and the trace shows the block freed before that backward ended (before the first later trace entry whose stack is outside backward: an optimizer step, `zero_grad`, the next forward; or an `oom`): autograd's intermediate buffers, PyTorch's profiler's AUTOGRAD_DETAIL and TEMPORARY"),
        (Category::Gradients, "the same frames, and the block outlives that backward: still allocated when it ended, at an `oom` or at the end of the trace, or freed only under an optimizer or `zero_grad` frame; without a trace every such block"),
        (Category::Parameters, "a frame is `load_state_dict`, `_apply`, `to`, `cuda` or `reset_parameters` in `torch/nn/`, or `__init__` of a module (`torch/nn/modules/`)"),
        (Category::Activations, "a frame is `forward`, `_call_impl` or `_wrapped_call_impl` (a module's forward)"),
        (Category::Other, "everything else: inputs made at top level outside any module (a batch from `torch.randn` or a data loader: PyTorch's profiler's INPUT) and blocks with no recorded stack"),
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

/// The category of a stack's frames (innermost first), not counting pools or lifetimes (see
/// [`rules`]): a backward frame gives [`Category::Gradients`], which [`diff`] splits by
/// lifetime.
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
    fn new(snapshot: &'s Snapshot, device: CudaOrdinal) -> Self {
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
        self.stack_category(block.stack)
    }

    fn stack_category(&mut self, stack: u32) -> Category {
        if let Some(&category) = self.by_stack.get(&stack) {
            return category;
        }
        let category = category(&self.snapshot.stack_frames(stack));
        self.by_stack.insert(stack, category);
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
struct Tally {
    bytes: u64,
    blocks: u64,
}

/// Group → (A, B, frames).
type Groups = BTreeMap<String, (Tally, Tally, Vec<String>)>;

fn add(groups: &mut Groups, key: String, frames: Vec<String>, side_b: bool, size: u64) {
    let entry = groups
        .entry(key)
        .or_insert_with(|| (Tally::default(), Tally::default(), frames));
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

/// A way to group blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Grouping {
    /// By allocation site (the first user frame).
    Site,
    /// By category (parameters, gradients, …).
    Category,
    /// By memory pool and stream.
    Pool,
    /// By the named ranges (`record_function`) open when the block was allocated.
    Annotation,
}

impl Grouping {
    /// The word used in the output.
    pub fn as_str(self) -> &'static str {
        match self {
            Grouping::Site => "site",
            Grouping::Category => "category",
            Grouping::Pool => "pool",
            Grouping::Annotation => "annotation",
        }
    }
}

/// Options of the diff.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rows kept per grouping.
    pub top: usize,
    /// Groupings to compute, in order; empty = site, category, pool, and annotation when
    /// either snapshot recorded named ranges.
    pub group_by: Vec<Grouping>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            top: 10,
            group_by: Vec::new(),
        }
    }
}

fn devices(snapshot: &Snapshot) -> Vec<CudaOrdinal> {
    let mut devices: Vec<CudaOrdinal> = snapshot.segments.iter().map(|s| s.device).collect();
    for (device, trace) in snapshot.traces.iter().enumerate() {
        if !trace.is_empty() {
            devices.push(CudaOrdinal(device as u32));
        }
    }
    devices
}

/// One snapshot's side of a device: its classifier, trace and named ranges.
struct SideOf<'s> {
    classifier: Classifier<'s>,
    trace: &'s Trace,
    ranges: &'s [NamedRange],
    device: CudaOrdinal,
    /// For each entry index `i`, the first index `≥ i` that ends a backward (a stack outside
    /// backward, or an `oom`); `trace.len()` when none. Built on first use.
    backward_end_from: Option<Vec<u32>>,
}

/// What the trace says about one live block at a moment.
#[derive(Debug, Clone, Copy, Default)]
struct Life {
    /// Index of its `alloc` entry, if in the window.
    alloc: Option<usize>,
    /// Index of its `free_requested` (or `free_completed`) entry after the moment, if any.
    free: Option<usize>,
}

impl<'s> SideOf<'s> {
    fn new(snapshot: &'s Snapshot, device: CudaOrdinal, ranges: &'s [NamedRange]) -> Self {
        SideOf {
            classifier: Classifier::new(snapshot, device),
            trace: snapshot.trace(device.get() as usize),
            ranges,
            device,
            backward_end_from: None,
        }
    }

    /// Allocation and free entries of `blocks`, live after entry `moment`.
    fn lives(&self, blocks: &[LiveBlock], moment: Option<usize>) -> HashMap<u64, Life> {
        let mut lives: HashMap<u64, Life> = HashMap::with_capacity(blocks.len());
        let Some(moment) = moment.filter(|&m| m < self.trace.len()) else {
            return lives;
        };
        let wanted: HashSet<u64> = blocks.iter().map(|block| block.address).collect();
        let mut found = 0;
        for index in (0..=moment).rev() {
            let entry = &self.trace[index];
            if entry.action_code() == Action::Alloc.code() && wanted.contains(&entry.addr) {
                let life = lives.entry(entry.addr).or_default();
                if life.alloc.is_none() {
                    life.alloc = Some(index);
                    found += 1;
                    if found == wanted.len() {
                        break;
                    }
                }
            }
        }
        let mut found = 0;
        for index in moment + 1..self.trace.len() {
            let entry = &self.trace[index];
            let code = entry.action_code();
            if (code == Action::FreeRequested.code() || code == Action::FreeCompleted.code())
                && wanted.contains(&entry.addr)
            {
                let life = lives.entry(entry.addr).or_default();
                if life.free.is_none() {
                    life.free = Some(index);
                    found += 1;
                    if found == wanted.len() {
                        break;
                    }
                }
            }
        }
        lives
    }

    fn backward_end_from(&mut self) -> &[u32] {
        if self.backward_end_from.is_none() {
            let mut ends = vec![self.trace.len() as u32; self.trace.len() + 1];
            for index in (0..self.trace.len()).rev() {
                let entry = &self.trace[index];
                let ends_backward = entry.action_code() == Action::Oom.code()
                    || (entry.stack != 0
                        && self.classifier.stack_category(entry.stack) != Category::Gradients);
                ends[index] = if ends_backward {
                    index as u32
                } else {
                    ends[index + 1]
                };
            }
            self.backward_end_from = Some(ends);
        }
        self.backward_end_from.as_deref().unwrap_or(&[])
    }

    /// The block's category, a backward's block split by its lifetime.
    fn category(&mut self, block: &LiveBlock, life: Option<&Life>) -> Category {
        let category = self.classifier.category(block);
        if category != Category::Gradients {
            return category;
        }
        let Some(&Life { alloc, free }) = life else {
            return category;
        };
        let Some(free) = free else {
            return category;
        };
        let start = alloc.map_or(0, |alloc| alloc + 1);
        let end = self
            .backward_end_from()
            .get(start)
            .map_or(usize::MAX, |&end| end as usize);
        if free < end {
            Category::AutogradTemporaries
        } else {
            category
        }
    }
}

/// A side of a moment: its time, the blocks then, and the index of its trace entry.
type SideMoment<'m> = Option<(i64, &'m [LiveBlock], Option<usize>)>;

fn peak(moments: &fragmentation::Moments) -> SideMoment<'_> {
    moments
        .peak
        .as_ref()
        .map(|(time, blocks)| (*time, blocks.as_slice(), moments.peak_index))
}

fn last(moments: &fragmentation::Moments) -> SideMoment<'_> {
    Some((
        moments.last.0,
        moments.last.1.as_slice(),
        moments.last_index,
    ))
}

/// Compares snapshot `a` with snapshot `b` (labels as given by the user).
pub fn diff(
    a: &Snapshot,
    a_label: &str,
    b: &Snapshot,
    b_label: &str,
    options: &Options,
) -> SnapshotDiff {
    let a_ranges = annotations::ranges(a);
    let b_ranges = annotations::ranges(b);
    let groupings = if options.group_by.is_empty() {
        let mut groupings = vec![Grouping::Site, Grouping::Category, Grouping::Pool];
        if !a_ranges.is_empty() || !b_ranges.is_empty() {
            groupings.push(Grouping::Annotation);
        }
        groupings
    } else {
        let mut groupings = Vec::new();
        for grouping in &options.group_by {
            if !groupings.contains(grouping) {
                groupings.push(*grouping);
            }
        }
        groupings
    };
    let wants = |grouping: Grouping| groupings.contains(&grouping);
    let mut all = devices(a);
    all.extend(devices(b));
    all.sort_unstable();
    all.dedup();
    let mut moments = Vec::new();
    let mut traced = true;
    let mut lifetimes_split = false;
    for device in all {
        let a_moments = fragmentation::moments(a, device);
        let b_moments = fragmentation::moments(b, device);
        traced &= a_moments.peak.is_some() && b_moments.peak.is_some();
        let mut sides = [
            SideOf::new(a, device, &a_ranges),
            SideOf::new(b, device, &b_ranges),
        ];
        let last_at = |m: &fragmentation::Moments| if m.last_is_oom { "oom" } else { "end" };
        let pairs = [
            ("peak", peak(&a_moments), peak(&b_moments), "peak", "peak"),
            (
                "oom or end",
                last(&a_moments),
                last(&b_moments),
                last_at(&a_moments),
                last_at(&b_moments),
            ),
        ];
        for (moment, a_side, b_side, a_at, b_at) in pairs {
            if a_side.is_none() && b_side.is_none() {
                continue;
            }
            let mut by_site = Groups::new();
            let mut by_category = Groups::new();
            let mut by_pool = Groups::new();
            let mut by_annotation = Groups::new();
            let mut totals = [0u64; 2];
            let mut inside: [Vec<String>; 2] = [Vec::new(), Vec::new()];
            let mut times: [Option<i64>; 2] = [None, None];
            for (side_b, side_moment) in [(false, a_side), (true, b_side)] {
                let Some((time_us, blocks, index)) = side_moment else {
                    continue;
                };
                let side = &mut sides[usize::from(side_b)];
                let known_time = index.is_some() && time_us != 0;
                times[usize::from(side_b)] = known_time.then_some(time_us);
                if known_time {
                    inside[usize::from(side_b)] =
                        annotations::open_at(side.ranges, i64::from(side.device.get()), time_us);
                }
                let lives = side.lives(blocks, index);
                lifetimes_split |= !lives.is_empty();
                let mut sweep = Sweep::new(side.ranges, i64::from(side.device.get()));
                let mut order: Vec<(Option<i64>, usize)> = blocks
                    .iter()
                    .enumerate()
                    .map(|(position, block)| {
                        let time = lives
                            .get(&block.address)
                            .and_then(|life| life.alloc)
                            .and_then(|alloc| side.trace.get(alloc))
                            .map(|entry| entry.time_us);
                        (time, position)
                    })
                    .collect();
                if wants(Grouping::Annotation) {
                    order.sort_unstable();
                }
                for (alloc_time, position) in order {
                    let block = &blocks[position];
                    totals[usize::from(side_b)] =
                        totals[usize::from(side_b)].saturating_add(block.size);
                    if wants(Grouping::Site) {
                        let (site, frames) = side.classifier.sites.of(block.stack);
                        add(&mut by_site, site, frames, side_b, block.size);
                    }
                    if wants(Grouping::Category) {
                        let category = side
                            .category(block, lives.get(&block.address))
                            .as_str()
                            .to_string();
                        add(&mut by_category, category, Vec::new(), side_b, block.size);
                    }
                    if wants(Grouping::Pool) {
                        let pool = side.classifier.pool(block);
                        add(&mut by_pool, pool, Vec::new(), side_b, block.size);
                    }
                    if wants(Grouping::Annotation) {
                        let key = match alloc_time {
                            Some(time) => annotations::key(&sweep.open_at(time)),
                            None => "(allocated before the trace window)".to_string(),
                        };
                        add(&mut by_annotation, key, Vec::new(), side_b, block.size);
                    }
                }
            }
            let [a_inside, b_inside] = inside;
            moments.push(DiffMoment {
                device,
                moment: moment.to_string(),
                a_at: if a_side.is_some() { a_at } else { "absent" }.to_string(),
                b_at: if b_side.is_some() { b_at } else { "absent" }.to_string(),
                a_time_us: times[0],
                b_time_us: times[1],
                a_inside,
                b_inside,
                a_allocated_bytes: Bytes(totals[0]),
                b_allocated_bytes: Bytes(totals[1]),
                change_bytes: change(totals[0], totals[1]),
                by_site: rows(by_site, options.top),
                by_category: rows(by_category, usize::MAX),
                by_pool: rows(by_pool, options.top),
                by_annotation: rows(by_annotation, options.top),
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
    if lifetimes_split {
        limitations.push(
            "gradients and autograd temporaries are told apart by when the trace frees each block; a backward cut short by an OOM has no end of its own, so its blocks still allocated at the OOM count as gradients, and when frees carry no stack (`context=\"alloc\"`) the backward is taken to end at the next entry with a stack outside it".to_string(),
        );
    }
    if wants(Grouping::Annotation) {
        limitations.push(
            "named ranges come from `external_annotations`: PyTorch 2.5 or later records a `START` and an `END` for each `record_function` range of user scope while history is recorded; a block is grouped by the ranges open when its `alloc` entry was recorded, and blocks allocated before the trace window cannot be".to_string(),
        );
    }
    SnapshotDiff {
        source: Source::Snapshot,
        a: a_label.to_string(),
        b: b_label.to_string(),
        category_rules: rules(),
        groupings: groupings.iter().map(|g| g.as_str().to_string()).collect(),
        a_annotations: a_ranges,
        b_annotations: b_ranges,
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

    /// A backward's block freed before the first entry outside backward is an autograd
    /// temporary; one freed only under the optimizer, or never, is a gradient.
    #[test]
    fn backward_blocks_split_by_lifetime() {
        use crate::model::snapshot::{Block, BlockState, Segment, SegmentType, TraceEntry};
        let torch = "/usr/lib/python3/site-packages/torch";
        let base = 0x1000u64;
        let block = |address: u64, size: u64, state: BlockState, stack: u32| Block {
            address,
            size: Bytes(size),
            requested_size: Bytes(size),
            state,
            stack,
        };
        let entry = |action: Action, addr: u64, size: u64, time: i64, stack: u32| {
            TraceEntry::new(action, addr, size, time, 0, stack)
        };
        let snapshot = Snapshot {
            segments: vec![Segment {
                device: CudaOrdinal(0),
                address: base,
                total_size: Bytes(4096),
                allocated_size: Bytes(2048),
                active_size: Bytes(2048),
                requested_size: Bytes(2048),
                stream: 0,
                segment_type: SegmentType::Small,
                pool_id: (0, 0),
                is_expandable: false,
                stack: 0,
                blocks: vec![
                    block(base, 512, BlockState::ActiveAllocated, 2),
                    block(base + 512, 1024, BlockState::Inactive, 0),
                    block(base + 1536, 1536, BlockState::ActiveAllocated, 1),
                    block(base + 3072, 1024, BlockState::Inactive, 0),
                ],
            }],
            traces: vec![vec![
                entry(Action::Alloc, base, 512, 1, 1),
                entry(Action::Alloc, base + 512, 1024, 2, 1),
                entry(Action::Alloc, base + 1536, 1536, 3, 1),
                entry(Action::FreeRequested, base, 512, 4, 1),
                entry(Action::FreeCompleted, base, 512, 5, 1),
                entry(Action::Alloc, base, 512, 6, 2),
                entry(Action::FreeRequested, base + 512, 1024, 7, 2),
                entry(Action::FreeCompleted, base + 512, 1024, 8, 2),
            ]
            .into()],
            frames: vec![
                frame("backward", &format!("{torch}/_tensor.py")),
                frame("zero_grad", &format!("{torch}/optim/optimizer.py")),
            ],
            stacks: vec![vec![], vec![0], vec![1]],
            streams: vec![0],
            ..Snapshot::default()
        };
        let diff = diff(&snapshot, "a", &snapshot, "b", &Options::default());
        let peak = &diff.moments[0];
        assert_eq!(peak.moment, "peak");
        assert_eq!(peak.a_allocated_bytes, Bytes(3072));
        let categories: Vec<(&str, u64)> = peak
            .by_category
            .iter()
            .map(|row| (row.key.as_str(), row.a_bytes.0))
            .collect();
        assert_eq!(
            categories,
            [("gradients", 2560), ("autograd temporaries", 512)]
        );
    }
}
