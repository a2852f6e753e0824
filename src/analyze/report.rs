//! Analyse the machine report model (R16, R18, R19).
