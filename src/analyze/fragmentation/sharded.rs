//! The replay's first pass on several threads, split by block address (and how the analysis
//! starts work beside its own thread).
//!
//! The first pass walks a device's trace backward from the snapshot to find the peak of
//! allocated memory and each freed block's allocation stack. Every block action (`alloc`,
//! `free_requested`, `free_completed`) reads and changes only the block at its own address,
//! so the blocks are split into shards by address and each shard is replayed on a thread of
//! its own, writing for each of its entries how much allocated memory the entry's undo adds or
//! takes away. Which entries are a shard's is written first (a byte an entry, on threads),
//! so a shard reads a byte an entry and only its own entries in full. One walk on this
//! thread then sums those changes in trace order, replays the segment actions (few, and they
//! need every segment) and finds the peak.
//!
//! This gives what the one-thread pass gives: allocated memory is always the sum of the live
//! unfreed blocks' sizes plus what the snapshot counted twice, so the one-thread pass never
//! clamps it at zero nor saturates it unless a sum overflows 64 bits; the walk here does its
//! sums checked and, where one overflows, gives up so the caller runs the one-thread pass.

use std::collections::hash_map::Entry;
use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU32, Ordering};

use super::ahead::Held;
use super::growth::{kept_by_stack, Kept, StackGrowth};
use super::{live_at_snapshot, round_size, AddressHasher, AddressMap, FirstPass, Live, State};
use crate::model::gpu::CudaOrdinal;
use crate::model::snapshot::{Action, Snapshot, StackId, Trace, TraceEntry};
use crate::parse::pickle::profile;

/// Work started beside this thread: on a thread of its own, or (where none could be made)
/// kept to run here when its result is wanted.
pub(super) enum Beside<'scope, T, F> {
    Thread(std::thread::ScopedJoinHandle<'scope, T>),
    Here(F),
}

pub(super) fn beside<'scope, 'env, T: Send + 'scope, F: FnOnce() -> T + Send + Copy + 'scope>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    work: F,
) -> Beside<'scope, T, F> {
    match std::thread::Builder::new()
        .name("oomdoc-analysis".to_string())
        .spawn_scoped(scope, work)
    {
        Ok(handle) => Beside::Thread(handle),
        Err(_) => Beside::Here(work),
    }
}

pub(super) fn joined<T, F: FnOnce() -> T>(work: Beside<'_, T, F>) -> T {
    match work {
        Beside::Thread(handle) => handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        Beside::Here(work) => work(),
    }
}

/// Most shards (threads) the pass is split into.
const MAX_SHARDS: usize = 16;

/// No change of allocated memory for this entry.
const NO_CHANGE: u32 = 0;
/// A change too large (or not a multiple of 512 bytes) for the table: in the shard's list.
const LISTED: u32 = u32::MAX;

/// The shard of a block address: the high half of a multiplicative hash scaled to
/// `shards` by a multiply and a shift (every shard scans every entry, so a division per
/// entry, as `%` takes, cost each shard more than its own replay).
fn shard_of(address: u64, shards: usize) -> usize {
    let mixed = address.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (((mixed >> 32) * shards as u64) >> 32) as usize
}

/// How a change of `bytes` is written in the table (its list holds the ones that do not fit).
fn encode(bytes: u64) -> u32 {
    if bytes % 512 == 0 && bytes / 512 < u64::from(LISTED - 1) {
        (bytes / 512) as u32 + 1
    } else {
        LISTED
    }
}

/// What one shard learnt.
struct Shard {
    inconsistencies: u64,
    estimated_blocks: bool,
    /// `(entry index, bytes)` of changes [`encode`] could not write.
    listed: Vec<(usize, u64)>,
    /// The shard's blocks allocated within the trace and not freed after (growth), by stack.
    kept: Vec<(StackId, Kept)>,
    /// `(boundary, blocks)`: the shard's blocks once its entries from `boundary` on are
    /// undone, at each of [`checkpoints`]' boundaries where asked for, in any order.
    checkpoints: Vec<(usize, Vec<(u64, Live)>)>,
}

/// Copies of each shard's blocks kept by pass 1 (at [`CHECKPOINTS`] - 1 points of the trace)
/// where pass 2 replays the peak's blocks on the shards: pass 2 then starts from the nearest
/// copy after the peak, not from the snapshot (the copies are the blocks of a few moments,
/// about the snapshot's blocks each).
const CHECKPOINTS: usize = 4;

/// The boundaries of [`CHECKPOINTS`] over a trace of `len` entries, from the last.
fn checkpoints(len: usize) -> Vec<usize> {
    (1..CHECKPOINTS)
        .rev()
        .map(|k| len * k / CHECKPOINTS)
        .collect()
}

/// What [`first_pass_sharded_with`] gives.
pub(super) struct Sharded {
    /// What the one-thread pass gives.
    pub(super) first: FirstPass,
    /// The blocks holding memory at the peak, where asked for (see [`peak_blocks`]).
    pub(super) peak_held: Option<Vec<Held>>,
    /// Growth by stack, as [`super::growth::growth_by_stack`] gives it: allocations counted
    /// in the marks' pieces (in trace order), the blocks kept found by the shards (an
    /// address's last block action in the trace is the first a shard meets walking back).
    pub(super) growth: StackGrowth,
    /// The trace's entries by action code and its `oom` entries' indices (see
    /// [`super::Counted`]), counted in the marks' pieces.
    pub(super) counted: super::Counted,
}

/// The first pass over `trace` split into `shards` shards; `None` when it cannot give what
/// the one-thread pass gives (a sum overflowed, or no thread could be made).
#[cfg(test)]
pub(super) fn first_pass_sharded(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    shards: usize,
) -> Option<FirstPass> {
    first_pass_sharded_with(snapshot, device, trace, shards, 0).map(|sharded| sharded.first)
}

/// [`first_pass_sharded`], and where the trace holds no OOM among its first `max_ooms`
/// entries of that action (none to judge: the peak is pass 2's only stop), the blocks holding
/// memory at the peak, replayed on the same shards once the peak is known (see
/// [`peak_blocks`]).
pub(super) fn first_pass_sharded_with(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    shards: usize,
    max_ooms: usize,
) -> Option<Sharded> {
    let shards = shards.clamp(1, MAX_SHARDS);
    let timing = profile::phase(|| "analysis: pass 1 tables and marks".to_string());
    // The two tables (one slot an entry: their pages mapped as they are filled) and the marks
    // (on their own threads) are made on threads of their own while this one builds the state
    // at the snapshot: the three do not depend on one another (the marks waited for the
    // tables, 0.006 s after 0.008 s on the H200 host).
    let filled = |value: u32| {
        let len = trace.len();
        move || -> Vec<AtomicU32> { (0..len).map(|_| AtomicU32::new(value)).collect() }
    };
    let (mut state, parts, changes, stacks, mut marks_table) = std::thread::scope(|scope| {
        let spawn = |value: u32| {
            std::thread::Builder::new()
                .name("oomdoc-replay".to_string())
                .spawn_scoped(scope, filled(value))
                .ok()
        };
        let (changes, stacks) = (spawn(NO_CHANGE), spawn(u32::MAX));
        let marking = std::thread::Builder::new()
            .name("oomdoc-replay".to_string())
            .spawn_scoped(scope, move || Marks::new(trace, shards))
            .ok();
        let mut state = State::at_snapshot(snapshot, device);
        // Each shard's blocks, split here while the tables fill: the state's map is freed
        // before the shards start (each shard filtered the whole map on its thread, and the
        // map stayed while they replayed).
        let mut parts: Vec<AddressMap<Live>> = (0..shards).map(|_| AddressMap::default()).collect();
        for (address, live) in std::mem::take(&mut state.blocks) {
            if let Some(part) = parts.get_mut(shard_of(address, shards)) {
                part.insert(address, live);
            }
        }
        let join = |handle: Option<std::thread::ScopedJoinHandle<'_, Vec<AtomicU32>>>,
                    value: u32| match handle {
            Some(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => filled(value)(),
        };
        // Where no thread could be made, the marks are made here.
        let marks = match marking {
            Some(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => Marks::new(trace, shards),
        };
        (
            state,
            parts,
            join(changes, NO_CHANGE),
            join(stacks, u32::MAX),
            marks,
        )
    });
    let (changes_ref, stacks_ref) = (&changes, &stacks);
    let marks = &marks_table;
    // Pass 2's only stop is the peak where no OOM is judged: its blocks are then replayed on
    // the shards after the walk, and the marks are kept for it.
    let peak_on_shards = marks_table.ooms.is_empty() || max_ooms == 0;
    drop(timing);
    let timing = profile::phase(|| "analysis: pass 1 shards".to_string());
    let learnt: Option<Vec<Shard>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(shards);
        // The last shard is replayed on this thread, which would otherwise only wait.
        let mut parts = parts;
        let here = parts.pop().map(|blocks| (parts.len(), blocks));
        let replay = move |shard, blocks| {
            let boundaries = if peak_on_shards {
                checkpoints(trace.len())
            } else {
                Vec::new()
            };
            replay_shard(
                blocks,
                trace,
                marks,
                shard,
                changes_ref,
                stacks_ref,
                &boundaries,
            )
        };
        for (shard, blocks) in parts.into_iter().enumerate() {
            let work = move || replay(shard, blocks);
            handles.push(
                std::thread::Builder::new()
                    .name("oomdoc-replay".to_string())
                    .spawn_scoped(scope, work)
                    .ok(),
            );
        }
        let last = here.map(|(shard, blocks)| replay(shard, blocks));
        handles
            .into_iter()
            .map(|handle| {
                handle.map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
            })
            .chain(last.map(Some))
            .collect()
    });
    let learnt = learnt?;
    drop(timing);
    let walk_timing = profile::phase(|| "analysis: pass 1 walk".to_string());
    let mut listed: AddressMap<u64> = AddressMap::default();
    let mut inconsistencies = 0u64;
    let mut estimated_blocks = false;
    let mut kept = Vec::new();
    let mut copies = Vec::with_capacity(learnt.len());
    for shard in learnt {
        inconsistencies = inconsistencies.saturating_add(shard.inconsistencies);
        estimated_blocks |= shard.estimated_blocks;
        for &(index, bytes) in &shard.listed {
            listed.insert(index as u64, bytes);
        }
        kept.extend(shard.kept);
        copies.push(shard.checkpoints);
    }
    let growth = StackGrowth::new(
        std::mem::take(&mut marks_table.allocations),
        kept_by_stack(kept),
    );
    let counted = (marks_table.actions, std::mem::take(&mut marks_table.ooms));
    // The marks are freed before the walk where pass 2 does not need them.
    let marks_table = peak_on_shards.then_some(marks_table);
    // The walk in trace order: allocated memory from the shards' changes, segments replayed.
    let bytes_of = |index: usize, code: u32| -> u64 {
        match code {
            LISTED => listed.get(&(index as u64)).copied().unwrap_or(0),
            code => u64::from(code - 1) * 512,
        }
    };
    let allocated = state.allocated;
    // The walk, split in ranges of entries summed on threads (each range's change of
    // allocated memory, its highest point and its lowest and highest sums), then joined here
    // in trace order: the same peak, and the same overflow, as one walk over every entry.
    let ranges = walk_ranges(trace, changes_ref, &bytes_of, shards);
    let mut peak = (i128::from(allocated), trace.len().saturating_sub(1));
    let mut at = i128::from(allocated);
    for range in ranges.iter().rev() {
        let (low, high) = (at + range.low, at + range.high);
        if low < 0 || high > i128::from(u64::MAX) {
            return None;
        }
        if let Some((top, index)) = range.top {
            // Walking backward, a later `>=` wins: the lowest index at the highest point.
            if at + top >= peak.0 {
                peak = (at + top, index);
            }
        }
        at += range.change;
    }
    // The segment actions replayed backward (few); reserved memory as it was at the peak's
    // entry, once every segment action after it is undone.
    let mut reserved_at_peak = None;
    for range in ranges.iter().rev() {
        for &index in &range.segments {
            if index <= peak.1 && reserved_at_peak.is_none() {
                reserved_at_peak = Some(state.reserved);
            }
            state.undo(index, &trace[index], &mut []);
        }
    }
    let reserved = reserved_at_peak.unwrap_or(state.reserved);
    let peak = (u64::try_from(peak.0).ok()?, reserved, peak.1);
    drop(ranges);
    drop(changes);
    drop(walk_timing);
    let held = match &marks_table {
        Some(marks) => {
            // Each shard's nearest copy after the peak (the same boundary for all of them).
            let starts = copies
                .into_iter()
                .map(|copies| {
                    copies
                        .into_iter()
                        .filter(|&(boundary, _)| boundary > peak.2)
                        .min_by_key(|&(boundary, _)| boundary)
                })
                .collect();
            Some(peak_blocks(
                snapshot, device, trace, marks, shards, peak.2, starts,
            )?)
        }
        None => None,
    };
    Some(Sharded {
        first: FirstPass {
            peak,
            alloc_stacks: stacks.into_iter().map(AtomicU32::into_inner).collect(),
            inconsistencies: inconsistencies.saturating_add(state.inconsistencies),
            estimated_blocks: estimated_blocks | state.estimated_blocks,
        },
        peak_held: held,
        growth,
        counted,
    })
}

/// The blocks holding memory at entry `peak` (before its undo, as pass 2 stops there), in
/// address order: each shard's blocks at the snapshot, replayed backward over the shard's
/// own entries after `peak` on a thread of its own, as [`State::undo`] changes them. A block
/// made by undoing a `free_completed` keeps that entry's stack and index, for
/// [`super::ahead::stack_of`] to name its allocation stack as pass 2 on one thread does.
/// `None` where no thread could be made.
fn peak_blocks(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    marks: &Marks,
    shards: usize,
    peak: usize,
    starts: Vec<Option<Start>>,
) -> Option<Vec<Held>> {
    let _timing = profile::phase(|| "analysis: pass 2 on the shards".to_string());
    let mut starts = starts.into_iter();
    let lists: Option<Vec<Vec<(u64, Held)>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..shards)
            .map(|shard| {
                let start = starts.next().flatten();
                std::thread::Builder::new()
                    .name("oomdoc-replay".to_string())
                    .spawn_scoped(scope, move || {
                        shard_at(snapshot, device, trace, marks, shards, shard, peak, start)
                    })
                    .ok()
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle.map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
            })
            .collect()
    });
    let mut held: Vec<(u64, Held)> = lists?.concat();
    // Addresses are distinct (a shard's are its map's keys, and the shards split them).
    held.sort_unstable_by_key(|&(address, _)| address);
    Some(held.into_iter().map(|(_, held)| held).collect())
}

/// The blocks of `shard` at the snapshot, as `State::at_snapshot` inserts them.
fn at_snapshot(
    blocks: &mut AddressMap<Live>,
    snapshot: &Snapshot,
    device: CudaOrdinal,
    shards: usize,
    shard: usize,
) {
    for (address, live) in live_at_snapshot(snapshot, device) {
        if shard_of(address, shards) == shard {
            blocks.insert(address, live);
        }
    }
}

/// Where a shard's pass 2 starts: a boundary and the shard's blocks once its entries from
/// there on are undone (pass 1's copy).
type Start = (usize, Vec<(u64, Live)>);

/// One shard of [`peak_blocks`]: its blocks holding memory at `peak`, with their addresses,
/// replayed from `start` (pass 1's copy), or from the snapshot where there is none.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site: the pass's snapshot, trace, marks and shard"
)]
fn shard_at(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    marks: &Marks,
    shards: usize,
    shard: usize,
    peak: usize,
    start: Option<Start>,
) -> Vec<(u64, Held)> {
    let mut blocks: AddressMap<Live> = AddressMap::default();
    let below = match start {
        Some((boundary, copy)) => {
            blocks.extend(copy);
            boundary
        }
        None => {
            at_snapshot(&mut blocks, snapshot, device, shards, shard);
            trace.len()
        }
    };
    let (alloc, free_requested) = (Action::Alloc.code(), Action::FreeRequested.code());
    let mark = shard as u8 + 1;
    let parts: Vec<(usize, &[TraceEntry])> = trace.parts().collect();
    let entries = own_entries(&parts, marks, mark, below).take_while(|&(index, _)| index > peak);
    in_batches(entries, |index, entry| {
        let (code, addr) = (entry.action_code(), entry.addr);
        if code == alloc {
            blocks.remove(&addr);
        } else if code == free_requested {
            match blocks.get_mut(&addr) {
                Some(live) => live.pending = false,
                None => {
                    blocks.insert(
                        addr,
                        Live {
                            size: round_size(entry.size),
                            stack: entry.stack,
                            pending: false,
                            freed_at: u32::MAX,
                        },
                    );
                }
            }
        } else if let Entry::Vacant(slot) = blocks.entry(addr) {
            slot.insert(Live {
                size: round_size(entry.size),
                stack: entry.stack,
                pending: true,
                freed_at: index as u32,
            });
        }
    });
    blocks
        .into_iter()
        .filter(|(_, live)| !live.pending)
        .map(|(address, live)| (address, (live.stack, live.freed_at, live.size)))
        .collect()
}

/// Each entry's shard, a byte an entry: 0 for an entry that is no block action, else its
/// block's shard plus one; made in pieces (within the trace's parts) on threads. A shard
/// then reads a byte an entry and only its own entries in full, where it read every entry's
/// action and address (32 bytes) and hashed the address of each block action. The bytes
/// are only read while the shards replay (a table they also wrote would bounce between
/// their cores).
struct Marks {
    /// `(part, offset, marks)`: the marks of the part's entries from `offset` on, in order.
    pieces: Vec<(usize, usize, Vec<u8>)>,
    /// The trace's entries by action code.
    actions: [u64; Action::COUNT],
    /// The indices of the trace's `oom` entries, in order.
    ooms: Vec<usize>,
    /// `(stack, allocations)`, in the order of each stack's first allocation (growth).
    allocations: Vec<(StackId, u64)>,
}

impl Marks {
    fn new(trace: &Trace, shards: usize) -> Marks {
        let per = trace.len().div_ceil(shards.max(1)).max(1);
        let bounds: Vec<(usize, usize, usize)> = trace
            .parts()
            .enumerate()
            .flat_map(|(part, (_, entries))| {
                (0..entries.len())
                    .step_by(per)
                    .map(move |offset| (part, offset, (offset + per).min(entries.len())))
            })
            .collect();
        let parts: Vec<(usize, &[TraceEntry])> = trace.parts().collect();
        let piece_marks = |&(part, offset, end): &(usize, usize, usize)| -> PieceMarks {
            parts
                .get(part)
                .and_then(|&(first, entries)| Some((first + offset, entries.get(offset..end)?)))
                .map_or_else(PieceMarks::default, |(first, entries)| {
                    marks_of(entries, first, shards)
                })
        };
        let pieces = std::thread::scope(|scope| {
            let handles: Vec<_> = bounds
                .iter()
                .skip(1)
                .map(|piece| {
                    std::thread::Builder::new()
                        .name("oomdoc-replay".to_string())
                        .spawn_scoped(scope, move || piece_marks(piece))
                        .ok()
                })
                .collect();
            let mut pieces = Vec::with_capacity(bounds.len());
            if let Some(piece) = bounds.first() {
                pieces.push(piece_marks(piece));
            }
            for (handle, piece) in handles.into_iter().zip(bounds.iter().skip(1)) {
                pieces.push(match handle {
                    Some(handle) => handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                    None => piece_marks(piece),
                });
            }
            pieces
        });
        let mut actions = [0u64; Action::COUNT];
        let mut ooms = Vec::new();
        for piece in &pieces {
            for (total, count) in actions.iter_mut().zip(piece.actions) {
                *total += count;
            }
            ooms.extend_from_slice(&piece.ooms);
        }
        // Each piece's stacks in the order of their first allocation there, pieces in trace
        // order: a stack new to the whole trace takes the next place.
        let mut slots: AddressMap<u32> = AddressMap::default();
        let mut allocations: Vec<(StackId, u64)> = Vec::new();
        for piece in &pieces {
            for &(stack, count) in &piece.allocations {
                let slot = *slots.entry(u64::from(stack)).or_insert_with(|| {
                    allocations.push((stack, 0));
                    (allocations.len() - 1) as u32
                });
                if let Some((_, total)) = allocations.get_mut(slot as usize) {
                    *total += count;
                }
            }
        }
        Marks {
            pieces: bounds
                .iter()
                .zip(pieces)
                .map(|(&(part, offset, _), piece)| (part, offset, piece.marks))
                .collect(),
            actions,
            ooms,
            allocations,
        }
    }
}

/// What [`marks_of`] learns from one piece of the trace.
#[derive(Default)]
struct PieceMarks {
    marks: Vec<u8>,
    /// Entries by action code.
    actions: [u64; Action::COUNT],
    /// The indices of its `oom` entries, in order.
    ooms: Vec<usize>,
    /// `(stack, allocations)` in the order of each stack's first allocation in the piece.
    allocations: Vec<(StackId, u64)>,
}

/// The marks of `entries`, the trace's entries from index `first` on (see [`Marks`]), their
/// actions counted, their `oom` entries and their allocations by stack.
fn marks_of(entries: &[TraceEntry], first: usize, shards: usize) -> PieceMarks {
    let (alloc, free_requested, free_completed, oom) = (
        Action::Alloc.code(),
        Action::FreeRequested.code(),
        Action::FreeCompleted.code(),
        Action::Oom.code(),
    );
    let mut actions = [0u64; Action::COUNT];
    let mut ooms = Vec::new();
    let mut slots: AddressMap<u32> = AddressMap::default();
    let mut allocations: Vec<(StackId, u64)> = Vec::new();
    let marks = entries
        .iter()
        .enumerate()
        .map(|(at, entry)| {
            let code = entry.action_code();
            if let Some(count) = actions.get_mut(code) {
                *count += 1;
            }
            if code == alloc {
                let slot = *slots.entry(u64::from(entry.stack)).or_insert_with(|| {
                    allocations.push((entry.stack, 0));
                    (allocations.len() - 1) as u32
                });
                if let Some((_, count)) = allocations.get_mut(slot as usize) {
                    *count += 1;
                }
            }
            if code == alloc || code == free_requested || code == free_completed {
                // Below MAX_SHARDS (16): fits a byte.
                shard_of(entry.addr, shards) as u8 + 1
            } else {
                if code == oom {
                    ooms.push(first + at);
                }
                0
            }
        })
        .collect();
    PieceMarks {
        marks,
        actions,
        ooms,
        allocations,
    }
}

/// What one range of entries adds to the walk of [`first_pass_sharded`], relative to the
/// allocated memory where its walk starts (after its last entry).
#[derive(Debug, Default)]
struct RangeWalk {
    /// Allocated memory after the range's walk, less where it started.
    change: i128,
    /// The lowest and highest sums after an entry's change (0 for an empty walk).
    low: i128,
    high: i128,
    /// The highest sum seen before an entry's change, at the lowest such entry.
    top: Option<(i128, usize)>,
    /// Segment actions, in the walk's (descending) order.
    segments: Vec<usize>,
}

/// Entries below this many are walked on this thread alone (in tests every trace of two
/// entries or more is split, so the joining of ranges is what the tests check).
const WALK_SPLIT_ENTRIES: usize = if cfg!(test) { 2 } else { 1 << 16 };

/// The walk's ranges over `trace`, in trace order: `ranges` of them on threads (one range
/// here where the trace is short or no thread could be made).
fn walk_ranges(
    trace: &Trace,
    changes: &[AtomicU32],
    bytes_of: &(impl Fn(usize, u32) -> u64 + Sync),
    ranges: usize,
) -> Vec<RangeWalk> {
    let ranges = if trace.len() < WALK_SPLIT_ENTRIES {
        1
    } else {
        ranges.max(1)
    };
    let per = trace.len().div_ceil(ranges).max(1);
    let bounds: Vec<(usize, usize)> = (0..trace.len())
        .step_by(per)
        .map(|start| (start, (start + per).min(trace.len())))
        .collect();
    if bounds.len() <= 1 {
        return vec![walk_range(trace, changes, bytes_of, 0, trace.len())];
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .iter()
            .map(|&(start, end)| {
                std::thread::Builder::new()
                    .name("oomdoc-replay".to_string())
                    .spawn_scoped(scope, move || {
                        walk_range(trace, changes, bytes_of, start, end)
                    })
                    .ok()
            })
            .collect();
        handles
            .into_iter()
            .zip(&bounds)
            .map(|(handle, &(start, end))| match handle {
                Some(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                None => walk_range(trace, changes, bytes_of, start, end),
            })
            .collect()
    })
}

/// The walk over `trace[start..end]`, backward, relative to where it starts.
fn walk_range(
    trace: &Trace,
    changes: &[AtomicU32],
    bytes_of: &impl Fn(usize, u32) -> u64,
    start: usize,
    end: usize,
) -> RangeWalk {
    let (alloc, free_requested) = (Action::Alloc.code(), Action::FreeRequested.code());
    let segment_codes = [
        Action::SegmentAlloc.code(),
        Action::SegmentFree.code(),
        Action::SegmentMap.code(),
        Action::SegmentUnmap.code(),
    ];
    let mut out = RangeWalk::default();
    let mut sum = 0i128;
    let mut top: Option<(i128, usize)> = None;
    for (index, entry) in trace.range(start, end).rev() {
        if top.is_none_or(|(value, _)| sum >= value) {
            top = Some((sum, index));
        }
        let code = entry.action_code();
        let change = changes[index].load(Ordering::Relaxed);
        if change != NO_CHANGE {
            let bytes = i128::from(bytes_of(index, change));
            if code == alloc {
                sum -= bytes;
            } else if code == free_requested {
                sum += bytes;
            } else {
                continue;
            }
            out.low = out.low.min(sum);
            out.high = out.high.max(sum);
        } else if segment_codes.contains(&code) {
            out.segments.push(index);
        }
    }
    out.change = sum;
    out.top = top;
    out
}

/// Replays the block actions of one shard backward, as [`State::undo`] does, writing each
/// entry's change of allocated memory and each freed block's allocation stack, and copying
/// its blocks at each of `boundaries` (descending).
fn replay_shard(
    mut blocks: AddressMap<Live>,
    trace: &Trace,
    marks: &Marks,
    shard: usize,
    changes: &[AtomicU32],
    stacks: &[AtomicU32],
    boundaries: &[usize],
) -> Shard {
    let mut out = Shard {
        inconsistencies: 0,
        estimated_blocks: false,
        listed: Vec::new(),
        kept: Vec::new(),
        checkpoints: Vec::new(),
    };
    let copy = |blocks: &AddressMap<Live>| -> Vec<(u64, Live)> {
        blocks
            .iter()
            .map(|(&address, &live)| (address, live))
            .collect()
    };
    let mut next_boundary = 0;
    // Growth: the addresses met so far, walking back, and the blocks kept (an address whose
    // first block action met is an `alloc`: its last in the trace).
    let mut seen: HashSet<u64, BuildHasherDefault<AddressHasher>> = HashSet::default();
    let mut kept: Vec<(StackId, Kept)> = Vec::new();
    let len = trace.len();
    let change = |index: usize, bytes: u64, out: &mut Shard| {
        let code = encode(bytes);
        if code == LISTED {
            out.listed.push((index, bytes));
        }
        if let Some(slot) = changes.get(index) {
            slot.store(code, Ordering::Relaxed);
        }
    };
    let (alloc, free_requested) = (Action::Alloc.code(), Action::FreeRequested.code());
    // The block actions of this shard, as `Marks` marked them, walking backward.
    let mark = shard as u8 + 1;
    let parts: Vec<(usize, &[TraceEntry])> = trace.parts().collect();
    in_batches(own_entries(&parts, marks, mark, len), |index, entry| {
        // Every entry from a boundary on is undone, none before it.
        while let Some(&boundary) = boundaries.get(next_boundary) {
            if index >= boundary {
                break;
            }
            out.checkpoints.push((boundary, copy(&blocks)));
            next_boundary += 1;
        }
        let code = entry.action_code();
        let addr = entry.addr;
        if seen.insert(addr) && code == alloc {
            kept.push((entry.stack, Kept::block(entry.size, index, len)));
        }
        if code == alloc {
            match blocks.remove(&addr) {
                Some(live) => {
                    if !live.pending {
                        change(index, live.size, &mut out);
                    }
                    if let Some(slot) = stacks.get(live.freed_at as usize) {
                        slot.store(entry.stack, Ordering::Relaxed);
                    }
                }
                None => out.inconsistencies += 1,
            }
        } else if code == free_requested {
            match blocks.get_mut(&addr) {
                Some(live) if live.pending => {
                    live.pending = false;
                    let size = live.size;
                    change(index, size, &mut out);
                }
                Some(_) => out.inconsistencies += 1,
                None => {
                    let size = round_size(entry.size);
                    out.estimated_blocks = true;
                    change(index, size, &mut out);
                    blocks.insert(
                        addr,
                        Live {
                            size,
                            stack: entry.stack,
                            pending: false,
                            freed_at: u32::MAX,
                        },
                    );
                }
            }
        } else {
            if blocks.contains_key(&addr) {
                out.inconsistencies += 1;
                return;
            }
            out.estimated_blocks = true;
            let stack = stacks
                .get(index)
                .map_or(entry.stack, |slot| slot.load(Ordering::Relaxed));
            blocks.insert(
                addr,
                Live {
                    size: round_size(entry.size),
                    stack: if stack == u32::MAX {
                        entry.stack
                    } else {
                        stack
                    },
                    pending: true,
                    freed_at: index as u32,
                },
            );
        }
    });
    for &boundary in boundaries.get(next_boundary..).unwrap_or_default() {
        out.checkpoints.push((boundary, copy(&blocks)));
    }
    out.kept = kept_by_stack(kept);
    out
}

/// The entries marked `mark` (a shard's block actions) below index `below`, from the last
/// backward, with their indices.
fn own_entries<'t>(
    parts: &'t [(usize, &'t [TraceEntry])],
    marks: &'t Marks,
    mark: u8,
    below: usize,
) -> impl Iterator<Item = (usize, &'t TraceEntry)> + 't {
    marks
        .pieces
        .iter()
        .rev()
        .flat_map(move |(part, offset, marks)| {
            let (first, entries) = parts.get(*part).copied().unwrap_or((0, &[]));
            // The piece's marks of entries below `below`.
            let kept = below.saturating_sub(first + offset).min(marks.len());
            MarkedBack::new(marks.get(..kept).unwrap_or_default(), mark).filter_map(move |at| {
                let at = offset + at;
                Some((first + at, entries.get(at)?))
            })
        })
}

/// The positions of the bytes equal to `mark` in `marks`, from the last backward, found eight
/// bytes at a time (a shard's mark is one byte in about as many as there are shards).
struct MarkedBack<'m> {
    marks: &'m [u8],
    mark: u8,
    /// Bytes `..rest` are not read yet.
    rest: usize,
    /// The position of the word in `found`, and a high bit for each of its bytes equal to
    /// `mark` not handed out yet.
    word_at: usize,
    found: u64,
}

impl<'m> MarkedBack<'m> {
    fn new(marks: &'m [u8], mark: u8) -> MarkedBack<'m> {
        MarkedBack {
            marks,
            mark,
            rest: marks.len(),
            word_at: 0,
            found: 0,
        }
    }
}

/// A high bit in each byte of `word` equal to `byte`, no other bit set.
fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ (u64::from(byte) * 0x0101_0101_0101_0101);
    // A byte's high bit: set in `(x & LOW7) + LOW7` where its low seven bits are not all
    // zero (no carry leaves the byte), in `x` where its own high bit is.
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
}

impl Iterator for MarkedBack<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.found != 0 {
                let bit = 63 - self.found.leading_zeros() as usize;
                self.found &= !(1u64 << bit);
                return Some(self.word_at + bit / 8);
            }
            if self.rest == 0 {
                return None;
            }
            let start = self.rest.saturating_sub(8);
            let mut word = [0u8; 8];
            if let (Some(bytes), Some(into)) = (
                self.marks.get(start..self.rest),
                word.get_mut(..self.rest - start),
            ) {
                into.copy_from_slice(bytes);
            }
            let mut found = bytes_equal(u64::from_le_bytes(word), self.mark);
            if self.rest - start < 8 {
                // The bytes past the slice's start are zero-filled, never a match.
                found &= (1u64 << (8 * (self.rest - start))) - 1;
            }
            self.found = found;
            self.word_at = start;
            self.rest = start;
        }
    }
}

/// Hands `entries` to `each` in order, a batch at a time, each batch's entries read first: a
/// shard's entries are spread over the trace, each one a cache miss, which the shard waited
/// for in turn when it read them one after the other; read together, the core overlaps them.
fn in_batches<'t>(
    mut entries: impl Iterator<Item = (usize, &'t TraceEntry)>,
    mut each: impl FnMut(usize, &'t TraceEntry),
) {
    const BATCH: usize = 32;
    let mut batch: Vec<(usize, &TraceEntry)> = Vec::with_capacity(BATCH);
    let mut touched = 0u64;
    loop {
        batch.clear();
        batch.extend(entries.by_ref().take(BATCH));
        if batch.is_empty() {
            break;
        }
        // An entry's first and last words (its 32 bytes may span two cache lines).
        for (_, entry) in &batch {
            touched ^= entry.addr ^ u64::from(entry.stack);
        }
        for &(index, entry) in &batch {
            each(index, entry);
        }
    }
    std::hint::black_box(touched);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::first_pass_here;
    use super::*;
    use crate::model::snapshot::{Block, BlockState, Segment, SegmentType, TraceEntry};
    use crate::model::Bytes;

    proptest! {
        /// The marked positions, found a word at a time, are those a byte-by-byte walk finds.
        #[test]
        fn marked_back_finds_every_marked_byte(
            marks in prop::collection::vec(0u8..20, 0..70),
            mark in 0u8..20,
        ) {
            let found: Vec<usize> = MarkedBack::new(&marks, mark).collect();
            let walked: Vec<usize> = (0..marks.len()).rev().filter(|&at| marks[at] == mark).collect();
            prop_assert_eq!(found, walked);
        }
    }

    /// Every address lands in one shard below the count, and 512-byte-aligned addresses (as
    /// the allocator hands out) spread over all shards.
    #[test]
    fn shard_of_stays_in_range_and_spreads() {
        for shards in 1..=MAX_SHARDS {
            let mut seen = vec![0usize; shards];
            for block in 0..4096u64 {
                let address = 0x7f00_0000_0000 + block * 512;
                let shard = shard_of(address, shards);
                assert!(shard < shards);
                seen[shard] += 1;
            }
            assert!(
                seen.iter().all(|&count| count > 4096 / shards / 2),
                "{seen:?}"
            );
            assert!(shard_of(u64::MAX, shards) < shards);
        }
    }

    const ACTIONS: [Action; 9] = [
        Action::Alloc,
        Action::FreeRequested,
        Action::FreeCompleted,
        Action::SegmentAlloc,
        Action::SegmentFree,
        Action::SegmentMap,
        Action::SegmentUnmap,
        Action::Oom,
        Action::Snapshot,
    ];

    /// A snapshot of one segment of `blocks` `(slot, size, state)` (addresses from a few
    /// slots, so they collide) and a trace of `(action, slot, size, stack)`.
    fn snapshot_of(blocks: &[(u8, u64, u8)], entries: &[(u8, u8, u64, u8)]) -> Snapshot {
        let address = |slot: u8| 0x7f00_0000_0000 + u64::from(slot % 24) * 0x10_0000;
        let states = [
            BlockState::Inactive,
            BlockState::ActiveAllocated,
            BlockState::ActivePendingFree,
        ];
        let segment = Segment {
            device: CudaOrdinal(0),
            address: address(0),
            total_size: Bytes(24 * 0x10_0000),
            allocated_size: Bytes::ZERO,
            active_size: Bytes::ZERO,
            requested_size: Bytes::ZERO,
            stream: 0,
            segment_type: SegmentType::Large,
            pool_id: (0, 0),
            is_expandable: false,
            stack: 0,
            blocks: blocks
                .iter()
                .map(|&(slot, size, state)| Block {
                    address: address(slot),
                    size: Bytes(size),
                    requested_size: Bytes(size),
                    state: states[usize::from(state) % 3],
                    stack: u32::from(slot),
                })
                .collect(),
        };
        let trace: Vec<TraceEntry> = entries
            .iter()
            .enumerate()
            .map(|(time, &(action, slot, size, stack))| {
                let action = ACTIONS[usize::from(action) % ACTIONS.len()];
                TraceEntry::new(
                    action,
                    address(slot),
                    size,
                    time as i64,
                    0,
                    u32::from(stack),
                )
            })
            .collect();
        // In parts of a few entries each, as a trace decoded on several threads is held.
        let parts = trace.chunks(37).map(<[TraceEntry]>::to_vec);
        Snapshot {
            segments: vec![segment],
            traces: vec![Trace::from_parts(parts)],
            ..Snapshot::default()
        }
    }

    fn sizes() -> impl Strategy<Value = u64> {
        prop_oneof![
            8 => (1u64..64).prop_map(|units| units * 512),
            2 => 0u64..5000,
            1 => Just(u64::MAX / 3),
            1 => Just(1u64 << 45),
        ]
    }

    proptest! {
        /// See [`ahead_is_pass_2`].
        #[test]
        fn pass_2_ahead_is_pass_2_after_pass_1(
            blocks in prop::collection::vec((any::<u8>(), sizes(), any::<u8>()), 0..12),
            entries in prop::collection::vec((any::<u8>(), any::<u8>(), sizes(), any::<u8>()), 1..300),
            publish in any::<bool>(),
            late in prop::option::of((0usize..400, 1usize..40)),
        ) {
            ahead_is_pass_2(&snapshot_of(&blocks, &entries), publish, late)?;
        }
    }

    proptest! {
        /// Split into any number of shards, the first pass gives what one thread gives (or
        /// declines, for a sum past 64 bits).
        #[test]
        fn sharded_first_pass_is_the_one_thread_pass(
            blocks in prop::collection::vec((any::<u8>(), sizes(), any::<u8>()), 0..12),
            entries in prop::collection::vec((any::<u8>(), any::<u8>(), sizes(), any::<u8>()), 1..300),
            shards in 1usize..9,
            cut in 0usize..300,
        ) {
            let snapshot = snapshot_of(&blocks, &entries);
            let trace = &snapshot.traces[0];
            let one = first_pass_here(&snapshot, CudaOrdinal(0), trace);
            // The same entries in two parts (as decoded in chunks): the marks' pieces stay
            // within a part.
            let cut = cut.min(trace.len());
            let parted = Trace::from_parts([trace.to_vec(0, cut), trace.to_vec(cut, trace.len())]);
            if let Some(split) = first_pass_sharded(&snapshot, CudaOrdinal(0), trace, shards) {
                let again = first_pass_sharded(&snapshot, CudaOrdinal(0), &parted, shards);
                prop_assert_eq!(again.as_ref(), Some(&split));
                prop_assert_eq!(split, one);
            } else {
                let huge = blocks.iter().map(|b| b.1).chain(entries.iter().map(|e| e.2));
                prop_assert!(huge.into_iter().any(|size| size >= 1 << 45));
            }
        }
    }

    proptest! {
        /// The peak's blocks replayed on shards are those pass 2 on one thread holds at the
        /// peak, in address order; growth by stack and the actions counted on them are the
        /// one walk's.
        #[test]
        fn peak_blocks_on_shards_are_pass_2s(
            blocks in prop::collection::vec((any::<u8>(), sizes(), any::<u8>()), 0..12),
            entries in prop::collection::vec((any::<u8>(), any::<u8>(), sizes(), any::<u8>()), 1..300),
            shards in 1usize..9,
            cut in 0usize..300,
        ) {
            let snapshot = snapshot_of(&blocks, &entries);
            let device = CudaOrdinal(0);
            let trace = &snapshot.traces[0];
            let one = first_pass_here(&snapshot, device, trace);
            let mut state = State::at_snapshot(&snapshot, device);
            for (index, entry) in trace.range(one.peak.2 + 1, trace.len()).rev() {
                state.undo(index, entry, &mut []);
            }
            let expected = super::super::ahead::held(&state);
            let cut = cut.min(trace.len());
            let parted = Trace::from_parts([trace.to_vec(0, cut), trace.to_vec(cut, trace.len())]);
            for trace in [trace, &parted] {
                match first_pass_sharded_with(&snapshot, device, trace, shards, 0) {
                    Some(sharded) => {
                        prop_assert_eq!(&sharded.first, &one);
                        prop_assert_eq!(sharded.peak_held.as_ref(), Some(&expected));
                        prop_assert_eq!(&sharded.counted, &super::super::count_actions(trace));
                        prop_assert_eq!(
                            sharded.growth.sorted(),
                            super::super::growth::growth_by_stack(trace).sorted()
                        );
                    }
                    None => {
                        let huge = blocks.iter().map(|b| b.1).chain(entries.iter().map(|e| e.2));
                        prop_assert!(huge.into_iter().any(|size| size >= 1 << 45));
                    }
                }
            }
        }
    }

    /// Pass 2 run ahead (beside pass 1, the peak learnt before it replays, while it replays
    /// after `late.0` entries, or after it ended) names the same sites in the same order,
    /// judges the same OOMs and gives the same summary as pass 2 after pass 1, with copies
    /// of its state taken every `late.1` entries at most.
    fn ahead_is_pass_2(
        snapshot: &Snapshot,
        publish: bool,
        late: Option<(usize, usize)>,
    ) -> Result<(), TestCaseError> {
        use super::super::ahead::{replay_ahead_with, AheadPeak, PeakSignal};
        use super::super::{replay_device, Options, SiteNamer};
        use crate::model::snapshot::SnapshotReport;
        let trace = &snapshot.traces[0];
        let options = Options::default();
        let empty_report = || SnapshotReport {
            source: crate::model::Source::Snapshot,
            devices: Vec::new(),
            ooms: Vec::new(),
            ooms_not_analysed: 0,
            allocator_settings: None,
            total_memory_bytes: None,
            annotations: Vec::new(),
            limitations: Vec::new(),
        };
        let device = CudaOrdinal(0);
        let peak = first_pass_here(snapshot, device, trace).peak.2;
        let (signal, span) = match late {
            Some((reads, span)) => (PeakSignal::late(peak, reads), span),
            None => (PeakSignal::new(), 1 << 16),
        };
        if publish && late.is_none() {
            signal.publish(peak);
        }
        let ahead = replay_ahead_with(snapshot, device, trace, options.max_ooms, &signal, span);
        // Pass 1's peak is always the replay's best where the replay went past it: the
        // replay gives the peak's blocks, whenever it learnt the peak.
        let Some(mut ahead) = ahead else {
            return Err(TestCaseError::fail("the replay gave up"));
        };
        let Some(blocks) = ahead.peak_blocks(peak, snapshot, device, trace) else {
            return Err(TestCaseError::fail("no blocks at the peak"));
        };
        ahead.peak = AheadPeak::Held(peak, blocks);
        let ahead = Some(ahead);
        let run = |ahead| {
            let mut sites = SiteNamer::new(snapshot);
            let mut report = empty_report();
            let first = first_pass_here(snapshot, device, trace);
            let replay = replay_device(
                snapshot,
                device,
                trace,
                &options,
                &mut sites,
                &mut report,
                first,
                ahead,
                None,
            );
            format!(
                "{:?} {} {:?} {:?}",
                replay.summary, replay.estimated_blocks, report, sites.names
            )
        };
        prop_assert_eq!(run(ahead), run(None));
        Ok(())
    }

    /// The whole analysis of a trace long enough for threads is the same on one thread and on
    /// several, with OOMs to judge (pass 2 beside pass 1) and without (the peak's blocks
    /// replayed on pass 1's shards).
    #[test]
    fn analysis_is_the_same_on_any_number_of_threads() {
        analysis_is_the_same_on_any_number_of_threads_with(true);
        analysis_is_the_same_on_any_number_of_threads_with(false);
    }

    fn analysis_is_the_same_on_any_number_of_threads_with(ooms: bool) {
        let mut entries = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        while entries.len() < super::super::THREADED_ANALYSIS_ENTRIES + 1000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let slot = (seed % 23) as u8;
            let size = (seed >> 8) % 40 * 512 + 512;
            entries.push((0u8, slot, size, (seed >> 20) as u8));
            match (seed >> 32) % 10 {
                0 if ooms => entries.push((7, slot, size, 1)),
                0 => {}
                1..=6 => {
                    entries.push((1, slot, size, 0));
                    entries.push((2, slot, size, 0));
                }
                _ => {}
            }
        }
        let snapshot = snapshot_of(&[(1, 4096, 1), (2, 1024, 2), (3, 2048, 0)], &entries);
        let report = |threads: usize| {
            let options = super::super::Options {
                threads,
                ..super::super::Options::default()
            };
            format!("{:?}", super::super::analyze(&snapshot, &options))
        };
        let one = report(1);
        assert_eq!(
            one.contains("OomAnalysis"),
            ooms,
            "the trace has OOMs to judge: {ooms}"
        );
        assert!(one.contains("top_sites: [Site"), "the peak names its sites");
        for threads in [2, 3, 16] {
            assert_eq!(report(threads), one, "{threads} threads");
        }
    }

    /// A trace of allocations, most of them freed and completed in turn, replays on shards
    /// to the same peak and stacks, and no sum declines it.
    #[test]
    fn sharded_first_pass_takes_a_consistent_trace() {
        let mut entries = Vec::new();
        for step in 0..400u32 {
            let slot = (step % 20) as u8;
            let size = u64::from(step % 7 + 1) * 512;
            entries.push((0u8, slot, size, (step % 5) as u8));
            if step % 3 != 0 {
                entries.push((1, slot, size, 0));
                entries.push((2, slot, size, 0));
            }
        }
        let snapshot = snapshot_of(&[(30, 2048, 1), (31, 1024, 2)], &entries);
        let trace = &snapshot.traces[0];
        let one = first_pass_here(&snapshot, CudaOrdinal(0), trace);
        for shards in [1, 2, 3, 8, 16] {
            let split = first_pass_sharded(&snapshot, CudaOrdinal(0), trace, shards);
            assert_eq!(split.as_ref(), Some(&one), "{shards} shards");
        }
        assert!(one.alloc_stacks.iter().any(|&stack| stack != u32::MAX));
    }
}
