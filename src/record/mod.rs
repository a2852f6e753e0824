//! The recorder of `oomdoc run`: preflight (inventory, environment, redacted), then the child
//! with its output passed through and written to `DIR/log.txt`, a sampler thread on device
//! memory, the log followed live by the explain machinery, and `DIR/run.json` rewritten
//! atomically every 2 s, on each new phase or OOM, and at the end. Format:
//! `docs/run-record.md`.
//!
//! Above the pipeline, like `cli`: it does I/O through `source`, analyses with `analyze` and
//! writes with `render`. `cli/commands/run.rs` parses the arguments and prints the summary.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use crate::analyze::run_explain::LiveExplain;
use crate::analyze::timeline_memory::{attribute, phase_spans, LineClock};
use crate::error::HintedError;
use crate::model::explain::{ContextBlock, ContextLine, ExplainReport};
use crate::model::gpu::GpuUuid;
use crate::model::host::ChildEnd;
use crate::model::machine::Inventory;
use crate::model::run::{
    DeviceTimeline, HostInfo, LogInfo, MemoryRecord, OomEvent, Preflight, ReceivedSignal,
    RunRecord, RunStatus, TorchSnapshotRecord, LOG_FILE, RECORD_FILE, TORCH_SNAPSHOT_FILE,
};
use crate::redact::Redactor;
use crate::render::run::{summary, Markup};
use crate::source::file::write_file_atomically;
use crate::source::gpu::{GpuError, GpuSource};
use crate::source::process::{self, ChildEvent, ExitInfo, Next, RunClock, Stream};
use crate::source::sampler::{Sampler, SamplerConfig, SamplerState};

mod directory;
mod host;
pub mod runs;

use directory::{prepare_directory, RunLock};
pub use host::HostOptions;
use host::HostRecorder;

/// What to record and how (the options of `oomdoc run`).
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Directory for the record; `None`: `oomdoc-run-<UTC time>` in the current directory.
    pub out: Option<PathBuf>,
    /// Reuse `out` when it holds an earlier oomdoc run.
    pub force: bool,
    /// Device memory readings per second (per device).
    pub sample_rate: f64,
    /// A recording to read GPU facts from instead of NVML (an empty path means NVML).
    pub gpu_from: Option<PathBuf>,
    /// For Python children: record PyTorch memory history and dump a snapshot on OOM.
    pub torch_snapshot: bool,
    /// Log lines kept before each OOM in the record.
    pub context_lines: u64,
    /// The command and its arguments.
    pub command: Vec<String>,
    /// A server oomdoc stops itself (`probe --launch`): own process group, stdin closed,
    /// output recorded but not passed through.
    pub detached: bool,
    /// Told the child's process id once it started (`probe --launch` waits for it).
    pub on_spawn: Option<std::sync::mpsc::SyncSender<u32>>,
}

/// Where the recorder says what went wrong while the child runs (it never stops for it).
pub trait Diagnostics {
    /// A problem the run goes on after (a failed write of the log or the record).
    fn warn(&mut self, message: &str);
    /// A failure of the run itself (the command could not start; the last record failed).
    fn error(&mut self, error: &anyhow::Error);
}

/// A finished recording: the record as written, the directory (still locked) and the exit code
/// to pass on (the child's; 128+N when killed by signal N; 127/126 when it could not start).
pub struct Recorded {
    /// The run directory.
    pub directory: PathBuf,
    /// The exit code oomdoc passes on.
    pub code: i32,
    state: RunState,
    /// Held until the summary is written: a second run on the same directory is refused.
    _lock: RunLock,
}

impl Recorded {
    /// The record as written to `run.json`.
    pub fn record(&self) -> &RunRecord {
        &self.state.record
    }

    /// The `run.json` document (redacted), for `--json`.
    pub fn document(&self) -> anyhow::Result<Vec<u8>> {
        self.state.document()
    }

    /// The closing summary, redacted once more as a whole (it names paths and limitations).
    pub fn summary(&self, markup: Markup) -> String {
        let shown = self.directory.display().to_string();
        self.state
            .redactor
            .text(&summary(&self.state.record, &shown, markup))
    }
}

/// How often the record is rewritten while the child runs.
const RECORD_EVERY_MS: u64 = 2000;
/// Least time between two explain refreshes (and rewrites caused by new phases or OOMs).
const RECORD_MIN_GAP_MS: u64 = 200;
/// How long to wait for the output pipes to close once the child has exited (a descendant may
/// keep them open).
const PIPE_GRACE_MS: u64 = 2000;
/// Compaction window of the memory timeline.
const WINDOW_MS: u64 = 100;
/// Points kept per device before the compaction window doubles (about 0.5 MB of JSON).
const MAX_POINTS: usize = 20_000;
/// Period of inventory reads for per-process memory.
const INVENTORY_EVERY_MS: u64 = 1000;
/// Memory history entries `--torch-snapshot` asks PyTorch to keep.
const TORCH_MAX_ENTRIES: u32 = 100_000;

/// Records one launch: preflight, the child followed to its end, `run.json` written all
/// along. A command that cannot start is recorded too (status `spawn_failed`, said through
/// `diagnostics.error`); only a directory that cannot be prepared is an error.
pub fn record(args: RecordOptions, output: &mut dyn Diagnostics) -> anyhow::Result<Recorded> {
    record_with_host(args, &HostOptions::default(), output)
}

/// [`record`] with host memory sampled as `host` says (`--no-host-memory`, a replay).
pub fn record_with_host(
    args: RecordOptions,
    host: &HostOptions,
    output: &mut dyn Diagnostics,
) -> anyhow::Result<Recorded> {
    if !(args.sample_rate >= 0.001 && args.sample_rate <= 100_000.0) {
        return Err(HintedError::new(
            format!("`--sample-rate {}` is out of range", args.sample_rate),
            "use a rate between 0.001 and 100000 readings per second (default 1000)",
        )
        .into());
    }
    // A bad replay file is a usage error, found before anything is written.
    if let Some(path) = host.replay.as_deref().filter(|_| host.enabled) {
        crate::source::host_memory::ReplayHost::open(path)?;
    }
    // Held until oomdoc exits: a second run on the same directory is refused.
    let (directory, lock) = prepare_directory(args.out.as_deref(), args.force)?;
    let (home, user) = process::local_identity();
    let redactor = Redactor::new(home, user);

    let mut limitations: Vec<String> = Vec::new();
    let environment = process::relevant_environment();
    let cuda_visible_set = environment.contains_key(crate::env_vars::CUDA_VISIBLE_DEVICES);
    let preflight_env = redactor.env(&environment);

    // Preflight: the inventory before the start.
    let (gpu_source, inventory, memory_reason) = match open_gpu_source(args.gpu_from.as_deref()) {
        Ok(mut source) => match source.inventory() {
            Ok(inventory) => (Some(source), Some(inventory), None),
            Err(error) => (None, None, Some(error.to_string())),
        },
        Err(error) => (None, None, Some(error.to_string())),
    };
    let inventory = inventory.map(|inventory| redact_inventory(inventory, &redactor));
    if let Some(inventory) = &inventory {
        for limitation in &inventory.limitations {
            limitations.push(format!("inventory: {limitation}"));
        }
        if inventory.devices.iter().any(|device| {
            device
                .processes
                .iter()
                .any(|process| process.used_bytes.is_none())
        }) {
            limitations.push("per-process memory is not available for every process".to_owned());
        }
    }
    let sampled = inventory
        .as_ref()
        .map(|inventory| sampled_devices(inventory, cuda_visible_set, &mut limitations))
        .unwrap_or_default();
    let (gpu_source, memory_reason) = match (gpu_source, memory_reason) {
        (Some(_), None) if sampled.is_empty() => {
            (None, Some("the inventory lists no GPU".to_owned()))
        }
        other => other,
    };
    if let Some(reason) = &memory_reason {
        limitations.push(format!("no memory timeline: {reason}"));
    }

    let log_path = directory.join(LOG_FILE);
    // New (`O_EXCL`): never written through a link planted in the directory.
    let log_file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&log_path)
        .with_context(|| format!("cannot create `{}`", log_path.display()))?;
    let mut log = BufWriter::new(log_file);

    let mut child_env: Vec<(String, OsString)> = Vec::new();
    if args.torch_snapshot {
        let hook = process::install_torch_hook(&directory).with_context(|| {
            format!(
                "cannot write the PyTorch hook into `{}`",
                directory.display()
            )
        })?;
        let absolute = std::fs::canonicalize(&directory).unwrap_or_else(|_| directory.clone());
        child_env.push(("PYTHONPATH".into(), process::python_path_with(&hook)));
        child_env.push((
            "OOMDOC_TORCH_SNAPSHOT_PATH".into(),
            absolute.join(TORCH_SNAPSHOT_FILE).into_os_string(),
        ));
        child_env.push((
            "OOMDOC_TORCH_SNAPSHOT_NOTES".into(),
            absolute.join(TORCH_NOTES_FILE).into_os_string(),
        ));
        child_env.push((
            "OOMDOC_TORCH_SNAPSHOT_MAX_ENTRIES".into(),
            TORCH_MAX_ENTRIES.to_string().into(),
        ));
    }

    let clock = RunClock::start();
    let mut state = RunState {
        directory: directory.clone(),
        record: RunRecord {
            oomdoc_version: env!("CARGO_PKG_VERSION").to_owned(),
            status: RunStatus::Running,
            command: redactor.argv(&args.command),
            cwd: process::current_dir().map(|dir| redactor.text(&dir.to_string_lossy())),
            started_at: clock.started_at(),
            preflight: Preflight {
                inventory: inventory.clone(),
                inventory_error: inventory.is_none().then(|| memory_reason.clone()).flatten(),
                environment: preflight_env,
                other_environment: redactor.env_digests(&process::other_environment()),
                host: HostInfo {
                    hostname_redacted: true,
                    in_container: process::in_container(),
                    os: std::env::consts::OS.to_owned(),
                },
            },
            log: LogInfo {
                file: LOG_FILE.to_owned(),
                ..LogInfo::default()
            },
            memory: MemoryRecord {
                available: gpu_source.is_some(),
                reason: memory_reason,
                source: inventory.as_ref().and_then(|inventory| inventory.source),
                sample_rate_hz: args.sample_rate,
                window_ms: WINDOW_MS,
                ..MemoryRecord::default()
            },
            limitations,
            ..RunRecord::default()
        },
        inventory,
        sampled,
        live: LiveExplain::new(),
        clock: LineClock::new(),
        redactor,
        context: None,
        host: None,
    };
    state.write(None, None)?;
    // Before the child: the cgroup's OOM-kill count before it (issue 17).
    state.host = HostRecorder::start(host, clock)?;

    let sampler = match gpu_source {
        // One recorded moment replayed again and again is no timeline: a peak or a reading count
        // from it would present a replay as a measurement.
        Some(source) if source.is_static() => {
            state.record.memory.available = false;
            state.record.memory.reason = Some(
                "static replay: one recorded moment (`nvidia-smi -q -x`), no timeline or peak"
                    .to_owned(),
            );
            None
        }
        Some(source) => {
            let uuids = state.sampled.clone();
            match Sampler::start(
                source,
                uuids,
                clock,
                SamplerConfig {
                    rate_hz: args.sample_rate,
                    window_ms: WINDOW_MS,
                    inventory_every_ms: INVENTORY_EVERY_MS,
                    max_points: MAX_POINTS,
                },
            ) {
                Ok(sampler) => Some(sampler),
                Err(error) => {
                    state.record.memory.available = false;
                    state.record.memory.reason = Some(format!("cannot start the sampler: {error}"));
                    None
                }
            }
        }
        None => None,
    };

    let child = match process::spawn_with(&args.command, &child_env, clock, args.detached) {
        Ok(child) => child,
        Err(error) => {
            let code = error.shell_code();
            let sampler_state = sampler.map(Sampler::stop);
            if let Some(host) = state.host.take() {
                let end = ChildEnd {
                    code: Some(code),
                    signal: None,
                };
                state.record.host = Some(host.finish(&state.record.phases, end, false));
            }
            state.record.status = RunStatus::SpawnFailed;
            state.record.exit_code = Some(code);
            state.record.ended_at = Some(clock.now_rfc3339());
            state.record.duration_ms = Some(clock.now_ms());
            state.record.limitations.push(error.to_string());
            log.flush()
                .with_context(|| format!("cannot write `{}`", log_path.display()))?;
            state.write(sampler_state.as_ref(), Some(clock.now_ms()))?;
            let error = anyhow::Error::new(error).context(format!(
                "the record of the failed start is in `{}`",
                directory.join(RECORD_FILE).display()
            ));
            output.error(&anyhow::Error::new(HintedError::new(
                format!("{error:#}"),
                "check the command name and `PATH`; put oomdoc's own options before `--`",
            )));
            return Ok(Recorded {
                directory,
                code,
                state,
                _lock: lock,
            });
        }
    };
    if let Some(sampler) = &sampler {
        sampler.set_child_pid(child.pid());
    }
    if let Some(host) = &state.host {
        host.set_child(child.pid());
    }
    if let Some(on_spawn) = &args.on_spawn {
        // The receiver may be gone (the launcher gave up): the recording goes on.
        let _ = on_spawn.try_send(child.pid());
    }

    // Follow the child until it has exited and its pipes are closed.
    let mut failures = WriteFailures::default();
    let mut exit: Option<(ExitInfo, u64)> = None;
    let mut closed = 0;
    let mut last_write = clock.now_ms();
    let mut last_refresh = last_write;
    let mut write_now = false;
    let mut oom_reported = false;
    let mut pipes_left_open = false;
    loop {
        match child.next_event(Duration::from_millis(100)) {
            Next::Event(ChildEvent::Lines {
                stream,
                bytes,
                t_ms,
            }) => {
                if let Err(error) = log.write_all(&bytes) {
                    // The child goes on whatever happens to our files: never abandon it.
                    failures.note(
                        &mut *output,
                        format!("cannot write `{}`: {error}", log_path.display()),
                    );
                }
                let count = memchr::memchr_iter(b'\n', &bytes).count() as u64;
                let info = &mut state.record.log;
                let first_line = info.lines + 1;
                info.lines += count;
                info.bytes += bytes.len() as u64;
                match stream {
                    Stream::Stdout => info.stdout_lines += count,
                    Stream::Stderr => info.stderr_lines += count,
                }
                state.clock.push(first_line, t_ms);
                state.live.push_lines(&bytes);
                if !oom_reported && state.live.oom_hint() {
                    oom_reported = true;
                    if let Some(sampler) = &sampler {
                        sampler.oom_seen();
                    }
                }
            }
            Next::Event(ChildEvent::Closed(_)) => closed += 1,
            Next::Event(ChildEvent::Exited(info)) => exit = Some((info, clock.now_ms())),
            Next::Event(ChildEvent::Signal(event)) => {
                state.record.interrupted = true;
                state.record.signals_received.push(received_signal(event));
                write_now = true;
            }
            Next::Idle => {}
            Next::Done => break,
        }
        let now = clock.now_ms();
        if let Some((_, exited_at)) = exit {
            if closed >= 2 {
                break;
            }
            if now.saturating_sub(exited_at) > PIPE_GRACE_MS {
                pipes_left_open = true;
                break;
            }
        }
        if now.saturating_sub(last_refresh) >= RECORD_MIN_GAP_MS {
            last_refresh = now;
            write_now |= state.live.refresh();
        }
        if write_now || now.saturating_sub(last_write) >= RECORD_EVERY_MS {
            if let Err(error) = log.flush() {
                failures.note(
                    &mut *output,
                    format!("cannot write `{}`: {error}", log_path.display()),
                );
            }
            let snapshot = sampler.as_ref().map(Sampler::snapshot);
            state.record.duration_ms = Some(now);
            if let Err(error) = state.write(snapshot.as_ref(), None) {
                failures.note(&mut *output, format!("{error:#}"));
            }
            last_write = now;
            write_now = false;
        }
    }
    // The complete list: a signal whose event was still on its way when the child died of it.
    let signals = child.close();
    state.record.interrupted |= !signals.is_empty();
    state.record.signals_received = signals.into_iter().map(received_signal).collect();
    if let Err(error) = log.flush() {
        failures.note(
            output,
            format!("cannot write `{}`: {error}", log_path.display()),
        );
    }

    // The end: final state of everything, written once more.
    state.live.finish();
    if args.context_lines != crate::analyze::explain::CONTEXT_BEFORE {
        match context_from_log(&log_path, state.live.report(), args.context_lines) {
            Ok(context) => state.context = Some(context),
            Err(error) => state.record.limitations.push(format!(
                "cannot re-read `{}` for `--context-lines`: {error}",
                log_path.display()
            )),
        }
    }
    let end_ms = clock.now_ms();
    let sampler_state = sampler.map(Sampler::stop);
    let (info, exit_ms) = exit.unwrap_or((
        ExitInfo {
            code: None,
            signal: None,
        },
        end_ms,
    ));
    let code = info.shell_code();
    if let Some(host) = state.host.take() {
        // The phases as they stand at the end (the open one closed at the end).
        let phases = phase_spans(state.live.marks(), &state.clock, Some(end_ms));
        let end = ChildEnd {
            code: info.code,
            signal: info.signal,
        };
        state.record.host = Some(host.finish(&phases, end, state.record.interrupted));
    }
    state.record.exit_code = Some(code);
    state.record.signal = info.signal;
    state.record.status = if state.record.interrupted {
        RunStatus::Interrupted
    } else if info.signal.is_some() {
        RunStatus::Signaled
    } else {
        RunStatus::Exited
    };
    // The child's own run time: not the wait for pipes a descendant kept open, nor the log
    // re-read after it.
    state.record.ended_at = Some(clock.at_rfc3339(exit_ms));
    state.record.duration_ms = Some(exit_ms);
    if pipes_left_open {
        state.record.limitations.push(format!(
            "the child exited but a process it started kept its output open; output after {:.1} s past the exit is not recorded",
            PIPE_GRACE_MS as f64 / 1000.0
        ));
    }
    if args.torch_snapshot {
        state.record.torch_snapshot = Some(torch_snapshot_record(&directory));
    }
    if let Some(stats) = sampler_state.as_ref().map(|s| s.stats) {
        state.record.memory.sampler = Some(stats);
    }
    state.record.memory.oomdoc_cpu_ms = process::own_cpu_ms();
    state
        .record
        .limitations
        .extend(failures.messages.iter().cloned());
    if let Err(error) = state.write(sampler_state.as_ref(), Some(end_ms)) {
        // The child's code still wins. Say so on stderr, and try a smaller record that at least
        // says how the run ended (a full disk or `ulimit -f` may still leave room for it).
        let record_path = directory.join(RECORD_FILE);
        let message = format!(
            "the record `{}` could not be completed: {error:#}",
            record_path.display()
        );
        state.record.limitations.push(format!(
            "{message}; the memory timeline and the explain details are left out"
        ));
        state.record.explain = None;
        for device in &mut state.record.memory.devices {
            device.samples.clear();
        }
        if let Err(error) = state.persist() {
            output.error(&error.context(format!(
                "{message}; it holds an earlier state of the run, which may say `running`"
            )));
        } else {
            output.warn(&format!(
                "{message}; a shorter record without the memory timeline was written"
            ));
        }
    }

    Ok(Recorded {
        directory,
        code,
        state,
        _lock: lock,
    })
}

fn received_signal(event: process::SignalEvent) -> ReceivedSignal {
    ReceivedSignal {
        signal: event.signal,
        t_ms: event.t_ms,
        forwarded: event.forwarded,
        origin: if event.from_terminal {
            "terminal".to_owned()
        } else {
            "process".to_owned()
        },
    }
}

/// Problems writing the log or the record while the child runs: warned once each, kept as
/// limitations, never fatal (oomdoc must not abandon its child).
#[derive(Debug, Default)]
struct WriteFailures {
    messages: Vec<String>,
}

impl WriteFailures {
    fn note(&mut self, output: &mut dyn Diagnostics, message: String) {
        if !self.messages.contains(&message) {
            output.warn(&message);
            self.messages.push(message);
        }
    }
}

/// File the `--torch-snapshot` hook writes its notes to.
pub(crate) const TORCH_NOTES_FILE: &str = "torch_snapshot.notes.txt";

/// Everything needed to write the record at any moment.
struct RunState {
    directory: PathBuf,
    record: RunRecord,
    inventory: Option<Inventory>,
    sampled: Vec<GpuUuid>,
    live: LiveExplain,
    clock: LineClock,
    redactor: Redactor,
    /// Context blocks rebuilt for `--context-lines` (replacing explain's).
    context: Option<Vec<ContextBlock>>,
    /// The host sampler while the child runs (its last section is then in `record.host`).
    host: Option<HostRecorder>,
}

impl RunState {
    /// The record as written: every string of it through the one redactor, whatever
    /// field it came in by.
    fn document(&self) -> anyhow::Result<Vec<u8>> {
        redacted_document(&self.record, &self.redactor)
    }

    /// Completes the record from the live state and writes it atomically. `end_ms` closes the
    /// open phase at the end of the run.
    fn write(&mut self, sampler: Option<&SamplerState>, end_ms: Option<u64>) -> anyhow::Result<()> {
        let spans = phase_spans(self.live.marks(), &self.clock, end_ms);
        let mut explain = self.live.report().clone();
        if let Some(context) = &self.context {
            explain.context.clone_from(context);
        }
        self.record.ooms = oom_events(&explain, &self.clock, self.inventory.as_ref());
        add_times(&mut explain, &self.clock);
        self.record.explain = Some(explain);
        if let Some(sampler) = sampler {
            self.record.memory.devices = self
                .sampled
                .iter()
                .zip(&sampler.devices)
                .map(|(uuid, state)| {
                    let device = self
                        .inventory
                        .as_ref()
                        .and_then(|inventory| inventory.devices.iter().find(|d| &d.uuid == uuid));
                    let points = state.compactor.points();
                    let peak = state.compactor.peak();
                    let attribution = attribute(&points, peak, &spans);
                    DeviceTimeline {
                        uuid: uuid.clone(),
                        index: device.map(|d| d.index).unwrap_or_default(),
                        cuda_ordinal: device.and_then(|d| d.cuda_ordinal),
                        name: device.map(|d| d.name.clone()).unwrap_or_default(),
                        total_bytes: device.map(|d| d.memory.total_bytes).unwrap_or_default(),
                        baseline_used_bytes: device.map(|d| d.memory.used_bytes),
                        baseline_free_bytes: device.map(|d| d.memory.free_bytes),
                        peak_used_bytes: peak.map(|(_, used)| used.into()),
                        peak_t_ms: peak.map(|(t_ms, _)| t_ms),
                        peak_phase: attribution.peak_phase,
                        peaks_by_phase: attribution.peaks_by_phase,
                        samples: points,
                        window_ms: state.compactor.window_ms(),
                        sample_count: state.compactor.count(),
                        read_errors: state.read_errors,
                        last_error: state.last_error.clone(),
                        processes: state
                            .processes
                            .values()
                            .cloned()
                            .map(|mut process| {
                                process.name = process.name.map(|name| self.redactor.text(&name));
                                process
                            })
                            .collect(),
                    }
                })
                .collect();
            self.record.memory.inventory_at_oom = sampler
                .inventory_at_oom
                .clone()
                .map(|inventory| redact_inventory(inventory, &self.redactor));
        }
        if let Some(host) = &self.host {
            self.record.host = Some(host.snapshot(&spans));
        } else if let Some(host) = &mut self.record.host {
            // The final section: peaks by phase against the final phases.
            let finding = host.finding.take();
            let timeline = std::mem::take(&mut host.timeline);
            let source = std::mem::take(&mut host.source);
            *host = host::host_record(&source, timeline, &spans, finding);
        }
        self.record.phases = spans;
        self.persist()
    }

    /// Writes the record as it is, atomically (a reader never sees half of it).
    fn persist(&self) -> anyhow::Result<()> {
        let bytes = self.document()?;
        let path = self.directory.join(RECORD_FILE);
        write_file_atomically(&path, &bytes)
            .with_context(|| format!("cannot write the record `{}`", path.display()))
    }
}

/// NVML, or the replay file of `--gpu-from` / `OOMDOC_GPU_FROM` (an empty value means NVML).
fn open_gpu_source(gpu_from: Option<&Path>) -> Result<Box<dyn GpuSource>, GpuError> {
    crate::source::gpu::open(
        gpu_from.filter(|path| !path.as_os_str().is_empty()),
        crate::analyze::devices::analyze,
    )
}

/// The devices to sample: those the child can see under `CUDA_VISIBLE_DEVICES` (by CUDA
/// ordinal), else all of them.
fn sampled_devices(
    inventory: &Inventory,
    cuda_visible_set: bool,
    limitations: &mut Vec<String>,
) -> Vec<GpuUuid> {
    let mut visible: Vec<_> = inventory
        .devices
        .iter()
        .filter(|device| device.cuda_ordinal.is_some())
        .collect();
    if cuda_visible_set && !visible.is_empty() {
        visible.sort_by_key(|device| device.cuda_ordinal);
        return visible.iter().map(|device| device.uuid.clone()).collect();
    }
    if cuda_visible_set {
        limitations.push(
            "`CUDA_VISIBLE_DEVICES` matches no device in the inventory; sampling every device"
                .to_owned(),
        );
    }
    inventory
        .devices
        .iter()
        .map(|device| device.uuid.clone())
        .collect()
}

/// Process names (command lines) can hold paths and secrets.
fn redact_inventory(mut inventory: Inventory, redactor: &Redactor) -> Inventory {
    for device in &mut inventory.devices {
        for process in &mut device.processes {
            process.name = process.name.as_deref().map(|name| redactor.text(name));
        }
    }
    inventory
}

/// Adds `t_ms` (when the line arrived) to every explain timeline entry and failure message.
fn add_times(explain: &mut ExplainReport, clock: &LineClock) {
    for event in &mut explain.timeline {
        event.t_ms = clock.t_ms(event.line);
    }
    for message in &mut explain.ooms {
        message.t_ms = clock.t_ms(message.line);
    }
}

/// The GPU OOMs explain found, with their times and devices by UUID.
fn oom_events(
    explain: &ExplainReport,
    clock: &LineClock,
    inventory: Option<&Inventory>,
) -> Vec<OomEvent> {
    explain
        .ooms
        .iter()
        .filter(|message| message.is_gpu_oom)
        .map(|message| {
            let cuda_ordinal = message
                .figures
                .gpu_index
                .or_else(|| crate::analyze::run_explain::cuda_ordinal_in_text(&message.text));
            let device_uuid = cuda_ordinal.and_then(|ordinal| {
                inventory?
                    .devices
                    .iter()
                    .find(|device| device.cuda_ordinal == Some(ordinal))
                    .map(|device| device.uuid.clone())
            });
            let rank = message
                .stream
                .as_deref()
                .and_then(|stream| stream.strip_prefix("rank"))
                .and_then(|digits| digits.parse().ok());
            OomEvent {
                line: message.line,
                t_ms: clock.t_ms(message.line),
                rank,
                gpu_index: cuda_ordinal,
                device_uuid,
            }
        })
        .collect()
}

/// Explain's context blocks with `before` lines before each failure line, read back from the
/// log (explain keeps a fixed number while streaming).
fn context_from_log(
    log_path: &Path,
    explain: &ExplainReport,
    before: u64,
) -> std::io::Result<Vec<ContextBlock>> {
    use std::io::BufRead;
    let failure_lines: Vec<u64> = explain
        .context
        .iter()
        .map(|block| block.failure_line)
        .collect();
    let wanted = |line: u64| {
        failure_lines
            .iter()
            .any(|failure| line < *failure && line.saturating_add(before) >= *failure)
    };
    let mut found: Vec<ContextLine> = Vec::new();
    let reader = std::io::BufReader::new(File::open(log_path)?);
    let mut number = 0u64;
    for line in reader.split(b'\n') {
        let line = line?;
        number += 1;
        if wanted(number) {
            let text = String::from_utf8_lossy(&line);
            let text: String = text.trim_end_matches('\r').chars().take(2000).collect();
            found.push(ContextLine { line: number, text });
        }
        if failure_lines.iter().all(|failure| number >= *failure) {
            break;
        }
    }
    Ok(explain
        .context
        .iter()
        .map(|block| {
            let failure = block.failure_line;
            let before_failure = found.iter().filter(|entry| {
                entry.line < failure && entry.line.saturating_add(before) >= failure
            });
            let from_failure = block.lines.iter().filter(|entry| entry.line >= failure);
            ContextBlock {
                failure_line: failure,
                lines: before_failure.chain(from_failure).cloned().collect(),
            }
        })
        .collect())
}

/// `torch_snapshot.pickle` and `torch_snapshot_rank<N>.pickle` files in the directory, sorted.
fn snapshot_files(directory: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(directory)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.file_name().into_string().ok())
                .filter(|name| name.starts_with("torch_snapshot") && name.ends_with(".pickle"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn torch_snapshot_record(directory: &Path) -> TorchSnapshotRecord {
    let files = snapshot_files(directory);
    let notes: Vec<String> = std::fs::read_to_string(directory.join(TORCH_NOTES_FILE))
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    TorchSnapshotRecord {
        file: files.first().cloned(),
        history_enabled: notes
            .iter()
            .any(|note| note.contains("memory history enabled")),
        files,
        notes,
    }
}

/// The record as written: every string of it through the redactor, whatever field it came in
/// by. Read back into the record type so that the document keeps its field order; when the
/// redactor changed a word the type needs (a user named like an engine, `vllm`), the redacted
/// document is written as it is (keys sorted) rather than losing the record.
fn redacted_document(record: &RunRecord, redactor: &Redactor) -> anyhow::Result<Vec<u8>> {
    let mut value = serde_json::to_value(record)?;
    redactor.value(&mut value);
    Ok(match serde_json::from_value::<RunRecord>(value.clone()) {
        Ok(record) => crate::render::json::to_document(&record)?,
        Err(_) => crate::render::json::to_document(&value)?,
    })
}

#[cfg(test)]
mod document_tests {
    use super::*;

    #[test]
    fn a_user_named_like_the_engine_does_not_lose_the_record() {
        let mut live = LiveExplain::new();
        live.push_lines(b"INFO 11-29 17:00:00 [api_server.py:1] vLLM API server version 0.10.1\n");
        live.finish();
        let record = RunRecord {
            command: vec!["vllm".into(), "serve".into(), "m".into()],
            explain: Some(live.report().clone()),
            ..RunRecord::default()
        };
        let plain = redacted_document(&record, &Redactor::new(None, None)).unwrap();
        let plain: serde_json::Value = serde_json::from_slice(&plain).unwrap();
        assert_eq!(plain["explain"]["engine"]["name"], "vllm");
        let redactor = Redactor::new(Some("/home/vllm".into()), Some("vllm".into()));
        let bytes = redacted_document(&record, &redactor).unwrap();
        let document: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(document["schema_version"], 1);
        assert_eq!(document["command"][0], "[USER]");
        // The engine's name is the user's: redacted, so the typed read-back failed and the
        // redacted document was written as it was.
        assert_eq!(document["explain"]["engine"]["name"], "[USER]");
    }
}
