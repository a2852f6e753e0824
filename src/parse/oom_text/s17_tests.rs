//! Unit tests of wordings added in session 17: cut messages, kills reported by a shell.
//! Every line is synthetic.

use super::tests::one;
use super::*;
use crate::model::bytes::GIB;

/// PyTorch's message cut inside `is free` keeps its free figure; a size cut before its unit
/// gives none.
#[test]
fn a_message_cut_inside_is_free_keeps_the_free_figure() {
    let message = one(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a \
         total capacity of 23.50 GiB of which 1.50 GiB i",
    );
    assert_eq!(message.figures.free_bytes, Some(Bytes(GIB + GIB / 2)));
    assert_eq!(message.figures.gpu_index.map(|gpu| gpu.0), Some(1));
    let cut = one(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a \
         total capacity of 23.50 GiB of which 1.5",
    );
    assert_eq!(cut.figures.free_bytes, None);
}

/// `OOM` glued to the Chinese words of a sentence about GPU memory (显存) is a report; the
/// same sentence that avoids it is not, and a Latin word holding `OOM` is no mention.
#[test]
fn oom_glued_to_chinese_words_is_a_mention() {
    let messages = parse_text("微调模型时显存占用太高导致OOM了");
    assert!(messages.iter().any(|m| m.is_gpu_oom), "{messages:#?}");
    let avoided = parse_text("调小batch可以避免OOM，显存够用");
    assert!(avoided.iter().all(|m| !m.is_gpu_oom), "{avoided:#?}");
    let word = parse_text("the ZOOMER model on an A100");
    assert!(word.iter().all(|m| !m.is_gpu_oom), "{word:#?}");
}

/// Bash's report on a script's command killed by SIGKILL names its process and gives it the
/// exit status 137; the interactive job report names no process.
#[test]
fn a_scripts_kill_report_names_the_process_and_its_exit_status() {
    let messages =
        parse_text("train.sh: line 12:  4242 Killed                  python train.py --epochs 3");
    let kill = messages
        .iter()
        .find(|m| m.kind == OomKind::KilledBySignal)
        .unwrap_or_else(|| panic!("{messages:#?}"));
    assert!(!kill.is_gpu_oom);
    assert_eq!(kill.details.killed_pid, Some(4242));
    assert_eq!(kill.details.exit_code, Some(137));
    let job = parse_text("[1]+  Killed                  python train.py");
    let job = job
        .iter()
        .find(|m| m.kind == OomKind::KilledBySignal)
        .unwrap_or_else(|| panic!("{job:#?}"));
    assert_eq!(job.details.killed_pid, None);
    assert_eq!(job.details.exit_code, Some(-9));
    // A launcher's report of its child's status (session 29: DeepSpeed's).
    let text =
        "[ERROR] [launch.py:320:sigkill_handler] ['python', 'x.py'] exits with return code = -9";
    let messages = parse_text(text);
    let kill = messages
        .iter()
        .find(|m| m.kind == OomKind::KilledBySignal)
        .unwrap_or_else(|| panic!("{text}: {messages:#?}"));
    assert_eq!(kill.details.exit_code, Some(-9));
    assert!(parse_text("exits with return code = -90: a bad option").is_empty());
}

/// PyTorch's own wordings of a GPU OOM raised as `RuntimeError` hint at PyTorch; the CUDA
/// runtime's words printed by a C program, or the words alone in a sentence, do not.
#[test]
fn pytorchs_wordings_hint_at_pytorch() {
    use crate::model::failure::EngineName;
    for text in [
        "RuntimeError: CUDA out of memory",
        "RuntimeError: CUDA error: out of memory",
    ] {
        let message = one(text);
        assert_eq!(message.engine_hint, Some(EngineName::Pytorch), "{text}");
    }
    for text in [
        "my_kernel.cu:42: CUDA error: out of memory",
        "CUDA out of memory when I train with batch 64 on a T4",
    ] {
        let message = one(text);
        assert_eq!(message.engine_hint, None, "{message:#?}");
    }
}

/// PyTorch's MPS allocator refusing one request larger than the device's largest buffer is a
/// GPU OOM of that size (GB read as 2^30, as `format_size` prints it); the words without a size
/// are no message.
#[test]
fn mps_invalid_buffer_size_is_a_gpu_oom_of_one_request() {
    let message = one("RuntimeError: Invalid buffer size: 3.57 GB");
    assert!(message.is_gpu_oom);
    assert_eq!(message.kind, OomKind::MpsOutOfMemory);
    assert_eq!(
        message.figures.tried_to_allocate_bytes,
        // 3.57 × 2^30 = 3,833,258,311.68, rounded.
        Some(Bytes(3_833_258_312))
    );
    let title = parse_text("[bug]: RuntimeError: Invalid buffer size: 2.25 GB");
    assert!(title.iter().any(|m| m.is_gpu_oom), "{title:#?}");
    let words = parse_text("ValueError: Invalid buffer size for the ring (expected a power of 2)");
    assert!(words.iter().all(|m| !m.is_gpu_oom), "{words:#?}");
}

/// The user-space OOM killers of desktop Linux (session 30): earlyoom's kill names the process
/// and its resident memory; systemd-oomd's names the cgroup it killed. Both are the host's
/// memory; torch elastic's `closing signal SIGTERM` to its workers is not.
#[test]
fn user_space_oom_killers_are_the_hosts_memory() {
    let earlyoom = "Aug 04 10:39:10 debian earlyoom[845]: sending SIGTERM to process 322603 uid \
                    1000 \"python3.13\": oom_score 1282, VmRSS 29931 MiB, cmdline \"python3 \
                    main.py\"";
    assert_host_kill(earlyoom, 322603, "python3.13", 29931);
    let oomd = "systemd-oomd[825]: Killed /user.slice/user-1000.slice/app-code-1.scope due to \
                memory used (15.2G) / total (15.5G) and swap used (3.9G) / total (4.0G) being \
                more than 90.00%";
    assert!(parse_text(oomd)
        .iter()
        .any(|m| m.kind == OomKind::HostMemory && !m.is_gpu_oom));
    let elastic = "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3301 \
                   closing signal SIGTERM";
    assert!(parse_text(elastic).is_empty());
}

/// A reporter's bullet that names offloading before its `OOM` (session 30): the words read
/// without the offloading are the ones positions are found in.
#[test]
fn an_oom_after_offloading_words_is_read_without_slicing_past_the_line() {
    for line in [
        "\t•\tZeRO-2 with CPU offload (still OOM)",
        "CPU offloading İİİİ did not help, still OOM",
        "Tried ZeRO-3 offloaded to CPU: OOM anyway",
    ] {
        let _ = parse_text(line);
    }
}

/// ggml-vulkan's failed device allocation and the buffer it was for, read as one message
/// (session 30): the allocation that failed is the request, not the larger buffer.
#[test]
fn ggml_vulkans_failed_allocation_is_the_request() {
    let text = "ggml_vulkan: Device memory allocation of size 3303014400 failed.\n\
                ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n\
                ggml_gallocr_reserve_n_impl: failed to allocate Vulkan0 buffer of size 8611430400";
    let messages = parse_text(text);
    assert_eq!(
        messages[0].figures.tried_to_allocate_bytes,
        Some(Bytes(3303014400)),
        "{messages:#?}"
    );
}

/// macOS's memory-pressure killer (session 30): the process, its id and its size.
#[test]
fn macos_jetsam_kills_are_the_hosts_memory() {
    for (line, pid) in [
        (
            "kernel: memorystatus: killing largest compressed process python3.11 [5844] 43350 MB",
            5844,
        ),
        (
            "low swap: killing largest compressed process with pid 912 (python3.11) and size 43350 MB",
            912,
        ),
    ] {
        assert_host_kill(line, pid, "python3.11", 43350);
    }
}

/// `line` reads as a kill for the host's memory, naming the process, its id and its size.
fn assert_host_kill(line: &str, pid: u32, process: &str, mib: u64) {
    let messages = parse_text(line);
    let kill = messages
        .iter()
        .find(|m| m.kind == OomKind::HostMemory)
        .unwrap_or_else(|| panic!("{line}: {messages:#?}"));
    assert!(!kill.is_gpu_oom, "{line}");
    assert_eq!(kill.details.killed_pid, Some(pid), "{line}");
    assert_eq!(
        kill.details.killed_process.as_deref(),
        Some(process),
        "{line}"
    );
    assert_eq!(
        kill.details.killed_rss_bytes,
        Some(Bytes(mib << 20)),
        "{line}"
    );
}
