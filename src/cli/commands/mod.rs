//! One verb, one file.

pub mod diff;
pub mod explain;
pub mod exporter;
pub mod fit;
pub mod gpus;
pub mod probe;
pub mod report;
pub mod run;
pub mod snapshot;
