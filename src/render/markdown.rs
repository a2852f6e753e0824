//! The one Markdown escaper of the crate: text from logs and records (`|`, `<module>`, line
//! breaks) never breaks a table or becomes raw HTML.

/// Text for Markdown: `|` escaped (it would end a table cell), `<` and `>` as entities (so
/// `<module>` is shown, not taken for HTML).
pub fn escape(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A table cell: [`escape`]d, line breaks as spaces.
pub fn cell(text: &str) -> String {
    escape(&text.replace('\n', " "))
}

/// Prose that holds code spans (`` `--max-model-len` ``): `<` and `>` outside the spans become
/// entities; inside them Markdown shows them as they are.
pub fn prose(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(index, part)| {
            if index % 2 == 1 {
                part.to_owned()
            } else {
                part.replace('<', "&lt;").replace('>', "&gt;")
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// A table: the header as given (ours), each cell [`cell`]-escaped, a blank line after.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut text = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for row in rows {
        let cells: Vec<String> = row.iter().map(|text| cell(text)).collect();
        text.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_and_prose_never_become_html_or_break_a_table() {
        assert_eq!(cell("a | <module>\nb"), "a \\| &lt;module&gt; b");
        assert_eq!(escape("x|y"), "x\\|y");
        assert_eq!(prose("in <module>: `a<b>`"), "in &lt;module&gt;: `a<b>`");
        assert_eq!(
            table(&["k", "v"], &[vec!["a|b".to_owned(), "<c>".to_owned()]]),
            "| k | v |\n|---|---|\n| a\\|b | &lt;c&gt; |\n\n"
        );
    }
}
