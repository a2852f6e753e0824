//! Analyse weights and KV-cache budget against a card (R11, R12).
