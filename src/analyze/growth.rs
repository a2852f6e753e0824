//! Analyse plateau vs growth from probe samples (R13, R14). Pure: takes the recorded
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

use crate::model::bytes::MIB;
use crate::model::probe::{
    GrowthVerdict, Phase, PhaseTrend, ProbeRequest, Step, Trend, TrendTest, Warmup,
};
use crate::model::Bytes;

/// Fewest readings in the evaluation window for any verdict but `inconclusive`.
pub const MIN_POINTS: usize = 6;
/// One-sided significance level of the Mann–Kendall test.
pub const ALPHA: f64 = 0.01;
/// A leak this fast (bytes per request) must not be missed: 1 MiB per request fills 80 GiB
/// in about 80 000 requests, a day of modest traffic.
pub const LEAK_OF_INTEREST: f64 = MIB as f64;
/// Smallest growth over the window ever called `growth`: one 2 MiB page, NVML's granularity.
pub const MIN_GROWTH: f64 = 2.0 * MIB as f64;

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

/// One memory reading in protocol order.
#[derive(Debug, Clone, Copy)]
struct Reading {
    sequence: u64,
    repeat: u32,
    phase: Phase,
    index: u32,
    prompt_chars: u64,
    value: f64,
}

/// Judges the recorded requests. `baseline` is memory before the first request; `stopped`
/// says why the protocol ended early, which forces `inconclusive`.
pub fn analyze(
    requests: &[ProbeRequest],
    baseline: Option<Bytes>,
    stopped: Option<&str>,
) -> GrowthAnalysis {
    let readings = readings(requests);
    let mut seen: BTreeSet<(u64, bool)> = BTreeSet::new();
    let mut steps = Vec::new();
    let mut segment = 0u32;
    let mut blocks: BTreeMap<(u32, Phase, u32, u64), Vec<Reading>> = BTreeMap::new();
    let mut previous: Option<f64> = baseline.map(|bytes| bytes.get() as f64);
    for reading in &readings {
        let shape = (reading.prompt_chars, reading.phase == Phase::Concurrent);
        let new_shape = seen.insert(shape);
        if reading.phase != Phase::Warmup {
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
        .filter(|r| r.phase != Phase::Warmup)
        .map(|r| (r.sequence as f64, r.value))
        .collect();
    let naive = (measured.len() >= 2).then(|| trend_test(&[measured]));

    let window_sequences: Vec<u64> = blocks.iter().flatten().map(|r| r.sequence).collect();
    let span = span(window_sequences.iter().map(|s| *s as f64));
    let noise = noise(&series);
    let quantum = quantum(&series);
    let min_growth = MIN_GROWTH
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
    } else if rising && continues {
        (
            GrowthVerdict::Growth,
            format!(
                "memory kept rising through repeated inputs: {} per request (Theil–Sen), {} over {span} requests, Mann–Kendall {}; still {} per request in the later half",
                signed_bytes(slope),
                signed_bytes(window_growth),
                format_p(p_value),
                signed_bytes(late_slope)
            ),
        )
    } else if let Some(phase) = growing_phase {
        (
            GrowthVerdict::Growth,
            format!(
                "memory kept rising through the repeated {} requests: {} per request (Theil–Sen), {} over {} requests, Mann–Kendall {} ({} in the whole window); still {} per request in their later half",
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
                )
            ),
        )
    } else if rising && late_points < 4 {
        (
            GrowthVerdict::Inconclusive,
            format!(
                "memory rose ({} over {span} requests) but too few later readings show whether it goes on (try `--repeat 2`)",
                signed_bytes(window_growth)
            ),
        )
    } else if detectable.is_some_and(|d| d > LEAK_OF_INTEREST) {
        (
            GrowthVerdict::Inconclusive,
            format!(
                "readings too noisy: noise {} hides any leak slower than {} per request",
                Bytes(noise as u64),
                Bytes(detectable.unwrap_or_default() as u64)
            ),
        )
    } else if p_value < 0.05 && weakly_rising {
        (
            GrowthVerdict::Inconclusive,
            format!(
                "a weak rising trend ({} per request, {}): repeat the protocol (`--repeat 3`) to decide",
                signed_bytes(
                    growing_slope(&phases, slope)
                ),
                format_p(p_value)
            ),
        )
    } else if rising {
        (
            GrowthVerdict::Plateau,
            format!(
                "memory rose early in the window ({} over {span} requests) then stopped: {} per request over the last {late_span}; growth that stops is a plateau, not a leak",
                signed_bytes(window_growth),
                signed_bytes(late_slope)
            ),
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

    let plateau_bytes = (verdict == GrowthVerdict::Plateau)
        .then(|| plateau_level(&blocks))
        .flatten();
    let after_warmup = readings
        .iter()
        .rev()
        .find(|r| r.phase == Phase::Warmup)
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
            method: "seasonal Mann–Kendall test and Theil–Sen slope within blocks of the same repeat, phase and input size, after each input's first appearance; warm-up excluded".to_string(),
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
        },
        plateau_bytes,
        warmup,
        steps,
    }
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
    let phases: BTreeSet<Phase> = blocks.iter().flatten().map(|r| r.phase).collect();
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
fn readings(requests: &[ProbeRequest]) -> Vec<Reading> {
    let mut out: Vec<Reading> = Vec::new();
    for (position, request) in requests.iter().enumerate() {
        let ok = request.status.is_some_and(|s| (200..300).contains(&s));
        let Some(memory) = request.memory_bytes.filter(|_| ok) else {
            continue;
        };
        let same_round = |other: &ProbeRequest| {
            other.phase == Phase::Concurrent
                && other.repeat == request.repeat
                && other.index == request.index
        };
        let round_already_read = out.last().is_some_and(|last| {
            last.phase == Phase::Concurrent
                && last.repeat == request.repeat
                && last.index == request.index
        });
        if request.phase == Phase::Concurrent && round_already_read {
            continue;
        }
        // The reading is taken after the whole round: count the round's later requests too.
        let round_rest = if request.phase == Phase::Concurrent {
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

/// Mann–Kendall and Theil–Sen over blocks of `(x, value)` points; pairs only within a block.
pub fn trend_test(blocks: &[Vec<(f64, f64)>]) -> TrendTest {
    let mut s: i64 = 0;
    let mut variance = 0.0;
    let mut slopes = Vec::new();
    let mut points = 0;
    let mut used_blocks = 0;
    for block in blocks {
        if block.len() < 2 {
            continue;
        }
        used_blocks += 1;
        points += block.len();
        for (i, &(xi, vi)) in block.iter().enumerate() {
            for &(xj, vj) in &block[i + 1..] {
                s += sign(vj - vi);
                if xj != xi {
                    slopes.push((vj - vi) / (xj - xi));
                }
            }
        }
        variance += mann_kendall_variance(block.iter().map(|&(_, v)| v));
    }
    let z = if variance <= 0.0 {
        0.0
    } else {
        (s - s.signum()) as f64 / variance.sqrt()
    };
    TrendTest {
        points,
        blocks: used_blocks,
        mann_kendall_s: s,
        variance,
        z,
        p_value: upper_tail(z),
        slope_bytes_per_request: median(&mut slopes).unwrap_or(0.0),
    }
}

fn sign(value: f64) -> i64 {
    if value > 0.0 {
        1
    } else if value < 0.0 {
        -1
    } else {
        0
    }
}

/// Var(S) = [n(n−1)(2n+5) − Σ t(t−1)(2t+5)] / 18, t the sizes of groups of tied values.
fn mann_kendall_variance(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    let mut ties = 0.0;
    let mut start = 0;
    while start < values.len() {
        let mut end = start + 1;
        while end < values.len() && values[end] == values[start] {
            end += 1;
        }
        let t = (end - start) as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        start = end;
    }
    (n * (n - 1.0) * (2.0 * n + 5.0) - ties) / 18.0
}

/// P(Z > z) for a standard normal Z.
pub fn upper_tail(z: f64) -> f64 {
    if z == 0.0 {
        return 0.5; // exact; the fit below is off by 1.5e-8 there
    }
    (0.5 * erfc(z / std::f64::consts::SQRT_2)).clamp(0.0, 1.0)
}

/// Complementary error function, Chebyshev fit with fractional error below 1.2e-7
/// (Press et al., Numerical Recipes, 2nd ed., §6.2, `erfcc`).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let polynomial = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let result = t * polynomial.exp();
    if x >= 0.0 {
        result
    } else {
        2.0 - result
    }
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    Some(if values.len() % 2 == 0 {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    })
}

/// 1.4826 × MAD of successive within-block differences, / √2 (a difference of two readings
/// has twice the variance of one).
fn noise(blocks: &[Vec<(f64, f64)>]) -> f64 {
    let mut differences: Vec<f64> = blocks
        .iter()
        .flat_map(|block| block.windows(2).map(|pair| pair[1].1 - pair[0].1))
        .collect();
    let Some(center) = median(&mut differences) else {
        return 0.0;
    };
    let mut deviations: Vec<f64> = differences.iter().map(|d| (d - center).abs()).collect();
    median(&mut deviations).unwrap_or(0.0) * 1.4826 / std::f64::consts::SQRT_2
}

/// Smallest non-zero change between successive readings of a block.
fn quantum(blocks: &[Vec<(f64, f64)>]) -> Option<u64> {
    blocks
        .iter()
        .flat_map(|block| block.windows(2))
        .map(|pair| (pair[1].1 - pair[0].1).abs())
        .filter(|d| *d > 0.0)
        .map(|d| d as u64)
        .min()
}

/// Three standard errors of a within-block least-squares slope, given the noise.
fn detectable_slope(blocks: &[Vec<(f64, f64)>], noise: f64) -> Option<f64> {
    let sxx: f64 = blocks
        .iter()
        .filter(|block| block.len() >= 2)
        .map(|block| {
            let mean = block.iter().map(|p| p.0).sum::<f64>() / block.len() as f64;
            block.iter().map(|p| (p.0 - mean).powi(2)).sum::<f64>()
        })
        .sum();
    (sxx > 0.0).then(|| 3.0 * noise / sxx.sqrt())
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

/// `+8.00 MiB`, `-2.00 MiB`, `0 B`.
pub fn signed_bytes(value: f64) -> String {
    let magnitude = Bytes(value.abs().round() as u64);
    if value <= -0.5 {
        format!("-{magnitude}")
    } else if value >= 0.5 {
        format!("+{magnitude}")
    } else {
        magnitude.to_string()
    }
}

/// `p = 0.014`, `p = 1.2e-4`, `p < 1e-6`.
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

    fn close(a: f64, b: f64, tolerance: f64) {
        assert!((a - b).abs() <= tolerance, "{a} is not {b} ± {tolerance}");
    }

    fn series(values: &[f64]) -> Vec<(f64, f64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (i as f64, *v))
            .collect()
    }

    #[test]
    fn mann_kendall_by_hand() {
        // 1..5: all 10 pairs increase; Var = 5·4·15/18 = 16.667; z = 9/√16.667 = 2.2045;
        // P(Z > 2.2045) = 0.01374 (normal table).
        let test = trend_test(&[series(&[1.0, 2.0, 3.0, 4.0, 5.0])]);
        assert_eq!(test.mann_kendall_s, 10);
        close(test.variance, 16.6667, 1e-3);
        close(test.z, 2.2045, 1e-3);
        close(test.p_value, 0.01374, 1e-4);
        close(test.slope_bytes_per_request, 1.0, 1e-12);
    }

    #[test]
    fn ties_reduce_the_variance() {
        // 1,1,2,2: S = 4; Var = (4·3·13 − 2·(2·1·9))/18 = 120/18 = 6.667; z = 3/2.582 = 1.162;
        // p = 0.1226.
        let test = trend_test(&[series(&[1.0, 1.0, 2.0, 2.0])]);
        assert_eq!(test.mann_kendall_s, 4);
        close(test.variance, 6.6667, 1e-3);
        close(test.p_value, 0.1226, 1e-3);
    }

    #[test]
    fn theil_sen_is_the_median_pairwise_slope() {
        // Slopes 2, 0.5, 4/3, −1, 1, 3 → sorted −1, 0.5, 1, 4/3, 2, 3 → median (1 + 4/3)/2.
        let test = trend_test(&[series(&[1.0, 3.0, 2.0, 5.0])]);
        close(test.slope_bytes_per_request, 7.0 / 6.0, 1e-12);
        assert_eq!(test.mann_kendall_s, 4);
    }

    #[test]
    fn blocks_ignore_a_step_between_them() {
        // Flat, then flat 100 higher: as one series a strong trend; as two blocks none.
        let low = series(&[10.0; 5]);
        let high = series(&[110.0; 5]);
        let joined: Vec<(f64, f64)> = [10.0; 5]
            .iter()
            .chain([110.0; 5].iter())
            .enumerate()
            .map(|(i, v)| (i as f64, *v))
            .collect();
        let naive = trend_test(&[joined]);
        assert_eq!(naive.mann_kendall_s, 25);
        assert!(naive.p_value < 0.01);
        let blocked = trend_test(&[low, high]);
        assert_eq!(blocked.mann_kendall_s, 0);
        assert_eq!(blocked.slope_bytes_per_request, 0.0);
    }

    #[test]
    fn normal_tail() {
        close(upper_tail(0.0), 0.5, 1e-7);
        close(upper_tail(1.96), 0.025, 1e-4);
        close(upper_tail(-1.0), 0.841_345, 1e-6);
        close(upper_tail(3.0), 0.001_35, 1e-5);
    }

    #[test]
    fn noise_ignores_a_linear_trend() {
        let leak = series(&[0.0, 8.0, 16.0, 24.0, 32.0, 40.0]);
        assert_eq!(noise(&[leak]), 0.0);
        // Differences 4, −4, 4, −4: median 0, MAD 4 → 4 × 1.4826 / √2 = 4.193.
        let jitter = series(&[0.0, 4.0, 0.0, 4.0, 0.0]);
        close(noise(&[jitter]), 4.1934, 1e-3);
    }

    #[test]
    fn formats() {
        assert_eq!(signed_bytes(8.0 * MIB as f64), "+8.00 MiB");
        assert_eq!(signed_bytes(-2.0 * MIB as f64), "-2.00 MiB");
        assert_eq!(signed_bytes(0.1), "0 B");
        assert_eq!(format_p(0.01374), "p = 0.014");
        assert_eq!(format_p(0.0001234), "p = 1.2e-4");
        assert_eq!(format_p(1e-9), "p < 1e-6");
    }

    fn request(phase: Phase, index: u32, chars: u64, mib: u64) -> ProbeRequest {
        ProbeRequest {
            repeat: 0,
            phase,
            index,
            slot: None,
            prompt_chars: chars,
            status: Some(200),
            latency_ms: 5,
            memory_bytes: Some(Bytes::from_mib(mib)),
            kv_cache_usage: None,
            preemptions_total: None,
            completion_tokens: None,
            error: None,
        }
    }

    fn expect(analysis: &GrowthAnalysis, verdict: GrowthVerdict) {
        assert_eq!(analysis.verdict, verdict, "{}", analysis.trend.reason);
    }

    /// The default protocol (3 warm-up, 10 identical, 10 alternating) with memory from `story`.
    fn protocol(story: impl Fn(usize, bool, bool) -> u64) -> Vec<ProbeRequest> {
        let mut requests = Vec::new();
        let mut n = 0;
        let mut long_seen = false;
        for (phase, count) in [(Phase::Warmup, 3), (Phase::Identical, 10)] {
            for index in 0..count {
                requests.push(request(phase, index, 100, story(n, false, long_seen)));
                n += 1;
            }
        }
        for index in 0..10 {
            let long = index % 2 == 1;
            long_seen |= long;
            let chars = if long { 4000 } else { 100 };
            requests.push(request(
                Phase::Alternating,
                index,
                chars,
                story(n, long, long_seen),
            ));
            n += 1;
        }
        requests
    }

    #[test]
    fn warmup_rise_then_flat_is_a_plateau() {
        let requests = protocol(|n, _, _| 1000 + 100 * (n.min(4) as u64));
        let analysis = analyze(&requests, Some(Bytes::from_mib(1000)), None);
        expect(&analysis, GrowthVerdict::Plateau);
        assert_eq!(analysis.plateau_bytes, Some(Bytes::from_mib(1400)));
        assert_eq!(analysis.warmup.warmup_growth_bytes, Some(200 * MIB as i64));
    }

    #[test]
    fn one_step_at_the_first_long_input_is_a_plateau() {
        let requests = protocol(|_, _, long_seen| if long_seen { 1512 } else { 1000 });
        let analysis = analyze(&requests, Some(Bytes::from_mib(1000)), None);
        expect(&analysis, GrowthVerdict::Plateau);
        let naive = analysis.trend.naive.unwrap();
        assert!(naive.p_value < ALPHA && naive.slope_bytes_per_request > 0.0);
        assert_eq!(analysis.steps.len(), 1);
        assert_eq!(analysis.steps[0].after_bytes, Bytes::from_mib(1512));
    }

    #[test]
    fn warmup_spilling_into_the_identical_phase_is_a_plateau() {
        // The rise stops before the alternating phase: the later half is flat.
        // +100 MiB with each of the first 8 requests: 3 warm-up, then 5 identical ones
        // (identical block 1400, 1500, 1600, 1700, then 1800 × 6: 30 of 57 pooled pairs rise,
        // so the median slope is positive; S = 30, p ≈ 0.0016).
        let requests = protocol(|n, _, _| 1000 + 100 * (n.min(7) as u64 + 1));
        let analysis = analyze(&requests, Some(Bytes::from_mib(1000)), None);
        let window = analysis.trend.window.clone().unwrap();
        assert!(
            window.p_value < ALPHA && window.slope_bytes_per_request > 0.0,
            "{window:?}"
        );
        expect(&analysis, GrowthVerdict::Plateau);
        assert!(analysis.trend.reason.contains("then stopped"));
        assert_eq!(analysis.trend.late.unwrap().slope_bytes_per_request, 0.0);
    }

    #[test]
    fn a_slow_leak_is_growth() {
        let requests = protocol(|n, _, _| 1000 + 8 * n as u64);
        let analysis = analyze(&requests, Some(Bytes::from_mib(1000)), None);
        expect(&analysis, GrowthVerdict::Growth);
        close(
            analysis.trend.window.unwrap().slope_bytes_per_request,
            8.0 * MIB as f64,
            1.0,
        );
    }

    #[test]
    fn large_jitter_is_inconclusive() {
        // Digits of π as jitter, 50 MiB each: up to 450 MiB around a flat level.
        const DIGITS: [u64; 23] = [
            3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6,
        ];
        let requests = protocol(|n, _, _| 1000 + DIGITS[n % 23] * 50);
        let analysis = analyze(&requests, None, None);
        expect(&analysis, GrowthVerdict::Inconclusive);
        assert!(analysis.trend.reason.contains("noisy"));
    }

    #[test]
    fn too_few_points_or_a_stop_are_inconclusive() {
        let requests = protocol(|_, _, _| 1000);
        let analysis = analyze(&requests[..8], None, None);
        assert_eq!(analysis.verdict, GrowthVerdict::Inconclusive);
        let analysis = analyze(&requests, None, Some("server stopped answering"));
        assert_eq!(analysis.verdict, GrowthVerdict::Inconclusive);
        assert_eq!(analysis.plateau_bytes, None);
    }

    #[test]
    fn a_leak_only_in_the_alternating_phase_is_growth() {
        // Flat through the identical phase, +8 MiB per request once alternation starts: the
        // identical block's 36 zero slopes outnumber the alternating blocks' 12 rising ones, so
        // the pooled median slope is 0; the alternating phase alone shows the leak.
        let requests = protocol(|n, _, _| 1000 + 8 * n.saturating_sub(13) as u64);
        let analysis = analyze(&requests, Some(Bytes::from_mib(1000)), None);
        assert_eq!(
            analysis
                .trend
                .window
                .clone()
                .unwrap()
                .slope_bytes_per_request,
            0.0
        );
        expect(&analysis, GrowthVerdict::Growth);
        assert!(analysis.trend.reason.contains("alternating"));
        let alternating = &analysis.trend.phases[1];
        assert_eq!(alternating.phase, Phase::Alternating);
        close(
            alternating.test.slope_bytes_per_request,
            8.0 * MIB as f64,
            1.0,
        );
    }

    #[test]
    fn a_step_then_a_slow_leak_is_growth() {
        // The cache steps up 512 MiB at the first long input, then 1 MiB leaks per request.
        let requests = protocol(
            |n, _, long_seen| {
                if long_seen {
                    1512 + n as u64
                } else {
                    1000
                }
            },
        );
        let analysis = analyze(&requests, Some(Bytes::from_mib(1000)), None);
        expect(&analysis, GrowthVerdict::Growth);
        assert_eq!(analysis.steps.len(), 1);
    }

    #[test]
    fn a_cache_growing_with_the_first_long_inputs_then_flat_is_a_plateau() {
        // +64 MiB at each of the first two long inputs (requests 14 and 16), then flat.
        let requests = protocol(|n, _, _| 1000 + 64 * (n.saturating_sub(12) as u64 / 2).min(2));
        let analysis = analyze(&requests, Some(Bytes::from_mib(1000)), None);
        expect(&analysis, GrowthVerdict::Plateau);
    }

    #[test]
    fn a_leak_on_four_long_inputs_only_is_inconclusive() {
        // +8 MiB × request number on long inputs only: four long readings cannot reach
        // p < 0.01, but calling it "not a leak" would be wrong.
        let requests = protocol(|n, long, _| if long { 1000 + 8 * n as u64 } else { 1000 });
        let analysis = analyze(&requests, Some(Bytes::from_mib(1000)), None);
        expect(&analysis, GrowthVerdict::Inconclusive);
        assert!(analysis.trend.reason.contains("weak rising trend"));
    }

    #[test]
    fn a_decreasing_series_is_not_growth() {
        let requests = protocol(|n, _, _| 2000 - 8 * n as u64);
        let analysis = analyze(&requests, Some(Bytes::from_mib(2000)), None);
        assert_eq!(analysis.verdict, GrowthVerdict::Plateau);
    }
}
