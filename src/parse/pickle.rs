//! Parse a data-only pickle decoder: never executes anything (R15).
