//! The report as one self-contained HTML page; every string goes through
//! [`crate::render::html::escape`].

use super::*;

pub(super) const REPORT_CSS: &str = ".run{border-top:3px solid #1d2430;margin-top:2.5em;padding-top:.5em}.outcome{font-size:1.15em;font-weight:600}.summary{border-left:5px solid #667085;background:#f6f8fa;padding:.6em 1em;margin:1em 0}.summary.configuration_error{border-color:#b54708}.summary.hardware_limit{border-color:#b42318}.summary.working_configuration{border-color:#067647}.chart{width:100%;height:auto;border:1px solid #d0d6de;background:#fff}.chart text{font-family:system-ui,sans-serif;font-size:11px;fill:#1d2430}.chart .axis{stroke:#98a2b3;stroke-width:1}.chart .grid{stroke:#eaecf0;stroke-width:1}.chart .used{fill:none;stroke:#1849a9;stroke-width:1.6}.chart .total{stroke:#667085;stroke-dasharray:6 4}.chart .oom{stroke:#b42318;stroke-width:2}.chart .oomlabel{fill:#b42318;font-weight:700}.chart .peak{fill:#b54708}.chart .peaklabel{fill:#b54708;font-weight:600}.chart .peaklabel,.chart .oomlabel,.chart .bandlabel{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}.chart .bandlabel{font-size:10px;fill:#344054}.legend span{display:inline-block;margin-right:1em;font-size:.85em}.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em;border:1px solid #98a2b3}pre.log{max-height:24em}pre.cmd{white-space:pre-wrap;word-break:break-all}.outcome code{font-size:.95em}";

pub(super) fn html_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut html = String::from("<table><tr>");
    for cell in header {
        html.push_str(&format!("<th>{}</th>", escape(cell)));
    }
    html.push_str("</tr>");
    for row in rows {
        html.push_str("<tr>");
        for cell in row {
            html.push_str(&format!("<td>{}</td>", prose(cell)));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table>\n");
    html
}

pub(super) fn html_list(items: &[String], ordered: bool) -> String {
    let tag = if ordered { "ol" } else { "ul" };
    let mut html = format!("<{tag}>");
    for item in items {
        html.push_str(&format!("<li>{}</li>", prose(item)));
    }
    html.push_str(&format!("</{tag}>\n"));
    html
}

pub(super) fn html_run(run: &RunReport, number: usize) -> String {
    let mut html = format!(
        "<section class=\"run\" id=\"run-{number}\">\n<h2>Run {number}: <code>{}</code></h2>\n",
        escape(&run.run)
    );
    html.push_str(&format!(
        "<p class=\"outcome {}\">{}</p>\n<pre class=\"cmd\">{}</pre>\n<p class=\"dim\">Directory <code>{}</code>, started {}, ended {}.</p>\n",
        if run.status.failed { "bad" } else { "good" },
        prose(&run.status.summary),
        escape(&command_line(&run.command)),
        escape(&opt(&run.cwd)),
        escape(&opt(&run.status.started_at)),
        escape(&opt(&run.status.ended_at))
    ));

    html.push_str(&format!(
        "<div class=\"summary {}\"><h3>Owner summary: {}</h3><p>{}</p>",
        escape(&run.owner_summary.kind),
        escape(kind_label(&run.owner_summary.kind)),
        prose(&run.owner_summary.text)
    ));
    if let Some(action) = &run.owner_summary.action {
        html.push_str(&format!(
            "<p><strong>Action:</strong> {}</p>",
            prose(action)
        ));
    }
    if let Some(from_explain) = &run.owner_summary.from_explain {
        html.push_str(&format!(
            "<p class=\"dim\">From the log diagnosis: {}</p>",
            prose(from_explain)
        ));
    }
    html.push_str("</div>\n");

    html.push_str(&format!(
        "<h3>Verdict</h3>\n<p>{}</p>\n",
        prose(&run.verdict.cause)
    ));
    if !run.verdict.evidence.is_empty() {
        html.push_str("<p>Evidence:</p>");
        html.push_str(&html_list(&run.verdict.evidence, false));
    }
    if !run.verdict.next_steps.is_empty() {
        html.push_str("<p>Next steps:</p>");
        html.push_str(&html_list(&run.verdict.next_steps, true));
    }
    html.push_str(&format!(
        "<p class=\"source\">Source: {}</p>\n",
        prose(&run.verdict.source)
    ));

    html.push_str("<h3>Memory over time</h3>\n");
    for line in memory_summary_lines(&run.memory) {
        html.push_str(&format!("<p>{}</p>\n", prose(&line)));
    }
    for device in &run.memory.devices {
        if device.samples.is_empty() {
            continue;
        }
        html.push_str(&svg_chart(device, &run.memory));
        html.push('\n');
        html.push_str(&legend(&run.memory));
        if !device.peaks_by_phase.is_empty() {
            let rows = peak_rows(device);
            html.push_str(&html_table(&["phase", "peak used", "bytes"], &rows));
        }
        let processes = process_peak_lines(device);
        if !processes.is_empty() {
            html.push_str("<p>Processes during the run:</p>");
            html.push_str(&html_list(&processes, false));
        }
    }
    if let Some(source) = &run.memory.source {
        html.push_str(&format!(
            "<p class=\"source\">Source: {}{}</p>\n",
            escape(source),
            escape(
                &run.memory
                    .sample_rate_hz
                    .map_or_else(String::new, |hz| format!(", sampled at {hz} Hz"))
            )
        ));
    }

    html.push_str(&format!(
        "<h3>Is it fit? (a load is not yet fit)</h3>\n<p>{}</p>\n",
        prose(&run.readiness.summary)
    ));
    html.push_str(&html_table(
        &["check", "result", "evidence"],
        &readiness_rows(run),
    ));
    if !run.readiness.unverified.is_empty() && !run.status.failed {
        html.push_str(&format!(
            "<p>Unverified: {}.</p>\n",
            escape(&run.readiness.unverified.join("; "))
        ));
    }
    if let Some(limit) = &run.readiness.stated_limit {
        html.push_str(&format!("<p>Stated limit: {}.</p>\n", prose(limit)));
    }

    html.push_str(&format!(
        "<h3>Model</h3>\n<p>{}</p>\n",
        prose(&model_line(run))
    ));
    if let Some(line) = checkpoint_line(run) {
        html.push_str(&format!("<p>Checkpoint {}</p>\n", escape(&line)));
    }
    if let Some(engine) = &run.engine {
        html.push_str(&format!(
            "<p>Engine {} ({})</p>\n",
            escape(&engine.value),
            escape(&engine.source)
        ));
    }

    html.push_str("<h3>GPUs before start</h3>\n");
    if run.gpus.is_empty() {
        html.push_str("<p>None listed (see limitations).</p>\n");
    } else {
        let rows: Vec<Vec<String>> = run
            .gpus
            .iter()
            .map(|gpu| {
                vec![
                    gpu_title(gpu),
                    gpu_memory_line(gpu),
                    processes_cell(gpu),
                    gpu.source.clone(),
                ]
            })
            .collect();
        html.push_str(&html_table(
            &["GPU", "memory", "processes", "source"],
            &rows,
        ));
    }

    html.push_str("<h3>Versions</h3>\n");
    let rows = plain_fact_rows(&run.versions);
    html.push_str(&html_table(&["component", "version", "source"], &rows));

    html.push_str(&format!(
        "<h3>Failure phase and timeline</h3>\n<p>{}</p>\n",
        prose(&failure_line(run))
    ));
    if let Some(note) = &run.failure.note {
        html.push_str(&format!("<p><strong>{}</strong></p>\n", prose(note)));
    }
    if !run.timeline.is_empty() {
        let rows = timeline_rows(run);
        html.push_str(&html_table(&["time", "phase", "event", "detail"], &rows));
    }

    if !run.oom.is_empty() {
        html.push_str(&format!(
            "<h3>OOM figures</h3>\n<p>{} OOM message(s) in the log; the first:</p>\n",
            run.oom_count
        ));
        let mut figures = run.oom.clone();
        figures.extend(run.oom_other_processes.iter().cloned());
        html.push_str(&html_table(
            &["figure", "value", "exact", "source"],
            &figure_rows(&figures),
        ));
        html.push_str("<p class=\"dim\">Allocated and reserved are layers of the same process's memory: never add them.</p>\n");
    }

    if let Some(host) = &run.host {
        html.push_str("<h3>Host memory</h3>\n");
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

    html.push_str("<h3>Checkpoint lower bound vs measured</h3>\n");
    let figures = fit_figures(run);
    if !figures.is_empty() {
        html.push_str(&html_table(
            &["figure", "value", "exact", "source"],
            &figure_rows(&figures),
        ));
    }
    html.push_str(&format!("<p>{}</p>\n", prose(&run.fit.note)));

    html.push_str(&format!("<h3>{}</h3>\n", reproduction_title(run)));
    if let Some(request) = &run.reproduction.request {
        html.push_str(&format!("<pre>{}</pre>\n", escape(request)));
    }
    html.push_str(&format!("<p>{}</p>\n", prose(&run.reproduction.note)));
    if let Some(source) = &run.reproduction.source {
        html.push_str(&format!(
            "<p class=\"source\">Source: {}</p>\n",
            escape(source)
        ));
    }

    if !run.training {
        html.push_str("<h3>Concurrency</h3>\n");
        if run.concurrency.is_empty() {
            html.push_str("<p>Nothing recorded.</p>\n");
        } else {
            let rows = plain_fact_rows(&run.concurrency);
            html.push_str(&html_table(&["what", "value", "source"], &rows));
        }
    }

    if let Some(probe) = run.probe.as_ref().filter(|_| !run.training) {
        html.push_str(&format!(
            "<h3>Probe</h3>\n<p><code>{}</code>: verdict {}, plateau {}.</p>\n",
            escape(&probe.file),
            escape(&opt(&probe.verdict)),
            escape(&bytes_opt(probe.plateau_bytes))
        ));
        let rows = probe_phase_rows(probe);
        html.push_str(&html_table(&["phase", "succeeded", "requests"], &rows));
    }

    if !run.environment.is_empty() {
        html.push_str("<h3>Environment</h3>\n");
        let rows: Vec<Vec<String>> = run
            .environment
            .iter()
            .map(|(key, value)| vec![key.clone(), value.clone()])
            .collect();
        html.push_str(&html_table(&["variable", "value"], &rows));
    }

    if !run.log_context.is_empty() {
        html.push_str("<h3>Log before the failure</h3>\n<pre class=\"log\">");
        for line in &run.log_context {
            html.push_str(&escape(line));
            html.push('\n');
        }
        html.push_str("</pre>\n");
    }

    html.push_str("<h3>Limitations</h3>\n");
    if run.limitations.is_empty() {
        html.push_str("<p>None.</p>\n");
    } else {
        html.push_str(&html_list(&run.limitations, false));
    }
    html.push_str("</section>\n");
    html
}

/// The report as one self-contained HTML page (inline CSS and SVG, no external loads).
pub fn render_html(report: &Report) -> Vec<u8> {
    let title = format!(
        "oomdoc report: {} run{}",
        report.runs.len(),
        if report.runs.len() == 1 { "" } else { "s" }
    );
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
    if let Some(comparison) = &report.comparison {
        body.push_str("<section class=\"run\"><h2>Comparison: run 1 (A) vs run 2 (B)</h2>\n");
        body.push_str(&comparison_html(comparison, 3));
        body.push_str("</section>\n");
    }
    for (index, run) in report.runs.iter().enumerate() {
        body.push_str(&html_run(run, index + 1));
    }
    crate::render::html::page(&title, REPORT_CSS, &body).into_bytes()
}
