//! CLI tests of `oomdoc fit`. Checkpoints are built here: header-only safetensors files whose
//! data section is a sparse `set_len` (so data offsets fit the file without writing data) and
//! GGUF headers from `oomdoc::parse::checkpoint::gguf::writer`. The `config.json` files are
//! real ones under tests/fixtures/checkpoint/ (provenance in tests/fixtures/README.md).

#![expect(
    clippy::unwrap_used,
    reason = "test helpers build files and fail the test on any error"
)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use oomdoc::parse::checkpoint::gguf::writer::{self, Value};
use serde_json::Value as Json;

use super::{fixture, oomdoc, stderr, stdout};

/// A tensor to write: name, safetensors dtype, shape.
pub(super) struct Tensor(String, &'static str, Vec<u64>);

pub(super) fn tensor(name: impl Into<String>, dtype: &'static str, shape: &[u64]) -> Tensor {
    Tensor(name.into(), dtype, shape.to_vec())
}

pub(super) fn dtype_bits(dtype: &str) -> u64 {
    match dtype {
        "F8_E4M3" | "U8" | "I8" => 8,
        "F16" | "BF16" => 16,
        "F32" | "I32" => 32,
        other => panic!("test dtype {other}"),
    }
}

/// Writes a safetensors header and extends the file (sparse) so every offset fits.
pub(super) fn write_safetensors(path: &Path, tensors: &[Tensor]) {
    let mut header = serde_json::Map::new();
    header.insert("__metadata__".into(), serde_json::json!({"format": "pt"}));
    let mut offset = 0u64;
    for Tensor(name, dtype, shape) in tensors {
        let bytes = shape.iter().product::<u64>() * dtype_bits(dtype) / 8;
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + bytes]}),
        );
        offset += bytes;
    }
    let mut json = serde_json::to_vec(&header).unwrap();
    while json.len() % 8 != 0 {
        json.push(b' ');
    }
    let mut file = fs::File::create(path).unwrap();
    file.write_all(&(json.len() as u64).to_le_bytes()).unwrap();
    file.write_all(&json).unwrap();
    file.set_len(8 + json.len() as u64 + offset).unwrap();
}

/// Llama-style tensors in `dtype`.
#[allow(clippy::too_many_arguments)]
pub(super) fn llama_tensors(
    layers: u64,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    intermediate: u64,
    vocab: u64,
    tied: bool,
    dtype: &'static str,
) -> Vec<Tensor> {
    let mut list = vec![tensor("model.embed_tokens.weight", dtype, &[vocab, hidden])];
    for i in 0..layers {
        let p = format!("model.layers.{i}.");
        list.push(tensor(
            format!("{p}self_attn.q_proj.weight"),
            dtype,
            &[heads * head_dim, hidden],
        ));
        list.push(tensor(
            format!("{p}self_attn.k_proj.weight"),
            dtype,
            &[kv_heads * head_dim, hidden],
        ));
        list.push(tensor(
            format!("{p}self_attn.v_proj.weight"),
            dtype,
            &[kv_heads * head_dim, hidden],
        ));
        list.push(tensor(
            format!("{p}self_attn.o_proj.weight"),
            dtype,
            &[hidden, heads * head_dim],
        ));
        list.push(tensor(
            format!("{p}mlp.gate_proj.weight"),
            dtype,
            &[intermediate, hidden],
        ));
        list.push(tensor(
            format!("{p}mlp.up_proj.weight"),
            dtype,
            &[intermediate, hidden],
        ));
        list.push(tensor(
            format!("{p}mlp.down_proj.weight"),
            dtype,
            &[hidden, intermediate],
        ));
        list.push(tensor(
            format!("{p}input_layernorm.weight"),
            dtype,
            &[hidden],
        ));
        list.push(tensor(
            format!("{p}post_attention_layernorm.weight"),
            dtype,
            &[hidden],
        ));
    }
    list.push(tensor("model.norm.weight", dtype, &[hidden]));
    if !tied {
        list.push(tensor("lm_head.weight", dtype, &[vocab, hidden]));
    }
    list
}

/// AWQ (GEMM) layout of the same model: qweight I32 [in, out/8], qzeros I32 [in/128, out/8],
/// scales F16 [in/128, out]; embeddings, norms and lm_head stay F16.
pub(super) fn awq_tensors(
    layers: u64,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    intermediate: u64,
    vocab: u64,
) -> Vec<Tensor> {
    let mut list = vec![tensor("model.embed_tokens.weight", "F16", &[vocab, hidden])];
    for i in 0..layers {
        let p = format!("model.layers.{i}.");
        for (name, input, output) in [
            ("self_attn.q_proj", hidden, heads * head_dim),
            ("self_attn.k_proj", hidden, kv_heads * head_dim),
            ("self_attn.v_proj", hidden, kv_heads * head_dim),
            ("self_attn.o_proj", heads * head_dim, hidden),
            ("mlp.gate_proj", hidden, intermediate),
            ("mlp.up_proj", hidden, intermediate),
            ("mlp.down_proj", intermediate, hidden),
        ] {
            list.push(tensor(
                format!("{p}{name}.qweight"),
                "I32",
                &[input, output / 8],
            ));
            list.push(tensor(
                format!("{p}{name}.qzeros"),
                "I32",
                &[input / 128, output / 8],
            ));
            list.push(tensor(
                format!("{p}{name}.scales"),
                "F16",
                &[input / 128, output],
            ));
        }
        list.push(tensor(
            format!("{p}input_layernorm.weight"),
            "F16",
            &[hidden],
        ));
        list.push(tensor(
            format!("{p}post_attention_layernorm.weight"),
            "F16",
            &[hidden],
        ));
    }
    list.push(tensor("model.norm.weight", "F16", &[hidden]));
    list.push(tensor("lm_head.weight", "F16", &[vocab, hidden]));
    list
}

/// A model directory: the config fixture (if any) and `shards` safetensors files.
pub(super) fn model_dir(
    root: &Path,
    name: &str,
    config: Option<&str>,
    tensors: Vec<Tensor>,
    shards: usize,
) -> PathBuf {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    if let Some(config) = config {
        fs::copy(
            fixture(&format!("checkpoint/{config}")),
            dir.join("config.json"),
        )
        .unwrap();
    }
    if shards == 1 {
        write_safetensors(&dir.join("model.safetensors"), &tensors);
        return dir;
    }
    let mut weight_map = serde_json::Map::new();
    let count = tensors.len();
    let mut parts: Vec<Vec<Tensor>> = (0..shards).map(|_| Vec::new()).collect();
    for (i, t) in tensors.into_iter().enumerate() {
        parts[i * shards / count].push(t);
    }
    for (k, part) in parts.iter().enumerate() {
        let file = format!("model-{:05}-of-{:05}.safetensors", k + 1, shards);
        for t in part {
            weight_map.insert(t.0.clone(), Json::String(file.clone()));
        }
        write_safetensors(&dir.join(&file), part);
    }
    let index = serde_json::json!({"metadata": {"total_size": 0}, "weight_map": weight_map});
    fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
    dir
}

pub(super) fn run(args: &[&str]) -> (i32, String, String) {
    let output = oomdoc().arg("fit").args(args).output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        stdout(&output),
        stderr(&output),
    )
}

pub(super) fn json(args: &[&str]) -> Json {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "stderr: {err}");
    serde_json::from_str(&out).unwrap()
}

pub(super) fn filters(root: &Path) -> Vec<(String, String)> {
    vec![(
        regex::escape(&root.display().to_string()),
        "[TMP]".to_string(),
    )]
}

macro_rules! snapshot {
    ($root:expr, $name:expr, $value:expr) => {
        let filters = filters($root);
        let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        insta::with_settings!({filters => filters}, {
            insta::assert_snapshot!($name, $value);
        });
    };
}
pub(super) use snapshot;

pub(super) fn llama_3_1_8b(root: &Path, name: &str, shards: usize) -> PathBuf {
    model_dir(
        root,
        name,
        Some("llama-3.1-8b.config.json"),
        llama_tensors(32, 4096, 32, 8, 128, 14336, 128256, false, "BF16"),
        shards,
    )
}

#[test]
pub(super) fn sharded_llama_named_int4_does_not_fit_an_l4() {
    let root = tempfile::tempdir().unwrap();
    let dir = llama_3_1_8b(root.path(), "Llama-3.1-8B-int4", 4);
    let path = dir.display().to_string();
    let (code, out, err) = run(&[&path, "--gpu", "l4"]);
    assert_eq!(code, 0, "{err}");
    snapshot!(root.path(), "fit_llama_int4_name_l4_text", out);
    let (_, out, _) = run(&[&path, "--gpu", "l4", "--json"]);
    snapshot!(root.path(), "fit_llama_int4_name_l4_json", out);
    let report: Json = serde_json::from_str(&out).unwrap();
    // 8.03 B parameters × 2 bytes, summed from the four shard headers.
    assert_eq!(report["weights"]["total_bytes"], 16_060_522_496u64);
    assert_eq!(report["weights"]["by_dtype"]["BF16"], 16_060_522_496u64);
    assert_eq!(report["parameters"], 8_030_261_248u64);
    assert_eq!(report["verdict"]["fits"], false);
    assert!(report["mismatches"][0]["message"]
        .as_str()
        .unwrap()
        .contains("a name saying int4 does not make a file int4"));
}

#[test]
pub(super) fn kv_bytes_per_token_from_real_configs() {
    // Checked by hand:
    // Llama-3.1-8B: 2 (K,V) × 32 layers × 8 KV heads × 128 × 2 B = 131072.
    // Llama-3.2-3B: 2 × 28 × 8 × 128 × 2 = 114688.
    // Qwen2.5-7B (GQA, use_sliding_window false): 2 × 28 × 4 × (3584/28 = 128) × 2 = 57344.
    // DeepSeek-R1 (MLA): 61 × (512 + 64) × 2 = 70272; fp8 KV: 61 × 576 × 1 = 35136.
    // fp8_ds_mla (vLLM, DeepSeek V3.2 FlashMLA layout): 61 × 656 = 40016.
    // Gemma-3-12B (text_config, 1 full layer in 6): 48 × 2 × 8 × 256 × 2 = 393216, of which
    //   8 full layers 65536 and 40 sliding layers 327680 (window 1024).
    // Gemma-2-9B (every other layer slides): 42 × 8192 = 344064, 172032 each.
    // zephyr-7b-alpha-AWQ (Mistral, every layer slides over 4096): 2 × 32 × 8 × 128 × 2 = 131072.
    // (config, extra args, bytes per token, full-attention part, sliding part, KV dtype)
    type Case<'a> = (&'a str, &'a [&'a str], u64, u64, u64, &'a str);
    let cases: &[Case] = &[
        ("llama-3.1-8b.config.json", &[], 131_072, 131_072, 0, "bf16"),
        ("llama-3.2-3b.config.json", &[], 114_688, 114_688, 0, "bf16"),
        ("qwen2.5-7b.config.json", &[], 57_344, 57_344, 0, "bf16"),
        ("deepseek-r1.config.json", &[], 70_272, 70_272, 0, "bf16"),
        (
            "deepseek-r1.config.json",
            &["--kv-cache-dtype", "fp8_ds_mla"],
            40_016,
            40_016,
            0,
            "fp8_ds_mla",
        ),
        (
            "deepseek-r1.config.json",
            &["--kv-cache-dtype", "fp8"],
            35_136,
            35_136,
            0,
            "fp8_e4m3",
        ),
        (
            "gemma-3-12b-it.config.json",
            &[],
            393_216,
            65_536,
            327_680,
            "bf16",
        ),
        (
            "gemma-2-9b.config.json",
            &[],
            344_064,
            172_032,
            172_032,
            "bf16",
        ),
        (
            "zephyr-7b-alpha-awq.config.json",
            &[],
            131_072,
            0,
            131_072,
            "fp16",
        ),
        (
            "llama-3.1-8b.config.json",
            &["--kv-cache-dtype", "fp32"],
            262_144,
            262_144,
            0,
            "fp32",
        ),
    ];
    let root = tempfile::tempdir().unwrap();
    for (i, (config, extra, total, full, sliding, dtype)) in cases.iter().enumerate() {
        let dir = model_dir(
            root.path(),
            &format!("m{i}"),
            Some(config),
            vec![tensor("model.embed_tokens.weight", "BF16", &[16, 16])],
            1,
        );
        let mut args = vec![dir.to_str().unwrap()];
        args.extend_from_slice(extra);
        let report = json(&args);
        let kv = &report["kv_cache"];
        assert_eq!(kv["bytes_per_token"], *total, "{config} {extra:?}");
        assert_eq!(kv["full_attention_bytes_per_token"], *full, "{config}");
        assert_eq!(kv["sliding_window_bytes_per_token"], *sliding, "{config}");
        assert_eq!(kv["dtype"], *dtype, "{config}");
    }
}

#[test]
pub(super) fn multimodal_gemma3_with_sliding_window_budget() {
    let root = tempfile::tempdir().unwrap();
    let dir = model_dir(
        root.path(),
        "gemma-3-12b-it",
        Some("gemma-3-12b-it.config.json"),
        llama_tensors(48, 3840, 16, 8, 256, 15360, 262208, true, "BF16")
            .into_iter()
            .map(|Tensor(name, dtype, shape)| {
                Tensor(
                    name.replacen("model.", "language_model.model.", 1),
                    dtype,
                    shape,
                )
            })
            .collect(),
        5,
    );
    let path = dir.display().to_string();
    let (code, out, err) = run(&[&path, "--gpu-memory", "40GiB", "--max-model-len", "32768"]);
    assert_eq!(code, 0, "{err}");
    snapshot!(root.path(), "fit_gemma3_sliding_text", out);
}

#[test]
pub(super) fn awq_checkpoint_counts_every_quantization_part() {
    let root = tempfile::tempdir().unwrap();
    let dir = model_dir(
        root.path(),
        "zephyr-7B-alpha-AWQ",
        Some("zephyr-7b-alpha-awq.config.json"),
        awq_tensors(32, 4096, 32, 8, 128, 14336, 32000),
        2,
    );
    let report = json(&[dir.to_str().unwrap(), "--gpu", "t4"]);
    let parts = &report["weights"]["quantization_parts"];
    // qweight: 32 layers × (4096×4096×2 + 4096×1024×2 + 4096×14336×3) / 2 bytes.
    let linear: u64 = 32 * (4096 * 4096 * 2 + 4096 * 1024 * 2 + 4096 * 14336 * 3);
    assert_eq!(parts["qweight"], linear / 2);
    assert_eq!(parts["qzeros"], linear / 128 / 2);
    assert_eq!(parts["scales"], linear / 128 * 2);
    assert_eq!(report["parameters"], linear + 2 * 32000 * 4096 + 65 * 4096);
    assert_eq!(
        report["mismatches"],
        serde_json::json!([{"kind": "index", "message": format!("`model.safetensors.index.json` says `total_size` 0 but the headers sum to {} bytes (the index is a hint; the headers are used)", report["weights"]["total_bytes"])}])
    );
    snapshot!(
        root.path(),
        "fit_awq_t4_json",
        serde_json::to_string_pretty(&report).unwrap()
    );
}

#[test]
pub(super) fn awq_config_over_f16_headers_is_reported() {
    let root = tempfile::tempdir().unwrap();
    let dir = model_dir(
        root.path(),
        "zephyr-7B-alpha-AWQ",
        Some("zephyr-7b-alpha-awq.config.json"),
        llama_tensors(32, 4096, 32, 8, 128, 14336, 32000, false, "F16"),
        1,
    );
    let (code, out, err) = run(&[dir.to_str().unwrap(), "--gpu", "rtx4090"]);
    assert_eq!(code, 0, "{err}");
    snapshot!(root.path(), "fit_awq_config_f16_headers_text", out);
}

#[test]
pub(super) fn fp8_layout_with_block_scales() {
    let root = tempfile::tempdir().unwrap();
    let mut tensors = vec![tensor("model.embed_tokens.weight", "BF16", &[129280, 7168])];
    for i in 0..3 {
        let p = format!("model.layers.{i}.mlp.");
        for name in ["gate_proj", "up_proj"] {
            tensors.push(tensor(
                format!("{p}{name}.weight"),
                "F8_E4M3",
                &[18432, 7168],
            ));
            tensors.push(tensor(
                format!("{p}{name}.weight_scale_inv"),
                "F32",
                &[144, 56],
            ));
        }
        tensors.push(tensor(
            format!("{p}down_proj.weight"),
            "F8_E4M3",
            &[7168, 18432],
        ));
        tensors.push(tensor(
            format!("{p}down_proj.weight_scale_inv"),
            "F32",
            &[56, 144],
        ));
    }
    tensors.push(tensor("lm_head.weight", "BF16", &[129280, 7168]));
    let dir = model_dir(
        root.path(),
        "DeepSeek-R1-slice",
        Some("deepseek-r1.config.json"),
        tensors,
        1,
    );
    let report = json(&[dir.to_str().unwrap()]);
    let fp8 = 3 * 3 * 18432 * 7168u64;
    assert_eq!(report["weights"]["by_dtype"]["F8_E4M3"], fp8);
    assert_eq!(
        report["weights"]["by_dtype"]["F32"],
        3 * 3 * 144 * 56 * 4u64
    );
    assert_eq!(
        report["weights"]["quantization_parts"]["weight_scale"],
        3 * 3 * 144 * 56 * 4u64
    );
    assert_eq!(report["mismatches"], serde_json::json!([]));
    assert_eq!(report["kv_cache"]["attention"], "mla");
}

pub(super) fn write_gguf(
    path: &Path,
    metadata: &[(&str, Value)],
    tensors: &[(&str, Vec<u64>, u32, u64)],
) {
    let (header, size) = writer::header(metadata, tensors);
    let mut file = fs::File::create(path).unwrap();
    file.write_all(&header).unwrap();
    file.set_len(size).unwrap();
}

pub(super) fn llama_gguf_metadata(file_type: u32) -> Vec<(&'static str, Value)> {
    vec![
        ("general.architecture", Value::Str("llama".into())),
        ("general.file_type", Value::U32(file_type)),
        ("llama.block_count", Value::U32(32)),
        ("llama.context_length", Value::U32(131072)),
        ("llama.embedding_length", Value::U32(4096)),
        ("llama.attention.head_count", Value::U32(32)),
        ("llama.attention.head_count_kv", Value::U32(8)),
        (
            "tokenizer.ggml.tokens",
            Value::StrArray((0..1000).map(|i| format!("tok{i}")).collect()),
        ),
    ]
}

pub(super) fn llama_gguf_tensors() -> Vec<(String, Vec<u64>, u32, u64)> {
    // Q4_K (id 12): 144 bytes per 256; Q6_K (id 14): 210 per 256; F32 (id 0).
    let q4k = |n: u64| n / 256 * 144;
    let mut list = vec![(
        "token_embd.weight".to_string(),
        vec![4096, 128256],
        12,
        q4k(4096 * 128256),
    )];
    for i in 0..32 {
        list.push((
            format!("blk.{i}.attn_q.weight"),
            vec![4096, 4096],
            12,
            q4k(4096 * 4096),
        ));
        list.push((
            format!("blk.{i}.ffn_down.weight"),
            vec![14336, 4096],
            14,
            14336 * 4096 / 256 * 210,
        ));
        list.push((format!("blk.{i}.attn_norm.weight"), vec![4096], 0, 4096 * 4));
    }
    list.push((
        "output.weight".to_string(),
        vec![4096, 128256],
        14,
        4096 * 128256 / 256 * 210,
    ));
    list
}

#[test]
pub(super) fn gguf_single_and_split() {
    let root = tempfile::tempdir().unwrap();
    let tensors = llama_gguf_tensors();
    let borrowed: Vec<(&str, Vec<u64>, u32, u64)> = tensors
        .iter()
        .map(|(n, d, t, b)| (n.as_str(), d.clone(), *t, *b))
        .collect();
    let single = root.path().join("Meta-Llama-3.1-8B-Q4_K_M.gguf");
    write_gguf(&single, &llama_gguf_metadata(15), &borrowed);
    let report = json(&[single.to_str().unwrap(), "--gpu", "rtx4090"]);
    let q4k: u64 = tensors.iter().filter(|t| t.2 == 12).map(|t| t.3).sum();
    let q6k: u64 = tensors.iter().filter(|t| t.2 == 14).map(|t| t.3).sum();
    assert_eq!(report["weights"]["by_dtype"]["Q4_K"], q4k);
    assert_eq!(report["weights"]["by_dtype"]["Q6_K"], q6k);
    assert_eq!(report["weights"]["by_dtype"]["F32"], 32 * 4096 * 4u64);
    // llama.cpp default KV type f16: 2 × 32 × 8 × (4096/32) × 2 = 131072.
    assert_eq!(report["kv_cache"]["bytes_per_token"], 131_072);
    assert_eq!(report["kv_cache"]["dtype"], "f16");
    assert_eq!(report["declared_format"]["gguf_file_type"], "Q4_K_M");
    assert_eq!(report["mismatches"], serde_json::json!([]));
    snapshot!(
        root.path(),
        "fit_gguf_q4_k_m_json",
        serde_json::to_string_pretty(&report).unwrap()
    );

    // The same file named Q8_0: the name is contradicted.
    let renamed = root.path().join("Meta-Llama-3.1-8B-Q8_0.gguf");
    write_gguf(&renamed, &llama_gguf_metadata(15), &borrowed);
    let report = json(&[renamed.to_str().unwrap()]);
    assert_eq!(report["mismatches"][0]["kind"], "name");

    // Split in two parts: both headers are read and summed.
    let split_dir = root.path().join("split");
    fs::create_dir_all(&split_dir).unwrap();
    let (first, second) = borrowed.split_at(40);
    write_gguf(
        &split_dir.join("llama-00001-of-00002.gguf"),
        &llama_gguf_metadata(15),
        first,
    );
    write_gguf(&split_dir.join("llama-00002-of-00002.gguf"), &[], second);
    let report = json(&[split_dir
        .join("llama-00001-of-00002.gguf")
        .to_str()
        .unwrap()]);
    assert_eq!(report["files"].as_array().unwrap().len(), 2);
    assert_eq!(
        report["weights"]["total_bytes"],
        tensors.iter().map(|t| t.3).sum::<u64>()
    );
    let report_dir = json(&[split_dir.to_str().unwrap()]);
    assert_eq!(report_dir["weights"], report["weights"]);
    fs::remove_file(split_dir.join("llama-00002-of-00002.gguf")).unwrap();
    let (code, _, err) = run(&[split_dir
        .join("llama-00001-of-00002.gguf")
        .to_str()
        .unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("llama-00002-of-00002.gguf` is missing"),
        "{err}"
    );
}

#[test]
pub(super) fn model_id_is_found_in_the_hugging_face_cache() {
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("hub/models--meta-llama--Llama-3.2-3B");
    fs::create_dir_all(repo.join("refs")).unwrap();
    fs::write(repo.join("refs/main"), "abc123\n").unwrap();
    let snapshots = repo.join("snapshots");
    fs::create_dir_all(&snapshots).unwrap();
    model_dir(
        &snapshots,
        "abc123",
        Some("llama-3.2-3b.config.json"),
        llama_tensors(28, 3072, 24, 8, 128, 8192, 128256, true, "BF16"),
        1,
    );
    let output = oomdoc()
        .args(["fit", "meta-llama/Llama-3.2-3B", "--json"])
        .env("HF_HUB_CACHE", root.path().join("hub"))
        .env_remove("HF_HOME")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Json = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["weights"]["tied_embeddings"], true);
    assert_eq!(report["parameters"], 3_212_749_824u64);
    let output = oomdoc()
        .args(["fit", "meta-llama/Nope"])
        .env("HF_HUB_CACHE", root.path().join("hub"))
        .env_remove("HF_HOME")
        .env("HOME", root.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    snapshot!(root.path(), "fit_missing_model_id_stderr", stderr(&output));
}

#[test]
pub(super) fn tensor_parallel_splits_weights_and_kv_heads() {
    let root = tempfile::tempdir().unwrap();
    let dir = llama_3_1_8b(root.path(), "llama", 1);
    let report = json(&[
        dir.to_str().unwrap(),
        "--gpu",
        "l4",
        "--tensor-parallel-size",
        "2",
        "--max-model-len",
        "8192",
    ]);
    let budget = &report["budget"];
    // Norms (65 × 4096 × 2 B) are replicated; the rest is halved.
    let norms = 65 * 4096 * 2u64;
    assert_eq!(
        budget["weights_per_gpu_bytes"],
        norms + (16_060_522_496 - norms) / 2
    );
    assert_eq!(report["verdict"]["kv_bytes_per_token_per_gpu"], 65_536);
    assert_eq!(report["verdict"]["fits"], true);
}

pub(super) fn hostile(root: &Path, name: &str, bytes: &[u8]) -> String {
    let path = root.join(name);
    fs::write(&path, bytes).unwrap();
    let (code, out, err) = run(&[path.to_str().unwrap()]);
    assert_eq!(code, 2, "{name}: {err}");
    assert!(out.is_empty());
    assert!(err.contains(name), "{name}: {err}");
    format!("## {name}\n{err}")
}

#[test]
pub(super) fn hostile_files_give_errors_naming_the_file() {
    let root = tempfile::tempdir().unwrap();
    let with_header = |json: &str, data: usize| {
        let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(json.as_bytes());
        bytes.extend(std::iter::repeat_n(0u8, data));
        bytes
    };
    let mut gguf_absurd = b"GGUF".to_vec();
    gguf_absurd.extend_from_slice(&3u32.to_le_bytes());
    gguf_absurd.extend_from_slice(&u64::MAX.to_le_bytes());
    gguf_absurd.extend_from_slice(&0u64.to_le_bytes());
    let (gguf_ok, _) = writer::header(
        &[("general.architecture", Value::Str("llama".into()))],
        &[("w", vec![32], 8, 34)],
    );
    let mut report = String::new();
    for (name, bytes) in [
        ("absurd-length.safetensors", u64::MAX.to_le_bytes().to_vec()),
        (
            "truncated-header.safetensors",
            with_header(
                r#"{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#,
                4,
            )[..30]
                .to_vec(),
        ),
        ("bad-json.safetensors", with_header("{not json", 0)),
        (
            "outside.safetensors",
            with_header(
                r#"{"w":{"dtype":"F32","shape":[1000],"data_offsets":[0,4000]}}"#,
                16,
            ),
        ),
        (
            "unknown-dtype.safetensors",
            with_header(
                r#"{"w":{"dtype":"Q4","shape":[8],"data_offsets":[0,4]}}"#,
                4,
            ),
        ),
        ("tiny.safetensors", vec![1, 2, 3]),
        ("absurd-count.gguf", gguf_absurd),
        ("truncated.gguf", gguf_ok[..gguf_ok.len() - 5].to_vec()),
        ("not-gguf.gguf", b"GGML\x03\x00\x00\x00".to_vec()),
    ] {
        report.push_str(&hostile(root.path(), name, &bytes));
        report.push('\n');
    }
    snapshot!(root.path(), "fit_hostile_files_stderr", report);
}

#[test]
pub(super) fn unknown_gpu_class_is_a_usage_error() {
    let root = tempfile::tempdir().unwrap();
    let dir = model_dir(root.path(), "m", None, vec![tensor("w", "F16", &[4])], 1);
    let (code, out, err) = run(&[dir.to_str().unwrap(), "--gpu", "tpu-v5"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.starts_with("error: unknown GPU class `tpu-v5`"),
        "{err}"
    );
    assert!(err.contains("hint: use one of t4, l4"), "{err}");
}

#[test]
pub(super) fn zero_sizes_and_counts_are_usage_errors() {
    let root = tempfile::tempdir().unwrap();
    let dir = model_dir(root.path(), "m", None, vec![tensor("w", "F16", &[4])], 1);
    let dir = dir.to_str().unwrap();
    for (args, expected) in [
        (
            vec!["--gpu", "h200", "--max-model-len", "0"],
            "`--max-model-len` must be at least 1",
        ),
        (
            vec!["--gpu", "h200", "--max-num-seqs", "0"],
            "`--max-num-seqs` must be at least 1",
        ),
        (
            vec!["--gpu", "h200", "--max-num-batched-tokens", "0"],
            "`--max-num-batched-tokens` must be at least 1",
        ),
        (
            vec!["--gpu-memory", "0GiB"],
            "`--gpu-memory` must be more than 0 bytes",
        ),
    ] {
        let mut all = vec![dir];
        all.extend(args);
        let (code, out, err) = run(&all);
        assert_eq!(code, 2, "{err}");
        assert!(out.is_empty());
        assert!(err.starts_with(&format!("error: {expected}")), "{err}");
    }
}

#[test]
pub(super) fn markdown_and_html_render_the_same_report() {
    let root = tempfile::tempdir().unwrap();
    let dir = model_dir(
        root.path(),
        "m",
        Some("qwen2.5-7b.config.json"),
        vec![tensor("model.embed_tokens.weight", "BF16", &[152064, 3584])],
        1,
    );
    let (code, markdown, _) = run(&[
        dir.to_str().unwrap(),
        "--gpu",
        "h100",
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 0);
    snapshot!(root.path(), "fit_qwen_markdown", markdown);
    let (code, html, _) = run(&[dir.to_str().unwrap(), "--gpu", "h100", "--format", "html"]);
    assert_eq!(code, 0);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script") && !html.contains("http://") && !html.contains("src="));
}

#[test]
pub(super) fn detected_gpu_gives_the_budget() {
    let root = tempfile::tempdir().unwrap();
    let dir = llama_3_1_8b(root.path(), "llama", 1);
    let xml = fixture("h200-torch2.11/nvidia-smi-q.xml");
    let report = json(&[dir.to_str().unwrap(), "--gpu-from", xml.to_str().unwrap()]);
    let budget = &report["budget"];
    // NVML total 143771 MiB − driver-reserved 616 MiB = 143155 MiB, what CUDA reports.
    assert_eq!(budget["gpu_total_bytes"], 143_155u64 << 20);
    assert_eq!(budget["gpu"], "NVIDIA H200");
    assert_eq!(budget["gpu_total_source"], "nvidia_smi");
    assert_eq!(report["verdict"]["fits"], true);
    assert_eq!(report["limitations"], serde_json::json!([]));
    // A GGUF file on the same detected GPU: one GPU, llama.cpp's budget.
    let gguf = llama_gguf(root.path());
    let report = json(&[&gguf, "--gpu-from", xml.to_str().unwrap()]);
    assert_eq!(report["budget"]["engine"], "llama.cpp");
    assert_eq!(report["budget"]["gpu_total_bytes"], 143_155u64 << 20);
    assert_eq!(report["budget"]["usable_bytes"], 143_155u64 << 20);
    assert_eq!(report["verdict"]["fits"], true);
}

#[test]
pub(super) fn second_copies_and_adapters_are_not_counted() {
    let root = tempfile::tempdir().unwrap();
    let dir = model_dir(
        root.path(),
        "Mistral-7B",
        None,
        vec![tensor("model.embed_tokens.weight", "BF16", &[32000, 4096])],
        1,
    );
    // Mistral's own-format copy and a LoRA adapter beside the HF weights.
    write_safetensors(
        &dir.join("consolidated.safetensors"),
        &[tensor("tok_embeddings.weight", "BF16", &[32000, 4096])],
    );
    write_safetensors(
        &dir.join("adapter_model.safetensors"),
        &[tensor("base_model.model.lora_A.weight", "F32", &[16, 4096])],
    );
    let report = json(&[dir.to_str().unwrap(), "--gpu-memory", "24GiB"]);
    assert_eq!(report["weights"]["total_bytes"], 32000 * 4096 * 2u64);
    assert_eq!(report["files"].as_array().unwrap().len(), 1);
    let limitations = report["limitations"].to_string();
    assert!(
        limitations.contains("skipped `adapter_model.safetensors`"),
        "{limitations}"
    );
    assert!(
        limitations.contains("skipped `consolidated.safetensors`"),
        "{limitations}"
    );
}

#[test]
pub(super) fn bitsandbytes_nf4_layout_counts_its_state() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("Llama-3.2-3B-bnb-4bit");
    fs::create_dir_all(&dir).unwrap();
    let mut config: Json = serde_json::from_str(
        &fs::read_to_string(fixture("checkpoint/llama-3.2-3b.config.json")).unwrap(),
    )
    .unwrap();
    config["quantization_config"] = serde_json::json!({
        "quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4"
    });
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    // bitsandbytes stores a 4-bit [out, in] weight as U8 [out·in/2, 1] with its absmax
    // (one F32 per 64 weights), the 16-entry quant_map and a packed quant_state.
    let (out_features, in_features) = (8192u64, 3072u64);
    let numel = out_features * in_features;
    let tensors = vec![
        tensor("model.embed_tokens.weight", "BF16", &[128256, 3072]),
        tensor("model.layers.0.mlp.up_proj.weight", "U8", &[numel / 2, 1]),
        tensor(
            "model.layers.0.mlp.up_proj.weight.absmax",
            "F32",
            &[numel / 64],
        ),
        tensor("model.layers.0.mlp.up_proj.weight.quant_map", "F32", &[16]),
        tensor(
            "model.layers.0.mlp.up_proj.weight.quant_state.bitsandbytes__nf4",
            "U8",
            &[128],
        ),
    ];
    write_safetensors(&dir.join("model.safetensors"), &tensors);
    let report = json(&[dir.to_str().unwrap()]);
    assert_eq!(report["mismatches"], serde_json::json!([]));
    assert_eq!(
        report["weights"]["quantization_parts"]["bitsandbytes_state"],
        numel / 64 * 4 + 16 * 4 + 128
    );
    assert_eq!(report["parameters"], 128256 * 3072 + numel);
    assert_eq!(
        report["declared_format"]["name_hints"],
        serde_json::json!(["4bit", "bnb-4bit"])
    );
}

#[cfg(unix)]
#[test]
pub(super) fn a_broken_shard_link_is_an_error_not_fewer_weights() {
    let root = tempfile::tempdir().unwrap();
    let dir = model_dir(root.path(), "m", None, vec![tensor("w", "F16", &[4])], 1);
    // A Hugging Face snapshot whose second blob never arrived.
    let shard = dir.join("model-00002-of-00002.safetensors");
    std::os::unix::fs::symlink(root.path().join("no-such-blob"), &shard).unwrap();
    let (code, out, err) = run(&[dir.to_str().unwrap(), "--gpu", "h200"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.starts_with(&format!("error: `{}` is missing", shard.display())),
        "{err}"
    );
    assert!(err.contains("incomplete download"), "{err}");
}

/// A llama-3.1-8b directory whose config has `key` set to `value`.
pub(super) fn llama_with(root: &Path, name: &str, key: &str, value: Json) -> PathBuf {
    let dir = llama_3_1_8b(root, name, 1);
    let mut config: Json =
        serde_json::from_slice(&fs::read(dir.join("config.json")).unwrap()).unwrap();
    config[key] = value;
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    dir
}

#[test]
pub(super) fn issue_14_index_entries_that_leave_the_directory_are_refused() {
    // See: #14. Shards named `../x.safetensors` or by an absolute path were read.
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("x.safetensors");
    write_safetensors(&outside, &[tensor("w", "F16", &[4])]);
    for (name, entry) in [
        ("dotdot", "../x.safetensors".to_string()),
        ("absolute", outside.display().to_string()),
    ] {
        let dir = llama_3_1_8b(root.path(), name, 2);
        let index = serde_json::json!({"weight_map": {"w": entry}});
        fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
        let (code, out, err) = run(&[dir.to_str().unwrap(), "--gpu", "h200"]);
        assert_eq!(code, 2, "{err}");
        assert!(out.is_empty());
        let first = err.lines().next().unwrap();
        assert_eq!(
            first,
            format!(
                "error: `{entry}` in `{}` leads outside the model directory `{}`",
                dir.join("model.safetensors.index.json").display(),
                dir.display()
            )
        );
    }
    // A link inside the directory that resolves outside it is refused too.
    let dir = llama_3_1_8b(root.path(), "link", 1);
    fs::remove_file(dir.join("model.safetensors")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("model.safetensors")).unwrap();
    let (code, _, err) = run(&[dir.to_str().unwrap(), "--gpu", "h200"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("error: `model.safetensors` in `")
            && err.contains("leads outside the model directory"),
        "{err}"
    );
}

#[test]
pub(super) fn issue_14_refs_main_pointing_outside_the_cache_is_refused() {
    // See: #14. `refs/main` of `../../../elsewhere` was followed out of the cache.
    let root = tempfile::tempdir().unwrap();
    llama_3_1_8b(root.path(), "elsewhere", 1);
    let repo = root.path().join("hub/models--org--model");
    fs::create_dir_all(repo.join("refs")).unwrap();
    fs::create_dir_all(repo.join("snapshots")).unwrap();
    fs::write(repo.join("refs/main"), "../../../elsewhere\n").unwrap();
    let output = oomdoc()
        .args(["fit", "org/model", "--gpu", "h200"])
        .env("HF_HUB_CACHE", root.path().join("hub"))
        .env_remove("HF_HOME")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.starts_with("error: `../../../elsewhere` in `")
            && err.contains("refs/main` leads outside the model directory"),
        "{err}"
    );
    // A snapshot that is a link out of the repository folder is refused as well.
    fs::write(repo.join("refs/main"), "abc\n").unwrap();
    std::os::unix::fs::symlink(root.path().join("elsewhere"), repo.join("snapshots/abc")).unwrap();
    let output = oomdoc()
        .args(["fit", "org/model", "--gpu", "h200"])
        .env("HF_HUB_CACHE", root.path().join("hub"))
        .env_remove("HF_HOME")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).starts_with("error: `abc` in `"),
        "{}",
        stderr(&output)
    );
}

#[test]
pub(super) fn issue_14_wrapping_sums_and_absurd_configs() {
    // See: #14. `vocab_size` 2^60 with `--max-num-seqs` u64::MAX wrapped the allowance sum to
    // "fits"; 0 KV heads, `head_dim` 0 and 10^18 layers gave self-contradicting text.
    let root = tempfile::tempdir().unwrap();
    let dir = llama_3_1_8b(root.path(), "plain", 1);
    let report = json(&[
        dir.to_str().unwrap(),
        "--gpu",
        "h200",
        "--max-num-seqs",
        "18446744073709551615",
    ]);
    assert_eq!(report["verdict"]["fits"], false, "{report}");
    for (name, key, value, expected) in [
        (
            "vocab",
            "vocab_size",
            serde_json::json!(1u64 << 60),
            "the model's vocabulary size is 1152921504606846976: oomdoc accepts at most 4294967296",
        ),
        (
            "kv0",
            "num_key_value_heads",
            serde_json::json!(0),
            "the model's KV head count is 0: a layer with a KV cache needs 1 to 16777216 KV heads",
        ),
        (
            "head0",
            "head_dim",
            serde_json::json!(0),
            "the model's KV size per head (key + value) is 0: a layer with a KV cache needs 1 to 16777216 elements per head",
        ),
        (
            "layers",
            "num_hidden_layers",
            serde_json::json!(1_000_000_000_000_000_000u64),
            "the model's layer count is 1000000000000000000: oomdoc accepts 1 to 100000",
        ),
    ] {
        let dir = llama_with(root.path(), name, key, value);
        let (code, out, err) = run(&[dir.to_str().unwrap(), "--gpu", "h200"]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(out.is_empty());
        assert_eq!(
            err.lines().next().unwrap(),
            format!("error: the checkpoint's config is not a real model: {expected}"),
            "{name}"
        );
    }
}

#[test]
pub(super) fn issue_14_fifos_are_refused_not_waited_on() {
    // See: #14. A FIFO named like a checkpoint blocked `fit` for ever.
    let root = tempfile::tempdir().unwrap();
    let fifo = root.path().join("model.safetensors");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let started = std::time::Instant::now();
    let (code, out, err) = run(&[fifo.to_str().unwrap(), "--gpu", "h200"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.starts_with(&format!(
            "error: `{}` is a FIFO (named pipe), not a regular file",
            fifo.display()
        )),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
pub(super) fn issue_14_sparse_gguf_and_huge_headers_stay_small() {
    // See: #14. A sparse GGUF (1 TB apparent, 22M empty tensor infos) took 5 GB; a 99 MB
    // safetensors header took 2.2 GB. Run under a 1 GiB address-space cap.
    let root = tempfile::tempdir().unwrap();
    let sparse = root.path().join("sparse.gguf");
    let mut header = b"GGUF".to_vec();
    header.extend_from_slice(&3u32.to_le_bytes());
    header.extend_from_slice(&22_000_000u64.to_le_bytes());
    header.extend_from_slice(&0u64.to_le_bytes());
    let file = fs::File::create(&sparse).unwrap();
    (&file).write_all(&header).unwrap();
    file.set_len(1 << 40).unwrap();
    let capped = |path: &Path| {
        let output = std::process::Command::new("prlimit")
            .arg("--as=1073741824")
            .arg(env!("CARGO_BIN_EXE_oomdoc"))
            .args(["fit", path.to_str().unwrap(), "--gpu", "h200"])
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (output.status.code(), stderr(&output))
    };
    let (code, err) = capped(&sparse);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("tensor count 22000000 at offset 8 is above the 1048576 oomdoc accepts"),
        "{err}"
    );
    // Below the count limit, the zeros of a sparse file are not read as a header.
    let sparse = root.path().join("sparse-under.gguf");
    header[8..16].copy_from_slice(&1_000_000u64.to_le_bytes());
    let file = fs::File::create(&sparse).unwrap();
    (&file).write_all(&header).unwrap();
    file.set_len(1 << 40).unwrap();
    let (code, err) = capped(&sparse);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("has only"), "{err}");
    // A ~97 MB header of 850,000 small tensors parses within the cap.
    let big = root.path().join("big.safetensors");
    let count = 850_000u64;
    let mut json = String::with_capacity(100_000_000);
    json.push('{');
    for index in 0..count {
        if index > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            r#""model.layers.{index:07}.weight.padding.padding.padding":{{"dtype":"F16","shape":[1],"data_offsets":[{},{}]}}"#,
            index * 2,
            index * 2 + 2
        ));
    }
    json.push('}');
    let mut file = fs::File::create(&big).unwrap();
    file.write_all(&(json.len() as u64).to_le_bytes()).unwrap();
    file.write_all(json.as_bytes()).unwrap();
    file.set_len(8 + json.len() as u64 + count * 2).unwrap();
    drop(json);
    let (code, err) = capped(&big);
    assert_eq!(code, Some(0), "{err}");
}

/// The Llama-3.1-8B-like GGUF of `gguf_single_and_split`, written under `root`.
pub(super) fn llama_gguf(root: &Path) -> String {
    let tensors = llama_gguf_tensors();
    let borrowed: Vec<(&str, Vec<u64>, u32, u64)> = tensors
        .iter()
        .map(|(n, d, t, b)| (n.as_str(), d.clone(), *t, *b))
        .collect();
    let path = root.join("Meta-Llama-3.1-8B-Q4_K_M.gguf");
    write_gguf(&path, &llama_gguf_metadata(15), &borrowed);
    path.to_str().unwrap().to_string()
}
