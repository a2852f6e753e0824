//! A data-only pickle decoder (R15): never imports, calls or builds Python objects.
//!
//! It reads protocols 2–5 as Python's own pickler writes plain data (dict, list, tuple,
//! str, bytes, int, float, bool, None), which is everything a PyTorch memory snapshot holds
//! (`docs/formats.md` §2.3). Opcodes that would import or call code (`GLOBAL`,
//! `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`, `NEWOBJ`, `NEWOBJ_EX`, `EXT*`,
//! `PERSID`, `BINPERSID`) are refused with their byte offset: a snapshot never needs them.
//!
//! Memo-shared objects stay shared: the memo holds reference-counted values and `BINGET`
//! hands out another reference, never a deep copy. (serde-pickle 1.2 fails on real
//! snapshots with `recursive structure found` for exactly this sharing; formats.md §2.3.)
//!
//! Input is streamed from any `Read` through one reusable buffer, so memory does not grow
//! with the file: a 600 MB snapshot is never held whole (a read-once buffer or a memory
//! map would count the whole file in the resident set, and gzip input would need it
//! decompressed). A [`Fold`] sees every container when it is finished and may replace it
//! with a compact [`Value::Handle`] of its own, which is how `torch_snapshot` keeps millions
//! of trace entries as 32-byte structs. Two fast paths serve the shape of every trace
//! entry: a flat dict of memo references and scalars is read in one go and offered to
//! [`Fold::dict`] without building it ([`DictItems`]), and [`Fold::append`] may absorb a
//! batch of list items (a run of entries becomes one handle).
//!
//! Every length read from the input is checked against [`Limits`] and bytes are only
//! allocated as they actually arrive, so a truncated or hostile file gives an error, not
//! an out-of-memory. This module does no I/O of its own: the caller passes the reader.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::rc::Rc;

/// Bounds on what one pickle may make us allocate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of containers.
    pub max_depth: u32,
    /// Most items in one list, tuple or dict.
    pub max_container_len: usize,
    /// Longest str or bytes payload.
    pub max_string_bytes: usize,
    /// Most memo entries.
    pub max_memo: usize,
    /// Most values and containers built in total.
    pub max_objects: u64,
    /// Most entries on the value stack at once.
    pub max_stack: usize,
    /// Most bytes of decoded data held at once: an estimate (16 bytes a value or memo slot,
    /// payload sizes, what the fold reports through [`Fold::retained_bytes`]). The caller
    /// scales it with the size of the input it has (`torch_snapshot::limits_for`), so a
    /// small gzip that inflates to gigabytes gets an error, not all of memory (#14, item 8).
    pub max_memory_bytes: u64,
    /// Most bytes held per byte decoded so far, above [`MEMORY_FLOOR_BYTES`]: opcodes that
    /// cost one byte and keep 16 or more (a run of `MEMOIZE`, `]`, `DUP`) are refused early,
    /// whatever the budget (#14, item 8). Python's own pickles of plain data stay below 6.
    pub memory_per_input_byte: u64,
}

/// Bytes any pickle may hold, whatever its size so far (see [`Limits::memory_per_input_byte`]).
pub const MEMORY_FLOOR_BYTES: u64 = 128 << 20;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 200,
            max_container_len: 1 << 28,
            max_string_bytes: 64 << 20,
            max_memo: 1 << 30,
            max_objects: 1 << 34,
            max_stack: 1 << 24,
            max_memory_bytes: 4 << 30,
            memory_per_input_byte: 8,
        }
    }
}

/// A decoded value. Containers are shared (`Rc`), so clones are cheap and memo references
/// stay references. 16 bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An int that fits in i64.
    Int(i64),
    /// An int too large for i64: little-endian two's complement bytes, as pickled.
    BigInt(Rc<Vec<u8>>),
    /// A float.
    Float(f64),
    /// A str (invalid UTF-8, e.g. lone surrogates, is replaced by U+FFFD).
    Str(Rc<String>),
    /// bytes or bytearray.
    Bytes(Rc<Vec<u8>>),
    /// A list.
    List(Rc<Container<Value>>),
    /// A tuple.
    Tuple(Rc<Container<Value>>),
    /// A dict, in pickled order.
    Dict(Rc<Container<(Value, Value)>>),
    /// A value a [`Fold`] replaced with its own compact form: `(kind, index)`, both
    /// meaningful only to that fold.
    Handle(u32, u32),
}

/// The items of a finished container, with its nesting depth.
#[derive(Debug, Clone, PartialEq)]
pub struct Container<T> {
    /// 1 + the deepest child's depth (scalars have depth 0).
    pub depth: u32,
    /// The items.
    pub items: Vec<T>,
}

impl Value {
    /// The str, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(text) => Some(text.as_str()),
            _ => None,
        }
    }

    /// The integer, if this is an int that fits in i64 (bools count, as in Python).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(number) => Some(*number),
            Value::Bool(flag) => Some(i64::from(*flag)),
            _ => None,
        }
    }

    /// The float; ints convert.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(number) => Some(*number),
            Value::Int(number) => Some(*number as f64),
            _ => None,
        }
    }

    /// The bool, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(flag) => Some(*flag),
            _ => None,
        }
    }

    /// Items of a list or tuple.
    pub fn as_seq(&self) -> Option<&[Value]> {
        match self {
            Value::List(list) | Value::Tuple(list) => Some(&list.items),
            _ => None,
        }
    }

    /// Items of a dict.
    pub fn as_dict(&self) -> Option<&[(Value, Value)]> {
        match self {
            Value::Dict(dict) => Some(&dict.items),
            _ => None,
        }
    }

    /// The value under a str key of a dict (first match).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_dict()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// A short name of the type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Dict(_) => "dict",
            Value::Handle(..) => "folded value",
        }
    }

    fn depth(&self) -> u32 {
        match self {
            Value::List(c) | Value::Tuple(c) => c.depth,
            Value::Dict(c) => c.depth,
            _ => 0,
        }
    }
}

/// A container just finished, before it is stored in its parent or the memo.
#[derive(Debug)]
pub enum Finished {
    /// A list.
    List(Container<Value>),
    /// A tuple.
    Tuple(Container<Value>),
    /// A dict.
    Dict(Container<(Value, Value)>),
}

impl Finished {
    /// The plain value (what the identity fold returns).
    pub fn into_value(self) -> Value {
        match self {
            Finished::List(c) => Value::List(Rc::new(c)),
            Finished::Tuple(c) => Value::Tuple(Rc::new(c)),
            Finished::Dict(c) => Value::Dict(Rc::new(c)),
        }
    }
}

/// One item of a dict offered to [`Fold::dict`]: a value, or a scalar read straight from
/// the input without building a [`Value`].
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    /// A value (memo reference or finished container).
    Value(&'a Value),
    /// An int.
    Int(i64),
    /// A float.
    Float(f64),
    /// A bool.
    Bool(bool),
    /// `None`.
    None,
}

impl<'a> Item<'a> {
    /// The str, if this is one.
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            Item::Value(value) => value.as_str(),
            _ => None,
        }
    }

    /// The integer (bools count, as in Python).
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Item::Int(number) => Some(number),
            Item::Bool(flag) => Some(i64::from(flag)),
            Item::Value(value) => value.as_i64(),
            _ => None,
        }
    }

    /// The value, when the item is one.
    pub fn value(self) -> Option<&'a Value> {
        match self {
            Item::Value(value) => Some(value),
            _ => None,
        }
    }

    /// A short name of the type, for messages.
    pub fn type_name(self) -> &'static str {
        match self {
            Item::Value(value) => value.type_name(),
            Item::Int(_) => "int",
            Item::Float(_) => "float",
            Item::Bool(_) => "bool",
            Item::None => "None",
        }
    }
}

const FLAT_ITEMS: usize = 24;
/// Most items of a list nested in a flat dict (a trace entry's `frames`).
const FLAT_LIST: usize = 192;
/// Most bytes of list keys kept by the decoder's list cache.
const LIST_CACHE_BYTES: usize = 32 << 20;
/// Most lists and strings nested in one flat dict.
const FLAT_INLINE: usize = 4;
/// Longest str the fast path interns (a fresh `'N/A'` per trace entry).
const INTERN_MAX_BYTES: usize = 32;
/// Most distinct strs interned.
const INTERN_MAX_STRINGS: usize = 4096;
const KIND_INLINE: u8 = 5;
const KIND_REF: u8 = 0;
const KIND_INT: u8 = 1;
const KIND_FLOAT: u8 = 2;
const KIND_BOOL: u8 = 3;
const KIND_NONE: u8 = 4;

/// The items of a dict offered to [`Fold::dict`]: key, value, key, value, …
#[derive(Debug, Clone, Copy)]
pub struct DictItems<'a> {
    kinds: &'a [u8],
    words: &'a [u64],
    refs: &'a [Option<&'a Value>],
}

/// Storage for [`DictItems`] made from values (the general path).
#[derive(Debug, Default)]
pub struct DictStorage<'a> {
    kinds: Vec<u8>,
    words: Vec<u64>,
    refs: Vec<Option<&'a Value>>,
}

impl<'a> DictStorage<'a> {
    /// Items that are all values.
    pub fn from_values(values: &[&'a Value]) -> Self {
        DictStorage {
            kinds: vec![KIND_REF; values.len()],
            words: vec![0; values.len()],
            refs: values.iter().map(|value| Some(*value)).collect(),
        }
    }

    /// The items.
    pub fn items(&self) -> DictItems<'_> {
        DictItems {
            kinds: &self.kinds,
            words: &self.words,
            refs: &self.refs,
        }
    }
}

impl<'a> DictItems<'a> {
    /// Number of items (twice the number of pairs).
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Item `index`, or `None` past the end.
    #[inline]
    pub fn get(&self, index: usize) -> Option<Item<'a>> {
        let word = *self.words.get(index)?;
        Some(match *self.kinds.get(index)? {
            KIND_REF => Item::Value((*self.refs.get(index)?)?),
            KIND_INT => Item::Int(word as i64),
            KIND_FLOAT => Item::Float(f64::from_bits(word)),
            KIND_BOOL => Item::Bool(word != 0),
            _ => Item::None,
        })
    }

    /// Item `index` if it is a value (not a raw scalar).
    #[inline]
    pub fn value(&self, index: usize) -> Option<&'a Value> {
        match self.kinds.get(index) {
            Some(&KIND_REF) => self.refs.get(index).copied().flatten(),
            _ => None,
        }
    }

    /// Item `index` as an integer (bools count, as in Python).
    #[inline]
    pub fn int(&self, index: usize) -> Option<i64> {
        match self.kinds.get(index) {
            Some(&(KIND_INT | KIND_BOOL)) => self.words.get(index).map(|word| *word as i64),
            Some(&KIND_REF) => self.refs.get(index).copied().flatten()?.as_i64(),
            _ => None,
        }
    }

    /// The (key, value) pairs.
    pub fn pairs(&self) -> impl Iterator<Item = (Item<'a>, Item<'a>)> + '_ {
        (0..self.len() / 2).filter_map(|pair| Some((self.get(2 * pair)?, self.get(2 * pair + 1)?)))
    }
}

/// The items of a list offered to [`Fold::list`]: memo references to fold handles, all
/// resolved, as `(kind, id)`.
#[derive(Debug, Clone, Copy)]
pub struct ListItems<'a> {
    handles: &'a [(u32, u32)],
}

impl<'a> ListItems<'a> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// The items, in order: each a [`Value::Handle`]`(kind, id)`.
    pub fn handles(&self) -> &'a [(u32, u32)] {
        self.handles
    }
}

/// Sees each container once, when it is complete, and may replace it (for example with a
/// [`Value::Handle`] into the fold's own compact storage). A shared container is folded
/// once: later memo references get the folded value.
pub trait Fold {
    /// Replaces a finished container; `Err` stops decoding with that message.
    fn finish(&mut self, container: Finished) -> Result<Value, String>;

    /// Sees a dict's first batch of items (`key, value, key, value, …`) and may take the
    /// dict whole right away, so it is never built: `Some(value)` finishes it as `value`
    /// (a later batch of items for it is then refused). Python's pickler writes a dict of
    /// up to 1000 items in one batch. The default builds every dict.
    fn dict(&mut self, items: &DictItems<'_>) -> Result<Option<Value>, String> {
        let _ = items;
        Ok(None)
    }

    /// Sees a non-empty list of memo references to fold handles, nested in a dict that
    /// [`Fold::dict`] is about to be offered (a trace entry's `frames`), and may take it
    /// whole right away (the decoder keeps the answer for the same list bytes while the
    /// memo slots they refer to are unchanged, so it must be the same for the same items):
    /// `Some(value)` stands for the list, which is never built; `None` has the dict decoded
    /// by the general path. The default declines.
    fn list(&mut self, items: &ListItems<'_>) -> Result<Option<Value>, String> {
        let _ = items;
        Ok(None)
    }

    /// Sees a batch of items about to be appended to a list being built, and may take them
    /// into the list in a more compact form of its own (for example a run of handles as one
    /// handle): `true` when it did, `false` to have them appended as they are.
    fn append(&mut self, list: &mut Vec<Value>, new: &[Value]) -> bool {
        let _ = (list, new);
        false
    }

    /// Bytes the fold holds in its own storage, counted against [`Limits::max_memory_bytes`].
    /// Called often: keep it O(1).
    fn retained_bytes(&self) -> u64 {
        0
    }
}

/// The fold that keeps every container as it is.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeepAll;

impl Fold for KeepAll {
    fn finish(&mut self, container: Finished) -> Result<Value, String> {
        Ok(container.into_value())
    }
}

/// What went wrong, and where (byte offset of the opcode in the decompressed stream).
#[derive(Debug, thiserror::Error)]
pub enum PickleError {
    /// The input ended inside an opcode or before `STOP`.
    #[error("pickle ends early at byte {offset} (inside `{opcode}`)")]
    Truncated {
        /// Offset of the opcode being read.
        offset: u64,
        /// Its name.
        opcode: &'static str,
    },
    /// Reading failed.
    #[error("cannot read pickle at byte {offset}")]
    Read {
        /// Offset reached.
        offset: u64,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A byte that is not a pickle opcode.
    #[error("unknown pickle opcode 0x{byte:02x} at byte {offset}")]
    UnknownOpcode {
        /// Offset.
        offset: u64,
        /// The byte.
        byte: u8,
    },
    /// An opcode that would import or call code: never executed.
    #[error("pickle opcode `{opcode}` at byte {offset} would import or call code; oomdoc never executes pickles")]
    Refused {
        /// Offset.
        offset: u64,
        /// Its name.
        opcode: &'static str,
    },
    /// A valid opcode this decoder does not support.
    #[error(
        "pickle opcode `{opcode}` at byte {offset} is not supported by oomdoc's data-only decoder"
    )]
    Unsupported {
        /// Offset.
        offset: u64,
        /// Its name.
        opcode: &'static str,
    },
    /// A limit was exceeded.
    #[error("pickle `{opcode}` at byte {offset} exceeds the {what} limit ({value} > {limit})")]
    Limit {
        /// Offset.
        offset: u64,
        /// Opcode name.
        opcode: &'static str,
        /// Which limit.
        what: &'static str,
        /// The value found.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// The stream is not a valid pickle at this point.
    #[error("malformed pickle at byte {offset} (`{opcode}`): {reason}")]
    Malformed {
        /// Offset.
        offset: u64,
        /// Opcode name.
        opcode: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The fold refused a value.
    #[error("unexpected data at byte {offset} (`{opcode}`): {reason}")]
    Fold {
        /// Offset.
        offset: u64,
        /// Opcode name.
        opcode: &'static str,
        /// The fold's message.
        reason: String,
    },
}

/// Decodes a whole pickle held in memory, keeping every container.
pub fn parse(bytes: &[u8]) -> Result<Value, PickleError> {
    decode(bytes, Limits::default(), &mut KeepAll)
}

/// Decodes one pickle from `reader` (up to its `STOP`), folding containers with `fold`.
pub fn decode<R: Read, F: Fold>(
    reader: R,
    limits: Limits,
    fold: &mut F,
) -> Result<Value, PickleError> {
    Decoder {
        input: Input::new(reader),
        limits,
        fold,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: Memo::default(),
        buildings: Vec::new(),
        free_buildings: Vec::new(),
        interned: HashMap::new(),
        last_interned: None,
        list_handles: Vec::new(),
        list_cache: HashMap::default(),
        list_cache_bytes: 0,
        objects: 0,
        retained: 0,
        offset: 0,
        op: 0,
    }
    .run()
}

/// Kind of the [`Value::Handle`] that marks a container still being filled on the decoder's
/// stack. Reserved: a fold must not return it.
pub const BUILDING: u32 = u32::MAX;

/// A container still being filled. Dict items are kept flat: key, value, key, value.
#[derive(Default)]
struct Building {
    is_dict: bool,
    items: Vec<Value>,
    depth: u32,
    /// Where its marker sits on the stack.
    stack_position: usize,
    /// Memo indices that refer to it (usually one).
    memo_first: Option<u32>,
    memo_rest: Vec<u32>,
}

/// A run of consecutive fold handles in the memo: indices `start..start + len` hold
/// `Handle(kind, first)`, `Handle(kind, first + 1)`, ….
#[derive(Debug, Clone, Copy)]
struct Run {
    start: usize,
    kind: u32,
    first: u32,
    len: usize,
    /// Memo slots held by runs before this one.
    in_runs_before: usize,
}

/// The memo, dense by index. Consecutive fold handles memoized one after another (every
/// trace entry of a long trace: millions of them, never referenced again) are kept as runs;
/// every other slot takes 8 bytes: a fold handle packed in place, or the index of a value
/// kept aside, where runs of the same shared str (a fresh `'N/A'` in every trace entry,
/// interned) share one.
#[derive(Debug, Default)]
struct Memo {
    slots: Vec<Slot>,
    /// Values that are not packed handles.
    explicit: Vec<Value>,
    runs: Vec<Run>,
    /// Values stored over a slot inside a run (a re-PUT, never done by Python's pickler):
    /// kept aside so that each one is O(1), instead of spelling every run out.
    overridden: HashMap<usize, Value>,
}

/// A memo slot: bit 63 set, a handle (kind in bits 32–47, `0xffff` for [`BUILDING`]; id
/// in bits 0–31); clear, an index into `Memo::explicit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot(u64);

const SLOT_HANDLE: u64 = 1 << 63;
const SLOT_BUILDING: u64 = 0xffff;

impl Slot {
    fn handle(value: &Value) -> Option<Slot> {
        match *value {
            Value::Handle(BUILDING, id) => {
                Some(Slot(SLOT_HANDLE | (SLOT_BUILDING << 32) | u64::from(id)))
            }
            Value::Handle(kind, id) if u64::from(kind) < SLOT_BUILDING => {
                Some(Slot(SLOT_HANDLE | (u64::from(kind) << 32) | u64::from(id)))
            }
            _ => None,
        }
    }
}

impl Memo {
    fn len(&self) -> usize {
        self.slots.len()
            + self
                .runs
                .last()
                .map_or(0, |run| run.in_runs_before + run.len)
    }

    /// Where memo `index` is: `Ok(slot index)` or `Err(handle)` inside a run.
    #[inline]
    fn locate(&self, index: usize) -> Option<Result<usize, Value>> {
        let Some(first) = self.runs.first() else {
            return (index < self.slots.len()).then_some(Ok(index));
        };
        if index < first.start {
            return Some(Ok(index));
        }
        let position = self.runs.partition_point(|run| run.start <= index);
        let run = self.runs[position - 1];
        if index < run.start + run.len {
            let offset = (index - run.start) as u32;
            return Some(Err(Value::Handle(run.kind, run.first.wrapping_add(offset))));
        }
        let explicit = index - run.in_runs_before - run.len;
        (explicit < self.slots.len()).then_some(Ok(explicit))
    }

    #[inline]
    fn read(&self, slot: Slot) -> Option<Value> {
        if slot.0 & SLOT_HANDLE != 0 {
            let kind = (slot.0 >> 32) & 0xffff;
            let id = slot.0 as u32;
            return Some(if kind == SLOT_BUILDING {
                Value::Handle(BUILDING, id)
            } else {
                Value::Handle(kind as u32, id)
            });
        }
        self.explicit.get(slot.0 as usize).cloned()
    }

    /// The value at `index`, wherever it is (a clone: a handle, a scalar, or a shared
    /// reference).
    #[inline]
    fn get(&self, index: usize) -> Option<Value> {
        match self.locate(index)? {
            Ok(slot) => self.read(*self.slots.get(slot)?),
            Err(handle) => Some(self.overridden.get(&index).cloned().unwrap_or(handle)),
        }
    }

    /// The value at `index` when it is kept aside (not a packed handle, not in a run).
    #[inline]
    fn explicit_at(&self, index: usize) -> Option<&Value> {
        if !self.runs.is_empty() {
            return None;
        }
        let slot = *self.slots.get(index)?;
        if slot.0 & SLOT_HANDLE != 0 {
            return None;
        }
        self.explicit.get(slot.0 as usize)
    }

    /// The fold handle at `index` as `(kind, id)`, if that is what it holds (not a
    /// container being built).
    #[inline]
    fn handle_at(&self, index: usize) -> Option<(u32, u32)> {
        if self.runs.is_empty() {
            let slot = *self.slots.get(index)?;
            let kind = (slot.0 >> 32) & 0xffff;
            return (slot.0 & SLOT_HANDLE != 0 && kind != SLOT_BUILDING)
                .then_some((kind as u32, slot.0 as u32));
        }
        match self.get(index)? {
            Value::Handle(kind, id) if kind != BUILDING => Some((kind, id)),
            _ => None,
        }
    }

    /// A slot for `value`: packed, the shared str slot of the last explicit value, or new.
    fn slot_for(&mut self, value: Value) -> Slot {
        if let Some(slot) = Slot::handle(&value) {
            return slot;
        }
        if let (Value::Str(new), Some(Value::Str(last))) = (&value, self.explicit.last()) {
            if Rc::ptr_eq(new, last) {
                return Slot((self.explicit.len() - 1) as u64);
            }
        }
        self.explicit.push(value);
        Slot((self.explicit.len() - 1) as u64)
    }

    /// Appends a value; `true` when it took a slot of its own (not the extension of a run).
    fn push(&mut self, value: Value) -> bool {
        if let Value::Handle(kind, id) = value {
            if kind != BUILDING {
                let len = self.len();
                if let Some(run) = self.runs.last_mut() {
                    if run.start + run.len == len
                        && run.kind == kind
                        && run.first.checked_add(run.len as u32) == Some(id)
                    {
                        run.len += 1;
                        return false;
                    }
                }
                let last = self.slots.last().and_then(|slot| self.read(*slot));
                if let Some(Value::Handle(last_kind, last_id)) = last {
                    let last_is_tail = self.runs.last().is_none_or(|run| run.start + run.len < len);
                    if last_is_tail
                        && last_kind == kind
                        && last_kind != BUILDING
                        && last_id.checked_add(1) == Some(id)
                    {
                        self.slots.pop();
                        let in_runs_before = self
                            .runs
                            .last()
                            .map_or(0, |run| run.in_runs_before + run.len);
                        self.runs.push(Run {
                            start: len - 1,
                            kind,
                            first: last_id,
                            len: 2,
                            in_runs_before,
                        });
                        return false;
                    }
                }
            }
        }
        let slot = self.slot_for(value);
        self.slots.push(slot);
        true
    }

    /// Replaces memo `index` (which exists); `true` when that took a new slot aside.
    fn set(&mut self, index: usize, value: Value) -> bool {
        match self.locate(index) {
            Some(Ok(slot)) => {
                // A new value aside (an explicit slot may be shared by equal strs).
                let new = match Slot::handle(&value) {
                    Some(packed) => packed,
                    None => {
                        self.explicit.push(value);
                        Slot((self.explicit.len() - 1) as u64)
                    }
                };
                self.slots[slot] = new;
                false
            }
            // Overwriting inside a run: O(1) aside (see: #14, item 8).
            Some(Err(_)) => self.overridden.insert(index, value).is_none(),
            None => false,
        }
    }
}

struct Input<R> {
    reader: R,
    buffer: Vec<u8>,
    position: usize,
    end: usize,
    /// Absolute offset of `buffer[0]`.
    base: u64,
    eof: bool,
}

/// Read size: above the 256 KiB of `source::file`'s `BufReader`, so reads bypass its copy.
const CHUNK: usize = 1024 * 1024;

impl<R: Read> Input<R> {
    fn new(reader: R) -> Self {
        Input {
            reader,
            buffer: vec![0; CHUNK],
            position: 0,
            end: 0,
            base: 0,
            eof: false,
        }
    }

    fn offset(&self) -> u64 {
        self.base + self.position as u64
    }

    /// Makes at least `n` bytes available; `false` at end of input. The buffer grows only
    /// as bytes actually arrive, so a huge declared length cannot allocate by itself.
    #[inline]
    fn fill(&mut self, n: usize) -> std::io::Result<bool> {
        if self.end - self.position >= n {
            return Ok(true);
        }
        self.fill_slow(n)
    }

    /// Makes up to `n` bytes available and returns how many are (fewer only at the end).
    #[inline]
    fn fill_up_to(&mut self, n: usize) -> std::io::Result<usize> {
        if self.end - self.position < n {
            self.fill_slow(n)?;
        }
        Ok((self.end - self.position).min(n))
    }

    #[cold]
    fn fill_slow(&mut self, n: usize) -> std::io::Result<bool> {
        if self.position > 0 {
            self.buffer.copy_within(self.position..self.end, 0);
            self.base += self.position as u64;
            self.end -= self.position;
            self.position = 0;
        }
        while self.end < n {
            if self.eof {
                return Ok(false);
            }
            if self.end == self.buffer.len() {
                let grown = (self.buffer.len() * 2).min(n.max(CHUNK) + CHUNK);
                self.buffer.resize(grown.max(self.buffer.len() + CHUNK), 0);
            }
            match self.reader.read(&mut self.buffer[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(read) => self.end += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        if self.buffer.len() > 4 * CHUNK && self.end <= CHUNK {
            // Give back the room a long string needed.
            self.buffer.truncate(CHUNK.max(self.end));
            self.buffer.shrink_to_fit();
        }
        Ok(true)
    }
}

struct Decoder<'f, R, F> {
    input: Input<R>,
    limits: Limits,
    fold: &'f mut F,
    /// Finished values, and markers (`Handle(BUILDING, i)`) of containers being filled.
    stack: Vec<Value>,
    marks: Vec<usize>,
    /// The memo. A container still being filled is stored as its `Handle(BUILDING, i)`
    /// marker: a reference to it finishes it where it is, since Python's pickler writes all
    /// of a container's items right after creating it, so a later reference means it is
    /// complete (snapshots share a segment's empty `frames` list with its blocks this way,
    /// before the segment's own `SETITEMS`). Adding items to it afterwards is refused.
    memo: Memo,
    buildings: Vec<Building>,
    free_buildings: Vec<u32>,
    /// Short strs read by the fast path, shared by content (every trace entry's fresh
    /// `'N/A'` is then one allocation, not millions).
    interned: HashMap<Box<[u8]>, Value>,
    /// The str interned last, looked at first.
    last_interned: Option<(Box<[u8]>, Value)>,
    /// The handles of a list read by the fast path (reused).
    list_handles: Vec<(u32, u32)>,
    /// What [`Fold::list`] made of a list of memo references, by the list's bytes in the
    /// input (`( h… e` or `h a`): the same references to the same memo slots fold the same
    /// way, so a repeated list (every allocation of one call site) is one lookup. Emptied
    /// whenever a memo slot is stored again (a re-PUT), which could change what the bytes
    /// refer to.
    list_cache: HashMap<Box<[u8]>, Value, BuildHasherDefault<WordHasher>>,
    /// Bytes held by `list_cache`'s keys.
    list_cache_bytes: usize,
    objects: u64,
    /// Estimated bytes held by the memo, containers and payloads (not the stack, not the
    /// fold: both are added when checked).
    retained: u64,
    offset: u64,
    /// The opcode being decoded (0 before one is read), for messages.
    op: u8,
}

macro_rules! fixed {
    ($self:ident, $n:expr) => {{
        let ok = match $self.input.fill($n) {
            Ok(ok) => ok,
            Err(source) => {
                return Err(PickleError::Read {
                    offset: $self.offset,
                    source,
                })
            }
        };
        if !ok {
            return Err($self.truncated());
        }
        let start = $self.input.position;
        $self.input.position += $n;
        let mut array = [0u8; $n];
        array.copy_from_slice(&$self.input.buffer[start..start + $n]);
        array
    }};
}

fn max_depth(values: &[Value]) -> u32 {
    values.iter().map(Value::depth).max().unwrap_or(0)
}

impl<R: Read, F: Fold> Decoder<'_, R, F> {
    fn truncated(&self) -> PickleError {
        PickleError::Truncated {
            offset: self.offset,
            opcode: opcode_name(self.op),
        }
    }

    fn malformed(&self, reason: impl Into<String>) -> PickleError {
        PickleError::Malformed {
            offset: self.offset,
            opcode: opcode_name(self.op),
            reason: reason.into(),
        }
    }

    fn limit(&self, what: &'static str, value: u64, limit: u64) -> PickleError {
        PickleError::Limit {
            offset: self.offset,
            opcode: opcode_name(self.op),
            what,
            value,
            limit,
        }
    }

    /// Reads `n` payload bytes (after checking the string limit) and passes them to `make`.
    fn payload<T>(&mut self, n: u64, make: impl FnOnce(&[u8]) -> T) -> Result<T, PickleError> {
        if n > self.limits.max_string_bytes as u64 {
            return Err(self.limit("string length", n, self.limits.max_string_bytes as u64));
        }
        let n = n as usize;
        match self.input.fill(n) {
            Ok(true) => {}
            Ok(false) => return Err(self.truncated()),
            Err(source) => {
                return Err(PickleError::Read {
                    offset: self.offset,
                    source,
                })
            }
        }
        let start = self.input.position;
        self.input.position += n;
        self.retained = self.retained.saturating_add(n as u64 + 32);
        Ok(make(&self.input.buffer[start..start + n]))
    }

    fn count_object(&mut self) -> Result<(), PickleError> {
        self.objects += 1;
        if self.objects > self.limits.max_objects {
            return Err(self.limit("object count", self.objects, self.limits.max_objects));
        }
        self.check_memory()
    }

    /// Refuses to hold more than the memory budget allows at this point of the input.
    #[inline]
    fn check_memory(&self) -> Result<(), PickleError> {
        let held = self
            .retained
            .saturating_add(16 * self.stack.len() as u64 + 8 * self.marks.len() as u64)
            .saturating_add(self.fold.retained_bytes());
        let decoded = self.input.offset();
        let budget = self.limits.max_memory_bytes.min(
            MEMORY_FLOOR_BYTES
                .saturating_add(self.limits.memory_per_input_byte.saturating_mul(decoded)),
        );
        if held > budget {
            return Err(self.limit("memory budget", held, budget));
        }
        Ok(())
    }

    #[inline]
    fn push(&mut self, value: Value) -> Result<(), PickleError> {
        if self.stack.len() >= self.limits.max_stack {
            return Err(self.limit(
                "stack size",
                self.stack.len() as u64 + 1,
                self.limits.max_stack as u64,
            ));
        }
        self.stack.push(value);
        if self.stack.len() & 0xfff == 0 {
            self.check_memory()?;
        }
        Ok(())
    }

    fn push_building(&mut self, is_dict: bool) -> Result<(), PickleError> {
        self.retained = self
            .retained
            .saturating_add(std::mem::size_of::<Building>() as u64 + 48);
        self.count_object()?;
        let building = Building {
            is_dict,
            depth: 1,
            stack_position: self.stack.len(),
            ..Building::default()
        };
        let index = match self.free_buildings.pop() {
            Some(index) => {
                self.buildings[index as usize] = building;
                index
            }
            None => {
                self.buildings.push(building);
                (self.buildings.len() - 1) as u32
            }
        };
        self.push(Value::Handle(BUILDING, index))
    }

    /// Finishes the container being filled at slab `index`: folds it, updates its memo
    /// entries, frees the slot.
    fn finish_building(&mut self, index: u32, value: Option<Value>) -> Result<Value, PickleError> {
        let Some(building) = self.buildings.get_mut(index as usize) else {
            return Err(self.malformed("reference to an unknown container"));
        };
        let building = std::mem::take(building);
        self.free_buildings.push(index);
        let value = match value {
            Some(value) => value,
            None => {
                let finished = if building.is_dict {
                    let mut pairs = Vec::with_capacity(building.items.len() / 2);
                    let mut items = building.items.into_iter();
                    while let (Some(key), Some(item)) = (items.next(), items.next()) {
                        pairs.push((key, item));
                    }
                    Finished::Dict(Container {
                        depth: building.depth,
                        items: pairs,
                    })
                } else {
                    Finished::List(Container {
                        depth: building.depth,
                        items: building.items,
                    })
                };
                self.fold_value(finished)?
            }
        };
        for memo in building.memo_first.into_iter().chain(building.memo_rest) {
            self.memo.set(memo as usize, value.clone());
        }
        Ok(value)
    }

    fn fold_value(&mut self, finished: Finished) -> Result<Value, PickleError> {
        let len = match &finished {
            Finished::List(c) | Finished::Tuple(c) => c.items.len(),
            Finished::Dict(c) => 2 * c.items.len(),
        } as u64;
        let value = self
            .fold
            .finish(finished)
            .map_err(|reason| PickleError::Fold {
                offset: self.offset,
                opcode: opcode_name(self.op),
                reason,
            })?;
        if matches!(value, Value::Handle(BUILDING, _)) {
            return Err(self.malformed("the fold returned a reserved handle"));
        }
        if matches!(value, Value::Handle(..)) {
            // The fold keeps it in its own storage (counted by `Fold::retained_bytes`).
            self.retained = self.retained.saturating_sub(16 * len);
        }
        Ok(value)
    }

    /// Finishes, in place, every container still being filled from stack position `from` up.
    fn finish_from(&mut self, from: usize) -> Result<(), PickleError> {
        for position in from..self.stack.len() {
            if let Value::Handle(BUILDING, index) = self.stack[position] {
                let value = self.finish_building(index, None)?;
                self.stack[position] = value;
            }
        }
        Ok(())
    }

    fn pop(&mut self) -> Result<Value, PickleError> {
        if let Some(&mark) = self.marks.last() {
            if self.stack.len() <= mark {
                return Err(self.malformed("stack empty above the mark"));
            }
        }
        match self.stack.pop() {
            Some(Value::Handle(BUILDING, index)) => self.finish_building(index, None),
            Some(value) => Ok(value),
            None => Err(self.malformed("stack empty")),
        }
    }

    /// The last mark, with everything above it finished.
    fn take_mark(&mut self) -> Result<usize, PickleError> {
        let Some(mark) = self.marks.pop() else {
            return Err(self.malformed("no mark on the stack"));
        };
        if mark > self.stack.len() {
            return Err(self.malformed("mark above the stack"));
        }
        self.finish_from(mark)?;
        Ok(mark)
    }

    fn check_depth(&self, depth: u32) -> Result<(), PickleError> {
        if depth > self.limits.max_depth {
            return Err(self.limit(
                "nesting depth",
                u64::from(depth),
                u64::from(self.limits.max_depth),
            ));
        }
        Ok(())
    }

    fn check_len(&self, len: usize) -> Result<(), PickleError> {
        if len > self.limits.max_container_len {
            return Err(self.limit(
                "container length",
                len as u64,
                self.limits.max_container_len as u64,
            ));
        }
        Ok(())
    }

    fn make_tuple(&mut self, items: Vec<Value>) -> Result<Value, PickleError> {
        let depth = 1 + max_depth(&items);
        self.check_depth(depth)?;
        self.check_len(items.len())?;
        self.retained = self.retained.saturating_add(16 * items.len() as u64 + 48);
        self.count_object()?;
        self.fold_value(Finished::Tuple(Container { depth, items }))
    }

    /// The container being filled at stack position `position`, if it is one of `is_dict`.
    fn target(&self, position: usize, is_dict: bool) -> Result<u32, PickleError> {
        let what = if is_dict { "set items of" } else { "append to" };
        match self.stack.get(position) {
            Some(&Value::Handle(BUILDING, index))
                if self.buildings.get(index as usize).map(|b| b.is_dict) == Some(is_dict) =>
            {
                Ok(index)
            }
            Some(Value::Handle(BUILDING, _)) => Err(self.malformed(format!(
                "cannot {what} a {}",
                if is_dict { "list" } else { "dict" }
            ))),
            Some(other) => Err(self.malformed(format!(
                "cannot {what} a {} that was already referenced (a recursive structure?)",
                other.type_name()
            ))),
            None => Err(self.malformed(format!("nothing to {what}"))),
        }
    }

    /// Moves `stack[from..]` (finished values) into the container at `from - 1`.
    fn extend_target(&mut self, from: usize, is_dict: bool) -> Result<(), PickleError> {
        if from == 0 {
            return Err(self.malformed(if is_dict {
                "no dict to set items in"
            } else {
                "no list to append to"
            }));
        }
        let index = self.target(from - 1, is_dict)?;
        let count = self.stack.len() - from;
        if is_dict && count % 2 != 0 {
            return Err(self.malformed("odd number of items for a dict"));
        }
        let depth = 1 + max_depth(&self.stack[from..]);
        self.check_depth(depth)?;
        let building = &self.buildings[index as usize];
        let len = (building.items.len() + count) / if is_dict { 2 } else { 1 };
        self.check_len(len)?;
        if is_dict && building.items.is_empty() && count > 0 {
            // Give the fold a chance to take the dict whole, without building it.
            let values: Vec<&Value> = self.stack[from..].iter().collect();
            let storage = DictStorage::from_values(&values);
            let early = self
                .fold
                .dict(&storage.items())
                .map_err(|reason| PickleError::Fold {
                    offset: self.offset,
                    opcode: opcode_name(self.op),
                    reason,
                })?;
            if let Some(value) = early {
                if matches!(value, Value::Handle(BUILDING, _)) {
                    return Err(self.malformed("the fold returned a reserved handle"));
                }
                self.stack.truncate(from);
                let value = self.finish_building(index, Some(value))?;
                self.stack[from - 1] = value;
                return Ok(());
            }
        }
        let building = &mut self.buildings[index as usize];
        building.depth = building.depth.max(depth);
        if !is_dict {
            let before = building.items.len();
            if self.fold.append(&mut building.items, &self.stack[from..]) {
                self.stack.truncate(from);
                let changed = before.saturating_sub(1).min(building.items.len());
                if building.items[changed..]
                    .iter()
                    .any(|item| matches!(item, Value::Handle(BUILDING, _)))
                {
                    return Err(self.malformed("the fold returned a reserved handle"));
                }
                return Ok(());
            }
        }
        building.items.extend(self.stack.drain(from..));
        self.retained = self.retained.saturating_add(16 * count as u64);
        self.check_memory()
    }

    /// Fast path for the commonest shape in a snapshot, a flat dict written as
    /// `EMPTY_DICT MEMOIZE MARK (key value)… SETITEMS` whose keys and values are memo
    /// references or plain scalars (every trace entry). It is read in one go and handed to
    /// the fold without touching the stack; `false` (nothing consumed) when the bytes ahead
    /// have another shape or the fold does not take the dict, and the general path runs.
    /// Called right after the `EMPTY_DICT` byte.
    fn flat_dict(&mut self) -> Result<bool, PickleError> {
        const WINDOW: usize = 4096;
        let available = match self.input.fill_up_to(WINDOW) {
            Ok(available) => available,
            Err(source) => {
                return Err(PickleError::Read {
                    offset: self.offset,
                    source,
                })
            }
        };
        let start = self.input.position;
        let bytes = &self.input.buffer[start..start + available];
        let mut at = 0;
        let memoized = bytes.first() == Some(&0x94);
        if memoized {
            at += 1;
        }
        if bytes.get(at) != Some(&b'(') {
            return Ok(false);
        }
        at += 1;
        // Scalars stay raw words; memo references are resolved below; strs and lists read
        // inline go to `inline` (word = its slot), in the order they were memoized.
        let mut kinds = [KIND_NONE; FLAT_ITEMS];
        let mut words = [0u64; FLAT_ITEMS];
        let mut inline: [Value; FLAT_INLINE] = std::array::from_fn(|_| Value::None);
        let mut inline_memoized = [false; FLAT_INLINE];
        let mut inlined = 0;
        let mut count = 0;
        loop {
            let Some(&op) = bytes.get(at) else {
                return Ok(false);
            };
            if op == b'u' {
                at += 1;
                break;
            }
            if count == FLAT_ITEMS {
                return Ok(false);
            }
            let arg = |len: usize| bytes.get(at + 1..at + 1 + len);
            let (kind, word, width) = match op {
                b'h' => {
                    let Some(&[index]) = arg(1) else {
                        return Ok(false);
                    };
                    (KIND_REF, u64::from(index), 2)
                }
                b'j' => {
                    let Some(index) = arg(4) else {
                        return Ok(false);
                    };
                    let index = u32::from_le_bytes([index[0], index[1], index[2], index[3]]);
                    (KIND_REF, u64::from(index), 5)
                }
                b'K' => {
                    let Some(&[number]) = arg(1) else {
                        return Ok(false);
                    };
                    (KIND_INT, u64::from(number), 2)
                }
                b'M' => {
                    let Some(number) = arg(2) else {
                        return Ok(false);
                    };
                    (
                        KIND_INT,
                        u64::from(u16::from_le_bytes([number[0], number[1]])),
                        3,
                    )
                }
                b'J' => {
                    let Some(number) = arg(4) else {
                        return Ok(false);
                    };
                    let number = i32::from_le_bytes([number[0], number[1], number[2], number[3]]);
                    (KIND_INT, i64::from(number) as u64, 5)
                }
                0x8a => {
                    let Some(&[len]) = arg(1) else {
                        return Ok(false);
                    };
                    let len = usize::from(len);
                    if len > 8 {
                        return Ok(false);
                    }
                    let Some(payload) = bytes.get(at + 2..at + 2 + len) else {
                        return Ok(false);
                    };
                    (KIND_INT, small_long(payload) as u64, 2 + len)
                }
                b'G' => {
                    let Some(number) = arg(8) else {
                        return Ok(false);
                    };
                    let mut array = [0u8; 8];
                    array.copy_from_slice(number);
                    (KIND_FLOAT, f64::from_be_bytes(array).to_bits(), 9)
                }
                0x88 => (KIND_BOOL, 1, 1),
                0x89 => (KIND_BOOL, 0, 1),
                b'N' => (KIND_NONE, 0, 1),
                // SHORT_BINUNICODE, short: interned by content.
                0x8c => {
                    let Some(&[len]) = arg(1) else {
                        return Ok(false);
                    };
                    let len = usize::from(len);
                    if len > INTERN_MAX_BYTES || inlined == FLAT_INLINE {
                        return Ok(false);
                    }
                    let Some(payload) = bytes.get(at + 2..at + 2 + len) else {
                        return Ok(false);
                    };
                    let last = self.last_interned.as_ref();
                    let value = match last.filter(|(text, _)| **text == *payload) {
                        Some((_, value)) => value.clone(),
                        None => match self.interned.get(payload) {
                            Some(value) => {
                                self.last_interned = Some((payload.into(), value.clone()));
                                value.clone()
                            }
                            None if self.interned.len() < INTERN_MAX_STRINGS => {
                                let value = str_value(payload);
                                self.retained = self.retained.saturating_add(len as u64 + 64);
                                self.interned.insert(payload.into(), value.clone());
                                value
                            }
                            None => return Ok(false),
                        },
                    };
                    let mut width = 2 + len;
                    inline_memoized[inlined] = bytes.get(at + width) == Some(&0x94);
                    if inline_memoized[inlined] {
                        width += 1;
                    }
                    inline[inlined] = value;
                    inlined += 1;
                    (KIND_INLINE, (inlined - 1) as u64, width)
                }
                // EMPTY_LIST [MEMOIZE] then `( refs… APPENDS`, or `ref APPEND`.
                b']' => {
                    if inlined == FLAT_INLINE {
                        return Ok(false);
                    }
                    let mut cursor = at + 1;
                    let list_memoized = bytes.get(cursor) == Some(&0x94);
                    if list_memoized {
                        cursor += 1;
                    }
                    let read_ref = |cursor: &mut usize| -> Option<u32> {
                        match bytes.get(*cursor)? {
                            b'h' => {
                                let index = *bytes.get(*cursor + 1)?;
                                *cursor += 2;
                                Some(u32::from(index))
                            }
                            b'j' => {
                                let b = bytes.get(*cursor + 1..*cursor + 5)?;
                                *cursor += 5;
                                Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                            }
                            _ => None,
                        }
                    };
                    // The list's bytes: `( refs… e`, or `ref a`.
                    let list_start = cursor;
                    let list_end = {
                        let mut probe = cursor;
                        if bytes.get(probe) == Some(&b'(') {
                            probe += 1;
                            let mut items = 0;
                            loop {
                                if bytes.get(probe) == Some(&b'e') {
                                    break Some(probe + 1);
                                }
                                if items == FLAT_LIST || read_ref(&mut probe).is_none() {
                                    break None;
                                }
                                items += 1;
                            }
                        } else {
                            read_ref(&mut probe)
                                .filter(|_| bytes.get(probe) == Some(&b'a'))
                                .map(|_| probe + 1)
                        }
                    };
                    let Some(list_end) = list_end else {
                        return Ok(false);
                    };
                    let list_bytes = &bytes[list_start..list_end];
                    if let Some(value) = self.list_cache.get(list_bytes) {
                        inline_memoized[inlined] = list_memoized;
                        inline[inlined] = value.clone();
                        inlined += 1;
                        kinds[count] = KIND_INLINE;
                        words[count] = (inlined - 1) as u64;
                        at = list_end;
                        count += 1;
                        continue;
                    }
                    let handles = &mut self.list_handles;
                    handles.clear();
                    if bytes.get(cursor) == Some(&b'(') {
                        cursor += 1;
                        loop {
                            if bytes.get(cursor) == Some(&b'e') {
                                cursor += 1;
                                break;
                            }
                            if handles.len() == FLAT_LIST {
                                return Ok(false);
                            }
                            let Some(handle) = read_ref(&mut cursor)
                                .and_then(|index| self.memo.handle_at(index as usize))
                            else {
                                return Ok(false);
                            };
                            handles.push(handle);
                        }
                    } else {
                        let mut probe = cursor;
                        match read_ref(&mut probe) {
                            Some(index) if bytes.get(probe) == Some(&b'a') => {
                                let Some(handle) = self.memo.handle_at(index as usize) else {
                                    return Ok(false);
                                };
                                handles.push(handle);
                                cursor = probe + 1;
                            }
                            _ => return Ok(false),
                        }
                    }
                    if handles.is_empty() {
                        return Ok(false);
                    }
                    let items = ListItems { handles };
                    let folded = self.fold.list(&items).map_err(|reason| PickleError::Fold {
                        offset: self.offset,
                        opcode: opcode_name(self.op),
                        reason,
                    })?;
                    let Some(value) = folded else {
                        return Ok(false);
                    };
                    if matches!(value, Value::Handle(BUILDING, _)) {
                        return Err(self.malformed("the fold returned a reserved handle"));
                    }
                    if self.list_cache_bytes + list_bytes.len() <= LIST_CACHE_BYTES {
                        self.list_cache_bytes += list_bytes.len();
                        self.retained = self.retained.saturating_add(list_bytes.len() as u64 + 48);
                        self.list_cache.insert(list_bytes.into(), value.clone());
                    }
                    inline_memoized[inlined] = list_memoized;
                    inline[inlined] = value;
                    inlined += 1;
                    (KIND_INLINE, (inlined - 1) as u64, cursor - at)
                }
                _ => return Ok(false),
            };
            kinds[count] = kind;
            words[count] = word;
            at += width;
            count += 1;
        }
        if count % 2 != 0 {
            return Ok(false);
        }
        // Values kept aside in the memo are borrowed; handles are unpacked into `owned`.
        let mut owned: [Value; FLAT_ITEMS] = std::array::from_fn(|_| Value::None);
        let mut borrowed = [false; FLAT_ITEMS];
        for index in 0..count {
            if kinds[index] == KIND_REF {
                let slot = words[index] as usize;
                if self.memo.explicit_at(slot).is_some() {
                    borrowed[index] = true;
                    continue;
                }
                match self.memo.get(slot) {
                    Some(Value::Handle(BUILDING, _)) | None => return Ok(false),
                    Some(value) => owned[index] = value,
                }
            }
        }
        let mut refs: [Option<&Value>; FLAT_ITEMS] = [None; FLAT_ITEMS];
        for index in 0..count {
            match kinds[index] {
                KIND_REF if borrowed[index] => {
                    refs[index] = self.memo.explicit_at(words[index] as usize);
                }
                KIND_REF => refs[index] = Some(&owned[index]),
                KIND_INLINE => {
                    refs[index] = inline.get(words[index] as usize);
                    kinds[index] = KIND_REF;
                }
                _ => {}
            }
        }
        let items = DictItems {
            kinds: &kinds[..count],
            words: &words[..count],
            refs: &refs[..count],
        };
        let folded = self.fold.dict(&items).map_err(|reason| PickleError::Fold {
            offset: self.offset,
            opcode: opcode_name(self.op),
            reason,
        })?;
        let Some(value) = folded else {
            return Ok(false);
        };
        if matches!(value, Value::Handle(BUILDING, _)) {
            return Err(self.malformed("the fold returned a reserved handle"));
        }
        self.input.position += at;
        self.count_object()?;
        // Memo slots in the order the input made them: the dict, then what it held inline.
        let memoized_inline = inline
            .into_iter()
            .zip(inline_memoized)
            .take(inlined)
            .filter(|(_, memoized)| *memoized)
            .map(|(value, _)| value);
        for value in std::iter::once(value.clone())
            .filter(|_| memoized)
            .chain(memoized_inline)
        {
            if self.memo.len() >= self.limits.max_memo {
                let len = self.memo.len() as u64 + 1;
                return Err(self.limit("memo size", len, self.limits.max_memo as u64));
            }
            if self.memo.push(value) {
                self.retained = self.retained.saturating_add(16);
            }
        }
        self.objects = self.objects.saturating_add(inlined as u64);
        self.push(value)?;
        Ok(true)
    }

    fn memo_put(&mut self, index: u64) -> Result<(), PickleError> {
        if index >= self.limits.max_memo as u64 {
            return Err(self.limit("memo size", index + 1, self.limits.max_memo as u64));
        }
        let index = index as usize;
        if index > self.memo.len() {
            // Python's pickler numbers the memo densely; a gap would let a file make us
            // allocate a huge memo with a single opcode.
            return Err(self.malformed(format!(
                "memo index {index} skips ahead of the memo size {}",
                self.memo.len()
            )));
        }
        if let Some(&mark) = self.marks.last() {
            if self.stack.len() <= mark {
                return Err(self.malformed("memoize with nothing above the mark"));
            }
        }
        let entry = match self.stack.last() {
            None => return Err(self.malformed("memoize on an empty stack")),
            Some(&Value::Handle(BUILDING, building)) => {
                if let Some(target) = self.buildings.get_mut(building as usize) {
                    if target.memo_first.is_none() {
                        target.memo_first = Some(index as u32);
                    } else {
                        target.memo_rest.push(index as u32);
                        self.retained = self.retained.saturating_add(4);
                    }
                }
                Value::Handle(BUILDING, building)
            }
            Some(value) => value.clone(),
        };
        let cost = if index == self.memo.len() {
            if self.memo.push(entry) {
                16
            } else {
                0
            }
        } else {
            // A slot stored again: cached lists may refer to it.
            self.list_cache.clear();
            self.list_cache_bytes = 0;
            if self.memo.set(index, entry) {
                48
            } else {
                0
            }
        };
        self.retained = self.retained.saturating_add(cost);
        self.check_memory()
    }

    #[inline]
    fn memo_get(&mut self, index: u64) -> Result<(), PickleError> {
        match self.memo.get(index as usize) {
            Some(Value::Handle(BUILDING, _)) | None => self.memo_get_slow(index),
            Some(value) if self.stack.len() < self.limits.max_stack => {
                self.stack.push(value);
                Ok(())
            }
            Some(_) => self.memo_get_slow(index),
        }
    }

    #[cold]
    fn memo_get_slow(&mut self, index: u64) -> Result<(), PickleError> {
        let value = match self.memo.get(index as usize) {
            Some(Value::Handle(BUILDING, building)) => {
                let Some(position) = self
                    .buildings
                    .get(building as usize)
                    .map(|b| b.stack_position)
                else {
                    return Err(self.malformed(format!("memo {index} refers to nothing")));
                };
                let value = self.finish_building(building, None)?;
                if let Some(slot) = self.stack.get_mut(position) {
                    *slot = value.clone();
                }
                value
            }
            Some(value) => value,
            None => return Err(self.malformed(format!("memo {index} was never stored"))),
        };
        self.push(value)
    }

    fn run(mut self) -> Result<Value, PickleError> {
        loop {
            self.offset = self.input.offset();
            self.op = 0;
            let [op] = fixed!(self, 1);
            self.op = op;
            match op {
                // PROTO
                0x80 => {
                    let [version] = fixed!(self, 1);
                    if version > 5 {
                        return Err(self.malformed(format!("protocol {version} is newer than 5")));
                    }
                }
                // FRAME: an 8-byte length hint; the data follows inline.
                0x95 => {
                    let _ = fixed!(self, 8);
                }
                // STOP
                b'.' => {
                    if !self.marks.is_empty() {
                        return Err(self.malformed("mark left on the stack"));
                    }
                    let value = self.pop()?;
                    if !self.stack.is_empty() {
                        return Err(self.malformed("more than one value left on the stack"));
                    }
                    return Ok(value);
                }
                // MARK
                b'(' => {
                    if self.marks.len() >= self.limits.max_stack {
                        return Err(self.limit(
                            "mark count",
                            self.marks.len() as u64 + 1,
                            self.limits.max_stack as u64,
                        ));
                    }
                    self.marks.push(self.stack.len());
                }
                // POP
                b'0' => {
                    self.pop()?;
                }
                // POP_MARK
                b'1' => {
                    let mark = self.take_mark()?;
                    self.stack.truncate(mark);
                }
                // DUP
                b'2' => {
                    let Some(top) = self.stack.len().checked_sub(1) else {
                        return Err(self.malformed("stack empty"));
                    };
                    self.finish_from(top)?;
                    let value = self.stack[top].clone();
                    self.push(value)?;
                }
                // EMPTY_DICT
                b'}' => {
                    if !self.flat_dict()? {
                        self.push_building(true)?;
                    }
                }
                // EMPTY_LIST
                b']' => {
                    self.push_building(false)?;
                }
                // EMPTY_TUPLE
                b')' => {
                    let tuple = self.make_tuple(Vec::new())?;
                    self.push(tuple)?;
                }
                // DICT: a dict of the items above the mark
                b'd' => {
                    let mark = self.take_mark()?;
                    let values: Vec<Value> = self.stack.drain(mark..).collect();
                    self.push_building(true)?;
                    let from = self.stack.len();
                    self.stack.extend(values);
                    self.extend_target(from, true)?;
                }
                // LIST
                b'l' => {
                    let mark = self.take_mark()?;
                    let values: Vec<Value> = self.stack.drain(mark..).collect();
                    self.push_building(false)?;
                    let from = self.stack.len();
                    self.stack.extend(values);
                    self.extend_target(from, false)?;
                }
                // TUPLE
                b't' => {
                    let mark = self.take_mark()?;
                    let values: Vec<Value> = self.stack.drain(mark..).collect();
                    let tuple = self.make_tuple(values)?;
                    self.push(tuple)?;
                }
                // TUPLE1..3
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let mut values = Vec::with_capacity(n);
                    for _ in 0..n {
                        values.push(self.pop()?);
                    }
                    values.reverse();
                    let tuple = self.make_tuple(values)?;
                    self.push(tuple)?;
                }
                // APPEND
                b'a' => {
                    let Some(from) = self.stack.len().checked_sub(1) else {
                        return Err(self.malformed("stack empty"));
                    };
                    self.finish_from(from)?;
                    self.extend_target(from, false)?;
                }
                // APPENDS
                b'e' => {
                    let mark = self.take_mark()?;
                    self.extend_target(mark, false)?;
                }
                // SETITEM
                b's' => {
                    let Some(from) = self.stack.len().checked_sub(2) else {
                        return Err(self.malformed("stack empty"));
                    };
                    self.finish_from(from)?;
                    self.extend_target(from, true)?;
                }
                // SETITEMS
                b'u' => {
                    let mark = self.take_mark()?;
                    self.extend_target(mark, true)?;
                }
                // BINPUT, LONG_BINPUT, MEMOIZE
                b'q' => {
                    let [index] = fixed!(self, 1);
                    self.memo_put(u64::from(index))?;
                }
                b'r' => {
                    let index = u32::from_le_bytes(fixed!(self, 4));
                    self.memo_put(u64::from(index))?;
                }
                0x94 => {
                    self.memo_put(self.memo.len() as u64)?;
                }
                // BINGET, LONG_BINGET
                b'h' => {
                    let [index] = fixed!(self, 1);
                    self.memo_get(u64::from(index))?;
                }
                b'j' => {
                    let index = u32::from_le_bytes(fixed!(self, 4));
                    self.memo_get(u64::from(index))?;
                }
                // Integers
                b'J' => {
                    let number = i32::from_le_bytes(fixed!(self, 4));
                    self.push(Value::Int(i64::from(number)))?;
                }
                b'K' => {
                    let [number] = fixed!(self, 1);
                    self.push(Value::Int(i64::from(number)))?;
                }
                b'M' => {
                    let number = u16::from_le_bytes(fixed!(self, 2));
                    self.push(Value::Int(i64::from(number)))?;
                }
                0x8a => {
                    let [n] = fixed!(self, 1);
                    let value = self.payload(u64::from(n), long_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                0x8b => {
                    let n = i32::from_le_bytes(fixed!(self, 4));
                    if n < 0 {
                        return Err(self.malformed("negative length"));
                    }
                    let value = self.payload(n as u64, long_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'G' => {
                    let number = f64::from_be_bytes(fixed!(self, 8));
                    self.push(Value::Float(number))?;
                }
                // Strings
                0x8c => {
                    let [n] = fixed!(self, 1);
                    let value = self.payload(u64::from(n), str_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'X' => {
                    let n = u32::from_le_bytes(fixed!(self, 4));
                    let value = self.payload(u64::from(n), str_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                0x8d => {
                    let n = u64::from_le_bytes(fixed!(self, 8));
                    let value = self.payload(n, str_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'C' => {
                    let [n] = fixed!(self, 1);
                    let value = self.payload(u64::from(n), bytes_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'B' => {
                    let n = u32::from_le_bytes(fixed!(self, 4));
                    let value = self.payload(u64::from(n), bytes_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                0x8e => {
                    let n = u64::from_le_bytes(fixed!(self, 8));
                    let value = self.payload(n, bytes_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                0x96 => {
                    let n = u64::from_le_bytes(fixed!(self, 8));
                    let value = self.payload(n, bytes_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'N' => {
                    self.push(Value::None)?;
                }
                0x88 => {
                    self.push(Value::Bool(true))?;
                }
                0x89 => {
                    self.push(Value::Bool(false))?;
                }
                other => return Err(self.other_opcode(other)),
            }
        }
    }

    fn other_opcode(&self, op: u8) -> PickleError {
        let refused = match op {
            b'c' => Some("GLOBAL"),
            0x93 => Some("STACK_GLOBAL"),
            b'R' => Some("REDUCE"),
            b'b' => Some("BUILD"),
            b'i' => Some("INST"),
            b'o' => Some("OBJ"),
            0x81 => Some("NEWOBJ"),
            0x92 => Some("NEWOBJ_EX"),
            0x82 => Some("EXT1"),
            0x83 => Some("EXT2"),
            0x84 => Some("EXT4"),
            b'P' => Some("PERSID"),
            b'Q' => Some("BINPERSID"),
            _ => None,
        };
        if let Some(opcode) = refused {
            return PickleError::Refused {
                offset: self.offset,
                opcode,
            };
        }
        let unsupported = match op {
            b'I' => Some("INT"),
            b'L' => Some("LONG"),
            b'F' => Some("FLOAT"),
            b'S' => Some("STRING"),
            b'T' => Some("BINSTRING"),
            b'U' => Some("SHORT_BINSTRING"),
            b'V' => Some("UNICODE"),
            b'g' => Some("GET"),
            b'p' => Some("PUT"),
            0x8f => Some("EMPTY_SET"),
            0x90 => Some("ADDITEMS"),
            0x91 => Some("FROZENSET"),
            0x97 => Some("NEXT_BUFFER"),
            0x98 => Some("READONLY_BUFFER"),
            _ => None,
        };
        match unsupported {
            Some(opcode) => PickleError::Unsupported {
                offset: self.offset,
                opcode,
            },
            None => PickleError::UnknownOpcode {
                offset: self.offset,
                byte: op,
            },
        }
    }
}

/// A fast hash of byte strings (the decoder's list cache: keys are bytes of the input, and
/// a collision costs a comparison, not a wrong answer): FxHash's multiply-rotate, eight
/// bytes at a time.
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let mut word = [0u8; 8];
        let rest = chunks.remainder();
        word[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(word));
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }
}

impl WordHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// The name of an opcode byte, for messages.
fn opcode_name(op: u8) -> &'static str {
    match op {
        0x80 => "PROTO",
        0x95 => "FRAME",
        b'.' => "STOP",
        b'(' => "MARK",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        b'}' => "EMPTY_DICT",
        b']' => "EMPTY_LIST",
        b')' => "EMPTY_TUPLE",
        b'd' => "DICT",
        b'l' => "LIST",
        b't' => "TUPLE",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        b'a' => "APPEND",
        b'e' => "APPENDS",
        b's' => "SETITEM",
        b'u' => "SETITEMS",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        0x94 => "MEMOIZE",
        b'h' => "BINGET",
        b'j' => "LONG_BINGET",
        b'J' => "BININT",
        b'K' => "BININT1",
        b'M' => "BININT2",
        0x8a => "LONG1",
        0x8b => "LONG4",
        b'G' => "BINFLOAT",
        0x8c => "SHORT_BINUNICODE",
        b'X' => "BINUNICODE",
        0x8d => "BINUNICODE8",
        b'C' => "SHORT_BINBYTES",
        b'B' => "BINBYTES",
        0x8e => "BINBYTES8",
        0x96 => "BYTEARRAY8",
        b'N' => "NONE",
        0x88 => "NEWTRUE",
        0x89 => "NEWFALSE",
        _ => "opcode",
    }
}

fn str_value(bytes: &[u8]) -> Value {
    Value::Str(Rc::new(String::from_utf8_lossy(bytes).into_owned()))
}

fn bytes_value(bytes: &[u8]) -> Value {
    Value::Bytes(Rc::new(bytes.to_vec()))
}

/// A little-endian two's-complement integer of at most 8 bytes (built in a register: a
/// byte copy into an array and an 8-byte load back stalls on store forwarding).
#[inline]
fn small_long(bytes: &[u8]) -> i64 {
    let len = bytes.len().min(8);
    let mut value = 0u64;
    for (position, &byte) in bytes.iter().take(len).enumerate() {
        value |= u64::from(byte) << (8 * position);
    }
    let negative = len > 0 && bytes[len - 1] & 0x80 != 0;
    if negative && len < 8 {
        value |= u64::MAX << (8 * len);
    }
    value as i64
}

/// A little-endian two's-complement integer (LONG1/LONG4).
fn long_value(bytes: &[u8]) -> Value {
    if bytes.len() <= 8 {
        Value::Int(small_long(bytes))
    } else {
        Value::BigInt(Rc::new(bytes.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(pairs: Vec<(Value, Value)>) -> Value {
        let depth = 1 + pairs
            .iter()
            .map(|(k, v)| k.depth().max(v.depth()))
            .max()
            .unwrap_or(0);
        Value::Dict(Rc::new(Container {
            depth,
            items: pairs,
        }))
    }

    fn s(text: &str) -> Value {
        Value::Str(Rc::new(text.to_string()))
    }

    /// `pickle.dumps({'a': [1, -2, 2**40, 'x', None, True, 1.5, b'hi'], 'b': (0, 0)}, protocol=4)`
    const SIMPLE: &[u8] = b"\x80\x04\x95:\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94]\x94(K\x01J\xfe\xff\xff\xff\x8a\x06\x00\x00\x00\x00\x00\x01\x8c\x01x\x94N\x88G?\xf8\x00\x00\x00\x00\x00\x00C\x02hi\x94e\x8c\x01b\x94K\x00K\x00\x86\x94u.";

    #[test]
    fn decodes_plain_data() {
        let value = parse(SIMPLE).unwrap();
        let list = value.get("a").unwrap().as_seq().unwrap();
        assert_eq!(list[0], Value::Int(1));
        assert_eq!(list[1], Value::Int(-2));
        assert_eq!(list[2], Value::Int(1 << 40));
        assert_eq!(list[3], s("x"));
        assert_eq!(list[4], Value::None);
        assert_eq!(list[5], Value::Bool(true));
        assert_eq!(list[6], Value::Float(1.5));
        assert_eq!(list[7], Value::Bytes(Rc::new(b"hi".to_vec())));
        assert_eq!(
            value.get("b").unwrap().as_seq().unwrap(),
            &[Value::Int(0), Value::Int(0)]
        );
    }

    /// `d = {'a': 1}; pickle.dumps([[d], [d]], protocol=4)`: the case serde-pickle gets wrong.
    const SHARED: &[u8] = b"\x80\x04\x95\x16\x00\x00\x00\x00\x00\x00\x00]\x94(]\x94}\x94\x8c\x01a\x94K\x01sa]\x94h\x02ae.";

    #[test]
    fn memo_shared_containers_are_shared_not_copied() {
        let value = parse(SHARED).unwrap();
        let outer = value.as_seq().unwrap();
        let first = &outer[0].as_seq().unwrap()[0];
        let second = &outer[1].as_seq().unwrap()[0];
        assert_eq!(first, &dict(vec![(s("a"), Value::Int(1))]));
        match (first, second) {
            (Value::Dict(a), Value::Dict(b)) => assert!(Rc::ptr_eq(a, b)),
            _ => panic!("expected dicts"),
        }
    }

    #[test]
    fn refuses_code_execution() {
        // pickle.dumps(os.system, protocol=4) starts with STACK_GLOBAL after two strings
        let bytes = b"\x80\x04\x95\x14\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94\x93\x94.";
        let error = parse(bytes).unwrap_err();
        assert_eq!(
            error.to_string(),
            "pickle opcode `STACK_GLOBAL` at byte 28 would import or call code; oomdoc never executes pickles"
        );
        let error = parse(b"\x80\x02cos\nsystem\n.").unwrap_err();
        assert!(matches!(
            error,
            PickleError::Refused {
                offset: 2,
                opcode: "GLOBAL"
            }
        ));
    }

    #[test]
    fn truncated_input_names_offset_and_opcode() {
        let error = parse(&SIMPLE[..30]).unwrap_err();
        assert!(matches!(error, PickleError::Truncated { .. }), "{error}");
        let error = parse(b"\x80\x04X\xff\xff\xff\x7f").unwrap_err();
        assert_eq!(
            error.to_string(),
            "pickle `BINUNICODE` at byte 2 exceeds the string length limit (2147483647 > 67108864)"
        );
        let error = parse(b"\x80\x04X\xff\xff\x00\x00ab").unwrap_err();
        assert_eq!(
            error.to_string(),
            "pickle ends early at byte 2 (inside `BINUNICODE`)"
        );
    }

    #[test]
    fn recursive_structure_is_an_error() {
        // l = []; l.append(l); pickle.dumps(l, protocol=4)
        let bytes = b"\x80\x04\x95\x06\x00\x00\x00\x00\x00\x00\x00]\x94h\x00a.";
        let error = parse(bytes).unwrap_err();
        assert_eq!(
            error.to_string(),
            "malformed pickle at byte 15 (`APPEND`): cannot append to a list that was already referenced (a recursive structure?)"
        );
    }

    /// `l = []; pickle.dumps([l, l], protocol=4)`: a sibling reference to a finished list.
    #[test]
    fn reference_to_a_finished_sibling_is_shared() {
        let bytes = b"\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00]\x94(]\x94h\x01e.";
        let value = parse(bytes).unwrap();
        let items = value.as_seq().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0], items[1]);
    }

    #[test]
    fn memo_gap_is_refused() {
        let error = parse(b"\x80\x02Nr\xff\xff\xff\x00.").unwrap_err();
        assert!(error.to_string().contains("skips ahead"), "{error}");
    }

    #[test]
    fn depth_is_bounded() {
        let mut bytes = b"\x80\x04N".to_vec();
        bytes.extend(std::iter::repeat_n(0x85u8, 300));
        bytes.push(b'.');
        let error = parse(&bytes).unwrap_err();
        assert!(error.to_string().contains("nesting depth"), "{error}");
    }

    #[test]
    fn big_ints_stay_inert_bytes() {
        // pickle.dumps(2**70, protocol=2)
        let value = parse(b"\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00@.").unwrap();
        assert_eq!(
            value,
            Value::BigInt(Rc::new(vec![0, 0, 0, 0, 0, 0, 0, 0, 0x40]))
        );
        assert_eq!(parse(b"\x80\x02\x8a\x01\xff.").unwrap(), Value::Int(-1));
        assert_eq!(parse(b"\x80\x02\x8a\x00.").unwrap(), Value::Int(0));
        assert_eq!(
            parse(b"\x80\x02\x8a\x02\x00\x80.").unwrap(),
            Value::Int(-32768)
        );
        assert_eq!(
            parse(b"\x80\x02\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.").unwrap(),
            Value::Int(i64::MAX)
        );
    }

    #[test]
    fn memo_keeps_runs_of_handles_compact_and_indexable() {
        let pushed = vec![
            s("a"),
            Value::Handle(3, 0),
            Value::Handle(3, 1),
            Value::Handle(3, 2),
            s("b"),
            Value::Handle(3, 7),
            Value::Handle(3, 8),
            Value::Handle(4, 9),
            Value::Handle(BUILDING, 0),
            Value::Handle(BUILDING, 1),
            Value::Int(5),
        ];
        let mut memo = Memo::default();
        for value in &pushed {
            memo.push(value.clone());
        }
        assert_eq!(memo.len(), pushed.len());
        assert_eq!(memo.runs.len(), 2);
        for (index, value) in pushed.iter().enumerate() {
            assert_eq!(memo.get(index).as_ref(), Some(value), "{index}");
        }
        assert_eq!(
            memo.slots.len(),
            pushed.len() - 5,
            "run members take no slot"
        );
        assert_eq!(memo.get(pushed.len()), None);
        memo.set(2, Value::Int(42));
        assert_eq!(memo.get(2), Some(Value::Int(42)));
        assert_eq!(memo.get(3), Some(Value::Handle(3, 2)));
        assert_eq!(memo.len(), pushed.len());
    }

    fn is_memory_budget(result: Result<Value, PickleError>) -> bool {
        matches!(
            result,
            Err(PickleError::Limit {
                what: "memory budget",
                ..
            })
        )
    }

    // See: #14, item 8 (a 1 MB gzip of MEMOIZE, 1 GB inflated, exhausted memory).
    #[test]
    fn issue_14_memoize_flood_stops_at_the_memory_budget() {
        let reader = (&b"\x80\x04N"[..]).chain(std::io::repeat(0x94).take(1 << 30));
        let result = decode(reader, Limits::default(), &mut KeepAll);
        assert!(is_memory_budget(result));
    }

    // See: #14, item 8 (16 KB of `]` took 1.4 GB).
    #[test]
    fn issue_14_empty_list_flood_is_bounded() {
        for op in [b']', b'}', b'(', b'2'] {
            let reader = (&b"\x80\x04N"[..]).chain(std::io::repeat(op).take(1 << 30));
            let result = decode(reader, Limits::default(), &mut KeepAll);
            assert!(result.is_err(), "{}", op as char);
        }
    }

    #[test]
    fn memo_re_put_inside_a_run_is_kept_aside() {
        let mut memo = Memo::default();
        for id in 0..100_000 {
            memo.push(Value::Handle(3, id));
        }
        for index in 0..100_000 {
            memo.set(index, Value::Int(index as i64));
        }
        assert_eq!(memo.runs.len(), 1);
        assert_eq!(memo.get(99_999), Some(Value::Int(99_999)));
        assert_eq!(memo.get(5), Some(Value::Int(5)));
    }

    /// A fold for the list fast path: `{0: n}` is frame `n`, `{'e': [frames]}` an entry;
    /// it records every list it is offered.
    #[derive(Default)]
    struct ListFold {
        lists: Vec<Vec<(u32, u32)>>,
        entries: Vec<u32>,
    }

    impl Fold for ListFold {
        fn finish(&mut self, container: Finished) -> Result<Value, String> {
            Ok(container.into_value())
        }

        fn dict(&mut self, items: &DictItems<'_>) -> Result<Option<Value>, String> {
            match (items.get(0), items.get(1)) {
                (Some(Item::Int(0)), Some(Item::Int(n))) => Ok(Some(Value::Handle(1, n as u32))),
                (Some(key), Some(Item::Value(Value::Handle(2, list))))
                    if key.as_str() == Some("e") =>
                {
                    self.entries.push(*list);
                    Ok(Some(Value::Handle(3, *list)))
                }
                _ => Ok(None),
            }
        }

        fn list(&mut self, items: &ListItems<'_>) -> Result<Option<Value>, String> {
            self.lists.push(items.handles().to_vec());
            Ok(Some(Value::Handle(2, (self.lists.len() - 1) as u32)))
        }
    }

    /// Frames 5 and 6 (memo 1, 2), an entry whose list refers to memo 1, then `between`,
    /// then an entry with the very same list bytes.
    fn two_entries(between: &[u8]) -> Vec<u8> {
        let mut bytes = b"\x80\x04]\x94(}\x94(K\x00K\x05u}\x94(K\x00K\x06u".to_vec();
        bytes.extend_from_slice(b"}\x94(\x8c\x01e\x94]\x94(h\x01eu");
        bytes.extend_from_slice(between);
        bytes.extend_from_slice(b"}\x94(h\x04]\x94(h\x01eue.");
        bytes
    }

    /// The decoder folds a repeated list once (every allocation of a call site writes the
    /// same references), and forgets what it cached when a memo slot is stored again.
    #[test]
    fn repeated_lists_fold_once_unless_the_memo_changed() {
        let mut fold = ListFold::default();
        decode(&two_entries(b"")[..], Limits::default(), &mut fold).unwrap();
        assert_eq!(
            fold.lists,
            vec![vec![(1, 5)]],
            "the second list is a cache hit"
        );
        assert_eq!(fold.entries, vec![0, 0]);

        // BINGET 2, BINPUT 1, POP: memo 1 now holds frame 6.
        let mut fold = ListFold::default();
        decode(
            &two_entries(b"h\x02q\x010")[..],
            Limits::default(),
            &mut fold,
        )
        .unwrap();
        assert_eq!(fold.lists, vec![vec![(1, 5)], vec![(1, 6)]]);
        assert_eq!(fold.entries, vec![0, 1]);
    }

    #[test]
    fn value_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }
}
