//! PyTorch allocator messages: the caching allocator text of every version (CUDA, HIP, XPU, and
//! Ascend NPUs through `torch_npu`), the cudaMallocAsync block and the MPS backend.
//!
//! Source: `pytorch/pytorch:c10/cuda/CUDACachingAllocator.cpp` (`DeviceCachingAllocator::malloc`,
//! `reportProcessMemoryInfo`), `c10/cuda/CUDAMallocAsyncAllocator.cpp`,
//! `c10/xpu/XPUCachingAllocator.cpp`, `Ascend/pytorch:torch_npu/csrc/core/npu/NPUCachingAllocator.cpp`
//! (`NPU out of memory. Tried to allocate X (NPU n; T total capacity; A already allocated; C
//! current active; F free; R reserved in total by PyTorch)`, PyTorch 2.0's layout with the active
//! bytes added); wording by version in `c10/cuda/CUDACachingAllocator.cpp` of each version.
//! Patterns run on squeezed text (no whitespace), so `20.00 MiB` reads `20.00MiB`.

use super::{back_to, is_not_available, size_of, Accelerator, Continuation, Family, Parsed};
use crate::model::failure::{EngineName, OomFigures, OomKind, OtherProcess};
use crate::model::gpu::CudaOrdinal;

/// `CUDA out of memory.` / `HIP out of memory.` / `XPU out of memory.`, the cudaMallocAsync
/// `would exceed allowed memory`, `MPS backend out of memory`, MPS `Invalid buffer size: …`.
pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    if let Some(position) = expandable_map_start(text) {
        return Some((Family::OtherGpu, position));
    }
    // Some pastes print the block's first line as `would exceed memory. (out of memory)` (a
    // ComfyUI custom node's report of `Allocation on device 0 would exceed allowed memory`).
    if let Some(position) = super::find(text, "would exceed allowed memory").or_else(|| {
        super::find(text, "would exceed memory")
            .filter(|&at| text[..at].contains("Allocation on device"))
    }) {
        let begin = back_to(text, position, "Allocation on device");
        return Some((Family::MallocAsync, begin));
    }
    // The same message cut right after "Allocation on device ": `c10::DeviceIndex` is streamed
    // as a raw byte, and a device 0 is a NUL that ends the string where ComfyUI and consoles
    // print it (`torch.OutOfMemoryError: Allocation on device `). An issue's title quotes it so,
    // with a bracketed or dashed note after (`KSampler Allocation on device (ERROR Message)`).
    // A reporter names it so in a sentence, marked or capitalised as the error's name
    // (`getting **CLIPTextEncode Allocation on device** after update`, `it will then throw an
    // Allocation on Device exception`).
    if let Some(position) = super::find(text, "Allocation on device")
        .or_else(|| super::find(text, "Allocation on Device"))
    {
        let rest = &text[position + "Allocation on device".len()..];
        let rest =
            rest.trim_matches(|c: char| c.is_whitespace() || c.is_control() || c.is_ascii_digit());
        // After PyTorch's OOM class the words are its message whatever follows (a report's
        // `torch.OutOfMemoryError: Allocation on device on 2x4090. Because …`).
        let after_class = text[..position].trim_end().ends_with("OutOfMemoryError:");
        let marked = rest.starts_with(['(', '[', '-', '–', '—', '|', '*', '`', '"', '\'', ',']);
        let named = rest
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .is_some_and(|word| {
                matches!(
                    word.to_ascii_lowercase().as_str(),
                    "error" | "errors" | "exception" | "exceptions" | "crash" | "crashes"
                )
            });
        if after_class || rest.is_empty() || marked || named {
            return Some((Family::MallocAsync, position));
        }
    }
    // A fragment of the 2.1+ message from "Tried to allocate" on, its start cut (quoted in
    // markdown as `**Tried to allocate 298.00 MiB. GPU**`): still the caching allocator.
    if let Some(position) = super::find(text, "Tried to allocate ") {
        let rest = &text[position + "Tried to allocate ".len()..];
        let before = text[..position].trim_end();
        // The ≤2.0 message cut the same way: `Tried to allocate 4.02 GiB (GPU 0; 12.00 GiB
        // total capacity; …)`.
        if regex!(r"^\d+(?:\.\d+)? ?(?:bytes|KiB|MiB|GiB|TiB)(?:\. GPU| ?\(GPU ?\d+;)")
            .is_match(rest)
            && !before.ends_with("out of memory.")
        {
            return Some((Family::TorchAllocator(Accelerator::Cuda), position));
        }
        // … or the request alone heading a line, as a title quotes it (`# Tried to allocate
        // 20.00 MiB`): the allocator's `%.2f` size in binary units, the capital `T` of its
        // sentence (the host allocator writes `you tried to allocate N bytes`).
        let heads_the_line = before
            .trim_start_matches(|c: char| c.is_whitespace() || "#>`'\"*".contains(c))
            .is_empty();
        if heads_the_line && regex!(r#"^\d+\.\d\d (?:KiB|MiB|GiB|TiB)[\s`'"*.)]*$"#).is_match(rest)
        {
            return Some((Family::TorchAllocator(Accelerator::Cuda), position));
        }
    }
    // A logger that hard-wraps with a hanging indent (rich's `ERROR: CUDA   batch_handler.py:574`
    // then `         out of memory. Tried to allocate …`): the continuation line is the
    // allocator's own sentence, whose `CUDA`/`HIP` went on the line before.
    let trimmed = text.trim_start();
    if trimmed.starts_with("out of memory. Tried to allocate") {
        return Some((
            Family::TorchAllocator(Accelerator::Cuda),
            text.len() - trimmed.len(),
        ));
    }
    // The message retold in other words (`CUDA has run out of memory. Attempting to allocate
    // 86.00 MiB (GPU 0; …; 7.31 GiB total reserved by PyTorch)`): the figures keep the
    // allocator's shape, so it is read as the allocator's message.
    if let Some(position) = super::find(text, "CUDA has run out of memory.")
        .or_else(|| super::find(text, "CUDA ran out of memory."))
    {
        if regex!(r"(?:Attempting|Tried) to allocate \d").is_match(&text[position..]) {
            return Some((Family::TorchAllocator(Accelerator::Cuda), position));
        }
    }
    // The message retyped in lower case (`cuda out of memory. tried to allocate 50MiB(GPU 0;
    // 1.96GiB totalcapacity; …`): still the allocator's figures ([`canonical_case`]).
    // Retyped with a comma too (`cuda out of memory, tried to allocate 50MiB(GPU 0; …`), or
    // with an article slipped in (`CUDA out of the memory. Tried to allocate 360.00 MiB`).
    let lower = text.to_ascii_lowercase();
    if let Some(found) =
        regex!(r"cuda out of (?:the )?memory[.,;:]? ?tried to allocate").find(&lower)
    {
        let position = found.start();
        if !text[position..].starts_with("CUDA out of memory. Tried") {
            return Some((Family::TorchAllocator(Accelerator::Cuda), position));
        }
    }
    // MPS: one request at least the device's largest buffer (`aten/src/ATen/mps/
    // MPSAllocator.mm`, `MPSHeapAllocatorImpl::alloc_buffer_block`: `TORCH_CHECK(size <
    // m_max_buffer_size, "Invalid buffer size: ", format_size(size))`, `format_size` printing
    // `bytes`, `KB`, `MB` or `GB` with two decimals; 2.x's shared pretty-printer, as
    // `c10::CachingDeviceAllocator::format_size`, `KiB`, `MiB`, `GiB`: `Invalid buffer size:
    // 437.81 GiB`). Only with its size: the words alone are other libraries' too.
    if let Some(found) =
        regex!(r"Invalid buffer size: ?\d+(?:\.\d+)? ?(?:bytes|[KMG]i?B)\b").find(text)
    {
        return Some((Family::Mps, found.start()));
    }
    // Every ` out of memory` of the line: a sentence may say it before quoting the message
    // (`it runs out of memory (CUDA out of memory. Tried to allocate 3.22 GiB)`).
    for (position, _) in text.match_indices(" out of memory") {
        let before = &text[..position];
        for (word, accelerator) in [
            ("CUDA", Accelerator::Cuda),
            ("HIP", Accelerator::Hip),
            ("XPU", Accelerator::Xpu),
            ("NPU", Accelerator::Npu),
        ] {
            // No word-boundary check: pastes glue the message to the word before it
            // (`whyCUDA out of memory.`, pytorch-1.x-title-glued-word-gpu1.txt).
            if before.ends_with(word) && text[position..].starts_with(" out of memory.") {
                return Some((Family::TorchAllocator(accelerator), position - word.len()));
            }
        }
        if before.ends_with("MPS backend") {
            return Some((Family::Mps, position - "MPS backend".len()));
        }
    }
    if let Some(found) = cut_class_line(text) {
        return Some(found);
    }
    head_cut_tail_start(text).map(|position| (Family::TorchAllocator(Accelerator::Cuda), position))
}

/// A traceback's exception line whose message the paste cut right after the class, or a few
/// letters into it (`torch.cuda.OutOfMemoryError: Allocatio`, where a search excerpt ended;
/// session 49): PyTorch raises `torch.OutOfMemoryError` (`torch.cuda.OutOfMemoryError` before
/// 2.4) from its device allocators only, so the line is the device's OOM without its figures.
/// Only when what is left of the message begins one of the allocators' own (`CUDA out of
/// memory.`, `Allocation on device`, `HIP out of memory.`), or nothing is left; not MPS's (its
/// family is its own) nor a message in other words.
fn cut_class_line(text: &str) -> Option<(Family, usize)> {
    let found =
        regex!(r"^\s*(torch\.(?:cuda\.)?OutOfMemoryError):[ \t]*(.{0,40}?)\s*$").captures(text)?;
    let rest = found.get(2).map_or("", |rest| rest.as_str());
    let position = found.get(1).map_or(0, |class| class.start());
    if "Allocation on device".starts_with(rest) && !rest.is_empty() {
        return Some((Family::MallocAsync, position));
    }
    for (message, accelerator) in [
        ("CUDA out of memory.", Accelerator::Cuda),
        ("HIP out of memory.", Accelerator::Hip),
    ] {
        if message.starts_with(rest) {
            return Some((Family::TorchAllocator(accelerator), position));
        }
    }
    None
}

/// PyTorch 2.1+'s message with its head cut off, from its second sentence on (a blog quoting
/// `error:GPU 0 has a total capacity of 23.64 GiB of which 1.61 GiB is free. Process 1624541
/// has …`, a console wrap after `Tried to allocate 20.00 MiB.`): the clause `GPU <n> has a total
/// capacity of <size> of which <size>` is printed by the caching allocator's OOM message only
/// (`c10/cuda/CUDACachingAllocator.cpp` `DeviceCachingAllocator::malloc`: `". GPU ", device, "
/// has a total capacity of ", format_size(device_total), " of which ", format_size(
/// device_free), " is free. "`; 2.1 spells it `capacty`). The position of `GPU`. Not when its
/// head is on the line before it (that head was read, or rejected as code or advice).
///
/// The same for the message of PyTorch ≤ 2.0 cut before its parentheses (`GPU 0; 31.75 GiB total
/// capacity; 29.72 GiB already allocated; 381.00 MiB free; …`, `THCCachingAllocator` /
/// `CUDACachingAllocator.cpp`: `"(GPU ", device, "; ", format_size(device_total), " total
/// capacity; ", format_size(allocated), " already allocated; "`), printed by it only.
fn head_cut_tail_start(text: &str) -> Option<usize> {
    let found = regex!(
        r"GPU ?(?:\d+ ?|[\x00-\x1f] ?)?has a total capac(?:i)?ty of \d+(?:[.,]\d+)* ?(?:bytes|[KMGTPE]i?B) of which \d|GPU \d+; \d+(?:[.,]\d+)* ?[KMGT]iB total capacity; \d+(?:[.,]\d+)* ?(?:bytes|[KMGT]iB) already allocated"
    )
    .find(text)?;
    let head = &text[..found.start()];
    // (The old message's parenthesis opens its figures: `(GPU 0; …` names the device.)
    let start = found.start() - usize::from(head.ends_with('('));
    (super::find(head, "Tried to allocate").is_none()
        && super::find(head, "out of memory").is_none())
    .then_some(start)
}

/// Whether the figures part of the message has been read completely.
pub(super) fn is_complete(family: Family, squeezed: &str) -> bool {
    match family {
        Family::MallocAsync => regex!(concat!(
            r"PyTorchlimit\(setbyuser-suppliedmemoryfraction\):",
            size!()
        ))
        .is_match(squeezed),
        Family::Mps => {
            (squeezed.contains("Triedtoallocate") && regex!(r"pool\.").is_match(squeezed))
                || squeezed.contains("Invalidbuffersize:")
        }
        _ => {
            squeezed.contains("isreservedbyPyTorchbutunallocated")
                || regex!(r"reservedintotalby(?i:pytorch)\)").is_match(squeezed)
                || squeezed.contains("totalreservedbyPyTorch)")
                || regex!(concat!(size!(), r"cached\)")).is_match(squeezed)
                || squeezed.contains("morethan1EBmemory")
                || (squeezed.contains("preemptivelyrejected")
                    && regex!(concat!("Requestedsize:", size!())).is_match(squeezed))
        }
    }
}

/// Lines of the cudaMallocAsync block (`c10/cuda` and the CUDA runtime's error strings, measured on 2.11).
pub(super) fn malloc_async_continuation(text: &str) -> Continuation {
    let trimmed = text.trim_start();
    // The head's second half on a line of its own (`Server execution error: Allocation on
    // device 0` / `would exceed allowed memory. (out of memory)`, as Krita's AI plugin
    // relays ComfyUI's error), then the figures.
    // (`(out of memory)` glued to the first label when the dialog's lines are joined.)
    const LABELS: [&str; 8] = [
        "would exceed allowed memory",
        "(out of memory)",
        "Currently allocated",
        "Requested",
        "Device limit",
        "Free (according to CUDA)",
        "PyTorch limit",
        ":",
    ];
    if LABELS.iter().any(|label| trimmed.starts_with(label)) {
        Continuation::Append
    } else {
        Continuation::Close
    }
}

pub(super) fn parse(family: Family, squeezed: &str) -> Parsed {
    match family {
        Family::MallocAsync => parse_malloc_async(squeezed),
        Family::Mps => parse_mps(squeezed),
        Family::TorchAllocator(accelerator) => {
            parse_caching_allocator(accelerator, &canonical_case(squeezed))
        }
        _ => Parsed::new(OomKind::OtherGpuOom, true),
    }
}

/// The first size of the pre-2.1 message's parentheses, `(GPU 0; 23.65 GiB total capacity; …`,
/// when the paste garbled or cut the words after it (`(GPU 0; 23.65 GiBry Management …`): that
/// place holds the card's total capacity in every wording of that message. Not a size followed
/// by another figure's words.
fn cut_capacity(s: &str) -> Option<crate::model::Bytes> {
    let head = regex!(concat!(r"\(GPU\d+;", size!()));
    let after = &s[head.find(s)?.end()..];
    let other = [
        "alreadyallocated",
        "free",
        "reserved",
        "cached",
        "allocated",
        "inuse",
    ]
    .iter()
    .any(|words| after.starts_with(words));
    if other {
        return None;
    }
    size_of(head, s)
}

/// The allocator's words and units in their printed case, for a message retyped in lower
/// case (`triedtoallocate50mib(gpu0;1.96gibtotalcapacity;…`); a message already in that case
/// is returned as it is.
fn canonical_case(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains("Triedtoallocate") || !s.to_ascii_lowercase().contains("triedtoallocate") {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = s.to_string();
    for (pattern, printed) in [
        (regex!(r"(?i)triedtoallocate"), "Triedtoallocate"),
        (regex!(r"(?i)\(gpu(\d+);"), "(GPU$1;"),
        (regex!(r"(?i)totalcapacity"), "totalcapacity"),
        (regex!(r"(?i)alreadyallocated"), "alreadyallocated"),
        (
            regex!(r"(?i)reservedintotalbypytorch"),
            "reservedintotalbyPyTorch",
        ),
        (regex!(r"(?i)(\d)gib"), "${1}GiB"),
        (regex!(r"(?i)(\d)mib"), "${1}MiB"),
        (regex!(r"(?i)(\d)kib"), "${1}KiB"),
        (regex!(r"(?i)(\d)bytes"), "${1}bytes"),
    ] {
        out = pattern.replace_all(&out, printed).into_owned();
    }
    std::borrow::Cow::Owned(out)
}

fn parse_caching_allocator(accelerator: Accelerator, s: &str) -> Parsed {
    // ≤2.0: "(GPU 0; 15.90 GiB total capacity; …)"; torch_npu keeps that layout: "(NPU 2; …)".
    // A screenshot's OCR reads `GPU` as `GPV` (U and V alike in a sans-serif font): inside
    // this message, whose parenthesis opens with the device's name, it is still the GPU.
    let old_wording = s.contains("(GPU") || s.contains("(NPU") || s.contains("(GPV");
    let new_wording = regex!(r"hasatotalcapac").is_match(s); // 2.1+ ("capacty" in 2.1)
    let cached = size_of(regex!(concat!(size!(), r"cached\)")), s);
    // `by Pytorch` in some reporters' copies (SimSwapHD #24): the phrase in any case.
    let reserved_in_total = size_of(regex!(concat!(size!(), "reservedintotalby(?i:pytorch)")), s)
        .or_else(|| size_of(regex!(concat!(size!(), "totalreservedbyPyTorch")), s))
        // The message cut right after the figure's words (`…; 1.54 GiB reserved in total`, a
        // pasted line wrapped or trimmed before `by PyTorch)`).
        // (Or inside `by PyTorch`: `17.55 GiB reserved in total by PyTo`, FastChat#417.)
        .or_else(|| size_of(regex!(concat!(size!(), "reservedintotal(?:by(?i:p(?:y(?:t(?:o(?:r(?:c(?:h)?)?)?)?)?)?)?)?$")), s))
        // … or inside its first word, the figure after `free;` printed in full (`24.44 MiB
        // free; 6.79 GiB reser` where a paste or an index ends, session 48).
        .or_else(|| {
            size_of(
                regex!(concat!(
                    "free;",
                    size!(),
                    "r(?:e(?:s(?:e(?:r(?:v(?:e(?:d(?:i(?:n(?:t(?:o(?:t(?:a)?)?)?)?)?)?)?)?)?)?)?)?)?$"
                )),
                s,
            )
        });

    let kind = match accelerator {
        // Every device allocator copies CUDA's refusal of an absurd size (`NPU out of memory.
        // Tried to allocate more than 1EB memory`).
        _ if s.contains("morethan1EBmemory") => OomKind::PytorchAbsurdSize,
        Accelerator::Hip => OomKind::HipOutOfMemory,
        Accelerator::Xpu => OomKind::XpuOutOfMemory,
        Accelerator::Npu => OomKind::NpuOutOfMemory,
        Accelerator::Cuda if s.contains("preemptivelyrejected") => OomKind::PytorchFractionRejected,
        Accelerator::Cuda if cached.is_some() => OomKind::PytorchCached,
        Accelerator::Cuda if old_wording || reserved_in_total.is_some() => {
            OomKind::PytorchReservedInTotal
        }
        Accelerator::Cuda if new_wording => OomKind::PytorchTotalCapacity,
        Accelerator::Cuda => OomKind::OtherGpuOom,
    };
    let mut parsed = Parsed::new(kind, true);
    let figures = &mut parsed.figures;

    figures.gpu_index = cuda_ordinal(s).or_else(|| elided_ordinal(s));
    // OCR may drop a letter of the short word `to` (`Tried t allocate 388.00 MiB`): the
    // sentence is still the request's, the only `Tried … allocate` of the message.
    figures.tried_to_allocate_bytes = size_of(regex!(concat!("Triedt?o?allocate", size!())), s)
        .or_else(|| size_of(regex!(concat!("Requestedsize:", size!())), s))
        .or_else(|| size_of(regex!(concat!("Attemptingtoallocate", size!())), s));
    // `Tried to allocate more than 1EB memory.`: the allocators' `allocate` refuses any size
    // `>= one_exa_bytes` (2^60) before it tries (`c10/cuda/CUDACachingAllocator.cpp`,
    // `CudaCachingAllocator::allocate`; `CUDAMallocAsyncAllocator.cpp`; torch_npu copies it): the
    // request is at least 1 EiB, its exact size unprinted.
    if kind == OomKind::PytorchAbsurdSize && figures.tried_to_allocate_bytes.is_none() {
        figures.tried_to_allocate_bytes = Some(crate::model::Bytes(1 << 60));
        figures
            .lower_bound_fields
            .push("tried_to_allocate_bytes".into());
    }
    figures.total_capacity_bytes = size_of(regex!(concat!(size!(), "totalcapacity")), s)
        .or_else(|| size_of(regex!(concat!("totalcapac(?:i)?tyof", size!())), s))
        .or_else(|| cut_capacity(s))
        // Retold by a reporter (`Tried to allocate 128.00 MiB. GPU has 94.97 GiB total of
        // which ~52 MiB is free ... 133 MiB reserved but unallocated`): the device's only total.
        .or_else(|| {
            size_of(
                regex!(concat!(r"GPU\d*has", size!(), "total(?:of|;|,|$)")),
                s,
            )
        });
    // PyTorch 2.1+ (`c10/cuda/CUDACachingAllocator.cpp`, `CUDAAllocator::malloc`'s OOM
    // message): `GPU 0 has a total capacity of X of which Y is free.` A paste or a log
    // shipper may cut the message inside `is free` (`… of which 22.25 GiB i`): the size after
    // `of which` is still the free memory, the only figure that clause prints.
    figures.free_bytes = size_of(regex!(concat!(size!(), "free;")), s)
        .or_else(|| size_of(regex!(concat!("ofwhich", size!(), "isfree")), s))
        .or_else(|| {
            size_of(
                regex!(concat!(
                    "ofwhich",
                    size!(),
                    r"(?:i(?:s(?:f(?:r(?:e)?)?)?)?)?$"
                )),
                s,
            )
        })
        // Retold (`GPU has 79.19 GiB total, 6.68 GiB free, 72.48 GiB in use by this
        // process.`): a size followed by `free` and the clause's end.
        .or_else(|| size_of(regex!(concat!(size!(), r"free(?:,|\.|$)")), s))
        // Elided (`GPU 1 ... 50.40 GiB is free.`, [`elided_ordinal`]): the clause's free size.
        .or_else(|| size_of(regex!(concat!(r"(?:\.\.\.|…)", size!(), "isfree")), s));
    figures.allowed_bytes = size_of(regex!(concat!(size!(), "allowed;")), s);

    for caps in regex!(concat!(r"Process(\d+)has", size!(), "memoryinuse")).captures_iter(s) {
        let pid = caps.get(1).and_then(|m| m.as_str().parse().ok());
        let bytes = caps.get(2).and_then(|m| super::parse_size(m.as_str()));
        if let (Some(pid), Some(bytes)) = (pid, bytes) {
            figures.other_processes.push(OtherProcess {
                pid,
                in_use_bytes: (!is_not_available(bytes)).then_some(bytes),
            });
        }
    }
    // NVML's N/A (`17179869184.00 GiB`) is kept as the sentinel: the clause was printed, so
    // PyTorch recognised this process, but the figure is not one.
    figures.process_in_use_bytes =
        // A message cut right after the figure or inside `memory in use` (`… this process
        // has 39.23 GiB` where a paste ends): the size printed in full is still the figure.
        size_of(
            regex!(concat!(
                "thisprocesshas",
                size!(),
                r"(?:memoryinuse|(?:m(?:e(?:m(?:o(?:r(?:y(?:i(?:n(?:u(?:s)?)?)?)?)?)?)?)?)?)?$)"
            )),
            s,
        )
        // … and retold as `72.48 GiB in use by this process`.
        .or_else(|| size_of(regex!(concat!(size!(), "inusebythisprocess")), s))
        .map(|bytes| {
            if is_not_available(bytes) {
                OomFigures::NVML_NOT_AVAILABLE
            } else {
                bytes
            }
        });

    // ≤2.0 wording; a message cut inside the phrase (`20.68 GiB already allocate`) still names
    // the figure: the phrase is the only one of its shape.
    let already = size_of(regex!(concat!(size!(), "alreadyalloc")), s)
        // … or cut inside `already`, the figure after `total capacity;` printed in full
        // (`15.78 GiB total capacity; 12.91 GiB a`, session 48).
        .or_else(|| {
            size_of(
                regex!(concat!(
                    "totalcapacity;",
                    size!(),
                    "a(?:l(?:r(?:e(?:a(?:d(?:y(?:a(?:l(?:l(?:o)?)?)?)?)?)?)?)?)?)?$"
                )),
                s,
            )
        });
    if let Some(already) = already {
        figures.allocated_by_pytorch_bytes = Some(already);
        if let Some(reserved) = reserved_in_total {
            figures.reserved_total_bytes = Some(reserved);
            figures.reserved_unallocated_bytes = Some(reserved.saturating_sub(already));
            figures
                .derived_fields
                .push("reserved_unallocated_bytes".into());
        } else if let Some(cached) = cached {
            // ≤1.3 "cached" = held by the allocator but not used by the program (PyTorch ≤1.3's wording).
            figures.reserved_unallocated_bytes = Some(cached);
            figures.reserved_total_bytes = Some(already.saturating_add(cached));
            figures.derived_fields.push("reserved_total_bytes".into());
        }
    } else {
        // 2.1+ wording: "Of the allocated memory X is allocated by PyTorch, [with P allocated in
        // private pools (e.g., CUDA Graphs), ]and U is reserved by PyTorch but unallocated."
        // X includes P (2.4+), U excludes it, so reserved = X + U.
        // A message cut inside a phrase (`… 37.21 GiB is allo`, `and 2.51 GiB is reserv`)
        // still names the figure: each phrase is the only one of its shape.
        figures.allocated_by_pytorch_bytes = size_of(
            regex!(concat!("Oftheallocatedmemory", size!(), "isallo")),
            s,
        );
        figures.private_pools_bytes = size_of(
            regex!(concat!("with", size!(), "allocatedinprivatepools")),
            s,
        );
        figures.reserved_unallocated_bytes = size_of(
            regex!(concat!(size!(), "isreservedbyPyTorchbutunallocated")),
            s,
        )
        .or_else(|| size_of(regex!(concat!(",and", size!(), "isres(?:erv|er?$|$)")), s))
        // … and its `133 MiB reserved but unallocated`, the figure's own words without `is` and
        // `by PyTorch`.
        .or_else(|| size_of(regex!(concat!(size!(), "reservedbutunallocated")), s));
        if let (Some(allocated), Some(unallocated)) = (
            figures.allocated_by_pytorch_bytes,
            figures.reserved_unallocated_bytes,
        ) {
            figures.reserved_total_bytes = Some(allocated.saturating_add(unallocated));
            figures.derived_fields.push("reserved_total_bytes".into());
        }
    }
    parsed
}

/// The 2.1+ message with its middle elided by whoever quoted it (`Tried to allocate 73.65 GiB.
/// GPU 1 ... 50.40 GiB is free.`): the sentence after the request always opens with the device
/// (`"Tried to allocate " << format_size(alloc_size) << ". GPU " << device << " has a total
/// capacity of …"`, `c10/cuda/CUDACachingAllocator.cpp`).
fn elided_ordinal(s: &str) -> Option<CudaOrdinal> {
    regex!(concat!(
        r"Triedtoallocate",
        size!(),
        r"\.GPU(\d{1,3})(?:\.\.\.|…)"
    ))
    .captures(s)
    .and_then(|caps| caps.get(2)?.as_str().parse().ok())
}

/// `(GPU 0; …` (≤2.0), `GPU 0 has a total capacity` (2.1, 2.4+), or the raw byte of 2.2/2.3
/// (`GPU \x00 has`: `c10::DeviceIndex` streamed without a cast, PyTorch 2.x's message).
fn cuda_ordinal(s: &str) -> Option<CudaOrdinal> {
    if let Some(caps) = regex!(r"\((?:GPU|GPV|NPU)(\d+);").captures(s) {
        return caps.get(1).and_then(|m| m.as_str().parse().ok());
    }
    let caps = regex!(r"GPU(\d+|[\x00-\x1f])?hasatotalcapac").captures(s)?;
    let index = caps.get(1)?.as_str();
    match index.as_bytes() {
        [byte] if *byte < 0x20 => Some(CudaOrdinal(u32::from(*byte))),
        _ => index.parse().ok(),
    }
}

fn parse_malloc_async(s: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::CudaMallocAsync, true);
    let figures = &mut parsed.figures;
    figures.gpu_index = regex!(r"Allocationondevice(\d+)")
        .captures(s)
        .and_then(|caps| caps.get(1))
        .and_then(|m| m.as_str().parse().ok());
    // The labels' colons may be dropped by an app that relays the message (`Requested 666.02
    // MiB`, `Device limit 13.81 GiB`).
    figures.allocated_by_pytorch_bytes =
        size_of(regex!(concat!("Currentlyallocated:?", size!())), s);
    figures.tried_to_allocate_bytes = size_of(regex!(concat!("Requested:?", size!())), s);
    figures.total_capacity_bytes = size_of(regex!(concat!("Devicelimit:?", size!())), s);
    figures.free_bytes = size_of(regex!(concat!(r"Free\(accordingtoCUDA\):?", size!())), s);
    figures.allowed_bytes = size_of(
        regex!(concat!(
            r"PyTorchlimit\(setbyuser-suppliedmemoryfraction\):",
            size!()
        )),
        s,
    )
    .filter(|bytes| !is_not_available(*bytes));
    // The message cut at its device byte with nothing after (`torch.OutOfMemoryError:
    // Allocation on device `, see `start`): how ComfyUI shows it, which runs PyTorch on the
    // cudaMallocAsync back end by default (`comfy/model_management.py`; its error report's
    // `**Exception Message:** Allocation on device `). A weak hint: a named app decides first.
    if !s.contains("wouldexceed") && !regex!(r"Allocationondevice\d").is_match(s) {
        parsed.engine_hint = Some(EngineName::Comfyui);
    }
    parsed
}

/// `MPS backend out of memory (MPS allocated: 1.2 GB, other allocations: 3.4 MB, max allowed:
/// 18.13 GB). Tried to allocate 256 MB on private pool.` (`aten/src/ATen/mps/MPSAllocator.mm`).
fn parse_mps(s: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::MpsOutOfMemory, true);
    let figures = &mut parsed.figures;
    figures.allocated_by_pytorch_bytes = size_of(regex!(concat!("MPSallocated:", size!())), s);
    parsed.details.mps_other_allocations_bytes =
        size_of(regex!(concat!("otherallocations:", size!())), s);
    figures.allowed_bytes = size_of(regex!(concat!("maxallowed:", size!())), s);
    // OCR may drop a letter of the short word `to` (`Tried t allocate 388.00 MiB`): the
    // sentence is still the request's, the only `Tried … allocate` of the message.
    figures.tried_to_allocate_bytes = size_of(regex!(concat!("Triedtoallocate", size!())), s)
        // `Invalid buffer size: 3.57 GB`: the one request larger than any buffer the device
        // gives (alloc_buffer_block's check, before any pool is searched).
        .or_else(|| size_of(regex!(concat!("Invalidbuffersize:", size!())), s));
    parsed
}

/// The caching allocator's warning when an expandable segment cannot grow (`[W… CUDACachingAllocator.cpp:508]
/// expandable_segments: memory mapping failed with OOM on device 0 while trying to map 20971520
/// bytes (free: 15663104, total: 33671348224)`): `ExpandableSegment::map` got
/// `CUDA_ERROR_OUT_OF_MEMORY` from `cuMemCreate` and returned an empty range, so the allocator
/// frees cached blocks and retries (the warning alone is no failure; its out-of-memory error,
/// when the retry fails too, follows). Where the message starts: at `expandable_segments:` when
/// the line has it, else at `memory mapping failed` (a wrap or a release without the prefix).
///
/// Its sibling for a block (PyTorch 2.8 and later, `[W906 … CUDACachingAllocator.cpp:3934]
/// memory allocation failed with OOM on device 0 while trying to allocate 1000341504 bytes
/// (free: 916848640, total: 25243287552).`), printed before the allocator's message: the same
/// figures, exact.
pub(super) fn expandable_map_start(text: &str) -> Option<usize> {
    if let Some(position) = super::find(text, "memory mapping failed with OOM on device") {
        return Some(back_to(text, position, "expandable_segments:"));
    }
    super::find(text, "memory allocation failed with OOM on device")
}

/// Whether a squeezed message is that warning ([`expandable_map_start`]).
pub(super) fn is_expandable_map(squeezed: &str) -> bool {
    squeezed.contains("memorymappingfailedwithOOMondevice")
        || squeezed.contains("memoryallocationfailedwithOOMondevice")
}

/// The warning's figures, all in bytes: the device, the segment it tried to map, and what the
/// driver had free of the device's total.
pub(super) fn expandable_map_figures(squeezed: &str, figures: &mut OomFigures) {
    let number = |regex: &regex::Regex| {
        regex
            .captures(squeezed)
            .and_then(|caps| caps.get(1)?.as_str().parse::<u64>().ok())
    };
    figures.gpu_index = figures.gpu_index.or_else(|| {
        regex!(r"memory(?:mapping|allocation)failedwithOOMondevice(\d{1,3})")
            .captures(squeezed)
            .and_then(|caps| caps.get(1)?.as_str().parse().ok())
    });
    figures.tried_to_allocate_bytes = number(regex!(r"whiletryingto(?:map|allocate)(\d+)bytes"))
        .map(crate::model::Bytes)
        .or(figures.tried_to_allocate_bytes);
    figures.free_bytes = number(regex!(r"\(free:(\d+)(?:bytes)?[,)]"))
        .map(crate::model::Bytes)
        .or(figures.free_bytes);
    figures.total_capacity_bytes = number(regex!(r"\(free:\d+(?:bytes)?,total:(\d+)"))
        .map(crate::model::Bytes)
        .or(figures.total_capacity_bytes);
}

/// A line that continues the warning a console or a logger wrapped: its next words
/// (`memory mapping failed …`, `while trying to map …`, `(free: …, total: …)`).
pub(super) fn expandable_map_continuation(text: &str) -> Continuation {
    let trimmed = text.trim_start();
    let next = [
        "memory mapping failed",
        "memory allocation failed",
        "while trying to map",
        "while trying to allocate",
        "(free:",
        "total:",
    ];
    if next.iter().any(|words| trimmed.starts_with(words)) {
        Continuation::Append
    } else {
        Continuation::Close
    }
}
