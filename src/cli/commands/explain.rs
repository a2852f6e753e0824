//! `oomdoc explain [FILE ...]`: read an OOM text or a whole engine log (files, `-` or stdin),
//! say what failed, in which phase, and why (R1–R7, R19).
//!
//! Several files are read in order as one stream (like `cat`), so a traceback and the engine
//! log it belongs to can be given together. Exit 0 when a failure was explained, 1 when the
//! input held nothing to diagnose (or was empty), 2 when an input could not be read or is not
//! text.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::analyze::explain::{has_findings, Explainer};
use crate::cli::args::{Format, OutputArgs};
use crate::cli::output::Output;
use crate::cli::ExitStatus;
use crate::error::HintedError;
use crate::render::style::Style;
use crate::source::file;

/// Arguments of `oomdoc explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Log or error-text files (plain or gzip); `-` or none reads stdin
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// How much of the start of an input is checked for binary content.
const SNIFF_BYTES: usize = 8192;

/// Whether the start of an input looks like binary data rather than a log: a NUL byte, or
/// more than 10% of the bytes not valid UTF-8.
fn looks_binary(start: &[u8]) -> bool {
    let start = &start[..start.len().min(SNIFF_BYTES)];
    if start.contains(&0) {
        return true;
    }
    let mut invalid = 0usize;
    let mut rest = start;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(_) => break,
            Err(error) => {
                let valid = error.valid_up_to();
                let bad = error.error_len().unwrap_or(rest.len() - valid);
                // A sequence cut at the end of the sniffed window is not an error.
                if error.error_len().is_none() && rest.len() - valid < 4 {
                    break;
                }
                invalid += bad;
                rest = &rest[valid + bad..];
            }
        }
    }
    invalid * 10 > start.len()
}

/// Feeds one input into the explainer; returns the bytes read.
fn feed(
    explainer: &mut Explainer,
    mut reader: Box<dyn BufRead + Send>,
    name: &str,
) -> anyhow::Result<u64> {
    explainer.start_input(name);
    let mut total = 0u64;
    let mut first = true;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => {
                return Err(error).with_context(|| format!("failed to read `{name}`"));
            }
        };
        if chunk.is_empty() {
            break;
        }
        if first {
            first = false;
            if looks_binary(chunk) {
                return Err(HintedError::new(
                    format!("`{name}` looks like binary data, not a text log"),
                    "pass the log or the error text itself (plain text or .gz); `oomdoc snapshot` reads memory snapshots",
                )
                .into());
            }
        }
        let length = chunk.len();
        explainer.push_bytes(chunk);
        reader.consume(length);
        total += length as u64;
    }
    Ok(total)
}

/// Runs `oomdoc explain`.
pub fn run(args: ExplainArgs, output: &mut Output) -> anyhow::Result<ExitStatus> {
    let inputs: Vec<PathBuf> = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.files.clone()
    };
    let mut explainer = Explainer::new();
    let mut total = 0u64;
    for path in &inputs {
        let (reader, name) = if path == Path::new("-") {
            (file::stdin(), "<stdin>".to_string())
        } else {
            let reader = file::open(path)?;
            (reader, path.display().to_string())
        };
        let read = feed(&mut explainer, reader, &name)?;
        if read == 0 && inputs.len() > 1 {
            output.warn(&format!("`{name}` is empty"));
        }
        total += read;
    }
    if total == 0 {
        let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        output.note(&format!(
            "nothing to diagnose: `{}` is empty",
            names.join("`, `").replace('-', "<stdin>")
        ));
        return Ok(ExitStatus::NothingFound);
    }
    let report = explainer.finish();
    let found = has_findings(&report);
    let bytes = match args.output.format() {
        Format::Json => {
            crate::render::explain::json(&report).context("failed to serialise the report")?
        }
        Format::Markdown => crate::render::explain::markdown(&report),
        Format::Text | Format::Html => {
            if args.output.format() == Format::Html {
                output.warn("`oomdoc explain` has no HTML format yet; writing text");
            }
            crate::render::explain::text(&report, Style::new(output.color_for(&args.output)))
        }
    };
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
    fn binary_sniffing() {
        assert!(!looks_binary(b"INFO 04-02 21:42:59 hello\n"));
        assert!(looks_binary(b"\x80\x04\x95\x00\x00PK"));
        assert!(looks_binary(&[0xff; 100]));
        assert!(!looks_binary("caf\u{e9} \u{2014} ok".as_bytes()));
        // a multi-byte character cut at the end of the window
        assert!(!looks_binary(&"é".as_bytes()[..1]));
    }
}
