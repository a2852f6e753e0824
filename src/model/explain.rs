//! What `oomdoc explain` found: the engine and its configuration, the startup timeline, the
//! failure phase, the memory accounting and the verdict.
//!
//! Plain serde data. Field names marked *contract* are fixed by issue 2 (`oomdoc explain
//! --json`); others may be added freely. Produced by `analyze::explain`, rendered by
//! `render::explain`, embedded by `oomdoc run` in its run record.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::failure::{EngineName, OomFigures, OomMessage};
use super::{Bytes, Source};

/// The whole `oomdoc explain` report (one JSON document, `schema_version` added by the renderer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainReport {
    /// *Contract.* Whether the failure found is a GPU memory failure.
    pub is_gpu_oom: bool,
    /// *Contract.* The engine that wrote the log and its version.
    pub engine: EngineInfo,
    /// The model being served or trained, when the log names it.
    pub model: Option<ModelInfo>,
    /// Engine settings the log shows (only those seen).
    pub config: EngineConfig,
    /// *Contract.* Figures of the first GPU OOM message; `null` when there is none.
    pub oom: Option<OomFigures>,
    /// *Contract.* Every failure message found, in input order (capped, see `ooms_total`).
    pub ooms: Vec<OomMessage>,
    /// How many failure messages the input held (may exceed `ooms.len()`).
    pub ooms_total: u64,
    /// *Contract.* The phase that failed.
    pub phase: PhaseReport,
    /// *Contract.* What the log shows happening, in order (the run containing the failure).
    pub timeline: Vec<TimelineEvent>,
    /// Each memory figure with the layer it comes from.
    pub accounting: Vec<AccountingLine>,
    /// *Contract.* Cause, evidence, next steps and the owner summary.
    pub verdict: Verdict,
    /// Library and driver versions seen in the text, e.g. `torch` → `2.3.1`.
    pub versions: BTreeMap<String, String>,
    /// The failure with the lines before it, one block per kept failure message.
    pub context: Vec<ContextBlock>,
    /// What was read.
    pub input: InputSummary,
}

/// *Contract* `engine`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineInfo {
    /// *Contract.* The engine or application the user ran (`EngineName`, snake_case in JSON).
    pub name: EngineName,
    /// *Contract.* The engine version as printed, when the log shows it.
    pub version: Option<String>,
    /// The vLLM engine generation (`v0` or `v1`) when the log shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
    /// The line that identified the engine.
    pub evidence_line: Option<u64>,
}

/// The model named in the log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelInfo {
    /// Name or path as printed (`meta-llama/Llama-3.1-8B-Instruct`, `/models/x.gguf`).
    pub name: Option<String>,
    /// Architecture (`LlamaForCausalLM`, `llama`) when printed.
    pub architecture: Option<String>,
    /// Weight dtype as printed (`torch.bfloat16`, `auto`, `Q4_K - Medium`).
    #[serde(alias = "torch_dtype")]
    pub dtype: Option<String>,
    /// Quantization method as printed (`awq`, `fp8`, `bitsandbytes`), when not none.
    pub quantization: Option<String>,
}

/// Engine settings seen in the log. Every field is optional: only what was printed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineConfig {
    /// vLLM `--tensor-parallel-size`, SGLang `--tp`, TGI `--num-shard`.
    pub tensor_parallel_size: Option<u64>,
    /// vLLM `--pipeline-parallel-size`.
    pub pipeline_parallel_size: Option<u64>,
    /// vLLM `--max-model-len` (or `max_seq_len` in the engine config), SGLang `context_len`,
    /// TGI `max_total_tokens`, llama.cpp `n_ctx`.
    pub max_model_len: Option<u64>,
    /// vLLM `--gpu-memory-utilization`.
    pub gpu_memory_utilization: Option<f64>,
    /// SGLang `--mem-fraction-static`.
    pub mem_fraction_static: Option<f64>,
    /// KV-cache dtype (`auto`, `fp8`, llama.cpp `type_k`).
    pub kv_cache_dtype: Option<String>,
    /// vLLM `--enforce-eager` (CUDA graphs off).
    pub enforce_eager: Option<bool>,
    /// vLLM `--max-num-seqs`, SGLang `max_running_requests`.
    pub max_num_seqs: Option<u64>,
    /// vLLM `--max-num-batched-tokens`, SGLang `chunked_prefill_size`, TGI `--max-batch-prefill-tokens`.
    pub max_num_batched_tokens: Option<u64>,
    /// vLLM `--cpu-offload-gb`.
    pub cpu_offload_gb: Option<f64>,
    /// llama.cpp layers offloaded to the GPU, e.g. `33/33`.
    pub gpu_layers: Option<String>,
    /// llama.cpp `n_batch` / `n_ubatch`.
    pub batch_size: Option<u64>,
}

/// The failure phases. Exactly this vocabulary.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Device checks before any weight is read.
    Startup,
    /// Reading the checkpoint and placing weights on the GPU.
    WeightsLoad,
    /// Post-load repack, quantization or conversion.
    FormatConversion,
    /// Warm-up or dummy forward passes that size caches (TGI warm-up, llama.cpp compute buffers).
    Profiling,
    /// Reserving the KV cache.
    KvCacheAlloc,
    /// CUDA-graph capture or compilation.
    CudaGraphCapture,
    /// Serving a request.
    Inference,
    /// A training step (forward, backward, optimizer).
    TrainingStep,
    /// The text does not show it (also any phase name this version does not know).
    #[default]
    #[serde(other)]
    Unknown,
}

impl Phase {
    /// Every phase, in the order a launch goes through them.
    pub const ALL: [Phase; 9] = [
        Phase::Startup,
        Phase::WeightsLoad,
        Phase::FormatConversion,
        Phase::Profiling,
        Phase::KvCacheAlloc,
        Phase::CudaGraphCapture,
        Phase::Inference,
        Phase::TrainingStep,
        Phase::Unknown,
    ];

    /// The phase of a contract name; a name this version does not know is `Unknown`.
    pub fn from_name(name: &str) -> Phase {
        Phase::ALL
            .into_iter()
            .find(|phase| phase.as_str() == name)
            .unwrap_or(Phase::Unknown)
    }

    /// The contract name (`weights_load`).
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Startup => "startup",
            Phase::WeightsLoad => "weights_load",
            Phase::FormatConversion => "format_conversion",
            Phase::Profiling => "profiling",
            Phase::KvCacheAlloc => "kv_cache_alloc",
            Phase::CudaGraphCapture => "cuda_graph_capture",
            Phase::Inference => "inference",
            Phase::TrainingStep => "training_step",
            Phase::Unknown => "unknown",
        }
    }

    /// Words for a person (`loading weights`).
    pub fn describe(self) -> &'static str {
        match self {
            Phase::Startup => "startup (device checks before any weight is read)",
            Phase::WeightsLoad => "loading weights",
            Phase::FormatConversion => "converting or repacking weights after loading",
            Phase::Profiling => "profiling / warm-up (dummy passes that size the caches)",
            Phase::KvCacheAlloc => "reserving the KV cache",
            Phase::CudaGraphCapture => "capturing CUDA graphs / compiling",
            Phase::Inference => "running inference (a request or a batch)",
            Phase::TrainingStep => "a training step",
            Phase::Unknown => "not shown in the text",
        }
    }

    /// A few words for a headline (`loading weights`).
    pub fn short(self) -> &'static str {
        match self {
            Phase::Startup => "starting up",
            Phase::WeightsLoad => "loading weights",
            Phase::FormatConversion => "converting weights",
            Phase::Profiling => "profiling / warming up",
            Phase::KvCacheAlloc => "reserving the KV cache",
            Phase::CudaGraphCapture => "capturing CUDA graphs",
            Phase::Inference => "running inference",
            Phase::TrainingStep => "running a training step",
            Phase::Unknown => "in an unknown phase",
        }
    }

    /// Whether the phase comes before the engine accepts requests.
    pub fn is_startup(self) -> bool {
        matches!(
            self,
            Phase::Startup
                | Phase::WeightsLoad
                | Phase::FormatConversion
                | Phase::Profiling
                | Phase::KvCacheAlloc
                | Phase::CudaGraphCapture
        )
    }
}

/// *Contract* `phase`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhaseReport {
    /// *Contract.* The phase in progress when the failure happened.
    pub failed_in: Phase,
    /// *Contract.* The last phase the log shows completed, if any.
    pub last_completed: Option<Phase>,
    /// *Contract.* Whether the server was accepting requests; `null` when the log cannot say.
    pub server_was_ready: Option<bool>,
    /// Whether a user request can have caused the failure (`false` before the server was ready).
    pub prompt_can_be_cause: Option<bool>,
    /// Why this phase: the lines and frames that show it.
    pub evidence: Vec<String>,
}

/// The evidence of a report whose log and traceback show no stage.
pub const NO_STAGE_SHOWN: &str = "neither the log nor a traceback shows which stage was running";

impl PhaseReport {
    /// Records the stage found for a report that had none: `phase`, with `why` in place of the
    /// line saying that nothing shows the stage.
    pub fn found(&mut self, phase: Phase, why: String) {
        self.failed_in = phase;
        self.evidence.retain(|line| line != NO_STAGE_SHOWN);
        self.evidence.push(why);
    }

    /// Whether the stage is unknown because nothing showed one, not because what showed the
    /// run said it was none of the stages (a checkpoint save inside the training loop).
    pub fn nothing_shown(&self) -> bool {
        self.failed_in == Phase::Unknown
            && (self.evidence.is_empty() || self.evidence.iter().any(|line| line == NO_STAGE_SHOWN))
    }
}

/// What happened at one line of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The engine printed its banner or configuration (a process started).
    EngineStart,
    /// Distributed / device initialisation.
    DeviceInit,
    /// Checkpoint download started.
    DownloadStart,
    /// Checkpoint download finished.
    DownloadDone,
    /// Reading weights started.
    WeightsLoadStart,
    /// Progress of reading checkpoint shards.
    WeightsLoadProgress,
    /// Weights read from disk (time only).
    WeightsRead,
    /// Weights are on the GPU (size and/or time).
    WeightsLoaded,
    /// Post-load conversion or repack.
    FormatConversion,
    /// torch.compile / graph compilation.
    Compile,
    /// Memory profiling or warm-up started.
    ProfilingStart,
    /// Memory profiling or warm-up finished (may carry the KV budget).
    ProfilingDone,
    /// The KV cache was sized or allocated (tokens, blocks, bytes).
    KvCacheAllocated,
    /// The engine sized the KV cache and logged it before allocating it (vLLM V0
    /// `initialize_cache` logs `# GPU blocks`, V1 `get_kv_cache_config(s)` logs `GPU KV cache
    /// size`, both before the tensors exist): the allocation is in progress after it.
    KvCachePlanned,
    /// Maximum concurrency for the configured context length.
    KvConcurrency,
    /// CUDA-graph capture started.
    CudaGraphCaptureStart,
    /// CUDA-graph capture finished.
    CudaGraphCaptureDone,
    /// The engine finished initialising.
    EngineReady,
    /// The API accepts requests (`api_ready` in the report's first hand-made records).
    #[serde(alias = "api_ready")]
    ServerReady,
    /// A request was served (consecutive requests are merged, see `count`).
    Request,
    /// A periodic serving statistics line.
    ServingStats,
    /// The engine preempted or retracted requests for lack of KV cache.
    KvPressure,
    /// A training step / iteration (`training_start` in the report's first hand-made records).
    #[serde(alias = "training_start")]
    TrainingStep,
    /// An evaluation pass of a training job (validation, test or prediction loop): the model
    /// runs on inputs without a backward pass.
    Evaluation,
    /// A training job saving a checkpoint (a save is no GPU stage: the phase is not shown).
    CheckpointSave,
    /// An inference engine being built (TensorRT-LLM `trtllm-build`, TensorRT `trtexec
    /// --onnx`): no stage of the list, so a failure during it shows no phase.
    EngineBuild,
    /// A Python traceback started.
    Traceback,
    /// A failure message (OOM or other; `oom` in the report's first hand-made records).
    #[serde(alias = "oom")]
    Failure,
    /// The process or server shut down or failed to start.
    Shutdown,
    /// Lines of a long input that were searched for failure messages only (`line` to
    /// `last_line`; `figures.bytes` their size): stages, requests and restarts there are not
    /// in the timeline.
    FailuresOnly,
}

/// Figures a timeline line carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EventFigures {
    /// Bytes (weights loaded, KV cache size, graph memory), converted from the printed GiB/MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
    /// Seconds as printed (load time, capture time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Tokens (KV cache size, max batch total tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Blocks (vLLM V0 `# GPU blocks`, TGI KV-cache blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    /// Free memory the engine reported at that point (SGLang `avail mem`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_bytes: Option<Bytes>,
    /// A ratio as printed (vLLM maximum concurrency `28.41x`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
}

impl EventFigures {
    /// Whether nothing was extracted.
    pub fn is_empty(&self) -> bool {
        self == &EventFigures::default()
    }
}

/// One timeline entry. Records written before the explain document was fixed name `kind`
/// `event` and `text` `detail`, and may lack the line and count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEvent {
    /// What happened.
    #[serde(alias = "event")]
    pub kind: EventKind,
    /// The phase this event starts, continues or completes.
    #[serde(default)]
    pub phase: Phase,
    /// 1-based line number (0 when the record does not say).
    #[serde(default)]
    pub line: u64,
    /// The timestamp as printed on the line, when it has one.
    pub timestamp: Option<String>,
    /// Seconds since the first timestamped event of this timeline, when computable.
    pub seconds_since_start: Option<f64>,
    /// The stream prefix (`rank0`, `EngineCore_DP0 pid=123`), when any.
    pub stream: Option<String>,
    /// The figures on the line.
    #[serde(skip_serializing_if = "EventFigures::is_empty", default)]
    pub figures: EventFigures,
    /// How many consecutive lines of this kind were merged into this event (requests, stats).
    #[serde(default)]
    pub count: u64,
    /// The last merged line, when `count` > 1.
    pub last_line: Option<u64>,
    /// The cleaned line, shortened.
    #[serde(alias = "detail", default)]
    pub text: String,
    /// When the line arrived, ms since the start of the launch (only in a run record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_ms: Option<u64>,
}

/// One memory figure with its layer and source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountingLine {
    /// Stable key (`allocated_by_pytorch`, `reserved_total`, `weights_loaded` …).
    pub key: String,
    /// Exact bytes.
    pub bytes: Bytes,
    /// Where it comes from.
    pub source: Source,
    /// True when oomdoc computed it from other figures (e.g. reserved = allocated + unallocated).
    pub derived: bool,
    /// What the number is, in one sentence.
    pub meaning: String,
    /// True when the figure is a lower bound, not the size itself (PyTorch's "more than
    /// 1EB"): shown as "more than …".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lower_bound: bool,
}

/// The likely cause (snake_case in JSON).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// One allocation asks for more than the whole card (a real size, too large for it).
    RequestLargerThanGpu,
    /// One allocation asks for a size no GPU has (exabytes, a wrapped or negative dimension):
    /// an overflow bug, not a lack of memory.
    SizeOverflow,
    /// Other processes hold the memory that was missing.
    OtherProcessesHoldMemory,
    /// Enough memory is reserved but unallocated: fragmentation is plausible.
    FragmentationPlausible,
    /// The weights alone do not fit.
    WeightsDoNotFit,
    /// The KV-cache budget is too small for the configuration (context length, sequences).
    KvCacheBudget,
    /// Free memory at start is below what the engine was told to take.
    FreeMemoryBelowRequested,
    /// A transient peak of conversion or CUDA-graph capture.
    TransientPeak,
    /// Warm-up / profiling with the maximum batch needs more than is left.
    WarmupPeak,
    /// Serving requests needed more than the headroom left beside weights and KV cache.
    InferenceLoad,
    /// A training step (activations, gradients, optimizer state) needs more than the card.
    TrainingMemory,
    /// This process filled the card; the text does not say with what.
    CapacityExhausted,
    /// One allocation asked for more than was free, though the card was not full.
    LargeAllocation,
    /// Not a GPU OOM: host (CPU) memory ran out.
    HostMemory,
    /// Not a GPU OOM: the process was killed by a signal (SIGKILL, exit code 137 or -9) and
    /// nothing in the text says why (no OOM-killer line, no `OOMKilled`).
    KilledBySignal,
    /// Not a GPU OOM: an illegal memory access (a bug or a corrupted state, not capacity).
    IllegalMemoryAccess,
    /// Not a GPU OOM: `/dev/shm` (shared memory for DataLoader workers) ran out.
    SharedMemory,
    /// Not a GPU OOM: the disk is full.
    DiskFull,
    /// Not a GPU OOM: a device-side assert (bad index or label in a kernel).
    DeviceAssert,
    /// Not a GPU OOM: a Triton kernel needs more shared memory/registers than one SM has.
    TritonResources,
    /// Not a GPU OOM: llama.cpp's context (its KV cells, shared by the server's slots) is full.
    ContextFull,
    /// The text does not show enough to say.
    #[default]
    Unknown,
}

impl Cause {
    /// Whether the missing memory was held by someone else (other processes, or less free at
    /// start than the engine was told to take).
    pub fn memory_held_elsewhere(self) -> bool {
        matches!(
            self,
            Cause::OtherProcessesHoldMemory | Cause::FreeMemoryBelowRequested
        )
    }

    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::RequestLargerThanGpu => "request_larger_than_gpu",
            Cause::SizeOverflow => "size_overflow",
            Cause::OtherProcessesHoldMemory => "other_processes_hold_memory",
            Cause::FragmentationPlausible => "fragmentation_plausible",
            Cause::WeightsDoNotFit => "weights_do_not_fit",
            Cause::KvCacheBudget => "kv_cache_budget",
            Cause::FreeMemoryBelowRequested => "free_memory_below_requested",
            Cause::TransientPeak => "transient_peak",
            Cause::WarmupPeak => "warmup_peak",
            Cause::InferenceLoad => "inference_load",
            Cause::TrainingMemory => "training_memory",
            Cause::CapacityExhausted => "capacity_exhausted",
            Cause::LargeAllocation => "large_allocation",
            Cause::HostMemory => "host_memory",
            Cause::KilledBySignal => "killed_by_signal",
            Cause::IllegalMemoryAccess => "illegal_memory_access",
            Cause::SharedMemory => "shared_memory",
            Cause::DiskFull => "disk_full",
            Cause::DeviceAssert => "device_assert",
            Cause::TritonResources => "triton_resources",
            Cause::ContextFull => "context_full",
            Cause::Unknown => "unknown",
        }
    }
}

/// Hardware limit or configuration error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnerClass {
    /// The card is too small for what is asked; a setting will not fix it.
    HardwareLimit,
    /// A setting or another process is the problem; no new hardware needed.
    Configuration,
    /// Not a GPU memory problem.
    NotGpuMemory,
    /// The text does not show enough to say.
    #[default]
    Undetermined,
}

/// *Contract* `verdict`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Verdict {
    /// *Contract.* The likely cause.
    pub cause: Cause,
    /// One line saying the cause in words.
    pub headline: String,
    /// *Contract.* The facts that support it, each naming its source.
    pub evidence: Vec<String>,
    /// *Contract.* What to change, with the real flag or setting for that engine and version.
    pub next_steps: Vec<String>,
    /// Hardware limit or configuration error.
    pub owner_class: OwnerClass,
    /// *Contract.* One paragraph for the owner.
    pub owner_summary: String,
}

/// The lines around one failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextBlock {
    /// The line the failure message starts at.
    pub failure_line: u64,
    /// Raw lines (ANSI stripped), with their numbers, ending with the failure message.
    pub lines: Vec<ContextLine>,
}

/// One line of context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextLine {
    /// 1-based line number.
    pub line: u64,
    /// The text (lossy UTF-8, ANSI and `\r` removed, shortened past 2000 characters).
    pub text: String,
}

/// What was read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct InputSummary {
    /// Input names in order (`<stdin>` or paths).
    pub names: Vec<String>,
    /// Total lines.
    pub lines: u64,
    /// Total bytes.
    pub bytes: u64,
    /// How many engine processes started in the input (restarts show as > 1; only those in
    /// the lines that were parsed, see `failures_only_lines`).
    pub engine_starts: u64,
    /// Lines of a long input searched for failure messages only (not parsed for stages,
    /// requests or restarts); 0 when every line was parsed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failures_only_lines: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}
