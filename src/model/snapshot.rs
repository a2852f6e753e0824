//! A PyTorch memory snapshot as read (`Snapshot`), and what `oomdoc snapshot` concludes
//! from it (`SnapshotReport`).
//!
//! Plain data: no parsing or analysis here. The schema follows `torch/cuda/memory.py` `_snapshot()`
//! (PyTorch 2.11, measured). Frames are interned: a stack is a list of frame ids, and
//! blocks and trace entries refer to a stack by id, so millions of trace entries sharing
//! a few tracebacks cost a few bytes each.

use std::collections::BTreeMap;

use serde::Serialize;

use super::gpu::CudaOrdinal;
use super::Bytes;

/// Index into [`Snapshot::stacks`]; stack 0 is always the empty stack.
pub type StackId = u32;

/// A decoded `torch.cuda.memory._snapshot()`.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Every segment of every device, at snapshot time.
    pub segments: Vec<Segment>,
    /// `device_traces`: one trace per device ordinal (the index).
    pub traces: Vec<Trace>,
    /// `allocator_settings` (2.11 has it; older snapshots do not).
    pub allocator_settings: Option<AllocatorSettings>,
    /// Interned frames.
    pub frames: Vec<Frame>,
    /// Interned stacks: frame ids, innermost first (as PyTorch lists them).
    pub stacks: Vec<Vec<u32>>,
    /// Interned raw stream pointers; trace entries refer to them by index.
    pub streams: Vec<u64>,
    /// `external_annotations`: `record_function` ranges (`stage` `START`/`END`), in order.
    pub annotations: Vec<Annotation>,
    /// Top-level keys the reader did not use.
    pub other_keys: Vec<String>,
}

impl Snapshot {
    /// The trace of device ordinal `device` (empty where none was recorded).
    pub fn trace(&self, device: usize) -> &Trace {
        static NONE: Trace = Trace::new();
        self.traces.get(device).unwrap_or(&NONE)
    }

    /// The frames of an interned stack, innermost first; empty for an unknown stack id.
    pub fn stack_frames(&self, stack: StackId) -> Vec<&Frame> {
        self.stacks
            .get(stack as usize)
            .map(|ids| {
                ids.iter()
                    .filter_map(|&id| self.frames.get(id as usize))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// One entry of `external_annotations` (PyTorch records one at the start and one at the end
/// of every `record_function` range of user scope while history is recorded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// `device`.
    pub device: i64,
    /// `time_us` (0 when absent).
    pub time_us: i64,
    /// `name`: the `record_function` name (empty when absent).
    pub name: String,
    /// `stage`: `START` or `END` (PyTorch's words); anything else is an instant.
    pub stage: String,
}

/// A named range of the trace's time, from `external_annotations` (`record_function`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedRange {
    /// Device ordinal.
    pub device: i64,
    /// The `record_function` name.
    pub name: String,
    /// `time_us` of its `START`.
    pub start_us: i64,
    /// `time_us` of its `END`; `None` when the snapshot was taken (or failed) inside it.
    pub end_us: Option<i64>,
    /// Ranges it is nested in (0 = outermost).
    pub depth: u32,
}

/// One frame of a recorded stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Frame {
    /// Function name (C++ frames: demangled signature).
    pub name: String,
    /// File name; C++ frames have `??`, `` or a basename.
    pub filename: String,
    /// Line number; 0 for C++ frames.
    pub line: i64,
}

impl Frame {
    /// Whether this looks like a Python frame (a `.py` or `<string>`-like file with a line).
    pub fn is_python(&self) -> bool {
        self.line > 0
            && (self.filename.ends_with(".py")
                || (self.filename.starts_with('<') && self.filename.ends_with('>')))
    }
}

/// `segment_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentType {
    /// Large pool (requests over 1 MiB).
    Large,
    /// Small pool (2 MiB segments for requests up to 1 MiB).
    Small,
}

/// A segment: one cudaMalloc, or one contiguous mapped range of an expandable segment.
#[derive(Debug, Clone)]
pub struct Segment {
    /// Device ordinal.
    pub device: CudaOrdinal,
    /// Start address.
    pub address: u64,
    /// `total_size`.
    pub total_size: Bytes,
    /// `allocated_size`.
    pub allocated_size: Bytes,
    /// `active_size`.
    pub active_size: Bytes,
    /// `requested_size`.
    pub requested_size: Bytes,
    /// Raw stream pointer (`0` = legacy default stream).
    pub stream: u64,
    /// Pool.
    pub segment_type: SegmentType,
    /// `segment_pool_id`; `(0, 0)` is the default pool.
    pub pool_id: (i64, i64),
    /// `is_expandable`.
    pub is_expandable: bool,
    /// Stack of the cudaMalloc.
    pub stack: StackId,
    /// Blocks, in address order.
    pub blocks: Vec<Block>,
}

/// `state` of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    /// Handed to a tensor.
    ActiveAllocated,
    /// Freed by the program, waiting on another stream's events.
    ActivePendingFree,
    /// Free, cached by the allocator.
    Inactive,
}

impl BlockState {
    /// PyTorch's own word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockState::ActiveAllocated => "active_allocated",
            BlockState::ActivePendingFree => "active_pending_free",
            BlockState::Inactive => "inactive",
        }
    }
}

/// A block of a segment.
#[derive(Debug, Clone)]
pub struct Block {
    /// Address.
    pub address: u64,
    /// `size` (512-byte rounded).
    pub size: Bytes,
    /// `requested_size` (stale for inactive blocks).
    pub requested_size: Bytes,
    /// State.
    pub state: BlockState,
    /// Allocation stack.
    pub stack: StackId,
}

/// `action` of a trace entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A block handed out.
    Alloc,
    /// The program freed a block.
    FreeRequested,
    /// The block returned to the cache.
    FreeCompleted,
    /// cudaMalloc of a segment.
    SegmentAlloc,
    /// cudaFree of a segment.
    SegmentFree,
    /// Pages mapped into an expandable segment.
    SegmentMap,
    /// Pages unmapped from an expandable segment.
    SegmentUnmap,
    /// A snapshot was taken.
    Snapshot,
    /// An allocation failed.
    Oom,
    /// Any other action string.
    Other,
}

impl Action {
    /// From PyTorch's action string.
    pub fn from_name(name: &str) -> Action {
        match name {
            "alloc" => Action::Alloc,
            "free_requested" => Action::FreeRequested,
            "free_completed" => Action::FreeCompleted,
            "segment_alloc" => Action::SegmentAlloc,
            "segment_free" => Action::SegmentFree,
            "segment_map" => Action::SegmentMap,
            "segment_unmap" => Action::SegmentUnmap,
            "snapshot" => Action::Snapshot,
            "oom" => Action::Oom,
            _ => Action::Other,
        }
    }

    /// PyTorch's action string.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Snapshot => "snapshot",
            Action::Oom => "oom",
            Action::Other => "other",
        }
    }

    /// Number of actions.
    pub const COUNT: usize = 10;

    /// A dense index, `0..COUNT`.
    pub fn code(self) -> usize {
        Action::ALL
            .iter()
            .position(|a| *a == self)
            .unwrap_or(Action::COUNT - 1)
    }

    /// Every action, in `code` order.
    pub const ALL: [Action; Action::COUNT] = [
        Action::Alloc,
        Action::FreeRequested,
        Action::FreeCompleted,
        Action::SegmentAlloc,
        Action::SegmentFree,
        Action::SegmentMap,
        Action::SegmentUnmap,
        Action::Snapshot,
        Action::Oom,
        Action::Other,
    ];
}

/// One device's trace: its entries in order, held in parts. A trace decoded on several threads
/// keeps each thread's part as it was made (copying millions of entries into one vector was
/// a serial step as long as a tenth of the whole decode); a trace decoded on one thread is one
/// part. Entries are named by their index in the whole trace.
#[derive(Clone, Default)]
pub struct Trace {
    /// The parts, none empty.
    parts: Vec<Vec<TraceEntry>>,
    /// The index of each part's first entry.
    starts: Vec<usize>,
    len: usize,
}

impl Trace {
    /// An empty trace.
    pub const fn new() -> Trace {
        Trace {
            parts: Vec::new(),
            starts: Vec::new(),
            len: 0,
        }
    }

    /// The trace of `parts`' entries, in order (empty parts are dropped).
    pub fn from_parts(parts: impl IntoIterator<Item = Vec<TraceEntry>>) -> Trace {
        let mut trace = Trace::default();
        for part in parts {
            trace.push_part(part);
        }
        trace
    }

    /// Appends `part`'s entries (kept as they are, no copy).
    pub fn push_part(&mut self, part: Vec<TraceEntry>) {
        if part.is_empty() {
            return;
        }
        self.starts.push(self.len);
        self.len += part.len();
        self.parts.push(part);
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The parts with the index of each one's first entry, in order.
    pub fn parts(&self) -> impl DoubleEndedIterator<Item = (usize, &[TraceEntry])> + Clone {
        self.starts
            .iter()
            .zip(&self.parts)
            .map(|(&start, part)| (start, part.as_slice()))
    }

    /// The entry at `index`.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&TraceEntry> {
        if let [only] = self.parts.as_slice() {
            return only.get(index);
        }
        let part = self.starts.partition_point(|&start| start <= index);
        let part = part.checked_sub(1)?;
        self.parts.get(part)?.get(index - self.starts[part])
    }

    /// The first entry.
    pub fn first(&self) -> Option<&TraceEntry> {
        self.parts.first().and_then(|part| part.first())
    }

    /// The last entry.
    pub fn last(&self) -> Option<&TraceEntry> {
        self.parts.last().and_then(|part| part.last())
    }

    /// Every entry, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &TraceEntry> + Clone {
        self.parts.iter().flat_map(|part| part.iter())
    }

    /// The entries of `start..end` (cut to the trace) as slices in order, each with the
    /// index of its first entry.
    pub fn slices(
        &self,
        start: usize,
        end: usize,
    ) -> impl DoubleEndedIterator<Item = (usize, &[TraceEntry])> + Clone {
        let end = end.min(self.len);
        self.parts().filter_map(move |(first, part)| {
            let from = start.max(first);
            let to = end.min(first + part.len());
            (from < to).then(|| (from, &part[from - first..to - first]))
        })
    }

    /// The entries of `start..end` (cut to the trace) with their indices, in order.
    pub fn range(
        &self,
        start: usize,
        end: usize,
    ) -> impl DoubleEndedIterator<Item = (usize, &TraceEntry)> + Clone {
        self.slices(start, end).flat_map(|(first, slice)| {
            slice
                .iter()
                .enumerate()
                .map(move |(offset, entry)| (first + offset, entry))
        })
    }

    /// The entries of `start..end` (cut to the trace) copied into one vector.
    pub fn to_vec(&self, start: usize, end: usize) -> Vec<TraceEntry> {
        let mut out = Vec::with_capacity(end.min(self.len).saturating_sub(start));
        for (_, slice) in self.slices(start, end) {
            out.extend_from_slice(slice);
        }
        out
    }
}

impl std::ops::Index<usize> for Trace {
    type Output = TraceEntry;

    /// The entry at `index`; panics past the end, as a slice does.
    #[inline]
    fn index(&self, index: usize) -> &TraceEntry {
        match self.get(index) {
            Some(entry) => entry,
            None => panic!("trace index {index} out of range for {} entries", self.len),
        }
    }
}

impl From<Vec<TraceEntry>> for Trace {
    fn from(entries: Vec<TraceEntry>) -> Trace {
        Trace::from_parts([entries])
    }
}

/// Equal entries in order, however they are split into parts.
impl PartialEq for Trace {
    fn eq(&self, other: &Trace) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for Trace {}

/// As a list of entries (the parts are not shown).
impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One entry of `device_traces[d]`, packed into 32 bytes (a long run has millions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceEntry {
    /// `addr`; for `oom` entries, `device_free` (the key replaces `addr`).
    pub addr: u64,
    /// `size`: requested bytes for alloc/free, segment bytes, or the rounded OOM request.
    pub size: u64,
    /// `time_us` (0 when absent).
    pub time_us: i64,
    /// `frames`.
    pub stack: StackId,
    /// Action (low 8 bits) and stream index into [`Snapshot::streams`] (high 24 bits).
    packed: u32,
}

impl TraceEntry {
    /// Most distinct streams a snapshot may name.
    pub const MAX_STREAMS: usize = 1 << 24;

    /// A new entry; `stream_index` must be below [`TraceEntry::MAX_STREAMS`].
    pub fn new(
        action: Action,
        addr: u64,
        size: u64,
        time_us: i64,
        stream_index: u32,
        stack: StackId,
    ) -> TraceEntry {
        let code = Action::ALL.iter().position(|a| *a == action).unwrap_or(9) as u32;
        TraceEntry {
            addr,
            size,
            time_us,
            stack,
            packed: code | (stream_index << 8),
        }
    }

    /// The action.
    pub fn action(&self) -> Action {
        Action::ALL[(self.packed & 0xff) as usize % Action::ALL.len()]
    }

    /// [`Action::code`] of the action, without decoding it.
    pub fn action_code(&self) -> usize {
        (self.packed & 0xff) as usize % Action::COUNT
    }

    /// Index of the stream in [`Snapshot::streams`].
    pub fn stream_index(&self) -> u32 {
        self.packed >> 8
    }

    /// Moves the entry to stream index `stream_index` (below [`TraceEntry::MAX_STREAMS`]),
    /// keeping its action.
    pub fn set_stream_index(&mut self, stream_index: u32) {
        self.packed = (self.packed & 0xff) | (stream_index << 8);
    }

    /// `device_free` of an `oom` entry.
    pub fn device_free(&self) -> Option<u64> {
        (self.action() == Action::Oom).then_some(self.addr)
    }
}

/// `allocator_settings`, with the keys oomdoc reasons about; the rest kept as text.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AllocatorSettings {
    /// `PYTORCH_CUDA_ALLOC_CONF` as the process saw it (`''` when unset).
    pub alloc_conf: String,
    /// `max_split_size` in bytes; `None` = unlimited (`-1`).
    pub max_split_size: Option<Bytes>,
    /// `garbage_collection_threshold` (0 = off).
    pub garbage_collection_threshold: f64,
    /// `expandable_segments`.
    pub expandable_segments: bool,
    /// Every other key, as Python would print its value.
    pub other: BTreeMap<String, String>,
}

/// What the analysis concludes for one snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotReport {
    /// Where every number comes from: `snapshot` (the pickle itself).
    pub source: super::Source,
    /// Per device, at snapshot time.
    pub devices: Vec<DeviceSummary>,
    /// One entry per `oom` event found in the traces.
    pub ooms: Vec<OomAnalysis>,
    /// OOM events beyond the ones analysed in detail.
    pub ooms_not_analysed: u64,
    /// `allocator_settings` of the snapshot, if it has them.
    pub allocator_settings: Option<AllocatorSettings>,
    /// Device total the user gave (`--total-memory`).
    pub total_memory_bytes: Option<Bytes>,
    /// Named ranges (`record_function`) recorded with the trace, in start order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<NamedRange>,
    /// What the data cannot tell.
    pub limitations: Vec<String>,
}

/// A device at snapshot time. `reserved_bytes`/`allocated_bytes` are sums over its
/// segments (the JSON contract).
#[derive(Debug, Clone, Serialize)]
pub struct DeviceSummary {
    /// Device ordinal.
    pub device: CudaOrdinal,
    /// Number of segments.
    pub segments: u64,
    /// Σ `total_size`.
    pub reserved_bytes: Bytes,
    /// Σ `allocated_size`.
    pub allocated_bytes: Bytes,
    /// Σ `active_size`.
    pub active_bytes: Bytes,
    /// Σ `requested_size`.
    pub requested_bytes: Bytes,
    /// Free cached bytes: Σ size of inactive blocks.
    pub free_bytes: Bytes,
    /// Inactive blocks inside split segments (PyTorch's `inactive_split_bytes`).
    pub inactive_split_bytes: Bytes,
    /// Largest inactive block.
    pub largest_free_block_bytes: Bytes,
    /// Inactive blocks by size.
    pub free_blocks_by_size: Vec<SizeBucket>,
    /// Segments grouped by pool, stream and type.
    pub segments_by_pool: Vec<PoolGroup>,
    /// Expandable segments (mapped ranges).
    pub expandable_segments: u64,
    /// Bytes in expandable segments.
    pub expandable_bytes: Bytes,
    /// Allocation sites holding the most bytes at snapshot time.
    pub top_sites: Vec<Site>,
    /// The trace of this device, if recorded.
    pub trace: Option<TraceSummary>,
    /// Blocks of the largest segments, for the HTML segment map (not in JSON).
    #[serde(skip)]
    pub segment_map: Vec<MapSegment>,
    /// Allocated memory over the trace, downsampled, stacked by site and by category, for
    /// the HTML timeline (not in JSON).
    #[serde(skip)]
    pub timelines: Vec<MemoryTimeline>,
}

/// Allocated memory over a trace, stacked by group (sites or categories), downsampled to a
/// bounded number of points so that a trace of millions of entries draws quickly.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryTimeline {
    /// `site` or `category`.
    pub grouping: String,
    /// Trace entries the series was built from.
    pub entries: u64,
    /// The groups stacked, bottom first; the last may be `everything else`.
    pub groups: Vec<TimelineGroup>,
    /// One point per window of entries: the moment of the window's highest total.
    pub points: Vec<TimelinePoint>,
}

/// A group stacked on the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineGroup {
    /// A site (`file:line function`), a category, `held before the trace` or `everything
    /// else`.
    pub name: String,
    /// Python frames of the site, innermost first (at most 6); for a category, its rule.
    pub frames: Vec<String>,
    /// Its highest bytes at any kept point.
    pub peak_bytes: Bytes,
}

/// The state at one moment of a timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TimelinePoint {
    /// Index of the trace entry.
    pub entry: u64,
    /// Its `time_us`.
    pub time_us: i64,
    /// Allocated bytes per group, in the order of [`MemoryTimeline::groups`].
    pub bytes: Vec<u64>,
}

/// A size bucket of free blocks.
#[derive(Debug, Clone, Serialize)]
pub struct SizeBucket {
    /// e.g. `1 MiB – 20 MiB`.
    pub label: String,
    /// Lower bound, inclusive.
    pub min_bytes: Bytes,
    /// Upper bound, exclusive; `None` = no bound.
    pub max_bytes: Option<Bytes>,
    /// Number of blocks.
    pub blocks: u64,
    /// Their bytes.
    pub bytes: Bytes,
}

/// Segments sharing pool, stream and type.
#[derive(Debug, Clone, Serialize)]
pub struct PoolGroup {
    /// `segment_pool_id`.
    pub pool_id: (i64, i64),
    /// Raw stream pointer.
    pub stream: u64,
    /// Pool type.
    pub segment_type: SegmentType,
    /// Number of segments.
    pub segments: u64,
    /// Σ `total_size`.
    pub reserved_bytes: Bytes,
    /// Σ `allocated_size`.
    pub allocated_bytes: Bytes,
}

/// Bytes held by one allocation site (the first user-level Python frame, else the first
/// Python frame, else a folded C++ frame).
#[derive(Debug, Clone, Serialize)]
pub struct Site {
    /// `file:line function`, or `<C++> function`, or `<no frames recorded>`.
    pub site: String,
    /// Allocated bytes.
    pub bytes: Bytes,
    /// Number of blocks.
    pub blocks: u64,
    /// Python frames of one of its stacks, innermost first (at most 6), C++ frames folded.
    pub python_frames: Vec<String>,
    /// C++ frames folded away.
    pub cpp_frames: u64,
}

/// The recorded trace of a device.
#[derive(Debug, Clone, Serialize)]
pub struct TraceSummary {
    /// Entries.
    pub entries: u64,
    /// Entries by action.
    pub actions: BTreeMap<Action, u64>,
    /// `time_us` of the first entry.
    pub first_time_us: i64,
    /// `time_us` of the last entry.
    pub last_time_us: i64,
    /// Highest allocated bytes over the trace window, replayed.
    pub peak: Option<Peak>,
    /// Entries that did not match the replayed state (should be 0).
    pub inconsistencies: u64,
    /// Allocation sites that kept allocating across the trace without freeing, most bytes
    /// first: growth by stack frame, not only in total.
    pub growth: Vec<SiteGrowth>,
}

/// One allocation site whose blocks, allocated again and again over the trace, were never
/// freed within it.
#[derive(Debug, Clone, Serialize)]
pub struct SiteGrowth {
    /// The site, as in [`Site::site`].
    pub site: String,
    /// Python frames of one of its stacks, innermost first (at most 6).
    pub python_frames: Vec<String>,
    /// Allocations made by this site within the trace.
    pub allocations: u64,
    /// Of those, the ones never freed within the trace.
    pub never_freed: u64,
    /// Their bytes, exact.
    pub never_freed_bytes: Bytes,
    /// How many of the trace's four quarters (by entry) hold one of them.
    pub quarters: u32,
    /// `time_us` of the first of them.
    pub first_time_us: i64,
    /// `time_us` of the last of them.
    pub last_time_us: i64,
}

/// The peak of allocated bytes over the trace window.
#[derive(Debug, Clone, Serialize)]
pub struct Peak {
    /// Allocated bytes at the peak.
    pub allocated_bytes: Bytes,
    /// Reserved bytes then.
    pub reserved_bytes: Bytes,
    /// `time_us` of the entry that reached it.
    pub time_us: i64,
    /// Index of that entry in the trace.
    pub entry: u64,
    /// Named ranges open then, outermost first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inside: Vec<String>,
    /// Who held the memory then.
    pub top_sites: Vec<Site>,
}

/// `cause` of an OOM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The free cached memory was enough in total but no free block was large enough.
    Fragmentation,
    /// The process needed more than the GPU had for it.
    Capacity,
    /// Something else: memory held outside this allocator, or a free block existed.
    Other,
}

impl Cause {
    /// The JSON word.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Fragmentation => "fragmentation",
            Cause::Capacity => "capacity",
            Cause::Other => "other",
        }
    }
}

/// One `oom` event, with the allocator state then.
#[derive(Debug, Clone, Serialize)]
pub struct OomAnalysis {
    /// Device ordinal.
    pub device: CudaOrdinal,
    /// Index of the entry in the device's trace.
    pub entry: u64,
    /// `time_us`.
    pub time_us: i64,
    /// Raw stream pointer.
    pub stream: u64,
    /// `size`: the rounded request (what the allocator tried to get).
    pub requested_bytes: Bytes,
    /// `device_free`: `cudaMemGetInfo` free at the failure.
    pub device_free_bytes: Bytes,
    /// The allocator state rebuilt by replaying the trace back from the snapshot.
    pub at_oom: AllocatorState,
    /// The verdict.
    pub cause: Cause,
    /// Why, in one or two sentences.
    pub explanation: String,
    /// Free cached memory plus device free memory would have been enough if it were
    /// contiguous (expandable segments can do that).
    pub fits_if_compacted: bool,
    /// Memory of the device held outside this allocator (needs `--total-memory`).
    pub outside_bytes: Option<Bytes>,
    /// Allocator settings in force, as `key:value`.
    pub settings_in_force: Vec<String>,
    /// What to try, if a setting can help.
    pub suggestion: Option<String>,
    /// Allocation site of the failed request.
    pub request_site: Option<String>,
    /// Named ranges open at the failure, outermost first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inside: Vec<String>,
    /// Who held memory at the OOM.
    pub top_sites: Vec<Site>,
}

/// Allocator state at one moment.
#[derive(Debug, Clone, Serialize)]
pub struct AllocatorState {
    /// Bytes in allocated blocks.
    pub allocated_bytes: Bytes,
    /// Bytes in segments.
    pub reserved_bytes: Bytes,
    /// Allocated plus pending-free.
    pub active_bytes: Bytes,
    /// Reserved minus active: free cached memory.
    pub free_bytes: Bytes,
    /// Largest contiguous free range inside one segment.
    pub largest_free_block_bytes: Bytes,
    /// Number of segments.
    pub segments: u64,
}

/// A segment for the HTML map.
#[derive(Debug, Clone, Serialize)]
pub struct MapSegment {
    /// Start address.
    pub address: u64,
    /// Size.
    pub total_size: Bytes,
    /// Expandable.
    pub is_expandable: bool,
    /// Blocks: size and state.
    pub blocks: Vec<(Bytes, BlockState)>,
}

/// What `oomdoc snapshot diff A B` finds: where allocated memory changed between two
/// snapshots, per device, at the peak and at the OOM (or the end).
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotDiff {
    /// Always `snapshot`.
    pub source: super::Source,
    /// The label of A (its path, as given).
    pub a: String,
    /// The label of B.
    pub b: String,
    /// How a block's category is chosen, in the order the rules are tried.
    pub category_rules: Vec<CategoryRule>,
    /// The groupings computed, in the order shown: `site`, `category`, `pool`, `annotation`.
    pub groupings: Vec<String>,
    /// Named ranges (`record_function`) recorded in A, in start order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub a_annotations: Vec<NamedRange>,
    /// The same for B.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub b_annotations: Vec<NamedRange>,
    /// One per device and moment.
    pub moments: Vec<DiffMoment>,
    /// What the diff cannot know.
    pub limitations: Vec<String>,
}

/// One rule of the category classification.
#[derive(Debug, Clone, Serialize)]
pub struct CategoryRule {
    /// The category, e.g. `activations`.
    pub category: String,
    /// What puts a block in it.
    pub rule: String,
}

/// A moment compared between A and B on one device.
#[derive(Debug, Clone, Serialize)]
pub struct DiffMoment {
    /// Device ordinal.
    pub device: CudaOrdinal,
    /// `peak`, or `oom or end`.
    pub moment: String,
    /// Where A's side of this moment is: `peak`, `oom` or `end`; `absent` when A has none.
    pub a_at: String,
    /// The same for B.
    pub b_at: String,
    /// `time_us` of A's side of this moment (`None` when absent or untimed).
    pub a_time_us: Option<i64>,
    /// The same for B.
    pub b_time_us: Option<i64>,
    /// Named ranges open in A at that moment, outermost first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub a_inside: Vec<String>,
    /// The same for B.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub b_inside: Vec<String>,
    /// Allocated bytes in A at that moment.
    pub a_allocated_bytes: Bytes,
    /// Allocated bytes in B.
    pub b_allocated_bytes: Bytes,
    /// `b − a`, exact.
    pub change_bytes: i64,
    /// By allocation site (the first user frame), largest change first.
    pub by_site: Vec<DiffRow>,
    /// By category.
    pub by_category: Vec<DiffRow>,
    /// By memory pool and stream.
    pub by_pool: Vec<DiffRow>,
    /// By the named ranges (`record_function`) open when each block was allocated.
    pub by_annotation: Vec<DiffRow>,
}

/// One group's bytes in A and B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffRow {
    /// The group: a site, a category or `pool (a, b) stream s`.
    pub key: String,
    /// Bytes in A.
    pub a_bytes: Bytes,
    /// Bytes in B.
    pub b_bytes: Bytes,
    /// `b − a`, exact.
    pub change_bytes: i64,
    /// Blocks in A.
    pub a_blocks: u64,
    /// Blocks in B.
    pub b_blocks: u64,
    /// For a site: its Python frames, innermost first (up to six).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<String>,
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn entry(index: usize) -> TraceEntry {
        TraceEntry::new(Action::Alloc, index as u64 * 512, 512, index as i64, 0, 0)
    }

    proptest! {
        /// A trace in any parts reads as one vector of its entries does: by index, in order,
        /// forward and backward, in any range.
        #[test]
        fn a_trace_in_parts_reads_as_one_vector(
            lens in prop::collection::vec(0usize..9, 0..7),
            start in 0usize..60,
            end in 0usize..60,
        ) {
            let mut next = 0;
            let parts: Vec<Vec<TraceEntry>> = lens
                .iter()
                .map(|&len| {
                    next += len;
                    (next - len..next).map(entry).collect()
                })
                .collect();
            let flat: Vec<TraceEntry> = parts.concat();
            let trace = Trace::from_parts(parts);
            prop_assert_eq!(trace.len(), flat.len());
            prop_assert_eq!(trace.is_empty(), flat.is_empty());
            prop_assert_eq!(trace.first(), flat.first());
            prop_assert_eq!(trace.last(), flat.last());
            for index in 0..flat.len() + 3 {
                prop_assert_eq!(trace.get(index), flat.get(index));
            }
            prop_assert!(trace.iter().eq(flat.iter()));
            prop_assert!(trace.iter().rev().eq(flat.iter().rev()));
            let cut = end.min(flat.len());
            let want: Vec<(usize, &TraceEntry)> =
                flat.iter().enumerate().take(cut).skip(start).collect();
            prop_assert_eq!(trace.range(start, end).collect::<Vec<_>>(), want.clone());
            let mut backward: Vec<_> = trace.range(start, end).rev().collect();
            backward.reverse();
            prop_assert_eq!(backward, want.clone());
            let copied: Vec<TraceEntry> = want.iter().map(|(_, entry)| **entry).collect();
            prop_assert_eq!(trace.to_vec(start, end), copied);
            prop_assert_eq!(&trace, &Trace::from(flat.clone()));
            prop_assert_eq!(format!("{trace:?}"), format!("{flat:?}"));
        }
    }
}
