//! `oomdoc probe`: the reproducible growth test against a running OpenAI-compatible server
//! (R13, R14).
//!
//! Protocol (seeds: ten identical short requests, then ten alternating short and long, memory
//! recorded after each request completes): a `warmup` phase recorded separately, `identical`,
//! `alternating`, then an optional `concurrent` phase (rounds of `--concurrency N` parallel
//! requests, memory read after each round), the whole repeated `--repeat K` times.
//!
//! Bounded: every request has `--request-timeout`, the protocol `--time-limit`; three failed
//! requests in a row (server gone, errors) stop it. Exit codes: 0 when the protocol ran (any
//! verdict) or stopped at the time limit; 2 when the server cannot be used at all (nothing on
//! stdout) or when it failed mid-protocol. In that last case the partial report is still
//! written (verdict `inconclusive`, the failure in `limitations`) before the error: the
//! readings taken are evidence a person wants to keep. This is a deliberate exception to
//! "exit 2 leaves stdout empty".

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::analyze::growth;
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::{settings, ExitStatus};
use crate::env_vars;
use crate::error::HintedError;
use crate::model::probe::{
    GrowthVerdict, MemorySourceInfo, Phase, ProbeReport, ProbeRequest, ProbeSettings,
};
use crate::model::{Bytes, Source};
use crate::parse::prometheus::{self, Selector};
use crate::probe::memory::MemorySpec;
use crate::render;
use crate::source::gpu::GpuSource;
use crate::source::server::{
    self, CompletionRequest, Endpoint, HttpServer, InferenceServer, ServerError,
};

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

const WARMUP_REQUESTS: u32 = 3;
const PHASE_REQUESTS: u32 = 10;
const CONCURRENT_ROUNDS: u32 = 6;
/// Three failed requests in a row: the server is gone or broken; stop.
const MAX_CONSECUTIVE_FAILURES: u32 = 3;
/// Short input: one sentence.
const SHORT_PROMPT_CHARS: u64 = 64;
/// Long input when the context is unknown.
const DEFAULT_LONG_PROMPT_CHARS: u64 = 2048;
/// Longest long input: enough to move activation and KV memory, quick to prefill.
const MAX_LONG_PROMPT_CHARS: u64 = 8192;
const FILLER: &str = "The quick brown fox jumps over the lazy dog while memory is measured. ";

/// Runs `oomdoc probe`.
pub fn run(args: ProbeArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let api_key = args
        .api_key
        .clone()
        .or_else(|| std::env::var(env_vars::OOMDOC_API_KEY).ok())
        .or_else(|| std::env::var(env_vars::OPENAI_API_KEY).ok())
        .filter(|key| !key.is_empty());
    let timeout = Duration::from_secs(args.request_timeout);
    let server = HttpServer::new(&args.url, api_key, timeout);
    let mut limitations = Vec::new();
    let mut memory = MemoryReader::open(&args, &mut limitations)?;

    let (model, model_from, context_tokens) = choose_model(&server, &args, &mut limitations)?;
    let short_chars = SHORT_PROMPT_CHARS;
    let long_chars = long_prompt_chars(context_tokens, args.max_tokens);
    if context_tokens.is_none() {
        limitations.push(format!(
            "the server did not report a context length; the long input is {long_chars} characters"
        ));
    }
    if args.concurrency <= 1 {
        limitations.push(
            "concurrency not tested (add `--concurrency N` for a phase of N parallel requests)"
                .to_string(),
        );
    }
    let settings = ProbeSettings {
        endpoint: match args.endpoint {
            EndpointArg::Completions => "completions",
            EndpointArg::Chat => "chat",
        }
        .to_string(),
        model,
        model_from,
        context_tokens,
        warmup_requests: WARMUP_REQUESTS,
        phase_requests: PHASE_REQUESTS,
        concurrency: args.concurrency,
        concurrent_rounds: if args.concurrency > 1 {
            CONCURRENT_ROUNDS
        } else {
            0
        },
        repeat: args.repeat,
        short_prompt_chars: short_chars,
        long_prompt_chars: long_chars,
        max_tokens: args.max_tokens,
        request_timeout_s: args.request_timeout,
        time_limit_s: args.time_limit,
    };

    let started = Instant::now();
    let mut runner = Runner {
        server: &server,
        endpoint: match args.endpoint {
            EndpointArg::Completions => Endpoint::Completions,
            EndpointArg::Chat => Endpoint::Chat,
        },
        settings: &settings,
        memory: &mut memory,
        metrics: Some(MetricsScrape {
            url: server.metrics_url(),
            timeout: timeout.min(Duration::from_secs(10)),
        }),
        requests: Vec::new(),
        consecutive_failures: 0,
        deadline: started + Duration::from_secs(args.time_limit),
        progress: progress_bar(&settings),
        limitations: Vec::new(),
        metrics_seen: std::collections::BTreeSet::new(),
        first_preemptions: None,
        last_preemptions: None,
        memory_error: None,
    };
    let baseline = runner.read_memory().memory;
    if baseline.is_none() {
        // Every reading would fail the same way: say so now, not after a whole protocol
        // whose verdict would only say that no reading repeats an input.
        if let Some(progress) = &runner.progress {
            progress.finish_and_clear();
        }
        let reason = runner.memory_error.take().unwrap_or_default();
        let description = runner.memory.info().description;
        return Err(HintedError::new(
            format!("cannot read memory before the first request from {description}: {reason}"),
            "check the source with `--memory-from` (`nvml`, `prometheus:URL#METRIC`, `replay:FILE`)",
        )
        .into());
    }
    let stop = runner.protocol();
    if let Some(progress) = &runner.progress {
        progress.finish_and_clear();
    }
    let requests = std::mem::take(&mut runner.requests);
    limitations.append(&mut runner.limitations);
    limitations.extend(runner.memory.summed_series());
    let metrics_seen: Vec<String> = runner.metrics_seen.iter().cloned().collect();
    let preemptions = match (runner.first_preemptions, runner.last_preemptions) {
        (Some(first), Some(last)) => Some(last - first),
        _ => None,
    };
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);

    let stop_text = stop.as_ref().map(Stop::text);
    let analysis = growth::analyze(&requests, baseline, stop_text.as_deref());
    if let Some(text) = &stop_text {
        limitations.push(format!("protocol stopped early: {text}"));
    }
    let failed_requests = requests.iter().filter(|r| r.error.is_some()).count();
    if preemptions.is_some_and(|count| count > 0.0) {
        limitations.push(format!(
            "the server preempted requests {} times during the protocol: its KV cache was full",
            preemptions.unwrap_or_default()
        ));
    }
    let report = ProbeReport {
        verdict: analysis.verdict,
        url: server.base(),
        settings,
        memory_source: memory.info(),
        requests,
        trend: analysis.trend,
        plateau_bytes: analysis.plateau_bytes,
        warmup: analysis.warmup,
        steps: analysis.steps,
        metrics_seen,
        preemptions,
        failed_requests,
        elapsed_ms,
        limitations,
    };
    let color = output.color_for(&args.output);
    let bytes = match args.output.format() {
        Format::Json => render::json::to_document(&report)?,
        Format::Text => render::probe::text(&report, render::style::Style::new(color)),
        Format::Markdown => render::probe::markdown(&report),
        Format::Html => render::probe::html(&report),
    };
    output.report(&args.output, &bytes)?;
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
        None => Ok(ExitStatus::Success),
    }
}

/// Why the protocol ended early.
enum Stop {
    TimeLimit(u64),
    Server(ServerError),
}

impl Stop {
    fn text(&self) -> String {
        match self {
            Stop::TimeLimit(seconds) => format!("time limit of {seconds} s reached"),
            Stop::Server(error) => error.to_string(),
        }
    }
}

fn choose_model(
    server: &HttpServer,
    args: &ProbeArgs,
    limitations: &mut Vec<String>,
) -> anyhow::Result<(String, String, Option<u64>)> {
    match server.models() {
        Ok(models) => {
            if let Some(name) = &args.model {
                let context = models
                    .iter()
                    .find(|m| &m.id == name)
                    .and_then(|m| m.context_tokens);
                if !models.iter().any(|m| &m.id == name) {
                    limitations.push(format!("`/v1/models` does not list `{name}`"));
                }
                Ok((name.clone(), "command line".to_string(), context))
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
            match &args.model {
                Some(name) => {
                    limitations.push(format!(
                        "cannot list models ({error}); context length unknown"
                    ));
                    Ok((name.clone(), "command line".to_string(), None))
                }
                None => Err(anyhow::Error::new(error).context(format!(
                    "cannot find the model served at `{}` (name it with `--model NAME`)",
                    server.base()
                ))),
            }
        }
    }
}

/// Many times the short input, within the context: half the tokens left after `max_tokens`,
/// counted as characters (a character is at most one token for byte-level tokenizers).
fn long_prompt_chars(context_tokens: Option<u64>, max_tokens: u32) -> u64 {
    match context_tokens {
        Some(tokens) => {
            let room = tokens.saturating_sub(u64::from(max_tokens)) / 2;
            room.clamp(SHORT_PROMPT_CHARS * 2, MAX_LONG_PROMPT_CHARS)
        }
        None => DEFAULT_LONG_PROMPT_CHARS,
    }
}

fn prompt(chars: u64) -> String {
    FILLER
        .chars()
        .cycle()
        .take(usize::try_from(chars).unwrap_or(usize::MAX))
        .collect()
}

fn progress_bar(settings: &ProbeSettings) -> Option<indicatif::ProgressBar> {
    if !settings::stderr_is_terminal() {
        return None;
    }
    let per_repeat = u64::from(settings.warmup_requests + 2 * settings.phase_requests)
        + u64::from(settings.concurrent_rounds);
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(per_repeat * u64::from(settings.repeat)),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template("probe {bar:30} {pos}/{len} {msg}") {
        bar.set_style(style);
    }
    Some(bar)
}

struct MetricsScrape {
    url: String,
    timeout: Duration,
}

/// Metrics of interest on a server's `/metrics` (vLLM names; older releases in brackets).
const KV_USAGE_METRICS: &[&str] = &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"];
const PREEMPTION_METRICS: &[&str] = &["vllm:num_preemptions_total", "vllm:num_preemptions"];

struct Runner<'a> {
    server: &'a HttpServer,
    endpoint: Endpoint,
    settings: &'a ProbeSettings,
    memory: &'a mut MemoryReader,
    metrics: Option<MetricsScrape>,
    requests: Vec<ProbeRequest>,
    consecutive_failures: u32,
    deadline: Instant,
    progress: Option<indicatif::ProgressBar>,
    limitations: Vec<String>,
    metrics_seen: std::collections::BTreeSet<String>,
    first_preemptions: Option<f64>,
    last_preemptions: Option<f64>,
    /// Why the first failed memory reading failed (said once as a limitation; before the
    /// first request it ends the probe).
    memory_error: Option<String>,
}

/// What one reading after a request gives.
struct Reading {
    memory: Option<Bytes>,
    kv_cache_usage: Option<f64>,
    preemptions_total: Option<f64>,
}

impl Runner<'_> {
    fn protocol(&mut self) -> Option<Stop> {
        self.run_phases().err()
    }

    fn run_phases(&mut self) -> Result<(), Stop> {
        let short = self.settings.short_prompt_chars;
        let long = self.settings.long_prompt_chars;
        for repeat in 0..self.settings.repeat {
            for index in 0..self.settings.warmup_requests {
                self.sequential(repeat, Phase::Warmup, index, short)?;
            }
            for index in 0..self.settings.phase_requests {
                self.sequential(repeat, Phase::Identical, index, short)?;
            }
            for index in 0..self.settings.phase_requests {
                let chars = if index % 2 == 0 { short } else { long };
                self.sequential(repeat, Phase::Alternating, index, chars)?;
            }
            for round in 0..self.settings.concurrent_rounds {
                let chars = if round % 2 == 0 { short } else { long };
                self.concurrent(repeat, round, chars)?;
            }
        }
        Ok(())
    }

    fn check_deadline(&self) -> Result<(), Stop> {
        if Instant::now() >= self.deadline {
            Err(Stop::TimeLimit(self.settings.time_limit_s))
        } else {
            Ok(())
        }
    }

    fn request(&self, chars: u64) -> CompletionRequest {
        CompletionRequest {
            model: self.settings.model.clone(),
            prompt: prompt(chars),
            max_tokens: self.settings.max_tokens,
            endpoint: self.endpoint,
        }
    }

    fn sequential(
        &mut self,
        repeat: u32,
        phase: Phase,
        index: u32,
        chars: u64,
    ) -> Result<(), Stop> {
        self.check_deadline()?;
        if let Some(progress) = &self.progress {
            progress.set_message(phase.name());
        }
        let attempt = self.server.complete(&self.request(chars));
        let reading = self.read_memory();
        let outcome = self.record(repeat, phase, index, None, chars, attempt, &reading);
        if let Some(progress) = &self.progress {
            progress.inc(1);
        }
        outcome
    }

    fn concurrent(&mut self, repeat: u32, round: u32, chars: u64) -> Result<(), Stop> {
        self.check_deadline()?;
        if let Some(progress) = &self.progress {
            progress.set_message(Phase::Concurrent.name());
        }
        let request = self.request(chars);
        let server = self.server;
        let attempts: Vec<server::Attempt> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.settings.concurrency)
                .map(|_| scope.spawn(|| server.complete(&request)))
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle.join().unwrap_or_else(|_| server::Attempt {
                        latency_ms: 0,
                        result: Err(ServerError::BadResponse {
                            url: server.base(),
                            reason: "the request thread panicked".to_string(),
                        }),
                    })
                })
                .collect()
        });
        let reading = self.read_memory();
        let mut outcome = Ok(());
        for (slot, attempt) in attempts.into_iter().enumerate() {
            let slot = u32::try_from(slot).unwrap_or(u32::MAX);
            let result = self.record(
                repeat,
                Phase::Concurrent,
                round,
                Some(slot),
                chars,
                attempt,
                &reading,
            );
            if result.is_err() && outcome.is_ok() {
                outcome = result;
            }
        }
        if let Some(progress) = &self.progress {
            progress.inc(1);
        }
        outcome
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one request's coordinates and results"
    )]
    fn record(
        &mut self,
        repeat: u32,
        phase: Phase,
        index: u32,
        slot: Option<u32>,
        chars: u64,
        attempt: server::Attempt,
        reading: &Reading,
    ) -> Result<(), Stop> {
        let (status, completion_tokens, error) = match &attempt.result {
            Ok(completion) => (Some(completion.status), completion.completion_tokens, None),
            Err(error) => (error.status(), None, Some(error.to_string())),
        };
        self.requests.push(ProbeRequest {
            repeat,
            phase,
            index,
            slot,
            prompt_chars: chars,
            status,
            latency_ms: attempt.latency_ms,
            memory_bytes: reading.memory,
            host_memory_bytes: None,
            kv_cache_usage: reading.kv_cache_usage,
            preemptions_total: reading.preemptions_total,
            completion_tokens,
            error,
        });
        match attempt.result {
            Ok(_) => {
                self.consecutive_failures = 0;
                Ok(())
            }
            Err(error) => {
                self.consecutive_failures += 1;
                let refused_key = matches!(error.status(), Some(401 | 403));
                if refused_key || self.consecutive_failures >= MAX_CONSECUTIVE_FAILURES {
                    Err(Stop::Server(error))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Memory, then the server's own metrics (KV-cache usage, preemptions) when it has them.
    fn read_memory(&mut self) -> Reading {
        let (memory, memory_samples) = match self.memory.read() {
            Ok((bytes, samples)) => (Some(bytes), samples),
            Err(reason) => {
                if self.memory_error.is_none() {
                    self.limitations
                        .push(format!("memory could not be read: {reason}"));
                    self.memory_error = Some(reason);
                }
                (None, Vec::new())
            }
        };
        // The server's own metrics first; the memory source's scrape when the server has none
        // (never both: they may be the same endpoint).
        let mut samples = Vec::new();
        if let Some(scrape) = &self.metrics {
            match server::fetch_text(&scrape.url, scrape.timeout)
                .map_err(|error| error.to_string())
                .map(|text| prometheus::parse_lenient(&text).0)
            {
                Ok(parsed) => samples = parsed,
                Err(reason) => {
                    self.limitations.push(format!(
                        "no server metrics (KV-cache usage, preemptions): {reason}"
                    ));
                    self.metrics = None;
                }
            }
        }
        let mut rejected = Vec::new();
        let mut kv_cache_usage = first_metric(
            &samples,
            KV_USAGE_METRICS,
            &mut self.metrics_seen,
            Gauge::Fraction,
            &mut rejected,
        );
        let mut preemptions_total = first_metric(
            &samples,
            PREEMPTION_METRICS,
            &mut self.metrics_seen,
            Gauge::Count,
            &mut rejected,
        );
        if kv_cache_usage.is_none() && preemptions_total.is_none() {
            kv_cache_usage = first_metric(
                &memory_samples,
                KV_USAGE_METRICS,
                &mut self.metrics_seen,
                Gauge::Fraction,
                &mut rejected,
            );
            preemptions_total = first_metric(
                &memory_samples,
                PREEMPTION_METRICS,
                &mut self.metrics_seen,
                Gauge::Count,
                &mut rejected,
            );
        }
        for message in rejected {
            if !self.limitations.contains(&message) {
                self.limitations.push(message);
            }
        }
        if let Some(count) = preemptions_total {
            self.first_preemptions.get_or_insert(count);
            self.last_preemptions = Some(count);
        }
        Reading {
            memory,
            kv_cache_usage,
            preemptions_total,
        }
    }
}

/// What values a metric can take; anything else is impossible and ignored (issue 14: a
/// `kv_cache_usage_perc` of 1e308 was accepted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gauge {
    /// A usage fraction, 0 to 1 (vLLM's `*_usage_perc` gauges are fractions despite the name).
    Fraction,
    /// A count: finite and not negative.
    Count,
}

impl Gauge {
    fn allows(self, value: f64) -> bool {
        match self {
            Gauge::Fraction => (0.0..=1.0).contains(&value),
            Gauge::Count => value.is_finite() && value >= 0.0,
        }
    }

    fn range(self) -> &'static str {
        match self {
            Gauge::Fraction => "the 0–1 it can take",
            Gauge::Count => "a count (finite, not negative)",
        }
    }
}

/// The sum over series of the first of `names` present; `None` (with a sentence in
/// `rejected`) when a series holds a value the metric cannot take.
fn first_metric(
    samples: &[prometheus::Sample],
    names: &[&str],
    seen: &mut std::collections::BTreeSet<String>,
    gauge: Gauge,
    rejected: &mut Vec<String>,
) -> Option<f64> {
    names.iter().find_map(|name| {
        let picked = Selector::name(name).select(samples);
        if picked.is_empty() {
            return None;
        }
        seen.insert((*name).to_string());
        if let Some(bad) = picked.iter().find(|sample| !gauge.allows(sample.value)) {
            rejected.push(format!(
                "the server's `{name}` read {:?}, outside {}: ignored",
                bad.value,
                gauge.range()
            ));
            return None;
        }
        Some(picked.iter().map(|s| s.value).sum())
    })
}

/// A gauge value × its unit as bytes; `None` for NaN, infinities, negative values and values
/// past `u64::MAX`, which `as u64` would turn into 0 or `u64::MAX` silently.
fn gauge_bytes(value: f64, scale: f64) -> Option<Bytes> {
    let bytes = (value * scale).round();
    // 2^64 is exact in f64; NaN and the infinities fall outside the range too.
    (0.0..18_446_744_073_709_551_616.0)
        .contains(&bytes)
        .then_some(Bytes(bytes as u64))
}

/// Where memory is read.
enum MemoryReader {
    Nvml {
        gpu: Box<dyn GpuSource>,
        target: NvmlTarget,
        description: String,
        source: Source,
    },
    Prometheus {
        url: String,
        selector: Selector,
        scale: f64,
        description: String,
        timeout: Duration,
        /// Most series the selector matched in one scrape (summed when more than one).
        series: usize,
    },
    Replay {
        path: PathBuf,
        values: Vec<u64>,
        next: usize,
    },
}

enum NvmlTarget {
    Devices(Vec<String>),
    Process(u32),
}

impl MemoryReader {
    fn open(args: &ProbeArgs, limitations: &mut Vec<String>) -> anyhow::Result<MemoryReader> {
        let (url, selector) = match &args.memory_from {
            MemorySpec::Nvml => return open_nvml(args, limitations),
            MemorySpec::Prometheus { url, selector } => (url, selector),
            MemorySpec::Replay { path } => {
                if args.gpu.is_some() || args.pid.is_some() {
                    limitations
                        .push("`--gpu` and `--pid` apply to `--memory-from nvml` only".to_string());
                }
                // A list of byte counts: 64 MiB is millions of readings.
                let bytes = crate::source::file::read_limited(path, 64 << 20)
                    .with_context(|| format!("failed to read `{}`", path.display()))?;
                let values: Vec<u64> = serde_json::from_slice(&bytes).with_context(|| {
                    format!("`{}` is not a JSON list of byte counts", path.display())
                })?;
                return Ok(MemoryReader::Replay {
                    path: path.clone(),
                    values,
                    next: 0,
                });
            }
        };
        if args.gpu.is_some() || args.pid.is_some() {
            limitations.push("`--gpu` and `--pid` apply to `--memory-from nvml` only".to_string());
        }
        let mib = selector.name.starts_with("DCGM_FI_DEV_FB_");
        let description = format!(
            "`{selector}` at {} ({})",
            server::redact_url(url),
            if mib { "MiB × 2^20" } else { "taken as bytes" }
        );
        Ok(MemoryReader::Prometheus {
            url: url.clone(),
            selector: selector.clone(),
            scale: if mib { (1u64 << 20) as f64 } else { 1.0 },
            description,
            timeout: Duration::from_secs(args.request_timeout.min(10)),
            series: 0,
        })
    }

    /// With Prometheus, a sentence when the selector matched several series, which are summed
    /// (dcgm-exporter has one per GPU: other jobs' memory then moves the reading).
    fn summed_series(&self) -> Option<String> {
        match self {
            MemoryReader::Prometheus {
                selector, series, ..
            } if *series > 1 => Some(format!(
                "`{selector}` matched {series} series (one per GPU?); their sum was read, so memory of other GPUs and jobs moves it: pick one with a label, e.g. `#{}{{gpu=\"0\"}}`",
                selector.name
            )),
            _ => None,
        }
    }

    /// One reading: bytes, and the samples of the scrape when the source is Prometheus.
    fn read(&mut self) -> Result<(Bytes, Vec<prometheus::Sample>), String> {
        match self {
            MemoryReader::Nvml { gpu, target, .. } => match target {
                NvmlTarget::Devices(uuids) => {
                    let mut total = Bytes::ZERO;
                    for uuid in uuids.iter() {
                        total = total + gpu.memory(uuid).map_err(|e| e.to_string())?.used_bytes;
                    }
                    Ok((total, Vec::new()))
                }
                NvmlTarget::Process(pid) => {
                    let inventory = gpu.inventory().map_err(|e| e.to_string())?;
                    let processes: Vec<_> = inventory
                        .devices
                        .iter()
                        .flat_map(|device| device.processes.iter())
                        .filter(|process| process.pid == *pid)
                        .collect();
                    if processes.is_empty() {
                        return Err(format!("process {pid} is not on any GPU NVML sees"));
                    }
                    let mut total = Bytes::ZERO;
                    for process in processes {
                        total = total
                            + process.used_bytes.ok_or_else(|| {
                                process.unavailable_reason.clone().unwrap_or_else(|| {
                                    format!("NVML gives no memory figure for process {pid}")
                                })
                            })?;
                    }
                    Ok((total, Vec::new()))
                }
            },
            MemoryReader::Prometheus {
                url,
                selector,
                scale,
                timeout,
                series,
                ..
            } => {
                let text = server::fetch_text(url, *timeout).map_err(|e| e.to_string())?;
                let (samples, errors) = prometheus::parse_lenient(&text);
                let picked = selector.select(&samples);
                if picked.is_empty() {
                    let unparsed = match errors.first() {
                        Some(first) => format!(
                            " ({} lines could not be parsed, the first: {first})",
                            errors.len()
                        ),
                        None => String::new(),
                    };
                    return Err(format!("no `{selector}` in the metrics{unparsed}"));
                }
                *series = (*series).max(picked.len());
                let sum: f64 = picked.iter().map(|s| s.value).sum();
                let bytes = gauge_bytes(sum, *scale)
                    .ok_or_else(|| format!("`{selector}` is {sum}, not a memory size"))?;
                Ok((bytes, samples))
            }
            MemoryReader::Replay { path, values, next } => {
                let value = values.get(*next).copied().ok_or_else(|| {
                    format!("`{}` has only {} readings", path.display(), values.len())
                })?;
                *next += 1;
                Ok((Bytes(value), Vec::new()))
            }
        }
    }

    fn info(&self) -> MemorySourceInfo {
        match self {
            MemoryReader::Nvml {
                description,
                source,
                ..
            } => MemorySourceInfo {
                kind: "nvml".to_string(),
                source: *source,
                description: description.clone(),
            },
            MemoryReader::Prometheus { description, .. } => MemorySourceInfo {
                kind: "prometheus".to_string(),
                source: Source::Container,
                description: description.clone(),
            },
            MemoryReader::Replay { path, .. } => MemorySourceInfo {
                kind: "replay".to_string(),
                source: Source::Replay,
                description: format!("byte counts replayed from `{}`", path.display()),
            },
        }
    }
}

fn open_nvml(args: &ProbeArgs, limitations: &mut Vec<String>) -> anyhow::Result<MemoryReader> {
    let mut gpu = open_gpu_source()?;
    let inventory = gpu.inventory().context("cannot list GPUs")?;
    // NVML, or a recording replayed through `OOMDOC_GPU_FROM`.
    let source = inventory.source.unwrap_or(Source::Nvml);
    if let Some(pid) = args.pid {
        refuse_static_replay()?;
        return Ok(MemoryReader::Nvml {
            gpu,
            target: NvmlTarget::Process(pid),
            description: format!(
                "used GPU memory of process {pid} ({}, per process)",
                source.label()
            ),
            source,
        });
    }
    let devices: Vec<&crate::model::machine::Device> = match &args.gpu {
        Some(wanted) => {
            let device = inventory
                .devices
                .iter()
                .find(|d| d.uuid == *wanted || d.index.to_string() == *wanted)
                .or_else(|| {
                    let matching: Vec<_> = inventory
                        .devices
                        .iter()
                        .filter(|d| d.uuid.starts_with(wanted.as_str()))
                        .collect();
                    (matching.len() == 1).then(|| matching[0])
                })
                .ok_or_else(|| {
                    HintedError::new(
                        format!("no GPU `{wanted}`"),
                        "list GPUs with `oomdoc gpus`; pass a UUID, a unique UUID prefix or an NVML index",
                    )
                })?;
            vec![device]
        }
        None => inventory.devices.iter().collect(),
    };
    if devices.is_empty() {
        anyhow::bail!("NVML sees no GPU");
    }
    if devices.len() > 1 {
        limitations.push(format!(
            "used memory summed over {} GPUs; pick one with `--gpu` or the server with `--pid`",
            devices.len()
        ));
    }
    refuse_static_replay()?;
    let uuids: Vec<String> = devices.iter().map(|d| d.uuid.clone()).collect();
    let description = format!("used memory of {} ({})", uuids.join(", "), source.label());
    Ok(MemoryReader::Nvml {
        gpu,
        target: NvmlTarget::Devices(uuids),
        description,
        source,
    })
}

/// NVML, or the replay file named by `OOMDOC_GPU_FROM` (a recording made on a GPU host).
/// The GPU error's own hint names `--gpu-from`, which `probe` does not take: its hint here
/// names what `probe` offers instead (issue 16).
fn open_gpu_source() -> anyhow::Result<Box<dyn GpuSource>> {
    let replay = crate::source::gpu::replay_path(None);
    crate::source::gpu::open(replay.as_deref()).map_err(|error| {
        HintedError::new(
            format!("cannot read GPU memory: {error}"),
            "read memory another way with `--memory-from prometheus:URL` (e.g. dcgm-exporter on the GPU host) or `--memory-from replay:FILE`, or set `OOMDOC_GPU_FROM` to an `oomdoc gpus --record` recording with memory samples",
        )
        .into()
    })
}

/// A static replay (`OOMDOC_GPU_FROM` naming an `nvidia-smi -q -x` file, or a recording
/// without samples) is one moment: no timeline, and never a `plateau` (issue 16).
fn refuse_static_replay() -> anyhow::Result<()> {
    let Some(path) = crate::source::gpu::replay_path(None) else {
        return Ok(());
    };
    let replay = crate::source::gpu::ReplayGpu::open(&path)?;
    if replay.is_static() {
        return Err(HintedError::new(
            format!(
                "`{}` (`OOMDOC_GPU_FROM`) is a static source: one moment of GPU memory, not a series of readings, so no growth verdict can come from it",
                path.display()
            ),
            "run `probe` on the GPU host (NVML), read a live exporter with `--memory-from prometheus:URL`, or replay byte counts with `--memory-from replay:FILE`",
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_14_impossible_gauges_are_ignored() {
        // See: #14. `kv_cache_usage` 1e308 was accepted.
        let samples = prometheus::parse(
            "vllm:kv_cache_usage_perc{engine=\"0\"} 1e308\nvllm:num_preemptions_total -3\n",
        )
        .unwrap();
        let mut seen = std::collections::BTreeSet::new();
        let mut rejected = Vec::new();
        let usage = first_metric(
            &samples,
            KV_USAGE_METRICS,
            &mut seen,
            Gauge::Fraction,
            &mut rejected,
        );
        let preemptions = first_metric(
            &samples,
            PREEMPTION_METRICS,
            &mut seen,
            Gauge::Count,
            &mut rejected,
        );
        assert_eq!((usage, preemptions), (None, None));
        assert_eq!(
            rejected,
            [
                "the server's `vllm:kv_cache_usage_perc` read 1e308, outside the 0–1 it can take: ignored",
                "the server's `vllm:num_preemptions_total` read -3.0, outside a count (finite, not negative): ignored"
            ]
        );
        for (value, allowed) in [
            (0.0, true),
            (1.0, true),
            (0.25, true),
            (-0.01, false),
            (1.5, false),
            (f64::NAN, false),
            (f64::INFINITY, false),
        ] {
            assert_eq!(Gauge::Fraction.allows(value), allowed, "{value}");
        }
        let fine = prometheus::parse("vllm:kv_cache_usage_perc 0.5\n").unwrap();
        assert_eq!(
            first_metric(
                &fine,
                KV_USAGE_METRICS,
                &mut seen,
                Gauge::Fraction,
                &mut rejected
            ),
            Some(0.5)
        );
    }

    #[test]
    fn long_input_fits_the_context() {
        assert_eq!(long_prompt_chars(Some(4096), 16), 2040);
        assert_eq!(long_prompt_chars(Some(131_072), 16), MAX_LONG_PROMPT_CHARS);
        assert_eq!(long_prompt_chars(Some(100), 16), SHORT_PROMPT_CHARS * 2);
        assert_eq!(long_prompt_chars(None, 16), DEFAULT_LONG_PROMPT_CHARS);
        assert_eq!(prompt(5), "The q");
        assert_eq!(prompt(200).len(), 200);
    }

    #[test]
    fn gauge_values_that_are_not_sizes() {
        let mib = (1u64 << 20) as f64;
        assert_eq!(gauge_bytes(1000.0, mib), Some(Bytes::from_mib(1000)));
        assert_eq!(gauge_bytes(f64::NAN, mib), None);
        assert_eq!(gauge_bytes(f64::INFINITY, mib), None);
        assert_eq!(gauge_bytes(-1.0, mib), None);
        assert_eq!(gauge_bytes(1e300, mib), None);
        assert_eq!(gauge_bytes(2f64.powi(44), mib), None);
        assert_eq!(gauge_bytes(2f64.powi(43), mib), Some(Bytes(1 << 63)));
    }
}
