//! The replay's second pass started beside the first, before the peak is known.
//!
//! Pass 2 replays the trace backward from the snapshot to the peak (and to each OOM judged),
//! where it lists the blocks that hold memory, in address order (the order their sites are
//! named in, on which the report's tie-breaks depend). Where an OOM is judged it stays one
//! replay on one map, but it need not wait for pass 1: it starts from the end at once, on a
//! thread of its own, while pass 1 finds the peak. (Where none is, the peak is its only stop,
//! and pass 1's shards list the peak's blocks once the peak is known: `sharded`.) Each stop's
//! blocks are kept as data (stack, the index that made the block, size, in address order),
//! and the sites are named later on the analysis thread, in the order pass 2 names them. A freed block's
//! allocation stack comes from pass 1 (`alloc_stacks`), which pass 2 only reads where the
//! block was made, so it is looked up when the blocks are named, once pass 1 is done.
//!
//! Where pass 1 finds a peak the replay has already gone past, the replay need not start
//! again from the end. Until it learns the peak it keeps pass 1's rule itself (the peak is
//! the earliest entry of the most allocated memory, walking backward), over the stretch it
//! has replayed: a peak pass 1 finds in that stretch is the replay's own best so far. And it
//! keeps a copy of its state at most [`SPAN`] entries after that best: the state at the
//! snapshot, or a clone taken where a new best lay farther than that from the copy. A clone
//! of the state keeps the blocks map's layout (std's `HashMap` is hashbrown's, 0.16.1 in
//! Rust 1.95: `src/raw/mod.rs`, `RawTable::clone` and `clone_from` copy the control bytes
//! and put each element at its own index, with the counts of items and room), and the
//! same undos on the same layout give the same layout, so the copy replayed on to the peak
//! lists the peak's blocks in the one-thread map's order. The copy costs one map (a few MB)
//! where a new best lies far back, and at most [`SPAN`] undos once the peak is known.
//! Where pass 1's peak is not the replay's best (they disagree: never, as the passes are
//! the same replay), the replay gives up (`None`) and the analysis runs pass 2 after pass 1.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{AllocatorState, State};
use crate::model::gpu::CudaOrdinal;
use crate::model::snapshot::{Action, Snapshot, StackId, Trace};
use crate::parse::pickle::profile;

/// The peak's entry index, once pass 1 has found it ([`UNKNOWN`] until then).
pub(super) struct PeakSignal {
    index: AtomicUsize,
    /// Tests: the peak appears after this many reads more (see [`PeakSignal::late`]).
    #[cfg(test)]
    late: Option<(AtomicUsize, usize)>,
}

const UNKNOWN: usize = usize::MAX;

impl PeakSignal {
    pub(super) fn new() -> PeakSignal {
        PeakSignal {
            index: AtomicUsize::new(UNKNOWN),
            #[cfg(test)]
            late: None,
        }
    }

    /// Tests: a signal that gives `peak` from its `reads + 1`th read on (as pass 1 publishing
    /// while the replay runs, at any point of it).
    #[cfg(test)]
    pub(super) fn late(peak: usize, reads: usize) -> PeakSignal {
        PeakSignal {
            index: AtomicUsize::new(UNKNOWN),
            late: Some((AtomicUsize::new(reads), peak)),
        }
    }

    /// Pass 1's peak (an entry index).
    pub(super) fn publish(&self, peak: usize) {
        self.index.store(peak.min(UNKNOWN - 1), Ordering::Release);
    }

    fn peak(&self) -> Option<usize> {
        #[cfg(test)]
        if let Some((reads, peak)) = &self.late {
            let left = reads.load(Ordering::Relaxed);
            if left == 0 {
                return Some(*peak);
            }
            reads.store(left - 1, Ordering::Relaxed);
            return None;
        }
        let index = self.index.load(Ordering::Acquire);
        (index != UNKNOWN).then_some(index)
    }
}

/// One block holding memory at a stop: `(stack, made_at, size)`, where `made_at` is the
/// index of the `free_completed` whose undo made the block (`u32::MAX`: none), whose
/// allocation stack, from pass 1, replaces `stack` when pass 1 learnt one.
pub(super) type Held = (StackId, u32, u64);

/// The peak as pass 2 saw it: its blocks, or, where the replay had not learnt it when it
/// ended, its own best so far and the copy to replay on to it.
pub(super) enum AheadPeak {
    /// The peak's entry index and its blocks holding memory, in the map's order.
    Held(usize, Vec<Held>),
    /// The peak is not known yet: see [`Candidate`].
    Pending(Candidate),
}

/// The replay's own record of the peak while pass 1 has not published it.
pub(super) struct Candidate {
    /// The earliest entry of the most allocated memory replayed so far: `(allocated, index)`.
    best: (u64, usize),
    /// The state at entry `.0` (before its undo), `.0 >= best.1`, at most [`SPAN`] entries
    /// after the best; `None`: the state at the snapshot, at the trace's last entry.
    copy: Option<(usize, State)>,
}

/// Most undos from the copy to the peak (a clone of the state costs about as much as a few
/// tens of thousands of undos; fewer clones leave more undos once the peak is known).
const SPAN: usize = 1 << 16;

impl Candidate {
    fn new(state: &State, len: usize) -> Candidate {
        Candidate {
            best: (state.allocated, len.saturating_sub(1)),
            copy: None,
        }
    }

    /// Sees the state at entry `index` (before its undo), walking backward from the end.
    #[inline]
    fn see(&mut self, index: usize, state: &State, len: usize, span: usize) {
        // Pass 1's rule (`first_pass_here`): the earliest entry of the most memory.
        if state.allocated < self.best.0 {
            return;
        }
        self.best = (state.allocated, index);
        let copied_at = self
            .copy
            .as_ref()
            .map_or(len.saturating_sub(1), |copy| copy.0);
        if copied_at - index > span {
            match &mut self.copy {
                Some(copy) => {
                    copy.0 = index;
                    copy.1.clone_from(state);
                }
                None => self.copy = Some((index, state.clone())),
            }
        }
    }

    /// The blocks holding memory at `peak`, pass 1's peak: the copy replayed on to it;
    /// `None` where `peak` is not this record's best.
    fn held_at(
        self,
        peak: usize,
        snapshot: &Snapshot,
        device: CudaOrdinal,
        trace: &Trace,
    ) -> Option<Vec<Held>> {
        if self.best.1 != peak {
            return None;
        }
        let _timing = profile::phase(|| "analysis: pass 2 from its copy".to_string());
        let (from, mut state) = match self.copy {
            Some(copy) => copy,
            None => (
                trace.len().saturating_sub(1),
                State::at_snapshot(snapshot, device),
            ),
        };
        for (index, entry) in trace.range(peak + 1, from + 1).rev() {
            state.undo(index, entry, &mut []);
        }
        Some(held(&state))
    }
}

/// What pass 2 saw at its stops.
pub(super) struct Ahead {
    /// The peak: its blocks holding memory, or how to find them.
    pub(super) peak: AheadPeak,
    /// Each OOM judged (the first `max_ooms` in trace order): its index, the allocator
    /// state and the blocks holding memory.
    pub(super) ooms: Vec<(usize, AllocatorState, Vec<Held>)>,
    /// Whether the replay estimated a block's size (it undid the entries one thread undoes).
    pub(super) estimated_blocks: bool,
}

/// Pass 2 from the end of `trace`, stopping at the peak `signal` gives and at the first
/// `max_ooms` OOM entries; `None` where pass 1's peak is behind the replay and not its best,
/// and at once where no OOM is judged (pass 1's shards then list the peak's blocks).
pub(super) fn replay_ahead(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    max_ooms: usize,
    signal: &PeakSignal,
) -> Option<Ahead> {
    let oom = Action::Oom.code();
    if max_ooms == 0
        || !trace
            .range(0, trace.len())
            .any(|(_, entry)| entry.action_code() == oom)
    {
        return None;
    }
    replay_ahead_with(snapshot, device, trace, max_ooms, signal, SPAN)
}

/// [`replay_ahead`] with copies at most `span` entries after the best.
pub(super) fn replay_ahead_with(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    max_ooms: usize,
    signal: &PeakSignal,
    span: usize,
) -> Option<Ahead> {
    let _timing = profile::phase(|| "analysis: replay pass 2 beside pass 1".to_string());
    let oom = Action::Oom.code();
    let detailed: Vec<usize> = trace
        .range(0, trace.len())
        .filter(|(_, entry)| entry.action_code() == oom)
        .map(|(index, _)| index)
        .take(max_ooms)
        .collect();
    let len = trace.len();
    let mut state = State::at_snapshot(snapshot, device);
    let mut candidate = Some(Candidate::new(&state, len));
    let mut ooms = Vec::new();
    let mut next_oom = detailed.len();
    let mut peak = None;
    for (index, entry) in trace.range(0, len).rev() {
        match signal.peak() {
            Some(at) => {
                if peak.is_none() {
                    if index < at {
                        // The replay went past the peak: its copy is replayed on to it.
                        let record = candidate.take()?;
                        peak = Some((at, record.held_at(at, snapshot, device, trace)?));
                    } else if index == at {
                        peak = Some((at, held(&state)));
                    }
                    // The peak is here or ahead: the record and its copy are not needed.
                    candidate = None;
                }
                // Every entry from the end down to the earliest stop is undone, as on one thread.
                if index < at.min(detailed.first().copied().unwrap_or(at)) {
                    break;
                }
            }
            None => {
                if let Some(candidate) = &mut candidate {
                    candidate.see(index, &state, len, span);
                }
            }
        }
        if next_oom > 0 && detailed[next_oom - 1] == index {
            next_oom -= 1;
            ooms.push((index, state.view(), held(&state)));
        }
        state.undo(index, entry, &mut []);
    }
    let peak = match (peak, candidate) {
        (Some((at, held)), _) => AheadPeak::Held(at, held),
        // The walk ended before pass 1 published the peak: it may have done so since.
        (None, Some(record)) => match signal.peak() {
            Some(at) => AheadPeak::Held(at, record.held_at(at, snapshot, device, trace)?),
            None => AheadPeak::Pending(record),
        },
        (None, None) => return None,
    };
    Some(Ahead {
        peak,
        ooms,
        estimated_blocks: state.estimated_blocks,
    })
}

impl Ahead {
    /// Pass 2 with the peak as its only stop, whose blocks `held` lists (in address order).
    pub(super) fn at_peak(peak: usize, held: Vec<Held>) -> Ahead {
        Ahead {
            peak: AheadPeak::Held(peak, held),
            ooms: Vec::new(),
            estimated_blocks: false,
        }
    }

    /// The blocks holding memory at pass 1's `peak`, in the map's order; `None` where the
    /// replay cannot give them (pass 2 then runs after pass 1).
    pub(super) fn peak_blocks(
        &mut self,
        peak: usize,
        snapshot: &Snapshot,
        device: CudaOrdinal,
        trace: &Trace,
    ) -> Option<Vec<Held>> {
        let seen = std::mem::replace(&mut self.peak, AheadPeak::Held(peak, Vec::new()));
        match seen {
            AheadPeak::Held(at, held) => (at == peak).then_some(held),
            AheadPeak::Pending(record) => record.held_at(peak, snapshot, device, trace),
        }
    }
}

/// The blocks holding memory (not pending a free), in address order: the order the sites
/// are named in, the same however the blocks were found (one map, or shards).
pub(super) fn held(state: &State) -> Vec<Held> {
    let mut held: Vec<(u64, Held)> = state
        .blocks
        .iter()
        .filter(|(_, live)| !live.pending)
        .map(|(&address, live)| (address, (live.stack, live.freed_at, live.size)))
        .collect();
    held.sort_unstable_by_key(|&(address, _)| address);
    held.into_iter().map(|(_, held)| held).collect()
}

/// The allocation stack of a held block, as pass 2 on one thread sets it: pass 1's stack
/// for a block made by undoing a `free_completed`, where pass 1 learnt one.
pub(super) fn stack_of(held: &Held, alloc_stacks: &[StackId]) -> StackId {
    let (stack, made_at, _) = *held;
    match alloc_stacks.get(made_at as usize) {
        Some(&learnt) if learnt != u32::MAX => learnt,
        _ => stack,
    }
}

#[cfg(test)]
mod tests {
    use super::super::AddressMap;

    /// A clone of a blocks map (fresh, or into a map of another size) iterates in the
    /// original's order after the same inserts and removals: what the copy relies on.
    #[test]
    fn a_cloned_map_keeps_the_originals_order_under_the_same_changes() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut change = |maps: &mut [&mut AddressMap<u64>]| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let key = (seed % 5000) * 512;
            for map in maps.iter_mut() {
                if (seed >> 40) % 3 == 0 {
                    map.remove(&key);
                } else {
                    map.insert(key, seed);
                }
            }
        };
        let mut map = AddressMap::default();
        for _ in 0..30_000 {
            change(&mut [&mut map]);
        }
        let mut copy = map.clone();
        let mut reused: AddressMap<u64> = (0..10).map(|key| (key, key)).collect();
        reused.clone_from(&map);
        for _ in 0..30_000 {
            change(&mut [&mut map, &mut copy, &mut reused]);
        }
        let order = |map: &AddressMap<u64>| map.iter().map(|(&k, &v)| (k, v)).collect::<Vec<_>>();
        assert!(map.len() > 1000);
        assert_eq!(order(&copy), order(&map));
        assert_eq!(order(&reused), order(&map));
    }
}
