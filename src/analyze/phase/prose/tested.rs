//! A trained model tested, in the reporter's words (session 36): `Why do I have this problem
//! when I test：`, `OOM while testing the trained model`, `when I test on my own images`. The
//! test of a model is the model run on inputs (inference), but `test` alone is as often the
//! reporter's debugging (`when I test it with a smaller batch`, `testing the fix`): so only a
//! time word (`when`, `while`, `whenever`) with the verb, and either nothing after it in its
//! clause (the failure follows: `when I test:` then the error) or the model or its inputs as
//! the object. Read with the grammar's sentence guards (advice, negation, a stage that went
//! well).

use crate::model::explain::Phase;

/// Objects of `test` that make it the model run: the model, its weights, or inputs.
const OBJECTS: &[&str] = &[
    "model",
    "models",
    "network",
    "net",
    "checkpoint",
    "weights",
    "image",
    "images",
    "video",
    "videos",
    "picture",
    "pictures",
    "photo",
    "photos",
    "data",
    "dataset",
    "samples",
    "inputs",
];

/// Words between `test` and its object (`the trained model`, `on my own images`).
const BETWEEN: &[&str] = &[
    "the",
    "my",
    "a",
    "an",
    "our",
    "this",
    "on",
    "with",
    "own",
    "trained",
    "pretrained",
    "pre-trained",
    "fine-tuned",
    "finetuned",
    "new",
    "test",
    "custom",
    "saved",
    "final",
];

/// `when I test` / `while testing …` hits of a lowercase text: (start, end, inference).
pub(super) fn tested_hits(lower: &str) -> Vec<(usize, usize, Phase)> {
    let mut out = Vec::new();
    for time in ["when ", "while ", "whenever "] {
        for (at, _) in lower.match_indices(time) {
            if lower[..at]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
            {
                continue;
            }
            let mut rest = &lower[at + time.len()..];
            for doer in ["i ", "we "] {
                if let Some(after) = rest.strip_prefix(doer) {
                    rest = after;
                    break;
                }
            }
            let Some(verb) = ["testing", "tested", "tests", "test"]
                .into_iter()
                .find(|verb| rest.starts_with(verb))
            else {
                continue;
            };
            // A past form names a test that ended, not the failure's moment.
            if verb == "tested" {
                continue;
            }
            let verb_end = lower.len() - rest.len() + verb.len();
            let after = &lower[verb_end..];
            if after.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '-') {
                continue;
            }
            let clause_ends = after
                .trim_start_matches([' ', '\t'])
                .chars()
                .next()
                .is_none_or(|c| matches!(c, ':' | '：' | ',' | '，' | '\n' | '.' | ';'));
            let object = || {
                let mut end = verb_end;
                for word in after.split(' ').filter(|w| !w.is_empty()).take(5) {
                    let bare = word.trim_end_matches([',', '.', ':', '：', ';', '?', '!']);
                    end = lower[end..]
                        .find(bare)
                        .map_or(end, |i| end + i + bare.len());
                    if OBJECTS.contains(&bare) || names_a_model_size(bare) {
                        return Some(end);
                    }
                    if bare.len() != word.len() || !BETWEEN.contains(&bare) {
                        return None;
                    }
                }
                None
            };
            let end = if clause_ends {
                Some(verb_end)
            } else {
                object()
            };
            if let Some(end) = end {
                if !super::grammar::sentence_guarded(lower, at, end) {
                    out.push((at, end, Phase::Inference));
                }
            }
        }
    }
    out
}

/// A model named by its size (`qwen2-7b`, `llama-2-13b`, `1.5b`): the model as the test's
/// object (`when testing Qwen2-7B in LongBench`, session 47).
fn names_a_model_size(word: &str) -> bool {
    let Some(number) = word
        .rsplit(['-', '_'])
        .next()
        .and_then(|last| last.strip_suffix('b'))
    else {
        return false;
    };
    !number.is_empty()
        && number.len() <= 5
        && number.starts_with(|c: char| c.is_ascii_digit())
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}
