//! CLI tests of `oomdoc gpus`.
