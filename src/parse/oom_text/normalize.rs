//! A message's text as it is kept (whitespace runs collapsed, a terminal's wrap inside a word
//! joined) and as it is matched (squeezed: no whitespace at all).

/// Appends `piece` with whitespace runs collapsed to one space, control bytes dropped, and
/// long runs of spaces between two lowercase letters removed (terminal wrap: `reser     ved`).
pub(super) fn append_normalized(out: &mut String, piece: &str) {
    if piece.is_ascii() {
        append_normalized_ascii(out, piece);
    } else {
        append_normalized_chars(out, piece);
    }
}

/// [`append_normalized`] character by character.
pub(super) fn append_normalized_chars(out: &mut String, piece: &str) {
    let mut run = 0usize;
    let mut previous: Option<char> = out.chars().next_back();
    for c in piece.chars() {
        if c.is_whitespace() {
            run += 1;
            continue;
        }
        if c.is_control() {
            continue;
        }
        if run > 0 {
            let joins_word = run >= 3
                && previous.is_some_and(|p| p.is_ascii_lowercase())
                && c.is_ascii_lowercase();
            if !joins_word && previous.is_some_and(|p| p != ' ') {
                out.push(' ');
            }
            run = 0;
        }
        out.push(c);
        previous = Some(c);
    }
}

/// Whether an ASCII byte is whitespace as `char::is_whitespace` has it (`u8`'s own test
/// leaves out the vertical tab).
fn is_space(byte: u8) -> bool {
    byte.is_ascii_whitespace() || byte == 0x0b
}

/// [`append_normalized`] for an ASCII `piece` (the usual case), a run of plain bytes at a
/// time.
pub(super) fn append_normalized_ascii(out: &mut String, piece: &str) {
    let bytes = piece.as_bytes();
    // The last character so far; anything not ASCII stands as 0x80 (neither a lowercase
    // letter nor a space, all the rules ask).
    let mut previous: Option<u8> = out
        .chars()
        .next_back()
        .map(|c| u8::try_from(c).ok().filter(u8::is_ascii).unwrap_or(0x80));
    let mut run = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if is_space(byte) {
            run += 1;
            at += 1;
            continue;
        }
        if byte.is_ascii_control() {
            at += 1;
            continue;
        }
        if run > 0 {
            let joins_word = run >= 3
                && previous.is_some_and(|p| p.is_ascii_lowercase())
                && byte.is_ascii_lowercase();
            if !joins_word && previous.is_some_and(|p| p != b' ') {
                out.push(' ');
            }
            run = 0;
        }
        let start = at;
        while at < bytes.len() && !is_space(bytes[at]) && !bytes[at].is_ascii_control() {
            at += 1;
        }
        out.push_str(&piece[start..at]);
        previous = Some(bytes[at - 1]);
    }
}

/// Appends `piece` without any whitespace (control bytes other than whitespace are kept:
/// PyTorch 2.2/2.3 prints the GPU index as a raw byte). Escaped `\n`, `\t`, `\r` count as
/// whitespace too: messages inside a string literal or repr keep them (TGI's Rust panic of the
/// cudaMallocAsync block, `tests/fixtures/oom_text/tgi-0.9-malloc-async-in-rust-panic.txt`).
pub(super) fn squeeze_into(out: &mut String, piece: &str) {
    if piece.is_ascii() {
        // The usual case, a slice at a time: runs of bytes other than whitespace and `\`.
        let bytes = piece.as_bytes();
        let mut start = 0;
        let mut at = 0;
        while at < bytes.len() {
            let byte = bytes[at];
            let skip = match byte {
                b'\\' if matches!(bytes.get(at + 1), Some(b'n' | b't' | b'r')) => 2,
                _ if is_space(byte) => 1,
                _ => 0,
            };
            if skip == 0 {
                at += 1;
                continue;
            }
            out.push_str(&piece[start..at]);
            at += skip;
            start = at;
        }
        out.push_str(&piece[start..]);
    } else {
        squeeze_chars(out, piece);
    }
}

/// [`squeeze_into`] character by character.
pub(super) fn squeeze_chars(out: &mut String, piece: &str) {
    let mut chars = piece.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('n' | 't' | 'r')) {
            chars.next();
            continue;
        }
        if !c.is_whitespace() {
            out.push(c);
        }
    }
}
