//! Render `oomdoc gpus`: a compact table read at a glance (text, Markdown, HTML) or the JSON
//! document. Pure: takes the analysed [`Inventory`], returns bytes.

use std::fmt::Write as _;

use crate::model::host::{ContainerIdentity, ContainerRuntime, QosClass};
use crate::model::machine::{
    CudaNumbering, CudaWarning, Device, DeviceFlag, DeviceOrder, GpuProcess, Inventory,
    NumberingFrom, NvidiaVisibleDevices, ProcessFlag, Recording, SamplingBenchmark, VisibleStop,
};
use crate::model::Bytes;
use crate::render::html;
use crate::render::json::to_document;
use crate::render::style::{printable, Style};
use crate::render::wrap;

/// Widest process command shown in the table, in characters.
const COMMAND_WIDTH: usize = 48;

/// The `oomdoc gpus --json` document (`schema_version` 1).
pub fn json(inventory: &Inventory) -> Result<Vec<u8>, serde_json::Error> {
    to_document(inventory)
}

/// An `oomdoc gpus --record` recording (the JSON document plus memory samples).
pub fn recording(recording: &Recording) -> Result<Vec<u8>, serde_json::Error> {
    to_document(recording)
}

/// The text table.
pub fn text(inventory: &Inventory, style: Style) -> Vec<u8> {
    let mut out = String::new();
    let _ = writeln!(out, "{}", style.bold(&heading(inventory)));
    if inventory.devices.is_empty() {
        let _ = writeln!(out, "no GPU found");
    } else {
        out.push('\n');
        let mut rows: Vec<[String; 8]> = inventory
            .devices
            .iter()
            .map(|d| row(inventory, d))
            .collect();
        fit_names(&mut rows);
        let header = [
            "GPU",
            "CUDA",
            "UUID",
            "BUS ID",
            "NAME",
            "USED / TOTAL",
            "RESERVED",
            "FREE",
        ];
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row.iter()) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut text = String::new();
            for (position, (cell, width)) in cells.iter().zip(widths.iter()).enumerate() {
                let right = matches!(position, 0 | 1 | 5 | 6 | 7);
                if position > 0 {
                    text.push_str("  ");
                }
                // Padded by hand: `format!` widths above 65,535 panic ("Formatting argument
                // out of range"), and a GPU name from a replay file can be that long (#14).
                let padding = " ".repeat(width.saturating_sub(cell.chars().count()));
                if right {
                    text.push_str(&padding);
                    text.push_str(cell);
                } else {
                    text.push_str(cell);
                    text.push_str(&padding);
                }
            }
            text.trim_end().to_string()
        };
        let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
        let _ = writeln!(out, "{}", style.bold(&line(&header)));
        let indent = " ".repeat(widths[0] + widths[1] + 4);
        for (device, row) in inventory.devices.iter().zip(rows.iter()) {
            let _ = writeln!(out, "{}", line(row));
            for process in &device.processes {
                let _ = writeln!(out, "{indent}{}", process_columns(process));
                // Flags and reasons go under the process, one a line (wrapped below).
                for note in process_notes(process, style) {
                    let _ = writeln!(out, "{indent}  {note}");
                }
                if let Some(container) = &process.container {
                    let _ = writeln!(
                        out,
                        "{indent}  {}",
                        style.dim(&format!("in {}", printable(&container_text(container))))
                    );
                }
            }
            if let Some(reason) = &device.processes_unavailable_reason {
                let _ = writeln!(
                    out,
                    "{indent}{}",
                    style.warn(&format!("processes unavailable: {reason}"))
                );
            } else if device.processes.is_empty() {
                let _ = writeln!(out, "{indent}{}", style.dim("no processes"));
            }
            for instance in &device.mig_instances {
                let ordinal = instance
                    .cuda_ordinal
                    .map_or("-".to_string(), |o| o.to_string());
                let memory = instance.memory.map_or(String::new(), |m| {
                    format!("  {} / {}", m.used_bytes, m.total_bytes)
                });
                let _ = writeln!(
                    out,
                    "{indent}MIG {} (cuda {ordinal}) {}{memory}",
                    instance.index, instance.uuid
                );
            }
            for flag in &device.flags {
                if let Some(text) = device_flag(flag) {
                    let _ = writeln!(out, "{indent}{}", style.warn(&format!("! {text}")));
                }
            }
        }
    }
    out.push('\n');
    for note in notes(inventory) {
        let _ = writeln!(out, "{}", printable(&note));
    }
    let warnings = cuda_warnings(inventory);
    for warning in &warnings {
        let _ = writeln!(
            out,
            "{}",
            style.warn(&format!("warning: {}", printable(warning)))
        );
    }
    if !inventory.limitations.is_empty() {
        let _ = writeln!(out, "{}", style.bold("limitations:"));
        for limitation in &inventory.limitations {
            let _ = writeln!(out, "  - {}", printable(limitation));
        }
    }
    wrap::fit(&out).into_bytes()
}

/// The NAME column of the text table: `NVIDIA ` left out (every row is an NVIDIA GPU; the
/// full name is in `--json`), then cut with `…` where the table would still be wider than
/// [`wrap::TEXT_WIDTH`].
fn fit_names(rows: &mut [[String; 8]]) {
    for row in rows.iter_mut() {
        if let Some(short) = row[4].strip_prefix("NVIDIA ") {
            row[4] = short.to_string();
        }
    }
    // Eight columns, two spaces between them; headers count for the width too.
    let headers = [3, 4, 4, 6, 4, 12, 8, 4];
    let width = |column: usize| {
        rows.iter()
            .map(|row| row[column].chars().count())
            .chain([headers[column]])
            .max()
            .unwrap_or(0)
    };
    let others: usize = (0..8).filter(|c| *c != 4).map(width).sum::<usize>() + 7 * 2;
    let room = wrap::TEXT_WIDTH.saturating_sub(others).max(8);
    for row in rows.iter_mut() {
        row[4] = wrap::cut(&row[4], room);
    }
}

/// A GitHub-flavoured Markdown report.
pub fn markdown(inventory: &Inventory) -> Vec<u8> {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", heading(inventory));
    if inventory.devices.is_empty() {
        let _ = writeln!(out, "No GPU found.\n");
    } else {
        let _ = writeln!(
            out,
            "| GPU | CUDA | UUID | Bus id | Name | Used / total | Reserved | Free |"
        );
        let _ = writeln!(out, "|---:|---:|---|---|---|---:|---:|---:|");
        for device in &inventory.devices {
            let cells = row(inventory, device);
            let _ = writeln!(out, "| {} |", cells.map(|c| md_escape(&c)).join(" | "));
        }
        out.push('\n');
        let any_process = inventory.devices.iter().any(|d| !d.processes.is_empty());
        if any_process {
            let _ = writeln!(
                out,
                "| GPU | PID | Process | Used | Type | Host RSS | Container | Flags |"
            );
            let _ = writeln!(out, "|---:|---:|---|---:|---|---:|---|---|");
            for device in &inventory.devices {
                for process in &device.processes {
                    let flags: Vec<String> = process.flags.iter().map(process_flag).collect();
                    let _ = writeln!(
                        out,
                        "| {} | {} | {} | {} | {} | {} | {} | {} |",
                        device.index,
                        process.pid,
                        md_escape(&process_name(process)),
                        md_escape(&process_used(process)),
                        process.process_type.as_deref().unwrap_or(""),
                        process
                            .host_rss_bytes
                            .map_or(String::new(), |rss| rss.to_string()),
                        md_escape(
                            &process
                                .container
                                .as_ref()
                                .map_or(String::new(), container_text)
                        ),
                        md_escape(&flags.join("; "))
                    );
                }
            }
            out.push('\n');
        }
        for device in &inventory.devices {
            for flag in &device.flags {
                if let Some(text) = device_flag(flag) {
                    let _ = writeln!(out, "- GPU {}: {}", device.index, md_escape(&text));
                }
            }
        }
    }
    for note in notes(inventory) {
        let _ = writeln!(out, "- {}", md_escape(&note));
    }
    for warning in cuda_warnings(inventory) {
        let _ = writeln!(out, "- **warning:** {}", md_escape(&warning));
    }
    if !inventory.limitations.is_empty() {
        let _ = writeln!(out, "\n## Limitations\n");
        for limitation in &inventory.limitations {
            let _ = writeln!(out, "- {}", md_escape(limitation));
        }
    }
    out.into_bytes()
}

/// One self-contained HTML page.
pub fn html(inventory: &Inventory) -> Vec<u8> {
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}</h1>", html::escape(&heading(inventory)));
    if !inventory.devices.is_empty() {
        body.push_str("<table><tr><th>GPU</th><th>CUDA</th><th>UUID</th><th>Bus id</th><th>Name</th><th>Used / total</th><th>Reserved</th><th>Free</th><th>Processes</th></tr>\n");
        for device in &inventory.devices {
            let cells = row(inventory, device);
            body.push_str("<tr>");
            for (position, cell) in cells.iter().enumerate() {
                let class = if matches!(position, 0 | 1 | 5 | 6 | 7) {
                    " class=\"num\""
                } else {
                    ""
                };
                let _ = write!(body, "<td{class}>{}</td>", html::escape(cell));
            }
            let processes: Vec<String> = device
                .processes
                .iter()
                .map(|p| {
                    let mut line = process_line(p, Style::new(false));
                    if let Some(container) = &p.container {
                        line.push_str(" — in ");
                        line.push_str(&container_text(container));
                    }
                    html::escape(&line)
                })
                .collect();
            let flags: Vec<String> = device
                .flags
                .iter()
                .filter_map(device_flag)
                .map(|text| format!("<span class=\"warn\">{}</span>", html::escape(&text)))
                .collect();
            let mut cell = processes.join("<br>");
            for flag in flags {
                cell.push_str("<br>");
                cell.push_str(&flag);
            }
            let _ = writeln!(body, "<td>{cell}</td></tr>");
        }
        body.push_str("</table>\n");
    }
    body.push_str("<ul>\n");
    for note in notes(inventory) {
        let _ = writeln!(body, "<li>{}</li>", html::escape(&note));
    }
    for warning in cuda_warnings(inventory) {
        let _ = writeln!(
            body,
            "<li class=\"warn\">warning: {}</li>",
            html::escape(&warning)
        );
    }
    body.push_str("</ul>\n");
    if !inventory.limitations.is_empty() {
        body.push_str("<h2>Limitations</h2><ul>\n");
        for limitation in &inventory.limitations {
            let _ = writeln!(body, "<li>{}</li>", html::escape(limitation));
        }
        body.push_str("</ul>\n");
    }
    html::page("oomdoc gpus", "", &body).into_bytes()
}

/// The `--bench-sampling` result as text.
pub fn benchmark_text(benchmark: &SamplingBenchmark) -> Vec<u8> {
    format!(
        "memory() on {}: {} calls in {} ms = {:.0} calls/s (slowest call {} µs)\n\
         inventory: first {:.2} ms, then median {:.2} ms, max {:.2} ms over {} runs\n",
        benchmark.uuid,
        benchmark.memory_calls,
        benchmark.duration_ms,
        benchmark.memory_calls_per_second,
        benchmark.memory_call_max_us,
        benchmark.inventory_first_us as f64 / 1000.0,
        benchmark.inventory_median_us as f64 / 1000.0,
        benchmark.inventory_max_us as f64 / 1000.0,
        benchmark.inventory_runs
    )
    .into_bytes()
}

fn heading(inventory: &Inventory) -> String {
    let mut parts = Vec::new();
    if let Some(source) = inventory.source {
        parts.push(source.label().to_string());
    }
    if let Some(driver) = &inventory.driver_version {
        parts.push(format!("driver {driver}"));
    }
    if let Some(cuda) = &inventory.cuda_version {
        parts.push(format!("CUDA {cuda}"));
    }
    let count = inventory.devices.len();
    let mut text = format!("{count} GPU{}", if count == 1 { "" } else { "s" });
    if let Some(numbering) = &inventory.cuda {
        let _ = write!(text, ", {} visible to CUDA", numbering.visible_count);
    }
    if !parts.is_empty() {
        let _ = write!(text, " ({})", parts.join(", "));
    }
    if let Some(elapsed) = inventory.elapsed_us {
        let _ = write!(text, " in {:.1} ms", elapsed as f64 / 1000.0);
    }
    text
}

fn row(inventory: &Inventory, device: &Device) -> [String; 8] {
    let memory = &device.memory;
    [
        device.index.to_string(),
        device
            .cuda_ordinal
            .map_or_else(|| "-".to_string(), |ordinal| ordinal.to_string()),
        short_uuid(inventory, &device.uuid),
        printable(&device.pci_bus_id),
        printable(&device.name),
        format!("{} / {}", memory.used_bytes, memory.total_bytes),
        memory
            .reserved_bytes
            .map_or_else(|| "n/a".to_string(), |reserved| reserved.to_string()),
        memory.free_bytes.to_string(),
    ]
}

/// The shortest prefix of `uuid`, at least `GPU-` + 8 characters, that no other device
/// shares: what `CUDA_VISIBLE_DEVICES` accepts.
fn short_uuid(inventory: &Inventory, uuid: &str) -> String {
    let characters: Vec<char> = uuid.chars().collect();
    let mut length = 12.min(characters.len());
    loop {
        let prefix: String = characters[..length].iter().collect();
        let shared = inventory
            .devices
            .iter()
            .filter(|device| device.uuid != uuid && device.uuid.starts_with(&prefix))
            .count();
        if shared == 0 || length >= characters.len() {
            return prefix;
        }
        length += 1;
    }
}

fn process_name(process: &GpuProcess) -> String {
    let text = process
        .command
        .as_deref()
        .or(process.name.as_deref())
        .map(printable)
        .unwrap_or_else(|| "(name unavailable)".to_string());
    if text.chars().count() > COMMAND_WIDTH {
        let mut cut: String = text.chars().take(COMMAND_WIDTH - 1).collect();
        cut.push('…');
        cut
    } else {
        text
    }
}

fn process_used(process: &GpuProcess) -> String {
    process
        .used_bytes
        .map_or_else(|| "n/a".to_string(), |bytes| bytes.to_string())
}

/// A process on one line: its columns, then its flags and reasons.
fn process_line(process: &GpuProcess, style: Style) -> String {
    let mut text = process_columns(process);
    for note in process_notes(process, style) {
        text.push_str("  ");
        text.push_str(&note);
    }
    text
}

/// PID, command, bytes used, type and host RSS of a process, aligned.
fn process_columns(process: &GpuProcess) -> String {
    let mut text = format!(
        "pid {:>7}  {:<width$}  {:>10}",
        process.pid,
        process_name(process),
        process_used(process),
        width = COMMAND_WIDTH.min(24)
    );
    if let Some(kind) = &process.process_type {
        let _ = write!(text, "  {kind}");
    }
    if let Some(rss) = process.host_rss_bytes {
        let _ = write!(text, "  host RSS {rss}");
    }
    text
}

/// A process's flags and the reasons a figure is missing, each a short text.
fn process_notes(process: &GpuProcess, style: Style) -> Vec<String> {
    let mut notes = Vec::new();
    for flag in &process.flags {
        notes.push(style.warn(&format!("[{}]", process_flag(flag))));
    }
    if let Some(reason) = &process.unavailable_reason {
        notes.push(style.dim(&format!("(bytes unavailable: {reason})")));
    }
    if process.name.is_none() && process.command.is_none() {
        if let Some(reason) = &process.name_unavailable_reason {
            notes.push(style.dim(&format!("(name unavailable: {reason})")));
        }
    }
    notes
}

/// A container and its pod, e.g. `containerd 4c6f1b2a9d3e, pod inference/vllm-0 (burstable)`.
fn container_text(container: &ContainerIdentity) -> String {
    let runtime = container.runtime.map(|runtime| match runtime {
        ContainerRuntime::Docker => "docker",
        ContainerRuntime::Containerd => "containerd",
        ContainerRuntime::CriO => "CRI-O",
        ContainerRuntime::Podman => "podman",
    });
    let mut parts = Vec::new();
    match (runtime, &container.id) {
        // Docker's own short form: the first 12 digits.
        (Some(runtime), Some(id)) => parts.push(format!("{runtime} {}", short_id(id))),
        (None, Some(id)) => parts.push(format!("container {}", short_id(id))),
        (Some(runtime), None) => parts.push(runtime.to_string()),
        (None, None) => {}
    }
    if let Some(uid) = &container.pod_uid {
        let qos = container.qos_class.map(|qos| match qos {
            QosClass::Guaranteed => "guaranteed",
            QosClass::Burstable => "burstable",
            QosClass::BestEffort => "besteffort",
        });
        let name = match (&container.namespace, &container.pod_name) {
            (Some(namespace), Some(name)) => format!("pod {namespace}/{name}"),
            (None, Some(name)) => format!("pod {name}"),
            _ => format!("pod uid {uid}"),
        };
        parts.push(match qos {
            Some(qos) => format!("{name} ({qos})"),
            None => name,
        });
    }
    parts.join(", ")
}

fn short_id(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

fn process_flag(flag: &ProcessFlag) -> String {
    match flag {
        ProcessFlag::OtherUser { user_id } => format!("another user's (uid {user_id})"),
        ProcessFlag::DisplayServer => "display server".to_string(),
        ProcessFlag::LikelyOrphanedEngineWorker { parent_pid } => format!(
            "likely orphaned engine worker: parent is {} — kill it to free its memory",
            parent_pid.map_or_else(|| "gone".to_string(), |pid| format!("PID {pid}"))
        ),
        ProcessFlag::ForeignPidNamespace => {
            "not in this PID namespace (NVML gives host PIDs)".to_string()
        }
    }
}

fn device_flag(flag: &DeviceFlag) -> Option<String> {
    match flag {
        DeviceFlag::UsedWithoutVisibleProcess { used_bytes } => Some(format!(
            "{used_bytes} used but no process listed: held by processes of another PID namespace (container) or hidden from this user"
        )),
        DeviceFlag::UnaccountedUsage { unaccounted_bytes } => Some(format!(
            "{unaccounted_bytes} used beyond what the listed processes hold"
        )),
        DeviceFlag::MigEnabled => Some(
            "MIG is enabled: CUDA sees MIG instances, not this GPU; select one with `CUDA_VISIBLE_DEVICES=MIG-…`".to_string(),
        ),
        DeviceFlag::NotVisibleToCuda => None,
    }
}

/// Explanations: reserved memory, the CUDA numbering, the container.
fn notes(inventory: &Inventory) -> Vec<String> {
    let mut notes = Vec::new();
    let cuda_totals: Vec<(u32, Bytes)> = inventory
        .devices
        .iter()
        .filter_map(|device| Some((device.index, device.memory.cuda_total_bytes()?)))
        .collect();
    if let Some((_, first)) = cuda_totals.first() {
        let listed = if cuda_totals.len() > 1 && cuda_totals.iter().all(|(_, total)| total == first)
        {
            format!("{first} on every GPU")
        } else {
            cuda_totals
                .iter()
                .map(|(index, total)| format!("{total} on GPU {index}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        notes.push(format!(
            "used + free ≠ total: the driver reserves RESERVED for itself; CUDA's total (`cudaMemGetInfo`, PyTorch's \"total capacity\") is total − reserved: {listed}"
        ));
    }
    if let Some(numbering) = &inventory.cuda {
        notes.push(numbering_note(inventory, numbering));
    }
    let replayed_pids = inventory
        .devices
        .iter()
        .flat_map(|device| &device.processes)
        .any(|process| {
            process.host_rss_bytes.is_none()
                && matches!(
                    inventory.cuda_numbering_from,
                    Some(NumberingFrom::Recording | NumberingFrom::NotRecorded)
                )
        });
    if replayed_pids {
        notes.push(
            "host RSS: not measured, the replayed PIDs are the recording machine's".to_string(),
        );
    }
    let host = &inventory.host;
    if let Some(container) = &host.container {
        let kind = format!("{:?}", container.kind).to_lowercase();
        let mut note = format!(
            "container: {kind} ({}); GPUs and PIDs here may be renumbered from the host's",
            container.evidence
        );
        if let Some(visible) = &host.nvidia_visible_devices {
            let _ = write!(note, "; {}", nvidia_visible(visible));
        }
        notes.push(note);
    } else if let Some(visible) = &host.nvidia_visible_devices {
        notes.push(nvidia_visible(visible));
    }
    notes
}

fn nvidia_visible(visible: &NvidiaVisibleDevices) -> String {
    match visible {
        NvidiaVisibleDevices::All => {
            "`NVIDIA_VISIBLE_DEVICES=all`: every host GPU is mounted".to_string()
        }
        NvidiaVisibleDevices::None => {
            "`NVIDIA_VISIBLE_DEVICES=none`: no GPU mounted (driver libraries only)".to_string()
        }
        NvidiaVisibleDevices::Void => {
            "`NVIDIA_VISIBLE_DEVICES` is void/empty: the NVIDIA runtime adds no GPU".to_string()
        }
        NvidiaVisibleDevices::List(list) => format!(
            "`NVIDIA_VISIBLE_DEVICES={}`: these host GPUs are mounted and renumbered from 0 here",
            list.join(",")
        ),
    }
}

fn numbering_note(inventory: &Inventory, numbering: &CudaNumbering) -> String {
    let order = match numbering.device_order {
        DeviceOrder::FastestFirst => "`CUDA_DEVICE_ORDER` FASTEST_FIRST (default)",
        DeviceOrder::PciBusId => "`CUDA_DEVICE_ORDER=PCI_BUS_ID`",
    };
    let visible = match &numbering.visible_devices {
        None => "`CUDA_VISIBLE_DEVICES` unset".to_string(),
        Some(parsed) => format!("`CUDA_VISIBLE_DEVICES={}`", parsed.raw),
    };
    let mut mapping: Vec<(u32, String)> = Vec::new();
    for device in &inventory.devices {
        if let Some(ordinal) = device.cuda_ordinal {
            mapping.push((ordinal, format!("cuda:{ordinal} = GPU {}", device.index)));
        }
        for instance in &device.mig_instances {
            if let Some(ordinal) = instance.cuda_ordinal {
                mapping.push((
                    ordinal,
                    format!(
                        "cuda:{ordinal} = GPU {} MIG {}",
                        device.index, instance.index
                    ),
                ));
            }
        }
    }
    mapping.sort();
    let listed: Vec<String> = mapping.into_iter().map(|(_, text)| text).collect();
    let certainty = if numbering.ordinals_certain {
        ""
    } else {
        " (uncertain, see warning)"
    };
    let whose = match inventory.cuda_numbering_from {
        None | Some(NumberingFrom::ThisShell) => "CUDA numbering",
        Some(NumberingFrom::Recording) => "CUDA numbering (as recorded)",
        Some(NumberingFrom::CommandLine) => "CUDA numbering (from the command line)",
        Some(NumberingFrom::NotRecorded) => "CUDA numbering (not in the file: read as unset)",
    };
    if listed.is_empty() {
        format!("{whose}: {visible}, {order}: CUDA sees no GPU")
    } else {
        format!(
            "{whose}: {visible}, {order}: {}{certainty}",
            listed.join(", ")
        )
    }
}

fn cuda_warnings(inventory: &Inventory) -> Vec<String> {
    let Some(numbering) = &inventory.cuda else {
        return Vec::new();
    };
    let duplicate = matches!(
        numbering
            .visible_devices
            .as_ref()
            .and_then(|v| v.stopped.as_ref()),
        Some(VisibleStop::Duplicate { .. })
    );
    numbering
        .warnings
        .iter()
        .filter_map(|warning| match warning {
            CudaWarning::FastestFirstMayDiffer { names } => Some(format!(
                "the GPUs differ ({}) and `CUDA_DEVICE_ORDER` is the default FASTEST_FIRST: CUDA ordinals may not follow nvidia-smi order; set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to make them match",
                names.join(", ")
            )),
            CudaWarning::NvmlOrderNotPciOrder => Some(
                "NVML indices do not follow PCI bus order: the GPU column is not the CUDA ordinal".to_string(),
            ),
            CudaWarning::UnmatchedEntry { entry, reason } => Some(format!(
                "`CUDA_VISIBLE_DEVICES` entry `{entry}` matches no device ({reason}): CUDA stops reading the list there"
            )),
            CudaWarning::IgnoredEntries { entries } if !duplicate => Some(format!(
                "CUDA ignores `CUDA_VISIBLE_DEVICES` entries {}: the list ends at the first invalid entry",
                entries.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(", ")
            )),
            CudaWarning::IgnoredEntries { .. } => None,
            CudaWarning::DuplicateEntry { entry } => Some(format!(
                "`CUDA_VISIBLE_DEVICES` names `{entry}` twice: CUDA then sees no GPU at all"
            )),
            CudaWarning::EmptyVisibleDevices => Some(
                "`CUDA_VISIBLE_DEVICES` is set but empty: CUDA sees no GPU".to_string(),
            ),
        })
        .collect()
}

fn md_escape(text: &str) -> String {
    crate::render::markdown::escape(&printable(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::machine::Device;

    fn with_uuids(uuids: &[&str]) -> Inventory {
        Inventory {
            devices: uuids
                .iter()
                .map(|uuid| Device {
                    uuid: uuid.to_string(),
                    ..Device::default()
                })
                .collect(),
            ..Inventory::default()
        }
    }

    #[test]
    fn control_characters_never_reach_the_terminal_or_the_table() {
        let mut inventory = with_uuids(&["GPU-aaaaaaaa-1", "GPU-bbbbbbbb-2"]);
        inventory.devices[0].name = "H200\x1b]0;title\x07".to_string();
        inventory
            .limitations
            .push("bad \x1b[2J limitation".to_string());
        inventory.devices[0].processes.push(GpuProcess {
            pid: 7,
            command: Some("python3 -c \"x\nline\" \x1b[31mred".to_string()),
            ..GpuProcess::default()
        });
        for output in [text(&inventory, Style::new(false)), markdown(&inventory)] {
            let output = String::from_utf8(output).unwrap();
            assert!(
                !output.contains('\x1b') && !output.contains('\x07'),
                "{output:?}"
            );
            assert!(
                output.contains("python3 -c \"x line\" \u{fffd}[31mred"),
                "{output}"
            );
        }
    }

    #[test]
    fn short_uuids_stay_unique() {
        let inventory = with_uuids(&[
            "GPU-5f1c0a11-0000-4000-8000-000000000000",
            "GPU-5f1c0a11-9999-4000-8000-000000000000",
            "GPU-7a2e3c44-2222-4222-8222-222222222222",
        ]);
        assert_eq!(
            short_uuid(&inventory, &inventory.devices[0].uuid),
            "GPU-5f1c0a11-0"
        );
        assert_eq!(
            short_uuid(&inventory, &inventory.devices[1].uuid),
            "GPU-5f1c0a11-9"
        );
        assert_eq!(
            short_uuid(&inventory, &inventory.devices[2].uuid),
            "GPU-7a2e3c44"
        );
        assert_eq!(short_uuid(&inventory, "GPU-1"), "GPU-1");
    }

    #[test]
    fn issue_14_a_very_long_name_does_not_panic() {
        // See: #14. A 65,536-character GPU name panicked ("Formatting argument out of
        // range"), exit 101.
        let mut inventory = with_uuids(&["GPU-aaaaaaaa-1", "GPU-bbbbbbbb-2"]);
        inventory.devices[0].name = "N".repeat(70_000);
        inventory.devices[1].name = "H200".to_string();
        let output = String::from_utf8(text(&inventory, Style::new(false))).unwrap();
        let lines: Vec<&str> = output.lines().filter(|l| l.contains("GPU-")).collect();
        assert_eq!(lines.len(), 2, "{output}");
        // Columns stay aligned: the used/total column starts at the same place.
        let h200 = lines[1].find("H200").unwrap();
        assert_eq!(lines[0].find('N'), Some(h200));
    }

    #[test]
    fn no_gpu_says_so() {
        let text = String::from_utf8(text(&Inventory::default(), Style::new(false))).unwrap();
        assert_eq!(text, "0 GPUs\nno GPU found\n\n");
    }

    #[test]
    fn processes_show_host_rss_and_their_container_or_pod() {
        let mut inventory = with_uuids(&["GPU-aaaaaaaa-1"]);
        let id = "4c6f1b2a9d3e5f7081920a1b2c3d4e5f60718293a4b5c6d7e8f90123456789ab";
        inventory.devices[0].processes = vec![
            GpuProcess {
                pid: 7,
                name: Some("python3".into()),
                host_rss_bytes: Some(Bytes(3 << 30)),
                container: Some(ContainerIdentity {
                    runtime: Some(ContainerRuntime::Containerd),
                    id: Some(id.into()),
                    pod_uid: Some("8d1c2b3a-4e5f-4a6b-9c7d-0e1f2a3b4c5d".into()),
                    qos_class: Some(QosClass::Burstable),
                    pod_name: Some("vllm-0".into()),
                    namespace: Some("inference".into()),
                    ..ContainerIdentity::default()
                }),
                ..GpuProcess::default()
            },
            GpuProcess {
                pid: 8,
                name: Some("python3".into()),
                container: Some(ContainerIdentity {
                    pod_uid: Some("8d1c2b3a-4e5f-4a6b-9c7d-0e1f2a3b4c5d".into()),
                    qos_class: Some(QosClass::BestEffort),
                    id: Some(id.into()),
                    ..ContainerIdentity::default()
                }),
                ..GpuProcess::default()
            },
        ];
        let text = String::from_utf8(text(&inventory, Style::new(false))).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[4].ends_with("host RSS 3.00 GiB"), "{text}");
        assert_eq!(
            lines[5].trim(),
            "in containerd 4c6f1b2a9d3e, pod inference/vllm-0 (burstable)"
        );
        assert!(!lines[6].contains("host RSS"), "{text}");
        assert_eq!(
            lines[7].trim(),
            "in container 4c6f1b2a9d3e, pod uid 8d1c2b3a-4e5f-4a6b-9c7d-0e1f2a3b4c5d (besteffort)"
        );
        let markdown = String::from_utf8(markdown(&inventory)).unwrap();
        assert!(markdown
            .contains("| 3.00 GiB | containerd 4c6f1b2a9d3e, pod inference/vllm-0 (burstable) |"));
    }
}
