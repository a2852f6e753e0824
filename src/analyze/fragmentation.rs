//! Fragmentation or capacity, judged on a PyTorch memory snapshot.
//!
//! Per device, the state at snapshot time comes straight from the segments (the JSON
//! contract: `reserved_bytes`/`allocated_bytes` are sums over segments). For each `oom`
//! event, the allocator state at that moment is rebuilt by replaying the device's trace
//! *backwards* from the snapshot: undo each `alloc`, `free_requested`, `free_completed`,
//! `segment_alloc`, `segment_free`, `segment_map`, `segment_unmap`. Backwards because the
//! trace is a ring buffer (`max_entries`) and recording may start late: the snapshot is the
//! only complete state, and walking back from it needs no knowledge of what came before
//! the window (the same choice as PyTorch's own `MemoryViz.js`).
//!
//! The verdict (`c10/cuda/CUDACachingAllocator.cpp` rounding, `torch/cuda/memory.py` snapshots): `fragmentation` only when the reserved-but-free
//! memory was enough for the request in total while no free block could hold it;
//! otherwise `capacity`, or `other` when a large enough free block existed or memory was
//! held outside this allocator. Settings are suggested only when not already in force.
//! Pure: no I/O.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::analyze::{annotations, snapshot_timeline};
use crate::error::HintedError;
use crate::model::gpu::CudaOrdinal;
use crate::model::snapshot::{
    Action, AllocatorSettings, AllocatorState, BlockState, Cause, DeviceSummary, MapSegment,
    OomAnalysis, Peak, PoolGroup, SegmentType, Site, SizeBucket, Snapshot, SnapshotReport, StackId,
    Trace, TraceEntry, TraceSummary,
};
use crate::model::{Bytes, Source};
use crate::parse::pickle::profile;

mod ahead;
mod growth;
mod sharded;

use growth::{growth_by_stack, site_growth};
use sharded::{beside, joined};

/// Knobs of the analysis.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Device total memory, if the user knows it (the OOM message's `total capacity`).
    pub total_memory: Option<Bytes>,
    /// How many allocation sites to list.
    pub top_sites: usize,
    /// How many OOM events to analyse in detail (the rest are counted).
    pub max_ooms: usize,
    /// How many segments to keep for the HTML map.
    pub map_segments: usize,
    /// Points per memory timeline (the HTML page); 0 = no timelines.
    pub timeline_points: usize,
    /// Threads a long trace may be analysed on (1: this thread only); the report is the same.
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            total_memory: None,
            top_sites: 5,
            max_ooms: 20,
            map_segments: 48,
            timeline_points: 0,
            threads: 1,
        }
    }
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Analyses a decoded snapshot.
pub fn analyze(snapshot: &Snapshot, options: &Options) -> SnapshotReport {
    let mut devices: Vec<CudaOrdinal> = snapshot.segments.iter().map(|s| s.device).collect();
    for (device, trace) in snapshot.traces.iter().enumerate() {
        if !trace.is_empty() {
            devices.push(CudaOrdinal(device as u32));
        }
    }
    devices.sort_unstable();
    devices.dedup();

    let mut sites = SiteNamer::new(snapshot);
    let mut report = SnapshotReport {
        source: Source::Snapshot,
        devices: Vec::new(),
        ooms: Vec::new(),
        ooms_not_analysed: 0,
        allocator_settings: snapshot.allocator_settings.clone(),
        total_memory_bytes: options.total_memory,
        annotations: annotations::ranges(snapshot),
        limitations: Vec::new(),
    };
    let mut estimated_blocks = false;
    let mut any_trace = false;
    for device in devices {
        let trace = snapshot.trace(device.get() as usize);
        let signal = ahead::PeakSignal::new();
        // The trace's passes that name no site (the replay's first pass, growth by stack) run
        // on threads of their own while this one summarizes the segments; sites are then named
        // here in the order a walk on one thread names them, so the report is the same.
        let summary = std::thread::scope(|scope| {
            let threads = options.threads.min(MAX_ANALYSIS_THREADS);
            let beside_here = threads > 1 && trace.len() >= THREADED_ANALYSIS_ENTRIES;
            // Pass 2 starts from the end at once, beside pass 1 (see `ahead`): it learns the
            // peak as soon as pass 1 has found it.
            let signal = &signal;
            let max_ooms = options.max_ooms;
            let ahead = beside_here.then(|| {
                beside(scope, move || {
                    ahead::replay_ahead(snapshot, device, trace, max_ooms, signal)
                })
            });
            let first = beside_here.then(|| {
                beside(scope, move || {
                    let first = first_pass(snapshot, device, trace, threads, max_ooms);
                    signal.publish(first.0.peak.2);
                    first
                })
            });
            let timing = profile::phase(|| "analysis: summarize".to_string());
            let mut summary = summarize_device(snapshot, device, options, &mut sites);
            drop(timing);
            if !trace.is_empty() {
                any_trace = true;
                let (first, extras) = match first {
                    Some(first) => joined(first),
                    None => first_pass(snapshot, device, trace, threads, options.max_ooms),
                };
                signal.publish(first.peak.2);
                let (peak_held, growth, counted) = match extras {
                    Some(extras) => (extras.peak_held, Some(extras.growth), Some(extras.counted)),
                    None => (None, None, None),
                };
                // With no OOM to judge, the replay beside pass 1 gave nothing (`None`): the
                // peak's blocks came from pass 1's shards.
                let ahead = ahead
                    .and_then(joined)
                    .or_else(|| peak_held.map(|held| ahead::Ahead::at_peak(first.peak.2, held)));
                let replay = replay_device(
                    snapshot,
                    device,
                    trace,
                    options,
                    &mut sites,
                    &mut report,
                    first,
                    ahead,
                    counted,
                );
                estimated_blocks |= replay.estimated_blocks;
                let mut trace_summary = replay.summary;
                // Growth by stack came from pass 1's shards, or is walked here.
                let growth = growth.unwrap_or_else(|| growth_by_stack(trace));
                let timing = profile::phase(|| "analysis: growth by site".to_string());
                trace_summary.growth = site_growth(growth, trace, &mut sites, options.top_sites);
                drop(timing);
                summary.trace = Some(trace_summary);
                if options.timeline_points > 0 {
                    summary.timelines = snapshot_timeline::timelines(
                        snapshot,
                        trace,
                        summary.allocated_bytes.0,
                        options.timeline_points,
                    );
                }
            }
            summary
        });
        report.devices.push(summary);
    }

    if !report.annotations.is_empty() {
        let ranges = &report.annotations;
        for device in &mut report.devices {
            if let Some(peak) = device.trace.as_mut().and_then(|t| t.peak.as_mut()) {
                peak.inside =
                    annotations::open_at(ranges, i64::from(device.device.get()), peak.time_us);
            }
        }
        for oom in &mut report.ooms {
            oom.inside = annotations::open_at(ranges, i64::from(oom.device.get()), oom.time_us);
        }
    }
    if report.devices.is_empty() {
        report
            .limitations
            .push("the snapshot holds no segments and no trace entries".to_string());
    }
    if any_trace {
        report.limitations.push(
            "the trace is a ring buffer (`max_entries`) and may start after the process did: states are rebuilt backwards from the snapshot, so memory allocated before the first entry shows as held from the start of the window, and the peak is the peak within the window".to_string(),
        );
    } else {
        report.limitations.push(
            "no allocation trace was recorded (`torch.cuda.memory._record_memory_history()` was off): OOM events and the peak cannot be found; only the state at snapshot time is shown".to_string(),
        );
    }
    if estimated_blocks {
        report.limitations.push(
            "blocks freed before the snapshot are sized from the trace's requested bytes rounded up to 512 bytes; PyTorch may have handed out up to 1 MiB more per block".to_string(),
        );
    }
    if snapshot.stacks.len() <= 1 {
        report.limitations.push(
            "no stacks were recorded (`_record_memory_history(stacks=...)`): allocation sites are unknown".to_string(),
        );
    }
    if snapshot.allocator_settings.is_none() {
        report.limitations.push(
            "the snapshot has no `allocator_settings` (PyTorch before 2.x?): settings in force are unknown, so suggestions may repeat one already set".to_string(),
        );
    }
    if report
        .ooms
        .iter()
        .any(|oom| oom.requested_bytes.0 <= 20 * MIB)
    {
        // `c10/cuda/CUDACachingAllocator.cpp`: requests up to 1 MiB reserve 2 MiB segments, up to 10 MiB 20 MiB.
        report.limitations.push(
            "an `oom` entry records the segment size the allocator tried to reserve (2 MiB or 20 MiB for small requests), which can exceed the tensor's own size, so a free block smaller than it may still have fitted the tensor".to_string(),
        );
    }
    if report.ooms.iter().any(|oom| oom.suggestion.is_some()) {
        report.limitations.push(
            "a snapshot does not record the PyTorch version: each suggested setting names the first version that has it".to_string(),
        );
    }
    let needs_total = report
        .ooms
        .iter()
        .any(|oom| oom.cause != Cause::Fragmentation && oom.outside_bytes.is_none());
    if needs_total && options.total_memory.is_none() {
        report.limitations.push(
            "the snapshot does not record the device's total memory: memory held by other processes cannot be told apart from a lack of capacity; pass `--total-memory` (the OOM message's `total capacity`)".to_string(),
        );
    }
    report
}

fn summarize_device(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    options: &Options,
    sites: &mut SiteNamer,
) -> DeviceSummary {
    let segments: Vec<_> = snapshot
        .segments
        .iter()
        .filter(|segment| segment.device == device)
        .collect();
    let mut buckets = vec![
        bucket("< 1 MiB", 0, Some(MIB)),
        bucket("1 MiB – 20 MiB", MIB, Some(20 * MIB)),
        bucket("20 MiB – 1 GiB", 20 * MIB, Some(GIB)),
        bucket("≥ 1 GiB", GIB, None),
    ];
    let mut pools: BTreeMap<((i64, i64), u64, SegmentType), PoolGroup> = BTreeMap::new();
    let mut summary = DeviceSummary {
        device,
        segments: segments.len() as u64,
        reserved_bytes: Bytes::ZERO,
        allocated_bytes: Bytes::ZERO,
        active_bytes: Bytes::ZERO,
        requested_bytes: Bytes::ZERO,
        free_bytes: Bytes::ZERO,
        inactive_split_bytes: Bytes::ZERO,
        largest_free_block_bytes: Bytes::ZERO,
        free_blocks_by_size: Vec::new(),
        segments_by_pool: Vec::new(),
        expandable_segments: 0,
        expandable_bytes: Bytes::ZERO,
        top_sites: Vec::new(),
        trace: None,
        segment_map: Vec::new(),
        timelines: Vec::new(),
    };
    let mut holders = SiteTotals::default();
    for segment in &segments {
        summary.reserved_bytes = summary.reserved_bytes + segment.total_size;
        summary.allocated_bytes = summary.allocated_bytes + segment.allocated_size;
        summary.active_bytes = summary.active_bytes + segment.active_size;
        summary.requested_bytes = summary.requested_bytes + segment.requested_size;
        if segment.is_expandable {
            summary.expandable_segments += 1;
            summary.expandable_bytes = summary.expandable_bytes + segment.total_size;
        }
        let group = pools
            .entry((segment.pool_id, segment.stream, segment.segment_type))
            .or_insert_with(|| PoolGroup {
                pool_id: segment.pool_id,
                stream: segment.stream,
                segment_type: segment.segment_type,
                segments: 0,
                reserved_bytes: Bytes::ZERO,
                allocated_bytes: Bytes::ZERO,
            });
        group.segments += 1;
        group.reserved_bytes = group.reserved_bytes + segment.total_size;
        group.allocated_bytes = group.allocated_bytes + segment.allocated_size;
        // PyTorch counts free blocks of split segments as `inactive_split`; not those of
        // expandable segments (measured: 0 with 50 free ranges mapped, oom_cases.json
        // `fragmentation_expandable`).
        let split = segment.blocks.len() > 1 && !segment.is_expandable;
        for block in &segment.blocks {
            match block.state {
                BlockState::Inactive => {
                    summary.free_bytes = summary.free_bytes + block.size;
                    if split {
                        summary.inactive_split_bytes = summary.inactive_split_bytes + block.size;
                    }
                    summary.largest_free_block_bytes =
                        summary.largest_free_block_bytes.max(block.size);
                    if let Some(bucket) = buckets.iter_mut().find(|b| {
                        block.size >= b.min_bytes && b.max_bytes.is_none_or(|max| block.size < max)
                    }) {
                        bucket.blocks += 1;
                        bucket.bytes = bucket.bytes + block.size;
                    }
                }
                BlockState::ActiveAllocated => {
                    holders.add(sites.site(block.stack), block.size.0);
                }
                BlockState::ActivePendingFree => {}
            }
        }
    }
    summary.free_blocks_by_size = buckets;
    summary.segments_by_pool = pools.into_values().collect();
    summary.top_sites = holders.top(sites, options.top_sites);

    let mut largest: Vec<_> = segments.clone();
    largest.sort_by(|a, b| {
        b.total_size
            .cmp(&a.total_size)
            .then(a.address.cmp(&b.address))
    });
    largest.truncate(options.map_segments);
    largest.sort_by_key(|segment| segment.address);
    summary.segment_map = largest
        .iter()
        .map(|segment| MapSegment {
            address: segment.address,
            total_size: segment.total_size,
            is_expandable: segment.is_expandable,
            blocks: segment
                .blocks
                .iter()
                .take(4096)
                .map(|block| (block.size, block.state))
                .collect(),
        })
        .collect();
    summary
}

fn bucket(label: &str, min: u64, max: Option<u64>) -> SizeBucket {
    SizeBucket {
        label: label.to_string(),
        min_bytes: Bytes(min),
        max_bytes: max.map(Bytes),
        blocks: 0,
        bytes: Bytes::ZERO,
    }
}

/// A hasher for addresses and indices: a multiply and a fold, enough for keys PyTorch
/// hands out (512-byte aligned), far cheaper than SipHash over millions of trace entries.
#[derive(Default)]
pub(crate) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }
    fn write_u64(&mut self, value: u64) {
        let mixed = (self.0 ^ value ^ (value >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = mixed ^ (mixed >> 32);
    }
}

/// A map keyed by addresses or indices, hashed with [`AddressHasher`].
pub(crate) type AddressMap<V> = HashMap<u64, V, BuildHasherDefault<AddressHasher>>;

#[derive(Clone, Copy)]
struct Live {
    size: u64,
    stack: StackId,
    pending: bool,
    /// Entry index of the `free_completed` that (undone) created this block, or `u32::MAX`.
    freed_at: u32,
}

#[derive(Clone, Copy)]
struct Seg {
    size: u64,
    expandable: bool,
}

/// The replay's state. Its `Clone` keeps the blocks map's layout (a `HashMap` clone copies
/// its table bucket for bucket), so a copy replayed on iterates its blocks in the order the
/// original would: pass 2 beside pass 1 relies on it (see `ahead`).
#[derive(Clone)]
struct State {
    segments: BTreeMap<u64, Seg>,
    blocks: AddressMap<Live>,
    allocated: u64,
    active: u64,
    reserved: u64,
    inconsistencies: u64,
    estimated_blocks: bool,
}

/// The blocks holding memory at the snapshot on `device` (allocated, or freed with the free
/// pending on a stream), with their addresses, in the snapshot's order of segments and blocks.
fn live_at_snapshot(
    snapshot: &Snapshot,
    device: CudaOrdinal,
) -> impl Iterator<Item = (u64, Live)> + '_ {
    snapshot
        .segments
        .iter()
        .filter(move |segment| segment.device == device)
        .flat_map(|segment| {
            segment.blocks.iter().filter_map(|block| {
                let pending = match block.state {
                    BlockState::Inactive => return None,
                    BlockState::ActiveAllocated => false,
                    BlockState::ActivePendingFree => true,
                };
                let live = Live {
                    size: block.size.0,
                    stack: block.stack,
                    pending,
                    freed_at: u32::MAX,
                };
                Some((block.address, live))
            })
        })
}

/// 512-byte rounding of a request (`round_size`, kMinBlockSize; `c10/cuda/CUDACachingAllocator.cpp`).
fn round_size(size: u64) -> u64 {
    size.max(1).div_ceil(512).saturating_mul(512)
}

impl State {
    fn at_snapshot(snapshot: &Snapshot, device: CudaOrdinal) -> State {
        let mut state = State {
            segments: BTreeMap::new(),
            blocks: AddressMap::default(),
            allocated: 0,
            active: 0,
            reserved: 0,
            inconsistencies: 0,
            estimated_blocks: false,
        };
        for segment in snapshot.segments.iter().filter(|s| s.device == device) {
            state.reserved = state.reserved.saturating_add(segment.total_size.0);
            state.insert_segment(segment.address, segment.total_size.0, segment.is_expandable);
        }
        for (address, live) in live_at_snapshot(snapshot, device) {
            state.active = state.active.saturating_add(live.size);
            if !live.pending {
                state.allocated = state.allocated.saturating_add(live.size);
            }
            state.blocks.insert(address, live);
        }
        state
    }

    fn insert_segment(&mut self, address: u64, size: u64, expandable: bool) {
        let mut start = address;
        let mut end = address.saturating_add(size);
        if expandable {
            // Mapped ranges of one expandable segment are contiguous memory: merge neighbours.
            if let Some((&previous, seg)) = self.segments.range(..address).next_back() {
                if seg.expandable && previous.checked_add(seg.size) == Some(address) {
                    start = previous;
                    self.segments.remove(&previous);
                }
            }
            if let Some(next) = self.segments.get(&end).copied() {
                if next.expandable {
                    self.segments.remove(&end);
                    end = end.saturating_add(next.size);
                }
            }
        }
        self.segments.insert(
            start,
            Seg {
                size: end - start,
                expandable,
            },
        );
    }

    fn remove_range(&mut self, address: u64, size: u64) -> bool {
        let Some((&start, &seg)) = self.segments.range(..=address).next_back() else {
            return false;
        };
        let end = address.saturating_add(size);
        let segment_end = start.saturating_add(seg.size);
        if segment_end < end {
            return false;
        }
        self.segments.remove(&start);
        if start < address {
            self.segments.insert(
                start,
                Seg {
                    size: address - start,
                    expandable: seg.expandable,
                },
            );
        }
        if end < segment_end {
            self.segments.insert(
                end,
                Seg {
                    size: segment_end - end,
                    expandable: seg.expandable,
                },
            );
        }
        true
    }

    /// Undoes one entry: the state becomes the one just before it.
    fn undo(&mut self, index: usize, entry: &TraceEntry, alloc_stacks: &mut [StackId]) {
        let addr = entry.addr;
        match entry.action() {
            Action::Alloc => match self.blocks.remove(&addr) {
                Some(live) => {
                    if !live.pending {
                        self.allocated -= live.size.min(self.allocated);
                    }
                    self.active -= live.size.min(self.active);
                    if let Some(slot) = alloc_stacks.get_mut(live.freed_at as usize) {
                        *slot = entry.stack;
                    }
                }
                None => self.inconsistencies += 1,
            },
            Action::FreeRequested => match self.blocks.get_mut(&addr) {
                Some(live) if live.pending => {
                    live.pending = false;
                    self.allocated = self.allocated.saturating_add(live.size);
                }
                Some(_) => self.inconsistencies += 1,
                None => {
                    let size = round_size(entry.size);
                    self.estimated_blocks = true;
                    self.allocated = self.allocated.saturating_add(size);
                    self.active = self.active.saturating_add(size);
                    self.blocks.insert(
                        addr,
                        Live {
                            size,
                            stack: entry.stack,
                            pending: false,
                            freed_at: u32::MAX,
                        },
                    );
                }
            },
            Action::FreeCompleted => {
                if self.blocks.contains_key(&addr) {
                    self.inconsistencies += 1;
                    return;
                }
                let size = round_size(entry.size);
                self.estimated_blocks = true;
                self.active = self.active.saturating_add(size);
                let stack = alloc_stacks.get(index).copied().unwrap_or(entry.stack);
                self.blocks.insert(
                    addr,
                    Live {
                        size,
                        stack: if stack == u32::MAX {
                            entry.stack
                        } else {
                            stack
                        },
                        pending: true,
                        freed_at: index as u32,
                    },
                );
            }
            Action::SegmentAlloc => match self.segments.remove(&addr) {
                Some(seg) => self.reserved -= seg.size.min(self.reserved),
                None => self.inconsistencies += 1,
            },
            Action::SegmentFree => {
                self.reserved = self.reserved.saturating_add(entry.size);
                self.segments.insert(
                    addr,
                    Seg {
                        size: entry.size,
                        expandable: false,
                    },
                );
            }
            Action::SegmentMap => {
                if self.remove_range(addr, entry.size) {
                    self.reserved -= entry.size.min(self.reserved);
                } else {
                    self.inconsistencies += 1;
                }
            }
            Action::SegmentUnmap => {
                self.reserved = self.reserved.saturating_add(entry.size);
                self.insert_segment(addr, entry.size, true);
            }
            Action::Snapshot | Action::Oom | Action::Other => {}
        }
    }

    /// Largest contiguous range inside one segment not covered by an active block.
    fn largest_free(&self) -> u64 {
        let mut blocks: Vec<(u64, u64)> = self
            .blocks
            .iter()
            .map(|(&address, live)| (address, live.size))
            .collect();
        blocks.sort_unstable();
        let mut largest = 0;
        let mut next_block = 0;
        for (&start, seg) in &self.segments {
            let end = start.saturating_add(seg.size);
            while next_block < blocks.len() && blocks[next_block].0 < start {
                next_block += 1;
            }
            let mut cursor = start;
            let mut index = next_block;
            while index < blocks.len() && blocks[index].0 < end {
                let (address, size) = blocks[index];
                largest = largest.max(address.saturating_sub(cursor));
                cursor = cursor.max(address.saturating_add(size));
                index += 1;
            }
            largest = largest.max(end.saturating_sub(cursor));
        }
        largest
    }

    fn view(&self) -> AllocatorState {
        AllocatorState {
            allocated_bytes: Bytes(self.allocated),
            reserved_bytes: Bytes(self.reserved),
            active_bytes: Bytes(self.active),
            free_bytes: Bytes(self.reserved.saturating_sub(self.active)),
            largest_free_block_bytes: Bytes(self.largest_free()),
            segments: self.segments.len() as u64,
        }
    }

    /// The sites holding most memory, their blocks named in address order (as
    /// [`ahead::held`] lists them).
    fn holders(&self, sites: &mut SiteNamer, top: usize) -> Vec<Site> {
        let mut held: Vec<(u64, StackId, u64)> = self
            .blocks
            .iter()
            .filter(|(_, live)| !live.pending)
            .map(|(&address, live)| (address, live.stack, live.size))
            .collect();
        held.sort_unstable_by_key(|&(address, _, _)| address);
        let mut totals = SiteTotals::default();
        for (_, stack, size) in held {
            totals.add(sites.site(stack), size);
        }
        totals.top(sites, top)
    }
}

struct Replay {
    summary: TraceSummary,
    estimated_blocks: bool,
}

/// Most threads the analysis of one device uses.
const MAX_ANALYSIS_THREADS: usize = 16;

/// Traces at least this long are analysed on several threads (shorter ones on this thread:
/// the report is the same, a thread costs more than it saves).
const THREADED_ANALYSIS_ENTRIES: usize = 100_000;

/// What the replay's first pass learns: the peak `(allocated, reserved, index)`, each freed
/// block's allocation stack (by the index of its `free_completed`), and the state's checks.
#[derive(Debug, PartialEq, Eq)]
struct FirstPass {
    peak: (u64, u64, usize),
    alloc_stacks: Vec<StackId>,
    inconsistencies: u64,
    estimated_blocks: bool,
}

/// Pass 1 over a non-empty trace: totals and the peak; learn each freed block's allocation
/// stack. Split by block address over `threads` threads where the trace is long, and then
/// also growth by stack and, where no OOM is judged (of the first `max_ooms`), the blocks
/// holding memory at the peak, in address order, replayed on the same shards (pass 2's only
/// stop).
fn first_pass(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    threads: usize,
    max_ooms: usize,
) -> (FirstPass, Option<Extras>) {
    let _timing = profile::phase(|| "analysis: replay pass 1".to_string());
    if threads > 1 && trace.len() >= THREADED_ANALYSIS_ENTRIES {
        if let Some(sharded) =
            sharded::first_pass_sharded_with(snapshot, device, trace, threads, max_ooms)
        {
            let extras = Extras {
                peak_held: sharded.peak_held,
                growth: sharded.growth,
                counted: sharded.counted,
            };
            return (sharded.first, Some(extras));
        }
    }
    (first_pass_here(snapshot, device, trace), None)
}

/// What pass 1 on shards learns besides [`FirstPass`] (see `sharded::Sharded`).
struct Extras {
    peak_held: Option<Vec<ahead::Held>>,
    growth: growth::StackGrowth,
    counted: Counted,
}

/// A trace's entries by action code and the indices of its `oom` entries, in order.
type Counted = ([u64; Action::COUNT], Vec<usize>);

/// [`Counted`] of `trace`, in one walk.
fn count_actions(trace: &Trace) -> Counted {
    let _timing = profile::phase(|| "analysis: count the actions".to_string());
    let mut counts = [0u64; Action::COUNT];
    let mut oom_indices = Vec::new();
    for (index, entry) in trace.iter().enumerate() {
        let code = entry.action_code();
        counts[code] += 1;
        if code == Action::Oom.code() {
            oom_indices.push(index);
        }
    }
    (counts, oom_indices)
}

/// [`first_pass`] on this thread alone.
fn first_pass_here(snapshot: &Snapshot, device: CudaOrdinal, trace: &Trace) -> FirstPass {
    let mut alloc_stacks = vec![u32::MAX; trace.len()];
    let mut state = State::at_snapshot(snapshot, device);
    let mut peak = (
        state.allocated,
        state.reserved,
        trace.len().saturating_sub(1),
    );
    for (index, entry) in trace.range(0, trace.len()).rev() {
        if state.allocated >= peak.0 {
            peak = (state.allocated, state.reserved, index);
        }
        state.undo(index, entry, &mut alloc_stacks);
    }
    FirstPass {
        peak,
        alloc_stacks,
        inconsistencies: state.inconsistencies,
        estimated_blocks: state.estimated_blocks,
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the analysis' state and the two passes' results"
)]
fn replay_device(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    options: &Options,
    sites: &mut SiteNamer,
    report: &mut SnapshotReport,
    first: FirstPass,
    ahead: Option<ahead::Ahead>,
    counted: Option<Counted>,
) -> Replay {
    // Counted in pass 1's pieces on threads, or here.
    let (counts, oom_indices) = counted.unwrap_or_else(|| count_actions(trace));
    let actions: BTreeMap<Action, u64> = Action::ALL
        .iter()
        .zip(counts)
        .filter(|(_, count)| *count > 0)
        .map(|(action, count)| (*action, count))
        .collect();
    let detailed: Vec<usize> = oom_indices.iter().copied().take(options.max_ooms).collect();
    report.ooms_not_analysed += (oom_indices.len() - detailed.len()) as u64;

    let FirstPass {
        peak,
        mut alloc_stacks,
        inconsistencies,
        mut estimated_blocks,
    } = first;
    let timing = profile::phase(|| "analysis: replay pass 2".to_string());

    // Pass 2: stop at each OOM and at the peak.
    let mut stops: Vec<usize> = detailed.clone();
    stops.push(peak.2);
    stops.sort_unstable();
    stops.dedup();
    let mut peak_sites = Vec::new();
    let mut oom_states: HashMap<usize, (AllocatorState, Vec<Site>)> = HashMap::new();
    let ahead = ahead.and_then(|mut ahead| {
        let held = ahead.peak_blocks(peak.2, snapshot, device, trace)?;
        Some((ahead, held))
    });
    if let Some((ahead, peak_held)) = ahead {
        // Pass 2 ran beside pass 1: its stops' blocks are named here, in the order the
        // replay below names them (stops from the last; at one index the peak first).
        let mut ooms: HashMap<usize, (AllocatorState, Vec<ahead::Held>)> = ahead
            .ooms
            .into_iter()
            .map(|(index, view, held)| (index, (view, held)))
            .collect();
        for &index in stops.iter().rev() {
            if index == peak.2 {
                peak_sites = held_sites(&peak_held, &alloc_stacks, sites, options.top_sites);
            }
            if detailed.contains(&index) {
                if let Some((view, held)) = ooms.remove(&index) {
                    let top = held_sites(&held, &alloc_stacks, sites, options.top_sites);
                    oom_states.insert(index, (view, top));
                }
            }
        }
        estimated_blocks |= ahead.estimated_blocks;
        drop(timing);
        drop(profile::phase(|| "analysis: pass 2 was ahead".to_string()));
        return finish_replay(
            snapshot,
            device,
            trace,
            options,
            sites,
            report,
            Finish {
                detailed,
                oom_states,
                peak_sites,
                peak,
                actions,
                inconsistencies,
                estimated_blocks,
            },
        );
    }
    let mut state = State::at_snapshot(snapshot, device);
    // Pass 2 writes the same allocation stacks as pass 1 did, so it can share them.
    let earliest = stops.first().copied().unwrap_or(0);
    let mut next_stop = stops.len();
    for (index, entry) in trace.range(earliest, trace.len()).rev() {
        if next_stop > 0 && stops[next_stop - 1] == index {
            next_stop -= 1;
            if index == peak.2 {
                peak_sites = state.holders(sites, options.top_sites);
            }
            if detailed.contains(&index) {
                oom_states.insert(
                    index,
                    (state.view(), state.holders(sites, options.top_sites)),
                );
            }
        }
        state.undo(index, entry, &mut alloc_stacks);
    }
    estimated_blocks |= state.estimated_blocks;
    drop(timing);
    finish_replay(
        snapshot,
        device,
        trace,
        options,
        sites,
        report,
        Finish {
            detailed,
            oom_states,
            peak_sites,
            peak,
            actions,
            inconsistencies,
            estimated_blocks,
        },
    )
}

/// What pass 2 found, for [`finish_replay`].
struct Finish {
    detailed: Vec<usize>,
    oom_states: HashMap<usize, (AllocatorState, Vec<Site>)>,
    peak_sites: Vec<Site>,
    peak: (u64, u64, usize),
    actions: BTreeMap<Action, u64>,
    inconsistencies: u64,
    estimated_blocks: bool,
}

/// The sites holding most of the blocks `held`, named in their order (as
/// [`State::holders`] names a map's blocks).
fn held_sites(
    held: &[ahead::Held],
    alloc_stacks: &[StackId],
    sites: &mut SiteNamer,
    top: usize,
) -> Vec<Site> {
    let mut totals = SiteTotals::default();
    for block in held {
        totals.add(sites.site(ahead::stack_of(block, alloc_stacks)), block.2);
    }
    totals.top(sites, top)
}

/// The OOMs judged and the trace's summary, after pass 2.
fn finish_replay(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    options: &Options,
    sites: &mut SiteNamer,
    report: &mut SnapshotReport,
    finish: Finish,
) -> Replay {
    let Finish {
        detailed,
        mut oom_states,
        peak_sites,
        peak,
        actions,
        inconsistencies,
        estimated_blocks,
    } = finish;
    for index in detailed {
        let entry = &trace[index];
        let Some((at_oom, top_sites)) = oom_states.remove(&index) else {
            continue;
        };
        let stream = snapshot
            .streams
            .get(entry.stream_index() as usize)
            .copied()
            .unwrap_or(0);
        let request_site = (entry.stack != 0).then(|| {
            let site = sites.site(entry.stack);
            sites.name(site)
        });
        report.ooms.push(judge(
            device,
            index,
            entry,
            stream,
            at_oom,
            top_sites,
            request_site,
            snapshot.allocator_settings.as_ref(),
            options.total_memory,
        ));
    }

    let summary = TraceSummary {
        entries: trace.len() as u64,
        actions,
        first_time_us: trace.first().map_or(0, |e| e.time_us),
        last_time_us: trace.last().map_or(0, |e| e.time_us),
        peak: Some(Peak {
            allocated_bytes: Bytes(peak.0),
            reserved_bytes: Bytes(peak.1),
            time_us: trace[peak.2].time_us,
            entry: peak.2 as u64,
            inside: Vec::new(),
            top_sites: peak_sites,
        }),
        inconsistencies,
        growth: Vec::new(),
    };
    Replay {
        summary,
        estimated_blocks,
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the fields of one verdict"
)]
fn judge(
    device: CudaOrdinal,
    index: usize,
    entry: &TraceEntry,
    stream: u64,
    at_oom: AllocatorState,
    top_sites: Vec<Site>,
    request_site: Option<String>,
    settings: Option<&AllocatorSettings>,
    total: Option<Bytes>,
) -> OomAnalysis {
    let request = Bytes(entry.size);
    let device_free = Bytes(entry.device_free().unwrap_or(0));
    let free = at_oom.free_bytes;
    let largest = at_oom.largest_free_block_bytes;
    let fits_if_compacted = free.0.saturating_add(device_free.0) >= request.0;
    let outside = total.map(|total| {
        total
            .saturating_sub(device_free)
            .saturating_sub(at_oom.reserved_bytes)
    });
    let (cause, explanation) = if largest >= request {
        (
            Cause::Other,
            format!(
                "a free cached block of {largest} could have held the {request} request, yet the allocation failed: it was likely on another stream or in a private pool (CUDA graphs), or `max_split_size` kept it from being split"
            ),
        )
    } else if free >= request {
        (
            Cause::Fragmentation,
            format!(
                "{free} was reserved by PyTorch but free, enough for the {request} request in total, but the largest free block was {largest}: the free memory was split into pieces no single allocation could use"
            ),
        )
    } else if fits_if_compacted {
        // Not a lack of capacity: the memory was there, split between the device and cached
        // blocks inside segments that also held live blocks (PyTorch releases whole free
        // segments before it reports an OOM, never part of one).
        (
            Cause::Fragmentation,
            format!(
                "{device_free} free on the device plus {free} free in PyTorch's cache would have held the {request} request, but the cached part sat in segments that also held live blocks, so it could not be returned to the device; the largest free block was {largest}"
            ),
        )
    } else {
        let shortfall = request.saturating_sub(device_free).saturating_sub(free);
        match (total, outside) {
            (Some(total), Some(outside)) if outside >= shortfall && outside.0 > total.0 / 20 => (
                Cause::Other,
                format!(
                    "{outside} of the device's {total} was held outside this process's PyTorch allocator (other processes, or this process's CUDA context, NCCL or cuBLAS buffers); without it the {request} request would have fit (only {device_free} was free on the device and {free} in PyTorch's cache)"
                ),
            ),
            (Some(total), _) if request > total => (
                Cause::Capacity,
                format!("the {request} request is larger than the whole device ({total})"),
            ),
            _ => (
                Cause::Capacity,
                format!(
                    "the {request} request was larger than the {device_free} free on the device plus the {free} free in PyTorch's cache, while {} was allocated by this process",
                    at_oom.allocated_bytes
                ),
            ),
        }
    };
    let settings_in_force = settings.map(in_force).unwrap_or_default();
    let suggestion = suggest(cause, settings);
    OomAnalysis {
        device,
        entry: index as u64,
        time_us: entry.time_us,
        stream,
        requested_bytes: request,
        device_free_bytes: device_free,
        at_oom,
        cause,
        explanation,
        fits_if_compacted,
        outside_bytes: outside,
        settings_in_force,
        suggestion,
        request_site,
        inside: Vec::new(),
        top_sites,
    }
}

/// The allocator settings that differ from the defaults, as `key:value`.
fn in_force(settings: &AllocatorSettings) -> Vec<String> {
    let mut out = Vec::new();
    if settings.expandable_segments {
        out.push("expandable_segments:True".to_string());
    }
    if let Some(max) = settings.max_split_size {
        out.push(format!("max_split_size_mb:{}", max.0 / MIB));
    }
    if settings.garbage_collection_threshold > 0.0 {
        out.push(format!(
            "garbage_collection_threshold:{}",
            settings.garbage_collection_threshold
        ));
    }
    if out.is_empty() {
        out.push("defaults (`PYTORCH_CUDA_ALLOC_CONF` unset)".to_string());
    }
    out
}

/// The setting to try, as documented for the PyTorch versions that have it, never one
/// already in force. `expandable_segments` exists from 2.1 and the OOM message recommends
/// it from 2.2 (PyTorch 2.2+ wording); `max_split_size_mb` from 1.10 (PyTorch 1.10+ wording);
/// `garbage_collection_threshold` is documented in the same CUDA memory-management notes.
fn suggest(cause: Cause, settings: Option<&AllocatorSettings>) -> Option<String> {
    // A lack of capacity is never helped by an allocator setting (#16): only fragmentation is.
    if cause != Cause::Fragmentation {
        return None;
    }
    let expandable = settings.is_some_and(|s| s.expandable_segments);
    if !expandable {
        return Some(
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1 or later): free pages are unmapped and mapped again where a large block is needed, so split free memory can serve one request".to_string(),
        );
    }
    if settings.is_some_and(|s| s.max_split_size.is_none()) {
        return Some(
            "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512 (with expandable_segments already on): cached blocks larger than this are not split for small requests".to_string(),
        );
    }
    if settings.is_some_and(|s| s.garbage_collection_threshold <= 0.0) {
        return Some(
            "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.8: the allocator frees unused cached blocks before the cache fills up".to_string(),
        );
    }
    None
}

/// A block holding allocated memory at some point of a trace (`snapshot diff`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LiveBlock {
    pub address: u64,
    pub size: u64,
    pub stack: StackId,
}

/// Where a device's allocated memory stood at two moments: the peak of the trace window and
/// the first OOM (or, without one, the snapshot itself).
#[derive(Debug, Clone, Default)]
pub(crate) struct Moments {
    /// Allocated blocks at the peak (`None` without a trace).
    pub peak: Option<(i64, Vec<LiveBlock>)>,
    /// Index of the trace entry after which the peak was reached.
    pub peak_index: Option<usize>,
    /// Index of the entry of `last`: the OOM, or the last entry (`None` without a trace).
    pub last_index: Option<usize>,
    /// `true` when `last` is at the first OOM, `false` at the snapshot.
    pub last_is_oom: bool,
    /// Allocated blocks at the first OOM or at the snapshot, with the time (0 at the snapshot).
    pub last: (i64, Vec<LiveBlock>),
}

impl State {
    fn live(&self) -> Vec<LiveBlock> {
        let mut blocks: Vec<LiveBlock> = self
            .blocks
            .iter()
            .filter(|(_, live)| !live.pending)
            .map(|(&address, live)| LiveBlock {
                address,
                size: live.size,
                stack: live.stack,
            })
            .collect();
        blocks.sort_unstable_by_key(|block| block.address);
        blocks
    }
}

/// The allocated blocks of `device` at its peak and at its first OOM (or the snapshot), by
/// the same backward replay as [`analyze`].
pub(crate) fn moments(snapshot: &Snapshot, device: CudaOrdinal) -> Moments {
    let trace = snapshot.trace(device.get() as usize);
    let at_end = State::at_snapshot(snapshot, device);
    if trace.is_empty() {
        return Moments {
            peak: None,
            peak_index: None,
            last_index: None,
            last_is_oom: false,
            last: (0, at_end.live()),
        };
    }
    let first_oom = trace
        .iter()
        .position(|entry| entry.action_code() == Action::Oom.code());
    let mut alloc_stacks = vec![u32::MAX; trace.len()];
    let mut state = State::at_snapshot(snapshot, device);
    let mut peak = (state.allocated, trace.len() - 1);
    for (index, entry) in trace.range(0, trace.len()).rev() {
        if state.allocated >= peak.0 {
            peak = (state.allocated, index);
        }
        state.undo(index, entry, &mut alloc_stacks);
    }
    let mut state = at_end;
    let mut moments = Moments {
        peak: None,
        peak_index: Some(peak.1),
        last_index: Some(first_oom.unwrap_or(trace.len() - 1)),
        last_is_oom: first_oom.is_some(),
        last: (0, Vec::new()),
    };
    if first_oom.is_none() {
        moments.last = (trace[trace.len() - 1].time_us, state.live());
    }
    let earliest = first_oom.map_or(peak.1, |oom| oom.min(peak.1));
    for (index, entry) in trace.range(earliest, trace.len()).rev() {
        if index == peak.1 {
            moments.peak = Some((entry.time_us, state.live()));
        }
        if Some(index) == first_oom {
            moments.last = (entry.time_us, state.live());
        }
        state.undo(index, entry, &mut alloc_stacks);
    }
    moments
}

/// The allocation site of a stack (the first user frame) and its Python frames.
pub(crate) struct Sites<'s>(SiteNamer<'s>);

impl<'s> Sites<'s> {
    /// Sites of `snapshot`'s stacks.
    pub fn new(snapshot: &'s Snapshot) -> Self {
        Sites(SiteNamer::new(snapshot))
    }

    /// A number for the stack's site, the same for every stack of that site.
    pub fn id(&mut self, stack: StackId) -> u32 {
        self.0.site(stack)
    }

    /// The site's name and up to six Python frames, innermost first.
    pub fn of(&mut self, stack: StackId) -> (String, Vec<String>) {
        let site = self.0.site(stack);
        (
            self.0.name(site),
            self.0
                .python_frames
                .get(site as usize)
                .cloned()
                .unwrap_or_default(),
        )
    }
}

/// Names stacks by their allocation site, caching per stack.
struct SiteNamer<'s> {
    snapshot: &'s Snapshot,
    by_stack: Vec<u32>,
    names: Vec<String>,
    python_frames: Vec<Vec<String>>,
    cpp_frames: Vec<u64>,
    index: HashMap<String, u32>,
}

const NO_SITE: u32 = u32::MAX;

impl<'s> SiteNamer<'s> {
    fn new(snapshot: &'s Snapshot) -> Self {
        SiteNamer {
            snapshot,
            by_stack: vec![NO_SITE; snapshot.stacks.len()],
            names: Vec::new(),
            python_frames: Vec::new(),
            cpp_frames: Vec::new(),
            index: HashMap::new(),
        }
    }

    fn site(&mut self, stack: StackId) -> u32 {
        if let Some(&site) = self.by_stack.get(stack as usize) {
            if site != NO_SITE {
                return site;
            }
        }
        let frames = self.snapshot.stack_frames(stack);
        let python: Vec<_> = frames.iter().filter(|frame| frame.is_python()).collect();
        let cpp = (frames.len() - python.len()) as u64;
        let name = if frames.is_empty() {
            "<no frames recorded>".to_string()
        } else if let Some(frame) = python
            .iter()
            .find(|frame| !is_library(&frame.filename))
            .or(python.first())
        {
            format!("{}:{} {}", frame.filename, frame.line, frame.name)
        } else {
            let frame = frames
                .iter()
                .find(|frame| !is_allocator_internal(&frame.name))
                .unwrap_or(&frames[0]);
            let mut name: String = frame.name.chars().take(120).collect();
            if frame.name.len() > name.len() {
                name.push('…');
            }
            format!("<C++> {name}")
        };
        let site = match self.index.get(&name) {
            Some(&site) => site,
            None => {
                let site = self.names.len() as u32;
                self.index.insert(name.clone(), site);
                self.names.push(name);
                self.python_frames.push(
                    python
                        .iter()
                        .take(6)
                        .map(|frame| format!("{}:{} {}", frame.filename, frame.line, frame.name))
                        .collect(),
                );
                self.cpp_frames.push(cpp);
                site
            }
        };
        if let Some(slot) = self.by_stack.get_mut(stack as usize) {
            *slot = site;
        }
        site
    }

    fn name(&self, site: u32) -> String {
        self.names.get(site as usize).cloned().unwrap_or_default()
    }
}

/// Frames of libraries (torch itself, site-packages, the standard library) are not the
/// user's allocation site.
fn is_library(filename: &str) -> bool {
    filename.contains("/site-packages/")
        || filename.contains("/dist-packages/")
        || filename.contains("/torch/")
        || filename.contains("/lib/python3")
}

fn is_allocator_internal(name: &str) -> bool {
    [
        "unwind",
        "CapturedTraceback",
        "gather_with_cpp",
        "CachingAllocator",
        "c10::cuda::",
        "empty_strided",
        "at::detail::empty",
    ]
    .iter()
    .any(|needle| name.contains(needle))
}

#[derive(Default)]
struct SiteTotals {
    totals: HashMap<u32, (u64, u64)>,
}

impl SiteTotals {
    fn add(&mut self, site: u32, bytes: u64) {
        let entry = self.totals.entry(site).or_insert((0, 0));
        entry.0 = entry.0.saturating_add(bytes);
        entry.1 += 1;
    }

    fn top(self, sites: &SiteNamer, n: usize) -> Vec<Site> {
        let mut all: Vec<_> = self.totals.into_iter().collect();
        all.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
        all.into_iter()
            .take(n)
            .map(|(site, (bytes, blocks))| Site {
                site: sites.name(site),
                bytes: Bytes(bytes),
                blocks,
                python_frames: sites
                    .python_frames
                    .get(site as usize)
                    .cloned()
                    .unwrap_or_default(),
                cpp_frames: sites.cpp_frames.get(site as usize).copied().unwrap_or(0),
            })
            .collect()
    }
}

/// Refuses a device total (`--total-memory`) below what PyTorch itself had reserved on a
/// device of the snapshot: that total cannot be the device's, and every figure derived from it
/// (memory held outside the allocator, the verdict) would be wrong.
pub fn check_total_memory(report: &SnapshotReport, total: Bytes) -> Result<(), HintedError> {
    match report
        .devices
        .iter()
        .find(|device| device.reserved_bytes > total)
    {
        Some(device) => Err(HintedError::new(
            format!(
                "`--total-memory {total}` is less than the {} PyTorch had reserved on device {} in the snapshot",
                device.reserved_bytes, device.device
            ),
            "give that GPU's total memory: the OOM message's `total capacity`, e.g. `139.80GiB`",
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::torch_snapshot;

    fn fixture_bytes(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/h200-torch2.11/snap/{name}.pickle",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(path).unwrap()
    }

    fn report(name: &str, total: Option<Bytes>) -> SnapshotReport {
        let snapshot = torch_snapshot::parse(&fixture_bytes(name)).unwrap();
        analyze(
            &snapshot,
            &Options {
                total_memory: total,
                ..Options::default()
            },
        )
    }

    const H200_TOTAL: Bytes = Bytes(150109880320);

    /// Numbers from `oom_cases.json` (`memory_stats()` right after the OOM).
    #[test]
    fn fragmentation_fixture_is_fragmentation() {
        let report = report("fragmentation", Some(H200_TOTAL));
        let device = &report.devices[0];
        assert_eq!(device.reserved_bytes, Bytes(149021523968));
        assert_eq!(device.allocated_bytes, Bytes(95334432768));
        assert_eq!(device.inactive_split_bytes, Bytes(53687091200));
        assert_eq!(device.largest_free_block_bytes, Bytes(1 << 30));
        let oom = &report.ooms[0];
        assert_eq!(oom.cause, Cause::Fragmentation);
        assert_eq!(oom.requested_bytes, Bytes(2 << 30));
        assert_eq!(oom.device_free_bytes, Bytes(535953408));
        assert_eq!(oom.at_oom.allocated_bytes, Bytes(95334432768));
        assert_eq!(oom.at_oom.reserved_bytes, Bytes(149021523968));
        assert_eq!(oom.at_oom.largest_free_block_bytes, Bytes(1 << 30));
        assert_eq!(device.trace.as_ref().unwrap().inconsistencies, 0);
        assert!(oom
            .suggestion
            .as_deref()
            .unwrap()
            .contains("expandable_segments:True"));
    }

    #[test]
    fn expandable_segments_avoided_the_oom() {
        let report = report("fragmentation_expandable", Some(H200_TOTAL));
        assert!(report.ooms.is_empty());
        let device = &report.devices[0];
        assert_eq!(device.reserved_bytes, Bytes(98335457280));
        assert_eq!(device.allocated_bytes, Bytes(97480998912));
        let trace = device.trace.as_ref().unwrap();
        assert_eq!(trace.inconsistencies, 0);
        assert_eq!(
            trace.peak.as_ref().unwrap().allocated_bytes,
            Bytes(107374182400)
        );
    }

    #[test]
    fn capacity_and_other_process_are_not_fragmentation() {
        let capacity = report("capacity", Some(H200_TOTAL));
        assert_eq!(capacity.ooms[0].cause, Cause::Capacity);
        assert_eq!(capacity.ooms[0].suggestion, None);
        let other = report("other_process", Some(H200_TOTAL));
        assert_eq!(other.ooms[0].cause, Cause::Other);
        assert_eq!(other.ooms[0].at_oom.allocated_bytes, Bytes(8589934592));
        assert_eq!(other.ooms[0].at_oom.reserved_bytes, Bytes(8589934592));
        let unknown_total = report("other_process", None);
        assert_eq!(unknown_total.ooms[0].cause, Cause::Capacity);
    }

    /// A verdict judged on made-up numbers: 10 GiB requested, `device_free` and `cached`
    /// free, the largest cached free block 1 GiB.
    fn judged(device_free: u64, cached: u64) -> OomAnalysis {
        const GIB: u64 = 1 << 30;
        let entry = TraceEntry::new(Action::Oom, device_free * GIB, 10 * GIB, 5, 0, 0);
        let at_oom = AllocatorState {
            allocated_bytes: Bytes(100 * GIB),
            reserved_bytes: Bytes((100 + cached) * GIB),
            active_bytes: Bytes(100 * GIB),
            free_bytes: Bytes(cached * GIB),
            largest_free_block_bytes: Bytes(GIB),
            segments: 40,
        };
        let settings = AllocatorSettings::default();
        judge(
            CudaOrdinal(0),
            0,
            &entry,
            0,
            at_oom,
            Vec::new(),
            None,
            Some(&settings),
            None,
        )
    }

    /// #16: a `capacity` verdict never comes with an allocator setting to try; memory that
    /// was there (device free plus cache) but split is fragmentation, and says so.
    #[test]
    fn capacity_never_suggests_expandable_segments() {
        let short = judged(2, 3);
        assert_eq!(short.cause, Cause::Capacity);
        assert!(!short.fits_if_compacted);
        assert_eq!(short.suggestion, None);
        let split = judged(6, 5);
        assert!(split.fits_if_compacted);
        assert_eq!(split.cause, Cause::Fragmentation);
        assert!(split.explanation.contains("could not be returned"));
        assert!(split
            .suggestion
            .as_deref()
            .is_some_and(|s| s.contains("expandable_segments:True")));
    }

    /// #16: a site allocating again and again without freeing is named, with its count
    /// and bytes; a steady loop, a one-time construction and a forward pass are not growth.
    #[test]
    fn growth_by_site_names_the_growing_site_only() {
        let growing = report("leak_growing", None);
        let growth = &growing.devices[0].trace.as_ref().unwrap().growth;
        assert_eq!(growth.len(), 1, "{growth:?}");
        // leak_growing.py kept 20 tensors from one line (and one from another, once).
        assert_eq!(growth[0].never_freed, 20);
        assert_eq!(growth[0].allocations, 20);
        assert_eq!(growth[0].quarters, 4);
        let snapshot = torch_snapshot::parse(&fixture_bytes("leak_growing")).unwrap();
        let mut sites = Sites::new(&snapshot);
        let allocated: u64 = snapshot.traces[0]
            .iter()
            .filter(|e| e.action() == Action::Alloc && sites.of(e.stack).0 == growth[0].site)
            .map(|e| e.size)
            .sum();
        assert_eq!(growth[0].never_freed_bytes, Bytes(allocated));
        assert_eq!(allocated, 5 * (1 << 30) + 15 * (256 << 20));
        for name in ["leak_steady", "model_forward", "fragmentation", "capacity"] {
            let report = report(name, None);
            for device in &report.devices {
                let growth = device.trace.as_ref().map(|t| t.growth.len()).unwrap_or(0);
                assert_eq!(growth, 0, "{name}");
            }
        }
    }

    #[test]
    fn replay_is_consistent_on_every_fixture() {
        for name in ["model_forward", "leak_growing", "leak_steady"] {
            let report = report(name, None);
            let trace = report.devices[0].trace.as_ref().unwrap();
            assert_eq!(trace.inconsistencies, 0, "{name}");
        }
    }

    #[test]
    fn largest_free_counts_gaps_within_one_segment_only() {
        let mut state = State {
            segments: BTreeMap::new(),
            blocks: AddressMap::default(),
            allocated: 0,
            active: 0,
            reserved: 0,
            inconsistencies: 0,
            estimated_blocks: false,
        };
        state.segments.insert(
            0,
            Seg {
                size: 100,
                expandable: false,
            },
        );
        state.segments.insert(
            100,
            Seg {
                size: 100,
                expandable: false,
            },
        );
        let live = Live {
            size: 10,
            stack: 0,
            pending: false,
            freed_at: u32::MAX,
        };
        state.blocks.insert(90, live);
        state.blocks.insert(100, live);
        assert_eq!(state.largest_free(), 90);
    }
}
