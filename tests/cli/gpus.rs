//! CLI tests of `oomdoc gpus`, all through the replay source (`--gpu-from`), so they run in
//! CI without a GPU. Fixtures: the real H200 `nvidia-smi -q -x` capture and synthetic
//! recordings under `tests/fixtures/gpus/` (see `tests/fixtures/README.md`).

#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic on unexpected output, which fails the test"
)]

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::{fixture, oomdoc, stderr, stdout};

const H200_XML: &str = "h200-torch2.11/nvidia-smi-q.xml";

/// Runs `oomdoc gpus` with `args` and extra environment variables.
fn gpus(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = oomdoc();
    command.arg("gpus").args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// Exit code, stdout and stderr in one text, for whole-output snapshots.
fn transcript(output: &Output) -> String {
    format!(
        "exit: {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    )
}

/// `--gpu-from FILE` plus the numbering flags for `numbering`, given as the variables they stand
/// for: a replay is numbered as recorded, never by this shell's `CUDA_VISIBLE_DEVICES`.
fn replay_args(file: &str, numbering: &[(&str, &str)]) -> Vec<String> {
    let mut args = vec![
        "--gpu-from".to_string(),
        fixture(file).to_str().unwrap().to_string(),
    ];
    for (name, value) in numbering {
        let flag = match *name {
            "CUDA_VISIBLE_DEVICES" => "--cuda-visible-devices",
            "CUDA_DEVICE_ORDER" => "--cuda-device-order",
            other => panic!("no flag for {other}"),
        };
        args.push(format!("{flag}={value}"));
    }
    args
}

fn replay_text(file: &str, numbering: &[(&str, &str)]) -> String {
    let args = replay_args(file, numbering);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    transcript(&gpus(&args, &[]))
}

fn replay_json(file: &str, numbering: &[(&str, &str)]) -> Value {
    let mut args = replay_args(file, numbering);
    args.push("--json".to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = gpus(&args, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The CUDA ordinal of each device, in NVML order.
fn ordinals(document: &Value) -> Vec<Option<u64>> {
    document["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|device| device["cuda_ordinal"].as_u64())
        .collect()
}

fn warning_kinds(document: &Value) -> Vec<String> {
    document["cuda"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|warning| warning["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn h200_xml_text() {
    insta::assert_snapshot!("gpus_h200_xml_text", replay_text(H200_XML, &[]));
}

#[test]
fn h200_xml_json_contract() {
    let document = replay_json(H200_XML, &[]);
    insta::assert_json_snapshot!("gpus_h200_xml_json", document);
    // The contract of issue 3, checked field by field.
    assert_eq!(document["schema_version"], 1);
    let device = &document["devices"][0];
    assert_eq!(device["index"], 0);
    assert_eq!(device["uuid"], "GPU-e7247aa6-6306-7c70-9f9d-7e26a3a729ec");
    assert_eq!(device["pci_bus_id"], "00000000:00:06.0");
    assert_eq!(device["name"], "NVIDIA H200");
    assert_eq!(device["cuda_ordinal"], 0);
    assert_eq!(device["memory"]["total_bytes"], 143_771u64 << 20);
    assert_eq!(device["memory"]["reserved_bytes"], 616u64 << 20);
    assert_eq!(device["memory"]["used_bytes"], 0);
    assert_eq!(device["memory"]["free_bytes"], 143_156u64 << 20);
    assert!(device["processes"].as_array().unwrap().is_empty());
}

#[test]
fn process_fields_in_json() {
    let document = replay_json("gpus/synthetic-flags.json", &[]);
    let process = &document["devices"][0]["processes"][0];
    assert_eq!(process["pid"], 2001);
    assert_eq!(process["name"], "python3");
    assert_eq!(process["used_bytes"], 10u64 << 30);
    // The u64::MAX sentinel stays unavailable, never zero.
    let sentinel = &document["devices"][0]["processes"][4];
    assert_eq!(sentinel["used_bytes"], Value::Null);
    assert!(sentinel["unavailable_reason"]
        .as_str()
        .unwrap()
        .contains("NVML_VALUE_NOT_AVAILABLE"));
}

#[test]
fn flags_text() {
    insta::assert_snapshot!(
        "gpus_flags_text",
        replay_text("gpus/synthetic-flags.json", &[])
    );
}

#[test]
fn flags_json() {
    let document = replay_json("gpus/synthetic-flags.json", &[]);
    let flags: Vec<Value> = document["devices"][0]["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|process| process["flags"].clone())
        .collect();
    insta::assert_json_snapshot!("gpus_flags_process_flags", flags);
    assert_eq!(
        document["devices"][1]["flags"][0]["kind"],
        "used_without_visible_process"
    );
    assert_eq!(document["host"]["container"]["kind"], "docker");
}

#[test]
fn foreign_pid_namespace_text() {
    insta::assert_snapshot!(
        "gpus_foreign_pid_text",
        replay_text("gpus/synthetic-foreign-pid.json", &[])
    );
}

#[test]
fn cuda_visible_devices_cases() {
    /// (CUDA_VISIBLE_DEVICES, CUDA ordinal of each of the 8 devices, CUDA warnings)
    type Case<'a> = (&'a str, [Option<u64>; 8], &'a [&'a str]);
    let cases: &[Case] = &[
        (
            "1,0",
            [Some(1), Some(0), None, None, None, None, None, None],
            &[],
        ),
        (
            "7",
            [None, None, None, None, None, None, None, Some(0)],
            &[],
        ),
        // A unique UUID prefix, then a full UUID.
        (
            "GPU-5f1c9b,GPU-d4718199-7777-4777-8777-777777777777",
            [None, Some(0), None, None, None, None, None, Some(1)],
            &[],
        ),
        // `GPU-5f1c` is shared by GPU 0 and GPU 1: ambiguous, CUDA stops there.
        (
            "GPU-7a2e,GPU-5f1c,GPU-9b3f",
            [None, None, Some(0), None, None, None, None, None],
            &["unmatched_entry", "ignored_entries"],
        ),
        // The first invalid entry ends the list.
        (
            "0,2,-1,1",
            [Some(0), None, Some(1), None, None, None, None, None],
            &["ignored_entries"],
        ),
        (
            "3,9,4",
            [None, None, None, Some(0), None, None, None, None],
            &["unmatched_entry", "ignored_entries"],
        ),
        ("", [None; 8], &["empty_visible_devices"]),
        ("2,2", [None; 8], &["duplicate_entry"]),
        (
            "1gpu2,0",
            [Some(1), Some(0), None, None, None, None, None, None],
            &[],
        ),
        ("GPU-ffff", [None; 8], &["unmatched_entry"]),
    ];
    for (visible, expected, warnings) in cases {
        let document = replay_json(
            "gpus/synthetic-8xh200.json",
            &[("CUDA_VISIBLE_DEVICES", visible)],
        );
        assert_eq!(
            ordinals(&document),
            expected.to_vec(),
            "CUDA_VISIBLE_DEVICES={visible:?}"
        );
        assert_eq!(
            warning_kinds(&document),
            *warnings,
            "CUDA_VISIBLE_DEVICES={visible:?}"
        );
    }
}

#[test]
fn cuda_visible_devices_reversed_on_two_gpus() {
    let document = replay_json(
        "gpus/synthetic-2xh200.json",
        &[
            ("CUDA_VISIBLE_DEVICES", "1,0"),
            ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
        ],
    );
    assert_eq!(ordinals(&document), vec![Some(1), Some(0)]);
    assert_eq!(document["cuda"]["visible_devices"]["raw"], "1,0");
    assert_eq!(document["cuda"]["device_order"], "pci_bus_id");
}

#[test]
fn ambiguous_prefix_text() {
    insta::assert_snapshot!(
        "gpus_ambiguous_prefix_text",
        replay_text(
            "gpus/synthetic-8xh200.json",
            &[("CUDA_VISIBLE_DEVICES", "GPU-7a2e,GPU-5f1c,GPU-9b3f")]
        )
    );
}

#[test]
fn mig_uuids_select_instances() {
    let document = replay_json(
        "gpus/synthetic-mig-h200.json",
        &[(
            "CUDA_VISIBLE_DEVICES",
            "MIG-7d1e2a3b,MIG-5c89852c-d268-c3f3-1b07-005d5ae1dc3f",
        )],
    );
    let instances = &document["devices"][0]["mig_instances"];
    assert_eq!(instances[0]["cuda_ordinal"], 1);
    assert_eq!(instances[1]["cuda_ordinal"], 0);
    assert_eq!(document["devices"][0]["cuda_ordinal"], Value::Null);
    assert_eq!(document["cuda"]["visible_count"], 2);
    insta::assert_snapshot!(
        "gpus_mig_text",
        replay_text(
            "gpus/synthetic-mig-h200.json",
            &[("CUDA_VISIBLE_DEVICES", "MIG-7d1e2a3b")]
        )
    );
}

#[test]
fn fastest_first_warns_only_for_unlike_devices() {
    let mixed = replay_json("gpus/synthetic-mixed-a100-h100.json", &[]);
    assert_eq!(warning_kinds(&mixed), vec!["fastest_first_may_differ"]);
    assert_eq!(mixed["cuda"]["ordinals_certain"], false);
    let pci = replay_json(
        "gpus/synthetic-mixed-a100-h100.json",
        &[("CUDA_DEVICE_ORDER", "PCI_BUS_ID")],
    );
    assert!(warning_kinds(&pci).is_empty());
    assert_eq!(pci["cuda"]["ordinals_certain"], true);
    let alike = replay_json("gpus/synthetic-2xh200.json", &[]);
    assert!(warning_kinds(&alike).is_empty());
    insta::assert_snapshot!(
        "gpus_mixed_fastest_first_text",
        replay_text("gpus/synthetic-mixed-a100-h100.json", &[])
    );
}

#[test]
fn env_var_selects_the_replay_file() {
    let path = fixture(H200_XML);
    let output = gpus(&["--json"], &[("OOMDOC_GPU_FROM", path.to_str().unwrap())]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["source"], "nvidia_smi");
}

#[test]
fn record_then_replay_round_trips() {
    let directory = tempfile::tempdir().unwrap();
    let recording = directory.path().join("recording.json");
    let recording_arg = recording.to_str().unwrap();
    for file in [
        H200_XML,
        "gpus/synthetic-flags.json",
        "gpus/synthetic-mig-h200.json",
    ] {
        let path = fixture(file);
        let first = gpus(
            &[
                "--gpu-from",
                path.to_str().unwrap(),
                "--record",
                recording_arg,
                "--json",
            ],
            &[],
        );
        assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
        let replayed = gpus(&["--gpu-from", recording_arg, "--json"], &[]);
        assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
        let first: Value = serde_json::from_slice(&first.stdout).unwrap();
        let replayed: Value = serde_json::from_slice(&replayed.stdout).unwrap();
        // A live recording says `nvml` and replays as `replay`; everything else is identical.
        // The numbering is the file's own on replay, not re-derived: only its label differs.
        let strip = |mut value: Value| {
            value["source"] = Value::Null;
            value["cuda_numbering_from"] = Value::Null;
            value
        };
        assert_eq!(strip(first), strip(replayed), "{file}");
    }
}

#[test]
fn watch_records_samples() {
    let directory = tempfile::tempdir().unwrap();
    let recording = directory.path().join("watch.json");
    let path = fixture("gpus/synthetic-2xh200.json");
    let output = gpus(
        &[
            "--gpu-from",
            path.to_str().unwrap(),
            "--watch",
            "0.01",
            "--count",
            "3",
            "--record",
            recording.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // Three frames, no screen clearing when stdout is not a terminal.
    assert_eq!(
        stdout(&output).matches("2 GPUs, 2 visible to CUDA").count(),
        3
    );
    assert!(!stdout(&output).contains('\x1b'));
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(&recording).unwrap()).unwrap();
    let samples = document["samples"]["GPU-4823d6dc-d306-8b80-f038-3b7ad597860c"]
        .as_array()
        .unwrap();
    assert_eq!(samples.len(), 3);
    assert_eq!(samples[0]["used_bytes"], (8u64 << 30) + (522u64 << 20));
}

#[test]
fn markdown_and_html() {
    let path = fixture("gpus/synthetic-flags.json");
    let markdown = gpus(
        &["--gpu-from", path.to_str().unwrap(), "--format", "markdown"],
        &[],
    );
    insta::assert_snapshot!("gpus_flags_markdown", stdout(&markdown));
    let html = gpus(
        &["--gpu-from", path.to_str().unwrap(), "--format", "html"],
        &[],
    );
    let page = stdout(&html);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("likely orphaned engine worker"));
    assert!(!page.contains("<script") && !page.contains("http://") && !page.contains("https://"));
}

#[test]
fn unreadable_replay_is_an_error() {
    let directory = tempfile::tempdir().unwrap();
    let bad = directory.path().join("bad.json");
    std::fs::write(&bad, "{\"devices\": 3}").unwrap();
    let output = gpus(&["--gpu-from", bad.to_str().unwrap()], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let text = stderr(&output).replace(bad.to_str().unwrap(), "[FILE]");
    insta::assert_snapshot!("gpus_bad_replay", text);
    let missing = gpus(&["--gpu-from", "/nonexistent/gpus.xml"], &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("/nonexistent/gpus.xml"));
}

#[test]
fn bad_watch_interval_is_a_usage_error() {
    let path = fixture(H200_XML);
    let output = gpus(&["--gpu-from", path.to_str().unwrap(), "--watch", "0"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("`--watch` needs a positive number of seconds"));
}

#[test]
fn watch_with_json_on_stdout_is_a_usage_error() {
    // `--json` stdout is exactly one document; `--watch` would print one per refresh.
    let path = fixture(H200_XML);
    let path = path.to_str().unwrap();
    let output = gpus(
        &["--gpu-from", path, "--watch", "--count", "2", "--json"],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output).contains("`--format json` on stdout"),
        "{}",
        stderr(&output)
    );
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("latest.json");
    let file_arg = file.to_str().unwrap();
    let output = gpus(
        &[
            "--gpu-from",
            path,
            "--watch",
            "0.01",
            "--count",
            "2",
            "--json",
            "-o",
            file_arg,
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(document["devices"].as_array().unwrap().len(), 1);
}

/// Without `--gpu-from`, `oomdoc gpus` reads NVML. On a machine without the NVIDIA library
/// (CI, this project's build machine) it must say that NVML is absent, give a hint and exit 2;
/// on a GPU machine it must list the GPUs.
#[test]
fn without_nvml_exit_2_with_a_hint() {
    let output = gpus(&[], &[]);
    let has_driver = Path::new("/proc/driver/nvidia/version").exists();
    if has_driver {
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        return;
    }
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let text = stderr(&output);
    assert!(
        text.starts_with("error: cannot list GPUs through NVML\n"),
        "{text}"
    );
    assert!(text.contains("Caused by: NVML is absent"), "{text}");
    assert!(text.contains("\nhint: "), "{text}");
    assert!(text.contains("--gpu-from FILE"), "{text}");
}

/// Builds the fake `libnvidia-ml.so.1` (`tests/fixtures/gpus/fake_nvml.c`) into a temporary
/// directory, to drive oomdoc's real NVML source without a GPU.
fn fake_nvml() -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(directory.path().join("libnvidia-ml.so.1"))
        .arg(fixture("gpus/fake_nvml.c"))
        .status()
        .unwrap_or_else(|error| {
            panic!("a C compiler `cc` must build the fake NVML library: {error}")
        });
    assert!(status.success());
    directory
}

/// Runs `oomdoc gpus` against the fake NVML; returns the child's PID and its output.
fn gpus_with_fake_nvml(library: &Path, args: &[&str], env: &[(&str, &str)]) -> (u32, Output) {
    let mut command = oomdoc();
    command
        .arg("gpus")
        .args(args)
        .env("LD_LIBRARY_PATH", library)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let child = command.spawn().unwrap();
    let pid = child.id();
    (pid, child.wait_with_output().unwrap())
}

#[test]
fn nvml_source_reads_the_fake_library() {
    let library = fake_nvml();
    let (pid, output) = gpus_with_fake_nvml(library.path(), &["--json"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["source"], "nvml");
    assert_eq!(document["driver_version"], "580.159.04");
    assert_eq!(document["cuda_version"], "13.0");
    assert!(document["elapsed_us"].as_u64().is_some());
    let first = &document["devices"][0];
    assert_eq!(first["uuid"], "GPU-fa4e0000-0000-4000-8000-000000000000");
    assert_eq!(first["pci_bus_id"], "00000000:18:00.0");
    assert_eq!(first["compute_capability"], "9.0");
    // NVML v2: total = reserved + used + free, used excluding reserved.
    let memory = &first["memory"];
    assert_eq!(memory["total_bytes"], 150_754_820_096u64);
    assert_eq!(memory["reserved_bytes"], 644_939_776u64);
    assert_eq!(memory["used_bytes"], 2u64 << 30);
    assert_eq!(
        memory["free_bytes"],
        150_754_820_096u64 - 644_939_776 - (2u64 << 30)
    );
    // oomdoc itself, listed as compute and graphics, named from /proc.
    let own = &first["processes"][0];
    assert_eq!(own["pid"], pid);
    assert_eq!(own["name"], "oomdoc");
    assert_eq!(own["used_bytes"], 1u64 << 30);
    assert_eq!(own["process_type"], "compute+graphics");
    assert_eq!(own["in_pid_namespace"], true);
    assert_eq!(own["flags"], serde_json::json!([]));
    // Its host RSS is read live from /proc (a running oomdoc holds more than 1 MiB).
    assert!(own["host_rss_bytes"].as_u64().unwrap() > 1 << 20, "{own}");
    assert_eq!(own.get("host_rss_unavailable_reason"), None);
    // The u64::MAX sentinel is unavailable, never a number; the PID is foreign.
    let sentinel = &first["processes"][1];
    assert_eq!(sentinel["pid"], 4_000_000_000u64);
    assert_eq!(sentinel["used_bytes"], Value::Null);
    assert_eq!(sentinel["host_rss_bytes"], Value::Null);
    assert_eq!(
        sentinel["host_rss_unavailable_reason"],
        "PID 4000000000 is not in oomdoc's PID namespace"
    );
    assert_eq!(sentinel["container"], Value::Null);
    assert!(sentinel["unavailable_reason"]
        .as_str()
        .unwrap()
        .contains("u64::MAX"));
    assert_eq!(sentinel["name"], Value::Null);
    assert_eq!(sentinel["flags"][0]["kind"], "foreign_pid_namespace");
    // A refused process list is a limitation, not an empty list.
    let second = &document["devices"][1];
    assert!(second["processes_unavailable_reason"]
        .as_str()
        .unwrap()
        .contains("no permission"));
    assert!(document["limitations"][0]
        .as_str()
        .unwrap()
        .contains("no permission"));
}

#[test]
fn nvml_source_applies_cuda_visible_devices() {
    let library = fake_nvml();
    let (_, output) = gpus_with_fake_nvml(
        library.path(),
        &["--json"],
        &[("CUDA_VISIBLE_DEVICES", "GPU-fa4e1")],
    );
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(ordinals(&document), vec![None, Some(0)]);
}

#[test]
fn nvml_init_failures_keep_their_meaning() {
    let library = fake_nvml();
    let (_, driver) = gpus_with_fake_nvml(library.path(), &[], &[("FAKE_NVML", "driver")]);
    assert_eq!(driver.status.code(), Some(2));
    assert!(driver.stdout.is_empty());
    insta::assert_snapshot!("gpus_nvml_driver_not_loaded", stderr(&driver));
    let (_, mismatch) = gpus_with_fake_nvml(library.path(), &[], &[("FAKE_NVML", "mismatch")]);
    assert_eq!(mismatch.status.code(), Some(2));
    insta::assert_snapshot!("gpus_nvml_version_mismatch", stderr(&mismatch));
}

#[test]
fn nvml_record_replays_and_benchmark_runs() {
    let library = fake_nvml();
    let directory = tempfile::tempdir().unwrap();
    let recording = directory.path().join("fake.json");
    let (_, live) = gpus_with_fake_nvml(
        library.path(),
        &["--json", "--record", recording.to_str().unwrap()],
        &[],
    );
    assert_eq!(live.status.code(), Some(0), "{}", stderr(&live));
    let replayed = gpus(&["--gpu-from", recording.to_str().unwrap(), "--json"], &[]);
    let mut live: Value = serde_json::from_slice(&live.stdout).unwrap();
    let mut replayed: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    assert_eq!(replayed["source"], "replay");
    for document in [&mut live, &mut replayed] {
        let object = document.as_object_mut().unwrap();
        object.remove("source");
        object.remove("elapsed_us");
        object.remove("cuda_numbering_from");
    }
    assert_eq!(live, replayed);
    let (_, bench) =
        gpus_with_fake_nvml(library.path(), &["--bench-sampling", "0.05", "--json"], &[]);
    assert_eq!(bench.status.code(), Some(0), "{}", stderr(&bench));
    let bench: Value = serde_json::from_slice(&bench.stdout).unwrap();
    assert_eq!(bench["uuid"], "GPU-fa4e0000-0000-4000-8000-000000000000");
    assert!(bench["memory_calls"].as_u64().unwrap() > 0);
    assert_eq!(bench["inventory_runs"], 20);
}

#[test]
fn no_gpu_exits_1() {
    let directory = tempfile::tempdir().unwrap();
    let empty = directory.path().join("empty.xml");
    std::fs::write(
        &empty,
        "<nvidia_smi_log><driver_version>580.159.04</driver_version></nvidia_smi_log>",
    )
    .unwrap();
    let output = gpus(&["--gpu-from", empty.to_str().unwrap()], &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("no GPU found"));
}

#[test]
fn issue_14_deep_xml_and_fifos_are_refused() {
    // See: #14. XML nested 100,000 deep overflowed the stack (abort); a FIFO given to
    // `--gpu-from` blocked for ever.
    let root = tempfile::tempdir().unwrap();
    let deep = root.path().join("deep.xml");
    std::fs::write(
        &deep,
        format!(
            "<nvidia_smi_log>{}{}</nvidia_smi_log>",
            "<a>".repeat(100_000),
            "</a>".repeat(100_000)
        ),
    )
    .unwrap();
    let output = gpus(&["--gpu-from", deep.to_str().unwrap()], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("elements nest more than 256 deep at line 1"),
        "{}",
        stderr(&output)
    );
    let fifo = root.path().join("fifo.xml");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let output = gpus(&["--gpu-from", fifo.to_str().unwrap()], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is a FIFO (named pipe), not a regular file"),
        "{}",
        stderr(&output)
    );
}

// See: #16 — a replay is numbered as that machine numbered it, not by this shell.
#[test]
fn issue_16_replay_ignores_this_shells_cuda_visible_devices() {
    let path = fixture("gpus/synthetic-2xh200.json");
    let path = path.to_str().unwrap();
    let output = gpus(
        &["--gpu-from", path, "--json"],
        &[
            ("CUDA_VISIBLE_DEVICES", "1"),
            ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(ordinals(&document), vec![Some(0), Some(1)]);
    assert_eq!(document["cuda_numbering_from"], "not_recorded");
    assert_eq!(document["cuda"]["visible_devices"], Value::Null);
    // A recording made under `CUDA_VISIBLE_DEVICES=1` replays with that numbering, whatever
    // this shell says; `--cuda-visible-devices` asks for another.
    let directory = tempfile::tempdir().unwrap();
    let recording = directory.path().join("visible-1.json");
    let recording = recording.to_str().unwrap();
    let made = gpus(
        &[
            "--gpu-from",
            path,
            "--cuda-visible-devices",
            "1",
            "--record",
            recording,
        ],
        &[],
    );
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let replayed = gpus(
        &["--gpu-from", recording, "--json"],
        &[("CUDA_VISIBLE_DEVICES", "0,1")],
    );
    let replayed: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    assert_eq!(ordinals(&replayed), vec![None, Some(0)]);
    assert_eq!(replayed["cuda_numbering_from"], "recording");
    let text = stdout(&gpus(
        &["--gpu-from", recording],
        &[("CUDA_VISIBLE_DEVICES", "0")],
    ));
    assert!(
        text.contains("CUDA numbering (as recorded): `CUDA_VISIBLE_DEVICES=1`"),
        "{text}"
    );
    let asked = replay_json(
        "gpus/synthetic-2xh200.json",
        &[("CUDA_VISIBLE_DEVICES", "1,0")],
    );
    assert_eq!(ordinals(&asked), vec![Some(1), Some(0)]);
    assert_eq!(asked["cuda_numbering_from"], "command_line");
}

#[test]
fn replayed_pids_get_no_host_rss() {
    let document = replay_json("gpus/synthetic-flags.json", &[]);
    let processes = document["devices"][0]["processes"].as_array().unwrap();
    assert!(!processes.is_empty());
    for process in processes {
        assert_eq!(process["host_rss_bytes"], Value::Null, "{process}");
        assert_eq!(process["container"], Value::Null, "{process}");
        assert_eq!(
            process["host_rss_unavailable_reason"],
            "not measured: a replayed PID belongs to the machine that recorded it"
        );
    }
}
