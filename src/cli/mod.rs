//! The command line: parse arguments, resolve settings, run one verb, map the outcome to an
//! exit code. Only `cli` and `source` do I/O; `cli::output` is the only writer to stdout/stderr.

pub mod args;
pub mod commands;
pub mod exit;
pub mod output;
pub mod settings;

use std::process::ExitCode;

use clap::Parser;

pub use exit::ExitStatus;
use output::Output;

/// Entry point of the binary: parse, run, print errors, return the exit code.
pub fn main() -> ExitCode {
    let args = match args::Cli::try_parse() {
        Ok(args) => args,
        Err(error) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let code = if error.use_stderr() { 2 } else { 0 };
            output::clap_error(&error);
            return ExitCode::from(code);
        }
    };
    let mut output = Output::new(args.global.color);
    let status = match run(args, &mut output) {
        Ok(status) => status,
        Err(error) => {
            if is_broken_pipe(&error) {
                // A closed pipe (`oomdoc … | head`) is not an error (ripgrep does the same).
                return ExitCode::SUCCESS;
            }
            output.error(&error);
            ExitStatus::Error
        }
    };
    status.into()
}

/// Runs one verb. Reads like the architecture: args → settings → sources → parse → analyses → render.
pub fn run(args: args::Cli, output: &mut Output) -> anyhow::Result<ExitStatus> {
    use args::Command;
    match args.command {
        Command::Explain(command) => commands::explain::run(command, output),
        Command::Gpus(command) => commands::gpus::run(command, output),
        Command::Fit(command) => commands::fit::run(command, output),
        Command::Snapshot(command) => commands::snapshot::run(command, output),
        Command::Run(command) => commands::run::run(command, output),
        Command::Probe(command) => commands::probe::run(command, output),
        Command::Report(command) => commands::report::run(command, output),
        Command::Diff(command) => commands::diff::run(command, output),
        Command::Exporter(command) => commands::exporter::run(command, output),
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
