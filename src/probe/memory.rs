//! `--memory-from SOURCE`: where `oomdoc probe` reads device memory, parsed by clap into a
//! [`MemorySpec`] before the command runs (a bad spec is a usage error, exit 2).

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use anyhow::Context;

use super::ProbeOptions;
use crate::error::HintedError;
use crate::model::gpu::GpuUuid;
use crate::model::probe::MemorySourceInfo;
use crate::model::{Bytes, Source};
use crate::parse::prometheus::{self, Selector};
use crate::source::gpu::GpuSource;
use crate::source::server;

/// dcgm-exporter's framebuffer-used gauge (MiB), the default Prometheus metric.
pub const DCGM_FB_USED: &str = "DCGM_FI_DEV_FB_USED";

/// A memory source for `oomdoc probe`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemorySpec {
    /// NVML on this machine (`nvml`).
    Nvml,
    /// A Prometheus endpoint (`prometheus:URL[#METRIC{label="v"}]`).
    Prometheus {
        /// The endpoint, e.g. `http://dcgm:9400/metrics`.
        url: String,
        /// The series to read (default [`DCGM_FB_USED`]).
        selector: Selector,
    },
    /// A JSON list of byte counts, one per reading (`replay:FILE`).
    Replay {
        /// The file.
        path: PathBuf,
    },
}

impl FromStr for MemorySpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let spec = text.trim();
        if spec == "nvml" {
            return Ok(MemorySpec::Nvml);
        }
        if let Some(rest) = spec.strip_prefix("prometheus:") {
            let (url, selector) = match rest.split_once('#') {
                Some((url, selector)) => (
                    url,
                    Selector::parse(selector).map_err(|error| error.to_string())?,
                ),
                None => (rest, Selector::name(DCGM_FB_USED)),
            };
            if url.is_empty() {
                return Err("`prometheus:` needs the metrics URL, e.g. \
                     `prometheus:http://dcgm:9400/metrics`"
                    .to_owned());
            }
            return Ok(MemorySpec::Prometheus {
                url: url.to_owned(),
                selector,
            });
        }
        if let Some(path) = spec.strip_prefix("replay:") {
            if path.is_empty() {
                return Err("`replay:` needs a file, e.g. `replay:readings.json`".to_owned());
            }
            return Ok(MemorySpec::Replay {
                path: PathBuf::from(path),
            });
        }
        Err(format!(
            "unknown memory source `{spec}`: use `nvml`, \
             `prometheus:URL[#METRIC{{label=\"value\"}}]` or `replay:FILE`"
        ))
    }
}

/// Where `oomdoc probe` reads memory after each request: NVML, a Prometheus gauge or a replayed
/// list. The protocol runner sees only this trait.
pub trait MemorySource {
    /// One reading: bytes, and the samples of the scrape when the source is Prometheus.
    fn read(&mut self) -> Result<(Bytes, Vec<prometheus::Sample>), String>;
    /// What the source is, for the report.
    fn info(&self) -> MemorySourceInfo;
    /// A limitation the source found while reading (several series summed), if any.
    fn summed_series(&self) -> Option<String> {
        None
    }
}

/// A gauge value × its unit as bytes; `None` for NaN, infinities, negative values and values
/// past `u64::MAX`, which `as u64` would turn into 0 or `u64::MAX` silently.
pub(crate) fn gauge_bytes(value: f64, scale: f64) -> Option<Bytes> {
    let bytes = (value * scale).round();
    // 2^64 is exact in f64; NaN and the infinities fall outside the range too.
    (0.0..18_446_744_073_709_551_616.0)
        .contains(&bytes)
        .then_some(Bytes(bytes as u64))
}

/// Where memory is read.
enum MemoryReader {
    Nvml {
        gpu: Box<dyn GpuSource>,
        target: NvmlTarget,
        description: String,
        source: Source,
    },
    Prometheus {
        url: String,
        selector: Selector,
        scale: f64,
        description: String,
        timeout: Duration,
        /// Most series the selector matched in one scrape (summed when more than one).
        series: usize,
    },
    Replay {
        path: PathBuf,
        values: Vec<u64>,
        next: usize,
    },
}

enum NvmlTarget {
    Devices(Vec<GpuUuid>),
    Process(u32),
}

/// Opens the memory source `options.memory_from` names (`--gpu` and `--pid` with NVML). What it
/// cannot do (several GPUs summed, options that do not apply) goes to `limitations`.
pub fn open(
    options: &ProbeOptions,
    limitations: &mut Vec<String>,
) -> anyhow::Result<Box<dyn MemorySource>> {
    Ok(Box::new(MemoryReader::open(options, limitations)?))
}

impl MemoryReader {
    fn open(options: &ProbeOptions, limitations: &mut Vec<String>) -> anyhow::Result<MemoryReader> {
        let (url, selector) = match &options.memory_from {
            MemorySpec::Nvml => return open_nvml(options, limitations),
            MemorySpec::Prometheus { url, selector } => (url, selector),
            MemorySpec::Replay { path } => {
                if options.gpu.is_some() || options.pid.is_some() {
                    limitations
                        .push("`--gpu` and `--pid` apply to `--memory-from nvml` only".to_string());
                }
                // A list of byte counts: 64 MiB is millions of readings.
                let bytes = crate::source::file::read_limited(path, 64 << 20)
                    .with_context(|| format!("failed to read `{}`", path.display()))?;
                let values: Vec<u64> = serde_json::from_slice(&bytes).with_context(|| {
                    format!("`{}` is not a JSON list of byte counts", path.display())
                })?;
                return Ok(MemoryReader::Replay {
                    path: path.clone(),
                    values,
                    next: 0,
                });
            }
        };
        if options.gpu.is_some() || options.pid.is_some() {
            limitations.push("`--gpu` and `--pid` apply to `--memory-from nvml` only".to_string());
        }
        let mib = selector.name.starts_with("DCGM_FI_DEV_FB_");
        let description = format!(
            "`{selector}` at {} ({})",
            server::redact_url(url),
            if mib { "MiB × 2^20" } else { "taken as bytes" }
        );
        Ok(MemoryReader::Prometheus {
            url: url.clone(),
            selector: selector.clone(),
            scale: if mib { (1u64 << 20) as f64 } else { 1.0 },
            description,
            timeout: Duration::from_secs(options.request_timeout_s.min(10)),
            series: 0,
        })
    }
}

impl MemorySource for MemoryReader {
    /// With Prometheus, a sentence when the selector matched several series, which are summed
    /// (dcgm-exporter has one per GPU: other jobs' memory then moves the reading).
    fn summed_series(&self) -> Option<String> {
        match self {
            MemoryReader::Prometheus {
                selector, series, ..
            } if *series > 1 => Some(format!(
                "`{selector}` matched {series} series (one per GPU?); their sum was read, so memory of other GPUs and jobs moves it: pick one with a label, e.g. `#{}{{gpu=\"0\"}}`",
                selector.name
            )),
            _ => None,
        }
    }

    /// One reading: bytes, and the samples of the scrape when the source is Prometheus.
    fn read(&mut self) -> Result<(Bytes, Vec<prometheus::Sample>), String> {
        match self {
            MemoryReader::Nvml { gpu, target, .. } => match target {
                NvmlTarget::Devices(uuids) => {
                    let mut total = Bytes::ZERO;
                    for uuid in uuids.iter() {
                        total = total + gpu.memory(uuid).map_err(|e| e.to_string())?.used_bytes;
                    }
                    Ok((total, Vec::new()))
                }
                NvmlTarget::Process(pid) => {
                    let inventory = gpu.inventory().map_err(|e| e.to_string())?;
                    let processes: Vec<_> = inventory
                        .devices
                        .iter()
                        .flat_map(|device| device.processes.iter())
                        .filter(|process| process.pid == *pid)
                        .collect();
                    if processes.is_empty() {
                        return Err(format!("process {pid} is not on any GPU NVML sees"));
                    }
                    let mut total = Bytes::ZERO;
                    for process in processes {
                        total = total
                            + process.used_bytes.ok_or_else(|| {
                                process.unavailable_reason.clone().unwrap_or_else(|| {
                                    format!("NVML gives no memory figure for process {pid}")
                                })
                            })?;
                    }
                    Ok((total, Vec::new()))
                }
            },
            MemoryReader::Prometheus {
                url,
                selector,
                scale,
                timeout,
                series,
                ..
            } => {
                let text = server::fetch_text(url, *timeout).map_err(|e| e.to_string())?;
                let (samples, errors) = prometheus::parse_lenient(&text);
                let picked = selector.select(&samples);
                if picked.is_empty() {
                    let unparsed = match errors.first() {
                        Some(first) => format!(
                            " ({} lines could not be parsed, the first: {first})",
                            errors.len()
                        ),
                        None => String::new(),
                    };
                    return Err(format!("no `{selector}` in the metrics{unparsed}"));
                }
                *series = (*series).max(picked.len());
                let sum: f64 = picked.iter().map(|s| s.value).sum();
                let bytes = gauge_bytes(sum, *scale)
                    .ok_or_else(|| format!("`{selector}` is {sum}, not a memory size"))?;
                Ok((bytes, samples))
            }
            MemoryReader::Replay { path, values, next } => {
                let value = values.get(*next).copied().ok_or_else(|| {
                    format!("`{}` has only {} readings", path.display(), values.len())
                })?;
                *next += 1;
                Ok((Bytes(value), Vec::new()))
            }
        }
    }

    fn info(&self) -> MemorySourceInfo {
        match self {
            MemoryReader::Nvml {
                description,
                source,
                ..
            } => MemorySourceInfo {
                kind: "nvml".to_string(),
                source: *source,
                description: description.clone(),
            },
            MemoryReader::Prometheus { description, .. } => MemorySourceInfo {
                kind: "prometheus".to_string(),
                source: Source::Container,
                description: description.clone(),
            },
            MemoryReader::Replay { path, .. } => MemorySourceInfo {
                kind: "replay".to_string(),
                source: Source::Replay,
                description: format!("byte counts replayed from `{}`", path.display()),
            },
        }
    }
}

fn open_nvml(
    options: &ProbeOptions,
    limitations: &mut Vec<String>,
) -> anyhow::Result<MemoryReader> {
    let mut gpu = open_gpu_source()?;
    let inventory = gpu.inventory().context("cannot list GPUs")?;
    // NVML, or a recording replayed through `OOMDOC_GPU_FROM`.
    let source = inventory.source.unwrap_or(Source::Nvml);
    if let Some(pid) = options.pid {
        refuse_static_replay()?;
        return Ok(MemoryReader::Nvml {
            gpu,
            target: NvmlTarget::Process(pid),
            description: format!(
                "used GPU memory of process {pid} ({}, per process)",
                source.label()
            ),
            source,
        });
    }
    let devices: Vec<&crate::model::machine::Device> = match &options.gpu {
        Some(wanted) => {
            let device = inventory
                .devices
                .iter()
                .find(|d| d.uuid == *wanted || d.index.to_string() == *wanted)
                .or_else(|| {
                    let matching: Vec<_> = inventory
                        .devices
                        .iter()
                        .filter(|d| d.uuid.starts_with(wanted.as_str()))
                        .collect();
                    (matching.len() == 1).then(|| matching[0])
                })
                .ok_or_else(|| {
                    HintedError::new(
                        format!("no GPU `{wanted}`"),
                        "list GPUs with `oomdoc gpus`; pass a UUID, a unique UUID prefix or an NVML index",
                    )
                })?;
            vec![device]
        }
        None => inventory.devices.iter().collect(),
    };
    if devices.is_empty() {
        anyhow::bail!("NVML sees no GPU");
    }
    if devices.len() > 1 {
        limitations.push(format!(
            "used memory summed over {} GPUs; pick one with `--gpu` or the server with `--pid`",
            devices.len()
        ));
    }
    refuse_static_replay()?;
    let uuids: Vec<GpuUuid> = devices.iter().map(|d| d.uuid.clone()).collect();
    let names: Vec<&str> = uuids.iter().map(GpuUuid::as_str).collect();
    let description = format!("used memory of {} ({})", names.join(", "), source.label());
    Ok(MemoryReader::Nvml {
        gpu,
        target: NvmlTarget::Devices(uuids),
        description,
        source,
    })
}

/// NVML, or the replay file named by `OOMDOC_GPU_FROM` (a recording made on a GPU host).
/// The GPU error's own hint names `--gpu-from`, which `probe` does not take: its hint here
/// names what `probe` offers instead (issue 16).
fn open_gpu_source() -> anyhow::Result<Box<dyn GpuSource>> {
    let replay = crate::source::gpu::replay_path(None);
    crate::source::gpu::open(replay.as_deref(), crate::analyze::devices::analyze).map_err(|error| {
        HintedError::new(
            format!("cannot read GPU memory: {error}"),
            "read memory another way with `--memory-from prometheus:URL` (e.g. dcgm-exporter on the GPU host) or `--memory-from replay:FILE`, or set `OOMDOC_GPU_FROM` to an `oomdoc gpus --record` recording with memory samples",
        )
        .into()
    })
}

/// A static replay (`OOMDOC_GPU_FROM` naming an `nvidia-smi -q -x` file, or a recording
/// without samples) is one moment: no timeline, and never a `plateau` (issue 16).
fn refuse_static_replay() -> anyhow::Result<()> {
    let Some(path) = crate::source::gpu::replay_path(None) else {
        return Ok(());
    };
    let replay = crate::source::gpu::ReplayGpu::open(&path)?;
    if replay.is_static() {
        return Err(HintedError::new(
            format!(
                "`{}` (`OOMDOC_GPU_FROM`) is a static source: one moment of GPU memory, not a series of readings, so no growth verdict can come from it",
                path.display()
            ),
            "run `probe` on the GPU host (NVML), read a live exporter with `--memory-from prometheus:URL`, or replay byte counts with `--memory-from replay:FILE`",
        )
        .into());
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_parses_and_a_bad_one_says_what_to_use() {
        assert_eq!("nvml".parse(), Ok(MemorySpec::Nvml));
        assert_eq!(
            "prometheus:http://h:9400/metrics".parse(),
            Ok(MemorySpec::Prometheus {
                url: "http://h:9400/metrics".to_owned(),
                selector: Selector::name(DCGM_FB_USED),
            })
        );
        let labelled: Result<MemorySpec, String> =
            "prometheus:http://h/m#DCGM_FI_DEV_FB_USED{gpu=\"1\"}".parse();
        match labelled {
            Ok(MemorySpec::Prometheus { selector, .. }) => {
                assert_eq!(selector.labels.get("gpu").map(String::as_str), Some("1"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            "replay:r.json".parse(),
            Ok(MemorySpec::Replay {
                path: PathBuf::from("r.json")
            })
        );
        let bad: Result<MemorySpec, String> = "carrier-pigeon".parse();
        let expected = "unknown memory source `carrier-pigeon`";
        assert!(bad.is_err_and(|error| error.starts_with(expected)));
        assert!("prometheus:".parse::<MemorySpec>().is_err());
        assert!("replay:".parse::<MemorySpec>().is_err());
        assert!("prometheus:http://h/m#{bad".parse::<MemorySpec>().is_err());
    }
}
