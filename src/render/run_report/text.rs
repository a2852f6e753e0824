//! The report as text for a terminal.

use super::*;

pub(super) fn text_run(run: &RunReport, number: usize, style: &Style) -> String {
    let mut text = String::new();
    let heading = format!("== Run {number}: {} ==", run.run);
    text.push_str(&style.bold(&heading));
    text.push('\n');
    let outcome = if run.status.failed {
        style.bad(&run.status.summary)
    } else {
        style.good(&run.status.summary)
    };
    text.push_str(&text_table(
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
    ));

    let section = |text: &mut String, title: &str| {
        text.push('\n');
        text.push_str(&style.bold(title));
        text.push('\n');
    };

    section(&mut text, "Verdict");
    text.push_str(&format!("  {}\n", run.verdict.cause));
    if !run.verdict.evidence.is_empty() {
        text.push_str("  Evidence:\n");
        for line in &run.verdict.evidence {
            text.push_str(&format!("    - {line}\n"));
        }
    }
    if !run.verdict.next_steps.is_empty() {
        text.push_str("  Next steps:\n");
        for (index, line) in run.verdict.next_steps.iter().enumerate() {
            text.push_str(&format!("    {}. {line}\n", index + 1));
        }
    }
    text.push_str(&style.dim(&format!("  (source: {})", run.verdict.source)));
    text.push('\n');

    section(
        &mut text,
        &format!("Owner summary: {}", kind_label(&run.owner_summary.kind)),
    );
    text.push_str(&format!("  {}\n", run.owner_summary.text));
    if let Some(action) = &run.owner_summary.action {
        text.push_str(&format!("  Action: {action}\n"));
    }
    if let Some(from_explain) = &run.owner_summary.from_explain {
        text.push_str(&format!("  From the log diagnosis: {from_explain}\n"));
    }

    section(&mut text, "Is it fit? (a load is not yet fit)");
    text.push_str(&format!("  {}\n", run.readiness.summary));
    text.push_str(&format!(
        "  short request: {} — {}\n",
        if run.readiness.short_request.checked {
            "checked"
        } else {
            "not checked"
        },
        run.readiness.short_request.evidence
    ));
    text.push_str(&format!(
        "  next real scenario: {} — {}\n",
        if run.readiness.next_scenario.checked {
            "checked"
        } else {
            "not checked"
        },
        run.readiness.next_scenario.evidence
    ));
    if !run.readiness.unverified.is_empty() && !run.status.failed {
        text.push_str(&format!(
            "  unverified: {}\n",
            run.readiness.unverified.join("; ")
        ));
    }
    if let Some(limit) = &run.readiness.stated_limit {
        text.push_str(&format!("  stated limit: {limit}\n"));
    }

    section(&mut text, "Model");
    text.push_str(&format!("  {}\n", model_line(run)));
    if let Some(line) = checkpoint_line(run) {
        text.push_str(&format!("  checkpoint {line}\n"));
    }
    if let Some(engine) = &run.engine {
        text.push_str(&format!("  engine {} ({})\n", engine.value, engine.source));
    }

    section(&mut text, "GPUs before start");
    if run.gpus.is_empty() {
        text.push_str("  none listed (see limitations)\n");
    }
    for gpu in &run.gpus {
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
        text.push_str(&style.dim(&format!("    ({})", gpu.source)));
        text.push('\n');
    }

    section(&mut text, "Versions");
    if run.versions.is_empty() {
        text.push_str("  none recorded\n");
    } else {
        text.push_str(&text_table(&fact_rows(&run.versions), "  "));
    }

    section(&mut text, "Failure phase and timeline");
    text.push_str(&format!("  {}\n", failure_line(run)));
    if let Some(note) = &run.failure.note {
        text.push_str(&format!("  {note}\n"));
    }
    if !run.timeline.is_empty() {
        let rows = timeline_rows(run);
        text.push_str(&text_table(&rows, "  "));
    }

    if !run.oom.is_empty() {
        section(
            &mut text,
            &format!("OOM figures ({} OOM message(s) in the log)", run.oom_count),
        );
        let mut figures = run.oom.clone();
        figures.extend(run.oom_other_processes.iter().cloned());
        text.push_str(&text_table(&figure_rows(&figures), "  "));
        text.push_str(
            "  allocated and reserved are layers of the same process's memory: never add them\n",
        );
    }

    section(&mut text, "Memory over time");
    for line in memory_summary_lines(&run.memory) {
        text.push_str(&format!("  {line}\n"));
    }
    for device in &run.memory.devices {
        if !device.peaks_by_phase.is_empty() {
            text.push_str(&format!(
                "  peaks by phase{}:\n",
                device
                    .uuid
                    .as_ref()
                    .map_or_else(String::new, |uuid| format!(" on {uuid}"))
            ));
            let rows: Vec<Vec<String>> = device
                .peaks_by_phase
                .iter()
                .map(|peak| {
                    vec![
                        peak.phase.clone(),
                        Bytes(peak.peak_used_bytes).to_string(),
                        format!("{} bytes", peak.peak_used_bytes),
                    ]
                })
                .collect();
            text.push_str(&text_table(&rows, "    "));
        }
        let processes = process_peak_lines(device);
        if !processes.is_empty() {
            text.push_str("  processes during the run:\n");
            for line in processes {
                text.push_str(&format!("    {line}\n"));
            }
        }
    }
    if let Some(source) = &run.memory.source {
        let rate = run
            .memory
            .sample_rate_hz
            .map_or_else(String::new, |hz| format!(", sampled at {hz} Hz"));
        text.push_str(&style.dim(&format!("  (source: {source}{rate})")));
        text.push('\n');
    }

    if let Some(host) = &run.host {
        section(&mut text, "Host memory");
        for line in host_lines(host) {
            text.push_str(&format!("  {line}\n"));
        }
        if !host.peaks_by_phase.is_empty() {
            text.push_str("  peak RSS of the process tree by phase:\n");
            text.push_str(&text_table(&host_phase_rows(host), "    "));
        }
    }

    section(&mut text, "Checkpoint lower bound vs measured");
    let figures = fit_figures(run);
    if !figures.is_empty() {
        text.push_str(&text_table(&figure_rows(&figures), "  "));
    }
    text.push_str(&format!("  {}\n", run.fit.note));

    section(&mut text, reproduction_title(run));
    if let Some(request) = &run.reproduction.request {
        text.push_str(&format!("  {request}\n"));
    }
    text.push_str(&format!("  {}\n", run.reproduction.note));
    if let Some(source) = &run.reproduction.source {
        text.push_str(&style.dim(&format!("  (source: {source})")));
        text.push('\n');
    }

    if !run.training {
        section(&mut text, "Concurrency");
        if run.concurrency.is_empty() {
            text.push_str("  nothing recorded\n");
        } else {
            text.push_str(&text_table(&fact_rows(&run.concurrency), "  "));
        }
    }

    if let Some(probe) = run.probe.as_ref().filter(|_| !run.training) {
        section(&mut text, "Probe");
        text.push_str(&format!(
            "  {}: verdict {}, plateau {}\n",
            probe.file,
            opt(&probe.verdict),
            bytes_opt(probe.plateau_bytes)
        ));
        for (phase, ok, total) in &probe.phases {
            text.push_str(&format!("  {phase}: {ok} of {total} requests succeeded\n"));
        }
    }

    if !run.environment.is_empty() {
        section(&mut text, "Environment");
        let rows: Vec<Vec<String>> = run
            .environment
            .iter()
            .map(|(key, value)| vec![key.clone(), value.clone()])
            .collect();
        text.push_str(&text_table(&rows, "  "));
    }

    if !run.log_context.is_empty() {
        section(&mut text, "Log before the failure");
        for line in &run.log_context {
            text.push_str(&format!("  | {line}\n"));
        }
    }

    section(&mut text, "Limitations");
    if run.limitations.is_empty() {
        text.push_str("  none\n");
    }
    for limitation in &run.limitations {
        text.push_str(&format!("  - {limitation}\n"));
    }
    text
}

/// The report as text for a terminal, fitted to 100 columns (quoted log lines cut with `…`).
pub fn render_text(report: &Report, style: &Style) -> Vec<u8> {
    let mut text = style.bold(&format!(
        "oomdoc report: {} run{}",
        report.runs.len(),
        if report.runs.len() == 1 { "" } else { "s" }
    ));
    text.push_str("\n\n");
    for (index, run) in report.runs.iter().enumerate() {
        if index > 0 {
            text.push('\n');
        }
        text.push_str(&text_run(run, index + 1, style));
    }
    if let Some(comparison) = &report.comparison {
        text.push('\n');
        text.push_str(&style.bold("== Comparison: run 1 (A) vs run 2 (B) =="));
        text.push('\n');
        text.push_str(&comparison_text(comparison, style));
    }
    crate::render::wrap::fit_quoting(&text).into_bytes()
}
