//! Cleaning of messy log text, one line at a time: ANSI escapes, carriage returns, transport
//! timestamps and the prefixes that name a stream (rank, process, container).
//!
//! Real input is pasted from terminals, GitHub issues, docker-compose, kubectl and notebooks
//! (issue 2). This module only removes what is not part of the program's own output; it
//! keeps log-format timestamps and levels (`INFO 04-02 21:42:59 [...]`), which the engine-log
//! timeline needs. It must stay cheap: no regex is used; escapes are looked for with one
//! `memchr3` (ESC, `^`, `\`), `\r` with `memrchr`, and each prefix rule runs only when the
//! line's first byte can start it (digit, `[`, `(`, a letter followed by `|`, `>`, `*`, `│`).
//! Measured in release: 35–60 ns for a plain line, ~100–180 ns with a process prefix or ANSI.

use std::borrow::Cow;

/// Lines up to this long are searched by [`find_in_line`] without building a searcher.
const SHORT_LINE: usize = 512;

/// Where the text after the character found at byte `at` of `text` begins (`at` is the start
/// of a character, as `str::find` / `str::rfind` with a character predicate return it): `at`
/// plus that character's length, which is more than one byte for a character outside ASCII
/// (`、`, a no-break space), or `text.len()` at the end.
pub fn after_char_at(text: &str, at: usize) -> usize {
    at + text[at..].chars().next().map_or(0, char::len_utf8)
}

/// Whether a (trimmed) line is TensorFlow's own informational or warning log, with or without
/// the time its Python build prints first (`2023-03-15 06:09:56.391024: I tensorflow/core/
/// platform/cpu_feature_guard.cc:193] This TensorFlow binary is optimized …`), or the second line
/// of that CPU note (`To enable them in other operations, rebuild TensorFlow with the
/// appropriate compiler flags.`): lines `import tensorflow` prints by itself, not a program's.
pub fn is_tensorflow_log_line(text: &str) -> bool {
    if text.contains("rebuild TensorFlow with the appropriate compiler flags") {
        return true;
    }
    let rest = match text.split_once(": ") {
        Some((stamp, rest)) if stamp.starts_with(|c: char| c.is_ascii_digit()) => rest,
        _ => text,
    };
    let located = rest.match_indices(".cc:").any(|(at, found)| {
        let after = &rest[at + found.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && after[digits..].starts_with(']')
    });
    rest.len() > 2
        && matches!(rest.as_bytes()[0], b'I' | b'W')
        && rest[1..].starts_with(" tensorflow/")
        && located
}

/// Whether a (trimmed) line is a glog / absl line (`W1203 12:19:41.728928 3739
/// bfc_allocator.cc:371] …`: a level letter, MMDD, a time): XLA's, TensorFlow's and other C++
/// libraries' messages, not the program's own.
pub fn is_glog_line(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() > 20
        && matches!(bytes[0], b'I' | b'W' | b'E' | b'F')
        && bytes[1..5].iter().all(u8::is_ascii_digit)
        && bytes[5] == b' '
        && bytes[6..8].iter().all(u8::is_ascii_digit)
        && bytes[8] == b':'
}

/// The first position of `needle` in `hay`, as `memchr::memmem::find` gives it, for the line
/// parsers' many one-off searches of one short line each. `memmem::find` builds a searcher
/// per call (rare-byte tables, a Two-Way table) on a haystack of 64 bytes or more: about 850
/// instructions a call (callgrind, `oomdoc explain` on a generated serving log: 80,000 calls
/// for 22 MiB of parsed lines), more than the search of a line. Here a line up to
/// [`SHORT_LINE`] bytes is searched for the needle's first byte (`memchr`) and each place it
/// occurs compared with the rest: at most `SHORT_LINE` compares of the needle, whatever the
/// text; longer text goes to `memmem`. A needle that is valid UTF-8 found in a `str` starts
/// on a character boundary.
pub fn find_in_line(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let Some((&first, rest)) = needle.split_first() else {
        return Some(0);
    };
    let last_start = hay.len().checked_sub(needle.len())?;
    if hay.len() > SHORT_LINE {
        return memchr::memmem::find(hay, needle);
    }
    let mut from = 0;
    while let Some(at) = memchr::memchr(first, &hay[from..=last_start]) {
        let start = from + at;
        if hay[start + 1..start + needle.len()] == *rest {
            return Some(start);
        }
        from = start + 1;
    }
    None
}

/// One line after cleaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanLine<'a> {
    /// The text without ANSI escapes, `\r`, trailing whitespace and stream prefixes.
    pub text: Cow<'a, str>,
    /// The stream named by the removed prefix (`rank0`, `EngineCore pid=123`, `vllm-1`);
    /// nested prefixes are joined with `/` (`vllm-1/EngineCore_DP0 pid=7`).
    pub stream: Option<String>,
}

impl<'a> CleanLine<'a> {
    /// A line with no stream, for callers that already have clean text.
    pub fn plain(text: &'a str) -> CleanLine<'a> {
        CleanLine {
            text: Cow::Borrowed(text),
            stream: None,
        }
    }
}

/// Strips ANSI escapes (raw ESC, the literal caret form `^[[0;36m`, and the escaped forms
/// `\x1b[`, `\u001b[`, `\033[` found in JSON and notebooks), `^M`/`\r`, trailing whitespace,
/// and line prefixes: `[rank0]:`, `(EngineCore pid=123)`, `(VllmWorker rank=1 pid=…)`,
/// docker-compose `name  | `, kubectl/docker `--timestamps` prefixes (RFC 3339, any fraction),
/// syslog/journald `May 01 10:00:00 host python[123]: `,
/// notebook junk (`----> 12 ` arrows, JSON-quoted output lines of an `.ipynb`); the removed prefix
/// identifying the stream goes to `stream` (e.g. "rank0", "EngineCore pid=123", "vllm-1").
pub fn clean_line(raw: &str) -> CleanLine<'_> {
    let mut text: Cow<'_, str> = Cow::Borrowed(raw);

    // A pager's view pasted as text spells ESC out (`ESC[2m2024-07-20T03:34:19ZESC[0m
    // ESC[31mERRORESC[0m`, `less` without `-R`): read as the escapes it stands for.
    static SPELLED_ESC: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("ESC["));
    if SPELLED_ESC.find(raw.as_bytes()).is_some() {
        let spelled = raw.replace("ESC[", "\x1b[");
        if let Some(stripped) = strip_escapes(&spelled) {
            text = Cow::Owned(stripped);
        }
    } else if needs_escape_pass(raw) {
        if let Some(stripped) = strip_escapes(raw) {
            text = Cow::Owned(stripped);
        }
    }
    text = keep_after_carriage_return(text);
    text = trim_end_cow(text);

    let mut stream: Option<String> = None;
    // Prefixes nest (`vllm-1  | [rank0]: ...`, `2024-...Z (EngineCore pid=1) ...`); a few rounds suffice.
    for _ in 0..4 {
        let first = match text.as_bytes().first() {
            Some(byte) => *byte,
            None => break,
        };
        let cut = match first {
            b'0'..=b'9' => transport_timestamp_len(&text).map(|len| Cut::Prefix(len, None)),
            b'[' => bracket_stream(&text).map(|(len, stream)| Cut::Prefix(len, stream)),
            b'(' => paren_stream(&text).map(|(len, stream)| Cut::Prefix(len, stream)),
            b'"' | b' ' | b'\t' => {
                notebook_json_line(&text).map(|(start, end)| Cut::Inner(start, end))
            }
            b'-' => jupyter_arrow_len(&text).map(|len| Cut::Prefix(len, None)),
            b'>' | b'*' => markdown_junk(&text).map(|(start, end)| Cut::Inner(start, end)),
            // A paste opened with markdown's inline-code backtick before a stream's prefix
            // (`` `tabbyapi-1  | Tried to allocate … ``): the backtick is the reporter's, the
            // prefix the log's. Not a fence (```), nor code quoted in prose.
            b'`' => {
                let rest = &text[1..];
                // (Each reader is asked only of the lines it reads: the first byte decides, as
                // in the `match` above.)
                let prefixed = match rest.as_bytes().first() {
                    Some(b'[') => bracket_stream(rest).is_some(),
                    Some(b'a'..=b'z' | b'A'..=b'Z') => compose_stream(rest).is_some(),
                    _ => false,
                };
                prefixed.then_some(Cut::Prefix(1, None))
            }
            0xE2 => tui_frame(&text).map(|(start, end)| Cut::Inner(start, end)),
            b'A'..=b'Z' => syslog_prefix_len(&text)
                .map(|len| Cut::Prefix(len, None))
                .or_else(|| compose_stream(&text).map(|(len, stream)| Cut::Prefix(len, stream))),
            b'a'..=b'z' => compose_stream(&text).map(|(len, stream)| Cut::Prefix(len, stream)),
            _ => None,
        };
        match cut {
            None => break,
            Some(Cut::Prefix(len, name)) => {
                if let Some(name) = name {
                    match stream.as_mut() {
                        Some(outer) => {
                            outer.push('/');
                            outer.push_str(&name);
                        }
                        None => stream = Some(name),
                    }
                }
                text = slice_cow(text, len, usize::MAX);
            }
            Some(Cut::Inner(start, end)) => text = slice_cow(text, start, end),
        }
    }

    CleanLine { text, stream }
}

/// What one round of prefix removal cuts.
enum Cut {
    /// Drop the first `len` bytes; the prefix may name a stream.
    Prefix(usize, Option<String>),
    /// Keep only `start..end` (a quoted notebook output line).
    Inner(usize, usize),
}

/// The kubectl/docker `--timestamps` prefix of a raw line (`2024-05-01T12:34:56.123456789Z`),
/// which [`clean_line`] removes; callers that want it for a timeline can read it here.
pub fn transport_timestamp(raw: &str) -> Option<&str> {
    transport_timestamp_len(raw).map(|len| raw[..len].trim_end())
}

/// A raw line without its transport timestamp ([`transport_timestamp`]), for readers of raw
/// lines that look at how the program's own line starts.
pub fn after_transport_timestamp(raw: &str) -> &str {
    match raw.as_bytes().first() {
        Some(b'0'..=b'9') => transport_timestamp_len(raw).map_or(raw, |len| &raw[len..]),
        _ => raw,
    }
}

fn needs_escape_pass(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    memchr::memchr3(0x1b, b'^', b'\\', bytes).is_some()
}

fn slice_cow(text: Cow<'_, str>, start: usize, end: usize) -> Cow<'_, str> {
    let end = end.min(text.len());
    let start = start.min(end);
    match text {
        Cow::Borrowed(s) => Cow::Borrowed(s.get(start..end).unwrap_or("")),
        Cow::Owned(s) => Cow::Owned(s.get(start..end).unwrap_or("").to_string()),
    }
}

fn trim_end_cow(text: Cow<'_, str>) -> Cow<'_, str> {
    let mut trimmed_len = text.trim_end().len();
    // A literal `^M` (caret notation of \r) left at the end by `cat -v` or a pager.
    while text[..trimmed_len].ends_with("^M") {
        trimmed_len = text[..trimmed_len - 2].trim_end().len();
    }
    if trimmed_len == text.len() {
        text
    } else {
        slice_cow(text, 0, trimmed_len)
    }
}

/// A terminal shows only what follows the last carriage return of a line (progress bars).
fn keep_after_carriage_return(text: Cow<'_, str>) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if memchr::memrchr(b'\r', bytes).is_none() {
        return text;
    }
    // Trailing \r (CRLF, vLLM's `\r\n` joins) is not an overwrite.
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\r' | b'\n' | b' ' | b'\t') {
        end -= 1;
    }
    let Some(last) = memchr::memrchr(b'\r', &bytes[..end]) else {
        return slice_cow(text, 0, end);
    };
    let tail_start = last + 1;
    if text[tail_start..end].trim().is_empty() {
        slice_cow(text, 0, last)
    } else {
        slice_cow(text, tail_start, end)
    }
}

/// Removes ANSI escape sequences in raw and textual forms. `None` when nothing was removed.
fn strip_escapes(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut changed = false;
    let mut index = 0;
    let mut copied_from = 0;
    while index < bytes.len() {
        // Jump to the next byte that can open an escape (raw ESC, `^[`, `\x1b`/`\u001b`/`\033`).
        match memchr::memchr3(0x1b, b'^', b'\\', &bytes[index..]) {
            Some(offset) => index += offset,
            None => break,
        }
        let introducer_len = escape_introducer_len(&bytes[index..]);
        if introducer_len == 0 {
            index += 1;
            continue;
        }
        let sequence_end = escape_sequence_end(bytes, index, introducer_len);
        match sequence_end {
            Some(end) => {
                out.push_str(&raw[copied_from..index]);
                index = end;
                copied_from = end;
                changed = true;
            }
            None => index += 1,
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&raw[copied_from..]);
    Some(out)
}

/// Length of an escape introducer at the start of `bytes`: raw ESC, `^[`, `\x1b`, `\u001b`,
/// `\033`, `\e` (0 when none).
fn escape_introducer_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(0x1b) => 1,
        Some(b'^') if bytes.get(1) == Some(&b'[') => 2,
        Some(b'\\') => {
            const FORMS: [&[u8]; 5] = [b"\\x1b", b"\\x1B", b"\\u001b", b"\\u001B", b"\\033"];
            FORMS
                .iter()
                .find(|form| bytes.starts_with(form))
                .map(|form| form.len())
                .unwrap_or(0)
        }
        _ => 0,
    }
}

/// End (exclusive) of an escape sequence whose introducer starts at `start`, if well formed.
fn escape_sequence_end(bytes: &[u8], start: usize, introducer_len: usize) -> Option<usize> {
    let mut index = start + introducer_len;
    let raw_esc = introducer_len == 1;
    match bytes.get(index) {
        Some(b'[') => {
            index += 1;
            // CSI: parameter bytes 0x30–0x3f, intermediate bytes 0x20–0x2f, final byte 0x40–0x7e.
            while let Some(&byte) = bytes.get(index) {
                if (0x30..=0x3f).contains(&byte) {
                    index += 1;
                } else {
                    break;
                }
            }
            while let Some(&byte) = bytes.get(index) {
                if (0x20..=0x2f).contains(&byte) {
                    index += 1;
                } else {
                    break;
                }
            }
            match bytes.get(index) {
                Some(&byte) if (0x40..=0x7e).contains(&byte) => Some(index + 1),
                _ => None,
            }
        }
        Some(b']') if raw_esc => {
            // OSC: until BEL or ESC \ (hyperlinks, window titles).
            index += 1;
            while let Some(&byte) = bytes.get(index) {
                if byte == 0x07 {
                    return Some(index + 1);
                }
                if byte == 0x1b && bytes.get(index + 1) == Some(&b'\\') {
                    return Some(index + 2);
                }
                index += 1;
            }
            Some(bytes.len())
        }
        Some(&byte) if raw_esc && (0x40..=0x5f).contains(&byte) => Some(index + 1),
        // A lone raw ESC is dropped; a textual introducer without `[` is kept as text.
        _ if raw_esc => Some(index),
        _ => None,
    }
}

/// `2024-05-01T12:34:56.123456789Z ` (kubectl `--timestamps`, `docker logs -t`), and the same
/// RFC 3339 shape with another fraction (`.123Z` of a log shipper, `.1234567Z` of a CI runner,
/// none) or an offset (`+00:00`, journald's `short-iso` `+0000`), followed by a space.
/// TGI's own tracing timestamps (`2024-05-01T10:00:00.123456Z  INFO text_generation_launcher:`)
/// are log content and kept: a tracing level padded to five characters follows them, then a
/// target (vLLM's `INFO 05-01 …` after a transport timestamp has a date there instead).
fn transport_timestamp_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.len() < 21 {
        return None;
    }
    let digits = |range: std::ops::Range<usize>| range.clone().all(|i| bytes[i].is_ascii_digit());
    let shape = digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10)
        && bytes[10] == b'T'
        && digits(11..13)
        && bytes[13] == b':'
        && digits(14..16)
        && bytes[16] == b':'
        && digits(17..19);
    if !shape {
        return None;
    }
    let mut index = 19;
    let mut fraction = 0;
    if bytes[19] == b'.' {
        fraction = bytes[20..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if fraction == 0 {
            return None;
        }
        index = 20 + fraction;
    }
    match bytes.get(index) {
        Some(b'Z') => index += 1,
        Some(b'+') | Some(b'-') => {
            let offset = bytes.get(index + 1..)?;
            let hhmm =
                |len: usize| offset.len() >= len && offset[..2].iter().all(u8::is_ascii_digit);
            if hhmm(5) && offset[2] == b':' && offset[3..5].iter().all(u8::is_ascii_digit) {
                index += 6;
            } else if hhmm(4) && offset[2..4].iter().all(u8::is_ascii_digit) {
                index += 5;
            } else {
                return None;
            }
        }
        _ => return None,
    }
    if bytes.get(index) != Some(&b' ') {
        return None;
    }
    index += 1;
    if fraction != 9 && is_tracing_level(&bytes[index..]) {
        return None;
    }
    Some(index)
}

/// A `tracing` event's level column and the target after it (`ERROR text_generation_router:`,
/// ` INFO download:`): the timestamp before it belongs to the log line.
fn is_tracing_level(rest: &[u8]) -> bool {
    const LEVELS: [&[u8]; 5] = [b" INFO ", b" WARN ", b"ERROR ", b"DEBUG ", b"TRACE "];
    LEVELS.iter().any(|level| rest.starts_with(level))
        && rest
            .get(6)
            .is_some_and(|b| !b.is_ascii_digit() && *b != b' ')
}

/// A syslog or journald (`journalctl`'s default `short` output) prefix:
/// `May 01 10:00:00 host python[123]: ` or `May  1 10:00:00 host kernel: `, removed without a
/// stream (the program's lines are one stream, whatever the daemon says).
fn syslog_prefix_len(text: &str) -> Option<usize> {
    const MONTHS: [&[u8]; 12] = [
        b"Jan ", b"Feb ", b"Mar ", b"Apr ", b"May ", b"Jun ", b"Jul ", b"Aug ", b"Sep ", b"Oct ",
        b"Nov ", b"Dec ",
    ];
    let bytes = text.as_bytes();
    if bytes.len() < 20 || !MONTHS.iter().any(|month| bytes.starts_with(month)) {
        return None;
    }
    let day_ok = (bytes[4] == b' ' || bytes[4].is_ascii_digit()) && bytes[5].is_ascii_digit();
    let clock = &bytes[7..15];
    let clock_ok = bytes[6] == b' '
        && clock[2] == b':'
        && clock[5] == b':'
        && [0, 1, 3, 4, 6, 7]
            .iter()
            .all(|&i| clock[i].is_ascii_digit())
        && bytes[15] == b' ';
    if !day_ok || !clock_ok {
        return None;
    }
    // `host ident[pid]: ` — two tokens, the second ending in `:`.
    let rest = &bytes[16..];
    let host_end = memchr::memchr(b' ', &rest[..rest.len().min(128)])?;
    if host_end == 0 {
        return None;
    }
    let ident = &rest[host_end + 1..];
    let colon = memchr::memchr(b':', &ident[..ident.len().min(128)])?;
    let ident_ok = colon > 0
        && ident[..colon].iter().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'[' | b']' | b'-' | b'_' | b'.' | b'/' | b'@')
        });
    if !ident_ok {
        return None;
    }
    let mut end = 16 + host_end + 1 + colon + 1;
    if bytes.get(end) == Some(&b' ') {
        end += 1;
    }
    Some(end)
}

/// A line copied from a terminal UI pane (k9s, lazydocker): `│ text   │` → the range of `text`.
fn tui_frame(text: &str) -> Option<(usize, usize)> {
    const BAR: &str = "\u{2502}";
    let inner = text.strip_prefix(BAR)?;
    let inner = inner.strip_suffix(BAR).unwrap_or(inner);
    let start = BAR.len() + (inner.len() - inner.trim_start_matches(' ').len()).min(1);
    let end = BAR.len() + inner.trim_end().len();
    (start <= end).then_some((start, end))
}

/// `[rank0]:`, `[default3]:` (torchrun `--tee`), `[1,0]<stderr>:` (mpirun `--tag-output`); also a
/// CI runner's `[2026-02-24T20:21:58Z] ` timestamp (Buildkite), removed without a stream.
fn bracket_stream(text: &str) -> Option<(usize, Option<String>)> {
    let bytes = text.as_bytes();
    if let Some(len) = bracket_ci_timestamp_len(bytes) {
        return Some((len, None));
    }
    let close = memchr::memchr(b']', &bytes[..bytes.len().min(24)])?;
    let inside = &text[1..close];
    let is_rank_like = !inside.is_empty()
        && inside
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b',' || b == b'_')
        && inside.bytes().any(|b| b.is_ascii_digit())
        && inside
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b.is_ascii_digit());
    if !is_rank_like {
        return None;
    }
    let mut index = close + 1;
    // mpirun: `[1,0]<stdout>:`
    if bytes.get(index) == Some(&b'<') {
        let end = memchr::memchr(b'>', &bytes[index..])? + index;
        index = end + 1;
    }
    if bytes.get(index) != Some(&b':') {
        return None;
    }
    index += 1;
    if bytes.get(index) == Some(&b' ') {
        index += 1;
    }
    // `[rank0]:` alone must look like a rank, not a log level such as `[INFO]:` (no digit there).
    Some((index, Some(inside.to_string())))
}

/// `[2026-02-24T20:21:58Z] ` or with a fraction: a transport timestamp in brackets.
fn bracket_ci_timestamp_len(bytes: &[u8]) -> Option<usize> {
    let shape = bytes.len() > 22
        && bytes[1..5].iter().all(u8::is_ascii_digit)
        && bytes[5] == b'-'
        && bytes[11] == b'T'
        && bytes[14] == b':';
    if !shape {
        return None;
    }
    let close = memchr::memchr(b']', &bytes[..bytes.len().min(40)])?;
    if bytes[close - 1] != b'Z' {
        return None;
    }
    let mut end = close + 1;
    if bytes.get(end) == Some(&b' ') {
        end += 1;
    }
    Some(end)
}

/// `(EngineCore pid=123) `, `(VllmWorker rank=1 pid=45) `, `(RayWorkerWrapper pid=9, ip=10.0.0.2) `,
/// `(pid=77) `: a parenthesised process tag holding `pid=`.
fn paren_stream(text: &str) -> Option<(usize, Option<String>)> {
    let bytes = text.as_bytes();
    let window = &bytes[..bytes.len().min(160)];
    let close = memchr::memchr(b')', window)?;
    let inside = &text[1..close];
    if inside.contains('(') || !inside.contains("pid=") {
        return None;
    }
    let mut index = close + 1;
    if bytes.get(index) == Some(&b' ') {
        index += 1;
    }
    Some((index, Some(inside.trim().to_string())))
}

/// docker-compose `name  | ` (service name, padding, bar). The name must be one token with a letter.
fn compose_stream(text: &str) -> Option<(usize, Option<String>)> {
    let bytes = text.as_bytes();
    let window = &bytes[..bytes.len().min(96)];
    let bar = memchr::memchr(b'|', window)?;
    let name_end = bytes[..bar].iter().position(|b| *b == b' ').unwrap_or(bar);
    if name_end == 0 || bytes[name_end..bar].iter().any(|b| *b != b' ') || name_end == bar {
        return None;
    }
    let name = &text[..name_end];
    // loguru's `ERROR    | 2024-… | …` is a level column, not a service name.
    if name.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let name_ok = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !name_ok {
        return None;
    }
    let mut index = bar + 1;
    if bytes.get(index) == Some(&b' ') {
        index += 1;
    }
    Some((index, Some(name.to_string())))
}

/// Markdown pasted around a log line: a blockquote `> ` or bold `**` opening the line
/// (`**(VllmWorker rank=5 pid=…) ERROR …**` in a GitHub issue).
fn markdown_junk(text: &str) -> Option<(usize, usize)> {
    if text.starts_with("> ") {
        return Some((2, text.len()));
    }
    let rest = text.strip_prefix("**")?;
    if !rest.starts_with(['(', '[']) {
        return None;
    }
    let end = if rest.ends_with("**") {
        text.len() - 2
    } else {
        text.len()
    };
    Some((2, end))
}

/// Jupyter's traceback arrow `----> 12 ` pointing at the failing source line.
fn jupyter_arrow_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let dashes = bytes.iter().take_while(|b| **b == b'-').count();
    if dashes < 2 || bytes.get(dashes) != Some(&b'>') {
        return None;
    }
    let mut index = dashes + 1;
    while bytes.get(index) == Some(&b' ') {
        index += 1;
    }
    let digits = bytes[index..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    index += digits;
    if bytes.get(index) == Some(&b' ') {
        index += 1;
    }
    Some(index)
}

/// An output line of an `.ipynb` JSON file: `    "text\n",` → the range of `text`.
fn notebook_json_line(text: &str) -> Option<(usize, usize)> {
    let start = text.find('"')?;
    if !text[..start].bytes().all(|b| b == b' ' || b == b'\t') {
        return None;
    }
    let rest = &text[start + 1..];
    let inner_len = rest
        .strip_suffix("\\n\",")
        .or_else(|| rest.strip_suffix("\\n\""))?
        .len();
    Some((start + 1, start + 1 + inner_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_in_line_finds_what_memmem_finds() {
        let long = format!("{} --max-model-len 4096", "x".repeat(SHORT_LINE));
        let hays = [
            "",
            "a",
            "INFO 11-29 10:00:01 api_server.py:585] args: --max-model-len=8192 --max-model-len 4",
            "--max-model-len",
            "--max-model-le",
            "aaaaaaaaab aaab aab",
            "caf\u{e9} \u{2014} r\u{e9}sum\u{e9} 显存不足 显存",
            long.as_str(),
        ];
        let needles = [
            "",
            "a",
            "--max-model-len",
            "aab",
            "aaab",
            "显存",
            "\u{e9}s",
            "4096",
            "zz",
        ];
        for hay in hays {
            for needle in needles {
                assert_eq!(
                    find_in_line(hay.as_bytes(), needle.as_bytes()),
                    memchr::memmem::find(hay.as_bytes(), needle.as_bytes()),
                    "{needle:?} in {hay:?}"
                );
            }
        }
    }

    fn clean(raw: &str) -> (String, Option<String>) {
        let line = clean_line(raw);
        (line.text.into_owned(), line.stream)
    }

    #[test]
    fn plain_line_is_borrowed_and_trimmed() {
        let line = clean_line("CUDA out of memory.   ");
        assert!(matches!(line.text, Cow::Borrowed(_)));
        assert_eq!(line.text, "CUDA out of memory.");
        assert_eq!(line.stream, None);
    }

    #[test]
    fn strips_escapes_spelled_out_by_a_pager() {
        assert_eq!(
            clean("ESC[2m2024-07-20T03:34:19.641538ZESC[0m ESC[31mERRORESC[0m ESC[1membedESC[0m").0,
            "2024-07-20T03:34:19.641538Z ERROR embed"
        );
        // The letters alone are words.
        assert_eq!(clean("ESCAPE key pressed").0, "ESCAPE key pressed");
    }

    #[test]
    fn strips_raw_and_caret_ansi() {
        assert_eq!(
            clean("\x1b[0;36m(EngineCore pid=123)\x1b[0;0m ERROR here"),
            ("ERROR here".into(), Some("EngineCore pid=123".into()))
        );
        assert_eq!(
            clean("^[[0;36m(VllmWorker rank=1 pid=4567)^[[0;0m INFO x^M"),
            ("INFO x".into(), Some("VllmWorker rank=1 pid=4567".into()))
        );
        assert_eq!(
            clean("\\u001b[0;31mOutOfMemoryError\\u001b[0m: CUDA out of memory."),
            ("OutOfMemoryError: CUDA out of memory.".into(), None)
        );
    }

    #[test]
    fn strips_a_backtick_before_a_streams_prefix() {
        assert_eq!(
            clean("`tabbyapi-1  | Tried to allocate 14.00 MiB.").0,
            "Tried to allocate 14.00 MiB."
        );
        assert_eq!(clean("`[rank0]: boom").0, "boom");
        // Code quoted in prose, and a fence, keep their backticks.
        assert_eq!(clean("`out = model(x)` fails").0, "`out = model(x)` fails");
        assert_eq!(clean("```python").0, "```python");
    }

    #[test]
    fn strips_rank_and_compose_prefixes() {
        assert_eq!(
            clean("[rank0]: torch.OutOfMemoryError: CUDA"),
            ("torch.OutOfMemoryError: CUDA".into(), Some("rank0".into()))
        );
        assert_eq!(
            clean("vllm-1  | (EngineCore_DP0 pid=7) ERROR boom\r"),
            (
                "ERROR boom".into(),
                Some("vllm-1/EngineCore_DP0 pid=7".into())
            )
        );
        assert_eq!(
            clean("2024-05-01T12:34:56.123456789Z [rank1]:   File \"x.py\""),
            ("  File \"x.py\"".into(), Some("rank1".into()))
        );
    }

    #[test]
    fn keeps_log_format_and_tables() {
        assert_eq!(
            clean("2024-06-17T13:18:29.371622Z  INFO shard-manager: ok").0,
            "2024-06-17T13:18:29.371622Z  INFO shard-manager: ok"
        );
        assert_eq!(clean("| a | b |").0, "| a | b |");
        assert_eq!(clean("[INFO]: started").0, "[INFO]: started");
        assert_eq!(
            clean("slot update_slots: id  0 | task 0 | x").0,
            "slot update_slots: id  0 | task 0 | x"
        );
    }

    #[test]
    fn ci_timestamps_tui_frames_and_markdown() {
        assert_eq!(
            clean("[2026-02-24T20:21:58Z] (EngineCore_DP0 pid=6940) ValueError: x"),
            (
                "ValueError: x".into(),
                Some("EngineCore_DP0 pid=6940".into())
            )
        );
        assert_eq!(
            clean("\u{2502} ERROR 09-27 engine.py:157] RuntimeError: y      \u{2502}").0,
            "ERROR 09-27 engine.py:157] RuntimeError: y"
        );
        assert_eq!(
            clean("**(VllmWorker rank=5 pid=50999) ERROR z**"),
            ("ERROR z".into(), Some("VllmWorker rank=5 pid=50999".into()))
        );
        assert_eq!(clean("> RuntimeError: q").0, "RuntimeError: q");
        assert_eq!(
            clean("ERROR    | 2024-08-21 22:56:04 | autotrain").0,
            "ERROR    | 2024-08-21 22:56:04 | autotrain"
        );
        assert_eq!(
            clean("[1,0]<stderr>: boom"),
            ("boom".into(), Some("1,0".into()))
        );
        assert_eq!(
            transport_timestamp("2024-05-01T12:34:56.123456789Z text"),
            Some("2024-05-01T12:34:56.123456789Z")
        );
    }

    #[test]
    fn transport_timestamps_of_any_fraction_and_offset() {
        let oom = "torch.OutOfMemoryError: CUDA out of memory.";
        for prefix in [
            "2024-05-01T10:00:00.123456789Z ",
            "2024-05-01T10:00:00.123Z ",
            "2024-05-01T10:00:00.1234567Z ",
            "2024-05-01T10:00:00Z ",
            "2024-05-01T10:00:00.123+00:00 ",
            "2024-05-01T10:00:00.123456-07:00 ",
            "2024-05-01T10:00:00+0000 ",
        ] {
            assert_eq!(clean(&format!("{prefix}{oom}")).0, oom, "{prefix:?}");
        }
        // kubectl's prefix before a vLLM line, and before a TGI line (whose own stays).
        assert_eq!(
            clean("2024-05-01T10:00:00.123Z INFO 05-01 10:00:00 [worker.py:267] x").0,
            "INFO 05-01 10:00:00 [worker.py:267] x"
        );
        let tgi = "2024-05-01T10:00:00.123456Z  INFO text_generation_launcher: Starting";
        assert_eq!(clean(tgi).0, tgi);
        let tgi_error = "2024-05-01T10:00:00.123456Z ERROR warmup{max_input_length=4096}: x";
        assert_eq!(clean(tgi_error).0, tgi_error);
        assert_eq!(clean(&format!("2024-05-01T10:00:00.123Z {tgi}")).0, tgi);
        // Not a transport timestamp: no space after it, a bad offset, a date alone, a table.
        for kept in [
            "2024-05-01T10:00:00.123Z|x",
            "2024-05-01T10:00:00.Z x",
            "2024-05-01T10:00:00+00 x",
            "2024-05-01 10:00:00,123 INFO x",
            "2024-05-01 | 3 | 40.00 GiB",
        ] {
            assert_eq!(clean(kept).0, kept);
        }
    }

    #[test]
    fn syslog_and_journald_prefixes() {
        for (line, text) in [
            (
                "May 01 10:00:00 gpu-host python[123]: torch.OutOfMemoryError: CUDA out of memory.",
                "torch.OutOfMemoryError: CUDA out of memory.",
            ),
            (
                "Dec  2 06:54:36 node7 kernel: Out of memory: Killed process 4242 (python)",
                "Out of memory: Killed process 4242 (python)",
            ),
            (
                "Jan 15 23:01:02 h ollama[9]: time=2024-01-15T23:01:02 level=INFO msg=x",
                "time=2024-01-15T23:01:02 level=INFO msg=x",
            ),
        ] {
            assert_eq!(clean(line), (text.into(), None), "{line:?}");
        }
        for kept in [
            "May be out of memory: see below",
            "Mar 2024 release notes: x",
            "Jun 01 10:00:00 no-ident-colon here",
            "OOM when allocating tensor with shape[1]",
        ] {
            assert_eq!(clean(kept).0, kept);
        }
    }

    #[test]
    fn lone_escapes_and_osc_links() {
        assert_eq!(clean("a\x1bb").0, "ab");
        assert_eq!(
            clean("\x1b]8;;http://x\x07link\x1b]8;;\x07 end").0,
            "link end"
        );
        assert_eq!(clean("^[[B^[[BINFO 03-11 x").0, "INFO 03-11 x");
        assert_eq!(clean("keep ^[ literal").0, "keep ^[ literal");
    }

    #[test]
    fn progress_bar_keeps_last_segment() {
        assert_eq!(clean("Loading 10%\rLoading 20%\r\n").0, "Loading 20%");
    }

    #[test]
    fn notebook_junk() {
        assert_eq!(
            clean("    \"OutOfMemoryError: CUDA out of memory.\\n\",").0,
            "OutOfMemoryError: CUDA out of memory."
        );
        assert_eq!(clean("----> 5 y = model(x)").0, "y = model(x)");
    }
}
