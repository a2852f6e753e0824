//! `Measured<T>`: a value with the source it came from (R3).
//!
//! Every number oomdoc prints says where it came from; when we parsed it from text we keep
//! the text too, since PyTorch rounds (`20.00 MiB`).

use serde::{Deserialize, Serialize};

/// Where a number came from (R3).
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

/// A value with its source and, when parsed from text, the text as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measured<T> {
    /// The value (bytes for sizes).
    pub value: T,
    /// Where it came from.
    pub source: Source,
    /// The text we parsed it from, e.g. `20.00 MiB`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub as_printed: Option<String>,
}

impl<T> Measured<T> {
    /// A value from `source` with no printed form.
    pub fn new(value: T, source: Source) -> Self {
        Measured {
            value,
            source,
            as_printed: None,
        }
    }

    /// A value parsed from text.
    pub fn printed(value: T, source: Source, as_printed: impl Into<String>) -> Self {
        Measured {
            value,
            source,
            as_printed: Some(as_printed.into()),
        }
    }
}

/// A value that may be unavailable, with the reason (style: missing data is data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Availability<T> {
    /// The value was read.
    Available {
        /// The value.
        value: T,
    },
    /// The value could not be read.
    Unavailable {
        /// Why, in words a person understands.
        reason: String,
    },
}
