//! Unit tests of the OOM text families, with exact byte values.

use super::*;
use crate::model::bytes::{GIB, MIB};
use crate::model::failure::{OomMessage, OtherProcess};
use crate::model::gpu::CudaOrdinal;
use crate::parse::text::clean_line;

pub(super) fn one(text: &str) -> OomMessage {
    let messages = parse_text(text);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    messages.into_iter().next().unwrap()
}

#[test]
fn parse_size_exact_bytes() {
    assert_eq!(parse_size("20.00 MiB"), Some(Bytes(20 * MIB)));
    assert_eq!(parse_size("0 bytes"), Some(Bytes(0)));
    assert_eq!(parse_size("1024.00 KiB"), Some(Bytes(MIB)));
    assert_eq!(
        parse_size("139.80 GiB"),
        Some(Bytes((139.80f64 * GIB as f64).round() as u64))
    );
    assert_eq!(parse_size("17179869184.00 GiB"), Some(Bytes(u64::MAX)));
    assert_eq!(
        parse_size("636,18 MiB"),
        Some(Bytes((636.18f64 * MIB as f64).round() as u64))
    );
    assert_eq!(parse_size("20.00MiB"), Some(Bytes(20 * MIB)));
    // Thousands separators of a locale (`1,024.00 MiB`, `1.024,50 MiB`), a grouped byte count.
    assert_eq!(parse_size("1,024.00 MiB"), Some(Bytes(1024 * MIB)));
    assert_eq!(
        parse_size("1.024,50 MiB"),
        Some(Bytes((1024.5f64 * MIB as f64).round() as u64))
    );
    assert_eq!(parse_size("6,291,456 bytes"), Some(Bytes(6_291_456)));
    assert_eq!(parse_size("8,192 bytes"), Some(Bytes(8192)));
    assert_eq!(
        parse_size("1,50 GiB"),
        Some(Bytes((1.5f64 * GIB as f64).round() as u64))
    );
    assert_eq!(parse_size("1,2.30 MiB"), None);
    assert_eq!(parse_size("1,5 bytes"), None);
    assert_eq!(parse_size("garbage"), None);
    assert_eq!(parse_size("1.2.3 MiB"), None);
    assert_eq!(parse_size("12"), None);
    assert_eq!(parse_size(". MiB"), None);
    assert_eq!(parse_size("1. MiB"), None);
}

pub(super) fn gib(value: f64) -> Option<Bytes> {
    Some(Bytes((value * GIB as f64).round() as u64))
}

pub(super) fn mib(value: f64) -> Option<Bytes> {
    Some(Bytes((value * MIB as f64).round() as u64))
}

/// Real text, H200, torch 2.11 (tests/fixtures/h200-torch2.11/oom_cases.json, `other_process`).
const H200_OTHER_PROCESS: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 20.77 GiB is free. Including non-PyTorch memory, this process has 8.51 GiB memory in use. Process 594 has 110.51 GiB memory in use. Of the allocated memory 8.00 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)";

#[test]
fn pytorch_2_11_total_capacity_with_other_process() {
    let message = one(H200_OTHER_PROCESS);
    assert_eq!(message.kind, OomKind::PytorchTotalCapacity);
    assert!(message.is_gpu_oom);
    assert_eq!(message.exception.as_deref(), Some("torch.OutOfMemoryError"));
    let f = &message.figures;
    assert_eq!(f.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(f.tried_to_allocate_bytes, gib(40.0));
    assert_eq!(f.total_capacity_bytes, gib(139.80));
    assert_eq!(f.free_bytes, gib(20.77));
    assert_eq!(f.process_in_use_bytes, gib(8.51));
    assert_eq!(f.allocated_by_pytorch_bytes, gib(8.0));
    assert_eq!(f.reserved_unallocated_bytes, Some(Bytes(0)));
    assert_eq!(f.reserved_total_bytes, gib(8.0));
    assert_eq!(f.derived_fields, vec!["reserved_total_bytes".to_string()]);
    assert_eq!(
        f.other_processes,
        vec![OtherProcess {
            pid: 594,
            in_use_bytes: gib(110.51)
        }]
    );
    assert!(message.text.starts_with("CUDA out of memory. Tried"));
}

#[test]
fn pytorch_1_x_reserved_in_total_with_allowed() {
    let message = one("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.90 GiB total capacity; 14.95 GiB already allocated; 19.75 MiB free; 7.00 GiB allowed; 15.09 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF");
    assert_eq!(message.kind, OomKind::PytorchReservedInTotal);
    assert_eq!(message.exception.as_deref(), Some("RuntimeError"));
    let f = &message.figures;
    assert_eq!(f.tried_to_allocate_bytes, Some(Bytes(20971520)));
    assert_eq!(f.total_capacity_bytes, gib(15.90));
    assert_eq!(f.allocated_by_pytorch_bytes, gib(14.95));
    assert_eq!(f.free_bytes, mib(19.75));
    assert_eq!(f.allowed_bytes, gib(7.0));
    assert_eq!(f.reserved_total_bytes, gib(15.09));
    assert_eq!(
        f.reserved_unallocated_bytes,
        Some(gib(15.09).unwrap().saturating_sub(gib(14.95).unwrap()))
    );
}

#[test]
fn pytorch_1_3_cached_is_reserved_unallocated() {
    let message = one("RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 1; 10.92 GiB total capacity; 9.80 GiB already allocated; 1.50 MiB free; 370.00 MiB cached)");
    assert_eq!(message.kind, OomKind::PytorchCached);
    let f = &message.figures;
    assert_eq!(f.gpu_index, Some(CudaOrdinal(1)));
    assert_eq!(f.reserved_unallocated_bytes, mib(370.0));
    assert_eq!(
        f.reserved_total_bytes,
        Some(gib(9.80).unwrap().saturating_add(mib(370.0).unwrap()))
    );
}

#[test]
fn pytorch_2_1_capacty_typo_and_2_2_raw_byte_gpu() {
    let message = one("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB. GPU 0 has a total capacty of 23.65 GiB of which 265.56 MiB is free. Of the allocated memory 21.92 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but unallocated.");
    assert_eq!(message.kind, OomKind::PytorchTotalCapacity);
    assert_eq!(
        message.exception.as_deref(),
        Some("torch.cuda.OutOfMemoryError")
    );
    assert_eq!(message.figures.total_capacity_bytes, gib(23.65));
    assert_eq!(message.figures.free_bytes, mib(265.56));

    let message = one("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU \u{1} has a total capacity of 79.15 GiB of which 3.94 MiB is free. Process 1234 has 17179869184.00 GiB memory in use. Of the allocated memory 77.50 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but unallocated.");
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(1)));
    assert_eq!(
        message.figures.other_processes,
        vec![OtherProcess {
            pid: 1234,
            in_use_bytes: None
        }]
    );
    assert!(!message.text.contains('\u{1}'));

    // NVML's N/A for this process is kept as the sentinel, not as a figure.
    let message = one("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 24.00 GiB of which 0 bytes is free. Including non-PyTorch memory, this process has 17179869184.00 GiB memory in use. Of the allocated memory 23.01 GiB is allocated by PyTorch, and 121.23 MiB is reserved by PyTorch but unallocated.");
    assert_eq!(message.figures.process_in_use_bytes, Some(Bytes(u64::MAX)));
    assert!(message.figures.process_in_use_not_reported());
    assert_eq!(message.figures.process_in_use_reported(), None);
}

#[test]
fn pytorch_private_pools_and_allowed() {
    let message = one("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 139.80 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process has 854.00 MiB memory in use. 69.90 GiB allowed; Of the allocated memory 154.08 MiB is allocated by PyTorch, with 20.00 MiB allocated in private pools (e.g., CUDA Graphs), and 1.92 MiB is reserved by PyTorch but unallocated.");
    let f = &message.figures;
    assert_eq!(f.gpu_index, Some(CudaOrdinal(3)));
    assert_eq!(f.allowed_bytes, gib(69.90));
    assert_eq!(f.private_pools_bytes, mib(20.0));
    assert_eq!(f.allocated_by_pytorch_bytes, mib(154.08));
    assert_eq!(f.reserved_unallocated_bytes, mib(1.92));
    assert_eq!(f.process_in_use_bytes, mib(854.0));
}

#[test]
fn absurd_and_preemptive() {
    let message = one("RuntimeError: CUDA out of memory. Tried to allocate more than 1EB memory.");
    assert_eq!(message.kind, OomKind::PytorchAbsurdSize);
    // At least 1 EiB (`size < one_exa_bytes` failed): the bound, marked as one.
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(1 << 60))
    );
    assert_eq!(
        message.figures.lower_bound_fields,
        vec!["tried_to_allocate_bytes".to_string()]
    );
    let message = one("torch.OutOfMemoryError: CUDA out of memory. Allocation was preemptively rejected because it would exceed per_process_memory_fraction limit. Requested size: 512.00 MiB");
    assert_eq!(message.kind, OomKind::PytorchFractionRejected);
    assert_eq!(message.figures.tried_to_allocate_bytes, mib(512.0));
}

#[test]
fn hard_wrapped_number_and_terminal_spaces() {
    let text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00\nMiB. GPU 0 has a total capacity of 139.\n80 GiB of which 0 bytes is free. Of the allocated memory 130.00 GiB is allocated by PyTorch, and 2.00 GiB is reser        ved by PyTorch but unallocated.\nIf reserved but unallocated memory is large try";
    let message = one(text);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(20971520))
    );
    assert_eq!(message.figures.total_capacity_bytes, gib(139.80));
    assert_eq!(message.figures.reserved_unallocated_bytes, gib(2.0));
    assert_eq!(message.line, 1);
    assert_eq!(message.end_line, 3);
    assert!(
        message.text.contains("is reserved by PyTorch"),
        "{}",
        message.text
    );
}

#[test]
fn interleaved_ranks_stay_apart() {
    let text = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.00 GiB of which\n[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.00 GiB of which\n[rank0]: 10.00 MiB is free. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n[rank1]: 20.00 MiB is free. Of the allocated memory 71.00 GiB is allocated by PyTorch, and 3.00 GiB is reserved by PyTorch but unallocated.\n";
    let messages = parse_text(text);
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].stream.as_deref(), Some("rank0"));
    assert_eq!(messages[0].figures.free_bytes, mib(10.0));
    assert_eq!(messages[0].figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(messages[1].stream.as_deref(), Some("rank1"));
    assert_eq!(messages[1].figures.free_bytes, mib(20.0));
    assert_eq!(messages[1].figures.reserved_unallocated_bytes, gib(3.0));
}

#[test]
fn repr_wrapped_and_ansi() {
    let message = one("\x1b[0;31mERROR\x1b[0m  failed: OutOfMemoryError('CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 3.94 MiB is free. Of the allocated memory 77.50 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but unallocated.')");
    assert_eq!(message.exception.as_deref(), Some("OutOfMemoryError"));
    assert!(message.text.ends_with("unallocated."), "{}", message.text);
    let message = one("RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 3.94 MiB is free. Of the allocated memory 77.50 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but unallocated.', please check the stack trace above for the root cause");
    assert_eq!(message.exception.as_deref(), Some("RuntimeError"));
    assert_eq!(message.engine_hint, Some(EngineName::Vllm));
    assert!(message.text.ends_with("unallocated."), "{}", message.text);
}

#[test]
fn malloc_async_block() {
    let text = "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated     : 192.00 MiB\nRequested               : 400.00 GiB\nDevice limit            : 139.80 GiB\nFree (according to CUDA): 138.13 GiB\nPyTorch limit (set by user-supplied memory fraction)\n                        : 17179869184.00 GiB\n";
    let message = one(text);
    assert_eq!(message.kind, OomKind::CudaMallocAsync);
    let f = &message.figures;
    assert_eq!(f.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(f.allocated_by_pytorch_bytes, mib(192.0));
    assert_eq!(f.tried_to_allocate_bytes, gib(400.0));
    assert_eq!(f.total_capacity_bytes, gib(139.80));
    assert_eq!(f.free_bytes, gib(138.13));
    assert_eq!(f.allowed_bytes, None);
    assert_eq!(message.end_line, 7);
}

#[test]
fn raw_cuda_errors_and_cublas() {
    let text = "torch.AcceleratorError: CUDA error: out of memory\nSearch for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n\n";
    let message = one(text);
    assert_eq!(message.kind, OomKind::CudaErrorOutOfMemory);
    assert_eq!(message.exception.as_deref(), Some("torch.AcceleratorError"));
    assert_eq!(message.text, "CUDA error: out of memory");
    assert_eq!(message.end_line, 5);

    let message = one("RuntimeError: CUDA driver error: out of memory");
    assert_eq!(message.kind, OomKind::CudaDriverOutOfMemory);
    let message = one(
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
    );
    assert_eq!(message.kind, OomKind::CublasAlloc);
    assert_eq!(
        message.text,
        "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"
    );
    let message = one("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`");
    assert_eq!(message.kind, OomKind::CublasAlloc);
    assert!(parse_text("CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasSgemm`").is_empty());
}

#[test]
fn vllm_errors() {
    let message = one("ValueError: Free memory on device cuda:1 (10.5/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.");
    assert_eq!(message.kind, OomKind::VllmStartupFreeMemory);
    assert_eq!(message.engine_hint, Some(EngineName::Vllm));
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(1)));
    assert_eq!(message.figures.free_bytes, gib(10.5));
    assert_eq!(message.figures.total_capacity_bytes, gib(79.19));
    assert_eq!(message.details.gpu_memory_utilization, Some(0.9));
    assert_eq!(message.details.requested_memory_bytes, gib(71.27));
    assert!(parse_text("INFO Free memory on device (70.0/79.19 GiB) on startup. Desired GPU memory utilization is (0.9, 71.27 GiB).").is_empty());

    let message = one("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.");
    assert_eq!(message.kind, OomKind::VllmNoCacheBlocks);
    assert_eq!(message.exception.as_deref(), Some("ValueError"));

    let message = one("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (21264). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.");
    assert_eq!(message.kind, OomKind::VllmMaxSeqLenTooLarge);
    assert_eq!(message.details.max_model_len, Some(32768));
    assert_eq!(message.details.kv_cache_capacity_tokens, Some(21264));

    let message = one("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.5 GiB). Based on the available memory, the estimated maximum model length is 77808. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.");
    assert_eq!(message.details.max_model_len, Some(131072));
    assert_eq!(message.details.kv_cache_needed_bytes, gib(16.0));
    assert_eq!(message.details.kv_cache_available_bytes, gib(9.5));
    assert_eq!(message.details.estimated_max_model_len, Some(77808));
    // A reporter's `max seq length` is no vLLM message (session 29, an unsloth report).
    assert!(parse_text(
        "It gives me error with batch size 1 and max seq length of 2048. Try increasing it?"
    )
    .iter()
    .all(|m| m.kind != OomKind::VllmMaxSeqLenTooLarge));

    let message = one("RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.");
    assert_eq!(message.kind, OomKind::VllmWarmupOom);
    assert_eq!(message.details.warmup_requests, Some(1024));
}

#[test]
fn exllamas_autosplit_running_out_of_gpus() {
    for text in [
        "RuntimeError: Insufficient VRAM for model and cache",
        "2026-09-12 10:01:02.345 ERROR:    RuntimeError: Insufficient VRAM in split for model and \
         cache",
    ] {
        let message = one(text);
        assert_eq!(message.kind, OomKind::ExllamaSplit, "{text}");
        assert_eq!(message.engine_hint, Some(EngineName::Exllamav2), "{text}");
    }
}

#[test]
fn tgi_sglang_llama_cpp() {
    let message = one("RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`");
    assert_eq!(message.kind, OomKind::TgiWarmup);
    assert_eq!(message.details.prefill_tokens, Some(4096));

    let message = one("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.88");
    assert_eq!(message.kind, OomKind::SglangMemory);
    assert_eq!(message.details.mem_fraction_static, Some(0.88));

    let text = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 6000.00 MiB on device 0: cudaMalloc failed: out of memory\nalloc_tensor_range: failed to allocate CUDA0 buffer of size 6291456000\nllama_model_load: error loading model: unable to allocate CUDA0 buffer\nllama_model_load_from_file_impl: failed to load model\nmain: exiting due to model loading error\nsomething else";
    let message = one(text);
    assert_eq!(message.kind, OomKind::LlamacppAlloc);
    assert_eq!(message.engine_hint, Some(EngineName::Llamacpp));
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(6291456000))
    );
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(message.details.buffer_type.as_deref(), Some("CUDA0"));
    assert_eq!(
        message.details.buffer_purpose.as_deref(),
        Some("model weights")
    );
    assert_eq!(message.end_line, 5);

    let message = one("ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 1073741824");
    assert_eq!(message.details.buffer_purpose.as_deref(), Some("compute"));
    assert_eq!(message.figures.tried_to_allocate_bytes, Some(Bytes(GIB)));
}

#[test]
fn negatives_are_not_gpu_oom() {
    let message = one("RuntimeError: [enforce fail at alloc_cpu.cpp:114] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 4294967296 bytes. Error code 12 (Cannot allocate memory)");
    assert_eq!(message.kind, OomKind::HostMemory);
    assert!(!message.is_gpu_oom);
    assert_eq!(message.details.host_required_bytes, Some(Bytes(4 * GIB)));

    let message = one("[12345.678] Out of memory: Killed process 4321 (python3) total-vm:123456kB, anon-rss:654321kB");
    assert_eq!(message.kind, OomKind::HostMemory);
    assert_eq!(message.details.killed_pid, Some(4321));

    let message =
        one("Error: model requires more system memory (15.3 GiB) than is available (11.2 GiB)");
    assert_eq!(message.engine_hint, Some(EngineName::Ollama));
    assert_eq!(message.details.host_required_bytes, gib(15.3));
    assert_eq!(message.details.host_available_bytes, gib(11.2));

    let message = one("RuntimeError: CUDA error: an illegal memory access was encountered");
    assert_eq!(message.kind, OomKind::IllegalMemoryAccess);
    assert!(!message.is_gpu_oom);
    // cudaErrorLaunchFailure: a kernel faulted on the device, no allocation failed.
    let message = one("RuntimeError: CUDA error: unspecified launch failure");
    assert_eq!(message.kind, OomKind::IllegalMemoryAccess);
    assert!(!message.is_gpu_oom);
    assert!(parse_text("the launcher reported an unspecified launch failure once").is_empty());

    let message = one("Killed");
    assert_eq!(message.kind, OomKind::KilledBySignal);
    let message = one("vllm-1 exited with code 137");
    assert_eq!(message.details.exit_code, Some(137));
    assert!(parse_text("processed 137 requests").is_empty());
}

#[test]
fn several_messages_in_order() {
    let text = format!("{H200_OTHER_PROCESS}\nsome line\n\nThe above exception was the direct cause of the following exception:\n{H200_OTHER_PROCESS}\n");
    let messages = parse_text(&text);
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].line, 1);
    assert_eq!(messages[1].line, 5);
}

#[test]
fn markers_cover_every_start() {
    // Every line that starts a message in these tests contains a marker.
    let lines = [
        H200_OTHER_PROCESS,
        "ValueError: No available memory for the cache blocks.",
        "alloc_tensor_range: failed to allocate CUDA0 buffer of size 6291456000",
        "Killed",
        "vllm-1 exited with code 137",
    ];
    for line in lines {
        assert!(OOM_MARKERS.iter().any(|m| line.contains(m)), "{line}");
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn parse_text_never_panics(text in "\\PC*") {
            let _ = parse_text(&text);
        }

        #[test]
        fn clean_line_never_panics(text in any::<String>()) {
            let _ = clean_line(&text);
        }

        #[test]
        fn parse_text_never_panics_on_oom_like_text(
            text in "(CUDA out of memory\\. |Tried to allocate |[0-9.]{1,6} |MiB|GiB|\\(GPU |; |\n|\\[rank[01]\\]: |\x1b\\[0m|\\^\\[\\[0;36m|would exceed allowed memory|Currently allocated : |failed to allocate CUDA0 buffer of size |[ \t\r]){0,40}"
        ) {
            let _ = parse_text(&text);
        }

        /// Words a reader drops before it looks (offloading, `GPU/CPU`) and letters whose
        /// lower case is longer or shorter than they are (`İ`, `ẞ`), beside the reporter's
        /// `OOM`: a position found in the words read must index what is sliced (session 30:
        /// `•	ZeRO-2 with CPU offload (still OOM)` sliced past the end).
        #[test]
        fn parse_text_never_panics_around_words_a_reader_drops(
            text in r"(CPU offload|offloaded to CPU|GPU/CPU|ZeRO-2 with |İ|ẞ|•|	|still |OOM|out of memory| \(|\)|is it |\?|[ a-z]){0,30}"
        ) {
            let _ = parse_text(&text);
        }

        /// Wordings next to multi-byte characters (typographic quotes, CJK, emoji): every
        /// offset a reader returns must fall on a character boundary.
        #[test]
        fn parse_text_never_panics_beside_multibyte_characters(
            text in "(“|”|‘|’|「|」|显存不足|❱|😀|Killed|OOM|out of memory|CUDA out of memory\\. |OutOfMemoryError|raise |Tried to allocate |1\\.00 GiB|`|\"|'|\n|[ \t]){0,30}"
        ) {
            let _ = parse_text(&text);
        }
    }
}

/// The prefilter contract: the raw line where any corpus message starts holds a marker.
#[test]
fn markers_cover_every_corpus_start() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/oom_text");
    let mut starts = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for message in parse_text(&text) {
            let raw = lines[message.line as usize - 1];
            assert!(
                OOM_MARKERS.iter().any(|marker| raw.contains(marker)),
                "{}:{}: {raw}",
                path.display(),
                message.line
            );
            starts += 1;
        }
    }
    assert!(starts >= 60, "{starts}");
}

/// Every corpus file's parse is pinned (tests/fixtures/oom_text/, provenance in its README).
#[test]
fn corpus_snapshots() {
    insta::glob!("../../../tests/fixtures/oom_text", "*.txt", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        insta::assert_json_snapshot!(parse_text(&text));
    });
}

/// The real H200 captures: every printed figure is within PyTorch's rounding (0.005 of the unit
/// printed) of what `torch.cuda.mem_get_info()` and `memory_stats()` said right after the OOM.
#[test]
fn h200_messages_match_measured_values() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-torch2.11/oom_cases.json"
    );
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for case in cases.as_array().unwrap() {
        let result = &case["result"];
        let Some(message) = result["message"].as_str() else {
            // The scenarios that did not fail print progress lines: nothing to report.
            assert!(parse_text(case["stdout"].as_str().unwrap()).is_empty());
            continue;
        };
        let parsed = one(&format!(
            "{}: {}",
            result["exc_type"].as_str().unwrap(),
            message
        ));
        let f = &parsed.figures;
        let stats = &result["memory_stats"];
        let near = |printed: Option<Bytes>, actual: u64| {
            let printed = printed.unwrap().get() as f64;
            let unit = if actual as f64 > GIB as f64 {
                GIB as f64
            } else {
                MIB as f64
            };
            assert!(
                (printed - actual as f64).abs() <= 0.005 * unit + 1.0,
                "{printed} vs {actual} in {message}"
            );
        };
        near(f.free_bytes, result["mem_get_info"][0].as_u64().unwrap());
        near(
            f.total_capacity_bytes,
            result["mem_get_info"][1].as_u64().unwrap(),
        );
        let allocated = stats["allocated_bytes.all.current"].as_u64().unwrap();
        let reserved = stats["reserved_bytes.all.current"].as_u64().unwrap();
        // In `model_forward` the activations were freed while the exception unwound, before
        // `memory_stats()` was read: only device-level figures compare there.
        if case["scenario"] == "model_forward" {
        } else if allocated > 0 {
            near(f.allocated_by_pytorch_bytes, allocated);
            near(f.reserved_total_bytes, reserved);
        } else {
            assert_eq!(f.allocated_by_pytorch_bytes, Some(Bytes(0)));
        }
        assert_eq!(parsed.exception.as_deref(), Some("torch.OutOfMemoryError"));
        checked += 1;
    }
    assert_eq!(checked, 4);
}

/// The driver's contract: it feeds only marker lines plus every line while `wants_more()`.
/// Simulate that on a log with noise and check nothing is lost.
#[test]
fn prefiltered_streaming_finds_the_same_messages() {
    let text = "INFO start\nnoise 1\ntorch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated     : 192.00 MiB\nRequested               : 400.00 GiB\nDevice limit            : 139.80 GiB\nFree (according to CUDA): 138.13 GiB\nPyTorch limit (set by user-supplied memory fraction)\n                        : 17179869184.00 GiB\nnoise 2\n[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00\n[rank1]: MiB. GPU 1 has a total capacity of 79.00 GiB of which 1.00 MiB is free. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\nnoise 3\nalloc_tensor_range: failed to allocate CUDA0 buffer of size 6291456000\nllama_model_load: error loading model: unable to allocate CUDA0 buffer";
    let finder = marker_finder().unwrap();
    let mut detector = OomDetector::new();
    let mut streamed = Vec::new();
    let mut fed = 0;
    for (index, raw) in text.lines().enumerate() {
        if detector.wants_more() || finder.is_match(raw) {
            fed += 1;
            streamed.extend(detector.push(index as u64 + 1, &clean_line(raw)));
        }
    }
    assert!(
        detector.wants_more(),
        "the llama.cpp chain is still open at end of input"
    );
    streamed.extend(detector.finish());
    assert!(!detector.wants_more());
    assert_eq!(streamed, parse_text(text));
    assert_eq!(streamed.len(), 3);
    assert!(fed < text.lines().count());
    assert_eq!(
        streamed[1].figures.tried_to_allocate_bytes,
        Some(Bytes(20 * MIB))
    );
    assert_eq!(streamed[1].stream.as_deref(), Some("rank1"));
}

#[test]
fn unfinished_message_is_flushed_by_finish() {
    let mut detector = OomDetector::new();
    let line = clean_line(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a",
    );
    assert!(detector.push(1, &line).is_empty());
    assert!(detector.wants_more());
    let flushed = detector.finish();
    assert_eq!(flushed.len(), 1);
    assert_eq!(
        flushed[0].figures.tried_to_allocate_bytes,
        Some(Bytes(2 * GIB))
    );
}

#[test]
fn open_message_gives_up_after_waiting() {
    let mut detector = OomDetector::new();
    let start = clean_line("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a");
    assert!(detector.push(1, &start).is_empty());
    let other = clean_line("[rank1]: still training");
    let mut done = Vec::new();
    for line_no in 2..200 {
        done.extend(detector.push(line_no, &other));
    }
    assert_eq!(done.len(), 1);
    assert!(!detector.wants_more());
}

#[test]
fn repeated_messages_parse_alike_and_changed_ones_anew() {
    let message = |free: &str| {
        format!(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which {free} GiB is free. Including non-PyTorch memory, this process has 138.67 GiB memory in use.\n"
        )
    };
    let text = [
        message("1.12"),
        "step 1\n".to_string(),
        message("1.12"),
        "step 2\n".to_string(),
        message("1.25"),
        message("1.25"),
    ]
    .concat();
    let messages = parse_text(&text);
    assert_eq!(messages.len(), 4, "{messages:#?}");
    let free: Vec<_> = messages.iter().map(|m| m.figures.free_bytes).collect();
    assert_eq!(free, [gib(1.12), gib(1.12), gib(1.25), gib(1.25)]);
    let lines: Vec<u64> = messages.iter().map(|m| m.line).collect();
    assert_eq!(lines, [1, 3, 5, 6]);
    assert_eq!(messages[0].figures, one(&message("1.12")).figures);
    assert_eq!(messages[2].figures, one(&message("1.25")).figures);
}

mod ascii_paths {
    use super::super::normalize::{
        append_normalized_ascii, append_normalized_chars, squeeze_chars, squeeze_into,
    };
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// The slice-at-a-time ASCII paths give what the character loops give.
        #[test]
        fn ascii_fast_paths_equal_the_char_loops(
            start in "[a-z \\u{e9}]{0,3}",
            piece in "[a-zA-Z0-9 \\t\\r\\n\\x0b\\x0c\\x00\\x1f\\x7f\\\\.:]{0,40}",
        ) {
            let (mut fast, mut slow) = (start.clone(), start.clone());
            append_normalized_ascii(&mut fast, &piece);
            append_normalized_chars(&mut slow, &piece);
            prop_assert_eq!(&fast, &slow);
            let (mut fast, mut slow) = (start.clone(), start);
            squeeze_into(&mut fast, &piece);
            squeeze_chars(&mut slow, &piece);
            prop_assert_eq!(fast, slow);
        }
    }
}

/// The one marker table: each marker once, its texts the view the scanners build on, in the
/// table's order (their automata bucket patterns in the order given).
#[test]
fn the_marker_table_lists_each_marker_once_in_order() {
    assert_eq!(OOM_MARKERS.len(), OOM_MARKER_TABLE.len());
    for (index, (marker, role)) in OOM_MARKER_TABLE.iter().enumerate() {
        assert_eq!(OOM_MARKERS[index], *marker);
        assert_eq!(oom_marker_role(index), Some(*role));
        assert!(!marker.is_empty());
        assert!(
            !marker.starts_with(|c: char| c.is_ascii_digit()),
            "{marker:?}"
        );
        assert_eq!(OOM_MARKERS.iter().position(|m| m == marker), Some(index));
        // What a long log's scanner leaves out, the failure search leaves out too.
        assert!(
            role.in_long_logs() || !role.in_failure_search(),
            "{marker:?}"
        );
    }
    assert_eq!(oom_marker_role(OOM_MARKERS.len()), None);
}
