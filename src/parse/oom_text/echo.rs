//! A serving engine's echo of a request or a response: the user's prompt or the model's output
//! printed in the engine's log. Whatever words they hold are content, not the engine's own
//! failure: a prompt that quotes `CUDA out of memory. Tried to allocate 2.00 GiB` (a user
//! asking about an error) reports nothing about this server.
//!
//! The echo lines, from the engines' request loggers:
//! - vLLM `vllm/entrypoints/logger.py` `RequestLogger.log_inputs`: `Received request %s:
//!   prompt: %r, params: …` (V0 and V1), and `log_outputs`: `Generated response %s: output:
//!   %r, …` (`--enable-log-outputs`).
//! - SGLang `python/sglang/srt/managers/tokenizer_manager.py` (`--log-requests`): `Receive:
//!   obj=GenerateReqInput(text=…)` and `Finish: obj=…, out={'text': …}`.

use memchr::memmem;

/// Where the echoed text starts on `line` (the byte after `prompt: `, `output: ` or `obj=`),
/// when `line` is an engine's echo of a request or a response; whatever follows is content.
pub fn content_start(line: &[u8]) -> Option<usize> {
    // Every opener holds one of these: most lines are passed over by one search or two.
    let finish = memmem::find(line, b"Finish: obj=");
    if finish.is_none()
        && memmem::find(line, b"Receive").is_none()
        && memmem::find(line, b"Generated response ").is_none()
    {
        return None;
    }
    let after = |opener: &[u8], field: &[u8]| {
        let at = memmem::find(line, opener)? + opener.len();
        let rest = &line[at..];
        memmem::find(rest, field).map(|found| at + found + field.len())
    };
    after(b"Received request ", b": prompt: ")
        .or_else(|| after(b"Received request ", b": prompt_token_ids: "))
        .or_else(|| after(b"Generated response ", b": output: "))
        .or_else(|| after(b"Receive: obj=", b""))
        .or_else(|| finish.map(|at| at + b"Finish: obj=".len()))
}
