//! Analyse fragmentation vs capacity from allocator state (R15).
