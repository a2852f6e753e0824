//! Text for a terminal kept to [`TEXT_WIDTH`] columns: prose is wrapped at spaces with a
//! hanging indent, and a quoted line (a log line after `| `, a timeline row quoting the log)
//! is cut with `…` (the whole line is in `--json`). Colour escapes take no column and are kept.

/// Width of the text reports (`report`, `diff`).
pub const TEXT_WIDTH: usize = 100;

/// The columns a string takes on a terminal: characters outside colour escapes.
pub fn columns(text: &str) -> usize {
    let mut count = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            count += 1;
        }
    }
    count
}

/// `text` cut to `width` columns with `…` at the end; colour escapes are kept (and reset
/// when one was cut short).
pub fn cut(text: &str, width: usize) -> String {
    if columns(text) <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut count = 0;
    let mut escaped = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            escaped = true;
            out.push(c);
            for c in chars.by_ref() {
                out.push(c);
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        if count + 1 == width {
            break;
        }
        out.push(c);
        count += 1;
    }
    out.push('…');
    if escaped {
        out.push_str("\x1b[0m");
    }
    out
}

/// Whether a line quotes input: `| ` after the indent (log lines) or a timeline row
/// (`+1m 45.0s  phase  event  <the log line>`).
fn is_quoted(line: &str) -> bool {
    let plain = strip(line);
    let body = plain.trim_start();
    body.starts_with("| ")
        || (body.starts_with('+') && body[1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// The line without colour escapes.
fn strip(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Where continuation lines of a wrapped line start: under the text of a bullet (`- `,
/// `3. `), under the value of a `label  value` line, else two columns in.
fn hanging_indent(line: &str) -> usize {
    let plain = strip(line);
    let indent = plain.len() - plain.trim_start().len();
    let body = &plain[indent..];
    if body.starts_with("- ") {
        return indent + 2;
    }
    let digits = body.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && body[digits..].starts_with(". ") {
        return indent + digits + 2;
    }
    // `Outcome    Failed …`, `driver   580  (nvml)`: the first gap of two or more spaces.
    if let Some(gap) = body.find("  ") {
        let label = &body[..gap];
        let value_at = gap + body[gap..].len() - body[gap..].trim_start().len();
        if !label.is_empty() && value_at <= 60 && label.chars().count() == label.len() {
            return indent + value_at;
        }
    }
    indent + 2
}

/// One line wrapped at spaces to `width` columns; a word longer than a line is cut in pieces.
fn wrap(line: &str, width: usize) -> Vec<String> {
    let hang = hanging_indent(line).min(width * 3 / 5);
    let plain = strip(line);
    let indent = plain.len() - plain.trim_start().len();
    let (lead, body) = line.split_at(line.len() - line.trim_start().len());
    let mut lines = Vec::new();
    let mut current = lead.to_owned();
    let mut used = indent;
    let mut empty = true;
    for word in body.split(' ') {
        let mut word = word.to_owned();
        let mut size = columns(&word);
        if !empty && used + 1 + size > width {
            lines.push(std::mem::replace(&mut current, " ".repeat(hang)));
            used = hang;
            empty = true;
        }
        // A word wider than a fresh line: pieces of what fits.
        while used + usize::from(!empty) + size > width && size > 0 {
            let room = width.saturating_sub(used + usize::from(!empty)).max(1);
            let split = word
                .char_indices()
                .nth(room)
                .map_or(word.len(), |(index, _)| index);
            if !empty {
                current.push(' ');
            }
            current.push_str(&word[..split]);
            lines.push(std::mem::replace(&mut current, " ".repeat(hang)));
            used = hang;
            empty = true;
            word = word[split..].to_owned();
            size = columns(&word);
        }
        if !empty {
            current.push(' ');
            used += 1;
        }
        current.push_str(&word);
        used += size;
        empty = false;
    }
    lines.push(current);
    lines
}

/// Every line of `text` fitted to `width` columns: quoted lines cut, others wrapped.
pub fn fit(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        if columns(body) <= width {
            out.push_str(line);
        } else if is_quoted(body) {
            out.push_str(&cut(body, width));
            out.push_str(newline);
        } else {
            let wrapped = wrap(body, width);
            let count = wrapped.len();
            for (index, piece) in wrapped.into_iter().enumerate() {
                out.push_str(piece.trim_end());
                if index + 1 < count {
                    out.push('\n');
                }
            }
            out.push_str(newline);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(text: &str) -> usize {
        text.lines().map(columns).max().unwrap_or(0)
    }

    #[test]
    fn prose_wraps_under_its_bullet_and_label() {
        let words = "word ".repeat(60);
        let text = format!("    - {words}\nOutcome    {words}\n  3. {words}\n");
        let fitted = fit(&text, 100);
        assert!(widest(&fitted) <= 100, "{fitted}");
        let lines: Vec<&str> = fitted.lines().collect();
        assert!(lines[0].starts_with("    - word"));
        assert!(lines[1].starts_with("      word"), "{fitted}");
        let outcome = lines.iter().position(|l| l.starts_with("Outcome")).unwrap();
        assert!(
            lines[outcome + 1].starts_with("           word"),
            "{fitted}"
        );
        let step = lines.iter().position(|l| l.starts_with("  3. ")).unwrap();
        assert!(lines[step + 1].starts_with("     word"), "{fitted}");
        // Nothing lost: the same words in the same order.
        let before: Vec<&str> = text.split_whitespace().collect();
        let after: Vec<&str> = fitted.split_whitespace().collect();
        assert_eq!(before, after);
    }

    #[test]
    fn quoted_lines_are_cut_with_an_ellipsis() {
        let log = "x".repeat(300);
        let text = format!("  | {log}\n  +1m 45.0s  unknown  failure  {log}\nshort\n");
        let fitted = fit(&text, 100);
        let lines: Vec<&str> = fitted.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(columns(lines[0]), 100);
        assert!(lines[0].ends_with('…'));
        assert!(lines[1].ends_with('…'));
        assert_eq!(lines[2], "short");
    }

    #[test]
    fn a_long_word_is_split_and_colour_takes_no_column() {
        let text = format!("  Command  {}\n", "z".repeat(250));
        let fitted = fit(&text, 100);
        assert!(widest(&fitted) <= 100, "{fitted}");
        assert_eq!(fitted.matches('z').count(), 250);
        let coloured = format!("\x1b[1m{}\x1b[0m", "b".repeat(98));
        assert_eq!(columns(&coloured), 98);
        assert_eq!(fit(&coloured, 100), coloured);
        let cut_line = cut(&format!("\x1b[31m| {}", "c".repeat(200)), 50);
        assert_eq!(columns(&cut_line), 50);
        assert!(cut_line.ends_with("…\x1b[0m"));
    }
}
