//! The report as GitHub-flavoured Markdown.

use super::*;

pub(super) fn md_run(run: &RunReport, number: usize) -> String {
    let mut text = format!("## Run {number}: `{}`\n\n", md_cell(&run.run));
    text.push_str(&format!("**Outcome:** {}\n\n", run.status.summary));
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

    text.push_str(&format!(
        "### Verdict\n\n{}\n\n",
        md_text(&run.verdict.cause)
    ));
    if !run.verdict.evidence.is_empty() {
        text.push_str("Evidence:\n\n");
        for line in &run.verdict.evidence {
            text.push_str(&format!("- {}\n", md_text(line)));
        }
        text.push('\n');
    }
    if !run.verdict.next_steps.is_empty() {
        text.push_str("Next steps:\n\n");
        for (index, line) in run.verdict.next_steps.iter().enumerate() {
            text.push_str(&format!("{}. {}\n", index + 1, md_text(line)));
        }
        text.push('\n');
    }
    text.push_str(&format!("_Source: {}._\n\n", run.verdict.source));

    text.push_str(&format!(
        "### Owner summary: {}\n\n{}\n\n",
        kind_label(&run.owner_summary.kind),
        md_text(&run.owner_summary.text)
    ));
    if let Some(action) = &run.owner_summary.action {
        text.push_str(&format!("**Action:** {}\n\n", md_text(action)));
    }
    if let Some(from_explain) = &run.owner_summary.from_explain {
        text.push_str(&format!("From the log diagnosis: {from_explain}\n\n"));
    }

    text.push_str(&format!(
        "### Is it fit? (a load is not yet fit)\n\n{}\n\n",
        run.readiness.summary
    ));
    text.push_str(&md_table(
        &["check", "result", "evidence"],
        &readiness_rows(run),
    ));
    if !run.readiness.unverified.is_empty() && !run.status.failed {
        text.push_str(&format!(
            "Unverified: {}.\n\n",
            run.readiness.unverified.join("; ")
        ));
    }
    if let Some(limit) = &run.readiness.stated_limit {
        text.push_str(&format!("Stated limit: {limit}.\n\n"));
    }

    text.push_str(&format!("### Model\n\n{}\n\n", model_line(run)));
    if let Some(line) = checkpoint_line(run) {
        text.push_str(&format!("Checkpoint {line}\n\n"));
    }
    if let Some(engine) = &run.engine {
        text.push_str(&format!("Engine {} ({}).\n\n", engine.value, engine.source));
    }

    text.push_str("### GPUs before start\n\n");
    if run.gpus.is_empty() {
        text.push_str("None listed (see limitations).\n\n");
    } else {
        let rows: Vec<Vec<String>> = run
            .gpus
            .iter()
            .map(|gpu| {
                vec![
                    gpu.index.map_or_else(|| "?".to_owned(), |i| i.to_string()),
                    gpu.name.clone().unwrap_or_default(),
                    gpu.uuid.clone().unwrap_or_default(),
                    gpu.cuda_ordinal
                        .map_or_else(|| "-".to_owned(), |o| format!("cuda:{o}")),
                    bytes_opt(gpu.total_bytes),
                    bytes_opt(gpu.free_before_bytes),
                    bytes_opt(gpu.used_before_bytes),
                    processes_cell(gpu),
                    gpu.source.clone(),
                ]
            })
            .collect();
        text.push_str(&md_table(
            &[
                "index",
                "name",
                "UUID",
                "CUDA",
                "total",
                "free",
                "used",
                "processes",
                "source",
            ],
            &rows,
        ));
    }

    text.push_str("### Versions\n\n");
    if run.versions.is_empty() {
        text.push_str("None recorded.\n\n");
    } else {
        let rows = plain_fact_rows(&run.versions);
        text.push_str(&md_table(&["component", "version", "source"], &rows));
    }

    text.push_str(&format!(
        "### Failure phase and timeline\n\n{}\n\n",
        failure_line(run)
    ));
    if let Some(note) = &run.failure.note {
        text.push_str(&format!("{note}.\n\n"));
    }
    if !run.timeline.is_empty() {
        let rows = timeline_rows(run);
        text.push_str(&md_table(&["time", "phase", "event", "detail"], &rows));
    }

    if !run.oom.is_empty() {
        text.push_str(&format!(
            "### OOM figures\n\n{} OOM message(s) in the log; the first:\n\n",
            run.oom_count
        ));
        let mut figures = run.oom.clone();
        figures.extend(run.oom_other_processes.iter().cloned());
        text.push_str(&md_table(
            &["figure", "value", "exact", "source"],
            &figure_rows(&figures),
        ));
        text.push_str(
            "Allocated and reserved are layers of the same process's memory: never add them.\n\n",
        );
    }

    text.push_str("### Memory over time\n\n");
    for line in memory_summary_lines(&run.memory) {
        text.push_str(&format!("- {}\n", md_text(&line)));
    }
    text.push('\n');
    for device in &run.memory.devices {
        if !device.peaks_by_phase.is_empty() {
            let rows = peak_rows(device);
            text.push_str(&format!(
                "Peaks by phase on `{}` ({}):\n\n",
                device.uuid.clone().unwrap_or_default(),
                run.memory
                    .source
                    .clone()
                    .unwrap_or_else(|| "memory timeline".to_owned())
            ));
            text.push_str(&md_table(&["phase", "peak used", "bytes"], &rows));
        }
        let processes = process_peak_lines(device);
        if !processes.is_empty() {
            text.push_str("Processes during the run:\n\n");
            for line in processes {
                text.push_str(&format!("- {}\n", md_text(&line)));
            }
            text.push('\n');
        }
    }

    if let Some(host) = &run.host {
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

    text.push_str("### Checkpoint lower bound vs measured\n\n");
    let figures = fit_figures(run);
    if !figures.is_empty() {
        text.push_str(&md_table(
            &["figure", "value", "exact", "source"],
            &figure_rows(&figures),
        ));
    }
    text.push_str(&format!("{}.\n\n", run.fit.note));

    text.push_str(&format!("### {}\n\n", reproduction_title(run)));
    if let Some(request) = &run.reproduction.request {
        text.push_str(&format!("```\n{}\n```\n\n", request.replace("```", "'''")));
    }
    text.push_str(&run.reproduction.note);
    if let Some(source) = &run.reproduction.source {
        text.push_str(&format!(" (source: {source})"));
    }
    text.push_str(".\n\n");

    if !run.training {
        text.push_str("### Concurrency\n\n");
        if run.concurrency.is_empty() {
            text.push_str("Nothing recorded.\n\n");
        } else {
            let rows = plain_fact_rows(&run.concurrency);
            text.push_str(&md_table(&["what", "value", "source"], &rows));
        }
    }

    if let Some(probe) = run.probe.as_ref().filter(|_| !run.training) {
        text.push_str(&format!(
            "### Probe\n\n`{}`: verdict {}, plateau {}.\n\n",
            md_cell(&probe.file),
            opt(&probe.verdict),
            bytes_opt(probe.plateau_bytes)
        ));
        let rows = probe_phase_rows(probe);
        text.push_str(&md_table(&["phase", "succeeded", "requests"], &rows));
    }

    if !run.environment.is_empty() {
        text.push_str("### Environment\n\n");
        let rows: Vec<Vec<String>> = run
            .environment
            .iter()
            .map(|(key, value)| vec![format!("`{key}`"), format!("`{value}`")])
            .collect();
        text.push_str(&md_table(&["variable", "value"], &rows));
    }

    if !run.log_context.is_empty() {
        text.push_str("### Log before the failure\n\n```\n");
        for line in &run.log_context {
            text.push_str(&line.replace("```", "'''"));
            text.push('\n');
        }
        text.push_str("```\n\n");
    }

    text.push_str("### Limitations\n\n");
    if run.limitations.is_empty() {
        text.push_str("None.\n\n");
    } else {
        for limitation in &run.limitations {
            text.push_str(&format!("- {}\n", md_text(limitation)));
        }
        text.push('\n');
    }
    text
}

/// The report as GitHub-flavoured Markdown.
pub fn render_markdown(report: &Report) -> Vec<u8> {
    let mut text = format!(
        "# oomdoc report: {} run{}\n\n",
        report.runs.len(),
        if report.runs.len() == 1 { "" } else { "s" }
    );
    for (index, run) in report.runs.iter().enumerate() {
        text.push_str(&md_run(run, index + 1));
    }
    if let Some(comparison) = &report.comparison {
        text.push_str("## Comparison: run 1 (A) vs run 2 (B)\n\n");
        text.push_str(&comparison_markdown(comparison, 3));
    }
    let trimmed = text.trim_end().to_owned() + "\n";
    trimmed.into_bytes()
}
