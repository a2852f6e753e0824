//! safetensors headers: 8-byte little-endian length `N`, then `N` bytes of JSON mapping each
//! tensor to `dtype`, `shape` and `data_offsets` (relative to the data buffer after the
//! header). Layout and limits follow `huggingface/safetensors` (`README.md`,
//! `safetensors/src/tensor.rs`: `MAX_HEADER_SIZE` = 100 000 000).
//!
//! Pure: [`header_length`] checks the declared length against the file size and the cap
//! before the caller allocates anything; [`parse_header`] parses the JSON it then read.

use std::collections::BTreeMap;

/// Largest header safetensors itself accepts (`MAX_HEADER_SIZE`, 100 MB).
pub const MAX_HEADER_BYTES: u64 = 100_000_000;

/// What can be wrong with a safetensors header. The caller adds the file path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SafetensorsError {
    /// Fewer than 8 bytes: no header length.
    #[error("file is {file_bytes} bytes, too short for the 8-byte header length")]
    TooShort {
        /// File size.
        file_bytes: u64,
    },
    /// The declared header length is above safetensors' own cap.
    #[error("header length {declared} bytes is above the 100 MB limit of safetensors (`MAX_HEADER_SIZE`)")]
    HeaderTooLarge {
        /// Declared length.
        declared: u64,
    },
    /// The declared header runs past the end of the file.
    #[error("header length {declared} bytes runs past the end of the file ({file_bytes} bytes): truncated, or not a safetensors file")]
    HeaderPastEnd {
        /// Declared length.
        declared: u64,
        /// File size.
        file_bytes: u64,
    },
    /// The header is not JSON.
    #[error("header is not valid JSON: {message}")]
    BadJson {
        /// serde_json's message (line and column).
        message: String,
    },
    /// The header is JSON but not an object of tensors.
    #[error("header is not a JSON object of tensors (starts with `{start}`)")]
    NotObject {
        /// First characters of the header.
        start: String,
    },
    /// A tensor entry lacks a field or has a field of the wrong type.
    #[error("tensor `{tensor}`: {problem}")]
    BadTensor {
        /// Tensor name.
        tensor: String,
        /// What is wrong.
        problem: String,
    },
    /// A dtype oomdoc does not know (the list is safetensors' `Dtype` enum).
    #[error("tensor `{tensor}` has unknown dtype `{dtype}`")]
    UnknownDtype {
        /// Tensor name.
        tensor: String,
        /// The dtype string.
        dtype: String,
    },
    /// `data_offsets` point outside the data buffer.
    #[error("tensor `{tensor}` has data_offsets [{begin}, {end}] outside the data buffer of {data_bytes} bytes")]
    OffsetOutsideFile {
        /// Tensor name.
        tensor: String,
        /// Begin offset.
        begin: u64,
        /// End offset (exclusive).
        end: u64,
        /// Size of the data buffer (file size − 8 − header length).
        data_bytes: u64,
    },
}

/// One tensor as the header describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// Tensor name, e.g. `model.layers.0.self_attn.q_proj.weight`.
    pub name: String,
    /// safetensors dtype string (`BF16`, `F8_E4M3`, `I32`, …).
    pub dtype: String,
    /// Shape.
    pub shape: Vec<u64>,
    /// Start of the data, relative to the data buffer.
    pub begin: u64,
    /// End of the data (exclusive).
    pub end: u64,
}

impl TensorInfo {
    /// Bytes the file stores for this tensor (`end − begin`): the weight bytes, exactly.
    pub fn stored_bytes(&self) -> u64 {
        self.end - self.begin
    }

    /// Number of elements, `None` on overflow.
    pub fn numel(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &dim| acc.checked_mul(dim))
    }

    /// Bytes implied by shape × dtype, `None` on overflow or unknown dtype.
    pub fn expected_bytes(&self) -> Option<u64> {
        let bits = dtype_bits(&self.dtype)?;
        Some(self.numel()?.checked_mul(bits)?.div_ceil(8))
    }
}

/// A parsed header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SafetensorsHeader {
    /// Tensors, sorted by `begin`.
    pub tensors: Vec<TensorInfo>,
    /// `__metadata__` (string values; others are skipped).
    pub metadata: BTreeMap<String, String>,
    /// Problems that do not stop the sizing: shape × dtype ≠ stored bytes, holes or overlaps.
    pub problems: Vec<String>,
    /// Size of the data buffer (file size − 8 − header length).
    pub data_bytes: u64,
}

/// Element size in bits of a safetensors dtype (`Dtype::bitsize` in safetensors), or `None`
/// for an unknown dtype.
pub fn dtype_bits(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" | "F8_E4M3FNUZ"
        | "F8_E5M2FNUZ" => 8,
        "I16" | "U16" | "F16" | "BF16" => 16,
        "I32" | "U32" | "F32" => 32,
        "C64" | "F64" | "I64" | "U64" => 64,
        _ => return None,
    })
}

/// Reads the header length from the first 8 bytes and checks it against the 100 MB cap and
/// the file size, before anything is allocated for it.
pub fn header_length(prefix: &[u8], file_bytes: u64) -> Result<u64, SafetensorsError> {
    let Some(first) = prefix.get(..8) else {
        return Err(SafetensorsError::TooShort { file_bytes });
    };
    let mut raw = [0u8; 8];
    raw.copy_from_slice(first);
    let declared = u64::from_le_bytes(raw);
    if declared > MAX_HEADER_BYTES {
        return Err(SafetensorsError::HeaderTooLarge { declared });
    }
    if declared.saturating_add(8) > file_bytes {
        return Err(SafetensorsError::HeaderPastEnd {
            declared,
            file_bytes,
        });
    }
    Ok(declared)
}

/// Most problems kept word for word; the rest are counted in one last line, so a header of a
/// million mismatched tensors does not keep a million sentences.
const MAX_PROBLEMS: usize = 64;

/// Calls `each` for every entry of the header's top-level object, one at a time: each entry's
/// value is a small JSON tree dropped once read, so memory follows the tensors kept, not a
/// tree of the whole header (a 99 MB header took 2.2 GB as one `serde_json::Value`, #14).
fn for_each_entry(
    json: &[u8],
    each: &mut dyn FnMut(String, serde_json::Value) -> Result<(), SafetensorsError>,
) -> Result<(), SafetensorsError> {
    use serde::de::{Deserializer as _, Error as _, MapAccess, Visitor};

    struct EntryVisitor<'a> {
        each: &'a mut dyn FnMut(String, serde_json::Value) -> Result<(), SafetensorsError>,
        failure: &'a mut Option<SafetensorsError>,
    }
    impl<'de> Visitor<'de> for EntryVisitor<'_> {
        type Value = ();
        fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            formatter.write_str("a JSON object of tensors")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(name) = map.next_key::<String>()? {
                let value = map.next_value::<serde_json::Value>()?;
                if let Err(error) = (self.each)(name, value) {
                    *self.failure = Some(error);
                    return Err(A::Error::custom("stopped"));
                }
            }
            Ok(())
        }
    }

    let mut failure = None;
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let result = deserializer
        .deserialize_map(EntryVisitor {
            each,
            failure: &mut failure,
        })
        .and_then(|()| deserializer.end());
    if let Some(error) = failure {
        return Err(error);
    }
    result.map_err(|error| {
        if error.classify() == serde_json::error::Category::Data {
            let start: String = String::from_utf8_lossy(&json[..json.len().min(16)]).into_owned();
            SafetensorsError::NotObject { start }
        } else {
            SafetensorsError::BadJson {
                message: error.to_string(),
            }
        }
    })
}

/// Parses the JSON header. `data_bytes` is the size of the data buffer that follows it.
pub fn parse_header(json: &[u8], data_bytes: u64) -> Result<SafetensorsHeader, SafetensorsError> {
    let mut header = SafetensorsHeader {
        data_bytes,
        ..SafetensorsHeader::default()
    };
    let mut problems = Problems::default();
    for_each_entry(json, &mut |name, entry| {
        add_entry(&mut header, &mut problems, name, entry, data_bytes)
    })?;
    header
        .tensors
        .sort_by(|a, b| (a.begin, a.end, &a.name).cmp(&(b.begin, b.end, &b.name)));
    let mut cursor = 0u64;
    for tensor in &header.tensors {
        if tensor.begin > cursor {
            problems.push(|| {
                format!(
                    "{} bytes before tensor `{}` belong to no tensor (hole at offset {cursor})",
                    tensor.begin - cursor,
                    tensor.name
                )
            });
        } else if tensor.begin < cursor {
            problems.push(|| {
                format!(
                    "tensor `{}` overlaps the previous tensor (begins at {} before {cursor})",
                    tensor.name, tensor.begin
                )
            });
        }
        cursor = cursor.max(tensor.end);
    }
    if cursor < data_bytes {
        problems.push(|| {
            format!(
                "{} bytes after the last tensor belong to no tensor",
                data_bytes - cursor
            )
        });
    }
    header.problems = problems.finish();
    Ok(header)
}

/// Problems, the first [`MAX_PROBLEMS`] in words and the rest counted.
#[derive(Default)]
struct Problems {
    kept: Vec<String>,
    more: usize,
}

impl Problems {
    fn push(&mut self, problem: impl FnOnce() -> String) {
        if self.kept.len() < MAX_PROBLEMS {
            self.kept.push(problem());
        } else {
            self.more += 1;
        }
    }

    fn finish(mut self) -> Vec<String> {
        if self.more > 0 {
            self.kept
                .push(format!("{} more problems of the same kinds", self.more));
        }
        self.kept
    }
}

fn add_entry(
    header: &mut SafetensorsHeader,
    problems: &mut Problems,
    name: String,
    entry: serde_json::Value,
    data_bytes: u64,
) -> Result<(), SafetensorsError> {
    if name == "__metadata__" {
        if let serde_json::Value::Object(map) = entry {
            for (key, value) in map {
                if let serde_json::Value::String(text) = value {
                    header.metadata.insert(key, text);
                }
            }
        }
        return Ok(());
    }
    let tensor = parse_tensor(name, &entry, data_bytes)?;
    if let Some(expected) = tensor.expected_bytes() {
        if expected != tensor.stored_bytes() {
            problems.push(|| {
                format!(
                    "tensor `{}`: shape {:?} × {} is {} bytes but data_offsets hold {} bytes",
                    tensor.name,
                    tensor.shape,
                    tensor.dtype,
                    expected,
                    tensor.stored_bytes()
                )
            });
        }
    }
    header.tensors.push(tensor);
    Ok(())
}

fn parse_tensor(
    name: String,
    entry: &serde_json::Value,
    data_bytes: u64,
) -> Result<TensorInfo, SafetensorsError> {
    let bad = |problem: &str| SafetensorsError::BadTensor {
        tensor: name.clone(),
        problem: problem.to_string(),
    };
    let dtype = entry
        .get("dtype")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| bad("no `dtype` string"))?
        .to_string();
    if dtype_bits(&dtype).is_none() {
        return Err(SafetensorsError::UnknownDtype {
            tensor: name,
            dtype,
        });
    }
    let shape = entry
        .get("shape")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| bad("no `shape` array"))?
        .iter()
        .map(serde_json::Value::as_u64)
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| bad("`shape` holds something other than non-negative integers"))?;
    let offsets = entry
        .get("data_offsets")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| bad("no `data_offsets` array"))?;
    let (begin, end) = match offsets.as_slice() {
        [begin, end] => (
            begin
                .as_u64()
                .ok_or_else(|| bad("`data_offsets` begin is not a non-negative integer"))?,
            end.as_u64()
                .ok_or_else(|| bad("`data_offsets` end is not a non-negative integer"))?,
        ),
        _ => return Err(bad("`data_offsets` is not [begin, end]")),
    };
    if begin > end || end > data_bytes {
        return Err(SafetensorsError::OffsetOutsideFile {
            tensor: name,
            begin,
            end,
            data_bytes,
        });
    }
    Ok(TensorInfo {
        name,
        dtype,
        shape,
        begin,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_bytes(json: &str) -> Vec<u8> {
        let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(json.as_bytes());
        bytes
    }

    #[test]
    fn sizes_come_from_data_offsets() {
        let json = r#"{"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"a":{"dtype":"I32","shape":[4],"data_offsets":[12,28]}}"#;
        let header = parse_header(json.as_bytes(), 28).unwrap();
        assert_eq!(header.tensors.len(), 2);
        assert_eq!(header.tensors[0].name, "b");
        assert_eq!(header.tensors[1].stored_bytes(), 16);
        assert_eq!(header.metadata["format"], "pt");
        assert!(header.problems.is_empty(), "{:?}", header.problems);
    }

    #[test]
    fn shape_mismatch_is_a_problem_not_an_error() {
        let json = r#"{"w":{"dtype":"F16","shape":[4],"data_offsets":[0,6]}}"#;
        let header = parse_header(json.as_bytes(), 6).unwrap();
        assert_eq!(
            header.problems,
            vec!["tensor `w`: shape [4] × F16 is 8 bytes but data_offsets hold 6 bytes"]
        );
    }

    #[test]
    fn hostile_lengths_are_refused_before_allocation() {
        let bytes = u64::MAX.to_le_bytes();
        assert_eq!(
            header_length(&bytes, 100),
            Err(SafetensorsError::HeaderTooLarge { declared: u64::MAX })
        );
        let bytes = header_bytes("{}");
        assert_eq!(
            header_length(&bytes[..8], 5),
            Err(SafetensorsError::HeaderPastEnd {
                declared: 2,
                file_bytes: 5
            })
        );
        assert_eq!(
            header_length(&bytes[..4], 4),
            Err(SafetensorsError::TooShort { file_bytes: 4 })
        );
    }

    #[test]
    fn bad_entries_name_the_tensor() {
        let outside = r#"{"x":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}}"#;
        assert_eq!(
            parse_header(outside.as_bytes(), 16)
                .unwrap_err()
                .to_string(),
            "tensor `x` has data_offsets [0, 32] outside the data buffer of 16 bytes"
        );
        let unknown = r#"{"x":{"dtype":"Q4","shape":[8],"data_offsets":[0,4]}}"#;
        assert_eq!(
            parse_header(unknown.as_bytes(), 4).unwrap_err().to_string(),
            "tensor `x` has unknown dtype `Q4`"
        );
        assert!(matches!(
            parse_header(b"{not json", 0),
            Err(SafetensorsError::BadJson { .. })
        ));
        assert!(matches!(
            parse_header(b"[1,2]", 0),
            Err(SafetensorsError::NotObject { .. })
        ));
    }

    #[test]
    fn packed_and_fp4_dtypes_have_sizes() {
        assert_eq!(dtype_bits("F4"), Some(4));
        assert_eq!(dtype_bits("F8_E4M3"), Some(8));
        assert_eq!(dtype_bits("I32"), Some(32));
        assert_eq!(dtype_bits("Q4_K"), None);
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_never_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            extra in 0u64..(1u64 << 42),
        ) {
            let _ = header_length(&bytes, bytes.len() as u64 + extra);
            let _ = parse_header(&bytes, extra);
        }

        #[test]
        fn mutated_headers_never_panic(
            position in 0usize..120,
            value in proptest::prelude::any::<u8>(),
            data in 0u64..64,
        ) {
            let mut json = br#"{"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"b":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[12,16]}}"#.to_vec();
            let index = position % json.len();
            json[index] = value;
            let _ = parse_header(&json, data);
        }
    }
}
