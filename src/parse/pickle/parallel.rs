//! Decoding one large pickle file on several threads.
//!
//! A pre-scan (`scan`) finds where every memo value starts and the list filled by the most
//! bytes of `MARK … APPENDS` batches (a snapshot's trace). Its batches are split into chunks
//! at batch boundaries and each chunk is decoded on a thread of its own, into a fold of its
//! own, starting with the memo size the whole stream has there: a reference to a memo slot
//! made before the chunk decodes that value from its own bytes ([`Resolver`]), once per
//! thread, unless another thread's fold already shared what it made of it ([`SharedValues`]:
//! a snapshot's frames and stacks, which the fold takes up by content). A chunk is cut into
//! parts, and a thread out of work takes the back half of the parts another thread has not
//! reached yet, as a run of its own ([`Runs`]). Meanwhile this thread decodes the rest of the
//! file (and then takes parts too); where the list's batches start it waits for the runs and
//! the fold joins them in order ([`Merge`]), so the result is what the sequential decoder
//! gives. The decoder stays data-only: every chunk, and every
//! value decoded on demand, goes through the same opcode loop and limits.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fs::File;
use std::hash::BuildHasherDefault;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::decoder::{Decoder, Scratch, Step};
use super::input::Input;
use super::memo::{IndexHasher, ReadSlots};
use super::scan::{self, Region};
use super::{profile, Limits, Merge, Shared, Value};

/// Reads `file` from `position` up to `end` with positioned reads (no shared cursor, so
/// threads read the one file at once).
pub(super) struct FileAt<'a> {
    file: &'a File,
    position: u64,
    end: u64,
}

impl<'a> FileAt<'a> {
    pub(super) fn new(file: &'a File, position: u64, end: u64) -> Self {
        FileAt {
            file,
            position,
            end,
        }
    }
}

impl Read for FileAt<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let left = self.end.saturating_sub(self.position);
        let want = (buffer.len() as u64).min(left) as usize;
        if want == 0 {
            return Ok(0);
        }
        let read = self.file.read_at(&mut buffer[..want], self.position)?;
        self.position += read as u64;
        Ok(read)
    }
}

/// Bytes of a [`Blocks`] block.
const BLOCK: u64 = 64 << 10;

/// Bytes one read of a cached block copies at most: a memo value decoded on demand is ~100
/// bytes, and its input asks for more only where it needs more.
const PIECE: usize = 1024;

/// The blocks of the file that memo values decoded on demand lie in, each read once and
/// shared by every thread. Every chunk decodes again the values it refers to that other
/// threads made (a snapshot's frames: in a 577 MiB file each of 14 chunks decoded ~6,900,
/// nearly all from the file's first 2 MiB, each with a read of its own), so the same few
/// blocks are read over and over. At most a sixty-fourth of the file (at least 4 MiB) is
/// kept; past that, values are read from the file as before.
pub(super) struct Blocks {
    file: Arc<File>,
    blocks: Vec<OnceLock<Option<Box<[u8]>>>>,
    /// Bytes that may still be kept.
    budget: AtomicU64,
}

impl Blocks {
    fn new(file: Arc<File>, len: u64) -> Arc<Self> {
        Self::with_budget(file, len, (len / 64).max(4 << 20))
    }

    fn with_budget(file: Arc<File>, len: u64, budget: u64) -> Arc<Self> {
        let count = usize::try_from(len.div_ceil(BLOCK)).unwrap_or(0);
        let mut blocks = Vec::new();
        blocks.resize_with(count, OnceLock::new);
        Arc::new(Blocks {
            file,
            blocks,
            budget: AtomicU64::new(budget),
        })
    }

    /// Block `index` of the file, read on first use; `None` past the file's end, where the
    /// budget is spent, or where the read failed (the caller then reads the file itself and
    /// meets the error there).
    fn block(&self, index: usize) -> Option<&[u8]> {
        self.blocks
            .get(index)?
            .get_or_init(|| {
                self.budget
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                        left.checked_sub(BLOCK)
                    })
                    .ok()?;
                let start = index as u64 * BLOCK;
                let mut bytes = Vec::with_capacity(BLOCK as usize);
                FileAt::new(&self.file, start, start + BLOCK)
                    .read_to_end(&mut bytes)
                    .ok()?;
                Some(bytes.into_boxed_slice())
            })
            .as_deref()
    }
}

/// Reads the file from `position` on through [`Blocks`] (the file itself where a block is
/// not kept).
pub(super) struct BlocksAt<'a> {
    blocks: &'a Blocks,
    position: u64,
}

impl Read for BlocksAt<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let index = usize::try_from(self.position / BLOCK).unwrap_or(usize::MAX);
        let read = match self.blocks.block(index) {
            Some(block) => {
                let rest = block
                    .get((self.position % BLOCK) as usize..)
                    .unwrap_or_default();
                let n = rest.len().min(buffer.len()).min(PIECE);
                buffer[..n].copy_from_slice(&rest[..n]);
                n
            }
            None => self.blocks.file.read_at(buffer, self.position)?,
        };
        self.position += read as u64;
        Ok(read)
    }
}

/// Memo values decoded on demand, as their decoders' folds shared them ([`Fold::share`]),
/// by memo index, for every thread: a chunk meets again the values the others meet (a
/// snapshot's frames: each of 14 chunks of a 577 MiB file decoded ~6,900 of them, the same
/// ones), and a fold takes one up ([`Fold::adopt`]) for much less than decoding it.
///
/// [`Fold::share`]: super::Fold::share
/// [`Fold::adopt`]: super::Fold::adopt
pub(super) struct SharedValues {
    shards: Vec<Mutex<HashMap<usize, Shared, BuildHasherDefault<IndexHasher>>>>,
}

/// Locks of a [`SharedValues`] (a power of two).
const SHARED_SHARDS: usize = 64;

impl SharedValues {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(SharedValues {
            shards: (0..SHARED_SHARDS)
                .map(|_| Mutex::new(HashMap::default()))
                .collect(),
        })
    }

    fn shard(
        &self,
        index: usize,
    ) -> Option<&Mutex<HashMap<usize, Shared, BuildHasherDefault<IndexHasher>>>> {
        let mixed = (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.shards.get((mixed >> 58) as usize % SHARED_SHARDS)
    }

    /// What a fold shared for memo slot `index`, if one did.
    fn get(&self, index: usize) -> Option<Shared> {
        let shard = self.shard(index)?.lock().ok()?;
        shard.get(&index).cloned()
    }

    /// Whether a fold shared memo slot `index` already.
    fn has(&self, index: usize) -> bool {
        self.shard(index)
            .and_then(|shard| shard.lock().ok())
            .is_some_and(|shard| shard.contains_key(&index))
    }

    /// Keeps `shared` for memo slot `index` (the first one kept stays).
    fn publish(&self, index: usize, shared: Shared) {
        if let Some(mut shard) = self.shard(index).and_then(|shard| shard.lock().ok()) {
            shard.entry(index).or_insert(shared);
        }
    }
}

/// What a decoder needs to decode memo values another thread made: the file (through the
/// shared [`Blocks`]), where each memo value that is read somewhere starts (`(index,
/// offset)` by index: the pre-scan's table of every slot is dropped once this is made), the
/// values decoded so far on this thread, and those every thread's folds shared.
pub(super) struct Resolver {
    blocks: Arc<Blocks>,
    starts: Arc<Vec<(u32, u32)>>,
    shared: Arc<SharedValues>,
    cache: RefCell<HashMap<usize, Value, BuildHasherDefault<IndexHasher>>>,
    depth: Cell<u32>,
    /// Input buffers of values decoded on demand, to use again (one a level of nesting).
    buffers: RefCell<Vec<Vec<u8>>>,
    /// Containers of the decoders of values decoded on demand, to use again (the same).
    scratches: RefCell<Vec<Scratch>>,
}

/// Most buffers a [`Resolver`] keeps, and the largest it keeps.
const KEPT_BUFFERS: usize = 8;
const KEPT_BUFFER_BYTES: usize = 64 << 10;

impl Resolver {
    fn new(
        blocks: Arc<Blocks>,
        starts: Arc<Vec<(u32, u32)>>,
        shared: Arc<SharedValues>,
    ) -> Rc<Self> {
        Rc::new(Resolver {
            blocks,
            starts,
            shared,
            cache: RefCell::new(HashMap::default()),
            depth: Cell::new(0),
            buffers: RefCell::new(Vec::new()),
            scratches: RefCell::new(Vec::new()),
        })
    }

    /// A decoder's containers used before, empty (new ones when none is kept).
    pub(super) fn take_scratch(&self) -> Scratch {
        self.scratches.borrow_mut().pop().unwrap_or_default()
    }

    /// Keeps `scratch` (emptied) for the next value, unless enough are kept or it grew large.
    pub(super) fn keep_scratch(&self, scratch: Scratch) {
        let mut scratches = self.scratches.borrow_mut();
        if scratches.len() < KEPT_BUFFERS && scratch.small() {
            scratches.push(scratch);
        }
    }

    /// A buffer used before for a value's input (empty when none is kept).
    pub(super) fn take_buffer(&self) -> Vec<u8> {
        self.buffers.borrow_mut().pop().unwrap_or_default()
    }

    /// Keeps `buffer` for the next value, unless enough are kept or it grew large (a long
    /// string's).
    pub(super) fn keep_buffer(&self, buffer: Vec<u8>) {
        let mut buffers = self.buffers.borrow_mut();
        if buffers.len() < KEPT_BUFFERS && buffer.len() <= KEPT_BUFFER_BYTES {
            buffers.push(buffer);
        }
    }

    /// The file from `position` on.
    pub(super) fn reader_at(&self, position: u64) -> BlocksAt<'_> {
        BlocksAt {
            blocks: &self.blocks,
            position,
        }
    }

    pub(super) fn start(&self, index: usize) -> Option<u64> {
        let index = u32::try_from(index).ok()?;
        let at = self
            .starts
            .binary_search_by_key(&index, |&(slot, _)| slot)
            .ok()?;
        Some(u64::from(self.starts[at].1))
    }

    pub(super) fn cached(&self, index: usize) -> Option<Value> {
        self.cache.borrow().get(&index).cloned()
    }

    pub(super) fn store(&self, index: usize, value: Value) {
        self.cache.borrow_mut().insert(index, value);
    }

    /// What another thread's fold shared for memo slot `index` ([`SharedValues`]).
    pub(super) fn shared(&self, index: usize) -> Option<Shared> {
        self.shared.get(index)
    }

    /// Shares what `share` gives for memo slot `index`, unless a fold shared it already.
    pub(super) fn publish(&self, index: usize, share: impl FnOnce() -> Option<Shared>) {
        if self.shared.has(index) {
            return;
        }
        if let Some(shared) = share() {
            self.shared.publish(index, shared);
        }
    }

    /// The memo slots made by another decoder that this thread decoded on demand.
    fn resolved(&self) -> Vec<usize> {
        self.cache.borrow().keys().copied().collect()
    }

    /// One more level of values decoded on demand; returns the new depth.
    pub(super) fn enter(&self) -> u32 {
        self.depth.set(self.depth.get() + 1);
        self.depth.get()
    }

    pub(super) fn leave(&self) {
        self.depth.set(self.depth.get().saturating_sub(1));
    }
}

/// How the parallel decoder splits its work.
#[derive(Debug, Clone, Copy)]
pub struct Parallel {
    /// Threads decoding chunks of the list (this thread decodes the rest meanwhile).
    pub threads: usize,
    /// Chunks the list is cut into (at least `threads`; more balance uneven chunks).
    pub chunks: usize,
    /// The pre-scan goes parallel where at least this many bytes of the file are left.
    pub scan_split_bytes: u64,
}

/// What [`Parallel::scan_split_bytes`] usually is.
pub const SCAN_SPLIT_BYTES: u64 = 16 << 20;

/// The chunks of `region`: `(start, end, memo size at start, batches)`, cut at batch
/// boundaries into at most `chunks` pieces of about equal bytes.
fn chunks_of(region: &Region, chunks: usize) -> Vec<(u64, u64, u32, usize)> {
    let start = region.start();
    let total = region.end.saturating_sub(start).max(1);
    let chunks = chunks.max(1) as u64;
    let mut out: Vec<(u64, u64, u32, usize)> = Vec::new();
    for &(offset, memo) in &region.batches {
        let due = (offset - start) as u128 * chunks as u128 / total as u128;
        if out.is_empty() || due >= out.len() as u128 {
            if let Some(last) = out.last_mut() {
                last.1 = offset;
            }
            out.push((offset, region.end, memo, 0));
        }
        if let Some(last) = out.last_mut() {
            last.3 += 1;
        }
    }
    out
}

/// Decodes the pickle in `file` on several threads, when the pre-scan finds a list to split
/// (see the module's note); `None` when it does not, or when anything failed: the caller
/// then decodes the file sequentially, which gives the same value or the usual error.
pub fn decode_file<F: Merge, M: Fn() -> F + Sync>(
    file: &File,
    limits: Limits,
    parallel: Parallel,
    make: M,
) -> Option<(Value, F)> {
    let len = file.metadata().ok()?.len();
    let scanning = profile::phase(|| "pre-scan".to_string());
    // The pre-scan's pieces run while this thread only waits for them: one piece more than
    // the decoding threads.
    let pieces = if parallel.threads > 1 {
        parallel.threads + 1
    } else {
        parallel.threads
    };
    let plan = scan::scan_file(file, len, pieces, parallel.scan_split_bytes)?;
    drop(scanning);
    let planning = profile::phase(|| "main: plan the chunks".to_string());
    let starts = Arc::new(plan.read_starts_on(parallel.threads));
    drop(planning);
    let planning = profile::phase(|| "main: plan the runs".to_string());
    let region = plan.region?;
    // The table of every memo start (tens of MB for a large trace) is freed on a thread of
    // its own, beside the chunks (here it held up their start).
    // Where no thread can be made, the table is dropped here with the closure.
    let all_starts = plan.starts;
    let _ = std::thread::Builder::new()
        .name("oomdoc-free".to_string())
        .spawn(move || drop(all_starts));
    // The chunks keep only the memo slots that are read somewhere (None: keep them all).
    let read = ReadSlots::new(plan.read).map(Arc::new);
    let shared = Arc::new(file.try_clone().ok()?);
    let blocks = Blocks::new(Arc::clone(&shared), len);
    let values = SharedValues::new();
    // The list is cut into parts, in ranges of consecutive parts (one a chunk); a thread
    // decodes a range's parts one after another with one decoder and fold, and a thread out
    // of work takes the back half of the range with the most parts left (see [`Runs`]).
    let ranges = chunk_count(&parallel);
    let chunks = chunks_of(&region, ranges.saturating_mul(split_count()));
    let runs = Runs::new(&chunks, ranges, region.memo_end);
    let failed = AtomicBool::new(false);
    drop(planning);
    let decode_run = |first: usize| -> Option<RunPart<F>> {
        let (start, end, memo, _) = *chunks.get(first)?;
        let (back, batches, bytes, memo_end) = runs.extent(first);
        let timing = profile::phase(|| {
            format!(
                "run from part {first} ({} MiB, up to {} parts) decode",
                bytes >> 20,
                back - first
            )
        });
        let mut fold = make();
        fold.expect_items(expected_items(batches, bytes));
        let span = Span {
            start,
            end: start.saturating_add(bytes),
            memo,
            slots: memo_end.saturating_sub(memo),
        };
        let reader = RunReader {
            file: &shared,
            runs: &runs,
            first,
            next: first + 1,
            position: start,
            end,
            stopped: false,
        };
        let part = decode_chunk(
            reader,
            (&blocks, &values),
            &starts,
            read.clone(),
            span,
            limits,
            fold,
        );
        drop(timing);
        let last = runs.claimed_end(first);
        part.map(|part| (first, last, part))
    };
    // Runs of this thread: ranges from the queue, then halves of others' ranges.
    let work = |own: bool| -> Option<Vec<RunPart<F>>> {
        let mut done = Vec::new();
        loop {
            if failed.load(Ordering::Relaxed) {
                return None;
            }
            let first = match own.then(|| runs.take_range()).flatten() {
                Some(first) => first,
                None => match runs.steal() {
                    Some(first) => first,
                    None => return Some(done),
                },
            };
            match decode_run(first) {
                Some(run) => done.push(run),
                None => {
                    failed.store(true, Ordering::Relaxed);
                    return None;
                }
            }
        }
    };
    let result = std::thread::scope(|scope| {
        let mut workers = Vec::new();
        for _ in 0..parallel.threads.min(runs.ranges()).max(1) {
            let work = &work;
            let spawned = std::thread::Builder::new()
                .name("oomdoc-decode".to_string())
                .spawn_scoped(scope, move || work(true));
            match spawned {
                Ok(handle) => workers.push(handle),
                Err(_) => failed.store(true, Ordering::Relaxed),
            }
        }
        let mut fold = make();
        let resolver = Resolver::new(
            Arc::clone(&blocks),
            Arc::clone(&starts),
            Arc::clone(&values),
        );
        let reader = FileAt::new(&shared, 0, region.start()).chain(FileAt::new(
            &shared,
            region.end,
            u64::MAX,
        ));
        let mut decoder = Decoder::new(Input::new(reader), limits, &mut fold);
        decoder.resolver = Some(resolver);
        decoder.splice_at = region.start();
        let head = profile::phase(|| "main: decode before the list".to_string());
        match decoder.run_until_splice().ok()? {
            Step::Splice => {}
            Step::Done(_) => return None,
        }
        drop(head);
        let preparing = profile::phase(|| "main: read ahead, chunks decoding".to_string());
        decoder.prepare_fold(read.as_deref());
        drop(preparing);
        // This thread takes halves of the ranges left too, then the runs, in order, once
        // every thread is done.
        let helping = profile::phase(|| "main: decode parts of ranges left".to_string());
        let mut parts = work(false)?;
        drop(helping);
        let waiting = profile::phase(|| "main: wait for the chunks".to_string());
        for worker in workers {
            parts.extend(worker.join().ok()??);
        }
        drop(waiting);
        if failed.load(Ordering::Relaxed) {
            return None;
        }
        // The runs must cover every part once, in order.
        parts.sort_by_key(|&(first, _, _)| first);
        let mut covered = 0;
        for &(first, last, _) in &parts {
            if first != covered || last <= first {
                return None;
            }
            covered = last;
        }
        if covered != chunks.len() {
            return None;
        }
        // A chunk that referred to a container still being filled where the list is (the
        // list itself or a dict around it: a damaged or recursive file) read a value the
        // sequential decoder never gives: it freezes the container at the reference and then
        // refuses to fill it. Declined, so the sequential decoder reads the file and says so.
        if parts
            .iter()
            .flat_map(|(_, _, (_, resolved))| resolved)
            .any(|&slot| decoder.memo_is_open(slot))
        {
            return None;
        }
        let parts = parts.into_iter().map(|(_, _, (part, _))| part).collect();
        let merging = profile::phase(|| "main: merge the chunks".to_string());
        decoder
            .splice(
                parts,
                region.batches.first()?.1,
                region.memo_end,
                region.end - region.start(),
            )
            .ok()?;
        drop(merging);
        let tail = profile::phase(|| "main: decode after the list".to_string());
        let value = match decoder.run_until_splice().ok()? {
            Step::Done(value) => value,
            Step::Splice => return None,
        };
        drop(tail);
        if decoder.stand_in_misplaced(&value) {
            return None;
        }
        let dropping = profile::phase(|| "main: drop the decoder".to_string());
        drop(decoder);
        drop(dropping);
        Some((value, fold))
    });
    // What the chunks shared (the cached blocks of the file, the values the folds shared, the
    // table of memo starts: ~12 MiB in a 577 MiB file, many small allocations) is freed on a
    // thread of its own: here it held up the snapshot's build and the analysis (4-5 ms on
    // the lent hosts, between "main: drop the decoder" and "build the snapshot"). Where no
    // thread can be made, it is dropped here with the closure.
    let shared_state = (blocks, values, starts, read, runs, chunks, region, shared);
    let _ = std::thread::Builder::new()
        .name("oomdoc-free".to_string())
        .spawn(move || drop(shared_state));
    result
}

/// Chunks the list is cut into: `OOMDOC_CHUNKS` where it is set (a knob for measuring on a
/// machine with many cores: more chunks than threads balance chunks that decode at uneven
/// speeds, at the cost of more memo values decoded on demand), else what the caller asked;
/// never fewer than the threads.
fn chunk_count(parallel: &Parallel) -> usize {
    std::env::var("OOMDOC_CHUNKS")
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|&chunks| chunks > 0)
        .unwrap_or(parallel.chunks)
        .min(MAX_CHUNKS)
        .max(parallel.threads)
}

/// Most chunks [`chunk_count`] takes from the environment.
const MAX_CHUNKS: usize = 1024;

/// How many items a chunk of `batches` batches in `bytes` bytes likely holds: Python's
/// pickler writes 1,000 items a batch; never more than one item per 64 bytes, so a file of
/// small batches cannot make a chunk reserve more than a fraction of its size.
fn expected_items(batches: usize, bytes: u64) -> usize {
    batches
        .saturating_mul(1000)
        .min(usize::try_from(bytes / 64).unwrap_or(usize::MAX))
}

/// A run's start: its bytes from `start` (the first part's, which ends at `end`), the memo
/// size `memo` at `start`, and the memo slots its range makes (`slots`, by the pre-scan).
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u64,
    end: u64,
    memo: u32,
    slots: u32,
}

/// What a run hands back: its first part, the part after its last, its fold's part and the
/// memo slots made before it that it decoded on demand.
type RunPart<F> = (usize, usize, (<F as Merge>::Part, Vec<usize>));

/// Parts a range (a chunk) is cut into: `OOMDOC_SPLIT` where it is set (1: a chunk is
/// decoded whole by one thread, as before parts were taken), else [`SPLIT`].
fn split_count() -> usize {
    std::env::var("OOMDOC_SPLIT")
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|&split| split > 0)
        .unwrap_or(SPLIT)
        .min(MAX_SPLIT)
}

/// Parts a range is cut into by default. On the 16-core hosts chunks of equal bytes took
/// from 0.083 to 0.150 s of CPU each with no wait for a core (their threads run at unlike
/// speeds there; pinned to one core of the 2-core VM they cost the same), and every later
/// step waited for the slowest. A thread out of work takes the back half of the range with
/// the most parts left, where two or more are left: a run of its own, whose new fold first
/// fills again with the frames and stacks it meets (~8 ms of CPU on the VM for the 268 MB
/// varied file).
const SPLIT: usize = 8;

/// Most parts a range is cut into from the environment.
const MAX_SPLIT: usize = 64;

/// Packs a range's `(front, back)`: its parts `front..back` are not taken yet.
fn pack(front: usize, back: usize) -> u64 {
    (front as u64) << 32 | back as u64
}

fn unpack(state: u64) -> (usize, usize) {
    ((state >> 32) as usize, (state & 0xffff_ffff) as usize)
}

/// The parts of the list and who decodes them. Each run (a decoder and its fold going
/// through consecutive parts) has a state at its first part's index: `(front, back)`, the
/// parts it has not taken yet. Its own thread takes the front one by one as its decoder
/// reads on ([`RunReader`]); a thread out of work takes the back half of the run with the
/// most parts left, as a run of its own. Every part is taken once, by one compare-exchange,
/// and the runs, sorted by their first part, cover the parts in order.
struct Runs {
    states: Vec<AtomicU64>,
    /// Each range's first part, and the next range to hand out.
    ranges: Vec<usize>,
    next_range: AtomicUsize,
    /// For each part: its start, batches and the memo size at its start, then the list's end.
    starts: Vec<(u64, usize, u32)>,
}

impl Runs {
    fn new(parts: &[(u64, u64, u32, usize)], ranges: usize, memo_end: u32) -> Self {
        let count = parts.len();
        let ranges = ranges.clamp(1, count.max(1));
        let firsts: Vec<usize> = (0..ranges)
            .map(|range| range * count / ranges)
            .filter(|&first| first < count)
            .collect();
        let states: Vec<AtomicU64> = (0..count).map(|_| AtomicU64::new(0)).collect();
        for (at, &first) in firsts.iter().enumerate() {
            let back = firsts.get(at + 1).copied().unwrap_or(count);
            if let Some(state) = states.get(first) {
                state.store(pack(first, back), Ordering::Relaxed);
            }
        }
        let mut starts: Vec<(u64, usize, u32)> = parts
            .iter()
            .map(|&(start, _, memo, batches)| (start, batches, memo))
            .collect();
        let end = parts.last().map_or(0, |part| part.1);
        starts.push((end, 0, memo_end));
        Runs {
            states,
            ranges: firsts,
            next_range: AtomicUsize::new(0),
            starts,
        }
    }

    fn ranges(&self) -> usize {
        self.ranges.len()
    }

    /// Takes part `part` as the next of the run from `first` (its own thread's).
    fn take_next(&self, first: usize, part: usize) -> bool {
        let Some(state) = self.states.get(first) else {
            return false;
        };
        let mut current = state.load(Ordering::Acquire);
        loop {
            let (front, back) = unpack(current);
            if front != part || front >= back {
                return false;
            }
            match state.compare_exchange_weak(
                current,
                pack(front + 1, back),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => current = now,
            }
        }
    }

    /// The first part of the next range not handed out yet, taken.
    fn take_range(&self) -> Option<usize> {
        loop {
            let index = self.next_range.fetch_add(1, Ordering::Relaxed);
            let first = *self.ranges.get(index)?;
            if self.take_next(first, first) {
                return Some(first);
            }
        }
    }

    /// The back half of the run with the most parts left (two or more), as a run of its own
    /// whose first part is taken; `None` when no run has two parts left.
    fn steal(&self) -> Option<usize> {
        loop {
            let (mut best, mut most) = (None, 1);
            for (at, state) in self.states.iter().enumerate() {
                let current = state.load(Ordering::Acquire);
                let (front, back) = unpack(current);
                let left = back.saturating_sub(front);
                if left > most {
                    (best, most) = (Some((at, current)), left);
                }
            }
            let (at, current) = best?;
            let (front, back) = unpack(current);
            let middle = back - (back - front) / 2;
            let state = self.states.get(at)?;
            if state
                .compare_exchange(
                    current,
                    pack(front, middle),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
            {
                // Parts `middle..back` are this thread's: a run from `middle`, its first taken.
                if let Some(state) = self.states.get(middle) {
                    state.store(pack(middle + 1, back), Ordering::Release);
                }
                return Some(middle);
            }
        }
    }

    /// The parts the run from `first` may still reach (those up to its back now): the part
    /// after its last, their batches and bytes, and the memo size where they end.
    fn extent(&self, first: usize) -> (usize, usize, u64, u32) {
        let back = self
            .states
            .get(first)
            .map_or(first + 1, |state| unpack(state.load(Ordering::Acquire)).1)
            .clamp(
                first + 1,
                self.starts.len().saturating_sub(1).max(first + 1),
            );
        let batches = self
            .starts
            .get(first..back)
            .map_or(0, |parts| parts.iter().map(|part| part.1).sum());
        let (start, _, _) = self.starts.get(first).copied().unwrap_or_default();
        let (end, _, memo_end) = self.starts.get(back).copied().unwrap_or_default();
        (back, batches, end.saturating_sub(start), memo_end)
    }

    /// The part after the last one the run from `first` took (once its decoder stopped).
    fn claimed_end(&self, first: usize) -> usize {
        self.states
            .get(first)
            .map_or(first, |state| unpack(state.load(Ordering::Acquire)).0)
    }

    /// Where part `part` ends (the next one's start).
    fn part_end(&self, part: usize) -> Option<u64> {
        self.starts.get(part + 1).map(|&(end, _, _)| end)
    }
}

/// Reads a run's parts from the file, taking the next part of its range each time it
/// reaches the end of the last one taken, and a `STOP` once none is left to take.
struct RunReader<'a> {
    file: &'a File,
    runs: &'a Runs,
    first: usize,
    /// The part to take next.
    next: usize,
    position: u64,
    /// Where the parts taken end.
    end: u64,
    stopped: bool,
}

impl Read for RunReader<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if buffer.is_empty() {
            return Ok(0);
        }
        if self.position >= self.end {
            if self.stopped {
                return Ok(0);
            }
            match self.runs.part_end(self.next) {
                Some(end) if self.runs.take_next(self.first, self.next) => {
                    self.next += 1;
                    self.end = end;
                }
                _ => {
                    self.stopped = true;
                    buffer[0] = b'.';
                    return Ok(1);
                }
            }
        }
        let want = (buffer.len() as u64).min(self.end - self.position) as usize;
        let read = self.file.read_at(&mut buffer[..want], self.position)?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.position += read as u64;
        Ok(read)
    }
}

/// Decodes the batches of a run (`reader`, from `span`) into `fold`'s part.
fn decode_chunk<F: Merge>(
    reader: RunReader<'_>,
    (blocks, values): (&Arc<Blocks>, &Arc<SharedValues>),
    starts: &Arc<Vec<(u32, u32)>>,
    read: Option<Arc<ReadSlots>>,
    span: Span,
    limits: Limits,
    mut fold: F,
) -> Option<(F::Part, Vec<usize>)> {
    let Span {
        start,
        end,
        memo,
        slots,
    } = span;
    // A memo slot takes at least two bytes of the run (a value and its `MEMOIZE`).
    let bytes = end.saturating_sub(start) / 2;
    let slots = (slots as usize).min(usize::try_from(bytes).unwrap_or(usize::MAX));
    let (value, resolved) = {
        let mut input = Input::new(reader);
        input.shift(start);
        let mut decoder = Decoder::new(input, limits, &mut fold);
        let resolver = Resolver::new(Arc::clone(blocks), Arc::clone(starts), Arc::clone(values));
        decoder.resolver = Some(Rc::clone(&resolver));
        decoder.start_chunk(memo as usize, slots, read).ok()?;
        let value = decoder.run().ok()?;
        (value, resolver.resolved())
    };
    Some((fold.into_part(value).ok()?, resolved))
}

/// How the pre-scan on `threads` threads (going parallel where `split` bytes are left)
/// compares with the one-thread scan: the same plan, or no plan at all (it declined, so the
/// sequential decoder reads the file), and whether the one-thread scan found a region to
/// split.
#[cfg(test)]
pub(crate) fn scans_agree(file: &File, threads: usize, split: u64) -> ScanAgreement {
    use std::io::{Seek, SeekFrom};
    let len = file.metadata().map(|metadata| metadata.len()).unwrap_or(0);
    let parallel = scan::scan_file(file, len, threads, split);
    let mut reader = file;
    let _ = reader.seek(SeekFrom::Start(0));
    let sequential = scan::scan(reader);
    let region = sequential
        .as_ref()
        .is_some_and(|plan| plan.region.is_some());
    ScanAgreement {
        same: parallel == sequential,
        declined: parallel.is_none() && sequential.is_some(),
        region,
    }
}

/// See [`scans_agree`].
#[cfg(test)]
pub(crate) struct ScanAgreement {
    /// Both scans made the same plan (or both none).
    pub(crate) same: bool,
    /// The parallel scan made no plan where the one-thread scan made one.
    pub(crate) declined: bool,
    /// The one-thread scan found a list to split.
    pub(crate) region: bool,
}

#[cfg(test)]
mod blocks_tests {
    use super::{Blocks, BlocksAt, BLOCK};
    use std::io::{Read, Write};
    use std::sync::Arc;

    /// What `BlocksAt` reads from `position` to the end, in reads of `size` bytes.
    fn read_all(blocks: &Blocks, position: u64, size: usize) -> Vec<u8> {
        let mut reader = BlocksAt { blocks, position };
        let mut out = Vec::new();
        let mut buffer = vec![0; size];
        loop {
            let n = reader.read(&mut buffer).unwrap();
            if n == 0 {
                return out;
            }
            out.extend_from_slice(&buffer[..n]);
        }
    }

    #[test]
    fn kept_blocks_and_the_file_read_the_same_bytes() {
        let bytes: Vec<u8> = (0..(BLOCK as usize * 3 + 1234))
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&bytes).unwrap();
        let file = Arc::new(file);
        let len = bytes.len() as u64;
        // All kept; one block kept (the rest read from the file); none kept.
        for budget in [len * 2, BLOCK, 0] {
            let blocks = Blocks::with_budget(Arc::clone(&file), len, budget);
            for position in [
                0,
                1,
                BLOCK - 3,
                BLOCK,
                2 * BLOCK + 17,
                len - 5,
                len,
                len + 9,
            ] {
                for size in [1, 100, 4096, 1 << 20] {
                    let start = (position as usize).min(bytes.len());
                    assert_eq!(
                        read_all(&blocks, position, size),
                        &bytes[start..],
                        "budget {budget}, position {position}, reads of {size}"
                    );
                }
            }
            let kept = blocks
                .blocks
                .iter()
                .filter(|b| b.get().is_some_and(|b| b.is_some()));
            assert!(kept.count() as u64 * BLOCK <= budget, "budget {budget}");
        }
    }
}
