//! `oomdoc exporter`, below its command line: OOMs as fleet telemetry through Prometheus.
//!
//! Two threads: the log thread tails the followed files (`source::follow`), decodes container
//! log records (`parse::container_log`), feeds one explain stream per file
//! (`analyze::exporter`) and counts failures into the shared state; the HTTP thread answers
//! `/metrics` and `/events` from that state and a fresh GPU inventory. The state lock is held
//! only to copy counters, so a slow or flooding log never delays a scrape. SIGTERM and SIGINT
//! stop both cleanly.
//!
//! Above the pipeline, like `probe` and `record`: it does I/O through `source`, counts with
//! `analyze`, writes the exposition format with `render::prometheus`, and prints nothing.

mod follow;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;

use crate::analyze::exporter::ExporterState;
use crate::model::exporter::{FailureEvent, LogLabels};
use crate::model::machine::Inventory;
use crate::parse::container_log::origin_from_cgroup;
use crate::redact::Redactor;
use crate::source::follow::Follower;
use crate::source::gpu::GpuSource;

/// What the exporter follows and keeps.
#[derive(Debug, Clone)]
pub struct ExporterOptions {
    /// Address to serve `/metrics` and `/events` on (port 0 picks a free port).
    pub listen: SocketAddr,
    /// Globs of the log files to follow.
    pub follow: Vec<String>,
    /// Read the followed files from their start instead of their end.
    pub from_start: bool,
    /// How many failures `/events` keeps.
    pub events: u16,
    /// Milliseconds between two reads of the followed files (clamped to 10 ms – 60 s).
    pub poll_ms: u64,
}

/// A bound exporter, ready to [`serve`](Exporter::serve).
pub struct Exporter {
    options: ExporterOptions,
    server: tiny_http::Server,
    source: Mutex<Option<Box<dyn GpuSource>>>,
    stop: Arc<AtomicBool>,
}

impl Exporter {
    /// Handles SIGTERM and SIGINT and binds the address; `source` is `None` when no GPU can
    /// be read (`oomdoc_gpu_source_up` is then 0).
    pub fn bind(
        options: ExporterOptions,
        source: Option<Box<dyn GpuSource>>,
    ) -> anyhow::Result<Exporter> {
        let stop = Arc::new(AtomicBool::new(false));
        for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            signal_hook::flag::register(signal, Arc::clone(&stop))
                .context("cannot handle SIGTERM/SIGINT")?;
        }
        let server = tiny_http::Server::http(options.listen)
            .map_err(|error| anyhow::anyhow!("{error}"))
            .with_context(|| format!("cannot listen on `{}`", options.listen))?;
        Ok(Exporter {
            options,
            server,
            source: Mutex::new(source),
            stop,
        })
    }

    /// The address bound (the port chosen when `listen` asked for port 0).
    pub fn address(&self) -> String {
        self.server.server_addr().to_ip().map_or_else(
            || self.options.listen.to_string(),
            |address| address.to_string(),
        )
    }

    /// Follows the logs and answers requests until SIGTERM or SIGINT.
    pub fn serve(self) -> anyhow::Result<()> {
        let state = Arc::new(Mutex::new(ExporterState::new(usize::from(
            self.options.events,
        ))));
        let last_inventory: Arc<Mutex<Option<Scraped>>> = Arc::new(Mutex::new(None));
        let pods: Arc<Mutex<Pods>> = Arc::new(Mutex::new(BTreeMap::new()));
        let stop = self.stop;
        let log_thread = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            let last_inventory = Arc::clone(&last_inventory);
            let pods = Arc::clone(&pods);
            let mut follower = Follower::new(self.options.follow.clone(), self.options.from_start);
            let poll = Duration::from_millis(self.options.poll_ms.clamp(10, 60_000));
            let redactor = {
                let (home, user) = crate::source::process::local_identity();
                Redactor::new(home, user)
            };
            std::thread::Builder::new()
                .name("oomdoc-follow".into())
                .spawn(move || {
                    follow::follow_logs(
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

        let hostname = crate::source::process::node_name();
        while !stop.load(Ordering::Relaxed) {
            let request = match self.server.recv_timeout(Duration::from_millis(200)) {
                Ok(Some(request)) => request,
                Ok(None) => continue,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error).context("the HTTP server failed"),
            };
            let response = respond(
                request.method(),
                request.url(),
                &hostname,
                &self.source,
                &state,
                &last_inventory,
                &pods,
            );
            // A client that hung up is its own problem.
            let _ = request.respond(response);
        }
        stop.store(true, Ordering::Relaxed);
        let _ = log_thread.join();
        Ok(())
    }
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
        let Some(text) = crate::source::process::cgroup_of(process.pid) else {
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
            let events: Vec<FailureEvent> = lock(state).events().cloned().collect();
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
