//! Plain data shared by every stage: what was read and measured, with units and sources.
//!
//! No I/O and no analysis here; types derive `Serialize` so every renderer (JSON included)
//! uses the same model.

pub mod bytes;
pub mod cards;
pub mod checkpoint;
pub mod explain;
pub mod exporter;
pub mod failure;
pub mod gpu;
pub mod host;
pub mod machine;
pub mod probe;
pub mod provenance;
pub mod run;
pub mod snapshot;
pub mod timeline;

pub use bytes::Bytes;
pub use provenance::Source;
