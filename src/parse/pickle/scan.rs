//! The pre-scan of the parallel decoder: one pass over the pickle that skips every opcode by
//! its length and builds no value. It finds where each memo entry's value starts (so a later
//! reference can be decoded on its own) and the list filled by the most bytes of `MARK …
//! APPENDS` batches (a snapshot's trace), with the memo size at each batch, so that the batches
//! can be decoded on several threads. Anything it does not expect (an opcode a snapshot never
//! holds, an explicit memo index out of order, a file of 4 GiB or more, a truncated stream)
//! gives `None`: the sequential decoder then reads the file and gives its usual error.

use std::io::Read;

/// What the pre-scan found.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// Byte offset of the opcode that starts the value of each memo entry, by memo index.
    pub(super) starts: Vec<u32>,
    /// The list filled by the most bytes of batches, if one has two batches or more.
    pub(super) region: Option<Region>,
}

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

/// A value on the scan's stack: where it starts, and its list tracker (or [`NONE`]).
#[derive(Debug, Clone, Copy)]
struct Slot {
    start: u64,
    track: u32,
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

struct Reader<R> {
    reader: R,
    buffer: Vec<u8>,
    position: usize,
    end: usize,
    base: u64,
}

const BUFFER: usize = 1 << 20;

impl<R: Read> Reader<R> {
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

    fn byte(&mut self) -> Option<u8> {
        if !self.fill(1) {
            return None;
        }
        let byte = self.buffer[self.position];
        self.position += 1;
        Some(byte)
    }

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

struct Scan {
    stack: Vec<Slot>,
    marks: Vec<Mark>,
    tracked: Vec<Tracked>,
    free: Vec<u32>,
    starts: Vec<u32>,
    best: Option<Region>,
    best_bytes: u64,
}

impl Scan {
    fn push(&mut self, start: u64) {
        self.stack.push(Slot { start, track: NONE });
    }

    /// Drops the stack from `position` up, keeping the best list of batches seen.
    #[inline]
    fn truncate(&mut self, position: usize) {
        for index in position..self.stack.len() {
            let track = self.stack[index].track;
            if track != NONE {
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

    /// A batch `mark … APPENDS` ending at `end` went into the list at `target`.
    fn batch(&mut self, target: usize, mark: Mark, end: u64) {
        let memo = self.starts.len() as u32;
        let Some(slot) = self.stack.get_mut(target) else {
            return;
        };
        if slot.track == NONE {
            let tracked = Tracked {
                first: (mark.offset, mark.memo),
                more: Vec::new(),
                end,
                memo_end: memo,
                contiguous: true,
            };
            slot.track = match self.free.pop() {
                Some(index) => {
                    self.tracked[index as usize] = tracked;
                    index
                }
                None => {
                    self.tracked.push(tracked);
                    (self.tracked.len() - 1) as u32
                }
            };
            return;
        }
        if let Some(tracked) = self.tracked.get_mut(slot.track as usize) {
            if tracked.end != mark.offset {
                tracked.contiguous = false;
            }
            tracked.more.push((mark.offset, mark.memo));
            tracked.end = end;
            tracked.memo_end = memo;
        }
    }

    /// A single `APPEND` of the item starting at `item` went into the list at `target`.
    fn single(&mut self, target: usize, item: u64, end: u64) {
        let memo = self.starts.len() as u32;
        let Some(slot) = self.stack.get(target) else {
            return;
        };
        if let Some(tracked) = self.tracked.get_mut(slot.track as usize) {
            if tracked.end != item {
                tracked.contiguous = false;
            }
            tracked.end = end;
            tracked.memo_end = memo;
        }
    }

    fn pop_mark(&mut self) -> Option<Mark> {
        let mark = self.marks.pop()?;
        (mark.position <= self.stack.len()).then_some(mark)
    }
}

/// Scans one pickle from `reader` up to its `STOP`.
pub(super) fn scan<R: Read>(reader: R) -> Option<Plan> {
    let mut input = Reader {
        reader,
        buffer: vec![0; BUFFER],
        position: 0,
        end: 0,
        base: 0,
    };
    let mut scan = Scan {
        stack: Vec::new(),
        marks: Vec::new(),
        tracked: Vec::new(),
        free: Vec::new(),
        starts: Vec::new(),
        best: None,
        best_bytes: 0,
    };
    loop {
        let offset = input.offset();
        if offset >= u64::from(u32::MAX) {
            return None;
        }
        let op = input.byte()?;
        match op {
            0x80 => {
                input.byte()?;
            }
            0x95 => {
                input.le(8)?;
            }
            b'.' => {
                if scan.stack.len() != 1 || !scan.marks.is_empty() {
                    return None;
                }
                scan.truncate(0);
                return Some(Plan {
                    starts: scan.starts,
                    region: scan.best,
                });
            }
            b'(' => scan.marks.push(Mark {
                position: scan.stack.len(),
                offset,
                memo: scan.starts.len() as u32,
            }),
            b'0' => {
                let top = scan.stack.len().checked_sub(1)?;
                if scan.marks.last().is_some_and(|mark| mark.position > top) {
                    return None;
                }
                scan.truncate(top);
            }
            b'1' => {
                let mark = scan.pop_mark()?;
                scan.truncate(mark.position);
            }
            b'}' | b']' | b')' | b'N' | 0x88 | 0x89 => scan.push(offset),
            b'd' | b'l' | b't' => {
                let mark = scan.pop_mark()?;
                scan.truncate(mark.position);
                scan.push(mark.offset);
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                let first = scan.stack.len().checked_sub(n)?;
                if scan.marks.last().is_some_and(|mark| mark.position > first) {
                    return None;
                }
                let start = scan.stack[first].start;
                scan.truncate(first);
                scan.push(start);
            }
            b'a' => {
                let item = scan.stack.len().checked_sub(1)?;
                if item == 0 || scan.marks.last().is_some_and(|mark| mark.position > item) {
                    return None;
                }
                let start = scan.stack[item].start;
                scan.truncate(item);
                scan.single(item - 1, start, offset + 1);
            }
            b's' => {
                let key = scan.stack.len().checked_sub(2)?;
                if key == 0 || scan.marks.last().is_some_and(|mark| mark.position > key) {
                    return None;
                }
                scan.truncate(key);
            }
            b'e' | b'u' => {
                let mark = scan.pop_mark()?;
                if mark.position == 0 {
                    return None;
                }
                scan.truncate(mark.position);
                if op == b'e' {
                    scan.batch(mark.position - 1, mark, offset + 1);
                }
            }
            0x94 | b'q' | b'r' => {
                if op == b'q' {
                    if input.le(1)? != scan.starts.len() as u64 {
                        return None;
                    }
                } else if op == b'r' && input.le(4)? != scan.starts.len() as u64 {
                    return None;
                }
                let top = scan.stack.last()?;
                if scan.starts.len() >= u32::MAX as usize - 1 {
                    return None;
                }
                scan.starts.push(top.start as u32);
            }
            b'h' | b'K' => {
                input.le(1)?;
                scan.push(offset);
            }
            b'M' => {
                input.le(2)?;
                scan.push(offset);
            }
            b'j' | b'J' => {
                input.le(4)?;
                scan.push(offset);
            }
            b'G' => {
                input.le(8)?;
                scan.push(offset);
            }
            0x8a | 0x8c | b'C' => {
                let n = input.le(1)?;
                if !input.skip(n) {
                    return None;
                }
                scan.push(offset);
            }
            0x8b | b'X' | b'B' => {
                let n = input.le(4)?;
                if !input.skip(n) {
                    return None;
                }
                scan.push(offset);
            }
            0x8d | 0x8e | 0x96 => {
                let n = input.le(8)?;
                if !input.skip(n) {
                    return None;
                }
                scan.push(offset);
            }
            _ => return None,
        }
    }
}
