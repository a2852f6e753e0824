//! CLI tests of `oomdoc snapshot` on real H200 snapshots (PyTorch 2.11; provenance in
//! `tests/fixtures/README.md`). Numbers are checked against `memory_stats()` recorded with
//! each snapshot in `h200-torch2.11/oom_cases.json`.

use std::io::Write;
use std::process::Stdio;

use super::{fixture, oomdoc, stderr, stdout};

/// `cudaMemGetInfo().total` of the H200 the fixtures came from (`oom_cases.json`).
const H200_TOTAL: &str = "150109880320B";

#[expect(
    clippy::unwrap_used,
    reason = "test helper: a failure is a test failure"
)]
fn run(name: &str, extra: &[&str]) -> std::process::Output {
    oomdoc()
        .arg("snapshot")
        .arg(fixture(&format!("h200-torch2.11/snap/{name}.pickle")))
        .args(extra)
        .output()
        .unwrap()
}

#[expect(
    clippy::unwrap_used,
    reason = "test helper: a failure is a test failure"
)]
fn json(name: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let output = run(name, &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[expect(
    clippy::unwrap_used,
    reason = "test helper: a failure is a test failure"
)]
fn memory_stats(name: &str) -> serde_json::Value {
    let cases: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("h200-torch2.11/oom_cases.json")).unwrap())
            .unwrap();
    cases
        .as_array()
        .unwrap()
        .iter()
        .find(|case| case["scenario"] == name)
        .unwrap()["result"]["memory_stats"]
        .clone()
}

#[test]
fn json_of_each_real_snapshot() {
    for name in [
        "fragmentation",
        "fragmentation_expandable",
        "capacity",
        "other_process",
    ] {
        let value = json(name, &["--total-memory", H200_TOTAL]);
        insta::assert_json_snapshot!(format!("json_{name}"), value);
    }
}

#[test]
fn text_of_each_real_snapshot() {
    for name in [
        "fragmentation",
        "fragmentation_expandable",
        "capacity",
        "other_process",
        "model_forward",
    ] {
        let output = run(name, &["--total-memory", H200_TOTAL]);
        assert_eq!(output.status.code(), Some(0));
        insta::assert_snapshot!(format!("text_{name}"), stdout(&output));
    }
}

#[test]
fn causes_match_what_each_scenario_did() {
    let cause =
        |name: &str| json(name, &["--total-memory", H200_TOTAL])["ooms"][0]["cause"].clone();
    assert_eq!(cause("fragmentation"), "fragmentation");
    assert_eq!(cause("capacity"), "capacity");
    assert_eq!(cause("other_process"), "other");
    // 39.72 GiB free on the device and 48 GiB cached in a segment that also held live blocks:
    // 64 GiB was there, split; not a lack of capacity (#16).
    assert_eq!(cause("model_forward"), "fragmentation");
    // With expandable segments the same program did not fail: no OOM event at all.
    let expandable = json("fragmentation_expandable", &[]);
    assert_eq!(expandable["ooms"], serde_json::json!([]));
    // Without the device total, memory of other processes is not visible in a snapshot.
    assert_eq!(json("other_process", &[])["ooms"][0]["cause"], "capacity");
}

#[test]
fn sums_match_memory_stats_recorded_with_the_snapshot() {
    for name in [
        "fragmentation",
        "fragmentation_expandable",
        "other_process",
        "leak_growing",
    ] {
        let stats = memory_stats(name);
        let device = &json(name, &[])["devices"][0];
        assert_eq!(
            device["reserved_bytes"], stats["reserved_bytes.all.current"],
            "{name}"
        );
        assert_eq!(
            device["allocated_bytes"], stats["allocated_bytes.all.current"],
            "{name}"
        );
        assert_eq!(
            device["active_bytes"], stats["active_bytes.all.current"],
            "{name}"
        );
        assert_eq!(
            device["inactive_split_bytes"], stats["inactive_split_bytes.all.current"],
            "{name}"
        );
        assert_eq!(
            device["trace"]["peak"]["allocated_bytes"], stats["allocated_bytes.all.peak"],
            "{name}"
        );
    }
    // The fragmentation OOM is the last event: the state at the OOM is the snapshot's.
    let stats = memory_stats("fragmentation");
    let oom = &json("fragmentation", &[])["ooms"][0];
    assert_eq!(
        oom["at_oom"]["allocated_bytes"],
        stats["allocated_bytes.all.current"]
    );
    assert_eq!(
        oom["at_oom"]["reserved_bytes"],
        stats["reserved_bytes.all.current"]
    );
    assert_eq!(oom["requested_bytes"], 2147483648u64);
    assert_eq!(oom["device_free_bytes"], 535953408u64);
}

#[test]
fn markdown_and_html_reports() {
    let output = run("fragmentation", &["--format", "markdown"]);
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!("markdown_fragmentation", stdout(&output));
    let output = run("fragmentation", &["--format", "html"]);
    assert_eq!(output.status.code(), Some(0));
    let html = stdout(&output);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg class=\"map\""));
    // One rect per block in each view: bars proportional to size, and on a log scale.
    assert_eq!(
        html.matches("<rect ").count(),
        2 * 101,
        "one rect per block"
    );
    assert!(html.contains("bar length proportional to segment size"));
    assert!(html.contains("bar length on a log scale"));
    for forbidden in ["<script", "http://", "https://", "src=", "@import", "url("] {
        assert!(!html.contains(forbidden), "{forbidden}");
    }
}

#[test]
fn gzip_and_stdin_give_the_same_report() {
    let bytes = std::fs::read(fixture("h200-torch2.11/snap/other_process.pickle")).unwrap();
    let expected = stdout(&run("other_process", &["--json"]));
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("snapshot.pickle.gz");
    let mut encoder =
        flate2::write::GzEncoder::new(std::fs::File::create(&path).unwrap(), Default::default());
    encoder.write_all(&bytes).unwrap();
    encoder.finish().unwrap();
    let output = oomdoc()
        .args(["snapshot", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(stdout(&output), expected);

    let mut child = oomdoc()
        .args(["snapshot", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(stdout(&output), expected);
}

#[test]
fn pickle_that_calls_code_is_refused() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("evil.pickle");
    // pickle.dumps(os.system, protocol=4)
    std::fs::write(
        &path,
        b"\x80\x04\x95\x14\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94\x93\x94.",
    )
    .unwrap();
    let output = oomdoc().arg("snapshot").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let message = stderr(&output).replace(&path.display().to_string(), "[PATH]");
    insta::assert_snapshot!(message, @r"
    error: failed to read memory snapshot `[PATH]`
      Caused by: pickle opcode `STACK_GLOBAL` at byte 28 would import or call code; oomdoc never executes pickles

    hint: a memory snapshot holds only dicts, lists, numbers and strings; this file holds objects, so it is not one
    ");
}

#[test]
fn truncated_snapshot_is_an_error_with_offset() {
    let bytes = std::fs::read(fixture("h200-torch2.11/snap/capacity.pickle")).unwrap();
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("cut.pickle");
    std::fs::write(&path, &bytes[..3000]).unwrap();
    let output = oomdoc().arg("snapshot").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("pickle ends early at byte"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn impossible_top_and_total_memory_are_usage_errors() {
    let output = run("model_forward", &["--top", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output).starts_with("error: `--top` must be at least 1"),
        "{}",
        stderr(&output)
    );

    // model_forward reserves 99.41 GiB on device 0: a 1 KiB device cannot be the one it ran on.
    let output = run("model_forward", &["--total-memory", "1KiB"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let err = stderr(&output);
    assert!(
        err.starts_with(
            "error: `--total-memory 1.00 KiB` is less than the 99.41 GiB PyTorch had reserved on device 0"
        ),
        "{err}"
    );
    assert!(err.contains("hint: "), "{err}");
}

#[expect(
    clippy::unwrap_used,
    reason = "test helper: a failure is a test failure"
)]
fn diff(extra: &[&str]) -> std::process::Output {
    oomdoc()
        .args(["snapshot", "diff"])
        .arg(fixture("snapshot/synthetic-train-step-a.pickle"))
        .arg(fixture("snapshot/synthetic-train-step-b.pickle"))
        .args(extra)
        .output()
        .unwrap()
}

/// B keeps one more 2 GiB activation block than A at the same site
/// (`scripts/make_diff_snapshots.py`): it is the top row at the peak, frame and exact bytes.
#[test]
fn diff_puts_a_planted_activation_change_on_top() {
    let output = diff(&["--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let peak = &document["moments"][0];
    assert_eq!(peak["moment"], "peak");
    assert_eq!(peak["change_bytes"], 2147483648_i64);
    let top = &peak["by_site"][0];
    assert_eq!(top["key"], "/work/model.py:42 forward");
    assert_eq!(top["change_bytes"], 2147483648_i64);
    assert_eq!(top["a_bytes"], 3221225472_i64);
    assert_eq!(top["b_bytes"], 5368709120_i64);
    assert_eq!(top["frames"][0], "/work/model.py:42 forward");
    assert_eq!(peak["by_site"][1]["change_bytes"], 0);
    let category = &peak["by_category"][0];
    assert_eq!(category["key"], "activations");
    assert_eq!(category["change_bytes"], 2147483648_i64);
    let categories: Vec<(&str, i64)> = peak["by_category"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["key"].as_str().unwrap(),
                row["a_bytes"].as_i64().unwrap(),
            )
        })
        .collect();
    // The backward's 256 MiB buffer is freed before the backward ends: an autograd
    // temporary; the 512 MiB gradient freed only by `zero_grad` stays a gradient.
    assert_eq!(
        categories,
        [
            ("activations", 3 << 30),
            ("gradients", 3 << 29),
            ("parameters", 3 << 29),
            ("autograd temporaries", 1 << 28)
        ]
    );
    assert_eq!(peak["a_inside"][0], "train_step");
    assert!(peak["a_time_us"].as_i64().unwrap() > 0);
    // At the end every activation is freed: A and B are equal.
    let end = &document["moments"][1];
    assert_eq!(end["a_at"], "end");
    assert_eq!(end["change_bytes"], 0);
    assert_eq!(end["by_category"][0]["key"], "optimizer state");
    assert_eq!(end["by_category"][0]["a_bytes"], 3221225472_i64);
}

#[test]
fn diff_text_states_the_category_rules() {
    let output = diff(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("+2.00 GiB (+2147483648 B)  /work/model.py:42 forward"),
        "{text}"
    );
    assert!(
        text.contains("Categories (first rule that matches):"),
        "{text}"
    );
    assert!(
        text.contains("optimizer state: a frame is `_init_group`"),
        "{text}"
    );
}

/// Named ranges (`external_annotations`) group blocks by what was running when they were
/// allocated, and show as a timeline.
#[test]
fn diff_groups_by_named_range() {
    let output = diff(&["--group-by", "annotation", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["groupings"], serde_json::json!(["annotation"]));
    let peak = &document["moments"][0];
    assert_eq!(peak["by_site"], serde_json::json!([]));
    let top = &peak["by_annotation"][0];
    assert_eq!(top["key"], "train_step > ## forward ##");
    assert_eq!(top["change_bytes"], 2147483648_i64);
    let end = &document["moments"][1];
    assert_eq!(
        end["by_annotation"][0]["key"],
        "train_step > Optimizer.step#Adam.step"
    );
    assert_eq!(end["by_annotation"][0]["a_bytes"], 3221225472_i64);
    let ranges = document["a_annotations"].as_array().unwrap();
    assert_eq!(ranges.len(), 4);
    assert_eq!(ranges[1]["name"], "## forward ##");
    assert_eq!(ranges[1]["depth"], 1);

    let text = stdout(&diff(&[]));
    assert!(text.contains("by named range at allocation"), "{text}");
    assert!(text.contains("Named ranges in A"), "{text}");
    assert!(
        text.contains("inside: A train_step; B train_step"),
        "{text}"
    );
    assert!(
        text.contains("autograd temporaries: a frame is `backward`"),
        "{text}"
    );
    assert!(text.contains("PyTorch's profiler's INPUT"), "{text}");

    let output = diff(&["--group-by", "nonsense"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

#[test]
fn snapshot_text_shows_named_ranges() {
    let output = oomdoc()
        .arg("snapshot")
        .arg(fixture("snapshot/synthetic-train-step-b.pickle"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("Named ranges"), "{text}");
    assert!(text.contains("Optimizer.step#Adam.step"), "{text}");
    assert!(text.contains("  inside: train_step"), "{text}");
}

#[test]
fn diff_html_is_self_contained() {
    let output = diff(&["--format", "html"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let html = stdout(&output);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("<script src") && !html.contains("http://") && !html.contains("https://")
    );
}

#[test]
fn snapshot_without_a_file_is_a_usage_error() {
    let output = oomdoc().arg("snapshot").output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

/// A gzip bomb: a few MiB that inflate to a snapshot whose trace never ends (24M trace
/// entries, 600 MB, no `STOP`), read under an address-space limit of 1 GiB, as a
/// container's memory limit would be, and under 300 MiB. The reader must refuse it with a
/// clear error (exit 2), not be killed or abort on a failed allocation.
#[test]
fn gzip_bomb_is_refused_under_a_memory_limit() {
    const ENTRIES: usize = 24_000_000;
    const LIMIT_KIB: u64 = 1 << 20;
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("bomb.pickle.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::io::BufWriter::new(std::fs::File::create(&path).unwrap()),
        flate2::Compression::fast(),
    );
    // {'device_traces': [[{'action': 'alloc', 'addr': …, 'size': …}, … endlessly, as
    // Python's pickler writes a list: APPENDS every 1000 items. Memo 0–3: the root dict,
    // its key, the two lists; 4: the first entry; 5–8: 'action', 'alloc', 'addr', 'size'.
    let mut head = b"\x80\x04}\x94(\x8c\x0ddevice_traces\x94]\x94]\x94(".to_vec();
    head.extend_from_slice(b"}\x94(\x8c\x06action\x94\x8c\x05alloc\x94\x8c\x04addr\x94");
    head.extend_from_slice(b"\x8a\x06\x00\x00\x00\x00\x7f\x7f\x8c\x04size\x94J\x00\x02\x00\x00ue");
    encoder.write_all(&head).unwrap();
    let entry = b"}\x94(h\x05h\x06h\x07\x8a\x06\x00\x00\x00\x00\x7f\x7fh\x08J\x00\x02\x00\x00u";
    let mut batch = Vec::new();
    for _ in 0..100 {
        batch.push(b'(');
        for _ in 0..1000 {
            batch.extend_from_slice(entry);
        }
        batch.push(b'e');
    }
    for _ in 0..ENTRIES / 100_000 {
        encoder.write_all(&batch).unwrap();
    }
    encoder.finish().unwrap().flush().unwrap();
    let stored = std::fs::metadata(&path).unwrap().len();
    assert!(stored < 8 << 20, "the bomb is {stored} bytes");

    // 1 GiB: the decoder's budget for a file this small (512 MiB) stops it first. 300 MiB:
    // the allocation of more trace entries fails first, and is an error too.
    for (limit_kib, cause) in [
        (LIMIT_KIB, "exceeds the memory budget"),
        (300 << 10, "out of memory holding the trace entries"),
    ] {
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {limit_kib} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_oomdoc"))
            .args(["snapshot", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        let message = stderr(&output);
        assert_eq!(
            output.status.code(),
            Some(2),
            "killed or crashed: {message}"
        );
        assert!(output.stdout.is_empty());
        assert!(message.contains(cause), "{limit_kib} KiB: {message}");
        assert!(message.contains("bomb.pickle.gz"), "{message}");
    }
}

/// #16: growth by stack frame, not only totals: leak_growing.py kept every tensor it made
/// in a loop; its site is named with the count and the exact bytes, in text and JSON.
#[test]
fn growth_by_site_names_the_line_that_keeps_allocating() {
    let output = run("leak_growing", &[]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.contains("growth by site:"), "{text}");
    assert!(
        text.contains("8.75 GiB  20 of 20 allocations never freed"),
        "{text}"
    );
    let growth = &json("leak_growing", &[])["devices"][0]["trace"]["growth"];
    assert_eq!(growth[0]["never_freed"], 20);
    assert_eq!(growth[0]["never_freed_bytes"], 9395240960u64);
    assert_eq!(growth[0]["site"], "<string>:13 <module>");
    let steady = &json("leak_steady", &[])["devices"][0]["trace"]["growth"];
    assert_eq!(steady, &serde_json::json!([]));
}

/// Tight decoder limits: whatever the bytes say, the decoder may not allocate beyond these.
fn fuzz_limits() -> oomdoc::parse::pickle::Limits {
    oomdoc::parse::pickle::Limits {
        max_depth: 64,
        max_container_len: 1 << 16,
        max_string_bytes: 1 << 16,
        max_memo: 1 << 16,
        max_objects: 1 << 20,
        max_stack: 1 << 16,
        max_memory_bytes: 64 << 20,
        memory_per_input_byte: 8,
    }
}

/// Decodes, analyses and renders in process; must never panic, whatever the input.
fn whole_pipeline(bytes: &[u8]) {
    use oomdoc::analyze::fragmentation;
    use oomdoc::render::snapshot as render;
    if let Ok(snapshot) = oomdoc::parse::torch_snapshot::read_with_limits(bytes, fuzz_limits()) {
        let report = fragmentation::analyze(
            &snapshot,
            &fragmentation::Options {
                total_memory: Some(oomdoc::model::Bytes(150109880320)),
                timeline_points: 64,
                ..Default::default()
            },
        );
        let _ = render::text(&report, oomdoc::render::style::Style::new(false));
        let _ = render::markdown(&report);
        let _ = render::html(&report);
        let _ = render::json(&report);
    }
}

fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(position, byte, how) in edits {
        if bytes.is_empty() {
            break;
        }
        let position = position % bytes.len();
        match how % 4 {
            0 => bytes[position] = byte,
            1 => bytes.insert(position, byte),
            2 => {
                bytes.remove(position);
            }
            _ => bytes.truncate(position),
        }
    }
    bytes
}

#[expect(
    clippy::unwrap_used,
    reason = "test helper: a failure is a test failure"
)]
fn snapshot_bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture(&format!("h200-torch2.11/snap/{name}.pickle"))).unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    #[test]
    fn random_bytes_never_panic(tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
        let mut bytes = b"\x80\x04".to_vec();
        bytes.extend(tail);
        whole_pipeline(&bytes);
    }

    #[test]
    fn mutated_real_snapshots_never_panic(
        which in 0usize..4,
        edits in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>(), proptest::prelude::any::<u8>()), 1..8),
    ) {
        let name = ["capacity", "other_process", "fragmentation", "leak_steady"][which];
        whole_pipeline(&mutate(snapshot_bytes(name), &edits));
    }
}

#[test]
fn threads_flag_keeps_the_report_and_refuses_a_non_number() {
    let default = json("capacity", &[]);
    for threads in ["1", "4", "0"] {
        assert_eq!(
            json("capacity", &["--threads", threads]),
            default,
            "--threads {threads}"
        );
    }
    assert_eq!(json("capacity", &["-j", "2"]), default);
    let output = run("capacity", &["--threads", "many"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("invalid value 'many' for '--threads <N>'"),
        "{}",
        stderr(&output)
    );
}
