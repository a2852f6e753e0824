//! Runs a command under oomdoc's host-memory sampler and prints what it saw as JSON: the host
//! timeline (RSS of the command's process tree, its memory cgroup before and after) and the
//! host OOM-kill verdict. A stand-in until `oomdoc run` records host memory itself; used by
//! `tests/device/host/run.sh` (a real cgroup OOM kill) and `scripts/bench_host_sampler.sh`
//! (the sampler's CPU cost).
//!
//! Usage: `host_watch [--interval-ms N] [--samples] -- COMMAND [ARGS…]`. The command inherits
//! this process's cgroup, stdin, stdout and stderr; the JSON goes to stdout after it ends
//! (`--samples` includes every reading).

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use oomdoc::analyze::host_oom;
use oomdoc::model::host::ChildEnd;
use oomdoc::source::host_memory::{HostSampler, ProcHost, DEFAULT_INTERVAL};
use oomdoc::source::process::{own_cpu_ms, RunClock};

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "host_watch: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let mut args = std::env::args().skip(1);
    let mut interval = DEFAULT_INTERVAL;
    let mut keep_samples = false;
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--interval-ms" => {
                let value = args.next().ok_or("`--interval-ms` needs a number")?;
                let ms: u64 = value.parse().ok().filter(|ms| *ms > 0).ok_or(format!(
                    "`--interval-ms` needs a positive number, not `{value}`"
                ))?;
                interval = Duration::from_millis(ms);
            }
            "--samples" => keep_samples = true,
            "--" => {
                command.extend(args.by_ref());
            }
            other => {
                return Err(format!(
                    "unexpected argument `{other}`; put the command after `--`"
                ))
            }
        }
    }
    let (program, rest) = command
        .split_first()
        .ok_or("no command given; usage: host_watch [--interval-ms N] -- COMMAND [ARGS…]")?;
    let clock = RunClock::start();
    let cpu_before = own_cpu_ms();
    let sampler = HostSampler::start(
        Box::new(ProcHost::default()),
        clock,
        interval,
        std::process::id(),
    );
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(rest)
        .spawn()
        .map_err(|error| format!("cannot start `{program}`: {error}"))?;
    sampler.set_root(child.id());
    let status = child
        .wait()
        .map_err(|error| format!("cannot wait for `{program}`: {error}"))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut timeline = sampler.stop();
    let cpu_ms = match (cpu_before, own_cpu_ms()) {
        (Some(before), Some(after)) => Some(after - before),
        _ => None,
    };
    let end = ChildEnd {
        code: status.code(),
        signal: status.signal(),
    };
    let finding = host_oom::judge(end, &timeline, &[]);
    let peak_rss = timeline.peak_rss();
    let sample_count = timeline.samples.len();
    if !keep_samples {
        timeline.samples.clear();
    }
    let report = serde_json::json!({
        "end": end,
        "finding": finding,
        "sample_count": sample_count,
        "interval_ms": timeline.interval_ms,
        "peak_tree_rss_bytes": peak_rss.map(|sample| sample.tree_rss_bytes),
        "peak_processes": peak_rss.map(|sample| sample.processes),
        "wall_ms": wall_ms,
        // CPU of this whole process (the sampler thread and a main thread blocked in `wait`).
        "host_watch_cpu_ms": cpu_ms,
        "timeline": timeline,
    });
    let text = serde_json::to_string_pretty(&report).map_err(|error| error.to_string())?;
    writeln!(std::io::stdout(), "{text}").map_err(|error| error.to_string())?;
    Ok(ExitCode::from(
        u8::try_from(status.code().unwrap_or(128 + status.signal().unwrap_or(0))).unwrap_or(255),
    ))
}
