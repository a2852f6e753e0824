//! Engines and applications shown only by their own vocabulary: a CLI name (`lmdeploy serve`,
//! `trtllm-build`, `mlc_llm serve`, `llamafactory-cli`, `axolotl.cli`), a log name (TurboMind's
//! `[TM][`, MLC-LLM's C++ frames `mlc::llm::serve::…`, ComfyUI's "got prompt"), a UI's feature or
//! flag (Forge's "Never OOM Integrated" and "GPU Weights", AUTOMATIC1111's `--medvram`), a
//! banner (KoboldCpp's "Welcome to KoboldCpp"), and the engine the reporter names in a sentence
//! ("I'm running vLLM 0.6.3", "用vllm部署"). The sources each text comes from are cited at its
//! handler and in docs/engines.md.

use super::super::common::has;
use super::super::{Certainty, LineFacts};
use crate::model::failure::EngineName;
use crate::model::{cards, Bytes};

/// Whether `name` stands at `at` in `text` as a word of its own: not inside an identifier, a
/// path, a URL or a model tag (`ollama/llama3`, `llama3-ollama`, `vllm-project/vllm`,
/// `vllm.entrypoints`), but allowed between CJK characters ("用vllm部署").
fn word_at(text: &str, at: usize, name: &str) -> bool {
    let before = text[..at].chars().next_back();
    let mut rest = text[at + name.len()..].chars();
    let after = rest.next();
    let joined = |c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '\\' | '_' | '-' | '@');
    // `vllm.` ends a sentence; `vllm.entrypoints` or `ollama.com` is a module or a host.
    let dotted = after == Some('.') && rest.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let after_colon = after == Some(':')
        && text[at + name.len() + 1..].starts_with(|c: char| c.is_ascii_alphanumeric());
    before.is_none_or(|c| !(joined(c) || c == '.' || c == ':'))
        && after.is_none_or(|c| !joined(c))
        && !dotted
        && !after_colon
}

fn word(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return text
            .match_indices(name)
            .any(|(at, _)| word_at(text, at, name));
    }
    // The occurrences `match_indices` gives (without overlaps), found without building a
    // searcher per call (`text::find_in_line`).
    let mut from = 0;
    while let Some(at) = (text.as_bytes().get(from..))
        .and_then(|rest| crate::parse::text::find_in_line(rest, name.as_bytes()))
    {
        let at = from + at;
        if word_at(text, at, name) {
            return true;
        }
        from = at + name.len();
    }
    false
}

/// The words after `marker` (the command's subcommand, a version).
fn next_word<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let at = text.find(marker)?;
    text[at + marker.len()..].split_whitespace().next()
}

/// Whether one of `names` stands in `text` as a token of its own: the character before it
/// passes `before` (or the line starts there) and the one after it passes `after` (or the line
/// ends there). For flags and program names on a command line.
fn token(
    text: &str,
    names: &[&str],
    before: impl Fn(char) -> bool,
    after: impl Fn(char) -> bool,
) -> bool {
    names.iter().any(|name| {
        text.match_indices(name).any(|(at, _)| {
            text[..at].chars().next_back().is_none_or(&before)
                && text[at + name.len()..].chars().next().is_none_or(&after)
        })
    })
}

/// The character after a name that ends it: not a letter, digit, `-` or `_`.
fn ends_a_name(c: char) -> bool {
    !(c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

// --- ComfyUI -------------------------------------------------------------------------------

/// ComfyUI's server when a workflow is queued (`server.py` `post_prompt`:
/// `logging.info("got prompt")`): the whole line, after a timestamp.
pub(super) fn comfyui_got_prompt(text: &str, facts: &mut LineFacts) {
    let line = text.trim_end();
    if line.ends_with("got prompt")
        && line[..line.len() - "got prompt".len()]
            .chars()
            .all(|c| !c.is_alphabetic() || c == 'T' || c == 'Z')
    {
        facts.engine(EngineName::Comfyui, Certainty::Strong);
    }
}

/// ComfyUI's executor after a workflow (`main.py` `prompt_worker`: `logging.info("Prompt
/// executed in {:.2f} seconds")`).
pub(super) fn comfyui_executed(text: &str, facts: &mut LineFacts) {
    let seconds = next_word(text, "Prompt executed in ")
        .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()));
    if seconds && has(text, " seconds") {
        facts.engine(EngineName::Comfyui, Certainty::Strong);
    }
}

/// ComfyUI's node class names (`nodes.py` `NODE_CLASS_MAPPINGS`; `comfy_extras/
/// nodes_custom_sampler.py` `SamplerCustomAdvanced`), named as words: a workflow's node.
pub(super) const COMFYUI_NODES: [&str; 8] = [
    "KSampler",
    "VAEDecode",
    "VAEEncode",
    "CheckpointLoaderSimple",
    "CLIPTextEncode",
    "UNETLoader",
    "SamplerCustomAdvanced",
    "EmptyLatentImage",
];

pub(super) fn comfyui_node_name(text: &str, facts: &mut LineFacts) {
    let named = COMFYUI_NODES.iter().any(|node| {
        text.match_indices(node).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + node.len()..].chars().next();
            // `KSamplerAdvanced`, `VAEDecodeTiled` are nodes too; `MyKSampler` is not.
            before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                && after.is_none_or(|c| c != '_' && c != '(' && c != '.')
        })
    });
    if named {
        facts.engine(EngineName::Comfyui, Certainty::Weak);
    }
}

// --- AUTOMATIC1111 and its Forge fork ------------------------------------------------------

/// `modules/launch_utils.py` `start()`: `print(f"Launching Web UI with arguments: {' '.join
/// (sys.argv[1:])}")` (AUTOMATIC1111 1.x and Forge).
pub(super) fn automatic1111_launch(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Automatic1111, Certainty::Strong);
}

/// AUTOMATIC1111's choice of cross-attention code at model load (`modules/sd_hijack.py`
/// `apply_optimizations`, 1.2+: `Applying attention optimization: Doggettx... done.`; earlier
/// releases and forks such as the DirectML one: `Applying optimization: InvokeAI... done.`). The
/// name after it is an attention implementation (`InvokeAI`, `sub-quadratic`, `xformers`), not
/// the app.
pub(super) fn automatic1111_optimization(text: &str, facts: &mut LineFacts) {
    let own = [
        "Applying attention optimization: ",
        "Applying cross attention optimization: ",
        "Applying optimization: ",
    ]
    .iter()
    .any(|words| {
        text.split_once(words).is_some_and(|(_, name)| {
            name.split_once("...")
                .is_some_and(|(name, _)| !name.is_empty() && !name.contains(' '))
        })
    });
    if own {
        facts.engine(EngineName::Automatic1111, Certainty::Strong);
    }
}

/// Forge (lllyasviel/stable-diffusion-webui-forge): `backend/memory_management.py` and
/// `modules_forge/main_entry.py` print "[GPU Setting] You will use …% GPU memory (… MB) to load
/// weights", "[Memory Management] Target: …", "[Unload] Trying to free …"; its UI's "GPU
/// Weights" slider and the built-in "Never OOM Integrated" extension
/// (`extensions-builtin/sd_forge_neveroom`).
pub(super) fn forge_own(text: &str, facts: &mut LineFacts) {
    let own = has(text, "[GPU Setting] You will use")
        || has(text, "[Memory Management] Target")
        || has(text, "[Unload] Trying to free");
    if own {
        facts.engine(EngineName::Automatic1111, Certainty::Strong);
    } else if has(text, "Never OOM") || has(text, "GPU Weights") {
        facts.engine(EngineName::Automatic1111, Certainty::Weak);
    }
}

/// AUTOMATIC1111's own flags (`modules/cmd_args.py`: `--medvram`, `--medvram-sdxl`) and the
/// variable its launchers read (`webui-user.bat` `set COMMANDLINE_ARGS=`). ComfyUI has
/// `--lowvram` but no `--medvram`.
pub(super) fn automatic1111_flags(text: &str, facts: &mut LineFacts) {
    let flag = token(
        text,
        &["--medvram"],
        |c| c.is_whitespace() || matches!(c, '"' | '\'' | '=' | '`' | ','),
        |_| true,
    );
    if flag || has(text, "COMMANDLINE_ARGS") {
        facts.engine(EngineName::Automatic1111, Certainty::Weak);
    }
}

/// ComfyUI's own memory flags (`comfy/cli_args.py`: `--reserve-vram` (2024 on),
/// `--disable-smart-memory`), as a launch command or a process's command line names them
/// (earlyoom's `cmdline "…/python3 main.py --listen 0.0.0.0 --reserve-vram=2"`). AUTOMATIC1111
/// has neither; Fooocus's copy of the argument parser runs ComfyUI's code (and outranks it).
pub(super) fn comfyui_flags(text: &str, facts: &mut LineFacts) {
    let flag = token(
        text,
        &["--reserve-vram", "--disable-smart-memory"],
        |c| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ','),
        ends_a_name,
    );
    if flag {
        facts.engine(EngineName::Comfyui, Certainty::Weak);
    }
}

/// AUTOMATIC1111's bug-report form (`.github/ISSUE_TEMPLATE/bug_report.yml`, 2022 on: "What
/// browsers do you use to access the UI ?", earlier "… access UI ?"), kept by its forks (Forge,
/// SD.Next), which the corpus names automatic1111.
pub(super) fn automatic1111_form(text: &str, facts: &mut LineFacts) {
    const QUESTION: &str = "What browsers do you use to access";
    let form = text.find(QUESTION).is_some_and(|at| {
        let rest = text[at + QUESTION.len()..].trim_start();
        let rest = rest.strip_prefix("the ").unwrap_or(rest);
        rest.starts_with("UI ?") || rest.starts_with("UI?")
    });
    if form {
        facts.engine(EngineName::Automatic1111, Certainty::Weak);
    }
}

// --- JAX and Lightning -------------------------------------------------------------------------

/// JAX's own environment variables for its GPU allocator (`XLA_PYTHON_CLIENT_PREALLOCATE`,
/// `XLA_PYTHON_CLIENT_MEM_FRACTION`, `XLA_PYTHON_CLIENT_ALLOCATOR`: the JAX documentation's "GPU
/// memory allocation" page; jaxlib's `xla_client` reads them): a JAX program's memory set-up.
pub(super) fn jax_allocator_env(text: &str, facts: &mut LineFacts) {
    if [
        "XLA_PYTHON_CLIENT_PREALLOCATE",
        "XLA_PYTHON_CLIENT_MEM_FRACTION",
        "XLA_PYTHON_CLIENT_ALLOCATOR",
    ]
    .iter()
    .any(|name| has(text, name))
    {
        facts.engine(EngineName::Jax, Certainty::Weak);
    }
}

/// Lightning's bug-report form (`.github/ISSUE_TEMPLATE/1_bug_report.yaml`: `#- PyTorch Lightning
/// Version (e.g., 1.5.0):`, `#- Lightning Component (e.g. Trainer, LightningModule, …)`): a
/// report filed against Lightning.
pub(super) fn lightning_form(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Lightning, Certainty::Weak);
}

// --- transformers ----------------------------------------------------------------------------

/// transformers' `TrainingArguments` fields as `HfArgumentParser` takes them on a command line
/// (`--per_device_train_batch_size 1`, `--per_device_eval_batch_size`; `training_args.py`),
/// which the library's example scripts (`run_clm.py`, `run_language_modeling.py`) and the
/// trainers built on its `Trainer` (TRL, LLaMA-Factory) read: a run of transformers' Trainer.
pub(super) fn transformers_training_flag(text: &str, facts: &mut LineFacts) {
    let flag = token(
        text,
        &[
            "--per_device_train_batch_size",
            "--per_device_eval_batch_size",
        ],
        |_| true,
        |c| c.is_whitespace() || c == '=',
    );
    if flag {
        facts.engine(EngineName::Transformers, Certainty::Weak);
    }
}

// --- llama.cpp and its apps ----------------------------------------------------------------

/// llama.cpp's loader and context lines (`src/llama.cpp` before b3800 `llm_load_print_meta:`,
/// `llama_new_context_with_model:`), and KoboldCpp's banner (`koboldcpp.py`:
/// `print("***\nWelcome to KoboldCpp - Version " + KcppVersion)`); KoboldCpp runs llama.cpp.
pub(super) fn llamacpp_own(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Llamacpp, Certainty::Strong);
}

/// ggml's CUDA buffer allocation (`ggml/src/ggml-cuda/ggml-cuda.cu`
/// `ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1234.00 MiB on device 0: cudaMalloc
/// failed: out of memory`): the library's line, which every program on ggml prints; llama.cpp
/// weakly (its own loader and context lines are strong), nothing when another program's logger
/// relays it (stable-diffusion.cpp's `[ERROR] ggml_extend.hpp:70 - …`).
pub(super) fn ggml_cuda_buffer(text: &str, facts: &mut LineFacts) {
    if !sdcpp_logged(text) {
        facts.engine(EngineName::Llamacpp, Certainty::Weak);
    }
}

/// llama.cpp's programs by their binaries' names (`tools/main` → `llama-cli`, `tools/server` →
/// `llama-server`, `llama-bench`, `llama-embedding`, `llama-perplexity`, since b3186, June
/// 2024), as a command or a path runs them (`./llama.cpp/llama-cli -hf …`, a backtrace's
/// `./build/bin/llama-server(+0x751b7b)`, `llama-server.exe`): not a longer name that holds one
/// (`llama-server-cuda`, a docker tag's `:server-cuda`).
pub(super) fn llamacpp_binary(text: &str, facts: &mut LineFacts) {
    const BINARIES: [&str; 5] = [
        "llama-cli",
        "llama-server",
        "llama-bench",
        "llama-embedding",
        "llama-perplexity",
    ];
    let named = token(
        text,
        &BINARIES,
        |c| c.is_whitespace() || matches!(c, '/' | '\\' | '`' | '$' | '"' | '\'' | '('),
        ends_a_name,
    );
    if named {
        facts.engine(EngineName::Llamacpp, Certainty::Weak);
    }
}

/// KoboldCpp named as a word (the app over llama.cpp, no engine of its own).
pub(super) fn koboldcpp_named(text: &str, facts: &mut LineFacts) {
    if word(text, "KoboldCpp") || word(text, "koboldcpp") || word(text, "KoboldCPP") {
        facts.engine(EngineName::Llamacpp, Certainty::Weak);
    }
}

// --- Ollama --------------------------------------------------------------------------------

/// Ollama's CLI (`cmd/cmd.go`: `ollama serve`, `ollama run <model>`, `ollama ps`) and its
/// settings (`envconfig/config.go`: `OLLAMA_NUM_PARALLEL`, `OLLAMA_FLASH_ATTENTION`,
/// `OLLAMA_HOST`, …), and its model option `num_gpu` (`api/types.go` `Runner.NumGPU`,
/// `json:"num_gpu"`, a Modelfile's `PARAMETER num_gpu`): llama.cpp names it `n_gpu_layers` /
/// `-ngl`, Ray and DeepSpeed `num_gpus`.
pub(super) fn ollama_cli(text: &str, facts: &mut LineFacts) {
    const COMMANDS: [&str; 6] = ["serve", "run", "ps", "pull", "create", "show"];
    let command = text.match_indices("ollama ").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let sub = text[at + "ollama ".len()..].split_whitespace().next();
        before.is_none_or(|c| c.is_whitespace() || matches!(c, '$' | '`' | '>' | '"' | '\''))
            && sub.is_some_and(|sub| COMMANDS.contains(&sub))
    });
    let setting = text
        .match_indices("OLLAMA_")
        .any(|(at, _)| text[at + "OLLAMA_".len()..].starts_with(|c: char| c.is_ascii_uppercase()))
        || ollama_num_gpu(text);
    if command {
        facts.engine(EngineName::Ollama, Certainty::Strong);
    } else if setting {
        facts.engine(EngineName::Ollama, Certainty::Weak);
    }
}

/// Ollama's `num_gpu` as Ollama's users write it: a request's JSON option (`"num_gpu": 20`), a
/// Modelfile's `PARAMETER num_gpu 20`, the REPL's `/set parameter num_gpu 20`, or the bare word
/// in prose ("fails when num_gpu > 1"). Not a script's own flag of that name: quoted or
/// dashed as an argument (TensorFlow's `flags.DEFINE_integer('num_gpu', …)`, `--num_gpu 2`)
/// or assigned (`num_gpu=2`).
fn ollama_num_gpu(text: &str) -> bool {
    const NAME: &str = "num_gpu";
    text.match_indices(NAME).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + NAME.len()..].trim_start();
        if before == Some('"') {
            return text[at + NAME.len()..].starts_with('"')
                && after[1..].trim_start().starts_with(':');
        }
        word_at(text, at, NAME)
            && !matches!(before, Some('\'' | '-'))
            && !after.starts_with(['=', '\''])
    })
}

// --- LMDeploy / TurboMind ------------------------------------------------------------------

/// TurboMind's C++ logger (`src/turbomind/utils/logger.h`: `[TM][INFO]`, `[TM][WARNING]`,
/// `[TM][ERROR]`) and LMDeploy's CLI (`lmdeploy/cli/`: `lmdeploy serve api_server`,
/// `lmdeploy chat`, `lmdeploy lite`, `lmdeploy convert`).
pub(super) fn lmdeploy_own(text: &str, facts: &mut LineFacts) {
    const COMMANDS: [&str; 5] = ["serve", "chat", "lite", "convert", "pipeline"];
    let cli = next_word(text, "lmdeploy ").is_some_and(|sub| COMMANDS.contains(&sub));
    let logger = ["DEBUG]", "INFO]", "WARNING]", "ERROR]", "FATAL]"]
        .iter()
        .any(|level| {
            text.match_indices("[TM][")
                .any(|(at, _)| text[at + 5..].starts_with(level))
        });
    if logger || cli {
        facts.engine(EngineName::Lmdeploy, Certainty::Strong);
    } else if word(text, "turbomind") || word(text, "TurboMind") || word(text, "LMDeploy") {
        facts.engine(EngineName::Lmdeploy, Certainty::Weak);
    }
}

// --- TensorRT-LLM --------------------------------------------------------------------------

/// TensorRT-LLM's console scripts (`setup.py` `entry_points`: `trtllm-build`, `trtllm-serve`,
/// `trtllm-bench`, `trtllm-llmapi-launch`, `trtllm-eval`) and the Python logger's prefix
/// (`tensorrt_llm/logger.py`: `[TRT-LLM] [E]`).
pub(super) fn tensorrt_llm_own(text: &str, facts: &mut LineFacts) {
    let script = text.match_indices("trtllm-").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            && text[at + "trtllm-".len()..].starts_with(|c: char| c.is_ascii_lowercase())
    });
    if script || has(text, "[TRT-LLM]") {
        facts.engine(EngineName::TensorrtLlm, Certainty::Strong);
    }
}

// --- MLC-LLM -------------------------------------------------------------------------------

/// MLC-LLM's C++ engine in a TVM backtrace (`cpp/serve/threaded_engine.cc`:
/// `mlc::llm::serve::ThreadedEngineImpl::RunBackgroundLoop()`) and its CLI (`python/mlc_llm/
/// __main__.py`: `mlc_llm serve|chat|compile|convert_weight|gen_config|package|bench`); before
/// the 2024 rename, its C++ chat binary (`cpp/cli_main.cc`, built as `mlc_chat_cli`) and its
/// Python package (`python/mlc_chat/`: `python -m mlc_chat`, `from mlc_chat import
/// ChatModule`).
pub(super) fn mlc_llm_own(text: &str, facts: &mut LineFacts) {
    let old_name = text.match_indices("mlc_chat").any(|(at, _)| {
        let rest = &text[at + "mlc_chat".len()..];
        let own = rest.starts_with("_cli")
            || rest.starts_with(" import")
            || rest.starts_with(".chat_module")
            || rest.starts_with(".interface");
        (word_start(text, at) && own) || text[..at].ends_with("-m ")
    });
    if old_name {
        facts.engine(EngineName::MlcLlm, Certainty::Strong);
        return;
    }
    const COMMANDS: [&str; 8] = [
        "serve",
        "chat",
        "compile",
        "convert_weight",
        "gen_config",
        "package",
        "bench",
        "calibrate",
    ];
    let cli = next_word(text, "mlc_llm ").is_some_and(|sub| COMMANDS.contains(&sub));
    if has(text, "mlc::llm::") || cli {
        facts.engine(EngineName::MlcLlm, Certainty::Strong);
    }
}

// --- Fine-tuning wrappers over transformers -----------------------------------------------

/// LLaMA-Factory (`src/llamafactory/cli.py`: the `llamafactory-cli train|chat|export|webui`
/// console script; its loggers `llamafactory.hparams.parser`, `llamafactory.train.…`; once
/// `llmtuner`), Axolotl (`python -m axolotl.cli.train`, 0.8+ `axolotl train|preprocess`; the
/// `axolotl.` loggers), ms-swift (`swift/cli/main.py`: `swift sft|pt|rlhf|infer|export|deploy`)
/// and Unsloth (`unsloth/__init__.py`: "🦥 Unsloth: Will patch your computer …"): all drive the
/// transformers `Trainer`, so transformers names the run (no engine name of their own).
pub(super) fn trainer_cli(text: &str, facts: &mut LineFacts) {
    const SWIFT: [&str; 7] = [
        "sft",
        "pt",
        "rlhf",
        "infer",
        "export",
        "deploy",
        "merge-lora",
    ];
    const AXOLOTL: [&str; 6] = [
        "train",
        "preprocess",
        "inference",
        "merge-lora",
        "fetch",
        "evaluate",
    ];
    let strong = has(text, "llamafactory-cli")
        || has(text, "axolotl.cli")
        || text
            .match_indices("llamafactory.")
            .any(|(at, _)| word_start(text, at))
        || text.match_indices("axolotl.").any(|(at, _)| {
            word_start(text, at)
                && text[at + "axolotl.".len()..].starts_with(|c: char| c.is_ascii_lowercase())
        })
        || cli_word(text, "axolotl ", &AXOLOTL)
        || cli_word(text, "swift ", &SWIFT)
        || has(text, "Unsloth: ");
    if strong {
        facts.engine(EngineName::Transformers, Certainty::Strong);
        return;
    }
    // A conda env or a checkout named after the trainer (`envs/axolotl/lib/…`,
    // `/LLaMA-Factory/`), a config key only that trainer has (LLaMA-Factory's
    // `finetuning_type: lora`, `src/llamafactory/hparams/finetuning_args.py`; Axolotl's
    // `sample_packing`, `lora_target_linear`, `src/axolotl/utils/schemas/config.py`), or the
    // trainer named in a sentence.
    let named = [
        "/envs/axolotl/",
        "/envs/llamafactory/",
        "/envs/llama_factory/",
        "LLaMA-Factory",
        "finetuning_type",
        "sample_packing",
        "lora_target_linear",
    ]
    .iter()
    .any(|needle| has(text, needle))
        || [
            "LlamaFactory",
            "llamafactory",
            "Axolotl",
            "axolotl",
            "Unsloth",
            "unsloth",
        ]
        .iter()
        .any(|name| word(text, name));
    if named {
        facts.engine(EngineName::Transformers, Certainty::Weak);
    }
}

fn word_start(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '/' || c == '-'))
}

/// `<program> <subcommand>` as a command (after a prompt, a quote, or the line's start).
fn cli_word(text: &str, program: &str, commands: &[&str]) -> bool {
    text.match_indices(program).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let sub = text[at + program.len()..].split_whitespace().next();
        before.is_none_or(|c| c.is_whitespace() || matches!(c, '$' | '`' | '>' | '"' | '\''))
            && sub.is_some_and(|sub| commands.contains(&sub))
    })
}

// --- The engine named in the reporter's sentence ------------------------------------------

/// Serving engines a reporter names in prose, with the spellings used in issue threads.
pub(super) const PROSE: &[(&[&str], EngineName)] = &[
    (&["vLLM", "vllm", "VLLM"], EngineName::Vllm),
    (&["SGLang", "sglang", "Sglang"], EngineName::Sglang),
    (&["Ollama", "ollama"], EngineName::Ollama),
    (
        &["llama.cpp", "llama-cpp-python", "llama_cpp_python"],
        EngineName::Llamacpp,
    ),
    (
        &[
            "TensorRT-LLM",
            "TRT-LLM",
            "TensorRT LLM",
            "tensorrt-llm",
            "trt-llm",
        ],
        EngineName::TensorrtLlm,
    ),
    (&["LMDeploy", "lmdeploy"], EngineName::Lmdeploy),
    (&["MLC-LLM", "MLC LLM", "mlc-llm"], EngineName::MlcLlm),
    (&["TGI", "text-generation-inference"], EngineName::Tgi),
    (&["TabbyAPI", "tabbyAPI", "ExLlama"], EngineName::Exllamav2),
    (
        &[
            "A1111",
            "Automatic1111",
            "automatic1111",
            "SD Forge",
            "WebUI Forge",
            "Forge UI",
        ],
        EngineName::Automatic1111,
    ),
    (&["diffusers", "Diffusers"], EngineName::Diffusers),
    (
        &["PyTorch Lightning", "pytorch-lightning"],
        EngineName::Lightning,
    ),
    // "only 3 nodes in comfy": the reporter's short name for ComfyUI.
    (
        &["comfy", "Comfy", "comfyUI", "comfyui", "Comfyui"],
        EngineName::Comfyui,
    ),
    // OpenMMLab's toolboxes as their issue forms and users name them ("main branch
    // (mmpretrain version)", "I train Mask R-CNN with mmdetection 3.x").
    (OPENMMLAB_NAMES, EngineName::Openmmlab),
    // Ultralytics' YOLO (the `ultralytics` package and its YOLOv5 repository; YOLOv7 and YOLOX
    // are other projects' and not named here). The models its package trains (`YOLOv8`,
    // `YOLO11`) are run by other programs too (DeepStream, TensorRT, OpenCV): their names name
    // the model, not the program.
    (
        &["ultralytics", "Ultralytics", "YOLOv5"],
        EngineName::Ultralytics,
    ),
    (&["detectron2", "Detectron2"], EngineName::Detectron2),
    // The training libraries by their own names ("using DeepSpeed ZeRO-3 on 8 GPUs"); 🤗
    // Accelerate only where the word is the library, not the verb ("using accelerate FSDP"; its
    // launcher named in a sentence runs another program, which the text names if anything).
    (
        &["DeepSpeed", "deepspeed", "Deepspeed"],
        EngineName::Deepspeed,
    ),
    (
        &[
            "using accelerate",
            "with accelerate",
            "use accelerate",
            "via accelerate",
            "HF accelerate",
            "huggingface accelerate",
            "Accelerate FSDP",
            "accelerate FSDP",
            "Accelerate library",
            "accelerate library",
        ],
        EngineName::Accelerate,
    ),
    (&["PEFT"], EngineName::Peft),
    // Hugging Face's TRL ("the GRPO trainer from the TRL library"): its trainers subclass the
    // transformers `Trainer`, as its path `/trl/` is transformers'.
    (&["TRL"], EngineName::Transformers),
    // The frameworks by the names their users write ("while training with Tensorflow GPU",
    // "[Flax] Add Textual Inversion"), capitalised: the lower-case names are the packages' paths
    // and imports, which the frames and paths read.
    (&["TensorFlow", "Tensorflow"], EngineName::Tensorflow),
    (&["JAX", "Flax"], EngineName::Jax),
    // The other programs on ggml by their names ("I tried to transcribe with whisper.cpp on
    // Windows 10 … it failed with error that it's out of memory"): none of the named engines,
    // and the ggml lines they print are their library's, not llama.cpp's (session 48).
    (
        &["whisper.cpp", "stable-diffusion.cpp", "whisper-rs"],
        EngineName::Other,
    ),
];

/// OpenMMLab's toolboxes by the names their users write (each also a `name(…)` marker).
pub(super) const OPENMMLAB_NAMES: &[&str] = &[
    "OpenMMLab",
    "mmdetection",
    "MMDetection",
    "mmsegmentation",
    "MMSegmentation",
    "mmpretrain",
    "MMPretrain",
    "mmpose",
    "MMPose",
    "mmocr",
    "MMOCR",
    "mmrotate",
    "MMRotate",
    "mmaction2",
    "MMAction2",
    "mmdet3d",
    "mmyolo",
    "MMYOLO",
    "mmengine",
    "MMEngine",
    "mmcv",
    "MMCV",
];

/// The engine a reporter's sentence names ("I'm running vLLM 0.6.3", "with Ollama on a 3090",
/// "用vllm部署qwen"): the weakest claim ([`Certainty::Prose`]), taken only when nothing else
/// shows the engine. Not from code or log lines (a traceback frame, an import, a `key=value`
/// setting, a URL or path), and nothing from a line naming two engines ("works in vLLM, fails in
/// SGLang").
pub(super) fn engine_in_prose(text: &str, facts: &mut LineFacts) {
    let line = text.trim();
    // A program's log line (a timestamp, bracketed or not, or a level first) is not a
    // sentence; checked first, as most lines of a long log holding an engine's name are these.
    // (A date or a time: digits and their separators only, not a title's numbered name
    // `04-GLM-4-9B-Chat vLLM 部署调用显存溢出问题`.)
    let stamp = |rest: &str| {
        rest.starts_with(|c: char| c.is_ascii_digit())
            && rest.split([' ', ']', ',']).next().is_some_and(|first| {
                first.contains([':', '-', '/'])
                    && first
                        .chars()
                        .all(|c| c.is_ascii_digit() || ":-/.TZ+".contains(c))
            })
    };
    let logged = stamp(line)
        || line.strip_prefix('[').is_some_and(stamp)
        || [
            "INFO ", "DEBUG ", "WARNING ", "ERROR ", "INFO:", "DEBUG:", "WARNING:",
        ]
        .iter()
        .any(|level| line.starts_with(level));
    // TensorFlow's C++ log lines (`I tensorflow/core/platform/cpu_feature_guard.cc:193] This
    // TensorFlow binary is optimized …`), which `tensorflow_cpp_location` reads.
    let cpp_logged = crate::parse::text::is_tensorflow_log_line(line);
    if logged || cpp_logged {
        return;
    }
    // A shell variable set (`ENGINE_DIR="." # the engine folders from TensorRT-LLM`): a set-up's
    // contents, not the program that ran (session 45).
    if shell_assignment(line) {
        return;
    }
    // An issue form's optional field (TensorRT's `**Tensorflow Version (if applicable)**:`):
    // the form names the framework, not the reporter (session 48).
    if has(line, "(if applicable)") {
        return;
    }
    let code = line.starts_with("File \"")
        || line.starts_with(">>>")
        || line.starts_with('#')
        || has(line, "import ")
        || has(line, "://")
        || has(line, "site-packages")
        || has(line, " = ")
        || has(line, "==")
        || (has(line, "(") && has(line, ")") && !has(line, " "));
    if code {
        return;
    }
    // A generation prompt given on a command line or in a request (`--prompt "Two cats in comfy
    // boxing gear"`, `prompt="…"`, `"prompt": "…"`) is the model's input, not the reporter's
    // words: names are read before it only.
    let line = [
        "--prompt",
        "--negative_prompt",
        "--negative-prompt",
        "prompt=",
        "\"prompt\":",
    ]
    .iter()
    .filter_map(|flag| line.find(flag))
    .min()
    .map_or(line, |cut| &line[..cut]);
    let mut named: Option<EngineName> = None;
    // A framework named beside PyTorch is one of two ("I would need to compile PyTorch and
    // TensorFlow for this architecture", "works in PyTorch, not in JAX"): neither ran for sure.
    let beside_pytorch = ["PyTorch", "Pytorch", "pytorch"]
        .iter()
        .any(|name| word(line, name));
    for (spellings, engine) in PROSE {
        // A framework named in a question is one the reporter considers ("if we reproduce this
        // in TensorFlow will it be faster?"), not the one that ran.
        let framework = matches!(engine, EngineName::Tensorflow | EngineName::Jax);
        if framework && beside_pytorch {
            continue;
        }
        let asked = |name: &&str| {
            line.find(*name).is_some_and(|at| {
                line[at..]
                    .find(['.', '!', '?'])
                    .is_some_and(|end| line[at + end..].starts_with('?'))
            })
        };
        // candle-vllm (EricLBuehler/candle-vllm), a Rust engine on candle, written "candle vllm"
        // in a sentence, is not vLLM (as vllm.rs is not: `engine_of_stream`).
        let other_engine = |name: &&str| {
            *engine == EngineName::Vllm
                && line.match_indices(*name).all(|(at, _)| {
                    !word_at(line, at, name) || line[..at].to_ascii_lowercase().ends_with("candle ")
                })
        };
        // A program the reporter used before (`之前用ollama从没遇到…`, previously with ollama it
        // never happened; `I previously used ollama`): the one compared with, not the one
        // that failed.
        let used_before = |name: &&str| {
            line.match_indices(*name).any(|(at, _)| {
                let before = line[..at].trim_end().to_lowercase();
                [
                    "之前用",
                    "以前用",
                    "之前使用",
                    "以前使用",
                    "previously used",
                    "used to use",
                ]
                .iter()
                .any(|words| before.ends_with(words))
            })
        };
        // A file format named after the program (`from the original YOLOv5 format to COCO
        // format`, `a checkpoint in diffusers format`): the data's layout, not the program
        // that ran (session 52).
        let a_format = |name: &&str| {
            line.match_indices(*name).all(|(at, _)| {
                let rest = line[at + name.len()..].trim_start();
                rest.get(..6)
                    .is_some_and(|word| word.eq_ignore_ascii_case("format"))
            })
        };
        let compared = |name: &&str| other_engine(name) || used_before(name) || a_format(name);
        if spellings
            .iter()
            .any(|name| word(line, name) && !(framework && asked(name)) && !compared(name))
        {
            if named.is_some_and(|other| other != *engine) {
                return;
            }
            named = Some(*engine);
        }
    }
    // ComfyUI set against a web UI on the same line ("在comfyui上…可以选择fp16模式，在webui上没有
    // 地方做此修改": in ComfyUI one can choose fp16, in the web UI there is nowhere to): two
    // programs compared, as two engines named are. Not ComfyUI's own web UI ("ComfyUI web UI"),
    // nor Open WebUI (a chat front end).
    if named == Some(EngineName::Comfyui) && other_web_ui(line) {
        return;
    }
    // A row of `pip list` naming a library other packages install with them
    // (`pytorch-lightning             1.7.7` in an environment's listing): installed, not seen
    // running. An application's own row (`ultralytics        8.3.173`) still names it.
    let library = matches!(
        named,
        Some(
            EngineName::Lightning
                | EngineName::Deepspeed
                | EngineName::Accelerate
                | EngineName::Peft
                | EngineName::Transformers
                | EngineName::Diffusers
        )
    );
    if library && pip_list_row(line) {
        return;
    }
    if let Some(engine) = named {
        facts.engine(engine, Certainty::Prose);
    }
}

/// Whether the line names a web UI ("webui", "WebUI", "web UI") that is not the one of the
/// ComfyUI named before it (`ComfyUI web UI`, `ComfyUI's webui`) nor Open WebUI.
pub(super) fn other_web_ui(line: &str) -> bool {
    let lower = line.to_lowercase();
    ["webui", "web ui"].iter().any(|name| {
        lower.match_indices(name).any(|(at, _)| {
            let before = lower[..at].trim_end();
            let before = before.strip_suffix("'s").unwrap_or(before).trim_end();
            word_at(&lower, at, name)
                && !before.ends_with("comfy")
                && !before.ends_with("comfyui")
                && !before.ends_with("open")
        })
    })
}

/// OpenMMLab's toolboxes shown by their own issue form and config words, not by name: the
/// error-report template's questions (`.github/ISSUE_TEMPLATE/error-report.md` of
/// open-mmlab/mmdetection, copied by its sibling toolboxes: "1. What command or script did you
/// run?", "2. Did you make any modifications on the code or config? Did you understand what you
/// have modified?") and mmcv 1.x's data config key `samples_per_gpu` (`data = dict(
/// samples_per_gpu=2, workers_per_gpu=2, …)` of mmdetection 2.x configs). Other projects copy
/// the form, so it is the weakest claim ([`Certainty::Prose`]), as a name in a sentence.
pub(super) fn openmmlab_form(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Openmmlab, Certainty::Prose);
}

// --- TensorFlow's device at start ----------------------------------------------------------

/// "Created device /job:localhost/replica:0/task:0/device:GPU:0 with 448 MB memory:  -> device:
/// 0, name: NVIDIA GeForce RTX 3090, pci bus id: …" (`gpu_device.cc`; TF's MB are MiB, `bytes >>
/// 20`): what was free when TF started (less its small reserve) and the card's total from its
/// name (`model::cards`). A round figure (a multiple of 256 MiB) is a limit the user set
/// (`memory_limit=4096` of a logical device), not what was free: the start figure is left out.
pub(super) fn tensorflow_device_created(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Tensorflow, Certainty::Strong);
    let Some(mib) = next_word(text, " with ")
        .filter(|_| has(text, " MB memory"))
        .and_then(|word| word.parse::<u64>().ok())
    else {
        return;
    };
    let card = text
        .split("name: ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|name| cards::find(name.trim()));
    if let Some(card) = card {
        if mib % 256 != 0 {
            facts.memory.free_at_start = Some(Bytes(mib << 20));
            facts.memory.total_gpu = Some(card.total_bytes);
        }
    }
}

// --- A link to the engine's own repository --------------------------------------------------

/// Repositories of engines and apps, by their GitHub name (lower case).
const REPOSITORIES: &[(&str, EngineName)] = &[
    ("vllm", EngineName::Vllm),
    ("sglang", EngineName::Sglang),
    ("ollama", EngineName::Ollama),
    ("llama.cpp", EngineName::Llamacpp),
    ("llama-cpp-python", EngineName::Llamacpp),
    ("koboldcpp", EngineName::Llamacpp),
    ("tensorrt-llm", EngineName::TensorrtLlm),
    ("lmdeploy", EngineName::Lmdeploy),
    ("mlc-llm", EngineName::MlcLlm),
    ("text-generation-inference", EngineName::Tgi),
    ("aphrodite-engine", EngineName::Aphrodite),
    ("exllamav2", EngineName::Exllamav2),
    ("tabbyapi", EngineName::Exllamav2),
    ("comfyui", EngineName::Comfyui),
    ("stable-diffusion-webui", EngineName::Automatic1111),
    ("stable-diffusion-webui-forge", EngineName::Automatic1111),
    ("invokeai", EngineName::Invokeai),
    ("fooocus", EngineName::Fooocus),
    ("llama-factory", EngineName::Transformers),
    ("llamafactory", EngineName::Transformers),
    ("axolotl", EngineName::Transformers),
    ("unsloth", EngineName::Transformers),
    ("ms-swift", EngineName::Transformers),
    // OpenMMLab's toolboxes (github.com/open-mmlab/<repo>), Ultralytics' and Detectron2's.
    ("mmcv", EngineName::Openmmlab),
    ("mmengine", EngineName::Openmmlab),
    ("mmdetection", EngineName::Openmmlab),
    ("mmdetection3d", EngineName::Openmmlab),
    ("mmsegmentation", EngineName::Openmmlab),
    ("mmpose", EngineName::Openmmlab),
    ("mmpretrain", EngineName::Openmmlab),
    ("mmclassification", EngineName::Openmmlab),
    ("mmocr", EngineName::Openmmlab),
    ("mmrotate", EngineName::Openmmlab),
    ("mmaction2", EngineName::Openmmlab),
    ("mmyolo", EngineName::Openmmlab),
    ("mmagic", EngineName::Openmmlab),
    ("mmediting", EngineName::Openmmlab),
    ("mmtracking", EngineName::Openmmlab),
    ("ultralytics", EngineName::Ultralytics),
    ("yolov5", EngineName::Ultralytics),
    ("detectron2", EngineName::Detectron2),
];

/// A link to an engine's repository (`https://github.com/NVIDIA/TensorRT-LLM/issues/1156`, "same
/// issue as …", a source line `github.com/vllm-project/vllm/blob/…`): the repository, not the
/// words of the path (`sgl-project/sglang/…/vllm_utils.py` is SGLang's). As weak as the
/// reporter's sentence; links to two engines' repositories on one line name none.
pub(super) fn engine_repository(text: &str, facts: &mut LineFacts) {
    let mut named: Option<EngineName> = None;
    for (at, _) in text.match_indices("github.com/") {
        let mut parts = text[at + "github.com/".len()..].split('/');
        let (Some(_owner), Some(repo)) = (parts.next(), parts.next()) else {
            continue;
        };
        let repo: String = repo
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect::<String>()
            .trim_end_matches(".git")
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let Some((_, engine)) = REPOSITORIES.iter().find(|(name, _)| *name == repo) else {
            continue;
        };
        if named.is_some_and(|other| other != *engine) {
            return;
        }
        named = Some(*engine);
    }
    if let Some(engine) = named {
        facts.engine(engine, Certainty::Prose);
    }
}

// --- TGI, InvokeAI and Ollama by their own words ---------------------------------------------

/// TGI's launcher errors (`launcher/src/main.rs` `enum LauncherError`, printed by `main` as
/// `Error: ShardCannotStart`): `ShardCannotStart`, `ShardFailed`, `WebserverCannotStart`.
/// A program's own exception of the same name (`raise ShardFailed(…) from e`, `class
/// ShardFailed(Exception)`, `ShardFailed: shard 3`) is Python, not TGI's Rust launcher.
pub(super) fn tgi_launcher_error(text: &str, facts: &mut LineFacts) {
    let python = has(text, "raise ")
        || has(text, "class ")
        || ["ShardCannotStart", "ShardFailed", "WebserverCannotStart"]
            .iter()
            .any(|name| has(text, &format!("{name}(")) || has(text, &format!("{name}: ")));
    if python {
        return;
    }
    let error = ["ShardCannotStart", "ShardFailed", "WebserverCannotStart"]
        .iter()
        .any(|name| word(text, name));
    if error {
        facts.engine(EngineName::Tgi, Certainty::Strong);
    }
}

/// InvokeAI's launchers: 2.x `scripts/invoke.py` (`python scripts\invoke.py --web`), 3.x+ the
/// `invokeai-web` console script (`pyproject.toml` `[project.scripts]`).
pub(super) fn invokeai_launcher(text: &str, facts: &mut LineFacts) {
    let launcher = has(text, "scripts/invoke.py")
        || has(text, "scripts\\invoke.py")
        || text
            .match_indices("invokeai-web")
            .any(|(at, _)| word_start(text, at));
    if launcher {
        facts.engine(EngineName::Invokeai, Certainty::Strong);
    }
}

/// Ollama's name for the llama.cpp server it starts (`llm/server.go`: "waiting for llama runner
/// to start responding", "llama runner started in 3.01 seconds", "llama runner process has
/// terminated: …").
pub(super) fn ollama_runner(text: &str, facts: &mut LineFacts) {
    if word(text, "llama runner") {
        facts.engine(EngineName::Ollama, Certainty::Strong);
    }
}

// --- vLLM by its container image and its own flags ------------------------------------------

/// A container image whose repository is named `vllm` (`rocm/vllm:latest`, AMD's ROCm build;
/// `nvcr.io/nvidia/vllm:25.09-py3`; a user's build `voipmonitor/vllm:<tag>` in an issue's
/// "Image:" line), as `vllm/vllm-openai:<tag>` already is: the image runs vLLM. Not vllm.rs's
/// images (`vllm-rs:latest`: another engine), nor a path (`/opt/vllm/…`) or a Python location
/// (`vllm/engine.py:123`).
pub(super) fn vllm_named_image(text: &str, facts: &mut LineFacts) {
    let image = text.match_indices("/vllm:").any(|(at, _)| {
        let owner = text[..at]
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')))
            .next()
            .unwrap_or("");
        let tag = &text[at + "/vllm:".len()..];
        !owner.is_empty()
            && !owner.starts_with('/')
            && tag.starts_with(|c: char| c.is_ascii_alphanumeric())
    });
    if image {
        facts.engine(EngineName::Vllm, Certainty::Weak);
    }
}

/// vLLM's own engine flags (`vllm/engine/arg_utils.py` `EngineArgs.add_cli_args`:
/// `--gpu-memory-utilization`, 0.8+ `--speculative-config`), as a launch command or a
/// report's "Key flags:" line names them. Aphrodite, a vLLM fork, keeps them (and outranks
/// vLLM); SGLang's budget is `--mem-fraction-static`, TensorRT-LLM's
/// `--kv_cache_free_gpu_memory_fraction`, vllm.rs's `--kv-fraction`.
pub(super) fn vllm_flags(text: &str, facts: &mut LineFacts) {
    let flag = token(
        text,
        &["--gpu-memory-utilization", "--speculative-config"],
        |c| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '('),
        |c| c.is_whitespace() || matches!(c, '=' | '"' | '\'' | '`' | ',' | ')'),
    );
    if flag {
        facts.engine(EngineName::Vllm, Certainty::Weak);
    }
}

// --- stable-diffusion.cpp ------------------------------------------------------------------

/// Whether the line carries stable-diffusion.cpp's logger location (`src/util.cpp`
/// `log_printf`: `"%s:%-4d - "` with the source file's base name, after the CLI's level tag
/// `[%-5s] `): `[INFO ] stable-diffusion.cpp:4512 - sampling completed, taking 131.77s`,
/// `[DEBUG] ggml_extend.hpp:2061 - vae compute buffer size: 14978.25 MB(VRAM)`. Its own two
/// sources name it (`stable-diffusion.cpp`, and `ggml_extend.hpp`, whose
/// `ggml_log_callback_default` relays ggml's own lines through that logger).
pub(super) fn sdcpp_logged(text: &str) -> bool {
    ["stable-diffusion.cpp:", "ggml_extend.hpp:"]
        .iter()
        .any(|file| {
            text.match_indices(file).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let rest = &text[at + file.len()..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                before.is_none_or(|c| c.is_whitespace() || c == ']')
                    && digits > 0
                    && rest[digits..].trim_start_matches(' ').starts_with("- ")
            })
        })
}

/// stable-diffusion.cpp (leejet/stable-diffusion.cpp), an image generator on ggml: its own
/// logger's lines ([`sdcpp_logged`]) name the program, which is none of the named engines
/// (`other`); the ggml lines it prints are its library's, not llama.cpp's.
pub(super) fn sdcpp_logger(text: &str, facts: &mut LineFacts) {
    if sdcpp_logged(text) {
        facts.engine(EngineName::Other, Certainty::Strong);
    }
}

/// whisper.cpp (ggml-org/whisper.cpp), speech recognition on ggml, by the prefixes of its own
/// functions' log lines (`src/whisper.cpp`: `whisper_init_from_file_with_params_no_state:
/// loading model from '…'`, `whisper_model_load: n_vocab = 51865`, `whisper_backend_init_gpu:
/// using CUDA backend`, `whisper_init_state: kv self size`): the program is none of the named
/// engines (`other`), and the ggml lines it prints (`ggml_cuda_init: found 1 CUDA devices`) are
/// its library's, not llama.cpp's. Python wrappers (pywhispercpp) print the same lines, and
/// the Rust binding whisper-rs logs them through its tracing module (`DEBUG
/// whisper_rs::whisper_sys_tracing: …: ggml_gallocr_reserve_n: …`, session 48).
pub(super) fn whisper_cpp_line(text: &str, facts: &mut LineFacts) {
    let own = [
        "whisper_init_",
        "whisper_model_load:",
        "whisper_backend_init",
        "whisper_full_",
        "whisper_rs::",
    ];
    if own.iter().any(|prefix| {
        text.match_indices(prefix).any(|(at, _)| {
            text[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
        })
    }) {
        facts.engine(EngineName::Other, Certainty::Strong);
    }
}

/// A program that builds ggml as a git submodule (`same ggml submodule pin e20c3a14`): the
/// projects on ggml do (leejet/stable-diffusion.cpp's `.gitmodules` names `ggml`), while
/// llama.cpp and whisper.cpp carry ggml in their own tree (`ggml/` since 2024): the program is
/// another one on ggml (`other`), and the ggml lines it prints are its library's.
pub(super) fn ggml_as_submodule(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Other, Certainty::Strong);
}

// --- MLC-LLM's Python modules ---------------------------------------------------------------

/// MLC-LLM's Python package by a module of it (`python -m mlc_llm.serve.server`, "when running
/// mlc_llm.serve.server", "using mlc_llm.gradio"; `python/mlc_llm/serve/server/__main__.py`):
/// run with `-m`, it is the program; named otherwise, the report is about it (weakly).
pub(super) fn mlc_llm_module(text: &str, facts: &mut LineFacts) {
    const PACKAGE: &str = "mlc_llm.";
    let modules: Vec<usize> = text
        .match_indices(PACKAGE)
        .map(|(at, _)| at)
        .filter(|&at| {
            word_start(text, at)
                && !text[..at].ends_with('.')
                && text[at + PACKAGE.len()..].starts_with(|c: char| c.is_ascii_lowercase())
        })
        .collect();
    if modules.is_empty() {
        return;
    }
    let run = modules
        .iter()
        .any(|&at| text[..at].trim_end_matches(' ').ends_with(" -m"));
    let certainty = if run {
        Certainty::Strong
    } else {
        Certainty::Weak
    };
    facts.engine(EngineName::MlcLlm, certainty);
}

// --- InvokeAI's config file and its bug-report form -----------------------------------------

/// InvokeAI's config file (`invokeai/app/services/config/config_default.py`: `INIT_FILE =
/// Path("invokeai.yaml")`, 4.x on; "My current `invokeai.yaml` is:"): the app whose settings
/// the report shows.
pub(super) fn invokeai_config(text: &str, facts: &mut LineFacts) {
    let named = text
        .match_indices("invokeai.yaml")
        .any(|(at, _)| word_start(text, at) || text[..at].ends_with('/'));
    if named {
        facts.engine(EngineName::Invokeai, Certainty::Weak);
    }
}

/// InvokeAI's bug-report form (`.github/ISSUE_TEMPLATE/BUG_REPORT.yml`, 2024 on): the answers of
/// its "GPU vendor" dropdown (`'Nvidia (CUDA)'`, `'AMD (ROCm)'`, `'Apple Silicon (MPS)'`, `'None
/// (CPU)'`) and of its "Install method" one (`"Invoke's Launcher"`, 2025 on), each alone on its
/// line as GitHub renders the form. Weak, as AUTOMATIC1111's form is.
pub(super) fn invokeai_form(text: &str, facts: &mut LineFacts) {
    const ANSWERS: [&str; 5] = [
        "Nvidia (CUDA)",
        "AMD (ROCm)",
        "Apple Silicon (MPS)",
        "None (CPU)",
        "Invoke's Launcher",
    ];
    if ANSWERS.contains(&text.trim()) {
        facts.engine(EngineName::Invokeai, Certainty::Weak);
    }
}

// --- transformers by its log format and its training arguments ------------------------------

/// transformers' explicit log format (`src/transformers/utils/logging.py`
/// `enable_explicit_format`: `"[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >>
/// %(message)s"`, which its example scripts and the trainers on them switch on):
/// `[INFO|tokenization_utils_base.py:2194] 2023-09-15 14:50:06,318 >> tokenizer config file
/// saved in …`, `[WARNING|trainer.py:…] … >> …`.
pub(super) fn transformers_explicit_log(text: &str, facts: &mut LineFacts) {
    let line = text.trim_start();
    let Some(rest) = ["[INFO|", "[WARNING|", "[ERROR|", "[DEBUG|", "[CRITICAL|"]
        .iter()
        .find_map(|level| line.strip_prefix(level))
    else {
        return;
    };
    let Some((location, after)) = rest.split_once("] ") else {
        return;
    };
    let located = location.split_once(".py:").is_some_and(|(file, number)| {
        !file.is_empty()
            && !file.contains(' ')
            && !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
    });
    if located && has(after, " >> ") {
        facts.engine(EngineName::Transformers, Certainty::Weak);
    }
}

/// Fields only transformers' `TrainingArguments` has (`training_args.py`):
/// `evaluate_during_training` (2.x–3.x, before `evaluation_strategy`), `evaluation_strategy` and
/// its 4.41+ name `eval_strategy`, as a report, a config or a command names them ("run
/// trainer.train() with evaluate_during_training").
pub(super) fn transformers_training_field(text: &str, facts: &mut LineFacts) {
    let named = [
        "evaluate_during_training",
        "evaluation_strategy",
        "eval_strategy",
    ]
    .iter()
    .any(|field| {
        text.match_indices(field).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + field.len()..].chars().next();
            before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
                && after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
        })
    });
    if named {
        facts.engine(EngineName::Transformers, Certainty::Weak);
    }
}

/// A transformers model, tokenizer or processor class loaded in pasted code: an `Auto…` class
/// (`AutoModelForCausalLM.from_pretrained(`, `AutoTokenizer.from_pretrained(`) or a model class
/// named by transformers' convention `<Model>For<Task>` (`LlamaForCausalLM.from_pretrained(`,
/// `Qwen2VLForConditionalGeneration.from_pretrained(`; `modeling_auto.py`'s mappings). Not a
/// diffusers pipeline (`AutoPipelineForText2Image`, `StableDiffusionPipeline`), which
/// `diffusers_code` reads.
pub(super) fn transformers_model_class(text: &str, facts: &mut LineFacts) {
    const CALL: &str = ".from_pretrained(";
    let loaded = text.match_indices(CALL).any(|(at, _)| {
        let class = text[..at]
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        let auto = class.starts_with("Auto") && class.len() > "Auto".len();
        let task = class.find("For").is_some_and(|at| {
            at > 0 && class[at + "For".len()..].starts_with(|c: char| c.is_ascii_uppercase())
        });
        class.starts_with(|c: char| c.is_ascii_uppercase())
            && !class.contains("Pipeline")
            && (auto || task)
    });
    if loaded {
        facts.engine(EngineName::Transformers, Certainty::Weak);
    }
}

/// TRL's trainers and their configs named as words (`trl/trainer/`: `SFTTrainer`, `DPOTrainer`,
/// `GRPOTrainer`, `ORPOTrainer`, `KTOTrainer`, `RewardTrainer`, `SFTConfig`, `DPOConfig`,
/// `GRPOConfig`; "an out-of-memory issue while using the DPOTrainer"): they subclass the
/// transformers `Trainer` and `TrainingArguments`. Not `PPOTrainer`, a class name of other RL
/// libraries too (OpenRLHF), nor a longer name holding one (`RayPPOTrainer`).
pub(super) const TRL_CLASSES: [&str; 9] = [
    "SFTTrainer",
    "DPOTrainer",
    "GRPOTrainer",
    "ORPOTrainer",
    "KTOTrainer",
    "RewardTrainer",
    "SFTConfig",
    "DPOConfig",
    "GRPOConfig",
];

pub(super) fn trl_class(text: &str, facts: &mut LineFacts) {
    let named = TRL_CLASSES.iter().any(|class| {
        text.match_indices(class).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + class.len()..].chars().next();
            before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
                && after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
        })
    });
    if named {
        facts.engine(EngineName::Transformers, Certainty::Weak);
    }
}

/// The frameworks' own container images, as a Dockerfile's `FROM` or a pod spec names them:
/// TensorFlow's (`tensorflow/tensorflow:2.1.0-py3` on Docker Hub, NGC's
/// `nvcr.io/nvidia/tensorflow:23.03-tf2-py3`) and PyTorch's (`pytorch/pytorch:2.1.0-cuda12.1-
/// cudnn8-runtime`, `nvcr.io/nvidia/pytorch:24.01-py3`): the framework the job runs, weakly (an
/// application installed on it names itself).
pub(super) fn framework_image(text: &str, facts: &mut LineFacts) {
    const IMAGES: [(&str, EngineName); 4] = [
        ("tensorflow/tensorflow:", EngineName::Tensorflow),
        ("nvidia/tensorflow:", EngineName::Tensorflow),
        ("pytorch/pytorch:", EngineName::Pytorch),
        ("nvidia/pytorch:", EngineName::Pytorch),
    ];
    for (image, name) in IMAGES {
        let named = text.match_indices(image).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            before.is_none_or(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
                && text[at + image.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        });
        if named {
            facts.engine(name, Certainty::Weak);
        }
    }
}

// --- Session 37 (p1): vLLM's sites, ComfyUI's issue form and node names ---------------------

/// A link to vLLM's documentation or recipe site (`https://docs.vllm.ai/en/latest/`,
/// `https://recipes.vllm.ai/<model>`): vLLM's issue forms (`.github/ISSUE_TEMPLATE/
/// 400-bug-report.yml` and the others: "Make sure you already searched for relevant issues, and
/// asked the chatbot living at the bottom right corner of the [documentation page](https://
/// docs.vllm.ai/en/latest/)") end with it, and a report following a vLLM recipe links it. A
/// host name only: `vllm.ai` inside another word is not read.
pub(super) fn vllm_site(text: &str, facts: &mut LineFacts) {
    let linked = ["docs.vllm.ai", "recipes.vllm.ai"].iter().any(|site| {
        text.match_indices(site).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            before.is_none_or(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
        })
    });
    if linked {
        facts.engine(EngineName::Vllm, Certainty::Weak);
    }
}

/// ComfyUI's issue form section `Custom Node Testing` (comfyanonymous/ComfyUI
/// `.github/ISSUE_TEMPLATE/user-support.yml` and `bug-report.yml`: the checkbox "I have tried
/// disabling custom nodes and the issue persists"), as GitHub renders it: a heading line
/// (`### Custom Node Testing`), nothing else on it.
pub(super) fn comfyui_form(text: &str, facts: &mut LineFacts) {
    let heading = text.trim().trim_start_matches('#').trim();
    if text.trim_start().starts_with('#') && heading == "Custom Node Testing" {
        facts.engine(EngineName::Comfyui, Certainty::Weak);
    }
}

/// A ComfyUI node named by its display name with the word `node` (`got oom on Vae Decode node`,
/// `the VAE Encode node`): `nodes.py` `NODE_DISPLAY_NAME_MAPPINGS` shows `VAEDecode` as "VAE
/// Decode" and `VAEEncode` as "VAE Encode" in the graph (their class names are read by
/// [`comfyui_node_name`]). Any case, as users retype it; not `vae_decode node` or another
/// word before `Decode`.
pub(super) fn comfyui_node_display(text: &str, facts: &mut LineFacts) {
    let lower = text.to_ascii_lowercase();
    let named = ["vae decode node", "vae encode node"].iter().any(|name| {
        lower.match_indices(name).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + name.len()..].chars().next();
            before.is_none_or(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.')))
                && after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
        })
    });
    if named {
        facts.engine(EngineName::Comfyui, Certainty::Weak);
    }
}

/// Whether a line sets a shell variable (`ENGINE_DIR="."`, `export CUDA_HOME=/usr/local/cuda`).
fn shell_assignment(line: &str) -> bool {
    let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
    line.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    })
}

/// Whether a line is a row of `pip list`: a package's name, two spaces or more, its version
/// (`pytorch-lightning             1.7.7`).
fn pip_list_row(line: &str) -> bool {
    let Some((name, version)) = line.split_once("  ") else {
        return false;
    };
    let version = version.trim();
    let version = version.strip_prefix('v').unwrap_or(version);
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        && !version.contains(char::is_whitespace)
        && version.starts_with(|c: char| c.is_ascii_digit())
        && version.contains('.')
}
