//! Render `oomdoc probe` output.
