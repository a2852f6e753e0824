//! CLI tests of `oomdoc run`'s host memory: the kernel's OOM kill recorded, summarised and
//! reported, replayed host readings, and `diff` of host peaks.

use std::path::Path;

use super::run::{record, run_sh};
use super::{oomdoc, stderr, stdout};

const MIB: u64 = 1 << 20;

/// A host timeline to replay (`--host-from`): the cgroup before, readings of the tree's RSS
/// (MiB, processes), the cgroup after; cgroup v1 with a 512 MiB limit, shaped like the real OOM
/// kill of `tests/fixtures/host/box-v1-oom/`.
fn host_replay(
    directory: &Path,
    readings: &[(u64, u32)],
    oom_kills_after: u64,
) -> std::path::PathBuf {
    let cgroup = |oom_kills: u64, current: u64, peak: u64| {
        serde_json::json!({
            "version": "v1", "path": "/job",
            "current_bytes": current, "limit_bytes": 512 * MIB, "peak_bytes": peak,
            "oom_kill_count": oom_kills, "limit_hit_count": oom_kills * 40,
            "under_oom": false
        })
    };
    let samples: Vec<serde_json::Value> = readings
        .iter()
        .enumerate()
        .map(|(n, (rss_mib, processes))| {
            serde_json::json!({
                "t_ms": n as u64 * 100, "tree_rss_bytes": rss_mib * MIB,
                "processes": processes, "cgroup_current_bytes": (rss_mib + 4) * MIB
            })
        })
        .collect();
    let peak = readings.iter().map(|(rss, _)| rss + 4).max().unwrap_or(0) * MIB;
    let timeline = serde_json::json!({
        "root_pid": 1, "interval_ms": 100, "samples": samples,
        "cgroup_before": cgroup(0, 2 * MIB, 2 * MIB),
        "cgroup_after": cgroup(oom_kills_after, MIB / 4, peak),
    });
    std::fs::create_dir_all(directory)
        .unwrap_or_else(|error| panic!("cannot make `{}`: {error}", directory.display()));
    let path = directory.join("host-replay.json");
    std::fs::write(&path, timeline.to_string())
        .unwrap_or_else(|error| panic!("cannot write `{}`: {error}", path.display()));
    path
}

/// `oomdoc run` with a replayed host on a child that starts loading weights, then waits and
/// is killed by SIGKILL (as the kernel's OOM killer would).
fn run_killed_with_host(directory: &Path, replay: &Path) -> std::process::Output {
    oomdoc()
        .arg("run")
        .arg("--out")
        .arg(directory)
        .env("OOMDOC_HOST_FROM", replay)
        .args([
            "--",
            "sh",
            "-c",
            "echo 'INFO Starting to load model m...'; sleep 1.2; kill -KILL $$",
        ])
        .output()
        .unwrap_or_else(|error| panic!("cannot run oomdoc: {error}"))
}

/// The report of a run directory in one format.
fn report(directory: &Path, format: &str) -> String {
    let output = oomdoc()
        .arg("report")
        .arg(directory)
        .args(["--format", format])
        .output()
        .unwrap_or_else(|error| panic!("cannot run oomdoc: {error}"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output)
}

#[test]
fn issue_17_host_oom_kill_is_recorded_summarised_and_reported() {
    let temp = tempfile::tempdir().unwrap();
    // Low while starting, then 500 MiB of the 512 MiB limit in 3 processes (first seen at
    // the 6th reading, ~0.5 s, well after the loading line), held until the kill.
    let readings = [(10, 1), (10, 1), (12, 1), (12, 1), (40, 2), (500, 3)];
    let replay = host_replay(&temp.path().join("replay"), &readings, 1);
    let directory = temp.path().join("run");
    let output = run_killed_with_host(&directory, &replay);
    assert_eq!(output.status.code(), Some(137), "{}", stderr(&output));
    let record = record(&directory);
    let host = &record["host"];
    assert_eq!(host["source"], "replay");
    assert_eq!(host["limit_bytes"], 512 * MIB);
    assert_eq!(
        (
            host["oom_kills_before"].clone(),
            host["oom_kills_after"].clone()
        ),
        (0.into(), 1.into())
    );
    assert_eq!(host["peak"]["tree_rss_bytes"], 500 * MIB);
    assert_eq!(host["peak"]["phase"], "weights_load");
    assert_eq!(host["peaks_by_phase"][0]["phase"], "weights_load");
    let finding = &host["finding"];
    assert_eq!(finding["kind"], "host_oom_kill", "{finding}");
    assert_eq!(finding["evidence"][0]["kind"], "oom_kill_count_rose");
    assert_eq!(finding["evidence"][1]["kind"], "rss_at_limit");
    assert_eq!(finding["limit_bytes"], 512 * MIB);
    assert_eq!(finding["peak"]["bytes"], 504 * MIB);
    assert_eq!(finding["peak"]["figure"], "cgroup_peak");
    assert_eq!(finding["phase_at_kill"], "weights_load");
    assert_eq!(finding["advice"][0]["kind"], "raise_memory_limit");
    assert!(host["readings"].as_u64().unwrap() >= 6, "{host}");
    // run's own summary says it, with the limit, the peak and the phase.
    let summary = stderr(&output);
    for expected in [
        "was killed by signal 9 (exit code 137)",
        "host out-of-memory kill: the kernel's OOM killer ended the process (host RAM, not GPU)",
        "limit: 512.00 MiB",
        "peak: 504.00 MiB (528482304 B, the cgroup's peak counter) during weights_load",
        "killed during: weights_load",
        "raise the memory limit from 512.00 MiB",
        "host memory: peak tree RSS 500.00 MiB",
    ] {
        assert!(
            summary.contains(expected),
            "`{expected}` not in:\n{summary}"
        );
    }
    // report, every format.
    let text = report(&directory, "text");
    assert!(text.contains("Host memory"), "{text}");
    assert!(text.contains("host out-of-memory kill"), "{text}");
    assert!(
        text.contains("cgroup limit 512.00 MiB, OOM kills 0 → 1"),
        "{text}"
    );
    let markdown = report(&directory, "markdown");
    assert!(markdown.contains("### Host memory"), "{markdown}");
    assert!(
        markdown.contains("| weights_load | 500.00 MiB |"),
        "{markdown}"
    );
    let html = report(&directory, "html");
    assert!(html.contains("<h3>Host memory</h3>"));
    assert!(html.contains("host out-of-memory kill"));
    let json: serde_json::Value = serde_json::from_str(&report(&directory, "json")).unwrap();
    let run = &json["runs"][0];
    assert_eq!(run["verdict"]["cause_kind"], "host_oom_kill");
    assert_eq!(run["owner_summary"]["kind"], "not_a_gpu_oom");
    assert_eq!(run["host"]["finding"]["kind"], "host_oom_kill");
    assert!(
        run["host"].get("samples").is_none(),
        "the report leaves the samples out"
    );
}

#[test]
fn issue_17_sigkill_without_evidence_stays_cause_not_shown() {
    let temp = tempfile::tempdir().unwrap();
    let readings = [(10, 1), (30, 1), (60, 1)];
    let replay = host_replay(&temp.path().join("replay"), &readings, 0);
    let directory = temp.path().join("run");
    let output = run_killed_with_host(&directory, &replay);
    assert_eq!(output.status.code(), Some(137), "{}", stderr(&output));
    let finding = &record(&directory)["host"]["finding"];
    assert_eq!(finding["kind"], "killed_by_signal", "{finding}");
    assert_eq!(
        finding["not_shown_because"],
        serde_json::json!([
            "the cgroup's OOM-kill count did not change (0)",
            "the sampled RSS peak (60.00 MiB) stayed below the cgroup limit (512.00 MiB)"
        ])
    );
    let summary = stderr(&output);
    assert!(
        summary.contains("killed by a signal (signal 9, exit code 137): cause not shown"),
        "{summary}"
    );
    assert!(!summary.contains("out-of-memory kill"), "{summary}");
    let json: serde_json::Value = serde_json::from_str(&report(&directory, "json")).unwrap();
    let run = &json["runs"][0];
    assert_ne!(run["verdict"]["cause_kind"], "host_oom_kill");
    assert!(run["status"]["summary"]
        .as_str()
        .unwrap()
        .contains("killed by a signal (cause not shown)"));
    let text = report(&directory, "text");
    assert!(!text.contains("host out-of-memory kill"), "{text}");
}

#[test]
fn issue_17_normal_exit_records_live_host_memory_and_no_kill() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("run");
    // The live `/proc` of this machine: a tree of the shell and its child.
    let output = run_sh(&directory, "sleep 0.35 & wait; exit 0");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let host = &record(&directory)["host"];
    assert_eq!(host["source"], "proc");
    assert_eq!(host["finding"]["kind"], "not_killed");
    assert_eq!(host["interval_ms"], 100);
    assert_eq!(host["readings_per_point"], 1);
    assert!(host["readings"].as_u64().unwrap() >= 3, "{host}");
    assert!(
        host["peak"]["tree_rss_bytes"].as_u64().unwrap() > 0,
        "{host}"
    );
    assert!(host["peak"]["processes"].as_u64().unwrap() >= 1, "{host}");
    let summary = stderr(&output);
    assert!(summary.contains("host memory: peak tree RSS"), "{summary}");
    assert!(!summary.contains("killed by a signal"), "{summary}");
}

#[test]
fn issue_17_no_host_memory_turns_the_sampler_off() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("run");
    let output = oomdoc()
        .arg("run")
        .arg("--no-host-memory")
        .arg("--out")
        .arg(&directory)
        .args(["--", "sh", "-c", "kill -KILL $$"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(137), "{}", stderr(&output));
    let record = record(&directory);
    assert!(record.get("host").is_none(), "{record}");
    assert!(!stderr(&output).contains("host memory"));
    let text = report(&directory, "text");
    assert!(!text.contains("Host memory"), "{text}");
}

#[test]
fn issue_17_diff_shows_the_host_peak_difference() {
    let temp = tempfile::tempdir().unwrap();
    let killed = temp.path().join("killed");
    let replay = host_replay(&temp.path().join("a"), &[(10, 1), (500, 3)], 1);
    assert_eq!(
        run_killed_with_host(&killed, &replay).status.code(),
        Some(137)
    );
    let working = temp.path().join("working");
    let replay = host_replay(&temp.path().join("b"), &[(10, 1), (200, 1)], 0);
    let output = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&working)
        .env("OOMDOC_HOST_FROM", &replay)
        .args(["--", "sh", "-c", "sleep 0.6; exit 0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = oomdoc()
        .arg("diff")
        .arg(&killed)
        .arg(&working)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let diff: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let differences = diff["outcome"]["differences"].as_array().unwrap();
    let find = |field: &str| {
        differences
            .iter()
            .find(|change| change["field"] == field)
            .unwrap_or_else(|| panic!("no `{field}` in {differences:?}"))
            .clone()
    };
    let peak = find("host_peak_rss_bytes");
    assert_eq!(
        (peak["a"].as_u64(), peak["b"].as_u64()),
        (Some(500 * MIB), Some(200 * MIB))
    );
    let kill = find("host_oom_kill");
    assert_eq!(
        (kill["a"].clone(), kill["b"].clone()),
        (true.into(), false.into())
    );
    let output = oomdoc()
        .arg("diff")
        .arg(&killed)
        .arg(&working)
        .output()
        .unwrap();
    let text = stdout(&output);
    assert!(text.contains("host_peak_rss_bytes"), "{text}");
    assert!(text.contains("500.00 MiB"), "{text}");
}

#[test]
fn issue_17_an_unusable_host_replay_is_refused_before_the_start() {
    let temp = tempfile::tempdir().unwrap();
    let bad = temp.path().join("bad.json");
    std::fs::write(&bad, "{\"samples\": \"many\"}").unwrap();
    let directory = temp.path().join("run");
    let output = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .env("OOMDOC_HOST_FROM", &bad)
        .args(["--", "sh", "-c", "echo started > started.txt"])
        .current_dir(temp.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot replay host memory from"),
        "{}",
        stderr(&output)
    );
    assert!(!temp.path().join("started.txt").exists());
    assert!(!directory.exists());
}
