//! Reading user input: files (plain or gzip) and stdin, streamed, with errors that name the path.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

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
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens a file for streaming; gzip files (by magic bytes) are decompressed on the fly.
pub fn open(path: &Path) -> Result<Box<dyn BufRead + Send>, InputError> {
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

/// Standard input, buffered.
pub fn stdin() -> Box<dyn BufRead + Send> {
    Box::new(BufReader::with_capacity(256 * 1024, io::stdin()))
}

/// Reads a whole file (gzip decompressed) into memory, at most `limit` bytes.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let mut reader = open(path)?;
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
