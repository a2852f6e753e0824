//! Bytes → typed facts. Pure: no files, environment, clock, terminal or NVML.

pub mod bounded_json;
pub mod cgroup;
pub mod checkpoint;
pub mod container_env;
pub mod container_log;
pub mod encoding;
pub mod engine_log;
pub mod nvidia_smi;
pub mod oom_text;
pub mod pickle;
pub mod proc;
pub mod prometheus;
pub mod read_at;
pub mod run_record;
pub mod text;
pub mod torch_snapshot;
