//! The model's shape (layers, heads, head size, attention kinds) from `config.json` or the GGUF
//! metadata, and the KV cache bytes per token it implies.

use super::*;

pub(super) fn shape(
    input: &FitInput,
    limitations: &mut Vec<String>,
) -> (ModelShape, Option<KvShape>) {
    if let Some(file) = input.gguf.first() {
        return gguf_shape(&file.header, limitations);
    }
    let Some(config) = &input.config else {
        limitations.push("no config.json: the KV cache per token cannot be computed from safetensors headers alone".to_string());
        return (ModelShape::default(), None);
    };
    if !config.defaults_used.is_empty() {
        limitations.push(format!(
            "config.json's `{}` omits {}: transformers' `LlamaConfig` defaults used",
            config.text_config_key.as_deref().unwrap_or("text_config"),
            config.defaults_used.join(", ")
        ));
    }
    let source_detail = match &config.text_config_key {
        Some(key) => format!("config.json (`{key}`)"),
        None => "config.json".to_string(),
    };
    let head_dim = config
        .head_dim
        .or_else(|| Some(config.hidden_size? / config.num_attention_heads.filter(|h| *h > 0)?));
    let count = |kind| config.layer_kinds.iter().filter(|k| **k == kind).count() as u64;
    let mut model = ModelShape {
        model_type: config.model_type.clone(),
        architectures: config.architectures.clone(),
        layers: config.num_layers,
        full_attention_layers: count(LayerKind::Full),
        sliding_window_layers: count(LayerKind::Sliding),
        no_kv_layers: count(LayerKind::NoKv),
        hidden_size: config.hidden_size,
        attention_heads: config.num_attention_heads,
        kv_heads: config.num_kv_heads,
        head_dim,
        max_position_embeddings: config.max_position_embeddings,
        dtype: config.dtype.clone(),
        intermediate_size: config.intermediate_size,
        vocab_size: config.vocab_size,
        source_detail,
    };
    if config.layer_kinds.is_empty() {
        limitations.push(
            "config.json has no layer count (`num_hidden_layers`): KV cache not computed"
                .to_string(),
        );
        return (model, None);
    }
    if let Some(mla) = config.mla {
        let latent = mla.kv_lora_rank.saturating_add(mla.qk_rope_head_dim);
        model.head_dim = Some(latent);
        model.kv_heads = Some(1);
        let layers = config
            .layer_kinds
            .iter()
            .map(|kind| (*kind, 1, latent))
            .collect();
        let attention_layers = model
            .full_attention_layers
            .saturating_add(model.sliding_window_layers);
        return (
            model,
            Some(KvShape {
                layers,
                mla: true,
                window: config.sliding_window,
                formula_base: format!(
                    "{attention_layers} layers × (kv_lora_rank {} + qk_rope_head_dim {})",
                    mla.kv_lora_rank, mla.qk_rope_head_dim
                ),
                attention: "mla".to_string(),
                key_value: None,
            }),
        );
    }
    let (Some(kv_heads), Some(head_dim)) = (config.num_kv_heads, head_dim) else {
        limitations
            .push("config.json lacks the KV heads or head size: KV cache not computed".to_string());
        return (model, None);
    };
    let attention = match (kv_heads, config.num_attention_heads) {
        (1, Some(h)) if h > 1 => "mqa",
        (k, Some(h)) if k < h => "gqa",
        _ => "mha",
    };
    let attention_layers = model
        .full_attention_layers
        .saturating_add(model.sliding_window_layers);
    let layers = config
        .layer_kinds
        .iter()
        .map(|kind| (*kind, kv_heads, head_dim.saturating_mul(2)))
        .collect();
    (
        model,
        Some(KvShape {
            layers,
            mla: false,
            window: config.sliding_window,
            formula_base: format!(
                "2 (K,V) × {attention_layers} layers × {kv_heads} KV heads × {head_dim} head_dim"
            ),
            attention: attention.to_string(),
            key_value: None,
        }),
    )
}

pub(super) fn gguf_shape(
    header: &GgufHeader,
    limitations: &mut Vec<String>,
) -> (ModelShape, Option<KvShape>) {
    let arch = header.architecture().unwrap_or("").to_string();
    let key = |suffix: &str| format!("{arch}.{suffix}");
    let number = |suffix: &str| header.get(&key(suffix)).and_then(MetaValue::as_u64);
    let layers = number("block_count");
    let heads = number("attention.head_count");
    let embedding = number("embedding_length");
    let head_kv = header.get(&key("attention.head_count_kv"));
    let default_head = embedding.zip(heads.filter(|h| *h > 0)).map(|(e, h)| e / h);
    let key_length = number("attention.key_length").or(default_head);
    let value_length = number("attention.value_length").or(default_head);
    let window = number("attention.sliding_window");
    let kv_lora = number("attention.kv_lora_rank");
    let rope = number("rope.dimension_count");
    let mut model = ModelShape {
        model_type: Some(arch.clone()),
        layers,
        hidden_size: embedding,
        attention_heads: heads,
        head_dim: key_length,
        max_position_embeddings: number("context_length"),
        dtype: None,
        intermediate_size: number("feed_forward_length"),
        vocab_size: number("vocab_size").or(match header.get("tokenizer.ggml.tokens") {
            Some(MetaValue::Array { count, .. }) => Some(*count),
            _ => None,
        }),
        source_detail: "GGUF metadata".to_string(),
        ..ModelShape::default()
    };
    let Some(layer_count) = layers.map(|l| l.min(100_000)) else {
        limitations.push(format!(
            "GGUF metadata has no `{arch}.block_count`: KV cache not computed"
        ));
        return (model, None);
    };
    let per_layer_heads: Vec<u64> = match head_kv {
        Some(MetaValue::Array {
            integers: Some(list),
            ..
        }) => list
            .iter()
            .map(|v| u64::try_from(*v).unwrap_or(0))
            .chain(std::iter::repeat(0))
            .take(layer_count as usize)
            .collect(),
        Some(value) => vec![value.as_u64().unwrap_or(0); layer_count as usize],
        None => vec![heads.unwrap_or(0); layer_count as usize],
    };
    model.kv_heads = per_layer_heads.iter().copied().max();
    let kind_of = |i: u64| -> LayerKind {
        if window.is_none() {
            return LayerKind::Full;
        }
        match arch.as_str() {
            "gemma2" => {
                if (i + 1) % 2 != 0 {
                    LayerKind::Sliding
                } else {
                    LayerKind::Full
                }
            }
            "gemma3" => {
                if (i + 1) % 6 != 0 {
                    LayerKind::Sliding
                } else {
                    LayerKind::Full
                }
            }
            _ => LayerKind::Sliding,
        }
    };
    if window.is_some() && !matches!(arch.as_str(), "gemma2" | "gemma3") {
        limitations.push(format!(
            "GGUF `{arch}.attention.sliding_window` is set; oomdoc assumes every layer slides (the per-layer pattern is not in the metadata)"
        ));
    }
    let attention_layers = per_layer_heads.iter().filter(|h| **h > 0).count() as u64;
    if let (Some(rank), "deepseek2") = (kv_lora, arch.as_str()) {
        let latent = rank.saturating_add(rope.unwrap_or(0));
        model.kv_heads = Some(1);
        model.head_dim = Some(latent);
        model.full_attention_layers = layer_count;
        let layers = (0..layer_count)
            .map(|_| (LayerKind::Full, 1, latent))
            .collect();
        return (
            model,
            Some(KvShape {
                layers,
                mla: true,
                window: None,
                formula_base: format!(
                    "{layer_count} layers × (kv_lora_rank {rank} + rope {})",
                    rope.unwrap_or(0)
                ),
                attention: "mla".to_string(),
                key_value: Some((latent, 0)),
            }),
        );
    }
    let (Some(k), Some(v)) = (key_length, value_length) else {
        limitations.push("GGUF metadata lacks the head sizes: KV cache not computed".to_string());
        return (model, None);
    };
    let layers: Vec<(LayerKind, u64, u64)> = per_layer_heads
        .iter()
        .enumerate()
        .map(|(i, heads)| {
            if *heads == 0 {
                (LayerKind::NoKv, 0, 0)
            } else {
                (kind_of(i as u64), *heads, k.saturating_add(v))
            }
        })
        .collect();
    model.full_attention_layers = layers.iter().filter(|l| l.0 == LayerKind::Full).count() as u64;
    model.sliding_window_layers =
        layers.iter().filter(|l| l.0 == LayerKind::Sliding).count() as u64;
    model.no_kv_layers = layers.iter().filter(|l| l.0 == LayerKind::NoKv).count() as u64;
    let attention = match (model.kv_heads, heads) {
        (Some(1), Some(h)) if h > 1 => "mqa",
        (Some(kv), Some(h)) if kv < h => "gqa",
        _ => "mha",
    };
    let heads_text = match head_kv {
        Some(MetaValue::Array { .. }) => "per-layer KV heads".to_string(),
        _ => format!("{} KV heads", model.kv_heads.unwrap_or(0)),
    };
    (
        model,
        Some(KvShape {
            layers,
            mla: false,
            window,
            formula_base: format!(
                "{attention_layers} layers × {heads_text} × (key {k} + value {v})"
            ),
            attention: attention.to_string(),
            key_value: Some((k, v)),
        }),
    )
}

pub(super) fn rate(shape: &KvShape, tensor_parallel: u64, num: u64, den: u64) -> KvRate {
    let mut full = 0u64;
    let mut sliding = 0u64;
    for (kind, heads, size) in &shape.layers {
        // vLLM: per-GPU KV heads = max(1, total // tp); MLA's single latent is replicated.
        let heads_per_gpu = if shape.mla {
            *heads
        } else {
            (heads / tensor_parallel.max(1)).max(1).min(*heads)
        };
        let elements = heads_per_gpu.saturating_mul(*size);
        match kind {
            LayerKind::Full => full = full.saturating_add(elements),
            LayerKind::Sliding => sliding = sliding.saturating_add(elements),
            LayerKind::NoKv => {}
        }
    }
    let to_bytes = |elements: u64| {
        u64::try_from((elements as u128 * num as u128).div_ceil(den.max(1) as u128))
            .unwrap_or(u64::MAX)
    };
    KvRate {
        full_per_token: to_bytes(full),
        sliding_per_token: to_bytes(sliding),
        window: shape.window.filter(|_| sliding > 0),
    }
}
