//! The lines kept around a failure: those before it (from the block at hand and the tail of
//! earlier blocks) and those under it.

use super::*;

/// Lines `from..=to` (1-based), ending at line `line_no` whose text ends at `end` in `block`
/// (`block` starts with line `first_line`); older lines come from `tail`.
pub(super) fn gather_context(
    tail: &VecDeque<(u64, Vec<u8>)>,
    block: &[u8],
    first_line: u64,
    end: usize,
    line_no: u64,
    from: u64,
    to: u64,
) -> Vec<ContextLine> {
    let mut lines: Vec<ContextLine> = Vec::new();
    let mut cursor = end.min(block.len());
    let mut current = line_no;
    if !block.is_empty() {
        while current >= first_line && current >= from {
            let start = memchr::memrchr(b'\n', &block[..cursor]).map_or(0, |offset| offset + 1);
            if current <= to {
                lines.push(context_line(current, &block[start..cursor]));
            }
            if start == 0 {
                break;
            }
            cursor = start - 1;
            current -= 1;
        }
    }
    for (number, text) in tail.iter().rev() {
        if *number < from {
            break;
        }
        if *number < first_line && *number <= to {
            lines.push(context_line(*number, text));
        }
    }
    lines.sort_by_key(|line| line.line);
    lines.dedup_by_key(|line| line.line);
    lines
}

/// The lines of `block` from offset `start` (line `first`) on, up to line `to`.
pub(super) fn gather_after(
    block: &[u8],
    mut start: usize,
    first: u64,
    to: u64,
) -> Vec<ContextLine> {
    let mut lines = Vec::new();
    let mut current = first;
    while current <= to && start < block.len() {
        let rest = &block[start..];
        let Some(newline) = memchr::memchr(b'\n', rest) else {
            break;
        };
        lines.push(context_line(current, &rest[..newline]));
        start += newline + 1;
        current += 1;
    }
    lines
}

fn context_line(line: u64, raw: &[u8]) -> ContextLine {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let text = String::from_utf8_lossy(raw);
    let mut cleaned = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ params letter
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        if c == '\r' {
            cleaned.clear();
            continue;
        }
        cleaned.push(c);
    }
    if cleaned.chars().count() > MAX_CONTEXT_LINE_CHARS {
        cleaned = cleaned
            .chars()
            .take(MAX_CONTEXT_LINE_CHARS)
            .collect::<String>()
            + "…";
    }
    ContextLine {
        line,
        text: cleaned,
    }
}
