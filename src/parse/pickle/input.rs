//! The input: any reader, through one reusable buffer.

use std::io::Read;

pub(super) struct Input<R> {
    reader: R,
    pub(super) buffer: Vec<u8>,
    pub(super) position: usize,
    end: usize,
    /// Absolute offset of `buffer[0]`.
    base: u64,
    eof: bool,
}

/// Read size: above the 256 KiB of `source::file`'s `BufReader`, so reads bypass its copy.
const CHUNK: usize = 1024 * 1024;

impl<R: Read> Input<R> {
    pub(super) fn new(reader: R) -> Self {
        Input {
            reader,
            buffer: vec![0; CHUNK],
            position: 0,
            end: 0,
            base: 0,
            eof: false,
        }
    }

    pub(super) fn offset(&self) -> u64 {
        self.base + self.position as u64
    }

    /// Makes at least `n` bytes available; `false` at end of input. The buffer grows only
    /// as bytes actually arrive, so a huge declared length cannot allocate by itself.
    #[inline]
    pub(super) fn fill(&mut self, n: usize) -> std::io::Result<bool> {
        if self.end - self.position >= n {
            return Ok(true);
        }
        self.fill_slow(n)
    }

    /// Makes up to `n` bytes available and returns how many are (fewer only at the end).
    #[inline]
    pub(super) fn fill_up_to(&mut self, n: usize) -> std::io::Result<usize> {
        if self.end - self.position < n {
            self.fill_slow(n)?;
        }
        Ok((self.end - self.position).min(n))
    }

    #[cold]
    pub(super) fn fill_slow(&mut self, n: usize) -> std::io::Result<bool> {
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
