//! Render `oomdoc probe` output: text, Markdown and HTML (JSON goes through
//! `render::json::to_document`). Pure: computes nothing the analysis did not.

use crate::model::bytes::signed_bytes;
use crate::model::probe::{format_p, GrowthVerdict, ProbeReport, TrendTest};
use crate::model::Bytes;
use crate::render::html::{escape, page};
use crate::render::markdown;
use crate::render::style::{printable, Style};
use crate::render::wrap;

/// A rendered fact: label and value.
type Row = (String, String);

fn verdict_line(report: &ProbeReport) -> String {
    let meaning = match report.verdict {
        GrowthVerdict::Plateau => "memory settles at a plateau: not a leak",
        GrowthVerdict::Growth => "memory keeps growing with repeated requests: a leak is likely",
        GrowthVerdict::Inconclusive => "cannot tell plateau from growth",
        GrowthVerdict::HostGrowth => {
            "host memory of the server keeps growing: a leak outside the GPU"
        }
    };
    format!("{} — {meaning}", report.verdict.name())
}

fn optional_bytes(value: Option<Bytes>) -> String {
    value.map_or_else(|| "unknown".to_string(), |b| b.to_string())
}

fn optional_signed(value: Option<i64>) -> String {
    value.map_or_else(|| "unknown".to_string(), |v| signed_bytes(v as f64))
}

fn setup_rows(report: &ProbeReport) -> Vec<Row> {
    let settings = &report.settings;
    let context = settings.context_tokens.map_or_else(
        || "context unknown".to_string(),
        |t| format!("context {t} tokens"),
    );
    let mut protocol = format!(
        "{} warm-up, {} identical, {} alternating ({} / {} chars)",
        settings.warmup_requests,
        settings.phase_requests,
        settings.phase_requests,
        settings.short_prompt_chars,
        settings.long_prompt_chars
    );
    if settings.concurrent_rounds > 0 {
        protocol.push_str(&format!(
            ", {} concurrent rounds of {}",
            settings.concurrent_rounds, settings.concurrency
        ));
    }
    protocol.push_str(&format!(
        "; repeat {}, max_tokens {}, `/v1/{}`",
        settings.repeat,
        settings.max_tokens,
        if settings.endpoint == "chat" {
            "chat/completions"
        } else {
            "completions"
        }
    ));
    vec![
        ("server".to_string(), report.url.clone()),
        (
            "model".to_string(),
            format!(
                "{} (from {}; {context})",
                settings.model, settings.model_from
            ),
        ),
        (
            "memory".to_string(),
            format!(
                "{} [{}]",
                report.memory_source.description,
                report.memory_source.source.label()
            ),
        ),
        ("protocol".to_string(), protocol),
    ]
}

fn level_rows(report: &ProbeReport) -> Vec<Row> {
    let warmup = &report.warmup;
    let mut rows = vec![
        (
            "before the first request".to_string(),
            optional_bytes(warmup.baseline_bytes),
        ),
        (
            "after warm-up".to_string(),
            format!(
                "{} ({} during warm-up)",
                optional_bytes(warmup.after_warmup_bytes),
                optional_signed(warmup.warmup_growth_bytes)
            ),
        ),
    ];
    for step in &report.steps {
        rows.push((
            format!(
                "first {} chars ({} #{}{})",
                step.prompt_chars,
                step.phase.name(),
                step.index,
                if report.settings.repeat > 1 {
                    format!(", repeat {}", step.repeat)
                } else {
                    String::new()
                }
            ),
            format!(
                "{} → {} ({})",
                step.before_bytes,
                step.after_bytes,
                signed_bytes(step.after_bytes.get() as f64 - step.before_bytes.get() as f64)
            ),
        ));
    }
    if let Some(plateau) = report.plateau_bytes {
        rows.push(("plateau".to_string(), plateau.to_string()));
    }
    rows.push((
        "at the end".to_string(),
        format!(
            "{} ({} since the first request)",
            optional_bytes(warmup.final_bytes),
            optional_signed(warmup.total_growth_bytes)
        ),
    ));
    rows
}

fn test_text(test: &TrendTest) -> String {
    format!(
        "{} per request (Theil–Sen), Mann–Kendall S = {}, z = {:.2}, {} ({} readings, {} block{})",
        signed_bytes(test.slope_bytes_per_request),
        test.mann_kendall_s,
        test.z,
        format_p(test.p_value),
        test.points,
        test.blocks,
        if test.blocks == 1 { "" } else { "s" }
    )
}

fn trend_rows(report: &ProbeReport) -> Vec<Row> {
    let trend = &report.trend;
    let mut rows = vec![(
        "window".to_string(),
        trend
            .window
            .as_ref()
            .map_or_else(|| "no repeated input".to_string(), test_text),
    )];
    if let Some(late) = &trend.late {
        rows.push((
            "later half".to_string(),
            format!(
                "{}; {} over {} requests",
                test_text(late),
                signed_bytes(trend.late_growth_bytes),
                trend.late_span_requests
            ),
        ));
    }
    rows.push((
        "growth over window".to_string(),
        format!(
            "{} over {} requests (needs ≥ {} and p < {})",
            signed_bytes(trend.window_growth_bytes),
            trend.window_span_requests,
            Bytes(trend.min_growth_bytes as u64),
            trend.alpha
        ),
    ));
    rows.push((
        "noise".to_string(),
        format!(
            "{}; smallest change {}; detectable slope {}",
            Bytes(trend.noise_bytes as u64),
            trend
                .quantum_bytes
                .map_or_else(|| "none".to_string(), |q| Bytes(q).to_string()),
            trend.detectable_slope_bytes_per_request.map_or_else(
                || "unknown".to_string(),
                |d| format!("{} per request", Bytes(d as u64))
            )
        ),
    ));
    if let Some(naive) = &trend.naive {
        rows.push((
            "naive (all readings)".to_string(),
            format!(
                "{} — not used: a one-time step looks like growth to it",
                test_text(naive)
            ),
        ));
    }
    if let Some(preemptions) = report.preemptions {
        rows.push(("preemptions".to_string(), format!("{preemptions}")));
    }
    if !report.metrics_seen.is_empty() {
        rows.push(("server metrics".to_string(), report.metrics_seen.join(", ")));
    }
    rows.push((
        "requests".to_string(),
        format!(
            "{} ({} failed) in {:.1} s",
            report.requests.len(),
            report.failed_requests,
            report.elapsed_ms as f64 / 1000.0
        ),
    ));
    rows
}

const REQUEST_HEADER: [&str; 9] = [
    "repeat", "phase", "#", "chars", "status", "latency", "memory", "change", "note",
];

fn request_rows(report: &ProbeReport) -> Vec<[String; 9]> {
    // `change` is against the previous reading (the baseline for the first): a leak shows as
    // the same `+` on every row, where `memory` in GiB can print the same figure twice.
    let mut previous: Option<Bytes> = report.warmup.baseline_bytes;
    report
        .requests
        .iter()
        .map(|request| {
            let change = match (previous, request.memory_bytes) {
                (Some(before), Some(after)) => {
                    signed_bytes(after.get() as f64 - before.get() as f64)
                }
                _ => String::new(),
            };
            previous = request.memory_bytes.or(previous);
            let mut note = Vec::new();
            if let Some(kv) = request.kv_cache_usage {
                note.push(format!("KV {:.0}%", kv * 100.0));
            }
            if let Some(error) = &request.error {
                note.push(error.clone());
            }
            [
                request.repeat.to_string(),
                request.phase.name().to_string(),
                match request.slot {
                    Some(slot) => format!("{}.{slot}", request.index),
                    None => request.index.to_string(),
                },
                request.prompt_chars.to_string(),
                request
                    .status
                    .map_or_else(|| "—".to_string(), |s| s.to_string()),
                format!("{} ms", request.latency_ms),
                optional_bytes(request.memory_bytes),
                change,
                note.join("; "),
            ]
        })
        .collect()
}

fn push_rows(out: &mut String, rows: &[Row]) {
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    for (label, value) in rows {
        let pad = width - label.chars().count();
        out.push_str(&format!("  {label}{}  {value}\n", " ".repeat(pad)));
    }
}

/// Text for a terminal.
pub fn text(report: &ProbeReport, style: Style) -> Vec<u8> {
    let report = &printable_report(report);
    let verdict = verdict_line(report);
    let painted = match report.verdict {
        GrowthVerdict::Plateau => style.good(&verdict),
        GrowthVerdict::Growth | GrowthVerdict::HostGrowth => style.bad(&verdict),
        GrowthVerdict::Inconclusive => style.warn(&verdict),
    };
    let mut out = format!("{} {painted}\n", style.bold("oomdoc probe:"));
    for line in wrap(&report.trend.reason, 98) {
        out.push_str(&format!("  {line}\n"));
    }
    push_rows(&mut out, &setup_rows(report));
    out.push_str(&format!(
        "\n{}\n",
        style.bold(&format!(
            "Memory levels ({})",
            report.memory_source.source.label()
        ))
    ));
    push_rows(&mut out, &level_rows(report));
    out.push_str(&format!("\n{}\n", style.bold("Trend")));
    push_rows(&mut out, &trend_rows(report));
    let repeats = repeat_lines(report);
    if !repeats.is_empty() {
        out.push_str(&format!("\n{}\n", style.bold("Repeats")));
        for line in repeats {
            out.push_str(&format!("  {line}\n"));
        }
    }
    if let Some(soak) = &report.soak {
        out.push_str(&format!("\n{}\n", style.bold("Soak")));
        out.push_str(&format!(
            "  {} cycles, {} readings kept as {} levels; noise {}, growth needed {}\n",
            soak.cycles,
            soak.readings,
            soak.slots.len(),
            Bytes(soak.noise_bytes.max(0.0) as u64),
            Bytes(soak.min_growth_bytes.max(0.0) as u64)
        ));
        if let Some(test) = &soak.trend {
            out.push_str(&format!(
                "  trend {}/request, {}\n",
                signed_bytes(test.slope_bytes_per_request),
                format_p(test.p_value)
            ));
        }
    }
    out.push_str(&format!("\n{}\n", style.bold("Requests")));
    let mut rows = request_rows(report);
    let mut widths = REQUEST_HEADER.map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    // The note (a server's error body, say) is cut where the row would pass the text width;
    // `--json` keeps it whole.
    let before_note: usize = 1 + widths[..8].iter().map(|w| w + 1).sum::<usize>() + 1;
    let room = wrap::TEXT_WIDTH.saturating_sub(before_note).max(12);
    for row in &mut rows {
        row[8] = wrap::cut(&row[8], room);
    }
    let line = |cells: Vec<&str>| {
        let mut text = String::from(" ");
        for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
            let pad = " ".repeat(width - cell.chars().count());
            if index == 1 || index == 8 {
                text.push_str(&format!(" {cell}{pad}"));
            } else {
                text.push_str(&format!(" {pad}{cell}"));
            }
        }
        format!("{}\n", text.trim_end())
    };
    out.push_str(&style.dim(line(REQUEST_HEADER.to_vec()).trim_end()));
    out.push('\n');
    for row in &rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    if !report.limitations.is_empty() {
        out.push_str(&format!("\n{}\n", style.bold("Limitations")));
        for limitation in &report.limitations {
            out.push_str(&format!("  - {limitation}\n"));
        }
    }
    wrap::fit(&out).into_bytes()
}

/// `text` in lines of at most `width` characters, broken at spaces (a longer word stays whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && wrap::visible_width(&line) + 1 + wrap::visible_width(word) > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// One line per repeat: levels at the same protocol points, the trend inside it, its steps,
/// and with `--launch` the start (time to ready) and the stop (GPU memory back or not).
fn repeat_lines(report: &ProbeReport) -> Vec<String> {
    let mut lines = Vec::new();
    let short = |value: Option<Bytes>| value.map_or_else(|| "?".to_string(), |b| b.to_string());
    for repeat in &report.trend.repeats {
        let trend = repeat.test.as_ref().map_or_else(
            || "no trend test".to_string(),
            |test| {
                format!(
                    "{}/req, {}",
                    signed_bytes(test.slope_bytes_per_request),
                    format_p(test.p_value)
                )
            },
        );
        if lines.is_empty() {
            lines.push(
                "level after each phase; trend inside the repeat; one-time steps".to_string(),
            );
        }
        lines.push(format!(
            "#{}: warm-up {}, identical {}, alternating {}; {trend}; {} step{}",
            repeat.repeat + 1,
            short(repeat.after_warmup_bytes),
            short(repeat.after_identical_bytes),
            short(repeat.after_alternating_bytes),
            repeat.steps,
            if repeat.steps == 1 { "" } else { "s" }
        ));
    }
    if let Some(spread) = &report.trend.level_spread {
        lines.push(format!(
            "levels at {} differ by {} across repeats (tolerance {}){}",
            spread.point.replace('_', " "),
            Bytes(spread.spread_bytes),
            Bytes(spread.tolerance_bytes),
            if spread.rising { ", rising" } else { "" }
        ));
    }
    for launch in &report.launches {
        let host = launch
            .host_memory_at_ready_bytes
            .map_or_else(String::new, |b| format!(", RSS {b}"));
        lines.push(format!(
            "#{} ready {:.1} s ({}){host}; {} in {} ms, {}; GPU {}",
            launch.repeat + 1,
            launch.time_to_ready_ms as f64 / 1000.0,
            launch.ready_path,
            launch.stop,
            launch.stop_ms,
            launch.exit,
            launch.gpu_release
        ));
    }
    lines
}

/// The report with every string that came from outside (the server's model name and error
/// bodies, URLs, reasons quoting them) stripped of control characters.
fn printable_report(report: &ProbeReport) -> ProbeReport {
    let mut clean = report.clone();
    clean.url = printable(&clean.url);
    clean.settings.model = printable(&clean.settings.model);
    clean.settings.model_from = printable(&clean.settings.model_from);
    clean.memory_source.description = printable(&clean.memory_source.description);
    clean.trend.reason = printable(&clean.trend.reason);
    for request in &mut clean.requests {
        request.error = request.error.as_deref().map(printable);
    }
    for text in clean.limitations.iter_mut().chain(&mut clean.metrics_seen) {
        *text = printable(text);
    }
    clean
}

/// GitHub-flavoured Markdown.
pub fn markdown(report: &ProbeReport) -> Vec<u8> {
    let report = &printable_report(report);
    let mut out = format!(
        "# oomdoc probe: {}\n\n{}\n\n",
        markdown::cell(&verdict_line(report)),
        markdown::cell(&report.trend.reason)
    );
    let table = |out: &mut String, title: &str, rows: &[Row]| {
        out.push_str(&format!("## {title}\n\n| | |\n|---|---|\n"));
        for (label, value) in rows {
            out.push_str(&format!(
                "| {} | {} |\n",
                markdown::cell(label),
                markdown::cell(value)
            ));
        }
        out.push('\n');
    };
    table(&mut out, "Setup", &setup_rows(report));
    table(
        &mut out,
        &format!("Memory levels ({})", report.memory_source.source.label()),
        &level_rows(report),
    );
    table(&mut out, "Trend", &trend_rows(report));
    out.push_str("## Requests\n\n| ");
    out.push_str(&REQUEST_HEADER.join(" | "));
    out.push_str(" |\n|");
    out.push_str(&"---|".repeat(REQUEST_HEADER.len()));
    out.push('\n');
    for row in request_rows(report) {
        let cells: Vec<String> = row.iter().map(|c| markdown::cell(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    if !report.limitations.is_empty() {
        out.push_str("\n## Limitations\n\n");
        for limitation in &report.limitations {
            out.push_str(&format!("- {}\n", markdown::cell(limitation)));
        }
    }
    out.into_bytes()
}

/// One self-contained HTML page.
pub fn html(report: &ProbeReport) -> Vec<u8> {
    let class = match report.verdict {
        GrowthVerdict::Plateau => "good",
        GrowthVerdict::Growth | GrowthVerdict::HostGrowth => "bad",
        GrowthVerdict::Inconclusive => "warn",
    };
    let mut body = format!(
        "<h1>oomdoc probe: <span class=\"{class}\">{}</span></h1>\n<p>{}</p>\n",
        escape(&verdict_line(report)),
        escape(&report.trend.reason)
    );
    let table = |body: &mut String, title: &str, rows: &[Row]| {
        body.push_str(&format!("<h2>{}</h2>\n<table>\n", escape(title)));
        for (label, value) in rows {
            body.push_str(&format!(
                "<tr><th>{}</th><td>{}</td></tr>\n",
                escape(label),
                escape(value)
            ));
        }
        body.push_str("</table>\n");
    };
    table(&mut body, "Setup", &setup_rows(report));
    table(
        &mut body,
        &format!("Memory levels ({})", report.memory_source.source.label()),
        &level_rows(report),
    );
    table(&mut body, "Trend", &trend_rows(report));
    body.push_str("<h2>Requests</h2>\n<table>\n<tr>");
    for header in REQUEST_HEADER {
        body.push_str(&format!("<th>{}</th>", escape(header)));
    }
    body.push_str("</tr>\n");
    for row in request_rows(report) {
        body.push_str("<tr>");
        for cell in row {
            body.push_str(&format!("<td>{}</td>", escape(&cell)));
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</table>\n");
    if !report.limitations.is_empty() {
        body.push_str("<h2>Limitations</h2>\n<ul>\n");
        for limitation in &report.limitations {
            body.push_str(&format!("<li>{}</li>\n", escape(limitation)));
        }
        body.push_str("</ul>\n");
    }
    page("oomdoc probe", "", &body).into_bytes()
}
