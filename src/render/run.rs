//! Render the short summary `oomdoc run` prints when its child has ended (stderr by default:
//! stdout belongs to the child). Pure: takes the finished record, returns text.

use crate::model::explain::Phase;
use crate::model::run::{RunRecord, RunStatus};
use crate::model::{Bytes, Source};
use crate::render::wrap::{cut, fit, TEXT_WIDTH};

/// Which markup the summary uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Markup {
    /// Plain text lines.
    Text,
    /// GitHub-flavoured Markdown (a heading and a list).
    Markdown,
}

/// The summary of a finished (or failed-to-start) run. `directory` is the run directory as the
/// user should see it.
pub fn summary(record: &RunRecord, directory: &str, markup: Markup) -> String {
    let mut lines: Vec<String> = Vec::new();
    let command = shell_words(&record.command);
    let seconds = record.duration_ms.unwrap_or(0) as f64 / 1000.0;
    let outcome = match record.status {
        RunStatus::Running => "is still running".to_owned(),
        RunStatus::Exited => format!(
            "exited with code {} after {seconds:.2} s",
            record.exit_code.unwrap_or(0)
        ),
        RunStatus::Signaled => format!(
            "was killed by signal {} (exit code {}) after {seconds:.2} s",
            record.signal.unwrap_or(0),
            record.exit_code.unwrap_or(0)
        ),
        RunStatus::Interrupted => format!(
            "was interrupted and ended with code {} after {seconds:.2} s",
            record.exit_code.unwrap_or(0)
        ),
        RunStatus::SpawnFailed => "could not be started".to_owned(),
    };
    let head = format!("oomdoc run: `{command}` {outcome}");
    let head = if markup == Markup::Text && head.chars().count() > TEXT_WIDTH {
        // The command is cut with `…` to fit the line; `run.json` keeps it whole.
        let room = TEXT_WIDTH.saturating_sub(format!("oomdoc run: `` {outcome}").chars().count());
        format!("oomdoc run: `{}` {outcome}", cut(&command, room.max(12)))
    } else {
        head
    };
    lines.push(head);

    if let Some(explain) = &record.explain {
        let ooms = explain.ooms.len();
        let failed_in = Some(explain.phase.failed_in.as_str());
        let last_completed = explain.phase.last_completed.map(Phase::as_str);
        if ooms > 0 {
            let mut line = format!(
                "GPU out of memory: {ooms} message{} in the log",
                if ooms == 1 { "" } else { "s" }
            );
            if let Some(failed_in) = failed_in {
                line.push_str(&format!("; failed in `{failed_in}`"));
            }
            if let Some(last_completed) = last_completed {
                line.push_str(&format!(", last completed `{last_completed}`"));
            }
            lines.push(line);
        } else if let Some(last_completed) = last_completed {
            lines.push(format!(
                "no OOM in the log; last completed phase `{last_completed}`"
            ));
        }
        if ooms > 0 {
            let headline = &explain.verdict.headline;
            if !headline.is_empty() {
                lines.push(format!(
                    "verdict: {headline} (details: `oomdoc explain {directory}/log.txt`)"
                ));
            }
        }
    }

    if let Some(host) = &record.host {
        if let Some(finding) = &host.finding {
            lines.extend(crate::render::host::finding_lines(finding));
        }
        lines.extend(crate::render::host::peak_lines(host));
    }

    if record.memory.available {
        let source = record.memory.source.map_or("NVML", Source::label);
        for device in &record.memory.devices {
            let mut line = format!("GPU {}", device.index);
            if let Some(ordinal) = device.cuda_ordinal {
                line.push_str(&format!(" (cuda:{ordinal})"));
            }
            line.push_str(&format!(" {} {}:", device.name, device.uuid));
            if let Some(free) = device.baseline_free_bytes {
                line.push_str(&format!(" free before start {}", Bytes::human(free)));
            }
            if let (Some(peak), Some(t_ms)) = (device.peak_used_bytes, device.peak_t_ms) {
                line.push_str(&format!(
                    "; peak used {} at {:.2} s",
                    peak.human(),
                    t_ms as f64 / 1000.0
                ));
                if let Some(phase) = device.peak_phase {
                    line.push_str(&format!(" in `{}`", phase.as_str()));
                }
            }
            line.push_str(&format!(" ({source}, {} readings)", device.sample_count));
            lines.push(line);
        }
    } else if let Some(reason) = &record.memory.reason {
        let line = format!("no memory timeline: {reason}");
        if !record.limitations.contains(&line) {
            lines.push(line);
        }
    }
    if let Some(snapshot) = &record.torch_snapshot {
        if let Some(file) = &snapshot.file {
            lines.push(format!(
                "PyTorch memory snapshot: {directory}/{file} (read it with `oomdoc snapshot`)"
            ));
        }
    }
    for limitation in &record.limitations {
        lines.push(format!("limitation: {limitation}"));
    }
    lines.push(format!(
        "record: {directory}/run.json, log: {directory}/{}",
        record.log.file
    ));

    match markup {
        Markup::Text => {
            let mut text = lines[0].clone();
            for line in &lines[1..] {
                text.push_str("\n  ");
                text.push_str(line);
            }
            text.push('\n');
            fit(&text)
        }
        Markup::Markdown => {
            let mut text = format!("### {}\n\n", lines[0]);
            for line in &lines[1..] {
                text.push_str(&format!("- {line}\n"));
            }
            text
        }
    }
}

/// The command line as a shell would need it typed: arguments with spaces or quotes in single
/// quotes.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|argument| {
            let plain = !argument.is_empty()
                && argument
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%[]~".contains(c));
            if plain {
                argument.clone()
            } else {
                format!("'{}'", argument.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::gpu::{CudaOrdinal, NvmlIndex};
    use crate::model::run::{DeviceTimeline, LogInfo, MemoryRecord};

    #[test]
    fn shell_quoting() {
        let argv: Vec<String> = ["sh", "-c", "echo 'hi' there", "--api-key", "[REDACTED]", ""]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            shell_words(&argv),
            r"sh -c 'echo '\''hi'\'' there' --api-key [REDACTED] ''"
        );
    }

    #[test]
    fn summary_of_an_oom_run() {
        let mut live = crate::analyze::run_explain::LiveExplain::new();
        live.push_lines(
            b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n",
        );
        live.finish();
        let mut explain = live.report().clone();
        assert_eq!(explain.ooms.len(), 1);
        explain.phase.failed_in = Phase::FormatConversion;
        explain.phase.last_completed = Some(Phase::WeightsLoad);
        explain.verdict.headline = "a transient peak while converting weights".into();
        let record = RunRecord {
            status: RunStatus::Exited,
            command: vec!["python3".into(), "train.py".into()],
            exit_code: Some(1),
            duration_ms: Some(12_345),
            explain: Some(explain),
            memory: MemoryRecord {
                available: true,
                source: Some(Source::Nvml),
                devices: vec![DeviceTimeline {
                    uuid: "GPU-1234".into(),
                    index: NvmlIndex(0),
                    cuda_ordinal: Some(CudaOrdinal(0)),
                    name: "NVIDIA H200".into(),
                    baseline_free_bytes: Some(Bytes(140 << 30)),
                    peak_used_bytes: Some(Bytes(30 << 30)),
                    peak_t_ms: Some(4150),
                    peak_phase: Some(Phase::FormatConversion),
                    sample_count: 12000,
                    ..DeviceTimeline::default()
                }],
                ..MemoryRecord::default()
            },
            log: LogInfo {
                file: "log.txt".into(),
                ..LogInfo::default()
            },
            limitations: vec!["no per-process memory: NVML returned NoPermission".into()],
            ..RunRecord::default()
        };
        insta::assert_snapshot!(summary(&record, "out", Markup::Text), @r"
        oomdoc run: `python3 train.py` exited with code 1 after 12.35 s
          GPU out of memory: 1 message in the log; failed in `format_conversion`, last completed
                             `weights_load`
          verdict: a transient peak while converting weights (details: `oomdoc explain out/log.txt`)
          GPU 0 (cuda:0) NVIDIA H200 GPU-1234: free before start 140.00 GiB; peak used 30.00 GiB at 4.15 s
            in `format_conversion` (NVML, 12000 readings)
          limitation: no per-process memory: NVML returned NoPermission
          record: out/run.json, log: out/log.txt
        ");
    }
}
