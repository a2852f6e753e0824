//! Engines named by what their users paste around a failure: JAX's pip extras, DeepSpeed's
//! launcher command, Apple's MLX by name.

use super::super::{Certainty, LineFacts};
use crate::model::failure::EngineName;

/// Whether `at` starts a word of `text`: an identifier's start (`super::identifier_start`)
/// with no `-`, `.` or `/` just before it either.
fn starts_word(text: &str, at: usize) -> bool {
    super::identifier_start(text, at) && !text[..at].ends_with(['-', '.', '/'])
}

/// Whether `text` holds `name` as a word of its own: starting a word, and not followed by a
/// character that `continues` says would carry the word on.
fn named_as_word(text: &str, name: &str, continues: impl Fn(char) -> bool) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let after = text[at + name.len()..].chars().next();
        starts_word(text, at) && after.is_none_or(|c| !continues(c))
    })
}

/// JAX installed by its pip extras (`pip install -U "jax[cuda12]"`, `jax[tpu]`, `jax[cpu]`,
/// AMD's `jax[rocm]`: the `[project.optional-dependencies]` of jax-ml/jax `setup.py`
/// `extras_require`, as its installation guide writes them): the report is about a JAX
/// program, weakly (an application on JAX names itself).
pub(super) fn jax_install_extra(text: &str, facts: &mut LineFacts) {
    let extra = text.match_indices("jax[").any(|(at, _)| {
        let rest = &text[at + "jax[".len()..];
        let inside = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b'-'))
            .count();
        starts_word(text, at) && inside > 0 && rest[inside..].starts_with(']')
    });
    if extra {
        facts.engine(EngineName::Jax, Certainty::Weak);
    }
}

/// DeepSpeed's launcher as a command (`bin/deepspeed` → `deepspeed/launcher/runner.py` `main`:
/// `deepspeed [--num_nodes N] [--num_gpus N] [--hostfile F] [--include …] script.py …`): the
/// word first on the line (after a shell prompt or variables set for it), then one of its
/// flags or the script it runs. The job runs under DeepSpeed (weakly, as `accelerate launch`
/// names accelerate); not the word in a sentence, nor `--deepspeed ds_config.json`.
pub(super) fn deepspeed_launcher(text: &str, facts: &mut LineFacts) {
    let mut words = text
        .trim_start()
        .trim_start_matches(['$', '!', '>', '`', ' '])
        .split_whitespace()
        .skip_while(|word| word.contains('=') && !word.starts_with('-'));
    let command = words.next() == Some("deepspeed")
        && words
            .next()
            .is_some_and(|next| next.starts_with("--") || next.ends_with(".py"));
    if command {
        facts.engine(EngineName::Deepspeed, Certainty::Weak);
    }
}

/// Engines a line may name beside MLX, comparing it with another program ("MLX is faster than
/// llama.cpp", "LM Studio's MLX engine"): the line then says nothing of what ran.
const OTHER_PROGRAMS: [&str; 14] = [
    "vLLM",
    "vllm",
    "SGLang",
    "sglang",
    "llama.cpp",
    "Ollama",
    "ollama",
    "PyTorch",
    "pytorch",
    "torch",
    "Transformers",
    "transformers",
    "GGUF",
    "ggml",
];

/// Apple's MLX (ml-explore/mlx) named as the framework the report is about ("at least when
/// using MLX", "MLX-LM", `mlx_lm.generate`, `mlx-vlm`, `mlx.core`): MLX programs are none of
/// the named engines (`other`), and their Python APIs look like transformers' (`model.generate(`
/// of mlx-lm's models, `generate(model, tokenizer, prompt)`), which must not name transformers.
/// Strong, so it outranks those idioms, but an engine's own lines (Strong at a higher layer)
/// and banners still win. A line naming another program beside MLX names neither.
pub(super) fn mlx_named(text: &str, facts: &mut LineFacts) {
    const NAMES: [&str; 7] = [
        "MLX", "mlx_lm", "mlx-lm", "mlx_vlm", "mlx-vlm", "mlx.core", "MLX-LM",
    ];
    let named = NAMES
        .iter()
        .any(|name| named_as_word(text, name, |c| c.is_ascii_alphanumeric()));
    let beside = OTHER_PROGRAMS
        .iter()
        .any(|other| named_as_word(text, other, |c| c.is_ascii_alphanumeric() || c == '_'))
        || text.contains("LM Studio");
    if named && !beside {
        facts.engine(EngineName::Other, Certainty::Strong);
    }
}
