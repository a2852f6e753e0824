//! The streaming detector: one open message per stream, the lines that continue it, and the
//! messages it holds back (a figureless warm-up error, an exception class, a weak mention).

use super::assemble::{
    build, engine_from_stream, engine_from_wording, exception_class, opening_quote, ParseMemo,
};
use super::normalize::{append_normalized, squeeze_into};
use super::start::{detect_start, is_class_only, quoted_raise_start};
use super::{
    cuda, frameworks, holders, host, integer_of, llama_cpp, look_alike, mention, pinned, pytorch,
    sglang, tgi, vllm, Accelerator, Continuation, Family, FrameworkKind, HostKind,
};
use crate::model::failure::{EngineName, OomFigures, OomKind, OomMessage};
use crate::model::Bytes;
use crate::parse::text::{clean_line, CleanLine};

/// How many lines an open message may grow to before it is closed anyway.
const MAX_MESSAGE_LINES: u32 = 16;
/// How many input lines (any stream) an open message may wait for its continuation.
const MAX_WAIT_LINES: u64 = 64;

/// A message being read.
#[derive(Debug)]
pub(super) struct Open {
    pub(super) family: Family,
    pub(super) start_line: u64,
    pub(super) end_line: u64,
    pub(super) stream: Option<String>,
    pub(super) exception: Option<String>,
    /// The quote that opened a repr (`OutOfMemoryError('…')`), cut at its closing twin.
    pub(super) quote: Option<char>,
    /// Wording outside the message on its first line that names the engine.
    pub(super) prefix_hint: Option<EngineName>,
    pub(super) text: String,
    pub(super) squeezed: String,
    pub(super) lines: u32,
    /// Blank lines skipped since the last appended one (console pastes, [`torch_continuation`]).
    pub(super) blank_lines: u32,
    /// The wording is quoted by the `raise` statement of a traceback ([`quoted_raise_start`]).
    pub(super) quoted: bool,
    /// An engine's log line quoted inside the reporter's sentence ([`look_alike::told_in_sentence`]).
    pub(super) told: bool,
    /// The message starts on a Markdown title (`# Llama fails to install Error allocating memory
    /// ErrorOutOfDeviceMemory`): the reporter's name for the failure, held as their quote when it
    /// prints no figure ([`OomDetector::close`]), so the message pasted below replaces it.
    pub(super) titled: bool,
}

/// Streaming detector: feed cleaned lines, get completed messages.
#[derive(Debug, Default)]
pub struct OomDetector {
    open: Vec<Open>,
    memo: ParseMemo,
    /// Messages are counted, not parsed (see [`OomDetector::count_only`]): host-memory ones,
    /// and with `count_only_gpu` GPU ones too.
    count_only: bool,
    count_only_gpu: bool,
    /// Messages counted and not returned since [`OomDetector::take_counted`].
    counted: u64,
    /// A message without figures that announces the real one (see [`Pending`]), held until
    /// that one arrives or its window ends.
    pending_warmup: Option<Pending>,
    /// A message other than a mention ([`mention::mention_start`]) was read: later mentions are
    /// prose about it, not failures of their own.
    seen_message: bool,
    /// The first size XLA's start-up preallocation asked for and could not get (`[0] Failed to
    /// allocate device memory of 104.85GiB (112583507968 bytes)`, logged while the pool backs
    /// off): a later XLA failure of this process ran in that smaller pool.
    xla_preallocation: Option<Bytes>,
    /// ggml's device pool retrying an allocation that failed: the line, the device and the
    /// size (see [`pool_retry`]).
    pool_retry: Option<(u64, u32, Bytes)>,
    /// The first line where the reporter says other programs held the GPU's memory
    /// ([`holders::other_holders_said`]).
    holders_said: Option<u64>,
    /// The first line where the reporter or a maintainer says the GPU has too little memory for
    /// the job ([`holders::capacity_said`]).
    capacity_said: Option<u64>,
    /// An OOM named with no word of whose memory ([`mention::is_weak`]), held while the
    /// lines after it show whether the work was on a GPU.
    weak: Option<Weak>,
    /// A weak mention whose lines after it showed neither GPU work nor the host's memory: the
    /// caller may still know the work was on a GPU from the lines before it (an engine's
    /// command or log above `But it OOM`), see [`OomDetector::take_unresolved_weak`].
    unresolved_weak: Option<OomMessage>,
    /// The last line showing a pinned host allocation ([`pinned::pinned_frame`]).
    pinned_frame: Option<u64>,
    /// The last line of the DataLoader's pin thread re-raising ([`pinned::pin_thread`]).
    pin_thread: Option<u64>,
    /// A bare Python `MemoryError` held a few lines: PaddlePaddle raises its allocator's
    /// failures (`RESOURCE_EXHAUSTED`) as `MemoryError` with its C++ stack as the message, so
    /// a GPU kernel's frame below it makes it the GPU's ([`paddle_gpu_frame`]).
    held_memory_error: Option<OomMessage>,
}

/// TensorFlow's `OOM when allocating tensor` cut before its shape (a title `…
/// ResourceExhaustedError: OOM when allocating tensor with shape`): the message names no
/// device yet (`OpKernelContext::allocate_tensor`: `OOM when allocating tensor with shape[…]
/// and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu`), which
/// the whole message below it may (see [`OomDetector::pair_warmup`]).
fn tf_cut_before_shape(message: &OomMessage) -> bool {
    message.kind == OomKind::TensorflowOomTensor
        && !regex!(r"shape\s*\[|device:|by allocator").is_match(&message.text)
}

/// How many lines after ggml's pool retry its failure's error may start.
const POOL_RETRY_LINES: u64 = 3;

/// ggml's legacy device pool (`ggml-cuda.cu` `ggml_cuda_pool_leg::alloc`): when `cudaMalloc`
/// fails it logs `GGML_CUDA_NAME " pool[%d]: alloc of %.2f MiB failed, flushing %.2f MiB of
/// cached buffers and retrying"` (`CUDA`, `ROCm` or `MUSA`), frees its cache and tries once
/// more; a second failure is `CUDA_CHECK(err)`'s error. The device and the size it asked for
/// (the request rounded up by the pool, as printed).
fn pool_retry(text: &str) -> Option<(u32, Bytes)> {
    let caps = regex!(
        r"(?:CUDA|ROCm|MUSA) ?pool\[(\d{1,3})\]: alloc of (\d+(?:\.\d+)?) MiB failed, flushing"
    )
    .captures(text)?;
    let device = caps.get(1)?.as_str().parse().ok()?;
    let size = super::parse_size(&format!("{} MiB", caps.get(2)?.as_str()))?;
    Some((device, size))
}

/// How many lines after a bare `MemoryError` Paddle's C++ stack may show a GPU kernel.
const PADDLE_STACK_LINES: u64 = 24;

/// A frame of PaddlePaddle's C++ stack that runs on a GPU (`void phi::HardSwishKernel<float,
/// phi::GPUContext>(phi::GPUContext const&, …)`, `paddle::platform::CUDAPlace`, its CUDA
/// allocator).
fn paddle_gpu_frame(text: &str) -> bool {
    (text.contains("phi::") || text.contains("paddle::"))
        && (text.contains("GPUContext")
            || text.contains("GPUPlace")
            || text.contains("CUDAPlace")
            || text.contains("CUDAAllocator"))
}

/// A `MemoryError` raised with nothing after its name (`MemoryError`, `MemoryError: `, VS Code's
/// `Exception has occurred: MemoryError`): its message, if any, is on the lines below.
fn bare_memory_error(message: &OomMessage) -> bool {
    message.kind == OomKind::HostMemory
        && message
            .text
            .trim_end()
            .trim_end_matches(':')
            .ends_with("MemoryError")
}

/// A weak mention waiting for the lines after it ([`OomDetector::weak`]).
#[derive(Debug)]
struct Weak {
    message: OomMessage,
    /// A line after it showed GPU work ([`mention::gpu_work_shown`]).
    gpu: bool,
    /// A line after it showed the host's memory running out ([`mention::host_memory_shown`]).
    host: bool,
}

/// How many lines after a weak mention are read for GPU work or host memory.
const WEAK_CONTEXT_LINES: u64 = 200;

/// A figureless message held back a few lines: vLLM's sampler/pooler warm-up error read before
/// the allocator's message it wraps (a paste that quotes `RuntimeError: CUDA out of memory
/// occurred when warming up sampler …` first), or only an exception's class
/// (`OutOfMemoryError   Traceback (most recent call last)` of IPython, a webui's `task:
/// OutOfMemoryError`, TensorFlow's `ResourceExhaustedError: 2 root error(s) found.`) whose
/// message comes at the end of the traceback.
#[derive(Debug)]
struct Pending {
    message: OomMessage,
    /// Lines after the held message's end within which the real message may start.
    window: u64,
    /// The real message replaces it (a class) or lends it its figures (vLLM's warm-up).
    superseded: bool,
    /// An engine's log line told in the reporter's sentence: it gives way to any message that
    /// follows, as a mention does.
    told: bool,
    /// A raw CUDA or HIP error quoted in a title without a figure: a GPU message below replaces
    /// it, another failure does not (a pinned host buffer is a detail of it).
    raw_error_in_title: bool,
}

/// How many lines after vLLM's warm-up error the allocator message it wraps may start.
const WARMUP_PAIR_LINES: u64 = 12;
/// How many lines after an exception's class its message may come (a traceback in between).
const CLASS_ONLY_LINES: u64 = 400;

impl OomDetector {
    /// A detector with nothing open.
    pub fn new() -> Self {
        OomDetector::default()
    }

    /// Feed one cleaned line, `line_no` 1-based. Returns messages completed by this line
    /// (ordered by their start line).
    pub fn push(&mut self, line_no: u64, line: &CleanLine<'_>) -> Vec<OomMessage> {
        let mut done = Vec::new();
        let text: &str = &line.text;
        if self.holders_said.is_none() && holders::other_holders_said(text) {
            self.holders_said = Some(line_no);
        }
        if self.capacity_said.is_none() && holders::capacity_said(text) {
            self.capacity_said = Some(line_no);
        }
        if pinned::pinned_frame(text) {
            self.pinned_frame = Some(line_no);
        }
        if let Some((device, size)) = pool_retry(text) {
            self.pool_retry = Some((line_no, device, size));
        }
        if pinned::pin_thread(text) {
            self.pin_thread = Some(line_no);
        }
        if let Some(held) = self.held_memory_error.as_mut() {
            if paddle_gpu_frame(text) {
                held.kind = OomKind::OtherGpuOom;
                held.is_gpu_oom = true;
                held.exception
                    .get_or_insert_with(|| "MemoryError".to_string());
                done.extend(self.held_memory_error.take());
            } else if line_no > held.end_line + PADDLE_STACK_LINES {
                done.extend(self.held_memory_error.take());
            }
        }
        if self.xla_preallocation.is_none() && text.contains("Failed to allocate device memory of")
        {
            let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            self.xla_preallocation = integer_of(
                regex!(r"Failedtoallocatedevicememoryof[^()]*\((\d+)bytes\)"),
                &squeezed,
            )
            .map(Bytes);
        }
        if let Some(weak) = self.weak.as_mut() {
            if line_no > weak.message.end_line + WEAK_CONTEXT_LINES {
                done.extend(self.resolve_weak());
            } else if line_no > weak.message.end_line {
                // torchrun's `[rank0]:` prefix (removed into the stream) is a job on GPUs.
                weak.gpu |= mention::gpu_work_shown(text)
                    || line.stream.as_deref().is_some_and(|stream| {
                        stream
                            .strip_prefix("rank")
                            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    });
                weak.host |= mention::host_memory_shown(text);
            }
        }
        // The paste's own error, of a class that is never a memory failure, after a mention
        // that waits for its message: the mention named what the reporter took it for
        // ([`look_alike::unrelated_error`]).
        if look_alike::unrelated_error(text) {
            if self.pending_warmup.as_ref().is_some_and(|pending| {
                pending.superseded
                    && line_no > pending.message.end_line
                    && pending.message.kind == OomKind::NamedWithoutMessage
                    // A program's own line after its out-of-memory (fairseq's `ran out of
                    // memory, skipping batch`) is no reporter's name for the error below it.
                    && !mention::is_app_line(&pending.message.text)
            }) {
                self.pending_warmup = None;
            }
            if let Some(weak) = self.weak.as_mut() {
                weak.host |= line_no > weak.message.end_line;
            }
        }
        if self
            .pending_warmup
            .as_ref()
            .is_some_and(|pending| line_no > pending.message.end_line + pending.window)
        {
            done.extend(self.pending_warmup.take().map(|pending| pending.message));
        }

        // Close messages that waited too long for a continuation (so `wants_more` turns false).
        let mut index = 0;
        while index < self.open.len() {
            if line_no.saturating_sub(self.open[index].end_line) > MAX_WAIT_LINES {
                let open = self.open.swap_remove(index);
                self.close(open, &mut done);
            } else {
                index += 1;
            }
        }

        let mut quoted = false;
        let start = detect_start(text).or_else(|| {
            quoted = true;
            quoted_raise_start(text)
        });
        let mut wrapped = false;
        let position = self
            .open
            .iter()
            .position(|o| o.stream == line.stream)
            .or_else(|| self.wrapped_without_prefix(line_no, line));
        if let Some(position) = position {
            let chain = start.is_some_and(|(family, offset)| {
                (is_chain(family) && family == self.open[position].family) || {
                    wrapped = is_wrapped_figures(&self.open[position], family, &text[offset..]);
                    wrapped
                }
            });
            if start.is_some() && !chain {
                let open = self.open.swap_remove(position);
                self.close(open, &mut done);
            } else {
                match continuation(&self.open[position], text) {
                    Continuation::Append => {
                        let open = &mut self.open[position];
                        open.blank_lines = 0;
                        append_line(open, text);
                        open.end_line = line_no;
                        open.lines += 1;
                        if is_complete(open) || open.lines >= MAX_MESSAGE_LINES {
                            let open = self.open.swap_remove(position);
                            self.close(open, &mut done);
                        }
                    }
                    Continuation::Skip => {
                        let open = &mut self.open[position];
                        if text.trim().is_empty() {
                            open.blank_lines += 1;
                        } else {
                            open.end_line = line_no;
                        }
                        open.lines += 1;
                        if open.lines >= MAX_MESSAGE_LINES {
                            let open = self.open.swap_remove(position);
                            self.close(open, &mut done);
                        }
                    }
                    Continuation::Close => {
                        let open = self.open.swap_remove(position);
                        self.close(open, &mut done);
                    }
                }
            }
        }

        let continued_chain = wrapped
            || start.is_some_and(|(family, _)| is_chain(family))
                && self
                    .open
                    .iter()
                    .any(|o| o.stream == line.stream && o.end_line == line_no);
        if let Some((family, offset)) = start.filter(|_| !continued_chain) {
            let prefix = &text[..offset];
            let message_text = &text[offset..];
            let mut open = Open {
                family,
                start_line: line_no,
                end_line: line_no,
                stream: line.stream.clone(),
                exception: exception_class(prefix),
                quote: opening_quote(prefix),
                prefix_hint: engine_from_wording(text).or_else(|| engine_from_stream(line)),
                text: String::with_capacity(message_text.len()),
                squeezed: String::with_capacity(message_text.len()),
                lines: 1,
                blank_lines: 0,
                quoted,
                titled: text.trim_start().starts_with("# "),
                // PyTorch's expandable-segment warning: the allocator retries after it, and
                // its out-of-memory error, when the retry fails, is the failure.
                // A device runtime's status quoted in the reporter's sentence (`Every USM
                // device allocation returns `UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`, regardless
                // of size`): the runtime's own failure lines below it are the message.
                told: (matches!(
                    family,
                    Family::VllmNoCacheBlocks | Family::Framework(FrameworkKind::DeviceRuntime)
                ) && look_alike::told_in_sentence(prefix))
                    // A raw CUDA error named in the reporter's sentence (`I tried to run it …,
                    // but got CUDA error: out of memory.`) above the message it stands for.
                    || (family == Family::CudaError && look_alike::told_in_prose(prefix))
                    || (family == Family::OtherGpu
                        && pytorch::expandable_map_start(message_text) == Some(0)),
            };
            append_normalized(&mut open.text, message_text);
            squeeze_into(&mut open.squeezed, message_text);
            if is_complete(&open) {
                self.close(open, &mut done);
            } else {
                self.open.push(open);
            }
        }

        done.sort_by_key(|message| message.line);
        done
    }

    /// The open allocator message that a line without a stream prefix continues: a console
    /// hard-wrapped a prefixed line (`[rank1]: torch.OutOfMemoryError: … Of the allocated memory
    /// 4` / `0.30 GiB is allocated by PyTorch, …`), and the rest carries no prefix. Only for
    /// the line right after it, and only while the message is unfinished.
    fn wrapped_without_prefix(&self, line_no: u64, line: &CleanLine<'_>) -> Option<usize> {
        if line.stream.is_some() {
            return None;
        }
        self.open.iter().position(|open| {
            open.stream.is_some()
                && open.end_line + 1 == line_no
                && matches!(open.family, Family::TorchAllocator(_))
                && !self.open.iter().any(|other| other.stream.is_none())
        })
    }

    /// True while a message is open and following lines may continue it (hard-wrapped text,
    /// the multi-line cudaMallocAsync block, llama.cpp's lines); the driver then feeds the next lines.
    pub fn wants_more(&self) -> bool {
        !self.open.is_empty()
            || self.pending_warmup.is_some()
            || self.weak.is_some()
            || self.held_memory_error.is_some()
    }

    /// A weak mention's window ended (or the input did): a GPU OOM when the lines after it
    /// showed GPU work and no host memory, else nothing.
    fn resolve_weak(&mut self) -> Option<OomMessage> {
        let Weak {
            mut message,
            gpu,
            host,
        } = self.weak.take()?;
        if self.seen_message || host {
            return None;
        }
        if !gpu {
            self.unresolved_weak.get_or_insert(message);
            return None;
        }
        message.is_gpu_oom = true;
        Some(message)
    }

    /// The first weak mention that no line after it placed on the GPU or the host, and no
    /// message followed: an OOM named in words (`But it OOM, how should I adjust …`) that only
    /// the lines before it can place (see `analyze::explain`, which knows the engine named
    /// there).
    pub fn take_unresolved_weak(&mut self) -> Option<OomMessage> {
        self.unresolved_weak.take().filter(|_| !self.seen_message)
    }

    /// The first line where the reporter says other programs held the GPU's memory (`solved,
    /// other programs occupy memory`), if any was read.
    pub fn holders_said(&self) -> Option<u64> {
        self.holders_said
    }

    /// The first line where the reporter or a maintainer says the GPU has too little memory
    /// for the job (`your GPU doesn't have enough VRAM`), if any was read.
    pub fn capacity_said(&self) -> Option<u64> {
        self.capacity_said
    }

    /// Flush what is still open at end of input.
    pub fn finish(&mut self) -> Vec<OomMessage> {
        let mut done = Vec::new();
        for open in std::mem::take(&mut self.open) {
            self.close(open, &mut done);
        }
        done.extend(self.pending_warmup.take().map(|pending| pending.message));
        done.extend(self.resolve_weak());
        done.extend(self.held_memory_error.take());
        done.sort_by_key(|message| message.line);
        done
    }

    /// From now on messages are still found, and counted ([`OomDetector::take_counted`]), but
    /// not parsed nor returned: for a caller that keeps no more of them (parsing one costs
    /// microseconds; a log can hold millions). Host-memory messages only (they are never GPU
    /// OOMs), or with `gpu_too` every message but vLLM's, whose parser decides whether the
    /// text is a message at all.
    pub fn count_only(&mut self, gpu_too: bool) {
        self.count_only = true;
        self.count_only_gpu |= gpu_too;
    }

    /// Messages counted but not returned since the last call.
    pub fn take_counted(&mut self) -> u64 {
        std::mem::take(&mut self.counted)
    }

    /// A message is complete: parse it into `done`, or only count it.
    fn close(&mut self, open: Open, done: &mut Vec<OomMessage>) {
        let counted = match open.family {
            Family::VllmStartupFree
            | Family::VllmNoCacheBlocks
            | Family::VllmMaxSeqLen
            | Family::VllmWarmup => false,
            Family::Host(_) | Family::NotOom(_) => self.count_only,
            _ => self.count_only_gpu,
        };
        if counted {
            self.counted += 1;
            return;
        }
        let told = open.told;
        let titled = open.titled;
        if let Some(message) = build(open, &mut self.memo) {
            // A GPU failure a title names without a figure is held as a reporter's quote: the
            // GPU message pasted below it replaces it, its kind kept when none follows.
            let quoted_in_title =
                titled && message.is_gpu_oom && message.figures == OomFigures::default();
            // (A raw CUDA or HIP error quoted so is kept over the other failures below it, which
            // are not the GPU's memory: a pinned host buffer is a detail of it, see
            // `pinned_host`.)
            let raw_cuda_error = matches!(
                message.kind,
                OomKind::CudaErrorOutOfMemory
                    | OomKind::CudaDriverOutOfMemory
                    | OomKind::HipRuntimeOutOfMemory
            );
            self.pair_warmup(
                message,
                told || quoted_in_title,
                quoted_in_title && raw_cuda_error,
                done,
            );
        }
    }

    /// A raw CUDA out-of-memory (no allocator figures) raised by a pinned host allocation
    /// ([`pinned`]): the pinning call is the innermost frame right before it, the pin thread
    /// re-raised it, or the message's own frames name the host allocator.
    fn pinned_host(&self, message: &OomMessage) -> bool {
        let raw = matches!(
            message.kind,
            OomKind::CudaErrorOutOfMemory
                | OomKind::CudaDriverOutOfMemory
                | OomKind::HipRuntimeOutOfMemory
        ) || (message.kind == OomKind::OtherGpuOom
            && (message.text.contains("cudaErrorMemoryAllocation")
                // CUDA's pinned host allocators named on the failing line (MindSpore's
                // dataset arena: `cudaHostAlloc failed, ret[2], out of memory`).
                || message.text.contains("cudaHostAlloc")
                || message.text.contains("cudaMallocHost")));
        if !raw || message.figures.tried_to_allocate_bytes.is_some() {
            return false;
        }
        let before = |seen: Option<u64>, lines: u64| {
            seen.is_some_and(|at| at <= message.line && message.line - at <= lines)
        };
        before(self.pinned_frame, pinned::FRAME_LINES)
            || before(self.pin_thread, pinned::THREAD_LINES)
            || pinned::pinned_frame(&message.text)
    }

    /// The request of ggml's CUDA/HIP error right after its device pool said it would retry
    /// ([`pool_retry`]): the retry failed, and `CUDA_CHECK(err)` of the pool's `alloc` printed
    /// the error (`current device: 0, in function alloc at …/ggml-cuda.cu:449`). On the same
    /// device, within a few lines, from no other function.
    fn pool_request(&self, message: &mut OomMessage) {
        let Some((line, device, size)) = self.pool_retry else {
            return;
        };
        let raw = matches!(
            message.kind,
            OomKind::CudaErrorOutOfMemory | OomKind::HipRuntimeOutOfMemory
        );
        let near = line < message.line && message.line - line <= POOL_RETRY_LINES;
        let same_device = message
            .figures
            .gpu_index
            .is_none_or(|index| index.0 == device);
        let function = regex!(r"in function (\w+)")
            .captures(&message.text)
            .and_then(|caps| caps.get(1))
            .is_none_or(|name| name.as_str() == "alloc");
        if raw
            && near
            && same_device
            && function
            && message.figures.tried_to_allocate_bytes.is_none()
        {
            message.figures.tried_to_allocate_bytes = Some(size);
            message.figures.gpu_index = Some(crate::model::gpu::CudaOrdinal(device));
        }
    }

    /// vLLM's warm-up error (`_dummy_sampler_run`: `raise RuntimeError("CUDA out of memory
    /// occurred when warming up sampler …") from e`) carries no figures; the allocator message it
    /// wraps does. Printed in that order (a paste that quotes the RuntimeError first), the
    /// allocator's figures are copied onto it, so the first GPU failure has them.
    ///
    /// A message that is only an exception's class (`OutOfMemoryError` without its text) is
    /// held the same way and dropped when the message itself follows.
    ///
    /// An engine's log line that the reporter quotes in a sentence (`told`) is held as a
    /// mention is: the reporter's telling, which a message of the paste's own replaces.
    fn pair_warmup(
        &mut self,
        mut message: OomMessage,
        told: bool,
        raw_error_in_title: bool,
        done: &mut Vec<OomMessage>,
    ) {
        if bare_memory_error(&message) && self.held_memory_error.is_none() {
            self.held_memory_error = Some(message);
            return;
        }
        if self.pinned_host(&message) {
            message.kind = OomKind::HostMemory;
            message.is_gpu_oom = false;
            // The stream executor's pinned allocation names its size (`failed to alloc
            // 1073741824 bytes on host`).
            message.details.host_required_bytes = regex!(r"alloc (\d+) bytes on host")
                .captures(&message.text)
                .and_then(|caps| caps.get(1)?.as_str().parse().ok())
                .map(crate::model::Bytes)
                .or(message.details.host_required_bytes);
        }
        self.pool_request(&mut message);
        if message.kind == OomKind::XlaResourceExhausted
            && message.details.requested_memory_bytes.is_none()
        {
            message.details.requested_memory_bytes = self.xla_preallocation;
        }
        let figureless = message.figures == OomFigures::default();
        let mention = matches!(
            message.kind,
            OomKind::OtherGpuOom | OomKind::NamedWithoutMessage
        ) && mention::is_mention(&message);
        if (mention || told) && self.seen_message {
            return;
        }
        if mention {
            message.kind = OomKind::NamedWithoutMessage;
            // A title quoting PyTorch's class before the device's words (`conv.py
            // torch.OutOfMemoryError: HIP out of memory`): the class names who raised it.
            if message.exception.is_none() {
                message.exception =
                    regex!(r"(?:^|[^A-Za-z0-9_.])(torch\.(?:cuda\.|xpu\.)?OutOfMemoryError)\s*:")
                        .captures(&message.text)
                        .and_then(|found| found.get(1))
                        .map(|class| class.as_str().to_string());
            }
        }
        // DataParallel's relay of a replica's failure (`torch/_utils.py` `ExceptionWrapper`:
        // `Caught OutOfMemoryError in replica 0 on device 1.`) names the device that failed.
        if message.figures.gpu_index.is_none() {
            message.figures.gpu_index = regex!(
                r"Caught (?:torch\.)?(?:cuda\.)?OutOfMemoryError in replica \d+ on device (\d+)"
            )
            .captures(&message.text)
            .and_then(|found| found.get(1)?.as_str().parse().ok())
            .map(crate::model::gpu::CudaOrdinal);
        }
        if mention && mention::is_weak(&message.text) {
            if self.weak.is_none() {
                message.is_gpu_oom = false;
                // Its own line may show the GPU work (`OOM at step 3 under torchrun`).
                let gpu = mention::gpu_work_shown(&message.text);
                self.weak = Some(Weak {
                    message,
                    gpu,
                    host: false,
                });
            }
            return;
        }
        // A message of its own, or a mention that names the GPU, follows the weak mention: it
        // is what failed (or, from the host, what shows it was not the GPU).
        self.weak = None;
        self.seen_message |= !(mention || told);
        // A logger-prefixed stream prints the chained traceback whole (the allocator's message
        // first): only a plain paste quotes the warm-up error before it.
        let held =
            if message.kind == OomKind::VllmWarmupOom && figureless && message.stream.is_none() {
                Some((WARMUP_PAIR_LINES, false))
            } else if mention
                || told
                || (message.kind == OomKind::OtherGpuOom && is_class_only(&message.text))
            {
                Some((CLASS_ONLY_LINES, true))
            } else if tf_cut_before_shape(&message) {
                Some((CLASS_ONLY_LINES, false))
            } else {
                None
            };
        if let Some((window, superseded)) = held {
            // The same failure named again while a mention waits for its message (the title,
            // then the reporter's `就报了out of memory`): the first stays, waiting as long as
            // the second would.
            if let Some(pending) = self.pending_warmup.as_mut().filter(|pending| {
                mention && (pending.told || mention::is_mention(&pending.message))
            }) {
                let until = message.end_line + window;
                pending.window = pending
                    .window
                    .max(until.saturating_sub(pending.message.end_line));
                return;
            }
            let line = message.line;
            let gpu = message.is_gpu_oom;
            let previous = self.pending_warmup.replace(Pending {
                message,
                window,
                superseded,
                told,
                raw_error_in_title,
            });
            // A mention or a class waiting for its message gives way to the message held now
            // (vLLM's warm-up error after the title's `CUDA memory error`), as to any other.
            done.extend(
                previous
                    .filter(|pending| {
                        !(gpu
                            && pending.superseded
                            && line <= pending.message.end_line + pending.window)
                    })
                    .map(|pending| pending.message),
            );
            return;
        }
        // TensorFlow's OOM cut before its tensor (a title), or only its class, then the whole
        // message placed on the CPU: the same failure, of the host's memory.
        if !message.is_gpu_oom
            && message.text.contains("OOM when allocating tensor")
            && self.pending_warmup.as_ref().is_some_and(|pending| {
                (tf_cut_before_shape(&pending.message)
                    || (pending.message.kind == OomKind::OtherGpuOom
                        && pending.message.text.contains("ResourceExhaustedError")))
                    && message.line <= pending.message.end_line + pending.window
            })
        {
            self.pending_warmup = None;
        }
        // A mention gives way to any message that follows it, a GPU one or not (not a title's
        // quote of a GPU failure's own wording).
        if !message.is_gpu_oom
            && self.pending_warmup.as_ref().is_some_and(|pending| {
                (pending.told || mention::is_mention(&pending.message))
                    && !pending.raw_error_in_title
                    && message.line <= pending.message.end_line + pending.window
            })
        {
            self.pending_warmup = None;
        }
        if message.is_gpu_oom {
            let allocator = matches!(
                message.kind,
                OomKind::PytorchCached
                    | OomKind::PytorchReservedInTotal
                    | OomKind::PytorchTotalCapacity
            );
            if let Some(mut pending) = self.pending_warmup.take() {
                let near = message.line <= pending.message.end_line + pending.window;
                if !(pending.superseded && near) {
                    // Only the same process's message (another rank's figures are not its).
                    if near && allocator && !figureless && pending.message.stream == message.stream
                    {
                        pending.message.figures = message.figures.clone();
                    }
                    done.push(pending.message);
                }
            }
        }
        done.push(message);
    }
}

/// Convenience: the whole text at once (clean + detect every line). Messages in order of
/// their first line.
pub fn parse_text(text: &str) -> Vec<OomMessage> {
    let mut detector = OomDetector::new();
    let mut messages = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = clean_line(raw);
        messages.extend(detector.push(index as u64 + 1, &line));
    }
    messages.extend(detector.finish());
    messages.sort_by_key(|message| message.line);
    messages
}

/// Families printed as a chain of lines that each look like a start (llama.cpp's failure
/// lines, the kernel's OOM-killer lines): a start of the same family continues the message.
fn is_chain(family: Family) -> bool {
    matches!(
        family,
        Family::LlamaChain
            | Family::Host(HostKind::OomKiller)
            | Family::Host(HostKind::RayMemoryMonitor)
    )
}

/// A line that starts like a fragment of the allocator message (`Tried to allocate …. GPU`)
/// right after an unfinished one: the console wrapped the message there.
fn is_wrapped_figures(open: &Open, family: Family, message: &str) -> bool {
    // `DefaultCPUAllocator: can't allocate memory: you` / `tried to allocate N bytes. Error
    // code 12 (Cannot allocate memory)`: the errno words of the wrapped half are not a new
    // message.
    if matches!(open.family, Family::Host(HostKind::CpuAllocator))
        && family == Family::Host(HostKind::Errno)
        && !is_complete(open)
    {
        return true;
    }
    // Faiss's `StandardGpuResources: alloc fail type …` wrapped before its request and status
    // (`dev 0 space Device stream 0x… size N bytes (cudaMalloc error out of memory [2])`): the
    // status's words are not a message of their own.
    if open.family == Family::Framework(super::FrameworkKind::Faiss) && !is_complete(open) {
        return true;
    }
    // … or the 2.1+ message wrapped before its second sentence (`… Tried to allocate 20.00
    // MiB.` / `GPU 0 has a total capacity of …`): the tail read on its own as a head-cut
    // message ([`pytorch::start`]) continues the open one that lacks it.
    // The same for the ≤ 2.0 message wrapped before its parentheses (`… Tried to allocate 10.00
    // MiB` / `(GPU 0; 2.00 GiB total capacity; …`).
    matches!(open.family, Family::TorchAllocator(_))
        && family == Family::TorchAllocator(Accelerator::Cuda)
        && ((message.starts_with("Tried to allocate")
            && !open.squeezed.contains("Triedtoallocate"))
            || (message.starts_with("GPU") && !open.squeezed.contains("hasatotalcapac"))
            || (message.trim_start_matches('(').starts_with("GPU")
                && !open.squeezed.contains("totalcapacity;")))
}

fn is_complete(open: &Open) -> bool {
    let squeezed = open.squeezed.as_str();
    match open.family {
        Family::TorchAllocator(_) | Family::Mps => pytorch::is_complete(open.family, squeezed),
        Family::MallocAsync => pytorch::is_complete(open.family, squeezed),
        Family::CudaError => false,
        // (RMM's message raised by XGBoost: its figures follow, see `continuation`.)
        // (PyTorch's expandable-segment warning: its figures may be on the next lines.)
        Family::OtherGpu if pytorch::is_expandable_map(squeezed) => {
            squeezed.contains(",total:") || open.lines >= 3
        }
        Family::OtherGpu => !cuda::is_rmm(squeezed),
        Family::CudaDriver | Family::Cublas | Family::IllegalAccess => true,
        // Both report over lines their continuation reads (the kill, Ray's table).
        Family::Host(HostKind::OomKiller | HostKind::RayMemoryMonitor) => false,
        Family::Host(kind) => host::is_complete(kind, squeezed),
        Family::VllmStartupFree
        | Family::VllmNoCacheBlocks
        | Family::VllmMaxSeqLen
        | Family::VllmWarmup => vllm::is_complete(open.family, squeezed),
        Family::Tgi => tgi::is_complete(squeezed),
        Family::Sglang => sglang::is_complete(squeezed),
        Family::LlamaChain => false,
        Family::Framework(kind) => frameworks::is_complete(kind, squeezed),
        Family::NotOom(_) => true,
    }
}

fn continuation(open: &Open, text: &str) -> Continuation {
    match open.family {
        // A paste from ComfyUI's error dialog puts a blank line between its lines.
        Family::MallocAsync if text.trim().is_empty() => {
            if open.blank_lines < 1 {
                Continuation::Skip
            } else {
                Continuation::Close
            }
        }
        Family::MallocAsync => pytorch::malloc_async_continuation(text),
        Family::CudaError => cuda::cuda_error_continuation(&open.text, open.lines, text),
        // RMM's message raised by XGBoost, its figures on the lines under it.
        // PyTorch's expandable-segment warning wrapped before its figures.
        Family::OtherGpu if pytorch::is_expandable_map(&open.squeezed) => {
            pytorch::expandable_map_continuation(text)
        }
        Family::OtherGpu if cuda::is_rmm(&open.squeezed) => {
            cuda::cuda_error_continuation(&open.text, open.lines, text)
        }
        Family::LlamaChain => llama_cpp::continuation(&open.text, text),
        Family::Host(HostKind::OomKiller) => host::oom_killer_continuation(&open.text, text),
        // Ray's exception, then its node's figures and its table of the top memory users.
        Family::Host(HostKind::RayMemoryMonitor) if open.lines <= 16 => {
            host::ray_continuation(text)
        }
        Family::Framework(kind) => frameworks::continuation(kind, text),
        Family::TorchAllocator(_) => torch_continuation(open, text),
        _ => {
            if is_wrap_continuation(text) {
                Continuation::Append
            } else {
                Continuation::Close
            }
        }
    }
}

/// A console paste may split the allocator message over blank lines: they are skipped, and
/// the line after them continues the message only when it reads like its figures.
fn torch_continuation(open: &Open, text: &str) -> Continuation {
    if text.trim().is_empty() {
        return if open.blank_lines < 2 {
            Continuation::Skip
        } else {
            Continuation::Close
        };
    }
    if !is_wrap_continuation(text) {
        return Continuation::Close;
    }
    if open.blank_lines == 0 {
        return Continuation::Append;
    }
    const FIGURE_WORDS: [&str; 8] = [
        "allocated",
        "reserved",
        "capacity",
        "free",
        "PyTorch",
        "GiB",
        "MiB",
        "memory",
    ];
    if FIGURE_WORDS.iter().any(|word| text.contains(word)) {
        Continuation::Append
    } else {
        Continuation::Close
    }
}

/// Whether a line can be the hard-wrapped rest of an unfinished message: not empty, not a
/// traceback line, not the start of a new log record.
pub(super) fn is_wrap_continuation(text: &str) -> bool {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return false;
    }
    const NOT_WRAP: [&str; 12] = [
        "Traceback",
        "File \"",
        "During handling",
        "The above exception",
        "INFO",
        "WARNING",
        "WARN ",
        "ERROR",
        "DEBUG",
        "CRITICAL",
        "^^^",
        "~~~",
    ];
    if NOT_WRAP.iter().any(|p| trimmed.starts_with(p)) {
        return false;
    }
    !starts_with_timestamp(trimmed)
}

/// `2024-05-01…`, `05-01 12:00:00`, `12:00:00`, `[2024-…`: a log record starts here.
fn starts_with_timestamp(text: &str) -> bool {
    let bytes = text.strip_prefix('[').unwrap_or(text).as_bytes();
    let digit = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
    let at = |i: usize, c: u8| bytes.get(i) == Some(&c);
    (digit(0) && digit(1) && digit(2) && digit(3) && at(4, b'-') && digit(5))
        || (digit(0) && digit(1) && at(2, b'-') && digit(3) && digit(4) && at(5, b' '))
        || (digit(0) && digit(1) && at(2, b':') && digit(3) && digit(4) && at(5, b':'))
}

fn append_line(open: &mut Open, text: &str) {
    if !open.text.is_empty() && !open.text.ends_with(' ') {
        open.text.push(' ');
    }
    append_normalized(&mut open.text, text.trim());
    squeeze_into(&mut open.squeezed, text);
}
