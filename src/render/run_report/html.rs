//! The report as one self-contained HTML page; every string goes through
//! [`crate::render::html::escape`].

use super::*;
use crate::render::html::{list as html_list, table as html_table};

pub(super) const REPORT_CSS: &str = ".run{border-top:3px solid #1d2430;margin-top:2.5em;padding-top:.5em}.outcome{font-size:1.15em;font-weight:600}.summary{border-left:5px solid #667085;background:#f6f8fa;padding:.6em 1em;margin:1em 0}.summary.configuration_error{border-color:#b54708}.summary.hardware_limit{border-color:#b42318}.summary.working_configuration{border-color:#067647}.chart{width:100%;height:auto;border:1px solid #d0d6de;background:#fff}.chart text{font-family:system-ui,sans-serif;font-size:11px;fill:#1d2430}.chart .axis{stroke:#98a2b3;stroke-width:1}.chart .grid{stroke:#eaecf0;stroke-width:1}.chart .used{fill:none;stroke:#1849a9;stroke-width:1.6}.chart .total{stroke:#667085;stroke-dasharray:6 4}.chart .oom{stroke:#b42318;stroke-width:2}.chart .oomlabel{fill:#b42318;font-weight:700}.chart .peak{fill:#b54708}.chart .peaklabel{fill:#b54708;font-weight:600}.chart .peaklabel,.chart .oomlabel,.chart .bandlabel{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}.chart .bandlabel{font-size:10px;fill:#344054}.legend span{display:inline-block;margin-right:1em;font-size:.85em}.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em;border:1px solid #98a2b3}pre.log{max-height:24em}pre.cmd{white-space:pre-wrap;word-break:break-all}.outcome code{font-size:.95em}";

fn figure_table(figures: &[&Figure]) -> String {
    html_table(
        &["figure", "value", "exact", "source"],
        &figure_rows(figures),
    )
}

fn outcome(run: &RunReport) -> String {
    format!(
        "<p class=\"outcome {}\">{}</p>\n<pre class=\"cmd\">{}</pre>\n<p class=\"dim\">Directory <code>{}</code>, started {}, ended {}.</p>\n",
        if run.status.failed { "bad" } else { "good" },
        prose(&run.status.summary),
        escape(&command_line(&run.command)),
        escape(&opt(&run.cwd)),
        escape(&opt(&run.status.started_at)),
        escape(&opt(&run.status.ended_at))
    )
}

fn heading(html: &mut String, title: &str) {
    html.push_str(&format!("<h3>{}</h3>\n", escape(title)));
}

fn section(html: &mut String, section: &RunSection<'_>) {
    match section {
        RunSection::Outcome(run) => html.push_str(&outcome(run)),
        RunSection::Verdict(verdict) => {
            heading(html, "Verdict");
            html.push_str(&format!("<p>{}</p>\n", prose(&verdict.cause)));
            if !verdict.evidence.is_empty() {
                html.push_str("<p>Evidence:</p>");
                html.push_str(&html_list(&verdict.evidence, false));
            }
            if !verdict.next_steps.is_empty() {
                html.push_str("<p>Next steps:</p>");
                html.push_str(&html_list(&verdict.next_steps, true));
            }
            html.push_str(&format!(
                "<p class=\"source\">Source: {}</p>\n",
                prose(&verdict.source)
            ));
        }
        RunSection::OwnerSummary(summary) => {
            html.push_str(&format!(
                "<div class=\"summary {}\"><h3>{}</h3><p>{}</p>",
                summary.kind.as_str(),
                escape(&owner_title(summary)),
                prose(&summary.text)
            ));
            if let Some(action) = &summary.action {
                html.push_str(&format!(
                    "<p><strong>Action:</strong> {}</p>",
                    prose(action)
                ));
            }
            if let Some(from_explain) = &summary.from_explain {
                html.push_str(&format!(
                    "<p class=\"dim\">From the log diagnosis: {}</p>",
                    prose(from_explain)
                ));
            }
            html.push_str("</div>\n");
        }
        RunSection::Readiness {
            readiness,
            unverified,
        } => {
            heading(html, READINESS_TITLE);
            html.push_str(&format!("<p>{}</p>\n", prose(&readiness.summary)));
            html.push_str(&html_table(
                &["check", "result", "evidence"],
                &readiness_rows(readiness),
            ));
            if !unverified.is_empty() {
                html.push_str(&format!(
                    "<p>Unverified: {}.</p>\n",
                    escape(&unverified.join("; "))
                ));
            }
            if let Some(limit) = &readiness.stated_limit {
                html.push_str(&format!("<p>Stated limit: {}.</p>\n", prose(limit)));
            }
        }
        RunSection::Model { model, engine } => {
            heading(html, "Model");
            html.push_str(&format!("<p>{}</p>\n", prose(&model_line(model))));
            if let Some(line) = checkpoint_line(model) {
                html.push_str(&format!("<p>Checkpoint {}</p>\n", escape(&line)));
            }
            if let Some(engine) = engine {
                html.push_str(&format!(
                    "<p>Engine {} ({})</p>\n",
                    escape(&engine.value),
                    escape(&engine.source)
                ));
            }
        }
        RunSection::Gpus(gpus) => {
            heading(html, GPUS_TITLE);
            if gpus.is_empty() {
                html.push_str("<p>None listed (see limitations).</p>\n");
            } else {
                html.push_str(&html_table(&GPU_HEADER, &gpu_rows(gpus)));
            }
        }
        RunSection::Facts { kind, facts } => {
            let (title, header, none) = fact_list_labels(*kind);
            heading(html, title);
            if facts.is_empty() {
                html.push_str(&format!("<p>{}</p>\n", escape(&sentence(none))));
            } else {
                html.push_str(&html_table(&header, &plain_fact_rows(facts)));
            }
        }
        RunSection::Failure {
            failed,
            failure,
            timeline,
        } => {
            heading(html, FAILURE_TITLE);
            html.push_str(&format!(
                "<p>{}</p>\n",
                prose(&failure_line(*failed, failure))
            ));
            if let Some(note) = &failure.note {
                html.push_str(&format!("<p><strong>{}</strong></p>\n", prose(note)));
            }
            if !timeline.is_empty() {
                let rows = timeline_rows(timeline);
                html.push_str(&html_table(&["time", "phase", "event", "detail"], &rows));
            }
        }
        RunSection::OomFigures { messages, figures } => {
            heading(html, "OOM figures");
            html.push_str(&format!(
                "<p>{messages} OOM message(s) in the log; the first:</p>\n"
            ));
            html.push_str(&figure_table(figures));
            html.push_str("<p class=\"dim\">Allocated and reserved are layers of the same process's memory: never add them.</p>\n");
        }
        RunSection::Memory(memory) => {
            heading(html, "Memory over time");
            for line in memory_summary_lines(memory) {
                html.push_str(&format!("<p>{}</p>\n", prose(&line)));
            }
        }
        RunSection::Chart { device, memory } => {
            html.push_str(&svg_chart(device, memory));
            html.push('\n');
            html.push_str(&legend(memory));
        }
        RunSection::PhasePeaks { device, .. } => {
            html.push_str(&html_table(&PEAK_HEADER, &peak_rows(device)));
        }
        RunSection::ProcessPeaks(device) => {
            html.push_str("<p>Processes during the run:</p>");
            html.push_str(&html_list(&process_peak_lines(device), false));
        }
        RunSection::MemorySource {
            source,
            sample_rate_hz,
        } => html.push_str(&format!(
            "<p class=\"source\">Source: {}{}</p>\n",
            escape(source),
            escape(&rate_text(*sample_rate_hz))
        )),
        RunSection::Host(host) => {
            heading(html, "Host memory");
            let lines: Vec<String> = host_lines_unwrapped(host)
                .iter()
                .map(|line| line.trim_start().trim_start_matches("- ").to_owned())
                .collect();
            html.push_str(&html_list(&lines, false));
            if !host.peaks_by_phase.is_empty() {
                html.push_str("<p>Peak RSS of the process tree by phase:</p>\n");
                html.push_str(&html_table(&HOST_PHASE_HEADER, &host_phase_rows(host)));
            }
        }
        RunSection::FitVsMeasured { figures, note } => {
            heading(html, FIT_TITLE);
            if !figures.is_empty() {
                html.push_str(&figure_table(figures));
            }
            html.push_str(&format!("<p>{}</p>\n", prose(note)));
        }
        RunSection::Reproduction {
            training,
            reproduction,
        } => {
            heading(html, reproduction_title(*training));
            if let Some(request) = &reproduction.request {
                html.push_str(&format!("<pre>{}</pre>\n", escape(request)));
            }
            html.push_str(&format!("<p>{}</p>\n", prose(&reproduction.note)));
            if let Some(source) = &reproduction.source {
                html.push_str(&format!(
                    "<p class=\"source\">Source: {}</p>\n",
                    escape(source)
                ));
            }
        }
        RunSection::Probe(probe) => {
            heading(html, "Probe");
            html.push_str(&format!(
                "<p><code>{}</code>: {}.</p>\n",
                escape(&probe.file),
                escape(&probe_line(probe))
            ));
            let rows = probe_phase_rows(probe);
            html.push_str(&html_table(&["phase", "succeeded", "requests"], &rows));
        }
        RunSection::Environment(environment) => {
            heading(html, "Environment");
            let rows: Vec<Vec<String>> = environment
                .iter()
                .map(|(key, value)| vec![key.clone(), value.clone()])
                .collect();
            html.push_str(&html_table(&["variable", "value"], &rows));
        }
        RunSection::LogContext(lines) => {
            heading(html, LOG_TITLE);
            html.push_str("<pre class=\"log\">");
            for line in *lines {
                html.push_str(&escape(line));
                html.push('\n');
            }
            html.push_str("</pre>\n");
        }
        RunSection::Limitations(limitations) => {
            heading(html, "Limitations");
            if limitations.is_empty() {
                html.push_str("<p>None.</p>\n");
            } else {
                html.push_str(&html_list(limitations, false));
            }
        }
    }
}

/// The report as one self-contained HTML page (inline CSS and SVG, no external loads). With
/// several runs, a list of them (with their outcomes) opens the page.
pub fn render_html(report: &Report) -> Vec<u8> {
    let title = report_title(report);
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    if report.runs.len() > 1 {
        body.push_str("<ul>");
        for (index, run) in report.runs.iter().enumerate() {
            body.push_str(&format!(
                "<li>Run {}: <code>{}</code> — {}</li>",
                index + 1,
                escape(&run.run),
                prose(&run.status.summary)
            ));
        }
        body.push_str("</ul>\n");
    }
    for part in report.parts() {
        match part {
            ReportPart::Run {
                number,
                run,
                sections,
            } => {
                body.push_str(&format!(
                    "<section class=\"run\" id=\"run-{number}\">\n<h2>Run {number}: <code>{}</code></h2>\n",
                    escape(&run.run)
                ));
                for item in &sections {
                    section(&mut body, item);
                }
                body.push_str("</section>\n");
            }
            ReportPart::Comparison(comparison) => {
                body.push_str(&format!(
                    "<section class=\"run\"><h2>{}</h2>\n",
                    escape(COMPARISON_TITLE)
                ));
                body.push_str(&comparison_html(comparison, 3));
                body.push_str("</section>\n");
            }
        }
    }
    crate::render::html::page(&title, REPORT_CSS, &body).into_bytes()
}
