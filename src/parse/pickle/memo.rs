//! The pickle memo, kept compact for millions of trace entries.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;
use std::sync::Arc;

use super::{Value, BUILDING, EXTERNAL};

/// Which memo slots of a stream are ever read (`BINGET`/`LONG_BINGET`, found by the pre-scan),
/// a bit each by index, with the count of read slots before each 64-bit word: a chunk of the
/// parallel decoder keeps only the slots that are read ([`Memo::keep_only_read`]), at the
/// position `rank(index)` among them. A trace makes about three slots per entry (the entry,
/// its frames list, its `'N/A'`) and reads few of them again (a `free_completed` entry's
/// traceback, the keys): dropping the rest saves 8 bytes a slot while the chunks decode.
#[derive(Debug, Default)]
pub(super) struct ReadSlots {
    bits: Vec<u64>,
    /// Read slots in the words before each word.
    before: Vec<u32>,
    total: usize,
}

impl ReadSlots {
    /// From the pre-scan's bits; `None` when there are too many reads to count in 32 bits.
    pub(super) fn new(bits: Vec<u64>) -> Option<Self> {
        let mut before = Vec::with_capacity(bits.len());
        let mut total = 0u64;
        for word in &bits {
            before.push(u32::try_from(total).ok()?);
            total += u64::from(word.count_ones());
        }
        Some(ReadSlots {
            bits,
            before,
            total: usize::try_from(total).ok()?,
        })
    }

    /// Whether slot `index` is read somewhere.
    #[inline]
    pub(super) fn is_read(&self, index: usize) -> bool {
        self.bits
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0)
    }

    /// Read slots below `index`.
    #[inline]
    pub(super) fn rank(&self, index: usize) -> usize {
        let word = index / 64;
        match (self.bits.get(word), self.before.get(word)) {
            (Some(bits), Some(&before)) => {
                let below = bits & ((1u64 << (index % 64)) - 1);
                before as usize + below.count_ones() as usize
            }
            _ => self.total,
        }
    }
}

/// A chunk's memo that keeps only read slots (see [`ReadSlots`]).
#[derive(Debug)]
struct Sparse {
    read: Arc<ReadSlots>,
    /// Read slots below the memo's `base`: the position of a read slot in `slots` is its rank
    /// less this.
    first: usize,
    /// Slots pushed and dropped (never read).
    dropped: usize,
    /// Set when the memo was used in a way this mode does not keep (slots skipped after the
    /// first push): every look-up then fails, and the caller decodes the file another way.
    broken: bool,
}

/// A memo's slot tables, empty, to use again in another memo (their room kept).
#[derive(Debug, Default)]
pub(super) struct MemoTables {
    slots: Vec<Slot>,
    explicit: Vec<Value>,
    /// The values stored over slots made by another decoder (a value decoded on demand
    /// stores the keys it reads there).
    resolved: HashMap<usize, Value, BuildHasherDefault<IndexHasher>>,
}

impl MemoTables {
    /// The most items they have room for.
    pub(super) fn capacity(&self) -> usize {
        self.slots
            .capacity()
            .max(self.explicit.capacity())
            .max(self.resolved.capacity())
    }
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
pub(super) struct Memo {
    slots: Vec<Slot>,
    /// Values that are not packed handles.
    explicit: Vec<Value>,
    runs: Vec<Run>,
    /// Values stored over a slot inside a run (a re-PUT, never done by Python's pickler):
    /// kept aside so that each one is O(1), instead of spelling every run out.
    overridden: HashMap<usize, Value>,
    /// Memo indices held by runs (the memo's length is this plus `slots.len()`).
    in_runs: usize,
    /// The values last stored over slots of an [`EXTERNAL`] run (decoded on demand by the
    /// parallel decoder and referenced again and again: the keys of every trace entry),
    /// direct-mapped by index, in front of `overridden`. Empty until the first one.
    recent: Vec<(usize, Value)>,
    /// Slots `0..base` were made by another decoder of the same stream (a chunk of the
    /// parallel decoder starts this way): each reads as `Handle(EXTERNAL, 0)` until
    /// [`Memo::set`] stores its value in `resolved`. Kept apart from `runs`, so that the
    /// chunk's own slots keep the fast paths of a memo without runs.
    base: usize,
    resolved: HashMap<usize, Value, BuildHasherDefault<IndexHasher>>,
    /// The values of `resolved`, direct-mapped by index, in front of it: a chunk reads the
    /// same few external slots (every trace entry's keys, shared frames) over and over, and a
    /// hash probe per read cost 4 % of a 16-thread decode. Empty unless asked for
    /// ([`Memo::cache_resolved`]: a chunk's memo, not the many short ones of values decoded
    /// on demand).
    resolved_recent: Vec<(usize, Value)>,
    /// Set: only the slots read somewhere are kept, in `slots` (no runs are made).
    sparse: Option<Box<Sparse>>,
}

/// A hash for memo indices: splitmix64's finalizer (every bit of the index moves the bucket,
/// so indices chosen to collide under a plain multiply do not pile up in one).
#[derive(Default)]
pub(super) struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_usize(&mut self, value: usize) {
        self.0 ^= value as u64;
    }

    fn write_u64(&mut self, value: u64) {
        self.0 ^= value;
    }
}

/// Entries of [`Memo::recent`].
const RECENT: usize = 4096;
/// Entries of [`Memo::resolved_recent`].
const RESOLVED_RECENT: usize = 4096;

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
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.base + self.local_len()
    }

    /// Slots from `base` on.
    #[inline]
    fn local_len(&self) -> usize {
        self.slots.len() + self.in_runs + self.sparse.as_ref().map_or(0, |sparse| sparse.dropped)
    }

    /// Its slot tables, emptied (the memo is then left without them).
    pub(super) fn take_tables(&mut self) -> MemoTables {
        let mut tables = MemoTables {
            slots: std::mem::take(&mut self.slots),
            explicit: std::mem::take(&mut self.explicit),
            resolved: std::mem::take(&mut self.resolved),
        };
        tables.slots.clear();
        tables.explicit.clear();
        tables.resolved.clear();
        tables
    }

    /// Uses `tables` (empty, from [`Memo::take_tables`]) for a new memo's slot tables.
    pub(super) fn use_tables(&mut self, tables: MemoTables) {
        if self.slots.capacity() == 0
            && self.explicit.capacity() == 0
            && self.resolved.capacity() == 0
        {
            self.slots = tables.slots;
            self.explicit = tables.explicit;
            self.resolved = tables.resolved;
            self.slots.clear();
            self.explicit.clear();
            self.resolved.clear();
        }
    }

    /// From now on keeps only the slots `read` marks (a chunk of the parallel decoder, its
    /// external slots skipped and nothing pushed yet), reserving room for the read ones among
    /// the next `n`; `false` (and no change) otherwise.
    pub(super) fn keep_only_read(&mut self, read: Arc<ReadSlots>, n: usize) -> bool {
        if self.local_len() != 0 || self.sparse.is_some() {
            return false;
        }
        let first = read.rank(self.base);
        let kept = read.rank(self.base.saturating_add(n)).saturating_sub(first);
        let _ = self.slots.try_reserve_exact(kept);
        self.sparse = Some(Box::new(Sparse {
            read,
            first,
            dropped: 0,
            broken: false,
        }));
        true
    }

    /// Lets go of the values kept aside for slots that `read` (every read of the stream) does
    /// not mark, where no marked slot shares them: a value only the memo holds is freed. The
    /// slots stay, holding `None`: nothing reads them. Only for a memo of the stream from its
    /// start (not a chunk's, which keeps only read slots already).
    pub(super) fn forget_unread(&mut self, read: &ReadSlots) {
        if self.base != 0 || self.sparse.is_some() {
            return;
        }
        let mut needed = vec![false; self.explicit.len()];
        let mut index = 0;
        let mut slots = self.slots.iter();
        let ends = self.runs.iter().map(|run| (run.start, run.len));
        for (start, len) in ends.chain([(usize::MAX, 0)]) {
            while index < start {
                let Some(slot) = slots.next() else {
                    break;
                };
                if slot.0 & SLOT_HANDLE == 0 && read.is_read(index) {
                    if let Some(flag) = needed.get_mut(slot.0 as usize) {
                        *flag = true;
                    }
                }
                index += 1;
            }
            index = start.saturating_add(len);
        }
        for (value, needed) in self.explicit.iter_mut().zip(needed) {
            if !needed {
                *value = Value::None;
            }
        }
    }

    /// Keeps the values stored over external slots in a direct-mapped cache too (for a memo
    /// that reads them often: a chunk's).
    pub(super) fn cache_resolved(&mut self) {
        if self.resolved_recent.is_empty() {
            self.resolved_recent = vec![(usize::MAX, Value::None); RESOLVED_RECENT];
        }
    }

    /// Where local slot `local` of a sparse memo is in `slots` (`None`: dropped, or past the
    /// end).
    #[inline]
    fn sparse_position(&self, local: usize) -> Option<usize> {
        let sparse = self.sparse.as_deref()?;
        let index = self.base + local;
        if sparse.broken || local >= self.local_len() || !sparse.read.is_read(index) {
            return None;
        }
        Some(sparse.read.rank(index) - sparse.first)
    }

    /// [`Memo::push`] for a sparse memo.
    #[inline]
    fn push_sparse(&mut self, value: Value) -> bool {
        let index = self.len();
        let Some(sparse) = self.sparse.as_deref_mut() else {
            return false;
        };
        if !sparse.read.is_read(index) {
            sparse.dropped += 1;
            return false;
        }
        let slot = self.slot_for(value);
        self.slots.push(slot);
        true
    }

    /// The value stored over external slot `index` (below `base`), or its placeholder.
    #[inline]
    fn external(&self, index: usize) -> Value {
        self.resolved_ref(index)
            .cloned()
            .unwrap_or(Value::Handle(EXTERNAL, 0))
    }

    /// The value stored over external slot `index` (below `base`), if any.
    #[inline]
    fn resolved_ref(&self, index: usize) -> Option<&Value> {
        if let Some((at, value)) = self.resolved_recent.get(index % RESOLVED_RECENT) {
            if *at == index {
                return Some(value);
            }
        }
        self.resolved.get(&index)
    }

    /// Where memo `index` (counted from `base`) is: `Ok(slot index)` or `Err(handle)` inside a
    /// run.
    #[inline]
    fn locate(&self, index: usize) -> Option<Result<usize, Value>> {
        if self.sparse.is_some() {
            return self.sparse_position(index).map(Ok);
        }
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
    pub(super) fn get(&self, index: usize) -> Option<Value> {
        let Some(local) = index.checked_sub(self.base) else {
            return Some(self.external(index));
        };
        match self.locate(local)? {
            Ok(slot) => self.read(*self.slots.get(slot)?),
            Err(handle) => {
                if let Some((at, value)) = self.recent.get(index % RECENT) {
                    if *at == index {
                        return Some(value.clone());
                    }
                }
                Some(self.overridden.get(&index).cloned().unwrap_or(handle))
            }
        }
    }

    /// The value at memo `index` when it is kept aside (not a packed handle, not in a run):
    /// one look-up, borrowed.
    #[inline]
    pub(super) fn explicit_ref(&self, index: usize) -> Option<&Value> {
        let Some(local) = index.checked_sub(self.base) else {
            return self.resolved_ref(index);
        };
        if !self.runs.is_empty() {
            return None;
        }
        let slot = match self.sparse {
            None => *self.slots.get(local)?,
            Some(_) => *self.slots.get(self.sparse_position(local)?)?,
        };
        if slot.0 & SLOT_HANDLE != 0 {
            return None;
        }
        self.explicit.get(slot.0 as usize)
    }

    /// The fold handle at `index` as `(kind, id)`, if that is what it holds (not a
    /// container being built).
    #[inline]
    pub(super) fn handle_at(&self, index: usize) -> Option<(u32, u32)> {
        let Some(local) = index.checked_sub(self.base) else {
            return match self.resolved_ref(index)? {
                &Value::Handle(kind, id) if kind != BUILDING && kind != EXTERNAL => {
                    Some((kind, id))
                }
                _ => None,
            };
        };
        if self.runs.is_empty() {
            let slot = match self.sparse {
                None => *self.slots.get(local)?,
                Some(_) => *self.slots.get(self.sparse_position(local)?)?,
            };
            let kind = (slot.0 >> 32) & 0xffff;
            return (slot.0 & SLOT_HANDLE != 0 && kind != SLOT_BUILDING)
                .then_some((kind as u32, slot.0 as u32));
        }
        match self.get(index)? {
            Value::Handle(kind, id) if kind != BUILDING && kind != EXTERNAL => Some((kind, id)),
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
    #[inline]
    pub(super) fn push(&mut self, value: Value) -> bool {
        if self.sparse.is_some() {
            return self.push_sparse(value);
        }
        // The commonest pushes of a trace, first: a fold handle that neither extends a run
        // nor starts one (a trace entry follows its predecessor's `frames`), and the str
        // kept aside last pushed again (every entry's interned `'N/A'`).
        match &value {
            Value::Handle(kind, id) if *kind != BUILDING && !self.may_run(*kind, *id) => {
                if let Some(slot) = Slot::handle(&value) {
                    self.slots.push(slot);
                    return true;
                }
            }
            Value::Str(new) => {
                if let Some(Value::Str(last)) = self.explicit.last() {
                    if Rc::ptr_eq(new, last) {
                        self.slots.push(Slot((self.explicit.len() - 1) as u64));
                        return true;
                    }
                }
            }
            _ => {}
        }
        self.push_general(value)
    }

    /// Whether pushing `Handle(kind, id)` would extend the last run or start a new one.
    #[inline]
    fn may_run(&self, kind: u32, id: u32) -> bool {
        let extends = self.runs.last().is_some_and(|run| {
            run.start + run.len == self.local_len()
                && run.kind == kind
                && run.first.checked_add(run.len as u32) == Some(id)
        });
        let starts = self.slots.last().is_some_and(|slot| {
            slot.0 & SLOT_HANDLE != 0
                && (slot.0 >> 32) & 0xffff == u64::from(kind)
                && (slot.0 as u32).checked_add(1) == Some(id)
        });
        extends || starts
    }

    /// [`Memo::push`] for any value.
    fn push_general(&mut self, value: Value) -> bool {
        if let Value::Handle(kind, id) = value {
            if kind != BUILDING {
                let len = self.local_len();
                if let Some(run) = self.runs.last_mut() {
                    if run.start + run.len == len
                        && run.kind == kind
                        && run.first.checked_add(run.len as u32) == Some(id)
                    {
                        run.len += 1;
                        self.in_runs += 1;
                        return false;
                    }
                }
                // The last slot, if it is a packed handle (read in place: a str kept aside
                // is not cloned just to be looked at).
                let last = self
                    .slots
                    .last()
                    .filter(|slot| slot.0 & SLOT_HANDLE != 0)
                    .map(|slot| ((slot.0 >> 32) & 0xffff, slot.0 as u32));
                if let Some((last_kind, last_id)) = last {
                    let last_is_tail = self.runs.last().is_none_or(|run| run.start + run.len < len);
                    if last_is_tail
                        && last_kind == u64::from(kind)
                        && last_kind != SLOT_BUILDING
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
                        self.in_runs += 2;
                        return false;
                    }
                }
            }
        }
        let slot = self.slot_for(value);
        self.slots.push(slot);
        true
    }

    /// Room for about `n` more slots, reserved at once (a chunk of the parallel decoder
    /// knows its memo size from the pre-scan): a memo grown by doubling leaves the buffers
    /// it outgrew in the thread's allocator arena, which keeps them resident.
    pub(super) fn reserve(&mut self, n: usize) {
        let _ = self.slots.try_reserve_exact(n);
    }

    /// Adds `n` slots whose values live elsewhere (made by another decoder of the same
    /// stream): each reads as `Handle(EXTERNAL, _)` until [`Memo::set`] stores its value.
    pub(super) fn skip(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        if let Some(sparse) = self.sparse.as_deref_mut() {
            // Not kept in this mode (a chunk skips only before its first push).
            sparse.broken = true;
            return;
        }
        if self.len() == 0 {
            self.base = n;
            return;
        }
        let in_runs_before = self
            .runs
            .last()
            .map_or(0, |run| run.in_runs_before + run.len);
        self.runs.push(Run {
            start: self.local_len(),
            kind: EXTERNAL,
            first: 0,
            len: n,
            in_runs_before,
        });
        self.in_runs += n;
    }

    /// Replaces memo `index` (which exists); `true` when that took a new slot aside.
    pub(super) fn set(&mut self, index: usize, value: Value) -> bool {
        let Some(local) = index.checked_sub(self.base) else {
            // A cached entry is kept until its own slot is stored again: the first values a
            // chunk stores (a trace entry's keys, read by every entry after) are not pushed
            // out by the thousands of frames it stores later, each read far less often.
            if let Some(cached) = self.resolved_recent.get_mut(index % RESOLVED_RECENT) {
                if cached.0 == index || cached.0 == usize::MAX {
                    *cached = (index, value.clone());
                }
            }
            return self.resolved.insert(index, value).is_none();
        };
        match self.locate(local) {
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
            Some(Err(handle)) => {
                if matches!(handle, Value::Handle(EXTERNAL, _)) || !self.recent.is_empty() {
                    if self.recent.is_empty() {
                        self.recent = vec![(usize::MAX, Value::None); RECENT];
                    }
                    self.recent[index % RECENT] = (index, value.clone());
                }
                self.overridden.insert(index, value).is_none()
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Str(Rc::new(text.to_string()))
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

    /// One step of a memo's life: a push or a re-PUT of an existing index.
    #[derive(Debug, Clone)]
    enum Op {
        /// A fold handle: kind, and an id that follows the last handle's or not.
        Handle(u32, bool, u32),
        /// A container being built.
        Building(u32),
        /// The str pushed last again (the same object), or a new one.
        Str(bool),
        Int(i64),
        /// Stores a value again at an existing index (by its position among the pushes).
        Set(proptest::sample::Index, i64),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            6 => (1u32..4, any::<bool>(), 0u32..8).prop_map(|(k, next, id)| Op::Handle(k, next, id)),
            1 => (0u32..4).prop_map(Op::Building),
            3 => any::<bool>().prop_map(Op::Str),
            1 => any::<i64>().prop_map(Op::Int),
            1 => (any::<proptest::sample::Index>(), any::<i64>()).prop_map(|(i, n)| Op::Set(i, n)),
        ]
    }

    proptest::proptest! {
        /// The memo, with its fast pushes (a handle that neither extends nor starts a run, the
        /// last str again), reads back exactly what a plain list of the values would, after
        /// any mix of handles in and out of runs, shared and new strs, and re-PUTs.
        ///
        /// A memo may start with `base` slots made elsewhere (a chunk of the parallel
        /// decoder): they read as external until set, and the fast look-ups agree with `get`.
        #[test]
        fn memo_reads_back_what_was_stored(
            base in proptest::prop_oneof![proptest::strategy::Just(0usize), 1usize..5, 1000usize..5000],
            ops in proptest::collection::vec(op(), 0..200),
        ) {
            let mut memo = Memo::default();
            memo.skip(base);
            if base % 2 == 1 {
                memo.cache_resolved();
            }
            let mut plain: Vec<Value> = vec![Value::Handle(EXTERNAL, 0); base];
            let mut last_str = s("first");
            let mut last_id = 0u32;
            for op in ops {
                let value = match op {
                    Op::Handle(kind, next, id) => {
                        last_id = if next { last_id.wrapping_add(1) } else { id };
                        Value::Handle(kind, last_id)
                    }
                    Op::Building(id) => Value::Handle(BUILDING, id),
                    Op::Str(same) => {
                        if !same {
                            last_str = s(&format!("s{}", plain.len()));
                        }
                        last_str.clone()
                    }
                    Op::Int(number) => Value::Int(number),
                    Op::Set(index, number) => {
                        if !plain.is_empty() {
                            let index = index.index(plain.len());
                            memo.set(index, Value::Int(number));
                            plain[index] = Value::Int(number);
                        }
                        continue;
                    }
                };
                memo.push(value.clone());
                plain.push(value);
                proptest::prop_assert_eq!(memo.len(), plain.len());
            }
            for (index, value) in plain.iter().enumerate() {
                let read = memo.get(index);
                if matches!(value, Value::Handle(EXTERNAL, _)) {
                    proptest::prop_assert!(
                        matches!(read, Some(Value::Handle(EXTERNAL, _))),
                        "{}: {:?}", index, read
                    );
                    proptest::prop_assert_eq!(memo.explicit_ref(index), None);
                    proptest::prop_assert_eq!(memo.handle_at(index), None);
                    continue;
                }
                proptest::prop_assert_eq!(read.as_ref(), Some(value), "{}", index);
                if let Some(borrowed) = memo.explicit_ref(index) {
                    proptest::prop_assert_eq!(borrowed, value, "{}", index);
                }
                if let Some((kind, id)) = memo.handle_at(index) {
                    proptest::prop_assert_eq!(&Value::Handle(kind, id), value, "{}", index);
                }
            }
            proptest::prop_assert_eq!(memo.get(plain.len()), None);
        }
    }

    proptest::proptest! {
        /// A memo that keeps only the read slots (a chunk of the parallel decoder) reads back
        /// every read slot as a plain list of the values would, by every look-up, keeps its
        /// length, and refuses the slots it dropped (so a look-up the pre-scan missed fails
        /// the parallel decode, never reads a wrong value).
        #[test]
        fn sparse_memo_reads_back_the_read_slots(
            base in 0usize..300,
            ops in proptest::collection::vec(op(), 0..300),
            read_bits in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..12),
        ) {
            let read = Arc::new(ReadSlots::new(read_bits).expect("few reads"));
            let mut memo = Memo::default();
            memo.skip(base);
            memo.cache_resolved();
            proptest::prop_assert!(memo.keep_only_read(Arc::clone(&read), ops.len()));
            let mut plain: Vec<Value> = vec![Value::Handle(EXTERNAL, 0); base];
            let mut last_id = 0u32;
            for (step, op) in ops.into_iter().enumerate() {
                let value = match op {
                    Op::Handle(kind, next, id) => {
                        last_id = if next { last_id.wrapping_add(1) } else { id };
                        Value::Handle(kind, last_id)
                    }
                    Op::Building(id) => Value::Handle(BUILDING, id),
                    Op::Str(_) => s(&format!("s{step}")),
                    Op::Int(number) => Value::Int(number),
                    Op::Set(index, number) => {
                        if plain.len() > base {
                            let index = base + index.index(plain.len() - base);
                            memo.set(index, Value::Int(number));
                            plain[index] = Value::Int(number);
                        }
                        continue;
                    }
                };
                memo.push(value.clone());
                plain.push(value);
                proptest::prop_assert_eq!(memo.len(), plain.len());
            }
            for (index, value) in plain.iter().enumerate().skip(base) {
                if !read.is_read(index) {
                    proptest::prop_assert_eq!(memo.get(index), None, "{}", index);
                    proptest::prop_assert_eq!(memo.explicit_ref(index), None);
                    proptest::prop_assert_eq!(memo.handle_at(index), None);
                    continue;
                }
                let read_back = memo.get(index);
                proptest::prop_assert_eq!(read_back.as_ref(), Some(value), "{}", index);
                if let Some(borrowed) = memo.explicit_ref(index) {
                    proptest::prop_assert_eq!(borrowed, value, "{}", index);
                }
                if let Some((kind, id)) = memo.handle_at(index) {
                    proptest::prop_assert_eq!(&Value::Handle(kind, id), value, "{}", index);
                }
            }
            proptest::prop_assert_eq!(memo.get(plain.len()), None);
            let kept = (base..plain.len()).filter(|&index| read.is_read(index)).count();
            proptest::prop_assert_eq!(memo.slots.len(), kept);
        }
    }

    #[test]
    fn read_slots_rank_counts_the_read_slots_below() {
        let read = ReadSlots::new(vec![0b1011, 0, u64::MAX, 1 << 63]).expect("few reads");
        let bits: Vec<usize> = (0..300).filter(|&index| read.is_read(index)).collect();
        for index in 0..300 {
            let below = bits.iter().filter(|&&bit| bit < index).count();
            assert_eq!(read.rank(index), below, "{index}");
        }
        assert_eq!(read.rank(1 << 40), 3 + 64 + 1);
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
}
