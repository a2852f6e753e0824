//! Feeds arbitrary bytes through the snapshot pipeline: pickle decoder with tight limits,
//! snapshot reader, analysis and every renderer. Must never panic or allocate without bound.
//! Seed corpus: `tests/fixtures/h200-torch2.11/snap/*.pickle`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use oomdoc::analyze::fragmentation::{analyze, Options};
use oomdoc::parse::pickle::Limits;
use oomdoc::parse::torch_snapshot::read_with_limits;
use oomdoc::render::{snapshot, style::Style};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_depth: 64,
        max_container_len: 1 << 16,
        max_string_bytes: 1 << 20,
        max_memo: 1 << 20,
        max_objects: 1 << 22,
        max_stack: 1 << 16,
        max_memory_bytes: 256 << 20,
        memory_per_input_byte: 8,
    };
    if let Ok(decoded) = read_with_limits(data, limits) {
        let options = Options {
            timeline_points: 64,
            ..Options::default()
        };
        let report = analyze(&decoded, &options);
        let _ = snapshot::text(&report, Style::new(false));
        let _ = snapshot::markdown(&report);
        let _ = snapshot::html(&report);
        let _ = snapshot::json(&report);
    }
});
