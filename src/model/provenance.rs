//! `Source`: where a number came from. Every number oomdoc prints says so.

use serde::{Deserialize, Serialize};

/// Where a number came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The framework's own error text (PyTorch's OOM message, vLLM's error).
    FrameworkError,
    /// An engine log line (vLLM, SGLang, TGI, llama.cpp).
    EngineLog,
    /// NVML, read live.
    Nvml,
    /// `nvidia-smi` output (XML or CSV), read from a file.
    NvidiaSmi,
    /// An oomdoc recording replayed from a file.
    Replay,
    /// Container monitoring (DCGM exporter, Prometheus).
    Container,
    /// A checkpoint's own headers (safetensors, GGUF) or config.json.
    Checkpoint,
    /// A PyTorch memory snapshot.
    Snapshot,
    /// An HTTP probe of a running server.
    Probe,
    /// The user, on the command line.
    User,
    /// A documented default or table inside oomdoc (stated where used).
    Assumption,
}

impl Source {
    /// A short human label, e.g. `NVML`, `PyTorch error text`.
    pub fn label(self) -> &'static str {
        match self {
            Source::FrameworkError => "framework error text",
            Source::EngineLog => "engine log",
            Source::Nvml => "NVML",
            Source::NvidiaSmi => "nvidia-smi",
            Source::Replay => "replayed recording",
            Source::Container => "container monitoring",
            Source::Checkpoint => "checkpoint headers",
            Source::Snapshot => "PyTorch memory snapshot",
            Source::Probe => "server probe",
            Source::User => "command line",
            Source::Assumption => "oomdoc assumption",
        }
    }
}
