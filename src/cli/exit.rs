//! Exit codes: 0 a report was produced (whatever the verdict), 1 the input held nothing to
//! diagnose, 2 usage error, unreadable input, a required source failed, or a bug.
//! `oomdoc run` is the exception: it exits with the child's code.

use std::process::ExitCode;

/// What a command ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// A report was produced.
    Success,
    /// The input was read but held nothing to diagnose.
    NothingFound,
    /// Usage error, unreadable input, a required source failed.
    Error,
    /// A specific code (e.g. `oomdoc run` passing on its child's exit code).
    Code(u8),
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        match status {
            ExitStatus::Success => ExitCode::from(0),
            ExitStatus::NothingFound => ExitCode::from(1),
            ExitStatus::Error => ExitCode::from(2),
            ExitStatus::Code(code) => ExitCode::from(code),
        }
    }
}
