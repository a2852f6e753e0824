//! Device memory sampled in a thread while `oomdoc run` waits on its child.
//!
//! Each round reads `GpuSource::memory` for every sampled device (NVML: a few µs each) and hands
//! the reading to a `SampleCompactor`; every `inventory_every_ms`, and once when the log shows an
//! OOM, it takes a full inventory for per-process memory. The thread reads the clock; analyses
//! only see `t_ms` values.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::gpu::GpuSource;
use super::process::RunClock;
use crate::model::gpu::GpuUuid;
use crate::model::machine::Inventory;
use crate::model::run::{ProcessPeak, SamplerStats};
use crate::model::timeline::SampleCompactor;
use crate::model::Bytes;

/// How fast and how compactly to sample.
#[derive(Debug, Clone, Copy)]
pub struct SamplerConfig {
    /// Rounds per second.
    pub rate_hz: f64,
    /// Compaction window.
    pub window_ms: u64,
    /// Period of the slower inventory reads (per-process memory).
    pub inventory_every_ms: u64,
    /// Most points kept per device before the window doubles.
    pub max_points: usize,
}

/// What the sampler has gathered for one device.
#[derive(Debug, Clone)]
pub struct DeviceState {
    /// The device.
    pub uuid: GpuUuid,
    /// Its readings, compacted.
    pub compactor: SampleCompactor,
    /// Failed readings.
    pub read_errors: u64,
    /// The last failure.
    pub last_error: Option<String>,
    /// Highest memory per PID.
    pub processes: BTreeMap<u32, ProcessPeak>,
}

/// Everything the sampler has gathered so far.
#[derive(Debug, Clone, Default)]
pub struct SamplerState {
    /// One per sampled device, in the order given.
    pub devices: Vec<DeviceState>,
    /// Rounds, lateness, CPU cost.
    pub stats: SamplerStats,
    /// The inventory taken when an OOM was reported.
    pub inventory_at_oom: Option<Inventory>,
    /// Inventory reads that failed.
    pub inventory_errors: u64,
}

/// A running sampler thread.
#[derive(Debug)]
pub struct Sampler {
    stop: Arc<AtomicBool>,
    oom_seen: Arc<AtomicBool>,
    child_pid: Arc<AtomicU32>,
    state: Arc<Mutex<SamplerState>>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Starts sampling `uuids` from `source`.
    pub fn start(
        mut source: Box<dyn GpuSource>,
        uuids: Vec<GpuUuid>,
        clock: RunClock,
        config: SamplerConfig,
    ) -> std::io::Result<Sampler> {
        let window_ms = config.window_ms;
        let state = Arc::new(Mutex::new(SamplerState {
            devices: uuids
                .iter()
                .map(|uuid| DeviceState {
                    uuid: uuid.clone(),
                    compactor: SampleCompactor::with_cap(window_ms, config.max_points),
                    read_errors: 0,
                    last_error: None,
                    processes: BTreeMap::new(),
                })
                .collect(),
            ..SamplerState::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let oom_seen = Arc::new(AtomicBool::new(false));
        let child_pid = Arc::new(AtomicU32::new(0));
        let thread = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            let oom_seen = Arc::clone(&oom_seen);
            let child_pid = Arc::clone(&child_pid);
            std::thread::Builder::new()
                .name("oomdoc-sampler".into())
                .spawn(move || {
                    sample_loop(
                        source.as_mut(),
                        &uuids,
                        &clock,
                        config,
                        &state,
                        &stop,
                        &oom_seen,
                        &child_pid,
                    );
                })?
        };
        Ok(Sampler {
            stop,
            oom_seen,
            child_pid,
            state,
            thread: Some(thread),
        })
    }

    /// The child's PID, so its processes can be marked.
    pub fn set_child_pid(&self, pid: u32) {
        self.child_pid.store(pid, Ordering::Relaxed);
    }

    /// The log showed an OOM: take an inventory at the next round (once).
    pub fn oom_seen(&self) {
        self.oom_seen.store(true, Ordering::Relaxed);
    }

    /// A copy of what was gathered so far.
    pub fn snapshot(&self) -> SamplerState {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stops the thread and returns everything gathered.
    pub fn stop(mut self) -> SamplerState {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.snapshot()
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "the thread's shared handles, passed once"
)]
fn sample_loop(
    source: &mut dyn GpuSource,
    uuids: &[GpuUuid],
    clock: &RunClock,
    config: SamplerConfig,
    state: &Mutex<SamplerState>,
    stop: &AtomicBool,
    oom_seen: &AtomicBool,
    child_pid: &AtomicU32,
) {
    let period = Duration::from_secs_f64(1.0 / config.rate_hz.max(0.001));
    let inventory_every = Duration::from_millis(config.inventory_every_ms.max(1));
    let began = Instant::now();
    let mut next = began;
    let mut next_inventory = began;
    let mut oom_inventory_taken = false;
    let mut rounds: u64 = 0;
    let mut late_rounds: u64 = 0;
    let mut reads: u64 = 0;
    let mut read_time = Duration::ZERO;
    let mut readings: Vec<(u64, Result<u64, String>)> = Vec::with_capacity(uuids.len());
    while !stop.load(Ordering::Relaxed) {
        let round_start = Instant::now();
        if round_start > next + period {
            late_rounds += 1;
        }
        readings.clear();
        for uuid in uuids {
            let before = Instant::now();
            let reading = source.memory(uuid);
            let t_ms = clock.now_ms();
            read_time += before.elapsed();
            reads += 1;
            readings.push((
                t_ms,
                reading
                    .map(|sample| sample.used_bytes.get())
                    .map_err(|error| error.to_string()),
            ));
        }
        rounds += 1;
        let take_oom_inventory = !oom_inventory_taken && oom_seen.load(Ordering::Relaxed);
        let inventory = if take_oom_inventory || round_start >= next_inventory {
            next_inventory = round_start + inventory_every;
            Some(source.inventory())
        } else {
            None
        };
        {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            for (device, (t_ms, reading)) in state.devices.iter_mut().zip(readings.drain(..)) {
                match reading {
                    Ok(used) => device.compactor.push(t_ms, used),
                    Err(error) => {
                        device.read_errors += 1;
                        device.last_error = Some(error);
                    }
                }
            }
            match inventory {
                Some(Ok(inventory)) => {
                    let t_ms = clock.now_ms();
                    note_processes(
                        &mut state,
                        &inventory,
                        t_ms,
                        child_pid.load(Ordering::Relaxed),
                    );
                    if take_oom_inventory {
                        state.inventory_at_oom = Some(inventory);
                        oom_inventory_taken = true;
                    }
                }
                Some(Err(_)) => {
                    state.inventory_errors += 1;
                    if take_oom_inventory {
                        oom_inventory_taken = true;
                    }
                }
                None => {}
            }
            state.stats.rounds = rounds;
            state.stats.late_rounds = late_rounds;
        }
        next += period;
        let now = Instant::now();
        if next < now {
            // Behind (a slow read, a descheduled thread): skip the missed rounds.
            next = now;
        } else {
            std::thread::sleep(next - now);
        }
    }
    let elapsed = began.elapsed().as_secs_f64();
    let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
    state.stats.achieved_rate_hz = if elapsed > 0.0 {
        (rounds as f64 / elapsed * 10.0).round() / 10.0
    } else {
        0.0
    };
    state.stats.cpu_ms = thread_cpu_ms();
    state.stats.mean_read_us =
        (reads > 0).then(|| (read_time.as_secs_f64() * 1e6 / reads as f64 * 100.0).round() / 100.0);
}

fn note_processes(state: &mut SamplerState, inventory: &Inventory, t_ms: u64, child_pid: u32) {
    for device in &mut state.devices {
        let Some(found) = inventory.devices.iter().find(|d| d.uuid == device.uuid) else {
            continue;
        };
        for process in &found.processes {
            let entry = device
                .processes
                .entry(process.pid)
                .or_insert_with(|| ProcessPeak {
                    pid: process.pid,
                    name: process.name.clone(),
                    peak_used_bytes: None,
                    peak_t_ms: None,
                    is_child: child_pid != 0 && is_descendant(process.pid, child_pid),
                });
            if let Some(used) = process.used_bytes {
                if entry.peak_used_bytes.is_none_or(|peak: Bytes| used > peak) {
                    entry.peak_used_bytes = Some(used);
                    entry.peak_t_ms = Some(t_ms);
                }
            }
        }
    }
}

/// Whether `pid` is `root` or one of its descendants (Linux `/proc`; false elsewhere).
fn is_descendant(pid: u32, root: u32) -> bool {
    let mut current = pid;
    for _ in 0..64 {
        if current == root {
            return true;
        }
        if current <= 1 {
            return false;
        }
        match parent_pid(current) {
            Some(parent) => current = parent,
            None => return false,
        }
    }
    false
}

fn parent_pid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may hold spaces and parentheses: split after the last `)`.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time of the calling thread, from `/proc/thread-self/schedstat` (ns on CPU).
fn thread_cpu_ms() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanoseconds: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some((nanoseconds / 1e4).round() / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::machine::{Device, GpuProcess, MemorySample};
    use crate::source::gpu::GpuError;

    /// A GPU whose used memory grows by 1 MiB per read.
    struct CountingGpu {
        reads: u64,
    }

    impl GpuSource for CountingGpu {
        fn inventory(&mut self) -> Result<Inventory, GpuError> {
            Ok(Inventory {
                devices: vec![Device {
                    uuid: "GPU-a".into(),
                    processes: vec![GpuProcess {
                        pid: 4242,
                        used_bytes: Some(Bytes(7)),
                        ..GpuProcess::default()
                    }],
                    ..Device::default()
                }],
                ..Inventory::default()
            })
        }

        fn memory(&mut self, uuid: &GpuUuid) -> Result<MemorySample, GpuError> {
            if uuid != "GPU-a" {
                return Err(GpuError::Other(format!("no device `{uuid}`")));
            }
            self.reads += 1;
            Ok(MemorySample {
                used_bytes: Bytes(self.reads << 20),
                ..MemorySample::default()
            })
        }
    }

    #[test]
    fn sampler_reads_until_stopped() {
        let sampler = Sampler::start(
            Box::new(CountingGpu { reads: 0 }),
            vec!["GPU-a".into(), "GPU-missing".into()],
            RunClock::start(),
            SamplerConfig {
                rate_hz: 2000.0,
                window_ms: 10,
                inventory_every_ms: 1,
                max_points: 1000,
            },
        )
        .unwrap();
        sampler.oom_seen();
        // Wait for a few rounds without timing anything: poll the shared state.
        while sampler.snapshot().stats.rounds < 5 {
            std::thread::yield_now();
        }
        let state = sampler.stop();
        assert!(state.stats.rounds >= 5);
        assert!(state.devices[0].compactor.count() >= 5);
        assert_eq!(state.devices[0].read_errors, 0);
        assert!(state.devices[1].read_errors >= 5);
        assert!(state.devices[0].processes.contains_key(&4242));
        assert!(state.inventory_at_oom.is_some());
        let peak = state.devices[0].compactor.peak().unwrap();
        assert_eq!(peak.1, state.devices[0].compactor.count() << 20);
    }

    #[test]
    fn process_parents() {
        let me = std::process::id();
        assert!(is_descendant(me, me));
        assert!(parent_pid(me).is_some());
        assert!(!is_descendant(1, me));
    }
}
