//! Parse PyTorch memory snapshot schema (R15).
