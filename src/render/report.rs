//! Render `oomdoc report` output: text, Markdown, JSON and one self-contained HTML page with
//! a memory-over-time chart per device (inline SVG: phases as shaded bands, the OOM marked,
//! the peak annotated).
//!
//! Pure: takes the report model (built from redacted records) and returns bytes; computes
//! nothing but layout. Every string in HTML goes through [`crate::render::html::escape`].

use crate::analyze::report::{
    human_duration, DeviceTimeline, Fact, Figure, MemoryFacts, Report, RunReport,
};
use crate::model::explain::Phase;
use crate::model::run::HostRecord;
use crate::model::Bytes;
use crate::render::diff::{comparison_html, comparison_markdown, comparison_text, text_table};
use crate::render::html::{escape, prose};
use crate::render::markdown::{cell as md_cell, prose as md_text, table as md_table};
use crate::render::style::Style;

fn yes_no(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

fn opt(value: &Option<String>) -> String {
    value.clone().unwrap_or_else(|| "unknown".to_owned())
}

fn bytes_opt(value: Option<u64>) -> String {
    value.map_or_else(|| "unknown".to_owned(), |bytes| Bytes(bytes).to_string())
}

fn t_label(t_ms: Option<u64>) -> String {
    t_ms.map_or_else(|| "".to_owned(), |t| format!("+{}", human_duration(t)))
}

fn kind_label(kind: &str) -> &str {
    match kind {
        "hardware_limit" => "hardware limit",
        "configuration_error" => "configuration error",
        "working_configuration" => "working configuration",
        "not_a_gpu_oom" => "not a GPU out-of-memory",
        _ => "undetermined",
    }
}

/// The command line as one shell-like string (arguments with spaces quoted).
pub fn command_line(argv: &[String]) -> String {
    argv.iter()
        .map(|argument| {
            if argument.is_empty()
                || argument.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'')
            {
                format!("'{}'", argument.replace('\'', "'\\''"))
            } else {
                argument.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn gpu_title(gpu: &crate::analyze::report::GpuFacts) -> String {
    let mut title = format!(
        "[{}] {}",
        gpu.index.map_or_else(|| "?".to_owned(), |i| i.to_string()),
        gpu.name.clone().unwrap_or_else(|| "unknown GPU".to_owned())
    );
    if let Some(uuid) = &gpu.uuid {
        title.push_str(&format!("  {uuid}"));
    }
    if let Some(bus) = &gpu.pci_bus_id {
        title.push_str(&format!("  bus {bus}"));
    }
    match gpu.cuda_ordinal {
        Some(ordinal) => title.push_str(&format!("  cuda:{ordinal}")),
        None if !gpu.visible_to_run => title.push_str("  (not visible to the run)"),
        None => {}
    }
    title
}

fn gpu_memory_line(gpu: &crate::analyze::report::GpuFacts) -> String {
    let mut line = format!(
        "total {}, free {}, used {}",
        bytes_opt(gpu.total_bytes),
        bytes_opt(gpu.free_before_bytes),
        bytes_opt(gpu.used_before_bytes)
    );
    if let Some(reserved) = gpu.reserved_bytes {
        line.push_str(&format!(", driver-reserved {}", Bytes(reserved)));
    }
    if let Some(free) = gpu.free_before_bytes {
        line.push_str(&format!(" — free exactly {free} bytes"));
    }
    line
}

/// "At the OOM: free …; processes: …" from the inventory taken when the OOM line appeared.
fn at_oom_line(gpu: &crate::analyze::report::GpuFacts) -> Option<String> {
    if gpu.free_at_oom_bytes.is_none() && gpu.processes_at_oom.is_empty() {
        return None;
    }
    let mut line = format!("at the OOM: free {}", bytes_opt(gpu.free_at_oom_bytes));
    let processes = describe_processes(&gpu.processes_at_oom);
    if !processes.is_empty() {
        line.push_str(&format!("; processes: {}", processes.join("; ")));
    }
    Some(line)
}

/// Processes seen on a device during the run, highest first.
fn process_peak_lines(device: &DeviceTimeline) -> Vec<String> {
    let mut processes: Vec<_> = device.processes.iter().collect();
    processes.sort_by_key(|process| std::cmp::Reverse(process.peak_used_bytes));
    processes
        .iter()
        .map(|process| {
            format!(
                "pid {} {}: peak {}{}{}",
                process
                    .pid
                    .map_or_else(|| "?".to_owned(), |p| p.to_string()),
                process
                    .name
                    .clone()
                    .unwrap_or_else(|| "(name unknown)".to_owned()),
                bytes_opt(process.peak_used_bytes),
                process
                    .peak_t_ms
                    .map_or_else(String::new, |t| format!(" at +{}", human_duration(t))),
                if process.is_child == Some(true) {
                    " (the launched command)"
                } else {
                    ""
                }
            )
        })
        .collect()
}

fn process_lines(gpu: &crate::analyze::report::GpuFacts) -> Vec<String> {
    describe_processes(&gpu.processes_before)
}

fn describe_processes(processes: &[crate::analyze::report::ProcessFacts]) -> Vec<String> {
    processes
        .iter()
        .map(|process| {
            format!(
                "pid {} {}: {}",
                process
                    .pid
                    .map_or_else(|| "?".to_owned(), |p| p.to_string()),
                process
                    .name
                    .clone()
                    .unwrap_or_else(|| "(name unknown)".to_owned()),
                match (process.used_bytes, &process.unavailable_reason) {
                    (Some(bytes), _) => Bytes(bytes).to_string(),
                    (None, Some(reason)) => format!("unknown ({reason})"),
                    (None, None) => "unknown".to_owned(),
                }
            )
        })
        .collect()
}

fn figure_rows(figures: &[Figure]) -> Vec<Vec<String>> {
    figures
        .iter()
        .map(|figure| {
            vec![
                figure.name.clone(),
                Bytes(figure.bytes).to_string(),
                format!("{} bytes", figure.bytes),
                figure.source.clone(),
            ]
        })
        .collect()
}

fn fact_rows(facts: &[Fact]) -> Vec<Vec<String>> {
    facts
        .iter()
        .map(|fact| {
            vec![
                fact.name.clone(),
                fact.value.clone(),
                format!("({})", fact.source),
            ]
        })
        .collect()
}

/// Rows of the readiness table, shared by the markdown and HTML renderers.
fn readiness_rows(run: &RunReport) -> Vec<Vec<String>> {
    let checked = |value: bool| if value { "checked" } else { "not checked" }.to_owned();
    vec![
        vec![
            "short request".to_owned(),
            checked(run.readiness.short_request.checked),
            run.readiness.short_request.evidence.clone(),
        ],
        vec![
            "next real scenario".to_owned(),
            checked(run.readiness.next_scenario.checked),
            run.readiness.next_scenario.evidence.clone(),
        ],
    ]
}

/// `name, value, source` rows (the source as written, not in parentheses).
fn plain_fact_rows(facts: &[Fact]) -> Vec<Vec<String>> {
    facts
        .iter()
        .map(|fact| vec![fact.name.clone(), fact.value.clone(), fact.source.clone()])
        .collect()
}

/// Rows of the startup timeline table.
fn timeline_rows(run: &RunReport) -> Vec<Vec<String>> {
    run.timeline
        .iter()
        .map(|entry| {
            vec![
                t_label(entry.t_ms),
                entry.phase.clone().unwrap_or_default(),
                entry.event.clone(),
                entry.detail.clone().unwrap_or_default(),
            ]
        })
        .collect()
}

/// Rows of a device's peaks-by-phase table.
fn peak_rows(device: &DeviceTimeline) -> Vec<Vec<String>> {
    device
        .peaks_by_phase
        .iter()
        .map(|peak| {
            vec![
                peak.phase.clone(),
                Bytes(peak.peak_used_bytes).to_string(),
                peak.peak_used_bytes.to_string(),
            ]
        })
        .collect()
}

/// Rows of the probe's requests-per-phase table.
fn probe_phase_rows(probe: &crate::analyze::report::ProbeSummary) -> Vec<Vec<String>> {
    probe
        .phases
        .iter()
        .map(|(phase, ok, total)| vec![phase.clone(), ok.to_string(), total.to_string()])
        .collect()
}

fn fit_figures(run: &RunReport) -> Vec<Figure> {
    [
        &run.fit.lower_bound,
        &run.fit.weights_loaded,
        &run.fit.measured_peak,
        &run.fit.capacity,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect()
}

fn model_line(run: &RunReport) -> String {
    let model = &run.model;
    let mut parts = vec![opt(&model.name)];
    for (name, value) in [
        ("format", &model.format),
        ("dtype", &model.dtype),
        ("quantization", &model.quantization),
        ("max model len", &model.max_model_len),
    ] {
        if let Some(value) = value {
            parts.push(format!("{name} {value}"));
        }
    }
    let mut line = parts.join(", ");
    if let Some(source) = &model.source {
        line.push_str(&format!(" ({source})"));
    }
    line
}

fn checkpoint_line(run: &RunReport) -> Option<String> {
    let checkpoint = run.model.checkpoint.as_ref()?;
    let mut line = format!(
        "{}: weights {}",
        checkpoint
            .path
            .clone()
            .unwrap_or_else(|| "checkpoint".to_owned()),
        bytes_opt(checkpoint.weights_total_bytes)
    );
    if !checkpoint.by_dtype.is_empty() {
        let dtypes: Vec<String> = checkpoint
            .by_dtype
            .iter()
            .map(|(dtype, bytes)| format!("{dtype} {}", Bytes(*bytes)))
            .collect();
        line.push_str(&format!(" ({})", dtypes.join(", ")));
    }
    if let Some(format) = &checkpoint.format {
        line.push_str(&format!(", format {format}"));
    }
    line.push_str(&format!(" ({})", checkpoint.source));
    Some(line)
}

fn failure_line(run: &RunReport) -> String {
    if !run.status.failed {
        return format!(
            "did not fail; last completed: {}; server was ready: {}",
            opt(&run.failure.last_completed),
            yes_no(run.failure.server_was_ready)
        );
    }
    format!(
        "failed in: {}; last completed: {}; server was ready: {}; GPU out-of-memory: {}",
        opt(&run.failure.failed_in),
        opt(&run.failure.last_completed),
        yes_no(run.failure.server_was_ready),
        yes_no(run.failure.is_gpu_oom)
    )
}

/// A training run has no request to reproduce: its section says how to reproduce the step.
fn reproduction_title(run: &RunReport) -> &'static str {
    if run.training {
        "Reproducing the failure"
    } else {
        "Minimal reproducing request"
    }
}

fn memory_summary_lines(memory: &MemoryFacts) -> Vec<String> {
    let mut lines = Vec::new();
    if !memory.available {
        // The reason is among the limitations, said once there.
        lines.push(match memory.reason {
            Some(_) => "no memory timeline (why: see Limitations)".to_owned(),
            None => "no memory timeline: not recorded".to_owned(),
        });
    }
    for device in &memory.devices {
        lines.push(format!(
            "{} {}: before start {}, peak {}{}{}",
            device.name.clone().unwrap_or_else(|| "GPU".to_owned()),
            device.uuid.clone().unwrap_or_default(),
            bytes_opt(device.baseline_used_bytes),
            bytes_opt(device.peak_used_bytes),
            device
                .peak_t_ms
                .map_or_else(String::new, |t| format!(" at +{}", human_duration(t))),
            device
                .peak_phase
                .as_ref()
                .map_or_else(String::new, |phase| format!(" in `{phase}`")),
        ));
    }
    if let (Some(t), Some(source)) = (memory.oom_t_ms, &memory.oom_t_source) {
        lines.push(format!("OOM at +{} ({source})", human_duration(t)));
    }
    lines
}

/// The host-memory section as lines: the peak, the cgroup, and the verdict on the end.
fn host_lines(host: &HostRecord) -> Vec<String> {
    let mut lines = crate::render::host::peak_lines(host);
    if let Some(cgroup) = host
        .timeline
        .cgroup_after
        .as_ref()
        .or(host.timeline.cgroup_before.as_ref())
    {
        let version = match cgroup.version {
            Some(crate::model::host::CgroupVersion::V1) => "v1",
            Some(crate::model::host::CgroupVersion::V2) => "v2",
            None => "?",
        };
        lines.push(format!("memory cgroup ({version}): `{}`", cgroup.path));
    }
    if let Some(finding) = &host.finding {
        lines.extend(crate::render::host::finding_lines(finding));
    }
    lines.extend(
        host.timeline
            .limitations
            .iter()
            .map(|limitation| format!("limitation: {limitation}")),
    );
    lines
}

/// Rows of the tree RSS peaks by phase: phase, peak, bytes, time, processes.
fn host_phase_rows(host: &HostRecord) -> Vec<Vec<String>> {
    host.peaks_by_phase
        .iter()
        .map(|peak| {
            vec![
                peak.phase.clone().unwrap_or_default(),
                peak.reading.tree_rss_bytes.to_string(),
                format!("{} bytes", peak.reading.tree_rss_bytes.get()),
                t_label(Some(peak.reading.t_ms)),
                peak.reading.processes.to_string(),
            ]
        })
        .collect()
}

/// [`host_lines`] with lines wrapped for a terminal joined again (Markdown and HTML wrap by
/// themselves): a line indented 4 spaces that is not a list item continues the one before.
fn host_lines_unwrapped(host: &HostRecord) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in host_lines(host) {
        let continued = line.starts_with("    ") && !line.trim_start().starts_with("- ");
        match lines.last_mut() {
            Some(last) if continued => {
                last.push(' ');
                last.push_str(line.trim_start());
            }
            _ => lines.push(line),
        }
    }
    lines
}

const HOST_PHASE_HEADER: [&str; 5] = ["phase", "peak RSS", "bytes", "at", "processes"];

fn text_run(run: &RunReport, number: usize, style: &Style) -> String {
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
    crate::render::width::fit(&text, crate::render::width::TEXT_WIDTH).into_bytes()
}

fn md_run(run: &RunReport, number: usize) -> String {
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
                    {
                        let processes = process_lines(gpu);
                        let before = if processes.is_empty() {
                            "none".to_owned()
                        } else {
                            processes.join("; ")
                        };
                        match at_oom_line(gpu) {
                            Some(line) => format!("{before} — {line}"),
                            None => before,
                        }
                    },
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

/// The report as one JSON document.
pub fn render_json(report: &Report) -> Result<Vec<u8>, serde_json::Error> {
    crate::render::json::to_document(report)
}

// ---------------------------------------------------------------------------------------
// HTML

const REPORT_CSS: &str = ".run{border-top:3px solid #1d2430;margin-top:2.5em;padding-top:.5em}.outcome{font-size:1.15em;font-weight:600}.summary{border-left:5px solid #667085;background:#f6f8fa;padding:.6em 1em;margin:1em 0}.summary.configuration_error{border-color:#b54708}.summary.hardware_limit{border-color:#b42318}.summary.working_configuration{border-color:#067647}.chart{width:100%;height:auto;border:1px solid #d0d6de;background:#fff}.chart text{font-family:system-ui,sans-serif;font-size:11px;fill:#1d2430}.chart .axis{stroke:#98a2b3;stroke-width:1}.chart .grid{stroke:#eaecf0;stroke-width:1}.chart .used{fill:none;stroke:#1849a9;stroke-width:1.6}.chart .total{stroke:#667085;stroke-dasharray:6 4}.chart .oom{stroke:#b42318;stroke-width:2}.chart .oomlabel{fill:#b42318;font-weight:700}.chart .peak{fill:#b54708}.chart .peaklabel{fill:#b54708;font-weight:600}.chart .peaklabel,.chart .oomlabel,.chart .bandlabel{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}.chart .bandlabel{font-size:10px;fill:#344054}.legend span{display:inline-block;margin-right:1em;font-size:.85em}.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em;border:1px solid #98a2b3}pre.log{max-height:24em}pre.cmd{white-space:pre-wrap;word-break:break-all}.outcome code{font-size:.95em}";

/// Fill colours of phase bands, by phase.
fn phase_color(phase: &str) -> &'static str {
    match Phase::from_name(phase) {
        Phase::Startup => "#e4e7ec",
        Phase::WeightsLoad => "#d1e9ff",
        Phase::FormatConversion => "#fef0c7",
        Phase::Profiling => "#ebe9fe",
        Phase::KvCacheAlloc => "#d1fadf",
        Phase::CudaGraphCapture => "#fee4e2",
        Phase::Inference => "#cff9fe",
        Phase::TrainingStep => "#fce7f6",
        Phase::Unknown => "#f2f4f7",
    }
}

fn nice_step(max: f64, ticks: f64) -> f64 {
    let raw = max / ticks;
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let normalised = raw / magnitude;
    let nice = if normalised <= 1.0 {
        1.0
    } else if normalised <= 2.0 {
        2.0
    } else if normalised <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// The memory-over-time chart of one device as inline SVG.
fn svg_chart(device: &DeviceTimeline, memory: &MemoryFacts) -> String {
    const WIDTH: f64 = 1000.0;
    const HEIGHT: f64 = 340.0;
    const LEFT: f64 = 70.0;
    const RIGHT: f64 = 20.0;
    const TOP: f64 = 34.0;
    const BOTTOM: f64 = 44.0;
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;

    let last_sample = device.samples.last().map_or(0, |s| s.0);
    let last_phase = memory
        .phases
        .iter()
        .map(|span| span.end_t_ms.unwrap_or(span.start_t_ms))
        .max()
        .unwrap_or(0);
    let t_max = [
        memory.duration_ms.unwrap_or(0),
        last_sample,
        last_phase,
        memory.oom_t_ms.unwrap_or(0),
        device.peak_t_ms.unwrap_or(0),
    ]
    .into_iter()
    .max()
    .unwrap_or(0)
    .max(1) as f64;
    let sample_max = device.samples.iter().map(|s| s.1).max().unwrap_or(0);
    let y_max = device
        .total_bytes
        .unwrap_or(0)
        .max(sample_max)
        .max(device.peak_used_bytes.unwrap_or(0))
        .max(1) as f64;
    let x = |t: f64| LEFT + t / t_max * plot_width;
    let y = |bytes: f64| TOP + plot_height - bytes / y_max * plot_height;

    let title = format!(
        "Memory used on {} {} over time",
        device.name.clone().unwrap_or_else(|| "GPU".to_owned()),
        device.uuid.clone().unwrap_or_default()
    );
    let mut svg = format!(
        "<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>",
        escape(&title)
    );

    // Phase bands with labels; a label that does not fit its band is left to the legend.
    for (index, span) in memory.phases.iter().enumerate() {
        let start = x(span.start_t_ms as f64);
        let end = x(span.end_t_ms.map_or(t_max, |end| end as f64));
        let band_width = (end - start).max(1.0);
        svg.push_str(&format!(
            "<rect x=\"{start:.1}\" y=\"{TOP}\" width=\"{band_width:.1}\" height=\"{plot_height}\" fill=\"{}\"><title>{}</title></rect>",
            phase_color(&span.phase),
            escape(&format!(
                "{} from +{} to {}",
                span.phase,
                human_duration(span.start_t_ms),
                span.end_t_ms.map_or_else(|| "the end".to_owned(), |end| format!("+{}", human_duration(end)))
            ))
        ));
        let label_width = span.phase.chars().count() as f64 * 6.0 + 6.0;
        if band_width >= label_width {
            let row = if index % 2 == 0 {
                TOP - 8.0
            } else {
                TOP - 20.0
            };
            svg.push_str(&format!(
                "<text class=\"bandlabel\" x=\"{:.1}\" y=\"{row}\">{}</text>",
                start + 3.0,
                escape(&span.phase)
            ));
        }
    }

    // Grid and axes.
    let gib = (1u64 << 30) as f64;
    let step = nice_step(y_max / gib, 5.0) * gib;
    let mut value = 0.0;
    while value <= y_max + 1.0 {
        let line_y = y(value);
        svg.push_str(&format!(
            "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{line_y:.1}\" x2=\"{:.1}\" y2=\"{line_y:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{:.0} GiB</text>",
            LEFT + plot_width,
            LEFT - 6.0,
            line_y + 4.0,
            value / gib
        ));
        value += step;
    }
    let seconds_step = nice_step(t_max / 1000.0, 8.0);
    let mut second = 0.0;
    while second * 1000.0 <= t_max + 1.0 {
        let tick_x = x(second * 1000.0);
        svg.push_str(&format!(
            "<line class=\"axis\" x1=\"{tick_x:.1}\" y1=\"{:.1}\" x2=\"{tick_x:.1}\" y2=\"{:.1}\"/><text x=\"{tick_x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} s</text>",
            TOP + plot_height,
            TOP + plot_height + 5.0,
            TOP + plot_height + 18.0,
            trim_float(second)
        ));
        second += seconds_step;
    }
    svg.push_str(&format!(
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{:.1}\"/><line class=\"axis\" x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
        TOP + plot_height,
        TOP + plot_height,
        LEFT + plot_width,
        TOP + plot_height
    ));
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">time since start</text>",
        LEFT + plot_width / 2.0,
        HEIGHT - 6.0
    ));

    // Device total.
    if let Some(total) = device.total_bytes {
        let total_y = y(total as f64);
        svg.push_str(&format!(
            "<line class=\"total\" x1=\"{LEFT}\" y1=\"{total_y:.1}\" x2=\"{:.1}\" y2=\"{total_y:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\">device total {}</text>",
            LEFT + plot_width,
            LEFT + 4.0,
            total_y + 13.0,
            escape(&Bytes(total).to_string())
        ));
    }

    // Used bytes as a step line (samples are change points).
    if let Some(first) = device.samples.first() {
        let mut path = format!("M{:.1} {:.1}", x(first.0 as f64), y(first.1 as f64));
        for sample in device.samples.iter().skip(1) {
            path.push_str(&format!(
                " H{:.1} V{:.1}",
                x(sample.0 as f64),
                y(sample.1 as f64)
            ));
        }
        let end_t = memory
            .oom_t_ms
            .map_or(last_sample as f64, |t| (t as f64).max(last_sample as f64));
        path.push_str(&format!(" H{:.1}", x(end_t)));
        svg.push_str(&format!("<path class=\"used\" d=\"{path}\"/>"));
    }

    // The OOM.
    if let Some(t) = memory.oom_t_ms {
        // On a multi-GPU run the OOM belongs to one device; the others show where it happened.
        let elsewhere = match (&memory.oom_device_uuid, &device.uuid) {
            (Some(failed), Some(this)) if failed != this => Some(failed.clone()),
            _ => None,
        };
        let oom_x = x(t as f64);
        let anchor = if oom_x > LEFT + plot_width - 60.0 {
            "end"
        } else {
            "start"
        };
        let label_x = if anchor == "end" {
            oom_x - 4.0
        } else {
            oom_x + 4.0
        };
        let (style, label) = match &elsewhere {
            Some(uuid) => (
                " stroke-dasharray=\"4 4\" opacity=\"0.6\"",
                format!("OOM on {uuid} +{}", human_duration(t)),
            ),
            None => ("", format!("OOM +{}", human_duration(t))),
        };
        svg.push_str(&format!(
            "<line class=\"oom\"{style} x1=\"{oom_x:.1}\" y1=\"{TOP}\" x2=\"{oom_x:.1}\" y2=\"{:.1}\"/><text class=\"oomlabel\" x=\"{label_x:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text>",
            TOP + plot_height,
            TOP + plot_height - 8.0,
            escape(&label)
        ));
    }

    // The peak.
    if let (Some(peak), Some(t)) = (device.peak_used_bytes, device.peak_t_ms) {
        let peak_x = x(t as f64);
        let peak_y = y(peak as f64);
        let anchor = if peak_x > LEFT + plot_width * 0.6 {
            "end"
        } else {
            "start"
        };
        let label_x = if anchor == "end" {
            peak_x - 8.0
        } else {
            peak_x + 8.0
        };
        let label = format!(
            "peak {}{}",
            Bytes(peak),
            device
                .peak_phase
                .as_ref()
                .map_or_else(String::new, |phase| format!(" in {phase}"))
        );
        svg.push_str(&format!(
            "<circle class=\"peak\" cx=\"{peak_x:.1}\" cy=\"{peak_y:.1}\" r=\"4\"/><text class=\"peaklabel\" x=\"{label_x:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text>",
            (peak_y + 16.0).min(TOP + plot_height - 22.0),
            escape(&label)
        ));
    }
    svg.push_str("</svg>");
    svg
}

fn trim_float(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn legend(memory: &MemoryFacts) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for span in &memory.phases {
        if !seen.contains(&span.phase.as_str()) {
            seen.push(&span.phase);
        }
    }
    seen.sort_by_key(|phase| Phase::from_name(phase));
    let mut html = String::from("<p class=\"legend\">");
    for phase in seen {
        html.push_str(&format!(
            "<span><i style=\"background:{}\"></i>{}</span>",
            phase_color(phase),
            escape(phase)
        ));
    }
    html.push_str("<span><i style=\"background:#1849a9\"></i>used (NVML)</span><span><i style=\"background:#b42318\"></i>OOM</span></p>\n");
    html
}

fn html_table(header: &[&str], rows: &[Vec<String>]) -> String {
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

fn html_list(items: &[String], ordered: bool) -> String {
    let tag = if ordered { "ol" } else { "ul" };
    let mut html = format!("<{tag}>");
    for item in items {
        html.push_str(&format!("<li>{}</li>", prose(item)));
    }
    html.push_str(&format!("</{tag}>\n"));
    html
}

fn html_run(run: &RunReport, number: usize) -> String {
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
                    {
                        let processes = process_lines(gpu);
                        let before = if processes.is_empty() {
                            "none".to_owned()
                        } else {
                            processes.join("; ")
                        };
                        match at_oom_line(gpu) {
                            Some(line) => format!("{before} — {line}"),
                            None => before,
                        }
                    },
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_quotes_spaces() {
        let argv: Vec<String> = ["python", "-c", "print('x y')"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(command_line(&argv), "python -c 'print('\\''x y'\\'')'");
    }

    #[test]
    fn the_oom_is_marked_on_its_own_device() {
        let device = |uuid: &str| DeviceTimeline {
            uuid: Some(uuid.to_owned()),
            total_bytes: Some(80 << 30),
            samples: vec![(0, 0), (1000, 70 << 30)],
            peak_used_bytes: Some(70 << 30),
            peak_t_ms: Some(1000),
            ..DeviceTimeline::default()
        };
        let memory = MemoryFacts {
            available: true,
            duration_ms: Some(2000),
            oom_t_ms: Some(1500),
            oom_device_uuid: Some("GPU-b".to_owned()),
            ..MemoryFacts::default()
        };
        let failing = svg_chart(&device("GPU-b"), &memory);
        let other = svg_chart(&device("GPU-a"), &memory);
        assert!(failing.contains(">OOM +1.5 s</text>"), "{failing}");
        assert!(other.contains(">OOM on GPU-b +1.5 s</text>"), "{other}");
        assert!(other.contains("stroke-dasharray"));
    }

    #[test]
    fn nice_steps_are_round() {
        assert_eq!(nice_step(140.0, 5.0), 50.0);
        assert_eq!(nice_step(105.0, 8.0), 20.0);
    }
}
