//! Find every GPU out-of-memory message (and the failures that look like one but are not) in
//! cleaned text lines, and parse its figures into exact bytes.
//!
//! Input comes line by line from [`crate::parse::text::clean_line`]. A message may span lines
//! (hard-wrapped pastes, the cudaMallocAsync block, llama.cpp's chain of failure lines), and lines
//! of several ranks may interleave, so [`OomDetector`] keeps one open message per stream.
//! Matching is done on a *squeezed* copy of the message (all whitespace removed), which makes it
//! immune to wrapping that splits `20.00` from `MiB` or leaves `reser        ved` inside a word.
//!
//! Pure: no I/O. Families live in submodules by who prints them; exact wordings with sources are
//! in the engines' sources, cited next to each pattern.

/// A `&'static Regex` compiled once, on first use.
macro_rules! regex {
    ($pattern:expr) => {{
        static REGEX: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| $crate::parse::oom_text::compile($pattern));
        &*REGEX
    }};
}

/// Regex fragment (a literal, for `concat!`) for a size inside squeezed text, one capture group.
macro_rules! size {
    () => {
        r"(\d+(?:[.,]\d+)*(?:bytes|KiB|MiB|GiB|TiB|PiB|EiB|KB|MB|GB|TB|PB|EB|B))"
    };
}

mod assemble;
mod complete;
pub mod cpu_platform;
mod cuda;
mod detector;
mod devices;
pub mod echo;
mod frameworks;
mod holders;
mod host;
mod llama_cpp;
mod look_alike;
mod markers;
mod mention;
mod normalize;
mod not_oom;
mod pinned;
mod pytorch;
mod science;
mod sglang;
mod size;
mod start;
mod tgi;
mod vllm;

pub use complete::completed_figures;
pub use detector::{parse_text, OomDetector};
pub use markers::{marker_finder, oom_marker_role, OomMarkerRole, OOM_MARKERS, OOM_MARKER_TABLE};
pub use mention::{host_failure_shown, names_the_gpu};
pub use sglang::is_token_pool_exhausted as sglang_token_pool_exhausted;
pub use size::{is_not_available, parse_size};

use detector::is_wrap_continuation;
use start::starts_a_message;

use crate::model::failure::{EngineFigures, EngineName, OomFigures, OomKind};
use crate::model::Bytes;

/// A family recognised on the line where a message starts; decides continuation and parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// PyTorch caching allocator text, by accelerator.
    TorchAllocator(Accelerator),
    /// cudaMallocAsync multi-line block.
    MallocAsync,
    /// Apple MPS backend.
    Mps,
    /// `CUDA error: out of memory` (torch, ggml).
    CudaError,
    /// `CUDA driver error: out of memory`, `CUDA_ERROR_OUT_OF_MEMORY`.
    CudaDriver,
    /// cuBLAS allocation failure.
    Cublas,
    /// Illegal memory access / misaligned address.
    IllegalAccess,
    /// Other GPU out-of-memory wording.
    OtherGpu,
    /// Host RAM failures.
    Host(HostKind),
    /// vLLM startup free-memory check.
    VllmStartupFree,
    /// vLLM "No available memory for the cache blocks".
    VllmNoCacheBlocks,
    /// vLLM max seq len larger than the KV cache.
    VllmMaxSeqLen,
    /// vLLM sampler/pooler warm-up OOM.
    VllmWarmup,
    /// TGI warm-up / router "Not enough memory".
    Tgi,
    /// SGLang memory errors.
    Sglang,
    /// llama.cpp / ggml allocation failure chain.
    LlamaChain,
    /// Another framework's GPU OOM (JAX/XLA, TensorFlow, HIP, cuDNN, NCCL, TensorRT, CuPy).
    Framework(FrameworkKind),
    /// Failures that are not memory shortages at all.
    NotOom(NotOomKind),
}

/// Frameworks and libraries other than PyTorch's allocator (frameworks.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameworkKind {
    /// JAX/XLA `RESOURCE_EXHAUSTED`.
    Xla,
    /// TensorFlow `OOM when allocating tensor`.
    TfTensor,
    /// TensorFlow BFC `ran out of memory trying to allocate`.
    TfBfc,
    /// HIP runtime `hipErrorOutOfMemory`.
    Hip,
    /// cuDNN `CUDNN_STATUS_ALLOC_FAILED`, workspace.
    Cudnn,
    /// NCCL `Cuda failure 'out of memory'`.
    Nccl,
    /// TensorRT allocator.
    TensorRt,
    /// CuPy memory pool.
    Cupy,
    /// ND4J's CUDA backend (Deeplearning4j): `Failed to allocate N bytes from DEVICE [0] memory`.
    Nd4j,
    /// ExLlamaV2's and ExLlamaV3's autosplit loader: the model and its cache do not fit on the
    /// GPUs it may use.
    ExllamaSplit,
    /// MLC-LLM's memory budget at engine creation: the weights and workspaces leave no room
    /// for the KV cache on one GPU.
    MlcBudget,
    /// PaddlePaddle's allocator (`Out of memory error on GPU 0. Cannot allocate …`).
    Paddle,
    /// ONNX Runtime's BFC arena (`Failed to allocate memory for requested buffer of size N`).
    OnnxRuntime,
    /// DirectML, Level Zero / Unified Runtime, Vulkan, Metal (devices.rs).
    DeviceRuntime,
    /// Faiss's GPU allocations (`Failed to cudaMalloc N bytes`, `StandardGpuResources: alloc
    /// fail … (cudaMalloc error out of memory [2])`, devices.rs).
    Faiss,
    /// HAMi-core (`libvgpu.so`, Kubernetes GPU sharing): `Device D OOM N / L`, the container's
    /// device memory limit L refused usage-plus-request N.
    HamiCore,
    /// The RAPIDS Accelerator for Apache Spark's `GpuRetryOOM` / `SplitAndRetryOOM` (the GPU's)
    /// and `CpuRetryOOM` (the host's).
    SparkRapids,
    /// dask-cuda's spill-on-demand finding nothing to spill (`RMM allocation of N failed`).
    RmmSpill,
    /// Scientific and rendering codes' own wordings: RELION, LAMMPS, Blender Cycles, Mitsuba,
    /// MATLAB's GPU arrays, ArrayFire under Flashlight (science.rs).
    Science,
}

/// Not a memory shortage (not_oom.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotOomKind {
    /// `/dev/shm` exhausted.
    Shm,
    /// `No space left on device`.
    Disk,
    /// `device-side assert triggered`.
    DeviceAssert,
    /// Triton `OutOfResources`.
    Triton,
    /// llama.cpp: no free KV cells for the batch (the context is full).
    ContextFull,
}

/// Which accelerator's caching allocator printed the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Accelerator {
    /// `CUDA out of memory.`
    Cuda,
    /// `HIP out of memory.` (ROCm builds).
    Hip,
    /// `XPU out of memory.` (Intel).
    Xpu,
    /// `NPU out of memory.` (Huawei Ascend, the `torch_npu` plug-in's caching allocator).
    Npu,
}

/// Kinds of host-memory failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostKind {
    /// `DefaultCPUAllocator: can't allocate memory` / `not enough memory`.
    CpuAllocator,
    /// `C10 Out of Memory`.
    C10,
    /// errno 12 `Cannot allocate memory`.
    Errno,
    /// Linux OOM killer lines.
    OomKiller,
    /// Exit code 137 / SIGKILL / a bare `Killed`.
    Killed,
    /// ollama `model requires more system memory`.
    SystemMemory,
    /// Python `MemoryError`, numpy `_ArrayMemoryError`.
    MemoryError,
    /// C++ `std::bad_alloc`.
    BadAlloc,
    /// Rust's allocation failure: `memory allocation of N bytes failed`, then an abort.
    RustAlloc,
    /// Ray's memory monitor killed workers: node memory above its threshold (host RAM).
    RayMemoryMonitor,
}

/// What a line does to the message open on its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Continuation {
    /// The line continues the message: append its text.
    Append,
    /// The line belongs to the message but adds nothing (boilerplate such as
    /// `CUDA kernel errors might be asynchronously reported`).
    Skip,
    /// The line is not part of the message: close it.
    Close,
}

/// What a family parser produced from a closed message.
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    pub kind: OomKind,
    pub is_gpu_oom: bool,
    pub engine_hint: Option<EngineName>,
    pub figures: OomFigures,
    pub details: EngineFigures,
}

impl Parsed {
    fn new(kind: OomKind, is_gpu_oom: bool) -> Parsed {
        Parsed {
            kind,
            is_gpu_oom,
            engine_hint: None,
            figures: OomFigures::default(),
            details: EngineFigures::default(),
        }
    }
}

/// Where a message that a program prints as `<head> … <wording>` starts: at the last `head`
/// before `at` (the wording's position) on the line, or at the wording when the head is not
/// there (cut by the paste).
pub(super) fn back_to(text: &str, at: usize, head: &str) -> usize {
    text[..at].rfind(head).unwrap_or(at)
}

/// The first position of `needle` in `text`, as `str::find` gives it, without building a
/// searcher when `text` is too short (the start checks run on every OOM-marker line, and
/// `str::find` prepares a Two-Way searcher for every call).
pub(crate) fn find(text: &str, needle: &str) -> Option<usize> {
    if needle.len() > text.len() {
        return None;
    }
    crate::parse::text::find_in_line(text.as_bytes(), needle.as_bytes())
}

/// First capture of `regex` in `haystack` as a size.
pub(crate) fn size_of(regex: &regex::Regex, haystack: &str) -> Option<Bytes> {
    regex
        .captures(haystack)
        .and_then(|caps| caps.get(1))
        .and_then(|m| parse_size(m.as_str()))
}

/// First capture of `regex` in `haystack` as an integer (thousands separators removed).
pub(crate) fn integer_of(regex: &regex::Regex, haystack: &str) -> Option<u64> {
    regex
        .captures(haystack)
        .and_then(|caps| caps.get(1))
        .and_then(|m| m.as_str().replace(',', "").parse().ok())
}

/// First capture of `regex` in `haystack` as a float.
pub(crate) fn float_of(regex: &regex::Regex, haystack: &str) -> Option<f64> {
    regex
        .captures(haystack)
        .and_then(|caps| caps.get(1))
        .and_then(|m| m.as_str().parse().ok())
}

/// Compiles a literal pattern of this module (used through [`regex!`], once per pattern).
#[expect(
    clippy::expect_used,
    reason = "literal patterns only; the unit tests exercise every one of them"
)]
pub(crate) fn compile(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a literal regex pattern of oom_text is valid")
}

#[cfg(test)]
mod families_tests;
#[cfg(test)]
mod first_contact_tests;
#[cfg(test)]
mod mentions_tests;
#[cfg(test)]
mod s14_tests;
#[cfg(test)]
mod s15_tests;
#[cfg(test)]
mod s16_tests;
#[cfg(test)]
mod s17_tests;
#[cfg(test)]
mod s18_tests;
#[cfg(test)]
mod s19_tests;
#[cfg(test)]
mod s20_tests;
#[cfg(test)]
mod s31_tests;
#[cfg(test)]
mod s32_tests;
#[cfg(test)]
mod s34_tests;
#[cfg(test)]
mod s39c_tests;
#[cfg(test)]
mod s40_tests;
#[cfg(test)]
mod s40f1_tests;
#[cfg(test)]
mod s42_tests;
#[cfg(test)]
mod s45_tests;
#[cfg(test)]
mod s46_tests;
#[cfg(test)]
mod s47_tests;
#[cfg(test)]
mod s48_tests;
#[cfg(test)]
mod s49_tests;
#[cfg(test)]
mod s50_tests;
#[cfg(test)]
mod s51_tests;
#[cfg(test)]
mod s52_tests;
#[cfg(test)]
mod s53_tests;
#[cfg(test)]
mod s54_tests;
#[cfg(test)]
mod s55_tests;
#[cfg(test)]
mod s56_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod wordings_tests;
