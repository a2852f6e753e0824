//! The log thread: follows the files, feeds one explain stream per file, and records each
//! failure and startup breakdown in the shared state.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::{lock, Pods, Scraped};
use crate::analyze::exporter::{failure_gpu, ExporterState, LogStream};
use crate::model::exporter::{FailureEvent, FailureEventLabels, LogLabels};
use crate::parse::container_log::{origin_from_path, LineDecoder};
use crate::redact::Redactor;
use crate::source::follow::{FollowEvent, Follower};

/// How long a log may stay quiet before an open failure message counts as complete.
const QUIET_COMPLETES_AFTER: Duration = Duration::from_secs(2);

struct FileState {
    decoder: LineDecoder,
    stream: LogStream,
    decoded: Vec<u8>,
    last_data: Instant,
    ends_line: bool,
    quiet_flushed: bool,
}

pub(super) fn follow_logs(
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
            // A report whose redacted strings no longer read back is not kept (it is counted).
            let Ok(report) = redactor.typed(&failure.report) else {
                documents.push((failure.labels, None));
                continue;
            };
            let document = FailureEvent {
                labels: FailureEventLabels::from(&failure.labels),
                observed_at_seconds: now,
                report,
            };
            documents.push((failure.labels, Some(document)));
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
