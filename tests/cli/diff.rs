//! CLI tests of `oomdoc diff`.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on an I/O or JSON error"
)]

use std::process::Output;

use super::report::{run_in_root, PLANTED_SECRETS};
use super::{oomdoc, stderr, stdout};

fn diff(a: &str, b: &str, extra: &[&str]) -> Output {
    let a = format!("tests/fixtures/runs/{a}");
    let b = format!("tests/fixtures/runs/{b}");
    let mut args = vec!["diff", a.as_str(), b.as_str()];
    args.extend_from_slice(extra);
    run_in_root(&args)
}

fn json(output: &Output) -> serde_json::Value {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(output));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn one_changed_flag_is_one_change_and_reordered_flags_are_none() {
    // The working run spells `--max_model_len` with underscores and reorders every flag.
    let output = diff(
        "vllm-0.10-h200-oom-cuda-graph",
        "vllm-0.10-h200-util-0.90",
        &["--json"],
    );
    let value = json(&output);
    assert_eq!(value["schema_version"], 1);
    assert_eq!(value["more_than_one_change"], false);
    let changes = value["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["field"], "flag --gpu-memory-utilization");
    assert_eq!(changes[0]["a"], "0.98");
    assert_eq!(changes[0]["b"], "0.90");
    assert_eq!(value["outcome"]["a"]["failed_in"], "cuda_graph_capture");
    assert_eq!(value["outcome"]["b"]["failed"], false);
    assert!(stderr(&output).is_empty());
    insta::assert_snapshot!("diff_json_one_change", stdout(&output));

    let output = diff(
        "vllm-0.10-h200-oom-cuda-graph",
        "vllm-0.10-h200-enforce-eager",
        &[],
    );
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!("diff_text_one_change", stdout(&output));
}

#[test]
fn two_changes_warn_that_the_comparison_cannot_say_which_helped() {
    let output = diff(
        "vllm-0.10-h200-oom-cuda-graph",
        "vllm-0.10-h200-two-changes",
        &["--json"],
    );
    let value = json(&output);
    assert_eq!(value["more_than_one_change"], true);
    let fields: Vec<&str> = value["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["flag --enforce-eager", "flag --max-model-len"]);
    assert!(stderr(&output).contains(
        "warning: 2 inputs changed between the runs: this comparison cannot show which change helped; change one thing at a time"
    ));
    let output = diff(
        "vllm-0.10-h200-oom-cuda-graph",
        "vllm-0.10-h200-two-changes",
        &["--format", "markdown"],
    );
    // The document carries the warning; stdout and stderr share a terminal: said once.
    assert!(stdout(&output).contains("2 inputs changed between the runs"));
    assert!(
        !stderr(&output).contains("inputs changed"),
        "{}",
        stderr(&output)
    );
    insta::assert_snapshot!("diff_markdown_two_changes", stdout(&output));
    let text = diff(
        "vllm-0.10-h200-oom-cuda-graph",
        "vllm-0.10-h200-two-changes",
        &[],
    );
    assert_eq!(
        stdout(&text)
            .matches("2 inputs changed between the runs")
            .count(),
        1
    );
    assert!(
        !stderr(&text).contains("inputs changed"),
        "{}",
        stderr(&text)
    );
}

#[test]
fn the_same_run_with_shuffled_flags_has_no_change() {
    let directory = tempfile::tempdir().unwrap();
    let source = super::fixture("runs/vllm-0.10-h200-oom-cuda-graph");
    let copy = directory.path().join("shuffled");
    std::fs::create_dir_all(&copy).unwrap();
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(source.join("run.json")).unwrap()).unwrap();
    record["command"] = serde_json::json!([
        "vllm",
        "serve",
        "Qwen/Qwen2.5-32B-Instruct",
        "--api-key",
        "[REDACTED]",
        "--max-num-seqs=256",
        "--max_model_len",
        "32768",
        "--gpu-memory-utilization",
        "0.98"
    ]);
    std::fs::write(copy.join("run.json"), serde_json::to_vec(&record).unwrap()).unwrap();
    let output = oomdoc()
        .arg("diff")
        .arg(&source)
        .arg(&copy)
        .arg("--json")
        .output()
        .unwrap();
    let value = json(&output);
    assert_eq!(value["changes"], serde_json::json!([]));
    assert_eq!(value["more_than_one_change"], false);
    assert_eq!(value["outcome"]["differences"], serde_json::json!([]));
}

#[test]
fn gpu_and_environment_changes_are_listed_apart_from_outcomes() {
    let output = diff(
        "vllm-0.10-h200-oom-cuda-graph",
        "pytorch-h200-secrets-shared-gpu",
        &["--json"],
    );
    let value = json(&output);
    let fields: Vec<&str> = value["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["field"].as_str().unwrap())
        .collect();
    for expected in [
        "program",
        "engine",
        "gpu[0].free_before_bytes",
        "env HF_TOKEN",
        "versions.torch",
    ] {
        assert!(fields.contains(&expected), "{expected} not in {fields:?}");
    }
    assert!(!fields
        .iter()
        .any(|field| field.contains("peak") || field.contains("exit")));
    assert!(value["outcome"]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .any(|change| change["field"] == "failed_in"));
}

#[test]
fn planted_secrets_never_appear_in_a_diff() {
    for format in ["text", "markdown", "json", "html"] {
        let output = diff(
            "pytorch-h200-secrets-shared-gpu",
            "vllm-0.10-h200-oom-cuda-graph",
            &["--format", format],
        );
        assert_eq!(output.status.code(), Some(0));
        let text = stdout(&output) + &stderr(&output);
        for secret in PLANTED_SECRETS {
            assert!(!text.contains(secret), "{format} diff contains `{secret}`");
        }
        assert!(text.contains("[REDACTED]"));
    }
}

#[test]
fn a_field_ignored_for_its_shape_is_noted_not_passed_off_as_a_change() {
    let directory = tempfile::tempdir().unwrap();
    let source = super::fixture("runs/vllm-0.10-h200-oom-cuda-graph");
    let copy = directory.path().join("broken");
    std::fs::create_dir_all(&copy).unwrap();
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(source.join("run.json")).unwrap()).unwrap();
    record["command"] = serde_json::json!("vllm serve Qwen/Qwen2.5-32B-Instruct");
    std::fs::write(copy.join("run.json"), serde_json::to_vec(&record).unwrap()).unwrap();
    let output = oomdoc()
        .arg("diff")
        .arg(&source)
        .arg(&copy)
        .arg("--json")
        .output()
        .unwrap();
    let value = json(&output);
    let notes = value["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|note| {
            let note = note.as_str().unwrap();
            note.starts_with("run B (`")
                && note.contains("field `command` is not in the expected shape and was ignored")
        }),
        "{notes:?}"
    );
    assert!(
        stderr(&output).contains("warning: run B (`"),
        "{}",
        stderr(&output)
    );
}

// See: #15: a diff in every format, whole, so that a refactor of the diff writers shows any
// change it makes.
#[test]
fn every_format_of_a_two_change_diff() {
    for format in ["text", "markdown", "json", "html"] {
        let output = diff(
            "vllm-0.10-h200-oom-cuda-graph",
            "vllm-0.10-h200-two-changes",
            &["--format", format],
        );
        assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
        insta::assert_snapshot!(format!("diff_{format}_two_changes_whole"), stdout(&output));
    }
}

#[test]
fn two_launches_differing_in_one_unlisted_variable_name_it() {
    let temp = tempfile::tempdir().unwrap();
    let launch = |name: &str, batch: &str| {
        let directory = temp.path().join(name);
        let output = oomdoc()
            .env("TRAIN_BATCH_SIZE_UNLISTED", batch)
            .arg("run")
            .arg("--out")
            .arg(&directory)
            .args(["--", "sh", "-c", "echo step"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        directory
    };
    let a = launch("a", "64");
    let b = launch("b", "128");
    let record = std::fs::read_to_string(a.join("run.json")).unwrap();
    // The value is not recorded, only its digest.
    assert!(!record.contains("\"64\""), "{record}");
    let output = oomdoc().arg("diff").arg(&a).arg(&b).output().unwrap();
    let text = stdout(&output);
    assert!(text.contains("env TRAIN_BATCH_SIZE_UNLISTED"), "{text}");
    assert!(!text.contains("no recorded input differs"), "{text}");
    assert!(text.contains("Inputs that changed (1)"), "{text}");
}

// See: #15: every fixture pair in every format, whole, so that a refactor of the diff writers
// shows any change it makes (the two-change pair is above).
#[test]
fn every_format_of_every_fixture_pair() {
    let pairs = [
        (
            "one_change",
            "vllm-0.10-h200-oom-cuda-graph",
            "vllm-0.10-h200-util-0.90",
        ),
        (
            "eager",
            "vllm-0.10-h200-oom-cuda-graph",
            "vllm-0.10-h200-enforce-eager",
        ),
        (
            "no_nvml",
            "transformers-no-nvml-weights-load",
            "oomdoc-run-no-nvml-vllm-log",
        ),
        (
            "secrets",
            "pytorch-h200-secrets-shared-gpu",
            "vllm-0.10-h200-util-0.90",
        ),
    ];
    for (name, a, b) in pairs {
        for format in ["text", "markdown", "json", "html"] {
            let output = diff(a, b, &["--format", format]);
            assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
            insta::assert_snapshot!(format!("diff_pair_{name}_{format}"), stdout(&output));
        }
    }
}
