//! Render `oomdoc snapshot` output.
