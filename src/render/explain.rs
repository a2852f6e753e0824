//! Render `oomdoc explain` output.
