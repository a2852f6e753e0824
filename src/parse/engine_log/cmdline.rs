//! Launch command lines pasted with a log (`vllm serve …`, `python -m sglang.launch_server …`,
//! `docker run … text-generation-inference:2.0.4 …`, `llama-server -m … -ngl 99`): they name
//! the engine, its version (docker tags) and the settings the user chose. Flag names from each
//! engine's CLI (`vllm/engine/arg_utils.py`, `sglang/srt/server_args.py`, TGI
//! `launcher/src/main.rs`, llama.cpp `common/arg.cpp`).

use super::common::{after, has};
use super::{rule, Certainty, LineFacts, Rule};
use crate::model::explain::{EventFigures, EventKind, Phase};
use crate::model::failure::EngineName;

pub(super) const RULES: &[Rule] = &[
    rule("vllm serve ", vllm),
    rule("vllm.entrypoints.openai.api_server", vllm),
    rule("vllm.entrypoints.api_server", vllm),
    rule("sglang.launch_server", sglang),
    rule("text-generation-launcher ", tgi),
    rule("text-generation-inference:", tgi),
    rule("llama-server ", llama),
    rule("llama-cli ", llama),
    // Checkpoint conversion scripts run from a shell (see `conversion_script`). The markers
    // name the scripts: a bare `convert` marker made the log scan's SIMD filter pass far more
    // positions of busy training logs (hot_path_tests `teddy_passes_few_positions_to_its_check`).
    rule("convert_hf_to_gguf", conversion_script),
    // llama.cpp's converters of other names through its history (`convert-pth-to-ggml.py`,
    // March 2023; `convert-hf-to-gguf.py`, late 2023; the LoRA, GPTQ and GGML-to-GGUF ones).
    rule("convert-pth-to-ggml", conversion_script),
    rule("convert-hf-to-gguf", conversion_script),
    rule("convert-gptq-to-ggml", conversion_script),
    rule("convert-lora-to-ggml", conversion_script),
    rule("convert_lora_to_gguf", conversion_script),
    rule("convert-llama-ggml-to-gguf", conversion_script),
    rule("convert_llama_ggml_to_gguf", conversion_script),
    rule("convert_checkpoint", conversion_script),
    rule("convert_weight", conversion_script),
    // transformers' checkpoint converters (`models/llama/convert_llama_weights_to_hf.py`,
    // `convert_mistral_weights_to_hf.py`, …), session 48.
    rule("_weights_to_hf", conversion_script),
    // CTranslate2's converter console scripts (`python/setup.py` entry points:
    // `ct2-transformers-converter`, `ct2-fairseq-converter`, `ct2-opennmt-py-converter`, …).
    rule("-converter ", ctranslate2_converter),
    // DeepSeek-V3's and -R1's `inference/convert.py` (its `__main__`: `--hf-ckpt-path`,
    // `--save-path`, `--n-experts`, `--model-parallel`) reshards a Hugging Face checkpoint for
    // the demo's model-parallel ranks; the generic `convert.py` shares no marker of its own.
    rule("--hf-ckpt-path", conversion_script),
    rule("trtllm-build ", engine_build),
    rule("trtexec ", engine_build),
    rule("lmdeploy lite ", lmdeploy_lite),
];

/// LMDeploy's quantization commands (`lmdeploy lite auto_awq|auto_gptq|calibrate|smooth_quant
/// <model> …`, `lmdeploy/cli/lite.py` `SubCliLite`, 0.2-0.10): the loaded model's weights are
/// calibrated and quantized, a conversion that runs until the log shows another stage.
fn lmdeploy_lite(text: &str, facts: &mut LineFacts) {
    let Some(rest) = after(text, "lmdeploy lite ") else {
        return;
    };
    let command = rest.split_whitespace().next().unwrap_or_default();
    if matches!(
        command,
        "auto_awq" | "auto_gptq" | "calibrate" | "smooth_quant"
    ) {
        facts.engine(EngineName::Lmdeploy, Certainty::Strong);
        facts.event(
            EventKind::FormatConversion,
            Phase::FormatConversion,
            EventFigures::default(),
        );
    }
}

/// The value of `--flag value` or `--flag=value`, unquoted.
fn flag<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = text;
    while let Some(found) = after(rest, name) {
        rest = found;
        let value = if let Some(value) = found.strip_prefix('=') {
            value
        } else if found.starts_with(' ') {
            found.trim_start()
        } else {
            continue;
        };
        let value = value.split_whitespace().next()?;
        let value = value.trim_matches(['"', '\'']);
        if value.is_empty() || value.starts_with('-') {
            return None;
        }
        return Some(value);
    }
    None
}

/// Whether a boolean flag is present (`--enforce-eager`), not followed by `=false`.
fn switch(text: &str, name: &str) -> bool {
    text.split_whitespace()
        .any(|word| word == name || word.eq_ignore_ascii_case(&format!("{name}=true")))
}

fn number<T: std::str::FromStr>(text: &str, names: &[&str]) -> Option<T> {
    names
        .iter()
        .find_map(|name| flag(text, name).and_then(|value| value.parse().ok()))
}

fn vllm(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
    if let Some(model) = flag(text, "--model").or_else(|| {
        after(text, "vllm serve ")
            .and_then(|rest| rest.split_whitespace().next())
            .filter(|word| !word.starts_with('-'))
    }) {
        facts.model.name = Some(model.to_string());
    }
    if let Some(dtype) = flag(text, "--dtype") {
        facts.model.dtype = Some(dtype.to_string());
    }
    if let Some(quantization) = flag(text, "--quantization").or_else(|| flag(text, "-q")) {
        facts.model.quantization = Some(quantization.to_string());
    }
    let config = &mut facts.config;
    config.max_model_len = number(text, &["--max-model-len", "--max_model_len"]);
    config.gpu_memory_utilization = number(
        text,
        &["--gpu-memory-utilization", "--gpu_memory_utilization"],
    );
    config.tensor_parallel_size = number(text, &["--tensor-parallel-size", "-tp"]);
    config.pipeline_parallel_size = number(text, &["--pipeline-parallel-size", "-pp"]);
    config.max_num_seqs = number(text, &["--max-num-seqs"]);
    config.max_num_batched_tokens = number(text, &["--max-num-batched-tokens"]);
    config.cpu_offload_gb = number(text, &["--cpu-offload-gb"]);
    config.kv_cache_dtype = flag(text, "--kv-cache-dtype").map(str::to_string);
    if switch(text, "--enforce-eager") {
        config.enforce_eager = Some(true);
    }
}

fn sglang(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
    if let Some(model) = flag(text, "--model-path").or_else(|| flag(text, "--model")) {
        facts.model.name = Some(model.to_string());
    }
    let config = &mut facts.config;
    config.tensor_parallel_size = number(text, &["--tp-size", "--tp"]);
    config.mem_fraction_static = number(text, &["--mem-fraction-static"]);
    config.max_model_len = number(text, &["--context-length"]);
    config.max_num_batched_tokens = number(text, &["--chunked-prefill-size"]);
    config.max_num_seqs = number(text, &["--max-running-requests"]);
    if switch(text, "--disable-cuda-graph") {
        config.enforce_eager = Some(true);
    }
}

fn tgi(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Tgi, Certainty::Strong);
    if let Some(tag) = after(text, "text-generation-inference:") {
        let tag = tag.split_whitespace().next().unwrap_or("");
        if tag.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            facts.engine_version = Some(tag.to_string());
        }
    }
    if let Some(model) = flag(text, "--model-id") {
        facts.model.name = Some(model.to_string());
    }
    if let Some(quantize) = flag(text, "--quantize") {
        facts.model.quantization = Some(quantize.to_string());
    }
    let config = &mut facts.config;
    config.tensor_parallel_size = number(text, &["--num-shard"]);
    config.max_model_len = number(text, &["--max-total-tokens"]);
    config.max_num_batched_tokens = number(text, &["--max-batch-prefill-tokens"]);
}

fn llama(text: &str, facts: &mut LineFacts) {
    if !has(text, " -m ") && !has(text, "--model") && !has(text, "-hf ") {
        return;
    }
    facts.engine(EngineName::Llamacpp, Certainty::Strong);
    if let Some(model) = flag(text, "-m").or_else(|| flag(text, "--model")) {
        facts.model.name = Some(model.to_string());
    }
    let config = &mut facts.config;
    config.max_model_len = number(text, &["-c", "--ctx-size"]);
    config.batch_size = number(text, &["-b", "--batch-size"]);
    config.gpu_layers = flag(text, "-ngl")
        .or_else(|| flag(text, "--n-gpu-layers"))
        .or_else(|| flag(text, "--gpu-layers"))
        .map(str::to_string);
    config.kv_cache_dtype = flag(text, "--cache-type-k")
        .or_else(|| flag(text, "-ctk"))
        .map(str::to_string);
}

/// A checkpoint conversion script started from a shell: `python convert_hf_to_gguf.py …`
/// (llama.cpp `convert_hf_to_gguf.py`, mid-2024 on), `python examples/llama/convert_checkpoint.py
/// …` (TensorRT-LLM 0.8+ checkpoint conversion), `mlc_llm convert_weight` (MLC-LLM
/// `python/mlc_llm/cli/convert_weight.py`). The handler reads any `convert*.py` script (the
/// legacy `convert.py`, DeepSeek-V3's `inference/convert.py`, Megatron-LM's
/// `tools/checkpoint/convert.py`) on a line another marker brings. The script is a
/// word of the command whose file name starts with `convert` and ends in `.py`, run by a Python
/// launcher (`python`, `python3.10`, `py`, `torchrun`) earlier on the line; a script converting
/// a data set (`convert_dataset.py`) is no checkpoint conversion. The conversion runs until the
/// log shows another stage.
fn conversion_script(text: &str, facts: &mut LineFacts) {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|word| word.trim_matches(['"', '\'', '`']))
        .collect();
    let base = |word: &str| -> String {
        word.rsplit(['/', '\\'])
            .next()
            .unwrap_or(word)
            .to_ascii_lowercase()
    };
    // A notebook's `!python …` and a prompt glued to the command (`$python`) name it too.
    let launcher = |word: &str| {
        let name = base(word.trim_start_matches(['!', '$', '>']));
        let name = name.strip_suffix(".exe").unwrap_or(&name);
        name == "py"
            || name == "torchrun"
            || name
                .strip_prefix("python")
                .is_some_and(|version| version.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    };
    let script = |word: &str| {
        let name = base(word);
        name.strip_suffix(".py").is_some_and(|stem| {
            stem.starts_with("convert") && !stem.contains("data") && !stem.contains("image")
        })
    };
    let mlc = words
        .windows(2)
        .any(|pair| base(pair[0]).starts_with("mlc_llm") && pair[1] == "convert_weight");
    let at = words.iter().position(|word| script(word));
    let run = at.is_some_and(|at| words[..at].iter().any(|word| launcher(word)));
    // A converter to ggml's formats (`convert-pth-to-ggml.py`, `convert_hf_to_gguf.py`) is
    // llama.cpp's.
    let ggml = at.is_some_and(|at| {
        let name = base(words[at]);
        name.contains("ggml") || name.contains("gguf")
    });
    if run && ggml {
        facts.engine(EngineName::Llamacpp, Certainty::Weak);
    }
    if run || mlc {
        facts.event(
            EventKind::FormatConversion,
            Phase::FormatConversion,
            EventFigures::default(),
        );
    }
}

/// CTranslate2's converter run from a shell (`ct2-transformers-converter --model … --quantization
/// int8 --output_dir …`): a checkpoint converted by CTranslate2, with a flag after the command
/// (not its name in a sentence), session 48.
fn ctranslate2_converter(text: &str, facts: &mut LineFacts) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let run = words.windows(2).any(|pair| {
        let name = pair[0].rsplit(['/', '\\']).next().unwrap_or(pair[0]);
        let name = name.trim_start_matches(['!', '$', '`']);
        name.strip_prefix("ct2-")
            .and_then(|rest| rest.strip_suffix("-converter"))
            .is_some_and(|source| {
                !source.is_empty()
                    && source
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            })
            && pair[1].starts_with("--")
    });
    if run {
        facts.engine(EngineName::Ctranslate2, Certainty::Strong);
        facts.event(
            EventKind::FormatConversion,
            Phase::FormatConversion,
            EventFigures::default(),
        );
    }
}

/// An engine build started from a shell: TensorRT-LLM 0.8+ `trtllm-build --checkpoint_dir …`
/// (the console script `tensorrt_llm/commands/build.py` `main`), TensorRT's `trtexec --onnx=…`
/// (`samples/trtexec/trtexec.cpp`: a model given as ONNX is built into an engine; with
/// `--loadEngine` it only runs one). A build is none of the stages (the corpus labels build
/// failures `unknown`); the line ends a conversion run before it (`convert_checkpoint.py`, then
/// `trtllm-build`). The command needs a flag after it, not the name in a sentence.
fn engine_build(text: &str, facts: &mut LineFacts) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some(at) = words.iter().position(|word| {
        let name = word.rsplit('/').next().unwrap_or(word);
        name == "trtllm-build" || name == "trtexec"
    }) else {
        return;
    };
    let flags = &words[at + 1..];
    let trtexec = words[at].ends_with("trtexec");
    let build = if trtexec {
        flags.iter().any(|flag| flag.starts_with("--onnx="))
            && !flags.iter().any(|flag| flag.starts_with("--loadEngine"))
    } else {
        flags.iter().any(|flag| flag.starts_with("--"))
    };
    if build {
        facts.event(
            EventKind::EngineBuild,
            Phase::Unknown,
            EventFigures::default(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_line_scan;
    use super::*;

    #[test]
    fn vllm_command_line() {
        let facts = parse_line_scan("python3 -m vllm.entrypoints.openai.api_server --model /home/user/models/krypton3-4b/ --max-model-len 32768 --tensor-parallel-size 1 --gpu-memory-utilization 0.95 --dtype float16 --port 7001 --enforce-eager");
        assert_eq!(facts.engine, Some((EngineName::Vllm, Certainty::Strong)));
        assert_eq!(
            facts.model.name.as_deref(),
            Some("/home/user/models/krypton3-4b/")
        );
        assert_eq!(facts.config.max_model_len, Some(32768));
        assert_eq!(facts.config.gpu_memory_utilization, Some(0.95));
        assert_eq!(facts.config.enforce_eager, Some(true));
        let facts = parse_line_scan("vllm serve Qwen/Qwen2.5-7B --max-model-len=8192");
        assert_eq!(facts.model.name.as_deref(), Some("Qwen/Qwen2.5-7B"));
        assert_eq!(facts.config.max_model_len, Some(8192));
    }

    #[test]
    fn tgi_docker_tag() {
        let facts = parse_line_scan("docker run --gpus all ghcr.io/huggingface/text-generation-inference:3.2.1 --model-id /data/gemma-3-27b-it --num-shard 4 --max-total-tokens 32000 --max-batch-prefill-tokens 31000");
        assert_eq!(facts.engine_version.as_deref(), Some("3.2.1"));
        assert_eq!(facts.config.tensor_parallel_size, Some(4));
        assert_eq!(facts.config.max_num_batched_tokens, Some(31000));
    }

    #[test]
    fn conversion_scripts_run_from_a_shell() {
        use super::super::event_kinds as kinds;
        let conversion = vec![EventKind::FormatConversion];
        for line in [
            "python convert_hf_to_gguf.py ./models/my-7b --outfile my-7b-f16.gguf --outtype f16",
            "!python3.10 /content/llama.cpp/convert_hf_to_gguf.py models/7B/",
            "CUDA_VISIBLE_DEVICES=0 python examples/llama/convert_checkpoint.py --model_dir m",
            "C:\\venv\\Scripts\\python.exe convert_checkpoint.py --model_dir x",
            "mlc_llm convert_weight ./dist/models/m --quantization q4f16_1 -o ./dist/m",
            "python inference/convert.py --hf-ckpt-path /m/hf --save-path /m/demo --n-experts 8 \
             --model-parallel 2",
        ] {
            assert_eq!(kinds(line), conversion, "{line}");
        }
        for line in [
            "I tried to convert the model to GGUF with convert_hf_to_gguf.py",
            "python convert_checkpoint_dataset.py --input raw/ --output data/",
            "from convert_checkpoint import load_weights",
            "torchrun generate.py --ckpt-path /m/demo --config configs/config_671B.json",
            "the --hf-ckpt-path flag of convert.py takes the folder",
        ] {
            assert!(kinds(line).is_empty(), "{line}");
        }
    }

    #[test]
    fn engine_builds_run_from_a_shell() {
        use super::super::event_kinds as kinds;
        let build = vec![EventKind::EngineBuild];
        for line in [
            "trtllm-build --checkpoint_dir ./ckpt --output_dir ./engine --gemm_plugin float16",
            "root@host:/app# trtllm-build --checkpoint_dir /tmp/ckpt --max_batch_size 8",
            "/usr/src/tensorrt/bin/trtexec --onnx=model.onnx --saveEngine=model.plan --fp16",
        ] {
            assert_eq!(kinds(line), build, "{line}");
        }
        for line in [
            "I ran trtllm-build and it used all the memory",
            "trtexec --loadEngine=model.plan --onnx=model.onnx",
            "trtexec --help",
        ] {
            assert!(kinds(line).is_empty(), "{line}");
        }
    }
}
