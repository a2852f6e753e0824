//! Feeds arbitrary bytes as a log through `explain` and every renderer of its report. Must
//! never panic and stay linear in the input. Seed: `tests/fixtures/oom_text/`,
//! `tests/fixtures/engine_log/`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use oomdoc::analyze::explain::explain_reader;
use oomdoc::render::{explain, style::Style};

fuzz_target!(|data: &[u8]| {
    if let Ok(report) = explain_reader(data) {
        let _ = explain::text(&report, Style::new(false), false);
        let _ = explain::text(&report, Style::new(true), true);
        let _ = explain::markdown(&report, false);
        let _ = explain::markdown(&report, true);
        let _ = explain::json(&report);
    }
});
