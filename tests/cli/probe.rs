//! CLI tests of `oomdoc probe`.
