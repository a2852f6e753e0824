//! Analyse cause, evidence, next steps and owner summary (R2, R19).
