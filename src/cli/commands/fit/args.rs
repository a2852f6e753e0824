//! The arguments of `oomdoc fit`, and the request they make (checked by
//! `analyze::fit::FitRequest`).

use clap::{Args, ValueEnum};

use crate::analyze::fit::{CacheType, FitRequest, FlashAttn, KvCacheDtype};
use crate::cli::args::OutputArgs;
use crate::model::bytes::parse_size_arg;
use crate::model::Bytes;
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

impl FitArgs {
    /// The options as the analysis takes them.
    pub fn request(&self) -> FitRequest {
        FitRequest {
            path: self.path.clone(),
            gpu_memory: self.gpu_memory,
            gpu: self.gpu.clone(),
            gpu_memory_utilization: self.gpu_memory_utilization,
            max_model_len: self.max_model_len,
            tensor_parallel_size: self.tensor_parallel_size,
            pipeline_parallel_size: self.pipeline_parallel_size,
            max_num_seqs: self.max_num_seqs,
            max_num_batched_tokens: self.max_num_batched_tokens,
            kv_cache_dtype: self.kv_cache_dtype.map(KvCacheDtype::from),
            ctx_size: self.ctx_size,
            n_gpu_layers: self.n_gpu_layers,
            cache_type_k: self.cache_type_k.map(CacheType::from),
            cache_type_v: self.cache_type_v.map(CacheType::from),
            batch_size: self.batch_size,
            ubatch_size: self.ubatch_size,
            flash_attn: self.flash_attn.map(FlashAttn::from),
        }
    }
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
