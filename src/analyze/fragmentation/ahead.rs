//! The replay's second pass started beside the first, before the peak is known.
//!
//! Pass 2 replays the trace backward from the snapshot to the peak (and to each OOM judged),
//! where it lists the blocks that hold memory. Its order is fixed: sites are named in the
//! order of the one-thread map's blocks, and the report's tie-breaks depend on it, so it
//! stays one replay on one map. But it need not wait for pass 1: it starts from the end at
//! once, on a thread of its own, while pass 1 finds the peak. Each stop's blocks are kept
//! as data (stack, the index that made the block, size, in the map's order), and the sites
//! are named later on the analysis thread, in the order pass 2 names them. A freed block's
//! allocation stack comes from pass 1 (`alloc_stacks`), which pass 2 only reads where the
//! block was made, so it is looked up when the blocks are named, once pass 1 is done.
//!
//! Where pass 1 finds a peak the replay has already gone past, the replay gives up
//! (`None`) and the analysis runs pass 2 after pass 1, as before: the report is the same.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{AllocatorState, State};
use crate::model::gpu::CudaOrdinal;
use crate::model::snapshot::{Action, Snapshot, StackId, Trace};
use crate::parse::pickle::profile;

/// The peak's entry index, once pass 1 has found it ([`UNKNOWN`] until then).
pub(super) struct PeakSignal {
    index: AtomicUsize,
}

const UNKNOWN: usize = usize::MAX;

impl PeakSignal {
    pub(super) fn new() -> PeakSignal {
        PeakSignal {
            index: AtomicUsize::new(UNKNOWN),
        }
    }

    /// Pass 1's peak (an entry index).
    pub(super) fn publish(&self, peak: usize) {
        self.index.store(peak.min(UNKNOWN - 1), Ordering::Release);
    }

    fn peak(&self) -> Option<usize> {
        let index = self.index.load(Ordering::Acquire);
        (index != UNKNOWN).then_some(index)
    }
}

/// One block holding memory at a stop: `(stack, made_at, size)`, where `made_at` is the
/// index of the `free_completed` whose undo made the block (`u32::MAX`: none), whose
/// allocation stack, from pass 1, replaces `stack` when pass 1 learnt one.
pub(super) type Held = (StackId, u32, u64);

/// What pass 2 saw at its stops.
pub(super) struct Ahead {
    /// The peak's entry index and its blocks holding memory, in the map's order.
    pub(super) peak: (usize, Vec<Held>),
    /// Each OOM judged (the first `max_ooms` in trace order): its index, the allocator
    /// state and the blocks holding memory.
    pub(super) ooms: Vec<(usize, AllocatorState, Vec<Held>)>,
    /// Whether the replay estimated a block's size (it undid the entries one thread undoes).
    pub(super) estimated_blocks: bool,
}

/// Pass 2 from the end of `trace`, stopping at the peak `signal` gives and at the first
/// `max_ooms` OOM entries; `None` where the peak turned out to be behind the replay.
pub(super) fn replay_ahead(
    snapshot: &Snapshot,
    device: CudaOrdinal,
    trace: &Trace,
    max_ooms: usize,
    signal: &PeakSignal,
) -> Option<Ahead> {
    let _timing = profile::phase(|| "analysis: replay pass 2 beside pass 1".to_string());
    let oom = Action::Oom.code();
    let detailed: Vec<usize> = trace
        .range(0, trace.len())
        .filter(|(_, entry)| entry.action_code() == oom)
        .map(|(index, _)| index)
        .take(max_ooms)
        .collect();
    let mut state = State::at_snapshot(snapshot, device);
    let mut ooms = Vec::new();
    let mut next_oom = detailed.len();
    let mut peak = None;
    for (index, entry) in trace.range(0, trace.len()).rev() {
        if let Some(at) = signal.peak() {
            if index < at && peak.is_none() {
                return None;
            }
            // Every entry from the end down to the earliest stop is undone, as on one thread.
            if index < at.min(detailed.first().copied().unwrap_or(at)) {
                break;
            }
            if index == at && peak.is_none() {
                peak = Some((at, held(&state)));
            }
        }
        if next_oom > 0 && detailed[next_oom - 1] == index {
            next_oom -= 1;
            ooms.push((index, state.view(), held(&state)));
        }
        state.undo(index, entry, &mut []);
    }
    // Where the peak was not known before the walk passed it (or ended), it gives up.
    Some(Ahead {
        peak: peak?,
        ooms,
        estimated_blocks: state.estimated_blocks,
    })
}

/// The blocks holding memory (not pending a free), in the map's order.
fn held(state: &State) -> Vec<Held> {
    state
        .blocks
        .values()
        .filter(|live| !live.pending)
        .map(|live| (live.stack, live.freed_at, live.size))
        .collect()
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
