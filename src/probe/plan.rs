//! The request plan of the growth test, as data: which request comes when, in which
//! phase and with how long an input. Pure: the runner sends what the plan lists and reads
//! memory after each entry.
//!
//! One cycle: a `warmup` phase recorded separately, ten `identical` short requests, ten
//! `alternating` short and long, then an optional `concurrent` phase (rounds of N parallel
//! requests, short and long in turn).

use crate::model::probe::{ProbePhase, ProbeSettings};

/// One entry of the plan: a request (or a round of parallel ones) followed by a reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRequest {
    /// Repetition (or soak cycle) this entry belongs to, from 0.
    pub repeat: u32,
    /// Phase of the protocol.
    pub phase: ProbePhase,
    /// Position in its phase, from 0 (the round, in the concurrent phase).
    pub index: u32,
    /// Input length, characters.
    pub prompt_chars: u64,
    /// Requests sent at once: 1 for the sequential phases, N in a concurrent round.
    pub parallel: u32,
}

/// One cycle of the protocol, labelled `repeat`.
pub fn cycle(settings: &ProbeSettings, repeat: u32) -> Vec<PlannedRequest> {
    let short = settings.short_prompt_chars;
    let long = settings.long_prompt_chars;
    let entry = |phase, index, prompt_chars, parallel| PlannedRequest {
        repeat,
        phase,
        index,
        prompt_chars,
        parallel,
    };
    let alternate = |index: u32| if index % 2 == 0 { short } else { long };
    let mut plan = Vec::new();
    plan.extend((0..settings.warmup_requests).map(|i| entry(ProbePhase::Warmup, i, short, 1)));
    plan.extend((0..settings.phase_requests).map(|i| entry(ProbePhase::Identical, i, short, 1)));
    plan.extend(
        (0..settings.phase_requests).map(|i| entry(ProbePhase::Alternating, i, alternate(i), 1)),
    );
    if settings.concurrency > 1 {
        plan.extend((0..settings.concurrent_rounds).map(|round| {
            entry(
                ProbePhase::Concurrent,
                round,
                alternate(round),
                settings.concurrency,
            )
        }));
    }
    plan
}

/// The whole protocol: `settings.repeat` cycles, labelled 0, 1, ….
pub fn protocol(settings: &ProbeSettings) -> Vec<PlannedRequest> {
    (0..settings.repeat)
        .flat_map(|repeat| cycle(settings, repeat))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(concurrency: u32, repeat: u32) -> ProbeSettings {
        ProbeSettings {
            endpoint: "completions".to_string(),
            model: "m".to_string(),
            model_from: "command line".to_string(),
            context_tokens: None,
            warmup_requests: 3,
            phase_requests: 10,
            concurrency,
            concurrent_rounds: if concurrency > 1 { 6 } else { 0 },
            repeat,
            short_prompt_chars: 64,
            long_prompt_chars: 2048,
            max_tokens: 16,
            request_timeout_s: 60,
            time_limit_s: 600,
        }
    }

    #[test]
    fn one_cycle_is_warmup_identical_alternating_then_concurrent_rounds() {
        let plan = cycle(&settings(4, 1), 2);
        assert_eq!(plan.len(), 3 + 10 + 10 + 6);
        assert!(plan.iter().all(|entry| entry.repeat == 2));
        let phases: Vec<ProbePhase> = plan.iter().map(|e| e.phase).collect();
        assert_eq!(phases[..3], [ProbePhase::Warmup; 3]);
        assert_eq!(phases[3..13], [ProbePhase::Identical; 10]);
        assert_eq!(phases[13..23], [ProbePhase::Alternating; 10]);
        assert_eq!(phases[23..], [ProbePhase::Concurrent; 6]);
        let alternating: Vec<u64> = plan[13..23].iter().map(|e| e.prompt_chars).collect();
        assert_eq!(
            alternating,
            [64, 2048, 64, 2048, 64, 2048, 64, 2048, 64, 2048]
        );
        assert!(plan[..23].iter().all(|e| e.parallel == 1));
        assert!(plan[23..].iter().all(|e| e.parallel == 4));
        assert!(plan[..13].iter().all(|e| e.prompt_chars == 64));
    }

    #[test]
    fn the_protocol_repeats_the_cycle_and_concurrency_one_adds_no_phase() {
        let plan = protocol(&settings(1, 3));
        assert_eq!(plan.len(), 3 * 23);
        assert_eq!(plan[23].repeat, 1);
        assert_eq!(plan[23].phase, ProbePhase::Warmup);
        assert!(plan.iter().all(|e| e.phase != ProbePhase::Concurrent));
        assert_eq!(
            protocol(&settings(1, 3))[46..],
            cycle(&settings(1, 3), 2)[..]
        );
    }
}
