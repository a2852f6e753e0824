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
        r"(\d+(?:[.,]\d+)*(?:bytes|KiB|MiB|GiB|TiB|KB|MB|GB|B))"
    };
}

mod complete;
mod cuda;
mod devices;
mod frameworks;
mod holders;
mod host;
mod llama_cpp;
mod look_alike;
mod mention;
mod normalize;
mod not_oom;
mod pinned;
mod pytorch;
mod sglang;
mod size;
mod tgi;
mod vllm;

pub use complete::completed_figures;
pub use size::{is_not_available, parse_size};

use normalize::{append_normalized, squeeze_into};

use crate::model::failure::{EngineFigures, EngineName, OomFigures, OomKind, OomMessage};
use crate::model::Bytes;
use crate::parse::text::{clean_line, CleanLine};

/// Who writes the words an OOM marker finds, which decides the scanners that hold it (a marker
/// costs on every byte each of them reads; `analyze::explain::candidates` says which scanner
/// reads what).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OomMarkerRole {
    /// A program's own failure message (or a line read beside one): held by every scanner,
    /// the failure search over the middle of a long log too. Keep it a program's own wording,
    /// rare in serving and training lines.
    Message,
    /// A reporter's words rather than a program's message (a GPU "out of VRAM" in a sentence,
    /// a kill's "exit code is -9"). They start a message in a report short enough to be read
    /// whole and in the parsed head, tail and failure windows of a long log; the failure
    /// search over the rest of a long log (`explain`'s stream) skips them, since every marker
    /// there costs on every byte and a program's own failure never needs them.
    Words,
    /// Matters in a report only, so the scanner of a long log's parsed parts leaves it out
    /// too (and the failure search, as for [`OomMarkerRole::Words`]): the reporter's words that
    /// other programs held the GPU's memory (holders.rs, they start no message), and the
    /// wordings of desktop runtimes pasted from a Windows or Mac session, not a server's log
    /// (DirectML's `8007000E Not enough memory resources …`, OpenCL's allocation failure), an
    /// engine's line retyped in a title (`Unable to allocate CUDA0 buffer`), an app's refusal
    /// as its CLI or API reply prints it (ollama's `memory layout cannot be allocated`), and
    /// the pinned host allocation read around a raw CUDA error (pinned.rs).
    ReportOnly,
}

impl OomMarkerRole {
    /// Whether the failure search over the middle of a long log holds the marker.
    pub const fn in_failure_search(self) -> bool {
        matches!(self, OomMarkerRole::Message)
    }

    /// Whether the scanner of a long log's parsed parts (past its head) holds the marker.
    pub const fn in_long_logs(self) -> bool {
        !matches!(self, OomMarkerRole::ReportOnly)
    }
}

/// Every OOM marker with its role, each written once: literal substrings, a raw line
/// containing none of them can never start an OOM message. The explain driver uses these with
/// aho-corasick to prefilter a 1 GB log at memchr speed. Matching is case-sensitive; every case
/// variant we start on is listed. No marker starts with a digit: that would make every run of
/// digits one a marker may cover (`shape::DigitContexts`).
///
/// The order is the scanners' (their automata bucket patterns in the order given): a marker
/// added in another place changes how fast a long log is read (`hot_path_tests`).
pub const OOM_MARKER_TABLE: &[(&str, OomMarkerRole)] = {
    use OomMarkerRole::{Message, ReportOnly, Words};
    &[
        // PyTorch allocator (CUDA/HIP/XPU/MPS), raw CUDA errors, llama.cpp cudaMalloc, generic.
        ("out of memory", Message),
        ("Out of memory", Message),
        ("Out of Memory", Message),
        // A title's or a sentence's `Cuda out of Memory`, `CUDA OUT OF MEMORY`
        // ([`mention::mention_start`]).
        ("out of Memory", Message),
        ("OUT OF MEMORY", Message),
        // A sentence's `CUDA memory error` ([`mention::prose_mention`]).
        ("CUDA memory error", Words),
        ("cuda memory error", Words),
        ("GPU memory error", Words),
        ("gpu memory error", Words),
        ("OUT_OF_MEMORY", Message),
        // A sentence's `out-of-memory error` ([`mention::mention_start`]).
        ("out-of-memory", Message),
        // `OOM` in a title or sentence ([`mention::mention_start`]).
        ("OOM", Message),
        // A GPU's memory running out in a reporter's words (`ran out of VRAM`, `runs out of GPU
        // memory`, [`mention::mention_start`]); `ut of` takes `Out of` too.
        ("ut of VRAM", Words),
        ("ut of vram", Words),
        ("ut of GPU memory", Words),
        ("ut of gpu memory", Words),
        ("ut of video memory", Words),
        // … or left short of it (`claims not enough VRAM to load models`).
        ("enough VRAM", Words),
        ("enough vram", Words),
        ("enough GPU memory", Words),
        ("enough gpu memory", Words),
        // LM Studio's refusal to load a model (mention.rs).
        ("Not enough resources to load", Message),
        // Ollama's scheduler giving up on placing a model's layers (mention.rs), as the CLI or
        // the API's reply prints it.
        ("memory layout cannot be allocated", ReportOnly),
        // GPU memory named short in Chinese prose by a job on a named card (`T4单卡…显示内存溢出`,
        // [`mention::cjk_mention`]; 内存 alone is the host's).
        ("内存溢出", Words),
        ("内存不足", Words),
        ("内存不够", Words),
        // CUDA's allocation named failing in a title (`CUDA malloc fails on …`, mention.rs).
        ("CUDA malloc", Words),
        ("Cuda malloc", Words),
        ("cuda malloc", Words),
        ("cudaErrorMemoryAllocation", Message),
        // cudaMallocAsync backend.
        ("would exceed allowed memory", Message),
        // TensorRT-LLM's `CUDA runtime error in <call>: out of memo` / `ry` cut by a console
        // (cuda.rs).
        ("CUDA runtime error in", Message),
        // cuBLAS handle/workspace allocation.
        ("CUBLAS_STATUS_ALLOC_FAILED", Message),
        ("CUBLAS_STATUS_NOT_INITIALIZED", Message),
        // cuRAND's allocation status (cuda.rs; the other libraries' end in `_ALLOC_FAILED`).
        ("CURAND_STATUS_ALLOCATION_FAILED", Message),
        // OpenCV's CUDA error (cuda.rs) holds `out of memory`; MindSpore's device allocator.
        ("memory isn't enough", Message),
        // RMM's device pool (cuda.rs), when printed without its `std::bad_alloc` head.
        ("RMM failure at", Message),
        // vLLM.
        ("Free memory on device", Message),
        ("No available memory for the cache blocks", Message),
        ("max seq len", Message),
        // TGI and SGLang.
        ("Not enough memory", Message),
        ("not enough memory", Message),
        ("leave no GPU memory", Message),
        // llama.cpp / ollama.
        ("cudaMalloc failed", Message),
        ("failed to allocate", Message),
        ("unable to allocate", Message),
        ("not enough space in the buffer", Message),
        // llama.cpp's KV cells are all taken (not_oom.rs: the context is full, not the GPU).
        ("free space in the KV cache", Message),
        ("failed to find a memory slot", Message),
        ("failed to find KV cache slot", Message),
        ("KV cache is full", Message),
        ("llama_kv_cache_init() failed", Message),
        // Device runtimes (devices.rs): DirectML, Level Zero / Unified Runtime / Vulkan (the host's
        // twin `…_OUT_OF_HOST_MEMORY` too), MLX's Metal allocator; ggml-sycl's buffer.
        ("not enough GPU video memory", Message),
        ("_OUT_OF_DEVICE_MEMORY", Message),
        ("_OUT_OF_HOST_MEMORY", Message),
        // DirectML's E_OUTOFMEMORY (`8007000E Not enough memory resources …`, devices.rs).
        ("enough memory resources", ReportOnly),
        // OpenCL's device allocation failure (devices.rs).
        ("OBJECT_ALLOCATION_FAILURE", ReportOnly),
        ("[metal::malloc]", Message),
        ("Bytes of memory on device", Message),
        // llama.cpp's `unable to allocate CUDA0 buffer` retyped in an issue title
        // (llama_cpp.rs).
        ("Unable to allocate", ReportOnly),
        // A pinned host allocation around a raw CUDA error (pinned.rs): no message starts here,
        // the detector notes the line (`.pin_memory()`, the DataLoader's pin thread, the host
        // allocator's frames, CuPy's pinned pool).
        ("pin_memory", ReportOnly),
        ("pin memory thread", ReportOnly),
        ("HostAllocator", ReportOnly),
        ("cudaHostAlloc", ReportOnly),
        ("cudaMallocHost", ReportOnly),
        ("cudaHostRegister", ReportOnly),
        ("pinned_memory", ReportOnly),
        // Host memory (not GPU OOM).
        ("DefaultCPUAllocator", Message),
        ("Cannot allocate memory", Message),
        ("requires more system memory", Message),
        // Ray's memory monitor (`raylet/node_manager.cc`, `ray.exceptions.OutOfMemoryError`).
        ("killed due to memory pressure", Message),
        ("running low on memory", Message),
        ("Killed", Message),
        ("oom-kill", Message),
        ("OOMKilled", Message),
        // `exited with code 137`, kubectl describe `Exit Code:    137`, `exitCode: 137`, docker
        // inspect `"ExitCode": 137`, `exit status 137` (the exit-status regex in host.rs decides).
        ("code 137", Message),
        ("code: 137", Message),
        ("code (137)", Message),
        ("Code: 137", Message),
        ("Code:    137", Message),
        ("Code\": 137", Message),
        ("code=137", Message),
        // `exit code is -9`, `exit code -9`, `status code is 137` (a reporter's words; `killed by
        // OOM killer` holds `OOM`, and lower-case `oom killer` is left out: its anchor `kill` is
        // common in logs).
        ("code -9", Words),
        ("code is -9", Words),
        ("code is 137", Words),
        ("status 137", Message),
        ("status: 137", Message),
        ("exitcode", Message),
        ("SIGKILL", Message),
        // Not OOM: memory-access bugs.
        ("illegal memory access", Message),
        ("misaligned address", Message),
        ("unspecified launch failure", Message),
        // JAX/XLA, TensorFlow, HIP runtime, cuDNN, TensorRT, CuPy (frameworks.rs; the others hold
        // `out of memory`, `Out of memory` or `OUT_OF_MEMORY`).
        ("Failed to allocate", Message),
        ("OOM when allocating", Message),
        // Also an exception's class cut short (`torch.cuda.OutOfMem`, `OutOfMemoryErro`).
        ("OutOfMem", Message),
        ("_ALLOC_FAILED", Message),
        // TensorFlow's OOM status class without an `OOM when allocating` line (`failed to allocate
        // memory`, `2 root error(s) found.`, IPython's header).
        ("ResourceExhaustedError", Message),
        ("Requested amount of GPU memory", Message),
        // The TPU runtime's `Error allocating device buffer: Attempting to allocate …`.
        ("Error allocating device buffer", Message),
        // The same runtime under XRT: `RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at the bottom
        // of memory. That was not possible.` (frameworks.rs).
        ("Attempting to reserve", Message),
        // … and its `Attempting to allocate 31.06M. That was not possible.` (frameworks.rs).
        ("Attempting to allocate", Message),
        ("Requested amount of memory", Message),
        ("insufficient GPU memory", Message),
        // InvokeAI's model cache (mention.rs).
        ("Insufficient GPU memory", Message),
        // TensorRT-LLM's `Insufficient memory for KV cache`, and a wrapper's lower-case one.
        ("nsufficient memory for KV cache", Message),
        // TensorRT-LLM's KV-cache manager: one sequence does not fit (frameworks.rs).
        ("maxTokensInPagedKvCache", Message),
        ("Resource exhausted", Message),
        // ggml-vulkan, PyTorch's cut cudaMallocAsync message and allocator fragments, accelerate.
        ("Device memory allocation of size", Message),
        ("ErrorOutOfDeviceMemory", Message),
        ("Allocation on device", Message),
        ("Tried to allocate", Message),
        ("No executable batch size found", Message),
        // XLA's peak-buffer dump pasted without its message ([`mention::mention_start`]).
        ("Peak buffers:", Message),
        ("XLA Label:", Message),
        ("XLA label:", Message),
        // GPU memory named short in Chinese prose ([`mention::cjk_mention`]).
        ("显存不", Message),
        ("显存溢出", Message),
        ("显存爆", Message),
        ("爆显存", Message),
        ("显存炸", Message),
        ("炸显存", Message),
        // The memory named by its device (显卡内存, GPU内存, CUDA内存; 内存 alone is the host's).
        ("显卡内存", Words),
        ("GPU内存", Words),
        ("gpu内存", Words),
        ("CUDA内存", Words),
        ("cuda内存", Words),
        // … Japanese and Korean (`GPUのメモリが不足`, `GPU 메모리 부족`, `VRAM 부족`).
        ("GPUのメモリ", Words),
        ("메모리 부족", Words),
        ("메모리가 부족", Words),
        ("VRAM 부족", Words),
        // `OOM` in lower case after its device (`cuda oom`, `GPU oom`, [`mention::mention_start`]).
        ("cuda oom", Words),
        ("Cuda oom", Words),
        ("CUDA oom", Words),
        ("gpu oom", Words),
        ("GPU oom", Words),
        ("VRAM oom", Words),
        ("vram oom", Words),
        // … and in Japanese.
        ("VRAM不足", Words),
        ("GPUメモリ", Words),
        // … and in European languages ([`mention::european_mention`]): Russian, Spanish,
        // Portuguese, Italian, French, German.
        ("видеопамят", ReportOnly),
        ("памяти GPU", ReportOnly),
        ("памяти gpu", ReportOnly),
        ("памяти видеокарт", ReportOnly),
        ("памяти на GPU", ReportOnly),
        ("emoria de GPU", ReportOnly),
        ("emoria de la GPU", ReportOnly),
        ("emoria GPU", ReportOnly),
        ("emoria della GPU", ReportOnly),
        ("emória da GPU", ReportOnly),
        ("emória na GPU", ReportOnly),
        ("emória de GPU", ReportOnly),
        ("émoire GPU", ReportOnly),
        ("émoire vidéo", ReportOnly),
        ("nsuficiente", ReportOnly),
        ("nsufficiente", ReportOnly),
        ("nsuffisante", ReportOnly),
        ("de VRAM", ReportOnly),
        ("genügend VRAM", ReportOnly),
        ("genug VRAM", ReportOnly),
        ("wenig VRAM", ReportOnly),
        ("GPU-Speicher", ReportOnly),
        ("Grafikspeicher", ReportOnly),
        ("Videospeicher", ReportOnly),
        // vLLM V1 profiling left nothing (or less than nothing) for the KV cache.
        ("Available KV cache memory: -", Message),
        // … V0's wordings of it, and V1's check without its `max seq len` head (vllm.rs).
        ("for KV Cache is -", Message),
        ("kv_cache_size=-", Message),
        ("KV cache is needed", Message),
        // Host memory: Python `MemoryError`, numpy `_ArrayMemoryError`, C++ `std::bad_alloc`.
        ("MemoryError", Message),
        ("bad_alloc", Message),
        // Not OOM (not_oom.rs): shared memory, disk, device-side assert, Triton resources.
        ("insufficient shared memory", Message),
        ("No space left on device", Message),
        ("device-side assert triggered", Message),
        ("OutOfResources", Message),
        ("out of resource:", Message),
        // The reporter's words that other programs held the memory (holders.rs): no message
        // starts here, the detector notes the line for the verdict. `ther` takes other, Other
        // and another.
        ("ther process", ReportOnly),
        ("ther program", ReportOnly),
        ("second process", ReportOnly),
        ("zombie", ReportOnly),
        ("leftover", ReportOnly),
        ("left-over", ReportOnly),
        ("stale process", ReportOnly),
        ("orphan", ReportOnly),
        ("dangling process", ReportOnly),
        ("defunct", ReportOnly),
        ("memory reset", ReportOnly),
        ("reset the GPU", ReportOnly),
        ("reset the gpu", ReportOnly),
        ("메모리를 초기화", ReportOnly),
        // The reporter's or a maintainer's words that the card is too small for the job, or that
        // only larger inputs fail (holders.rs `capacity_said`): no message starts here either.
        ("have enough memory", ReportOnly),
        ("with more memory", ReportOnly),
        ("with more VRAM", ReportOnly),
        ("is too small", ReportOnly),
        ("bigger batch", ReportOnly),
        ("larger batch", ReportOnly),
        ("higher batch", ReportOnly),
        ("increase the batch", ReportOnly),
        ("increase batch", ReportOnly),
        ("increasing the batch", ReportOnly),
        ("longer input", ReportOnly),
        ("longer sentence", ReportOnly),
        ("longer sequence", ReportOnly),
        ("larger input", ReportOnly),
        ("larger image", ReportOnly),
        ("bigger image", ReportOnly),
        ("longer prompt", ReportOnly),
        ("longer context", ReportOnly),
        ("batch大", ReportOnly),
        ("长一点", ReportOnly),
        ("长一些", ReportOnly),
        // Forge's estimate before it moves a model to the GPU (holders.rs `capacity_said`).
        ("Model Require:", ReportOnly),
    ]
};

/// The texts of [`OOM_MARKER_TABLE`], in its order.
///
/// Build the automaton with `MatchKind::LeftmostFirst` (or use [`marker_finder`]): only the
/// leftmost kinds enable aho-corasick's SIMD "Teddy" prefilter. Measured on 100 MiB of vLLM-like
/// log on this project's build host: 52 ms leftmost-first vs 420 ms with the default
/// `MatchKind::Standard`, and 28 ms for a single `memmem` of "out of memory".
pub const OOM_MARKERS: &[&str] = &{
    let mut texts = [""; OOM_MARKER_TABLE.len()];
    let mut index = 0;
    while index < texts.len() {
        texts[index] = OOM_MARKER_TABLE[index].0;
        index += 1;
    }
    texts
};

/// The role of the marker at `index` in [`OOM_MARKERS`]; `None` past its end.
pub fn oom_marker_role(index: usize) -> Option<OomMarkerRole> {
    OOM_MARKER_TABLE.get(index).map(|&(_, role)| role)
}

/// An aho-corasick automaton over [`OOM_MARKERS`], built the fast way (leftmost-first, which
/// enables the SIMD prefilter). Errors only if aho-corasick rejects the literal set.
pub fn marker_finder() -> Result<aho_corasick::AhoCorasick, aho_corasick::BuildError> {
    aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .build(OOM_MARKERS)
}

/// How many lines an open message may grow to before it is closed anyway.
const MAX_MESSAGE_LINES: u32 = 16;
/// How many input lines (any stream) an open message may wait for its continuation.
const MAX_WAIT_LINES: u64 = 64;

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
    /// PaddlePaddle's allocator (`Out of memory error on GPU 0. Cannot allocate …`).
    Paddle,
    /// ONNX Runtime's BFC arena (`Failed to allocate memory for requested buffer of size N`).
    OnnxRuntime,
    /// DirectML, Level Zero / Unified Runtime, Vulkan, Metal (devices.rs).
    DeviceRuntime,
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

/// A message being read.
#[derive(Debug)]
struct Open {
    family: Family,
    start_line: u64,
    end_line: u64,
    stream: Option<String>,
    exception: Option<String>,
    /// The quote that opened a repr (`OutOfMemoryError('…')`), cut at its closing twin.
    quote: Option<char>,
    /// Wording outside the message on its first line that names the engine.
    prefix_hint: Option<EngineName>,
    text: String,
    squeezed: String,
    lines: u32,
    /// Blank lines skipped since the last appended one (console pastes, [`torch_continuation`]).
    blank_lines: u32,
    /// The wording is quoted by the `raise` statement of a traceback ([`quoted_raise_start`]).
    quoted: bool,
}

/// Streaming detector: feed cleaned lines, get completed messages.
#[derive(Debug, Default)]
pub struct OomDetector {
    open: Vec<Open>,
    memo: ParseMemo,
    /// Messages are counted, not parsed (see [`OomDetector::count_only`]): host-memory ones,
    /// and with `count_only_gpu` GPU ones too.
    count_only: bool,
    count_only_gpu: bool,
    /// Messages counted and not returned since [`OomDetector::take_counted`].
    counted: u64,
    /// A message without figures that announces the real one (see [`Pending`]), held until
    /// that one arrives or its window ends.
    pending_warmup: Option<Pending>,
    /// A message other than a mention ([`mention::mention_start`]) was read: later mentions are
    /// prose about it, not failures of their own.
    seen_message: bool,
    /// The first size XLA's start-up preallocation asked for and could not get (`[0] Failed to
    /// allocate device memory of 104.85GiB (112583507968 bytes)`, logged while the pool backs
    /// off): a later XLA failure of this process ran in that smaller pool.
    xla_preallocation: Option<Bytes>,
    /// The first line where the reporter says other programs held the GPU's memory
    /// ([`holders::other_holders_said`]).
    holders_said: Option<u64>,
    /// The first line where the reporter or a maintainer says the GPU has too little memory for
    /// the job ([`holders::capacity_said`]).
    capacity_said: Option<u64>,
    /// An OOM named with no word of whose memory ([`mention::is_weak`]), held while the
    /// lines after it show whether the work was on a GPU.
    weak: Option<Weak>,
    /// The last line showing a pinned host allocation ([`pinned::pinned_frame`]).
    pinned_frame: Option<u64>,
    /// The last line of the DataLoader's pin thread re-raising ([`pinned::pin_thread`]).
    pin_thread: Option<u64>,
}

/// A weak mention waiting for the lines after it ([`OomDetector::weak`]).
#[derive(Debug)]
struct Weak {
    message: OomMessage,
    /// A line after it showed GPU work ([`mention::gpu_work_shown`]).
    gpu: bool,
    /// A line after it showed the host's memory running out ([`mention::host_memory_shown`]).
    host: bool,
}

/// How many lines after a weak mention are read for GPU work or host memory.
const WEAK_CONTEXT_LINES: u64 = 200;

/// A figureless message held back a few lines: vLLM's sampler/pooler warm-up error read before
/// the allocator's message it wraps (a paste that quotes `RuntimeError: CUDA out of memory
/// occurred when warming up sampler …` first), or only an exception's class
/// (`OutOfMemoryError   Traceback (most recent call last)` of IPython, a webui's `task:
/// OutOfMemoryError`, TensorFlow's `ResourceExhaustedError: 2 root error(s) found.`) whose
/// message comes at the end of the traceback.
#[derive(Debug)]
struct Pending {
    message: OomMessage,
    /// Lines after the held message's end within which the real message may start.
    window: u64,
    /// The real message replaces it (a class) or lends it its figures (vLLM's warm-up).
    superseded: bool,
}

/// How many lines after vLLM's warm-up error the allocator message it wraps may start.
const WARMUP_PAIR_LINES: u64 = 12;
/// How many lines after an exception's class its message may come (a traceback in between).
const CLASS_ONLY_LINES: u64 = 400;

/// The last message parsed, reused for an identical one: a crash loop or a retrying job
/// prints the same message again and again, and parsing one costs microseconds.
#[derive(Debug, Default)]
struct ParseMemo {
    /// (family, text, squeezed text) of the message, and what parsing it gave.
    last: Option<(Family, String, String, Parsed)>,
}

impl ParseMemo {
    /// [`parse_family`], reusing the last result for the same message.
    fn parse(&mut self, open: &Open) -> Option<Parsed> {
        if let Some((family, text, squeezed, parsed)) = &self.last {
            if *family == open.family && *squeezed == open.squeezed && *text == open.text {
                return Some(parsed.clone());
            }
        }
        let parsed = parse_family(open)?;
        self.last = Some((
            open.family,
            open.text.clone(),
            open.squeezed.clone(),
            parsed.clone(),
        ));
        Some(parsed)
    }
}

impl OomDetector {
    /// A detector with nothing open.
    pub fn new() -> Self {
        OomDetector::default()
    }

    /// Feed one cleaned line, `line_no` 1-based. Returns messages completed by this line
    /// (ordered by their start line).
    pub fn push(&mut self, line_no: u64, line: &CleanLine<'_>) -> Vec<OomMessage> {
        let mut done = Vec::new();
        let text: &str = &line.text;
        if self.holders_said.is_none() && holders::other_holders_said(text) {
            self.holders_said = Some(line_no);
        }
        if self.capacity_said.is_none() && holders::capacity_said(text) {
            self.capacity_said = Some(line_no);
        }
        if pinned::pinned_frame(text) {
            self.pinned_frame = Some(line_no);
        }
        if pinned::pin_thread(text) {
            self.pin_thread = Some(line_no);
        }
        if self.xla_preallocation.is_none() && text.contains("Failed to allocate device memory of")
        {
            let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            self.xla_preallocation = integer_of(
                regex!(r"Failedtoallocatedevicememoryof[^()]*\((\d+)bytes\)"),
                &squeezed,
            )
            .map(Bytes);
        }
        if let Some(weak) = self.weak.as_mut() {
            if line_no > weak.message.end_line + WEAK_CONTEXT_LINES {
                done.extend(self.resolve_weak());
            } else if line_no > weak.message.end_line {
                // torchrun's `[rank0]:` prefix (removed into the stream) is a job on GPUs.
                weak.gpu |= mention::gpu_work_shown(text)
                    || line.stream.as_deref().is_some_and(|stream| {
                        stream
                            .strip_prefix("rank")
                            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    });
                weak.host |= mention::host_memory_shown(text);
            }
        }
        // The paste's own error, of a class that is never a memory failure, after a mention
        // that waits for its message: the mention named what the reporter took it for
        // ([`look_alike::unrelated_error`]).
        if look_alike::unrelated_error(text) {
            if self.pending_warmup.as_ref().is_some_and(|pending| {
                pending.superseded
                    && line_no > pending.message.end_line
                    && pending.message.kind == OomKind::NamedWithoutMessage
            }) {
                self.pending_warmup = None;
            }
            if let Some(weak) = self.weak.as_mut() {
                weak.host |= line_no > weak.message.end_line;
            }
        }
        if self
            .pending_warmup
            .as_ref()
            .is_some_and(|pending| line_no > pending.message.end_line + pending.window)
        {
            done.extend(self.pending_warmup.take().map(|pending| pending.message));
        }

        // Close messages that waited too long for a continuation (so `wants_more` turns false).
        let mut index = 0;
        while index < self.open.len() {
            if line_no.saturating_sub(self.open[index].end_line) > MAX_WAIT_LINES {
                let open = self.open.swap_remove(index);
                self.close(open, &mut done);
            } else {
                index += 1;
            }
        }

        let mut quoted = false;
        let start = detect_start(text).or_else(|| {
            quoted = true;
            quoted_raise_start(text)
        });
        let mut wrapped = false;
        let position = self
            .open
            .iter()
            .position(|o| o.stream == line.stream)
            .or_else(|| self.wrapped_without_prefix(line_no, line));
        if let Some(position) = position {
            let chain = start.is_some_and(|(family, offset)| {
                (is_chain(family) && family == self.open[position].family) || {
                    wrapped = is_wrapped_figures(&self.open[position], family, &text[offset..]);
                    wrapped
                }
            });
            if start.is_some() && !chain {
                let open = self.open.swap_remove(position);
                self.close(open, &mut done);
            } else {
                match continuation(&self.open[position], text) {
                    Continuation::Append => {
                        let open = &mut self.open[position];
                        open.blank_lines = 0;
                        append_line(open, text);
                        open.end_line = line_no;
                        open.lines += 1;
                        if is_complete(open) || open.lines >= MAX_MESSAGE_LINES {
                            let open = self.open.swap_remove(position);
                            self.close(open, &mut done);
                        }
                    }
                    Continuation::Skip => {
                        let open = &mut self.open[position];
                        if text.trim().is_empty() {
                            open.blank_lines += 1;
                        } else {
                            open.end_line = line_no;
                        }
                        open.lines += 1;
                        if open.lines >= MAX_MESSAGE_LINES {
                            let open = self.open.swap_remove(position);
                            self.close(open, &mut done);
                        }
                    }
                    Continuation::Close => {
                        let open = self.open.swap_remove(position);
                        self.close(open, &mut done);
                    }
                }
            }
        }

        let continued_chain = wrapped
            || start.is_some_and(|(family, _)| is_chain(family))
                && self
                    .open
                    .iter()
                    .any(|o| o.stream == line.stream && o.end_line == line_no);
        if let Some((family, offset)) = start.filter(|_| !continued_chain) {
            let prefix = &text[..offset];
            let message_text = &text[offset..];
            let mut open = Open {
                family,
                start_line: line_no,
                end_line: line_no,
                stream: line.stream.clone(),
                exception: exception_class(prefix),
                quote: opening_quote(prefix),
                prefix_hint: engine_from_wording(text).or_else(|| engine_from_stream(line)),
                text: String::with_capacity(message_text.len()),
                squeezed: String::with_capacity(message_text.len()),
                lines: 1,
                blank_lines: 0,
                quoted,
            };
            append_normalized(&mut open.text, message_text);
            squeeze_into(&mut open.squeezed, message_text);
            if is_complete(&open) {
                self.close(open, &mut done);
            } else {
                self.open.push(open);
            }
        }

        done.sort_by_key(|message| message.line);
        done
    }

    /// The open allocator message that a line without a stream prefix continues: a console
    /// hard-wrapped a prefixed line (`[rank1]: torch.OutOfMemoryError: … Of the allocated memory
    /// 4` / `0.30 GiB is allocated by PyTorch, …`), and the rest carries no prefix. Only for
    /// the line right after it, and only while the message is unfinished.
    fn wrapped_without_prefix(&self, line_no: u64, line: &CleanLine<'_>) -> Option<usize> {
        if line.stream.is_some() {
            return None;
        }
        self.open.iter().position(|open| {
            open.stream.is_some()
                && open.end_line + 1 == line_no
                && matches!(open.family, Family::TorchAllocator(_))
                && !self.open.iter().any(|other| other.stream.is_none())
        })
    }

    /// True while a message is open and following lines may continue it (hard-wrapped text,
    /// the multi-line cudaMallocAsync block, llama.cpp's lines); the driver then feeds the next lines.
    pub fn wants_more(&self) -> bool {
        !self.open.is_empty() || self.pending_warmup.is_some() || self.weak.is_some()
    }

    /// A weak mention's window ended (or the input did): a GPU OOM when the lines after it
    /// showed GPU work and no host memory, else nothing.
    fn resolve_weak(&mut self) -> Option<OomMessage> {
        let Weak {
            mut message,
            gpu,
            host,
        } = self.weak.take()?;
        (gpu && !host && !self.seen_message).then(|| {
            message.is_gpu_oom = true;
            message
        })
    }

    /// The first line where the reporter says other programs held the GPU's memory (`solved,
    /// other programs occupy memory`), if any was read.
    pub fn holders_said(&self) -> Option<u64> {
        self.holders_said
    }

    /// The first line where the reporter or a maintainer says the GPU has too little memory
    /// for the job (`your GPU doesn't have enough VRAM`), if any was read.
    pub fn capacity_said(&self) -> Option<u64> {
        self.capacity_said
    }

    /// Flush what is still open at end of input.
    pub fn finish(&mut self) -> Vec<OomMessage> {
        let mut done = Vec::new();
        for open in std::mem::take(&mut self.open) {
            self.close(open, &mut done);
        }
        done.extend(self.pending_warmup.take().map(|pending| pending.message));
        done.extend(self.resolve_weak());
        done.sort_by_key(|message| message.line);
        done
    }

    /// From now on messages are still found, and counted ([`OomDetector::take_counted`]), but
    /// not parsed nor returned: for a caller that keeps no more of them (parsing one costs
    /// microseconds; a log can hold millions). Host-memory messages only (they are never GPU
    /// OOMs), or with `gpu_too` every message but vLLM's, whose parser decides whether the
    /// text is a message at all.
    pub fn count_only(&mut self, gpu_too: bool) {
        self.count_only = true;
        self.count_only_gpu |= gpu_too;
    }

    /// Messages counted but not returned since the last call.
    pub fn take_counted(&mut self) -> u64 {
        std::mem::take(&mut self.counted)
    }

    /// A message is complete: parse it into `done`, or only count it.
    fn close(&mut self, open: Open, done: &mut Vec<OomMessage>) {
        let counted = match open.family {
            Family::VllmStartupFree
            | Family::VllmNoCacheBlocks
            | Family::VllmMaxSeqLen
            | Family::VllmWarmup => false,
            Family::Host(_) | Family::NotOom(_) => self.count_only,
            _ => self.count_only_gpu,
        };
        if counted {
            self.counted += 1;
            return;
        }
        if let Some(message) = build(open, &mut self.memo) {
            self.pair_warmup(message, done);
        }
    }

    /// A raw CUDA out-of-memory (no allocator figures) raised by a pinned host allocation
    /// ([`pinned`]): the pinning call is the innermost frame right before it, the pin thread
    /// re-raised it, or the message's own frames name the host allocator.
    fn pinned_host(&self, message: &OomMessage) -> bool {
        let raw = matches!(
            message.kind,
            OomKind::CudaErrorOutOfMemory | OomKind::CudaDriverOutOfMemory
        ) || (message.kind == OomKind::OtherGpuOom
            && message.text.contains("cudaErrorMemoryAllocation"));
        if !raw || message.figures.tried_to_allocate_bytes.is_some() {
            return false;
        }
        let before = |seen: Option<u64>, lines: u64| {
            seen.is_some_and(|at| at <= message.line && message.line - at <= lines)
        };
        before(self.pinned_frame, pinned::FRAME_LINES)
            || before(self.pin_thread, pinned::THREAD_LINES)
            || pinned::pinned_frame(&message.text)
    }

    /// vLLM's warm-up error (`_dummy_sampler_run`: `raise RuntimeError("CUDA out of memory
    /// occurred when warming up sampler …") from e`) carries no figures; the allocator message it
    /// wraps does. Printed in that order (a paste that quotes the RuntimeError first), the
    /// allocator's figures are copied onto it, so the first GPU failure has them.
    ///
    /// A message that is only an exception's class (`OutOfMemoryError` without its text) is
    /// held the same way and dropped when the message itself follows.
    fn pair_warmup(&mut self, mut message: OomMessage, done: &mut Vec<OomMessage>) {
        if self.pinned_host(&message) {
            message.kind = OomKind::HostMemory;
            message.is_gpu_oom = false;
        }
        if message.kind == OomKind::XlaResourceExhausted
            && message.details.requested_memory_bytes.is_none()
        {
            message.details.requested_memory_bytes = self.xla_preallocation;
        }
        let figureless = message.figures == OomFigures::default();
        let mention = matches!(
            message.kind,
            OomKind::OtherGpuOom | OomKind::NamedWithoutMessage
        ) && mention::is_mention(&message);
        if mention && self.seen_message {
            return;
        }
        if mention {
            message.kind = OomKind::NamedWithoutMessage;
            // A title quoting PyTorch's class before the device's words (`conv.py
            // torch.OutOfMemoryError: HIP out of memory`): the class names who raised it.
            if message.exception.is_none() {
                message.exception =
                    regex!(r"(?:^|[^A-Za-z0-9_.])(torch\.(?:cuda\.|xpu\.)?OutOfMemoryError)\s*:")
                        .captures(&message.text)
                        .and_then(|found| found.get(1))
                        .map(|class| class.as_str().to_string());
            }
        }
        if mention && mention::is_weak(&message.text) {
            if self.weak.is_none() {
                message.is_gpu_oom = false;
                // Its own line may show the GPU work (`OOM at step 3 under torchrun`).
                let gpu = mention::gpu_work_shown(&message.text);
                self.weak = Some(Weak {
                    message,
                    gpu,
                    host: false,
                });
            }
            return;
        }
        // A message of its own, or a mention that names the GPU, follows the weak mention: it
        // is what failed (or, from the host, what shows it was not the GPU).
        self.weak = None;
        self.seen_message |= !mention;
        // A logger-prefixed stream prints the chained traceback whole (the allocator's message
        // first): only a plain paste quotes the warm-up error before it.
        let held =
            if message.kind == OomKind::VllmWarmupOom && figureless && message.stream.is_none() {
                Some((WARMUP_PAIR_LINES, false))
            } else if mention
                || (message.kind == OomKind::OtherGpuOom && is_class_only(&message.text))
            {
                Some((CLASS_ONLY_LINES, true))
            } else {
                None
            };
        if let Some((window, superseded)) = held {
            // The same failure named again while a mention waits for its message (the title,
            // then the reporter's `就报了out of memory`): the first stays, waiting as long as
            // the second would.
            if let Some(pending) = self
                .pending_warmup
                .as_mut()
                .filter(|pending| mention && mention::is_mention(&pending.message))
            {
                let until = message.end_line + window;
                pending.window = pending
                    .window
                    .max(until.saturating_sub(pending.message.end_line));
                return;
            }
            let line = message.line;
            let gpu = message.is_gpu_oom;
            let previous = self.pending_warmup.replace(Pending {
                message,
                window,
                superseded,
            });
            // A mention or a class waiting for its message gives way to the message held now
            // (vLLM's warm-up error after the title's `CUDA memory error`), as to any other.
            done.extend(
                previous
                    .filter(|pending| {
                        !(gpu
                            && pending.superseded
                            && line <= pending.message.end_line + pending.window)
                    })
                    .map(|pending| pending.message),
            );
            return;
        }
        // A mention gives way to any message that follows it, a GPU one or not.
        if !message.is_gpu_oom
            && self.pending_warmup.as_ref().is_some_and(|pending| {
                mention::is_mention(&pending.message)
                    && message.line <= pending.message.end_line + pending.window
            })
        {
            self.pending_warmup = None;
        }
        if message.is_gpu_oom {
            let allocator = matches!(
                message.kind,
                OomKind::PytorchCached
                    | OomKind::PytorchReservedInTotal
                    | OomKind::PytorchTotalCapacity
            );
            if let Some(mut pending) = self.pending_warmup.take() {
                let near = message.line <= pending.message.end_line + pending.window;
                if !(pending.superseded && near) {
                    // Only the same process's message (another rank's figures are not its).
                    if near && allocator && !figureless && pending.message.stream == message.stream
                    {
                        pending.message.figures = message.figures.clone();
                    }
                    done.push(pending.message);
                }
            }
        }
        done.push(message);
    }
}

/// Convenience: the whole text at once (clean + detect every line). Messages in order of
/// their first line.
pub fn parse_text(text: &str) -> Vec<OomMessage> {
    let mut detector = OomDetector::new();
    let mut messages = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = clean_line(raw);
        messages.extend(detector.push(index as u64 + 1, &line));
    }
    messages.extend(detector.finish());
    messages.sort_by_key(|message| message.line);
    messages
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

/// The family whose message starts on this line, and the byte offset where it starts.
/// A wording quoted by a source line of a traceback (`raise ValueError("No available memory…"`)
/// is not a message; the search goes on after it (`tests/fixtures/oom_text/vllm-0.6.4-…`).
fn detect_start(text: &str) -> Option<(Family, usize)> {
    let mut from = 0;
    for _ in 0..4 {
        let rest = text.get(from..)?;
        let (family, offset) = detect_start_once(rest)?;
        let absolute = from + offset;
        // A GPU wording in a clause of advice (`If you get CUDA out of memory, set …`) reports
        // nothing; the host's, a kill's or a not-OOM failure's is read as before.
        let advice = !matches!(
            family,
            Family::Host(_) | Family::NotOom(_) | Family::IllegalAccess
        ) && (look_alike::in_advice_clause(text, absolute)
            || look_alike::in_forecast(text, absolute));
        if !text[from..absolute].contains("raise ") && !advice {
            return Some((family, absolute));
        }
        let skip = rest[offset..].chars().next().map_or(1, char::len_utf8);
        from = absolute + skip;
    }
    None
}

/// A GPU-OOM wording quoted by the `raise` statement a traceback shows for its innermost frame
/// (`raise ValueError("No available memory for the cache blocks. "` of vLLM's
/// `check_enough_kv_cache_memory`), the exception's own line cut from the paste. The statement
/// that raised is the one shown, so its words are the message; read as a mention
/// ([`mention::mention_start`]), which any message that follows replaces. Not a host-memory or
/// other failure's wording, not prose that says `raise`, and not a line that rich or IPython
/// shows around the one that raised.
fn quoted_raise_start(text: &str) -> Option<(Family, usize)> {
    let from = find(text, "raise ")?;
    // rich and IPython print lines around the one that raised: only rich's `❱` line raised,
    // and IPython's numbered lines are not told apart once its `---->` arrow is cut.
    let before = text[..from].trim();
    if (before.contains('│') && !before.contains('❱'))
        || (!before.is_empty() && before.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let statement = &text[from..];
    // `raise ValueError("` / `raise torch.OutOfMemoryError(f'`: the exception's words open.
    let opening = regex!(r#"^raise [A-Za-z_][\w.]*\(\s*[fr]?["']"#).find(statement)?;
    let words = &statement[opening.end()..];
    let (family, offset) = detect_start_once(words)?;
    let gpu = !matches!(
        family,
        Family::Host(_) | Family::NotOom(_) | Family::IllegalAccess
    );
    (offset == 0 && gpu).then_some((family, from + opening.end()))
}

fn detect_start_once(text: &str) -> Option<(Family, usize)> {
    if frameworks::is_retried_allocation(text) {
        return None;
    }
    message_start(text).or_else(|| mention::mention_start(text))
}

/// Where a message in a family's own wording starts (every family but a mention in words).
fn message_start(text: &str) -> Option<(Family, usize)> {
    vllm::start(text)
        .or_else(|| tgi::start(text))
        .or_else(|| sglang::start(text))
        .or_else(|| llama_cpp::start(text))
        .or_else(|| pytorch::start(text))
        .or_else(|| frameworks::start(text))
        .or_else(|| devices::start(text))
        .or_else(|| cuda::start(text))
        .or_else(|| host::start(text))
        .or_else(|| not_oom::start(text))
        .or_else(|| cuda::start_fallback(text))
        .or_else(|| class_only_start(text))
}

/// Whether a family other than a mention starts on this text (a message in its own wording).
pub(crate) fn starts_a_message(text: &str) -> bool {
    message_start(text).is_some()
}

/// An exception class that is a GPU OOM, printed without its message: PyTorch's
/// `OutOfMemoryError` (`torch.OutOfMemoryError`, `torch.cuda.OutOfMemoryError`) as IPython's
/// header (`OutOfMemoryError      Traceback (most recent call last)`) or a webui's `task:
/// OutOfMemoryError` (AUTOMATIC1111 `modules/errors.py` `display`), and TensorFlow's
/// `ResourceExhaustedError` (its OOM status, `tensorflow/python/framework/errors_impl.py`)
/// as that header or `ResourceExhaustedError: 2 root error(s) found.` / `…: Graph execution
/// error:` before the op's `OOM when allocating` line. The message, when the paste has it, comes
/// later and replaces this one ([`Pending`]). Other `OutOfMemoryError` classes carry their own
/// text (`java.lang.OutOfMemoryError: Java heap space`, CuPy's, Ray's, Triton's `out of
/// resource`) and are not this.
fn class_only_start(text: &str) -> Option<(Family, usize)> {
    if let Some(begin) = cut_class_start(text) {
        return Some((Family::OtherGpu, begin));
    }
    for class in ["OutOfMemoryError", "ResourceExhaustedError"] {
        let Some(position) = find(text, class) else {
            continue;
        };
        let before = &text[..position];
        let rest = text[position + class.len()..].trim();
        // Ray re-raises a task's exception as a class named after it (`python/ray/
        // exceptions.py` `RayTaskError.make_dual_exception_type`: `name =
        // f"RayTaskError({cause_cls.__name__})"`), printed `ray.exceptions.RayTaskError(
        // OutOfMemoryError): ray::Worker.execute_model() (pid=…, ip=…)`: the task's own
        // OutOfMemoryError, whose message (when pasted) comes later in the worker's traceback.
        if before.ends_with("RayTaskError(") && rest.starts_with(')') {
            let wrapper = position - "RayTaskError(".len();
            let begin = text[..wrapper]
                .rfind(char::is_whitespace)
                .map_or(0, |at| at + 1);
            return Some((Family::OtherGpu, begin));
        }
        if before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            || before.ends_with("lang.")
            || ["java", "import ", "except", "raise "]
                .iter()
                .any(|word| before.contains(word))
        {
            continue;
        }
        let class_only = rest.is_empty()
            || rest.starts_with("Traceback (most recent call last)")
            || (class == "ResourceExhaustedError"
                && rest
                    .strip_prefix(':')
                    .map(str::trim_start)
                    .is_some_and(|after| !after.is_empty()));
        if class_only {
            let begin = before
                .rfind(|c: char| c.is_whitespace() || c == '(')
                .map_or(0, |at| at + 1);
            return Some((Family::OtherGpu, begin));
        }
    }
    None
}

/// PyTorch's OOM class cut short at the end of a line, as a paste, a screenshot's OCR or a
/// log shipper's line limit leaves it: `torch.cuda.OutOfMem`, `OutOfMemoryErro…`, or the
/// class with the start of its message cut (`torch.OutOfMemoryError: CUDA out of mem`). The
/// cut word is at least `OutOfMem`, stands alone or after `torch.` / `torch.cuda.`, and
/// nothing but dots or an ellipsis follows; another class (`java.lang.OutOfMemoryError`,
/// CuPy's, Ray's) is not this. The position of the class.
fn cut_class_start(text: &str) -> Option<usize> {
    const CLASS: &str = "OutOfMemoryError";
    const MESSAGE: &str = "CUDA out of memory.";
    let position = find(text, "OutOfMem")?;
    let rest = text[position..].trim_end_matches(['.', '…', ' ']);
    let cut = if let Some(message) = rest.strip_prefix("OutOfMemoryError:") {
        // The message cut before `out of memory` is whole (else `pytorch::start` read it).
        let message = message.trim_start();
        !message.is_empty() && message.len() < MESSAGE.len() && MESSAGE.starts_with(message)
    } else {
        rest.len() < CLASS.len() && CLASS.starts_with(rest)
    };
    if !cut {
        return None;
    }
    let before = &text[..position];
    let owner = before
        .rsplit(|c: char| c.is_whitespace() || c == '(' || c == '\'' || c == '"')
        .next()
        .unwrap_or("");
    matches!(owner, "" | "torch." | "torch.cuda.").then_some(position - owner.len())
}

/// Whether a message is only an exception class ([`class_only_start`]).
fn is_class_only(text: &str) -> bool {
    let text = text.trim();
    let class = text
        .split([' ', ':'])
        .next()
        .unwrap_or("")
        .rsplit('.')
        .next()
        .unwrap_or("");
    class == "OutOfMemoryError"
        || class == "ResourceExhaustedError"
        || cut_class_start(text) == Some(0)
}

/// Families printed as a chain of lines that each look like a start (llama.cpp's failure
/// lines, the kernel's OOM-killer lines): a start of the same family continues the message.
fn is_chain(family: Family) -> bool {
    matches!(
        family,
        Family::LlamaChain | Family::Host(HostKind::OomKiller)
    )
}

/// A line that starts like a fragment of the allocator message (`Tried to allocate …. GPU`)
/// right after an unfinished one: the console wrapped the message there.
fn is_wrapped_figures(open: &Open, family: Family, message: &str) -> bool {
    // `DefaultCPUAllocator: can't allocate memory: you` / `tried to allocate N bytes. Error
    // code 12 (Cannot allocate memory)`: the errno words of the wrapped half are not a new
    // message.
    if matches!(open.family, Family::Host(HostKind::CpuAllocator))
        && family == Family::Host(HostKind::Errno)
        && !is_complete(open)
    {
        return true;
    }
    matches!(open.family, Family::TorchAllocator(_))
        && family == Family::TorchAllocator(Accelerator::Cuda)
        && message.starts_with("Tried to allocate")
        && !open.squeezed.contains("Triedtoallocate")
}

fn is_complete(open: &Open) -> bool {
    let squeezed = open.squeezed.as_str();
    match open.family {
        Family::TorchAllocator(_) | Family::Mps => pytorch::is_complete(open.family, squeezed),
        Family::MallocAsync => pytorch::is_complete(open.family, squeezed),
        Family::CudaError => false,
        Family::CudaDriver | Family::Cublas | Family::IllegalAccess | Family::OtherGpu => true,
        Family::Host(HostKind::OomKiller) => false,
        Family::Host(kind) => host::is_complete(kind, squeezed),
        Family::VllmStartupFree
        | Family::VllmNoCacheBlocks
        | Family::VllmMaxSeqLen
        | Family::VllmWarmup => vllm::is_complete(open.family, squeezed),
        Family::Tgi => tgi::is_complete(squeezed),
        Family::Sglang => sglang::is_complete(squeezed),
        Family::LlamaChain => false,
        Family::Framework(kind) => frameworks::is_complete(kind, squeezed),
        Family::NotOom(_) => true,
    }
}

fn continuation(open: &Open, text: &str) -> Continuation {
    match open.family {
        Family::MallocAsync => pytorch::malloc_async_continuation(text),
        Family::CudaError => cuda::cuda_error_continuation(&open.text, open.lines, text),
        Family::LlamaChain => llama_cpp::continuation(&open.text, text),
        Family::Host(HostKind::OomKiller) => host::oom_killer_continuation(&open.text, text),
        Family::Framework(kind) => frameworks::continuation(kind, text),
        Family::TorchAllocator(_) => torch_continuation(open, text),
        _ => {
            if is_wrap_continuation(text) {
                Continuation::Append
            } else {
                Continuation::Close
            }
        }
    }
}

/// A console paste may split the allocator message over blank lines: they are skipped, and
/// the line after them continues the message only when it reads like its figures.
fn torch_continuation(open: &Open, text: &str) -> Continuation {
    if text.trim().is_empty() {
        return if open.blank_lines < 2 {
            Continuation::Skip
        } else {
            Continuation::Close
        };
    }
    if !is_wrap_continuation(text) {
        return Continuation::Close;
    }
    if open.blank_lines == 0 {
        return Continuation::Append;
    }
    const FIGURE_WORDS: [&str; 8] = [
        "allocated",
        "reserved",
        "capacity",
        "free",
        "PyTorch",
        "GiB",
        "MiB",
        "memory",
    ];
    if FIGURE_WORDS.iter().any(|word| text.contains(word)) {
        Continuation::Append
    } else {
        Continuation::Close
    }
}

/// Whether a line can be the hard-wrapped rest of an unfinished message: not empty, not a
/// traceback line, not the start of a new log record.
fn is_wrap_continuation(text: &str) -> bool {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return false;
    }
    const NOT_WRAP: [&str; 12] = [
        "Traceback",
        "File \"",
        "During handling",
        "The above exception",
        "INFO",
        "WARNING",
        "WARN ",
        "ERROR",
        "DEBUG",
        "CRITICAL",
        "^^^",
        "~~~",
    ];
    if NOT_WRAP.iter().any(|p| trimmed.starts_with(p)) {
        return false;
    }
    !starts_with_timestamp(trimmed)
}

/// `2024-05-01…`, `05-01 12:00:00`, `12:00:00`, `[2024-…`: a log record starts here.
fn starts_with_timestamp(text: &str) -> bool {
    let bytes = text.strip_prefix('[').unwrap_or(text).as_bytes();
    let digit = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
    let at = |i: usize, c: u8| bytes.get(i) == Some(&c);
    (digit(0) && digit(1) && digit(2) && digit(3) && at(4, b'-') && digit(5))
        || (digit(0) && digit(1) && at(2, b'-') && digit(3) && digit(4) && at(5, b' '))
        || (digit(0) && digit(1) && at(2, b':') && digit(3) && digit(4) && at(5, b':'))
}

fn append_line(open: &mut Open, text: &str) {
    if !open.text.is_empty() && !open.text.ends_with(' ') {
        open.text.push(' ');
    }
    append_normalized(&mut open.text, text.trim());
    squeeze_into(&mut open.squeezed, text);
}

/// The exception class printed before the message on its first line (`torch.OutOfMemoryError:`,
/// `RuntimeError: Worker failed with error '`, `OutOfMemoryError('`): the last identifier ending in
/// `Error`/`Exception` that is followed by `:` or `(`.
fn exception_class(prefix: &str) -> Option<String> {
    let bytes = prefix.as_bytes();
    let mut best: Option<&str> = None;
    let mut start: Option<usize> = None;
    for (index, &byte) in bytes
        .iter()
        .enumerate()
        .chain(std::iter::once((bytes.len(), &b' ')))
    {
        let ident = byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.';
        match (ident, start) {
            (true, None) => start = Some(index),
            (false, Some(begin)) => {
                let word = prefix[begin..index].trim_matches('.');
                let followed = matches!(byte, b':' | b'(');
                let class_like = word.ends_with("Error")
                    || word.ends_with("Exception")
                    || word.ends_with("Exhausted");
                if followed && class_like && word.len() > 5 {
                    best = Some(word);
                }
                start = None;
            }
            _ => {}
        }
    }
    best.map(str::to_string)
}

/// The quote right before the message (`'` or `"`), when the message sits in a repr or string.
fn opening_quote(prefix: &str) -> Option<char> {
    match prefix.trim_end().chars().next_back() {
        Some(quote @ ('\'' | '"')) => Some(quote),
        _ => None,
    }
}

/// An engine named by the wording of a message line.
fn engine_from_wording(text: &str) -> Option<EngineName> {
    const VLLM: [&str; 7] = [
        "gpu_memory_utilization",
        "gpu-memory-utilization",
        "vllm",
        "vLLM",
        "VLLM",
        "EngineCore",
        "Worker failed with error",
    ];
    // Aphrodite forked vLLM and kept its flags (`aphrodite run … --gpu-memory-utilization 0.7`).
    if text.contains("aphrodite") || text.contains("Aphrodite") {
        return Some(EngineName::Aphrodite);
    }
    if VLLM.iter().any(|w| text.contains(w)) {
        return Some(EngineName::Vllm);
    }
    if text.contains("text_generation")
        || text.contains("max-batch-prefill-tokens")
        || text.contains("Unable to warmup model")
    {
        return Some(EngineName::Tgi);
    }
    if text.contains("mem-fraction-static") || text.contains("sglang") {
        return Some(EngineName::Sglang);
    }
    if text.contains("ollama")
        || text.contains("llama runner")
        || text.contains("memory layout cannot be allocated")
    {
        return Some(EngineName::Ollama);
    }
    // llama.cpp's server loop (`tools/server/server.cpp` `update_slots`, `llama_decode`).
    if text.contains("ggml")
        || text.contains("GGML")
        || text.contains("llama.cpp")
        || text.contains("update_slots")
        || text.contains("llama_decode")
    {
        return Some(EngineName::Llamacpp);
    }
    None
}

/// vLLM's process prefixes name the engine (`(EngineCore_DP0 pid=…)`, `(VllmWorker rank=…)`).
fn engine_from_stream(line: &CleanLine<'_>) -> Option<EngineName> {
    let stream = line.stream.as_deref()?;
    const VLLM: [&str; 4] = ["EngineCore", "VllmWorker", "APIServer", "RayWorkerWrapper"];
    VLLM.iter()
        .any(|w| stream.contains(w))
        .then_some(EngineName::Vllm)
}

/// Cuts a repr-wrapped message at its closing quote (`…unallocated.')` → `…unallocated.`).
fn cut_at_closing_quote(text: &mut String, quote: char) {
    let bytes = text.as_bytes();
    let mut cut = None;
    for (index, &byte) in bytes.iter().enumerate() {
        if byte as char == quote {
            let next = bytes.get(index + 1).copied();
            if matches!(next, None | Some(b')' | b',' | b']' | b'}' | b'"' | b'\'')) {
                cut = Some(index);
            }
        }
    }
    if let Some(index) = cut {
        text.truncate(index);
        let trimmed = text.trim_end().len();
        text.truncate(trimmed);
    }
}

/// What the family's parser makes of a closed message (a function of its family, text and
/// squeezed text only).
fn parse_family(open: &Open) -> Option<Parsed> {
    let squeezed = open.squeezed.as_str();
    match open.family {
        Family::TorchAllocator(_) | Family::MallocAsync | Family::Mps => {
            Some(pytorch::parse(open.family, squeezed))
        }
        Family::CudaError
        | Family::CudaDriver
        | Family::Cublas
        | Family::IllegalAccess
        | Family::OtherGpu => Some(cuda::parse(open.family, &open.text, squeezed)),
        Family::Host(kind) => Some(host::parse(kind, &open.text, squeezed)),
        Family::VllmStartupFree
        | Family::VllmNoCacheBlocks
        | Family::VllmMaxSeqLen
        | Family::VllmWarmup => vllm::parse(open.family, squeezed),
        Family::Tgi => Some(tgi::parse(squeezed)),
        Family::Sglang => Some(sglang::parse(squeezed)),
        Family::LlamaChain => Some(llama_cpp::parse(&open.text, squeezed)),
        Family::Framework(kind) => Some(frameworks::parse(kind, squeezed)),
        Family::NotOom(kind) => Some(not_oom::parse(kind)),
    }
}

fn build(mut open: Open, memo: &mut ParseMemo) -> Option<OomMessage> {
    let mut parsed = memo.parse(&open)?;
    if open.quoted {
        if !parsed.is_gpu_oom {
            return None;
        }
        parsed.kind = OomKind::NamedWithoutMessage;
    }
    if let Some(quote) = open.quote {
        cut_at_closing_quote(&mut open.text, quote);
    }
    let wording = engine_from_wording(&open.text).or(open.prefix_hint);
    // ollama runs llama.cpp: its wording wins over the llama.cpp shape of the message.
    let engine_hint = match (parsed.engine_hint, wording) {
        (Some(EngineName::Llamacpp), Some(EngineName::Ollama)) => Some(EngineName::Ollama),
        (parsed, wording) => parsed.or(wording),
    };
    Some(OomMessage {
        kind: parsed.kind,
        is_gpu_oom: parsed.is_gpu_oom,
        engine_hint,
        figures: parsed.figures,
        line: open.start_line,
        stream: open.stream,
        exception: open.exception,
        text: open.text,
        end_line: open.end_line,
        details: parsed.details,
        t_ms: None,
    })
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
mod tests;
#[cfg(test)]
mod wordings_tests;
