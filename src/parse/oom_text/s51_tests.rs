//! Unit tests of wordings added in session 51: MLC-LLM's memory budget at engine creation, the
//! host allocator's words without its name, a PyTorch request heading a title, the class with
//! its colon before a reporter's words, and the host's memory named in Chinese.

use super::*;
use crate::model::failure::{EngineName, OomMessage};
use crate::model::Bytes;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

fn gpu(text: &str) -> bool {
    first(text).is_some_and(|message| message.is_gpu_oom)
}

#[test]
fn mlc_llms_budget_refusals_are_gpu_ooms_with_their_sizes() {
    let cpp = "TVMError: Check failed: (output_res.IsOk()) is false: Insufficient GPU memory \
               error: The available single GPU memory is 4762.535 MB, which is less than the sum \
               of model weight size (4958.468 MB) and temporary buffer size (609.312 MB).\n";
    let message = first(cpp).expect("a message");
    assert!(message.is_gpu_oom);
    assert_eq!(message.engine_hint, Some(EngineName::MlcLlm));
    let mib = |value: f64| Bytes((value * 1_048_576.0).round() as u64);
    let near =
        |got: Option<Bytes>, want: Bytes| got.is_some_and(|got| got.0.abs_diff(want.0) < 1_100);
    assert!(
        near(message.figures.free_bytes, mib(4762.535)),
        "{message:#?}"
    );
    assert!(near(message.details.model_weights_bytes, mib(4958.468)));
    assert!(near(message.details.workspace_bytes, mib(609.312)));
    // The Python engine's assertion, with exact bytes.
    let python = "AssertionError: Cannot estimate KV cache capacity. The model weight size \
                  11219714048.0 may be larger than GPU memory size 25447170048\n";
    let message = first(python).expect("a message");
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.details.model_weights_bytes,
        Some(Bytes(11_219_714_048))
    );
    assert_eq!(
        message.figures.total_capacity_bytes,
        Some(Bytes(25_447_170_048))
    );
    // Cut before its sizes, and quoted without its head.
    assert!(gpu(
        "AssertionError: Cannot estimate KV cache capacity. The model weight size 1\n"
    ));
    assert!(gpu(
        "mlc_llm reports \"The model weight size may be larger than GPU memory size.\"\n"
    ));
}

#[test]
fn the_host_allocators_words_without_its_name_are_the_hosts() {
    let title =
        "# 4-bit: \"Allocator: not enough memory: you tried to allocate 35389440 bytes.\"\n";
    let message = first(title).expect("a message");
    assert!(!message.is_gpu_oom);
    assert_eq!(message.details.host_required_bytes, Some(Bytes(35_389_440)));
}

#[test]
fn a_request_heading_a_title_is_pytorchs() {
    let message = first("# Tried to allocate 20.00 MiB\n\nSome details here.\n").expect("one");
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(20 << 20))
    );
    // Inside a sentence, or in bytes (the host allocator's unit), it is no such title.
    assert!(!gpu("I think it tried to allocate 20.00 MiB there\n"));
    assert!(!gpu("# Tried to allocate 4096 bytes\n"));
}

#[test]
fn the_class_with_its_colon_before_words_is_a_report() {
    assert!(gpu(
        "# torch.cuda.OutOfMemoryError: for multi-gpu training\n\nDetails here.\n"
    ));
    // Caught, it is no report.
    assert!(!gpu(
        "we catch torch.cuda.OutOfMemoryError: and retry with a smaller batch\n"
    ));
}

#[test]
fn vram_capitalised_once_and_a_bracketed_title_are_mentions() {
    assert!(gpu(
        "# [Bug]: Not enough Vram on AMD GPU/CPUs\n\nDetails here.\n"
    ));
    assert!(gpu(
        "# Batch images (out of memory) error\n\nI was wondering how to free the VRAM.\n"
    ));
    // The bracket after an allocator's own sentence is that message's tail, not a new one.
    let text = "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory.\n\
                (out of memory)Currently allocated     : 3.21 GiB\n\
                Requested               : 1.53 GiB\n\
                Device limit            : 8.00 GiB\n\
                Free (according to CUDA): 0 bytes\n";
    let messages = parse_text(text);
    assert_eq!(messages.len(), 1, "{messages:#?}");
}

#[test]
fn a_gpu_named_in_the_sentence_keeps_the_hosts_words_of_others_out() {
    let text = "The 4090 setup raised an out-of-memory error. I tried offloading portions of \
                the model to CPU but I run into tensor device mismatch issues.\n";
    assert!(gpu(text));
    // A face swap is no swap space.
    let swap = "the reactor face swap node is not unloaded from the VRAM after the swap process \
                leading to out of memory error on the second run.\n";
    assert!(gpu(swap));
    // The host's words in the mention's own sentence still make it the host's.
    assert!(!gpu(
        "The 4090 box ran out of memory in CPU RAM while loading.\n"
    ));
}

#[test]
fn the_hosts_memory_named_in_chinese_is_the_hosts() {
    let text = "deepseekv3 huggingface转megatron权重\n\n我采用了8台8卡80g的a100，每张卡大概800g的\
                cpu内存，进行权重转换，发现出现了内存OOM。\n";
    assert!(!gpu(text));
    // The GPU's memory said so is still the GPU's.
    assert!(gpu("用a100训练的时候出现了显卡内存OOM\n"));
}

#[test]
fn the_class_before_its_message_paraphrased_is_a_report() {
    let text = "fails after loading `facebook/w2v-bert-2.0` with error: `torch.cuda.\
                OutOfMemoryError: tried to allocate... 7.75 total capacity ... 6.64 already \
                allocated.`\n";
    assert!(gpu(text));
}

#[test]
fn the_hosts_memory_named_in_chinese_after_a_weak_mention_is_the_hosts() {
    let gpu_work = "it OOM when converting\n\nrunning on the GPU with torch\n";
    assert!(gpu(gpu_work));
    assert!(!gpu(&format!("{gpu_work}我的cpu内存用满了\n")));
}
