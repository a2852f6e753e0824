//! Findings → bytes in one format (text, markdown, JSON, HTML). Pure: renderers never
//! compute, and redaction is applied before any renderer sees a record.

pub mod diff;
pub mod explain;
pub mod fit;
pub mod gpus;
pub mod host;
pub mod html;
pub mod json;
pub mod markdown;
pub mod probe;
pub mod prometheus;
pub mod run;
pub mod run_report;
pub mod snapshot;
pub mod style;
pub mod wrap;
