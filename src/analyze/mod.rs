//! Model → findings. Pure: analyses never format and never do I/O.

pub mod accounting;
mod advice;
pub mod annotations;
pub mod compare;
pub mod devices;
pub mod explain;
pub mod exporter;
pub mod fit;
pub mod fragmentation;
pub mod growth;
pub mod host_oom;
pub mod phase;
pub mod run_explain;
pub mod run_report;
pub mod snapshot_diff;
pub mod snapshot_timeline;
pub mod timeline_memory;
pub mod verdict;
