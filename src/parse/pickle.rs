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
//! with the file: a 600 MB snapshot is never held whole. A [`Fold`] sees every container
//! when it is finished and may replace it with a compact [`Value::Handle`] of its own, which
//! is how `torch_snapshot` keeps millions of trace entries as small structs.
//!
//! Every length read from the input is checked against [`Limits`] and bytes are only
//! allocated as they actually arrive, so a truncated or hostile file gives an error, not
//! an out-of-memory. This module does no I/O of its own: the caller passes the reader.

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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 200,
            max_container_len: 1 << 28,
            max_string_bytes: 64 << 20,
            max_memo: 1 << 30,
            max_objects: 1 << 34,
            max_stack: 1 << 24,
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

/// Sees each container once, when it is complete, and may replace it (for example with a
/// [`Value::Handle`] into the fold's own compact storage). A shared container is folded
/// once: later memo references get the folded value.
pub trait Fold {
    /// Replaces a finished container; `Err` stops decoding with that message.
    fn finish(&mut self, container: Finished) -> Result<Value, String>;
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
    #[error("pickle opcode `{opcode}` at byte {offset} is not supported by oomdoc's data-only decoder")]
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
        memo: Vec::new(),
        objects: 0,
        offset: 0,
        opcode: "PROTO",
    }
    .run()
}

/// A slot of the value stack: a finished value, or a container still being filled.
enum Slot {
    Value(Value),
    List(Building<Value>),
    Dict(Building<(Value, Value)>),
}

struct Building<T> {
    items: Vec<T>,
    depth: u32,
    /// Memo indices that refer to this container (usually zero or one).
    memo: Vec<u32>,
}

impl<T> Building<T> {
    fn new() -> Self {
        Building {
            items: Vec::new(),
            depth: 1,
            memo: Vec::new(),
        }
    }
}

enum MemoSlot {
    Done(Value),
    /// The container at this stack position is still on the stack. A reference to it
    /// finishes it where it is: Python's pickler writes all of a container's items right
    /// after creating it, so a later reference means it is complete (snapshots share the
    /// empty `frames` list of a segment with its blocks this way, before the segment's
    /// own `SETITEMS`). Appending to it afterwards is refused.
    Building(usize),
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

const CHUNK: usize = 256 * 1024;

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
    stack: Vec<Slot>,
    marks: Vec<usize>,
    memo: Vec<MemoSlot>,
    objects: u64,
    offset: u64,
    opcode: &'static str,
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

impl<R: Read, F: Fold> Decoder<'_, R, F> {
    fn truncated(&self) -> PickleError {
        PickleError::Truncated {
            offset: self.offset,
            opcode: self.opcode,
        }
    }

    fn malformed(&self, reason: impl Into<String>) -> PickleError {
        PickleError::Malformed {
            offset: self.offset,
            opcode: self.opcode,
            reason: reason.into(),
        }
    }

    fn limit(&self, what: &'static str, value: u64, limit: u64) -> PickleError {
        PickleError::Limit {
            offset: self.offset,
            opcode: self.opcode,
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
        Ok(make(&self.input.buffer[start..start + n]))
    }

    fn count_object(&mut self) -> Result<(), PickleError> {
        self.objects += 1;
        if self.objects > self.limits.max_objects {
            return Err(self.limit("object count", self.objects, self.limits.max_objects));
        }
        Ok(())
    }

    fn push(&mut self, value: Value) -> Result<(), PickleError> {
        if self.stack.len() >= self.limits.max_stack {
            return Err(self.limit(
                "stack size",
                self.stack.len() as u64 + 1,
                self.limits.max_stack as u64,
            ));
        }
        self.stack.push(Slot::Value(value));
        Ok(())
    }

    fn push_slot(&mut self, slot: Slot) -> Result<(), PickleError> {
        if self.stack.len() >= self.limits.max_stack {
            return Err(self.limit(
                "stack size",
                self.stack.len() as u64 + 1,
                self.limits.max_stack as u64,
            ));
        }
        self.count_object()?;
        self.stack.push(slot);
        Ok(())
    }

    /// Turns a stack slot into a finished value, folding containers and updating the memo.
    fn finish(&mut self, slot: Slot) -> Result<Value, PickleError> {
        let (finished, memo) = match slot {
            Slot::Value(value) => return Ok(value),
            Slot::List(building) => (
                Finished::List(Container {
                    depth: building.depth,
                    items: building.items,
                }),
                building.memo,
            ),
            Slot::Dict(building) => (
                Finished::Dict(Container {
                    depth: building.depth,
                    items: building.items,
                }),
                building.memo,
            ),
        };
        let value = self.fold_value(finished)?;
        for index in memo {
            if let Some(entry) = self.memo.get_mut(index as usize) {
                *entry = MemoSlot::Done(value.clone());
            }
        }
        Ok(value)
    }

    fn fold_value(&mut self, finished: Finished) -> Result<Value, PickleError> {
        self.fold.finish(finished).map_err(|reason| PickleError::Fold {
            offset: self.offset,
            opcode: self.opcode,
            reason,
        })
    }

    fn pop(&mut self) -> Result<Value, PickleError> {
        if let Some(&mark) = self.marks.last() {
            if self.stack.len() <= mark {
                return Err(self.malformed("stack empty above the mark"));
            }
        }
        match self.stack.pop() {
            Some(slot) => self.finish(slot),
            None => Err(self.malformed("stack empty")),
        }
    }

    /// Pops everything above the last mark, finished, in order.
    fn pop_mark(&mut self) -> Result<Vec<Value>, PickleError> {
        let Some(mark) = self.marks.pop() else {
            return Err(self.malformed("no mark on the stack"));
        };
        if mark > self.stack.len() {
            return Err(self.malformed("mark above the stack"));
        }
        let slots: Vec<Slot> = self.stack.drain(mark..).collect();
        let mut values = Vec::with_capacity(slots.len());
        for slot in slots {
            values.push(self.finish(slot)?);
        }
        Ok(values)
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
        let depth = 1 + items.iter().map(Value::depth).max().unwrap_or(0);
        self.check_depth(depth)?;
        self.count_object()?;
        self.fold_value(Finished::Tuple(Container { depth, items }))
    }

    fn append(&mut self, values: Vec<Value>) -> Result<(), PickleError> {
        let depth_needed = 1 + values.iter().map(Value::depth).max().unwrap_or(0);
        self.check_depth(depth_needed)?;
        let max_len = self.limits.max_container_len;
        let Some(top) = self.stack.last_mut() else {
            return Err(self.malformed("no list to append to"));
        };
        match top {
            Slot::List(list) => {
                if list.items.len() + values.len() > max_len {
                    let len = list.items.len() + values.len();
                    return Err(self.limit("container length", len as u64, max_len as u64));
                }
                list.depth = list.depth.max(depth_needed);
                list.items.extend(values);
                Ok(())
            }
            Slot::Value(value) => {
                let name = value.type_name();
                Err(self.malformed(format!(
                    "cannot append to a {name} that was already referenced (a recursive structure?)"
                )))
            }
            Slot::Dict(_) => Err(self.malformed("cannot append to a dict")),
        }
    }

    fn set_items(&mut self, values: Vec<Value>) -> Result<(), PickleError> {
        if values.len() % 2 != 0 {
            return Err(self.malformed("odd number of items for a dict"));
        }
        let depth_needed = 1 + values.iter().map(Value::depth).max().unwrap_or(0);
        self.check_depth(depth_needed)?;
        let max_len = self.limits.max_container_len;
        let Some(top) = self.stack.last_mut() else {
            return Err(self.malformed("no dict to set items in"));
        };
        match top {
            Slot::Dict(dict) => {
                if dict.items.len() + values.len() / 2 > max_len {
                    let len = dict.items.len() + values.len() / 2;
                    return Err(self.limit("container length", len as u64, max_len as u64));
                }
                dict.depth = dict.depth.max(depth_needed);
                let mut iter = values.into_iter();
                while let (Some(key), Some(value)) = (iter.next(), iter.next()) {
                    dict.items.push((key, value));
                }
                Ok(())
            }
            Slot::Value(value) => {
                let name = value.type_name();
                Err(self.malformed(format!(
                    "cannot set items of a {name} that was already referenced (a recursive structure?)"
                )))
            }
            Slot::List(_) => Err(self.malformed("cannot set items of a list")),
        }
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
        let position = self.stack.len().saturating_sub(1);
        let entry = match self.stack.last_mut() {
            None => return Err(self.malformed("memoize on an empty stack")),
            Some(Slot::Value(value)) => MemoSlot::Done(value.clone()),
            Some(Slot::List(building)) => {
                building.memo.push(index as u32);
                MemoSlot::Building(position)
            }
            Some(Slot::Dict(building)) => {
                building.memo.push(index as u32);
                MemoSlot::Building(position)
            }
        };
        if index == self.memo.len() {
            self.memo.push(entry);
        } else {
            self.memo[index] = entry;
        }
        Ok(())
    }

    fn memo_get(&mut self, index: u64) -> Result<(), PickleError> {
        let value = match self.memo.get(index as usize) {
            Some(MemoSlot::Done(value)) => value.clone(),
            Some(&MemoSlot::Building(position)) => {
                let Some(slot) = self.stack.get_mut(position) else {
                    return Err(self.malformed(format!("memo {index} refers to nothing")));
                };
                let slot = std::mem::replace(slot, Slot::Value(Value::None));
                let value = self.finish(slot)?;
                self.stack[position] = Slot::Value(value.clone());
                value
            }
            None => return Err(self.malformed(format!("memo {index} was never stored"))),
        };
        self.push(value)
    }

    fn run(mut self) -> Result<Value, PickleError> {
        loop {
            self.offset = self.input.offset();
            self.opcode = "opcode";
            let [op] = fixed!(self, 1);
            match op {
                // PROTO
                0x80 => {
                    self.opcode = "PROTO";
                    let [version] = fixed!(self, 1);
                    if version > 5 {
                        return Err(self.malformed(format!("protocol {version} is newer than 5")));
                    }
                }
                // FRAME: an 8-byte length hint; the data follows inline.
                0x95 => {
                    self.opcode = "FRAME";
                    let _ = fixed!(self, 8);
                }
                // STOP
                b'.' => {
                    self.opcode = "STOP";
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
                    self.opcode = "MARK";
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
                    self.opcode = "POP";
                    self.pop()?;
                }
                // POP_MARK
                b'1' => {
                    self.opcode = "POP_MARK";
                    self.pop_mark()?;
                }
                // DUP
                b'2' => {
                    self.opcode = "DUP";
                    let value = self.pop()?;
                    self.push(value.clone())?;
                    self.push(value)?;
                }
                // EMPTY_DICT
                b'}' => {
                    self.opcode = "EMPTY_DICT";
                    self.push_slot(Slot::Dict(Building::new()))?;
                }
                // EMPTY_LIST
                b']' => {
                    self.opcode = "EMPTY_LIST";
                    self.push_slot(Slot::List(Building::new()))?;
                }
                // EMPTY_TUPLE
                b')' => {
                    self.opcode = "EMPTY_TUPLE";
                    let tuple = self.make_tuple(Vec::new())?;
                    self.push(tuple)?;
                }
                // DICT: a dict of the items above the mark
                b'd' => {
                    self.opcode = "DICT";
                    let values = self.pop_mark()?;
                    self.check_len(values.len() / 2)?;
                    self.push_slot(Slot::Dict(Building::new()))?;
                    self.set_items(values)?;
                }
                // LIST
                b'l' => {
                    self.opcode = "LIST";
                    let values = self.pop_mark()?;
                    self.check_len(values.len())?;
                    self.push_slot(Slot::List(Building::new()))?;
                    self.append(values)?;
                }
                // TUPLE
                b't' => {
                    self.opcode = "TUPLE";
                    let values = self.pop_mark()?;
                    self.check_len(values.len())?;
                    let tuple = self.make_tuple(values)?;
                    self.push(tuple)?;
                }
                // TUPLE1..3
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    self.opcode = ["TUPLE1", "TUPLE2", "TUPLE3"][n - 1];
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
                    self.opcode = "APPEND";
                    let value = self.pop()?;
                    self.append(vec![value])?;
                }
                // APPENDS
                b'e' => {
                    self.opcode = "APPENDS";
                    let values = self.pop_mark()?;
                    self.append(values)?;
                }
                // SETITEM
                b's' => {
                    self.opcode = "SETITEM";
                    let value = self.pop()?;
                    let key = self.pop()?;
                    self.set_items(vec![key, value])?;
                }
                // SETITEMS
                b'u' => {
                    self.opcode = "SETITEMS";
                    let values = self.pop_mark()?;
                    self.set_items(values)?;
                }
                // BINPUT, LONG_BINPUT, MEMOIZE
                b'q' => {
                    self.opcode = "BINPUT";
                    let [index] = fixed!(self, 1);
                    self.memo_put(u64::from(index))?;
                }
                b'r' => {
                    self.opcode = "LONG_BINPUT";
                    let index = u32::from_le_bytes(fixed!(self, 4));
                    self.memo_put(u64::from(index))?;
                }
                0x94 => {
                    self.opcode = "MEMOIZE";
                    self.memo_put(self.memo.len() as u64)?;
                }
                // BINGET, LONG_BINGET
                b'h' => {
                    self.opcode = "BINGET";
                    let [index] = fixed!(self, 1);
                    self.memo_get(u64::from(index))?;
                }
                b'j' => {
                    self.opcode = "LONG_BINGET";
                    let index = u32::from_le_bytes(fixed!(self, 4));
                    self.memo_get(u64::from(index))?;
                }
                // Integers
                b'J' => {
                    self.opcode = "BININT";
                    let number = i32::from_le_bytes(fixed!(self, 4));
                    self.push(Value::Int(i64::from(number)))?;
                }
                b'K' => {
                    self.opcode = "BININT1";
                    let [number] = fixed!(self, 1);
                    self.push(Value::Int(i64::from(number)))?;
                }
                b'M' => {
                    self.opcode = "BININT2";
                    let number = u16::from_le_bytes(fixed!(self, 2));
                    self.push(Value::Int(i64::from(number)))?;
                }
                0x8a => {
                    self.opcode = "LONG1";
                    let [n] = fixed!(self, 1);
                    let value = self.payload(u64::from(n), long_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                0x8b => {
                    self.opcode = "LONG4";
                    let n = i32::from_le_bytes(fixed!(self, 4));
                    if n < 0 {
                        return Err(self.malformed("negative length"));
                    }
                    let value = self.payload(n as u64, long_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'G' => {
                    self.opcode = "BINFLOAT";
                    let number = f64::from_be_bytes(fixed!(self, 8));
                    self.push(Value::Float(number))?;
                }
                // Strings
                0x8c => {
                    self.opcode = "SHORT_BINUNICODE";
                    let [n] = fixed!(self, 1);
                    let value = self.payload(u64::from(n), str_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'X' => {
                    self.opcode = "BINUNICODE";
                    let n = u32::from_le_bytes(fixed!(self, 4));
                    let value = self.payload(u64::from(n), str_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                0x8d => {
                    self.opcode = "BINUNICODE8";
                    let n = u64::from_le_bytes(fixed!(self, 8));
                    let value = self.payload(n, str_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'C' => {
                    self.opcode = "SHORT_BINBYTES";
                    let [n] = fixed!(self, 1);
                    let value = self.payload(u64::from(n), bytes_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'B' => {
                    self.opcode = "BINBYTES";
                    let n = u32::from_le_bytes(fixed!(self, 4));
                    let value = self.payload(u64::from(n), bytes_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                0x8e => {
                    self.opcode = "BINBYTES8";
                    let n = u64::from_le_bytes(fixed!(self, 8));
                    let value = self.payload(n, bytes_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                0x96 => {
                    self.opcode = "BYTEARRAY8";
                    let n = u64::from_le_bytes(fixed!(self, 8));
                    let value = self.payload(n, bytes_value)?;
                    self.count_object()?;
                    self.push(value)?;
                }
                b'N' => {
                    self.opcode = "NONE";
                    self.push(Value::None)?;
                }
                0x88 => {
                    self.opcode = "NEWTRUE";
                    self.push(Value::Bool(true))?;
                }
                0x89 => {
                    self.opcode = "NEWFALSE";
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

fn str_value(bytes: &[u8]) -> Value {
    Value::Str(Rc::new(String::from_utf8_lossy(bytes).into_owned()))
}

fn bytes_value(bytes: &[u8]) -> Value {
    Value::Bytes(Rc::new(bytes.to_vec()))
}

/// A little-endian two's-complement integer (LONG1/LONG4).
fn long_value(bytes: &[u8]) -> Value {
    if bytes.len() <= 8 {
        let negative = bytes.last().is_some_and(|&last| last & 0x80 != 0);
        let mut array = if negative { [0xff; 8] } else { [0; 8] };
        array[..bytes.len()].copy_from_slice(bytes);
        Value::Int(i64::from_le_bytes(array))
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
        Value::Dict(Rc::new(Container { depth, items: pairs }))
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
        assert!(matches!(error, PickleError::Refused { offset: 2, opcode: "GLOBAL" }));
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
    }

    #[test]
    fn value_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }
}
