//! Every line oomdoc writes for a person fits 100 columns (issue 16): every command on the
//! bundled fixtures and examples, every `--help`, and wrong invocations (clap's own errors and
//! our value parsers'), stdout and stderr both. Width is counted in characters, colour left
//! out. The one exception is a quoted log line of `explain -v`, which is quoted whole (the
//! default report cuts it with `…`; `explain_text_fits_100_columns` in `explain.rs` checks that
//! on every corpus text). Errors and warnings are wrapped on a terminal only (a pipe gets one
//! line per message, for `grep`), so commands run on a pseudo-terminal (util-linux `script`).

#![cfg(target_os = "linux")]
#![expect(clippy::unwrap_used, reason = "test setup panics on failure")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use oomdoc::cli::args::Format;
use oomdoc::cli::commands::explain::explain_file;
use oomdoc::parse::checkpoint::gguf::writer::{self, Value};
use oomdoc::render::explain::is_quoted_log_line;
use oomdoc::render::wrap::TEXT_WIDTH;

use super::probe::probe_server::{Story, TestServer};
use super::{fixture, oomdoc};

/// `text` without control sequences (`ESC [` parameters and a final letter: colour, and the
/// progress line's erase-line).
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(body) = rest.strip_prefix("\u{1b}[") {
            let digits = body
                .bytes()
                .take_while(|b| b.is_ascii_digit() || *b == b';' || *b == b'?')
                .count();
            if body
                .as_bytes()
                .get(digits)
                .is_some_and(u8::is_ascii_alphabetic)
            {
                rest = &body[digits + 1..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The lines of `output` (stdout, then stderr) wider than [`TEXT_WIDTH`], named by `case`.
/// With `quoted_whole`, a quoted log line may be longer (`explain -v`).
fn too_long(case: &str, output: &Output, quoted_whole: bool) -> Vec<String> {
    assert_ne!(
        output.status.code(),
        Some(101),
        "{case} panicked: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut lines = lines_too_long(case, "stdout", &output.stdout, quoted_whole);
    lines.extend(lines_too_long(case, "stderr", &output.stderr, quoted_whole));
    lines
}

/// The lines of `bytes` (one stream of `case`) wider than the text width.
fn lines_too_long(case: &str, stream: &str, bytes: &[u8], quoted_whole: bool) -> Vec<String> {
    let mut lines = Vec::new();
    // A carriage return starts the line again (a progress line redrawn in place).
    let text = plain(&String::from_utf8_lossy(bytes));
    for line in text.lines().flat_map(|line| line.split('\r')) {
        let width = line.chars().count();
        if width > TEXT_WIDTH && !(quoted_whole && is_quoted_log_line(line)) {
            lines.push(format!("{case} [{stream}, {width}]: {line}"));
        }
    }
    lines
}

/// Runs `command`, returns its too-long lines under the name `case`.
fn check(case: &str, command: &mut Command) -> Vec<String> {
    too_long(case, &on_a_terminal(command).output().unwrap(), false)
}

/// `command` run on a pseudo-terminal (util-linux `script`), as a person sees it: errors and
/// warnings are wrapped only on a terminal. The terminal merges stderr into stdout.
fn on_a_terminal(command: &Command) -> Command {
    let quote =
        |word: &std::ffi::OsStr| format!("'{}'", word.to_string_lossy().replace('\'', r"'\''"));
    let mut line = quote(command.get_program());
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&quote(arg));
    }
    let mut terminal = Command::new("script");
    terminal
        .args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => terminal.env(key, value),
            None => terminal.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        terminal.current_dir(dir);
    }
    terminal
}

/// `oomdoc ARGS`.
fn run(args: &[&str]) -> (String, Command) {
    let mut command = oomdoc();
    command.args(args);
    (format!("oomdoc {}", args.join(" ")), command)
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_file() && p.to_string_lossy().ends_with(suffix))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no {suffix} file in {}", dir.display());
    paths
}

fn assert_fits(offenders: &[String]) {
    assert!(
        offenders.is_empty(),
        "{} lines wider than {TEXT_WIDTH} columns:\n{}",
        offenders.len(),
        offenders.join("\n")
    );
}

#[test]
fn every_help_fits() {
    let mut offenders = Vec::new();
    let verbs = [
        "", "explain", "gpus", "fit", "snapshot", "run", "probe", "report", "diff", "exporter",
    ];
    for verb in verbs {
        for flag in ["--help", "-h"] {
            let args: Vec<&str> = [verb, flag].into_iter().filter(|a| !a.is_empty()).collect();
            let (case, mut command) = run(&args);
            let output = command.output().unwrap();
            assert_eq!(output.status.code(), Some(0), "{case}");
            offenders.extend(too_long(&case, &output, false));
        }
    }
    for args in [
        &["snapshot", "diff", "--help"][..],
        &["help", "fit"][..],
        &["--version"][..],
    ] {
        let (case, mut command) = run(args);
        offenders.extend(check(&case, &mut command));
    }
    // clap wraps help to the terminal: a wide terminal must not widen it past the limit.
    let (case, mut command) = run(&["fit", "--help"]);
    offenders.extend(check(
        &format!("COLUMNS=250 {case}"),
        command.env("COLUMNS", "250"),
    ));
    assert_fits(&offenders);
}

/// Wrong invocations: clap's own errors, our value parsers' and our checks after parsing.
#[test]
fn usage_errors_fit() {
    let missing = fixture("does-not-exist/run");
    let missing = path(&missing);
    let example = fixture("../../examples/vllm-0.6.4-kv-cache-too-small.log");
    let example = path(&example);
    let invocations: Vec<Vec<&str>> = vec![
        vec!["frobnicate"],
        vec!["--color", "sometimes", "explain"],
        vec!["explain", "--format", "pdf", example],
        vec!["explain", "--bogus"],
        vec!["explain", "--json", "--format", "text", example],
        vec!["explain", "--format", "html", example],
        vec!["explain", missing],
        vec!["fit"],
        vec!["fit", missing, "--gpu-memory", "24"],
        vec!["fit", missing, "--gpu-memory", "lots"],
        vec!["fit", missing, "--gpu-memory", "24g"],
        vec!["fit", missing, "--gpu-memory", "3 parsecs"],
        vec!["fit", missing, "--gpu-memory", "17179869184GiB"],
        vec!["fit", missing, "--kv-cache-dtype", "nope"],
        vec!["fit", missing, "--max-model-len", "-3"],
        vec!["fit", missing, "--gpu", "a100"],
        vec!["fit", missing],
        vec!["gpus", "--watch", "abc"],
        vec!["gpus", "--cuda-visible-devices"],
        vec!["gpus", "--gpu-from", missing],
        vec!["snapshot"],
        vec!["snapshot", missing],
        vec!["snapshot", missing, "--total-memory", "12"],
        vec!["run"],
        vec!["run", "--sample-rate", "0", "--", "true"],
        vec!["run", "--sample-rate", "abc", "--", "true"],
        vec!["probe"],
        vec![
            "probe",
            "http://127.0.0.1:1",
            "--memory-from",
            "carrier-pigeon",
        ],
        vec!["probe", "http://127.0.0.1:1", "--memory-from", "replay:"],
        vec!["report"],
        vec!["report", missing],
        vec!["diff", missing],
        vec!["diff", missing, missing],
        vec!["exporter", "--listen", "nope"],
        vec!["exporter", "--follow"],
    ];
    let mut offenders = Vec::new();
    for args in &invocations {
        let (case, command) = run(args);
        let output = on_a_terminal(&command).output().unwrap();
        assert!(
            matches!(output.status.code(), Some(1 | 2)),
            "{case}: exit {:?}",
            output.status.code()
        );
        offenders.extend(too_long(&case, &output, false));
    }
    assert_fits(&offenders);
}

#[test]
fn explain_examples_fit_and_verbose_quotes_whole_lines_only() {
    let mut offenders = Vec::new();
    for file in files(&fixture("../../examples"), ".log") {
        for extra in [&[][..], &["-v"][..]] {
            let mut args = vec!["explain", path(&file)];
            args.extend_from_slice(extra);
            let (case, mut command) = run(&args);
            offenders.extend(too_long(&case, &command.output().unwrap(), true));
        }
    }
    assert_fits(&offenders);
}

/// `explain -v` on every corpus text: what oomdoc writes itself fits; only the lines it quotes
/// whole may be wider. The plain report of every text is checked in `explain.rs`.
#[test]
fn explain_verbose_fits_on_every_corpus_text() {
    let root = fixture("corpus");
    let mut paths = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            paths.extend(files(&dir, ".txt"));
        }
    }
    assert!(paths.len() > 200, "only {} corpus texts", paths.len());
    // In one process, two workers: the binary builds its scanners at every start, which over
    // every text took most of the suite's time; the binary's own output is checked above.
    let (left, right) = paths.split_at(paths.len() / 2);
    let work = |part: &[PathBuf]| {
        let mut offenders = Vec::new();
        for file in part {
            let case = format!("explain -v {}", file.display());
            let (report, _) =
                explain_file(file, Format::Text, true).unwrap_or_else(|e| panic!("{case}: {e:#}"));
            offenders.extend(lines_too_long(&case, "stdout", &report, true));
        }
        offenders
    };
    let offenders: Vec<String> = std::thread::scope(|scope| {
        let first = scope.spawn(|| work(left));
        let mut offenders = work(right);
        offenders.extend(first.join().unwrap());
        offenders
    });
    assert_fits(&offenders);
}

#[test]
fn gpus_replays_fit() {
    let mut sources = files(&fixture("gpus"), ".json");
    sources.push(fixture("h200-torch2.11/nvidia-smi-q.xml"));
    let mut offenders = Vec::new();
    for source in &sources {
        for extra in [&[][..], &["--cuda-visible-devices", "1,0"][..]] {
            let mut args = vec!["gpus", "--gpu-from", path(source)];
            args.extend_from_slice(extra);
            let (case, mut command) = run(&args);
            offenders.extend(check(&case, &mut command));
        }
    }
    // The numbering of the local shell, when asked for, and a colour terminal.
    let source = fixture("gpus/synthetic-8xh200.json");
    let (case, mut command) = run(&["gpus", "--gpu-from", path(&source), "--color", "always"]);
    offenders.extend(check(
        &format!("CUDA_VISIBLE_DEVICES=3,1,GPU-x {case}"),
        command.env("CUDA_VISIBLE_DEVICES", "3,1,GPU-x"),
    ));
    assert_fits(&offenders);
}

#[test]
fn snapshots_fit() {
    let mut pickles = files(&fixture("h200-torch2.11/snap"), ".pickle");
    pickles.extend(files(&fixture("snapshot"), ".pickle"));
    let mut offenders = Vec::new();
    for pickle in &pickles {
        for extra in [&[][..], &["--total-memory", "139.8GiB"][..]] {
            let mut args = vec!["snapshot", path(pickle)];
            args.extend_from_slice(extra);
            let (case, mut command) = run(&args);
            offenders.extend(check(&case, &mut command));
        }
    }
    let a = fixture("snapshot/synthetic-train-step-a.pickle");
    let b = fixture("snapshot/synthetic-train-step-b.pickle");
    let (case, mut command) = run(&["snapshot", "diff", path(&a), path(&b)]);
    offenders.extend(check(&case, &mut command));
    assert_fits(&offenders);
}

/// Writes a header-only safetensors file (the data is a sparse extension).
fn write_safetensors(path: &Path, tensors: &[(String, Vec<u64>)]) {
    let mut header = serde_json::Map::new();
    let mut offset = 0u64;
    for (name, shape) in tensors {
        let bytes = shape.iter().product::<u64>() * 2;
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + bytes]}),
        );
        offset += bytes;
    }
    let mut json = serde_json::to_vec(&header).unwrap();
    while json.len() % 8 != 0 {
        json.push(b' ');
    }
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&json);
    std::fs::write(path, &bytes).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(bytes.len() as u64 + offset).unwrap();
}

/// A Llama-3.2-3B directory (its real `config.json`, BF16 tensors of its shapes).
fn llama_dir(root: &Path) -> PathBuf {
    let dir = root.join("Llama-3.2-3B");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        fixture("checkpoint/llama-3.2-3b.config.json"),
        dir.join("config.json"),
    )
    .unwrap();
    let (hidden, heads, kv, head_dim, ffn, vocab) = (3072, 24, 8, 128, 8192, 128_256);
    let mut tensors = vec![("model.embed_tokens.weight".to_string(), vec![vocab, hidden])];
    for i in 0..28 {
        let p = format!("model.layers.{i}.");
        for (name, shape) in [
            ("self_attn.q_proj.weight", vec![heads * head_dim, hidden]),
            ("self_attn.k_proj.weight", vec![kv * head_dim, hidden]),
            ("self_attn.v_proj.weight", vec![kv * head_dim, hidden]),
            ("self_attn.o_proj.weight", vec![hidden, heads * head_dim]),
            ("mlp.gate_proj.weight", vec![ffn, hidden]),
            ("mlp.up_proj.weight", vec![ffn, hidden]),
            ("mlp.down_proj.weight", vec![hidden, ffn]),
            ("input_layernorm.weight", vec![hidden]),
            ("post_attention_layernorm.weight", vec![hidden]),
        ] {
            tensors.push((format!("{p}{name}"), shape));
        }
    }
    tensors.push(("model.norm.weight".to_string(), vec![hidden]));
    write_safetensors(&dir.join("model.safetensors"), &tensors);
    dir
}

/// A Llama-3.1-8B Q4_K GGUF header (sparse data).
fn llama_gguf(root: &Path) -> PathBuf {
    let file = root.join("Meta-Llama-3.1-8B-Q4_K_M.gguf");
    let metadata = [
        ("general.architecture", Value::Str("llama".into())),
        ("general.file_type", Value::U32(15)),
        ("llama.block_count", Value::U32(32)),
        ("llama.context_length", Value::U32(131_072)),
        ("llama.embedding_length", Value::U32(4096)),
        ("llama.attention.head_count", Value::U32(32)),
        ("llama.attention.head_count_kv", Value::U32(8)),
    ];
    let q4k = |n: u64| n / 256 * 144;
    let mut tensors = vec![(
        "token_embd.weight".to_string(),
        vec![4096, 128_256],
        12,
        q4k(4096 * 128_256),
    )];
    for i in 0..32 {
        for (name, shape) in [("attn_q", [4096u64, 4096]), ("ffn_down", [14336, 4096])] {
            tensors.push((
                format!("blk.{i}.{name}.weight"),
                shape.to_vec(),
                12,
                q4k(shape[0] * shape[1]),
            ));
        }
    }
    let borrowed: Vec<(&str, Vec<u64>, u32, u64)> = tensors
        .iter()
        .map(|(n, d, t, b)| (n.as_str(), d.clone(), *t, *b))
        .collect();
    let (header, size) = writer::header(&metadata, &borrowed);
    std::fs::write(&file, &header).unwrap();
    let handle = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    handle.set_len(size).unwrap();
    file
}

#[test]
fn fit_fits() {
    let root = tempfile::tempdir().unwrap();
    let dir = llama_dir(root.path());
    let gguf = llama_gguf(root.path());
    let xml = fixture("h200-torch2.11/nvidia-smi-q.xml");
    let (dir, gguf, xml) = (path(&dir), path(&gguf), path(&xml));
    let invocations: Vec<Vec<&str>> = vec![
        vec!["fit", dir, "--gpu", "l4"],
        vec!["fit", dir, "--gpu", "h200", "--max-model-len", "131072"],
        vec!["fit", dir, "--gpu-memory", "8GiB"],
        vec!["fit", dir, "--gpu", "a100"],
        vec!["fit", dir, "--gpu", "h100", "--tensor-parallel-size", "5"],
        vec!["fit", dir, "--gpu", "t4", "--pipeline-parallel-size", "2"],
        vec!["fit", dir, "--gpu", "l4", "--kv-cache-dtype", "fp8"],
        vec!["fit", dir, "--gpu-from", xml],
        vec!["fit", dir, "--gpu", "l4", "--n-gpu-layers", "10"],
        vec!["fit", gguf, "--gpu", "rtx4090"],
        vec!["fit", gguf, "--gpu-memory", "6GiB", "--ctx-size", "32768"],
        vec!["fit", gguf, "--gpu", "l4", "--tensor-parallel-size", "2"],
    ];
    let mut offenders = Vec::new();
    for args in &invocations {
        let (case, mut command) = run(args);
        offenders.extend(check(&case, &mut command));
    }
    assert_fits(&offenders);
}

#[test]
fn probe_fits() {
    let mut offenders = Vec::new();
    for story in [
        Story::Plateau,
        Story::Step,
        Story::Leak,
        Story::Noise,
        Story::Errors(6),
    ] {
        let server = TestServer::start(story, None);
        let memory = format!("prometheus:{}", server.metrics_url());
        for extra in [&[][..], &["-v", "--repeat", "2", "--concurrency", "2"][..]] {
            let mut args = vec!["probe", &server.url, "--memory-from", &memory];
            args.extend_from_slice(extra);
            let (case, mut command) = run(&args);
            offenders.extend(check(
                &case,
                command
                    .env_remove("OOMDOC_API_KEY")
                    .env_remove("OPENAI_API_KEY"),
            ));
        }
    }
    // A static nvidia-smi file and a missing one, through the environment.
    let server = TestServer::start(Story::Plateau, None);
    for replay in [
        fixture("h200-torch2.11/nvidia-smi-q.xml"),
        fixture("gpus/does-not-exist.json"),
        fixture("gpus/synthetic-2xh200.json"),
    ] {
        let (case, mut command) = run(&["probe", &server.url, "--gpu", "0"]);
        offenders.extend(check(
            &format!("OOMDOC_GPU_FROM={} {case}", replay.display()),
            command
                .env("OOMDOC_GPU_FROM", &replay)
                .env_remove("OOMDOC_API_KEY")
                .env_remove("OPENAI_API_KEY"),
        ));
    }
    // Nothing listens on port 1.
    let (case, mut command) = run(&[
        "probe",
        "http://127.0.0.1:1",
        "--memory-from",
        "replay:/dev/null",
    ]);
    offenders.extend(check(&case, &mut command));
    assert_fits(&offenders);
}

#[test]
fn run_fits() {
    let temp = tempfile::tempdir().unwrap();
    let example = fixture("../../examples/vllm-0.6.4-kv-cache-too-small.log");
    let oom = format!("cat '{}' >&2; exit 1", example.display());
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            fixture("gpus/synthetic-2xh200.json"),
            "echo 'Starting to load model m...'",
        ),
        (fixture("h200-torch2.11/nvidia-smi-q.xml"), "echo started"),
        (fixture("gpus/synthetic-flags.json"), &oom),
    ];
    let mut offenders = Vec::new();
    for (number, (replay, script)) in cases.iter().enumerate() {
        let out = temp.path().join(format!("run-{number}"));
        let mut command = oomdoc();
        command
            .arg("run")
            .arg("--gpu-from")
            .arg(replay)
            .arg("--out")
            .arg(&out)
            .args(["--", "sh", "-c", script]);
        let output = on_a_terminal(&command).output().unwrap();
        // The child's own output is passed through as it printed it (the example log has
        // lines wider than 100 columns); only what oomdoc adds is checked.
        let log = std::fs::read_to_string(&example).unwrap();
        let ours = Output {
            status: output.status,
            stdout: Vec::new(),
            stderr: String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter(|line| !log.lines().any(|quoted| quoted == *line))
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes(),
        };
        offenders.extend(too_long(
            &format!("oomdoc run --gpu-from {} -- {script}", replay.display()),
            &ours,
            false,
        ));
    }
    // Nothing to run.
    let (case, mut command) = run(&["run", "--", "oomdoc-no-such-command-here"]);
    offenders.extend(check(
        &case,
        command
            .current_dir(temp.path())
            .env_remove("OOMDOC_GPU_FROM"),
    ));
    assert_fits(&offenders);
}

/// The recorded runs under `tests/fixtures/runs/`.
fn run_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixture("runs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.join("run.json").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 5);
    dirs
}

/// `report` and `diff` text of every run fixture: a report of each run, a report of two runs
/// (with its comparison), and the diff of each neighbouring pair.
#[test]
fn report_and_diff_fit() {
    let dirs = run_dirs();
    let mut offenders = Vec::new();
    for dir in &dirs {
        let (case, mut command) = run(&["report", path(dir)]);
        offenders.extend(check(&case, &mut command));
    }
    let (case, mut command) = run(&["report", path(&dirs[0]), path(&dirs[1])]);
    offenders.extend(check(&case, &mut command));
    for pair in dirs.windows(2) {
        let (case, mut command) = run(&["diff", path(&pair[0]), path(&pair[1])]);
        offenders.extend(check(&case, &mut command));
    }
    assert_fits(&offenders);
}
