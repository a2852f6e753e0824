//! Parse safetensors, GGUF and config.json headers (R11, R12).
