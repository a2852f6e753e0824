//! The integration test binary (one, so the suite links once).

mod cli;
mod layers;
