//! Container log files → the lines the program printed, and the pod a log path belongs to
//! (`oomdoc exporter --follow`, issue 20).
//!
//! Two container runtimes wrap each line of a program's output:
//! - the CRI format of containerd and CRI-O (`/var/log/pods/…/0.log`):
//!   `2026-11-29T12:00:00.123456789Z stdout F text`, where the tag is `F` for a full line and
//!   `P` for a partial one that the next record continues
//!   (<https://github.com/kubernetes/design-proposals-archive/blob/main/node/kubelet-cri-logging.md>);
//! - docker's json-file driver: `{"log":"text\n","stream":"stderr","time":"…"}`, where a line
//!   longer than 16 KiB is split into records without the final `\n`
//!   (<https://docs.docker.com/engine/logging/drivers/json-file/>).
//!
//! [`LineDecoder`] takes the file's bytes in chunks cut anywhere and returns the program's
//! output, partial records joined. Plain logs pass through unchanged. Pure: no I/O.

use std::path::Path;

/// Longest raw record kept while waiting for its end; the rest of a longer one is dropped
/// (a flood of bytes without a newline cannot grow memory without bound).
pub const MAX_RECORD_BYTES: usize = 1 << 20;

/// How the records of a file are wrapped, decided on its first complete record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// CRI (`<time> <stream> <P|F> <text>`).
    Cri,
    /// docker json-file (`{"log":…}`).
    DockerJson,
    /// The program's output as is.
    Plain,
}

/// Decodes a container log read in chunks.
#[derive(Debug, Default)]
pub struct LineDecoder {
    format: Option<LogFormat>,
    record: Vec<u8>,
    skipping: bool,
}

impl LineDecoder {
    /// A decoder that will detect the format on the first complete record.
    pub fn new() -> Self {
        LineDecoder::default()
    }

    /// The format detected so far.
    pub fn format(&self) -> Option<LogFormat> {
        self.format
    }

    /// Forgets a partial record (the file was truncated or rotated) but keeps the format.
    pub fn reset(&mut self) {
        self.record.clear();
        self.skipping = false;
    }

    /// Decodes a chunk; the output holds the text of every record the chunk completes.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let mut rest = chunk;
        while let Some(newline) = memchr::memchr(b'\n', rest) {
            let (line, after) = rest.split_at(newline);
            rest = &after[1..];
            if self.skipping {
                self.skipping = false;
                self.record.clear();
                // The record was too long: keep only its start, as a line of its own.
                continue;
            }
            if self.record.is_empty() {
                self.decode_record(line, out);
            } else {
                let mut record = std::mem::take(&mut self.record);
                record.extend_from_slice(line);
                self.decode_record(&record, out);
                record.clear();
                self.record = record;
            }
        }
        if !rest.is_empty() && !self.skipping {
            let room = MAX_RECORD_BYTES.saturating_sub(self.record.len());
            if rest.len() > room {
                self.record.extend_from_slice(&rest[..room]);
                let mut record = std::mem::take(&mut self.record);
                self.decode_record(&record, out);
                record.clear();
                self.record = record;
                self.skipping = true;
            } else {
                self.record.extend_from_slice(rest);
            }
        }
    }

    fn decode_record(&mut self, record: &[u8], out: &mut Vec<u8>) {
        let record = record.strip_suffix(b"\r").unwrap_or(record);
        let format = match self.format {
            Some(format) => format,
            None => {
                if record.iter().all(u8::is_ascii_whitespace) {
                    out.push(b'\n');
                    return;
                }
                let format = detect(record);
                self.format = Some(format);
                format
            }
        };
        match format {
            LogFormat::Cri => match split_cri(record) {
                Some((text, partial)) => {
                    out.extend_from_slice(text);
                    if !partial {
                        out.push(b'\n');
                    }
                }
                None => push_line(record, out),
            },
            LogFormat::DockerJson => match decode_docker(record) {
                Some(text) => out.extend_from_slice(text.as_bytes()),
                None => push_line(record, out),
            },
            LogFormat::Plain => push_line(record, out),
        }
    }
}

fn push_line(record: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(record);
    out.push(b'\n');
}

fn detect(record: &[u8]) -> LogFormat {
    if record.first() == Some(&b'{') && decode_docker(record).is_some() {
        LogFormat::DockerJson
    } else if split_cri(record).is_some() {
        LogFormat::Cri
    } else {
        LogFormat::Plain
    }
}

/// `<RFC 3339 time> <stdout|stderr> <P|F>[:…] <text>` → (text, partial).
fn split_cri(record: &[u8]) -> Option<(&[u8], bool)> {
    let mut fields = record.splitn(4, |&byte| byte == b' ');
    let time = fields.next()?;
    let stream = fields.next()?;
    let tag = fields.next()?;
    let text = fields.next().unwrap_or(b"");
    let looks_like_time = time.len() >= 20
        && time[..4].iter().all(u8::is_ascii_digit)
        && time.get(4) == Some(&b'-')
        && time.get(10) == Some(&b'T');
    if !looks_like_time || !(stream == b"stdout" || stream == b"stderr") {
        return None;
    }
    // Tags are `P` or `F`, possibly followed by `:`-separated extras (CRI spec).
    let partial = match tag.split(|&byte| byte == b':').next()? {
        b"P" => true,
        b"F" => false,
        _ => return None,
    };
    Some((text, partial))
}

fn decode_docker(record: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Record {
        log: String,
    }
    serde_json::from_slice::<Record>(record)
        .ok()
        .map(|record| record.log)
}

/// Where a log file comes from in Kubernetes or docker, read from its path.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct LogOrigin {
    /// Kubernetes namespace, when the path shows it.
    pub namespace: Option<String>,
    /// Pod name, when the path shows it.
    pub pod: Option<String>,
    /// Container name (Kubernetes) or the first 12 hex digits of a docker container id.
    pub container: Option<String>,
    /// The pod's UID (`/var/log/pods` paths only), to match processes' cgroups.
    pub pod_uid: Option<String>,
}

/// The pod, namespace and container a log path names:
/// - kubelet: `/var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log`;
/// - kubelet's links: `/var/log/containers/<pod>_<namespace>_<container>-<64 hex id>.log`;
/// - docker: `/var/lib/docker/containers/<id>/<id>-json.log` (container = short id).
///
/// Kubernetes names cannot hold `_` (DNS labels and subdomains), so `_` separates fields.
pub fn origin_from_path(path: &Path) -> LogOrigin {
    let parts: Vec<&str> = path
        .components()
        .filter_map(|component| component.as_os_str().to_str())
        .collect();
    let position = |name: &str| parts.iter().rposition(|part| *part == name);
    if let Some(index) = position("pods") {
        if let (Some(pod_dir), Some(container), Some(_file)) = (
            parts.get(index + 1),
            parts.get(index + 2),
            parts.get(index + 3),
        ) {
            let fields: Vec<&str> = pod_dir.split('_').collect();
            if let [namespace, pod, uid] = fields[..] {
                return LogOrigin {
                    namespace: Some(namespace.to_string()),
                    pod: Some(pod.to_string()),
                    container: Some(container.to_string()),
                    pod_uid: Some(uid.to_string()),
                };
            }
        }
    }
    if position("containers").is_some_and(|index| index + 2 == parts.len()) {
        let file = parts.last().copied().unwrap_or_default();
        if let Some(stem) = file.strip_suffix(".log") {
            let fields: Vec<&str> = stem.split('_').collect();
            if let [pod, namespace, container_id] = fields[..] {
                if let Some((container, id)) = container_id.rsplit_once('-') {
                    if id.len() == 64 && id.bytes().all(|byte| byte.is_ascii_hexdigit()) {
                        return LogOrigin {
                            namespace: Some(namespace.to_string()),
                            pod: Some(pod.to_string()),
                            container: Some(container.to_string()),
                            pod_uid: None,
                        };
                    }
                }
            }
        }
    }
    if let Some(index) = position("containers") {
        if let (Some(id), Some(file)) = (parts.get(index + 1), parts.get(index + 2)) {
            if id.len() >= 12
                && id.bytes().all(|byte| byte.is_ascii_hexdigit())
                && *file == format!("{id}-json.log")
            {
                return LogOrigin {
                    container: Some(id[..12].to_string()),
                    ..LogOrigin::default()
                };
            }
        }
    }
    LogOrigin::default()
}

/// What a process's `/proc/<pid>/cgroup` says about its container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CgroupOrigin {
    /// The Kubernetes pod UID (dashes restored when the systemd driver wrote `_`).
    pub pod_uid: Option<String>,
    /// A docker container's short id (12 hex digits), outside Kubernetes.
    pub docker_container: Option<String>,
}

/// Reads the pod UID or docker container from cgroup text: kubelet's cgroupfs driver
/// (`/kubepods/burstable/pod<uid>/<id>`), its systemd driver
/// (`kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope`), docker
/// (`/docker/<id>`, `docker-<id>.scope`).
pub fn origin_from_cgroup(text: &str) -> CgroupOrigin {
    let mut origin = CgroupOrigin::default();
    for line in text.lines() {
        let path = line.splitn(3, ':').nth(2).unwrap_or_default();
        for part in path.split('/') {
            let part = part.strip_suffix(".slice").unwrap_or(part);
            if let Some(index) = part.rfind("pod") {
                let uid = part[index + 3..].replace('_', "-");
                if uid.len() == 36
                    && uid
                        .bytes()
                        .all(|byte| byte.is_ascii_hexdigit() || byte == b'-')
                {
                    origin.pod_uid = Some(uid);
                }
            }
            let id = part
                .strip_prefix("docker-")
                .and_then(|rest| rest.strip_suffix(".scope"))
                .or_else(|| path.contains("/docker/").then_some(part));
            if let Some(id) = id {
                if id.len() == 64 && id.bytes().all(|byte| byte.is_ascii_hexdigit()) {
                    origin.docker_container = Some(id[..12].to_string());
                }
            }
        }
    }
    if origin.pod_uid.is_some() {
        origin.docker_container = None;
    }
    origin
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_chunks(input: &[u8], size: usize) -> String {
        let mut decoder = LineDecoder::new();
        let mut out = Vec::new();
        for chunk in input.chunks(size) {
            decoder.push(chunk, &mut out);
        }
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn cri_prefixes_are_stripped_and_partial_lines_joined() {
        let input = b"2026-11-29T12:00:00.123456789Z stdout F INFO starting\n\
2026-11-29T12:00:01.000000000Z stderr P torch.OutOfMemoryError: CUDA out of \n\
2026-11-29T12:00:01.000000001Z stderr P memory. Tried to allocate \n\
2026-11-29T12:00:01.000000002Z stderr F 2.00 GiB.\n";
        let expected = "INFO starting\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
        for size in [1, 7, 64, input.len()] {
            assert_eq!(decode_in_chunks(input, size), expected, "chunks of {size}");
        }
    }

    #[test]
    fn docker_json_records_are_decoded() {
        let input = br#"{"log":"INFO start\n","stream":"stdout","time":"2026-11-29T12:00:00.1Z"}
{"log":"RuntimeError: CUDA out of memory. \"quoted\" \u00e9 ","stream":"stderr","time":"2026-11-29T12:00:00.2Z"}
{"log":"Tried to allocate 20.00 MiB\n","stream":"stderr","time":"2026-11-29T12:00:00.3Z"}
"#;
        let expected =
            "INFO start\nRuntimeError: CUDA out of memory. \"quoted\" é Tried to allocate 20.00 MiB\n";
        for size in [1, 5, input.len()] {
            assert_eq!(decode_in_chunks(input, size), expected, "chunks of {size}");
        }
    }

    #[test]
    fn plain_logs_pass_through() {
        let input = b"INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\r\nnext\n";
        assert_eq!(
            decode_in_chunks(input, 3),
            "INFO 04-02 21:42:50 api_server.py:1] vLLM API server version 0.6.3\nnext\n"
        );
    }

    #[test]
    fn a_record_without_end_is_bounded() {
        let mut decoder = LineDecoder::new();
        let mut out = Vec::new();
        let flood = vec![b'x'; 4096];
        for _ in 0..(2 * MAX_RECORD_BYTES / flood.len()) {
            decoder.push(&flood, &mut out);
        }
        assert!(decoder.record.len() <= MAX_RECORD_BYTES);
        decoder.push(b"\nafter\n", &mut out);
        assert!(out.ends_with(b"x\nafter\n"));
        assert_eq!(out.len(), MAX_RECORD_BYTES + "\nafter\n".len());
    }

    #[test]
    fn origins_from_cgroups() {
        let id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let uid = "0c8f1e2a-1b2c-4d5e-8f90-123456789abc";
        let systemd = format!(
            "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{id}.scope\n",
            uid.replace('-', "_")
        );
        assert_eq!(origin_from_cgroup(&systemd).pod_uid.as_deref(), Some(uid));
        let cgroupfs = format!("12:memory:/kubepods/burstable/pod{uid}/{id}\n");
        assert_eq!(origin_from_cgroup(&cgroupfs).pod_uid.as_deref(), Some(uid));
        let docker = format!("0::/system.slice/docker-{id}.scope\n");
        assert_eq!(
            origin_from_cgroup(&docker).docker_container.as_deref(),
            Some("0123456789ab")
        );
        let v1 = format!("4:devices:/docker/{id}\n");
        assert_eq!(
            origin_from_cgroup(&v1).docker_container.as_deref(),
            Some("0123456789ab")
        );
        assert_eq!(
            origin_from_cgroup("0::/user.slice/session-1.scope\n"),
            CgroupOrigin::default()
        );
    }

    #[test]
    fn origins_from_paths() {
        type Case<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);
        let cases: &[Case] = &[
            (
                "/var/log/pods/inference_vllm-0_0c8f1e2a-1b2c-4d5e-8f90-123456789abc/vllm/0.log",
                Some("inference"),
                Some("vllm-0"),
                Some("vllm"),
            ),
            (
                "/var/log/containers/vllm-0_inference_vllm-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.log",
                Some("inference"),
                Some("vllm-0"),
                Some("vllm"),
            ),
            (
                "/var/lib/docker/containers/0123456789abcdef0123/0123456789abcdef0123-json.log",
                None,
                None,
                Some("0123456789ab"),
            ),
            ("/srv/logs/vllm.log", None, None, None),
            ("/var/log/pods/not-a-pod-dir/vllm/0.log", None, None, None),
        ];
        for (path, namespace, pod, container) in cases {
            let origin = origin_from_path(Path::new(path));
            assert_eq!(origin.namespace.as_deref(), *namespace, "{path}");
            assert_eq!(origin.pod.as_deref(), *pod, "{path}");
            assert_eq!(origin.container.as_deref(), *container, "{path}");
        }
    }
}
