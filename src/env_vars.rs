//! Every environment variable oomdoc reads, as documented constants.
//!
//! Reading the environment is I/O: only `cli` and `source` call `std::env`; the rest of the
//! crate receives values.

/// Replay GPU source: a `nvidia-smi -q -x` XML file or an oomdoc JSON recording (same as `--gpu-from`).
pub const OOMDOC_GPU_FROM: &str = "OOMDOC_GPU_FROM";
/// Replay host memory for `oomdoc run`: a recorded host timeline or `run.json` (same as the
/// hidden `--host-from`); for tests and offline analysis, instead of `/proc`.
pub const OOMDOC_HOST_FROM: &str = "OOMDOC_HOST_FROM";
/// Disables colour when set to a non-empty value (<https://no-color.org>).
pub const NO_COLOR: &str = "NO_COLOR";
/// Forces colour when set to a non-empty value.
pub const FORCE_COLOR: &str = "FORCE_COLOR";
/// Forces colour when set to a non-zero value.
pub const CLICOLOR_FORCE: &str = "CLICOLOR_FORCE";
/// The terminal type; `dumb` disables colour.
pub const TERM: &str = "TERM";
/// CUDA's device filter and renumbering: indices, `GPU-…` UUIDs (or unique prefixes), MIG UUIDs.
pub const CUDA_VISIBLE_DEVICES: &str = "CUDA_VISIBLE_DEVICES";
/// CUDA's enumeration order: `FASTEST_FIRST` (default) or `PCI_BUS_ID`.
pub const CUDA_DEVICE_ORDER: &str = "CUDA_DEVICE_ORDER";
/// nvidia-container-toolkit's device selection, set inside containers.
pub const NVIDIA_VISIBLE_DEVICES: &str = "NVIDIA_VISIBLE_DEVICES";
/// PyTorch caching-allocator settings (all versions).
pub const PYTORCH_CUDA_ALLOC_CONF: &str = "PYTORCH_CUDA_ALLOC_CONF";
/// PyTorch allocator settings, the device-generic spelling read by 2.10 and later.
pub const PYTORCH_ALLOC_CONF: &str = "PYTORCH_ALLOC_CONF";
/// Hugging Face cache root; the hub cache is `$HF_HOME/hub`.
pub const HF_HOME: &str = "HF_HOME";
/// Hugging Face hub cache directory, overriding `$HF_HOME/hub`.
pub const HF_HUB_CACHE: &str = "HF_HUB_CACHE";
/// The user's home; the default Hugging Face hub cache is `$HOME/.cache/huggingface/hub`.
pub const HOME: &str = "HOME";
/// API key for `oomdoc probe` (same as `--api-key`); never printed.
pub const OOMDOC_API_KEY: &str = "OOMDOC_API_KEY";
/// The OpenAI client's API key variable, used by `oomdoc probe` when `OOMDOC_API_KEY` is unset.
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// The Kubernetes node name (`oomdoc exporter`'s `Hostname` label), set in a DaemonSet from
/// the downward API (`spec.nodeName`).
pub const NODE_NAME: &str = "NODE_NAME";
