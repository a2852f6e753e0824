//! Renders an [`ExplainReport`] as text (terminal), Markdown or JSON. Pure: bytes out, no I/O,
//! no analysis (everything shown is in the report).

use std::fmt::Write as _;

use super::style::Style;
use crate::model::explain::{AccountingLine, EventKind, ExplainReport, TimelineEvent};
use crate::model::failure::EngineName;

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
        EventKind::KvConcurrency => "KV concurrency",
        EventKind::CudaGraphCaptureStart => "CUDA graphs: start",
        EventKind::CudaGraphCaptureDone => "CUDA graphs: done",
        EventKind::EngineReady => "engine ready",
        EventKind::ServerReady => "server ready",
        EventKind::Request => "requests",
        EventKind::ServingStats => "serving stats",
        EventKind::KvPressure => "KV pressure",
        EventKind::TrainingStep => "training step",
        EventKind::Traceback => "traceback",
        EventKind::Failure => "FAILURE",
        EventKind::Shutdown => "engine failed",
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
    if event.count > 1 {
        parts.push(format!(
            "×{} to line {}",
            event.count,
            event.last_line.unwrap_or(event.line)
        ));
    }
    parts.join(", ")
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
            (label, line.bytes.to_string(), source, line)
        })
        .collect()
}

/// Terminal text: headline, phase, numbers with sources, why, next steps, owner summary,
/// timeline and the lines before the failure.
pub fn text(report: &ExplainReport, style: Style) -> Vec<u8> {
    let mut out = String::new();
    let verdict = &report.verdict;
    let headline = if report.is_gpu_oom {
        style.bad(&verdict.headline)
    } else {
        style.bold(&verdict.headline)
    };
    let _ = writeln!(out, "{headline}");
    let _ = writeln!(out, "  {}", style.dim(&engine_line(report)));
    if let Some(failure) = report.ooms.first() {
        let _ = writeln!(
            out,
            "  {}",
            style.dim(&format!(
                "{} failure message(s), first at line {}{}",
                report.ooms_total,
                failure.line,
                failure
                    .stream
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            ))
        );
    }

    let phase = &report.phase;
    let _ = writeln!(out, "\n{}", style.bold("Phase"));
    let _ = writeln!(
        out,
        "  failed in:      {} — {}",
        phase.failed_in.as_str(),
        phase.failed_in.describe()
    );
    let _ = writeln!(
        out,
        "  last completed: {}",
        phase.last_completed.map_or("none shown", |p| p.as_str())
    );
    let ready = match (phase.server_was_ready, phase.prompt_can_be_cause) {
        (Some(true), _) => "yes".to_string(),
        (Some(false), _) => "no — a user prompt cannot be the cause".to_string(),
        (None, Some(false)) => {
            "not shown; the failure is in a start-up phase, so a user prompt cannot be the cause"
                .to_string()
        }
        (None, _) => "not shown".to_string(),
    };
    let _ = writeln!(out, "  server ready:   {ready}");
    for line in &phase.evidence {
        let _ = writeln!(out, "  {}", style.dim(&format!("· {line}")));
    }

    let rows = accounting_rows(report);
    if !rows.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Memory (allocated ⊂ reserved ⊂ process ⊂ device; never add allocated and reserved)"));
        let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
        for (label, bytes, source, line) in &rows {
            let _ = writeln!(
                out,
                "  {label:<width$}  {bytes:>11}  {}",
                style.dim(&format!("[{source}] {}", line.meaning))
            );
        }
    }

    let _ = writeln!(out, "\n{}  {}", style.bold("Why"), verdict.cause.as_str());
    for line in &verdict.evidence {
        let _ = writeln!(out, "  - {line}");
    }
    if !verdict.next_steps.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Next steps"));
        for (index, step) in verdict.next_steps.iter().enumerate() {
            let _ = writeln!(out, "  {}. {step}", index + 1);
        }
    }
    if !verdict.owner_summary.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("For the owner"));
        let _ = writeln!(out, "  {}", verdict.owner_summary);
    }

    if !report.timeline.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Timeline"));
        let timed = report
            .timeline
            .iter()
            .any(|event| event.timestamp.is_some());
        for event in &report.timeline {
            let when = match (&event.timestamp, event.seconds_since_start) {
                (Some(stamp), Some(seconds)) => format!("{stamp} (+{seconds:.0} s)"),
                (Some(stamp), None) => stamp.clone(),
                _ => String::new(),
            };
            let label = kind_label(event.kind);
            let label = if event.kind == EventKind::Failure {
                style.bad(label)
            } else {
                label.to_string()
            };
            let figures = figures_text(event);
            let figures = if figures.is_empty() {
                String::new()
            } else {
                format!("  {figures}")
            };
            if timed {
                let _ = writeln!(out, "  {:>7}  {:<28} {label}{figures}", event.line, when);
            } else {
                let _ = writeln!(out, "  {:>7}  {label}{figures}", event.line);
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
                let _ = writeln!(out, "{marker}{:>7} | {}", line.line, line.text);
            }
        }
    }
    out.into_bytes()
}

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// GitHub-flavoured Markdown.
pub fn markdown(report: &ExplainReport) -> Vec<u8> {
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
        let _ = writeln!(out, "| figure | bytes | size | source | meaning |");
        let _ = writeln!(out, "|---|---:|---:|---|---|");
        for (label, bytes, source, line) in &rows {
            let _ = writeln!(
                out,
                "| {label} | {} | {bytes} | {source} | {} |",
                line.bytes.get(),
                md_escape(&line.meaning)
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
        for event in &report.timeline {
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
                md_escape(&figures_text(event))
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
