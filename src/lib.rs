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
//! Beside the pipeline: `error` (the `Hint` trait and `HintedError`, imported by every layer),
//! `model` (the types every layer shares), `redact` (the one redactor, pure), and above it,
//! next to `cli`, `record` (the recorder of `oomdoc run` and the reading back of recorded runs
//! for `report` and `diff`), `probe` (`oomdoc probe`'s memory sources) and `exporter` (the
//! log follower and HTTP server of `oomdoc exporter`). `tests/layers.rs` fails when an import
//! goes the wrong way.

pub mod analyze;
pub mod cli;
pub mod env_vars;
pub mod error;
pub mod exporter;
pub mod model;
pub mod parse;
pub mod probe;
pub mod record;
pub mod redact;
pub mod render;
pub mod source;
