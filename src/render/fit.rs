//! Render `oomdoc fit` output.
