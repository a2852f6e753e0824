//! Hugging Face `config.json` and `model.safetensors.index.json`: the fields that size the KV
//! cache and declare a format (after vLLM's `get_text_config`,
//! `get_num_kv_heads`, `get_head_size` and `is_deepseek_mla`).
//!
//! Pure: bytes in, facts out. Multimodal configs nest the language model under
//! `text_config` (or `language_config`, `llm_config`, …); fields are looked up there first,
//! then at the top level.

use std::collections::BTreeMap;

use serde_json::Value;

/// What can be wrong with a config or index file. The caller adds the path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not JSON.
    #[error("not valid JSON: {message}")]
    BadJson {
        /// serde_json's message.
        message: String,
    },
    /// JSON but not an object.
    #[error("not a JSON object")]
    NotObject,
}

/// Model types whose attention is DeepSeek's MLA when `kv_lora_rank` is set (vLLM
/// `is_deepseek_mla`).
const MLA_MODEL_TYPES: &[&str] = &[
    "deepseek_v2",
    "deepseek_v3",
    "deepseek_v32",
    "deepseek_mtp",
    "kimi_k2",
    "kimi_linear",
    "longcat_flash",
    "pangu_ultra_moe",
    "pangu_ultra_moe_mtp",
];

/// Keys under which multimodal configs nest their language model.
const TEXT_CONFIG_KEYS: &[&str] = &[
    "text_config",
    "language_config",
    "llm_config",
    "decoder",
    "generator",
    "text_encoder",
];

/// MLA dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mla {
    /// `kv_lora_rank` (the compressed latent cached per token).
    pub kv_lora_rank: u64,
    /// `qk_rope_head_dim` (the decoupled RoPE key cached per token).
    pub qk_rope_head_dim: u64,
}

/// `quantization_config` (or `compression_config`) as declared.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QuantizationConfig {
    /// `quant_method` (`gptq`, `awq`, `fp8`, `bitsandbytes`, `compressed-tensors`, …).
    pub method: String,
    /// `bits` (GPTQ/AWQ), or 4/8 from `load_in_4bit`/`load_in_8bit`, or the weights'
    /// `num_bits` of the first compressed-tensors group.
    pub bits: Option<u64>,
    /// `group_size` (−1 = per channel).
    pub group_size: Option<i64>,
    /// `fmt` (fp8: `e4m3`), or the compressed-tensors weight `type` (`int`, `float`).
    pub format: Option<String>,
}

/// What a layer's attention keeps in the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// Full attention: one KV entry per token of the context.
    Full,
    /// Sliding window (or chunked local) attention: at most the window.
    Sliding,
    /// No per-token KV (Mamba, linear attention, …).
    NoKv,
}

/// The fields of `config.json` that oomdoc uses.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HfConfig {
    /// `model_type` (of the text config when nested; the outer one otherwise).
    pub model_type: Option<String>,
    /// `architectures`.
    pub architectures: Vec<String>,
    /// Key of the nested text config used, e.g. `text_config`.
    pub text_config_key: Option<String>,
    /// `num_hidden_layers` (or `n_layer`, `num_layers`, `n_layers`).
    pub num_layers: Option<u64>,
    /// `hidden_size` (or `n_embd`, `d_model`).
    pub hidden_size: Option<u64>,
    /// `intermediate_size` (or `ffn_dim`, `n_inner`).
    pub intermediate_size: Option<u64>,
    /// `num_attention_heads` (or `n_head`, `n_heads`).
    pub num_attention_heads: Option<u64>,
    /// KV heads: first of `n_head_kv`, `num_kv_heads`, `num_key_value_heads`,
    /// `multi_query_group_num`; Falcon `multi_query` → 1; else the attention heads.
    pub num_kv_heads: Option<u64>,
    /// Which key gave `num_kv_heads`.
    pub num_kv_heads_key: Option<String>,
    /// `head_dim` when present and not null (or `hidden_size_per_head`).
    pub head_dim: Option<u64>,
    /// MLA dimensions when the model is DeepSeek-style MLA.
    pub mla: Option<Mla>,
    /// `max_position_embeddings` (or `max_sequence_length`, `seq_length`, `n_positions`,
    /// `max_seq_len`, `model_max_length`).
    pub max_position_embeddings: Option<u64>,
    /// `torch_dtype` or `dtype`, e.g. `bfloat16`.
    pub dtype: Option<String>,
    /// `tie_word_embeddings` (transformers' default is true when absent).
    pub tie_word_embeddings: Option<bool>,
    /// `vocab_size`.
    pub vocab_size: Option<u64>,
    /// `sliding_window` (null → `None`).
    pub sliding_window: Option<u64>,
    /// Per-layer attention kinds, resolved from `layer_types`, `use_sliding_window` /
    /// `max_window_layers`, or the Gemma patterns; empty when the layer count is unknown.
    pub layer_kinds: Vec<LayerKind>,
    /// How `layer_kinds` was decided, for the report.
    pub layer_kinds_basis: String,
    /// `quantization_config`.
    pub quantization: Option<QuantizationConfig>,
    /// Fields absent from the file and taken from the transformers config class defaults
    /// (Llava's `text_config` lists only what differs from `LlamaConfig`).
    pub defaults_used: Vec<String>,
}

/// transformers `LlamaConfig` defaults, for nested Llama text configs that omit them.
const LLAMA_DEFAULTS: &[(&str, u64)] = &[
    ("num_hidden_layers", 32),
    ("hidden_size", 4096),
    ("intermediate_size", 11008),
    ("num_attention_heads", 32),
    ("max_position_embeddings", 2048),
    ("vocab_size", 32000),
];

fn as_u64(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|v| *v >= 0.0 && v.fract() == 0.0)
            .map(|v| v as u64)
    })
}

struct Lookup<'a> {
    text: Option<&'a serde_json::Map<String, Value>>,
    top: &'a serde_json::Map<String, Value>,
}

impl<'a> Lookup<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.text
            .and_then(|text| text.get(key))
            .filter(|value| !value.is_null())
            .or_else(|| self.top.get(key).filter(|value| !value.is_null()))
    }

    fn has_key(&self, key: &str) -> bool {
        self.text.is_some_and(|text| text.contains_key(key)) || self.top.contains_key(key)
    }

    fn first_u64(&self, keys: &[&str]) -> Option<(u64, &'static str)> {
        keys.iter().find_map(|key| {
            self.get(key)
                .and_then(as_u64)
                .map(|value| (value, static_key(key)))
        })
    }

    fn u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(as_u64)
    }

    fn bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }

    fn str(&self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Value::as_str)
    }
}

fn static_key(key: &str) -> &'static str {
    const KEYS: &[&str] = &[
        "n_head_kv",
        "num_kv_heads",
        "num_key_value_heads",
        "multi_query_group_num",
        "num_hidden_layers",
        "n_layer",
        "num_layers",
        "n_layers",
        "hidden_size",
        "n_embd",
        "d_model",
        "num_attention_heads",
        "n_head",
        "n_heads",
        "max_position_embeddings",
        "max_sequence_length",
        "seq_length",
        "n_positions",
        "max_seq_len",
        "model_max_length",
        "intermediate_size",
        "ffn_dim",
        "n_inner",
        "head_dim",
        "hidden_size_per_head",
    ];
    KEYS.iter().find(|k| **k == key).copied().unwrap_or("?")
}

/// Parses `config.json`.
pub fn parse_config(bytes: &[u8]) -> Result<HfConfig, ConfigError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|error| ConfigError::BadJson {
        message: error.to_string(),
    })?;
    let Value::Object(top) = value else {
        return Err(ConfigError::NotObject);
    };
    let (text_config_key, text) = TEXT_CONFIG_KEYS
        .iter()
        .find_map(|key| match top.get(*key) {
            Some(Value::Object(map)) => Some((Some((*key).to_string()), Some(map))),
            _ => None,
        })
        .unwrap_or((None, None));
    let lookup = Lookup { text, top: &top };
    let mut config = HfConfig {
        text_config_key,
        model_type: lookup.str("model_type").map(str::to_string),
        architectures: top
            .get("architectures")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        num_layers: lookup
            .first_u64(&["num_hidden_layers", "n_layer", "num_layers", "n_layers"])
            .map(|(v, _)| v),
        hidden_size: lookup
            .first_u64(&["hidden_size", "n_embd", "d_model"])
            .map(|(v, _)| v),
        intermediate_size: lookup
            .first_u64(&["intermediate_size", "ffn_dim", "n_inner"])
            .map(|(v, _)| v),
        num_attention_heads: lookup
            .first_u64(&["num_attention_heads", "n_head", "n_heads"])
            .map(|(v, _)| v),
        head_dim: lookup
            .first_u64(&["head_dim", "hidden_size_per_head"])
            .map(|(v, _)| v),
        max_position_embeddings: lookup
            .first_u64(&[
                "max_position_embeddings",
                "max_sequence_length",
                "seq_length",
                "n_positions",
                "max_seq_len",
                "model_max_length",
            ])
            .map(|(v, _)| v),
        dtype: lookup
            .str("dtype")
            .or_else(|| lookup.str("torch_dtype"))
            .map(|text| text.trim_start_matches("torch.").to_string()),
        tie_word_embeddings: top
            .get("tie_word_embeddings")
            .and_then(Value::as_bool)
            .or_else(|| {
                text.and_then(|t| t.get("tie_word_embeddings"))
                    .and_then(Value::as_bool)
            }),
        vocab_size: lookup.u64("vocab_size"),
        sliding_window: lookup.u64("sliding_window"),
        ..HfConfig::default()
    };
    if config.text_config_key.is_some() && config.model_type.as_deref() == Some("llama") {
        for (key, value) in LLAMA_DEFAULTS {
            let slot = match *key {
                "num_hidden_layers" => &mut config.num_layers,
                "hidden_size" => &mut config.hidden_size,
                "intermediate_size" => &mut config.intermediate_size,
                "num_attention_heads" => &mut config.num_attention_heads,
                "max_position_embeddings" => &mut config.max_position_embeddings,
                _ => &mut config.vocab_size,
            };
            if slot.is_none() {
                *slot = Some(*value);
                config.defaults_used.push(format!("`{key}` {value}"));
            }
        }
    }
    if let Some((heads, key)) = lookup.first_u64(&[
        "n_head_kv",
        "num_kv_heads",
        "num_key_value_heads",
        "multi_query_group_num",
    ]) {
        config.num_kv_heads = Some(heads);
        config.num_kv_heads_key = Some(key.to_string());
    } else if lookup.bool("multi_query") == Some(true)
        && lookup.bool("new_decoder_architecture") != Some(true)
    {
        config.num_kv_heads = Some(1);
        config.num_kv_heads_key = Some("multi_query".to_string());
    } else if let Some(heads) = lookup
        .get("attn_config")
        .and_then(|attn| attn.get("kv_n_heads"))
        .and_then(as_u64)
    {
        config.num_kv_heads = Some(heads);
        config.num_kv_heads_key = Some("attn_config.kv_n_heads".to_string());
    } else if let Some(heads) = config.num_attention_heads {
        config.num_kv_heads = Some(heads);
        config.num_kv_heads_key = Some("num_attention_heads (no KV-head key: MHA)".to_string());
    }
    if let (Some(model_type), Some(rank)) = (&config.model_type, lookup.u64("kv_lora_rank")) {
        if MLA_MODEL_TYPES.contains(&model_type.as_str()) {
            config.mla = Some(Mla {
                kv_lora_rank: rank,
                qk_rope_head_dim: lookup.u64("qk_rope_head_dim").unwrap_or(0),
            });
        }
    }
    config.quantization = top
        .get("quantization_config")
        .or_else(|| top.get("compression_config"))
        .or_else(|| text.and_then(|t| t.get("quantization_config")))
        .and_then(parse_quantization);
    let (kinds, basis) = layer_kinds(&lookup, &config);
    config.layer_kinds = kinds;
    config.layer_kinds_basis = basis;
    Ok(config)
}

fn parse_quantization(value: &Value) -> Option<QuantizationConfig> {
    let map = value.as_object()?;
    let method = map
        .get("quant_method")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            (map.get("load_in_4bit").and_then(Value::as_bool) == Some(true)
                || map.get("load_in_8bit").and_then(Value::as_bool) == Some(true))
            .then(|| "bitsandbytes".to_string())
        })?;
    let mut quantization = QuantizationConfig {
        method,
        bits: map
            .get("bits")
            .or_else(|| map.get("w_bit"))
            .or_else(|| map.get("wbits"))
            .and_then(as_u64),
        group_size: map
            .get("group_size")
            .or_else(|| map.get("q_group_size"))
            .and_then(Value::as_i64),
        format: map.get("fmt").and_then(Value::as_str).map(str::to_string),
    };
    if quantization.bits.is_none() {
        if map.get("load_in_4bit").and_then(Value::as_bool) == Some(true) {
            quantization.bits = Some(4);
        } else if map.get("load_in_8bit").and_then(Value::as_bool) == Some(true) {
            quantization.bits = Some(8);
        }
    }
    if let Some(weights) = map
        .get("config_groups")
        .and_then(Value::as_object)
        .and_then(|groups| groups.values().next())
        .and_then(|group| group.get("weights"))
    {
        quantization.bits = quantization
            .bits
            .or_else(|| weights.get("num_bits").and_then(as_u64));
        quantization.format = quantization.format.clone().or_else(|| {
            weights
                .get("type")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        quantization.group_size = quantization
            .group_size
            .or_else(|| weights.get("group_size").and_then(Value::as_i64));
    }
    Some(quantization)
}

fn layer_kinds(lookup: &Lookup<'_>, config: &HfConfig) -> (Vec<LayerKind>, String) {
    let Some(layers) = config.num_layers else {
        return (Vec::new(), "layer count unknown".to_string());
    };
    // Bound what a config can make us allocate: a real model has at most a few hundred layers.
    let layers = layers.min(100_000);
    if let Some(types) = lookup.get("layer_types").and_then(Value::as_array) {
        let kinds: Vec<LayerKind> = types
            .iter()
            .take(layers as usize)
            .map(|kind| match kind.as_str().unwrap_or("") {
                "full_attention" | "attention" | "global" => LayerKind::Full,
                "sliding_attention" | "chunked_attention" | "local_attention" | "local"
                | "sliding_window" => LayerKind::Sliding,
                _ => LayerKind::NoKv,
            })
            .collect();
        return (kinds, "`layer_types`".to_string());
    }
    let all = |kind| vec![kind; layers as usize];
    if config.sliding_window.is_none() {
        return (
            all(LayerKind::Full),
            "no `sliding_window`: all layers full attention".to_string(),
        );
    }
    let model_type = config.model_type.as_deref().unwrap_or("");
    if lookup.has_key("use_sliding_window") {
        if lookup.bool("use_sliding_window") != Some(true) {
            return (
                all(LayerKind::Full),
                "`use_sliding_window` is false: all layers full attention".to_string(),
            );
        }
        if let Some(max_window_layers) = lookup.u64("max_window_layers") {
            // transformers Qwen2Config: layers i >= max_window_layers use the window.
            let kinds = (0..layers)
                .map(|i| {
                    if i >= max_window_layers {
                        LayerKind::Sliding
                    } else {
                        LayerKind::Full
                    }
                })
                .collect();
            return (
                kinds,
                format!("`use_sliding_window` with `max_window_layers` = {max_window_layers}"),
            );
        }
    }
    match model_type {
        "gemma2" => (
            // transformers Gemma2Config: sliding when (i + 1) % 2 != 0.
            (0..layers)
                .map(|i| {
                    if (i + 1) % 2 != 0 {
                        LayerKind::Sliding
                    } else {
                        LayerKind::Full
                    }
                })
                .collect(),
            "Gemma 2 pattern: every other layer slides".to_string(),
        ),
        "gemma3" | "gemma3_text" | "cohere2" => {
            let default = if model_type == "cohere2" { 4 } else { 6 };
            let pattern = lookup
                .u64("sliding_window_pattern")
                .filter(|p| *p > 0)
                .unwrap_or(default);
            (
                (0..layers)
                    .map(|i| {
                        if (i + 1) % pattern != 0 {
                            LayerKind::Sliding
                        } else {
                            LayerKind::Full
                        }
                    })
                    .collect(),
                format!("`sliding_window_pattern` {pattern}: one full layer in {pattern}"),
            )
        }
        _ => (
            all(LayerKind::Sliding),
            "`sliding_window` set: all layers slide".to_string(),
        ),
    }
}

/// `model.safetensors.index.json`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShardIndex {
    /// `metadata.total_size` (a hint: third-party tools write file sizes or 0).
    pub total_size: Option<u64>,
    /// `weight_map`: tensor → shard file name.
    pub weight_map: BTreeMap<String, String>,
}

impl ShardIndex {
    /// Shard file names, sorted, each once.
    pub fn files(&self) -> Vec<String> {
        let mut files: Vec<String> = self.weight_map.values().cloned().collect();
        files.sort();
        files.dedup();
        files
    }
}

/// Parses `model.safetensors.index.json`.
pub fn parse_index(bytes: &[u8]) -> Result<ShardIndex, ConfigError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|error| ConfigError::BadJson {
        message: error.to_string(),
    })?;
    let Value::Object(top) = value else {
        return Err(ConfigError::NotObject);
    };
    let total_size = top
        .get("metadata")
        .and_then(|metadata| metadata.get("total_size"))
        .and_then(as_u64);
    let weight_map = top
        .get("weight_map")
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(tensor, file)| Some((tensor.clone(), file.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    Ok(ShardIndex {
        total_size,
        weight_map,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gqa_and_text_config() {
        let config = parse_config(
            br#"{"architectures":["LlavaForConditionalGeneration"],"model_type":"llava",
                "text_config":{"model_type":"llama","num_hidden_layers":32,"num_attention_heads":32,
                "num_key_value_heads":8,"hidden_size":4096},"torch_dtype":"float16"}"#,
        )
        .unwrap();
        assert_eq!(config.text_config_key.as_deref(), Some("text_config"));
        assert_eq!(config.model_type.as_deref(), Some("llama"));
        assert_eq!(config.num_kv_heads, Some(8));
        assert_eq!(config.dtype.as_deref(), Some("float16"));
        assert_eq!(config.layer_kinds, vec![LayerKind::Full; 32]);
    }

    #[test]
    fn llava_text_config_takes_llama_defaults() {
        // llava-hf/llava-1.5-7b-hf lists only what differs from LlamaConfig.
        let config = parse_config(
            br#"{"architectures":["LlavaForConditionalGeneration"],"model_type":"llava",
                "text_config":{"model_type":"llama","max_position_embeddings":4096,"vocab_size":32064,"torch_dtype":"float16"}}"#,
        )
        .unwrap();
        assert_eq!(config.num_layers, Some(32));
        assert_eq!(config.num_kv_heads, Some(32));
        assert_eq!(config.max_position_embeddings, Some(4096));
        assert_eq!(config.defaults_used.len(), 4);
    }

    #[test]
    fn falcon_multi_query_has_one_kv_head() {
        let config =
            parse_config(br#"{"n_head":71,"n_layer":32,"hidden_size":4544,"multi_query":true}"#)
                .unwrap();
        assert_eq!(config.num_kv_heads, Some(1));
    }

    #[test]
    fn sliding_window_rules() {
        let qwen = parse_config(br#"{"model_type":"qwen2","num_hidden_layers":4,"sliding_window":131072,"use_sliding_window":false,"max_window_layers":28}"#).unwrap();
        assert_eq!(qwen.layer_kinds, vec![LayerKind::Full; 4]);
        let qwen_on = parse_config(br#"{"model_type":"qwen2","num_hidden_layers":4,"sliding_window":4096,"use_sliding_window":true,"max_window_layers":2}"#).unwrap();
        assert_eq!(
            qwen_on.layer_kinds,
            vec![
                LayerKind::Full,
                LayerKind::Full,
                LayerKind::Sliding,
                LayerKind::Sliding
            ]
        );
        let gemma2 =
            parse_config(br#"{"model_type":"gemma2","num_hidden_layers":4,"sliding_window":4096}"#)
                .unwrap();
        assert_eq!(
            gemma2.layer_kinds,
            vec![
                LayerKind::Sliding,
                LayerKind::Full,
                LayerKind::Sliding,
                LayerKind::Full
            ]
        );
        let mistral = parse_config(
            br#"{"model_type":"mistral","num_hidden_layers":2,"sliding_window":4096}"#,
        )
        .unwrap();
        assert_eq!(mistral.layer_kinds, vec![LayerKind::Sliding; 2]);
        let typed = parse_config(br#"{"num_hidden_layers":3,"sliding_window":512,"layer_types":["sliding_attention","full_attention","linear_attention"]}"#).unwrap();
        assert_eq!(
            typed.layer_kinds,
            vec![LayerKind::Sliding, LayerKind::Full, LayerKind::NoKv]
        );
    }

    #[test]
    fn quantization_configs() {
        let gptq = parse_config(
            br#"{"quantization_config":{"quant_method":"gptq","bits":4,"group_size":128}}"#,
        )
        .unwrap();
        let q = gptq.quantization.unwrap();
        assert_eq!(
            (q.method.as_str(), q.bits, q.group_size),
            ("gptq", Some(4), Some(128))
        );
        let bnb = parse_config(br#"{"quantization_config":{"load_in_4bit":true}}"#).unwrap();
        assert_eq!(bnb.quantization.unwrap().bits, Some(4));
        let ct = parse_config(br#"{"quantization_config":{"quant_method":"compressed-tensors","config_groups":{"group_0":{"weights":{"num_bits":8,"type":"float"}}}}}"#).unwrap();
        let q = ct.quantization.unwrap();
        assert_eq!((q.bits, q.format.as_deref()), (Some(8), Some("float")));
    }

    #[test]
    fn index_lists_shards_once() {
        let index = parse_index(br#"{"metadata":{"total_size":10},"weight_map":{"a":"m-2.safetensors","b":"m-1.safetensors","c":"m-1.safetensors"}}"#).unwrap();
        assert_eq!(index.total_size, Some(10));
        assert_eq!(index.files(), vec!["m-1.safetensors", "m-2.safetensors"]);
    }
}
