//! The report as text for a terminal: one arm per section kind, in the order the report's
//! section list gives.

use super::*;

fn heading(text: &mut String, style: &Style, title: &str) {
    text.push('\n');
    text.push_str(&style.bold(title));
    text.push('\n');
}

fn source_line(text: &mut String, style: &Style, line: &str) {
    text.push_str(&style.dim(line));
    text.push('\n');
}

fn outcome(run: &RunReport, style: &Style) -> String {
    let outcome = if run.status.failed {
        style.bad(&run.status.summary)
    } else {
        style.good(&run.status.summary)
    };
    text_table(
        &[
            vec!["Outcome".to_owned(), outcome],
            vec!["Command".to_owned(), command_line(&run.command)],
            vec!["Directory".to_owned(), opt(&run.cwd)],
            vec![
                "Started".to_owned(),
                format!(
                    "{} (ended {})",
                    opt(&run.status.started_at),
                    opt(&run.status.ended_at)
                ),
            ],
        ],
        "",
    )
}

fn section(text: &mut String, section: &RunSection<'_>, style: &Style) {
    match section {
        RunSection::Outcome(run) => text.push_str(&outcome(run, style)),
        RunSection::Verdict(verdict) => {
            heading(text, style, "Verdict");
            text.push_str(&format!("  {}\n", verdict.cause));
            if !verdict.evidence.is_empty() {
                text.push_str("  Evidence:\n");
                for line in &verdict.evidence {
                    text.push_str(&format!("    - {line}\n"));
                }
            }
            if !verdict.next_steps.is_empty() {
                text.push_str("  Next steps:\n");
                for (index, line) in verdict.next_steps.iter().enumerate() {
                    text.push_str(&format!("    {}. {line}\n", index + 1));
                }
            }
            source_line(text, style, &format!("  (source: {})", verdict.source));
        }
        RunSection::OwnerSummary(summary) => {
            heading(text, style, &owner_title(summary));
            text.push_str(&format!("  {}\n", summary.text));
            if let Some(action) = &summary.action {
                text.push_str(&format!("  Action: {action}\n"));
            }
            if let Some(from_explain) = &summary.from_explain {
                text.push_str(&format!("  From the log diagnosis: {from_explain}\n"));
            }
        }
        RunSection::Readiness {
            readiness,
            unverified,
        } => {
            heading(text, style, READINESS_TITLE);
            text.push_str(&format!("  {}\n", readiness.summary));
            for row in readiness_rows(readiness) {
                text.push_str(&format!("  {}: {} — {}\n", row[0], row[1], row[2]));
            }
            if !unverified.is_empty() {
                text.push_str(&format!("  unverified: {}\n", unverified.join("; ")));
            }
            if let Some(limit) = &readiness.stated_limit {
                text.push_str(&format!("  stated limit: {limit}\n"));
            }
        }
        RunSection::Model { model, engine } => {
            heading(text, style, "Model");
            text.push_str(&format!("  {}\n", model_line(model)));
            if let Some(line) = checkpoint_line(model) {
                text.push_str(&format!("  checkpoint {line}\n"));
            }
            if let Some(engine) = engine {
                text.push_str(&format!("  engine {} ({})\n", engine.value, engine.source));
            }
        }
        RunSection::Gpus(gpus) => {
            heading(text, style, GPUS_TITLE);
            if gpus.is_empty() {
                text.push_str("  none listed (see limitations)\n");
            }
            for gpu in *gpus {
                text.push_str(&format!("  {}\n", gpu_title(gpu)));
                text.push_str(&format!("    {}\n", gpu_memory_line(gpu)));
                let processes = process_lines(gpu);
                if processes.is_empty() {
                    text.push_str("    processes: none\n");
                } else {
                    text.push_str("    processes:\n");
                    for line in processes {
                        text.push_str(&format!("      {line}\n"));
                    }
                }
                if let Some(line) = at_oom_line(gpu) {
                    text.push_str(&format!("    {line}\n"));
                }
                source_line(text, style, &format!("    ({})", gpu.source));
            }
        }
        RunSection::Facts { kind, facts } => {
            let (title, _, none) = fact_list_labels(*kind);
            heading(text, style, title);
            if facts.is_empty() {
                text.push_str(&format!("  {none}\n"));
            } else {
                text.push_str(&text_table(&fact_rows(facts), "  "));
            }
        }
        RunSection::Failure {
            failed,
            failure,
            timeline,
        } => {
            heading(text, style, FAILURE_TITLE);
            text.push_str(&format!("  {}\n", failure_line(*failed, failure)));
            if let Some(note) = &failure.note {
                text.push_str(&format!("  {note}\n"));
            }
            if !timeline.is_empty() {
                text.push_str(&text_table(&timeline_rows(timeline), "  "));
            }
        }
        RunSection::OomFigures { messages, figures } => {
            let title = format!("OOM figures ({messages} OOM message(s) in the log)");
            heading(text, style, &title);
            text.push_str(&text_table(&figure_rows(figures), "  "));
            text.push_str(
                "  allocated and reserved are layers of the same process's memory: never add them\n",
            );
        }
        RunSection::Memory(memory) => {
            heading(text, style, "Memory over time");
            for line in memory_summary_lines(memory) {
                text.push_str(&format!("  {line}\n"));
            }
        }
        RunSection::Chart { .. } => {}
        RunSection::PhasePeaks { device, .. } => {
            let on = device_uuid(&device.timeline)
                .map_or_else(String::new, |uuid| format!(" on {uuid}"));
            text.push_str(&format!("  peaks by phase{on}:\n"));
            text.push_str(&text_table(&peak_rows(device), "    "));
        }
        RunSection::ProcessPeaks(device) => {
            text.push_str("  processes during the run:\n");
            for line in process_peak_lines(device) {
                text.push_str(&format!("    {line}\n"));
            }
        }
        RunSection::MemorySource {
            source,
            sample_rate_hz,
        } => source_line(
            text,
            style,
            &format!("  (source: {source}{})", rate_text(*sample_rate_hz)),
        ),
        RunSection::Host(host) => {
            heading(text, style, "Host memory");
            for line in host_lines(host) {
                text.push_str(&format!("  {line}\n"));
            }
            if !host.peaks_by_phase.is_empty() {
                text.push_str("  peak RSS of the process tree by phase:\n");
                text.push_str(&text_table(&host_phase_rows(host), "    "));
            }
        }
        RunSection::FitVsMeasured { figures, note } => {
            heading(text, style, FIT_TITLE);
            if !figures.is_empty() {
                text.push_str(&text_table(&figure_rows(figures), "  "));
            }
            text.push_str(&format!("  {note}\n"));
        }
        RunSection::Reproduction {
            training,
            reproduction,
        } => {
            heading(text, style, reproduction_title(*training));
            if let Some(request) = &reproduction.request {
                text.push_str(&format!("  {request}\n"));
            }
            text.push_str(&format!("  {}\n", reproduction.note));
            if let Some(source) = &reproduction.source {
                source_line(text, style, &format!("  (source: {source})"));
            }
        }
        RunSection::Probe(probe) => {
            heading(text, style, "Probe");
            text.push_str(&format!("  {}: {}\n", probe.file, probe_line(probe)));
            for (phase, ok, total) in &probe.phases {
                text.push_str(&format!("  {phase}: {ok} of {total} requests succeeded\n"));
            }
        }
        RunSection::Environment(environment) => {
            heading(text, style, "Environment");
            let rows: Vec<Vec<String>> = environment
                .iter()
                .map(|(key, value)| vec![key.clone(), value.clone()])
                .collect();
            text.push_str(&text_table(&rows, "  "));
        }
        RunSection::LogContext(lines) => {
            heading(text, style, LOG_TITLE);
            for line in *lines {
                text.push_str(&format!("  | {line}\n"));
            }
        }
        RunSection::Limitations(limitations) => {
            heading(text, style, "Limitations");
            if limitations.is_empty() {
                text.push_str("  none\n");
            }
            for limitation in *limitations {
                text.push_str(&format!("  - {limitation}\n"));
            }
        }
    }
}

/// The report as text for a terminal, fitted to 100 columns (quoted log lines cut with `…`).
pub fn render_text(report: &Report, style: &Style) -> Vec<u8> {
    let mut text = style.bold(&report_title(report));
    text.push_str("\n\n");
    for part in report.parts() {
        match part {
            ReportPart::Run {
                number,
                run,
                sections,
            } => {
                if number > 1 {
                    text.push('\n');
                }
                text.push_str(&style.bold(&format!("== Run {number}: {} ==", run.run)));
                text.push('\n');
                for item in &sections {
                    section(&mut text, item, style);
                }
            }
            ReportPart::Comparison(comparison) => {
                text.push('\n');
                text.push_str(&style.bold(&format!("== {COMPARISON_TITLE} ==")));
                text.push('\n');
                text.push_str(&comparison_text(comparison, style));
            }
        }
    }
    crate::render::wrap::fit_quoting(&text).into_bytes()
}
