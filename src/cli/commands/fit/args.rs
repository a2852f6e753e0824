//! The arguments of `oomdoc fit` and their checks: each engine's flags, counts that must be
//! positive, llama.cpp's own refusals, and a `--gpu` name that is not one card of the table.

use clap::{Args, ValueEnum};

use crate::analyze::fit::{self, CacheType, FitInput, FlashAttn, KvCacheDtype, LlamaCppOptions};
use crate::cli::args::OutputArgs;
use crate::error::HintedError;
use crate::model::bytes::parse_size_arg;
use crate::model::{cards, Bytes};
use std::path::PathBuf;

/// Arguments of `oomdoc fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// A model directory (config.json + safetensors), a `.safetensors` or `.gguf` file, or an
    /// `org/name` model id in the local Hugging Face cache
    #[arg(value_name = "PATH")]
    pub path: String,
    /// Memory of one GPU with its unit: `80GiB`, `23.5GiB` (binary) or `141GB` (decimal); a
    /// number without a unit is refused
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg, conflicts_with = "gpu")]
    pub gpu_memory: Option<Bytes>,
    /// A GPU class from oomdoc's table: t4, l4, a10g, rtx3090, rtx4090, rtx5090, a100-40gb,
    /// l40s, h100, a100-80gb, h100-nvl, h200, b200, mi300x; nvidia-smi names work too, and a
    /// name that fits several (`a100`) is refused with the list
    #[arg(long, value_name = "NAME")]
    pub gpu: Option<String>,
    /// Read GPU facts from FILE instead of NVML when neither `--gpu` nor `--gpu-memory` is
    /// given (`nvidia-smi -q -x` XML or an `oomdoc gpus` recording)
    #[arg(long, value_name = "FILE", env = "OOMDOC_GPU_FROM")]
    pub gpu_from: Option<PathBuf>,
    /// Fraction of GPU memory the engine may use [default: 0.9]
    #[arg(
        long,
        value_name = "FRACTION",
        help_heading = "vLLM (safetensors checkpoints)"
    )]
    pub gpu_memory_utilization: Option<f64>,
    /// Context length to budget for [default: the model's own]
    #[arg(
        long,
        value_name = "TOKENS",
        help_heading = "vLLM (safetensors checkpoints)"
    )]
    pub max_model_len: Option<u64>,
    /// GPUs the model is split over; it must divide the attention heads [default: 1]
    #[arg(
        long,
        value_name = "N",
        help_heading = "vLLM (safetensors checkpoints)"
    )]
    pub tensor_parallel_size: Option<u64>,
    /// GPUs the layers are split over, in stages of whole layers [default: 1]
    #[arg(
        long,
        value_name = "N",
        help_heading = "vLLM (safetensors checkpoints)"
    )]
    pub pipeline_parallel_size: Option<u64>,
    /// Sequences decoded at once, for the sampler's logits [default: 256]
    #[arg(
        long,
        value_name = "N",
        help_heading = "vLLM (safetensors checkpoints)"
    )]
    pub max_num_seqs: Option<u64>,
    /// Tokens per forward pass for the activation estimate [default: 8192]
    #[arg(
        long,
        value_name = "N",
        help_heading = "vLLM (safetensors checkpoints)"
    )]
    pub max_num_batched_tokens: Option<u64>,
    /// KV cache element type [default: auto, the model dtype]
    #[arg(long, value_enum, help_heading = "vLLM (safetensors checkpoints)")]
    pub kv_cache_dtype: Option<KvDtypeArg>,
    /// llama.cpp `-c`: context size in tokens [default: the model's `context_length`]
    #[arg(long, value_name = "TOKENS", help_heading = "llama.cpp (GGUF files)")]
    pub ctx_size: Option<u64>,
    /// llama.cpp `-ngl`: layers on the GPU, the output layer first [default: all]
    #[arg(
        long,
        value_name = "N",
        visible_aliases = ["gpu-layers", "ngl"],
        help_heading = "llama.cpp (GGUF files)"
    )]
    pub n_gpu_layers: Option<u64>,
    /// llama.cpp `-ctk`: K cache type [default: f16]
    #[arg(long, value_enum, help_heading = "llama.cpp (GGUF files)")]
    pub cache_type_k: Option<CacheTypeArg>,
    /// llama.cpp `-ctv`: V cache type; a quantized one needs flash attention [default: f16]
    #[arg(long, value_enum, help_heading = "llama.cpp (GGUF files)")]
    pub cache_type_v: Option<CacheTypeArg>,
    /// llama.cpp `-b`: logical batch size [default: 2048]
    #[arg(long, value_name = "N", help_heading = "llama.cpp (GGUF files)")]
    pub batch_size: Option<u64>,
    /// llama.cpp `-ub`: physical batch size, which sizes the compute buffer [default: 512]
    #[arg(long, value_name = "N", help_heading = "llama.cpp (GGUF files)")]
    pub ubatch_size: Option<u64>,
    /// llama.cpp `-fa`: flash attention [default: auto, on for CUDA]
    #[arg(long, value_enum, help_heading = "llama.cpp (GGUF files)")]
    pub flash_attn: Option<FlashAttnArg>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--cache-type-k` / `--cache-type-v` values, as llama.cpp spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheTypeArg {
    /// 32-bit float.
    F32,
    /// 16-bit float (llama.cpp's default).
    F16,
    /// bfloat16.
    Bf16,
    /// 8-bit blocks (34 bytes per 32).
    #[value(name = "q8_0")]
    Q8_0,
    /// 4-bit blocks (18 bytes per 32).
    #[value(name = "q4_0")]
    Q4_0,
    /// 4-bit blocks with a minimum (20 bytes per 32).
    #[value(name = "q4_1")]
    Q4_1,
    /// 4-bit non-linear blocks (18 bytes per 32).
    #[value(name = "iq4_nl")]
    Iq4Nl,
    /// 5-bit blocks (22 bytes per 32).
    #[value(name = "q5_0")]
    Q5_0,
    /// 5-bit blocks with a minimum (24 bytes per 32).
    #[value(name = "q5_1")]
    Q5_1,
}

impl From<CacheTypeArg> for CacheType {
    fn from(value: CacheTypeArg) -> Self {
        match value {
            CacheTypeArg::F32 => CacheType::F32,
            CacheTypeArg::F16 => CacheType::F16,
            CacheTypeArg::Bf16 => CacheType::Bf16,
            CacheTypeArg::Q8_0 => CacheType::Q8_0,
            CacheTypeArg::Q4_0 => CacheType::Q4_0,
            CacheTypeArg::Q4_1 => CacheType::Q4_1,
            CacheTypeArg::Iq4Nl => CacheType::Iq4Nl,
            CacheTypeArg::Q5_0 => CacheType::Q5_0,
            CacheTypeArg::Q5_1 => CacheType::Q5_1,
        }
    }
}

/// `--flash-attn` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FlashAttnArg {
    /// On where the backend supports it (CUDA does).
    Auto,
    /// On.
    On,
    /// Off.
    Off,
}

impl From<FlashAttnArg> for FlashAttn {
    fn from(value: FlashAttnArg) -> Self {
        match value {
            FlashAttnArg::Auto => FlashAttn::Auto,
            FlashAttnArg::On => FlashAttn::On,
            FlashAttnArg::Off => FlashAttn::Off,
        }
    }
}

/// `--kv-cache-dtype` values, as vLLM spells them (llama.cpp's are `--cache-type-k/-v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KvDtypeArg {
    /// The model dtype.
    Auto,
    /// 8-bit float (E4M3 on CUDA).
    Fp8,
    /// 8-bit float E4M3.
    #[value(name = "fp8_e4m3")]
    Fp8E4m3,
    /// 8-bit float E5M2.
    #[value(name = "fp8_e5m2")]
    Fp8E5m2,
    /// bfloat16.
    #[value(alias = "bfloat16")]
    Bf16,
    /// float16.
    #[value(aliases = ["float16", "half", "f16"])]
    Fp16,
    /// float32.
    #[value(aliases = ["float32", "float", "f32"])]
    Fp32,
    /// int8.
    Int8,
    /// vLLM's DeepSeek V3.2 FlashMLA layout (656 bytes per token and layer).
    #[value(name = "fp8_ds_mla")]
    Fp8DsMla,
}

impl From<KvDtypeArg> for KvCacheDtype {
    fn from(value: KvDtypeArg) -> Self {
        match value {
            KvDtypeArg::Auto => KvCacheDtype::Auto,
            KvDtypeArg::Fp8 => KvCacheDtype::Fp8,
            KvDtypeArg::Fp8E4m3 => KvCacheDtype::Fp8E4m3,
            KvDtypeArg::Fp8E5m2 => KvCacheDtype::Fp8E5m2,
            KvDtypeArg::Bf16 => KvCacheDtype::Bf16,
            KvDtypeArg::Fp16 => KvCacheDtype::Fp16,
            KvDtypeArg::Fp32 => KvCacheDtype::Fp32,
            KvDtypeArg::Int8 => KvCacheDtype::Int8,
            KvDtypeArg::Fp8DsMla => KvCacheDtype::Fp8DsMla,
        }
    }
}

/// The usage error for a `--gpu` name that is not exactly one card of the table.
pub(super) fn gpu_name_error(name: &str, error: cards::LookupError) -> HintedError {
    let list = |cards: &[&cards::Card]| {
        cards
            .iter()
            .map(|card| format!("\n  {}", card.describe()))
            .collect::<String>()
    };
    let other = "or give the memory itself with `--gpu-memory SIZE`";
    match error {
        cards::LookupError::Ambiguous(candidates) => {
            let first = candidates.first().map_or("", |card| card.key);
            HintedError::new(
                format!(
                    "`--gpu {name}` could mean {} GPU classes of different memory:{}",
                    candidates.len(),
                    list(&candidates)
                ),
                format!(
                    "name one, e.g. `--gpu {first}` (PCIe and SXM have the same memory), or give \
                     `--gpu-memory SIZE`"
                ),
            )
        }
        cards::LookupError::NoSuchMemory { memory_gb, family } => HintedError::new(
            format!(
                "`--gpu {name}`: oomdoc's table has no {memory_gb} GB version of this GPU; it has:{}",
                list(&family)
            ),
            format!("name one of these, {other}"),
        ),
        cards::LookupError::Unknown { near } if !near.is_empty() => HintedError::new(
            format!(
                "unknown GPU class `{name}`; similar names in oomdoc's table:{}",
                list(&near)
            ),
            format!("a similar name is another card, not a spelling: check the memory, {other}"),
        ),
        cards::LookupError::Unknown { .. } => HintedError::new(
            format!("unknown GPU class `{name}`"),
            format!("use one of {}, {other}", cards::keys().join(", ")),
        ),
    }
}

/// Flags that belong to the other engine: vLLM's for a GGUF file, llama.cpp's for a
/// safetensors checkpoint. Each is refused by name rather than silently ignored.
pub(super) fn refuse_other_engine_flags(args: &FitArgs, gguf: bool) -> Result<(), HintedError> {
    let vllm = [
        (
            "--gpu-memory-utilization",
            args.gpu_memory_utilization.is_some(),
        ),
        ("--max-model-len", args.max_model_len.is_some()),
        (
            "--tensor-parallel-size",
            args.tensor_parallel_size.is_some(),
        ),
        (
            "--pipeline-parallel-size",
            args.pipeline_parallel_size.is_some(),
        ),
        ("--max-num-seqs", args.max_num_seqs.is_some()),
        (
            "--max-num-batched-tokens",
            args.max_num_batched_tokens.is_some(),
        ),
        ("--kv-cache-dtype", args.kv_cache_dtype.is_some()),
    ];
    let llama = [
        ("--ctx-size", args.ctx_size.is_some()),
        ("--n-gpu-layers", args.n_gpu_layers.is_some()),
        ("--cache-type-k", args.cache_type_k.is_some()),
        ("--cache-type-v", args.cache_type_v.is_some()),
        ("--batch-size", args.batch_size.is_some()),
        ("--ubatch-size", args.ubatch_size.is_some()),
        ("--flash-attn", args.flash_attn.is_some()),
    ];
    if gguf {
        if let Some((flag, _)) = vllm.iter().find(|(_, given)| *given) {
            return Err(HintedError::new(
                format!(
                    "`{flag}` is a vLLM option, and `{}` is a GGUF file, budgeted as llama.cpp \
                     loads it",
                    args.path
                ),
                "llama.cpp's: `--ctx-size`, `--n-gpu-layers`, `--cache-type-k/-v`, `--ubatch-size`, \
                 `--flash-attn`",
            ));
        }
        return Ok(());
    }
    if let Some((flag, _)) = llama.iter().find(|(_, given)| *given) {
        return Err(HintedError::new(
            format!(
                "`{flag}` is a llama.cpp option for GGUF files, and `{}` is budgeted as vLLM \
                 loads it",
                args.path
            ),
            "vLLM's: `--max-model-len`, `--gpu-memory-utilization`, `--tensor-parallel-size`, \
             `--kv-cache-dtype`",
        ));
    }
    Ok(())
}

/// Counts that must be positive when given.
pub(super) fn check_counts(args: &FitArgs) -> anyhow::Result<()> {
    if let Some(fraction) = args.gpu_memory_utilization {
        if !(fraction > 0.0 && fraction <= 1.0) {
            anyhow::bail!("`--gpu-memory-utilization` must be in (0, 1], not {fraction}");
        }
    }
    for (flag, value) in [
        ("--tensor-parallel-size", args.tensor_parallel_size),
        ("--pipeline-parallel-size", args.pipeline_parallel_size),
        ("--max-model-len", args.max_model_len),
        ("--max-num-seqs", args.max_num_seqs),
        ("--max-num-batched-tokens", args.max_num_batched_tokens),
        ("--batch-size", args.batch_size),
        ("--ubatch-size", args.ubatch_size),
    ] {
        if value == Some(0) {
            anyhow::bail!("`{flag}` must be at least 1");
        }
    }
    if args.gpu_memory == Some(Bytes::ZERO) {
        anyhow::bail!("`--gpu-memory` must be more than 0 bytes");
    }
    Ok(())
}

/// llama.cpp's options from the command line, checked as llama.cpp checks them.
pub(super) fn llama_options(args: &FitArgs) -> Result<LlamaCppOptions, HintedError> {
    let defaults = LlamaCppOptions::default();
    let options = LlamaCppOptions {
        // `-c 0` is llama.cpp's "the model's context length".
        ctx_size: args.ctx_size.filter(|size| *size > 0),
        n_gpu_layers: args.n_gpu_layers,
        cache_type_k: args
            .cache_type_k
            .map_or(defaults.cache_type_k, CacheType::from),
        cache_type_v: args
            .cache_type_v
            .map_or(defaults.cache_type_v, CacheType::from),
        batch_size: args.batch_size.unwrap_or(defaults.batch_size),
        ubatch_size: args.ubatch_size.unwrap_or(defaults.ubatch_size),
        flash_attn: args.flash_attn.map_or(defaults.flash_attn, FlashAttn::from),
    };
    if options.cache_type_v.is_quantized() && options.flash_attn == FlashAttn::Off {
        return Err(HintedError::new(
            format!(
                "`--cache-type-v {}` with `--flash-attn off`: llama.cpp refuses a quantized V \
                 cache without flash attention",
                options.cache_type_v.name()
            ),
            "use `--flash-attn on` (or `auto`), or an f16 V cache",
        ));
    }
    Ok(options)
}

/// The checkpoint's config against the parallel layout asked for: a config that is not a
/// real model, a `--tensor-parallel-size` that does not divide the heads, more pipeline stages
/// than layers. Returns the notes the pipeline check adds.
pub(super) fn check_layout(
    input: &FitInput,
    gguf: bool,
    tensor_parallel_size: u64,
    pipeline_parallel_size: u64,
) -> Result<Vec<String>, HintedError> {
    fit::check_config(input).map_err(|error| {
        HintedError::new(
            format!("the checkpoint's config is not a real model: {error}"),
            if gguf {
                "check the GGUF metadata of this file"
            } else {
                "check `config.json` of this checkpoint"
            },
        )
    })?;
    if gguf {
        return Ok(Vec::new());
    }
    fit::check_parallel(input, tensor_parallel_size).map_err(|error| {
        let divisors = error.divisors();
        HintedError::new(
            error.to_string(),
            format!(
                "use a `--tensor-parallel-size` that divides {}: {}",
                error.heads,
                divisors
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    let note = fit::check_pipeline(input, pipeline_parallel_size).map_err(|error| {
        HintedError::new(
            error.to_string(),
            format!(
                "use a `--pipeline-parallel-size` of at most {}",
                error.layers
            ),
        )
    })?;
    Ok(note.into_iter().collect())
}
