//! Checkpoint headers → typed facts: safetensors headers, GGUF headers and
//! Hugging Face `config.json`. Pure: the caller reads a bounded prefix of each file and
//! passes the bytes with the file size; nothing here opens a file or reads tensor data.

pub mod gguf;
pub mod hf_config;
pub mod safetensors;

/// One safetensors file's header, read by `source`.
#[derive(Debug, Clone)]
pub struct SafetensorsInput {
    /// Path as shown.
    pub path: String,
    /// File size.
    pub size_bytes: u64,
    /// 8 + header length.
    pub header_bytes: u64,
    /// The parsed header.
    pub header: safetensors::SafetensorsHeader,
}

/// One GGUF file's header.
#[derive(Debug, Clone)]
pub struct GgufInput {
    /// Path as shown.
    pub path: String,
    /// File size.
    pub size_bytes: u64,
    /// The parsed header.
    pub header: gguf::GgufHeader,
}

/// Everything read from a checkpoint (by `source::checkpoint::read`), what `analyze::fit` takes.
#[derive(Debug, Clone)]
pub struct FitInput {
    /// PATH as given.
    pub path: String,
    /// What it is.
    pub kind: crate::model::checkpoint::CheckpointKind,
    /// safetensors headers.
    pub safetensors: Vec<SafetensorsInput>,
    /// GGUF headers (a split set in order).
    pub gguf: Vec<GgufInput>,
    /// config.json.
    pub config: Option<hf_config::HfConfig>,
    /// model.safetensors.index.json.
    pub index: Option<hf_config::ShardIndex>,
    /// Directory, file and model-id names, checked for format words.
    pub names: Vec<String>,
    /// Limitations found while reading.
    pub limitations: Vec<String>,
}
