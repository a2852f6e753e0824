//! The only writer to stdout and stderr. stdout is the report; stderr is everything else
//! (errors, warnings, hints, progress).

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use super::args::{ColorChoice, Format, OutputArgs};
use super::settings;
use crate::error::hints;

/// Writes reports and diagnostics.
#[derive(Debug)]
pub struct Output {
    color_choice: ColorChoice,
    warnings: usize,
}

impl Output {
    /// A writer honouring `--color`.
    pub fn new(color_choice: ColorChoice) -> Self {
        Output {
            color_choice,
            warnings: 0,
        }
    }

    /// Whether text written to stdout may use colour (never for files or non-text formats).
    pub fn color_for(&self, args: &OutputArgs) -> bool {
        args.format() == Format::Text
            && args
                .output
                .as_deref()
                .is_none_or(|path| path == Path::new("-"))
            && settings::resolve_color(self.color_choice)
    }

    /// Whether stdout itself would get colour (for verbs without `OutputArgs`).
    pub fn stdout_color(&self) -> bool {
        settings::resolve_color(self.color_choice)
    }

    /// Writes a rendered report to stdout, or atomically to `-o FILE`.
    pub fn report(&mut self, args: &OutputArgs, bytes: &[u8]) -> anyhow::Result<()> {
        match args.output.as_deref() {
            Some(path) if path != Path::new("-") => write_file_atomically(path, bytes)
                .with_context(|| format!("failed to write report to `{}`", path.display())),
            _ => self.stdout(bytes),
        }
    }

    /// Writes bytes to stdout.
    pub fn stdout(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()?;
        Ok(())
    }

    /// A warning on stderr (non-fatal: the command goes on).
    pub fn warn(&mut self, message: &str) {
        self.warnings += 1;
        to_stderr(&format!("warning: {message}"));
    }

    /// A line of diagnostics on stderr (progress, notes).
    pub fn note(&mut self, message: &str) {
        to_stderr(message);
    }

    /// Number of warnings written so far.
    pub fn warnings(&self) -> usize {
        self.warnings
    }

    /// Prints an error with its chain of causes and the hints found along it.
    pub fn error(&mut self, error: &anyhow::Error) {
        to_stderr(&render_error(error));
    }
}

/// One line on stderr. A closed or broken stderr (`2>&1 | true`) loses the line; it must not
/// panic (as the standard print macro does) nor change the exit code.
fn to_stderr(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}

/// Renders an error as `error: …`, `  Caused by: …` lines, then `hint: …` lines.
pub fn render_error(error: &anyhow::Error) -> String {
    let mut text = format!("error: {error}");
    for cause in error.chain().skip(1) {
        text.push_str(&format!("\n  Caused by: {cause}"));
    }
    for hint in hints(error) {
        text.push_str(&format!("\n\nhint: {hint}"));
    }
    text
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so
/// a reader never sees half a file.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut file = report_temp_file(directory, path)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// The temporary file of [`write_file_atomically`]. tempfile creates 0600; a report is an
/// ordinary file: created 0666 less the umask, as `File::create` would (an existing file keeps
/// its mode).
#[cfg(unix)]
fn report_temp_file(directory: &Path, path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(existing) => {
            let file = tempfile::NamedTempFile::new_in(directory)?;
            file.as_file()
                .set_permissions(std::fs::Permissions::from_mode(
                    existing.permissions().mode() & 0o7777,
                ))?;
            Ok(file)
        }
        Err(_) => tempfile::Builder::new()
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(directory),
    }
}

#[cfg(not(unix))]
fn report_temp_file(directory: &Path, _path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::NamedTempFile::new_in(directory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn atomic_report_files_are_not_private() {
        use std::os::unix::fs::PermissionsExt;
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("report.txt");
        write_file_atomically(&path, b"one").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        // 0666 less the umask (0644 under the usual 022), as `File::create` gives.
        let plain = directory.path().join("plain.txt");
        std::fs::File::create(&plain).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file_atomically(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }
}
