//! The report as GitHub-flavoured Markdown: one arm per section kind, in the order the
//! report's section list gives.

use super::*;

/// The table of a figure list (OOM figures, lower bound vs measured).
fn figure_table(figures: &[&Figure]) -> String {
    md_table(
        &["figure", "value", "exact", "source"],
        &figure_rows(figures),
    )
}

fn outcome(run: &RunReport) -> String {
    let mut text = format!("**Outcome:** {}\n\n", run.status.summary);
    text.push_str(&format!(
        "```\n{}\n```\n\n",
        command_line(&run.command).replace("```", "'''")
    ));
    text.push_str(&format!(
        "Directory `{}`, started {}, ended {}.\n\n",
        md_cell(&opt(&run.cwd)),
        opt(&run.status.started_at),
        opt(&run.status.ended_at)
    ));
    text
}

fn list(text: &mut String, items: &[String]) {
    for item in items {
        text.push_str(&format!("- {}\n", md_text(item)));
    }
    text.push('\n');
}

fn section(text: &mut String, section: &RunSection<'_>) {
    match section {
        RunSection::Outcome(run) => text.push_str(&outcome(run)),
        RunSection::Verdict(verdict) => {
            text.push_str(&format!("### Verdict\n\n{}\n\n", md_text(&verdict.cause)));
            if !verdict.evidence.is_empty() {
                text.push_str("Evidence:\n\n");
                list(text, &verdict.evidence);
            }
            if !verdict.next_steps.is_empty() {
                text.push_str("Next steps:\n\n");
                for (index, line) in verdict.next_steps.iter().enumerate() {
                    text.push_str(&format!("{}. {}\n", index + 1, md_text(line)));
                }
                text.push('\n');
            }
            text.push_str(&format!("_Source: {}._\n\n", verdict.source));
        }
        RunSection::OwnerSummary(summary) => {
            text.push_str(&format!(
                "### {}\n\n{}\n\n",
                owner_title(summary),
                md_text(&summary.text)
            ));
            if let Some(action) = &summary.action {
                text.push_str(&format!("**Action:** {}\n\n", md_text(action)));
            }
            if let Some(from_explain) = &summary.from_explain {
                text.push_str(&format!("From the log diagnosis: {from_explain}\n\n"));
            }
        }
        RunSection::Readiness {
            readiness,
            unverified,
        } => {
            text.push_str(&format!(
                "### {READINESS_TITLE}\n\n{}\n\n",
                readiness.summary
            ));
            text.push_str(&md_table(
                &["check", "result", "evidence"],
                &readiness_rows(readiness),
            ));
            if !unverified.is_empty() {
                text.push_str(&format!("Unverified: {}.\n\n", unverified.join("; ")));
            }
            if let Some(limit) = &readiness.stated_limit {
                text.push_str(&format!("Stated limit: {limit}.\n\n"));
            }
        }
        RunSection::Model { model, engine } => {
            text.push_str(&format!("### Model\n\n{}\n\n", model_line(model)));
            if let Some(line) = checkpoint_line(model) {
                text.push_str(&format!("Checkpoint {line}\n\n"));
            }
            if let Some(engine) = engine {
                text.push_str(&format!("Engine {} ({}).\n\n", engine.value, engine.source));
            }
        }
        RunSection::Gpus(gpus) => {
            text.push_str(&format!("### {GPUS_TITLE}\n\n"));
            if gpus.is_empty() {
                text.push_str("None listed (see limitations).\n\n");
            } else {
                text.push_str(&md_table(&GPU_HEADER, &gpu_rows(gpus)));
            }
        }
        RunSection::Facts { kind, facts } => {
            let (title, header, none) = fact_list_labels(*kind);
            text.push_str(&format!("### {title}\n\n"));
            if facts.is_empty() {
                text.push_str(&format!("{}\n\n", sentence(none)));
            } else {
                text.push_str(&md_table(&header, &plain_fact_rows(facts)));
            }
        }
        RunSection::Failure {
            failed,
            failure,
            timeline,
        } => {
            text.push_str(&format!(
                "### {FAILURE_TITLE}\n\n{}\n\n",
                failure_line(*failed, failure)
            ));
            if let Some(note) = &failure.note {
                text.push_str(&format!("{note}.\n\n"));
            }
            if !timeline.is_empty() {
                let rows = timeline_rows(timeline);
                text.push_str(&md_table(&["time", "phase", "event", "detail"], &rows));
            }
        }
        RunSection::OomFigures { messages, figures } => {
            text.push_str(&format!(
                "### OOM figures\n\n{messages} OOM message(s) in the log; the first:\n\n"
            ));
            text.push_str(&figure_table(figures));
            text.push_str(
                "Allocated and reserved are layers of the same process's memory: never add them.\n\n",
            );
        }
        RunSection::Memory(memory) => {
            text.push_str("### Memory over time\n\n");
            let lines = memory_summary_lines(memory);
            list(text, &lines);
        }
        RunSection::Chart { .. } => {}
        RunSection::PhasePeaks { device, source } => {
            text.push_str(&format!(
                "Peaks by phase on `{}` ({}):\n\n",
                device_uuid(&device.timeline).unwrap_or_default(),
                source.unwrap_or("memory timeline")
            ));
            text.push_str(&md_table(&PEAK_HEADER, &peak_rows(device)));
        }
        RunSection::ProcessPeaks(device) => {
            text.push_str("Processes during the run:\n\n");
            list(text, &process_peak_lines(device));
        }
        RunSection::MemorySource {
            source,
            sample_rate_hz,
        } => text.push_str(&format!(
            "_Source: {source}{}._\n\n",
            rate_text(*sample_rate_hz)
        )),
        RunSection::Host(host) => {
            text.push_str("### Host memory\n\n");
            for line in host_lines_unwrapped(host) {
                match line.strip_prefix("  ") {
                    Some(nested) => text.push_str(&format!(
                        "  - {}\n",
                        md_text(nested.trim_start().trim_start_matches("- "))
                    )),
                    None => text.push_str(&format!("- {}\n", md_text(&line))),
                }
            }
            text.push('\n');
            if !host.peaks_by_phase.is_empty() {
                text.push_str("Peak RSS of the process tree by phase:\n\n");
                text.push_str(&md_table(&HOST_PHASE_HEADER, &host_phase_rows(host)));
            }
        }
        RunSection::FitVsMeasured { figures, note } => {
            text.push_str(&format!("### {FIT_TITLE}\n\n"));
            if !figures.is_empty() {
                text.push_str(&figure_table(figures));
            }
            text.push_str(&format!("{note}.\n\n"));
        }
        RunSection::Reproduction {
            training,
            reproduction,
        } => {
            text.push_str(&format!("### {}\n\n", reproduction_title(*training)));
            if let Some(request) = &reproduction.request {
                text.push_str(&format!("```\n{}\n```\n\n", request.replace("```", "'''")));
            }
            text.push_str(&reproduction.note);
            if let Some(source) = &reproduction.source {
                text.push_str(&format!(" (source: {source})"));
            }
            text.push_str(".\n\n");
        }
        RunSection::Probe(probe) => {
            text.push_str(&format!(
                "### Probe\n\n`{}`: {}.\n\n",
                md_cell(&probe.file),
                probe_line(probe)
            ));
            let rows = probe_phase_rows(probe);
            text.push_str(&md_table(&["phase", "succeeded", "requests"], &rows));
        }
        RunSection::Environment(environment) => {
            text.push_str("### Environment\n\n");
            let rows: Vec<Vec<String>> = environment
                .iter()
                .map(|(key, value)| vec![format!("`{key}`"), format!("`{value}`")])
                .collect();
            text.push_str(&md_table(&["variable", "value"], &rows));
        }
        RunSection::LogContext(lines) => {
            text.push_str(&format!("### {LOG_TITLE}\n\n```\n"));
            for line in *lines {
                text.push_str(&line.replace("```", "'''"));
                text.push('\n');
            }
            text.push_str("```\n\n");
        }
        RunSection::Limitations(limitations) => {
            text.push_str("### Limitations\n\n");
            if limitations.is_empty() {
                text.push_str("None.\n\n");
            } else {
                list(text, limitations);
            }
        }
    }
}

/// The report as GitHub-flavoured Markdown.
pub fn render_markdown(report: &Report) -> Vec<u8> {
    let mut text = format!("# {}\n\n", report_title(report));
    for part in report.parts() {
        match part {
            ReportPart::Run {
                number,
                run,
                sections,
            } => {
                text.push_str(&format!("## Run {number}: `{}`\n\n", md_cell(&run.run)));
                for item in &sections {
                    section(&mut text, item);
                }
            }
            ReportPart::Comparison(comparison) => {
                text.push_str(&format!("## {COMPARISON_TITLE}\n\n"));
                text.push_str(&comparison_markdown(comparison, 3));
            }
        }
    }
    let trimmed = text.trim_end().to_owned() + "\n";
    trimmed.into_bytes()
}
