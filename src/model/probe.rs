//! What `oomdoc probe` measured against a running server, and what the growth analysis
//! concluded.
//!
//! Field names are a JSON contract (`oomdoc probe --json`): `verdict`, `requests` (each with
//! `phase`, `index`, `prompt_chars`, `status`, `latency_ms`, `memory_bytes`), `trend`,
//! `plateau_bytes`, `limitations`. Other fields may be added; none renamed.

use serde::{Deserialize, Serialize};

use super::{Bytes, Source};

/// The phases of the protocol, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbePhase {
    /// First requests: graphs, caches and allocator pools warm up. Recorded, never judged.
    Warmup,
    /// Ten identical short requests.
    Identical,
    /// Ten requests alternating short and long inputs.
    Alternating,
    /// Rounds of N parallel requests (`--concurrency N`).
    Concurrent,
}

impl ProbePhase {
    /// The name used in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            ProbePhase::Warmup => "warmup",
            ProbePhase::Identical => "identical",
            ProbePhase::Alternating => "alternating",
            ProbePhase::Concurrent => "concurrent",
        }
    }
}

/// The verdict of the growth test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrowthVerdict {
    /// Memory reached a level and stayed there through repeated inputs: not a leak.
    Plateau,
    /// Memory kept increasing through repetitions of the same inputs.
    Growth,
    /// Too few points, too much noise, too many failed requests, or a weak trend.
    Inconclusive,
    /// GPU memory settled, but the server's host memory (resident set of its process tree)
    /// kept increasing through repetitions of the same inputs.
    #[serde(rename = "growth_host_memory")]
    HostGrowth,
}

impl GrowthVerdict {
    /// The name used in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            GrowthVerdict::Plateau => "plateau",
            GrowthVerdict::Growth => "growth",
            GrowthVerdict::Inconclusive => "inconclusive",
            GrowthVerdict::HostGrowth => "growth (host memory)",
        }
    }
}

/// One request of the protocol and the memory read after it completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRequest {
    /// Which repetition of the protocol (0-based; `--repeat K` gives 0..K; absent, 0, in
    /// documents written before `--repeat`).
    #[serde(default)]
    pub repeat: u32,
    /// The phase.
    pub phase: ProbePhase,
    /// Position in the phase (0-based). In the concurrent phase, position of the round.
    pub index: u32,
    /// In the concurrent phase, which of the parallel requests of the round (0-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// Length of the prompt in characters.
    pub prompt_chars: u64,
    /// HTTP status; `None` when no answer came (refused, reset, timed out).
    pub status: Option<u16>,
    /// Wall time of the request in milliseconds.
    pub latency_ms: u64,
    /// Memory read after the request completed (after the whole round when concurrent);
    /// `None` when the memory source failed.
    pub memory_bytes: Option<Bytes>,
    /// Resident set of the server's process tree read beside GPU memory (`/proc/PID/status`
    /// `VmRSS`, summed over the process and its descendants), when the server was launched or
    /// its PID is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_memory_bytes: Option<Bytes>,
    /// The server's KV-cache usage (0–1) read beside memory (vLLM `vllm:kv_cache_usage_perc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage: Option<f64>,
    /// The server's preemption counter read beside memory (`vllm:num_preemptions_total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptions_total: Option<f64>,
    /// Completion tokens the server reported, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// What went wrong with this request (never contains the API key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Mann–Kendall test and Theil–Sen slope over one set of samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrendTest {
    /// Number of samples used.
    pub points: usize,
    /// Number of blocks pairs were taken within (1 for the naive test).
    pub blocks: usize,
    /// Mann–Kendall S: concordant minus discordant pairs.
    pub mann_kendall_s: i64,
    /// Variance of S under "no trend", with the tie correction.
    pub variance: f64,
    /// Normal score `(S − sign S) / √variance`.
    pub z: f64,
    /// One-sided p-value for an increasing trend.
    pub p_value: f64,
    /// Theil–Sen slope: median of pairwise slopes, bytes per request.
    pub slope_bytes_per_request: f64,
}

/// The numbers behind the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// How the evaluation window was chosen and tested, in words.
    pub method: String,
    /// The test on the evaluation window (blocked by repeat, phase and input size).
    pub window: Option<TrendTest>,
    /// The same test on the later half of the window (readings after its median position,
    /// blocks kept): growth must go on there.
    pub late: Option<TrendTest>,
    /// The same test on every non-warm-up sample as one series, for contrast: a one-time
    /// step makes it report growth.
    pub naive: Option<TrendTest>,
    /// Requests spanned by the window, first to last, in protocol order.
    pub window_span_requests: u64,
    /// Theil–Sen slope × span: the growth the window shows, bytes.
    pub window_growth_bytes: f64,
    /// Requests spanned by the later half.
    pub late_span_requests: u64,
    /// Theil–Sen slope × span of the later half, bytes.
    pub late_growth_bytes: f64,
    /// Robust noise: 1.4826 × MAD of successive differences within blocks / √2, bytes.
    pub noise_bytes: f64,
    /// Smallest non-zero change between successive readings of a block (the source's quantisation), bytes.
    pub quantum_bytes: Option<u64>,
    /// Window growth needed to call `growth`: max(2 MiB, quantum, 3 × noise), bytes.
    pub min_growth_bytes: f64,
    /// Smallest slope this window could detect (3 standard errors), bytes per request.
    pub detectable_slope_bytes_per_request: Option<f64>,
    /// Slope of interest: a leak at least this fast must not be missed, bytes per request.
    pub leak_of_interest_bytes_per_request: f64,
    /// p-value below which the trend counts as significant.
    pub alpha: f64,
    /// Why this verdict, in one sentence.
    pub reason: String,
    /// The same tests per phase (identical, alternating, concurrent): a leak confined to one
    /// phase (e.g. only while long inputs alternate) is growth even when the other phases are
    /// flat and the pooled slope is zero.
    #[serde(default)]
    pub phases: Vec<PhaseTrend>,
    /// Each repeat alone: its trend after warm-up and its levels at the same protocol points.
    /// Growth must show in every repeat; a plateau must come back at the same levels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatTrend>,
    /// Largest spread between repeats of the level at one protocol point, bytes, and the
    /// point (`after_warmup`, `after_identical`, `after_alternating`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level_spread: Option<LevelSpread>,
    /// Slowest leak a `plateau` verdict rules out here, bytes per request: [`Self::leak_of_interest_bytes_per_request`]
    /// when the readings are quiet enough, else the coarser limit noisy sources are held to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_bytes_per_request: Option<f64>,
    /// When the verdict is `inconclusive` for noise: how many repeats would decide it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats_needed: Option<u32>,
    /// Least squares with a level per repeat, a step at each input's first appearance and an
    /// offset per input size: the test used when noise hides [`Self::leak_of_interest_bytes_per_request`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regression: Option<StepRegression>,
    /// The same analysis on host memory (the server's process-tree RSS), when it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<Box<HostTrend>>,
}

/// A least-squares slope after removing per-repeat levels, one-time steps and input-size
/// offsets (ordinary least squares on the residuals, Frisch–Waugh–Lovell).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRegression {
    /// Readings used (every reading after warm-up, step readings included).
    pub points: usize,
    /// Terms removed before the slope: repeat levels, steps, size offsets.
    pub terms: usize,
    /// Slope, bytes per request.
    pub slope_bytes_per_request: f64,
    /// Its standard error, bytes per request.
    pub standard_error: f64,
    /// One-sided p-value for an increasing trend (normal approximation).
    pub p_value: f64,
    /// Slope of each repeat alone, bytes per request, in repeat order.
    pub repeat_slopes: Vec<f64>,
    /// Slope over the later half of the readings (at or after the median position).
    pub late_slope_bytes_per_request: Option<f64>,
}

/// The growth test on host memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostTrend {
    /// `plateau`, `growth` or `inconclusive`, judged on host memory alone.
    pub verdict: GrowthVerdict,
    /// The numbers behind it.
    pub trend: Trend,
    /// The level host memory settled at, when it did.
    pub plateau_bytes: Option<Bytes>,
}

/// One repeat of the protocol on its own (repeatable from a clean process start).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatTrend {
    /// Which repeat (0-based).
    pub repeat: u32,
    /// The trend test on this repeat's blocks (after warm-up, steps excluded).
    pub test: Option<TrendTest>,
    /// Median of the first half of the identical phase's readings.
    pub after_warmup_bytes: Option<Bytes>,
    /// Median of the second half of the identical phase's readings.
    pub after_identical_bytes: Option<Bytes>,
    /// Median of the second half of the alternating phase's readings.
    pub after_alternating_bytes: Option<Bytes>,
    /// One-time rises at new inputs in this repeat.
    pub steps: usize,
}

/// The widest disagreement between repeats at one protocol point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelSpread {
    /// `after_warmup`, `after_identical` or `after_alternating`.
    pub point: String,
    /// Highest minus lowest level at that point, bytes.
    pub spread_bytes: u64,
    /// Spread above which levels are called different: 4 × noise, at least 2 MiB, bytes.
    pub tolerance_bytes: u64,
    /// The level at that point rose from each repeat to the next.
    pub rising: bool,
}

/// The trend tests restricted to the readings of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseTrend {
    /// The phase.
    pub phase: ProbePhase,
    /// The test on this phase's blocks of the window.
    pub test: TrendTest,
    /// Requests spanned by this phase's readings, first to last.
    pub span_requests: u64,
    /// Theil–Sen slope × span, bytes.
    pub growth_bytes: f64,
    /// The test on the later half of this phase's readings.
    pub late: Option<TrendTest>,
    /// Requests spanned by the later half.
    pub late_span_requests: u64,
    /// Theil–Sen slope × span of the later half, bytes.
    pub late_growth_bytes: f64,
}

/// A one-time rise at the first appearance of a new input (size or concurrency).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Repetition.
    pub repeat: u32,
    /// Phase of the protocol.
    pub phase: ProbePhase,
    /// Position in the phase.
    pub index: u32,
    /// Prompt size that appeared for the first time.
    pub prompt_chars: u64,
    /// Memory before it (the previous reading).
    pub before_bytes: Bytes,
    /// Memory after it.
    pub after_bytes: Bytes,
}

/// Warm-up and the levels around it: a result even when there is no leak.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// Memory before the first request.
    pub baseline_bytes: Option<Bytes>,
    /// Memory after the last warm-up request.
    pub after_warmup_bytes: Option<Bytes>,
    /// `after_warmup − baseline` (can be negative), bytes.
    pub warmup_growth_bytes: Option<i64>,
    /// Memory at the end of the protocol.
    pub final_bytes: Option<Bytes>,
    /// `final − baseline`, bytes.
    pub total_growth_bytes: Option<i64>,
}

/// Where memory readings came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemorySourceInfo {
    /// `nvml`, `prometheus` or `replay`.
    pub kind: String,
    /// The source of each number.
    pub source: Source,
    /// What exactly was read, e.g. `used memory of GPU-… (NVML)` or `DCGM_FI_DEV_FB_USED at http://…`.
    pub description: String,
}

/// The protocol as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeSettings {
    /// `completions` or `chat`.
    pub endpoint: String,
    /// Model name sent with each request.
    pub model: String,
    /// Where the model name came from: `command line` or `/v1/models`.
    pub model_from: String,
    /// Context length in tokens the server reported, when it did.
    pub context_tokens: Option<u64>,
    /// Warm-up requests.
    pub warmup_requests: u32,
    /// Requests in the identical and alternating phases.
    pub phase_requests: u32,
    /// Parallel requests per concurrent round; 0 or 1 means no concurrent phase.
    pub concurrency: u32,
    /// Rounds in the concurrent phase.
    pub concurrent_rounds: u32,
    /// Repetitions of the whole protocol.
    pub repeat: u32,
    /// Short prompt, characters.
    pub short_prompt_chars: u64,
    /// Long prompt, characters.
    pub long_prompt_chars: u64,
    /// `max_tokens` asked for.
    pub max_tokens: u32,
    /// Per-request timeout, seconds.
    pub request_timeout_s: u64,
    /// Limit on the whole protocol, seconds.
    pub time_limit_s: u64,
}

/// The report of `oomdoc probe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// `plateau`, `growth` or `inconclusive`.
    pub verdict: GrowthVerdict,
    /// The server's URL (without credentials).
    pub url: String,
    /// The protocol settings.
    pub settings: ProbeSettings,
    /// Where memory was read.
    pub memory_source: MemorySourceInfo,
    /// Every request, in the order it completed.
    pub requests: Vec<ProbeRequest>,
    /// The numbers behind the verdict.
    pub trend: Trend,
    /// The level memory settled at (median of the last phase), when the verdict is `plateau`.
    pub plateau_bytes: Option<Bytes>,
    /// Warm-up and overall levels.
    pub warmup: Warmup,
    /// One-time rises at new inputs.
    pub steps: Vec<Step>,
    /// Metrics names the metrics endpoint exposed that oomdoc records (sorted).
    pub metrics_seen: Vec<String>,
    /// Preemptions the server counted during the protocol (last − first counter reading).
    pub preemptions: Option<f64>,
    /// Requests that failed.
    pub failed_requests: usize,
    /// Total wall time of the protocol, milliseconds.
    pub elapsed_ms: u64,
    /// What could not be measured, and why the verdict may be weaker than it looks.
    pub limitations: Vec<String>,
    /// With `--launch`: each start of the server (one per repeat), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launches: Vec<LaunchRecord>,
    /// With `--duration`: the soak run's compact levels and whole-run verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<SoakAnalysis>,
}

/// One start of the server by `probe --launch`, from a clean process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchRecord {
    /// Repeat, from 0 (its files are in `repeat-N/`, N = repeat + 1).
    pub repeat: u32,
    /// Directory of this repeat's files (server log `log.txt`, probe document `probe.json`),
    /// relative to the directory of the verdict's `probe.json`.
    pub directory: String,
    /// Server process id (also its process group).
    pub pid: u32,
    /// Time from start until the server answered, ms (a slow disk or a slow load shows here).
    pub time_to_ready_ms: u64,
    /// Which path answered first: `/health` or `/v1/models`.
    pub ready_path: String,
    /// How it was stopped: `SIGTERM`, `SIGKILL after N ms of SIGTERM`, `already exited`.
    pub stop: String,
    /// How it exited (`exit code 0`, `signal 9 (SIGKILL)`).
    pub exit: String,
    /// Time from the stop request to the exit, ms.
    pub stop_ms: u64,
    /// The server had already exited on its own (a crash during the protocol).
    pub exited_on_its_own: bool,
    /// The recorder's `run.json` of this start (preflight, memory timeline, phases), relative
    /// to the directory of the verdict's `probe.json`.
    pub run_record: Option<String>,
    /// Whether GPU memory came back after the stop: `released`, `held`, `not measured`,
    /// `unreadable`.
    pub gpu_release: String,
    /// The release check in words (time waited, bytes still held, or why not measured).
    pub gpu_release_detail: String,
    /// Server process-tree RSS when it became ready, bytes (`/proc`).
    pub host_memory_at_ready_bytes: Option<Bytes>,
}

/// One slot of a soak run: the level of one or more consecutive protocol cycles, kept instead
/// of their readings so that a run of hours holds a bounded number of numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakSlot {
    /// First cycle in the slot (0-based).
    pub first_cycle: u32,
    /// Cycles merged into the slot.
    pub cycles: u32,
    /// Requests sent before the slot's first cycle ended, first and last of the slot.
    pub first_request: u64,
    /// Requests sent when the slot's last cycle ended.
    pub last_request: u64,
    /// Memory readings summarised.
    pub readings: u64,
    /// Mean over the slot's cycles of each cycle's median reading after warm-up, bytes.
    pub level_bytes: f64,
    /// Lowest reading in the slot, bytes.
    pub min_bytes: u64,
    /// Highest reading in the slot, bytes.
    pub max_bytes: u64,
    /// The same level for host memory (process-tree RSS), when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_level_bytes: Option<f64>,
}

/// The verdict of a soak run (`--duration`), from the whole run's cycle levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakAnalysis {
    /// `plateau`, `growth`, `inconclusive` or `growth_host_memory`.
    pub verdict: GrowthVerdict,
    /// Why, in one sentence.
    pub reason: String,
    /// Cycles run.
    pub cycles: u32,
    /// Readings summarised.
    pub readings: u64,
    /// The slots (bounded in number; each slot merges more cycles as the run grows).
    pub slots: Vec<SoakSlot>,
    /// Mann–Kendall and Theil–Sen over the slot levels after the first cycle (per request).
    pub trend: Option<TrendTest>,
    /// The same over host levels, when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_trend: Option<TrendTest>,
    /// Robust noise of successive slot levels, bytes.
    pub noise_bytes: f64,
    /// Growth over the run needed to call `growth`, bytes.
    pub min_growth_bytes: f64,
}

/// A p value for people (trend tests): `p = 0.014`, `p = 1.2e-4`, `p < 1e-6`.
pub fn format_p(p: f64) -> String {
    if p < 1e-6 {
        "p < 1e-6".to_string()
    } else if p < 0.001 {
        format!("p = {p:.1e}")
    } else {
        format!("p = {p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values() {
        assert_eq!(format_p(0.01374), "p = 0.014");
        assert_eq!(format_p(0.0001234), "p = 1.2e-4");
        assert_eq!(format_p(1e-9), "p < 1e-6");
    }
}
