//! Checkpoint headers + config + a GPU budget → weights, KV cache per token, verdict and
//! what would fit instead. Pure: no files, no environment.
//!
//! KV sizing follows vLLM (`vllm/v1/kv_cache_interface.py`): per layer and
//! token `2 · kv_heads · head_size · dtype_bytes`, MLA `(kv_lora_rank + qk_rope_head_dim) ·
//! dtype_bytes`; sliding-window layers hold at most the window. The budget follows vLLM ≥ 0.9:
//! `total · gpu_memory_utilization − (weights + activation peak + non-torch memory)`, with
//! each allowance stated as an estimate with its source.

use std::collections::BTreeMap;

use crate::model::bytes::MIB;
use crate::model::cards::Card;
use crate::model::checkpoint::{
    Allowance, Alternative, Budget, CheckpointFile, DeclaredFormat, FitReport, FitVerdict, KvCache,
    Mismatch, ModelShape, Weights,
};
use crate::model::{Bytes, Source};
use crate::parse::checkpoint::gguf::{self, GgufHeader, MetaValue};
use crate::parse::checkpoint::hf_config::LayerKind;

mod alternatives;
mod budget;
mod checks;
mod gpu;
mod llama_cpp;
mod pipeline;
mod request;
mod shape;
mod weights;

use alternatives::alternatives;
pub use budget::card_budget;
use budget::evaluate;
pub use checks::{
    check_config, check_parallel, check_pipeline, llama_cpp_fit_margin, AbsurdConfig,
    ParallelMismatch, PipelineMismatch, MAX_DIMENSION, MAX_LAYERS, MAX_VOCAB,
};
pub use gpu::{detected_budget, Engine};
pub use llama_cpp::{CacheType, FlashAttn, LlamaCppOptions};
use pipeline::{pipeline_layer_counts, pipeline_stages, stage_context};
pub use request::{checkpoint_facts, FitPlan, FitRequest, OutOfRange};
use shape::{rate, shape};
use weights::{
    collect_tensors, declared, dominant, files, header_mismatches, is_embedding_or_head, is_float,
    model_dtype, quant_role, saturating_sum,
};

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

pub use crate::parse::checkpoint::{FitInput, GgufInput, SafetensorsInput};

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

impl ParallelMismatch {
    /// Sizes that vLLM accepts: the divisors of the head count, up to 64.
    pub fn divisors(&self) -> Vec<u64> {
        (1..=self.heads.min(64))
            .filter(|size| self.heads % size == 0)
            .collect()
    }
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

/// One stage of vLLM's pipeline parallelism: its layers and the tensors it loads.
struct PipelineStage {
    layers: std::ops::Range<u64>,
    tensors: Vec<TensorFacts>,
    /// What it holds besides its layers, in words (` + embeddings`).
    extra: String,
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

#[cfg(test)]
mod tests {
    use super::weights::name_hints;
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
