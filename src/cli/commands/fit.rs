//! `oomdoc fit PATH`: will it fit? Weight bytes and KV cache from the checkpoint's own
//! headers, against a GPU budget (R11, R12, R19).
//!
//! Reads the environment only to find the Hugging Face cache (`HF_HUB_CACHE`, `HF_HOME`,
//! `HOME`); everything else comes from the command line.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::analyze::fit::{self, FitInput, FitOptions, GpuBudget, KvCacheDtype};
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::error::HintedError;
use crate::model::bytes::parse_size_arg;
use crate::model::machine::Device;
use crate::model::{cards, Bytes, Source};
use crate::render;
use crate::source::{checkpoint, gpu};

/// Arguments of `oomdoc fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// A model directory (config.json + safetensors), a `.safetensors` or `.gguf` file, or an
    /// `org/name` model id in the local Hugging Face cache
    #[arg(value_name = "PATH")]
    pub path: String,
    /// Memory of one GPU, e.g. `80GiB`, `24g`, `141GB` (decimal)
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg, conflicts_with = "gpu")]
    pub gpu_memory: Option<Bytes>,
    /// A GPU class from oomdoc's table: t4, l4, a10g, rtx3090, rtx4090, rtx5090, a100-40gb,
    /// l40s, h100, a100-80gb, h100-nvl, h200, b200, mi300x
    #[arg(long, value_name = "NAME")]
    pub gpu: Option<String>,
    /// Read GPU facts from FILE instead of NVML when neither `--gpu` nor `--gpu-memory` is
    /// given (`nvidia-smi -q -x` XML or an `oomdoc gpus` recording)
    #[arg(long, value_name = "FILE", env = "OOMDOC_GPU_FROM")]
    pub gpu_from: Option<PathBuf>,
    /// Fraction of GPU memory the engine may use (vLLM's default 0.9)
    #[arg(long, default_value_t = 0.9, value_name = "FRACTION")]
    pub gpu_memory_utilization: f64,
    /// Context length to budget for (default: the model's own)
    #[arg(long, value_name = "TOKENS")]
    pub max_model_len: Option<u64>,
    /// GPUs the model is split over; weights and KV heads are divided, norms replicated
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub tensor_parallel_size: u64,
    /// Sequences decoded at once (vLLM's default 256), for the sampler's logits
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub max_num_seqs: u64,
    /// Tokens per forward pass for the activation estimate (vLLM V1's default 8192)
    #[arg(long, default_value_t = fit::DEFAULT_BATCHED_TOKENS, value_name = "N")]
    pub max_num_batched_tokens: u64,
    /// KV cache element type; `auto` is the model dtype (f16 for GGUF, as llama.cpp)
    #[arg(long, value_enum, default_value_t = KvDtypeArg::Auto)]
    pub kv_cache_dtype: KvDtypeArg,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--kv-cache-dtype` values (vLLM spellings, plus llama.cpp's block types).
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
    /// llama.cpp q8_0.
    #[value(name = "q8_0")]
    Q8_0,
    /// llama.cpp q4_0.
    #[value(name = "q4_0")]
    Q4_0,
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
            KvDtypeArg::Q8_0 => KvCacheDtype::Q8_0,
            KvDtypeArg::Q4_0 => KvCacheDtype::Q4_0,
            KvDtypeArg::Fp8DsMla => KvCacheDtype::Fp8DsMla,
        }
    }
}

/// The budget from the detected GPUs: the smallest CUDA total among the first
/// `--tensor-parallel-size` CUDA-visible devices. A GPU that cannot be read is a limitation,
/// not an error: the checkpoint report is still worth having.
fn detected_budget(args: &FitArgs, notes: &mut Vec<String>) -> Option<GpuBudget> {
    let from = args
        .gpu_from
        .as_deref()
        .filter(|path| !path.as_os_str().is_empty());
    let inventory = match gpu::open(from).and_then(|mut source| source.inventory()) {
        Ok(inventory) => inventory,
        Err(error) => {
            notes.push(format!(
                "no GPU detected ({error}): give `--gpu NAME` or `--gpu-memory SIZE` for a verdict"
            ));
            return None;
        }
    };
    let mut devices: Vec<&Device> = inventory
        .devices
        .iter()
        .filter(|device| inventory.cuda.is_none() || device.cuda_ordinal.is_some())
        .collect();
    devices.sort_by_key(|device| device.cuda_ordinal.unwrap_or(device.index));
    let tensor_parallel = usize::try_from(args.tensor_parallel_size).unwrap_or(usize::MAX);
    let used: Vec<&Device> = devices.into_iter().take(tensor_parallel).collect();
    let Some(smallest) = used.iter().min_by_key(|device| cuda_total(device)) else {
        notes.push(
            "no CUDA-visible GPU detected: give `--gpu NAME` or `--gpu-memory SIZE` for a verdict"
                .to_string(),
        );
        return None;
    };
    if used.len() < tensor_parallel {
        notes.push(format!(
            "`--tensor-parallel-size {}` but only {} CUDA-visible GPU(s) detected",
            args.tensor_parallel_size,
            used.len()
        ));
    }
    let total = cuda_total(smallest);
    for device in &used {
        let headroom = (total.get() as f64 * (1.0 - args.gpu_memory_utilization)) as u64;
        if device.memory.used_bytes.get() > headroom {
            notes.push(format!(
                "GPU {} (`{}`) already has {} in use: vLLM refuses to start when free memory is below `--gpu-memory-utilization` × total",
                device.cuda_ordinal.unwrap_or(device.index),
                device.uuid,
                device.memory.used_bytes
            ));
        }
    }
    let source = inventory.source.unwrap_or(Source::Nvml);
    let reserved = smallest
        .memory
        .reserved_bytes
        .map(|reserved| format!(" − driver-reserved {reserved}"))
        .unwrap_or_default();
    Some(GpuBudget {
        name: Some(smallest.name.clone()),
        total,
        source,
        basis: format!(
            "{}: CUDA GPU {} total {}{reserved}",
            source.label(),
            smallest.cuda_ordinal.unwrap_or(smallest.index),
            smallest.memory.total_bytes
        ),
    })
}

/// What CUDA reports as a device's total: NVML total minus driver-reserved when known.
fn cuda_total(device: &Device) -> Bytes {
    device
        .memory
        .cuda_total_bytes()
        .unwrap_or(device.memory.total_bytes)
}

fn gpu_budget(args: &FitArgs, notes: &mut Vec<String>) -> anyhow::Result<Option<GpuBudget>> {
    if let Some(total) = args.gpu_memory {
        return Ok(Some(GpuBudget {
            name: None,
            total,
            source: Source::User,
            basis: "`--gpu-memory`".to_string(),
        }));
    }
    let Some(name) = &args.gpu else {
        return Ok(detected_budget(args, notes));
    };
    let card = cards::find(name).ok_or_else(|| {
        HintedError::new(
            format!("unknown GPU class `{name}`"),
            format!(
                "use one of {} or give `--gpu-memory SIZE`",
                cards::keys().join(", ")
            ),
        )
    })?;
    Ok(Some(fit::card_budget(card)))
}

/// Runs `oomdoc fit`.
pub fn run(args: FitArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    if !(args.gpu_memory_utilization > 0.0 && args.gpu_memory_utilization <= 1.0) {
        anyhow::bail!(
            "`--gpu-memory-utilization` must be in (0, 1], not {}",
            args.gpu_memory_utilization
        );
    }
    if args.tensor_parallel_size == 0 {
        anyhow::bail!("`--tensor-parallel-size` must be at least 1");
    }
    for (flag, value) in [
        ("--max-model-len", args.max_model_len),
        ("--max-num-seqs", Some(args.max_num_seqs)),
        (
            "--max-num-batched-tokens",
            Some(args.max_num_batched_tokens),
        ),
    ] {
        if value == Some(0) {
            anyhow::bail!("`{flag}` must be at least 1");
        }
    }
    if args.gpu_memory == Some(Bytes::ZERO) {
        anyhow::bail!("`--gpu-memory` must be more than 0 bytes");
    }
    let path = checkpoint::locate(&args.path, &checkpoint::hub_caches())?;
    // The error names the file (and tensor) itself; no context to add.
    let mut read = checkpoint::read(&path, &args.path)?;
    let gpu = gpu_budget(&args, &mut read.notes)?;
    let input = FitInput {
        path: args.path.clone(),
        kind: read.kind,
        safetensors: read.safetensors,
        gguf: read.gguf,
        config: read.config,
        index: read.index,
        names: read.names,
        limitations: read.notes,
    };
    let options = FitOptions {
        kv_cache_dtype: args.kv_cache_dtype.into(),
        gpu,
        gpu_memory_utilization: args.gpu_memory_utilization,
        max_model_len: args.max_model_len,
        tensor_parallel_size: args.tensor_parallel_size,
        max_num_seqs: args.max_num_seqs,
        max_num_batched_tokens: args.max_num_batched_tokens,
        cards: cards::CARDS,
    };
    fit::check_config(&input).map_err(|error| {
        HintedError::new(
            format!("the checkpoint's config is not a real model: {error}"),
            "check `config.json` (or the GGUF metadata) of this checkpoint",
        )
    })?;
    let report = fit::analyze(&input, &options);
    let bytes = match args.output.format() {
        Format::Json => render::json::to_document(&report)?,
        Format::Text => render::fit::text(
            &report,
            render::style::Style::new(output.color_for(&args.output)),
        )
        .into_bytes(),
        Format::Markdown => render::fit::markdown(&report).into_bytes(),
        Format::Html => render::fit::html(&report).into_bytes(),
    };
    output.report(&args.output, &bytes)?;
    Ok(ExitStatus::Success)
}
