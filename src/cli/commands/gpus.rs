//! `oomdoc gpus`: every GPU and process by UUID, with the CUDA numbering resolved.
//!
//! Reads NVML (or a replay file), lets `analyze::devices` number and flag, renders a table
//! or the JSON document; `--watch` refreshes, `--record` writes a recording that
//! `--gpu-from` replays on another machine.

use std::collections::BTreeMap;
use std::io::IsTerminal;

use anyhow::Context;

mod args;

use crate::analyze::devices;
use crate::cli::args::{Format, OutputArgs};

use crate::cli::output::{write_file_atomically, Output};
use crate::cli::ExitStatus;
use crate::model::machine::{Inventory, MemorySample, Recording};
use crate::render;
use crate::render::style::Style;
use crate::source::gpu;
use crate::source::host_memory::{self, ProcHost};
pub use args::GpusArgs;

/// Runs `oomdoc gpus`.
pub fn run(args: GpusArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let from = args
        .gpu_from
        .as_deref()
        .filter(|path| !path.as_os_str().is_empty());
    // A replay keeps the numbering it was recorded with, so it is opened without
    // `gpu::open`'s renumbering under this shell's environment.
    let mut source: Box<dyn gpu::GpuSource> = match from {
        Some(path) => {
            Box::new(gpu::ReplayGpu::open(path).context("cannot read the GPU replay file")?)
        }
        None => gpu::open(None, devices::analyze).context("cannot list GPUs through NVML")?,
    };
    if let Some(seconds) = args.bench_sampling {
        let duration = args::positive_seconds(seconds, "--bench-sampling")?;
        let benchmark = gpu::benchmark(source.as_mut(), duration, 20)
            .context("the sampling benchmark failed")?;
        let bytes = match args.output.format() {
            Format::Json => render::json::to_document(&benchmark)?,
            _ => render::gpus::benchmark_text(&benchmark),
        };
        output.report(&args.output, &bytes)?;
        return Ok(ExitStatus::Success);
    }
    let host = ProcHost::default();
    // Numbered for CUDA under the environment that applies; each live process gets its host
    // RSS and container (a replay's PIDs are another machine's).
    let mut inventory = || -> anyhow::Result<Inventory> {
        let mut inventory = source
            .inventory()
            .context("cannot read the GPU inventory")?;
        devices::number_for_listing(
            &mut inventory,
            from.is_some(),
            gpu::cuda_environment(),
            args.cuda_visible_devices.as_deref(),
            args.cuda_device_order.as_deref(),
        );
        if from.is_none() {
            host_memory::describe_gpu_processes(&mut inventory, &host);
        }
        Ok(inventory)
    };
    let style = Style::new(output.color_for(&args.output));
    let Some(seconds) = args.watch else {
        let inventory = inventory()?;
        if let Some(path) = &args.record {
            record(path, &inventory, &BTreeMap::new())?;
        }
        output.report(
            &args.output,
            &render_inventory(&inventory, &args.output, style)?,
        )?;
        return Ok(if inventory.devices.is_empty() {
            ExitStatus::NothingFound
        } else {
            ExitStatus::Success
        });
    };
    let interval = args::positive_seconds(seconds, "--watch")?;
    let to_stdout = args
        .output
        .output
        .as_deref()
        .is_none_or(|path| path == std::path::Path::new("-"));
    if to_stdout && args.output.format() != Format::Text {
        // One document per refresh would pile up on stdout; a file is rewritten instead.
        return Err(args::watch_on_stdout(args.output.format()).into());
    }
    let clear = args.output.format() == Format::Text
        && args.output.output.is_none()
        && std::io::stdout().is_terminal();
    let mut samples: BTreeMap<String, Vec<MemorySample>> = BTreeMap::new();
    let mut refreshes = 0u64;
    loop {
        let inventory = inventory()?;
        for device in &inventory.devices {
            samples
                .entry(device.uuid.to_string())
                .or_default()
                .push(device.memory.sample());
        }
        if let Some(path) = &args.record {
            record(path, &inventory, &samples)?;
        }
        let mut bytes = Vec::new();
        if clear {
            // Home the cursor and clear the screen, only on a terminal.
            bytes.extend_from_slice(b"\x1b[H\x1b[2J");
        } else if refreshes > 0 && args.output.format() == Format::Text {
            bytes.push(b'\n');
        }
        bytes.extend(render_inventory(&inventory, &args.output, style)?);
        output.report(&args.output, &bytes)?;
        refreshes += 1;
        if args.count.is_some_and(|count| refreshes >= count) {
            return Ok(ExitStatus::Success);
        }
        std::thread::sleep(interval);
    }
}

fn render_inventory(
    inventory: &Inventory,
    args: &OutputArgs,
    style: Style,
) -> anyhow::Result<Vec<u8>> {
    Ok(match args.format() {
        Format::Text => render::gpus::text(inventory, style),
        Format::Markdown => render::gpus::markdown(inventory),
        Format::Json => render::gpus::json(inventory)?,
        Format::Html => render::gpus::html(inventory),
    })
}

fn record(
    path: &std::path::Path,
    inventory: &Inventory,
    samples: &BTreeMap<String, Vec<MemorySample>>,
) -> anyhow::Result<()> {
    let recording = Recording::new(inventory.clone(), samples);
    let bytes = render::gpus::recording(&recording)?;
    write_file_atomically(path, &bytes)
        .with_context(|| format!("failed to write the recording `{}`", path.display()))
}
