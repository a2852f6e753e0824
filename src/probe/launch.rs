//! `oomdoc probe --launch -- CMD ARGS…`: the growth test from a clean start each time. For each
//! of K repeats the server is started by the recorder of `oomdoc run` (`record::record`, in a
//! thread) in its own process group: `DIR/repeat-N/` gets its `run.json` (preflight inventory,
//! memory timeline, phases, explain of the log) and `log.txt`. oomdoc waits until it answers (`/health` or `/v1/models`; the time
//! to ready is kept), runs one cycle of the protocol reading the server's process-tree RSS
//! beside GPU memory, stops it (SIGTERM, a grace period, SIGKILL of the group), checks that
//! GPU memory came back, and writes `DIR/repeat-N/probe.json`. `DIR/probe.json` holds the
//! verdict across repeats. A server that exits before it answers is the finding, not a probe
//! failure: [`LaunchRun::FailedToStart`] carries `explain`'s report of its log.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::runner::Runner;
use super::{baseline, choose_model, collect, report, server, settings, MetricsScrape};
use super::{plan, ProbeOptions, ProbeRun};
use crate::analyze::explain::explain_text;
use crate::model::explain::ExplainReport;
use crate::model::probe::LaunchRecord;
use crate::model::Bytes;
use crate::record::{self, Diagnostics, RecordOptions, Recorded};
use crate::source::file::write_file_atomically;
use crate::source::launch::{self, LaunchError, Release};
use crate::source::server as http;

/// GPU memory still held after a stop that counts as "came back" (allocator slack, another
/// process's small moves).
const RELEASE_TOLERANCE: Bytes = Bytes(256 << 20);
/// Device memory readings per second of the recorder's timeline during a probe.
const RECORD_SAMPLE_RATE: f64 = 10.0;
/// Longest wait for GPU memory to come back after a stop.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(30);

/// How to launch the server.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The command and its arguments.
    pub command: Vec<String>,
    /// Reuse repeat directories of an earlier probe.
    pub force: bool,
    /// Directory for the repeats' files and `probe.json`.
    pub out: PathBuf,
    /// Longest wait for the server to answer.
    pub ready_timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
}

/// The result of a launched probe.
#[derive(Debug)]
pub enum LaunchRun {
    /// Every repeat started; the report across repeats (also in `DIR/probe.json`).
    Probed(Box<ProbeRun>),
    /// Repeat `repeat` (from 0) did not start: the launcher's error and `explain` of its log.
    FailedToStart {
        /// The repeat, from 0.
        repeat: u32,
        /// What happened (exited early, or not ready in time).
        error: LaunchError,
        /// `explain` of the end of the server's log.
        explain: Box<ExplainReport>,
    },
}

/// `repeat-N` under `out`, N from 1.
pub fn repeat_directory(out: &Path, repeat: u32) -> PathBuf {
    out.join(format!("repeat-{}", repeat + 1))
}

/// Runs K launches (`options.repeat`).
pub fn run(options: &ProbeOptions, launch_options: &LaunchOptions) -> anyhow::Result<LaunchRun> {
    if launch_options.command.is_empty() {
        anyhow::bail!("`--launch` needs a command after `--`");
    }
    std::fs::create_dir_all(&launch_options.out)
        .with_context(|| format!("cannot create `{}`", launch_options.out.display()))?;
    let server = server(options);
    let started = Instant::now();
    let mut limitations = Vec::new();
    let mut memory = super::memory::open(options, &mut limitations)?;
    // GPU memory coming back after each stop is read through NVML when it is there.
    let mut gpu = crate::source::gpu::open(
        crate::source::gpu::replay_path(None).as_deref(),
        crate::analyze::devices::analyze,
    )
    .ok();
    let before = gpu
        .as_deref_mut()
        .and_then(|gpu| launch::used_by_device(gpu).ok().flatten());
    let mut settings_seen = None;
    let mut all_requests = Vec::new();
    let mut launches = Vec::new();
    let mut metrics_seen = std::collections::BTreeSet::new();
    let mut preemptions: Option<f64> = None;
    let mut first_baseline = None;
    let mut stop = None;
    // Ctrl-C ends the current repeat at its next request; the server is still stopped cleanly
    // and the verdict so far written.
    let interrupted = super::interrupt_flag();
    // A soak (`--duration`) is one start cycled for the duration.
    let repeats = if options.duration.is_some() {
        1
    } else {
        options.repeat
    };
    let mut soak_analysis = None;
    for repeat in 0..repeats {
        let directory = repeat_directory(&launch_options.out, repeat);
        let launched = match start(&directory, options, launch_options) {
            Ok(launched) => launched,
            Err(error) => {
                let Some(tail) = error.log_tail() else {
                    return Err(anyhow::Error::new(error));
                };
                let explain = Box::new(explain_text(tail));
                return Ok(LaunchRun::FailedToStart {
                    repeat,
                    error,
                    explain,
                });
            }
        };
        let host_at_ready = launch::process_tree_rss(launched.pid);
        let mut repeat_limitations = Vec::new();
        let (model, model_from, context) =
            match choose_model(&server, options.model.as_deref(), &mut repeat_limitations) {
                Ok(chosen) => chosen,
                Err(error) => {
                    launched.stop(launch_options.grace);
                    return Err(error);
                }
            };
        let mut settings = settings(options, model, model_from, context, &mut repeat_limitations);
        settings.repeat = 1;
        let mut runner = Runner {
            server: &server,
            endpoint: options.endpoint,
            settings: &settings,
            memory: memory.as_mut(),
            host_pid: Some(launched.pid),
            metrics: Some(MetricsScrape {
                url: server.metrics_url(),
                timeout: Duration::from_secs(options.request_timeout_s.min(10)),
            }),
            requests: Vec::new(),
            consecutive_failures: 0,
            deadline: Instant::now()
                + options
                    .duration
                    .unwrap_or(Duration::from_secs(options.time_limit_s)),
            progress: super::progress_bar(
                options.progress,
                Some(plan::cycle(&settings, repeat).len() as u64),
            ),
            limitations: Vec::new(),
            metrics_seen: std::collections::BTreeSet::new(),
            first_preemptions: None,
            last_preemptions: None,
            memory_error: None,
            interrupted: Some(&interrupted),
        };
        let repeat_started = Instant::now();
        let base = match baseline(&mut runner) {
            Ok(base) => base,
            Err(error) => {
                drop(runner);
                launched.stop(launch_options.grace);
                return Err(error);
            }
        };
        first_baseline.get_or_insert(base);
        let repeat_stop = if options.duration.is_some() {
            let (analysis, stop) = super::soak(&mut runner, &settings);
            soak_analysis = Some(analysis);
            // The duration's end and Ctrl-C end a soak; only a failed server is a failure.
            stop.filter(|stop| matches!(stop, super::Stop::Server(_)))
        } else {
            runner.run_plan(&plan::cycle(&settings, repeat)).err()
        };
        let collected = collect(&mut runner);
        drop(runner);
        let pid = launched.pid;
        let ready_ms = launched.time_to_ready_ms;
        let ready_path = launched.ready_path.to_string();
        // A server that stopped answering may be dying on its own (an out-of-memory crash): give
        // it a moment, so its own exit code is recorded rather than our SIGTERM.
        let server_failed = matches!(repeat_stop, Some(super::Stop::Server(_)));
        let stopped = launched.stop_after_failure(launch_options.grace, server_failed);
        repeat_limitations.extend(
            stopped
                .notes
                .iter()
                .map(|note| format!("repeat {}: {note}", repeat + 1)),
        );
        let release = match gpu.as_deref_mut() {
            Some(gpu) => launch::wait_for_release(
                gpu,
                before.as_ref(),
                RELEASE_TOLERANCE,
                RELEASE_TIMEOUT,
                Duration::from_millis(200),
            ),
            None => Release::NotMeasured {
                reason: "NVML is not available here, so memory coming back after the stop was not measured".to_string(),
            },
        };
        let (gpu_release, gpu_release_detail) = describe_release(&release);
        if matches!(release, Release::Held { .. }) {
            repeat_limitations.push(format!(
                "repeat {}: GPU memory did not come back after the stop ({gpu_release_detail}); the next start is not clean",
                repeat + 1
            ));
        }
        // Paths in the documents are relative to `DIR` (where `probe.json` is): no private path
        // of this machine is written, and the directory can be moved.
        let relative = format!("repeat-{}", repeat + 1);
        let record = LaunchRecord {
            repeat,
            directory: relative.clone(),
            pid,
            time_to_ready_ms: ready_ms,
            ready_path,
            stop: stopped.how,
            exit: stopped.exit,
            stop_ms: stopped.stop_ms,
            exited_on_its_own: stopped.exited_on_its_own,
            run_record: stopped
                .run_record
                .map(|_| format!("{relative}/{}", crate::model::run::RECORD_FILE)),
            gpu_release: gpu_release.to_string(),
            gpu_release_detail,
            host_memory_at_ready_bytes: host_at_ready,
        };
        if record.exited_on_its_own {
            repeat_limitations.push(format!(
                "repeat {}: the server exited during the protocol ({}); its log is `{relative}/log.txt`",
                repeat + 1,
                record.exit,
            ));
        }
        metrics_seen.extend(collected.metrics_seen.iter().cloned());
        if let Some(count) = collected.preemptions {
            *preemptions.get_or_insert(0.0) += count;
        }
        all_requests.extend(collected.requests.iter().cloned());
        let mut one = report(
            &server,
            settings.clone(),
            memory.as_ref(),
            Some(base),
            collected,
            repeat_limitations.clone(),
            repeat_stop.as_ref(),
            repeat_started,
        );
        one.launches = vec![record.clone()];
        apply_soak(&mut one, soak_analysis.as_ref());
        write_document(&directory.join("probe.json"), &one)?;
        limitations.extend(
            repeat_limitations
                .into_iter()
                .filter(|line| line.starts_with("repeat ")),
        );
        launches.push(record);
        settings_seen.get_or_insert(settings);
        if repeat_stop.is_some() || interrupted.load(std::sync::atomic::Ordering::SeqCst) {
            stop = repeat_stop;
            if stop.is_none() && options.duration.is_none() {
                stop = Some(super::Stop::Interrupted);
            }
            break;
        }
    }
    let Some(mut settings) = settings_seen else {
        anyhow::bail!("`--repeat` is 0");
    };
    settings.repeat = options.repeat;
    let collected = super::Collected {
        requests: all_requests,
        limitations: Vec::new(),
        metrics_seen: metrics_seen.into_iter().collect(),
        preemptions,
    };
    let mut combined = report(
        &server,
        settings,
        memory.as_ref(),
        first_baseline,
        collected,
        limitations,
        stop.as_ref(),
        started,
    );
    combined.launches = launches;
    apply_soak(&mut combined, soak_analysis.as_ref());
    write_document(&launch_options.out.join("probe.json"), &combined)?;
    Ok(LaunchRun::Probed(Box::new(ProbeRun {
        report: combined,
        stop,
    })))
}

/// A soak's verdict replaces the one from its last cycle.
fn apply_soak(
    report: &mut crate::model::probe::ProbeReport,
    soak: Option<&crate::model::probe::SoakAnalysis>,
) {
    if let Some(soak) = soak {
        report.verdict = soak.verdict;
        report.trend.reason = soak.reason.clone();
        report.soak = Some(soak.clone());
    }
}

fn write_document(path: &Path, report: &crate::model::probe::ProbeReport) -> anyhow::Result<()> {
    let bytes = crate::render::json::to_document(report)?;
    write_file_atomically(path, &bytes)
        .with_context(|| format!("cannot write `{}`", path.display()))
}

fn describe_release(release: &Release) -> (&'static str, String) {
    match release {
        Release::Released { after_ms } => (
            "released",
            format!("back within {RELEASE_TOLERANCE} of the level before the first start after {after_ms} ms"),
        ),
        Release::Held { held, waited_ms } => (
            "held",
            format!("{held} above the level before the first start after {waited_ms} ms"),
        ),
        Release::NotMeasured { reason } => ("not measured", reason.clone()),
        Release::Unreadable { reason } => ("unreadable", reason.clone()),
    }
}

/// Collects what the recorder says while the server runs (it goes into the limitations).
#[derive(Default)]
struct Notes(Vec<String>);

impl Diagnostics for Notes {
    fn warn(&mut self, message: &str) {
        self.0.push(message.to_string());
    }

    fn error(&mut self, error: &anyhow::Error) {
        self.0.push(format!("{error:#}"));
    }
}

type RecordThread = JoinHandle<(anyhow::Result<Recorded>, Vec<String>)>;

/// A server started by the recorder that answered.
struct Running {
    pid: u32,
    thread: RecordThread,
    time_to_ready_ms: u64,
    ready_path: &'static str,
}

/// How a recorded server was stopped.
struct RecordedStop {
    how: String,
    exit: String,
    stop_ms: u64,
    exited_on_its_own: bool,
    run_record: Option<String>,
    notes: Vec<String>,
}

fn signal_group(pid: u32, signal: rustix::process::Signal) {
    if let Some(group) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        // The group may be gone already (every member exited): nothing to do then.
        let _ = rustix::process::kill_process_group(group, signal);
    }
}

/// Whether `pid` still runs (not gone, not a zombie waiting to be reaped).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses, which may itself hold spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// How long a server whose requests failed gets to finish exiting on its own before SIGTERM:
/// a crashing process stops answering a little before the kernel has torn it down.
const SETTLE_AFTER_FAILURE: Duration = Duration::from_secs(2);

/// SIGTERM to the group, `grace` to exit, then SIGKILL of the group; the recorder thread
/// then finishes `run.json`.
fn stop_thread(pid: u32, thread: RecordThread, grace: Duration) -> RecordedStop {
    stop_thread_settling(pid, thread, grace, Duration::ZERO)
}

/// [`stop_thread`], first waiting up to `settle` for a child that may be exiting on its own.
fn stop_thread_settling(
    pid: u32,
    thread: RecordThread,
    grace: Duration,
    settle: Duration,
) -> RecordedStop {
    let settling = Instant::now();
    while !thread.is_finished() && alive(pid) && settling.elapsed() < settle {
        std::thread::sleep(Duration::from_millis(20));
    }
    // The recorder may still be closing the record of a child that already exited.
    let exited_on_its_own = thread.is_finished() || !alive(pid);
    let asked = Instant::now();
    let mut how = "already exited".to_string();
    if exited_on_its_own {
        // The leader is gone; workers it forked may still hold GPU memory.
        signal_group(pid, rustix::process::Signal::KILL);
        while !thread.is_finished() && asked.elapsed() < grace {
            std::thread::sleep(Duration::from_millis(20));
        }
    } else {
        signal_group(pid, rustix::process::Signal::TERM);
        how = "SIGTERM".to_string();
        while !thread.is_finished() && asked.elapsed() < grace {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Workers that ignored SIGTERM would outlive their parent: end them too.
        signal_group(pid, rustix::process::Signal::KILL);
        if !thread.is_finished() {
            how = format!("SIGKILL after {} ms of SIGTERM", grace.as_millis());
        }
    }
    let stop_ms = if exited_on_its_own {
        0
    } else {
        elapsed_ms(asked)
    };
    let (recorded, notes) = match thread.join() {
        Ok(result) => result,
        Err(_) => (
            Err(anyhow::anyhow!("the recorder thread panicked")),
            Vec::new(),
        ),
    };
    match recorded {
        Ok(recorded) => {
            let record = recorded.record();
            let exit = match record.signal {
                Some(signal) => launch::describe_exit(&ExitStatus::from_raw(signal)),
                None => format!("exit code {}", record.exit_code.unwrap_or(-1)),
            };
            RecordedStop {
                how,
                exit,
                stop_ms,
                exited_on_its_own,
                run_record: Some(
                    recorded
                        .directory
                        .join(crate::model::run::RECORD_FILE)
                        .display()
                        .to_string(),
                ),
                notes,
            }
        }
        Err(error) => {
            let mut notes = notes;
            notes.push(format!("the run record is incomplete: {error:#}"));
            RecordedStop {
                how,
                exit: "unknown".to_string(),
                stop_ms,
                exited_on_its_own,
                run_record: None,
                notes,
            }
        }
    }
}

impl Running {
    fn stop(self, grace: Duration) -> RecordedStop {
        stop_thread(self.pid, self.thread, grace)
    }

    /// [`Running::stop`]; after a failed protocol (`server_failed`) the server first gets a
    /// moment to finish exiting on its own.
    fn stop_after_failure(self, grace: Duration, server_failed: bool) -> RecordedStop {
        let settle = if server_failed {
            SETTLE_AFTER_FAILURE.min(grace)
        } else {
            Duration::ZERO
        };
        stop_thread_settling(self.pid, self.thread, grace, settle)
    }
}

/// Starts the server under the recorder in `directory` and waits until it answers.
fn start(
    directory: &Path,
    options: &ProbeOptions,
    launch_options: &LaunchOptions,
) -> Result<Running, LaunchError> {
    let (sender, receiver) = mpsc::sync_channel::<u32>(1);
    let record_options = RecordOptions {
        out: Some(directory.to_path_buf()),
        force: launch_options.force,
        sample_rate: RECORD_SAMPLE_RATE,
        gpu_from: None,
        torch_snapshot: false,
        context_lines: crate::analyze::explain::CONTEXT_BEFORE,
        command: launch_options.command.clone(),
        detached: true,
        on_spawn: Some(sender),
    };
    let started = Instant::now();
    let program = launch_options.command.first().cloned().unwrap_or_default();
    let thread: RecordThread = std::thread::spawn(move || {
        let mut notes = Notes::default();
        let recorded = record::record(record_options, &mut notes);
        (recorded, notes.0)
    });
    let log_path = directory.join(crate::model::run::LOG_FILE);
    let pid = loop {
        match receiver.recv_timeout(Duration::from_millis(50)) {
            Ok(pid) => break pid,
            Err(mpsc::RecvTimeoutError::Timeout) if !thread.is_finished() => continue,
            Err(_) => {
                // The recorder ended before the child started: the directory or the command.
                let (recorded, notes) = thread.join().unwrap_or_else(|_| {
                    (
                        Err(anyhow::anyhow!("the recorder thread panicked")),
                        Vec::new(),
                    )
                });
                let reason = match recorded {
                    Err(error) => format!("{error:#}"),
                    Ok(_) => notes.join("; "),
                };
                return Err(LaunchError::Spawn {
                    program,
                    source: std::io::Error::other(reason),
                });
            }
        }
    };
    let base = http::base_url(&options.url);
    let poll = Duration::from_millis(200);
    loop {
        if thread.is_finished() {
            let stopped = stop_thread(pid, thread, launch_options.grace);
            let status = exit_status(&stopped.exit);
            return Err(LaunchError::ExitedEarly {
                status,
                elapsed_ms: elapsed_ms(started),
                url: http::redact_url(&options.url),
                log_tail: launch::log_tail(&log_path),
                log_path,
            });
        }
        for path in ["/health", "/v1/models"] {
            if http::fetch_text(&format!("{base}{path}"), poll).is_ok() {
                return Ok(Running {
                    pid,
                    thread,
                    time_to_ready_ms: elapsed_ms(started),
                    ready_path: path,
                });
            }
        }
        if started.elapsed() >= launch_options.ready_timeout {
            let stopped = stop_thread(pid, thread, launch_options.grace);
            return Err(LaunchError::NotReady {
                url: http::redact_url(&options.url),
                waited_s: launch_options.ready_timeout.as_secs(),
                stop: format!("{}; {}", stopped.how, stopped.exit),
                log_tail: launch::log_tail(&log_path),
                log_path,
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `exit code N` / `signal N …` back to a status, for the launcher's error.
fn exit_status(described: &str) -> ExitStatus {
    let number = |text: &str| {
        text.split_whitespace()
            .find_map(|word| word.parse::<i32>().ok())
    };
    if let Some(rest) = described.strip_prefix("exit code ") {
        ExitStatus::from_raw(number(rest).unwrap_or(1).clamp(0, 255) << 8)
    } else if let Some(rest) = described.strip_prefix("signal ") {
        ExitStatus::from_raw(number(rest).unwrap_or(9).clamp(1, 127))
    } else {
        ExitStatus::from_raw(1 << 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn described_exits_come_back_as_statuses() {
        for raw in [0, 1 << 8, 137 << 8, 9, 15, 6] {
            let status = ExitStatus::from_raw(raw);
            assert_eq!(
                exit_status(&launch::describe_exit(&status)),
                status,
                "{raw}"
            );
        }
        assert_eq!(exit_status("unknown"), ExitStatus::from_raw(1 << 8));
        assert_eq!(
            repeat_directory(Path::new("out"), 0),
            PathBuf::from("out/repeat-1")
        );
    }
}
