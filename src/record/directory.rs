//! The run directory of `oomdoc run`: created, checked that it holds nothing but an earlier
//! run's files (removed with `--force`, links themselves and never their targets), and locked
//! for the whole run.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::TORCH_NOTES_FILE;
use crate::error::HintedError;
use crate::model::run::{LOG_FILE, RECORD_FILE, TORCH_SNAPSHOT_FILE};
use crate::source::process::{self, RunClock};

/// Lock file in the run directory, locked (`flock`, exclusive) for the whole run.
const LOCK_FILE: &str = ".oomdoc.lock";

/// The directory lock of one run: released when oomdoc exits.
#[derive(Debug)]
pub(crate) struct RunLock {
    _file: File,
}

/// Takes the lock of `directory`, refusing when another `oomdoc run` holds it: two runs on one
/// directory would lose one record and log, or mix them.
fn lock_directory(directory: &Path) -> anyhow::Result<RunLock> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = directory.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .with_context(|| format!("cannot open the lock file `{}`", path.display()))?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(RunLock { _file: file }),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(HintedError::new(
            format!(
                "`{}` is in use by another `oomdoc run`",
                directory.display()
            ),
            "wait for that run to end, or give `--out` another directory",
        )
        .into()),
        Err(error) => Err(anyhow::Error::new(std::io::Error::from(error))
            .context(format!("cannot lock `{}`", path.display()))),
    }
}

/// Whether oomdoc owns a file of a run directory (removed by `--force`): the record, the log,
/// the `--torch-snapshot` files and hook directory, and temporary files a killed run left.
fn is_owned_file(name: &str) -> bool {
    matches!(
        name,
        RECORD_FILE | LOG_FILE | TORCH_SNAPSHOT_FILE | TORCH_NOTES_FILE
    ) || name == process::PYTHON_HOOK_DIR
        || (name.starts_with("torch_snapshot") && name.ends_with(".pickle"))
        || name.starts_with(".tmp")
}

/// Creates the run directory and locks it, refusing to mix a new run into a directory that
/// holds other files, or an earlier run without `--force`. With `--force`, what oomdoc owns is
/// removed (links themselves, never their targets) and made anew by the run.
pub(crate) fn prepare_directory(
    out: Option<&Path>,
    force: bool,
) -> anyhow::Result<(PathBuf, RunLock)> {
    let directory = match out {
        Some(out) => out.to_path_buf(),
        None => {
            // Two runs started in the same second each get their own default directory.
            let base = format!("oomdoc-run-{}", RunClock::start().started_compact());
            let mut directory = PathBuf::from(&base);
            let mut suffix = 2;
            while directory.symlink_metadata().is_ok() {
                directory = PathBuf::from(format!("{base}-{suffix}"));
                suffix += 1;
            }
            directory
        }
    };
    if directory.exists() && !directory.is_dir() {
        return Err(HintedError::new(
            format!("`--out {}` is a file, not a directory", directory.display()),
            "give `--out` a new or empty directory",
        )
        .into());
    }
    let not_a_run = || -> anyhow::Error {
        HintedError::new(
            format!(
                "`{}` exists and is not an oomdoc run directory",
                directory.display()
            ),
            "give `--out` a new or empty directory",
        )
        .into()
    };
    let names = |directory: &Path| -> anyhow::Result<Vec<String>> {
        let entries = std::fs::read_dir(directory)
            .with_context(|| format!("cannot read `{}`", directory.display()))?;
        Ok(entries
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name != LOCK_FILE)
            .collect())
    };
    let is_run = |directory: &Path| {
        directory.join(RECORD_FILE).symlink_metadata().is_ok()
            || directory.join(LOCK_FILE).symlink_metadata().is_ok()
    };
    // A foreign directory gets no lock file of ours.
    if directory.exists() && !names(&directory)?.is_empty() && !is_run(&directory) {
        return Err(not_a_run());
    }
    std::fs::create_dir_all(&directory)
        .with_context(|| format!("cannot create `{}`", directory.display()))?;
    let lock = lock_directory(&directory)?;
    let present = names(&directory)?;
    if !present.is_empty() {
        if directory.join(RECORD_FILE).symlink_metadata().is_err() {
            return Err(not_a_run());
        }
        if !force {
            return Err(HintedError::new(
                format!("`{}` already holds an oomdoc run", directory.display()),
                "give `--out` a new directory, or add `--force` to replace that run",
            )
            .into());
        }
        for name in present.iter().filter(|name| is_owned_file(name)) {
            let path = directory.join(name);
            process::remove_owned(&path)
                .with_context(|| format!("cannot remove `{}`", path.display()))?;
        }
    }
    Ok((directory, lock))
}
