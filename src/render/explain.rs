//! Renders an [`ExplainReport`] as text (terminal), Markdown or JSON. Pure: bytes out, no I/O,
//! no analysis (everything shown is in the report).

use std::fmt::Write as _;

use super::style::Style;
use crate::model::explain::{AccountingLine, EventKind, ExplainReport, Phase, TimelineEvent};
use crate::model::failure::{EngineName, OomKind};
use crate::render::markdown::escape as md_escape;
use crate::render::wrap::{cut, visible_width, wrap};

/// Engine name as people write it.
pub fn engine_label(name: EngineName) -> &'static str {
    name.label()
}

fn kind_label(kind: EventKind) -> &'static str {
    match kind {
        EventKind::EngineStart => "engine start",
        EventKind::DeviceInit => "device init",
        EventKind::DownloadStart => "download start",
        EventKind::DownloadDone => "download done",
        EventKind::WeightsLoadStart => "weights: start",
        EventKind::WeightsLoadProgress => "weights: progress",
        EventKind::WeightsRead => "weights: read",
        EventKind::WeightsLoaded => "weights: loaded",
        EventKind::FormatConversion => "conversion",
        EventKind::Compile => "compile",
        EventKind::ProfilingStart => "profiling: start",
        EventKind::ProfilingDone => "profiling: done",
        EventKind::KvCacheAllocated => "KV cache",
        EventKind::KvCachePlanned => "KV cache: sized",
        EventKind::KvConcurrency => "KV concurrency",
        EventKind::CudaGraphCaptureStart => "CUDA graphs: start",
        EventKind::CudaGraphCaptureDone => "CUDA graphs: done",
        EventKind::EngineReady => "engine ready",
        EventKind::ServerReady => "server ready",
        EventKind::Request => "requests",
        EventKind::ServingStats => "serving stats",
        EventKind::KvPressure => "KV pressure",
        EventKind::TrainingStep => "training step",
        EventKind::Evaluation => "evaluation",
        EventKind::CheckpointSave => "checkpoint save",
        EventKind::EngineBuild => "engine build",
        EventKind::Traceback => "traceback",
        EventKind::Failure => "FAILURE",
        EventKind::Shutdown => "engine failed",
        EventKind::FailuresOnly => "searched for failures only",
    }
}

fn figures_text(event: &TimelineEvent) -> String {
    let figures = &event.figures;
    let mut parts = Vec::new();
    if let Some(bytes) = figures.bytes {
        parts.push(bytes.to_string());
    }
    if let Some(seconds) = figures.seconds {
        parts.push(format!("{seconds:.1} s"));
    }
    if let Some(tokens) = figures.tokens {
        parts.push(format!("{tokens} tokens"));
    }
    if let Some(blocks) = figures.blocks {
        parts.push(format!("{blocks} blocks"));
    }
    if let Some(available) = figures.available_bytes {
        parts.push(format!("{available} free"));
    }
    if let Some(ratio) = figures.ratio {
        parts.push(format!("{ratio:.2}x"));
    }
    parts.join(", ")
}

/// Timeline rows: consecutive events of one kind with the same figures become one row
/// ("FAILURE ×5"), counting the repeats the analysis already merged.
struct TimelineRow<'a> {
    first: &'a TimelineEvent,
    count: usize,
    last_line: usize,
    figures: String,
}

fn timeline_rows(report: &ExplainReport) -> Vec<TimelineRow<'_>> {
    let mut rows: Vec<TimelineRow<'_>> = Vec::new();
    for event in &report.timeline {
        let figures = figures_text(event);
        let count = event.count.max(1) as usize;
        let last_line = event.last_line.unwrap_or(event.line) as usize;
        match rows.last_mut() {
            Some(row) if row.first.kind == event.kind && row.figures == figures => {
                row.count += count;
                row.last_line = last_line;
            }
            _ => rows.push(TimelineRow {
                first: event,
                count,
                last_line,
                figures,
            }),
        }
    }
    rows
}

impl TimelineRow<'_> {
    /// `×5, to line 18` when the row stands for several events.
    fn repeats(&self) -> String {
        if self.first.kind == EventKind::FailuresOnly {
            format!("to line {}", self.last_line)
        } else if self.count > 1 {
            format!("×{}, to line {}", self.count, self.last_line)
        } else {
            String::new()
        }
    }
}

/// Width of the default text report (the crate's one limit); only quoted log lines may be
/// longer, and they are cut.
pub use crate::render::wrap::TEXT_WIDTH;

/// The gutter of a quoted log line in the text report: a marker column (`>` on the failure
/// line), the line number right-aligned in 7 columns, then ` | `. A line of the text report
/// that matches [`is_quoted_log_line`] quotes the input; every other line is ours.
const GUTTER_WIDTH: usize = 1 + 7 + 3;

/// Whether a line of the text report (without colour) is a quoted log line: it starts with
/// the gutter written by the context block, `[ >]` + 7 columns holding a right-aligned line
/// number + ` | `.
pub fn is_quoted_log_line(line: &str) -> bool {
    let chars: Vec<char> = line.chars().take(GUTTER_WIDTH).collect();
    if chars.len() < GUTTER_WIDTH - 1 || !matches!(chars[0], ' ' | '>') {
        return false;
    }
    let number: String = chars[1..8].iter().collect();
    let number = number.trim_start();
    !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
        && chars[8] == ' '
        && chars[9] == '|'
}

/// Writes `text` wrapped (see [`wrap`]), each line painted by `paint`.
fn write_wrapped(
    out: &mut String,
    text: &str,
    first: &str,
    indent: usize,
    paint: impl Fn(&str) -> String,
) {
    for line in wrap(text, first, indent) {
        let _ = writeln!(out, "{}", paint(&line));
    }
}

fn engine_line(report: &ExplainReport) -> String {
    let mut parts = vec![format!(
        "engine: {}{}",
        engine_label(report.engine.name),
        report
            .engine
            .version
            .as_deref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default()
    )];
    if let Some(model) = report.model.as_ref().and_then(|m| m.name.as_deref()) {
        parts.push(format!("model: {model}"));
    }
    if !report.versions.is_empty() {
        let versions: Vec<String> = report
            .versions
            .iter()
            .map(|(name, version)| format!("{name} {version}"))
            .collect();
        parts.push(versions.join(", "));
    }
    parts.join(" · ")
}

fn accounting_rows(report: &ExplainReport) -> Vec<(String, String, String, &AccountingLine)> {
    report
        .accounting
        .iter()
        .map(|line| {
            let label = line.key.replace('_', " ");
            let source = if line.derived {
                format!("{} (derived)", line.source.label())
            } else {
                line.source.label().to_string()
            };
            const EIB: u64 = 1 << 60;
            let bytes = if line.lower_bound && line.bytes.get() % EIB == 0 {
                format!("more than {} EiB", line.bytes.get() / EIB)
            } else if line.lower_bound {
                format!("more than {}", line.bytes)
            } else {
                line.bytes.to_string()
            };
            (label, bytes, source, line)
        })
        .collect()
}

/// What to say when the failure explained is only named (a title, a sentence), its message not
/// in the text: the claim is the user's, and no figure backs it.
fn named_without_message(report: &ExplainReport) -> Option<String> {
    let failure = report.ooms.iter().find(|message| message.is_gpu_oom)?;
    (failure.kind == OomKind::NamedWithoutMessage).then(|| {
        format!(
            "line {} names an out-of-memory failure, but the text shows no message of it: no \
             figures to read; paste the whole error (it starts at `Traceback` or at the \
             framework's own line) for a full explanation",
            failure.line
        )
    })
}

/// Terminal text: headline, phase, numbers with sources, why, next steps, owner summary,
/// timeline and the lines before the failure.
///
/// Every line fits [`TEXT_WIDTH`] columns except quoted log lines (see
/// [`is_quoted_log_line`]), which are cut with `…`. `verbose` adds what each figure means and
/// quotes log lines whole.
pub fn text(report: &ExplainReport, style: Style, verbose: bool) -> Vec<u8> {
    let mut out = String::new();
    let verdict = &report.verdict;
    let headline = |line: &str| {
        if report.is_gpu_oom {
            style.bad(line)
        } else {
            style.bold(line)
        }
    };
    write_wrapped(&mut out, &verdict.headline, "", 2, headline);
    write_wrapped(&mut out, &engine_line(report), "  ", 4, |l| style.dim(l));
    if let Some(failure) = report.ooms.first() {
        let messages = if report.ooms_total == 1 {
            "1 failure message, at line".to_string()
        } else {
            format!("{} failure messages, first at line", report.ooms_total)
        };
        let text = format!(
            "{messages} {}{}",
            failure.line,
            failure
                .stream
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default()
        );
        write_wrapped(&mut out, &text, "  ", 4, |l| style.dim(l));
    }
    if let Some(named) = named_without_message(report) {
        write_wrapped(&mut out, &named, "  ", 4, |l| l.to_string());
    }

    let phase = &report.phase;
    let _ = writeln!(out, "\n{}", style.bold("Phase"));
    let failed_in = format!(
        "{} — {}",
        phase.failed_in.as_str(),
        phase.failed_in.describe()
    );
    write_wrapped(&mut out, &failed_in, "  failed in:      ", 18, |l| {
        l.to_string()
    });
    let _ = writeln!(
        out,
        "  last completed: {}",
        phase.last_completed.map_or("none shown", |p| p.as_str())
    );
    let ready = match (phase.server_was_ready, phase.prompt_can_be_cause) {
        // A training job serves no requests: say so rather than "no".
        (Some(false) | None, _) if phase.failed_in == Phase::TrainingStep => {
            "no server: a training job".to_string()
        }
        (Some(true), _) => "yes".to_string(),
        (Some(false), _) => "no — a user prompt cannot be the cause".to_string(),
        (None, Some(false)) => {
            "not shown; the failure is in a start-up phase, so a user prompt cannot be the cause"
                .to_string()
        }
        (None, _) => "not shown".to_string(),
    };
    write_wrapped(&mut out, &ready, "  server ready:   ", 18, |l| {
        l.to_string()
    });
    for line in &phase.evidence {
        write_wrapped(&mut out, line, "  · ", 4, |l| style.dim(l));
    }

    let rows = accounting_rows(report);
    if !rows.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold("Memory (allocated ⊂ reserved ⊂ process ⊂ device; never add allocated and reserved)")
        );
        let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        for (label, bytes, source, line) in &rows {
            let _ = writeln!(
                out,
                "  {label:<width$}  {bytes:>11}  {}",
                style.dim(&format!("[{source}]"))
            );
            if verbose {
                write_wrapped(&mut out, &line.meaning, "      ", 6, |l| style.dim(l));
            }
        }
        if !verbose {
            let _ = writeln!(out, "  {}", style.dim("(-v says what each figure means)"));
        }
    }

    let _ = writeln!(out, "\n{}  {}", style.bold("Why"), verdict.cause.as_str());
    for line in &verdict.evidence {
        write_wrapped(&mut out, line, "  - ", 4, |l| l.to_string());
    }
    if !verdict.next_steps.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Next steps"));
        for (index, step) in verdict.next_steps.iter().enumerate() {
            let number = format!("  {}. ", index + 1);
            let indent = number.chars().count();
            write_wrapped(&mut out, step, &number, indent, |l| l.to_string());
        }
    }
    if !verdict.owner_summary.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("For the owner"));
        write_wrapped(&mut out, &verdict.owner_summary, "  ", 2, |l| l.to_string());
    }

    if !report.timeline.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Timeline"));
        let timed = report
            .timeline
            .iter()
            .any(|event| event.timestamp.is_some());
        for row in timeline_rows(report) {
            let event = row.first;
            let when = match (&event.timestamp, event.seconds_since_start) {
                (Some(stamp), Some(seconds)) => format!("{stamp} (+{seconds:.0} s)"),
                (Some(stamp), None) => stamp.clone(),
                _ => String::new(),
            };
            let label = kind_label(event.kind);
            let repeats = row.repeats();
            let label = if repeats.is_empty() {
                label.to_string()
            } else {
                format!("{label} {repeats}")
            };
            let prefix = if timed {
                format!("  {:>7}  {:<28} ", event.line, when)
            } else {
                format!("  {:>7}  ", event.line)
            };
            let indent = prefix.chars().count() + 2;
            let text = if row.figures.is_empty() {
                label
            } else {
                format!("{label}  {}", row.figures)
            };
            let whole = format!("{prefix}{text}");
            let lines = if visible_width(&whole) <= TEXT_WIDTH {
                vec![whole]
            } else {
                wrap(&text, &prefix, indent)
            };
            for (index, line) in lines.into_iter().enumerate() {
                // Paint the event label of a failure row.
                let line = if index == 0 && event.kind == EventKind::Failure {
                    let (head, tail) = line.split_at(prefix.len());
                    let name = kind_label(event.kind);
                    match tail.strip_prefix(name) {
                        Some(rest) => format!("{head}{}{rest}", style.bad(name)),
                        None => line.clone(),
                    }
                } else {
                    line
                };
                let _ = writeln!(out, "{line}");
            }
        }
    }

    if let Some(block) = report.context.first() {
        if let (Some(first), Some(last)) = (block.lines.first(), block.lines.last()) {
            let _ = writeln!(
                out,
                "\n{}",
                style.bold(&format!(
                    "The failure and the lines before it ({}–{})",
                    first.line, last.line
                ))
            );
            for line in &block.lines {
                let marker = if line.line == block.failure_line {
                    ">"
                } else {
                    " "
                };
                let text = if verbose {
                    line.text.clone()
                } else {
                    cut(&line.text, TEXT_WIDTH - GUTTER_WIDTH)
                };
                let _ = writeln!(out, "{marker}{:>7} | {text}", line.line);
            }
        }
    }
    out.into_bytes()
}

/// GitHub-flavoured Markdown. `verbose` adds a column saying what each figure means.
pub fn markdown(report: &ExplainReport, verbose: bool) -> Vec<u8> {
    let mut out = String::new();
    let verdict = &report.verdict;
    let _ = writeln!(out, "# {}\n", md_escape(&verdict.headline));
    let _ = writeln!(out, "{}\n", md_escape(&engine_line(report)));
    let phase = &report.phase;
    let _ = writeln!(out, "## Phase\n");
    let _ = writeln!(
        out,
        "| failed in | last completed | server was ready | prompt can be the cause |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    let _ = writeln!(
        out,
        "| `{}` | {} | {} | {} |\n",
        phase.failed_in.as_str(),
        phase
            .last_completed
            .map_or("—".to_string(), |p| format!("`{}`", p.as_str())),
        phase
            .server_was_ready
            .map_or("not shown", |r| if r { "yes" } else { "no" }),
        phase
            .prompt_can_be_cause
            .map_or("not shown", |r| if r { "yes" } else { "no" }),
    );
    for line in &phase.evidence {
        let _ = writeln!(out, "- {}", md_escape(line));
    }
    let rows = accounting_rows(report);
    if !rows.is_empty() {
        let _ = writeln!(out, "\n## Memory\n\nAllocated ⊂ reserved ⊂ this process ⊂ device: never add allocated and reserved.\n");
        if verbose {
            let _ = writeln!(out, "| figure | bytes | size | source | meaning |");
            let _ = writeln!(out, "|---|---:|---:|---|---|");
        } else {
            let _ = writeln!(out, "| figure | bytes | size | source |");
            let _ = writeln!(out, "|---|---:|---:|---|");
        }
        for (label, bytes, source, line) in &rows {
            let meaning = if verbose {
                format!(" {} |", md_escape(&line.meaning))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {label} | {} | {bytes} | {source} |{meaning}",
                line.bytes.get(),
            );
        }
    }
    let _ = writeln!(out, "\n## Why: `{}`\n", verdict.cause.as_str());
    for line in &verdict.evidence {
        let _ = writeln!(out, "- {}", md_escape(line));
    }
    if !verdict.next_steps.is_empty() {
        let _ = writeln!(out, "\n## Next steps\n");
        for (index, step) in verdict.next_steps.iter().enumerate() {
            let _ = writeln!(out, "{}. {}", index + 1, md_escape(step));
        }
    }
    if !verdict.owner_summary.is_empty() {
        let _ = writeln!(
            out,
            "\n## For the owner\n\n{}",
            md_escape(&verdict.owner_summary)
        );
    }
    if !report.timeline.is_empty() {
        let _ = writeln!(out, "\n## Timeline\n");
        let _ = writeln!(out, "| line | time | +s | event | figures |");
        let _ = writeln!(out, "|---:|---|---:|---|---|");
        for row in timeline_rows(report) {
            let event = row.first;
            let repeats = row.repeats();
            let figures = match (row.figures.is_empty(), repeats.is_empty()) {
                (_, true) => row.figures.clone(),
                (true, false) => repeats,
                (false, false) => format!("{}, {repeats}", row.figures),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                event.line,
                event.timestamp.as_deref().unwrap_or(""),
                event
                    .seconds_since_start
                    .map(|s| format!("{s:.0}"))
                    .unwrap_or_default(),
                kind_label(event.kind),
                md_escape(&figures)
            );
        }
    }
    if let Some(block) = report.context.first() {
        let _ = writeln!(out, "\n## The failure and the lines before it\n\n```text");
        for line in &block.lines {
            let _ = writeln!(
                out,
                "{:>7} | {}",
                line.line,
                line.text.replace("```", "'''")
            );
        }
        let _ = writeln!(out, "```");
    }
    out.into_bytes()
}

/// One JSON document (`schema_version` added).
pub fn json(report: &ExplainReport) -> Result<Vec<u8>, serde_json::Error> {
    super::json::to_document(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_hangs_and_keeps_numbers_with_units() {
        let text = "this process holds 47.35 GiB of the card's 47.37 GiB (NVML figure printed in \
                    the error), and the request of 24.00 MiB did not fit in 4.31 MiB free";
        let lines = wrap(text, "  - ", 4);
        assert!(lines.len() > 1);
        for line in &lines {
            assert!(line.chars().count() <= TEXT_WIDTH, "{line}");
            assert!(!line.ends_with(|c: char| c.is_ascii_digit()), "{line}");
        }
        assert!(lines[0].starts_with("  - this"));
        assert!(lines[1].starts_with("    ") && !lines[1].starts_with("     "));
        assert_eq!(
            lines
                .join(" ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            format!("- {text}")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );
    }

    #[test]
    fn wrap_splits_a_word_longer_than_a_line() {
        let word = "x".repeat(250);
        let lines = wrap(&word, "  ", 2);
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.chars().count() <= TEXT_WIDTH));
        assert_eq!(lines.concat().replace(' ', ""), word);
    }

    #[test]
    fn quoted_log_lines_are_told_by_their_gutter() {
        assert!(is_quoted_log_line(">      2 | CUDA out of memory"));
        assert!(is_quoted_log_line("      15 | "));
        assert!(is_quoted_log_line(" 1234567 | x"));
        assert!(!is_quoted_log_line("  - line 2: CUDA out of memory"));
        assert!(!is_quoted_log_line("        2  FAILURE"));
        assert!(!is_quoted_log_line("  total capacity | x"));
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abcd", 4), "abcd");
        assert_eq!(cut("ééééé", 3).chars().count(), 3);
    }
}
