//! The input: any reader, through one reusable buffer, or chunks read ahead on another
//! thread ([`Prefetch`]).

use std::io::Read;
use std::sync::mpsc::{Receiver, Sender, SyncSender};

pub(super) struct Input<R> {
    reader: R,
    /// Chunks read ahead by another thread: then `reader` is not used.
    prefetch: Option<Prefetch>,
    pub(super) buffer: Vec<u8>,
    pub(super) position: usize,
    end: usize,
    /// Absolute offset of `buffer[0]`, wrapping: a chunk from [`Prefetch`] starts
    /// `HEADROOM` bytes before its data.
    base: u64,
    eof: bool,
}

/// Read size: above the 256 KiB of `source::file`'s `BufReader`, so reads bypass its copy.
const CHUNK: usize = 1024 * 1024;
/// Read size of [`Input::new`] and of the pre-scan (`scan::Reader`) unless `OOMDOC_READ_KIB`
/// says otherwise: each read's copy lands in a buffer of this size that the decoder then
/// reads, so a buffer that stays in a core's L2 cache (2 MiB on the hosts measured) saves
/// a trip to the shared cache or memory for every byte of the file.
const READ: usize = 256 * 1024;

/// The read size of [`Input::new`] and the pre-scan: `OOMDOC_READ_KIB` KiB where it is set
/// (a knob for measuring; 16 to 4096), else [`READ`].
pub(super) fn read_size() -> usize {
    static SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        std::env::var("OOMDOC_READ_KIB")
            .ok()
            .and_then(|value| value.trim().parse::<usize>().ok())
            .map_or(READ, |kib| kib.clamp(16, 4096) * 1024)
    })
}

/// First buffer of [`Input::small_in`]: twice the flat-dict reader's window.
const SMALL: usize = 8192;
/// Room before the data of a prefetched chunk, for the bytes left unread in the last one.
pub(super) const HEADROOM: usize = 64 * 1024;
/// Chunks read ahead, waiting for the decoder.
pub(super) const AHEAD: usize = 2;

/// Sizes of read-ahead chunks: `headroom` bytes, then up to `data` bytes read.
#[derive(Debug, Clone, Copy)]
pub(super) struct ChunkSize {
    pub(super) headroom: usize,
    pub(super) data: usize,
}

/// The sizes the decoder uses.
pub(super) const CHUNK_SIZE: ChunkSize = ChunkSize {
    headroom: HEADROOM,
    data: CHUNK,
};

/// One read-ahead chunk: data in `bytes[start..start + len]`.
pub(super) struct Chunk {
    pub(super) bytes: Vec<u8>,
    pub(super) start: usize,
    pub(super) len: usize,
}

/// The decoder's end of a reading thread ([`read_ahead`]): full chunks come in, used ones
/// go back to be filled again, so the file is never copied beyond these few chunks.
pub(super) struct Prefetch {
    pub(super) full: Receiver<std::io::Result<Chunk>>,
    pub(super) empty: Sender<Vec<u8>>,
}

/// The reading thread's loop: fills chunks from `reader` until its end, an error, or the
/// decoder hanging up (it stopped: done or failed).
pub(super) fn read_ahead<R: Read>(
    mut reader: R,
    size: ChunkSize,
    full: SyncSender<std::io::Result<Chunk>>,
    empty: Receiver<Vec<u8>>,
) {
    let start = size.headroom;
    loop {
        let mut bytes = empty.try_recv().unwrap_or_default();
        if bytes.len() != start + size.data {
            bytes = vec![0; start + size.data];
        }
        let mut len = 0;
        while len < size.data {
            match reader.read(&mut bytes[start + len..]) {
                Ok(0) => break,
                Ok(read) => len += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    // The bytes before the error first, as a reader read in place gives them.
                    if len > 0 {
                        let _ = full.send(Ok(Chunk { bytes, start, len }));
                    }
                    let _ = full.send(Err(error));
                    return;
                }
            }
        }
        if len == 0 || full.send(Ok(Chunk { bytes, start, len })).is_err() {
            return;
        }
    }
}

impl<R: Read> Input<R> {
    pub(super) fn new(reader: R) -> Self {
        Input {
            reader,
            prefetch: None,
            buffer: vec![0; read_size()],
            position: 0,
            end: 0,
            base: 0,
            eof: false,
        }
    }

    /// An input with a small buffer to start with (it doubles as needed): for decoding one
    /// memo value on its own (a frame or a frames list: ~100 bytes on average). One read
    /// covers the flat-dict reader's look-ahead from the value's first opcode. `buffer` is one
    /// used before, when it is at least that small size (its bytes are never read before they
    /// are written: only `buffer[..end]` holds input): a decoder of memo values on demand keeps
    /// a few, so each value does not allocate and zero a buffer of its own (96,630 values on a
    /// 60 MiB snapshot read on 14 threads: 14 % of the instructions were that zeroing).
    pub(super) fn small_in(reader: R, mut buffer: Vec<u8>) -> Self {
        if buffer.len() < SMALL {
            buffer = vec![0; SMALL];
        }
        Input {
            buffer,
            ..Input::new_empty(reader)
        }
    }

    /// The buffer, for [`Input::small_in`] to use again.
    pub(super) fn take_buffer(&mut self) -> Vec<u8> {
        self.end = 0;
        self.position = 0;
        std::mem::take(&mut self.buffer)
    }

    fn new_empty(reader: R) -> Self {
        Input {
            reader,
            prefetch: None,
            buffer: Vec::new(),
            position: 0,
            end: 0,
            base: 0,
            eof: false,
        }
    }

    /// An input fed by a reading thread; `reader` is never read.
    pub(super) fn prefetched(reader: R, prefetch: Prefetch) -> Self {
        Input {
            reader,
            prefetch: Some(prefetch),
            buffer: Vec::new(),
            position: 0,
            end: 0,
            base: 0,
            eof: false,
        }
    }

    /// Counts `n` more bytes as read before the data ahead (which starts at offset `n` past
    /// where it did).
    pub(super) fn shift(&mut self, n: u64) {
        self.base = self.base.wrapping_add(n);
    }

    pub(super) fn offset(&self) -> u64 {
        self.base.wrapping_add(self.position as u64)
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
        if self.prefetch.is_some() {
            return self.fill_prefetched(n);
        }
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
                // Doubling (a small input stays small), never past what `n` needs plus a
                // chunk; `end < n` here, so the buffer always grows.
                let grown = (self.buffer.len() * 2).max(SMALL);
                self.buffer.resize(grown.min(n.max(CHUNK) + CHUNK), 0);
            }
            match self.reader.read(&mut self.buffer[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(read) => self.end += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        let read = read_size();
        if self.buffer.len() > 4 * CHUNK && self.end <= read {
            // Give back the room a long string needed.
            self.buffer.truncate(read.max(self.end));
            self.buffer.shrink_to_fit();
        }
        Ok(true)
    }

    /// [`Input::fill_slow`] from read-ahead chunks: the bytes left unread move into the
    /// headroom of the next chunk, which becomes the buffer; only a payload longer than the
    /// headroom is gathered by copying chunks after it.
    fn fill_prefetched(&mut self, n: usize) -> std::io::Result<bool> {
        while self.end - self.position < n {
            if self.eof {
                return Ok(false);
            }
            let Some(prefetch) = &self.prefetch else {
                return Ok(false);
            };
            let chunk = match prefetch.full.recv() {
                Ok(chunk) => chunk?,
                Err(_) => {
                    self.eof = true;
                    continue;
                }
            };
            let Chunk {
                mut bytes,
                start: data,
                len,
            } = chunk;
            let tail = self.end - self.position;
            if tail <= data {
                let start = data - tail;
                bytes[start..data].copy_from_slice(&self.buffer[self.position..self.end]);
                let size = bytes.len();
                let old = std::mem::replace(&mut self.buffer, bytes);
                self.base = self
                    .base
                    .wrapping_add(self.position as u64)
                    .wrapping_sub(start as u64);
                self.position = start;
                self.end = data + len;
                if old.len() == size {
                    let _ = prefetch.empty.send(old);
                }
            } else {
                // A long payload: gather it in a buffer of its own, grown as bytes arrive.
                if self.position > 0 {
                    self.buffer.copy_within(self.position..self.end, 0);
                    self.base = self.base.wrapping_add(self.position as u64);
                    self.end -= self.position;
                    self.position = 0;
                }
                self.buffer.truncate(self.end);
                self.buffer.extend_from_slice(&bytes[data..data + len]);
                self.end += len;
                let _ = prefetch.empty.send(bytes);
            }
        }
        Ok(true)
    }
}
