//! `oomdoc explain [FILE ...]`: read an OOM text or a whole engine log (files, `-` or stdin),
//! say what failed, in which phase, and why.
//!
//! Several files are read in order as one stream (like `cat`), so a traceback and the engine
//! log it belongs to can be given together. Exit 0 when a failure was explained, 1 when the
//! input held nothing to diagnose (or was empty), 2 when an input could not be read or is not
//! text.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::analyze::explain::stream::{feed_file, feed_with, Tiers};
use crate::analyze::explain::{has_findings, Explainer};
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::error::HintedError;
use crate::model::explain::ExplainReport;
use crate::redact::Redactor;
use crate::render::style::Style;
use crate::source::file::{self, TextInput};
use crate::source::process::local_identity;

/// Arguments of `oomdoc explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Log or error-text files (plain or gzip); `-` or none reads stdin
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Say what each memory figure means, and quote long log lines whole instead of cut
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Parse every line of a long log (slower). By default a log over 8 MiB is parsed only at
    /// its start, its end and around each failure or engine restart; the rest is searched for
    /// failure messages only, and the timeline says which lines
    #[arg(long)]
    pub every_line: bool,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What to say on stderr before reading stdin: a terminal there means a person is about to
/// paste, and would otherwise wait on a silent prompt. Nothing when stdin is a pipe or a file.
fn paste_prompt(stdin_is_terminal: bool) -> Option<&'static str> {
    if !stdin_is_terminal {
        return None;
    }
    Some(if cfg!(windows) {
        "reading stdin: paste the error text or log, then press Ctrl-Z and Enter on an empty line"
    } else {
        "reading stdin: paste the error text or log, then press Ctrl-D on an empty line"
    })
}

/// Reads one input into `explainer` as `oomdoc explain` does (gzip and UTF-16 undone, long logs
/// read in tiers, a plain file read in place); `note` hears what a person should know about
/// the input. Returns the bytes read.
fn feed(
    explainer: &mut Explainer,
    input: TextInput,
    name: &str,
    tiers: Tiers,
    note: &mut dyn FnMut(&str),
) -> anyhow::Result<u64> {
    match input {
        TextInput::File { file, start } => feed_file(explainer, &file, start, name, tiers),
        TextInput::Stream(reader, encoding) => {
            if let Some(encoding) = encoding {
                note(&format!(
                    "`{name}` is {} text, read as UTF-8",
                    encoding.name()
                ));
            }
            feed_with(explainer, reader, name, tiers)
        }
    }
}

/// Standard input as `oomdoc explain` reads it (UTF-16 and other encodings converted).
fn stdin_text() -> anyhow::Result<TextInput> {
    let (reader, encoding) = file::text(file::stdin()).context("failed to read `<stdin>`")?;
    Ok(TextInput::Stream(reader, encoding))
}

/// The finished report, redacted: quoted log lines, paths and names are redacted before any
/// format sees them.
fn redacted(explainer: Explainer) -> anyhow::Result<ExplainReport> {
    let (home, user) = local_identity();
    Redactor::new(home, user)
        .typed(&explainer.finish())
        .context("failed to redact the report")
}

/// The report in `format` (HTML is refused before any input is read).
fn render(
    report: &ExplainReport,
    format: Format,
    style: Style,
    verbose: bool,
) -> anyhow::Result<Vec<u8>> {
    Ok(match format {
        Format::Json => {
            crate::render::explain::json(report).context("failed to serialise the report")?
        }
        Format::Markdown => crate::render::explain::markdown(report, verbose),
        Format::Text | Format::Html => crate::render::explain::text(report, style, verbose),
    })
}

/// What `oomdoc explain [-v] FILE` writes on stdout for one file in `format`, without colour
/// and without the notes it writes on stderr, and whether it found anything to diagnose: the
/// command's own steps in one call, for tools and tests that explain many files in one
/// process (the command itself starts once per run and builds its scanners each time).
pub fn explain_file(path: &Path, format: Format, verbose: bool) -> anyhow::Result<(Vec<u8>, bool)> {
    let mut explainer = Explainer::new();
    let name = path.display().to_string();
    feed(
        &mut explainer,
        file::open_text(path)?,
        &name,
        Tiers::DEFAULT,
        &mut |_| {},
    )?;
    let report = redacted(explainer)?;
    let bytes = render(&report, format, Style::new(false), verbose)?;
    Ok((bytes, has_findings(&report)))
}

/// Runs `oomdoc explain`.
pub fn run(args: ExplainArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    if args.output.format() == Format::Html {
        return Err(HintedError::new(
            "`oomdoc explain` writes no HTML report",
            "use `--format text`, `--format markdown` or `--json`",
        )
        .into());
    }
    let inputs: Vec<PathBuf> = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.files.clone()
    };
    let mut explainer = Explainer::new();
    let mut total = 0u64;
    for path in &inputs {
        let (reader, name) = if path == Path::new("-") {
            if let Some(prompt) = paste_prompt(std::io::stdin().is_terminal()) {
                output.note(prompt);
            }
            (stdin_text()?, "<stdin>".to_string())
        } else {
            (file::open_text(path)?, path.display().to_string())
        };
        let tiers = if args.every_line {
            Tiers::FULL
        } else {
            Tiers::DEFAULT
        };
        let read = feed(&mut explainer, reader, &name, tiers, &mut |note| {
            output.note(note)
        })?;
        if read == 0 && inputs.len() > 1 {
            output.warn(&format!("`{name}` is empty"));
        }
        total += read;
    }
    if total == 0 {
        let names: Vec<String> = inputs
            .iter()
            .map(|path| {
                if path == Path::new("-") {
                    "<stdin>".to_owned()
                } else {
                    path.display().to_string()
                }
            })
            .collect();
        output.note(&format!(
            "nothing to diagnose: `{}` is empty",
            names.join("`, `")
        ));
        return Ok(ExitStatus::NothingFound);
    }
    let report = redacted(explainer)?;
    let found = has_findings(&report);
    let style = Style::new(output.color_for(&args.output));
    let bytes = render(&report, args.output.format(), style, args.verbose)?;
    output.report(&args.output, &bytes)?;
    if found {
        Ok(ExitStatus::Success)
    } else {
        output.note("nothing to diagnose: no out-of-memory or other failure message found");
        Ok(ExitStatus::NothingFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_on_stdin_is_told_how_to_end_the_paste() {
        assert_eq!(paste_prompt(false), None);
        let prompt = paste_prompt(true).unwrap_or_default();
        assert!(prompt.starts_with("reading stdin: paste the error text or log"));
        let end = if cfg!(windows) {
            "Ctrl-Z and Enter"
        } else {
            "Ctrl-D"
        };
        assert!(prompt.contains(end), "{prompt}");
    }
}
