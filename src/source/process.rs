//! Child processes: spawning, signal forwarding, exit codes (`oomdoc run`).
