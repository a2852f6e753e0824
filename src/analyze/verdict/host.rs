//! The verdict of a failure that is not the GPU's memory: the host's memory (its allocator,
//! the kernel's OOM killer, a kill by signal, pinned host memory) and the other look-alikes.

use super::*;

pub(super) fn not_gpu(mut builder: Builder<'_>, failure: &OomMessage) -> Verdict {
    let mut failure = failure;
    if failure.kind == OomKind::KilledBySignal {
        // A kill is host memory only when another message shows it (the kernel's OOM-killer
        // lines, Kubernetes `OOMKilled`, a memory error); otherwise the cause is not shown.
        match builder
            .inputs
            .messages
            .iter()
            .find(|message| message.kind == OomKind::HostMemory)
        {
            Some(host) => {
                builder.fact(format!("line {}: {}", host.line, shorten(&host.text, 240)));
                failure = host;
            }
            None => return killed_by_signal(builder, failure),
        }
    }
    let merged;
    if failure.kind == OomKind::HostMemory {
        merged = with_kernel_figures(failure, builder.inputs.messages);
        failure = &merged;
        host_memory_facts(&mut builder, failure);
    }
    let (cause, headline, steps, summary) = match failure.kind {
        OomKind::IllegalMemoryAccess => (
            Cause::IllegalMemoryAccess,
            "not an out-of-memory error: a kernel accessed memory it must not (illegal memory access)",
            vec![
                "rerun with `CUDA_LAUNCH_BLOCKING=1` so the traceback points at the kernel that failed".to_string(),
                "check the versions of the engine, PyTorch, CUDA and the driver for a known bug with this model or kernel (attention backend, quantized kernels, custom all-reduce)".to_string(),
                "more GPU memory will not help: this is a software fault or a corrupted state, not capacity".to_string(),
            ],
            "This is not a GPU memory shortage but a software fault (an illegal memory access in a kernel). More or bigger GPUs will not fix it; it needs a different software version, kernel or setting.",
        ),
        // NCCL's shared-memory transport between the ranks of one host (`src/misc/shmutils.cc`
        // `ncclShmOpen`; `NCCL_SHM_DISABLE=1` makes NCCL use another transport, documented in
        // NCCL's environment variables).
        OomKind::SharedMemory if failure.text.contains("creating shared memory segment") => (
            Cause::SharedMemory,
            "not a GPU out-of-memory error: NCCL could not create its shared-memory segment in /dev/shm",
            vec![
                "give the container more shared memory: docker `--shm-size=8g` or `--ipc=host`, Kubernetes an `emptyDir` with `medium: Memory` mounted at /dev/shm".to_string(),
                "or set `NCCL_SHM_DISABLE=1` so NCCL passes data between the processes another way (slower)".to_string(),
                "`df -h /dev/shm` shows its size and use".to_string(),
            ],
            "This is not a GPU problem: NCCL could not create a segment in the shared-memory filesystem (/dev/shm) it uses between the processes of one machine (too small, or not writable). More GPU memory will not help; raise the container's shm size or share the host's.",
        ),
        OomKind::SharedMemory => (
            Cause::SharedMemory,
            "not a GPU out-of-memory error: shared memory (/dev/shm) ran out for the DataLoader workers",
            vec![
                "give the container more shared memory: docker `--shm-size=8g` or `--ipc=host`, Kubernetes an `emptyDir` with `medium: Memory` mounted at /dev/shm".to_string(),
                "or use fewer DataLoader workers (`num_workers`), smaller prefetch, or `torch.multiprocessing.set_sharing_strategy('file_system')`".to_string(),
                "`df -h /dev/shm` shows its size and use".to_string(),
            ],
            "This is not a GPU problem: the shared-memory filesystem (/dev/shm) that DataLoader workers pass batches through is too small. More GPU memory will not help; raise the container's shm size or use fewer workers.",
        ),
        OomKind::DiskFull => (
            Cause::DiskFull,
            "not an out-of-memory error: the disk is full (No space left on device)",
            vec![
                "free space on the filesystem named in the error (`df -h`), or point caches elsewhere: `HF_HOME`, `TRITON_CACHE_DIR`, `TORCHINDUCTOR_CACHE_DIR`, `TMPDIR`".to_string(),
                "checkpoints and compile caches grow quickly: keep fewer checkpoints (`save_total_limit`)".to_string(),
            ],
            "This is not a memory problem at all: a disk filled up. Neither GPU nor RAM upgrades help; free or add disk space.",
        ),
        OomKind::DeviceAssert => (
            Cause::DeviceAssert,
            "not an out-of-memory error: a device-side assert fired in a kernel",
            vec![
                "rerun with `CUDA_LAUNCH_BLOCKING=1` (or on CPU) to see the failing operation and its `Assertion ... failed` line".to_string(),
                "the usual causes are an index out of range: a label >= the number of classes, a token id >= the vocabulary size, a bad embedding or gather index".to_string(),
                "more GPU memory will not help: the input or the model configuration is wrong".to_string(),
            ],
            "This is not a GPU memory shortage: a kernel's assertion failed (usually an index or label out of range). More or bigger GPUs will not fix it; the data or configuration needs fixing.",
        ),
        // llama.cpp `tools/server/server.cpp`: `-c, --ctx-size` sets the KV cells, `-np,
        // --parallel` splits them between slots (each gets n_ctx / np unless `--kv-unified`);
        // ollama's `num_ctx` option / `OLLAMA_CONTEXT_LENGTH` and `OLLAMA_NUM_PARALLEL` set the
        // same for its runner.
        OomKind::ContextFull => (
            Cause::ContextFull,
            "not a GPU out-of-memory error: llama.cpp's context is full (no free KV cells for the batch)",
            vec![
                "give each request more context: raise `-c` / `--ctx-size` (ollama: `num_ctx`, or `OLLAMA_CONTEXT_LENGTH`), or shorten the prompt and `n_predict`".to_string(),
                "the server splits the context between its slots: with `-np` / `--parallel N` each slot gets `ctx-size / N` (ollama: `OLLAMA_NUM_PARALLEL`); use fewer slots or a context of N times the longest request".to_string(),
                "GPU memory is not what ran out: `oomdoc fit` shows whether a larger context still fits the card".to_string(),
            ],
            "This is not a GPU memory shortage: the model's context window (its KV cells) filled up while generating. A larger context setting or fewer parallel slots fixes it; check with `oomdoc fit` that the larger context fits the card.",
        ),
        OomKind::TritonOutOfResources => (
            Cause::TritonResources,
            "not a GPU out-of-memory error: a Triton kernel needs more shared memory than one SM has",
            vec![
                "this is per-block on-chip shared memory, not GPU memory: use smaller block sizes or fewer `num_stages` for the kernel".to_string(),
                "with torch.compile, try another autotune config or mode, or a newer Triton/PyTorch whose configs fit this GPU".to_string(),
            ],
            "This is not a GPU memory shortage: a compiled kernel asks for more on-chip shared memory than this GPU model has per block. A different kernel configuration fixes it; more GPU memory does not.",
        ),
        _ => (
            Cause::HostMemory,
            "not a GPU out-of-memory error: the host (CPU) ran out of RAM",
            host_memory_steps(failure),
            "This is not a GPU problem: the machine's RAM (not the GPU's) ran out. More GPU memory will not help; give the job more system memory or load the model with less of it.",
        ),
    };
    for step in steps {
        builder.step(step);
    }
    super::super::advice::host_steps(&mut builder, cause);
    Verdict {
        cause,
        headline: headline.to_string(),
        evidence: builder.evidence,
        next_steps: builder.steps,
        owner_class: OwnerClass::NotGpuMemory,
        owner_summary: summary.to_string(),
    }
}

/// The failure with the figures of the kernel's other OOM-killer messages of the same kill filled
/// in: a long dump between `invoked oom-killer` and `Killed process` splits them into several
/// messages (the cgroup's `memory: usage` line in one, the `Killed process` line in another).
pub(super) fn with_kernel_figures(failure: &OomMessage, messages: &[OomMessage]) -> OomMessage {
    let mut merged = failure.clone();
    let details = &mut merged.details;
    let same_kill = messages.iter().filter(|message| {
        message.kind == OomKind::HostMemory
            && message.line >= failure.line
            && (message.line == failure.line || !message.text.contains("invoked oom-killer"))
    });
    for message in same_kill {
        let other = &message.details;
        if details.killed_pid.is_none() && other.killed_pid.is_some() {
            details.killed_pid = other.killed_pid;
            details.killed_process.clone_from(&other.killed_process);
            details.killed_rss_bytes = other.killed_rss_bytes;
            details.killed_anon_rss_bytes = other.killed_anon_rss_bytes;
        }
        if details.host_usage_bytes.is_none() {
            details.host_usage_bytes = other.host_usage_bytes;
            details.host_limit_bytes = details.host_limit_bytes.or(other.host_limit_bytes);
        }
        if details.oom_constraint.is_none() {
            details.oom_constraint.clone_from(&other.oom_constraint);
        }
        if details.memory_cgroup.is_none() {
            details.memory_cgroup.clone_from(&other.memory_cgroup);
        }
        merged.end_line = merged.end_line.max(message.end_line);
        if details.killed_pid.is_some() {
            break;
        }
    }
    merged
}

/// The figures of a host-memory failure, each with the line and the words it comes from, and
/// the step its limit asks for.
pub(super) fn host_memory_facts(builder: &mut Builder<'_>, failure: &OomMessage) {
    let details = &failure.details;
    let line = if failure.end_line > failure.line {
        format!("lines {}–{}", failure.line, failure.end_line)
    } else {
        format!("line {}", failure.line)
    };
    if pinned_host(failure) {
        builder.fact(format!(
            "{line}: the CUDA runtime's out-of-memory was raised while pinning host memory (a `pin_memory` call, the DataLoader's pin thread or the host allocator's frames): page-locked host RAM ran out, not the GPU's memory"
        ));
    }
    if let Some(pid) = details.killed_pid {
        let name = details
            .killed_process
            .as_deref()
            .map(|name| format!(" ({name})"))
            .unwrap_or_default();
        // earlyoom (a user-space killer) prints the process's resident memory in MiB
        // (`sending SIGTERM to process N uid U "name": oom_score S, VmRSS M MiB`).
        let earlyoom = failure.text.contains("sending SIG");
        // macOS's jetsam prints the process's size in MB (`memorystatus: killing … [pid] N MB`).
        let jetsam =
            failure.text.contains("memorystatus: killing") || failure.text.contains("low swap:");
        let rss = match (details.killed_rss_bytes, details.killed_anon_rss_bytes) {
            (Some(rss), Some(anon)) => format!(
                ", which held {rss} of RAM ({} exact; `anon-rss` {anon}, its own allocations)",
                rss.0
            ),
            (Some(rss), None) if earlyoom => format!(", which held {rss} of RAM (`VmRSS`)"),
            (Some(rss), None) if jetsam => format!(", which held {rss} of memory"),
            _ => String::new(),
        };
        if jetsam {
            builder.fact(format!(
                "{line}: macOS's memory-pressure killer (jetsam) killed process {pid}{name}{rss}; on Apple silicon the GPU (MPS) shares this memory (the kernel's `memorystatus` line)"
            ));
        } else if earlyoom {
            builder.fact(format!(
                "{line}: earlyoom, a user-space OOM killer, stopped process {pid}{name}{rss} as the host's free memory fell below its limit (earlyoom's `sending SIG… to process` line)"
            ));
        } else {
            builder.fact(format!(
                "{line}: the kernel's OOM killer killed process {pid}{name}{rss} (the kernel's `Killed process` line)"
            ));
        }
    }
    match (details.host_usage_bytes, details.host_limit_bytes) {
        (Some(usage), Some(limit)) => builder.fact(format!(
            "{line}: its memory cgroup{} was at its limit: usage {usage} of limit {limit} ({} bytes; the kernel's `memory: usage …kB, limit …kB` line)",
            details.memory_cgroup.as_deref().map(|cgroup| format!(" `{cgroup}`")).unwrap_or_default(),
            limit.0
        )),
        (Some(usage), None) => builder.fact(format!(
            "{line}: its memory cgroup used {usage} and had no limit (the kernel's `memory: usage` line)"
        )),
        _ => {}
    }
    match details.oom_constraint.as_deref() {
        Some("CONSTRAINT_MEMCG") => {
            builder.fact(format!(
                "{line}: `CONSTRAINT_MEMCG`: a memory cgroup's limit was reached (a container's, a pod's or a systemd unit's), not the whole machine's RAM"
            ));
            let limit = details
                .host_limit_bytes
                .map(|limit| format!(" above its {limit}"))
                .unwrap_or_default();
            builder.step(format!(
                "raise the memory limit of the container or pod{limit} (docker `--memory`, Kubernetes `resources.limits.memory`), or make the job need less host RAM"
            ));
        }
        Some("CONSTRAINT_NONE") => builder.fact(format!(
            "{line}: `CONSTRAINT_NONE`: the whole machine ran out of RAM (no cgroup limit was involved)"
        )),
        Some(other) => builder.fact(format!("{line}: the kernel's constraint was `{other}`")),
        None => {}
    }
    if [
        "memory pressure",
        "running low on memory",
        "ray-oom-prevention",
    ]
    .iter()
    .any(|words| failure.text.contains(words))
    {
        builder.fact(format!(
            "{line}: Ray's memory monitor killed the worker: the node's memory use passed Ray's threshold (`RAY_memory_usage_threshold`, 0.95 of the node's RAM by default), host RAM, not GPU memory"
        ));
        builder.step("give the Ray node more RAM or run fewer tasks and actors on it (more `num_cpus` per task); `ray logs raylet.out -ip <node>` lists the workers killed and their memory");
    }
    if details.killed_pid.is_none() && failure.text.contains("OOMKilled") {
        builder.fact(format!(
            "{line}: `OOMKilled` is set only when the kernel's OOM killer ended the container for its memory limit (host RAM); a CUDA out-of-memory error never sets it"
        ));
    }
    if let Some(required) = details.host_required_bytes {
        builder.fact(format!(
            "{line}: one host allocation of {required} ({} bytes, as the message prints it) failed",
            required.0
        ));
    }
    if let Some(available) = details.host_available_bytes {
        builder.fact(format!(
            "{line}: {available} of system memory was available (as the message prints it)"
        ));
    }
}

/// The generic steps for host memory, less those the figures already answered (a cgroup
/// limit's own step comes from [`host_memory_facts`]; the kernel's line is already there).
/// A raw CUDA out-of-memory read as the host's: the parser found it raised by a pinned
/// (page-locked) host allocation (`parse/oom_text/pinned.rs`).
pub(super) fn pinned_host(failure: &OomMessage) -> bool {
    failure.kind == OomKind::HostMemory
        && [
            "CUDA error",
            "cudaErrorMemoryAllocation",
            "CUDA driver error",
            "cuda runtime error",
        ]
        .iter()
        .any(|words| failure.text.contains(words))
}

pub(super) fn host_memory_steps(failure: &OomMessage) -> Vec<String> {
    let details = &failure.details;
    let mut steps = Vec::new();
    if pinned_host(failure) {
        steps.push("the allocation that failed was page-locked (pinned) host memory: turn `pin_memory` off (DataLoader, `tensor.pin_memory()`) or pin smaller buffers, and check the locked-memory limit (`ulimit -l`, docker `--ulimit memlock=-1`)".to_string());
    }
    if details.oom_constraint.as_deref() != Some("CONSTRAINT_MEMCG") {
        steps.push("give the process or container more host RAM (docker `--memory`, Kubernetes `resources.limits.memory`), or add swap".to_string());
    }
    steps.push("load weights with less host memory: safetensors with memory mapping, `low_cpu_mem_usage=True` (transformers), fewer loader workers".to_string());
    if details.killed_pid.is_none() {
        steps.push(
            "check `dmesg` for the OOM killer's line to see what was killed and how much it held"
                .to_string(),
        );
    }
    steps
}

/// A kill by signal (SIGKILL, exit code 137 or -9) with nothing in the text that says why.
pub(super) fn killed_by_signal(mut builder: Builder<'_>, failure: &OomMessage) -> Verdict {
    if let Some(pid) = failure.details.killed_pid {
        builder.fact(format!(
            "line {}: the shell reports process {pid} killed by SIGKILL (its exit status is 137)",
            failure.line
        ));
    }
    builder.fact(
        "nothing in the text says who sent the signal: no kernel OOM-killer line, no `OOMKilled`, no memory error".to_string(),
    );
    let phase = builder.inputs.phase.failed_in;
    if phase == Phase::WeightsLoad || phase == Phase::FormatConversion {
        builder.fact(format!(
            "the kill came while {}: host RAM peaks then (checkpoint tensors are read or converted in RAM before the GPU copy), so look for the kernel's OOM-killer line first",
            phase.short()
        ));
    }
    builder.step("look for the kernel's line on the host: `dmesg -T | grep -i -E 'killed process|oom'` (or `journalctl -k`); `Out of memory: Killed process N` means host RAM ran out");
    builder.step("in Kubernetes, `kubectl describe pod` shows `Reason: OOMKilled` for a memory-limit kill; with docker, `docker inspect -f '{{.State.OOMKilled}}' <container>`");
    builder.step("pass those lines with the log to `oomdoc explain` to name the cause");
    let code = match failure.details.exit_code {
        Some(137) => "exit code 137",
        _ => "SIGKILL, signal 9",
    };
    Verdict {
        cause: Cause::KilledBySignal,
        headline: format!(
            "not a GPU out-of-memory error: the process was killed by a signal ({code}); the cause is not shown"
        ),
        evidence: builder.evidence,
        next_steps: builder.steps,
        owner_class: OwnerClass::NotGpuMemory,
        owner_summary: "The process was stopped by a kill signal. The text does not say who sent it: the kernel's out-of-memory killer (host RAM, not GPU memory), a container's memory limit, a job scheduler or a person. Nothing here shows a GPU memory shortage; the system log says which.".to_string(),
    }
}
