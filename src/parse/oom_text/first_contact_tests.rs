//! Unit tests of the wordings met on texts oomdoc was not built on: TensorRT's `OutOfMemory`
//! class without a size, vLLM's KV-cache shortfall in its V0 and cut V1 wordings, and PyTorch's
//! OOM class cut short. Each with the look-alikes that must stay what they are.

use super::*;
use crate::model::bytes::GIB;
use crate::model::failure::OomMessage;

fn one(text: &str) -> OomMessage {
    let messages = parse_text(text);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    messages.into_iter().next().expect("one message")
}

fn gpu_kinds(text: &str) -> Vec<OomKind> {
    parse_text(text)
        .into_iter()
        .filter(|message| message.is_gpu_oom)
        .map(|message| message.kind)
        .collect()
}

/// TensorRT's builder and runtime (`virtualMemoryBuffer.cpp::resizePhysical`,
/// `globWriter.cpp::makeResizableGpuMemory`, `executionContext.cpp`) name the class
/// `Error Code 2: OutOfMemory`, with `(no further information)` or `(Requested size was N
/// bytes.)`; the allocator's warning `Requested amount of GPU memory (N bytes)` gives the size.
/// Sources: NVIDIA/TensorRT-LLM issues 346, 1609; pytorch/TensorRT issue 2675;
/// marcoslucianops/DeepStream-Yolo issue 366.
#[test]
fn tensorrt_out_of_memory_class_with_or_without_its_size() {
    for line in [
        "[11/10/2023-06:30:40] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)",
        "ERROR: [TRT]: 2: [virtualMemoryBuffer.cpp::resizePhysical::160] Error Code 2: OutOfMemory (no further information)",
        "[E] 2: [virtualMemoryBuffer.cpp::nvinfer1::StdVirtualMemoryBufferImpl::resizePhysical::140] Error Code 2: OutOfMemory (no further information)",
    ] {
        assert_eq!(gpu_kinds(line), [OomKind::TensorrtAlloc], "{line}");
    }
    let build = "[TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)\n\
[TRT] [W] Requested amount of GPU memory (24793579520 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n\
[TRT] [E] 2: [globWriter.cpp::makeResizableGpuMemory::423] Error Code 2: OutOfMemory (no further information)";
    let messages = parse_text(build);
    assert!(messages.iter().all(|m| m.kind == OomKind::TensorrtAlloc));
    assert_eq!(
        completed_figures(&messages, 0).tried_to_allocate_bytes,
        Some(Bytes(24_793_579_520))
    );
    // A tactic skipped for want of memory: the builder goes on with another, but a report
    // that quotes it says the card had too little memory for the engine (every label of the
    // corpus reads it so), with the request and what was free.
    let tactic = one("WARNING: [TRT]: Skipping tactic 3 due to insufficient memory on requested size of 4294967296 detected for tactic 0x0000000000000004.");
    assert_eq!(tactic.kind, OomKind::TensorrtAlloc);
    assert_eq!(
        tactic.figures.tried_to_allocate_bytes,
        Some(Bytes(4_294_967_296))
    );
    let tactic = one(" Tactic Device request: 9000MB Available: 7982MB. Device memory is insufficient to use tactic.");
    assert_eq!(
        tactic.figures.tried_to_allocate_bytes,
        Some(Bytes(9000 << 20))
    );
    assert_eq!(tactic.figures.free_bytes, Some(Bytes(7982 << 20)));
    // Other TensorRT error classes are not a GPU OOM.
    for line in [
        "[TRT] [E] 1: [graphContext.h::~MyelinGraphContext::55] Error Code 1: Myelin (No Myelin Error exists)",
        "[TRT] [E] 4: [network.cpp::validate::3062] Error Code 4: Internal Error (Network has dynamic or shape inputs)",
        "Error Code 2 is OutOfMemory in TensorRT's list of error classes",
    ] {
        assert!(gpu_kinds(line).is_empty(), "{line}");
    }
}

/// vLLM V0 `Worker.determine_num_available_blocks` logs the KV cache's share after profiling;
/// below zero, `raise_if_cache_size_invalid` raises "No available memory for the cache blocks"
/// (a paste often cuts it). V1's `check_enough_kv_cache_memory` error met without its head.
/// Sources: vllm-project/vllm `vllm/worker/worker.py` (0.6.4 `Memory profiling results: …
/// kv_cache_size=`, 0.7–0.8 `the rest of the memory reserved for KV Cache is`),
/// `vllm/v1/core/kv_cache_utils.py`; issue 13882.
#[test]
fn vllm_kv_cache_below_zero_and_cut_v1_check() {
    for line in [
        "INFO 02-26 09:54:05 worker.py:267] model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch activation peak memory takes 1.42GiB; the rest of the memory reserved for KV Cache is -1.05GiB.",
        "INFO 11-02 10:00:00 worker.py:255] Memory profiling results: duration=3.1 seconds, total_gpu_memory=23.64GiB, initial_memory_usage=14.87GiB, peak_torch_memory=22.90GiB, memory_usage_post_profile=14.99GiB, non_torch_memory=0.37GiB, kv_cache_size=-1.99GiB, gpu_memory_utilization=0.90.",
    ] {
        assert_eq!(gpu_kinds(line), [OomKind::VllmNoCacheBlocks], "{line}");
    }
    // The same lines with room left are a healthy start.
    for line in [
        "INFO 07-09 12:57:45 [worker.py:267] model weights take 4.03GiB; non_torch_memory takes 1.39GiB; PyTorch activation peak memory takes 0.32GiB; the rest of the memory reserved for KV Cache is 65.65GiB.",
        "INFO 11-02 10:00:00 worker.py:255] Memory profiling results: non_torch_memory=0.37GiB, kv_cache_size=1.99GiB, gpu_memory_utilization=0.90.",
    ] {
        assert!(parse_text(line).is_empty(), "{line}");
    }
    let cut = one("ValueError: ... (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.50 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.");
    assert_eq!(cut.kind, OomKind::VllmMaxSeqLenTooLarge);
    assert!(cut.is_gpu_oom);
    assert_eq!(cut.details.kv_cache_needed_bytes, Some(Bytes(16 * GIB)));
    assert_eq!(
        cut.details.kv_cache_available_bytes,
        Some(Bytes((9.5 * GIB as f64) as u64))
    );
    // A wrapper's lower-case wording of the same check.
    assert!(!gpu_kinds("ValueError: insufficient memory for KV cache").is_empty());
}

/// PyTorch's OOM class cut short by a paste or a line limit is still the class.
#[test]
fn a_cut_oom_class_is_gpu_oom() {
    for line in [
        "torch.cuda.OutOfMem",
        "torch.cuda.OutOfMemoryErro",
        "OutOfMemoryErro...",
        "OutOfMemoryErro\u{2026}",
        "  torch.OutOfMemoryError: CUDA out of mem",
        "torch.OutOfMemoryError: CUDA",
    ] {
        let messages = parse_text(line);
        assert_eq!(messages.len(), 1, "{line}: {messages:#?}");
        assert!(messages[0].is_gpu_oom, "{line}");
        assert_eq!(messages[0].kind, OomKind::OtherGpuOom, "{line}");
    }
    // Not PyTorch's class, too short to tell, or not cut.
    for line in [
        "java.lang.OutOfMemoryErro",
        "cupy.cuda.memory.OutOfMem",
        "OutOfMe",
        "OutOfMemoryHandler registered",
        "raise OutOfMemoryErro",
        "torch.OutOfMemoryError: see the docs",
    ] {
        assert!(
            parse_text(line)
                .iter()
                .all(|m| m.kind != OomKind::OtherGpuOom),
            "{line}"
        );
    }
    // The cut class yields to the whole message when the paste has it.
    let messages = parse_text("torch.cuda.OutOfMem\n  File \"x.py\", line 1\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free.");
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].kind, OomKind::PytorchTotalCapacity);
}

/// A line of each new wording holds a marker of the fast scan.
#[test]
fn first_contact_wordings_hold_a_marker() {
    for line in [
        "Error Code 2: OutOfMemory (no further information)",
        "the rest of the memory reserved for KV Cache is -1.05GiB.",
        "kv_cache_size=-1.99GiB",
        "(16.00 GiB KV cache is needed, which is larger than the available KV cache memory",
        "ValueError: insufficient memory for KV cache",
        "torch.cuda.OutOfMem",
    ] {
        assert!(OOM_MARKERS.iter().any(|m| line.contains(m)), "{line}");
    }
}

/// An OOM named with no word of whose memory (an issue's title, the reporter's sentence) is a
/// GPU OOM when the lines after it show GPU work and no host memory, and nothing better follows.
#[test]
fn an_oom_named_without_whose_memory_takes_the_lines_after_it() {
    let gpu_body = "\n### Environment\ndevice: A40 48G\ntorch 1.10.0+cu113\n";
    for title in [
        "Training a few epoch memory suddenly OOM",
        "OOM when training",
        "I still facing OOM. I use `main` branch:",
        "OOM with long context",
        "It is driving me mad.I always get \"Out of Memory\" even after the last step.",
    ] {
        let messages = parse_text(&format!("{title}{gpu_body}"));
        assert_eq!(messages.len(), 1, "{title}: {messages:#?}");
        assert!(messages[0].is_gpu_oom, "{title}");
        assert_eq!(messages[0].kind, OomKind::NamedWithoutMessage, "{title}");
        assert_eq!(messages[0].line, 1);
        // Alone, or with nothing of a GPU after it, it says nothing.
        assert!(parse_text(title).is_empty(), "{title}");
        assert!(
            parse_text(&format!("{title}\nthe dataset has 3 million rows\n")).is_empty(),
            "{title}"
        );
        // The host's memory after it: not a GPU OOM.
        for host in [
            "dmesg shows the OOM killer took python",
            "the job was Killed",
            "system RAM usage climbs to 100%",
        ] {
            let text = format!("{title}{gpu_body}{host}\n");
            assert!(parse_text(&text).iter().all(|m| !m.is_gpu_oom), "{text}");
        }
        // A message of its own after it is what failed.
        let text =
            format!("{title}{gpu_body}MemoryError: Unable to allocate 3.00 GiB for an array\n");
        assert!(parse_text(&text).iter().all(|m| !m.is_gpu_oom), "{text}");
        let text = format!("{title}{gpu_body}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 44.35 GiB of which 1.20 GiB is free.\n");
        let messages = parse_text(&text);
        assert_eq!(messages.len(), 1, "{messages:#?}");
        assert_eq!(messages[0].kind, OomKind::PytorchTotalCapacity);
    }
    // Advice, negation, a question, a bug fixed in the past, a program's pool, the host's words.
    for line in [
        "To avoid OOM, set a smaller batch",
        "There is no OOM anymore after the update",
        "Is it OOM?",
        "This used to OOM before 0.5 but was fixed",
        "RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number",
        "OOM killer took the trainer",
        "the container gets OOMKilled",
        "OOM on the host: swap is full",
        "java.lang.OutOfMemoryError: Java heap space",
    ] {
        let text = format!("{line}{gpu_body}");
        assert!(parse_text(&text).iter().all(|m| !m.is_gpu_oom), "{line}");
    }
}
