//! The child's log followed live for `oomdoc run`: feeds each line to the streaming
//! [`Explainer`] and turns its timeline into phase boundaries by line, which
//! `analyze::timeline_memory` maps to times.
//!
//! Explain places the lines engines print (vLLM, SGLang, TGI, llama.cpp, transformers). A few
//! plain-script lines that no engine prints but a training or conversion script commonly does
//! (`Converting weights …`, `Conversion took …`, `Memory profiling: …`) are placed here as a
//! supplement, so a transient peak in a home-made conversion still gets its phase.

use super::explain::Explainer;
use super::timeline_memory::{Boundary, PhaseMark};
use crate::model::explain::{EventKind, ExplainReport, Phase, TimelineEvent};
use crate::model::gpu::CudaOrdinal;

/// Plain-script lines explain does not place (lowercase needles), checked in order.
const SUPPLEMENT: &[(&str, Phase, Boundary)] = &[
    ("conversion took", Phase::FormatConversion, Boundary::End),
    (
        "converting weights",
        Phase::FormatConversion,
        Boundary::Begin,
    ),
    (
        "repacking weights",
        Phase::FormatConversion,
        Boundary::Begin,
    ),
    (
        "quantizing weights",
        Phase::FormatConversion,
        Boundary::Begin,
    ),
    ("memory profiling:", Phase::Profiling, Boundary::Begin),
];

fn supplement_automaton() -> Option<&'static aho_corasick::AhoCorasick> {
    static AUTOMATON: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>> =
        std::sync::OnceLock::new();
    AUTOMATON
        .get_or_init(|| {
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                .build(SUPPLEMENT.iter().map(|(needle, _, _)| needle))
                .ok()
        })
        .as_ref()
}

/// The explain machinery fed line by line, with the phase boundaries `oomdoc run` needs.
#[derive(Debug)]
pub struct LiveExplain {
    /// `None` once finished.
    explainer: Option<Explainer>,
    lines: u64,
    lines_at_refresh: u64,
    report: ExplainReport,
    marks: Vec<PhaseMark>,
    supplement: Vec<PhaseMark>,
    oom_count: u64,
    oom_hint: bool,
}

impl Default for LiveExplain {
    fn default() -> Self {
        LiveExplain::new()
    }
}

impl LiveExplain {
    /// A fresh follower.
    pub fn new() -> Self {
        let explainer = Explainer::new();
        let report = explainer.report();
        LiveExplain {
            explainer: Some(explainer),
            lines: 0,
            lines_at_refresh: 0,
            report,
            marks: Vec::new(),
            supplement: Vec::new(),
            oom_count: 0,
            oom_hint: false,
        }
    }

    /// Feeds complete lines (each ending in `\n`, as [`crate::source::process::LineSplitter`]
    /// gives them). Lines are numbered from 1 in the order given, the order of `log.txt`.
    pub fn push_lines(&mut self, bytes: &[u8]) {
        let Some(explainer) = &mut self.explainer else {
            return;
        };
        let first_line = self.lines + 1;
        self.lines += memchr::memchr_iter(b'\n', bytes).count() as u64;
        explainer.push_bytes(bytes);
        if !bytes.ends_with(b"\n") {
            explainer.push_bytes(b"\n");
            self.lines += 1;
        }
        if !self.oom_hint && looks_like_oom(bytes) {
            self.oom_hint = true;
        }
        let Some(automaton) = supplement_automaton() else {
            return;
        };
        let mut line = first_line;
        let mut counted_to = 0;
        let mut last_marked = 0;
        for found in automaton.find_iter(bytes) {
            line += memchr::memchr_iter(b'\n', &bytes[counted_to..found.start()]).count() as u64;
            counted_to = found.start();
            if line == last_marked {
                continue;
            }
            last_marked = line;
            let (_, phase, boundary) = SUPPLEMENT[found.pattern().as_usize()];
            self.supplement.push(PhaseMark {
                line,
                phase,
                boundary,
            });
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
        let Some(explainer) = &self.explainer else {
            return false;
        };
        self.lines_at_refresh = self.lines;
        let report = explainer.report();
        self.update(&report)
    }

    fn update(&mut self, report: &ExplainReport) -> bool {
        let mut marks: Vec<PhaseMark> = report.timeline.iter().filter_map(mark_of).collect();
        for extra in &self.supplement {
            if !marks.iter().any(|mark| mark.line == extra.line) {
                marks.push(extra.clone());
            }
        }
        marks.sort_by_key(|mark| mark.line);
        let oom_count = report.ooms_total.max(report.ooms.len() as u64);
        let changed = marks != self.marks || oom_count != self.oom_count;
        self.marks = marks;
        self.oom_count = oom_count;
        self.report = report.clone();
        changed
    }

    /// Phase boundaries as of the last refresh, by line.
    pub fn marks(&self) -> &[PhaseMark] {
        &self.marks
    }

    /// The `oomdoc explain --json` document (without `schema_version`) as of the last refresh.
    pub fn report(&self) -> &ExplainReport {
        &self.report
    }

    /// Ends the input (finishing the last line and any open message): report and marks become
    /// final; later lines are ignored.
    pub fn finish(&mut self) {
        if let Some(explainer) = self.explainer.take() {
            let report = explainer.finish();
            self.update(&report);
        }
    }
}

/// The phase boundary a timeline event shows, following `analyze::phase::Progress`: start and
/// progress lines open (or continue) their phase, completion lines close it.
fn mark_of(event: &TimelineEvent) -> Option<PhaseMark> {
    use EventKind as K;
    if event.phase == Phase::Unknown {
        return None;
    }
    let boundary = match event.kind {
        K::EngineStart
        | K::DeviceInit
        | K::DownloadStart
        | K::WeightsLoadStart
        | K::WeightsLoadProgress
        | K::WeightsRead
        | K::FormatConversion
        | K::ProfilingStart
        | K::CudaGraphCaptureStart
        | K::KvCachePlanned
        | K::Compile
        | K::Request
        | K::TrainingStep
        | K::Evaluation => Boundary::Begin,
        K::WeightsLoaded
        | K::ProfilingDone
        | K::KvCacheAllocated
        | K::CudaGraphCaptureDone
        | K::EngineReady => Boundary::End,
        K::ServerReady => {
            // Ready to serve: what follows is serving.
            return Some(PhaseMark {
                line: event.line,
                phase: Phase::Inference,
                boundary: Boundary::Begin,
            });
        }
        K::DownloadDone
        | K::KvConcurrency
        | K::ServingStats
        | K::KvPressure
        | K::CheckpointSave
        | K::EngineBuild
        | K::Traceback
        | K::Failure
        | K::Shutdown
        | K::FailuresOnly => return None,
    };
    Some(PhaseMark {
        line: event.line,
        phase: event.phase,
        boundary,
    })
}

/// The CUDA ordinal a PyTorch OOM text names (`… GPU 1 has a total capacity …`, `c10/cuda/CUDACachingAllocator.cpp`
/// by version), for messages whose figures lack it.
pub fn cuda_ordinal_in_text(text: &str) -> Option<CudaOrdinal> {
    let at = text.find(" has a total capacity")?;
    let before = text[..at].trim_end();
    let digits = before.rsplit(' ').next()?;
    before[..before.len() - digits.len()]
        .trim_end()
        .ends_with("GPU")
        .then(|| digits.parse().ok())
        .flatten()
}

/// A cheap test for an OOM line: `out of memory` or `OutOfMemory` anywhere.
fn looks_like_oom(line: &[u8]) -> bool {
    memchr::memmem::find(line, b"out of memory").is_some()
        || memchr::memmem::find(line, b"OutOfMemory").is_some()
        || memchr::memmem::find(line, b"OUT OF MEMORY").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(lines: &[&str]) -> LiveExplain {
        let mut live = LiveExplain::new();
        for line in lines {
            live.push_lines(format!("{line}\n").as_bytes());
        }
        live
    }

    #[test]
    fn phases_from_vllm_lines_and_the_supplement() {
        let mut live = feed(&[
            "INFO 11-29 17:00:00 [gpu_model_runner.py:1] Starting to load model demo...",
            "INFO 11-29 17:00:02 [default_loader.py:1] Loading weights took 2.10 seconds",
            "INFO 11-29 17:00:02 [gpu_model_runner.py:1] Model loading took 20.0000 GiB and 2.200000 seconds",
            "INFO Converting weights to fp8 (repack)",
            "INFO Conversion took 0.64 seconds",
            "INFO Memory profiling: dummy forward pass",
        ]);
        assert!(!live.oom_hint());
        assert!(live.marks().is_empty());
        assert!(live.refresh());
        assert!(!live.refresh());
        let marks: Vec<(u64, &str, Boundary)> = live
            .marks()
            .iter()
            .map(|mark| (mark.line, mark.phase.as_str(), mark.boundary))
            .collect();
        assert_eq!(
            marks,
            vec![
                (1, "weights_load", Boundary::Begin),
                (2, "weights_load", Boundary::Begin),
                (3, "weights_load", Boundary::End),
                (4, "format_conversion", Boundary::Begin),
                (5, "format_conversion", Boundary::End),
                (6, "profiling", Boundary::Begin),
            ]
        );
    }

    #[test]
    fn gpu_ordinal_from_text() {
        assert_eq!(
            cuda_ordinal_in_text(
                "Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.10 GiB"
            ),
            Some(CudaOrdinal(3))
        );
        assert_eq!(cuda_ordinal_in_text("CUDA out of memory."), None);
        assert_eq!(cuda_ordinal_in_text("Device 2 has a total capacity"), None);
    }

    #[test]
    fn lines_fed_in_chunks_keep_their_numbers() {
        let mut live = LiveExplain::new();
        live.push_lines(b"a\nConverting weights\nb\n");
        live.push_lines(b"c\nCONVERSION TOOK 1 s\n");
        assert_eq!(live.lines(), 5);
        assert!(live.refresh());
        let marks: Vec<(u64, Boundary)> = live
            .marks()
            .iter()
            .map(|mark| (mark.line, mark.boundary))
            .collect();
        assert_eq!(marks, vec![(2, Boundary::Begin), (5, Boundary::End)]);
    }

    #[test]
    fn oom_of_a_rank_is_reported() {
        let mut live = feed(&[
            "[rank1]: Traceback (most recent call last):",
            "[rank1]:   File \"x.py\", line 3, in profile_run",
            "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 139.80 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process has 138.00 GiB memory in use. Of the allocated memory 137.00 GiB is allocated by PyTorch, and 10.00 MiB is reserved by PyTorch but unallocated.",
        ]);
        assert!(live.oom_hint());
        live.finish();
        let report = live.report();
        assert!(report.is_gpu_oom);
        assert_eq!(report.ooms[0].line, 3);
        assert_eq!(report.ooms[0].stream.as_deref(), Some("rank1"));
        assert_eq!(
            cuda_ordinal_in_text(&report.ooms[0].text),
            Some(CudaOrdinal(1))
        );
        // Finished: more lines change nothing.
        live.push_lines(b"Loading weights took 1 seconds\n");
        assert!(!live.refresh());
        assert_eq!(live.lines(), 3);
    }
}
