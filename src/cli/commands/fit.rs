//! `oomdoc fit PATH`: will it fit? Weight bytes and KV cache from the checkpoint's own
//! headers, against a GPU budget.
//!
//! Reads the environment only to find the Hugging Face cache (`HF_HUB_CACHE`, `HF_HOME`,
//! `HOME`); everything else comes from the command line.

mod args;

use crate::analyze::devices;
use crate::analyze::fit::{self, Engine, GpuBudget};
use crate::cli::args::Format;
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::model::checkpoint::CheckpointKind;
use crate::render;
use crate::source::{checkpoint, gpu};

pub use args::{CacheTypeArg, FitArgs, FlashAttnArg, KvDtypeArg};

/// Runs `oomdoc fit`.
pub fn run(args: FitArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let request = args.request();
    request.check_counts()?;
    // The error names the file (and tensor) itself; no context to add.
    let mut input = checkpoint::open(&args.path)?;
    let plan = request.plan(&input, input.kind == CheckpointKind::Gguf)?;
    input.limitations.extend(plan.notes.iter().cloned());
    let gpu = match request.given_budget()? {
        Some(budget) => Some(budget),
        None => detected_budget(&args, plan.engine, &mut input.limitations),
    };
    let report = fit::analyze_with(&input, &plan.options(gpu), &plan.engine_options);
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

/// The GPUs NVML (or `--gpu-from`) lists, as a budget; a GPU that cannot be read becomes a
/// note.
fn detected_budget(args: &FitArgs, engine: Engine, notes: &mut Vec<String>) -> Option<GpuBudget> {
    let from = args
        .gpu_from
        .as_deref()
        .filter(|path| !path.as_os_str().is_empty());
    let inventory = gpu::open(from, devices::analyze)
        .and_then(|mut source| source.inventory())
        .map_err(|error| error.to_string());
    fit::detected_budget(inventory.as_ref().map_err(String::as_str), engine, notes)
}
