//! A later run of the same work as what failed (session 39, rule 1): `the second generation
//! uses VRAM … OOM`, `any sequential generation will run out of memory`, `the next request
//! crashes`, `After the first generation is successful, torch.OutOfMemoryError`, `after doing a
//! few generations, the generation process stops … an error appears`, `fails after some images`.
//!
//! An app that applies a model (a diffusion UI, a chat server, a transcriber) loads it for its
//! first run; a failure on a later run, or after some runs went through, came while the loaded
//! model was applied to the next input: inference. `the first generation OOMs` alone is not
//! read (the first run also loads the model). Not a product's generation (`second generation
//! Ryzen`, `the next generation of cards`), not the `following` image of a thread (a
//! screenshot), and not in a sentence that names a training or a load.

use super::*;

/// Words that make a run a later one.
const LATER: &[&str] = &[
    "second",
    "third",
    "next",
    "subsequent",
    "sequential",
    "consecutive",
    "another",
];

/// Nouns of one run of a model applied to an input.
const RUNS: &[&str] = &[
    "generation",
    "generations",
    "image",
    "images",
    "picture",
    "pictures",
    "video",
    "videos",
    "request",
    "requests",
    "query",
    "queries",
    "call",
    "calls",
    "prompt",
    "prompts",
    "inference",
    "inferences",
    "prediction",
    "predictions",
];

/// Words after `generation` that make it a product's (`second generation Ryzen`).
const PRODUCT: &[&str] = &[
    "of", "intel", "amd", "ryzen", "xeon", "epyc", "core", "cores", "tensor", "gpu", "gpus",
    "card", "cards", "chip", "chips", "hardware", "cpu", "cpus",
];

/// Gerunds that may stand between `after` and the count (`after doing a few generations`).
const DOING: &[&str] = &[
    "doing",
    "running",
    "making",
    "generating",
    "processing",
    "creating",
];

/// A later run named in a sentence that reports the failure: the first and last word of the
/// hit and the last word the guard reads up to (the clause after `after …`, which says the
/// earlier runs went well, is not read as the failed stage going well).
pub(super) fn later_run(lower: &str, words: &[Word<'_>], index: usize) -> Option<(usize, usize)> {
    let text = |i: usize| words.get(i).map(|w| w.text);
    let noun_at = |i: usize| text(i).is_some_and(|w| RUNS.contains(&w));
    // The object of a verb the grammar reads itself (`clicked to generate another image`).
    let object_of_a_verb = index.checked_sub(1).is_some_and(|before| {
        JOB_BASES.contains(&words[before].text) || JOB_INGS.contains(&words[before].text)
    });
    let (last, guard_to) = if LATER.contains(&words[index].text) && !object_of_a_verb {
        let noun = [index + 1, index + 2].into_iter().find(|&i| noun_at(i))?;
        // One word may qualify the run (`the second img2img generation`), not an article.
        if noun == index + 2 && matches!(text(index + 1), Some("the" | "a" | "of" | "to")) {
            return None;
        }
        (noun, noun)
    } else if words[index].text == "after" {
        let mut at = index + 1;
        if text(at).is_some_and(|w| DOING.contains(&w)) {
            at += 1;
        }
        if matches!(text(at), Some("the" | "a")) {
            at += 1;
        }
        if !text(at).is_some_and(is_count) {
            return None;
        }
        at += 1;
        let noun = [at, at + 1].into_iter().find(|&i| noun_at(i))?;
        if noun == at + 1 && matches!(text(at), Some("the" | "a" | "of" | "to")) {
            return None;
        }
        // The guard reads the sentence from the clause after the earlier runs.
        let clause_end = lower[words[noun].end..]
            .find([',', '.', ';', '!', '?', '\n'])
            .map_or(lower.len(), |at| words[noun].end + at);
        let guard_to = (noun..words.len())
            .take_while(|&i| words[i].end <= clause_end)
            .last()
            .unwrap_or(noun);
        (noun, guard_to)
    } else {
        return None;
    };
    if text(last + 1).is_some_and(|w| PRODUCT.contains(&w)) {
        return None;
    }
    let span = &lower[words[index].start..words[last].end];
    if span.contains([',', '.', ';', ':', '!', '?']) {
        return None;
    }
    if !sentence_reports_a_failure(lower, words[index].start, words[guard_to].end) {
        return None;
    }
    (!sentence_names_another_stage(lower, words, words[index].start, words[last].end))
        .then_some((last, guard_to))
}
