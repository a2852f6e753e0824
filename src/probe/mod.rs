//! `oomdoc probe`, below its command line: where memory is read (`memory`, a typed
//! `--memory-from` and the [`memory::MemorySource`] trait), the request plan (`plan`, pure),
//! the runner that sends it (`runner`), and the three ways to run it: against a running server
//! ([`run`]), from a clean start of a launched server each repeat ([`launch::run`]), and a soak
//! run cycling the protocol for a duration (`ProbeOptions::duration`).
//!
//! Above the pipeline, like `cli` and `record`: it does I/O through `source`, judges with
//! `analyze`, and hands a [`ProbeRun`] back for `cli` to render.

pub mod launch;
pub mod memory;
pub mod plan;
mod runner;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::analyze::growth::{self, SoakAccumulator};
use crate::error::HintedError;
use crate::model::probe::{ProbeReport, ProbeRequest, ProbeSettings};
use crate::model::Bytes;
use crate::source::server::{Endpoint, HttpServer, ServerError};

pub use memory::MemorySpec;
pub use runner::Stop;
use runner::{long_prompt_chars, MetricsScrape, Runner, SHORT_PROMPT_CHARS};

const WARMUP_REQUESTS: u32 = 3;
const PHASE_REQUESTS: u32 = 10;
const CONCURRENT_ROUNDS: u32 = 6;
/// Slots a soak run keeps (each merges more cycles as the run grows).
const SOAK_SLOTS: usize = 256;

/// What `oomdoc probe` was asked to do (its command line, resolved).
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// Base URL of the server.
    pub url: String,
    /// Model name to send (`None`: the first `/v1/models` lists).
    pub model: Option<String>,
    /// Where memory is read.
    pub memory_from: MemorySpec,
    /// With NVML: the GPU to read.
    pub gpu: Option<String>,
    /// With NVML: the process to read.
    pub pid: Option<u32>,
    /// Parallel requests per concurrent round (0 or 1: no concurrent phase).
    pub concurrency: u32,
    /// Repetitions of the protocol.
    pub repeat: u32,
    /// API key sent as a bearer token.
    pub api_key: Option<String>,
    /// Which API to call.
    pub endpoint: Endpoint,
    /// Timeout of each request, seconds.
    pub request_timeout_s: u64,
    /// Limit on the protocol, seconds.
    pub time_limit_s: u64,
    /// `max_tokens` of each request.
    pub max_tokens: u32,
    /// Soak: cycle the protocol for this long (`--duration`), instead of `repeat` times.
    pub duration: Option<Duration>,
    /// Draw a live progress line on stderr (a terminal).
    pub progress: bool,
}

/// A soak's `--duration`: `90s`, `30m`, `2h`, `1.5h`, or seconds without a unit, from 1 s to
/// 7 days.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
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

/// A finished probe: the report to render, and why the protocol stopped early, if it did.
#[derive(Debug)]
pub struct ProbeRun {
    /// The report (written even when the protocol stopped early).
    pub report: ProbeReport,
    /// Why it stopped early.
    pub stop: Option<Stop>,
}

/// The protocol's settings from the options and what the server said about its model.
fn settings(
    options: &ProbeOptions,
    model: String,
    model_from: String,
    context_tokens: Option<u64>,
    limitations: &mut Vec<String>,
) -> ProbeSettings {
    let long_chars = long_prompt_chars(context_tokens, options.max_tokens);
    if context_tokens.is_none() {
        limitations.push(format!(
            "the server did not report a context length; the long input is {long_chars} characters"
        ));
    }
    if options.concurrency <= 1 {
        limitations.push(
            "concurrency not tested (add `--concurrency N` for a phase of N parallel requests)"
                .to_string(),
        );
    }
    ProbeSettings {
        endpoint: match options.endpoint {
            Endpoint::Completions => "completions",
            Endpoint::Chat => "chat",
        }
        .to_string(),
        model,
        model_from,
        context_tokens,
        warmup_requests: WARMUP_REQUESTS,
        phase_requests: PHASE_REQUESTS,
        concurrency: options.concurrency,
        concurrent_rounds: if options.concurrency > 1 {
            CONCURRENT_ROUNDS
        } else {
            0
        },
        repeat: options.repeat,
        short_prompt_chars: SHORT_PROMPT_CHARS,
        long_prompt_chars: long_chars,
        max_tokens: options.max_tokens,
        request_timeout_s: options.request_timeout_s,
        time_limit_s: options.time_limit_s,
    }
}

fn server(options: &ProbeOptions) -> HttpServer {
    HttpServer::new(
        &options.url,
        options.api_key.clone(),
        Duration::from_secs(options.request_timeout_s),
    )
}

fn progress_bar(enabled: bool, length: Option<u64>) -> Option<indicatif::ProgressBar> {
    if !enabled {
        return None;
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(length, indicatif::ProgressDrawTarget::stderr());
    let template = if length.is_some() {
        "probe {bar:30} {pos}/{len} {msg}"
    } else {
        "soak {elapsed_precise} {pos} readings {msg}"
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    Some(bar)
}

/// What one runner collected, handed back for the report.
struct Collected {
    requests: Vec<ProbeRequest>,
    limitations: Vec<String>,
    metrics_seen: Vec<String>,
    preemptions: Option<f64>,
}

fn collect(runner: &mut Runner<'_>) -> Collected {
    if let Some(progress) = &runner.progress {
        progress.finish_and_clear();
    }
    let mut limitations = std::mem::take(&mut runner.limitations);
    limitations.extend(runner.memory.summed_series());
    Collected {
        requests: std::mem::take(&mut runner.requests),
        limitations,
        metrics_seen: runner.metrics_seen.iter().cloned().collect(),
        preemptions: match (runner.first_preemptions, runner.last_preemptions) {
            (Some(first), Some(last)) => Some(last - first),
            _ => None,
        },
    }
}

/// The reading before the first request; an error when memory cannot be read at all (every
/// reading would fail the same way: say so now, not after a whole protocol).
fn baseline(runner: &mut Runner<'_>) -> anyhow::Result<Bytes> {
    if let Some(memory) = runner.read_memory().memory {
        return Ok(memory);
    }
    if let Some(progress) = &runner.progress {
        progress.finish_and_clear();
    }
    let reason = runner.memory_error.take().unwrap_or_default();
    let description = runner.memory.info().description;
    Err(HintedError::new(
        format!("cannot read memory before the first request from {description}: {reason}"),
        "check the source with `--memory-from` (`nvml`, `prometheus:URL#METRIC`, `replay:FILE`)",
    )
    .into())
}

/// The report from what the runs collected.
#[expect(clippy::too_many_arguments, reason = "the parts of one report")]
fn report(
    server: &HttpServer,
    settings: ProbeSettings,
    memory: &dyn memory::MemorySource,
    baseline: Option<Bytes>,
    collected: Collected,
    mut limitations: Vec<String>,
    stop: Option<&Stop>,
    started: Instant,
) -> ProbeReport {
    let stop_text = stop.map(Stop::text);
    let analysis = growth::analyze(&collected.requests, baseline, stop_text.as_deref());
    limitations.extend(collected.limitations);
    if let Some(text) = &stop_text {
        limitations.push(format!("protocol stopped early: {text}"));
    }
    if let Some(count) = collected.preemptions.filter(|count| *count > 0.0) {
        limitations.push(format!(
            "the server preempted requests {count} times during the protocol: its KV cache was full"
        ));
    }
    let failed_requests = collected
        .requests
        .iter()
        .filter(|r| r.error.is_some())
        .count();
    ProbeReport {
        verdict: analysis.verdict,
        url: server.base(),
        settings,
        memory_source: memory.info(),
        requests: collected.requests,
        trend: analysis.trend,
        plateau_bytes: analysis.plateau_bytes,
        warmup: analysis.warmup,
        steps: analysis.steps,
        metrics_seen: collected.metrics_seen,
        preemptions: collected.preemptions,
        failed_requests,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        limitations,
        launches: Vec::new(),
        soak: None,
    }
}

/// A Ctrl-C flag for soak runs: the first SIGINT ends the run at the next request and the
/// verdict is still written.
fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    // Without the handler Ctrl-C ends oomdoc as usual: nothing worse than before.
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&flag));
    flag
}

/// Runs the protocol against the running server at `options.url` (`repeat` times, or cycled
/// for `duration`).
pub fn run(options: &ProbeOptions) -> anyhow::Result<ProbeRun> {
    let server = server(options);
    let mut limitations = Vec::new();
    let mut memory = memory::open(options, &mut limitations)?;
    let (model, model_from, context_tokens) =
        choose_model(&server, options.model.as_deref(), &mut limitations)?;
    let settings = settings(options, model, model_from, context_tokens, &mut limitations);
    let started = Instant::now();
    let interrupted = options.duration.map(|_| interrupt_flag());
    let deadline = started
        + options
            .duration
            .unwrap_or(Duration::from_secs(options.time_limit_s));
    let per_cycle = plan::cycle(&settings, 0).len() as u64;
    let mut runner = Runner {
        server: &server,
        endpoint: options.endpoint,
        settings: &settings,
        memory: memory.as_mut(),
        host_pid: None,
        metrics: Some(MetricsScrape {
            url: server.metrics_url(),
            timeout: Duration::from_secs(options.request_timeout_s.min(10)),
        }),
        requests: Vec::new(),
        consecutive_failures: 0,
        deadline,
        progress: progress_bar(
            options.progress,
            options
                .duration
                .is_none()
                .then_some(per_cycle * u64::from(settings.repeat)),
        ),
        limitations: Vec::new(),
        metrics_seen: std::collections::BTreeSet::new(),
        first_preemptions: None,
        last_preemptions: None,
        memory_error: None,
        interrupted: interrupted.as_deref(),
    };
    let baseline = baseline(&mut runner)?;
    if options.duration.is_some() {
        let (soak, stop) = soak(&mut runner, &settings);
        let collected = collect(&mut runner);
        drop(runner);
        let mut report = report(
            &server,
            settings,
            memory.as_ref(),
            Some(baseline),
            collected,
            limitations,
            None,
            started,
        );
        report.verdict = soak.verdict;
        report.trend.reason = soak.reason.clone();
        if let Some(stop) = &stop {
            report
                .limitations
                .push(format!("soak ended early: {}", stop.text()));
        }
        report.soak = Some(soak);
        // A soak ends at its duration or on Ctrl-C: both are the run, not a failure.
        let stop = stop.filter(|stop| matches!(stop, Stop::Server(_)));
        return Ok(ProbeRun { report, stop });
    }
    let stop = runner.run_plan(&plan::protocol(&settings)).err();
    let collected = collect(&mut runner);
    drop(runner);
    let report = report(
        &server,
        settings,
        memory.as_ref(),
        Some(baseline),
        collected,
        limitations,
        stop.as_ref(),
        started,
    );
    Ok(ProbeRun { report, stop })
}

/// Cycles the protocol until the runner's deadline (or Ctrl-C, or a failed server), keeping
/// each cycle's levels in a bounded accumulator and the requests of the last cycle only.
fn soak(
    runner: &mut Runner<'_>,
    settings: &ProbeSettings,
) -> (crate::model::probe::SoakAnalysis, Option<Stop>) {
    let mut accumulator = SoakAccumulator::new(SOAK_SLOTS);
    let mut cycle = 0u32;
    let stop = loop {
        runner.requests.clear();
        let result = runner.run_plan(&plan::cycle(settings, cycle));
        if result.is_ok() || !runner.requests.is_empty() {
            accumulator.push_cycle(&runner.requests);
        }
        if let Some(progress) = &runner.progress {
            let analysis = accumulator.analyze();
            progress.set_message(format!("cycle {} · {}", cycle + 1, analysis.verdict.name()));
        }
        match result {
            Ok(()) => cycle = cycle.saturating_add(1),
            Err(Stop::TimeLimit(_)) => break None,
            Err(stop) => break Some(stop),
        }
    };
    (accumulator.analyze(), stop)
}

/// The model to send, where its name came from, and the context length the server reports.
fn choose_model(
    server: &HttpServer,
    model: Option<&str>,
    limitations: &mut Vec<String>,
) -> anyhow::Result<(String, String, Option<u64>)> {
    match crate::source::server::InferenceServer::models(server) {
        Ok(models) => {
            if let Some(name) = model {
                let context = models
                    .iter()
                    .find(|m| m.id == name)
                    .and_then(|m| m.context_tokens);
                if !models.iter().any(|m| m.id == name) {
                    limitations.push(format!("`/v1/models` does not list `{name}`"));
                }
                Ok((name.to_string(), "command line".to_string(), context))
            } else {
                let first = models.into_iter().next().ok_or_else(|| {
                    HintedError::new(
                        format!("`{}/v1/models` lists no model", server.base()),
                        "name the model with `--model NAME`",
                    )
                })?;
                Ok((first.id, "/v1/models".to_string(), first.context_tokens))
            }
        }
        Err(error) => {
            if let Some(status @ (401 | 403)) = error.status() {
                return Err(anyhow::Error::new(error)
                    .context(format!("the server refused the API key (HTTP {status})")));
            }
            if error.is_unreachable() || matches!(error, ServerError::Timeout { .. }) {
                return Err(anyhow::Error::new(error)
                    .context(format!("cannot use the server at `{}`", server.base())));
            }
            match model {
                Some(name) => {
                    limitations.push(format!(
                        "cannot list models ({error}); context length unknown"
                    ));
                    Ok((name.to_string(), "command line".to_string(), None))
                }
                None => Err(anyhow::Error::new(error).context(format!(
                    "cannot find the model served at `{}` (name it with `--model NAME`)",
                    server.base()
                ))),
            }
        }
    }
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
