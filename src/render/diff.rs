//! Render `oomdoc diff` output, and the comparison section of `oomdoc report`.
//!
//! Changed inputs come first, outcomes apart; the warning about more than one change is
//! part of every format. Pure: takes the (redacted) comparison, returns bytes.

use serde_json::Value;

use crate::analyze::compare::{Change, Comparison};
use crate::model::record_view::value_text;
use crate::model::Bytes;
use crate::render::html::escape;
use crate::render::markdown::cell as md_cell;
use crate::render::style::Style;

/// A change value for people: bytes in binary units with the exact count, `absent` for null.
pub fn show_value(field: &str, value: &Value) -> String {
    match value {
        Value::Null => "(absent)".to_owned(),
        Value::Number(number) if field.ends_with("_bytes") => match number.as_u64() {
            Some(bytes) => format!("{} ({bytes} bytes)", Bytes(bytes)),
            None => number.to_string(),
        },
        other => value_text(other).unwrap_or_default(),
    }
}

fn table(rows: &[Vec<String>], indent: &str) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0usize; columns];
    for row in rows {
        for (index, cell) in row.iter().enumerate() {
            widths[index] = widths[index].max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for row in rows {
        let mut line = indent.to_owned();
        for (index, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if index + 1 < row.len() {
                let pad = widths[index] - cell.chars().count() + 2;
                line.push_str(&" ".repeat(pad));
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// Aligned text columns, each row indented.
pub fn text_table(rows: &[Vec<String>], indent: &str) -> String {
    table(rows, indent)
}

fn change_rows(changes: &[Change]) -> Vec<Vec<String>> {
    let mut rows = vec![vec!["field".to_owned(), "A".to_owned(), "B".to_owned()]];
    rows.extend(changes.iter().map(|change| {
        vec![
            change.field.clone(),
            show_value(&change.field, &change.a),
            show_value(&change.field, &change.b),
        ]
    }));
    rows
}

/// The comparison as text (no header line).
pub fn comparison_text(comparison: &Comparison, style: &Style) -> String {
    let mut text = String::new();
    text.push_str(&format!(
        "A: {}\nB: {}\n\n",
        comparison.run_a, comparison.run_b
    ));
    if comparison.changes.is_empty() {
        text.push_str(&style.bold("Inputs: no recorded input differs"));
        text.push('\n');
    } else {
        text.push_str(&style.bold(&format!(
            "Inputs that changed ({})",
            comparison.changes.len()
        )));
        text.push('\n');
        text.push_str(&table(&change_rows(&comparison.changes), "  "));
    }
    if let Some(warning) = &comparison.warning {
        text.push('\n');
        text.push_str(&style.warn(&format!("warning: {warning}")));
        text.push('\n');
    }
    text.push('\n');
    text.push_str(&style.bold("Outcome"));
    text.push('\n');
    text.push_str(&format!("  {}\n", comparison.outcome.summary));
    if !comparison.outcome.differences.is_empty() {
        text.push_str(&table(&change_rows(&comparison.outcome.differences), "  "));
    }
    if !comparison.notes.is_empty() {
        text.push('\n');
        text.push_str(&style.bold("Notes"));
        text.push('\n');
        for note in &comparison.notes {
            text.push_str(&format!("  - {note}\n"));
        }
    }
    text
}

fn md_changes(changes: &[Change]) -> String {
    let mut text = String::from("| field | A | B |\n|---|---|---|\n");
    for change in changes {
        text.push_str(&format!(
            "| `{}` | {} | {} |\n",
            md_cell(&change.field),
            md_cell(&show_value(&change.field, &change.a)),
            md_cell(&show_value(&change.field, &change.b))
        ));
    }
    text
}

/// The comparison as Markdown, under headings of level `level`.
pub fn comparison_markdown(comparison: &Comparison, level: usize) -> String {
    let hashes = "#".repeat(level);
    let mut text = format!(
        "- A: `{}`\n- B: `{}`\n\n",
        md_cell(&comparison.run_a),
        md_cell(&comparison.run_b)
    );
    if comparison.changes.is_empty() {
        text.push_str(&format!(
            "{hashes} Inputs\n\nNo recorded input differs.\n\n"
        ));
    } else {
        text.push_str(&format!(
            "{hashes} Inputs that changed ({})\n\n{}\n",
            comparison.changes.len(),
            md_changes(&comparison.changes)
        ));
    }
    if let Some(warning) = &comparison.warning {
        text.push_str(&format!("> **Warning:** {warning}\n\n"));
    }
    text.push_str(&format!(
        "{hashes} Outcome\n\n{}\n\n",
        comparison.outcome.summary
    ));
    if !comparison.outcome.differences.is_empty() {
        text.push_str(&md_changes(&comparison.outcome.differences));
        text.push('\n');
    }
    if !comparison.notes.is_empty() {
        text.push_str(&format!("{hashes} Notes\n\n"));
        for note in &comparison.notes {
            text.push_str(&format!("- {note}\n"));
        }
        text.push('\n');
    }
    text
}

fn html_changes(changes: &[Change]) -> String {
    let mut html = String::from("<table><tr><th>field</th><th>A</th><th>B</th></tr>");
    for change in changes {
        html.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            escape(&change.field),
            escape(&show_value(&change.field, &change.a)),
            escape(&show_value(&change.field, &change.b))
        ));
    }
    html.push_str("</table>\n");
    html
}

/// The comparison as an HTML fragment (every string escaped), headings of level `level`.
pub fn comparison_html(comparison: &Comparison, level: usize) -> String {
    let mut html = format!(
        "<p>A: <code>{}</code><br>B: <code>{}</code></p>\n",
        escape(&comparison.run_a),
        escape(&comparison.run_b)
    );
    if comparison.changes.is_empty() {
        html.push_str(&format!(
            "<h{level}>Inputs</h{level}><p>No recorded input differs.</p>\n"
        ));
    } else {
        html.push_str(&format!(
            "<h{level}>Inputs that changed ({})</h{level}>\n{}",
            comparison.changes.len(),
            html_changes(&comparison.changes)
        ));
    }
    if let Some(warning) = &comparison.warning {
        html.push_str(&format!(
            "<p class=\"warn\"><strong>Warning:</strong> {}</p>\n",
            crate::render::html::prose(warning)
        ));
    }
    html.push_str(&format!(
        "<h{level}>Outcome</h{level}>\n<p>{}</p>\n",
        crate::render::html::prose(&comparison.outcome.summary)
    ));
    if !comparison.outcome.differences.is_empty() {
        html.push_str(&html_changes(&comparison.outcome.differences));
    }
    if !comparison.notes.is_empty() {
        html.push_str(&format!("<h{level}>Notes</h{level}>\n<ul>"));
        for note in &comparison.notes {
            html.push_str(&format!("<li>{}</li>", crate::render::html::prose(note)));
        }
        html.push_str("</ul>\n");
    }
    html
}

/// `oomdoc diff` as text.
pub fn render_text(comparison: &Comparison, style: &Style) -> Vec<u8> {
    let mut text = style.bold("oomdoc diff: inputs apart from outcomes");
    text.push_str("\n\n");
    text.push_str(&comparison_text(comparison, style));
    crate::render::width::fit(&text, crate::render::width::TEXT_WIDTH).into_bytes()
}

/// `oomdoc diff` as Markdown.
pub fn render_markdown(comparison: &Comparison) -> Vec<u8> {
    let mut text = String::from("# oomdoc diff\n\n");
    text.push_str(&comparison_markdown(comparison, 2));
    text.into_bytes()
}

/// `oomdoc diff` as one self-contained HTML page.
pub fn render_html(comparison: &Comparison) -> Vec<u8> {
    let body = format!("<h1>oomdoc diff</h1>\n{}", comparison_html(comparison, 2));
    crate::render::html::page("oomdoc diff", "", &body).into_bytes()
}

/// `oomdoc diff --json`.
pub fn render_json(comparison: &Comparison) -> Result<Vec<u8>, serde_json::Error> {
    crate::render::json::to_document(comparison)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_show_binary_units_and_exact_count() {
        assert_eq!(
            show_value("gpu[0].free_before_bytes", &Value::from(1u64 << 30)),
            "1.00 GiB (1073741824 bytes)"
        );
        assert_eq!(show_value("flag --x", &Value::Null), "(absent)");
    }
}
