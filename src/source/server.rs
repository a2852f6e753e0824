//! OpenAI-compatible HTTP servers and metrics endpoints (`oomdoc probe`).
