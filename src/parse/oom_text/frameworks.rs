//! GPU OOM messages of frameworks and libraries other than PyTorch's allocator: JAX/XLA,
//! TensorFlow (op kernels and the BFC allocator), the HIP runtime, cuDNN, NCCL, TensorRT, CuPy.
//!
//! Sources (wording as the code builds it):
//! * XLA `xla/stream_executor/integrations/tf_allocator_adapter.cc` and
//!   `xla/pjrt/…` (`"Out of memory while trying to allocate " << size << " bytes."`, newer builds
//!   print a human size `16.00GiB`), TSL `xla/tsl/framework/bfc_allocator.cc`
//!   (`Failed to allocate request for 1.00GiB (1073741824B) on device ordinal 0`),
//!   `xla/stream_executor/gpu/gpu_cudamallocasync_allocator.cc` (`cuMemAllocAsync failed to
//!   allocate N bytes: RESOURCE_EXHAUSTED: …` then ` Reported by CUDA: Free memory/Total memory:
//!   F/T`).
//! * TensorFlow `tensorflow/core/framework/op_kernel.cc`, `tensor.cc` (`OOM when allocating tensor
//!   with shape[…] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator
//!   GPU_0_bfc`), `tensorflow/core/common_runtime/bfc_allocator.cc` (`Allocator (GPU_0_bfc) ran
//!   out of memory trying to allocate 1.20GiB (rounded to 1289748480)`; older `… to allocate N,
//!   in MB: M`).
//! * HIP `hip/include/hip/hip_runtime_api.h` (`hipErrorOutOfMemory`), `HIP_ERROR_OutOfMemory`
//!   of hipDNN/rocBLAS callers; cuDNN `cudnn.h` (`CUDNN_STATUS_ALLOC_FAILED`); NCCL
//!   `src/include/checks.h` (`Cuda failure '%s'`, newer `Cuda failure %d '%s'`); TensorRT
//!   `defaultAllocator.cpp` (`Requested amount of GPU memory (N bytes) could not be allocated.
//!   There may not be enough free memory for allocation to succeed.`, `Error Code 1: Cuda Runtime
//!   (out of memory)`); CuPy `cupy/cuda/memory.pyx` (`OutOfMemoryError: Out of memory allocating
//!   N bytes (allocated so far: M bytes).`); PaddlePaddle and ONNX Runtime (cited at their
//!   patterns below).

use super::{
    back_to, find, integer_of, parse_size, size_of, Continuation, Family, FrameworkKind, Parsed,
};
use crate::model::failure::{EngineName, OomKind};
use crate::model::gpu::CudaOrdinal;
use crate::model::Bytes;

/// ONNX Runtime's BFC arena refusing a request (`bfc_arena.cc`): the arena could not grow, or
/// it reached the limit set on the provider.
pub(super) const ORT_ARENA_WORDINGS: [&str; 2] = [
    "Failed to allocate memory for requested buffer of size",
    "is smaller than requested bytes of",
];

/// Where a framework family starts on this line.
pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    // PaddlePaddle (`paddle/fluid/memory/allocation/cuda_allocator.cc` `CUDAAllocator::
    // AllocateImpl`, `cuda_virtual_mem_allocator.cc`, Paddle 2.x; `PADDLE_THROW_BAD_ALLOC(
    // errors::ResourceExhausted(…))`): "Out of memory error on GPU %d. Cannot allocate %s memory on
    // GPU %d, %s memory has been allocated and available memory is only %s." (older releases
    // without the allocated part; `GPU Virtual Memory %d` for the virtual-memory allocator).
    if let Some(position) = find(text, "Out of memory error on GPU") {
        return Some((Family::Framework(FrameworkKind::Paddle), position));
    }
    // PaddlePaddle Fluid 0.x–1.x (`paddle/fluid/platform/gpu_info.cc` `GpuMaxChunkSize`:
    // `PADDLE_ENFORCE_LE(allocating, available)`, the chunk the buddy allocator asks of the
    // device against what CUDA reports free), printed by the old enforce as "enforce allocating
    // <= available failed, 10513462067 > 1369702144" (bytes).
    if let Some(position) = find(text, "enforce allocating <= available failed") {
        return Some((Family::Framework(FrameworkKind::Paddle), position));
    }
    // ONNX Runtime (`onnxruntime/core/framework/bfc_arena.cc` `BFCArena::Extend`, 1.x): "Failed
    // to allocate memory for requested buffer of size N", raised through `RUNTIME_EXCEPTION :
    // Non-zero status code returned while running Conv node. … Status Message: …`.
    // The same arena when a memory limit was set on the provider (`gpu_mem_limit`, or one the
    // app chose): `BFCArena::AllocateRawInternal` "Available memory of N is smaller than
    // requested bytes of M" (1.x), the arena's budget spent rather than the device's memory.
    let [extend, limit] = ORT_ARENA_WORDINGS;
    if let Some(position) = find(text, extend).or_else(|| {
        find(text, limit).filter(|&position| text[..position].contains("Available memory of"))
    }) {
        // From the status's head, else the line's start: the provider named before it decides
        // whose memory ([`parse`]).
        let begin = text[..position]
            .rfind("[ONNXRuntimeError]")
            .unwrap_or_else(|| line_start(text));
        return Some((Family::Framework(FrameworkKind::OnnxRuntime), begin));
    }
    // XLA's GPU executable placing a program's constants on the device (`xla/service/gpu/
    // gpu_executable.cc` `ResolveConstantGlobals`: "Failed to allocate %d bytes for new
    // constant", raised as `INTERNAL:`; octo-models/octo#22, session 52).
    if let Some(found) = regex!(r"Failed to allocate \d+ bytes for new constant").find(text) {
        return Some((
            Family::Framework(FrameworkKind::Xla),
            xla_begin(text, found.start()),
        ));
    }
    // XLA first: its cuMemAllocAsync line also holds `CUDA_ERROR_OUT_OF_MEMORY`.
    for needle in [
        "Out of memory while trying to allocate",
        "Failed to allocate request for",
        "cuMemAllocAsync failed to allocate",
    ] {
        if let Some(position) = find(text, needle) {
            return Some((
                Family::Framework(FrameworkKind::Xla),
                xla_begin(text, position),
            ));
        }
    }
    // The TPU runtime behind PJRT (libtpu, through jaxlib's `XlaRuntimeError`): "RESOURCE_EXHAUSTED:
    // Error allocating device buffer: Attempting to allocate 15.65G. That was not possible. There
    // are 11.08G free.; (0x0x0_HBM0)" (quoted in google-deepmind/gemma#85, huggingface/diffusers#8358).
    if let Some(position) = find(text, "Error allocating device buffer") {
        return Some((
            Family::Framework(FrameworkKind::Xla),
            xla_begin(text, position),
        ));
    }
    // The TPU compiler's own check of a program against the chip's HBM (libtpu, through XLA's
    // `RESOURCE_EXHAUSTED` / older `Resource exhausted:` / `Compilation failure:`): "Ran out of
    // memory in memory space hbm. Used 9.08G of 7.48G hbm. Exceeded hbm capacity by 1.60G."
    // (quoted in tensorflow/tpu#385, google/trax#270, sokrypton/ColabFold#62), also quoted
    // alone in a title. Not `memory space vmem`: the TPU core's scratchpad, a compile limit
    // like a GPU kernel's shared memory, not the device's memory.
    if let Some(position) = find(text, "Ran out of memory in memory space hbm") {
        return Some((
            Family::Framework(FrameworkKind::Xla),
            xla_begin(text, position),
        ));
    }
    if let Some(position) = find(text, "RESOURCE_EXHAUSTED") {
        let rest = &text[position..];
        // The TPU runtime under XRT (PyTorch/XLA ≤ 1.12, TF 2.x): "RESOURCE_EXHAUSTED:
        // Attempting to reserve 6.48G at the bottom of memory. That was not possible. There are
        // 6.78G free, 0B reserved, and 3.33G reservable." (quoted in pytorch/xla#3470).
        // The TPU runtime behind PJRT without its `Error allocating device buffer:` head (libtpu
        // through jaxlib 0.1.x–0.3.x): "RESOURCE_EXHAUSTED: Attempting to allocate 31.06M. That
        // was not possible. There are 58.64M free. Due to fragmentation, the largest contiguous
        // region of free memory is 30.56M.; (0x0x0_HBM0)" (quoted in google/trax#431).
        if rest.contains("OUT_OF_MEMORY")
            || rest.contains("out of memory")
            || rest.contains("Attempting to reserve")
            || (rest.contains("Attempting to allocate") && rest.contains("That was not possible"))
        {
            // The stream executor's request before the status (`cuda_executor.cc:533] failed
            // to allocate 555.84MiB (582843136 bytes) from device: RESOURCE_EXHAUSTED: :
            // CUDA_ERROR_OUT_OF_MEMORY: out of memory`, XLA under JAX or Reactant): the message
            // starts at the request, its exact size read with it.
            let line = line_start(text);
            let begin = text[line..position]
                .rfind("failed to allocate ")
                .map_or(position, |at| line + at);
            return Some((Family::Framework(FrameworkKind::Xla), begin));
        }
    }
    // Old XLA (`local_client.cc`, 2019): "Execution of replica 0 failed: Resource exhausted: Out
    // of memory while trying to allocate N bytes." — a console may wrap inside the wording.
    if let Some(position) = find(text, "Resource exhausted:") {
        let rest: String = text[position + "Resource exhausted:".len()..]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let wording = "Outofmemorywhiletryingtoallocate";
        if !rest.is_empty() && (wording.starts_with(&rest) || rest.starts_with(wording)) {
            return Some((Family::Framework(FrameworkKind::Xla), position));
        }
        // The TPU runtime's words under TensorFlow's older status spelling (PyTorch/XLA 1.x on
        // a TPU VM, through `tpu_execute_op.cc`: "OP_REQUIRES failed at tpu_execute_op.cc:266 :
        // Resource exhausted: Attempting to reserve 5.88G at the bottom of memory. That was not
        // possible. There are 14.74G free, 0B reserve…").
        if (rest.starts_with("Attemptingtoreserve") || rest.starts_with("Attemptingtoallocate"))
            && rest.contains("Thatwasnotpossible")
        {
            return Some((Family::Framework(FrameworkKind::Xla), position));
        }
        // TensorFlow 1.x's status of a failed device allocation, as its root-error list prints
        // it (`(0) Resource exhausted: failed to allocate memory`, the `RESOURCE_EXHAUSTED`
        // code's `Status::ToString`): an OOM without the tensor's shape.
        if rest.starts_with("failedtoallocatememory") {
            return Some((Family::Framework(FrameworkKind::TfBfc), position));
        }
    }
    if let Some(position) = find(text, "OOM when allocating tensor") {
        return Some((Family::Framework(FrameworkKind::TfTensor), position));
    }
    // The same status cut at the line's end before its `tensor` (`OP_REQUIRES failed at
    // random_op.cc:77 : Resource exhausted: OOM when allocating`, a search excerpt's end,
    // session 49): after the status's own words, TensorFlow's op allocation all the same.
    if let Some(found) = regex!(
        r"(?:Resource exhausted|ResourceExhaustedError|RESOURCE_EXHAUSTED):? ?OOM when allocating(?: t(?:e(?:n(?:s(?:or?)?)?)?)?)?\s*$"
    )
    .find(text)
    {
        let position = found.start() + found.as_str().find("OOM").unwrap_or(0);
        return Some((Family::Framework(FrameworkKind::TfTensor), position));
    }
    // TensorFlow 1.x's session error, its tensor cut off by the reporter (`ResourceExhaustedError
    // (see above for traceback): OOM 的错误`, `… : OOM when …`): the status's own `OOM`.
    if let Some(found) =
        regex!(r"ResourceExhaustedError \(see above for traceback\): ?OOM\b").find(text)
    {
        return Some((Family::Framework(FrameworkKind::TfTensor), found.start()));
    }
    if let Some(position) = find(text, "ran out of memory trying to allocate") {
        let begin = back_to(text, position, "Allocator (");
        return Some((Family::Framework(FrameworkKind::TfBfc), begin));
    }
    // TensorFlow ≤ 1.x `bfc_allocator.cc`: `Ran out of memory trying to allocate 39.81MiB.  See
    // logs for memory state.` (no allocator name).
    if let Some(position) = find(text, "Ran out of memory trying to allocate") {
        return Some((Family::Framework(FrameworkKind::TfBfc), position));
    }
    // TensorFlow's copy of an op's input onto the GPU (`common_runtime/gpu/gpu_util.cc`
    // `PrepareCopy`, `pluggable_device_util.cc` the same: `if ((dst->TotalBytes() > 0) &&
    // !dst->IsInitialized()) return errors::Internal("Dst tensor is not initialized.")`): the
    // destination tensor on the device got no buffer, which is its allocator out of memory
    // (tensorflow/tensorflow#7025 "Getting 'Dst tensor is not initialized.' when really the
    // problem is out of GPU memory"), printed as `InternalError: Failed copying input tensor from
    // …CPU:0 to …GPU:0 in order to run Identity: Dst tensor is not initialized.` or after a
    // `_Recv` node. No size: the allocator's own log, when kept, comes before it.
    if let Some(position) = find(text, "Dst tensor is not initialized") {
        let line = line_start(text);
        let begin = text[..position]
            .rfind("InternalError")
            .filter(|&at| at >= line)
            .unwrap_or(position);
        return Some((Family::Framework(FrameworkKind::TfBfc), begin));
    }
    // TensorFlow's ROCm stream executor (`stream_executor/rocm/rocm_driver.cc`
    // `GpuDriver::DeviceAllocate`: "failed to allocate %s (%d bytes) from device: %s") in
    // releases that print the status as a number: `hipError_t(1002)` is
    // `hipErrorMemoryAllocation` and `hipError_t(2)` `hipErrorOutOfMemory`
    // (`hip/include/hip/hip_runtime_api.h`).
    if ["hipErrorOutOfMemory", "HIP_ERROR_OutOfMemory"]
        .iter()
        .any(|needle| find(text, needle).is_some())
        || regex!(r"from device: hipError_t\((?:2|1002)\)").is_match(text)
    {
        return Some((Family::Framework(FrameworkKind::Hip), line_start(text)));
    }
    // MIOpen's device buffer (`src/hip/handlehip.cpp` `Handle::Create`/`Allocate`:
    // `MIOPEN_THROW("Memory not available to allocate buffer: " + std::to_string(sz))`, 1.x–2.x),
    // with the request in bytes.
    if let Some(position) = find(text, "Memory not available to allocate buffer:") {
        return Some((
            Family::Framework(FrameworkKind::Hip),
            line_start(text).min(position),
        ));
    }
    if find(text, "CUDNN_STATUS_ALLOC_FAILED").is_some()
        || find(text, "cudnn_status_alloc_failed").is_some()
    {
        return Some((Family::Framework(FrameworkKind::Cudnn), line_start(text)));
    }
    // PyTorch's cuDNN convolution when every algorithm failed to run (`aten/src/ATen/native/
    // cudnn/Conv_v7.cpp` `AlgoIterator::try_all`: "Unable to find a valid cuDNN algorithm to run
    // convolution"), which it reaches when none of their workspaces could be allocated: the
    // card's memory ran out (cuDNN's other failures raise their own status).
    if let Some(position) = find(text, "Unable to find a valid cuDNN algorithm") {
        return Some((
            Family::Framework(FrameworkKind::Cudnn),
            line_start(text).min(position),
        ));
    }
    if let Some(position) = find(text, "Cuda failure") {
        let rest = text[position + "Cuda failure".len()..].trim_start();
        let rest = rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        if rest.starts_with("'out of memory'") || rest.starts_with("\"out of memory\"") {
            // From the line's start: NCCL's own prefix (`host:pid:tid [dev] file:line`) names
            // the device (see `parse`).
            return Some((Family::Framework(FrameworkKind::Nccl), line_start(text)));
        }
    }
    // NCCL's own warning of a failed device allocation (`include/alloc.h`
    // `ncclCudaCallocDebug` / `ncclCudaMallocDebug`: `WARN("Failed to CUDA calloc %ld bytes",
    // …)`, also `malloc` and `calloc async`), with no `Cuda failure 'out of memory'` line before
    // it: PyTorch 2.x relays only NCCL's last error (`ncclUnhandledCudaError: Call to CUDA
    // function failed.`, `Last error:`, `Failed to CUDA calloc 8388608 bytes`). NCCL's own
    // `NCCL WARN Failed to CUDA calloc …` line follows its `Cuda failure` line, whose message
    // it continues ([`continuation`]).
    if let Some(position) = find(text, "Failed to CUDA ").filter(|_| !text.contains("NCCL WARN")) {
        let rest = &text[position + "Failed to CUDA ".len()..];
        if regex!(r"^(?:calloc|malloc)(?: async)? \d+ bytes").is_match(rest) {
            return Some((Family::Framework(FrameworkKind::Nccl), line_start(text)));
        }
    }
    // TensorRT `defaultAllocator.cpp`: "Requested amount of GPU memory (N bytes) could not be
    // allocated." (TensorRT 7 and older: "Requested amount of memory (N bytes) …"), TensorRT
    // 10 `virtualMemoryBuffer.cpp`: "Error Code 2: OutOfMemory (Requested size was N bytes.)".
    for needle in [
        "Requested amount of GPU memory",
        "Requested amount of memory (",
    ] {
        if let Some(position) = find(text, needle) {
            return Some((Family::Framework(FrameworkKind::TensorRt), position));
        }
    }
    // TensorRT 8.x's builder dropping a tactic for want of device memory (`Tactic Device
    // request: 9000MB Available: 7982MB. Device memory is insufficient to use tactic.`,
    // `Skipping tactic 3 due to insufficient memory on requested size of 4294967296 detected
    // for tactic 0x…`): a warning, and the build goes on with other tactics, but a report that
    // quotes it says the card had too little memory for the engine (every label of the corpus
    // reads it so), with the request and what was free.
    for needle in [
        "Tactic Device request:",
        "due to insufficient memory on requested size of",
    ] {
        if let Some(position) = find(text, needle) {
            let begin = back_to(text, position, "Skipping tactic");
            return Some((Family::Framework(FrameworkKind::TensorRt), begin));
        }
    }
    // TensorRT's builder when a plugin's scratch space exceeds the memory it may take
    // (`pluginV2Builder.cpp::makeRunner`: `Internal error: plugin node … requires N bytes of
    // scratch space, but only M is available. Try increasing the workspace size with
    // IBuilderConfig::setMemoryPoolLimit()`, TensorRT 8.6-9.x under TensorRT-LLM's MoE plugin):
    // the engine could not get the device memory it asked for, N bytes against M.
    if let Some(position) = find(text, "bytes of scratch space, but only") {
        let begin = text[..position]
            .rfind("Internal error: plugin node")
            .or_else(|| text[..position].rfind("Error Code"))
            .unwrap_or(position);
        return Some((Family::Framework(FrameworkKind::TensorRt), begin));
    }
    // TensorRT's own error class `OutOfMemory` (`Error Code 2: OutOfMemory (…)` of
    // `virtualMemoryBuffer.cpp::resizePhysical`, `globWriter.cpp::makeResizableGpuMemory`,
    // `executionContext.cpp::initializeExecutionContext`, `myelinResourceManager.cpp::allocate`),
    // with the size or with `(no further information)`.
    for needle in [
        "OutOfMemory (Requested size was",
        "Error Code 2: OutOfMemory",
    ] {
        if let Some(position) = find(text, needle) {
            let begin = back_to(text, position, "Error Code");
            return Some((Family::Framework(FrameworkKind::TensorRt), begin));
        }
    }
    // TensorRT-LLM executor: "Executor creation failed due to insufficient GPU memory." and the
    // KV-cache manager's "Insufficient memory for KV cache" (`kv_cache_free_gpu_mem_fraction`).
    for needle in [
        "failed due to insufficient GPU memory",
        "Insufficient memory for KV cache",
        "insufficient memory for KV cache",
    ] {
        if find(text, needle).is_some() {
            return Some((Family::Framework(FrameworkKind::TensorRt), line_start(text)));
        }
    }
    // TensorRT-LLM's KV-cache manager when the blocks that free memory allows cannot hold one
    // sequence: `TLLM_CHECK_WITH_INFO(maxNumTokens >= …, "maxTokensInPagedKvCache (%d) must be
    // large enough to process at least 1 sequence to completion (i.e. must be larger than
    // beam_width (%d) * tokensPerBlock (%d) * maxBlocksPerSeq (%d))")`
    // (NVIDIA/TensorRT-LLM `cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp`,
    // `KVCacheManager::KVCacheManager`, 0.7–0.12; older builds print it without the figures).
    if let Some(position) = find(text, "maxTokensInPagedKvCache") {
        if text[position..].contains("must be large enough to process") {
            return Some((Family::Framework(FrameworkKind::TensorRt), line_start(text)));
        }
    }
    if let Some(position) = find(text, "Cuda Runtime (out of memory)") {
        let begin = back_to(text, position, "Error Code");
        return Some((Family::Framework(FrameworkKind::TensorRt), begin));
    }
    // ND4J's CUDA backend under Deeplearning4j (`org.nd4j.jita.memory.CudaMemoryManager
    // .allocate`: "Failed to allocate N bytes from DEVICE [D] memory"): the device's memory,
    // N bytes asked on device D.
    if let Some(position) = find(text, "bytes from DEVICE [") {
        if let Some(begin) = text[..position].rfind("Failed to allocate ") {
            return Some((Family::Framework(FrameworkKind::Nd4j), begin));
        }
    }
    // ExLlamaV2 `exllamav2/model.py` `load_autosplit_gen` ("Insufficient VRAM for model and
    // cache") and ExLlamaV3 `exllamav3/model/model_ls.py` ("Insufficient VRAM in split for model
    // and cache"): the autosplit placed layers and cache on each allowed GPU in turn and ran
    // out of GPUs (TabbyAPI relays the message).
    for needle in [
        "Insufficient VRAM for model and cache",
        "Insufficient VRAM in split for model and cache",
    ] {
        if let Some(position) = find(text, needle) {
            return Some((Family::Framework(FrameworkKind::ExllamaSplit), position));
        }
    }
    // MLC-LLM's memory budget when an engine is created, before anything is allocated: the
    // C++ engine (mlc-ai/mlc-llm `cpp/serve/config.cc` `EstimateMemoryUsageOnMode`, 0.1+:
    // "Insufficient GPU memory error: The available single GPU memory is %.3f MB, which is less
    // than the sum of model weight size (%.3f MB) and temporary buffer size (%.3f MB).", the
    // available part being the card's total times `gpu_memory_utilization`), and the Python
    // engine before it (`python/mlc_llm/serve/engine.py` `_estimate_max_total_sequence_length`,
    // early 2024: "Cannot estimate KV cache capacity. The model weight size N may be larger than
    // GPU memory size M", M the card's total in bytes): the weights and workspaces leave no room
    // for the KV cache on one GPU.
    if let Some(position) = find(
        text,
        "Insufficient GPU memory error: The available single GPU memory",
    ) {
        return Some((Family::Framework(FrameworkKind::MlcBudget), position));
    }
    if let Some(position) = find(text, "Cannot estimate KV cache capacity") {
        return Some((Family::Framework(FrameworkKind::MlcBudget), position));
    }
    if let Some(position) = find(text, "may be larger than GPU memory size") {
        let begin = back_to(text, position, "The model weight size");
        return Some((Family::Framework(FrameworkKind::MlcBudget), begin));
    }
    // HAMi-core (Project-HAMi/HAMi-core `src/allocator/allocator.c` `oom_check`, the CUDA hook
    // library `libvgpu.so` that HAMi, Volcano's vGPU and other Kubernetes GPU-sharing setups
    // preload): `LOG_ERROR("Device %d OOM %lu / %lu", d, new_allocated, limit)`, printed as
    // `[HAMI-core ERROR (pid:1 thread=… allocator.c:53)]: Device 0 OOM 25769803776 /
    // 24146608128`: the container's usage on the device plus the request, against the device
    // memory limit the pod was given; the allocation then fails with CUDA_ERROR_OUT_OF_MEMORY.
    if let Some(found) = regex!(r"\bDevice \d{1,3} OOM \d+ / \d+").find(text) {
        return Some((Family::Framework(FrameworkKind::HamiCore), found.start()));
    }
    // The RAPIDS Accelerator for Apache Spark's retry framework (NVIDIA spark-rapids-jni
    // `src/main/java/com/nvidia/spark/rapids/jni/`: `RetryOOM`, `SplitAndRetryOOM` (23.x, the
    // GPU's), then `GpuRetryOOM` / `GpuSplitAndRetryOOM` with the message `GPU OutOfMemory…`
    // and `CpuRetryOOM` / `CpuSplitAndRetryOOM` with `CPU OutOfMemory…` (24.x on, when the
    // host's memory got its own limit)): the exception a task dies of when its allocations could
    // not be retried or split any further. The class names which memory ran out.
    if let Some(found) = regex!(r"\b(?:Gpu|Cpu)?(?:SplitAnd)?RetryOOM(?::|\b.{0,3}$)").find(text) {
        let class = &text[found.start()..];
        let spark = text[..found.start()].ends_with("com.nvidia.spark.rapids.jni.")
            || class.contains(": GPU OutOfMemory")
            || class.contains(": CPU OutOfMemory");
        if spark {
            return Some((Family::Framework(FrameworkKind::SparkRapids), found.start()));
        }
    }
    // dask-cuda's JIT-unspill (`dask_cuda/proxify_host_file.py` `ProxifyHostFile.oom`, the RMM
    // failure callback): `RMM allocation of 605.37 MiB failed, spill-on-demand couldn't find any
    // device memory to spill: <ProxyManager dev_limit=… dev=0 B(0)>`: nothing left to spill, the
    // device's allocation fails.
    if let Some(position) = find(text, "spill-on-demand couldn't find any device memory") {
        let begin = back_to(text, position, "RMM allocation of");
        return Some((Family::Framework(FrameworkKind::RmmSpill), begin));
    }
    // CuPy `memory.pyx`: "Out of memory allocating N bytes (allocated so far: M bytes[, limit
    // set to: L bytes])."; CuPy ≤4: "out of memory to allocate N bytes (total M bytes)".
    for needle in ["Out of memory allocating", "out of memory to allocate"] {
        if let Some(position) = find(text, needle) {
            return Some((Family::Framework(FrameworkKind::Cupy), position));
        }
    }
    // A cuDNN workspace that could not be allocated (`cudnn … workspace … alloc…/memory`).
    if find(text, "workspace").is_some() {
        let lower = text.to_ascii_lowercase();
        if lower.contains("cudnn")
            && (lower.contains("out of memory")
                || lower.contains("failed to allocate")
                || lower.contains("alloc_failed"))
        {
            return Some((Family::Framework(FrameworkKind::Cudnn), line_start(text)));
        }
    }
    None
}

/// Lines that log an allocation the framework retries, not the failure: TSL BFC "ran out of
/// memory trying to allocate … from the lower end with freed_by_count=N. The caller indicates
/// that this is not a failure, …", and XLA `cuda_executor.cc` "[0] Failed to allocate device
/// memory of 104.85GiB (112583507968 bytes): RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY"
/// (logged while the preallocation backs off, and before the `RESOURCE_EXHAUSTED` error that
/// the failing allocation raises).
pub(super) fn is_retried_allocation(text: &str) -> bool {
    find(text, "this is not a failure").is_some()
        || find(text, "Failed to allocate device memory of").is_some()
}

/// First non-blank byte of the line.
fn line_start(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

/// An XLA message starts at `RESOURCE_EXHAUSTED:` / `Resource exhausted:` when that precedes it.
fn xla_begin(text: &str, position: usize) -> usize {
    let before = &text[..position];
    // `cuda_executor.cc:1365] [0] Failed to allocate device memory …`: keep the `[ordinal]`.
    if let Some(open) = before
        .trim_end()
        .strip_suffix(']')
        .and_then(|b| b.rfind('['))
    {
        let inside = &before[open + 1..before.trim_end().len() - 1];
        if !inside.is_empty() && inside.bytes().all(|b| b.is_ascii_digit()) {
            return open;
        }
    }
    before
        .rfind("RESOURCE_EXHAUSTED")
        .or_else(|| before.rfind("Resource exhausted"))
        .or_else(|| {
            // `… cuMemAllocAsync failed …`: start at the allocator name (`gpu_async_1`).
            before
                .trim_end()
                .rfind(' ')
                .filter(|_| text[position..].starts_with("cuMem"))
                .map(|space| space + 1)
        })
        .unwrap_or(position)
}

/// Whether the message has been read completely.
pub(super) fn is_complete(kind: FrameworkKind, squeezed: &str) -> bool {
    match kind {
        // The cuMemAllocAsync line is followed by ` Reported by CUDA: Free memory/Total memory`.
        FrameworkKind::Xla if squeezed.contains("cuMemAllocAsync") => {
            squeezed.contains("Totalmemory:")
        }
        FrameworkKind::Xla if squeezed.contains("Errorallocatingdevicebuffer") => {
            squeezed.contains("free.")
        }
        FrameworkKind::Xla => {
            squeezed.contains("Ranoutofmemoryinmemoryspace")
                || squeezed.contains("bytes.")
                || regex!(r"allocate\d+(?:\.\d+)?[KMGT]i?B\.").is_match(squeezed)
                || squeezed.contains("deviceordinal")
        }
        FrameworkKind::TfTensor => squeezed.contains("byallocator") || squeezed.contains("[["),
        FrameworkKind::Paddle => {
            regex!(r"availablememoryisonly\d+(?:\.\d+)?[kKMGTP]?B").is_match(squeezed)
                || regex!(r"allocating<=availablefailed,\d+>\d+").is_match(squeezed)
        }
        // NCCL's size comes on the next warning ([`continuation`]).
        FrameworkKind::Nccl => squeezed.contains("FailedtoCUDA"),
        FrameworkKind::Faiss => super::devices::faiss_complete(squeezed),
        FrameworkKind::Science => super::science::is_complete(squeezed),
        // CUDA.jl's usage lines follow its first line (devices.rs).
        FrameworkKind::DeviceRuntime if squeezed.contains("OutofGPUmemorytryingtoallocate") => {
            squeezed.contains("reserved)") || squeezed.contains("SplittingPoolefficiency")
        }
        // TensorRT-LLM's executor report names the component on a later line.
        FrameworkKind::TensorRt if squeezed.contains("Executorcreationfailed") => {
            squeezed.contains("couldnotbecreated:")
        }
        _ => true,
    }
}

/// Lines after an open framework message.
pub(super) fn continuation(kind: FrameworkKind, text: &str) -> Continuation {
    match kind {
        FrameworkKind::Xla if text.contains("Free memory/Total memory") => Continuation::Append,
        // TensorRT-LLM's executor report (`_torch/pyexecutor/py_executor_creator.py`
        // `_ExecutorMemoryMonitor._maybe_explain_if_oom`): a blank line, then `The following
        // component could not be created: <stage>`.
        FrameworkKind::TensorRt if text.trim().is_empty() => Continuation::Skip,
        FrameworkKind::TensorRt
            if text.contains("The following component could not be created:") =>
        {
            Continuation::Append
        }
        // NCCL `include/alloc.h` (`ncclCudaCallocDebug`, `ncclCudaMallocDebug`): after
        // `CUDACHECKGOTO`'s `Cuda failure 'out of memory'` it warns `Failed to CUDA calloc
        // 6291456 bytes` with the request, often after a blank line in a paste.
        FrameworkKind::Nccl if text.trim().is_empty() => Continuation::Skip,
        FrameworkKind::Nccl if text.contains("Failed to CUDA ") => Continuation::Append,
        // PyTorch's relay of NCCL's last error (2.19+, `ncclGetLastError`):
        // `ncclUnhandledCudaError: Call to CUDA function failed.`, `Last error:`, then `Failed to
        // CUDA calloc async 136 bytes`.
        FrameworkKind::Nccl if text.trim_end().ends_with("Last error:") => Continuation::Append,
        FrameworkKind::Nccl => Continuation::Close,
        // Faiss's `AllocRequest` wrapped by the exception's indent (`dev 0 space Device stream
        // 0x… size N bytes (cudaMalloc error out of memory [2])`).
        FrameworkKind::Faiss if text.contains(" bytes") || text.contains("cudaMalloc error") => {
            Continuation::Append
        }
        FrameworkKind::Science => super::science::continuation(text),
        _ if super::is_wrap_continuation(text) => Continuation::Append,
        _ => Continuation::Close,
    }
}

pub(super) fn parse(kind: FrameworkKind, squeezed: &str) -> Parsed {
    match kind {
        FrameworkKind::Xla => parse_xla(squeezed),
        FrameworkKind::TfTensor => parse_tf_tensor(squeezed),
        FrameworkKind::TfBfc => parse_tf_bfc(squeezed),
        FrameworkKind::Hip => {
            let mut parsed = Parsed::new(OomKind::HipRuntimeOutOfMemory, true);
            parsed.figures.gpu_index =
                integer_of(regex!(r"(?:device|GPU)[:#]?(\d{1,3})"), squeezed)
                    .and_then(|n| CudaOrdinal::try_from(n).ok());
            // TensorFlow/XLA's stream executor (`stream_executor/rocm/rocm_driver.cc`, as its
            // `cuda_driver.cc`): `failed to allocate 127.99TiB (140729850295296 bytes) from
            // device: HIP_ERROR_OutOfMemory` prints the exact request in bytes.
            parsed.figures.tried_to_allocate_bytes = integer_of(
                regex!(r"failedtoallocate[^()]*\((\d+)bytes\)fromdevice"),
                squeezed,
            )
            .map(Bytes)
            // Releases that print only the rounded size (`port::HumanReadableNumBytes`):
            // `failed to allocate 8.00G from device: hipError_t(1002)` (hipTensorFlow 2018).
            .or_else(|| {
                short_size(
                    regex!(r"failedtoallocate(\d+(?:\.\d+)?[KMGT])(?:i?B)?fromdevice"),
                    squeezed,
                )
            })
            // MIOpen: `Memory not available to allocate buffer: 655360000` (bytes).
            .or_else(|| {
                integer_of(
                    regex!(r"Memorynotavailabletoallocatebuffer:(\d+)"),
                    squeezed,
                )
                .map(Bytes)
            });
            parsed
        }
        FrameworkKind::Cudnn => {
            let mut parsed = Parsed::new(OomKind::CudnnAlloc, true);
            // CNTK (`Source/Math/CuDnnCommon.h` via `CUDA_CALL`-style checks): `cuDNN failure 2:
            // CUDNN_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=… ; expr=…`.
            parsed.figures.gpu_index = integer_of(regex!(r";GPU=(\d{1,3});"), squeezed)
                .and_then(|n| CudaOrdinal::try_from(n).ok());
            parsed
        }
        // NCCL's warnings (`src/debug.cc` `ncclDebugLog`: `"%s:%d:%d [%d] %s:%d NCCL WARN "` with
        // hostname, pid, tid, the CUDA device (`cudaGetDevice`) and the source location): the
        // bracket after `host:pid:tid` is the device ordinal. A `[rank3]:` prefix of torchrun's
        // stream is a rank, not the ordinal, and is not in that position.
        FrameworkKind::Nccl => {
            let mut parsed = Parsed::new(OomKind::NcclCudaFailure, true);
            parsed.figures.gpu_index = integer_of(
                regex!(r":\d+:\d+\[(\d{1,3})\][^\[\]:]+:\d+NCCLWARN"),
                squeezed,
            )
            .and_then(|n| CudaOrdinal::try_from(n).ok());
            parsed.figures.tried_to_allocate_bytes = integer_of(
                regex!(
                    r"(?:NCCLWARN|Lasterror:|^)FailedtoCUDA(?:calloc|malloc)(?:async)?(\d+)bytes"
                ),
                squeezed,
            )
            .map(Bytes);
            parsed
        }
        FrameworkKind::TensorRt => {
            let mut parsed = Parsed::new(OomKind::TensorrtAlloc, true);
            parsed.figures.tried_to_allocate_bytes = integer_of(
                regex!(r"(?:Requestedamountof(?:GPU)?memory\(|Requestedsizewas)(\d+)bytes"),
                squeezed,
            )
            .or_else(|| {
                integer_of(
                    regex!(r"insufficientmemoryonrequestedsizeof(\d+)"),
                    squeezed,
                )
            })
            .map(Bytes);
            // A plugin's scratch space and what the builder had for it, in bytes.
            if let Some(caps) = regex!(r"requires(\d+)bytesofscratchspace,butonly(\d+)isavailable")
                .captures(squeezed)
            {
                let bytes = |at: usize| {
                    caps.get(at)
                        .and_then(|m| m.as_str().parse::<u64>().ok())
                        .map(Bytes)
                };
                parsed.figures.tried_to_allocate_bytes = bytes(1);
                parsed.figures.free_bytes = bytes(2);
            }
            // The tactic's request and what was free, in MB (binary, as TensorRT prints them).
            if let Some(caps) =
                regex!(r"TacticDevicerequest:(\d+)MBAvailable:(\d+)MB").captures(squeezed)
            {
                let mib = |at: usize| {
                    caps.get(at)
                        .and_then(|m| m.as_str().parse::<u64>().ok())
                        .map(|mib| Bytes(mib << 20))
                };
                parsed.figures.tried_to_allocate_bytes = mib(1);
                parsed.figures.free_bytes = mib(2);
            }
            parsed
        }
        FrameworkKind::Paddle => parse_paddle(squeezed),
        FrameworkKind::DeviceRuntime => super::devices::parse(squeezed),
        FrameworkKind::Faiss => super::devices::parse_faiss(squeezed),
        FrameworkKind::Science => super::science::parse(squeezed),
        FrameworkKind::OnnxRuntime => {
            // The same arena serves the CPU provider: a line that names the CPU is the host's.
            let lower = squeezed.to_ascii_lowercase();
            let host = ["cpuexecutionprovider", "cpu_", "cpuallocator", "(cpu)"]
                .iter()
                .any(|word| lower.contains(word));
            let mut parsed = if host {
                Parsed::new(OomKind::HostMemory, false)
            } else {
                Parsed::new(OomKind::OtherGpuOom, true)
            };
            let requested = integer_of(
                regex!(r"Failedtoallocatememoryforrequestedbufferofsize(\d+)"),
                squeezed,
            )
            .or_else(|| integer_of(regex!(r"issmallerthanrequestedbytesof(\d+)"), squeezed))
            .map(Bytes);
            // The host's request is the host's figure (as the CPU-platform judgement moves it).
            if host {
                parsed.details.host_required_bytes = requested;
            } else {
                parsed.figures.tried_to_allocate_bytes = requested;
            }
            parsed
        }
        FrameworkKind::Nd4j => {
            let mut parsed = Parsed::new(OomKind::OtherGpuOom, true);
            parsed.figures.tried_to_allocate_bytes =
                integer_of(regex!(r"Failedtoallocate(\d+)bytesfromDEVICE\["), squeezed).map(Bytes);
            parsed.figures.gpu_index =
                integer_of(regex!(r"bytesfromDEVICE\[(\d{1,3})\]"), squeezed)
                    .and_then(|n| CudaOrdinal::try_from(n).ok());
            parsed
        }
        FrameworkKind::HamiCore => {
            let mut parsed = Parsed::new(OomKind::OtherGpuOom, true);
            if let Some(caps) = regex!(r"Device(\d{1,3})OOM(\d+)/(\d+)").captures(squeezed) {
                let number = |i: usize| caps.get(i).and_then(|m| m.as_str().parse::<u64>().ok());
                parsed.figures.gpu_index = number(1).and_then(|n| CudaOrdinal::try_from(n).ok());
                parsed.details.usage_with_request_bytes = number(2).map(Bytes);
                // The limit HAMi enforces is the device as the container sees it (`nvidia-smi`
                // in the pod shows it as the card's total).
                parsed.figures.total_capacity_bytes = number(3).map(Bytes);
            }
            parsed
        }
        FrameworkKind::RmmSpill => {
            let mut parsed = Parsed::new(OomKind::OtherGpuOom, true);
            parsed.figures.tried_to_allocate_bytes = regex!(concat!(r"RMMallocationof", size!()))
                .captures(squeezed)
                .and_then(|caps| caps.get(1))
                .and_then(|m| parse_size(m.as_str()));
            parsed
        }
        FrameworkKind::SparkRapids => {
            // `CpuRetryOOM: CPU OutOfMemory`: the executor's host memory limit, not the GPU's.
            if squeezed.starts_with("Cpu") || squeezed.contains(":CPUOutOfMemory") {
                Parsed::new(OomKind::HostMemory, false)
            } else {
                Parsed::new(OomKind::OtherGpuOom, true)
            }
        }
        FrameworkKind::MlcBudget => {
            let mut parsed = Parsed::new(OomKind::OtherGpuOom, true);
            parsed.engine_hint = Some(EngineName::MlcLlm);
            // The C++ engine's sizes: `%.3f MB` of 1024 × 1024 bytes (`BytesToMegabytesString`).
            // What it calls available is its budget on the card: what it may take there.
            parsed.figures.free_bytes = size_of(
                regex!(r"availablesingleGPUmemoryis(\d+(?:\.\d+)?MB)"),
                squeezed,
            );
            parsed.details.model_weights_bytes =
                size_of(regex!(r"modelweightsize\((\d+(?:\.\d+)?MB)\)"), squeezed);
            parsed.details.workspace_bytes = size_of(
                regex!(r"temporarybuffersize\((\d+(?:\.\d+)?MB)\)"),
                squeezed,
            );
            // The Python engine's exact byte counts (the weights printed as a float).
            if let Some(caps) =
                regex!(r"modelweightsize(\d+)(?:\.\d+)?maybelargerthanGPUmemorysize(\d+)")
                    .captures(squeezed)
            {
                let number = |i: usize| caps.get(i).and_then(|m| m.as_str().parse::<u64>().ok());
                parsed.details.model_weights_bytes = number(1).map(Bytes);
                parsed.figures.total_capacity_bytes = number(2).map(Bytes);
            }
            parsed
        }
        FrameworkKind::ExllamaSplit => {
            let mut parsed = Parsed::new(OomKind::ExllamaSplit, true);
            parsed.engine_hint = Some(EngineName::Exllamav2);
            parsed
        }
        FrameworkKind::Cupy => {
            let mut parsed = Parsed::new(OomKind::CupyOutOfMemory, true);
            let figures = &mut parsed.figures;
            figures.tried_to_allocate_bytes = integer_of(
                regex!(r"(?i:outofmemory)(?:allocating|toallocate)([\d,]+)bytes"),
                squeezed,
            )
            .map(Bytes);
            // What the memory pool has handed out: the counterpart of PyTorch's allocated.
            figures.allocated_by_pytorch_bytes =
                integer_of(regex!(r"allocatedsofar:([\d,]+)bytes"), squeezed).map(Bytes);
            figures.allowed_bytes =
                integer_of(regex!(r"limitsetto:([\d,]+)bytes"), squeezed).map(Bytes);
            // CuPy ≤4 "(total M bytes)": the pool's total, held and in use.
            figures.reserved_total_bytes =
                integer_of(regex!(r"\(total([\d,]+)bytes\)"), squeezed).map(Bytes);
            parsed
        }
    }
}

/// PaddlePaddle's figures: the request, the device, what its allocator holds and what CUDA
/// has free. Sizes are `string::HumanReadableSize` (`%f` of powers of 1024: `1.000000GB`,
/// `716.750000MB`, `512.000000kB`).
fn parse_paddle(s: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::OtherGpuOom, true);
    let figures = &mut parsed.figures;
    let paddle_size = |pattern: &regex::Regex| {
        pattern
            .captures(s)
            .and_then(|caps| caps.get(1))
            .and_then(|m| parse_size(m.as_str()))
    };
    figures.gpu_index = integer_of(
        regex!(r"OutofmemoryerroronGPU(?:VirtualMemory)?(\d{1,3})"),
        s,
    )
    .and_then(|n| CudaOrdinal::try_from(n).ok());
    figures.tried_to_allocate_bytes = paddle_size(regex!(
        r"Cannotallocate(\d+(?:\.\d+)?(?:[kKMGTPE]B|B))memoryon"
    ));
    // `allocated = total - avail` (`AllocateImpl`): what the device had in use when the
    // allocation failed. Paddle's allocators (auto-growth best-fit) keep the chunks they got
    // from the device, freed tensors' included, so with the GPU to itself this is the process's
    // pool: the counterpart of PyTorch's reserved in total, not of its allocated.
    figures.reserved_total_bytes = paddle_size(regex!(
        r",(\d+(?:\.\d+)?(?:[kKMGT]B|B))memoryhas(?:been)?allocated"
    ));
    figures.free_bytes = paddle_size(regex!(
        r"availablememoryisonly(\d+(?:\.\d+)?(?:[kKMGT]B|B))"
    ));
    // Fluid's enforce: the chunk asked for, then what CUDA had free, in bytes.
    if let Some(caps) = regex!(r"allocating<=availablefailed,(\d+)>(\d+)").captures(s) {
        let bytes = |at: usize| {
            caps.get(at)
                .and_then(|m| m.as_str().parse().ok())
                .map(Bytes)
        };
        figures.tried_to_allocate_bytes = figures.tried_to_allocate_bytes.or(bytes(1));
        figures.free_bytes = figures.free_bytes.or(bytes(2));
    }
    parsed
}

/// A size as XLA/TSL print it: `4770354232` (bytes), `16.00GiB`, `256B`, `1.5KiB`.
fn xla_size(text: &str) -> Option<Bytes> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok().map(Bytes);
    }
    parse_size(text)
}

fn parse_xla(s: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::XlaResourceExhausted, true);
    let figures = &mut parsed.figures;
    // The exact byte count first (`(1073741824B)`), then the rounded size.
    figures.tried_to_allocate_bytes =
        integer_of(regex!(r"Failedtoallocaterequestfor[^()]*\((\d+)B\)"), s)
            .or_else(|| {
                integer_of(
                    regex!(r"Failedtoallocatedevicememoryof[^()]*\((\d+)bytes\)"),
                    s,
                )
            })
            .or_else(|| integer_of(regex!(r"Failedtoallocate(\d+)bytesfornewconstant"), s))
            .or_else(|| integer_of(regex!(r"failedtoallocate[^()]*\((\d+)bytes\)fromdevice"), s))
            .map(Bytes)
            .or_else(|| {
                regex!(r"(?:trying|failed)toallocate(\d+(?:\.\d+)?(?:[KMGT]i?B|B|bytes)?)(?:[^\d.]|\.(?:\D|$)|$)")
                    .captures(s)
                    .and_then(|caps| caps.get(1))
                    .and_then(|m| xla_size(m.as_str().trim_end_matches("bytes")))
            })
            .or_else(|| {
                size_of(
                    regex!(r"Failedtoallocaterequestfor(\d+(?:\.\d+)?[KMGT]i?B)"),
                    s,
                )
            });
    // The TPU runtime's sizes (`15.65G`, `196.00M`): binary units without `iB`.
    if figures.tried_to_allocate_bytes.is_none() {
        figures.tried_to_allocate_bytes =
            short_size(regex!(r"Attemptingtoallocate(\d+(?:\.\d+)?[KMGT])"), s)
                .or_else(|| short_size(regex!(r"Attemptingtoreserve(\d+(?:\.\d+)?[KMGT])"), s));
    }
    figures.free_bytes = short_size(regex!(r"Thereare(\d+(?:\.\d+)?[KMGT])free"), s);
    // The TPU runtime's own reading of its free memory (google/trax#431 quotes it): "Due to
    // fragmentation, the largest contiguous region of free memory is 30.56M."
    parsed.details.largest_free_block_bytes = short_size(
        regex!(r"largestcontiguousregionoffreememoryis(\d+(?:\.\d+)?[KMGT])"),
        s,
    );
    // The TPU compiler's "Used 9.08G of 7.48G hbm": the chip's HBM is the card's total.
    figures.total_capacity_bytes = short_size(
        regex!(r"Used\d+(?:\.\d+)?[KMGT]?of(\d+(?:\.\d+)?[KMGT])hbm"),
        s,
    )
    // Newer libtpu's wording of the same check (vllm-project/tpu-inference#3077: "Ran out of
    // memory on HBM, the total memory required for HLO temporaries (32.55G) exceeds available
    // HBM (31.25G).").
    .or_else(|| short_size(regex!(r"exceedsavailableHBM\((\d+(?:\.\d+)?[KMGT])\)"), s));
    figures.gpu_index = integer_of(regex!(r"deviceordinal(\d+)"), s)
        .or_else(|| integer_of(regex!(r"^\[(\d+)\]"), s))
        .or_else(|| integer_of(regex!(r"ondevice(\d+)"), s))
        .or_else(|| integer_of(regex!(r"GPU_(\d+)_bfc"), s))
        .and_then(|n| CudaOrdinal::try_from(n).ok());
    if let Some(caps) = regex!(r"Freememory/Totalmemory:(\d+)/(\d+)").captures(s) {
        figures.free_bytes = caps.get(1).and_then(|m| m.as_str().parse().ok()).map(Bytes);
        figures.total_capacity_bytes = caps.get(2).and_then(|m| m.as_str().parse().ok()).map(Bytes);
    }
    parsed
}

/// A size the TPU runtime prints with a bare binary suffix (`15.65G` = 15.65 GiB).
fn short_size(pattern: &regex::Regex, s: &str) -> Option<Bytes> {
    let text = pattern.captures(s)?.get(1)?.as_str();
    parse_size(&format!("{text}iB"))
}

/// Bytes of one element of a TensorFlow dtype as printed (`float`, `half`, `int64`, …).
fn dtype_size(name: &str) -> Option<u64> {
    Some(match name {
        "bool" | "int8" | "uint8" | "qint8" | "quint8" | "float8_e4m3fn" | "float8_e5m2" => 1,
        "half" | "bfloat16" | "float16" | "int16" | "uint16" | "qint16" | "quint16" => 2,
        "float" | "float32" | "int32" | "uint32" | "qint32" => 4,
        "double" | "float64" | "int64" | "uint64" | "complex64" => 8,
        "complex128" => 16,
        _ => return None,
    })
}

fn parse_tf_tensor(s: &str) -> Parsed {
    // The op placed on the CPU (`on /job:localhost/replica:0/task:0/device:CPU:0 by allocator
    // cpu`, `OpKernelContext::allocate_tensor`'s message names the device and the allocator): the
    // host's memory, a CPU-only run or an op TensorFlow put on the host. Only the first device
    // named decides: the node text TensorFlow appends (a `_Recv` with `recv_device=…CPU:0`)
    // names other devices after the failing one.
    let first_device = regex!(r"device:(CPU|GPU|XLA_GPU):\d")
        .captures(s)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str());
    let host = (first_device == Some("CPU") && !regex!(r"byallocatorGPU_\d+_bfc").is_match(s))
        || regex!(r"byallocator(?:cpu|mklcpu)\b").is_match(s);
    let mut parsed = if host {
        Parsed::new(OomKind::HostMemory, false)
    } else {
        Parsed::new(OomKind::TensorflowOomTensor, true)
    };
    let figures = &mut parsed.figures;
    figures.gpu_index = integer_of(regex!(r"device:GPU:(\d+)"), s)
        .or_else(|| integer_of(regex!(r"GPU_(\d+)_bfc"), s))
        .and_then(|n| CudaOrdinal::try_from(n).ok());
    // The size is not printed: shape × element size, marked as derived.
    if let Some(caps) = regex!(r"withshape\[([\d,]*)\]andtype([A-Za-z0-9_]+?)(?:on|$)").captures(s)
    {
        let dims = caps.get(1).map_or("", |m| m.as_str());
        let element = caps.get(2).and_then(|m| dtype_size(m.as_str()));
        let product = dims
            .split(',')
            .filter(|d| !d.is_empty())
            .try_fold(1u64, |acc, d| acc.checked_mul(d.parse::<u64>().ok()?));
        if let (Some(product), Some(element)) = (product, element) {
            if let Some(bytes) = product.checked_mul(element) {
                figures.tried_to_allocate_bytes = Some(Bytes(bytes));
                figures
                    .derived_fields
                    .push("tried_to_allocate_bytes".into());
            }
        }
    }
    parsed
}

fn parse_tf_bfc(s: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::TensorflowBfc, true);
    let figures = &mut parsed.figures;
    figures.gpu_index =
        integer_of(regex!(r"GPU_(\d+)_bfc"), s).and_then(|n| CudaOrdinal::try_from(n).ok());
    // A request printed in bytes is the request (Intel's ITEX BFC allocator: `trying to
    // allocate 10529419660 Bytes (rounded to 10529419776 Bytes)`); `(rounded to 1289748480)`
    // is exact where the request is `1.20GiB`, rounded for display.
    figures.tried_to_allocate_bytes = integer_of(
        regex!(r"tryingtoallocate(\d+)(?:[Bb]ytes|B)?\(roundedto"),
        s,
    )
    .or_else(|| integer_of(regex!(r"\(roundedto(\d+)(?:[Bb]ytes|B)?\)"), s))
    .map(Bytes)
    .or_else(|| {
        regex!(
            r"trying(?:to)?allocate(\d+(?:\.\d+)?(?:[KMGT]i?B|B)?)(?:,|\.(?:\D|$)|with|from|\(|$)"
        )
        .captures(s)
        .and_then(|caps| caps.get(1))
        .and_then(|m| xla_size(m.as_str()))
    });
    parsed
}
