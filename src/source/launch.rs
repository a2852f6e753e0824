//! Launches an inference server for a growth test from a clean start: starts
//! `CMD ARGS…` in its own process group with its output captured to a log file, waits until it
//! answers (`/health` or `/v1/models`), records the time that took, notices a server that
//! exits before it is ready (an out-of-memory at startup: the caller hands the log to
//! `explain`), stops it cleanly (SIGTERM to the group, a grace period, then SIGKILL of the
//! group) and waits for GPU memory to come back.
//!
//! This module starts and stops processes and reads `/proc`; it never judges what it saw.
//! It knows nothing of the probe protocol.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::model::{Bytes, Source};
use crate::source::gpu::GpuSource;
use crate::source::server;

/// How much of the log's end comes back with an early exit: enough for a traceback and the
/// lines before it, small enough to keep in memory.
pub const LOG_TAIL_BYTES: u64 = 64 * 1024;

/// What to start and how long to wait for it.
#[derive(Debug, Clone)]
pub struct LaunchConfig {
    /// The program (`vllm`, `python3`, `llama-server`…).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Base URL the server will answer on, e.g. `http://127.0.0.1:8000`.
    pub url: String,
    /// Longest wait for the server to answer (`--ready-timeout`).
    pub ready_timeout: Duration,
    /// How often readiness is polled.
    pub poll_interval: Duration,
    /// Where the server's stdout and stderr go (created or truncated).
    pub log_path: PathBuf,
}

/// Errors of the launcher. An early exit is not a failure of oomdoc: it is the finding.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The log file could not be created.
    #[error("cannot create the server log `{path}`")]
    Log {
        /// The log file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The program could not be started at all.
    #[error("cannot start `{program}`")]
    Spawn {
        /// The program.
        program: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The server exited before it answered.
    #[error(
        "the server exited ({}) after {elapsed_ms} ms, before it answered on {url}",
        describe_exit(status)
    )]
    ExitedEarly {
        /// How it exited.
        status: ExitStatus,
        /// Time from start to exit, ms.
        elapsed_ms: u64,
        /// The URL that never answered.
        url: String,
        /// The end of its log (at most [`LOG_TAIL_BYTES`]).
        log_tail: String,
        /// The whole log.
        log_path: PathBuf,
    },
    /// The server did not answer in time; it was stopped.
    #[error("the server did not answer on {url} within {waited_s} s (`--ready-timeout`); it was stopped ({stop})")]
    NotReady {
        /// The URL polled.
        url: String,
        /// Seconds waited.
        waited_s: u64,
        /// How it was stopped.
        stop: String,
        /// The end of its log.
        log_tail: String,
        /// The whole log.
        log_path: PathBuf,
    },
}

impl LaunchError {
    /// The end of the server's log, when the server ran.
    pub fn log_tail(&self) -> Option<&str> {
        match self {
            LaunchError::ExitedEarly { log_tail, .. } | LaunchError::NotReady { log_tail, .. } => {
                Some(log_tail)
            }
            _ => None,
        }
    }
}

/// `exit code 1`, `signal 9 (SIGKILL)`.
pub fn describe_exit(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => {
            let name = match signal {
                6 => " (SIGABRT)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                15 => " (SIGTERM)",
                _ => "",
            };
            format!("signal {signal}{name}")
        }
        (None, None) => "unknown exit".to_string(),
    }
}

/// A server that answered.
#[derive(Debug)]
pub struct Launched {
    child: Child,
    started: Instant,
    /// Time from start to the first answer, ms (slow disk vs VRAM).
    pub time_to_ready_ms: u64,
    /// Which path answered first: `/health` or `/v1/models`.
    pub ready_path: &'static str,
    /// The log file.
    pub log_path: PathBuf,
}

/// How [`Launched::stop`] ended the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// `SIGTERM`, or `SIGKILL` when the grace period ran out, or `already exited`.
    pub how: String,
    /// Exit description (`exit code 0`, `signal 9 (SIGKILL)`).
    pub exit: String,
    /// Time from the first signal to the exit, ms.
    pub stop_ms: u64,
    /// Whether the server had already exited on its own (a crash mid-protocol).
    pub exited_on_its_own: bool,
}

/// Starts the server and waits until it answers.
pub fn launch(config: &LaunchConfig) -> Result<Launched, LaunchError> {
    let log = File::create(&config.log_path).map_err(|source| LaunchError::Log {
        path: config.log_path.clone(),
        source,
    })?;
    let log_err = log.try_clone().map_err(|source| LaunchError::Log {
        path: config.log_path.clone(),
        source,
    })?;
    let started = Instant::now();
    let mut child = Command::new(&config.program)
        .args(&config.args)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        // Its own process group: the stop signals reach every worker it forks (vLLM's engine
        // core, tensor-parallel workers) and never oomdoc itself.
        .process_group(0)
        .spawn()
        .map_err(|source| LaunchError::Spawn {
            program: config.program.to_string_lossy().into_owned(),
            source,
        })?;
    let base = server::base_url(&config.url);
    let probe_timeout = config.poll_interval.max(Duration::from_millis(200));
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(LaunchError::ExitedEarly {
                status,
                elapsed_ms: elapsed_ms(started),
                url: server::redact_url(&config.url),
                log_tail: log_tail(&config.log_path),
                log_path: config.log_path.clone(),
            });
        }
        for path in ["/health", "/v1/models"] {
            if server::fetch_text(&format!("{base}{path}"), probe_timeout).is_ok() {
                return Ok(Launched {
                    child,
                    started,
                    time_to_ready_ms: elapsed_ms(started),
                    ready_path: path,
                    log_path: config.log_path.clone(),
                });
            }
        }
        if started.elapsed() >= config.ready_timeout {
            let stopped = stop_child(&mut child, Duration::from_secs(10));
            return Err(LaunchError::NotReady {
                url: server::redact_url(&config.url),
                waited_s: config.ready_timeout.as_secs(),
                stop: format!("{}; {}", stopped.how, stopped.exit),
                log_tail: log_tail(&config.log_path),
                log_path: config.log_path.clone(),
            });
        }
        std::thread::sleep(config.poll_interval);
    }
}

impl Launched {
    /// The server's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Time since start, ms.
    pub fn uptime_ms(&self) -> u64 {
        elapsed_ms(self.started)
    }

    /// How it exited, when it already did (a crash mid-protocol).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Resident set of the server and its descendants (`VmRSS`), when `/proc` has it.
    pub fn host_memory(&self) -> Option<Bytes> {
        process_tree_rss(self.pid())
    }

    /// The end of the server's log.
    pub fn log_tail(&self) -> String {
        log_tail(&self.log_path)
    }

    /// Stops the server: SIGTERM to its process group, `grace` to exit, then SIGKILL of the
    /// group. Waits for the exit, so no zombie is left.
    pub fn stop(mut self, grace: Duration) -> Stopped {
        stop_child(&mut self.child, grace)
    }
}

fn stop_child(child: &mut Child, grace: Duration) -> Stopped {
    let leader = child.id();
    let signal_group = |signal: rustix::process::Signal| {
        let group = i32::try_from(leader)
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        if let Some(group) = group {
            // The group may be gone already (every member exited): nothing to do then.
            let _ = rustix::process::kill_process_group(group, signal);
        }
    };
    if let Ok(Some(status)) = child.try_wait() {
        // The leader is gone; workers it forked may still hold GPU memory.
        signal_group(rustix::process::Signal::KILL);
        return Stopped {
            how: "already exited".to_string(),
            exit: describe_exit(&status),
            stop_ms: 0,
            exited_on_its_own: true,
        };
    }
    let asked = Instant::now();
    signal_group(rustix::process::Signal::TERM);
    let deadline = asked + grace;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            // Workers that ignored SIGTERM would outlive their parent: end them too.
            signal_group(rustix::process::Signal::KILL);
            return Stopped {
                how: "SIGTERM".to_string(),
                exit: describe_exit(&status),
                stop_ms: elapsed_ms(asked),
                exited_on_its_own: false,
            };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    signal_group(rustix::process::Signal::KILL);
    let exit = child
        .wait()
        .map(|status| describe_exit(&status))
        .unwrap_or_else(|error| format!("unknown ({error})"));
    Stopped {
        how: format!("SIGKILL after {} ms of SIGTERM", grace.as_millis()),
        exit,
        stop_ms: elapsed_ms(asked),
        exited_on_its_own: false,
    }
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The last [`LOG_TAIL_BYTES`] of the log, from a line start, lossily decoded.
pub fn log_tail(path: &Path) -> String {
    let Ok(mut file) = File::open(path) else {
        return String::new();
    };
    let length = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = length.saturating_sub(LOG_TAIL_BYTES);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut bytes = Vec::new();
    if file.take(LOG_TAIL_BYTES).read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if start > 0 {
        match text.split_once('\n') {
            Some((_, rest)) => rest.to_string(),
            None => text,
        }
    } else {
        text
    }
}

/// Sum of `VmRSS` over `pid` and every descendant (found through `PPid:` in
/// `/proc/*/status`). `None` when `pid` itself cannot be read.
pub fn process_tree_rss(pid: u32) -> Option<Bytes> {
    let mut parents: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(status) = std::fs::read_to_string(format!("/proc/{child}/status")) else {
                continue;
            };
            if let Some(parent) = status_kib(&status, "PPid:") {
                parents
                    .entry(u32::try_from(parent).unwrap_or(0))
                    .or_default()
                    .push(child);
            }
        }
    }
    let own = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mut total = status_kib(&own, "VmRSS:").unwrap_or(0) * 1024;
    let mut stack: Vec<u32> = parents.get(&pid).cloned().unwrap_or_default();
    let mut visited = std::collections::BTreeSet::from([pid]);
    while let Some(next) = stack.pop() {
        if !visited.insert(next) {
            continue;
        }
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{next}/status")) {
            total += status_kib(&status, "VmRSS:").unwrap_or(0) * 1024;
        }
        stack.extend(parents.get(&next).cloned().unwrap_or_default());
    }
    Some(Bytes(total))
}

/// The first number after `field` in a `/proc/*/status` text.
fn status_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
}

/// Whether GPU memory came back after the server stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum Release {
    /// Used memory of every device is back within the tolerance of its level before start.
    Released {
        /// Time waited, ms.
        after_ms: u64,
    },
    /// Still held when the wait ended.
    Held {
        /// Memory above the level before start, summed over devices.
        held: Bytes,
        /// Time waited, ms.
        waited_ms: u64,
    },
    /// The source is a recording: nothing to wait for, and it says so.
    NotMeasured {
        /// Why.
        reason: String,
    },
    /// Memory could not be read.
    Unreadable {
        /// The error.
        reason: String,
    },
}

/// Used memory of each device now, by UUID; `None` from a replayed source (a recording cannot
/// show memory coming back).
pub fn used_by_device(gpu: &mut dyn GpuSource) -> Result<Option<BTreeMap<String, Bytes>>, String> {
    let inventory = gpu.inventory().map_err(|e| e.to_string())?;
    if matches!(inventory.source, Some(Source::Replay | Source::NvidiaSmi)) {
        return Ok(None);
    }
    let mut used = BTreeMap::new();
    for device in &inventory.devices {
        let sample = gpu.memory(&device.uuid).map_err(|e| e.to_string())?;
        used.insert(device.uuid.to_string(), sample.used_bytes);
    }
    Ok(Some(used))
}

/// Polls until every device's used memory is within `tolerance` of `before` (taken with
/// [`used_by_device`] before the server started), or `timeout` passes.
pub fn wait_for_release(
    gpu: &mut dyn GpuSource,
    before: Option<&BTreeMap<String, Bytes>>,
    tolerance: Bytes,
    timeout: Duration,
    poll_interval: Duration,
) -> Release {
    let Some(before) = before else {
        return Release::NotMeasured {
            reason: "GPU facts are replayed from a file, so memory coming back after the stop was not measured".to_string(),
        };
    };
    let started = Instant::now();
    loop {
        let now = match used_by_device(gpu) {
            Ok(Some(now)) => now,
            Ok(None) => {
                return Release::NotMeasured {
                    reason: "the GPU source became a replay".to_string(),
                }
            }
            Err(reason) => return Release::Unreadable { reason },
        };
        let held: u64 = now
            .iter()
            .map(|(uuid, used)| {
                let base = before.get(uuid).copied().unwrap_or(Bytes::ZERO);
                used.get().saturating_sub(base.get())
            })
            .sum();
        if held <= tolerance.get() {
            return Release::Released {
                after_ms: elapsed_ms(started),
            };
        }
        if started.elapsed() >= timeout {
            return Release::Held {
                held: Bytes(held),
                waited_ms: elapsed_ms(started),
            };
        }
        std::thread::sleep(poll_interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_tail_starts_at_a_line_and_keeps_the_end() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("server.log");
        let mut text = String::new();
        for line in 0..20_000 {
            text.push_str(&format!("line {line}\n"));
        }
        text.push_str("torch.OutOfMemoryError: CUDA out of memory.\n");
        std::fs::write(&path, &text).unwrap();
        let tail = log_tail(&path);
        assert!(tail.len() as u64 <= LOG_TAIL_BYTES);
        assert!(tail.starts_with("line "), "{}", &tail[..20]);
        assert!(tail.ends_with("torch.OutOfMemoryError: CUDA out of memory.\n"));
        assert_eq!(log_tail(&directory.path().join("absent.log")), "");
    }

    #[test]
    fn own_process_rss_is_read_from_proc() {
        let rss = process_tree_rss(std::process::id()).unwrap();
        assert!(rss.get() > 1 << 20, "{rss}");
        assert_eq!(process_tree_rss(u32::MAX), None);
    }

    #[test]
    fn exits_are_described_with_signal_names() {
        assert_eq!(describe_exit(&ExitStatus::from_raw(1 << 8)), "exit code 1");
        assert_eq!(
            describe_exit(&ExitStatus::from_raw(9)),
            "signal 9 (SIGKILL)"
        );
        assert_eq!(describe_exit(&ExitStatus::from_raw(10)), "signal 10");
    }
}
