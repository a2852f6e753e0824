//! Unit tests of wordings added in session 34: PyTorch's message with its head cut before its
//! second sentence, its figures cut or misread by OCR, the NVML assert of its per-process
//! report, torchrun's SIGKILLed worker, Ray 2.x's shorter report wrapped over lines, TensorFlow's
//! OOM cut in a title above the whole message on the CPU, an engine's log line told in a
//! sentence, and ggml's pool retry before its error. Short excerpts of real texts.

use super::tests::{gib, mib, one};
use super::*;
use crate::model::failure::OomKind;
use crate::model::gpu::CudaOrdinal;

/// CSDN blog 146158524: the message quoted from its second sentence on.
#[test]
fn the_allocator_message_from_its_second_sentence_is_read_alone() {
    let message = one(
        "error:GPU 0 has a total capacity of 23.64 GiB of which 1.61 GiB is free. Process 1624541 \
         has 22.02 GiB memory in use. Of the allocated memory 20.13 GiB is allocated by PyTorch, \
         and 1.47 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory \
         is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid \
         fragmentation. See documentation for Memory Management",
    );
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::PytorchTotalCapacity);
    let figures = &message.figures;
    assert_eq!(figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(figures.total_capacity_bytes, gib(23.64));
    assert_eq!(figures.free_bytes, gib(1.61));
    assert_eq!(figures.allocated_by_pytorch_bytes, gib(20.13));
    assert_eq!(figures.reserved_unallocated_bytes, gib(1.47));
    assert_eq!(figures.other_processes.len(), 1);
    // A sentence about a card's capacity is not the message.
    let words = parse_text("The GPU has a total capacity of 24 GiB, of which I use half.");
    assert!(
        words
            .iter()
            .all(|m| m.figures.total_capacity_bytes.is_none()),
        "{words:#?}"
    );
}

/// The same tail on the line after the head (a console wrapped there): one message.
#[test]
fn the_tail_on_the_next_line_continues_the_head() {
    let messages = parse_text(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n\
         GPU 0 has a total capacity of 23.00 GiB of which 1.00 MiB is free. Of the allocated \
         memory 20.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but \
         unallocated.\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    let figures = &messages[0].figures;
    assert_eq!(figures.tried_to_allocate_bytes, mib(20.0));
    assert_eq!(figures.total_capacity_bytes, gib(23.0));
    assert_eq!(figures.reserved_unallocated_bytes, gib(1.0));
}

/// stanford_alpaca issue 308: the paste ends right after the process's figure.
#[test]
fn this_process_figure_printed_in_full_before_a_cut() {
    let message = one(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 208.00 MiB. GPU 1 has \
         a total capacty of 39.41 GiB of which 183.50 MiB is free. Including non-PyTorch memory, \
         this process has 39.23 GiB",
    );
    assert_eq!(message.figures.process_in_use_bytes, gib(39.23));
    let inside = one(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 208.00 MiB. GPU 1 has \
         a total capacty of 39.41 GiB of which 183.50 MiB is free. Including non-PyTorch memory, \
         this process has 39.23 GiB memory in",
    );
    assert_eq!(inside.figures.process_in_use_bytes, gib(39.23));
}

/// FastChat issue 390: a screenshot's OCR, `Tried t allocate` and `(GPV 0;`.
#[test]
fn ocr_letters_of_the_allocator_words() {
    let message = one(
        "JutofMemoryError: CUDA out of memory. Tried t allocate 388.00 MiB (GPV 0; 39.43 GiB \
         total capacity; 37.42 GiB already allocated; 126.25 MiBfree; 3764 GiB reserved in total \
         by Pyorch) If reserved memory is >> allocated memory try setting max split size mb",
    );
    let figures = &message.figures;
    assert_eq!(figures.tried_to_allocate_bytes, mib(388.0));
    assert_eq!(figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(figures.total_capacity_bytes, gib(39.43));
    assert_eq!(figures.allocated_by_pytorch_bytes, gib(37.42));
    assert_eq!(figures.free_bytes, mib(126.25));
    // The garbled `Pyorch` names no reserved figure.
    assert_eq!(figures.reserved_total_bytes, None);
}

/// kserve issue 3946; a forum's wrapped paste (the path on the next line).
#[test]
fn the_nvml_assert_of_the_oom_report_is_a_gpu_oom() {
    for text in [
        "Deploying Llama3 model using Huggingface predictor fails with an error: `Failed to start \
         model server: NVML_SUCCESS == r INTERNAL ASSERT FAILED at \
         \"../c10/cuda/CUDACachingAllocator.cpp\":844, please report a bug to PyTorch.`.",
        "RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at\n\
         \"/opt/pytorch/pytorch/c10/cuda/CUDACachingAllocator.cpp\":838\n",
        "RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlInit_v2_() INTERNAL ASSERT FAILED \
         at \"../c10/cuda/CUDACachingAllocator.cpp\":963, please report a bug to PyTorch.",
    ] {
        let messages = parse_text(text);
        let message = messages.iter().find(|m| m.is_gpu_oom).expect(text);
        assert_eq!(message.kind, OomKind::OtherGpuOom, "{text}");
        assert!(message.text.starts_with("NVML_SUCCESS"), "{text}");
    }
    // The source line that asserts, and another file's assert, are not it.
    for text in [
        "  TORCH_INTERNAL_ASSERT(NVML_SUCCESS == r);",
        "RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at \"../torch/csrc/cuda/Module.cpp\":55",
    ] {
        assert!(parse_text(text).iter().all(|m| !m.is_gpu_oom), "{text}");
    }
}

/// FastChat issue 1294; a ChildFailedError summary flattened by a paste.
#[test]
fn torchruns_sigkilled_worker_names_its_pid() {
    let message = one(
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 6 \
         (pid: 75876) of binary: /usr/bin/python3",
    );
    assert!(!message.is_gpu_oom);
    assert_eq!(message.details.killed_pid, Some(75876));
    assert_eq!(message.details.exit_code, Some(-9));
    let summary = one("rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>");
    assert_eq!(summary.details.killed_pid, Some(36071));
    // Another exit status names no killed process.
    let failed = parse_text(
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 \
         (pid: 22094) of binary: /usr/bin/python3",
    );
    assert!(
        failed.iter().all(|m| m.details.killed_pid.is_none()),
        "{failed:#?}"
    );
}

/// Ray 2.x's report wrapped by a reader over three lines.
#[test]
fn rays_shorter_report_wrapped_over_lines() {
    let messages = parse_text(
        "ray.exceptions.OutOfMemoryError: 1 worker(s) were killed due to the node\n\
         running low on memory. Memory on the node (IP: 10.99.0.2) was\n\
         113.76GB / 119.70GB (0.950345)\n",
    );
    assert_eq!(messages.len(), 1, "{messages:#?}");
    let message = &messages[0];
    assert!(!message.is_gpu_oom);
    assert_eq!(message.details.host_usage_bytes, gib(113.76));
    assert_eq!(message.details.host_limit_bytes, gib(119.70));
}

/// darkflow issue (2018): the title cut before the tensor, the message on the CPU below.
#[test]
fn a_tensorflow_title_cut_before_its_tensor_gives_way_to_the_cpus_message() {
    let messages = parse_text(
        "# tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating \
         tensor with shape\n\n\
         tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating \
         tensor with shape[16,19,19,1024] and type float on \
         /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n",
    );
    assert!(messages.iter().all(|m| !m.is_gpu_oom), "{messages:#?}");
    // On a GPU the whole message below replaces the title's figureless quote (session 53).
    let gpu = parse_text(
        "# ResourceExhaustedError: OOM when allocating tensor with shape\n\n\
         ResourceExhaustedError: OOM when allocating tensor with shape[16,19,19,1024] and type \
         float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n",
    );
    assert_eq!(gpu.len(), 1, "{gpu:#?}");
    assert!(gpu[0].is_gpu_oom && gpu[0].line == 3, "{gpu:#?}");
}

/// A dual-Spark recipe's PR: vLLM's log line in the author's sentence, then Ray's kill.
#[test]
fn an_engines_log_line_told_in_a_sentence_gives_way_to_the_pasted_failure() {
    let text = "It reads like a hang, so the instinct is to tune `GPU_MEM_UTIL` — which cannot \
                fix it, and lowering it far enough to load then yields `Available KV cache \
                memory: -2.26 GiB`.\n\n```\n\
                ray.exceptions.OutOfMemoryError: 1 worker(s) were killed due to the node\n\
                running low on memory. Memory on the node (IP: 10.99.0.2) was\n\
                113.76GB / 119.70GB (0.950345)\n```\n";
    let messages = parse_text(text);
    assert!(messages.iter().all(|m| !m.is_gpu_oom), "{messages:#?}");
    // Alone, it is still the failure told.
    let alone = parse_text("Then it yields `Available KV cache memory: -2.26 GiB` and stops.");
    assert!(alone.iter().any(|m| m.is_gpu_oom), "{alone:#?}");
    // The engine's own log line is its message.
    let logged = parse_text(
        "(EngineCore_DP0 pid=563) INFO 12-23 23:34:23 [gpu_worker.py:298] Available KV cache \
         memory: -2.77 GiB\n\
         ray.exceptions.OutOfMemoryError: 1 worker(s) were killed due to the node running low \
         on memory.\n",
    );
    assert!(logged.iter().any(|m| m.is_gpu_oom), "{logged:#?}");
}

/// stable-diffusion.cpp PR 1621 on ROCm: ggml's pool retry, then its error.
#[test]
fn ggmls_pool_retry_sizes_the_error_after_it() {
    let messages = parse_text(
        "[DEBUG] ggml_extend.hpp:61   - ROCm pool[0]: alloc of 1209.60 MiB failed, flushing \
         935.90 MiB of cached buffers and retrying\n\
         [ERROR] ggml_extend.hpp:70   - ROCm error: out of memory\n\
         [ERROR] ggml_extend.hpp:70   -   current device: 0, in function alloc at \
         ggml/src/ggml-cuda/ggml-cuda.cu:449\n",
    );
    let message = messages.iter().find(|m| m.is_gpu_oom).expect("a GPU OOM");
    assert_eq!(message.figures.tried_to_allocate_bytes, mib(1209.60));
    assert_eq!(message.figures.gpu_index, Some(CudaOrdinal(0)));
    // The retry that succeeded, or an error of another function, takes no size from it.
    let other = parse_text(
        "CUDA pool[0]: alloc of 100.00 MiB failed, flushing 10.00 MiB of cached buffers and \
         retrying\nCUDA pool[0]: retry succeeded\n\nCUDA error: out of memory\n  current \
         device: 0, in function ggml_backend_cuda_buffer_type_alloc_buffer at ggml-cuda.cu:1\n",
    );
    let message = other.iter().find(|m| m.is_gpu_oom).expect("a GPU OOM");
    assert_eq!(message.figures.tried_to_allocate_bytes, None);
}

/// A reporter retelling the 2.1+ message in a sentence (`workers raise …` is prose, not a
/// `raise` statement): the allocator's request, and the figures named by their own words.
#[test]
fn the_message_retold_in_a_sentence_keeps_its_named_figures() {
    let message = one(
        "Both TP workers raise torch.OutOfMemoryError: Tried to allocate 128.00 MiB. GPU has \
         94.97 GiB total of which ~52 MiB is free ... 133 MiB reserved but unallocated inside t",
    );
    assert!(message.is_gpu_oom);
    let figures = &message.figures;
    assert_eq!(figures.tried_to_allocate_bytes, mib(128.0));
    assert_eq!(figures.total_capacity_bytes, gib(94.97));
    assert_eq!(figures.reserved_unallocated_bytes, mib(133.0));
    // An approximate free figure is not read.
    assert_eq!(figures.free_bytes, None);
    // nanochat issue (PyTorch 2.9.1), the message trimmed by its reporter.
    let trimmed = parse_text(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. \n\
         GPU has 79.19 GiB total, 6.68 GiB free, 72.48 GiB in use by this process.\n",
    );
    assert_eq!(trimmed.len(), 1, "{trimmed:#?}");
    let figures = &trimmed[0].figures;
    assert_eq!(figures.total_capacity_bytes, gib(79.19));
    assert_eq!(figures.free_bytes, gib(6.68));
    assert_eq!(figures.process_in_use_bytes, gib(72.48));
    // The source line of a `raise` statement quoting the wording is still code.
    let code = parse_text(
        "    raise torch.OutOfMemoryError(\"CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 \
         has a total capacity of 8.00 GiB of which 0 bytes is free.\")",
    );
    assert!(
        code.iter().all(|m| m.kind == OomKind::NamedWithoutMessage),
        "{code:#?}"
    );
}
