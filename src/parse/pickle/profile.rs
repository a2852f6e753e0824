//! Where the time of reading one snapshot goes, phase by phase, for people tuning the decoder:
//! with `OOMDOC_PROFILE=1` in the environment each phase's wall and CPU seconds (the CPU of the
//! thread that ran it) and a few counters are printed to stderr when the command ends. Off, a
//! phase costs one relaxed load.
//!
//! Thread CPU time comes from `/proc/thread-self/schedstat` (nanoseconds run on a CPU), and so
//! does the time the thread was ready but waited for a CPU (its second field: a wall clock
//! longer than CPU + wait is time blocked, in a page fault or a read); where it is missing the
//! columns say `-`.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// 0: not read yet, 1: off, 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);
static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());
/// When profiling was first asked about: the phases' start times count from it, so the report
/// shows which phases overlapped and which ran alone (the critical path).
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Counters of the parallel decoder (only counted while profiling).
pub static RESOLVED: AtomicU64 = AtomicU64::new(0);
/// Memo values another thread made, found already decoded in this thread's cache.
pub static RESOLVE_HITS: AtomicU64 = AtomicU64::new(0);
/// Bytes read to decode memo values on demand.
pub static RESOLVED_BYTES: AtomicU64 = AtomicU64::new(0);
/// Memo values another thread made, taken up from what another thread's fold shared.
pub static ADOPTED: AtomicU64 = AtomicU64::new(0);

struct Record {
    name: String,
    /// When the phase began, after `EPOCH`.
    start_ns: u64,
    wall_ns: u64,
    cpu_ns: Option<u64>,
    /// Time the thread waited on a run queue.
    wait_ns: Option<u64>,
    /// The process's resident and peak resident KiB when the phase ended.
    rss_kib: Option<(u64, u64)>,
}

/// Whether `OOMDOC_PROFILE` asks for the breakdown.
pub fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let on = std::env::var("OOMDOC_PROFILE")
                .is_ok_and(|value| !value.is_empty() && value != "0");
            if on {
                EPOCH.get_or_init(Instant::now);
            }
            STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
    }
}

/// Nanoseconds the calling thread has run on a CPU, and has waited on a run queue.
fn thread_cpu_ns() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace();
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// CPU nanoseconds of the whole process (user + system, from `/proc/self/stat`).
fn process_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at its closing parenthesis.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel reports in USER_HZ, 100 a second on Linux.
    Some(ticks * 10_000_000)
}

/// The process's resident and peak resident memory in KiB (`VmRSS`, `VmHWM` of
/// `/proc/self/status`).
fn rss_kib() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|line| line.starts_with(name))?;
        line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// One phase being timed; recorded when dropped.
pub struct Phase {
    name: String,
    start: Instant,
    cpu: Option<(u64, u64)>,
}

/// Starts timing `name` on this thread (`None` when profiling is off).
pub fn phase(name: impl FnOnce() -> String) -> Option<Phase> {
    if !enabled() {
        return None;
    }
    Some(Phase {
        name: name(),
        start: Instant::now(),
        cpu: thread_cpu_ns(),
    })
}

impl Drop for Phase {
    fn drop(&mut self) {
        let wall_ns = self.start.elapsed().as_nanos() as u64;
        let (cpu_ns, wait_ns) = match (self.cpu, thread_cpu_ns()) {
            (Some(start), Some(end)) => (
                Some(end.0.saturating_sub(start.0)),
                Some(end.1.saturating_sub(start.1)),
            ),
            _ => (None, None),
        };
        let epoch = *EPOCH.get_or_init(|| self.start);
        if let Ok(mut records) = RECORDS.lock() {
            records.push(Record {
                name: std::mem::take(&mut self.name),
                start_ns: self.start.saturating_duration_since(epoch).as_nanos() as u64,
                wall_ns,
                cpu_ns,
                wait_ns,
                rss_kib: rss_kib(),
            });
        }
    }
}

/// Adds `n` to `counter` while profiling.
#[inline]
pub fn count(counter: &AtomicU64, n: u64) {
    if STATE.load(Ordering::Relaxed) == 2 {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Prints the phases recorded so far (and the process's CPU so far) to stderr, then forgets
/// them; nothing when profiling is off.
pub fn report() {
    if !enabled() {
        return;
    }
    let mut records = match RECORDS.lock() {
        Ok(mut records) => std::mem::take(&mut *records),
        Err(_) => return,
    };
    // In the order they began (they are recorded as they end).
    records.sort_by_key(|record| record.start_ns);
    let seconds = |ns: u64| ns as f64 / 1e9;
    let mut out = String::from(
        "oomdoc profile (OOMDOC_PROFILE): phase, start s (after profiling began), wall s, thread \
         CPU s, run-queue wait s, RSS and peak RSS MiB at its end\n",
    );
    for record in &records {
        let cpu = record
            .cpu_ns
            .map_or("-".to_string(), |ns| format!("{:.3}", seconds(ns)));
        let wait = record
            .wait_ns
            .map_or("-".to_string(), |ns| format!("{:.3}", seconds(ns)));
        let rss = record.rss_kib.map_or("-".to_string(), |(now, peak)| {
            format!("{:>6} {:>6}", now >> 10, peak >> 10)
        });
        out.push_str(&format!(
            "  {:<34} {:>7.3} {:>8.3} {:>8} {:>8} {}\n",
            record.name,
            seconds(record.start_ns),
            seconds(record.wall_ns),
            cpu,
            wait,
            rss
        ));
    }
    let counter = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    out.push_str(&format!(
        "  memo values decoded on demand: {} ({} bytes read), found in a thread's cache: {}, \
         taken up from another thread's fold: {}\n",
        counter(&RESOLVED),
        counter(&RESOLVED_BYTES),
        counter(&RESOLVE_HITS),
        counter(&ADOPTED)
    ));
    if let Some(epoch) = EPOCH.get() {
        out.push_str(&format!(
            "  wall since profiling began: {:.3} s\n",
            epoch.elapsed().as_secs_f64()
        ));
    }
    if let Some(ns) = process_cpu_ns() {
        out.push_str(&format!(
            "  process CPU so far (10 ms ticks): {:.2} s\n",
            seconds(ns)
        ));
    }
    use std::io::Write;
    // A failed write to stderr has nowhere to be told.
    let _ = std::io::stderr().write_all(out.as_bytes());
}
