//! The reporter naming a model's load with the model's name inside the words (`加载gpt oss
//! 120b模型时`, `when I try to load the Mistral Large 2407 exl2 3.0bpw`): the hits
//! `prose::hits` adds to its fixed phrases.

use super::*;

/// A CJK verb of loading with the model's name between it and `模型` / `权重` (`加载gpt oss
/// 120b模型时`, while loading the gpt-oss-120b model): `加载模型` with a name inside.
pub(super) fn named_model_load(lower: &str) -> Option<(usize, usize, Phase)> {
    ["加载", "載入", "载入"].iter().find_map(|verb| {
        lower.match_indices(verb).find_map(|(at, _)| {
            let after = &lower[at + verb.len()..];
            let name = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '.' | '_')))
                .unwrap_or(after.len());
            let rest = &after[name..];
            let object = ["模型", "权重", "權重"]
                .iter()
                .find(|object| rest.starts_with(*object))?;
            (name > 0 && after[..name].trim().len() > 1 && !denied(lower, at, verb)).then(|| {
                (
                    at,
                    at + verb.len() + name + object.len(),
                    Phase::WeightsLoad,
                )
            })
        })
    })
}

/// Words that name a model, its weights or a format of them, in what a sentence says is
/// loaded (`to load the Mistral Large 2407 exl2 3.0bpw`, `trying to load llama-3-70b`).
const MODEL_NAME_WORDS: &[&str] = &[
    "model",
    "models",
    "checkpoint",
    "weights",
    "gguf",
    "exl2",
    "gptq",
    "awq",
    "safetensors",
    "lora",
    "adapter",
    "llama",
    "mistral",
    "mixtral",
    "qwen",
    "gemma",
    "phi",
    "deepseek",
    "falcon",
    "vicuna",
    "chatglm",
    "glm",
    "internlm",
    "baichuan",
    "yi",
    "starcoder",
    "codellama",
    "whisper",
    "sdxl",
    "flux",
    "vae",
    "unet",
    "controlnet",
    "bloom",
    "opt",
    "t5",
];

/// The reporter loading a named model (`when I try to load the Mistral Large 2407 exl2 3.0bpw
/// it crashes`, `trying to load llama-3-70b-instruct`, `I tried to load Qwen2.5-72B`): a verb of
/// trying, then `to load` and, within four words, a model's name or a word of its weights
/// ([`MODEL_NAME_WORDS`], or a size such as `70b`): weights_load, as `loading the model` is.
/// Not data (`to load the dataset`, `to load 3 images`), which names no model.
pub(super) fn named_model_load_english(lower: &str) -> Vec<(usize, usize, Phase)> {
    let mut out = Vec::new();
    for lead in [
        "try to load ",
        "trying to load ",
        "tried to load ",
        "attempt to load ",
    ]
    .iter()
    .chain(&["attempting to load ", "when i load ", "when loading "])
    {
        for (at, _) in lower.match_indices(lead) {
            let after = &lower[at + lead.len()..];
            let end = after.find([',', ';', '\n', '(']).unwrap_or(after.len());
            let end = after[..end].find(". ").unwrap_or(end);
            let clause = &after[..end];
            let named = clause.split_whitespace().take(4).any(|word| {
                let word = word.trim_matches(|c: char| !c.is_ascii_alphanumeric());
                let parts = || word.split(['-', '_', '.', '/']);
                MODEL_NAME_WORDS.contains(&word)
                    || parts().any(|part| MODEL_NAME_WORDS.contains(&part))
                    || parts().any(|part| {
                        part.len() > 1
                            && part.ends_with('b')
                            && part[..part.len() - 1]
                                .bytes()
                                .all(|b| b.is_ascii_digit() || b == b'.')
                    })
            });
            let data = clause.split_whitespace().take(4).any(|word| {
                matches!(
                    word.trim_matches(|c: char| !c.is_ascii_alphanumeric()),
                    "dataset"
                        | "datasets"
                        | "data"
                        | "images"
                        | "image"
                        | "file"
                        | "files"
                        | "csv"
                        | "video"
                        | "videos"
                )
            });
            // Another model than the one that failed (`I tried to load another model with no
            // luck`): the reporter's experiment, not this failure's stage (session 34; as
            // `grammar::objects::loads_weights`).
            let another = clause
                .split_whitespace()
                .next()
                .map(|word| word.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
                .is_some_and(|word| matches!(word, "another" | "other" | "different"))
                || clause.starts_with("a different ");
            // What a program does when it runs (`the inference engine will attempt to load the
            // model in int8 mode`): a maintainer's account of the behaviour, not a report.
            let described = ["will ", "would "]
                .iter()
                .any(|modal| lower[..at].ends_with(modal));
            if named && !data && !another && !described && !denied(lower, at, lead) {
                out.push((at, at + lead.len() + clause.len(), Phase::WeightsLoad));
                break;
            }
        }
    }
    out
}
