//! Checks that refuse a checkpoint or a parallel layout before any budget: absurd config
//! values, a tensor-parallel size that does not divide the heads, more pipeline stages than
//! layers.

use super::*;

/// Most layers accepted from a config (real models have at most a few hundred).
pub const MAX_LAYERS: u64 = 100_000;
/// Largest vocabulary accepted from a config (real ones are below 2^20).
pub const MAX_VOCAB: u64 = 1 << 32;
/// Largest hidden size, head size or head count accepted from a config.
pub const MAX_DIMENSION: u64 = 1 << 24;

/// A config with numbers no model has. Sizing it gave self-contradicting text (issue 14:
/// 10^18 layers, 0 KV heads, `head_dim` 0), so it is refused instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the model's {what} is {value}: {why}")]
pub struct AbsurdConfig {
    /// Which number (`num_hidden_layers`, KV heads …).
    pub what: String,
    /// The value read.
    pub value: u64,
    /// Why it is refused.
    pub why: String,
}

/// A `--tensor-parallel-size` that vLLM refuses: it must divide the attention heads
/// (`ModelConfig.verify_with_parallel_config` in `vllm/config/model.py`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`--tensor-parallel-size {tensor_parallel_size}` does not divide the {heads} attention heads \
     of this model\n  ({source_of_heads}); vLLM refuses it with:\n  Total number of attention \
     heads ({heads}) must be divisible by tensor parallel size ({tensor_parallel_size})."
)]
pub struct ParallelMismatch {
    /// Attention heads of the model.
    pub heads: u64,
    /// `--tensor-parallel-size`.
    pub tensor_parallel_size: u64,
    /// Where the head count was read, e.g. `` `num_attention_heads` in config.json ``.
    pub source_of_heads: String,
}

/// Where the attention head count comes from, in words.
pub(super) fn heads_source(input: &FitInput) -> String {
    if let Some(file) = input.gguf.first() {
        let arch = file.header.architecture().unwrap_or("?");
        return format!("`{arch}.attention.head_count` in the GGUF header");
    }
    match input
        .config
        .as_ref()
        .and_then(|c| c.text_config_key.as_deref())
    {
        Some(key) => format!("`{key}.num_attention_heads` in config.json"),
        None => "`num_attention_heads` in config.json".to_string(),
    }
}

/// Checks `--tensor-parallel-size` against the attention heads as vLLM does. A model whose
/// head count is unknown passes: nothing to check against.
pub fn check_parallel(input: &FitInput, tensor_parallel_size: u64) -> Result<(), ParallelMismatch> {
    let mut ignored = Vec::new();
    let (model, _) = shape(input, &mut ignored);
    match model.attention_heads {
        Some(heads) if heads > 0 && heads % tensor_parallel_size.max(1) != 0 => {
            Err(ParallelMismatch {
                heads,
                tensor_parallel_size,
                source_of_heads: heads_source(input),
            })
        }
        _ => Ok(()),
    }
}

/// A `--pipeline-parallel-size` larger than the layer count: a stage would get no layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`--pipeline-parallel-size {stages}` is more than the model's {layers} layers \
     ({source_of_layers}): vLLM gives each stage a block of layers, and a stage would get none"
)]
pub struct PipelineMismatch {
    /// Decoder layers of the model.
    pub layers: u64,
    /// `--pipeline-parallel-size`.
    pub stages: u64,
    /// Where the layer count was read.
    pub source_of_layers: String,
}

/// Checks `--pipeline-parallel-size` against the layer count. Returns a note when the layers
/// do not divide evenly: current vLLM splits them unevenly (`get_pp_indices`), older versions
/// refused with "Total number of hidden layers (L) must be divisible by pipeline parallel
/// size (P)." in `verify_with_parallel_config`.
pub fn check_pipeline(input: &FitInput, stages: u64) -> Result<Option<String>, PipelineMismatch> {
    let mut ignored = Vec::new();
    let (model, _) = shape(input, &mut ignored);
    let Some(layers) = model.layers.filter(|layers| *layers > 0) else {
        return Ok(None);
    };
    let source_of_layers = match input
        .config
        .as_ref()
        .and_then(|c| c.text_config_key.as_deref())
    {
        Some(key) => format!("`{key}.num_hidden_layers` in config.json"),
        None => "`num_hidden_layers` in config.json".to_string(),
    };
    if stages > layers {
        return Err(PipelineMismatch {
            layers,
            stages,
            source_of_layers,
        });
    }
    if stages > 1 && layers % stages != 0 {
        let counts = pipeline_layer_counts(layers, stages);
        return Ok(Some(format!(
            "{layers} layers do not divide into {stages} pipeline stages: vLLM splits them as {} \
             (`get_pp_indices`); older vLLM versions refused this (\"must be divisible by \
             pipeline parallel size\")",
            counts
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" + ")
        )));
    }
    Ok(None)
}

/// What `--fit on` leaves free on a GPU, for notes about memory already in use.
pub fn llama_cpp_fit_margin() -> u64 {
    llama_cpp::FIT_MARGIN_BYTES
}

/// Checks the model shape from the config or GGUF metadata before any sizing.
pub fn check_config(input: &FitInput) -> Result<(), AbsurdConfig> {
    let mut ignored = Vec::new();
    let (model, kv_shape) = shape(input, &mut ignored);
    let absurd = |what: &str, value: u64, why: String| AbsurdConfig {
        what: what.to_string(),
        value,
        why,
    };
    if let Some(layers) = model.layers {
        if layers == 0 || layers > MAX_LAYERS {
            return Err(absurd(
                "layer count",
                layers,
                format!("oomdoc accepts 1 to {MAX_LAYERS}"),
            ));
        }
    }
    if let Some(vocab) = model.vocab_size.filter(|vocab| *vocab > MAX_VOCAB) {
        return Err(absurd(
            "vocabulary size",
            vocab,
            format!("oomdoc accepts at most {MAX_VOCAB}"),
        ));
    }
    for (what, value) in [
        ("hidden size", model.hidden_size),
        ("intermediate size", model.intermediate_size),
        ("attention head count", model.attention_heads),
    ] {
        if let Some(value) = value.filter(|value| *value > MAX_DIMENSION) {
            return Err(absurd(
                what,
                value,
                format!("oomdoc accepts at most {MAX_DIMENSION}"),
            ));
        }
    }
    if let Some(shape) = &kv_shape {
        for (kind, heads, size) in &shape.layers {
            if *kind == LayerKind::NoKv {
                continue;
            }
            if *heads == 0 || *heads > MAX_DIMENSION {
                return Err(absurd(
                    "KV head count",
                    *heads,
                    format!("a layer with a KV cache needs 1 to {MAX_DIMENSION} KV heads"),
                ));
            }
            if *size == 0 || *size > MAX_DIMENSION {
                return Err(absurd(
                    "KV size per head (key + value)",
                    *size,
                    format!("a layer with a KV cache needs 1 to {MAX_DIMENSION} elements per head"),
                ));
            }
        }
    }
    Ok(())
}
