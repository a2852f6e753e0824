//! Analyse plateau vs growth from probe samples (R13, R14).
