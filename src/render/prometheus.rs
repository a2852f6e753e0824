//! `oomdoc exporter`'s `/metrics`: Prometheus text exposition format 0.0.4 (issue 20).
//!
//! Format reference: <https://prometheus.io/docs/instrumenting/exposition_formats/> (text
//! format 0.0.4) and the naming guide <https://prometheus.io/docs/practices/naming/>. Each
//! family is written once, as `# HELP`, `# TYPE`, then its samples; label values escape `\`,
//! `"` and newline, help text `\` and newline; counters end in `_total`; units are in names
//! (`_bytes`, `_seconds`, `_tokens`); no series repeats a label set. GPU series carry the
//! labels dcgm-exporter puts on its own (`gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`,
//! `Hostname`), so `on(UUID)` joins work. Pure: the caller collects [`ExporterMetrics`].

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::model::exporter::{ExporterMetrics, LogLabels};
use crate::model::machine::Device;
use crate::redact::Redactor;

/// The `Content-Type` of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The longest process name kept as a label value.
const MAX_PROCESS_NAME: usize = 64;

type Labels = Vec<(&'static str, String)>;

struct Family {
    name: &'static str,
    help: &'static str,
    kind: &'static str,
    samples: BTreeMap<String, f64>,
}

impl Family {
    fn new(name: &'static str, kind: &'static str, help: &'static str) -> Self {
        Family {
            name,
            help,
            kind,
            samples: BTreeMap::new(),
        }
    }

    /// Adds a sample; the same label set twice adds up (one series each).
    fn add(&mut self, labels: &Labels, value: f64) {
        let mut text = String::new();
        for (index, (name, value)) in labels.iter().enumerate() {
            if index > 0 {
                text.push(',');
            }
            let _ = write!(text, "{name}=\"{}\"", escape_label_value(value));
        }
        *self.samples.entry(text).or_insert(0.0) += value;
    }

    fn write(&self, out: &mut String) {
        if self.samples.is_empty() {
            return;
        }
        let _ = writeln!(out, "# HELP {} {}", self.name, escape_help(self.help));
        let _ = writeln!(out, "# TYPE {} {}", self.name, self.kind);
        for (labels, value) in &self.samples {
            if labels.is_empty() {
                let _ = writeln!(out, "{} {}", self.name, format_value(*value));
            } else {
                let _ = writeln!(out, "{}{{{labels}}} {}", self.name, format_value(*value));
            }
        }
    }
}

/// Escapes a label value: `\` → `\\`, `"` → `\"`, newline → `\n`.
pub fn escape_label_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes help text: `\` → `\\`, newline → `\n`.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

fn format_value(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else if value.fract() == 0.0 && value.abs() < 9.007_199_254_740_992e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

/// A process name as a bounded label value: the program's file name, without arguments,
/// cut to 64 characters, secrets shaped like tokens removed.
pub fn process_name_label(name: &str) -> String {
    let program = name.split_whitespace().next().unwrap_or_default();
    let base = program.rsplit('/').next().unwrap_or(program);
    let cut: String = base.chars().take(MAX_PROCESS_NAME).collect();
    Redactor::default().text(&cut)
}

fn gpu_labels(device: &Device, hostname: &str) -> Labels {
    vec![
        ("gpu", device.index.to_string()),
        ("UUID", device.uuid.to_string()),
        ("pci_bus_id", device.pci_bus_id.clone()),
        ("device", format!("nvidia{}", device.index)),
        ("modelName", device.name.clone()),
        ("Hostname", hostname.to_string()),
    ]
}

fn origin_labels(labels: &mut Labels, origin: &LogLabels) {
    labels.push(("namespace", origin.namespace.clone()));
    labels.push(("pod", origin.pod.clone()));
    labels.push(("container", origin.container.clone()));
}

/// The whole exposition.
pub fn render(metrics: &ExporterMetrics) -> String {
    let hostname = metrics.hostname.as_str();
    let mut total = Family::new(
        "oomdoc_gpu_memory_total_bytes",
        "gauge",
        "Total memory of the GPU (NVML total, as nvidia-smi Total).",
    );
    let mut reserved = Family::new(
        "oomdoc_gpu_memory_reserved_bytes",
        "gauge",
        "GPU memory reserved by the driver (NVML v2 reserved), usable by no process.",
    );
    let mut used = Family::new(
        "oomdoc_gpu_memory_used_bytes",
        "gauge",
        "GPU memory used (NVML v2 used, which excludes the driver-reserved part).",
    );
    let mut free = Family::new("oomdoc_gpu_memory_free_bytes", "gauge", "GPU memory free.");
    let mut process = Family::new(
        "oomdoc_gpu_process_memory_used_bytes",
        "gauge",
        "GPU memory used by one process (host PID), with its container where known.",
    );
    let mut up = Family::new(
        "oomdoc_gpu_source_up",
        "gauge",
        "Whether the GPU source (NVML or the replay file) answered this scrape.",
    );
    up.add(
        &Vec::new(),
        f64::from(u8::from(metrics.inventory.is_some())),
    );
    for device in metrics
        .inventory
        .iter()
        .flat_map(|inventory| &inventory.devices)
    {
        let labels = gpu_labels(device, hostname);
        let memory = &device.memory;
        total.add(&labels, memory.total_bytes.get() as f64);
        if let Some(bytes) = memory.reserved_bytes {
            reserved.add(&labels, bytes.get() as f64);
        }
        used.add(&labels, memory.used_bytes.get() as f64);
        free.add(&labels, memory.free_bytes.get() as f64);
        for gpu_process in &device.processes {
            let Some(bytes) = gpu_process.used_bytes else {
                continue;
            };
            let mut labels = labels.clone();
            labels.push(("pid", gpu_process.pid.to_string()));
            labels.push((
                "process_name",
                gpu_process
                    .name
                    .as_deref()
                    .map(process_name_label)
                    .unwrap_or_default(),
            ));
            let origin = metrics
                .process_origins
                .get(&gpu_process.pid)
                .cloned()
                .unwrap_or_default();
            origin_labels(&mut labels, &origin);
            process.add(&labels, bytes.get() as f64);
        }
    }

    let mut events = Family::new(
        "oomdoc_oom_events_total",
        "counter",
        "Failures oomdoc explain found in the followed logs (GPU OOM, host OOM kill, other failures), by cause and failed phase.",
    );
    for (key, count) in &metrics.oom_events {
        let mut labels: Labels = vec![
            ("cause", key.cause.to_string()),
            ("phase", key.phase.to_string()),
            ("engine", key.engine.clone()),
            ("UUID", key.uuid.to_string()),
        ];
        origin_labels(&mut labels, &key.origin);
        labels.push(("Hostname", hostname.to_string()));
        events.add(&labels, *count as f64);
    }
    let mut last = Family::new(
        "oomdoc_last_oom_timestamp_seconds",
        "gauge",
        "When oomdoc last counted a failure, in seconds since the Unix epoch.",
    );
    if let Some(seconds) = metrics.last_oom_timestamp_seconds {
        last.add(&vec![("Hostname", hostname.to_string())], seconds);
    }

    let mut weights = Family::new(
        "oomdoc_engine_weights_bytes",
        "gauge",
        "Model weights on the GPU, as the engine's startup log printed.",
    );
    let mut kv_cache = Family::new(
        "oomdoc_engine_kv_cache_bytes",
        "gauge",
        "KV-cache budget or size, as the engine's startup log printed.",
    );
    let mut cuda_graphs = Family::new(
        "oomdoc_engine_cuda_graphs_bytes",
        "gauge",
        "Memory taken by CUDA-graph capture, as the engine's startup log printed.",
    );
    let mut activation_peak = Family::new(
        "oomdoc_engine_activation_peak_bytes",
        "gauge",
        "Peak activation memory of the engine's profiling pass, as its startup log printed.",
    );
    let mut capacity = Family::new(
        "oomdoc_engine_kv_cache_capacity_tokens",
        "gauge",
        "KV-cache capacity in tokens, as the engine's startup log printed.",
    );
    for (key, breakdown) in &metrics.startup {
        let mut labels: Labels = vec![("engine", key.engine.clone())];
        origin_labels(&mut labels, &key.origin);
        labels.push(("Hostname", hostname.to_string()));
        let figures = [
            (&mut weights, breakdown.weights_bytes.map(|b| b.get())),
            (&mut kv_cache, breakdown.kv_cache_bytes.map(|b| b.get())),
            (
                &mut cuda_graphs,
                breakdown.cuda_graphs_bytes.map(|b| b.get()),
            ),
            (
                &mut activation_peak,
                breakdown.activation_peak_bytes.map(|b| b.get()),
            ),
            (&mut capacity, breakdown.kv_cache_capacity_tokens),
        ];
        for (family, value) in figures {
            if let Some(value) = value {
                family.add(&labels, value as f64);
            }
        }
    }

    let mut followed = Family::new("oomdoc_followed_files", "gauge", "Log files followed now.");
    followed.add(&Vec::new(), metrics.followed_files as f64);
    let mut read = Family::new(
        "oomdoc_log_read_bytes_total",
        "counter",
        "Bytes read from followed log files.",
    );
    read.add(&Vec::new(), metrics.log_bytes_read as f64);

    let mut out = String::new();
    for family in [
        &total,
        &reserved,
        &used,
        &free,
        &process,
        &up,
        &events,
        &last,
        &weights,
        &kv_cache,
        &cuda_graphs,
        &activation_peak,
        &capacity,
        &followed,
        &read,
    ] {
        family.write(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::exporter::{EngineLabels, OomEventLabels, StartupBreakdown};
    use crate::model::machine::{DeviceMemory, GpuProcess, Inventory};
    use crate::model::Bytes;

    fn metrics() -> ExporterMetrics {
        let device = Device {
            index: crate::model::gpu::NvmlIndex(0),
            uuid: "GPU-5f1c0000-1111-2222-3333-444455556666".into(),
            pci_bus_id: "00000000:00:06.0".into(),
            name: "NVIDIA H200".into(),
            memory: DeviceMemory {
                total_bytes: Bytes(150_754_820_096),
                reserved_bytes: Some(Bytes(565_182_464)),
                used_bytes: Bytes(1_048_576),
                free_bytes: Bytes(150_188_589_056),
            },
            processes: vec![GpuProcess {
                pid: 4242,
                name: Some("/usr/bin/python3 -m vllm --api-key hf_abcdefghijklmnop".into()),
                used_bytes: Some(Bytes(1_048_576)),
                ..GpuProcess::default()
            }],
            ..Device::default()
        };
        let origin = LogLabels {
            namespace: "inference".into(),
            pod: "we\"ird\\pod\nname".into(),
            container: "vllm".into(),
        };
        let mut metrics = ExporterMetrics {
            hostname: "node-1".into(),
            inventory: Some(Inventory {
                devices: vec![device],
                ..Inventory::default()
            }),
            last_oom_timestamp_seconds: Some(1_764_417_600.5),
            followed_files: 2,
            log_bytes_read: 1234,
            ..ExporterMetrics::default()
        };
        metrics.process_origins.insert(4242, origin.clone());
        metrics.oom_events.insert(
            OomEventLabels {
                cause: "kv_cache_budget",
                phase: "kv_cache_alloc",
                engine: "vllm".into(),
                uuid: "GPU-5f1c0000-1111-2222-3333-444455556666".into(),
                origin: origin.clone(),
            },
            1,
        );
        metrics.startup.insert(
            EngineLabels {
                engine: "vllm".into(),
                origin,
            },
            StartupBreakdown {
                weights_bytes: Some(Bytes(16_106_127_360)),
                kv_cache_capacity_tokens: Some(23_648),
                ..StartupBreakdown::default()
            },
        );
        metrics
    }

    #[test]
    fn exposition_golden_text() {
        insta::assert_snapshot!(render(&metrics()), @r###"
        # HELP oomdoc_gpu_memory_total_bytes Total memory of the GPU (NVML total, as nvidia-smi Total).
        # TYPE oomdoc_gpu_memory_total_bytes gauge
        oomdoc_gpu_memory_total_bytes{gpu="0",UUID="GPU-5f1c0000-1111-2222-3333-444455556666",pci_bus_id="00000000:00:06.0",device="nvidia0",modelName="NVIDIA H200",Hostname="node-1"} 150754820096
        # HELP oomdoc_gpu_memory_reserved_bytes GPU memory reserved by the driver (NVML v2 reserved), usable by no process.
        # TYPE oomdoc_gpu_memory_reserved_bytes gauge
        oomdoc_gpu_memory_reserved_bytes{gpu="0",UUID="GPU-5f1c0000-1111-2222-3333-444455556666",pci_bus_id="00000000:00:06.0",device="nvidia0",modelName="NVIDIA H200",Hostname="node-1"} 565182464
        # HELP oomdoc_gpu_memory_used_bytes GPU memory used (NVML v2 used, which excludes the driver-reserved part).
        # TYPE oomdoc_gpu_memory_used_bytes gauge
        oomdoc_gpu_memory_used_bytes{gpu="0",UUID="GPU-5f1c0000-1111-2222-3333-444455556666",pci_bus_id="00000000:00:06.0",device="nvidia0",modelName="NVIDIA H200",Hostname="node-1"} 1048576
        # HELP oomdoc_gpu_memory_free_bytes GPU memory free.
        # TYPE oomdoc_gpu_memory_free_bytes gauge
        oomdoc_gpu_memory_free_bytes{gpu="0",UUID="GPU-5f1c0000-1111-2222-3333-444455556666",pci_bus_id="00000000:00:06.0",device="nvidia0",modelName="NVIDIA H200",Hostname="node-1"} 150188589056
        # HELP oomdoc_gpu_process_memory_used_bytes GPU memory used by one process (host PID), with its container where known.
        # TYPE oomdoc_gpu_process_memory_used_bytes gauge
        oomdoc_gpu_process_memory_used_bytes{gpu="0",UUID="GPU-5f1c0000-1111-2222-3333-444455556666",pci_bus_id="00000000:00:06.0",device="nvidia0",modelName="NVIDIA H200",Hostname="node-1",pid="4242",process_name="python3",namespace="inference",pod="we\"ird\\pod\nname",container="vllm"} 1048576
        # HELP oomdoc_gpu_source_up Whether the GPU source (NVML or the replay file) answered this scrape.
        # TYPE oomdoc_gpu_source_up gauge
        oomdoc_gpu_source_up 1
        # HELP oomdoc_oom_events_total Failures oomdoc explain found in the followed logs (GPU OOM, host OOM kill, other failures), by cause and failed phase.
        # TYPE oomdoc_oom_events_total counter
        oomdoc_oom_events_total{cause="kv_cache_budget",phase="kv_cache_alloc",engine="vllm",UUID="GPU-5f1c0000-1111-2222-3333-444455556666",namespace="inference",pod="we\"ird\\pod\nname",container="vllm",Hostname="node-1"} 1
        # HELP oomdoc_last_oom_timestamp_seconds When oomdoc last counted a failure, in seconds since the Unix epoch.
        # TYPE oomdoc_last_oom_timestamp_seconds gauge
        oomdoc_last_oom_timestamp_seconds{Hostname="node-1"} 1764417600.5
        # HELP oomdoc_engine_weights_bytes Model weights on the GPU, as the engine's startup log printed.
        # TYPE oomdoc_engine_weights_bytes gauge
        oomdoc_engine_weights_bytes{engine="vllm",namespace="inference",pod="we\"ird\\pod\nname",container="vllm",Hostname="node-1"} 16106127360
        # HELP oomdoc_engine_kv_cache_capacity_tokens KV-cache capacity in tokens, as the engine's startup log printed.
        # TYPE oomdoc_engine_kv_cache_capacity_tokens gauge
        oomdoc_engine_kv_cache_capacity_tokens{engine="vllm",namespace="inference",pod="we\"ird\\pod\nname",container="vllm",Hostname="node-1"} 23648
        # HELP oomdoc_followed_files Log files followed now.
        # TYPE oomdoc_followed_files gauge
        oomdoc_followed_files 2
        # HELP oomdoc_log_read_bytes_total Bytes read from followed log files.
        # TYPE oomdoc_log_read_bytes_total counter
        oomdoc_log_read_bytes_total 1234
        "###);
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        assert_eq!(escape_help("x\\y\nz"), "x\\\\y\\nz");
    }

    #[test]
    fn process_names_are_bounded() {
        assert_eq!(process_name_label("/usr/bin/python3 -m x"), "python3");
        assert_eq!(process_name_label(&"y".repeat(200)).len(), 64);
        assert_eq!(process_name_label("hf_abcdefghijklmnopqrstu"), "[REDACTED]");
    }

    #[test]
    fn no_gpu_source_shows_up_zero_and_no_gpu_series() {
        let text = render(&ExporterMetrics::default());
        assert!(text.contains("oomdoc_gpu_source_up 0\n"));
        assert!(!text.contains("oomdoc_gpu_memory_total_bytes"));
    }
}
