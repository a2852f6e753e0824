//! CLI tests of `oomdoc run` against hostile input: planted secrets, links, a second run on
//! the same directory, terminal controls, file-size limits.

use std::process::Stdio;

use super::run::{record, run_sh};
use super::{oomdoc, stderr, stdout};

/// Secrets of every kind the redactor knows, planted in the environment, the command line and
/// the log (`Zq7secNN` marks secret number NN; `zqalice` is the user).
fn planted_secrets() -> (Vec<(String, String)>, Vec<String>, String) {
    let secret = |n: usize| format!("Zq7sec{n:02}Xy9Ab");
    let mut n = 0;
    let mut next = || {
        n += 1;
        secret(n)
    };
    let environment: Vec<(String, String)> = [
        "VLLM_API_KEYS",
        "VLLM_API_KEY_SECONDARY",
        "HF_HUB_AUTH",
        "HF_TOKEN",
        "VLLM_SECRET_SALT",
        "HF_PASSWORD_FILE",
        "HF_HUB_CREDENTIAL",
        "VLLM_AUTH_TOKEN",
    ]
    .iter()
    .map(|name| (name.to_string(), next()))
    .collect();
    let argv = vec![
        "--api-key".to_owned(),
        next(),
        format!("--api-key={}", next()),
        "--hf-token".to_owned(),
        next(),
        format!("hf_{}", next()),
        format!("https://bob:ab/{}@example.com/r.git", next()),
        format!("Authorization: Bearer {}", next()),
        "/home/zqalice/models/llama".to_owned(),
    ];
    let lines = [
        format!(
            "INFO non-default args: {{'model': 'm', 'api_key': ['{}'], 'hf_token': '{}'}}",
            next(),
            next()
        ),
        format!("aws_secret_access_key = {}", next()),
        format!("AWS_SECRET_ACCESS_KEY: {}", next()),
        format!("password: {}", next()),
        format!("clone https://bob:ab/{}@example.com/r.git", next()),
        "-----BEGIN OPENSSH PRIVATE KEY-----".to_owned(),
        format!("{}b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", next()),
        "-----END OPENSSH PRIVATE KEY-----".to_owned(),
        format!("export WANDB_API_KEY={}", next()),
        format!("Authorization: Basic {}", next()),
        format!("Authorization: Bearer {}", next()),
        format!("launching: vllm serve m --api-key {} --port 8000", next()),
        format!("cmd --api-key={} --port 1", next()),
        format!("cmd --hf-token {}", next()),
        format!("key AKIA{}CDE", next().to_ascii_uppercase()),
        format!("ghp_{}aaaaaaaaaaaaaaaaaaaa", next()),
        format!("gho_{}aaaaaaaaaaaaaaaaaaaa", next()),
        format!("github_pat_{}aaaaaaaaaaaa", next()),
        format!("xoxb-{}-1234", next()),
        format!("xoxp-{}-1234", next()),
        format!("token hf_{}", next()),
        format!("key sk-{}", next()),
        format!("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.{}", next()),
        format!("VLLM_API_KEYS={}", next()),
        "loading /home/zqalice/models/llama as zqalice".to_owned(),
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.11 GiB of which 3.19 MiB is free.".to_owned(),
    ];
    let mut log = lines.join("\n");
    log.push('\n');
    (environment, argv, log)
}

/// The planted secret numbers (and `zqalice`) found in `text`.
fn survivors(text: &str) -> Vec<String> {
    let mut found: Vec<String> = regex::Regex::new(r"(?i)zq7sec\d\d|zqalice")
        .unwrap_or_else(|error| panic!("{error}"))
        .find_iter(text)
        .map(|m| m.as_str().to_ascii_lowercase())
        .collect();
    found.sort();
    found.dedup();
    found
}

// See: #14 (item 5), #15: 37 secrets and a user name planted in argv, environment and log; none
// survives in `run.json` (or any other file oomdoc writes), the summary, `run --json`, or any
// format of `report`, `diff` and `explain`.
#[test]
fn issue_14_planted_secrets_survive_nowhere() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("planted");
    let (environment, argv, log) = planted_secrets();
    let log_source = temp.path().join("child-output.txt");
    std::fs::write(&log_source, &log).unwrap();
    let mut command = oomdoc();
    command
        .env("HOME", "/home/zqalice")
        .env("USER", "zqalice")
        .arg("run")
        .arg("--context-lines")
        .arg("100")
        .arg("--out")
        .arg(&directory)
        .args(["--", "sh", "-c", "cat \"$1\"", "sh"])
        .arg(&log_source)
        .args(&argv);
    for (name, value) in &environment {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let planted = survivors(&format!("{environment:?} {argv:?} {log}"));
    assert_eq!(planted.len(), 38, "{planted:?}");
    let mut places = vec![
        (
            "run.json".to_owned(),
            std::fs::read_to_string(directory.join("run.json")).unwrap(),
        ),
        ("stderr summary".to_owned(), stderr(&output)),
    ];
    for format in ["text", "markdown", "html", "json"] {
        let report = oomdoc()
            .arg("report")
            .arg(&directory)
            .args(["--format", format])
            .output()
            .unwrap();
        assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
        places.push((format!("report --format {format}"), stdout(&report)));
        // A run compared with itself: diff reads every string of both records.
        let diff = oomdoc()
            .arg("diff")
            .arg(&directory)
            .arg(&directory)
            .args(["--format", format])
            .output()
            .unwrap();
        assert_eq!(diff.status.code(), Some(0), "{}", stderr(&diff));
        places.push((format!("diff --format {format}"), stdout(&diff)));
        places.push((format!("diff --format {format} (stderr)"), stderr(&diff)));
    }
    // `explain` of the same log, in every format, quoting as many lines as it can.
    for format in ["text", "markdown", "json"] {
        let explain = oomdoc()
            .env("HOME", "/home/zqalice")
            .env("USER", "zqalice")
            .arg("explain")
            .arg(&log_source)
            .args(["--verbose", "--format", format])
            .output()
            .unwrap();
        assert_eq!(explain.status.code(), Some(0), "{}", stderr(&explain));
        places.push((format!("explain --format {format}"), stdout(&explain)));
    }
    // `run --json` writes its closing document to stderr (stdout is the child's).
    let json_summary = {
        let mut command = oomdoc();
        command
            .env("HOME", "/home/zqalice")
            .env("USER", "zqalice")
            .arg("run")
            .arg("--json")
            .arg("--out")
            .arg(temp.path().join("planted-json"))
            .args(["--", "sh", "-c", "cat \"$1\"", "sh"])
            .arg(&log_source)
            .args(&argv);
        for (name, value) in &environment {
            command.env(name, value);
        }
        command.output().unwrap()
    };
    assert_eq!(
        json_summary.status.code(),
        Some(0),
        "{}",
        stderr(&json_summary)
    );
    places.push(("run --json".to_owned(), stderr(&json_summary)));
    // Every file oomdoc wrote into either run directory, apart from the child's own log.
    for run_directory in [directory.clone(), temp.path().join("planted-json")] {
        for entry in std::fs::read_dir(&run_directory).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name() == Some(std::ffi::OsStr::new("log.txt")) || !path.is_file() {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            places.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    let leaks: Vec<(String, Vec<String>)> = places
        .iter()
        .map(|(place, text)| (place.clone(), survivors(text)))
        .filter(|(_, found)| !found.is_empty())
        .collect();
    assert!(leaks.is_empty(), "{leaks:#?}");
    // `log.txt` is the child's output as printed (docs/redaction.md).
    assert_eq!(
        std::fs::read_to_string(directory.join("log.txt")).unwrap(),
        log
    );
}

// See: #14 (item 2): `--force` removes what oomdoc owns without following links, and makes
// the `--torch-snapshot` hook directory anew.
#[test]
fn issue_14_force_follows_no_planted_link() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("run");
    assert_eq!(run_sh(&directory, "exit 0").status.code(), Some(0));
    let outside = temp.path().join("outside.txt");
    std::fs::write(&outside, "precious").unwrap();
    let outside_hook = temp.path().join("outside-hook.py");
    std::fs::write(&outside_hook, "precious").unwrap();
    std::fs::remove_file(directory.join("log.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, directory.join("log.txt")).unwrap();
    let hook = directory.join(".oomdoc-python");
    std::fs::create_dir_all(&hook).unwrap();
    std::fs::write(hook.join("json.py"), "raise SystemExit('planted')").unwrap();
    std::fs::write(hook.join("usercustomize.py"), "raise SystemExit('planted')").unwrap();
    std::os::unix::fs::symlink(&outside_hook, hook.join("sitecustomize.py")).unwrap();
    std::fs::write(directory.join(".tmpAbC123"), "{\"half\": ").unwrap();
    let output = oomdoc()
        .arg("run")
        .arg("--force")
        .arg("--torch-snapshot")
        .arg("--out")
        .arg(&directory)
        .args([
            "--",
            "sh",
            "-c",
            "ls -A \"${PYTHONPATH%%:*}\"; echo written",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    assert_eq!(std::fs::read_to_string(&outside_hook).unwrap(), "precious");
    let log = directory.join("log.txt");
    assert!(std::fs::symlink_metadata(&log).unwrap().is_file());
    // The hook directory first on `PYTHONPATH` holds oomdoc's file only.
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "sitecustomize.py\nwritten\n"
    );
    assert!(std::fs::symlink_metadata(hook.join("sitecustomize.py"))
        .unwrap()
        .is_file());
    assert!(!directory.join(".tmpAbC123").exists());
}

// See: #14 (item 3): a second `oomdoc run` on a directory in use is refused; the first run's
// record and log stay its own.
#[test]
fn issue_14_second_run_on_the_same_directory_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("shared");
    let gate = temp.path().join("gate");
    let mut first = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args([
            "--",
            "sh",
            "-c",
            "echo first; while [ ! -e \"$1\" ]; do sleep 0.05; done",
            "sh",
        ])
        .arg(&gate)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !directory.join("run.json").exists() {
        assert!(
            started.elapsed().as_secs() < 20,
            "the first run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for force in [false, true] {
        let mut second = oomdoc();
        second.arg("run").arg("--out").arg(&directory);
        if force {
            second.arg("--force");
        }
        let output = second
            .args(["--", "sh", "-c", "echo second; exit 5"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("is in use by another `oomdoc run`"),
            "{}",
            stderr(&output)
        );
        assert!(!stdout(&output).contains("second"));
    }
    std::fs::write(&gate, "").unwrap();
    assert_eq!(first.wait().unwrap().code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(directory.join("log.txt")).unwrap(),
        "first\n"
    );
    assert_eq!(record(&directory)["exit_code"], 0);
    // Once it has ended, the directory can be reused with `--force`.
    let again = oomdoc()
        .arg("run")
        .arg("--force")
        .arg("--out")
        .arg(&directory)
        .args(["--", "sh", "-c", "exit 5"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(5), "{}", stderr(&again));
}

// See: #14 (item 6): terminal controls from the command line never reach the terminal.
#[test]
fn issue_14_terminal_controls_in_argv_are_escaped_in_the_summary() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("controls");
    let output = oomdoc()
        .arg("run")
        .arg("--out")
        .arg(&directory)
        .args([
            "--",
            "sh",
            "-c",
            "exit 0",
            "bell\u{7}back\u{8}csi\u{9b}31mbidi\u{202e}esc\u{1b}]0;t",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let err = stderr(&output);
    for control in ['\u{7}', '\u{8}', '\u{9b}', '\u{202e}', '\u{1b}'] {
        assert!(!err.contains(control), "{control:?} in {err:?}");
    }
    assert!(
        err.contains("bell\\x07back\\x08csi\\u009b31mbidi\\u202eesc\\x1b]0;t"),
        "{err}"
    );
    for format in ["text", "markdown"] {
        let report = oomdoc()
            .arg("report")
            .arg(&directory)
            .args(["--format", format])
            .output()
            .unwrap();
        let text = stdout(&report);
        for control in ['\u{7}', '\u{8}', '\u{9b}', '\u{202e}', '\u{1b}'] {
            assert!(!text.contains(control), "{format}: {control:?} in {text:?}");
        }
    }
}

// See: #14 (item 13): past `ulimit -f`, oomdoc is not killed by `SIGXFSZ`: it keeps the
// child's exit code and says the log or record could not be completed.
#[test]
fn issue_14_file_size_limit_keeps_the_childs_code() {
    let temp = tempfile::tempdir().unwrap();
    let directory = temp.path().join("limited");
    let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.";
    let script = format!(
        "i=0; while [ $i -lt 400 ]; do echo \"line $i {oom} padding padding padding\"; i=$((i+1)); done; exit 3"
    );
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 16 && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_oomdoc"))
        .arg("run")
        .arg("--context-lines")
        .arg("300")
        .arg("--out")
        .arg(&directory)
        .args(["--", "sh", "-c", &script])
        .env("NO_COLOR", "1")
        .env_remove("OOMDOC_GPU_FROM")
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(3), "{err}");
    assert!(err.contains("File too large"), "{err}");
    let record = record(&directory);
    if record["status"] == "running" {
        assert!(err.contains("could not be completed"), "{err}");
    } else {
        assert_eq!(record["exit_code"], 3);
        let limitations = record["limitations"].to_string();
        assert!(limitations.contains("File too large"), "{limitations}");
    }
}

// See: #14 (item 6): `explain` escapes BEL, backspace, C1 controls and bidi overrides too.
#[test]
fn issue_14_terminal_controls_in_a_log_are_escaped_by_explain() {
    let temp = tempfile::tempdir().unwrap();
    let log = temp.path().join("log.txt");
    std::fs::write(
        &log,
        "step\u{7}\u{8}\u{9b}2J\u{9d}0;x\u{9c}\u{202e}cba\u{1b}[2J\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\u{7}\u{9b}\u{202e}. GPU 0 has a total capacity of 79.11 GiB of which 3.19 MiB is free.\n",
    )
    .unwrap();
    for format in ["text", "markdown", "json"] {
        let output = oomdoc()
            .arg("explain")
            .arg(&log)
            .args(["--format", format])
            .output()
            .unwrap();
        let text = format!("{}{}", stdout(&output), stderr(&output));
        for control in [
            '\u{7}', '\u{8}', '\u{9b}', '\u{9c}', '\u{9d}', '\u{202e}', '\u{1b}',
        ] {
            assert!(!text.contains(control), "{format}: {control:?} in {text:?}");
        }
        if format == "json" {
            let _: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
        }
    }
}
