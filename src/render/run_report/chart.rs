//! The memory-over-time chart of one device as inline SVG: phases as shaded bands, the OOM
//! marked, the peak annotated.

use super::*;

/// Fill colours of phase bands, by phase.
pub(super) fn phase_color(phase: Phase) -> &'static str {
    match phase {
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

pub(super) fn nice_step(max: f64, ticks: f64) -> f64 {
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
pub(super) fn svg_chart(device: &DeviceTimeline, memory: &MemoryFacts) -> String {
    const WIDTH: f64 = 1000.0;
    const HEIGHT: f64 = 340.0;
    const LEFT: f64 = 70.0;
    const RIGHT: f64 = 20.0;
    const TOP: f64 = 34.0;
    const BOTTOM: f64 = 44.0;
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;

    let last_sample = device.samples.last().map_or(0, |s| s[0]);
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
    let sample_max = device.samples.iter().map(|s| s[1]).max().unwrap_or(0);
    let y_max = device
        .total_bytes
        .get()
        .max(sample_max)
        .max(device.peak_used_bytes.map_or(0, Bytes::get))
        .max(1) as f64;
    let x = |t: f64| LEFT + t / t_max * plot_width;
    let y = |bytes: f64| TOP + plot_height - bytes / y_max * plot_height;

    let title = format!(
        "Memory used on {} {} over time",
        device_name(device),
        device.uuid
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
            phase_color(span.phase),
            escape(&format!(
                "{} from +{} to {}",
                span.phase.as_str(),
                human_duration(span.start_t_ms),
                span.end_t_ms.map_or_else(|| "the end".to_owned(), |end| format!("+{}", human_duration(end)))
            ))
        ));
        let label_width = span.phase.as_str().chars().count() as f64 * 6.0 + 6.0;
        if band_width >= label_width {
            let row = if index % 2 == 0 {
                TOP - 8.0
            } else {
                TOP - 20.0
            };
            svg.push_str(&format!(
                "<text class=\"bandlabel\" x=\"{:.1}\" y=\"{row}\">{}</text>",
                start + 3.0,
                escape(span.phase.as_str())
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
    let total = device.total_bytes.get();
    if total > 0 {
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
        let mut path = format!("M{:.1} {:.1}", x(first[0] as f64), y(first[1] as f64));
        for sample in device.samples.iter().skip(1) {
            path.push_str(&format!(
                " H{:.1} V{:.1}",
                x(sample[0] as f64),
                y(sample[1] as f64)
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
        let elsewhere = memory
            .oom_device_uuid
            .as_ref()
            .filter(|failed| !device.uuid.is_empty() && device.uuid != **failed);
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
        let peak_y = y(peak.get() as f64);
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
            peak,
            device
                .peak_phase
                .as_ref()
                .map_or_else(String::new, |phase| format!(" in {}", phase.as_str()))
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

pub(super) fn trim_float(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

pub(super) fn legend(memory: &MemoryFacts) -> String {
    let mut seen: Vec<Phase> = memory.phases.iter().map(|span| span.phase).collect();
    seen.sort();
    seen.dedup();
    let mut html = String::from("<p class=\"legend\">");
    for phase in seen {
        html.push_str(&format!(
            "<span><i style=\"background:{}\"></i>{}</span>",
            phase_color(phase),
            escape(phase.as_str())
        ));
    }
    html.push_str("<span><i style=\"background:#1849a9\"></i>used (NVML)</span><span><i style=\"background:#b42318\"></i>OOM</span></p>\n");
    html
}
