//! The `oomdoc` binary: everything lives in the library (`oomdoc::cli::main`).

fn main() -> std::process::ExitCode {
    oomdoc::cli::main()
}
