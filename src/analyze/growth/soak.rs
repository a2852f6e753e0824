//! `probe --soak`: readings of a long run kept in a bounded number of slots, and the verdict
//! on them.

use super::*;

/// Fewest slots after the first cycle for a soak verdict.
pub const SOAK_MIN_SLOTS: usize = 6;

/// Compact readings of a soak run: one [`SoakSlot`] per protocol cycle until `max_slots`,
/// then neighbours are merged pairwise, so memory stays O(`max_slots`) however long the run.
/// The first cycle (warm-up, first long input, first concurrent round) stays alone in slot 0
/// and is never judged.
#[derive(Debug, Clone)]
pub struct SoakAccumulator {
    slots: Vec<SoakSlot>,
    max_slots: usize,
    cycles_per_slot: u32,
    cycles: u32,
    readings: u64,
    requests: u64,
}

impl SoakAccumulator {
    /// An empty run keeping at most `max_slots` slots (at least 8).
    pub fn new(max_slots: usize) -> SoakAccumulator {
        let max_slots = max_slots.max(8);
        SoakAccumulator {
            slots: Vec::with_capacity(max_slots + 1),
            max_slots,
            cycles_per_slot: 1,
            cycles: 0,
            readings: 0,
            requests: 0,
        }
    }

    /// Adds one protocol cycle; its requests can be dropped afterwards.
    pub fn push_cycle(&mut self, requests: &[ProbeRequest]) {
        let judged = |value: fn(&ProbeRequest) -> Option<Bytes>| -> Vec<f64> {
            requests
                .iter()
                .filter(|r| r.phase != Phase::Warmup)
                .filter(|r| r.status.is_some_and(|s| (200..300).contains(&s)))
                .filter_map(value)
                .map(|b| b.get() as f64)
                .collect()
        };
        let mut gpu = judged(|r| r.memory_bytes);
        let mut host = judged(|r| r.host_memory_bytes);
        self.requests += requests.len() as u64;
        let cycle = self.cycles;
        self.cycles += 1;
        let (Some(level), Some(low), Some(high)) = (
            median(&mut gpu.clone()),
            gpu.iter().copied().reduce(f64::min),
            gpu.iter().copied().reduce(f64::max),
        ) else {
            return;
        };
        self.readings += gpu.len() as u64;
        let slot = SoakSlot {
            first_cycle: cycle,
            cycles: 1,
            first_request: self.requests - requests.len() as u64,
            last_request: self.requests,
            readings: gpu.len() as u64,
            level_bytes: level,
            min_bytes: low as u64,
            max_bytes: high as u64,
            host_level_bytes: median(&mut host),
        };
        gpu.clear();
        // Slot 0 is the first cycle alone; later cycles fill the last slot up to
        // `cycles_per_slot`.
        let several = self.slots.len() > 1;
        match self.slots.last_mut() {
            Some(last) if several && last.cycles < self.cycles_per_slot => merge_into(last, &slot),
            _ => self.slots.push(slot),
        }
        if self.slots.len() > self.max_slots {
            let first = self.slots.remove(0);
            let mut merged: Vec<SoakSlot> = Vec::with_capacity(self.max_slots + 1);
            merged.push(first);
            for pair in self.slots.chunks(2) {
                let mut slot = pair[0].clone();
                if let Some(second) = pair.get(1) {
                    merge_into(&mut slot, second);
                }
                merged.push(slot);
            }
            self.slots = merged;
            self.cycles_per_slot = self.cycles_per_slot.saturating_mul(2);
        }
    }

    /// Slots held now (never more than `max_slots`).
    pub fn slots(&self) -> &[SoakSlot] {
        &self.slots
    }

    /// The verdict from the whole run.
    pub fn analyze(&self) -> SoakAnalysis {
        let judged = self.slots.get(1..).unwrap_or_default();
        let position = |slot: &SoakSlot| (slot.first_request + slot.last_request) as f64 / 2.0;
        let series: Vec<(f64, f64)> = judged
            .iter()
            .map(|s| (position(s), s.level_bytes))
            .collect();
        let host_series: Vec<(f64, f64)> = judged
            .iter()
            .filter_map(|s| s.host_level_bytes.map(|h| (position(s), h)))
            .collect();
        let trend = (series.len() >= 2).then(|| trend_test(std::slice::from_ref(&series)));
        let host_trend =
            (host_series.len() >= 2).then(|| trend_test(std::slice::from_ref(&host_series)));
        let noise_bytes = noise(std::slice::from_ref(&series));
        let min_growth_bytes = MIN_GROWTH.max(3.0 * noise_bytes);
        let span = span(series.iter().map(|p| p.0)) as f64;
        let grows = |test: &Option<TrendTest>, points: &[(f64, f64)], floor: f64| {
            let Some(test) = test else { return false };
            let (late, _) = later_half(&[points.to_vec()]);
            test.p_value < ALPHA
                && test.slope_bytes_per_request > 0.0
                && test.slope_bytes_per_request * span >= floor
                && late.is_some_and(|l| l.slope_bytes_per_request > 0.0)
        };
        let host_floor = MIN_HOST_GROWTH.max(3.0 * noise(std::slice::from_ref(&host_series)));
        let (verdict, reason) = if series.len() < SOAK_MIN_SLOTS {
            (
                GrowthVerdict::Inconclusive,
                format!(
                    "only {} cycles after the first; a soak verdict needs at least {SOAK_MIN_SLOTS} (run longer)",
                    series.len()
                ),
            )
        } else if grows(&trend, &series, min_growth_bytes) {
            let slope = trend.as_ref().map_or(0.0, |t| t.slope_bytes_per_request);
            (
                GrowthVerdict::Growth,
                format!(
                    "memory kept rising over the soak: {} per request (Theil–Sen over {} cycle levels), {} over {} requests, Mann–Kendall {}",
                    signed_bytes(slope),
                    series.len(),
                    signed_bytes(slope * span),
                    span as u64,
                    format_p(trend.as_ref().map_or(1.0, |t| t.p_value))
                ),
            )
        } else if grows(&host_trend, &host_series, host_floor) {
            let slope = host_trend
                .as_ref()
                .map_or(0.0, |t| t.slope_bytes_per_request);
            (
                GrowthVerdict::HostGrowth,
                format!(
                    "host memory of the server kept rising over the soak: {} per request, {} over {} requests; GPU memory stayed level",
                    signed_bytes(slope),
                    signed_bytes(slope * span),
                    span as u64
                ),
            )
        } else {
            let first = series.first().map_or(0.0, |p| p.1);
            let last = series.last().map_or(0.0, |p| p.1);
            (
                GrowthVerdict::Plateau,
                format!(
                    "no growth over the soak: cycle levels {} → {} across {} requests, Mann–Kendall {} (growth needs p < {ALPHA} and at least {})",
                    Bytes(first as u64),
                    Bytes(last as u64),
                    span as u64,
                    format_p(trend.as_ref().map_or(1.0, |t| t.p_value)),
                    Bytes(min_growth_bytes as u64)
                ),
            )
        };
        SoakAnalysis {
            verdict,
            reason,
            cycles: self.cycles,
            readings: self.readings,
            slots: self.slots.clone(),
            trend,
            host_trend,
            noise_bytes,
            min_growth_bytes,
        }
    }
}

/// Merges `other` (the next cycles) into `slot`, weighting levels by cycles.
fn merge_into(slot: &mut SoakSlot, other: &SoakSlot) {
    let total = f64::from(slot.cycles + other.cycles);
    let weight =
        |a: f64, b: f64| (a * f64::from(slot.cycles) + b * f64::from(other.cycles)) / total;
    slot.level_bytes = weight(slot.level_bytes, other.level_bytes);
    slot.host_level_bytes = match (slot.host_level_bytes, other.host_level_bytes) {
        (Some(a), Some(b)) => Some(weight(a, b)),
        (a, b) => a.or(b),
    };
    slot.cycles += other.cycles;
    slot.last_request = other.last_request;
    slot.readings += other.readings;
    slot.min_bytes = slot.min_bytes.min(other.min_bytes);
    slot.max_bytes = slot.max_bytes.max(other.max_bytes);
}
