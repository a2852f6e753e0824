//! A data-only pickle decoder: never imports, calls or builds Python objects.
//!
//! It reads protocols 2–5 as Python's own pickler writes plain data (dict, list, tuple,
//! str, bytes, int, float, bool, None), which is everything a PyTorch memory snapshot holds
//! (`torch/cuda/_memory_viz.py`). Opcodes that would import or call code (`GLOBAL`,
//! `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`, `NEWOBJ`, `NEWOBJ_EX`, `EXT*`,
//! `PERSID`, `BINPERSID`) are refused with their byte offset: a snapshot never needs them.
//!
//! Memo-shared objects stay shared: the memo holds reference-counted values and `BINGET`
//! hands out another reference, never a deep copy. (serde-pickle 1.2 fails on real
//! snapshots with `recursive structure found` for exactly this sharing; `torch/cuda/_memory_viz.py`.)
//!
//! Input is streamed from any `Read` through one reusable buffer, so memory does not grow
//! with the file: a 600 MB snapshot is never held whole (a read-once buffer or a memory
//! map would count the whole file in the resident set, and gzip input would need it
//! decompressed). A [`Fold`] sees every container when it is finished and may replace it
//! with a compact [`Value::Handle`] of its own, which is how `torch_snapshot` keeps millions
//! of trace entries as 32-byte structs. Two fast paths serve the shape of every trace
//! entry: a flat dict of memo references and scalars is read in one go and offered to
//! [`Fold::dict`] without building it ([`DictItems`]), with the list of memo references
//! it holds (its `frames`) folded once per distinct list of memo ids ([`Fold::list`]); and
//! [`Fold::append`] may absorb a batch of list items (a run of entries becomes one handle).
//!
//! Every length read from the input is checked against [`Limits`] and bytes are only
//! allocated as they actually arrive, so a truncated or hostile file gives an error, not
//! an out-of-memory. This module does no I/O of its own: the caller passes the reader.
//!
//! Modules: `decoder` (the opcode loop, stack and containers being built), `flat` (the
//! fast path for trace entries and its caches), `memo`, `input` (the buffered reader) and
//! `opcodes` (names and scalar payloads).

mod decoder;
mod flat;
mod input;
mod memo;
mod opcodes;
mod parallel;
pub mod profile;
mod scan;
#[cfg(test)]
mod tests;

use std::io::Read;
use std::rc::Rc;

#[cfg(test)]
pub(crate) use parallel::scans_agree;
pub use parallel::{decode_file, Parallel, SCAN_SPLIT_BYTES};

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

    /// The key of each pair, in order: its value, or `None` for a raw scalar key.
    #[inline]
    pub fn keys(&self) -> impl Iterator<Item = Option<&'a Value>> + 'a {
        let (kinds, refs) = (self.kinds, self.refs);
        kinds
            .chunks_exact(2)
            .zip(refs.chunks_exact(2))
            .map(|(kind, value)| if kind[0] == KIND_REF { value[0] } else { None })
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
    /// whole right away (the decoder keeps the answer for the same memo ids while the
    /// memo slots they name are unchanged, so it must be the same for the same items):
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

    /// Told when the decoder starts (`true`) and ends (`false`) decoding a memo value made
    /// by another decoder of the stream (parallel decoding): what is folded meanwhile must
    /// be what it would be anywhere in the stream (no new trace data), or refused.
    fn nested(&mut self, on: bool) {
        let _ = on;
    }

    /// Bytes the fold holds in its own storage, counted against [`Limits::max_memory_bytes`].
    /// Called often: keep it O(1).
    fn retained_bytes(&self) -> u64 {
        0
    }

    /// A memo value decoded on demand (made by another decoder of the stream, parallel
    /// decoding) in a form the folds of other threads take up with [`Fold::adopt`] rather
    /// than decode the same bytes again: only what the fold made of it (its own handles),
    /// `None` for anything else. The default shares nothing.
    fn share(&self, value: &Value) -> Option<Shared> {
        let _ = value;
        None
    }

    /// Takes up what [`Fold::share`] of another fold gave for a memo value, instead of
    /// decoding that value: the value decoding it would give, the fold left as that decoding
    /// would leave it; `None` to have it decoded.
    fn adopt(&mut self, shared: &Shared) -> Option<Value> {
        let _ = shared;
        None
    }
}

/// What [`Fold::share`] gives, for other threads' folds.
pub type Shared = std::sync::Arc<dyn std::any::Any + Send + Sync>;

/// A fold whose work on chunks of one list, each decoded by a fold of its own on a thread of
/// its own, can be joined into the fold of the whole stream ([`decode_file`]).
pub trait Merge: Fold + Sized {
    /// What a chunk's fold hands back to the thread that joins them.
    type Part: Send;

    /// The chunk's fold, with the list its chunk decoded into (what [`Fold::finish`] made of
    /// it), as a part.
    fn into_part(self, list: Value) -> Result<Self::Part, String>;

    /// A hint, before the chunk is decoded: its list will likely get about `items` items (so
    /// a fold can size its vectors once, rather than grow them). Folds that keep nothing
    /// per item ignore it.
    fn expect_items(&mut self, _items: usize) {}

    /// Adds the parts' items, in order, to `list`, the items of the list they were cut from
    /// (what the sequential decoder would have made of those items, through
    /// [`Fold::append`]).
    fn merge(&mut self, list: &mut Vec<Value>, parts: Vec<Self::Part>) -> Result<(), String>;

    /// Called once the decoder stopped where the chunks go, before it waits for them, with
    /// its stack bottom up: a fold may do work ahead on what is decoded so far (read only),
    /// as long as what it makes in the end is what it would have made without.
    ///
    /// It may name the place of a finished value it read ahead whole: the decoder may then
    /// put a stand-in there, `Handle(`[`STAND_IN`]`, 0)`, and free the value now (its memo
    /// slots that nothing reads are let go too), rather than after the chunks. The result is
    /// then kept only where [`Merge::stands_in`] says the stand-in ended where the fold reads
    /// it in place of that value, and was never copied; else the file is decoded again on
    /// one thread.
    fn prepare(&mut self, _stack: &[Open<'_>]) -> Option<usize> {
        None
    }

    /// Whether `root`, the pickle's value, holds the stand-in of [`Merge::prepare`] where this
    /// fold reads it as the value it read ahead (and the value would have been nowhere else).
    fn stands_in(&self, _root: &Value) -> bool {
        false
    }
}

/// One place of the decoder's stack, offered to [`Merge::prepare`].
#[derive(Debug, Clone, Copy)]
pub enum Open<'a> {
    /// A finished value.
    Value(&'a Value),
    /// A list still being filled: its items so far.
    List(&'a [Value]),
    /// A dict still being filled (its items are not offered).
    Dict,
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
    decoder::Decoder::new(input::Input::new(reader), limits, fold).run()
}

/// [`decode`], with the input read ahead by a thread of its own (the file read, or gzip
/// inflated, while the decoder works), a few 1 MiB chunks at a time. The reader must reach
/// its end or fail on its own (a file, not an interactive stdin): when the decoder stops
/// early, the reading thread is waited for until its current chunk is read.
pub fn decode_prefetched<R: Read + Send, F: Fold>(
    reader: R,
    limits: Limits,
    fold: &mut F,
) -> Result<Value, PickleError> {
    decode_in_chunks(reader, input::CHUNK_SIZE, limits, fold)
}

fn decode_in_chunks<R: Read + Send, F: Fold>(
    reader: R,
    size: input::ChunkSize,
    limits: Limits,
    fold: &mut F,
) -> Result<Value, PickleError> {
    let (full_sender, full) = std::sync::mpsc::sync_channel(input::AHEAD);
    let (empty, empty_receiver) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("oomdoc-read".to_string())
            .spawn_scoped(scope, move || {
                input::read_ahead(reader, size, full_sender, empty_receiver)
            })
            .map_err(|source| PickleError::Read { offset: 0, source })?;
        let input = input::Input::prefetched(std::io::empty(), input::Prefetch { full, empty });
        decoder::Decoder::new(input, limits, fold).run()
    })
}

/// Kind of the [`Value::Handle`] that marks a container still being filled on the decoder's
/// stack. Reserved: a fold must not return it.
pub const BUILDING: u32 = u32::MAX;

/// Kind of the [`Value::Handle`] of a memo slot whose value another decoder of the same
/// stream made (the parallel decoder): decoded from its own bytes when referenced. Reserved.
pub const EXTERNAL: u32 = u32::MAX - 1;

/// Kind of the [`Value::Handle`] the parallel decoder puts in place of a value the fold read
/// ahead whole ([`Merge::prepare`]). Reserved.
pub const STAND_IN: u32 = u32::MAX - 2;
