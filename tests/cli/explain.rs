//! CLI tests of `oomdoc explain`: whole-output snapshots over every real text in
//! `tests/fixtures/engine_log/`, `tests/fixtures/oom_text/` and the H200 cases, plus exit
//! codes and input handling.

use std::io::Write;
use std::process::{Output, Stdio};

use super::{fixture, oomdoc, stderr, stdout};

/// Runs `oomdoc explain ARGS` with `input` on stdin.
#[expect(
    clippy::unwrap_used,
    reason = "test helper: a failure here is a test failure"
)]
fn explain_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = oomdoc()
        .arg("explain")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// The `--json` document of a run, without `context` (it repeats the input verbatim), with the
/// exit code added, as the snapshot body.
#[expect(
    clippy::unwrap_used,
    reason = "test helper: a failure here is a test failure"
)]
fn json_snapshot_body(output: &Output) -> serde_json::Value {
    let mut document: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("stdout is not one JSON document: {error}"));
    let object = document.as_object_mut().unwrap();
    object.remove("context");
    // Paths differ between checkouts: keep file names only.
    if let Some(names) = object
        .get_mut("input")
        .and_then(|input| input.get_mut("names"))
        .and_then(|names| names.as_array_mut())
    {
        for name in names {
            let base = std::path::Path::new(name.as_str().unwrap_or_default())
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            *name = serde_json::Value::from(base);
        }
    }
    object.insert(
        "exit_code".to_string(),
        serde_json::Value::from(output.status.code()),
    );
    document
}

#[test]
fn engine_log_fixtures() {
    insta::glob!("../fixtures/engine_log", "*.log", |path| {
        let output = oomdoc()
            .arg("explain")
            .arg("--json")
            .arg(path)
            .output()
            .unwrap();
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{}",
            stderr(&output)
        );
        insta::assert_json_snapshot!(json_snapshot_body(&output));
    });
}

#[test]
fn oom_text_fixtures() {
    insta::glob!("../fixtures/oom_text", "*.txt", |path| {
        let output = oomdoc()
            .arg("explain")
            .arg("--json")
            .arg(path)
            .output()
            .unwrap();
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{}",
            stderr(&output)
        );
        insta::assert_json_snapshot!(json_snapshot_body(&output));
    });
}

/// The real H200 cases (PyTorch 2.11): the traceback a user would paste, or the program's
/// whole stdout when the scenario did not fail.
#[test]
fn h200_cases() {
    let cases: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(fixture("h200-torch2.11/oom_cases.json")).unwrap())
            .unwrap();
    assert_eq!(cases.len(), 7);
    for case in &cases {
        let scenario = case["scenario"].as_str().unwrap();
        let stdout_text = case["stdout"].as_str().unwrap();
        let result = stdout_text
            .lines()
            .find_map(|line| line.strip_prefix("RESULT_JSON "))
            .unwrap();
        let result: serde_json::Value = serde_json::from_str(result).unwrap();
        let input = match result["traceback"].as_str() {
            Some(traceback) => traceback.to_string(),
            None => stdout_text.to_string(),
        };
        let output = explain_stdin(&["--json"], input.as_bytes());
        let expected_exit = if result["ok"].as_bool() == Some(true) {
            1
        } else {
            0
        };
        assert_eq!(output.status.code(), Some(expected_exit), "{scenario}");
        insta::with_settings!({ snapshot_suffix => scenario }, {
            insta::assert_json_snapshot!(json_snapshot_body(&output));
        });
    }
}

#[test]
fn bundled_example_text_report() {
    let output = oomdoc()
        .arg("explain")
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples/vllm-0.6.4-kv-cache-too-small.log"),
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    insta::assert_snapshot!(stdout(&output));
}

#[test]
fn markdown_report() {
    let output = oomdoc()
        .args(["explain", "--format", "markdown"])
        .arg(fixture(
            "engine_log/vllm-0.10.1-v0-oom-after-weights-load.log",
        ))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(!text.contains('\u{1b}'));
    insta::assert_snapshot!(text);
}

#[test]
fn stdin_and_dash_read_the_same() {
    let input = std::fs::read(fixture(
        "engine_log/tgi-1.0-awq-warmup-not-enough-memory.log",
    ))
    .unwrap();
    let none = explain_stdin(&["--json"], &input);
    let dash = explain_stdin(&["--json", "-"], &input);
    assert_eq!(none.status.code(), Some(0));
    assert_eq!(none.stdout, dash.stdout);
    let document: serde_json::Value = serde_json::from_slice(&none.stdout).unwrap();
    assert_eq!(document["input"]["names"][0], "<stdin>");
    assert_eq!(document["schema_version"], 1);
    assert_eq!(document["phase"]["failed_in"], "profiling");
}

#[test]
fn json_stdout_is_exactly_one_document() {
    let output = oomdoc()
        .args(["explain", "--json"])
        .arg(fixture(
            "engine_log/vllm-0.6.4-v0-kv-max-seq-len-rtx3090.log",
        ))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    // `from_slice` rejects trailing content, so this fails on a second document or a stray line.
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    for key in [
        "is_gpu_oom",
        "engine",
        "oom",
        "ooms",
        "phase",
        "timeline",
        "verdict",
    ] {
        assert!(document.get(key).is_some(), "missing `{key}`");
    }
    for key in ["failed_in", "last_completed", "server_was_ready"] {
        assert!(
            document["phase"].get(key).is_some(),
            "missing `phase.{key}`"
        );
    }
    for key in ["cause", "evidence", "next_steps", "owner_summary"] {
        assert!(
            document["verdict"].get(key).is_some(),
            "missing `verdict.{key}`"
        );
    }
    assert!(output.stderr.is_empty());
}

#[test]
fn several_files_are_read_in_order_as_one_stream() {
    let output = oomdoc()
        .args(["explain", "--json"])
        .arg(fixture(
            "engine_log/vllm-0.10.1-v0-oom-after-weights-load.log",
        ))
        .arg(fixture("engine_log/tgi-3.2.1-warmup-router-error.log"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["input"]["names"].as_array().unwrap().len(), 2);
    assert_eq!(document["input"]["lines"], 9);
    assert_eq!(document["ooms"].as_array().unwrap().len(), 2);
}

#[test]
fn empty_file_is_nothing_to_diagnose() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let output = oomdoc().arg("explain").arg(file.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(stderr(&output).contains("is empty"), "{}", stderr(&output));
}

// See: #15: a file name with a dash is named as it is, not with `<stdin>` in place of the dash.
#[test]
fn an_empty_file_with_a_dash_is_named_as_it_is() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("my-log.txt");
    std::fs::write(&path, "").unwrap();
    let output = oomdoc().arg("explain").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(message.contains("my-log.txt` is empty"), "{message}");
    assert!(!message.contains("<stdin>"), "{message}");
}

#[test]
fn empty_stdin_is_nothing_to_diagnose() {
    let output = explain_stdin(&[], b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(stderr(&output).contains("<stdin>"), "{}", stderr(&output));
}

#[test]
fn text_without_a_failure_exits_1_with_a_report() {
    let output = explain_stdin(
        &["--json"],
        b"INFO 04-02 21:42:59 model_runner.py:1] Starting to load model x...\nall good\n",
    );
    assert_eq!(output.status.code(), Some(1));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["is_gpu_oom"], false);
    assert_eq!(document["oom"], serde_json::Value::Null);
    assert_eq!(document["verdict"]["cause"], "unknown");
    assert!(stderr(&output).contains("nothing to diagnose"));
}

#[test]
fn missing_path_is_an_error_naming_it() {
    let output = oomdoc()
        .args(["explain", "/nonexistent/oomdoc/log.txt"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    insta::assert_snapshot!(stderr(&output), @r"
    error: cannot read `/nonexistent/oomdoc/log.txt`
      Caused by: No such file or directory (os error 2)
    ");
}

#[test]
fn directory_is_an_error() {
    let directory = tempfile::tempdir().unwrap();
    let output = oomdoc()
        .arg("explain")
        .arg(directory.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output).contains("is a directory"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn binary_garbage_is_an_error_with_a_hint() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    file.write_all(&garbage).unwrap();
    let output = oomdoc().arg("explain").arg(file.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let message = stderr(&output);
    assert!(message.contains("looks like binary data"), "{message}");
    assert!(message.contains("hint:"), "{message}");
}

/// A PowerShell `>` redirect writes UTF-16 LE with a byte-order mark; other tools write
/// UTF-16 BE or leave the mark out. Each reads as the UTF-8 text does, with a note.
#[test]
fn utf16_input_reads_as_its_utf8_text() {
    let path = fixture("engine_log/vllm-0.10.1-v0-oom-after-weights-load.log");
    let text = std::fs::read_to_string(&path).unwrap();
    let utf8 = oomdoc()
        .args(["explain", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(utf8.status.code(), Some(0));
    let units: Vec<u16> = text.encode_utf16().collect();
    let le: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(units.iter().flat_map(|unit| unit.to_le_bytes()))
        .collect();
    let be: Vec<u8> = units.iter().flat_map(|unit| unit.to_be_bytes()).collect();
    for (bytes, name) in [(le, "UTF-16 LE"), (be, "UTF-16 BE")] {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&bytes).unwrap();
        let output = oomdoc()
            .args(["explain", "--json"])
            .arg(file.path())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let redirected = json_snapshot_body(&output);
        assert_eq!(
            redirected["oom"],
            json_snapshot_body(&utf8)["oom"],
            "{name}"
        );
        assert_eq!(
            redirected["phase"],
            json_snapshot_body(&utf8)["phase"],
            "{name}"
        );
        assert!(
            stderr(&output).contains(&format!("is {name} text")),
            "{}",
            stderr(&output)
        );
        let piped = explain_stdin(&["--json"], &bytes);
        assert_eq!(
            json_snapshot_body(&piped)["oom"],
            redirected["oom"],
            "{name} on stdin"
        );
    }
}

/// A log shipper's or kubectl's timestamps with fewer than nine fraction digits come off the
/// line starts as the nanosecond ones do, so the engine's own lines are read the same.
#[test]
fn short_transport_timestamps_are_stripped() {
    let path = fixture("engine_log/sglang-fork-terminal-wrapped-private-pools.log");
    let text = std::fs::read_to_string(&path).unwrap();
    let plain = oomdoc()
        .args(["explain", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    let stamped: String = text
        .lines()
        .map(|line| format!("2024-05-01T10:00:00.123Z {line}\n"))
        .collect();
    let output = explain_stdin(&["--json"], stamped.as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (plain, stamped) = (json_snapshot_body(&plain), json_snapshot_body(&output));
    assert_eq!(stamped["oom"], plain["oom"]);
    assert_eq!(stamped["phase"], plain["phase"]);
    assert_eq!(stamped["engine"]["name"], "sglang");
    assert_eq!(stamped["engine"], plain["engine"]);
}

#[test]
fn pickle_snapshot_is_refused_as_binary() {
    let output = oomdoc()
        .arg("explain")
        .arg(fixture("h200-torch2.11/snap/capacity.pickle"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("oomdoc snapshot"));
}

#[test]
fn gzip_logs_are_read() {
    let plain = std::fs::read(fixture("engine_log/vllm-0.9.1-v1-startup-free-memory.log")).unwrap();
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let mut encoder = flate2::write::GzEncoder::new(&mut file, flate2::Compression::default());
    encoder.write_all(&plain).unwrap();
    encoder.finish().unwrap();
    let output = oomdoc()
        .args(["explain", "--json"])
        .arg(file.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["phase"]["failed_in"], "startup");
}

/// Every fixture's default text report fits 100 columns (characters, not bytes); only a quoted
/// log line (the context block's `[ >]NNNNNNN | ` gutter, `is_quoted_log_line`) may be longer,
/// and then it is cut with `…`. `-v` quotes the line whole. See issue 16.
#[test]
fn explain_text_fits_100_columns() {
    use oomdoc::cli::args::Format;
    use oomdoc::cli::commands::explain::explain_file;
    use oomdoc::render::explain::{is_quoted_log_line, TEXT_WIDTH};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs = vec![root.join("oom_text"), root.join("engine_log")];
    let mut corpus: Vec<_> = std::fs::read_dir(root.join("corpus"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    corpus.sort();
    dirs.extend(corpus);
    let mut files = 0;
    let mut too_long = Vec::new();
    for dir in dirs {
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_file() && !path.to_string_lossy().ends_with(".json"))
            .collect();
        paths.sort();
        for path in paths {
            files += 1;
            // In one process: the binary builds its scanners at every start, which over every
            // fixture took most of the suite's time. The binary's own runs are tested above.
            let (report, _) = explain_file(&path, Format::Text, false)
                .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
            for line in String::from_utf8_lossy(&report).lines() {
                let width = line.chars().count();
                let quoted_and_cut = is_quoted_log_line(line) && line.ends_with('…');
                if width > TEXT_WIDTH && !quoted_and_cut {
                    too_long.push(format!("{} ({width}): {line}", path.display()));
                }
                if is_quoted_log_line(line) {
                    assert!(width <= TEXT_WIDTH, "{}: {line}", path.display());
                }
            }
        }
    }
    assert!(files > 300, "only {files} fixtures found");
    assert!(too_long.is_empty(), "{}", too_long.join("\n"));
}

#[test]
fn explain_verbose_quotes_whole_lines_and_says_what_figures_mean() {
    let path = fixture("engine_log/sglang-fork-terminal-wrapped-private-pools.log");
    let plain = stdout(&oomdoc().arg("explain").arg(&path).output().unwrap());
    let verbose = stdout(
        &oomdoc()
            .args(["explain", "-v"])
            .arg(&path)
            .output()
            .unwrap(),
    );
    let meaning = "cached free blocks of CUDA-graph private pools";
    assert!(!plain.contains(meaning), "{plain}");
    assert!(verbose.contains(meaning), "{verbose}");
    assert!(
        verbose.contains("(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
    );
    assert!(plain.contains("Tried to allo…"), "{plain}");
}

#[test]
fn a_training_job_is_not_called_a_server_and_inference_is_not_only_serving() {
    let training = std::fs::read(fixture("corpus/h200/accelerate_forward_loop.txt")).unwrap();
    let output = explain_stdin(&[], &training);
    let text = stdout(&output);
    assert!(
        text.contains("server ready:   no server: a training job"),
        "{text}"
    );
    assert!(
        !text.contains("a user prompt cannot be the cause"),
        "{text}"
    );
    // A user's evaluation loop runs inference; nothing in it serves a request.
    let evaluation = std::fs::read(fixture("corpus/h200/user_evaluate_nograd.txt")).unwrap();
    let text = stdout(&explain_stdin(&[], &evaluation));
    assert!(text.contains("while running inference"), "{text}");
    assert!(!text.contains("serving a request:"), "{text}");
}
