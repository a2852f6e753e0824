//! CLI tests of `oomdoc exporter`: the real binary on port 0, GPUs from a replay file, a pod
//! log followed in a temporary `/var/log/pods`-shaped tree.

#![expect(clippy::unwrap_used, reason = "test setup panics on failure")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::{fixture, oomdoc};

/// Kills the exporter when the test ends, passed or not.
struct Exporter {
    child: Child,
    address: String,
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Exporter {
    let mut child = oomdoc()
        .arg("exporter")
        .args(["--listen", "127.0.0.1:0", "--poll-ms", "50"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let first = lines.next().unwrap().unwrap();
    // Keep draining stderr so the exporter never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    let address = first
        .strip_prefix("oomdoc exporter listening on http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected first line: {first}"))
        .to_string();
    Exporter { child, address }
}

fn get(exporter: &Exporter, path: &str) -> (String, String) {
    let response = ureq::get(&format!("http://{}{path}", exporter.address))
        .timeout(Duration::from_secs(5))
        .call()
        .unwrap();
    let content_type = response
        .header("Content-Type")
        .unwrap_or_default()
        .to_string();
    (content_type, response.into_string().unwrap())
}

fn oom_count(metrics: &str) -> u64 {
    metrics
        .lines()
        .filter(|line| line.starts_with("oomdoc_oom_events_total{"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

const STARTUP: &str = "INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\n\
INFO 04-02 21:42:59 model_runner.py:1] Starting to load model meta-llama/Llama-2-7b...\n\
INFO 04-02 21:43:10 model_runner.py:2] Loading model weights took 12.5523 GB\n";

const FAILURE: &str = "Traceback (most recent call last):\n\
  File \"/x/vllm/worker/worker.py\", line 10, in determine_num_available_blocks\n\
  File \"/x/vllm/worker/model_runner.py\", line 20, in profile_run\n\
  File \"/x/model.py\", line 30, in forward\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free. HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345\n";

/// Wraps each line as containerd writes it (CRI format), the last one split in two records.
fn cri(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let (first, rest) = line.split_at(line.len() / 2);
        out.push_str(&format!(
            "2026-11-29T12:00:00.123456789Z stderr P {first}\n"
        ));
        out.push_str(&format!("2026-11-29T12:00:00.123456790Z stderr F {rest}\n"));
    }
    out
}

fn wait_for(exporter: &Exporter, what: &str, test: impl Fn(&str) -> bool) -> String {
    let started = Instant::now();
    loop {
        let (_, metrics) = get(exporter, "/metrics");
        if test(&metrics) {
            return metrics;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}:\n{metrics}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_oom_appended_to_a_followed_pod_log_counts_once() {
    let directory = tempfile::tempdir().unwrap();
    let container = directory
        .path()
        .join("pods/inference_vllm-0_0c8f1e2a-1b2c-4d5e-8f90-123456789abc/vllm");
    std::fs::create_dir_all(&container).unwrap();
    let log = container.join("0.log");
    std::fs::write(&log, cri("INFO history before the exporter started\n")).unwrap();
    let pattern = format!("{}/pods/*/*/*.log", directory.path().display());
    let gpus = fixture("gpus/synthetic-2xh200.json");
    let exporter = start(&["--follow", &pattern, "--gpu-from", gpus.to_str().unwrap()]);

    let before = wait_for(&exporter, "the followed file", |metrics| {
        metrics.contains("oomdoc_followed_files 1\n")
    });
    assert_eq!(oom_count(&before), 0);
    let (content_type, _) = get(&exporter, "/metrics");
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    assert!(before.contains("# TYPE oomdoc_gpu_memory_total_bytes gauge\n"));
    assert!(before.contains("oomdoc_gpu_source_up 1\n"));

    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(cri(STARTUP).as_bytes()).unwrap();
    file.write_all(cri(FAILURE).as_bytes()).unwrap();
    file.flush().unwrap();

    let after = wait_for(&exporter, "the OOM counter", |metrics| {
        oom_count(metrics) == 1
    });
    let counter = after
        .lines()
        .find(|line| line.starts_with("oomdoc_oom_events_total{"))
        .unwrap();
    assert!(
        counter.starts_with(
            "oomdoc_oom_events_total{cause=\"warmup_peak\",phase=\"profiling\",engine=\"vllm\",UUID=\"\",namespace=\"inference\",pod=\"vllm-0\",container=\"vllm\","
        ),
        "{counter}"
    );
    assert!(after.contains("oomdoc_last_oom_timestamp_seconds{"));
    assert!(after.contains("oomdoc_engine_weights_bytes{engine=\"vllm\",namespace=\"inference\""));

    // The same failure does not count twice as more lines arrive.
    file.write_all(cri("INFO 04-02 21:44:00 launcher.py:1] Shutting down\n").as_bytes())
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let (_, later) = get(&exporter, "/metrics");
    assert_eq!(oom_count(&later), 1);

    // /events: the explain document, redacted.
    let (content_type, events) = get(&exporter, "/events");
    assert_eq!(content_type, "application/json");
    let events: serde_json::Value = serde_json::from_str(&events).unwrap();
    let list = events["events"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["labels"]["pod"], "vllm-0");
    assert_eq!(list[0]["report"]["phase"]["failed_in"], "profiling");
    assert!(!events.to_string().contains("hf_abcdefghijklmnop"));

    check_with_promtool(&later);
}

/// Runs the real `promtool check metrics` (Debian package `prometheus`) when installed.
/// Lint findings other than the camelCase label names dcgm-exporter itself uses fail.
#[expect(
    clippy::print_stderr,
    reason = "says that promtool was absent, so the check was skipped"
)]
fn check_with_promtool(metrics: &str) {
    let Ok(mut child) = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        // CI has no promtool; `.ci/run` says how to get it (`apt-get install prometheus`).
        eprintln!("promtool not found: the exposition was not checked with promtool");
        return;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(metrics.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let problems: Vec<&str> = text
        .lines()
        .filter(|line| {
            !line.ends_with("label names should be written in 'snake_case' not 'camelCase'")
        })
        .collect();
    assert!(
        problems.is_empty() && matches!(output.status.code(), Some(0 | 3)),
        "promtool: {text}\n{metrics}"
    );
}

#[test]
fn an_unreadable_replay_file_is_an_error() {
    let output = oomdoc()
        .args([
            "exporter",
            "--listen",
            "127.0.0.1:0",
            "--gpu-from",
            "/nonexistent.json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(super::stderr(&output).contains("cannot read the GPU replay file"));
}

#[test]
fn from_start_reads_a_docker_json_log_history() {
    let directory = tempfile::tempdir().unwrap();
    let id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    let container = directory.path().join("containers").join(id);
    std::fs::create_dir_all(&container).unwrap();
    let mut records = String::new();
    for line in format!("{STARTUP}{FAILURE}INFO 04-02 21:44:00 launcher.py:1] Shutting down\n")
        .split_inclusive('\n')
    {
        records.push_str(
            &serde_json::json!({"log": line, "stream": "stderr", "time": "2026-11-29T12:00:00.1Z"})
                .to_string(),
        );
        records.push('\n');
    }
    std::fs::write(container.join(format!("{id}-json.log")), records).unwrap();
    let pattern = format!("{}/containers/*/*-json.log", directory.path().display());
    let gpus = fixture("gpus/synthetic-2xh200.json");
    let exporter = start(&[
        "--follow",
        &pattern,
        "--from-start",
        "--gpu-from",
        gpus.to_str().unwrap(),
    ]);
    let metrics = wait_for(&exporter, "the OOM counter", |metrics| {
        oom_count(metrics) == 1
    });
    assert!(
        metrics.contains(
            "engine=\"vllm\",UUID=\"\",namespace=\"\",pod=\"\",container=\"0123456789ab\""
        ),
        "{metrics}"
    );
    check_with_promtool(&metrics);
}
