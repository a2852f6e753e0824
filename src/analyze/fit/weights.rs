//! Weight bytes from the checkpoint's own headers: tensors by dtype and role, the files, the
//! quantization the headers show against what the config and the names declare.

use super::*;

/// Role of a tensor in a quantized checkpoint, from its name.
pub(super) fn quant_role(name: &str) -> Option<&'static str> {
    const ROLES: &[(&str, &str)] = &[
        (".qweight", "qweight"),
        (".qzeros", "qzeros"),
        (".scales", "scales"),
        (".g_idx", "g_idx"),
        (".weight_scale_inv", "weight_scale"),
        (".weight_scale", "weight_scale"),
        (".input_scale", "input_scale"),
        (".weight_packed", "weight_packed"),
        (".weight_zero_point", "zero_point"),
        (".weight_global_scale", "weight_scale"),
        (".weight_shape", "weight_shape"),
        (".absmax", "bitsandbytes_state"),
        (".quant_map", "bitsandbytes_state"),
        (".nested_absmax", "bitsandbytes_state"),
        (".nested_quant_map", "bitsandbytes_state"),
        (".SCB", "bitsandbytes_state"),
        ("_blocks", "blocks"),
        ("_scales", "scales"),
    ];
    if name.contains(".quant_state.") {
        return Some("bitsandbytes_state");
    }
    ROLES
        .iter()
        .find(|(suffix, _)| name.ends_with(suffix))
        .map(|(_, role)| *role)
}

pub(super) fn is_float(dtype: &str) -> bool {
    matches!(dtype, "F16" | "BF16" | "F32" | "F64")
}

pub(super) fn dtype_word(config_dtype: &str) -> Option<&'static str> {
    Some(match config_dtype {
        "bfloat16" => "BF16",
        "float16" | "half" | "fp16" => "F16",
        "float32" | "float" | "fp32" => "F32",
        _ => return None,
    })
}

pub(super) fn is_embedding_or_head(name: &str) -> bool {
    [
        "embed",
        "lm_head",
        "wte",
        "wpe",
        "token_embd",
        "output.weight",
        "norm",
    ]
    .iter()
    .any(|word| name.contains(word))
        || name == "output.weight"
}

/// Builds the report.
/// A sum that stops at `u64::MAX` instead of wrapping.
pub(super) fn saturating_sum(values: impl Iterator<Item = u64>) -> u64 {
    values.fold(0u64, u64::saturating_add)
}

pub(super) fn collect_tensors(input: &FitInput) -> Vec<TensorFacts> {
    let mut tensors = Vec::new();
    for file in &input.safetensors {
        for tensor in &file.header.tensors {
            tensors.push(TensorFacts {
                name: tensor.name.clone(),
                dtype: tensor.dtype.clone(),
                bytes: tensor.stored_bytes(),
                numel: tensor.numel().unwrap_or(0),
                dims: tensor.shape.iter().filter(|d| **d > 1).count(),
            });
        }
    }
    for file in &input.gguf {
        for tensor in &file.header.tensors {
            tensors.push(TensorFacts {
                name: tensor.name.clone(),
                dtype: tensor.ggml_type.name.to_string(),
                bytes: tensor.bytes,
                numel: tensor.numel,
                dims: tensor.dims.iter().filter(|d| **d > 1).count(),
            });
        }
    }
    tensors
}

pub(super) fn files(input: &FitInput) -> Vec<CheckpointFile> {
    let mut files: Vec<CheckpointFile> = input
        .safetensors
        .iter()
        .map(|file| CheckpointFile {
            path: file.path.clone(),
            size_bytes: Bytes(file.size_bytes),
            header_bytes: Bytes(file.header_bytes),
            tensors: file.header.tensors.len() as u64,
        })
        .collect();
    files.extend(input.gguf.iter().map(|file| CheckpointFile {
        path: file.path.clone(),
        size_bytes: Bytes(file.size_bytes),
        header_bytes: Bytes(file.header.data_offset),
        tensors: file.header.tensors.len() as u64,
    }));
    files
}

pub(super) fn dominant(
    by_dtype: &BTreeMap<String, Bytes>,
    filter: fn(&str) -> bool,
) -> Option<String> {
    by_dtype
        .iter()
        .filter(|(dtype, _)| filter(dtype))
        .max_by_key(|(_, bytes)| **bytes)
        .map(|(dtype, _)| dtype.clone())
}

pub(super) fn model_dtype(
    input: &FitInput,
    config_dtype: Option<&str>,
    dominant_float: Option<&str>,
) -> (String, u64) {
    if !input.gguf.is_empty() {
        return ("f16".to_string(), 2);
    }
    match config_dtype.or(match dominant_float {
        Some("F16") => Some("float16"),
        Some("BF16") => Some("bfloat16"),
        Some("F32") => Some("float32"),
        _ => None,
    }) {
        Some("float16") | Some("half") => ("fp16".to_string(), 2),
        // vLLM downcasts float32 checkpoints to bfloat16 under `--dtype auto`.
        _ => ("bf16".to_string(), 2),
    }
}

pub(super) fn percent(part: u64, whole: u64) -> u64 {
    if whole == 0 {
        0
    } else {
        (part as u128 * 100 / whole as u128) as u64
    }
}

pub(super) fn found_phrase(weights: &Weights) -> String {
    let total = weights.total_bytes.get();
    let mut parts: Vec<(&String, &Bytes)> = weights.by_dtype.iter().collect();
    parts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    parts
        .iter()
        .map(|(dtype, bytes)| format!("{dtype} {}%", percent(bytes.get(), total)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Format words looked for in names, with what each claims.
pub(super) const NAME_HINTS: &[(&str, &str)] = &[
    ("int4", "int4"),
    ("4bit", "int4"),
    ("4-bit", "int4"),
    ("w4a16", "int4"),
    ("awq", "int4"),
    ("gptq", "int4"),
    ("nf4", "int4"),
    ("bnb-4bit", "int4"),
    ("mxfp4", "fp4"),
    ("nvfp4", "fp4"),
    ("int8", "int8"),
    ("8bit", "int8"),
    ("w8a8", "int8"),
    ("fp8", "fp8"),
    ("q2_k", "gguf"),
    ("q3_k_s", "gguf"),
    ("q3_k_m", "gguf"),
    ("q3_k_l", "gguf"),
    ("q4_0", "gguf"),
    ("q4_1", "gguf"),
    ("q4_k_s", "gguf"),
    ("q4_k_m", "gguf"),
    ("q5_0", "gguf"),
    ("q5_1", "gguf"),
    ("q5_k_s", "gguf"),
    ("q5_k_m", "gguf"),
    ("q6_k", "gguf"),
    ("q8_0", "gguf"),
];

pub(super) fn name_hints(names: &[String]) -> Vec<(String, &'static str)> {
    let mut hints: Vec<(String, &'static str)> = Vec::new();
    for name in names {
        let lower = name.to_ascii_lowercase().replace('.', "_");
        for (word, claim) in NAME_HINTS {
            let bounded = lower.match_indices(word).any(|(at, _)| {
                let before = lower[..at].chars().next_back();
                let after = lower[at + word.len()..].chars().next();
                !before.is_some_and(|c| c.is_ascii_alphanumeric())
                    && !after.is_some_and(|c| c.is_ascii_alphanumeric())
            });
            if bounded && !hints.iter().any(|(w, _)| w == word) {
                hints.push(((*word).to_string(), claim));
            }
        }
    }
    hints
}

pub(super) fn declared(
    input: &FitInput,
    weights: &Weights,
    tensors: &[TensorFacts],
    mismatches: &mut Vec<Mismatch>,
) -> DeclaredFormat {
    let quantization = input.config.as_ref().and_then(|c| c.quantization.clone());
    let config_dtype = input.config.as_ref().and_then(|c| c.dtype.clone());
    let gguf_file_type = input.gguf.first().and_then(|file| {
        file.header
            .get("general.file_type")
            .and_then(MetaValue::as_u64)
            .map(|id| {
                gguf::file_type_name(id).map_or_else(|| format!("file type {id}"), str::to_string)
            })
    });
    let hints = name_hints(&input.names);
    let bytes_of = |dtypes: &[&str]| -> u64 {
        dtypes
            .iter()
            .map(|d| weights.by_dtype.get(*d).map_or(0, |b| b.get()))
            .sum()
    };
    let total = weights.total_bytes.get();
    let found = found_phrase(weights);
    let packed_int = weights.quantization_parts.contains_key("qweight")
        || weights.quantization_parts.contains_key("weight_packed");
    let fp8 = bytes_of(&["F8_E4M3", "F8_E5M2", "F8_E4M3FNUZ", "F8_E5M2FNUZ"]);
    let fp4 = bytes_of(&["F4"])
        + weights
            .quantization_parts
            .get("blocks")
            .map_or(0, |b| b.get());
    let int8 = bytes_of(&["I8"]);
    let gguf_types: BTreeMap<&str, u64> = if input.gguf.is_empty() {
        BTreeMap::new()
    } else {
        let mut map = BTreeMap::new();
        for tensor in tensors {
            *map.entry(tensor.dtype.as_str()).or_default() += tensor.bytes;
        }
        map
    };
    let gguf_share = |prefixes: &[&str]| -> u64 {
        gguf_types
            .iter()
            .filter(|(name, _)| prefixes.iter().any(|p| name.starts_with(p)))
            .map(|(_, bytes)| *bytes)
            .sum()
    };
    let bnb_state = weights
        .quantization_parts
        .contains_key("bitsandbytes_state");

    // Config dtype against the float weights.
    if let (Some(dtype), Some(word)) = (&config_dtype, config_dtype.as_deref().and_then(dtype_word))
    {
        let float_total = bytes_of(&["F16", "BF16", "F32", "F64"]);
        let matching = bytes_of(&[word]);
        if float_total > 0 && percent(matching, float_total) < 50 {
            let dominant = dominant(&weights.by_dtype, is_float).unwrap_or_default();
            mismatches.push(Mismatch {
                kind: "dtype".to_string(),
                message: format!(
                    "config.json says `{dtype}` but {}% of the float weights are {dominant} in the headers; `--dtype auto` loads them as {dtype}",
                    percent(float_total - matching, float_total)
                ),
            });
        }
    }

    // Quantization config against the headers.
    if let Some(q) = &quantization {
        let method = q.method.to_ascii_lowercase();
        let expectation: Option<(bool, &str)> = match method.as_str() {
            "gptq" | "awq" | "gptq_marlin" | "awq_marlin" | "auto-round" | "autoround" => {
                Some((packed_int, "packed integer `qweight` tensors (I32)"))
            }
            "fp8" | "fbgemm_fp8" | "ptpc_fp8" => Some((fp8 > 0, "F8_E4M3 weights")),
            "bitsandbytes" if q.bits == Some(8) => Some((int8 > 0, "I8 weights with `SCB` scales")),
            "bitsandbytes" => Some((bnb_state, "U8 weights with `absmax`/`quant_state` tensors")),
            "mxfp4" => Some((fp4 > 0, "U8 `_blocks` (packed FP4) tensors")),
            "compressed-tensors" | "modelopt" => match (q.bits, q.format.as_deref()) {
                (Some(8), Some("float")) => Some((fp8 > 0, "F8_E4M3 weights")),
                (Some(8), _) if method == "modelopt" => Some((fp8 > 0, "F8_E4M3 weights")),
                (Some(8), _) => Some((int8 > 0 || fp8 > 0, "8-bit weights (I8 or F8)")),
                (Some(4), _) => Some((
                    packed_int || fp4 > 0 || bytes_of(&["U8"]) > 0,
                    "packed 4-bit weights",
                )),
                _ => None,
            },
            _ => None,
        };
        if let Some((present, what)) = expectation {
            if !present {
                mismatches.push(Mismatch {
                    kind: "quantization".to_string(),
                    message: format!(
                        "config.json declares `quant_method` `{}`{} but the headers hold no {what}: they hold {found}",
                        q.method,
                        q.bits.map(|b| format!(" ({b}-bit)")).unwrap_or_default()
                    ),
                });
            }
        }
    } else if input.config.is_some() && (packed_int || fp8 > 0) {
        let what = if packed_int {
            "packed integer `qweight` tensors"
        } else {
            "F8_E4M3 weights"
        };
        mismatches.push(Mismatch {
            kind: "quantization".to_string(),
            message: format!(
                "the headers hold {what} but config.json has no `quantization_config`: an engine will not know how to load them"
            ),
        });
    }

    // Names against the headers: a name saying int4 does not make a file int4.
    for (word, claim) in &hints {
        let (present, expected) = match *claim {
            "int4" | "fp4" if !input.gguf.is_empty() => (
                gguf_share(&[
                    "Q4", "IQ4", "MXFP4", "NVFP4", "Q3", "Q2", "IQ3", "IQ2", "IQ1",
                ]) * 2
                    > total,
                "a 4-bit GGUF type",
            ),
            "int4" | "fp4" => (
                packed_int || fp4 > 0 || bnb_state || bytes_of(&["U8"]) * 4 > total,
                "packed 4-bit weights",
            ),
            "int8" if !input.gguf.is_empty() => (gguf_share(&["Q8"]) * 2 > total, "Q8_0 tensors"),
            "int8" => (int8 > 0, "I8 weights"),
            "fp8" => (fp8 > 0, "F8 weights"),
            "gguf" => {
                if input.gguf.is_empty() {
                    (false, "GGUF tensors")
                } else {
                    let upper = word.to_ascii_uppercase();
                    let family = upper.split('_').take(2).collect::<Vec<_>>().join("_");
                    let by_file_type = gguf_file_type.as_deref() == Some(upper.as_str());
                    (
                        by_file_type || gguf_share(&[family.as_str()]) > 0,
                        "tensors of that type",
                    )
                }
            }
            _ => (true, ""),
        };
        if !present {
            mismatches.push(Mismatch {
                kind: "name".to_string(),
                message: format!(
                    "the name says `{word}` but the headers hold no {expected}: they hold {found} ({}); a name saying {word} does not make a file {word}",
                    weights.total_bytes
                ),
            });
        }
    }

    DeclaredFormat {
        config_dtype,
        quant_method: quantization.as_ref().map(|q| q.method.clone()),
        bits: quantization.as_ref().and_then(|q| q.bits),
        group_size: quantization.as_ref().and_then(|q| q.group_size),
        gguf_file_type,
        name_hints: hints.into_iter().map(|(word, _)| word).collect(),
        found,
    }
}

pub(super) fn header_mismatches(
    input: &FitInput,
    weights: &Weights,
    mismatches: &mut Vec<Mismatch>,
) {
    for file in &input.safetensors {
        for problem in file.header.problems.iter().take(20) {
            mismatches.push(Mismatch {
                kind: "header".to_string(),
                message: format!("`{}`: {problem}", file.path),
            });
        }
    }
    let Some(index) = &input.index else {
        return;
    };
    if let Some(total_size) = index.total_size {
        if total_size != weights.total_bytes.get() {
            mismatches.push(Mismatch {
                kind: "index".to_string(),
                message: format!(
                    "`model.safetensors.index.json` says `total_size` {total_size} but the headers sum to {} bytes (the index is a hint; the headers are used)",
                    weights.total_bytes.get()
                ),
            });
        }
    }
    let in_headers: std::collections::BTreeSet<&str> = input
        .safetensors
        .iter()
        .flat_map(|file| file.header.tensors.iter().map(|t| t.name.as_str()))
        .collect();
    let missing: Vec<&String> = index
        .weight_map
        .keys()
        .filter(|name| !in_headers.contains(name.as_str()))
        .collect();
    if let Some(first) = missing.first() {
        mismatches.push(Mismatch {
            kind: "index".to_string(),
            message: format!(
                "{} tensors of the index's `weight_map` are in no shard header (first: `{first}`)",
                missing.len()
            ),
        });
    }
}
