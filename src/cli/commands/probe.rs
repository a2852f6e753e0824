//! `oomdoc probe`: the reproducible growth test against an OpenAI-compatible server.
//! The arguments become a [`ProbeOptions`]; `crate::probe` runs the protocol (against a
//! running server, from a clean start with `--launch`, or as a soak with `--duration`); this
//! file renders what comes back.
//!
//! Exit codes: 0 when the protocol ran (any verdict) or stopped at the time limit; 2 when the
//! server cannot be used at all (nothing on stdout), when it failed mid-protocol (the partial
//! report is still written: the readings taken are evidence a person wants to keep), or when a
//! launched server did not start (its log explained on stdout).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::{settings, ExitStatus};
use crate::env_vars;
use crate::model::probe::{GrowthVerdict, ProbeReport};
use crate::probe::launch::{LaunchOptions, LaunchRun};
use crate::probe::memory::MemorySpec;
use crate::probe::{ProbeOptions, ProbeRun, Stop};
use crate::render;
use crate::render::style::Style;
use crate::source::server::Endpoint;

/// Arguments of `oomdoc probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Base URL of the OpenAI-compatible server, e.g. `http://127.0.0.1:8000`
    pub url: String,
    /// Model name to send (default: the first model `/v1/models` lists)
    #[arg(long)]
    pub model: Option<String>,
    /// Where memory is read: `nvml`, `prometheus:URL[#METRIC{label="v"}]` (default metric
    /// dcgm-exporter's `DCGM_FI_DEV_FB_USED`, MiB) or `replay:FILE` (a JSON list of bytes)
    #[arg(long, value_name = "SOURCE", default_value = "nvml")]
    pub memory_from: MemorySpec,
    /// With `nvml`: the GPU to read, by UUID (or prefix) or NVML index (default: every GPU, summed)
    #[arg(long, value_name = "UUID|INDEX")]
    pub gpu: Option<String>,
    /// With `nvml`: read the memory of this process (the server) instead of the whole GPU
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Add a concurrent phase: rounds of N parallel requests (0 or 1: no concurrent phase)
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=256))]
    pub concurrency: u32,
    /// Run the whole protocol K times
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub repeat: u32,
    /// API key sent as `Authorization: Bearer` (default: `OOMDOC_API_KEY`, then `OPENAI_API_KEY`); never printed
    #[arg(long, value_name = "KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Which API to call
    #[arg(long, value_enum, default_value_t = EndpointArg::Completions)]
    pub endpoint: EndpointArg,
    /// Timeout of each request, seconds
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub request_timeout: u64,
    /// Limit on the whole protocol, seconds (it stops there and reports what it has)
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub time_limit: u64,
    /// `max_tokens` of each request
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_tokens: u32,
    /// Start the server with the command after `--` for each repeat, from a clean start, and
    /// stop it after the protocol (`URL` is where it will answer)
    #[arg(long, requires = "command")]
    pub launch: bool,
    /// With `--launch`: longest wait for the server to answer, seconds
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub ready_timeout: u64,
    /// With `--launch`: seconds between SIGTERM and SIGKILL of the server's process group
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub stop_grace: u64,
    /// With `--launch`: directory for `repeat-N/` (server log, probe document) and `probe.json`
    #[arg(long, value_name = "DIR", default_value = "oomdoc-probe")]
    pub out: PathBuf,
    /// Soak: cycle the protocol for this long (`90s`, `30m`, `2h`) and judge the whole run
    /// (with `--launch`: one start); Ctrl-C ends it early with the verdict so far
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "repeat")]
    pub duration: Option<Duration>,
    /// With `--launch`: the server's command and arguments
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// With `--launch`: reuse `repeat-N/` directories of an earlier probe in `--out`
    #[arg(long)]
    pub force: bool,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--endpoint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EndpointArg {
    /// `/v1/completions`.
    Completions,
    /// `/v1/chat/completions`.
    Chat,
}

/// `90s`, `30m`, `2h`, `1.5h`, or seconds without a unit.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = match text.char_indices().last() {
        Some((at, 's')) => (&text[..at], 1.0),
        Some((at, 'm')) => (&text[..at], 60.0),
        Some((at, 'h')) => (&text[..at], 3600.0),
        _ => (text, 1.0),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: write e.g. `90s`, `30m` or `2h`"))?;
    let seconds = value * scale;
    if !(1.0..=7.0 * 86400.0).contains(&seconds) {
        return Err(format!("`{text}` is outside 1 s to 7 days"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Runs `oomdoc probe`.
pub fn run(args: ProbeArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let api_key = args
        .api_key
        .clone()
        .or_else(|| std::env::var(env_vars::OOMDOC_API_KEY).ok())
        .or_else(|| std::env::var(env_vars::OPENAI_API_KEY).ok())
        .filter(|key| !key.is_empty());
    let options = ProbeOptions {
        url: args.url.clone(),
        model: args.model.clone(),
        memory_from: args.memory_from.clone(),
        gpu: args.gpu.clone(),
        pid: args.pid,
        concurrency: args.concurrency,
        repeat: args.repeat,
        api_key,
        endpoint: match args.endpoint {
            EndpointArg::Completions => Endpoint::Completions,
            EndpointArg::Chat => Endpoint::Chat,
        },
        request_timeout_s: args.request_timeout,
        time_limit_s: args.time_limit,
        max_tokens: args.max_tokens,
        duration: args.duration,
        progress: settings::stderr_is_terminal(),
    };
    let probed = if args.launch {
        let launch = LaunchOptions {
            command: args.command.clone(),
            force: args.force,
            out: args.out.clone(),
            ready_timeout: Duration::from_secs(args.ready_timeout),
            grace: Duration::from_secs(args.stop_grace),
        };
        match crate::probe::launch::run(&options, &launch)? {
            LaunchRun::Probed(probed) => *probed,
            LaunchRun::FailedToStart {
                repeat,
                error,
                explain,
            } => {
                let color = output.color_for(&args.output);
                let bytes = match args.output.format() {
                    Format::Json => render::explain::json(&explain)?,
                    Format::Markdown => render::explain::markdown(&explain, false),
                    Format::Text | Format::Html => {
                        render::explain::text(&explain, Style::new(color), false)
                    }
                };
                output.report(&args.output, &bytes)?;
                return Err(anyhow::Error::new(error).context(format!(
                    "the server did not start (repeat {} of {}): this is a failure at startup, not a probe result; `explain` of its log is above",
                    repeat + 1,
                    args.repeat
                )));
            }
        }
    } else {
        if !args.command.is_empty() {
            anyhow::bail!("a command after `--` is started only with `--launch`");
        }
        crate::probe::run(&options)?
    };
    let ProbeRun { report, stop } = probed;
    write_report(&report, &args, output)?;
    match stop {
        Some(Stop::Server(error)) => Err(anyhow::Error::new(error).context(format!(
            "the server failed during the protocol; the partial report has verdict `{}`",
            GrowthVerdict::Inconclusive.name()
        ))),
        Some(Stop::TimeLimit(seconds)) => {
            output.warn(&format!(
                "the time limit of {seconds} s was reached before the protocol ended"
            ));
            Ok(ExitStatus::Success)
        }
        Some(Stop::Interrupted) | None => Ok(ExitStatus::Success),
    }
}

fn write_report(report: &ProbeReport, args: &ProbeArgs, output: &mut Output) -> anyhow::Result<()> {
    let color = output.color_for(&args.output);
    let bytes = match args.output.format() {
        Format::Json => render::json::to_document(report)?,
        Format::Text => render::probe::text(report, Style::new(color)),
        Format::Markdown => render::probe::markdown(report),
        Format::Html => render::probe::html(report),
    };
    output.report(&args.output, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_seconds_minutes_and_hours() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert!(parse_duration("2d").unwrap_err().contains("not a duration"));
        assert!(parse_duration("0s").unwrap_err().contains("outside"));
        assert!(parse_duration("9000h").unwrap_err().contains("outside"));
        assert!(parse_duration("").is_err());
    }
}
