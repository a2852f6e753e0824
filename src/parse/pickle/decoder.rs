//! The pickle virtual machine: the opcode loop, the stack and the containers being built.

use std::io::Read;
use std::rc::Rc;
use std::sync::Arc;

use super::flat::{FastState, FastVectors};
use super::input::Input;
use super::memo::{Memo, MemoTables, ReadSlots};
use super::opcodes::{bytes_value, long_value, opcode_name, str_value};
use super::parallel::Resolver;
use super::{
    profile, Container, DictStorage, Finished, Fold, Limits, Merge, Open, PickleError, Value,
    BUILDING, EXTERNAL, MEMORY_FLOOR_BYTES, STAND_IN,
};

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

/// The containers of a decoder, empty, kept by a [`Resolver`] between the memo values it
/// decodes on demand (each a decoder of its own: a chunk of a large trace decodes thousands,
/// and each one's fresh stack, marks and memo cost an allocation and a free apiece).
/// Only vectors, so that handing them over copies a few words.
#[derive(Default)]
pub(super) struct Scratch {
    stack: Vec<Value>,
    marks: Vec<usize>,
    memo: MemoTables,
    buildings: Vec<Building>,
    free_buildings: Vec<u32>,
    fast: FastVectors,
}

/// Most items a kept [`Scratch`]'s containers may have room for (one that grew past it, a
/// large value's, is dropped instead).
const SCRATCH_MOST_ITEMS: usize = 4096;

impl Scratch {
    /// Whether its containers are small enough to keep.
    pub(super) fn small(&self) -> bool {
        self.stack.capacity() <= SCRATCH_MOST_ITEMS
            && self.marks.capacity() <= SCRATCH_MOST_ITEMS
            && self.buildings.capacity() <= SCRATCH_MOST_ITEMS
            && self.free_buildings.capacity() <= SCRATCH_MOST_ITEMS
            && self.memo.capacity() <= SCRATCH_MOST_ITEMS
            && self.fast.capacity() <= SCRATCH_MOST_ITEMS
    }
}

/// The decoder's state while it reads one pickle.
pub(super) struct Decoder<'f, R, F> {
    pub(super) input: Input<R>,
    pub(super) limits: Limits,
    pub(super) fold: &'f mut F,
    /// Finished values, and markers (`Handle(BUILDING, i)`) of containers being filled.
    stack: Vec<Value>,
    marks: Vec<usize>,
    /// The memo. A container still being filled is stored as its `Handle(BUILDING, i)`
    /// marker: a reference to it finishes it where it is, since Python's pickler writes all
    /// of a container's items right after creating it, so a later reference means it is
    /// complete (snapshots share a segment's empty `frames` list with its blocks this way,
    /// before the segment's own `SETITEMS`). Adding items to it afterwards is refused.
    pub(super) memo: Memo,
    buildings: Vec<Building>,
    free_buildings: Vec<u32>,
    /// What the flat-dict fast path keeps: interned short strs, folded lists.
    pub(super) fast: FastState,
    pub(super) objects: u64,
    /// Estimated bytes held by the memo, containers and payloads (not the stack, not the
    /// fold: both are added when checked).
    pub(super) retained: u64,
    pub(super) offset: u64,
    /// The opcode being decoded (0 before one is read), for messages.
    pub(super) op: u8,
    /// Decodes memo slots made by another decoder of the same stream (parallel decoding).
    pub(super) resolver: Option<Rc<Resolver>>,
    /// Decoding one memo value on its own, for [`Decoder::resolve`]: the memo index whose
    /// value is wanted; the decoder stops once that slot holds a finished value, or before an
    /// opcode that would reach below where it started.
    pub(super) sub: Option<usize>,
    /// Where [`Decoder::run_until_splice`] stops, for the parallel decoder to put in what
    /// other threads decoded (`u64::MAX`: never).
    pub(super) splice_at: u64,
    /// Whether a value of the stack was replaced by its stand-in ([`Decoder::prepare_fold`]),
    /// and whether the stand-in was copied since.
    stand_in: StandIn,
}

/// Where a stand-in of [`Decoder::prepare_fold`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StandIn {
    /// None was put in.
    None,
    /// Put in, never copied.
    Placed,
    /// Copied (`DUP`, or memoized): it may be read where the value it stands for would not.
    Copied,
}

/// Where [`Decoder::run_until_splice`] stopped.
pub(super) enum Step {
    /// The pickle's value.
    Done(Value),
    /// At [`Decoder::splice_at`].
    Splice,
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

pub(super) fn max_depth(values: &[Value]) -> u32 {
    values.iter().map(Value::depth).max().unwrap_or(0)
}

impl<'f, R: Read, F: Fold> Decoder<'f, R, F> {
    pub(super) fn new(input: Input<R>, limits: Limits, fold: &'f mut F) -> Self {
        Decoder {
            input,
            limits,
            fold,
            stack: Vec::new(),
            marks: Vec::new(),
            memo: Memo::default(),
            buildings: Vec::new(),
            free_buildings: Vec::new(),
            fast: FastState::default(),
            objects: 0,
            retained: 0,
            offset: 0,
            op: 0,
            resolver: None,
            sub: None,
            splice_at: u64::MAX,
            stand_in: StandIn::None,
        }
    }

    /// [`Decoder::new`] with the containers of `scratch` (empty), for a value decoded on
    /// demand.
    #[inline]
    pub(super) fn with_scratch(
        input: Input<R>,
        limits: Limits,
        fold: &'f mut F,
        scratch: Scratch,
    ) -> Self {
        let mut decoder = Decoder::new(input, limits, fold);
        decoder.stack = scratch.stack;
        decoder.marks = scratch.marks;
        decoder.memo.use_tables(scratch.memo);
        decoder.buildings = scratch.buildings;
        decoder.free_buildings = scratch.free_buildings;
        decoder.fast.use_vectors(scratch.fast);
        decoder
    }

    /// The decoder's containers, emptied as a new decoder has them (their room kept), and
    /// its input's buffer.
    #[inline]
    pub(super) fn into_scratch(mut self) -> (Scratch, Vec<u8>) {
        let buffer = self.input.take_buffer();
        let mut scratch = Scratch {
            stack: std::mem::take(&mut self.stack),
            marks: std::mem::take(&mut self.marks),
            memo: self.memo.take_tables(),
            buildings: std::mem::take(&mut self.buildings),
            free_buildings: std::mem::take(&mut self.free_buildings),
            fast: self.fast.take_vectors(),
        };
        scratch.stack.clear();
        scratch.marks.clear();
        scratch.buildings.clear();
        scratch.free_buildings.clear();
        (scratch, buffer)
    }
}

impl<R: Read, F: Merge> Decoder<'_, R, F> {
    /// At [`Decoder::splice_at`]: puts the chunks decoded on other threads into the list being
    /// filled on top of the stack, the memo slots they made (`memo_start..memo_end`) as
    /// external, and counts the `skipped` bytes they came from as read.
    pub(super) fn splice(
        &mut self,
        parts: Vec<F::Part>,
        memo_start: u32,
        memo_end: u32,
        skipped: u64,
    ) -> Result<(), PickleError> {
        let top = self.stack.len().checked_sub(1);
        let building = match top.map(|top| (top, &self.stack[top])) {
            Some((top, &Value::Handle(BUILDING, index)))
                if self.marks.last().is_none_or(|&mark| mark <= top) =>
            {
                index
            }
            _ => return Err(self.malformed("the parallel decoder's plan does not fit")),
        };
        if self.memo.len() != memo_start as usize
            || memo_end < memo_start
            || self
                .buildings
                .get(building as usize)
                .is_none_or(|target| target.is_dict)
        {
            return Err(self.malformed("the parallel decoder's plan does not fit"));
        }
        let items = &mut self.buildings[building as usize].items;
        self.fold
            .merge(items, parts)
            .map_err(|reason| PickleError::Fold {
                offset: self.offset,
                opcode: "APPENDS",
                reason,
            })?;
        self.memo.skip((memo_end - memo_start) as usize);
        self.input.shift(skipped);
        self.splice_at = u64::MAX;
        self.check_memory()
    }
}

impl<R: Read, F: Fold> Decoder<'_, R, F> {
    pub(super) fn truncated(&self) -> PickleError {
        PickleError::Truncated {
            offset: self.offset,
            opcode: opcode_name(self.op),
        }
    }

    pub(super) fn malformed(&self, reason: impl Into<String>) -> PickleError {
        PickleError::Malformed {
            offset: self.offset,
            opcode: opcode_name(self.op),
            reason: reason.into(),
        }
    }

    pub(super) fn limit(&self, what: &'static str, value: u64, limit: u64) -> PickleError {
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

    pub(super) fn count_object(&mut self) -> Result<(), PickleError> {
        self.objects += 1;
        if self.objects > self.limits.max_objects {
            return Err(self.limit("object count", self.objects, self.limits.max_objects));
        }
        self.check_memory()
    }

    /// Refuses to hold more than the memory budget allows at this point of the input.
    #[inline]
    pub(super) fn check_memory(&self) -> Result<(), PickleError> {
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
    pub(super) fn push(&mut self, value: Value) -> Result<(), PickleError> {
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

    pub(super) fn push_building(&mut self, is_dict: bool) -> Result<(), PickleError> {
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

    /// Offers the stack to [`Merge::prepare`] (at the splice, before the chunks are joined).
    /// With `read` (every memo slot the stream reads), the values of the memo slots that
    /// nothing reads are let go, and where the fold names a finished value it read ahead
    /// whole, that value is replaced by its stand-in (and so freed here, while the chunks
    /// decode, rather than after them): only where nothing can refer to the containers still
    /// open below it (none of their memo slots is read), so that the stand-in can reach the
    /// pickle's value only where the value itself would have been.
    pub(super) fn prepare_fold(&mut self, read: Option<&ReadSlots>)
    where
        F: Merge,
    {
        let buildings = &self.buildings;
        let view: Vec<Open<'_>> = self
            .stack
            .iter()
            .map(|value| match value {
                &Value::Handle(BUILDING, index) => match buildings.get(index as usize) {
                    Some(building) if !building.is_dict => Open::List(&building.items),
                    _ => Open::Dict,
                },
                value => Open::Value(value),
            })
            .collect();
        let place = self.fold.prepare(&view);
        drop(view);
        let Some(read) = read else {
            return;
        };
        let _timing = profile::phase(|| "main: free what the chunks do not need".to_string());
        self.memo.forget_unread(read);
        let Some(place) = place else {
            return;
        };
        if place >= self.stack.len() || self.stand_in != StandIn::None {
            return;
        }
        let is_read = |index: u32| read.is_read(index as usize);
        let referable = |building: &Building| {
            building.memo_first.is_some_and(is_read)
                || building.memo_rest.iter().any(|&index| is_read(index))
        };
        // A list still being filled: nothing may refer to it (it is never finished).
        let open = match self.stack[place] {
            Value::Handle(BUILDING, index) => match self.buildings.get(index as usize) {
                Some(building) if !building.is_dict && !referable(building) => Some(index),
                _ => return,
            },
            Value::Handle(EXTERNAL | STAND_IN, _) => return,
            _ => None,
        };
        let below = self.stack[..place].iter().any(|value| match *value {
            Value::Handle(BUILDING, index) => {
                self.buildings.get(index as usize).is_none_or(&referable)
            }
            _ => false,
        });
        if below {
            return;
        }
        let value = std::mem::replace(&mut self.stack[place], Value::Handle(STAND_IN, 0));
        self.stand_in = StandIn::Placed;
        drop(value);
        if let Some(building) = open.and_then(|index| self.buildings.get_mut(index as usize)) {
            // Left open and empty: no place on the stack or read memo slot names it.
            drop(std::mem::take(&mut building.items));
        }
    }

    /// Whether the pickle's value `root` cannot be used as it is: a stand-in was put in
    /// ([`Decoder::prepare_fold`]) and was copied, or did not end where the fold reads it.
    pub(super) fn stand_in_misplaced(&self, root: &Value) -> bool
    where
        F: Merge,
    {
        match self.stand_in {
            StandIn::None => false,
            StandIn::Placed => !self.fold.stands_in(root),
            StandIn::Copied => true,
        }
    }

    /// Puts `items` (key, value, …) into the dict being filled on top of the stack, as a
    /// `SETITEMS` of those values does when the fold does not take the dict early.
    pub(super) fn fill_top_dict(&mut self, items: Vec<Value>) -> Result<(), PickleError> {
        let Some(&Value::Handle(BUILDING, index)) = self.stack.last() else {
            return Err(self.malformed("no dict to set items in"));
        };
        let depth = 1 + max_depth(&items);
        self.check_depth(depth)?;
        self.check_len(items.len() / 2)?;
        let count = items.len() as u64;
        let Some(building) = self.buildings.get_mut(index as usize) else {
            return Err(self.malformed("reference to an unknown container"));
        };
        building.depth = building.depth.max(depth);
        building.items = items;
        self.retained = self.retained.saturating_add(16 * count);
        self.check_memory()
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

    pub(super) fn check_depth(&self, depth: u32) -> Result<(), PickleError> {
        if depth > self.limits.max_depth {
            return Err(self.limit(
                "nesting depth",
                u64::from(depth),
                u64::from(self.limits.max_depth),
            ));
        }
        Ok(())
    }

    pub(super) fn check_len(&self, len: usize) -> Result<(), PickleError> {
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

    pub(super) fn memo_put(&mut self, index: u64) -> Result<(), PickleError> {
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
            Some(value) => {
                if matches!(value, Value::Handle(STAND_IN, _)) {
                    self.stand_in = StandIn::Copied;
                }
                value.clone()
            }
        };
        let cost = if index == self.memo.len() {
            if self.memo.push(entry) {
                16
            } else {
                0
            }
        } else {
            // A slot stored again: cached lists may refer to it.
            self.fast.lists.clear();
            if self.memo.set(index, entry) {
                48
            } else {
                0
            }
        };
        self.retained = self.retained.saturating_add(cost);
        self.check_memory()
    }

    /// Whether memo slot `index` holds a container still being filled.
    pub(super) fn memo_is_open(&self, index: usize) -> bool {
        matches!(self.memo.get(index), Some(Value::Handle(BUILDING, _)))
    }

    #[inline]
    fn memo_get(&mut self, index: u64) -> Result<(), PickleError> {
        match self.memo.get(index as usize) {
            Some(Value::Handle(BUILDING | EXTERNAL, _)) | None => self.memo_get_slow(index),
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
            Some(Value::Handle(EXTERNAL, _)) => {
                let value = self.resolve(index as usize)?;
                if self.memo.set(index as usize, value.clone()) {
                    self.retained = self.retained.saturating_add(48);
                }
                value
            }
            Some(value) => value,
            None => return Err(self.malformed(format!("memo {index} was never stored"))),
        };
        self.push(value)
    }

    /// The value of memo slot `index`, made by another decoder of the stream: decoded from
    /// its own bytes (cached per thread), with the same fold, which may not add trace data
    /// meanwhile ([`Fold::nested`]).
    #[cold]
    fn resolve(&mut self, index: usize) -> Result<Value, PickleError> {
        let Some(resolver) = self.resolver.clone() else {
            return Err(self.malformed(format!("memo {index} was never stored")));
        };
        if let Some(value) = resolver.cached(index) {
            profile::count(&profile::RESOLVE_HITS, 1);
            return Ok(value);
        }
        // What another thread's fold made of this value, taken up without decoding it.
        if let Some(value) = resolver
            .shared(index)
            .and_then(|shared| self.fold.adopt(&shared))
        {
            profile::count(&profile::ADOPTED, 1);
            resolver.store(index, value.clone());
            return Ok(value);
        }
        profile::count(&profile::RESOLVED, 1);
        let Some(start) = resolver.start(index) else {
            return Err(self.malformed(format!("memo {index} was never stored")));
        };
        let depth = resolver.enter();
        if depth > 32 {
            resolver.leave();
            return Err(self.malformed("memo references nested too deeply"));
        }
        if depth == 1 {
            self.fold.nested(true);
        }
        let result = {
            let mut input = Input::small_in(resolver.reader_at(start), resolver.take_buffer());
            input.shift(start);
            let scratch = resolver.take_scratch();
            let mut sub = Decoder::with_scratch(input, self.limits, &mut *self.fold, scratch);
            sub.memo.skip(index);
            sub.resolver = Some(Rc::clone(&resolver));
            sub.sub = Some(index);
            let result = sub.run_until_splice();
            profile::count(&profile::RESOLVED_BYTES, sub.offset.saturating_sub(start));
            let result = match result {
                Ok(Step::Done(value)) => Ok(value),
                Ok(Step::Splice) => Err(sub.malformed("stopped at a splice point")),
                Err(error) => Err(error),
            };
            let (scratch, buffer) = sub.into_scratch();
            resolver.keep_buffer(buffer);
            resolver.keep_scratch(scratch);
            result
        };
        if depth == 1 {
            self.fold.nested(false);
        }
        resolver.leave();
        let value = result?;
        resolver.publish(index, || self.fold.share(&value));
        resolver.store(index, value.clone());
        Ok(value)
    }

    /// The end of [`Decoder::sub`]: the wanted memo slot's value, finished.
    #[cold]
    fn sub_done(&mut self, index: usize) -> Result<Value, PickleError> {
        self.finish_from(0)?;
        match self.memo.get(index) {
            Some(Value::Handle(BUILDING | EXTERNAL, _)) | None => {
                Err(self.malformed(format!("memo {index} has no value where it was stored")))
            }
            Some(value) => Ok(value),
        }
    }

    pub(super) fn run(mut self) -> Result<Value, PickleError> {
        match self.run_until_splice()? {
            Step::Done(value) => Ok(value),
            Step::Splice => Err(self.malformed("stopped at a splice point")),
        }
    }

    /// Decodes up to `STOP`, or up to [`Decoder::splice_at`].
    pub(super) fn run_until_splice(&mut self) -> Result<Step, PickleError> {
        loop {
            self.offset = self.input.offset();
            if self.offset >= self.splice_at {
                if self.offset == self.splice_at {
                    return Ok(Step::Splice);
                }
                return Err(self.malformed("the parallel decoder's plan does not fit"));
            }
            if let Some(index) = self.sub {
                if self.memo.len() > index
                    && !matches!(
                        self.memo.get(index),
                        Some(Value::Handle(BUILDING | EXTERNAL, _))
                    )
                {
                    return self.sub_done(index).map(Step::Done);
                }
            }
            self.op = 0;
            let [op] = fixed!(self, 1);
            self.op = op;
            if let Some(index) = self.sub {
                if self.sub_underflow(op) {
                    return self.sub_done(index).map(Step::Done);
                }
            }
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
                    return Ok(Step::Done(value));
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
                    if matches!(value, Value::Handle(STAND_IN, _)) {
                        self.stand_in = StandIn::Copied;
                    }
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

    /// Starts a chunk of the parallel decoder: the memo holds `memo` slots made elsewhere,
    /// and the list being filled is on the stack.
    /// With `read` (the slots read anywhere in the stream), the chunk's memo keeps only those.
    pub(super) fn start_chunk(
        &mut self,
        memo: usize,
        slots: usize,
        read: Option<Arc<ReadSlots>>,
    ) -> Result<(), PickleError> {
        self.memo.skip(memo);
        self.memo.cache_resolved();
        match read {
            Some(read) => {
                self.memo.keep_only_read(read, slots);
            }
            None => self.memo.reserve(slots),
        }
        self.push_building(false)
    }

    /// Whether `op` would reach below where a [`Decoder::sub`] decode started (the value
    /// wanted is then complete: what follows belongs to its parent).
    fn sub_underflow(&self, op: u8) -> bool {
        let len = self.stack.len();
        match op {
            b'.' => true,
            b'0' => len == 0,
            b'1' | b'd' | b'l' | b't' | b'e' | b'u' => self.marks.is_empty(),
            b'a' => len < 2,
            b's' => len < 3,
            0x85..=0x87 => len < usize::from(op - 0x84),
            _ => false,
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
