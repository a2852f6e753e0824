//! Unit tests of the frame rule table (`rules.rs`): each block's rules fire on their
//! framework's file and stay silent on look-alikes elsewhere.
//! The tests are kept by concern in `tests/`.

mod apps;
mod frameworks;
mod serving;
mod stages;

use crate::analyze::phase::{read_frames, Frame};
use crate::model::explain::Phase;

/// One traceback frame as the parser gives it: its line, function and file, no call shown.
fn frame(line: u64, function: &str, file: &str) -> Frame {
    Frame {
        line,
        function: function.to_string(),
        file: file.to_string(),
        called: false,
        code: None,
    }
}

/// The phase the frames decide, read outermost first as a traceback prints them.
fn decided(frames: &[(&str, &str)]) -> Option<Phase> {
    let frames: Vec<Frame> = (frames.iter().enumerate())
        .map(|(at, (function, file))| frame(at as u64 + 1, function, file))
        .collect();
    read_frames(&frames).decided.map(|(_, rule)| rule.phase)
}

/// The same, where a wrapper decides when nothing else does.
fn decided_or_wrapper(frames: &[(&str, &str)]) -> Option<Phase> {
    let frames: Vec<Frame> = (frames.iter().enumerate())
        .map(|(at, (function, file))| frame(at as u64 + 1, function, file))
        .collect();
    let verdict = read_frames(&frames);
    (verdict.decided.or(verdict.wrapper)).map(|(_, rule)| rule.phase)
}
