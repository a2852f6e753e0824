//! Lenient views of the records `report` and `diff` read: `run.json` (written by `oomdoc run`,
//! format in `docs/run-record.md`) and the probe document (`oomdoc probe --json`).
//!
//! These are deliberately not the writers' own types: every field is optional, unknown fields
//! are ignored, and a section of the wrong shape is dropped with a note instead of failing the
//! whole record, so a report can still be written from a partial or older record. No I/O here.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// `null`, absent and present all read; `null` gives the default.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A value of any JSON type read as text: strings as they are, numbers and booleans printed,
/// `null` as nothing, arrays and objects as compact JSON.
pub fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) => Some(number.to_string()),
        other => Some(other.to_string()),
    }
}

/// A value read as a list of lines: a string is one line, an array gives one line per item
/// (objects by their `text`, `message`, `summary` or `description` field, else compact JSON).
pub fn value_lines(value: &Value) -> Vec<String> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().filter_map(item_text).collect(),
        other => item_text(other).into_iter().collect(),
    }
}

fn item_text(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) => [
            "text",
            "message",
            "summary",
            "description",
            "step",
            "detail",
        ]
        .iter()
        .find_map(|key| map.get(*key).and_then(Value::as_str))
        .map(str::to_owned)
        .or_else(|| Some(value.to_string())),
        other => value_text(other),
    }
}

/// Reads one field of an object; a field of the wrong shape is reported in `problems` and
/// read as the default.
fn field<T: DeserializeOwned + Default>(
    object: &Map<String, Value>,
    key: &str,
    context: &str,
    problems: &mut Vec<String>,
) -> T {
    match object.get(key) {
        None | Some(Value::Null) => T::default(),
        Some(value) => match serde_json::from_value(value.clone()) {
            Ok(parsed) => parsed,
            Err(error) => {
                problems.push(format!(
                    "field `{context}{key}` is not in the expected shape and was ignored: {error}"
                ));
                T::default()
            }
        },
    }
}

/// The parts of `run.json` a report uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunRecordView {
    /// Must be 1.
    pub schema_version: Option<u64>,
    /// The oomdoc that wrote the record.
    pub oomdoc_version: Option<String>,
    /// `running`, `exited`, `signaled`, `interrupted`, `spawn_failed`.
    pub status: Option<String>,
    /// The command line, one argument per item.
    pub command: Vec<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Exit code (128+N when killed by signal N).
    pub exit_code: Option<i64>,
    /// Signal that killed the child.
    pub signal: Option<i64>,
    /// Whether oomdoc forwarded SIGINT/SIGTERM.
    pub interrupted: Option<bool>,
    /// RFC 3339 start time.
    pub started_at: Option<String>,
    /// RFC 3339 end time.
    pub ended_at: Option<String>,
    /// Duration in milliseconds.
    pub duration_ms: Option<u64>,
    /// Machine state before start.
    pub preflight: PreflightView,
    /// Where the child's log is.
    pub log: Option<LogView>,
    /// The `explain` result of the log.
    pub explain: Option<ExplainView>,
    /// The memory timeline.
    pub memory: Option<MemoryView>,
    /// Phase spans on the run's clock.
    pub phases: Vec<PhaseSpanView>,
    /// A PyTorch snapshot file, when one was produced.
    pub torch_snapshot: Option<Value>,
    /// OOM lines of the log with the time they arrived and the device by UUID.
    pub ooms: Vec<RunOomView>,
    /// What the run could not measure.
    pub limitations: Vec<String>,
    /// Host memory and the host out-of-memory verdict, when the run sampled it.
    pub host: Option<crate::model::run::HostRecord>,
}

/// One entry of `run.json`'s top-level `ooms`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunOomView {
    /// 1-based line in the log.
    pub line: Option<u64>,
    /// When the line arrived, ms since start.
    pub t_ms: Option<u64>,
    /// torchrun rank, when shown.
    pub rank: Option<u32>,
    /// CUDA ordinal in the message.
    pub gpu_index: Option<u32>,
    /// The device by UUID.
    pub device_uuid: Option<String>,
}

impl RunRecordView {
    /// Reads a record from parsed JSON. Sections of the wrong shape are dropped and described
    /// in the returned problems.
    pub fn from_value(value: &Value) -> (RunRecordView, Vec<String>) {
        let mut problems = Vec::new();
        let Some(object) = value.as_object() else {
            problems.push("run.json is not a JSON object".to_owned());
            return (RunRecordView::default(), problems);
        };
        let problems_ref = &mut problems;
        let explain = match object.get("explain") {
            Some(Value::Object(explain)) => Some(ExplainView::from_object(explain, problems_ref)),
            _ => None,
        };
        let record = RunRecordView {
            schema_version: field(object, "schema_version", "", problems_ref),
            oomdoc_version: field(object, "oomdoc_version", "", problems_ref),
            status: field(object, "status", "", problems_ref),
            command: field(object, "command", "", problems_ref),
            cwd: field(object, "cwd", "", problems_ref),
            exit_code: field(object, "exit_code", "", problems_ref),
            signal: field(object, "signal", "", problems_ref),
            interrupted: field(object, "interrupted", "", problems_ref),
            started_at: field(object, "started_at", "", problems_ref),
            ended_at: field(object, "ended_at", "", problems_ref),
            duration_ms: field(object, "duration_ms", "", problems_ref),
            preflight: field(object, "preflight", "", problems_ref),
            log: field(object, "log", "", problems_ref),
            explain,
            memory: field(object, "memory", "", problems_ref),
            phases: field(object, "phases", "", problems_ref),
            torch_snapshot: object
                .get("torch_snapshot")
                .filter(|v| !v.is_null())
                .cloned(),
            ooms: field(object, "ooms", "", problems_ref),
            limitations: field(object, "limitations", "", problems_ref),
            host: field(object, "host", "", problems_ref),
        };
        (record, problems)
    }
}

/// `preflight`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PreflightView {
    /// The `oomdoc gpus --json` document.
    pub inventory: Option<InventoryView>,
    /// Why there is no inventory.
    pub inventory_error: Option<String>,
    /// Relevant environment variables (already redacted by the writer).
    #[serde(deserialize_with = "null_as_default")]
    pub environment: BTreeMap<String, Value>,
    /// Digests of the other variables' values, by name (absent in records before they were kept).
    #[serde(deserialize_with = "null_as_default")]
    pub other_environment: BTreeMap<String, String>,
    /// Host facts.
    pub host: Option<Value>,
}

/// `preflight.inventory`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InventoryView {
    /// Where the inventory came from.
    pub source: Option<Value>,
    /// Driver version.
    pub driver_version: Option<String>,
    /// CUDA version the driver supports.
    pub cuda_version: Option<String>,
    /// NVML library version.
    pub nvml_version: Option<String>,
    /// Devices.
    #[serde(deserialize_with = "null_as_default")]
    pub devices: Vec<DeviceView>,
    /// What could not be read.
    #[serde(deserialize_with = "null_as_default")]
    pub limitations: Vec<String>,
}

/// One device of the inventory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceView {
    /// NVML index.
    pub index: Option<u32>,
    /// `GPU-…` UUID.
    pub uuid: Option<String>,
    /// PCI bus id.
    pub pci_bus_id: Option<String>,
    /// Product name.
    pub name: Option<String>,
    /// CUDA ordinal under the run's environment.
    pub cuda_ordinal: Option<u32>,
    /// Memory.
    pub memory: Option<DeviceMemoryView>,
    /// Processes.
    #[serde(deserialize_with = "null_as_default")]
    pub processes: Vec<ProcessView>,
    /// MIG mode.
    pub mig_mode: Option<String>,
}

/// Device memory in exact bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceMemoryView {
    /// Total.
    pub total_bytes: Option<u64>,
    /// Driver-reserved.
    pub reserved_bytes: Option<u64>,
    /// Used.
    pub used_bytes: Option<u64>,
    /// Free.
    pub free_bytes: Option<u64>,
}

/// A GPU process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProcessView {
    /// Host PID.
    pub pid: Option<u32>,
    /// Name or command line.
    pub name: Option<String>,
    /// Bytes used.
    pub used_bytes: Option<u64>,
    /// Why `used_bytes` is missing.
    pub unavailable_reason: Option<String>,
}

/// `log`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogView {
    /// File name next to run.json.
    pub file: Option<String>,
    /// Size.
    pub bytes: Option<u64>,
    /// Line count.
    pub lines: Option<u64>,
}

/// `explain` (the `oomdoc explain --json` document).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExplainView {
    /// Whether the failure is a GPU out-of-memory.
    pub is_gpu_oom: Option<bool>,
    /// Engine name and version.
    pub engine: Option<EngineView>,
    /// What the log says about the model (shape not fixed: read leniently).
    pub model: Option<Value>,
    /// The first OOM's figures.
    pub oom: Option<OomView>,
    /// Every OOM message.
    pub ooms: Vec<Value>,
    /// The phase.
    pub phase: Option<PhaseView>,
    /// Timeline events (shape read leniently).
    pub timeline: Vec<Value>,
    /// The verdict.
    pub verdict: Option<VerdictView>,
    /// Library versions seen.
    pub versions: BTreeMap<String, Value>,
    /// The log lines around the failure, when explain kept them.
    pub context: Vec<String>,
    /// The engine configuration the log shows (`max_model_len`, `max_num_seqs`, …).
    pub config: Option<Value>,
    /// How many OOM messages the log held.
    pub ooms_total: Option<u64>,
}

/// Context lines: a list of strings, or explain's blocks `[{failure_line, lines: [{line, text}]}]`
/// flattened (a `…` line between blocks).
fn context_lines(value: &Value) -> Vec<String> {
    let Value::Array(items) = value else {
        return value_lines(value);
    };
    let mut lines = Vec::new();
    for item in items {
        match item.get("lines") {
            Some(Value::Array(block)) => {
                if !lines.is_empty() {
                    lines.push("…".to_owned());
                }
                lines.extend(block.iter().filter_map(item_text));
            }
            _ => lines.extend(item_text(item)),
        }
    }
    lines
}

impl ExplainView {
    fn from_object(object: &Map<String, Value>, problems: &mut Vec<String>) -> ExplainView {
        let verdict = object
            .get("verdict")
            .and_then(Value::as_object)
            .map(|v| VerdictView {
                // `headline` is the sentence, `cause` the class word (`transient_peak`, …).
                cause: v
                    .get("headline")
                    .and_then(value_text)
                    .or_else(|| v.get("cause").and_then(value_text)),
                cause_kind: v
                    .get("headline")
                    .and_then(|_| v.get("cause").and_then(value_text)),
                owner_class: v.get("owner_class").and_then(value_text),
                evidence: v.get("evidence").map(value_lines).unwrap_or_default(),
                next_steps: v.get("next_steps").map(value_lines).unwrap_or_default(),
                owner_summary: v
                    .get("owner_summary")
                    .map(value_lines)
                    .map(|lines| lines.join(" "))
                    .filter(|text| !text.is_empty()),
            });
        let context = ["context", "context_lines", "excerpt", "lines_before"]
            .iter()
            .find_map(|key| object.get(*key))
            .map(context_lines)
            .unwrap_or_default();
        ExplainView {
            is_gpu_oom: field(object, "is_gpu_oom", "explain.", problems),
            engine: field(object, "engine", "explain.", problems),
            model: object.get("model").filter(|v| !v.is_null()).cloned(),
            oom: field(object, "oom", "explain.", problems),
            ooms: field(object, "ooms", "explain.", problems),
            phase: field(object, "phase", "explain.", problems),
            timeline: field(object, "timeline", "explain.", problems),
            verdict,
            versions: field(object, "versions", "explain.", problems),
            context,
            config: object.get("config").filter(|v| v.is_object()).cloned(),
            ooms_total: object.get("ooms_total").and_then(Value::as_u64),
        }
    }
}

/// `explain.engine`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineView {
    /// `vllm`, `sglang`, `tgi`, `llamacpp`, `ollama`, `transformers`, `deepspeed`, `pytorch`, `other`.
    pub name: Option<String>,
    /// Version as logged.
    pub version: Option<String>,
}

/// `explain.oom`: figures in exact bytes, as printed by the framework.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OomView {
    /// GPU index in the message (CUDA ordinal of the process).
    pub gpu_index: Option<u32>,
    /// "Tried to allocate".
    pub tried_to_allocate_bytes: Option<u64>,
    /// "total capacity of".
    pub total_capacity_bytes: Option<u64>,
    /// "of which … is free".
    pub free_bytes: Option<u64>,
    /// "this process has … in use".
    pub process_in_use_bytes: Option<u64>,
    /// "… is allocated by PyTorch".
    pub allocated_by_pytorch_bytes: Option<u64>,
    /// "… reserved by PyTorch but unallocated".
    pub reserved_unallocated_bytes: Option<u64>,
    /// "reserved in total by PyTorch".
    pub reserved_total_bytes: Option<u64>,
    /// "allocated in private pools".
    pub private_pools_bytes: Option<u64>,
    /// Other processes named in the text.
    #[serde(deserialize_with = "null_as_default")]
    pub other_processes: Vec<OtherProcessView>,
    /// The message kind, when given.
    pub kind: Option<String>,
}

/// A process named in an OOM text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OtherProcessView {
    /// PID.
    pub pid: Option<u32>,
    /// Bytes in use.
    pub in_use_bytes: Option<u64>,
}

/// `explain.phase`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhaseView {
    /// The phase in progress when it failed.
    pub failed_in: Option<String>,
    /// The last phase that completed.
    pub last_completed: Option<String>,
    /// Whether the server accepted requests before the failure.
    pub server_was_ready: Option<bool>,
}

/// `explain.verdict`, each part read as text lines whatever its JSON shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VerdictView {
    /// The likely cause, as a sentence.
    pub cause: Option<String>,
    /// The cause's class word, when explain gives one (`transient_peak`, `weights_do_not_fit`, …).
    pub cause_kind: Option<String>,
    /// explain's owner class: `hardware_limit`, `configuration`, `not_gpu_memory`, `undetermined`.
    pub owner_class: Option<String>,
    /// Evidence lines.
    pub evidence: Vec<String>,
    /// Next steps.
    pub next_steps: Vec<String>,
    /// The owner summary.
    pub owner_summary: Option<String>,
}

/// `memory`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryView {
    /// False when there is no timeline (no NVML).
    pub available: Option<bool>,
    /// Why not.
    pub reason: Option<String>,
    /// `nvml`, …
    pub source: Option<String>,
    /// Sampling rate.
    pub sample_rate_hz: Option<f64>,
    /// Per device.
    #[serde(deserialize_with = "null_as_default")]
    pub devices: Vec<MemoryDeviceView>,
    /// An inventory taken when the first OOM line appeared.
    pub inventory_at_oom: Option<InventoryView>,
}

/// The memory timeline of one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryDeviceView {
    /// UUID.
    pub uuid: Option<String>,
    /// NVML index.
    pub index: Option<u32>,
    /// CUDA ordinal.
    pub cuda_ordinal: Option<u32>,
    /// Product name.
    pub name: Option<String>,
    /// Total bytes.
    pub total_bytes: Option<u64>,
    /// Used bytes before the child started.
    pub baseline_used_bytes: Option<u64>,
    /// Free bytes before the child started.
    pub baseline_free_bytes: Option<u64>,
    /// Peak used bytes.
    pub peak_used_bytes: Option<u64>,
    /// When the peak happened.
    pub peak_t_ms: Option<u64>,
    /// Phase at the peak.
    pub peak_phase: Option<String>,
    /// Peak per phase.
    #[serde(deserialize_with = "null_as_default")]
    pub peaks_by_phase: BTreeMap<String, u64>,
    /// `[t_ms, used_bytes]` pairs.
    #[serde(deserialize_with = "null_as_default")]
    pub samples: Vec<(u64, u64)>,
    /// Samples taken (before compaction).
    pub sample_count: Option<u64>,
    /// Highest memory per process on this device.
    #[serde(deserialize_with = "null_as_default")]
    pub processes: Vec<ProcessPeakView>,
}

/// Highest memory of one process on one device during the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProcessPeakView {
    /// Host PID.
    pub pid: Option<u32>,
    /// Name.
    pub name: Option<String>,
    /// Highest used bytes seen.
    pub peak_used_bytes: Option<u64>,
    /// When.
    pub peak_t_ms: Option<u64>,
    /// Whether it is the child or one of its descendants.
    pub is_child: Option<bool>,
}

/// One phase span.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhaseSpanView {
    /// Phase name (explain's vocabulary).
    pub phase: Option<String>,
    /// Start, ms since `started_at`.
    pub start_t_ms: Option<u64>,
    /// End, ms since `started_at`; absent while in progress.
    pub end_t_ms: Option<u64>,
}

/// The parts of a probe document (`oomdoc probe URL --json`) a report uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProbeView {
    /// `plateau`, `growth` or `inconclusive` (read as text whatever its shape).
    pub verdict: Option<Value>,
    /// Requests sent.
    #[serde(deserialize_with = "null_as_default")]
    pub requests: Vec<ProbeRequestView>,
    /// Plateau level.
    pub plateau_bytes: Option<u64>,
    /// What the probe could not measure.
    #[serde(deserialize_with = "null_as_default")]
    pub limitations: Vec<String>,
}

/// One probe request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProbeRequestView {
    /// `warmup`, `identical`, `alternating`, `concurrent`.
    pub phase: Option<String>,
    /// Index within its phase.
    pub index: Option<u64>,
    /// Prompt length in characters.
    pub prompt_chars: Option<u64>,
    /// HTTP status or an error word.
    pub status: Option<Value>,
    /// Latency.
    pub latency_ms: Option<f64>,
    /// Device memory after the request.
    pub memory_bytes: Option<u64>,
    /// The error, when the request failed.
    pub error: Option<String>,
}

impl ProbeRequestView {
    /// Whether the request succeeded (HTTP 2xx or `ok`).
    pub fn succeeded(&self) -> bool {
        match &self.status {
            Some(Value::Number(number)) => number.as_u64().is_some_and(|s| (200..300).contains(&s)),
            Some(Value::String(text)) => {
                let text = text.to_ascii_lowercase();
                text == "ok" || text.starts_with('2')
            }
            _ => false,
        }
    }
}

impl ProbeView {
    /// The verdict as a word.
    pub fn verdict_text(&self) -> Option<String> {
        match &self.verdict {
            Some(Value::Object(map)) => ["verdict", "kind", "class", "result"]
                .iter()
                .find_map(|key| map.get(*key).and_then(value_text)),
            Some(other) => value_text(other),
            None => None,
        }
    }
}

/// The weights lower bound of the checkpoint, from `oomdoc fit`'s reading of its headers.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CheckpointFacts {
    /// Path given with `--checkpoint` (redacted).
    pub path: Option<String>,
    /// Format (`safetensors`, `gguf`, …).
    pub format: Option<String>,
    /// Weight bytes summed from the headers.
    pub weights_total_bytes: Option<u64>,
    /// Weight bytes per dtype.
    pub by_dtype: BTreeMap<String, u64>,
    /// Parameter count, when known.
    pub parameters: Option<u64>,
    /// Where the figures come from.
    pub source: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_shaped_section_is_dropped_with_a_note() {
        let value = serde_json::json!({
            "schema_version": 1,
            "command": ["vllm", "serve", "m"],
            "memory": "not an object",
            "phases": null,
            "explain": {"phase": {"failed_in": "weights_load"}, "verdict": {"evidence": "one line"}},
        });
        let (record, problems) = RunRecordView::from_value(&value);
        assert_eq!(record.command, ["vllm", "serve", "m"]);
        assert!(record.memory.is_none());
        assert!(record.phases.is_empty());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("`memory`"));
        let explain = record.explain.unwrap_or_default();
        assert_eq!(
            explain.phase.and_then(|p| p.failed_in).as_deref(),
            Some("weights_load")
        );
        assert_eq!(explain.verdict.unwrap_or_default().evidence, ["one line"]);
    }

    #[test]
    fn explain_context_blocks_and_headline_are_read() {
        let value = serde_json::json!({
            "schema_version": 1,
            "explain": {
                "verdict": {"cause": "transient_peak", "headline": "graph capture peak", "owner_class": "configuration"},
                "context": [
                    {"failure_line": 9, "lines": [{"line": 8, "text": "a"}, {"line": 9, "text": "b"}]},
                    {"failure_line": 20, "lines": [{"line": 20, "text": "c"}]}
                ],
                "timeline": [{"kind": "weights_loaded", "figures": {"bytes": 5}, "text": "t"}]
            }
        });
        let (record, problems) = RunRecordView::from_value(&value);
        assert!(problems.is_empty(), "{problems:?}");
        let explain = record.explain.unwrap_or_default();
        assert_eq!(explain.context, ["a", "b", "…", "c"]);
        let verdict = explain.verdict.unwrap_or_default();
        assert_eq!(verdict.cause.as_deref(), Some("graph capture peak"));
        assert_eq!(verdict.cause_kind.as_deref(), Some("transient_peak"));
        assert_eq!(verdict.owner_class.as_deref(), Some("configuration"));
    }

    #[test]
    fn probe_status_accepts_numbers_and_words() {
        let ok: ProbeRequestView =
            serde_json::from_value(serde_json::json!({"status": 200})).unwrap();
        let failed: ProbeRequestView =
            serde_json::from_value(serde_json::json!({"status": "error"})).unwrap();
        assert!(ok.succeeded());
        assert!(!failed.succeeded());
    }
}
