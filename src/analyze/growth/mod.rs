//! Analyse plateau vs growth from probe samples. Pure: takes the recorded
//! requests, returns the verdict and the numbers behind it.
//!
//! # Why this test and not a trend over all samples
//!
//! The seeds' protocol (ten identical short requests, then ten alternating short/long, memory
//! after each) separates "growth to a stable plateau" from "continuous growth of live memory".
//! A trend test over every sample cannot: when a cache grows once at the first long input,
//! every pair (before, after) of the step is an increasing pair, so Mann–Kendall's S is large
//! and the median pairwise slope is positive. The scripted story `step` in
//! `tests/cli/probe.rs` is that case, and the `naive` test this module still reports for
//! contrast calls it significant; it must be `plateau`.
//!
//! So the evaluation window holds only repetitions of inputs already seen:
//! - readings of the warm-up phase are never judged (story `plateau`: warm-up rise, then flat);
//! - the reading at the first appearance of a new input shape (prompt size, or a first
//!   concurrent round of that size) is a *step*, reported separately and excluded;
//! - pairs are compared only inside a block — same repeat, same phase, same input shape, same
//!   stretch between steps — as in the seasonal Kendall test (Hirsch, Slack & Smith 1982,
//!   Water Resources Research 18(1)): S and its variance are summed over blocks, and the
//!   Theil–Sen slope is the median of within-block pairwise slopes. A step between blocks adds
//!   nothing; a leak adds to every block (story `leak`: +8 MiB per request is `growth`).
//!
//! Verdict, in this order:
//! 1. fewer than [`MIN_POINTS`] readings in the window: `inconclusive`;
//! 2. one-sided Mann–Kendall p < [`ALPHA`], slope > 0, and slope × span ≥ max(2 MiB, the
//!    source's quantum, 3 × noise) — *and* the rise goes on in the later half of the window
//!    (same blocks, readings after the median position: the alternating phase, or the later
//!    repeats): Theil–Sen slope > 0 there, with growth over that half above the same floor:
//!    `growth`. A warm-up that spills three requests into the identical phase makes the whole
//!    window significant with a positive median slope (unit test
//!    `warmup_spilling_into_the_identical_phase_is_a_plateau`); the later half is flat, so it
//!    is a plateau ("growth that stops is a plateau");
//! 3. noise so large that a leak of [`LEAK_OF_INTEREST`] per request would go unseen
//!    (3 standard errors of the slope above it; story `noise`), or a weak trend (p < 0.05
//!    with an effect above the floor): `inconclusive`;
//! 4. otherwise `plateau`: no repeatable growth, so not a leak (seed: "Если повторяемого роста
//!    нет, не называйте ситуацию утечкой"); the plateau level and the warm-up are the result.
//!
//! Noise is 1.4826 × MAD of successive within-block differences / √2, which a linear leak and
//! a single step leave unchanged.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::bytes::{signed_bytes, MIB};
use crate::model::probe::format_p;
use crate::model::probe::{
    GrowthVerdict, HostTrend, LevelSpread, PhaseTrend, ProbePhase, ProbeRequest, RepeatTrend,
    SoakAnalysis, SoakSlot, Step, StepRegression, Trend, TrendTest, Warmup,
};
use crate::model::Bytes;

mod regression;
mod soak;
mod stats;
#[cfg(test)]
mod tests;

use regression::step_regression;
pub use soak::{SoakAccumulator, SOAK_MIN_SLOTS};
use stats::{detectable_slope, median, noise, quantum};
pub use stats::{trend_test, upper_tail};

/// Fewest readings in the evaluation window for any verdict but `inconclusive`.
pub const MIN_POINTS: usize = 6;
/// One-sided significance level of the Mann–Kendall test.
pub const ALPHA: f64 = 0.01;
/// A leak this fast (bytes per request) must not be missed: 1 MiB per request fills 80 GiB
/// in about 80 000 requests, a day of modest traffic.
pub const LEAK_OF_INTEREST: f64 = MIB as f64;
/// Smallest growth over the window ever called `growth`: one 2 MiB page, NVML's granularity.
pub const MIN_GROWTH: f64 = 2.0 * MIB as f64;
/// The leak a `plateau` verdict must rule out when the readings are too noisy for
/// [`LEAK_OF_INTEREST`] (a dcgm-exporter reading of a shared card moves ±150 MiB): 16 MiB per
/// request fills 80 GiB in about 5 000 requests. Three repeats of the default protocol rule
/// it out under ±150 MiB of noise; slower leaks need a quieter source or a soak.
pub const NOISY_LEAK_OF_INTEREST: f64 = 16.0 * MIB as f64;
/// Smallest growth of host memory (the server's resident set) ever called `growth`: Python
/// servers move their RSS by some MiB as allocator arenas and caches come and go.
pub const MIN_HOST_GROWTH: f64 = 32.0 * MIB as f64;
/// The normal score of [`ALPHA`], one-sided.
const Z_ALPHA: f64 = 2.326;
/// Most repeats `--repeat` accepts; a suggestion above it asks for a quieter source instead.
pub const MAX_REPEATS: u32 = 50;

/// What the analysis concluded.
#[derive(Debug, Clone, PartialEq)]
pub struct GrowthAnalysis {
    /// The verdict.
    pub verdict: GrowthVerdict,
    /// The numbers behind it.
    pub trend: Trend,
    /// The plateau level, when the verdict is `plateau`.
    pub plateau_bytes: Option<Bytes>,
    /// Warm-up and overall levels.
    pub warmup: Warmup,
    /// One-time rises at new inputs.
    pub steps: Vec<Step>,
}

/// Which memory a series of readings holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Memory {
    /// GPU memory (`memory_bytes`).
    Gpu,
    /// The server's process-tree RSS (`host_memory_bytes`).
    Host,
}

/// One memory reading in protocol order.
#[derive(Debug, Clone, Copy)]
struct Reading {
    sequence: u64,
    repeat: u32,
    phase: ProbePhase,
    index: u32,
    prompt_chars: u64,
    value: f64,
}

/// Judges the recorded requests. `baseline` is memory before the first request; `stopped`
/// says why the protocol ended early, which forces `inconclusive`.
///
/// GPU memory is judged first; when requests also carry host memory (the server's
/// process-tree RSS), that series is judged the same way, and a host-side rise under a GPU
/// plateau gives `growth (host memory)`.
pub fn analyze(
    requests: &[ProbeRequest],
    baseline: Option<Bytes>,
    stopped: Option<&str>,
) -> GrowthAnalysis {
    let mut gpu = judge(
        &readings(requests, Memory::Gpu),
        baseline,
        stopped,
        MIN_GROWTH,
    );
    let host_readings = readings(requests, Memory::Host);
    if host_readings.is_empty() {
        return gpu;
    }
    let host = judge(&host_readings, None, stopped, MIN_HOST_GROWTH);
    if host.verdict == GrowthVerdict::Growth && gpu.verdict != GrowthVerdict::Growth {
        gpu.trend.reason = format!(
            "host memory of the server kept rising: {}; GPU memory: {}",
            host.trend.reason, gpu.trend.reason
        );
        gpu.verdict = GrowthVerdict::HostGrowth;
        gpu.plateau_bytes = None;
    }
    gpu.trend.host = Some(Box::new(HostTrend {
        verdict: host.verdict,
        trend: host.trend,
        plateau_bytes: host.plateau_bytes,
    }));
    gpu
}

/// The verdict on one series of readings (GPU or host memory).
fn judge(
    readings: &[Reading],
    baseline: Option<Bytes>,
    stopped: Option<&str>,
    floor: f64,
) -> GrowthAnalysis {
    // Shapes seen so far, per repeat: a repeat from a clean start meets its first long input
    // again, and the step it causes there is a step, not growth (story `step`, repeated).
    let mut seen: BTreeSet<(u32, u64, bool)> = BTreeSet::new();
    let mut steps = Vec::new();
    let mut segment = 0u32;
    let mut blocks: BTreeMap<(u32, ProbePhase, u32, u64), Vec<Reading>> = BTreeMap::new();
    let mut previous: Option<f64> = baseline.map(|bytes| bytes.get() as f64);
    for reading in readings {
        let shape = (
            reading.repeat,
            reading.prompt_chars,
            reading.phase == ProbePhase::Concurrent,
        );
        let new_shape = seen.insert(shape);
        if reading.phase != ProbePhase::Warmup {
            if new_shape {
                segment += 1;
                if let Some(before) = previous {
                    steps.push(Step {
                        repeat: reading.repeat,
                        phase: reading.phase,
                        index: reading.index,
                        prompt_chars: reading.prompt_chars,
                        before_bytes: Bytes(before as u64),
                        after_bytes: Bytes(reading.value as u64),
                    });
                }
            } else {
                blocks
                    .entry((reading.repeat, reading.phase, segment, reading.prompt_chars))
                    .or_default()
                    .push(*reading);
            }
        }
        previous = Some(reading.value);
    }
    let blocks: Vec<Vec<Reading>> = blocks.into_values().filter(|b| b.len() >= 2).collect();
    let series: Vec<Vec<(f64, f64)>> = blocks
        .iter()
        .map(|block| block.iter().map(|r| (r.sequence as f64, r.value)).collect())
        .collect();
    let window = (!series.is_empty()).then(|| trend_test(&series));
    let measured: Vec<(f64, f64)> = readings
        .iter()
        .filter(|r| r.phase != ProbePhase::Warmup)
        .map(|r| (r.sequence as f64, r.value))
        .collect();
    let naive = (measured.len() >= 2).then(|| trend_test(&[measured]));

    let window_sequences: Vec<u64> = blocks.iter().flatten().map(|r| r.sequence).collect();
    let span = span(window_sequences.iter().map(|s| *s as f64));
    let noise = noise(&series);
    let quantum = quantum(&series);
    let min_growth = floor
        .max(quantum.map_or(0.0, |q| q as f64))
        .max(3.0 * noise);
    let detectable = detectable_slope(&series, noise);
    let slope = window.as_ref().map_or(0.0, |w| w.slope_bytes_per_request);
    let window_growth = slope * span as f64;
    let points = window.as_ref().map_or(0, |w| w.points);
    let p_value = window.as_ref().map_or(1.0, |w| w.p_value);

    // The later half of the window (by protocol order, blocks kept): does the rise go on?
    let (late, late_span) = later_half(&series);
    let late_slope = late.as_ref().map_or(0.0, |l| l.slope_bytes_per_request);
    let late_growth = late_slope * late_span as f64;
    let late_points = late.as_ref().map_or(0, |l| l.points);
    let rising = p_value < ALPHA && slope > 0.0 && window_growth >= min_growth;
    let continues = late_slope > 0.0 && late_growth >= min_growth;
    let phases = phase_trends(&blocks);
    // A leak confined to one phase (only while long inputs alternate, say) leaves the other
    // phases flat; their zero pairwise slopes then outnumber the rising ones and the pooled
    // median slope is 0. The window's Mann–Kendall test still sees it: look for the phase.
    // Rising in one phase, significant at 0.05 there; `growth` also needs the rise in the
    // phase's later half to reach the floor, `inconclusive` only that it goes on.
    let phase_rises = |phase: &PhaseTrend| {
        phase.test.p_value < 0.05
            && phase.test.slope_bytes_per_request > 0.0
            && phase.growth_bytes >= min_growth
            && phase
                .late
                .as_ref()
                .is_some_and(|late| late.slope_bytes_per_request > 0.0)
    };
    let growing_phase = phases
        .iter()
        .find(|phase| phase_rises(phase) && phase.late_growth_bytes >= min_growth)
        .filter(|_| p_value < ALPHA);
    let weakly_rising =
        (slope > 0.0 && window_growth >= min_growth && continues) || phases.iter().any(phase_rises);

    // The second view: each repeat alone. Growth must rise in every repeat (more rising than
    // falling pairs); a plateau must come back at the same levels.
    let repeats = repeat_trends(readings, &blocks, steps.as_slice());
    let tested: Vec<&RepeatTrend> = repeats.iter().filter(|r| r.test.is_some()).collect();
    let rising_repeats = tested
        .iter()
        .filter(|r| r.test.as_ref().is_some_and(|t| t.mann_kendall_s > 0))
        .count();
    let in_every_repeat = tested.len() < 2 || rising_repeats == tested.len();
    let tolerance = MIN_GROWTH
        .max(4.0 * noise)
        .max(quantum.map_or(0.0, |q| q as f64));
    let level_spread = level_spread(&repeats, tolerance);
    let levels_rising = level_rise(&repeats, tolerance);
    let repeat_count = u32::try_from(tested.len().max(1)).unwrap_or(u32::MAX);
    // Quiet readings rule out a leak of `LEAK_OF_INTEREST` with the rank test above. Noisy ones
    // (a dcgm-exporter reading of a shared card moves ±150 MiB) are judged by least squares
    // with the steps as terms, which uses every reading after warm-up, and are held to
    // `NOISY_LEAK_OF_INTEREST`; more repeats shrink the slope they can hide as 1/√repeats.
    let noisy = detectable.is_some_and(|d| d > LEAK_OF_INTEREST);
    let regression = step_regression(readings);
    let regression_detectable = regression.as_ref().map(|r| 3.0 * r.standard_error);
    let resolution = if noisy {
        NOISY_LEAK_OF_INTEREST
    } else {
        LEAK_OF_INTEREST
    };
    // Under noise one repeat of three or more may dip by chance; with two, both must rise.
    let allowed_misses = usize::from(noisy && tested.len() >= 3);
    let in_every_repeat = in_every_repeat || rising_repeats + allowed_misses >= tested.len();
    let regression_rises = |r: &StepRegression| {
        let rising_runs = r.repeat_slopes.iter().filter(|s| **s > 0.0).count();
        r.slope_bytes_per_request > 0.0
            && (r.repeat_slopes.len() < 2 || rising_runs + allowed_misses >= r.repeat_slopes.len())
            && r.late_slope_bytes_per_request
                .is_some_and(|late| late > 0.0)
    };
    let regression_growth = regression.as_ref().filter(|r| {
        noisy
            && r.p_value < ALPHA
            && r.slope_bytes_per_request * span as f64 >= min_growth
            && regression_rises(r)
    });
    let regression_weak = noisy
        && regression
            .as_ref()
            .is_some_and(|r| r.p_value < 0.05 && regression_rises(r));
    let repeats_needed = if noisy {
        regression_detectable.filter(|d| *d > NOISY_LEAK_OF_INTEREST)
    } else {
        None
    }
    .map(|d| {
        let factor = (d / NOISY_LEAK_OF_INTEREST).powi(2);
        (f64::from(repeat_count) * factor)
            .ceil()
            .min(f64::from(u32::MAX)) as u32
    });

    let mut needed_out = repeats_needed;
    let (verdict, reason) = if let Some(why) = stopped {
        (
            GrowthVerdict::Inconclusive,
            format!("the protocol stopped early ({why})"),
        )
    } else if points < MIN_POINTS {
        (
            GrowthVerdict::Inconclusive,
            format!(
                "only {points} readings repeat an input already seen; at least {MIN_POINTS} are needed (try `--repeat 2`)"
            ),
        )
    } else if noisy
        && regression_growth.is_none()
        && (rising && continues || growing_phase.is_some())
    {
        // The rank test over blocks is the weaker test under noise: it adds false alarms, not
        // leaks the least-squares test misses. Fall through to the noise checks below.
        noisy_verdict(
            repeats_needed,
            noise,
            regression_detectable,
            regression.as_ref(),
            regression_weak,
            repeat_count,
            &mut needed_out,
        )
    } else if !noisy && (rising && continues || growing_phase.is_some()) && !in_every_repeat {
        (
            GrowthVerdict::Inconclusive,
            format!(
                "memory rose ({} per request, Mann–Kendall {}) but in only {rising_repeats} of {} repeats; growth must repeat in every run",
                signed_bytes(growing_slope(&phases, slope)),
                format_p(p_value),
                tested.len()
            ),
        )
    } else if let Some(fit) = regression_growth {
        (
            GrowthVerdict::Growth,
            format!(
                "memory kept rising under noise {}: {} per request (least squares with steps as terms, standard error {}, {}), {} over {span} requests; rising in {} of {} repeats",
                Bytes(noise as u64),
                signed_bytes(fit.slope_bytes_per_request),
                Bytes(fit.standard_error as u64),
                format_p(fit.p_value),
                signed_bytes(fit.slope_bytes_per_request * span as f64),
                fit.repeat_slopes.iter().filter(|s| **s > 0.0).count(),
                fit.repeat_slopes.len()
            ),
        )
    } else if rising && continues {
        (
            GrowthVerdict::Growth,
            format!(
                "memory kept rising through repeated inputs: {} per request (Theil–Sen), {} over {span} requests, Mann–Kendall {}; still {} per request in the later half{}",
                signed_bytes(slope),
                signed_bytes(window_growth),
                format_p(p_value),
                signed_bytes(late_slope),
                every_repeat(tested.len())
            ),
        )
    } else if let Some(phase) = growing_phase {
        (
            GrowthVerdict::Growth,
            format!(
                "memory kept rising through the repeated {} requests: {} per request (Theil–Sen), {} over {} requests, Mann–Kendall {} ({} in the whole window); still {} per request in their later half{}",
                phase.phase.name(),
                signed_bytes(phase.test.slope_bytes_per_request),
                signed_bytes(phase.growth_bytes),
                phase.span_requests,
                format_p(phase.test.p_value),
                format_p(p_value),
                signed_bytes(
                    phase
                        .late
                        .as_ref()
                        .map_or(0.0, |late| late.slope_bytes_per_request)
                ),
                every_repeat(tested.len())
            ),
        )
    } else if let Some(rise) = &levels_rising {
        (GrowthVerdict::Growth, rise.clone())
    } else if rising && late_points < 4 {
        (
            GrowthVerdict::Inconclusive,
            format!(
                "memory rose ({} over {span} requests) but too few later readings show whether it goes on (try `--repeat 2`)",
                signed_bytes(window_growth)
            ),
        )
    } else if repeats_needed.is_some()
        || (!noisy && p_value < 0.05 && weakly_rising)
        || regression_weak
    {
        if noisy {
            noisy_verdict(
                repeats_needed,
                noise,
                regression_detectable,
                regression.as_ref(),
                regression_weak,
                repeat_count,
                &mut needed_out,
            )
        } else {
            (
                GrowthVerdict::Inconclusive,
                format!(
                    "a weak rising trend ({} per request, {}): repeat the protocol (`--repeat {}`) to decide",
                    signed_bytes(growing_slope(&phases, slope)),
                    format_p(p_value),
                    (repeat_count + 2).min(MAX_REPEATS)
                ),
            )
        }
    } else if rising {
        (
            GrowthVerdict::Plateau,
            format!(
                "memory rose early in the window ({} over {span} requests) then stopped: {} per request over the last {late_span}; growth that stops is a plateau, not a leak",
                signed_bytes(window_growth),
                signed_bytes(late_slope)
            ),
        )
    } else if noisy {
        noisy_verdict(
            None,
            noise,
            regression_detectable,
            regression.as_ref(),
            false,
            repeat_count,
            &mut needed_out,
        )
    } else {
        (
            GrowthVerdict::Plateau,
            format!(
                "no repeatable growth: {} over {span} requests, Mann–Kendall {} (growth needs p < {ALPHA} and at least {}); not a leak",
                signed_bytes(window_growth),
                format_p(p_value),
                Bytes(min_growth as u64)
            ),
        )
    };
    let reason = match (&level_spread, verdict) {
        (Some(spread), GrowthVerdict::Plateau) if spread.spread_bytes > spread.tolerance_bytes => {
            format!(
                "{reason}; the level {} differs by {} between repeats",
                spread.point.replace('_', " "),
                Bytes(spread.spread_bytes)
            )
        }
        (Some(_), GrowthVerdict::Plateau) if tested.len() >= 2 => {
            format!("{reason}; the same levels in all {} repeats", tested.len())
        }
        _ => reason,
    };

    let plateau_bytes = (verdict == GrowthVerdict::Plateau)
        .then(|| plateau_level(&blocks))
        .flatten();
    let after_warmup = readings
        .iter()
        .rev()
        .find(|r| r.phase == ProbePhase::Warmup)
        .map(|r| Bytes(r.value as u64));
    let final_bytes = readings.last().map(|r| Bytes(r.value as u64));
    let difference = |a: Option<Bytes>, b: Option<Bytes>| match (a, b) {
        (Some(a), Some(b)) => Some(a.get() as i64 - b.get() as i64),
        _ => None,
    };
    let warmup = Warmup {
        baseline_bytes: baseline,
        after_warmup_bytes: after_warmup,
        warmup_growth_bytes: difference(after_warmup, baseline),
        final_bytes,
        total_growth_bytes: difference(final_bytes, baseline),
    };
    GrowthAnalysis {
        verdict,
        trend: Trend {
            method: "seasonal Mann–Kendall test and Theil–Sen slope within blocks of the same repeat, phase and input size, after each input's first appearance in the repeat; warm-up excluded; growth must show in every repeat".to_string(),
            window,
            late,
            naive,
            window_span_requests: span,
            window_growth_bytes: window_growth,
            late_span_requests: late_span,
            late_growth_bytes: late_growth,
            noise_bytes: noise,
            quantum_bytes: quantum,
            min_growth_bytes: min_growth,
            detectable_slope_bytes_per_request: detectable,
            leak_of_interest_bytes_per_request: LEAK_OF_INTEREST,
            alpha: ALPHA,
            reason,
            phases,
            repeats: if tested.len() >= 2 { repeats } else { Vec::new() },
            level_spread,
            resolution_bytes_per_request: Some(resolution),
            regression,
            repeats_needed: (verdict == GrowthVerdict::Inconclusive)
                .then_some(needed_out)
                .flatten(),
            host: None,
        },
        plateau_bytes,
        warmup,
        steps,
    }
}

/// The verdict under noise when the least-squares test found no growth: `inconclusive` when
/// the noise hides a leak of [`NOISY_LEAK_OF_INTEREST`] (with the repeats that would decide)
/// or the slope is weakly significant, else `plateau`.
fn noisy_verdict(
    repeats_needed: Option<u32>,
    noise: f64,
    detectable: Option<f64>,
    regression: Option<&StepRegression>,
    weak: bool,
    repeat_count: u32,
    needed_out: &mut Option<u32>,
) -> (GrowthVerdict, String) {
    if let Some(needed) = repeats_needed {
        return (
            GrowthVerdict::Inconclusive,
            format!(
                "readings too noisy: noise {} hides any leak slower than {} per request; {} would rule out {} per request",
                Bytes(noise as u64),
                Bytes(detectable.unwrap_or_default() as u64),
                if needed > MAX_REPEATS {
                    format!("more than {MAX_REPEATS} repeats (a quieter memory source)")
                } else {
                    format!("`--repeat {needed}`")
                },
                Bytes(NOISY_LEAK_OF_INTEREST as u64)
            ),
        );
    }
    let slope = regression.map_or(0.0, |r| r.slope_bytes_per_request);
    let p_value = regression.map_or(1.0, |r| r.p_value);
    if weak {
        return (
            GrowthVerdict::Inconclusive,
            format!(
                "a weak rising trend under noise {} ({} per request, least squares {}): repeat the protocol (`--repeat {}`) to decide",
                Bytes(noise as u64),
                signed_bytes(slope),
                format_p(p_value),
                (repeat_count + 2).min(MAX_REPEATS)
            ),
        );
    }
    // An equivalence test: the one-sided upper bound of the slope (p = ALPHA) must lie below
    // the leak of interest, so a leak of that size is called `plateau` at most ALPHA of the time.
    let standard_error = regression.map_or(f64::INFINITY, |r| r.standard_error);
    let upper = slope + Z_ALPHA * standard_error;
    if upper.is_nan() || upper >= NOISY_LEAK_OF_INTEREST {
        let needed = if upper.is_finite() {
            (f64::from(repeat_count) * (upper / NOISY_LEAK_OF_INTEREST).powi(2))
                .ceil()
                .max(f64::from(repeat_count) + 1.0)
                .min(f64::from(u32::MAX)) as u32
        } else {
            repeat_count + 1
        };
        *needed_out = Some(needed);
        return (
            GrowthVerdict::Inconclusive,
            format!(
                "no significant growth under noise {}, but the slope ({} ± {} per request) does not rule out a leak of {} per request; {} would decide",
                Bytes(noise as u64),
                signed_bytes(slope),
                Bytes(standard_error.min(u64::MAX as f64) as u64),
                Bytes(NOISY_LEAK_OF_INTEREST as u64),
                if needed > MAX_REPEATS {
                    format!("more than {MAX_REPEATS} repeats (a quieter memory source)")
                } else {
                    format!("`--repeat {needed}`")
                }
            ),
        );
    }
    (
        GrowthVerdict::Plateau,
        format!(
            "no repeatable growth under noise {}: {} per request (least squares with steps as terms, {}); not a leak faster than {} per request, which these readings would have shown",
            Bytes(noise as u64),
            signed_bytes(slope),
            format_p(p_value),
            Bytes(NOISY_LEAK_OF_INTEREST as u64)
        ),
    )
}

/// ", in each of the K repeats" when there were several.
fn every_repeat(repeats: usize) -> String {
    if repeats >= 2 {
        format!(", in each of the {repeats} repeats")
    } else {
        String::new()
    }
}

/// Per repeat: the trend test on its blocks and its levels at three protocol points.
fn repeat_trends(
    readings: &[Reading],
    blocks: &[Vec<Reading>],
    steps: &[Step],
) -> Vec<RepeatTrend> {
    let repeats: BTreeSet<u32> = readings.iter().map(|r| r.repeat).collect();
    repeats
        .into_iter()
        .map(|repeat| {
            let series: Vec<Vec<(f64, f64)>> = blocks
                .iter()
                .filter(|block| block.first().is_some_and(|r| r.repeat == repeat))
                .map(|block| block.iter().map(|r| (r.sequence as f64, r.value)).collect())
                .collect();
            let phase_values = |phase: ProbePhase| -> Vec<f64> {
                readings
                    .iter()
                    .filter(|r| r.repeat == repeat && r.phase == phase)
                    .map(|r| r.value)
                    .collect()
            };
            let identical = phase_values(ProbePhase::Identical);
            let alternating = phase_values(ProbePhase::Alternating);
            let half = |values: &[f64], second: bool| -> Option<Bytes> {
                let middle = values.len() / 2;
                let mut part = if second {
                    values[middle..].to_vec()
                } else {
                    values[..middle].to_vec()
                };
                median(&mut part).map(|value| Bytes(value as u64))
            };
            RepeatTrend {
                repeat,
                test: (!series.is_empty()).then(|| trend_test(&series)),
                after_warmup_bytes: half(&identical, false),
                after_identical_bytes: half(&identical, true),
                after_alternating_bytes: half(&alternating, true),
                steps: steps.iter().filter(|s| s.repeat == repeat).count(),
            }
        })
        .collect()
}

/// The three protocol points of a repeat, named as in JSON.
fn levels(repeat: &RepeatTrend) -> [(&'static str, Option<Bytes>); 3] {
    [
        ("after_warmup", repeat.after_warmup_bytes),
        ("after_identical", repeat.after_identical_bytes),
        ("after_alternating", repeat.after_alternating_bytes),
    ]
}

/// The protocol point where repeats disagree most, when at least two repeats have levels.
fn level_spread(repeats: &[RepeatTrend], tolerance: f64) -> Option<LevelSpread> {
    (0..3)
        .filter_map(|point| {
            let values: Vec<u64> = repeats
                .iter()
                .filter_map(|r| levels(r)[point].1.map(Bytes::get))
                .collect();
            if values.len() < 2 {
                return None;
            }
            let low = values.iter().min().copied().unwrap_or_default();
            let high = values.iter().max().copied().unwrap_or_default();
            Some(LevelSpread {
                point: levels(&repeats[0])[point].0.to_string(),
                spread_bytes: high - low,
                tolerance_bytes: tolerance as u64,
                rising: values.windows(2).all(|pair| pair[1] > pair[0]),
            })
        })
        .max_by_key(|spread| spread.spread_bytes)
}

/// With three repeats or more: the level at every protocol point rose from each repeat to
/// the next, by more than `tolerance` from first to last. A server that was not restarted
/// between repeats and keeps what each repeat left behind shows this even when the steps of
/// each repeat hide the rise inside it.
fn level_rise(repeats: &[RepeatTrend], tolerance: f64) -> Option<String> {
    if repeats.len() < 3 {
        return None;
    }
    let mut described = Vec::new();
    for point in 0..3 {
        let values: Vec<u64> = repeats
            .iter()
            .filter_map(|r| levels(r)[point].1.map(Bytes::get))
            .collect();
        if values.len() < 3 {
            continue;
        }
        let rises = values.windows(2).all(|pair| pair[1] > pair[0]);
        let total = values.last().copied().unwrap_or_default() as f64
            - values.first().copied().unwrap_or_default() as f64;
        if !rises || total <= tolerance {
            return None;
        }
        described.push(format!(
            "{}: {}",
            levels(&repeats[0])[point].0.replace('_', " "),
            values
                .iter()
                .map(|v| Bytes(*v).to_string())
                .collect::<Vec<_>>()
                .join(" → ")
        ));
    }
    (!described.is_empty()).then(|| {
        format!(
            "memory at the same protocol point rose from each repeat to the next ({})",
            described.join("; ")
        )
    })
}

/// The steepest phase slope when it beats the pooled `slope`, which flat phases pull to 0.
fn growing_slope(phases: &[PhaseTrend], slope: f64) -> f64 {
    phases
        .iter()
        .map(|phase| phase.test.slope_bytes_per_request)
        .fold(slope, f64::max)
}

/// The test on the later half of `series` (points at or after the median position, blocks
/// kept) and the requests it spans.
fn later_half(series: &[Vec<(f64, f64)>]) -> (Option<TrendTest>, u64) {
    let mut sequences: Vec<f64> = series.iter().flatten().map(|p| p.0).collect();
    sequences.sort_by(f64::total_cmp);
    let threshold = sequences.get(sequences.len() / 2).copied().unwrap_or(0.0);
    let late_series: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|block| block.iter().filter(|p| p.0 >= threshold).copied().collect())
        .filter(|block: &Vec<(f64, f64)>| block.len() >= 2)
        .collect();
    let late = (!late_series.is_empty()).then(|| trend_test(&late_series));
    (late, span(late_series.iter().flatten().map(|p| p.0)))
}

/// Last minus first of `sequences`, 0 when empty.
fn span(sequences: impl Iterator<Item = f64>) -> u64 {
    sequences
        .fold(None, |range: Option<(f64, f64)>, x| match range {
            None => Some((x, x)),
            Some((low, high)) => Some((low.min(x), high.max(x))),
        })
        .map_or(0, |(low, high)| (high - low) as u64)
}

/// The window and later-half tests on each phase's blocks alone, in protocol order.
fn phase_trends(blocks: &[Vec<Reading>]) -> Vec<PhaseTrend> {
    let phases: BTreeSet<ProbePhase> = blocks.iter().flatten().map(|r| r.phase).collect();
    phases
        .into_iter()
        .map(|phase| {
            let series: Vec<Vec<(f64, f64)>> = blocks
                .iter()
                .filter(|block| block.first().is_some_and(|r| r.phase == phase))
                .map(|block| block.iter().map(|r| (r.sequence as f64, r.value)).collect())
                .collect();
            let test = trend_test(&series);
            let span_requests = span(series.iter().flatten().map(|p| p.0));
            let (late, late_span_requests) = later_half(&series);
            let late_slope = late.as_ref().map_or(0.0, |l| l.slope_bytes_per_request);
            PhaseTrend {
                phase,
                growth_bytes: test.slope_bytes_per_request * span_requests as f64,
                test,
                span_requests,
                late,
                late_span_requests,
                late_growth_bytes: late_slope * late_span_requests as f64,
            }
        })
        .collect()
}

/// Successful requests with a memory reading, one per concurrent round, in protocol order.
/// `sequence` counts requests sent so far (a concurrent round counts all its requests), so
/// slopes are per request in every phase.
fn readings(requests: &[ProbeRequest], which: Memory) -> Vec<Reading> {
    let mut out: Vec<Reading> = Vec::new();
    for (position, request) in requests.iter().enumerate() {
        let ok = request.status.is_some_and(|s| (200..300).contains(&s));
        let value = match which {
            Memory::Gpu => request.memory_bytes,
            Memory::Host => request.host_memory_bytes,
        };
        let Some(memory) = value.filter(|_| ok) else {
            continue;
        };
        let same_round = |other: &ProbeRequest| {
            other.phase == ProbePhase::Concurrent
                && other.repeat == request.repeat
                && other.index == request.index
        };
        let round_already_read = out.last().is_some_and(|last| {
            last.phase == ProbePhase::Concurrent
                && last.repeat == request.repeat
                && last.index == request.index
        });
        if request.phase == ProbePhase::Concurrent && round_already_read {
            continue;
        }
        // The reading is taken after the whole round: count the round's later requests too.
        let round_rest = if request.phase == ProbePhase::Concurrent {
            requests[position + 1..]
                .iter()
                .take_while(|other| same_round(other))
                .count()
        } else {
            0
        };
        out.push(Reading {
            sequence: (position + 1 + round_rest) as u64,
            repeat: request.repeat,
            phase: request.phase,
            index: request.index,
            prompt_chars: request.prompt_chars,
            value: memory.get() as f64,
        });
    }
    out
}

/// The highest block median of the last phase judged: where memory settled.
fn plateau_level(blocks: &[Vec<Reading>]) -> Option<Bytes> {
    let last = blocks.iter().flatten().max_by_key(|r| r.sequence)?;
    blocks
        .iter()
        .filter(|block| {
            block
                .first()
                .is_some_and(|r| r.repeat == last.repeat && r.phase == last.phase)
        })
        .filter_map(|block| median(&mut block.iter().map(|r| r.value).collect::<Vec<_>>()))
        .max_by(f64::total_cmp)
        .map(|value| Bytes(value as u64))
}
