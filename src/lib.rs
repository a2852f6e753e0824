//! oomdoc tells a person why a GPU ran out of memory and what to do about it.
//!
//! The crate is a pipeline; arrows go one way and only `source` and `cli` do I/O:
//!
//! ```text
//!  source/ (I/O)            parse/ (pure)                model/   analyze/ (pure)     render/ (pure)
//!  error text, stdin ─────▶ oom_text/ ─────────────┐
//!  engine logs ───────────▶ engine_log/ ───────────┤
//!  NVML | replay file ────▶ nvidia_smi ────────────┤
//!  container env ─────────▶ container_env ─────────┼─▶ Run ─▶ accounting, phase, ─▶ Report ─▶ text
//!  safetensors/GGUF/config▶ checkpoint/ ───────────┤          devices, fit, growth,          markdown
//!  snapshot pickle ───────▶ pickle → torch_snapshot┤          fragmentation,                 json, html
//!  HTTP server probe ─────▶ probe samples ─────────┘          compare, verdict     (stdout or -o FILE)
//! ```
//!
//! Requirements R1–R19 are cited in comments; they live in the project's mission document.

pub mod analyze;
pub mod cli;
pub mod env_vars;
pub mod error;
pub mod model;
pub mod parse;
pub mod record;
pub mod redact;
pub mod render;
pub mod source;
