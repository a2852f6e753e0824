//! CLI tests of `oomdoc diff`.
