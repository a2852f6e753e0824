//! Lenient views of the parts of records `report` reads that older oomdoc versions wrote in
//! other shapes: the `explain` section of `run.json` (the rest of `run.json` is read through the
//! writer's own types by `parse::run_record`) and the probe document (`oomdoc probe --json`).
//!
//! Every field is optional, unknown fields are ignored, and a part of the wrong shape is dropped
//! with a note instead of failing the whole record. No I/O here.

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
    /// Reads explain's section of a record; parts of the wrong shape are noted in `problems`.
    pub fn from_object(object: &Map<String, Value>, problems: &mut Vec<String>) -> ExplainView {
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
    fn explain_context_blocks_and_headline_are_read() {
        let value = serde_json::json!({
            "verdict": {"cause": "transient_peak", "headline": "graph capture peak", "owner_class": "configuration"},
            "context": [
                {"failure_line": 9, "lines": [{"line": 8, "text": "a"}, {"line": 9, "text": "b"}]},
                {"failure_line": 20, "lines": [{"line": 20, "text": "c"}]}
            ],
            "timeline": [{"kind": "weights_loaded", "figures": {"bytes": 5}, "text": "t"}]
        });
        let mut problems = Vec::new();
        let explain = ExplainView::from_object(value.as_object().unwrap(), &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
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
