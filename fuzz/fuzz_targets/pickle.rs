//! Feeds arbitrary bytes through the snapshot pipeline: pickle decoder with tight limits,
//! snapshot reader, analysis and every renderer. Must never panic or allocate without bound.
//! The same bytes also go through the parallel decoder (a file, read on several threads with
//! the pre-scan cut anywhere it may be), which must give the sequential decoder's snapshot or
//! error. Seed corpus: `tests/fixtures/h200-torch2.11/snap/*.pickle`.

#![no_main]

use std::io::{Seek, SeekFrom, Write};

use libfuzzer_sys::fuzz_target;
use oomdoc::analyze::fragmentation::{analyze, Options};
use oomdoc::parse::pickle::{Limits, Parallel};
use oomdoc::parse::torch_snapshot::{read_file, read_with_limits};
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
    let sequential = read_with_limits(data, limits);
    if let Ok(file) = tempfile::tempfile() {
        let mut writer = &file;
        if writer.write_all(data).is_ok() && writer.seek(SeekFrom::Start(0)).is_ok() {
            let threads = 2 + usize::from(data.first().copied().unwrap_or(0) % 3);
            let parallel = Parallel {
                threads,
                chunks: threads + usize::from(data.last().copied().unwrap_or(0) % 5),
                scan_split_bytes: 1,
            };
            let parallel = read_file(&file, limits, parallel);
            assert_eq!(
                parallel.as_ref().map(|s| format!("{s:?}")).map_err(|e| e.to_string()),
                sequential.as_ref().map(|s| format!("{s:?}")).map_err(|e| e.to_string()),
            );
        }
    }
    if let Ok(decoded) = sequential {
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
