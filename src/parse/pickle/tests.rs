//! Tests of the decoder: plain data, sharing, refusals, limits and the fast path.

use super::*;

fn dict(pairs: Vec<(Value, Value)>) -> Value {
    let depth = 1 + pairs
        .iter()
        .map(|(k, v)| k.depth().max(v.depth()))
        .max()
        .unwrap_or(0);
    Value::Dict(Rc::new(Container {
        depth,
        items: pairs,
    }))
}

fn s(text: &str) -> Value {
    Value::Str(Rc::new(text.to_string()))
}

/// `pickle.dumps({'a': [1, -2, 2**40, 'x', None, True, 1.5, b'hi'], 'b': (0, 0)}, protocol=4)`
const SIMPLE: &[u8] = b"\x80\x04\x95:\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94]\x94(K\x01J\xfe\xff\xff\xff\x8a\x06\x00\x00\x00\x00\x00\x01\x8c\x01x\x94N\x88G?\xf8\x00\x00\x00\x00\x00\x00C\x02hi\x94e\x8c\x01b\x94K\x00K\x00\x86\x94u.";

#[test]
fn decodes_plain_data() {
    let value = parse(SIMPLE).unwrap();
    let list = value.get("a").unwrap().as_seq().unwrap();
    assert_eq!(list[0], Value::Int(1));
    assert_eq!(list[1], Value::Int(-2));
    assert_eq!(list[2], Value::Int(1 << 40));
    assert_eq!(list[3], s("x"));
    assert_eq!(list[4], Value::None);
    assert_eq!(list[5], Value::Bool(true));
    assert_eq!(list[6], Value::Float(1.5));
    assert_eq!(list[7], Value::Bytes(Rc::new(b"hi".to_vec())));
    assert_eq!(
        value.get("b").unwrap().as_seq().unwrap(),
        &[Value::Int(0), Value::Int(0)]
    );
}

/// `d = {'a': 1}; pickle.dumps([[d], [d]], protocol=4)`: the case serde-pickle gets wrong.
const SHARED: &[u8] = b"\x80\x04\x95\x16\x00\x00\x00\x00\x00\x00\x00]\x94(]\x94}\x94\x8c\x01a\x94K\x01sa]\x94h\x02ae.";

#[test]
fn memo_shared_containers_are_shared_not_copied() {
    let value = parse(SHARED).unwrap();
    let outer = value.as_seq().unwrap();
    let first = &outer[0].as_seq().unwrap()[0];
    let second = &outer[1].as_seq().unwrap()[0];
    assert_eq!(first, &dict(vec![(s("a"), Value::Int(1))]));
    match (first, second) {
        (Value::Dict(a), Value::Dict(b)) => assert!(Rc::ptr_eq(a, b)),
        _ => panic!("expected dicts"),
    }
}

#[test]
fn refuses_code_execution() {
    // pickle.dumps(os.system, protocol=4) starts with STACK_GLOBAL after two strings
    let bytes =
        b"\x80\x04\x95\x14\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94\x93\x94.";
    let error = parse(bytes).unwrap_err();
    assert_eq!(
        error.to_string(),
        "pickle opcode `STACK_GLOBAL` at byte 28 would import or call code; oomdoc never executes pickles"
    );
    let error = parse(b"\x80\x02cos\nsystem\n.").unwrap_err();
    assert!(matches!(
        error,
        PickleError::Refused {
            offset: 2,
            opcode: "GLOBAL"
        }
    ));
}

#[test]
fn truncated_input_names_offset_and_opcode() {
    let error = parse(&SIMPLE[..30]).unwrap_err();
    assert!(matches!(error, PickleError::Truncated { .. }), "{error}");
    let error = parse(b"\x80\x04X\xff\xff\xff\x7f").unwrap_err();
    assert_eq!(
        error.to_string(),
        "pickle `BINUNICODE` at byte 2 exceeds the string length limit (2147483647 > 67108864)"
    );
    let error = parse(b"\x80\x04X\xff\xff\x00\x00ab").unwrap_err();
    assert_eq!(
        error.to_string(),
        "pickle ends early at byte 2 (inside `BINUNICODE`)"
    );
}

#[test]
fn recursive_structure_is_an_error() {
    // l = []; l.append(l); pickle.dumps(l, protocol=4)
    let bytes = b"\x80\x04\x95\x06\x00\x00\x00\x00\x00\x00\x00]\x94h\x00a.";
    let error = parse(bytes).unwrap_err();
    assert_eq!(
        error.to_string(),
        "malformed pickle at byte 15 (`APPEND`): cannot append to a list that was already referenced (a recursive structure?)"
    );
}

/// `l = []; pickle.dumps([l, l], protocol=4)`: a sibling reference to a finished list.
#[test]
fn reference_to_a_finished_sibling_is_shared() {
    let bytes = b"\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00]\x94(]\x94h\x01e.";
    let value = parse(bytes).unwrap();
    let items = value.as_seq().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0], items[1]);
}

#[test]
fn memo_gap_is_refused() {
    let error = parse(b"\x80\x02Nr\xff\xff\xff\x00.").unwrap_err();
    assert!(error.to_string().contains("skips ahead"), "{error}");
}

#[test]
fn depth_is_bounded() {
    let mut bytes = b"\x80\x04N".to_vec();
    bytes.extend(std::iter::repeat_n(0x85u8, 300));
    bytes.push(b'.');
    let error = parse(&bytes).unwrap_err();
    assert!(error.to_string().contains("nesting depth"), "{error}");
}

#[test]
fn big_ints_stay_inert_bytes() {
    // pickle.dumps(2**70, protocol=2)
    let value = parse(b"\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00@.").unwrap();
    assert_eq!(
        value,
        Value::BigInt(Rc::new(vec![0, 0, 0, 0, 0, 0, 0, 0, 0x40]))
    );
    assert_eq!(parse(b"\x80\x02\x8a\x01\xff.").unwrap(), Value::Int(-1));
    assert_eq!(parse(b"\x80\x02\x8a\x00.").unwrap(), Value::Int(0));
    assert_eq!(
        parse(b"\x80\x02\x8a\x02\x00\x80.").unwrap(),
        Value::Int(-32768)
    );
    assert_eq!(
        parse(b"\x80\x02\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.").unwrap(),
        Value::Int(i64::MAX)
    );
}

fn is_memory_budget(result: Result<Value, PickleError>) -> bool {
    matches!(
        result,
        Err(PickleError::Limit {
            what: "memory budget",
            ..
        })
    )
}

// See: #14, item 8 (a 1 MB gzip of MEMOIZE, 1 GB inflated, exhausted memory).
#[test]
fn issue_14_memoize_flood_stops_at_the_memory_budget() {
    let reader = (&b"\x80\x04N"[..]).chain(std::io::repeat(0x94).take(1 << 30));
    let result = decode(reader, Limits::default(), &mut KeepAll);
    assert!(is_memory_budget(result));
}

// See: #14, item 8 (16 KB of `]` took 1.4 GB).
#[test]
fn issue_14_empty_list_flood_is_bounded() {
    for op in [b']', b'}', b'(', b'2'] {
        let reader = (&b"\x80\x04N"[..]).chain(std::io::repeat(op).take(1 << 30));
        let result = decode(reader, Limits::default(), &mut KeepAll);
        assert!(result.is_err(), "{}", op as char);
    }
}

/// A fold for the list fast path: `{0: n}` is frame `n`, `{'e': [frames]}` an entry;
/// it records every list it is offered.
#[derive(Default)]
struct ListFold {
    lists: Vec<Vec<(u32, u32)>>,
    entries: Vec<u32>,
}

impl Fold for ListFold {
    fn finish(&mut self, container: Finished) -> Result<Value, String> {
        Ok(container.into_value())
    }

    fn dict(&mut self, items: &DictItems<'_>) -> Result<Option<Value>, String> {
        match (items.get(0), items.get(1)) {
            (Some(Item::Int(0)), Some(Item::Int(n))) => Ok(Some(Value::Handle(1, n as u32))),
            (Some(key), Some(Item::Value(Value::Handle(2, list)))) if key.as_str() == Some("e") => {
                self.entries.push(*list);
                Ok(Some(Value::Handle(3, *list)))
            }
            _ => Ok(None),
        }
    }

    fn list(&mut self, items: &ListItems<'_>) -> Result<Option<Value>, String> {
        self.lists.push(items.handles().to_vec());
        Ok(Some(Value::Handle(2, (self.lists.len() - 1) as u32)))
    }
}

/// Frames 5 and 6 (memo 1, 2), an entry whose list refers to memo 1, then `between`,
/// then an entry with the very same list bytes.
fn two_entries(between: &[u8]) -> Vec<u8> {
    let mut bytes = b"\x80\x04]\x94(}\x94(K\x00K\x05u}\x94(K\x00K\x06u".to_vec();
    bytes.extend_from_slice(b"}\x94(\x8c\x01e\x94]\x94(h\x01eu");
    bytes.extend_from_slice(between);
    bytes.extend_from_slice(b"}\x94(h\x04]\x94(h\x01eue.");
    bytes
}

/// The decoder folds a repeated list once (every allocation of a call site writes the
/// same references), and forgets what it cached when a memo slot is stored again.
#[test]
fn repeated_lists_fold_once_unless_the_memo_changed() {
    let mut fold = ListFold::default();
    decode(&two_entries(b"")[..], Limits::default(), &mut fold).unwrap();
    assert_eq!(
        fold.lists,
        vec![vec![(1, 5)]],
        "the second list is a cache hit"
    );
    assert_eq!(fold.entries, vec![0, 0]);

    // BINGET 2, BINPUT 1, POP: memo 1 now holds frame 6.
    let mut fold = ListFold::default();
    decode(
        &two_entries(b"h\x02q\x010")[..],
        Limits::default(),
        &mut fold,
    )
    .unwrap();
    assert_eq!(fold.lists, vec![vec![(1, 5)], vec![(1, 6)]]);
    assert_eq!(fold.entries, vec![0, 1]);
}

#[test]
fn value_is_sixteen_bytes() {
    assert_eq!(std::mem::size_of::<Value>(), 16);
}

/// Hands out its bytes a few at a time, in the sizes given (again and again), as a pipe or
/// a gzip stream may.
struct Trickle {
    bytes: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    read: usize,
}

impl std::io::Read for Trickle {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let size = self.sizes[self.read % self.sizes.len()].max(1);
        self.read += 1;
        let n = size.min(buffer.len()).min(self.bytes.len() - self.at);
        buffer[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// What a decode gave, comparable: the value, or the error's message (with its offset).
fn outcome(result: Result<Value, PickleError>) -> Result<Value, String> {
    result.map_err(|error| error.to_string())
}

/// A pickle with strs longer than a small chunk's headroom, a real snapshot's worth of
/// opcodes, and `SIMPLE`, in one list.
fn chunk_test_pickle() -> Vec<u8> {
    let real = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-torch2.11/snap/leak_growing.pickle"
    ))
    .unwrap();
    let mut bytes = b"\x80\x04](".to_vec();
    bytes.extend_from_slice(&real[2..real.len() - 1]);
    for len in [3usize, 300, 5000] {
        bytes.push(b'X');
        bytes.extend((len as u32).to_le_bytes());
        bytes.extend((0..len).map(|i| b'a' + (i % 26) as u8));
    }
    bytes.extend_from_slice(&SIMPLE[2..SIMPLE.len() - 1]);
    bytes.extend_from_slice(b"e.");
    bytes
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

    /// Input read ahead in chunks by another thread decodes exactly as input read in
    /// place, values and errors (with their byte offsets) alike, whatever the chunk and
    /// headroom sizes, the sizes of the reader's reads, and where the input is cut or
    /// changed.
    #[test]
    fn chunks_read_ahead_equal_reading_in_place(
        headroom in 1usize..6000,
        data in 1usize..9000,
        sizes in proptest::collection::vec(1usize..5000, 1..6),
        cut in proptest::prelude::any::<proptest::sample::Index>(),
        edits in proptest::collection::vec(
            (proptest::prelude::any::<proptest::sample::Index>(), proptest::prelude::any::<u8>()),
            0..3,
        ),
    ) {
        let mut bytes = chunk_test_pickle();
        for (at, byte) in edits {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        let whole = bytes.len();
        for len in [whole, cut.index(whole + 1)] {
            let input = &bytes[..len];
            let in_place = outcome(decode(input, Limits::default(), &mut KeepAll));
            let reader = Trickle {
                bytes: input.to_vec(),
                at: 0,
                sizes: sizes.clone(),
                read: 0,
            };
            let size = input::ChunkSize { headroom, data };
            let ahead = outcome(decode_in_chunks(reader, size, Limits::default(), &mut KeepAll));
            proptest::prop_assert_eq!(ahead, in_place);
        }
    }
}

/// A read error on the reading thread is the decoder's error, at the offset reached.
#[test]
fn read_error_ahead_is_reported_with_its_offset() {
    let reader = || (&SIMPLE[..20]).chain(FailingReader);
    let ahead = decode_prefetched(reader(), Limits::default(), &mut KeepAll).unwrap_err();
    let in_place = decode(reader(), Limits::default(), &mut KeepAll).unwrap_err();
    assert!(matches!(ahead, PickleError::Read { .. }), "{ahead:?}");
    assert_eq!(ahead.to_string(), in_place.to_string());
}

struct FailingReader;

impl std::io::Read for FailingReader {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("disk on fire"))
    }
}

/// `[d, d]` where `d` is written in the flat-dict shape (`EMPTY_DICT MEMOIZE MARK … SETITEMS`),
/// then given more items by a second `SETITEMS` and a `SETITEM`, then referenced again: a dict
/// the fold does not take stays open after the fast path read it, as the general path leaves
/// it, so the later items land in it and both references share it.
#[test]
fn flat_dict_the_fold_declines_stays_open() {
    let bytes = b"\x80\x04](}\x94(\x8c\x01a\x94K\x01\x8c\x01b\x94\x88u(\x8c\x01cK\x02u\x8c\x01dK\x03sh\x00e.";
    let value = parse(bytes).unwrap();
    let items = value.as_seq().unwrap();
    let expected = dict(vec![
        (s("a"), Value::Int(1)),
        (s("b"), Value::Bool(true)),
        (s("c"), Value::Int(2)),
        (s("d"), Value::Int(3)),
    ]);
    assert_eq!(items.len(), 2);
    assert_eq!(items[0], expected);
    match (&items[0], &items[1]) {
        (Value::Dict(a), Value::Dict(b)) => assert!(Rc::ptr_eq(a, b)),
        _ => panic!("expected dicts"),
    }
}
