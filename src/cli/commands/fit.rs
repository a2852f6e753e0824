//! `oomdoc fit PATH`: will it fit? Weight bytes and KV cache from the checkpoint's own
//! headers, against a GPU budget.
//!
//! Reads the environment only to find the Hugging Face cache (`HF_HUB_CACHE`, `HF_HOME`,
//! `HOME`); everything else comes from the command line.

mod args;

use crate::analyze::devices;
use crate::analyze::fit::{self, Engine, FitOptions, GpuBudget};
use crate::cli::args::Format;
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::model::checkpoint::CheckpointKind;
use crate::model::{cards, Source};
use crate::render;
use crate::source::{checkpoint, gpu};

pub use args::{CacheTypeArg, FitArgs, FlashAttnArg, KvDtypeArg};

/// Runs `oomdoc fit`.
pub fn run(args: FitArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    args::check_counts(&args)?;
    // The error names the file (and tensor) itself; no context to add.
    let mut input = checkpoint::open(&args.path)?;
    let gguf = input.kind == CheckpointKind::Gguf;
    args::refuse_other_engine_flags(&args, gguf)?;
    let llama = args::llama_options(&args)?;
    let tensor_parallel_size = args.tensor_parallel_size.unwrap_or(1);
    let pipeline_parallel_size = args.pipeline_parallel_size.unwrap_or(1);
    let utilization = args.gpu_memory_utilization.unwrap_or(0.9);
    let engine = if gguf {
        Engine::LlamaCpp
    } else {
        Engine::Vllm {
            gpus: tensor_parallel_size.saturating_mul(pipeline_parallel_size),
            utilization,
        }
    };
    let notes = args::check_layout(&input, gguf, tensor_parallel_size, pipeline_parallel_size)?;
    input.limitations.extend(notes);
    let gpu = gpu_budget(&args, engine, &mut input.limitations)?;
    let options = FitOptions {
        kv_cache_dtype: args.kv_cache_dtype.unwrap_or(KvDtypeArg::Auto).into(),
        gpu,
        gpu_memory_utilization: utilization,
        max_model_len: args.max_model_len,
        tensor_parallel_size,
        max_num_seqs: args.max_num_seqs.unwrap_or(256),
        max_num_batched_tokens: args
            .max_num_batched_tokens
            .unwrap_or(fit::DEFAULT_BATCHED_TOKENS),
        cards: cards::CARDS,
    };
    let engine_options = fit::EngineOptions {
        llama,
        pipeline_parallel_size,
    };
    let report = fit::analyze_with(&input, &options, &engine_options);
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

/// The GPU budget: `--gpu-memory`, else the `--gpu` card, else the GPUs NVML (or
/// `--gpu-from`) lists, where a GPU that cannot be read becomes a note.
fn gpu_budget(
    args: &FitArgs,
    engine: Engine,
    notes: &mut Vec<String>,
) -> anyhow::Result<Option<GpuBudget>> {
    if let Some(total) = args.gpu_memory {
        return Ok(Some(GpuBudget {
            name: None,
            total,
            source: Source::User,
            basis: "`--gpu-memory`".to_string(),
        }));
    }
    if let Some(name) = &args.gpu {
        let card = cards::lookup(name).map_err(|error| args::gpu_name_error(name, error))?;
        return Ok(Some(fit::card_budget(card)));
    }
    let from = args
        .gpu_from
        .as_deref()
        .filter(|path| !path.as_os_str().is_empty());
    let inventory = gpu::open(from, devices::analyze)
        .and_then(|mut source| source.inventory())
        .map_err(|error| error.to_string());
    Ok(fit::detected_budget(
        inventory.as_ref().map_err(String::as_str),
        engine,
        notes,
    ))
}
