//! CLI tests of `oomdoc fit` for the engines' own budgets: GGUF as llama.cpp loads it, sliding
//! windows, tensor and pipeline parallelism, each engine's options, sizes with units.

use oomdoc::parse::checkpoint::gguf::writer::Value;

use super::fit::*;
use super::{fixture, oomdoc, stderr};

// See: #16
#[test]
fn issue_16_sizes_need_a_unit() {
    let root = tempfile::tempdir().unwrap();
    let dir = llama_3_1_8b(root.path(), "llama", 1);
    let dir = dir.to_str().unwrap();
    for (value, expected) in [
        ("24", "`24` has no unit: write `24GiB`"),
        ("24", "or `24GB` (decimal, 10^9 bytes)"),
        ("24g", "write `24GiB` (binary) or `24GB` (decimal)"),
        ("24 parsecs", "unknown size unit `parsecs`"),
    ] {
        let (code, out, err) = run(&[dir, "--gpu-memory", value]);
        assert_eq!(code, 2, "{value}: {err}");
        assert!(out.is_empty());
        assert!(err.contains("invalid value"), "{err}");
        assert!(err.contains(expected), "{value}: {err}");
    }
    // Decimals and both unit families, exact to the byte.
    for (value, bytes) in [("23.5GiB", 25_232_932_864u64), ("24GB", 24_000_000_000)] {
        let report = json(&[dir, "--gpu-memory", value]);
        assert_eq!(report["budget"]["gpu_total_bytes"], bytes, "{value}");
        assert_eq!(report["budget"]["gpu_total_source"], "user");
    }
}

// See: #16
#[test]
fn issue_16_ambiguous_gpu_lists_the_classes() {
    let root = tempfile::tempdir().unwrap();
    let dir = llama_3_1_8b(root.path(), "llama", 1);
    let dir = dir.to_str().unwrap();
    let (code, out, err) = run(&[dir, "--gpu", "a100"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    snapshot!(root.path(), "fit_ambiguous_a100_stderr", err);
    let (code, _, err) = run(&[dir, "--gpu", "A100-SXM4"]);
    assert_eq!(code, 2);
    assert!(err.contains("could mean 2 GPU classes"), "{err}");
    let (code, _, err) = run(&[dir, "--gpu", "a100-24gb"]);
    assert_eq!(code, 2);
    assert!(err.contains("has no 24 GB version"), "{err}");
    let (code, _, err) = run(&[dir, "--gpu", "l40"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("similar names") && err.contains("`l40s`"),
        "{err}"
    );
    // Exact names and nvidia-smi spellings still work.
    for (name, total) in [
        ("NVIDIA A100-SXM4-80GB", 85_899_345_920u64),
        ("a100-40gb", 42_949_672_960),
        ("NVIDIA GeForce RTX 4090", 25_757_220_864),
    ] {
        let report = json(&[dir, "--gpu", name]);
        assert_eq!(report["budget"]["gpu_total_bytes"], total, "{name}");
    }
}

// See: #16
#[test]
fn issue_16_tensor_parallel_must_divide_the_heads() {
    let root = tempfile::tempdir().unwrap();
    let dir = llama_3_1_8b(root.path(), "llama", 1);
    let dir = dir.to_str().unwrap();
    let (code, out, err) = run(&[dir, "--gpu", "l4", "--tensor-parallel-size", "3"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    snapshot!(root.path(), "fit_tensor_parallel_3_stderr", err);
    // A multimodal config: the head count is the text model's.
    let gemma = model_dir(
        root.path(),
        "gemma",
        Some("gemma-3-12b-it.config.json"),
        vec![tensor(
            "language_model.model.embed_tokens.weight",
            "BF16",
            &[262208, 3840],
        )],
        1,
    );
    let (code, _, err) = run(&[
        gemma.to_str().unwrap(),
        "--gpu",
        "h100",
        "--tensor-parallel-size",
        "3",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("16 attention heads of this model\n  (`text_config.num_attention_heads` in"),
        "{err}"
    );
    // A divisor is accepted.
    let report = json(&[dir, "--gpu", "l4", "--tensor-parallel-size", "4"]);
    assert_eq!(report["budget"]["tensor_parallel_size"], 4);
}

// See: #16
#[test]
fn issue_16_gguf_is_budgeted_as_llama_cpp_loads_it() {
    let root = tempfile::tempdir().unwrap();
    let path = llama_gguf(root.path());
    let tensors = llama_gguf_tensors();
    let layer_bytes = |i: u64| -> u64 {
        tensors
            .iter()
            .filter(|t| t.0.starts_with(&format!("blk.{i}.")))
            .map(|t| t.3)
            .sum()
    };
    let output: u64 = tensors
        .iter()
        .filter(|t| t.0 == "output.weight")
        .map(|t| t.3)
        .sum();
    let embedding: u64 = tensors
        .iter()
        .filter(|t| t.0 == "token_embd.weight")
        .map(|t| t.3)
        .sum();

    // Defaults: every layer, the model's 131072 context, f16 cache.
    let report = json(&[&path, "--gpu", "l4"]);
    let budget = &report["budget"];
    assert_eq!(budget["engine"], "llama.cpp");
    assert_eq!(budget["gpu_memory_utilization"], 1.0);
    assert_eq!(budget["usable_bytes"], budget["gpu_total_bytes"]);
    let all_layers: u64 = (0..32).map(layer_bytes).sum();
    assert_eq!(budget["weights_per_gpu_bytes"], all_layers + output);
    let placement = &budget["llama_cpp"];
    assert_eq!(placement["weights_in_ram_bytes"], embedding);
    assert_eq!(placement["n_ctx"], 131_072);
    // 32 layers × (8 × 128 K + 8 × 128 V) × 2 B per cell.
    assert_eq!(placement["kv_on_gpu_bytes"], 131_072 * 131_072u64);
    let names: Vec<&str> = budget["allowances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["compute_buffer", "cuda_context"]);

    // `-ngl 20`: the output layer and the last 19 layers; `-c 8000` rounds up to 8192;
    // q8_0 rows are 34 bytes per 32 elements.
    let report = json(&[
        &path,
        "--gpu",
        "t4",
        "--n-gpu-layers",
        "20",
        "--ctx-size",
        "8000",
        "--cache-type-k",
        "q8_0",
        "--cache-type-v",
        "q8_0",
    ]);
    let budget = &report["budget"];
    let last_19: u64 = (13..32).map(layer_bytes).sum();
    assert_eq!(budget["weights_per_gpu_bytes"], last_19 + output);
    let placement = &budget["llama_cpp"];
    assert_eq!(placement["gpu_layers"], 19);
    assert_eq!(placement["n_ctx_requested"], 8000);
    assert_eq!(placement["n_ctx"], 8192);
    assert_eq!(placement["kv_on_gpu_bytes"], 8192 * 19 * 2 * 34 * 32u64);
    assert_eq!(report["kv_cache"]["bytes_per_token"], 32 * 2 * 34 * 32u64);
    assert_eq!(report["kv_cache"]["dtype"], "q8_0");

    // Too long a context for a T4: the report says what llama.cpp's fit and -c/-ngl would do.
    let (code, out, err) = run(&[&path, "--gpu", "t4"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("config.json"), "{out}");
    assert!(!out.contains("vLLM"), "{out}");
    snapshot!(root.path(), "fit_gguf_llama_cpp_t4_text", out);
    let report = json(&[&path, "--gpu", "t4"]);
    let kinds: Vec<&str> = report["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["llama_cpp_fit", "n_gpu_layers", "kv_cache_dtype", "card"],
        "{:#}",
        report["alternatives"]
    );
    // With `-c` given, llama.cpp's fit keeps it; the longest context is a separate suggestion.
    let report = json(&[&path, "--gpu", "t4", "--ctx-size", "131072"]);
    let alternatives = report["alternatives"].as_array().unwrap();
    assert_eq!(alternatives[0]["kind"], "ctx_size");
    assert_eq!(alternatives[0]["max_kv_tokens"], 92_160);
}

// See: #16
#[test]
fn issue_16_gguf_sliding_window_layers_hold_the_window_and_a_batch() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("gemma-2-2b-f16.gguf");
    let metadata = vec![
        ("general.architecture", Value::Str("gemma2".into())),
        ("gemma2.block_count", Value::U32(4)),
        ("gemma2.context_length", Value::U32(8192)),
        ("gemma2.embedding_length", Value::U32(2304)),
        ("gemma2.attention.head_count", Value::U32(8)),
        ("gemma2.attention.head_count_kv", Value::U32(4)),
        ("gemma2.attention.key_length", Value::U32(256)),
        ("gemma2.attention.value_length", Value::U32(256)),
        ("gemma2.attention.sliding_window", Value::U32(4096)),
    ];
    // F16 (type 1): 2 bytes per element; no output.weight, so the output layer is a copy of
    // token_embd.
    let mut tensors = vec![(
        "token_embd.weight".to_string(),
        vec![2304, 1000],
        1,
        2304 * 1000 * 2,
    )];
    for i in 0..4 {
        tensors.push((
            format!("blk.{i}.attn_q.weight"),
            vec![2304, 2048],
            1,
            2304 * 2048 * 2,
        ));
    }
    let borrowed: Vec<(&str, Vec<u64>, u32, u64)> = tensors
        .iter()
        .map(|(n, d, t, b)| (n.as_str(), d.clone(), *t, *b))
        .collect();
    write_gguf(&path, &metadata, &borrowed);
    let report = json(&[path.to_str().unwrap(), "--gpu", "l4"]);
    let placement = &report["budget"]["llama_cpp"];
    // gemma2: even layers slide. Sliding layers hold 4096 + 512 cells; full ones 8192.
    assert_eq!(placement["sliding_window_cells"], 4608);
    let per_layer_cell = 4 * 256 * 2 * 2u64;
    assert_eq!(
        placement["kv_on_gpu_bytes"],
        2 * 8192 * per_layer_cell + 2 * 4608 * per_layer_cell
    );
    // The output layer is token_embd copied: both in the budget, one in RAM.
    assert_eq!(
        report["budget"]["weights_per_gpu_bytes"],
        4 * 2304 * 2048 * 2 + 2304 * 1000 * 2u64
    );
    assert_eq!(placement["weights_in_ram_bytes"], 2304 * 1000 * 2u64);
    let replicated = report["budget"]["replicated"].as_str().unwrap();
    assert!(
        replicated.contains("copies `token_embd` as the output layer"),
        "{replicated}"
    );
}

// See: #16
#[test]
fn issue_16_options_of_the_other_engine_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let gguf = llama_gguf(root.path());
    let dir = llama_3_1_8b(root.path(), "llama", 1);
    let dir = dir.to_str().unwrap();
    for (args, expected) in [
        (
            vec![
                gguf.as_str(),
                "--gpu",
                "l4",
                "--gpu-memory-utilization",
                "0.8",
            ],
            "`--gpu-memory-utilization` is a vLLM option",
        ),
        (
            vec![gguf.as_str(), "--gpu", "l4", "--max-model-len", "8192"],
            "`--max-model-len` is a vLLM option",
        ),
        (
            vec![gguf.as_str(), "--gpu", "l4", "--tensor-parallel-size", "2"],
            "`--tensor-parallel-size` is a vLLM option",
        ),
        (
            vec![
                gguf.as_str(),
                "--gpu",
                "l4",
                "--pipeline-parallel-size",
                "2",
            ],
            "`--pipeline-parallel-size` is a vLLM option",
        ),
        (
            vec![dir, "--gpu", "l4", "--n-gpu-layers", "10"],
            "`--n-gpu-layers` is a llama.cpp option for GGUF files",
        ),
        (
            vec![dir, "--gpu", "l4", "--ctx-size", "4096"],
            "`--ctx-size` is a llama.cpp option for GGUF files",
        ),
        (
            vec![
                gguf.as_str(),
                "--gpu",
                "l4",
                "--cache-type-v",
                "q4_0",
                "--flash-attn",
                "off",
            ],
            "llama.cpp refuses a quantized V cache without flash attention",
        ),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(err.contains("hint: "), "{err}");
    }
}

// See: #16
#[test]
fn issue_16_no_output_names_a_repository_path() {
    let root = tempfile::tempdir().unwrap();
    let gguf = llama_gguf(root.path());
    let dir = llama_3_1_8b(root.path(), "llama", 1);
    let dir = dir.to_str().unwrap();
    for args in [
        vec![dir, "--gpu", "h200"],
        vec![dir, "--gpu", "l4", "--tensor-parallel-size", "2"],
        vec![dir, "--gpu", "h200", "--json"],
        vec![gguf.as_str(), "--gpu", "h200"],
        vec![gguf.as_str(), "--gpu", "t4", "--format", "markdown"],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        for word in ["tests/", "fixtures", ".json:", "oom_cases"] {
            assert!(!out.contains(word), "{args:?} names `{word}`:\n{out}");
        }
    }
}

// See: #16
#[test]
fn issue_16_pipeline_parallel_budgets_the_tightest_stage() {
    let root = tempfile::tempdir().unwrap();
    let dir = llama_3_1_8b(root.path(), "llama", 1);
    let dir = dir.to_str().unwrap();
    // 32 layers over 2 stages: 16 + 16. The first stage holds the embeddings, the last the
    // lm_head of the same size and the final norm (8 KiB more, less than one KV token): the
    // stages tie on KV tokens and the first is shown.
    let report = json(&[
        dir,
        "--gpu",
        "l4",
        "--pipeline-parallel-size",
        "2",
        "--max-model-len",
        "8192",
    ]);
    let budget = &report["budget"];
    assert_eq!(budget["pipeline_parallel_size"], 2);
    // q, o: 4096²; k, v: 1024 × 4096; gate, up, down: 14336 × 4096; two norms; BF16.
    let layer = (2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 14336 * 4096 + 2 * 4096) * 2u64;
    let embedding = 128_256 * 4096 * 2u64;
    assert_eq!(budget["weights_per_gpu_bytes"], 16 * layer + embedding);
    // KV per GPU: 16 of 32 layers.
    assert_eq!(report["verdict"]["kv_bytes_per_token_per_gpu"], 65_536);
    // Stages talk over NCCL even without tensor parallelism: 518 MiB context + 256 MiB.
    assert_eq!(budget["allowances"][0]["bytes"], (518 + 256) << 20);
    let replicated = budget["replicated"].as_str().unwrap();
    assert!(
        replicated.starts_with("pipeline stage 1 of 2 (layers 0–15 + embeddings)"),
        "{replicated}"
    );
    // Uneven: 32 layers over 3 stages is 11 + 11 + 10 in vLLM, with a note.
    let report = json(&[
        dir,
        "--gpu",
        "l4",
        "--pipeline-parallel-size",
        "3",
        "--max-model-len",
        "8192",
    ]);
    let notes = report["limitations"].to_string();
    assert!(
        notes.contains("vLLM splits them as 11 + 11 + 10"),
        "{notes}"
    );
    // More stages than layers is refused.
    let (code, out, err) = run(&[dir, "--gpu", "l4", "--pipeline-parallel-size", "33"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("`--pipeline-parallel-size 33` is more than the model's 32 layers (`num_hidden_layers` in config.json)"),
        "{err}"
    );
}

// See: #16
#[test]
fn issue_16_every_size_option_needs_a_unit() {
    // `snapshot --total-memory` shares the parser with `fit --gpu-memory`.
    let pickle = fixture("h200-torch2.11/snap/capacity.pickle");
    let output = oomdoc()
        .args(["snapshot", pickle.to_str().unwrap(), "--total-memory", "80"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let err = stderr(&output);
    assert!(
        err.contains("`80` has no unit: write `80GiB`") && err.contains("'--total-memory <SIZE>'"),
        "{err}"
    );
    let output = oomdoc()
        .args([
            "snapshot",
            pickle.to_str().unwrap(),
            "--total-memory",
            "139.80GiB",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}
