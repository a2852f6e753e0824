//! A GGUF file budgeted the way llama.cpp loads it, not with vLLM's
//! `--gpu-memory-utilization`, activation profile and CUDA-graph allowance. Pure: no files,
//! no environment.
//!
//! What llama.cpp puts on a GPU, from its source (`ggml-org/llama.cpp`, read at commit
//! `001d906`):
//! - weights: `-ngl N` offloads the output layer first, then the last `N − 1` repeating
//!   layers (`src/llama-model.cpp`: `i_gpu_start = max(n_layer + 1 − n_gpu_layers, 0)`; layer
//!   index `n_layer` is the output layer). `token_embd` always stays in RAM. A model without
//!   `output.weight` gets a copy of `token_embd` as its output layer. `-ngl` defaults to `-1`
//!   ("auto": every layer, then `--fit`; `common/common.h`).
//! - KV cache: per layer on the layer's device, `n_ctx` cells of
//!   `ggml_row_size(type_k, n_embd_head_k × n_head_kv) + ggml_row_size(type_v, n_embd_head_v ×
//!   n_head_kv)` (`src/llama-kv-cache.cpp`, `src/llama-hparams.cpp`), `n_ctx` rounded up to a
//!   multiple of 256 (`src/llama-context.cpp`: `GGML_PAD(cparams.n_ctx, 256)`), `n_ctx` 0
//!   meaning the model's `context_length`. Sliding-window layers hold `n_swa + n_ubatch` cells
//!   (`src/llama-kv-cache-iswa.cpp`, `--swa-full` off). `--cache-type-k/v` default `f16`.
//! - compute buffer: the worst-case graph of one physical batch (`-ub`, default 512, capped by
//!   `-b` 2048 and `n_ctx`), reserved by `ggml_gallocr`; llama.cpp prints it as
//!   `CUDA0 compute buffer size`. oomdoc estimates it from the graph's largest live tensors.
//! - `--fit on` (the default) leaves 1024 MiB free per GPU (`fit_params_target`), lowers the
//!   context to no less than 4096 (`fit_params_min_ctx`) when `-c` is not given, then offloads
//!   fewer layers when `-ngl` is not given (`llama_params_fit` in `src/llama.cpp`).

use crate::model::bytes::MIB;
use crate::model::cards::Card;
use crate::model::checkpoint::{
    Allowance, Alternative, Budget, FitVerdict, LlamaCppPlacement, ModelShape,
};
use crate::model::{Bytes, Source};
use crate::parse::checkpoint::gguf::GgufHeader;
use crate::parse::checkpoint::hf_config::LayerKind;

use super::{card_budget, GpuBudget, CUDA_CONTEXT_BASIS, CUDA_CONTEXT_BYTES};

/// KV cells are allocated in multiples of this (`src/llama-context.cpp`).
pub const CTX_PAD: u64 = 256;
/// What `--fit on` keeps free on each GPU (`common/common.h` `fit_params_target`).
pub const FIT_MARGIN_BYTES: u64 = 1024 * MIB;
/// The smallest context `--fit` lowers to (`common/common.h` `fit_params_min_ctx`).
pub const FIT_MIN_CTX: u64 = 4096;
/// `-b` default (`common/common.h` `n_batch`).
pub const DEFAULT_BATCH: u64 = 2048;
/// `-ub` default (`common/common.h` `n_ubatch`).
pub const DEFAULT_UBATCH: u64 = 512;

/// `--cache-type-k` / `--cache-type-v`: the types llama.cpp accepts for its KV cache
/// (`common/arg.cpp` `kv_cache_types`), with ggml's block sizes (`ggml/src/ggml-common.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheType {
    /// 4 bytes.
    F32,
    /// 2 bytes, the default.
    F16,
    /// 2 bytes.
    Bf16,
    /// 34 bytes per 32.
    Q8_0,
    /// 18 bytes per 32.
    Q4_0,
    /// 20 bytes per 32.
    Q4_1,
    /// 18 bytes per 32.
    Iq4Nl,
    /// 22 bytes per 32.
    Q5_0,
    /// 24 bytes per 32.
    Q5_1,
}

impl CacheType {
    /// The name llama.cpp prints.
    pub fn name(self) -> &'static str {
        match self {
            CacheType::F32 => "f32",
            CacheType::F16 => "f16",
            CacheType::Bf16 => "bf16",
            CacheType::Q8_0 => "q8_0",
            CacheType::Q4_0 => "q4_0",
            CacheType::Q4_1 => "q4_1",
            CacheType::Iq4Nl => "iq4_nl",
            CacheType::Q5_0 => "q5_0",
            CacheType::Q5_1 => "q5_1",
        }
    }

    /// (elements, bytes) per block.
    fn block(self) -> (u64, u64) {
        match self {
            CacheType::F32 => (1, 4),
            CacheType::F16 | CacheType::Bf16 => (1, 2),
            CacheType::Q8_0 => (32, 34),
            CacheType::Q4_0 | CacheType::Iq4Nl => (32, 18),
            CacheType::Q4_1 => (32, 20),
            CacheType::Q5_0 => (32, 22),
            CacheType::Q5_1 => (32, 24),
        }
    }

    /// A block type: llama.cpp needs flash attention for it in the V cache.
    pub fn is_quantized(self) -> bool {
        self.block().0 > 1
    }

    /// `ggml_row_size`: bytes of one row of `elements`.
    fn row_bytes(self, elements: u64) -> u64 {
        let (block_elements, block_bytes) = self.block();
        elements
            .div_ceil(block_elements)
            .saturating_mul(block_bytes)
    }
}

/// `--flash-attn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashAttn {
    /// llama.cpp's default: on where the backend supports it (CUDA does).
    Auto,
    /// On.
    On,
    /// Off: the attention scores of a whole batch are materialised.
    Off,
}

/// The llama.cpp options of `oomdoc fit` for a GGUF file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlamaCppOptions {
    /// `-c`; `None` is llama.cpp's 0: the model's `context_length`.
    pub ctx_size: Option<u64>,
    /// `-ngl`; `None` is llama.cpp's default, every layer.
    pub n_gpu_layers: Option<u64>,
    /// `--cache-type-k`.
    pub cache_type_k: CacheType,
    /// `--cache-type-v`.
    pub cache_type_v: CacheType,
    /// `-b`.
    pub batch_size: u64,
    /// `-ub`.
    pub ubatch_size: u64,
    /// `--flash-attn`.
    pub flash_attn: FlashAttn,
}

impl Default for LlamaCppOptions {
    fn default() -> Self {
        LlamaCppOptions {
            ctx_size: None,
            n_gpu_layers: None,
            cache_type_k: CacheType::F16,
            cache_type_v: CacheType::F16,
            batch_size: DEFAULT_BATCH,
            ubatch_size: DEFAULT_UBATCH,
            flash_attn: FlashAttn::Auto,
        }
    }
}

/// One repeating layer: weight bytes and its KV shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layer {
    weights: u64,
    kind: LayerKind,
    kv_heads: u64,
}

/// The model as llama.cpp sees it.
#[derive(Debug, Clone)]
pub(super) struct Model {
    layers: Vec<Layer>,
    /// `token_embd` (stays in RAM).
    input_bytes: u64,
    /// Output layer: `output.weight` (or a copy of `token_embd`), `output_norm`, the rest.
    output_bytes: u64,
    tied: bool,
    key_length: u64,
    value_length: u64,
    window: Option<u64>,
    n_ctx_train: Option<u64>,
    vocab: u64,
    embedding: u64,
    feed_forward: u64,
    heads: u64,
}

/// The layer index of a `blk.N.` tensor.
fn block_index(name: &str) -> Option<usize> {
    name.strip_prefix("blk.")?.split('.').next()?.parse().ok()
}

impl Model {
    /// From the GGUF header(s) and the shape `gguf_shape` read: per-layer KV heads and kinds,
    /// key and value lengths per head.
    pub(super) fn new(
        headers: &[&GgufHeader],
        shape: &ModelShape,
        kv_layers: &[(LayerKind, u64, u64)],
        key_value: (u64, u64),
        window: Option<u64>,
    ) -> Model {
        let mut layers: Vec<Layer> = kv_layers
            .iter()
            .map(|(kind, heads, _)| Layer {
                weights: 0,
                kind: *kind,
                kv_heads: *heads,
            })
            .collect();
        let mut input_bytes = 0u64;
        let mut output_bytes = 0u64;
        let mut has_output = false;
        for tensor in headers.iter().flat_map(|header| &header.tensors) {
            match block_index(&tensor.name) {
                Some(index) if index < layers.len() => {
                    layers[index].weights = layers[index].weights.saturating_add(tensor.bytes);
                }
                _ if tensor.name.starts_with("token_embd.") => {
                    input_bytes = input_bytes.saturating_add(tensor.bytes);
                }
                _ => {
                    has_output |= tensor.name == "output.weight";
                    output_bytes = output_bytes.saturating_add(tensor.bytes);
                }
            }
        }
        let tied = !has_output && input_bytes > 0;
        if tied {
            output_bytes = output_bytes.saturating_add(input_bytes);
        }
        let embedding = shape.hidden_size.unwrap_or(0);
        Model {
            layers,
            input_bytes,
            output_bytes,
            tied,
            key_length: key_value.0,
            value_length: key_value.1,
            window,
            n_ctx_train: shape.max_position_embeddings,
            vocab: shape.vocab_size.unwrap_or(0),
            embedding,
            feed_forward: shape
                .intermediate_size
                .unwrap_or(embedding.saturating_mul(4)),
            heads: shape.attention_heads.unwrap_or(0),
        }
    }

    fn layer_count(&self) -> u64 {
        self.layers.len() as u64
    }

    /// KV bytes of one cell of one layer.
    fn cell_bytes(&self, layer: &Layer, options: &LlamaCppOptions) -> u64 {
        if layer.kind == LayerKind::NoKv {
            return 0;
        }
        let key = options
            .cache_type_k
            .row_bytes(layer.kv_heads.saturating_mul(self.key_length));
        let value = options
            .cache_type_v
            .row_bytes(layer.kv_heads.saturating_mul(self.value_length));
        key.saturating_add(value)
    }

    /// KV bytes per token of context over every layer (the `KV cache` section).
    pub(super) fn bytes_per_token(&self, options: &LlamaCppOptions) -> (u64, u64) {
        let mut full = 0u64;
        let mut sliding = 0u64;
        for layer in &self.layers {
            let bytes = self.cell_bytes(layer, options);
            match layer.kind {
                LayerKind::Sliding => sliding = sliding.saturating_add(bytes),
                _ => full = full.saturating_add(bytes),
            }
        }
        (full, sliding)
    }
}

/// What a configuration puts on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Usage {
    weights: u64,
    kv: u64,
    compute: u64,
    gpu_layers: u64,
    output_on_gpu: bool,
    n_ctx: u64,
    swa_cells: Option<u64>,
    n_ubatch: u64,
}

impl Usage {
    fn total(&self) -> u64 {
        self.weights
            .saturating_add(self.kv)
            .saturating_add(self.compute)
            .saturating_add(CUDA_CONTEXT_BYTES)
    }
}

fn pad(value: u64) -> u64 {
    value.div_ceil(CTX_PAD).saturating_mul(CTX_PAD).max(CTX_PAD)
}

fn flash(options: &LlamaCppOptions) -> bool {
    options.flash_attn != FlashAttn::Off
}

/// The compute buffer of one physical batch, estimated from the largest tensors alive at
/// once in llama.cpp's graph (f32 activations): the logits (`n_vocab × n_ubatch`) with the
/// last hidden state, the FFN (`gate` and `up` of `n_ff`), and the attention: without flash
/// attention the scores `KQ` (`n_ctx × n_ubatch × n_head`, f32) with the f32 mask
/// (`n_ctx × n_ubatch`) and four hidden states; with flash attention only the f16 mask and the
/// hidden states. `ggml_gallocr` reuses memory between them, so the largest, not the sum, is
/// the estimate. The flash-attention-off formula reproduces llama.cpp's printed
/// `CUDA0 compute buffer size` exactly for Mistral-7B at `-c 2048` and `-c 32768` (see the
/// test); the others are not checked against a log.
fn compute_bytes(model: &Model, n_ctx: u64, n_ubatch: u64, flash_attn: bool) -> u64 {
    let f32_rows = |width: u64| width.saturating_mul(n_ubatch).saturating_mul(4);
    let hidden = f32_rows(model.embedding);
    let logits = f32_rows(model.vocab).saturating_add(hidden.saturating_mul(2));
    let ffn = f32_rows(model.feed_forward)
        .saturating_mul(2)
        .saturating_add(hidden.saturating_mul(2));
    let attention = if flash_attn {
        (f32_rows(n_ctx) / 2).saturating_add(hidden.saturating_mul(4))
    } else {
        f32_rows(n_ctx.saturating_mul(model.heads))
            .saturating_add(f32_rows(n_ctx))
            .saturating_add(hidden.saturating_mul(4))
    };
    logits.max(ffn).max(attention)
}

/// What `-ngl` value, `-c` and the options put on the GPU.
fn usage(model: &Model, options: &LlamaCppOptions, ngl: u64, n_ctx_asked: u64) -> Usage {
    let layer_count = model.layer_count();
    let n_ctx = pad(n_ctx_asked);
    let n_ubatch = options
        .ubatch_size
        .min(options.batch_size)
        .min(n_ctx)
        .max(1);
    let swa_cells = model
        .window
        .filter(|_| model.layers.iter().any(|l| l.kind == LayerKind::Sliding))
        .map(|window| pad(window.saturating_add(n_ubatch)).min(n_ctx));
    let output_on_gpu = ngl >= 1;
    let gpu_layers = ngl.saturating_sub(1).min(layer_count);
    let first_gpu_layer = layer_count - gpu_layers;
    let mut weights = if output_on_gpu { model.output_bytes } else { 0 };
    let mut kv = 0u64;
    for layer in model.layers.iter().skip(first_gpu_layer as usize) {
        weights = weights.saturating_add(layer.weights);
        let cells = match layer.kind {
            LayerKind::Sliding => swa_cells.unwrap_or(n_ctx),
            _ => n_ctx,
        };
        kv = kv.saturating_add(model.cell_bytes(layer, options).saturating_mul(cells));
    }
    Usage {
        weights,
        kv,
        compute: compute_bytes(model, n_ctx, n_ubatch, flash(options)),
        gpu_layers,
        output_on_gpu,
        n_ctx,
        swa_cells,
        n_ubatch,
    }
}

/// The longest context (a multiple of 256, up to `cap`) whose usage stays within `limit`.
fn longest_context(
    model: &Model,
    options: &LlamaCppOptions,
    ngl: u64,
    limit: u64,
    cap: u64,
) -> u64 {
    let fits = |n_ctx: u64| usage(model, options, ngl, n_ctx).total() <= limit;
    if !fits(CTX_PAD) {
        return 0;
    }
    let (mut low, mut high) = (1u64, (cap / CTX_PAD).max(1));
    if fits(high * CTX_PAD) {
        return high * CTX_PAD;
    }
    // fits(low × 256) and not fits(high × 256).
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if fits(middle * CTX_PAD) {
            low = middle;
        } else {
            high = middle;
        }
    }
    low * CTX_PAD
}

/// The most `-ngl` (0 to every layer + output) whose usage at `n_ctx` stays within `limit`.
fn most_layers(model: &Model, options: &LlamaCppOptions, n_ctx: u64, limit: u64) -> Option<u64> {
    (0..=model.layer_count() + 1)
        .rev()
        .find(|ngl| usage(model, options, *ngl, n_ctx).total() <= limit)
}

/// The budget, verdict and alternatives of a GGUF file on one GPU.
pub(super) fn evaluate(
    model: &Model,
    options: &LlamaCppOptions,
    gpu: &GpuBudget,
    cards: &[Card],
    limitations: &mut Vec<String>,
) -> (Budget, FitVerdict, Vec<Alternative>) {
    let layer_count = model.layer_count();
    let all = layer_count + 1;
    let ngl = options.n_gpu_layers.map_or(all, |ngl| ngl.min(all));
    let (n_ctx_asked, n_ctx_source) = match (options.ctx_size, model.n_ctx_train) {
        (Some(ctx), _) => (ctx, Source::User),
        (None, Some(train)) => (train, Source::Checkpoint),
        (None, None) => {
            limitations
                .push("the GGUF metadata has no `context_length`: `-c 4096` assumed".to_string());
            (FIT_MIN_CTX, Source::Assumption)
        }
    };
    if let (Some(ctx), Some(train)) = (options.ctx_size, model.n_ctx_train) {
        if ctx > train {
            limitations.push(format!(
                "`-c {ctx}` is above the model's `context_length` {train}: llama.cpp warns of a \
                 possible training context overflow"
            ));
        }
    }
    if options.flash_attn == FlashAttn::Auto {
        limitations.push(
            "flash attention assumed on (`--flash-attn auto` turns it on for CUDA); \
             `--flash-attn off` budgets the attention scores of a whole batch"
                .to_string(),
        );
    }
    let total = gpu.total.get();
    let used = usage(model, options, ngl, n_ctx_asked);
    let needed = used.total();
    let fits = needed <= total;
    let before_kv = needed - used.kv;
    let kv_budget = total.saturating_sub(before_kv);
    let cap = model.n_ctx_train.unwrap_or(n_ctx_asked).max(n_ctx_asked);
    let max_kv_tokens = longest_context(model, options, ngl, total, 1 << 24);
    let longest = max_kv_tokens.min(pad(cap));
    let per_token_gpu =
        usage(model, options, ngl, CTX_PAD * 2).kv - usage(model, options, ngl, CTX_PAD).kv;
    let per_token_gpu = per_token_gpu / CTX_PAD;
    let summary = if fits {
        format!(
            "fits: {} of {all} layers and {} KV cells on the GPU leave {} free",
            ngl,
            used.n_ctx,
            Bytes(total - needed)
        )
    } else if before_kv > total {
        format!(
            "does not fit: weights {} + compute buffer {} + CUDA context {} exceed the GPU's {} \
             by {} before any KV cache",
            Bytes(used.weights),
            Bytes(used.compute),
            Bytes(CUDA_CONTEXT_BYTES),
            Bytes(total),
            Bytes(before_kv - total)
        )
    } else {
        format!(
            "does not fit: {} KV cells need {} of KV cache but {} is left; the longest context \
             that fits is {longest} tokens",
            used.n_ctx,
            Bytes(used.kv),
            Bytes(kv_budget)
        )
    };
    let ram = model.input_bytes.saturating_add(
        model
            .layers
            .iter()
            .take((layer_count - used.gpu_layers) as usize)
            .map(|layer| layer.weights)
            .fold(0u64, u64::saturating_add),
    ) + if used.output_on_gpu {
        0
    } else {
        model.output_bytes
    };
    let placement = LlamaCppPlacement {
        layers: layer_count,
        n_gpu_layers: options.n_gpu_layers,
        gpu_layers: used.gpu_layers,
        output_on_gpu: used.output_on_gpu,
        weights_in_ram_bytes: Bytes(ram),
        n_ctx_requested: n_ctx_asked,
        n_ctx: used.n_ctx,
        sliding_window_cells: used.swa_cells,
        kv_on_gpu_bytes: Bytes(used.kv),
        cache_type_k: options.cache_type_k.name().to_string(),
        cache_type_v: options.cache_type_v.name().to_string(),
        n_ubatch: used.n_ubatch,
        flash_attn: flash(options),
        fit_margin_bytes: Bytes(FIT_MARGIN_BYTES),
    };
    let tied = if model.tied {
        " (no `output.weight`: llama.cpp copies `token_embd` as the output layer)"
    } else {
        ""
    };
    let budget = Budget {
        gpu: gpu.name.clone(),
        gpu_total_bytes: gpu.total,
        gpu_total_source: gpu.source,
        gpu_total_basis: gpu.basis.clone(),
        gpu_memory_utilization: 1.0,
        usable_bytes: gpu.total,
        tensor_parallel_size: 1,
        weights_per_gpu_bytes: Bytes(used.weights),
        replicated: format!(
            "`token_embd` ({}) stays in RAM; {} of {layer_count} repeating layers{} on the GPU{tied}",
            Bytes(model.input_bytes),
            used.gpu_layers,
            if used.output_on_gpu {
                " and the output layer"
            } else {
                ""
            }
        ),
        allowances: vec![
            Allowance {
                name: "compute_buffer".to_string(),
                bytes: Bytes(used.compute),
                source: Source::Assumption,
                basis: format!(
                    "estimate of llama.cpp's `CUDA0 compute buffer size` for -ub {} tokens{}: \
                     the largest of logits (vocab {}), FFN ({}) and attention tensors, f32",
                    used.n_ubatch,
                    if flash(options) {
                        ", flash attention on"
                    } else {
                        ", flash attention off"
                    },
                    model.vocab,
                    model.feed_forward
                ),
            },
            Allowance {
                name: "cuda_context".to_string(),
                bytes: Bytes(CUDA_CONTEXT_BYTES),
                source: Source::Assumption,
                basis: CUDA_CONTEXT_BASIS.to_string(),
            },
        ],
        kv_budget_bytes: Bytes(kv_budget),
        max_model_len: used.n_ctx,
        max_model_len_source: n_ctx_source,
        max_num_seqs: 1,
        pipeline_parallel_size: 1,
        engine: "llama.cpp".to_string(),
        llama_cpp: Some(placement),
    };
    let shortfall = needed.saturating_sub(total);
    let verdict = FitVerdict {
        fits,
        max_kv_tokens,
        kv_bytes_per_token_per_gpu: Bytes(per_token_gpu),
        kv_bytes_per_sequence: Bytes(used.kv),
        max_concurrency: if used.kv == 0 {
            0.0
        } else {
            ((kv_budget as f64 / used.kv as f64) * 100.0).floor() / 100.0
        },
        max_model_len_that_fits: longest,
        shortfall_bytes: Bytes(shortfall),
        summary,
    };
    let alternatives = if fits {
        Vec::new()
    } else {
        alternatives(model, options, gpu, cards, ngl, n_ctx_asked)
    };
    (budget, verdict, alternatives)
}

fn alternatives(
    model: &Model,
    options: &LlamaCppOptions,
    gpu: &GpuBudget,
    cards: &[Card],
    ngl: u64,
    n_ctx: u64,
) -> Vec<Alternative> {
    let total = gpu.total.get();
    let limit = total.saturating_sub(FIT_MARGIN_BYTES);
    let all = model.layer_count() + 1;
    let mut list = Vec::new();
    let alternative = |kind: &str, description: String, usage: Usage| Alternative {
        kind: kind.to_string(),
        description,
        weights_per_gpu_bytes: Bytes(usage.weights),
        max_kv_tokens: usage.n_ctx,
    };
    // llama.cpp's own `--fit`, when neither -c nor -ngl is set.
    let mut fit_context = None;
    if options.ctx_size.is_none() && options.n_gpu_layers.is_none() {
        let floor = FIT_MIN_CTX.min(n_ctx);
        let context = longest_context(model, options, all, limit, n_ctx);
        if context >= floor {
            fit_context = Some(context);
            list.push(alternative(
                "llama_cpp_fit",
                format!(
                    "llama.cpp's automatic fit (`--fit on`, the default) lowers the context to \
                     about `-c {context}` and keeps every layer on the GPU"
                ),
                usage(model, options, all, context),
            ));
        } else if let Some(layers) = most_layers(model, options, floor, limit) {
            list.push(alternative(
                "llama_cpp_fit",
                format!(
                    "llama.cpp's automatic fit (`--fit on`, the default) lowers the context to \
                     `-c {floor}` and offloads about {layers} of {all} layers (`-ngl {layers}`); \
                     the rest run on the CPU"
                ),
                usage(model, options, layers, floor),
            ));
        }
    }
    let context = longest_context(model, options, ngl, limit, n_ctx);
    if context > 0 && context < pad(n_ctx) && fit_context != Some(context) {
        list.push(alternative(
            "ctx_size",
            format!(
                "`-c {context}`: the longest context with these layers on the GPU, leaving \
                 llama.cpp's 1 GiB fit margin"
            ),
            usage(model, options, ngl, context),
        ));
    }
    if let Some(layers) = most_layers(model, options, n_ctx, limit).filter(|l| *l < ngl) {
        list.push(alternative(
            "n_gpu_layers",
            format!(
                "`-ngl {layers}`: {layers} of {all} layers on the GPU at `-c {n_ctx}` (the output \
                 layer counts as one); the rest stay in RAM and run on the CPU, slower"
            ),
            usage(model, options, layers, n_ctx),
        ));
    }
    if options.cache_type_k == CacheType::F16 && options.cache_type_v == CacheType::F16 {
        let q8 = LlamaCppOptions {
            cache_type_k: CacheType::Q8_0,
            cache_type_v: CacheType::Q8_0,
            flash_attn: if options.flash_attn == FlashAttn::Off {
                FlashAttn::On
            } else {
                options.flash_attn
            },
            ..*options
        };
        let used = usage(model, &q8, ngl, n_ctx);
        if used.total() <= total {
            list.push(alternative(
                "kv_cache_dtype",
                "`--cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on`: 34 bytes per 32 values, \
                 53 % of the f16 KV cache"
                    .to_string(),
                used,
            ));
        }
    }
    if let Some(card) = cards.iter().find(|card| {
        card.total_bytes > gpu.total
            && usage(model, options, all, n_ctx).total() <= card.total_bytes.get()
    }) {
        let budget = card_budget(card);
        list.push(alternative(
            "card",
            format!(
                "a larger card: {} ({}) with every layer on the GPU",
                card.name, budget.total
            ),
            usage(model, options, all, n_ctx),
        ));
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Llama-3-8B-like model: 32 layers of 100 MiB, 8 KV heads of 128.
    fn model() -> Model {
        Model {
            layers: vec![
                Layer {
                    weights: 100 * MIB,
                    kind: LayerKind::Full,
                    kv_heads: 8,
                };
                32
            ],
            input_bytes: 300 * MIB,
            output_bytes: 400 * MIB,
            tied: false,
            key_length: 128,
            value_length: 128,
            window: None,
            n_ctx_train: Some(131_072),
            vocab: 128_256,
            embedding: 4096,
            feed_forward: 14_336,
            heads: 32,
        }
    }

    #[test]
    fn offload_starts_with_the_output_layer() {
        let model = model();
        let options = LlamaCppOptions::default();
        let none = usage(&model, &options, 0, 8192);
        assert_eq!((none.weights, none.kv, none.output_on_gpu), (0, 0, false));
        let one = usage(&model, &options, 1, 8192);
        assert_eq!((one.weights, one.gpu_layers, one.kv), (400 * MIB, 0, 0));
        let all = usage(&model, &options, 33, 8192);
        assert_eq!(all.weights, 400 * MIB + 32 * 100 * MIB);
        // 32 layers × 8 heads × (128 + 128) × 2 B = 128 KiB per cell.
        assert_eq!(all.kv, 8192 * 131_072);
        assert_eq!(usage(&model, &options, 99, 8192), all);
    }

    #[test]
    fn context_is_padded_and_quantized_rows_use_blocks() {
        let model = model();
        let options = LlamaCppOptions {
            cache_type_k: CacheType::Q8_0,
            cache_type_v: CacheType::Q4_0,
            ..LlamaCppOptions::default()
        };
        let used = usage(&model, &options, 33, 35_000);
        assert_eq!(used.n_ctx, 35_072);
        // Per layer: 1024 elements → 32 blocks × 34 (K) + 32 × 18 (V) = 1664 bytes per cell.
        assert_eq!(used.kv, 35_072 * 32 * 1664);
    }

    #[test]
    fn compute_buffer_is_the_largest_live_tensor() {
        let model = model();
        // Flash attention: the logits dominate, 128256 × 512 × 4 B = 250.5 MiB.
        let with_flash = compute_bytes(&model, 8192, 512, true);
        assert_eq!(with_flash, (128_256 + 2 * 4096) * 512 * 4);
        // Without it the attention scores grow with the context: 32768 × 512 × 32 × 4 B.
        let without = compute_bytes(&model, 32_768, 512, false);
        assert_eq!(without, (32_768 * 32 + 32_768 + 4 * 4096) * 512 * 4);
    }

    /// llama.cpp's own log (fedora-copr/logdetective pull request 106, January 2025: its
    /// default model Mistral-7B-Instruct-v0.2 GGUF, `n_ubatch = 512`, `flash_attn = 0`):
    /// `CUDA0 compute buffer size = 164.00 MiB` at `n_ctx = 2048` and `2144.00 MiB` at
    /// `n_ctx = 32768`, with `KV self size = 4096.00 MiB` at 32768.
    #[test]
    fn matches_a_published_llama_cpp_log() {
        let mistral = Model {
            vocab: 32_000,
            feed_forward: 14_336,
            ..model()
        };
        assert_eq!(compute_bytes(&mistral, 2048, 512, false), 164 * MIB);
        assert_eq!(compute_bytes(&mistral, 32_768, 512, false), 2144 * MIB);
        let options = LlamaCppOptions {
            flash_attn: FlashAttn::Off,
            ..LlamaCppOptions::default()
        };
        assert_eq!(usage(&mistral, &options, 33, 32_768).kv, 4096 * MIB);
    }

    #[test]
    fn searches_find_the_edges() {
        let model = model();
        let options = LlamaCppOptions::default();
        let limit = 8 * 1024 * MIB;
        let context = longest_context(&model, &options, 33, limit, 131_072);
        assert!(usage(&model, &options, 33, context).total() <= limit);
        assert!(usage(&model, &options, 33, context + CTX_PAD).total() > limit);
        let layers = most_layers(&model, &options, 131_072, limit).unwrap();
        assert!(usage(&model, &options, layers, 131_072).total() <= limit);
        assert!(usage(&model, &options, layers + 1, 131_072).total() > limit);
    }
}
