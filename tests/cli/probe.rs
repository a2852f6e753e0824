//! CLI tests of `oomdoc probe` against a real HTTP server in the test process, whose memory
//! follows scripted stories (see `probe_server.rs`). Loopback only.

#![expect(clippy::unwrap_used, reason = "test setup panics on failure")]

#[path = "probe_server.rs"]
pub(super) mod probe_server;

use std::process::Output;

use probe_server::{Story, TestServer};
use serde_json::Value;

use super::{oomdoc, stderr, stdout};

/// `oomdoc probe URL --memory-from prometheus:URL/metrics` plus `extra`, without API-key variables.
fn probe(server: &TestServer, extra: &[&str]) -> Output {
    let memory = format!("prometheus:{}", server.metrics_url());
    oomdoc()
        .env_remove("OOMDOC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .args([
            "probe",
            &server.url,
            "--memory-from",
            &memory,
            "--request-timeout",
            "20",
        ])
        .args(extra)
        .output()
        .unwrap()
}

fn json(output: &Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|error| {
        panic!(
            "not JSON ({error}): {}\nstderr: {}",
            stdout(output),
            stderr(output)
        )
    })
}

fn verdict(server: &TestServer, extra: &[&str]) -> (Value, Output) {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let output = probe(server, &args);
    (json(&output), output)
}

/// Filters what changes between runs: port, latencies, elapsed time.
fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]");
    settings.add_filter(r#""(latency_ms|elapsed_ms)": \d+"#, r#""$1": "[ms]""#);
    // Latencies are right-aligned: their padding changes with their digits, so it goes too.
    settings.add_filter(r" *\b\d+ ms\b", " [ms]");
    settings.add_filter(r"in \d+\.\d s", "in [s]");
    settings
}

#[test]
fn plateau_after_warmup_is_not_a_leak() {
    let server = TestServer::start(Story::Plateau, None);
    let (report, output) = verdict(&server, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        report["verdict"], "plateau",
        "{}",
        report["trend"]["reason"]
    );
    assert_eq!(report["plateau_bytes"], 1400u64 << 20);
    assert_eq!(report["warmup"]["warmup_growth_bytes"], 300i64 << 20);
    settings().bind(|| insta::assert_json_snapshot!("probe_plateau_json", report));
}

#[test]
fn one_step_at_the_first_long_input_is_a_plateau() {
    let server = TestServer::start(Story::Step, None);
    let output = probe(&server, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    settings().bind(|| insta::assert_snapshot!("probe_step_text", stdout(&output)));
    let (report, _) = verdict(&TestServer::start(Story::Step, None), &[]);
    assert_eq!(
        report["verdict"], "plateau",
        "{}",
        report["trend"]["reason"]
    );
    // The naive test over every reading is fooled by the step; the blocked test is not.
    assert!(report["trend"]["naive"]["p_value"].as_f64().unwrap() < 0.01);
    assert!(
        report["trend"]["naive"]["slope_bytes_per_request"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(
        report["steps"][0]["after_bytes"].as_u64().unwrap()
            - report["steps"][0]["before_bytes"].as_u64().unwrap(),
        512 << 20
    );
}

#[test]
fn growth_that_stops_in_the_identical_phase_is_a_plateau() {
    let server = TestServer::start(Story::SlowWarmup, None);
    let (report, output) = verdict(&server, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // Significant with a positive slope over the whole window, flat in its later half.
    let window = &report["trend"]["window"];
    assert!(window["p_value"].as_f64().unwrap() < 0.01);
    assert!(window["slope_bytes_per_request"].as_f64().unwrap() > 0.0);
    assert_eq!(report["trend"]["late"]["slope_bytes_per_request"], 0.0);
    assert_eq!(
        report["verdict"], "plateau",
        "{}",
        report["trend"]["reason"]
    );
    assert_eq!(report["plateau_bytes"], 1800u64 << 20);
}

#[test]
fn slow_leak_is_growth() {
    let server = TestServer::start(Story::Leak, None);
    let (report, output) = verdict(&server, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(report["verdict"], "growth", "{}", report["trend"]["reason"]);
    let slope = report["trend"]["window"]["slope_bytes_per_request"]
        .as_f64()
        .unwrap();
    assert_eq!(slope, (8u64 << 20) as f64);
    assert_eq!(report["plateau_bytes"], Value::Null);
}

#[test]
fn a_leak_that_starts_with_the_alternating_phase_is_growth() {
    // The identical phase is flat, so most within-block slopes are 0 and the pooled slope is
    // 0; the alternating phase alone must still be called growth. The metrics also carry a
    // Prometheus 3 quoted-name line the parser skips.
    let server = TestServer::start(Story::LeakAfterLong, None);
    let (report, output) = verdict(&server, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(report["verdict"], "growth", "{}", report["trend"]["reason"]);
    assert_eq!(report["trend"]["window"]["slope_bytes_per_request"], 0.0);
    let phases = report["trend"]["phases"].as_array().unwrap();
    assert_eq!(phases[1]["phase"], "alternating");
    assert_eq!(
        phases[1]["test"]["slope_bytes_per_request"],
        (8u64 << 20) as f64
    );
    // The default selector matches both GPUs' series: the sum is read, and said so.
    let limitations = report["limitations"].to_string();
    assert!(limitations.contains("matched 2 series"), "{limitations}");
}

#[test]
fn control_characters_from_outside_never_reach_the_terminal() {
    // A model name (from `--model` here; from `/v1/models` or an error body in the wild) with
    // a newline and terminal escapes.
    let server = TestServer::start(Story::Plateau, None);
    let model = "tiny\x1b[2J\nsecond line";
    for format in ["text", "markdown"] {
        let output = probe(
            &server,
            &["--model", model, "--format", format, "--color", "never"],
        );
        // The test server knows no such model: the 404s stop the protocol (exit 2), and the
        // partial report still names the model.
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let text = stdout(&output);
        assert!(!text.contains('\x1b'), "{text:?}");
        assert!(text.contains("tiny\u{fffd}[2J second line"), "{text}");
    }
}

#[test]
fn unreadable_memory_is_exit_2_before_the_protocol() {
    let server = TestServer::start(Story::Plateau, None);
    let memory = format!("prometheus:{}#NO_SUCH_METRIC", server.metrics_url());
    let output = oomdoc()
        .args(["probe", &server.url, "--memory-from", &memory, "--json"])
        .env_remove("OOMDOC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(output.stdout.is_empty());
    let message = stderr(&output);
    assert!(
        message.contains("cannot read memory before the first request")
            && message.contains("no `NO_SUCH_METRIC` in the metrics")
            && !message.contains("memory could not be read"),
        "{message}"
    );
}

#[test]
fn large_jitter_is_inconclusive() {
    let server = TestServer::start(Story::Noise, None);
    let (report, output) = verdict(&server, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        report["verdict"], "inconclusive",
        "{}",
        report["trend"]["reason"]
    );
    assert!(report["trend"]["reason"]
        .as_str()
        .unwrap()
        .contains("noisy"));
}

#[test]
fn server_dying_mid_protocol_is_exit_2_with_the_partial_report() {
    let server = TestServer::start(Story::Crash(8), None);
    let (report, output) = verdict(&server, &[]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(report["verdict"], "inconclusive");
    let requests = report["requests"].as_array().unwrap();
    // 8 answered, then 3 refused in a row.
    assert_eq!(requests.len(), 11);
    assert_eq!(requests[7]["status"], 200);
    assert_eq!(requests[8]["status"], Value::Null);
    let limitations = report["limitations"].to_string();
    assert!(
        limitations.contains("protocol stopped early: cannot reach"),
        "{limitations}"
    );
    let error = stderr(&output);
    assert!(
        error.starts_with("error: the server failed during the protocol"),
        "{error}"
    );
    assert!(
        error.contains("Caused by: cannot reach `http://127.0.0.1:"),
        "{error}"
    );
}

#[test]
fn repeated_server_errors_stop_the_protocol() {
    let server = TestServer::start(Story::Errors(5), None);
    let (report, output) = verdict(&server, &[]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(report["verdict"], "inconclusive");
    assert_eq!(report["failed_requests"], 3);
    let requests = report["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 8);
    assert_eq!(requests[7]["status"], 500);
    assert!(requests[7]["error"]
        .as_str()
        .unwrap()
        .contains("CUDA out of memory"));
    let error = stderr(&output);
    assert!(
        error.contains("answered HTTP 500: {\"error\":{  \"message\":\"CUDA out of memory\""),
        "{error}"
    );
}

#[test]
fn unreachable_server_is_exit_2_and_empty_stdout() {
    // Bind then drop: a loopback port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let output = oomdoc()
        .args([
            "probe",
            &url,
            "--memory-from",
            &format!("prometheus:{url}/metrics"),
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let error = stderr(&output);
    assert!(
        error.starts_with(&format!("error: cannot use the server at `{url}`")),
        "{error}"
    );
    assert!(error.contains("hint: is the server running"), "{error}");
}

#[test]
fn api_key_required() {
    let server = TestServer::start(Story::Plateau, Some("sk-test-secret"));
    let output = probe(&server, &["--json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    settings().bind(|| insta::assert_snapshot!("probe_api_key_missing", stderr(&output)));

    // From the option: accepted, and printed nowhere.
    let output = probe(&server, &["--json", "--api-key", "sk-test-secret"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json(&output)["verdict"], "plateau");
    assert!(!stdout(&output).contains("sk-test-secret"));
    assert!(!stderr(&output).contains("sk-test-secret"));

    // From the environment, through the chat endpoint.
    let memory = format!("prometheus:{}", server.metrics_url());
    let output = oomdoc()
        .env_remove("OPENAI_API_KEY")
        .env("OOMDOC_API_KEY", "sk-test-secret")
        .args([
            "probe",
            &server.url,
            "--memory-from",
            &memory,
            "--endpoint",
            "chat",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json(&output)["settings"]["endpoint"], "chat");
}

#[test]
fn concurrent_phase_and_repeats() {
    let server = TestServer::start(Story::Plateau, None);
    let (report, output) = verdict(&server, &["--concurrency", "3", "--repeat", "2"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        report["verdict"], "plateau",
        "{}",
        report["trend"]["reason"]
    );
    let requests = report["requests"].as_array().unwrap();
    // Per repeat: 3 warm-up + 10 + 10 + 6 rounds × 3.
    assert_eq!(requests.len(), 2 * (3 + 10 + 10 + 6 * 3));
    let concurrent = requests
        .iter()
        .filter(|r| r["phase"] == "concurrent")
        .count();
    assert_eq!(concurrent, 2 * 18);
    assert_eq!(report["requests"][40]["repeat"], 0);
    assert_eq!(report["requests"][41]["repeat"], 1);
}

#[test]
fn replay_source_and_model_option() {
    let server = TestServer::start(Story::Plateau, None);
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("leak.json");
    // Baseline, then one reading per request: +4 MiB each time.
    let values: Vec<u64> = (0..24u64).map(|n| (1000 + 4 * n) << 20).collect();
    std::fs::write(&path, serde_json::to_string(&values).unwrap()).unwrap();
    let output = oomdoc()
        .env_remove("OOMDOC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .args([
            "probe",
            &server.url,
            "--model",
            "tiny",
            "--json",
            "--memory-from",
        ])
        .arg(format!("replay:{}", path.display()))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["verdict"], "growth", "{}", report["trend"]["reason"]);
    assert_eq!(report["memory_source"]["kind"], "replay");
    assert_eq!(report["settings"]["model_from"], "command line");
    assert_eq!(
        report["metrics_seen"],
        serde_json::json!(["vllm:kv_cache_usage_perc", "vllm:num_preemptions_total"])
    );
}

#[test]
fn bad_memory_source_is_a_usage_error() {
    let output = oomdoc()
        .args([
            "probe",
            "http://127.0.0.1:1",
            "--memory-from",
            "carrier-pigeon",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("unknown memory source `carrier-pigeon`: use `nvml`"),
        "{message}"
    );
}

#[test]
fn markdown_and_html_reports() {
    let server = TestServer::start(Story::Leak, None);
    let output = probe(&server, &["--format", "markdown"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let markdown = stdout(&output);
    assert!(
        markdown.starts_with("# oomdoc probe: growth — memory keeps growing"),
        "{markdown}"
    );
    assert!(markdown
        .contains("| repeat | phase | # | chars | status | latency | memory | change | note |"));

    // Text from outside (here the model name) never becomes raw HTML in Markdown. The test
    // server knows no such model: the partial report is still written, with exit 2.
    let output = probe(
        &server,
        &["--format", "markdown", "--model", "m<script>x|y"],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let markdown = stdout(&output);
    assert!(markdown.contains("m&lt;script&gt;x\\|y"), "{markdown}");
    assert!(!markdown.contains("<script"), "{markdown}");

    let output = probe(&server, &["--format", "html"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let html = stdout(&output);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<span class=\"bad\">growth"));
    assert!(!html.contains("<script") && !html.contains("src="));
    assert!(html.contains("`DCGM_FI_DEV_FB_USED` at http://127.0.0.1:"));
}

#[test]
fn nvml_source_through_a_replayed_gpu() {
    let server = TestServer::start(Story::Plateau, None);
    let recording = super::fixture("gpus/synthetic-2xh200.json");
    let run = |replay: &std::path::Path, extra: &[&str]| {
        oomdoc()
            .env_remove("OOMDOC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env("OOMDOC_GPU_FROM", replay)
            .args(["probe", &server.url, "--json"])
            .args(extra)
            .output()
            .unwrap()
    };
    // A recording with memory samples is a series of readings.
    let output = run(&recording, &["--gpu", "0"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["memory_source"]["kind"], "nvml");
    assert!(report["memory_source"]["description"]
        .as_str()
        .unwrap()
        .starts_with("used memory of GPU-"));

    let output = run(&recording, &["--gpu", "GPU-nonexistent"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).starts_with("error: no GPU `GPU-nonexistent`"));
}

// See: #16
#[test]
fn issue_16_a_static_nvidia_smi_file_gives_no_plateau() {
    let server = TestServer::start(Story::Plateau, None);
    let xml = super::fixture("h200-torch2.11/nvidia-smi-q.xml");
    for extra in [&["--gpu", "0"][..], &["--pid", "1"][..], &[][..]] {
        let output = oomdoc()
            .env_remove("OOMDOC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env("OOMDOC_GPU_FROM", &xml)
            .args(["probe", &server.url, "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{extra:?}");
        assert!(output.stdout.is_empty());
        let error = stderr(&output);
        assert!(
            error.contains("is a static source: one moment of GPU memory"),
            "{error}"
        );
        assert!(!error.contains("plateau"), "{error}");
        assert!(!error.contains("--gpu-from"), "{error}");
    }
}

// See: #16
#[test]
fn issue_16_probe_hints_name_only_flags_probe_takes() {
    let server = TestServer::start(Story::Plateau, None);
    let output = oomdoc()
        .env_remove("OOMDOC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env(
            "OOMDOC_GPU_FROM",
            super::fixture("gpus/does-not-exist.json"),
        )
        .args(["probe", &server.url])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let error = stderr(&output);
    assert!(error.contains("hint: "), "{error}");
    assert!(!error.contains("--gpu-from"), "{error}");
    assert!(error.contains("--memory-from prometheus:URL"), "{error}");
}
