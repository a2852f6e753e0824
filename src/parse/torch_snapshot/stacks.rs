//! Interned stacks (lists of frame ids), kept flat: every stack's ids one after the other in
//! one vector, where each ends in another, and an open-addressing table of stack ids by hash.
//! A fold of a large trace interns tens of thousands of distinct stacks per chunk; as a
//! vector per stack plus a boxed copy as the key of a map, they were two small allocations
//! each, which the allocator kept resident (in the chunk threads' arenas) long after they
//! were freed. Here a table is a handful of vectors, whatever the number of stacks.

/// Stacks interned by content; id 0 is the empty stack.
#[derive(Debug)]
pub(super) struct StackTable {
    /// The frame ids of every stack, in id order.
    ids: Vec<u32>,
    /// Where each stack ends in `ids` (it starts where the one before ends).
    ends: Vec<usize>,
    /// Each stack's hash ([`hash_ids`]).
    hashes: Vec<u64>,
    /// Open addressing, linear probing: a stack id plus one, 0 for an empty slot; its length
    /// a power of two, at most 7/8 full.
    table: Vec<u32>,
}

impl Default for StackTable {
    fn default() -> Self {
        let mut stacks = StackTable {
            ids: Vec::new(),
            ends: Vec::new(),
            hashes: Vec::new(),
            table: vec![0; 16],
        };
        stacks.intern(&[]);
        stacks
    }
}

/// The hash of a stack's ids: FxHash's multiply-rotate two ids at a time, then splitmix64's
/// finalizer so that the low bits (the table's index) depend on every id. No input controls
/// the ids: the fold assigns them densely.
fn hash_ids(ids: &[u32]) -> u64 {
    let mut hash = ids.len() as u64;
    let mut pairs = ids.chunks_exact(2);
    for pair in &mut pairs {
        let word = u64::from(pair[0]) | u64::from(pair[1]) << 32;
        hash = (hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    if let [last] = pairs.remainder() {
        hash = (hash.rotate_left(5) ^ u64::from(*last)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    let mut z = hash;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl StackTable {
    /// Stacks held (the empty one included).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The frame ids of stack `id`.
    pub(super) fn get(&self, id: usize) -> Option<&[u32]> {
        let end = *self.ends.get(id)?;
        let start = match id.checked_sub(1) {
            Some(before) => self.ends[before],
            None => 0,
        };
        self.ids.get(start..end)
    }

    /// Every stack's frame ids, in id order, flat, and where each stack ends in them.
    pub(super) fn flat(&self) -> (&[u32], &[usize]) {
        (&self.ids, &self.ends)
    }

    /// The id of the stack `ids` where it is held already (the table only read: threads look
    /// stacks up at once, as the merge does before it interns the new ones in order).
    pub(super) fn find(&self, ids: &[u32]) -> Option<u32> {
        let hash = hash_ids(ids);
        let mask = self.table.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let slot = *self.table.get(at)?;
            if slot == 0 {
                return None;
            }
            let id = (slot - 1) as usize;
            if self.hashes.get(id) == Some(&hash) && self.get(id) == Some(ids) {
                return Some(id as u32);
            }
            at = (at + 1) & mask;
        }
    }

    /// The id of the stack `ids` and whether it is new (then stored), or `None` when there
    /// are more stacks than ids can name.
    pub(super) fn intern(&mut self, ids: &[u32]) -> Option<(u32, bool)> {
        let hash = hash_ids(ids);
        let mask = self.table.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let slot = self.table[at];
            if slot == 0 {
                break;
            }
            let id = (slot - 1) as usize;
            if self.hashes[id] == hash && self.get(id) == Some(ids) {
                return Some((id as u32, false));
            }
            at = (at + 1) & mask;
        }
        let id = u32::try_from(self.ends.len())
            .ok()
            .filter(|&id| id < u32::MAX)?;
        self.ids.extend_from_slice(ids);
        self.ends.push(self.ids.len());
        self.hashes.push(hash);
        self.table[at] = id + 1;
        if self.ends.len() * 8 > self.table.len() * 7 {
            self.grow();
        }
        Some((id, true))
    }

    /// Doubles the table and places every stack again by its hash.
    fn grow(&mut self) {
        let mut table = vec![0u32; self.table.len() * 2];
        let mask = table.len() - 1;
        for (id, &hash) in self.hashes.iter().enumerate() {
            let mut at = hash as usize & mask;
            while table[at] != 0 {
                at = (at + 1) & mask;
            }
            table[at] = id as u32 + 1;
        }
        self.table = table;
    }

    /// The stacks as one vector each (the snapshot's form).
    pub(super) fn into_vecs(self) -> Vec<Vec<u32>> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let stack = self.ids[start..end].to_vec();
                start = end;
                stack
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::StackTable;

    proptest::proptest! {
        /// The table gives each distinct stack one id, in order of first appearance (the
        /// empty stack is 0), finds the ones held, and reads each back, as a map from the ids
        /// to their position in a list of the distinct stacks would.
        #[test]
        fn stack_table_interns_as_a_map_would(
            stacks in proptest::collection::vec(proptest::collection::vec(0u32..6, 0..5), 0..400),
        ) {
            let mut table = StackTable::default();
            let mut plain: Vec<Vec<u32>> = vec![Vec::new()];
            for stack in &stacks {
                let known = plain.iter().position(|seen| seen == stack);
                // `find` gives what `intern` gives for a stack held, and nothing for a new one.
                proptest::prop_assert_eq!(table.find(stack).map(|id| id as usize), known);
                let (id, new) = table.intern(stack).expect("room for ids");
                proptest::prop_assert_eq!(new, known.is_none());
                match known {
                    Some(position) => proptest::prop_assert_eq!(id as usize, position),
                    None => {
                        proptest::prop_assert_eq!(id as usize, plain.len());
                        plain.push(stack.clone());
                    }
                }
            }
            proptest::prop_assert_eq!(table.len(), plain.len());
            for (id, stack) in plain.iter().enumerate() {
                proptest::prop_assert_eq!(table.get(id), Some(&stack[..]));
            }
            proptest::prop_assert_eq!(table.get(plain.len()), None);
            proptest::prop_assert_eq!(table.into_vecs(), plain);
        }
    }
}
