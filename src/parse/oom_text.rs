//! Parse OOM message families → figures in exact bytes (R1).
