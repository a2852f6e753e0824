//! Unit tests of the snapshot reader (`parse::torch_snapshot`).

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/h200-torch2.11/snap/{name}.pickle",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).unwrap()
}

#[test]
fn reads_fragmentation_fixture() {
    let snapshot = parse(&fixture("fragmentation")).unwrap();
    assert_eq!(snapshot.segments.len(), 2);
    assert_eq!(snapshot.segments[1].blocks.len(), 100);
    assert_eq!(snapshot.traces.len(), 1);
    assert_eq!(snapshot.traces[0].len(), 207);
    let oom = snapshot.traces[0].last().unwrap();
    assert_eq!(oom.action(), Action::Oom);
    assert_eq!(oom.device_free(), Some(535953408));
    assert_eq!(oom.size, 2147483648);
    assert!(!snapshot.allocator_settings.unwrap().expandable_segments);
    // Frames are shared: the same stack id for blocks allocated at the same line.
    let stacks: std::collections::HashSet<_> = snapshot.segments[1]
        .blocks
        .iter()
        .filter(|b| b.state == BlockState::ActiveAllocated)
        .map(|b| b.stack)
        .collect();
    assert_eq!(stacks.len(), 1);
    assert!(snapshot.stacks[*stacks.iter().next().unwrap() as usize].len() > 10);
}

#[test]
fn every_fixture_reads() {
    for name in [
        "capacity",
        "fragmentation",
        "fragmentation_expandable",
        "leak_growing",
        "leak_steady",
        "model_forward",
        "other_process",
    ] {
        let snapshot = parse(&fixture(name)).unwrap();
        assert_eq!(snapshot.traces.len(), 1, "{name}");
        assert!(snapshot.other_keys.is_empty(), "{name}");
    }
}

/// The start of `{"segments": [], "device_traces": [[entry, …]]}`, with the keys of
/// an entry memoized at 6–10; entry `i` is memo `11 + i`.
fn trace_head() -> Vec<u8> {
    let mut bytes =
        b"\x80\x04}\x94(\x8c\x08segments\x94]\x94\x8c\x0ddevice_traces\x94]\x94]\x94(".to_vec();
    for key in ["action", "addr", "size", "stream", "alloc"] {
        bytes.extend([0x8c, key.len() as u8]);
        bytes.extend(key.as_bytes());
        bytes.extend(b"\x940");
    }
    bytes
}

/// Trace entry `i`, as PyTorch writes one (a flat dict of memo references and ints);
/// `re_put` stores it again under its own memo index, as a hostile file may.
fn trace_entry(i: u32, re_put: bool) -> Vec<u8> {
    let mut bytes = b"}\x94(h\x06h\x0ah\x07J".to_vec();
    bytes.extend((i.wrapping_mul(512)).to_le_bytes());
    bytes.extend(b"h\x08K\x01h\x09K\x00u");
    if re_put {
        bytes.push(b'r');
        bytes.extend((11 + i).to_le_bytes());
    }
    bytes
}

const TRACE_TAIL: &[u8] = b"eau.";

/// An endless stream of trace entries, as a small gzip bomb inflates to.
struct EndlessTrace {
    pending: Vec<u8>,
    next: u32,
}

impl std::io::Read for EndlessTrace {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        while self.pending.len() < buffer.len() {
            self.pending.extend(trace_entry(self.next, false));
            self.next = self.next.wrapping_add(1);
        }
        let n = buffer.len();
        buffer.copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

// See: #14, item 8 (80k re-PUT entries, 1.1 MB: 117 s before).
#[test]
fn issue_14_re_put_of_trace_entries_is_linear() {
    let count = 80_000;
    let mut bytes = trace_head();
    for i in 0..count {
        bytes.extend(trace_entry(i, true));
    }
    bytes.extend(TRACE_TAIL);
    let started = std::time::Instant::now();
    let snapshot = parse(&bytes).unwrap();
    assert_eq!(snapshot.traces[0].len(), count as usize);
    assert_eq!(snapshot.traces[0][79_999].addr, 79_999 * 512);
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
}

// See: #14, item 8 (a 1 MB gzip of trace entries exhausted memory).
#[test]
fn issue_14_endless_trace_stops_at_the_memory_budget() {
    let limits = Limits {
        max_memory_bytes: 32 << 20,
        ..Limits::default()
    };
    let reader = EndlessTrace {
        pending: trace_head(),
        next: 0,
    };
    let error = read_with_limits(reader, limits).unwrap_err();
    assert!(
        matches!(
            error,
            TorchSnapshotError::Pickle(PickleError::Limit {
                what: "memory budget",
                limit,
                ..
            }) if limit == 32 << 20
        ),
        "{error}"
    );
}

#[test]
fn memory_budget_scales_with_the_stored_size() {
    assert_eq!(limits_for(None), Limits::default());
    assert_eq!(limits_for(Some(1 << 20)).max_memory_bytes, 512 << 20);
    assert_eq!(limits_for(Some(600 << 20)).max_memory_bytes, 4800 << 20);
}

/// One trace entry of [`memo_id_interning_equals_the_plain_decoder`]'s input.
#[derive(Debug, Clone)]
enum Step {
    /// An entry whose new `frames` list refers to these frame memo slots.
    List(Vec<usize>),
    /// An entry sharing the `frames` list of an earlier entry (a `BINGET` of it).
    Shared(usize),
    /// Frame slot `.0` is stored again with what slot `.1` holds (a re-PUT).
    RePut(usize, usize),
}

/// A pickle of a trace written two ways: `fast` as Python's pickler writes it
/// (`EMPTY_DICT MEMOIZE MARK … SETITEMS`, the decoder's fast path), `plain` with `DICT`
/// and `LIST` opcodes (the general path, containers built then folded). Returns both and
/// the frame numbers each entry should end up with.
fn two_encodings(frames: usize, steps: &[Step]) -> (Vec<u8>, Vec<u8>, Vec<Vec<usize>>) {
    fn memo_ref(out: &mut Vec<u8>, index: usize) {
        if index < 256 {
            out.extend([b'h', index as u8]);
        } else {
            out.push(b'j');
            out.extend((index as u32).to_le_bytes());
        }
    }
    let keys = ["action", "addr", "size", "stream", "alloc", "frames"];
    let mut head = trace_head();
    head.truncate(head.len() - keys[..5].iter().map(|k| k.len() + 4).sum::<usize>());
    for key in keys.iter().chain(&["name", "filename", "line"]) {
        head.extend([0x8c, key.len() as u8]);
        head.extend(key.as_bytes());
        head.extend(b"\x940");
    }
    // Memo: 6..=11 entry keys and `alloc`, 12..=14 frame keys, then the frames.
    let key = |name: &str| {
        6 + keys
            .iter()
            .chain(&["name", "filename", "line"])
            .position(|k| *k == name)
            .unwrap_or(0)
    };
    let mut memo = 15;
    for frame in 0..frames {
        head.extend(b"}\x94(");
        memo_ref(&mut head, key("name"));
        let name = format!("f{frame}");
        head.extend([0x8c, name.len() as u8]);
        head.extend(name.as_bytes());
        memo_ref(&mut head, key("filename"));
        head.extend(b"\x8c\x07file.py");
        memo_ref(&mut head, key("line"));
        head.extend([b'K', frame as u8, b'u', b'0']);
        memo += 1;
    }
    let (mut fast, mut plain) = (head.clone(), head);
    let (mut fast_memo, mut plain_memo) = (memo, memo);
    // Which frame each frame slot holds; memo indices of each entry's list; the answer.
    let mut holds: Vec<usize> = (0..frames).collect();
    let mut lists: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    let mut expected = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let slots = match step {
            Step::RePut(slot, from) => {
                let (slot, from) = (slot % frames, from % frames);
                for out in [&mut fast, &mut plain] {
                    memo_ref(out, 15 + from);
                    out.push(b'r');
                    out.extend((15 + slot as u32).to_le_bytes());
                    out.push(b'0');
                }
                holds[slot] = holds[from];
                continue;
            }
            Step::List(slots) => Some(slots),
            Step::Shared(_) if lists.is_empty() => continue,
            Step::Shared(_) => None,
        };
        let entry = |out: &mut Vec<u8>, list: &[u8]| {
            memo_ref(out, key("action"));
            memo_ref(out, key("alloc"));
            memo_ref(out, key("addr"));
            out.push(b'J');
            out.extend((index as u32).to_le_bytes());
            memo_ref(out, key("size"));
            out.extend(b"K\x01");
            memo_ref(out, key("stream"));
            out.extend(b"K\x00");
            memo_ref(out, key("frames"));
            out.extend(list);
        };
        match slots {
            Some(slots) => {
                let slots: Vec<usize> = slots.iter().map(|slot| slot % frames).collect();
                let mut refs = Vec::new();
                for slot in &slots {
                    memo_ref(&mut refs, 15 + slot);
                }
                let single = slots.len() == 1;
                let mut list = b"]\x94".to_vec();
                if !single {
                    list.push(b'(');
                }
                list.extend(&refs);
                list.push(if single { b'a' } else { b'e' });
                fast.extend(b"}\x94(");
                entry(&mut fast, &list);
                fast.push(b'u');
                let mut list = b"(".to_vec();
                list.extend(&refs);
                list.extend(b"l\x94");
                plain.push(b'(');
                entry(&mut plain, &list);
                plain.extend(b"d\x94");
                // Fast: the dict is memoized first; plain: the list, then the dict.
                lists.push((
                    fast_memo + 1,
                    plain_memo,
                    slots.iter().map(|s| holds[*s]).collect(),
                ));
                fast_memo += 2;
                plain_memo += 2;
            }
            None => {
                let Step::Shared(which) = step else { continue };
                let (fast_list, plain_list, frames) = lists[which % lists.len()].clone();
                let mut list = Vec::new();
                memo_ref(&mut list, fast_list);
                fast.extend(b"}\x94(");
                entry(&mut fast, &list);
                fast.push(b'u');
                list.clear();
                memo_ref(&mut list, plain_list);
                plain.push(b'(');
                entry(&mut plain, &list);
                plain.extend(b"d\x94");
                lists.push((fast_list, plain_list, frames));
                fast_memo += 1;
                plain_memo += 1;
            }
        }
        expected.push(lists[lists.len() - 1].2.clone());
    }
    fast.extend(TRACE_TAIL);
    plain.extend(TRACE_TAIL);
    (fast, plain, expected)
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    // A few list shapes, drawn again and again: the repeats a real trace has.
    let shapes = proptest::sample::select(vec![
        vec![0],
        vec![0, 1, 2],
        vec![2, 1, 0],
        vec![3, 3, 3, 3],
        vec![1, 2],
        vec![4, 0, 5, 1, 6, 2, 7],
    ]);
    prop_oneof![
        6 => shapes.prop_map(Step::List),
        2 => proptest::collection::vec(0usize..300, 1..40).prop_map(Step::List),
        2 => any::<usize>().prop_map(Step::Shared),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Step::RePut(a, b)),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// The fast path's list cache (keyed by memo ids) gives every entry the stack the
    /// general path builds, whatever the reuse of memo slots, lists and re-PUTs.
    #[test]
    fn memo_id_interning_equals_the_plain_decoder(
        frames in 1usize..300,
        steps in proptest::collection::vec(step(), 1..80),
    ) {
        let (fast, plain, expected) = two_encodings(frames, &steps);
        let fast = parse(&fast).unwrap();
        let plain = parse(&plain).unwrap();
        let names = |snapshot: &Snapshot| -> Vec<Vec<String>> {
            snapshot.traces[0]
                .iter()
                .map(|entry| {
                    snapshot
                        .stack_frames(entry.stack)
                        .iter()
                        .map(|frame| frame.name.clone())
                        .collect()
                })
                .collect()
        };
        let expected: Vec<Vec<String>> = expected
            .iter()
            .map(|frames| frames.iter().map(|frame| format!("f{frame}")).collect())
            .collect();
        proptest::prop_assert_eq!(&names(&fast), &expected);
        proptest::prop_assert_eq!(&names(&plain), &expected);
        proptest::prop_assert_eq!(&fast.traces, &plain.traces);
        proptest::prop_assert_eq!(&fast.stacks, &plain.stacks);
        proptest::prop_assert_eq!(&fast.frames, &plain.frames);
    }
}

/// One trace entry (or a re-PUT) of [`flat_entries_equal_the_plain_decoder`]'s input.
#[derive(Debug, Clone)]
enum Record {
    /// A dict with these keys (numbers into `RECORD_KEYS`) and values (see `record_value`).
    Dict(Vec<(usize, usize)>),
    /// Memo slot `.0` (of the keys, action names and frames) is stored again with what
    /// slot `.1` holds.
    RePut(usize, usize),
}

const RECORD_KEYS: [&str; 9] = [
    "action",
    "addr",
    "size",
    "stream",
    "time_us",
    "frames",
    "compile_context",
    "device_free",
    "user_metadata",
];
const RECORD_ACTIONS: [&str; 4] = ["alloc", "free_requested", "free_completed", "oom"];

/// A trace of `records` written as Python's pickler writes it (`EMPTY_DICT MEMOIZE MARK
/// … SETITEMS`: the decoder's flat-dict fast path) and with `DICT` and `LIST` opcodes
/// (the general path only). Memo: 6.. the keys, then the action names, then
/// `frames` frame dicts.
fn record_encodings(frames: usize, records: &[Record]) -> (Vec<u8>, Vec<u8>) {
    fn memo_ref(out: &mut Vec<u8>, index: usize) {
        if index < 256 {
            out.extend([b'h', index as u8]);
        } else {
            out.push(b'j');
            out.extend((index as u32).to_le_bytes());
        }
    }
    let mut head = trace_head();
    head.truncate(head.len() - 5 * 4 - "actionaddrsizestreamalloc".len());
    let names = RECORD_KEYS
        .iter()
        .chain(&RECORD_ACTIONS)
        .chain(&["name", "filename"]);
    for name in names {
        head.extend([0x8c, name.len() as u8]);
        head.extend(name.as_bytes());
        head.extend(b"\x940");
    }
    let first_frame = 6 + RECORD_KEYS.len() + RECORD_ACTIONS.len() + 2;
    let (name_key, filename_key) = (first_frame - 2, first_frame - 1);
    for frame in 0..frames {
        head.extend(b"}\x94(");
        memo_ref(&mut head, name_key);
        let name = format!("f{frame}");
        head.extend([0x8c, name.len() as u8]);
        head.extend(name.as_bytes());
        memo_ref(&mut head, filename_key);
        head.extend(b"\x8c\x07file.py");
        head.extend(b"u0");
    }
    let slots = first_frame + frames;
    let (mut fast, mut plain) = (head.clone(), head);
    let (mut fast_memo, mut plain_memo) = (slots, slots);
    // Memo ids of the lists written so far, in each encoding.
    let mut lists: Vec<(usize, usize)> = Vec::new();
    for (index, record) in records.iter().enumerate() {
        let pairs = match record {
            Record::RePut(slot, from) => {
                for out in [&mut fast, &mut plain] {
                    memo_ref(out, 6 + from % (slots - 6));
                    out.push(b'r');
                    out.extend((6 + (slot % (slots - 6)) as u32).to_le_bytes());
                    out.push(b'0');
                }
                continue;
            }
            Record::Dict(pairs) => pairs,
        };
        let (mut fast_items, mut plain_items) = (Vec::new(), Vec::new());
        // Memoized values inside the dict, in order: fast numbers them after the dict,
        // plain before it.
        let mut inner = 0;
        let mut new_lists = Vec::new();
        for (pair, &(key, value)) in pairs.iter().enumerate() {
            for out in [&mut fast_items, &mut plain_items] {
                memo_ref(out, 6 + key % RECORD_KEYS.len());
            }
            let number = (index * 7 + pair) as u32;
            match value % 11 {
                0 => {
                    for out in [&mut fast_items, &mut plain_items] {
                        out.extend([b'K', number as u8]);
                    }
                }
                1 => {
                    for out in [&mut fast_items, &mut plain_items] {
                        out.push(b'M');
                        out.extend((number as u16).to_le_bytes());
                    }
                }
                2 | 3 => {
                    let number = if value % 11 == 3 {
                        -(number as i32) - 1
                    } else {
                        number as i32
                    };
                    for out in [&mut fast_items, &mut plain_items] {
                        out.push(b'J');
                        out.extend(number.to_le_bytes());
                    }
                }
                4 => {
                    for out in [&mut fast_items, &mut plain_items] {
                        out.extend([0x8a, 6]);
                        out.extend(&(u64::from(number) << 20).to_le_bytes()[..6]);
                    }
                }
                5 => {
                    for out in [&mut fast_items, &mut plain_items] {
                        out.push(b'N');
                    }
                }
                6 | 7 => {
                    let action = 6 + RECORD_KEYS.len() + value / 11 % RECORD_ACTIONS.len();
                    for out in [&mut fast_items, &mut plain_items] {
                        memo_ref(out, action);
                    }
                }
                8 => {
                    for out in [&mut fast_items, &mut plain_items] {
                        out.extend(b"\x8c\x03N/A\x94");
                    }
                    inner += 1;
                }
                9 => {
                    let count = 1 + value / 11 % 5;
                    let mut refs = Vec::new();
                    for item in 0..count {
                        memo_ref(&mut refs, first_frame + (value / 7 + 3 * item) % frames);
                    }
                    fast_items.extend(b"]\x94");
                    if count > 1 {
                        fast_items.push(b'(');
                    }
                    fast_items.extend(&refs);
                    fast_items.push(if count > 1 { b'e' } else { b'a' });
                    plain_items.push(b'(');
                    plain_items.extend(&refs);
                    plain_items.extend(b"l\x94");
                    new_lists.push((fast_memo + 1 + inner, plain_memo + inner));
                    inner += 1;
                }
                _ => match lists.get(value / 11 % lists.len().max(1)) {
                    Some(&(fast_list, plain_list)) => {
                        memo_ref(&mut fast_items, fast_list);
                        memo_ref(&mut plain_items, plain_list);
                    }
                    None => {
                        for out in [&mut fast_items, &mut plain_items] {
                            out.push(b'N');
                        }
                    }
                },
            }
        }
        lists.extend(new_lists);
        fast.extend(b"}\x94(");
        fast.extend(&fast_items);
        fast.push(b'u');
        plain.push(b'(');
        plain.extend(&plain_items);
        plain.extend(b"d\x94");
        fast_memo += 1 + inner;
        plain_memo += 1 + inner;
    }
    fast.extend(TRACE_TAIL);
    plain.extend(TRACE_TAIL);
    (fast, plain)
}

/// What a decoded snapshot says about its trace, or the error without its byte offset
/// (the two encodings differ in length).
fn trace_outcome(result: Result<Snapshot, TorchSnapshotError>) -> String {
    match result {
        Ok(snapshot) => {
            let stacks: Vec<Vec<&str>> = snapshot
                .stacks
                .iter()
                .map(|stack| {
                    stack
                        .iter()
                        .map(|frame| snapshot.frames[*frame as usize].name.as_str())
                        .collect()
                })
                .collect();
            format!("{:?}\n{stacks:?}", snapshot.traces)
        }
        Err(TorchSnapshotError::Pickle(PickleError::Fold { reason, .. })) => reason,
        Err(TorchSnapshotError::Pickle(error)) => {
            let text = error.to_string();
            let cut = text.find(" at byte").unwrap_or(text.len());
            text[..cut].to_string()
        }
        Err(error) => error.to_string(),
    }
}

fn record() -> impl proptest::strategy::Strategy<Value = Record> {
    use proptest::prelude::*;
    let pair = (0usize..RECORD_KEYS.len(), 0usize..1000);
    // Mostly entries: `action` first with an action name; the rest drawn freely.
    let entry = (
        0usize..RECORD_ACTIONS.len(),
        proptest::collection::vec(pair.clone(), 0..8),
    )
        .prop_map(|(action, rest)| {
            let mut pairs = vec![(0, 6 + 11 * action)];
            // Unsigned fields mostly get an unsigned int (a bad one fails the trace).
            pairs.extend(rest.into_iter().map(|(key, value)| {
                let unsigned = matches!(key, 1 | 2 | 3 | 7);
                if unsigned && !matches!(value % 11, 0 | 1 | 2 | 4) && value / 11 % 8 != 0 {
                    (key, value / 11 * 11 + 4)
                } else {
                    (key, value)
                }
            }));
            Record::Dict(pairs)
        });
    // A few layouts, repeated as a real trace repeats one.
    let layouts = proptest::sample::select(vec![
        vec![(0, 6), (1, 4), (2, 2), (3, 0), (4, 4), (5, 9)],
        vec![(0, 17), (1, 4), (2, 1), (3, 0), (4, 4), (6, 8), (5, 9)],
        vec![
            (0, 28),
            (1, 4),
            (2, 2),
            (3, 0),
            (4, 4),
            (6, 8),
            (8, 5),
            (5, 10),
        ],
        vec![(0, 39), (7, 4), (2, 2), (3, 0), (4, 4), (5, 10)],
    ]);
    prop_oneof![
        16 => layouts.prop_map(Record::Dict),
        8 => entry,
        1 => proptest::collection::vec(pair, 0..8).prop_map(Record::Dict),
        2 => (0usize..64, 0usize..64).prop_map(|(a, b)| Record::RePut(a, b)),
    ]
}

/// Entries of one of the layouts of [`record`], with some values drawn freely (an int
/// field that is not an int, an action that is not a str, a list where a scalar was).
fn layout_record() -> impl proptest::strategy::Strategy<Value = Record> {
    use proptest::prelude::*;
    let layouts = proptest::sample::select(vec![
        vec![(0, 6), (1, 4), (2, 2), (3, 0), (4, 4), (5, 9)],
        vec![
            (0, 17),
            (1, 4),
            (2, 1),
            (3, 0),
            (4, 4),
            (6, 8),
            (5, 9),
            (8, 5),
        ],
        vec![(0, 28), (7, 4), (2, 2), (3, 0), (4, 4), (6, 8), (5, 10)],
    ]);
    let entry = (
        layouts,
        proptest::collection::vec(proptest::option::weighted(0.15, 0usize..1000), 8),
    )
        .prop_map(|(layout, changes)| {
            let pairs = layout
                .into_iter()
                .zip(changes)
                .map(|((key, value), change)| (key, change.unwrap_or(value)))
                .collect();
            Record::Dict(pairs)
        });
    prop_oneof![
        24 => entry,
        2 => record(),
        1 => (0usize..64, 0usize..64).prop_map(|(a, b)| Record::RePut(a, b)),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Runs of entries of one layout, as a real trace has, with some values straying
    /// from it (an int field that is not an int, an action that is not a str, a list
    /// where a scalar was) and memo slots of keys and frames stored again: the fast
    /// paths give the same trace, stacks and errors as the general path.
    #[test]
    fn perturbed_entries_equal_the_plain_decoder(
        frames in 1usize..40,
        records in proptest::collection::vec(layout_record(), 1..80),
    ) {
        let (fast, plain) = record_encodings(frames, &records);
        proptest::prop_assert_eq!(trace_outcome(parse(&fast)), trace_outcome(parse(&plain)));
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Entries read by the flat-dict fast path (with its interned strs and list cache)
    /// give the same trace, stacks and errors as the general path, whatever the keys,
    /// their order, their values, shared lists and re-PUTs of their memo slots.
    #[test]
    fn flat_entries_equal_the_plain_decoder(
        frames in 1usize..40,
        records in proptest::collection::vec(record(), 1..60),
    ) {
        let (fast, plain) = record_encodings(frames, &records);
        proptest::prop_assert_eq!(trace_outcome(parse(&fast)), trace_outcome(parse(&plain)));
    }
}

#[test]
fn a_segment_device_that_is_no_cuda_ordinal_is_named() {
    // {'segments': [{'device': 2**32, 'address': 0, 'total_size': 0}]}, protocol 2.
    let bytes = b"\x80\x02}(\x8c\x08segments]}(\x8c\x06device\x8a\x05\x00\x00\x00\x00\x01\x8c\x07addressK\x00\x8c\x0atotal_sizeK\x00uau.";
    match parse(bytes) {
        Err(TorchSnapshotError::Shape { path, reason }) => {
            assert_eq!(path, "segments[0].device");
            assert_eq!(reason, "is 4294967296, not a CUDA device ordinal");
        }
        other => panic!("{other:?}"),
    }
    let ordinal = bytes.iter().position(|b| *b == 0x8a).unwrap();
    let mut one = bytes.to_vec();
    one.splice(ordinal..ordinal + 7, *b"K\x01");
    let snapshot = parse(&one).unwrap();
    assert_eq!(snapshot.segments[0].device, CudaOrdinal(1));
}

#[test]
fn rejects_non_snapshots() {
    let error = parse(b"\x80\x04K\x01.").unwrap_err();
    assert_eq!(
        error.to_string(),
        "not a PyTorch memory snapshot: `(top level)` is an `int`, not a dict or list"
    );
}

/// `SHORT_BINUNICODE` of `text` (not memoized).
fn short(out: &mut Vec<u8>, text: &str) {
    out.extend([0x8c, text.len() as u8]);
    out.extend(text.as_bytes());
}

/// Opens a dict as Python's pickler writes it (`EMPTY_DICT MEMOIZE MARK`: the flat-dict
/// fast path; memoized at once) or for `DICT` (`MARK`: the general path); `memoized` gets
/// its memo slot, `memo` counts the slots.
fn open_dict(out: &mut Vec<u8>, flat: bool, memo: &mut usize, memoized: &mut Vec<usize>) {
    if flat {
        out.extend(b"}\x94(");
        memoized.push(*memo);
        *memo += 1;
    } else {
        out.push(b'(');
    }
}

/// Closes a dict [`open_dict`] opened (`SETITEMS`, or `DICT MEMOIZE`).
fn close_dict(out: &mut Vec<u8>, flat: bool, memo: &mut usize, memoized: &mut Vec<usize>) {
    if flat {
        out.push(b'u');
    } else {
        out.extend(b"d\x94");
        memoized.push(*memo);
        *memo += 1;
    }
}

/// The snapshot as a fold that builds every block dict reads it (`read_segment` on the
/// built dicts: what the fold's own reading of blocks must equal).
fn parse_building_blocks(bytes: &[u8]) -> Result<Snapshot, TorchSnapshotError> {
    let mut fold = SnapshotFold::new();
    fold.take_dicts = false;
    let root = pickle::decode(bytes, Limits::default(), &mut fold)?;
    fold.build(root)
}

/// The segments of a decoded snapshot, or its error.
fn segments_outcome(result: Result<Snapshot, TorchSnapshotError>) -> String {
    match result {
        Ok(snapshot) => {
            let stacks: Vec<Vec<&str>> = snapshot
                .stacks
                .iter()
                .map(|stack| {
                    let names = stack.iter();
                    names
                        .map(|frame| snapshot.frames[*frame as usize].name.as_str())
                        .collect()
                })
                .collect();
            format!("{:?}\n{stacks:?}", snapshot.segments)
        }
        Err(error) => error.to_string(),
    }
}

/// One key of a block dict and the value it holds (indices into the menus of
/// [`block_encodings`]).
type BlockPair = (usize, usize);

/// A segment's block: its pairs, written with the flat-dict opcodes or `DICT`, or a memo
/// reference to an earlier block.
#[derive(Debug, Clone)]
enum BlockRecord {
    Dict(Vec<BlockPair>, bool),
    Again(usize),
}

const BLOCK_KEYS: [&str; 7] = [
    "address",
    "size",
    "requested_size",
    "state",
    "frames",
    "history",
    "address",
];

/// `{'segments': [{'device': 0, 'address': …, 'total_size': …, 'blocks': [...]}, …],
/// 'device_traces': [[]]}` with the given blocks, segments of `per` blocks each; frame dicts
/// `{'name': 'fN', 'filename': 'f.py', 'line': N}` written where a `frames` value asks.
fn block_encodings(per: usize, blocks: &[BlockRecord]) -> Vec<u8> {
    let mut out = b"\x80\x04}(".to_vec();
    short(&mut out, "segments");
    out.extend(b"](");
    let mut memo = 0usize;
    let mut block_memo: Vec<usize> = Vec::new();
    for (index, segment) in blocks.chunks(per.max(1)).enumerate() {
        out.extend(b"}(");
        short(&mut out, "device");
        out.extend(b"K\x00");
        short(&mut out, "address");
        out.push(b'J');
        out.extend(((index as u32) << 24).to_le_bytes());
        short(&mut out, "total_size");
        out.push(b'J');
        out.extend((1u32 << 22).to_le_bytes());
        short(&mut out, "blocks");
        out.extend(b"](");
        for block in segment {
            match block {
                BlockRecord::Again(which) if !block_memo.is_empty() => {
                    let slot = block_memo[which % block_memo.len()];
                    out.push(b'j');
                    out.extend((slot as u32).to_le_bytes());
                }
                BlockRecord::Again(_) => out.push(b'N'),
                BlockRecord::Dict(pairs, flat) => {
                    open_dict(&mut out, *flat, &mut memo, &mut block_memo);
                    for &(key, value) in pairs {
                        short(&mut out, BLOCK_KEYS[key % BLOCK_KEYS.len()]);
                        match value % 16 {
                            0 => out.extend([b'K', (value / 16) as u8]),
                            1 => {
                                out.push(b'J');
                                out.extend((-(value as i32)).to_le_bytes());
                            }
                            2 => out.push(0x88),
                            3 => out.push(b'N'),
                            4 => short(&mut out, "active_allocated"),
                            5 => short(&mut out, "inactive"),
                            6 => short(&mut out, "active_pending_free"),
                            7 => short(&mut out, "bogus"),
                            8 => out.extend(b"]"),
                            9 | 10 => {
                                // A list of 1-3 frame dicts.
                                out.extend(b"](");
                                for frame in 0..1 + value / 16 % 3 {
                                    out.extend(b"}(");
                                    short(&mut out, "name");
                                    short(&mut out, &format!("f{}", (value + frame) % 7));
                                    short(&mut out, "filename");
                                    short(&mut out, "f.py");
                                    short(&mut out, "line");
                                    out.extend([b'K', ((value + frame) % 7) as u8]);
                                    out.push(b'u');
                                }
                                out.push(b'e');
                            }
                            11 => {
                                out.push(b'G');
                                out.extend(1.5f64.to_be_bytes());
                            }
                            12 => out.extend([0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
                            13 => out.extend([0x89]),
                            _ => {
                                out.push(b'J');
                                out.extend(((value as u32) << 9).to_le_bytes());
                            }
                        }
                    }
                    close_dict(&mut out, *flat, &mut memo, &mut block_memo);
                }
            }
        }
        out.extend(b"eu");
    }
    out.extend(b"e");
    short(&mut out, "device_traces");
    out.extend(b"]]au.");
    out
}

fn block_record() -> impl proptest::strategy::Strategy<Value = BlockRecord> {
    use proptest::prelude::*;
    // Mostly blocks as PyTorch writes them (address, size, requested_size, state, frames),
    // with some values drawn freely; some with keys and values drawn freely.
    let usual = (
        proptest::collection::vec(proptest::option::weighted(0.1, 0usize..400), 5),
        0usize..3,
        any::<bool>(),
    )
        .prop_map(|(changes, state, flat)| {
            let layout = [
                (0, 14 + 16 * 9),
                (1, 14 + 16 * 4),
                (2, 14),
                (3, 4 + state),
                (4, 9),
            ];
            let pairs = layout
                .into_iter()
                .zip(changes)
                .map(|((key, value), change)| match change {
                    Some(change) if change % 3 == 0 => (change, value),
                    Some(change) => (key, change),
                    None => (key, value),
                })
                .collect();
            BlockRecord::Dict(pairs, flat)
        });
    let free = (
        proptest::collection::vec((0usize..BLOCK_KEYS.len(), 0usize..400), 0..8),
        any::<bool>(),
    )
        .prop_map(|(pairs, flat)| BlockRecord::Dict(pairs, flat));
    prop_oneof![
        12 => usual,
        3 => free,
        1 => (0usize..64).prop_map(BlockRecord::Again),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Block dicts the fold reads as they are decoded give the segments (addresses run on
    /// where a block has none, sizes, states, stacks) and the errors that reading the built
    /// dicts gives: whatever their keys, order, repeated keys, values, and memo references.
    #[test]
    fn folded_blocks_equal_built_ones(
        per in 1usize..6,
        blocks in proptest::collection::vec(block_record(), 0..40),
    ) {
        let bytes = block_encodings(per, &blocks);
        proptest::prop_assert_eq!(
            segments_outcome(parse(&bytes)),
            segments_outcome(parse_building_blocks(&bytes))
        );
    }
}

#[test]
fn blocks_are_read_as_the_decoder_meets_them() {
    // A usual block, one without an address (it runs on from the one before) and one whose
    // state names nothing: the first two are taken as decoded, the third is built and named.
    let usual = |state| {
        vec![
            (0, 14 + 16 * 9),
            (1, 14 + 16 * 4),
            (2, 14),
            (3, state),
            (4, 9),
        ]
    };
    let mut no_address = usual(5);
    no_address.remove(0);
    let blocks = [
        BlockRecord::Dict(usual(4), true),
        BlockRecord::Dict(no_address, false),
        BlockRecord::Again(0),
    ];
    let bytes = block_encodings(4, &blocks);
    let snapshot = parse(&bytes).unwrap();
    let segment = &snapshot.segments[0];
    assert_eq!(segment.blocks.len(), 3);
    assert_eq!(
        segment.blocks[1].address,
        segment.blocks[0].address + segment.blocks[0].size.0
    );
    assert_eq!(segment.blocks[1].state, BlockState::Inactive);
    assert_eq!(segment.blocks[2].address, segment.blocks[0].address);
    assert_ne!(segment.blocks[0].stack, 0);
    assert_eq!(
        segments_outcome(Ok(snapshot)),
        segments_outcome(parse_building_blocks(&bytes))
    );
    let bogus = block_encodings(4, &[BlockRecord::Dict(usual(7), true)]);
    assert_eq!(
        parse(&bogus).unwrap_err().to_string(),
        parse_building_blocks(&bogus).unwrap_err().to_string()
    );
    assert!(parse(&bogus)
        .unwrap_err()
        .to_string()
        .contains("segments[0].blocks[0].state"));
}

/// `{'segments': [], 'device_traces': [[]], 'external_annotations': [...]}` with the given
/// dicts (pairs of a key and a value, indices into the menus below; written with the
/// flat-dict opcodes or `DICT`), memo references to earlier ones, and non-dicts.
fn annotation_encodings(records: &[BlockRecord]) -> Vec<u8> {
    const KEYS: [&str; 6] = ["name", "stage", "device", "time_us", "other", "filename"];
    let mut out = b"\x80\x04}(".to_vec();
    short(&mut out, "segments");
    out.push(b']');
    short(&mut out, "device_traces");
    out.extend(b"]]a");
    short(&mut out, "external_annotations");
    out.extend(b"](");
    let (mut memo, mut dicts) = (0usize, Vec::new());
    for record in records {
        match record {
            BlockRecord::Again(which) if !dicts.is_empty() => {
                out.push(b'j');
                out.extend((dicts[which % dicts.len()] as u32).to_le_bytes());
            }
            BlockRecord::Again(which) => out.extend([b'K', *which as u8]),
            BlockRecord::Dict(pairs, flat) => {
                open_dict(&mut out, *flat, &mut memo, &mut dicts);
                for &(key, value) in pairs {
                    short(&mut out, KEYS[key % KEYS.len()]);
                    match value % 8 {
                        0 => short(&mut out, "START"),
                        1 => short(&mut out, "END"),
                        2 => short(&mut out, &format!("step{}", value / 8 % 5)),
                        3 => out.extend([b'K', (value / 8) as u8]),
                        4 => {
                            out.push(b'J');
                            out.extend((-(value as i32)).to_le_bytes());
                        }
                        5 => out.push(0x88),
                        6 => out.push(b'N'),
                        _ => {
                            out.push(b'G');
                            out.extend(2.5f64.to_be_bytes());
                        }
                    }
                }
                close_dict(&mut out, *flat, &mut memo, &mut dicts);
            }
        }
    }
    out.extend(b"eu.");
    out
}

fn annotation_record() -> impl proptest::strategy::Strategy<Value = BlockRecord> {
    use proptest::prelude::*;
    let pairs = |keys: usize| {
        (
            proptest::collection::vec((0usize..keys, 0usize..80), 0..6),
            any::<bool>(),
        )
            .prop_map(|(pairs, flat)| BlockRecord::Dict(pairs, flat))
    };
    // Mostly the keys annotations have; some with keys they do not.
    prop_oneof![
        8 => pairs(4),
        2 => pairs(6),
        1 => (0usize..64).prop_map(BlockRecord::Again),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Annotation dicts the fold reads as they are decoded give the annotations that
    /// reading the built dicts gives, whatever their keys, order, repeated keys, values
    /// and memo references.
    #[test]
    fn folded_annotations_equal_built_ones(
        records in proptest::collection::vec(annotation_record(), 0..30),
    ) {
        let bytes = annotation_encodings(&records);
        let outcome = |result: Result<Snapshot, TorchSnapshotError>| match result {
            Ok(snapshot) => format!("{:?}", snapshot.annotations),
            Err(error) => error.to_string(),
        };
        proptest::prop_assert_eq!(outcome(parse(&bytes)), outcome(parse_building_blocks(&bytes)));
    }
}

#[test]
fn annotations_are_read_as_the_decoder_meets_them() {
    // {'name': 'train_step', 'stage': 'START', 'device': 0, 'time_us': 7} as the fold takes
    // it, and one with a key annotations do not have, which is built.
    let usual = vec![(0, 2), (1, 0), (2, 3), (3, 3 + 8 * 7)];
    let mut other = usual.clone();
    other.push((4, 3));
    let bytes = annotation_encodings(&[
        BlockRecord::Dict(usual, true),
        BlockRecord::Dict(other, false),
    ]);
    let snapshot = parse(&bytes).unwrap();
    assert_eq!(snapshot.annotations.len(), 2);
    assert_eq!(snapshot.annotations[0].stage, "START");
    assert_eq!(snapshot.annotations[0].name, "step0");
    assert_eq!(snapshot.annotations[0].time_us, 7);
    assert_eq!(
        format!("{:?}", snapshot.annotations),
        format!("{:?}", parse_building_blocks(&bytes).unwrap().annotations)
    );
}
