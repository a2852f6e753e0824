//! Text for a terminal fits [`TEXT_WIDTH`] columns. Two layouts share the counting and cutting
//! here: [`fit`] (gpus, snapshot, probe, the run summary, errors) wraps words at spaces with a
//! hanging indent and keeps a number on the line of its unit; [`fit_quoting`] (report, diff)
//! cuts a quoted line (a log line after `| `, a timeline row quoting the log) with `…` and wraps
//! prose under its bullet, step number or value column. A word longer than a line is split.
//! Widths are counted in terminal columns (a CJK character takes two, a combining mark none) with
//! colour sequences (`ESC [ … m`, from `render::style`) left out, so a coloured report wraps
//! where the plain one does and a Chinese or Japanese quote fits the same 100 columns.

use unicode_width::UnicodeWidthChar;

/// Widest line of a text report, in terminal columns. Only a quoted log line may be longer, and it
/// is cut with `…` (the full line is in `--json` and `-v`).
pub const TEXT_WIDTH: usize = 100;

/// Columns a terminal gives `c`: two for wide (CJK, full-width) characters, none for combining
/// marks; a control character counts as one (it is shown escaped or as a space).
pub fn char_columns(c: char) -> usize {
    c.width().unwrap_or(1)
}

/// Columns `c` adds after `previous`: the emoji presentation selector (U+FE0F) shows a narrow
/// character before it as a two-column emoji (`⤵️`, `⚠️`), as terminals draw it.
fn columns_after(previous: Option<char>, c: char) -> usize {
    if c == '\u{FE0F}' {
        return usize::from(previous.is_some_and(|p| char_columns(p) == 1));
    }
    char_columns(c)
}

/// Columns of `text` a terminal shows: colour (SGR) sequences are not counted.
pub fn visible_width(text: &str) -> usize {
    let mut width = 0;
    let mut rest = text;
    let mut previous = None;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}' {
            if let Some(length) = sgr_length(rest) {
                rest = &rest[length..];
                continue;
            }
        }
        width += columns_after(previous, c);
        previous = Some(c);
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

/// `text` cut to `width` visible columns with `…` at the end; colour sequences are kept
/// (and reset when one was cut short).
pub fn cut(text: &str, width: usize) -> String {
    if visible_width(text) <= width {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut count = 0;
    let mut coloured = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(length) = sgr_length(rest) {
            coloured = true;
            out.push_str(&rest[..length]);
            rest = &rest[length..];
            continue;
        }
        let columns = columns_after(out.chars().next_back(), c);
        if count + columns + 1 > width {
            break;
        }
        out.push(c);
        count += columns;
        rest = &rest[c.len_utf8()..];
    }
    out.push('…');
    if coloured {
        out.push_str("\u{1b}[0m");
    }
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
            | "x"
            | "tokens"
            | "blocks"
            | "bytes"
            | "requests"
            | "readings"
            | "GPU"
            | "GPUs"
            | "free"
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

/// Byte index in `word` after at most `count` visible columns (colour sequences are kept whole;
/// a wide character that would pass `count` stays for the next piece). At least one character
/// is taken, so a caller that splits in a loop always moves on.
fn split_at_visible(word: &str, count: usize) -> usize {
    let mut seen = 0;
    let mut index = 0;
    let mut taken = false;
    while index < word.len() && (seen < count || !taken) {
        let rest = &word[index..];
        if let Some(length) = sgr_length(rest) {
            index += length;
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        let columns = char_columns(c);
        if taken && seen + columns > count {
            break;
        }
        index += c.len_utf8();
        seen += columns;
        taken = true;
    }
    index
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
/// indented by `hanging_indent`; lines that fit are kept as they are.
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

/// Every line of `text` fitted to [`TEXT_WIDTH`] in the layout of `report` and `diff`: a
/// quoted line (`is_quoted`) is cut with `…` (the whole line is in `--json`), another line
/// wrapped at spaces under `column_indent` with trailing spaces dropped; lines that fit are
/// kept as they are.
pub fn fit_quoting(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        if visible_width(body) <= TEXT_WIDTH {
            out.push_str(line);
        } else if is_quoted(body) {
            out.push_str(&cut(body, TEXT_WIDTH));
            out.push_str(newline);
        } else {
            let wrapped = wrap_under_column(body, TEXT_WIDTH);
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

/// Whether a line quotes input: `| ` after the indent (log lines) or a timeline row
/// (`+1m 45.0s  phase  event  <the log line>`).
fn is_quoted(line: &str) -> bool {
    let plain = strip_colour(line);
    let body = plain.trim_start();
    body.starts_with("| ")
        || (body.starts_with('+') && body[1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Where continuation lines of a report line start: under the text of a bullet (`- `, `3. `),
/// under the value of a `label  value` line, else two columns in.
fn column_indent(line: &str) -> usize {
    let plain = strip_colour(line);
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

/// One report line wrapped at spaces to `width` columns, continuation lines under
/// [`column_indent`]; a word longer than a line is cut in pieces.
fn wrap_under_column(line: &str, width: usize) -> Vec<String> {
    let hang = column_indent(line).min(width * 3 / 5);
    let plain = strip_colour(line);
    let indent = plain.len() - plain.trim_start().len();
    let (lead, body) = line.split_at(line.len() - line.trim_start().len());
    let mut lines = Vec::new();
    let mut current = lead.to_owned();
    let mut used = indent;
    let mut empty = true;
    for word in body.split(' ') {
        let mut word = word.to_owned();
        let mut size = visible_width(&word);
        if !empty && used + 1 + size > width {
            lines.push(std::mem::replace(&mut current, " ".repeat(hang)));
            used = hang;
            empty = true;
        }
        // A word wider than a fresh line: pieces of what fits.
        while used + usize::from(!empty) + size > width && size > 0 {
            let room = width.saturating_sub(used + usize::from(!empty)).max(1);
            let split = split_at_visible(&word, room);
            if !empty {
                current.push(' ');
            }
            current.push_str(&word[..split]);
            lines.push(std::mem::replace(&mut current, " ".repeat(hang)));
            used = hang;
            empty = true;
            word = word[split..].to_owned();
            size = visible_width(&word);
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

    #[test]
    fn report_prose_wraps_under_its_bullet_and_label() {
        let words = "word ".repeat(60);
        let text = format!("    - {words}\nOutcome    {words}\n  3. {words}\n");
        let fitted = fit_quoting(&text);
        assert!(widest(&fitted) <= TEXT_WIDTH, "{fitted}");
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
        let fitted = fit_quoting(&text);
        let lines: Vec<&str> = fitted.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(visible_width(lines[0]), TEXT_WIDTH);
        assert!(lines[0].ends_with('…'));
        assert!(lines[1].ends_with('…'));
        assert_eq!(lines[2], "short");
    }

    #[test]
    fn a_long_report_word_is_split_and_colour_takes_no_column() {
        let text = format!("  Command  {}\n", "z".repeat(250));
        let fitted = fit_quoting(&text);
        assert!(widest(&fitted) <= TEXT_WIDTH, "{fitted}");
        assert_eq!(fitted.matches('z').count(), 250);
        let coloured = format!("\u{1b}[1m{}\u{1b}[0m", "b".repeat(98));
        assert_eq!(visible_width(&coloured), 98);
        assert_eq!(fit_quoting(&coloured), coloured);
        let cut_line = cut(&format!("\u{1b}[31m| {}", "c".repeat(200)), 50);
        assert_eq!(visible_width(&cut_line), 50);
        assert!(cut_line.ends_with("…\u{1b}[0m"));
    }

    #[test]
    fn wide_characters_count_two_columns() {
        assert_eq!(visible_width("显存不足"), 8);
        assert_eq!(visible_width("a\u{301}"), 1);
        assert_eq!(visible_width("\u{1b}[1mメモリ\u{1b}[0m"), 6);
    }

    #[test]
    fn a_chinese_quote_wraps_within_the_width() {
        // A reporter's sentence without spaces, as evidence under a bullet.
        let quote =
            "我们直接跑脚本之后，在加载预训练模型时，三张显卡会同时加到八十吉字节，然后报显存不足";
        let text = format!("  - line 8: the reporter's words \"{quote}{quote}\" name the stage\n");
        let fitted = fit(&text);
        assert!(widest(&fitted) <= TEXT_WIDTH, "{fitted}");
        let quoted = fit_quoting(&text);
        assert!(widest(&quoted) <= TEXT_WIDTH, "{quoted}");
        // Nothing is lost.
        let joined = |t: &str| t.split_whitespace().collect::<String>();
        assert_eq!(joined(&fitted), joined(&text));
        assert_eq!(joined(&quoted), joined(&text));
        let lines = wrap(&format!("{quote}{quote}{quote}"), "  ", 4);
        assert!(
            lines.iter().all(|l| visible_width(l) <= TEXT_WIDTH),
            "{lines:?}"
        );
    }

    #[test]
    fn a_wide_quote_is_cut_within_the_width() {
        let line = format!("     12 | {}", "显存".repeat(80));
        let cut_line = cut(&line, TEXT_WIDTH);
        assert!(visible_width(&cut_line) <= TEXT_WIDTH, "{cut_line}");
        assert!(visible_width(&cut_line) >= TEXT_WIDTH - 1, "{cut_line}");
        assert!(cut_line.ends_with('…'));
        let quoted = format!("    | {}", "显存".repeat(80));
        assert_eq!(
            fit_quoting(&format!("{quoted}\n")),
            format!("{}\n", cut(&quoted, TEXT_WIDTH))
        );
    }

    #[test]
    fn splitting_never_lands_inside_a_character() {
        for room in 0..6 {
            let split = split_at_visible("显a存", room);
            assert!("显a存".is_char_boundary(split));
            assert!(split > 0);
        }
    }
}

#[test]
fn an_emoji_presentation_selector_widens_the_character_before_it() {
    assert_eq!(visible_width("⤵️ x"), 4);
    assert_eq!(visible_width("😀\u{FE0F}"), 2);
    let cut_line = cut("⤵️⤵️⤵️ abc", 5);
    assert!(visible_width(&cut_line) <= 5, "{cut_line}");
}
