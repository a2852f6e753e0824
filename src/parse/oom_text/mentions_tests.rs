//! Unit tests of wordings read from the December 2026 corpus batches: mentions in a title or the
//! reporter's words, cut or retyped messages, and the kills that are the host's memory.

use super::tests::{gib, mib, one};
use super::*;
use crate::model::bytes::MIB;
use crate::model::gpu::CudaOrdinal;

/// Families read from the December 2026 batch of the corpus (issue 13).
#[test]
fn ctranslate2_tpu_and_class_only_messages() {
    let ct2 = one("RuntimeError: CUDA failed with error out of memory");
    assert!(ct2.is_gpu_oom);
    assert_eq!(ct2.kind, OomKind::CudaErrorOutOfMemory);

    let tpu = one("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 15.65G. That was not possible. There are 11.08G free.; (0x0x0_HBM0)");
    assert_eq!(tpu.kind, OomKind::XlaResourceExhausted);
    assert_eq!(tpu.figures.tried_to_allocate_bytes, gib(15.65));
    assert_eq!(tpu.figures.free_bytes, gib(11.08));
    // The same runtime under XRT (PyTorch/XLA 1.x) reserves instead of allocating.
    let xrt = one("E tensorflow/compiler/xla/xla_client/xla_util.cc:88]   (1) RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at the bottom of memory. That was not possible. There are 6.78G free, 0B reserved, and 3.33G reservable.");
    assert!(xrt.is_gpu_oom);
    assert_eq!(xrt.kind, OomKind::XlaResourceExhausted);
    assert_eq!(xrt.figures.tried_to_allocate_bytes, gib(6.48));
    assert_eq!(xrt.figures.free_bytes, gib(6.78));
    // A reservation that is not XLA's failure is not an OOM.
    assert!(parse_text("Attempting to reserve 6.48G at the bottom of memory.").is_empty());

    // Only the class: kept when nothing follows, replaced by the message when it does.
    let header = "OutOfMemoryError                          Traceback (most recent call last)";
    let alone = one(header);
    assert!(alone.is_gpu_oom);
    assert_eq!(alone.kind, OomKind::OtherGpuOom);
    let full = format!(
        "{header}\nCell In[8], line 2\n----> 2 model = load()\n\nOutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free. Of the allocated memory 13.81 GiB is allocated by PyTorch, and 69.58 MiB is reserved by PyTorch but unallocated."
    );
    let messages = parse_text(&full);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].kind, OomKind::PytorchTotalCapacity);
    assert_eq!(
        one("generating image for xyz plot: OutOfMemoryError").kind,
        OomKind::OtherGpuOom
    );
    let tf = one("ResourceExhaustedError: failed to allocate memory");
    assert!(tf.is_gpu_oom);
    let rooted = parse_text("ResourceExhaustedError: 2 root error(s) found.\n  (0) Resource exhausted: OOM when allocating tensor with shape[16,112,112,147] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc");
    assert_eq!(rooted.len(), 1, "{rooted:#?}");
    assert_eq!(rooted[0].kind, OomKind::TensorflowOomTensor);
    for text in [
        "except torch.cuda.OutOfMemoryError:",
        "java.lang.OutOfMemoryError: Java heap space",
        "import OutOfMemoryError",
    ] {
        assert!(
            parse_text(text)
                .iter()
                .all(|m| m.kind != OomKind::OtherGpuOom),
            "{text}"
        );
    }
}

/// vLLM's warm-up error quoted before the allocator message it wraps takes that message's
/// figures (same process only).
#[test]
fn vllm_warmup_quoted_first_takes_the_allocator_figures() {
    let text = "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests.\nPlease try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.\n\ntorch.OutOfMemoryError: CUDA out of memory.\nTried to allocate 252.00 MiB. GPU 0 has a total capacity of 10.57 GiB of which 163.12 MiB is free.\nOf the allocated memory 9.67 GiB is allocated by PyTorch,\nand 26.44 MiB is reserved by PyTorch but unallocated.";
    let messages = parse_text(text);
    assert_eq!(messages[0].kind, OomKind::VllmWarmupOom, "{messages:#?}");
    assert_eq!(
        messages[0].figures.tried_to_allocate_bytes,
        Some(Bytes(252 << 20))
    );
    assert_eq!(messages[0].figures.total_capacity_bytes, gib(10.57));
}

/// `mention` alone is a GPU OOM named without its message; followed by `between` and a real
/// message, only the message is left, with its figures.
fn assert_a_mention_yields_to_a_message(mention: &str, between: &str) {
    let alone = one(mention);
    assert_eq!(alone.kind, OomKind::NamedWithoutMessage, "{mention}");
    assert!(alone.is_gpu_oom, "{mention}");
    let text = format!("{mention}{between}\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.00 GiB of which 1.00 MiB is free.");
    let messages = parse_text(&text);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(
        messages[0].figures.tried_to_allocate_bytes,
        Some(Bytes(20 * MIB))
    );
}

/// A title or sentence naming the error counts only when the text has no message of its own:
/// a message after it (or before it) replaces it. See: issue 13.
#[test]
fn a_mention_counts_only_without_a_message() {
    for title in [
        "\"torch.cuda.OutOfMemoryError: CUDA out of memory\" when deploy LLM with TGI in Kubernetes",
        "[Bug]: WSL Cuda out of Memory when Trying to Load GGUF Model",
        "[Bug]: EXAONE-4.0-32B with VSWA causes OOM on A100-40G x 4",
        "Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding.",
    ] {
        assert_a_mention_yields_to_a_message(title, "\nTraceback (most recent call last):");
    }
    // After a host-memory failure the same words are prose about it, not a GPU failure.
    let host = parse_text("Error: model requires more system memory (5.0 GiB) than is available (3.9 GiB)\nis this a CUDA out of memory problem?");
    assert!(host.iter().all(|m| !m.is_gpu_oom), "{host:#?}");
    // The host's OOM killer is not a GPU OOM mention.
    assert!(parse_text("OOM killer invoked on the GPU node")
        .iter()
        .all(|m| m.kind != OomKind::OtherGpuOom && m.kind != OomKind::NamedWithoutMessage));
}

/// llama.cpp finding no free KV cells is the context running full, not GPU memory.
#[test]
fn llama_cpp_kv_cells_full_is_not_gpu_oom() {
    for line in [
        "update_slots : failed to find free space in the KV cache, retrying with smaller n_batch = 256",
        "decode: failed to find a memory slot for batch of size 512",
        "srv  update_slots: failed to decode the batch: KV cache is full - try increasing it via the context size, i = 0, n_batch = 2048, ret = 1",
    ] {
        let message = one(line);
        assert_eq!(message.kind, OomKind::ContextFull, "{line}");
        assert!(!message.is_gpu_oom, "{line}");
    }
}

/// The reporter's own words for an OOM whose message is not pasted are a mention; advice,
/// negations and the host's memory are not. See: issue 13.
#[test]
fn prose_names_an_oom_without_its_message() {
    for sentence in [
        "I get an out of memory error when using any RoPE factors in config.json",
        "Yes, it work. But NV 3060 6GB Error out of memory.",
        "# OOM when jax.jit is used to compile and execute the train_step function",
        "训练的时候会出现out of memory",
        "API OutOfMemory Error on the second request",
        "Encountered Out of Memory during Sampling; Unloading all Models...",
        "Peak buffers:",
    ] {
        assert_eq!(one(sentence).figures, OomFigures::default(), "{sentence}");
        assert_a_mention_yields_to_a_message(sentence, "");
    }
    for not_one in [
        "If you see out-of-memory errors during serving, reduce --mem-fraction-static",
        "When I load the model there is no out of memory error reported",
        "the job got an out of memory error in host RAM",
        "我的内存会出现out of memory",
    ] {
        assert!(
            parse_text(not_one).iter().all(|m| !m.is_gpu_oom),
            "{not_one}"
        );
    }
}

/// PyTorch's message with its head cut, reworded or hard-wrapped with a hanging indent still
/// gives its figures. See: issue 13.
#[test]
fn pytorch_message_cut_reworded_or_wrapped() {
    let cut = one("Tried to allocate 4.02 GiB (GPU 0; 12.00 GiB total capacity; 6.06 GiB already allocated; 2.27 GiB free; 7.45 GiB reserved in total by PyTorch)");
    assert_eq!(cut.kind, OomKind::PytorchReservedInTotal);
    assert_eq!(cut.figures.tried_to_allocate_bytes, gib(4.02));
    assert_eq!(cut.figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(cut.figures.reserved_total_bytes, gib(7.45));

    let reworded = one("RuntimeError: CUDA has run out of memory. Attempting to allocate 86.00 MiB (GPU 0; 8.00 GiB total capacity; 7.19 GiB already allocated; 0 bytes free; 7.31 GiB total reserved by PyTorch) If reserved memory >> allocated memory");
    assert_eq!(reworded.figures.tried_to_allocate_bytes, mib(86.0));
    assert_eq!(reworded.figures.total_capacity_bytes, gib(8.0));
    assert_eq!(reworded.figures.free_bytes, Some(Bytes(0)));
    assert_eq!(reworded.figures.reserved_total_bytes, gib(7.31));

    let wrapped = one("ERROR    2024-11-28 13:24:44,248 app ERROR: CUDA   batch_handler.py:574\n         out of memory. Tried to allocate 3.88 GiB. GPU 0\n         has a total capacity of 44.42 GiB of which 920.81\n         MiB is free. Process 247326 has 5.95 GiB memory in\n         use. Of the allocated memory 5.44 GiB is allocated by\n         PyTorch, and 6.72 MiB is reserved by PyTorch but\n         unallocated. If reserved but unallocated memory is");
    assert_eq!(wrapped.figures.tried_to_allocate_bytes, gib(3.88));
    assert_eq!(wrapped.figures.free_bytes, mib(920.81));
    assert_eq!(wrapped.figures.reserved_unallocated_bytes, mib(6.72));

    let exceed = parse_text("Allocation on device 0 would exceed memory. (out of memory)\nCurrently allocated: 21.44 GiB\nRequested : 1.33 GiB\nDevice limit: 23.99 GiB\nFree (according to CUDA): 0 bytes\nPyTorch limit (set by user-supplied memory fraction)\n: 17179869184.00 GiB");
    assert_eq!(exceed.len(), 1, "{exceed:#?}");
    assert_eq!(exceed[0].kind, OomKind::CudaMallocAsync);
    assert_eq!(exceed[0].figures.tried_to_allocate_bytes, gib(1.33));
}

/// CUDA/HIP status 2 in other libraries' words: spconv's tensorview check, ONNX Runtime's
/// `HIP failure 2: out of memory; GPU=0`. See: issue 13.
#[test]
fn cuda_status_2_wordings() {
    let spconv = one("RuntimeError: TensorStorage /io/include/tensorview/tensor.h 168\ncuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.");
    assert!(spconv.is_gpu_oom);
    assert_eq!(spconv.kind, OomKind::CudaErrorOutOfMemory);
    let ort =
        one("std::basic_string_view<char>] HIP failure 2: out of memory; GPU=0; hostname=box");
    assert!(ort.is_gpu_oom);
    assert_eq!(ort.figures.gpu_index, Some(CudaOrdinal(0)));
}

/// A message retyped in lower case without spaces, and TVM's allocation failure. See: issue 13.
#[test]
fn lower_case_retyped_message_and_tvm() {
    let retyped = one("RuntimeError: cuda out of memory. tried to allocate 50MiB(GPU 0; 1.96GiB totalcapacity; 1.20GiB already allocated; 10.00MiB free; 1.30GiB reserved in total by PyTorch)");
    assert_eq!(retyped.figures.tried_to_allocate_bytes, mib(50.0));
    assert_eq!(retyped.figures.gpu_index, Some(CudaOrdinal(0)));
    assert_eq!(retyped.figures.total_capacity_bytes, gib(1.96));
    assert_eq!(retyped.figures.free_bytes, mib(10.0));
    let tvm = one("TVMError: Failed to allocate 1073741824 bytes with alignment 16 bytes.");
    assert!(tvm.is_gpu_oom);
    assert_eq!(tvm.figures.tried_to_allocate_bytes, Some(Bytes(1 << 30)));
    assert!(
        parse_text("malloc: Failed to allocate 64 bytes with alignment 16 bytes")
            .iter()
            .all(|m| !m.is_gpu_oom)
    );
}

/// An OOM named in words without a device word: a verb that hits it or a noun of failure after
/// it; a device's allocator out of memory with a colon or another device; Chinese words for
/// GPU memory running short; `CPU offload` is not the host's memory. See: issue 13.
#[test]
fn an_oom_named_in_other_words_is_a_mention() {
    for mention in [
        "I am running OOM on  g5.8xlarge, here is the log",
        "However I am then running into OOM issues I was not seeing before",
        "it finishes loading the model, but then it still throws an OOM exception anyway:",
        "Out-of-Memory (OOM) Error with CPU Offload Using ZeRO Stage 3",
        "[Bug] CUDA: out of memory on dual gpu",
        "`XPU out of memory` error with `-tp=4`, but model loads fine with `-tp=2`",
        "训练到第二个epoch时显存不足",
        "微调的时候爆显存了",
    ] {
        assert_a_mention_yields_to_a_message(mention, "\nTraceback (most recent call last):");
    }
    for not_a_failure in [
        "If you hit OOM issues, lower the batch size",
        "this change should reduce OOM issues on small cards",
        "the job ran OOM and was killed by the kernel",
        "OOM issues on the host: the CPU RAM is full",
        "to avoid XPU out of memory set a lower utilization",
        "开启梯度检查点可以避免显存不足",
        "we have seen no OOM problems since",
    ] {
        assert!(
            parse_text(not_a_failure).iter().all(|m| !m.is_gpu_oom),
            "{not_a_failure}: {:#?}",
            parse_text(not_a_failure)
        );
    }
}

/// TensorFlow's ROCm stream executor printing the HIP status as a number, and the tail of
/// XLA's peak-buffer dump without its head.
#[test]
fn rocm_numbered_status_and_xla_buffer_tail_are_gpu_oom() {
    let message = one("2022-03-01 10:00:00.000000: E tensorflow/stream_executor/rocm/rocm_driver.cc:615] failed to allocate 7.35G (7889485824 bytes) from device: hipError_t(1002)");
    assert_eq!(message.kind, OomKind::HipRuntimeOutOfMemory);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(7_889_485_824))
    );
    assert!(
        parse_text("failed to allocate 7.35G (7889485824 bytes) from device: hipError_t(1)")
            .iter()
            .all(|m| !m.is_gpu_oom)
    );
    let tail = parse_text("\tBuffer 2:\n\t\tSize: 3.00GiB\n\t\tOperator: op_name=\"jit(train_step)/dot_general\"\n\t\tXLA Label: fusion = f32[8,1024]{1,0} fusion(p0), kind=kLoop\n\t\tShape: f32[8,1024]\n");
    assert!(
        tail.iter()
            .any(|m| m.is_gpu_oom && m.kind == OomKind::NamedWithoutMessage),
        "{tail:#?}"
    );
}

/// A GPU's memory running out in the reporter's own words (VRAM, GPU memory, a card named in
/// the sentence, `OOM` as a verb, Japanese) is a mention; advice, a question whether, and the
/// host's memory are not. See: issue 13.
#[test]
fn gpu_memory_running_out_in_words_is_a_mention() {
    for mention in [
        "It ran out of VRAM as soon as I generated a 1024x1024 image on my 8GB card.",
        "Ollama runs out of GPU memory with two models loaded.",
        "The GPU ran out of memory when I loaded the 70B model on my 4090.",
        "I keep running out of memory on my RTX 3090 with batch size 8.",
        "Training fails with out of memory on A100 after 100 steps.",
        "Got CUDA out-of-memory at step 3",
        "it OOMs at step 100 on 8xH100",
        "the second run OOMed during eval",
        "VRAM不足で落ちます",
        "GPUメモリ不足になります",
    ] {
        assert_eq!(one(mention).figures, OomFigures::default(), "{mention}");
        assert_a_mention_yields_to_a_message(mention, "\nTraceback (most recent call last):");
    }
    for not_a_failure in [
        "To avoid running out of VRAM, use --lowvram.",
        "If you run out of GPU memory, reduce the batch size.",
        "Is this an OOM? No, nvidia-smi shows plenty of free memory; it was a NCCL timeout.",
        "Could this be a CUDA out of memory problem? The card has 80 GiB.",
        "It ran out of RAM (32GB) while merging the LoRA; the GPU is fine.",
        "My machine ran out of memory (RAM, 16GB) while converting; the GPU was idle.",
        "The container on the GPU node ran out of memory and was killed.",
        "the job OOMs and gets killed by the kernel",
        "We ran out of disk space, out of memory on the volume while saving.",
        "メモリ不足で落ちます",
        "[ERROR] Out of VRAM message might be misleading",
        "the out of VRAM error message might not actually be referring to VRAM in some cases.",
    ] {
        assert!(
            parse_text(not_a_failure).iter().all(|m| !m.is_gpu_oom),
            "{not_a_failure}: {:#?}",
            parse_text(not_a_failure)
        );
    }
}

/// A traceback cut after the `raise` statement of its innermost frame: the quoted GPU-OOM
/// wording is the message (vLLM V1 `check_enough_kv_cache_memory` in
/// `vllm/v1/core/kv_cache_utils.py`), held like a mention so the exception's own line wins when
/// the paste has it; a quoted host-memory wording is not a GPU OOM. See: issue 13.
#[test]
fn a_cut_traceback_raising_an_oom_wording_is_a_mention() {
    let raise = "(EngineCore_DP0 pid=223840) ERROR 10-25 13:08:43 [core.py:708]     raise ValueError(\"No available memory for the cache blocks. \"\n                     \"Try increasing `gpu_memory_utilization` when \"";
    let cut = one(raise);
    assert!(cut.is_gpu_oom);
    assert_eq!(cut.kind, OomKind::NamedWithoutMessage);
    let whole = parse_text(&format!("{raise}\nValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."));
    assert_eq!(whole.len(), 1, "{whole:#?}");
    assert_eq!(whole[0].kind, OomKind::VllmNoCacheBlocks);
    assert_a_mention_yields_to_a_message(raise, "\nTraceback (most recent call last):");
    for not_gpu in [
        "    raise MemoryError(\"Cannot allocate memory for the batch\")",
        "│   1242 │   │   raise ValueError(\"No available memory for the cache blocks. \"",
        "   1242             raise ValueError(\"No available memory for the cache blocks. \"",
        "it does not raise \"CUDA out of memory\" any more",
    ] {
        assert!(
            parse_text(not_gpu).iter().all(|m| !m.is_gpu_oom),
            "{not_gpu}: {:#?}",
            parse_text(not_gpu)
        );
    }
    // A title quoting the error's words.
    assert_a_mention_yields_to_a_message(
        "Error \"out of memory\" while there is enough memory to allocate",
        "",
    );
}

/// NCCL's size on the warning after `Cuda failure 'out of memory'` (`include/alloc.h`), a
/// message retyped in lower case with a comma, and a European locale's sizes. See: issue 13.
#[test]
fn nccl_size_retyped_comma_and_locale_sizes() {
    let nccl = one("ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n\nng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\nng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1");
    assert_eq!(nccl.kind, OomKind::NcclCudaFailure);
    assert_eq!(nccl.figures.tried_to_allocate_bytes, Some(Bytes(6_291_456)));
    assert_eq!(nccl.figures.gpu_index, Some(CudaOrdinal(3)));
    let alone = one("node1:123:456 [3] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'\nnode1:123:456 [3] NCCL INFO init.cc:1358 -> 1");
    assert_eq!(alone.figures.tried_to_allocate_bytes, None);

    let retyped = one("l got this problem `cuda out of memory, tried to allocate 50MiB(GPU 0; 1.96GiB totalcapacity;1.33GiB already allocated; 43.5MiB free;1.36 GiB reserved in total by Pytorch)`");
    assert_eq!(retyped.figures.tried_to_allocate_bytes, mib(50.0));
    assert_eq!(retyped.figures.total_capacity_bytes, gib(1.96));
    assert_eq!(retyped.figures.free_bytes, mib(43.5));

    let locale = one("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1,50 GiB. GPU 0 has a total capacity of 23,65 GiB of which 1,02 GiB is free. Of the allocated memory 20,91 GiB is allocated by PyTorch, and 281,45 MiB is reserved by PyTorch but unallocated.");
    assert_eq!(locale.figures.tried_to_allocate_bytes, gib(1.5));
    assert_eq!(locale.figures.total_capacity_bytes, gib(23.65));
    assert_eq!(locale.figures.reserved_unallocated_bytes, mib(281.45));
    let grouped = one("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1,024.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 512.00 MiB is free.");
    assert_eq!(
        grouped.figures.tried_to_allocate_bytes,
        Some(Bytes(1024 * MIB))
    );
}

/// A reporter's words for a kill: `killed by OOM killer`, `exit with status code 137`, `exit
/// code is -9` are the host's memory; an `OOM` title before them gives way. See: issue 13.
#[test]
fn a_reported_kill_is_host_memory_and_outranks_an_oom_title() {
    for text in [
        "Training error : OOM\n\nWhen I try to run the train code , I get a error : killed by OOM killer",
        "Training task exit with status code 137\n\nStatus code 137 indicates OOM error in the docker container.",
        "Computing predictions error: OOM\n\nthe pid seems to be killed by sys and subprocess exit code is -9.\ngoogle says it OOM error,",
    ] {
        let messages = parse_text(text);
        assert!(messages.iter().all(|m| !m.is_gpu_oom), "{text}: {messages:#?}");
        assert!(
            messages.iter().any(|m| m.kind == OomKind::KilledBySignal),
            "{text}: {messages:#?}"
        );
    }
    // Not a kill: a count, or advice about the killer.
    assert!(parse_text("processed 137 items with status code 200").is_empty());
    assert!(
        parse_text("set oom_score_adj so the OOM killer spares the server")
            .iter()
            .all(|m| m.kind != OomKind::KilledBySignal)
    );
}

fn gpu_oom_count(text: &str) -> usize {
    parse_text(text).iter().filter(|m| m.is_gpu_oom).count()
}

/// Refusals and reporters' words read in the eleventh session's blind batch: SGLang's `Not
/// enough memory` named in a title (sgl-project/sglang issue 4875), `OOM` glued to Chinese words
/// (InternLM/lmdeploy issue 1332), the device's class named in a title (intel/llm-scaler),
/// LM Studio's refusal to load a model (lmstudio-bug-tracker issue 1562), GPU memory said short
/// (`not enough VRAM`), and 内存溢出 said of a job on a named card (QwenLM/Qwen issue 514).
/// Each with the look-alikes that stay what they are.
#[test]
fn refusals_and_words_without_the_message_are_gpu_ooms() {
    let sglang = "[Bug] Not enough memory\n\n[2025-03-29 18:18:34 TP0] Scheduler hit an exception: Traceback (most recent call last):\n  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 1999, in run_scheduler_process\n";
    assert_eq!(gpu_oom_count(sglang), 1);
    // Windows' wording, and the same title over the host's kill, are not.
    let windows = "Not enough memory resources are available to process this command.\nGPU 0: NVIDIA GeForce RTX 3090\n";
    assert_eq!(gpu_oom_count(windows), 0);
    assert_eq!(
        gpu_oom_count("[Bug] Not enough memory\nvllm serve died\nthe job was Killed\n"),
        0
    );
    let lmdeploy = "在cuda11.8环境上，在三卡2080ti 22G环境上运行如下示例代码，报OOM，似乎cache_max_entry_count=0.2没有生效\nGPU 0,1,2: NVIDIA GeForce RTX 2080 Ti\n";
    assert_eq!(gpu_oom_count(lmdeploy), 1);
    // The host's words glued to CJK ones are still the host's (a 7B model loading into RAM).
    let host = "显卡时英伟达的6G内存，加载7B模型的时候，系统会OOM，并且一开始加载，CPU直接跑满，GPU完全不工作是什么情况？\n";
    assert_eq!(gpu_oom_count(host), 0);
    // An ASCII letter glued to it makes another word.
    assert_eq!(
        gpu_oom_count("BOOM, the demo crashed\nGPU 0: NVIDIA GeForce RTX 2080 Ti\n"),
        0
    );
    let xpu = "[Bug] intel/llm-scaler-vllm:latest (1.4 / vLLM 0.14.0 / PyTorch 2.10): XPU OutOfMemoryError on first tensor allocation when 2x Arc B580 are visible";
    assert_eq!(one(xpu).kind, OomKind::NamedWithoutMessage);
    assert!(one(xpu).is_gpu_oom);
    assert_eq!(
        gpu_oom_count("How to handle XPU OutOfMemoryError gracefully"),
        0
    );
    assert_eq!(
        gpu_oom_count("java.lang.OutOfMemoryError: Java heap space"),
        0
    );
    let lm_studio =
        "Incorrect use of 'Not enough resources to load the model with the current settings'";
    assert!(one(lm_studio).is_gpu_oom);
    assert_eq!(
        gpu_oom_count("CUDA error: too many resources requested for launch"),
        0
    );
    assert!(one("LM Studio claims not enough VRAM to load models that loaded before").is_gpu_oom);
    for not_a_failure in [
        "If there is not enough VRAM, lower the GPU layers.",
        "Make sure you have enough VRAM before loading.",
    ] {
        assert_eq!(gpu_oom_count(not_a_failure), 0, "{not_a_failure}");
    }
    let qwen = "我在用T4单卡跑7B int4的QLoRA微调，跑不了，显示内存溢出。报错信息如下：";
    assert!(one(qwen).is_gpu_oom);
    for host in ["训练时内存溢出，被系统Killed", "T4单卡训练，CPU内存溢出"] {
        assert_eq!(gpu_oom_count(host), 0, "{host}");
    }
}

/// A title naming an OOM with no word of whose memory takes the GPU from a distributed job's
/// device set-up or an engine's model placement after it: Lightning's `LOCAL_RANK: 0 -
/// CUDA_VISIBLE_DEVICES: […]`, vLLM's `Loading model weights took 19.9073 GB` (`model_runner.py`).
#[test]
fn a_weak_title_takes_the_gpu_from_device_setup_and_model_placement_lines() {
    for body in [
        "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]",
        "INFO 09-27 11:18:22 model_runner.py:1025] Loading model weights took 19.9073 GB",
        "INFO 09-27 11:18:35 enc_dec_model_runner.py:297] Starting profile run for multi-modal models.",
        "[rank0]: Traceback (most recent call last):",
    ] {
        let text = format!("Out of memory after some iterations of validation\n\n{body}\n");
        assert_eq!(gpu_oom_count(&text), 1, "{text}");
    }
    let text = "Out of memory after some iterations of validation\nLoading the dataset index\n";
    assert_eq!(gpu_oom_count(text), 0);
}

/// TensorFlow's stream executor (`stream_executor/cuda/cuda_driver.cc` `DeviceAllocate`) prints
/// the request exactly in bytes after its rounded size.
#[test]
fn stream_executor_cuda_driver_failure_takes_the_exact_bytes() {
    let message = one("failed to allocate 17.79G (19104890880 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory");
    assert!(message.is_gpu_oom);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        Some(Bytes(19_104_890_880))
    );
    assert_eq!(
        one("CUDA_ERROR_OUT_OF_MEMORY: out of memory")
            .figures
            .tried_to_allocate_bytes,
        None
    );
}

/// A title naming the OOM, the reporter's sentence naming it again, then the message (several
/// ranks' interleaved): the message is the failure, and neither mention stays (hpcaitech/
/// ColossalAI, the llama2 Gemini benchmark on eight A100s).
#[test]
fn a_mention_named_twice_still_yields_to_the_message() {
    let text = "[BUG]: examples/language/llama2/scripts/benchmark_7B/gemini.sh 在八卡A100上测试out of memory\n\n按照脚本跑了一下，就报了out of memory，打印出来参数长这样：\n\n报错：\n```torch.cuda.OutOfMemoryErrortorch.cuda: torch.cuda.OutOfMemoryError.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 GiB (GPU 6; 79.20 GiB total capacity; 54.76 GiB already allocated; 22.56 GiB free; 55.44 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.\n";
    let messages = parse_text(text);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].line, 6);
    assert_eq!(messages[0].figures.gpu_index, Some(CudaOrdinal(6)));
    // Without the message, the first mention is the one left.
    let cut = text.split("```").next().expect("head");
    let messages = parse_text(cut);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0].line, 1);
    assert!(messages[0].is_gpu_oom);
}
