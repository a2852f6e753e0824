//! Host-RAM failures that people mistake for GPU OOM: PyTorch's CPU allocator, errno 12,
//! Python's `MemoryError` and numpy's `_ArrayMemoryError`, C++ `std::bad_alloc`, Rust's
//! `memory allocation of N bytes failed`, the Linux OOM killer, exit code 137 / SIGKILL, and
//! ollama's "requires more system memory".
//! All have `is_gpu_oom = false`.
//!
//! Sources: `c10/core/impl/alloc_cpu.cpp` (`DefaultCPUAllocator: can't allocate memory: you
//! tried to allocate %d bytes. Error code 12 (Cannot allocate memory)`; older `not enough
//! memory: you tried to allocate`), `libc10.so` string `C10 Out of Memory. Trying to allocate `
//! (`c10/cuda` and the CUDA runtime's error strings), Linux `mm/oom_kill.c` (`Out of memory: Killed process %d (%s)`), ollama
//! `llm/server.go` (`model requires more system memory (%s) than is available (%s)`), numpy
//! `numpy/core/_exceptions.py` (`_ArrayMemoryError`: `Unable to allocate {} for an array with
//! shape {} and data type {}`), libstdc++ (`terminate called after throwing an instance of
//! 'std::bad_alloc'` / `what():  std::bad_alloc`).

use super::{back_to, size_of, Continuation, Family, HostKind, Parsed};
use crate::model::failure::{EngineName, OomKind};
use crate::model::Bytes;

pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    // (And the same allocator in PyTorch 1.0 and 1.1, `c10/core/CPUAllocator.cpp` `alloc_cpu`:
    // `AT_ENFORCE(err == 0, …)` on `posix_memalign`, as LibTorch and its bindings (tch-rs)
    // raise it: `[enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment,
    // nbytes) == 0. 12 vs 0`, 12 being ENOMEM.)
    if let Some(position) = super::find(text, "DefaultCPUAllocator")
        .or_else(|| super::find(text, "enforce fail at CPUAllocator"))
    {
        let begin = back_to(text, position, "[enforce fail");
        return Some((Family::Host(HostKind::CpuAllocator), begin));
    }
    // The same allocator's words without its name, as titles shorten them (`4-bit: "Allocator:
    // not enough memory: you tried to allocate 35389440 bytes."`): only `alloc_cpu.cpp` words a
    // failure `: you tried to allocate N bytes` after `not enough memory` / `can't allocate
    // memory`; the GPU allocators say `Tried to allocate`.
    for needle in [
        "not enough memory: you tried to allocate",
        "can't allocate memory: you tried to allocate",
    ] {
        if let Some(position) = super::find(text, needle) {
            let begin = back_to(text, position, "Allocator");
            return Some((Family::Host(HostKind::CpuAllocator), begin));
        }
    }
    // PaddlePaddle's host allocator (`paddle/fluid/memory/allocation/cpu_allocator.cc`
    // `CPUAllocator::AllocateImpl`, 2.x): `posix_memalign` failed, raised as
    // `ResourceExhaustedError: Fail to alloc memory of %ld size, error code is %d.` — the class
    // Paddle's GPU allocator raises too, so the wording decides.
    if let Some(position) = super::find(text, "Fail to alloc memory of") {
        return Some((Family::Host(HostKind::CpuAllocator), position));
    }
    // mmgp's pinning of a model's weights in reserved host RAM (deepbeepmeep/mmgp `offload.py`
    // `_pin_to_memory`: `torch.empty(size, dtype=torch.uint8, pin_memory=True, device="cpu")`
    // refused, or its reservable budget reached: `Unable to pin more tensors for this model as
    // the maximum reservable memory has been reached (…)`, `Unable to pin more tensors for this
    // model (… MB): …`), as Wan2GP and the apps on mmgp print it: page-locked host memory, not
    // the GPU's.
    if let Some(position) = super::find(text, "Unable to pin more tensors") {
        return Some((Family::Host(HostKind::MemoryError), position));
    }
    // The notebook services' notices of a kernel restarted for want of the host's RAM: Google
    // Colab's `Your session crashed after using all available RAM.` and Kaggle's `Your notebook
    // tried to allocate more memory than is available. It has restarted.` (the VM's memory;
    // the GPU's is reported by the framework inside the notebook).
    for needle in [
        "session crashed after using all available RAM",
        "notebook tried to allocate more memory than is available",
        // Chromium's crashed-tab page (`Aw, Snap!` with the error code `Out of memory`): the
        // renderer process ran out of the host's memory, also when a WebGPU page crashed.
        "Aw, Snap! Out of memory",
        "Aw, Snap!\nOut of memory",
    ] {
        if let Some(position) = super::find(text, needle) {
            return Some((Family::Host(HostKind::MemoryError), position));
        }
    }
    if let Some(position) = super::find(text, "C10 Out of Memory") {
        return Some((Family::Host(HostKind::C10), position));
    }
    if let Some(position) = super::find(text, "requires more system memory") {
        let begin = back_to(text, position, "model ");
        return Some((Family::Host(HostKind::SystemMemory), begin));
    }
    for needle in [
        "Out of memory: Kill",
        "out of memory: Kill",
        "Killed process",
        "invoked oom-killer",
        "oom-kill:",
    ] {
        if let Some(position) = super::find(text, needle) {
            let begin = back_to(text, position, "Memory cgroup");
            return Some((Family::Host(HostKind::OomKiller), begin));
        }
    }
    // Slurm's cgroup plugin after the kernel killed a task of the job's step for the step's
    // memory limit (`task_cgroup_memory.c`: `Detected %u oom-kill event(s) in %ps. Some of your
    // processes may have been killed by the cgroup out-of-memory handler.`, logged by
    // `slurmstepd`; older releases `… in step %u.%u cgroup`): the host's memory.
    if let Some(found) = regex!(r"Detected \d+ oom[-_]kill event").find(text) {
        return Some((Family::Host(HostKind::OomKiller), found.start()));
    }
    // The user-space OOM killers of desktop Linux: earlyoom (`kill.c` `kill_process`:
    // `sending SIGTERM to process %d uid %d "%s": oom_score %d, VmRSS %lld MiB, cmdline "%s"`,
    // after `low memory! at or below SIGTERM limits: …`) and systemd-oomd (`oomd-util.c`
    // `oomd_kill_by_*`, logged by `oomd-manager.c`: `Killed %s due to memory used (…) / total (…)
    // and swap used …` or `… due to memory pressure for %s being …`): the host's memory.
    if let Some(found) = regex!(r"sending SIG(?:TERM|KILL) to process \d+ uid \d+")
        .find(text)
        .filter(|_| text.contains("oom_score") || text.contains("earlyoom"))
    {
        return Some((Family::Host(HostKind::OomKiller), found.start()));
    }
    // macOS's memory-pressure killer (XNU `bsd/kern/kern_memorystatus.c`, jetsam: `memorystatus:
    // killing largest compressed process python3.11 [5844] 43350 MB`, `low swap: killing largest
    // compressed process with pid 5844 (python3.11) and size 43350 MB`): the host's memory,
    // which Apple's GPU (MPS) shares.
    if let Some(found) = regex!(r"(?:memorystatus|low swap): killing").find(text) {
        return Some((Family::Host(HostKind::OomKiller), found.start()));
    }
    if let Some(found) = regex!(r"Killed \S+ due to memory (?:used \(|pressure for )").find(text) {
        return Some((Family::Host(HostKind::OomKiller), found.start()));
    }
    // Ray's memory monitor kills workers when the node's memory use passes its threshold
    // (`RAY_memory_usage_threshold`, default 0.95): raylet `node_manager.cc` prints `N Workers
    // (tasks / actors) killed due to memory pressure (OOM)`, `ray.exceptions.OutOfMemoryError`
    // says `Task was killed due to the node running low on memory`, and both end with `Refer to
    // the documentation on how to address the out of memory issue: …ray-oom-prevention…`.
    // Ray 2.x words it `N worker(s) were killed due to the node running low on memory.` (the
    // docs' "Out-Of-Memory Prevention" page): a console may wrap it after `the node`.
    for needle in [
        "killed due to memory pressure",
        "running low on memory",
        "address the out of memory issue",
        "killed due to the node",
        // The report's own sentence (`CreateOomKillMessageDetails`: `Memory on the node (IP:
        // …, ID: …) where the task (…) was running was U / T (f), which exceeds the memory
        // usage threshold of …`), when a paste keeps it without the lines around it.
        "Memory on the node (IP:",
    ] {
        if let Some(position) = super::find(text, needle) {
            return Some((Family::Host(HostKind::RayMemoryMonitor), position));
        }
    }
    if let Some(position) = find_oom_killed(text) {
        return Some((Family::Host(HostKind::OomKiller), position));
    }
    // llama.cpp's warning when `--mlock` cannot pin the mapped model (`llama-mmap.cpp`
    // `llama_mlock::raw_lock`: `warning: failed to mlock N-byte buffer (after previously locking
    // M bytes): Cannot allocate memory` then `Try increasing RLIMIT_MEMLOCK`): the lock limit,
    // not the host's memory running out, and the load goes on.
    if let Some(position) = super::find(text, "Cannot allocate memory")
        .filter(|_| super::find(text, "failed to mlock").is_none())
    {
        let begin = text[..position]
            .rfind("[Errno")
            .or_else(|| text[..position].rfind("OSError"))
            .or_else(|| text[..position].rfind("unable to mmap"))
            .unwrap_or(position);
        return Some((Family::Host(HostKind::Errno), begin));
    }
    if let Some(position) = find_memory_error(text) {
        return Some((Family::Host(HostKind::MemoryError), position));
    }
    // numpy's message logged without its class (`logger.error(e)`: `Unable to allocate 41.9
    // MiB for an array with shape (6, 276, 6625) and data type float32`, `numpy/core/
    // _exceptions.py` `_ArrayMemoryError.__str__`): the host's memory.
    if let Some(position) = super::find(text, "Unable to allocate ") {
        if text[position..].contains(" for an array with shape") {
            return Some((Family::Host(HostKind::MemoryError), position));
        }
    }
    // Windows refusing to commit more memory (`ERROR_COMMITMENT_LIMIT`, 1455: `The paging file
    // is too small for this operation to complete. (os error 1455)` from Rust's safetensors,
    // `OSError: [WinError 1455]` from Python loading torch's DLLs or mapping a checkpoint;
    // `页面文件太小，无法完成操作` in a Chinese Windows): the host's memory and page file.
    for needle in [
        "paging file is too small",
        "os error 1455",
        "WinError 1455",
        "页面文件太小",
    ] {
        if let Some(position) = super::find(text, needle) {
            let begin = text[..position]
                .rfind("OSError")
                .or_else(|| text[..position].rfind("The paging"))
                .unwrap_or(position);
            return Some((Family::Host(HostKind::Errno), begin));
        }
    }
    // Rust's default allocation-error handler (`std::alloc::handle_alloc_error` →
    // `default_alloc_error_hook`, library/std/src/alloc.rs: `memory allocation of {} bytes
    // failed`, then the process aborts: SIGABRT, exit 134): a Rust program or extension (the
    // Hugging Face `tokenizers`, candle, mistral.rs, TEI, polars) that could not get host memory.
    if let Some(found) = regex!(r"memory allocation of \d+ bytes failed").find(text) {
        return Some((Family::Host(HostKind::RustAlloc), found.start()));
    }
    // LLVM's handler for a failed allocation (`llvm/lib/Support/ErrorHandling.cpp`
    // `report_bad_alloc_error`: writes `"LLVM ERROR: out of memory\n"` and the reason, `Allocation
    // failed`, to stderr, then aborts), in any program that compiles with LLVM (an OpenCL or
    // GPU driver's kernel compiler, Triton, Numba, Mesa): the host's memory, not the device's.
    if let Some(position) = super::find(text, "LLVM ERROR: out of memory") {
        return Some((Family::Host(HostKind::BadAlloc), position));
    }
    if let Some(position) = super::find(text, "bad_alloc") {
        let before = &text[..position];
        let begin = before
            .rfind("terminate called")
            .or_else(|| before.rfind("std::"))
            .unwrap_or(position);
        return Some((Family::Host(HostKind::BadAlloc), begin));
    }
    if let Some(found) = shell_killed(text) {
        return Some((Family::Host(HostKind::Killed), found));
    }
    // PyTorch's DataLoader when a worker died of SIGKILL (`torch/csrc/DataLoader.cpp`
    // `_error_if_any_worker_fails`, 1.x–2.x: `DataLoader worker (pid N) is killed by signal: `
    // then `strsignal(si_status)`, `Killed` for SIGKILL): the host's kill, as a shell's
    // `Killed`. A bus error (`Bus error`) is the shared-memory case (not_oom.rs).
    if let Some(found) = regex!(r"is killed by signal: Killed").find(text) {
        let begin = back_to(text, found.start(), "DataLoader worker");
        return Some((Family::Host(HostKind::Killed), begin));
    }
    // The shell's `Killed` quoted by a reporter (``Getting out-of-memory (`Killed`) in a machine
    // with over 1TB of RAM``, `the process just prints "Killed"`): the same kill, in prose.
    if let Some(found) = regex!(r#"[`"'“‘]Killed[`"'”’]"#).find(text) {
        // The quote may be a multi-byte `“` or `‘`: start after it, on a char boundary.
        let quote = found.as_str().chars().next().map_or(1, char::len_utf8);
        return Some((Family::Host(HostKind::Killed), found.start() + quote));
    }
    // A reporter's words for the kernel's kill (`I get a error : killed by OOM killer`, `the
    // process was killed by the oom-killer`): the host's memory, whatever `OOM` said before.
    if let Some(found) =
        regex!(r"(?i)\bkilled by (?:the )?(?:linux |kernel(?:'s)? )?oom[ -]?killer").find(text)
    {
        return Some((Family::Host(HostKind::Killed), found.start()));
    }
    // A reporter's words for a kill of the process with no signal named (`when run "python
    // text_generation_hf.py", loading model was Killed`, `the training got killed`,
    // `程序在加载模型中被kill了`, the program was killed while loading the model; `加载进程在57%时
    // 仍被系统杀死`, killed by the system, `被系统终止`, terminated by it): the kernel's
    // kill of a process out of host memory, the commonest reading. Not a worker `killed by
    // signal: Bus error` (shared memory, not_oom.rs) or a named signal other than SIGKILL.
    if let Some(found) =
        regex!(r"(?i)\b(?:was|got|been|were) killed\b|被kill|被杀|被系统(?:杀|终止|kill)")
            .find(text)
    {
        let after = text[found.end()..].trim_start().to_ascii_lowercase();
        // Killed by someone or something other than the system (`got Killed by someone`, a
        // worker `killed by signal: Bus error`) is not the host's memory.
        let by_the_system = [
            "by the os",
            "by os",
            "by linux",
            "by the kernel",
            "by kernel",
        ]
        .iter()
        .chain(&[
            "by the system",
            "by system",
            "by oom",
            "by the oom",
            "by signal 9",
        ])
        .chain(&["by signal: killed", "by sigkill"])
        .any(|agent| after.starts_with(agent));
        if !after.starts_with("by ") || by_the_system {
            return Some((Family::Host(HostKind::Killed), found.start()));
        }
    }
    // (Also `exits with code 137`, `exits with error code 137`, `Error code 137 when loading`,
    // docker's `Exited (137)`, `OOMKilled (exit 137)`.)
    // The code ends at any character that is no ASCII letter, digit or `_` (a CJK sentence
    // glued to it: `遇到exits with return code = -9是怎么错误呢`; Unicode's `\b` sees `是` as a
    // word's letter).
    if text.contains("137") || text.contains("-9") || text.contains("SIGKILL") {
        let found = regex!(
            r#"(?i)(?:exit(?:s|ed)?(?: with)?(?: error)?(?: code| status(?: code)?)|exitcode|return ?code|error code|status(?: code)?)(?: is| was| of)?"?\s*[:=]?\s*\(?(?:137|-9)(?:$|[^0-9A-Za-z_])|(?:^|[^A-Za-z_])exit(?:ed)? ?\(?137\)?(?:$|[^0-9A-Za-z_])|Signal 9 \(SIGKILL\)|Signals\.SIGKILL|was sent SIGKILL"#
        )
        .find(text)?;
        // gunicorn's line names the worker before its words (`Worker (pid:2977) was sent
        // SIGKILL!`): the message starts at the worker.
        let begin = if found.as_str() == "was sent SIGKILL" {
            super::back_to(text, found.start(), "Worker (pid:")
        } else {
            found.start()
        };
        return Some((Family::Host(HostKind::Killed), begin));
    }
    None
}

/// Kubernetes `OOMKilled` (`Reason: OOMKilled`, `reason: OOMKilled`, the `STATUS` column of
/// `kubectl get pods`) and docker's `"OOMKilled": true`; not docker's `"OOMKilled": false`.
fn find_oom_killed(text: &str) -> Option<usize> {
    let position = super::find(text, "OOMKilled")?;
    let after = text[position + "OOMKilled".len()..].trim_start_matches(['"', ' ', ':', '\t']);
    if after.starts_with("false") {
        return None;
    }
    Some(position)
}

/// A shell's report of a process killed by SIGKILL: bash `Killed` alone on its line, with a job
/// number (`[1]+  Killed   python train.py`) or from a script (`line 3: 4242 Killed   python
/// x.py`), macOS `Killed: 9`, or glued to the tqdm bar it interrupted (`2.83s/it]Killed`,
/// `?it/s]已杀死`: bash's word in a Chinese locale), or closing a markdown code span or fence it
/// was pasted in (`` 已杀死` ``). Not the word inside prose. A script's report starts at the
/// killed process's id (see [`script_kill`]).
fn shell_killed(text: &str) -> Option<usize> {
    let found = regex!(
        r"^\s*(?:\[\d+\][+-]?\s+)?(?:\*\*|__|`{1,3})?(?:Killed|已杀死)(?::\s*9)?(?:\*\*|__|`{1,3})?(?:\s*$|\s{2,}\S)|line \d+:\s+\d+\s+Killed(?:\s|$)|[\d?](?:it/s|s/it)\](?:Killed|已杀死)\s*$|ETA: \d+s(?:Killed|已杀死)\s*$|\bzsh: killed\s+\S|\[\d+\]\s+(?:[+-]\s+)?\d+\s+killed\s{2,}\S"
    )
    .find(text)?;
    let found_text = &text[found.start()..];
    // zsh's report of a job killed by SIGKILL (`Src/jobs.c` `printjob`, the signal's name from
    // `sigmsg`, `killed`): `[1]  + 14875 killed     python main.py` (job number, pid), also
    // glued to the tqdm bar it interrupted; `zsh: killed     python main.py` for the foreground
    // job. The message starts at the pid (read by [`script_kill`]) or at `zsh:`.
    if let Some(caps) = regex!(r"^\[\d+\]\s+(?:[+-]\s+)?(\d)").captures(found_text) {
        return Some(found.start() + caps.get(1).map_or(0, |pid| pid.start()));
    }
    if found_text.starts_with("zsh:") {
        return Some(found.start());
    }
    let offset = match regex!(r"^line \d+:\s+(\d)").captures(found_text) {
        Some(caps) => caps.get(1).map_or(0, |pid| pid.start()),
        None => found_text
            .find("Killed")
            .or_else(|| found_text.find("已杀死"))
            .unwrap_or(0),
    };
    Some(found.start() + offset)
}

/// The process id and exit status of bash's report on a command of a script (or `bash -c`)
/// killed by SIGKILL: `bash: line 1:  2152 Killed    python x.py`. Bash prints it from
/// `notify_of_job_status` (`jobs.c`: `"%s: line %d: "`, then `pretty_print_job` with
/// `JLIST_NONINTERACTIVE`, the long format: the pid, `%5ld`, then the signal's name), and gives
/// the command the exit status 128 + 9 = 137 (bash manual, "EXIT STATUS": a command that
/// terminates on a fatal signal N has the status 128+N).
fn script_kill(text: &str) -> Option<u32> {
    // The message is read from the raw line by [`shell_killed`]; its normalized text may glue
    // the command to `Killed` (the column padding removed).
    let caps = regex!(r"^(\d+)\s+[Kk]illed").captures(text)?;
    caps.get(1)?.as_str().parse().ok()
}

/// Python's `MemoryError`, numpy's `_ArrayMemoryError` or pyarrow's `ArrowMemoryError` raised (not quoted in an `except`
/// clause, not part of `OutOfMemoryError`): the start of the class name (`numpy.core.…`).
fn find_memory_error(text: &str) -> Option<usize> {
    let position = super::find(text, "MemoryError")?;
    let before = &text[..position];
    let statement = before.trim_start();
    if before.ends_with("OutOf")
        || statement.starts_with("except")
        || statement.starts_with("import ")
        || statement.starts_with("from ")
    {
        return None;
    }
    let after = &text[position + "MemoryError".len()..];
    if !(after.is_empty() || after.starts_with([':', '('])) {
        return None;
    }
    // Only `MemoryError`, `_ArrayMemoryError`, pyarrow's `ArrowMemoryError` (Arrow's host
    // memory pools) and their module paths.
    let class_start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |index| crate::parse::text::after_char_at(before, index));
    let own = &before[class_start..];
    let class = own.rsplit('.').next().unwrap_or("");
    (class.is_empty() || class == "_Array" || class == "Arrow").then_some(class_start)
}

/// The kernel prints the kill over several lines (`… invoked oom-killer`, a dump of the
/// machine's memory and tasks, `memory: usage NkB, limit NkB, failcnt N` for a cgroup,
/// `oom-kill:constraint=…`, `Out of memory: Killed process`, `oom_reaper: reaped process`; Linux
/// `mm/oom_kill.c` `dump_header`, `dump_oom_summary`, `__oom_kill_process`, and
/// `mm/memcontrol.c` `mem_cgroup_print_oom_meminfo`): read them as one message. The lines of the
/// dump between them are skipped while the kill itself is not yet printed.
pub(super) fn oom_killer_continuation(open: &str, text: &str) -> Continuation {
    let lower = text.to_ascii_lowercase();
    let killed = open.contains("Killed process");
    if killed && lower.contains("invoked oom-killer") {
        // The next kill: a message of its own.
        Continuation::Close
    } else if lower.contains("oom")
        || lower.contains("killed process")
        || lower.contains("out of memory")
        || lower.contains("memory: usage")
    {
        Continuation::Append
    } else if !killed && is_kernel_line(text) {
        Continuation::Skip
    } else {
        Continuation::Close
    }
}

/// A kernel log line: `[12345.678901] …` (dmesg) or `… kernel: …` (syslog, journalctl).
fn is_kernel_line(text: &str) -> bool {
    regex!(r"^\s*\[\s*\d+\.\d+\]|\skernel: ").is_match(text)
}

pub(super) fn is_complete(kind: HostKind, squeezed: &str) -> bool {
    match kind {
        HostKind::CpuAllocator => {
            regex!(r"allocate(\d+)bytes").is_match(squeezed)
                || squeezed.contains("Failtoallocmemoryof")
        }
        HostKind::C10 => regex!(r"allocate(\d+)").is_match(squeezed),
        _ => true,
    }
}

pub(super) fn parse(kind: HostKind, text: &str, squeezed: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::HostMemory, false);
    let details = &mut parsed.details;
    match kind {
        HostKind::CpuAllocator | HostKind::C10 => {
            details.host_required_bytes =
                regex!(r"(?:allocate|Failtoallocmemoryof)(\d+)(?:bytes)?")
                    .captures(squeezed)
                    .and_then(|caps| caps.get(1))
                    .and_then(|m| m.as_str().parse().ok())
                    .map(Bytes);
        }
        HostKind::SystemMemory => {
            parsed.engine_hint = Some(EngineName::Ollama);
            details.host_required_bytes =
                size_of(regex!(concat!(r"systemmemory\(", size!(), r"\)")), squeezed);
            details.host_available_bytes =
                size_of(regex!(concat!(r"available\(", size!(), r"\)")), squeezed);
        }
        // A file mapped into memory that the host could not map (`unable to mmap 4965799096
        // bytes from file <model-00001-of-00002.safetensors>: Cannot allocate memory`): the
        // mapping's size is what was asked.
        HostKind::Errno => {
            details.host_required_bytes = regex!(r"unabletommap(\d+)bytes")
                .captures(squeezed)
                .and_then(|caps| caps.get(1))
                .and_then(|m| m.as_str().parse().ok())
                .map(Bytes);
        }
        HostKind::OomKiller => oom_killer_figures(text, details),
        HostKind::Killed => {
            parsed.kind = OomKind::KilledBySignal;
            let script = script_kill(text);
            // Or PyTorch's DataLoader naming the worker the kernel killed.
            details.killed_pid = script.or_else(|| {
                regex!(r"DataLoader worker \(pid (\d+)\) is killed by signal")
                    .captures(text)
                    .and_then(|caps| caps.get(1)?.as_str().parse().ok())
            });
            // Or torchrun's elastic agent naming the worker that died of SIGKILL: its log line
            // (`torch/distributed/elastic/multiprocessing/api.py`: `failed (exitcode: %s)
            // local_rank: %s (pid: %s) of binary: %s`), its `ChildFailedError` summary
            // (`errors/__init__.py` `_FAILURE_FORMAT_TEMPLATE`: `exitcode  : -9 (pid: 36071)`)
            // and that summary's `traceback : Signal 9 (SIGKILL) received by PID 36071`.
            // Or gunicorn's arbiter naming the worker it killed (`gunicorn/arbiter.py`
            // `Arbiter.reap_workers`: `"Worker (pid:%s) was sent SIGKILL! Perhaps out of
            // memory?"`), the first such line.
            details.killed_pid = details.killed_pid.or_else(|| {
                regex!(r"Worker \(pid:(\d+)\) was sent SIGKILL")
                    .captures(text)
                    .and_then(|caps| caps.get(1)?.as_str().parse().ok())
            });
            details.killed_pid = details.killed_pid.or_else(|| {
                regex!(r"(?i)exitcode\s*:\s*-9\)?\s*(?:local_rank:\s*\d+\s*)?\(pid:\s*(\d+)\)|Signal 9 \(SIGKILL\) received by PID (\d+)")
                    .captures(text)
                    .and_then(|caps| caps.get(1).or(caps.get(2))?.as_str().parse().ok())
            });
            details.exit_code = if script.is_some() || text.contains("137") {
                Some(137)
            } else if text.contains("-9") || text.contains("SIGKILL") || text.contains("Killed") {
                Some(-9)
            } else {
                None
            };
        }
        HostKind::MemoryError => {
            // numpy: `Unable to allocate 3.12 GiB for an array with shape (…) and data type …`.
            // numpy 1.17–1.19 prints three significant digits with a bare point: `201. GiB`.
            details.host_required_bytes = size_of(
                regex!(concat!(r"Unabletoallocate", size!(), r"for")),
                squeezed,
            )
            .or_else(|| {
                let caps = regex!(r"Unabletoallocate(\d+)\.([KMGT]iB)for").captures(squeezed)?;
                super::parse_size(&format!(
                    "{}{}",
                    caps.get(1)?.as_str(),
                    caps.get(2)?.as_str()
                ))
            })
            // Apache Arrow's memory pools (`cpp/src/arrow/memory_pool.cc`: `malloc of size N
            // failed`, `realloc of size N failed`), raised in Python as `ArrowMemoryError`.
            .or_else(|| {
                regex!(r"(?:malloc|realloc)ofsize(\d+)failed")
                    .captures(squeezed)
                    .and_then(|caps| caps.get(1))
                    .and_then(|m| m.as_str().parse().ok())
                    .map(Bytes)
            });
        }
        HostKind::RustAlloc => {
            details.host_required_bytes = regex!(r"memoryallocationof(\d+)bytesfailed")
                .captures(squeezed)
                .and_then(|caps| caps.get(1))
                .and_then(|m| m.as_str().parse().ok())
                .map(Bytes);
            // The handler then aborts the process: SIGABRT, which a shell reports as 134.
            details.exit_code = Some(134);
        }
        // Ray's memory monitor (raylet `node_manager.cc` `CreateOomKillMessageDetails`):
        // `Memory on the node (IP: …, ID: …) where the task (actor ID: …, name=…, pid=4100606,
        // memory used=56.57GB) was running was 246.41GB / 251.54GB (0.979583), which exceeds the
        // memory usage threshold of 0.95.` Its GB are 1024^3 bytes.
        HostKind::RayMemoryMonitor => {
            if let Some(caps) = regex!(concat!(
                r"pid=(\d+),memoryused=",
                size!(),
                r"\)wasrunningwas",
                size!(),
                "/",
                size!()
            ))
            .captures(squeezed)
            {
                let size = |group: usize| size_in(&caps, group);
                details.killed_pid = caps.get(1).and_then(|m| m.as_str().parse().ok());
                details.killed_rss_bytes = size(2);
                details.host_usage_bytes = size(3);
                details.host_limit_bytes = size(4);
            } else if let Some(caps) = regex!(concat!(
                r"Memoryonthenode\([^)]*\)(?:wherethetask\([^)]*\)wasrunning)?was",
                size!(),
                "/",
                size!()
            ))
            .captures(squeezed)
            {
                // Ray 2.x's shorter report, without the task (`1 worker(s) were killed due to
                // the node running low on memory. Memory on the node (IP: 10.83.10.20, ID: …)
                // was 957.55GB / 1006.84GB (0.951040)`, the docs' "Out-Of-Memory Prevention"),
                // and the long one without the task's pid and memory (an older Ray, or the
                // node's ids elided by whoever quoted it: `Memory on the node (…) was`).
                let size = |group: usize| size_in(&caps, group);
                details.host_usage_bytes = size(1);
                details.host_limit_bytes = size(2);
            }
            // The killed worker's row of the top memory users: its command names its task.
            // (The message's lines are joined by spaces: the row is the pid, its memory and
            // its command, in a row.)
            if let Some(pid) = details.killed_pid.map(|pid| pid.to_string()) {
                let words: Vec<&str> = text.split_whitespace().collect();
                details.killed_process = words.windows(3).find_map(|row| {
                    (row[0] == pid && row[1].parse::<f64>().is_ok()).then(|| row[2].to_string())
                });
            }
        }
        HostKind::BadAlloc => {}
    }
    // The kill's exit status told on the same statement (`OOMKilled (exit 137)`, `Exited
    // (137)`, `exit code: 137`): 128 + SIGKILL.
    if parsed.details.exit_code.is_none()
        && regex!(r"(?i)(?:exit(?:s|ed)?(?: with)?(?: error)?(?: code| status)?|error code)\s*[:=]?\s*\(?137(?:$|[^0-9])")
            .is_match(text)
    {
        parsed.details.exit_code = Some(137);
    }
    parsed
}

/// The lines of Ray's memory monitor's report under its first (raylet `node_manager.cc`
/// `CreateOomKillMessageDetails`, `MemoryMonitor::TopNMemoryDebugString`): the node's figures,
/// the worker killed, `Top 10 memory users:` and its table (`PID  MEM(GB)  COMMAND`, then one
/// `4100606 56.57 ray::WorkerDict.actor_rollout_generate_sequences` a process).
pub(super) fn ray_continuation(text: &str) -> Continuation {
    let trimmed = text.trim_start();
    let mut words = trimmed.split_whitespace();
    let row = words
        .next()
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        && words.next().is_some_and(|mem| mem.parse::<f64>().is_ok())
        && words.next().is_some();
    let report = [
        "Memory on the node",
        "Ray killed this worker",
        "Top 10 memory users",
        "To see more information about memory usage",
    ]
    .iter()
    .any(|phrase| text.contains(phrase));
    // The node's figures wrapped onto a line of their own (`113.76GB / 119.70GB (0.950345)`,
    // `121.63GB (0.907749), which exceeds the memory usage threshold of 0.900000.`), and the
    // sentence's rest after a wrap inside it.
    let figures = regex!(r"^\d+(?:\.\d+)?GB\s*(?:/|\()").is_match(trimmed)
        || [
            "running low on memory",
            "memory usage threshold",
            "was running",
        ]
        .iter()
        .any(|phrase| text.contains(phrase));
    if report || row || figures || (trimmed.starts_with("PID") && trimmed.contains("COMMAND")) {
        Continuation::Append
    } else {
        Continuation::Close
    }
}

/// A count of MiB as the user-space killers print it (earlyoom's `VmRSS %lld MiB`, jetsam's
/// `%d MB`, pages times the page size over 1024 * 1024), in bytes.
fn mebibytes(digits: &str) -> Option<Bytes> {
    digits.parse::<u64>().ok()?.checked_mul(1 << 20).map(Bytes)
}

/// Kilobytes as the kernel prints them (`%lukB`, units of 1024 bytes).
fn kilobytes(caps: &regex::Captures<'_>, group: usize) -> Option<u64> {
    caps.get(group)?
        .as_str()
        .parse::<u64>()
        .ok()?
        .checked_mul(1024)
}

/// The figures of the kernel's OOM-killer lines: the killed process and its RSS
/// (`__oom_kill_process`: `Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB,
/// file-rss:%lukB, shmem-rss:%lukB`), the cgroup's usage and limit
/// (`mem_cgroup_print_oom_meminfo`: `memory: usage %llukB, limit %llukB, failcnt %lu`), the
/// constraint and cgroup (`dump_oom_summary`: `oom-kill:constraint=%s,…,task_memcg=%s,…`).
fn oom_killer_figures(text: &str, details: &mut crate::model::failure::EngineFigures) {
    if let Some(caps) = regex!(r"Killed process (\d+) \(([^)]*)\)").captures(text) {
        details.killed_pid = caps.get(1).and_then(|m| m.as_str().parse().ok());
        details.killed_process = caps.get(2).map(|m| m.as_str().to_string());
    } else if let Some(caps) =
        regex!(r#"sending SIG(?:TERM|KILL) to process (\d+) uid \d+ "([^"]*)""#).captures(text)
    {
        // earlyoom's kill, with the process's resident memory in MiB (`VmRSS %lld MiB`).
        details.killed_pid = caps.get(1).and_then(|m| m.as_str().parse().ok());
        details.killed_process = caps.get(2).map(|m| m.as_str().to_string());
        details.killed_rss_bytes = regex!(r"VmRSS (\d+) MiB")
            .captures(text)
            .and_then(|caps| mebibytes(caps.get(1)?.as_str()));
    } else if let Some(caps) = regex!(
        r"memorystatus: killing[a-z_ ]*? (\S+) \[(\d+)\] (\d+) ?MB|low swap: killing[a-z ]*? pid (\d+) \(([^)]*)\) and size (\d+) ?MB"
    )
    .captures(text)
    {
        // macOS's jetsam kill: the process, its id and its size in MB (XNU prints the pages
        // times the page size over 1024 * 1024: MiB).
        details.killed_process = caps.get(1).or(caps.get(5)).map(|m| m.as_str().to_string());
        details.killed_pid = caps.get(2).or(caps.get(4)).and_then(|m| m.as_str().parse().ok());
        details.killed_rss_bytes = caps.get(3).or(caps.get(6)).and_then(|m| mebibytes(m.as_str()));
    } else if let Some(caps) = regex!(r",task=([^,\s]+),pid=(\d+)").captures(text) {
        details.killed_process = caps.get(1).map(|m| m.as_str().to_string());
        details.killed_pid = caps.get(2).and_then(|m| m.as_str().parse().ok());
    }
    if let Some(caps) =
        regex!(r"anon-rss:\s*(\d+)kB,\s*file-rss:\s*(\d+)kB(?:,\s*shmem-rss:\s*(\d+)kB)?")
            .captures(text)
    {
        let anon = kilobytes(&caps, 1);
        details.killed_anon_rss_bytes = anon.map(Bytes);
        let parts = [anon, kilobytes(&caps, 2), kilobytes(&caps, 3).or(Some(0))];
        details.killed_rss_bytes = parts
            .iter()
            .try_fold(0u64, |sum, part| sum.checked_add((*part)?))
            .map(Bytes);
    }
    if let Some(caps) = regex!(r"memory: usage (\d+)kB, limit (\d+)kB").captures(text) {
        details.host_usage_bytes = kilobytes(&caps, 1).map(Bytes);
        // No limit is printed as PAGE_COUNTER_MAX pages (9007199254740988kB on 4 KiB pages).
        details.host_limit_bytes = kilobytes(&caps, 2)
            .filter(|bytes| *bytes < 1 << 60)
            .map(Bytes);
    }
    if let Some(caps) = regex!(r"constraint=(CONSTRAINT_[A-Z_]+)").captures(text) {
        details.oom_constraint = caps.get(1).map(|m| m.as_str().to_string());
    } else if text.contains("Memory cgroup out of memory") {
        details.oom_constraint = Some("CONSTRAINT_MEMCG".to_string());
    }
    if let Some(caps) = regex!(r"task_memcg=([^,\s]+)").captures(text) {
        details.memory_cgroup = caps.get(1).map(|m| m.as_str().to_string());
    }
}

/// The size a regex group captured, parsed (`None` where the group did not match).
fn size_in(caps: &regex::Captures<'_>, group: usize) -> Option<Bytes> {
    caps.get(group).and_then(|m| super::parse_size(m.as_str()))
}
