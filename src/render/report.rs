//! Render `oomdoc report` output.
