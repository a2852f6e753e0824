//! CLI tests of `oomdoc report`.
