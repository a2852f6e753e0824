//! The only writer to stdout and stderr. stdout is the report; stderr is everything else
//! (errors, warnings, hints, progress).

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use super::args::{ColorChoice, Format, OutputArgs};
use super::settings;
use crate::error::{Hint, HintedError};
use crate::redact::Redactor;
pub use crate::source::file::write_file_atomically;
use crate::source::process::local_identity;

/// Writes reports and diagnostics.
#[derive(Debug)]
pub struct Output {
    color_choice: ColorChoice,
    warnings: usize,
    /// Applied to every JSON document before it is written, whatever the command read: the
    /// last of the redaction passes (records and logs are redacted when read, too).
    redactor: Redactor,
}

impl Output {
    /// A writer honouring `--color`.
    pub fn new(color_choice: ColorChoice) -> Self {
        let (home, user) = local_identity();
        Output {
            color_choice,
            warnings: 0,
            redactor: Redactor::new(home, user),
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

    /// Writes a rendered report to stdout, or to `-o FILE` (see [`write_report_file`]), with
    /// terminal controls escaped ([`escape_controls`]; the colour of our own styling stays when
    /// colour is on).
    pub fn report(&mut self, args: &OutputArgs, bytes: &[u8]) -> anyhow::Result<()> {
        let keep_color = self.color_for(args);
        // Every JSON document, string by string: whatever a command read, no secret leaves in
        // `--json`. Text formats are built from redacted values by each command.
        let redacted;
        let bytes = if args.format() == Format::Json {
            redacted = self
                .redactor
                .json_text(&String::from_utf8_lossy(bytes))
                .into_bytes();
            redacted.as_slice()
        } else {
            bytes
        };
        match args.output.as_deref() {
            Some(path) if path != Path::new("-") => {
                write_report_file(path, &escape_bytes(bytes, false))
                    .with_context(|| format!("failed to write report to `{}`", path.display()))
            }
            _ => self.write_stdout(&escape_bytes(bytes, keep_color)),
        }
    }

    /// Writes bytes to stdout, terminal controls escaped (colour kept when stdout gets colour).
    pub fn stdout(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let escaped = escape_bytes(bytes, self.stdout_color());
        self.write_stdout(&escaped)
    }

    fn write_stdout(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()?;
        Ok(())
    }

    /// A warning on stderr (non-fatal: the command goes on).
    pub fn warn(&mut self, message: &str) {
        self.warnings += 1;
        to_stderr(&fit_terminal(&format!("warning: {message}")));
    }

    /// A warning that the document itself carries: on stderr only when the document does not
    /// reach the reader as text next to it (JSON or HTML, or a file), so it is printed once.
    pub fn warn_unless_in_document(&mut self, args: &OutputArgs, message: &str) {
        let readable = matches!(args.format(), Format::Text | Format::Markdown);
        let to_stdout = args
            .output
            .as_deref()
            .is_none_or(|path| path == Path::new("-"));
        if readable && to_stdout {
            self.warnings += 1;
        } else {
            self.warn(message);
        }
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
        to_stderr(&fit_terminal(&render_error(error)));
    }
}

/// Prints clap's help, version or usage error as clap does, unless it goes to a terminal and a
/// line would pass the text width: clap does not wrap its errors, which quote the value given
/// (`invalid value '…' for '--gpu-memory <SIZE>': …`). Such an error is wrapped like our own,
/// without colour.
pub fn clap_error(error: &clap::Error) {
    use std::io::IsTerminal as _;
    let plain = error.to_string();
    let width = crate::render::wrap::TEXT_WIDTH;
    if !error.use_stderr()
        || !std::io::stderr().is_terminal()
        || plain.lines().all(|line| line.chars().count() <= width)
    {
        let _ = error.print();
        return;
    }
    let text = crate::render::wrap::fit(plain.trim_end());
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", escape_controls(&text, false));
}

/// One line on stderr. A closed or broken stderr (`2>&1 | true`) loses the line; it must not
/// panic (as the standard print macro does) nor change the exit code.
fn to_stderr(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", escape_controls(text, false));
}

/// Whether a character would drive a terminal rather than show: C0 controls but `\n` and `\t`,
/// DEL, C1 controls (U+0080–U+009F: U+009B is a one-byte CSI), and the bidi embeddings,
/// overrides and isolates (U+202A–U+202E, U+2066–U+2069) that reorder what is shown.
pub fn is_terminal_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every terminal control ([`is_terminal_control`]) written out: C0 as `\x1b`,
/// the others as `\u007f`, `\u009b`, `\u202e` (valid inside a JSON string too, so one
/// function serves every format). With `keep_color`, our own colour sequences (`ESC [` digits
/// and `;` then `m`, from `render::style`) stay; every other escape sequence is written out.
///
/// The one place where text from outside (argv, environment, logs, tensor names, server
/// answers) is made safe for a terminal: every report and every stderr line goes through it.
pub fn escape_controls(text: &str, keep_color: bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_terminal_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep_color && c == '\u{1b}' {
            if let Some(length) = color_sequence_length(rest) {
                out.push_str(&rest[..length]);
                rest = &rest[length..];
                continue;
            }
        }
        if is_terminal_control(c) {
            if (c as u32) < 0x20 {
                out.push_str(&format!("\\x{:02x}", c as u32));
            } else {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// Length of a colour (SGR) sequence at the start of `text`: `ESC [`, digits and `;`, `m`.
fn color_sequence_length(text: &str) -> Option<usize> {
    let body = text.strip_prefix("\u{1b}[")?;
    let digits = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (body.as_bytes().get(digits) == Some(&b'm')).then_some(2 + digits + 1)
}

/// [`escape_controls`] over bytes (invalid UTF-8 is shown as U+FFFD).
fn escape_bytes(bytes: &[u8], keep_color: bool) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    escape_controls(&text, keep_color).into_owned().into_bytes()
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

/// `text` wrapped to the text width when stderr is a terminal (continuation lines hang under
/// the text after `error: `, `hint: `, `warning: `); a pipe or a file gets each message on one
/// line, as scripts and `grep` expect.
fn fit_terminal(text: &str) -> String {
    use std::io::IsTerminal as _;
    if std::io::stderr().is_terminal() {
        crate::render::wrap::fit(text)
    } else {
        text.to_string()
    }
}

/// Writes a report to `-o FILE`. Only a regular file (or a new path) is replaced atomically,
/// through [`write_file_atomically`]; a symlink stays a symlink (its target is replaced, or
/// created when missing); a device, FIFO or socket (`/dev/null`, `/dev/stdout`, a named pipe)
/// is written through, as a shell's `>` would, and never replaced by a regular file.
pub fn write_report_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let link = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return write_file_atomically(path, bytes)
        }
        Err(error) => return Err(error),
    };
    if link.is_file() {
        return write_file_atomically(path, bytes);
    }
    if link.file_type().is_symlink() {
        match std::fs::metadata(path) {
            Ok(target) if target.is_file() => {
                // Replace the target, keep the link: the final path of the link, resolved.
                let target_path = std::fs::canonicalize(path)?;
                return write_file_atomically(&target_path, bytes);
            }
            Ok(_) => {}
            // A dangling link: create its target through it, as `>` would.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let mut file = std::fs::File::create(path)?;
                file.write_all(bytes)?;
                return file.flush();
            }
            Err(error) => return Err(error),
        }
    }
    if std::fs::metadata(path)?.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    // A device, FIFO or socket (or a link to one): write through, never replace.
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// The error types that carry hints. Each type with a `Hint` impl is listed here, at the top
/// of the crate, so that no lower module has to know the printer.
type HintProbe = fn(&(dyn std::error::Error + 'static)) -> Option<String>;

fn probe<T: Hint + std::error::Error + 'static>(
    error: &(dyn std::error::Error + 'static),
) -> Option<String> {
    error.downcast_ref::<T>().and_then(Hint::hint)
}

const HINT_PROBES: &[HintProbe] = &[
    probe::<HintedError>,
    probe::<crate::source::checkpoint::CheckpointError>,
    probe::<crate::source::server::ServerError>,
    probe::<crate::source::gpu::GpuError>,
    probe::<crate::source::file::InputError>,
    probe::<crate::parse::torch_snapshot::TorchSnapshotError>,
];

/// Hints found along an error's chain, outermost first, without duplicates.
fn hints(error: &anyhow::Error) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for cause in error.chain() {
        for probe in HINT_PROBES {
            if let Some(hint) = probe(cause) {
                if !found.contains(&hint) {
                    found.push(hint);
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_are_written_out() {
        let cases = [
            ("bell\u{7}", "bell\\x07"),
            ("back\u{8}space", "back\\x08space"),
            ("csi\u{9b}31m", "csi\\u009b31m"),
            ("\u{202e}evil", "\\u202eevil"),
            ("\u{2066}iso\u{2069}", "\\u2066iso\\u2069"),
            ("esc\u{1b}]0;title\u{7}", "esc\\x1b]0;title\\x07"),
            ("del\u{7f} cr\r", "del\\u007f cr\\x0d"),
            ("tab\tnew\nline é ✓", "tab\tnew\nline é ✓"),
        ];
        for (input, expected) in cases {
            assert_eq!(escape_controls(input, false), expected, "{input:?}");
        }
        // Our colour stays when colour is on; any other sequence is written out.
        assert_eq!(
            escape_controls("\u{1b}[1;31mbad\u{1b}[0m \u{1b}[2J", true),
            "\u{1b}[1;31mbad\u{1b}[0m \\x1b[2J"
        );
        assert_eq!(
            escape_controls("\u{1b}[1;31mbad\u{1b}[0m", false),
            "\\x1b[1;31mbad\\x1b[0m"
        );
        // Inside a JSON string the escapes stay valid JSON.
        let json = serde_json::to_string(&"a\u{9b}b\u{202e}c\u{7f}\u{7}").unwrap();
        let escaped = escape_controls(&json, false);
        let back: String = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back, "a\u{9b}b\u{202e}c\u{7f}\u{7}");
    }

    #[cfg(unix)]
    #[test]
    fn reports_write_through_fifos_devices_and_links() {
        use std::os::unix::fs::FileTypeExt;
        let directory = tempfile::tempdir().unwrap();
        // A symlink to a report stays a symlink; its target gets the report.
        let target = directory.path().join("target.txt");
        std::fs::write(&target, "old").unwrap();
        let link = directory.path().join("link.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_report_file(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // A dangling link gets its target created.
        let dangling = directory.path().join("dangling.txt");
        std::os::unix::fs::symlink(directory.path().join("made.txt"), &dangling).unwrap();
        write_report_file(&dangling, b"made").unwrap();
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read(directory.path().join("made.txt")).unwrap(),
            b"made"
        );
        // A FIFO is written through and stays a FIFO.
        let fifo = directory.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_report_file(&fifo, b"through").unwrap();
        assert_eq!(reader.join().unwrap(), b"through");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        // A link to a device (here `/dev/null`) is written through; the link and the
        // device stay.
        let null_link = directory.path().join("null");
        std::os::unix::fs::symlink("/dev/null", &null_link).unwrap();
        write_report_file(&null_link, b"gone").unwrap();
        assert!(std::fs::symlink_metadata(&null_link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        // A new path and a regular file are written whole.
        let new = directory.path().join("new.txt");
        write_report_file(&new, b"one").unwrap();
        write_report_file(&new, b"two").unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), b"two");
    }

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
