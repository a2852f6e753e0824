//! What `oomdoc fit` found in a checkpoint and concluded about a GPU budget.
//! Plain serde data; the JSON field names `weights.total_bytes`, `weights.by_dtype`,
//! `kv_cache.bytes_per_token`, `kv_cache.dtype`, `verdict.fits` and `verdict.max_kv_tokens`
//! are a contract (issue 4).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Bytes, Source};

/// The whole `oomdoc fit` report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitReport {
    /// The path or model id the user gave.
    pub path: String,
    /// What it turned out to be.
    pub kind: CheckpointKind,
    /// Files whose headers were read.
    pub files: Vec<CheckpointFile>,
    /// Weight bytes from the headers.
    pub weights: Weights,
    /// Parameter count (packed integers expanded; scales, zeros and indices excluded).
    pub parameters: u64,
    /// Shape of the model as far as KV sizing needs it.
    pub model: ModelShape,
    /// KV cache per token; `None` when the config lacks what it needs (see limitations).
    pub kv_cache: Option<KvCache>,
    /// What the config and the names claim.
    pub declared_format: DeclaredFormat,
    /// Claims the headers contradict, and header inconsistencies.
    pub mismatches: Vec<Mismatch>,
    /// The budget, when a GPU or size was given.
    pub budget: Option<Budget>,
    /// The verdict against the budget.
    pub verdict: Option<FitVerdict>,
    /// What would fit when this does not.
    pub alternatives: Vec<Alternative>,
    /// What oomdoc could not know or assumed.
    pub limitations: Vec<String>,
}

/// What PATH was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointKind {
    /// A directory with config.json and safetensors.
    SafetensorsDirectory,
    /// One `.safetensors` file.
    SafetensorsFile,
    /// One or a split set of `.gguf` files.
    Gguf,
}

impl CheckpointKind {
    /// The name written in JSON (`safetensors_directory`, `safetensors_file`, `gguf`).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointKind::SafetensorsDirectory => "safetensors_directory",
            CheckpointKind::SafetensorsFile => "safetensors_file",
            CheckpointKind::Gguf => "gguf",
        }
    }
}

/// A file whose header was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointFile {
    /// Path as shown to the user.
    pub path: String,
    /// File size.
    pub size_bytes: Bytes,
    /// Header bytes read (safetensors: 8 + N; GGUF: up to the data section).
    pub header_bytes: Bytes,
    /// Tensors described.
    pub tensors: u64,
}

/// Weight bytes, exactly as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Weights {
    /// Σ tensor bytes over every file (safetensors `end − begin`; GGUF blocks × block bytes).
    pub total_bytes: Bytes,
    /// Bytes per dtype: safetensors names (`BF16`, `F8_E4M3`, `I32`, …) or GGUF type names.
    pub by_dtype: BTreeMap<String, Bytes>,
    /// Bytes of quantization parts by role (`qweight`, `scales`, `qzeros`, `g_idx`,
    /// `weight_scale`, …); empty for unquantized checkpoints.
    pub quantization_parts: BTreeMap<String, Bytes>,
    /// Number of tensors.
    pub tensors: u64,
    /// Bytes once loaded by an engine in the model dtype (F32 tensors cast to a 16-bit
    /// model dtype take half); equal to `total_bytes` otherwise.
    pub loaded_bytes: Bytes,
    /// `lm_head` is absent because the embeddings are tied (allocated once).
    pub tied_embeddings: bool,
    /// `metadata.total_size` of the shard index, when present (a hint).
    pub index_total_size: Option<Bytes>,
    /// Always checkpoint headers.
    pub source: Source,
}

/// Model shape for KV sizing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ModelShape {
    /// `model_type` or GGUF `general.architecture`.
    pub model_type: Option<String>,
    /// `architectures`.
    pub architectures: Vec<String>,
    /// Decoder layers.
    pub layers: Option<u64>,
    /// Layers with full attention.
    pub full_attention_layers: u64,
    /// Layers with sliding-window attention.
    pub sliding_window_layers: u64,
    /// Layers without per-token KV (Mamba, linear attention).
    pub no_kv_layers: u64,
    /// Hidden size.
    pub hidden_size: Option<u64>,
    /// Attention heads.
    pub attention_heads: Option<u64>,
    /// KV heads.
    pub kv_heads: Option<u64>,
    /// Head size used for KV.
    pub head_dim: Option<u64>,
    /// Context length the model declares.
    pub max_position_embeddings: Option<u64>,
    /// The model dtype (`bfloat16`, …).
    pub dtype: Option<String>,
    /// MLP intermediate size (`intermediate_size`, GGUF `feed_forward_length`).
    pub intermediate_size: Option<u64>,
    /// Vocabulary size.
    pub vocab_size: Option<u64>,
    /// Where these came from: `config.json`, `config.json (text_config)`, `GGUF metadata`.
    pub source_detail: String,
}

/// KV cache size per token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KvCache {
    /// Bytes per token over every attention layer of the whole model (one GPU, no TP),
    /// counting sliding-window layers too (exact for contexts up to the window).
    pub bytes_per_token: Bytes,
    /// KV dtype name (`bf16`, `fp8_e4m3`, `f16`, …).
    pub dtype: String,
    /// Bytes per element, as a fraction for GGUF block types (`2`, `1`, `34/32` for `q8_0`).
    pub element_bytes: String,
    /// `mha`, `gqa`, `mqa` or `mla`.
    pub attention: String,
    /// Bytes per token of the full-attention layers alone.
    pub full_attention_bytes_per_token: Bytes,
    /// Bytes per token of the sliding-window layers alone (they hold at most `sliding_window` tokens).
    pub sliding_window_bytes_per_token: Bytes,
    /// The window, when some layers slide.
    pub sliding_window: Option<u64>,
    /// How the numbers were computed, e.g. `2 (K,V) × 32 layers × 8 KV heads × 128 × 2 B`.
    pub formula: String,
    /// Where the shape came from.
    pub source: Source,
}

/// What the checkpoint claims to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct DeclaredFormat {
    /// `torch_dtype`/`dtype` from config.json.
    pub config_dtype: Option<String>,
    /// `quantization_config.quant_method`.
    pub quant_method: Option<String>,
    /// `quantization_config.bits` (or equivalent).
    pub bits: Option<u64>,
    /// `quantization_config.group_size`.
    pub group_size: Option<i64>,
    /// GGUF `general.file_type`, by name.
    pub gguf_file_type: Option<String>,
    /// Format words found in the directory, file or model-id names (`int4`, `awq`, `fp8`, `q4_k_m`, …).
    pub name_hints: Vec<String>,
    /// What the headers actually hold, in one phrase.
    pub found: String,
}

/// A claim contradicted by the headers, or an inconsistency inside them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// `dtype`, `quantization`, `name`, `header`, `index`.
    pub kind: String,
    /// Sentence for the user.
    pub message: String,
}

/// One subtraction from the budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Allowance {
    /// `non_torch`, `activation_peak`, `cuda_graphs`.
    pub name: String,
    /// Bytes per GPU.
    pub bytes: Bytes,
    /// Kind of source (always an assumption or a measurement on another machine).
    pub source: Source,
    /// Where the number comes from, in words.
    pub basis: String,
}

/// The memory budget per GPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Budget {
    /// Card or device name, when known.
    pub gpu: Option<String>,
    /// Memory per GPU.
    pub gpu_total_bytes: Bytes,
    /// Where that total came from.
    pub gpu_total_source: Source,
    /// What that source is, in words.
    pub gpu_total_basis: String,
    /// `--gpu-memory-utilization`.
    pub gpu_memory_utilization: f64,
    /// total × utilization.
    pub usable_bytes: Bytes,
    /// `--tensor-parallel-size`.
    pub tensor_parallel_size: u64,
    /// Weight bytes on each GPU.
    pub weights_per_gpu_bytes: Bytes,
    /// What every rank holds in full under tensor parallelism.
    pub replicated: String,
    /// Allowances subtracted, each with its source.
    pub allowances: Vec<Allowance>,
    /// usable − weights − allowances (0 when negative).
    pub kv_budget_bytes: Bytes,
    /// `--max-model-len`, or the model's context length.
    pub max_model_len: u64,
    /// Where `max_model_len` came from.
    pub max_model_len_source: Source,
    /// `--max-num-seqs`.
    pub max_num_seqs: u64,
    /// `--pipeline-parallel-size`: with more than one stage, the budget is the tightest stage's.
    pub pipeline_parallel_size: u64,
    /// Whose accounting the budget follows: `vllm` (safetensors) or `llama.cpp` (GGUF).
    pub engine: String,
    /// How llama.cpp places a GGUF file; `null` for a vLLM budget.
    pub llama_cpp: Option<LlamaCppPlacement>,
}

/// Where llama.cpp puts a GGUF file's weights and KV cache, and what it allocates besides
/// (`-ngl`, `-c`, `--cache-type-k/v`, `-ub`, `--flash-attn`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlamaCppPlacement {
    /// Repeating layers (`{arch}.block_count`).
    pub layers: u64,
    /// `-ngl` as given; `null` is llama.cpp's default (every layer, then `--fit`).
    pub n_gpu_layers: Option<u64>,
    /// Repeating layers on the GPU (the last ones).
    pub gpu_layers: u64,
    /// Whether the output layer (`output.weight`, `output_norm`) is on the GPU.
    pub output_on_gpu: bool,
    /// Weights left in RAM: `token_embd` always, plus layers not offloaded.
    pub weights_in_ram_bytes: Bytes,
    /// Context as asked (`-c`, or the model's `context_length`).
    pub n_ctx_requested: u64,
    /// KV cells allocated: `n_ctx` rounded up to a multiple of 256.
    pub n_ctx: u64,
    /// KV cells of a sliding-window layer (window + ubatch, padded), when the model has some.
    pub sliding_window_cells: Option<u64>,
    /// KV cache on the GPU (offloaded layers only).
    pub kv_on_gpu_bytes: Bytes,
    /// `--cache-type-k`.
    pub cache_type_k: String,
    /// `--cache-type-v`.
    pub cache_type_v: String,
    /// Tokens per physical batch (`-ub`, capped by `-b` and `n_ctx`).
    pub n_ubatch: u64,
    /// Flash attention assumed on (`--flash-attn auto` enables it on CUDA).
    pub flash_attn: bool,
    /// Memory llama.cpp's automatic fit (`--fit on`, the default) leaves free per GPU.
    pub fit_margin_bytes: Bytes,
}

/// Does it fit?
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitVerdict {
    /// Weights fit and the KV cache holds at least one sequence of `max_model_len`.
    pub fits: bool,
    /// KV tokens the budget holds per GPU (at the per-token rate of `max_model_len`-long sequences).
    pub max_kv_tokens: u64,
    /// KV bytes per token on one GPU (after tensor parallelism).
    pub kv_bytes_per_token_per_gpu: Bytes,
    /// KV bytes of one sequence of `max_model_len` on one GPU (sliding layers capped at the window).
    pub kv_bytes_per_sequence: Bytes,
    /// Sequences of `max_model_len` that fit at once (vLLM's "Maximum concurrency").
    pub max_concurrency: f64,
    /// Longest single sequence the KV budget holds (capped at the model's context length).
    pub max_model_len_that_fits: u64,
    /// Bytes missing, when it does not fit.
    pub shortfall_bytes: Bytes,
    /// One sentence.
    pub summary: String,
}

/// Something that would fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alternative {
    /// `card`, `tensor_parallel`, `quantization`, `kv_cache_dtype`, `max_model_len`.
    pub kind: String,
    /// What to do.
    pub description: String,
    /// Weight bytes per GPU under that choice.
    pub weights_per_gpu_bytes: Bytes,
    /// KV tokens per GPU under that choice.
    pub max_kv_tokens: u64,
}

/// The weights lower bound of the checkpoint, from `oomdoc fit`'s reading of its headers.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CheckpointFacts {
    /// Path given with `--checkpoint` (redacted).
    pub path: Option<String>,
    /// Format (`safetensors`, `gguf`, …).
    pub format: Option<String>,
    /// Weight bytes summed from the headers.
    pub weights_total_bytes: Option<u64>,
    /// Weight bytes per dtype.
    pub by_dtype: BTreeMap<String, u64>,
    /// Parameter count, when known.
    pub parameters: Option<u64>,
    /// Where the figures come from.
    pub source: String,
}
