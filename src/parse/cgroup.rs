//! cgroup files as text: `/proc/PID/cgroup`, the cgroup mounts of `/proc/PID/mountinfo`, the
//! memory controller's files of both versions, and the container or Kubernetes pod a cgroup
//! path names. Pure: `source::host_memory` reads the files.
//!
//! Formats: the kernel's `Documentation/admin-guide/cgroup-v2.rst` (`memory.current`,
//! `memory.max`, `memory.peak`, `memory.events`) and `cgroup-v1/memory.rst`
//! (`memory.usage_in_bytes`, `memory.limit_in_bytes`, `memory.max_usage_in_bytes`,
//! `memory.failcnt`, `memory.oom_control`); proc(5) for `cgroup` and `mountinfo`. Container
//! paths: Docker's and containerd's cgroup drivers, CRI-O's `crio-<id>.scope`, and the
//! kubelet's `kubepods` layout for the `cgroupfs` and `systemd` drivers.

use crate::model::host::{CgroupVersion, ContainerIdentity, ContainerRuntime, QosClass};
use crate::model::Bytes;

/// v1 prints "no limit" as the page counter's maximum, `LONG_MAX` rounded down to a page
/// (9223372036854771712 with 4 KiB pages, 9223372036854710272 with 64 KiB pages): every
/// value from 2^62 up is read as no limit, since no machine has 4 EiB of memory.
const V1_UNLIMITED_FROM: u64 = 1 << 62;

/// What is wrong with a cgroup file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CgroupError {
    /// A value is not what the format says.
    #[error("`{file}` line {line}: `{value}` is not {expected}")]
    BadValue {
        /// The file, e.g. `memory.max`.
        file: String,
        /// The 1-based line.
        line: usize,
        /// The text as written (cut at 80 characters).
        value: String,
        /// What the format expects.
        expected: &'static str,
    },
    /// A key the file must have is not there.
    #[error("`{file}` has no `{key}` line")]
    Missing {
        /// The file.
        file: String,
        /// The key.
        key: &'static str,
    },
}

fn bad(file: &str, line: usize, value: &str, expected: &'static str) -> CgroupError {
    CgroupError::BadValue {
        file: file.to_string(),
        line,
        value: value.chars().take(80).collect(),
        expected,
    }
}

/// One line of `/proc/PID/cgroup`: `hierarchy-ID:controller-list:cgroup-path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupLine {
    /// The hierarchy id (0 for the v2 unified hierarchy).
    pub hierarchy_id: u32,
    /// The controllers bound to the hierarchy (empty for v2; `name=systemd` kept as written).
    pub controllers: Vec<String>,
    /// The path inside the hierarchy, relative to the reader's cgroup namespace.
    pub path: String,
}

/// Parses `/proc/PID/cgroup`.
pub fn parse_proc_cgroup(text: &str) -> Result<Vec<CgroupLine>, CgroupError> {
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad(
                "cgroup",
                index + 1,
                line,
                "`hierarchy-ID:controllers:path`",
            ));
        };
        let hierarchy_id = id
            .parse()
            .map_err(|_| bad("cgroup", index + 1, id, "a hierarchy id"))?;
        lines.push(CgroupLine {
            hierarchy_id,
            controllers: controllers
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect(),
            path: path.to_string(),
        });
    }
    Ok(lines)
}

/// The cgroup whose memory limits a process: the v1 `memory` hierarchy when one is mounted
/// (its line is present), else the v2 unified one (`0::path`).
pub fn memory_cgroup(lines: &[CgroupLine]) -> Option<(CgroupVersion, String)> {
    lines
        .iter()
        .find(|line| line.hierarchy_id != 0 && line.controllers.iter().any(|c| c == "memory"))
        .map(|line| (CgroupVersion::V1, line.path.clone()))
        .or_else(|| {
            lines
                .iter()
                .find(|line| line.hierarchy_id == 0 && line.controllers.is_empty())
                .map(|line| (CgroupVersion::V2, line.path.clone()))
        })
}

/// A cgroup filesystem mount, from `/proc/PID/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupMount {
    /// v1 (`cgroup`) or v2 (`cgroup2`).
    pub version: CgroupVersion,
    /// The v1 controllers of the mount (from its super options); empty for v2.
    pub controllers: Vec<String>,
    /// The cgroup at the mount's root (not `/` inside a cgroup namespace or a bind mount).
    pub root: String,
    /// Where it is mounted.
    pub mount_point: String,
}

/// The cgroup mounts of a `mountinfo` file (proc(5): `id parent major:minor root mount-point
/// options [optional…] - fstype source super-options`); other lines are skipped.
pub fn parse_mountinfo(text: &str) -> Result<Vec<CgroupMount>, CgroupError> {
    let mut mounts = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(separator) = fields.iter().position(|field| *field == "-") else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(bad("mountinfo", index + 1, line, "a mount line with ` - `"));
        };
        let (Some(root), Some(mount_point), Some(fstype)) =
            (fields.get(3), fields.get(4), fields.get(separator + 1))
        else {
            return Err(bad("mountinfo", index + 1, line, "a complete mount line"));
        };
        let version = match *fstype {
            "cgroup" => CgroupVersion::V1,
            "cgroup2" => CgroupVersion::V2,
            _ => continue,
        };
        let controllers = match version {
            CgroupVersion::V1 => fields
                .get(separator + 3)
                .map(|options| {
                    options
                        .split(',')
                        .filter(|option| {
                            !matches!(*option, "rw" | "ro") && !option.starts_with("release_agent")
                        })
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            CgroupVersion::V2 => Vec::new(),
        };
        mounts.push(CgroupMount {
            version,
            controllers,
            root: unescape_octal(root),
            mount_point: unescape_octal(mount_point),
        });
    }
    Ok(mounts)
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape_octal(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let digits = bytes.get(index + 1..index + 4).unwrap_or_default();
        if bytes[index] == b'\\'
            && digits.len() == 3
            && digits.iter().all(|d| (b'0'..=b'7').contains(d))
        {
            let value = digits
                .iter()
                .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                index += 4;
                continue;
            }
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The directory holding the memory files of the cgroup `path` of `version`: the mount of that
/// version (v1: the one with the `memory` controller) whose root is a prefix of `path`, joined
/// with the rest of `path`. `None` when no mount fits (the controller is not mounted here).
pub fn memory_directory(
    mounts: &[CgroupMount],
    version: CgroupVersion,
    path: &str,
) -> Option<String> {
    mounts
        .iter()
        .filter(|mount| mount.version == version)
        .filter(|mount| {
            version == CgroupVersion::V2 || mount.controllers.iter().any(|c| c == "memory")
        })
        .find_map(|mount| {
            let rest = if mount.root == "/" {
                Some(path)
            } else {
                path.strip_prefix(mount.root.as_str())
                    .filter(|rest| rest.is_empty() || rest.starts_with('/'))
            }?;
            let rest = rest.trim_start_matches('/');
            let base = mount.mount_point.trim_end_matches('/');
            Some(if rest.is_empty() {
                base.to_string()
            } else {
                format!("{base}/{rest}")
            })
        })
}

/// A file holding one byte count (`memory.current`, `memory.peak`, `memory.usage_in_bytes`,
/// `memory.max_usage_in_bytes`, `memory.failcnt` as a count).
pub fn parse_single_number(text: &str, file: &str) -> Result<u64, CgroupError> {
    let value = text.trim();
    value
        .parse()
        .map_err(|_| bad(file, 1, value, "a whole number"))
}

/// v2 `memory.max` (or `memory.high`): `max` means no limit.
pub fn parse_v2_limit(text: &str, file: &str) -> Result<Option<Bytes>, CgroupError> {
    if text.trim() == "max" {
        return Ok(None);
    }
    parse_single_number(text, file).map(|value| Some(Bytes(value)))
}

/// v1 `memory.limit_in_bytes`: the page counter's maximum means no limit.
pub fn parse_v1_limit(text: &str, file: &str) -> Result<Option<Bytes>, CgroupError> {
    let value = parse_single_number(text, file)?;
    Ok((value < V1_UNLIMITED_FROM).then_some(Bytes(value)))
}

/// v2 `memory.events` (or `memory.events.local`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryEvents {
    /// `low`: reclaimed below the `memory.low` protection.
    pub low: Option<u64>,
    /// `high`: throttled over `memory.high`.
    pub high: Option<u64>,
    /// `max`: about to go over `memory.max`.
    pub max: Option<u64>,
    /// `oom`: hit the limit and allocations would fail.
    pub oom: Option<u64>,
    /// `oom_kill`: processes killed by the OOM killer.
    pub oom_kill: Option<u64>,
    /// `oom_group_kill`: whole-group kills (Linux 5.17+).
    pub oom_group_kill: Option<u64>,
}

/// Parses v2 `memory.events`: `key value` lines. `oom_kill` must be there (it has been since
/// the file exists, Linux 4.13); unknown keys of newer kernels are skipped.
pub fn parse_memory_events(text: &str) -> Result<MemoryEvents, CgroupError> {
    let mut events = MemoryEvents::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(' ') else {
            return Err(bad("memory.events", index + 1, line, "`key value`"));
        };
        let value: u64 = value
            .trim()
            .parse()
            .map_err(|_| bad("memory.events", index + 1, line, "`key count`"))?;
        let slot = match key {
            "low" => &mut events.low,
            "high" => &mut events.high,
            "max" => &mut events.max,
            "oom" => &mut events.oom,
            "oom_kill" => &mut events.oom_kill,
            "oom_group_kill" => &mut events.oom_group_kill,
            _ => continue,
        };
        *slot = Some(value);
    }
    if events.oom_kill.is_none() {
        return Err(CgroupError::Missing {
            file: "memory.events".into(),
            key: "oom_kill",
        });
    }
    Ok(events)
}

/// v1 `memory.oom_control`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OomControl {
    /// `oom_kill_disable 1`: the OOM killer is off for this cgroup (tasks hang instead).
    pub oom_kill_disable: bool,
    /// `under_oom 1`: the cgroup is in an OOM state now.
    pub under_oom: bool,
    /// `oom_kill N`: processes killed (Linux 4.13+; `None` on older kernels).
    pub oom_kill: Option<u64>,
}

/// Parses v1 `memory.oom_control`.
pub fn parse_oom_control(text: &str) -> Result<OomControl, CgroupError> {
    let mut control = OomControl::default();
    let mut under_oom = None;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(' ') else {
            return Err(bad("memory.oom_control", index + 1, line, "`key value`"));
        };
        let value: u64 = value
            .trim()
            .parse()
            .map_err(|_| bad("memory.oom_control", index + 1, line, "`key count`"))?;
        match key {
            "oom_kill_disable" => control.oom_kill_disable = value != 0,
            "under_oom" => under_oom = Some(value != 0),
            "oom_kill" => control.oom_kill = Some(value),
            _ => {}
        }
    }
    control.under_oom = under_oom.ok_or(CgroupError::Missing {
        file: "memory.oom_control".into(),
        key: "under_oom",
    })?;
    Ok(control)
}

/// The container and pod a cgroup path names, or `None` when it names neither (a host
/// process, a systemd service, or a container with its own cgroup namespace, where the path
/// is just `/`).
pub fn container_identity(path: &str) -> Option<ContainerIdentity> {
    let mut identity = ContainerIdentity {
        cgroup_path: path.to_string(),
        ..ContainerIdentity::default()
    };
    let mut kubepods = false;
    let mut qos = None;
    let mut previous = "";
    for component in path.split('/').filter(|c| !c.is_empty()) {
        if component == "kubepods" || component == "kubepods.slice" {
            kubepods = true;
        } else if kubepods && identity.pod_uid.is_none() {
            // cgroupfs driver: kubepods/{burstable,besteffort}/pod<uid>/<container>;
            // systemd driver: kubepods-{burstable,besteffort}-pod<uid_with_underscores>.slice.
            match component {
                "burstable" | "kubepods-burstable.slice" => qos = Some(QosClass::Burstable),
                "besteffort" | "kubepods-besteffort.slice" => qos = Some(QosClass::BestEffort),
                _ => {
                    let uid = component.strip_prefix("pod").or_else(|| {
                        component
                            .strip_suffix(".slice")
                            .and_then(|stem| stem.rsplit_once("-pod").map(|(_, uid)| uid))
                    });
                    if let Some(uid) = uid.filter(|uid| is_pod_uid(uid)) {
                        identity.pod_uid = Some(uid.replace('_', "-"));
                    }
                }
            }
        } else if let Some((runtime, id)) = scoped_container(component) {
            identity.runtime = Some(runtime);
            identity.id = Some(id.to_string());
        } else if is_container_id(component) {
            if previous == "docker" {
                identity.runtime = Some(ContainerRuntime::Docker);
            }
            if previous == "docker" || identity.pod_uid.is_some() {
                identity.id = Some(component.to_string());
            }
        }
        previous = component;
    }
    if identity.pod_uid.is_some() {
        identity.qos_class = Some(qos.unwrap_or(QosClass::Guaranteed));
    }
    (identity.id.is_some() || identity.pod_uid.is_some()).then_some(identity)
}

/// `docker-<id>.scope`, `cri-containerd-<id>.scope`, `crio-<id>.scope`, `libpod-<id>.scope`
/// (not `crio-conmon-<id>.scope`: that is CRI-O's monitor process, not the container).
fn scoped_container(component: &str) -> Option<(ContainerRuntime, &str)> {
    let stem = component.strip_suffix(".scope")?;
    let (runtime, id) = if let Some(id) = stem.strip_prefix("cri-containerd-") {
        (ContainerRuntime::Containerd, id)
    } else if let Some(id) = stem.strip_prefix("crio-") {
        (ContainerRuntime::CriO, id)
    } else if let Some(id) = stem.strip_prefix("docker-") {
        (ContainerRuntime::Docker, id)
    } else if let Some(id) = stem.strip_prefix("libpod-") {
        (ContainerRuntime::Podman, id)
    } else {
        return None;
    };
    is_container_id(id).then_some((runtime, id))
}

/// 64 lowercase hex digits, as Docker, containerd and CRI-O name containers.
fn is_container_id(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A pod UID: 36 characters of hex in 8-4-4-4-12 groups, separated by `-` or (systemd) `_`.
fn is_pod_uid(text: &str) -> bool {
    let groups: Vec<&str> = text.split(['-', '_']).collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(group, length)| {
            group.len() == length && group.bytes().all(|b| b.is_ascii_hexdigit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/host/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    const ID: &str = "4c6f1b2a9d3e5f7081920a1b2c3d4e5f60718293a4b5c6d7e8f90123456789ab";

    #[test]
    fn this_box_mixes_v1_memory_and_v2() {
        let lines = parse_proc_cgroup(&fixture("box-v1/proc-cgroup.txt")).unwrap();
        assert_eq!(lines.len(), 10);
        assert_eq!(lines[9].hierarchy_id, 0);
        assert_eq!(
            memory_cgroup(&lines),
            Some((
                CgroupVersion::V1,
                "/process_api/5ad229d2742fa1e9d8bbb3f5569b76ef".to_string()
            ))
        );
        let mounts = parse_mountinfo(&fixture("box-v1/mountinfo.txt")).unwrap();
        assert_eq!(mounts.len(), 10);
        assert_eq!(
            memory_directory(&mounts, CgroupVersion::V1, "/process_api/5ad2").as_deref(),
            Some("/sys/fs/cgroup/memory/process_api/5ad2")
        );
        assert_eq!(
            memory_directory(&mounts, CgroupVersion::V2, "/").as_deref(),
            Some("/sys/fs/cgroup/unified")
        );
        assert_eq!(container_identity(&lines[4].path), None);
    }

    #[test]
    fn v2_only_hosts_use_the_unified_line() {
        let lines = parse_proc_cgroup(&fixture("k8s-v2/proc-cgroup.txt")).unwrap();
        let (version, path) = memory_cgroup(&lines).unwrap();
        assert_eq!(version, CgroupVersion::V2);
        let identity = container_identity(&path).unwrap();
        assert_eq!(identity.runtime, Some(ContainerRuntime::Containerd));
        assert_eq!(
            identity.pod_uid.as_deref(),
            Some("8d1c2b3a-4e5f-4a6b-9c7d-0e1f2a3b4c5d")
        );
        assert_eq!(identity.qos_class, Some(QosClass::Burstable));
        assert_eq!(identity.id.as_deref().map(str::len), Some(64));
    }

    #[test]
    fn cgroup_namespace_mounts_map_paths_below_their_root() {
        let mounts = parse_mountinfo(
            "30 25 0:26 /kubepods/pod1/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
             31 25 0:27 / /sys/fs/cgroup/my\\040mount rw - cgroup2 cgroup2 rw\n\
             32 25 8:1 / / rw - ext4 /dev/sda1 rw\n",
        )
        .unwrap();
        assert_eq!(mounts.len(), 2);
        assert_eq!(
            memory_directory(&mounts, CgroupVersion::V1, "/kubepods/pod1/abc").as_deref(),
            Some("/sys/fs/cgroup/memory")
        );
        assert_eq!(
            memory_directory(&mounts, CgroupVersion::V1, "/kubepods/pod1/abcdef"),
            None
        );
        assert_eq!(
            memory_directory(&mounts, CgroupVersion::V2, "/a/b").as_deref(),
            Some("/sys/fs/cgroup/my mount/a/b")
        );
        assert!(parse_mountinfo("garbage\n").is_err());
    }

    #[test]
    fn v1_files_recorded_after_an_oom_kill() {
        let limit = parse_v1_limit(&fixture("box-v1-oom/memory.limit_in_bytes"), "l").unwrap();
        assert_eq!(limit, Some(Bytes(64 << 20)));
        let peak = parse_single_number(&fixture("box-v1-oom/memory.max_usage_in_bytes"), "p");
        assert_eq!(peak, Ok(64 << 20));
        assert_eq!(
            parse_single_number(&fixture("box-v1-oom/memory.failcnt"), "f"),
            Ok(67)
        );
        let control = parse_oom_control(&fixture("box-v1-oom/memory.oom_control")).unwrap();
        assert_eq!(
            control,
            OomControl {
                oom_kill_disable: false,
                under_oom: false,
                oom_kill: Some(1)
            }
        );
        let unlimited = parse_v1_limit(&fixture("box-v1/memory.limit_in_bytes"), "l");
        assert_eq!(unlimited, Ok(None));
        assert_eq!(parse_v1_limit("9223372036854710272\n", "l"), Ok(None));
    }

    #[test]
    fn v2_files_from_the_kernel_documentation() {
        assert_eq!(
            parse_v2_limit(&fixture("k8s-v2/memory.max"), "memory.max"),
            Ok(Some(Bytes(8 << 30)))
        );
        assert_eq!(parse_v2_limit("max\n", "memory.max"), Ok(None));
        let events = parse_memory_events(&fixture("k8s-v2/memory.events")).unwrap();
        assert_eq!(events.oom_kill, Some(1));
        assert_eq!(events.oom, Some(1));
        assert_eq!(events.max, Some(57));
        assert_eq!(events.oom_group_kill, Some(0));
        assert_eq!(
            parse_single_number(&fixture("k8s-v2/memory.peak"), "memory.peak"),
            Ok(8 << 30)
        );
    }

    #[test]
    fn bad_files_say_which_and_where() {
        assert_eq!(
            parse_v2_limit("12G\n", "memory.max")
                .unwrap_err()
                .to_string(),
            "`memory.max` line 1: `12G` is not a whole number"
        );
        assert_eq!(
            parse_memory_events("low 0\nhigh x\n")
                .unwrap_err()
                .to_string(),
            "`memory.events` line 2: `high x` is not `key count`"
        );
        assert_eq!(
            parse_memory_events("low 0\n").unwrap_err().to_string(),
            "`memory.events` has no `oom_kill` line"
        );
        assert_eq!(
            parse_oom_control("oom_kill 1\n").unwrap_err().to_string(),
            "`memory.oom_control` has no `under_oom` line"
        );
        assert_eq!(
            parse_proc_cgroup("4:memory\n").unwrap_err().to_string(),
            "`cgroup` line 1: `4:memory` is not `hierarchy-ID:controllers:path`"
        );
        assert!(parse_proc_cgroup("x:memory:/\n").is_err());
        // Older kernels have no `oom_kill` in `memory.oom_control`.
        assert_eq!(
            parse_oom_control("oom_kill_disable 0\nunder_oom 1\n")
                .map(|c| (c.under_oom, c.oom_kill)),
            Ok((true, None))
        );
    }

    #[test]
    fn container_paths_of_each_runtime() {
        let uid = "8d1c2b3a-4e5f-4a6b-9c7d-0e1f2a3b4c5d";
        let underscored = uid.replace('-', "_");
        let cases: Vec<(String, Option<ContainerRuntime>, bool, Option<QosClass>)> = vec![
            (format!("/docker/{ID}"), Some(ContainerRuntime::Docker), false, None),
            (
                format!("/system.slice/docker-{ID}.scope"),
                Some(ContainerRuntime::Docker),
                false,
                None,
            ),
            (
                format!("/machine.slice/libpod-{ID}.scope/container"),
                Some(ContainerRuntime::Podman),
                false,
                None,
            ),
            (
                format!("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{underscored}.slice/cri-containerd-{ID}.scope"),
                Some(ContainerRuntime::Containerd),
                true,
                Some(QosClass::Burstable),
            ),
            (
                format!("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{underscored}.slice/crio-{ID}.scope"),
                Some(ContainerRuntime::CriO),
                true,
                Some(QosClass::BestEffort),
            ),
            (
                format!("/kubepods.slice/kubepods-pod{underscored}.slice/cri-containerd-{ID}.scope"),
                Some(ContainerRuntime::Containerd),
                true,
                Some(QosClass::Guaranteed),
            ),
            (format!("/kubepods/besteffort/pod{uid}/{ID}"), None, true, Some(QosClass::BestEffort)),
            (format!("/kubepods/burstable/pod{uid}/{ID}"), None, true, Some(QosClass::Burstable)),
            (format!("/kubepods/pod{uid}/{ID}"), None, true, Some(QosClass::Guaranteed)),
        ];
        for (path, runtime, in_pod, qos) in cases {
            let identity = container_identity(&path).unwrap_or_else(|| panic!("{path}"));
            assert_eq!(identity.runtime, runtime, "{path}");
            assert_eq!(identity.id.as_deref(), Some(ID), "{path}");
            assert_eq!(identity.pod_uid.as_deref(), in_pod.then_some(uid), "{path}");
            assert_eq!(identity.qos_class, qos, "{path}");
            assert_eq!(identity.cgroup_path, path);
            assert_eq!((identity.pod_name, identity.namespace), (None, None));
        }
        // The pod's own cgroup (no container below it yet) still names the pod.
        let pod = container_identity(&format!("/kubepods/burstable/pod{uid}")).unwrap();
        assert_eq!((pod.id, pod.pod_uid.as_deref()), (None, Some(uid)));
        for plain in [
            "/",
            "/user.slice/user-1000.slice/session-3.scope",
            "/system.slice/containerd.service",
            "/docker/not-an-id",
            &format!("/system.slice/crio-conmon-{ID}.scope"),
            &format!("/somewhere/{ID}"),
            "/kubepods/burstable/podnot-a-uid",
        ] {
            assert_eq!(container_identity(plain), None, "{plain}");
        }
    }
}
