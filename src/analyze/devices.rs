//! Analyse devices and processes: CUDA numbering, other jobs, orphans (R9, R10).
