//! Text for people about host memory: the OOM-kill verdict of `analyze::host_oom`, with its
//! evidence, limit, peak and advice. Pure: takes the finding, returns lines (the report and
//! `oomdoc run` place them); every figure says which file it came from.

use crate::model::host::{advice_text, evidence_text, peak_figure_text, HostOomFinding};
use crate::model::run::HostRecord;
use crate::render::wrap::visible_width;

/// The verdict as lines of at most 100 columns; empty when the child was not killed.
pub fn finding_lines(finding: &HostOomFinding) -> Vec<String> {
    let mut lines = Vec::new();
    match finding {
        HostOomFinding::NotKilled => {}
        HostOomFinding::KilledBySignal {
            signal,
            not_shown_because,
        } => {
            lines.push(format!(
                "killed by a signal (signal {signal}, exit code {}): cause not shown",
                128 + signal
            ));
            for reason in not_shown_because {
                push_wrapped(&mut lines, "  - ", reason);
            }
        }
        HostOomFinding::HostOomKill(kill) => {
            lines.push(
                "host out-of-memory kill: the kernel's OOM killer ended the process (host RAM, not GPU)"
                    .to_string(),
            );
            for evidence in &kill.evidence {
                push_wrapped(&mut lines, "  - ", &evidence_text(evidence));
            }
            match kill.limit_bytes {
                Some(limit) => push_wrapped(
                    &mut lines,
                    "  ",
                    &format!(
                        "limit: {limit} ({} B, the cgroup's `memory.max` / `memory.limit_in_bytes`)",
                        limit.get()
                    ),
                ),
                None => lines.push("  limit: none on the cgroup (the whole machine ran out)".into()),
            }
            if let Some(peak) = &kill.peak {
                let figure = peak_figure_text(&peak.figure);
                let mut line = format!("peak: {} ({} B, {figure})", peak.bytes, peak.bytes.get());
                if let Some(phase) = &peak.phase {
                    line.push_str(&format!(" during {phase}"));
                }
                push_wrapped(&mut lines, "  ", &line);
            }
            if let Some(phase) = &kill.phase_at_kill {
                lines.push(format!("  killed during: {phase}"));
            }
            lines.push("what to change:".to_string());
            for advice in &kill.advice {
                push_wrapped(&mut lines, "  - ", &advice_text(advice));
            }
        }
    }
    lines
}

/// Two lines on a run's host memory: the tree RSS peak with its time and phase; the cgroup
/// limit and OOM-kill counts, and where the readings came from.
pub fn peak_lines(host: &HostRecord) -> Vec<String> {
    let first = match &host.peak {
        Some(peak) => {
            let mut text = format!(
                "host memory: peak tree RSS {} at {:.2} s",
                peak.reading.tree_rss_bytes,
                peak.reading.t_ms as f64 / 1000.0
            );
            if let Some(phase) = &peak.phase {
                text.push_str(&format!(" in `{phase}`"));
            }
            text.push_str(&format!(
                " ({} process{})",
                peak.reading.processes,
                if peak.reading.processes == 1 {
                    ""
                } else {
                    "es"
                }
            ));
            text
        }
        None => "host memory: no reading of the process tree".to_owned(),
    };
    let mut second = match host.limit_bytes {
        Some(limit) => format!("cgroup limit {limit}"),
        None if host.timeline.cgroup_before.is_some() => "no cgroup limit".to_owned(),
        None => "no memory cgroup read".to_owned(),
    };
    if let (Some(before), Some(after)) = (host.oom_kills_before, host.oom_kills_after) {
        second.push_str(&format!(", OOM kills {before} → {after}"));
    }
    let source = if host.source == "replay" {
        "replayed"
    } else {
        "`/proc` and the cgroup"
    };
    second.push_str(&format!(
        " ({source}, {} readings every {} ms)",
        host.timeline.readings, host.timeline.interval_ms
    ));
    vec![first, format!("  {second}")]
}

/// The widest line, in columns.
const WIDTH: usize = 100;

/// `text` after `prefix`, wrapped at spaces to [`WIDTH`] columns; continuation lines are
/// indented under the text.
fn push_wrapped(lines: &mut Vec<String>, prefix: &str, text: &str) {
    let indent = " ".repeat(visible_width(prefix));
    let mut line = prefix.to_string();
    let mut empty = true;
    for word in text.split(' ') {
        let width = visible_width(&line) + usize::from(!empty) + visible_width(word);
        if !empty && width > WIDTH {
            lines.push(std::mem::replace(&mut line, indent.clone()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::host::{HostAdvice, HostOomEvidence, HostOomKill, HostPeak};
    use crate::model::Bytes;

    #[test]
    fn a_host_oom_kill_reads_with_its_figures_and_sources() {
        let finding = HostOomFinding::HostOomKill(HostOomKill {
            evidence: vec![HostOomEvidence::OomKillCountRose {
                before: 0,
                after: 1,
            }],
            limit_bytes: Some(Bytes(128 << 20)),
            peak: Some(HostPeak {
                bytes: Bytes(128 << 20),
                figure: "cgroup_peak".into(),
                t_ms: Some(900),
                phase: Some("weights loading".into()),
            }),
            phase_at_kill: Some("weights loading".into()),
            advice: vec![
                HostAdvice::RaiseMemoryLimit {
                    limit_bytes: Bytes(128 << 20),
                    peak_bytes: Some(Bytes(128 << 20)),
                },
                HostAdvice::FewerWorkers { processes: 4 },
            ],
        });
        let lines = finding_lines(&finding);
        assert_eq!(
            lines[..5],
            [
                "host out-of-memory kill: the kernel's OOM killer ended the process (host RAM, not GPU)",
                "  - the cgroup's OOM-kill count (`oom_kill`) rose from 0 to 1",
                "  limit: 128.00 MiB (134217728 B, the cgroup's `memory.max` / `memory.limit_in_bytes`)",
                "  peak: 128.00 MiB (134217728 B, the cgroup's peak counter) during weights loading",
                "  killed during: weights loading",
            ]
        );
        assert!(lines[6].starts_with("  - raise the memory limit from 128.00 MiB, above"));
        for line in &lines {
            assert!(
                line.chars().count() <= 100,
                "{} columns: {line}",
                line.chars().count()
            );
        }
    }

    #[test]
    fn a_plain_sigkill_says_cause_not_shown() {
        let lines = finding_lines(&HostOomFinding::KilledBySignal {
            signal: 9,
            not_shown_because: vec!["the cgroup's OOM-kill count did not change (0)".into()],
        });
        assert_eq!(
            lines,
            [
                "killed by a signal (signal 9, exit code 137): cause not shown",
                "  - the cgroup's OOM-kill count did not change (0)"
            ]
        );
        assert!(finding_lines(&HostOomFinding::NotKilled).is_empty());
    }

    #[test]
    fn host_peak_lines_fit_100_columns_and_name_their_source() {
        use crate::model::host::{HostSample, HostTimeline};
        use crate::model::run::{HostPeakRecord, HostRecord};
        let host = HostRecord {
            source: "proc".into(),
            limit_bytes: Some(Bytes(128 << 20)),
            oom_kills_before: Some(0),
            oom_kills_after: Some(1),
            peak: Some(HostPeakRecord {
                phase: Some("format_conversion".into()),
                reading: HostSample {
                    t_ms: 123_456,
                    tree_rss_bytes: Bytes(137_715_712),
                    processes: 12,
                    cgroup_current_bytes: None,
                },
            }),
            timeline: HostTimeline {
                interval_ms: 100,
                readings: 1_234_567,
                ..HostTimeline::default()
            },
            ..HostRecord::default()
        };
        let lines = peak_lines(&host);
        assert_eq!(
            lines,
            [
                "host memory: peak tree RSS 131.34 MiB at 123.46 s in `format_conversion` (12 processes)",
                "  cgroup limit 128.00 MiB, OOM kills 0 → 1 (`/proc` and the cgroup, 1234567 readings every 100 ms)",
            ]
        );
        // Placed under the summary's first line with two more spaces.
        for line in &lines {
            assert!(line.chars().count() + 2 <= 100, "{line}");
        }
    }
}
