//! Checkpoint headers → typed facts (R11, R12): safetensors headers, GGUF headers and
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
