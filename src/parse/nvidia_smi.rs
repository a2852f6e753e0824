//! Parse `nvidia-smi -q -x` XML → inventory (R9).
