//! Host facts that go with a live GPU inventory: who owns each GPU process (from `/proc`),
//! who we are, and whether we run in a container. Reading only; `parse::container_env`
//! interprets what is read.

use std::path::Path;

use crate::env_vars;
use crate::model::machine::{GpuProcess, HostContext};
use crate::parse::container_env::{
    detect_container, parse_nvidia_visible_devices, ContainerEvidence,
};

/// The longest command line kept, in characters (a `torchrun` line can be very long).
const COMMAND_LIMIT: usize = 512;

/// Host context: our user id, the container, `NVIDIA_VISIBLE_DEVICES`.
pub fn context() -> HostContext {
    let evidence = ContainerEvidence {
        dockerenv: Path::new("/.dockerenv").exists(),
        containerenv: Path::new("/run/.containerenv").exists(),
        init_cgroup: std::fs::read_to_string("/proc/1/cgroup").ok(),
    };
    let nvidia_visible = std::env::var(env_vars::NVIDIA_VISIBLE_DEVICES).ok();
    HostContext {
        user_id: status_field("/proc/self/status", "Uid:"),
        container: detect_container(&evidence),
        nvidia_visible_devices: parse_nvidia_visible_devices(nvidia_visible.as_deref()),
    }
}

/// Fills in name, command, owner and parent of a process from `/proc/<pid>`.
pub fn describe(process: &mut GpuProcess) {
    let directory = format!("/proc/{}", process.pid);
    if !Path::new(&directory).exists() {
        process.in_pid_namespace = Some(false);
        process.name_unavailable_reason = Some(format!(
            "no PID {} in oomdoc's PID namespace: NVML gives host PIDs (run oomdoc on the host, or the container with `--pid=host`)",
            process.pid
        ));
        return;
    }
    process.in_pid_namespace = Some(true);
    let comm = std::fs::read_to_string(format!("{directory}/comm"))
        .ok()
        .map(|text| text.trim_end().to_string())
        .filter(|text| !text.is_empty());
    let command = std::fs::read(format!("{directory}/cmdline"))
        .ok()
        .map(|bytes| command_line(&bytes))
        .filter(|text| !text.is_empty());
    if comm.is_none() && command.is_none() {
        process.name_unavailable_reason =
            Some(format!("`{directory}/comm` and `cmdline` are not readable"));
    }
    process.name = comm.or_else(|| process.name.take());
    process.command = command;
    let status = format!("{directory}/status");
    process.user_id = status_field(&status, "Uid:");
    process.parent_pid = status_field(&status, "PPid:");
    if let Some(parent) = process.parent_pid.filter(|pid| *pid > 0) {
        process.parent_name = std::fs::read_to_string(format!("/proc/{parent}/comm"))
            .ok()
            .map(|text| text.trim_end().to_string());
    }
}

/// `/proc/<pid>/cmdline` (NUL-separated) as one line, cut at [`COMMAND_LIMIT`] characters.
fn command_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let joined: String = text
        .split('\0')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if joined.chars().count() > COMMAND_LIMIT {
        let mut cut: String = joined.chars().take(COMMAND_LIMIT).collect();
        cut.push('…');
        cut
    } else {
        joined
    }
}

/// The first number after `field` in a `/proc/*/status` file (`Uid:` gives the real uid).
fn status_field(path: &str, field: &str) -> Option<u32> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_this_process() {
        let mut process = GpuProcess {
            pid: std::process::id(),
            ..GpuProcess::default()
        };
        describe(&mut process);
        assert_eq!(process.in_pid_namespace, Some(true));
        assert!(process.name.is_some());
        assert!(process.command.is_some());
        assert!(process.user_id.is_some());
        assert!(process.parent_pid.is_some());
        assert_eq!(process.user_id, context().user_id);
    }

    #[test]
    fn missing_pid_is_foreign() {
        // PIDs are below 2^22 on Linux (`pid_max`), so this one cannot exist.
        let mut process = GpuProcess {
            pid: u32::MAX - 1,
            ..GpuProcess::default()
        };
        describe(&mut process);
        assert_eq!(process.in_pid_namespace, Some(false));
        assert!(process.name.is_none());
        assert!(process.name_unavailable_reason.is_some());
    }

    #[test]
    fn command_lines_are_joined_and_cut() {
        assert_eq!(
            command_line(b"python3\0train.py\0--lr\x001e-4\0"),
            "python3 train.py --lr 1e-4"
        );
        let long = vec![b'a'; 600];
        assert_eq!(command_line(&long).chars().count(), COMMAND_LIMIT + 1);
    }
}
