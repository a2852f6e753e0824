//! Finding a checkpoint and reading its headers: a model directory, one `.safetensors`, a
//! `.gguf` (single or split `-00001-of-0000N`), or a model id in the local Hugging Face cache.
//!
//! Only headers are read: safetensors' declared length is checked against the 100 MB cap and
//! the file size before anything is allocated; GGUF is read in growing prefixes, each bounded
//! by the file size and [`GGUF_PREFIX_CAP`]. Tensor data is never read.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::model::checkpoint::CheckpointKind;
use crate::parse::checkpoint::gguf::{self, GgufError};
use crate::parse::checkpoint::hf_config::{self, ConfigError, HfConfig};
use crate::parse::checkpoint::safetensors::{self, SafetensorsError};
use crate::parse::checkpoint::{FitInput, GgufInput, SafetensorsInput};
use crate::source::file::open_regular;

/// Largest GGUF header prefix read (metadata with tokenizer vocabularies is a few MiB).
pub const GGUF_PREFIX_CAP: u64 = 512 * 1024 * 1024;
/// First GGUF prefix read.
const GGUF_FIRST_PREFIX: u64 = 4 * 1024 * 1024;
/// Largest config.json or index read.
const JSON_CAP: u64 = 64 * 1024 * 1024;

/// Errors finding or reading a checkpoint; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// An I/O error.
    #[error("cannot read `{path}`")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file that cannot be opened as a regular file.
    #[error(transparent)]
    Open(#[from] crate::source::file::InputError),
    /// A bad safetensors header.
    #[error("bad safetensors header in `{path}`")]
    Safetensors {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: SafetensorsError,
    },
    /// A bad GGUF header.
    #[error("bad GGUF header in `{path}`")]
    Gguf {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: GgufError,
    },
    /// GGUF metadata larger than the cap.
    #[error("GGUF header of `{path}` is larger than {cap} bytes")]
    GgufTooLarge {
        /// The file.
        path: PathBuf,
        /// The cap.
        cap: u64,
    },
    /// A GGUF file whose header needs more bytes than the file has on disk.
    #[error("`{path}` is {apparent} bytes long but has only {on_disk} bytes on disk, fewer than its GGUF header needs (a sparse file?)")]
    GgufSparse {
        /// The file.
        path: PathBuf,
        /// Its length.
        apparent: u64,
        /// Bytes allocated on disk.
        on_disk: u64,
    },
    /// A bad config.json or index.
    #[error("bad JSON in `{path}`")]
    Json {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: ConfigError,
    },
    /// A JSON file above the cap.
    #[error("`{path}` is {size} bytes, more than the {cap} bytes oomdoc reads for a JSON file")]
    JsonTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// Nothing at PATH and no such model in the cache.
    #[error("`{given}` is neither a file, a directory, nor a model in the Hugging Face cache")]
    NotFound {
        /// What the user gave.
        given: String,
        /// Cache directories searched.
        searched: Vec<PathBuf>,
    },
    /// A directory without weights.
    #[error("`{path}` holds no `.safetensors` or `.gguf` files")]
    NoWeights {
        /// The directory.
        path: PathBuf,
    },
    /// A file that is neither safetensors nor GGUF.
    #[error("`{path}` is not a `.safetensors` or `.gguf` file")]
    UnknownFile {
        /// The file.
        path: PathBuf,
    },
    /// A shard named by the index or a split part is missing.
    #[error("`{path}` is missing ({why})")]
    MissingPart {
        /// The missing file.
        path: PathBuf,
        /// Who names it.
        why: String,
    },
    /// A file named inside the checkpoint (an index entry, `refs/main`, a link) that leads
    /// outside the model directory.
    #[error("`{entry}` in `{named_by}` leads outside the model directory `{root}`")]
    OutsideModel {
        /// The entry as written.
        entry: String,
        /// The file or directory that names it.
        named_by: PathBuf,
        /// The directory files must stay in.
        root: PathBuf,
    },
    /// Several GGUF files that are not one split set.
    #[error("`{path}` holds {count} GGUF files that are not one split set; pass one of them")]
    AmbiguousGguf {
        /// The directory.
        path: PathBuf,
        /// How many.
        count: usize,
    },
}

impl crate::error::Hint for CheckpointError {
    fn hint(&self) -> Option<String> {
        match self {
            CheckpointError::NotFound { searched, .. } => Some(format!(
                "give a directory, a `.safetensors` or `.gguf` file, or an `org/name` model id downloaded before (searched {})",
                searched
                    .iter()
                    .map(|p| format!("`{}`", p.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            CheckpointError::OutsideModel { .. } => Some(
                "oomdoc reads only files inside the model directory (and, in the Hugging Face cache, its `blobs/`); check where this checkpoint came from".to_string(),
            ),
            CheckpointError::Safetensors { .. } | CheckpointError::Gguf { .. } => Some(
                "the file is truncated, still downloading, or not what its extension says; re-download it".to_string(),
            ),
            _ => None,
        }
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Resolves `given` to a path: itself when it exists, else a model id in the hub caches.
pub fn locate(given: &str, hub_caches: &[PathBuf]) -> Result<PathBuf, CheckpointError> {
    let path = PathBuf::from(given);
    if path.exists() {
        return Ok(path);
    }
    let parts: Vec<&str> = given.split('/').collect();
    if parts.len() == 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && *p != "." && *p != "..")
    {
        let folder = format!("models--{}--{}", parts[0], parts[1]);
        for cache in hub_caches {
            let repo = cache.join(&folder);
            if let Some(snapshot) = snapshot(&repo)? {
                return Ok(snapshot);
            }
        }
    }
    Err(CheckpointError::NotFound {
        given: given.to_string(),
        searched: hub_caches.to_vec(),
    })
}

/// Longest `refs/main` read (a commit hash is 40 characters).
const REF_CAP: u64 = 4096;

/// The snapshot `refs/main` points at, else the newest snapshot directory. A reference that
/// is not one plain name, or a snapshot that resolves outside the repository folder, is an
/// error naming it (issue 14: `refs/main` could point anywhere).
fn snapshot(repo: &Path) -> Result<Option<PathBuf>, CheckpointError> {
    let snapshots = repo.join("snapshots");
    let reference_path = repo.join("refs").join("main");
    if reference_path.is_file() {
        let mut bytes = Vec::new();
        open_regular(&reference_path)?
            .take(REF_CAP)
            .read_to_end(&mut bytes)
            .map_err(io_error(&reference_path))?;
        let reference = String::from_utf8_lossy(&bytes).trim().to_string();
        let outside = || CheckpointError::OutsideModel {
            entry: reference.clone(),
            named_by: reference_path.clone(),
            root: repo.to_path_buf(),
        };
        if !is_plain_relative(&reference) || reference.contains('/') {
            return Err(outside());
        }
        let candidate = snapshots.join(&reference);
        if candidate.is_dir() {
            let root = repo.canonicalize().map_err(io_error(repo))?;
            let resolved = candidate.canonicalize().map_err(io_error(&candidate))?;
            if !resolved.starts_with(&root) {
                return Err(outside());
            }
            return Ok(Some(candidate));
        }
    }
    let Ok(entries) = std::fs::read_dir(&snapshots) else {
        return Ok(None);
    };
    let root = repo.canonicalize().map_err(io_error(repo))?;
    Ok(entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        // A snapshot that is a link out of the repository folder is not a candidate.
        .filter(|entry| {
            entry
                .path()
                .canonicalize()
                .is_ok_and(|resolved| resolved.starts_with(&root))
        })
        .max_by_key(|entry| entry.metadata().and_then(|m| m.modified()).ok())
        .map(|entry| entry.path()))
}

/// True when `name` is a relative path of plain components only (no `..`, `.`, root or
/// drive prefix).
fn is_plain_relative(name: &str) -> bool {
    !name.is_empty()
        && Path::new(name)
            .components()
            .all(|component| matches!(component, std::path::Component::Normal(_)))
}

/// The folder that the files of a checkpoint directory may resolve into: the directory
/// itself, or for a Hugging Face cache snapshot (`models--org--name/snapshots/REV`) the
/// repository folder, whose `blobs/` hold what the snapshot's links point at.
fn containment_root(directory: &Path) -> Result<PathBuf, CheckpointError> {
    let directory = if directory.as_os_str().is_empty() {
        Path::new(".")
    } else {
        directory
    };
    let canonical = directory.canonicalize().map_err(io_error(directory))?;
    let repo = canonical
        .parent()
        .filter(|parent| parent.file_name().is_some_and(|name| name == "snapshots"))
        .and_then(Path::parent)
        .filter(|repo| {
            repo.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("models--"))
        });
    Ok(repo.map(Path::to_path_buf).unwrap_or(canonical))
}

/// Checks that `path` (an existing file, links resolved) lies inside `root` (a canonical
/// [`containment_root`]); `entry` and `named_by` name it in the error.
fn check_inside(
    root: &Path,
    path: &Path,
    entry: &str,
    named_by: &Path,
) -> Result<(), CheckpointError> {
    let resolved = path.canonicalize().map_err(io_error(path))?;
    if resolved.starts_with(root) {
        Ok(())
    } else {
        Err(CheckpointError::OutsideModel {
            entry: entry.to_string(),
            named_by: named_by.to_path_buf(),
            root: root.to_path_buf(),
        })
    }
}

fn extension_is(path: &Path, extension: &str) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case(extension))
}

/// Drops the files whose names start with `prefix` when other weight files remain (noting it
/// with `why`); when only such files exist they are the weights, kept in sorted order.
fn skip_side_files(
    paths: Vec<PathBuf>,
    prefix: &str,
    why: &str,
    notes: &mut Vec<String>,
) -> Vec<PathBuf> {
    let (side, rest): (Vec<PathBuf>, Vec<PathBuf>) = paths
        .into_iter()
        .partition(|path| file_name(path).starts_with(prefix));
    if !side.is_empty() && !rest.is_empty() {
        let names: Vec<String> = side
            .iter()
            .map(|path| format!("`{}`", file_name(path)))
            .collect();
        notes.push(format!("skipped {} ({why})", names.join(", ")));
        rest
    } else {
        let mut all: Vec<PathBuf> = side.into_iter().chain(rest).collect();
        all.sort();
        all
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Hugging Face hub caches in lookup order: `$HF_HUB_CACHE`, `$HF_HOME/hub`,
/// `~/.cache/huggingface/hub`.
pub fn hub_caches() -> Vec<PathBuf> {
    let mut caches = Vec::new();
    let non_empty = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(cache) = non_empty(crate::env_vars::HF_HUB_CACHE) {
        caches.push(PathBuf::from(cache));
    }
    if let Some(home) = non_empty(crate::env_vars::HF_HOME) {
        caches.push(PathBuf::from(home).join("hub"));
    }
    if let Some(home) = non_empty(crate::env_vars::HOME) {
        caches.push(PathBuf::from(home).join(".cache/huggingface/hub"));
    }
    caches
}

/// Finds the checkpoint the user named (a path, or a model id in the Hugging Face caches of
/// this environment) and reads every header.
pub fn open(given: &str) -> Result<FitInput, CheckpointError> {
    let path = locate(given, &hub_caches())?;
    read(&path, given)
}

/// Reads every header of the checkpoint at `path` (`given` is what the user typed, kept for
/// the names checked against the headers).
pub fn read(path: &Path, given: &str) -> Result<FitInput, CheckpointError> {
    // Only the last component: a parent directory named `int4-experiments` says nothing
    // about this checkpoint. A model id keeps its `org/name` form.
    let given_name = if given.matches('/').count() == 1 && !Path::new(given).exists() {
        given.to_string()
    } else {
        file_name(Path::new(given))
    };
    let mut names = vec![given_name];
    if path.is_dir() {
        return read_directory(path, given, names);
    }
    let directory = path.parent().map(Path::to_path_buf).unwrap_or_default();
    names.push(file_name(path));
    let config_path = directory.join("config.json");
    let config = if config_path.is_file() {
        let root = containment_root(&directory)?;
        check_inside(&root, &config_path, "config.json", &directory)?;
        Some(read_config(&config_path)?)
    } else {
        None
    };
    if extension_is(path, "safetensors") {
        Ok(FitInput {
            path: given.to_string(),
            kind: CheckpointKind::SafetensorsFile,
            safetensors: vec![read_safetensors(path)?],
            gguf: Vec::new(),
            config,
            index: None,
            names,
            limitations: Vec::new(),
        })
    } else if extension_is(path, "gguf") {
        let parts = split_parts(path)?;
        // The file the user named is theirs to choose; the other parts of a split set are
        // found by name and must stay beside it.
        let root = containment_root(&directory)?;
        for part in parts.iter().filter(|part| part.as_path() != path) {
            check_inside(&root, part, &file_name(part), &directory)?;
        }
        let gguf = parts
            .iter()
            .map(|part| read_gguf(part))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FitInput {
            path: given.to_string(),
            kind: CheckpointKind::Gguf,
            safetensors: Vec::new(),
            gguf,
            config: None,
            index: None,
            names,
            limitations: Vec::new(),
        })
    } else {
        Err(CheckpointError::UnknownFile {
            path: path.to_path_buf(),
        })
    }
}

fn read_directory(
    path: &Path,
    given: &str,
    mut names: Vec<String>,
) -> Result<FitInput, CheckpointError> {
    let mut notes = Vec::new();
    names.push(file_name(path));
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(io_error(path))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        // A broken link (a Hugging Face snapshot whose blob is missing) is kept, to be named.
        .filter(|p| p.is_file() || p.is_symlink())
        .collect();
    entries.sort();
    for entry in &entries {
        let is_part = extension_is(entry, "safetensors")
            || extension_is(entry, "gguf")
            || file_name(entry) == "config.json";
        if is_part && !entry.is_file() {
            return Err(CheckpointError::MissingPart {
                path: entry.clone(),
                why: "a symbolic link to a file that does not exist: an incomplete download?"
                    .to_string(),
            });
        }
    }
    entries.retain(|p| p.is_file());
    // Every file read must resolve inside the model directory (or its cache repository):
    // a link in a downloaded repository could point anywhere (issue 14).
    let root = containment_root(path)?;
    for entry in &entries {
        let is_part = extension_is(entry, "safetensors")
            || extension_is(entry, "gguf")
            || matches!(
                file_name(entry).as_str(),
                "config.json" | "model.safetensors.index.json"
            );
        if is_part {
            check_inside(&root, entry, &file_name(entry), path)?;
        }
    }
    let config_path = path.join("config.json");
    let config = if config_path.is_file() {
        Some(read_config(&config_path)?)
    } else {
        None
    };
    let index_path = path.join("model.safetensors.index.json");
    let index = if index_path.is_file() {
        let bytes = read_json_bytes(&index_path)?;
        Some(
            hf_config::parse_index(&bytes).map_err(|source| CheckpointError::Json {
                path: index_path.clone(),
                source,
            })?,
        )
    } else {
        None
    };
    let mut shard_paths: Vec<PathBuf> = match &index {
        Some(index) => index
            .files()
            .into_iter()
            .map(|name| {
                // See: #14. `../x.safetensors` and absolute paths were read.
                if !is_plain_relative(&name) {
                    return Err(CheckpointError::OutsideModel {
                        entry: name,
                        named_by: index_path.clone(),
                        root: path.to_path_buf(),
                    });
                }
                let shard = path.join(&name);
                if shard.is_file() {
                    check_inside(&root, &shard, &name, &index_path)?;
                    Ok(shard)
                } else {
                    Err(CheckpointError::MissingPart {
                        path: shard,
                        why: "named in `model.safetensors.index.json`".to_string(),
                    })
                }
            })
            .collect::<Result<_, _>>()?,
        None => entries
            .iter()
            .filter(|p| extension_is(p, "safetensors"))
            .cloned()
            .collect(),
    };
    // A LoRA adapter saved next to the model is not part of its weights.
    if index.is_none() {
        shard_paths = skip_side_files(
            shard_paths,
            "adapter_model",
            "a LoRA adapter, not the model's weights",
            &mut notes,
        );
    }
    // Mistral repositories ship `consolidated.safetensors` next to the HF shards.
    if index.is_none() && shard_paths.len() > 1 {
        shard_paths = skip_side_files(
            shard_paths,
            "consolidated",
            "a second copy of the weights in Mistral's own format",
            &mut notes,
        );
    }
    if !shard_paths.is_empty() {
        let safetensors = shard_paths
            .iter()
            .map(|p| read_safetensors(p))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(FitInput {
            path: given.to_string(),
            kind: CheckpointKind::SafetensorsDirectory,
            safetensors,
            gguf: Vec::new(),
            config,
            index,
            names,
            limitations: notes,
        });
    }
    let ggufs: Vec<&PathBuf> = entries
        .iter()
        .filter(|p| extension_is(p, "gguf") && !file_name(p).starts_with("mmproj"))
        .collect();
    let Some(first) = ggufs.first() else {
        return Err(CheckpointError::NoWeights {
            path: path.to_path_buf(),
        });
    };
    let parts = split_parts(first)?;
    if parts.len() != ggufs.len() {
        return Err(CheckpointError::AmbiguousGguf {
            path: path.to_path_buf(),
            count: ggufs.len(),
        });
    }
    names.extend(parts.iter().map(|p| file_name(p)));
    let gguf = parts
        .iter()
        .map(|part| read_gguf(part))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(FitInput {
        path: given.to_string(),
        kind: CheckpointKind::Gguf,
        safetensors: Vec::new(),
        gguf,
        config,
        index: None,
        names,
        limitations: notes,
    })
}

/// The parts of a split GGUF (`name-00001-of-00003.gguf`), or the file alone.
fn split_parts(path: &Path) -> Result<Vec<PathBuf>, CheckpointError> {
    let name = file_name(path);
    let Some(stem) = name.strip_suffix(".gguf") else {
        return Ok(vec![path.to_path_buf()]);
    };
    let pieces: Vec<&str> = stem.rsplitn(4, '-').collect();
    // rsplitn gives ["0000N", "of", "0000k", prefix].
    let (Some(count), Some(&"of"), Some(index), Some(prefix)) =
        (pieces.first(), pieces.get(1), pieces.get(2), pieces.get(3))
    else {
        return Ok(vec![path.to_path_buf()]);
    };
    let (Ok(count_number), Ok(_)) = (count.parse::<u32>(), index.parse::<u32>()) else {
        return Ok(vec![path.to_path_buf()]);
    };
    let directory = path.parent().map(Path::to_path_buf).unwrap_or_default();
    (1..=count_number.min(10_000))
        .map(|k| {
            let part = directory.join(format!(
                "{prefix}-{k:0width$}-of-{count}.gguf",
                width = index.len()
            ));
            if part.is_file() {
                Ok(part)
            } else {
                Err(CheckpointError::MissingPart {
                    path: part,
                    why: format!("part {k} of the split set `{name}` belongs to"),
                })
            }
        })
        .collect()
}

fn read_json_bytes(path: &Path) -> Result<Vec<u8>, CheckpointError> {
    let size = open_regular(path)?
        .metadata()
        .map_err(io_error(path))?
        .len();
    if size > JSON_CAP {
        return Err(CheckpointError::JsonTooLarge {
            path: path.to_path_buf(),
            size,
            cap: JSON_CAP,
        });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    open_regular(path)?
        .take(JSON_CAP)
        .read_to_end(&mut bytes)
        .map_err(io_error(path))?;
    Ok(bytes)
}

fn read_config(path: &Path) -> Result<HfConfig, CheckpointError> {
    let bytes = read_json_bytes(path)?;
    hf_config::parse_config(&bytes).map_err(|source| CheckpointError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads one safetensors header: 8 bytes, a length check, then exactly that many bytes.
pub fn read_safetensors(path: &Path) -> Result<SafetensorsInput, CheckpointError> {
    let mut file = open_regular(path)?;
    let size = file.metadata().map_err(io_error(path))?.len();
    let wrap = |source| CheckpointError::Safetensors {
        path: path.to_path_buf(),
        source,
    };
    let mut prefix = [0u8; 8];
    let got = read_up_to(&mut file, &mut prefix).map_err(io_error(path))?;
    let length = safetensors::header_length(&prefix[..got], size).map_err(wrap)?;
    // `length` ≤ 100 MB and ≤ the file size: safe to allocate.
    let mut json = vec![0u8; length as usize];
    file.read_exact(&mut json).map_err(io_error(path))?;
    let header = safetensors::parse_header(&json, size - 8 - length).map_err(wrap)?;
    Ok(SafetensorsInput {
        path: path.display().to_string(),
        size_bytes: size,
        header_bytes: 8 + length,
        header,
    })
}

fn read_up_to(file: &mut File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        let count = file.read(&mut buffer[filled..])?;
        if count == 0 {
            break;
        }
        filled += count;
    }
    Ok(filled)
}

/// Reads one GGUF header in growing prefixes.
pub fn read_gguf(path: &Path) -> Result<GgufInput, CheckpointError> {
    let mut file = open_regular(path)?;
    let metadata = file.metadata().map_err(io_error(path))?;
    let size = metadata.len();
    // A header is written data, never a hole: a sparse file's prefix beyond its allocated
    // bytes is zeros, which parse as millions of empty entries (issue 14). Read no further
    // than what is on disk (at least the first prefix, for file systems that compress).
    let on_disk = allocated_bytes(&metadata).unwrap_or(size);
    let prefix_cap = GGUF_PREFIX_CAP.min(on_disk.max(GGUF_FIRST_PREFIX));
    let mut want = GGUF_FIRST_PREFIX.min(size);
    let mut buffer: Vec<u8> = Vec::new();
    loop {
        let missing = want.saturating_sub(buffer.len() as u64);
        if missing > 0 {
            file.seek(SeekFrom::Start(buffer.len() as u64))
                .map_err(io_error(path))?;
            (&mut file)
                .take(missing)
                .read_to_end(&mut buffer)
                .map_err(io_error(path))?;
        }
        match gguf::parse(&buffer, size) {
            Ok(header) => {
                return Ok(GgufInput {
                    path: path.display().to_string(),
                    size_bytes: size,
                    header,
                })
            }
            Err(GgufError::NeedMore { bytes }) if (buffer.len() as u64) < size => {
                let next = bytes.max(want.saturating_mul(2)).min(size);
                if next > prefix_cap && prefix_cap < GGUF_PREFIX_CAP {
                    return Err(CheckpointError::GgufSparse {
                        path: path.to_path_buf(),
                        apparent: size,
                        on_disk,
                    });
                }
                if next > GGUF_PREFIX_CAP {
                    return Err(CheckpointError::GgufTooLarge {
                        path: path.to_path_buf(),
                        cap: GGUF_PREFIX_CAP,
                    });
                }
                want = next;
            }
            Err(source) => {
                return Err(CheckpointError::Gguf {
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
    }
}

/// Bytes a file occupies on disk (`st_blocks` × 512), where the platform says.
fn allocated_bytes(metadata: &std::fs::Metadata) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(metadata.blocks().saturating_mul(512))
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}
