//! CLI tests of `oomdoc run`.
