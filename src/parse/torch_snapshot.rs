//! A PyTorch memory snapshot (`torch.cuda.memory._dump_snapshot()`) → [`Snapshot`].
//!
//! Decodes with our data-only pickle decoder (`parse::pickle`, nothing is executed) and a
//! fold that turns frames, stacks and trace entries into compact interned data as soon as
//! each is complete, so a trace of millions of entries never exists as a tree of dicts.
//! Schema: `torch/cuda/memory.py` `_snapshot()` (2.11 measured); a bare list of segments
//! (`torch.cuda.memory_snapshot()`) is accepted too, as `_memory_viz.py` does.
//! No I/O: the caller passes the reader (`source::file::open` handles gzip).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::rc::Rc;

use super::pickle::{
    self, DictItems, DictStorage, Finished, Fold, Item, Limits, ListItems, Merge, Parallel,
    PickleError, Value,
};
use crate::model::gpu::CudaOrdinal;
use crate::model::snapshot::{
    Action, AllocatorSettings, Annotation, Block, BlockState, Frame, Segment, SegmentType,
    Snapshot, StackId, TraceEntry,
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
    let root = pickle::decode_prefetched(reader, limits, &mut fold)?;
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

struct SnapshotFold {
    frames: Vec<Frame>,
    frame_index: HashMap<Frame, u32>,
    stacks: Vec<Vec<u32>>,
    stack_index: HashMap<Box<[u32]>, u32, BuildHasherDefault<FrameIdsHasher>>,
    /// Frame ids of the list being folded (reused).
    scratch: Vec<u32>,
    streams: Vec<u64>,
    stream_index: HashMap<u64, u32>,
    last_stream: Option<(u64, u32)>,
    key_cache: [(Option<Rc<String>>, Field); 16],
    action_cache: Vec<(Rc<String>, Action)>,
    entries: Vec<TraceEntry>,
    /// Ranges of `entries` that were one list.
    ranges: Vec<(u32, u32)>,
    /// Bytes held by frames, stacks and streams (entries and ranges are counted by length).
    interned_bytes: u64,
    /// Decoding a memo value made by another thread's chunk (see [`Fold::nested`]).
    nested: bool,
}

/// What a chunk of the trace decoded on a thread of its own hands back ([`Merge`]): its
/// entries, with frame, stack and stream ids of its own.
struct SnapshotPart {
    frames: Vec<Frame>,
    stacks: Vec<Vec<u32>>,
    streams: Vec<u64>,
    entries: Vec<TraceEntry>,
}

impl SnapshotFold {
    fn new() -> Self {
        let mut stack_index: HashMap<Box<[u32]>, u32, BuildHasherDefault<FrameIdsHasher>> =
            HashMap::default();
        stack_index.insert(Box::default(), 0);
        SnapshotFold {
            frames: Vec::new(),
            frame_index: HashMap::new(),
            stacks: vec![Vec::new()],
            stack_index,
            scratch: Vec::new(),
            streams: Vec::new(),
            stream_index: HashMap::new(),
            last_stream: None,
            key_cache: std::array::from_fn(|_| (None, Field::Other)),
            action_cache: Vec::new(),
            entries: Vec::new(),
            ranges: Vec::new(),
            interned_bytes: 0,
            nested: false,
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
        let frame = Frame {
            name: name?.to_string(),
            filename: filename?.to_string(),
            line: line.unwrap_or(0),
        };
        Some(self.intern_frame(frame))
    }

    /// The id of `frame`, interned by content.
    fn intern_frame(&mut self, frame: Frame) -> u32 {
        if let Some(&id) = self.frame_index.get(&frame) {
            return id;
        }
        let id = self.frames.len() as u32;
        // Held twice (list and index): the strings, the struct, the map's slot.
        self.interned_bytes += 2 * (frame.name.len() + frame.filename.len()) as u64 + 160;
        self.frames.push(frame.clone());
        self.frame_index.insert(frame, id);
        id
    }

    /// The id of the stack whose frame ids are in `self.scratch`, interned.
    fn intern_scratch(&mut self) -> u32 {
        if let Some(&id) = self.stack_index.get(self.scratch.as_slice()) {
            return id;
        }
        let id = self.stacks.len() as u32;
        self.interned_bytes += 8 * self.scratch.len() as u64 + 96;
        self.stacks.push(self.scratch.clone());
        self.stack_index
            .insert(self.scratch.clone().into_boxed_slice(), id);
        id
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
        if self.entries.len() >= u32::MAX as usize {
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
        Ok(Value::Handle(ENTRY, (self.entries.len() - 1) as u32))
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
            Some("name") => Ok(self.frame(items.pairs()).map(|id| Value::Handle(FRAME, id))),
            _ => Ok(None),
        }
    }

    fn build(self, root: Value) -> Result<Snapshot, TorchSnapshotError> {
        let mut snapshot = Snapshot {
            frames: self.frames,
            stacks: self.stacks,
            streams: self.streams,
            ..Snapshot::default()
        };
        let mut entries = self.entries;
        let ranges = self.ranges;
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
        let segments = segments_value.as_seq().ok_or_else(|| {
            shape(
                "segments",
                format!("is {}", a_type(segments_value.type_name())),
            )
        })?;
        for (index, segment) in segments.iter().enumerate() {
            snapshot
                .segments
                .push(read_segment(segment, &format!("segments[{index}]"))?);
        }
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
                        if start == 0 && end as usize == entries.len() {
                            // The usual case, one device: hand over the entries without a copy.
                            std::mem::take(&mut entries)
                        } else {
                            entries
                                .get(start as usize..end as usize)
                                .map(<[TraceEntry]>::to_vec)
                                .unwrap_or_default()
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
                                        out.extend(
                                            entries
                                                .get(start as usize..end as usize)
                                                .unwrap_or(&[]),
                                        );
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
                        out
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
            snapshot.annotations = annotations.iter().filter_map(read_annotation).collect();
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

    fn into_part(self, list: Value) -> Result<SnapshotPart, String> {
        let whole = match list {
            Value::Handle(ENTRIES, range) => self.ranges.get(range as usize).copied(),
            _ => None,
        };
        if whole != Some((0, self.entries.len() as u32)) {
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
    /// sequential decoder gives them: by first appearance) and appends its entries.
    fn merge(&mut self, list: &mut Vec<Value>, parts: Vec<SnapshotPart>) -> Result<(), String> {
        if !list.is_empty() {
            return Err("the trace has items before its chunks".to_string());
        }
        let start = self.entries.len();
        let total: usize = parts.iter().map(|part| part.entries.len()).sum();
        if start + total >= u32::MAX as usize {
            return Err("more trace entries than oomdoc can hold".to_string());
        }
        self.entries
            .try_reserve_exact(total)
            .map_err(|_| "out of memory holding the trace entries".to_string())?;
        for part in parts {
            let frames: Vec<u32> = part
                .frames
                .into_iter()
                .map(|frame| self.intern_frame(frame))
                .collect();
            let mut stacks = Vec::with_capacity(part.stacks.len());
            for ids in &part.stacks {
                self.scratch.clear();
                for &id in ids {
                    let id = frames
                        .get(id as usize)
                        .ok_or("a stack names an unknown frame")?;
                    self.scratch.push(*id);
                }
                stacks.push(self.intern_scratch());
            }
            let mut streams = Vec::with_capacity(part.streams.len());
            for &raw in &part.streams {
                streams.push(self.stream(raw)?);
            }
            for entry in part.entries {
                let stream = streams.get(entry.stream_index() as usize);
                let stack = stacks.get(entry.stack as usize);
                let (Some(&stream), Some(&stack)) = (stream, stack) else {
                    return Err("a trace entry names an unknown stack or stream".to_string());
                };
                self.entries.push(TraceEntry::new(
                    entry.action(),
                    entry.addr,
                    entry.size,
                    entry.time_us,
                    stream,
                    stack,
                ));
            }
        }
        self.ranges.push((start as u32, (start + total) as u32));
        list.push(Value::Handle(RUN, (self.ranges.len() - 1) as u32));
        Ok(())
    }
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

    fn retained_bytes(&self) -> u64 {
        self.interned_bytes
            + (self.entries.capacity() * std::mem::size_of::<TraceEntry>()) as u64
            + (self.ranges.capacity() * 8) as u64
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

/// A fast hash for interned stacks (slices of frame ids; no input controls the ids, which
/// are assigned densely by this fold): FxHash's multiply-rotate, a word at a time.
#[derive(Default)]
struct FrameIdsHasher(u64);

impl Hasher for FrameIdsHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, value: u32) {
        self.add(u64::from(value));
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }
}

impl FrameIdsHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
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

fn read_segment(value: &Value, path: &str) -> Result<Segment, TorchSnapshotError> {
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

#[cfg(test)]
mod parallel_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/h200-torch2.11/snap/{name}.pickle",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn reads_fragmentation_fixture() {
        let snapshot = parse(&fixture("fragmentation")).unwrap();
        assert_eq!(snapshot.segments.len(), 2);
        assert_eq!(snapshot.segments[1].blocks.len(), 100);
        assert_eq!(snapshot.traces.len(), 1);
        assert_eq!(snapshot.traces[0].len(), 207);
        let oom = snapshot.traces[0].last().unwrap();
        assert_eq!(oom.action(), Action::Oom);
        assert_eq!(oom.device_free(), Some(535953408));
        assert_eq!(oom.size, 2147483648);
        assert!(!snapshot.allocator_settings.unwrap().expandable_segments);
        // Frames are shared: the same stack id for blocks allocated at the same line.
        let stacks: std::collections::HashSet<_> = snapshot.segments[1]
            .blocks
            .iter()
            .filter(|b| b.state == BlockState::ActiveAllocated)
            .map(|b| b.stack)
            .collect();
        assert_eq!(stacks.len(), 1);
        assert!(snapshot.stacks[*stacks.iter().next().unwrap() as usize].len() > 10);
    }

    #[test]
    fn every_fixture_reads() {
        for name in [
            "capacity",
            "fragmentation",
            "fragmentation_expandable",
            "leak_growing",
            "leak_steady",
            "model_forward",
            "other_process",
        ] {
            let snapshot = parse(&fixture(name)).unwrap();
            assert_eq!(snapshot.traces.len(), 1, "{name}");
            assert!(snapshot.other_keys.is_empty(), "{name}");
        }
    }

    /// The start of `{"segments": [], "device_traces": [[entry, …]]}`, with the keys of
    /// an entry memoized at 6–10; entry `i` is memo `11 + i`.
    fn trace_head() -> Vec<u8> {
        let mut bytes =
            b"\x80\x04}\x94(\x8c\x08segments\x94]\x94\x8c\x0ddevice_traces\x94]\x94]\x94(".to_vec();
        for key in ["action", "addr", "size", "stream", "alloc"] {
            bytes.extend([0x8c, key.len() as u8]);
            bytes.extend(key.as_bytes());
            bytes.extend(b"\x940");
        }
        bytes
    }

    /// Trace entry `i`, as PyTorch writes one (a flat dict of memo references and ints);
    /// `re_put` stores it again under its own memo index, as a hostile file may.
    fn trace_entry(i: u32, re_put: bool) -> Vec<u8> {
        let mut bytes = b"}\x94(h\x06h\x0ah\x07J".to_vec();
        bytes.extend((i.wrapping_mul(512)).to_le_bytes());
        bytes.extend(b"h\x08K\x01h\x09K\x00u");
        if re_put {
            bytes.push(b'r');
            bytes.extend((11 + i).to_le_bytes());
        }
        bytes
    }

    const TRACE_TAIL: &[u8] = b"eau.";

    /// An endless stream of trace entries, as a small gzip bomb inflates to.
    struct EndlessTrace {
        pending: Vec<u8>,
        next: u32,
    }

    impl std::io::Read for EndlessTrace {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            while self.pending.len() < buffer.len() {
                self.pending.extend(trace_entry(self.next, false));
                self.next = self.next.wrapping_add(1);
            }
            let n = buffer.len();
            buffer.copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            Ok(n)
        }
    }

    // See: #14, item 8 (80k re-PUT entries, 1.1 MB: 117 s before).
    #[test]
    fn issue_14_re_put_of_trace_entries_is_linear() {
        let count = 80_000;
        let mut bytes = trace_head();
        for i in 0..count {
            bytes.extend(trace_entry(i, true));
        }
        bytes.extend(TRACE_TAIL);
        let started = std::time::Instant::now();
        let snapshot = parse(&bytes).unwrap();
        assert_eq!(snapshot.traces[0].len(), count as usize);
        assert_eq!(snapshot.traces[0][79_999].addr, 79_999 * 512);
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }

    // See: #14, item 8 (a 1 MB gzip of trace entries exhausted memory).
    #[test]
    fn issue_14_endless_trace_stops_at_the_memory_budget() {
        let limits = Limits {
            max_memory_bytes: 32 << 20,
            ..Limits::default()
        };
        let reader = EndlessTrace {
            pending: trace_head(),
            next: 0,
        };
        let error = read_with_limits(reader, limits).unwrap_err();
        assert!(
            matches!(
                error,
                TorchSnapshotError::Pickle(PickleError::Limit {
                    what: "memory budget",
                    limit,
                    ..
                }) if limit == 32 << 20
            ),
            "{error}"
        );
    }

    #[test]
    fn memory_budget_scales_with_the_stored_size() {
        assert_eq!(limits_for(None), Limits::default());
        assert_eq!(limits_for(Some(1 << 20)).max_memory_bytes, 512 << 20);
        assert_eq!(limits_for(Some(600 << 20)).max_memory_bytes, 4800 << 20);
    }

    /// One trace entry of [`memo_id_interning_equals_the_plain_decoder`]'s input.
    #[derive(Debug, Clone)]
    enum Step {
        /// An entry whose new `frames` list refers to these frame memo slots.
        List(Vec<usize>),
        /// An entry sharing the `frames` list of an earlier entry (a `BINGET` of it).
        Shared(usize),
        /// Frame slot `.0` is stored again with what slot `.1` holds (a re-PUT).
        RePut(usize, usize),
    }

    /// A pickle of a trace written two ways: `fast` as Python's pickler writes it
    /// (`EMPTY_DICT MEMOIZE MARK … SETITEMS`, the decoder's fast path), `plain` with `DICT`
    /// and `LIST` opcodes (the general path, containers built then folded). Returns both and
    /// the frame numbers each entry should end up with.
    fn two_encodings(frames: usize, steps: &[Step]) -> (Vec<u8>, Vec<u8>, Vec<Vec<usize>>) {
        fn memo_ref(out: &mut Vec<u8>, index: usize) {
            if index < 256 {
                out.extend([b'h', index as u8]);
            } else {
                out.push(b'j');
                out.extend((index as u32).to_le_bytes());
            }
        }
        let keys = ["action", "addr", "size", "stream", "alloc", "frames"];
        let mut head = trace_head();
        head.truncate(head.len() - keys[..5].iter().map(|k| k.len() + 4).sum::<usize>());
        for key in keys.iter().chain(&["name", "filename", "line"]) {
            head.extend([0x8c, key.len() as u8]);
            head.extend(key.as_bytes());
            head.extend(b"\x940");
        }
        // Memo: 6..=11 entry keys and `alloc`, 12..=14 frame keys, then the frames.
        let key = |name: &str| {
            6 + keys
                .iter()
                .chain(&["name", "filename", "line"])
                .position(|k| *k == name)
                .unwrap_or(0)
        };
        let mut memo = 15;
        for frame in 0..frames {
            head.extend(b"}\x94(");
            memo_ref(&mut head, key("name"));
            let name = format!("f{frame}");
            head.extend([0x8c, name.len() as u8]);
            head.extend(name.as_bytes());
            memo_ref(&mut head, key("filename"));
            head.extend(b"\x8c\x07file.py");
            memo_ref(&mut head, key("line"));
            head.extend([b'K', frame as u8, b'u', b'0']);
            memo += 1;
        }
        let (mut fast, mut plain) = (head.clone(), head);
        let (mut fast_memo, mut plain_memo) = (memo, memo);
        // Which frame each frame slot holds; memo indices of each entry's list; the answer.
        let mut holds: Vec<usize> = (0..frames).collect();
        let mut lists: Vec<(usize, usize, Vec<usize>)> = Vec::new();
        let mut expected = Vec::new();
        for (index, step) in steps.iter().enumerate() {
            let slots = match step {
                Step::RePut(slot, from) => {
                    let (slot, from) = (slot % frames, from % frames);
                    for out in [&mut fast, &mut plain] {
                        memo_ref(out, 15 + from);
                        out.push(b'r');
                        out.extend((15 + slot as u32).to_le_bytes());
                        out.push(b'0');
                    }
                    holds[slot] = holds[from];
                    continue;
                }
                Step::List(slots) => Some(slots),
                Step::Shared(_) if lists.is_empty() => continue,
                Step::Shared(_) => None,
            };
            let entry = |out: &mut Vec<u8>, list: &[u8]| {
                memo_ref(out, key("action"));
                memo_ref(out, key("alloc"));
                memo_ref(out, key("addr"));
                out.push(b'J');
                out.extend((index as u32).to_le_bytes());
                memo_ref(out, key("size"));
                out.extend(b"K\x01");
                memo_ref(out, key("stream"));
                out.extend(b"K\x00");
                memo_ref(out, key("frames"));
                out.extend(list);
            };
            match slots {
                Some(slots) => {
                    let slots: Vec<usize> = slots.iter().map(|slot| slot % frames).collect();
                    let mut refs = Vec::new();
                    for slot in &slots {
                        memo_ref(&mut refs, 15 + slot);
                    }
                    let single = slots.len() == 1;
                    let mut list = b"]\x94".to_vec();
                    if !single {
                        list.push(b'(');
                    }
                    list.extend(&refs);
                    list.push(if single { b'a' } else { b'e' });
                    fast.extend(b"}\x94(");
                    entry(&mut fast, &list);
                    fast.push(b'u');
                    let mut list = b"(".to_vec();
                    list.extend(&refs);
                    list.extend(b"l\x94");
                    plain.push(b'(');
                    entry(&mut plain, &list);
                    plain.extend(b"d\x94");
                    // Fast: the dict is memoized first; plain: the list, then the dict.
                    lists.push((
                        fast_memo + 1,
                        plain_memo,
                        slots.iter().map(|s| holds[*s]).collect(),
                    ));
                    fast_memo += 2;
                    plain_memo += 2;
                }
                None => {
                    let Step::Shared(which) = step else { continue };
                    let (fast_list, plain_list, frames) = lists[which % lists.len()].clone();
                    let mut list = Vec::new();
                    memo_ref(&mut list, fast_list);
                    fast.extend(b"}\x94(");
                    entry(&mut fast, &list);
                    fast.push(b'u');
                    list.clear();
                    memo_ref(&mut list, plain_list);
                    plain.push(b'(');
                    entry(&mut plain, &list);
                    plain.extend(b"d\x94");
                    lists.push((fast_list, plain_list, frames));
                    fast_memo += 1;
                    plain_memo += 1;
                }
            }
            expected.push(lists[lists.len() - 1].2.clone());
        }
        fast.extend(TRACE_TAIL);
        plain.extend(TRACE_TAIL);
        (fast, plain, expected)
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        // A few list shapes, drawn again and again: the repeats a real trace has.
        let shapes = proptest::sample::select(vec![
            vec![0],
            vec![0, 1, 2],
            vec![2, 1, 0],
            vec![3, 3, 3, 3],
            vec![1, 2],
            vec![4, 0, 5, 1, 6, 2, 7],
        ]);
        prop_oneof![
            6 => shapes.prop_map(Step::List),
            2 => proptest::collection::vec(0usize..300, 1..40).prop_map(Step::List),
            2 => any::<usize>().prop_map(Step::Shared),
            1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Step::RePut(a, b)),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// The fast path's list cache (keyed by memo ids) gives every entry the stack the
        /// general path builds, whatever the reuse of memo slots, lists and re-PUTs.
        #[test]
        fn memo_id_interning_equals_the_plain_decoder(
            frames in 1usize..300,
            steps in proptest::collection::vec(step(), 1..80),
        ) {
            let (fast, plain, expected) = two_encodings(frames, &steps);
            let fast = parse(&fast).unwrap();
            let plain = parse(&plain).unwrap();
            let names = |snapshot: &Snapshot| -> Vec<Vec<String>> {
                snapshot.traces[0]
                    .iter()
                    .map(|entry| {
                        snapshot
                            .stack_frames(entry.stack)
                            .iter()
                            .map(|frame| frame.name.clone())
                            .collect()
                    })
                    .collect()
            };
            let expected: Vec<Vec<String>> = expected
                .iter()
                .map(|frames| frames.iter().map(|frame| format!("f{frame}")).collect())
                .collect();
            proptest::prop_assert_eq!(&names(&fast), &expected);
            proptest::prop_assert_eq!(&names(&plain), &expected);
            proptest::prop_assert_eq!(&fast.traces, &plain.traces);
            proptest::prop_assert_eq!(&fast.stacks, &plain.stacks);
            proptest::prop_assert_eq!(&fast.frames, &plain.frames);
        }
    }

    /// One trace entry (or a re-PUT) of [`flat_entries_equal_the_plain_decoder`]'s input.
    #[derive(Debug, Clone)]
    enum Record {
        /// A dict with these keys (numbers into `RECORD_KEYS`) and values (see `record_value`).
        Dict(Vec<(usize, usize)>),
        /// Memo slot `.0` (of the keys, action names and frames) is stored again with what
        /// slot `.1` holds.
        RePut(usize, usize),
    }

    const RECORD_KEYS: [&str; 9] = [
        "action",
        "addr",
        "size",
        "stream",
        "time_us",
        "frames",
        "compile_context",
        "device_free",
        "user_metadata",
    ];
    const RECORD_ACTIONS: [&str; 4] = ["alloc", "free_requested", "free_completed", "oom"];

    /// A trace of `records` written as Python's pickler writes it (`EMPTY_DICT MEMOIZE MARK
    /// … SETITEMS`: the decoder's flat-dict fast path) and with `DICT` and `LIST` opcodes
    /// (the general path only). Memo: 6.. the keys, then the action names, then
    /// `frames` frame dicts.
    fn record_encodings(frames: usize, records: &[Record]) -> (Vec<u8>, Vec<u8>) {
        fn memo_ref(out: &mut Vec<u8>, index: usize) {
            if index < 256 {
                out.extend([b'h', index as u8]);
            } else {
                out.push(b'j');
                out.extend((index as u32).to_le_bytes());
            }
        }
        let mut head = trace_head();
        head.truncate(head.len() - 5 * 4 - "actionaddrsizestreamalloc".len());
        let names = RECORD_KEYS
            .iter()
            .chain(&RECORD_ACTIONS)
            .chain(&["name", "filename"]);
        for name in names {
            head.extend([0x8c, name.len() as u8]);
            head.extend(name.as_bytes());
            head.extend(b"\x940");
        }
        let first_frame = 6 + RECORD_KEYS.len() + RECORD_ACTIONS.len() + 2;
        let (name_key, filename_key) = (first_frame - 2, first_frame - 1);
        for frame in 0..frames {
            head.extend(b"}\x94(");
            memo_ref(&mut head, name_key);
            let name = format!("f{frame}");
            head.extend([0x8c, name.len() as u8]);
            head.extend(name.as_bytes());
            memo_ref(&mut head, filename_key);
            head.extend(b"\x8c\x07file.py");
            head.extend(b"u0");
        }
        let slots = first_frame + frames;
        let (mut fast, mut plain) = (head.clone(), head);
        let (mut fast_memo, mut plain_memo) = (slots, slots);
        // Memo ids of the lists written so far, in each encoding.
        let mut lists: Vec<(usize, usize)> = Vec::new();
        for (index, record) in records.iter().enumerate() {
            let pairs = match record {
                Record::RePut(slot, from) => {
                    for out in [&mut fast, &mut plain] {
                        memo_ref(out, 6 + from % (slots - 6));
                        out.push(b'r');
                        out.extend((6 + (slot % (slots - 6)) as u32).to_le_bytes());
                        out.push(b'0');
                    }
                    continue;
                }
                Record::Dict(pairs) => pairs,
            };
            let (mut fast_items, mut plain_items) = (Vec::new(), Vec::new());
            // Memoized values inside the dict, in order: fast numbers them after the dict,
            // plain before it.
            let mut inner = 0;
            let mut new_lists = Vec::new();
            for (pair, &(key, value)) in pairs.iter().enumerate() {
                for out in [&mut fast_items, &mut plain_items] {
                    memo_ref(out, 6 + key % RECORD_KEYS.len());
                }
                let number = (index * 7 + pair) as u32;
                match value % 11 {
                    0 => {
                        for out in [&mut fast_items, &mut plain_items] {
                            out.extend([b'K', number as u8]);
                        }
                    }
                    1 => {
                        for out in [&mut fast_items, &mut plain_items] {
                            out.push(b'M');
                            out.extend((number as u16).to_le_bytes());
                        }
                    }
                    2 | 3 => {
                        let number = if value % 11 == 3 {
                            -(number as i32) - 1
                        } else {
                            number as i32
                        };
                        for out in [&mut fast_items, &mut plain_items] {
                            out.push(b'J');
                            out.extend(number.to_le_bytes());
                        }
                    }
                    4 => {
                        for out in [&mut fast_items, &mut plain_items] {
                            out.extend([0x8a, 6]);
                            out.extend(&(u64::from(number) << 20).to_le_bytes()[..6]);
                        }
                    }
                    5 => {
                        for out in [&mut fast_items, &mut plain_items] {
                            out.push(b'N');
                        }
                    }
                    6 | 7 => {
                        let action = 6 + RECORD_KEYS.len() + value / 11 % RECORD_ACTIONS.len();
                        for out in [&mut fast_items, &mut plain_items] {
                            memo_ref(out, action);
                        }
                    }
                    8 => {
                        for out in [&mut fast_items, &mut plain_items] {
                            out.extend(b"\x8c\x03N/A\x94");
                        }
                        inner += 1;
                    }
                    9 => {
                        let count = 1 + value / 11 % 5;
                        let mut refs = Vec::new();
                        for item in 0..count {
                            memo_ref(&mut refs, first_frame + (value / 7 + 3 * item) % frames);
                        }
                        fast_items.extend(b"]\x94");
                        if count > 1 {
                            fast_items.push(b'(');
                        }
                        fast_items.extend(&refs);
                        fast_items.push(if count > 1 { b'e' } else { b'a' });
                        plain_items.push(b'(');
                        plain_items.extend(&refs);
                        plain_items.extend(b"l\x94");
                        new_lists.push((fast_memo + 1 + inner, plain_memo + inner));
                        inner += 1;
                    }
                    _ => match lists.get(value / 11 % lists.len().max(1)) {
                        Some(&(fast_list, plain_list)) => {
                            memo_ref(&mut fast_items, fast_list);
                            memo_ref(&mut plain_items, plain_list);
                        }
                        None => {
                            for out in [&mut fast_items, &mut plain_items] {
                                out.push(b'N');
                            }
                        }
                    },
                }
            }
            lists.extend(new_lists);
            fast.extend(b"}\x94(");
            fast.extend(&fast_items);
            fast.push(b'u');
            plain.push(b'(');
            plain.extend(&plain_items);
            plain.extend(b"d\x94");
            fast_memo += 1 + inner;
            plain_memo += 1 + inner;
        }
        fast.extend(TRACE_TAIL);
        plain.extend(TRACE_TAIL);
        (fast, plain)
    }

    /// What a decoded snapshot says about its trace, or the error without its byte offset
    /// (the two encodings differ in length).
    fn trace_outcome(result: Result<Snapshot, TorchSnapshotError>) -> String {
        match result {
            Ok(snapshot) => {
                let stacks: Vec<Vec<&str>> = snapshot
                    .stacks
                    .iter()
                    .map(|stack| {
                        stack
                            .iter()
                            .map(|frame| snapshot.frames[*frame as usize].name.as_str())
                            .collect()
                    })
                    .collect();
                format!("{:?}\n{stacks:?}", snapshot.traces)
            }
            Err(TorchSnapshotError::Pickle(PickleError::Fold { reason, .. })) => reason,
            Err(TorchSnapshotError::Pickle(error)) => {
                let text = error.to_string();
                let cut = text.find(" at byte").unwrap_or(text.len());
                text[..cut].to_string()
            }
            Err(error) => error.to_string(),
        }
    }

    fn record() -> impl proptest::strategy::Strategy<Value = Record> {
        use proptest::prelude::*;
        let pair = (0usize..RECORD_KEYS.len(), 0usize..1000);
        // Mostly entries: `action` first with an action name; the rest drawn freely.
        let entry = (
            0usize..RECORD_ACTIONS.len(),
            proptest::collection::vec(pair.clone(), 0..8),
        )
            .prop_map(|(action, rest)| {
                let mut pairs = vec![(0, 6 + 11 * action)];
                // Unsigned fields mostly get an unsigned int (a bad one fails the trace).
                pairs.extend(rest.into_iter().map(|(key, value)| {
                    let unsigned = matches!(key, 1 | 2 | 3 | 7);
                    if unsigned && !matches!(value % 11, 0 | 1 | 2 | 4) && value / 11 % 8 != 0 {
                        (key, value / 11 * 11 + 4)
                    } else {
                        (key, value)
                    }
                }));
                Record::Dict(pairs)
            });
        // A few layouts, repeated as a real trace repeats one.
        let layouts = proptest::sample::select(vec![
            vec![(0, 6), (1, 4), (2, 2), (3, 0), (4, 4), (5, 9)],
            vec![(0, 17), (1, 4), (2, 1), (3, 0), (4, 4), (6, 8), (5, 9)],
            vec![
                (0, 28),
                (1, 4),
                (2, 2),
                (3, 0),
                (4, 4),
                (6, 8),
                (8, 5),
                (5, 10),
            ],
            vec![(0, 39), (7, 4), (2, 2), (3, 0), (4, 4), (5, 10)],
        ]);
        prop_oneof![
            16 => layouts.prop_map(Record::Dict),
            8 => entry,
            1 => proptest::collection::vec(pair, 0..8).prop_map(Record::Dict),
            2 => (0usize..64, 0usize..64).prop_map(|(a, b)| Record::RePut(a, b)),
        ]
    }

    /// Entries of one of the layouts of [`record`], with some values drawn freely (an int
    /// field that is not an int, an action that is not a str, a list where a scalar was).
    fn layout_record() -> impl proptest::strategy::Strategy<Value = Record> {
        use proptest::prelude::*;
        let layouts = proptest::sample::select(vec![
            vec![(0, 6), (1, 4), (2, 2), (3, 0), (4, 4), (5, 9)],
            vec![
                (0, 17),
                (1, 4),
                (2, 1),
                (3, 0),
                (4, 4),
                (6, 8),
                (5, 9),
                (8, 5),
            ],
            vec![(0, 28), (7, 4), (2, 2), (3, 0), (4, 4), (6, 8), (5, 10)],
        ]);
        let entry = (
            layouts,
            proptest::collection::vec(proptest::option::weighted(0.15, 0usize..1000), 8),
        )
            .prop_map(|(layout, changes)| {
                let pairs = layout
                    .into_iter()
                    .zip(changes)
                    .map(|((key, value), change)| (key, change.unwrap_or(value)))
                    .collect();
                Record::Dict(pairs)
            });
        prop_oneof![
            24 => entry,
            2 => record(),
            1 => (0usize..64, 0usize..64).prop_map(|(a, b)| Record::RePut(a, b)),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Runs of entries of one layout, as a real trace has, with some values straying
        /// from it (an int field that is not an int, an action that is not a str, a list
        /// where a scalar was) and memo slots of keys and frames stored again: the fast
        /// paths give the same trace, stacks and errors as the general path.
        #[test]
        fn perturbed_entries_equal_the_plain_decoder(
            frames in 1usize..40,
            records in proptest::collection::vec(layout_record(), 1..80),
        ) {
            let (fast, plain) = record_encodings(frames, &records);
            proptest::prop_assert_eq!(trace_outcome(parse(&fast)), trace_outcome(parse(&plain)));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Entries read by the flat-dict fast path (with its interned strs and list cache)
        /// give the same trace, stacks and errors as the general path, whatever the keys,
        /// their order, their values, shared lists and re-PUTs of their memo slots.
        #[test]
        fn flat_entries_equal_the_plain_decoder(
            frames in 1usize..40,
            records in proptest::collection::vec(record(), 1..60),
        ) {
            let (fast, plain) = record_encodings(frames, &records);
            proptest::prop_assert_eq!(trace_outcome(parse(&fast)), trace_outcome(parse(&plain)));
        }
    }

    #[test]
    fn a_segment_device_that_is_no_cuda_ordinal_is_named() {
        // {'segments': [{'device': 2**32, 'address': 0, 'total_size': 0}]}, protocol 2.
        let bytes = b"\x80\x02}(\x8c\x08segments]}(\x8c\x06device\x8a\x05\x00\x00\x00\x00\x01\x8c\x07addressK\x00\x8c\x0atotal_sizeK\x00uau.";
        match parse(bytes) {
            Err(TorchSnapshotError::Shape { path, reason }) => {
                assert_eq!(path, "segments[0].device");
                assert_eq!(reason, "is 4294967296, not a CUDA device ordinal");
            }
            other => panic!("{other:?}"),
        }
        let ordinal = bytes.iter().position(|b| *b == 0x8a).unwrap();
        let mut one = bytes.to_vec();
        one.splice(ordinal..ordinal + 7, *b"K\x01");
        let snapshot = parse(&one).unwrap();
        assert_eq!(snapshot.segments[0].device, CudaOrdinal(1));
    }

    #[test]
    fn rejects_non_snapshots() {
        let error = parse(b"\x80\x04K\x01.").unwrap_err();
        assert_eq!(
            error.to_string(),
            "not a PyTorch memory snapshot: `(top level)` is an `int`, not a dict or list"
        );
    }
}
