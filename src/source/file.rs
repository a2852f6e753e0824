//! Reading user input: files (plain or gzip) and stdin, streamed, with errors that name the path.
//!
//! Where a file format is expected (a checkpoint, a replay file, a run record, a snapshot),
//! [`open_regular`] refuses anything but a regular file: a FIFO would block oomdoc forever and
//! a device could stream without end (issue 14). Only `explain` reads pipes, as `cat` does.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::parse::encoding::{self, Encoding, Transcoder};
use crate::parse::read_at::read_full_at;

/// Where an input came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputName {
    /// Standard input.
    Stdin,
    /// A file.
    Path(PathBuf),
}

impl std::fmt::Display for InputName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputName::Stdin => write!(f, "<stdin>"),
            InputName::Path(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Errors opening an input.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The path could not be opened.
    #[error("cannot read `{path}`")]
    Open {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The path is a directory.
    #[error("`{path}` is a directory, not a file")]
    IsDirectory {
        /// The path.
        path: PathBuf,
    },
    /// The path is a FIFO, socket or device, where a file format is expected.
    #[error("`{path}` is a {kind}, not a regular file")]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
}

impl crate::error::Hint for InputError {
    fn hint(&self) -> Option<String> {
        match self {
            InputError::NotRegular { .. } => Some(
                "oomdoc reads this input as a file format; save the data to a file first"
                    .to_string(),
            ),
            _ => None,
        }
    }
}

/// What a non-regular file is, for messages.
fn file_kind(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "socket";
        }
        if file_type.is_char_device() {
            return "character device";
        }
        if file_type.is_block_device() {
            return "block device";
        }
    }
    if file_type.is_dir() {
        return "directory";
    }
    "special file"
}

/// Opens `path` for reading only when it is a regular file (links followed).
///
/// The open itself does not block on a FIFO (`O_NONBLOCK`), and the type is checked on the
/// opened descriptor, so a path swapped between check and open cannot slip a pipe through.
pub fn open_regular(path: &Path) -> Result<File, InputError> {
    let open_error = |source| InputError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading waits for a writer unless non-blocking; regular files
        // ignore the flag.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(open_error)?;
    let file_type = file.metadata().map_err(open_error)?.file_type();
    if file_type.is_dir() {
        return Err(InputError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    if !file_type.is_file() {
        return Err(InputError::NotRegular {
            path: path.to_path_buf(),
            kind: file_kind(file_type),
        });
    }
    Ok(file)
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens a regular file ([`open_regular`]) for streaming, gzip decompressed on the fly.
pub fn open_file(path: &Path) -> Result<Box<dyn BufRead + Send>, InputError> {
    decode(path, open_regular(path)?)
}

fn decode(path: &Path, file: File) -> Result<Box<dyn BufRead + Send>, InputError> {
    let open_error = |source| InputError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let is_gzip = reader
        .fill_buf()
        .map_err(open_error)?
        .starts_with(&GZIP_MAGIC);
    if is_gzip {
        let decoder = flate2::bufread::MultiGzDecoder::new(reader);
        Ok(Box::new(BufReader::with_capacity(256 * 1024, decoder)))
    } else {
        Ok(Box::new(reader))
    }
}

/// An input opened for `explain`.
pub enum TextInput {
    /// A regular file of UTF-8 text (not gzip, not a converted encoding), read in place by
    /// offset: its text starts at `start`, past a byte-order mark.
    File {
        /// The open file.
        file: File,
        /// Where its text starts.
        start: u64,
    },
    /// Anything else, streamed: a pipe, a device, a gzip file or text converted to UTF-8, with
    /// the encoding converted from.
    Stream(Box<dyn BufRead + Send>, Option<Encoding>),
}

/// Opens `path` for `explain`, which reads pipes as `cat` does: a regular file of UTF-8 text as
/// [`TextInput::File`], anything else streamed (a pipe; gzip, by its magic bytes, decompressed
/// on the fly; UTF-16 and Windows-1252 converted by [`text`]).
pub fn open_text(path: &Path) -> Result<TextInput, InputError> {
    let open_error = |source| InputError::Open {
        path: path.to_path_buf(),
        source,
    };
    if path.is_dir() {
        return Err(InputError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    let file = File::open(path).map_err(open_error)?;
    if file.metadata().map_err(open_error)?.is_file() {
        let mut start = [0; encoding::SNIFF_BYTES];
        let read = read_full_at(&file, &mut start, 0).map_err(open_error)?;
        let start = &start[..read];
        let sniffed = encoding::sniff(start);
        if !start.starts_with(&GZIP_MAGIC) && sniffed.encoding == Encoding::Utf8 {
            return Ok(TextInput::File {
                file,
                start: sniffed.bom_len as u64,
            });
        }
    }
    // Reading by offset leaves the position at the start, except on Windows.
    io::Seek::rewind(&mut &file).map_err(open_error)?;
    let (reader, encoding) = text(decode(path, file)?).map_err(open_error)?;
    Ok(TextInput::Stream(reader, encoding))
}

/// Standard input, buffered.
pub fn stdin() -> Box<dyn BufRead + Send> {
    Box::new(BufReader::with_capacity(256 * 1024, io::stdin()))
}

/// A text input read as UTF-8: UTF-16 (PowerShell's `>`) and Windows-1252 inputs are converted
/// on the fly, a UTF-8 byte-order mark is dropped, and plain UTF-8 is returned as is (one look
/// at the first bytes, no copy). Also returns the encoding found when it was not UTF-8.
pub fn text(
    mut reader: Box<dyn BufRead + Send>,
) -> io::Result<(Box<dyn BufRead + Send>, Option<Encoding>)> {
    let start = loop {
        match reader.fill_buf() {
            Ok(start) => break start,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        }
    };
    let sniffed = encoding::sniff(start);
    match sniffed.encoding {
        Encoding::Utf8 => {
            reader.consume(sniffed.bom_len);
            Ok((reader, None))
        }
        other => {
            let transcoding = Transcoding {
                inner: reader,
                transcoder: Transcoder::new(sniffed),
                out: Vec::new(),
                position: 0,
                finished: false,
            };
            Ok((
                Box::new(BufReader::with_capacity(256 * 1024, transcoding)),
                Some(other),
            ))
        }
    }
}

/// A reader converting its input to UTF-8 with a [`Transcoder`].
struct Transcoding {
    inner: Box<dyn BufRead + Send>,
    transcoder: Transcoder,
    /// Converted bytes not yet read, from `position`.
    out: Vec<u8>,
    position: usize,
    finished: bool,
}

impl Read for Transcoding {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.position == self.out.len() && !self.finished {
            self.out.clear();
            self.position = 0;
            let chunk = self.inner.fill_buf()?;
            if chunk.is_empty() {
                self.transcoder.finish(&mut self.out);
                self.finished = true;
            } else {
                let len = chunk.len();
                self.transcoder.push(chunk, &mut self.out);
                self.inner.consume(len);
            }
        }
        let available = &self.out[self.position..];
        let len = available.len().min(buf.len());
        buf[..len].copy_from_slice(&available[..len]);
        self.position += len;
        Ok(len)
    }
}

/// Reads a whole regular file (gzip decompressed) into memory, at most `limit` bytes.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let mut reader = open_file(path)?;
    let mut bytes = Vec::new();
    (&mut reader)
        .take(limit)
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(bytes)
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so
/// a reader never sees half a file.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    use std::io::Write;
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
    fn fifo_is_refused_without_blocking() {
        // See: #14
        let directory = tempfile::tempdir().unwrap();
        let fifo = directory.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let error = open_regular(&fifo).unwrap_err();
        assert!(matches!(error, InputError::NotRegular { .. }), "{error:?}");
        assert!(error.to_string().contains("FIFO"), "{error}");
        assert!(matches!(
            read_limited(&fifo, 10).unwrap_err(),
            InputError::NotRegular { .. }
        ));
    }

    #[test]
    fn regular_file_and_directory() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("a.txt");
        std::fs::write(&path, "hello").unwrap();
        assert_eq!(read_limited(&path, 100).unwrap(), b"hello");
        assert!(matches!(
            open_regular(directory.path()).unwrap_err(),
            InputError::IsDirectory { .. }
        ));
    }
}
