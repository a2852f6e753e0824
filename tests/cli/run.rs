//! CLI tests of `oomdoc run`: exit codes, pass-through, the log, signals, the record.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use super::{oomdoc, stderr, stdout};

pub(super) fn record(directory: &Path) -> serde_json::Value {
    let path = directory.join("run.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read `{}`: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("invalid run.json: {error}"))
}

pub(super) fn run_sh(directory: &Path, script: &str) -> std::process::Output {
    oomdoc()
        .arg("run")
        .arg("--out")
        .arg(directory)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap_or_else(|error| panic!("cannot run oomdoc: {error}"))
}

#[test]
fn exit_codes_are_the_childs() {
    let temp = tempfile::tempdir().unwrap();
    for (name, script, code, status) in [
        ("zero", "exit 0", 0, "exited"),
        ("three", "exit 3", 3, "exited"),
        ("killed", "kill -KILL $$", 137, "signaled"),
    ] {
        let directory = temp.path().join(name);
        let output = run_sh(&directory, script);
        assert_eq!(
            output.status.code(),
            Some(code),
            "{name}: {}",
            stderr(&output)
        );
        let record = record(&directory);
        assert_eq!(record["exit_code"], code, "{name}");
        assert_eq!(record["status"], status, "{name}");
        assert_eq!(record["interrupted"], false);
        assert!(record["ended_at"].is_string());
    }
    assert_eq!(record(&temp.path().join("killed"))["signal"], 9);
}

#[test]
fn output_passes_through_and_is_logged() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("out");
    let output = run_sh(
        &directory,
        "printf 'one\\ntwo\\n'; printf 'warn\\n' >&2; printf 'no newline at the end'",
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "one\ntwo\nno newline at the end");
    let err = stderr(&output);
    assert!(err.starts_with("warn\n"), "{err}");
    assert!(err.contains("oomdoc run: `sh -c "), "{err}");
    let log = std::fs::read_to_string(directory.join("log.txt")).unwrap();
    let stdout_lines: Vec<&str> = log.lines().filter(|line| *line != "warn").collect();
    assert_eq!(stdout_lines, ["one", "two", "no newline at the end"]);
    assert!(log.lines().any(|line| line == "warn"));
    assert!(log.ends_with('\n'));
    let record = record(&directory);
    assert_eq!(record["log"]["file"], "log.txt");
    assert_eq!(record["log"]["lines"], 4);
    assert_eq!(record["log"]["stdout_lines"], 3);
    assert_eq!(record["log"]["stderr_lines"], 1);
    assert_eq!(record["log"]["bytes"], log.len() as u64);
}

#[test]
fn sigterm_is_forwarded_and_the_record_says_interrupted() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("term");
    let mut child = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args(["--", "sh", "-c", "echo ready; exec sleep 60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let record = record(&directory);
    assert_eq!(record["interrupted"], true);
    assert_eq!(record["status"], "interrupted");
    assert_eq!(record["exit_code"], 143);
    assert_eq!(record["signal"], 15);
    assert_eq!(record["signals_received"][0]["signal"], 15);
    assert_eq!(record["signals_received"][0]["forwarded"], true, "{record}");
    assert_eq!(record["signals_received"][0]["origin"], "process");
}

#[test]
fn oom_text_from_the_child_is_explained() {
    let cases: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(super::fixture("h200-torch2.11/oom_cases.json")).unwrap(),
    )
    .unwrap();
    let traceback = cases[0]["result"]["traceback"].as_str().unwrap();
    assert!(traceback.contains("Tried to allocate 200.00 GiB"));
    let temp = tempfile::tempdir().unwrap();
    let text = temp.path().join("traceback.txt");
    std::fs::write(&text, traceback).unwrap();
    let directory = temp.path().join("oom");
    let output = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args(["--", "sh", "-c", "cat \"$0\" >&2; exit 1"])
        .arg(&text)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        output.stderr.get(..traceback.len()),
        Some(traceback.as_bytes())
    );
    let record = record(&directory);
    assert_eq!(record["explain"]["is_gpu_oom"], true);
    let oom = &record["explain"]["oom"];
    assert_eq!(oom["tried_to_allocate_bytes"], 200u64 << 30);
    assert_eq!(oom["gpu_index"], 0);
    assert_eq!(record["explain"]["ooms"][0]["line"], 3);
    assert_eq!(record["ooms"][0]["line"], 3);
    assert_eq!(record["ooms"][0]["gpu_index"], 0);
    assert!(record["ooms"][0]["t_ms"].is_u64());
    assert!(stderr(&output).contains("GPU out of memory: 1 message in the log"));
}

#[test]
fn secrets_are_redacted_in_the_record() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("secret");
    let output = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .env("HF_TOKEN", "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")
        .env("VLLM_API_KEY", "abc")
        .env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
        .args([
            "--",
            "sh",
            "-c",
            "echo $HF_TOKEN",
            "serve",
            "--api-key",
            "sk-proj-NotARealKeyEither12345",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = std::fs::read_to_string(directory.join("run.json")).unwrap();
    assert!(!text.contains("ThisIsNotARealToken"), "{text}");
    assert!(!text.contains("NotARealKeyEither"), "{text}");
    let record: serde_json::Value = serde_json::from_str(&text).unwrap();
    let environment = &record["preflight"]["environment"];
    assert_eq!(environment["HF_TOKEN"], "[REDACTED]");
    assert_eq!(environment["VLLM_API_KEY"], "[REDACTED]");
    assert_eq!(
        environment["PYTORCH_CUDA_ALLOC_CONF"],
        "expandable_segments:True"
    );
    let command: Vec<&str> = record["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        command,
        [
            "sh",
            "-c",
            "echo $HF_TOKEN",
            "serve",
            "--api-key",
            "[REDACTED]"
        ]
    );
    // The child's own output is passed through and logged as it was.
    assert!(stdout(&output).contains("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"));
}

#[test]
fn record_is_valid_json_at_every_moment() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("live");
    let mut child = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args([
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 40 ]; do echo \"Loading weights shard $i\"; echo \"Loading weights took 0.01 seconds\"; sleep 0.02; i=$((i+1)); done",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reads = 0;
    let mut running_seen = false;
    loop {
        let done = child.try_wait().unwrap().is_some();
        if let Ok(text) = std::fs::read_to_string(directory.join("run.json")) {
            let record: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|error| panic!("invalid run.json after {reads} reads: {error}"));
            running_seen |= record["status"] == "running";
            reads += 1;
        }
        if done {
            break;
        }
    }
    assert!(reads > 1);
    assert!(running_seen);
    let record = record(&directory);
    assert_eq!(record["status"], "exited");
    assert_eq!(record["phases"][0]["phase"], "weights_load");
    // Leftover temporary files would mean a write was not atomic.
    let names: Vec<String> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    // `.oomdoc.lock` stays: removing it at the end would let two later runs lock two files.
    assert_eq!(sorted, [".oomdoc.lock", "log.txt", "run.json"]);
}

#[test]
fn command_not_found_exits_127_with_a_record() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("missing");
    let output = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args(["--", "oomdoc-no-such-command-here", "--flag"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(127));
    assert!(output.stdout.is_empty());
    let err = stderr(&output);
    assert!(
        err.starts_with("error: ")
            && err.contains("command `oomdoc-no-such-command-here` not found"),
        "{err}"
    );
    let record = record(&directory);
    assert_eq!(record["status"], "spawn_failed");
    assert_eq!(record["exit_code"], 127);
}

#[test]
fn existing_directories_are_protected() {
    let temp = tempfile::tempdir().unwrap();
    let other = temp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let output = run_sh(&other, "exit 0");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("is not an oomdoc run directory"));

    let file = temp.path().join("file");
    std::fs::write(&file, "mine").unwrap();
    let output = run_sh(&file, "exit 0");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output).contains("is a file, not a directory"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");

    let earlier = temp.path().join("earlier");
    assert_eq!(run_sh(&earlier, "exit 0").status.code(), Some(0));
    let again = run_sh(&earlier, "exit 4");
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("add `--force`"));
    let forced = oomdoc()
        .arg("run")
        .arg("--force")
        .arg("--out")
        .arg(&earlier)
        .args(["--", "sh", "-c", "exit 4"])
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(4));
    assert_eq!(record(&earlier)["exit_code"], 4);
}

#[test]
fn without_gpu_source_the_record_says_why() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("nogpu");
    let output = run_sh(&directory, "echo hi");
    assert_eq!(output.status.code(), Some(0));
    let record = record(&directory);
    assert_eq!(record["memory"]["available"], false);
    let reason = record["memory"]["reason"].as_str().unwrap();
    assert!(!reason.is_empty());
    let limitations = record["limitations"].as_array().unwrap();
    assert!(limitations
        .iter()
        .any(|l| l.as_str().unwrap().starts_with("no memory timeline: ")));
}

#[test]
fn json_summary_is_the_record() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("json");
    let output = oomdoc()
        .arg("run")
        .arg("--json")
        .arg("-o")
        .arg("-")
        .arg("--out")
        .arg(&directory)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed, record(&directory));
    assert_eq!(printed["schema_version"], 1);
}

#[test]
fn json_summary_never_mixes_with_the_childs_stdout() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("json");
    let output = oomdoc()
        .arg("run")
        .arg("--json")
        .arg("--out")
        .arg(&directory)
        .args(["--", "echo", "hello"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "hello\n");
    let printed: serde_json::Value = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(printed, record(&directory));
}

#[test]
fn torch_snapshot_hook_is_harmless_without_torch() {
    if Command::new("python3").arg("--version").output().is_err() {
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("py");
    let output = oomdoc()
        .arg("run")
        .arg("--torch-snapshot")
        .arg("--out")
        .arg(&directory)
        .args([
            "--",
            "python3",
            "-c",
            "import sys, json; print('ok', 'torch' in sys.modules)",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "ok False\n");
    let record = record(&directory);
    assert_eq!(record["torch_snapshot"]["files"], serde_json::json!([]));
    assert!(directory.join(".oomdoc-python/sitecustomize.py").is_file());
}

#[test]
fn torch_snapshot_hook_dumps_on_oom_and_chains_sitecustomize() {
    if Command::new("python3").arg("--version").output().is_err() {
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let own_site = temp.path().join("site");
    std::fs::create_dir_all(&own_site).unwrap();
    std::fs::write(
        own_site.join("sitecustomize.py"),
        "import sys\nsys.stderr.write('user sitecustomize ran\\n')\n",
    )
    .unwrap();
    let python_path = format!(
        "{}:{}",
        super::fixture("run/fake_torch").display(),
        own_site.display()
    );
    let directory = temp.path().join("snap");
    let output = oomdoc()
        .arg("run")
        .arg("--torch-snapshot")
        .arg("--out")
        .arg(&directory)
        .env("PYTHONPATH", python_path)
        .args(["--", "python3", "-c", "import torch; torch.fake_oom()"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).starts_with("user sitecustomize ran\n"));
    let snapshot = std::fs::read(directory.join("torch_snapshot.pickle")).unwrap();
    assert_eq!(snapshot, b"fake snapshot, max_entries=100000\n");
    let record = record(&directory);
    let torch = &record["torch_snapshot"];
    assert_eq!(torch["file"], "torch_snapshot.pickle");
    assert_eq!(torch["history_enabled"], true);
    assert!(torch["notes"][1]
        .as_str()
        .unwrap()
        .ends_with("snapshot written to torch_snapshot.pickle (out-of-memory observer, device 0)"));
    assert!(stderr(&output).contains("PyTorch memory snapshot: "));
}

/// `oomdoc run --gpu-from FIXTURE` of a short child that starts loading a model.
fn run_replayed(fixture: &str, directory: &Path) -> std::process::Output {
    oomdoc()
        .arg("run")
        .arg("--gpu-from")
        .arg(super::fixture(fixture))
        .arg("--out")
        .arg(directory)
        .args([
            "--",
            "sh",
            "-c",
            "echo 'Starting to load model m...'; sleep 0.1",
        ])
        .output()
        .unwrap_or_else(|e| panic!("oomdoc run: {e}"))
}

/// A recording with memory samples replays as a timeline.
#[test]
fn replayed_recording_gives_a_memory_timeline() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("replay");
    let output = run_replayed("gpus/synthetic-2xh200.json", &directory);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let record = record(&directory);
    let memory = &record["memory"];
    assert_eq!(memory["available"], true, "{memory}");
    let inventory = &record["preflight"]["inventory"];
    let devices = memory["devices"].as_array().unwrap();
    assert!(!devices.is_empty());
    let device = &devices[0];
    assert!(device["uuid"].as_str().unwrap().starts_with("GPU-"));
    assert!(inventory["devices"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["uuid"] == device["uuid"]));
    assert!(device["sample_count"].as_u64().unwrap() >= 1);
    assert!(memory["sampler"]["rounds"].as_u64().unwrap() >= 1);
    assert!(stderr(&output).contains("free before start"));
}

/// A static `nvidia-smi -q -x` file is one moment: the inventory is kept, but no timeline, no
/// peak and no reading count are presented as a measurement (issue 16).
#[test]
fn static_replay_gives_no_memory_timeline() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("static");
    let output = run_replayed("h200-torch2.11/nvidia-smi-q.xml", &directory);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let record = record(&directory);
    let memory = &record["memory"];
    assert_eq!(memory["available"], false);
    assert!(memory["reason"].as_str().unwrap().contains("static replay"));
    assert!(memory["devices"].as_array().is_none_or(|d| d.is_empty()));
    assert!(record["preflight"]["inventory"]["devices"][0]["uuid"]
        .as_str()
        .unwrap()
        .starts_with("GPU-"));
    let err = stderr(&output);
    assert!(err.contains("static replay"), "{err}");
    assert!(!err.contains("peak used"), "{err}");
    assert!(!err.contains("readings)"), "{err}");
    // The first line quotes the command as given; every line oomdoc words itself fits.
    assert!(
        err.lines().skip(1).all(|line| line.chars().count() <= 100),
        "{err}"
    );
}

/// `oomdoc run --context-lines N` on a child that prints `lines` lines, then a PyTorch OOM,
/// and exits 1.
fn run_lines_then_oom(directory: &Path, context_lines: &str, lines: u32) -> std::process::Output {
    let script = format!(
        "i=1; while [ $i -le {lines} ]; do echo line $i; i=$((i+1)); done; echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 1.00 GiB is free.'; exit 1"
    );
    oomdoc()
        .arg("run")
        .args(["--context-lines", context_lines])
        .arg("--out")
        .arg(directory)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap_or_else(|e| panic!("oomdoc run: {e}"))
}

#[test]
fn context_lines_reads_the_log_back() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("context");
    let output = run_lines_then_oom(&directory, "3", 6);
    assert_eq!(output.status.code(), Some(1));
    let record = record(&directory);
    let block = &record["explain"]["context"][0];
    assert_eq!(block["failure_line"], 7);
    let lines: Vec<u64> = block["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines[..3], [4, 5, 6]);
    assert_eq!(block["lines"][0]["text"], "line 4");
    assert!(lines[3..].iter().all(|line| *line >= 7));
}

/// `--context-lines u64::MAX` once wrapped `line + before` (debug: a panic; release: a window
/// that held no line): every line before the failure is kept.
#[test]
fn context_lines_at_the_largest_value_keeps_every_line() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("context-max");
    let output = run_lines_then_oom(&directory, "18446744073709551615", 3);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let record = record(&directory);
    let block = &record["explain"]["context"][0];
    assert_eq!(block["failure_line"], 4);
    assert_eq!(block["lines"][0]["text"], "line 1");
}

#[test]
fn third_interrupt_kills_a_child_that_ignores_them() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("stubborn");
    let mut child = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args(["--", "sh", "-c", "trap '' TERM; echo ready; exec sleep 60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready");
    for sent in 1..=3u64 {
        let killed = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        // Each signal rewrites the record: wait for it before sending the next one, so the
        // kernel cannot merge two pending SIGTERMs into one.
        if sent < 3 {
            loop {
                let received = std::fs::read_to_string(directory.join("run.json"))
                    .ok()
                    .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                    .and_then(|record| record["signals_received"].as_array().map(Vec::len))
                    .unwrap_or(0);
                if received as u64 >= sent {
                    break;
                }
                std::thread::yield_now();
            }
        }
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(137));
    let record = record(&directory);
    assert_eq!(record["status"], "interrupted");
    assert_eq!(record["signal"], 9);
    assert_eq!(record["signals_received"].as_array().unwrap().len(), 3);
}

#[test]
fn nvml_source_samples_every_device() {
    // The fake `libnvidia-ml.so.1` of the `gpus` tests: two H200s, GPU 0 with 2 GiB used and
    // oomdoc itself listed (1 GiB), GPU 1 with nothing used and its process list refused.
    let library = tempfile::tempdir().unwrap();
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(library.path().join("libnvidia-ml.so.1"))
        .arg(super::fixture("gpus/fake_nvml.c"))
        .status()
        .unwrap();
    assert!(built.success());
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("nvml");
    let output = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .env("LD_LIBRARY_PATH", library.path())
        .env("CUDA_VISIBLE_DEVICES", "1")
        .args([
            "--",
            "sh",
            "-c",
            "echo 'Starting to load model m...'; sleep 0.2",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let record = record(&directory);
    let memory = &record["memory"];
    assert_eq!(memory["available"], true);
    assert_eq!(memory["source"], "nvml");
    assert_eq!(
        record["preflight"]["environment"]["CUDA_VISIBLE_DEVICES"],
        "1"
    );
    // Only the device the child can see (CUDA_VISIBLE_DEVICES=1) is sampled, by UUID.
    let devices = memory["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 1);
    let device = &devices[0];
    assert_eq!(device["uuid"], "GPU-fa4e1111-1111-4111-8111-111111111111");
    assert_eq!(device["index"], 1);
    assert_eq!(device["cuda_ordinal"], 0);
    assert_eq!(device["baseline_used_bytes"], 0);
    assert_eq!(
        device["baseline_free_bytes"],
        150_754_820_096u64 - 644_939_776
    );
    assert_eq!(device["peak_used_bytes"], 0);
    assert_eq!(
        device["samples"],
        serde_json::json!([[device["peak_t_ms"], 0]])
    );
    assert!(device["sample_count"].as_u64().unwrap() >= 1);
    // Flat memory: the peak is the first reading, taken before or just after the first phase
    // line arrived; the level carried into `weights_load` counts for it either way.
    assert!(
        device["peak_phase"].is_null() || device["peak_phase"] == "weights_load",
        "{}",
        device["peak_phase"]
    );
    assert_eq!(
        device["peaks_by_phase"],
        serde_json::json!({"weights_load": 0})
    );
    assert_eq!(record["phases"][0]["phase"], "weights_load");
    let limitations = record["limitations"].to_string();
    assert!(limitations.contains("no permission"), "{limitations}");
    assert!(memory["sampler"]["cpu_ms"].is_number());
}

#[test]
fn default_directory_is_named_after_the_utc_start() {
    let temp = tempfile::tempdir().unwrap();
    let output = oomdoc()
        .current_dir(temp.path())
        .args(["run", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let names: Vec<String> = std::fs::read_dir(temp.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let name = &names[0];
    // oomdoc-run-YYYYMMDDTHHMMSSZ
    assert_eq!(name.len(), "oomdoc-run-20261129T170000Z".len(), "{name}");
    assert!(
        name.starts_with("oomdoc-run-2") && name.ends_with('Z'),
        "{name}"
    );
    let record = record(&temp.path().join(name));
    assert_eq!(record["status"], "exited");
    assert!(stderr(&output).contains(&format!("record: {name}/run.json")));
}

#[test]
fn two_runs_in_the_same_second_get_two_default_directories() {
    let temp = tempfile::tempdir().unwrap();
    // Earlier runs hold the default names of this second and the next few.
    let now = chrono::Utc::now();
    let taken: Vec<String> = (0..6)
        .map(|ahead| {
            let at = now + chrono::Duration::seconds(ahead);
            format!("oomdoc-run-{}", at.format("%Y%m%dT%H%M%SZ"))
        })
        .collect();
    for name in &taken {
        let directory = temp.path().join(name);
        std::fs::create_dir_all(&directory).unwrap();
        std::fs::write(directory.join("run.json"), "{}").unwrap();
    }
    let output = oomdoc()
        .current_dir(temp.path())
        .args(["run", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let new: Vec<String> = std::fs::read_dir(temp.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| !taken.contains(name))
        .collect();
    assert_eq!(new.len(), 1, "{new:?}");
    assert!(new[0].ends_with("Z-2"), "{new:?}");
    for name in &taken {
        let earlier = std::fs::read_to_string(temp.path().join(name).join("run.json")).unwrap();
        assert_eq!(earlier, "{}");
    }
}

/// Runs oomdoc in a pseudo-terminal (Python's `pty`) and types Ctrl-C once `ready` shows.
const CTRL_C_IN_A_TERMINAL: &str = r#"
import os, pty, sys
binary, out = sys.argv[1], sys.argv[2]
script = ("n=0; trap 'n=$((n+1)); echo got INT $n' INT; echo ready; "
          "while [ $n -lt 1 ]; do sleep 0.05; done; sleep 0.3; echo count $n; exit 7")
pid, fd = pty.fork()
if pid == 0:
    os.environ["NO_COLOR"] = "1"
    os.execv(binary, ["oomdoc", "run", "--out", out, "--", "sh", "-c", script])
seen = b""
while b"ready" not in seen:
    seen += os.read(fd, 1024)
os.write(fd, b"\x03")
try:
    while os.read(fd, 4096):
        pass
except OSError:
    pass
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"#;

#[test]
fn ctrl_c_at_the_terminal_reaches_the_child_once() {
    if Command::new("python3").arg("--version").output().is_err() {
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("tty");
    let output = Command::new("python3")
        .args(["-c", CTRL_C_IN_A_TERMINAL, env!("CARGO_BIN_EXE_oomdoc")])
        .arg(&directory)
        .output()
        .unwrap();
    assert_eq!(stdout(&output).trim(), "7", "{}", stderr(&output));
    let log = std::fs::read_to_string(directory.join("log.txt")).unwrap();
    // The child got SIGINT from the terminal once: oomdoc did not send it a second time.
    assert!(
        log.contains("got INT 1\n") && log.contains("count 1\n"),
        "{log}"
    );
    let record = record(&directory);
    assert_eq!(record["status"], "interrupted");
    assert_eq!(record["exit_code"], 7);
    let signal = &record["signals_received"][0];
    assert_eq!(signal["signal"], 2);
    assert_eq!(signal["origin"], "terminal");
    assert_eq!(signal["forwarded"], false);
}

#[test]
fn a_descendant_holding_the_output_open_does_not_hold_oomdoc() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("orphan");
    // The shell exits at once; its background `sleep` keeps stdout open for 30 s.
    let mut child = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args(["--", "sh", "-c", "sleep 30 & echo started; exit 5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "started");
    // oomdoc exits after its grace period (2 s) while the `sleep` still holds the pipe.
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(5));
    let record = record(&directory);
    assert_eq!(record["exit_code"], 5);
    assert!(record["limitations"]
        .to_string()
        .contains("kept its output open"));
    // The duration is the shell's, not the shell's plus the 2 s spent waiting on the pipe.
    let duration = record["duration_ms"].as_u64().unwrap();
    assert!(duration < 2000, "duration_ms {duration}");
}

#[test]
fn sample_rate_outside_the_stated_range_is_refused_before_the_start() {
    let temp = tempfile::tempdir().unwrap();
    for rate in ["0", "0.0001", "NaN", "100001"] {
        let directory = temp.path().join(format!("rate-{rate}"));
        let output = oomdoc()
            .arg("run")
            .arg(format!("--sample-rate={rate}"))
            .arg("--out")
            .arg(&directory)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{rate}");
        assert!(output.stdout.is_empty());
        let err = stderr(&output);
        assert!(
            err.contains("is out of range") && err.contains("between 0.001 and 100000"),
            "{err}"
        );
        assert!(!directory.exists(), "{rate}");
    }
}

#[cfg(unix)]
#[test]
fn the_record_follows_the_umask_like_the_log() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    for (umask, expected) in [("077", 0o600), ("022", 0o644)] {
        let directory = temp.path().join(format!("umask-{umask}"));
        let output = Command::new("sh")
            .env_remove("OOMDOC_GPU_FROM")
            .arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_oomdoc"))
            .arg("run")
            .arg("--out")
            .arg(&directory)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(mode(&directory.join("run.json")), expected, "umask {umask}");
        assert_eq!(mode(&directory.join("log.txt")), expected, "umask {umask}");
    }
}

#[test]
fn a_reader_that_goes_away_closes_the_childs_output_as_in_a_pipeline() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("head");
    // `oomdoc run -- … | head -1`: the shell would stop at the first write after `head` exits.
    let mut child = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args([
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 200000 ]; do echo line $i; i=$((i+1)); done; exit 3",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "line 0");
    drop(lines);
    let status = child.wait().unwrap();
    // Killed by SIGPIPE (13) like in a shell pipeline, not run to its end (exit 3).
    assert_eq!(status.code(), Some(128 + 13));
    let record = record(&directory);
    assert_eq!(record["signal"], 13);
    assert!(record["log"]["lines"].as_u64().unwrap() < 200_000);
}

#[test]
fn a_broken_stderr_does_not_panic_or_change_the_exit_code() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("stderr");
    let mut child = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args(["--", "sh", "-c", "sleep 0.3; exit 4"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader of stderr goes away before oomdoc writes its closing summary there.
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(4), "a panic exits 101");
    assert_eq!(record(&directory)["exit_code"], 4);
}
