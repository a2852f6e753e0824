//! CLI tests: run the real binary and check exit code, stdout and stderr.

#![allow(
    dead_code,
    reason = "helpers shared by test modules; not every module uses each"
)]

use std::path::PathBuf;
use std::process::{Command, Output};

mod corpus;
mod diff;
mod docs;
mod engines;
mod explain;
mod exporter;
mod fit;
mod fit_engines;
mod gpus;
mod launch;
mod probe;
mod report;
mod run;
mod run_host;
mod run_hostile;
mod snapshot;
mod usage;
mod width;

/// The oomdoc binary under test, with a clean environment for colour and GPU sources.
pub fn oomdoc() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_oomdoc"));
    command
        .env_remove("OOMDOC_GPU_FROM")
        .env_remove("OOMDOC_HOST_FROM")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env_remove("CUDA_DEVICE_ORDER")
        .env_remove("NVIDIA_VISIBLE_DEVICES")
        .env_remove("FORCE_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("NO_COLOR", "1");
    command
}

/// A fixture path under `tests/fixtures/`.
pub fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(relative)
}

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn version_lists_features() {
    let output = oomdoc().arg("--version").output().unwrap();
    assert!(output.status.success());
    assert!(stdout(&output).starts_with("oomdoc 0.1.0 (+nvml)"));
}

#[test]
fn unknown_verb_is_a_usage_error() {
    let output = oomdoc().arg("frobnicate").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
}
