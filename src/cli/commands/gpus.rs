//! `oomdoc gpus`: every GPU and process by UUID, with the CUDA numbering resolved (R9, R10).
//!
//! Reads NVML (or a replay file), lets `analyze::devices` number and flag, renders a table
//! or the JSON document; `--watch` refreshes, `--record` writes a recording that
//! `--gpu-from` replays on another machine.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use crate::analyze::devices;
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::{write_file_atomically, Output};
use crate::cli::ExitStatus;
use crate::error::HintedError;
use crate::model::machine::{
    CudaEnvironment, DeviceOrder, Inventory, MemorySample, NumberingFrom, RecordedSample, Recording,
};
use crate::render;
use crate::render::style::Style;
use crate::source::gpu;
use crate::source::host_memory::{self, ProcHost};

/// Arguments of `oomdoc gpus`.
#[derive(Debug, Args)]
pub struct GpusArgs {
    /// Read GPU facts from FILE instead of NVML: `nvidia-smi -q -x` XML, an `oomdoc gpus --json`
    /// document or an `oomdoc gpus --record` recording
    #[arg(long, value_name = "FILE", env = "OOMDOC_GPU_FROM")]
    pub gpu_from: Option<PathBuf>,
    /// Refresh every SECS seconds (default 1) until interrupted
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "1")]
    pub watch: Option<f64>,
    /// Also write a recording to FILE, to replay with `--gpu-from FILE` (with `--watch`,
    /// rewritten at each refresh with the memory readings so far)
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Number the GPUs for CUDA as `CUDA_VISIBLE_DEVICES=VALUE` would (with `--gpu-from`, the
    /// default is the numbering recorded on that machine, not this shell's)
    #[arg(long, value_name = "VALUE")]
    pub cuda_visible_devices: Option<String>,
    /// Number the GPUs for CUDA as `CUDA_DEVICE_ORDER=ORDER` would (with `--gpu-from`, the
    /// default is the order recorded on that machine)
    #[arg(long, value_name = "ORDER", value_parser = ["FASTEST_FIRST", "PCI_BUS_ID"])]
    pub cuda_device_order: Option<String>,
    /// Stop `--watch` after N refreshes
    #[arg(long, value_name = "N", hide = true)]
    pub count: Option<u64>,
    /// Measure `memory()` calls per second for SECS seconds and one inventory's latency
    #[arg(long, value_name = "SECS", hide = true)]
    pub bench_sampling: Option<f64>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

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
    let numbering = Numbering {
        replayed: from.is_some(),
        visible_devices: args.cuda_visible_devices.clone(),
        device_order: args.cuda_device_order.clone(),
    };
    let host = ProcHost::default();
    if let Some(seconds) = args.bench_sampling {
        let duration = positive_seconds(seconds, "--bench-sampling")?;
        let benchmark = gpu::benchmark(source.as_mut(), duration, 20)
            .context("the sampling benchmark failed")?;
        let bytes = match args.output.format() {
            Format::Json => render::json::to_document(&benchmark)?,
            _ => render::gpus::benchmark_text(&benchmark),
        };
        output.report(&args.output, &bytes)?;
        return Ok(ExitStatus::Success);
    }
    let style = Style::new(output.color_for(&args.output));
    let Some(seconds) = args.watch else {
        let inventory = numbering.apply(
            source
                .inventory()
                .context("cannot read the GPU inventory")?,
            &host,
        );
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
    let interval = positive_seconds(seconds, "--watch")?;
    let to_stdout = args
        .output
        .output
        .as_deref()
        .is_none_or(|path| path == std::path::Path::new("-"));
    if to_stdout && args.output.format() != Format::Text {
        // One document per refresh would pile up on stdout; a file is rewritten instead.
        return Err(HintedError::new(
            format!(
                "`--watch` refreshes the report, and `--format {}` on stdout would hold one document per refresh",
                match args.output.format() {
                    Format::Json => "json",
                    Format::Markdown => "markdown",
                    Format::Html | Format::Text => "html",
                }
            ),
            "write the latest report to a file with `-o FILE`, or keep every reading with `--record FILE`",
        )
        .into());
    }
    let clear = args.output.format() == Format::Text
        && args.output.output.is_none()
        && std::io::stdout().is_terminal();
    let mut samples: BTreeMap<String, Vec<MemorySample>> = BTreeMap::new();
    let mut refreshes = 0u64;
    loop {
        let inventory = numbering.apply(
            source
                .inventory()
                .context("cannot read the GPU inventory")?,
            &host,
        );
        for device in &inventory.devices {
            samples
                .entry(device.uuid.clone())
                .or_default()
                .push(MemorySample {
                    used_bytes: device.memory.used_bytes,
                    free_bytes: device.memory.free_bytes,
                    total_bytes: device.memory.total_bytes,
                });
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

/// How `oomdoc gpus` numbers and completes an inventory.
struct Numbering {
    /// The inventory is another machine's (`--gpu-from`).
    replayed: bool,
    /// `--cuda-visible-devices`.
    visible_devices: Option<String>,
    /// `--cuda-device-order`.
    device_order: Option<String>,
}

impl Numbering {
    /// Numbers the devices for CUDA under the environment that applies (the flag, else the
    /// recording's for a replay, else this shell's), and adds each live process's host RSS
    /// and container. A replay's PIDs are another machine's: their RSS is never read here.
    fn apply(&self, mut inventory: Inventory, host: &ProcHost) -> Inventory {
        let recorded = inventory.cuda.as_ref().map(|numbering| CudaEnvironment {
            visible_devices: numbering.visible_devices.as_ref().map(|v| v.raw.clone()),
            device_order: Some(
                match numbering.device_order {
                    DeviceOrder::FastestFirst => "FASTEST_FIRST",
                    DeviceOrder::PciBusId => "PCI_BUS_ID",
                }
                .to_string(),
            ),
        });
        let (mut environment, from) = match (self.replayed, recorded) {
            (false, _) => (gpu::cuda_environment(), NumberingFrom::ThisShell),
            (true, Some(recorded)) => (recorded, NumberingFrom::Recording),
            (true, None) => (CudaEnvironment::default(), NumberingFrom::NotRecorded),
        };
        let from = if self.visible_devices.is_some() || self.device_order.is_some() {
            if let Some(value) = &self.visible_devices {
                environment.visible_devices = Some(value.clone());
            }
            if let Some(order) = &self.device_order {
                environment.device_order = Some(order.clone());
            }
            NumberingFrom::CommandLine
        } else {
            from
        };
        devices::analyze(&mut inventory, &environment);
        inventory.cuda_numbering_from = Some(from);
        if self.replayed {
            for process in inventory
                .devices
                .iter_mut()
                .flat_map(|d| d.processes.iter_mut())
            {
                if process.host_rss_bytes.is_none() && process.host_rss_unavailable_reason.is_none()
                {
                    process.host_rss_unavailable_reason = Some(
                        "not measured: a replayed PID belongs to the machine that recorded it"
                            .to_string(),
                    );
                }
            }
        } else {
            host_memory::describe_gpu_processes(&mut inventory, host);
        }
        inventory
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
    let recording = Recording {
        inventory: inventory.clone(),
        samples: samples
            .iter()
            .map(|(uuid, list)| {
                (
                    uuid.clone(),
                    list.iter().copied().map(RecordedSample::Full).collect(),
                )
            })
            .collect(),
    };
    let bytes = render::gpus::recording(&recording)?;
    write_file_atomically(path, &bytes)
        .with_context(|| format!("failed to write the recording `{}`", path.display()))
}

fn positive_seconds(seconds: f64, flag: &str) -> anyhow::Result<Duration> {
    if seconds.is_finite() && seconds > 0.0 && seconds < 1e9 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        anyhow::bail!("`{flag}` needs a positive number of seconds, not `{seconds}`")
    }
}
