//! CLI tests of `oomdoc explain`.
