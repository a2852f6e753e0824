//! Child processes for `oomdoc run`: spawning, pass-through and line capture of stdout/stderr,
//! signal forwarding, exit codes; and the run's clock.
//!
//! The child stays in oomdoc's process group, so it keeps the terminal (reads stdin, gets job
//! control) and a Ctrl-C typed at the terminal reaches it directly, from the kernel. oomdoc
//! therefore forwards only the signals another process sent to it with `kill` (SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT): a terminal signal is recorded but not sent a second time. A third
//! interrupt kills the child with SIGKILL.
//!
//! The child's bytes go to oomdoc's own stdout/stderr as they arrive, unchanged (this module
//! writes them directly: they are the child's output, not an oomdoc report), and each complete
//! line is sent to the caller with the time it arrived.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use signal_hook::iterator::exfiltrator::origin::WithOrigin;
use signal_hook::iterator::{Handle, SignalsInfo};
use signal_hook::low_level::siginfo::Cause;

/// The longest line kept whole; a longer run of bytes without a newline (a progress bar
/// redrawn with `\r`) is cut here.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Child events (output lines, exit) queued for the main loop at most.
const EVENTS_IN_FLIGHT: usize = 16;

/// The run's clock: milliseconds since the child was about to start, and wall time.
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    start: Instant,
    started_at: SystemTime,
}

impl RunClock {
    /// Starts the clock now.
    pub fn start() -> Self {
        RunClock {
            start: Instant::now(),
            started_at: SystemTime::now(),
        }
    }

    /// Milliseconds since the start.
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The start, RFC 3339 UTC with milliseconds.
    pub fn started_at(&self) -> String {
        rfc3339(self.started_at)
    }

    /// Now, RFC 3339 UTC with milliseconds.
    pub fn now_rfc3339(&self) -> String {
        rfc3339(SystemTime::now())
    }

    /// The time `ms` milliseconds after the start, RFC 3339 UTC with milliseconds.
    pub fn at_rfc3339(&self, ms: u64) -> String {
        rfc3339(self.started_at + Duration::from_millis(ms))
    }

    /// The start as `YYYYMMDDTHHMMSSZ`, for default directory names.
    pub fn started_compact(&self) -> String {
        chrono::DateTime::<chrono::Utc>::from(self.started_at)
            .format("%Y%m%dT%H%M%SZ")
            .to_string()
    }
}

fn rfc3339(time: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Which of the child's streams a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// The exit code, when it exited by itself.
    pub code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
}

impl ExitInfo {
    /// The shell's convention: the code, or 128+N when killed by signal N.
    pub fn shell_code(&self) -> i32 {
        match (self.code, self.signal) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => 255,
        }
    }
}

/// A signal oomdoc received during the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalEvent {
    /// Its number.
    pub signal: i32,
    /// When, ms since start.
    pub t_ms: u64,
    /// Sent by the kernel (a terminal: Ctrl-C, hang-up) rather than by a process.
    pub from_terminal: bool,
    /// Sent on to the child.
    pub forwarded: bool,
}

/// What happens to the child, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEvent {
    /// One or more complete lines of one stream, each ending in `\n` (a line cut at
    /// [`MAX_LINE_BYTES`] or left unterminated at the end gets one added).
    Lines {
        /// Which stream.
        stream: Stream,
        /// The bytes as written, plus any added newline.
        bytes: Vec<u8>,
        /// When the lines were complete, ms since start.
        t_ms: u64,
    },
    /// A stream reached its end (every writer closed it).
    Closed(Stream),
    /// The child ended.
    Exited(ExitInfo),
    /// oomdoc received a signal.
    Signal(SignalEvent),
}

/// Errors of spawning and following a child.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The program does not exist (shell code 127).
    #[error("command `{program}` not found")]
    NotFound {
        /// The program as given.
        program: String,
    },
    /// The program is not executable (shell code 126).
    #[error("command `{program}` cannot be executed: permission denied")]
    PermissionDenied {
        /// The program as given.
        program: String,
    },
    /// Another failure to start.
    #[error("cannot start `{program}`")]
    Spawn {
        /// The program as given.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Setting up pipes, threads or signal handlers failed.
    #[error("cannot set up the child's {what}")]
    Setup {
        /// Which part.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
}

impl ProcessError {
    /// The code a shell would exit with: 127 not found, 126 not executable.
    pub fn shell_code(&self) -> i32 {
        match self {
            ProcessError::PermissionDenied { .. } => 126,
            _ => 127,
        }
    }
}

/// What [`RunningChild::next_event`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// An event.
    Event(ChildEvent),
    /// Nothing within the timeout.
    Idle,
    /// Nothing will come any more.
    Done,
}

/// A child being followed.
#[derive(Debug)]
pub struct RunningChild {
    pid: u32,
    events: Receiver<ChildEvent>,
    signals: Handle,
    signal_thread: Option<JoinHandle<()>>,
    received: Arc<Mutex<Vec<SignalEvent>>>,
}

impl RunningChild {
    /// The child's PID.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The next event, waiting at most `timeout`.
    pub fn next_event(&self, timeout: Duration) -> Next {
        match self.events.recv_timeout(timeout) {
            Ok(event) => Next::Event(event),
            Err(RecvTimeoutError::Timeout) => Next::Idle,
            Err(RecvTimeoutError::Disconnected) => Next::Done,
        }
    }

    /// Stops listening for signals (the default actions are not restored: oomdoc is about to
    /// exit) and returns every signal received. The list is complete even when the child died
    /// of a forwarded signal before its [`ChildEvent::Signal`] reached the channel.
    pub fn close(mut self) -> Vec<SignalEvent> {
        self.signals.close();
        if let Some(thread) = self.signal_thread.take() {
            let _ = thread.join();
        }
        std::mem::take(&mut *self.received.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Spawns `argv` with `env` added to oomdoc's environment, stdin inherited, stdout and stderr
/// piped through. Signal handlers are installed before the spawn, so no signal is lost.
pub fn spawn(
    argv: &[String],
    env: &[(String, OsString)],
    clock: RunClock,
) -> Result<RunningChild, ProcessError> {
    spawn_with(argv, env, clock, false)
}

/// [`spawn`], or with `detached` a server that oomdoc stops itself (`probe --launch`): in its
/// own process group (a stop reaches every worker it forks, a terminal's Ctrl-C does not
/// reach it), stdin closed, and its output only recorded, not passed through.
pub fn spawn_with(
    argv: &[String],
    env: &[(String, OsString)],
    clock: RunClock,
    detached: bool,
) -> Result<RunningChild, ProcessError> {
    let program = argv.first().cloned().unwrap_or_default();
    // Bounded: if oomdoc falls behind, the readers wait and the child's writes block, rather
    // than oomdoc growing without limit. An event holds the lines of one 64 KiB read, or a
    // line cut at `MAX_LINE_BYTES` (a child printing one endless line): 16 events keep at most
    // ~1 MiB of ordinary output, ~16 MiB of the endless kind, in flight.
    let (sender, events) = std::sync::mpsc::sync_channel::<ChildEvent>(EVENTS_IN_FLIGHT);
    let child_pid = Arc::new(AtomicU32::new(0));
    let exited = Arc::new(AtomicBool::new(false));

    let mut signals =
        SignalsInfo::<WithOrigin>::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT]).map_err(|source| {
            ProcessError::Setup {
                what: "signal handlers",
                source,
            }
        })?;
    let signals_handle = signals.handle();

    let mut command = Command::new(&program);
    command
        .args(argv.iter().skip(1))
        .stdin(if detached {
            Stdio::null()
        } else {
            Stdio::inherit()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if detached {
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            signals_handle.close();
            return Err(match error.kind() {
                std::io::ErrorKind::NotFound => ProcessError::NotFound { program },
                std::io::ErrorKind::PermissionDenied => ProcessError::PermissionDenied { program },
                _ => ProcessError::Spawn {
                    program,
                    source: error,
                },
            });
        }
    };
    let pid = child.id();
    child_pid.store(pid, Ordering::SeqCst);

    let received: Arc<Mutex<Vec<SignalEvent>>> = Arc::default();
    let signal_thread = {
        let sender = sender.clone();
        let received = Arc::clone(&received);
        let child_pid = Arc::clone(&child_pid);
        let exited = Arc::clone(&exited);
        std::thread::Builder::new()
            .name("oomdoc-signals".into())
            .spawn(move || {
                let mut interrupts = 0u32;
                for origin in signals.forever() {
                    let signal = origin.signal;
                    let from_terminal = matches!(origin.cause, Cause::Kernel);
                    interrupts += 1;
                    let pid = child_pid.load(Ordering::SeqCst);
                    let alive = pid != 0 && !exited.load(Ordering::SeqCst);
                    let mut event = SignalEvent {
                        signal,
                        t_ms: clock.now_ms(),
                        from_terminal,
                        forwarded: false,
                    };
                    // Noted before forwarding: the child may die of it at once.
                    let mut list = received.lock().unwrap_or_else(PoisonError::into_inner);
                    if alive && interrupts >= 3 {
                        event.forwarded = send_signal(pid, signal_hook::consts::SIGKILL);
                    } else if alive && !from_terminal {
                        event.forwarded = send_signal(pid, signal);
                    }
                    list.push(event);
                    drop(list);
                    // Never block here: `close` joins this thread, and the list above is
                    // complete anyway; the event only makes the record update at once.
                    let _ = sender.try_send(ChildEvent::Signal(event));
                }
            })
            .map_err(|source| ProcessError::Setup {
                what: "signal thread",
                source,
            })?
    };

    if let Some(stdout) = child.stdout.take() {
        start_reader(stdout, Stream::Stdout, sender.clone(), clock, !detached)?;
    }
    if let Some(stderr) = child.stderr.take() {
        start_reader(stderr, Stream::Stderr, sender.clone(), clock, !detached)?;
    }
    {
        let exited = Arc::clone(&exited);
        std::thread::Builder::new()
            .name("oomdoc-wait".into())
            .spawn(move || {
                let info = match child.wait() {
                    Ok(status) => exit_info(status),
                    Err(_) => ExitInfo {
                        code: None,
                        signal: None,
                    },
                };
                exited.store(true, Ordering::SeqCst);
                let _ = sender.send(ChildEvent::Exited(info));
            })
            .map_err(|source| ProcessError::Setup {
                what: "wait thread",
                source,
            })?;
    }
    Ok(RunningChild {
        pid,
        events,
        signals: signals_handle,
        signal_thread: Some(signal_thread),
        received,
    })
}

fn exit_info(status: std::process::ExitStatus) -> ExitInfo {
    use std::os::unix::process::ExitStatusExt;
    ExitInfo {
        code: status.code(),
        signal: status.signal(),
    }
}

fn send_signal(pid: u32, signal: i32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    let Some(signal) = rustix::process::Signal::from_named_raw(signal) else {
        return false;
    };
    rustix::process::kill_process(pid, signal).is_ok()
}

fn start_reader(
    mut pipe: impl Read + Send + 'static,
    stream: Stream,
    sender: SyncSender<ChildEvent>,
    clock: RunClock,
    echo: bool,
) -> Result<(), ProcessError> {
    std::thread::Builder::new()
        .name(match stream {
            Stream::Stdout => "oomdoc-stdout".into(),
            Stream::Stderr => "oomdoc-stderr".into(),
        })
        .spawn(move || {
            let mut buffer = vec![0u8; 64 * 1024];
            let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
            let mut pass_through = echo;
            loop {
                let read = match pipe.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(read) => read,
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let chunk = &buffer[..read];
                let mut reader_gone = false;
                if pass_through {
                    // A closed terminal on our side must not stop the recording; a pipe whose
                    // reader exited (`oomdoc run -- cmd | head`) ends this stream, as in a shell
                    // pipeline: the child then sees its output closed instead of running on
                    // unread (and filling the log).
                    match write_through(stream, chunk) {
                        Ok(()) => {}
                        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
                            reader_gone = true;
                        }
                        Err(_) => pass_through = false,
                    }
                }
                let lines = splitter.push(chunk);
                if !lines.is_empty()
                    && sender
                        .send(ChildEvent::Lines {
                            stream,
                            bytes: lines,
                            t_ms: clock.now_ms(),
                        })
                        .is_err()
                {
                    return;
                }
                if reader_gone {
                    break;
                }
            }
            drop(pipe);
            if let Some(line) = splitter.finish() {
                let _ = sender.send(ChildEvent::Lines {
                    stream,
                    bytes: line,
                    t_ms: clock.now_ms(),
                });
            }
            let _ = sender.send(ChildEvent::Closed(stream));
        })
        .map_err(|source| ProcessError::Setup {
            what: "output reader",
            source,
        })?;
    Ok(())
}

fn write_through(stream: Stream, bytes: &[u8]) -> std::io::Result<()> {
    match stream {
        Stream::Stdout => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(bytes)?;
            stdout.flush()
        }
        Stream::Stderr => {
            let mut stderr = std::io::stderr().lock();
            stderr.write_all(bytes)?;
            stderr.flush()
        }
    }
}

/// Cuts a byte stream into complete lines, holding back an incomplete last line. Every line
/// given out ends in `\n`: one longer than the limit is cut and gets a `\n`, as does an
/// unterminated last line.
#[derive(Debug, Clone)]
pub struct LineSplitter {
    pending: Vec<u8>,
    max_line: usize,
}

impl LineSplitter {
    /// A splitter cutting lines longer than `max_line` bytes.
    pub fn new(max_line: usize) -> Self {
        LineSplitter {
            pending: Vec::new(),
            max_line: max_line.max(1),
        }
    }

    /// Adds bytes; returns the complete lines they make, concatenated (empty if none).
    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut lines = Vec::new();
        match memchr::memrchr(b'\n', bytes) {
            Some(last) => {
                lines.reserve(self.pending.len() + last + 1);
                lines.append(&mut self.pending);
                lines.extend_from_slice(&bytes[..=last]);
                self.pending.extend_from_slice(&bytes[last + 1..]);
            }
            None => self.pending.extend_from_slice(bytes),
        }
        while self.pending.len() >= self.max_line {
            let rest = self.pending.split_off(self.max_line);
            lines.append(&mut self.pending);
            lines.push(b'\n');
            self.pending = rest;
        }
        lines
    }

    /// The incomplete last line with a `\n` added, if any.
    pub fn finish(mut self) -> Option<Vec<u8>> {
        if self.pending.is_empty() {
            return None;
        }
        self.pending.push(b'\n');
        Some(self.pending)
    }
}

/// Names of environment variables that shape GPU memory use and device selection:
/// recorded, values redacted by the caller.
const RELEVANT_NAMES: &[&str] = &[
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "OMP_NUM_THREADS",
    "TOKENIZERS_PARALLELISM",
    "WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
];

/// Prefixes of relevant variables (engines, Hugging Face, NCCL, PyTorch).
const RELEVANT_PREFIXES: &[&str] = &[
    "VLLM_",
    "SGLANG_",
    "SGL_",
    "HF_",
    "HUGGING_FACE_",
    "TRANSFORMERS_",
    "NCCL_",
    "TORCH_",
    "PYTORCH_",
    "CUDA_",
    "NVSHMEM_",
    "LLAMA_ARG_",
    "OLLAMA_",
    "TGI_",
    "MAX_BATCH_",
    "OOMDOC_",
];

/// Whether a variable is recorded in the preflight.
pub fn is_relevant_env(name: &str) -> bool {
    RELEVANT_NAMES.contains(&name)
        || RELEVANT_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

/// Variables of the shell session or terminal, which differ between two launches of the same
/// job and say nothing about it (left out of the other variables' digests).
const SESSION_NAMES: &[&str] = &[
    "_",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "TERM",
    "COLORTERM",
    "COLUMNS",
    "LINES",
    "DISPLAY",
    "WINDOWID",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "WINDOW",
    "PS1",
    "PS2",
    "PS4",
    "PROMPT_COMMAND",
    "HISTFILE",
    "HISTSIZE",
    "HISTFILESIZE",
    "HISTCONTROL",
    "LS_COLORS",
    "LSCOLORS",
    "LESSOPEN",
    "LESSCLOSE",
    "MAIL",
    "GPG_TTY",
    "INVOCATION_ID",
    "JOURNAL_STREAM",
    "DBUS_SESSION_BUS_ADDRESS",
    "SECURITYSESSIONID",
    "WT_SESSION",
    "MOTD_SHOWN",
];
const SESSION_PREFIXES: &[&str] = &[
    "SSH_",
    "XDG_",
    "TERM_",
    "VSCODE_",
    "KITTY_",
    "ITERM_",
    "WEZTERM_",
    "KONSOLE_",
    "GNOME_",
    "LC_TERMINAL",
    "BASH_FUNC_",
    "ALACRITTY_",
];

/// The variables neither recorded as relevant nor belonging to the shell session, unredacted:
/// the record keeps only a digest of each, so `diff` can name one that changed.
pub fn other_environment() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            let session = SESSION_NAMES.contains(&name.as_str())
                || SESSION_PREFIXES
                    .iter()
                    .any(|prefix| name.starts_with(prefix));
            (!session && !is_relevant_env(&name))
                .then(|| (name, value.to_string_lossy().into_owned()))
        })
        .collect()
}

/// The relevant variables of oomdoc's environment (which the child inherits), unredacted.
pub fn relevant_environment() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            is_relevant_env(&name).then(|| (name, value.to_string_lossy().into_owned()))
        })
        .collect()
}

/// The home directory and user name, for redaction.
pub fn local_identity() -> (Option<String>, Option<String>) {
    let home = std::env::var("HOME").ok().filter(|home| !home.is_empty());
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|user| !user.is_empty());
    (home, user)
}

/// `/proc/PID/cgroup` of a host process; `None` when the process is gone or unreadable.
pub fn cgroup_of(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()
}

/// The node name for dcgm-exporter's `Hostname` label: `NODE_NAME` (set from the downward
/// API in a DaemonSet), else the kernel's host name.
pub fn node_name() -> String {
    std::env::var(crate::env_vars::NODE_NAME)
        .ok()
        .filter(|name| !name.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|name| name.trim().to_string())
        })
        .unwrap_or_default()
}

/// Whether oomdoc runs inside a container (Docker's or Podman's marker file).
pub fn in_container() -> bool {
    Path::new("/.dockerenv").exists() || Path::new("/run/.containerenv").exists()
}

/// The current directory, if readable.
pub fn current_dir() -> Option<PathBuf> {
    std::env::current_dir().ok()
}

/// The `sitecustomize.py` that `--torch-snapshot` puts first on the child's `PYTHONPATH`.
pub const TORCH_SNAPSHOT_SITECUSTOMIZE: &str = include_str!("torch_snapshot_sitecustomize.py");

/// Directory inside the run directory that holds the generated `sitecustomize.py`.
pub const PYTHON_HOOK_DIR: &str = ".oomdoc-python";

/// Writes the `--torch-snapshot` hook into `run_dir` and returns the directory to put first on
/// `PYTHONPATH`.
///
/// The directory is made fresh every time and holds only oomdoc's file: whatever was there (a
/// planted `json.py` or `usercustomize.py` that Python would import first, a symlink) is
/// removed without following links, and `sitecustomize.py` is created new (`O_EXCL`: never
/// written through a link).
pub fn install_torch_hook(run_dir: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let directory = run_dir.join(PYTHON_HOOK_DIR);
    remove_owned(&directory)?;
    std::fs::DirBuilder::new().mode(0o755).create(&directory)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(directory.join("sitecustomize.py"))?;
    file.write_all(TORCH_SNAPSHOT_SITECUSTOMIZE.as_bytes())?;
    Ok(directory)
}

/// Removes a path oomdoc owns without following links: a directory with what it holds, a
/// file or a symlink itself (never its target). A missing path is fine.
pub fn remove_owned(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}

/// Keeps oomdoc alive past `RLIMIT_FSIZE` (`ulimit -f`): `SIGXFSZ` would kill it with the
/// child still running and the record half-written; with a handler installed, a write past the
/// limit fails with `EFBIG` instead, which the caller reports. A handler (not `SIG_IGN`) is
/// reset by `exec`, so the child keeps the default behaviour.
pub fn survive_file_size_limit() -> std::io::Result<()> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGXFSZ, flag).map(|_| ())
}

/// `PYTHONPATH` with `first` in front of oomdoc's own value.
pub fn python_path_with(first: &Path) -> OsString {
    let mut value = OsString::from(first.as_os_str());
    if let Some(existing) = std::env::var_os("PYTHONPATH").filter(|value| !value.is_empty()) {
        value.push(":");
        value.push(existing);
    }
    value
}

/// CPU time oomdoc has used so far (all its threads, user + system), ms, from `/proc/self/stat`
/// (`utime` and `stime`, in USER_HZ ticks: 100 per second on Linux).
pub fn own_cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // `pid (comm) state ppid …`: fields after the command name, which may hold spaces.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after `(comm)`.
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    Some((user + system) * 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitter_keeps_lines_whole() {
        let mut splitter = LineSplitter::new(8);
        assert_eq!(splitter.push(b"ab"), b"");
        assert_eq!(splitter.push(b"c\nde\nf"), b"abc\nde\n");
        assert_eq!(splitter.push(b"ghijklmno"), b"fghijklm\n");
        assert_eq!(splitter.finish(), Some(b"no\n".to_vec()));
        assert_eq!(LineSplitter::new(8).finish(), None);
    }

    #[test]
    fn shell_exit_codes() {
        let exited = ExitInfo {
            code: Some(3),
            signal: None,
        };
        assert_eq!(exited.shell_code(), 3);
        let killed = ExitInfo {
            code: None,
            signal: Some(9),
        };
        assert_eq!(killed.shell_code(), 137);
        assert_eq!(
            ProcessError::NotFound {
                program: "x".into()
            }
            .shell_code(),
            127
        );
    }

    #[test]
    fn own_cpu_time_is_readable() {
        let mut spin = 0u64;
        for i in 0..5_000_000u64 {
            spin = spin.wrapping_add(i * i);
        }
        assert!(spin > 0);
        assert!(own_cpu_ms().is_some_and(|ms| ms >= 0.0));
    }

    #[test]
    fn relevant_names() {
        for name in [
            "CUDA_VISIBLE_DEVICES",
            "VLLM_USE_V1",
            "HF_TOKEN",
            "NCCL_DEBUG",
            "PYTORCH_CUDA_ALLOC_CONF",
            "OMP_NUM_THREADS",
        ] {
            assert!(is_relevant_env(name), "{name}");
        }
        for name in ["PATH", "HOME", "USER", "LS_COLORS", "SSH_AUTH_SOCK"] {
            assert!(!is_relevant_env(name), "{name}");
        }
    }
}
