//! Feeds arbitrary text as `nvidia-smi -q -x` XML through the parser and every GPU renderer.
//! Must never panic, overflow the stack or expand entities. Seed:
//! `tests/fixtures/h200-torch2.11/nvidia-smi-q.xml`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use oomdoc::parse::nvidia_smi;
use oomdoc::render::{gpus, style::Style};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(inventory) = nvidia_smi::parse(text) {
        let _ = gpus::text(&inventory, Style::new(false));
        let _ = gpus::markdown(&inventory);
        let _ = gpus::html(&inventory);
        let _ = gpus::json(&inventory);
    }
});
