//! `oomdoc probe --launch -- CMD ARGS…`: the growth test from a clean start each time. For each
//! of K repeats the server is started in its own process group with its log in
//! `DIR/repeat-N/log.txt`, oomdoc waits until it answers (`/health` or `/v1/models`; the time
//! to ready is kept), runs one cycle of the protocol reading the server's process-tree RSS
//! beside GPU memory, stops it (SIGTERM, a grace period, SIGKILL of the group), checks that
//! GPU memory came back, and writes `DIR/repeat-N/probe.json`. `DIR/probe.json` holds the
//! verdict across repeats. A server that exits before it answers is the finding, not a probe
//! failure: [`LaunchRun::FailedToStart`] carries `explain`'s report of its log.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::runner::Runner;
use super::{baseline, choose_model, collect, report, server, settings, MetricsScrape};
use super::{plan, ProbeOptions, ProbeRun};
use crate::analyze::explain::explain_text;
use crate::model::explain::ExplainReport;
use crate::model::probe::LaunchRecord;
use crate::model::Bytes;
use crate::source::file::write_file_atomically;
use crate::source::launch::{self, LaunchConfig, LaunchError, Release};

/// GPU memory still held after a stop that counts as "came back" (allocator slack, another
/// process's small moves).
const RELEASE_TOLERANCE: Bytes = Bytes(256 << 20);
/// Longest wait for GPU memory to come back after a stop.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(30);

/// How to launch the server.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The command and its arguments.
    pub command: Vec<OsString>,
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
    let Some((program, args)) = launch_options.command.split_first() else {
        anyhow::bail!("`--launch` needs a command after `--`");
    };
    std::fs::create_dir_all(&launch_options.out)
        .with_context(|| format!("cannot create `{}`", launch_options.out.display()))?;
    let server = server(options);
    let started = Instant::now();
    let mut limitations = Vec::new();
    let mut memory = super::memory::open(options, &mut limitations)?;
    // GPU memory coming back after each stop is read through NVML when it is there.
    let mut gpu = crate::source::gpu::open(crate::source::gpu::replay_path(None).as_deref()).ok();
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
    for repeat in 0..options.repeat {
        let directory = repeat_directory(&launch_options.out, repeat);
        std::fs::create_dir_all(&directory)
            .with_context(|| format!("cannot create `{}`", directory.display()))?;
        let config = LaunchConfig {
            program: program.clone(),
            args: args.to_vec(),
            url: options.url.clone(),
            ready_timeout: launch_options.ready_timeout,
            poll_interval: Duration::from_millis(100),
            log_path: directory.join("log.txt"),
        };
        let launched = match launch::launch(&config) {
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
        let host_at_ready = launched.host_memory();
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
            host_pid: Some(launched.pid()),
            metrics: Some(MetricsScrape {
                url: server.metrics_url(),
                timeout: Duration::from_secs(options.request_timeout_s.min(10)),
            }),
            requests: Vec::new(),
            consecutive_failures: 0,
            deadline: Instant::now() + Duration::from_secs(options.time_limit_s),
            progress: super::progress_bar(
                options.progress,
                Some(plan::cycle(&settings, repeat).len() as u64),
            ),
            limitations: Vec::new(),
            metrics_seen: std::collections::BTreeSet::new(),
            first_preemptions: None,
            last_preemptions: None,
            memory_error: None,
            interrupted: None,
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
        let repeat_stop = runner.run_plan(&plan::cycle(&settings, repeat)).err();
        let collected = collect(&mut runner);
        drop(runner);
        let pid = launched.pid();
        let ready_ms = launched.time_to_ready_ms;
        let ready_path = launched.ready_path.to_string();
        let stopped = launched.stop(launch_options.grace);
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
        let record = LaunchRecord {
            repeat,
            directory: directory.display().to_string(),
            pid,
            time_to_ready_ms: ready_ms,
            ready_path,
            stop: stopped.how,
            exit: stopped.exit,
            stop_ms: stopped.stop_ms,
            exited_on_its_own: stopped.exited_on_its_own,
            gpu_release: gpu_release.to_string(),
            gpu_release_detail,
            host_memory_at_ready_bytes: host_at_ready,
        };
        if record.exited_on_its_own {
            repeat_limitations.push(format!(
                "repeat {}: the server exited during the protocol ({}); its log is `{}`",
                repeat + 1,
                record.exit,
                directory.join("log.txt").display()
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
        write_document(&directory.join("probe.json"), &one)?;
        limitations.extend(
            repeat_limitations
                .into_iter()
                .filter(|line| line.starts_with("repeat ")),
        );
        launches.push(record);
        settings_seen.get_or_insert(settings);
        if repeat_stop.is_some() {
            stop = repeat_stop;
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
    write_document(&launch_options.out.join("probe.json"), &combined)?;
    Ok(LaunchRun::Probed(Box::new(ProbeRun {
        report: combined,
        stop,
    })))
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
