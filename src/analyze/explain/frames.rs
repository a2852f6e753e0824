//! The traceback frames of a log: those printed (`File "…", line N, in f`), the calls read from
//! the statement under a traceback's last frame, and which of them belong to the failure.

use super::*;
use crate::analyze::phase::{frame_rule, read_frames};

/// The longest statement kept under a frame (a minified line can be megabytes).
const MAX_STATEMENT_CHARS: usize = 300;

/// A frame's statement as kept: its first [`MAX_STATEMENT_CHARS`] characters.
pub(super) fn kept_statement(code: &str) -> String {
    code.chars().take(MAX_STATEMENT_CHARS).collect()
}

/// The most lines between an IPython frame's header and its arrow: the header, up to five
/// lines of listing before the arrow (`context=5`), and a few a console wrapped.
const ARROW_AFTER_HEADER_LINES: u64 = 10;

/// IPython prints a frame as a header (`/…/module.py in _call_impl(self, *input)`, `File
/// ~/x.py:12, in f()`, `<ipython-input-7-…> in load_model(hparams)`) over a listing whose arrow
/// (`--> 122     model = Tacotron2(hparams).cuda()`) is the statement the frame was running.
/// When the frame printed last is such a header without its statement, the arrow's code
/// becomes that statement (true); otherwise the arrow is a notebook cell's own call (false).
pub(super) fn arrow_of_frame_above(
    collected: &mut Collected,
    line_no: u64,
    code: Option<&str>,
) -> bool {
    let Some(code) = code else {
        return false;
    };
    let Some(frame) = collected.frames.back_mut() else {
        return false;
    };
    let header = !frame.called
        && frame.code.is_none()
        && frame.file != "<call>"
        && frame.line < line_no
        && line_no - frame.line <= ARROW_AFTER_HEADER_LINES;
    if header {
        frame.code = Some(kept_statement(code));
    }
    header
}

/// Keeps a frame, dropping the oldest beyond [`MAX_FRAMES`].
fn keep(collected: &mut Collected, frame: Frame) {
    let at = collected.frames.len();
    keep_at(collected, at, frame);
}

/// Keeps a frame at `at` of the frames (outermost first), dropping the oldest beyond
/// [`MAX_FRAMES`].
fn keep_at(collected: &mut Collected, at: usize, frame: Frame) {
    collected.frames.insert(at, frame);
    if collected.frames.len() > MAX_FRAMES {
        collected.frames.pop_front();
    }
}

/// A frame the traceback printed. A deeper printed frame makes the calls read from the
/// statement above it (see [`push_called_frames`]) repeat it: they go.
pub(super) fn note_printed(collected: &mut Collected, line: u64, function: String, file: String) {
    // The dispatcher a worker's method was handed to ([`RPC_DISPATCHERS`]) does not show the
    // method: the one named in the call above it stays.
    // Nor does the decorator of `torch.no_grad()` / `torch.inference_mode()` (torch 2.x
    // `torch/utils/_contextlib.py`, 1.x `torch/autograd/grad_mode.py` `decorate_context`: `with
    // ctx_factory(): return func(*args, **kwargs)`), printed between the call and the method.
    let dispatcher = RPC_DISPATCHERS.contains(&function.as_str())
        || (function == "decorate_context"
            && (file.contains("_contextlib.py") || file.contains("grad_mode.py")));
    while !dispatcher && collected.frames.back().is_some_and(|frame| frame.called) {
        collected.frames.pop_back();
    }
    let frame = Frame {
        line,
        function,
        file,
        called: false,
        code: None,
    };
    // gdb prints the innermost frame first: each frame of its backtrace is the caller of the
    // ones printed above it, so it goes before them (the frames are kept outermost first). Its
    // frames lie within a few lines of each other (a source line may come between them).
    let gdb = crate::parse::engine_log::GDB_FRAME_FILE;
    let mut at = collected.frames.len();
    if frame.file.starts_with(gdb) {
        let mut next_line = line;
        while at > 0 {
            let before = &collected.frames[at - 1];
            if !before.file.starts_with(gdb) || before.line + 4 < next_line {
                break;
            }
            next_line = before.line;
            at -= 1;
        }
    }
    keep_at(collected, at, frame);
}

/// The rest of a frame line a console wrapped before its function, on the line after
/// `block[..end]` (`9, in _init_executor` under `…", line 4`, `in __init__` under `…", line
/// 54,`): that line trimmed, and where it ends. `raw` must be a frame line with its line number
/// and no function.
pub(super) fn wrapped_frame_rest<'a>(
    block: &'a [u8],
    end: usize,
    raw: &[u8],
) -> Option<(&'a [u8], usize)> {
    let at = crate::parse::text::find_in_line(raw, b"File \"")?;
    let tail = &raw[at..];
    let number = &tail[memchr::memmem::find(tail, b"\", line ")? + b"\", line ".len()..];
    let number = number.trim_ascii_end();
    let number = number.strip_suffix(b",").unwrap_or(number);
    if number.is_empty() || !number.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let rest = block.get(end..)?.strip_prefix(b"\n")?;
    let stop = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
    let line = rest[..stop].trim_ascii();
    let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
    let after = &line[digits..];
    let after = after.strip_prefix(b", ").unwrap_or(after);
    let name = after.strip_prefix(b"in ")?;
    let valid = !name.is_empty()
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'<' | b'>'));
    // `in f` alone follows a number ending in `,`; digits go on a number cut short.
    let fits = (digits == 0) == raw.trim_ascii_end().ends_with(b",");
    (valid && fits).then_some((line, end + 1 + stop))
}

/// `code` without its first word when the frame's prefix is one word of the same shape (a
/// timestamp on every line, `kubectl logs --timestamps`, `docker logs -t`: the digits differ
/// from line to line, the shape does not).
fn strip_like_stamp<'a>(prefix: &str, code: &'a str) -> Option<&'a str> {
    if prefix.is_empty() || prefix.contains(char::is_whitespace) {
        return None;
    }
    let first = code.split(char::is_whitespace).next()?;
    let shape = |word: &str| -> Vec<u8> {
        word.bytes()
            .map(|b| if b.is_ascii_digit() { b'0' } else { b })
            .collect()
    };
    let stamp = prefix.bytes().any(|b| b.is_ascii_digit());
    (stamp && first.len() == prefix.len() && shape(first) == shape(prefix))
        .then(|| &code[first.len()..])
}

/// The line after `block[..end]` when `raw` is a Python traceback frame (`File "…", line N, in
/// f`) and the block holds that next line whole.
pub(super) fn code_line_after<'a>(block: &'a [u8], end: usize, raw: &[u8]) -> Option<&'a [u8]> {
    crate::parse::text::find_in_line(raw, b"File \"")?;
    let rest = block.get(end..)?.strip_prefix(b"\n")?;
    let stop = memchr::memchr(b'\n', rest)?;
    let line = &rest[..stop];
    Some(line.strip_suffix(b"\r").unwrap_or(line))
}

/// The line under a traceback frame is the statement the frame was running. When the frames
/// below it are missing (a paste cut at `self.load_model()`, JAX's filtered tracebacks, which
/// keep only the caller of a jitted function), the function that statement calls is the next
/// frame. A called name counts only when a frame rule names it, looked up with the caller's
/// path (a method called on `self` or a sibling object usually lives in the same package); a
/// rule for any function of a path does not count, nor a call from a frame a rule already
/// reads. When a deeper frame follows, the called
/// frames are dropped again (see [`note_printed`]).
pub(super) fn push_called_frames(
    collected: &mut Collected,
    frame_raw: &str,
    code: &[u8],
    (caller, file): (&str, &str),
    line: u64,
) {
    let Some(at) = frame_raw.find("File \"") else {
        return;
    };
    let code = String::from_utf8_lossy(code);
    // A log prefix (`[rank0]:`) repeats on the code line; the statement is indented under it.
    let prefix = frame_raw[..at].trim_end();
    let code = code
        .strip_prefix(prefix)
        .or_else(|| strip_like_stamp(prefix, &code))
        .unwrap_or(&code);
    if !code.starts_with([' ', '\t']) {
        return;
    }
    let code = code.trim();
    if code.is_empty() || code.starts_with("File ") || code.starts_with(['^', '~', '#']) {
        return;
    }
    // The statement belongs to the printed frame of this line (what the user's code was doing
    // there: `loss.backward()`, `for x in train_loader:`), kept for `analyze::phase::user_code`.
    if let Some(printed) = collected
        .frames
        .iter_mut()
        .rev()
        .find(|frame| !frame.called)
        .filter(|frame| frame.line == line)
    {
        printed.code = Some(kept_statement(code));
    }
    // A frame a rule reads decides by itself (a wrapper only encloses: what it calls may show
    // more). A serving frame's call of a stage is read too: the stage runs inside it, as its
    // frame would show had the paste kept it (ComfyUI's `sample` calls `prepare_sampling`,
    // which loads the models first).
    let caller_role = frame_rule(caller, file).map(|rule| rule.role);
    if caller_role.is_some_and(|role| !matches!(role, Role::Wrapper | Role::Serve)) {
        return;
    }
    let stages_only = caller_role == Some(Role::Serve);
    let bytes = code.as_bytes();
    for (paren, _) in code.match_indices('(') {
        let start = bytes[..paren]
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .map_or(0, |i| i + 1);
        let name = &code[start..paren];
        if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
            continue;
        }
        // A call that hands a method to workers by its name (vLLM's executors:
        // `self.collective_rpc("load_model")`, V0's `self._run_workers("load_model")`, the
        // Ray workers' `execute_method("load_model")`): the named method is what runs.
        let name = rpc_method(name, &code[paren + 1..]).unwrap_or(name);
        if frame_rule(name, file)
            .is_some_and(|rule| rule.function == name && (!stages_only || rule.role == Role::Stage))
        {
            keep(
                collected,
                Frame {
                    line: line + 1,
                    function: name.to_string(),
                    file: file.to_string(),
                    called: true,
                    code: None,
                },
            );
        }
    }
}

/// The functions that run a method of every worker given by its name: vLLM's executors
/// (`vllm/executor/executor_base.py` and `vllm/v1/executor/abstract.py` `collective_rpc`, V0's
/// `_run_workers`), its workers' `execute_method` / `run_method` (`vllm/worker/worker_base.py`,
/// `vllm/utils.py`).
pub(super) const RPC_DISPATCHERS: &[&str] = &[
    "collective_rpc",
    "_run_workers",
    "execute_method",
    "run_method",
];

/// The method a dispatcher of [`RPC_DISPATCHERS`] is asked to run: its first argument when that
/// is a string literal (`"load_model"`, `'determine_num_available_blocks'`).
fn rpc_method<'a>(callee: &str, arguments: &'a str) -> Option<&'a str> {
    if !RPC_DISPATCHERS.contains(&callee) {
        return None;
    }
    let arguments = arguments.trim_start();
    let quote = arguments
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\''))?;
    let rest = &arguments[1..];
    let method = &rest[..rest.find(quote)?];
    (!method.is_empty()
        && method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    .then_some(method)
}

/// Whether a frame is the Ray task named on the failure's own line (`RayTaskError(
/// OutOfMemoryError): ray::WorkerDict.actor_rollout_generate_sequences()`): the task the error
/// was raised in, the innermost frame the line shows.
fn own_task(frame: &Frame, failure_line: u64) -> bool {
    frame.line == failure_line && frame.file == crate::parse::engine_log::RAY_TASK
}

/// Frames of the traceback that belongs to the failure: from the last `Traceback` line
/// before it up to the failure line; without one, frames within 200 lines after it (some
/// engines log the error first and the traceback after).
pub(super) fn failure_frames(collected: &Collected, failure_line: Option<u64>) -> Vec<Frame> {
    let Some(line) = failure_line else {
        return collected.frames.iter().cloned().collect();
    };
    let start = collected
        .tracebacks
        .iter()
        .rev()
        .copied()
        .find(|start| *start <= line && line - start <= 5000);
    match start {
        // The failure is the traceback's own header (IPython's `OutOfMemoryError   Traceback
        // (most recent call last)` when the message itself was not pasted): its frames follow.
        Some(start) if start == line => {
            let next = collected
                .tracebacks
                .iter()
                .copied()
                .find(|later| *later > line)
                .unwrap_or(u64::MAX);
            collected
                .frames
                .iter()
                .filter(|frame| frame.line > line && frame.line <= line + 200 && frame.line < next)
                .cloned()
                .collect()
        }
        Some(start) => collected
            .frames
            .iter()
            .filter(|frame| frame.line > start && (frame.line < line || own_task(frame, line)))
            .cloned()
            .collect(),
        // No `Traceback` line (a pasted fragment): the frames just above the message, else
        // those just below it (engines that log the error before the traceback).
        None => {
            let before: Vec<Frame> = collected
                .frames
                .iter()
                .filter(|frame| {
                    (frame.line < line && line - frame.line <= 200) || own_task(frame, line)
                })
                .cloned()
                .collect();
            if !before.is_empty() {
                return before;
            }
            collected
                .frames
                .iter()
                .filter(|frame| frame.line > line && frame.line <= line + 200)
                .cloned()
                .collect()
        }
    }
}

/// The frames of a traceback that starts right under a failure whose line wraps the error in
/// the app's own words (`RuntimeError: Error transcribing mic: CUDA failed …`: text between the
/// exception class and the error), when they show the stage.
pub(super) fn rewrapped_cause_frames(
    collected: &Collected,
    message: &OomMessage,
) -> Option<Vec<Frame>> {
    let line = message.line;
    let text = collected
        .context
        .iter()
        .flat_map(|block| &block.lines)
        .find(|context| context.line == line)
        .map(|context| context.text.as_str())?;
    let head: String = message.text.chars().take(24).collect();
    let before = &text[..text.find(head.as_str())?];
    // Drop the exception class (`RuntimeError: `, `torch.OutOfMemoryError: `).
    let words = before
        .split_once(": ")
        .filter(|(class, _)| class.ends_with("Error") || class.ends_with("Exception"))
        .map_or(before, |(_, rest)| rest)
        .trim();
    if words.is_empty() || !words.ends_with(':') {
        return None;
    }
    let below = traceback_frames_after(collected, line, 3)?;
    read_frames(&below).decided.is_some().then_some(below)
}

/// The frames of the first traceback whose head stands within `within` lines after `line`, up
/// to the next traceback's head (at most 200 lines of it); `None` when no head stands there.
pub(super) fn traceback_frames_after(
    collected: &Collected,
    line: u64,
    within: u64,
) -> Option<Vec<Frame>> {
    let start = collected
        .tracebacks
        .iter()
        .copied()
        .find(|start| *start > line && *start <= line + within)?;
    let next = collected
        .tracebacks
        .iter()
        .copied()
        .find(|later| *later > start)
        .unwrap_or(u64::MAX);
    Some(
        collected
            .frames
            .iter()
            .filter(|frame| frame.line > start && frame.line < next && frame.line <= start + 200)
            .cloned()
            .collect(),
    )
}
