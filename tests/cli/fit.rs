//! CLI tests of `oomdoc fit`.
