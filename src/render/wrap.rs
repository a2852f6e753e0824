//! Text for a terminal fits [`TEXT_WIDTH`] columns: words wrapped at spaces with a hanging
//! indent, a number kept on the line of its unit, a word longer than a line split. Widths are
//! counted in characters with our colour sequences (`ESC [ … m`, from `render::style`) left
//! out, so a coloured report wraps where the plain one does.

/// Widest line of a text report, in characters. Only a quoted log line may be longer, and it
/// is cut with `…` (the full line is in `--json` and `-v`).
pub const TEXT_WIDTH: usize = 100;

/// Characters of `text` a terminal shows: colour (SGR) sequences are not counted.
pub fn visible_width(text: &str) -> usize {
    let mut width = 0;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}' {
            if let Some(length) = sgr_length(rest) {
                rest = &rest[length..];
                continue;
            }
        }
        width += 1;
        rest = &rest[c.len_utf8()..];
    }
    width
}

/// Length of a colour sequence at the start of `text`: `ESC [`, digits and `;`, `m`.
fn sgr_length(text: &str) -> Option<usize> {
    let body = text.strip_prefix("\u{1b}[")?;
    let digits = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (body.as_bytes().get(digits) == Some(&b'm')).then_some(2 + digits + 1)
}

/// `text` cut to `width` visible characters, `…` where it was cut.
pub fn cut(text: &str, width: usize) -> String {
    if visible_width(text) <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Whether `word` is a unit (with trailing punctuation or not) that stays on the line of the
/// number before it.
fn is_unit(word: &str) -> bool {
    let word = word.trim_end_matches([',', '.', ';', ':', ')', ']']);
    matches!(
        word,
        "B" | "KiB"
            | "MiB"
            | "GiB"
            | "TiB"
            | "kB"
            | "KB"
            | "MB"
            | "GB"
            | "TB"
            | "s"
            | "ms"
            | "µs"
            | "%"
            | "tokens"
            | "blocks"
            | "bytes"
            | "requests"
            | "readings"
    )
}

/// Words of `text` for wrapping: a number and its unit are one word.
fn words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        match words.last_mut() {
            Some(last)
                if is_unit(word)
                    && last
                        .trim_start_matches(['(', '[', '+', '-', '−'])
                        .chars()
                        .last()
                        .is_some_and(|c| c.is_ascii_digit()) =>
            {
                last.push(' ');
                last.push_str(word);
            }
            _ => words.push(word.to_string()),
        }
    }
    words
}

/// `text` wrapped at [`TEXT_WIDTH`]: the first line starts with `first`, the others with
/// `indent` spaces. A word longer than a line is split.
pub fn wrap(text: &str, first: &str, indent: usize) -> Vec<String> {
    let rest = " ".repeat(indent.min(TEXT_WIDTH / 2));
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in words(text) {
        let used = visible_width(&line);
        let needed = visible_width(&word) + usize::from(!empty);
        if !empty && used + needed > TEXT_WIDTH {
            lines.push(std::mem::replace(&mut line, rest.clone()));
            empty = true;
        }
        let mut word = word.as_str();
        loop {
            let used = visible_width(&line) + usize::from(!empty);
            let room = TEXT_WIDTH.saturating_sub(used).max(1);
            if visible_width(word) <= room {
                if !empty {
                    line.push(' ');
                }
                line.push_str(word);
                empty = false;
                break;
            }
            if !empty && visible_width(&line) > rest.len() {
                // Start the long word on a fresh line before splitting it.
                lines.push(std::mem::replace(&mut line, rest.clone()));
                empty = true;
                continue;
            }
            let split = split_at_visible(word, room);
            if !empty {
                line.push(' ');
            }
            line.push_str(&word[..split]);
            lines.push(std::mem::replace(&mut line, rest.clone()));
            empty = true;
            word = &word[split..];
            if word.is_empty() {
                break;
            }
        }
    }
    if !empty || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Byte index in `word` after `count` visible characters (colour sequences are kept whole).
fn split_at_visible(word: &str, count: usize) -> usize {
    let mut seen = 0;
    let mut index = 0;
    while index < word.len() && seen < count {
        let rest = &word[index..];
        if let Some(length) = sgr_length(rest) {
            index += length;
            continue;
        }
        let c = rest.chars().next().map_or(1, char::len_utf8);
        index += c;
        seen += 1;
    }
    index.max(1).min(word.len())
}

/// Column where the continuation of `line` starts: under the text after a `- ` bullet, under
/// the value of a `label   value` row (two spaces or more after a label near the start), under
/// the text after a short `label: `, or two columns in from the line's own indent.
fn hanging_indent(line: &str) -> usize {
    let plain: String = strip_colour(line);
    let chars: Vec<char> = plain.chars().collect();
    let lead = chars.iter().take_while(|c| **c == ' ').count();
    if chars[lead..].starts_with(&['-', ' ']) || chars[lead..].starts_with(&['•', ' ']) {
        return lead + 2;
    }
    // A label then a run of two or more spaces, within the first 40 columns: a row of a
    // two-column list.
    let mut column = lead;
    while column + 1 < chars.len().min(40) {
        if chars[column] != ' ' && chars[column + 1] == ' ' && chars.get(column + 2) == Some(&' ') {
            let value = chars[column + 1..]
                .iter()
                .take_while(|c| **c == ' ')
                .count();
            let start = column + 1 + value;
            if start < 48 {
                return start;
            }
            break;
        }
        column += 1;
    }
    // A short label ending in `: ` (`why: `, `hint: `, `  Caused by: `): under the text after it.
    let head: String = chars[lead..].iter().take(LABEL_WIDTH + 2).collect();
    if let Some(colon) = head.find(": ") {
        let label = &head[..colon];
        let columns = label.chars().count();
        if columns <= LABEL_WIDTH && !label.contains(['(', '`', '[', '"', '\'']) {
            return lead + columns + 2;
        }
    }
    lead + 2
}

/// Widest label before `: ` that continuation lines hang under.
const LABEL_WIDTH: usize = 22;

/// `text` without colour sequences.
fn strip_colour(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(length) = sgr_length(rest) {
            rest = &rest[length..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Every line of `text` longer than [`TEXT_WIDTH`] wrapped at spaces, its continuation lines
/// indented by [`hanging_indent`]; lines that fit are kept as they are.
pub fn fit(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for (number, line) in text.split('\n').enumerate() {
        if number > 0 {
            out.push('\n');
        }
        if visible_width(line) <= TEXT_WIDTH {
            out.push_str(line);
            continue;
        }
        // The label (or bullet) before the hanging column is kept as written; the rest wraps.
        let hang = hanging_indent(line);
        let lead = line.len() - line.trim_start_matches(' ').len();
        let split = split_at_visible(line, hang);
        let keep = if hang > lead && line[..split].ends_with(' ') {
            split
        } else {
            lead
        };
        let lines = wrap(&line[keep..], &line[..keep], hang);
        out.push_str(&lines.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(text: &str) -> usize {
        text.lines().map(visible_width).max().unwrap_or(0)
    }

    #[test]
    fn lines_that_fit_are_kept() {
        let text = "a short line\n  indented  table  row\n\nend\n";
        assert_eq!(fit(text), text);
    }

    #[test]
    fn a_long_row_hangs_under_its_value() {
        let value = "+16.00 MiB per request (Theil–Sen), Mann–Kendall S = 12, z = 2.64, \
                     p = 0.004 (8 readings, 2 blocks); +112.00 MiB over 7 requests";
        let text = format!("  later half            {value}\n");
        let fitted = fit(&text);
        assert!(widest(&fitted) <= TEXT_WIDTH, "{fitted}");
        let lines: Vec<&str> = fitted.lines().collect();
        assert_eq!(lines.len(), 2, "{fitted}");
        assert!(lines[1].starts_with(&" ".repeat(24)), "{fitted}");
        assert!(!lines[1].starts_with(&" ".repeat(25)), "{fitted}");
        // Nothing is lost: the words are the same.
        let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&fitted), words(&text));
        // A number stays with its unit.
        assert!(!fitted.contains("112.00\n"), "{fitted}");
    }

    #[test]
    fn a_bullet_hangs_under_its_text_and_a_long_word_is_split() {
        let text = format!("  - see {} then more words", "x".repeat(230));
        let fitted = fit(&text);
        assert!(widest(&fitted) <= TEXT_WIDTH, "{fitted}");
        for line in fitted.lines().skip(1) {
            assert!(
                line.starts_with("    ") && !line.starts_with("     "),
                "{line}"
            );
        }
        assert_eq!(fitted.matches('x').count(), 230);
    }

    #[test]
    fn colour_is_not_counted() {
        let red = "\u{1b}[31mword\u{1b}[0m";
        assert_eq!(visible_width(red), 4);
        let text = vec![red; 30].join(" ");
        let fitted = fit(&text);
        assert!(widest(&fitted) <= TEXT_WIDTH, "{fitted}");
        assert!(fitted.lines().count() >= 2);
        assert_eq!(fitted.matches("\u{1b}[31m").count(), 30);
    }

    #[test]
    fn a_label_hangs_under_its_text() {
        let text = format!("hint: {}", "word ".repeat(40));
        let fitted = fit(&text);
        assert!(widest(&fitted) <= TEXT_WIDTH, "{fitted}");
        assert!(fitted.starts_with("hint: word word"), "{fitted}");
        for line in fitted.lines().skip(1) {
            assert!(line.starts_with("      word"), "{line}");
        }
        let text = format!("ab {}", "cd ".repeat(40));
        assert!(fit(&text).starts_with("ab cd cd"), "{}", fit(&text));
    }

    #[test]
    fn cut_marks_the_cut() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }
}
