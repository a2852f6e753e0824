//! The child's log followed live for `oomdoc run` (R4–R7): feeds each line to the explain
//! machinery and turns its timeline into phase boundaries by line, which
//! `analyze::timeline_memory` maps to times.
//!
//! TEMPORARY ADAPTER: `analyze::explain::Explainer` is not merged yet. Until it is, this module
//! recognises a handful of phase and OOM lines itself and produces an explain-shaped document
//! (`is_gpu_oom`, `engine`, `oom`, `ooms`, `phase`, `timeline`, `verdict`) marked with
//! `"adapter": "temporary"`. After `git merge main`, `LiveExplain` wraps the real `Explainer` and
//! the marker table below goes away; the interface (`push_line`, `oom_hint`, `refresh`,
//! `marks`, `report`, `finish`) stays.

use serde_json::{json, Value};

use super::timeline_memory::{Boundary, PhaseMark};

/// Phase lines the temporary adapter knows, checked in order (completion lines first, since
/// `Loading weights took` also starts with `Loading weights`). Texts from
/// `docs`-cited vLLM templates (`../shared/docs/formats.md` §3.2) plus plain-script wording.
const MARKERS: &[(&str, &str, Boundary)] = &[
    ("loading weights took", "weights_load", Boundary::End),
    ("model loading took", "weights_load", Boundary::End),
    ("loading model weights took", "weights_load", Boundary::End),
    ("starting to load model", "weights_load", Boundary::Begin),
    (
        "loading safetensors checkpoint shards",
        "weights_load",
        Boundary::Begin,
    ),
    ("loading checkpoint shards", "weights_load", Boundary::Begin),
    ("loading weights", "weights_load", Boundary::Begin),
    ("conversion took", "format_conversion", Boundary::End),
    ("converting weights", "format_conversion", Boundary::Begin),
    ("repacking weights", "format_conversion", Boundary::Begin),
    ("memory profiling takes", "profiling", Boundary::End),
    ("memory profiling", "profiling", Boundary::Begin),
    ("warming up", "profiling", Boundary::Begin),
    (
        "available kv cache memory",
        "kv_cache_alloc",
        Boundary::Begin,
    ),
    (
        "graph capturing finished",
        "cuda_graph_capture",
        Boundary::End,
    ),
    (
        "capturing cuda graph",
        "cuda_graph_capture",
        Boundary::Begin,
    ),
    (
        "capturing cudagraphs",
        "cuda_graph_capture",
        Boundary::Begin,
    ),
    ("application startup complete", "inference", Boundary::Begin),
];

const OOM_MARKERS: &[&str] = &[
    "cuda out of memory",
    "outofmemoryerror",
    "cuda error: out of memory",
];

/// The temporary stand-in for `analyze::explain::Explainer`.
#[derive(Debug, Clone)]
struct Adapter {
    context_lines: usize,
    lines: u64,
    marks: Vec<PhaseMark>,
    oom_lines: Vec<u64>,
    oom_texts: Vec<String>,
    recent: std::collections::VecDeque<String>,
    oom_context: Vec<String>,
}

impl Adapter {
    fn new(context_lines: usize) -> Self {
        Adapter {
            context_lines,
            lines: 0,
            marks: Vec::new(),
            oom_lines: Vec::new(),
            oom_texts: Vec::new(),
            recent: std::collections::VecDeque::new(),
            oom_context: Vec::new(),
        }
    }

    fn push_line(&mut self, line: &[u8]) {
        self.lines += 1;
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\n', '\r']);
        let lower = text.to_ascii_lowercase();
        for (needle, phase, boundary) in MARKERS {
            if lower.contains(needle) {
                self.marks.push(PhaseMark {
                    line: self.lines,
                    phase: (*phase).to_owned(),
                    boundary: *boundary,
                });
                break;
            }
        }
        if OOM_MARKERS.iter().any(|needle| lower.contains(needle)) {
            if self.oom_lines.is_empty() {
                self.oom_context = self.recent.iter().cloned().collect();
            }
            self.oom_lines.push(self.lines);
            self.oom_texts.push(text.to_owned());
        }
        if self.context_lines > 0 {
            if self.recent.len() == self.context_lines {
                self.recent.pop_front();
            }
            self.recent.push_back(text.to_owned());
        }
    }

    fn report(&self) -> Value {
        let completed: Vec<&PhaseMark> = self
            .marks
            .iter()
            .filter(|mark| mark.boundary == Boundary::End)
            .collect();
        let last_completed = completed.last().map(|mark| mark.phase.clone());
        let open = self
            .marks
            .last()
            .filter(|mark| mark.boundary == Boundary::Begin);
        let failed_in = if self.oom_lines.is_empty() {
            None
        } else {
            Some(
                open.map(|mark| mark.phase.clone())
                    .unwrap_or_else(|| "unknown".to_owned()),
            )
        };
        let server_was_ready = self.marks.iter().any(|mark| mark.phase == "inference");
        let timeline: Vec<Value> = self
            .marks
            .iter()
            .map(|mark| {
                json!({
                    "line": mark.line,
                    "phase": mark.phase,
                    "event": match mark.boundary { Boundary::Begin => "begin", Boundary::End => "end" },
                })
            })
            .collect();
        let ooms: Vec<Value> = self
            .oom_lines
            .iter()
            .zip(&self.oom_texts)
            .map(|(line, text)| {
                json!({
                    "line": line,
                    "text": text,
                    "gpu_index": gpu_index(text),
                    "rank": rank(text),
                })
            })
            .collect();
        json!({
            "adapter": "temporary",
            "is_gpu_oom": !self.oom_lines.is_empty(),
            "engine": null,
            "oom": ooms.first().cloned(),
            "ooms": ooms,
            "context": self.oom_context,
            "phase": {
                "failed_in": failed_in,
                "last_completed": last_completed,
                "server_was_ready": server_was_ready,
            },
            "timeline": timeline,
            "verdict": null,
        })
    }
}

/// The explain machinery fed line by line, with the phase boundaries `oomdoc run` needs.
#[derive(Debug, Clone)]
pub struct LiveExplain {
    /// `None` once finished.
    backend: Option<Adapter>,
    lines: u64,
    lines_at_refresh: u64,
    report: Value,
    marks: Vec<PhaseMark>,
    oom_lines: Vec<u64>,
    oom_hint: bool,
}

impl LiveExplain {
    /// A fresh follower keeping `context_lines` lines before an OOM (R4).
    pub fn new(context_lines: usize) -> Self {
        let backend = Adapter::new(context_lines);
        let report = backend.report();
        LiveExplain {
            backend: Some(backend),
            lines: 0,
            lines_at_refresh: 0,
            report,
            marks: Vec::new(),
            oom_lines: Vec::new(),
            oom_hint: false,
        }
    }

    /// Feeds one log line (its bytes, newline included or not). Lines are numbered from 1 in
    /// the order given, which is the order of `log.txt`.
    pub fn push_line(&mut self, line: &[u8]) {
        self.lines += 1;
        if !self.oom_hint && looks_like_oom(line) {
            self.oom_hint = true;
        }
        if let Some(backend) = &mut self.backend {
            backend.push_line(line);
        }
    }

    /// Whether a line that looks like a GPU OOM arrived (a cheap check on every line, so the
    /// sampler can take its inventory at once, before the next [`LiveExplain::refresh`]).
    pub fn oom_hint(&self) -> bool {
        self.oom_hint
    }

    /// Lines fed so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Recomputes the report when lines arrived since the last refresh; returns whether the
    /// phase boundaries or the OOMs changed (the record is then rewritten at once).
    pub fn refresh(&mut self) -> bool {
        if self.lines == self.lines_at_refresh {
            return false;
        }
        let Some(backend) = &self.backend else {
            return false;
        };
        self.lines_at_refresh = self.lines;
        self.report = backend.report();
        let changed = backend.marks != self.marks || backend.oom_lines != self.oom_lines;
        self.marks.clone_from(&backend.marks);
        self.oom_lines.clone_from(&backend.oom_lines);
        changed
    }

    /// Phase boundaries as of the last refresh, by line.
    pub fn marks(&self) -> &[PhaseMark] {
        &self.marks
    }

    /// The explain document as of the last refresh (without `schema_version`).
    pub fn report(&self) -> &Value {
        &self.report
    }

    /// Ends the input: the report and marks become final (later lines are ignored).
    pub fn finish(&mut self) {
        self.lines_at_refresh = u64::MAX;
        self.refresh();
        self.backend = None;
    }
}

/// A cheap test for an OOM line: `out of memory` or `OutOfMemory` anywhere.
fn looks_like_oom(line: &[u8]) -> bool {
    memchr::memmem::find(line, b"out of memory").is_some()
        || memchr::memmem::find(line, b"OutOfMemory").is_some()
        || memchr::memmem::find(line, b"OUT OF MEMORY").is_some()
}

/// `GPU 1 has a total capacity …` → 1 (PyTorch 2.x text, formats.md §1.2).
fn gpu_index(text: &str) -> Option<u32> {
    let at = text.find("GPU ")?;
    let digits: String = text[at + 4..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// `[rank1]: …` (torchrun's prefix) → 1.
fn rank(text: &str) -> Option<u32> {
    let rest = text.trim_start().strip_prefix("[rank")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    rest[digits.len()..].starts_with(']').then_some(())?;
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_and_oom_from_lines() {
        let mut live = LiveExplain::new(2);
        assert!(!live.refresh());
        for line in [
            "INFO starting",
            "Loading weights: shard 1/4",
            "Loading weights took 3.10 seconds",
            "Converting weights to bf16",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB.",
        ] {
            live.push_line(line.as_bytes());
        }
        assert!(live.oom_hint());
        assert!(live.marks().is_empty());
        assert!(live.refresh());
        assert!(!live.refresh());
        assert_eq!(live.marks().len(), 3);
        live.finish();
        assert_eq!(live.marks().len(), 3);
        let report = live.report();
        assert_eq!(report["ooms"][0]["line"], 5);
        assert_eq!(report["phase"]["failed_in"], "format_conversion");
        assert_eq!(report["phase"]["last_completed"], "weights_load");
        assert_eq!(report["is_gpu_oom"], true);
        assert_eq!(report["context"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn rank_and_gpu_of_an_oom_line() {
        let line = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB. GPU 1 has a total capacity of 139.80 GiB";
        assert_eq!(rank(line), Some(1));
        assert_eq!(gpu_index(line), Some(1));
        assert_eq!(rank("[ranked]: x"), None);
        assert_eq!(gpu_index("CUDA out of memory."), None);
    }
}
