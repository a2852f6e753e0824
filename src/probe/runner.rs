//! The protocol runner of `oomdoc probe`: sends the requests of a plan (`probe::plan`) to an
//! OpenAI-compatible server and reads memory after each one through a [`MemorySource`], with
//! the server's own metrics (KV-cache usage, preemptions) when it exposes them.
//!
//! Bounded: every request has a timeout, the protocol a deadline; three failed requests in a
//! row (server gone, errors) stop it.

use std::time::{Duration, Instant};

use super::memory::MemorySource;
use super::plan::PlannedRequest;
use crate::model::probe::{ProbePhase, ProbeRequest, ProbeSettings};
use crate::model::Bytes;
use crate::parse::prometheus::{self, Selector};
use crate::source::launch::process_tree_rss;
use crate::source::server::{
    self, CompletionRequest, Endpoint, HttpServer, InferenceServer, ServerError,
};

/// Three failed requests in a row: the server is gone or broken; stop.
const MAX_CONSECUTIVE_FAILURES: u32 = 3;
/// Short input: one sentence.
pub(crate) const SHORT_PROMPT_CHARS: u64 = 64;
/// Long input when the context is unknown.
const DEFAULT_LONG_PROMPT_CHARS: u64 = 2048;
/// Longest long input: enough to move activation and KV memory, quick to prefill.
const MAX_LONG_PROMPT_CHARS: u64 = 8192;
const FILLER: &str = "The quick brown fox jumps over the lazy dog while memory is measured. ";

/// Why the protocol ended early.
#[derive(Debug)]
pub enum Stop {
    /// `--time-limit` (seconds) reached.
    TimeLimit(u64),
    /// The server failed: three failed requests in a row, or a refused key.
    Server(ServerError),
    /// The person asked to stop (Ctrl-C), in a soak run.
    Interrupted,
}

impl Stop {
    /// The reason in words.
    pub fn text(&self) -> String {
        match self {
            Stop::TimeLimit(seconds) => format!("time limit of {seconds} s reached"),
            Stop::Server(error) => error.to_string(),
            Stop::Interrupted => "interrupted (Ctrl-C)".to_string(),
        }
    }
}

/// Many times the short input, within the context: half the tokens left after `max_tokens`,
/// counted as characters (a character is at most one token for byte-level tokenizers).
pub(crate) fn long_prompt_chars(context_tokens: Option<u64>, max_tokens: u32) -> u64 {
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

pub(crate) struct MetricsScrape {
    pub(crate) url: String,
    pub(crate) timeout: Duration,
}

/// Metrics of interest on a server's `/metrics` (vLLM names; older releases in brackets).
const KV_USAGE_METRICS: &[&str] = &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"];
const PREEMPTION_METRICS: &[&str] = &["vllm:num_preemptions_total", "vllm:num_preemptions"];

/// Sends the plan's requests and reads memory after each (the protocol as it runs).
pub(crate) struct Runner<'a> {
    pub(crate) server: &'a HttpServer,
    pub(crate) endpoint: Endpoint,
    pub(crate) settings: &'a ProbeSettings,
    pub(crate) memory: &'a mut dyn MemorySource,
    /// The server's process when oomdoc launched it: its process-tree RSS is read beside GPU
    /// memory after each request.
    pub(crate) host_pid: Option<u32>,
    pub(crate) metrics: Option<MetricsScrape>,
    pub(crate) requests: Vec<ProbeRequest>,
    pub(crate) consecutive_failures: u32,
    pub(crate) deadline: Instant,
    pub(crate) progress: Option<indicatif::ProgressBar>,
    pub(crate) limitations: Vec<String>,
    pub(crate) metrics_seen: std::collections::BTreeSet<String>,
    pub(crate) first_preemptions: Option<f64>,
    pub(crate) last_preemptions: Option<f64>,
    /// Why the first failed memory reading failed (said once as a limitation; before the
    /// first request it ends the probe).
    pub(crate) memory_error: Option<String>,
    /// Set by a Ctrl-C handler in a soak run: the plan stops at the next request.
    pub(crate) interrupted: Option<&'a std::sync::atomic::AtomicBool>,
}

/// What one reading after a request gives.
pub(crate) struct Reading {
    pub(crate) memory: Option<Bytes>,
    host: Option<Bytes>,
    kv_cache_usage: Option<f64>,
    preemptions_total: Option<f64>,
}

impl Runner<'_> {
    /// Sends every entry of `plan` in order; `Err` says why it stopped early.
    pub(crate) fn run_plan(&mut self, plan: &[PlannedRequest]) -> Result<(), Stop> {
        for entry in plan {
            if entry.parallel > 1 {
                self.concurrent(entry.repeat, entry.index, entry.prompt_chars)?;
            } else {
                self.sequential(entry.repeat, entry.phase, entry.index, entry.prompt_chars)?;
            }
        }
        Ok(())
    }

    fn check_deadline(&self) -> Result<(), Stop> {
        if self
            .interrupted
            .is_some_and(|flag| flag.load(std::sync::atomic::Ordering::SeqCst))
        {
            return Err(Stop::Interrupted);
        }
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
        phase: ProbePhase,
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
            progress.set_message(ProbePhase::Concurrent.name());
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
                ProbePhase::Concurrent,
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
        phase: ProbePhase,
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
            host_memory_bytes: reading.host,
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
    pub(crate) fn read_memory(&mut self) -> Reading {
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
            host: self.host_pid.and_then(process_tree_rss),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::memory::gauge_bytes;

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
