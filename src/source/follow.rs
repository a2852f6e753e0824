//! Tails log files as they grow, like `tail -F` (`oomdoc exporter --follow`, issue 20).
//!
//! A [`Follower`] holds glob patterns and the files they matched. Each [`Follower::poll`]
//! re-expands the globs when [`Follower::rescan_every`] has passed, then reads what each file
//! gained, at most [`MAX_READ_PER_POLL`] bytes per file, so one flooding log cannot starve the
//! others. A file whose inode changed (rotated: renamed and recreated) is read to its end and
//! reopened from its start; one that shrank (truncated, `copytruncate`) is read again from its
//! start. New files start at their end unless `from_start`; files that appear after the first
//! scan are read from their start (they are new logs, e.g. a restarted container's `1.log`).
//!
//! The globs support `*`, `?` and `[…]` within one path component (no `**`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The most bytes read from one file in one poll.
pub const MAX_READ_PER_POLL: usize = 4 << 20;

/// The most files followed at once (the rest are reported once and ignored).
pub const MAX_FILES: usize = 4096;

/// What happened to a followed file.
#[derive(Debug, PartialEq, Eq)]
pub enum FollowEvent<'a> {
    /// The file is followed from now on (`from_start`: its history is read).
    Opened {
        /// Whether reading starts at the beginning.
        from_start: bool,
    },
    /// The file was rotated or truncated: what follows is read from its start.
    Restarted,
    /// New bytes, cut anywhere.
    Data(&'a [u8]),
    /// The file is gone (deleted, or no longer matched).
    Closed,
    /// The file could not be read.
    Error(String),
}

struct Followed {
    file: File,
    identity: (u64, u64),
    offset: u64,
}

/// Follows the files matching a set of glob patterns.
pub struct Follower {
    patterns: Vec<String>,
    from_start: bool,
    files: BTreeMap<PathBuf, Followed>,
    scanned_once: bool,
    last_scan: Option<Instant>,
    /// How often globs are expanded again.
    pub rescan_every: Duration,
    buffer: Vec<u8>,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("patterns", &self.patterns)
            .field("files", &self.files.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Follower {
    /// Follows the files matching `patterns`; `from_start` reads the files present now from
    /// their start instead of their end.
    pub fn new(patterns: Vec<String>, from_start: bool) -> Self {
        Follower {
            patterns,
            from_start,
            files: BTreeMap::new(),
            scanned_once: false,
            last_scan: None,
            rescan_every: Duration::from_secs(5),
            buffer: vec![0; 64 * 1024],
        }
    }

    /// How many files are followed now.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file is followed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Reads what every followed file gained since the last poll and reports it to `sink`.
    pub fn poll(&mut self, sink: &mut dyn FnMut(&Path, FollowEvent<'_>)) {
        if self
            .last_scan
            .is_none_or(|last| last.elapsed() >= self.rescan_every)
        {
            self.scan(sink);
        }
        let paths: Vec<PathBuf> = self.files.keys().cloned().collect();
        for path in paths {
            self.poll_file(&path, sink);
        }
    }

    fn scan(&mut self, sink: &mut dyn FnMut(&Path, FollowEvent<'_>)) {
        self.last_scan = Some(Instant::now());
        let mut matched = std::collections::BTreeSet::new();
        for pattern in &self.patterns {
            for path in expand(pattern) {
                matched.insert(path);
            }
        }
        let gone: Vec<PathBuf> = self
            .files
            .keys()
            .filter(|path| !matched.contains(*path))
            .cloned()
            .collect();
        for path in gone {
            // Read what it still holds first (rotated away between two polls).
            self.poll_file(&path, sink);
            if self.files.remove(&path).is_some() {
                sink(&path, FollowEvent::Closed);
            }
        }
        let from_start = self.from_start || self.scanned_once;
        for path in matched {
            if self.files.contains_key(&path) || self.files.len() >= MAX_FILES {
                continue;
            }
            match open(&path, from_start) {
                Ok(followed) => {
                    self.files.insert(path.clone(), followed);
                    sink(&path, FollowEvent::Opened { from_start });
                }
                Err(error) => sink(&path, FollowEvent::Error(error.to_string())),
            }
        }
        self.scanned_once = true;
    }

    fn poll_file(&mut self, path: &Path, sink: &mut dyn FnMut(&Path, FollowEvent<'_>)) {
        let Some(followed) = self.files.get_mut(path) else {
            return;
        };
        let now = std::fs::metadata(path).ok();
        let rotated = now
            .as_ref()
            .is_some_and(|metadata| identity(metadata) != followed.identity);
        let truncated = now.as_ref().is_some_and(|metadata| {
            identity(metadata) == followed.identity && metadata.len() < followed.offset
        });
        if truncated && followed.file.seek(SeekFrom::Start(0)).is_ok() {
            followed.offset = 0;
            sink(path, FollowEvent::Restarted);
        }
        // Read the rest of the handle: after a rotation, that is the old file's end.
        let mut budget = MAX_READ_PER_POLL;
        while budget > 0 {
            let want = budget.min(self.buffer.len());
            match followed.file.read(&mut self.buffer[..want]) {
                Ok(0) => break,
                Ok(read) => {
                    followed.offset += read as u64;
                    budget -= read;
                    sink(path, FollowEvent::Data(&self.buffer[..read]));
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    sink(path, FollowEvent::Error(error.to_string()));
                    break;
                }
            }
        }
        if budget == 0 {
            // More to read: leave rotation for the next poll, after the old file's end.
            return;
        }
        if now.is_none() {
            self.files.remove(path);
            sink(path, FollowEvent::Closed);
        } else if rotated {
            match open(path, true) {
                Ok(reopened) => {
                    *followed = reopened;
                    sink(path, FollowEvent::Restarted);
                    self.poll_file(path, sink);
                }
                Err(error) => {
                    self.files.remove(path);
                    sink(path, FollowEvent::Error(error.to_string()));
                }
            }
        }
    }
}

fn open(path: &Path, from_start: bool) -> std::io::Result<Followed> {
    let mut file = File::open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let offset = if from_start {
        0
    } else {
        file.seek(SeekFrom::End(0))?
    };
    Ok(Followed {
        file,
        identity: identity(&metadata),
        offset,
    })
}

#[cfg(unix)]
fn identity(metadata: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (metadata.dev(), metadata.ino())
}

#[cfg(not(unix))]
fn identity(_metadata: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// The regular files a glob pattern matches now, sorted.
pub fn expand(pattern: &str) -> Vec<PathBuf> {
    let path = Path::new(pattern);
    let mut current: Vec<PathBuf> = vec![PathBuf::new()];
    let components: Vec<_> = path.components().collect();
    for (index, component) in components.iter().enumerate() {
        let last = index + 1 == components.len();
        let text = component.as_os_str().to_string_lossy();
        let mut next = Vec::new();
        if !has_wildcard(&text) {
            for base in &current {
                let joined = base.join(component.as_os_str());
                if last || joined.is_dir() {
                    next.push(joined);
                }
            }
        } else {
            for base in &current {
                let directory = if base.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    base.as_path()
                };
                let Ok(entries) = std::fs::read_dir(directory) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    if name.starts_with('.') && !text.starts_with('.') {
                        continue;
                    }
                    if matches(text.as_bytes(), name.as_bytes()) {
                        next.push(base.join(&*name));
                    }
                }
            }
        }
        if next.len() > MAX_FILES * 4 {
            next.truncate(MAX_FILES * 4);
        }
        current = next;
    }
    let mut files: Vec<PathBuf> = current.into_iter().filter(|path| path.is_file()).collect();
    files.sort();
    files.dedup();
    files
}

fn has_wildcard(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Shell-style matching of one path component: `*`, `?`, `[abc]`, `[a-z]`, `[!x]`.
fn matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| matches(rest, &name[skip..])),
        Some((b'?', rest)) => !name.is_empty() && matches(rest, &name[1..]),
        Some((b'[', rest)) => {
            let Some(close) = rest.iter().skip(1).position(|&byte| byte == b']') else {
                return name.first() == Some(&b'[') && matches(rest, &name[1..]);
            };
            let class = &rest[..close + 1];
            let after = &rest[close + 2..];
            let Some((&first, name_rest)) = name.split_first() else {
                return false;
            };
            let (negated, class) = match class.split_first() {
                Some((b'!' | b'^', class)) => (true, class),
                _ => (false, class),
            };
            let mut found = false;
            let mut index = 0;
            while index < class.len() {
                if index + 2 < class.len() && class[index + 1] == b'-' {
                    found |= class[index] <= first && first <= class[index + 2];
                    index += 3;
                } else {
                    found |= class[index] == first;
                    index += 1;
                }
            }
            found != negated && matches(after, name_rest)
        }
        Some((&literal, rest)) => name.first() == Some(&literal) && matches(rest, &name[1..]),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[derive(Default)]
    struct Seen {
        events: Vec<(String, String)>,
        data: BTreeMap<String, Vec<u8>>,
    }

    fn poll(follower: &mut Follower, seen: &mut Seen) {
        follower.poll(&mut |path, event| {
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            match event {
                FollowEvent::Data(bytes) => {
                    seen.data.entry(name).or_default().extend_from_slice(bytes)
                }
                other => seen.events.push((name, format!("{other:?}"))),
            }
        });
    }

    fn append(path: &Path, text: &str) {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn glob_components_match_like_a_shell() {
        let cases = [
            ("*.log", "0.log", true),
            ("*.log", "0.log.gz", false),
            ("?.log", "12.log", false),
            ("[0-9].log", "7.log", true),
            ("[!0-9].log", "7.log", false),
            ("*_*_*", "ns_pod_uid", true),
            ("vllm*", "sglang", false),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(
                matches(pattern.as_bytes(), name.as_bytes()),
                expected,
                "{pattern} {name}"
            );
        }
    }

    #[test]
    fn follows_growth_rotation_truncation_and_new_files() {
        let directory = tempfile::tempdir().unwrap();
        let pod = directory.path().join("ns_pod_uid").join("engine");
        std::fs::create_dir_all(&pod).unwrap();
        let log = pod.join("0.log");
        append(&log, "history\n");
        let pattern = format!("{}/*_*_*/*/*.log", directory.path().display());
        let mut follower = Follower::new(vec![pattern], false);
        follower.rescan_every = Duration::ZERO;
        let mut seen = Seen::default();

        poll(&mut follower, &mut seen);
        assert_eq!(
            seen.events,
            [("0.log".into(), "Opened { from_start: false }".into())]
        );
        assert!(seen.data.is_empty(), "history is skipped by default");

        append(&log, "one\n");
        poll(&mut follower, &mut seen);
        assert_eq!(seen.data["0.log"], b"one\n");

        // Rotation: the old file gets a last line, is renamed, and a new one is created.
        append(&log, "two\n");
        std::fs::rename(&log, pod.join("0.log.20261129")).unwrap();
        append(&log, "three\n");
        poll(&mut follower, &mut seen);
        assert_eq!(seen.data["0.log"], b"one\ntwo\nthree\n");
        assert_eq!(seen.events.last().unwrap().1, "Restarted");

        // Truncation (copytruncate): read again from the start.
        std::fs::write(&log, "").unwrap();
        poll(&mut follower, &mut seen);
        append(&log, "four\n");
        poll(&mut follower, &mut seen);
        assert_eq!(seen.data["0.log"], b"one\ntwo\nthree\nfour\n");
        assert_eq!(seen.events.last().unwrap().1, "Restarted");

        // A file created later is read from its start.
        let restarted = pod.join("1.log");
        append(&restarted, "after restart\n");
        poll(&mut follower, &mut seen);
        assert_eq!(seen.data["1.log"], b"after restart\n");
        assert!(seen
            .events
            .contains(&("1.log".into(), "Opened { from_start: true }".into())));

        // Deleted: closed.
        std::fs::remove_file(&restarted).unwrap();
        poll(&mut follower, &mut seen);
        assert_eq!(
            seen.events.last().unwrap(),
            &("1.log".into(), "Closed".into())
        );
        assert_eq!(follower.len(), 1);
    }

    #[test]
    fn from_start_reads_history() {
        let directory = tempfile::tempdir().unwrap();
        let log = directory.path().join("a.log");
        append(&log, "history\n");
        let mut follower = Follower::new(vec![log.display().to_string()], true);
        let mut seen = Seen::default();
        poll(&mut follower, &mut seen);
        assert_eq!(seen.data["a.log"], b"history\n");
    }
}
