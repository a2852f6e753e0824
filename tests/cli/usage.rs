//! CLI tests of what a new user meets first (issue 16): every `--help` ends with examples and
//! lists `--color` last, no internal requirement id appears in help, and formats a command does
//! not write are refused with exit 2.

use super::{oomdoc, stderr, stdout};

const VERBS: [&str; 8] = [
    "explain", "gpus", "fit", "snapshot", "run", "probe", "report", "diff",
];

/// `oomdoc ARGS --help` (or `-h`) as text; it must exit 0.
#[expect(
    clippy::unwrap_used,
    reason = "test helper: a failure here is a test failure"
)]
fn help(args: &[&str]) -> String {
    let output = oomdoc().args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output)
}

/// Requirement ids of the design notes (`R4`, `R16`): words of an `R` and digits only.
fn requirement_ids(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| {
            word.len() > 1 && word.starts_with('R') && word[1..].chars().all(|c| c.is_ascii_digit())
        })
        .collect()
}

#[test]
fn every_help_ends_with_examples_and_lists_color_last() {
    let verbs = VERBS.iter().map(|verb| vec![*verb]);
    for args in std::iter::once(vec![]).chain(verbs) {
        for flag in ["--help", "-h"] {
            let mut full = args.clone();
            full.push(flag);
            let text = help(&full);
            let examples = text.find("\nExamples:\n");
            let color = text.find("--color <WHEN>");
            let global = text.find("\nGlobal options:\n");
            assert!(examples.is_some(), "{full:?}: no examples\n{text}");
            assert!(
                global.is_some() && color > global && color < examples,
                "{full:?}: `--color` is not the last option, under `Global options`\n{text}"
            );
            let global_options = &text[global.unwrap_or_default()..examples.unwrap_or_default()];
            assert!(
                !global_options.to_lowercase().contains("possible values"),
                "{full:?}: `--color` lists its values\n{text}"
            );
            // Examples are lines indented by two spaces; a description that does not fit
            // continues on a line indented further.
            let examples = text[examples.unwrap_or_default()..]
                .lines()
                .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
                .count();
            assert!(
                (2..=3).contains(&examples),
                "{full:?}: {examples} examples\n{text}"
            );
            assert_eq!(
                requirement_ids(&text),
                Vec::<&str>::new(),
                "{full:?}\n{text}"
            );
        }
    }
}

#[test]
fn requirement_ids_are_found() {
    assert_eq!(
        requirement_ids("kept (R4), R16: x; RUN_DIR R2D2 R"),
        ["R4", "R16"]
    );
}

#[test]
fn explain_help() {
    insta::assert_snapshot!(help(&["explain", "--help"]));
}

#[test]
fn explain_refuses_html_with_exit_2() {
    let example = super::fixture("../../examples/vllm-0.6.4-kv-cache-too-small.log");
    let file = std::env::temp_dir().join(format!("oomdoc-refused-{}.html", std::process::id()));
    let to_stdout = ["--format", "html"].map(std::ffi::OsString::from);
    let to_file = [
        "--format=html".into(),
        "-o".into(),
        file.clone().into_os_string(),
    ];
    for args in [&to_stdout[..], &to_file[..]] {
        let output = oomdoc()
            .arg("explain")
            .arg(&example)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(output.stdout.is_empty());
        assert!(!file.exists());
        assert!(
            stderr(&output).starts_with("error: `oomdoc explain` writes no HTML report"),
            "{}",
            stderr(&output)
        );
        assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
    }
}

/// `oomdoc explain` with a terminal on stdin says that it waits for a paste and how to end it;
/// with a pipe it says nothing. util-linux `script` gives the child a pseudo-terminal and
/// forwards our pipe to it, then the end of input.
#[cfg(target_os = "linux")]
#[test]
fn explain_on_a_terminal_asks_for_a_paste() {
    use std::io::Write;
    use std::process::Stdio;

    let command = format!("{} explain --color never", env!("CARGO_BIN_EXE_oomdoc"));
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs");
    // The terminal echoes what is typed: give oomdoc time to ask first.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
        .unwrap();
    drop(stdin);
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("`script` did not end the paste");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    // The pseudo-terminal merges stderr into stdout, with the echo of the paste.
    let text = stdout(&output);
    assert!(
        text.lines().any(|line| line.trim_end()
            == "reading stdin: paste the error text or log, then press Ctrl-D on an empty line"),
        "{text}"
    );
    // `script -e` exits with the child's code: 0, the paste was read and explained.
    assert_eq!(output.status.code(), Some(0), "{text}");

    let piped = oomdoc()
        .arg("explain")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        !stderr(&piped).contains("reading stdin"),
        "{}",
        stderr(&piped)
    );
}
