//! Parse engine log lines → timeline events (R5).
