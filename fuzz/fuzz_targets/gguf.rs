//! Feeds arbitrary bytes as a GGUF file through the header parser, as a whole file and as a
//! prefix of a much larger (sparse-looking) one. Must never panic; counts are checked before
//! anything is stored. Seed: headers from `oomdoc::parse::checkpoint::gguf::writer`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use oomdoc::parse::checkpoint::gguf::{parse, GgufError};

fuzz_target!(|data: &[u8]| {
    let _ = parse(data, data.len() as u64);
    // The same bytes as the first part of a 1 TiB file: the parser may only ask for more.
    match parse(data, 1 << 40) {
        Err(GgufError::NeedMore { bytes }) => assert!(bytes > data.len() as u64),
        _ => {}
    }
});
