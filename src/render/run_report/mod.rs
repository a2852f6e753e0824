//! Render `oomdoc report` output: text, Markdown, JSON and one self-contained HTML page with
//! a memory-over-time chart per device (inline SVG: phases as shaded bands, the OOM marked,
//! the peak annotated).
//!
//! Pure: takes the report model (built from redacted records) and returns bytes; computes
//! nothing but layout. Every string in HTML goes through [`crate::render::html::escape`].

use crate::analyze::run_report::{
    DeviceMemory, Fact, FactList, FailureFacts, Figure, GpuAtStart, MemoryFacts, ModelFacts,
    OwnerSummary, ProbeSummary, Readiness, Report, ReportPart, RunReport, RunSection,
    TimelineEntry,
};
use crate::model::explain::Phase;
use crate::model::machine::GpuProcess;
use crate::model::run::{human_duration, DeviceTimeline, HostRecord};
use crate::model::Bytes;
use crate::render::diff::{comparison_html, comparison_markdown, comparison_text, text_table};
use crate::render::html::{escape, prose};
use crate::render::markdown::{cell as md_cell, prose as md_text, table as md_table};
use crate::render::style::Style;

mod chart;
mod html;
mod markdown;
mod text;

use chart::*;
pub use html::render_html;
pub use markdown::render_markdown;
pub use text::render_text;

pub(super) fn yes_no(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

pub(super) fn opt(value: &Option<String>) -> String {
    value.clone().unwrap_or_else(|| "unknown".to_owned())
}

/// A phase's name, `unknown` when not known.
pub(super) fn phase_text(phase: Option<Phase>) -> &'static str {
    phase.unwrap_or_default().as_str()
}

pub(super) fn bytes_opt(value: Option<u64>) -> String {
    value.map_or_else(|| "unknown".to_owned(), |bytes| Bytes(bytes).to_string())
}

pub(super) fn t_label(t_ms: Option<u64>) -> String {
    t_ms.map_or_else(|| "".to_owned(), |t| format!("+{}", human_duration(t)))
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

pub(super) fn gpu_title(gpu: &GpuAtStart) -> String {
    let device = &gpu.device;
    let mut title = format!(
        "[{}] {}",
        device.index.get(),
        Some(device.name.as_str())
            .filter(|name| !name.is_empty())
            .unwrap_or("unknown GPU")
    );
    if !device.uuid.is_empty() {
        title.push_str(&format!("  {}", device.uuid));
    }
    if !device.pci_bus_id.is_empty() {
        title.push_str(&format!("  bus {}", device.pci_bus_id));
    }
    match device.cuda_ordinal {
        Some(ordinal) => title.push_str(&format!("  cuda:{}", ordinal.get())),
        None if !gpu.visible_to_run => title.push_str("  (not visible to the run)"),
        None => {}
    }
    title
}

pub(super) fn gpu_memory_line(gpu: &GpuAtStart) -> String {
    let memory = &gpu.device.memory;
    let mut line = format!(
        "total {}, free {}, used {}",
        memory.total_bytes, memory.free_bytes, memory.used_bytes
    );
    if let Some(reserved) = memory.reserved_bytes {
        line.push_str(&format!(", driver-reserved {reserved}"));
    }
    line.push_str(&format!(
        " — free exactly {} bytes",
        memory.free_bytes.get()
    ));
    line
}

/// "At the OOM: free …; processes: …" from the inventory taken when the OOM line appeared.
pub(super) fn at_oom_line(gpu: &GpuAtStart) -> Option<String> {
    let at_oom = gpu.at_oom.as_ref()?;
    let mut line = format!("at the OOM: free {}", at_oom.memory.free_bytes);
    let processes = describe_processes(&at_oom.processes);
    if !processes.is_empty() {
        line.push_str(&format!("; processes: {}", processes.join("; ")));
    }
    Some(line)
}

/// Processes seen on a device during the run, highest first.
pub(super) fn process_peak_lines(device: &DeviceTimeline) -> Vec<String> {
    let mut processes: Vec<_> = device.processes.iter().collect();
    processes.sort_by_key(|process| std::cmp::Reverse(process.peak_used_bytes));
    processes
        .iter()
        .map(|process| {
            format!(
                "pid {} {}: peak {}{}{}",
                process.pid,
                process
                    .name
                    .clone()
                    .unwrap_or_else(|| "(name unknown)".to_owned()),
                bytes_opt(process.peak_used_bytes.map(Bytes::get)),
                process
                    .peak_t_ms
                    .map_or_else(String::new, |t| format!(" at +{}", human_duration(t))),
                if process.is_child {
                    " (the launched command)"
                } else {
                    ""
                }
            )
        })
        .collect()
}

pub(super) fn process_lines(gpu: &GpuAtStart) -> Vec<String> {
    describe_processes(&gpu.device.processes)
}

/// The processes cell of a GPU table row: the processes before the start (or "none"), then
/// what the inventory at the OOM showed.
pub(super) fn processes_cell(gpu: &GpuAtStart) -> String {
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
}

pub(super) fn describe_processes(processes: &[GpuProcess]) -> Vec<String> {
    processes
        .iter()
        .map(|process| {
            format!(
                "pid {} {}: {}",
                process.pid,
                process
                    .name
                    .clone()
                    .unwrap_or_else(|| "(name unknown)".to_owned()),
                match (process.used_bytes, &process.unavailable_reason) {
                    (Some(bytes), _) => bytes.to_string(),
                    (None, Some(reason)) => format!("unknown ({reason})"),
                    (None, None) => "unknown".to_owned(),
                }
            )
        })
        .collect()
}

pub(super) fn figure_rows(figures: &[&Figure]) -> Vec<Vec<String>> {
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

pub(super) fn fact_rows(facts: &[Fact]) -> Vec<Vec<String>> {
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

/// Rows of the readiness checks: check, result, evidence.
pub(super) fn readiness_rows(readiness: &Readiness) -> Vec<Vec<String>> {
    let checked = |value: bool| if value { "checked" } else { "not checked" }.to_owned();
    vec![
        vec![
            "short request".to_owned(),
            checked(readiness.short_request.checked),
            readiness.short_request.evidence.clone(),
        ],
        vec![
            "next real scenario".to_owned(),
            checked(readiness.next_scenario.checked),
            readiness.next_scenario.evidence.clone(),
        ],
    ]
}

/// `name, value, source` rows (the source as written, not in parentheses).
pub(super) fn plain_fact_rows(facts: &[Fact]) -> Vec<Vec<String>> {
    facts
        .iter()
        .map(|fact| vec![fact.name.clone(), fact.value.clone(), fact.source.clone()])
        .collect()
}

/// Rows of the startup timeline table.
pub(super) fn timeline_rows(timeline: &[TimelineEntry]) -> Vec<Vec<String>> {
    timeline
        .iter()
        .map(|entry| {
            vec![
                t_label(entry.t_ms),
                entry.phase.as_str().to_owned(),
                entry.event.clone(),
                entry.detail.clone().unwrap_or_default(),
            ]
        })
        .collect()
}

/// Rows of a device's peaks-by-phase table: phase, peak, exact bytes.
pub(super) fn peak_rows(device: &DeviceMemory) -> Vec<Vec<String>> {
    device
        .peaks_by_phase
        .iter()
        .map(|(phase, bytes)| {
            vec![
                phase.as_str().to_owned(),
                bytes.to_string(),
                format!("{} bytes", bytes.get()),
            ]
        })
        .collect()
}

/// The device's UUID, when the timeline has one (records written before it was kept have none).
pub(super) fn device_uuid(device: &DeviceTimeline) -> Option<&str> {
    Some(device.uuid.as_str()).filter(|uuid| !uuid.is_empty())
}

/// The device's product name, "GPU" when the record does not say.
pub(super) fn device_name(device: &DeviceTimeline) -> &str {
    Some(device.name.as_str())
        .filter(|name| !name.is_empty())
        .unwrap_or("GPU")
}

/// Rows of the probe's requests-per-phase table.
pub(super) fn probe_phase_rows(probe: &ProbeSummary) -> Vec<Vec<String>> {
    probe
        .phases
        .iter()
        .map(|(phase, ok, total)| vec![phase.clone(), ok.to_string(), total.to_string()])
        .collect()
}

/// "verdict …, plateau …" of a probe (each format names the file its own way).
pub(super) fn probe_line(probe: &ProbeSummary) -> String {
    format!(
        "verdict {}, plateau {}",
        opt(&probe.verdict),
        bytes_opt(probe.plateau_bytes)
    )
}

/// ", sampled at N Hz" when the rate is known.
pub(super) fn rate_text(sample_rate_hz: Option<f64>) -> String {
    sample_rate_hz.map_or_else(String::new, |hz| format!(", sampled at {hz} Hz"))
}

pub(super) fn model_line(model: &ModelFacts) -> String {
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

pub(super) fn checkpoint_line(model: &ModelFacts) -> Option<String> {
    let checkpoint = model.checkpoint.as_ref()?;
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

pub(super) fn failure_line(failed: bool, failure: &FailureFacts) -> String {
    if !failed {
        return format!(
            "did not fail; last completed: {}; server was ready: {}",
            phase_text(failure.last_completed),
            yes_no(failure.server_was_ready)
        );
    }
    format!(
        "failed in: {}; last completed: {}; server was ready: {}; GPU out-of-memory: {}",
        phase_text(failure.failed_in),
        phase_text(failure.last_completed),
        yes_no(failure.server_was_ready),
        yes_no(failure.is_gpu_oom)
    )
}

/// A training run has no request to reproduce: its section says how to reproduce the step.
pub(super) fn reproduction_title(training: bool) -> &'static str {
    if training {
        "Reproducing the failure"
    } else {
        "Minimal reproducing request"
    }
}

/// "Owner summary: configuration error".
pub(super) fn owner_title(summary: &OwnerSummary) -> String {
    format!("Owner summary: {}", summary.kind.label())
}

/// "oomdoc report: N run(s)".
pub(super) fn report_title(report: &Report) -> String {
    format!(
        "oomdoc report: {} run{}",
        report.runs.len(),
        if report.runs.len() == 1 { "" } else { "s" }
    )
}

/// A fact list's title, table header and what it says when empty (lower case, no stop).
pub(super) fn fact_list_labels(kind: FactList) -> (&'static str, [&'static str; 3], &'static str) {
    match kind {
        FactList::Versions => (
            "Versions",
            ["component", "version", "source"],
            "none recorded",
        ),
        FactList::Concurrency => (
            "Concurrency",
            ["what", "value", "source"],
            "nothing recorded",
        ),
    }
}

/// "none recorded" → "None recorded." (Markdown and HTML write sentences).
pub(super) fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

pub(super) const READINESS_TITLE: &str = "Is it fit? (a load is not yet fit)";
pub(super) const GPUS_TITLE: &str = "GPUs before start";
pub(super) const FAILURE_TITLE: &str = "Failure phase and timeline";
pub(super) const FIT_TITLE: &str = "Checkpoint lower bound vs measured";
pub(super) const LOG_TITLE: &str = "Log before the failure";
pub(super) const COMPARISON_TITLE: &str = "Comparison: run 1 (A) vs run 2 (B)";

pub(super) fn memory_summary_lines(memory: &MemoryFacts) -> Vec<String> {
    let mut lines = Vec::new();
    if !memory.available {
        // The reason is among the limitations, said once there.
        lines.push(match memory.reason {
            Some(_) => "no memory timeline (why: see Limitations)".to_owned(),
            None => "no memory timeline: not recorded".to_owned(),
        });
    }
    for device in memory.devices.iter().map(|device| &device.timeline) {
        lines.push(format!(
            "{} {}: before start {}, peak {}{}{}",
            device_name(device),
            device.uuid,
            bytes_opt(device.baseline_used_bytes.map(Bytes::get)),
            bytes_opt(device.peak_used_bytes.map(Bytes::get)),
            device
                .peak_t_ms
                .map_or_else(String::new, |t| format!(" at +{}", human_duration(t))),
            device
                .peak_phase
                .as_ref()
                .map_or_else(String::new, |phase| format!(" in `{}`", phase.as_str())),
        ));
    }
    if let (Some(t), Some(source)) = (memory.oom_t_ms, &memory.oom_t_source) {
        lines.push(format!("OOM at +{} ({source})", human_duration(t)));
    }
    lines
}

/// The host-memory section as lines: the peak, the cgroup, and the verdict on the end.
pub(super) fn host_lines(host: &HostRecord) -> Vec<String> {
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
pub(super) fn host_phase_rows(host: &HostRecord) -> Vec<Vec<String>> {
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
pub(super) fn host_lines_unwrapped(host: &HostRecord) -> Vec<String> {
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

/// The GPU table's columns, the same in every format that draws tables.
pub(super) const GPU_HEADER: [&str; 4] = ["GPU", "memory", "processes", "source"];

/// Rows of the GPU table: the title line, the memory line, the processes, the source.
pub(super) fn gpu_rows(gpus: &[GpuAtStart]) -> Vec<Vec<String>> {
    gpus.iter()
        .map(|gpu| {
            vec![
                gpu_title(gpu),
                gpu_memory_line(gpu),
                processes_cell(gpu),
                gpu.source.clone(),
            ]
        })
        .collect()
}

/// The peaks-by-phase table's columns.
pub(super) const PEAK_HEADER: [&str; 3] = ["phase", "peak used", "exact"];

pub(super) const HOST_PHASE_HEADER: [&str; 5] = ["phase", "peak RSS", "bytes", "at", "processes"];

/// The report as one JSON document.
pub fn render_json(report: &Report) -> Result<Vec<u8>, serde_json::Error> {
    crate::render::json::to_document(report)
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
            uuid: uuid.into(),
            total_bytes: Bytes(80 << 30),
            samples: vec![[0, 0], [1000, 70 << 30]],
            peak_used_bytes: Some(Bytes(70 << 30)),
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
