//! The fast path for the commonest shape in a snapshot: a flat dict of memo references and
//! scalars (every trace entry), with the list of frames it holds.

use std::collections::HashMap;
use std::io::Read;

use super::decoder::Decoder;
use super::opcodes::{opcode_name, small_long, str_value};
use super::{
    DictItems, Fold, Item, ListItems, PickleError, Value, BUILDING, EXTERNAL, KIND_BOOL,
    KIND_FLOAT, KIND_INLINE, KIND_INT, KIND_NONE, KIND_REF,
};

const FLAT_ITEMS: usize = 24;
/// Most items of a list nested in a flat dict (a trace entry's `frames`).
const FLAT_LIST: usize = 192;
/// Most memo ids kept by the list cache (4 bytes each).
const LIST_CACHE_IDS: usize = 8 << 20;
/// Kind of an item being resolved: a memo value unpacked into `FastState::owned`.
const KIND_OWNED: u8 = 6;
/// Most lists and strings nested in one flat dict.
const FLAT_INLINE: usize = 4;
/// Longest str the fast path interns (a fresh `'N/A'` per trace entry).
const INTERN_MAX_BYTES: usize = 32;
/// Most distinct strs interned.
const INTERN_MAX_STRINGS: usize = 4096;

/// What the fast path keeps between dicts.
#[derive(Default)]
pub(super) struct FastState {
    /// Short strs read by the fast path, shared by content (every trace entry's fresh
    /// `'N/A'` is then one allocation, not millions).
    interned: HashMap<Box<[u8]>, Value>,
    /// The str interned last, looked at first.
    last_interned: Option<(Box<[u8]>, Value)>,
    /// Folded lists by the memo ids they refer to.
    pub(super) lists: ListCache,
    /// Memo values a dict refers to that are not kept aside in the memo (reused).
    owned: Vec<Value>,
    /// The strs and lists a dict holds inline, in the order they were memoized (reused).
    inline: Vec<Value>,
}

/// The reused vectors of a [`FastState`], empty, to use again in another one.
#[derive(Default)]
pub(super) struct FastVectors {
    owned: Vec<Value>,
    inline: Vec<Value>,
}

impl FastVectors {
    /// The most items they have room for.
    pub(super) fn capacity(&self) -> usize {
        self.owned.capacity().max(self.inline.capacity())
    }
}

impl FastState {
    /// Its reused vectors, emptied (it is then left without them).
    pub(super) fn take_vectors(&mut self) -> FastVectors {
        let mut vectors = FastVectors {
            owned: std::mem::take(&mut self.owned),
            inline: std::mem::take(&mut self.inline),
        };
        vectors.owned.clear();
        vectors.inline.clear();
        vectors
    }

    /// Uses `vectors` (empty, from [`FastState::take_vectors`]) for a new state's.
    pub(super) fn use_vectors(&mut self, vectors: FastVectors) {
        if self.owned.capacity() == 0 && self.inline.capacity() == 0 {
            self.owned = vectors.owned;
            self.inline = vectors.inline;
            self.owned.clear();
            self.inline.clear();
        }
    }
}

/// What [`Fold::list`] made of a list of memo references, keyed by the memo ids of its
/// items (a trace entry's `frames` is a new list of `BINGET`s of frame dicts that every
/// allocation at one call site repeats): the same ids of the same memo slots fold the same
/// way, so a repeated list is one hash of its ids, computed while they are read, and one
/// comparison of ids; its bytes are never looked at again. Emptied whenever a memo slot is
/// stored again (a re-PUT), which could change what an id refers to.
///
/// An open-addressing table whose slots hold the hash, the place of the key and the value
/// (one cache line fetched per probe); the ids of every key lie end to end in `arena`.
#[derive(Default)]
pub(super) struct ListCache {
    /// The ids of the list just read, and their hash.
    ids: Vec<u32>,
    hash: u64,
    /// The `(kind, id)` fold handles of the list just read (reused).
    handles: Vec<(u32, u32)>,
    /// The slots (a free one has `len` 0); the length is a power of two.
    table: Vec<CachedList>,
    /// Lists held.
    lists: usize,
    arena: Vec<u32>,
}

#[derive(Clone)]
struct CachedList {
    hash: u64,
    start: u32,
    len: u32,
    value: Value,
}

const FREE: CachedList = CachedList {
    hash: 0,
    start: 0,
    len: 0,
    value: Value::None,
};

/// Most lists the cache holds (a slot is 32 bytes; the table is at most half full).
const LIST_CACHE_LISTS: usize = 1 << 18;

impl ListCache {
    /// Reads the memo references of a list at `bytes[at..]` (after its `EMPTY_LIST` and
    /// `MEMOIZE`): `( refs… APPENDS` or `ref APPEND`, into `self.ids` with their hash.
    /// Returns the offset after the list, or `None` for another shape (nothing is kept).
    #[inline]
    fn read(&mut self, bytes: &[u8], mut at: usize) -> Option<usize> {
        self.ids.clear();
        let mut hash = 0u64;
        let batch = bytes.get(at) == Some(&b'(');
        if batch {
            at += 1;
            // `BINGET`s and `LONG_BINGET`s mixed at random (frames memoized early or late):
            // decoded without a branch on which, 5 bytes loaded either way.
            while let Some(&[op, a, b, c, d]) = bytes.get(at..at + 5) {
                let long = op == b'j';
                if !long && op != b'h' {
                    break;
                }
                if self.ids.len() == FLAT_LIST {
                    return None;
                }
                let word = u32::from_le_bytes([a, b, c, d]);
                let id = if long { word } else { word & 0xff };
                at += if long { 5 } else { 2 };
                hash = mix(hash, id);
                self.ids.push(id);
            }
        }
        loop {
            let id = match *bytes.get(at)? {
                b'h' => {
                    at += 2;
                    u32::from(*bytes.get(at - 1)?)
                }
                b'j' => {
                    let b = bytes.get(at + 1..at + 5)?;
                    at += 5;
                    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
                }
                b'e' if batch && !self.ids.is_empty() => return self.done(hash, at + 1),
                _ => return None,
            };
            if self.ids.len() == FLAT_LIST {
                return None;
            }
            hash = mix(hash, id);
            self.ids.push(id);
            if !batch {
                if bytes.get(at) != Some(&b'a') {
                    return None;
                }
                return self.done(hash, at + 1);
            }
        }
    }

    #[inline]
    fn done(&mut self, hash: u64, end: usize) -> Option<usize> {
        self.hash = mix(hash, self.ids.len() as u32);
        Some(end)
    }

    fn slot_of(&self, hash: u64) -> usize {
        let bits = self.table.len().trailing_zeros();
        (hash >> (64 - bits)) as usize
    }

    /// The value cached for the ids just read.
    #[inline]
    fn get(&self) -> Option<&Value> {
        if self.table.is_empty() {
            return None;
        }
        let mask = self.table.len() - 1;
        let mut slot = self.slot_of(self.hash);
        loop {
            let entry = self.table.get(slot)?;
            if entry.len == 0 {
                return None;
            }
            if entry.hash == self.hash && entry.len as usize == self.ids.len() {
                let start = entry.start as usize;
                let key = self.arena.get(start..start + entry.len as usize)?;
                if key == self.ids.as_slice() {
                    return Some(&entry.value);
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Keeps `value` for the ids just read (not found by [`ListCache::get`]); `false` when
    /// the cache is full. Costs 4 bytes an id and 64 a list.
    fn insert(&mut self, value: Value) -> bool {
        if self.arena.len() + self.ids.len() > LIST_CACHE_IDS || self.lists >= LIST_CACHE_LISTS {
            return false;
        }
        if 2 * (self.lists + 1) > self.table.len() {
            self.grow();
        }
        let entry = CachedList {
            hash: self.hash,
            start: self.arena.len() as u32,
            len: self.ids.len() as u32,
            value,
        };
        self.arena.extend_from_slice(&self.ids);
        self.place(entry);
        self.lists += 1;
        true
    }

    fn place(&mut self, entry: CachedList) {
        let mask = self.table.len() - 1;
        let mut slot = self.slot_of(entry.hash);
        while self.table[slot].len != 0 {
            slot = (slot + 1) & mask;
        }
        self.table[slot] = entry;
    }

    fn grow(&mut self) {
        let size = (self.table.len() * 2).max(1024);
        let old = std::mem::replace(&mut self.table, vec![FREE; size]);
        for entry in old.into_iter().filter(|entry| entry.len != 0) {
            self.place(entry);
        }
    }

    /// Forgets every list (a memo slot was stored again).
    pub(super) fn clear(&mut self) {
        self.table.clear();
        self.lists = 0;
        self.arena.clear();
    }

    /// Bytes the cache holds.
    pub(super) fn held_bytes(&self) -> u64 {
        (4 * self.arena.capacity() + std::mem::size_of::<CachedList>() * self.table.capacity())
            as u64
    }
}

/// One step of FxHash's multiply-rotate, a memo id at a time (the ids of a list are
/// compared in full on a hash match: a collision costs a comparison, not a wrong answer).
#[inline]
fn mix(hash: u64, id: u32) -> u64 {
    (hash.rotate_left(5) ^ u64::from(id)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

impl<R: Read, F: Fold> Decoder<'_, R, F> {
    /// Fast path for the commonest shape in a snapshot, a flat dict written as
    /// `EMPTY_DICT MEMOIZE MARK (key value)… SETITEMS` whose keys and values are memo
    /// references or plain scalars (every trace entry). It is read in one go and handed to
    /// the fold without touching the stack; `false` (nothing consumed) when the bytes ahead
    /// have another shape or the fold does not take the dict, and the general path runs.
    /// Called right after the `EMPTY_DICT` byte.
    pub(super) fn flat_dict(&mut self) -> Result<bool, PickleError> {
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
        self.fast.inline.clear();
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
                    let last = self.fast.last_interned.as_ref();
                    let value = match last.filter(|(text, _)| **text == *payload) {
                        Some((_, value)) => value.clone(),
                        None => match self.fast.interned.get(payload) {
                            Some(value) => {
                                self.fast.last_interned = Some((payload.into(), value.clone()));
                                value.clone()
                            }
                            None if self.fast.interned.len() < INTERN_MAX_STRINGS => {
                                let value = str_value(payload);
                                self.retained = self.retained.saturating_add(len as u64 + 64);
                                self.fast.interned.insert(payload.into(), value.clone());
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
                    self.fast.inline.push(value);
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
                    let lists = &mut self.fast.lists;
                    let Some(list_end) = lists.read(bytes, cursor) else {
                        return Ok(false);
                    };
                    let value = match lists.get() {
                        Some(value) => value.clone(),
                        None => {
                            lists.handles.clear();
                            for &id in &lists.ids {
                                let Some(handle) = self.memo.handle_at(id as usize) else {
                                    return Ok(false);
                                };
                                lists.handles.push(handle);
                            }
                            let items = ListItems {
                                handles: &lists.handles,
                            };
                            let folded =
                                self.fold.list(&items).map_err(|reason| PickleError::Fold {
                                    offset: self.offset,
                                    opcode: opcode_name(self.op),
                                    reason,
                                })?;
                            let Some(value) = folded else {
                                return Ok(false);
                            };
                            if matches!(value, Value::Handle(BUILDING, _)) {
                                return Err(PickleError::Malformed {
                                    offset: self.offset,
                                    opcode: opcode_name(self.op),
                                    reason: "the fold returned a reserved handle".to_string(),
                                });
                            }
                            let before = lists.held_bytes();
                            lists.insert(value.clone());
                            self.retained = self
                                .retained
                                .saturating_add(lists.held_bytes().saturating_sub(before));
                            value
                        }
                    };
                    inline_memoized[inlined] = list_memoized;
                    self.fast.inline.push(value);
                    inlined += 1;
                    (KIND_INLINE, (inlined - 1) as u64, list_end - at)
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
        // Values kept aside in the memo are borrowed where they lie, found with one look-up;
        // others (packed handles) are unpacked into `owned` (`words`: their position) and
        // borrowed from there once it is complete.
        let memo = &self.memo;
        let inline = &self.fast.inline;
        let owned = &mut self.fast.owned;
        owned.clear();
        let mut refs: [Option<&Value>; FLAT_ITEMS] = [None; FLAT_ITEMS];
        let mut any_owned = false;
        for index in 0..count {
            match kinds[index] {
                KIND_REF => {
                    let slot = words[index] as usize;
                    if let Some(value) = memo.explicit_ref(slot) {
                        refs[index] = Some(value);
                        continue;
                    }
                    match memo.get(slot) {
                        Some(Value::Handle(BUILDING | EXTERNAL, _)) | None => return Ok(false),
                        Some(value) => {
                            words[index] = owned.len() as u64;
                            owned.push(value);
                            kinds[index] = KIND_OWNED;
                            any_owned = true;
                        }
                    }
                }
                KIND_INLINE => {
                    refs[index] = inline.get(words[index] as usize);
                    kinds[index] = KIND_REF;
                }
                _ => {}
            }
        }
        if any_owned {
            for index in 0..count {
                if kinds[index] == KIND_OWNED {
                    refs[index] = owned.get(words[index] as usize);
                    kinds[index] = KIND_REF;
                }
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
            // The fold does not take the dict (a snapshot's blocks and segments): it is left
            // being filled on the stack with these items, just as the general path leaves it
            // after its `SETITEMS`, and finished (and folded) where the general path would
            // finish it; its inline lists are already folded, its memo slots made in order.
            let values: Vec<Value> = (0..count).map(|index| item_value(&items, index)).collect();
            self.input.position += at;
            self.push_building(true)?;
            if memoized {
                self.memo_put(self.memo.len() as u64)?;
            }
            for (index, &memoized) in inline_memoized.iter().enumerate().take(inlined) {
                if memoized {
                    let value = std::mem::replace(&mut self.fast.inline[index], Value::None);
                    self.memo_push(value)?;
                }
            }
            self.objects = self.objects.saturating_add(inlined as u64);
            self.fill_top_dict(values)?;
            return Ok(true);
        };
        if matches!(value, Value::Handle(BUILDING, _)) {
            return Err(self.malformed("the fold returned a reserved handle"));
        }
        self.input.position += at;
        // Counted as one object; the memory budget is checked every 64 flat dicts (each
        // holds at most a few hundred bytes: the budget is still met within a few KiB).
        self.objects += 1;
        if self.objects > self.limits.max_objects {
            return Err(self.limit("object count", self.objects, self.limits.max_objects));
        }
        if self.objects % 64 == 0 {
            self.check_memory()?;
        }
        // Memo slots in the order the input made them: the dict, then what it held inline.
        if memoized {
            self.memo_push(value.clone())?;
        }
        for (index, &memoized) in inline_memoized.iter().enumerate().take(inlined) {
            if memoized {
                let value = std::mem::replace(&mut self.fast.inline[index], Value::None);
                self.memo_push(value)?;
            }
        }
        self.objects = self.objects.saturating_add(inlined as u64);
        self.push(value)?;
        Ok(true)
    }

    /// Appends a value to the memo, within its limit.
    #[inline]
    fn memo_push(&mut self, value: Value) -> Result<(), PickleError> {
        if self.memo.len() >= self.limits.max_memo {
            let len = self.memo.len() as u64 + 1;
            return Err(self.limit("memo size", len, self.limits.max_memo as u64));
        }
        if self.memo.push(value) {
            self.retained = self.retained.saturating_add(16);
        }
        Ok(())
    }
}

/// Item `index` of a flat dict as the value the general path pushes for the same opcode.
fn item_value(items: &DictItems<'_>, index: usize) -> Value {
    match items.get(index) {
        Some(Item::Value(value)) => value.clone(),
        Some(Item::Int(number)) => Value::Int(number),
        Some(Item::Float(number)) => Value::Float(number),
        Some(Item::Bool(flag)) => Value::Bool(flag),
        Some(Item::None) | None => Value::None,
    }
}
