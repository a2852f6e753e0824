//! Host memory, read from `/proc` and the cgroup filesystem: the RSS of a process tree, the
//! memory cgroup a process runs in (v1 or v2), the container or pod it belongs to; and a
//! sampler thread that reads them at a fixed rate beside a child process.
//!
//! Behind [`HostMemorySource`], like the GPU source: [`ProcHost`] reads the live system (its
//! `/proc` root can point elsewhere, so tests read recorded trees) and [`ReplayHost`] plays
//! readings back, so the analysis is testable without a machine that runs out of memory.
//! Interpretation lives in `parse::proc` and `parse::cgroup`; this module only reads.
//!
//! Cost: a process tree is found by one listing of `/proc` (the `stat` of PIDs not seen at the
//! previous reading only), then one `/proc/PID/statm` per member.
//! `scripts/bench_host_sampler.sh` measures it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::model::host::{
    CgroupMemory, CgroupVersion, ContainerIdentity, HostSample, HostTimeline,
};
use crate::model::machine::Inventory;
use crate::model::Bytes;
use crate::parse::cgroup::{self, CgroupError};
use crate::parse::proc::{self as proc_text, ProcError};
use crate::source::process::RunClock;

/// The default sampling interval: 10 Hz.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);

/// Samples a host timeline keeps at most (about 200 KiB of JSON): 3.4 minutes at 10 Hz at
/// full resolution, then neighbours are merged pairwise (`HostTimeline::push_bounded`), so a
/// day-long run keeps one sample per 42 s with every peak.
pub const MAX_KEPT_SAMPLES: usize = 2048;

/// A `/proc` or cgroup file that could not be read or understood.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The process is gone (or never was, in this PID namespace).
    #[error("no process {pid} in `{proc_root}`")]
    NoProcess {
        /// The PID.
        pid: u32,
        /// The `/proc` root read.
        proc_root: PathBuf,
    },
    /// A file could not be read.
    #[error("cannot read `{path}`")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A `/proc` file did not parse.
    #[error("cannot understand `{path}`")]
    Proc {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: ProcError,
    },
    /// A cgroup file did not parse.
    #[error("cannot understand `{path}`")]
    Cgroup {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: CgroupError,
    },
    /// A host replay file could not be used.
    #[error("cannot replay host memory from `{path}`: {message}")]
    Replay {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A replay ran out of readings.
    #[error("the host replay has no more readings")]
    ReplayEnded,
}

/// The RSS of a process tree at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeRss {
    /// Sum of `VmRSS` of the members (zombies and kernel threads count 0).
    pub rss_bytes: Bytes,
    /// Members found (the root included).
    pub processes: u32,
}

/// Where host memory facts come from. Live: [`ProcHost`]. Replay: [`ReplayHost`].
pub trait HostMemorySource: Send {
    /// The RSS of `root` and every live descendant.
    fn tree_rss(&mut self, root: u32) -> Result<TreeRss, HostError>;
    /// The memory cgroup of `pid`: `Ok(None)` when no memory controller is mounted where
    /// this process can read it.
    fn cgroup_memory(&mut self, pid: u32) -> Result<Option<CgroupMemory>, HostError>;
    /// Only the cgroup's charge now (what each sample needs): one file instead of five.
    fn cgroup_current(&mut self, pid: u32) -> Result<Option<Bytes>, HostError> {
        Ok(self
            .cgroup_memory(pid)?
            .and_then(|memory| memory.current_bytes))
    }
}

/// The live system, read from a `/proc` root (normally `/proc`).
#[derive(Debug)]
pub struct ProcHost {
    proc_root: PathBuf,
    /// PID → parent PID from the last `/proc` scan: a PID listed again whose parent is
    /// still listed is the same process with the same parent (a parent changes only when it
    /// dies), so its `stat` is not read again.
    parents: HashMap<u32, u32>,
    /// The page size, for `statm`; `None` (read `status` instead) for another `/proc` root.
    page_size: Option<u64>,
    /// The cgroup directory found per PID (a process rarely changes cgroup).
    cgroup_directories: BTreeMap<u32, Option<(CgroupVersion, String, PathBuf)>>,
}

impl Default for ProcHost {
    fn default() -> Self {
        ProcHost::new("/proc")
    }
}

impl ProcHost {
    /// Reads `/proc`-like files under `proc_root`.
    pub fn new(proc_root: impl Into<PathBuf>) -> Self {
        let proc_root = proc_root.into();
        let page_size = (proc_root == Path::new("/proc"))
            .then(|| std::fs::read("/proc/self/auxv").ok())
            .flatten()
            .and_then(|bytes| proc_text::parse_auxv_page_size(&bytes));
        ProcHost {
            page_size,
            proc_root,
            parents: HashMap::new(),
            cgroup_directories: BTreeMap::new(),
        }
    }

    fn read(&self, path: &Path) -> Result<String, HostError> {
        std::fs::read_to_string(path).map_err(|source| HostError::Read {
            path: path.to_path_buf(),
            source,
        })
    }

    /// A file under `/proc/PID/`: a missing file means the process is gone.
    fn read_proc_file(&self, pid: u32, path: &std::path::Path) -> Result<String, HostError> {
        std::fs::read_to_string(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                HostError::NoProcess {
                    pid,
                    proc_root: self.proc_root.clone(),
                }
            } else {
                HostError::Read {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })
    }

    /// `/proc/PID/status`, parsed.
    pub fn status(&self, pid: u32) -> Result<proc_text::ProcStatus, HostError> {
        let path = self.proc_root.join(pid.to_string()).join("status");
        let text = self.read_proc_file(pid, &path)?;
        proc_text::parse_status(&text).map_err(|source| HostError::Proc { path, source })
    }

    /// The PIDs of `root`'s tree, root first (breadth first), from one `/proc` scan.
    ///
    /// Not `task/*/children`: that needs one read per *thread* (a PyTorch process has dozens)
    /// and a kernel built with `CONFIG_PROC_CHILDREN`; a directory listing plus `stat` of the
    /// PIDs not seen before costs less (`scripts/bench_host_sampler.sh`).
    pub fn tree(&mut self, root: u32) -> Result<Vec<u32>, HostError> {
        let entries = std::fs::read_dir(&self.proc_root).map_err(|source| HostError::Read {
            path: self.proc_root.clone(),
            source,
        })?;
        let listed: HashSet<u32> = entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect();
        if !listed.contains(&root) {
            return Err(HostError::NoProcess {
                pid: root,
                proc_root: self.proc_root.clone(),
            });
        }
        let mut parents = HashMap::with_capacity(listed.len());
        for &pid in &listed {
            let known = self
                .parents
                .get(&pid)
                .copied()
                .filter(|parent| *parent == 0 || listed.contains(parent));
            let parent = known.or_else(|| {
                let text = std::fs::read_to_string(self.proc_root.join(format!("{pid}/stat")));
                // A process that ended during the scan is skipped.
                proc_text::parse_stat(&text.ok()?)
                    .ok()
                    .map(|stat| stat.parent_pid)
            });
            if let Some(parent) = parent {
                parents.insert(pid, parent);
            }
        }
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        for (&pid, &parent) in &parents {
            children.entry(parent).or_default().push(pid);
        }
        self.parents = parents;
        let mut members = vec![root];
        let mut next = 0;
        while let Some(&pid) = members.get(next) {
            next += 1;
            if let Some(list) = children.get_mut(&pid) {
                list.sort_unstable();
                members.extend(list.iter().copied().filter(|child| *child != root));
            }
        }
        Ok(members)
    }

    /// The resident set size of one process: `statm` × page size where the page size is
    /// known, else `VmRSS` of `status`; `None` for a process without memory (kernel thread,
    /// zombie).
    pub fn rss(&self, pid: u32) -> Result<Option<Bytes>, HostError> {
        let Some(page_size) = self.page_size else {
            return self.status(pid).map(|status| status.rss_bytes);
        };
        let path = self.proc_root.join(format!("{pid}/statm"));
        let text = self.read_proc_file(pid, &path)?;
        // A zombie's `statm` is all zeros: no memory, like a kernel thread.
        let pages = proc_text::parse_statm_resident_pages(&text)
            .map_err(|source| HostError::Proc { path, source })?;
        Ok((pages > 0).then(|| Bytes(pages.saturating_mul(page_size))))
    }

    /// Where the memory files of `pid`'s cgroup are, from `/proc/PID/cgroup` and
    /// `/proc/PID/mountinfo`.
    fn cgroup_directory(
        &mut self,
        pid: u32,
    ) -> Result<Option<(CgroupVersion, String, PathBuf)>, HostError> {
        if let Some(found) = self.cgroup_directories.get(&pid) {
            return Ok(found.clone());
        }
        let path = self.proc_root.join(format!("{pid}/cgroup"));
        let lines = cgroup::parse_proc_cgroup(&self.read(&path)?)
            .map_err(|source| HostError::Cgroup { path, source })?;
        let path = self.proc_root.join(format!("{pid}/mountinfo"));
        let mounts = cgroup::parse_mountinfo(&self.read(&path)?)
            .map_err(|source| HostError::Cgroup { path, source })?;
        let found = cgroup::memory_cgroup(&lines).and_then(|(version, cgroup_path)| {
            let directory = cgroup::memory_directory(&mounts, version, &cgroup_path)?;
            let directory = PathBuf::from(directory);
            // v2 without the memory controller enabled has no `memory.current`.
            let probe = match version {
                CgroupVersion::V1 => "memory.usage_in_bytes",
                CgroupVersion::V2 => "memory.current",
            };
            directory
                .join(probe)
                .exists()
                .then_some((version, cgroup_path, directory))
        });
        self.cgroup_directories.insert(pid, found.clone());
        Ok(found)
    }

    /// The container or pod `pid` runs in, with the pod name and namespace where the process's
    /// own files show them; `Ok(None)` when its cgroup path names none.
    pub fn container_of(&self, pid: u32) -> Result<Option<ContainerIdentity>, HostError> {
        let path = self.proc_root.join(format!("{pid}/cgroup"));
        let lines = cgroup::parse_proc_cgroup(&self.read(&path)?)
            .map_err(|source| HostError::Cgroup { path, source })?;
        // The first path that names a container: v1 hierarchies agree, v2 has one line.
        let Some(mut identity) = lines
            .iter()
            .find_map(|line| cgroup::container_identity(&line.path))
        else {
            return Ok(None);
        };
        if identity.pod_uid.is_some() {
            let base = self.proc_root.join(pid.to_string());
            let environ = std::fs::read(base.join("environ"))
                .map(|bytes| {
                    proc_text::parse_environ(&bytes, &["HOSTNAME", "KUBERNETES_SERVICE_HOST"])
                })
                .unwrap_or_default();
            if environ.contains_key("KUBERNETES_SERVICE_HOST") {
                if let Some(name) = environ.get("HOSTNAME").filter(|n| !n.is_empty()) {
                    identity.pod_name = Some(name.clone());
                    identity.pod_name_source = Some(
                        "`HOSTNAME` in the process environment (the kubelet sets it to the pod name unless the pod sets `hostname`)"
                            .to_string(),
                    );
                }
            }
            let namespace_file =
                base.join("root/var/run/secrets/kubernetes.io/serviceaccount/namespace");
            if let Ok(text) = std::fs::read_to_string(&namespace_file) {
                let namespace = text.trim();
                if !namespace.is_empty() && namespace.len() <= 253 {
                    identity.namespace = Some(namespace.to_string());
                    identity.namespace_source = Some(
                        "the pod's service-account token mount (`/var/run/secrets/kubernetes.io/serviceaccount/namespace`)"
                            .to_string(),
                    );
                }
            }
        }
        Ok(Some(identity))
    }

    fn read_number(&self, directory: &Path, file: &str) -> Result<u64, HostError> {
        let path = directory.join(file);
        cgroup::parse_single_number(&self.read(&path)?, file)
            .map_err(|source| HostError::Cgroup { path, source })
    }
}

impl HostMemorySource for ProcHost {
    fn cgroup_current(&mut self, pid: u32) -> Result<Option<Bytes>, HostError> {
        let Some((version, _, directory)) = self.cgroup_directory(pid)? else {
            return Ok(None);
        };
        let file = match version {
            CgroupVersion::V1 => "memory.usage_in_bytes",
            CgroupVersion::V2 => "memory.current",
        };
        self.read_number(&directory, file)
            .map(|value| Some(Bytes(value)))
    }

    fn tree_rss(&mut self, root: u32) -> Result<TreeRss, HostError> {
        let members = self.tree(root)?;
        let mut total = TreeRss::default();
        for pid in members {
            match self.rss(pid) {
                Ok(rss) => {
                    total.rss_bytes = total.rss_bytes.saturating_add(rss.unwrap_or(Bytes::ZERO));
                    total.processes += 1;
                }
                // A member that ended since the walk: it holds no memory any more.
                Err(HostError::NoProcess { pid: gone, .. }) if gone != root => {}
                Err(error) => return Err(error),
            }
        }
        Ok(total)
    }

    fn cgroup_memory(&mut self, pid: u32) -> Result<Option<CgroupMemory>, HostError> {
        let Some((version, path, directory)) = self.cgroup_directory(pid)? else {
            return Ok(None);
        };
        let mut memory = CgroupMemory {
            version: Some(version),
            path,
            ..CgroupMemory::default()
        };
        let mut unreadable = Vec::new();
        let mut keep = |result: Result<(), HostError>| {
            if let Err(error) = result {
                let cause = std::error::Error::source(&error)
                    .map(|cause| format!(": {cause}"))
                    .unwrap_or_default();
                unreadable.push(format!("{error}{cause}"));
            }
        };
        let number = |file: &str| self.read_number(&directory, file);
        let parsed = |file: &str| -> Result<(String, PathBuf), HostError> {
            let path = directory.join(file);
            Ok((self.read(&path)?, path))
        };
        match version {
            CgroupVersion::V2 => {
                keep(number("memory.current").map(|v| memory.current_bytes = Some(Bytes(v))));
                keep(parsed("memory.max").and_then(|(text, path)| {
                    memory.limit_bytes = cgroup::parse_v2_limit(&text, "memory.max")
                        .map_err(|source| HostError::Cgroup { path, source })?;
                    Ok(())
                }));
                // `memory.peak` exists from Linux 5.19; its absence is not an error.
                if directory.join("memory.peak").exists() {
                    keep(number("memory.peak").map(|v| memory.peak_bytes = Some(Bytes(v))));
                }
                keep(parsed("memory.events").and_then(|(text, path)| {
                    let events = cgroup::parse_memory_events(&text)
                        .map_err(|source| HostError::Cgroup { path, source })?;
                    memory.oom_kill_count = events.oom_kill;
                    memory.oom_count = events.oom;
                    memory.limit_hit_count = events.max;
                    Ok(())
                }));
            }
            CgroupVersion::V1 => {
                keep(
                    number("memory.usage_in_bytes").map(|v| memory.current_bytes = Some(Bytes(v))),
                );
                keep(parsed("memory.limit_in_bytes").and_then(|(text, path)| {
                    memory.limit_bytes = cgroup::parse_v1_limit(&text, "memory.limit_in_bytes")
                        .map_err(|source| HostError::Cgroup { path, source })?;
                    Ok(())
                }));
                keep(
                    number("memory.max_usage_in_bytes").map(|v| memory.peak_bytes = Some(Bytes(v))),
                );
                keep(number("memory.failcnt").map(|v| memory.limit_hit_count = Some(v)));
                keep(parsed("memory.oom_control").and_then(|(text, path)| {
                    let control = cgroup::parse_oom_control(&text)
                        .map_err(|source| HostError::Cgroup { path, source })?;
                    memory.oom_kill_count = control.oom_kill;
                    memory.under_oom = Some(control.under_oom);
                    Ok(())
                }));
            }
        }
        memory.unreadable = unreadable;
        Ok(Some(memory))
    }
}

/// Fills `host_rss_bytes` and `container` of every process of a live inventory (PIDs of this
/// machine), or says per process why not.
pub fn describe_gpu_processes(inventory: &mut Inventory, host: &ProcHost) {
    for device in &mut inventory.devices {
        for process in &mut device.processes {
            if process.in_pid_namespace == Some(false) {
                process.host_rss_unavailable_reason = Some(format!(
                    "PID {} is not in oomdoc's PID namespace",
                    process.pid
                ));
                continue;
            }
            match host.rss(process.pid) {
                Ok(Some(rss)) => process.host_rss_bytes = Some(rss),
                Ok(None) => {
                    process.host_rss_unavailable_reason =
                        Some("no resident memory: the process is exiting".into());
                }
                Err(error) => process.host_rss_unavailable_reason = Some(chain(&error)),
            }
            // The container is optional context: an unreadable cgroup file leaves it absent.
            process.container = host.container_of(process.pid).ok().flatten();
        }
    }
}

/// Host readings played back: one tree RSS per `tree_rss` call and one cgroup reading per
/// `cgroup_memory` call, holding the last; for tests and offline analysis.
#[derive(Debug, Clone, Default)]
pub struct ReplayHost {
    trees: Vec<TreeRss>,
    cgroups: Vec<Option<CgroupMemory>>,
    trees_played: usize,
    cgroups_played: usize,
    /// The cgroup charge per reading, when the replay has one list per reading (a recorded
    /// timeline); otherwise a charge is read from the next cgroup reading.
    currents: Vec<Option<Bytes>>,
    currents_played: usize,
}

impl ReplayHost {
    /// Plays `trees` and `cgroups` in order (an empty list ends the replay at once).
    pub fn new(trees: Vec<TreeRss>, cgroups: Vec<Option<CgroupMemory>>) -> Self {
        ReplayHost {
            trees,
            cgroups,
            ..ReplayHost::default()
        }
    }

    /// Plays a recorded host timeline: its cgroup before, one reading per sample (the tree RSS
    /// and cgroup charge of that sample, holding the last), then its cgroup after.
    pub fn from_timeline(timeline: &HostTimeline) -> Self {
        ReplayHost {
            trees: timeline
                .samples
                .iter()
                .map(|sample| TreeRss {
                    rss_bytes: sample.tree_rss_bytes,
                    processes: sample.processes,
                })
                .collect(),
            currents: timeline
                .samples
                .iter()
                .map(|sample| sample.cgroup_current_bytes)
                .collect(),
            cgroups: vec![
                timeline.cgroup_before.clone(),
                timeline.cgroup_after.clone(),
            ],
            ..ReplayHost::default()
        }
    }

    /// Reads a replay file: a host timeline as JSON (`HostTimeline`), or an oomdoc `run.json`
    /// whose `host` section holds one.
    pub fn open(path: &Path) -> Result<Self, HostError> {
        let bytes = std::fs::read(path).map_err(|source| HostError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let bad = |message: String| HostError::Replay {
            path: path.to_path_buf(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|error| bad(error.to_string()))?;
        let value = match value.get("host") {
            Some(host) if value.get("oomdoc_version").is_some() => host.clone(),
            _ => value,
        };
        if !value.is_object() || value.get("samples").is_none() {
            return Err(bad(
                "not a host timeline (an object with `samples`) nor a run record with a `host` section"
                    .to_string(),
            ));
        }
        let timeline: HostTimeline =
            serde_json::from_value(value).map_err(|error| bad(error.to_string()))?;
        if timeline.samples.is_empty() {
            return Err(bad("the host timeline has no samples".to_string()));
        }
        Ok(ReplayHost::from_timeline(&timeline))
    }
}

fn play<T: Clone>(list: &[T], played: &mut usize) -> Result<T, HostError> {
    let position = (*played).min(list.len().saturating_sub(1));
    *played = played.saturating_add(1);
    list.get(position).cloned().ok_or(HostError::ReplayEnded)
}

impl HostMemorySource for ReplayHost {
    fn tree_rss(&mut self, _root: u32) -> Result<TreeRss, HostError> {
        play(&self.trees, &mut self.trees_played)
    }

    fn cgroup_memory(&mut self, _pid: u32) -> Result<Option<CgroupMemory>, HostError> {
        play(&self.cgroups, &mut self.cgroups_played)
    }

    fn cgroup_current(&mut self, pid: u32) -> Result<Option<Bytes>, HostError> {
        if self.currents.is_empty() {
            return Ok(self
                .cgroup_memory(pid)?
                .and_then(|memory| memory.current_bytes));
        }
        play(&self.currents, &mut self.currents_played)
    }
}

/// A host sampler running on its own thread beside a child process.
///
/// The recorder starts it before spawning the child (so the cgroup's OOM-kill count before
/// the child is kept), names the child with [`HostSampler::set_root`], and stops it after the
/// child ended (reading the cgroup once more).
pub struct HostSampler {
    commands: Sender<Command>,
    thread: Option<JoinHandle<HostTimeline>>,
    shared: Arc<Mutex<HostTimeline>>,
}

/// Runs `change` on the shared timeline (a poisoned lock still holds usable data).
fn with(timeline: &Mutex<HostTimeline>, change: impl FnOnce(&mut HostTimeline)) {
    change(
        &mut timeline
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
}

enum Command {
    Root(u32),
    Stop,
}

impl HostSampler {
    /// Starts sampling every `interval`; `cgroup_pid` is a process in the cgroup the child
    /// will run in (oomdoc itself: the child inherits its cgroup). Its cgroup is read now.
    pub fn start(
        mut source: Box<dyn HostMemorySource>,
        clock: RunClock,
        interval: Duration,
        cgroup_pid: u32,
    ) -> HostSampler {
        let (commands, receiver) = mpsc::channel();
        let mut timeline = HostTimeline {
            interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
            readings_per_point: 1,
            ..HostTimeline::default()
        };
        match source.cgroup_memory(cgroup_pid) {
            Ok(Some(memory)) => timeline.cgroup_before = Some(memory),
            Ok(None) => timeline.limitations.push(
                "no cgroup memory controller is readable here: no cgroup limit or OOM-kill count"
                    .to_string(),
            ),
            Err(error) => timeline
                .limitations
                .push(format!("cgroup memory not read: {}", chain(&error))),
        }
        let shared = Arc::new(Mutex::new(timeline));
        let seen = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            // A panic elsewhere while holding the lock leaves the data as it was: still usable.
            let lock = |timeline: &Mutex<HostTimeline>| {
                timeline
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clone()
            };
            let mut root = None;
            let mut last_error: Option<String> = None;
            loop {
                // Before the child exists there is nothing to sample: wait for a command.
                let command = match root {
                    None => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
                    Some(_) => receiver.recv_timeout(interval),
                };
                match command {
                    // The first reading is taken at once, so a child that dies at start
                    // still has one.
                    Ok(Command::Root(pid)) => {
                        root = Some(pid);
                        with(&seen, |timeline| timeline.root_pid = pid);
                    }
                    Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                    Err(RecvTimeoutError::Timeout) => {}
                }
                let Some(pid) = root else { continue };
                let t_ms = clock.now_ms();
                let tree = match source.tree_rss(pid) {
                    Ok(tree) => tree,
                    // The child ended: nothing more to read.
                    Err(HostError::NoProcess { .. }) => TreeRss::default(),
                    Err(error) => {
                        let text = chain(&error);
                        if last_error.as_ref() != Some(&text) {
                            with(&seen, |timeline| {
                                timeline
                                    .limitations
                                    .push(format!("process tree RSS not read: {text}"))
                            });
                            last_error = Some(text);
                        }
                        continue;
                    }
                };
                let cgroup_current_bytes = source.cgroup_current(cgroup_pid).ok().flatten();
                let sample = HostSample {
                    t_ms,
                    tree_rss_bytes: tree.rss_bytes,
                    processes: tree.processes,
                    cgroup_current_bytes,
                };
                with(&seen, |timeline| {
                    timeline.push_bounded(sample, MAX_KEPT_SAMPLES)
                });
            }
            let mut timeline = lock(&seen).flushed();
            match source.cgroup_memory(cgroup_pid) {
                Ok(memory) => timeline.cgroup_after = memory,
                Err(error) => timeline.limitations.push(format!(
                    "cgroup memory not read after the run: {}",
                    chain(&error)
                )),
            }
            timeline
        });
        HostSampler {
            commands,
            thread: Some(thread),
            shared,
        }
    }

    /// What was seen so far (for a record written while the child runs); the cgroup after
    /// is read only by [`HostSampler::stop`].
    pub fn snapshot(&self) -> HostTimeline {
        let timeline = self
            .shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        timeline.flushed()
    }

    /// Names the process whose tree is sampled (the child, once spawned); sampling starts.
    pub fn set_root(&self, pid: u32) {
        // A send fails only when the thread ended, and then `stop` reports what it saw.
        let _ = self.commands.send(Command::Root(pid));
    }

    /// Stops sampling, reads the cgroup once more, and returns what was seen.
    pub fn stop(mut self) -> HostTimeline {
        let _ = self.commands.send(Command::Stop);
        self.thread
            .take()
            .and_then(|thread| thread.join().ok())
            .unwrap_or_else(|| HostTimeline {
                limitations: vec!["the host sampler thread failed".to_string()],
                ..HostTimeline::default()
            })
    }
}

/// An error and its causes on one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake `/proc` with a tree 10 → {11, 12}, 11 → {13}, and 20 outside it.
    fn fake_proc() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let processes = [
            (1, 0, 0),
            (10, 1, 1000),
            (11, 10, 200),
            (12, 10, 30),
            (13, 11, 4),
            (20, 1, 999_999),
        ];
        for (pid, parent, rss_kb) in processes {
            let directory = root.path().join(pid.to_string());
            std::fs::create_dir_all(directory.join(format!("task/{pid}"))).unwrap();
            std::fs::write(
                directory.join("status"),
                format!("Name:\tp{pid}\nPid:\t{pid}\nPPid:\t{parent}\nVmHWM:\t{rss_kb} kB\nVmRSS:\t{rss_kb} kB\n"),
            )
            .unwrap();
            std::fs::write(
                directory.join("stat"),
                format!("{pid} (p {pid}) S {parent} 1 1 0"),
            )
            .unwrap();
        }
        root
    }

    #[test]
    fn tree_rss_sums_descendants() {
        {
            let root = fake_proc();
            let mut host = ProcHost::new(root.path());
            let mut members = host.tree(10).unwrap();
            members.sort_unstable();
            assert_eq!(members, vec![10, 11, 12, 13]);
            let tree = host.tree_rss(10).unwrap();
            assert_eq!(tree.processes, 4);
            assert_eq!(tree.rss_bytes, Bytes((1000 + 200 + 30 + 4) * 1024));
            assert_eq!(host.tree_rss(13).unwrap().rss_bytes, Bytes(4 * 1024));
            assert!(matches!(
                host.tree_rss(77),
                Err(HostError::NoProcess { pid: 77, .. })
            ));
        }
    }

    #[test]
    fn statm_and_status_agree_on_this_process() {
        let host = ProcHost::default();
        let pid = std::process::id();
        let from_statm = host.rss(pid).unwrap().unwrap();
        let from_status = host.status(pid).unwrap().rss_bytes.unwrap();
        // Both print the mm's RSS counters; other test threads may allocate in between.
        let difference = from_statm.get().abs_diff(from_status.get());
        assert!(difference < 64 << 20, "{from_statm} vs {from_status}");
        assert!(host.page_size.is_some_and(|size| size >= 4096));
    }

    #[test]
    fn live_tree_of_this_process_has_rss() {
        let mut host = ProcHost::default();
        let tree = host.tree_rss(std::process::id()).unwrap();
        assert!(tree.processes >= 1);
        assert!(tree.rss_bytes > Bytes(1 << 20), "{tree:?}");
    }

    fn fake_cgroup(
        version: CgroupVersion,
        files: &[(&str, &str)],
    ) -> (tempfile::TempDir, ProcHost) {
        let root = tempfile::tempdir().unwrap();
        let proc_dir = root.path().join("proc/5");
        let cgroup_dir = root.path().join("cg/job");
        std::fs::create_dir_all(&proc_dir).unwrap();
        std::fs::create_dir_all(&cgroup_dir).unwrap();
        let (line, fstype, options) = match version {
            CgroupVersion::V1 => ("4:memory:/job\n0::/\n", "cgroup", "rw,memory"),
            CgroupVersion::V2 => ("0::/job\n", "cgroup2", "rw"),
        };
        std::fs::write(proc_dir.join("cgroup"), line).unwrap();
        std::fs::write(
            proc_dir.join("mountinfo"),
            format!(
                "30 1 0:26 / {} rw - {fstype} {fstype} {options}\n",
                root.path().join("cg").display()
            ),
        )
        .unwrap();
        for (name, text) in files {
            std::fs::write(cgroup_dir.join(name), text).unwrap();
        }
        let host = ProcHost::new(root.path().join("proc"));
        (root, host)
    }

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/host/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap()
    }

    #[test]
    fn v1_cgroup_read_from_the_recorded_oom() {
        let names = [
            "memory.usage_in_bytes",
            "memory.limit_in_bytes",
            "memory.max_usage_in_bytes",
            "memory.failcnt",
            "memory.oom_control",
        ];
        let texts: Vec<String> = names
            .iter()
            .map(|n| fixture(&format!("box-v1-oom/{n}")))
            .collect();
        let files: Vec<(&str, &str)> = names
            .iter()
            .copied()
            .zip(texts.iter().map(String::as_str))
            .collect();
        let (_root, mut host) = fake_cgroup(CgroupVersion::V1, &files);
        let memory = host.cgroup_memory(5).unwrap().unwrap();
        assert_eq!(
            memory,
            CgroupMemory {
                version: Some(CgroupVersion::V1),
                path: "/job".into(),
                current_bytes: Some(Bytes(229_376)),
                limit_bytes: Some(Bytes(64 << 20)),
                peak_bytes: Some(Bytes(64 << 20)),
                oom_kill_count: Some(1),
                oom_count: None,
                limit_hit_count: Some(67),
                under_oom: Some(false),
                unreadable: vec![],
            }
        );
    }

    #[test]
    fn v2_cgroup_reads_events_and_says_what_is_unreadable() {
        let (_root, mut host) = fake_cgroup(
            CgroupVersion::V2,
            &[
                ("memory.current", &fixture("k8s-v2/memory.current")),
                ("memory.max", "max\n"),
                ("memory.events", "max 3\noom_kill two\n"),
            ],
        );
        let memory = host.cgroup_memory(5).unwrap().unwrap();
        assert_eq!(memory.current_bytes, Some(Bytes(8_581_627_904)));
        assert_eq!(memory.limit_bytes, None);
        assert_eq!(memory.peak_bytes, None);
        assert_eq!(memory.oom_kill_count, None);
        assert_eq!(memory.unreadable.len(), 1);
        assert!(
            memory.unreadable[0]
                .ends_with("memory.events` line 2: `oom_kill two` is not `key count`"),
            "{:?}",
            memory.unreadable
        );
    }

    #[test]
    fn no_memory_controller_is_none_not_an_error() {
        // A v2 cgroup without `memory.current`: the controller is not enabled there.
        let (_root, mut host) = fake_cgroup(CgroupVersion::V2, &[("cgroup.procs", "5\n")]);
        assert_eq!(host.cgroup_memory(5).unwrap(), None);
    }

    #[test]
    fn pod_identity_with_name_and_namespace_when_readable() {
        let root = tempfile::tempdir().unwrap();
        let proc_dir = root.path().join("7");
        std::fs::create_dir_all(proc_dir.join("root/var/run/secrets/kubernetes.io/serviceaccount"))
            .unwrap();
        std::fs::write(proc_dir.join("cgroup"), fixture("k8s-v2/proc-cgroup.txt")).unwrap();
        std::fs::write(
            proc_dir.join("environ"),
            b"HOSTNAME=vllm-7b-0\0KUBERNETES_SERVICE_HOST=10.96.0.1\0HF_TOKEN=x\0",
        )
        .unwrap();
        std::fs::write(
            proc_dir.join("root/var/run/secrets/kubernetes.io/serviceaccount/namespace"),
            "inference",
        )
        .unwrap();
        let host = ProcHost::new(root.path());
        let identity = host.container_of(7).unwrap().unwrap();
        assert_eq!(identity.pod_name.as_deref(), Some("vllm-7b-0"));
        assert_eq!(identity.namespace.as_deref(), Some("inference"));
        assert!(identity.pod_name_source.is_some() && identity.namespace_source.is_some());
        // Without the Kubernetes environment and the token mount: absent, not guessed.
        std::fs::write(proc_dir.join("environ"), b"HOSTNAME=box\0").unwrap();
        std::fs::remove_dir_all(proc_dir.join("root")).unwrap();
        let identity = host.container_of(7).unwrap().unwrap();
        assert_eq!((identity.pod_name, identity.namespace), (None, None));
        assert!(identity.pod_uid.is_some());
    }

    #[test]
    fn sampler_records_a_replay_and_the_cgroup_around_it() {
        let before = CgroupMemory {
            oom_kill_count: Some(0),
            current_bytes: Some(Bytes(10)),
            ..CgroupMemory::default()
        };
        let after = CgroupMemory {
            oom_kill_count: Some(1),
            ..before.clone()
        };
        let trees = (1..=5)
            .map(|n| TreeRss {
                rss_bytes: Bytes(n << 20),
                processes: 1,
            })
            .collect();
        // One reading before, one per sample, then the last one held for the after-read.
        let cgroups = vec![Some(before.clone()), Some(after.clone())];
        let source = ReplayHost::new(trees, cgroups);
        let sampler = HostSampler::start(
            Box::new(source),
            RunClock::start(),
            Duration::from_secs(3600),
            1,
        );
        sampler.set_root(42);
        // Commands are handled in order: the root's first reading is taken before the stop.
        let timeline = sampler.stop();
        assert_eq!(timeline.root_pid, 42);
        assert_eq!(timeline.cgroup_before, Some(before));
        assert_eq!(timeline.samples.len(), 1);
        assert_eq!(timeline.samples[0].tree_rss_bytes, Bytes(1 << 20));
        assert_eq!(timeline.samples[0].cgroup_current_bytes, Some(Bytes(10)));
        // Read once more after the stop: the replay holds its last reading.
        assert_eq!(timeline.cgroup_after, Some(after));
    }
}
