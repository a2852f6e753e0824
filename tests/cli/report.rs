//! CLI tests of `oomdoc report`.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on an I/O or JSON error"
)]

use std::path::Path;
use std::process::Output;

use super::{oomdoc, stderr, stdout};

/// The hand-made run directories of `tests/fixtures/runs/` (see the fixtures README).
pub const RUNS: &[&str] = &[
    "vllm-0.10-h200-oom-cuda-graph",
    "vllm-0.10-h200-enforce-eager",
    "vllm-0.10-h200-util-0.90",
    "vllm-0.10-h200-two-changes",
    "pytorch-h200-secrets-shared-gpu",
    "transformers-no-nvml-weights-load",
    "oomdoc-run-no-nvml-vllm-log",
];

/// Secrets planted in `pytorch-h200-secrets-shared-gpu` (argv, environment, paths, log).
pub const PLANTED_SECRETS: &[&str] = &[
    "sk-proj-Q9vX2mT7bL4kP8wR1zN6yH3c",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "hunter2",
    "0123456789abcdef0123456789abcdef01234567",
    "eyJhbGciOiJIUzI1NiJ9",
    "alice",
    "/home/",
];

/// Runs oomdoc in the crate root so fixture paths in the output are relative and stable.
pub fn run_in_root(args: &[&str]) -> Output {
    oomdoc()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

fn run_dir(name: &str) -> String {
    format!("tests/fixtures/runs/{name}")
}

fn report(names: &[&str], extra: &[&str]) -> Output {
    let dirs: Vec<String> = names.iter().map(|name| run_dir(name)).collect();
    let mut args: Vec<&str> = vec!["report"];
    args.extend(dirs.iter().map(String::as_str));
    args.extend_from_slice(extra);
    run_in_root(&args)
}

fn success(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(output));
    stdout(output)
}

#[test]
fn text_json_and_markdown_of_every_fixture() {
    for name in RUNS {
        let text = success(&report(&[name], &[]));
        insta::assert_snapshot!(format!("report_text_{name}"), text);
        let json = success(&report(&[name], &["--json"]));
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["schema_version"], 1);
        insta::assert_snapshot!(format!("report_json_{name}"), json);
    }
    let markdown = success(&report(
        &["vllm-0.10-h200-oom-cuda-graph"],
        &["--format", "markdown"],
    ));
    insta::assert_snapshot!("report_markdown_vllm_oom", markdown);
}

// See: #16: text for a terminal fits 100 columns; only a quoted log line is longer, and it is
// cut with `…` (the whole line is in `--json`).
#[test]
fn text_of_every_fixture_and_pair_fits_100_columns() {
    let mut texts: Vec<(String, String)> = RUNS
        .iter()
        .map(|name| (name.to_string(), success(&report(&[name], &[]))))
        .collect();
    for pair in RUNS.windows(2) {
        texts.push((pair.join(" + "), success(&report(pair, &[]))));
        let dirs: Vec<String> = pair.iter().map(|name| run_dir(name)).collect();
        let diff = run_in_root(&["diff", &dirs[0], &dirs[1]]);
        texts.push((format!("diff {}", pair.join(" ")), success(&diff)));
    }
    for (name, text) in &texts {
        for line in text.lines() {
            let width = line.chars().count();
            assert!(width <= 100, "{name}: {width} columns: {line}");
            // Only a quoted line is cut: a log line after `| ` or a timeline row quoting one.
            if width == 100 && line.ends_with('…') {
                let body = line.trim_start();
                assert!(
                    body.starts_with("| ") || body.starts_with('+'),
                    "{name}: prose cut: {line}"
                );
            }
        }
    }
    // The cut lines are quoted log lines: the failure line is there, cut.
    let (_, oom) = &texts[0];
    assert!(oom
        .lines()
        .any(|line| line.starts_with("  | ") && line.ends_with('…')));
}

// See: #15: the report of every fixture in Markdown and HTML, whole, so that a refactor of the
// report writers shows any change it makes.
#[test]
fn markdown_and_html_of_every_fixture() {
    for name in RUNS {
        let markdown = success(&report(&[name], &["--format", "markdown"]));
        insta::assert_snapshot!(format!("report_markdown_{name}"), markdown);
        let html = success(&report(&[name], &["--format", "html"]));
        insta::assert_snapshot!(format!("report_html_{name}"), html);
    }
    let html = success(&report(
        &["vllm-0.10-h200-oom-cuda-graph", "vllm-0.10-h200-util-0.90"],
        &[
            "--format",
            "html",
            "--probe",
            "tests/fixtures/runs/probe-vllm-0.10-h200-util-0.90.json",
        ],
    ));
    insta::assert_snapshot!("report_html_two_runs_with_probe", html);
}

// See: #15: a report of several runs (comparison, probe) in every format, whole, so that a
// refactor of the report writers shows any change it makes.
#[test]
fn every_format_of_a_three_run_report_with_probe() {
    let runs = [
        "vllm-0.10-h200-oom-cuda-graph",
        "vllm-0.10-h200-enforce-eager",
        "vllm-0.10-h200-util-0.90",
    ];
    let probe = "tests/fixtures/runs/probe-vllm-0.10-h200-util-0.90.json";
    for format in ["text", "markdown", "json", "html"] {
        let output = report(&runs, &["--format", format, "--probe", probe]);
        insta::assert_snapshot!(format!("report_three_runs_{format}"), success(&output));
    }
    for format in ["text", "markdown", "json", "html"] {
        let output = report(
            &[
                "transformers-no-nvml-weights-load",
                "oomdoc-run-no-nvml-vllm-log",
            ],
            &["--format", format],
        );
        insta::assert_snapshot!(
            format!("report_two_no_nvml_runs_{format}"),
            success(&output)
        );
    }
}

#[test]
fn two_runs_give_a_comparison_and_the_change_to_make() {
    let text = success(&report(
        &[
            "vllm-0.10-h200-oom-cuda-graph",
            "vllm-0.10-h200-enforce-eager",
        ],
        &[],
    ));
    assert!(text.contains("== Comparison: run 1 (A) vs run 2 (B) =="));
    assert!(text.contains("Action: flag --enforce-eager: absent → true"));
    insta::assert_snapshot!("report_text_two_runs", text);
    let markdown = success(&report(
        &["vllm-0.10-h200-oom-cuda-graph", "vllm-0.10-h200-util-0.90"],
        &[
            "--format",
            "markdown",
            "--probe",
            "tests/fixtures/runs/probe-vllm-0.10-h200-util-0.90.json",
        ],
    ));
    insta::assert_snapshot!("report_markdown_two_runs_with_probe", markdown);
}

#[test]
fn probe_shows_the_next_scenario_was_checked() {
    let json = success(&report(
        &["vllm-0.10-h200-util-0.90"],
        &[
            "--json",
            "--probe",
            "tests/fixtures/runs/probe-vllm-0.10-h200-util-0.90.json",
        ],
    ));
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let readiness = &value["runs"][0]["readiness"];
    assert_eq!(readiness["state"], "checked");
    assert_eq!(readiness["short_request"]["checked"], true);
    assert_eq!(readiness["next_scenario"]["checked"], true);
    // Without the probe, loading and three served requests are not enough (R18).
    let json = success(&report(&["vllm-0.10-h200-util-0.90"], &["--json"]));
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["runs"][0]["readiness"]["state"], "short_request_only");
}

#[test]
fn failure_before_ready_needs_no_request_to_reproduce() {
    let json = success(&report(&["vllm-0.10-h200-oom-cuda-graph"], &["--json"]));
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let run = &value["runs"][0];
    assert_eq!(run["reproduction"]["request_needed"], false);
    assert_eq!(run["owner_summary"]["kind"], "configuration_error");
    assert_eq!(run["failure"]["failed_in"], "cuda_graph_capture");
    assert_eq!(
        run["memory"]["devices"][0]["peak_phase"],
        "cuda_graph_capture"
    );
}

fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<html").count(), 1);
    assert!(html.trim_end().ends_with("</html>"));
    for forbidden in [
        "src=",
        "href=\"http",
        "href='http",
        "@import",
        "url(",
        "<script",
        "<link",
        "<iframe",
    ] {
        assert!(!html.contains(forbidden), "HTML contains `{forbidden}`");
    }
}

#[test]
fn html_is_one_self_contained_escaped_page_with_a_chart() {
    for name in RUNS {
        let html = success(&report(&[name], &["--format", "html"]));
        assert_self_contained(&html);
        let has_timeline = !name.contains("no-nvml");
        assert_eq!(
            html.contains("<svg class=\"chart\""),
            has_timeline,
            "{name}"
        );
    }
    let html = success(&report(
        &["vllm-0.10-h200-oom-cuda-graph"],
        &["--format", "html"],
    ));
    assert!(html.contains("class=\"oomlabel\""));
    assert!(html.contains("peak 139.19 GiB in cuda_graph_capture"));
    assert!(html.contains(">cuda_graph_capture</span>"));
    // The command line of this fixture holds `<script>alert('x')</script>`.
    let html = success(&report(
        &["pytorch-h200-secrets-shared-gpu"],
        &["--format", "html"],
    ));
    assert!(html.contains("&lt;script&gt;alert("));
    assert!(html.contains("&lt;/script&gt;"));
}

#[test]
fn planted_secrets_never_appear_in_any_format() {
    for format in ["text", "markdown", "json", "html"] {
        let output = report(
            &[
                "pytorch-h200-secrets-shared-gpu",
                "vllm-0.10-h200-oom-cuda-graph",
            ],
            &["--format", format],
        );
        let text = success(&output) + &stderr(&output);
        for secret in PLANTED_SECRETS {
            assert!(
                !text.contains(secret),
                "{format} output contains `{secret}`"
            );
        }
        assert!(text.contains("[REDACTED]"));
    }
}

#[test]
fn output_file_gets_the_report() {
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("report.html");
    let output = report(
        &["vllm-0.10-h200-oom-cuda-graph"],
        &["--format", "html", "-o", file.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    assert_self_contained(&std::fs::read_to_string(&file).unwrap());
}

fn write_run(directory: &Path, run_json: &str) {
    std::fs::create_dir_all(directory).unwrap();
    std::fs::write(directory.join("run.json"), run_json).unwrap();
}

fn assert_usage_error(output: &Output, expected: &str) {
    assert_eq!(output.status.code(), Some(2), "stderr: {}", stderr(output));
    assert!(output.stdout.is_empty());
    let message = stderr(output);
    assert!(message.starts_with("error: "), "{message}");
    assert!(message.contains(expected), "`{expected}` not in: {message}");
}

#[test]
fn bad_input_is_an_error_naming_the_path() {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    let missing = root.join("nope");
    let output = oomdoc().arg("report").arg(&missing).output().unwrap();
    assert_usage_error(
        &output,
        &format!("run directory `{}` does not exist", missing.display()),
    );

    let empty = root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let output = oomdoc().arg("report").arg(&empty).output().unwrap();
    assert_usage_error(&output, &format!("`{}` has no `run.json`", empty.display()));

    let invalid = root.join("invalid");
    write_run(&invalid, "{\"schema_version\": 1, ");
    let output = oomdoc().arg("report").arg(&invalid).output().unwrap();
    assert_usage_error(
        &output,
        &format!("`{}` is not valid JSON", invalid.join("run.json").display()),
    );

    let future = root.join("future");
    write_run(&future, "{\"schema_version\": 2}");
    let output = oomdoc().arg("report").arg(&future).output().unwrap();
    assert_usage_error(
        &output,
        "has `schema_version` 2; this oomdoc reads version 1",
    );

    let output = oomdoc()
        .arg("diff")
        .arg(&future)
        .arg(&empty)
        .output()
        .unwrap();
    assert_usage_error(&output, "has `schema_version` 2");
}

#[test]
fn a_bare_run_json_in_the_current_directory_is_read() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(run_dir(RUNS[0]));
    let output = oomdoc()
        .current_dir(&root)
        .args(["report", "run.json", "--json"])
        .output()
        .unwrap();
    let text = success(&output);
    let _: serde_json::Value = serde_json::from_str(&text).unwrap();

    // A plain file that is not a record is a JSON error naming that file, not "does not exist".
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("notes.txt"), "").unwrap();
    let output = oomdoc()
        .current_dir(directory.path())
        .args(["report", "notes.txt"])
        .output()
        .unwrap();
    assert_usage_error(&output, "`notes.txt` is not valid JSON");
}

#[test]
fn a_run_json_that_is_a_directory_is_named() {
    let directory = tempfile::tempdir().unwrap();
    let run = directory.path().join("run");
    std::fs::create_dir_all(run.join("run.json")).unwrap();
    let output = oomdoc().arg("report").arg(&run).output().unwrap();
    assert_usage_error(
        &output,
        &format!("`{}` is not a file", run.join("run.json").display()),
    );
}

#[test]
fn a_minimal_record_still_gives_a_report() {
    let directory = tempfile::tempdir().unwrap();
    let run = directory.path().join("run");
    write_run(&run, "{\"schema_version\": 1, \"command\": [\"python3\", \"x.py\"], \"exit_code\": 1, \"memory\": 7}");
    let output = oomdoc().arg("report").arg(&run).output().unwrap();
    let text = success(&output);
    assert!(text.contains("field `memory` is not in the expected shape"));
    assert!(text.contains("the record has no `explain` result"));
}

#[test]
fn an_explain_part_of_another_shape_costs_itself_only() {
    let directory = tempfile::tempdir().unwrap();
    let run = directory.path().join("run");
    let record = serde_json::json!({
        "schema_version": 1,
        "status": "exited",
        "command": ["vllm", "serve", "m"],
        "exit_code": 1,
        "explain": {
            "is_gpu_oom": true,
            "engine": {"name": "vllm", "version": "0.10.1"},
            "phase": {"failed_in": "kv_cache_alloc", "server_was_ready": false},
            "timeline": [
                {"kind": "weights_loaded", "phase": "weights_load", "line": 3, "count": 1,
                 "text": "Loading weights took 9.1 s", "t_ms": 9100},
                {"kind": "warp_drive_engaged", "phase": "profiling", "line": 4, "count": 1,
                 "text": "?"},
            ],
            "verdict": {"cause": "kv_cache_budget", "headline": "the KV cache does not fit",
                        "evidence": 7},
        },
    });
    write_run(&run, &record.to_string());
    let output = oomdoc().arg("report").arg(&run).output().unwrap();
    let text = success(&output);
    // The event and the verdict of the wrong shape are named; the rest of the section is used.
    assert!(
        text.contains("field `explain.timeline[1]` is not in the expected shape"),
        "{text}"
    );
    assert!(text.contains("field `explain.verdict` is not in the expected shape"));
    assert!(text.contains("Loading weights took 9.1 s"));
    assert!(text.contains("failed in: kv_cache_alloc"));
    assert!(text.contains("engine vllm 0.10.1"));
    let json = success(
        &oomdoc()
            .args(["report", "--json"])
            .arg(&run)
            .output()
            .unwrap(),
    );
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        json["runs"][0]["timeline"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(
        json["runs"][0]["verdict"]["cause_kind"],
        serde_json::Value::Null
    );
}

/// A header-only safetensors file (sparse data) holding one BF16 tensor of `bytes` bytes.
fn sparse_safetensors(path: &Path, bytes: u64) {
    let header = serde_json::json!({
        "model.embed_tokens.weight": {"dtype": "BF16", "shape": [bytes / 2], "data_offsets": [0, bytes]}
    })
    .to_string();
    let mut content = (header.len() as u64).to_le_bytes().to_vec();
    content.extend_from_slice(header.as_bytes());
    std::fs::write(path, &content).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(content.len() as u64 + bytes).unwrap();
}

#[test]
fn checkpoint_lower_bound_decides_a_hardware_limit() {
    let directory = tempfile::tempdir().unwrap();
    let checkpoint = directory.path().join("model.safetensors");
    sparse_safetensors(&checkpoint, 145 << 30);
    let output = oomdoc()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "report",
            "tests/fixtures/runs/vllm-0.10-h200-oom-cuda-graph",
            "--json",
            "--checkpoint",
        ])
        .arg(&checkpoint)
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_str(&success(&output)).unwrap();
    let run = &value["runs"][0];
    assert_eq!(
        run["model"]["checkpoint"]["weights_total_bytes"],
        145u64 << 30
    );
    assert_eq!(run["model"]["checkpoint"]["by_dtype"]["BF16"], 145u64 << 30);
    assert_eq!(run["fit"]["lower_bound"]["bytes"], 145u64 << 30);
    assert_eq!(run["owner_summary"]["kind"], "hardware_limit");
    assert!(run["owner_summary"]["action"]
        .as_str()
        .unwrap()
        .contains("192 GB class (AMD Instinct MI300X 192GB)"));

    // A checkpoint that cannot be read is an error naming it.
    let broken = directory.path().join("broken.safetensors");
    std::fs::write(&broken, b"\x10\x00").unwrap();
    let output = oomdoc()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "report",
            "tests/fixtures/runs/vllm-0.10-h200-oom-cuda-graph",
            "--checkpoint",
        ])
        .arg(&broken)
        .output()
        .unwrap();
    assert_usage_error(&output, "broken.safetensors");
}

#[test]
fn an_unfinished_record_says_so() {
    let directory = tempfile::tempdir().unwrap();
    let run = directory.path().join("run");
    write_run(
        &run,
        "{\"schema_version\": 1, \"status\": \"running\", \"command\": [\"python3\", \"x.py\"], \"started_at\": \"2026-11-29T17:20:00.000Z\"}",
    );
    let output = oomdoc().arg("report").arg(&run).output().unwrap();
    let text = success(&output);
    assert!(
        text.contains("record unfinished: `status` is still `running`"),
        "{text}"
    );
    assert!(text.contains("the record is unfinished"), "{text}");
}

/// Copies a fixture run directory into `root`.
fn copy_run(name: &str, root: &Path) -> std::path::PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(run_dir(name));
    let target = root.join(name);
    std::fs::create_dir_all(&target).unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), target.join(entry.file_name())).unwrap();
    }
    target
}

#[test]
fn issue_14_a_fifo_log_is_a_limitation_not_a_hang() {
    // See: #14. A FIFO `log.txt` blocked `report` for ever.
    let root = tempfile::tempdir().unwrap();
    let dir = copy_run("vllm-0.10-h200-util-0.90", root.path());
    let _ = std::fs::remove_file(dir.join("log.txt"));
    assert!(std::process::Command::new("mkfifo")
        .arg(dir.join("log.txt"))
        .status()
        .unwrap()
        .success());
    let output = oomdoc()
        .args(["report", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let out = success(&output);
    assert!(
        out.contains("the log `log.txt` could not be read (") && out.contains("FIFO"),
        "{out}"
    );
}

#[test]
fn issue_14_oversized_and_overfull_records_are_refused() {
    // See: #14. A 254 MB `probe.json` exhausted memory; a `run.json` with 3 million
    // arguments took 877 MB.
    let root = tempfile::tempdir().unwrap();
    let dir = copy_run("vllm-0.10-h200-util-0.90", root.path());
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    let mut crowded = record.clone();
    crowded["command"] = serde_json::Value::Array(vec![serde_json::json!("x"); 600_000]);
    std::fs::write(dir.join("run.json"), crowded.to_string()).unwrap();
    let output = oomdoc()
        .args(["report", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("more than 500000 entries"),
        "{}",
        stderr(&output)
    );
    std::fs::write(dir.join("run.json"), record.to_string()).unwrap();
    let probe = std::fs::File::create(dir.join("probe.json")).unwrap();
    probe.set_len(65 << 20).unwrap();
    let output = oomdoc()
        .args(["report", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("68157440 bytes, more than the 67108864 bytes oomdoc reads"),
        "{}",
        stderr(&output)
    );
}
