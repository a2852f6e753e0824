//! Render `oomdoc diff` output.
