//! The only code that touches the world besides `cli`: files, stdin, GPUs (NVML or replay),
//! HTTP servers, child processes, the clock.

pub mod checkpoint;
pub mod file;
pub mod follow;
pub mod gpu;
pub mod host_memory;
pub mod launch;
pub mod process;
pub mod run_dir;
pub mod sampler;
pub mod server;
pub mod torch_snapshot;
