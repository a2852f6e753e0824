//! A model applied to what it was given, as the reporter tells it: the verbs whose object
//! must be an input (`aligning the audio`, `labelling images`), the inputs themselves, and the
//! progress of a run over them (`at 40/100 frames`, `processed 3 files then`).

use super::*;

/// The verbs of a model applied to inputs added in session 16: their object must not be the
/// machine or the failure ([`NOT_INPUTS`]).
pub(super) const APPLY_VERBS: &[&str] = &[
    "labeling",
    "labelling",
    "ingesting",
    "separating",
    "aligning",
    "ingest",
    "separate",
    "align",
    "inpainting",
    "outpainting",
    "embedding",
    "vectorizing",
    "detecting",
    "tracking",
    "segmenting",
    "recognizing",
    "recognising",
    "classifying",
    "super-resolving",
    "colorizing",
    "synthesizing",
    "reranking",
    "querying",
    "requesting",
    "processing",
    "parsing",
    "inpaint",
    "outpaint",
    "embed",
    "vectorize",
    "detect",
    "track",
    "segment",
    "recognize",
    "recognise",
    "classify",
    "super-resolve",
    "colorize",
    "synthesize",
    "rerank",
    "ocr",
    "query",
    "process",
    "parse",
    // Sentences or records encoded into vectors (sentence-transformers `SentenceTransformer.
    // encode`), only with inputs as the object (session 18; alone `encode` names a text's or a
    // video's encoding, which session 16 measured and dropped).
    "encoding",
    "encode",
];

/// Verbs that name applying a model only with the inputs as their object (`processing the
/// video`, `parse the PDFs`, `encode around 100 million records`): alone they name any
/// program's work (`processing the dataset`, `parsing the config`, `encoding the video`).
const NEEDS_INPUTS: &[&str] = &[
    "processing",
    "process",
    "parsing",
    "parse",
    "encoding",
    "encode",
];

/// What a model is applied to: media, documents, requests (the objects of [`NEEDS_INPUTS`]).
const INPUTS: &[&str] = &[
    "image",
    "images",
    "video",
    "videos",
    "frame",
    "frames",
    "audio",
    "audios",
    "clip",
    "clips",
    "photo",
    "photos",
    "picture",
    "pictures",
    "document",
    "documents",
    "doc",
    "docs",
    "pdf",
    "pdfs",
    "page",
    "pages",
    "request",
    "requests",
    "prompt",
    "prompts",
    "query",
    "queries",
    "sentence",
    "sentences",
    "record",
    "records",
    "recording",
    "recordings",
    "speech",
];

/// What an inference verb must not have as its object: the machine or the failure itself
/// (`trying to detect the GPU`, `tracking the memory`, `testing a fix`, `test it with a smaller
/// batch`: the reporter's debugging, not the model at work).
pub(super) const NOT_INPUTS: &[&str] = &[
    "gpu",
    "gpus",
    "gpu's",
    // A job's resources asked of a scheduler (`it is only requesting 1 node with 8 gpus`).
    "node",
    "nodes",
    "cpu",
    "cpus",
    "cores",
    "resources",
    "ram",
    "cuda",
    "device",
    "devices",
    "memory",
    "vram",
    "leak",
    "leaks",
    "fix",
    "patch",
    "issue",
    "issues",
    "bug",
    "bugs",
    "error",
    "errors",
    "problem",
    "problems",
    "cause",
    "version",
    "versions",
    "it",
    "this",
    "that",
    "environment",
    "setup",
    "install",
    "installation",
    "branch",
    "build",
    "code",
    "script",
    "pr",
    "usage",
    "utilization",
    "speed",
    "performance",
    "changes",
    "commit",
];

/// Whether an inference verb at `index` names the model applied to inputs: its object is not
/// the machine or the failure ([`NOT_INPUTS`]), and the verbs that need one have inputs as
/// their object ([`NEEDS_INPUTS`], [`INPUTS`]). `with the same`, `on a 4090` are no objects.
pub(super) fn applies_to_inputs(lower: &str, words: &[Word<'_>], index: usize) -> bool {
    if !APPLY_VERBS.contains(&words[index].text) {
        return true;
    }
    let mut next = index + 1;
    while words.get(next).is_some_and(|w| {
        matches!(
            w.text,
            "the"
                | "a"
                | "an"
                | "my"
                | "this"
                | "that"
                | "our"
                | "these"
                | "those"
                | "some"
                | "long"
                | "large"
                | "many"
                | "multiple"
                | "several"
                | "all"
                // A count of the inputs (`around 100 million records`).
                | "around"
                | "about"
                | "over"
                | "nearly"
                | "million"
                | "millions"
                | "thousand"
                | "thousands"
                | "hundred"
                | "hundreds"
                | "of"
                // A quantity of the inputs (`ingest a collection of documents`).
                | "collection"
                | "bunch"
                | "lot"
                | "lots"
                | "number"
        ) || w.text.starts_with(|c: char| c.is_ascii_digit())
    }) {
        next += 1;
    }
    // The object is in the verb's clause (`when testing, it fails`: `it` is the next clause's).
    let object = words
        .get(next)
        .filter(|w| !lower[words[index].end..w.start].contains([',', '.', ';', ':', '!', '?']))
        .map(|w| w.text);
    // `testing this on a 4090`: the determiner is itself the object.
    let bare_pronoun = matches!(words.get(index + 1).map(|w| w.text), Some("this" | "that"))
        && object.is_none_or(|w| {
            matches!(
                w,
                "on" | "with" | "in" | "and" | "but" | "for" | "at" | "to" | "i" | "we" | "again"
            )
        });
    // A model queried is the model at work (`when I query it more than 4 times`).
    let queried = matches!(words[index].text, "query" | "querying") && object == Some("it");
    if object.is_some_and(|w| NOT_INPUTS.contains(&w)) && !queried || bare_pronoun {
        return false;
    }
    // Encoded into vectors: texts (a video's or an audio's encoding is a codec's).
    if matches!(words[index].text, "encode" | "encoding") {
        return object.is_some_and(|w| {
            matches!(
                w,
                "sentence"
                    | "sentences"
                    | "record"
                    | "records"
                    | "document"
                    | "documents"
                    | "docs"
                    | "query"
                    | "queries"
                    | "passage"
                    | "passages"
                    | "texts"
            )
        });
    }
    if NEEDS_INPUTS.contains(&words[index].text) {
        return object.is_some_and(|w| INPUTS.contains(&w));
    }
    true
}

/// `after 120 steps`, `after training for ~120+ steps`, `reached 22000 iterations`, `after the
/// first iteration`, `at epoch 3`, `in epoch 2`: (index of the first word, index of the last).
pub(super) fn progress_hit(
    lower: &str,
    words: &[Word<'_>],
    index: usize,
) -> Option<(usize, usize)> {
    let word = words[index].text;
    let text = |i: usize| words.get(i).map(|w| w.text);
    if let Some(from) = training_went_on(lower, words, index) {
        return Some((from, index));
    }
    // `after 20% of training`, `at 80% of the epoch`, `reached 50% of fine-tuning`.
    if matches!(
        word,
        "after" | "at" | "reached" | "reaching" | "past" | "around" | "about"
    ) {
        let count = index + 1;
        let percent = words.get(count).is_some_and(|w| {
            w.text.starts_with(|c: char| c.is_ascii_digit()) && lower[w.end..].starts_with('%')
        });
        let mut next = count + 1;
        if percent && text(next) == Some("of") {
            next += 1;
            if text(next) == Some("the") {
                next += 1;
            }
            if matches!(
                text(next),
                Some("training" | "fine-tuning" | "finetuning" | "epoch" | "pretraining")
            ) {
                return Some((index, next));
            }
        }
    }
    // `when the train epoch reaches start_epoch of the SWA, I always got the error`: the
    // training's counter reaching a point, in a sentence that reports the failure.
    if matches!(word, "reaches" | "reached" | "gets" | "got")
        && index.checked_sub(1).and_then(text).is_some_and(|w| {
            matches!(
                w,
                "epoch" | "epochs" | "iteration" | "iterations" | "step" | "steps" | "training"
            )
        })
        && (!matches!(word, "gets" | "got") || text(index + 1) == Some("to"))
        && sentence_reports_a_failure(lower, words[index - 1].start, words[index].end)
    {
        return Some((index - 1, index));
    }
    // `when 35406 steps` (how far the training had got when it failed).
    if word == "when"
        && text(index + 1)
            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()) && is_count(w))
        && text(index + 2).is_some_and(|w| matches!(w, "steps" | "iterations" | "iters" | "epochs"))
    {
        return (!of_another_stage(words, index + 2)).then_some((index, index + 2));
    }
    // `while running the 74th epoch`, `in the 3rd epoch`, `running to the 10000 steps of
    // 100000`: an ordinal of the training's counter, or a count of steps out of their total.
    // (`after the 2nd or 3rd step`: two ordinals, the unit after the second.)
    let is_ordinal = |word: &str| {
        word.len() > 2
            && word.starts_with(|c: char| c.is_ascii_digit())
            && ["st", "nd", "rd", "th"].iter().any(|suffix| {
                word.strip_suffix(suffix)
                    .is_some_and(|digits| digits.chars().all(|c| c.is_ascii_digit()))
            })
    };
    if let Some(unit) = text(index + 1) {
        let ordinal = is_ordinal(word);
        // (Or the ordinal right after its preposition: `During 2nd step, incremental training,
        // I am getting error like this`.)
        let the_before = index.checked_sub(1).and_then(text) == Some("the")
            || (ordinal
                && matches!(
                    index.checked_sub(1).and_then(text),
                    Some("during" | "at" | "in" | "after" | "on")
                ))
            || (ordinal
                && matches!(
                    index.checked_sub(1).and_then(text),
                    Some("or" | "and" | "to")
                )
                && index.checked_sub(2).and_then(text).is_some_and(is_ordinal)
                && index.checked_sub(3).and_then(text) == Some("the"));
        let out_of = word.starts_with(|c: char| c.is_ascii_digit())
            && is_count(word)
            && matches!(unit, "steps" | "iterations" | "iters")
            && text(index + 2) == Some("of")
            && text(index + 3).is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()));
        let counted = matches!(
            unit,
            "epoch" | "step" | "iteration" | "iter" | "steps" | "iterations"
        );
        if ((ordinal && counted) || out_of)
            && the_before
            && sentence_reports_a_failure(lower, words[index].start, words[index + 1].end)
        {
            return (!of_another_stage(words, index + 1)).then_some((index, index + 1));
        }
    }
    // `at step 120`, `in epoch 2`, `during epoch 3`, `the training is failed on step 10`
    // (`on` with a step, an iteration or an epoch: `OOM on batch 16` may name a batch size).
    // (`after step 0`, `after the iteration 3`: a count named after its unit.)
    let after_unit = word == "after"
        && text(index + 1) == Some("the")
        && matches!(
            text(index + 2),
            Some("step" | "iteration" | "iter" | "epoch")
        );
    let at = if after_unit { index + 1 } else { index };
    if (matches!(word, "at" | "in" | "during")
        || ((word == "on" || word == "after")
            && matches!(text(at + 1), Some("step" | "iteration" | "iter" | "epoch"))))
        && text(at + 1).is_some_and(|w| UNITS.contains(&w) && !w.ends_with('s'))
        && text(at + 2).is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
    {
        return (!of_another_stage(words, at + 2)).then_some((index, at + 2));
    }
    // `happens OutOfMemoryError at 5000 iters`, `it OOMs at 300 steps`: the count reached,
    // then its unit (session 48).
    if word == "at"
        && text(index + 1)
            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()) && is_count(w))
        && text(index + 2).is_some_and(|w| UNITS.contains(&w))
    {
        return (!of_another_stage(words, index + 2)).then_some((index, index + 2));
    }
    // `when I trained to 2000 iterations`, `it trained for 300 steps, then`: a past form with
    // the count it got to (the present, `I train for 300 epochs`, says what was asked).
    // A doer before it (`I`, `we`, `it`): `a model trained for 300 epochs` describes a model.
    let doer = index
        .checked_sub(1)
        .and_then(text)
        .is_some_and(|w| matches!(w, "i" | "we" | "it" | "i've" | "we've" | "had" | "has"));
    // (`it runs for exactly 5024 iterations and stops with an out of memory error`: the
    // run told as it goes, by what runs.)
    let runs = word == "runs" && index.checked_sub(1).and_then(text) == Some("it");
    let got_to = doer
        && (matches!(word, "trained" | "ran") || runs)
        && matches!(
            text(index + 1),
            Some("to" | "for" | "until" | "till" | "up")
        );
    // `The training works fine until 1000 steps and then fails`: how far it went well.
    let fine_until = matches!(word, "until" | "till")
        && index
            .checked_sub(1)
            .and_then(text)
            .is_some_and(|w| matches!(w, "fine" | "ok" | "okay" | "well" | "normally"));
    if !matches!(word, "after" | "reached" | "reaching" | "past") && !got_to && !fine_until {
        return None;
    }
    let mut next = index + 1;
    if got_to {
        next += 1;
        if text(next) == Some("to") {
            next += 1;
        }
    }
    // `after training for`, `after running for`.
    if matches!(
        text(next),
        Some("training" | "running" | "fine-tuning" | "finetuning")
    ) && text(next + 1) == Some("for")
    {
        next += 2;
    }
    while matches!(
        text(next),
        Some(
            "the"
                | "a"
                | "about"
                | "around"
                | "roughly"
                | "approximately"
                | "almost"
                | "like"
                | "exactly"
        )
    ) {
        next += 1;
    }
    if !text(next).is_some_and(is_count) {
        return None;
    }
    next += 1;
    // `a couple of steps`, `2 or 3 steps`, `a few hundred steps`.
    while text(next).is_some_and(|w| is_count(w) || matches!(w, "of" | "or" | "to")) {
        next += 1;
    }
    // `after a couple of seconds of training`, `after 2 hours of fine-tuning`: a time the
    // training ran, the training named after it.
    if text(next).is_some_and(|w| {
        matches!(
            w,
            "second" | "seconds" | "minute" | "minutes" | "hour" | "hours" | "day" | "days"
        )
    }) && text(next + 1) == Some("of")
        && text(next + 2).is_some_and(training_noun)
    {
        return Some((index, next + 2));
    }
    // `after few training iterations`, `after 100 training steps`: the training named
    // before its unit (session 48).
    if text(next).is_some_and(training_noun) && text(next + 1).is_some_and(|w| UNITS.contains(&w)) {
        next += 1;
    }
    text(next).filter(|w| UNITS.contains(w))?;
    (!of_another_stage(words, next)).then_some((index, next))
}
