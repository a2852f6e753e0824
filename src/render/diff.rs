//! Render `oomdoc diff` output, and the comparison section of `oomdoc report`.
//!
//! Changed inputs come first, outcomes apart; the warning about more than one change is
//! part of every format. Pure: takes the (redacted) comparison, returns bytes.

use crate::analyze::compare::{Change, Comparison, ComparisonPart, FieldValue};
use crate::model::Bytes;
use crate::render::html::{escape, list as html_list, prose as html_prose, table as html_table};
use crate::render::markdown::{cell as md_cell, prose as md_prose, table as md_table};
use crate::render::style::Style;

/// A change value for people: bytes in binary units with the exact count, `absent` for null.
pub fn show_value(field: &str, value: &FieldValue) -> String {
    match value {
        FieldValue::Absent => "(absent)".to_owned(),
        FieldValue::Unsigned(bytes) if field.ends_with("_bytes") => {
            format!("{} ({bytes} bytes)", Bytes(*bytes))
        }
        other => other.text().unwrap_or_default(),
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
    for part in comparison.parts() {
        match part {
            ComparisonPart::Runs { a, b } => text.push_str(&format!("A: {a}\nB: {b}\n\n")),
            ComparisonPart::Inputs([]) => {
                text.push_str(&style.bold("Inputs: no recorded input differs"));
                text.push('\n');
            }
            ComparisonPart::Inputs(changes) => {
                text.push_str(&style.bold(&format!("Inputs that changed ({})", changes.len())));
                text.push('\n');
                text.push_str(&table(&change_rows(changes), "  "));
            }
            ComparisonPart::Warning(warning) => {
                text.push('\n');
                text.push_str(&style.warn(&format!("warning: {warning}")));
                text.push('\n');
            }
            ComparisonPart::Outcome {
                summary,
                differences,
            } => {
                text.push('\n');
                text.push_str(&style.bold("Outcome"));
                text.push_str(&format!("\n  {summary}\n"));
                if !differences.is_empty() {
                    text.push_str(&table(&change_rows(differences), "  "));
                }
            }
            ComparisonPart::Notes(notes) => {
                text.push('\n');
                text.push_str(&style.bold("Notes"));
                text.push('\n');
                for note in notes {
                    text.push_str(&format!("  - {note}\n"));
                }
            }
        }
    }
    text
}

/// The rows of a change table: the field (as code), A, B.
fn change_cells(changes: &[Change]) -> Vec<Vec<String>> {
    changes
        .iter()
        .map(|change| {
            vec![
                format!("`{}`", change.field),
                show_value(&change.field, &change.a),
                show_value(&change.field, &change.b),
            ]
        })
        .collect()
}

const CHANGE_HEADER: [&str; 3] = ["field", "A", "B"];

fn md_changes(changes: &[Change]) -> String {
    md_table(&CHANGE_HEADER, &change_cells(changes))
}

/// The comparison as Markdown, under headings of level `level`.
pub fn comparison_markdown(comparison: &Comparison, level: usize) -> String {
    let hashes = "#".repeat(level);
    let mut text = String::new();
    for part in comparison.parts() {
        match part {
            ComparisonPart::Runs { a, b } => {
                text.push_str(&format!("- A: `{}`\n- B: `{}`\n\n", md_cell(a), md_cell(b)));
            }
            ComparisonPart::Inputs([]) => {
                text.push_str(&format!(
                    "{hashes} Inputs\n\nNo recorded input differs.\n\n"
                ));
            }
            ComparisonPart::Inputs(changes) => text.push_str(&format!(
                "{hashes} Inputs that changed ({})\n\n{}",
                changes.len(),
                md_changes(changes)
            )),
            ComparisonPart::Warning(warning) => {
                text.push_str(&format!("> **Warning:** {}\n\n", md_prose(warning)));
            }
            ComparisonPart::Outcome {
                summary,
                differences,
            } => {
                text.push_str(&format!("{hashes} Outcome\n\n{}\n\n", md_prose(summary)));
                if !differences.is_empty() {
                    text.push_str(&md_changes(differences));
                }
            }
            ComparisonPart::Notes(notes) => {
                text.push_str(&format!("{hashes} Notes\n\n"));
                for note in notes {
                    text.push_str(&format!("- {}\n", md_prose(note)));
                }
                text.push('\n');
            }
        }
    }
    text
}

fn html_changes(changes: &[Change]) -> String {
    html_table(&CHANGE_HEADER, &change_cells(changes))
}

/// The comparison as an HTML fragment (every string escaped), headings of level `level`.
pub fn comparison_html(comparison: &Comparison, level: usize) -> String {
    let mut html = String::new();
    for part in comparison.parts() {
        match part {
            ComparisonPart::Runs { a, b } => html.push_str(&format!(
                "<p>A: <code>{}</code><br>B: <code>{}</code></p>\n",
                escape(a),
                escape(b)
            )),
            ComparisonPart::Inputs([]) => html.push_str(&format!(
                "<h{level}>Inputs</h{level}><p>No recorded input differs.</p>\n"
            )),
            ComparisonPart::Inputs(changes) => html.push_str(&format!(
                "<h{level}>Inputs that changed ({})</h{level}>\n{}",
                changes.len(),
                html_changes(changes)
            )),
            ComparisonPart::Warning(warning) => html.push_str(&format!(
                "<p class=\"warn\"><strong>Warning:</strong> {}</p>\n",
                html_prose(warning)
            )),
            ComparisonPart::Outcome {
                summary,
                differences,
            } => {
                html.push_str(&format!(
                    "<h{level}>Outcome</h{level}>\n<p>{}</p>\n",
                    html_prose(summary)
                ));
                if !differences.is_empty() {
                    html.push_str(&html_changes(differences));
                }
            }
            ComparisonPart::Notes(notes) => {
                html.push_str(&format!("<h{level}>Notes</h{level}>\n"));
                html.push_str(&html_list(notes, false));
            }
        }
    }
    html
}

/// `oomdoc diff` as text.
pub fn render_text(comparison: &Comparison, style: &Style) -> Vec<u8> {
    let mut text = style.bold("oomdoc diff: inputs apart from outcomes");
    text.push_str("\n\n");
    text.push_str(&comparison_text(comparison, style));
    crate::render::wrap::fit_quoting(&text).into_bytes()
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
            show_value("gpu[0].free_before_bytes", &FieldValue::from(1u64 << 30)),
            "1.00 GiB (1073741824 bytes)"
        );
        assert_eq!(show_value("flag --x", &FieldValue::Absent), "(absent)");
    }

    #[test]
    fn every_format_has_the_same_parts_and_escapes_log_text() {
        let comparison = Comparison {
            run_a: "a".to_owned(),
            run_b: "b".to_owned(),
            warning: Some("2 inputs changed".to_owned()),
            notes: vec!["seen in <module>, kept as `<x>`".to_owned()],
            ..Comparison::default()
        };
        let text = comparison_text(&comparison, &Style::new(false));
        let markdown = comparison_markdown(&comparison, 2);
        let html = comparison_html(&comparison, 2);
        for (format, out) in [("text", &text), ("markdown", &markdown), ("html", &html)] {
            let lower = out.to_lowercase();
            let at = |needle: &str| {
                lower
                    .find(needle)
                    .unwrap_or_else(|| panic!("{format}: no {needle:?} in {out}"))
            };
            let order = [at("inputs"), at("warning"), at("outcome"), at("notes")];
            assert!(order.windows(2).all(|w| w[0] < w[1]), "{format}: {out}");
        }
        assert!(text.contains("Inputs: no recorded input differs"));
        assert!(
            markdown.contains("- seen in &lt;module&gt;, kept as `<x>`"),
            "{markdown}"
        );
        assert!(html.contains("&lt;module&gt;"), "{html}");
        assert!(!html.contains("<module>"), "{html}");
    }
}
