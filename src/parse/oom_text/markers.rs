//! The GPU-OOM markers: one table of literal substrings with their roles, from which the
//! scanners of `explain` are built (a raw line holding none of them starts no message).

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
        // (Every word capitalised, as titles do: `I get CUDA Out Of Memory`; a report's words.)
        ("Out Of Memory", ReportOnly),
        ("OUT OF MEMORY", Message),
        // A sentence's `CUDA memory error` ([`mention::prose_mention`]).
        ("CUDA memory error", Words),
        ("cuda memory error", Words),
        ("GPU memory error", Words),
        ("gpu memory error", Words),
        ("OUT_OF_MEMORY", Message),
        // A title's own casing or typing of it (`# GPU-OUT of memory`, `CUDA out of memeory
        // issue`, [`mention::mention_start`]).
        ("OUT of memory", Words),
        ("of memeory", Words),
        ("of Memeory", Words),
        // … and its other typos (`they both out of mermory using 8*4090`, session 48).
        ("out of me", Words),
        // A sentence's `out-of-memory error` ([`mention::mention_start`]).
        ("out-of-memory", Message),
        // `OOM` in a title or sentence ([`mention::mention_start`]).
        ("OOM", Message),
        // … typed `OoM` by some reporters (`I end up with a CUDA OoM:`).
        ("OoM", Words),
        // jetson-utils' mapped (zero-copy) buffer refused (`jetson.utils -- cudaAllocMapped()
        // failed to allocate memory`, [`mention::malloc_mention`]).
        ("cudaAllocMapped", Words),
        // A GPU's memory running out in a reporter's words (`ran out of VRAM`, `runs out of GPU
        // memory`, [`mention::mention_start`]); `ut of` takes `Out of` too.
        ("ut of VRAM", Words),
        ("ut of vram", Words),
        ("ut of GPU memory", Words),
        ("ut of gpu memory", Words),
        ("ut of CUDA memory", Words),
        // (A title's capitals: `Running out of GPU Memory`.)
        ("ut of GPU Memory", Words),
        ("ut of CUDA Memory", Words),
        ("ut of Video Memory", Words),
        ("ut of cuda memory", Words),
        ("ut of video memory", Words),
        // … or lacking (`an error about the lack of video memory`).
        ("ack of video memory", Words),
        ("ack of VRAM", Words),
        ("ack of vram", Words),
        ("ack of GPU memory", Words),
        ("ack of gpu memory", Words),
        ("hortage of VRAM", Words),
        ("hortage of GPU memory", Words),
        ("hortage of gpu memory", Words),
        // A title gluing PyTorch's words by underscores (`CUDA_out_of memory`).
        ("CUDA_out_of", Words),
        ("cuda_out_of", Words),
        // … or left short of it (`claims not enough VRAM to load models`).
        ("enough VRAM", Words),
        ("enough vram", Words),
        // (A title's `Not enough Vram on AMD GPU/CPUs`.)
        ("enough Vram", Words),
        ("enough GPU memory", Words),
        ("enough gpu memory", Words),
        ("enough CUDA memory", Words),
        ("enough cuda memory", Words),
        // … the other way round (`cuda memory not enough`, `GPU memory is insufficient`), or
        // insufficient (`insufficient GPU memory`).
        ("emory not enough", Words),
        ("emory is not enough", Words),
        ("emory was not enough", Words),
        ("emory is insufficient", Words),
        ("nsufficient GPU memory", Words),
        ("nsufficient gpu memory", Words),
        ("nsufficient CUDA memory", Words),
        ("nsufficient cuda memory", Words),
        // LM Studio's refusal to load a model (mention.rs).
        ("Not enough resources to load", Message),
        // Ollama's scheduler giving up on placing a model's layers (mention.rs), as the CLI or
        // the API's reply prints it.
        ("memory layout cannot be allocated", ReportOnly),
        // The same words at the start of a reporter's sentence or title.
        ("Memory layout cannot be allocated", ReportOnly),
        // GPU memory named short in Chinese prose by a job on a named card (`T4单卡…显示内存溢出`,
        // [`mention::cjk_mention`]; 内存 alone is the host's).
        ("内存溢出", Words),
        ("内存不足", Words),
        ("内存不够", Words),
        // CUDA's allocation named failing in a title (`CUDA malloc fails on …`, mention.rs).
        ("CUDA malloc", Words),
        ("Cuda malloc", Words),
        ("cuda malloc", Words),
        // … HIP's (`hipMalloc fails even though there is enough memory`).
        ("hipMalloc fail", Words),
        ("hipMalloc error", Words),
        // TensorFlow's OOM status named in a sentence (`I am getting resource exhausted error`,
        // [`mention::prose_mention`]).
        ("esource exhausted error", Words),
        ("esource Exhausted Error", Words),
        ("esource exhausted ERROR", Words),
        // `OOM` in lower case after a verb (`still getting oom`, [`mention::mention_start`]),
        // or glued to the Chinese verb before it (`训练中途报oom错误`, `出现oom`, `导致oom`).
        (" oom", Words),
        // … or as the subject of a verb of happening after markdown's emphasis (`**oom occurs**`).
        ("oom occur", Words),
        ("oom happen", Words),
        ("报oom", Words),
        ("现oom", Words),
        ("致oom", Words),
        // … and after the other words a Chinese report glues it to: `报错oom`, `微调oom`,
        // `训练oom`, `推理oom`, `时oom`, `就oom`, `还是oom`, `直接oom`, `出oom`, `了oom`, `会oom`,
        // `都oom`, `又oom`, `爆oom` (the denials and advice among them, `不会oom`, `避免oom`,
        // are `mention::cjk_denied`'s). A reporter's title or sentence, never a program's log
        // line: not in the scanner of a long log's parsed parts.
        ("错oom", ReportOnly),
        ("调oom", ReportOnly),
        ("练oom", ReportOnly),
        ("理oom", ReportOnly),
        ("时oom", ReportOnly),
        ("就oom", ReportOnly),
        ("是oom", ReportOnly),
        ("接oom", ReportOnly),
        ("出oom", ReportOnly),
        ("了oom", ReportOnly),
        ("会oom", ReportOnly),
        ("都oom", ReportOnly),
        ("又oom", ReportOnly),
        ("爆oom", ReportOnly),
        // `评估过程中的oom 问题` (the oom problem in the evaluation), `训练中oom`, `加载后oom`,
        // `推理的时候oom`, `模型oom`.
        ("的oom", ReportOnly),
        ("中oom", ReportOnly),
        ("后oom", ReportOnly),
        ("候oom", ReportOnly),
        ("型oom", ReportOnly),
        ("cudaErrorMemoryAllocation", Message),
        // PhysX's GPU allocator (cuda.rs).
        ("PxgCudaDeviceMemoryAllocator fail", Message),
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
        ("RMM_ERROR_OUT_OF_MEMORY", Message),
        // transformers refusing a quantized model's device map (cuda.rs).
        ("dispatched on the CPU or the disk", Message),
        // Metal's command buffer out of the GPU's memory (cuda.rs).
        ("Insufficient Memory (IOAF", Message),
        ("execution failed: Insufficient Memory", Message),
        // ND4J's CUDA memory manager (frameworks.rs).
        ("bytes from DEVICE [", Message),
        // ExLlama's autosplit (frameworks.rs).
        ("Insufficient VRAM for model and cache", Message),
        ("Insufficient VRAM in split for model and cache", Message),
        // vLLM.
        ("Free memory on device", Message),
        ("Free memory on cuda:", Message),
        ("No available memory for the cache blocks", Message),
        // The same error retyped in lower case in a report.
        ("no available memory for the cache blocks", Words),
        ("max seq len", Message),
        // TGI and SGLang.
        ("Not enough memory", Message),
        ("not enough memory", Message),
        ("leave no GPU memory", Message),
        // SGLang's profiled KV-cache budget below zero (sglang.rs).
        ("the profiled value -", Message),
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
        ("_ERROR_OUT_OF_RESOURCES", Message),
        // DirectML's E_OUTOFMEMORY (`8007000E Not enough memory resources …`, devices.rs).
        ("enough memory resources", ReportOnly),
        // torch-directml's message retyped in a title without its sentence (`Could not allocate
        // tensor with XXXXXXXXX bytes.`, devices.rs).
        ("Could not allocate tensor with", ReportOnly),
        // dask-cuda's spill-on-demand giving up (frameworks.rs) and Milvus 0.x's query copying
        // an index to the GPU (devices.rs): read in a report and a long log's parsed windows,
        // not by the failure search over the rest (one Teddy searcher holds its anchors).
        ("spill-on-demand couldn't find any device memory", Words),
        ("out of memory: CPU2GPU", Words),
        // OpenVINO's GPU plugin (devices.rs).
        ("memory object allocation", Message),
        ("CL_OUT_OF_RESOURCES", Message),
        ("[GPU] out of GPU resources", Message),
        ("out of device memory on current platform", Message),
        // OpenCL's device allocation failure (devices.rs).
        ("OBJECT_ALLOCATION_FAILURE", ReportOnly),
        ("[metal::malloc]", Message),
        // ggml-metal's 2023 buffer larger than the device's largest (llama_cpp.rs).
        ("than buffer maximum", Message),
        // Intel Gaudi's device memory (devices.rs).
        ("PT_DEVMEM Allocation failed", Message),
        // (Its older bridge and the Synapse helper, in reports: devices.rs.)
        ("MODULE:DEVMEM Allocation", Words),
        ("SYNHELPER workspace", Words),
        // Huawei Ascend: CANN's device allocation failure and MindSpore's memory pool
        // (devices.rs).
        ("Memory_Allocation_Failure", Message),
        // The same CANN error under its bare code (devices.rs).
        ("EL0004: ", Words),
        ("TotalUsedMemStatistics", Message),
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
        ("hipHostMalloc", ReportOnly),
        ("hipHostRegister", ReportOnly),
        ("hipHostAlloc", ReportOnly),
        ("hipMallocHost", ReportOnly),
        ("Mem.HostBuffer", ReportOnly),
        ("pinned_memory", ReportOnly),
        // Host memory (not GPU OOM).
        ("DefaultCPUAllocator", Message),
        // mmgp's pinned host RAM (host.rs): a desktop app's console, not a server's log.
        ("Unable to pin more tensors", Words),
        // Colab's and Kaggle's notices of a notebook restarted for the VM's RAM (host.rs): a
        // notebook's page, pasted into a report.
        ("session crashed after using all available RAM", ReportOnly),
        ("notebook tried to allocate more memory", ReportOnly),
        // PyTorch 1.0's host allocator before it was named (host.rs): a failure's own words.
        ("enforce fail at CPUAllocator", Words),
        // The CUDA driver's description of its out-of-memory error as wrappers print it
        // (mention.rs): a desktop program's exception, pasted into a report.
        ("unable to allocate enough memory", ReportOnly),
        ("Cannot allocate memory", Message),
        // TensorRT's builder dropping a tactic for want of memory (frameworks.rs).
        ("Tactic Device request:", Message),
        ("insufficient memory on requested size of", Message),
        // Windows' commit limit (host.rs).
        ("paging file is too small", Message),
        ("os error 1455", Message),
        ("WinError 1455", Message),
        ("页面文件太小", Message),
        ("requires more system memory", Message),
        // Ray's memory monitor (`raylet/node_manager.cc`, `ray.exceptions.OutOfMemoryError`).
        ("killed due to memory pressure", Message),
        ("running low on memory", Message),
        // … its report wrapped after `the node` (host.rs).
        ("killed due to the node", Words),
        ("Killed", Message),
        // bash's `Killed` in a Chinese locale (its zh_CN message catalogue).
        ("已杀死", Message),
        // zsh's report of a killed job (`zsh: killed     python x.py`, `[1]    14875 killed
        // python x.py`, host.rs `shell_killed`).
        ("zsh: killed", Words),
        (" killed  ", Words),
        // A reporter's words for the kill (`loading model was Killed`, `the process got killed`,
        // `程序在加载模型中被kill了`; host.rs).
        ("s killed", Words),
        ("t killed", Words),
        ("n killed", Words),
        ("g killed", Words),
        ("e killed", Words),
        ("被kill", Words),
        ("被杀", Words),
        // … by the system (`加载进程在57%时仍被系统杀死`, `被系统终止了`).
        ("被系统", Words),
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
        // DeepSpeed's launcher (`launcher/launch.py` `sigkill_handler`: `… exits with return
        // code = -9`).
        ("code = -9", Message),
        ("exitcode", Message),
        ("SIGKILL", Message),
        // earlyoom's and systemd-oomd's kills (host.rs): lines of the system's journal, pasted
        // beside a report, never in the program's own log.
        ("SIGTERM to process", Words),
        // ncnn's Vulkan allocator under a desktop app (devices.rs).
        ("vkAllocateMemory failed", Words),
        // Adreno's graphics driver in an Android logcat (devices.rs).
        ("GSL MEM ERROR", Words),
        // macOS's memory-pressure killer in the kernel's log (host.rs).
        ("memorystatus: killing", Words),
        ("low swap: killing", Words),
        ("due to memory ", Words),
        // Not OOM: memory-access bugs.
        ("illegal memory access", Message),
        ("misaligned address", Message),
        ("unspecified launch failure", Message),
        // JAX/XLA, TensorFlow, HIP runtime, cuDNN, TensorRT, CuPy (frameworks.rs; the others hold
        // `out of memory`, `Out of memory` or `OUT_OF_MEMORY`).
        ("Failed to allocate", Message),
        // TensorRT-LLM's `CUASSERT` with the CUDA status 2 (cuda.rs) and ONNX Runtime's arena at
        // its memory limit (frameworks.rs): a script's or an app's failure, read in reports and
        // long logs' parsed parts (their anchors would cost the failure search too much).
        ("CUDA ERROR: 2,", Words),
        ("smaller than requested bytes", Words),
        // llama.cpp's OpenCL back end and CLBlast with OpenCL's status (devices.rs).
        ("at ggml-opencl", Words),
        ("OpenCL error: ", Words),
        ("OOM when allocating", Message),
        // Also an exception's class cut short (`torch.cuda.OutOfMem`, `OutOfMemoryErro`).
        ("OutOfMem", Message),
        ("_ALLOC_FAILED", Message),
        // cuDNN's status retyped in lower case in a title (`RuntimeError cudnn error
        // cudnn_status_alloc_failed`; frameworks.rs).
        ("cudnn_status_alloc_failed", ReportOnly),
        // PyTorch's cuDNN convolution with no algorithm whose workspace fit (frameworks.rs), read
        // in reports: the failure search of a long log keeps its one pass (hot_path_tests).
        ("Unable to find a valid cuDNN", ReportOnly),
        // TensorFlow's OOM status class without an `OOM when allocating` line (`failed to allocate
        // memory`, `2 root error(s) found.`, IPython's header).
        ("ResourceExhaustedError", Message),
        ("Requested amount of GPU memory", Message),
        // TensorRT's builder: a plugin's scratch space larger than what it may take
        // (frameworks.rs); a builder's log is no long serving log, so not in its failure search.
        ("bytes of scratch space, but only", Words),
        // MIOpen's device buffer (frameworks.rs).
        ("Memory not available to allocate", Message),
        // Caffe's CUDA check (cuda.rs) holds `out of memory`.
        // PaddlePaddle Fluid's old enforce of a chunk against CUDA's free memory (frameworks.rs).
        ("allocating <= available", Message),
        // The TPU runtime's `Error allocating device buffer: Attempting to allocate …`.
        ("Error allocating device buffer", Message),
        // The same runtime under XRT: `RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at the bottom
        // of memory. That was not possible.` (frameworks.rs).
        ("Attempting to reserve", Message),
        // … and its `Attempting to allocate 31.06M. That was not possible.` (frameworks.rs).
        ("Attempting to allocate", Message),
        ("Requested amount of memory", Message),
        // NCCL's warning of a failed device allocation, relayed alone (frameworks.rs).
        ("Failed to CUDA ", Message),
        ("insufficient GPU memory", Message),
        // MLC-LLM's Python engine refusing to size its KV cache (frameworks.rs), with or
        // without its head: a start-up's words, in a report or a log's head.
        ("Cannot estimate KV cache capacity", Words),
        ("may be larger than GPU memory size", Words),
        // InvokeAI's model cache (mention.rs).
        ("Insufficient GPU memory", Message),
        // TensorRT-LLM's `Insufficient memory for KV cache`, and a wrapper's lower-case one.
        ("nsufficient memory for KV cache", Message),
        // TensorRT-LLM's KV-cache manager: one sequence does not fit (frameworks.rs).
        ("maxTokensInPagedKvCache", Message),
        ("Resource exhausted", Message),
        // A title naming XLA's error with the TPU's memory (`HBM0 RESOURCE_EXHAUSTED error when
        // loading 8b models`, mention.rs).
        ("RESOURCE_EXHAUSTED error", Message),
        // ggml-vulkan, PyTorch's cut cudaMallocAsync message and allocator fragments, accelerate.
        ("Device memory allocation of size", Message),
        // … newer ggml-vulkan (`ggml_vk_create_buffer_check`: `ggml_vulkan: Memory allocation of
        // size N failed.`, llama_cpp.rs), as the tail of a log or a report holds it.
        ("Memory allocation of size", Words),
        // MLX 0.x's `malloc_or_wait`, tinygrad's KFD allocation, Faiss's cudaMalloc and its
        // GPU resources' allocation failure (devices.rs): the end of a report or a log's tail,
        // not the failure search over a long log's middle.
        ("[malloc_or_wait]", Words),
        ("no memory is available", Words),
        ("ailed to cudaMalloc", Words),
        ("cudaMalloc error 2 on alloc", Message),
        ("thrust::system::detail::bad_alloc", Message),
        // (`alloc fail` may wrap after `alloc`: devices.rs reads that line's end.)
        ("StandardGpuResources: alloc", Words),
        // boost.compute's name of OpenCL's `CL_MEM_OBJECT_ALLOCATION_FAILURE` (devices.rs).
        ("Memory Object Allocation Failure", Words),
        // DALI's device allocation and nvJPEG's allocator status, Theano's CNMeM pool
        // (devices.rs).
        ("CUDA allocation failed", Words),
        ("bytes on device", Words),
        ("NVJPEG_STATUS_ALLOCATOR_FAILURE", Message),
        ("NVJPEG error \"5\"", Message),
        ("nvJPEG error (5)", Message),
        ("user-provided allocator functions", Words),
        ("CNMEM_STATUS_OUT_OF_MEMORY", Message),
        // NVENC's status 10 as FFmpeg prints it (devices.rs).
        ("failed: out of memory (10)", Message),
        ("ErrorOutOfDeviceMemory", Message),
        ("Allocation on device", Message),
        // (Capitalised where a reporter names the error: pytorch.rs.)
        ("Allocation on Device", Message),
        ("Tried to allocate", Message),
        // The NVML assert that replaces the message when the allocator's per-process report
        // fails (cuda.rs); not in the failure search of a long log's middle, whose anchors are
        // full (`hot_path_tests`).
        ("NVML_SUCCESS", Words),
        // PyTorch 2.1+'s message with its head cut (`GPU 0 has a total capacity of … of which
        // … is free`; pytorch.rs): a quote in a report (a log prints the head on its line).
        ("has a total capac", Words),
        // … and PyTorch ≤ 2.0's, cut before its parentheses (`GPU 0; 31.75 GiB total capacity;
        // 29.72 GiB already allocated; …`).
        ("total capacity; ", Words),
        // TensorRT's runtime allocator (cuda.rs).
        ("Cuda Error in allocate: 2", Message),
        // Thrust's scratch space and DeepSpeed's inference workspace (cuda.rs), spconv 1.x's
        // check (`cuda execution failed with error 2`): kept out of the failure search, whose
        // single Teddy pass has no room for them (read in reports and a log's parsed parts).
        ("get_temporary_buffer failed", Words),
        ("Workspace can't be allocated", Words),
        ("execution failed with error 2", Words),
        // OpenGL's GL_OUT_OF_MEMORY as code and description, Metal's MTLBuffer (devices.rs).
        ("GL error: 0x505", Words),
        ("GL error 0x505", Words),
        ("GL_OUT_OF_MEMORY", Words),
        ("not enough memory left to execute the command", Words),
        ("allocate private MTLBuffer", Words),
        // Scientific and rendering codes (science.rs): LAMMPS's GPU package, Blender Cycles'
        // device; vLLM's Mamba state cache too small for max_num_seqs (vllm.rs).
        ("Insufficient memory on accelerator", Words),
        ("System is out of GPU", Words),
        ("exceeds available Mamba cache blocks", Words),
        // hipBLAS's allocation status (cuda.rs), ArrayFire's device pool (science.rs).
        ("HIPBLAS_STATUS_ALLOC_FAILED", Words),
        ("Device out of memory:", Words),
        // NVIDIA Warp's allocator, CubeCL's pools (devices.rs).
        ("Memory allocation failed on device", Words),
        ("No memory pool big enough", Words),
        ("can't allocate buffer of size", Words),
        // tinygrad's LRU allocator (devices.rs).
        ("out of memory - requested:", Words),
        // ggml's device pool retrying a failed allocation: its size for the error that follows
        // when the retry fails too (detector.rs), read in the error's window of a long log.
        ("cached buffers and retrying", Words),
        // MPS: one request larger than the device's largest buffer (pytorch.rs).
        ("Invalid buffer size", Message),
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
        // (存 typed twice: `显存存不够用`, session 49.)
        ("显存存不", Message),
        // … with an adverb between (`显存会溢出`, `显存直接爆了`, [`mention::cjk_mention`]).
        ("显存会", Words),
        ("显存就", Words),
        ("显存直接", Words),
        ("显存又", Words),
        ("显存还", Words),
        ("显存也", Words),
        ("显存都", Words),
        ("显存已经", Words),
        ("显存全部", Words),
        ("显存瞬间", Words),
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
        // Japanese `足りない` / `足りず` (not enough) after the GPU's memory (`VRAMが足りない`;
        // `GPUメモリが足りず` is held by `GPUメモリ`) ([`mention::cjk_mention`]).
        ("VRAMが足り", Words),
        ("ビデオメモリ", Words),
        // tiny-cuda-nn's `CUDA_CHECK_THROW` text cut by a paste (`cudaMalloc(…) failed with error
        // out of memor`, cuda.rs); the whole wording holds `out of memory`.
        ("failed with error out of memor", Words),
        // nvdiffrast's status and call (`Cuda error: 2[cudaMalloc(&m_gpuPtr, bytes);]`, cuda.rs).
        ("Cuda error: 2[", Message),
        ("HIP error: 2[", Message),
        // TensorFlow's copy into a device tensor whose buffer could not be allocated
        // (frameworks.rs).
        ("Dst tensor is not initialized", Message),
        // … and in European languages ([`mention::european_mention`]): Russian, Spanish,
        // Portuguese, Italian, French, German.
        ("видеопамят", ReportOnly),
        ("памяти GPU", ReportOnly),
        ("памяти gpu", ReportOnly),
        ("памяти видеокарт", ReportOnly),
        ("памяти на GPU", ReportOnly),
        // Russian memory running short with no word of whose ([`mention::weak_mention`], held
        // until the lines after it show GPU work): `нехватка памяти`, `не хватает памяти`,
        // `недостаточно памяти`, `закончилась память`.
        ("ехватк", ReportOnly),
        ("хватает памяти", ReportOnly),
        ("хватило памяти", ReportOnly),
        ("достаточно памяти", ReportOnly),
        ("памяти не хват", ReportOnly),
        ("ончилась память", ReportOnly),
        ("амять закончилась", ReportOnly),
        ("амять кончилась", ReportOnly),
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
        // Rust's allocation failure, `memory allocation of N bytes failed` (host.rs).
        ("bytes failed", Message),
        // Not OOM (not_oom.rs): shared memory, disk, device-side assert, Triton resources.
        ("insufficient shared memory", Message),
        ("Error while creating shared memory segment", Message),
        ("No space left on device", Message),
        ("no space left on device", Message),
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
