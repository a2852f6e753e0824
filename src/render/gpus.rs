//! Render `oomdoc gpus` output.
