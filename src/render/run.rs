//! Render `oomdoc run` output.
