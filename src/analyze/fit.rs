//! Checkpoint headers + config + a GPU budget → weights, KV cache per token, verdict and
//! what would fit instead (R11, R12, R19). Pure: no files, no environment.
//!
//! KV sizing follows vLLM (`vllm/v1/kv_cache_interface.py`, formats.md §5.4): per layer and
//! token `2 · kv_heads · head_size · dtype_bytes`, MLA `(kv_lora_rank + qk_rope_head_dim) ·
//! dtype_bytes`; sliding-window layers hold at most the window. The budget follows vLLM ≥ 0.9:
//! `total · gpu_memory_utilization − (weights + activation peak + non-torch memory)`, with
//! each allowance stated as an estimate with its source.

use std::collections::BTreeMap;

use crate::model::bytes::MIB;
use crate::model::cards::Card;
use crate::model::checkpoint::{
    Allowance, Alternative, Budget, CheckpointFile, CheckpointKind, DeclaredFormat, FitReport,
    FitVerdict, KvCache, Mismatch, ModelShape, Weights,
};
use crate::model::{Bytes, Source};
use crate::parse::checkpoint::gguf::{self, GgufHeader, MetaValue};
use crate::parse::checkpoint::hf_config::{HfConfig, LayerKind, ShardIndex};

mod llama_cpp;

pub use llama_cpp::{CacheType, FlashAttn, LlamaCppOptions};

/// Non-PyTorch memory of one process on a fresh CUDA context: "this process has 518.00 MiB
/// memory in use" with 0 bytes allocated by PyTorch, H200, torch 2.11
/// (tests/fixtures/h200-torch2.11/oom_cases.json, case `capacity`; the data is embedded here,
/// output names the measurement, not the file).
pub const CUDA_CONTEXT_BYTES: u64 = 518 * MIB;
/// Where [`CUDA_CONTEXT_BYTES`] comes from, as output says it.
pub const CUDA_CONTEXT_BASIS: &str = "CUDA context 518 MiB: a process's memory in use with \
     0 bytes allocated, measured on an H200 with torch 2.11 (\"this process has 518.00 MiB memory \
     in use\")";
/// NCCL buffers per rank under tensor parallelism: `NCCL_BUFFSIZE` 4 MiB × up to 32 channels
/// × send and receive. An assumption, not a measurement.
pub const NCCL_BYTES: u64 = 256 * MIB;
/// CUDA graph pool: vLLM logs `Graph capturing finished in … took 0.3–1.5 GiB` for 7B–70B
/// models; an assumption, not a measurement.
pub const CUDA_GRAPH_BYTES: u64 = 512 * MIB;
/// vLLM V1's default `max_num_batched_tokens` for `vllm serve` (chunked prefill), used for
/// the activation estimate.
pub const DEFAULT_BATCHED_TOKENS: u64 = 8192;

pub use crate::parse::checkpoint::{GgufInput, SafetensorsInput};

/// Everything read from the checkpoint.
#[derive(Debug, Clone)]
pub struct FitInput {
    /// PATH as given.
    pub path: String,
    /// What it is.
    pub kind: CheckpointKind,
    /// safetensors headers.
    pub safetensors: Vec<SafetensorsInput>,
    /// GGUF headers (a split set in order).
    pub gguf: Vec<GgufInput>,
    /// config.json.
    pub config: Option<HfConfig>,
    /// model.safetensors.index.json.
    pub index: Option<ShardIndex>,
    /// Directory, file and model-id names, checked for format words.
    pub names: Vec<String>,
    /// Limitations found while reading.
    pub limitations: Vec<String>,
}

/// `--kv-cache-dtype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvCacheDtype {
    /// The model dtype (vLLM), `f16` for llama.cpp.
    Auto,
    /// 8-bit float, E4M3 on CUDA (vLLM `fp8`).
    Fp8,
    /// 8-bit float E4M3.
    Fp8E4m3,
    /// 8-bit float E5M2.
    Fp8E5m2,
    /// bfloat16.
    Bf16,
    /// float16.
    Fp16,
    /// float32.
    Fp32,
    /// int8.
    Int8,
    /// llama.cpp `q8_0` (34 bytes per 32 elements).
    Q8_0,
    /// llama.cpp `q4_0` (18 bytes per 32 elements).
    Q4_0,
    /// vLLM's DeepSeek V3.2 sparse FlashMLA layout: 656 bytes per token and layer (512 FP8
    /// latent + 4 F32 scales + 64 BF16 RoPE values); MLA models only.
    Fp8DsMla,
}

/// Bytes per token and layer of `fp8_ds_mla` (`vllm/v1/kv_cache_interface.py`).
const FP8_DS_MLA_BYTES: u64 = 656;

impl KvCacheDtype {
    /// Name and bytes per element as a fraction.
    fn resolve(self, model_dtype_bytes: u64, model_dtype_name: &str) -> (String, u64, u64) {
        match self {
            KvCacheDtype::Auto => (model_dtype_name.to_string(), model_dtype_bytes, 1),
            KvCacheDtype::Fp8 | KvCacheDtype::Fp8E4m3 => ("fp8_e4m3".to_string(), 1, 1),
            KvCacheDtype::Fp8E5m2 => ("fp8_e5m2".to_string(), 1, 1),
            KvCacheDtype::Bf16 => ("bf16".to_string(), 2, 1),
            KvCacheDtype::Fp16 => ("fp16".to_string(), 2, 1),
            KvCacheDtype::Fp32 => ("fp32".to_string(), 4, 1),
            KvCacheDtype::Int8 => ("int8".to_string(), 1, 1),
            KvCacheDtype::Q8_0 => ("q8_0".to_string(), 34, 32),
            KvCacheDtype::Q4_0 => ("q4_0".to_string(), 18, 32),
            // Per element like fp8; `analyze` replaces the MLA layer size by 656 bytes.
            KvCacheDtype::Fp8DsMla => ("fp8_ds_mla".to_string(), 1, 1),
        }
    }
}

/// The GPU memory to fit into, per GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuBudget {
    /// Card or device name.
    pub name: Option<String>,
    /// Total memory of one GPU.
    pub total: Bytes,
    /// Where it came from.
    pub source: Source,
    /// In words.
    pub basis: String,
}

/// Options of `oomdoc fit`.
#[derive(Debug, Clone)]
pub struct FitOptions {
    /// `--kv-cache-dtype`.
    pub kv_cache_dtype: KvCacheDtype,
    /// The budget, if any.
    pub gpu: Option<GpuBudget>,
    /// `--gpu-memory-utilization`.
    pub gpu_memory_utilization: f64,
    /// `--max-model-len`.
    pub max_model_len: Option<u64>,
    /// `--tensor-parallel-size`.
    pub tensor_parallel_size: u64,
    /// `--max-num-seqs`.
    pub max_num_seqs: u64,
    /// Tokens per forward pass for the activation estimate.
    pub max_num_batched_tokens: u64,
    /// Card table for alternatives.
    pub cards: &'static [Card],
}

/// Per-token KV on one GPU, split by layer kind, with the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct KvRate {
    full_per_token: u64,
    sliding_per_token: u64,
    window: Option<u64>,
}

impl KvRate {
    fn per_sequence(&self, length: u64) -> u64 {
        let sliding_tokens = self.window.map_or(length, |window| window.min(length));
        self.full_per_token
            .saturating_mul(length)
            .saturating_add(self.sliding_per_token.saturating_mul(sliding_tokens))
    }

    fn longest_fitting(&self, budget: u64, cap: u64) -> u64 {
        let both = self.full_per_token.saturating_add(self.sliding_per_token);
        if both == 0 {
            return cap;
        }
        let unwindowed = budget / both;
        let Some(window) = self.window else {
            return unwindowed.min(cap);
        };
        if unwindowed <= window {
            return unwindowed.min(cap);
        }
        if self.full_per_token == 0 {
            return cap;
        }
        let rest = budget.saturating_sub(self.sliding_per_token.saturating_mul(window));
        (rest / self.full_per_token).max(window).min(cap)
    }
}

/// What the KV computation needs, independent of TP.
#[derive(Debug, Clone, Default)]
struct KvShape {
    /// Per layer: (kind, kv heads, key size + value size) — MLA: heads 1, size latent.
    layers: Vec<(LayerKind, u64, u64)>,
    mla: bool,
    window: Option<u64>,
    formula_base: String,
    attention: String,
    /// Key and value elements per KV head, when they are known apart (GGUF).
    key_value: Option<(u64, u64)>,
}

#[derive(Clone)]
struct TensorFacts {
    name: String,
    dtype: String,
    bytes: u64,
    numel: u64,
    dims: usize,
}

/// Role of a tensor in a quantized checkpoint, from its name.
fn quant_role(name: &str) -> Option<&'static str> {
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

fn is_float(dtype: &str) -> bool {
    matches!(dtype, "F16" | "BF16" | "F32" | "F64")
}

fn dtype_word(config_dtype: &str) -> Option<&'static str> {
    Some(match config_dtype {
        "bfloat16" => "BF16",
        "float16" | "half" | "fp16" => "F16",
        "float32" | "float" | "fp32" => "F32",
        _ => return None,
    })
}

fn is_embedding_or_head(name: &str) -> bool {
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
fn saturating_sum(values: impl Iterator<Item = u64>) -> u64 {
    values.fold(0u64, u64::saturating_add)
}

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

impl ParallelMismatch {
    /// Sizes that vLLM accepts: the divisors of the head count, up to 64.
    pub fn divisors(&self) -> Vec<u64> {
        (1..=self.heads.min(64))
            .filter(|size| self.heads % size == 0)
            .collect()
    }
}

/// Where the attention head count comes from, in words.
fn heads_source(input: &FitInput) -> String {
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

/// Options beyond [`FitOptions`]: llama.cpp's for a GGUF file, vLLM's pipeline parallelism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineOptions {
    /// `-c`, `-ngl`, cache types… (GGUF files only).
    pub llama: LlamaCppOptions,
    /// vLLM's `--pipeline-parallel-size` (safetensors checkpoints only).
    pub pipeline_parallel_size: u64,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            llama: LlamaCppOptions::default(),
            pipeline_parallel_size: 1,
        }
    }
}

/// Sizes the checkpoint against the GPU budget, a GGUF file with llama.cpp's defaults. Call
/// [`check_config`] first: an absurd config gives saturated, meaningless figures here.
pub fn analyze(input: &FitInput, options: &FitOptions) -> FitReport {
    analyze_with(input, options, &EngineOptions::default())
}

/// [`analyze`] with llama.cpp's options for a GGUF file (`-c`, `-ngl`, cache types…) and
/// vLLM's pipeline parallelism for a safetensors checkpoint; each is ignored for the other.
pub fn analyze_with(input: &FitInput, options: &FitOptions, engine: &EngineOptions) -> FitReport {
    let llama = &engine.llama;
    let mut limitations = input.limitations.clone();
    let mut mismatches = Vec::new();
    let tensors = collect_tensors(input);
    let quant_bits = input
        .config
        .as_ref()
        .and_then(|config| config.quantization.as_ref())
        .and_then(|q| q.bits)
        .unwrap_or(4);

    // Weights.
    let mut by_dtype: BTreeMap<String, Bytes> = BTreeMap::new();
    let mut quantization_parts: BTreeMap<String, Bytes> = BTreeMap::new();
    let mut parameters = 0u64;
    let mut replicated_bytes = 0u64;
    for tensor in &tensors {
        let entry = by_dtype.entry(tensor.dtype.clone()).or_default();
        *entry = *entry + Bytes(tensor.bytes);
        let role = if input.gguf.is_empty() {
            quant_role(&tensor.name)
        } else {
            None
        };
        if let Some(role) = role {
            let entry = quantization_parts.entry(role.to_string()).or_default();
            *entry = *entry + Bytes(tensor.bytes);
        }
        parameters = parameters.saturating_add(match role {
            Some("qweight" | "weight_packed") => {
                let per_element = match tensor.dtype.as_str() {
                    "I32" | "U32" => 32,
                    "I16" | "U16" => 16,
                    _ => 8,
                };
                tensor
                    .numel
                    .saturating_mul(per_element / quant_bits.clamp(1, 32))
            }
            Some("blocks") => tensor.numel.saturating_mul(2),
            Some(_) => 0,
            None if tensor.dtype == "U8"
                && input
                    .config
                    .as_ref()
                    .and_then(|c| c.quantization.as_ref())
                    .is_some_and(|q| q.method == "bitsandbytes" && q.bits == Some(4)) =>
            {
                tensor.numel.saturating_mul(2)
            }
            None => tensor.numel,
        });
        if tensor.dims <= 1 {
            replicated_bytes = replicated_bytes.saturating_add(tensor.bytes);
        }
    }
    let total_bytes: u64 = saturating_sum(tensors.iter().map(|t| t.bytes));
    let has_output = tensors.iter().any(|t| {
        t.name.contains("lm_head")
            || t.name == "output.weight"
            || t.name.ends_with(".output.weight")
    });
    let has_embedding = tensors.iter().any(|t| {
        t.name.contains("embed_tokens") || t.name.contains("token_embd") || t.name.contains("wte")
    });
    let tie_declared = input.config.as_ref().and_then(|c| c.tie_word_embeddings);
    let tied_embeddings = !has_output && has_embedding && tie_declared != Some(false);
    if tied_embeddings && tie_declared.is_none() && input.gguf.is_empty() {
        let why = if input.config.is_some() {
            "config.json does not set `tie_word_embeddings`"
        } else {
            "no config.json"
        };
        limitations.push(format!(
            "no `lm_head` tensor and {why}: assumed tied to the embeddings (transformers' default)"
        ));
    }
    if !has_output && has_embedding && tie_declared == Some(false) {
        mismatches.push(Mismatch {
            kind: "tied_embeddings".to_string(),
            message: "config.json says `tie_word_embeddings` false but no `lm_head` tensor is in the headers: an engine would allocate and fail to load it".to_string(),
        });
    }

    // Model dtype and loaded bytes.
    let config_dtype = input.config.as_ref().and_then(|c| c.dtype.clone());
    let dominant_float = dominant(&by_dtype, is_float);
    let (model_dtype_name, model_dtype_bytes) =
        model_dtype(input, config_dtype.as_deref(), dominant_float.as_deref());
    let loaded_of = |t: &TensorFacts| -> u64 {
        if t.dtype == "F32"
            && model_dtype_bytes == 2
            && quant_role(&t.name).is_none()
            && input.gguf.is_empty()
        {
            t.bytes / 2
        } else {
            t.bytes
        }
    };
    let loaded_bytes: u64 = saturating_sum(tensors.iter().map(loaded_of));
    if loaded_bytes != total_bytes {
        limitations.push(format!(
            "F32 tensors are counted at 2 bytes per element once loaded, as vLLM's `--dtype auto` runs this model in {model_dtype_name}: {} on disk, {} loaded",
            Bytes(total_bytes),
            Bytes(loaded_bytes)
        ));
    }

    let weights = Weights {
        total_bytes: Bytes(total_bytes),
        by_dtype,
        quantization_parts,
        tensors: tensors.len() as u64,
        loaded_bytes: Bytes(loaded_bytes),
        tied_embeddings,
        index_total_size: input.index.as_ref().and_then(|i| i.total_size).map(Bytes),
        source: Source::Checkpoint,
    };

    // Declared format and mismatches.
    let declared_format = declared(input, &weights, &tensors, &mut mismatches);
    header_mismatches(input, &weights, &mut mismatches);

    // Shape and KV.
    let (mut model, kv_shape) = shape(input, &mut limitations);
    if model.hidden_size.is_none() {
        // The embedding matrix [vocab, hidden] gives both when no config does.
        if let Some(embedding) = input
            .safetensors
            .iter()
            .flat_map(|f| &f.header.tensors)
            .find(|t| {
                t.shape.len() == 2 && (t.name.contains("embed_tokens") || t.name.contains("wte"))
            })
        {
            model.vocab_size = model.vocab_size.or(Some(embedding.shape[0]));
            model.hidden_size = Some(embedding.shape[1]);
            model.source_detail = "checkpoint headers (embedding shape)".to_string();
        }
    }
    let (kv_name, kv_num, kv_den) = options
        .kv_cache_dtype
        .resolve(model_dtype_bytes, &model_dtype_name);
    let kv_shape = match kv_shape {
        Some(mut shape) if options.kv_cache_dtype == KvCacheDtype::Fp8DsMla => {
            if shape.mla {
                for layer in &mut shape.layers {
                    layer.2 = FP8_DS_MLA_BYTES;
                }
                let layers = shape.layers.len();
                shape.formula_base = format!(
                    "{layers} layers × {FP8_DS_MLA_BYTES} (512 FP8 latent + 4 F32 scales + 64 BF16 RoPE)"
                );
            } else {
                limitations.push("`fp8_ds_mla` is a layout for DeepSeek MLA models; this model is not MLA, so 1 byte per element (fp8) is used".to_string());
            }
            Some(shape)
        }
        other => other,
    };
    let kv_cache = kv_shape.as_ref().map(|shape| {
        let rate = rate(shape, 1, kv_num, kv_den);
        let element_bytes = if kv_den == 1 {
            kv_num.to_string()
        } else {
            format!("{kv_num}/{kv_den}")
        };
        KvCache {
            bytes_per_token: Bytes(rate.full_per_token.saturating_add(rate.sliding_per_token)),
            dtype: kv_name.clone(),
            element_bytes: element_bytes.clone(),
            attention: shape.attention.clone(),
            full_attention_bytes_per_token: Bytes(rate.full_per_token),
            sliding_window_bytes_per_token: Bytes(rate.sliding_per_token),
            sliding_window: rate.window,
            formula: format!("{} × {element_bytes} B ({kv_name})", shape.formula_base),
            source: Source::Checkpoint,
        }
    });

    let llama_model = match (input.gguf.first(), kv_shape.as_ref()) {
        (Some(_), Some(shape)) => shape.key_value.map(|key_value| {
            let headers: Vec<&GgufHeader> = input.gguf.iter().map(|file| &file.header).collect();
            llama_cpp::Model::new(&headers, &model, &shape.layers, key_value, shape.window)
        }),
        _ => None,
    };
    // llama.cpp's KV cache: `--cache-type-k` and `--cache-type-v` apart, rows in ggml blocks.
    let kv_cache = match (kv_cache, &llama_model, kv_shape.as_ref()) {
        (Some(kv), Some(llama_model), Some(shape)) => {
            let (full, sliding) = llama_model.bytes_per_token(llama);
            let (key, value) = shape.key_value.unwrap_or_default();
            let (k_type, v_type) = (llama.cache_type_k.name(), llama.cache_type_v.name());
            let dtype = if k_type == v_type {
                k_type.to_string()
            } else {
                format!("K {k_type}, V {v_type}")
            };
            let value_text = if value == 0 {
                "V read from the K latent (MLA)".to_string()
            } else {
                format!("value {value} in {v_type}")
            };
            let base = shape
                .formula_base
                .split(" × (")
                .next()
                .unwrap_or(&shape.formula_base)
                .to_string();
            Some(KvCache {
                bytes_per_token: Bytes(full.saturating_add(sliding)),
                dtype,
                element_bytes: format!("K {k_type}, V {v_type}"),
                full_attention_bytes_per_token: Bytes(full),
                sliding_window_bytes_per_token: Bytes(sliding),
                formula: format!("{base} × (key {key} in {k_type} + {value_text}), ggml row sizes"),
                ..kv
            })
        }
        (kv_cache, _, _) => kv_cache,
    };

    let mut report = FitReport {
        path: input.path.clone(),
        kind: input.kind,
        files: files(input),
        weights,
        parameters,
        model,
        kv_cache,
        declared_format,
        mismatches,
        budget: None,
        verdict: None,
        alternatives: Vec::new(),
        limitations,
    };

    let Some(gpu) = &options.gpu else {
        if report
            .limitations
            .iter()
            .any(|l| l.contains("--gpu-memory SIZE"))
        {
            return report;
        }
        report
            .limitations
            .push("no budget, so no verdict: give `--gpu-memory SIZE` or `--gpu NAME`".to_string());
        return report;
    };
    if let Some(llama_model) = &llama_model {
        let (budget, verdict, alternatives) = llama_cpp::evaluate(
            llama_model,
            llama,
            gpu,
            options.cards,
            &mut report.limitations,
        );
        report.budget = Some(budget);
        report.verdict = Some(verdict);
        report.alternatives = alternatives;
        return report;
    }
    if !input.gguf.is_empty() {
        report.limitations.push(
            "the GGUF metadata does not give the KV cache's shape: no llama.cpp budget".to_string(),
        );
        return report;
    }
    let pipeline = engine.pipeline_parallel_size.max(1);
    let layer_count = kv_shape
        .as_ref()
        .map_or(0, |shape| shape.layers.len() as u64);
    let stages: Vec<PipelineStage> = if pipeline > 1 && layer_count > 0 {
        pipeline_stages(&tensors, layer_count, pipeline, tied_embeddings)
    } else {
        vec![PipelineStage {
            layers: 0..layer_count,
            tensors: tensors.clone(),
            extra: String::new(),
        }]
    };
    // vLLM sizes one KV cache for every worker from the smallest budget: the tightest stage
    // decides (a stage that does not fit at all first, then the fewest KV tokens).
    // Each stage's KV shape (its layers) and the bytes every rank holds; one stage is the model.
    let stage_facts: Vec<(Option<KvShape>, u64)> = stages
        .iter()
        .map(|stage| {
            if pipeline == 1 {
                return (kv_shape.clone(), replicated_bytes);
            }
            let shape = kv_shape.as_ref().map(|shape| KvShape {
                layers: shape.layers[stage.layers.start as usize..stage.layers.end as usize]
                    .to_vec(),
                ..shape.clone()
            });
            let replicated = saturating_sum(
                stage
                    .tensors
                    .iter()
                    .filter(|t| t.dims <= 1)
                    .map(|t| t.bytes),
            );
            (shape, replicated)
        })
        .collect();
    let context_of = |model, facts| stage_context(model, facts, kv_num, kv_den, pipeline);
    let mut best: Option<(Budget, FitVerdict, usize)> = None;
    for (index, stage) in stages.iter().enumerate() {
        let stage_weights = saturating_sum(stage.tensors.iter().map(loaded_of));
        let context = context_of(&report.model, &stage_facts[index]);
        let mut scratch = Vec::new();
        let (budget, verdict) = evaluate(
            &context,
            options,
            gpu,
            stage_weights,
            options.tensor_parallel_size,
            if index == 0 {
                &mut report.limitations
            } else {
                &mut scratch
            },
        );
        let tighter = best.as_ref().is_none_or(|(_, current, _)| {
            (
                !verdict.fits,
                verdict.shortfall_bytes,
                std::cmp::Reverse(verdict.max_kv_tokens),
            ) > (
                !current.fits,
                current.shortfall_bytes,
                std::cmp::Reverse(current.max_kv_tokens),
            )
        });
        if tighter {
            best = Some((budget, verdict, index));
        }
    }
    let Some((mut budget, verdict, index)) = best else {
        return report;
    };
    let stage = &stages[index];
    budget.pipeline_parallel_size = pipeline;
    if pipeline > 1 {
        budget.replicated = format!(
            "pipeline stage {} of {pipeline} (layers {}–{}{}) is the tightest and is shown; {}",
            index + 1,
            stage.layers.start,
            stage.layers.end.saturating_sub(1),
            stage.extra,
            budget.replicated
        );
    }
    if !verdict.fits {
        let context = context_of(&report.model, &stage_facts[index]);
        report.alternatives = alternatives(
            &context,
            options,
            gpu,
            &stage.tensors,
            saturating_sum(stage.tensors.iter().map(loaded_of)),
            &budget,
            &verdict,
            model_dtype_bytes,
        );
    }
    report.budget = Some(budget);
    report.verdict = Some(verdict);
    report
}

/// The budget's context for one pipeline stage: its KV shape and replicated bytes.
fn stage_context<'a>(
    model: &'a ModelShape,
    (shape, replicated): &'a (Option<KvShape>, u64),
    kv_num: u64,
    kv_den: u64,
    pipeline: u64,
) -> BudgetContext<'a> {
    BudgetContext {
        model,
        kv_shape: shape.as_ref(),
        kv_num,
        kv_den,
        replicated_bytes: *replicated,
        pipeline,
    }
}

/// One stage of vLLM's pipeline parallelism: its layers and the tensors it loads.
struct PipelineStage {
    layers: std::ops::Range<u64>,
    tensors: Vec<TensorFacts>,
    /// What it holds besides its layers, in words (` + embeddings`).
    extra: String,
}

/// The decoder layer a tensor belongs to (`….layers.12.…`, `blk.12.…`).
fn layer_of(name: &str) -> Option<u64> {
    let rest = name
        .split_once(".layers.")
        .map(|(_, rest)| rest)
        .or_else(|| name.strip_prefix("layers."))
        .or_else(|| name.strip_prefix("blk."))?;
    rest.split('.').next()?.parse().ok()
}

/// Layers per stage as vLLM splits them (`get_pp_indices` in `vllm/distributed/utils.py`):
/// `layers / stages` each, the remainder one by one from the second-to-last stage backwards,
/// so the first stage (embeddings) and the last (norm and `lm_head`) get the fewest.
fn pipeline_layer_counts(layers: u64, stages: u64) -> Vec<u64> {
    let mut counts = vec![layers / stages; stages as usize];
    let remaining = (layers % stages) as usize;
    for back in 2..remaining + 2 {
        let index = counts.len() - back;
        counts[index] += 1;
    }
    counts
}

/// Splits the tensors over `stages` pipeline stages: each decoder layer to its stage, the
/// embeddings to the first, everything else (final norm, `lm_head`) to the last. With tied
/// embeddings the last stage holds its own copy for `lm_head`.
fn pipeline_stages(
    tensors: &[TensorFacts],
    layers: u64,
    stages: u64,
    tied_embeddings: bool,
) -> Vec<PipelineStage> {
    let counts = pipeline_layer_counts(layers, stages);
    let mut ranges = Vec::new();
    let mut start = 0;
    for count in counts {
        ranges.push(start..start + count);
        start += count;
    }
    let last = ranges.len() - 1;
    let is_embedding = |name: &str| {
        name.contains("embed_tokens") || name.contains("token_embd") || name.contains("wte")
    };
    let mut split: Vec<PipelineStage> = ranges
        .into_iter()
        .enumerate()
        .map(|(index, layers)| PipelineStage {
            layers,
            tensors: Vec::new(),
            extra: match (index == 0, index == last) {
                (true, true) => " + embeddings, norm and lm_head".to_string(),
                (true, false) => " + embeddings".to_string(),
                (false, true) => " + norm and lm_head".to_string(),
                (false, false) => String::new(),
            },
        })
        .collect();
    for tensor in tensors {
        let stage = match layer_of(&tensor.name) {
            Some(layer) => split
                .iter()
                .position(|stage| stage.layers.contains(&layer))
                .unwrap_or(last),
            None if is_embedding(&tensor.name) => {
                if tied_embeddings {
                    split[last].tensors.push(tensor.clone());
                }
                0
            }
            None => last,
        };
        split[stage].tensors.push(tensor.clone());
    }
    split
}

fn collect_tensors(input: &FitInput) -> Vec<TensorFacts> {
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

fn files(input: &FitInput) -> Vec<CheckpointFile> {
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

fn dominant(by_dtype: &BTreeMap<String, Bytes>, filter: fn(&str) -> bool) -> Option<String> {
    by_dtype
        .iter()
        .filter(|(dtype, _)| filter(dtype))
        .max_by_key(|(_, bytes)| **bytes)
        .map(|(dtype, _)| dtype.clone())
}

fn model_dtype(
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

fn percent(part: u64, whole: u64) -> u64 {
    if whole == 0 {
        0
    } else {
        (part as u128 * 100 / whole as u128) as u64
    }
}

fn found_phrase(weights: &Weights) -> String {
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
const NAME_HINTS: &[(&str, &str)] = &[
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

fn name_hints(names: &[String]) -> Vec<(String, &'static str)> {
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

fn declared(
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

    // Names against the headers (R12: a name saying int4 does not make a file int4).
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

fn header_mismatches(input: &FitInput, weights: &Weights, mismatches: &mut Vec<Mismatch>) {
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

fn shape(input: &FitInput, limitations: &mut Vec<String>) -> (ModelShape, Option<KvShape>) {
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

fn gguf_shape(header: &GgufHeader, limitations: &mut Vec<String>) -> (ModelShape, Option<KvShape>) {
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

fn rate(shape: &KvShape, tensor_parallel: u64, num: u64, den: u64) -> KvRate {
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

#[derive(Clone, Copy)]
struct BudgetContext<'a> {
    model: &'a ModelShape,
    kv_shape: Option<&'a KvShape>,
    kv_num: u64,
    kv_den: u64,
    replicated_bytes: u64,
    /// Pipeline stages: more than one means NCCL between stages even without TP.
    pipeline: u64,
}

fn allowances(
    context: &BudgetContext<'_>,
    options: &FitOptions,
    tensor_parallel: u64,
) -> Vec<Allowance> {
    let distributed = tensor_parallel > 1 || context.pipeline > 1;
    let mut list = vec![Allowance {
        name: "non_torch".to_string(),
        bytes: Bytes(CUDA_CONTEXT_BYTES + if distributed { NCCL_BYTES } else { 0 }),
        source: Source::Assumption,
        basis: if distributed {
            format!("{CUDA_CONTEXT_BASIS} + NCCL buffers 256 MiB assumed (4 MiB NCCL_BUFFSIZE × 32 channels × 2)")
        } else {
            format!("{CUDA_CONTEXT_BASIS}; cuBLAS workspaces come on top")
        },
    }];
    let hidden = context.model.hidden_size.unwrap_or(0);
    let intermediate = context
        .model
        .intermediate_size
        .unwrap_or(hidden.saturating_mul(4))
        / tensor_parallel.max(1);
    let vocab = context.model.vocab_size.unwrap_or(0);
    let tokens = options.max_num_batched_tokens;
    let activation = tokens
        .saturating_mul(
            hidden
                .saturating_mul(4)
                .saturating_add(intermediate.saturating_mul(2)),
        )
        .saturating_mul(2)
        .saturating_add(options.max_num_seqs.saturating_mul(vocab).saturating_mul(4));
    list.push(Allowance {
        name: "activation_peak".to_string(),
        bytes: Bytes(activation),
        source: Source::Assumption,
        basis: format!(
            "estimate of vLLM's profiling peak: {tokens} batched tokens × (4 × hidden {hidden} + 2 × intermediate {intermediate}) × 2 B + {} sequences × vocab {vocab} × 4 B logits",
            options.max_num_seqs
        ),
    });
    list.push(Allowance {
        name: "cuda_graphs".to_string(),
        bytes: Bytes(CUDA_GRAPH_BYTES),
        source: Source::Assumption,
        basis: "assumed: vLLM logs `Graph capturing finished … took 0.3–1.5 GiB` for 7B–70B models; 0 with `--enforce-eager`".to_string(),
    });
    list
}

fn evaluate(
    context: &BudgetContext<'_>,
    options: &FitOptions,
    gpu: &GpuBudget,
    weights_bytes: u64,
    tensor_parallel: u64,
    limitations: &mut Vec<String>,
) -> (Budget, FitVerdict) {
    let tp = tensor_parallel.max(1);
    let usable = (gpu.total.get() as f64 * options.gpu_memory_utilization).floor() as u64;
    let replicated = context.replicated_bytes.min(weights_bytes);
    let weights_per_gpu = replicated.saturating_add((weights_bytes - replicated).div_ceil(tp));
    let allowances = allowances(context, options, tp);
    // Saturating: a sum that wrapped said "fits" for a vocabulary of 2^60 (issue 14).
    let allowance_total = saturating_sum(allowances.iter().map(|a| a.bytes.get()));
    let needed_before_kv = weights_per_gpu.saturating_add(allowance_total);
    let kv_budget = usable.saturating_sub(needed_before_kv);
    let model_max = context.model.max_position_embeddings;
    let (max_model_len, max_model_len_source) = match (options.max_model_len, model_max) {
        (Some(len), Some(model_len)) if len > model_len => {
            limitations.push(format!(
                "`--max-model-len` {len} is above the model's context length {model_len}: vLLM refuses it unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`"
            ));
            (len, Source::User)
        }
        (Some(len), _) => (len, Source::User),
        (None, Some(len)) => (len, Source::Checkpoint),
        (None, None) => {
            limitations.push(
                "the context length is not in the config: `max_model_len` 4096 assumed".to_string(),
            );
            (4096, Source::Assumption)
        }
    };
    let rate = context
        .kv_shape
        .map(|shape| {
            // vLLM budgets a sliding-window layer for min(window − 1 + max_num_batched_tokens,
            // max_model_len) tokens per request (`SlidingWindowSpec.max_memory_usage_bytes`):
            // a prefill chunk attends over the window before it.
            let mut rate = rate(shape, tp, context.kv_num, context.kv_den);
            rate.window = rate.window.map(|window| {
                window
                    .saturating_sub(1)
                    .saturating_add(options.max_num_batched_tokens)
            });
            rate
        })
        .unwrap_or_default();
    let per_sequence = rate.per_sequence(max_model_len);
    let per_token = rate.full_per_token.saturating_add(rate.sliding_per_token);
    let max_kv_tokens = if per_sequence == 0 {
        0
    } else {
        u64::try_from((kv_budget as u128 * max_model_len as u128) / per_sequence as u128)
            .unwrap_or(u64::MAX)
    };
    let max_concurrency = if per_sequence == 0 {
        0.0
    } else {
        kv_budget as f64 / per_sequence as f64
    };
    let cap = model_max.unwrap_or(u64::MAX).max(max_model_len);
    let longest = if per_sequence == 0 {
        0
    } else {
        rate.longest_fitting(kv_budget, cap)
    };
    let weights_fit = needed_before_kv <= usable;
    let fits = weights_fit && per_sequence > 0 && per_sequence <= kv_budget;
    let shortfall = if fits {
        0
    } else {
        needed_before_kv
            .saturating_add(per_sequence)
            .saturating_sub(usable)
    };
    let summary = if context.kv_shape.is_none() {
        if weights_fit {
            "the weights fit, but the KV cache could not be sized (see limitations)".to_string()
        } else {
            format!(
                "does not fit: the weights and allowances alone need {} more",
                Bytes(needed_before_kv - usable)
            )
        }
    } else if fits {
        format!(
            "fits: {} KV tokens per GPU, {:.2} sequences of {max_model_len} tokens at once",
            max_kv_tokens,
            (max_concurrency * 100.0).floor() / 100.0
        )
    } else if !weights_fit {
        format!(
            "does not fit: weights {} + allowances {} exceed the usable {} by {}",
            Bytes(weights_per_gpu),
            Bytes(allowance_total),
            Bytes(usable),
            Bytes(needed_before_kv - usable)
        )
    } else {
        format!(
            "does not fit: one sequence of {max_model_len} tokens needs {} of KV cache but {} is left; the longest that fits is {longest} tokens",
            Bytes(per_sequence),
            Bytes(kv_budget)
        )
    };
    let budget = Budget {
        gpu: gpu.name.clone(),
        gpu_total_bytes: gpu.total,
        gpu_total_source: gpu.source,
        gpu_total_basis: gpu.basis.clone(),
        gpu_memory_utilization: options.gpu_memory_utilization,
        usable_bytes: Bytes(usable),
        tensor_parallel_size: tp,
        weights_per_gpu_bytes: Bytes(weights_per_gpu),
        replicated: if tp > 1 {
            let kv = if context.kv_shape.is_some_and(|s| s.mla) {
                "the MLA latent KV cache is replicated on every rank"
            } else {
                "KV heads are split across ranks (replicated when fewer KV heads than ranks)"
            };
            format!(
                "1-D tensors (norms, biases: {}) are replicated on every rank; matrices and embeddings are split by {tp}; {kv}",
                Bytes(replicated)
            )
        } else {
            "single GPU: nothing is split".to_string()
        },
        allowances,
        kv_budget_bytes: Bytes(kv_budget),
        max_model_len,
        max_model_len_source,
        max_num_seqs: options.max_num_seqs,
        pipeline_parallel_size: 1,
        engine: "vllm".to_string(),
        llama_cpp: None,
    };
    let verdict = FitVerdict {
        fits,
        max_kv_tokens,
        kv_bytes_per_token_per_gpu: Bytes(per_token),
        kv_bytes_per_sequence: Bytes(per_sequence),
        max_concurrency: (max_concurrency * 100.0).floor() / 100.0,
        max_model_len_that_fits: longest,
        shortfall_bytes: Bytes(shortfall),
        summary,
    };
    (budget, verdict)
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the pieces come from analyze"
)]
fn alternatives(
    context: &BudgetContext<'_>,
    options: &FitOptions,
    gpu: &GpuBudget,
    tensors: &[TensorFacts],
    weights_bytes: u64,
    budget: &Budget,
    verdict: &FitVerdict,
    model_dtype_bytes: u64,
) -> Vec<Alternative> {
    let mut list = Vec::new();
    let mut scratch = Vec::new();
    let tp = budget.tensor_parallel_size;
    let check = |gpu: &GpuBudget, weights: u64, tp: u64, scratch: &mut Vec<String>| {
        evaluate(context, options, gpu, weights, tp, scratch)
    };
    // A larger card class.
    if let Some(card) = options.cards.iter().find(|card| {
        card.total_bytes > gpu.total && {
            let candidate = card_budget(card);
            check(&candidate, weights_bytes, tp, &mut scratch).1.fits
        }
    }) {
        let (b, v) = check(&card_budget(card), weights_bytes, tp, &mut scratch);
        list.push(Alternative {
            kind: "card".to_string(),
            description: format!(
                "a larger card: {} ({}){}",
                card.name,
                card.total_bytes,
                if tp > 1 {
                    format!(" × {tp}")
                } else {
                    String::new()
                }
            ),
            weights_per_gpu_bytes: b.weights_per_gpu_bytes,
            max_kv_tokens: v.max_kv_tokens,
        });
    }
    // More GPUs of this card.
    let heads = context.model.attention_heads.unwrap_or(0);
    for candidate_tp in [2u64, 4, 8] {
        if candidate_tp <= tp || (heads > 0 && heads % candidate_tp != 0) {
            continue;
        }
        let (b, v) = check(gpu, weights_bytes, candidate_tp, &mut scratch);
        if v.fits {
            list.push(Alternative {
                kind: "tensor_parallel".to_string(),
                description: format!(
                    "`--tensor-parallel-size {candidate_tp}` on {candidate_tp} of these GPUs"
                ),
                weights_per_gpu_bytes: b.weights_per_gpu_bytes,
                max_kv_tokens: v.max_kv_tokens,
            });
            break;
        }
    }
    let original_weights_fit = budget.kv_budget_bytes.get() > 0;
    // A quantized checkpoint, estimated from the same headers.
    let non_float: u64 = tensors
        .iter()
        .filter(|t| !is_float(&t.dtype))
        .map(|t| t.bytes)
        .fold(0u64, u64::saturating_add);
    let is_quantized = non_float.saturating_mul(4) > weights_bytes;
    if !is_quantized && model_dtype_bytes >= 2 {
        let linear: u64 = tensors
            .iter()
            .filter(|t| t.dims == 2 && is_float(&t.dtype) && !is_embedding_or_head(&t.name))
            .map(|t| t.numel)
            .fold(0u64, u64::saturating_add);
        let linear_loaded: u64 = tensors
            .iter()
            .filter(|t| t.dims == 2 && is_float(&t.dtype) && !is_embedding_or_head(&t.name))
            .map(|t| t.numel.saturating_mul(model_dtype_bytes))
            .fold(0u64, u64::saturating_add);
        let rest = weights_bytes.saturating_sub(linear_loaded);
        let candidates = [
            ("fp8 (W8, e.g. `--quantization fp8` or an FP8 checkpoint): linear weights at 1 B + 128×128-block F32 scales", rest.saturating_add(linear).saturating_add(linear / 16384 * 4)),
            ("int4 (GPTQ/AWQ, group 128): linear weights at 0.5 B + F16 scales and 4-bit zeros per 128", rest.saturating_add(linear / 2 + linear / 128 * 2 + linear / 256)),
        ];
        let evaluated: Vec<(&str, u64, Budget, FitVerdict)> = candidates
            .iter()
            .map(|(label, bytes)| {
                let (b, v) = check(gpu, *bytes, tp, &mut scratch);
                (*label, *bytes, b, v)
            })
            .collect();
        // The mildest quantization that fits; else the one that frees the most room.
        let chosen = evaluated
            .iter()
            .find(|(_, _, _, v)| v.fits)
            .or_else(|| evaluated.last());
        if let Some((label, bytes, b, v)) = chosen {
            let weights_now_fit = b.kv_budget_bytes.get() > 0 && v.max_model_len_that_fits > 0;
            let longer = v.max_model_len_that_fits > verdict.max_model_len_that_fits;
            if v.fits || (weights_now_fit && (!original_weights_fit || longer)) {
                let context_note = if v.fits {
                    String::new()
                } else {
                    format!(" with `--max-model-len {}`", v.max_model_len_that_fits)
                };
                list.push(Alternative {
                    kind: "quantization".to_string(),
                    description: format!("{label}: weights ≈ {}{context_note}", Bytes(*bytes)),
                    weights_per_gpu_bytes: b.weights_per_gpu_bytes,
                    max_kv_tokens: v.max_kv_tokens,
                });
            }
        }
    }
    // An 8-bit KV cache.
    if context.kv_num > context.kv_den {
        let fp8_context = BudgetContext {
            kv_num: 1,
            kv_den: 1,
            ..*context
        };
        let (b, v) = evaluate(&fp8_context, options, gpu, weights_bytes, tp, &mut scratch);
        if v.fits {
            list.push(Alternative {
                kind: "kv_cache_dtype".to_string(),
                description: "`--kv-cache-dtype fp8` halves the KV cache".to_string(),
                weights_per_gpu_bytes: b.weights_per_gpu_bytes,
                max_kv_tokens: v.max_kv_tokens,
            });
        }
    }
    // A shorter context.
    let weights_fit = budget
        .weights_per_gpu_bytes
        .get()
        .saturating_add(saturating_sum(
            budget.allowances.iter().map(|a| a.bytes.get()),
        ))
        <= budget.usable_bytes.get();
    if weights_fit && verdict.max_model_len_that_fits > 0 && context.kv_shape.is_some() {
        list.push(Alternative {
            kind: "max_model_len".to_string(),
            description: format!(
                "`--max-model-len {}` (one sequence at a time)",
                verdict.max_model_len_that_fits
            ),
            weights_per_gpu_bytes: budget.weights_per_gpu_bytes,
            max_kv_tokens: verdict.max_kv_tokens,
        });
    }
    list
}

/// The budget of a card from the table.
pub fn card_budget(card: &Card) -> GpuBudget {
    GpuBudget {
        name: Some(card.name.to_string()),
        total: card.total_bytes,
        source: Source::Assumption,
        basis: format!("oomdoc card table: {}", card.source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_layers_stop_growing_at_the_window() {
        let rate = KvRate {
            full_per_token: 100,
            sliding_per_token: 500,
            window: Some(1000),
        };
        assert_eq!(rate.per_sequence(10), 6000);
        assert_eq!(rate.per_sequence(5000), 100 * 5000 + 500 * 1000);
        // Budget for 2000 tokens: 100 × 2000 + 500 × 1000 = 700000.
        assert_eq!(rate.longest_fitting(700_000, u64::MAX), 2000);
        // Below the window both kinds grow.
        assert_eq!(rate.longest_fitting(6000, u64::MAX), 10);
        assert_eq!(rate.longest_fitting(u64::MAX / 2, 131_072), 131_072);
    }

    #[test]
    fn quantization_roles_from_names() {
        assert_eq!(
            quant_role("model.layers.0.mlp.up_proj.qweight"),
            Some("qweight")
        );
        assert_eq!(
            quant_role("model.layers.0.mlp.up_proj.g_idx"),
            Some("g_idx")
        );
        assert_eq!(quant_role("x.weight_scale_inv"), Some("weight_scale"));
        assert_eq!(
            quant_role("x.weight.quant_state.bitsandbytes__nf4"),
            Some("bitsandbytes_state")
        );
        assert_eq!(
            quant_role("model.layers.0.mlp.experts.gate_up_proj_blocks"),
            Some("blocks")
        );
        assert_eq!(quant_role("model.layers.0.mlp.up_proj.weight"), None);
    }

    #[test]
    fn format_words_in_names_need_boundaries() {
        let hints = name_hints(&[
            "Llama-3-8B-Instruct-AWQ".to_string(),
            "model-q4_k_m.gguf".to_string(),
        ]);
        let words: Vec<&str> = hints.iter().map(|(word, _)| word.as_str()).collect();
        assert_eq!(words, vec!["awq", "q4_k_m"]);
        assert!(name_hints(&["hawq-models".to_string(), "fp8x".to_string()]).is_empty());
    }
}
