//! Engine log lines → timeline facts: which engine and version, the model and its
//! settings, and the startup milestones (weights, profiling, KV cache, CUDA graphs, ready,
//! requests) with their figures.
//!
//! Pure and per line: the caller (`analyze::explain`) finds candidate lines with one
//! Aho-Corasick automaton over [`markers`] and hands each cleaned line to [`parse_line`]
//! together with the indices of the markers it contains. Nothing here sees a whole file, so a
//! 1 GiB log costs one pass of the automaton plus the few lines that match.
//!
//! Message texts are those listed in the engines' own sources,
//! read from the engines' sources; each engine module cites its files.

mod cmdline;
mod common;
mod darknet;
pub mod engines;
mod llama_cpp;
pub use llama_cpp::LOADER_METADATA;
mod phases_other;
pub use phases_other::{comfy_load_finished, is_log_prefix};
mod prose;
mod runtimes;
mod sglang;
mod stages;
mod tgi;
mod training;
mod vllm;
mod xla;

use std::sync::OnceLock;

pub use common::{parse_timestamp, shorten, Timestamp};
pub use training::xla_executable_phase;
pub use training::GDB as GDB_FRAME_FILE;
pub use training::NATIVE as NATIVE_FRAME_FILE;
pub use training::RAY_TASK;

use crate::model::explain::{EngineConfig, EventFigures, EventKind, ModelInfo, Phase};
use crate::model::failure::EngineName;

/// How sure a fact about the engine is. A stronger claim replaces a weaker one; ties keep the
/// first (e.g. ollama's own lines beat the llama.cpp lines it forwards).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Certainty {
    /// The engine named in the reporter's own sentence ("I'm running vLLM 0.6.3"): taken only
    /// when nothing else shows the engine.
    Prose,
    /// A traceback path or a generic library line (`transformers/`, `torch.distributed`).
    Weak,
    /// A line only this engine prints (`Load weight begin`, `llama_model_loader`).
    Strong,
    /// The engine's banner or version line.
    Banner,
}

/// One timeline fact from a line.
#[derive(Debug, Clone, PartialEq)]
pub struct LineEvent {
    /// What happened.
    pub kind: EventKind,
    /// The phase this event belongs to.
    pub phase: Phase,
    /// Figures on the line.
    pub figures: EventFigures,
}

/// Extra memory figures an engine prints about its own budget (all bytes, source: engine log).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineMemory {
    /// Total GPU memory as the engine saw it.
    pub total_gpu: Option<crate::model::Bytes>,
    /// Weights on the GPU.
    pub weights: Option<crate::model::Bytes>,
    /// KV-cache budget or size.
    pub kv_cache: Option<crate::model::Bytes>,
    /// Peak activation memory measured by profiling.
    pub activation_peak: Option<crate::model::Bytes>,
    /// Non-torch memory (CUDA context, NCCL, cuBLAS).
    pub non_torch: Option<crate::model::Bytes>,
    /// CUDA-graph memory.
    pub cuda_graphs: Option<crate::model::Bytes>,
    /// Compute buffers (llama.cpp).
    pub compute_buffers: Option<crate::model::Bytes>,
    /// Free memory at start as the engine reported it.
    pub free_at_start: Option<crate::model::Bytes>,
}

impl EngineMemory {
    /// Copies every figure `other` has over this one.
    pub fn merge(&mut self, other: &EngineMemory) {
        macro_rules! take {
            ($($field:ident),*) => { $( if other.$field.is_some() { self.$field = other.$field; } )* };
        }
        take!(
            total_gpu,
            weights,
            kv_cache,
            activation_peak,
            non_torch,
            cuda_graphs,
            compute_buffers,
            free_at_start
        );
    }
}

/// Everything one line says. Empty for most lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineFacts {
    /// Timeline events (usually zero or one).
    pub events: Vec<LineEvent>,
    /// The engine the line belongs to.
    pub engine: Option<(EngineName, Certainty)>,
    /// The engine version, when printed.
    pub engine_version: Option<String>,
    /// vLLM engine generation (`v0`, `v1`).
    pub generation: Option<&'static str>,
    /// Library versions (`torch` → `2.3.1`).
    pub versions: Vec<(&'static str, String)>,
    /// Model facts.
    pub model: ModelInfo,
    /// Settings.
    pub config: EngineConfig,
    /// Memory figures of the engine's own accounting.
    pub memory: EngineMemory,
    /// A traceback frame: (function, file).
    pub frame: Option<(String, String)>,
    /// The function of a rich traceback's frame whose path filled the line above
    /// (`│ /venv/…/torch/nn/modules/sparse.py:403 │` then `│ in __init__ │`).
    pub frame_function: Option<String>,
    /// The statement a notebook's arrow points at (`----> 4     out = model(**batch)`): the code
    /// of the call frame read from it.
    pub frame_code: Option<String>,
    /// The statement a rich traceback's arrow points at under its frame (`│ ❱ 51 │   masks =
    /// model(tiles).argmax(1) │`): the code of the frame printed above it.
    pub arrow_code: Option<String>,
    /// The line says explicitly which phase failed (vLLM ≥0.14 "Failed to load model").
    pub failed_phase_hint: Option<Phase>,
    /// The stage the line shows running, counted for a failure printed just before it (a
    /// progress bar redrawn under the traceback, a router span or footer reporting the error).
    pub late_phase: Option<Phase>,
    /// The line holds words that may name a stage in the reporter's own sentence (see
    /// `prose`); `analyze::phase::prose` reads them.
    pub stage_words: bool,
    /// Session 37 (p2): the line shows one part of a model's load done (a module's
    /// `load_state_dict` result, a snapshot's files fetched); see `assemble::killed_in_load_tail`.
    pub load_part: bool,
}

impl LineFacts {
    /// Whether the line said nothing.
    pub fn is_empty(&self) -> bool {
        self == &LineFacts::default()
    }

    pub(crate) fn event(&mut self, kind: EventKind, phase: Phase, figures: EventFigures) {
        self.events.push(LineEvent {
            kind,
            phase,
            figures,
        });
    }

    pub(crate) fn engine(&mut self, name: EngineName, certainty: Certainty) {
        match self.engine {
            Some(existing) if !engines::outranks((name, certainty), existing) => {}
            _ => self.engine = Some((name, certainty)),
        }
    }
}

/// A line handler: adds what the cleaned line says to the facts.
pub(crate) type Handler = fn(&str, &mut LineFacts);

/// A literal marker and the handler for lines containing it.
pub(crate) struct Rule {
    /// Literal substring (case-sensitive).
    pub marker: &'static str,
    /// The handler; several markers may share one (it runs once per line).
    pub handler: Handler,
    /// The marker names an engine or application without showing a step of its run: neutral
    /// for the deferred parsing of `analyze::explain` (see [`MarkerRole`]).
    pub names_only: bool,
}

/// Markers of lines that only ever add one more repeat of a merged event (requests, stats,
/// progress bars): when the previous event is of the same kind, the driver counts them without
/// cleaning or parsing the line (a 1 GiB serving log is mostly such lines).
const REPEATS: &[(&str, EventKind)] = &[
    ("\"POST /v1/", EventKind::Request),
    ("\"POST /generate", EventKind::Request),
    ("Received request ", EventKind::Request),
    ("Added request ", EventKind::Request),
    ("Avg prompt throughput:", EventKind::ServingStats),
    ("Decode batch.", EventKind::Request),
    ("Prefill batch.", EventKind::Request),
    ("launch_slot_", EventKind::Request),
    ("| POST ", EventKind::Request),
];

/// A rule (keeps the rule tables one line per marker).
pub(crate) const fn rule(marker: &'static str, handler: Handler) -> Rule {
    Rule {
        marker,
        handler,
        names_only: false,
    }
}

/// A rule whose marker only names an engine or application (a name, a launcher, a node class),
/// not a step of its run.
pub(crate) const fn name(marker: &'static str, handler: Handler) -> Rule {
    Rule {
        marker,
        handler,
        names_only: true,
    }
}

/// Markers of lines that begin a run of an engine (banner, engine config, launcher args).
const STARTS: &[&str] = &[
    "vLLM API server version",
    "vLLM server version",
    "LLM engine (v",
    "server_args=ServerArgs(",
    "text_generation_launcher: Args",
    "msg=\"starting llama server\"",
];

/// Markers of lines that configure a run without showing progress (settings, versions,
/// command lines, model metadata): they never end a run.
const NEUTRAL: &[&str] = &[
    "non-default args:",
    "args: Namespace(",
    "Resolved architecture:",
    "Using max model len",
    "max_num_batched_tokens=",
    "vLLM is using nccl==",
    "Automatically detected platform",
    "vLLM Version:",
    "general.name",
    "general.architecture",
    "file type   =",
    "file type =",
    "n_ctx ",
    "n_batch ",
    "build: ",
    "ggml_cuda_init: found",
    "msg=\"Listening on ",
    "Commit sha:",
    "Docker label:",
    "sglang==",
    "PyTorch version",
    "Torch version",
    "torch==",
    "transformers==",
    "vllm==",
    "` version:",
    "Driver Version:",
    "CUDA Version:",
    "CUDA used to build PyTorch:",
    "DeepSpeed info: version=",
    "vllm serve ",
    "vllm.entrypoints.openai.api_server",
    "vllm.entrypoints.api_server",
    "sglang.launch_server",
    "text-generation-launcher ",
    "text-generation-inference:",
    "llama-server ",
    "llama-cli ",
    "llama_model_load",
    "llama_load_model_from_file",
    "llm_load_tensors",
    "load_tensors:",
    "llama_init_from_model",
    "llama_init_from_gpt_params",
    "common_init_from_params",
    "ggml_metal_init",
    "ggml_metal_graph_compute",
    "ggml_vulkan: Device memory allocation",
    "load_backend: loaded",
    "source=server.go",
    "ollama_llama_server",
    "import ",
    "Epoch ",
    "This error means you ran out of memory on your GPU",
    "--windows-standalone-build",
    "Batch size per device =",
    "model.generate(",
];

/// What a marker says about the run, for deferred parsing (see `analyze::explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerRole {
    /// A run of the engine begins here.
    Start,
    /// Settings or versions: neither progress nor a new run.
    Neutral,
    /// A step of the run (or a traceback frame).
    Progress,
}

struct Table {
    markers: Vec<&'static str>,
    roles: Vec<MarkerRole>,
    repeats: Vec<Option<EventKind>>,
    handlers: Vec<Handler>,
    /// For each marker, the index of its handler in `handlers` (deduplicated).
    handler_of: Vec<usize>,
    /// For each marker, whether it matters only in a short report (see
    /// [`marker_for_reports_only`]).
    reports_only: Vec<bool>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut markers = Vec::new();
        let mut handlers: Vec<Handler> = Vec::new();
        let mut handler_of = Vec::new();
        let mut name_markers = Vec::new();
        let mut reports_only = Vec::new();
        for rules in [
            vllm::RULES,
            sglang::RULES,
            tgi::RULES,
            llama_cpp::RULES,
            training::RULES,
            phases_other::RULES,
            darknet::RULES,
            runtimes::RULES,
            stages::RULES,
            engines::RULES,
            cmdline::RULES,
            prose::RULES,
        ] {
            let prose = std::ptr::eq(rules, prose::RULES);
            for rule in rules {
                markers.push(rule.marker);
                if rule.names_only {
                    name_markers.push(rule.marker);
                }
                reports_only.push(prose || engines::reads_a_report(rule.handler));
                let index = handlers
                    .iter()
                    .position(|h| std::ptr::fn_addr_eq(*h, rule.handler))
                    .unwrap_or_else(|| {
                        handlers.push(rule.handler);
                        handlers.len() - 1
                    });
                handler_of.push(index);
            }
        }
        let repeats = markers
            .iter()
            .map(|marker| {
                REPEATS
                    .iter()
                    .find(|(literal, _)| literal == marker)
                    .map(|(_, kind)| *kind)
            })
            .collect();
        let roles = markers
            .iter()
            .map(|marker| {
                if STARTS.contains(marker) {
                    MarkerRole::Start
                } else if NEUTRAL.contains(marker)
                    || prose::MARKERS.contains(marker)
                    || name_markers.contains(marker)
                {
                    MarkerRole::Neutral
                } else {
                    MarkerRole::Progress
                }
            })
            .collect();
        Table {
            markers,
            roles,
            repeats,
            handlers,
            handler_of,
            reports_only,
        }
    })
}

/// The literal substrings that make a line worth parsing. Index `i` here is the marker index
/// passed back to [`parse_line`].
pub fn markers() -> &'static [&'static str] {
    &table().markers
}

/// Whether a marker matters only in a short report, not in a program's long log: the
/// reporter's own words (the stage words of `prose`, an engine named in a sentence, an issue
/// form's answers, a launch command or config quoted: `engines::reads_a_report`). Such a line
/// is a sentence of an issue, and these handlers pass over a program's log lines, so the
/// parsed parts of a long log (past its head) are scanned without these markers
/// (`analyze::explain`). A marker added to `prose` is one of them by default.
pub fn marker_for_reports_only(marker: usize) -> bool {
    table().reports_only.get(marker).copied().unwrap_or(false)
}

/// The role of a marker (start of a run, neutral setting, progress).
pub fn marker_role(marker: usize) -> MarkerRole {
    table()
        .roles
        .get(marker)
        .copied()
        .unwrap_or(MarkerRole::Progress)
}

/// The merged event kind a line with this marker can only repeat (see `REPEATS`), if any.
pub fn repeat_kind(marker: usize) -> Option<EventKind> {
    table().repeats.get(marker).copied().flatten()
}

/// Parses one cleaned line that contains the markers with the given indices (into
/// [`markers`]). Unknown indices are ignored; each handler runs at most once.
pub fn parse_line(text: &str, marker_indices: &[usize]) -> LineFacts {
    let table = table();
    let mut facts = LineFacts::default();
    let mut done: u128 = 0;
    let mut done_extra: Vec<usize> = Vec::new();
    for &marker in marker_indices {
        let Some(&handler_index) = table.handler_of.get(marker) else {
            continue;
        };
        if handler_index < 128 {
            if done & (1 << handler_index) != 0 {
                continue;
            }
            done |= 1 << handler_index;
        } else if done_extra.contains(&handler_index) {
            continue;
        } else {
            done_extra.push(handler_index);
        }
        (table.handlers[handler_index])(text, &mut facts);
    }
    facts
}

/// [`parse_line`] on the cleaned line, plus what only the raw line keeps: the Jupyter arrow
/// (`----> 1 out = model.generate(…)`) that cleaning removes as notebook junk names the call.
pub fn parse_line_raw(cleaned: &str, raw: &str, marker_indices: &[usize]) -> LineFacts {
    let mut facts = parse_line(cleaned, marker_indices);
    if facts.frame.is_none() && cleaned.len() != raw.len() && raw.contains("---> ") {
        training::jupyter_call(raw, &mut facts);
    }
    facts
}

/// The kinds of the events one line gives, in order (for the tests of each engine's lines).
#[cfg(test)]
pub(crate) fn event_kinds(text: &str) -> Vec<EventKind> {
    parse_line_scan(text)
        .events
        .iter()
        .map(|e| e.kind)
        .collect()
}

/// Parses a line by scanning for every marker itself (slow path for tests and small inputs).
pub fn parse_line_scan(text: &str) -> LineFacts {
    let indices: Vec<usize> = markers()
        .iter()
        .enumerate()
        .filter(|(_, marker)| text.contains(**marker))
        .map(|(index, _)| index)
        .collect();
    parse_line(text, &indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_non_empty_and_handlers_dedupe() {
        assert!(markers().iter().all(|m| m.len() >= 3));
        assert!(table().handlers.len() < table().markers.len());
    }

    #[test]
    fn role_lists_name_real_markers() {
        for marker in STARTS.iter().chain(NEUTRAL) {
            assert!(markers().contains(marker), "{marker}");
        }
        for (marker, _) in REPEATS {
            assert!(markers().contains(marker), "{marker}");
        }
    }

    #[test]
    fn plain_lines_say_nothing() {
        assert!(parse_line_scan("hello world").is_empty());
    }
}
