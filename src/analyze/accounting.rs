//! Analyse memory accounting layers: allocated, reserved, process in use, free (R2, R3).
