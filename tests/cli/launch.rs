//! The launcher (`source::launch`) against the fake engines of `tests/fixtures/fake_servers/`:
//! start, ready, stop (SIGTERM, then SIGKILL of the group), early exits, host memory.

#![expect(clippy::unwrap_used, reason = "test setup panics on failure")]

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use oomdoc::model::Bytes;
use oomdoc::source::launch::{self, LaunchConfig, LaunchError, Release};
use oomdoc::source::server::{CompletionRequest, Endpoint, HttpServer, InferenceServer};

use super::{fixture, oomdoc, stdout};

/// A port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

struct Fake {
    config: LaunchConfig,
    _directory: tempfile::TempDir,
}

/// The fake engine with `variant` and extra arguments, on a free port.
fn fake(variant: &str, extra: &[&str], ready_timeout_s: u64) -> Fake {
    let directory = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut args: Vec<OsString> = vec![
        fixture("fake_servers/fake_engine.py").into(),
        "--port".into(),
        port.to_string().into(),
        "--variant".into(),
        variant.into(),
    ];
    args.extend(extra.iter().map(OsString::from));
    Fake {
        config: LaunchConfig {
            program: "python3".into(),
            args,
            url: format!("http://127.0.0.1:{port}"),
            ready_timeout: Duration::from_secs(ready_timeout_s),
            poll_interval: Duration::from_millis(50),
            log_path: directory.path().join("server.log"),
        },
        _directory: directory,
    }
}

fn complete(url: &str, chars: usize) -> bool {
    let server = HttpServer::new(url, None, Duration::from_secs(10));
    let request = CompletionRequest {
        endpoint: Endpoint::Completions,
        model: "fake/model-7b".to_string(),
        prompt: "word ".repeat(chars / 5),
        max_tokens: 4,
    };
    server.complete(&request).result.is_ok()
}

fn alive(pid: u32) -> bool {
    PathBuf::from(format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

#[test]
fn a_plateau_server_starts_answers_and_stops_on_sigterm() {
    let fake = fake("plateau", &["--ready-after", "0.4"], 30);
    let server = launch::launch(&fake.config).unwrap();
    assert!(
        server.time_to_ready_ms >= 400,
        "{}",
        server.time_to_ready_ms
    );
    assert!(["/health", "/v1/models"].contains(&server.ready_path));
    assert!(complete(&fake.config.url, 64));
    let pid = server.pid();
    let stopped = server.stop(Duration::from_secs(10));
    assert_eq!(stopped.how, "SIGTERM");
    assert_eq!(stopped.exit, "exit code 0");
    assert!(!stopped.exited_on_its_own);
    assert!(!alive(pid));
    let log = std::fs::read_to_string(&fake.config.log_path).unwrap();
    assert!(log.contains("Application startup complete."), "{log}");
    assert!(log.contains("Shutting down"), "{log}");
}

#[test]
fn a_server_that_ignores_sigterm_is_killed_with_its_group() {
    let fake = fake("plateau", &["--ignore-sigterm"], 30);
    let server = launch::launch(&fake.config).unwrap();
    let pid = server.pid();
    let stopped = server.stop(Duration::from_millis(500));
    assert_eq!(stopped.how, "SIGKILL after 500 ms of SIGTERM");
    assert_eq!(stopped.exit, "signal 9 (SIGKILL)");
    assert!(stopped.stop_ms >= 500);
    assert!(!alive(pid));
    let log = std::fs::read_to_string(&fake.config.log_path).unwrap();
    assert!(log.contains("SIGTERM ignored"), "{log}");
}

#[test]
fn a_crash_at_start_returns_the_log_for_explain() {
    let fake = fake("crash-at-start", &[], 30);
    let error = launch::launch(&fake.config).unwrap_err();
    let LaunchError::ExitedEarly {
        ref log_tail,
        ref log_path,
        status,
        ..
    } = error
    else {
        panic!("{error:?}");
    };
    assert_eq!(status.code(), Some(1));
    assert!(error
        .to_string()
        .starts_with("the server exited (exit code 1) after"));
    assert!(
        log_tail.contains("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    );
    // The log is an OOM at startup that `explain` reads.
    let output = oomdoc().arg("explain").arg(log_path).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(stdout(&output).contains("2.00 GiB"), "{}", stdout(&output));
}

#[test]
fn a_slow_start_past_the_ready_timeout_is_stopped() {
    let fake = fake("slow-start", &["--ready-after", "20"], 1);
    let error = launch::launch(&fake.config).unwrap_err();
    assert!(matches!(error, LaunchError::NotReady { .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("within 1 s (`--ready-timeout`)"), "{text}");
    // Python may still be starting when SIGTERM comes (no handler yet: signal 15).
    assert!(
        text.contains("(SIGTERM; exit code 0)") || text.contains("(SIGTERM; signal 15 (SIGTERM))"),
        "{text}"
    );
}

#[test]
fn a_slow_start_within_the_timeout_records_the_time_to_ready() {
    let fake = fake("slow-start", &["--ready-after", "1.5"], 30);
    let server = launch::launch(&fake.config).unwrap();
    assert!(
        server.time_to_ready_ms >= 1500,
        "{}",
        server.time_to_ready_ms
    );
    assert!(server
        .log_tail()
        .contains("Loading safetensors checkpoint shards: 100% Completed"));
    server.stop(Duration::from_secs(10));
}

#[test]
fn a_crash_mid_protocol_is_seen_and_stop_says_so() {
    let fake = fake("crash-mid", &["--crash-after", "2"], 30);
    let mut server = launch::launch(&fake.config).unwrap();
    assert!(complete(&fake.config.url, 64));
    assert!(complete(&fake.config.url, 64));
    assert!(!complete(&fake.config.url, 64));
    let mut exited = None;
    for _ in 0..100 {
        exited = server.exited();
        if exited.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(exited.and_then(|status| status.code()), Some(1));
    assert!(server.log_tail().contains("CUDA out of memory"));
    let stopped = server.stop(Duration::from_secs(1));
    assert!(stopped.exited_on_its_own);
    assert_eq!(stopped.how, "already exited");
}

#[test]
fn a_host_leak_grows_the_process_tree_rss() {
    let fake = fake("host-leak", &[], 30);
    let server = launch::launch(&fake.config).unwrap();
    let before = server.host_memory().unwrap();
    for _ in 0..8 {
        assert!(complete(&fake.config.url, 64));
    }
    let after = server.host_memory().unwrap();
    // 8 × 16 MiB held, touched.
    assert!(
        after.get() >= before.get() + 120 * (1 << 20),
        "{before} → {after}"
    );
    server.stop(Duration::from_secs(10));
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    let mut fake = fake("plateau", &[], 1);
    fake.config.program = "/nonexistent/engine".into();
    let error = launch::launch(&fake.config).unwrap_err();
    assert_eq!(error.to_string(), "cannot start `/nonexistent/engine`");
}

#[test]
fn a_replayed_gpu_never_waits_for_memory_and_says_why() {
    let mut gpu = oomdoc::source::gpu::open(
        Some(&fixture("h200-torch2.11/nvidia-smi-q.xml")),
        oomdoc::analyze::devices::analyze,
    )
    .unwrap();
    let before = launch::used_by_device(gpu.as_mut()).unwrap();
    assert_eq!(before, None);
    let release = launch::wait_for_release(
        gpu.as_mut(),
        before.as_ref(),
        Bytes::from_mib(64),
        Duration::from_secs(5),
        Duration::from_millis(10),
    );
    let Release::NotMeasured { reason } = release else {
        panic!("{release:?}");
    };
    assert!(reason.contains("replayed"), "{reason}");
}

#[test]
fn the_fake_engine_reports_memory_as_dcgm_exporter_does() {
    let directory = tempfile::tempdir().unwrap();
    let memory_file = directory.path().join("gpu.prom");
    let fake = fake(
        "leak",
        &["--memory-file", memory_file.to_str().unwrap()],
        30,
    );
    let server = launch::launch(&fake.config).unwrap();
    let metrics = |text: &str| -> f64 {
        let line = text
            .lines()
            .find(|line| line.starts_with("DCGM_FI_DEV_FB_USED{"))
            .unwrap();
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let first = metrics(&std::fs::read_to_string(&memory_file).unwrap());
    for _ in 0..4 {
        assert!(complete(&fake.config.url, 64));
    }
    let scraped = oomdoc::source::server::fetch_text(
        &format!("{}/metrics", fake.config.url),
        Duration::from_secs(5),
    )
    .unwrap();
    // 20480 MiB, +300 over the first two requests, +16 per request.
    assert_eq!(first, 20480.0);
    assert_eq!(metrics(&scraped), 20480.0 + 300.0 + 4.0 * 16.0);
    assert_eq!(
        metrics(&std::fs::read_to_string(&memory_file).unwrap()),
        20844.0
    );
    server.stop(Duration::from_secs(10));
}

/// `oomdoc probe` as it runs today (one running server, `--repeat 3`) against a launched fake
/// engine whose memory is read from its `/metrics` as dcgm-exporter's gauge.
fn probe_fake(variant: &str, seed: &str) -> (serde_json::Value, Option<i32>) {
    let fake = fake(variant, &["--seed", seed], 30);
    let server = launch::launch(&fake.config).unwrap();
    let memory = format!("prometheus:{}/metrics", fake.config.url);
    let output = oomdoc()
        .env_remove("OOMDOC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .args(["probe", &fake.config.url, "--json", "--repeat", "3"])
        .args(["--memory-from", &memory, "--request-timeout", "20"])
        .output()
        .unwrap();
    server.stop(Duration::from_secs(10));
    let report = serde_json::from_slice(&output.stdout).unwrap_or_default();
    (report, output.status.code())
}

#[test]
fn probe_against_noisy_fake_engines_tells_plateau_from_a_16_mib_leak() {
    // Seeds fixed: the test's false-alarm rate is about 1 % (seed 7 is one such plateau).
    let (report, code) = probe_fake("noisy-plateau", "1");
    assert_eq!(code, Some(0));
    assert_eq!(
        report["verdict"], "plateau",
        "{}",
        report["trend"]["reason"]
    );
    let (report, code) = probe_fake("noisy-leak", "7");
    assert_eq!(code, Some(0));
    assert_eq!(report["verdict"], "growth", "{}", report["trend"]["reason"]);
}

#[test]
fn probe_against_a_fake_engine_that_crashes_mid_protocol_keeps_the_partial_report() {
    let fake = fake("crash-mid", &["--crash-after", "12"], 30);
    let mut server = launch::launch(&fake.config).unwrap();
    let memory = format!("prometheus:{}/metrics", fake.config.url);
    let output = oomdoc()
        .env_remove("OOMDOC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .args(["probe", &fake.config.url, "--json"])
        .args(["--memory-from", &memory, "--request-timeout", "5"])
        .output()
        .unwrap();
    // The engine's own exit may land a moment after the probe gave up on it (a loaded machine
    // runs the two processes in either order): wait for it before stopping what is left.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while server.exited().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stopped = server.stop(Duration::from_secs(5));
    assert!(stopped.exited_on_its_own);
    assert_eq!(stopped.exit, "exit code 1");
    assert_eq!(output.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["verdict"], "inconclusive");
    let served = report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == 200)
        .count();
    assert_eq!(served, 12);
}

/// `oomdoc probe URL --launch --repeat K -- python3 fake_engine.py …` into a temporary
/// directory: (the `DIR/probe.json` document, stdout, exit code, the directory).
fn probe_launch(
    variant: &str,
    repeat: &str,
    extra_engine: &[&str],
    extra_probe: &[&str],
) -> (serde_json::Value, String, Option<i32>, tempfile::TempDir) {
    let directory = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let memory = format!("prometheus:{url}/metrics");
    let out = directory.path().join("probe");
    let output = oomdoc()
        .env_remove("OOMDOC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .args(["probe", &url, "--launch"])
        .args(if repeat.is_empty() {
            vec![]
        } else {
            vec!["--repeat", repeat]
        })
        .args(["--memory-from", &memory, "--request-timeout", "5"])
        .args(["--ready-timeout", "20", "--stop-grace", "5"])
        .arg("--out")
        .arg(&out)
        .args(extra_probe)
        .arg("--")
        .arg("python3")
        .arg(fixture("fake_servers/fake_engine.py"))
        .args(["--port", &port.to_string(), "--variant", variant])
        .args(["--ready-after", "0.2"])
        .args(extra_engine)
        .output()
        .unwrap();
    let document = std::fs::read(out.join("probe.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    let text = format!("{}\nstderr: {}", stdout(&output), super::stderr(&output));
    (document, text, output.status.code(), directory)
}

fn launches(document: &serde_json::Value) -> &Vec<serde_json::Value> {
    document["launches"].as_array().unwrap()
}

#[test]
fn launch_plateau_three_clean_starts_is_a_plateau_with_a_record_per_repeat() {
    let (document, text, code, directory) = probe_launch("plateau", "3", &[], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        document["verdict"], "plateau",
        "{}",
        document["trend"]["reason"]
    );
    assert_eq!(launches(&document).len(), 3);
    let mut pids = Vec::new();
    for (n, launch) in launches(&document).iter().enumerate() {
        assert_eq!(launch["repeat"], n);
        assert!(
            launch["time_to_ready_ms"].as_u64().unwrap() >= 200,
            "{launch}"
        );
        assert_eq!(launch["stop"], "SIGTERM", "{launch}");
        assert_eq!(launch["exit"], "exit code 0", "{launch}");
        assert_eq!(launch["exited_on_its_own"], false);
        pids.push(launch["pid"].as_u64().unwrap());
        let repeat = directory.path().join(format!("probe/repeat-{}", n + 1));
        let log = std::fs::read_to_string(repeat.join("log.txt")).unwrap();
        assert!(log.contains("Shutting down"), "{log}");
        // The recorder of `oomdoc run` kept its record of this start.
        let run: serde_json::Value =
            serde_json::from_slice(&std::fs::read(repeat.join("run.json")).unwrap()).unwrap();
        assert_eq!(run["exit_code"], 0, "{run}");
        assert_ne!(run["status"], "running", "{run}");
        assert!(run["log"]["lines"].as_u64().unwrap() > 3, "{run}");
        // Relative to DIR: no private path of this machine in the document.
        assert_eq!(
            launch["run_record"],
            format!("repeat-{}/run.json", n + 1),
            "{launch}"
        );
        assert_eq!(launch["directory"], format!("repeat-{}", n + 1), "{launch}");
        let one: serde_json::Value =
            serde_json::from_slice(&std::fs::read(repeat.join("probe.json")).unwrap()).unwrap();
        assert_eq!(one["settings"]["repeat"], 1);
        assert_eq!(one["requests"].as_array().unwrap().len(), 23);
        assert!(!alive(u32::try_from(pids[n]).unwrap()));
    }
    pids.dedup();
    assert_eq!(pids.len(), 3, "three clean starts");
    // The server's process-tree RSS is read beside GPU memory at every point.
    let requests = document["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 69);
    assert!(requests
        .iter()
        .all(|r| r["host_memory_bytes"].as_u64().unwrap() > 1 << 20));
    // The text shows the per-repeat levels and fits 100 columns.
    assert!(text.contains("Repeats"), "{text}");
    assert!(text.contains("#3 ready "), "{text}");
    for line in text.lines().filter(|line| line.starts_with("  #")) {
        assert!(line.chars().count() <= 100, "{line}");
    }
}

#[test]
fn launch_leak_three_clean_starts_is_growth() {
    let (document, text, code, _directory) = probe_launch("leak", "3", &[], &["--json"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        document["verdict"], "growth",
        "{}",
        document["trend"]["reason"]
    );
    // `--json` prints the same document that `DIR/probe.json` holds.
    let printed: serde_json::Value =
        serde_json::from_str(text.split("\nstderr:").next().unwrap()).unwrap();
    assert_eq!(printed["verdict"], "growth");
    assert_eq!(printed["launches"].as_array().unwrap().len(), 3);
}

#[test]
fn launch_noisy_plateau_and_noisy_leak_with_three_repeats() {
    let (document, text, code, _directory) =
        probe_launch("noisy-plateau", "3", &["--seed", "1"], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        document["verdict"], "plateau",
        "{}",
        document["trend"]["reason"]
    );
    let (document, text, code, _directory) = probe_launch("noisy-leak", "3", &["--seed", "7"], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        document["verdict"], "growth",
        "{}",
        document["trend"]["reason"]
    );
}

#[test]
fn launch_host_leak_is_growth_of_host_memory() {
    let (document, text, code, _directory) = probe_launch("host-leak", "2", &[], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        document["verdict"], "growth_host_memory",
        "{}",
        document["trend"]["reason"]
    );
}

#[test]
fn launch_crash_at_start_is_explained_as_a_startup_oom_and_exit_2() {
    let (document, text, code, directory) = probe_launch("crash-at-start", "3", &[], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        document.is_null(),
        "no verdict for a server that never started"
    );
    assert!(text.contains("did not start (repeat 1 of 3)"), "{text}");
    assert!(text.contains("not a probe result"), "{text}");
    assert!(text.to_lowercase().contains("out of memory"), "{text}");
    assert!(directory.path().join("probe/repeat-1/log.txt").exists());
    assert!(!directory.path().join("probe/repeat-2").exists());
}

#[test]
fn launch_crash_mid_protocol_keeps_the_partial_report_and_exits_2() {
    let (document, text, code, _directory) =
        probe_launch("crash-mid", "3", &["--crash-after", "12"], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert_eq!(document["verdict"], "inconclusive");
    assert_eq!(
        launches(&document).len(),
        1,
        "no second start after a crash"
    );
    assert_eq!(launches(&document)[0]["exited_on_its_own"], true);
    assert_eq!(launches(&document)[0]["exit"], "exit code 1");
    let served = document["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == 200)
        .count();
    assert_eq!(served, 12);
}

#[test]
fn launch_server_that_takes_a_second_to_die_keeps_its_own_exit_code() {
    // After the crash the engine hangs up on every request for a second before it exits, as a
    // process tearing down its CUDA context does: the probe must not SIGTERM it meanwhile.
    let (document, text, code, _directory) = probe_launch(
        "crash-mid",
        "2",
        &["--crash-after", "5", "--dying-for", "1"],
        &[],
    );
    assert_eq!(code, Some(2), "{text}");
    assert_eq!(launches(&document).len(), 1, "{text}");
    assert_eq!(launches(&document)[0]["exited_on_its_own"], true, "{text}");
    assert_eq!(launches(&document)[0]["exit"], "exit code 1", "{text}");
    assert_eq!(launches(&document)[0]["stop"], "already exited", "{text}");
}

#[test]
fn launch_slow_start_past_the_ready_timeout_is_stopped_and_exit_2() {
    let directory = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let out = directory.path().join("probe");
    let output = oomdoc()
        .args([
            "probe",
            &url,
            "--launch",
            "--ready-timeout",
            "1",
            "--stop-grace",
            "2",
        ])
        .args(["--memory-from", &format!("prometheus:{url}/metrics")])
        .arg("--out")
        .arg(&out)
        .arg("--")
        .arg("python3")
        .arg(fixture("fake_servers/fake_engine.py"))
        .args(["--port", &port.to_string(), "--variant", "slow-start"])
        .args(["--ready-after", "5"])
        .output()
        .unwrap();
    let stderr = super::stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("within 1 s (`--ready-timeout`)"),
        "{stderr}"
    );
    assert!(!out.join("probe.json").exists());
}

#[test]
fn short_soak_against_a_launched_plateau_gives_a_whole_run_verdict() {
    let fake = fake("plateau", &[], 30);
    let server = launch::launch(&fake.config).unwrap();
    let memory = format!("prometheus:{}/metrics", fake.config.url);
    let output = oomdoc()
        .args(["probe", &fake.config.url, "--json", "--duration", "4s"])
        .args(["--memory-from", &memory])
        .output()
        .unwrap();
    server.stop(Duration::from_secs(5));
    assert_eq!(output.status.code(), Some(0), "{}", super::stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let soak = &report["soak"];
    assert!(soak["cycles"].as_u64().unwrap() >= 2, "{soak}");
    assert_eq!(report["verdict"], soak["verdict"]);
    // Only the last cycle's requests are kept: bounded however long the run.
    assert!(report["requests"].as_array().unwrap().len() <= 23);
    assert!(soak["slots"].as_array().unwrap().len() as u64 <= soak["cycles"].as_u64().unwrap());
}

#[test]
fn launched_soak_is_one_start_cycled_for_the_duration_and_stopped_cleanly() {
    let (document, text, code, directory) =
        probe_launch("plateau", "", &[], &["--duration", "4s", "--json"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(launches(&document).len(), 1);
    assert_eq!(launches(&document)[0]["stop"], "SIGTERM");
    let soak = &document["soak"];
    assert!(soak["cycles"].as_u64().unwrap() >= 2, "{soak}");
    assert_eq!(document["verdict"], soak["verdict"]);
    assert!(directory.path().join("probe/repeat-1/run.json").exists());
    // `--duration` and `--repeat` do not mix.
    let refused = oomdoc()
        .args([
            "probe",
            "http://127.0.0.1:9",
            "--duration",
            "4s",
            "--repeat",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(super::stderr(&refused).contains("cannot be used with"));
}
