//! Renders `oomdoc snapshot` findings ([`SnapshotReport`]) as text, markdown, JSON or a
//! self-contained HTML page with an inline SVG segment map. Pure: returns bytes, computes
//! nothing beyond layout.

use std::fmt::Write as _;

use crate::model::gpu::CudaOrdinal;
use crate::model::snapshot::{
    AllocatorState, BlockState, Cause, DeviceSummary, DiffMoment, DiffRow, MapSegment,
    MemoryTimeline, NamedRange, OomAnalysis, Site, SnapshotDiff, SnapshotReport, TraceSummary,
};
use crate::model::Bytes;
use crate::render::html::{escape, page};
use crate::render::style::{printable, Style};
use crate::render::wrap;

/// The JSON document (`schema_version` 1).
pub fn json(report: &SnapshotReport) -> Result<Vec<u8>, serde_json::Error> {
    crate::render::json::to_document(report)
}

fn plural(count: u64, word: &str) -> String {
    if count == 1 {
        format!("{count} {word}")
    } else {
        format!("{count} {word}s")
    }
}

fn exact(bytes: Bytes) -> String {
    format!("{bytes} ({} B)", bytes.0)
}

fn when(time_us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(time_us)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S%.3f UTC").to_string())
        .unwrap_or_else(|| format!("time_us {time_us}"))
}

fn offset(time_us: i64, first_us: i64) -> String {
    let delta = time_us.saturating_sub(first_us);
    if delta.unsigned_abs() < 1_000_000 {
        format!("+{:.3} ms", delta as f64 / 1000.0)
    } else {
        format!("+{:.3} s", delta as f64 / 1e6)
    }
}

fn cause_word(style: &Style, cause: Cause) -> String {
    match cause {
        Cause::Fragmentation => style.bad("fragmentation"),
        Cause::Capacity => style.bad("capacity"),
        Cause::Other => style.warn("other"),
    }
}

fn settings_line(report: &SnapshotReport) -> String {
    match &report.allocator_settings {
        None => "unknown (not in the snapshot)".to_string(),
        Some(settings) if settings.alloc_conf.is_empty() => {
            "defaults (`PYTORCH_CUDA_ALLOC_CONF` unset)".to_string()
        }
        Some(settings) => format!("`PYTORCH_CUDA_ALLOC_CONF={}`", settings.alloc_conf),
    }
}

fn first_time(report: &SnapshotReport, device: CudaOrdinal) -> i64 {
    report
        .devices
        .iter()
        .find(|d| d.device == device)
        .and_then(|d| d.trace.as_ref())
        .map_or(0, |t| t.first_time_us)
}

fn sites_text(out: &mut String, sites: &[Site], indent: &str) {
    if sites.is_empty() {
        let _ = writeln!(out, "{indent}(nothing allocated)");
    }
    for site in sites {
        let _ = writeln!(
            out,
            "{indent}{:>11}  {:>10}  {}",
            site.bytes.to_string(),
            plural(site.blocks, "block"),
            site.site
        );
    }
}

/// Text for a terminal; reads the same without colour.
pub fn text(report: &SnapshotReport, style: Style) -> Vec<u8> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} — {} device{}, allocator settings: {}",
        style.bold("PyTorch memory snapshot"),
        report.devices.len(),
        if report.devices.len() == 1 { "" } else { "s" },
        settings_line(report)
    );
    if let Some(total) = report.total_memory_bytes {
        let _ = writeln!(
            out,
            "device total: {} (from the command line)",
            exact(total)
        );
    }
    for device in &report.devices {
        device_text(&mut out, device, &style);
    }
    if !report.annotations.is_empty() {
        let _ = writeln!(
            out,
            "\n{} (`record_function`, from `external_annotations`):",
            style.bold("Named ranges")
        );
        ranges_text(&mut out, &report.annotations, |device| {
            first_time(report, CudaOrdinal(u32::try_from(device).unwrap_or(0)))
        });
    }
    if report.ooms.is_empty() {
        let _ = writeln!(out, "\n{}", style.good("No OOM event in the trace."));
    }
    for (number, oom) in report.ooms.iter().enumerate() {
        oom_text(&mut out, report, number + 1, oom, &style);
    }
    if report.ooms_not_analysed > 0 {
        let _ = writeln!(
            out,
            "\n{} more OOM events not analysed in detail.",
            report.ooms_not_analysed
        );
    }
    if !report.limitations.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Limitations"));
        for limitation in &report.limitations {
            let _ = writeln!(out, "  - {limitation}");
        }
    }
    wrap::fit(&out).into_bytes()
}

fn device_text(out: &mut String, device: &DeviceSummary, style: &Style) {
    let _ = writeln!(
        out,
        "\n{} {}, {} reserved, {} allocated {}",
        style.bold(&format!("Device {}:", device.device)),
        plural(device.segments, "segment"),
        device.reserved_bytes,
        device.allocated_bytes,
        style.dim("(source: PyTorch memory snapshot)")
    );
    let _ = writeln!(
        out,
        "  active {} · requested {} · free in cache {} (inactive split {})",
        device.active_bytes, device.requested_bytes, device.free_bytes, device.inactive_split_bytes
    );
    let _ = writeln!(
        out,
        "  largest free block {}",
        exact(device.largest_free_block_bytes)
    );
    let buckets: Vec<String> = device
        .free_blocks_by_size
        .iter()
        .map(|b| {
            if b.blocks == 0 {
                format!("{}: 0", b.label)
            } else {
                format!("{}: {} ({})", b.label, b.blocks, b.bytes)
            }
        })
        .collect();
    let _ = writeln!(out, "  free blocks by size: {}", buckets.join(" · "));
    for pool in &device.segments_by_pool {
        let _ = writeln!(
            out,
            "  pool ({}, {}) stream {:#x} {}: {}, {} reserved, {} allocated",
            pool.pool_id.0,
            pool.pool_id.1,
            pool.stream,
            match pool.segment_type {
                crate::model::snapshot::SegmentType::Large => "large",
                crate::model::snapshot::SegmentType::Small => "small",
            },
            plural(pool.segments, "segment"),
            pool.reserved_bytes,
            pool.allocated_bytes
        );
    }
    if device.expandable_segments > 0 {
        let _ = writeln!(
            out,
            "  expandable segments: {} mapped ranges, {}",
            device.expandable_segments, device.expandable_bytes
        );
    }
    let _ = writeln!(out, "  held at snapshot time by:");
    sites_text(out, &device.top_sites, "    ");
    if let Some(trace) = &device.trace {
        let actions: Vec<String> = trace
            .actions
            .iter()
            .map(|(action, count)| format!("{} {count}", action.as_str()))
            .collect();
        let _ = writeln!(
            out,
            "  trace: {} from {} ({}): {}",
            plural(trace.entries, "entry").replace("entrys", "entries"),
            when(trace.first_time_us),
            offset(trace.last_time_us, trace.first_time_us).replacen('+', "span ", 1),
            actions.join(", ")
        );
        if trace.inconsistencies > 0 {
            let _ = writeln!(
                out,
                "  {} trace entries did not match the replayed state",
                style.warn(&trace.inconsistencies.to_string())
            );
        }
        if let Some(peak) = &trace.peak {
            let _ = writeln!(
                out,
                "  peak in the trace: {} allocated, {} reserved, at entry {} ({}), held by:",
                peak.allocated_bytes,
                peak.reserved_bytes,
                peak.entry,
                offset(peak.time_us, trace.first_time_us)
            );
            if !peak.inside.is_empty() {
                let _ = writeln!(out, "  inside: {}", printable(&peak.inside.join(" > ")));
            }
            sites_text(out, &peak.top_sites, "    ");
        }
        growth_text(out, trace, style);
    }
}

/// Sites that kept allocating without freeing, one line each (and their innermost frames).
fn growth_text(out: &mut String, trace: &TraceSummary, style: &Style) {
    if trace.growth.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "  {} allocated again and again and never freed within the trace:",
        style.warn("growth by site:")
    );
    for growth in &trace.growth {
        let _ = writeln!(
            out,
            "    {:>11}  {} of {} never freed, {} to {}  {}",
            growth.never_freed_bytes.to_string(),
            growth.never_freed,
            plural(growth.allocations, "allocation"),
            offset(growth.first_time_us, trace.first_time_us),
            offset(growth.last_time_us, trace.first_time_us),
            growth.site
        );
    }
}

/// Most named ranges listed in text; the rest are counted.
const MAX_RANGES: usize = 40;

/// The named ranges as a timeline, indented by nesting, times from `first(device)`.
fn ranges_text(out: &mut String, ranges: &[NamedRange], first: impl Fn(i64) -> i64) {
    for range in ranges.iter().take(MAX_RANGES) {
        let start = first(range.device);
        let end = match range.end_us {
            Some(end) => offset(end, start),
            None => "(still open)".to_string(),
        };
        let _ = writeln!(
            out,
            "  device {} {:>14} … {:<14} {}{}",
            range.device,
            offset(range.start_us, start),
            end,
            "  ".repeat(range.depth.min(8) as usize),
            printable(&range.name)
        );
    }
    if ranges.len() > MAX_RANGES {
        let _ = writeln!(out, "  … {} more", ranges.len() - MAX_RANGES);
    }
}

fn state_text(state: &AllocatorState) -> String {
    format!(
        "allocated {}, reserved {}, free in cache {}, largest free block {}",
        state.allocated_bytes,
        state.reserved_bytes,
        state.free_bytes,
        exact(state.largest_free_block_bytes)
    )
}

fn oom_text(
    out: &mut String,
    report: &SnapshotReport,
    number: usize,
    oom: &OomAnalysis,
    style: &Style,
) {
    let first = first_time(report, oom.device);
    let _ = writeln!(
        out,
        "\n{} on device {} at entry {} ({}): {}",
        style.bold(&format!("OOM {number}")),
        oom.device,
        oom.entry,
        offset(oom.time_us, first),
        cause_word(style, oom.cause)
    );
    let _ = writeln!(
        out,
        "  request {} on stream {:#x}; device free {}",
        exact(oom.requested_bytes),
        oom.stream,
        exact(oom.device_free_bytes)
    );
    let _ = writeln!(out, "  at the OOM: {}", state_text(&oom.at_oom));
    if let Some(outside) = oom.outside_bytes {
        let _ = writeln!(out, "  held outside this allocator: {outside}");
    }
    let _ = writeln!(out, "  why: {}", oom.explanation);
    if oom.fits_if_compacted && oom.cause != Cause::Fragmentation {
        let _ = writeln!(
            out,
            "  note: free cache plus device free memory ({}) would have covered the request had the cached memory been returnable",
            oom.at_oom.free_bytes + oom.device_free_bytes
        );
    }
    let _ = writeln!(
        out,
        "  settings in force: {}",
        oom.settings_in_force.join(", ")
    );
    match &oom.suggestion {
        Some(suggestion) => {
            let _ = writeln!(out, "  {} {suggestion}", style.good("try:"));
        }
        None => {
            let _ = writeln!(out, "  try: no allocator setting helps here");
        }
    }
    if let Some(site) = &oom.request_site {
        let _ = writeln!(out, "  requested at: {site}");
    }
    if !oom.inside.is_empty() {
        let _ = writeln!(out, "  inside: {}", printable(&oom.inside.join(" > ")));
    }
    let _ = writeln!(out, "  held at the OOM by:");
    sites_text(out, &oom.top_sites, "    ");
}

/// GitHub markdown: headings and tables, no HTML.
pub fn markdown(report: &SnapshotReport) -> Vec<u8> {
    let mut out = String::new();
    let _ = writeln!(out, "# PyTorch memory snapshot\n");
    let _ = writeln!(out, "Allocator settings: {}\n", settings_line(report));
    let _ = writeln!(out, "## Devices\n");
    let _ = writeln!(
        out,
        "| device | segments | reserved | allocated | active | free in cache | inactive split | largest free block | expandable |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for d in &report.devices {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            d.device,
            d.segments,
            d.reserved_bytes,
            d.allocated_bytes,
            d.active_bytes,
            d.free_bytes,
            d.inactive_split_bytes,
            d.largest_free_block_bytes,
            d.expandable_segments
        );
    }
    for d in &report.devices {
        let _ = writeln!(out, "\n### Device {}: held at snapshot time\n", d.device);
        sites_markdown(&mut out, &d.top_sites);
        if let Some(peak) = d.trace.as_ref().and_then(|t| t.peak.as_ref()) {
            let _ = writeln!(
                out,
                "\nPeak in the trace: {} allocated, {} reserved, at entry {} ({}).\n",
                peak.allocated_bytes,
                peak.reserved_bytes,
                peak.entry,
                when(peak.time_us)
            );
            sites_markdown(&mut out, &peak.top_sites);
        }
        if let Some(trace) = d.trace.as_ref().filter(|t| !t.growth.is_empty()) {
            let _ = writeln!(
                out,
                "\nGrowth by site (allocated again and again, never freed within the trace):\n"
            );
            let _ = writeln!(
                out,
                "| never freed | bytes | allocations | first | last | site |\n|---:|---:|---:|---|---|---|"
            );
            for g in &trace.growth {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | `{}` |",
                    g.never_freed,
                    exact(g.never_freed_bytes),
                    g.allocations,
                    offset(g.first_time_us, trace.first_time_us),
                    offset(g.last_time_us, trace.first_time_us),
                    g.site.replace('|', "\\|").replace('`', "'")
                );
            }
        }
    }
    let _ = writeln!(out, "\n## OOM events\n");
    if report.ooms.is_empty() {
        let _ = writeln!(out, "No OOM event in the trace.");
    } else {
        let _ = writeln!(
            out,
            "| # | device | request | device free | allocated | reserved | free in cache | largest free block | cause |"
        );
        let _ = writeln!(out, "|---:|---|---:|---:|---:|---:|---:|---:|---|");
        for (number, oom) in report.ooms.iter().enumerate() {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | **{}** |",
                number + 1,
                oom.device,
                oom.requested_bytes,
                oom.device_free_bytes,
                oom.at_oom.allocated_bytes,
                oom.at_oom.reserved_bytes,
                oom.at_oom.free_bytes,
                oom.at_oom.largest_free_block_bytes,
                oom.cause.as_str()
            );
        }
        for (number, oom) in report.ooms.iter().enumerate() {
            let _ = writeln!(out, "\n### OOM {}: {}\n", number + 1, oom.cause.as_str());
            let _ = writeln!(out, "{}\n", oom.explanation);
            let _ = writeln!(
                out,
                "- settings in force: {}",
                oom.settings_in_force.join(", ")
            );
            let _ = writeln!(
                out,
                "- try: {}",
                oom.suggestion
                    .as_deref()
                    .unwrap_or("no allocator setting helps here")
            );
            if let Some(site) = &oom.request_site {
                let _ = writeln!(out, "- requested at: `{site}`");
            }
            let _ = writeln!(out);
            sites_markdown(&mut out, &oom.top_sites);
        }
    }
    if !report.limitations.is_empty() {
        let _ = writeln!(out, "\n## Limitations\n");
        for limitation in &report.limitations {
            let _ = writeln!(out, "- {limitation}");
        }
    }
    out.into_bytes()
}

fn sites_markdown(out: &mut String, sites: &[Site]) {
    if sites.is_empty() {
        let _ = writeln!(out, "Nothing allocated.");
        return;
    }
    let _ = writeln!(out, "| bytes | blocks | site |");
    let _ = writeln!(out, "|---:|---:|---|");
    for site in sites {
        let _ = writeln!(
            out,
            "| {} | {} | `{}` |",
            site.bytes,
            site.blocks,
            site.site.replace('|', "\\|").replace('`', "'")
        );
    }
}

const CSS: &str = ".map{display:block;margin:.5em 0}.legend span{display:inline-block;width:1em;height:1em;vertical-align:middle;margin:0 .3em 0 1em}.fragmentation,.capacity{color:#b42318;font-weight:bold}.other{color:#b54708;font-weight:bold}.toggle>input{margin-left:1em}.toggle>.view{display:none}.toggle>input:nth-of-type(1):checked~.v1,.toggle>input:nth-of-type(2):checked~.v2,.toggle>input:nth-of-type(3):checked~.v3{display:block}.timeline{position:relative}.timeline svg{display:block;margin:.5em 0}.timeline path.band:hover{opacity:.75}.swatch{display:inline-block;width:.9em;height:.9em;vertical-align:middle;margin-right:.4em}";

fn state_color(state: BlockState) -> &'static str {
    match state {
        BlockState::ActiveAllocated => "#2e90fa",
        BlockState::ActivePendingFree => "#f79009",
        BlockState::Inactive => "#d0d5dd",
    }
}

/// One self-contained HTML page; segments drawn as bars, blocks coloured by state.
pub fn html(report: &SnapshotReport) -> Vec<u8> {
    let mut body = String::new();
    let _ = writeln!(body, "<h1>PyTorch memory snapshot</h1>");
    let _ = writeln!(
        body,
        "<p>Allocator settings: {}</p>",
        escape(&settings_line(report))
    );
    let _ = writeln!(body, "<h2>OOM events</h2>");
    if report.ooms.is_empty() {
        let _ = writeln!(body, "<p class=\"good\">No OOM event in the trace.</p>");
    }
    for (number, oom) in report.ooms.iter().enumerate() {
        let cause = oom.cause.as_str();
        let _ = writeln!(
            body,
            "<h3>OOM {} on device {}: <span class=\"{cause}\">{cause}</span></h3>",
            number + 1,
            oom.device
        );
        let _ = writeln!(body, "<p>{}</p>", escape(&oom.explanation));
        let _ = writeln!(body, "<table>");
        for (label, value) in [
            ("request", oom.requested_bytes),
            ("device free", oom.device_free_bytes),
            ("allocated", oom.at_oom.allocated_bytes),
            ("reserved", oom.at_oom.reserved_bytes),
            ("free in cache", oom.at_oom.free_bytes),
            ("largest free block", oom.at_oom.largest_free_block_bytes),
        ] {
            let _ = writeln!(
                body,
                "<tr><th>{label}</th><td class=\"num\">{value}</td><td class=\"num source\">{} B</td></tr>",
                value.0
            );
        }
        let _ = writeln!(body, "</table>");
        let _ = writeln!(
            body,
            "<p>Settings in force: {}<br>Try: {}</p>",
            escape(&oom.settings_in_force.join(", ")),
            escape(
                oom.suggestion
                    .as_deref()
                    .unwrap_or("no allocator setting helps here")
            )
        );
        sites_html(&mut body, &oom.top_sites);
    }
    for device in &report.devices {
        let _ = writeln!(body, "<h2>Device {}</h2>", device.device);
        let _ = writeln!(
            body,
            "<p>{} segments, {} reserved, {} allocated, {} free in cache, largest free block {} <span class=\"source\">(source: PyTorch memory snapshot)</span></p>",
            device.segments,
            device.reserved_bytes,
            device.allocated_bytes,
            device.free_bytes,
            device.largest_free_block_bytes
        );
        let _ = writeln!(
            body,
            "<p class=\"legend\">Segment map{}:<span style=\"background:{}\"></span>allocated<span style=\"background:{}\"></span>pending free<span style=\"background:{}\"></span>free (cached)</p>",
            if (device.segment_map.len() as u64) < device.segments {
                format!(" (the {} largest segments)", device.segment_map.len())
            } else {
                String::new()
            },
            state_color(BlockState::ActiveAllocated),
            state_color(BlockState::ActivePendingFree),
            state_color(BlockState::Inactive)
        );
        body.push_str(&toggle(
            &format!("scale-{}", device.device),
            &[
                (
                    "bar length ∝ segment size",
                    segment_svg(&device.segment_map, Scale::Linear),
                ),
                ("log scale", segment_svg(&device.segment_map, Scale::Log)),
            ],
        ));
        if !device.timelines.is_empty() {
            let first = device.trace.as_ref().map_or(0, |t| t.first_time_us);
            let _ = writeln!(
                body,
                "<h3>Allocated memory over the trace</h3>\n<p class=\"dim\">Stacked by allocation site or by category; x is the trace entry. Each column shows the moment of highest allocated memory among the entries it covers (at most {} columns), so no peak is lost. Hover over a band for its group, its peak and its frames.</p>",
                device.timelines.iter().map(|t| t.points.len()).max().unwrap_or(0)
            );
            let views: Vec<(&str, String)> = device
                .timelines
                .iter()
                .enumerate()
                .map(|(index, timeline)| {
                    let label = match timeline.grouping.as_str() {
                        "site" => "by site",
                        "category" => "by category",
                        _ => "by group",
                    };
                    (
                        label,
                        timeline_html(timeline, &format!("tl-{}-{index}", device.device), first),
                    )
                })
                .collect();
            body.push_str(&toggle(&format!("timeline-{}", device.device), &views));
        }
        if let Some(trace) = device.trace.as_ref().filter(|t| !t.growth.is_empty()) {
            growth_html(&mut body, trace);
        }
        let _ = writeln!(body, "<h3>Held at snapshot time</h3>");
        sites_html(&mut body, &device.top_sites);
        if let Some(peak) = device.trace.as_ref().and_then(|t| t.peak.as_ref()) {
            let _ = writeln!(
                body,
                "<h3>Peak in the trace: {} allocated at {}</h3>",
                peak.allocated_bytes,
                escape(&when(peak.time_us))
            );
            sites_html(&mut body, &peak.top_sites);
        }
    }
    if !report.limitations.is_empty() {
        let _ = writeln!(body, "<h2>Limitations</h2><ul>");
        for limitation in &report.limitations {
            let _ = writeln!(body, "<li>{}</li>", escape(limitation));
        }
        let _ = writeln!(body, "</ul>");
    }
    page("oomdoc snapshot", CSS, &body).into_bytes()
}

fn sites_html(body: &mut String, sites: &[Site]) {
    if sites.is_empty() {
        let _ = writeln!(body, "<p class=\"dim\">Nothing allocated.</p>");
        return;
    }
    let _ = writeln!(
        body,
        "<table><tr><th>bytes</th><th>blocks</th><th>site</th></tr>"
    );
    for site in sites {
        let _ = writeln!(
            body,
            "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td><code>{}</code></td></tr>",
            site.bytes,
            site.blocks,
            escape(&site.site)
        );
    }
    let _ = writeln!(body, "</table>");
}

/// How segment bars are sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    /// Length proportional to the segment's size.
    Linear,
    /// Length proportional to log2(1 + size in MiB), so small segments stay visible.
    Log,
}

/// Inline SVG: one bar per segment, its length proportional to the segment's size (the
/// largest spans the width; `Scale::Log` compresses), blocks proportional within it.
fn segment_svg(segments: &[MapSegment], scale: Scale) -> String {
    const WIDTH: f64 = 900.0;
    const BAR: f64 = 14.0;
    const ROW: f64 = 32.0;
    let height = (segments.len() as f64 * ROW).max(ROW);
    let length = |size: u64| match scale {
        Scale::Linear => size as f64,
        Scale::Log => (1.0 + size as f64 / MIB_F).log2(),
    };
    let longest = segments
        .iter()
        .map(|segment| length(segment.total_size.0))
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut svg = format!(
        "<svg class=\"map\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"segment map ({})\">\n",
        match scale {
            Scale::Linear => "bar length proportional to segment size",
            Scale::Log => "bar length on a log scale of segment size",
        }
    );
    for (row, segment) in segments.iter().enumerate() {
        let y = row as f64 * ROW;
        let _ = writeln!(
            svg,
            "<text x=\"0\" y=\"{:.1}\" font-size=\"11\" fill=\"#475467\">{:#x} · {}{}</text>",
            y + 11.0,
            segment.address,
            segment.total_size,
            if segment.is_expandable {
                " · expandable"
            } else {
                ""
            }
        );
        let bar = (length(segment.total_size.0) / longest * WIDTH).max(1.0);
        let total = segment.total_size.0.max(1) as f64;
        let mut x = 0.0;
        for (size, state) in &segment.blocks {
            let width = size.0 as f64 / total * bar;
            let _ = writeln!(
                svg,
                "<rect x=\"{x:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{BAR}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.3\"><title>{} {}</title></rect>",
                y + 15.0,
                width.max(0.5),
                state_color(*state),
                size,
                state.as_str()
            );
            x += width;
        }
    }
    svg.push_str("</svg>\n");
    svg
}

const MIB_F: f64 = 1048576.0;

/// Views shown one at a time, chosen by radio buttons (CSS only, no script).
fn toggle(name: &str, views: &[(&str, String)]) -> String {
    let mut out = String::from("<div class=\"toggle\">\n");
    for (index, (label, _)) in views.iter().enumerate().take(3) {
        let _ = writeln!(
            out,
            "<input type=\"radio\" name=\"{name}\" id=\"{name}-{index}\"{}><label for=\"{name}-{index}\">{}</label>",
            if index == 0 { " checked" } else { "" },
            escape(label)
        );
    }
    for (index, (_, view)) in views.iter().enumerate().take(3) {
        let _ = writeln!(out, "<div class=\"view v{}\">\n{view}</div>", index + 1);
    }
    out.push_str("</div>\n");
    out
}

/// Colours of timeline groups; the first group (held before the trace) and the last
/// (everything else) are grey.
const PALETTE: [&str; 12] = [
    "#2e90fa", "#f79009", "#12b76a", "#f04438", "#7a5af8", "#ee46bc", "#06aed4", "#66c61c",
    "#fdb022", "#875bf7", "#e31b54", "#15b79e",
];

fn group_color(index: usize, groups: usize) -> &'static str {
    if index == 0 {
        "#98a2b3"
    } else if index + 1 == groups {
        "#d0d5dd"
    } else {
        PALETTE[(index - 1) % PALETTE.len()]
    }
}

/// A stacked area chart of one timeline (inline SVG, no script): hovering a band shows its
/// group, peak and frames (the band's `<title>`); a table lists the same below.
fn timeline_html(timeline: &MemoryTimeline, id: &str, first_us: i64) -> String {
    const WIDTH: f64 = 1000.0;
    const HEIGHT: f64 = 320.0;
    const LEFT: f64 = 80.0;
    const TOP: f64 = 10.0;
    const BOTTOM: f64 = 30.0;
    let plot_w = WIDTH - LEFT - 10.0;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let groups = timeline.groups.len();
    let highest = timeline
        .points
        .iter()
        .map(|point| point.bytes.iter().sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let entries = timeline.entries.max(1) as f64;
    let x = |entry: u64| LEFT + entry as f64 / entries * plot_w;
    let y = |bytes: u64| TOP + plot_h - bytes as f64 / highest as f64 * plot_h;
    let mut svg = format!(
        "<svg width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"allocated memory over the trace, by {}\" data-timeline=\"{id}\">\n",
        escape(&timeline.grouping)
    );
    // Axes: three labelled lines, exact bytes in the title.
    for fraction in [0.0, 0.5, 1.0] {
        let bytes = (highest as f64 * fraction) as u64;
        let _ = writeln!(
            svg,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eaecf0\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\" fill=\"#475467\">{}<title>{bytes} B</title></text>",
            WIDTH - 10.0,
            y(bytes),
            y(bytes),
            LEFT - 6.0,
            y(bytes) + 4.0,
            Bytes(bytes)
        );
    }
    let last = timeline.points.last().map_or(0, |point| point.entry);
    let _ = writeln!(
        svg,
        "<text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"11\" fill=\"#475467\">entry 0</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\" fill=\"#475467\">entry {last} ({})</text>",
        HEIGHT - 8.0,
        WIDTH - 10.0,
        HEIGHT - 8.0,
        escape(&offset(
            timeline.points.last().map_or(first_us, |point| point.time_us),
            first_us
        ))
    );
    let mut below = vec![0u64; timeline.points.len()];
    for (group_index, group) in timeline.groups.iter().enumerate() {
        if group.peak_bytes.0 == 0 {
            continue;
        }
        let mut path = String::new();
        for (point, base) in timeline.points.iter().zip(&below) {
            let top = base + point.bytes.get(group_index).copied().unwrap_or(0);
            let _ = write!(
                path,
                "{}{:.1},{:.1}",
                if path.is_empty() { "M" } else { "L" },
                x(point.entry),
                y(top)
            );
        }
        for (point, base) in timeline.points.iter().zip(&below).rev() {
            let _ = write!(path, "L{:.1},{:.1}", x(point.entry), y(*base));
        }
        path.push('Z');
        let mut title = format!("{} — peak {}", group.name, group.peak_bytes);
        for frame in &group.frames {
            title.push('\n');
            title.push_str(frame);
        }
        let _ = writeln!(
            svg,
            "<path class=\"band\" data-g=\"{group_index}\" d=\"{path}\" fill=\"{}\"><title>{}</title></path>",
            group_color(group_index, groups),
            escape(&title)
        );
        for (point, base) in timeline.points.iter().zip(below.iter_mut()) {
            *base += point.bytes.get(group_index).copied().unwrap_or(0);
        }
    }
    svg.push_str("</svg>\n");

    let mut out = format!("<div class=\"timeline\" id=\"{id}\">\n{svg}");
    let _ = writeln!(
        out,
        "<table><tr><th>group</th><th>peak</th><th>frames (innermost first)</th></tr>"
    );
    for (index, group) in timeline.groups.iter().enumerate() {
        if group.peak_bytes.0 == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "<tr><td><span class=\"swatch\" style=\"background:{}\"></span><code>{}</code></td><td class=\"num\">{}</td><td class=\"source\">{}</td></tr>",
            group_color(index, groups),
            escape(&group.name),
            group.peak_bytes,
            group
                .frames
                .iter()
                .map(|frame| escape(frame))
                .collect::<Vec<_>>()
                .join("<br>")
        );
    }
    let _ = writeln!(out, "</table>");
    let _ = writeln!(out, "</div>");
    out
}

/// Sites that kept allocating without freeing, as a table.
fn growth_html(body: &mut String, trace: &TraceSummary) {
    let _ = writeln!(
        body,
        "<h3 class=\"warn\">Growth by site</h3>\n<p>These sites allocated again and again over the trace and never freed what they allocated within it:</p>\n<table><tr><th>never freed</th><th>bytes</th><th>of allocations</th><th>first … last</th><th>site</th></tr>"
    );
    for growth in &trace.growth {
        let _ = writeln!(
            body,
            "<tr><td class=\"num\">{}</td><td class=\"num\">{}<br><span class=\"source\">{} B</span></td><td class=\"num\">{}</td><td>{} … {}</td><td><code>{}</code><br><span class=\"source\">{}</span></td></tr>",
            growth.never_freed,
            growth.never_freed_bytes,
            growth.never_freed_bytes.0,
            growth.allocations,
            escape(&offset(growth.first_time_us, trace.first_time_us)),
            escape(&offset(growth.last_time_us, trace.first_time_us)),
            escape(&growth.site),
            growth
                .python_frames
                .iter()
                .map(|frame| escape(frame))
                .collect::<Vec<_>>()
                .join("<br>")
        );
    }
    let _ = writeln!(body, "</table>");
}

/// The JSON document of `snapshot diff` (`schema_version` 1).
pub fn diff_json(diff: &SnapshotDiff) -> Result<Vec<u8>, serde_json::Error> {
    crate::render::json::to_document(diff)
}

fn signed(change: i64) -> String {
    let sign = if change < 0 { "-" } else { "+" };
    format!(
        "{sign}{} ({sign}{} B)",
        Bytes(change.unsigned_abs()),
        change.unsigned_abs()
    )
}

fn diff_title(moment: &DiffMoment) -> String {
    format!(
        "device {}, {} (A at {}, B at {})",
        moment.device, moment.moment, moment.a_at, moment.b_at
    )
}

/// The title of a grouping's table and its rows.
fn diff_tables<'m>(
    moment: &'m DiffMoment,
    groupings: &[String],
) -> Vec<(&'static str, &'m [DiffRow])> {
    groupings
        .iter()
        .filter_map(|grouping| match grouping.as_str() {
            "site" => Some(("allocation site", moment.by_site.as_slice())),
            "category" => Some(("category", moment.by_category.as_slice())),
            "pool" => Some(("pool and stream", moment.by_pool.as_slice())),
            "annotation" => Some(("named range at allocation", moment.by_annotation.as_slice())),
            _ => None,
        })
        .collect()
}

/// `inside A: …; inside B: …` for a moment, empty when neither was inside a named range.
fn diff_inside(moment: &DiffMoment) -> Option<String> {
    if moment.a_inside.is_empty() && moment.b_inside.is_empty() {
        return None;
    }
    let one = |inside: &[String]| {
        if inside.is_empty() {
            "no named range".to_string()
        } else {
            inside.join(" > ")
        }
    };
    Some(format!(
        "inside: A {}; B {}",
        one(&moment.a_inside),
        one(&moment.b_inside)
    ))
}

fn diff_rows_text(out: &mut String, title: &str, rows: &[DiffRow]) {
    let _ = writeln!(out, "  by {title}, largest change first:");
    for row in rows {
        let _ = writeln!(
            out,
            "    {:>28}  {}  A {} → B {}",
            signed(row.change_bytes),
            printable(&row.key),
            exact(row.a_bytes),
            exact(row.b_bytes),
        );
        for frame in row.frames.iter().take(3) {
            let _ = writeln!(out, "        at {}", printable(frame));
        }
    }
}

/// `snapshot diff` as text.
pub fn diff_text(diff: &SnapshotDiff, style: Style) -> Vec<u8> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: A = {}, B = {}",
        style.bold("PyTorch memory snapshot diff"),
        printable(&diff.a),
        printable(&diff.b)
    );
    for moment in &diff.moments {
        let _ = writeln!(
            out,
            "\n{}: allocated A {} → B {}, change {}",
            style.bold(&diff_title(moment)),
            exact(moment.a_allocated_bytes),
            exact(moment.b_allocated_bytes),
            signed(moment.change_bytes)
        );
        if let Some(inside) = diff_inside(moment) {
            let _ = writeln!(out, "  {}", printable(&inside));
        }
        for (title, rows) in diff_tables(moment, &diff.groupings) {
            diff_rows_text(&mut out, title, rows);
        }
    }
    for (label, ranges) in [("A", &diff.a_annotations), ("B", &diff.b_annotations)] {
        if ranges.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\nNamed ranges in {label} (`record_function`, from `external_annotations`; times from the first):"
        );
        let first = |device: i64| {
            ranges
                .iter()
                .filter(|range| range.device == device)
                .map(|range| range.start_us)
                .min()
                .unwrap_or(0)
        };
        ranges_text(&mut out, ranges, first);
    }
    let _ = writeln!(out, "\nCategories (first rule that matches):");
    for rule in &diff.category_rules {
        let _ = writeln!(out, "  {}: {}", rule.category, rule.rule);
    }
    let _ = writeln!(out, "\nLimitations:");
    for limitation in &diff.limitations {
        let _ = writeln!(out, "  - {limitation}");
    }
    wrap::fit(&out).into_bytes()
}

fn markdown_cell(text: &str) -> String {
    printable(text).replace('|', "\\|")
}

/// `snapshot diff` as markdown.
pub fn diff_markdown(diff: &SnapshotDiff) -> Vec<u8> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# PyTorch memory snapshot diff\n\nA = `{}`, B = `{}`",
        markdown_cell(&diff.a),
        markdown_cell(&diff.b)
    );
    for moment in &diff.moments {
        let _ = writeln!(
            out,
            "\n## {}\n\nAllocated: A {} → B {}, change {}",
            diff_title(moment),
            exact(moment.a_allocated_bytes),
            exact(moment.b_allocated_bytes),
            signed(moment.change_bytes)
        );
        if let Some(inside) = diff_inside(moment) {
            let _ = writeln!(out, "\n{}", markdown_cell(&inside));
        }
        for (title, rows) in diff_tables(moment, &diff.groupings) {
            let _ = writeln!(out, "\n| {title} | change | A | B |\n|---|---:|---:|---:|");
            for row in rows {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    markdown_cell(&row.key),
                    signed(row.change_bytes),
                    exact(row.a_bytes),
                    exact(row.b_bytes)
                );
            }
        }
    }
    let _ = writeln!(out, "\n## Categories (first rule that matches)\n");
    for rule in &diff.category_rules {
        let _ = writeln!(
            out,
            "- **{}**: {}",
            rule.category,
            markdown_cell(&rule.rule)
        );
    }
    let _ = writeln!(out, "\n## Limitations\n");
    for limitation in &diff.limitations {
        let _ = writeln!(out, "- {limitation}");
    }
    out.into_bytes()
}

/// `snapshot diff` as one self-contained HTML page (tables; every string escaped; the
/// frames of a site show on hover).
pub fn diff_html(diff: &SnapshotDiff) -> Vec<u8> {
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>PyTorch memory snapshot diff</h1>\n<p>A = <code>{}</code>, B = <code>{}</code></p>",
        escape(&diff.a),
        escape(&diff.b)
    );
    for moment in &diff.moments {
        let _ = writeln!(
            body,
            "<h2>{}</h2>\n<p>Allocated: A {} → B {}, change {}</p>",
            escape(&diff_title(moment)),
            escape(&exact(moment.a_allocated_bytes)),
            escape(&exact(moment.b_allocated_bytes)),
            escape(&signed(moment.change_bytes))
        );
        if let Some(inside) = diff_inside(moment) {
            let _ = writeln!(body, "<p>{}</p>", escape(&inside));
        }
        for (title, rows) in diff_tables(moment, &diff.groupings) {
            let _ = writeln!(
                body,
                "<table>\n<tr><th>{title}</th><th>change</th><th>A</th><th>B</th></tr>"
            );
            for row in rows {
                let _ = writeln!(
                    body,
                    "<tr><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&row.frames.join("\n")),
                    escape(&row.key),
                    escape(&signed(row.change_bytes)),
                    escape(&exact(row.a_bytes)),
                    escape(&exact(row.b_bytes))
                );
            }
            let _ = writeln!(body, "</table>");
        }
    }
    let _ = writeln!(body, "<h2>Categories (first rule that matches)</h2>\n<ul>");
    for rule in &diff.category_rules {
        let _ = writeln!(
            body,
            "<li><b>{}</b>: {}</li>",
            escape(&rule.category),
            escape(&rule.rule)
        );
    }
    let _ = writeln!(body, "</ul>\n<h2>Limitations</h2>\n<ul>");
    for limitation in &diff.limitations {
        let _ = writeln!(body, "<li>{}</li>", escape(limitation));
    }
    let _ = writeln!(body, "</ul>");
    page("oomdoc snapshot diff", "", &body).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snapshot::{TimelineGroup, TimelinePoint};

    /// The length of the bar of segment `row` (Σ its rect widths) in an SVG.
    fn bar_length(svg: &str, row: usize) -> f64 {
        let y = format!("y=\"{:.1}\"", row as f64 * 32.0 + 15.0);
        svg.lines()
            .filter(|line| line.starts_with("<rect") && line.contains(&y))
            .map(|line| {
                let width = line.split("width=\"").nth(1).unwrap();
                width[..width.find('"').unwrap()].parse::<f64>().unwrap()
            })
            .sum()
    }

    /// #16: a 32 MiB segment is not drawn as long as a 100 GiB one; on the log scale both
    /// stay visible and the larger is still the longer.
    #[test]
    fn segment_bars_are_proportional_to_size() {
        let segment = |size: u64| MapSegment {
            address: 0x7f00_0000_0000,
            total_size: Bytes(size),
            is_expandable: false,
            blocks: vec![
                (Bytes(size / 2), BlockState::ActiveAllocated),
                (Bytes(size / 2), BlockState::Inactive),
            ],
        };
        let segments = [segment(100 << 30), segment(32 << 20)];
        let linear = segment_svg(&segments, Scale::Linear);
        let (large, small) = (bar_length(&linear, 0), bar_length(&linear, 1));
        assert!((large - 900.0).abs() < 0.1, "{large}");
        assert!(small < 2.0, "{small}");
        let log = segment_svg(&segments, Scale::Log);
        let (large, small) = (bar_length(&log, 0), bar_length(&log, 1));
        assert!((large - 900.0).abs() < 0.1, "{large}");
        assert!(small > 200.0 && small < large / 2.0, "{small}");
    }

    /// The timeline stacks groups: the top band's upper edge at the highest point is the
    /// highest total, and every group's title names its frames.
    #[test]
    fn timeline_bands_stack_to_the_total() {
        let timeline = MemoryTimeline {
            grouping: "site".to_string(),
            entries: 4,
            groups: vec![
                TimelineGroup {
                    name: "held before the trace".to_string(),
                    frames: vec![],
                    peak_bytes: Bytes(10),
                },
                TimelineGroup {
                    name: "model.py:3 forward".to_string(),
                    frames: vec!["model.py:3 forward".to_string()],
                    peak_bytes: Bytes(30),
                },
                TimelineGroup {
                    name: "everything else".to_string(),
                    frames: vec![],
                    peak_bytes: Bytes(0),
                },
            ],
            points: vec![
                TimelinePoint {
                    entry: 0,
                    time_us: 0,
                    bytes: vec![10, 0, 0],
                },
                TimelinePoint {
                    entry: 3,
                    time_us: 9,
                    bytes: vec![10, 30, 0],
                },
            ],
        };
        let html = timeline_html(&timeline, "t", 0);
        assert_eq!(
            html.matches("class=\"band\"").count(),
            2,
            "empty groups are not drawn"
        );
        assert!(html.contains("<title>model.py:3 forward — peak 30 B\nmodel.py:3 forward</title>"));
        // The top of the second band at the last point (entry 3 of 4) is the plot's top.
        assert!(html.contains("L762.5,10.0"), "{html}");
    }
}
