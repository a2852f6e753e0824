//! GGUF headers (v2 and v3): magic, version, tensor and metadata counts, metadata key/values,
//! tensor infos with ggml type block sizes. Layout: `ggml-org/ggml:docs/gguf.md` and
//! `src/gguf.cpp`; block sizes from `src/ggml-common.h`.
//!
//! Pure: [`parse`] works on a prefix of the file and the file's size. Every count and length
//! read from the file is checked against the bytes that remain in the *file* before anything
//! is stored, so a hostile count is refused at once; when the prefix is too short for an
//! honest header it answers [`GgufError::NeedMore`] and the caller reads a longer prefix.

use std::collections::BTreeMap;

/// `GGML_MAX_DIMS`.
const MAX_DIMS: u32 = 4;
/// Deepest nesting of metadata arrays accepted (real files use 1).
const MAX_ARRAY_DEPTH: u32 = 4;
/// Integer arrays up to this length are kept (per-layer head counts); longer ones are skipped.
const KEEP_ARRAY_MAX: u64 = 65_536;
/// Most tensors accepted: the largest real models have a few thousand tensor infos (experts
/// are merged), and each kept tensor costs about 100 bytes of memory (issue 14: a sparse
/// file of 22 million empty tensor infos took 5 GB).
pub const MAX_TENSORS: u64 = 1 << 20;
/// Most metadata entries accepted (real files have a few dozen).
pub const MAX_METADATA: u64 = 1 << 16;
/// `GGUF_DEFAULT_ALIGNMENT`.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// What can be wrong with a GGUF header. The caller adds the file path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GgufError {
    /// Not a GGUF file.
    #[error("not a GGUF file: the first 4 bytes are {found:02x?}, not `GGUF`")]
    BadMagic {
        /// The bytes found.
        found: Vec<u8>,
    },
    /// GGUF v1, or a byte-swapped (big-endian) file.
    #[error("GGUF version {version} is not supported (v2 and v3 are; a huge number means a big-endian file)")]
    Version {
        /// The version read.
        version: u32,
    },
    /// The file ends inside the header.
    #[error("truncated header: {what} at offset {offset} needs {needed} bytes but the file has {file_bytes}")]
    Truncated {
        /// What was being read.
        what: String,
        /// Where.
        offset: u64,
        /// Bytes needed from `offset`.
        needed: u64,
        /// File size.
        file_bytes: u64,
    },
    /// The prefix given is too short; read at least `bytes` of the file and call again.
    #[error("need the first {bytes} bytes of the file")]
    NeedMore {
        /// How many bytes of the file to read.
        bytes: u64,
    },
    /// A count that the rest of the file cannot hold.
    #[error("{what} count {count} at offset {offset} cannot fit in the {remaining} bytes left in the file")]
    AbsurdCount {
        /// Which count.
        what: String,
        /// The count read.
        count: u64,
        /// Where.
        offset: u64,
        /// Bytes left in the file.
        remaining: u64,
    },
    /// A count that the file could hold but no real model has.
    #[error("{what} count {count} at offset {offset} is above the {limit} oomdoc accepts (real models have far fewer)")]
    CountAboveLimit {
        /// Which count.
        what: String,
        /// The count read.
        count: u64,
        /// Where.
        offset: u64,
        /// The limit.
        limit: u64,
    },
    /// A metadata value type outside 0–12.
    #[error("metadata key `{key}` has unknown value type {value_type}")]
    ValueType {
        /// Key.
        key: String,
        /// Type read.
        value_type: u32,
    },
    /// Arrays nested deeper than real files do.
    #[error("metadata key `{key}` nests arrays more than {MAX_ARRAY_DEPTH} deep")]
    TooDeep {
        /// Key.
        key: String,
    },
    /// A tensor with more than 4 dimensions.
    #[error("tensor `{tensor}` has {n_dims} dimensions (ggml allows at most {MAX_DIMS})")]
    Dims {
        /// Tensor.
        tensor: String,
        /// Count read.
        n_dims: u32,
    },
    /// A ggml type id that is unknown or was removed.
    #[error("tensor `{tensor}` has ggml type {type_id}, {why}")]
    TensorType {
        /// Tensor.
        tensor: String,
        /// Type id.
        type_id: u32,
        /// `unknown` or `removed from ggml (…)`.
        why: String,
    },
    /// The first dimension is not a multiple of the type's block size, or sizes overflow.
    #[error("tensor `{tensor}`: {problem}")]
    BadTensor {
        /// Tensor.
        tensor: String,
        /// What is wrong.
        problem: String,
    },
    /// `general.alignment` is not a power of two.
    #[error("`general.alignment` is {alignment}, not a power of two")]
    Alignment {
        /// Value read.
        alignment: u64,
    },
    /// Tensor data beyond the end of the file.
    #[error("tensor `{tensor}` data [{begin}, {end}) lies outside the data section of {data_bytes} bytes")]
    OffsetOutsideFile {
        /// Tensor.
        tensor: String,
        /// Start, relative to the data section.
        begin: u64,
        /// End.
        end: u64,
        /// Size of the data section.
        data_bytes: u64,
    },
}

/// A metadata value, kept when small; large arrays (tokenizer vocabularies) keep only their
/// length.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaValue {
    /// Any unsigned integer type.
    Unsigned(u64),
    /// Any signed integer type.
    Signed(i64),
    /// FLOAT32 or FLOAT64.
    Float(f64),
    /// BOOL.
    Bool(bool),
    /// STRING (lossy UTF-8).
    String(String),
    /// ARRAY: integer elements kept when the array is short.
    Array {
        /// Element type id.
        element_type: u32,
        /// Number of elements.
        count: u64,
        /// The integers, for short integer arrays.
        integers: Option<Vec<i64>>,
    },
}

impl MetaValue {
    /// The value as an unsigned integer, whatever integer type the converter wrote.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            MetaValue::Unsigned(value) => Some(*value),
            MetaValue::Signed(value) => u64::try_from(*value).ok(),
            _ => None,
        }
    }

    /// The value as a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            MetaValue::String(text) => Some(text),
            _ => None,
        }
    }
}

/// A ggml tensor type with its block size and bytes per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GgmlType {
    /// Type id.
    pub id: u32,
    /// Name (`Q4_K`, `F16`, …).
    pub name: &'static str,
    /// Elements per block.
    pub block_elements: u64,
    /// Bytes per block.
    pub block_bytes: u64,
}

/// ggml types by id: (name, block elements, block bytes), `QK_K` = 256.
const GGML_TYPES: &[(u32, &str, u64, u64)] = &[
    (0, "F32", 1, 4),
    (1, "F16", 1, 2),
    (2, "Q4_0", 32, 18),
    (3, "Q4_1", 32, 20),
    (6, "Q5_0", 32, 22),
    (7, "Q5_1", 32, 24),
    (8, "Q8_0", 32, 34),
    (9, "Q8_1", 32, 36),
    (10, "Q2_K", 256, 84),
    (11, "Q3_K", 256, 110),
    (12, "Q4_K", 256, 144),
    (13, "Q5_K", 256, 176),
    (14, "Q6_K", 256, 210),
    (15, "Q8_K", 256, 292),
    (16, "IQ2_XXS", 256, 66),
    (17, "IQ2_XS", 256, 74),
    (18, "IQ3_XXS", 256, 98),
    (19, "IQ1_S", 256, 50),
    (20, "IQ4_NL", 32, 18),
    (21, "IQ3_S", 256, 110),
    (22, "IQ2_S", 256, 82),
    (23, "IQ4_XS", 256, 136),
    (24, "I8", 1, 1),
    (25, "I16", 1, 2),
    (26, "I32", 1, 4),
    (27, "I64", 1, 8),
    (28, "F64", 1, 8),
    (29, "IQ1_M", 256, 56),
    (30, "BF16", 1, 2),
    (34, "TQ1_0", 256, 54),
    (35, "TQ2_0", 256, 66),
    (39, "MXFP4", 32, 17),
    (40, "NVFP4", 64, 36),
    (41, "Q1_0", 128, 18),
    (42, "Q2_0", 64, 18),
];

/// The ggml type of an id, or why it is refused.
pub fn ggml_type(id: u32) -> Result<GgmlType, String> {
    if let Some(&(id, name, block_elements, block_bytes)) =
        GGML_TYPES.iter().find(|entry| entry.0 == id)
    {
        return Ok(GgmlType {
            id,
            name,
            block_elements,
            block_bytes,
        });
    }
    Err(match id {
        4 | 5 => "removed from ggml (Q4_2/Q4_3)".to_string(),
        31..=33 => "removed from ggml (Q4_0_4_4/Q4_0_4_8/Q4_0_8_8)".to_string(),
        36..=38 => "removed from ggml (IQ4_NL_4_4/4_8/8_8)".to_string(),
        _ => "unknown to this oomdoc".to_string(),
    })
}

/// One tensor info.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufTensor {
    /// Name.
    pub name: String,
    /// `ne[0..n_dims]`.
    pub dims: Vec<u64>,
    /// Its type.
    pub ggml_type: GgmlType,
    /// Offset in the data section.
    pub offset: u64,
    /// Bytes: `ne0 / block · block_bytes · ne1 · ne2 · ne3`.
    pub bytes: u64,
    /// Elements.
    pub numel: u64,
}

/// A parsed header.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufHeader {
    /// 2 or 3.
    pub version: u32,
    /// Metadata (small values; see [`MetaValue`]).
    pub metadata: BTreeMap<String, MetaValue>,
    /// Tensor infos in file order.
    pub tensors: Vec<GgufTensor>,
    /// `general.alignment` or 32.
    pub alignment: u64,
    /// File offset where tensor data starts.
    pub data_offset: u64,
}

impl GgufHeader {
    /// A metadata value.
    pub fn get(&self, key: &str) -> Option<&MetaValue> {
        self.metadata.get(key)
    }

    /// `general.architecture`.
    pub fn architecture(&self) -> Option<&str> {
        self.get("general.architecture").and_then(MetaValue::as_str)
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    position: u64,
    file_bytes: u64,
}

impl Cursor<'_> {
    fn remaining_in_file(&self) -> u64 {
        self.file_bytes.saturating_sub(self.position)
    }

    fn take(&mut self, count: u64, what: &str) -> Result<&[u8], GgufError> {
        let end = self.position.saturating_add(count);
        if end > self.file_bytes {
            return Err(GgufError::Truncated {
                what: what.to_string(),
                offset: self.position,
                needed: count,
                file_bytes: self.file_bytes,
            });
        }
        let (Ok(start), Ok(stop)) = (usize::try_from(self.position), usize::try_from(end)) else {
            return Err(GgufError::NeedMore { bytes: end });
        };
        let Some(slice) = self.bytes.get(start..stop) else {
            return Err(GgufError::NeedMore { bytes: end });
        };
        self.position = end;
        Ok(slice)
    }

    fn u8(&mut self, what: &str) -> Result<u8, GgufError> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16, GgufError> {
        let raw = self.take(2, what)?;
        Ok(u16::from_le_bytes([raw[0], raw[1]]))
    }

    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        let raw = self.take(4, what)?;
        Ok(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        let raw = self.take(8, what)?;
        let mut array = [0u8; 8];
        array.copy_from_slice(raw);
        Ok(u64::from_le_bytes(array))
    }

    fn string(&mut self, what: &str) -> Result<String, GgufError> {
        let length = self.u64(what)?;
        let raw = self.take(length, what)?;
        Ok(String::from_utf8_lossy(raw).into_owned())
    }

    fn skip_string(&mut self, what: &str) -> Result<(), GgufError> {
        let length = self.u64(what)?;
        self.take(length, what)?;
        Ok(())
    }

    fn check_count(&self, what: &str, count: u64, minimum_each: u64) -> Result<(), GgufError> {
        let remaining = self.remaining_in_file();
        if count > remaining / minimum_each.max(1) {
            return Err(GgufError::AbsurdCount {
                what: what.to_string(),
                count,
                offset: self.position,
                remaining,
            });
        }
        Ok(())
    }
}

/// Smallest encoded size of a value of each type (arrays: type + count).
fn minimum_value_bytes(value_type: u32) -> u64 {
    match value_type {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        8 | 10..=12 => 8,
        9 => 12,
        _ => 1,
    }
}

fn read_value(
    cursor: &mut Cursor<'_>,
    key: &str,
    value_type: u32,
    depth: u32,
) -> Result<MetaValue, GgufError> {
    let what = "metadata value";
    Ok(match value_type {
        0 => MetaValue::Unsigned(u64::from(cursor.u8(what)?)),
        1 => MetaValue::Signed(i64::from(cursor.u8(what)? as i8)),
        2 => MetaValue::Unsigned(u64::from(cursor.u16(what)?)),
        3 => MetaValue::Signed(i64::from(cursor.u16(what)? as i16)),
        4 => MetaValue::Unsigned(u64::from(cursor.u32(what)?)),
        5 => MetaValue::Signed(i64::from(cursor.u32(what)? as i32)),
        6 => MetaValue::Float(f64::from(f32::from_bits(cursor.u32(what)?))),
        7 => MetaValue::Bool(cursor.u8(what)? != 0),
        8 => MetaValue::String(cursor.string(what)?),
        10 => MetaValue::Unsigned(cursor.u64(what)?),
        11 => MetaValue::Signed(cursor.u64(what)? as i64),
        12 => MetaValue::Float(f64::from_bits(cursor.u64(what)?)),
        9 => {
            if depth >= MAX_ARRAY_DEPTH {
                return Err(GgufError::TooDeep {
                    key: key.to_string(),
                });
            }
            let element_type = cursor.u32("array element type")?;
            if element_type > 12 {
                return Err(GgufError::ValueType {
                    key: key.to_string(),
                    value_type: element_type,
                });
            }
            let count = cursor.u64("array length")?;
            cursor.check_count(
                &format!("array `{key}`"),
                count,
                minimum_value_bytes(element_type),
            )?;
            let is_integer = matches!(element_type, 0..=5 | 10 | 11);
            let fixed_size = match element_type {
                0 | 1 | 7 => Some(1u64),
                2 | 3 => Some(2),
                4..=6 => Some(4),
                10..=12 => Some(8),
                _ => None,
            };
            if let Some(size) = fixed_size.filter(|_| !(is_integer && count <= KEEP_ARRAY_MAX)) {
                // Not kept: skip the whole array at once (a vocabulary's scores, say).
                cursor.take(count.saturating_mul(size), "array elements")?;
                return Ok(MetaValue::Array {
                    element_type,
                    count,
                    integers: None,
                });
            }
            let mut integers = (is_integer && count <= KEEP_ARRAY_MAX).then(Vec::new);
            for _ in 0..count {
                if element_type == 8 {
                    cursor.skip_string("array string")?;
                    continue;
                }
                let element = read_value(cursor, key, element_type, depth + 1)?;
                if let Some(list) = integers.as_mut() {
                    match element {
                        MetaValue::Unsigned(value) => {
                            list.push(i64::try_from(value).unwrap_or(i64::MAX))
                        }
                        MetaValue::Signed(value) => list.push(value),
                        _ => {}
                    }
                }
            }
            MetaValue::Array {
                element_type,
                count,
                integers,
            }
        }
        other => {
            return Err(GgufError::ValueType {
                key: key.to_string(),
                value_type: other,
            })
        }
    })
}

/// Parses a GGUF header from `bytes`, a prefix of a file of `file_bytes` bytes.
pub fn parse(bytes: &[u8], file_bytes: u64) -> Result<GgufHeader, GgufError> {
    let mut cursor = Cursor {
        bytes,
        position: 0,
        file_bytes,
    };
    let magic = cursor.take(4, "magic").map_err(|error| match error {
        GgufError::Truncated { .. } => GgufError::BadMagic {
            found: bytes.to_vec(),
        },
        other => other,
    })?;
    if magic != b"GGUF" {
        return Err(GgufError::BadMagic {
            found: magic.to_vec(),
        });
    }
    let version = cursor.u32("version")?;
    if !(2..=3).contains(&version) {
        return Err(GgufError::Version { version });
    }
    let tensor_count = cursor.u64("tensor count")?;
    let metadata_count = cursor.u64("metadata count")?;
    for (what, count, limit, offset) in [
        ("tensor", tensor_count, MAX_TENSORS, 8),
        ("metadata", metadata_count, MAX_METADATA, 16),
    ] {
        if count > limit {
            return Err(GgufError::CountAboveLimit {
                what: what.to_string(),
                count,
                offset,
                limit,
            });
        }
    }
    // Smallest metadata entry: empty key (8) + type (4) + 1-byte value.
    cursor.check_count("metadata", metadata_count, 13)?;
    let mut metadata = BTreeMap::new();
    for _ in 0..metadata_count {
        let key = cursor.string("metadata key")?;
        let value_type = cursor.u32("metadata value type")?;
        let value = read_value(&mut cursor, &key, value_type, 0)?;
        metadata.insert(key, value);
    }
    // Smallest tensor info: empty name (8) + n_dims (4) + one dim (8) + type (4) + offset (8).
    cursor.check_count("tensor", tensor_count, 32)?;
    let mut infos = Vec::new();
    for _ in 0..tensor_count {
        let name = cursor.string("tensor name")?;
        let n_dims = cursor.u32("tensor dimension count")?;
        if n_dims > MAX_DIMS {
            return Err(GgufError::Dims {
                tensor: name,
                n_dims,
            });
        }
        let mut dims = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            dims.push(cursor.u64("tensor dimension")?);
        }
        let type_id = cursor.u32("tensor type")?;
        let offset = cursor.u64("tensor offset")?;
        let ggml_type = ggml_type(type_id).map_err(|why| GgufError::TensorType {
            tensor: name.clone(),
            type_id,
            why,
        })?;
        infos.push((name, dims, ggml_type, offset));
    }
    let alignment = match metadata.get("general.alignment") {
        Some(value) => {
            let alignment = value.as_u64().unwrap_or(0);
            if alignment == 0 || !alignment.is_power_of_two() {
                return Err(GgufError::Alignment { alignment });
            }
            alignment
        }
        None => DEFAULT_ALIGNMENT,
    };
    let data_offset = cursor
        .position
        .div_ceil(alignment)
        .saturating_mul(alignment);
    let data_bytes = file_bytes.saturating_sub(data_offset);
    let mut tensors = Vec::with_capacity(infos.len());
    for (name, dims, ggml_type, offset) in infos {
        let bad = |problem: String| GgufError::BadTensor {
            tensor: name.clone(),
            problem,
        };
        let numel = dims
            .iter()
            .try_fold(1u64, |acc, &dim| acc.checked_mul(dim))
            .ok_or_else(|| bad(format!("dimensions {dims:?} overflow")))?;
        let first = dims.first().copied().unwrap_or(1);
        if first % ggml_type.block_elements != 0 {
            return Err(bad(format!(
                "first dimension {first} is not a multiple of the {} block size {}",
                ggml_type.name, ggml_type.block_elements
            )));
        }
        let bytes = (numel / ggml_type.block_elements)
            .checked_mul(ggml_type.block_bytes)
            .ok_or_else(|| bad(format!("size of dimensions {dims:?} overflows")))?;
        let end = offset.saturating_add(bytes);
        if end > data_bytes {
            return Err(GgufError::OffsetOutsideFile {
                tensor: name,
                begin: offset,
                end,
                data_bytes,
            });
        }
        tensors.push(GgufTensor {
            name,
            dims,
            ggml_type,
            offset,
            bytes,
            numel,
        });
    }
    Ok(GgufHeader {
        version,
        metadata,
        tensors,
        alignment,
        data_offset,
    })
}

/// Name of a llama.cpp `general.file_type` (`LLAMA_FTYPE_*` in `llama.h`), when known.
pub fn file_type_name(file_type: u64) -> Option<&'static str> {
    Some(match file_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        32 => "BF16",
        _ => return None,
    })
}

/// Test and fixture helper: writes a GGUF v3 header (metadata and tensor infos) followed by
/// zero padding so every tensor's data fits. Public so the CLI tests can build files too.
pub mod writer {
    /// A metadata value to write.
    #[derive(Debug, Clone)]
    pub enum Value {
        /// UINT32.
        U32(u32),
        /// UINT64.
        U64(u64),
        /// FLOAT32.
        F32(f32),
        /// STRING.
        Str(String),
        /// ARRAY of INT32.
        I32Array(Vec<i32>),
        /// ARRAY of STRING.
        StrArray(Vec<String>),
    }

    fn string(out: &mut Vec<u8>, text: &str) {
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    }

    /// The header bytes and the total file size (header, padding to 32, tensor data).
    /// Tensors are `(name, dims, ggml type id, bytes)`, laid out one after another.
    pub fn header(
        metadata: &[(&str, Value)],
        tensors: &[(&str, Vec<u64>, u32, u64)],
    ) -> (Vec<u8>, u64) {
        let mut out = b"GGUF".to_vec();
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
        out.extend_from_slice(&(metadata.len() as u64).to_le_bytes());
        for (key, value) in metadata {
            string(&mut out, key);
            match value {
                Value::U32(v) => {
                    out.extend_from_slice(&4u32.to_le_bytes());
                    out.extend_from_slice(&v.to_le_bytes());
                }
                Value::U64(v) => {
                    out.extend_from_slice(&10u32.to_le_bytes());
                    out.extend_from_slice(&v.to_le_bytes());
                }
                Value::F32(v) => {
                    out.extend_from_slice(&6u32.to_le_bytes());
                    out.extend_from_slice(&v.to_le_bytes());
                }
                Value::Str(text) => {
                    out.extend_from_slice(&8u32.to_le_bytes());
                    string(&mut out, text);
                }
                Value::I32Array(values) => {
                    out.extend_from_slice(&9u32.to_le_bytes());
                    out.extend_from_slice(&5u32.to_le_bytes());
                    out.extend_from_slice(&(values.len() as u64).to_le_bytes());
                    for v in values {
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
                Value::StrArray(values) => {
                    out.extend_from_slice(&9u32.to_le_bytes());
                    out.extend_from_slice(&8u32.to_le_bytes());
                    out.extend_from_slice(&(values.len() as u64).to_le_bytes());
                    for v in values {
                        string(&mut out, v);
                    }
                }
            }
        }
        let mut offset = 0u64;
        let mut end = 0u64;
        for (name, dims, type_id, bytes) in tensors {
            string(&mut out, name);
            out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
            for dim in dims {
                out.extend_from_slice(&dim.to_le_bytes());
            }
            out.extend_from_slice(&type_id.to_le_bytes());
            out.extend_from_slice(&offset.to_le_bytes());
            end = offset + bytes;
            offset += bytes.div_ceil(32) * 32;
        }
        let data_start = (out.len() as u64).div_ceil(32) * 32;
        (out, data_start + end)
    }
}

#[cfg(test)]
mod tests {
    use super::writer::{header, Value};
    use super::*;

    #[test]
    fn reads_metadata_and_tensor_sizes() {
        let (bytes, size) = header(
            &[
                ("general.architecture", Value::Str("llama".into())),
                ("llama.block_count", Value::U32(2)),
                (
                    "tokenizer.ggml.tokens",
                    Value::StrArray(vec!["a".into(), "bb".into()]),
                ),
                ("llama.attention.head_count_kv", Value::I32Array(vec![8, 4])),
            ],
            &[
                (
                    "blk.0.attn_q.weight",
                    vec![4096, 4096],
                    12,
                    4096 * 4096 / 256 * 144,
                ),
                ("output_norm.weight", vec![4096], 0, 4096 * 4),
            ],
        );
        let parsed = parse(&bytes, size).unwrap();
        assert_eq!(parsed.architecture(), Some("llama"));
        assert_eq!(parsed.tensors[0].ggml_type.name, "Q4_K");
        assert_eq!(parsed.tensors[0].bytes, 9_437_184);
        assert_eq!(parsed.tensors[1].bytes, 16384);
        assert_eq!(
            parsed.get("llama.attention.head_count_kv"),
            Some(&MetaValue::Array {
                element_type: 5,
                count: 2,
                integers: Some(vec![8, 4])
            })
        );
        assert_eq!(
            parsed.get("tokenizer.ggml.tokens"),
            Some(&MetaValue::Array {
                element_type: 8,
                count: 2,
                integers: None
            })
        );
    }

    #[test]
    fn short_prefix_asks_for_more() {
        let (bytes, size) = header(&[("general.name", Value::Str("x".repeat(100)))], &[]);
        assert!(matches!(
            parse(&bytes[..40], size),
            Err(GgufError::NeedMore { .. })
        ));
        assert!(parse(&bytes, size).is_ok());
    }

    #[test]
    fn absurd_counts_are_refused() {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend_from_slice(&3u32.to_le_bytes());
        bytes.extend_from_slice(&u64::MAX.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        let error = parse(&bytes, bytes.len() as u64).unwrap_err();
        assert!(
            matches!(error, GgufError::CountAboveLimit { .. }),
            "{error}"
        );
        // Within the limit but more than the file can hold.
        bytes[8..16].copy_from_slice(&1000u64.to_le_bytes());
        let error = parse(&bytes, bytes.len() as u64).unwrap_err();
        assert!(matches!(error, GgufError::AbsurdCount { .. }), "{error}");
        let mut bytes = b"GGUF".to_vec();
        bytes.extend_from_slice(&1u32.to_le_bytes());
        assert_eq!(
            parse(&bytes, 8).unwrap_err(),
            GgufError::Version { version: 1 }
        );
        assert!(matches!(parse(b"GGML", 4), Err(GgufError::BadMagic { .. })));
    }

    #[test]
    fn tensor_past_the_end_is_refused() {
        let (bytes, size) = header(&[], &[("w", vec![32], 8, 34)]);
        let error = parse(&bytes, size - 1).unwrap_err();
        assert!(
            matches!(error, GgufError::OffsetOutsideFile { .. }),
            "{error}"
        );
    }

    #[test]
    fn removed_types_are_named() {
        assert!(ggml_type(4).unwrap_err().contains("removed"));
        assert_eq!(ggml_type(14).unwrap().name, "Q6_K");
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_after_the_magic_never_panic(
            tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            extra in 0u64..(1u64 << 42),
        ) {
            let mut bytes = b"GGUF\x03\x00\x00\x00".to_vec();
            bytes.extend_from_slice(&tail);
            let _ = parse(&bytes, bytes.len() as u64);
            let _ = parse(&bytes, bytes.len() as u64 + extra);
        }

        #[test]
        fn mutated_headers_never_panic(position in 0usize..4096, value in proptest::prelude::any::<u8>()) {
            let (mut bytes, size) = header(
                &[
                    ("general.architecture", Value::Str("llama".into())),
                    ("llama.attention.head_count_kv", Value::I32Array(vec![8, 8])),
                    ("tokenizer.ggml.tokens", Value::StrArray(vec!["a".into(), "b".into()])),
                ],
                &[("w", vec![256, 2], 12, 288), ("n", vec![4], 0, 16)],
            );
            let index = position % bytes.len();
            bytes[index] = value;
            let _ = parse(&bytes, size);
        }
    }
}
