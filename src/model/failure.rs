//! What a failure text says: the OOM message family, its figures in exact bytes, and where
//! in the input it was found.
//!
//! Produced by `parse::oom_text`; consumed by `analyze` (accounting, phase, verdict).
//! Field names of [`OomFigures`] are a JSON contract (`oomdoc explain --json` → `oom`).

use serde::{Deserialize, Serialize};

use super::gpu::CudaOrdinal;
use super::Bytes;

/// The engine, application or framework that printed the text (contract values for
/// `engine.name`): the application the user ran, not the libraries under it (see
/// `parse::engine_log::engines::layer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineName {
    /// vLLM.
    Vllm,
    /// SGLang.
    Sglang,
    /// Hugging Face text-generation-inference.
    Tgi,
    /// llama.cpp (llama-server, llama-cli).
    Llamacpp,
    /// ollama (wraps llama.cpp).
    Ollama,
    /// Hugging Face transformers (`Trainer`, `from_pretrained`, `generate`).
    Transformers,
    /// Hugging Face accelerate (`accelerate launch`, `Accelerator`, `dispatch_model`).
    Accelerate,
    /// Hugging Face PEFT (LoRA, QLoRA adapters).
    Peft,
    /// PyTorch Lightning / Lightning Fabric.
    Lightning,
    /// DeepSpeed (ZeRO training) and DeepSpeed-MII.
    Deepspeed,
    /// Plain PyTorch (a training script, a notebook).
    Pytorch,
    /// JAX / XLA.
    Jax,
    /// TensorFlow / Keras.
    Tensorflow,
    /// NVIDIA TensorRT-LLM (engine builder, runtime, Triton backend, `trtllm-serve`).
    TensorrtLlm,
    /// LMDeploy (TurboMind and its PyTorch engine).
    Lmdeploy,
    /// ExLlamaV2 and the apps built on it (TabbyAPI, text-generation-webui's loader).
    Exllamav2,
    /// MLC-LLM (TVM runtime).
    MlcLlm,
    /// Aphrodite engine (a vLLM fork).
    Aphrodite,
    /// Hugging Face diffusers pipelines.
    Diffusers,
    /// ComfyUI.
    Comfyui,
    /// AUTOMATIC1111 stable-diffusion-webui (and Forge).
    Automatic1111,
    /// InvokeAI.
    Invokeai,
    /// Fooocus (runs its own copy of ComfyUI's model management, `ldm_patched`).
    Fooocus,
    /// Ultralytics YOLO (`ultralytics` package, the `yolo` CLI).
    Ultralytics,
    /// Detectron2.
    Detectron2,
    /// OpenMMLab (MMEngine's runner: MMDetection, MMSegmentation, MMPose, …).
    Openmmlab,
    /// OpenAI Whisper (`openai-whisper`, the `whisper` package on PyTorch).
    Whisper,
    /// CTranslate2 and the apps on it (faster-whisper, whisper-ctranslate2); not PyTorch's
    /// allocator.
    Ctranslate2,
    /// Anything else, or not known.
    Other,
}

impl EngineName {
    /// The name as people write it (`vLLM`, `llama.cpp`, `TensorRT-LLM`).
    pub fn label(self) -> &'static str {
        match self {
            EngineName::Vllm => "vLLM",
            EngineName::Sglang => "SGLang",
            EngineName::Tgi => "TGI",
            EngineName::Llamacpp => "llama.cpp",
            EngineName::Ollama => "ollama",
            EngineName::Transformers => "transformers",
            EngineName::Accelerate => "accelerate",
            EngineName::Peft => "PEFT",
            EngineName::Lightning => "Lightning",
            EngineName::Deepspeed => "DeepSpeed",
            EngineName::Pytorch => "PyTorch",
            EngineName::Jax => "JAX",
            EngineName::Tensorflow => "TensorFlow",
            EngineName::TensorrtLlm => "TensorRT-LLM",
            EngineName::Lmdeploy => "LMDeploy",
            EngineName::Exllamav2 => "ExLlamaV2",
            EngineName::MlcLlm => "MLC-LLM",
            EngineName::Aphrodite => "Aphrodite",
            EngineName::Diffusers => "diffusers",
            EngineName::Comfyui => "ComfyUI",
            EngineName::Automatic1111 => "AUTOMATIC1111",
            EngineName::Invokeai => "InvokeAI",
            EngineName::Fooocus => "Fooocus",
            EngineName::Ultralytics => "Ultralytics YOLO",
            EngineName::Detectron2 => "Detectron2",
            EngineName::Openmmlab => "OpenMMLab (MMEngine)",
            EngineName::Whisper => "openai-whisper",
            EngineName::Ctranslate2 => "CTranslate2 (faster-whisper)",
            EngineName::Other => "unknown engine",
        }
    }
}

/// The family of a failure message. `is_gpu_oom` says whether it is a GPU memory failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OomKind {
    /// PyTorch caching allocator, ≤1.3 wording ("… cached)").
    PytorchCached,
    /// PyTorch caching allocator, 1.4–2.0 wording ("reserved in total by PyTorch").
    PytorchReservedInTotal,
    /// PyTorch caching allocator, 2.1+ wording ("total capacity of … of which … is free").
    PytorchTotalCapacity,
    /// PyTorch "Tried to allocate more than 1EB memory".
    PytorchAbsurdSize,
    /// PyTorch 2.12+ "Allocation was preemptively rejected … per_process_memory_fraction".
    PytorchFractionRejected,
    /// cudaMallocAsync backend "would exceed allowed memory".
    CudaMallocAsync,
    /// Raw `CUDA error: out of memory` (context creation, caching disabled, C10_CUDA_CHECK).
    CudaErrorOutOfMemory,
    /// `CUDA driver error: out of memory`.
    CudaDriverOutOfMemory,
    /// cuBLAS workspace/handle allocation (`CUBLAS_STATUS_ALLOC_FAILED`, `NOT_INITIALIZED` at create).
    CublasAlloc,
    /// vLLM: free memory on startup is less than the requested utilization.
    VllmStartupFreeMemory,
    /// vLLM: no available memory for the cache blocks.
    VllmNoCacheBlocks,
    /// vLLM: max_model_len larger than what the KV cache can hold.
    VllmMaxSeqLenTooLarge,
    /// vLLM: OOM in the sampler / warm-up dummy run.
    VllmWarmupOom,
    /// TGI warm-up "Not enough memory to handle …".
    TgiWarmup,
    /// ExLlamaV2 / ExLlamaV3 autosplit: "Insufficient VRAM (in split) for model and cache".
    ExllamaSplit,
    /// SGLang memory errors (not enough memory for KV cache, etc.).
    SglangMemory,
    /// llama.cpp / ggml: `cudaMalloc failed`, `failed to allocate CUDA0 buffer of size N`.
    LlamacppAlloc,
    /// HIP (ROCm) out of memory.
    HipOutOfMemory,
    /// XPU out of memory.
    XpuOutOfMemory,
    /// NPU out of memory (Huawei Ascend, `torch_npu`'s caching allocator).
    NpuOutOfMemory,
    /// Not a GPU OOM: host RAM exhausted (DefaultCPUAllocator, OOM killer, "requires more system memory").
    HostMemory,
    /// Not a GPU OOM: illegal memory access / invalid address (a bug, not a capacity problem).
    IllegalMemoryAccess,
    /// Apple MPS backend out of memory.
    MpsOutOfMemory,
    /// Another recognised GPU memory failure.
    OtherGpuOom,
    /// The text names a GPU out-of-memory failure (an issue title, the reporter's sentence, an
    /// application's note that it caught one) but shows no message of it: no figures.
    NamedWithoutMessage,
    /// JAX/XLA `RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes`, `Failed to
    /// allocate request for 1.00GiB (1073741824B) on device ordinal 0`, cuMemAllocAsync failures.
    XlaResourceExhausted,
    /// TensorFlow `OOM when allocating tensor with shape[…] and type … by allocator GPU_0_bfc`.
    TensorflowOomTensor,
    /// TensorFlow/TSL BFC allocator `Allocator (GPU_0_bfc) ran out of memory trying to allocate …`.
    TensorflowBfc,
    /// HIP runtime outside PyTorch's allocator (`hipErrorOutOfMemory`, `HIP_ERROR_OutOfMemory`).
    HipRuntimeOutOfMemory,
    /// cuDNN allocation (`CUDNN_STATUS_ALLOC_FAILED`) or workspace failure.
    CudnnAlloc,
    /// NCCL `Cuda failure 'out of memory'` / `Cuda failure 2 'out of memory'`.
    NcclCudaFailure,
    /// TensorRT `Requested amount of GPU memory (N bytes) could not be allocated`.
    TensorrtAlloc,
    /// CuPy `cupy.cuda.memory.OutOfMemoryError: Out of memory allocating N bytes`.
    CupyOutOfMemory,
    /// Not a GPU OOM: `/dev/shm` exhausted (DataLoader bus error, "insufficient shared memory").
    SharedMemory,
    /// Not a GPU OOM: the disk is full (`No space left on device`).
    DiskFull,
    /// Not a GPU OOM: a device-side assert (an index out of range in a kernel, bad labels).
    DeviceAssert,
    /// Not a GPU OOM: Triton `OutOfResources` (a kernel's shared memory/registers per block).
    TritonOutOfResources,
    /// Not a GPU OOM: llama.cpp found no free KV cells for a batch (`failed to find free space
    /// in the KV cache`, `failed to find a memory slot for batch`): the context is full.
    ContextFull,
    /// Not a GPU OOM: the process was killed by a signal (a shell's `Killed`, exit code 137 or
    /// -9, `SIGKILL`) and the message itself does not say why. Host memory only when another
    /// line shows it (the kernel's OOM killer, Kubernetes `OOMKilled`).
    KilledBySignal,
}

/// One other process named in a PyTorch 2.1+ message (`Process N has X memory in use`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherProcess {
    /// Host PID as NVML reported it.
    pub pid: u32,
    /// Bytes in use; `None` when the driver reported the N/A sentinel (`17179869184.00 GiB`).
    pub in_use_bytes: Option<Bytes>,
}

/// Figures of one OOM message, exact bytes as printed (binary units) — the `oom` JSON object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OomFigures {
    /// `GPU N` / `device N` / `CUDA0` / `GPU_0_bfc`: the CUDA ordinal in the failing process,
    /// not the NVML index. Named `gpu_index` in the JSON and the corpus labels.
    pub gpu_index: Option<CudaOrdinal>,
    /// "Tried to allocate" / "Requested" / llama.cpp buffer size.
    pub tried_to_allocate_bytes: Option<Bytes>,
    /// "total capacity" (cudaMemGetInfo total, excludes driver-reserved memory).
    pub total_capacity_bytes: Option<Bytes>,
    /// "of which … is free" (cudaMemGetInfo free, device-wide).
    pub free_bytes: Option<Bytes>,
    /// Only "Including non-PyTorch memory, this process has X memory in use". `u64::MAX`
    /// ([`OomFigures::NVML_NOT_AVAILABLE`]) when PyTorch printed NVML's N/A value
    /// (`17179869184.00 GiB`): the clause was there, the figure was not.
    pub process_in_use_bytes: Option<Bytes>,
    /// "is allocated by PyTorch" / "already allocated" (live tensors, incl. private pools in 2.4+).
    pub allocated_by_pytorch_bytes: Option<Bytes>,
    /// "reserved by PyTorch but unallocated" / ≤1.3 "cached".
    pub reserved_unallocated_bytes: Option<Bytes>,
    /// "reserved in total by PyTorch" (1.4–2.0), or derived where the message allows.
    pub reserved_total_bytes: Option<Bytes>,
    /// "with X allocated in private pools (e.g., CUDA Graphs)".
    pub private_pools_bytes: Option<Bytes>,
    /// "X allowed;" (set_per_process_memory_fraction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_bytes: Option<Bytes>,
    /// Other processes named in the text, in the order printed (NVML order).
    pub other_processes: Vec<OtherProcess>,
    /// Names of the fields above that were computed from printed ones rather than printed
    /// (e.g. `reserved_total_bytes` = allocated + reserved-but-unallocated in 2.1+).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived_fields: Vec<String>,
    /// Names of the fields above that hold a lower bound, not the size itself: PyTorch's
    /// `Tried to allocate more than 1EB memory` (a request of 2^60 bytes or more) gives
    /// `tried_to_allocate_bytes` = 2^60, shown as "more than 1 EiB".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lower_bound_fields: Vec<String>,
}

impl OomFigures {
    /// What `process_in_use_bytes` holds when NVML reported N/A for this process: PyTorch
    /// prints `(unsigned long long)-1` bytes as `17179869184.00 GiB`.
    pub const NVML_NOT_AVAILABLE: Bytes = Bytes(u64::MAX);

    /// NVML's figure for this process, when it reported one (not the N/A sentinel).
    pub fn process_in_use_reported(&self) -> Option<Bytes> {
        self.process_in_use_bytes
            .filter(|bytes| *bytes != Self::NVML_NOT_AVAILABLE)
    }

    /// Whether the request's size is only a lower bound (PyTorch's "more than 1EB").
    pub fn tried_to_allocate_is_lower_bound(&self) -> bool {
        self.lower_bound_fields
            .iter()
            .any(|field| field == "tried_to_allocate_bytes")
    }

    /// Whether the message printed "this process has" with NVML's N/A value.
    pub fn process_in_use_not_reported(&self) -> bool {
        self.process_in_use_bytes == Some(Self::NVML_NOT_AVAILABLE)
    }
}

/// Engine-specific numbers a message prints besides the allocator figures (vLLM KV-cache
/// checks, TGI warm-up, SGLang, llama.cpp buffers, host memory). Only what was printed is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineFigures {
    /// vLLM: the model's max seq len (`max_model_len`) named by the KV-capacity check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<u64>,
    /// vLLM: `max_num_seqs` named by the hybrid models' state-cache check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_num_seqs: Option<u64>,
    /// vLLM V1 hybrid models: Mamba state-cache blocks that fit (one per decode sequence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mamba_cache_blocks: Option<u64>,
    /// vLLM V0: tokens the KV cache can hold (`block_size × num_gpu_blocks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_capacity_tokens: Option<u64>,
    /// vLLM V1: KV cache needed for one request of max length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_needed_bytes: Option<Bytes>,
    /// vLLM V1: the available KV cache memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_available_bytes: Option<Bytes>,
    /// vLLM V1: "the estimated maximum model length is N".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_max_model_len: Option<u64>,
    /// vLLM: `gpu_memory_utilization` as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_utilization: Option<f64>,
    /// vLLM: memory the utilization asks for (total × utilization).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_memory_bytes: Option<Bytes>,
    /// The largest contiguous free region the allocator reports beside its free total (the TPU
    /// runtime's `Due to fragmentation, the largest contiguous region of free memory is 30.56M.`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_free_block_bytes: Option<Bytes>,
    /// HAMi-core: the container's usage on the device plus the refused request (`Device D OOM
    /// N / L`'s N); near 2^64 when HAMi's usage counter wrapped below zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_with_request_bytes: Option<Bytes>,
    /// MLC-LLM: the model's weights as its memory budget counted them (`model weight size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_weights_bytes: Option<Bytes>,
    /// MLC-LLM: the temporary buffers and workspaces its budget counted beside the weights
    /// (`temporary buffer size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_bytes: Option<Bytes>,
    /// vLLM: dummy requests of the sampler/pooler warm-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_requests: Option<u64>,
    /// TGI: prefill tokens of the warm-up batch (`--max-batch-prefill-tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_tokens: Option<u64>,
    /// TGI: `max_total_tokens` that did not fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_tokens: Option<u64>,
    /// SGLang: `mem_fraction_static` as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_fraction_static: Option<f64>,
    /// llama.cpp: the buffer type that failed (`CUDA0`, `CUDA_Host`, `ROCm1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_type: Option<String>,
    /// llama.cpp: what the buffer was for (`model weights`, `kv cache`, `compute`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_purpose: Option<String>,
    /// MPS: "other allocations" (Metal memory outside PyTorch's allocator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mps_other_allocations_bytes: Option<Bytes>,
    /// Host RAM asked for (DefaultCPUAllocator, ollama's "requires more system memory").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_required_bytes: Option<Bytes>,
    /// Host RAM available (ollama).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_available_bytes: Option<Bytes>,
    /// Linux OOM killer: the killed PID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub killed_pid: Option<u32>,
    /// Linux OOM killer: the killed process's name (`Killed process N (python)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub killed_process: Option<String>,
    /// Linux OOM killer: resident memory of the killed process, `anon-rss` + `file-rss` +
    /// `shmem-rss` of its `Killed process` line (printed in kB, 1024 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub killed_rss_bytes: Option<Bytes>,
    /// Linux OOM killer: the killed process's `anon-rss` alone (its own heap: what it allocated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub killed_anon_rss_bytes: Option<Bytes>,
    /// Linux OOM killer: the memory cgroup's limit (`memory: usage NkB, limit NkB`), or a
    /// limit printed by Kubernetes; absent when the cgroup had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_limit_bytes: Option<Bytes>,
    /// Linux OOM killer: the memory cgroup's usage when it hit the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_usage_bytes: Option<Bytes>,
    /// Linux OOM killer: `CONSTRAINT_MEMCG` (a cgroup's limit: container, pod, systemd unit)
    /// or `CONSTRAINT_NONE` (the whole machine ran out), from `oom-kill:constraint=`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_constraint: Option<String>,
    /// Linux OOM killer: the cgroup of the killed task (`task_memcg=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_cgroup: Option<String>,
    /// A process exit code that hints at the cause (137 = SIGKILL, often the OOM killer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

impl EngineFigures {
    /// True when nothing was printed.
    pub fn is_empty(&self) -> bool {
        *self == EngineFigures::default()
    }
}

/// One failure message found in the input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OomMessage {
    /// Message family.
    pub kind: OomKind,
    /// Whether this is a GPU memory failure (false for host RAM and illegal access).
    pub is_gpu_oom: bool,
    /// The engine whose wording this is, when the message itself shows it.
    pub engine_hint: Option<EngineName>,
    /// The figures, exact bytes.
    pub figures: OomFigures,
    /// 1-based line number in the input where the message starts.
    pub line: u64,
    /// The stream the line came from (`rank0`, `EngineCore pid=123`, a compose service), if prefixed.
    pub stream: Option<String>,
    /// The exception class as printed (`torch.OutOfMemoryError`, `RuntimeError`, …), if any.
    pub exception: Option<String>,
    /// The message text, cleaned and joined into one line.
    pub text: String,
    /// 1-based line number of the last input line that belongs to the message.
    pub end_line: u64,
    /// Engine-specific numbers printed by the message (empty for plain allocator messages).
    #[serde(default, skip_serializing_if = "EngineFigures::is_empty")]
    pub details: EngineFigures,
    /// When the line arrived, ms since the start of the launch (only in a run record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_ms: Option<u64>,
}
