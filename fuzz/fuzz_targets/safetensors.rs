//! Feeds arbitrary bytes as a whole safetensors file (8-byte length + JSON header + data)
//! through the header checks and parser. Must never panic or allocate more than the header.
//! Seed: any `.safetensors` header, e.g. one written by `tests/cli/fit.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use oomdoc::parse::checkpoint::safetensors::{header_length, parse_header};

fuzz_target!(|data: &[u8]| {
    let file_bytes = data.len() as u64;
    if let Ok(length) = header_length(data, file_bytes) {
        // `header_length` bounds `length` by the file size: the slice below exists.
        let Some(json) = data.get(8..8 + length as usize) else {
            panic!("header_length accepted {length} bytes of a {file_bytes}-byte file");
        };
        if let Ok(header) = parse_header(json, file_bytes - 8 - length) {
            for tensor in &header.tensors {
                assert!(tensor.begin <= tensor.end && tensor.end <= header.data_bytes);
                let _ = tensor.expected_bytes();
            }
        }
    }
});
