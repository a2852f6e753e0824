//! Native frames of a pasted error: PyTorch's C++ backtrace (`c10::Error`), dmlc's (XGBoost,
//! MXNet) and `backtrace`-style frames, and Rust's panics' backtraces, each kept with its
//! function (and class) for `analyze::phase` to read.

use super::super::common::after;
use super::LineFacts;

/// A C++ frame of a PyTorch error (`c10::Error`'s backtrace, `c10/util/Backtrace.cpp`):
/// `frame #4: at::native::slow_conv_transpose3d_backward_out_cuda_template(...) + 0x1f (0x7f… in
/// /…/site-packages/torch/lib/libtorch_cuda.so)`. The function is kept with its class
/// (`ConvolutionBackward0::apply`, `Engine::evaluate_function`) and the library as its file;
/// `analyze::phase` reads autograd's frames from them.
/// The file of a native frame whose library the paste cut off.
pub const NATIVE: &str = "<native>";

pub(super) fn native_frame(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "frame #") else {
        return;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(symbol) = rest[digits..].strip_prefix(": ") else {
        return;
    };
    if digits == 0 {
        return;
    }
    // A paste may cut the line inside or before its `(0x… in /…/lib.so)`: the C++ name (`a::b`)
    // then stands alone and the file is `<native>`.
    let library = symbol
        .rsplit_once(" in ")
        .map(|(_, tail)| tail.trim_end().trim_end_matches(')'))
        .filter(|library| library.contains(".so") || library.contains(".dll"))
        .unwrap_or(NATIVE);
    // The name ends where its arguments or the offset begin (`(anonymous namespace)::` is
    // part of the name, not its arguments).
    let symbol = symbol.replace("(anonymous namespace)::", "");
    let end = symbol.find(['(', ' ']).unwrap_or(symbol.len());
    let qualified = &symbol[..end];
    let mut parts = qualified.rsplit("::");
    let name = parts.next().unwrap_or("");
    if name.is_empty() || library == NATIVE && !qualified.contains("::") {
        return;
    }
    let function = match parts.next() {
        Some(class) if !class.is_empty() && !class.starts_with('(') => format!("{class}::{name}"),
        _ => name.to_string(),
    };
    facts.frame = Some((function, library.to_string()));
}

/// The `Type::method` of a qualified C++ or Rust name (`a::b::KVCacheManager::allocatePools`
/// → `KVCacheManager::allocatePools`; a trait method `<a::NormalLoader as b::Loader>::load`
/// → `Loader::load`, the trait's, which every implementor shares), template and generic
/// arguments and closures dropped; `None` for a name with no `::`.
pub(super) fn type_and_method(symbol: &str) -> Option<String> {
    let mut name = symbol.trim();
    // A trait implementation's `<X as Trait>::method`: the trait names the method.
    let trait_method;
    if let Some(rest) = name.strip_prefix('<') {
        let close = rest.rfind(">::")?;
        let inner = &rest[..close];
        let method = &rest[close + 3..];
        let owner = inner
            .rsplit_once(" as ")
            .map_or(inner, |(_, the_trait)| the_trait);
        trait_method = format!("{owner}::{method}");
        name = &trait_method;
    }
    let mut plain = String::with_capacity(name.len());
    let mut depth = 0usize;
    // (A C++ ABI tag is no part of the name: `RuntimeBuffers::prepareStep[abi:cxx11]`.)
    let mut tag = false;
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            '[' if depth == 0 => tag = true,
            ']' if tag => tag = false,
            _ if depth == 0 && !tag => plain.push(c),
            _ => {}
        }
    }
    let mut parts: Vec<&str> = plain
        .split("::")
        .filter(|part| !part.is_empty() && !part.starts_with("{{") && !is_rust_hash(part))
        .collect();
    let method = parts.pop()?;
    let owner = parts.pop()?;
    if method.contains(' ') || owner.contains(' ') {
        return None;
    }
    Some(format!("{owner}::{method}"))
}

/// A Rust symbol's hash suffix (`h1a2b3c4d5e6f7a8b`).
pub(super) fn is_rust_hash(part: &str) -> bool {
    part.len() == 17 && part.starts_with('h') && part[1..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// A frame of dmlc-core's stack trace (`dmlc/logging.h` `StackTrace`, printed under an
/// `XGBoostError` or an MXNet `MXNetError`): `  [bt] (5) /…/xgboost/lib/libxgboost.so(
/// XGBoosterUpdateOneIter+0x70) [0x7fdf58545…]`, the exported C symbol between the library's
/// `(` and the offset's `+`, with the library as its file. Frames of an offset alone
/// (`libxgboost.so(+0x41589e)`) name no function. A paste that escaped the newlines keeps
/// several frames on one line: the first named one is kept.
pub(super) fn dmlc_frame(text: &str, facts: &mut LineFacts) {
    if facts.frame.is_some() {
        return;
    }
    for (at, _) in text.match_indices("[bt] (") {
        let rest = &text[at + "[bt] (".len()..];
        let Some((_, tail)) = rest.split_once(") ") else {
            continue;
        };
        let tail = tail.trim_start();
        let end = tail.find([' ', '\\']).unwrap_or(tail.len());
        let frame = &tail[..end];
        let Some(open) = frame
            .find(".so(")
            .or_else(|| frame.find(".dll("))
            .or_else(|| frame.find(".dylib("))
        else {
            continue;
        };
        let library_end = frame[open..].find('(').map_or(frame.len(), |p| open + p);
        let symbol = &frame[library_end + 1..];
        let name_end = symbol.find(['+', ')']).unwrap_or(symbol.len());
        let name = &symbol[..name_end];
        let is_name = name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
        if is_name && symbol[name_end..].starts_with('+') {
            facts.frame = Some((name.to_string(), frame[..library_end].to_string()));
            return;
        }
    }
}

/// A frame of a C++ backtrace as `backtrace_symbols` and TensorRT-LLM's `TllmException` print it
/// (`3       0x7cb3c5bae3ab tensorrt_llm::batch_manager::kv_cache_manager::KVCacheManager::
/// allocatePools(bool) + 61`): the `Type::method` with `<native>` as its file, innermost first
/// as printed. Frames of an address alone, or a library and an offset, name no function.
pub(super) fn backtrace_frame(text: &str, facts: &mut LineFacts) {
    let trimmed = text.trim_start();
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return;
    }
    let rest = trimmed[digits..].trim_start();
    let Some(address) = rest.strip_prefix("0x") else {
        return;
    };
    let hex = address.bytes().take_while(u8::is_ascii_hexdigit).count();
    let Some(symbol) = address[hex..].strip_prefix(' ') else {
        return;
    };
    let symbol = symbol.rsplit_once(" + ").map_or(symbol, |(name, _)| name);
    let symbol = symbol.find('(').map_or(symbol, |open| &symbol[..open]);
    // A return type before the name (`void tensorrt_llm::common::check<cudaError>`).
    let symbol = symbol.rsplit(' ').next().unwrap_or(symbol);
    if let Some(function) = type_and_method(symbol) {
        facts.frame = Some((function, NATIVE.to_string()));
    }
}

/// What a gdb frame's file starts with: gdb prints a backtrace innermost first, and the frames
/// are put back in call order as they are kept (`analyze::explain` `note_printed`).
pub const GDB: &str = "<gdb>";

/// A frame of gdb's `bt`, as ggml's `ggml_print_backtrace` (llama.cpp, whisper.cpp and ollama's
/// runner since 2024: it attaches gdb to the aborting process) and users' own sessions print it:
/// `#15 0x000063a052cd93a0 in server_context::update_slots (this=0x7ffc…) at
/// examples/server/server.cpp:2339`, `#6  0x… in llama_init_from_gpt_params(gpt_params&) ()`,
/// `#14 llama_decode (ctx=…, batch=...) at src/llama.cpp:18338` (an inlined frame, no address),
/// `#3  0x… in ggml_abort () from /app/libggml-base.so`. The function is kept as its
/// `Type::method` or its C name, with the source file (or the library, or nothing) after
/// [`GDB`]; frames gdb could not name (`??`) are skipped.
pub(super) fn gdb_frame(text: &str, facts: &mut LineFacts) {
    if facts.frame.is_some() {
        return;
    }
    // (Some pastes put the frame inside Markdown's bold marks: `#7  0x… **in f (…) at …**`.)
    let line = text.trim().replace("**", "");
    let Some(rest) = line.strip_prefix('#') else {
        return;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !rest[digits..].starts_with(' ') {
        return;
    }
    let mut rest = rest[digits..].trim_start();
    if let Some(address) = rest.strip_prefix("0x") {
        let hex = address.bytes().take_while(u8::is_ascii_hexdigit).count();
        let Some(after) = address[hex..].strip_prefix(" in ") else {
            return;
        };
        rest = after;
    }
    let Some(open) = rest.find('(') else {
        return;
    };
    let symbol = rest[..open].trim_end();
    let file = rest
        .rsplit_once(") at ")
        .map(|(_, at)| at.rsplit_once(':').map_or(at, |(file, _)| file))
        .or_else(|| rest.rsplit_once(") from ").map(|(_, library)| library))
        .unwrap_or_default()
        .trim();
    let function = if symbol.contains("::") {
        type_and_method(symbol)
    } else {
        let c_name = !symbol.is_empty()
            && symbol.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && symbol
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        c_name.then(|| symbol.to_string())
    };
    if let Some(function) = function {
        facts.frame = Some((function, format!("{GDB}{file}")));
    }
}

/// A frame of a Rust backtrace (`RUST_BACKTRACE=1`, `anyhow`/`candle` errors: `   4:
/// <mistralrs_core::pipeline::normal::NormalLoader as mistralrs_core::pipeline::loaders::
/// Loader>::load_model_from_path`): the `Type::method` ([`type_and_method`]) with `<native>`
/// as its file, innermost first as printed.
pub(super) fn rust_frame(text: &str, facts: &mut LineFacts) {
    let Some(symbol) = numbered_symbol(text, facts) else {
        return;
    };
    let symbol = symbol.trim_end();
    // One path, or `<X as Trait>::method`: no other spaces.
    let spaces_ok = symbol.starts_with('<') || !symbol.contains(' ');
    // An async function's body runs as its closure (`mistralrs_core::engine::Engine::run::
    // {{closure}}`, mistral.rs#651): the frame is the function's.
    let mut symbol = symbol;
    while let Some(outer) = symbol.strip_suffix("::{{closure}}") {
        symbol = outer;
    }
    if !spaces_ok || !symbol.contains("::") || symbol.contains("{{closure}}") {
        return;
    }
    if let Some(function) = type_and_method(symbol) {
        facts.frame = Some((function, NATIVE.to_string()));
    }
}

/// A frame of TVM's FFI traceback (`tvm/src/runtime/logging.cc`, as MLC-LLM's C++ chat module
/// raises it through Python: `  8: mlc::llm::LLMChat::Reload(tvm::runtime::TVMArgValue, …)`
/// over `        at /workspace/mlc-llm/cpp/llm_chat.cc:504`): the method with its class.
pub(super) fn tvm_frame(text: &str, facts: &mut LineFacts) {
    let Some(symbol) = numbered_symbol(text, facts) else {
        return;
    };
    let name = &symbol[..symbol.find('(').unwrap_or(symbol.len())];
    if name.contains(' ') || !name.starts_with("mlc::") {
        return;
    }
    if let Some(function) = type_and_method(name) {
        facts.frame = Some((function, NATIVE.to_string()));
    }
}

/// The symbol of a numbered backtrace line (`   4: a::b::C::method…`, Rust's and TVM's), when
/// the line has set no frame yet.
fn numbered_symbol<'a>(text: &'a str, facts: &LineFacts) -> Option<&'a str> {
    let trimmed = text.trim_start();
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || facts.frame.is_some() {
        return None;
    }
    trimmed[digits..].strip_prefix(": ")
}
