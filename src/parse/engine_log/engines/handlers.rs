//! The handlers of the marker table ([`super::RULES`]): what a matched line says beyond its
//! marker (the engine named in it, a version, a phase, a stream), each named in its rule.

use super::*;

pub(super) fn aphrodite_named(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Aphrodite, Certainty::Weak);
}

pub(super) fn automatic1111_named(text: &str, facts: &mut LineFacts) {
    // Forge's `main_thread.py` is named with its logger's level (`main_thread.py :: ERROR`,
    // `modules_forge/main_thread.py`); another project's file of that name is not Forge.
    if has(text, "main_thread.py") && !(has(text, "modules_forge") || has(text, ":: ")) {
        return;
    }
    facts.engine(EngineName::Automatic1111, Certainty::Weak);
    // "hires fix" is also the reporter's word for a generation's upscaling pass.
    facts.stage_words |= has(text, "res fix") || has(text, "res. fix");
}

pub(super) fn comfyui_named(text: &str, facts: &mut LineFacts) {
    // SwarmUI relays the output of the ComfyUI backends it runs under `[ComfyUI-<n>/STDERR]`
    // and `[ComfyUI-<n>/STDOUT]` (`src/Backends/` … `ComfyUISelfStartBackend`): ComfyUI ran.
    let swarm_backend = text.match_indices("[ComfyUI-").any(|(at, found)| {
        let rest = &text[at + found.len()..];
        let digits = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        digits.len() < rest.len()
            && (digits.starts_with("/STDERR]") || digits.starts_with("/STDOUT]"))
    });
    // Set against a web UI on the same line ("In ComfyUI I can choose fp16, the webui has no
    // such option"), it is the program compared with (`vocab::engine_in_prose`).
    if swarm_backend || (named_as_word(text, "ComfyUI") && !vocab::other_web_ui(text)) {
        facts.engine(EngineName::Comfyui, Certainty::Weak);
    }
}

pub(super) fn invokeai_named(text: &str, facts: &mut LineFacts) {
    if named_as_word(text, "InvokeAI") {
        facts.engine(EngineName::Invokeai, Certainty::Weak);
    }
}

pub(super) fn tensorflow_cpp_location(text: &str, facts: &mut LineFacts) {
    // `tensorflow/<…>.cc:<line>]`; jaxlib before 0.4 built XLA from `external/org_tensorflow/`.
    let named = text.match_indices(".cc:").any(|(at, _)| {
        let start = text[..at]
            .rfind(|c: char| c.is_whitespace())
            .map_or(0, |space| crate::parse::text::after_char_at(text, space));
        let path = text[start..at].replace('\\', "/");
        let digits = text[at + 4..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        // PyTorch/XLA 1.x built its XRT client in TensorFlow's tree (`tensorflow/compiler/xla/
        // xla_client/xla_util.cc`): that is not TensorFlow running.
        (path.starts_with("tensorflow/") || has(&path, "/tensorflow/"))
            && !has(&path, "org_tensorflow")
            && !has(&path, "/xla_client/")
            && digits > 0
            && text[at + 4 + digits..].starts_with(']')
    });
    // What `import tensorflow` prints by itself, also where another library imports it and
    // PyTorch runs the model (transformers, Keras 3, sentence-transformers): its loader
    // opening CUDA's libraries (`stream_executor/platform/default/dso_loader.cc`,
    // `cuda_cudart_stub.cc`), oneDNN's and TF-TRT's notes (`core/util/port.cc`,
    // `tf2tensorrt/utils/py_utils.cc`), the CPU's instructions
    // (`core/platform/cpu_feature_guard.cc`) and the factories' double registration (`Unable to
    // register cuDNN factory`): TensorFlow was imported, not seen at work, and names no engine.
    let imported = [
        "dso_loader.cc:",
        "cudart_stub.cc:",
        "util/port.cc:",
        "py_utils.cc:",
        "cpu_feature_guard.cc:",
        "Unable to register cu",
    ]
    .iter()
    .any(|place| has(text, place));
    // (TensorFlow's own failure names it: `engines::engine_of_message`.)
    if named {
        if !imported {
            facts.engine(EngineName::Tensorflow, Certainty::Strong);
        }
    } else if has(&text.replace('\\', "/"), "/xla_client/") {
        // PyTorch/XLA 1.x's XRT client, built in TensorFlow's tree from its
        // `third_party/xla_client/` (`E tensorflow/compiler/xla/xla_client/xla_util.cc:76] …
        // Resource exhausted: Attempting to reserve 2.78G at the bottom of memory`): PyTorch
        // on a TPU. (Swift for TensorFlow's x10 copied that client; archived in 2021.)
        facts.engine(EngineName::Pytorch, Certainty::Weak);
    }
}

pub(super) fn pytorch_named(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Pytorch, Certainty::Weak);
}

pub(super) fn pytorch_thc(text: &str, facts: &mut LineFacts) {
    let lua = has(text, "cutorch") || has(text, "luarocks") || has(text, "torch7");
    let pytorch =
        has(text, "pytorch") || has(text, "/aten/src/THC/") || has(text, "/torch/lib/THC/");
    if pytorch && !lua {
        facts.engine(EngineName::Pytorch, Certainty::Weak);
    }
}

pub(super) fn pytorch_cudnn(text: &str, facts: &mut LineFacts) {
    let lower = text.to_ascii_lowercase();
    let raised = lower.find("cudnn error").is_some_and(|at| {
        lower[..at]
            .trim_end()
            .trim_end_matches(':')
            .ends_with("runtimeerror")
    });
    if raised {
        facts.engine(EngineName::Pytorch, Certainty::Weak);
    }
}

pub(super) fn torch_call(text: &str, facts: &mut LineFacts) {
    // `torch.<function>(` or `torch.cuda.<function>(`: code calling torch (not
    // `torch.OutOfMemoryError:` named in a message, nor a module path such as TensorRT's layer
    // name `torch.nn.functional.linear(…)` of a converted model).
    let called = text.match_indices("torch.").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let rest = &text[at + "torch.".len()..];
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        let function = name.strip_prefix("cuda.").unwrap_or(name);
        before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '/'))
            && function.starts_with(|c: char| c.is_ascii_lowercase())
            && !function.contains('.')
            && rest[name_len..].starts_with('(')
    });
    if called {
        facts.engine(EngineName::Pytorch, Certainty::Weak);
    }
}

/// PyTorch's own idioms in pasted code: a module or tensor moved to the GPU
/// (`model = model.to(device)`, `images.cuda()`, `nn.Module.to` and `Tensor.cuda`): a PyTorch
/// program, weakly (a more specific engine's markers outrank it). Not on a call's result
/// (`TTS(model_name=…).to(device)`: Coqui TTS's API object, which mimics a module).
pub(super) fn pytorch_idiom(text: &str, facts: &mut LineFacts) {
    let called = [".to(device)", ".cuda()"].iter().any(|idiom| {
        text.match_indices(idiom).any(|(at, _)| {
            text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ']')
        })
    });
    if called {
        facts.engine(EngineName::Pytorch, Certainty::Weak);
    }
}

/// Lightning in pasted code: a class on a Lightning module (`class M(pl.LightningModule):`,
/// `(L.LightningModule)`, `(lightning.pytorch.LightningModule)`, a `LightningDataModule`) or its
/// trainer built (`pl.Trainer(`, `L.Trainer(`): a Lightning program, weakly.
pub(super) fn lightning_code(text: &str, facts: &mut LineFacts) {
    let base = ["LightningModule)", "LightningDataModule)"]
        .iter()
        .any(|name| {
            text.match_indices(name).any(|(at, _)| {
                let before = text[..at]
                    .trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '.');
                before.ends_with('(')
                    && matches!(
                        &text[before.len()..at],
                        "" | "pl."
                            | "L."
                            | "lightning.pytorch."
                            | "pytorch_lightning."
                            | "lightning."
                    )
            })
        });
    let trainer = [
        "pl.Trainer(",
        "L.Trainer(",
        "pytorch_lightning.Trainer(",
        "lightning.Trainer(",
    ]
    .iter()
    .any(|call| {
        text.match_indices(call).any(|(at, _)| {
            text[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'))
        })
    });
    if base || trainer {
        facts.engine(EngineName::Lightning, Certainty::Weak);
    }
}

pub(super) fn torch_xla_status(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Pytorch, Certainty::Strong);
}

/// Names JAX; the program's name stack may show the stage (`xla::program_stage`).
pub(super) fn jax_op_name(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Jax, Certainty::Strong);
    super::super::xla::program_stage(text, facts);
}

pub(super) fn autotrain_logger(text: &str, facts: &mut LineFacts) {
    if has(text, "autotrain.trainers") || has(text, "autotrain.app") {
        facts.engine(EngineName::Transformers, Certainty::Weak);
    }
}

pub(super) fn ctranslate2_code(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Ctranslate2, Certainty::Weak);
}

pub(super) fn ctranslate2_logger(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Ctranslate2, Certainty::Strong);
}

pub(super) fn exllamav2_named(text: &str, facts: &mut LineFacts) {
    if named_as_word(text, "exllamav2") || named_as_word(text, "ExLlamaV2") {
        facts.engine(EngineName::Exllamav2, Certainty::Weak);
    }
}

pub(super) fn whisper_named(text: &str, facts: &mut LineFacts) {
    if named_as_word(text, "openai-whisper") {
        facts.engine(EngineName::Whisper, Certainty::Weak);
    }
}

pub(super) fn ctranslate2_named(text: &str, facts: &mut LineFacts) {
    let named = [
        "faster-whisper",
        "faster_whisper",
        // The reporter's spelling of it ("I've been using Faster Whisper from the start").
        "Faster Whisper",
        "Faster-Whisper",
        "CTranslate2",
        "whisper-ctranslate2",
    ]
    .iter()
    .any(|name| named_as_word(text, name));
    if named {
        facts.engine(EngineName::Ctranslate2, Certainty::Weak);
    }
}

/// Whether `name` stands in the text as a word, not as a folder of a path (a virtualenv
/// created under `~/ComfyUI/.venv` runs whatever the user launches from it; the frames' own
/// paths are read by [`engine_of_path`]).
pub(super) fn named_as_word(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let mut rest = text[at + name.len()..].chars();
        let after = rest.next();
        let path = |c: char| matches!(c, '/' | '\\' | '_' | '-');
        // `ComfyUI.` ends a sentence; `ComfyUI.exe` or `ComfyUI.git` is a file.
        let file = after == Some('.') && rest.next().is_some_and(char::is_alphanumeric);
        before.is_none_or(|c| !(c.is_alphanumeric() || path(c) || c == '.'))
            && after.is_none_or(|c| !(c.is_alphanumeric() || path(c)))
            && !file
    })
}

pub(super) fn python_import(text: &str, facts: &mut LineFacts) {
    // `from <package>[.module] import …` anywhere (`>>> `, `In [1]: `, code fences), or a line
    // that is an `import <package>` statement.
    let package = if let Some(at) = text.find("from ") {
        let rest = &text[at + "from ".len()..];
        let mut words = rest.split_whitespace();
        match (words.next(), words.next()) {
            (Some(module), Some("import")) => Some(module),
            _ => None,
        }
    } else {
        None
    }
    .or_else(|| {
        let code = text.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '>' | '.'));
        code.strip_prefix("import ")
            .and_then(|rest| rest.split([' ', ',']).next())
    })
    .or_else(|| {
        // A one-liner run by the interpreter (`python -c "import jax; jax.devices()"`); not
        // one that prints a package's version (`python -c "import transformers;
        // print(transformers.__version__)"`), which reports the environment.
        if text.contains("__version__") {
            return None;
        }
        ["-c \"import ", "-c 'import "].iter().find_map(|head| {
            let (_, rest) = text.split_once(head)?;
            rest.split([' ', ',', ';', '"', '\'']).next()
        })
    });
    let Some(package) = package else {
        return;
    };
    let top = package.split('.').next().unwrap_or(package);
    let valid = !top.is_empty() && top.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !valid {
        return;
    }
    let name = match top {
        "lightning" => Some(EngineName::Lightning),
        // Packages the path table only names by their subpackages (a folder of that name is
        // often the user's project or environment).
        "detectron2" => Some(EngineName::Detectron2),
        "whisper" => Some(EngineName::Whisper),
        _ => engine_of_path(&format!("/{top}/")),
    };
    if let Some(name) = name {
        facts.engine(name, Certainty::Weak);
    }
}

pub(super) fn lightning_bar(text: &str, facts: &mut LineFacts) {
    // "Epoch <n>: <percent>%|": the bar of a `Trainer.fit` run, not a script's "Epoch 3/10".
    let Some(rest) = text.split("Epoch ").nth(1) else {
        return;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(after) = rest[digits..].strip_prefix(':') else {
        return;
    };
    let after = after.trim_start();
    let percent = after.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && percent > 0 && after[percent..].starts_with("%|") {
        // Lightning names the bar `Epoch N` itself; a script's tqdm described so
        // (`tqdm(loader, desc=f"Epoch {epoch}")`, ColossalAI's examples) is told apart where it
        // shows: a word of its own before (`Training Epoch 1:`), or a postfix key written in
        // capitals (`set_postfix(Loss=…)`), where Lightning's are the logged metrics' names
        // (`loss=0.068`, `v_num=0`, `train/loss_step=…`).
        let head = text.split("Epoch ").next().unwrap_or("");
        let worded = head.trim_end().ends_with(|c: char| c.is_alphabetic());
        let postfix = ["it/s,", "s/it,"]
            .iter()
            .find_map(|rate| after.split_once(rate).map(|(_, rest)| rest))
            .unwrap_or("");
        let capital_key = postfix.split([',', ' ']).any(|item| {
            item.split_once('=').is_some_and(|(key, _)| {
                key.starts_with(|c: char| c.is_ascii_uppercase())
                    && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
        });
        if !worded && !capital_key {
            facts.engine(EngineName::Lightning, Certainty::Weak);
        }
        // The `Epoch N` bar is the training bar: `TQDMProgressBar.on_train_epoch_start` sets
        // that description; validation, test and predict bars are `Validation`, `Testing`,
        // `Predicting` (lightning 2.x `callbacks/progress/tqdm_progress.py`). A loss in its
        // postfix is not needed (`self.log(..., prog_bar=True)` is optional).
        super::super::training::step(facts);
    }
}

pub(super) fn diffusers_code(text: &str, facts: &mut LineFacts) {
    // A diffusers class names its pipeline (`StableDiffusionPipeline`, `FluxPipeline`); a bare
    // `Pipeline.from_pretrained(` is another library's (pyannote.audio's `Pipeline`, session 52).
    let bare_pipeline = text.contains("Pipeline.from_pretrained(")
        && !text
            .match_indices("Pipeline.from_pretrained(")
            .any(|(at, _)| text[..at].ends_with(|c: char| c.is_ascii_alphanumeric()));
    if !bare_pipeline {
        facts.engine(EngineName::Diffusers, Certainty::Weak);
    }
}

pub(super) fn epoch_meter(text: &str, facts: &mut LineFacts) {
    // `Epoch: [<epoch>][<batch>/<batches>]`: the training meter (evaluation prints `Test:`).
    let Some(rest) = text.split("Epoch: [").nth(1) else {
        return;
    };
    let epoch = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(after) = rest[epoch..].strip_prefix("][") else {
        return;
    };
    let after = after.trim_start();
    let batch = after.bytes().take_while(u8::is_ascii_digit).count();
    if epoch > 0 && batch > 0 && after[batch..].starts_with('/') {
        super::super::training::step(facts);
    }
}

pub(super) fn cntk_minibatch_loop(_text: &str, facts: &mut LineFacts) {
    super::super::training::step(facts);
}

pub(super) fn sglang_own(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Sglang, Certainty::Strong);
}

pub(super) fn mlc_llm_own(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::MlcLlm, Certainty::Strong);
}

pub(super) fn comfyui_own(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Comfyui, Certainty::Strong);
}

pub(super) fn unsloth_banner(text: &str, facts: &mut LineFacts) {
    if has(text, "O^O") {
        facts.engine(EngineName::Transformers, Certainty::Strong);
    }
}

pub(super) fn transformers_generate(text: &str, facts: &mut LineFacts) {
    // `model.generate(` as its own name (`self.model.generate(`), not the end of another
    // (`wan_model.generate(` is Wan's pipeline, `self.lm_model.generate(` a project's own).
    let own =
        (text.match_indices("model.generate(")).any(|(at, _)| super::identifier_start(text, at));
    if own {
        facts.engine(EngineName::Transformers, Certainty::Weak);
    }
}

pub(super) fn vllm_llm_code(text: &str, facts: &mut LineFacts) {
    let call = (text.match_indices("LLM(")).any(|(at, _)| super::identifier_start(text, at));
    if call {
        facts.engine(EngineName::Vllm, Certainty::Weak);
    }
}

pub(super) fn vllm(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Strong);
}

pub(super) fn vllm_image(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Vllm, Certainty::Weak);
}

pub(super) fn tensorrt_llm(text: &str, facts: &mut LineFacts) {
    // `[TensorRT-LLM] TensorRT-LLM version: 0.12.0` is the banner; "Engine building failed"
    // only counts beside TensorRT-LLM's logger tag.
    if let Some(version) = word_after(text, "TensorRT-LLM version: ") {
        facts.engine(EngineName::TensorrtLlm, Certainty::Banner);
        facts.engine_version = Some(version.to_string());
    } else if has(text, "[TRT-LLM]") || has(text, "[TensorRT-LLM]") {
        facts.engine(EngineName::TensorrtLlm, Certainty::Strong);
    }
}

pub(super) fn lmdeploy(text: &str, facts: &mut LineFacts) {
    let config = has(text, "TurbomindEngineConfig")
        || has(text, "PytorchEngineConfig")
        || has(text, "cache_max_entry_count=");
    if config {
        facts.engine(EngineName::Lmdeploy, Certainty::Strong);
    }
}

pub(super) fn invokeai(text: &str, facts: &mut LineFacts) {
    let certainty = if has(text, "[InvokeAI]") {
        Certainty::Strong
    } else {
        Certainty::Weak
    };
    facts.engine(EngineName::Invokeai, certainty);
    // InvokeAI 3.x–5.x logs a session's per-node table when the session ends, a failed one too
    // (`invokeai/app/services/invocation_stats/invocation_stats_common.py`
    // `GraphExecutionStats.get_pretty_log`: `Graph stats: <session id>`, then one row per node
    // type). A session is a graph of invocations (loaders, prompt encoding, denoising, decoding,
    // upscaling): the models' forward, loading them included lazily inside the denoise node (a
    // frame of the model cache says so). Printed under a failure, that session failed.
    if has(text, "Graph stats: ") {
        facts.late_phase = Some(Phase::Inference);
    }
}

pub(super) fn invokeai_console(text: &str, facts: &mut LineFacts) {
    if has(text, "InvokeAI, version") {
        facts.engine(EngineName::Invokeai, Certainty::Banner);
        facts.engine_version = word_after(text, "InvokeAI, version ").map(str::to_string);
    } else {
        facts.engine(EngineName::Invokeai, Certainty::Strong);
    }
    if has(text, "Could not generate image") {
        // `prompt2image` catches the error, prints this and the generation's usage stats.
        facts.late_phase = Some(Phase::Inference);
    }
}

pub(super) fn comfyui(text: &str, facts: &mut LineFacts) {
    // "Requested to load SDXL" / "loaded completely 9.5 1234.5 True" are ComfyUI's wording; a
    // bare "loaded completely" in prose is not, so it needs the number after it.
    let shaped = has(text, "Requested to load ")
        || has(text, "Got an OOM")
        || word_after(text, "loaded completely")
            .or_else(|| word_after(text, "loaded partially"))
            .is_some_and(|word| word.starts_with(|c: char| c.is_ascii_digit()))
        // The dynamic VRAM loader's line (2026): `Model X prepared for dynamic VRAM loading.`
        || crate::parse::engine_log::comfy_load_finished(text);
    if shaped {
        facts.engine(EngineName::Comfyui, Certainty::Strong);
    }
}

pub(super) fn automatic1111(text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Automatic1111, Certainty::Strong);
    if has(text, "Stable diffusion model failed to load") {
        // `modules/sd_models.py` / `modules/initialize.py` `load_model` failed: webui prints
        // the traceback (`errors.display`), then this line. It is read under the failure it
        // follows, below a traceback frame that names the stage more precisely (the CUDA
        // warm-up `first_time_calculation` runs in the same thread before the weights load); a
        // copy printed above the failure belongs to an earlier attempt.
        facts.late_phase = Some(Phase::WeightsLoad);
    } else {
        // The footer `wrap_gradio_call` (`modules/call_queue.py`) appends to a generation's
        // output: the failure it follows happened while generating.
        facts.late_phase = Some(Phase::Inference);
    }
}

pub(super) fn automatic1111_vram(text: &str, facts: &mut LineFacts) {
    if text.trim_start().starts_with("A: ") && has(text, ", R: ") {
        facts.engine(EngineName::Automatic1111, Certainty::Strong);
        facts.late_phase = Some(Phase::Inference);
    }
}

pub(super) fn comfyui_node(text: &str, facts: &mut LineFacts) {
    let rest = text
        .split_once("Node Type:")
        .or_else(|| text.split_once("Error occurred when executing "))
        .map_or("", |(_, rest)| rest);
    let node = rest
        .trim_start_matches(|c: char| c == '*' || c.is_whitespace())
        .split_whitespace()
        .next()
        .map(|word| word.trim_matches(|c: char| c == '*' || c == ':' || c == '`'))
        .filter(|word| !word.is_empty());
    let Some(node) = node else {
        return;
    };
    facts.engine(EngineName::Comfyui, Certainty::Strong);
    let phase = if node.contains("Sampler")
        || node.starts_with("VAEDecode")
        || node.starts_with("VAEEncode")
    {
        Phase::Inference
    } else if node.contains("Loader") {
        Phase::WeightsLoad
    } else {
        return;
    };
    facts.failed_phase_hint = Some(phase);
}

pub(super) fn textgen_output(text: &str, facts: &mut LineFacts) {
    if has(text, "tokens/s") && has(text, "seconds") {
        facts.late_phase = Some(Phase::Inference);
    }
}

pub(super) fn bfc_allocator(text: &str, facts: &mut LineFacts) {
    // jaxlib before 0.4 built XLA, and its copy of the BFC allocator, from TensorFlow's tree as
    // the Bazel dependency `org_tensorflow` (`external/org_tensorflow/tensorflow/core/
    // common_runtime/bfc_allocator.cc`), as `tensorflow_cpp_location` reads it; TensorFlow's own
    // builds print `tensorflow/core/…` (session 49).
    if has(text, "external/org_tensorflow/") {
        facts.engine(EngineName::Jax, Certainty::Weak);
    } else if has(text, "tensorflow/") || has(text, "tensorflow\\") {
        facts.engine(EngineName::Tensorflow, Certainty::Strong);
    } else if has(text, "xla/") || has(text, "jaxlib") {
        facts.engine(EngineName::Jax, Certainty::Weak);
    }
}

pub(super) fn tf_serving(_text: &str, facts: &mut LineFacts) {
    facts.engine(EngineName::Tensorflow, Certainty::Strong);
}

pub(super) fn deepspeed(text: &str, facts: &mut LineFacts) {
    if has(text, "DeepSpeed-MII") || has(text, "[DeepSpeed]") {
        facts.engine(EngineName::Deepspeed, Certainty::Strong);
    } else {
        facts.engine(EngineName::Deepspeed, Certainty::Weak);
    }
}

pub(super) fn package_path(text: &str, facts: &mut LineFacts) {
    let mut rest = text;
    while let Some(at) = memchr::memmem::find(rest.as_bytes(), b"-packages") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ':' | ',' | ')'))
            .unwrap_or(tail.len());
        if let Some(name) = engine_of_path(&tail[..end]) {
            facts.engine(name, Certainty::Weak);
        }
        rest = &tail["-packages".len()..];
    }
    super::super::training::pytest_frame(text, facts);
    super::super::training::torch_graphs_warning(text, facts);
}
