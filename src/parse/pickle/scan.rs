//! The pre-scan of the parallel decoder: one pass over the pickle that skips every opcode by
//! its length and builds no value. It finds where each memo entry's value starts (so a later
//! reference can be decoded on its own) and the list filled by the most bytes of `MARK …
//! APPENDS` batches (a snapshot's trace), with the memo size at each batch, so that the batches
//! can be decoded on several threads. Anything it does not expect (an opcode a snapshot never
//! holds, an explicit memo index out of order, a file of 4 GiB or more, a truncated stream)
//! gives `None`: the sequential decoder then reads the file and gives its usual error.

use std::fs::File;
use std::io::Read;

use super::parallel::FileAt;
use super::profile;

/// What the pre-scan found.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// Byte offset of the opcode that starts the value of each memo entry, by memo index, in
    /// the parts the scan made them (one after the other; the parallel scan's pieces are not
    /// copied into one table, ~4 bytes a memo slot).
    pub(super) starts: Vec<Vec<u32>>,
    /// The list filled by the most bytes of batches, if one has two batches or more.
    pub(super) region: Option<Region>,
    /// Which memo slots a `BINGET`/`LONG_BINGET` reads (a bit each, by index): the only
    /// ones a chunk may need from before it.
    pub(super) read: Vec<u64>,
}

impl Plan {
    /// `(index, start)` of each memo slot that is read somewhere, by index.
    #[cfg(test)]
    pub(super) fn read_starts(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut base = 0usize;
        for part in &self.starts {
            read_starts_of(&self.read, base, part, &mut out);
            base += part.len();
        }
        out
    }

    /// [`Plan::read_starts`] with the parts looked at on up to `threads` threads (each
    /// look-up of a start is a cache miss in a table of ~4 bytes a memo slot: tens of MB
    /// for a large trace): the slots of each part are counted first, then each thread writes
    /// its parts' entries into its own stretch of the one table (pieces made on the threads
    /// and copied would stay in their allocator arenas once freed: ~9 MB more peak RSS).
    pub(super) fn read_starts_on(&self, threads: usize) -> Vec<(u32, u32)> {
        let mut bases = Vec::with_capacity(self.starts.len());
        let mut counts = Vec::with_capacity(self.starts.len());
        let mut base = 0usize;
        for part in &self.starts {
            bases.push(base);
            counts.push(count_read(&self.read, base, base + part.len()));
            base += part.len();
        }
        let mut out = vec![(0u32, 0u32); counts.iter().sum()];
        let read = &self.read;
        let fill = |parts: &[Vec<u32>], bases: &[usize], out: &mut [(u32, u32)]| {
            let mut at = 0usize;
            for (part, &base) in parts.iter().zip(bases) {
                for_each_read(read, base, base + part.len(), |index| {
                    if let Some(slot) = out.get_mut(at) {
                        *slot = (index as u32, part[index - base]);
                    }
                    at += 1;
                });
            }
        };
        let threads = threads.min(self.starts.len()).max(1);
        if threads == 1 {
            fill(&self.starts, &bases, &mut out);
            return out;
        }
        let per = self.starts.len().div_ceil(threads).max(1);
        // Each group of parts: its parts, their bases, and its stretch of the table.
        let mut groups = Vec::with_capacity(threads);
        let mut at = 0usize;
        for ((parts, bases), counts) in self
            .starts
            .chunks(per)
            .zip(bases.chunks(per))
            .zip(counts.chunks(per))
        {
            let len: usize = counts.iter().sum();
            groups.push((parts, bases, at..at + len));
            at += len;
        }
        let mut unmade = Vec::new();
        std::thread::scope(|scope| {
            let fill = &fill;
            let mut rest: &mut [(u32, u32)] = &mut out;
            for (group, (parts, bases, stretch)) in groups.iter().enumerate() {
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(stretch.len());
                rest = tail;
                let spawned = std::thread::Builder::new()
                    .name("oomdoc-scan".to_string())
                    .spawn_scoped(scope, move || fill(parts, bases, mine));
                if spawned.is_err() {
                    unmade.push(group);
                }
            }
        });
        // Where no thread could be made, the group's parts are looked at here.
        for group in unmade {
            let (parts, bases, stretch) = &groups[group];
            fill(parts, bases, &mut out[stretch.clone()]);
        }
        out
    }
}

/// Calls `each` with the index of each memo slot in `base..end` that `read` marks, in order.
#[inline]
fn for_each_read(read: &[u64], base: usize, end: usize, mut each: impl FnMut(usize)) {
    // The read bits of indices base..end: whole words, the edges masked.
    let mut word_index = base / 64;
    while word_index * 64 < end {
        let Some(&word) = read.get(word_index) else {
            break;
        };
        let mut bits = word;
        while bits != 0 {
            let index = word_index * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if index >= base && index < end {
                each(index);
            }
        }
        word_index += 1;
    }
}

/// How many memo slots in `base..end` `read` marks: [`for_each_read`]'s calls, counted a
/// word at a time (this count runs on one thread before the parts' threads start; bit by bit
/// it took most of the ~6 ms the chunks' plan held up every core for).
fn count_read(read: &[u64], base: usize, end: usize) -> usize {
    if base >= end {
        return 0;
    }
    let (first, last) = (base / 64, (end - 1) / 64);
    let mut count = 0usize;
    for (word_index, &word) in read.iter().enumerate().take(last + 1).skip(first) {
        let mut bits = word;
        if word_index == first {
            bits &= u64::MAX << (base % 64);
        }
        if word_index == last && end % 64 != 0 {
            bits &= (1u64 << (end % 64)) - 1;
        }
        count += bits.count_ones() as usize;
    }
    count
}

/// Appends `(index, start)` of each memo slot of `part` (slots `base..`) that `read` marks.
#[cfg(test)]
fn read_starts_of(read: &[u64], base: usize, part: &[u32], out: &mut Vec<(u32, u32)>) {
    for_each_read(read, base, base + part.len(), |index| {
        out.push((index as u32, part[index - base]));
    });
}

impl PartialEq for Plan {
    fn eq(&self, other: &Plan) -> bool {
        self.region == other.region
            && self.read == other.read
            && self
                .starts
                .iter()
                .flatten()
                .eq(other.starts.iter().flatten())
    }
}

impl Eq for Plan {}

/// A list's batches: `MARK … APPENDS` groups written one after the other (with at most single
/// `APPEND`s among or after them), nothing else in between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Region {
    /// Start of each batch (the offset of its `MARK`) and the memo size there; the first is
    /// where the region starts.
    pub(super) batches: Vec<(u64, u32)>,
    /// End of the last `APPENDS`/`APPEND` into the list.
    pub(super) end: u64,
    /// Memo size at `end`.
    pub(super) memo_end: u32,
}

impl Region {
    /// Where the region starts (its first batch's `MARK`).
    pub(super) fn start(&self) -> u64 {
        self.batches.first().map_or(self.end, |batch| batch.0)
    }
}

const NONE: u32 = u32::MAX;
/// The tracker of a group's first slot: the list below it, in the stream before the group.
const BASE: u32 = u32::MAX - 1;

/// A value on the scan's stack: where it starts, its list tracker (or [`NONE`]), and whether
/// it is a list made by `EMPTY_LIST`.
#[derive(Debug, Clone, Copy)]
struct Slot {
    start: u64,
    track: u32,
    list: bool,
}

#[derive(Debug, Clone, Copy)]
struct Mark {
    position: usize,
    offset: u64,
    memo: u32,
}

/// Batches of one list being scanned.
#[derive(Debug, Default)]
struct Tracked {
    first: (u64, u32),
    more: Vec<(u64, u32)>,
    end: u64,
    memo_end: u32,
    contiguous: bool,
}

/// An item (a batch at `mark`, or a single item starting at `item`) a group put into the list
/// below it, ending at `end` with the group's memo size `memo_end`.
#[derive(Debug, Clone, Copy)]
struct BaseEvent {
    mark: Option<Mark>,
    item: u64,
    end: u64,
    memo_end: u32,
}

struct Reader<R> {
    reader: R,
    buffer: Vec<u8>,
    position: usize,
    end: usize,
    base: u64,
}

/// Least size of the buffer: above every `fill` the scan asks for (at most `FLAT_WINDOW`).
const BUFFER: usize = 16 * 1024;

impl<R: Read> Reader<R> {
    fn new(reader: R, base: u64) -> Self {
        Reader {
            reader,
            buffer: vec![0; super::input::read_size().max(BUFFER)],
            position: 0,
            end: 0,
            base,
        }
    }

    fn offset(&self) -> u64 {
        self.base + self.position as u64
    }

    /// Makes `n` bytes available (`n` ≤ [`BUFFER`]); `false` at the end of input or on error.
    #[inline]
    fn fill(&mut self, n: usize) -> bool {
        self.end - self.position >= n || self.fill_slow(n)
    }

    #[cold]
    fn fill_slow(&mut self, n: usize) -> bool {
        self.buffer.copy_within(self.position..self.end, 0);
        self.base += self.position as u64;
        self.end -= self.position;
        self.position = 0;
        while self.end < n {
            match self.reader.read(&mut self.buffer[self.end..]) {
                Ok(0) => return false,
                Ok(read) => self.end += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// Skips `n` bytes; `false` when the input ends first.
    fn skip(&mut self, mut n: u64) -> bool {
        loop {
            let here = ((self.end - self.position) as u64).min(n);
            self.position += here as usize;
            n -= here;
            if n == 0 {
                return true;
            }
            if !self.fill(1) {
                return false;
            }
        }
    }

    #[inline]
    fn byte(&mut self) -> Option<u8> {
        if !self.fill(1) {
            return None;
        }
        let byte = self.buffer[self.position];
        self.position += 1;
        Some(byte)
    }

    #[inline]
    fn le(&mut self, n: usize) -> Option<u64> {
        if !self.fill(n) {
            return None;
        }
        let mut value = 0u64;
        for (index, &byte) in self.buffer[self.position..self.position + n]
            .iter()
            .enumerate()
        {
            value |= u64::from(byte) << (8 * index);
        }
        self.position += n;
        Some(value)
    }
}

/// How a scan stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// At `STOP` (a whole pickle).
    Stop,
    /// Something unexpected: no plan.
    Fail,
    /// A group reached its end at this opcode boundary.
    End(u64),
    /// The opcode at this offset would reach below a group's first slot (not executed).
    Underflow(u64),
    /// The whole-stream scan stopped after an `APPENDS` at this offset, for a parallel scan of
    /// what follows.
    Pause(u64),
}

struct Scan {
    stack: Vec<Slot>,
    marks: Vec<Mark>,
    tracked: Vec<Tracked>,
    free: Vec<u32>,
    /// Memo starts of earlier parts (see [`Plan::starts`]), then this scan's own.
    parts: Vec<Vec<u32>>,
    /// Memo slots in `parts`: `starts[0]` is slot `memo_base`.
    memo_base: usize,
    starts: Vec<u32>,
    /// Memo slots read (see [`Plan::read`]).
    read: Vec<u64>,
    /// Memo indices a read may name: below this (the file's length, for a group that does
    /// not know the memo size where it starts).
    read_limit: u64,
    /// A group's most `index - memo size there` over its reads: the memo size where the
    /// group starts must exceed it (the whole-stream scan checks each read as it comes).
    read_slack: i64,
    best: Option<Region>,
    best_bytes: u64,
    /// A group of a parallel scan: slot 0 is the list below it ([`BASE`]).
    group: bool,
    base_events: Vec<BaseEvent>,
    /// Where the whole-stream scan may pause for a parallel scan: from this offset on.
    pause_from: u64,
    /// Whether trace entries are skipped in one go ([`Scan::flat_dict`]; the tests compare
    /// with the opcode-by-opcode scan).
    flat: bool,
}

impl Scan {
    fn new() -> Self {
        Scan {
            stack: Vec::new(),
            marks: Vec::new(),
            tracked: Vec::new(),
            free: Vec::new(),
            parts: Vec::new(),
            memo_base: 0,
            starts: Vec::new(),
            read: Vec::new(),
            read_limit: u64::MAX,
            read_slack: i64::MIN,
            best: None,
            best_bytes: 0,
            group: false,
            base_events: Vec::new(),
            pause_from: u64::MAX,
            flat: true,
        }
    }

    fn new_group() -> Self {
        let mut scan = Scan::new();
        scan.group = true;
        scan.stack.push(Slot {
            start: u64::MAX,
            track: BASE,
            list: true,
        });
        scan
    }

    /// Records a read of memo `index`; `false` for one no stream may hold (not stored yet,
    /// or past the group's limit).
    #[inline]
    fn mark(&mut self, index: u64) -> bool {
        if (!self.group && index >= self.memo() as u64) || index >= self.read_limit {
            return false;
        }
        if self.group {
            self.read_slack = self.read_slack.max(index as i64 - self.memo() as i64);
        }
        let word = (index / 64) as usize;
        if word >= self.read.len() {
            self.read.resize(word + 1, 0);
        }
        self.read[word] |= 1 << (index % 64);
        true
    }

    /// The memo size here.
    #[inline]
    fn memo(&self) -> usize {
        self.memo_base + self.starts.len()
    }

    #[inline]
    fn push(&mut self, start: u64) {
        self.stack.push(Slot {
            start,
            track: NONE,
            list: false,
        });
    }

    /// Drops the stack from `position` up, keeping the best list of batches seen.
    #[inline]
    fn truncate(&mut self, position: usize) {
        for index in position..self.stack.len() {
            let track = self.stack[index].track;
            if track != NONE && track != BASE {
                self.retire(track);
            }
        }
        self.stack.truncate(position);
    }

    #[cold]
    fn retire(&mut self, track: u32) {
        let Some(tracked) = self.tracked.get_mut(track as usize) else {
            return;
        };
        let tracked = std::mem::take(tracked);
        self.free.push(track);
        self.consider(tracked);
    }

    fn consider(&mut self, tracked: Tracked) {
        let bytes = tracked.end.saturating_sub(tracked.first.0);
        if tracked.contiguous && !tracked.more.is_empty() && bytes > self.best_bytes {
            let mut batches = Vec::with_capacity(1 + tracked.more.len());
            batches.push(tracked.first);
            batches.extend(tracked.more);
            self.best_bytes = bytes;
            self.best = Some(Region {
                batches,
                end: tracked.end,
                memo_end: tracked.memo_end,
            });
        }
    }

    fn add_tracked(&mut self, tracked: Tracked) -> u32 {
        match self.free.pop() {
            Some(index) => {
                self.tracked[index as usize] = tracked;
                index
            }
            None => {
                self.tracked.push(tracked);
                (self.tracked.len() - 1) as u32
            }
        }
    }

    /// A batch `mark … APPENDS` ending at `end` (memo size `memo` there) went into the list
    /// at `target`; `true` when that list has two batches or more.
    fn batch(&mut self, target: usize, mark: Mark, end: u64, memo: u32) -> bool {
        let Some(slot) = self.stack.get(target).copied() else {
            return false;
        };
        if slot.track == BASE {
            self.base_events.push(BaseEvent {
                mark: Some(mark),
                item: mark.offset,
                end,
                memo_end: memo,
            });
            return false;
        }
        if slot.track == NONE {
            let tracked = Tracked {
                first: (mark.offset, mark.memo),
                more: Vec::new(),
                end,
                memo_end: memo,
                contiguous: true,
            };
            let index = self.add_tracked(tracked);
            self.stack[target].track = index;
            return false;
        }
        let Some(tracked) = self.tracked.get_mut(slot.track as usize) else {
            return false;
        };
        if tracked.end != mark.offset {
            tracked.contiguous = false;
        }
        tracked.more.push((mark.offset, mark.memo));
        tracked.end = end;
        tracked.memo_end = memo;
        tracked.contiguous
    }

    /// A single `APPEND` of the item starting at `item` went into the list at `target`.
    fn single(&mut self, target: usize, item: u64, end: u64, memo: u32) {
        let Some(slot) = self.stack.get(target).copied() else {
            return;
        };
        if slot.track == BASE {
            self.base_events.push(BaseEvent {
                mark: None,
                item,
                end,
                memo_end: memo,
            });
            return;
        }
        if let Some(tracked) = self.tracked.get_mut(slot.track as usize) {
            if tracked.end != item {
                tracked.contiguous = false;
            }
            tracked.end = end;
            tracked.memo_end = memo;
        }
    }

    /// Scans from `input` until `STOP`, or in a group up to `end` (the first opcode boundary
    /// at or after it) or an opcode that reaches below the group.
    fn run<R: Read>(&mut self, input: &mut Reader<R>, end: u64) -> Outcome {
        loop {
            let offset = input.offset();
            if offset >= end {
                return Outcome::End(offset);
            }
            if offset >= u64::from(u32::MAX) {
                return Outcome::Fail;
            }
            let Some(op) = input.byte() else {
                return Outcome::Fail;
            };
            match self.step(input, op, offset) {
                Ok(()) => {}
                Err(outcome) => return outcome,
            }
        }
    }

    /// One opcode (its byte read); `Err` stops the scan.
    #[inline]
    fn step<R: Read>(&mut self, input: &mut Reader<R>, op: u8, offset: u64) -> Result<(), Outcome> {
        const FAIL: Outcome = Outcome::Fail;
        let under = Outcome::Underflow(offset);
        // The lowest slot a group may consume or target: above its base.
        let floor = usize::from(self.group);
        match op {
            0x80 => {
                input.byte().ok_or(FAIL)?;
            }
            0x95 => {
                input.le(8).ok_or(FAIL)?;
            }
            b'.' => {
                if self.group {
                    return Err(under);
                }
                if self.stack.len() != 1 || !self.marks.is_empty() {
                    return Err(FAIL);
                }
                self.truncate(0);
                return Err(Outcome::Stop);
            }
            b'(' => self.marks.push(Mark {
                position: self.stack.len(),
                offset,
                memo: self.memo() as u32,
            }),
            b'0' => {
                let top = self.stack.len().checked_sub(1).ok_or(FAIL)?;
                if top < floor {
                    return Err(under);
                }
                if self.marks.last().is_some_and(|mark| mark.position > top) {
                    return Err(FAIL);
                }
                self.truncate(top);
            }
            b'1' | b'd' | b'l' | b't' | b'e' | b'u' => {
                let Some(mark) = self.marks.last().copied() else {
                    return Err(if self.group { under } else { FAIL });
                };
                if mark.position > self.stack.len() || mark.position == 0 {
                    return Err(FAIL);
                }
                if self.group && mark.position == 1 && op == b'u' {
                    return Err(under);
                }
                self.marks.pop();
                self.truncate(mark.position);
                match op {
                    b'd' | b'l' | b't' => self.stack.push(Slot {
                        start: mark.offset,
                        track: NONE,
                        list: false,
                    }),
                    b'e' => {
                        let memo = self.memo() as u32;
                        let target = mark.position - 1;
                        let two = self.batch(target, mark, offset + 1, memo);
                        if two && offset + 1 >= self.pause_from && target + 1 == self.stack.len() {
                            return Err(Outcome::Pause(offset + 1));
                        }
                    }
                    _ => {}
                }
            }
            b'}' => {
                if !(self.flat && self.flat_dict(input, offset)) {
                    self.push(offset);
                }
            }
            b')' | b'N' | 0x88 | 0x89 => self.push(offset),
            b']' => self.stack.push(Slot {
                start: offset,
                track: NONE,
                list: true,
            }),
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                let first = self.stack.len().checked_sub(n).ok_or(FAIL)?;
                if first < floor {
                    return Err(under);
                }
                if self.marks.last().is_some_and(|mark| mark.position > first) {
                    return Err(FAIL);
                }
                let start = self.stack[first].start;
                self.truncate(first);
                self.push(start);
            }
            b'a' => {
                let item = self.stack.len().checked_sub(1).ok_or(FAIL)?;
                if item <= floor {
                    return Err(if self.group { under } else { FAIL });
                }
                if self.marks.last().is_some_and(|mark| mark.position > item) {
                    return Err(FAIL);
                }
                let start = self.stack[item].start;
                self.truncate(item);
                let memo = self.memo() as u32;
                self.single(item - 1, start, offset + 1, memo);
            }
            b's' => {
                let key = self.stack.len().checked_sub(2).ok_or(FAIL)?;
                if key <= floor {
                    return Err(if self.group { under } else { FAIL });
                }
                if self.marks.last().is_some_and(|mark| mark.position > key) {
                    return Err(FAIL);
                }
                self.truncate(key);
            }
            0x94 | b'q' | b'r' => {
                if op == b'q' {
                    if input.le(1).ok_or(FAIL)? != self.memo() as u64 {
                        return Err(FAIL);
                    }
                } else if op == b'r' && input.le(4).ok_or(FAIL)? != self.memo() as u64 {
                    return Err(FAIL);
                }
                let top = self.stack.len().checked_sub(1).ok_or(FAIL)?;
                if top < floor {
                    return Err(under);
                }
                if self.memo() >= u32::MAX as usize - 1 {
                    return Err(FAIL);
                }
                self.starts.push(self.stack[top].start as u32);
            }
            b'h' | b'K' => {
                let index = input.le(1).ok_or(FAIL)?;
                if op == b'h' && !self.mark(index) {
                    return Err(FAIL);
                }
                self.push(offset);
            }
            b'M' => {
                input.le(2).ok_or(FAIL)?;
                self.push(offset);
            }
            b'j' | b'J' => {
                let index = input.le(4).ok_or(FAIL)?;
                if op == b'j' && !self.mark(index) {
                    return Err(FAIL);
                }
                self.push(offset);
            }
            b'G' => {
                input.le(8).ok_or(FAIL)?;
                self.push(offset);
            }
            0x8a | 0x8c | b'C' => {
                let n = input.le(1).ok_or(FAIL)?;
                if !input.skip(n) {
                    return Err(FAIL);
                }
                self.push(offset);
            }
            0x8b | b'X' | b'B' => {
                let n = input.le(4).ok_or(FAIL)?;
                if !input.skip(n) {
                    return Err(FAIL);
                }
                self.push(offset);
            }
            0x8d | 0x8e | 0x96 => {
                let n = input.le(8).ok_or(FAIL)?;
                if !input.skip(n) {
                    return Err(FAIL);
                }
                self.push(offset);
            }
            _ => return Err(FAIL),
        }
        Ok(())
    }

    /// The commonest shape, a trace entry: a dict written as `EMPTY_DICT [MEMOIZE] MARK
    /// (key value)… SETITEMS` whose items are memo references, scalars, short strs and lists
    /// of memo references, skipped in one go (the `EMPTY_DICT` at `offset` just read). The
    /// memo starts and reads are the ones the opcode-by-opcode scan records; `false`
    /// (nothing read) for any other shape.
    #[inline]
    fn flat_dict<R: Read>(&mut self, input: &mut Reader<R>, offset: u64) -> bool {
        if offset + FLAT_WINDOW as u64 >= u64::from(u32::MAX) {
            return false;
        }
        let _ = input.fill(FLAT_WINDOW);
        let bytes = &input.buffer[input.position..input.end];
        let mut found = [0u32; FLAT_MOST_STARTS];
        // Each read is marked as it is met. A read within the table is marked at once: one at
        // or past the limit every read of the dict must keep (the table's last word may reach
        // past it) is then the dict's largest read, which `take_flat_dict` checks, declining
        // the dict. A read past the table is checked first (the table grows as [`Scan::mark`]
        // grows it, never past the limit). Where the dict is declined, the opcode-by-opcode
        // scan reads it again and marks every one of its reads (these among them) or fails
        // the scan (a group's table is then dropped): the marks come out as that scan makes
        // them.
        let limit = if self.group {
            self.read_limit
        } else {
            self.read_limit.min(self.memo() as u64)
        };
        let table = &mut self.read;
        let mut mark = |index: u32| -> bool {
            let word = index as usize / 64;
            let bit = 1u64 << (index % 64);
            if let Some(slot) = table.get_mut(word) {
                *slot |= bit;
                return true;
            }
            if u64::from(index) >= limit {
                return false;
            }
            table.resize(word + 1, 0);
            table[word] |= bit;
            true
        };
        let skipped = skip_flat_dict(bytes, offset, &mut mark, &mut found);
        let taken = skipped.is_some_and(|skipped| self.take_flat_dict(skipped, &found));
        if let Some(skipped) = skipped.filter(|_| taken) {
            input.position += skipped.len;
            self.push(offset);
        }
        taken
    }

    /// Records what [`skip_flat_dict`] found (its reads marked already, each checked as the
    /// opcode-by-opcode scan checks it where it comes: every read names a slot stored before
    /// the dict, since its own slots come after them only as `MEMOIZE`s, never read inside
    /// it): its memo starts and the group's slack; `false` (no starts recorded) where a check
    /// fails.
    #[inline]
    fn take_flat_dict(&mut self, skipped: FlatDict, found: &[u32]) -> bool {
        let before = self.memo();
        if before + skipped.starts >= u32::MAX as usize - 1 {
            return false;
        }
        if let Some(most) = skipped.most_read {
            // The largest index decides every read's checks, the group's slack and the
            // read table's length, as each read's [`Scan::mark`] would one by one.
            if (!self.group && most as usize >= before) || u64::from(most) >= self.read_limit {
                return false;
            }
            if self.group {
                self.read_slack = self.read_slack.max(i64::from(most) - before as i64);
            }
        }
        self.starts.extend_from_slice(&found[..skipped.starts]);
        true
    }

    /// Every memo start, in parts ([`Plan::starts`]).
    fn take_starts(&mut self) -> Vec<Vec<u32>> {
        let mut parts = std::mem::take(&mut self.parts);
        parts.push(std::mem::take(&mut self.starts));
        parts.retain(|part| !part.is_empty());
        parts
    }

    /// Whether a group that assumes a list on top with no mark above it may follow: the
    /// state at the end of what was scanned.
    fn list_on_top(&self) -> bool {
        let Some(top) = self.stack.len().checked_sub(1) else {
            return false;
        };
        self.stack[top].list && self.marks.last().is_none_or(|mark| mark.position <= top)
    }

    /// Adds what `group` scanned (which started where this scan stands, with this scan's top
    /// list below it); `false` when one of its reads names a memo slot not stored by then.
    fn absorb(&mut self, mut group: Scan) -> bool {
        if group.read_slack >= self.memo() as i64 {
            return false;
        }
        let memo = self.memo() as u32;
        let Some(top) = self.stack.len().checked_sub(1) else {
            return true;
        };
        for event in std::mem::take(&mut group.base_events) {
            match event.mark {
                Some(mark) => {
                    let mark = Mark {
                        position: top + 1,
                        offset: mark.offset,
                        memo: mark.memo + memo,
                    };
                    self.batch(top, mark, event.end, event.memo_end + memo);
                }
                None => self.single(top, event.item, event.end, event.memo_end + memo),
            }
        }
        let own = std::mem::take(&mut self.starts);
        self.memo_base += own.len() + group.starts.len();
        self.parts.push(own);
        self.parts.push(std::mem::take(&mut group.starts));
        if group.read.len() > self.read.len() {
            self.read.resize(group.read.len(), 0);
        }
        for (word, &bits) in self.read.iter_mut().zip(&group.read) {
            *word |= bits;
        }
        for slot in group.stack.iter().skip(1) {
            let mut slot = *slot;
            if slot.track != NONE {
                let mut tracked = std::mem::take(&mut group.tracked[slot.track as usize]);
                tracked.first.1 += memo;
                for batch in &mut tracked.more {
                    batch.1 += memo;
                }
                tracked.memo_end += memo;
                slot.track = self.add_tracked(tracked);
            }
            self.stack.push(slot);
        }
        for mark in &group.marks {
            self.marks.push(Mark {
                position: mark.position + top,
                offset: mark.offset,
                memo: mark.memo + memo,
            });
        }
        if let Some(mut best) = group.best.take() {
            if group.best_bytes > self.best_bytes {
                for batch in &mut best.batches {
                    batch.1 += memo;
                }
                best.memo_end += memo;
                self.best_bytes = group.best_bytes;
                self.best = Some(best);
            }
        }
        true
    }
}

/// Scans one pickle from `reader` up to its `STOP`, on this thread, opcode by opcode.
#[cfg(test)]
pub(super) fn scan<R: Read>(reader: R) -> Option<Plan> {
    let mut scan = Scan::new();
    scan.flat = false;
    let mut input = Reader::new(reader, 0);
    match scan.run(&mut input, u64::MAX) {
        Outcome::Stop => Some(Plan {
            starts: scan.take_starts(),
            region: scan.best,
            read: scan.read,
        }),
        _ => None,
    }
}

/// Bytes [`Scan::flat_dict`] looks at for one dict (a trace entry takes a few hundred).
const FLAT_WINDOW: usize = 4096;
/// Most memo starts one dict skipped by [`Scan::flat_dict`] may hold.
const FLAT_MOST_STARTS: usize = 32;

/// What [`skip_flat_dict`] skipped.
#[derive(Debug, Clone, Copy)]
struct FlatDict {
    /// Bytes from the one after `EMPTY_DICT` to the end of `SETITEMS`.
    len: usize,
    /// Memo starts written to `found`.
    starts: usize,
    /// The largest memo index read (`None`: no reads).
    most_read: Option<u32>,
}

/// Skips the dict of [`Scan::flat_dict`] in `bytes` (from the byte after its `EMPTY_DICT`
/// at `offset`): each memo index it reads goes to `reads`, in order, its memo starts to
/// `found`; `None` for any other shape, a dict that does not end within `bytes`, or a read
/// `reads` refuses (returns `false` for; it stops there).
#[inline]
fn skip_flat_dict(
    bytes: &[u8],
    offset: u64,
    reads: &mut impl FnMut(u32) -> bool,
    found: &mut [u32; FLAT_MOST_STARTS],
) -> Option<FlatDict> {
    let mut most = 0u32;
    let mut any = false;
    // The memo index after a `BINGET` (`long`: `LONG_BINGET`) at `at`, recorded.
    #[inline(always)]
    fn read_one(
        bytes: &[u8],
        at: usize,
        long: bool,
        reads: &mut impl FnMut(u32) -> bool,
        most: &mut u32,
        any: &mut bool,
    ) -> Option<()> {
        let index = if long {
            let le = bytes.get(at + 1..at + 5)?;
            u32::from_le_bytes([le[0], le[1], le[2], le[3]])
        } else {
            u32::from(*bytes.get(at + 1)?)
        };
        if !reads(index) {
            return None;
        }
        *most = (*most).max(index);
        *any = true;
        Some(())
    }
    let read = |at: usize, long: bool, reads: &mut _, most: &mut u32, any: &mut bool| {
        read_one(bytes, at, long, reads, most, any)
    };
    let mut count = 0;
    let mut at = 0;
    if bytes.first() == Some(&0x94) {
        found[0] = offset as u32;
        count = 1;
        at = 1;
    }
    // The memo start of a value at `relative` (then `MEMOIZE`d).
    let mut record = |relative: usize| -> Option<()> {
        *found.get_mut(count)? = (offset + 1 + relative as u64) as u32;
        count += 1;
        Some(())
    };
    if bytes.get(at) != Some(&b'(') {
        return None;
    }
    at += 1;
    loop {
        match *bytes.get(at)? {
            b'u' => {
                at += 1;
                break;
            }
            b'h' => {
                read(at, false, reads, &mut most, &mut any)?;
                at += 2;
            }
            b'K' => at += 2,
            b'M' => at += 3,
            b'j' => {
                read(at, true, reads, &mut most, &mut any)?;
                at += 5;
            }
            b'J' => at += 5,
            b'G' => at += 9,
            b'N' | 0x88 | 0x89 => at += 1,
            0x8a => at += 2 + usize::from(*bytes.get(at + 1)?),
            0x8c => {
                let start = at;
                at += 2 + usize::from(*bytes.get(at + 1)?);
                if bytes.get(at) == Some(&0x94) {
                    record(start)?;
                    at += 1;
                }
            }
            b']' => {
                let start = at;
                at += 1;
                if bytes.get(at) == Some(&0x94) {
                    record(start)?;
                    at += 1;
                }
                match bytes.get(at) {
                    Some(b'(') => {
                        at += 1;
                        loop {
                            // The items (frames memoized in earlier entries) read with
                            // one bounds check each where five bytes are left.
                            match bytes.get(at..at + 5) {
                                Some(&[b'j', a, b, c, d]) => {
                                    let index = u32::from_le_bytes([a, b, c, d]);
                                    if !reads(index) {
                                        return None;
                                    }
                                    most = most.max(index);
                                    any = true;
                                    at += 5;
                                    continue;
                                }
                                Some(&[b'h', index, ..]) => {
                                    let index = u32::from(index);
                                    if !reads(index) {
                                        return None;
                                    }
                                    most = most.max(index);
                                    any = true;
                                    at += 2;
                                    continue;
                                }
                                _ => {}
                            }
                            match *bytes.get(at)? {
                                b'h' => {
                                    read(at, false, reads, &mut most, &mut any)?;
                                    at += 2;
                                }
                                b'e' => {
                                    at += 1;
                                    break;
                                }
                                _ => return None,
                            }
                        }
                    }
                    Some(b'h') if bytes.get(at + 2) == Some(&b'a') => {
                        read(at, false, reads, &mut most, &mut any)?;
                        at += 3;
                    }
                    Some(b'j') if bytes.get(at + 5) == Some(&b'a') => {
                        read(at, true, reads, &mut most, &mut any)?;
                        at += 6;
                    }
                    _ => {}
                }
            }
            _ => return None,
        }
    }
    if at > bytes.len() {
        return None;
    }
    Some(FlatDict {
        len: at,
        starts: count,
        most_read: any.then_some(most),
    })
}

/// What the pattern search looks for to cut a long list for the parallel scan: the end of a
/// batch and the start of the next one whose first item is a memoized dict (a trace entry).
/// A cut found inside a string or a number is harmless: its group fails to line up with the
/// one before, and that part is scanned again on one thread.
const CUT: &[u8] = b"e(}\x94(";

/// Scans the pickle in `file` (of `len` bytes) as [`scan`] does, with `threads` threads on
/// the long lists: when the scan has seen two batches of a list, the rest of the file is cut
/// at likely batch boundaries and each piece scanned on a thread of its own, as the items
/// of a list; the pieces are joined in order while each one starts where the one before
/// ended, with a list on top, and the scan goes on on this thread from where they stop
/// lining up (or the list ends). The plan is the one [`scan`] makes.
/// `min_bytes`: the least bytes left in the file for the scan to go parallel there.
pub(super) fn scan_file(file: &File, len: u64, threads: usize, min_bytes: u64) -> Option<Plan> {
    let mut scan = Scan::new();
    let mut position = 0u64;
    scan.pause_from = if threads > 1 { 0 } else { u64::MAX };
    if threads > 1 && len >= min_bytes.max(1) {
        // The pieces start at once: this thread scans the file's head (a snapshot's segments,
        // 6 MiB of a 577 MiB file, 0.011-0.017 s on one thread on the H200 host, where every
        // other core waited for it) as the first piece, up to the first cut, while the other
        // pieces are scanned on threads of their own; they join as the later pieces of
        // `scan_groups` do.
        let pieces = profile::phase(|| format!("pre-scan: {threads} pieces from 0 MiB"));
        match scan_from_start(&mut scan, file, len, threads)? {
            Outcome::Stop => {
                return Some(Plan {
                    starts: scan.take_starts(),
                    region: scan.best,
                    read: scan.read,
                })
            }
            Outcome::End(at) => position = at,
            _ => return None,
        }
        drop(pieces);
        scan.pause_from = position.saturating_add(1);
    }
    loop {
        let mut input = Reader::new(FileAt::new(file, position, u64::MAX), position);
        let serial = profile::phase(|| format!("pre-scan: one thread from {} MiB", position >> 20));
        let outcome = scan.run(&mut input, u64::MAX);
        drop(serial);
        match outcome {
            Outcome::Stop => {
                return Some(Plan {
                    starts: scan.take_starts(),
                    region: scan.best,
                    read: scan.read,
                })
            }
            Outcome::Pause(at) => {
                position = at;
                if len.saturating_sub(at) < min_bytes.max(1) {
                    scan.pause_from = u64::MAX;
                } else {
                    if scan.list_on_top() {
                        let pieces = profile::phase(|| {
                            format!("pre-scan: {threads} pieces from {} MiB", at >> 20)
                        });
                        position = scan_groups(&mut scan, file, at, len, threads)?;
                        drop(pieces);
                    }
                    scan.pause_from = position.saturating_add(1);
                }
            }
            _ => return None,
        }
    }
}

/// The first likely batch boundary ([`CUT`]) within 1 MiB from `from`: the offset of its
/// `MARK`.
///
/// The window is read in two steps, its first [`CUT_FIRST_READ`] bytes and then the rest only
/// when they hold no cut (a batch of a trace is a few hundred KiB at most, so a cut is most
/// often in the first step): the first cut in the first step is the window's first cut, since
/// a cut that starts before it ends before it too. The cuts are found one after the other on
/// the scanning thread, before the pieces start.
fn find_cut(file: &File, from: u64) -> Option<u64> {
    let mut window = vec![0u8; CUT_FIRST_READ];
    let read = read_window(file, from, &mut window, 0)?;
    if let Some(at) = memchr::memmem::find(&window[..read], CUT) {
        return Some(from + at as u64 + 1);
    }
    if read < window.len() {
        return None;
    }
    window.resize(CUT_WINDOW, 0);
    let read = read_window(file, from, &mut window, read)?;
    let at = memchr::memmem::find(&window[..read], CUT)?;
    Some(from + at as u64 + 1)
}

/// Bytes [`find_cut`] searches for a cut from where it starts.
const CUT_WINDOW: usize = 1 << 20;
/// Bytes [`find_cut`] reads first.
const CUT_FIRST_READ: usize = 64 << 10;

/// Fills `window` from `read` on with the file's bytes from `from + read`, up to the window's
/// end or the file's; the bytes held then.
fn read_window(file: &File, from: u64, window: &mut [u8], read: usize) -> Option<usize> {
    let more = crate::parse::read_at::read_full_at(file, &mut window[read..], from + read as u64);
    more.ok().map(|more| read + more)
}

/// Scans the file from its start in `threads` pieces: the first on this thread with `scan`
/// (the whole-stream scan) up to the first cut, the others on threads of their own as
/// groups, joined as [`scan_groups`] joins them. `Stop` where the pickle ended in the first
/// piece, else `End` where the scan goes on; `None` where the pieces cannot make the
/// one-thread scan's plan.
fn scan_from_start(scan: &mut Scan, file: &File, len: u64, threads: usize) -> Option<Outcome> {
    let cuts = piece_cuts(file, 0, len, threads);
    let ends: Vec<u64> = cuts.iter().skip(1).copied().chain([u64::MAX]).collect();
    let (first, results) = std::thread::scope(|scope| {
        let handles = spawn_pieces(
            scope,
            file,
            len,
            cuts.iter().copied().zip(ends.iter().copied()).skip(1),
        );
        // The first piece, here, while the others are scanned (no pause: its end is the
        // first cut).
        scan.pause_from = u64::MAX;
        let mut input = Reader::new(FileAt::new(file, 0, u64::MAX), 0);
        let first = scan.run(&mut input, ends[0]);
        Some((first, join_pieces(handles)?))
    })?;
    match first {
        Outcome::End(end) => absorb_pieces(scan, results, &cuts[1..], end).map(Outcome::End),
        other => Some(other),
    }
}

/// Scans the file from `at` (just after a batch of the list on top of `scan`) in pieces on
/// `threads` threads and joins them into `scan`; returns where the scan goes on.
fn scan_groups(scan: &mut Scan, file: &File, at: u64, len: u64, threads: usize) -> Option<u64> {
    let cuts = piece_cuts(file, at, len, threads);
    let ends: Vec<u64> = cuts.iter().skip(1).copied().chain([u64::MAX]).collect();
    let results = std::thread::scope(|scope| {
        join_pieces(spawn_pieces(
            scope,
            file,
            len,
            cuts.iter().copied().zip(ends.iter().copied()),
        ))
    })?;
    absorb_pieces(scan, results, &cuts, at)
}

/// Where `at..len` is cut into `threads` pieces: `at`, then the first likely batch boundary
/// ([`find_cut`]) from each even share on, each past the one before.
fn piece_cuts(file: &File, at: u64, len: u64, threads: usize) -> Vec<u64> {
    let mut cuts = vec![at];
    for piece in 1..threads as u64 {
        let nominal = at + (len - at) / threads as u64 * piece;
        let last = cuts.last().copied().unwrap_or(at);
        if let Some(cut) = find_cut(file, nominal.max(last + 1)) {
            if cut > last {
                cuts.push(cut);
            }
        }
    }
    cuts
}

/// A piece's scan on its thread: the group it made and how it ended.
type PieceHandle<'scope> = std::io::Result<std::thread::ScopedJoinHandle<'scope, (Scan, Outcome)>>;

/// Scans each piece `start..end` as a group on a thread of its own.
fn spawn_pieces<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    file: &'env File,
    len: u64,
    pieces: impl Iterator<Item = (u64, u64)>,
) -> Vec<PieceHandle<'scope>> {
    pieces
        .map(|(start, end)| {
            std::thread::Builder::new()
                .name("oomdoc-scan".to_string())
                .spawn_scoped(scope, move || {
                    let mut group = Scan::new_group();
                    group.read_limit = len;
                    let mut input = Reader::new(FileAt::new(file, start, u64::MAX), start);
                    let outcome = group.run(&mut input, end);
                    (group, outcome)
                })
        })
        .collect()
}

/// The pieces' groups in order; `None` where a thread could not start or panicked.
fn join_pieces(handles: Vec<PieceHandle<'_>>) -> Option<Vec<(Scan, Outcome)>> {
    let mut results = Vec::with_capacity(handles.len());
    for handle in handles {
        results.push(handle.ok()?.join().ok()?);
    }
    Some(results)
}

/// Joins the pieces' groups (each starting at its `starts` offset) into `scan`, in order, the
/// scan having reached `position`; returns where the scan goes on: the end of the last piece
/// joined, or the first piece that did not start where the one before ended. `None` where a
/// group cannot join.
fn absorb_pieces(
    scan: &mut Scan,
    results: Vec<(Scan, Outcome)>,
    starts: &[u64],
    mut position: u64,
) -> Option<u64> {
    for ((group, outcome), &start) in results.into_iter().zip(starts) {
        if position != start || !scan.list_on_top() {
            // This piece did not start where the one before ended: scan on from there.
            return Some(position);
        }
        match outcome {
            Outcome::End(end) => {
                if !scan.absorb(group) {
                    return None;
                }
                position = end;
            }
            Outcome::Underflow(end) => {
                if !scan.absorb(group) {
                    return None;
                }
                return Some(end);
            }
            _ => return None,
        }
    }
    Some(position)
}

#[cfg(test)]
mod tests {
    use super::Plan;

    /// `count_read` counts what `for_each_read` calls back with, for every span of a few
    /// words of bits (edges inside words, on word boundaries, empty, past the bits' end).
    #[test]
    fn count_read_counts_each_read_slot() {
        use super::{count_read, for_each_read};
        let read = [0x8000_0000_0000_0001u64, u64::MAX, 0, 0x0123_4567_89ab_cdef];
        for base in 0..300 {
            for end in base..300 {
                let mut calls = 0usize;
                for_each_read(&read, base, end, |_| calls += 1);
                assert_eq!(count_read(&read, base, end), calls, "{base}..{end}");
            }
        }
        assert_eq!(count_read(&read, 10, 5), 0);
    }

    /// A trace-entry-shaped dict is skipped in one go: its memo starts (the dict's, a str's
    /// and a list's `MEMOIZE`s), every read in order (one-byte and four-byte indices, in a
    /// list and as single values) and the largest; a list item cut short by the window's
    /// end, or an opcode the shape never holds, declines it.
    #[test]
    fn skip_flat_dict_reads_every_memo_reference() {
        use super::{skip_flat_dict, FlatDict, FLAT_MOST_STARTS};
        // `}` at offset 40 was read; these bytes follow it.
        let mut bytes = vec![0x94, b'('];
        bytes.extend_from_slice(&[0x8c, 1, b'k', 0x94, b'K', 7]); // 'k': 7
        bytes.extend_from_slice(&[b'h', 3, b'J', 1, 0, 0, 0]); // memo[3]: 1
        bytes.extend_from_slice(&[0x8c, 1, b'f', 0x94, b']', 0x94, b'(']); // 'f': [
        bytes.extend_from_slice(&[b'j', 0x10, 0x27, 0, 0, b'h', 9, b'h', 200]);
        bytes.extend_from_slice(&[b'j', 0x20, 0x4e, 0, 0, b'e']); // ]
        bytes.extend_from_slice(&[b'h', 4, b']', b'h', 5, b'a', b'u']); // memo[4]: [memo[5]]
        let mut reads = Vec::new();
        let mut found = [0u32; FLAT_MOST_STARTS];
        let mut push = |index: u32| {
            reads.push(index);
            true
        };
        let skipped: Option<FlatDict> = skip_flat_dict(&bytes, 40, &mut push, &mut found);
        let skipped = skipped.expect("a flat dict");
        assert_eq!(skipped.len, bytes.len());
        assert_eq!(skipped.starts, 4);
        assert_eq!(&found[..4], &[40, 43, 56, 60]);
        assert_eq!(reads, vec![3, 10_000, 9, 200, 20_000, 4, 5]);
        assert_eq!(skipped.most_read, Some(20_000));
        let mut any = |_: u32| true;
        // The last list item cut short: declined, as is an opcode the shape never holds.
        let cut = bytes
            .iter()
            .position(|&byte| byte == 0x20)
            .expect("the second j");
        assert!(skip_flat_dict(&bytes[..cut + 1], 40, &mut any, &mut found).is_none());
        let mut odd = bytes.clone();
        odd[6] = b'c';
        assert!(skip_flat_dict(&odd, 40, &mut any, &mut found).is_none());
        // A read refused (past a limit): declined, no read after it looked at.
        let mut seen = Vec::new();
        let mut below = |index: u32| {
            seen.push(index);
            index < 10_000
        };
        assert!(skip_flat_dict(&bytes, 40, &mut below, &mut found).is_none());
        assert_eq!(seen, vec![3, 10_000]);
        // No reads: no largest.
        let plain = [b'(', 0x8c, 1, b'k', b'K', 1, b'u'];
        let mut none = |_: u32| -> bool { unreachable!("no read") };
        let skipped = skip_flat_dict(&plain, 0, &mut none, &mut found).expect("flat");
        assert_eq!(
            (skipped.len, skipped.starts, skipped.most_read),
            (7, 0, None)
        );
    }

    /// `find_cut` gives the first cut within the window from where it starts, wherever it
    /// lies against its first read: inside it, across its end, after it, or none at all.
    #[test]
    fn find_cut_finds_the_first_cut_in_the_window() {
        use super::{find_cut, CUT, CUT_FIRST_READ, CUT_WINDOW};
        use std::io::Write;
        let from = 100u64;
        for at in [
            0,
            17,
            CUT_FIRST_READ - CUT.len() - 1,
            CUT_FIRST_READ - CUT.len(),
            CUT_FIRST_READ - 2,
            CUT_FIRST_READ,
            CUT_FIRST_READ + 5000,
            CUT_WINDOW - CUT.len(),
            CUT_WINDOW - 2,
        ] {
            let mut bytes = vec![b'x'; from as usize + CUT_WINDOW + 64];
            let place = from as usize + at;
            bytes[place..place + CUT.len()].copy_from_slice(CUT);
            // A later cut, which must not be the one found.
            let later = (place + CUT.len() + 7).min(bytes.len() - CUT.len());
            bytes[later..later + CUT.len()].copy_from_slice(CUT);
            let mut file = tempfile::tempfile().expect("temp file");
            file.write_all(&bytes).expect("write");
            let expected = (at + CUT.len() <= CUT_WINDOW).then_some(from + at as u64 + 1);
            assert_eq!(find_cut(&file, from), expected, "cut at {at}");
        }
        let mut file = tempfile::tempfile().expect("temp file");
        file.write_all(&vec![b'x'; 3 * CUT_FIRST_READ])
            .expect("write");
        assert_eq!(find_cut(&file, 0), None);
        let mut short = tempfile::tempfile().expect("temp file");
        short.write_all(b"xxe(}\x94(yy").expect("write");
        assert_eq!(find_cut(&short, 0), Some(3));
    }

    /// `read_starts` over a table in parts gives what it gives over the same table in one
    /// part: parts of every length around a 64-slot word's edges, reads scattered over them.
    #[test]
    fn read_starts_in_parts_equal_one_table() {
        let lengths = [0usize, 1, 63, 64, 65, 2, 130, 0, 7];
        let total: usize = lengths.iter().sum();
        let flat: Vec<u32> = (0..total as u32).map(|slot| slot * 3 + 1).collect();
        let mut parts = Vec::new();
        let mut at = 0;
        for &length in &lengths {
            parts.push(flat[at..at + length].to_vec());
            at += length;
        }
        // Every third slot read, the first and last too, and bits past the table.
        let mut read = vec![0u64; total / 64 + 2];
        for index in (0..total).step_by(3).chain([0, total - 1, total + 5]) {
            read[index / 64] |= 1 << (index % 64);
        }
        let one = Plan {
            starts: vec![flat.clone()],
            region: None,
            read: read.clone(),
        };
        let split = Plan {
            starts: parts,
            region: None,
            read,
        };
        let expected: Vec<(u32, u32)> = (0..total)
            .filter(|index| index % 3 == 0 || *index == total - 1)
            .map(|index| (index as u32, flat[index]))
            .collect();
        assert_eq!(one.read_starts(), expected);
        assert_eq!(split.read_starts(), expected);
        assert_eq!(one, split);
        for threads in [1, 2, 3, 4, 9, 16] {
            assert_eq!(split.read_starts_on(threads), expected, "{threads} threads");
            assert_eq!(one.read_starts_on(threads), expected, "{threads} threads");
        }
    }

    /// A trace-like dict whose read lies at or past its limit (the dict's own slot, then a
    /// slot never stored) while the read table already holds that index's word: the dict
    /// skipped in one go is declined, and the scan makes the opcode-by-opcode scan's plan
    /// (read bits included), or none where that scan makes none.
    #[test]
    fn a_read_at_the_limit_within_the_table_makes_the_opcode_scans_plan() {
        use super::{scan, scan_file};
        use std::io::Write;
        let pickle = |read: u8| -> Vec<u8> {
            // [ (slot 0), {'k' (slot 2): memo[0]} (slot 1), {memo[2]: memo[read]} (slot 3)
            let mut bytes = vec![0x80, 4, b']', 0x94, b'('];
            bytes.extend_from_slice(&[b'}', 0x94, b'(', 0x8c, 1, b'k', 0x94, b'h', 0, b'u']);
            bytes.extend_from_slice(&[b'}', 0x94, b'(', b'h', 2, b'h', read, b'u']);
            bytes.extend_from_slice(b"e.");
            bytes
        };
        for (read, plan) in [(3u8, true), (4, false), (63, false), (64, false)] {
            let bytes = pickle(read);
            let mut file = tempfile::tempfile().expect("temp file");
            file.write_all(&bytes).expect("write");
            let flat = scan_file(&file, bytes.len() as u64, 1, u64::MAX);
            let opcodes = scan(&bytes[..]);
            assert_eq!(flat, opcodes, "read of slot {read}");
            assert_eq!(flat.is_some(), plan, "read of slot {read}");
            if let Some(flat) = flat {
                assert_eq!(flat.read, vec![0b1101], "read of slot {read}");
            }
        }
    }
}
