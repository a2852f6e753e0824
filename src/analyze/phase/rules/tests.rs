//! Unit tests of the frame rule table (`rules.rs`): each block's rules fire on their
//! framework's file and stay silent on look-alikes elsewhere.
//! The tests are kept by concern in `tests/`.

mod apps;
mod frameworks;
mod serving;
mod stages;
