//! Host memory: the RSS of a process tree, the memory cgroup it runs in, and the container or
//! Kubernetes pod that cgroup belongs to.
//!
//! Plain data, filled by `source::host_memory` (live `/proc` and cgroup files, or a replay)
//! and judged by `analyze::host_oom`. Field names are a JSON contract (`oomdoc gpus --json`
//! `processes[].container`, and the host timeline a run records).

use serde::{Deserialize, Serialize};

use super::Bytes;

/// Which cgroup interface the memory figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CgroupVersion {
    /// cgroup v1, the `memory` controller's own hierarchy (`memory.usage_in_bytes`, …).
    V1,
    /// cgroup v2, the unified hierarchy (`memory.current`, `memory.max`, …).
    V2,
}

/// The memory of one cgroup at one instant, as its files say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupMemory {
    /// The interface read; `None` only in a default value.
    pub version: Option<CgroupVersion>,
    /// The cgroup's path inside its hierarchy, as `/proc/PID/cgroup` gives it.
    pub path: String,
    /// Memory charged now: v2 `memory.current`, v1 `memory.usage_in_bytes`.
    pub current_bytes: Option<Bytes>,
    /// The hard limit: v2 `memory.max`, v1 `memory.limit_in_bytes`; `None` when there is none
    /// (`max`, or v1's "unlimited" page-counter maximum).
    pub limit_bytes: Option<Bytes>,
    /// The highest charge since the cgroup was made: v2 `memory.peak` (Linux 5.19+), v1
    /// `memory.max_usage_in_bytes`.
    pub peak_bytes: Option<Bytes>,
    /// Processes the kernel's OOM killer killed in this cgroup: v2 `memory.events` `oom_kill`,
    /// v1 `memory.oom_control` `oom_kill` (Linux 4.13+).
    pub oom_kill_count: Option<u64>,
    /// Times the cgroup hit its limit and could not reclaim enough: v2 `memory.events` `oom`.
    pub oom_count: Option<u64>,
    /// Times usage was about to go over the limit: v2 `memory.events` `max`, v1
    /// `memory.failcnt`.
    pub limit_hit_count: Option<u64>,
    /// v1 `memory.oom_control` `under_oom`: the cgroup is in an OOM state right now.
    pub under_oom: Option<bool>,
    /// Files that could not be read, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

/// One host-memory reading of a process tree and its cgroup.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSample {
    /// Milliseconds since the run started.
    pub t_ms: u64,
    /// Sum of `VmRSS` over the root process and its live descendants (`/proc/PID/status`).
    /// Shared pages (a safetensors mmap read by several workers) count once per process.
    pub tree_rss_bytes: Bytes,
    /// Processes summed into `tree_rss_bytes`.
    pub processes: u32,
    /// The cgroup's charge at that moment (v2 `memory.current`, v1 `memory.usage_in_bytes`).
    pub cgroup_current_bytes: Option<Bytes>,
}

/// What a host sampler saw over a run: readings, and the cgroup before and after.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostTimeline {
    /// The root process sampled.
    pub root_pid: u32,
    /// The interval aimed at, in milliseconds.
    pub interval_ms: u64,
    /// Readings, oldest first (left out of a report, which keeps the peaks only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<HostSample>,
    /// The cgroup before the child started (for the OOM-kill count before).
    pub cgroup_before: Option<CgroupMemory>,
    /// The cgroup after the child ended.
    pub cgroup_after: Option<CgroupMemory>,
    /// What could not be measured and why (no cgroup memory controller, `/proc` unreadable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limitations: Vec<String>,
    /// Readings taken in all (`samples` keeps at most a bounded number of them).
    #[serde(default)]
    pub readings: u64,
    /// How many consecutive readings each kept sample stands for: 1 until `samples` reaches
    /// its bound, then it doubles each time, and each kept sample is the reading with the
    /// highest tree RSS of its group (peaks survive, dips do not).
    #[serde(default = "one")]
    pub readings_per_point: u64,
    /// The reading with the highest tree RSS of the whole run (kept even when `samples` is
    /// thinned out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_reading: Option<HostSample>,
    /// The reading with the highest cgroup charge of the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_cgroup_reading: Option<HostSample>,
    /// The best of the readings not yet folded into a kept sample, and how many there are
    /// (fewer than `readings_per_point`); not written.
    #[serde(skip)]
    pub pending: Option<(HostSample, u64)>,
}

fn one() -> u64 {
    1
}

impl HostTimeline {
    /// Adds a reading and keeps `samples` at most `max_kept` long: past that, neighbours are
    /// merged pairwise (the higher tree RSS stays) and `readings_per_point` doubles, so a long
    /// run keeps its shape and every peak at a coarser step. The run's highest readings are
    /// kept apart, whatever the thinning.
    pub fn push_bounded(&mut self, sample: HostSample, max_kept: usize) {
        self.readings = self.readings.saturating_add(1);
        if self
            .peak_rss_reading
            .is_none_or(|peak| sample.tree_rss_bytes > peak.tree_rss_bytes)
        {
            self.peak_rss_reading = Some(sample);
        }
        if sample.cgroup_current_bytes.is_some()
            && self
                .peak_cgroup_reading
                .is_none_or(|peak| sample.cgroup_current_bytes > peak.cgroup_current_bytes)
        {
            self.peak_cgroup_reading = Some(sample);
        }
        let per_point = self.readings_per_point.max(1);
        let (best, count) = match self.pending.take() {
            Some((best, count)) if sample.tree_rss_bytes > best.tree_rss_bytes => {
                (sample, count + 1)
            }
            Some((best, count)) => (best, count + 1),
            None => (sample, 1),
        };
        if count >= per_point {
            self.samples.push(best);
        } else {
            self.pending = Some((best, count));
        }
        if self.samples.len() > max_kept.max(2) {
            let merged: Vec<HostSample> = self
                .samples
                .chunks(2)
                .map(|pair| match pair {
                    [a, b] if b.tree_rss_bytes > a.tree_rss_bytes => *b,
                    [a, ..] => *a,
                    [] => HostSample::default(),
                })
                .collect();
            self.samples = merged;
            self.readings_per_point = per_point.saturating_mul(2);
        }
    }

    /// The timeline with readings not yet folded into a kept sample added as one (for a record
    /// written while the sampler still runs, and at the end).
    pub fn flushed(&self) -> HostTimeline {
        let mut timeline = self.clone();
        if let Some((best, _)) = timeline.pending.take() {
            timeline.samples.push(best);
        }
        timeline
    }

    /// The reading with the largest tree RSS, the first one on ties.
    pub fn peak_rss(&self) -> Option<HostSample> {
        if self.peak_rss_reading.is_some() {
            return self.peak_rss_reading;
        }
        self.samples.iter().copied().reduce(|best, s| {
            if s.tree_rss_bytes > best.tree_rss_bytes {
                s
            } else {
                best
            }
        })
    }

    /// The reading with the largest cgroup charge, the first one on ties.
    pub fn peak_cgroup(&self) -> Option<HostSample> {
        if self.peak_cgroup_reading.is_some() {
            return self.peak_cgroup_reading;
        }
        self.samples
            .iter()
            .copied()
            .filter(|s| s.cgroup_current_bytes.is_some())
            .reduce(|best, s| {
                if s.cgroup_current_bytes > best.cgroup_current_bytes {
                    s
                } else {
                    best
                }
            })
    }
}

/// The container runtime a cgroup path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContainerRuntime {
    /// Docker (`/docker/<id>`, `docker-<id>.scope`).
    Docker,
    /// containerd's CRI plugin (`cri-containerd-<id>.scope`).
    Containerd,
    /// CRI-O (`crio-<id>.scope`).
    CriO,
    /// Podman (`libpod-<id>.scope`).
    Podman,
}

/// Kubernetes quality-of-service class, from the `kubepods` cgroup path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QosClass {
    /// Requests equal limits: the pod cgroup sits right under `kubepods`.
    Guaranteed,
    /// `kubepods/burstable` or `kubepods-burstable.slice`.
    Burstable,
    /// `kubepods/besteffort` or `kubepods-besteffort.slice`.
    BestEffort,
}

/// The container (and Kubernetes pod) a process runs in, read from its cgroup path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerIdentity {
    /// The runtime the path names; `None` when the path shows a pod but not the runtime
    /// (the kubelet's `cgroupfs` driver writes a bare container id).
    pub runtime: Option<ContainerRuntime>,
    /// The container id (64 hex digits), when the path holds one.
    pub id: Option<String>,
    /// The Kubernetes pod UID (with dashes), when the path is under `kubepods`.
    pub pod_uid: Option<String>,
    /// The pod's QoS class, when under `kubepods`.
    pub qos_class: Option<QosClass>,
    /// The pod name, only where it could be read (see `pod_name_source`); never guessed.
    pub pod_name: Option<String>,
    /// Where `pod_name` was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_name_source: Option<String>,
    /// The pod's namespace, only where it could be read (see `namespace_source`).
    pub namespace: Option<String>,
    /// Where `namespace` was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_source: Option<String>,
    /// The cgroup path the identity was read from.
    pub cgroup_path: String,
}

/// How a child process ended, as the host saw it (the analysis input; mirrors what the
/// recorder's process source reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildEnd {
    /// The exit code, when it exited by itself (a shell or a container runtime reports a
    /// SIGKILL of its own child as 137).
    pub code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
}

/// The verdict on a child's end, as far as host memory can tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum HostOomFinding {
    /// Not killed by SIGKILL: host memory is not the cause of the end.
    NotKilled,
    /// Killed by SIGKILL and the host shows why: the kernel's OOM killer.
    HostOomKill(HostOomKill),
    /// Killed by SIGKILL (exit 137, `-9`) with no evidence of an OOM kill: the cause is not
    /// shown, and no guess is made.
    KilledBySignal {
        /// The signal (9).
        signal: i32,
        /// What was looked at and why it does not prove an OOM kill.
        not_shown_because: Vec<String>,
    },
}

/// A host out-of-memory kill, with the evidence and what to change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostOomKill {
    /// What shows it, strongest first.
    pub evidence: Vec<HostOomEvidence>,
    /// The cgroup's memory limit, when it has one (`None`: the whole machine ran out).
    pub limit_bytes: Option<Bytes>,
    /// The highest memory seen, and where it was read.
    pub peak: Option<HostPeak>,
    /// The phase running when the last reading was taken (the phase the kill happened in),
    /// when phases are known.
    pub phase_at_kill: Option<String>,
    /// What to change.
    pub advice: Vec<HostAdvice>,
}

/// The highest host memory seen during the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostPeak {
    /// Bytes.
    pub bytes: Bytes,
    /// Which figure: `cgroup_peak` (v2 `memory.peak`, v1 `memory.max_usage_in_bytes`),
    /// `cgroup_current` (the largest sampled charge) or `tree_rss` (sampled RSS of the tree).
    pub figure: String,
    /// When, in milliseconds since the start (sampled figures only).
    pub t_ms: Option<u64>,
    /// The phase it fell in, when phases are known.
    pub phase: Option<String>,
}

/// A fact that shows an OOM kill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum HostOomEvidence {
    /// The cgroup's OOM-kill count rose while the child ran.
    OomKillCountRose {
        /// The count before the child started.
        before: u64,
        /// The count after it ended.
        after: u64,
    },
    /// The process tree's resident memory reached the cgroup limit (within 10 %: RSS cannot
    /// be reclaimed without swap, unlike the page cache the cgroup also charges).
    RssAtLimit {
        /// The highest sampled tree RSS.
        rss_bytes: Bytes,
        /// The limit.
        limit_bytes: Bytes,
    },
    /// v1 `under_oom`: the cgroup was still in an OOM state after the child ended.
    UnderOom,
}

/// What to change after a host OOM kill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum HostAdvice {
    /// Give the container or job more memory than the peak (a Kubernetes
    /// `resources.limits.memory`, `docker run --memory`, a Slurm `--mem`).
    RaiseMemoryLimit {
        /// The limit now.
        limit_bytes: Bytes,
        /// The peak seen, which the new limit must exceed with headroom.
        peak_bytes: Option<Bytes>,
    },
    /// Load weights with less host memory: safetensors mmap, `low_cpu_mem_usage=True`,
    /// `device_map` straight to the GPU, no CPU-side format conversion.
    LowMemoryLoading,
    /// Lower `--max-model-len` (and `--swap-space`/CPU offload sizes): engines size some
    /// host-side buffers from it.
    SmallerHostBuffers,
    /// Fewer processes (data-loader workers, tokenizer workers, tensor-parallel ranks on one
    /// host): each holds its own copy of what it loads.
    FewerWorkers {
        /// The most processes seen in the tree.
        processes: u32,
    },
    /// Add swap (or allow it for the cgroup) to survive a short peak, at the cost of speed.
    Swap,
}

/// What a [`HostPeak`]'s `figure` names, in words (the OOM-kill verdict and its renderer).
pub fn peak_figure_text(figure: &str) -> &'static str {
    match figure {
        "cgroup_peak" => "the cgroup's peak counter",
        "cgroup_current" => "the largest sampled cgroup charge",
        _ => "the largest sampled RSS of the process tree",
    }
}

/// One piece of evidence as a sentence, naming the file it was read from.
pub fn evidence_text(evidence: &HostOomEvidence) -> String {
    match evidence {
        HostOomEvidence::OomKillCountRose { before, after } => format!(
            "the cgroup's OOM-kill count (`oom_kill`) rose from {before} to {after}"
        ),
        HostOomEvidence::RssAtLimit {
            rss_bytes,
            limit_bytes,
        } => format!(
            "the process tree's resident memory reached {rss_bytes} of the {limit_bytes} limit (`VmRSS`)"
        ),
        HostOomEvidence::UnderOom => {
            "the cgroup is still in an OOM state (`under_oom 1` in `memory.oom_control`)".into()
        }
    }
}

/// One change to make, as a sentence.
pub fn advice_text(advice: &HostAdvice) -> String {
    match advice {
        HostAdvice::RaiseMemoryLimit {
            limit_bytes,
            peak_bytes,
        } => {
            let need = peak_bytes.map_or(String::new(), |peak| {
                format!(", above the {peak} peak with headroom")
            });
            format!(
                "raise the memory limit from {limit_bytes}{need} (Kubernetes `resources.limits.memory`, `docker run --memory`, Slurm `--mem`)"
            )
        }
        HostAdvice::LowMemoryLoading => "load weights with less host RAM: safetensors (mmap) rather than `.bin`, `low_cpu_mem_usage=True`, `device_map` straight to the GPU, no format conversion on the CPU".into(),
        HostAdvice::SmallerHostBuffers => {
            "shrink host-side buffers: a lower `--max-model-len`, a smaller `--swap-space` / CPU offload".into()
        }
        HostAdvice::FewerWorkers { processes } => format!(
            "run fewer processes ({processes} at the peak): data-loader and tokenizer workers, ranks on one host each hold their own copy"
        ),
        HostAdvice::Swap => {
            "with swap off, a short peak kills: add swap (or allow it for the cgroup) to survive it, at the cost of speed".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(t_ms: u64, rss: u64, cgroup: u64) -> HostSample {
        HostSample {
            t_ms,
            tree_rss_bytes: Bytes(rss),
            processes: 1,
            cgroup_current_bytes: Some(Bytes(cgroup)),
        }
    }

    #[test]
    fn a_long_timeline_stays_bounded_and_keeps_its_peaks() {
        let mut timeline = HostTimeline {
            readings_per_point: 1,
            ..HostTimeline::default()
        };
        // 10 000 readings (17 minutes at 10 Hz): RSS rises slowly with one spike at 7 777;
        // the cgroup charge peaks elsewhere, at 3 001.
        for n in 0..10_000u64 {
            let rss = if n == 7_777 { 1 << 40 } else { n };
            let cgroup = if n == 3_001 { 1 << 41 } else { n };
            timeline.push_bounded(reading(n * 100, rss, cgroup), 64);
        }
        let flushed = timeline.flushed();
        assert_eq!(flushed.readings, 10_000);
        assert!(flushed.samples.len() <= 65, "{}", flushed.samples.len());
        assert_eq!(flushed.readings_per_point, 256);
        // Each kept sample is the highest of its group: the spike survives in the samples.
        assert!(flushed
            .samples
            .iter()
            .any(|sample| sample.tree_rss_bytes == Bytes(1 << 40)));
        assert!(flushed.samples.windows(2).all(|w| w[0].t_ms < w[1].t_ms));
        assert_eq!(flushed.peak_rss().map(|s| s.t_ms), Some(777_700));
        // The cgroup peak is kept apart even where the thinning dropped its reading.
        assert_eq!(flushed.peak_cgroup().map(|s| s.t_ms), Some(300_100));
        // The last readings, fewer than a group, are not lost.
        assert_eq!(flushed.samples.last().map(|s| s.t_ms), Some(999_900));
    }

    #[test]
    fn a_short_timeline_keeps_every_reading() {
        let mut timeline = HostTimeline::default();
        for n in 0..5 {
            timeline.push_bounded(reading(n, n, n), 64);
        }
        assert_eq!(timeline.samples.len(), 5);
        assert_eq!(timeline.flushed(), timeline.clone());
    }
}
