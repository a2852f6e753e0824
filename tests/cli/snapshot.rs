//! CLI tests of `oomdoc snapshot`.
