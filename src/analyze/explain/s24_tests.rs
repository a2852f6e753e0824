//! Whole-text checks of what session 24's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use crate::model::explain::Phase;

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 \
                   has a total capacity of 79.19 GiB of which 1.00 MiB is free.";

const OLD_OOM: &str =
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 \
                       GiB total capacity; 10.76 GiB already allocated; 12.81 MiB free; 101.88 \
                       MiB cached)";

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

#[test]
fn a_method_handed_to_the_workers_by_name_is_the_stage() {
    for (method, expected) in [
        ("load_model", Phase::WeightsLoad),
        ("determine_available_memory", Phase::Profiling),
        ("determine_num_available_blocks", Phase::Profiling),
        ("compile_or_warm_up_model", Phase::CudaGraphCapture),
    ] {
        for call in [
            format!("self.collective_rpc(\"{method}\")"),
            format!("self._run_workers('{method}', max_concurrent_workers=1)"),
        ] {
            let text = format!(
                "Traceback (most recent call last):\n  File \"/usr/lib/python3/dist-packages/\
                 vllm/executor/uniproc_executor.py\", line 49, in _init_executor\n    {call}\n  \
                 File \"/usr/lib/python3/dist-packages/vllm/executor/uniproc_executor.py\", \
                 line 58, in collective_rpc\n    answer = run_method(self.driver_worker, method, \
                 args, kwargs)\n{OOM}\n"
            );
            assert_eq!(phase(&text), expected, "{text}");
        }
    }
    // A method named by a variable says nothing.
    let text = format!(
        "Traceback (most recent call last):\n  File \"/x/vllm/executor/uniproc_executor.py\", \
         line 58, in collective_rpc\n    answer = run_method(self.driver_worker, method, args)\n\
         {OOM}\n"
    );
    assert_eq!(phase(&text), Phase::Unknown);
}

#[test]
fn a_frame_line_wrapped_by_the_console_is_read_whole() {
    // Wrapped inside the line number, and after its comma.
    let text = format!(
        "Traceback (most recent call last):\n  File \"/usr/local/lib/python3.10/dist-packages/\
         vllm/executor/uniproc_executor.py\", line 4\n9, in _init_executor\n    \
         self.collective_rpc(\"load_model\")\n  File \"/usr/local/lib/python3.10/dist-packages/\
         vllm/executor/uniproc_executor.py\", line 58, \nin collective_rpc\n{OOM}\n"
    );
    assert_eq!(phase(&text), Phase::WeightsLoad, "{text}");
    // A line under a frame that is not its rest is not read as one.
    let text = format!(
        "Traceback (most recent call last):\n  File \"/x/train.py\", line 4\n    9, in a list\n\
         {OOM}\n"
    );
    assert_eq!(phase(&text), Phase::Unknown, "{text}");
}

#[test]
fn gins_configurable_names_the_function_that_ran() {
    let text = format!(
        "> {OLD_OOM}\n>   In call to configurable 'train' (<function train at 0x7fb2fb7f1e60>)\n"
    );
    assert_eq!(phase(&text), Phase::TrainingStep, "{text}");
    let text = format!("{OLD_OOM}\n  In call to configurable 'Model' (<class 'x.Model'>)\n");
    assert_eq!(phase(&text), Phase::Unknown, "{text}");
}

#[test]
fn the_kv_cache_named_as_the_stage_in_words() {
    for words in [
        "The error occurs during KV cache initialization when vLLM attempts to query available \
         GPU memory.",
        "When resume the KV cache, it's very easy to run into OOM.",
        "It fails while allocating the KV cache.",
    ] {
        let text = format!("{words}\n\n{OLD_OOM}\n");
        assert_eq!(phase(&text), Phase::KvCacheAlloc, "{text}");
    }
}

#[test]
fn a_conversion_named_with_what_it_converts() {
    for words in [
        "I get OOM during the FP8 to FP4 MoE conversion.",
        "It always crashes during GGUF conversion of the 70B model.",
    ] {
        let text = format!("{words}\n\n{OLD_OOM}\n");
        assert_eq!(phase(&text), Phase::FormatConversion, "{text}");
    }
    // A conversion far from `during`, or another clause, is not named.
    let text = format!(
        "It crashes during the first epoch of the long run, after the conversion.\n\n{OLD_OOM}\n"
    );
    assert_ne!(phase(&text), Phase::FormatConversion, "{text}");
}

#[test]
fn a_stage_function_named_in_a_title_without_backticks() {
    let text = format!(
        "# vLLM 1.4 TP=2 fails with CUDA out of memory during determine_available_memory on two \
         cards\n\nsome words here.\n\n{OOM}\n"
    );
    assert_eq!(phase(&text), Phase::Profiling, "{text}");
    // Part of an option or a path, it names nothing.
    let text = format!(
        "# vLLM fails with CUDA out of memory when I pass --determine_available_memory to the \
         server\n\n{OOM}\n"
    );
    assert_eq!(phase(&text), Phase::Unknown, "{text}");
}

#[test]
fn querying_the_gpus_memory_is_no_model_run() {
    let text = format!(
        "The server crashes when it attempts to query available GPU memory.\n\n{OLD_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::Unknown, "{text}");
}

#[test]
fn rusts_allocation_failure_is_the_hosts_memory() {
    let text = "[2026-12-04T08:59:27Z] tokenizing data/raw\nmemory allocation of 8589934592 bytes \
                failed\nprep_job.sh: line 6:  3363 Aborted                 python3 prep.py\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom, "{text}");
    let message = &report.ooms[0];
    assert_eq!(message.kind, crate::model::failure::OomKind::HostMemory);
    assert_eq!(
        message.details.host_required_bytes.map(|bytes| bytes.0),
        Some(8_589_934_592)
    );
    // A device allocation failing with its size in bytes is not the host's.
    let vulkan = "ggml_vulkan: Device memory allocation of size 1073741824 failed.\n";
    assert!(explain_text(vulkan).is_gpu_oom);
}

#[test]
fn a_garbled_old_message_keeps_the_cards_capacity() {
    let text =
        "RuntimeError: CUDA out of memory. Tried to allocate 962.00 MiB (GPU 0; 23.65 GiBry \
                Management and PYTORCH_CUDA_ALLOC_CONF\n";
    let report = explain_text(text);
    let oom = report.oom.expect("figures");
    assert_eq!(oom.total_capacity_bytes.map(|b| b.0), Some(25_393_994_138));
    // A first figure that is another one's stays that one's.
    let text = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB \
                already allocated; 12.81 MiB free)\n";
    let oom = explain_text(text).oom.expect("figures");
    assert_eq!(oom.total_capacity_bytes, None);
}
