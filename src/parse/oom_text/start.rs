//! Where a message starts on a line, and which family it is.

use super::{
    cuda, devices, echo, find, frameworks, host, llama_cpp, look_alike, mention, not_oom, pytorch,
    science, sglang, tgi, vllm, Family,
};

/// The family whose message starts on this line, and the byte offset where it starts.
/// A wording quoted by a source line of a traceback (`raise ValueError("No available memory…"`)
/// is not a message; the search goes on after it (`tests/fixtures/oom_text/vllm-0.6.4-…`).
pub(super) fn detect_start(text: &str) -> Option<(Family, usize)> {
    // An engine's echo of a request or a response (a user's prompt that quotes an error) is
    // content, not this program's failure: only the line before it is read.
    let text = match echo::content_start(text.as_bytes()) {
        Some(content) => text.get(..content)?,
        None => text,
    };
    let mut from = 0;
    for _ in 0..4 {
        let rest = text.get(from..)?;
        let (family, offset) = detect_start_once(rest)?;
        let absolute = from + offset;
        // A GPU wording in a clause of advice (`If you get CUDA out of memory, set …`) reports
        // nothing; the host's, a kill's or a not-OOM failure's is read as before.
        let advice = !matches!(
            family,
            Family::Host(_) | Family::NotOom(_) | Family::IllegalAccess
        ) && (look_alike::in_advice_clause(text, absolute)
            || look_alike::in_forecast(text, absolute));
        if !quoted_by_raise(&text[from..absolute]) && !advice {
            return Some((family, absolute));
        }
        let skip = rest[offset..].chars().next().map_or(1, char::len_utf8);
        from = absolute + skip;
    }
    None
}

/// Whether `before` (the line before a wording) shows the wording quoted by a `raise`
/// (`raise ValueError("`, a class cut after `raise`): source code, or a sentence about what the
/// code raises. A reporter's verb before the exception as it prints, `Class: message`, is not
/// (`Both TP workers raise torch.OutOfMemoryError: Tried to allocate 128.00 MiB…`).
fn quoted_by_raise(before: &str) -> bool {
    find(before, "raise ").is_some()
        && !regex!(r"\braise\s+[A-Za-z_][\w.]*(?:Error|Exception):\s").is_match(before)
}

/// A GPU-OOM wording quoted by the `raise` statement a traceback shows for its innermost frame
/// (`raise ValueError("No available memory for the cache blocks. "` of vLLM's
/// `check_enough_kv_cache_memory`), the exception's own line cut from the paste. The statement
/// that raised is the one shown, so its words are the message; read as a mention
/// ([`mention::mention_start`]), which any message that follows replaces. Not a host-memory or
/// other failure's wording, not prose that says `raise`, and not a line that rich or IPython
/// shows around the one that raised.
pub(super) fn quoted_raise_start(text: &str) -> Option<(Family, usize)> {
    let from = find(text, "raise ")?;
    // rich and IPython print lines around the one that raised: only rich's `❱` line raised,
    // and IPython's numbered lines are not told apart once its `---->` arrow is cut.
    let before = text[..from].trim();
    if (before.contains('│') && !before.contains('❱'))
        || (!before.is_empty() && before.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let statement = &text[from..];
    // `raise ValueError("` / `raise torch.OutOfMemoryError(f'`: the exception's words open.
    let opening = regex!(r#"^raise [A-Za-z_][\w.]*\(\s*[fr]?["']"#).find(statement)?;
    let words = &statement[opening.end()..];
    let (family, offset) = detect_start_once(words)?;
    let gpu = !matches!(
        family,
        Family::Host(_) | Family::NotOom(_) | Family::IllegalAccess
    );
    (offset == 0 && gpu).then_some((family, from + opening.end()))
}

fn detect_start_once(text: &str) -> Option<(Family, usize)> {
    if frameworks::is_retried_allocation(text) || is_status_definition(text) {
        return None;
    }
    message_start(text).or_else(|| mention::mention_start(text))
}

/// Where a message in a family's own wording starts (every family but a mention in words).
fn message_start(text: &str) -> Option<(Family, usize)> {
    vllm::start(text)
        .or_else(|| tgi::start(text))
        .or_else(|| sglang::start(text))
        .or_else(|| llama_cpp::start(text))
        .or_else(|| pytorch::start(text))
        .or_else(|| frameworks::start(text))
        .or_else(|| devices::start(text))
        .or_else(|| science::start(text))
        .or_else(|| cuda::start(text))
        .or_else(|| host::start(text))
        .or_else(|| not_oom::start(text))
        .or_else(|| cuda::start_fallback(text))
        .or_else(|| class_only_start(text))
}

/// Whether a family other than a mention starts on this text (a message in its own wording).
pub(crate) fn starts_a_message(text: &str) -> bool {
    message_start(text).is_some()
}

/// An exception class that is a GPU OOM, printed without its message: PyTorch's
/// `OutOfMemoryError` (`torch.OutOfMemoryError`, `torch.cuda.OutOfMemoryError`) as IPython's
/// header (`OutOfMemoryError      Traceback (most recent call last)`) or a webui's `task:
/// OutOfMemoryError` (AUTOMATIC1111 `modules/errors.py` `display`), and TensorFlow's
/// `ResourceExhaustedError` (its OOM status, `tensorflow/python/framework/errors_impl.py`)
/// as that header or `ResourceExhaustedError: 2 root error(s) found.` / `…: Graph execution
/// error:` before the op's `OOM when allocating` line. The message, when the paste has it, comes
/// later and replaces this one (`detector::Pending`). Other `OutOfMemoryError` classes carry
/// their own text (`java.lang.OutOfMemoryError: Java heap space`, CuPy's, Ray's, Triton's `out
/// of resource`) and are not this.
fn class_only_start(text: &str) -> Option<(Family, usize)> {
    if let Some(begin) = cut_class_start(text) {
        return Some((Family::OtherGpu, begin));
    }
    for class in ["OutOfMemoryError", "ResourceExhaustedError"] {
        let Some(position) = find(text, class) else {
            continue;
        };
        let before = &text[..position];
        let rest = text[position + class.len()..].trim();
        // Ray re-raises a task's exception as a class named after it (`python/ray/
        // exceptions.py` `RayTaskError.make_dual_exception_type`: `name =
        // f"RayTaskError({cause_cls.__name__})"`), printed `ray.exceptions.RayTaskError(
        // OutOfMemoryError): ray::Worker.execute_model() (pid=…, ip=…)`: the task's own
        // OutOfMemoryError, whose message (when pasted) comes later in the worker's traceback.
        if before.ends_with("RayTaskError(") && rest.starts_with(')') {
            let wrapper = position - "RayTaskError(".len();
            let begin = text[..wrapper]
                .rfind(char::is_whitespace)
                .map_or(0, |at| crate::parse::text::after_char_at(text, at));
            return Some((Family::OtherGpu, begin));
        }
        // PyTorch's class with its message's head left out by the reporter (`torch.
        // OutOfMemoryError: Tried to allocate 3.56 GiB...`): the allocator's message, the
        // figures it keeps.
        let torch_class = before.ends_with("torch.") || before.ends_with("torch.cuda.");
        if class == "OutOfMemoryError"
            && torch_class
            && rest
                .strip_prefix(':')
                .is_some_and(|after| after.trim_start().starts_with("Tried to allocate "))
        {
            let begin = before
                .rfind(|c: char| c.is_whitespace() || matches!(c, '(' | '`'))
                .map_or(0, |at| crate::parse::text::after_char_at(before, at));
            return Some((Family::TorchAllocator(super::Accelerator::Cuda), begin));
        }
        if before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            || before.ends_with("lang.")
            || ["java", "import ", "except", "raise "]
                .iter()
                .any(|word| before.contains(word))
        {
            continue;
        }
        let class_only = rest.is_empty()
            || rest.starts_with("Traceback (most recent call last)")
            || (class == "ResourceExhaustedError"
                && rest
                    .strip_prefix(':')
                    .map(str::trim_start)
                    .is_some_and(|after| !after.is_empty()));
        if class_only {
            // (A markdown code span's backtick before the class is no part of it.)
            let begin = before
                .rfind(|c: char| c.is_whitespace() || matches!(c, '(' | '`'))
                .map_or(0, |at| crate::parse::text::after_char_at(before, at));
            return Some((Family::OtherGpu, begin));
        }
    }
    None
}

/// PyTorch's OOM class cut short at the end of a line, as a paste, a screenshot's OCR or a
/// log shipper's line limit leaves it: `torch.cuda.OutOfMem`, `OutOfMemoryErro…`, or the
/// class with the start of its message cut (`torch.OutOfMemoryError: CUDA out of mem`). The
/// cut word is at least `OutOfMem`, stands alone or after `torch.` / `torch.cuda.`, and
/// nothing but dots or an ellipsis follows; another class (`java.lang.OutOfMemoryError`,
/// CuPy's, Ray's) is not this. The position of the class.
fn cut_class_start(text: &str) -> Option<usize> {
    const CLASS: &str = "OutOfMemoryError";
    const MESSAGE: &str = "CUDA out of memory.";
    let position = find(text, "OutOfMem")?;
    let rest = text[position..].trim_end_matches(['.', '…', ' ']);
    // Nothing after the colon: the class whose message was cut off altogether (a traceback's
    // last line `torch.OutOfMemoryError:` where a paste ends), not code (`except
    // torch.cuda.OutOfMemoryError:`): the class starts the line or follows a log prefix.
    let mut bare = false;
    let cut = if let Some(message) = rest.strip_prefix("OutOfMemoryError:") {
        // The message cut before `out of memory` is whole (else `pytorch::start` read it).
        let message = message.trim_start();
        bare = message.is_empty();
        message.len() < MESSAGE.len() && MESSAGE.starts_with(message)
    } else {
        rest.len() < CLASS.len() && CLASS.starts_with(rest)
    };
    if !cut {
        return None;
    }
    let before = &text[..position];
    let owner = before
        .rsplit(|c: char| c.is_whitespace() || c == '(' || c == '\'' || c == '"')
        .next()
        .unwrap_or("");
    let start = position - owner.len();
    let lead = text[..start].trim_end();
    if bare && !(lead.is_empty() || lead.ends_with([':', ']', '>', '|'])) {
        return None;
    }
    matches!(owner, "" | "torch." | "torch.cuda.").then_some(start)
}

/// Whether a message is only an exception class ([`class_only_start`]).
pub(super) fn is_class_only(text: &str) -> bool {
    let text = text.trim();
    // The class with the allocator's figure kept (`torch.OutOfMemoryError: Tried to allocate
    // 3.56 GiB...`, `class_only_start`) is a message of its own.
    if text.contains("Tried to allocate ") {
        return false;
    }
    let class = text
        .split([' ', ':'])
        .next()
        .unwrap_or("")
        .rsplit('.')
        .next()
        .unwrap_or("");
    class == "OutOfMemoryError"
        || class == "ResourceExhaustedError"
        || cut_class_start(text) == Some(0)
}

/// A runtime's status code defined in its header, pasted from `hip_runtime_api.h` or
/// `driver_types.h` (`hipErrorOutOfMemory = 2,  ///< …`, `cudaErrorMemoryAllocation = 2`): the
/// name of the error, not the error.
fn is_status_definition(text: &str) -> bool {
    regex!(r"^\s*(?:cuda|hip|CUDA_|HIP_|CUBLAS_|CUDNN_|CURAND_)\w*\s*=\s*\d+\s*,?\s*(?:/[/*].*)?$")
        .is_match(text)
}
