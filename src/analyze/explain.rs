//! Analyse the streaming explain pipeline: text → OOMs, timeline, phase, verdict.
