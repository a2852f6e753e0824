//! `oomdoc exporter`: OOMs as fleet telemetry through Prometheus (issue 20).
//!
//! Two threads: the log thread tails `--follow` files (`source::follow`), decodes container
//! log records (`parse::container_log`), feeds one explain stream per file
//! (`analyze::exporter`) and counts failures into the shared state; the HTTP thread (this
//! one) answers `/metrics` and `/events` from that state and a fresh GPU inventory. The state
//! lock is held only to copy counters, so a slow or flooding log never delays a scrape.
//! SIGTERM and SIGINT stop both cleanly.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::Args;

use crate::analyze::exporter::{failure_gpu, ExporterState, LogStream};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::env_vars;
use crate::model::exporter::LogLabels;
use crate::model::machine::Inventory;
use crate::parse::container_log::{origin_from_cgroup, origin_from_path, LineDecoder};
use crate::redact::Redactor;
use crate::source::follow::{FollowEvent, Follower};
use crate::source::gpu::{self, GpuSource};

/// Arguments of `oomdoc exporter`.
#[derive(Debug, Args)]
pub struct ExporterArgs {
    /// Address to serve `/metrics` and `/events` on (port 0 picks a free port; the address
    /// bound is printed on stderr)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9835")]
    pub listen: SocketAddr,
    /// Follow log files matching GLOB as they grow (repeatable; `*`, `?`, `[…]` per path
    /// component), e.g. `/var/log/pods/*/*/*.log`
    #[arg(long, value_name = "GLOB", num_args = 1..)]
    pub follow: Vec<String>,
    /// Read GPU facts from FILE instead of NVML (as `oomdoc gpus --gpu-from`)
    #[arg(long, value_name = "FILE", env = "OOMDOC_GPU_FROM")]
    pub gpu_from: Option<PathBuf>,
    /// Read the followed files from their start instead of their end
    #[arg(long)]
    pub from_start: bool,
    /// How many failures `/events` keeps
    #[arg(long, value_name = "N", default_value_t = 50,
          value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub events: u16,
    /// Milliseconds between two reads of the followed files
    #[arg(long, value_name = "MS", default_value_t = 500, hide = true)]
    pub poll_ms: u64,
}

/// How long a log may stay quiet before an open failure message counts as complete.
const QUIET_COMPLETES_AFTER: Duration = Duration::from_secs(2);

/// Runs `oomdoc exporter` until SIGTERM or SIGINT.
pub fn run(args: ExporterArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let from = args
        .gpu_from
        .as_deref()
        .filter(|path| !path.as_os_str().is_empty());
    let source: Option<Box<dyn GpuSource>> = match gpu::open(from) {
        Ok(source) => Some(source),
        Err(error) if from.is_some() => {
            return Err(error).context("cannot read the GPU replay file");
        }
        Err(error) => {
            output.warn(&format!(
                "serving no GPU metrics: {error} (`oomdoc_gpu_source_up` is 0)"
            ));
            None
        }
    };
    let source = Arc::new(Mutex::new(source));
    let state = Arc::new(Mutex::new(ExporterState::new(usize::from(args.events))));
    let last_inventory: Arc<Mutex<Option<Scraped>>> = Arc::new(Mutex::new(None));
    let pods: Arc<Mutex<Pods>> = Arc::new(Mutex::new(BTreeMap::new()));
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .context("cannot handle SIGTERM/SIGINT")?;
    }

    let server = tiny_http::Server::http(args.listen)
        .map_err(|error| anyhow::anyhow!("{error}"))
        .with_context(|| format!("cannot listen on `{}`", args.listen))?;
    let bound = server
        .server_addr()
        .to_ip()
        .map_or_else(|| args.listen.to_string(), |address| address.to_string());
    output.note(&format!(
        "oomdoc exporter listening on http://{bound}/metrics"
    ));

    let log_thread = {
        let state = Arc::clone(&state);
        let stop = Arc::clone(&stop);
        let last_inventory = Arc::clone(&last_inventory);
        let pods = Arc::clone(&pods);
        let mut follower = Follower::new(args.follow.clone(), args.from_start);
        let poll = Duration::from_millis(args.poll_ms.clamp(10, 60_000));
        let redactor = {
            let (home, user) = crate::source::process::local_identity();
            Redactor::new(home, user)
        };
        std::thread::Builder::new()
            .name("oomdoc-follow".into())
            .spawn(move || {
                follow_logs(
                    &mut follower,
                    &state,
                    &last_inventory,
                    &pods,
                    &redactor,
                    &stop,
                    poll,
                );
            })
            .context("cannot start the log thread")?
    };

    let hostname = hostname();
    while !stop.load(Ordering::Relaxed) {
        let request = match server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error).context("the HTTP server failed"),
        };
        let response = respond(
            request.method(),
            request.url(),
            &hostname,
            &source,
            &state,
            &last_inventory,
            &pods,
        );
        // A client that hung up is its own problem.
        let _ = request.respond(response);
    }
    stop.store(true, Ordering::Relaxed);
    let _ = log_thread.join();
    output.note("oomdoc exporter stopped");
    Ok(ExitStatus::Success)
}

type Response = tiny_http::Response<std::io::Cursor<Vec<u8>>>;

/// The last scrape's inventory and the containers of its processes.
type Scraped = (Inventory, BTreeMap<u32, LogLabels>);

/// Pod UID → the containers whose logs are followed (from `/var/log/pods` paths).
type Pods = BTreeMap<String, BTreeSet<LogLabels>>;

/// The container of each GPU process, from `/proc/<pid>/cgroup` (host PIDs: the exporter
/// needs the host PID namespace) and the pods whose logs are followed.
fn process_origins(inventory: &Inventory, pods: &Pods) -> BTreeMap<u32, LogLabels> {
    let mut origins = BTreeMap::new();
    for process in inventory
        .devices
        .iter()
        .flat_map(|device| &device.processes)
    {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{}/cgroup", process.pid)) else {
            continue;
        };
        let cgroup = origin_from_cgroup(&text);
        let labels = if let Some(uid) = &cgroup.pod_uid {
            let Some(containers) = pods.get(uid) else {
                continue;
            };
            let Some(first) = containers.first() else {
                continue;
            };
            LogLabels {
                namespace: first.namespace.clone(),
                pod: first.pod.clone(),
                // Which of several containers holds the process, the cgroup does not name.
                container: if containers.len() == 1 {
                    first.container.clone()
                } else {
                    String::new()
                },
            }
        } else if let Some(id) = cgroup.docker_container {
            LogLabels {
                container: id,
                ..LogLabels::default()
            }
        } else {
            continue;
        };
        origins.insert(process.pid, labels);
    }
    origins
}

fn respond(
    method: &tiny_http::Method,
    url: &str,
    hostname: &str,
    source: &Mutex<Option<Box<dyn GpuSource>>>,
    state: &Mutex<ExporterState>,
    last_inventory: &Mutex<Option<Scraped>>,
    pods: &Mutex<Pods>,
) -> Response {
    let path = url.split('?').next().unwrap_or(url);
    if !matches!(method, tiny_http::Method::Get | tiny_http::Method::Head) {
        return text(405, "only GET and HEAD\n", "text/plain; charset=utf-8");
    }
    match path {
        "/metrics" => {
            let inventory = lock(source)
                .as_mut()
                .and_then(|source| source.inventory().ok());
            let origins = match &inventory {
                Some(inventory) => {
                    let pods = lock(pods).clone();
                    let origins = process_origins(inventory, &pods);
                    *lock(last_inventory) = Some((inventory.clone(), origins.clone()));
                    origins
                }
                None => BTreeMap::new(),
            };
            let metrics = lock(state).metrics(hostname, inventory, origins);
            text(
                200,
                &crate::render::prometheus::render(&metrics),
                crate::render::prometheus::CONTENT_TYPE,
            )
        }
        "/events" => {
            let events: Vec<serde_json::Value> = lock(state).events().cloned().collect();
            let body = serde_json::to_vec_pretty(&serde_json::json!({
                "schema_version": 1,
                "events": events,
            }))
            .unwrap_or_default();
            let mut response = tiny_http::Response::from_data(body);
            if let Ok(header) = tiny_http::Header::from_bytes("Content-Type", "application/json") {
                response.add_header(header);
            }
            response
        }
        "/" => text(
            200,
            "oomdoc exporter: /metrics (Prometheus), /events (the last failures, JSON)\n",
            "text/plain; charset=utf-8",
        ),
        _ => text(404, "not found\n", "text/plain; charset=utf-8"),
    }
}

fn text(status: u16, body: &str, content_type: &str) -> Response {
    let mut response =
        tiny_http::Response::from_data(body.as_bytes().to_vec()).with_status_code(status);
    if let Ok(header) = tiny_http::Header::from_bytes("Content-Type", content_type) {
        response.add_header(header);
    }
    response
}

/// A poisoned lock only means another thread panicked while holding it; the data is counters.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct FileState {
    decoder: LineDecoder,
    stream: LogStream,
    decoded: Vec<u8>,
    last_data: Instant,
    ends_line: bool,
    quiet_flushed: bool,
}

fn follow_logs(
    follower: &mut Follower,
    state: &Mutex<ExporterState>,
    last_inventory: &Mutex<Option<Scraped>>,
    pods: &Mutex<Pods>,
    redactor: &Redactor,
    stop: &AtomicBool,
    poll: Duration,
) {
    let mut files: BTreeMap<PathBuf, FileState> = BTreeMap::new();
    while !stop.load(Ordering::Relaxed) {
        let mut read = 0u64;
        follower.poll(&mut |path: &Path, event| match event {
            FollowEvent::Opened { .. } => {
                let origin = origin_from_path(path);
                let labels = LogLabels {
                    namespace: origin.namespace.unwrap_or_default(),
                    pod: origin.pod.unwrap_or_default(),
                    container: origin.container.unwrap_or_default(),
                };
                if let Some(uid) = origin.pod_uid {
                    lock(pods).entry(uid).or_default().insert(labels.clone());
                }
                files.insert(
                    path.to_path_buf(),
                    FileState {
                        decoder: LineDecoder::new(),
                        stream: LogStream::new(labels),
                        decoded: Vec::new(),
                        last_data: Instant::now(),
                        ends_line: true,
                        quiet_flushed: true,
                    },
                );
            }
            FollowEvent::Restarted => {
                if let Some(file) = files.get_mut(path) {
                    file.decoder.reset();
                }
            }
            FollowEvent::Data(bytes) => {
                read += bytes.len() as u64;
                if let Some(file) = files.get_mut(path) {
                    file.decoder.push(bytes, &mut file.decoded);
                }
            }
            FollowEvent::Closed | FollowEvent::Error(_) => {
                files.remove(path);
            }
        });
        let mut failures = Vec::new();
        let mut startups = Vec::new();
        for file in files.values_mut() {
            if !file.decoded.is_empty() {
                file.ends_line = file.decoded.ends_with(b"\n");
                file.stream.push(&file.decoded);
                file.decoded.clear();
                file.last_data = Instant::now();
                file.quiet_flushed = false;
            } else if !file.quiet_flushed
                && file.ends_line
                && file.last_data.elapsed() >= QUIET_COMPLETES_AFTER
            {
                // A process that died after its failure message writes nothing more: empty
                // lines end the open message so the failure is counted (the explainer waits
                // for a line that cannot continue it; one blank line may still).
                file.stream.push(b"\n\n\n");
                file.quiet_flushed = true;
            }
            let (failure, startup) = file.stream.check();
            failures.extend(failure);
            startups.extend(startup);
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |elapsed| elapsed.as_secs_f64());
        let scraped = if failures.is_empty() {
            None
        } else {
            lock(last_inventory).clone()
        };
        let mut documents = Vec::new();
        for mut failure in failures {
            failure.labels.uuid = scraped
                .as_ref()
                .and_then(|(inventory, origins)| {
                    failure_gpu(Some(inventory), &failure.labels.origin, origins)
                })
                .unwrap_or_default();
            let mut report = serde_json::to_value(&failure.report).unwrap_or_default();
            redactor.value(&mut report);
            let document = serde_json::json!({
                "observed_at_seconds": now,
                "labels": {
                    "cause": failure.labels.cause,
                    "phase": failure.labels.phase,
                    "engine": failure.labels.engine,
                    "UUID": failure.labels.uuid,
                    "namespace": failure.labels.origin.namespace,
                    "pod": failure.labels.origin.pod,
                    "container": failure.labels.origin.container,
                },
                "report": report,
            });
            documents.push((failure.labels, document));
        }
        {
            let mut state = lock(state);
            for (labels, breakdown) in startups {
                state.record_startup(labels, breakdown);
            }
            for (labels, document) in documents {
                state.record_failure(labels, now, document);
            }
            state.followed_files = follower.len() as u64;
            state.log_bytes_read += read;
        }
        // A poll that filled a file's read budget left more waiting: read again at once, so a
        // fast log is not left behind at budget/poll (8 MiB/s); memory stays bounded by the
        // budget either way.
        if read < crate::source::follow::MAX_READ_PER_POLL as u64 {
            std::thread::sleep(poll);
        }
    }
}

/// The node name for dcgm-exporter's `Hostname` label: `NODE_NAME` (set from the downward
/// API in a DaemonSet), else the kernel's host name.
fn hostname() -> String {
    std::env::var(env_vars::NODE_NAME)
        .ok()
        .filter(|name| !name.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|name| name.trim().to_string())
        })
        .unwrap_or_default()
}
