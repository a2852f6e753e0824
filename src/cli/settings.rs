//! Settings resolved from arguments plus the environment and the terminal (ripgrep's
//! LowArgs → HiArgs step). This is where `NO_COLOR`, `FORCE_COLOR` and tty detection live.

use std::io::IsTerminal;

use super::args::ColorChoice;
use crate::env_vars;

/// Decides whether text output to stdout gets ANSI colour.
///
/// `--color always|never` wins; in `auto`: `NO_COLOR` (non-empty) → never, then
/// `FORCE_COLOR` (non-empty) / `CLICOLOR_FORCE` (non-zero) → always, else colour only when
/// stdout is a terminal and `TERM` is not `dumb`.
pub fn resolve_color(choice: ColorChoice) -> bool {
    let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if var(env_vars::NO_COLOR).is_some() {
                return false;
            }
            if var(env_vars::FORCE_COLOR).is_some()
                || var(env_vars::CLICOLOR_FORCE).is_some_and(|value| value != "0")
            {
                return true;
            }
            let dumb = std::env::var(env_vars::TERM).is_ok_and(|term| term == "dumb");
            std::io::stdout().is_terminal() && !dumb
        }
    }
}

/// Whether stderr is a terminal (progress bars are drawn only then).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}
