//! `/proc/PID/status`, `/proc/PID/stat` and `/proc/PID/environ`, as text. Pure: `source/`
//! reads the files; this module only interprets them.
//!
//! Formats: proc(5) and the kernel's `Documentation/filesystems/proc.rst`. `status` sizes are
//! printed in `kB`, which the kernel means as 1024 bytes (`fs/proc/task_mmu.c`,
//! `task_mem()` shifts page counts by `PAGE_SHIFT - 10`).

use std::collections::BTreeMap;

use crate::model::Bytes;

/// What is wrong with a `/proc` file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcError {
    /// A field the file must have is not there.
    #[error("`{file}` has no `{field}` field")]
    Missing {
        /// Which file, e.g. `status`.
        file: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field's value is not what the format says.
    #[error("`{file}` line {line}: `{field}` is `{value}`, not {expected}")]
    BadValue {
        /// Which file.
        file: &'static str,
        /// The 1-based line.
        line: usize,
        /// The field.
        field: &'static str,
        /// The value as written.
        value: String,
        /// What the format expects.
        expected: &'static str,
    },
}

/// The fields of `/proc/PID/status` oomdoc uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcStatus {
    /// `Name:` (the command name, at most 15 bytes).
    pub name: Option<String>,
    /// `Pid:`.
    pub pid: u32,
    /// `PPid:` (0 for PID 1 and kernel threads' parent).
    pub parent_pid: u32,
    /// The real user id (first number of `Uid:`).
    pub user_id: Option<u32>,
    /// `VmRSS:` resident set size now; `None` for kernel threads, which have no memory map.
    pub rss_bytes: Option<Bytes>,
    /// `VmHWM:` the highest resident set size ("high water mark") of the process's life.
    pub rss_peak_bytes: Option<Bytes>,
}

/// Parses `/proc/PID/status`.
pub fn parse_status(text: &str) -> Result<ProcStatus, ProcError> {
    let mut status = ProcStatus::default();
    let mut pid = None;
    let mut parent_pid = None;
    for (index, line) in text.lines().enumerate() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let number = |field: &'static str| -> Result<u64, ProcError> {
            value
                .split_whitespace()
                .next()
                .and_then(|first| first.parse().ok())
                .ok_or_else(|| ProcError::BadValue {
                    file: "status",
                    line: index + 1,
                    field,
                    value: value.to_string(),
                    expected: "a number",
                })
        };
        let kilobytes = |field: &'static str| -> Result<Bytes, ProcError> {
            let count = number(field)?;
            if !value.ends_with(" kB") {
                return Err(ProcError::BadValue {
                    file: "status",
                    line: index + 1,
                    field,
                    value: value.to_string(),
                    expected: "a size in `kB`",
                });
            }
            Ok(Bytes(count.saturating_mul(1024)))
        };
        let small = |field: &'static str| -> Result<u32, ProcError> {
            u32::try_from(number(field)?).map_err(|_| ProcError::BadValue {
                file: "status",
                line: index + 1,
                field,
                value: value.to_string(),
                expected: "a 32-bit number",
            })
        };
        match key {
            "Name" => status.name = Some(value.to_string()),
            "Pid" => pid = Some(small("Pid")?),
            "PPid" => parent_pid = Some(small("PPid")?),
            "Uid" => status.user_id = Some(small("Uid")?),
            "VmRSS" => status.rss_bytes = Some(kilobytes("VmRSS")?),
            "VmHWM" => status.rss_peak_bytes = Some(kilobytes("VmHWM")?),
            _ => {}
        }
    }
    status.pid = pid.ok_or(ProcError::Missing {
        file: "status",
        field: "Pid",
    })?;
    status.parent_pid = parent_pid.ok_or(ProcError::Missing {
        file: "status",
        field: "PPid",
    })?;
    Ok(status)
}

/// The fields of `/proc/PID/stat` oomdoc uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// Field 1, the PID.
    pub pid: u32,
    /// Field 2 without its parentheses (may hold spaces and parentheses itself).
    pub command: String,
    /// Field 3, one letter (`R`, `S`, `D`, `Z`, …).
    pub state: char,
    /// Field 4, the parent PID.
    pub parent_pid: u32,
}

/// Parses `/proc/PID/stat`: `pid (comm) state ppid …`. The command name can hold `)` and
/// spaces, so it ends at the *last* `)` of the line (as procps does).
pub fn parse_stat(text: &str) -> Result<ProcStat, ProcError> {
    let bad = |field: &'static str, value: &str, expected: &'static str| ProcError::BadValue {
        file: "stat",
        line: 1,
        field,
        value: value.chars().take(80).collect(),
        expected,
    };
    let open = text
        .find(" (")
        .ok_or_else(|| bad("comm", text, "`(name)`"))?;
    let close = text
        .rfind(')')
        .ok_or_else(|| bad("comm", text, "`(name)`"))?;
    if close < open {
        return Err(bad("comm", text, "`(name)`"));
    }
    let pid_text = &text[..open];
    let pid = pid_text
        .trim()
        .parse()
        .map_err(|_| bad("pid", pid_text, "a number"))?;
    let command = text[open + 2..close].to_string();
    let mut rest = text[close + 1..].split_whitespace();
    let state_text = rest.next().ok_or(ProcError::Missing {
        file: "stat",
        field: "state",
    })?;
    let mut letters = state_text.chars();
    let state = match (letters.next(), letters.next()) {
        (Some(letter), None) => letter,
        _ => return Err(bad("state", state_text, "one letter")),
    };
    let parent_text = rest.next().ok_or(ProcError::Missing {
        file: "stat",
        field: "ppid",
    })?;
    let parent_pid = parent_text
        .parse()
        .map_err(|_| bad("ppid", parent_text, "a number"))?;
    Ok(ProcStat {
        pid,
        command,
        state,
        parent_pid,
    })
}

/// The resident set size in pages from `/proc/PID/statm` (`size resident shared text lib data
/// dt`, in pages): the same count as `VmRSS` of `status` (both are the mm's RSS counters), far
/// cheaper for the kernel to print.
pub fn parse_statm_resident_pages(text: &str) -> Result<u64, ProcError> {
    let mut fields = text.split_whitespace();
    let _size = fields.next();
    let resident = fields.next().ok_or(ProcError::Missing {
        file: "statm",
        field: "resident",
    })?;
    resident.parse().map_err(|_| ProcError::BadValue {
        file: "statm",
        line: 1,
        field: "resident",
        value: resident.chars().take(40).collect(),
        expected: "a number of pages",
    })
}

/// `AT_PAGESZ` from `/proc/self/auxv` (pairs of native-endian words; 64-bit Linux), or `None`
/// when absent or the file is not whole pairs.
pub fn parse_auxv_page_size(bytes: &[u8]) -> Option<u64> {
    /// `AT_PAGESZ` in `<elf.h>`.
    const AT_PAGESZ: u64 = 6;
    if bytes.len() % 16 != 0 {
        return None;
    }
    bytes.chunks_exact(16).find_map(|pair| {
        let (key, value) = pair.split_at(8);
        let key = u64::from_ne_bytes(key.try_into().ok()?);
        let value = u64::from_ne_bytes(value.try_into().ok()?);
        (key == AT_PAGESZ && value.is_power_of_two()).then_some(value)
    })
}

/// The variables named in `keys` from `/proc/PID/environ` (NUL-separated `NAME=value`).
/// Values that are not UTF-8 are skipped; other variables are never kept (secrets).
pub fn parse_environ(bytes: &[u8], keys: &[&str]) -> BTreeMap<String, String> {
    bytes
        .split(|byte| *byte == 0)
        .filter_map(|entry| std::str::from_utf8(entry).ok())
        .filter_map(|entry| entry.split_once('='))
        .filter(|(name, _)| keys.contains(name))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/host/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn status_of_a_user_process_has_rss_and_peak() {
        let status = parse_status(&fixture("box-v1/proc-status.txt")).unwrap();
        assert_eq!(status.name.as_deref(), Some("cat"));
        assert_eq!(status.pid, 20175);
        assert_eq!(status.parent_pid, 20171);
        assert_eq!(status.user_id, Some(0));
        assert_eq!(status.rss_bytes, Some(Bytes(1784 * 1024)));
        assert_eq!(status.rss_peak_bytes, Some(Bytes(1784 * 1024)));
    }

    #[test]
    fn kernel_threads_have_no_rss() {
        let status = parse_status(&fixture("box-v1/proc-status-kthread.txt")).unwrap();
        assert_eq!(status.name.as_deref(), Some("kthreadd"));
        assert_eq!((status.pid, status.parent_pid), (2, 0));
        assert_eq!(status.rss_bytes, None);
    }

    #[test]
    fn status_errors_say_where() {
        assert_eq!(
            parse_status("Name:\tx\nPPid:\t1\n")
                .unwrap_err()
                .to_string(),
            "`status` has no `Pid` field"
        );
        assert_eq!(
            parse_status("Pid:\t3\nPPid:\t1\nVmRSS:\t  12 pages\n")
                .unwrap_err()
                .to_string(),
            "`status` line 3: `VmRSS` is `12 pages`, not a size in `kB`"
        );
        assert_eq!(
            parse_status("Pid:\tmany\n").unwrap_err().to_string(),
            "`status` line 1: `Pid` is `many`, not a number"
        );
    }

    #[test]
    fn stat_reads_ppid_after_the_last_parenthesis() {
        let stat = parse_stat(&fixture("box-v1/proc-stat.txt")).unwrap();
        assert_eq!(
            stat,
            ProcStat {
                pid: 20176,
                command: "cat".into(),
                state: 'R',
                parent_pid: 20171
            }
        );
        let odd = parse_stat("42 (a) b (c)) S 7 42 42 0 -1").unwrap();
        assert_eq!(odd.command, "a) b (c)");
        assert_eq!((odd.state, odd.parent_pid), ('S', 7));
    }

    #[test]
    fn stat_errors_say_what() {
        assert_eq!(
            parse_stat("42 (x) S").unwrap_err().to_string(),
            "`stat` has no `ppid` field"
        );
        assert_eq!(
            parse_stat("x (y) S 1").unwrap_err().to_string(),
            "`stat` line 1: `pid` is `x`, not a number"
        );
        assert!(parse_stat("").is_err());
        assert!(parse_stat("1 (a) RS 1").is_err());
    }

    #[test]
    fn statm_and_the_page_size() {
        assert_eq!(
            parse_statm_resident_pages("20533 17932 411 1 0 3000 0\n"),
            Ok(17932)
        );
        assert_eq!(
            parse_statm_resident_pages("20533\n")
                .unwrap_err()
                .to_string(),
            "`statm` has no `resident` field"
        );
        assert!(parse_statm_resident_pages("1 x 2").is_err());
        let mut auxv = Vec::new();
        for (key, value) in [(33u64, 0x7fffu64), (6, 4096), (0, 0)] {
            auxv.extend_from_slice(&key.to_ne_bytes());
            auxv.extend_from_slice(&value.to_ne_bytes());
        }
        assert_eq!(parse_auxv_page_size(&auxv), Some(4096));
        assert_eq!(parse_auxv_page_size(&auxv[..20]), None);
        assert_eq!(parse_auxv_page_size(&auxv[..16]), None);
    }

    #[test]
    fn environ_keeps_only_the_keys_asked_for() {
        let environ =
            b"PATH=/bin\0HOSTNAME=vllm-0\0HF_TOKEN=hf_secret\0KUBERNETES_SERVICE_HOST=10.0.0.1\0\xff=\0";
        let kept = parse_environ(environ, &["HOSTNAME", "KUBERNETES_SERVICE_HOST"]);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept["HOSTNAME"], "vllm-0");
        assert!(!kept.contains_key("HF_TOKEN"));
    }
}
