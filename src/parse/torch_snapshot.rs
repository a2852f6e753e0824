//! A PyTorch memory snapshot (`torch.cuda.memory._dump_snapshot()`) → [`Snapshot`].
//!
//! Decodes with our data-only pickle decoder (`parse::pickle`, nothing is executed) and a
//! fold that turns frames, stacks and trace entries into compact interned data as soon as
//! each is complete, so a trace of millions of entries never exists as a tree of dicts.
//! Schema: `torch/cuda/memory.py` `_snapshot()` (2.11 measured); a bare list of segments
//! (`torch.cuda.memory_snapshot()`) is accepted too, as `_memory_viz.py` does.
//! No I/O: the caller passes the reader (`source::file::open_file` handles gzip).

use std::collections::HashMap;
use std::io::Read;
use std::rc::Rc;

use super::pickle::{
    self, profile, DictItems, DictStorage, Finished, Fold, Item, Limits, ListItems, Merge, Open,
    Parallel, PickleError, Shared, Value, STAND_IN,
};
use crate::model::gpu::CudaOrdinal;
use crate::model::snapshot::{
    Action, AllocatorSettings, Annotation, Block, BlockState, Frame, Segment, SegmentType,
    Snapshot, StackId, Trace, TraceEntry,
};
use crate::model::Bytes;

/// What went wrong reading a snapshot.
#[derive(Debug, thiserror::Error)]
pub enum TorchSnapshotError {
    /// The pickle itself is invalid or refused.
    #[error(transparent)]
    Pickle(#[from] PickleError),
    /// The pickle decoded but is not shaped like a memory snapshot.
    #[error("not a PyTorch memory snapshot: `{path}` {reason}")]
    Shape {
        /// Where in the data, e.g. `segments[3].blocks[0].size`.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

impl crate::error::Hint for TorchSnapshotError {
    fn hint(&self) -> Option<String> {
        match self {
            TorchSnapshotError::Shape { .. } => Some(
                "write the snapshot with `torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")`"
                    .to_string(),
            ),
            TorchSnapshotError::Pickle(PickleError::Refused { .. }) => Some(
                "a memory snapshot holds only dicts, lists, numbers and strings; this file holds objects, so it is not one".to_string(),
            ),
            TorchSnapshotError::Pickle(_) => None,
        }
    }
}

/// Decodes a snapshot held in memory.
pub fn parse(bytes: &[u8]) -> Result<Snapshot, TorchSnapshotError> {
    read(bytes)
}

/// Decodes a snapshot from a reader (already decompressed), on this thread only: for a
/// reader that may never end by itself, such as stdin.
pub fn read<R: Read>(reader: R) -> Result<Snapshot, TorchSnapshotError> {
    let mut fold = SnapshotFold::new();
    let root = pickle::decode(reader, Limits::default(), &mut fold)?;
    fold.build(root)
}

/// Decoder limits for an input of `input_bytes` as stored (a gzip file's compressed size;
/// `None` when unknown, as for stdin): the memory budget grows with the file, at least
/// [`MIN_MEMORY_BUDGET_BYTES`], at most `MEMORY_BUDGET_PER_STORED_BYTE` times it, so a small
/// file that inflates to gigabytes is refused, not read until memory runs out (#14, item 8).
/// A real snapshot's decoded form is about half its pickle (`scripts/bench_snapshot.sh`).
pub fn limits_for(input_bytes: Option<u64>) -> Limits {
    let default = Limits::default();
    let Some(stored) = input_bytes else {
        return default;
    };
    Limits {
        max_memory_bytes: stored
            .saturating_mul(MEMORY_BUDGET_PER_STORED_BYTE)
            .max(MIN_MEMORY_BUDGET_BYTES),
        ..default
    }
}

/// The least memory budget [`limits_for`] gives.
pub const MIN_MEMORY_BUDGET_BYTES: u64 = 512 << 20;
const MEMORY_BUDGET_PER_STORED_BYTE: u64 = 8;

/// Decodes a snapshot with explicit decoder limits, the input read ahead by a thread of its
/// own (`pickle::decode_prefetched`): the reader must end by itself (a file; gzip is then
/// inflated on that thread).
pub fn read_with_limits<R: Read + Send>(
    reader: R,
    limits: Limits,
) -> Result<Snapshot, TorchSnapshotError> {
    let mut fold = SnapshotFold::new();
    let decoding = profile::phase(|| "decode (one thread)".to_string());
    let root = pickle::decode_prefetched(reader, limits, &mut fold)?;
    drop(decoding);
    let _building = profile::phase(|| "build the snapshot".to_string());
    fold.build(root)
}

/// Decodes a snapshot file, on several threads when it is large enough and shaped for it
/// (`pickle::decode_file`), else as [`read_with_limits`] does; the result is the same.
pub fn read_file(
    file: &std::fs::File,
    limits: Limits,
    parallel: Parallel,
) -> Result<Snapshot, TorchSnapshotError> {
    if parallel.threads > 0 {
        if let Some((root, fold)) = pickle::decode_file(file, limits, parallel, SnapshotFold::new) {
            let _building = profile::phase(|| "build the snapshot".to_string());
            return fold.build(root);
        }
    }
    use std::io::Seek;
    let mut file = file;
    file.seek(std::io::SeekFrom::Start(0))
        .map_err(|source| PickleError::Read { offset: 0, source })?;
    read_with_limits(file, limits)
}

/// The trace-entry keys oomdoc reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Action,
    Addr,
    Size,
    Stream,
    Time,
    Frames,
    Other,
}

impl Field {
    fn of(key: &str) -> Field {
        match key {
            "action" => Field::Action,
            "addr" | "device_free" => Field::Addr,
            "size" => Field::Size,
            "stream" => Field::Stream,
            "time_us" => Field::Time,
            "frames" => Field::Frames,
            _ => Field::Other,
        }
    }
}

const FRAME: u32 = 1;
const STACK: u32 = 2;
const ENTRY: u32 = 3;
const ENTRIES: u32 = 4;
/// A run of entries inside a list still being built.
const RUN: u32 = 5;
/// A segment's block, read as it was decoded (an index into `SnapshotFold::blocks`).
const BLOCK: u32 = 6;
/// An `external_annotations` entry, read as it was decoded (into `SnapshotFold::annotations`).
const ANNOTATION: u32 = 7;

/// A segment's block dict as `read_segment` reads it, taken by the fold as the dict is
/// decoded so that it is never built (a large snapshot's segments hold tens of thousands of
/// blocks, decoded on one thread while the trace's chunks decode on the others). Only a dict
/// `read_segment` would read without an error is taken; the others are built as before, so
/// that its message names them.
#[derive(Debug, Clone, Copy)]
struct FoldedBlock {
    /// `address`, where the dict holds an int (`None`: the segment's running address).
    address: Option<u64>,
    size: u64,
    /// `requested_size`, where the dict holds an int.
    requested_size: Option<u64>,
    state: BlockState,
    stack: StackId,
}

struct SnapshotFold {
    frames: Vec<Frame>,
    frame_index: FrameIndex,
    stacks: StackTable,
    /// Frame ids of the list being folded (reused).
    scratch: Vec<u32>,
    streams: Vec<u64>,
    stream_index: HashMap<u64, u32>,
    last_stream: Option<(u64, u32)>,
    key_cache: [(Option<Rc<String>>, Field); 16],
    action_cache: Vec<(Rc<String>, Action)>,
    /// Entries of the trace's earlier parts: those decoded before a merge, then each merged
    /// chunk's, kept as they were made (see [`Trace`]); `entries` follow them.
    done: Trace,
    /// Bytes `done`'s parts hold (for the memory budget).
    done_bytes: u64,
    entries: Vec<TraceEntry>,
    /// Ranges of entries (by index in `done` then `entries`) that were one list.
    ranges: Vec<(u32, u32)>,
    /// Bytes held by frames, stacks and streams (entries and ranges are counted by length).
    interned_bytes: u64,
    /// Decoding a memo value made by another thread's chunk (see [`Fold::nested`]).
    nested: bool,
    /// The segments read ahead by [`Merge::prepare`], with the values they were read from.
    prepared: Option<PreparedSegments>,
    /// Block dicts taken as they were decoded (`Value::Handle(BLOCK, index)`).
    blocks: Vec<FoldedBlock>,
    /// Annotation dicts taken as they were decoded (`Value::Handle(ANNOTATION, index)`).
    annotations: Vec<Annotation>,
    /// Whether block and annotation dicts are taken (the tests compare with a fold that
    /// builds them).
    take_dicts: bool,
}

/// Segments read while the trace's chunks decode on other threads: `read_segment` of each of
/// the list's items in order (the first error), used by `build` where the snapshot's
/// segments are the stand-in the decoder put in place of that list ([`Merge::prepare`]).
struct PreparedSegments {
    segments: Result<Vec<Segment>, TorchSnapshotError>,
}

/// `read_segment` of each segment value, in order; the first error. `blocks`: the blocks
/// the fold took.
fn read_segments(
    items: &[Value],
    blocks: &[FoldedBlock],
) -> Result<Vec<Segment>, TorchSnapshotError> {
    items
        .iter()
        .enumerate()
        .map(|(index, segment)| read_segment(segment, &format!("segments[{index}]"), blocks))
        .collect()
}

/// The frames of a fold by content: ids into its `frames` (each frame's strings held once,
/// there), with a fast hash seeded per process. Frames are interned millions of times over
/// a large trace's chunks (each chunk meets the frames it refers to again).
#[derive(Default)]
struct FrameIndex {
    table: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl FrameIndex {
    fn hash(&self, name: &str, filename: &str, line: i64) -> u64 {
        use std::hash::BuildHasher;
        self.hasher.hash_one((name, filename, line))
    }

    /// The id of the frame with this content and `hash`, if `frames` has it.
    fn find(
        &self,
        frames: &[Frame],
        hash: u64,
        name: &str,
        filename: &str,
        line: i64,
    ) -> Option<u32> {
        self.table
            .find(hash, |&id| {
                frames.get(id as usize).is_some_and(|frame| {
                    frame.line == line && frame.name == name && frame.filename == filename
                })
            })
            .copied()
    }

    /// The id of `frame`'s content in `frames`, if it has one.
    fn get(&self, frames: &[Frame], frame: &Frame) -> Option<u32> {
        let hash = self.hash(&frame.name, &frame.filename, frame.line);
        self.find(frames, hash, &frame.name, &frame.filename, frame.line)
    }

    /// Adds `id` (a frame of `frames`, not in the index yet) with its `hash`.
    fn insert(&mut self, frames: &[Frame], hash: u64, id: u32) {
        let FrameIndex { table, hasher } = self;
        table.insert_unique(hash, id, |&id| {
            use std::hash::BuildHasher;
            frames.get(id as usize).map_or(0, |frame| {
                hasher.hash_one((frame.name.as_str(), frame.filename.as_str(), frame.line))
            })
        });
    }
}

/// What a chunk of the trace decoded on a thread of its own hands back ([`Merge`]): its
/// entries, with frame, stack and stream ids of its own.
struct SnapshotPart {
    frames: Vec<Frame>,
    stacks: StackTable,
    streams: Vec<u64>,
    entries: Vec<TraceEntry>,
}

impl SnapshotFold {
    fn new() -> Self {
        SnapshotFold {
            frames: Vec::new(),
            frame_index: FrameIndex::default(),
            stacks: StackTable::default(),
            scratch: Vec::new(),
            streams: Vec::new(),
            stream_index: HashMap::new(),
            last_stream: None,
            key_cache: std::array::from_fn(|_| (None, Field::Other)),
            action_cache: Vec::new(),
            done: Trace::default(),
            done_bytes: 0,
            entries: Vec::new(),
            ranges: Vec::new(),
            interned_bytes: 0,
            nested: false,
            prepared: None,
            blocks: Vec::new(),
            annotations: Vec::new(),
            take_dicts: true,
        }
    }

    fn stream(&mut self, raw: u64) -> Result<u32, String> {
        if let Some((last, index)) = self.last_stream {
            if last == raw {
                return Ok(index);
            }
        }
        if let Some(&index) = self.stream_index.get(&raw) {
            self.last_stream = Some((raw, index));
            return Ok(index);
        }
        if self.streams.len() >= TraceEntry::MAX_STREAMS {
            return Err("more distinct streams than oomdoc can track".to_string());
        }
        let index = self.streams.len() as u32;
        self.streams.push(raw);
        self.stream_index.insert(raw, index);
        self.interned_bytes += 32;
        Ok(index)
    }

    fn frame<'v>(&mut self, pairs: impl Iterator<Item = (Item<'v>, Item<'v>)>) -> Option<u32> {
        let mut name = None;
        let mut filename = None;
        let mut line = None;
        for (key, value) in pairs {
            match key.as_str()? {
                "name" => name = Some(value.as_str()?),
                "filename" => filename = Some(value.as_str()?),
                "line" => line = Some(value.as_i64()?),
                _ => {}
            }
        }
        Some(self.intern_frame(name?, filename?, line.unwrap_or(0)))
    }

    /// The id of the frame `name`, `filename`, `line`, interned by content (its strings
    /// copied only when it is new).
    fn intern_frame(&mut self, name: &str, filename: &str, line: i64) -> u32 {
        let hash = self.frame_index.hash(name, filename, line);
        if let Some(id) = self
            .frame_index
            .find(&self.frames, hash, name, filename, line)
        {
            return id;
        }
        let id = self.frames.len() as u32;
        // Counted as when the index held a copy of each frame: the strings twice, the
        // struct, the map's slot (a bound, not an exact figure: the memory budget stays as
        // it was).
        self.interned_bytes += 2 * (name.len() + filename.len()) as u64 + 160;
        self.frames.push(Frame {
            name: name.to_string(),
            filename: filename.to_string(),
            line,
        });
        self.frame_index.insert(&self.frames, hash, id);
        id
    }

    /// The id of `frame`, interned (copied only when it is new).
    fn intern_frame_ref(&mut self, frame: &Frame) -> u32 {
        self.intern_frame(&frame.name, &frame.filename, frame.line)
    }

    /// The id of the stack whose frame ids are in `self.scratch`, interned.
    fn intern_scratch(&mut self) -> u32 {
        let scratch = std::mem::take(&mut self.scratch);
        let id = self.intern_ids(&scratch);
        self.scratch = scratch;
        id
    }

    /// The id of the stack of frame ids `ids`, interned.
    fn intern_ids(&mut self, ids: &[u32]) -> u32 {
        match self.stacks.intern(ids) {
            Some((id, new)) => {
                if new {
                    // Counted as when each stack was a vector and a boxed key (a bound, not
                    // an exact figure: the memory budget stays as it was).
                    self.interned_bytes += 8 * ids.len() as u64 + 96;
                }
                id
            }
            // 2^32 stacks: the memory budget (96 bytes or more a stack) stops a file long
            // before; the empty stack is what a stack that cannot be named reads as.
            None => 0,
        }
    }

    /// Folds a list of frames (all frame handles, at least one) into a stack handle.
    fn stack_of<V: std::borrow::Borrow<Value>>(
        &mut self,
        mut items: impl Iterator<Item = V>,
    ) -> Option<Value> {
        self.scratch.clear();
        items.try_for_each(|item| match *item.borrow() {
            Value::Handle(FRAME, id) => {
                self.scratch.push(id);
                Some(())
            }
            _ => None,
        })?;
        if self.scratch.is_empty() {
            return None;
        }
        Some(Value::Handle(STACK, self.intern_scratch()))
    }

    fn entry(&mut self, items: &DictItems<'_>) -> Result<Value, String> {
        let mut action = None;
        let mut addr = 0u64;
        let mut size = 0u64;
        let mut stream = 0u64;
        let mut time_us = 0i64;
        let mut stack = 0;
        for (pair, key) in items.keys().enumerate() {
            let value_index = 2 * pair + 1;
            let Some(Value::Str(key)) = key else {
                continue;
            };
            // Every entry names its keys with the same str objects, in the same order:
            // remember them by identity (holding a reference, so the identity stays valid).
            let field = match self.key_cache.get(pair) {
                Some((Some(cached), field)) if Rc::ptr_eq(cached, key) => *field,
                _ => self.learn_key(pair, key),
            };
            match field {
                Field::Action => {
                    let Some(Value::Str(name)) = items.value(value_index) else {
                        let found = items.get(value_index).map_or("nothing", Item::type_name);
                        return Err(format!("trace `action` is {}", a_type(found)));
                    };
                    action = Some(self.action(name));
                }
                Field::Addr => addr = unsigned(items, value_index, key)?,
                Field::Size => size = unsigned(items, value_index, key)?,
                Field::Stream => stream = unsigned(items, value_index, key)?,
                Field::Time => time_us = items.int(value_index).unwrap_or(0),
                Field::Frames => stack = items.value(value_index).and_then(stack_id).unwrap_or(0),
                Field::Other => {}
            }
        }
        let action = action.ok_or("trace entry without `action`")?;
        if self.nested {
            return Err("a trace entry is referenced from another part of the trace".to_string());
        }
        let stream = self.stream(stream)?;
        let id = self.done.len() + self.entries.len();
        if id >= u32::MAX as usize {
            return Err("more trace entries than oomdoc can hold".to_string());
        }
        if self.entries.len() == self.entries.capacity() {
            // Grow by at most 32 MiB at a time, so that the memory budget (checked against
            // the capacity) stops a huge trace before one doubling overshoots it, and a
            // failed allocation is an error, not an abort.
            let step = self.entries.len().clamp(1024, 1 << 20);
            self.entries
                .try_reserve_exact(step)
                .map_err(|_| "out of memory holding the trace entries".to_string())?;
        }
        self.entries
            .push(TraceEntry::new(action, addr, size, time_us, stream, stack));
        Ok(Value::Handle(ENTRY, id as u32))
    }

    /// The field a key names, remembered for the `pair`th key of later entries.
    #[cold]
    fn learn_key(&mut self, pair: usize, key: &Rc<String>) -> Field {
        let field = Field::of(key);
        if let Some(slot) = self.key_cache.get_mut(pair) {
            *slot = (Some(Rc::clone(key)), field);
        }
        field
    }

    /// The action named by a str object, remembered by identity (a snapshot uses one str
    /// object per action name).
    fn action(&mut self, name: &Rc<String>) -> Action {
        if let Some((_, action)) = self
            .action_cache
            .iter()
            .find(|(cached, _)| Rc::ptr_eq(cached, name))
        {
            return *action;
        }
        let action = Action::from_name(name);
        if self.action_cache.len() < 16 {
            self.action_cache.push((Rc::clone(name), action));
        }
        action
    }

    /// Folds a dict: trace entries and frames become handles.
    fn fold_dict(&mut self, items: &DictItems<'_>) -> Result<Option<Value>, String> {
        if let (Some(Value::Str(first)), (Some(action_key), Field::Action)) =
            (items.value(0), &self.key_cache[0])
        {
            if Rc::ptr_eq(first, action_key) {
                return self.entry(items).map(Some);
            }
        }
        match items.get(0).and_then(Item::as_str) {
            Some("action") => self.entry(items).map(Some),
            Some("name") => match self.frame(items.pairs()) {
                Some(id) => Ok(Some(Value::Handle(FRAME, id))),
                None => Ok(self.annotation(items)),
            },
            Some("stage") => Ok(self.annotation(items)),
            Some("address") => Ok(self.block(items)),
            _ => Ok(None),
        }
    }

    /// Takes an `external_annotations` dict as `read_annotation` reads it, so that it is
    /// never built (a long trace's annotations, thousands of them, are decoded on one
    /// thread after the trace's chunks): a dict of `stage` and no keys but `name`,
    /// `device` and `time_us`; `None` leaves any other dict to be built, and any dict
    /// decoded on demand for another thread's chunk.
    fn annotation(&mut self, items: &DictItems<'_>) -> Option<Value> {
        if self.nested || !self.take_dicts || self.annotations.len() >= u32::MAX as usize {
            return None;
        }
        // As `Value::get` reads a dict: the first item of each key.
        let (mut name, mut stage, mut device, mut time_us) = (None, None, None, None);
        for (pair, key) in items.keys().enumerate() {
            let value = items.get(2 * pair + 1);
            let text = || value.and_then(Item::as_str).unwrap_or("");
            let int = || value.and_then(Item::as_i64).unwrap_or(0);
            match key?.as_str()? {
                "name" => name = name.or_else(|| Some(text())),
                "stage" => stage = stage.or_else(|| Some(text())),
                "device" => device = device.or_else(|| Some(int())),
                "time_us" => time_us = time_us.or_else(|| Some(int())),
                _ => return None,
            }
        }
        self.annotations.push(Annotation {
            device: device.unwrap_or(0),
            time_us: time_us.unwrap_or(0),
            name: name.unwrap_or("").to_string(),
            stage: stage?.to_string(),
        });
        Some(Value::Handle(
            ANNOTATION,
            (self.annotations.len() - 1) as u32,
        ))
    }

    /// Takes a segment's block dict (see [`FoldedBlock`]); `None` leaves it to be built: a
    /// dict `read_segment` would refuse, and any dict decoded on demand for another
    /// thread's chunk (a chunk's fold hands back trace entries alone).
    fn block(&mut self, items: &DictItems<'_>) -> Option<Value> {
        if self.nested || !self.take_dicts || self.blocks.len() >= u32::MAX as usize {
            return None;
        }
        // As `Value::get` reads a dict: the first item of each key, keys that are not strs
        // passed over.
        let (mut address, mut size, mut requested_size, mut state, mut stack) =
            (None, None, None, None, None);
        for (pair, key) in items.keys().enumerate() {
            let index = 2 * pair + 1;
            match key.and_then(Value::as_str) {
                Some("address") if address.is_none() => {
                    address = Some(
                        items
                            .get(index)
                            .and_then(Item::as_i64)
                            .map(|n| n.max(0) as u64),
                    );
                }
                Some("size") if size.is_none() => size = Some(items.get(index)?.as_i64()),
                Some("requested_size") if requested_size.is_none() => {
                    requested_size = Some(
                        items
                            .get(index)
                            .and_then(Item::as_i64)
                            .map(|n| n.max(0) as u64),
                    );
                }
                Some("state") if state.is_none() => {
                    state = Some(match items.get(index).and_then(Item::as_str)? {
                        "active_allocated" => BlockState::ActiveAllocated,
                        "active_pending_free" | "active_awaiting_free" => {
                            BlockState::ActivePendingFree
                        }
                        "inactive" => BlockState::Inactive,
                        _ => return None,
                    });
                }
                Some("frames") if stack.is_none() => {
                    stack = Some(items.value(index).and_then(stack_id));
                }
                _ => {}
            }
        }
        let size = u64::try_from(size??).ok()?;
        self.blocks.push(FoldedBlock {
            address: address.flatten(),
            size,
            requested_size: requested_size.flatten(),
            state: state?,
            stack: stack.flatten().unwrap_or(0),
        });
        Some(Value::Handle(BLOCK, (self.blocks.len() - 1) as u32))
    }

    /// Keeps `entries` as the next part of the trace.
    fn keep(&mut self, entries: Vec<TraceEntry>) {
        self.done_bytes += (entries.capacity() * std::mem::size_of::<TraceEntry>()) as u64;
        self.done.push_part(entries);
    }

    fn build(self, root: Value) -> Result<Snapshot, TorchSnapshotError> {
        let mut snapshot = Snapshot {
            frames: self.frames,
            stacks: self.stacks.into_vecs(),
            streams: self.streams,
            ..Snapshot::default()
        };
        // Every entry, in order: the merged parts, then those decoded after them.
        let mut entries = self.done;
        entries.push_part(self.entries);
        let ranges = self.ranges;
        let prepared = self.prepared;
        let blocks = self.blocks;
        let segments_value = match &root {
            Value::List(_) => Some(&root),
            Value::Dict(_) => root.get("segments"),
            other => {
                return Err(shape(
                    "(top level)",
                    format!("is {}, not a dict or list", a_type(other.type_name())),
                ))
            }
        };
        let segments_value =
            segments_value.ok_or_else(|| shape("segments", "is missing".to_string()))?;
        snapshot.segments = match (segments_value, prepared) {
            // The list read ahead, freed while the chunks decoded (`Merge::prepare`).
            (Value::Handle(STAND_IN, _), Some(prepared)) => prepared.segments?,
            _ => {
                let segments = segments_value.as_seq().ok_or_else(|| {
                    shape(
                        "segments",
                        format!("is {}", a_type(segments_value.type_name())),
                    )
                })?;
                read_segments(segments, &blocks)?
            }
        };
        if let Some(traces) = root.get("device_traces") {
            let traces = traces.as_seq().ok_or_else(|| {
                shape(
                    "device_traces",
                    format!("is {}", a_type(traces.type_name())),
                )
            })?;
            for (device, trace) in traces.iter().enumerate() {
                let path = format!("device_traces[{device}]");
                let list = match trace {
                    Value::Handle(ENTRIES, range) => {
                        let (start, end) = ranges
                            .get(*range as usize)
                            .copied()
                            .ok_or_else(|| shape(&path, "refers to nothing".to_string()))?;
                        let (start, end) = (start as usize, end as usize);
                        if start == 0 && end == entries.len() {
                            // The usual case, one device: hand over the entries without a copy.
                            std::mem::take(&mut entries)
                        } else if start <= end && end <= entries.len() {
                            Trace::from(entries.to_vec(start, end))
                        } else {
                            Trace::default()
                        }
                    }
                    Value::List(list) => {
                        let mut out = Vec::with_capacity(list.items.len());
                        for (index, item) in list.items.iter().enumerate() {
                            match item {
                                Value::Handle(ENTRY, entry) => {
                                    if let Some(entry) = entries.get(*entry as usize) {
                                        out.push(*entry);
                                    }
                                }
                                Value::Handle(RUN, run) => {
                                    if let Some(&(start, end)) = ranges.get(*run as usize) {
                                        let (start, end) = (start as usize, end as usize);
                                        if start <= end && end <= entries.len() {
                                            for (_, slice) in entries.slices(start, end) {
                                                out.extend_from_slice(slice);
                                            }
                                        }
                                    }
                                }
                                other => {
                                    return Err(shape(
                                        &format!("{path}[{index}]"),
                                        format!(
                                            "is {}, not a trace entry",
                                            a_type(other.type_name())
                                        ),
                                    ))
                                }
                            }
                        }
                        Trace::from(out)
                    }
                    other => return Err(shape(&path, format!("is {}", a_type(other.type_name())))),
                };
                snapshot.traces.push(list);
            }
        }
        if let Some(settings) = root.get("allocator_settings") {
            snapshot.allocator_settings = Some(read_settings(settings));
        }
        if let Some(annotations) = root.get("external_annotations").and_then(Value::as_seq) {
            let folded = &self.annotations;
            snapshot.annotations = annotations
                .iter()
                .filter_map(|value| match *value {
                    Value::Handle(ANNOTATION, id) => folded.get(id as usize).cloned(),
                    _ => read_annotation(value),
                })
                .collect();
        }
        if let Some(items) = root.as_dict() {
            for (key, _) in items {
                let key = key.as_str().unwrap_or("?");
                if !matches!(
                    key,
                    "segments" | "device_traces" | "allocator_settings" | "external_annotations"
                ) {
                    snapshot.other_keys.push(key.to_string());
                }
            }
        }
        Ok(snapshot)
    }
}

impl Merge for SnapshotFold {
    type Part = SnapshotPart;

    /// Reads the segments ahead (the list after a `'segments'` key, complete by the time the
    /// trace starts in a snapshot) and names the list's place: `build` uses them where the
    /// snapshot's segments are the stand-in the decoder put there, so the result is what it
    /// would have read itself. A list still being filled is named only when `finish` would
    /// keep it as it is (it holds no handle: not a stack, not a run of trace entries), so
    /// that leaving it unfinished changes nothing else in the fold.
    fn prepare(&mut self, stack: &[Open<'_>]) -> Option<usize> {
        let (place, items) = stack
            .windows(2)
            .enumerate()
            .find_map(|(place, pair)| match pair {
                [Open::Value(Value::Str(key)), Open::List(items)]
                    if key.as_str() == "segments"
                        && !items.iter().any(|item| matches!(item, Value::Handle(..))) =>
                {
                    Some((place + 1, *items))
                }
                [Open::Value(Value::Str(key)), Open::Value(Value::List(list))]
                    if key.as_str() == "segments" =>
                {
                    Some((place + 1, list.items.as_slice()))
                }
                _ => None,
            })?;
        self.prepared = Some(PreparedSegments {
            segments: read_segments(items, &self.blocks),
        });
        Some(place)
    }

    /// The stand-in is the top-level dict's `'segments'`, the one place `build` reads it.
    fn stands_in(&self, root: &Value) -> bool {
        self.prepared.is_some()
            && matches!(root, Value::Dict(_))
            && matches!(root.get("segments"), Some(Value::Handle(STAND_IN, _)))
    }

    /// Sizes the entries once (a failed reservation is left to the vector's growth).
    fn expect_items(&mut self, items: usize) {
        let _ = self.entries.try_reserve_exact(items);
    }

    fn into_part(self, list: Value) -> Result<SnapshotPart, String> {
        let whole = match list {
            Value::Handle(ENTRIES, range) => self.ranges.get(range as usize).copied(),
            _ => None,
        };
        if !self.done.is_empty() || whole != Some((0, self.entries.len() as u32)) {
            return Err("a chunk of the trace holds more than its entries".to_string());
        }
        Ok(SnapshotPart {
            frames: self.frames,
            stacks: self.stacks,
            streams: self.streams,
            entries: self.entries,
        })
    }

    /// Interns each part's frames, stacks and streams in order (so ids come out as the
    /// sequential decoder gives them: by first appearance) and appends its entries. What
    /// does not depend on the order runs on threads, one group of parts each: turning a
    /// part's stacks into global frame ids, and renumbering its entries; the interning
    /// itself (a hash look-up per distinct stack of each part) stays on this thread.
    fn merge(&mut self, list: &mut Vec<Value>, mut parts: Vec<SnapshotPart>) -> Result<(), String> {
        if !list.is_empty() {
            return Err("the trace has items before its chunks".to_string());
        }
        let start = self.done.len() + self.entries.len();
        let total: usize = parts.iter().map(|part| part.entries.len()).sum();
        if start + total >= u32::MAX as usize {
            return Err("more trace entries than oomdoc can hold".to_string());
        }
        let timing = profile::phase(|| "merge: frames".to_string());
        // Frames already interned (most are: the segments' stacks come first) are looked up on
        // threads, the map only read; the new ones are then interned here in the parts' order,
        // so ids come out as one thread gives them.
        let (known, frames) = (&self.frame_index, &self.frames);
        let nothing = vec![(); parts.len()];
        let found = on_threads(&mut parts, &nothing, |part, _| {
            part.frames
                .iter()
                .map(|frame| known.get(frames, frame))
                .collect::<Vec<Option<u32>>>()
        });
        let frame_maps: Vec<Vec<u32>> = parts
            .iter()
            .zip(found)
            .map(|(part, found)| {
                part.frames
                    .iter()
                    .zip(found)
                    .map(|(frame, id)| id.unwrap_or_else(|| self.intern_frame_ref(frame)))
                    .collect()
            })
            .collect();
        drop(timing);
        // Each part's stacks in global frame ids, flat, with where each stack ends.
        let timing = profile::phase(|| "merge: stacks in global frame ids".to_string());
        // Stacks held already (most are: the segments' blocks name them first) are looked up
        // here too, on the threads, the table only read; the new ones are then interned on this
        // thread in the parts' order, so ids come out as one thread gives them (the interning
        // of every part's stacks on this thread, a table look-up each, was 0.006 s of the
        // lent host's serial path).
        let known = &self.stacks;
        let translated = on_threads(&mut parts, &frame_maps, |part, frames| {
            // The part's own frames (their strings) are freed here, off the merging thread.
            drop(std::mem::take(&mut part.frames));
            let stacks = std::mem::take(&mut part.stacks);
            let (flat, ends) = stacks.flat();
            let mut ids = Vec::with_capacity(flat.len());
            for &id in flat {
                ids.push(
                    *frames
                        .get(id as usize)
                        .ok_or("a stack names an unknown frame")?,
                );
            }
            let mut found = Vec::with_capacity(ends.len());
            let mut from = 0;
            for &end in ends {
                found.push(ids.get(from..end).and_then(|stack| known.find(stack)));
                from = end;
            }
            Ok::<_, String>((ids, ends.to_vec(), found))
        });
        drop(timing);
        let timing = profile::phase(|| "merge: intern stacks and streams".to_string());
        let mut maps = Vec::with_capacity(parts.len());
        for (part, translated) in parts.iter().zip(translated) {
            let (ids, ends, found) = translated?;
            let mut stacks = Vec::with_capacity(ends.len());
            let mut from = 0;
            for (end, found) in ends.into_iter().zip(found) {
                stacks.push(match found {
                    Some(id) => id,
                    None => self.intern_ids(&ids[from..end]),
                });
                from = end;
            }
            let mut streams = Vec::with_capacity(part.streams.len());
            for &raw in &part.streams {
                streams.push(self.stream(raw)?);
            }
            maps.push((stacks, streams));
        }
        drop(timing);
        let timing = profile::phase(|| "merge: renumber entries".to_string());
        let renumbered = on_threads(&mut parts, &maps, |part, (stacks, streams)| {
            for entry in &mut part.entries {
                let stream = streams.get(entry.stream_index() as usize);
                let stack = stacks.get(entry.stack as usize);
                let (Some(&stream), Some(&stack)) = (stream, stack) else {
                    return Err("a trace entry names an unknown stack or stream".to_string());
                };
                entry.set_stream_index(stream);
                entry.stack = stack;
            }
            Ok(())
        });
        renumbered.into_iter().collect::<Result<(), String>>()?;
        drop(maps);
        drop(timing);
        // The parts' entries are kept as they are, each a part of the trace (no copy), after
        // the entries decoded before them.
        let timing = profile::phase(|| "merge: keep the parts".to_string());
        let before = std::mem::take(&mut self.entries);
        self.keep(before);
        for part in parts {
            self.keep(part.entries);
        }
        drop(timing);
        self.ranges.push((start as u32, (start + total) as u32));
        list.push(Value::Handle(RUN, (self.ranges.len() - 1) as u32));
        Ok(())
    }
}

/// `work(part, with)` for each part and its `with`, on up to as many threads as the machine
/// has cores (contiguous groups of parts); the results in the parts' order.
fn on_threads<P: Send, W: Sync, R: Send>(
    parts: &mut [P],
    with: &[W],
    work: impl Fn(&mut P, &W) -> R + Sync,
) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = cores.min(parts.len()).max(1);
    if threads == 1 {
        return parts
            .iter_mut()
            .zip(with)
            .map(|(part, with)| work(part, with))
            .collect();
    }
    let per = parts.len().div_ceil(threads);
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .chunks_mut(per)
            .zip(with.chunks(per))
            .map(|(parts, with)| {
                scope.spawn(move || {
                    parts
                        .iter_mut()
                        .zip(with)
                        .map(|(part, with)| work(part, with))
                        .collect::<Vec<R>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

impl Fold for SnapshotFold {
    fn nested(&mut self, on: bool) {
        self.nested = on;
    }

    /// Keeps a list of consecutive trace entries as one run, so a trace of millions of
    /// entries never exists as millions of handles.
    fn append(&mut self, items: &mut Vec<Value>, new: &[Value]) -> bool {
        let Some(&Value::Handle(ENTRY, first)) = new.first() else {
            return false;
        };
        let count = new.len() as u32;
        let contiguous = new.iter().enumerate().all(|(offset, item)| {
            matches!(item, Value::Handle(ENTRY, id) if *id == first.wrapping_add(offset as u32))
        });
        if !contiguous {
            return false;
        }
        match items.as_slice() {
            [] => {
                self.ranges.push((first, first.saturating_add(count)));
                items.push(Value::Handle(RUN, (self.ranges.len() - 1) as u32));
                true
            }
            [Value::Handle(RUN, run)] => match self.ranges.get_mut(*run as usize) {
                Some(range) if range.1 == first => {
                    range.1 = range.1.saturating_add(count);
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    fn dict(&mut self, items: &DictItems<'_>) -> Result<Option<Value>, String> {
        self.fold_dict(items)
    }

    /// A trace entry's `frames` read inline: folded into a stack without being built.
    fn list(&mut self, items: &ListItems<'_>) -> Result<Option<Value>, String> {
        self.scratch.clear();
        for &(kind, id) in items.handles() {
            if kind != FRAME {
                return Ok(None);
            }
            self.scratch.push(id);
        }
        if self.scratch.is_empty() {
            return Ok(None);
        }
        Ok(Some(Value::Handle(STACK, self.intern_scratch())))
    }

    /// A frame or a stack decoded on demand, by content (see [`SharedHandle`]).
    fn share(&self, value: &Value) -> Option<Shared> {
        let handle = match *value {
            Value::Handle(FRAME, id) => SharedHandle::Frame(self.frames.get(id as usize)?.clone()),
            Value::Handle(STACK, id) => {
                let ids = self.stacks.get(id as usize)?;
                let frames = ids
                    .iter()
                    .map(|&frame| self.frames.get(frame as usize).cloned())
                    .collect::<Option<Vec<Frame>>>()?;
                if frames.is_empty() {
                    return None;
                }
                SharedHandle::Stack(frames)
            }
            _ => return None,
        };
        Some(std::sync::Arc::new(handle))
    }

    /// Interns what [`SnapshotFold::share`] gave, as decoding the value would (see
    /// [`SharedHandle`]).
    fn adopt(&mut self, shared: &Shared) -> Option<Value> {
        match shared.downcast_ref::<SharedHandle>()? {
            SharedHandle::Frame(frame) => Some(Value::Handle(FRAME, self.intern_frame_ref(frame))),
            SharedHandle::Stack(frames) => {
                let ids: Vec<u32> = frames
                    .iter()
                    .map(|frame| self.intern_frame_ref(frame))
                    .collect();
                if ids.is_empty() {
                    return None;
                }
                Some(Value::Handle(STACK, self.intern_ids(&ids)))
            }
        }
    }

    fn retained_bytes(&self) -> u64 {
        self.interned_bytes
            + self.done_bytes
            + (self.entries.capacity() * std::mem::size_of::<TraceEntry>()) as u64
            + (self.ranges.capacity() * 8) as u64
            + (self.blocks.capacity() * std::mem::size_of::<FoldedBlock>()) as u64
            + (self.annotations.capacity() * std::mem::size_of::<Annotation>()) as u64
    }

    fn finish(&mut self, container: Finished) -> Result<Value, String> {
        match container {
            Finished::Dict(dict) => {
                let values: Vec<&Value> = dict
                    .items
                    .iter()
                    .flat_map(|(key, value)| [key, value])
                    .collect();
                let storage = DictStorage::from_values(&values);
                match self.fold_dict(&storage.items())? {
                    Some(value) => Ok(value),
                    None => Ok(Finished::Dict(dict).into_value()),
                }
            }
            Finished::List(list) => {
                if let Some(stack) = self.stack_of(list.items.iter()) {
                    return Ok(stack);
                }
                if let [Value::Handle(RUN, run)] = list.items.as_slice() {
                    return Ok(Value::Handle(ENTRIES, *run));
                }
                if let Some(range) = contiguous_entries(&list.items) {
                    self.ranges.push(range);
                    return Ok(Value::Handle(ENTRIES, (self.ranges.len() - 1) as u32));
                }
                Ok(Finished::List(list).into_value())
            }
            other => Ok(other.into_value()),
        }
    }
}

/// A memo value another thread's fold made into a frame or a stack handle, by content, for
/// the fold of a thread that meets it again ([`Fold::share`], [`Fold::adopt`]). Decoding that
/// value's bytes in a fold gives the same: a frame dict becomes a frame handle whatever the
/// fold (its keys and strings decide), interned by content (`intern_frame`), and a list of
/// frames a stack handle, its frames interned in order and then the stack of their ids
/// (`stack_of`); so adopting interns the same frames and stack, in the same order, with the
/// same memory count, and gives the handle that decoding gives.
enum SharedHandle {
    Frame(Frame),
    Stack(Vec<Frame>),
}

/// `(start, end)` when the list is entries `start..end` in order.
fn contiguous_entries(items: &[Value]) -> Option<(u32, u32)> {
    let Some(Value::Handle(ENTRY, first)) = items.first() else {
        return None;
    };
    for (offset, item) in items.iter().enumerate() {
        match item {
            Value::Handle(ENTRY, id) if *id as usize == *first as usize + offset => {}
            _ => return None,
        }
    }
    Some((*first, first.saturating_add(items.len() as u32)))
}

#[inline]
fn unsigned(items: &DictItems<'_>, index: usize, key: &str) -> Result<u64, String> {
    match items.int(index) {
        Some(number) if number >= 0 => Ok(number as u64),
        number => Err(not_unsigned(items, index, key, number)),
    }
}

#[cold]
fn not_unsigned(items: &DictItems<'_>, index: usize, key: &str, number: Option<i64>) -> String {
    match number {
        Some(number) => format!("trace `{key}` is negative ({number})"),
        None => format!(
            "trace `{key}` is {}",
            a_type(items.get(index).map_or("nothing", Item::type_name))
        ),
    }
}

/// The stack of a `frames` value: a folded stack, or an empty list.
fn stack_id(value: &Value) -> Option<StackId> {
    match value {
        Value::Handle(STACK, id) => Some(*id),
        Value::List(list) if list.items.is_empty() => Some(0),
        _ => None,
    }
}

/// A Python type name with its article, for messages: "an `int`", "a `str`", "nothing".
fn a_type(name: &str) -> String {
    match name {
        "nothing" => name.to_string(),
        "int" | "None" => format!("an `{name}`"),
        _ => format!("a `{name}`"),
    }
}

fn shape(path: &str, reason: String) -> TorchSnapshotError {
    TorchSnapshotError::Shape {
        path: path.to_string(),
        reason,
    }
}

fn field<'v>(value: &'v Value, path: &str, key: &str) -> Result<&'v Value, TorchSnapshotError> {
    value
        .get(key)
        .ok_or_else(|| shape(&format!("{path}.{key}"), "is missing".to_string()))
}

fn int_field(value: &Value, path: &str, key: &str) -> Result<u64, TorchSnapshotError> {
    let found = field(value, path, key)?;
    match found.as_i64() {
        Some(number) if number >= 0 => Ok(number as u64),
        _ => Err(shape(
            &format!("{path}.{key}"),
            format!("is not a non-negative int ({})", found.type_name()),
        )),
    }
}

fn optional_int(value: &Value, key: &str) -> Option<u64> {
    value
        .get(key)
        .and_then(Value::as_i64)
        .map(|n| n.max(0) as u64)
}

fn read_segment(
    value: &Value,
    path: &str,
    folded: &[FoldedBlock],
) -> Result<Segment, TorchSnapshotError> {
    if value.as_dict().is_none() {
        return Err(shape(
            path,
            format!("is {}, not a dict", a_type(value.type_name())),
        ));
    }
    let total_size = int_field(value, path, "total_size")?;
    let address = int_field(value, path, "address")?;
    let segment_type = match value.get("segment_type").and_then(Value::as_str) {
        Some("small") => SegmentType::Small,
        Some(_) => SegmentType::Large,
        None if total_size == 2 << 20 => SegmentType::Small,
        None => SegmentType::Large,
    };
    let pool_id = match value.get("segment_pool_id").and_then(Value::as_seq) {
        Some([a, b]) => (a.as_i64().unwrap_or(0), b.as_i64().unwrap_or(0)),
        _ => (0, 0),
    };
    let mut blocks = Vec::new();
    if let Some(list) = value.get("blocks") {
        let items = list.as_seq().ok_or_else(|| {
            shape(
                &format!("{path}.blocks"),
                format!("is {}", a_type(list.type_name())),
            )
        })?;
        let mut running = address;
        for (index, block) in items.iter().enumerate() {
            if let Value::Handle(BLOCK, id) = *block {
                let Some(folded) = folded.get(id as usize) else {
                    let block_path = format!("{path}.blocks[{index}]");
                    return Err(shape(&block_path, "refers to nothing".to_string()));
                };
                let block_address = folded.address.unwrap_or(running);
                running = block_address.saturating_add(folded.size);
                blocks.push(Block {
                    address: block_address,
                    size: Bytes(folded.size),
                    requested_size: Bytes(folded.requested_size.unwrap_or(folded.size)),
                    state: folded.state,
                    stack: folded.stack,
                });
                continue;
            }
            let block_path = format!("{path}.blocks[{index}]");
            if block.as_dict().is_none() {
                return Err(shape(
                    &block_path,
                    format!("is {}", a_type(block.type_name())),
                ));
            }
            let size = int_field(block, &block_path, "size")?;
            let state = match block.get("state").and_then(Value::as_str) {
                Some("active_allocated") => BlockState::ActiveAllocated,
                Some("active_pending_free" | "active_awaiting_free") => {
                    BlockState::ActivePendingFree
                }
                Some("inactive") => BlockState::Inactive,
                Some(other) => {
                    return Err(shape(
                        &format!("{block_path}.state"),
                        format!("is `{other}`"),
                    ))
                }
                None => return Err(shape(&format!("{block_path}.state"), "is missing".into())),
            };
            let block_address = optional_int(block, "address").unwrap_or(running);
            running = block_address.saturating_add(size);
            blocks.push(Block {
                address: block_address,
                size: Bytes(size),
                requested_size: Bytes(optional_int(block, "requested_size").unwrap_or(size)),
                state,
                stack: block.get("frames").and_then(stack_id).unwrap_or(0),
            });
        }
    }
    let sum = |state: &[BlockState]| -> u64 {
        blocks
            .iter()
            .filter(|b| state.contains(&b.state))
            .map(|b| b.size.0)
            .sum()
    };
    let allocated = optional_int(value, "allocated_size")
        .unwrap_or_else(|| sum(&[BlockState::ActiveAllocated]));
    let active = optional_int(value, "active_size")
        .unwrap_or_else(|| sum(&[BlockState::ActiveAllocated, BlockState::ActivePendingFree]));
    let device = optional_int(value, "device").unwrap_or(0);
    let device = CudaOrdinal::try_from(device).map_err(|_| {
        shape(
            &format!("{path}.device"),
            format!("is {device}, not a CUDA device ordinal"),
        )
    })?;
    Ok(Segment {
        device,
        address,
        total_size: Bytes(total_size),
        allocated_size: Bytes(allocated),
        active_size: Bytes(active),
        requested_size: Bytes(optional_int(value, "requested_size").unwrap_or(allocated)),
        stream: optional_int(value, "stream").unwrap_or(0),
        segment_type,
        pool_id,
        is_expandable: value
            .get("is_expandable")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        stack: value.get("frames").and_then(stack_id).unwrap_or(0),
        blocks,
    })
}

/// One `external_annotations` entry: `{..metadata (name, stage).., device, time_us}`
/// (`torch/csrc/cuda/memory_snapshot.cpp`, `_initRecordAnnotations`). Anything not a dict
/// is skipped: annotations are not needed to read the rest.
fn read_annotation(value: &Value) -> Option<Annotation> {
    value.as_dict()?;
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let int = |key: &str| value.get(key).and_then(Value::as_i64).unwrap_or(0);
    Some(Annotation {
        device: int("device"),
        time_us: int("time_us"),
        name: text("name"),
        stage: text("stage"),
    })
}

fn read_settings(value: &Value) -> AllocatorSettings {
    let mut settings = AllocatorSettings::default();
    for (key, item) in value.as_dict().unwrap_or(&[]) {
        let Some(key) = key.as_str() else { continue };
        match key {
            "PYTORCH_CUDA_ALLOC_CONF" => {
                settings.alloc_conf = item.as_str().unwrap_or("").to_string()
            }
            "max_split_size" => {
                settings.max_split_size = item
                    .as_i64()
                    .filter(|n| *n >= 0 && *n < i64::MAX)
                    .map(|n| Bytes(n as u64))
            }
            "garbage_collection_threshold" => {
                settings.garbage_collection_threshold = item.as_f64().unwrap_or(0.0)
            }
            "expandable_segments" => settings.expandable_segments = item.as_bool().unwrap_or(false),
            _ => {
                settings.other.insert(key.to_string(), python_repr(item));
            }
        }
    }
    settings
}

/// A short Python-like rendering of a settings value.
fn python_repr(value: &Value) -> String {
    match value {
        Value::None => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Int(n) => n.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Str(s) => format!("'{s}'"),
        Value::Dict(dict) => {
            let parts: Vec<String> = dict
                .items
                .iter()
                .map(|(k, v)| format!("{}: {}", python_repr(k), python_repr(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::List(list) | Value::Tuple(list) => {
            let parts: Vec<String> = list.items.iter().map(python_repr).collect();
            format!("[{}]", parts.join(", "))
        }
        other => format!("<{}>", other.type_name()),
    }
}

mod stacks;
use stacks::StackTable;

#[cfg(test)]
mod parallel_tests;

#[cfg(test)]
mod tests;
