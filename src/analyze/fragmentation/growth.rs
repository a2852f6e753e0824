//! Growth by site: sites that allocate again and again over a trace without freeing. The walk
//! over the trace names no site, so it can run on a thread of its own beside the replay.

use std::collections::HashMap;

use super::{AddressMap, SiteNamer};
use crate::model::snapshot::{Action, SiteGrowth, StackId, Trace};
use crate::model::Bytes;

/// Fewest never-freed allocations of one site that count as growth.
const GROWTH_MIN_ALLOCATIONS: u64 = 4;
/// Fewest quarters of the trace (by entry) they must be spread over: a site that allocates
/// once (parameters at construction, optimizer state at the first step) or only at the end
/// (the activations of the step in progress) is not growing.
const GROWTH_MIN_QUARTERS: u32 = 3;

/// Blocks allocated within a trace and not freed within it (of one stack or one site).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Kept {
    count: u64,
    bytes: u64,
    quarters: u8,
    first: usize,
    last: usize,
}

impl Kept {
    /// One block of `size` bytes allocated at entry `index` of a trace of `len` entries and
    /// not freed after it.
    pub(super) fn block(size: u64, index: usize, len: usize) -> Kept {
        let quarter = (index * 4 / len.max(1)).min(3);
        Kept {
            count: 1,
            bytes: size,
            quarters: 1 << quarter,
            first: index,
            last: index,
        }
    }

    /// Both sets of blocks (in any order: sums, saturated, and bounds).
    pub(super) fn join(&mut self, other: &Kept) {
        self.count += other.count;
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.quarters |= other.quarters;
        self.first = self.first.min(other.first);
        self.last = self.last.max(other.last);
    }
}

/// What [`site_growth`] learns from the trace alone, by stack (no site named yet, so it
/// can run on a thread of its own): allocations per stack, the stacks in the order they first
/// allocate, and the never-freed blocks per stack.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct StackGrowth {
    /// `(stack, allocations)`, in the order of each stack's first allocation.
    allocations: Vec<(StackId, u64)>,
    /// `(stack, kept)`, in any order.
    kept: Vec<(StackId, Kept)>,
}

impl StackGrowth {
    /// Growth from its two halves: allocations per stack in the order of each stack's first
    /// allocation, and the blocks kept, by stack, in any order.
    pub(super) fn new(allocations: Vec<(StackId, u64)>, kept: Vec<(StackId, Kept)>) -> Self {
        StackGrowth { allocations, kept }
    }

    /// Tests: the kept blocks in the order of their stacks (they come in any order).
    #[cfg(test)]
    pub(super) fn sorted(mut self) -> Self {
        self.kept.sort_unstable_by_key(|&(stack, _)| stack);
        self
    }
}

/// Kept blocks joined by stack, in any order.
pub(super) fn kept_by_stack(
    blocks: impl IntoIterator<Item = (StackId, Kept)>,
) -> Vec<(StackId, Kept)> {
    let mut by_stack: AddressMap<Kept> = AddressMap::default();
    for (stack, kept) in blocks {
        match by_stack.entry(u64::from(stack)) {
            std::collections::hash_map::Entry::Occupied(mut joined) => joined.get_mut().join(&kept),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(kept);
            }
        }
    }
    by_stack
        .into_iter()
        .map(|(stack, kept)| (stack as StackId, kept))
        .collect()
}

pub(super) fn growth_by_stack(trace: &Trace) -> StackGrowth {
    let _timing = crate::parse::pickle::profile::phase(|| "analysis: growth by stack".to_string());
    struct Held {
        stack: StackId,
        size: u64,
        index: usize,
    }
    let mut live: AddressMap<Held> = AddressMap::default();
    // Index of each stack in `allocations`.
    let mut slots: AddressMap<u32> = AddressMap::default();
    let mut allocations: Vec<(StackId, u64)> = Vec::new();
    for (index, entry) in trace.range(0, trace.len()) {
        match entry.action() {
            Action::Alloc => {
                let slot = *slots.entry(u64::from(entry.stack)).or_insert_with(|| {
                    allocations.push((entry.stack, 0));
                    (allocations.len() - 1) as u32
                });
                if let Some((_, count)) = allocations.get_mut(slot as usize) {
                    *count += 1;
                }
                live.insert(
                    entry.addr,
                    Held {
                        stack: entry.stack,
                        size: entry.size,
                        index,
                    },
                );
            }
            Action::FreeRequested | Action::FreeCompleted => {
                live.remove(&entry.addr);
            }
            _ => {}
        }
    }
    let len = trace.len();
    StackGrowth {
        allocations,
        kept: kept_by_stack(
            live.values()
                .map(|held| (held.stack, Kept::block(held.size, held.index, len))),
        ),
    }
}

/// Sites that allocate again and again over the trace without freeing: blocks allocated
/// within the trace and not freed within it, grouped by site, kept when there are at least
/// [`GROWTH_MIN_ALLOCATIONS`] spread over [`GROWTH_MIN_QUARTERS`] quarters; most bytes first.
/// Sites are named in the order the trace first allocates from them (so site numbers, which
/// break ties, come out as one walk over the trace gives them).
pub(super) fn site_growth(
    growth: StackGrowth,
    trace: &Trace,
    sites: &mut SiteNamer,
    top: usize,
) -> Vec<SiteGrowth> {
    let mut allocations: AddressMap<u64> = AddressMap::default();
    for (stack, count) in growth.allocations {
        *allocations.entry(u64::from(sites.site(stack))).or_insert(0) += count;
    }
    let mut by_site: HashMap<u32, Kept> = HashMap::new();
    for (stack, kept) in growth.kept {
        match by_site.entry(sites.site(stack)) {
            std::collections::hash_map::Entry::Occupied(mut site) => site.get_mut().join(&kept),
            std::collections::hash_map::Entry::Vacant(site) => {
                site.insert(kept);
            }
        }
    }
    let mut growing: Vec<(u32, Kept)> = by_site
        .into_iter()
        .filter(|(_, kept)| {
            kept.count >= GROWTH_MIN_ALLOCATIONS
                && kept.quarters.count_ones() >= GROWTH_MIN_QUARTERS
        })
        .collect();
    growing.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(&b.0)));
    growing
        .into_iter()
        .take(top)
        .map(|(site, kept)| SiteGrowth {
            site: sites.name(site),
            python_frames: sites
                .python_frames
                .get(site as usize)
                .cloned()
                .unwrap_or_default(),
            allocations: allocations
                .get(&u64::from(site))
                .copied()
                .unwrap_or(kept.count),
            never_freed: kept.count,
            never_freed_bytes: Bytes(kept.bytes),
            quarters: kept.quarters.count_ones(),
            first_time_us: trace[kept.first].time_us,
            last_time_us: trace[kept.last].time_us,
        })
        .collect()
}
