//! The parallel decoder (`pickle::decode_file`) against the sequential one, on generated
//! snapshots written as Python's pickler writes them (protocol 4: `MEMOIZE` after every
//! str, dict and list; a memo reference for every repeat), with the trace in small batches
//! so that chunks cut through it anywhere, and memo references across every boundary.

use std::io::Write;

use super::*;
use crate::parse::pickle::{decode_file, scans_agree, Parallel};

/// Writes a pickle with Python's memo numbering.
#[derive(Default)]
struct Writer {
    out: Vec<u8>,
    memo: usize,
    strs: HashMap<String, usize>,
}

impl Writer {
    fn memoize(&mut self) -> usize {
        self.out.push(0x94);
        self.memo += 1;
        self.memo - 1
    }

    fn get(&mut self, index: usize) {
        if index < 256 {
            self.out.extend([b'h', index as u8]);
        } else {
            self.out.push(b'j');
            self.out.extend((index as u32).to_le_bytes());
        }
    }

    /// A str, by memo reference when written before.
    fn str(&mut self, text: &str) {
        if let Some(&index) = self.strs.get(text) {
            return self.get(index);
        }
        self.out.extend([0x8c, text.len() as u8]);
        self.out.extend(text.as_bytes());
        let index = self.memoize();
        self.strs.insert(text.to_string(), index);
    }

    fn int(&mut self, value: u32) {
        self.out.push(b'J');
        self.out.extend(value.to_le_bytes());
    }
}

/// A frame dict (`name`, `filename`, `line`) of frame `id`, memoized; returns its memo index.
fn frame_dict(w: &mut Writer, id: usize) -> usize {
    w.out.push(b'}');
    let index = w.memoize();
    w.out.push(b'(');
    w.str("name");
    w.str(&format!("f{id}"));
    w.str("filename");
    w.str(&format!("file{}.py", id % 7));
    w.str("line");
    w.int(id as u32 * 3);
    w.out.push(b'u');
    index
}

/// One trace entry of a generated snapshot.
#[derive(Debug, Clone)]
struct GenEntry {
    action: usize,
    addr: u32,
    size: u32,
    stream: usize,
    /// Frames (numbers into a pool of 40), or a list written before (reused by memo).
    frames: Result<Vec<usize>, usize>,
}

const ACTIONS: [&str; 4] = ["alloc", "free_requested", "free_completed", "segment_alloc"];

/// What to put after the trace: nothing, a reference to a frame or str made inside it, or a
/// reference to a trace entry (which the parallel decoder declines: then the file is read
/// sequentially).
#[derive(Debug, Clone, Copy)]
enum After {
    Nothing,
    Frame(usize),
    Entry(usize),
}

/// A snapshot: `prefix` frames defined before the trace, then the entries in batches of
/// `batch` (Python's 1000, made small), then what `after` says.
fn snapshot_bytes(prefix: &[usize], entries: &[GenEntry], batch: usize, after: After) -> Vec<u8> {
    let mut w = Writer::default();
    let mut frame_memo: HashMap<usize, usize> = HashMap::new();
    let mut entry_memo = Vec::new();
    let mut list_memo: Vec<usize> = Vec::new();
    let frame = |w: &mut Writer, memo: &mut HashMap<usize, usize>, id: usize| {
        if let Some(&index) = memo.get(&id) {
            return w.get(index);
        }
        let index = frame_dict(w, id);
        memo.insert(id, index);
    };
    w.out.extend(b"\x80\x04}");
    w.memoize();
    w.out.push(b'(');
    w.str("segments");
    w.out.push(b']');
    w.memoize();
    w.str("prefix_frames");
    w.out.push(b']');
    w.memoize();
    if !prefix.is_empty() {
        w.out.push(b'(');
        for &id in prefix {
            frame(&mut w, &mut frame_memo, id);
        }
        w.out.push(b'e');
    }
    w.str("device_traces");
    w.out.push(b']');
    w.memoize();
    w.out.push(b']');
    w.memoize();
    for group in entries.chunks(batch.max(1)) {
        if group.len() > 1 {
            w.out.push(b'(');
        }
        for entry in group {
            w.out.push(b'}');
            entry_memo.push(w.memoize());
            w.out.push(b'(');
            w.str("action");
            w.str(ACTIONS[entry.action % ACTIONS.len()]);
            w.str("addr");
            w.int(entry.addr);
            w.str("size");
            w.int(entry.size);
            w.str("stream");
            w.int(entry.stream as u32);
            w.str("time_us");
            w.int(entry.addr / 3);
            w.str("frames");
            match &entry.frames {
                Err(which) if !list_memo.is_empty() => {
                    let index = list_memo[which % list_memo.len()];
                    w.get(index);
                }
                Ok(ids) if !ids.is_empty() => {
                    w.out.push(b']');
                    list_memo.push(w.memoize());
                    if ids.len() > 1 {
                        w.out.push(b'(');
                    }
                    for &id in ids {
                        frame(&mut w, &mut frame_memo, id);
                    }
                    w.out.push(if ids.len() > 1 { b'e' } else { b'a' });
                }
                _ => {
                    w.out.push(b']');
                    w.memoize();
                }
            }
            w.out.push(b'u');
        }
        w.out.push(if group.len() > 1 { b'e' } else { b'a' });
    }
    w.out.push(b'a');
    match after {
        After::Nothing => {}
        After::Frame(id) => {
            w.str("extra");
            frame(&mut w, &mut frame_memo, id);
        }
        After::Entry(which) if !entry_memo.is_empty() => {
            w.str("extra");
            let index = entry_memo[which % entry_memo.len()];
            w.get(index);
        }
        After::Entry(_) => {}
    }
    w.out.extend(b"u.");
    w.out
}

/// A pickle of a frame dict of frame `id` (as `snapshot_bytes` writes it), or of a list of
/// such dicts.
fn frames_pickle(ids: &[usize], list: bool) -> Vec<u8> {
    let mut w = Writer::default();
    w.out.extend(b"\x80\x04");
    if list {
        w.out.push(b']');
        w.memoize();
        w.out.push(b'(');
    }
    for &id in ids {
        frame_dict(&mut w, id);
    }
    if list {
        w.out.push(b'e');
    }
    w.out.push(b'.');
    w.out
}

/// A frame or a stack that one thread's fold decoded on demand and shared, taken up by
/// another fold, gives what decoding the same bytes in that fold gives: the same handle, and
/// the fold left with the same frames, stacks and memory count (new frames interned in the
/// same order, among frames and stacks it held before).
#[test]
fn an_adopted_frame_or_stack_is_what_decoding_it_gives() {
    let decode = |fold: &mut SnapshotFold, bytes: &[u8]| -> Value {
        pickle::decode(bytes, Limits::default(), fold).unwrap()
    };
    let (stack, frame) = (
        frames_pickle(&[3, 1, 8, 3], true),
        frames_pickle(&[5], false),
    );
    let mut maker = SnapshotFold::new();
    decode(&mut maker, &frames_pickle(&[8, 2], true));
    let made = [decode(&mut maker, &stack), decode(&mut maker, &frame)];
    assert!(matches!(made[0], Value::Handle(STACK, _)), "{:?}", made[0]);
    assert!(matches!(made[1], Value::Handle(FRAME, _)), "{:?}", made[1]);
    let shared: Vec<Shared> = made
        .iter()
        .map(|value| maker.share(value).expect("a handle to share"))
        .collect();
    // Two folds that start alike (a frame and a stack of their own, another frame known).
    let start = || {
        let mut fold = SnapshotFold::new();
        decode(&mut fold, &frames_pickle(&[9, 1], true));
        decode(&mut fold, &frames_pickle(&[4], false));
        fold
    };
    let (mut adopting, mut decoding) = (start(), start());
    let adopted: Vec<Value> = shared
        .iter()
        .map(|shared| adopting.adopt(shared).expect("taken up"))
        .collect();
    let decoded = vec![decode(&mut decoding, &stack), decode(&mut decoding, &frame)];
    assert_eq!(adopted, decoded);
    assert_eq!(adopting.frames, decoding.frames);
    assert_eq!(adopting.interned_bytes, decoding.interned_bytes);
    // Anything else is not shared, and nothing else is taken up.
    assert!(maker.share(&Value::Int(3)).is_none());
    let other: Shared = std::sync::Arc::new(7u8);
    assert!(adopting.adopt(&other).is_none());
    assert_eq!(adopting.stacks.into_vecs(), decoding.stacks.into_vecs());
}

fn temp_file(bytes: &[u8]) -> std::fs::File {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(bytes).unwrap();
    file
}

fn parallel(threads: usize, chunks: usize) -> Parallel {
    Parallel {
        threads,
        chunks,
        scan_split_bytes: 1,
    }
}

/// The parallel decoder's snapshot (or shape error), or `None` when it declined.
fn decode_parallel_result(
    bytes: &[u8],
    parallel: Parallel,
) -> Option<Result<Snapshot, TorchSnapshotError>> {
    let file = temp_file(bytes);
    let (root, fold) = decode_file(&file, Limits::default(), parallel, SnapshotFold::new)?;
    Some(fold.build(root))
}

fn decode_parallel(bytes: &[u8], parallel: Parallel) -> Option<Snapshot> {
    decode_parallel_result(bytes, parallel).map(|snapshot| snapshot.unwrap())
}

fn entry_strategy() -> impl proptest::strategy::Strategy<Value = GenEntry> {
    use proptest::prelude::*;
    let frames = prop_oneof![
        4 => proptest::collection::vec(0usize..40, 0..6).prop_map(Ok),
        1 => any::<usize>().prop_map(Err),
    ];
    (0usize..4, 0u32..0x7fff_ffff, 0u32..5000, 0usize..3, frames).prop_map(
        |(action, addr, size, stream, frames)| GenEntry {
            action,
            addr,
            size,
            stream: stream * 7,
            frames,
        },
    )
}

fn after_strategy() -> impl proptest::strategy::Strategy<Value = After> {
    use proptest::prelude::*;
    prop_oneof![
        3 => Just(After::Nothing),
        2 => (0usize..40).prop_map(After::Frame),
        1 => any::<usize>().prop_map(After::Entry),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Any split of the trace into chunks, with frames, strs and frames lists defined in
    /// one chunk and referenced in later ones, decodes to the sequential decoder's snapshot
    /// (frame, stack and stream ids included).
    #[test]
    fn parallel_decoding_equals_sequential(
        prefix in proptest::collection::vec(0usize..40, 0..5),
        entries in proptest::collection::vec(entry_strategy(), 2..120),
        batch in 2usize..9,
        threads in 1usize..5,
        chunks in 1usize..9,
        after in after_strategy(),
    ) {
        let bytes = snapshot_bytes(&prefix, &entries, batch, after);
        let sequential = parse(&bytes).unwrap();
        // The parallel decoder splits a list of two batches or more, and declines a file
        // that refers to a trace entry from outside the trace.
        let batches = entries.chunks(batch).filter(|group| group.len() > 1).count();
        let splits = batches >= 2 && !matches!(after, After::Entry(_));
        let snapshot = decode_parallel(&bytes, parallel(threads, chunks));
        proptest::prop_assert_eq!(snapshot.is_some(), splits);
        if let Some(snapshot) = snapshot {
            proptest::prop_assert_eq!(format!("{snapshot:?}"), format!("{sequential:?}"));
        }
        let file = temp_file(&bytes);
        let read = read_file(&file, Limits::default(), parallel(threads, chunks)).unwrap();
        proptest::prop_assert_eq!(format!("{read:?}"), format!("{sequential:?}"));
        // The pre-scan cut in pieces (anywhere the cut pattern shows) finds the same plan.
        let scans = scans_agree(&file, threads + 1, 1);
        proptest::prop_assert!(scans.same);
        proptest::prop_assert_eq!(scans.region, batches >= 2);
    }

    /// A truncated file, or a bad byte anywhere (in any chunk), is declined by the parallel
    /// decoder or decodes as the sequential decoder does; `read_file` then gives the
    /// sequential decoder's value or error. Never a panic or a hang.
    #[test]
    fn damaged_files_read_as_the_sequential_decoder_reads_them(
        entries in proptest::collection::vec(entry_strategy(), 2..60),
        batch in 2usize..6,
        chunks in 1usize..6,
        cut in proptest::prelude::any::<proptest::sample::Index>(),
        byte in proptest::prelude::any::<u8>(),
        truncate in proptest::prelude::any::<bool>(),
    ) {
        let mut bytes = snapshot_bytes(&[1, 2], &entries, batch, After::Nothing);
        let at = cut.index(bytes.len());
        if truncate {
            bytes.truncate(at);
        } else {
            bytes[at] = byte;
        }
        let sequential = parse(&bytes)
            .map(|snapshot| format!("{snapshot:?}"))
            .map_err(|error| error.to_string());
        // On a damaged file the parallel pre-scan makes the one-thread scan's plan, or
        // declines (a read of a memo slot that a piece cannot check, a piece that does not
        // join), and the sequential decoder then reads the file: never another plan.
        let scans = scans_agree(&temp_file(&bytes), chunks + 1, 1);
        proptest::prop_assert!(scans.same || scans.declined);
        if let Some(snapshot) = decode_parallel_result(&bytes, parallel(3, chunks)) {
            let snapshot = snapshot
                .map(|snapshot| format!("{snapshot:?}"))
                .map_err(|error| error.to_string());
            proptest::prop_assert_eq!(&snapshot, &sequential);
        }
        let file = temp_file(&bytes);
        let read = read_file(&file, Limits::default(), parallel(3, chunks))
            .map(|snapshot| format!("{snapshot:?}"))
            .map_err(|error| error.to_string());
        proptest::prop_assert_eq!(read, sequential);
    }
}

/// A real snapshot written by PyTorch (2.11, on the H200) decodes the same on any number of
/// threads (it has one batch: the parallel decoder declines, and the file is read as usual).
#[test]
fn fixtures_read_the_same_on_any_number_of_threads() {
    for name in ["fragmentation", "model_forward", "leak_growing"] {
        let path = format!(
            "{}/tests/fixtures/h200-torch2.11/snap/{name}.pickle",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(path).unwrap();
        let sequential = format!("{:?}", parse(&bytes).unwrap());
        for threads in [1, 2, 5] {
            let file = temp_file(&bytes);
            let read = read_file(&file, Limits::default(), parallel(threads, threads)).unwrap();
            assert_eq!(
                format!("{read:?}"),
                sequential,
                "{name} on {threads} threads"
            );
        }
    }
}

/// A trace of many batches with every frame defined in the first chunk: each later chunk
/// decodes its frames from their own bytes, and the snapshot is the sequential one.
#[test]
fn frames_defined_in_the_first_chunk_are_resolved_in_the_others() {
    let entries: Vec<GenEntry> = (0..400)
        .map(|i| GenEntry {
            action: i % 3,
            addr: i as u32 * 512,
            size: 512,
            stream: 0,
            frames: Ok(vec![i % 40, (i * 7) % 40, 3]),
        })
        .collect();
    let bytes = snapshot_bytes(&[5, 6], &entries, 10, After::Frame(39));
    let sequential = parse(&bytes).unwrap();
    for chunks in [2, 7, 40] {
        let snapshot = decode_parallel(&bytes, parallel(4, chunks)).unwrap();
        assert_eq!(format!("{snapshot:?}"), format!("{sequential:?}"));
    }
    assert_eq!(sequential.traces[0].len(), 400);
    assert_eq!(sequential.other_keys, ["prefix_frames", "extra"]);
}

/// A file five times the read size (1.3 MB against 256 KiB: the pre-scan's pieces and the
/// chunks of 2 and 4 threads refill their buffers, values cut at the refills) reads as the
/// sequential decoder reads it, and the pre-scan on any number of pieces makes the one-thread
/// plan.
#[test]
fn a_file_many_reads_long_reads_as_the_sequential_decoder_reads_it() {
    let entries: Vec<GenEntry> = (0..24_000)
        .map(|i| GenEntry {
            action: i % 3,
            addr: i as u32 * 512,
            size: 512 * (1 + i as u32 % 7),
            stream: i % 2,
            frames: Ok(vec![i % 300, (i * 7) % 300, (i * 13) % 300, 3]),
        })
        .collect();
    let bytes = snapshot_bytes(&[1, 2, 3], &entries, 1000, After::Frame(7));
    assert!(bytes.len() > 1 << 20, "{} bytes", bytes.len());
    let sequential = format!("{:?}", parse(&bytes).unwrap());
    let file = temp_file(&bytes);
    for pieces in [2, 3, 9, 16] {
        let scans = scans_agree(&file, pieces, 1);
        assert!(scans.same && scans.region, "{pieces} pieces");
    }
    for (threads, chunks) in [(2, 2), (4, 9), (15, 15)] {
        let read = read_file(&file, Limits::default(), parallel(threads, chunks)).unwrap();
        assert_eq!(
            format!("{read:?}"),
            sequential,
            "{threads} threads, {chunks} chunks"
        );
    }
}

/// The pre-scan's pieces start at the file's start (this thread scans the head as the first
/// piece): whatever the pieces, the first cut in the head or in the trace, it makes the
/// one-thread scan's plan, and the parallel decoder the sequential snapshot.
#[test]
fn the_pre_scan_cut_from_the_start_makes_the_one_thread_plan() {
    let entries: Vec<GenEntry> = (0..300)
        .map(|i| GenEntry {
            action: i % 3,
            addr: i as u32 * 512,
            size: 512,
            stream: 0,
            frames: Ok(vec![i % 40, (i * 7) % 40]),
        })
        .collect();
    for prefix in [&[][..], &[1, 2, 3, 4][..]] {
        let bytes = snapshot_bytes(prefix, &entries, 7, After::Frame(3));
        let sequential = parse(&bytes).unwrap();
        let file = temp_file(&bytes);
        for pieces in 2..=40 {
            let scans = scans_agree(&file, pieces, 1);
            assert!(scans.same && scans.region, "{pieces} pieces");
        }
        for threads in [2, 5, 16] {
            let read = read_file(&file, Limits::default(), parallel(threads, threads)).unwrap();
            assert_eq!(format!("{read:?}"), format!("{sequential:?}"));
        }
    }
}

/// The segments read ahead while the chunks decode (`Merge::prepare`) are the ones `build`
/// reads: a snapshot with segments (and blocks) before the trace gives the sequential
/// decoder's snapshot, and a damaged segment the sequential decoder's error.
#[test]
fn segments_read_ahead_are_the_segments_read_after() {
    fn segment(out: &mut Vec<u8>, address: u32, total: &[u8]) {
        let key = |out: &mut Vec<u8>, text: &str| {
            out.extend([0x8c, text.len() as u8]);
            out.extend(text.as_bytes());
        };
        out.extend(b"}(");
        key(out, "address");
        out.push(b'J');
        out.extend(address.to_le_bytes());
        key(out, "total_size");
        out.extend(total);
        key(out, "blocks");
        out.extend(b"](}(");
        key(out, "size");
        out.extend(b"J\x00\x02\x00\x00");
        key(out, "state");
        key(out, "active_allocated");
        out.extend(b"ue");
        out.push(b'u');
    }
    let entries = stand_in_entries(200);
    let plain = snapshot_bytes(&[5], &entries, 10, After::Nothing);
    let empty: &[u8] = b"\x8c\x08segments\x94]\x94";
    let at = plain
        .windows(empty.len())
        .position(|window| window == empty)
        .unwrap()
        + empty.len();
    for damaged in [false, true] {
        let mut segments = b"(".to_vec();
        segment(&mut segments, 1 << 20, b"J\x00\x00\x20\x00");
        let total: &[u8] = if damaged {
            b"\x8c\x01x"
        } else {
            b"J\x00\x00\x40\x00"
        };
        segment(&mut segments, 1 << 24, total);
        segments.push(b'e');
        let bytes = [&plain[..at], &segments, &plain[at..]].concat();
        let sequential = parse(&bytes).map(|snapshot| format!("{snapshot:?}"));
        let sequential = sequential.map_err(|error| error.to_string());
        assert_eq!(sequential.is_err(), damaged);
        for chunks in [2, 5] {
            let snapshot = decode_parallel_result(&bytes, parallel(3, chunks))
                .unwrap()
                .map(|snapshot| format!("{snapshot:?}"))
                .map_err(|error| error.to_string());
            assert_eq!(snapshot, sequential);
            // The list itself was freed while the chunks decoded: its stand-in is in its place.
            assert!(stood_in(&bytes, parallel(3, chunks)));
        }
        if let Ok(text) = &sequential {
            assert!(text.contains("16777216"), "{text}");
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Whatever follows the trace (stack and memo opcodes that move, copy, wrap, drop or
    /// refer to the segments list, its stand-in or the top-level dict), the parallel
    /// decoder's value is the sequential decoder's, or it declines and `read_file` gives the
    /// sequential decoder's value or error.
    #[test]
    fn anything_after_the_trace_reads_as_the_sequential_decoder_reads_it(
        ops in proptest::collection::vec(0usize..12, 0..12),
        stop in 0usize..3,
    ) {
        let entries = stand_in_entries(60);
        let plain = snapshot_bytes(&[5], &entries, 10, After::Nothing);
        let mut bytes = plain[..plain.len() - 2].to_vec();
        for op in ops {
            let code: &[u8] = match op {
                0 => b"0",
                1 => b"2",
                2 => b"\x94",
                3 => b"h\x00",
                4 => b"h\x02",
                5 => b"\x8c\x08segments",
                6 => b"N",
                7 => b"(",
                8 => b"t",
                9 => b"l",
                10 => b"s",
                _ => b"u",
            };
            bytes.extend(code);
        }
        bytes.extend([&b"u."[..], b".", b"0u."][stop]);
        let sequential = parse(&bytes)
            .map(|snapshot| format!("{snapshot:?}"))
            .map_err(|error| error.to_string());
        if let Some(read) = decode_parallel_result(&bytes, parallel(3, 4)) {
            let read = read
                .map(|snapshot| format!("{snapshot:?}"))
                .map_err(|error| error.to_string());
            proptest::prop_assert_eq!(read, sequential.clone());
        }
        let file = temp_file(&bytes);
        let read = read_file(&file, Limits::default(), parallel(3, 4))
            .map(|snapshot| format!("{snapshot:?}"))
            .map_err(|error| error.to_string());
        proptest::prop_assert_eq!(read, sequential);
    }
}

/// Whether the parallel decoder put the stand-in in place of the segments list.
fn stood_in(bytes: &[u8], parallel: Parallel) -> bool {
    let file = temp_file(bytes);
    let (root, _) = decode_file(&file, Limits::default(), parallel, SnapshotFold::new).unwrap();
    matches!(root.get("segments"), Some(Value::Handle(STAND_IN, _)))
}

/// The stand-in of the segments list is used only where it ends as the top-level dict's
/// `'segments'` and was never copied: a file that copies it after the trace (`DUP`, or
/// memoized) is declined and read on one thread; a list that the file refers to again, or
/// one inside a top-level dict that the file refers to, gets no stand-in. Each reads as the
/// sequential decoder reads it.
#[test]
fn a_stand_in_is_used_only_where_the_segments_list_would_be() {
    let entries = stand_in_entries(120);
    let plain = snapshot_bytes(&[5], &entries, 10, After::Nothing);
    let body = &plain[..plain.len() - 2];
    assert_eq!(&plain[plain.len() - 2..], b"u.");
    // After the trace: the stack holds the top-level dict, its mark, `'segments'`, the
    // list, `'prefix_frames'`, its list, `'device_traces'` and its list. Four `POP`s put
    // the segments list (its stand-in) on top.
    // (what follows, whether the parallel decoder's value is kept, whether with a stand-in)
    let cases: [(&[u8], bool, bool); 5] = [
        (b"0000u.", true, true),
        (b"000020u.", false, true),
        (b"0000\x940u.", false, true),
        // Memo slots 0, 1, 2: the dict, `'segments'`, the list.
        (b"0000\x8c\x05extra\x94h\x02u.", true, false),
        (b"0000\x8c\x05extra\x94h\x00u.", false, false),
    ];
    for (tail, kept, stand_in) in cases {
        let bytes = [body, tail].concat();
        let sequential = parse(&bytes)
            .map(|snapshot| format!("{snapshot:?}"))
            .map_err(|error| error.to_string());
        let parallel_read = decode_parallel_result(&bytes, parallel(3, 4)).map(|snapshot| {
            snapshot
                .map(|snapshot| format!("{snapshot:?}"))
                .map_err(|error| error.to_string())
        });
        assert_eq!(parallel_read.is_some(), kept, "{tail:?}");
        if let Some(read) = parallel_read {
            assert_eq!(read, sequential, "{tail:?}");
            assert_eq!(stood_in(&bytes, parallel(3, 4)), stand_in, "{tail:?}");
        }
        let file = temp_file(&bytes);
        let read = read_file(&file, Limits::default(), parallel(3, 4))
            .map(|snapshot| format!("{snapshot:?}"))
            .map_err(|error| error.to_string());
        assert_eq!(read, sequential, "{tail:?}");
    }
}

/// `count` trace entries of two frames each (one of 40 sites and a shared root), for the
/// stand-in tests.
fn stand_in_entries(count: usize) -> Vec<GenEntry> {
    (0..count)
        .map(|i| GenEntry {
            action: i % 3,
            addr: i as u32 * 512,
            size: 512,
            stream: 0,
            frames: Ok(vec![i % 40, 3]),
        })
        .collect()
}
