//! The parts of `oomdoc probe` that are not its command line. So far: where memory is read
//! (`--memory-from`), parsed once into a typed spec.

pub mod memory;
