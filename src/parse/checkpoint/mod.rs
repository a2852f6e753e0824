//! Checkpoint headers → typed facts (R11, R12): safetensors headers, GGUF headers and
//! Hugging Face `config.json`. Pure: the caller reads a bounded prefix of each file and
//! passes the bytes with the file size; nothing here opens a file or reads tensor data.

pub mod gguf;
pub mod hf_config;
pub mod safetensors;
